"""Convolution weight memory formats: lucid's NumPy tensors have one layout, so these check
their arguments as PyTorch does and return the module unchanged."""

from __future__ import annotations

from typing import Any, TypeVar

from lucid._core.arguments import type_name
from lucid._core.layouts import channels_last, channels_last_3d, preserve_format
from lucid._core.layouts import memory_format as _memory_format
from lucid.nn.modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from lucid.nn.modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

ModuleT = TypeVar("ModuleT", bound=Module)


def _check_memory_format(memory_format: Any, rank: int) -> None:
    """What PyTorch's weight.clone(memory_format=...) and resize_(..., memory_format=...)
    refuse for a convolution weight of `rank` dims."""
    if memory_format is None:
        return
    if not isinstance(memory_format, _memory_format):
        raise TypeError(
            "clone(): argument 'memory_format' must be lucid.memory_format, not "
            f"{type_name(memory_format)}"
        )
    if memory_format is channels_last and rank != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if memory_format is channels_last_3d and rank != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")


def convert_conv2d_weight_memory_format(module: ModuleT, memory_format: Any) -> ModuleT:
    """Return `module`: its convolution weights already have lucid's only layout."""
    if isinstance(module, Conv2d | ConvTranspose2d):
        _check_memory_format(memory_format, 4)
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module


def convert_conv3d_weight_memory_format(module: ModuleT, memory_format: Any) -> ModuleT:
    """Return `module`: its convolution weights already have lucid's only layout."""
    if isinstance(module, Conv3d | ConvTranspose3d):
        _check_memory_format(memory_format, 5)
    for child in module.children():
        convert_conv3d_weight_memory_format(child, memory_format)
    return module
