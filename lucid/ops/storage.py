"""resize_ and its kin: a tensor's new shape laid over its storage, as PyTorch's resize_ lays it.

A tensor's storage is the memory its root's array spans (the tensor's own array, or its base's
for a view), from the lowest address up. `resize_` reads the new shape from the tensor's first
element on, in memory order and row-major, ignoring the old strides. Within the storage the
tensor becomes a view of it, so the storage keeps its other elements and other views keep
theirs. Past its end the storage must grow, which NumPy cannot do for memory other arrays see:
lucid then gives the tensor new memory when nothing else holds the old one (no view or base, no
`detach()` or `.data` alias, no NumPy array), and raises where PyTorch would reallocate the
storage that all of them share.
"""

from __future__ import annotations

import math
import operator
import sys
import warnings
from functools import reduce
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes, layouts
from lucid._core.arguments import call_position
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.grad_mode import local_state
from lucid._core.graph import _INFERENCE_INPLACE_MESSAGE
from lucid._core.tensor import TensorBase, _wrap
from lucid.factories import is_lent
from lucid.ops.shape import reshape

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["resize_as_"]

_MAX_SIZE = 2**63 - 1


def torch_class_name(cls: type) -> str:
    """A class's name as PyTorch's argument errors print it (the C name of the type): `int`,
    `Tensor`, `numpy.ndarray`, and `lucid.dtype` where torch's is a C type (`torch.dtype`)."""
    module = cls.__module__
    if module.startswith("lucid._core."):
        return f"lucid.{cls.__name__}"
    if module == "numpy" or module.startswith("numpy."):
        return f"numpy.{cls.__name__}"
    return cls.__name__


def torch_type_name(value: Any) -> str:
    """The name of a value's type as PyTorch's argument errors print it."""
    return torch_class_name(type(value))


def is_index(value: Any) -> bool:
    """Whether PyTorch takes `value` as an int where sizes go (bool is no size of its own)."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, int):
        return True
    if not hasattr(type(value), "__index__"):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def unpack_sizes(op: str, values: Any) -> tuple[int, ...]:
    """`values` as a shape, with PyTorch's error for an element that is no int."""
    shape = []
    for position, value in enumerate(values, 1):
        if not (is_index(value) or isinstance(value, bool)):
            raise TypeError(
                f"{op}(): argument 'size' failed to unpack the object at pos {position} with "
                f'error "type must be tuple of ints,but got {torch_type_name(value)}"'
            )
        shape.append(operator.index(value))
    return tuple(shape)


def _resize_shape(sizes: tuple) -> tuple[int, ...]:
    """resize_'s `*sizes` (ints, or one sequence of them) as a shape, with PyTorch's errors."""
    if not sizes:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    first = sizes[0]
    if is_index(first):
        shape = unpack_sizes("resize_", sizes)
    elif len(sizes) > 1:
        raise TypeError(f"resize_() takes 1 positional argument but {len(sizes)} were given")
    elif isinstance(first, tuple | list):
        shape = unpack_sizes("resize_", first)
    else:
        raise TypeError(
            "resize_(): argument 'size' (position 1) must be tuple of ints, not "
            f"{torch_type_name(first)}"
        )
    numel = math.prod(shape)
    if numel < 0 or numel > _MAX_SIZE:
        raise RuntimeError("numel: integer multiplication overflow")
    for size in shape:
        if size < 0:
            # PyTorch makes a tensor of this shape (it has no elements); NumPy cannot.
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {size}: {list(shape)}"
            )
    return shape


def _memory_order(op: str, memory_format: Any, ndim: int) -> tuple[int, ...] | None:
    """The order in which a memory format keeps the dims in memory (None: row-major)."""
    if memory_format is None or memory_format is layouts.contiguous_format:
        return None
    if not isinstance(memory_format, layouts.memory_format):
        raise TypeError(
            f"{op}(): argument 'memory_format' must be lucid.memory_format, not "
            f"{torch_type_name(memory_format)}"
        )
    if memory_format is layouts.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    rank = 4 if memory_format is layouts.channels_last else 5
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format")
    return (0, *range(2, ndim), 1)


def _has_layout(array: np.ndarray, order: tuple[int, ...] | None) -> bool:
    if order is None:
        return array.flags.c_contiguous
    return array.transpose(order).flags.c_contiguous


