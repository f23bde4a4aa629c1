"""Neural-network ops: the pooling family (used through lucid.nn.functional).

Max, average, adaptive, power-average, fractional pooling and max unpooling over 1-D, 2-D
and 3-D input. Fixed windows read a strided view of the padded input (convolution's
`_windows`) and fold gradients back with `Col2Im`; windows of varying position (adaptive,
fractional) gather their elements through index arrays, and their gradients scatter back
through the same indices.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import int_list_item_error, is_int_list_item
from lucid._core.dtypes import FLOAT_KINDS, SCALAR_TYPE_NAMES
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import Function
from lucid._core.grad_mode import is_grad_enabled, local_state
from lucid._core.tensor import _wrap
from lucid.factories import rand
from lucid.ops._common import autocast_op, check_tensors, not_implemented, zeros_like_grad
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.activations import relu
from lucid.ops.convolution import (
    Col2Im,
    Pair,
    _check_int_sizes,
    _is_int,
    _parser_type_name,
    _size_list,
    _tuple,
    _windows,
)
from lucid.ops.fills import to
from lucid.ops.indexing import gather, scatter_add
from lucid.ops.pointwise import where
from lucid.ops.products import matmul

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
]  # fmt: skip


def _check_pool_arguments(op: str, kernel_size: Any, stride: Any, padding: Any,
                          dilation: Any = 1) -> None:  # fmt: skip
    """The argument types of max_poolNd / avg_poolNd, checked before any size, as PyTorch's
    parser does (a stride of None or () is the kernel's)."""
    _check_int_sizes(op, "kernel_size", 2, kernel_size)
    if stride is not None:
        _check_int_sizes(op, "stride", 3, stride)
    _check_int_sizes(op, "padding", 4, padding)
    _check_int_sizes(op, "dilation", 5, dilation)


def _check_divisor(op: str, divisor_override: Any) -> None:
    if divisor_override is not None and not _is_int(divisor_override):
        raise TypeError(
            f"{op}(): argument 'divisor_override' (position 7) must be int, not "
            f"{_parser_type_name(divisor_override)}"
        )


def _pool_pair(value: Any, name: str, op: str) -> Pair:
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return (int(value[0]),) * 2
        if len(value) != 2:
            raise RuntimeError(f"{op}: {name} must either be a single int, or a tuple of two ints")
        return (int(value[0]), int(value[1]))
    return (int(value), int(value))


def _pool_out(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool):
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    # a ceil_mode window must start inside the input or its left padding
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _checked_pool_out(size: int, kernel: int, stride: int, padding: int, dilation: int,
                      ceil_mode: bool) -> int:  # fmt: skip
    """One dim's output size, after the checks PyTorch makes while computing it."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if padding < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {padding}")
    # C++'s division, which rounds toward zero (the effective kernel may be negative here)
    if padding > int(((kernel - 1) * dilation + 1) / 2):
        raise RuntimeError(
            "pad should be at most half of effective kernel size, but got "
            f"pad={padding}, kernel_size={kernel} and dilation={dilation}"
        )
    return _pool_out(size, kernel, stride, padding, dilation, ceil_mode)


def _pool_config(
    op: str,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> tuple[Pair, Pair, Pair, Pair, Pair]:
    """Checks and sizes of max_pool2d / avg_pool2d, in PyTorch's order and words."""
    kernel = _pool_pair(kernel_size, "kernel_size", op)
    stride_p = (
        kernel
        if stride is None or stride == [] or stride == ()
        else _pool_pair(stride, "stride", op)
    )
    padding_p = _pool_pair(padding, "padding", op)
    dilation_p = _pool_pair(dilation, "dilation", op)
    if op == "max_pool2d" and input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    # PyTorch reads the plane count first, which fails below 3 dims with its IndexError
    if input.dim() == 0:
        raise IndexError("Dimension specified as -3 but tensor has no dimensions")
    channels = input.size(-3)
    in_size = input.shape[-2:]
    out_size = tuple(
        _checked_pool_out(s, k, st, p, d, ceil_mode)
        for s, k, st, p, d in zip(in_size, kernel, stride_p, padding_p, dilation_p)
    )
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}"
        )
    if any(s <= 0 for s in stride_p):
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {stride_p[0]} dW: {stride_p[1]}"
        )
    if any(d <= 0 for d in dilation_p):
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{dilation_p[0]} dilationW: {dilation_p[1]}"
        )
    if input.dim() not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            f"got:{_size_list(input.shape)}"
        )
    if any(o < 1 for o in out_size):
        raise RuntimeError(
            f"Given input size: ({channels}x{in_size[0]}x{in_size[1]}). Calculated output size: "
            f"({channels}x{out_size[0]}x{out_size[1]}). Output size is too small"
        )
    return kernel, stride_p, padding_p, dilation_p, out_size


