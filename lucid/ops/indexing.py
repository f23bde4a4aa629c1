"""Indexing ops: tensor[index] and tensor[index] = value, gather, scatter, scatter_add,
scatter_reduce, index_select, index_add/copy/fill/reduce, index_put, put, masked_fill,
masked_scatter, masked_select, select, select/slice_scatter, take, take_along_dim, nonzero,
argwhere, unravel_index."""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import factories
from lucid._core import dtypes
from lucid._core.arguments import (
    argument_error,
    call_position,
    called_as_method,
    invalid_combination,
    raise_argument_error,
    type_word,
)
from lucid._core.dtypes import C_TYPE_NAMES, FLOAT_KINDS, INEXACT_KINDS, SCALAR_TYPE_NAMES
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import _TYPE_NAMES, TensorBase, _normalize_dim, _wrap
from lucid.ops import reduction
from lucid.ops._common import (
    apply_inplace,
    autocast_op,
    check_int,
    check_tensors,
    not_implemented,
)
from lucid.ops._promote import low_precision_of, round_to, scalar_value, widen
from lucid.ops.arithmetic import div, mul
from lucid.ops.broadcast import broadcast_error, sum_to
from lucid.ops.fills import fill_scalar, to
from lucid.ops.pointwise import where
from lucid.ops.shape import REQUIRED, View, expand, expand_shape, missing_arguments, view

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "gather", "scatter", "scatter_add", "index_select", "masked_fill", "masked_select", "take",
    "nonzero", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_reduce",
    "index_put", "index_put_", "put", "masked_scatter", "select_scatter", "slice_scatter",
    "take_along_dim", "select", "argwhere", "unravel_index",
]  # fmt: skip

_INDEX_ARRAY_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))


_WHOLE = slice(None)

_ZERO_DIM_INDEX_MESSAGE = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
    "C++ to convert a 0-dim tensor to a number"
)


# ------------------------------------------------------------------ getitem
class Index(Function):
    """`x[index]` for a prepared NumPy index; the subclasses only rename the node after the
    last view op PyTorch would apply (select, slice, unsqueeze, alias)."""

    _backward_name = "IndexBackward0"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # PyTorch saves the indices

    @staticmethod
    def forward(ctx, x, index, accumulate):
        ctx.input_shape = x._data.shape
        ctx.index = index
        ctx.accumulate = accumulate
        try:
            return _wrap(x._data[index])
        except IndexError as error:
            raise _translate_index_error(error, x._data.shape, index) from None

    @staticmethod
    def backward(ctx, grad_output):
        # d x[index] / dx puts the gradient back where it came from, adding up repeats
        grad = IndexGrad.apply(grad_output, ctx.input_shape, ctx.index, ctx.accumulate)
        return grad, None, None


# Views: PyTorch keeps only sizes for their backward, so a second backward goes through.
class Select(Index):
    _backward_name = "SelectBackward0"
    _keeps_values_for_backward = False


class Slice(Index):
    _backward_name = "SliceBackward0"
    _keeps_values_for_backward = False


class UnsqueezeIndex(Index):
    _backward_name = "UnsqueezeBackward0"
    _keeps_values_for_backward = False


class Alias(Index):
    _backward_name = "AliasBackward0"
    _keeps_values_for_backward = False


class IndexGrad(Function):
    """The gradient of `x[index]`: `grad` placed into zeros of x's shape.

    With `accumulate`, entries that an integer index reads several times receive the sum of
    their gradients (NumPy's `add.at`); basic and mask indices read each entry at most once.
    """

    _backward_name = "IndexPutBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, grad, shape, index, accumulate):
        ctx.index = index
        ctx.accumulate = accumulate
        result = np.zeros(shape, grad._data.dtype)
        if accumulate:
            np.add.at(result, index, grad._data)
        else:
            result[index] = grad._data
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        return Index.apply(grad_output, ctx.index, ctx.accumulate), None, None, None


def _check_step(step: Any) -> None:
    if step is not None:
        step = operator.index(step)
        if step <= 0:
            if step == 0:
                raise ValueError("slice step cannot be zero")
            raise ValueError("step must be greater than zero")


def _sequence_as_tuple(index: list) -> bool:
    """PyTorch reads a short list holding tensors, sequences, slices, ... as a tuple index."""
    if len(index) >= 32:
        return False
    for item in index:
        if item is None or item is Ellipsis or isinstance(item, TensorBase | list | tuple | slice):
            return True
        if isinstance(item, np.ndarray):
            return True
    return False


def _advanced_array(item: Any) -> Any:
    """An advanced index item as an int or bool array; 0-d integer tensors become ints."""
    if isinstance(item, TensorBase):
        array = item._data
    elif isinstance(item, np.ndarray):
        array = item
    elif isinstance(item, list | tuple):
        array = np.asarray([v._data if isinstance(v, TensorBase) else v for v in item])
        if array.size == 0:
            array = array.astype(np.int64)
    elif isinstance(item, np.integer):
        return int(item)
    else:
        try:
            return operator.index(item)
        except TypeError:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(item).__name__})"
            ) from None
    dtype = array.dtype
    if dtype == np.bool_:
        return array
    if dtype == np.uint8:
        return array.astype(np.bool_)
    if dtype not in _INDEX_ARRAY_DTYPES:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if array.ndim == 0:
        return int(array)
    return array


def _prepare_index(shape: tuple[int, ...], index: Any) -> tuple[Any, type[Index], bool, bool]:
    """The NumPy index for `x[index]`, the node class PyTorch's grad_fn name calls for,
    whether the backward must add up repeated entries, and whether PyTorch reaches the entries
    through a view (some int, None or slice that does not keep a whole dimension)."""
    kind = index.__class__
    if kind is int:
        if not shape:
            raise IndexError(_ZERO_DIM_INDEX_MESSAGE)
        return (index, Ellipsis), Select, False, True
    if kind is slice:
        if not shape:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        _check_step(index.step)
        return (index, Ellipsis), Slice, False, True
    if index is None:
        return (None, Ellipsis), UnsqueezeIndex, False, True
    if index is Ellipsis:
        return (Ellipsis,), Alias, False, False
    if kind is tuple:
        if len(index) <= len(shape):
            # Fast path for the common tuple of ints and step-less slices.
            op = Alias
            for dim, item in enumerate(index):
                kind = item.__class__
                if kind is int:
                    op = Select
                elif kind is slice and item.step is None:
                    size = shape[dim]
                    if item != _WHOLE and item.indices(size) != (0, size, 1):
                        op = Slice
                else:
                    break
            else:
                return index + (Ellipsis,), op, False, op is not Alias
        items = index
    elif kind is list and _sequence_as_tuple(index):
        items = tuple(index)
    else:
        items = (index,)

    converted = []
    consumed = 0
    is_advanced = False
    accumulate = False
    has_mask = False
    has_ellipsis = False
    for item in items:
        kind = item.__class__
        if kind is int:
            consumed += 1
        elif kind is slice:
            _check_step(item.step)
            consumed += 1
        elif item is None:
            pass
        elif item is Ellipsis:
            if has_ellipsis:
                continue  # PyTorch lets every further ellipsis stand for no dimension
            has_ellipsis = True
        elif kind is bool or kind is np.bool_:
            is_advanced = True
        else:
            item = _advanced_array(item)
            if item.__class__ is int:
                consumed += 1
            elif item.dtype == np.bool_:
                is_advanced = True
                has_mask = True
                consumed += item.ndim
            else:
                is_advanced = True
                accumulate = True
                consumed += 1
        converted.append(item)

    ndim = len(shape)
    if consumed > ndim:
        if not ndim:
            raise IndexError(_ZERO_DIM_INDEX_MESSAGE)
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if has_mask:
        _check_masks(shape, converted, consumed)

    # Name the node after PyTorch's last view op; it skips slices that keep a whole dimension.
    op = Alias
    dim = 0
    for item in converted:
        kind = item.__class__
        if item is None:
            op = UnsqueezeIndex
        elif item is Ellipsis:
            dim += ndim - consumed
        elif kind is int:
            op = Select
            dim += 1
        elif kind is slice:
            size = shape[dim]
            if item.indices(size) != (0, size, 1):
                op = Slice
            dim += 1
        elif kind is np.ndarray:
            dim += item.ndim if item.dtype == np.bool_ else 1
    if is_advanced:
        return tuple(converted), Index, accumulate, op is not Alias
    if not has_ellipsis:
        # A trailing ellipsis makes NumPy return a 0-d view rather than a scalar copy.
        converted.append(Ellipsis)
    return tuple(converted), op, False, op is not Alias


