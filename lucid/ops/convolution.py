"""Neural-network ops: the convolution family (used through lucid.nn.functional).

Convolutions are im2col over a strided view of the (padded) input followed by one matmul;
`Im2Col` and `Col2Im` are each other's backward, so every gradient here is built from lucid
ops and can be differentiated again.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lucid._core.arguments import raise_argument_error
from lucid._core.function import Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import _wrap
from lucid.ops._common import SCALAR_TYPE_NAMES as _SCALAR_TYPE_NAMES
from lucid.ops._common import check_tensors, not_implemented, zeros_like_grad
from lucid.ops.arithmetic import matmul
from lucid.ops.pointwise import where

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
    "avg_pool2d", "adaptive_avg_pool2d",
    "unfold", "fold",
]  # fmt: skip

Pair = tuple[int, int]


# ------------------------------------------------------------ array helpers
def _canvas_size(size: int, padding: int, windows: int, kernel: int, stride: int, dilation: int):
    # ceil_mode may let the last window hang past the padded input
    return max(size + 2 * padding, (windows - 1) * stride + dilation * (kernel - 1) + 1)


def _windows(
    x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out_size: Pair, fill
) -> np.ndarray:
    """A read-only (N, C, kh, kw, Ho, Wo) strided view of the windows of a padded 4-D x."""
    n, c, h, w = x.shape
    canvas_h = _canvas_size(h, padding[0], out_size[0], kernel[0], stride[0], dilation[0])
    canvas_w = _canvas_size(w, padding[1], out_size[1], kernel[1], stride[1], dilation[1])
    if (canvas_h, canvas_w) != (h, w):
        padded = np.full((n, c, canvas_h, canvas_w), fill, dtype=x.dtype)
        padded[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w] = x
        x = padded
    s0, s1, s2, s3 = x.strides
    return as_strided(
        x,
        (n, c, kernel[0], kernel[1], out_size[0], out_size[1]),
        (s0, s1, s2 * dilation[0], s3 * dilation[1], s2 * stride[0], s3 * stride[1]),
        writeable=False,
    )


def _col2im(
    cols: np.ndarray, in_size: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> np.ndarray:
    """Sum (N, C, kh, kw, Ho, Wo) window values back onto an (N, C, H, W) image."""
    n, c, kh, kw, out_h, out_w = cols.shape
    h, w = in_size
    canvas_h = _canvas_size(h, padding[0], out_h, kh, stride[0], dilation[0])
    canvas_w = _canvas_size(w, padding[1], out_w, kw, stride[1], dilation[1])
    if (
        stride == (kh, kw)
        and dilation == (1, 1)
        and (canvas_h, canvas_w) == (h, w) == (kh * out_h, kw * out_w)
    ):
        # windows tile the image exactly (the usual pooling case): one transposing copy
        return cols.transpose(0, 1, 4, 2, 5, 3).reshape(n, c, h, w)
    canvas = np.zeros((n, c, canvas_h, canvas_w), dtype=cols.dtype)
    # one pass per kernel position: windows at a fixed offset never overlap each other
    for i in range(kh):
        top = i * dilation[0]
        rows = slice(top, top + stride[0] * (out_h - 1) + 1, stride[0])
        for j in range(kw):
            left = j * dilation[1]
            canvas[:, :, rows, left : left + stride[1] * (out_w - 1) + 1 : stride[1]] += cols[
                :, :, i, j
            ]
    if (canvas_h, canvas_w) == (h, w):
        return canvas
    return np.ascontiguousarray(
        canvas[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]
    )


# the window-matrix block one GEMM reads: it stays in cache between the copy that writes it
# and the GEMM, and it bounds the memory a convolution adds to its input and output
_BLOCK_BYTES = 1 << 22


class _WindowMatrix:
    """The im2col matrix of a plain convolution, built a block of images at a time.

    Its rows are the (Cin, kh, kw) window elements and its columns the output positions of
    `grid`, image by image. Materialised whole, the matrix is kh * kw times the input, and
    keeping it for backward would hold that much memory per layer; a block of about
    `_BLOCK_BYTES` is read by the GEMM from cache right after the copy that wrote it, and
    backward rebuilds the blocks from the saved input.

    With stride 1 the columns are the positions of the whole padded canvas: the input is
    laid out channel-first as one flat (C, N * Hp * Wp) run of padded planes, so window
    element (c, i, j) of the position at canvas offset p is canvas[c, p + i * dh * Wp +
    j * dw] and each row of a block is one contiguous run of the canvas. Positions whose
    window spills past a plane's edge (each plane's last rows and columns) compute garbage
    that callers drop. With `ones_row`, a last row of ones lets the GEMM add the bias.
    """

    def __init__(self, x, kernel, stride, padding, dilation, out_size, ones_row):
        n, c, h, w = x.shape
        kh, kw = kernel
        self.rows = c * kh * kw
        self.shape = (c, kh, kw)
        self.images = n
        self.in_size = (h, w)
        self.padding = padding
        self.canvas = stride == (1, 1)
        if self.canvas:
            self.grid = (h + 2 * padding[0], w + 2 * padding[1])
            self.per_image = self.grid[0] * self.grid[1]
            # where each kernel position's run starts in the canvas; the last one reads this
            # far past the planes, into garbage positions
            self.offsets = [
                i * dilation[0] * self.grid[1] + j * dilation[1]
                for i in range(kh)
                for j in range(kw)
            ]
            source = np.zeros((c, n * self.per_image + self.offsets[-1]), dtype=x.dtype)
            self._image(source)[...] = x.transpose(1, 0, 2, 3)
            item = source.itemsize
            self.steps = (source.strides[0], dilation[0] * self.grid[1] * item, dilation[1] * item)
        else:
            self.grid = out_size
            self.per_image = self.grid[0] * self.grid[1]
            source = _windows(x, kernel, stride, padding, dilation, out_size, 0)
        self.source = source
        rows = self.rows + ones_row
        # (max: a convolution of no input channels and no bias has an empty window matrix)
        block_bytes = max(1, rows * self.per_image * x.itemsize)
        self.block_images = max(1, min(n, _BLOCK_BYTES // block_bytes))
        self.buffer = np.empty((rows, self.block_images * self.per_image), dtype=x.dtype)
        if ones_row:
            self.buffer[self.rows] = 1

    def _image(self, canvas: np.ndarray) -> np.ndarray:
        """The (C, N, H, W) view of the input's place in a canvas-shaped array."""
        planes = canvas[:, : self.images * self.per_image].reshape(-1, self.images, *self.grid)
        (top, left), (h, w) = self.padding, self.in_size
        return planes[:, :, top : top + h, left : left + w]

    def blocks(self):
        """(start, stop) image ranges, one block each."""
        step = self.block_images
        return [(s, min(s + step, self.images)) for s in range(0, self.images, step)]

    def block(self, start: int, stop: int) -> np.ndarray:
        """The matrix's columns for images start..stop, in a buffer the next call reuses."""
        columns = (stop - start) * self.per_image
        cols = self.buffer[:, :columns]
        target = cols[: self.rows].reshape(*self.shape, columns)
        if self.canvas:
            view = as_strided(
                self.source[:, start * self.per_image :],
                (*self.shape, columns),
                (*self.steps, self.source.itemsize),
                writeable=False,
            )
            np.copyto(target, view)
        else:
            block = self.source[start:stop].transpose(1, 2, 3, 0, 4, 5)
            np.copyto(target.reshape(*self.shape, stop - start, *self.grid), block)
        return cols

    def fold(self, canvas: np.ndarray, start: int, cols: np.ndarray) -> None:
        """Add a block's (rows, columns) values onto a canvas-shaped array (stride 1): the
        adjoint of `block`, for columns that are zero at garbage positions."""
        first = start * self.per_image
        columns = cols.shape[-1]
        taps = len(self.offsets)
        for tap, offset in enumerate(self.offsets):
            canvas[:, first + offset : first + offset + columns] += cols[tap::taps]

    def image(self, canvas: np.ndarray) -> np.ndarray:
        """The (N, C, H, W) input-shaped array held in a canvas-shaped array."""
        return np.ascontiguousarray(self._image(canvas).transpose(1, 0, 2, 3))


