"""Distances: dist (the p-norm of a difference), cdist (between every pair of rows of two
batches) and pdist (between the rows of one matrix)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import argument_error
from lucid._core.dtypes import FLOAT_KINDS, INEXACT_KINDS
from lucid._core.function import OWN_COMPLEX_RULE, Function
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import (
    _require_named_tensors,
    autocast_op,
    check_number,
    check_tensors,
    dtype_name,
    zeros_like_grad,
)
from lucid.ops._promote import binary_arrays, low_precision_of, round_to, widen
from lucid.ops.broadcast import broadcast_error, common_shape, sum_to
from lucid.ops.indexing import index_select
from lucid.ops.pointwise import abs, eq, isnan, sgn, sign, where
from lucid.ops.products import matmul
from lucid.ops.reduction import (
    _as_dtype,
    _vector_norm_array,
    _vector_norm_backward,
    _vector_norm_constants,
    norm,
    sum,
)
from lucid.ops.reduction import any as any_of

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "dist", "cdist", "pdist",
]  # fmt: skip


class Dist(Function):
    _backward_name = "DistBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, a, b, ord):
        x, y = binary_arrays(a, b)
        try:
            difference = x - y
        except ValueError:
            raise broadcast_error(a._data.shape, b._data.shape) from None
        if difference.dtype.kind == "c":
            # the distance of complex values is the norm of the magnitudes of their differences
            difference = np.abs(difference)
        norm = _vector_norm_array(widen(difference), ord, None)
        norm = round_to(norm, low_precision_of(difference.dtype))
        result = _wrap(norm.reshape(()))
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            ctx.ord = ord
            sign, weights = _vector_norm_constants(difference, norm, ord, None)
            ctx.save_for_backward(a, b, result, sign, weights)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, b, result, sign, weights = ctx.saved_tensors
        difference = a - b
        is_complex = difference._data.dtype.kind == "c"
        # complex differences enter the norm through their magnitudes, as in forward
        base = abs(difference) if is_complex else difference
        grad = _vector_norm_backward(base, result, grad_output, ctx.ord, sign, weights)
        if grad is None:
            return None, None, None
        if is_complex:
            # PyTorch's gradient of |z| for a real one is sgn(z) times it
            grad = grad * sgn(difference)
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = _as_dtype(sum_to(grad, a.shape), a._data.dtype)
        if ctx.needs_input_grad[1]:
            grad_b = _as_dtype(sum_to(-grad, b.shape), b._data.dtype)
        return grad_a, grad_b, None


def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """The p-norm of input - other (broadcasting)."""
    check_tensors(input, other)
    if not isinstance(other, TensorBase):
        raise argument_error("dist", "other", 2, other)
    check_number(p, "dist", "p", 3)
    if input._data.dtype.kind not in INEXACT_KINDS or other._data.dtype.kind not in INEXACT_KINDS:
        raise RuntimeError("dist only supports floating-point dtypes")
    return Dist.apply(input, other, p)


_CDIST_MODES = (
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
)


def _pairwise_differences(x1: Any, x2: Any) -> Any:
    """x1[..., i, :] - x2[..., j, :] for every pair, as a (..., P, R, M) array or tensor."""
    if isinstance(x1, np.ndarray):
        return x1[..., :, None, :] - x2[..., None, :, :]
    return x1.unsqueeze(-2) - x2.unsqueeze(-3)


def _cdist_array(x1: np.ndarray, x2: np.ndarray, p: float, use_mm: bool) -> np.ndarray:
    if use_mm:
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one GEMM instead of a (P, R, M) difference, at the
        # cost of cancellation where points nearly coincide (clamped at 0)
        squared = (
            np.sum(x1 * x1, axis=-1)[..., :, None]
            + np.sum(x2 * x2, axis=-1)[..., None, :]
            - 2.0 * np.matmul(x1, np.swapaxes(x2, -1, -2))
        )
        return np.sqrt(np.maximum(squared, 0.0))
    difference = np.abs(_pairwise_differences(x1, x2))
    if p == 0:
        # the count of nonzero differences, nan where a difference is nan (as PyTorch's)
        return np.sum(np.minimum(np.ceil(difference), 1.0), axis=-1)
    if p == 1:
        return np.sum(difference, axis=-1)
    if p == 2:
        return np.sqrt(np.sum(difference * difference, axis=-1))
    if math.isinf(p):
        if difference.shape[-1] == 0:
            return np.zeros(difference.shape[:-1], x1.dtype)
        return np.max(difference, axis=-1)
    return np.power(np.sum(np.power(difference, p), axis=-1), 1.0 / p)


class Cdist(Function):
    _backward_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p, use_mm):
        a, b = x1._data, x2._data
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
        # float16/bfloat16 (the matrix-product path only) compute in float32, rounded once
        result = _wrap(round_to(_cdist_array(widen(a), widen(b), p, use_mm), a.dtype))
        ctx.save_for_backward(x1, x2, result)
        ctx.p = p
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, result = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            # a count of nonzero differences is piecewise constant
            return (
                zeros_like_grad(grad_output, x1.shape),
                zeros_like_grad(grad_output, x2.shape),
                None,
                None,
            )
        if p == 2 and np.isfinite(x1._data).all() and np.isfinite(x2._data).all():
            return Cdist._euclidean_backward(ctx, grad_output, x1, x2, result)
        difference = _pairwise_differences(x1, x2)
        distance = result.unsqueeze(-1)
        # d/dx1 |x1 - x2|_p = sign(d) |d|^(p-1) / dist^(p-1): d / dist for p = 2, sign(d) for
        # p = 1, sign(d) where |d| is the max for p = inf; 0 where dist is 0
        if p == 1:
            # a nan difference gives a nan gradient, as PyTorch's (sign alone gives 0 there)
            factor = where(isnan(difference), difference, sign(difference))
        elif math.isinf(p):
            factor = where(eq(abs(difference), distance), sign(difference), 0.0)
        else:
            is_zero = eq(distance, 0.0)
            safe = where(is_zero, 1.0, distance)
            if p == 2:
                factor = difference / safe
            else:
                magnitude = abs(difference)
                factor = sign(difference) * (magnitude / safe) ** (p - 1)
            factor = where(is_zero, 0.0, factor)
        weighted = grad_output.unsqueeze(-1) * factor
        grad_x1 = grad_x2 = None
        if ctx.needs_input_grad[0]:
            grad_x1 = sum_to(sum(weighted, -2), x1.shape)
        if ctx.needs_input_grad[1]:
            grad_x2 = sum_to(-sum(weighted, -3), x2.shape)
        return grad_x1, grad_x2, None, None

    @staticmethod
    def _euclidean_backward(ctx, grad_output, x1, x2, result):
        """The p = 2 gradient of finite inputs without the (P, R, M) differences: with
        w = grad / dist (0 where dist is 0), d/dx1_i = x1_i sum_j w_ij - sum_j w_ij x2_j, two
        GEMMs instead of a pass over every pair's every coordinate."""
        is_zero = eq(result, 0.0)
        weights = where(is_zero, 0.0, grad_output / where(is_zero, 1.0, result))
        grad_x1 = grad_x2 = None
        if ctx.needs_input_grad[0]:
            grad_x1 = x1 * sum(weights, -1).unsqueeze(-1) - matmul(weights, x2)
            grad_x1 = sum_to(grad_x1, x1.shape)
        if ctx.needs_input_grad[1]:
            grad_x2 = x2 * sum(weights, -2).unsqueeze(-1) - matmul(weights.transpose(-1, -2), x1)
            grad_x2 = sum_to(grad_x2, x2.shape)
        return grad_x1, grad_x2, None, None


