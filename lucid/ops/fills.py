"""Whole-tensor writes and copies: the in-place-only fills (fill_, zero_, copy_, uniform_,
normal_), which replace a tensor's values rather than compute from them, and the copies and
casts (clone, contiguous, to) that every other family's backward uses."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import devices, dtypes, layouts
from lucid._core.devices import check_device
from lucid._core.function import Function
from lucid._core.random import _rng
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import check_tensors, zeros_like_grad
from lucid.ops._common import not_implemented as _not_implemented
from lucid.ops._promote import scalar_value
from lucid.ops.broadcast import broadcast_shapes, sum_to

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "clone", "fill_", "zero_", "fill",
]  # fmt: skip


# --------------------------------------------------------------------- casts
class To(Function):
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, numpy_dtype, copy):
        ctx.input_dtype = x._data.dtype
        return _wrap(x._data.astype(numpy_dtype, copy=copy))

    @staticmethod
    def backward(ctx, grad_output):
        return to(grad_output, ctx.input_dtype), None, None


def _cast_target(dtype: Any) -> np.dtype:
    # A Python float type means float64 here (as in PyTorch), not the default dtype.
    if dtype is builtins.float:
        return np.dtype(np.float64)
    return dtypes.to_numpy_dtype(dtype)


def to(input: Tensor, *args: Any, dtype: Any = None, copy: bool = False,
       non_blocking: bool = False, device: Any = None,
       memory_format: Any = None) -> Tensor:  # fmt: skip
    """Cast to a dtype, or to another tensor's dtype (only the 'cpu' device holds tensors).

    Accepts the forms to(dtype), to(device, dtype), to(other) and positional
    `non_blocking, copy` flags after them, as PyTorch does.
    """
    flags = []
    for arg in args:
        if isinstance(arg, TensorBase):
            dtype = arg.dtype
        elif isinstance(arg, bool):
            flags.append(arg)
        elif isinstance(arg, str | int | devices.device) or arg is None:
            # a device, or an int naming an accelerator's device index
            check_device(arg)
        else:
            dtype = arg
    if len(flags) > 1:
        copy = flags[1]
    check_device(device)
    if dtype is None:
        return input.clone() if copy else input
    target = _cast_target(dtype)
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


class CloneChannelsLast(Function):
    """A copy whose memory holds the channel dim (dim 1) last, as channels_last asks."""

    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        array = x._data
        order = (0, *range(2, array.ndim), 1)
        stored = np.ascontiguousarray(array.transpose(order))
        return _wrap(stored.transpose(np.argsort(order)))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def contiguous(input: Tensor, memory_format: Any = layouts.contiguous_format) -> Tensor:
    if memory_format is layouts.channels_last or memory_format is layouts.channels_last_3d:
        rank = 4 if memory_format is layouts.channels_last else 5
        if input._data.ndim != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format")
        return CloneChannelsLast.apply(input)
    if input._data.flags.c_contiguous:
        return input
    return Clone.apply(input)


# ------------------------------------------------------------------- fills
class FillInplace(Function):
    """Fill with a Python number: the result no longer depends on the old values."""

    _op_name = "fill_"
    _backward_name = "FillBackward2"

    @staticmethod
    def forward(ctx, x, value):
        ctx.mark_dirty(x)
        x._data.fill(value)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape), None


class FillTensorInplace(Function):
    """Fill with a 0-d tensor, which receives the sum of the gradient."""

    _op_name = "fill_"
    _backward_name = "FillBackward3"

    @staticmethod
    def forward(ctx, x, value):
        ctx.mark_dirty(x)
        x._data[...] = value._data
        ctx.value_dtype = value._data.dtype
        return x

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.reduction import sum

        grad_value = None
        if ctx.needs_input_grad[1]:
            grad_value = to(sum(grad_output), ctx.value_dtype)
        return zeros_like_grad(grad_output, grad_output.shape), grad_value


def fill_(input: Tensor, value: Any) -> Tensor:
    """Set every element to `value` (a number or a 0-d tensor)."""
    if isinstance(value, TensorBase):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        return FillTensorInplace.apply(input, value)
    return FillInplace.apply(input, scalar_value(value))


class ZeroInplace(Function):
    _op_name = "zero_"
    _backward_name = "ZeroBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        x._data.fill(0)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape)


def zero_(input: Tensor) -> Tensor:
    return ZeroInplace.apply(input)


class CopyInplace(Function):
    """Copy src (broadcast to self's shape, cast to self's dtype) into self."""

    _op_name = "copy_"
    _backward_name = "lucid::autograd::CopyBackwards"

    @staticmethod
    def forward(ctx, x, src):
        ctx.mark_dirty(x)
        target = x._data
        source = src._data if isinstance(src, TensorBase) else np.asarray(src)
        if source.shape != target.shape:
            shape = broadcast_shapes(target.shape, source.shape)
            if shape != target.shape:
                raise RuntimeError(
                    f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                    f"{list(shape)}"
                )
        ctx.src_shape = source.shape
        ctx.src_dtype = source.dtype
        np.copyto(target, source, casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        grad_src = None
        if ctx.needs_input_grad[1]:
            # cast before reducing, so a wider src dtype also gets the wider sum
            grad_src = sum_to(to(grad_output, ctx.src_dtype), ctx.src_shape)
        return zeros_like_grad(grad_output, grad_output.shape), grad_src


def copy_(input: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy the elements of `src` into `input`, broadcasting and casting as needed."""
    if not isinstance(src, TensorBase):
        src = scalar_value(src)
    return CopyInplace.apply(input, src)


