"""Sorting and searching: sort, argsort, msort, topk; the order statistics kthvalue, median,
nanmedian, mode, quantile, nanquantile; unique values; searchsorted and bucketize."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import raise_type_error
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.function import Function
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops import pointwise as pointwise_ops
from lucid.ops import reduction
from lucid.ops import shape as shape_ops
from lucid.ops._common import (
    _array,
    _int_argument,
    autocast_op,
    check_bool,
    check_tensors,
    dtype_name,
    invalid_combination,
    not_implemented,
    result_type,
)
from lucid.ops._promote import widen
from lucid.ops.indexing import Scatter, gather

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "bucketize", "kthvalue", "median", "mode", "msort", "nanmedian", "nanquantile", "quantile",
    "searchsorted", "unique", "unique_consecutive", "sort", "argsort", "topk",
]  # fmt: skip


# ---------------------------------------------------------------------- sort / argsort / topk
SortResult = result_type("SortResult", "sort", "values", "indices")
TopkResult = result_type("TopkResult", "topk", "values", "indices")


def _stable_argsort(array: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Indices that sort `array` along `dim`, ties in their original order, NaN the largest
    (NumPy's order and PyTorch's)."""
    array = widen(array)  # NumPy's sorts order bfloat16 NaN wrongly: float32 holds it exactly
    if not descending:
        return np.argsort(array, axis=dim, kind="stable")
    # Sorting the reversed array and reading the result backwards keeps ties in their original
    # order; negating instead would overflow integers and break bools.
    last = array.shape[dim] - 1
    order = np.argsort(np.flip(array, dim), axis=dim, kind="stable")
    return last - np.flip(order, dim)


def _topk_indices(array: np.ndarray, k: int, dim: int, largest: bool) -> np.ndarray:
    """Indices of the k largest (smallest) entries along `dim`, in sorted order."""
    size = array.shape[dim]
    if k == 0 or 8 * k >= size:
        order = _stable_argsort(array, dim, largest)
        return order[(slice(None),) * dim + (slice(0, k),)]
    # A partial partition is linear in the slice; only the k chosen entries are then sorted.
    # Which of several equal entries at the k-th place is chosen is unspecified, as in PyTorch.
    array = widen(array)
    if largest:
        chosen = np.argpartition(array, size - k, axis=dim)
        chosen = chosen[(slice(None),) * dim + (slice(size - k, None),)]
    else:
        chosen = np.argpartition(array, k - 1, axis=dim)
        chosen = chosen[(slice(None),) * dim + (slice(0, k),)]
    chosen = np.sort(chosen, axis=dim)
    order = _stable_argsort(np.take_along_axis(array, chosen, dim), dim, largest)
    return np.take_along_axis(chosen, order, dim)


def _selection_backward(ctx, grad_values: Tensor) -> Tensor:
    """The gradient of values taken at `indices` along `dim`: each goes back to its place."""
    (indices,) = ctx.saved_tensors
    if not ctx.shape:
        return grad_values
    zeros = _wrap(np.zeros(ctx.shape, grad_values._data.dtype))
    return Scatter.apply(zeros, ctx.dim, indices, grad_values)


def _selection_forward(ctx: Any, x: Tensor, dim: int, choose: Any) -> tuple:
    """(values, int64 indices) of the entries `choose(array)` picks along `dim`, keeping what
    `_selection_backward` needs. A 0-d input is its own pick (PyTorch returns it even for a
    top-0)."""
    array = x._data
    if array.ndim:
        indices = choose(array)
        values = np.take_along_axis(array, indices, dim)
    else:
        indices = np.zeros((), np.int64)
        values = array.copy()
    indices = _wrap(indices.astype(np.int64, copy=False))
    if ctx.needs_input_grad[0]:
        ctx.shape = array.shape
        ctx.dim = dim
        ctx.save_for_backward(indices)
    return _wrap(values), indices


class Sort(Function):
    _backward_name = "SortBackward0"
    _complex_refusal = (RuntimeError, " Sort does not support complex dtypes on CPU")

    @staticmethod
    def forward(ctx, x, dim, descending):
        return _selection_forward(ctx, x, dim, lambda a: _stable_argsort(a, dim, descending))

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _selection_backward(ctx, grad_values), None, None


class Topk(Function):
    _backward_name = "TopkBackward0"
    _complex_refusal = (RuntimeError, " topk does not support complex dtypes on CPU")

    @staticmethod
    def forward(ctx, x, k, dim, largest):
        return _selection_forward(ctx, x, dim, lambda a: _topk_indices(a, k, dim, largest))

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _selection_backward(ctx, grad_values), None, None, None


_SORT_OVERLOADS = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors "
    "out = None)",
    "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
)
_ARGSORT_OVERLOADS = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
    "(Tensor input, int dim = -1, bool descending = False)",
)


def _sort_arguments(name: str, overloads: tuple[str, ...], input: Any, dim: Any,
                    descending: Any, stable: Any, stable_may_be_none: bool) -> int:  # fmt: skip
    """The normalized dim, after PyTorch's checks of sort's and argsort's arguments."""
    check_tensors(input)
    stable_is_valid = isinstance(stable, bool) or (stable is None and stable_may_be_none)
    if (
        not isinstance(dim, int)
        or isinstance(dim, bool)
        or not isinstance(descending, bool)
        or not stable_is_valid
    ):
        raise invalid_combination(name, (input, dim, descending), overloads)
    return _normalize_dim(dim, input._data.ndim)


