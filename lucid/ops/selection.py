"""Sorting, selection and statistics over a dim: unique values, order statistics (median, kth
value, mode, quantiles), bins (searchsorted, histograms, bincount), running extremes and the
NaN-aware and paired reductions."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import argument_error, raise_type_error
from lucid._core.dtypes import FLOAT_KINDS, numpy_finfo
from lucid._core.function import Function
from lucid._core.grad_mode import local_state
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops import pointwise as pointwise_ops
from lucid.ops import reduction
from lucid.ops import shape as shape_ops
from lucid.ops._common import (
    check_tensors,
    dtype_name,
    invalid_combination,
    not_implemented,
    result_type,
)
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.indexing import Scatter, ScatterAdd, Sort, gather

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "aminmax", "bincount", "bucketize", "cummax", "cummin", "diff", "histc", "histogram",
    "histogramdd",
    "kthvalue", "logcumsumexp", "median", "mode", "msort", "nanmean", "nanmedian",
    "nanquantile", "nansum", "quantile", "searchsorted", "std_mean", "unique",
    "unique_consecutive", "var_mean",
]  # fmt: skip

_INT64 = np.dtype(np.int64)


KthvalueResult = result_type("KthvalueResult", "kthvalue", "values", "indices")
MedianResult = result_type("MedianResult", "median", "values", "indices")
NanmedianResult = result_type("NanmedianResult", "nanmedian", "values", "indices")
ModeResult = result_type("ModeResult", "mode", "values", "indices")
CummaxResult = result_type("CummaxResult", "cummax", "values", "indices")
CumminResult = result_type("CumminResult", "cummin", "values", "indices")
AminmaxResult = result_type("AminmaxResult", "aminmax", "min", "max")
HistogramResult = result_type("HistogramResult", "histogram", "hist", "bin_edges")
HistogramddResult = result_type("HistogramddResult", "histogramdd", "hist", "bin_edges")


# -------------------------------------------------------------------------- argument checks
def _array(input: Any) -> np.ndarray:
    check_tensors(input)
    return input._data


def _int_argument(name: str, value: Any, argument: str, position: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(
            f"{name}(): argument '{argument}' (position {position}) must be int, not "
            f"{type(value).__name__}"
        )


def _check_bool(array: np.ndarray, kernel: str) -> None:
    if array.dtype == np.bool_:
        raise not_implemented(f"{kernel}_cpu", array.dtype)


def _check_nonempty_dim(name: str, array: np.ndarray, dim: int) -> None:
    if array.ndim and array.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


# ------------------------------------------------------------- picking one entry along a dim
def _keep(array: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    return array if keepdim else np.squeeze(array, dim)


def _pick_forward(ctx: Any, x: Tensor, dim: int, keepdim: bool, indices: np.ndarray) -> tuple:
    """(values, int64 indices) of the entries `indices` (keeping `dim` as size 1) name along
    `dim`, keeping what `_pick_backward` needs. A 0-d input is its own pick."""
    array = x._data
    if array.ndim:
        values = np.take_along_axis(array, indices, dim)
    else:
        indices = np.zeros((), _INT64)
        values = array.copy()
    indices = indices.astype(_INT64, copy=False)
    if ctx.needs_input_grad[0]:
        ctx.shape = array.shape
        ctx.dim = dim
        ctx.keepdim = keepdim
        ctx.save_for_backward(_wrap(indices))
    if array.ndim:
        values = _keep(values, dim, keepdim)
        indices = _keep(indices, dim, keepdim)
    return _wrap(values), _wrap(indices)


def _pick_backward(ctx: Any, grad_values: Tensor) -> Tensor:
    """The whole gradient goes to the entry the index names."""
    (indices,) = ctx.saved_tensors
    if not ctx.shape:
        return grad_values
    grad = reduction.restore_reduced(grad_values, ctx.shape, (ctx.dim,), ctx.keepdim)
    zeros = _wrap(np.zeros(ctx.shape, grad_values._data.dtype))
    return Scatter.apply(zeros, ctx.dim, indices, grad)


def _distribute_forward(ctx: Any, x: Tensor, value: np.ndarray) -> Tensor:
    """A whole-tensor order statistic: its gradient is shared evenly by the entries equal to
    it (by the NaNs when it is NaN)."""
    if ctx.needs_input_grad[0]:
        array = x._data
        mask = np.isnan(array) if np.isnan(value) else array == value
        ctx.count = int(np.count_nonzero(mask))
        ctx.save_for_backward(_wrap(mask))
    return _wrap(np.asarray(value))


def _distribute_backward(ctx: Any, grad_output: Tensor) -> Tensor:
    (mask,) = ctx.saved_tensors
    return pointwise_ops.where(mask, grad_output / ctx.count, 0.0)


def _partition_indices(array: np.ndarray, k: int, dim: int) -> np.ndarray:
    """Indices (dim kept as size 1) of the k-th smallest entries along `dim`, NaN the largest."""
    # (NumPy's sorts order bfloat16 NaN wrongly: float32 holds its values exactly)
    order = np.argpartition(widen(array), k, axis=dim)
    return np.take(order, [k], axis=dim)


def _first_nan_indices(array: np.ndarray, dim: int, indices: np.ndarray) -> np.ndarray:
    """`indices` with the first NaN's index wherever a slice holds a NaN."""
    nan = np.isnan(array)
    has_nan = np.any(nan, axis=dim, keepdims=True)
    if not has_nan.any():
        return indices
    return np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), indices)