def _first_inside(out: int, stride: int, padding: int, dilation: int) -> np.ndarray:
    """Per output position, the first kernel offset that lands inside the input."""
    starts = np.arange(out) * stride - padding
    return np.where(starts >= 0, 0, -(starts // dilation))


def _tile_max(array: np.ndarray, kh: int, kw: int) -> tuple[np.ndarray, np.ndarray]:
    """Max and first argmax (row-major within the window) of kh x kw windows tiling x.

    Columns are reduced within each input row, then rows, so most passes read contiguous
    memory; a later position wins only when strictly greater, which keeps the first of
    ties as PyTorch does. NaN propagates through np.maximum but never wins a comparison:
    the caller points NaN windows at their last NaN.
    """
    n, c, h, w = array.shape
    out_h, out_w = h // kh, w // kw
    index = np.uint8 if kh * kw <= 256 else np.int64
    rows = array.reshape(n, c, h, out_w, kw)
    best = rows[..., 0].copy()
    column = np.zeros(best.shape, dtype=index)
    for j in range(1, kw):
        candidate = rows[..., j]
        # column = j where the candidate wins: j - column >= 0 since column < j
        column += (candidate > best) * (index(j) - column)
        np.maximum(best, candidate, out=best)
    best = best.reshape(n, c, out_h, kh, out_w)
    column = column.reshape(n, c, out_h, kh, out_w)
    values = best[:, :, :, 0].copy()
    position = column[:, :, :, 0].copy()
    for i in range(1, kh):
        candidate = best[:, :, :, i]
        position += (candidate > values) * (index(i * kw) + column[:, :, :, i] - position)
        np.maximum(values, candidate, out=values)
    return values, position


@functools.lru_cache(maxsize=8)
def _tile_corners(planes: int, out_h: int, out_w: int, kernel: Pair) -> np.ndarray:
    """The flat input index of each tiling window's top-left element, per (plane, row, col).

    Cached: a training loop pools the same shapes every step, and building these indices
    costs a quarter of the scatter they feed.
    """
    kh, kw = kernel
    w = out_w * kw
    corners = (
        np.arange(planes).reshape(-1, 1, 1) * (out_h * kh * w)
        + np.arange(out_h).reshape(-1, 1) * (kh * w)
        + np.arange(out_w) * kw
    )
    corners.flags.writeable = False
    return corners


def _scatter_to_argmax(grad: np.ndarray, argmax: np.ndarray, kernel: Pair) -> np.ndarray:
    """Each output's gradient written to its window's argmax, windows tiling the input.

    One fancy-index assignment: every window owns distinct input elements, so nothing
    collides, and a non-finite gradient reaches only its argmax (as with `where`).
    """
    n, c, out_h, out_w = grad.shape
    kh, kw = kernel
    h, w = out_h * kh, out_w * kw
    # each window's corner plus its argmax's offset within the window
    offsets = (np.arange(kh * kw) // kw) * w + np.arange(kh * kw) % kw
    index = (
        _tile_corners(n * c, out_h, out_w, kernel) + offsets[argmax.reshape(n * c, out_h, out_w)]
    )
    grad_x = np.zeros(n * c * h * w, dtype=grad.dtype)
    grad_x[index.ravel()] = grad.ravel()
    return grad_x.reshape(n, c, h, w)


def _last_nan_hits(windows: np.ndarray, values: np.ndarray, positions: int):
    """(k, hit) from the last kernel position down, for windows whose max is NaN: `hit` marks
    those whose last NaN sits at k (PyTorch lets a later NaN win the argmax)."""
    is_nan = np.isnan(values)
    if not is_nan.any():
        return
    kw = windows.shape[3]
    for k in reversed(range(positions)):
        hit = np.isnan(windows[:, :, k // kw, k % kw]) & is_nan
        yield k, hit
        is_nan &= ~hit


class MaxPool2D(Function):
    """Max over each window; with `return_indices`, also PyTorch's flat (h * W + w) argmax."""

    _backward_name = "MaxPool2DWithIndicesBackward0"
    _complex_refusal = (NotImplementedError, "\"max_pool2d\" not implemented for '{dtype}'")
    _keeps_values_for_backward = True  # PyTorch saves the input and the argmax indices

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, out_size, return_indices):
        # float16 and bfloat16 are compared in float32 (ml_dtypes' own loops are slow); every
        # maximum is one of the inputs, so rounding it back is exact
        array = widen(x._data)
        is_batched = array.ndim == 4
        if not is_batched:
            array = array[None]
        n, c, h, w = array.shape
        kh, kw = kernel
        out_h, out_w = out_size
        is_float = array.dtype.kind in FLOAT_KINDS
        fill = -np.inf if is_float else np.iinfo(array.dtype).min
        # windows that tile the input exactly are a reshape of it: their argmax positions are
        # all backward needs (it scatters gradients there, or builds a mask from them)
        tiles = (
            stride == kernel
            and padding == (0, 0)
            and dilation == (1, 1)
            and (h, w) == (kh * out_h, kw * out_w)
        )
        if tiles:
            values, position = _tile_max(array, kh, kw)
            windows = array.reshape(n, c, out_h, kh, out_w, kw).transpose(0, 1, 3, 5, 2, 4)
            if is_float:
                for k, hit in _last_nan_hits(windows, values, kh * kw):
                    position[hit] = k
            # a window of -inf already points at its first element, as in PyTorch
            ctx.tile_argmax = position
            ctx.save_for_backward()
        else:
            windows = _windows(array, kernel, stride, padding, dilation, out_size, fill)
            mask = np.empty((n, c, kh, kw, out_h, out_w), dtype=bool)
            # one vectorised pass per kernel position (kernels are small, outputs large);
            # np.maximum propagates NaN, as PyTorch's max pooling does
            values = windows[:, :, 0, 0].copy()
            for k in range(1, kh * kw):
                np.maximum(values, windows[:, :, k // kw, k % kw], out=values)
            # the argmax as a one-hot mask over kernel positions: the first position holding
            # the maximum, as in PyTorch (ties keep the first; NaN windows get no hit here)
            taken = np.zeros((n, c, out_h, out_w), dtype=bool)
            for k in range(kh * kw):
                hit = mask[:, :, k // kw, k % kw]
                np.equal(windows[:, :, k // kw, k % kw], values, out=hit)
                np.greater(hit, taken, out=hit)
                taken |= hit
            if is_float:
                for k, hit in _last_nan_hits(windows, values, kh * kw):
                    mask[:, :, k // kw, k % kw] |= hit
            is_fill = values == fill
            if is_fill.any():
                # a window whose inputs all equal the padding value points at its first real
                # input (as in PyTorch), never at padding
                first_h = _first_inside(out_h, stride[0], padding[0], dilation[0])
                first_w = _first_inside(out_w, stride[1], padding[1], dilation[1])
                mask &= ~is_fill[:, :, None, None]
                batch, channel, row, col = np.nonzero(is_fill)
                mask[batch, channel, first_h[row], first_w[col], row, col] = True
            ctx.save_for_backward(_wrap(mask))
        ctx.is_batched = is_batched
        ctx.tiles = tiles
        ctx.in_size = (h, w)
        ctx.config = (kernel, stride, padding, dilation)
        values = round_to(values, x._data.dtype)
        if not is_batched:
            values = values[0]
        if not return_indices:
            return _wrap(values)
        if tiles:
            position = position.astype(np.int64)
        else:
            position = np.zeros((n, c, out_h, out_w), dtype=np.int64)
            for k in range(1, kh * kw):
                position += k * mask[:, :, k // kw, k % kw]
        rows = np.arange(out_h).reshape(-1, 1) * stride[0] - padding[0]
        cols = np.arange(out_w) * stride[1] - padding[1]
        rows = rows + (position // kw) * dilation[0]
        cols = cols + (position % kw) * dilation[1]
        indices = rows * w + cols
        return _wrap(values), _wrap(indices if is_batched else indices[0])

    @staticmethod
    def backward(ctx, grad_values, *grad_indices):
        if not ctx.is_batched:
            grad_values = grad_values.unsqueeze(0)
        n, c, out_h, out_w = grad_values.shape
        if ctx.tiles:
            if is_grad_enabled():
                # differentiable routing: where() over a one-hot mask in the input's layout
                kh, kw = ctx.config[0]
                mask = np.empty((n, c, out_h, kh, out_w, kw), dtype=bool)
                for k in range(kh * kw):
                    np.equal(ctx.tile_argmax, k, out=mask[:, :, :, k // kw, :, k % kw])
                grad_values = grad_values.reshape(n, c, out_h, 1, out_w, 1).expand(mask.shape)
                grad_x = where(_wrap(mask), grad_values, 0.0).reshape(n, c, *ctx.in_size)
            else:
                grad_x = _scatter_to_argmax(grad_values._data, ctx.tile_argmax, ctx.config[0])
                grad_x = _wrap(grad_x)
        else:
            # route each output's gradient to its argmax (an expanded, same-shape operand
            # keeps `where` on its fast path), then fold the windows back onto the input
            (mask,) = ctx.saved_tensors
            grad_values = grad_values.reshape(n, c, 1, 1, out_h, out_w).expand(mask.shape)
            grad_x = Col2Im.apply(where(mask, grad_values, 0.0), ctx.in_size, *ctx.config)
        if not ctx.is_batched:
            grad_x = grad_x.squeeze(0)
        return grad_x, None, None, None, None, None, None


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-D max pooling over (N, C, H, W) or (C, H, W) input."""
    check_tensors(input)
    _check_pool_arguments("max_pool2d", kernel_size, stride, padding, dilation)
    config = _pool_config("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    if input._data.dtype == np.bool_:
        raise not_implemented("max_pool2d", input._data.dtype)
    return MaxPool2D.apply(input, *config, return_indices)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-D max pooling over (N, C, L) or (C, L) input."""
    check_tensors(input)
    _check_pool_arguments("max_pool1d", kernel_size, stride, padding, dilation)
    kernel = _tuple(kernel_size, 1, "kernel_size", conv=False)[0]
    stride_1 = (
        kernel
        if stride is None or stride == [] or stride == ()
        else _tuple(stride, 1, "stride", conv=False)[0]
    )
    pad = _tuple(padding, 1, "padding", conv=False)[0]
    dilation_1 = _tuple(dilation, 1, "dilation", conv=False)[0]
    # with indices PyTorch runs another op: max_pool2d's checks on a unit-height input
    if return_indices:
        if input.dim() not in (2, 3):
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for "
                "argument #1 'self' (while checking arguments for max_pool1d)"
            )
    else:
        _check_max_pool1d(input, kernel, stride_1, pad, dilation_1, ceil_mode)
    result = max_pool2d(
        input.unsqueeze(-2), (1, kernel), (1, stride_1), (0, pad), (1, dilation_1), ceil_mode, True
    )
    values, indices = result[0].squeeze(-2), result[1].squeeze(-2)
    return (values, indices) if return_indices else values


def _check_max_pool1d(input: Tensor, kernel: int, stride: int, pad: int, dilation: int,
                      ceil_mode: bool) -> None:  # fmt: skip
    """The checks of PyTorch's max_pool1d kernel (without indices), in its order."""
    if input.dim() not in (2, 3) or 0 in (input.shape if input.dim() == 2 else input.shape[1:]):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_size_list(input.shape)}"
        )
    if kernel <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {kernel}")
    if stride <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {stride}")
    if pad < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pad}")
    if 2 * pad > kernel:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={pad} and kernel_size={kernel}"
        )
    if dilation <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dilation}")
    out = _pool_out(input.shape[-1], kernel, stride, pad, dilation, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if input._data.dtype.kind not in FLOAT_KINDS:
        # PyTorch takes the indices path (max_pool2d's kernel) for an input that needs grad
        if input.is_complex() and input.requires_grad and is_grad_enabled():
            raise not_implemented("max_pool2d", input._data.dtype)
        raise not_implemented("max_pool1d_impl", input._data.dtype)


def _avg_divisor(size: int, out: int, kernel: int, stride: int, padding: int, include_pad: bool):
    starts = np.arange(out) * stride - padding
    ends = np.minimum(starts + kernel, size + padding)
    if include_pad:
        return ends - starts
    return np.minimum(ends, size) - np.maximum(starts, 0)


class AvgPool2D(Function):
    """Mean over each window of a 2-D (or, as `AvgPool3D`, 3-D) input, batched or not."""

    _backward_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, out_size, count_include_pad, divisor_override):
        dims = len(kernel)
        # float16 and bfloat16 windows are summed in float32 and the means rounded once
        array = widen(x._data)
        is_batched = array.ndim == dims + 2
        if not is_batched:
            array = array[None]
        size = array.shape[2:]
        windows = _windows(array, kernel, stride, padding, (1,) * dims, out_size, 0)
        sums = windows.sum(axis=tuple(range(2, 2 + dims)))
        if divisor_override:
            divisor = np.full(out_size, divisor_override, dtype=sums.dtype)
        else:
            divisors = [
                _avg_divisor(*args, count_include_pad)
                for args in zip(size, out_size, kernel, stride, padding)
            ]
            divisor = functools.reduce(np.multiply.outer, divisors).astype(sums.dtype)
        result = sums / divisor
        if array.dtype.kind not in FLOAT_KINDS:
            # integer averages round toward zero, as C's division does
            result = (np.sign(sums) * (np.abs(sums) // divisor)).astype(array.dtype)
        ctx.is_batched = is_batched
        ctx.in_size = size
        ctx.config = (kernel, stride, padding, (1,) * dims)
        ctx.save_for_backward(_wrap(divisor))
        result = round_to(result, x._data.dtype)
        return _wrap(result if is_batched else result[0])

    @staticmethod
    def backward(ctx, grad_output):
        (divisor,) = ctx.saved_tensors
        if not ctx.is_batched:
            grad_output = grad_output.unsqueeze(0)
        n, c, *out_size = grad_output.shape
        kernel = ctx.config[0]
        # every input in a window gets grad / divisor (float32 for float16 and bfloat16, whose
        # divisor is float32, rounded once at the end)
        grad_cols = (grad_output / divisor).reshape(n, c, *(1,) * len(kernel), *out_size)
        grad_cols = grad_cols.expand(n, c, *kernel, *out_size)
        grad_x = Col2Im.apply(grad_cols, ctx.in_size, *ctx.config)
        if grad_x.dtype != grad_output.dtype:
            grad_x = to(grad_x, grad_output.dtype)
        if not ctx.is_batched:
            grad_x = grad_x.squeeze(0)
        return grad_x, None, None, None, None, None, None


class AvgPool3D(AvgPool2D):
    _backward_name = "AvgPool3DBackward0"


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """2-D average pooling over (N, C, H, W) or (C, H, W) input."""
    check_tensors(input)
    _check_pool_arguments("avg_pool2d", kernel_size, stride, padding)
    _check_divisor("avg_pool2d", divisor_override)
    kernel, stride_p, padding_p, _, out_size = _pool_config(
        "avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode
    )
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return AvgPool2D.apply(
        input, kernel, stride_p, padding_p, out_size, count_include_pad, divisor_override
    )


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-D average pooling over (N, C, L) or (C, L) input."""
    check_tensors(input)
    _check_pool_arguments("avg_pool1d", kernel_size, stride, padding)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
            "#1 'self' (while checking arguments for avg_pool1d)"
        )
    if input._data.dtype.kind == "b":
        raise not_implemented("avg_pool2d", input._data.dtype)
    if 0 in (input.shape if input.dim() == 2 else input.shape[1:]):
        shape = [*input.shape[:-1], 1, input.shape[-1]]
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            f"got:{_size_list(shape)}"
        )
    kernel = _tuple(kernel_size, 1, "kernel_size", conv=False)[0]
    pad = _tuple(padding, 1, "padding", conv=False)[0]
    stride_1 = (
        kernel
        if stride is None or stride == [] or stride == ()
        else _tuple(stride, 1, "stride", conv=False)[0]
    )
    result = avg_pool2d(
        input.unsqueeze(-2), (1, kernel), (1, stride_1), (0, pad), ceil_mode, count_include_pad
    )
    return result.squeeze(-2)


def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Each adaptive window's start and end: [floor(i * size / out), ceil((i+1) * size / out))."""
    index = np.arange(out)
    return (index * size) // out, -((-(index + 1) * size) // out)


def _adaptive_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """(out, size) averaging matrix of the adaptive windows along one dim."""
    starts, ends = _adaptive_bounds(size, out)
    positions = np.arange(size)
    inside = (positions >= starts[:, None]) & (positions < ends[:, None])
    return (inside / (ends - starts)[:, None]).astype(dtype)


def _adaptive_positions(size: int, out: int) -> np.ndarray:
    """(out, L) input positions of each adaptive window; shorter windows repeat their last
    element, which changes no maximum and no first argmax."""
    starts, ends = _adaptive_bounds(size, out)
    length = max(int((ends - starts).max(initial=1)), 1)
    return np.minimum(starts[:, None] + np.arange(length), ends[:, None] - 1)


class AdaptiveAvgPool2D(Function):
    """Mean over PyTorch's adaptive windows of the trailing 2 (or, as `AdaptiveAvgPool3D`,
    3) dims.

    The forward sums each window's own elements, one dim at a time, so an inf or NaN reaches
    only the windows that hold it; the backward spreads the gradient with the (out, size)
    averaging matrix of each dim, a linear map that lucid ops differentiate again.
    """

    _backward_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, out_size):
        # float16 and bfloat16 windows are summed in float32 and the means rounded once
        array = widen(x._data)
        dims = len(out_size)
        sums = array
        counts = []
        for d, out in enumerate(out_size):
            axis = array.ndim - dims + d
            size = array.shape[axis]
            starts, ends = _adaptive_bounds(size, out)
            positions = _adaptive_positions(size, out)
            shape = [1] * (array.ndim + 1)
            shape[axis : axis + 2] = positions.shape
            # the repeated elements that pad short windows are masked out of the sum
            inside = (starts[:, None] + np.arange(positions.shape[1]) < ends[:, None]).reshape(
                shape
            )
            gathered = np.take(sums, positions, axis=axis)
            sums = np.where(inside, gathered, 0).sum(axis=axis + 1)
            counts.append(ends - starts)
        divisor = functools.reduce(np.multiply.outer, counts).astype(array.dtype)
        matrices = [
            _wrap(_adaptive_matrix(array.shape[array.ndim - dims + d], out, array.dtype))
            for d, out in enumerate(out_size)
        ]
        ctx.save_for_backward(*matrices)
        return _wrap(round_to(sums / divisor, x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        matrices = ctx.saved_tensors
        dims = len(matrices)
        dtype = grad_output.dtype
        # float16 and bfloat16 spread the gradient in float32, with the float32 matrices
        grad_x = (
            to(grad_output, _FLOAT32) if is_low_precision(grad_output._data.dtype) else grad_output
        )
        # the pooling is linear, out = P_d x along each dim d, so grad_x = P_d^T grad
        for d, matrix in enumerate(matrices):
            axis = grad_x.dim() - dims + d
            grad_x = matmul(grad_x.transpose(axis, -1), matrix).transpose(axis, -1)
        return (grad_x if grad_x.dtype == dtype else to(grad_x, dtype)), None


class AdaptiveAvgPool3D(AdaptiveAvgPool2D):
    _backward_name = "AdaptiveAvgPool3DBackward0"


def _check_nonempty(op: str, input: Tensor) -> None:
    for dim in range(1, input.dim()):
        if input.shape[dim] == 0:
            raise RuntimeError(
                f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {_size_list(input.shape)} with dimension {dim} being empty"
            )


def _adaptive_output_size(op: str, input: Tensor, output_size: Any) -> Any:
    """PyTorch's _list_with_default, then its parser's check: an int, or a list of ints with
    each None item taken from the input's size."""
    if isinstance(output_size, int):
        _check_int_sizes(op, "output_size", 2, output_size)
        return output_size
    # len() of a non-sequence raises Python's own TypeError, as in PyTorch
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    defaults = input.shape[-len(output_size) :]
    sizes = [size if size is not None else d for size, d in zip(output_size, defaults)]
    _check_int_sizes(op, "output_size", 2, sizes)
    return sizes


def _adaptive_sizes(input: Tensor, output_size: Any, dims: int) -> tuple:
    sizes = output_size if isinstance(output_size, list | tuple) else (output_size,) * dims
    in_size = input.shape[-dims:]
    return tuple(int(s) if s is not None else i for s, i in zip(sizes, in_size))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (Ho, Wo) with PyTorch's adaptive window boundaries."""
    check_tensors(input)
    output_size = _adaptive_output_size("adaptive_avg_pool2d", input, output_size)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_size_list(input.shape)}"
        )
    if isinstance(output_size, (list, tuple)) and len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out_size = _adaptive_sizes(input, output_size, 2)
    if out_size[0] < 0 or out_size[1] < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{out_size[0]}, {out_size[1]}}}"
        )
    _check_nonempty("adaptive_avg_pool2d", input)
    # complex input has only the global average, which PyTorch runs as a mean
    if not input.is_floating_point() and not (input.is_complex() and out_size == (1, 1)):
        raise not_implemented("adaptive_avg_pool2d", input._data.dtype)
    if out_size == (1, 1):
        # a global average is a plain mean, as in PyTorch
        return input.mean((-1, -2), keepdim=True)
    return AdaptiveAvgPool2D.apply(input, out_size)


def _check_1d_pool(op: str, input: Tensor, output_size: Any) -> int:
    """The checks the 1-D adaptive pools make before they run as 2-D; the output size."""
    check_tensors(input)
    _check_int_sizes(op, "output_size", 2, output_size)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for {op})"
        )
    if isinstance(output_size, list | tuple):
        if len(output_size) != 1:
            raise RuntimeError(
                f"{op}() argument 'output_size' should contain one int (got {len(output_size)})"
            )
        output_size = output_size[0]
    return int(output_size)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of (N, C, L) or (C, L) input to a fixed length."""
    out = _check_1d_pool("adaptive_avg_pool1d", input, output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out)).squeeze(-2)


@autocast_op
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (Do, Ho, Wo) with PyTorch's adaptive window boundaries."""
    check_tensors(input)
    output_size = _adaptive_output_size("adaptive_avg_pool3d", input, output_size)
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {_size_list(input.shape)}"
        )
    if isinstance(output_size, (list, tuple)) and len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    out_size = _adaptive_sizes(input, output_size, 3)
    if any(o < 0 for o in out_size):
        raise RuntimeError(
            "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{out_size[0]}, {out_size[1]},{out_size[2]}}}"
        )
    _check_nonempty("adaptive_avg_pool3d", input)
    # complex input has only the global average, which PyTorch runs as a mean
    if not input.is_floating_point() and not (input.is_complex() and out_size == (1, 1, 1)):
        raise not_implemented("adaptive_avg_pool3d_cpu", input._data.dtype)
    if out_size == (1, 1, 1):
        # a global average is a plain mean, as in PyTorch
        return input.mean((-1, -2, -3), keepdim=True)
    return AdaptiveAvgPool3D.apply(input, out_size)


# ------------------------------------------------------------ gathered windows
def _flat_windows(positions: list[np.ndarray], size: tuple[int, ...]) -> np.ndarray:
    """The flat in-plane index of every window element: (..., prod(out), prod(lengths)).

    `positions[d]` holds dim d's input positions per window, (..., out_d, length_d), with the
    same leading dims for every d (none, or the (N, C) of per-plane windows).
    """
    dims = len(size)
    lead = positions[0].shape[:-2]
    flat = np.zeros((), dtype=np.int64)
    for d, where_d in enumerate(positions):
        shape = [1] * (2 * dims)
        shape[d], shape[dims + d] = where_d.shape[-2:]
        flat = flat + where_d.reshape(*lead, *shape) * math.prod(size[d + 1 :])
    out = math.prod(p.shape[-2] for p in positions)
    length = math.prod(p.shape[-1] for p in positions)
    return flat.reshape(*lead, out, length)


def _gathered_max(array: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max and argmax (as a flat in-plane index) of the windows `flat` picks from each
    (N, C) plane of `array`, with PyTorch's rule: the first maximum, or the last NaN."""
    n, c = array.shape[:2]
    planes = array.reshape(n, c, math.prod(array.shape[2:]))
    out, length = flat.shape[-2:]
    if flat.ndim == 2:
        windows = planes[:, :, flat]
    else:
        picks = np.take_along_axis(planes, flat.reshape(n, c, out * length), axis=2)
        windows = picks.reshape(n, c, out, length)
    # every window holds at least one element
    values = windows.max(axis=-1)
    argmax = windows.argmax(axis=-1)
    if array.dtype.kind in FLOAT_KINDS:
        is_nan = np.isnan(windows)
        has_nan = is_nan.any(axis=-1)
        if has_nan.any():
            last_nan = length - 1 - is_nan[..., ::-1].argmax(axis=-1)
            argmax = np.where(has_nan, last_nan, argmax)
    if flat.ndim == 2:
        indices = flat[np.arange(out), argmax]
    else:
        indices = np.take_along_axis(flat, argmax[..., None], axis=-1)[..., 0]
    return values, indices


class AdaptiveMaxPool2D(Function):
    """Max over windows given as flat index arrays (adaptive, 3-D and fractional max
    pooling); returns the values and PyTorch's flat in-plane argmax indices.

    Backward adds each output's gradient at its argmax (windows may overlap, so repeats add
    up), as a scatter_add that lucid differentiates again.
    """

    _backward_name = "AdaptiveMaxPool2DBackward0"
    _keeps_values_for_backward = True  # PyTorch saves the input and the argmax indices

    @staticmethod
    def forward(ctx, x, positions, out_size, batched):
        # float16 and bfloat16 are compared in float32 (ml_dtypes' own loops are slow); every
        # maximum is one of the inputs, so rounding it back is exact
        array = widen(x._data if batched else x._data[None])
        values, indices = _gathered_max(array, _flat_windows(positions, array.shape[2:]))
        values = round_to(values, x._data.dtype)
        shape = (*array.shape[:2], *out_size)
        values, indices = values.reshape(shape), indices.reshape(shape)
        if not batched:
            values, indices = values[0], indices[0]
        indices_tensor = _wrap(indices)
        ctx.in_shape = x.shape
        ctx.planes = x.shape[: x.dim() - len(out_size)]
        ctx.outputs = math.prod(out_size)
        ctx.save_for_backward(indices_tensor)
        return _wrap(values), indices_tensor

    @staticmethod
    def backward(ctx, grad_values, *grad_indices):
        (indices,) = ctx.saved_tensors
        planes = ctx.planes
        inputs = math.prod(ctx.in_shape[len(planes) :])
        grad_planes = grad_values.reshape(*planes, ctx.outputs)
        index = indices.reshape(*planes, ctx.outputs)
        zeros = zeros_like_grad(grad_values, (*planes, inputs))
        grad_x = scatter_add(zeros, -1, index, grad_planes)
        return grad_x.reshape(ctx.in_shape), None, None, None


class AdaptiveMaxPool3D(AdaptiveMaxPool2D):
    _backward_name = "AdaptiveMaxPool3DBackward0"


class MaxPool3D(AdaptiveMaxPool2D):
    _backward_name = "MaxPool3DWithIndicesBackward0"
    _complex_refusal = (NotImplementedError, "\"max_pool3d\" not implemented for '{dtype}'")


class FractionalMaxPool2D(AdaptiveMaxPool2D):
    _backward_name = "FractionalMaxPool2DBackward0"
    _complex_refusal = (
        NotImplementedError,
        "\"fractional_max_pool2d_out_frame\" not implemented for '{dtype}'",
    )


class FractionalMaxPool3D(AdaptiveMaxPool2D):
    _backward_name = "FractionalMaxPool3DBackward0"
    _complex_refusal = (
        NotImplementedError,
        "\"fractional_max_pool3d_out_frame\" not implemented for '{dtype}'",
    )


# ------------------------------------------------------------------ 3-D max and average
_THREE = "a single int, or a tuple of three ints"


def _pool_triple(value: Any, message: str) -> tuple[int, int, int]:
    if isinstance(value, list | tuple):
        if len(value) == 1:
            return (int(value[0]),) * 3
        if len(value) != 3:
            raise RuntimeError(message)
        return int(value[0]), int(value[1]), int(value[2])
    return (int(value),) * 3


def _pool3d_config(op, input, kernel_size, stride, padding, dilation, ceil_mode, is_max,
                   divisor_override=None):  # fmt: skip
    """Checks and sizes of max_pool3d / avg_pool3d, in PyTorch's order and words."""
    check_tensors(input)
    _check_pool_arguments(op, kernel_size, stride, padding, dilation)
    _check_divisor(op, divisor_override)
    either = "either " if is_max else ""
    kernel = _pool_triple(kernel_size, f"{op}: kernel_size must {either}be {_THREE}")
    if stride is None or stride == [] or stride == ():
        stride_t = kernel
    else:
        stride_t = _pool_triple(stride, f"{op}: stride must {either}be omitted, {_THREE}")
    padding_t = _pool_triple(padding, f"{op}: padding must {either}be {_THREE}")
    dilation_t = _pool_triple(dilation, f"{op}: dilation must be either {_THREE}")
    if 0 in stride_t:
        raise RuntimeError("stride should not be zero")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            "kernel size should be greater than zero, but got kT: {} kH: {} kW: {}".format(*kernel)
        )
    if any(s <= 0 for s in stride_t):
        raise RuntimeError(
            "stride should be greater than zero, but got dT: {} dH: {} dW: {}".format(*stride_t)
        )
    if any(d <= 0 for d in dilation_t):
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationT: {} dilationH: {} "
            "dilationW: {}".format(*dilation_t)
        )
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    dtype = input._data.dtype
    if dtype.kind == "b" or (not is_max and dtype not in (np.float32, np.float64, np.int64)):
        raise not_implemented("max_pool3d" if is_max else "avg_pool3d_out_frame", dtype)
    if 0 in input.shape[1 if input.dim() == 5 else 0 :]:
        name = "max_pool3d_with_indices_out_cpu_template()" if is_max else "avg_pool3d()"
        raise RuntimeError(
            f"{name}: Expected input's non-batch dimensions to have positive length, but input "
            f"has a shape of {_size_list(input.shape)} and non-batch dimension 0 has length zero!"
        )
    size = input.shape[-3:]
    if not is_max and any(s < k for s, k in zip(size, kernel)):
        raise RuntimeError(
            "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} "
            "kW: {})".format(*size, *kernel)
        )
    for k, p, d in zip(kernel, padding_t, dilation_t):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if 2 * p > (k - 1) * d + 1:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )
    out_size = tuple(
        _pool_out(*args, ceil_mode) for args in zip(size, kernel, stride_t, padding_t, dilation_t)
    )
    if any(o < 1 for o in out_size):
        channels = input.shape[-4]
        raise RuntimeError(
            f"Given input size: ({channels}x{'x'.join(map(str, size))}). Calculated output size: "
            f"({channels}x{'x'.join(map(str, out_size))}). Output size is too small"
        )
    return kernel, stride_t, padding_t, dilation_t, out_size


def _fixed_positions(size, out, kernel, stride, padding, dilation) -> np.ndarray:
    """(out, kernel) input positions of each window of a padded max pooling: a position in
    the padding is replaced by the window's nearest real one, which changes no maximum and
    no first argmax (every window holds a real element)."""
    positions = (np.arange(out) * stride - padding)[:, None] + np.arange(kernel) * dilation
    inside = (positions >= 0) & (positions < size)
    first = np.take_along_axis(positions, inside.argmax(axis=1)[:, None], axis=1)
    last = np.take_along_axis(positions, kernel - 1 - inside[:, ::-1].argmax(axis=1)[:, None], 1)
    return np.where(positions < 0, first, np.where(positions >= size, last, positions))


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) input."""
    # max_pool3d is on the float32 list; with indices it is another op, which is not
    if local_state.autocast is not None and not return_indices:
        return local_state.autocast.run(
            max_pool3d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        )
    kernel, stride_t, padding_t, dilation_t, out_size = _pool3d_config(
        "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, True
    )
    positions = [
        _fixed_positions(*args)
        for args in zip(input.shape[-3:], out_size, kernel, stride_t, padding_t, dilation_t)
    ]
    values, indices = MaxPool3D.apply(input, positions, out_size, input.dim() == 5)
    return (values, indices) if return_indices else values


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:  # fmt: skip
    """max_pool1d's values and argmax indices (whatever `return_indices` says)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:  # fmt: skip
    """max_pool2d's values and argmax indices (whatever `return_indices` says)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:  # fmt: skip
    """max_pool3d's values and argmax indices (whatever `return_indices` says)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@autocast_op
