"""Shape ops: reshape, view, flatten, squeeze, unsqueeze, transpose, permute, movedim, expand,
broadcast_to/broadcast_tensors, repeat, repeat_interleave, tile, narrow, flip, roll, rot90,
meshgrid, unfold, ravel, with the in-place forms t_, transpose_, squeeze_, unsqueeze_."""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import (
    call_position,
    called_as_method,
    described_with_items,
    int_list_item_error,
    invalid_combination,
    is_int,
    is_int_list_item,
    raise_argument_error,
    type_word,
)
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.tensor import (
    _TYPE_NAMES,
    TensorBase,
    _normalize_dim,
    _wrap,
    allocation_error,
    storage_bytes,
)
from lucid.ops._common import check_int, check_tensors, not_implemented
from lucid.ops.broadcast import common_shape, sum_to
from lucid.ops.fills import contiguous

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose", "swapaxes", "swapdims",
    "t", "permute", "movedim", "moveaxis", "broadcast_to", "tile", "narrow", "flip", "roll",
    "rot90", "fliplr", "flipud", "meshgrid", "ravel", "adjoint", "broadcast_tensors",
    "repeat_interleave",
]  # fmt: skip


def _dims_tuple(dims: Any, ndim: int) -> tuple[int, ...]:
    """`dims` (an int or a sequence) normalised against `ndim`, rejecting repeats."""
    if isinstance(dims, int):
        return (_normalize_dim(dims, ndim),)
    result = tuple(_normalize_dim(d, ndim) for d in dims)
    if len(set(result)) != len(result):
        seen = set()
        for d in result:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    return result


