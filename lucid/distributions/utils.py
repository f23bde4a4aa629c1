"""Helpers the distributions share: broadcasting parameters, probs and logits, lazy
properties, lower triangles as vectors."""

from numbers import Number

import lucid
import lucid.nn.functional as F

euler_constant = 0.57721566490153286060  # Euler–Mascheroni constant

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

# the default sample_shape: torch.Size() in torch, one shared immutable Size here
_EMPTY_SIZE = lucid.Size()


def broadcast_all(*values):
    """Numbers to tensors (of the first tensor's dtype, else the default dtype), then all
    broadcast to one shape."""
    if not all(lucid.is_tensor(v) or isinstance(v, Number) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, lucid.Tensor or objects "
            "implementing __torch_function__."
        )
    dtype = lucid.get_default_dtype()
    for value in values:
        if lucid.is_tensor(value):
            dtype = value.dtype
            break
    tensors = [v if lucid.is_tensor(v) else lucid.tensor(v, dtype=dtype) for v in values]
    return lucid.broadcast_tensors(*tensors)


def _standard_normal(shape, dtype):
    return lucid.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value, dim: int):
    """Sum out the rightmost dim dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: a sigmoid for binary, else a softmax over the last dim."""
    if is_binary:
        return lucid.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities clamped to [eps, 1 - eps] so their logs stay finite."""
    eps = lucid.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped first, so 0 and 1 give finite logits)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return lucid.log(ps_clamped) - lucid.log1p(-ps_clamped)
    return lucid.log(ps_clamped)


def expand_probs_or_logits(source, new, shape) -> None:
    """Give `new` the probs and the logits `source` has computed, expanded to `shape`, and
    `_param` as the last of them (the distributions parameterised by either keep both once
    read, and an expanded copy keeps whichever it had)."""
    for name in ("probs", "logits"):
        if name in source.__dict__:
            setattr(new, name, source.__dict__[name].expand(shape))
            new._param = new.__dict__[name]


class lazy_property:
    """A property computed on first access and then stored on the instance; on the class it
    reads as a property (so arg_constraints validation can tell it was not given)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with lucid.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int):
    # row-major order of the entries on and below diagonal diag, as torch lays out its vectors
    arange = lucid.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The entries of mat on and below diagonal diag, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The lower-triangular matrix (below diagonal diag) whose entries, in row order, are vec."""
    # the positive root of D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len(vec) = 0
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = lucid.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            + "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mask = _tril_mask(n, diag)
    # a length just above a triangular number rounds down: torch's masked write then fails,
    # and a gather would silently drop the extra entries
    count = int(mask.sum())
    if count != vec.shape[-1]:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(vec.shape)} cannot be broadcast to "
            f"indexing result of shape {list(vec.shape[:-1]) + [count]}"
        )
    # gather instead of a masked write, so the result stays differentiable to any order:
    # position 0 of the padded vector is the zero above the diagonal, k + 1 is vec[k]
    positions = mask.reshape(-1).long().cumsum(0).reshape(n, n) * mask.long()
    padded = lucid.cat([vec.new_zeros(tuple(vec.shape[:-1]) + (1,)), vec], -1)
    return padded[..., positions]
