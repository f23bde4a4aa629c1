"""Per-sample normalization layers: LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _shape_tuple(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims, then scale and shift elementwise."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(lucid.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(
                    lucid.empty(self.normalized_shape, device=device, dtype=dtype)
                )
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Split the channels of `(N, C, *)` into `num_groups` groups and normalize each group."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(lucid.empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(lucid.empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Divide by the root mean square over the trailing dims, then scale elementwise.

    With `eps=None` the machine epsilon of the input's dtype is used, as in PyTorch.
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: Any,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(lucid.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Normalize each channel by the squares of its `size` neighbouring channels."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Local response normalization across the channels of (N, C, H, W) input, with the
    legacy cross-map window: channel c is scaled by the squares of channels
    max(1, c - (size - 1) // 2) .. c + size // 2, and always of channel 0.

    The forward is PyTorch's; the gradient is the exact derivative of it, where PyTorch's
    hand-written backward for this legacy layer is not (it fails gradcheck)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        if not input.is_floating_point():
            # PyTorch scales its in-place buffer of the input's type by a float
            kind = input.type().removeprefix("lucid.").removesuffix("Tensor")
            raise RuntimeError(f"result type Float can't be cast to the desired output type {kind}")
        channels = input.shape[1]
        # PyTorch's running-window form adds channel c + pre_pad - 1 at each step and removes
        # c - pre_pad only past pre_pad, so channel 0 stays in every window
        pre_pad = int((self.size - 1) / 2 + 1)
        index = np.arange(channels)
        upper = np.minimum(index + pre_pad - 1, channels - 1)
        lower = np.maximum(index - pre_pad + 1, 1)
        window = (index[None, :] >= lower[:, None]) & (index[None, :] <= upper[:, None])
        window[:, 0] = True
        window = lucid.tensor(window.T.astype(input._data.dtype))
        squares = (input * input).movedim(1, -1).matmul(window).movedim(-1, 1)
        scale = squares * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
