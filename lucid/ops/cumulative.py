"""Ops along the order of a dim: the scans cumsum, cumprod, cummax, cummin, logcumsumexp (and
cumsum_, cumprod_), the finite differences diff and gradient, and the trapezoid rule
(trapezoid, trapz, cumulative_trapezoid)."""

from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import argument_error
from lucid._core.dtypes import FLOAT_KINDS, INEXACT_KINDS, numpy_finfo
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops import fills as fills_ops
from lucid.ops import joining as joining_ops
from lucid.ops import pointwise as pointwise_ops
from lucid.ops import shape as shape_ops
from lucid.ops._common import (
    _array,
    _int_argument,
    apply_inplace,
    check_tensors,
    invalid_combination,
    not_implemented,
    result_type,
)
from lucid.ops._promote import is_low_precision, round_to
from lucid.ops.indexing import ScatterAdd
from lucid.ops.reduction import (
    _ACCUMULATORS,
    _FLOAT32,
    _FLOAT64,
    _INT64,
    _as_dtype,
    _check_int_dim,
    _keepdim_shape,
    normalize_dims,
    sum,
)

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "cumsum", "cumprod", "trapezoid", "trapz", "cumulative_trapezoid", "gradient", "cummax",
    "cummin", "diff", "logcumsumexp",
]  # fmt: skip


# ---------------------------------------------------------------------- cumsum / cumprod
def _accumulate_along(ufunc: Any, array: np.ndarray, dim: int, dtype: np.dtype | None) -> Any:
    """ufunc.accumulate along `dim` in PyTorch's result dtype; a 0-d array is its own result.

    Like PyTorch, single precision accumulates in double (a running sum may pass through
    values out of its range) and float16/bfloat16 in float32.
    """
    if dtype is None:
        accumulators = _ACCUMULATORS.get(array.dtype)
        dtype = array.dtype if accumulators is None else accumulators[1]
    if array.ndim == 0:
        return array.astype(dtype)
    if dtype == _FLOAT32:
        return ufunc.accumulate(array, dim, _FLOAT64).astype(dtype)
    if is_low_precision(dtype):
        return round_to(ufunc.accumulate(array, dim, _FLOAT32), dtype)
    return ufunc.accumulate(array, dim, dtype)


class ReverseCumsum(Function):
    """Sums from the end of `dim`: the backward of cumsum (and cumsum is its backward)."""

    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        array = x._data
        if array.ndim == 0:
            return _wrap(array.copy())
        return _wrap(np.flip(_accumulate_along(np.add, np.flip(array, dim), dim, None), dim).copy())

    @staticmethod
    def backward(ctx, grad_output):
        return cumsum(grad_output, ctx.dim), None


