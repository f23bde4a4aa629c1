"""Linear-algebra ops: diagonal, diag, diag_embed, diagonal_scatter, trace, and einsum,
tensordot, inner composed from matmul."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import argument_error, raise_argument_error
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.function import Function
from lucid._core.grad_mode import local_state
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops._promote import low_precision_of, round_to, widen
from lucid.ops.arithmetic import _dtype_name, matmul, mul
from lucid.ops.broadcast import sum_to
from lucid.ops.pointwise import clamp, sqrt
from lucid.ops.reduction import cov, sum
from lucid.ops.shape import expand, permute, reshape, unsqueeze

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "diagonal", "diag", "trace", "einsum", "tensordot", "inner", "diag_embed", "diagonal_scatter",
]  # fmt: skip
__all__ += [
    "corrcoef",
]
# the add-and-multiply family and the ops after it, at the end of the file (cross is in
# linalg_decompositions, with linalg.cross)
__all__ += [
    "baddbmm", "addbmm", "addmv", "addmv_", "addr", "vdot", "chain_matmul", "cdist", "pdist",
    "kron", "vander", "diagflat",
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

    @staticmethod
    def forward(ctx, x, src, offset, dim1, dim2):
        ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        ctx.src_shape = src._data.shape
        result = x._data.copy()
        _diagonal_view(result, offset, dim1, dim2)[...] = src._data
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_src = None
        if ctx.needs_input_grad[0]:
            # the diagonal was overwritten, so it no longer depends on x
            zeros = _wrap(np.zeros(ctx.src_shape, grad_output._data.dtype))
            grad_x = DiagonalScatter.apply(grad_output, zeros, ctx.offset, ctx.dim1, ctx.dim2)
        if ctx.needs_input_grad[1]:
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


# ------------------------------------------------------------------- einsum
class _Operand:
    """One einsum operand: its tensor and one label per dimension."""

    __slots__ = ("tensor", "labels")

    def __init__(self, tensor: Tensor, labels: list[Any]) -> None:
        self.tensor = tensor
        self.labels = labels


def _einsum_error(message: str) -> RuntimeError:
    return RuntimeError(f"einsum(): {message}")


def _parse_term(term: str, start: int, owner: str) -> tuple[list[str], int | None]:
    """A term's letters, and the position of its ellipsis among them (None if absent)."""
    letters: list[str] = []
    ellipsis_at = None
    index = 0
    while index < len(term):
        char = term[index]
        if char == ".":
            if ellipsis_at is not None:
                if owner == "output":
                    raise _einsum_error(
                        "found '.' for output but an ellipsis (...) was already found"
                    )
                raise _einsum_error(
                    f"found '.' for {owner} for which an ellipsis was already found"
                )
            if term[index : index + 3] != "...":
                raise _einsum_error(f"found '.' for {owner} that is not part of any ellipsis")
            ellipsis_at = len(letters)
            index += 3
            continue
        if not (char.isascii() and char.isalpha()):
            raise _einsum_error(
                f"invalid subscript given at index {start + index} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
        letters.append(char)
        index += 1
    return letters, ellipsis_at


def _parse_equation(equation: str, operands: Sequence[Tensor]) -> tuple[list[_Operand], list]:
    """Label every operand dimension (ellipsis dims get labels (0,), (1,), ... from the right)
    and find the output labels, implicit or explicit."""
    equation = equation.replace(" ", "")
    arrow = equation.find("->")
    inputs = equation if arrow < 0 else equation[:arrow]
    terms = inputs.split(",")
    if len(terms) > len(operands):
        raise _einsum_error("fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise _einsum_error("more operands were provided than specified in the equation")
    parsed = []
    ellipsis_ndim = 0
    position = 0
    for number, (term, tensor) in enumerate(zip(terms, operands)):
        letters, ellipsis_at = _parse_term(term, position, f"operand {number}")
        position += len(term) + 1
        ndim = tensor._data.ndim
        if ellipsis_at is None:
            if len(letters) != ndim:
                raise _einsum_error(
                    f"the number of subscripts in the equation ({len(letters)}) does not match "
                    f"the number of dimensions ({ndim}) for operand {number} and no ellipsis "
                    "was given"
                )
            labels: list[Any] = list(letters)
        else:
            if len(letters) > ndim:
                raise _einsum_error(
                    f"the number of subscripts in the equation ({len(letters)}) is more than the "
                    f"number of dimensions ({ndim}) for operand {number}"
                )
            covered = ndim - len(letters)
            ellipsis_ndim = max(ellipsis_ndim, covered)
            # ellipsis dims broadcast from the right, so label them by distance from the end
            middle = [(covered - 1 - k,) for k in range(covered)]
            labels = letters[:ellipsis_at] + middle + letters[ellipsis_at:]
        parsed.append(_Operand(tensor, labels))
    ellipsis_labels = [(k,) for k in range(ellipsis_ndim - 1, -1, -1)]
    if arrow < 0:
        counts: dict[str, int] = {}
        for operand in parsed:
            for label in operand.labels:
                if isinstance(label, str):
                    counts[label] = counts.get(label, 0) + 1
        output = ellipsis_labels + sorted(label for label, count in counts.items() if count == 1)
        return parsed, output
    letters, ellipsis_at = _parse_term(equation[arrow + 2 :], arrow + 2, "output")
    seen = {label for operand in parsed for label in operand.labels}
    for label in letters:
        if label not in seen:
            raise _einsum_error(
                f"output subscript {label} does not appear in the equation for any input operand"
            )
        if letters.count(label) > 1:
            raise _einsum_error(f"output subscript {label} appears more than once in the output")
    if ellipsis_at is None:
        return parsed, list(letters)
    return parsed, letters[:ellipsis_at] + ellipsis_labels + letters[ellipsis_at:]


def _take_diagonals(operand: _Operand, number: int) -> None:
    """A label repeated within one operand selects the diagonal of those dimensions."""
    while True:
        labels = operand.labels
        repeated = next((label for label in labels if labels.count(label) > 1), None)
        if repeated is None:
            return
        first = labels.index(repeated)
        second = labels.index(repeated, first + 1)
        shape = operand.tensor._data.shape
        if shape[first] != shape[second]:
            raise _einsum_error(
                f"subscript {repeated} is repeated for operand {number} but the sizes don't "
                f"match, {shape[second]} != {shape[first]}"
            )
        operand.tensor = diagonal(operand.tensor, 0, first, second)
        operand.labels = [
            label for index, label in enumerate(labels) if index not in (first, second)
        ] + [repeated]


def _label_sizes(operands: list[_Operand]) -> dict[Any, int]:
    sizes: dict[Any, int] = {}
    for number, operand in enumerate(operands):
        for label, size in zip(operand.labels, operand.tensor._data.shape):
            previous = sizes.get(label, 1)
            if size != previous and size != 1 and previous != 1:
                name = label if isinstance(label, str) else "..."
                raise _einsum_error(
                    f"subscript {name} has size {size} for operand {number} which does not "
                    f"broadcast with previously seen size {previous}"
                )
            if size != 1:
                sizes[label] = size
    return sizes


def _align(operand: _Operand, order: list[Any]) -> Tensor:
    """The operand permuted to `order`, with size-1 dimensions for labels it lacks."""
    labels = operand.labels
    present = [label for label in order if label in labels]
    tensor = operand.tensor
    permutation = tuple(labels.index(label) for label in present)
    if permutation != tuple(range(len(labels))):
        tensor = permute(tensor, permutation)
    shape = tuple(
        tensor._data.shape[present.index(label)] if label in labels else 1 for label in order
    )
    if shape != tensor._data.shape:
        tensor = reshape(tensor, shape)
    return tensor


def _contract_pair(a: Tensor, b: Tensor, summed: Any) -> Tensor:
    """Product of two aligned operands, summed over the dims in `summed`, via one matmul.

    Both have one dimension per label (size 1 where absent); so has the result.
    """
    summed = sorted(summed)
    shape_a, shape_b = a._data.shape, b._data.shape
    # A summed label present in only one operand is summed there first.
    only_a = tuple(d for d in summed if shape_a[d] > 1 and shape_b[d] == 1)
    only_b = tuple(d for d in summed if shape_b[d] > 1 and shape_a[d] == 1)
    if only_a:
        a = sum(a, only_a, keepdim=True)
    if only_b:
        b = sum(b, only_b, keepdim=True)
    shape_a, shape_b = a._data.shape, b._data.shape
    ndim = len(shape_a)
    contracted = [d for d in summed if shape_a[d] > 1 and shape_b[d] > 1]
    if not contracted:
        return mul(a, b)
    kept = [d for d in range(ndim) if d not in contracted]
    batch = [d for d in kept if shape_a[d] > 1 and shape_b[d] > 1]
    rows = [d for d in kept if d not in batch and shape_a[d] > 1]
    columns = [d for d in kept if d not in batch and d not in rows]
    a_matrix = reshape(
        permute(a, tuple(batch + rows + contracted + columns)),
        (
            math.prod(shape_a[d] for d in batch),
            math.prod(shape_a[d] for d in rows),
            math.prod(shape_a[d] for d in contracted),
        ),
    )
    b_matrix = reshape(
        permute(b, tuple(batch + contracted + rows + columns)),
        (
            math.prod(shape_b[d] for d in batch),
            math.prod(shape_b[d] for d in contracted),
            math.prod(shape_b[d] for d in columns),
        ),
    )
    product = matmul(a_matrix, b_matrix)
    # back to one dim per label: batch, rows, columns in order, contracted dims as size 1
    order = batch + rows + columns
    sizes = [shape_a[d] if d in rows else shape_b[d] for d in batch + rows] + [
        shape_b[d] for d in columns
    ]
    product = reshape(product, tuple(sizes) + (1,) * len(contracted))
    inverse = tuple(np.argsort(order + contracted))
    if inverse != tuple(range(ndim)):
        product = permute(product, inverse)
    return product


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over the operands (given as arguments or as one list).

    Supports implicit and explicit ('->') outputs, repeated subscripts within an operand
    (diagonals and traces), broadcasting of size-1 dimensions and ellipses. Built from
    permute, reshape, diagonal, sum, mul and matmul, so it needs no backward of its own.

    Example::

        lucid.einsum("bij,bjk->bik", a, b)   # batched matrix product
    """
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(
            f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}"
        )
    if not operands:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list"
        )
    for index, operand in enumerate(operands):
        if not isinstance(operand, TensorBase):
            raise TypeError(
                f"expected Tensor as element {index} in argument 1, but got "
                f"{type(operand).__name__}"
            )
    parsed, output = _parse_equation(equation, operands)
    for number, operand in enumerate(parsed):
        _take_diagonals(operand, number)
    _label_sizes(parsed)
    # Output labels first, then the summed ones in order of appearance.
    order = list(output)
    for operand in parsed:
        order.extend(label for label in operand.labels if label not in order)
    output_count = len(output)
    if len(parsed) == 1:
        # the summed labels come last in `order`: summing them leaves the output
        (operand,) = parsed
        result = permute(operand.tensor, tuple(operand.labels.index(label) for label in order))
        summed = tuple(range(output_count, len(order)))
        return sum(result, summed) if summed else result
    aligned = [_align(operand, order) for operand in parsed]

    def summed_after(position: int) -> set[int]:
        """Summed dims used by no operand after `position`: they can be summed now."""
        later = {label for operand in parsed[position + 1 :] for label in operand.labels}
        return {d for d in range(output_count, len(order)) if order[d] not in later}

    result = aligned[0]
    for position in range(1, len(aligned)):
        result = _contract_pair(result, aligned[position], summed_after(position))
    output_shape = result._data.shape[:output_count]
    if result._data.shape != output_shape:
        result = reshape(result, output_shape)
    return result


# --------------------------------------------------------- tensordot, inner
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Sum of products over dims of a and b: an int n (last n of a with first n of b) or
    two lists of dimensions."""
    if out is not None:
        raise NotImplementedError("tensordot(out=...) is not supported by lucid")
    ndim_a, ndim_b = a._data.ndim, b._data.ndim
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(ndim_a, ndim_b):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        reported_a = list(range(-dims, 0))
        reported_b = list(range(dims))
    else:
        reported_a, reported_b = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(reported_a) != len(reported_b):
            raise RuntimeError("both dimension lists should have same length")
    dims_a = [_normalize_dim(d, ndim_a) for d in reported_a]
    dims_b = [_normalize_dim(d, ndim_b) for d in reported_b]
    for dim_a, dim_b, shown_a, shown_b in zip(dims_a, dims_b, reported_a, reported_b):
        size_a, size_b = a._data.shape[dim_a], b._data.shape[dim_b]
        if size_a != size_b:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {size_a} in dim "
                f"{shown_a} and second has size {size_b} in dim {shown_b}"
            )
    free_a = [d for d in range(ndim_a) if d not in dims_a]
    free_b = [d for d in range(ndim_b) if d not in dims_b]
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected scalar type {_dtype_name(a._data.dtype)} but found "
            f"{_dtype_name(b._data.dtype)}"
        )
    rows = math.prod(a._data.shape[d] for d in free_a)
    inner_size = math.prod(a._data.shape[d] for d in dims_a)
    columns = math.prod(b._data.shape[d] for d in free_b)
    a_matrix = reshape(permute(a, tuple(free_a + dims_a)), (rows, inner_size))
    b_matrix = reshape(permute(b, tuple(dims_b + free_b)), (inner_size, columns))
    shape = tuple(a._data.shape[d] for d in free_a) + tuple(b._data.shape[d] for d in free_b)
    return reshape(matmul(a_matrix, b_matrix), shape)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dimension of both (a product when either is 0-d)."""
    try:
        if input._data.ndim == 0 or other._data.ndim == 0:
            return mul(input, other)
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._data.shape)} and {list(other._data.shape)}"
        )
    return tensordot(input, other, ([-1], [-1]))


# =====================================================================================
# The add-and-multiply family (baddbmm, addbmm, addmv, addr and their in-place forms),
# vdot, chain_matmul, cross, cdist, kron and vander.
# =====================================================================================
def _require_named_tensors(op: str, **named: Any) -> None:
    for position, (name, value) in enumerate(named.items(), start=1):
        if not isinstance(value, TensorBase):
            raise argument_error(op, name, position, value)


def _scales(numpy_dtype: np.dtype, beta: Any, alpha: Any) -> tuple[Any, Any]:
    from lucid.ops._promote import scalar_value

    beta, alpha = scalar_value(beta), scalar_value(alpha)
    if numpy_dtype.kind in "iu":
        # integer products take integer scales, as PyTorch casts them
        return int(beta), int(alpha)
    return beta, alpha


def _add_scaled_bias(product: np.ndarray, bias: Tensor, beta: Any) -> np.ndarray:
    """product + beta * bias, the bias broadcast to the product; with beta 0 the bias is
    ignored (nan included), as in PyTorch. A bias that cannot broadcast gets expand's error.
    A float16/bfloat16 bias joins the float32 product at float32 (the caller rounds once)."""
    bias_array = widen(bias._data)
    try:
        np.broadcast_to(bias_array, product.shape)
    except ValueError:
        expand(bias, product.shape)
        raise
    if beta == 0:
        return product
    if product.dtype == np.bool_:
        return product | (bias_array & bool(beta))
    product += bias_array if beta == 1 else beta * bias_array
    return product


def _scaled(grad_output: Tensor, scale: Any) -> Tensor:
    return grad_output if scale == 1 else grad_output * scale


def _check_batches(op: str, batch1: Tensor, batch2: Tensor) -> None:
    for tensor in (batch1, batch2):
        if tensor._data.ndim != 3:
            # PyTorch reads the batches' third dimension first
            _normalize_dim(2, tensor._data.ndim)
            raise RuntimeError(f"{op}: batch1 and batch2 must be 3-D tensors")


def _same_dtype_message(op: str, input: Tensor, batch1: Tensor, batch2: Tensor) -> str | None:
    from lucid.ops._common import dtype_name

    dtypes_ = (input._data.dtype, batch1._data.dtype, batch2._data.dtype)
    if len(set(dtypes_)) == 1:
        return None
    if op == "baddbmm":
        if dtypes_[0] == dtypes_[1]:
            return (
                f"expected scalar type {dtype_name(dtypes_[0])} but found {dtype_name(dtypes_[2])}"
            )
        names = [_cpp_scalar_name(d) for d in dtypes_]
        return (
            f"Input dtypes must be the same, got: input {names[0]}, batch1: {names[1]}, "
            f"batch2: {names[2]}"
        )
    if dtypes_[1] != dtypes_[2]:
        return (
            f"mat1 and mat2 must have the same dtype, but got {dtype_name(dtypes_[1])} and "
            f"{dtype_name(dtypes_[2])}"
        )
    return (
        f"self and mat2 must have the same dtype, but got {dtype_name(dtypes_[0])} and "
        f"{dtype_name(dtypes_[2])}"
    )


_C_SCALAR_NAMES = {
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "int8": "signed char", "int16": "short", "int32": "int", "int64": "long",
    "uint8": "unsigned char", "bool": "bool",
}  # fmt: skip


def _cpp_scalar_name(numpy_dtype: np.dtype) -> str:
    return _C_SCALAR_NAMES[numpy_dtype.name]


class Baddbmm(Function):
    """beta * input + alpha * (batch1 @ batch2); subclasses change only `_product`."""

    _backward_name = "BaddbmmBackward0"

    @staticmethod
    def _product(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.matmul(x, y)

    @classmethod
    def forward(cls, ctx, input, batch1, batch2, beta, alpha):
        # NumPy has no float16/bfloat16 BLAS: contract in float32 and round once
        product = cls._product(widen(batch1._data), widen(batch2._data))
        if alpha != 1:
            product *= alpha
        ctx.save_for_backward(batch1, batch2)
        ctx.bias_shape = input._data.shape
        ctx.beta, ctx.alpha = beta, alpha
        result = _add_scaled_bias(product, input, beta)
        return _wrap(round_to(result, low_precision_of(batch1._data.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        batch1, batch2 = ctx.saved_tensors
        grad_input = grad_batch1 = grad_batch2 = None
        if ctx.needs_input_grad[0]:
            grad_input = sum_to(_scaled(grad_output, ctx.beta), ctx.bias_shape)
        scaled = _scaled(grad_output, ctx.alpha)
        # d(A @ B) = dA @ B + A @ dB per batch
        if ctx.needs_input_grad[1]:
            grad_batch1 = matmul(scaled, batch2.mT)
        if ctx.needs_input_grad[2]:
            grad_batch2 = matmul(batch1.mT, scaled)
        return grad_input, grad_batch1, grad_batch2, None, None


def _baddbmm_arguments(input: Any, batch1: Any, batch2: Any, beta: Any, alpha: Any) -> tuple:
    _require_named_tensors("baddbmm", input=input, batch1=batch1, batch2=batch2)
    _check_batches("baddbmm", batch1, batch2)
    message = _same_dtype_message("baddbmm", input, batch1, batch2)
    if message is not None:
        raise RuntimeError(message)
    b1, b2 = batch1._data.shape, batch2._data.shape
    if b2[:2] != (b1[0], b1[2]):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b1[0]}, {b1[2]}] "
            f"but got: [{b2[0]}, {b2[1]}]."
        )
    return _scales(batch1._data.dtype, beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:  # fmt: skip
    """beta * input + alpha * (batch1 @ batch2), a batch of matrix products plus a bias."""
    if local_state.autocast is not None:
        return local_state.autocast.run(baddbmm, input, batch1, batch2, beta=beta, alpha=alpha)
    beta, alpha = _baddbmm_arguments(input, batch1, batch2, beta, alpha)
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> Tensor:  # fmt: skip
    from lucid.ops._common import apply_inplace

    beta, alpha = _baddbmm_arguments(input, batch1, batch2, beta, alpha)
    return apply_inplace(Baddbmm, input, batch1, batch2, beta, alpha)


class Addbmm(Baddbmm):
    """beta * input + alpha * the sum over batches of batch1[b] @ batch2[b]; its backward is
    baddbmm's, the (rows, cols) gradient broadcasting over the batches (every batch's product
    receives the whole gradient)."""

    _backward_name = "AddbmmBackward0"

    @staticmethod
    def _product(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        batches, rows, inner = x.shape
        # the sum over batches of x[b] @ y[b] is one product of the batches laid side by side
        return np.matmul(
            x.transpose(1, 0, 2).reshape(rows, batches * inner),
            y.reshape(batches * inner, y.shape[2]),
        )


def _addbmm_arguments(input: Any, batch1: Any, batch2: Any, beta: Any, alpha: Any) -> tuple:
    _require_named_tensors("addbmm", input=input, batch1=batch1, batch2=batch2)
    _check_batches("addbmm", batch1, batch2)
    b1, b2 = batch1._data.shape, batch2._data.shape
    if b1[0] != b2[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {b1[0]} and {b2[0]}"
        )
    if b1[2] != b2[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({b1[1]}x{b1[2]} and {b2[1]}x{b2[2]})"
        )
    message = _same_dtype_message("addbmm", input, batch1, batch2)
    if message is not None:
        raise RuntimeError(message)
    return _scales(batch1._data.dtype, beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:  # fmt: skip
    """beta * input + alpha * sum over b of batch1[b] @ batch2[b]."""
    if local_state.autocast is not None:
        return local_state.autocast.run(addbmm, input, batch1, batch2, beta=beta, alpha=alpha)
    beta, alpha = _addbmm_arguments(input, batch1, batch2, beta, alpha)
    return Addbmm.apply(input, batch1, batch2, beta, alpha)


def addbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:  # fmt: skip
    from lucid.ops._common import apply_inplace

    beta, alpha = _addbmm_arguments(input, batch1, batch2, beta, alpha)
    return apply_inplace(Addbmm, input, batch1, batch2, beta, alpha)


class Addmv(Function):
    _backward_name = "AddmvBackward0"

    @staticmethod
    def forward(ctx, input, mat, vec, beta, alpha):
        product = np.matmul(widen(mat._data), widen(vec._data))
        if alpha != 1:
            product *= alpha
        ctx.save_for_backward(mat, vec)
        ctx.bias_shape = input._data.shape
        ctx.beta, ctx.alpha = beta, alpha
        result = _add_scaled_bias(product, input, beta)
        return _wrap(round_to(result, low_precision_of(mat._data.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        mat, vec = ctx.saved_tensors
        grad_input = grad_mat = grad_vec = None
        if ctx.needs_input_grad[0]:
            grad_input = sum_to(_scaled(grad_output, ctx.beta), ctx.bias_shape)
        scaled = _scaled(grad_output, ctx.alpha)
        # d(M v) = dM v + M dv
        if ctx.needs_input_grad[1]:
            grad_mat = mul(scaled.unsqueeze(1), vec)
        if ctx.needs_input_grad[2]:
            grad_vec = matmul(mat.mT, scaled)
        return grad_input, grad_mat, grad_vec, None, None


def _addmv_arguments(input: Any, mat: Any, vec: Any, beta: Any, alpha: Any) -> tuple:
    from lucid.ops._common import dtype_name

    _require_named_tensors("addmv", input=input, mat=mat, vec=vec)
    ndims = (input._data.ndim, mat._data.ndim, vec._data.ndim)
    if ndims[1] != 2 or ndims[2] != 1 or ndims[0] > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {ndims[0]}, {ndims[1]}, {ndims[2]}"
        )
    rows, columns = mat._data.shape
    bias_size = input._data.size if ndims[0] == 0 else input._data.shape[0]
    if vec._data.shape[0] != columns or bias_size not in (1, rows):
        raise RuntimeError(
            f"size mismatch, got input ({bias_size}), mat ({rows}x{columns}), vec "
            f"({vec._data.shape[0]})"
        )
    dtypes_ = (input._data.dtype, mat._data.dtype, vec._data.dtype)
    if len(set(dtypes_)) != 1:
        names = [dtype_name(d) for d in dtypes_]
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {names[0]}, {names[1]}, "
            f"and {names[2]}"
        )
    return _scales(mat._data.dtype, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    beta, alpha = _addmv_arguments(input, mat, vec, beta, alpha)
    return Addmv.apply(input, mat, vec, beta, alpha)


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    from lucid.ops._common import apply_inplace

    beta, alpha = _addmv_arguments(input, mat, vec, beta, alpha)
    return apply_inplace(Addmv, input, mat, vec, beta, alpha)


class Addr(Function):
    _backward_name = "AddrBackward0"

    @staticmethod
    def forward(ctx, input, vec1, vec2, beta, alpha):
        from lucid._core import dtypes

        target = dtypes.result_type(input, vec1, vec2).numpy_dtype
        x = widen(vec1._data.astype(target, copy=False))
        y = widen(vec2._data.astype(target, copy=False))
        if target == np.bool_:
            product = np.logical_and.outer(x, y) & bool(alpha)
        else:
            product = np.multiply.outer(x, y)
            if alpha != 1:
                product *= alpha
        ctx.save_for_backward(vec1, vec2)
        ctx.bias = (input._data.shape, input._data.dtype)
        ctx.beta, ctx.alpha = beta, alpha
        result = _add_scaled_bias(product, input.to(target), beta)
        return _wrap(round_to(result, low_precision_of(target)))

    @staticmethod
    def backward(ctx, grad_output):
        vec1, vec2 = ctx.saved_tensors
        bias_shape, bias_dtype = ctx.bias
        grad_input = grad_vec1 = grad_vec2 = None
        if ctx.needs_input_grad[0]:
            grad_input = sum_to(_scaled(grad_output, ctx.beta), bias_shape).to(bias_dtype)
        scaled = _scaled(grad_output, ctx.alpha)
        # d(u v^T) = du v^T + u dv^T
        if ctx.needs_input_grad[1]:
            grad_vec1 = matmul(scaled, vec2.to(scaled.dtype)).to(vec1.dtype)
        if ctx.needs_input_grad[2]:
            grad_vec2 = matmul(scaled.mT, vec1.to(scaled.dtype)).to(vec2.dtype)
        return grad_input, grad_vec1, grad_vec2, None, None


def _addr_arguments(input: Any, vec1: Any, vec2: Any, beta: Any, alpha: Any) -> tuple:
    from lucid._core import dtypes

    _require_named_tensors("addr", input=input, vec1=vec1, vec2=vec2)
    for name, vector in (("vec1", vec1), ("vec2", vec2)):
        if vector._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {vector._data.ndim}-D")
    target = dtypes.result_type(input, vec1, vec2).numpy_dtype
    if target == np.bool_:
        return bool(beta), bool(alpha)
    return _scales(target, beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    beta, alpha = _addr_arguments(input, vec1, vec2, beta, alpha)
    return Addr.apply(input, vec1, vec2, beta, alpha)


def addr_(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    from lucid.ops._common import apply_inplace

    beta, alpha = _addr_arguments(input, vec1, vec2, beta, alpha)
    return apply_inplace(Addr, input, vec1, vec2, beta, alpha)


class Vdot(Function):
    _backward_name = "VdotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        product = np.asarray(np.dot(widen(a._data), widen(b._data)))
        return _wrap(round_to(product, low_precision_of(a._data.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # for real vectors vdot is dot: d/da a.b = b
        if ctx.needs_input_grad[0]:
            grad_a = grad_output * b
        if ctx.needs_input_grad[1]:
            grad_b = grad_output * a
        return grad_a, grad_b


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors (the first conjugated: the same for real tensors)."""
    from lucid.ops._common import dtype_name

    _require_named_tensors("vdot", input=input, other=other)
    x, y = input._data, other._data
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if x.dtype != y.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{dtype_name(x.dtype)} and {dtype_name(y.dtype)}"
        )
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to "
            f"have the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements "
            "respectively"
        )
    return Vdot.apply(input, other)


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """The product of a chain of 2-D matrices (deprecated in PyTorch for linalg.multi_dot)."""
    import warnings

    warnings.warn(
        "lucid.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "lucid.linalg.multi_dot instead, which accepts a list of two or more tensors rather "
        "than multiple parameters.",
        UserWarning,
        stacklevel=2,
    )
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    _require_named_tensors("chain_matmul", **{f"matrices[{i}]": m for i, m in enumerate(matrices)})
    for matrix in matrices:
        if matrix._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {matrix._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    for index in range(len(matrices) - 1):
        left, right = matrices[index]._data.shape, matrices[index + 1]._data.shape
        if left[1] != right[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {index} and {index + 1} with shapes {list(left)} and "
                f"{list(right)} cannot be multiplied"
            )
    result = matrices[0]
    for matrix in matrices[1:]:
        result = matmul(result, matrix)
    return result


_CDIST_MODES = (
    "use_mm_for_euclid_dist_if_necessary",
    "use_mm_for_euclid_dist",
    "donot_use_mm_for_euclid_dist",
)


def _pairwise_differences(x1: Any, x2: Any) -> Any:
    """x1[..., i, :] - x2[..., j, :] for every pair, as a (..., P, R, M) array or tensor."""
    if isinstance(x1, np.ndarray):
        return x1[..., :, None, :] - x2[..., None, :, :]
    return x1.unsqueeze(-2) - x2.unsqueeze(-3)


def _cdist_array(x1: np.ndarray, x2: np.ndarray, p: float, use_mm: bool) -> np.ndarray:
    if use_mm:
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one GEMM instead of a (P, R, M) difference, at the
        # cost of cancellation where points nearly coincide (clamped at 0)
        squared = (
            np.sum(x1 * x1, axis=-1)[..., :, None]
            + np.sum(x2 * x2, axis=-1)[..., None, :]
            - 2.0 * np.matmul(x1, np.swapaxes(x2, -1, -2))
        )
        return np.sqrt(np.maximum(squared, 0.0))
    difference = np.abs(_pairwise_differences(x1, x2))
    if p == 0:
        # the count of nonzero differences, nan where a difference is nan (as PyTorch's)
        return np.sum(np.minimum(np.ceil(difference), 1.0), axis=-1)
    if p == 1:
        return np.sum(difference, axis=-1)
    if p == 2:
        return np.sqrt(np.sum(difference * difference, axis=-1))
    if math.isinf(p):
        if difference.shape[-1] == 0:
            return np.zeros(difference.shape[:-1], x1.dtype)
        return np.max(difference, axis=-1)
    return np.power(np.sum(np.power(difference, p), axis=-1), 1.0 / p)


class Cdist(Function):
    _backward_name = "CdistBackward0"

    @staticmethod
    def forward(ctx, x1, x2, p, use_mm):
        a, b = x1._data, x2._data
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
        # float16/bfloat16 (the matrix-product path only) compute in float32, rounded once
        result = _wrap(round_to(_cdist_array(widen(a), widen(b), p, use_mm), a.dtype))
        ctx.save_for_backward(x1, x2, result)
        ctx.p = p
        return result

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.pointwise import abs, eq, isnan, sign, where

        x1, x2, result = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            # a count of nonzero differences is piecewise constant
            from lucid.ops._common import zeros_like_grad

            return (
                zeros_like_grad(grad_output, x1.shape),
                zeros_like_grad(grad_output, x2.shape),
                None,
                None,
            )
        if p == 2 and np.isfinite(x1._data).all() and np.isfinite(x2._data).all():
            return Cdist._euclidean_backward(ctx, grad_output, x1, x2, result)
        difference = _pairwise_differences(x1, x2)
        distance = result.unsqueeze(-1)
        # d/dx1 |x1 - x2|_p = sign(d) |d|^(p-1) / dist^(p-1): d / dist for p = 2, sign(d) for
        # p = 1, sign(d) where |d| is the max for p = inf; 0 where dist is 0
        if p == 1:
            # a nan difference gives a nan gradient, as PyTorch's (sign alone gives 0 there)
            factor = where(isnan(difference), difference, sign(difference))
        elif math.isinf(p):
            factor = where(eq(abs(difference), distance), sign(difference), 0.0)
        else:
            is_zero = eq(distance, 0.0)
            safe = where(is_zero, 1.0, distance)
            if p == 2:
                factor = difference / safe
            else:
                magnitude = abs(difference)
                factor = sign(difference) * (magnitude / safe) ** (p - 1)
            factor = where(is_zero, 0.0, factor)
        weighted = grad_output.unsqueeze(-1) * factor
        grad_x1 = grad_x2 = None
        if ctx.needs_input_grad[0]:
            grad_x1 = sum_to(sum(weighted, -2), x1.shape)
        if ctx.needs_input_grad[1]:
            grad_x2 = sum_to(-sum(weighted, -3), x2.shape)
        return grad_x1, grad_x2, None, None

    @staticmethod
    def _euclidean_backward(ctx, grad_output, x1, x2, result):
        """The p = 2 gradient of finite inputs without the (P, R, M) differences: with
        w = grad / dist (0 where dist is 0), d/dx1_i = x1_i sum_j w_ij - sum_j w_ij x2_j, two
        GEMMs instead of a pass over every pair's every coordinate."""
        from lucid.ops.pointwise import eq, where

        is_zero = eq(result, 0.0)
        weights = where(is_zero, 0.0, grad_output / where(is_zero, 1.0, result))
        grad_x1 = grad_x2 = None
        if ctx.needs_input_grad[0]:
            grad_x1 = x1 * sum(weights, -1).unsqueeze(-1) - matmul(weights, x2)
            grad_x1 = sum_to(grad_x1, x1.shape)
        if ctx.needs_input_grad[1]:
            grad_x2 = x2 * sum(weights, -2).unsqueeze(-1) - matmul(weights.transpose(-1, -2), x1)
            grad_x2 = sum_to(grad_x2, x2.shape)
        return grad_x1, grad_x2, None, None


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:  # fmt: skip
    """The p-norm distance between each row of x1 and each row of x2 (batched).

    For p = 2, PyTorch's compute modes are kept: a matrix product (faster, less exact for
    nearly equal points) when asked, or by default when either side has more than 25 rows.
    """
    if local_state.autocast is not None:
        return local_state.autocast.run(cdist, x1, x2, p, compute_mode)
    from lucid.ops._common import dtype_name
    from lucid.ops.broadcast import broadcast_shapes

    _require_named_tensors("cdist", x1=x1, x2=x2)
    a, b = x1._data, x2._data
    for name, array in (("X1", a), ("X2", b)):
        if array.ndim < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {name} got: {array.ndim}D"
            )
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}"
        )
    for name, array in (("X1", a), ("X2", b)):
        if array.dtype.kind not in FLOAT_KINDS:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {dtype_name(array.dtype)}"
            )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {dtype_name(a.dtype)} but found {dtype_name(b.dtype)}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    broadcast_shapes(a.shape[:-2], b.shape[:-2])
    use_mm = p == 2 and (
        compute_mode == "use_mm_for_euclid_dist"
        or (compute_mode == _CDIST_MODES[0] and (a.shape[-2] > 25 or b.shape[-2] > 25))
    )
    if a.dtype.itemsize == 2 and not use_mm:
        # PyTorch's CPU build has a float16/bfloat16 kernel only for the matrix-product path
        raise NotImplementedError(f"\"cdist\" not implemented for '{dtype_name(a.dtype)}'")
    return Cdist.apply(x1, x2, float(p), use_mm)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between every pair of rows i < j of an (N, M) input, in row-major
    order of the pairs (the condensed upper triangle of cdist(input, input)).

    Composed from a row gather and a norm, so its gradient is theirs: zero for a pair of equal
    rows, as PyTorch's.
    """
    from lucid.ops.indexing import index_select
    from lucid.ops.reduction import norm

    _require_named_tensors("pdist", input=input)
    if input._data.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input._data.ndim}D")
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input._data.dtype.itemsize == 2:
        from lucid.ops._common import dtype_name

        raise NotImplementedError(
            f"\"pdist\" not implemented for '{dtype_name(input._data.dtype)}'"
        )
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input._data.shape[0], 1)
    first = index_select(input, 0, _wrap(rows))
    second = index_select(input, 0, _wrap(cols))
    distances = norm(first - second, p, 1)
    if p == 0:
        # the count of differing coordinates is NaN for a pair with a NaN difference, as
        # PyTorch's pdist (unlike its vector_norm) has it
        from lucid.ops.pointwise import isnan, where
        from lucid.ops.reduction import any as any_of

        unknown = any_of(isnan(first - second), 1)
        distances = where(unknown, math.nan, distances)
    return distances


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every entry of input scales a whole copy of other."""
    _require_named_tensors("kron", input=input, other=other)
    ndim = max(input._data.ndim, other._data.ndim)
    a_shape = (1,) * (ndim - input._data.ndim) + input._data.shape
    b_shape = (1,) * (ndim - other._data.ndim) + other._data.shape
    # interleave the dims (a0, b0, a1, b1, ...) so one broadcast product holds every block
    a = reshape(input, [size for dim in a_shape for size in (dim, 1)])
    b = reshape(other, [size for dim in b_shape for size in (1, dim)])
    return reshape(mul(a, b), [x * y for x, y in zip(a_shape, b_shape)])


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-d tensor: columns x**(N-1), ..., x**0 (reversed with
    `increasing`); integer and bool inputs give int64."""
    from lucid._core import dtypes
    from lucid.ops.fills import to
    from lucid.ops.reduction import cumprod
    from lucid.ops.shape import cat, flip

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
    from lucid.ops.reduction import cumprod
    from lucid.ops.shape import cat

    _require_named_tensors("linalg_vander", x=x)
    if x._data.dtype == np.bool_ or x._data.dtype.itemsize == 2 and x._data.dtype.kind in "fV":
        from lucid.ops._common import dtype_name

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


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with input's elements (flattened) on its `offset` diagonal."""
    _require_named_tensors("diagflat", input=input)
    return diag_embed(reshape(input, (-1,)), offset)


def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the variables in input's rows, in [-1, 1]."""
    covariance = cov(input)
    if covariance._data.ndim == 0:
        return covariance / covariance
    deviations = sqrt(diagonal(covariance))
    scaled = covariance / unsqueeze(deviations, 1) / unsqueeze(deviations, 0)
    return clamp(scaled, -1, 1)