# ------------------------------------------------------------------- reshape
def _infer_shape(shape: tuple, numel: int) -> tuple[int, ...]:
    """`shape` with its one -1 resolved, checked against `numel` with PyTorch's messages."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return shape
    inferred = -1
    known = 1
    for position, size in enumerate(shape):
        if size == -1:
            if inferred >= 0:
                raise RuntimeError("only one dimension can be inferred")
            inferred = position
        elif size < 0:
            raise RuntimeError(
                f"invalid shape dimension {size} at index {position} of shape {list(shape)}"
            )
        else:
            known *= size
    if inferred < 0:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    if known == 0:
        if numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    if numel % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape[:inferred] + (numel // known,) + shape[inferred + 1 :]


class View(Function):
    _backward_name = "ViewBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x._data.shape
        return _wrap(x._data.reshape(shape))

    @staticmethod
    def backward(ctx, grad_output):
        return View.apply(grad_output, ctx.input_shape), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        x, shape = args
        return _reshape_kernels(x, shape)


def _reshape_kernels(x: np.ndarray, shape: tuple[int, ...]) -> tuple | None:
    """The flat kernels (lucid/_dynamo/flat.py) of an op that reshapes x to `shape` (the
    recording's guards fix both): the reshape, and View's reshape back of the gradient."""
    if x.dtype.kind == "c":
        return None
    input_shape = x.shape

    def forward(x, *config):
        return x.reshape(shape)

    def backward(grad, out, x, *config):
        return grad.reshape(input_shape), None

    return forward, backward, View


class UnsafeView(View):
    """A reshape whose layout needed a copy (PyTorch reshapes a clone then views it)."""

    _backward_name = "UnsafeViewBackward0"
    flat_kernels = View.__dict__["flat_kernels"]  # its own: in-place forms inherit none


def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """A tensor with the same data and `shape`: a view when the layout allows, else a copy."""
    check_tensors(input)
    array = input._data
    shape = _infer_shape(tuple(shape), array.size)
    if array.flags.c_contiguous:
        return View.apply(input, shape)
    try:
        array.reshape(shape, copy=False)
    except ValueError:
        return UnsafeView.apply(input, shape)
    return View.apply(input, shape)


def view(input: Tensor, shape: Sequence[int]) -> Tensor:
    """Like reshape, but never copies: a layout that cannot be viewed is an error."""
    array = input._data
    shape = _infer_shape(tuple(shape), array.size)
    if not array.flags.c_contiguous:
        try:
            array.reshape(shape, copy=False)
        except ValueError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None
    return View.apply(input, shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions `start_dim` to `end_dim` into one."""
    try:
        shape = input._data.shape
    except AttributeError as error:
        raise_argument_error(error)
        raise
    start = _normalize_dim(start_dim, len(shape))
    end = _normalize_dim(end_dim, len(shape))
    if not shape:
        return reshape(input, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = math.prod(shape[start : end + 1])
    return reshape(input, shape[:start] + (merged,) + shape[end + 1 :])


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension `dim` into `sizes` (one entry may be -1)."""
    check_tensors(input)
    shape = input._data.shape
    dim = _normalize_dim(dim, len(shape))
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if -1 not in sizes and math.prod(sizes) != shape[dim]:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({shape[dim]}) in the input tensor"
        )
    sizes = _infer_shape(sizes, shape[dim])
    return view(input, shape[:dim] + sizes + shape[dim + 1 :])


# ------------------------------------------------------------ squeeze family
class Squeeze(Function):
    _backward_name = "SqueezeBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims):
        ctx.input_shape = x._data.shape
        return _wrap(x._data.squeeze(dims))

    @staticmethod
    def backward(ctx, grad_output):
        return View.apply(grad_output, ctx.input_shape), None


class SqueezeDim(Squeeze):
    _backward_name = "SqueezeBackward1"


class SqueezeDims(Squeeze):
    _backward_name = "SqueezeBackward2"


def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or those among `dim`)."""
    try:
        shape = input._data.shape
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if dim is None:
        return Squeeze.apply(input, tuple(i for i, size in enumerate(shape) if size == 1))
    if isinstance(dim, int):
        dim = _normalize_dim(dim, len(shape))
        dims = (dim,) if shape and shape[dim] == 1 else ()
        return SqueezeDim.apply(input, dims)
    dims = _dims_tuple(dim, len(shape))
    return SqueezeDims.apply(input, tuple(d for d in dims if shape and shape[d] == 1))


# in-place forms: the tensor itself takes the view's shape and strides
def _restride(x: Tensor, view: Tensor) -> Tensor:
    """Give x the shape and strides of `view`, a view of x's own storage (t_, squeeze_, ...):
    x keeps its identity and storage, and records the view op's backward."""
    x._data = view._data
    return x


class SqueezeInplace(Squeeze):
    _backward_name = "SqueezeBackward3"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.mark_dirty(x)
        return _restride(x, Squeeze.forward(ctx, x, dims))


class SqueezeDimInplace(SqueezeInplace):
    _backward_name = "SqueezeBackward4"


class SqueezeDimsInplace(SqueezeInplace):
    _backward_name = "SqueezeBackward5"


def squeeze_(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    check_tensors(input)
    shape = input._data.shape
    if dim is None:
        return SqueezeInplace.apply(input, tuple(i for i, size in enumerate(shape) if size == 1))
    if isinstance(dim, int):
        dim = _normalize_dim(dim, len(shape))
        dims = (dim,) if shape and shape[dim] == 1 else ()
        return SqueezeDimInplace.apply(input, dims)
    dims = _dims_tuple(dim, len(shape))
    return SqueezeDimsInplace.apply(input, tuple(d for d in dims if shape and shape[d] == 1))


class Unsqueeze(Function):
    _backward_name = "UnsqueezeBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim):
        shape = x._data.shape
        ctx.input_shape = shape
        return _wrap(x._data.reshape(shape[:dim] + (1,) + shape[dim:]))

    @staticmethod
    def backward(ctx, grad_output):
        return View.apply(grad_output, ctx.input_shape), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        x, dim = args
        return _reshape_kernels(x, x.shape[:dim] + (1,) + x.shape[dim:])


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at `dim`."""
    check_tensors(input)
    return Unsqueeze.apply(input, _normalize_dim(dim, input._data.ndim + 1))


class UnsqueezeInplace(Unsqueeze):
    _backward_name = "UnsqueezeBackward1"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.mark_dirty(x)
        return _restride(x, Unsqueeze.forward(ctx, x, dim))


def unsqueeze_(input: Tensor, dim: int) -> Tensor:
    check_tensors(input)
    return UnsqueezeInplace.apply(input, _normalize_dim(dim, input._data.ndim + 1))


# ---------------------------------------------------------- transpose family
class Transpose(Function):
    _backward_name = "TransposeBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        if dim0 == dim1:
            return _wrap(x._data.view())
        return _wrap(x._data.swapaxes(dim0, dim1))

    @staticmethod
    def backward(ctx, grad_output):
        return Transpose.apply(grad_output, *ctx.dims), None, None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # forward's view, which is also the backward's (lucid/_dynamo/flat.py)
        x, dim0, dim1 = args
        if x.dtype.kind == "c":
            return None

        def forward(x, dim0, dim1):
            return x.view() if dim0 == dim1 else x.swapaxes(dim0, dim1)

        def backward(grad, out, x, dim0, dim1):
            return forward(grad, dim0, dim1), None, None

        return forward, backward, Transpose


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dimensions `dim0` and `dim1` (a view)."""
    check_tensors(input)
    ndim = input._data.ndim
    return Transpose.apply(input, _normalize_dim(dim0, ndim), _normalize_dim(dim1, ndim))


swapaxes = transpose
swapdims = transpose


class TransposeInplace(Transpose):
    _backward_name = "TransposeBackward1"

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.mark_dirty(x)
        return _restride(x, Transpose.forward(ctx, x, dim0, dim1))


def transpose_(input: Tensor, dim0: int, dim1: int) -> Tensor:
    check_tensors(input)
    ndim = input._data.ndim
    return TransposeInplace.apply(input, _normalize_dim(dim0, ndim), _normalize_dim(dim1, ndim))


swapaxes_ = transpose_


swapdims_ = transpose_


class T(Function):
    _backward_name = "TBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data.T)

    @staticmethod
    def backward(ctx, grad_output):
        return T.apply(grad_output)

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the views forward and backward make (lucid/_dynamo/flat.py)
        if args[0].dtype.kind == "c":
            return None
        return (lambda x: x.T), (lambda grad, out, x: (grad.T,)), T


def t(input: Tensor) -> Tensor:
    """Transpose a matrix; 0-d and 1-d tensors come back as they are (as a view)."""
    try:
        ndim = input._data.ndim
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return T.apply(input)


class TInplace(T):
    _backward_name = "TBackward1"

    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return _restride(x, T.forward(ctx, x))


def t_(input: Tensor) -> Tensor:
    check_tensors(input)
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return TInplace.apply(input)


class Permute(Function):
    _backward_name = "PermuteBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return _wrap(x._data.transpose(dims))

    @staticmethod
    def backward(ctx, grad_output):
        return Permute.apply(grad_output, _inverse_permutation(ctx.dims)), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the views forward and backward make (lucid/_dynamo/flat.py)
        x, dims = args
        if x.dtype.kind == "c":
            return None
        inverse = _inverse_permutation(dims)

        def backward(grad, out, x, dims):
            return grad.transpose(inverse), None

        return (lambda x, dims: x.transpose(dims)), backward, Permute


def _inverse_permutation(dims: tuple[int, ...]) -> tuple[int, ...]:
    inverse = [0] * len(dims)
    for position, d in enumerate(dims):
        inverse[d] = position
    return tuple(inverse)


def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Reorder the dimensions: output dimension i is input dimension dims[i] (a view)."""
    check_tensors(input)
    ndim = input._data.ndim
    dims = tuple(dims)
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    dims = tuple(_normalize_dim(d, ndim) for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(input, dims)


def numpy_T(input: Tensor) -> Tensor:
    """`.T`: reverse all dimensions."""
    return Permute.apply(input, tuple(range(input._data.ndim - 1, -1, -1)))


def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Move dimensions `source` to positions `destination`, keeping the others in order."""
    check_tensors(input)
    ndim = input._data.ndim
    if isinstance(source, int) != isinstance(destination, int):
        raise _movedim_error(input, source, destination)
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
            f"contain the same number of dims as destination ({list(destination)} dims)"
        )
    source = tuple(_normalize_dim(d, ndim) for d in source)
    destination = tuple(_normalize_dim(d, ndim) for d in destination)
    if len(set(source)) != len(source):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(destination)) != len(destination):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if not ndim:
        from lucid.ops.indexing import Alias  # late import: indexing builds on this module

        return Alias.apply(input, (Ellipsis,), False)
    order = [-1] * ndim
    for src, dst in zip(source, destination):
        order[dst] = src
    rest = iter(d for d in range(ndim) if d not in source)
    order = [next(rest) if d < 0 else d for d in order]
    return Permute.apply(input, tuple(order))


moveaxis = movedim


def _movedim_error(input: Tensor, source: Any, destination: Any) -> TypeError:
    """PyTorch's TypeError for one dim and one sequence of dims: movedim takes two of a kind."""
    # lucid.moveaxis is movedim; Tensor.moveaxis names itself
    op = "moveaxis" if called_as_method("moveaxis") else "movedim"
    described = [described_with_items(value, type_word) for value in (source, destination)]
    as_ints = ", ".join(name if name == "int" else f"!{name}!" for name in described)
    # PyTorch's message marks a list of ints, too, as no tuple of ints
    as_tuples = ", ".join(f"!{name}!" for name in described)
    args: tuple = (source, destination)
    inputs = prefix = ""
    if not called_as_method(op):
        args = (input, *args)
        inputs, prefix = "Tensor input, ", "Tensor, "
    reason = "\n      didn't match because some of the arguments have invalid types: "
    return invalid_combination(op, args, (
        f"({inputs}int source, int destination){reason}({prefix}{as_ints})",
        f"({inputs}tuple of ints source, tuple of ints destination){reason}({prefix}{as_tuples})",
    ))  # fmt: skip


# ------------------------------------------------------------- expand family
class Expand(Function):
    _backward_name = "ExpandBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, shape):
        array = x._data
        ctx.input_shape = array.shape
        if not array.flags.c_contiguous:
            return _wrap(np.broadcast_to(array, shape))
        # np.broadcast_to costs ~10us of Python; the same read-only strided view built
        # directly over the input's memory costs ~1us, and expand runs in every sum backward.
        leading = len(shape) - array.ndim
        strides = [0] * leading
        for size, target, stride in zip(array.shape, shape[leading:], array.strides):
            strides.append(stride if size == target else 0)
        result = np.ndarray(shape, array.dtype, array, 0, tuple(strides))
        result.flags.writeable = False
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        # d/dx expand(x) sums the gradient over every broadcast copy
        return sum_to(grad_output, ctx.input_shape), None


def expand_shape(shape: tuple[int, ...], sizes: tuple[int, ...], dtype: np.dtype) -> tuple:
    """The shape `expand(sizes)` gives a tensor of `shape` and `dtype`, or PyTorch's error."""
    leading = len(sizes) - len(shape)
    if leading < 0:
        raise RuntimeError(
            f"expand({_TYPE_NAMES.get(dtype, 'Tensor')}{{{list(shape)}}}, size={list(sizes)}): "
            f"the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(shape)})"
        )
    target = list(sizes)
    has_negative = False
    # from the last dim, as PyTorch checks: a shape wrong in several dims names the last
    for index in range(len(sizes) - 1, -1, -1):
        size = sizes[index]
        if index < leading:
            if size == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size}) isn't allowed in a leading, "
                    f"non-existing dimension {index}"
                )
            if size < 0:
                has_negative = True
            continue
        current = shape[index - leading]
        if size == current:
            continue
        if size == -1:
            target[index] = current
        elif current != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) must match the existing size "
                f"({current}) at non-singleton dimension {index}.  Target sizes: {list(sizes)}."
                f"  Tensor sizes: {list(shape)}"
            )
        elif size < 0:
            has_negative = True
    if has_negative:
        # PyTorch takes a size below -1 as given, and its element count then fails
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(target)