# ---------------------------------------------------------------------------------- kthvalue
class Kthvalue(Function):
    _backward_name = "KthvalueBackward0"

    @staticmethod
    def forward(ctx, x, k, dim, keepdim):
        array = x._data
        indices = _partition_indices(array, k - 1, dim) if array.ndim else None
        return _pick_forward(ctx, x, dim, keepdim, indices)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _pick_backward(ctx, grad_values), None, None, None


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> KthvalueResult:
    """The k-th smallest entry along `dim` and its index; NaN counts as the largest value."""
    array = _array(input)
    _int_argument("kthvalue", k, "k", 2)
    _int_argument("kthvalue", dim, "dim", 3)
    dim = _normalize_dim(dim, array.ndim)
    _check_bool(array, "kthvalue")
    _check_nonempty_dim("kthvalue", array, dim)
    size = array.shape[dim] if array.ndim else 1
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    return KthvalueResult(*Kthvalue.apply(input, k, dim, keepdim))


# ------------------------------------------------------------------------ median / nanmedian
def _lower_median(values: np.ndarray) -> Any:
    """The lower median of a flat array without NaN (NaN when empty)."""
    if not values.size:
        # NaN, or what PyTorch's cast of NaN to an integer gives on x86: the lowest value
        if values.dtype.kind in FLOAT_KINDS:
            return np.asarray(np.nan, values.dtype)
        return np.asarray(
            np.iinfo(values.dtype).min if values.dtype.kind == "i" else 0, values.dtype
        )
    k = (values.size - 1) // 2
    return np.asarray(np.partition(widen(values), k)[k]).astype(values.dtype)


class MedianAll(Function):
    _backward_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, x):
        flat = x._data.reshape(-1)
        if flat.dtype.kind in FLOAT_KINDS and np.isnan(flat).any():
            value = np.asarray(np.nan, flat.dtype)
        else:
            value = _lower_median(flat)
        return _distribute_forward(ctx, x, value)

    @staticmethod
    def backward(ctx, grad_output):
        return _distribute_backward(ctx, grad_output)


class NanmedianAll(Function):
    _backward_name = "NanmedianBackward0"

    @staticmethod
    def forward(ctx, x):
        flat = x._data.reshape(-1)
        if flat.dtype.kind in FLOAT_KINDS:
            flat = flat[~np.isnan(flat)]
        return _distribute_forward(ctx, x, _lower_median(flat))

    @staticmethod
    def backward(ctx, grad_output):
        return _distribute_backward(ctx, grad_output)


