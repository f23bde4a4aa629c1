"""Helpers the distributions share: broadcasting parameters, probs and logits, lazy
properties."""

from numbers import Number

import lucid
import lucid.nn.functional as F

euler_constant = 0.57721566490153286060  # Euler–Mascheroni constant

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