def expand(input: Tensor, sizes: Sequence[int]) -> Tensor:
    """A broadcast view of `input` with `sizes` (-1 keeps a dimension's size)."""
    array = input._data
    sizes = tuple(sizes)
    if sizes == array.shape:
        return Expand.apply(input, sizes)
    return Expand.apply(input, expand_shape(array.shape, sizes, array.dtype))


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    check_tensors(input)
    return expand(input, _int_tuple(size, "broadcast_to", "size", 2))


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The inputs expanded to their common broadcast shape (views; unchanged where equal)."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    check_tensors(*tensors)
    shape = common_shape(*(t._data.shape for t in tensors))
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


class Repeat(Function):
    _backward_name = "RepeatBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, repeats):
        ctx.input_shape = x._data.shape
        ctx.repeats = repeats
        return _wrap(np.tile(x._data, repeats))

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.reduction import sum  # late import: reduction builds on this module

        # Each output dimension is (repeat, size) flattened: split it and sum the repeats.
        repeats = ctx.repeats
        shape = (1,) * (len(repeats) - len(ctx.input_shape)) + ctx.input_shape
        split_shape = []
        for repeat, size in zip(repeats, shape):
            split_shape += [repeat, size]
        grad = View.apply(grad_output, tuple(split_shape))
        if grad_output._data.size:
            grad = sum(grad, tuple(range(0, len(split_shape), 2)))
        else:
            grad = _wrap(np.zeros(shape, grad_output._data.dtype))
        return View.apply(grad, ctx.input_shape), None