class MedianDim(Function):
    _backward_name = "MedianBackward1"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        array = x._data
        indices = None
        if array.ndim:
            indices = _partition_indices(array, (array.shape[dim] - 1) // 2, dim)
            if array.dtype.kind in FLOAT_KINDS:
                # a slice holding NaN has median NaN: its first NaN
                indices = _first_nan_indices(array, dim, indices)
        return _pick_forward(ctx, x, dim, keepdim, indices)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _pick_backward(ctx, grad_values), None, None


class NanmedianDim(Function):
    _backward_name = "NanmedianBackward1"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        array = x._data
        indices = None
        if array.ndim:
            nan = np.isnan(array) if array.dtype.kind in FLOAT_KINDS else None
            if nan is None or not nan.any():
                indices = _partition_indices(array, (array.shape[dim] - 1) // 2, dim)
            else:
                # NaN sorts last, so the lower median of each slice's numbers sits at a
                # position that depends on how many numbers it has; an all-NaN slice takes its
                # first NaN.
                order = np.argsort(widen(array), axis=dim, kind="stable")
                count = np.sum(~nan, axis=dim, keepdims=True)
                position = np.maximum(count - 1, 0) // 2
                indices = np.take_along_axis(order, position, dim)
        return _pick_forward(ctx, x, dim, keepdim, indices)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _pick_backward(ctx, grad_values), None, None


def _keep_shape(shape: tuple[int, ...], dim: int) -> tuple[int, ...]:
    return shape[:dim] + (1,) + shape[dim + 1 :]


def _median(name: str, all_function: Any, dim_function: Any, result_type: Any, input: Tensor,
            dim: Any, keepdim: bool) -> Any:  # fmt: skip
    array = _array(input)
    if dim is None:
        _check_bool(array, "median")
        return all_function.apply(input)
    _int_argument(name, dim, "dim", 2)
    dim = _normalize_dim(dim, array.ndim)
    _check_bool(array, "median")
    _check_nonempty_dim(name, array, dim)
    return result_type(*dim_function.apply(input, dim, keepdim))


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median of all entries; along `dim`, a (values, indices) named tuple. A NaN
    makes the median of its slice NaN."""
    return _median("median", MedianAll, MedianDim, MedianResult, input, dim, keepdim)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """`median` ignoring NaN (NaN only where a slice is all NaN)."""
    return _median("nanmedian", NanmedianAll, NanmedianDim, NanmedianResult, input, dim, keepdim)


# -------------------------------------------------------------------------------------- mode
def _mode_indices(array: np.ndarray, dim: int) -> np.ndarray:
    """Indices (dim kept as size 1) of the most frequent value along `dim`: the smallest of
    equally frequent values, at its last occurrence. Each NaN counts once."""
    rows = np.moveaxis(array, dim, -1)
    order = np.argsort(widen(rows), axis=-1, kind="stable")
    ordered = np.take_along_axis(rows, order, -1)
    size = rows.shape[-1]
    positions = np.arange(size)
    ends = np.ones(ordered.shape, np.bool_)
    ends[..., :-1] = ordered[..., 1:] != ordered[..., :-1]
    starts = np.ones(ordered.shape, np.bool_)
    starts[..., 1:] = ends[..., :-1]
    run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    run_length = np.where(ends, positions - run_start + 1, 0)
    # argmax takes the first longest run: the smallest value, and the run's end is its last
    # occurrence in the (stable) order
    chosen = np.argmax(run_length, axis=-1)[..., None]
    indices = np.take_along_axis(order, chosen, -1)
    return np.moveaxis(indices, -1, dim)


class Mode(Function):
    _backward_name = "ModeBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        array = x._data
        indices = _mode_indices(array, dim) if array.ndim else None
        return _pick_forward(ctx, x, dim, keepdim, indices)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _pick_backward(ctx, grad_values), None, None


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ModeResult:
    """The most frequent value along `dim` (the smallest of a tie) and an index of it."""
    array = _array(input)
    _int_argument("mode", dim, "dim", 2)
    dim = _normalize_dim(dim, array.ndim)
    _check_nonempty_dim("mode", array, dim)
    return ModeResult(*Mode.apply(input, dim, keepdim))


# ------------------------------------------------------------------------------------- msort
def msort(input: Tensor) -> Tensor:
    """`input` sorted along its first dim."""
    check_tensors(input)
    return Sort.apply(input, 0, False)[0]


# ------------------------------------------------------------------------ unique (no backward)
def _no_derivative(kernel: str) -> type:
    """A node for an op PyTorch records but cannot differentiate: backward through it is an
    error naming the kernel."""

    def backward(ctx, *grad_outputs):
        raise RuntimeError(f"the derivative for '{kernel}' is not implemented.")

    return staticmethod(backward)


class Unique(Function):
    _backward_name = "Unique2Backward0"
    backward = _no_derivative("_unique2")

    @staticmethod
    def forward(ctx, x, values):
        return _wrap(values)


class UniqueDim(Function):
    _backward_name = "UniqueDimBackward0"
    backward = _no_derivative("unique_dim")

    @staticmethod
    def forward(ctx, x, values):
        return _wrap(values)


class UniqueConsecutive(Function):
    _backward_name = "UniqueConsecutiveBackward0"
    backward = _no_derivative("unique_consecutive")

    @staticmethod
    def forward(ctx, x, values):
        return _wrap(values)


def _rows_along(array: np.ndarray, dim: int) -> np.ndarray:
    """The slices of `array` along `dim` as rows of a 2-D array."""
    moved = np.moveaxis(array, dim, 0)
    return moved.reshape(array.shape[dim], int(np.prod(moved.shape[1:])))


def _unique_flat(array: np.ndarray, return_inverse: bool) -> tuple:
    """(sorted distinct values, inverse, counts) of a flat array; every NaN is distinct. The
    sort needs no stability (equal values are one entry), and sorting the values alone is
    faster than sorting indices where the inverse is not asked for."""
    if return_inverse:
        order = np.argsort(widen(array))
        ordered = array[order]
    else:
        order = None
        ordered = np.sort(widen(array)).astype(array.dtype, copy=False)
    starts = np.ones(ordered.shape, np.bool_)
    starts[1:] = ordered[1:] != ordered[:-1]
    return _runs(ordered, order, starts)


def _runs(ordered: np.ndarray, order: np.ndarray | None, starts: np.ndarray) -> tuple:
    """(first of each run, inverse, run lengths) of runs beginning where `starts` is set."""
    run_ids = np.cumsum(starts) - 1
    inverse = np.empty(run_ids.shape, _INT64)
    if order is None:
        inverse[...] = run_ids
    else:
        inverse[order] = run_ids
    first = np.flatnonzero(starts)
    counts = np.diff(np.append(first, starts.size)).astype(_INT64)
    return ordered[first], inverse, counts


def _unique_slices(array: np.ndarray, dim: int, consecutive: bool) -> tuple:
    """(distinct slices along `dim`, inverse, counts): slices sorted lexicographically unless
    `consecutive`, where only neighbours merge."""
    rows = _rows_along(array, dim)
    size = rows.shape[0]
    if consecutive or size == 0:
        order = None
        ordered = rows
    else:
        order = np.lexsort(widen(rows).T[::-1]) if rows.shape[1] else np.arange(size)
        ordered = rows[order]
    starts = np.ones(size, np.bool_)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    _, inverse, counts = _runs(np.arange(size), order, starts)
    first = np.flatnonzero(starts)
    values = ordered[first]
    moved = np.moveaxis(array, dim, 0)
    values = np.moveaxis(values.reshape((len(first),) + moved.shape[1:]), 0, dim)
    return np.ascontiguousarray(values), inverse, counts


def _unique_result(values_tensor: Tensor, inverse: np.ndarray, counts: np.ndarray,
                   return_inverse: bool, return_counts: bool) -> Any:  # fmt: skip
    result = [values_tensor]
    if return_inverse:
        result.append(_wrap(inverse))
    if return_counts:
        result.append(_wrap(counts))
    return result[0] if len(result) == 1 else tuple(result)


def _check_unique_dim(name: str, array: np.ndarray, dim: Any) -> int:
    _int_argument(name, dim, "dim", 5 if name == "unique" else 4)
    if not array.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _normalize_dim(dim, array.ndim)
    if array.size == 0 and any(size == 0 for axis, size in enumerate(array.shape) if axis != dim):
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    return dim


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:  # fmt: skip
    """The distinct values of `input` in ascending order (whether or not `sorted` is set, as on
    PyTorch's CPU), with the inverse indices and counts on request. Every NaN is distinct.
    With `dim`, the distinct slices along it, in lexicographic order."""
    array = _array(input)
    if dim is None:
        flat = array.reshape(-1)
        values, inverse, counts = _unique_flat(flat, return_inverse)
        inverse = inverse.reshape(array.shape)
        function = Unique
    else:
        dim = _check_unique_dim("unique", array, dim)
        values, inverse, counts = _unique_slices(array, dim, False)
        function = UniqueDim
    return _unique_result(
        function.apply(input, values), inverse, counts, return_inverse, return_counts
    )


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:  # fmt: skip
    """`input` with each run of equal consecutive values (slices along `dim`) kept once."""
    array = _array(input)
    if dim is None:
        flat = array.reshape(-1)
        starts = np.ones(flat.shape, np.bool_)
        starts[1:] = flat[1:] != flat[:-1]
        values, inverse, counts = _runs(flat, None, starts)
        inverse = inverse.reshape(array.shape)
    else:
        dim = _check_unique_dim("unique_consecutive", array, dim)
        values, inverse, counts = _unique_slices(array, dim, True)
    return _unique_result(
        UniqueConsecutive.apply(input, values),
        inverse,
        counts,
        return_inverse,
        return_counts,
    )


# ---------------------------------------------------------------------------- cummax / cummin
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

    @staticmethod
    def forward(ctx, x, dim):
        return _running_extreme(ctx, x, dim, np.maximum)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _running_extreme_backward(ctx, grad_values), None


class Cummin(Function):
    _backward_name = "CumminBackward0"

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


class Logcumsumexp(Function):
    _backward_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        array = x._data
        # logaddexp shifts by the larger operand, so large inputs don't overflow
        result = _wrap(np.logaddexp.accumulate(array, axis=dim) if array.ndim else array.copy())
        ctx.dim = dim
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        if not x._data.ndim:
            return grad_output, None
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
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise not_implemented("logcumsumexp_out_cpu", input._data.dtype)
    return Logcumsumexp.apply(input, dim)


# ----------------------------------------------------------------------------------- aminmax
def _share_among_ties(array: np.ndarray, result: np.ndarray, dims: Any) -> np.ndarray:
    """Gradient weights of an extreme: ties share it evenly; a NaN slice gets NaN (0 / 0)."""
    mask = (array == result).astype(array.dtype)
    return mask / np.add.reduce(mask, dims, None, None, True)


class Aminmax(Function):
    _backward_name = "AminmaxBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        array = x._data
        low = np.minimum.reduce(array, dims, None, None, True)
        high = np.maximum.reduce(array, dims, None, None, True)
        if ctx.needs_input_grad[0]:
            ctx.shape = array.shape
            ctx.dims = dims
            ctx.keepdim = keepdim
            ctx.save_for_backward(
                _wrap(_share_among_ties(array, low, dims)),
                _wrap(_share_among_ties(array, high, dims)),
            )
        if not keepdim:
            shape = reduction._reduced_shape(array.shape, dims, False)
            low, high = low.reshape(shape), high.reshape(shape)
        return _wrap(low), _wrap(high)

    @staticmethod
    def backward(ctx, grad_min, grad_max):
        low_weights, high_weights = ctx.saved_tensors
        restore = reduction.restore_reduced
        grad = restore(grad_min, ctx.shape, ctx.dims, ctx.keepdim) * low_weights
        grad = grad + restore(grad_max, ctx.shape, ctx.dims, ctx.keepdim) * high_weights
        return grad, None, None


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AminmaxResult:
    """(min, max) over all entries or along `dim`, in one pass over the arguments."""
    array = _array(input)
    if dim is None:
        if array.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity."
            )
        dims = None
    else:
        _int_argument("aminmax", dim, "dim", 2)
        dim = _normalize_dim(dim, array.ndim)
        if array.ndim and array.shape[dim] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
        dims = (dim,) if array.ndim else None
    if dims is None and keepdim:
        dims = tuple(range(array.ndim))
    return AminmaxResult(*Aminmax.apply(input, dims, keepdim))


# --------------------------------------------------------------------------- nansum / nanmean
class Nansum(Function):
    _backward_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        array = x._data
        result = np.asarray(reduction._accumulate(np.add.reduce, array, dims, keepdim, dtype))
        if array.dtype.kind in FLOAT_KINDS:
            # Most inputs hold no NaN: sum first, and mask the NaNs only where a sum shows one.
            nan = None
            if np.isnan(result).any():
                nan = np.isnan(array)
                masked = np.where(nan, 0, array)
                result = np.asarray(
                    reduction._accumulate(np.add.reduce, masked, dims, keepdim, dtype)
                )
            if ctx.needs_input_grad[0]:
                ctx.shape = array.shape
                ctx.dims = dims
                ctx.keepdim = keepdim
                ctx.save_for_backward(_wrap(np.isnan(array) if nan is None else nan))
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        (nan,) = ctx.saved_tensors
        # d/dx nansum(x) = 1 where x is a number, 0 where it is NaN
        grad = reduction.restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        return pointwise_ops.where(nan, 0.0, grad), None, None, None


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """`sum` treating NaN as zero."""
    array = _array(input)
    if dtype is not None:
        dtype = dtypes.to_numpy_dtype(dtype)
    dims = reduction.normalize_dims(dim, array.ndim) or None
    if dims is None and keepdim:
        dims = tuple(range(array.ndim))
    return Nansum.apply(input, dims, keepdim, dtype)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> Tensor:  # fmt: skip
    """`mean` of the entries that are not NaN (NaN where a slice has none)."""
    array = _array(input)
    if array.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{dtype_name(array.dtype)}"
        )
    count = nansum(pointwise_ops.logical_not(pointwise_ops.isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ------------------------------------------------------------------------ std_mean / var_mean
def _add_mean_backward(ctx: Any, grad: Tensor | None, grad_mean: Tensor | None) -> Any:
    """`grad` plus the gradient of the mean. An output the loss did not use has no gradient
    (not zeros), so that 0 * inf never turns the other's gradient into NaN."""
    if grad_mean is None:
        return grad
    # d/dx mean(x) = 1 / N
    grad_mean = reduction.restore_reduced(grad_mean, ctx.shape, ctx.dims, ctx.keepdim)
    count = reduction._reduced_count(ctx.shape, ctx.dims)
    grad_mean = shape_ops.expand(grad_mean * (1.0 / count if count else float("nan")), ctx.shape)
    return grad_mean if grad is None else grad + grad_mean


class VarMean(Function):
    _backward_name = "VarMeanBackward0"

    @staticmethod
    def forward(ctx, x, dims, dof, keepdim):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.dof = dof
        ctx.keepdim = keepdim
        ctx.set_materialize_grads(False)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)
        variance = np.asarray(reduction._variance(array, dims, dof, keepdim)).astype(array.dtype)
        mean = reduction._mean_array(array, dims, keepdim, None)
        return _wrap(variance), _wrap(np.asarray(mean))

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        (x,) = ctx.saved_tensors
        grad_var_input = None
        if grad_var is not None:
            grad_var = reduction.restore_reduced(grad_var, ctx.shape, ctx.dims, ctx.keepdim)
            grad_var_input = reduction._variance_backward(x, grad_var, ctx.dims, ctx.dof)
        return _add_mean_backward(ctx, grad_var_input, grad_mean), None, None, None


class StdMean(Function):
    _backward_name = "StdMeanBackward0"

    @staticmethod
    def forward(ctx, x, dims, dof, keepdim):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.dof = dof
        ctx.keepdim = keepdim
        ctx.set_materialize_grads(False)
        deviation = np.sqrt(reduction._variance(array, dims, dof, keepdim)).astype(array.dtype)
        deviation = _wrap(np.asarray(deviation))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, deviation)
        mean = reduction._mean_array(array, dims, keepdim, None)
        return deviation, _wrap(np.asarray(mean))

    @staticmethod
    def backward(ctx, grad_std, grad_mean):
        x, deviation = ctx.saved_tensors
        grad_std_input = None
        if grad_std is not None:
            restore = reduction.restore_reduced
            grad_std = restore(grad_std, ctx.shape, ctx.dims, ctx.keepdim)
            deviation = restore(deviation, ctx.shape, ctx.dims, ctx.keepdim)
            # d std = d var / (2 std); PyTorch takes 0 where std is 0
            where = pointwise_ops.where
            grad_var = where(pointwise_ops.eq(deviation, 0.0), 0.0, grad_std / (deviation * 2.0))
            grad_std_input = reduction._variance_backward(x, grad_var, ctx.dims, ctx.dof)
        return _add_mean_backward(ctx, grad_std_input, grad_mean), None, None, None


def _paired_moments(name: str, function: Any, input: Tensor, dim: Any, unbiased: Any,
                    keepdim: bool, correction: Any) -> tuple:  # fmt: skip
    check_tensors(input)
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    dims, dof = reduction._variance_args(name, input, dim, unbiased, correction)
    if dims is None and keepdim:
        dims = tuple(range(input._data.ndim))
    return tuple(function.apply(input, dims, dof, keepdim))


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple:  # fmt: skip
    """(var, mean) over `dim` in one pass (see `var` for `unbiased` and `correction`)."""
    return _paired_moments("var_mean", VarMean, input, dim, unbiased, keepdim, correction)


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple:  # fmt: skip
    """(std, mean) over `dim` in one pass (see `var` for `unbiased` and `correction`)."""
    return _paired_moments("std_mean", StdMean, input, dim, unbiased, keepdim, correction)


# -------------------------------------------------------------------------------------- diff
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
    result = shape_ops.cat(parts, dim) if len(parts) > 1 else input
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


# --------------------------------------------------------------------- searchsorted / bucketize
def _binary_search(boundaries: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """Insertion points of each row of `values` in the same row of `boundaries` (both 2-D),
    found by bisection with PyTorch's comparisons, all queries at once: a NaN boundary compares
    as smaller than every value, and a NaN value goes past every boundary."""
    size = boundaries.shape[-1]
    start = np.zeros(values.shape, _INT64)
    end = np.full(values.shape, size, _INT64)
    active = start < end
    while active.any():
        middle = (start + end) >> 1
        probe = np.take_along_axis(boundaries, np.minimum(middle, size - 1), -1)
        before = probe <= values if right else probe < values
        if boundaries.dtype.kind in FLOAT_KINDS:
            before |= np.isnan(probe)
        if values.dtype.kind in FLOAT_KINDS:
            before |= np.isnan(values)
        start = np.where(active & before, middle + 1, start)
        end = np.where(active & ~before, middle, end)
        active = start < end
    return start


def _shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(size) for size in shape) + "]"


def _search(boundaries: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    for array in (boundaries, values):
        if array.dtype == np.bool_:
            raise not_implemented("searchsorted_out_cpu", array.dtype)
    common = np.result_type(boundaries.dtype, values.dtype)
    boundaries = widen(boundaries.astype(common, copy=False))
    values = widen(values.astype(common, copy=False))
    if boundaries.shape[-1] == 0 or values.size == 0:
        return np.zeros(values.shape, _INT64)
    side = "right" if right else "left"
    if boundaries.ndim == 1 and not (common.kind in FLOAT_KINDS and np.isnan(boundaries).any()):
        # NumPy's bisection orders NaN values last, as PyTorch's comparisons do
        return np.searchsorted(boundaries, values, side).astype(_INT64, copy=False)
    if boundaries.ndim == 1:
        return _binary_search(boundaries[None, :], values.reshape(1, -1), right).reshape(
            values.shape
        )
    rows = boundaries.reshape(-1, boundaries.shape[-1])
    found = _binary_search(rows, values.reshape(rows.shape[0], -1), right)
    return found.reshape(values.shape)


def _query_array(value: Any) -> tuple[np.ndarray, bool]:
    """(values as an array, whether they came as a Python number)."""
    if isinstance(value, TensorBase):
        return value._data, False
    if not isinstance(value, bool | int | float):
        check_tensors(value)
    return np.asarray(value), True


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:  # fmt: skip
    """Where each value of `input` would be inserted into the innermost dim of
    `sorted_sequence` to keep it sorted (after the equal entries when `right`)."""
    boundaries = _array(sorted_sequence)
    values, is_number = _query_array(input)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"lucid.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "lucid.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    if not boundaries.ndim:
        raise RuntimeError(
            "lucid.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension"
        )
    if boundaries.ndim > 1 and (values.ndim == 0 or is_number):
        raise RuntimeError(
            "lucid.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({boundaries.ndim}) and input "
            f"value's dim({values.ndim}) numel({values.size})"
        )
    if boundaries.ndim > 1 and (
        values.ndim != boundaries.ndim or values.shape[:-1] != boundaries.shape[:-1]
    ):
        raise RuntimeError(
            "lucid.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {_shape_text(boundaries.shape)} and input value tensor "
            f"{_shape_text(values.shape)}"
        )
    if sorter is not None:
        order = _array(sorter)
        if order.dtype != _INT64:
            raise RuntimeError(
                "lucid.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                f"{dtype_name(order.dtype)}"
            )
        if order.shape != boundaries.shape:
            raise RuntimeError(
                "lucid.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {_shape_text(boundaries.shape)}and got sorter tensor "
                f"{_shape_text(order.shape)}"
            )
        if order.size and (order.min() < 0 or order.max() >= boundaries.shape[-1]):
            raise RuntimeError("lucid.searchsorted(): sorter index out of range")
        boundaries = np.take_along_axis(boundaries, order, -1)
    positions = _search(boundaries, values, right)
    return _wrap(positions.astype(np.int32 if out_int32 else _INT64, copy=False))


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:  # fmt: skip
    """The index of the bucket of `boundaries` (1-D, ascending) each value of `input` falls in:
    boundaries[i-1] < x <= boundaries[i], or boundaries[i-1] <= x < boundaries[i] when `right`."""
    edges = _array(boundaries)
    values, _ = _query_array(input)
    if edges.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({edges.ndim})")
    positions = _search(edges, values, right)
    return _wrap(positions.astype(np.int32 if out_int32 else _INT64, copy=False))


# ------------------------------------------------------------------ histc / histogram / bincount
def _number_text(value: float) -> str:
    if np.isnan(value):
        return "-nan" if np.signbit(value) else "nan"
    return f"{value:g}"


def _linear_edges(low: float, high: float, bins: int, dtype: np.dtype) -> np.ndarray:
    """`bins` + 1 equally spaced edges from `low` to `high`, rounded as PyTorch's linspace
    rounds them, so that a value on an edge lands in the same bin: the step in the dtype, the
    first half counted up from `low` and the second half down from `high`, each edge rounded
    once (a fused multiply-add, done here in a wider type)."""
    start, end = dtype.type(low), dtype.type(high)
    step = (end - start) / dtype.type(bins)
    wide = np.longdouble if dtype == np.float64 else np.float64
    places = np.arange(bins + 1)
    from_start = wide(step) * places.astype(wide) + wide(start)
    from_end = wide(end) - wide(step) * (bins - places).astype(wide)
    return np.where(places < (bins + 1) // 2, from_start, from_end).astype(dtype)


def _bin_indices(values: np.ndarray, edges: np.ndarray, interpolate: bool) -> np.ndarray:
    """The bin of each value (the last bin holds its right edge too); -1 outside the edges and
    for NaN. With `interpolate` (histc's rule), the bin is read off a linear scale in the
    values' dtype without looking at the edges, as PyTorch does; otherwise it is found among
    the edges."""
    bins = edges.size - 1
    low, high = edges[0], edges[-1]
    inside = (values >= low) & (values <= high)
    if interpolate:
        work = np.where(inside, values, low)
        scale = values.dtype.type(bins)
        guess = ((work - low) * scale / (high - low)).astype(_INT64)
    else:
        guess = np.searchsorted(edges, values, "right").astype(_INT64) - 1
    return np.where(inside, np.minimum(guess, bins - 1), -1)


def _float_only(array: np.ndarray) -> None:
    if array.dtype.kind not in FLOAT_KINDS:
        raise not_implemented("histogram_cpu", array.dtype)


def _count_bins(bin_index: np.ndarray, bins: int, weights: np.ndarray | None,
                dtype: np.dtype) -> np.ndarray:  # fmt: skip
    kept = bin_index >= 0
    chosen = None if weights is None else weights.reshape(-1)[kept.reshape(-1)]
    counts = np.bincount(bin_index[kept], weights=chosen, minlength=bins)
    return counts.astype(dtype)


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Counts of `input` in `bins` equal bins over [min, max] (over the data's range when both
    are equal); values outside the range and NaN are not counted."""
    array = _array(input)
    _int_argument("histc", bins, "bins", 2)
    _float_only(array)
    if bins <= 0:
        raise RuntimeError(f"lucid.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("lucid.histc: max must be larger than min")
    if low == high and array.size:
        low, high = float(np.min(array)), float(np.max(array))
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(
            f"lucid.histc: range of [{_number_text(low)}, {_number_text(high)}] is not finite"
        )
    if low == high:
        low, high = low - 1.0, high + 1.0
    edges = _linear_edges(low, high, bins, array.dtype)
    return _wrap(_count_bins(_bin_indices(array.reshape(-1), edges, True), bins, None,
                             array.dtype))  # fmt: skip


_HISTOGRAM_OVERLOADS = (
    "(Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, tuple of "
    "Tensors out = None)",
    "(Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, bool "
    "density = False, tuple of Tensors out = None)",
)


def _histogram_edges(input: Tensor, bins: Any, range: Any, dim: int = 0,
                     array: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """The bin edges of dimension `dim` (whose values are `array`, by default the input's),
    after PyTorch's checks of `bins` and `range`."""
    if array is None:
        array = input._data
    if isinstance(bins, TensorBase):
        edges = bins._data
        if edges.ndim != 1:
            raise RuntimeError(
                "lucid.histogramdd: bins tensor should have one dimension, but got "
                f"{edges.ndim} dimensions in the bins tensor for dimension {dim}"
            )
        if edges.dtype != array.dtype:
            raise RuntimeError(
                "lucid.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {dtype_name(array.dtype).lower()} and bins for "
                f"dimension {dim} with dtype {dtype_name(edges.dtype).lower()}"
            )
        return edges.copy()
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise invalid_combination("histogram", (input, bins), _HISTOGRAM_OVERLOADS)
    if bins <= 0:
        raise RuntimeError(
            f"lucid.histogram(): bins must be > 0, but got {bins} for dimension {dim}"
        )
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif array.size:
        low, high = float(np.min(array)), float(np.max(array))
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(
            f"lucid.histogramdd: min should not exceed max, but got min {_number_text(low)} max "
            f"{_number_text(high)} for dimension {dim}"
        )
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(
            f"lucid.histogramdd: dimension {dim}'s range [{_number_text(low)}, "
            f"{_number_text(high)}] is not finite"
        )
    if low == high:
        low, high = low - 0.5, high + 0.5
    return _linear_edges(low, high, bins, array.dtype)


def _histogram_weights(weight: Tensor, array: np.ndarray) -> np.ndarray:
    """The weight array of histogram/histogramdd, which must share the input's dtype."""
    weights = _array(weight)
    if weights.dtype != array.dtype:
        raise RuntimeError(
            "lucid.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({dtype_name(array.dtype).lower()}), "
            f"and weight({dtype_name(weights.dtype).lower()})"
        )
    return weights


def histogram(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,
              density: bool = False) -> HistogramResult:  # fmt: skip
    """(hist, bin_edges): counts (or summed `weight`) of `input` in `bins` equal bins over
    `range` (the data's range by default), or between the edges `bins` gives as a tensor."""
    array = _array(input)
    # PyTorch's float16/bfloat16 kernel needs given edges or a given range (it computes no
    # range from the data in these dtypes); the counting runs in float32 here
    low = is_low_precision(array.dtype) and (isinstance(bins, TensorBase) or range is not None)
    if array.dtype not in (np.float32, np.float64) and not low:
        raise not_implemented("histogramdd", array.dtype)
    edges = _histogram_edges(input, bins, range)
    weights = None
    if weight is not None:
        weights = _histogram_weights(weight, array)
        if weights.shape != array.shape:
            raise RuntimeError(
                "lucid.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{_shape_text((array.size, 1))} and weight with shape {_shape_text(weights.shape)}"
            )
    bin_count = builtins.max(edges.size - 1, 0)
    bin_index = _bin_indices(widen(array).reshape(-1), widen(edges), False) if bin_count else None
    if bin_index is None:
        hist = np.zeros(0, array.dtype)
    else:
        hist = _count_bins(bin_index, bin_count, widen(weights), np.float32 if low else array.dtype)
    if density and bin_count:
        hist = hist / hist.sum() / np.diff(widen(edges))
    return HistogramResult(_wrap(round_to(hist, array.dtype)), _wrap(edges))


_HISTOGRAMDD_OVERLOADS = tuple(
    f"(Tensor input, {bins} bins, tuple of floats range = None, Tensor weight = None, bool "
    "density = False)"
    for bins in ("int", "tuple of ints", "tuple of Tensors")
)


def histogramdd(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,
                density: bool = False) -> HistogramddResult:  # fmt: skip
    """(hist, bin_edges): the D-dimensional histogram of the points in `input`'s rows (its last
    dim is D). `bins` is a bin count for every dim, one count per dim, or one edges tensor per
    dim; `range` gives (min, max) of every dim in turn (the data's range by default)."""
    array = _array(input)
    if array.dtype not in (np.float32, np.float64):
        raise not_implemented("histogramdd", array.dtype)
    if array.ndim < 2:
        raise RuntimeError("lucid.histogramdd: input tensor should have at least 2 dimensions")
    dims = array.shape[-1]
    points = array.reshape(-1, dims)
    if isinstance(bins, int) and not isinstance(bins, bool):
        per_dim = [bins] * dims
    elif isinstance(bins, list | tuple) and all(isinstance(item, TensorBase) for item in bins):
        if len(bins) != dims:
            raise RuntimeError(
                f"lucid.histogramdd: expected {dims} sequences of bin edges for a {dims}-"
                f"dimensional histogram but got {len(bins)}"
            )
        per_dim = list(bins)
    elif isinstance(bins, list | tuple) and all(
        isinstance(item, int) and not isinstance(item, bool) for item in bins
    ):
        if len(bins) != dims:
            raise RuntimeError(
                "histogramdd: The size of bins must be equal to the innermost dimension of the "
                "input."
            )
        per_dim = list(bins)
    else:
        # PyTorch's message for this op ends with a newline
        error = invalid_combination("histogramdd", (input, bins), _HISTOGRAMDD_OVERLOADS)
        raise TypeError(f"{error}\n")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(
            f"lucid.histogramdd: for a {dims}-dimensional histogram range should have "
            f"{2 * dims} elements, but got {len(range)}"
        )
    edges = [
        _histogram_edges(
            input,
            per_dim[dim],
            None if range is None else range[2 * dim : 2 * dim + 2],
            dim,
            points[:, dim],
        )
        for dim in builtins.range(dims)
    ]
    weights = None
    if weight is not None:
        weights = _histogram_weights(weight, array)
        if weights.shape != array.shape[:-1]:
            raise RuntimeError(
                "lucid.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{_shape_text(array.shape)} and weight with shape {_shape_text(weights.shape)}"
            )
    counts = tuple(builtins.max(edge.size - 1, 0) for edge in edges)
    if 0 in counts:
        hist = np.zeros(counts, array.dtype)
    else:
        # each point's bin along every dim, flattened to one index; a point outside any dim's
        # edges (or NaN there) is not counted
        indices = [_bin_indices(points[:, dim], edges[dim], False) for dim in builtins.range(dims)]
        inside = np.logical_and.reduce([index >= 0 for index in indices])
        flat = np.ravel_multi_index(tuple(np.where(inside, index, 0) for index in indices), counts)
        flat = np.where(inside, flat, -1)
        hist = _count_bins(flat, int(np.prod(counts)), weights, array.dtype).reshape(counts)
    if density and hist.size:
        # divide by the total and by each bin's volume (the product of its widths)
        volume = np.ones(counts)
        for dim, edge in enumerate(edges):
            shape = [1] * dims
            shape[dim] = counts[dim]
            volume = volume * np.diff(edge).astype(np.float64).reshape(shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = (hist / hist.sum() / volume).astype(array.dtype)
    return HistogramddResult(_wrap(hist), tuple(_wrap(edge) for edge in edges))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in the 1-D `input` (or the sum of its
    `weights`), with at least `minlength` bins."""
    array = _array(input)
    if array.dtype.kind not in "iu":
        raise not_implemented("bincount_cpu", array.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if array.ndim != 1 or (array.size and array.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _wrap(np.bincount(array, minlength=minlength).astype(_INT64))
    weight_array = _array(weights)
    if weight_array.ndim != 1 or weight_array.shape[0] != array.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    result_dtype = weight_array.dtype if weight_array.dtype == np.float32 else np.float64
    counts = np.bincount(array, weights=weight_array.astype(np.float64), minlength=minlength)
    return _wrap(counts.astype(result_dtype))


# ---------------------------------------------------------------------- quantile / nanquantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_arguments(name: str, array: np.ndarray, q: Any) -> np.ndarray:
    """`q` as an array in the input's dtype, after PyTorch's checks."""
    if array.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, TensorBase):
        q_array = q._data
        if q_array.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q_array.dtype != array.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if not np.all((q_array >= 0) & (q_array <= 1)):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        return q_array
    if not isinstance(q, int | float) or isinstance(q, bool):
        raise_type_error(q, "float")
    if not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    return np.asarray(q, array.dtype)


def _quantile(name: str, input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:  # fmt: skip
    array = _array(input)
    q_array = _quantile_arguments(name, array, q)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    if array.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        rows = shape_ops.reshape(input, (-1,))
    else:
        _int_argument(name, dim, "dim", 3)
        dim = _normalize_dim(dim, array.ndim)
        rows = shape_ops.movedim(input, dim, -1) if array.ndim else shape_ops.reshape(input, (1,))
    ordered = Sort.apply(rows, rows._data.ndim - 1, False)[0]
    ordered_array = ordered._data
    size = ordered_array.shape[-1]
    # Ranks are computed in the input's dtype, as PyTorch does, so that `lower`, `higher` and
    # `nearest` pick the same entries.
    q_flat = q_array.reshape(-1)
    if ignore_nan:
        count = np.sum(~np.isnan(ordered_array), axis=-1, keepdims=True).astype(array.dtype)
        ranks = q_flat * np.maximum(count - 1, 0)
    else:
        ranks = q_flat * array.dtype.type(size - 1)
        # a slice holding NaN takes its last entry, a NaN
        ranks = np.where(np.isnan(ordered_array[..., -1:]), size - 1, ranks)
    ranks = np.broadcast_to(ranks, ordered_array.shape[:-1] + q_flat.shape).astype(array.dtype)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    below = np.floor(ranks).astype(_INT64)
    result = gather(ordered, -1, _wrap(below))
    if interpolation in ("linear", "midpoint"):
        above = gather(ordered, -1, _wrap(np.ceil(ranks).astype(_INT64)))
        weights = ranks - below if interpolation == "linear" else np.full_like(ranks, 0.5)
        result = pointwise_ops.lerp(result, above, _wrap(weights.astype(array.dtype)))
    # result: the kept dims, then one entry per q; PyTorch puts q's dim first
    if q_array.ndim:
        result = shape_ops.movedim(result, -1, 0)
    else:
        result = shape_ops.squeeze(result, -1)
    if keepdim:
        offset = 1 if q_array.ndim else 0
        if dim is None:
            kept = (1,) * array.ndim
        else:
            kept = _keep_shape(array.shape, dim) if array.ndim else ()
        result = shape_ops.reshape(result, result._data.shape[:offset] + kept)
    return result


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:  # fmt: skip
    """The `q`-th quantiles over `dim` (of all entries when None), interpolating between the
    two nearest entries as `interpolation` says. A slice holding NaN has quantile NaN."""
    if local_state.autocast is not None:
        return local_state.autocast.run(
            quantile, input, q, dim, keepdim, interpolation=interpolation
        )
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:  # fmt: skip
    """`quantile` ignoring NaN (NaN only where a slice is all NaN)."""
    if local_state.autocast is not None:
        return local_state.autocast.run(
            nanquantile, input, q, dim, keepdim, interpolation=interpolation
        )
    # PyTorch's messages name quantile for both
    return _quantile("quantile", input, q, dim, keepdim, interpolation, True)