class Im2Col(Function):
    """(N, C, H, W) -> (N, C, kh, kw, Ho, Wo): every window of the zero-padded input."""

    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, out_size):
        ctx.in_size = x.shape[2:]
        ctx.config = (kernel, stride, padding, dilation)
        array = x._data
        return _wrap(
            np.ascontiguousarray(_windows(array, kernel, stride, padding, dilation, out_size, 0))
        )

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = Col2Im.apply(grad_output, ctx.in_size, *ctx.config)
        return grad_x, None, None, None, None, None


class Col2Im(Function):
    """(N, C, kh, kw, Ho, Wo) -> (N, C, H, W): window values summed back onto the image."""

    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, in_size, kernel, stride, padding, dilation):
        ctx.out_size = cols.shape[4:]
        ctx.config = (kernel, stride, padding, dilation)
        return _wrap(_col2im(cols._data, in_size, kernel, stride, padding, dilation))

    @staticmethod
    def backward(ctx, grad_output):
        grad_cols = Im2Col.apply(grad_output, *ctx.config, ctx.out_size)
        return grad_cols, None, None, None, None, None


# -------------------------------------------------------------- convolution
def _conv_out(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


class Convolution(Function):
    """conv1d/conv2d and conv_transpose2d on batched input; 1-D runs as 2-D with height 1.

    A plain convolution is a GEMM of the weight, (Cout, Cin * kh * kw), with each block of
    the batch's windows laid out as (Cin * kh * kw, positions); the product is (Cout,
    positions), whose rows copy into the (N, Cout, Ho, Wo) output in long runs. With stride
    1 the positions are those of the whole padded canvas (see `_WindowMatrix`), which makes
    both the im2col copy and the fold in backward move whole contiguous rows.
    """

    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(
        ctx, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    ):
        is_1d = x._data.ndim == 3
        x_array = x._data[:, :, None] if is_1d else x._data
        w_array = weight._data[:, :, None] if is_1d else weight._data
        n, _, h, w = x_array.shape
        kernel = w_array.shape[2:]
        config = (kernel, stride, padding, dilation)
        # with one group, a row of ones in the window matrix lets the GEMM add the bias
        ones_row = bias is not None and groups == 1 and not transposed
        if not transposed:
            out_channels = w_array.shape[0]
            out_size = tuple(
                _conv_out(s, *p) for s, p in zip((h, w), zip(kernel, stride, padding, dilation))
            )
            result = np.empty((n, out_channels, *out_size), dtype=x_array.dtype)
            # an empty batch has no windows to lay out: its output is empty as it stands
            if n:
                windows = _WindowMatrix(x_array, *config, out_size, ones_row)
                group_channels = out_channels // groups
                w_matrix = w_array.reshape(groups, group_channels, -1)
                if ones_row:
                    w_matrix = np.concatenate([w_matrix, bias._data.reshape(1, -1, 1)], axis=2)
                for start, stop in windows.blocks():
                    cols = windows.block(start, stop)
                    product = np.matmul(w_matrix, cols.reshape(groups, -1, cols.shape[-1]))
                    # (Cout, images, grid) -> (N, Cout, Ho, Wo): a transposing copy of whole
                    # rows that drops the canvas's garbage positions
                    product = product.reshape(out_channels, stop - start, *windows.grid)
                    product = product[:, :, : out_size[0], : out_size[1]].transpose(1, 0, 2, 3)
                    if bias is None or ones_row:
                        np.copyto(result[start:stop], product)
                    else:
                        np.add(product, bias._data.reshape(-1, 1, 1), out=result[start:stop])
        else:
            out_channels = w_array.shape[1] * groups
            out_size = tuple(
                (s - 1) * st - 2 * p + d * (k - 1) + op + 1
                for s, k, st, p, d, op in zip(
                    (h, w), kernel, stride, padding, dilation, output_padding
                )
            )
            x_matrix = x_array.reshape(n, groups, -1, h * w)
            w_matrix = w_array.reshape(groups, w_array.shape[0] // groups, -1)
            cols = np.matmul(w_matrix.transpose(0, 2, 1), x_matrix)
            cols = cols.reshape(n, out_channels, kernel[0], kernel[1], h, w)
            result = _col2im(cols, out_size, *config)
            if bias is not None:
                result += bias._data.reshape(-1, 1, 1)
        if is_1d:
            result = result[:, :, 0]
        ctx.is_1d = is_1d
        ctx.config = config
        ctx.transposed = transposed
        ctx.groups = groups
        ctx.ones_row = ones_row
        ctx.in_size = (h, w)
        ctx.out_size = out_size
        ctx.save_for_backward(x, weight)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        if not x.shape[0]:
            # an empty batch has no windows, and every gradient is zero, as in PyTorch
            out_channels = grad_output.shape[1]
            grad_b = (
                zeros_like_grad(grad_output, (out_channels,)) if ctx.needs_input_grad[2] else None
            )
            return (
                zeros_like_grad(grad_output, x.shape),
                zeros_like_grad(grad_output, weight.shape),
                grad_b, None, None, None, None, None, None,
            )  # fmt: skip
        if not ctx.transposed and not is_grad_enabled():
            return _convolution_backward_arrays(ctx, grad_output, x, weight)
        # np.matmul leaves BLAS for operands with zero strides (the expanded gradient of sum)
        grad_output = grad_output.contiguous()
        if ctx.is_1d:
            x, weight, grad_output = x.unsqueeze(2), weight.unsqueeze(2), grad_output.unsqueeze(2)
        groups = ctx.groups
        n = x.shape[0]
        grad_x = grad_w = grad_b = None
        if ctx.transposed:
            # the adjoint of a transposed convolution is the plain convolution of grad_output
            grad_cols = Im2Col.apply(grad_output, *ctx.config, ctx.in_size)
            grad_cols = grad_cols.reshape(n, groups, -1, ctx.in_size[0] * ctx.in_size[1])
            w_matrix = weight.reshape(groups, weight.shape[0] // groups, -1)
            if ctx.needs_input_grad[0]:
                grad_x = matmul(w_matrix, grad_cols).reshape(x.shape)
            if ctx.needs_input_grad[1]:
                x_matrix = x.reshape(n, groups, -1, ctx.in_size[0] * ctx.in_size[1])
                grad_w = matmul(x_matrix, grad_cols.transpose(2, 3)).sum(0).reshape(weight.shape)
            if ctx.needs_input_grad[2]:
                grad_b = grad_output.sum((0, 2, 3))
        else:
            # the backward is being differentiated: lucid ops throughout, in the layout of the
            # forward's GEMM with plain (not canvas) windows
            out_channels = weight.shape[0]
            positions = n * ctx.out_size[0] * ctx.out_size[1]
            grad_matrix = grad_output.transpose(0, 1).reshape(groups, -1, positions)
            if ctx.needs_input_grad[0]:
                # d/dcols (W @ cols) = W^T @ grad, then fold the windows back onto the image
                w_matrix = weight.reshape(groups, out_channels // groups, -1)
                grad_cols = matmul(w_matrix.transpose(1, 2), grad_matrix)
                grad_cols = grad_cols.reshape(x.shape[1], *weight.shape[2:], n, *ctx.out_size)
                grad_x = Col2Im.apply(grad_cols.permute(3, 0, 1, 2, 4, 5), ctx.in_size, *ctx.config)
            if ctx.needs_input_grad[1]:
                cols = Im2Col.apply(x, *ctx.config, ctx.out_size)
                cols = cols.permute(1, 2, 3, 0, 4, 5).reshape(groups, -1, positions)
                grad_w = matmul(grad_matrix, cols.transpose(1, 2)).reshape(weight.shape)
            if ctx.needs_input_grad[2]:
                grad_b = grad_matrix.sum(2).reshape(out_channels)
        if ctx.is_1d:
            grad_x = None if grad_x is None else grad_x.squeeze(2)
            grad_w = None if grad_w is None else grad_w.squeeze(2)
        return grad_x, grad_w, grad_b, None, None, None, None, None, None


def _convolution_backward_arrays(ctx, grad_output, x, weight):
    """The gradients of a plain convolution on arrays, for a backward nobody differentiates.

    It rebuilds the forward's window matrix block by block and works in its layout; the
    lucid-op path in `Convolution.backward` is the same algebra on plain windows.
    """
    groups = ctx.groups
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    g = grad_output._data[:, :, None] if ctx.is_1d else grad_output._data
    x_array = x._data[:, :, None] if ctx.is_1d else x._data
    w_array = weight._data[:, :, None] if ctx.is_1d else weight._data
    n, out_channels, out_h, out_w = g.shape
    group_channels = out_channels // groups
    windows = _WindowMatrix(x_array, *ctx.config, ctx.out_size, ctx.ones_row)
    grid_h, grid_w = windows.grid
    # the bias gradient comes out of the weight GEMM as the ones row's column
    need_product = need_w or (need_b and ctx.ones_row)
    product = None
    if need_x:
        w_t = w_array.reshape(groups, group_channels, -1).transpose(0, 2, 1)
        if windows.canvas:
            canvas = np.zeros_like(windows.source)
        else:
            grad_x = np.empty(x_array.shape, dtype=g.dtype)
    for start, stop in windows.blocks():
        # the gradient in the forward product's (Cout, images, grid) layout, zero at the
        # canvas's garbage positions so that they add nothing to either gradient
        grad_matrix = np.empty((out_channels, stop - start, grid_h, grid_w), dtype=g.dtype)
        grad_matrix[:, :, out_h:] = 0
        grad_matrix[:, :, :out_h, out_w:] = 0
        np.copyto(grad_matrix[:, :, :out_h, :out_w], g[start:stop].transpose(1, 0, 2, 3))
        grad_matrix = grad_matrix.reshape(groups, group_channels, -1)
        columns = grad_matrix.shape[-1]
        if need_product:
            cols = windows.block(start, stop).reshape(groups, -1, columns)
            # (Kg [+ 1], Cout) per group
            block_product = np.matmul(cols, grad_matrix.transpose(0, 2, 1))
            product = block_product if product is None else product + block_product
        if need_x:
            grad_cols = np.matmul(w_t, grad_matrix).reshape(-1, columns)
            if windows.canvas:
                windows.fold(canvas, start, grad_cols)
            else:
                grad_cols = grad_cols.reshape(*windows.shape, stop - start, out_h, out_w)
                grad_x[start:stop] = _col2im(
                    grad_cols.transpose(3, 0, 1, 2, 4, 5), ctx.in_size, *ctx.config
                )
    grad_w = grad_b = None
    if need_x:
        if windows.canvas:
            grad_x = windows.image(canvas)
        grad_x = _wrap(grad_x[:, :, 0] if ctx.is_1d else grad_x)
    else:
        grad_x = None
    if need_w:
        grad_w = product[:, : windows.rows // groups].transpose(0, 2, 1)
        grad_w = _wrap(np.ascontiguousarray(grad_w).reshape(weight._data.shape))
    if need_b:
        if ctx.ones_row:
            grad_b = _wrap(np.ascontiguousarray(product[0, -1]))
        else:
            grad_b = _wrap(g.sum((0, 2, 3)))
    return grad_x, grad_w, grad_b, None, None, None, None, None, None


def _tuple(value: Any, size: int, name: str, conv: bool = True) -> tuple[int, ...]:
    if isinstance(value, (list, tuple)):
        values = tuple(int(v) for v in value)
        if len(values) == 1 and size > 1 and not conv:
            values = values * size
        if len(values) != size:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {size} values to "
                f"match the convolution dimensions, but got {name}={list(values)}"
            )
        return values
    return (int(value),) * size


def _check_int_sizes(op: str, name: str, position: int, value: Any) -> None:
    """PyTorch's TypeError for a float where a pooling size belongs."""
    prefix = f"{op}(): argument '{name}' (position {position}) must be tuple of ints"
    if isinstance(value, float):
        raise TypeError(f"{prefix}, not float")
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if isinstance(item, float):
                raise TypeError(f"{prefix}, but found element of type float at pos {index}")


def _size_list(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    for other in (weight, bias):
        if other is not None and other._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected scalar type {_SCALAR_TYPE_NAMES[input._data.dtype.name]} but found "
                f"{_SCALAR_TYPE_NAMES[other._data.dtype.name]}"
            )


def _convolution(
    name: str,
    dims: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    transposed: bool = False,
    output_padding: Any = 0,
) -> Tensor:
    try:
        ndim = input.dim()
        weight_ndim = weight.dim()
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
            f"input of size: {_size_list(input.shape)}"
        )
    if weight_ndim != dims + 2:
        raise RuntimeError(
            "weight should have at least three dimensions"
            if weight_ndim < 3
            else f"Expected {dims + 2}-dimensional weight for {dims + 2}-dimensional input "
            f"{_size_list(input.shape)}, but got {weight.dim()}-dimensional weight of size "
            f"{_size_list(weight.shape)} instead"
        )
    is_batched = ndim == dims + 2
    if not is_batched:
        input = input.unsqueeze(0)
    _check_dtypes(input, weight, bias)
    stride_t = _tuple(stride, dims, "stride")
    dilation_t = _tuple(dilation, dims, "dilation")
    kernel = tuple(weight.shape[2:])
    if any(s <= 0 for s in stride_t):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation_t):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    right_pad = None
    if isinstance(padding, str):
        if padding == "valid":
            padding_t = (0,) * dims
        elif padding == "same":
            if any(s != 1 for s in stride_t):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [d * (k - 1) for d, k in zip(dilation_t, kernel)]
            padding_t = tuple(t // 2 for t in totals)
            # an odd total pad puts the extra element on the right, as PyTorch does
            if any(t % 2 for t in totals):
                right_pad = tuple(t - t // 2 for t in totals)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding_t = _tuple(padding, dims, "padding")
    if any(p < 0 for p in padding_t):
        raise RuntimeError("negative padding is not supported")
    channels = input.shape[1]
    if transposed:
        if channels != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_size_list(weight.shape)}, expected "
                f"input{_size_list(input.shape)} to have {weight.shape[0]} channels, but got "
                f"{channels} channels instead"
            )
        out_channels = weight.shape[1] * groups
        output_padding_t = _tuple(output_padding, dims, "output_padding")
        if any(op >= max(s, d) for op, s, d in zip(output_padding_t, stride_t, dilation_t)):
            labels = ("height", "width") if dims == 2 else ("width",)
            parts = [f"output_padding_{lb}: {op}" for lb, op in zip(labels, output_padding_t)]
            parts += [f"stride_{lb}: {s}" for lb, s in zip(labels, stride_t)]
            parts += [f"dilation_{lb}: {d}" for lb, d in zip(labels, dilation_t)]
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(parts)
            )
    else:
        if weight.shape[0] < groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
                f"but got weight of size {_size_list(weight.shape)} instead"
            )
        if weight.shape[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size {_size_list(weight.shape)} instead"
            )
        if channels != weight.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {_size_list(weight.shape)}, expected "
                f"input{_size_list(input.shape)} to have {weight.shape[1] * groups} channels, "
                f"but got {channels} channels instead"
            )
        out_channels = weight.shape[0]
        output_padding_t = (0,) * dims
        padded = [s + 2 * p for s, p in zip(input.shape[2:], padding_t)]
        if right_pad is not None:
            padded = [s + p + r for s, p, r in zip(input.shape[2:], padding_t, right_pad)]
        effective = [d * (k - 1) + 1 for d, k in zip(dilation_t, kernel)]
        if any(p < e for p, e in zip(padded, effective)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, effective))}). Kernel size can't be greater "
                "than actual input size"
            )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {_size_list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {out_channels} elements, but got bias of size {_size_list(bias.shape)} instead"
        )
    if right_pad is not None:
        # asymmetric 'same' padding: pad the extra element explicitly, then pad symmetrically
        input = _pad_right(input, tuple(r - p for r, p in zip(right_pad, padding_t)))
    if dims == 1:
        stride_t, padding_t, dilation_t, output_padding_t = (
            (1, *stride_t), (0, *padding_t), (1, *dilation_t), (0, *output_padding_t)
        )  # fmt: skip
    result = Convolution.apply(
        input, weight, bias, stride_t, padding_t, dilation_t, transposed, output_padding_t, groups
    )
    if channels == 0 and not transposed:
        # PyTorch answers a convolution of no input channels with no output channels.
        result = result[:, :0]
    return result if is_batched else result.squeeze(0)