def repeat(input: Tensor, repeats: Sequence[int]) -> Tensor:
    """Tile `input` `repeats[i]` times along each dimension (leading repeats add dimensions)."""
    repeats = tuple(repeats)
    shape = input._data.shape
    if len(repeats) < len(shape):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(repeats) - len(shape)) + shape
    target = [r * s for r, s in zip(repeats, padded)]
    for size, r in zip(target, repeats):
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {target}")
    # PyTorch's errors for a size past int64 (before NumPy tiles a part of it), or the bytes
    # the machine lacks (NumPy's MemoryError quotes its intermediate shapes)
    nbytes = storage_bytes(tuple(target), input._data.dtype)
    try:
        return Repeat.apply(input, repeats)
    except MemoryError:
        pass
    raise allocation_error(nbytes)


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Like repeat, but a short `dims` is padded with leading ones."""
    check_tensors(input)
    dims = tuple(dims)
    ndim = input._data.ndim
    if len(dims) < ndim:
        dims = (1,) * (ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:  # fmt: skip
    """Each element (or slice along `dim`) repeated `repeats` times in place; a tensor of
    counts alone repeats its positions: repeat_interleave(tensor([1, 2])) is tensor([0, 1, 1])."""
    from lucid.ops.indexing import index_select  # late import: indexing builds on this module

    check_tensors(input)
    if repeats is None:
        counts = input._data
        if counts.dtype.kind not in "iu":
            raise not_implemented("repeat_interleave_cpu", counts.dtype)
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return _wrap(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input = reshape(input, (-1,))
        dim = 0
    dim = _normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim] if input._data.ndim else 1
    if isinstance(repeats, TensorBase):
        counts = repeats._data
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.ndim == 1 and counts.size != 1 and counts.size != size:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {counts.size} and input.size({dim}) = {size}"
            )
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        if counts.ndim == 0 or counts.size == 1:
            repeats = int(counts.reshape(()))
        else:
            positions = np.repeat(np.arange(size, dtype=np.int64), counts)
            return index_select(input, dim, _wrap(positions))
    repeats = operator.index(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if input._data.ndim == 0:
        input = reshape(input, (1,))
    shape = input._data.shape
    # Each slice along dim repeated as a broadcast copy, then merged: one copy of the result.
    expanded = expand(unsqueeze(input, dim + 1), shape[: dim + 1] + (repeats,) + shape[dim + 1 :])
    merged = shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1 :]
    return View.apply(contiguous(expanded), merged)


def _check_narrow_arguments(input: Tensor, dim: Any, start: Any, length: Any) -> None:
    """PyTorch's TypeError for a dim, start or length that fits neither narrow overload (start
    a tensor, or an int), each argument marked where it does not fit that overload."""
    fits_int = [is_int(value) for value in (dim, start, length)]
    start_is_tensor = isinstance(start, TensorBase)
    if fits_int[0] and fits_int[2] and (fits_int[1] or start_is_tensor):
        return
    args = (input, dim, start, length)
    reasons = []
    for start_kind, start_fits in (("Tensor", start_is_tensor), ("int", fits_int[1])):
        marks = [True, fits_int[0], start_fits, fits_int[2]]
        words = [
            type_word(arg) if fits else f"!{type_word(arg)}!" for arg, fits in zip(args, marks)
        ]
        reasons.append(
            f"(Tensor input, int dim, {start_kind} start, int length)\n      didn't match because "
            f"some of the arguments have invalid types: ({', '.join(words)})"
        )
    raise invalid_combination("narrow", args, reasons)


def narrow(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """The view of `length` entries of dimension `dim` from `start`."""
    check_tensors(input)
    from lucid.ops.indexing import Slice  # late import: indexing builds on this module

    _check_narrow_arguments(input, dim, start, length)
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _normalize_dim(dim, len(shape))
    size = shape[dim]
    start = int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    index = (slice(None),) * dim + (slice(start, start + length), Ellipsis)
    return Slice.apply(input, index, False)


# ------------------------------------------------------------------------- flip / roll
class Flip(Function):
    _backward_name = "FlipBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        # PyTorch's flip returns new storage, so the NumPy view is copied.
        array = x._data
        return _wrap(np.flip(array, dims).copy() if array.ndim else array.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return Flip.apply(grad_output, ctx.dims), None


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Reverse the order of entries along `dims`."""
    check_tensors(input)
    return Flip.apply(input, _dims_tuple(dims, input._data.ndim))