def _check_masks(shape: tuple[int, ...], items: list, consumed: int) -> None:
    """Masks must match the dimensions they index, reported as PyTorch does."""
    current = list(shape)  # the shape after the view ops before each item
    dim = 0  # position in `current`
    for item in items:
        if item is None:
            current.insert(dim, 1)
            dim += 1
        elif item is Ellipsis:
            dim += len(shape) - consumed
        elif item.__class__ is int:
            del current[dim]
        elif item.__class__ is slice:
            current[dim] = len(range(*item.indices(current[dim])))
            dim += 1
        elif isinstance(item, np.ndarray):
            if item.dtype != np.bool_:
                dim += 1
                continue
            for offset, size in enumerate(item.shape):
                if size != current[dim + offset]:
                    raise IndexError(
                        f"The shape of the mask {list(item.shape)} at index {offset} does not "
                        f"match the shape of the indexed tensor {current} at index {dim + offset}"
                    )
            dim += item.ndim


def _translate_index_error(error: IndexError, shape: tuple[int, ...], index: tuple) -> IndexError:
    """NumPy's indexing error in PyTorch's words (PyTorch numbers dimensions differently)."""
    message = str(error)
    arrays = [item for item in index if isinstance(item, np.ndarray)]
    if message.startswith("shape mismatch"):
        shapes = ", ".join(str(list(item.shape)) for item in arrays if item.dtype != np.bool_)
        return IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        )
    ndim = len(shape)
    consumed = 0
    for item in index:
        if item.__class__ is int or item.__class__ is slice:
            consumed += 1
        elif isinstance(item, np.ndarray):
            consumed += item.ndim if item.dtype == np.bool_ else 1
    # Integers are applied first and named by their position in the index ...
    dim = 0
    sizes = []
    for position, item in enumerate(index):
        if item is Ellipsis:
            dim += ndim - consumed
        elif item.__class__ is int or item.__class__ is slice:
            size = shape[dim]
            if item.__class__ is int and not -size <= item < size:
                return IndexError(
                    f"index {item} is out of bounds for dimension {position} with size {size}"
                )
            dim += 1
        elif isinstance(item, np.ndarray):
            width = item.ndim if item.dtype == np.bool_ else 1
            sizes.append(shape[dim : dim + width])
            dim += width
    # ... then integer tensors, named by their rank among the tensor indices.
    rank = 0
    for item, size in zip(arrays, sizes):
        if item.dtype == np.bool_:
            rank += item.ndim
            continue
        size = size[0]
        bad = item[(item < -size) | (item >= size)]
        if bad.size:
            return IndexError(
                f"index {bad.flat[0]} is out of bounds for dimension {rank} with size {size}"
            )
        rank += 1
    return IndexError(message.replace(" axis ", " dimension "))


def getitem(input: Tensor, index: Any) -> Tensor:
    """`input[index]`: ints, slices, None, Ellipsis, bool masks and integer tensors or lists.

    Basic indices give views; integer indices that repeat an entry add up its gradients.
    """
    numpy_index, op, accumulate, _ = _prepare_index(input._data.shape, index)
    return op.apply(input, numpy_index, accumulate)


# ------------------------------------------------------------------ setitem
class ZeroAt(Function):
    """`grad` with the entries at `index` set to zero (its own adjoint)."""

    _backward_name = "IndexPutBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, grad, index):
        ctx.index = index
        result = grad._data.copy()
        result[index] = 0
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        return ZeroAt.apply(grad_output, ctx.index), None


class CopySlices(Function):
    """`x[index] = value` in place, where PyTorch writes through a view of x."""

    _backward_name = "lucid::autograd::CopySlices"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # as PyTorch's CopySlices and index_put_

    @staticmethod
    def forward(ctx, x, index, value, accumulate):
        ctx.mark_dirty(x)
        ctx.index = index
        ctx.accumulate = accumulate
        ctx.value_shape = value._data.shape if isinstance(value, TensorBase) else None
        x._data[index] = value._data if isinstance(value, TensorBase) else value
        return x

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_value = None
        if ctx.needs_input_grad[0]:
            # overwritten entries no longer depend on the old x
            grad_x = ZeroAt.apply(grad_output, ctx.index)
        if ctx.needs_input_grad[2]:
            grad_value = Index.apply(grad_output, ctx.index, ctx.accumulate)
            grad_value = _sum_to_value(grad_value, ctx.value_shape)
        return grad_x, None, grad_value, None


class IndexPut(CopySlices):
    """`x[index] = value` for advanced (mask or integer) indices applied to x itself."""

    _backward_name = "IndexPutBackward0"


class SetitemFillInplace(CopySlices):
    """`x[...] = number` (or a 0-d tensor): PyTorch fills the whole tensor."""

    _op_name = "fill_"
    _backward_name = "FillBackward3"
    _keeps_values_for_backward = False


class SetitemCopyInplace(CopySlices):
    """`x[...] = tensor`: PyTorch copies into the whole tensor."""

    _op_name = "copy_"
    _backward_name = "lucid::autograd::CopyBackwards"
    _keeps_values_for_backward = False


def _sum_to_value(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Undo the broadcast of a value into its slots; the value may carry extra leading ones."""
    extra = len(shape) - grad._data.ndim
    if extra > 0:
        grad = View.apply(grad, (1,) * extra + grad._data.shape)
    return sum_to(grad, shape)


def _value_shape_error(input: Tensor, index: Any, value: Tensor, is_advanced: bool) -> None:
    """Raise PyTorch's error for a value that does not broadcast to the indexed slots."""
    # PyTorch drops a value's leading ones before it matches the value to the slots.
    value_shape = value._data.shape
    while value_shape and value_shape[0] == 1:
        value_shape = value_shape[1:]
    target = input._data[index].shape
    if is_advanced:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to "
            f"indexing result of shape {list(target)}"
        )
    expand_shape(value_shape, target, value._data.dtype)


def setitem_(input: Tensor, index: Any, value: Any) -> Tensor:
    """`input[index] = value` in place; `value` is a number or a tensor broadcast to the slots."""
    if index.__class__ is slice:
        # Unlike reading, writing through a lone slice skips it when it keeps the whole dim.
        index = (index,)
    numpy_index, op, accumulate, has_view = _prepare_index(input._data.shape, index)
    is_advanced = op is Index
    if has_view and input._requires_grad and input._grad_fn is None and is_grad_enabled():
        # PyTorch writes through a view of the leaf here, hence its wording.
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    is_tensor = isinstance(value, TensorBase)
    if not is_tensor:
        if not isinstance(value, bool | int | float | np.generic):
            raise TypeError(
                f"can't assign a {type(value).__name__} to a "
                f"{_TYPE_NAMES.get(input._data.dtype, 'Tensor')}"
            )
        value = scalar_value(value)
    # Name the node as PyTorch does: which op it ends up calling depends on index and value.
    if has_view:
        function = CopySlices
    elif is_advanced:
        function = IndexPut
    elif is_tensor and value._data.ndim:
        function = SetitemCopyInplace
    else:
        function = SetitemFillInplace
    try:
        return function.apply(input, numpy_index, value, accumulate)
    except ValueError:
        if is_tensor:
            _value_shape_error(input, numpy_index, value, is_advanced)
        raise
    except IndexError as error:
        raise _translate_index_error(error, input._data.shape, numpy_index) from None


# ---------------------------------------------------------- gather/scatter
def _at_least_1d(array: np.ndarray) -> np.ndarray:
    # gather/scatter treat a 0-d tensor as a 1-d tensor of one entry
    return array.reshape(1) if array.ndim == 0 else array


