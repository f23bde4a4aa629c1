"""Neural-network ops: scaled_dot_product_attention (used through lucid.nn.functional)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from lucid._core.dtypes import C_TYPE_NAMES, FLOAT_KINDS
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import _wrap
from lucid.ops._common import autocast_op, check_tensors, dtype_name, not_implemented
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.activations import softmax
from lucid.ops.broadcast import broadcast_error, common_shape, sum_to
from lucid.ops.dropout import dropout
from lucid.ops.fills import to
from lucid.ops.products import _matmul_error, matmul
from lucid.ops.reduction import sum

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "scaled_dot_product_attention",
]  # fmt: skip


def _check_mask(attn_mask: Tensor | None, is_causal: bool, query, key) -> None:
    """PyTorch's errors for a mask that cannot broadcast to the scores."""
    length, source_length = query.shape[-2], key.shape[-2]
    if attn_mask is not None and not is_causal:
        # PyTorch reads the mask's last two dims before broadcasting it
        if attn_mask.ndim == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        if attn_mask.ndim == 1:
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
            )
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
        scores_shape = (*batch, length, source_length)
        try:
            np.broadcast_shapes(scores_shape, attn_mask.shape)
        except ValueError:
            raise broadcast_error(scores_shape, attn_mask.shape) from None


def _attention_mask(attn_mask: Tensor | None, is_causal: bool, query, key, dtype):
    """The additive mask (or None) and, when some row masks every key, the rows still alive."""
    length, source_length = query.shape[-2], key.shape[-2]
    if is_causal:
        allowed = np.tril(np.ones((length, source_length), dtype=bool))
        additive = np.where(allowed, dtype.type(0), dtype.type(-np.inf))
    elif attn_mask is None:
        return None, None
    elif attn_mask._data.dtype == np.bool_:
        # True means "may attend", as in PyTorch
        additive = np.where(attn_mask._data, dtype.type(0), dtype.type(-np.inf))
    else:
        additive = attn_mask._data.astype(dtype, copy=False)
    masked_rows = np.all(additive == -np.inf, axis=-1, keepdims=True)
    if not masked_rows.any():
        return additive, None
    # PyTorch's CPU kernel returns zeros (not nan) for a query that may attend to nothing
    return np.where(masked_rows, dtype.type(0), additive), ~masked_rows


def _keys_first(array: np.ndarray, ndim: int) -> np.ndarray:
    """A (..., Lq, Lk) mask-like array as a view that broadcasts against (Lk, *batch, Lq),
    where batch has ndim - 2 dims."""
    array = array.reshape((1,) * (ndim - array.ndim) + array.shape)
    return np.moveaxis(np.swapaxes(array, -1, -2), -2, 0)


