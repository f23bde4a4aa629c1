"""sum_to: the one place that undoes broadcasting in backward; and broadcast error messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lucid._core.tensor import Size

if TYPE_CHECKING:
    from lucid._tensor import Tensor


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Sum `grad` over the dimensions that broadcasting expanded, giving `shape`."""
    shape = tuple(shape)
    grad_shape = grad._data.shape
    if grad_shape == shape:
        return grad
    leading = len(grad_shape) - len(shape)
    dims = list(range(leading))
    for index, size in enumerate(shape):
        if size == 1 and grad_shape[leading + index] != 1:
            dims.append(leading + index)
    from lucid.ops.reduction import sum  # late import: reduction builds on this module
    from lucid.ops.shape import reshape

    reduced = sum(grad, tuple(dims), keepdim=True) if dims else grad
    return reshape(reduced, shape)


def broadcast_error(shape_a: Sequence[int], shape_b: Sequence[int]) -> RuntimeError:
    """PyTorch's message for shapes that cannot broadcast, naming the first bad dimension."""
    shape_a, shape_b = tuple(shape_a), tuple(shape_b)
    ndim = max(len(shape_a), len(shape_b))
    padded_a = (1,) * (ndim - len(shape_a)) + shape_a
    padded_b = (1,) * (ndim - len(shape_b)) + shape_b
    for dim in range(ndim - 1, -1, -1):
        size_a, size_b = padded_a[dim], padded_b[dim]
        if size_a != size_b and size_a != 1 and size_b != 1:
            return RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                f"at non-singleton dimension {dim}"
            )
    return RuntimeError(f"shapes {list(shape_a)} and {list(shape_b)} cannot be broadcast")


def common_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape an op's operands broadcast to, or the op's broadcast error (the message
    torch's ops give, which differs from broadcast_shapes')."""
    result: tuple[int, ...] = ()
    for shape in shapes:
        shape = tuple(shape)
        ndim = max(len(result), len(shape))
        a = (1,) * (ndim - len(result)) + result
        b = (1,) * (ndim - len(shape)) + shape
        merged = []
        for size_a, size_b in zip(a, b):
            if size_a != size_b and size_a != 1 and size_b != 1:
                raise broadcast_error(result, shape)
            merged.append(size_b if size_a == 1 else size_a)
        result = tuple(merged)
    return result


def broadcast_shapes(*shapes: Sequence[int] | int) -> Size:
    """The shape the given shapes broadcast to (PyTorch's torch.broadcast_shapes); an int is a
    shape of one dimension."""
    result: tuple[int, ...] = ()
    for index, given in enumerate(shapes):
        shape = (given,) if isinstance(given, int) else tuple(given)
        if any(size < 0 for size in shape):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        ndim = max(len(result), len(shape))
        a = (1,) * (ndim - len(result)) + result
        b = (1,) * (ndim - len(shape)) + shape
        merged = []
        for dim, (size_a, size_b) in enumerate(zip(a, b)):
            if size_a != size_b and size_a != 1 and size_b != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size_b} at {dim - ndim}! "
                    f"Mismatching argument at index {index} had {given}; but expected shape "
                    f"should be broadcastable to {list(result)}"
                )
            merged.append(size_b if size_a == 1 else size_a)
        result = tuple(merged)
    return Size(result)