class Roll(Function):
    _backward_name = "RollBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts = shifts
        ctx.dims = dims
        array = x._data
        if dims is None:
            return _wrap(np.roll(array.reshape(-1), shifts).reshape(array.shape))
        return _wrap(np.roll(array, shifts, dims))

    @staticmethod
    def backward(ctx, grad_output):
        shifts = tuple(-shift for shift in ctx.shifts)
        return Roll.apply(grad_output, shifts, ctx.dims), None, None


def _int_tuple(values: Any, op: str, name: str, position: int) -> tuple[int, ...]:
    """`values` (an int or a sequence of ints) as a tuple, or PyTorch's TypeError."""
    if is_int(values):
        return (int(values),)
    if not isinstance(values, tuple | list):
        raise TypeError(f"{op}(): argument '{name}' (position {call_position(op, position)}) "
                        f"must be tuple of ints, not {type(values).__name__}")  # fmt: skip
    for index, value in enumerate(values):
        if not is_int_list_item(value, index):
            raise int_list_item_error(op, name, position, index, value)
    return tuple(int(value) for value in values)


def roll(
    input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
) -> Tensor:
    """Shift entries cyclically along `dims` (over the flattened tensor when dims is None)."""
    if shifts.__class__ is int:
        shifts = (shifts,)
    else:
        shifts = _int_tuple(shifts, "roll", "shifts", 2)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(input, shifts, None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    ndim = input._data.ndim
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return Roll.apply(input, shifts, tuple(_normalize_dim(d, ndim) for d in dims))


# ---------------------------------------------------------- rot90, fliplr/flipud, meshgrid
class Rot90(Function):
    _backward_name = "Rot90Backward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, k, dims):
        ctx.k, ctx.dims = k, dims
        # PyTorch's rot90 returns new storage, so the NumPy view is copied
        return _wrap(np.rot90(x._data, k, dims).copy())

    @staticmethod
    def backward(ctx, grad_output):
        # rotating back by -k undoes the rotation
        return Rot90.apply(grad_output, -ctx.k, ctx.dims), None, None


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees `k` times in the plane of `dims`, from the first towards the second."""
    check_tensors(input)
    check_int(k, "rot90", "k", 2)
    if is_int(dims):
        raise TypeError(
            f"rot90(): argument 'dims' (position {call_position('rot90', 3)}) must be tuple of "
            f"ints, not {type_word(dims)}"
        )
    dims = _int_tuple(dims, "rot90", "dims", 3)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    # the same dim, also when written once from each end (0 and -ndim); other dims out of
    # range are then an IndexError
    if dims[0] == dims[1] or ((dims[0] < 0) != (dims[1] < 0) and abs(dims[0] - dims[1]) == ndim):
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    dims = (_normalize_dim(dims[0], ndim), _normalize_dim(dims[1], ndim))
    return Rot90.apply(input, int(k) % 4, dims)


def fliplr(input: Tensor) -> Tensor:
    """Reverse the order of columns (dim 1)."""
    check_tensors(input)
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return Flip.apply(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """Reverse the order of rows (dim 0)."""
    check_tensors(input)
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return Flip.apply(input, (0,))


def _tensor_list(tensors: tuple) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 1-d tensors: with indexing "ij" output k varies along dim k; with
    "xy" the first two dims are swapped (matrix vs Cartesian indexing)."""
    import warnings

    tensors = _tensor_list(tensors)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for tensor in tensors:
        check_tensors(tensor)
    if indexing is None:
        warnings.warn(
            "lucid.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'lucid.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for tensor in tensors:
        if tensor._data.ndim > 1:
            raise RuntimeError(
                f"lucid.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {tensor!r}"
            )
    if len({tensor._data.dtype for tensor in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ordered = list(tensors)
    if swap:
        ordered[0], ordered[1] = ordered[1], ordered[0]
    sizes = tuple(t._data.size for t in ordered)
    grids = []
    for dim, tensor in enumerate(ordered):
        shape = [1] * len(ordered)
        shape[dim] = -1
        grids.append(expand(reshape(tensor, shape), sizes))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def ravel(input: Tensor) -> Tensor:
    """The elements as one dimension, in row-major order (a view when input is contiguous)."""
    check_tensors(input)
    return view(contiguous(input), (-1,))


# ---------------------------------------------------------------- sliding windows
class Unfold(Function):
    """Every window of `size` entries along `dim`, `step` apart: the windows index `dim` and
    a new last dimension holds each window's entries (a strided view, as in PyTorch)."""

    _backward_name = "UnfoldBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dim, size, step):
        array = x._data
        ctx.input_shape = array.shape
        ctx.window = (dim, size, step)
        if array.ndim == 0:
            return _wrap(array.reshape(1))
        count = (array.shape[dim] - size) // step + 1
        shape = array.shape[:dim] + (count,) + array.shape[dim + 1 :] + (size,)
        strides = (
            array.strides[:dim]
            + (array.strides[dim] * step,)
            + array.strides[dim + 1 :]
            + (array.strides[dim],)
        )
        return _wrap(np.lib.stride_tricks.as_strided(array, shape, strides, writeable=False))

    @staticmethod
    def backward(ctx, grad_output):
        dim, size, step = ctx.window
        return UnfoldBackward.apply(grad_output, ctx.input_shape, dim, size, step), None, None, None


class UnfoldBackward(Function):
    """Unfold's adjoint: each window entry's gradient added back at the entry it came from."""

    _backward_name = "UnfoldBackwardBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, grad, input_shape, dim, size, step):
        ctx.window = (dim, size, step)
        array = grad._data
        if not input_shape:
            return _wrap(array.reshape(()).copy())
        result = np.zeros(input_shape, array.dtype)
        count = array.shape[dim]
        moved = np.moveaxis(result, dim, -1)
        windows = np.moveaxis(array, dim, -2)
        # One vectorised add per offset within the window; the entries one offset touches
        # are distinct, so plain slice assignment adds them all.
        for offset in range(size):
            moved[..., offset : offset + step * (count - 1) + 1 : step] += windows[..., offset]
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        dim, size, step = ctx.window
        return Unfold.apply(grad_output, dim, size, step), None, None, None, None


class _Required:
    """The default of an argument PyTorch requires, so that leaving it out raises PyTorch's
    error (`missing_arguments`) rather than Python's."""

    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()


def missing_arguments(op: str, names: dict[str, Any]) -> None:
    """PyTorch's TypeError for required arguments left out (its parser's wording, singular and
    plural as it has them)."""
    missing = [name for name, value in names.items() if value is REQUIRED]
    if missing:
        quoted = ", ".join(f'"{name}"' for name in missing)
        plural = "s" if len(missing) == 1 else ""
        raise TypeError(
            f"{op}() missing {len(missing)} required positional argument{plural}: {quoted}"
        )


def unfold(input: Tensor, dimension: int = REQUIRED, size: int = REQUIRED,
           step: int = REQUIRED) -> Tensor:  # fmt: skip
    """Tensor.unfold: the windows of `size` entries along `dimension`, `step` apart."""
    missing_arguments("unfold", {"dimension": dimension, "size": size, "step": step})
    check_tensors(input)
    check_int(dimension, "unfold", "dimension", 2)
    check_int(size, "unfold", "size", 3)
    check_int(step, "unfold", "step", 4)
    shape = input._data.shape
    dim = _normalize_dim(dimension, max(len(shape), 1))
    length = shape[dim] if shape else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {dim} is {length} but size is {size}"
        )
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return Unfold.apply(input, dim, int(size), int(step))


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims: their transpose, for a real tensor."""
    check_tensors(input)
    ndim = input._data.ndim
    if ndim == 0:
        warnings.warn(
            "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return input.conj()
    if ndim < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got "
            f"{ndim}-D tensor."
        )
    return transpose(input, -2, -1).conj()