def _pad_right(input: Tensor, extra: tuple[int, ...]) -> Tensor:
    from lucid.factories import zeros  # noqa: PLC0415
    from lucid.ops.shape import cat  # noqa: PLC0415  (kept local: only 'same' padding needs it)

    for axis, amount in enumerate(extra):
        if amount:
            dim = input.dim() - len(extra) + axis
            shape = list(input.shape)
            shape[dim] = amount
            input = cat([input, zeros(*shape, dtype=input.dtype)], dim)
    return input


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution (cross-correlation) over (N, C, L) or (C, L) input."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation) over (N, C, H, W) or (C, H, W) input."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """2-D transposed convolution (the adjoint of conv2d); weight is (Cin, Cout/groups, kh, kw)."""
    if isinstance(padding, str):
        raise TypeError(
            "conv_transpose2d(): argument 'padding' (position 5) must be tuple of ints, not str"
        )
    return _convolution(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
        output_padding,
    )  # fmt: skip


# ------------------------------------------------------------------ pooling
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


def _pool_config(
    op: str,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> tuple[Pair, Pair, Pair, Pair, Pair]:
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            f"got:{_size_list(input.shape)}"
        )
    kernel = _pool_pair(kernel_size, "kernel_size", op)
    stride_p = (
        kernel
        if stride is None or stride == [] or stride == ()
        else _pool_pair(stride, "stride", op)
    )
    padding_p = _pool_pair(padding, "padding", op)
    dilation_p = _pool_pair(dilation, "dilation", op)
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}"
        )
    if any(s <= 0 for s in stride_p):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation_p):
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{dilation_p[0]} dilationW: {dilation_p[1]}"
        )
    for k, p, d in zip(kernel, padding_p, dilation_p):
        if p < 0 or 2 * p > (k - 1) * d + 1:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )
    in_size = input.shape[-2:]
    out_size = tuple(
        _pool_out(s, k, st, p, d, ceil_mode)
        for s, k, st, p, d in zip(in_size, kernel, stride_p, padding_p, dilation_p)
    )
    if any(o < 1 for o in out_size):
        channels = input.shape[-3]
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
    _keeps_values_for_backward = True  # PyTorch saves the input and the argmax indices

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, dilation, out_size, return_indices):
        array = x._data
        is_batched = array.ndim == 4
        if not is_batched:
            array = array[None]
        n, c, h, w = array.shape
        kh, kw = kernel
        out_h, out_w = out_size
        is_float = array.dtype.kind == "f"
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
    config = _pool_config("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
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
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_size_list(input.shape)}"
        )
    if input._data.dtype.kind != "f":
        raise not_implemented("max_pool1d_impl", input._data.dtype)
    if 0 in (input.shape if input.dim() == 2 else input.shape[1:]):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_size_list(input.shape)}"
        )
    _check_int_sizes("max_pool1d", "kernel_size", 2, kernel_size)
    kernel = _tuple(kernel_size, 1, "kernel_size", conv=False)[0]
    pad = _tuple(padding, 1, "padding", conv=False)[0]
    if 2 * pad > kernel:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={pad} and kernel_size={kernel}"
        )
    stride_1 = (
        kernel
        if stride is None or stride == [] or stride == ()
        else _tuple(stride, 1, "stride", conv=False)[0]
    )
    dilation_1 = _tuple(dilation, 1, "dilation", conv=False)[0]
    result = max_pool2d(
        input.unsqueeze(-2), (1, kernel), (1, stride_1), (0, pad), (1, dilation_1), ceil_mode, True
    )
    values, indices = result[0].squeeze(-2), result[1].squeeze(-2)
    return (values, indices) if return_indices else values


