"""A matrix's structure: its diagonals (diagonal, diag, diag_embed, diagflat, diagonal_scatter,
fill_diagonal_, trace), its triangles (tril, triu, tril_indices, triu_indices), and matrices
built from parts (block_diag, vander)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import factories
from lucid._core import dtypes
from lucid._core.arguments import raise_argument_error
from lucid._core.devices import check_device
from lucid._core.dtypes import SCALAR_TYPE_NAMES
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.tensor import _normalize_dim, _wrap
from lucid.ops._common import (
    _require_named_tensors,
    apply_inplace,
    check_bool,
    check_int,
    check_number,
    check_tensors,
    dtype_name,
)
from lucid.ops._promote import scalar_value
from lucid.ops.cumulative import cumprod
from lucid.ops.fills import fill_scalar, refuse_complex_grad_for_real, to
from lucid.ops.joining import cat
from lucid.ops.shape import expand, flip, reshape

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "diagonal", "diag", "trace", "diag_embed", "diagonal_scatter", "vander", "diagflat",
    "tril_indices", "triu_indices", "tril", "triu", "block_diag",
]  # fmt: skip


# ------------------------------------------------------------------ diagonal
def _diagonal_view(array: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable view of a diagonal, moved to the last dimension (np.diagonal's is read-only)."""
    size1, size2 = array.shape[dim1], array.shape[dim2]
    if offset >= 0:
        start1, start2 = 0, offset
        length = max(0, min(size1, size2 - offset))
    else:
        start1, start2 = -offset, 0
        length = max(0, min(size1 + offset, size2))
    if length == 0:
        start1 = start2 = 0
    index = [slice(None)] * array.ndim
    index[dim1] = slice(start1, None)
    index[dim2] = slice(start2, None)
    start = array[tuple(index)]
    kept = [d for d in range(array.ndim) if d not in (dim1, dim2)]
    shape = tuple(array.shape[d] for d in kept) + (length,)
    strides = tuple(array.strides[d] for d in kept) + (array.strides[dim1] + array.strides[dim2],)
    return np.lib.stride_tricks.as_strided(start, shape, strides, writeable=array.flags.writeable)


class Diagonal(Function):
    _backward_name = "DiagonalBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.input_shape = x._data.shape
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        return _wrap(_diagonal_view(x._data, offset, dim1, dim2))

    @staticmethod
    def backward(ctx, grad_output):
        grad = DiagonalGrad.apply(grad_output, ctx.input_shape, ctx.offset, ctx.dim1, ctx.dim2)
        return grad, None, None, None


class DiagonalCopy(Diagonal):
    """diag() of a matrix: the diagonal as a new tensor, not a view."""

    _backward_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        return _wrap(Diagonal.forward(ctx, x, offset, dim1, dim2)._data.copy())


class DiagonalGrad(Function):
    """Zeros of `shape` with `values` on the diagonal: the gradient of `diagonal`."""

    _backward_name = "DiagonalBackwardBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, values, shape, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        result = np.zeros(shape, values._data.dtype)
        _diagonal_view(result, offset, dim1, dim2)[...] = values._data
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grad = Diagonal.apply(grad_output, ctx.offset, ctx.dim1, ctx.dim2)
        return grad, None, None, None, None