def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W) input."""
    kernel, stride_t, padding_t, _, out_size = _pool3d_config(
        "avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode, False, divisor_override
    )
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return AvgPool3D.apply(
        input, kernel, stride_t, padding_t, out_size, count_include_pad, divisor_override
    )


# ------------------------------------------------------------------ adaptive max
def _adaptive_max(op, cls, dims, input, output_size, return_indices):
    check_tensors(input)
    output_size = _adaptive_output_size(op, input, output_size)
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{op}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
            f"{_size_list(input.shape)}"
        )
    if isinstance(output_size, list | tuple) and len(output_size) != dims:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {dims}")
    out_size = _adaptive_sizes(input, output_size, dims)
    if any(o < 0 for o in out_size):
        shape = [*input.shape[:-dims], *out_size]
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(out_size)}: {_size_list(shape)}"
        )
    _check_nonempty(op, input)
    if not input.is_floating_point():
        raise not_implemented(op if dims == 2 else f"{op}_cpu", input._data.dtype)
    positions = [_adaptive_positions(s, o) for s, o in zip(input.shape[-dims:], out_size)]
    values, indices = cls.apply(input, positions, out_size, input.dim() == dims + 2)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of (N, C, L) or (C, L) input to a fixed length."""
    out = _check_1d_pool("adaptive_max_pool1d", input, output_size)
    values, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, out), True)
    values, indices = values.squeeze(-2), indices.squeeze(-2)
    return (values, indices) if return_indices else values


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed (Ho, Wo) with PyTorch's adaptive window boundaries."""
    return _adaptive_max(
        "adaptive_max_pool2d", AdaptiveMaxPool2D, 2, input, output_size, return_indices
    )


