"""Neural-network ops: the convolution family (used through lucid.nn.functional); pooling,
which shares its window helpers, is in `pooling.py`.

Convolutions are im2col over a strided view of the (padded) input followed by one matmul;
`Im2Col` and `Col2Im` are each other's backward, so every gradient here is built from lucid
ops and can be differentiated again.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lucid._core.arguments import (
    described_with_items,
    int_list_item_error,
    is_int_list_item,
    raise_argument_error,
    type_name,
)
from lucid._core.dtypes import C_TYPE_NAMES, SCALAR_TYPE_NAMES
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import TensorBase, _wrap
from lucid.factories import zeros
from lucid.ops._common import autocast_op, check_tensors, not_implemented, zeros_like_grad
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.fills import to
from lucid.ops.joining import cat
from lucid.ops.products import matmul

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "unfold", "fold",
]  # fmt: skip

Pair = tuple[int, int]


# ------------------------------------------------------------ array helpers
def _canvas_size(size: int, padding: int, windows: int, kernel: int, stride: int, dilation: int):
    # ceil_mode may let the last window hang past the padded input
    return max(size + 2 * padding, (windows - 1) * stride + dilation * (kernel - 1) + 1)


def _crop(padding: Sequence[int], size: Sequence[int]) -> tuple[slice, ...]:
    """The index of an input of `size` inside its canvas padded by `padding` (leading dims
    untouched)."""
    return (slice(None), slice(None), *(slice(p, p + s) for p, s in zip(padding, size)))


def _windows(x: np.ndarray, kernel, stride, padding, dilation, out_size, fill) -> np.ndarray:
    """A read-only (N, C, *kernel, *out_size) strided view of the windows of a padded
    (N, C, *size) x."""
    n, c, *size = x.shape
    canvas = tuple(
        _canvas_size(*args) for args in zip(size, padding, out_size, kernel, stride, dilation)
    )
    if canvas != tuple(size):
        padded = np.full((n, c, *canvas), fill, dtype=x.dtype)
        padded[_crop(padding, size)] = x
        x = padded
    spatial = x.strides[2:]
    return as_strided(
        x,
        (n, c, *kernel, *out_size),
        (
            *x.strides[:2],
            *(step * d for step, d in zip(spatial, dilation)),
            *(step * s for step, s in zip(spatial, stride)),
        ),
        writeable=False,
    )


def _col2im(cols: np.ndarray, in_size, kernel, stride, padding, dilation) -> np.ndarray:
    """Sum (N, C, *kernel, *out) window values back onto an (N, C, *in_size) image."""
    dims = len(in_size)
    in_size = tuple(in_size)
    n, c = cols.shape[:2]
    kernel = cols.shape[2 : 2 + dims]
    out = cols.shape[2 + dims :]
    canvas_size = tuple(
        _canvas_size(*args) for args in zip(in_size, padding, out, kernel, stride, dilation)
    )
    if (
        tuple(stride) == kernel
        and all(d == 1 for d in dilation)
        and canvas_size == in_size == tuple(k * o for k, o in zip(kernel, out))
    ):
        # windows tile the image exactly (the usual pooling case): one transposing copy
        order = [axis for d in range(dims) for axis in (2 + dims + d, 2 + d)]
        return cols.transpose(0, 1, *order).reshape(n, c, *in_size)
    canvas = np.zeros((n, c, *canvas_size), dtype=cols.dtype)
    # one pass per kernel position: windows at a fixed offset never overlap each other
    for position in np.ndindex(*kernel):
        target = tuple(
            slice(i * d, i * d + s * (o - 1) + 1, s)
            for i, d, s, o in zip(position, dilation, stride, out)
        )
        canvas[(slice(None), slice(None), *target)] += cols[(slice(None), slice(None), *position)]
    if canvas_size == in_size:
        return canvas
    return np.ascontiguousarray(canvas[_crop(padding, in_size)])


# the window-matrix block one GEMM reads: it bounds the memory a convolution adds to its input
# and output. Every block costs a round of BLAS calls whose threads must all meet, which on a
# busy machine (a core taken by another process) outweighs keeping the block in L2, so a
# small CNN's layer is one block
_BLOCK_BYTES = 1 << 24


class _WindowMatrix:
    """The im2col matrix of a plain convolution, built a block of images at a time.

    Its rows are the (Cin, *kernel) window elements and its columns the output positions of
    `grid`, image by image, for any number of spatial dims (the text below speaks of two).
    Materialised whole, the matrix is prod(kernel) times the input, and keeping it for
    backward would hold that much memory per layer; a block of at most about `_BLOCK_BYTES`
    is read by the GEMM right after the copy that wrote it, and backward rebuilds the blocks
    from the saved input.

    With stride 1 the columns are the positions of the whole padded canvas: the input is
    laid out channel-first as one flat (C, N * Hp * Wp) run of padded planes, so window
    element (c, i, j) of the position at canvas offset p is canvas[c, p + i * dh * Wp +
    j * dw] and each row of a block is one contiguous run of the canvas. Positions whose
    window spills past a plane's edge (each plane's last rows and columns) compute garbage
    that callers drop, and that backward keeps out of the gradients where an inf or NaN would
    turn it into NaN. With `ones_row`, a last row of ones lets the GEMM add the bias.
    """

    def __init__(self, x, kernel, stride, padding, dilation, out_size, ones_row):
        n, c, *size = x.shape
        dims = len(size)
        self.dims = dims
        self.rows = c * math.prod(kernel)
        self.shape = (c, *kernel)
        self.images = n
        self.in_size = tuple(size)
        self.padding = padding
        self.canvas = all(s == 1 for s in stride)
        if self.canvas:
            self.grid = tuple(s + 2 * p for s, p in zip(size, padding))
            self.per_image = math.prod(self.grid)
            # the canvas's element step along each spatial dim
            plane_steps = [math.prod(self.grid[d + 1 :]) for d in range(dims)]
            # where each kernel position's run starts in the canvas; the last one reads this
            # far past the planes, into garbage positions
            self.offsets = [
                sum(i * d * step for i, d, step in zip(position, dilation, plane_steps))
                for position in np.ndindex(*kernel)
            ]
            source = np.zeros((c, n * self.per_image + self.offsets[-1]), dtype=x.dtype)
            self._image(source)[...] = x.transpose(1, 0, *range(2, 2 + dims))
            item = source.itemsize
            self.steps = (
                source.strides[0],
                *(d * step * item for d, step in zip(dilation, plane_steps)),
            )
        else:
            self.grid = tuple(out_size)
            self.per_image = math.prod(self.grid)
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
        """The (C, N, *size) view of the input's place in a canvas-shaped array."""
        planes = canvas[:, : self.images * self.per_image].reshape(-1, self.images, *self.grid)
        return planes[_crop(self.padding, self.in_size)]

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
            dims = self.dims
            block = self.source[start:stop].transpose(
                1, *range(2, 2 + dims), 0, *range(2 + dims, 2 + 2 * dims)
            )
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
        """The (N, C, *size) input-shaped array held in a canvas-shaped array."""
        return np.ascontiguousarray(self._image(canvas).transpose(1, 0, *range(2, 2 + self.dims)))