# ------------------------------------------------------------------ the storage
class _Span:
    """Bytes of an array's memory offered to NumPy through the array interface; `base` keeps
    the array alive. A uint8 array over a span is a storage that resize_ laid tensors out on."""

    __slots__ = ("base", "__array_interface__")

    def __init__(self, array: np.ndarray, start: int, length: int) -> None:
        self.base = array
        self.__array_interface__ = {
            "data": (start, not array.flags.writeable),
            "shape": (length,),
            "typestr": "|u1",
            "version": 3,
        }


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _memory(array: np.ndarray) -> tuple[int, int]:
    """(lowest address, length in bytes) of the memory `array`'s elements span."""
    start = _address(array)
    if array.size == 0:
        return start, 0
    low = high = 0
    for size, stride in zip(array.shape, array.strides):
        low += min(0, (size - 1) * stride)
        high += max(0, (size - 1) * stride)
    return start + low, high - low + array.itemsize


def _storage(tensor: Tensor) -> tuple[np.ndarray, int, int]:
    """(an array whose memory holds it, first address, length in bytes) of `tensor`'s storage.

    The storage is its root's (itself, or its base's for a view): the storage an earlier
    resize_ laid the root out on, else the memory the root's array spans."""
    array = tensor._data if tensor._base is None else tensor._base._data
    base = array.base
    if isinstance(base, np.ndarray) and isinstance(base.base, _Span):
        array = base
        start, length = _address(base), base.size
    else:
        start, length = _memory(array)
    if not 0 <= _address(tensor._data) - start <= length:
        # a view no longer inside its base (whose array was replaced): its own memory
        array = tensor._data
        start, length = _memory(array)
    return array, start, length


def storage_extent(tensor: Tensor) -> tuple[int, int]:
    """(first address, length in bytes) of `tensor`'s storage; the tensor starts in it."""
    _, start, length = _storage(tensor)
    return start, length


def _storage_bytes(tensor: Tensor) -> np.ndarray:
    """The bytes of `tensor`'s storage, as a uint8 array over the same memory."""
    array, start, length = _storage(tensor)
    if isinstance(array.base, _Span):
        return array
    return np.asarray(_Span(array, start, length))


def _reference_counts(array: np.ndarray) -> list[int]:
    """The references to `array` and to each array (or span) its memory is held through; -1 at
    an object that is neither (memory NumPy was lent by something else)."""
    counts = []
    link: Any = array
    while link is not None:
        if not isinstance(link, np.ndarray | _Span):
            counts.append(-1)
            break
        counts.append(sys.getrefcount(link))
        link = link.base
    return counts


# What the counts are when each link has one holder (a tensor, or the link before it),
# measured here because they depend on the interpreter.
_probe = _wrap(np.empty(2)[:1])
_ALONE = _reference_counts(_probe._data)
del _probe


def _is_sole_holder(tensor: Tensor) -> bool | None:
    """Whether nothing but `tensor` reaches its memory (None: NumPy was lent the memory, or
    the tensor was made by from_numpy)."""
    if is_lent(tensor._data):
        return None
    counts = _reference_counts(tensor._data)
    if -1 in counts:
        return None
    return counts[0] <= _ALONE[0] and all(count <= _ALONE[1] for count in counts[1:])


# ------------------------------------------------------------------ resize_
class ResizeInplace(Function):
    """The tensor's new shape over its storage, from its first element on (module docstring).
    Never recorded: resize_ refuses tensors that require grad."""

    _complex_rule = HOLOMORPHIC

    _op_name = "resize_"

    @staticmethod
    def forward(ctx, x, shape, order, offset, grows):
        ctx.mark_dirty(x)
        count = math.prod(shape)
        storage = _storage_bytes(x)
        if grows:
            # New memory, zeroed where PyTorch leaves it uninitialised; nothing else sees the
            # old storage, so only the part from the tensor's first element on is kept.
            fresh = np.zeros(count, x._data.dtype)
            kept = storage[offset:]
            fresh.view(np.uint8)[: kept.size] = kept
            flat = fresh
        else:
            flat = storage[offset : offset + count * x._data.itemsize].view(x._data.dtype)
        if order is None:
            x._data = flat.reshape(shape)
        else:
            stored = flat.reshape(tuple(shape[axis] for axis in order))
            x._data = stored.transpose(tuple(np.argsort(order)))
        return x


def _resize(input: Tensor, shape: tuple[int, ...], memory_format: Any, op: str) -> Tensor:
    order = _memory_order(op, memory_format, len(shape))
    if input._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == input._data.shape and (memory_format is None or _has_layout(input._data, order)):
        # PyTorch leaves a tensor of this size as it is: same strides, no new version.
        if input.is_inference() and not local_state.inference:
            raise RuntimeError(_INFERENCE_INPLACE_MESSAGE)
        return input
    start, length = storage_extent(input)
    offset = _address(input._data) - start
    needed = offset + math.prod(shape) * input._data.itemsize
    grows = needed > length
    # No local name may hold input's array here: _is_sole_holder counts its holders.
    if grows:
        sole = _is_sole_holder(input) if input._base is None else False
        if sole is None:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if not sole:
            shared = "a view" if input._base is not None else "a tensor"
            raise RuntimeError(
                f"resize_(): lucid cannot grow {shared} from {length} to {needed} bytes of "
                "storage while other tensors or arrays share that storage (a view or base, a "
                "detach() or .data alias, a NumPy array): PyTorch would reallocate it for all "
                "of them, and NumPy cannot reallocate memory that other arrays see. Resize a "
                "clone() instead, or resize before sharing the tensor."
            )
    return ResizeInplace.apply(input, shape, order, offset, grows)


