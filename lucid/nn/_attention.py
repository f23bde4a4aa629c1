"""multi_head_attention_forward, the functional form of nn.MultiheadAttention, and its checks."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import lucid
from lucid.ops.activations import softmax
from lucid.ops.attention import scaled_dot_product_attention
from lucid.ops.dropout import dropout
from lucid.ops.linear import linear

if TYPE_CHECKING:
    from lucid import Tensor


def _canonical_mask(
    mask: Tensor | None, mask_name: str, other: Tensor | None, other_name: str, dtype: Any
) -> Tensor | None:
    """A float mask to add to the scores: boolean True (masked out) becomes -inf."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != lucid.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if other is not None and mask.dtype != other.dtype:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            UserWarning,
            stacklevel=4,
        )
    if is_float:
        return mask
    return lucid.zeros_like(mask, dtype=dtype).masked_fill(mask, float("-inf"))


def _check_shapes(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Validate the ranks of the inputs and masks; True when the query is batched (3-D)."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor"
        )
    is_batched = query.dim() == 3
    kind = "batched (3-D)" if is_batched else "unbatched (2-D)"
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {query.dim()}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != query.dim() - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
            f"{query.dim() - 1}-D but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        if not is_batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                )
    return is_batched


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Append a zero column to a float mask (for an extra key every query may see)."""
    if mask is None:
        return None
    zeros = lucid.zeros((*mask.shape[:-1], 1), dtype=mask.dtype)
    return lucid.cat([mask, zeros], -1)


def _attention_mask(
    attn_mask: Tensor | None, batch_heads: int, target_length: int, source_length: int
) -> Tensor | None:
    """Check attn_mask's shape and give it a leading (batch * heads) dim."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        expected = (target_length, source_length)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {expected}."
            )
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() != 3:
        raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    expected = (batch_heads, target_length, source_length)
    if tuple(attn_mask.shape) != expected:
        raise RuntimeError(
            f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}."
        )
    return attn_mask


def _packed_projection(
    query: Tensor, key: Tensor, value: Tensor, weight: Tensor, bias: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """The q, k, v projections by one (3E, E) weight, sharing GEMMs where the inputs are shared."""
    embed_dim = query.shape[-1]
    if key is value and query is key:
        # self-attention: one GEMM for all three projections
        q, k, v = linear(query, weight, bias).unflatten(-1, (3, embed_dim)).unbind(-2)
        return q, k, v
    if key is value:
        # encoder-decoder attention: one GEMM for the key and value projections
        split = [embed_dim, 2 * embed_dim]
        weight_q, weight_kv = weight.split(split)
        bias_q = bias_kv = None
        if bias is not None:
            bias_q, bias_kv = bias.split(split)
        k, v = linear(key, weight_kv, bias_kv).unflatten(-1, (2, embed_dim)).unbind(-2)
        return linear(query, weight_q, bias_q), k, v
    weights = weight.chunk(3)
    biases = (None, None, None) if bias is None else bias.chunk(3)
    q, k, v = (
        linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases, strict=True)
    )
    return q, k, v