def _along_dim(index: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    """The NumPy index reading `x[..., index[p], ...]` (at `dim`) for every position p."""
    ndim = index.ndim
    grid = []
    for d, size in enumerate(index.shape):
        if d == dim:
            grid.append(index)
        else:
            grid.append(np.arange(size).reshape((size,) + (1,) * (ndim - d - 1)))
    return tuple(grid)


def _leading_block(index_shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The part of src that a scatter reads: the first index.size(d) entries of each dim."""
    return tuple(slice(0, size) for size in index_shape)


def _check_gather_index(name: str, index: Tensor) -> None:
    if index._data.dtype not in _INDEX_ARRAY_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_index_bounds(index: np.ndarray, dim: int, size: int) -> None:
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


class Gather(Function):
    _backward_name = "GatherBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.dim = dim
        ctx.input_shape = x._data.shape
        return _wrap(_gather_array(x._data, dim, index._data))

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        zeros = _wrap(np.zeros(ctx.input_shape, grad_output._data.dtype))
        # d gather / dx adds each output's gradient back at the entry it read
        return ScatterAdd.apply(zeros, ctx.dim, index, grad_output), None, None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the arrays of forward and of the ScatterAdd its backward runs (lucid/_dynamo/flat.py)
        x, dim, index = args
        if x.dtype.kind != "f":
            return None
        shape = x.shape

        def backward(grad, out, x, dim, index):
            zeros = np.zeros(shape, grad.dtype)
            return _scatter_add_array(zeros, dim, index, grad), None, None

        return _gather_array, backward, ScatterAdd


def _gather_array(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    return _at_least_1d(x)[_along_dim(_at_least_1d(index), dim)].reshape(index.shape)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """out[i][j] = input[index[i][j]][j] for dim 0 (and likewise for other dims)."""
    check_tensors(input, index)
    _check_gather_index("gather", index)
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    index_shape = index._data.shape
    if max(len(index_shape), 1) != max(len(shape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (size, limit) in enumerate(zip(index_shape, shape)):
        if d != dim and size > limit:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index_shape)} to be "
                f"no larger than self {list(shape)} apart from dimension {dim}"
            )
    _check_index_bounds(index._data, dim, shape[dim] if shape else 1)
    return Gather.apply(input, dim, index)


class Scatter(Function):
    _backward_name = "ScatterBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim = dim
        ctx.src_shape = src._data.shape
        index_array = _at_least_1d(index._data)
        result = _at_least_1d(x._data).copy()
        block = _at_least_1d(src._data)[_leading_block(index_array.shape)]
        result[_along_dim(index_array, dim)] = block
        return _wrap(result.reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad_x = grad_src = None
        if ctx.needs_input_grad[0]:
            # overwritten entries no longer depend on x
            grad_x = ScatterValue.apply(grad_output, ctx.dim, index, 0.0)
        if ctx.needs_input_grad[3]:
            grad_src = _gather_to_src(grad_output, ctx.dim, index, ctx.src_shape)
        return grad_x, None, None, grad_src


def _gather_to_src(grad: Tensor, dim: int, index: Tensor, src_shape: tuple) -> Tensor:
    """The gradient of a scatter's src: read back at the index, zero where src was unused."""
    grad_src = Gather.apply(grad, dim, index)
    if grad_src._data.shape != src_shape:
        block = _leading_block(_at_least_1d(index._data).shape) + (Ellipsis,)
        if not src_shape:
            return View.apply(grad_src, ())
        grad_src = IndexGrad.apply(grad_src, src_shape, block, False)
    return grad_src


class ScatterValue(Function):
    _backward_name = "ScatterBackward1"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index, value):
        ctx.save_for_backward(index)
        ctx.dim = dim
        result = _at_least_1d(x._data).copy()
        result[_along_dim(_at_least_1d(index._data), dim)] = value
        return _wrap(result.reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        return ScatterValue.apply(grad_output, ctx.dim, index, 0.0), None, None, None


class ScatterReduce(Function):
    """scatter with `reduce='add'|'multiply'`: PyTorch defines no derivative for it."""

    _backward_name = "lucid::autograd::NotImplemented"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce):
        index_array = _at_least_1d(index._data)
        result = _at_least_1d(x._data).copy()
        if isinstance(src, TensorBase):
            src = _at_least_1d(src._data)[_leading_block(index_array.shape)]
        ufunc = np.add if reduce == "add" else np.multiply
        ufunc.at(result, _along_dim(index_array, dim), src)
        return _wrap(result.reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::scatter is not implemented")


def _check_scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | None) -> int:
    _check_gather_index("scatter", index)
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    index_shape = index._data.shape
    index_ndim = max(len(index_shape), 1)
    if index_ndim != max(len(shape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None:
        src_shape = src._data.shape
        _normalize_dim(dim, len(src_shape))
        if index_ndim != max(len(src_shape), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        if src._data.dtype != input._data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    for d, size in enumerate(index_shape):
        too_large = d != dim and size > shape[d]
        if src is None:
            if too_large:
                raise RuntimeError(
                    f"Expected index {list(index_shape)} to be no larger than self {list(shape)} "
                    f"apart from dimension {dim}"
                )
        elif too_large or size > src._data.shape[d]:
            raise RuntimeError(
                f"Expected index {list(index_shape)} to be no larger than self {list(shape)} "
                f"apart from dimension {dim} and to be no larger size than src "
                f"{list(src._data.shape)}"
            )
    _check_index_bounds(index._data, dim, shape[dim] if shape else 1)
    return dim


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """A copy of `input` with `src` (a tensor, or a number `value`) written at `index` along
    `dim`: out[index[i][j]][j] = src[i][j] for dim 0."""
    function, arguments = _scatter_call(input, dim, index, src, value, reduce)
    return function.apply(input, *arguments)


def scatter_(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """In-place scatter."""
    function, arguments = _scatter_call(input, dim, index, src, value, reduce)
    return apply_inplace(function, input, *arguments)


def _scatter_call(input: Tensor, dim: int, index: Tensor, src: Any, value: Any,
                  reduce: str | None) -> tuple[type[Function], tuple]:  # fmt: skip
    """The op and its arguments after input that scatter's arguments call for."""
    check_tensors(input, index)
    if src is None:
        src = value
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    is_tensor = isinstance(src, TensorBase)
    dim = _check_scatter(input, dim, index, src if is_tensor else None)
    if not is_tensor:
        src = fill_scalar(scalar_value(src), input._data.dtype)
    if reduce is not None:
        return ScatterReduce, (dim, index, src, reduce)
    if is_tensor:
        return Scatter, (dim, index, src)
    return ScatterValue, (dim, index, src)


class ScatterAdd(Function):
    _backward_name = "ScatterAddBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.save_for_backward(index)
        ctx.dim = dim
        ctx.src_shape = src._data.shape
        return _wrap(_scatter_add_array(x._data, dim, index._data, src._data))

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad_src = None
        if ctx.needs_input_grad[3]:
            grad_src = _gather_to_src(grad_output, ctx.dim, index, ctx.src_shape)
        return grad_output, None, None, grad_src


def _scatter_add_array(x: np.ndarray, dim: int, index: np.ndarray,
                       src: np.ndarray) -> np.ndarray:  # fmt: skip
    index = _at_least_1d(index)
    result = _at_least_1d(x).copy()
    block = _at_least_1d(src)[_leading_block(index.shape)]
    positions = _flat_positions(index, dim, index.shape, result.shape)
    np.add.at(result.reshape(-1), positions.reshape(-1), block.reshape(-1))
    return result.reshape(x.shape)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of `input` with `src` added at `index` along `dim` (repeats add up)."""
    check_tensors(input, index, src)
    if not isinstance(src, TensorBase):
        raise argument_error("scatter_add", "src", 3, src)
    dim = _check_scatter(input, dim, index, src)
    return ScatterAdd.apply(input, dim, index, src)


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place scatter_add."""
    check_tensors(input, index, src)
    if not isinstance(src, TensorBase):
        raise argument_error("scatter_add_", "src", 3, src)
    dim = _check_scatter(input, dim, index, src)
    return apply_inplace(ScatterAdd, input, dim, index, src)


class IndexSelect(Function):
    _backward_name = "IndexSelectBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.save_for_backward(index)
        ctx.dim = dim
        ctx.input_shape = x._data.shape
        result = np.take(_at_least_1d(x._data), index._data.reshape(-1), axis=dim)
        if not x._data.ndim:
            result = result.reshape(())
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        positions = index._data.reshape(-1)
        shape = ctx.input_shape
        if not shape:
            grad = View.apply(grad_output, (positions.size,))
            return View.apply(IndexGrad.apply(grad, (1,), (positions,), True), ()), None, None
        numpy_index = (slice(None),) * ctx.dim + (positions,)
        return IndexGrad.apply(grad_output, shape, numpy_index, True), None, None


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries of `input` at positions `index` (a vector) along `dim`."""
    check_int(dim, "index_select", "dim", 2)
    if not isinstance(index, TensorBase):
        raise argument_error("index_select", "index", 3, index)
    array = index._data
    if array.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if array.dtype not in _INDEX_ARRAY_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    if not shape and array.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {array.size} value(s)"
        )
    size = shape[dim] if shape else 1
    if array.size and (array.min() < 0 or array.max() >= size):
        raise IndexError("index out of range in self")
    return IndexSelect.apply(input, dim, index)


# ------------------------------------------------------------------- masks
def _check_mask(mask: Tensor, name: str) -> None:
    dtype = mask._data.dtype
    if dtype != np.bool_:
        raise RuntimeError(
            f"{name} only supports boolean masks, but got mask with dtype "
            f"{C_TYPE_NAMES.get(dtype.name, dtype.name)}"
        )


def _check_fill_value(value: Any, input: Tensor) -> Any:
    if isinstance(value, TensorBase):
        if value._data.ndim:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        if value._data.dtype.kind == "c" and input._data.dtype.kind != "c":
            # PyTorch reads the value as a Python number for a real input
            fill_scalar(value._data.item(), input._data.dtype)
        return value
    return fill_scalar(scalar_value(value), input._data.dtype)


class MaskedFill(Function):
    _backward_name = "MaskedFillBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.save_for_backward(mask)
        ctx.input_shape = x._data.shape
        array = x._data
        fill = np.asarray(value._data if isinstance(value, TensorBase) else value)
        if fill.dtype.kind == "c" and array.dtype.kind != "c":
            fill = fill.real  # its imaginary part is zero (checked before)
        try:
            return _wrap(np.where(mask._data, fill.astype(array.dtype), array))
        except ValueError:
            raise broadcast_error(mask._data.shape, array.shape) from None

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        grad_x = grad_value = None
        # filled entries take the value, the others keep x
        if ctx.needs_input_grad[0]:
            grad_x = sum_to(MaskedFill.apply(grad_output, mask, 0.0), ctx.input_shape)
        if ctx.needs_input_grad[2]:
            kept = _wrap(np.logical_not(mask._data))
            grad_value = reduction.sum(MaskedFill.apply(grad_output, kept, 0.0))
        return grad_x, None, grad_value


class MaskedFillTensor(MaskedFill):
    _backward_name = "MaskedFillBackward1"


def _check_masked_fill_arguments(op: str, input: Any, mask: Any, value: Any) -> None:
    """PyTorch's overload error for a mask that is no tensor, or a value that is neither a
    tensor nor a number; its parser marks every argument from the first that fails."""
    value_ok = isinstance(value, TensorBase | bool | int | float | complex | np.generic)
    if isinstance(mask, TensorBase) and value_ok:
        return
    method = called_as_method(op)
    args = (mask, value) if method else (input, mask, value)
    names = ("mask", "value") if method else ("input", "mask", "value")
    overloads = []
    for value_type in ("Tensor", "Number"):
        marks, failed = [], False
        for name, arg in zip(names, args):
            fits = isinstance(arg, TensorBase) if name != "value" else (
                isinstance(arg, TensorBase) if value_type == "Tensor" else value_ok
            )  # fmt: skip
            failed = failed or not fits
            marks.append(f"!{type_word(arg)}!" if failed else type_word(arg))
        signature = ", ".join(
            f"Tensor {name}" if name != "value" else f"{value_type} value" for name in names
        )
        overloads.append(
            f"({signature})\n      didn't match because some of the arguments have invalid "
            f"types: ({', '.join(marks)})"
        )
    raise invalid_combination(op, args, overloads)


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of `input` with `value` (a number or 0-d tensor) where `mask` is True."""
    _check_masked_fill_arguments("masked_fill", input, mask, value)
    _check_mask(mask, "masked_fill_")
    value = _check_fill_value(value, input)
    if isinstance(value, TensorBase):
        return MaskedFillTensor.apply(input, mask, value)
    return MaskedFill.apply(input, mask, value)


def masked_fill_(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place masked_fill; `mask` must broadcast to `input`'s shape."""
    _check_masked_fill_arguments("masked_fill_", input, mask, value)
    _check_mask(mask, "masked_fill_")
    value = _check_fill_value(value, input)
    shape = input._data.shape
    mask_shape = mask._data.shape
    if mask_shape != shape:
        try:
            merged = np.broadcast_shapes(shape, mask_shape)
        except ValueError:
            raise broadcast_error(mask_shape, shape) from None
        if merged != shape:
            raise RuntimeError(
                f"output with shape {list(shape)} doesn't match the broadcast shape {list(merged)}"
            )
    if isinstance(value, TensorBase):
        return apply_inplace(MaskedFillTensor, input, mask, value)
    return apply_inplace(MaskedFill, input, mask, value)


class MaskedSelect(Function):
    _data_dependent_shape = True
    _backward_name = "MaskedSelectBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, mask, shape):
        ctx.save_for_backward(mask)
        ctx.input_shape = x._data.shape
        ctx.shape = shape
        mask_array = np.broadcast_to(mask._data, shape)
        return _wrap(np.broadcast_to(x._data, shape)[mask_array])

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        mask_array = np.broadcast_to(mask._data, ctx.shape)
        grad = IndexGrad.apply(grad_output, ctx.shape, (mask_array,), False)
        return sum_to(grad, ctx.input_shape), None, None


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The entries of `input` where `mask` is True, as a 1-d tensor (the two broadcast)."""
    check_tensors(input, mask)
    try:
        if mask._data.dtype != np.bool_:
            raise RuntimeError("masked_select: expected BoolTensor for mask")
    except AttributeError as error:
        raise_argument_error(error)
        raise
    shape = input._data.shape
    mask_shape = mask._data.shape
    if mask_shape != shape:
        try:
            shape = np.broadcast_shapes(shape, mask_shape)
        except ValueError:
            raise broadcast_error(mask_shape, shape) from None
    return MaskedSelect.apply(input, mask, shape)


class Take(Function):
    _backward_name = "TakeBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.input_shape = x._data.shape
        return _wrap(x._data.reshape(-1)[index._data])

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        shape = ctx.input_shape
        numel = 1
        for size in shape:
            numel *= size
        grad = IndexGrad.apply(grad_output, (numel,), (index._data,), True)
        return View.apply(grad, shape), None


def take(input: Tensor, index: Tensor) -> Tensor:
    """Entries of the flattened `input` at `index` (negative positions count from the end)."""
    check_tensors(input, index)
    try:
        array = index._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype != np.int64:
        raise RuntimeError(
            "take(): Expected a long tensor for index, but got "
            f"{SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)}"
        )
    numel = input._data.size
    if array.size and (array.min() < -numel or array.max() >= numel):
        bad = array[(array < -numel) | (array >= numel)].flat[0]
        raise IndexError(
            f"out of range: tried to access index {bad} on a tensor of {numel} elements."
        )
    return Take.apply(input, index)


def nonzero(input: Tensor, *, out: Any = None, as_tuple: bool = False) -> Any:
    """Positions of the non-zero entries: an (n, ndim) int64 tensor, or one vector per dim."""
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if as_tuple:
        positions = np.nonzero(_at_least_1d(array))
        return tuple(_wrap(p.astype(np.int64, copy=False)) for p in positions)
    return _wrap(np.argwhere(array).astype(np.int64, copy=False))


# ------------------------------------------------ index_add / index_copy / index_fill / reduce
# Values reduce into their positions with one unbuffered `ufunc.at` on flat positions of the
# result: measured on 1e6 random positions it beats sort + reduceat by 50x, and bincount on
# float32 by 3x (index_add of wide slices has a faster way, `_add_along`).
_REDUCE_UFUNCS = {
    "sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum,
}  # fmt: skip

# PyTorch's forward also takes these names, and its backward then refuses them.
_REDUCE_ALIASES = {"max": "amax", "min": "amin"}

_SCATTER_REDUCE_MESSAGE = "reduce argument must be either sum, prod, mean, amax or amin, got {}"
_INDEX_REDUCE_MESSAGE = (
    "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}."
)


def _flat_positions(index: np.ndarray, dim: int, shape: tuple[int, ...],
                    target_shape: tuple[int, ...]) -> np.ndarray:  # fmt: skip
    """Flat positions in a C-ordered array of `target_shape` for a grid of `shape`: entry p
    goes to `index[p]` along `dim` and keeps its own coordinates along the other dims
    (`index` broadcasts to `shape`)."""
    if len(shape) <= 1:
        return np.broadcast_to(index, shape).astype(np.int64, copy=False)
    ndim = len(shape)
    strides = np.cumprod((1,) + tuple(target_shape[:0:-1]))[::-1]
    flat = index.astype(np.int64) * strides[dim]
    for d, size in enumerate(shape):
        if d != dim:
            flat = flat + (np.arange(size) * strides[d]).reshape((size,) + (1,) * (ndim - d - 1))
    return np.broadcast_to(flat, shape)


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a reduced entry starts from when its own value is left out."""
    if reduce == "prod":
        return 1
    if reduce in ("sum", "mean"):
        return 0
    if dtype == np.bool_:
        return reduce == "amin"
    if dtype.kind in FLOAT_KINDS:
        return -np.inf if reduce == "amax" else np.inf
    limits = np.iinfo(dtype)
    return limits.min if reduce == "amax" else limits.max


def _reduce_into(result: np.ndarray, positions: np.ndarray, values: np.ndarray, reduce: str,
                 include_self: bool) -> np.ndarray | None:  # fmt: skip
    """Reduce `values` into the flat array `result` at `positions` (repeats reduce together);
    for a mean, return how many values each entry averaged."""
    positions = positions.reshape(-1)
    values = values.reshape(-1)
    if not include_self:
        result[positions] = _identity(reduce, result.dtype)
    _REDUCE_UFUNCS[reduce].at(result, positions, values)
    if reduce != "mean":
        return None
    counts = np.bincount(positions, minlength=result.size)
    if include_self:
        counts += 1
    else:
        np.maximum(counts, 1, out=counts)
    if result.dtype.kind in INEXACT_KINDS:
        np.divide(result, counts, out=result, casting="unsafe")
    else:
        # PyTorch rounds an integer mean down
        np.floor_divide(result, counts, out=result, casting="unsafe")
    return counts


class ScatterReduction(Function):
    """scatter_reduce: `src` reduced into `x` at `index` along `dim` (sum, prod, mean, amax,
    amin), with or without x's own entries. `src` arrives cut to index's shape."""

    _backward_name = "ScatterReduceBackward0"
    # PyTorch refuses complex outputs that require grad out of place (the wrappers check),
    # but in place it runs these real formulas on complex values unconjugated.
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        ctx.reduce_name = reduce
        reduce = _REDUCE_ALIASES.get(reduce, reduce)
        shape = x._data.shape
        result = _at_least_1d(x._data).copy()
        positions = _flat_positions(
            _at_least_1d(index._data), dim, _at_least_1d(index._data).shape, result.shape
        )
        counts = _reduce_into(result.reshape(-1), positions, src._data, reduce, include_self)
        output = _wrap(result.reshape(shape))
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        ctx.positions = positions
        ctx.counts = None if counts is None else counts.reshape(shape)
        if reduce in ("amax", "amin", "prod"):
            ctx.save_for_backward(x, index, src, output)
        else:
            ctx.save_for_backward(index)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
        if ctx.reduce_name != reduce:
            raise RuntimeError(
                "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
                f"{ctx.reduce_name}."
            )
        dtype = grad_output._data.dtype
        grad_x = grad_src = None
        if reduce in ("sum", "mean"):
            (index,) = ctx.saved_tensors
            grad = grad_output
            if reduce == "mean":
                grad = div(grad_output, _wrap(ctx.counts.astype(dtype)))
            grad_x = grad
            grad_src = _gather_along(grad, dim, index)
        elif reduce in ("amax", "amin"):
            x, index, src, output = ctx.saved_tensors
            # Ties share the gradient evenly. As in PyTorch, an entry of x equal to the result
            # takes a share even when x's entries are left out, and its share is then dropped.
            reached = output._data.reshape(-1)[ctx.positions]
            x_is_result = x._data == output._data
            src_is_result = src._data == reached.reshape(src._data.shape)
            ties = x_is_result.astype(dtype)
            np.add.at(ties.reshape(-1), ctx.positions.reshape(-1), src_is_result.reshape(-1))
            grad = div(grad_output, _wrap(ties))
            grad_x = mul(grad, _wrap(x_is_result.astype(dtype)))
            grad_src = mul(_gather_along(grad, dim, index), _wrap(src_is_result.astype(dtype)))
        else:
            x, index, src, output = ctx.saved_tensors
            # d prod / d v = the product of the other values; zeros take care: where x has
            # a zero, the product of the rest is the product with that zero read as one, and
            # a lone zero in src gets the product of everything else.
            if ctx.needs_input_grad[0]:
                x_zero = _wrap(x._data == 0)
                ones_for_zeros = MaskedFill.apply(x, x_zero, 1.0)
                rest = ScatterReduction.apply(ones_for_zeros, dim, index, src, "prod", True)
                grad_x = div(mul(grad_output, rest), ones_for_zeros)
            if ctx.needs_input_grad[3]:
                src_zero = src._data == 0
                zero_counts = np.zeros(output._data.size, np.int64)
                np.add.at(zero_counts, ctx.positions.reshape(-1), src_zero.reshape(-1))
                lone = src_zero & (zero_counts[ctx.positions] == 1).reshape(src_zero.shape)
                lone_as_one = MaskedFill.apply(src, _wrap(lone), 1.0)
                others = ScatterReduction.apply(x, dim, index, lone_as_one, "prod", include_self)
                grad_lone = _gather_along(mul(grad_output, others), dim, index)
                grad_rest = div(
                    _gather_along(mul(grad_output, output), dim, index),
                    MaskedFill.apply(src, _wrap(src_zero), 1.0),
                )
                grad_src = where(_wrap(lone), grad_lone, grad_rest)
                if is_grad_enabled() and (zero_counts > 1).any():
                    # where two zeros meet, the formula's own derivative is wrong
                    grad_src = DoubleBackwardError.apply(grad_src)
        if not ctx.needs_input_grad[0]:
            grad_x = None
        elif not include_self:
            # x's entries at the index were left out of the result
            grad_x = ScatterValue.apply(grad_x, dim, index, 0.0)
        if not ctx.needs_input_grad[3]:
            grad_src = None
        return grad_x, None, None, grad_src, None, None


class DoubleBackwardError(Function):
    """Passes prod's src gradient through and refuses to differentiate it, as PyTorch does
    when several zeros of src meet at one position."""

    _backward_name = "lucid::autograd::Error"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, grad):
        return _wrap(grad._data.copy())

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError(
            "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
            "scattered to the same position in self"
        )


def _gather_along(grad: Tensor, dim: int, index: Tensor) -> Tensor:
    """grad read at `index` along `dim` (a 0-d grad as a vector of one entry)."""
    if not grad._data.ndim:
        grad = View.apply(grad, (1,))
    return Gather.apply(grad, dim, index)


class IndexReduce(ScatterReduction):
    """index_reduce: scatter_reduce with the index vector spread over source's shape."""

    _backward_name = "IndexReduceBackward0"


def _check_reduce_src(input: Tensor, src: Tensor, name: str) -> None:
    if not isinstance(src, TensorBase):
        raise argument_error(name, "src", 4, src)


def _leading_block_of(src: Tensor, index_shape: tuple[int, ...]) -> Tensor:
    """The part of src a scatter reads, as a differentiable slice when src is larger."""
    if src._data.shape == index_shape or not index_shape:
        return src
    return Slice.apply(src, _leading_block(index_shape), False)


def _scatter_reduce_arguments(input: Tensor, dim: int, index: Tensor, src: Tensor,
                              reduce: str) -> tuple[int, Tensor]:  # fmt: skip
    check_tensors(input, index, src)
    if reduce not in _REDUCE_UFUNCS and reduce not in _REDUCE_ALIASES:
        raise RuntimeError(_SCATTER_REDUCE_MESSAGE.format(reduce))
    dim = _check_scatter(input, dim, index, src)
    if reduce == "mean" and input._data.dtype == np.bool_:
        raise not_implemented("scatter_gather_tensor_cpu_reduce_mean", input._data.dtype)
    if reduce in ("amax", "amin") and input._data.dtype.kind == "c":
        raise not_implemented(f"scatter_gather_tensor_cpu_reduce_{reduce}", input._data.dtype)
    return dim, _leading_block_of(src, index._data.shape)


def _refuse_complex_grad(name: str, *tensors: Tensor) -> None:
    """PyTorch's refusal of an out-of-place op that has no complex derivative, when its
    complex output would require grad."""
    if tensors[0]._data.dtype.kind != "c" or not is_grad_enabled():
        return
    if any(tensor.requires_grad for tensor in tensors):
        raise RuntimeError(
            f"{name} does not support automatic differentiation for outputs with complex dtype."
        )


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:  # fmt: skip
    """A copy of `input` with `src` reduced into it at `index` along `dim` by `reduce` ('sum',
    'prod', 'mean', 'amax' or 'amin'); `include_self=False` leaves input's own entries out
    of the entries that receive values. Ties of amax/amin share the gradient evenly."""
    dim, src = _scatter_reduce_arguments(input, dim, index, src, reduce)
    _refuse_complex_grad("scatter_reduce", input, src)
    return ScatterReduction.apply(input, dim, index, src, reduce, bool(include_self))


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:  # fmt: skip
    """In-place scatter_reduce."""
    dim, src = _scatter_reduce_arguments(input, dim, index, src, reduce)
    return apply_inplace(ScatterReduction, input, dim, index, src, reduce, bool(include_self))


def _index_vector(name: str, index: Any) -> np.ndarray:
    """The index of index_add/index_reduce as a vector, after PyTorch's checks."""
    array = index._data
    if array.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: {array.ndim} with type: "
            f"{SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)} and size: "
            f"{list(array.shape)}"
        )
    if array.dtype not in _INDEX_ARRAY_DTYPES:
        raise RuntimeError(
            f"{name}(): Expected dtype int32/int64 for index but got: "
            f"{SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)}"
        )
    return array.reshape(-1)


def _check_index_source(name: str, input: Tensor, dim: int, positions: np.ndarray,
                        source: Tensor) -> int:  # fmt: skip
    """The normalized dim, after PyTorch's checks of index_add's and index_reduce's source."""
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    source_shape = source._data.shape
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"{name}(): self ({SCALAR_TYPE_NAMES[input._data.dtype.name]}) and source "
            f"({SCALAR_TYPE_NAMES[source._data.dtype.name]}) must have the same scalar type"
        )
    kept = [size for d, size in enumerate(shape) if d != dim]
    kept_source = [size for d, size in enumerate(source_shape) if d != dim]
    if max(len(shape), 1) != max(len(source_shape), 1) or kept != kept_source:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(shape)} source.shape = {list(source_shape)}"
        )
    count = source_shape[dim] if source_shape else 1
    if positions.size != count:
        raise RuntimeError(
            f"{name}(): Number of indices ({positions.size}) should be equal to "
            f"source.size(dim): ({count}), for dim: {dim}"
        )
    size = shape[dim] if shape else 1
    if positions.size and (positions.min() < 0 or positions.max() >= size):
        raise IndexError("index out of range in self")
    return dim


def _spread_index(positions: np.ndarray, dim: int, shape: tuple[int, ...]) -> Tensor:
    """The index vector along `dim` repeated over the other dims of `shape` (a scatter's)."""
    if len(shape) <= 1:
        return _wrap(positions.reshape(shape))
    along = positions.reshape((1,) * dim + (-1,) + (1,) * (len(shape) - dim - 1))
    return _wrap(np.ascontiguousarray(np.broadcast_to(along, shape)))


# From this many entries per slice, adding whole slices a round of distinct positions at a
# time beats one `add.at` on flat positions (measured on 1e6 values: slices of 64 take 1.4x
# as long, of 100 about as long, of 1000 a third), unless a position repeats more often than
# this many times.
_SLICE_ADD_MIN = 128
_MAX_ROUNDS = 16


def _add_along(result: np.ndarray, dim: int, positions: np.ndarray, values: np.ndarray) -> None:
    """result[..., positions[k], ...] += values[..., k, ...] along `dim`, in place and in the
    order of `positions` (repeated positions add up). `result` is C-contiguous."""
    count = positions.size
    if not count:
        return
    if values.size // count >= _SLICE_ADD_MIN and _add_in_rounds(result, dim, positions, values):
        return
    shape = values.shape
    grid = positions.reshape((1,) * dim + (-1,) + (1,) * (len(shape) - dim - 1))
    flat = _flat_positions(grid, dim, shape, result.shape)
    np.add.at(result.reshape(-1), flat.reshape(-1), values.reshape(-1))


def _add_in_rounds(result: np.ndarray, dim: int, positions: np.ndarray,
                   values: np.ndarray) -> bool:  # fmt: skip
    """`_add_along` for wide slices: round k adds the k-th occurrence of every position, so
    no position comes twice in a round. False, having added nothing, when a position repeats
    more than `_MAX_ROUNDS` times."""
    count = positions.size
    order = np.argsort(positions, kind="stable")
    ordered = positions[order]
    is_first = np.empty(count, np.bool_)
    is_first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=is_first[1:])
    starts = np.flatnonzero(is_first)
    rank = np.arange(count) - starts[np.cumsum(is_first) - 1]
    rounds = int(rank.max()) + 1
    if rounds > _MAX_ROUNDS:
        return False
    moved = np.moveaxis(result, dim, 0)
    moved_values = np.moveaxis(values, dim, 0)
    for occurrence in range(rounds):
        chosen = order[rank == occurrence]
        moved[positions[chosen]] += moved_values[chosen]
    return True