class DiagEmbed(DiagonalGrad):
    """diag() of a vector: a matrix with the vector on a diagonal."""

    _backward_name = "DiagEmbedBackward0"


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims (dim1, dim2) as a view, moved to the last dimension."""
    try:
        ndim = input._data.ndim
    except AttributeError as error:
        raise_argument_error(error)
        raise
    for position, (name, value) in enumerate((("offset", offset), ("dim1", dim1), ("dim2", dim2))):
        check_int(value, "diagonal", name, position + 2)
    dim1 = _normalize_dim(dim1, ndim)
    dim2 = _normalize_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, int(offset), dim1, dim2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's diagonal matrix, or a matrix's diagonal (a copy)."""
    try:
        ndim = input._data.ndim
    except AttributeError as error:
        raise_argument_error(error)
        raise
    check_int(diagonal, "diag", "diagonal", 2)
    if ndim == 1:
        size = input._data.shape[0] + abs(diagonal)
        return DiagEmbed.apply(input, (size, size), int(diagonal), 0, 1)
    if ndim == 2:
        return DiagonalCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor with one more dim whose (dim1, dim2) diagonal `offset` holds `input`'s last
    dim, and zeros elsewhere."""
    try:
        shape = input._data.shape
    except AttributeError as error:
        raise_argument_error(error)
        raise
    for position, (name, value) in enumerate((("offset", offset), ("dim1", dim1), ("dim2", dim2))):
        check_int(value, "diag_embed", name, position + 2)
    ndim = len(shape) + 1
    dim1 = _normalize_dim(dim1, ndim)
    dim2 = _normalize_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    size = shape[-1] + abs(offset)
    result_shape = list(shape[:-1])
    for dim in sorted((dim1, dim2)):
        result_shape.insert(dim, size)
    return DiagEmbed.apply(input, tuple(result_shape), offset, dim1, dim2)


class DiagonalScatter(Function):
    _backward_name = "DiagonalScatterBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, src, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        ctx.src_shape = src._data.shape
        ctx.src_dtype = src._data.dtype
        result = x._data.copy()
        _diagonal_view(result, offset, dim1, dim2)[...] = factories.real_part_for(
            src._data, result.dtype
        )
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_src = None
        if ctx.needs_input_grad[0]:
            # the diagonal was overwritten, so it no longer depends on x
            zeros = _wrap(np.zeros(ctx.src_shape, grad_output._data.dtype))
            grad_x = DiagonalScatter.apply(grad_output, zeros, ctx.offset, ctx.dim1, ctx.dim2)
        if ctx.needs_input_grad[1]:
            refuse_complex_grad_for_real(grad_output, ctx.src_dtype)
            grad_src = DiagonalCopy.apply(grad_output, ctx.offset, ctx.dim1, ctx.dim2)
        return grad_x, grad_src, None, None, None


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:  # fmt: skip
    """A copy of `input` with `src` written on the diagonal that `diagonal(input, offset,
    dim1, dim2)` reads."""
    try:
        ndim = input._data.ndim
        src_shape = src._data.shape
    except AttributeError as error:
        raise_argument_error(error)
        raise
    dim1 = _normalize_dim(dim1, ndim)
    dim2 = _normalize_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    slot = _diagonal_view(input._data, offset, dim1, dim2).shape
    if src_shape != slot:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src_shape)}, slice size = {list(slot)}"
        )
    return DiagonalScatter.apply(input, src, offset, dim1, dim2)


class Trace(Function):
    _backward_name = "TraceBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.input_shape = x._data.shape
        return _wrap(np.trace(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        # d/dX trace(X) = I (for the square part of X)
        length = min(ctx.input_shape)
        values = expand(grad_output, (length,))
        return DiagonalGrad.apply(values, ctx.input_shape, 0, 0, 1)


def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal."""
    try:
        if input._data.ndim != 2:
            raise RuntimeError(
                f"trace: expected a matrix, but got tensor with dim {input._data.ndim}"
            )
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return Trace.apply(input)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with input's elements (flattened) on its `offset` diagonal."""
    _require_named_tensors("diagflat", input=input)
    check_int(offset, "diagflat", "offset", 2)
    return diag_embed(reshape(input, (-1,)), offset)


class FillDiagonal(Function):
    """Write `value` on the main diagonal (entries whose indices are all equal)."""

    _backward_name = "lucid::autograd::CopySlices"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, positions, value):
        ctx.positions = positions
        result = x._data.copy()
        result[positions] = value
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        # the written entries no longer depend on x
        return FillDiagonal.apply(grad_output, ctx.positions, 0), None, None


