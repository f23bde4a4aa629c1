"""Pointwise ops: math functions, activations, comparisons, logical ops, where, clamp, casts."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import dtypes
from lucid._tensor import Tensor, _wrap
from lucid.autograd.function import Function
from lucid.ops._promote import binary_arrays, float_array, scalar_value
from lucid.ops.broadcast import broadcast_error, sum_to

__all__ = ["exp", "log", "tanh", "where", "eq", "ne", "lt", "le", "gt", "ge", "to", "clone",
           "contiguous", "zeros_like_grad"]  # fmt: skip


class Exp(Function):
    _backward_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.exp(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx exp(x) = exp(x)
        return grad_output * result


def exp(input: Tensor) -> Tensor:
    return Exp.apply(input)


class Log(Function):
    _backward_name = "LogBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.log(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log(x) = 1/x
        return grad_output / x


def log(input: Tensor) -> Tensor:
    return Log.apply(input)


class Tanh(Function):
    _backward_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.tanh(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx tanh(x) = 1 - tanh(x)^2
        return grad_output * (1.0 - result * result)


def tanh(input: Tensor) -> Tensor:
    return Tanh.apply(input)


class Where(Function):
    _backward_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, a, b):
        x, y = binary_arrays(a, b)
        ctx.save_for_backward(condition)
        ctx.a_shape = a._data.shape if isinstance(a, Tensor) else ()
        ctx.b_shape = b._data.shape if isinstance(b, Tensor) else ()
        try:
            return _wrap(np.where(condition._data, x, y))
        except ValueError:
            raise broadcast_error(condition._data.shape, np.broadcast_shapes(
                np.shape(x), np.shape(y))) from None  # fmt: skip

    @staticmethod
    def backward(ctx, grad_output):
        (condition,) = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[1]:
            grad_a = sum_to(where(condition, grad_output, 0.0), ctx.a_shape)
        if ctx.needs_input_grad[2]:
            grad_b = sum_to(where(condition, 0.0, grad_output), ctx.b_shape)
        return None, grad_a, grad_b


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Elements of `input` where `condition` holds, else of `other`."""
    if input is None and other is None:
        return tuple(_wrap(index) for index in np.nonzero(condition._data))
    if condition._data.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype}"
        )
    return Where.apply(condition, scalar_value(input), scalar_value(other))


class _Comparison(Function):
    """Comparisons have boolean outputs, so they never record a node."""

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("comparison ops are not differentiable")


def _compare(ufunc: Any, input: Any, other: Any) -> Tensor:
    x, y = binary_arrays(input, scalar_value(other))
    try:
        return _wrap(ufunc(x, y))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


def eq(input: Tensor, other: Any) -> Tensor:
    return _compare(np.equal, input, other)


def ne(input: Tensor, other: Any) -> Tensor:
    return _compare(np.not_equal, input, other)


def lt(input: Tensor, other: Any) -> Tensor:
    return _compare(np.less, input, other)


def le(input: Tensor, other: Any) -> Tensor:
    return _compare(np.less_equal, input, other)


def gt(input: Tensor, other: Any) -> Tensor:
    return _compare(np.greater, input, other)


def ge(input: Tensor, other: Any) -> Tensor:
    return _compare(np.greater_equal, input, other)


class To(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, numpy_dtype, copy):
        ctx.input_dtype = x.dtype
        return _wrap(x._data.astype(numpy_dtype, copy=copy))

    @staticmethod
    def backward(ctx, grad_output):
        return to(grad_output, ctx.input_dtype), None, None


def to(input: Tensor, *args: Any, dtype: Any = None, copy: bool = False,
       non_blocking: bool = False, device: Any = None, memory_format: Any = None) -> Tensor:  # fmt: skip
    """Cast to a dtype (device arguments other than 'cpu' are not supported)."""
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, str) or arg is None:
            if arg not in (None, "cpu"):
                raise RuntimeError(f"lucid runs on the CPU only; got device '{arg}'")
        elif isinstance(arg, bool):
            copy = copy
        else:
            dtype = arg
    if dtype is None:
        return input.clone() if copy else input
    target = dtypes.to_numpy_dtype(dtype)
    if target == input._data.dtype and not copy:
        return input
    return To.apply(input, target, True)


class Clone(Function):
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    return Clone.apply(input)


def contiguous(input: Tensor) -> Tensor:
    if input._data.flags.c_contiguous:
        return input
    return Clone.apply(input)


def zeros_like_grad(grad_output: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A zero gradient of `shape` that stays in the graph of `grad_output` (for double backward)."""
    return sum_to(grad_output * 0.0, shape)
