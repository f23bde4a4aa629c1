"""Linear-algebra ops: diagonal, diag, trace, and einsum, tensordot, inner composed from matmul."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import raise_argument_error
from lucid._core.function import Function
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops.arithmetic import _dtype_name, matmul, mul
from lucid.ops.pointwise import clamp, sqrt
from lucid.ops.reduction import cov, sum
from lucid.ops.shape import expand, permute, reshape, unsqueeze

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["diagonal", "diag", "trace", "einsum", "tensordot", "inner", "corrcoef"]


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


def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the variables in input's rows, in [-1, 1]."""
    covariance = cov(input)
    if covariance._data.ndim == 0:
        return covariance / covariance
    deviations = sqrt(diagonal(covariance))
    scaled = covariance / unsqueeze(deviations, 1) / unsqueeze(deviations, 0)
    return clamp(scaled, -1, 1)