class ScaledDotProductAttention(Function):
    """softmax(q k^T * scale + mask) v, with the probabilities held keys-first.

    The probabilities live in one (Lk, *batch, Lq) array: each batch entry's P^T is a
    strided (Lk, Lq) view of it that BLAS reads directly, and the softmax's reductions over
    keys become elementwise passes over rows of batch * Lq values. Reduced in the natural
    (..., Lq, Lk) layout, every key row is a separate short NumPy loop, several times
    slower for attention-sized rows.
    """

    _backward_name = "ScaledDotProductAttentionBackward0"

    @staticmethod
    def forward(ctx, query, key, value, mask, is_causal, scale):
        # The mask comes in a 1-tuple: as a tensor argument it would be an edge of the graph,
        # which PyTorch's node does not have; as the additive array made from it outside,
        # a constant to lucid.compile's recording.
        # float16 and bfloat16 attend in float32 (the probabilities backward keeps too), and
        # the output is rounded once
        q, k, v = widen(query._data), widen(key._data), widen(value._data)
        additive, alive_rows = _attention_mask(mask[0], is_causal, query, key, q.dtype)
        output, probabilities_t = _attention_arrays(q, k, v, additive, alive_rows, scale)
        ctx.additive, ctx.alive_rows, ctx.scale = additive, alive_rows, scale
        ctx.save_for_backward(query, key, value, _wrap(probabilities_t))
        return _wrap(round_to(output, query._data.dtype))

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # forward's arrays, keeping the probabilities, and the array backward
        # (lucid/_dynamo/flat.py)
        q, k, v = args[:3]
        if q.dtype.kind != "f" or q.dtype.itemsize < 4 or k.dtype is not q.dtype:
            return None
        if v.dtype is not q.dtype:
            return None

        def forward(q, k, v, mask, is_causal, scale):
            additive, alive_rows = _attention_mask(mask[0], is_causal, q, k, q.dtype)
            return _attention_arrays(q, k, v, additive, alive_rows, scale)

        def backward(grad, out, probabilities_t, q, k, v, mask, is_causal, scale):
            grads = _attention_gradients(grad, q, k, v, probabilities_t, scale, needs_input_grad)
            return (*grads, None, None, None)

        return forward, backward, ScaledDotProductAttention, True

    @staticmethod
    def backward(ctx, grad_output):
        query, key, value, probabilities_t = ctx.saved_tensors
        scale = ctx.scale
        if not is_grad_enabled():
            return _attention_backward_arrays(ctx, grad_output, query, key, value, probabilities_t)
        dtype = query.dtype
        if is_low_precision(query._data.dtype):
            # the same formulas on float32 copies (casts recorded in the graph), rounded once
            grad_output, query, key, value = (
                to(t, _FLOAT32) for t in (grad_output, query, key, value)
            )
        # create_graph: rebuild the probabilities from query and key so they are recorded
        probabilities = _attention_probabilities(query, key, ctx.additive, ctx.alive_rows, scale)
        grad_query = grad_key = grad_value = None
        if ctx.needs_input_grad[2]:
            # d(P V)/dV: P^T grad
            grad_value = sum_to(matmul(probabilities.transpose(-2, -1), grad_output), value.shape)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            grad_probabilities = matmul(grad_output, value.transpose(-2, -1))
            # softmax backward: P * (dP - rowsum(dP * P)), then the 1/sqrt(E) scale
            weighted = grad_probabilities * probabilities
            grad_scores = weighted - probabilities * sum(weighted, -1, keepdim=True)
            grad_scores = grad_scores * scale
            if ctx.needs_input_grad[0]:
                grad_query = sum_to(matmul(grad_scores, key), query.shape)
            if ctx.needs_input_grad[1]:
                grad_key = sum_to(matmul(grad_scores.transpose(-2, -1), query), key.shape)
        if query.dtype != dtype:
            grad_query, grad_key, grad_value = (
                None if grad is None else to(grad, dtype)
                for grad in (grad_query, grad_key, grad_value)
            )
        return grad_query, grad_key, grad_value, None, None, None