def _separate_projection(
    inputs: tuple[Tensor, Tensor, Tensor],
    weights: tuple[Tensor | None, Tensor | None, Tensor | None],
    bias: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The q, k, v projections by their own weights: (E, E), (E, kdim) and (E, vdim)."""
    for letter, weight in zip("qkv", weights, strict=True):
        if weight is None:
            raise AssertionError(
                f"use_separate_proj_weight is True but {letter}_proj_weight is None"
            )
    biases = (None, None, None) if bias is None else bias.chunk(3)
    names = ("query", "key", "value")
    embed_dim = inputs[0].size(-1)
    for name, x, weight in zip(names, inputs, weights, strict=True):
        expected = (embed_dim, x.size(-1))
        if weight.shape != expected:
            raise AssertionError(
                f"expecting {name} weights shape of {expected}, but got {weight.shape}"
            )
    for name, b in zip(names, biases, strict=True):
        if b is not None and b.shape != (embed_dim,):
            raise AssertionError(
                f"expecting {name} bias shape of {(embed_dim,)}, but got {b.shape}"
            )
    q, k, v = (linear(x, w, b) for x, w, b in zip(inputs, weights, biases, strict=True))
    return q, k, v


def _static(tensor: Tensor, name: str, batch_heads: int, head_dim: int) -> Tensor:
    if tensor.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {tensor.size(0)}")
    if tensor.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {tensor.size(2)}")
    return tensor


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over (L, N, E) query and (S, N, E) key/value (or unbatched).

    Returns the output, (L, N, out_proj_weight.size(0)), and with need_weights the attention
    weights (averaged over heads when average_attn_weights). In masks, boolean True marks a
    key that may NOT be attended to; float masks are added to the scores.
    """
    is_batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = (x.unsqueeze(1) for x in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    target_length, batch, embed_dim = query.shape
    dtype = query.dtype
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # the hint alone drives scaled_dot_product_attention's causal masking
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        # kdim and vdim may differ from embed_dim, so only the leading dims must agree
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _packed_projection(query, key, value, in_proj_weight, in_proj_bias)
    else:
        separate = (q_proj_weight, k_proj_weight, v_proj_weight)
        q, k, v = _separate_projection((query, key, value), separate, in_proj_bias)
    heads = batch * num_heads
    attn_mask = _attention_mask(attn_mask, heads, target_length, key.shape[0])
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        # one learned extra key and value, shared by the whole batch, that every query sees
        k = lucid.cat([k, bias_k.repeat(1, batch, 1)])
        v = lucid.cat([v, bias_v.repeat(1, batch, 1)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    # (length, batch, embed) -> (batch * heads, length, head_dim)
    q = q.reshape(target_length, heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], heads, head_dim).transpose(0, 1)
    else:
        k = _static(static_k, "static_k", heads, head_dim)
    if static_v is None:
        v = v.reshape(v.shape[0], heads, head_dim).transpose(0, 1)
    else:
        v = _static(static_v, "static_v", heads, head_dim)
    if add_zero_attn:
        zeros = lucid.zeros((heads, 1, head_dim), dtype=k.dtype)
        k, v = lucid.cat([k, zeros], 1), lucid.cat([v, zeros], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    source_length = k.shape[1]
    if key_padding_mask is not None:
        for axis, size in enumerate((batch, source_length)):
            if key_padding_mask.shape[axis] != size:
                raise AssertionError(
                    f"Expected key_padded_mask.shape[{axis}] to be {size}, but got "
                    f"{key_padding_mask.shape[axis]}"
                )
        padding = key_padding_mask.reshape(batch, 1, 1, source_length)
        padding = padding.expand(batch, num_heads, 1, source_length)
        padding = padding.reshape(heads, 1, source_length)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = lucid.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        output = lucid.matmul(weights, v).transpose(0, 1)
        weights = weights.reshape(batch, num_heads, target_length, source_length)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            weights = weights.squeeze(0)
    else:
        weights = None
        if attn_mask is not None:
            if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
                attn_mask = attn_mask.unsqueeze(0)
            else:
                attn_mask = attn_mask.reshape(batch, num_heads, -1, source_length)
        q = q.reshape(batch, num_heads, target_length, head_dim)
        k = k.reshape(batch, num_heads, source_length, head_dim)
        v = v.reshape(batch, num_heads, source_length, head_dim)
        output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        output = output.permute(2, 0, 1, 3)
    # the output projection may change the width (CLIP's attention pool projects to a smaller
    # output_dim), so the last dim comes from out_proj_weight, not embed_dim
    output = linear(
        output.reshape(target_length * batch, embed_dim), out_proj_weight, out_proj_bias
    )
    output = output.reshape(target_length, batch, output.shape[-1])
    if not is_batched:
        output = output.squeeze(1)
    return output, weights