class IndexAdd(Function):
    _backward_name = "IndexAddBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha, out=None):
        ctx.save_for_backward(index)
        ctx.dim, ctx.alpha = dim, alpha
        ctx.source_shape = source._data.shape
        values = source._data
        low = low_precision_of(x._data.dtype)
        if low is not None:
            # float16/bfloat16: x + alpha * source in float32, rounded once
            result = np.ascontiguousarray(_at_least_1d(widen(x._data)))
            _add_along(result, dim, index._data.reshape(-1), _at_least_1d(widen(values) * alpha))
            return _wrap(round_to(result, low).reshape(x._data.shape))
        if alpha != 1:
            values = np.multiply(values, alpha, dtype=x._data.dtype, casting="unsafe")
        is_writable = out is not None and out.flags.c_contiguous and out.flags.writeable
        if is_writable and not np.may_share_memory(out, values):
            # index_add_: add straight into x's storage
            _add_along(_at_least_1d(out), dim, index._data.reshape(-1), _at_least_1d(values))
            return x
        result = _at_least_1d(x._data).copy()
        _add_along(result, dim, index._data.reshape(-1), _at_least_1d(values))
        return _wrap(result.reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad_source = None
        if ctx.needs_input_grad[3]:
            # d/d source: each source slice reads the gradient at its index, times alpha
            grad_source = IndexSelect.apply(grad_output, ctx.dim, index)
            if grad_source._data.shape != ctx.source_shape:
                grad_source = View.apply(grad_source, ctx.source_shape)
            if ctx.alpha != 1:
                # PyTorch multiplies by alpha, not its conjugate; as HOLOMORPHIC conjugates
                # the result, a complex alpha is conjugated here to give PyTorch's gradient
                alpha = ctx.alpha
                grad_source = mul(
                    grad_source, alpha.conjugate() if alpha.__class__ is complex else alpha
                )
        return grad_output, None, None, grad_source, None


def _index_add_arguments(input: Tensor, dim: int, index: Tensor, source: Tensor,
                         alpha: Any) -> tuple[int, Any]:  # fmt: skip
    check_tensors(input, index, source)
    positions = _index_vector("index_add_", index)
    dim = _check_index_source("index_add_", input, dim, positions, source)
    alpha = fill_scalar(scalar_value(alpha), input._data.dtype)
    if input._data.dtype.kind not in INEXACT_KINDS and isinstance(alpha, float):
        alpha = int(alpha)  # PyTorch casts alpha to an integer tensor's dtype
    return dim, alpha


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Any = 1) -> Tensor:  # fmt: skip
    """A copy of `input` with `alpha * source` added at positions `index` along `dim`
    (repeated positions add up)."""
    dim, alpha = _index_add_arguments(input, dim, index, source, alpha)
    return IndexAdd.apply(input, dim, index, source, alpha)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Tensor:  # fmt: skip
    """In-place index_add."""
    dim, alpha = _index_add_arguments(input, dim, index, source, alpha)
    return apply_inplace(IndexAdd, input, dim, index, source, alpha)


