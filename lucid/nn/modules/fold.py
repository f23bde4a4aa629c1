"""Fold and Unfold: sliding local blocks of an image as columns (im2col) and back (col2im)."""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums sliding-block columns `(N, C * prod(kernel_size), L)` into an `(N, C, *output_size)`
    image; the adjoint of Unfold."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:  # fmt: skip
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Extracts the sliding local blocks of an (N, C, H, W) image as columns
    (N, C * prod(kernel_size), L)."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )
