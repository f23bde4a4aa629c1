"""Joining and splitting tensors: cat, stack and their hstack/vstack/dstack/column_stack forms,
atleast_1d/2d/3d, and split, chunk, tensor_split, hsplit/vsplit/dsplit, unbind."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import int_list_item_error, is_int_list_item, raise_argument_error
from lucid._core.dtypes import SCALAR_TYPE_NAMES
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops._common import check_int, check_tensors, invalid_combination
from lucid.ops.indexing import _WHOLE, Slice
from lucid.ops.shape import REQUIRED, narrow, reshape, unsqueeze

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "cat", "concat", "concatenate", "stack", "split", "chunk", "unbind", "atleast_1d", "atleast_2d",
    "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack", "tensor_split",
    "hsplit", "vsplit", "dsplit",
]  # fmt: skip


# ---------------------------------------------------------------------- cat / stack
def _promoted_dtype(tensors: Sequence[Tensor]) -> np.dtype:
    first = tensors[0]._data.dtype
    if all(tensor._data.dtype == first for tensor in tensors):
        return first
    result = tensors[0].dtype
    for tensor in tensors[1:]:
        result = dtypes.promote_types(result, tensor.dtype)
    return result.numpy_dtype


def _check_tensor_list(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, TensorBase):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )
    tensors = list(tensors)
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, TensorBase):
            raise TypeError(
                f"expected Tensor as element {position} in argument 0, but got "
                f"{type(tensor).__name__}"
            )
    return tensors


def _is_legacy_empty(tensor: Tensor) -> bool:
    return tensor._data.shape == (0,)


class Cat(Function):
    _backward_name = "CatBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        target = _promoted_dtype(tensors)
        # PyTorch still skips 1-d empty tensors whatever the other shapes (legacy behaviour);
        # they get size -1 here so that backward hands them an empty gradient.
        kept = [tensor for tensor in tensors if not _is_legacy_empty(tensor)]
        if kept:
            ctx.sizes = tuple(-1 if _is_legacy_empty(t) else t._data.shape[dim] for t in tensors)
        else:
            kept = tensors
            ctx.sizes = (0,) * len(tensors)
        arrays = [tensor._data.astype(target, copy=False) for tensor in kept]
        return _wrap(np.concatenate(arrays, axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        dim = ctx.dim
        grads = [None]
        offset = 0
        for index, size in enumerate(ctx.sizes):
            if size < 0:
                grads.append(_wrap(np.zeros((0,), grad_output._data.dtype)))
                continue
            if ctx.needs_input_grad[index + 1]:
                grads.append(narrow(grad_output, dim, offset, size))
            else:
                grads.append(None)
            offset += size
        return tuple(grads)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Concatenate tensors along an existing dimension, promoting dtypes."""
    tensors = _check_tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    shape = None
    for position, tensor in enumerate(tensors):
        if not tensor._data.ndim:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {position}) cannot be concatenated"
            )
        if shape is None and not _is_legacy_empty(tensor):
            shape = tensor._data.shape
    if shape is None:
        return Cat.apply(_normalize_dim(dim, 1), *tensors)
    dim = _normalize_dim(dim, len(shape))
    for position, tensor in enumerate(tensors):
        other = tensor._data.shape
        if other == shape or other == (0,):
            continue
        if len(other) != len(shape):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(shape)} and {len(other)}"
            )
        for d, (expected, got) in enumerate(zip(shape, other)):
            if d != dim and expected != got:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{expected} but got size {got} for tensor number {position} in the list."
                )
    return Cat.apply(dim, *tensors)


concat = cat
concatenate = cat


class Stack(Function):
    _backward_name = "StackBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        target = _promoted_dtype(tensors)
        return _wrap(np.stack([t._data.astype(target, copy=False) for t in tensors], axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        return (None, *Unbind.apply(grad_output, ctx.dim))


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Join equally shaped tensors along a new dimension `dim`."""
    tensors = _check_tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for position, tensor in enumerate(tensors):
        if tensor._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(tensor._data.shape)} at entry {position}"
            )
    return Stack.apply(_normalize_dim(dim, len(shape) + 1), *tensors)


# ------------------------------------------------------------------------ splitting
class Split(Function):
    _backward_name = "SplitBackward0"
    _complex_rule = HOLOMORPHIC
    _returns_several_views = True

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim = dim
        array = x._data
        prefix = (slice(None),) * dim
        pieces = []
        offset = 0
        for size in sizes:
            pieces.append(_wrap(array[prefix + (slice(offset, offset + size), Ellipsis)]))
            offset += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return Cat.apply(ctx.dim, *grad_outputs), None, None


class SplitWithSizes(Split):
    _backward_name = "SplitWithSizesBackward0"


def split(
    tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """Split into pieces of `split_size` (the last may be smaller) or of the given sizes."""
    shape = tensor._data.shape
    if not shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _normalize_dim(dim, len(shape))
    length = shape[dim]
    if not isinstance(split_size_or_sections, list | tuple):
        size = operator.index(split_size_or_sections)
        if size < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={size}"
            )
        if size == 0:
            if length:
                raise RuntimeError(
                    "split_size can only be 0 if dimension size is 0, but got dimension size "
                    f"of {length}"
                )
            return Split.apply(tensor, (0,), dim)
        sizes = [size] * (length // size)
        if length % size or not length:
            sizes.append(length % size)
        return Split.apply(tensor, tuple(sizes), dim)
    for index, size in enumerate(split_size_or_sections):
        if not is_int_list_item(size, index):
            raise int_list_item_error("split_with_sizes", "split_sizes", 2, index, size)
    sizes = tuple(int(size) for size in split_size_or_sections)
    if any(size < 0 for size in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={list(sizes)}"
        )
    if sum(sizes) != length:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={list(sizes)}"
        )
    return SplitWithSizes.apply(tensor, sizes, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into `chunks` pieces of equal size (the last may be smaller, or fewer pieces)."""
    check_tensors(input)
    check_int(chunks, "chunk", "chunks", 2)
    check_int(dim, "chunk", "dim", 3)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    shape = input._data.shape
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = _normalize_dim(dim, len(shape))
    length = shape[dim]
    if length == 0:
        return Split.apply(input, (0,) * chunks, dim)
    return split(input, -(-length // chunks), dim)


class Unbind(Function):
    _backward_name = "UnbindBackward0"
    _complex_rule = HOLOMORPHIC
    _returns_several_views = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return tuple(_wrap(view) for view in _unbind_array(x._data, dim))

    @staticmethod
    def backward(ctx, *grad_outputs):
        return Stack.apply(ctx.dim, *grad_outputs), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # forward's views, and Stack's forward of the gradients, of one dtype here
        # (lucid/_dynamo/flat.py)
        x, dim = args
        if x.dtype.kind == "c" or x.shape[dim] < 2:  # (one slice: a single output)
            return None

        def backward(grads, outs, x, dim):
            return np.stack(grads, axis=dim), None

        return _unbind_array, backward, Stack


def _unbind_array(array: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    prefix = (slice(None),) * dim
    return tuple(array[prefix + (i, Ellipsis)] for i in range(array.shape[dim]))


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of `input` along `dim`, as views."""
    try:
        if not input._data.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    except AttributeError as error:
        raise_argument_error(error)
        raise
    return Unbind.apply(input, _normalize_dim(dim, input._data.ndim))


# --------------------------------------------------------- atleast_nd, hstack, vstack, ...
def _tensor_sequence(name: str, tensors: Any) -> list:
    if isinstance(tensors, TensorBase) or not isinstance(tensors, list | tuple):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    check_tensors(*tensors)
    return list(tensors)


def _atleast(name: str, raise_to: Any, tensors: tuple) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        check_tensors(*tensors[0])
        return tuple(raise_to(t) for t in tensors[0])
    for value in tensors:
        if not isinstance(value, TensorBase):
            got = ", ".join(type(v).__name__ for v in tensors)
            marked = ", ".join(f"!{type(v).__name__}!" for v in tensors)
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({got}), but "
                f"expected one of:\n * (Tensor input)\n      didn't match because some of the "
                f"arguments have invalid types: ({marked})\n * (tuple of Tensors tensors)\n"
                f"      didn't match because some of the arguments have invalid types: "
                f"({marked})\n"
            )
    if len(tensors) == 1:
        return raise_to(tensors[0])
    return tuple(raise_to(t) for t in tensors)


def _at_least_1d_view(x: Tensor) -> Tensor:
    return reshape(x, (1,)) if x._data.ndim == 0 else x


def _at_least_2d_view(x: Tensor) -> Tensor:
    ndim = x._data.ndim
    if ndim == 0:
        return reshape(x, (1, 1))
    return unsqueeze(x, 0) if ndim == 1 else x


def _at_least_3d_view(x: Tensor) -> Tensor:
    ndim = x._data.ndim
    if ndim == 0:
        return reshape(x, (1, 1, 1))
    if ndim == 1:
        return unsqueeze(unsqueeze(x, 0), -1)
    return unsqueeze(x, -1) if ndim == 2 else x


def atleast_1d(*tensors: Any) -> Any:
    """Each input with at least one dimension (0-d becomes shape (1,))."""
    return _atleast("atleast_1d", _at_least_1d_view, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each input with at least two dimensions (a vector becomes a row)."""
    return _atleast("atleast_2d", _at_least_2d_view, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each input with at least three dimensions (a vector v becomes shape (1, len(v), 1))."""
    return _atleast("atleast_3d", _at_least_3d_view, tensors)


def hstack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Concatenate column-wise: along dim 1, or dim 0 when every input is 1-d or 0-d."""
    tensors = [_at_least_1d_view(t) for t in _tensor_sequence("hstack", tensors)]
    dim = 0 if all(t._data.ndim == 1 for t in tensors) else 1
    return cat(tensors, dim)


def vstack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Concatenate row-wise, vectors becoming rows."""
    return cat([_at_least_2d_view(t) for t in _tensor_sequence("vstack", tensors)], 0)


def row_stack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    return cat([_at_least_2d_view(t) for t in _tensor_sequence("row_stack", tensors)], 0)


def dstack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Concatenate depth-wise (along dim 2), after atleast_3d."""
    return cat([_at_least_3d_view(t) for t in _tensor_sequence("dstack", tensors)], 2)


def column_stack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Concatenate along dim 1, vectors and scalars becoming columns."""
    tensors = _tensor_sequence("column_stack", tensors)
    columns = [reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in tensors]
    return cat(columns, 1)


# --------------------------------------------------- tensor_split, hsplit, vsplit, dsplit
_TENSOR_SPLIT_SIGNATURES = (
    "(Tensor input, tuple of ints indices, int dim = 0)",
    "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
    "(Tensor input, int sections, int dim = 0)",
)


def _split_bounds(size: int, indices_or_sections: Any) -> list[tuple[int, int]]:
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        # The first size % sections parts are one longer.
        base, extra = divmod(size, sections)
        starts = [i * base + min(i, extra) for i in range(sections + 1)]
        return list(zip(starts[:-1], starts[1:]))
    bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    pairs = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        start = min(max(start + size if start < 0 else start, 0), size)
        stop = min(max(stop + size if stop < 0 else stop, 0), size)
        pairs.append((start, max(start, stop)))
    return pairs


def tensor_split(input: Tensor, indices_or_sections: Any = REQUIRED,
                 dim: int = 0) -> tuple[Tensor, ...]:  # fmt: skip
    """Split into `sections` nearly equal parts, or at the given indices, along `dim` (views)."""
    if indices_or_sections is REQUIRED:
        raise invalid_combination("tensor_split", (input,), _TENSOR_SPLIT_SIGNATURES)
    check_tensors(input)
    shape = input._data.shape
    if not shape:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(indices_or_sections, TensorBase):
        array = indices_or_sections._data
        if array.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {array.ndim} dims"
            )
        if array.dtype != np.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but "
                f"got {SCALAR_TYPE_NAMES[array.dtype.name]}"
            )
        indices_or_sections = int(array) if array.ndim == 0 else array.tolist()
    elif (
        isinstance(indices_or_sections, bool)
        or not isinstance(indices_or_sections, int | list | tuple)
        or (
            isinstance(indices_or_sections, list | tuple)
            and not all(isinstance(i, int) for i in indices_or_sections)
        )
    ):
        raise invalid_combination(
            "tensor_split", (input, indices_or_sections), _TENSOR_SPLIT_SIGNATURES
        )
    dim = _normalize_dim(dim, len(shape))
    lead = (_WHOLE,) * dim
    return tuple(
        Slice.apply(input, lead + (slice(start, stop), Ellipsis), False)
        for start, stop in _split_bounds(shape[dim], indices_or_sections)
    )


_DIRECTIONAL_SPLIT_SIGNATURES = (
    "(Tensor input, int sections)",
    "(Tensor input, tuple of ints indices)",
)


def _directional_split(name: str, input: Tensor, sections: Any, dim: int, min_dims: int) -> Any:
    check_tensors(input)
    if sections is REQUIRED:
        raise invalid_combination(name, (input,), _DIRECTIONAL_SPLIT_SIGNATURES)
    if isinstance(sections, bool) or not (
        isinstance(sections, int)
        or (isinstance(sections, list | tuple) and all(isinstance(i, int) for i in sections))
    ):
        raise invalid_combination(name, (input, sections), _DIRECTIONAL_SPLIT_SIGNATURES)
    ndim = input._data.ndim
    if ndim < min_dims:
        raise RuntimeError(
            f"lucid.{name} requires a tensor with at least {min_dims} dimension, but got a "
            f"tensor with {ndim} dimensions!"
        )
    if isinstance(sections, int) and not isinstance(sections, bool):
        size = input._data.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(
                f"lucid.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!"
            )
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, indices_or_sections: Any = REQUIRED) -> tuple[Tensor, ...]:
    """tensor_split along dim 1 (dim 0 for a vector); an int must divide the size evenly."""
    check_tensors(input)
    dim = 1 if input._data.ndim > 1 else 0
    return _directional_split("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input: Tensor, indices_or_sections: Any = REQUIRED) -> tuple[Tensor, ...]:
    """tensor_split along dim 0 of a tensor of at least two dimensions."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 2 of a tensor of at least three dimensions."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)
