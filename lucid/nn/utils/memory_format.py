"""Convolution weight memory formats: lucid's NumPy tensors have one layout, so these return
the module unchanged."""

from __future__ import annotations

from typing import Any, TypeVar

from lucid.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

ModuleT = TypeVar("ModuleT", bound=Module)


def convert_conv2d_weight_memory_format(module: ModuleT, memory_format: Any) -> ModuleT:
    """Return `module`: its convolution weights already have lucid's only layout."""
    return module


def convert_conv3d_weight_memory_format(module: ModuleT, memory_format: Any) -> ModuleT:
    """Return `module`: its convolution weights already have lucid's only layout."""
    return module
