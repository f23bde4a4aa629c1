"""PixelShuffle, PixelUnshuffle and the upsampling layers, over lucid.nn.functional."""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.module import Module

__all__ = [
    "PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "ChannelShuffle",
]  # fmt: skip


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r)."""

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W)."""

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of `(N, C, *)` input from `groups` groups."""

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Upsample(Module):
    """F.interpolate as a layer."""

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]  # fmt: skip

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest upsampling of (N, C, H, W) input."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) input, align_corners=True."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