def _index_reduce_arguments(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                            include_self: bool) -> tuple[int, Tensor]:  # fmt: skip
    check_tensors(input, index, source)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(_INDEX_REDUCE_MESSAGE.format(reduce))
    positions = _index_vector("index_reduce_", index)
    dim = _check_index_source("index_reduce_", input, dim, positions, source)
    dtype = input._data.dtype
    if dtype == np.bool_:
        kernel = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise not_implemented(kernel, dtype)
    if dtype.kind == "c":
        # PyTorch's kernels: one per vector, one per slice of a larger tensor
        if not include_self:
            raise not_implemented("index_reduce_func_exclude_input_init", dtype)
        if input._data.ndim <= 1:
            raise not_implemented("index_func_", dtype)
        if reduce in ("amax", "amin"):
            raise not_implemented("maximum_cpu" if reduce == "amax" else "minimum_cpu", dtype)
    return dim, _spread_index(positions, dim, source._data.shape)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:  # fmt: skip
    """A copy of `input` with the slices of `source` reduced into it at positions `index`
    along `dim` by `reduce` ('prod', 'mean', 'amax' or 'amin')."""
    dim, spread = _index_reduce_arguments(input, dim, index, source, reduce, include_self)
    _refuse_complex_grad("index_reduce", input, source)
    return IndexReduce.apply(input, dim, spread, source, reduce, bool(include_self))


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:  # fmt: skip
    """In-place index_reduce."""
    dim, spread = _index_reduce_arguments(input, dim, index, source, reduce, include_self)
    return apply_inplace(IndexReduce, input, dim, spread, source, reduce, bool(include_self))