def _attention_arrays(q, k, v, additive, alive_rows, scale):
    """The attention's output and its probabilities, keys-first (see the class), from the
    float32/float64 operands' arrays and the mask's additive and alive-row arrays."""
    ndim = max(q.ndim, k.ndim, v.ndim)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    keys = k.shape[-2]
    probabilities_t = np.empty((keys, *batch, q.shape[-2]), dtype=q.dtype)
    # (*batch, Lk, Lq) views of it: the transposed scores, then probabilities
    scores_t = np.moveaxis(probabilities_t, 0, -2)
    np.matmul(k, np.swapaxes(q * q.dtype.type(scale), -1, -2), out=scores_t)
    if additive is not None:
        probabilities_t += _keys_first(additive, ndim)
    by_key = probabilities_t.reshape(keys, probabilities_t.size // max(keys, 1))
    if keys:
        # subtract each query's max so large scores don't overflow exp
        by_key -= by_key.max(axis=0)
        np.exp(by_key, out=by_key)
        by_key /= by_key.sum(axis=0)
    if alive_rows is not None:
        probabilities_t *= _keys_first(alive_rows, ndim)
    return np.matmul(np.swapaxes(scores_t, -1, -2), v), probabilities_t


def _attention_backward_arrays(ctx, grad_output, query, key, value, probabilities_t):
    """The attention gradients on arrays, keys-first like the forward's probabilities;
    taken only when grad mode is off (no create_graph)."""
    dtype = query._data.dtype
    g, p_t = widen(grad_output._data), probabilities_t._data
    q, k, v = widen(query._data), widen(key._data), widen(value._data)
    grads = _attention_gradients(g, q, k, v, p_t, ctx.scale, ctx.needs_input_grad)
    rounded = tuple(None if grad is None else _wrap(round_to(grad, dtype)) for grad in grads)
    return (*rounded, None, None, None)


def _attention_gradients(g, q, k, v, p_t, scale, needs_input_grad):
    """The query, key and value gradient arrays (None where not needed), in the operands'
    float32/float64, from the forward's keys-first probabilities."""
    keys = p_t.shape[0]
    # P^T per batch entry, (*batch, Lk, Lq)
    p_views = np.moveaxis(p_t, 0, -2)
    grad_query = grad_key = grad_value = None
    if needs_input_grad[2]:
        grad_value = _sum_to_shape(np.matmul(p_views, g), v.shape)
    if needs_input_grad[0] or needs_input_grad[1]:
        # dP^T = V g^T, then the softmax backward P * (dP - sum over keys of dP * P), scaled
        grad_t = np.empty_like(p_t)
        grad_views = np.moveaxis(grad_t, 0, -2)
        np.matmul(v, np.swapaxes(g, -1, -2), out=grad_views)
        columns = p_t.size // max(keys, 1)
        by_key, p_by_key = grad_t.reshape(keys, columns), p_t.reshape(keys, columns)
        by_key -= (by_key * p_by_key).sum(axis=0)
        by_key *= p_by_key
        by_key *= by_key.dtype.type(scale)
        if needs_input_grad[0]:
            grad_query = _sum_to_shape(np.matmul(np.swapaxes(grad_views, -1, -2), k), q.shape)
        if needs_input_grad[1]:
            grad_key = _sum_to_shape(np.matmul(grad_views, q), k.shape)
    return grad_query, grad_key, grad_value


def _sum_to_shape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Undo batch broadcasting of an attention operand (arrays only)."""
    if array.shape == shape:
        return array
    return sum_to(_wrap(array), shape)._data


def _attention_probabilities(query, key, additive, alive_rows, scale):
    scores = matmul(query * scale, key.transpose(-2, -1))
    if additive is not None:
        scores = scores + _wrap(additive)
    probabilities = softmax(scores, -1)
    if alive_rows is not None:
        probabilities = probabilities * _wrap(alive_rows.astype(probabilities._data.dtype))
    return probabilities


def _repeat_heads(tensor: Tensor, heads: int) -> Tensor:
    shape = tuple(tensor.shape)
    repeats = heads // shape[-3]
    expanded = tensor.unsqueeze(-3).expand(*shape[:-2], repeats, *shape[-2:])
    return expanded.reshape(*shape[:-3], heads, *shape[-2:])


def _check_attention_shapes(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> None:
    """PyTorch's errors for query, key and value whose sizes the two products cannot take, as
    its matmuls raise them: scores = query @ key^T first, then scores @ value."""
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        return
    batch = common_shape(q.shape[:-2], k.shape[:-2])
    if k.shape[-1] != q.shape[-1]:
        raise _matmul_error(q, np.swapaxes(k, -1, -2))
    common_shape(batch, v.shape[:-2])
    if v.shape[-2] != k.shape[-2]:
        scores = np.broadcast_to(np.empty((), q.dtype), (*batch, q.shape[-2], k.shape[-2]))
        raise _matmul_error(scores, v)


@autocast_op
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dims.

    A boolean mask marks the keys each query may attend to; a float mask is added to the
    scores. A query that may attend to no key gets a zero output, as in PyTorch's CPU kernel.
    """
    check_tensors(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    is_complex = query._data.dtype.kind == "c"
    if query._data.dtype.kind not in FLOAT_KINDS and not is_complex:
        raise RuntimeError(f"expected scalar type Float but found {dtype_name(query._data.dtype)}")
    if not query._data.dtype == key._data.dtype == value._data.dtype:
        names = [
            C_TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name) for t in (query, key, value)
        ]
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{names[0]} key.dtype: {names[1]} and value.dtype: {names[2]} instead."
        )
    if attn_mask is not None:
        mask_dtype = attn_mask._data.dtype
        # a complex query takes PyTorch's own rule: a bool, float32 or same-dtype mask
        is_other_float = mask_dtype.kind in FLOAT_KINDS and not (
            is_complex and mask_dtype != np.float32
        )
        if mask_dtype != np.bool_ and not is_other_float:
            if mask_dtype != query._data.dtype:
                raise RuntimeError(
                    "Expected attn_mask dtype to be bool or float or to match query dtype, but "
                    f"got attn_mask.dtype: {C_TYPE_NAMES.get(mask_dtype.name, mask_dtype.name)} "
                    f"and  query.dtype: {C_TYPE_NAMES[query._data.dtype.name]} instead."
                )
    if is_complex:
        # PyTorch's CPU softmax has no complex kernel
        raise not_implemented("softmax_lastdim_kernel_impl", query._data.dtype)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3])
        value = _repeat_heads(value, query.shape[-3])
    _check_attention_shapes(query._data, key._data, value._data)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    _check_mask(attn_mask, is_causal, query, key)
    if dropout_p > 0.0:
        working_type = widen(query._data[:0]).dtype
        additive, alive_rows = _attention_mask(attn_mask, is_causal, query, key, working_type)
        if additive is not None:
            additive = additive.astype(query._data.dtype, copy=False)
        probabilities = _attention_probabilities(query, key, additive, alive_rows, scale)
        return matmul(dropout(probabilities, dropout_p), value)
    return ScaledDotProductAttention.apply(query, key, value, (attn_mask,), is_causal, scale)
