"""Activation modules and multi-head attention, thin wrappers over lucid.nn.functional."""

from __future__ import annotations

import math
import warnings
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.modules.linear import NonDynamicallyQuantizableLinear
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter

__all__ = [
    "ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "ELU",
    "Softplus", "Mish", "Hardtanh", "MultiheadAttention", "ReLU6", "SELU", "CELU", "PReLU",
    "Hardsigmoid", "Hardswish", "Hardshrink", "Softsign", "Softshrink", "Tanhshrink",
    "Threshold", "GLU", "Softmin", "Softmax2d", "LogSigmoid",
    "RReLU",
]  # fmt: skip


def _inplace_repr(inplace: bool, leading: str = "") -> str:
    return f"{leading}inplace=True" if inplace else ""


class ReLU(Module):
    """max(0, x) elementwise."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    """x for x >= 0, negative_slope * x otherwise."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_repr(self.inplace, ', ')}"


class GELU(Module):
    """Gaussian error linear unit; approximate='tanh' uses the tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x) (also called swish)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Tanh(Module):
    """Hyperbolic tangent elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Softmax(Module):
    """Softmax along `dim` (chosen implicitly, with a warning, when None)."""

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along `dim`, computed stably."""

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above `threshold`."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """x * tanh(softplus(x))."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardtanh(Module):
    """x clamped to [min_val, max_val]; min_value/max_value are deprecated spellings."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and renamed to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and renamed to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_repr(self.inplace, ', ')}"


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


class MultiheadAttention(Module):
    """Multi-head attention over (L, N, E) inputs, or (N, L, E) with batch_first=True.

    Parameter names and layout match torch.nn.MultiheadAttention, so state dicts load either
    way.
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(lucid.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(lucid.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(lucid.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(lucid.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(lucid.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(lucid.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(lucid.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        biases = (None,) * 3 if self.in_proj_bias is None else self.in_proj_bias.chunk(3)
        if not self._qkv_same_embed_dim:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        elif query is key and key is value:
            # self-attention: one matmul for all three projections
            return F.linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, -1)
        else:
            weights = self.in_proj_weight.chunk(3)
        return tuple(
            F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases, strict=True)
        )

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from `query` to `key`/`value`; returns (output, attention weights or None).

        In masks, boolean True marks a key that may NOT be attended to (the opposite of
        scaled_dot_product_attention); float masks are added to the scores. `is_causal` is a
        hint that `attn_mask` is causal and requires it to be given.
        """
        is_batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        if self.batch_first and is_batched:
            query, key, value = _batch_second(query, key, value)
        if not is_batched:
            query, key, value = _batch_second(query, key, value, unsqueeze=True)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        target_length, batch, embed_dim = query.shape
        if embed_dim != self.embed_dim:
            raise AssertionError(
                f"was expecting embedding dimension of {self.embed_dim}, but got {embed_dim}"
            )
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
        q, k, v = self._project(query, key, value)
        heads, head_dim = self.num_heads, self.head_dim
        source_length = k.shape[0]
        attn_mask = self._attention_mask(attn_mask, batch, target_length, source_length)
        if self.bias_k is not None and self.bias_v is not None:
            # one learned extra key and value, shared by the whole batch, that every query sees
            k = lucid.cat([k, self.bias_k.expand(1, batch, embed_dim)], 0)
            v = lucid.cat([v, self.bias_v.expand(1, batch, embed_dim)], 0)
            attn_mask = _pad_last(attn_mask)
            key_padding_mask = _pad_last(key_padding_mask)
            source_length += 1
        # (length, batch, embed) -> (batch * heads, length, head_dim)
        q = q.reshape(target_length, batch * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], batch * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], batch * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            zeros = lucid.zeros((batch * heads, 1, head_dim), dtype=k.dtype)
            k, v = lucid.cat([k, zeros], 1), lucid.cat([v, zeros], 1)
            attn_mask = _pad_last(attn_mask)
            key_padding_mask = _pad_last(key_padding_mask)
            source_length += 1
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (batch, source_length):
                raise AssertionError(
                    f"Expected key_padded_mask.shape to be {(batch, source_length)}, but got "
                    f"{tuple(key_padding_mask.shape)}"
                )
            padding = key_padding_mask.reshape(batch, 1, 1, source_length)
            padding = padding.expand(batch, heads, 1, source_length)
            padding = padding.reshape(batch * heads, 1, source_length)
            attn_mask = padding if attn_mask is None else attn_mask + padding
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = lucid.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
            if attn_mask is not None:
                scores = scores + attn_mask
            weights = F.softmax(scores, -1)
            if dropout_p > 0.0:
                weights = F.dropout(weights, p=dropout_p)
            output = lucid.matmul(weights, v)
            output = output.transpose(0, 1).reshape(target_length * batch, embed_dim)
            weights = weights.reshape(batch, heads, target_length, source_length)
            if average_attn_weights:
                weights = weights.mean(1)
            if not is_batched:
                weights = weights.squeeze(0)
        else:
            if attn_mask is not None:
                if attn_mask.shape[0] == 1:
                    attn_mask = attn_mask.unsqueeze(0)
                else:
                    attn_mask = attn_mask.reshape(batch, heads, -1, source_length)
            q = q.reshape(batch, heads, target_length, head_dim)
            k = k.reshape(batch, heads, source_length, head_dim)
            v = v.reshape(batch, heads, source_length, head_dim)
            output = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
            output = output.permute(2, 0, 1, 3).reshape(batch * target_length, embed_dim)
            weights = None
        output = F.linear(output, self.out_proj.weight, self.out_proj.bias)
        output = output.reshape(target_length, batch, embed_dim)
        if not is_batched:
            output = output.squeeze(1)
        elif self.batch_first:
            output = output.transpose(1, 0)
        return output, weights

    def _attention_mask(
        self, attn_mask: Tensor | None, batch: int, target_length: int, source_length: int
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
        expected = (batch * self.num_heads, target_length, source_length)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}."
            )
        return attn_mask


def _batch_second(
    query: Tensor, key: Tensor, value: Tensor, unsqueeze: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    """Move the batch dim to position 1 (or add one), keeping `query is key` identities."""

    def move(x: Tensor) -> Tensor:
        return x.unsqueeze(1) if unsqueeze else x.transpose(1, 0)

    new_query = move(query)
    new_key = new_query if key is query else move(key)
    if value is key:
        new_value = new_key
    elif value is query:
        new_value = new_query
    else:
        new_value = move(value)
    return new_query, new_key, new_value


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Append a zero column to a float mask (for the zero-attention key)."""
    if mask is None:
        return None
    zeros = lucid.zeros((*mask.shape[:-1], 1), dtype=mask.dtype)
    return lucid.cat([mask, zeros], -1)


class ReLU6(Hardtanh):
    """min(max(0, x), 6) elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class SELU(Module):
    """scale * elu(x, alpha) with the self-normalising constants."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class PReLU(Module):
    """max(0, x) + weight * min(0, x), with a learnt weight (one, or one per channel)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(lucid.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Hardsigmoid(Module):
    """relu6(x + 3) / 6."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """x * relu6(x + 3) / 6."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Threshold(Module):
    """x where x > threshold, else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_repr(self.inplace, ', ')}"


class GLU(Module):
    """a * sigmoid(b) over the halves a, b of the input along dim."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """softmax(-x) along dim."""

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)


class RReLU(Module):
    """x for x >= 0, a * x otherwise, a ~ U(lower, upper) per element in training and
    (lower + upper) / 2 in evaluation."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_repr(self.inplace, ', ')}"