class Im2Col(Function):
    """(N, C, *size) -> (N, C, *kernel, *out): every window of the zero-padded input."""

    _backward_name = "Im2ColBackward0"
    _complex_rule = HOLOMORPHIC

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
    """(N, C, *kernel, *out) -> (N, C, *size): window values summed back onto the image."""

    _backward_name = "Col2ImBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, cols, in_size, kernel, stride, padding, dilation):
        ctx.out_size = cols.shape[2 + len(in_size) :]
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
    """Every convolution (conv1d/2d/3d, conv_transpose1d/2d/3d) on batched input; 1-D runs
    as 2-D with height 1.

    A plain convolution is a GEMM of the weight, (Cout, Cin * prod(kernel)), with each block
    of the batch's windows laid out as (Cin * prod(kernel), positions); the product is (Cout,
    positions), whose rows copy into the (N, Cout, *out) output in long runs. With stride 1
    the positions are those of the whole padded canvas (see `_WindowMatrix`), which makes
    both the im2col copy and the fold in backward move whole contiguous rows.
    """

    _backward_name = "ConvolutionBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(
        ctx, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    ):
        is_1d = x._data.ndim == 3
        # float16 and bfloat16 convolve in float32 (NumPy has no BLAS for them) and the output
        # is rounded once
        x_array = widen(x._data[:, :, None] if is_1d else x._data)
        w_array = widen(weight._data[:, :, None] if is_1d else weight._data)
        bias_array = None if bias is None else widen(bias._data)
        n, _, *size = x_array.shape
        dims = len(size)
        kernel = w_array.shape[2:]
        config = (kernel, stride, padding, dilation)
        spatial = tuple(range(2, 2 + dims))
        # with one group, a row of ones in the window matrix lets the GEMM add the bias
        ones_row = bias is not None and groups == 1 and not transposed
        if not transposed:
            out_channels = w_array.shape[0]
            out_size = tuple(
                _conv_out(s, *p) for s, p in zip(size, zip(kernel, stride, padding, dilation))
            )
            result = np.empty((n, out_channels, *out_size), dtype=x_array.dtype)
            # an empty batch has no windows to lay out: its output is empty as it stands (and
            # so is that of an empty kernel, which only input of no channels gets this far with)
            if n and 0 not in kernel:
                windows = _WindowMatrix(x_array, *config, out_size, ones_row)
                group_channels = out_channels // groups
                w_matrix = w_array.reshape(groups, group_channels, -1)
                if ones_row:
                    w_matrix = np.concatenate([w_matrix, bias_array.reshape(1, -1, 1)], axis=2)
                kept = (slice(None), slice(None), *(slice(0, o) for o in out_size))
                for start, stop in windows.blocks():
                    cols = windows.block(start, stop)
                    product = np.matmul(w_matrix, cols.reshape(groups, -1, cols.shape[-1]))
                    # (Cout, images, grid) -> (N, Cout, *out): a transposing copy of whole
                    # rows that drops the canvas's garbage positions
                    product = product.reshape(out_channels, stop - start, *windows.grid)
                    product = product[kept].transpose(1, 0, *spatial)
                    if bias is None or ones_row:
                        np.copyto(result[start:stop], product)
                    else:
                        np.add(
                            product, bias_array.reshape(-1, *(1,) * dims), out=result[start:stop]
                        )
        else:
            out_channels = w_array.shape[1] * groups
            out_size = tuple(
                (s - 1) * st - 2 * p + d * (k - 1) + op + 1
                for s, k, st, p, d, op in zip(
                    size, kernel, stride, padding, dilation, output_padding
                )
            )
            x_matrix = x_array.reshape(n, groups, w_array.shape[0] // groups, math.prod(size))
            w_matrix = w_array.reshape(groups, w_array.shape[0] // groups, -1)
            cols = np.matmul(w_matrix.transpose(0, 2, 1), x_matrix)
            cols = cols.reshape(n, out_channels, *kernel, *size)
            result = _col2im(cols, out_size, *config)
            if bias is not None:
                result += bias_array.reshape(-1, *(1,) * dims)
        if is_1d:
            result = result[:, :, 0]
        result = round_to(result, x._data.dtype)
        ctx.is_1d = is_1d
        ctx.config = config
        ctx.transposed = transposed
        ctx.groups = groups
        ctx.ones_row = ones_row
        ctx.in_size = tuple(size)
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
        dtypes = (x.dtype, weight.dtype, grad_output.dtype)
        if is_low_precision(x._data.dtype):
            # the same algebra on float32 copies (casts recorded in the graph), rounded once
            x, weight, grad_output = (to(t, _FLOAT32) for t in (x, weight, grad_output))
        # np.matmul leaves BLAS for operands with zero strides (the expanded gradient of sum)
        grad_output = grad_output.contiguous()
        if ctx.is_1d:
            x, weight, grad_output = x.unsqueeze(2), weight.unsqueeze(2), grad_output.unsqueeze(2)
        groups = ctx.groups
        n = x.shape[0]
        dims = len(ctx.in_size)
        spatial = tuple(range(2, 2 + dims))
        grad_x = grad_w = grad_b = None
        if ctx.transposed:
            # the adjoint of a transposed convolution is the plain convolution of grad_output
            in_positions = math.prod(ctx.in_size)
            grad_cols = Im2Col.apply(grad_output, *ctx.config, ctx.in_size)
            grad_cols = grad_cols.reshape(n, groups, -1, in_positions)
            w_matrix = weight.reshape(groups, weight.shape[0] // groups, -1)
            if ctx.needs_input_grad[0]:
                grad_x = matmul(w_matrix, grad_cols).reshape(x.shape)
            if ctx.needs_input_grad[1]:
                x_matrix = x.reshape(n, groups, -1, in_positions)
                grad_w = matmul(x_matrix, grad_cols.transpose(2, 3)).sum(0).reshape(weight.shape)
            if ctx.needs_input_grad[2]:
                grad_b = grad_output.sum((0, *spatial))
        else:
            # the backward is being differentiated: lucid ops throughout, in the layout of the
            # forward's GEMM with plain (not canvas) windows
            out_channels = weight.shape[0]
            positions = n * math.prod(ctx.out_size)
            grad_matrix = grad_output.transpose(0, 1).reshape(groups, -1, positions)
            kernel_axes = tuple(range(1, 1 + dims))
            out_axes = tuple(range(2 + dims, 2 + 2 * dims))
            if ctx.needs_input_grad[0]:
                # d/dcols (W @ cols) = W^T @ grad, then fold the windows back onto the image
                w_matrix = weight.reshape(groups, out_channels // groups, -1)
                grad_cols = matmul(w_matrix.transpose(1, 2), grad_matrix)
                grad_cols = grad_cols.reshape(x.shape[1], *weight.shape[2:], n, *ctx.out_size)
                grad_cols = grad_cols.permute(1 + dims, 0, *kernel_axes, *out_axes)
                grad_x = Col2Im.apply(grad_cols, ctx.in_size, *ctx.config)
            if ctx.needs_input_grad[1]:
                cols = Im2Col.apply(x, *ctx.config, ctx.out_size)
                cols = cols.permute(1, *spatial, 0, *out_axes).reshape(groups, -1, positions)
                grad_w = matmul(grad_matrix, cols.transpose(1, 2)).reshape(weight.shape)
            if ctx.needs_input_grad[2]:
                grad_b = grad_matrix.sum(2).reshape(out_channels)
        if ctx.is_1d:
            grad_x = None if grad_x is None else grad_x.squeeze(2)
            grad_w = None if grad_w is None else grad_w.squeeze(2)
        if x.dtype != dtypes[0]:
            grad_x, grad_w, grad_b = (
                None if grad is None else to(grad, dtype)
                for grad, dtype in zip((grad_x, grad_w, grad_b), dtypes)
            )
        return grad_x, grad_w, grad_b, None, None, None, None, None, None


def _zero_garbage(array: np.ndarray, garbage: list[tuple[slice, ...]]) -> None:
    for index in garbage:
        array[index] = 0


def _convolution_backward_arrays(ctx, grad_output, x, weight):
    """The gradients of a plain convolution on arrays, for a backward nobody differentiates.

    It rebuilds the forward's window matrix block by block and works in its layout; the
    lucid-op path in `Convolution.backward` is the same algebra on plain windows.
    """
    groups = ctx.groups
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    # float16 and bfloat16 gradients are computed in float32 and rounded once
    g = widen(grad_output._data[:, :, None] if ctx.is_1d else grad_output._data)
    x_array = widen(x._data[:, :, None] if ctx.is_1d else x._data)
    w_array = widen(weight._data[:, :, None] if ctx.is_1d else weight._data)
    n, out_channels, *out_size = g.shape
    dims = len(out_size)
    spatial = tuple(range(2, 2 + dims))
    group_channels = out_channels // groups
    windows = _WindowMatrix(x_array, *ctx.config, ctx.out_size, ctx.ones_row)
    kept = (slice(None), slice(None), *(slice(0, o) for o in out_size))
    # the canvas's garbage positions: past the output along one dim, inside it along those
    # before
    garbage = [
        (slice(None), slice(None), *(slice(0, o) for o in out_size[:d]), slice(out_size[d], None))
        for d in range(dims)
    ]
    # the bias gradient comes out of the weight GEMM as the ones row's column
    need_product = need_w or (need_b and ctx.ones_row)
    # a garbage column is zero in the gradient, which adds nothing to either gradient unless
    # it meets an inf or NaN in the other operand: a non-finite weight (the input's gradient)
    # or a non-finite input read at a garbage position (the weight's); then that operand's
    # garbage columns are zeroed too
    clean_grad_cols = need_x and windows.canvas and not np.isfinite(w_array).all()

    def gradient_block(start: int, stop: int) -> np.ndarray:
        """The gradient in the forward product's (Cout, images, grid) layout, zero at the
        canvas's garbage positions, as (groups, Cout / groups, columns)."""
        grad_matrix = np.empty((out_channels, stop - start, *windows.grid), dtype=g.dtype)
        _zero_garbage(grad_matrix, garbage)
        np.copyto(grad_matrix[kept], g[start:stop].transpose(1, 0, *spatial))
        return grad_matrix.reshape(groups, group_channels, -1)

    def add_block_product(product, start: int, stop: int, grad_matrix, clean: bool):
        cols = windows.block(start, stop)
        if clean:
            _zero_garbage(cols.reshape(cols.shape[0], stop - start, *windows.grid), garbage)
        cols = cols.reshape(groups, -1, cols.shape[-1])
        # (Kg [+ 1], Cout) per group
        block_product = np.matmul(cols, grad_matrix.transpose(0, 2, 1))
        return block_product if product is None else product + block_product

    product = None
    if need_x:
        w_t = w_array.reshape(groups, group_channels, -1).transpose(0, 2, 1)
        if windows.canvas:
            canvas = np.zeros_like(windows.source)
        else:
            grad_x = np.empty(x_array.shape, dtype=g.dtype)
    for start, stop in windows.blocks():
        grad_matrix = gradient_block(start, stop)
        if need_product:
            product = add_block_product(product, start, stop, grad_matrix, False)
        if need_x:
            columns = grad_matrix.shape[-1]
            grad_cols = np.matmul(w_t, grad_matrix).reshape(-1, columns)
            if windows.canvas:
                if clean_grad_cols:
                    grid_view = grad_cols.reshape(-1, stop - start, *windows.grid)
                    _zero_garbage(grid_view, garbage)
                windows.fold(canvas, start, grad_cols)
            else:
                grad_cols = grad_cols.reshape(*windows.shape, stop - start, *out_size)
                grad_cols = grad_cols.transpose(
                    1 + dims, 0, *range(1, 1 + dims), *range(2 + dims, 2 + 2 * dims)
                )
                grad_x[start:stop] = _col2im(grad_cols, ctx.in_size, *ctx.config)
    if need_product and windows.canvas and not np.isfinite(product).all():
        product = None
        for start, stop in windows.blocks():
            grad_matrix = gradient_block(start, stop)
            product = add_block_product(product, start, stop, grad_matrix, True)
    grad_w = grad_b = None
    if need_x:
        if windows.canvas:
            grad_x = windows.image(canvas)
        grad_x = _wrap(round_to(grad_x[:, :, 0] if ctx.is_1d else grad_x, x._data.dtype))
    else:
        grad_x = None
    if need_w:
        grad_w = product[:, : windows.rows // groups].transpose(0, 2, 1)
        grad_w = np.ascontiguousarray(grad_w).reshape(weight._data.shape)
        grad_w = _wrap(round_to(grad_w, weight._data.dtype))
    if need_b:
        if ctx.ones_row:
            grad_b = np.ascontiguousarray(product[0, -1])
        else:
            grad_b = g.sum((0, *spatial))
        grad_b = _wrap(round_to(grad_b, grad_output._data.dtype))
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


def _is_int(value: Any) -> bool:
    """An int as PyTorch's parser takes one: an int, a NumPy int, an integer 0-d tensor, no bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _parser_type_name(value: Any) -> str:
    """A value's type as PyTorch's parser names it: `Tensor`, `float`, `numpy.float64`."""
    return "Tensor" if isinstance(value, TensorBase) else type_name(value)


def _check_int_sizes(op: str, name: str, position: int, value: Any) -> None:
    """PyTorch's TypeError where an int or a tuple of ints (a size, a stride) belongs."""
    if type(value) is int:
        return
    prefix = f"{op}(): argument '{name}' (position {position}) must be tuple of ints"
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if index == 0 and not _is_int(item):
                raise TypeError(
                    f"{prefix}, but found element of type {_parser_type_name(item)} at pos 0"
                )
            # past the first item PyTorch's parser takes a bool too, and counts from 1
            if not (_is_int(item) or isinstance(item, bool)):
                raise TypeError(
                    f"{op}(): argument '{name}' failed to unpack the object at pos {index + 1} "
                    f'with error "type must be tuple of ints,but got {_parser_type_name(item)}"'
                )
    elif not _is_int(value):
        raise TypeError(f"{prefix}, not {_parser_type_name(value)}")


def _is_int_sizes(value: Any) -> bool:
    """Whether `value` is an int or a list or tuple of ints: the common case, checked cheaply
    before `_check_size_types` works out PyTorch's error for anything else."""
    if type(value) is int:
        return True
    if type(value) is tuple or type(value) is list:
        for item in value:
            if type(item) is not int:
                return False
        return True
    return False


# PyTorch's two conv1d/2d/3d overloads, as its overload errors print them
_CONV_SIGNATURES = (
    "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints "
    "padding = 0, tuple of ints dilation = 1, int groups = 1)",
    "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = "
    '"valid", tuple of ints dilation = 1, int groups = 1)',
)


def _overload_type_name(value: Any, elements: bool = False) -> str:
    """A value's type as PyTorch's overload errors name it (`Parameter`, `numpy.float64`); with
    `elements`, a tuple or list names its items too: `tuple of (float,)`, `list of [int]`."""
    if isinstance(value, TensorBase):
        return type(value).__name__
    if elements and isinstance(value, tuple | list):
        return described_with_items(value, _overload_type_name)
    return type_name(value)


def _conv_overload_error(name: str, args: tuple) -> TypeError:
    """conv1d/2d/3d's TypeError for arguments that match neither overload. The nn modules pass
    all seven arguments by position, and so does this message, with PyTorch's reason line per
    overload (PyTorch marks every argument past the weight, whatever its type)."""
    got = ", ".join(_overload_type_name(value) for value in args)
    marked = [
        _overload_type_name(value, elements=True)
        if index < 2 and type(value).__name__ == "Tensor"
        else f"!{_overload_type_name(value, elements=True)}!"
        for index, value in enumerate(args)
    ]
    reason = (
        "\n      didn't match because some of the arguments have invalid types: "
        f"({', '.join(marked)})"
    )
    expected = "".join(f"\n * {signature}{reason}" for signature in _CONV_SIGNATURES)
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:{expected}\n"
    )


def _check_size_types(name: str, transposed: bool, args: tuple, output_padding: Any) -> None:
    """PyTorch's TypeError for a stride, padding, dilation, output_padding or groups that is
    not an int (or a list or tuple of ints); returns for NumPy ints and integer 0-d tensors.

    conv_transpose has one signature, whose parser names the argument. conv has two (padding
    as ints or as a string): PyTorch's parser checks only the first item of a list, so a list
    whose first item fits matches, and the first misfit further on is reported by position; an
    argument that fits neither overload gives the overload error.
    """
    _, _, _, stride, padding, dilation, groups = args
    if transposed:
        _check_int_sizes(name, "stride", 4, stride)
        if isinstance(padding, str):
            # a string padding comes by keyword (F.conv_transpose1d(x, w, padding="same")),
            # and PyTorch's parser then names no position
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        _check_int_sizes(name, "padding", 5, padding)
        _check_int_sizes(name, "output_padding", 6, output_padding)
        if not _is_int(groups):
            raise TypeError(
                f"{name}(): argument 'groups' (position 7) must be int, not "
                f"{_parser_type_name(groups)}"
            )
        _check_int_sizes(name, "dilation", 8, dilation)
        return

    def fits(value: Any) -> bool:
        if isinstance(value, tuple | list):
            return not value or _is_int(value[0])
        return _is_int(value)

    is_string = isinstance(padding, str)
    if not (fits(stride) and (is_string or fits(padding)) and fits(dilation) and _is_int(groups)):
        raise _conv_overload_error(name, args)
    _check_int_sizes(name, "stride", 4, stride)
    if not is_string:
        _check_int_sizes(name, "padding", 5, padding)
    _check_int_sizes(name, "dilation", 6, dilation)


def _check_kernel(dims: int, transposed: bool, weight: Tensor) -> None:
    """PyTorch's error for a weight with a zero-sized kernel, or a transposed convolution's
    weight of no output channels (any other empty weight fails the channel checks first).

    These are the messages of PyTorch's reference kernels (slow_conv2d, slow_conv3d,
    slow_conv_transpose2d/3d); where PyTorch hands such a call to oneDNN it raises oneDNN's
    "could not create a primitive descriptor" instead.
    """
    shape = tuple(weight.shape)
    if dims == 3:
        if transposed:
            raise RuntimeError(
                "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                f"kernel_width) tensor expected for weight, but got: {_size_list(shape)}"
            )
        depth, height, width = shape[2:]
        raise RuntimeError(
            f"kernel size should be greater than zero, but got: {depth} x {height} x {width} "
            "(TxHxW)"
        )
    # 1-D runs as 2-D with a kernel height of one
    if dims == 1:
        shape = (*shape[:2], 1, shape[2])
    height, width = shape[2:]
    if not (height and width):
        raise RuntimeError(
            "kernel size should be greater than zero, but got kernel_height: "
            f"{height} kernel_width: {width}"
        )
    raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {_size_list(shape)}")


def _size_list(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_BACKEND_TYPE_NAMES = frozenset({"complex64", "complex128", "bfloat16", "bool"})


def _type_name(tensor: Tensor) -> str:
    """A tensor's type as PyTorch's complex convolution errors print it: the legacy type's
    name, or the backend's name for the types it prints so ("CPUComplexFloatType")."""
    name = tensor._data.dtype.name
    if name in _BACKEND_TYPE_NAMES:
        return f"CPU{SCALAR_TYPE_NAMES[name]}Type"
    return tensor.type()


def _check_complex_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's dtype errors for a complex input, which its convolution checks apart."""
    dtype = input._data.dtype
    if weight._data.dtype != dtype:
        raise RuntimeError(
            f"Input type ({_type_name(input)}) and weight type ({_type_name(weight)}) should be "
            "the same"
        )
    if bias is not None and bias._data.dtype != dtype:
        raise RuntimeError(
            f"Input type ({C_TYPE_NAMES[dtype.name]}) and bias type "
            f"({C_TYPE_NAMES[bias._data.dtype.name]}) should be the same"
        )


def _check_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    if input._data.dtype.kind == "c":
        _check_complex_dtypes(input, weight, bias)
    for other in (weight, bias):
        if other is not None and other._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected scalar type {SCALAR_TYPE_NAMES[input._data.dtype.name]} but found "
                f"{SCALAR_TYPE_NAMES[other._data.dtype.name]}"
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
    # PyTorch's parser checks the argument types before any shape
    if not (
        _is_int_sizes(stride)
        and (_is_int_sizes(padding) or (not transposed and isinstance(padding, str)))
        and _is_int_sizes(dilation)
        and _is_int_sizes(output_padding)
        and type(groups) is int
    ):
        args = (input, weight, bias, stride, padding, dilation, groups)
        _check_size_types(name, transposed, args, output_padding)
    if ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
            f"input of size: {_size_list(input.shape)}"
        )
    if weight_ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight_ndim != dims + 2:
        # PyTorch reads the number of spatial dims off the weight
        if transposed:
            raise RuntimeError(
                f"Expected {weight_ndim}-dimensional input for {weight_ndim}-dimensional weight "
                f"{_size_list(weight.shape)}, but got {ndim}-dimensional input of size "
                f"{_size_list(input.shape)} instead"
            )
        raise RuntimeError(
            "expected stride to be a single integer value or a list of "
            f"{weight_ndim - 2} values to match the convolution dimensions, but got "
            f"stride={list(_tuple(stride, dims, 'stride'))}"
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
        if any(op < 0 for op in output_padding_t):
            raise RuntimeError("negative output_padding is not supported")
        if any(op >= max(s, d) for op, s, d in zip(output_padding_t, stride_t, dilation_t)):
            # 1-D runs as 2-D, so its message names a height of one
            labels = ("depth", "height", "width")[-max(dims, 2) :]
            shown = [(0, 1, 1)] if dims == 1 else []
            shown += list(zip(output_padding_t, stride_t, dilation_t))
            parts = [f"output_padding_{lb}: {v[0]}" for lb, v in zip(labels, shown)]
            parts += [f"stride_{lb}: {v[1]}" for lb, v in zip(labels, shown)]
            parts += [f"dilation_{lb}: {v[2]}" for lb, v in zip(labels, shown)]
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
    if 0 in weight.shape and input.numel():
        _check_kernel(dims, transposed, weight)
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
    for axis, amount in enumerate(extra):
        if amount:
            dim = input.dim() - len(extra) + axis
            shape = list(input.shape)
            shape[dim] = amount
            input = cat([input, zeros(*shape, dtype=input.dtype)], dim)
    return input


@autocast_op
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


@autocast_op
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


@autocast_op
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-D convolution (cross-correlation) over (N, C, D, H, W) or (C, D, H, W) input."""
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name, dims, input, weight, bias, stride, padding, output_padding, groups,
                    dilation) -> Tensor:  # fmt: skip
    return _convolution(
        name, dims, input, weight, bias, stride, padding, dilation, groups, True, output_padding
    )


@autocast_op
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """1-D transposed convolution (the adjoint of conv1d); weight is (Cin, Cout/groups, k)."""
    return _conv_transpose(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


@autocast_op
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
    return _conv_transpose(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


@autocast_op
def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """3-D transposed convolution (the adjoint of conv3d); weight is (Cin, Cout/groups, kd, kh,
    kw)."""
    return _conv_transpose(
        "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
        dilation,
    )  # fmt: skip


# ---------------------------------------------------------------- unfold / fold
def _sliding_pair(value: Any, op: str, name: str, position: int) -> Pair:
    """PyTorch's `_pair` of an unfold/fold size, with im2col's TypeError and length check."""
    values = tuple(value) if isinstance(value, list | tuple) else (value, value)
    for index, item in enumerate(values):
        if not is_int_list_item(item, index):
            raise int_list_item_error(op, name, position, index, item)
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
    _complex_rule = HOLOMORPHIC

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
    _complex_rule = HOLOMORPHIC

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
    if not (input.is_floating_point() or input.is_complex()):
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
    if not (input.is_floating_point() or input.is_complex()):
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