class IndexCopy(Function):
    _backward_name = "IndexCopyBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, index, source):
        ctx.save_for_backward(index)
        ctx.dim = dim
        ctx.source_shape = source._data.shape
        result = _at_least_1d(x._data).copy()
        target = (_WHOLE,) * dim + (index._data.reshape(-1),)
        result[target] = _at_least_1d(source._data)
        return _wrap(result.reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad_x = grad_source = None
        if ctx.needs_input_grad[0]:
            # copied-over entries no longer depend on x
            grad_x = IndexFill.apply(grad_output, ctx.dim, index._data.reshape(-1), 0.0)
        if ctx.needs_input_grad[3]:
            grad_source = IndexSelect.apply(grad_output, ctx.dim, index)
            if grad_source._data.shape != ctx.source_shape:
                grad_source = View.apply(grad_source, ctx.source_shape)
        return grad_x, None, None, grad_source


def _index_copy_arguments(input: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    check_tensors(input, index, source)
    array = index._data
    if array.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {array.ndim})")
    if array.dtype != np.int64:
        raise RuntimeError(
            "index_copy_(): Expected a long tensor for index, but got "
            f"{SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)}"
        )
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    source_shape = source._data.shape
    if max(len(shape), 1) != max(len(source_shape), 1):
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their "
            "dimensionality must match. Source dimensionality "
            f"({len(source_shape)}), destination dimensionality ({len(shape)})"
        )
    count = source_shape[dim] if source_shape else 1
    if array.size != count:
        raise IndexError(
            f"index_copy_(): Number of indices ({array.size}) should be equal to "
            f"source.size(dim) ({count})"
        )
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{SCALAR_TYPE_NAMES[input._data.dtype.name]} and (source) "
            f"{SCALAR_TYPE_NAMES[source._data.dtype.name]}"
        )
    # PyTorch numbers the dims of the slices, which lack `dim`
    slice_sizes = [(size, source_shape[d]) for d, size in enumerate(shape) if d != dim]
    for d, (size, source_size) in enumerate(slice_sizes):
        if size != source_size:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {size} at dimension {d} and source slice shape: "
                f"{source_size} at dimension {d}."
            )
    size = shape[dim] if shape else 1
    if array.size and (array.min() < 0 or array.max() >= size):
        bad = array[(array < 0) | (array >= size)].flat[0]
        raise IndexError(
            f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size {size}"
        )
    return dim


