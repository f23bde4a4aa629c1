"""Reductions: sum, mean, prod, var, std, max/min, amax/amin, argmax/argmin, logsumexp, norm,
cumsum, cumprod, all, any."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import dtypes
from lucid._tensor import Tensor, _normalize_dim, _wrap
from lucid.autograd.function import Function

__all__ = ["sum"]


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """`dim` (None, int or sequence) as a sorted tuple of non-negative dims; None means all."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (_normalize_dim(dim, ndim),)
    dims = tuple(sorted(_normalize_dim(d, ndim) for d in dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def expand_reduced(grad: Tensor, shape: tuple[int, ...], dims: tuple[int, ...] | None,
                   keepdim: bool) -> Tensor:  # fmt: skip
    """Broadcast a reduction's gradient back over the reduced dimensions of `shape`."""
    from lucid.ops.shape import expand, reshape

    if not keepdim and dims is not None and len(shape) > 0:
        kept = [1 if i in dims else size for i, size in enumerate(shape)]
        grad = reshape(grad, tuple(kept))
    elif not keepdim and dims is None:
        grad = reshape(grad, (1,) * len(shape))
    return expand(grad, shape)


class Sum(Function):
    _backward_name = "SumBackward1"

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape = x._data.shape
        ctx.dims = dims
        ctx.keepdim = keepdim
        array = x._data
        if dtype is None and array.dtype.kind in "iub":
            dtype = np.int64
        axis = dims if dims is None else tuple(dims)
        return _wrap(np.sum(array, axis=axis, keepdims=keepdim, dtype=dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # d/dx sum(x) = 1 for every element that was summed
        return expand_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum over `dim` (all dims when None)."""
    dims = normalize_dims(dim, input._data.ndim)
    if dims == () and dim is not None and not isinstance(dim, int):
        dims = None
    return Sum.apply(input, dims, keepdim, dtypes.to_numpy_dtype(dtype))
