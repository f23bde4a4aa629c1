"""Padding layers (ZeroPad*, ConstantPad*, ReflectionPad*, ReplicationPad*, CircularPad*)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]  # fmt: skip


def _amounts(padding: Any, count: int) -> tuple[int, ...]:
    if isinstance(padding, Sequence):
        return tuple(padding)
    return (padding,) * count


class _PadNd(Module):
    __constants__ = ["padding", "mode"]
    mode = "constant"
    _count = 2

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._count)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant value."""

    _count = 2


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant value."""

    _count = 4


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant value."""

    _count = 6


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection about the edge element."""

    mode = "reflect"
    _count = 2


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims with their reflection about the edge elements."""

    mode = "reflect"
    _count = 4


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims with their reflection about the edge elements."""

    mode = "reflect"
    _count = 6


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge elements."""

    mode = "replicate"
    _count = 2


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating their edge elements."""

    mode = "replicate"
    _count = 4


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating their edge elements."""

    mode = "replicate"
    _count = 6


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        # PyTorch's circular layers (unlike F.pad) take only their own ranks, batched or not
        dims = self._count // 2
        if input.dim() not in (dims + 1, dims + 2):
            raise ValueError(
                f"expected {dims + 1}D or {dims + 2}D input (got {input.dim()}D input)"
            )
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping it around."""

    _count = 2


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims by wrapping them around."""

    _count = 4


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims by wrapping them around."""

    _count = 6