@autocast_op
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` with the slices of `source` written at positions `index` along `dim`
    (which of several slices sent to one position wins is unspecified, as in PyTorch)."""
    dim = _index_copy_arguments(input, dim, index, source)
    return IndexCopy.apply(input, dim, index, source)


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place index_copy."""
    dim = _index_copy_arguments(input, dim, index, source)
    return apply_inplace(IndexCopy, input, dim, index, source)


class IndexFill(Function):
    """index_fill with a number; `positions` are the non-negative positions along `dim`."""

    _backward_name = "IndexFillBackward0"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # PyTorch saves the index

    @staticmethod
    def forward(ctx, x, dim, positions, value):
        ctx.dim = dim
        ctx.positions = positions
        result = _at_least_1d(x._data).copy()
        fill = value._data if isinstance(value, TensorBase) else value
        result[(_WHOLE,) * dim + (positions,)] = fill
        return _wrap(result.reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_value = None
        if ctx.needs_input_grad[0]:
            # filled entries no longer depend on x
            grad_x = IndexFill.apply(grad_output, ctx.dim, ctx.positions, 0.0)
        if ctx.needs_input_grad[3]:
            # the value sits once at each distinct position
            distinct = _wrap(np.unique(ctx.positions))
            grad_value = reduction.sum(IndexSelect.apply(grad_output, ctx.dim, distinct))
        return grad_x, None, None, grad_value


class IndexFillTensor(IndexFill):
    _backward_name = "IndexFillBackward1"


def _index_fill_arguments(input: Tensor, dim: int, index: Tensor,
                          value: Any) -> tuple[int, np.ndarray, Any]:  # fmt: skip
    check_tensors(input, index)
    array = index._data
    if array.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, TensorBase):
        if value._data.ndim:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        is_complex = value._data.dtype.kind == "c"
    else:
        value = scalar_value(value)
        is_complex = value.__class__ is complex
    if is_complex and input._data.dtype.kind != "c":
        raise RuntimeError(
            "index_fill_(): Converting complex Scalar to non-complex type is not supported"
        )
    if array.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    size = shape[dim] if shape else 1
    positions = array.reshape(-1)
    if positions.size and (positions.min() < -size or positions.max() >= size):
        bad = positions[(positions < -size) | (positions >= size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    return dim, np.where(positions < 0, positions + size, positions), value


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of `input` with `value` (a number or 0-d tensor) at positions `index` along
    `dim`; negative positions count from the end."""
    dim, positions, value = _index_fill_arguments(input, dim, index, value)
    if isinstance(value, TensorBase):
        return IndexFillTensor.apply(input, dim, positions, value)
    return IndexFill.apply(input, dim, positions, value)


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In-place index_fill."""
    dim, positions, value = _index_fill_arguments(input, dim, index, value)
    if isinstance(value, TensorBase):
        return apply_inplace(IndexFillTensor, input, dim, positions, value)
    return apply_inplace(IndexFill, input, dim, positions, value)


# ------------------------------------------------------------------ index_put / put
class IndexPutValues(Function):
    """index_put: `values` written (or, with `accumulate`, added) at a prepared NumPy index."""

    _backward_name = "IndexPutBackward0"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # as PyTorch's, it keeps the indices

    @staticmethod
    def forward(ctx, x, index, values, accumulate):
        ctx.index = index
        ctx.accumulate = accumulate
        ctx.value_shape = values._data.shape
        result = x._data.copy()
        array = values._data
        # PyTorch reads a value's leading ones as broadcast dims
        while array.ndim and array.shape[0] == 1:
            array = array[0]
        if accumulate:
            np.add.at(result, index, array)
        else:
            result[index] = array
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_values = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output if ctx.accumulate else ZeroAt.apply(grad_output, ctx.index)
        if ctx.needs_input_grad[2]:
            grad_values = Index.apply(grad_output, ctx.index, True)
            grad_values = _sum_to_value(grad_values, ctx.value_shape)
        return grad_x, None, grad_values, None


def _index_put_arguments(name: str, input: Tensor, indices: Any, values: Any,
                         accumulate: Any) -> tuple:  # fmt: skip
    check_tensors(input)
    if not isinstance(indices, tuple | list):
        raise TypeError(
            f"{name}(): argument 'indices' (position {call_position(name, 2)}) must be tuple "
            f"of Tensors, not {type(indices).__name__}"
        )
    for position, item in enumerate(indices):
        if not isinstance(item, TensorBase):
            raise TypeError(
                f"expected Tensor as element {position} in argument 0, but got "
                f"{type(item).__name__}"
            )
    if not isinstance(values, TensorBase):
        raise argument_error(name, "values", 3, values)
    if not isinstance(accumulate, bool):
        raise TypeError(
            f"{name}(): argument 'accumulate' must be bool, not {type(accumulate).__name__}"
        )
    is_fill = len(indices) == 1 and not values._data.ndim and not accumulate
    if is_fill and indices[0]._data.dtype == np.uint8:
        # PyTorch fills through one mask with masked_fill_, which takes no byte mask
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
        )
    if values._data.dtype != input._data.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{SCALAR_TYPE_NAMES[input._data.dtype.name]} for the destination and "
            f"{SCALAR_TYPE_NAMES[values._data.dtype.name]} for the source."
        )
    shape = input._data.shape
    if len(indices) > len(shape):
        raise IndexError(
            f"too many indices for tensor of dimension {len(shape)} (got {len(indices)})"
        )
    index, _, _, _ = _prepare_index(shape, tuple(indices))
    try:
        # the shape of the indexed entries, read off a one-byte stand-in for input
        slots = np.broadcast_to(np.zeros((), np.int8), shape)[index].shape
    except IndexError as error:
        raise _translate_index_error(error, shape, index) from None
    value_shape = values._data.shape
    while value_shape and value_shape[0] == 1:
        value_shape = value_shape[1:]
    try:
        np.broadcast_shapes(value_shape, slots)
        if len(value_shape) > len(slots) or np.broadcast_shapes(value_shape, slots) != slots:
            raise ValueError
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to "
            f"indexing result of shape {list(slots)}"
        ) from None
    return index


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `values` at `input[indices]` (a tuple of integer or bool
    tensors); `accumulate=True` adds them, and repeated positions add up."""
    index = _index_put_arguments("index_put", input, indices, values, accumulate)
    return IndexPutValues.apply(input, index, values, accumulate)


def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """In-place index_put: `input[indices] = values`, or `+=` with `accumulate=True`."""
    index = _index_put_arguments("index_put_", input, indices, values, accumulate)
    return apply_inplace(IndexPutValues, input, index, values, accumulate)


class Put(Function):
    """put: `source` written (or added) at flat positions of `x`."""

    _backward_name = "PutBackward0"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # PyTorch saves the index

    @staticmethod
    def forward(ctx, x, positions, source, accumulate):
        shape = x._data.shape
        ctx.index = np.unravel_index(positions, shape) if shape else (Ellipsis,)
        ctx.accumulate = accumulate
        ctx.source_shape = source._data.shape
        result = x._data.copy()
        flat = result.reshape(-1)
        if accumulate:
            np.add.at(flat, positions, source._data.reshape(-1))
        else:
            flat[positions] = source._data.reshape(-1)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_source = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output if ctx.accumulate else ZeroAt.apply(grad_output, ctx.index)
        if ctx.needs_input_grad[2]:
            grad_source = Index.apply(grad_output, ctx.index, True)
            grad_source = View.apply(grad_source, ctx.source_shape)
        return grad_x, None, grad_source, None


def _put_arguments(input: Tensor, index: Tensor, source: Tensor) -> np.ndarray:
    check_tensors(input, index, source)
    array = index._data
    if array.dtype != np.int64:
        raise RuntimeError(
            "put_(): Expected a long tensor for index, but got "
            f"{SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)}"
        )
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{SCALAR_TYPE_NAMES[input._data.dtype.name]} and source.dtype = "
            f"{SCALAR_TYPE_NAMES[source._data.dtype.name]}"
        )
    if source._data.size != array.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source._data.size}, index.numel() = {array.size}"
        )
    numel = input._data.size
    positions = array.reshape(-1)
    if positions.size and not numel:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    if positions.size and (positions.min() < -numel or positions.max() >= numel):
        bad = positions[(positions < -numel) | (positions >= numel)].flat[0]
        raise IndexError(
            f"out of range: tried to access index {bad} on a tensor of {numel} elements."
        )
    return np.where(positions < 0, positions + numel, positions)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `source` at the flat positions `index` (negative ones count from
    the end); `accumulate=True` adds instead, repeats adding up."""
    positions = _put_arguments(input, index, source)
    return Put.apply(input, positions, source, bool(accumulate))


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place put."""
    positions = _put_arguments(input, index, source)
    return apply_inplace(Put, input, positions, source, bool(accumulate))


# -------------------------------------------------------------------- masked_scatter
class MaskedScatter(Function):
    _backward_name = "MaskedScatterBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, mask, source, shape):
        ctx.save_for_backward(mask)
        ctx.shape = shape
        ctx.input_shape = x._data.shape
        ctx.source_shape = source._data.shape
        mask_array = np.broadcast_to(mask._data, shape)
        result = np.broadcast_to(x._data, shape).copy()
        count = np.count_nonzero(mask_array)
        ctx.count = count
        # the masked entries take source's first values in row-major order
        result[mask_array] = source._data.reshape(-1)[:count]
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        grad_x = grad_source = None
        if ctx.needs_input_grad[0]:
            grad_x = sum_to(MaskedFill.apply(grad_output, mask, 0.0), ctx.input_shape)
        if ctx.needs_input_grad[2]:
            mask_array = np.broadcast_to(mask._data, ctx.shape)
            taken = Index.apply(grad_output, (mask_array,), False)
            numel = 1
            for size in ctx.source_shape:
                numel *= size
            grad_source = IndexGrad.apply(taken, (numel,), (slice(0, ctx.count),), False)
            grad_source = View.apply(grad_source, ctx.source_shape)
        return grad_x, None, grad_source, None


def _masked_scatter_arguments(input: Tensor, mask: Tensor, source: Tensor,
                              inplace: bool) -> tuple[int, ...]:  # fmt: skip
    check_tensors(input, mask, source)
    dtype = mask._data.dtype
    if dtype != np.bool_:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)}"
        )
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{SCALAR_TYPE_NAMES[input._data.dtype.name]} and "
            f"{SCALAR_TYPE_NAMES[source._data.dtype.name]}"
        )
    shape = input._data.shape
    mask_shape = mask._data.shape
    if inplace:
        if len(mask_shape) > len(shape):
            raise RuntimeError(
                f"expand(CPUBoolType{{{list(mask_shape)}}}, size={list(shape)}): the number of "
                f"sizes provided ({len(shape)}) must be greater or equal to the number of "
                f"dimensions in the tensor ({len(mask_shape)})"
            )
        expand_shape(mask_shape, shape, mask._data.dtype)
    else:
        try:
            shape = np.broadcast_shapes(shape, mask_shape)
        except ValueError:
            raise broadcast_error(mask_shape, shape) from None
    if np.count_nonzero(np.broadcast_to(mask._data, shape)) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return shape


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` (broadcast with `mask`) whose entries where `mask` is True take
    `source`'s values in order."""
    shape = _masked_scatter_arguments(input, mask, source, False)
    return MaskedScatter.apply(input, mask, source, shape)


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place masked_scatter; `mask` must broadcast to `input`'s shape."""
    shape = _masked_scatter_arguments(input, mask, source, True)
    return apply_inplace(MaskedScatter, input, mask, source, shape)


# --------------------------------------------------------- select / slice scatter
class SliceScatter(Function):
    """A copy of `x` with `src` written at a basic NumPy index (a slice of one dim)."""

    _backward_name = "SliceScatterBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, src, index):
        ctx.index = index
        ctx.src_dtype = src._data.dtype
        result = x._data.copy()
        result[index] = factories.real_part_for(src._data, result.dtype)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_src = None
        if ctx.needs_input_grad[0]:
            # overwritten entries no longer depend on x
            grad_x = ZeroAt.apply(grad_output, ctx.index)
        if ctx.needs_input_grad[1]:
            grad_src = Slice.apply(grad_output, ctx.index, False)
            if ctx.src_dtype != grad_src._data.dtype:
                grad_src = to(grad_src, _dtype_of(ctx.src_dtype))
        return grad_x, grad_src, None


class SelectScatter(SliceScatter):
    _backward_name = "SelectScatterBackward0"


def _dtype_of(numpy_dtype: np.dtype) -> Any:
    return dtypes.from_numpy_dtype(numpy_dtype)


def _check_slot(input: Tensor, src: Tensor, index: tuple) -> None:
    slot = input._data[index].shape
    if src._data.shape != slot:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src._data.shape)}, slice size = {list(slot)}"
        )


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of `input` with `src` written at position `index` of `dim`."""
    check_tensors(input, src)
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, len(shape))
    index = operator.index(index)
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at "
            f"dimension {dim}"
        )
    numpy_index = (_WHOLE,) * dim + (index, Ellipsis)
    _check_slot(input, src, numpy_index)
    _refuse_complex_grad("select_scatter", input, src)
    return SelectScatter.apply(input, src, numpy_index)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:  # fmt: skip
    """A copy of `input` with `src` written at `start:end:step` of `dim`."""
    check_tensors(input, src)
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    step = operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    numpy_index = (_WHOLE,) * dim + (slice(start, end, step), Ellipsis)
    _check_slot(input, src, numpy_index)
    _refuse_complex_grad("slice_scatter", input, src)
    return SliceScatter.apply(input, src, numpy_index)


# ------------------------------------------------------------------ take_along_dim
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """The entries of `input` at `indices` along `dim` (the two broadcast apart from `dim`);
    without `dim`, of the flattened `input`."""
    check_tensors(input, indices)
    array = indices._data
    if array.dtype != np.int64:
        raise RuntimeError(
            "lucid.take_along_dim(): dtype of indices should be Long but got "
            f"{SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)}"
        )
    if dim is None:
        # views, as PyTorch's: a non-contiguous input or index is refused
        return gather(view(input, (-1,)), 0, view(indices, (-1,)))
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    if len(shape) != array.ndim:
        raise RuntimeError(
            "lucid.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {len(shape)} dimensions for input, and {array.ndim} "
            "dimensions for indices"
        )
    input_sizes = list(shape)
    index_sizes = list(array.shape)
    input_sizes[dim] = index_sizes[dim] = 1
    try:
        common = list(np.broadcast_shapes(tuple(input_sizes), tuple(index_sizes)))
    except ValueError:
        raise broadcast_error(tuple(input_sizes), tuple(index_sizes)) from None
    size = shape[dim] if shape else 1
    if array.size and array.min() < 0:
        # negative positions count from the end of dim
        indices = _wrap(np.where((array < 0) & (array >= -size), array + size, array))
    index_shape = tuple(common[:dim] + [array.shape[dim] if shape else 1] + common[dim + 1 :])
    input_shape = tuple(common[:dim] + [size] + common[dim + 1 :])
    if input_shape != shape:
        input = expand(input, input_shape)
    if index_shape != array.shape:
        indices = expand(indices, index_shape)
    return gather(input, dim, indices)


def select(input: Tensor, dim: int = REQUIRED, index: int = REQUIRED) -> Tensor:
    """The slice at `index` of dimension `dim`, which is removed (a view)."""
    missing_arguments("select", {"dim": dim, "index": index})
    check_tensors(input)
    check_int(dim, "select", "dim", 2)
    check_int(index, "select", "index", 3)
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, len(shape))
    index = operator.index(index)
    size = shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at "
            f"dimension {dim}"
        )
    return Select.apply(input, (_WHOLE,) * dim + (index % size, Ellipsis), False)


def argwhere(input: Tensor) -> Tensor:
    """The positions of the non-zero entries, one row per entry (as nonzero)."""
    return nonzero(input)


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """Flat indices into `shape` as one int64 tensor of coordinates per dimension."""
    check_tensors(indices)
    array = indices._data
    if array.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for size in shape:
        if not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
    for size in shape:
        if size < 0:
            raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    # Negative flat indices count from the end, as Python's do.
    flat = np.mod(array.astype(np.int64), max(math.prod(shape), 1))
    return tuple(_wrap(np.asarray(c, np.int64)) for c in np.unravel_index(flat, shape))
