"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d, as in torch.nn."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.linear import _reset_fan_in_uniform
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
]  # fmt: skip

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value: Any, count: int) -> tuple:
    # as torch.nn.modules.utils._ntuple: any iterable, a string too, becomes a tuple of its items
    if isinstance(value, Iterable):
        return tuple(value)
    return (value,) * count


class _ConvNd(Module):
    """Argument checks, parameters, initialisation and repr shared by the convolution layers."""

    __constants__ = [
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    ]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: str | tuple[int, ...],
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            # PyTorch prints a set, whose order varies with the string hash seed: a set built
            # in the same order prints the same way in the same process
            valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, "
                f"but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for the non-zero padding modes: last dim first, (left, right) each
        if isinstance(padding, str):
            amounts: list[int] = []
            if padding == "same":
                for d, k in zip(reversed(dilation), reversed(kernel_size)):
                    total = d * (k - 1)
                    amounts += [total // 2, total - total // 2]
            else:
                amounts = [0, 0] * len(kernel_size)
            self._reversed_padding_repeated_twice = amounts
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in (0, 1)]
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(lucid.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(lucid.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_fan_in_uniform(self.weight, self.bias)

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        # a padding string compares unequal to the all-zero tuple, so it is always shown
        if self.padding != (0,) * len(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, 1),
            _ntuple(stride, 1),
            padding if isinstance(padding, str) else _ntuple(padding, 1),
            _ntuple(dilation, 1),
            False,
            (0,),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
            return F.conv1d(
                padded, self.weight, self.bias, self.stride, (0,), self.dilation, self.groups
            )
        return F.conv1d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, 2),
            _ntuple(stride, 2),
            padding if isinstance(padding, str) else _ntuple(padding, 2),
            _ntuple(dilation, 2),
            False,
            (0, 0),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
            return F.conv2d(
                padded, self.weight, self.bias, self.stride, (0, 0), self.dilation, self.groups
            )
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, 3),
            _ntuple(stride, 3),
            padding if isinstance(padding, str) else _ntuple(padding, 3),
            _ntuple(dilation, 3),
            False,
            (0, 0, 0),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
            return F.conv3d(
                padded, self.weight, self.bias, self.stride, (0, 0, 0), self.dilation, self.groups
            )
        return F.conv3d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer of `_dims` spatial dims (the gradient of the plain
    convolution with respect to its input).

    `forward(input, output_size)` picks the output padding that yields `output_size`, which
    resolves the ambiguity of strided shapes.
    """

    _dims = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        dims = self._dims
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, dims),
            _ntuple(stride, dims),
            _ntuple(padding, dims),
            _ntuple(dilation, dims),
            True,
            _ntuple(output_padding, dims),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple:
        if output_size is None:
            return self.output_padding
        spatial = self._dims
        leading = 2 if input.dim() == spatial + 2 else 1
        output_size = list(output_size)
        if len(output_size) == leading + spatial:
            output_size = output_size[leading:]
        if len(output_size) != spatial:
            raise ValueError(
                f"ConvTranspose{spatial}D: for {input.dim()}D input, output_size must have "
                f"{spatial} or {leading + spatial} elements (got {len(output_size)})"
            )
        smallest = [
            (input.size(d + leading) - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(spatial)
        ]
        # a stride s maps s consecutive output sizes to the same input size
        largest = [smallest[d] + self.stride[d] - 1 for d in range(spatial)]
        for size, low, high in zip(output_size, smallest, largest, strict=True):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {smallest} to {largest} (for an input of {input.shape[2:]})"
                )
        return tuple(output_size[d] - smallest[d] for d in range(spatial))


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L) input."""

    _dims = 1

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose1d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input."""

    _dims = 2

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""

    _dims = 3

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose3d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )
