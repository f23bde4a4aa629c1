"""Shape ops: reshape, view, flatten, squeeze, unsqueeze, transpose, permute, expand, repeat,
cat, stack, split, chunk, unbind, narrow, flip, roll, tril, triu."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid._tensor import Tensor, _normalize_dim, _wrap
from lucid.autograd.function import Function

__all__ = ["reshape", "view", "unsqueeze", "transpose", "t", "numpy_T", "expand", "permute"]


def _infer_shape(shape: tuple, numel: int) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for size in shape:
        if size != -1:
            if size < 0:
                raise RuntimeError(f"invalid shape dimension {size}")
            known *= size
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Reshape(Function):
    _backward_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x._data.shape
        return _wrap(x._data.reshape(shape))

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, ctx.input_shape), None


def reshape(input: Tensor, shape: Any) -> Tensor:
    shape = _infer_shape(tuple(shape), input._data.size)
    if shape == input._data.shape:
        return Reshape.apply(input, shape)
    return Reshape.apply(input, shape)


def view(input: Tensor, shape: Any) -> Tensor:
    """Like reshape, but never copies: a layout that cannot be viewed is an error."""
    shape = _infer_shape(tuple(shape), input._data.size)
    probe = input._data.view()
    try:
        probe.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return Reshape.apply(input, shape)


class Unsqueeze(Function):
    _backward_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return _wrap(np.expand_dims(x._data, dim))

    @staticmethod
    def backward(ctx, grad_output):
        return reshape(grad_output, tuple(s for i, s in enumerate(grad_output.shape)
                                          if i != ctx.dim)), None  # fmt: skip


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return Unsqueeze.apply(input, _normalize_dim(dim, input._data.ndim + 1))


class Transpose(Function):
    _backward_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return _wrap(np.swapaxes(x._data, dim0, dim1))

    @staticmethod
    def backward(ctx, grad_output):
        return transpose(grad_output, *ctx.dims), None, None


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    ndim = input._data.ndim
    return Transpose.apply(input, _normalize_dim(dim0, ndim), _normalize_dim(dim1, ndim))


def t(input: Tensor) -> Tensor:
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")  # fmt: skip
    if input._data.ndim < 2:
        return input
    return transpose(input, 0, 1)


class Permute(Function):
    _backward_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return _wrap(np.transpose(x._data, dims))

    @staticmethod
    def backward(ctx, grad_output):
        return permute(grad_output, tuple(np.argsort(ctx.dims))), None


def permute(input: Tensor, dims: Any) -> Tensor:
    ndim = input._data.ndim
    dims = tuple(_normalize_dim(d, ndim) for d in dims)
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    return Permute.apply(input, dims)


def numpy_T(input: Tensor) -> Tensor:
    """`.T`: reverse all dimensions."""
    return permute(input, tuple(range(input._data.ndim - 1, -1, -1)))


class Expand(Function):
    _backward_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.input_shape = x._data.shape
        return _wrap(np.broadcast_to(x._data, shape))

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.broadcast import sum_to

        return sum_to(grad_output, ctx.input_shape), None


def expand(input: Tensor, sizes: Any) -> Tensor:
    sizes = tuple(sizes)
    shape = input._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(sizes)}): the number of "
            f"sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    leading = len(sizes) - len(shape)
    target = []
    for index, size in enumerate(sizes):
        if index < leading:
            target.append(size)
            continue
        current = shape[index - leading]
        if size == -1:
            target.append(current)
        elif current != 1 and size != current:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) must match the existing size "
                f"({current}) at non-singleton dimension {index}.  Target sizes: {list(sizes)}."
                f"  Tensor sizes: {list(shape)}"
            )
        else:
            target.append(size)
    return Expand.apply(input, tuple(target))