def _avg_divisor(size: int, out: int, kernel: int, stride: int, padding: int, include_pad: bool):
    starts = np.arange(out) * stride - padding
    ends = np.minimum(starts + kernel, size + padding)
    if include_pad:
        return ends - starts
    return np.minimum(ends, size) - np.maximum(starts, 0)


class AvgPool2D(Function):
    _backward_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, padding, out_size, count_include_pad, divisor_override):
        array = x._data
        is_batched = array.ndim == 4
        if not is_batched:
            array = array[None]
        h, w = array.shape[2:]
        windows = _windows(array, kernel, stride, padding, (1, 1), out_size, 0)
        sums = windows.sum(axis=(2, 3))
        if divisor_override:
            divisor = np.full(out_size, divisor_override, dtype=sums.dtype)
        else:
            divisor_h = _avg_divisor(
                h, out_size[0], kernel[0], stride[0], padding[0], count_include_pad
            )
            divisor_w = _avg_divisor(
                w, out_size[1], kernel[1], stride[1], padding[1], count_include_pad
            )
            divisor = np.multiply.outer(divisor_h, divisor_w).astype(sums.dtype)
        result = sums / divisor
        if array.dtype.kind != "f":
            result = (sums // divisor).astype(array.dtype)
        ctx.is_batched = is_batched
        ctx.in_size = (h, w)
        ctx.config = (kernel, stride, padding, (1, 1))
        ctx.save_for_backward(_wrap(divisor))
        return _wrap(result if is_batched else result[0])

    @staticmethod
    def backward(ctx, grad_output):
        (divisor,) = ctx.saved_tensors
        if not ctx.is_batched:
            grad_output = grad_output.unsqueeze(0)
        n, c, out_h, out_w = grad_output.shape
        kh, kw = ctx.config[0]
        # every input in a window gets grad / divisor
        grad_cols = (grad_output / divisor).reshape(n, c, 1, 1, out_h, out_w)
        grad_cols = grad_cols.expand(n, c, kh, kw, out_h, out_w)
        grad_x = Col2Im.apply(grad_cols, ctx.in_size, *ctx.config)
        if not ctx.is_batched:
            grad_x = grad_x.squeeze(0)
        return grad_x, None, None, None, None, None, None


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
    _check_int_sizes("avg_pool1d", "kernel_size", 2, kernel_size)
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


def _adaptive_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """(out, size) averaging matrix over the windows [floor(i*s/o), ceil((i+1)*s/o))."""
    index = np.arange(out)
    starts = (index * size) // out
    ends = -((-(index + 1) * size) // out)
    positions = np.arange(size)
    inside = (positions >= starts[:, None]) & (positions < ends[:, None])
    return (inside / (ends - starts)[:, None]).astype(dtype)


class AdaptiveAvgPool2D(Function):
    _backward_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, out_size):
        array = x._data
        pool_h = _adaptive_matrix(array.shape[-2], out_size[0], array.dtype)
        pool_w = _adaptive_matrix(array.shape[-1], out_size[1], array.dtype)
        ctx.save_for_backward(_wrap(pool_h), _wrap(pool_w))
        return _wrap(np.matmul(np.matmul(pool_h, array), pool_w.T))

    @staticmethod
    def backward(ctx, grad_output):
        pool_h, pool_w = ctx.saved_tensors
        # the pooling is linear: out = P_h x P_w^T, so grad_x = P_h^T grad P_w
        return matmul(matmul(pool_h.t(), grad_output), pool_w), None


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed (Ho, Wo) with PyTorch's adaptive window boundaries."""
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_size_list(input.shape)}"
        )
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 2:
            raise ValueError("Input dimension should be at least 4")
        sizes = output_size
    else:
        sizes = (output_size, output_size)
    in_size = input.shape[-2:]
    out_size = tuple(int(s) if s is not None else i for s, i in zip(sizes, in_size))
    if out_size[0] < 0 or out_size[1] < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{out_size[0]}, {out_size[1]}}}"
        )
    if out_size == (1, 1):
        # a global average is a plain mean, as in PyTorch
        return input.mean((-1, -2), keepdim=True)
    return AdaptiveAvgPool2D.apply(input, out_size)


