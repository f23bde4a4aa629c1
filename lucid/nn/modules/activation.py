"""Activation modules and multi-head attention, thin wrappers over lucid.nn.functional."""

from __future__ import annotations

import warnings
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn._attention import _canonical_mask
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
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", query.dtype
        )
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        if self.batch_first and is_batched:
            query, key, value = _batch_second(query, key, value)
        separate = not self._qkv_same_embed_dim
        output, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            output = output.transpose(1, 0)
        return output, weights


def _batch_second(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Move the batch dim to position 1, keeping `query is key` identities."""

    def move(x: Tensor) -> Tensor:
        return x.transpose(1, 0)

    new_query = move(query)
    new_key = new_query if key is query else move(key)
    if value is key:
        new_value = new_key
    elif value is query:
        new_value = new_query
    else:
        new_value = move(value)
    return new_query, new_key, new_value


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
    """`x` where `|x| > lambd`, else 0."""

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
    """`x / (1 + |x|)`."""

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
