"""lucid.nn.functional: PyTorch's functional neural-network API, over lucid's op families."""

from __future__ import annotations

import warnings
from typing import Any

from lucid._core import dtypes as _dtypes
from lucid._tensor import Tensor
from lucid.factories import rand_like as _rand_like
from lucid.factories import zeros_like as _zeros_like
from lucid.ops import activations
from lucid.ops.activations import (  # noqa: F401
    celu,
    elu,
    gelu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softplus,
    threshold,
    threshold_,
)
from lucid.ops.attention import *  # noqa: F403
from lucid.ops.convolution import *  # noqa: F403
from lucid.ops.distances import pdist  # noqa: F401
from lucid.ops.dropout import *  # noqa: F403
from lucid.ops.embedding import *  # noqa: F403
from lucid.ops.linear import *  # noqa: F403
from lucid.ops.loss import *  # noqa: F403
from lucid.ops.normalization import *  # noqa: F403
from lucid.ops.pointwise import tanh  # noqa: F401
from lucid.ops.pointwise import where as _where
from lucid.ops.pooling import *  # noqa: F403


# torch.nn.functional's softmax family takes `dim` as optional (deprecated implicit choice),
# where lucid.softmax and Tensor.softmax require it, as torch's do.
def _implicit_dim(input: Tensor, dim: int | None, name: str) -> int | None:
    if dim is None and isinstance(input, Tensor):
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=3,
        )
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:  # fmt: skip
    """exp(input) / sum(exp(input)) along dim; without `dim`, PyTorch's implicit choice."""
    return activations.softmax(input, _implicit_dim(input, dim, "softmax"), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:  # fmt: skip
    """input - logsumexp(input) along dim; without `dim`, PyTorch's implicit choice."""
    return activations.log_softmax(input, _implicit_dim(input, dim, "log_softmax"), dtype)


# -------------------------------------------------------------------- attention and sampling
from lucid.nn._attention import multi_head_attention_forward  # noqa: E402, F401
from lucid.ops._common import check_int as _check_int  # noqa: E402
from lucid.ops._common import check_number as _check_number  # noqa: E402
from lucid.ops._common import check_tensors as _check_tensors  # noqa: E402
from lucid.ops._common import not_implemented as _not_implemented  # noqa: E402
from lucid.ops.sampling import (  # noqa: E402, F401
    affine_grid,
    channel_shuffle,
    grid_sample,
    interpolate,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
)


def _float_only(input: Tensor, kernel: str) -> None:
    if isinstance(input, Tensor) and not input.is_floating_point():
        raise _not_implemented(kernel, input._data.dtype)


def _number(value: Any, op: str, name: str, position: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Number, "
                        f"not {type(value).__name__}")  # fmt: skip


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:  # fmt: skip
    """Deprecated spelling of interpolate."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated spelling of interpolate(mode='nearest')."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated spelling of interpolate(mode='bilinear', align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)  # fmt: skip
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:  # fmt: skip
    """input / max(||input||_p along dim, eps)."""
    denominator = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is not None:
        return out.copy_(input / denominator)
    return input / denominator


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim."""
    _check_tensors(x1, x2)
    _check_int(dim, "cosine_similarity", "dim", 3)
    _check_number(eps, "cosine_similarity", "eps", 4, "float")
    if not eps >= 0:
        raise RuntimeError(f"eps must be non-negative, got: {float(eps):g}")
    common = _dtypes.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{_dtypes.SCALAR_TYPE_NAMES[common.numpy_dtype.name]}"
        )
    # normalise each side first, as PyTorch does, so large norms don't overflow the product
    norm1 = x1.norm(2, dim, keepdim=True).clamp(min=eps)
    norm2 = x2.norm(2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:  # fmt: skip
    """||x1 - x2 + eps||_p along the last dim."""
    _check_tensors(x1, x2)
    _check_number(p, "pairwise_distance", "p", 3, "float")
    _check_number(eps, "pairwise_distance", "eps", 4, "float")
    dim = max(x1.ndim, x2.ndim, 1) - 1
    return (x1 - x2 + eps).norm(p, dim, keepdim=keepdim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the halves of input along dim."""
    _check_tensors(input)
    _check_int(dim, "glu", "dim", 2)
    _float_only(input, "glu_cpu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.ndim} is size "
            f"{input.shape[dim]}"
        )
    return activations.Glu.apply(input, dim)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:  # fmt: skip
    """softmax(-input) along dim."""
    return activations.softmax(-input, _implicit_dim(input, dim, "softmin"), dtype)


def softsign(input: Tensor) -> Tensor:
    """`input / (1 + |input|)`."""
    return input / (input.abs() + 1)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """input - lambd above lambd, input + lambd below -lambd, else 0."""
    _check_tensors(input)
    _check_number(lambd, "softshrink", "lambd", 2)
    _float_only(input, "softshrink_check")
    largest = _dtypes.finfo(input.dtype).max
    if not 0 <= lambd <= largest:
        name = _dtypes.SCALAR_TYPE_NAMES[input.dtype.name]
        raise RuntimeError(
            f"lambda must be in range [0, {largest:g}] for input dtype {name}, but found "
            f"{float(lambd):g}"
        )
    shrunk = _where(input > lambd, input - lambd, _where(input < -lambd, input + lambd, 0.0))
    return _where(input.isnan(), input, shrunk)


def tanhshrink(input: Tensor) -> Tensor:
    """input - tanh(input)."""
    return input - tanh(input)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:  # fmt: skip
    """softmax((logits + Gumbel noise) / tau) along dim; with hard=True, its one-hot argmax in
    the forward pass and the soft sample's gradient in the backward (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if not logits.is_floating_point():
        # PyTorch draws the noise with exponential_ in the logits' dtype
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_dtypes.SCALAR_TYPE_NAMES[logits._data.dtype.name]}"
        )
    # -log(Exponential(1)) is Gumbel(0, 1); 1 - U keeps the uniform draw off zero
    gumbels = -(-(1 - _rand_like(logits)).log()).log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ----------------------------------------------------------- rrelu and in-place activations
from lucid.ops.activations import (  # noqa: E402, F401
    celu_,
    elu_,
    hardtanh_,
    leaky_relu_,
    relu_,
    rrelu,
    rrelu_,
    selu_,
)


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