# ---------------------------------------------------------------- unfold / fold
def _sliding_pair(value: Any, op: str, name: str, position: int) -> Pair:
    """PyTorch's `_pair` of an unfold/fold size, with im2col's TypeError and length check."""
    values = tuple(value) if isinstance(value, list | tuple) else (value, value)
    for index, item in enumerate(values):
        if isinstance(item, bool) or not isinstance(item, int | np.integer):
            raise TypeError(
                f"{op}(): argument '{name}' (position {position}) must be tuple of ints, but "
                f"found element of type {type(item).__name__} at pos {index}"
            )
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    return int(values[0]), int(values[1])


def _check_sliding(kernel: Pair, dilation: Pair, padding: Pair, stride: Pair) -> None:
    for name, (a, b), short in (
        ("kernel size", kernel, "kernel"),
        ("stride", stride, "stride"),
        ("dilation", dilation, "dilation"),
    ):
        if a <= 0 or b <= 0:
            raise RuntimeError(
                f"{name} should be greater than zero, but got {short}_height: {a} "
                f"{short}_width: {b}"
            )
    if padding[0] < 0 or padding[1] < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {padding[0]} "
            f"pad_width: {padding[1]}"
        )


def _sliding_blocks(size: Pair, kernel: Pair, dilation: Pair, padding: Pair, stride: Pair):
    return tuple(
        _conv_out(size[i], kernel[i], stride[i], padding[i], dilation[i]) for i in range(2)
    )