class Cumsum(Function):
    _backward_name = "CumsumBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, dtype):
        array = x._data
        ctx.dim = dim
        ctx.input_dtype = array.dtype if dtype is not None else None
        return _wrap(_accumulate_along(np.add, array, dim, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # each x_i appears in every later partial sum
        return _as_dtype(ReverseCumsum.apply(grad_output, ctx.dim), ctx.input_dtype), None, None


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sums along `dim`."""
    check_tensors(input)
    _check_int_dim("cumsum", dim)
    dim = _normalize_dim(dim, input._data.ndim)
    return Cumsum.apply(input, dim, dtypes.to_numpy_dtype(dtype))


def cumsum_(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    check_tensors(input)
    _check_int_dim("cumsum_", dim)
    dim = _normalize_dim(dim, input._data.ndim)
    return apply_inplace(Cumsum, input, dim, dtypes.to_numpy_dtype(dtype))


class Cumprod(Function):
    _backward_name = "CumprodBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, dtype):
        array = x._data
        ctx.dim = dim
        ctx.input_dtype = array.dtype if dtype is not None else None
        result = _wrap(_accumulate_along(np.multiply, array, dim, dtype))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, result, *_cumprod_zero_masks(array, dim))
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result, before, first, stretch = ctx.saved_tensors
        dim = ctx.dim
        if x._data.ndim == 0 or x._data.shape[dim] == 1:
            return _as_dtype(grad_output, ctx.input_dtype), None, None
        if before is None:
            # d/dx_i of y_k = prod_{j<=k} x_j is y_k / x_i for every k >= i
            grad = ReverseCumsum.apply(grad_output * result, dim) / x
            return _as_dtype(grad, ctx.input_dtype), None, None
        if is_grad_enabled():
            # create_graph: the masked form below is right in value but not in its own
            # derivative at the zeros, so take the O(n^2) form that is (as PyTorch does).
            grad = _cumprod_backward_by_rows(x, grad_output, dim)
        else:
            grad = _cumprod_backward_masked(x, result, grad_output, dim, before, first, stretch)
        return _as_dtype(grad, ctx.input_dtype), None, None


def _cumprod_zero_masks(array: np.ndarray, dim: int) -> tuple[Tensor | None, ...]:
    """Along `dim`: the entries before the first zero, the first zero, and the entries between
    it and the next zero; all None when `array` has no zero."""
    is_zero = array.reshape(array.shape or (1,)) == 0
    if not is_zero.any():
        return None, None, None
    zeros_so_far = np.add.accumulate(is_zero, dim, _INT64)
    first = is_zero & (zeros_so_far == 1)
    stretch = ~is_zero & (zeros_so_far == 1)
    masks = (zeros_so_far == 0, first, stretch)
    return tuple(_wrap(mask.reshape(array.shape)) for mask in masks)


def _cumprod_backward_masked(x: Tensor, result: Tensor, grad_output: Tensor, dim: int,
                             before: Tensor, first: Tensor, stretch: Tensor) -> Tensor:  # fmt: skip
    """cumprod's gradient when `x` holds zeros; every term is masked to where it is nonzero in
    exact arithmetic, so that inf * 0 from other entries cannot turn it into NaN."""
    where = pointwise_ops.where
    # Before the first zero the x_i are nonzero and reverse_cumsum(g * y) / x_i holds; the
    # terms from the zero on hold that zero as a factor.
    weighted = where(before, grad_output * result, 0.0)
    grad_before = ReverseCumsum.apply(weighted, dim) / where(before, x, 1.0)
    # At the first zero z: y_{z-1} * sum_{z <= k < next zero} g_k prod_{z < j <= k} x_j.
    partial_products = cumprod(where(stretch, x, 1.0), dim)
    grad_in_reach = where(first, grad_output, where(stretch, grad_output, 0.0))
    reach = sum(partial_products * grad_in_reach, dim, True)
    size = x._data.shape[dim]
    ones = _wrap(np.ones(_keepdim_shape(x._data.shape, (dim,)), result._data.dtype))
    previous = joining_ops.cat([ones, shape_ops.narrow(result, dim, 0, size - 1)], dim)
    # After the first zero, every y_k holds it as another factor: the gradient is 0.
    return where(before, grad_before, 0.0) + where(first, reach * previous, 0.0)


def _cumprod_backward_by_rows(x: Tensor, grad_output: Tensor, dim: int) -> Tensor:
    """cumprod's gradient sum_{k>=i} g_k prod_{j<=k, j!=i} x_j, from one cumprod per i."""
    where, transpose = pointwise_ops.where, shape_ops.transpose
    size = x._data.shape[dim]
    x_last = shape_ops.unsqueeze(transpose(x, dim, -1), -2)
    grad_last = shape_ops.unsqueeze(transpose(grad_output, dim, -1), -2)
    # products[..., i, k] = prod_{j<=k, j!=i} x_j: row i is the cumprod with x_i set to 1
    products = cumprod(where(_wrap(np.eye(size, dtype=np.bool_)), 1.0, x_last), -1)
    later = _wrap(np.triu(np.ones((size, size), np.bool_)))
    grad = sum(where(later, products * grad_last, 0.0), -1)
    return transpose(grad, dim, -1)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running products along `dim`."""
    check_tensors(input)
    _check_int_dim("cumprod", dim)
    dim = _normalize_dim(dim, input._data.ndim)
    return Cumprod.apply(input, dim, dtypes.to_numpy_dtype(dtype))


def cumprod_(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    check_tensors(input)
    _check_int_dim("cumprod_", dim)
    dim = _normalize_dim(dim, input._data.ndim)
    return apply_inplace(Cumprod, input, dim, dtypes.to_numpy_dtype(dtype))


# -------------------------------------------------------------------------- cummax / cummin
CummaxResult = result_type("CummaxResult", "cummax", "values", "indices")
CumminResult = result_type("CumminResult", "cummin", "values", "indices")


def _running_extreme(ctx: Any, x: Tensor, dim: int, ufunc: Any) -> tuple:
    """(running max/min along `dim`, the index it was last reached at). Ties and NaN take the
    latest index; once a NaN is met the result stays NaN."""
    array = x._data
    if not array.ndim:
        values, indices = array.copy(), np.zeros((), _INT64)
    else:
        values = ufunc.accumulate(array, axis=dim)
        reached = array == values
        if array.dtype.kind in FLOAT_KINDS:
            reached |= np.isnan(array)
        shape = [1] * array.ndim
        shape[dim] = array.shape[dim]
        positions = np.arange(array.shape[dim], dtype=_INT64).reshape(shape)
        indices = np.maximum.accumulate(np.where(reached, positions, 0), axis=dim)
    indices = _wrap(indices)
    if ctx.needs_input_grad[0]:
        ctx.dim = dim
        ctx.shape = array.shape
        ctx.save_for_backward(indices)
    return _wrap(values), indices


def _running_extreme_backward(ctx: Any, grad_values: Tensor) -> Tensor:
    """Each output's gradient goes to the entry it copies; several may share one."""
    (indices,) = ctx.saved_tensors
    if not ctx.shape:
        return grad_values
    zeros = _wrap(np.zeros(ctx.shape, grad_values._data.dtype))
    return ScatterAdd.apply(zeros, ctx.dim, indices, grad_values)


class Cummax(Function):
    _backward_name = "CummaxBackward0"
    _complex_refusal = (NotImplementedError, "\"cummax_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, dim):
        return _running_extreme(ctx, x, dim, np.maximum)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _running_extreme_backward(ctx, grad_values), None


class Cummin(Function):
    _backward_name = "CumminBackward0"
    _complex_refusal = (NotImplementedError, "\"cummin_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, dim):
        return _running_extreme(ctx, x, dim, np.minimum)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _running_extreme_backward(ctx, grad_values), None


def _cumulative_dim(name: str, input: Tensor, dim: Any) -> int:
    array = _array(input)
    _int_argument(name, dim, "dim", 2)
    return _normalize_dim(dim, array.ndim)


def cummax(input: Tensor, dim: int) -> CummaxResult:
    """Running maximum along `dim` and the index of the entry each one copies."""
    dim = _cumulative_dim("cummax", input, dim)
    return CummaxResult(*Cummax.apply(input, dim))


def cummin(input: Tensor, dim: int) -> CumminResult:
    """Running minimum along `dim` and the index of the entry each one copies."""
    dim = _cumulative_dim("cummin", input, dim)
    return CumminResult(*Cummin.apply(input, dim))


# ------------------------------------------------------------------------------ logcumsumexp
def _reverse_logcumsumexp(x: Tensor, dim: int) -> Tensor:
    return shape_ops.flip(logcumsumexp(shape_ops.flip(x, (dim,)), dim), (dim,))


def _complex_log1p(z: np.ndarray) -> np.ndarray:
    """log(1 + z) for complex z, as PyTorch computes it: NumPy's complex log1p takes the log of
    |1 + z| and loses the digits of small z."""
    x, y = z.real, z.imag
    angle = np.arctan2(y, x + 1)
    near_zero = np.abs(z) < 0.5
    # log|1 + z| = log1p(x (x + 2) + y^2) / 2 near zero (where that sum underflows to 0, x)
    squares = x * (x + 2) + y * y
    small = np.where(squares == 0, x, 0.5 * np.log1p(squares))
    magnitude = np.where(near_zero, small, np.log(np.hypot(x + 1, y)))
    return (magnitude + 1j * angle).astype(z.dtype, copy=False)


def _complex_log_add_exp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(exp(x) + exp(y)) for complex arrays, shifted by the operand of larger real part as
    PyTorch's kernel does (NumPy's logaddexp takes no complex)."""
    x_is_larger = x.real >= y.real
    larger = np.where(x_is_larger, x, y)
    smaller = np.where(x_is_larger, y, x)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        result = _complex_log1p(np.exp(smaller - larger)) + larger
        # both real parts infinite: -inf keeps the operand (exp is 0 whatever the phase), +inf
        # sums directly so that inf - inf gives no NaN
        infinite = np.isinf(smaller.real) & (smaller.real == larger.real)
        if infinite.any():
            direct = np.log(np.exp(smaller) + np.exp(larger))
            result = np.where(infinite, np.where(smaller.real < 0, smaller, direct), result)
    unknown = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(y.real) | np.isnan(y.imag)
    return np.where(unknown, complex(math.nan, math.nan), result).astype(x.dtype, copy=False)


def _complex_logcumsumexp(array: np.ndarray, dim: int) -> np.ndarray:
    # in complex128, rounded once, as PyTorch accumulates complex64 on the CPU
    moved = np.moveaxis(array.astype(np.complex128, copy=False), dim, 0)
    result = np.empty_like(moved)
    # the scan starts from log(0), as PyTorch's does, so that a NaN first element spreads as
    # a later one would
    running = _complex_log_add_exp(np.full_like(moved[0], -math.inf), moved[0])
    result[0] = running
    for index in builtins.range(1, moved.shape[0]):
        running = _complex_log_add_exp(running, moved[index])
        result[index] = running
    return np.moveaxis(result, 0, dim).astype(array.dtype, copy=False)


class Logcumsumexp(Function):
    _backward_name = "LogcumsumexpBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim):
        array = x._data
        if not array.ndim:
            result = array.copy()
        elif array.dtype.kind == "c":
            result = _complex_logcumsumexp(array, dim)
        else:
            # logaddexp shifts by the larger operand, so large inputs don't overflow
            result = np.logaddexp.accumulate(array, axis=dim)
        result = _wrap(result)
        ctx.dim = dim
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        if not x._data.ndim:
            return grad_output, None
        if grad_output._data.dtype.kind == "c":
            # A complex gradient has no sign to split by: summed in log space as it is (the
            # engine conjugates around this holomorphic formula).
            log_grad = pointwise_ops.log(grad_output)
            return pointwise_ops.exp(_reverse_logcumsumexp(log_grad - result, ctx.dim) + x), None
        # d result_j / d x_i = exp(x_i - result_j) for i <= j. Summed in log space, with the
        # positive and negative parts of the gradient apart, so that no exp overflows; the
        # lowest finite number stands for log(0) so that -inf - (-inf) never meets.
        lowest = float(numpy_finfo(grad_output._data.dtype).min)
        log_abs = pointwise_ops.log(pointwise_ops.abs(grad_output))
        where = pointwise_ops.where
        log_positive = where(pointwise_ops.gt(grad_output, 0.0), log_abs, lowest)
        log_negative = where(pointwise_ops.lt(grad_output, 0.0), log_abs, lowest)
        positive = pointwise_ops.exp(_reverse_logcumsumexp(log_positive - result, ctx.dim) + x)
        negative = pointwise_ops.exp(_reverse_logcumsumexp(log_negative - result, ctx.dim) + x)
        return positive - negative, None


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along `dim`, without overflow."""
    dim = _cumulative_dim("logcumsumexp", input, dim)
    if input._data.dtype.kind not in INEXACT_KINDS:
        raise not_implemented("logcumsumexp_out_cpu", input._data.dtype)
    return Logcumsumexp.apply(input, dim)


# ------------------------------------------------------------------------ finite differences
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:  # fmt: skip
    """The n-th forward difference along `dim` (logical xor for bools), after joining
    `prepend` and `append` to `input` there."""
    array = _array(input)
    _int_argument("diff", n, "n", 2)
    _int_argument("diff", dim, "dim", 3)
    for name, position, value in (("prepend", 4, prepend), ("append", 5, append)):
        if value is not None and not isinstance(value, TensorBase):
            raise argument_error("diff", name, position, value)
        if value is not None and value._data.ndim != array.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if not array.ndim:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _normalize_dim(dim, array.ndim)
    parts = [part for part in (prepend, input, append) if part is not None]
    result = joining_ops.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = result._data.shape[dim]
        if size == 0:
            break
        later = shape_ops.narrow(result, dim, 1, size - 1)
        earlier = shape_ops.narrow(result, dim, 0, size - 1)
        if result._data.dtype == np.bool_:
            result = pointwise_ops.logical_xor(later, earlier)
        else:
            result = later - earlier
    return result


# -------------------------------------------------------- integration and gradient
# Compositions of differentiable ops: their gradients and higher derivatives come with them.
def _pairs_along(y: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """y without its last and without its first entry along dim (the left and right ends of
    each interval)."""
    count = y._data.shape[dim]
    return shape_ops.narrow(y, dim, 0, count - 1), shape_ops.narrow(y, dim, 1, count - 1)


def _interval_widths(name: str, x: Tensor, y: Tensor, dim: int) -> Tensor:
    """The widths between sample points `x`: a vector along dim, or x's own differences."""
    count = y._data.shape[dim]
    if x._data.ndim == 1:
        if x._data.shape[0] != count:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        left, right = _pairs_along(x, 0)
        shape = [1] * y._data.ndim
        shape[dim] = builtins.max(count - 1, 0)
        return shape_ops.reshape(right - left, tuple(shape))
    left, right = _pairs_along(x, _normalize_dim(dim - y._data.ndim, x._data.ndim))
    return right - left


def _check_trapezoid_x(name: str, y: Any, x: Any) -> None:
    check_tensors(y)
    if y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if x is not None and not isinstance(x, TensorBase):
        raise invalid_combination(name, (y, x), (
            "(Tensor y, Tensor x, *, int dim = -1)",
            "(Tensor y, *, Number dx = 1, int dim = -1)",
        ))  # fmt: skip


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoidal-rule integral of `y` along `dim`, at points `x` or spacing `dx`."""
    _check_trapezoid_x("trapezoid", y, x)
    if not y._data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _normalize_dim(dim, y._data.ndim)
    if y._data.shape[dim] == 0:
        return sum(y, dim)
    left, right = _pairs_along(y, dim)
    if x is not None:
        return sum(_interval_widths("trapezoid", x, y, dim) * (left + right), dim) / 2.0
    return sum(left + right, dim) * ((1.0 if dx is None else dx) / 2.0)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """trapezoid under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None,
                         dim: int = -1) -> Tensor:  # fmt: skip
    """The running trapezoidal-rule integral of `y` along `dim` (one entry fewer than y)."""
    _check_trapezoid_x("cumulative_trapezoid", y, x)
    if not y._data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _normalize_dim(dim, y._data.ndim)
    if y._data.shape[dim] == 0:
        return y
    left, right = _pairs_along(y, dim)
    if x is not None:
        widths = _interval_widths("cumulative_trapezoid", x, y, dim)
        return cumsum(widths * (left + right), dim) / 2.0
    return cumsum((left + right) * ((1.0 if dx is None else dx) / 2.0), dim)


def _spacing_per_dim(spacing: Any, dims: tuple[int, ...]) -> list:
    if isinstance(spacing, list | tuple):
        if len(spacing) != len(dims):
            raise RuntimeError(
                "lucid.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                f"dim arguments to have the same length, but got a spacing argument of length "
                f"{len(spacing)} and a dim argument of length {len(dims)}."
            )
        return list(spacing)
    if isinstance(spacing, TensorBase):
        return [float(spacing._data)] * len(dims)
    return [spacing] * len(dims)


def _along(values: np.ndarray, dim: int, ndim: int) -> Tensor:
    """A vector of coefficients shaped to broadcast along dim of an ndim tensor."""
    shape = [1] * ndim
    shape[dim] = values.shape[0]
    return _wrap(values.reshape(shape))


def _gradient_along(f: Tensor, dim: int, step: Any, edge_order: int) -> Tensor:
    count = f._data.shape[dim]
    ndim = f._data.ndim

    def part(start: int, length: int) -> Tensor:
        return shape_ops.narrow(f, dim, start, length)

    if isinstance(step, TensorBase):
        coordinates = step._data
        if coordinates.dtype.kind not in INEXACT_KINDS:
            coordinates = coordinates.astype(dtypes.get_default_dtype().numpy_dtype)
        widths = np.diff(coordinates)
        left_widths, right_widths = widths[:-1], widths[1:]

        def coefficient(values: Any) -> Tensor:
            # in the coordinates' dtype, so the result is promoted with them as in PyTorch
            return _along(np.atleast_1d(np.asarray(values, coordinates.dtype)), dim, ndim)

        # Second-order central differences on an uneven grid, weighted by the neighbours' gaps.
        denominator = left_widths * right_widths * (left_widths + right_widths)
        interior = (
            part(2, count - 2) * coefficient(left_widths**2 / denominator)
            - part(0, count - 2) * coefficient(right_widths**2 / denominator)
            + part(1, count - 2) * coefficient((right_widths**2 - left_widths**2) / denominator)
        )
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) * coefficient(1.0 / widths[0])
            last = (part(count - 1, 1) - part(count - 2, 1)) * coefficient(1.0 / widths[-1])
        else:
            h1, h2 = widths[0], widths[1]
            first = (
                part(0, 1) * coefficient(-(2 * h1 + h2) / (h1 * (h1 + h2)))
                + part(1, 1) * coefficient((h1 + h2) / (h1 * h2))
                + part(2, 1) * coefficient(-h1 / (h2 * (h1 + h2)))
            )
            h1, h2 = widths[-2], widths[-1]
            last = (
                part(count - 3, 1) * coefficient(h2 / (h1 * (h1 + h2)))
                + part(count - 2, 1) * coefficient(-(h1 + h2) / (h1 * h2))
                + part(count - 1, 1) * coefficient((2 * h2 + h1) / (h2 * (h1 + h2)))
            )
    else:
        interior = (part(2, count - 2) - part(0, count - 2)) / (2.0 * step)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / step
            last = (part(count - 1, 1) - part(count - 2, 1)) / step
        else:
            first = (part(0, 1) * -3.0 + part(1, 1) * 4.0 - part(2, 1)) / (2.0 * step)
            last = (part(count - 1, 1) * 3.0 - part(count - 2, 1) * 4.0 + part(count - 3, 1)) / (
                2.0 * step
            )
    return joining_ops.cat([first, interior, last], dim)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:  # fmt: skip
    """Finite-difference derivatives along each of `dim` (all dims by default): central
    differences inside, one-sided ones of `edge_order` at the ends; `spacing` is a step, one
    step per dim, or one coordinate vector per dim."""
    check_tensors(input)
    if edge_order not in (1, 2):
        raise RuntimeError("lucid.gradient only supports edge_order=1 and edge_order=2.")
    ndim = input._data.ndim
    dims = tuple(range(ndim)) if dim is None else normalize_dims(dim, ndim)
    if isinstance(dim, list | tuple):
        dims = tuple(_normalize_dim(d, ndim) for d in dim)
    for d in dims:
        if input._data.shape[d] < edge_order + 1:
            raise RuntimeError(
                "lucid.gradient expected each dimension size to be at least edge_order+1"
            )
    if input._data.dtype == np.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    f = (
        input
        if input._data.dtype.kind in INEXACT_KINDS
        else fills_ops.to(input, dtypes.get_default_dtype())
    )
    steps = _spacing_per_dim(spacing, dims)
    return tuple(_gradient_along(f, d, step, edge_order) for d, step in zip(dims, steps))