@autocast_op
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed (Do, Ho, Wo) with PyTorch's adaptive window boundaries."""
    return _adaptive_max(
        "adaptive_max_pool3d", AdaptiveMaxPool3D, 3, input, output_size, return_indices
    )


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool1d's values and argmax indices (whatever `return_indices` says)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool2d's values and argmax indices (whatever `return_indices` says)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool3d's values and argmax indices (whatever `return_indices` says)."""
    return adaptive_max_pool3d(input, output_size, True)


# ------------------------------------------------------------------ power-average
def _lp_pool(norm_type: float, pooled: Tensor, window: int) -> Tensor:
    """(sum over the window of x^p)^(1/p) from the window's average of x^p; the sign and
    relu keep the gradient of an all-zero window at zero, as PyTorch's composition does."""
    return (pooled.sign() * relu(pooled.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:  # fmt: skip
    """Power-average pooling over (N, C, L) or (C, L) input: (sum of x^p)^(1/p) per window."""
    check_tensors(input)
    pooled = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    window = kernel_size[0] if isinstance(kernel_size, list | tuple) else kernel_size
    return _lp_pool(norm_type, pooled, window)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:  # fmt: skip
    """Power-average pooling over (N, C, H, W) or (C, H, W) input."""
    check_tensors(input)
    # PyTorch's _pair: an iterable (a string too) is unpacked as it is
    kh, kw = tuple(kernel_size) if isinstance(kernel_size, Iterable) else (kernel_size,) * 2
    pooled = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_pool(norm_type, pooled, kh * kw)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:  # fmt: skip
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W) input."""
    check_tensors(input)
    kd, kh, kw = tuple(kernel_size) if isinstance(kernel_size, Iterable) else (kernel_size,) * 3
    pooled = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_pool(norm_type, pooled, kd * kh * kw)


# ------------------------------------------------------------------ max unpooling
class MaxUnpool2D(Function):
    """Each input value written at its flat in-plane index of a zero output (2-D, or 3-D as
    `MaxUnpool3D`); backward gathers the gradient back from those indices."""

    _backward_name = "MaxUnpool2DBackward0"

    @staticmethod
    def forward(ctx, x, indices, out_size):
        dims = len(out_size)
        planes = x.shape[: x.dim() - dims]
        inputs = math.prod(x.shape[x.dim() - dims :])
        array = x._data.reshape(*planes, inputs)
        result = np.zeros((*planes, math.prod(out_size)), dtype=array.dtype)
        # PyTorch's kernel writes nothing into an empty output (nor reads the indices)
        if result.shape[-1]:
            np.put_along_axis(result, indices._data.reshape(*planes, inputs), array, axis=-1)
        ctx.in_shape = x.shape
        ctx.planes = planes
        ctx.outputs = result.shape[-1]
        ctx.save_for_backward(indices)
        return _wrap(result.reshape(*planes, *out_size))

    @staticmethod
    def backward(ctx, grad_output):
        (indices,) = ctx.saved_tensors
        grad_planes = grad_output.reshape(*ctx.planes, ctx.outputs)
        inputs = math.prod(ctx.in_shape[len(ctx.planes) :])
        grad_x = gather(grad_planes, -1, indices.reshape(*ctx.planes, inputs))
        return grad_x.reshape(ctx.in_shape), None, None


class MaxUnpool3D(MaxUnpool2D):
    _backward_name = "MaxUnpool3DBackward0"


def _unpool_size(op: str, input: Tensor, kernel_size, stride, padding, output_size) -> list:
    """The output size of a max unpooling: the pooled input's size, or `output_size` checked
    against it (a stride makes `stride` sizes pool to the same one)."""
    dims = 3 if op.endswith("3d") else 2 if op.endswith("2d") else 1
    kernel = _unpool_tuple(kernel_size, dims)
    stride = kernel if stride is None else _unpool_tuple(stride, dims)
    padding = _unpool_tuple(padding, dims)
    default = [
        (input.shape[input.dim() - dims + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
        for d in range(dims)
    ]
    if output_size is None:
        sizes = default
    else:
        if len(output_size) == dims + 2:
            output_size = output_size[2:]
        if len(output_size) != dims:
            raise ValueError(
                f"output_size should be a sequence containing {dims} or {dims + 2} elements, but "
                f"it has a length of '{len(output_size)}'"
            )
        for d in range(dims):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {low} and '
                    f"{high})"
                )
        sizes = list(output_size)
    for d, size in enumerate(sizes):
        if size < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={size}"
            )
    # 1-D unpools as 2-D, so its sizes reach a 2-D op
    name = "max_unpool3d" if dims == 3 else "max_unpool2d"
    for index, size in enumerate(sizes):
        if not is_int_list_item(size, index):
            raise int_list_item_error(name, "output_size", 3, index, size)
    return [int(size) for size in sizes]


def _unpool_tuple(value: Any, dims: int) -> tuple:
    if isinstance(value, list | tuple):
        return tuple(value) * dims if len(value) == 1 else tuple(value)
    return (value,) * dims


def _max_unpool(cls, dims, input, indices, out_size, stride=None) -> Tensor:
    check_tensors(input, indices)
    if indices._data.dtype != np.int64:
        got = "" if dims == 3 else f" but got: {SCALAR_TYPE_NAMES[indices._data.dtype.name]}"
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Input to max_unpooling{dims}d should be a {dims + 1}d or {dims + 2}d Tensor, but "
            f"got a tensor with {input.dim()} dimensions."
        )
    if input.shape != indices.shape:
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({_size_list(input.shape)}) but got indices tensor with shape: "
            f"{_size_list(indices.shape)}"
        )
    for dim in range(input.dim() - dims - 1, input.dim()):
        if input.shape[dim] == 0 and (dim or input.dim() == dims + 1):
            raise RuntimeError(
                f"max_unpooling{dims}d_forward_out_cpu(): Expected input to have non-zero size "
                f"for non-batch dimensions, but got {_size_list(input.shape)} with dimension "
                f"{dim} being empty."
            )
    if stride is not None and min(stride) <= 0:
        raise RuntimeError(
            f"strides should be greater than zero, but got stride: {_size_list(stride)}"
        )
    if not input.is_floating_point():
        raise not_implemented(f"max_unpool{dims}d", input._data.dtype)
    index = indices._data
    outputs = math.prod(out_size)
    invalid = (index < 0) | (index >= outputs)
    if outputs and invalid.any():
        raise RuntimeError(
            f"Found an invalid max index: {index[invalid][0]} (output volumes are of size "
            f"{'x'.join(map(str, out_size))})"
        )
    return cls.apply(input, indices, tuple(out_size))


@autocast_op
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:  # fmt: skip
    """The partial inverse of max_pool1d: each value at its index, zeros elsewhere."""
    check_tensors(input, indices)
    out = _unpool_size("max_unpool1d", input, kernel_size, stride, padding, output_size)
    result = _max_unpool(MaxUnpool2D, 2, input.unsqueeze(-1), indices.unsqueeze(-1), (*out, 1))
    return result.squeeze(-1)


@autocast_op
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:  # fmt: skip
    """The partial inverse of max_pool2d: each value at its flat index, zeros elsewhere."""
    check_tensors(input, indices)
    out = _unpool_size("max_unpool2d", input, kernel_size, stride, padding, output_size)
    return _max_unpool(MaxUnpool2D, 2, input, indices, out)


@autocast_op
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:  # fmt: skip
    """The partial inverse of max_pool3d: each value at its flat index, zeros elsewhere."""
    check_tensors(input, indices)
    out = _unpool_size("max_unpool3d", input, kernel_size, stride, padding, output_size)
    # only the 3-D kernel takes (and checks) the stride
    stride = _unpool_tuple(kernel_size if stride is None else stride, 3)
    return _max_unpool(MaxUnpool3D, 3, input, indices, out, stride)


# ------------------------------------------------------------------ fractional max
def _fractional_starts(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """Pseudo-random window starts, (..., out), one sample per plane: the i-th window starts
    at floor((i + u) * a) - floor(u * a) with a = (size - pool) / (out - 1), computed in the
    input's precision; the last window ends at the input's end."""
    starts = np.empty((*samples.shape, out), dtype=np.int64)
    if out > 1:
        dtype = samples.dtype.type
        alpha = dtype(size - pool) / dtype(out - 1)
        index = np.arange(out - 1).astype(samples.dtype)
        u = samples[..., None]
        starts[..., :-1] = ((index + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    if out > 0:
        starts[..., -1] = size - pool
    return starts


def _fractional(op, cls, dims, input, kernel_size, output_size, output_ratio, samples):
    check_tensors(input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if dims == 2 and len(output_ratio) > 2:
            raise ValueError(
                f"{op} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = _unpool_tuple(output_ratio, dims)
        output_size = [int(input.size(d - dims) * ratio[d]) for d in range(dims)]
    _check_int_sizes(op, "kernel_size", 2, kernel_size)
    _check_int_sizes(op, "output_size", 3, output_size)
    if samples is None:
        if not input.is_floating_point():
            raise not_implemented("check_uniform_bounds", input._data.dtype)
        batch = 1 if input.dim() == dims + 1 else input.size(0)
        samples = rand(batch, input.size(-dims - 1), dims, dtype=input.dtype)
    where = f"{op}()" if dims == 2 else f"{op}_out()"
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{where}: Expected {dims + 1}D or {dims + 2}D tensor, but got: "
            f"{_size_list(input.shape)}"
        )
    if samples._data.dtype != input._data.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    kernel = _tuple(kernel_size, dims, "kernel_size", conv=False)
    size = tuple(input.shape[-dims:])
    out_size = _tuple(output_size, dims, "output_size", conv=False)
    for name, s, o, k in zip(("time", "height", "width")[-dims:], size, out_size, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {name} {k} too large relative to input {name} {s}")
    negative = [o for o in out_size if o < 0]
    if negative:
        shape = _size_list([*input.shape[:-dims], *out_size])
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative[0]}: {shape}"
        )
    sample = samples._data
    # which sample drives which dim: (width, height) in 2-D, (time, height, width) in 3-D
    order = (1, 0) if dims == 2 else (0, 1, 2)
    if min(kernel) <= 0:
        return _empty_fractional(input, sample, order, size, out_size, kernel)
    positions = [
        _fractional_starts(sample[..., order[d]], s, o, k)[..., None] + np.arange(k)
        for d, (s, o, k) in enumerate(zip(size, out_size, kernel))
    ]
    return cls.apply(input, positions, out_size, input.dim() == dims + 2)


def _empty_fractional(input, sample, order, size, out_size, kernel) -> tuple[Tensor, Tensor]:
    """A pool of no elements, which PyTorch accepts: each output keeps the kernel's initial
    maximum, -inf, and the index of its window's start."""
    starts = [
        _fractional_starts(sample[..., order[d]], s, o, k)[..., None]
        for d, (s, o, k) in enumerate(zip(size, out_size, kernel))
    ]
    indices = _flat_windows(starts, size).reshape(*sample.shape[:-1], *out_size)
    if input.dim() == len(size) + 1:
        indices = indices[0]
    values = np.full(indices.shape, -np.inf, dtype=input._data.dtype)
    return _wrap(values), _wrap(indices)


@autocast_op
def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """Max over pseudo-randomly placed windows of (N, C, H, W) or (C, H, W) input, to
    `output_size` or `output_ratio` of the input's size; samples come from lucid's generator
    unless `_random_samples` (N, C, 2) gives them."""
    values, indices = _fractional(
        "fractional_max_pool2d", FractionalMaxPool2D, 2, input, kernel_size, output_size,
        output_ratio, _random_samples,
    )  # fmt: skip
    return (values, indices) if return_indices else values


@autocast_op
def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """Max over pseudo-randomly placed windows of (N, C, D, H, W) or (C, D, H, W) input;
    samples come from lucid's generator unless `_random_samples` (N, C, 3) gives them."""
    values, indices = _fractional(
        "fractional_max_pool3d", FractionalMaxPool3D, 3, input, kernel_size, output_size,
        output_ratio, _random_samples,
    )  # fmt: skip
    return (values, indices) if return_indices else values


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """fractional_max_pool2d's values and argmax indices (whatever `return_indices` says)."""
    return fractional_max_pool2d(
        input, kernel_size, output_size, output_ratio, True, _random_samples
    )


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """fractional_max_pool3d's values and argmax indices (whatever `return_indices` says)."""
    return fractional_max_pool3d(
        input, kernel_size, output_size, output_ratio, True, _random_samples
    )