class Unfold(Function):
    """(N, C, H, W) -> (N, C * kh * kw, L): every sliding block of the zero-padded input as a
    column (im2col); unbatched (C, H, W) gives (C * kh * kw, L)."""

    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, dilation, padding, stride):
        array = x._data if x.ndim == 4 else x._data[None]
        n, c, h, w = array.shape
        ctx.in_size = (h, w)
        ctx.config = (kernel, dilation, padding, stride)
        out_size = _sliding_blocks((h, w), kernel, dilation, padding, stride)
        windows = _windows(array, kernel, stride, padding, dilation, out_size, 0)
        cols = windows.reshape(n, c * kernel[0] * kernel[1], out_size[0] * out_size[1])
        return _wrap(np.ascontiguousarray(cols if x.ndim == 4 else cols[0]))

    @staticmethod
    def backward(ctx, grad_output):
        # col2im is im2col's adjoint: each window element goes back to where it was read
        grad_x = Fold.apply(grad_output, ctx.in_size, *ctx.config)
        return grad_x, None, None, None, None


class Fold(Function):
    """(N, C * kh * kw, L) -> (N, C, H, W): sliding-block columns summed back onto an image
    (col2im); unbatched (C * kh * kw, L) gives (C, H, W)."""

    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, output_size, kernel, dilation, padding, stride):
        array = cols._data if cols.ndim == 3 else cols._data[None]
        ctx.config = (kernel, dilation, padding, stride)
        n, rows, _ = array.shape
        blocks = _sliding_blocks(output_size, kernel, dilation, padding, stride)
        windows = array.reshape(n, rows // (kernel[0] * kernel[1]), *kernel, *blocks)
        image = _col2im(windows, output_size, kernel, stride, padding, dilation)
        return _wrap(image if cols.ndim == 3 else image[0])

    @staticmethod
    def backward(ctx, grad_output):
        grad_cols = Unfold.apply(grad_output, *ctx.config)
        return grad_cols, None, None, None, None, None


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:  # fmt: skip
    """Extracts sliding local blocks of a batched (or unbatched) image as columns (im2col).

    >>> unfold(lucid.randn(1, 2, 4, 4), kernel_size=2).shape
    lucid.Size([1, 8, 9])
    """
    check_tensors(input)
    kernel = _sliding_pair(kernel_size, "im2col", "kernel_size", 2)
    dilation = _sliding_pair(dilation, "im2col", "dilation", 3)
    padding = _sliding_pair(padding, "im2col", "padding", 4)
    stride = _sliding_pair(stride, "im2col", "stride", 5)
    _check_sliding(kernel, dilation, padding, stride)
    if not input.ndim:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if input.ndim < 3:
        # PyTorch reads the spatial dims before it checks the rank
        input.size(input.ndim)
    shape = input.shape
    if input.ndim not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {_size_list(shape)}"
        )
    if not input.is_floating_point():
        raise not_implemented("im2col_out_cpu", input._data.dtype)
    size = tuple(shape[-2:])
    blocks = _sliding_blocks(size, kernel, dilation, padding, stride)
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, "
            "but its components must be at least one."
        )
    return Unfold.apply(input, kernel, dilation, padding, stride)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:  # fmt: skip
    """Sums sliding-block columns back into an image of `output_size` (col2im), the adjoint
    of unfold."""
    check_tensors(input)
    size = _sliding_pair(output_size, "col2im", "output_size", 2)
    kernel = _sliding_pair(kernel_size, "col2im", "kernel_size", 3)
    dilation = _sliding_pair(dilation, "col2im", "dilation", 4)
    padding = _sliding_pair(padding, "col2im", "padding", 5)
    stride = _sliding_pair(stride, "col2im", "stride", 6)
    _check_sliding(kernel, dilation, padding, stride)
    shape = input.shape
    if input.ndim not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {_size_list(shape)}"
        )
    if not input.is_floating_point():
        raise not_implemented("col2im_out_cpu", input._data.dtype)
    rows, length = shape[-2:]
    if rows % (kernel[0] * kernel[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={rows} and kernel_size={kernel}."
        )
    blocks = _sliding_blocks(size, kernel, dilation, padding, stride)
    if blocks[0] < 1 or blocks[1] < 1 or blocks[0] * blocks[1] != length:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, stride={stride}, expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size(2)={length}."
        )
    return Fold.apply(input, size, kernel, dilation, padding, stride)