@autocast_op
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:  # fmt: skip
    """The p-norm distance between each row of x1 and each row of x2 (batched).

    For p = 2, PyTorch's compute modes are kept: a matrix product (faster, less exact for
    nearly equal points) when asked, or by default when either side has more than 25 rows.
    """
    _require_named_tensors("cdist", x1=x1, x2=x2)
    check_number(p, "cdist", "p", 3, "float")
    a, b = x1._data, x2._data
    for name, array in (("X1", a), ("X2", b)):
        if array.ndim < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {name} got: {array.ndim}D"
            )
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}"
        )
    for name, array in (("X1", a), ("X2", b)):
        if array.dtype.kind not in FLOAT_KINDS:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {dtype_name(array.dtype)}"
            )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {dtype_name(a.dtype)} but found {dtype_name(b.dtype)}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    common_shape(a.shape[:-2], b.shape[:-2])
    use_mm = p == 2 and (
        compute_mode == "use_mm_for_euclid_dist"
        or (compute_mode == _CDIST_MODES[0] and (a.shape[-2] > 25 or b.shape[-2] > 25))
    )
    if a.dtype.itemsize == 2 and not use_mm:
        # PyTorch's CPU build has a float16/bfloat16 kernel only for the matrix-product path
        raise NotImplementedError(f"\"cdist\" not implemented for '{dtype_name(a.dtype)}'")
    return Cdist.apply(x1, x2, float(p), use_mm)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between every pair of rows i < j of an (N, M) input, in row-major
    order of the pairs (the condensed upper triangle of cdist(input, input)).

    Composed from a row gather and a norm, so its gradient is theirs: zero for a pair of equal
    rows, as PyTorch's.
    """
    _require_named_tensors("pdist", input=input)
    check_number(p, "pdist", "p", 2, "float")
    if input._data.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._data.ndim}D")
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input._data.dtype.itemsize == 2:
        raise NotImplementedError(
            f"\"pdist\" not implemented for '{dtype_name(input._data.dtype)}'"
        )
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input._data.shape[0], 1)
    first = index_select(input, 0, _wrap(rows))
    second = index_select(input, 0, _wrap(cols))
    distances = norm(first - second, p, 1)
    if p == 0:
        # the count of differing coordinates is NaN for a pair with a NaN difference, as
        # PyTorch's pdist (unlike its vector_norm) has it
        unknown = any_of(isnan(first - second), 1)
        distances = where(unknown, math.nan, distances)
    return distances