def sort(input: Tensor, dim: int = -1, descending: bool = False, *,
         stable: bool | None = False) -> SortResult:  # fmt: skip
    """(values, indices) of `input` sorted along `dim`; NaN sorts as the largest value.

    Equal values keep their original order whether or not `stable` is set (PyTorch's CPU sort
    is stable too).
    """
    dim = _sort_arguments("sort", _SORT_OVERLOADS, input, dim, descending, stable, True)
    return SortResult(*Sort.apply(input, dim, descending))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:  # fmt: skip
    """Indices that sort `input` along `dim` (the indices of `sort`)."""
    dim = _sort_arguments("argsort", _ARGSORT_OVERLOADS, input, dim, descending, stable, False)
    array = input._data
    if array.dtype.kind == "c":
        # NumPy orders complex values; PyTorch's sort refuses them
        raise RuntimeError(Sort._complex_refusal[1])
    if not array.ndim:
        return _wrap(np.zeros((), np.int64))
    return _wrap(_stable_argsort(array, dim, descending).astype(np.int64, copy=False))


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> TopkResult:  # fmt: skip
    """The `k` largest (or smallest) entries along `dim` and their indices; NaN counts as the
    largest value. The result is always in sorted order (PyTorch leaves the order unspecified
    when `sorted` is False)."""
    check_tensors(input)
    if not isinstance(k, int) or isinstance(k, bool):
        raise_type_error(k, "int")
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise_type_error(dim, "int")
    if not isinstance(largest, bool):
        raise_type_error(largest, "bool")
    if not isinstance(sorted, bool):
        raise_type_error(sorted, "bool")
    array = input._data
    dim = _normalize_dim(dim, array.ndim)
    if array.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if k < 0 or k > (array.shape[dim] if array.ndim else 1):
        raise RuntimeError("selected index k out of range")
    return TopkResult(*Topk.apply(input, k, dim, largest))


_INT64 = np.dtype(np.int64)


KthvalueResult = result_type("KthvalueResult", "kthvalue", "values", "indices")
MedianResult = result_type("MedianResult", "median", "values", "indices")
NanmedianResult = result_type("NanmedianResult", "nanmedian", "values", "indices")
ModeResult = result_type("ModeResult", "mode", "values", "indices")


# -------------------------------------------------------------------------- argument checks
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
    _complex_refusal = (NotImplementedError, "\"kthvalue_cpu\" not implemented for '{dtype}'")

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
    check_bool(keepdim, "kthvalue", "keepdim", 4)
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
    _complex_refusal = (NotImplementedError, "\"median_cpu\" not implemented for '{dtype}'")

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
    _complex_refusal = (NotImplementedError, "\"median_cpu\" not implemented for '{dtype}'")

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
    _complex_refusal = (NotImplementedError, "\"median_out\" not implemented for '{dtype}'")

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
    _complex_refusal = (NotImplementedError, "\"median_out\" not implemented for '{dtype}'")

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
    check_bool(keepdim, "median", "keepdim", 3)
    return _median("median", MedianAll, MedianDim, MedianResult, input, dim, keepdim)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """`median` ignoring NaN (NaN only where a slice is all NaN)."""
    check_bool(keepdim, "nanmedian", "keepdim", 3)
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
    _complex_refusal = (NotImplementedError, "\"mode_cpu\" not implemented for '{dtype}'")

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
    check_bool(keepdim, "mode", "keepdim", 3)
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
    _data_dependent_shape = True
    _backward_name = "Unique2Backward0"
    backward = _no_derivative("_unique2")

    @staticmethod
    def forward(ctx, x, values):
        return _wrap(values)


class UniqueDim(Function):
    _data_dependent_shape = True
    _backward_name = "UniqueDimBackward0"
    backward = _no_derivative("unique_dim")

    @staticmethod
    def forward(ctx, x, values):
        return _wrap(values)


class UniqueConsecutive(Function):
    _data_dependent_shape = True
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
    # PyTorch's Python wrapper hands the flags on by keyword: its message names no position
    op = "_unique2" if dim is None else "unique_dim"
    for name, flag in (("sorted", sorted), ("return_inverse", return_inverse),
                       ("return_counts", return_counts)):  # fmt: skip
        check_bool(flag, op, name, None)
    array = _array(input)
    if array.dtype.kind == "c":
        raise not_implemented("unique" if dim is None else "unique_dim", array.dtype)
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
    check_bool(return_inverse, "unique_consecutive", "return_inverse", None)
    check_bool(return_counts, "unique_consecutive", "return_counts", None)
    array = _array(input)
    if array.dtype.kind == "c":
        # PyTorch takes a 1-D input's dim 0 as no dim (but not its dim -1)
        is_flat = dim is None or (dim == 0 and array.ndim == 1)
        raise not_implemented("unique" if is_flat else "unique_dim", array.dtype)
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
        if array.dtype == np.bool_ or array.dtype.kind == "c":
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
    if not isinstance(value, bool | int | float | complex):
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


@autocast_op
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:  # fmt: skip
    """The `q`-th quantiles over `dim` (of all entries when None), interpolating between the
    two nearest entries as `interpolation` says. A slice holding NaN has quantile NaN."""
    check_bool(keepdim, "quantile", "keepdim", 4)
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@autocast_op
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:  # fmt: skip
    """`quantile` ignoring NaN (NaN only where a slice is all NaN)."""
    check_bool(keepdim, "nanquantile", "keepdim", 4)
    # PyTorch's messages name quantile for both
    return _quantile("quantile", input, q, dim, keepdim, interpolation, True)
