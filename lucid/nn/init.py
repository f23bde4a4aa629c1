"""Parameter initialisation: in-place fills with PyTorch's distributions, bounds and errors."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

import lucid
from lucid import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "dirac_",
    "sparse_",
]

_LINEAR_NONLINEARITIES = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: int | float | None = None) -> float:
    """The recommended gain for a nonlinearity (e.g. sqrt(2) for relu)."""
    if nonlinearity in _LINEAR_NONLINEARITIES or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int | float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field_size = 1
    for size in tensor.shape[2:]:
        receptive_field_size *= size
    fan_in = tensor.size(1) * receptive_field_size
    fan_out = tensor.size(0) * receptive_field_size
    return fan_in, fan_out


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# PyTorch's kernels name the element type in C++ terms
_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def _check_uniform_bounds(tensor: Any, low: Any, high: Any) -> None:
    """PyTorch's uniform_ check: each bound finite and inside the tensor dtype's range."""
    if not isinstance(tensor, Tensor) or not tensor.dtype.is_floating_point:
        return
    dtype = tensor.dtype
    largest = float(lucid.finfo(dtype).max)
    name = _SCALAR_NAMES.get(str(dtype).removeprefix("lucid."), str(dtype))
    for label, bound in (("from", low), ("to", high)):
        if isinstance(bound, int | float) and not -largest <= bound <= largest:
            raise RuntimeError(f"{label} is out of bounds for {name}")


def _check_std(std: Any) -> None:
    # written so that NaN fails it too, as PyTorch's does
    if isinstance(std, int | float) and not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill `tensor` with draws from U(a, b)."""
    _check_uniform_bounds(tensor, a, b)
    with lucid.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill `tensor` with draws from N(mean, std^2)."""
    _check_std(std)
    with lucid.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _erfinv(y: Tensor) -> Tensor:
    """Inverse error function in lucid ops: Giles' approximation refined by Newton steps."""
    w = -lucid.log((1.0 - y) * (1.0 + y))
    # Giles (2010), "Approximating the erfinv function": one polynomial per region of w.
    central = w - 2.5
    p = lucid.full_like(y, 2.81022636e-08)
    for coefficient in (
        3.43273939e-07,
        -3.5233877e-06,
        -4.39150654e-06,
        0.00021858087,
        -0.00125372503,
        -0.00417768164,
        0.246640727,
        1.50140941,
    ):
        p = coefficient + p * central
    tail = lucid.sqrt(w) - 3.0
    q = lucid.full_like(y, -0.000200214257)
    for coefficient in (
        0.000100950558,
        0.00134934322,
        -0.00367342844,
        0.00573950773,
        -0.0076224613,
        0.00943887047,
        1.00167406,
        2.83297682,
    ):
        q = coefficient + q * tail
    x = lucid.where(w < 5.0, p, q) * y
    # Newton on erf(x) = y lifts the single-precision guess to double precision; x = ±inf at
    # y = ±1 is already exact and would turn into nan.
    finite = lucid.isfinite(x)
    for _ in range(2):
        step = (lucid.erf(x) - y) / (2.0 / math.sqrt(math.pi) * lucid.exp(-x * x))
        x = lucid.where(finite, x - step, x)
    return x


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Fill `tensor` with draws from N(mean, std^2) truncated to [a, b] (inverse-CDF sampling)."""

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with lucid.no_grad():
        low = norm_cdf((a - mean) / std)
        high = norm_cdf((b - mean) / std)
        _check_uniform_bounds(tensor, 2 * low - 1, 2 * high - 1)
        draws = lucid.empty(tensor.shape, dtype=lucid.float64)
        draws.uniform_(2 * low - 1, 2 * high - 1, generator=generator)
        tensor.copy_(_erfinv(draws))
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill `tensor` with `val`."""
    with lucid.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with ones."""
    with lucid.no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with zeros."""
    with lucid.no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D `tensor` with the identity matrix (ones on the main diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with lucid.no_grad():
        return tensor.copy_(lucid.eye(*tensor.shape, dtype=tensor.dtype))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix from the QR decomposition of a Gaussian draw."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with lucid.no_grad():
        flattened = lucid.empty((rows, cols), dtype=tensor.dtype)
        flattened.normal_(0.0, 1.0, generator=generator)
        matrix = flattened.numpy()
        if rows < cols:
            matrix = matrix.T
        q, r = np.linalg.qr(matrix)
        # Fix each column's sign by R's diagonal so the result is uniform over orthogonal matrices.
        q = q * np.sign(np.diagonal(r))
        if rows < cols:
            q = q.T
        tensor.copy_(lucid.tensor(np.ascontiguousarray(q).reshape(tensor.shape)))
        tensor.mul_(gain)
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d conv weight so the convolution is the identity on each group."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_channels_per_group = sizes[0] // groups
    min_dim = min(out_channels_per_group, sizes[1])
    weight = np.zeros(tuple(sizes), dtype=tensor._data.dtype)
    diagonal = np.arange(min_dim)
    outputs = (np.arange(groups)[:, None] * out_channels_per_group + diagonal).ravel()
    centre = tuple(size // 2 for size in sizes[2:])
    weight[(outputs, np.tile(diagonal, groups), *centre)] = 1
    with lucid.no_grad():
        return tensor.copy_(lucid.tensor(weight))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fill a 2-d `tensor` from N(0, std^2), then zero ceil(sparsity * rows) entries a column."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with lucid.no_grad():
        tensor.normal_(0, std, generator=generator)
        # ranking uniform draws gives each column an independent random permutation of rows
        ranks = np.argsort(np.argsort(lucid.rand(rows, cols, generator=generator).numpy(), 0), 0)
        tensor.masked_fill_(lucid.tensor(ranks < num_zeros), 0)
    return tensor


# ------------------------------------------------ deprecated names without the underscore
def _deprecated(init: Any) -> Any:
    """`init` under its old name (no trailing underscore), warning as PyTorch does."""
    new_name = init.__name__
    old_name = new_name[:-1]

    @functools.wraps(init)
    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return init(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"Deprecated spelling of {new_name}."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