def fill_diagonal_(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place; `wrap` restarts it below a tall matrix's square part
    every ncols + 1 rows."""
    check_tensors(input)
    check_number(fill_value, "fill_diagonal_", "fill_value", 2)
    check_bool(wrap, "fill_diagonal_", "wrap", 3)
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if len(shape) > 2:
        diagonal = np.arange(shape[0])
        positions = (diagonal,) * len(shape)
    else:
        rows, columns = shape
        # A flat step of columns + 1 walks the diagonal; without wrap it stops at the square.
        stop = rows * columns if wrap else min(rows, columns) * columns
        flat = np.arange(0, stop, columns + 1)
        positions = (flat // columns, flat % columns)
    value = fill_scalar(scalar_value(fill_value), input._data.dtype)
    return apply_inplace(FillDiagonal, input, positions, value)


# ------------------------------------------------------------------------- triangles
class Tril(Function):
    _backward_name = "TrilBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, diagonal):
        ctx.diagonal = diagonal
        return _wrap(np.tril(x._data, diagonal))

    @staticmethod
    def backward(ctx, grad_output):
        return Tril.apply(grad_output, ctx.diagonal), None


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dimensions (entries above `diagonal` zeroed)."""
    try:
        if input._data.ndim < 2:
            raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    except AttributeError as error:
        raise_argument_error(error)
        raise
    check_int(diagonal, "tril", "diagonal", 2)
    return Tril.apply(input, int(diagonal))


class Triu(Function):
    _backward_name = "TriuBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, diagonal):
        ctx.diagonal = diagonal
        return _wrap(np.triu(x._data, diagonal))

    @staticmethod
    def backward(ctx, grad_output):
        return Triu.apply(grad_output, ctx.diagonal), None


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dimensions (entries below `diagonal` zeroed)."""
    try:
        if input._data.ndim < 2:
            raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    except AttributeError as error:
        raise_argument_error(error)
        raise
    check_int(diagonal, "triu", "diagonal", 2)
    return Triu.apply(input, int(diagonal))


def tril_(input: Tensor, diagonal: int = 0) -> Tensor:
    check_tensors(input)
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    check_int(diagonal, "tril_", "diagonal", 1)
    return apply_inplace(Tril, input, int(diagonal))


def triu_(input: Tensor, diagonal: int = 0) -> Tensor:
    check_tensors(input)
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    check_int(diagonal, "triu_", "diagonal", 1)
    return apply_inplace(Triu, input, int(diagonal))


def _triangle_indices(name: str, row: int, col: int, offset: int, dtype: Any, device: Any,
                      lower: bool) -> Tensor:  # fmt: skip
    check_device(device)
    target = np.dtype(np.int64) if dtype is None else dtypes.to_numpy_dtype(dtype)
    if target.kind not in "iu":
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{SCALAR_TYPE_NAMES[target.name]}'"
        )
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if lower:
        rows, cols = np.tril_indices(row, offset, col)
    else:
        rows, cols = np.triu_indices(row, offset, col)
    return _wrap(np.stack((rows, cols)).astype(target))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:  # fmt: skip
    """The (row, column) coordinates of a row x col matrix's lower triangle (on and below
    diagonal `offset`) as a 2 x N tensor, row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:  # fmt: skip
    """The (row, column) coordinates of a row x col matrix's upper triangle (on and above
    diagonal `offset`) as a 2 x N tensor, row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


# -------------------------------------------------------- matrices built from parts
class BlockDiag(Function):
    _backward_name = "BlockDiagBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, *tensors):
        target = dtypes.result_type(*tensors).numpy_dtype
        # 0-d and 1-d blocks are 1 x 1 and 1 x n
        blocks = [t._data.reshape((1,) * (2 - t._data.ndim) + t._data.shape) for t in tensors]
        rows = sum(block.shape[0] for block in blocks)
        columns = sum(block.shape[1] for block in blocks)
        result = np.zeros((rows, columns), target)
        corners = []
        row = column = 0
        for block in blocks:
            result[row : row + block.shape[0], column : column + block.shape[1]] = block
            corners.append((row, column, block.shape))
            row += block.shape[0]
            column += block.shape[1]
        ctx.blocks = [(corner, t._data.shape, t._data.dtype) for corner, t in zip(corners, tensors)]
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grads = []
        for (row, column, block_shape), shape, dtype in ctx.blocks:
            block = grad_output[row : row + block_shape[0], column : column + block_shape[1]]
            grads.append(to(reshape(block, shape), dtype))
        return tuple(grads)


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the given (0-, 1- or 2-d) tensors, dtypes promoted."""
    for index, tensor in enumerate(tensors):
        check_tensors(tensor)
        if tensor._data.ndim > 2:
            raise RuntimeError(
                "lucid.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{index} has {tensor._data.ndim} dimensions"
            )
    if not tensors:
        return _wrap(np.zeros((1, 0), dtypes.get_default_dtype().numpy_dtype))
    return BlockDiag.apply(*tensors)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-d tensor: columns x**(N-1), ..., x**0 (reversed with
    `increasing`); integer and bool inputs give int64."""
    _require_named_tensors("vander", x=x)
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    size = x._data.shape[0]
    if N is None:
        N = size
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "iub":
        x = to(x, dtypes.int64)
    if N == 0:
        return _wrap(np.zeros((size, 0), x._data.dtype))
    # powers as a running product of [1, x, x, ...] along each row
    ones = _wrap(np.ones((size, 1), x._data.dtype))
    if N == 1:
        powers = ones
    else:
        powers = cumprod(cat([ones, expand(x.unsqueeze(1), (size, N - 1))], 1), 1)
    return powers if increasing else flip(powers, (1,))


def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """linalg.vander: the powers x**0, ..., x**(N-1) along a new last dim, batched over x's
    dims (N defaults to x's last size)."""
    _require_named_tensors("linalg_vander", x=x)
    if x._data.dtype == np.bool_ or x._data.dtype.itemsize == 2 and x._data.dtype.kind in "fV":
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{dtype_name(x._data.dtype)}"
        )
    if N is None:
        N = x._data.shape[-1] if x._data.ndim else 1
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    column = x.unsqueeze(-1)
    ones = _wrap(np.ones((*x._data.shape, 1), x._data.dtype))
    powers = cumprod(expand(column, (*x._data.shape, N - 1)), -1)
    return cat([ones, powers], -1)