def resize_(input: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give `input` the shape `sizes` over its storage (the module docstring has the rules).

    Growing keeps the old elements in storage order; the new ones are uninitialised in PyTorch
    and zeros in lucid. Raises where the storage must grow but is shared (PyTorch reallocates
    it for every tensor that shares it; NumPy cannot).
    """
    return _resize(input, _resize_shape(sizes), memory_format, "resize_")


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """`input.resize_(the_template.size())`."""
    _check_resize_as("input", 1, input)
    _check_resize_as("the_template", 2, the_template)
    return _resize(input, the_template._data.shape, memory_format, "resize_as_")


def _check_resize_as(name: str, position: int, value: Any) -> None:
    if not isinstance(value, TensorBase):
        raise TypeError(
            f"resize_as_(): argument '{name}' (position {call_position('resize_as_', position)}) "
            "must be Tensor, not "
            f"{torch_type_name(value)}"
        )


def storage_offset(input: Tensor) -> int:
    """Where `input` starts in its storage, in elements."""
    start, _ = storage_extent(input)
    return (_address(input._data) - start) // input._data.itemsize


# ------------------------------------------------------- the deprecated resize
class Resize(Function):
    """PyTorch's deprecated out-of-place resize: a view of the same elements in a new shape."""

    _op_name = "resize"
    _backward_name = "ResizeBackward"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, sizes):
        if not sizes:
            # PyTorch's resize is x.view(*sizes): a view of no sizes is its TypeError.
            _wrap(x._data).view()
        # PyTorch multiplies `sizes` as given, so resize((2, 3)) fails as it does there.
        numel = reduce(operator.mul, sizes, 1)
        if x._data.size != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), "
                f"but the given tensor has a size of {'x'.join(map(str, x._data.shape))} "
                f"({x._data.size} elements). autograd's resize can only change the shape of a "
                "given tensor, while preserving the number of elements. "
            )
        ctx.input_shape = x._data.shape
        return _wrap(np.ascontiguousarray(x._data).reshape(sizes))

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx.input_shape), None


def resize(input: Tensor, *sizes: Any) -> Tensor:
    """Deprecated in PyTorch (it warns): `input` reshaped to `sizes`, which keep its numel."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(input, sizes)


def resize_as(input: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated in PyTorch (it warns): `input` reshaped to `tensor`'s shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(input, tuple(tensor.size()))


def view_dtype(input: Tensor, dtype: Any) -> Tensor:
    """`input`'s bits read as `dtype` (Tensor.view(dtype)): the same memory, sharing the version
    counter, and no gradient (PyTorch's view.dtype is not differentiable). A different element
    size scales the last dimension, which must then be contiguous."""
    data = input._data
    target = dtypes.to_numpy_dtype(dtype)
    source = data.dtype
    if target.itemsize != source.itemsize:
        names = dtypes.SCALAR_TYPE_NAMES
        what = (
            f"to view {names[dtypes.from_numpy_dtype(source).name]} as "
            f"{names[dtypes.from_numpy_dtype(target).name]} (different element sizes)"
        )
        if data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        stride = data.strides[-1] // source.itemsize if data.shape[-1] > 1 else 1
        if stride != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride}")
        ratio = target.itemsize // source.itemsize
        if ratio > 1:
            if data.shape[-1] % ratio:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {ratio} {what}, but got {data.shape[-1]}"
                )
            offset = input.storage_offset()
            if offset % ratio:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}"
                )
            for dim, step in enumerate(data.strides[:-1]):
                if (step // source.itemsize) % ratio:
                    raise RuntimeError(
                        f"self.stride({dim}) must be divisible by {ratio} {what}, but got "
                        f"{step // source.itemsize}"
                    )
        if data.shape[-1] == 1 and data.strides[-1] != source.itemsize:
            # a single column of a wider array: NumPy views only a contiguous last axis
            data = np.lib.stride_tricks.as_strided(
                data, data.shape, data.strides[:-1] + (source.itemsize,)
            )
    result = _wrap(data.view(target))
    result._version_counter = input._version_counter
    return result