class UniformInplace(Function):
    """Fill with uniform draws in [low, high): the result no longer depends on the old values."""

    _op_name = "uniform_"
    _backward_name = "UniformBackward0"

    @staticmethod
    def forward(ctx, x, low, high, generator):
        ctx.mark_dirty(x)
        draws = _rng(generator).random(x._data.shape, dtype=np.float64)
        np.copyto(x._data, low + (high - low) * draws, casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape), None, None, None


def uniform_(input: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with numbers drawn uniformly from [a, b)."""
    if input._data.dtype.kind != "f":
        raise _not_implemented("check_uniform_bounds", input._data.dtype)
    a, b = scalar_value(a), scalar_value(b)
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
        )
    return UniformInplace.apply(input, a, b, generator)


class NormalInplace(Function):
    """Fill with normal draws: the result no longer depends on the old values."""

    _op_name = "normal_"
    _backward_name = "NormalBackward0"

    @staticmethod
    def forward(ctx, x, mean, std, generator):
        ctx.mark_dirty(x)
        draws = _rng(generator).standard_normal(x._data.shape, dtype=np.float64)
        np.copyto(x._data, mean + std * draws, casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape), None, None, None


def normal_(input: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Any = None) -> Tensor:  # fmt: skip
    """Fill with numbers drawn from N(mean, std^2)."""
    if input._data.dtype.kind != "f":
        raise _not_implemented("normal_kernel_cpu", input._data.dtype)
    mean, std = scalar_value(mean), scalar_value(std)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return NormalInplace.apply(input, mean, std, generator)


class Fill(Function):
    """A tensor of input's shape and dtype holding `value`: the out-of-place fill_."""

    _backward_name = "FillBackward0"

    @staticmethod
    def forward(ctx, x, value):
        ctx.shape = x._data.shape
        return _wrap(np.full(x._data.shape, value, x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # the result does not depend on the input's values
        return zeros_like_grad(grad_output, ctx.shape), None


def fill(input: Tensor, value: Any) -> Tensor:
    check_tensors(input)
    if isinstance(value, TensorBase):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        value = value._data.item()
    return Fill.apply(input, scalar_value(value))
