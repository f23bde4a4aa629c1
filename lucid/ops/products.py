"""Products: matmul and its mm, bmm, mv, dot forms, outer, addmm; the add-and-multiply family
baddbmm, addbmm, addmv, addr; einsum, tensordot, inner, vdot, chain_matmul and kron."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import argument_error, raise_argument_error
from lucid._core.dtypes import C_TYPE_NAMES
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops._common import (
    _require_named_tensors,
    apply_inplace,
    autocast_op,
    backward_on_arrays,
    check_number,
    dtype_name,
    finish_array_backward,
    not_implemented,
)
from lucid.ops._common import dtype_name as _dtype_name
from lucid.ops._promote import low_precision_of, round_to, scalar_value, widen
from lucid.ops.arithmetic import _INTEGRAL_KINDS, _require_tensor, mul
from lucid.ops.broadcast import common_shape, sum_to
from lucid.ops.matrices import diagonal
from lucid.ops.reduction import SumDim, sum
from lucid.ops.shape import expand, permute, reshape

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "einsum", "tensordot", "inner", "baddbmm", "addbmm", "addmv", "addmv_", "addr", "vdot",
    "chain_matmul", "kron", "matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "addmm",
]  # fmt: skip


# --------------------------------------------------------------------- matmul
def _matmul_error(x: np.ndarray, y: np.ndarray) -> RuntimeError:
    """PyTorch's message for operands whose inner (or batch) sizes do not match."""
    if x.ndim == 1 and y.ndim == 1:
        return RuntimeError(
            f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to "
            f"have the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements "
            "respectively"
        )
    if y.ndim == 1:
        # PyTorch folds the batch dimensions of x into its rows and calls mv.
        rows = math.prod(x.shape[:-1])
        return RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{x.shape[-1]}), vec ({y.shape[0]})"
        )
    if y.ndim == 2:
        rows = math.prod(x.shape[:-1])
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} and "
            f"{y.shape[0]}x{y.shape[1]})"
        )
    batch = math.prod(common_shape(x.shape[:-2], y.shape[:-2]))
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, "
        f"{x.shape[-1]}] but got: [{batch}, {y.shape[-2]}]."
    )


def _matmul_dtype_error(x: np.ndarray, y: np.ndarray) -> RuntimeError:
    """PyTorch's message for operands of different dtypes, which depends on the kernel used."""
    if x.ndim == 1 and y.ndim == 1:
        return RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_dtype_name(x.dtype)} and {_dtype_name(y.dtype)}"
        )
    if y.ndim == 1:
        vector, matrix = _dtype_name(y.dtype), _dtype_name(x.dtype)
        return RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{vector}, {matrix}, and {vector}"
        )
    if y.ndim == 2:
        return RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{C_TYPE_NAMES[x.dtype.name]} != {C_TYPE_NAMES[y.dtype.name]}"
        )
    return RuntimeError(
        f"expected scalar type {_dtype_name(x.dtype)} but found {_dtype_name(y.dtype)}"
    )


def _product(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """np.matmul as every matrix product here computes it."""
    # np.matmul falls off its BLAS path for zero-stride (expanded) operands, such as the
    # gradient of a sum: one copy is far cheaper than the slow loop.
    if 0 in x.strides:
        x = np.ascontiguousarray(x)
    if 0 in y.strides:
        y = np.ascontiguousarray(y)
    # NumPy has no float16/bfloat16 BLAS: contract in float32 and round once
    return round_to(np.matmul(widen(x), widen(y)), low_precision_of(x.dtype))


class MatMul(Function):
    """Every matrix product; the subclasses below only carry PyTorch's grad_fn names."""

    _op_name = "matmul"
    _backward_name = "UnsafeViewBackward0"
    _complex_rule = HOLOMORPHIC
    # PyTorch's kernel for the product, named when it refuses bool operands.
    _kernel = "addmm_impl_cpu_"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.dtype != y.dtype:
            raise _matmul_dtype_error(x, y)
        if x.dtype.kind == "b":
            raise not_implemented(ctx.function._kernel, x.dtype)
        ctx.save_for_backward(a, b)
        try:
            return _wrap(_product(x, y))
        except ValueError:
            raise _matmul_error(x, y) from None

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        a_ndim, b_ndim = a._data.ndim, b._data.ndim
        grad_a = grad_b = None
        if a_ndim == 2 and b_ndim == 2:
            # d(AB)/dA = G B^T, d(AB)/dB = A^T G
            if ctx.needs_input_grad[0]:
                grad_a = matmul(grad_output, b.mT)
            if ctx.needs_input_grad[1]:
                grad_b = _matrix_grad_in_layout_of(b, a, grad_output)
            return grad_a, grad_b
        # Vectors become matrices (a row for a, a column for b) so one rule covers every case.
        a2 = a.unsqueeze(0) if a_ndim == 1 else a
        b2 = b.unsqueeze(-1) if b_ndim == 1 else b
        g = grad_output
        if a_ndim == 1 and b_ndim == 1:
            g = g.reshape(1, 1)
        elif a_ndim == 1:
            g = g.unsqueeze(-2)
        elif b_ndim == 1:
            g = g.unsqueeze(-1)
        # The gradient of an operand broadcast over the batches is one product of the batches
        # laid side by side, as PyTorch folds it: a single rounding in float16/bfloat16, where
        # summing rounded per-batch products would lose what cancels.
        if ctx.needs_input_grad[0]:
            if a2.ndim == 2 and g.ndim > 2:
                inner = b2.shape[-2]
                folded = g.movedim(-2, 0).reshape(a2.shape[0], -1)
                grad_a = matmul(folded, b2.mT.reshape(-1, inner))
            else:
                grad_a = sum_to(matmul(g, b2.mT), a2.shape)
            if a_ndim == 1:
                grad_a = grad_a.reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if b2.ndim == 2 and g.ndim > 2:
                grad_b = matmul(a2.reshape(-1, a2.shape[-1]).mT, g.reshape(-1, g.shape[-1]))
            else:
                grad_b = sum_to(matmul(a2.mT, g), b2.shape)
            if b_ndim == 1:
                grad_b = grad_b.reshape(b.shape)
        return grad_a, grad_b


def _matrix_grad_in_layout_of(b: Tensor, a: Tensor, grad_output: Tensor) -> Tensor:
    """A^T G, the gradient of B in A @ B, computed in B's memory layout.

    When B is a transposed view (a Linear weight used as `w.t()`), (G^T A)^T is the same
    matrix, and transposing it back gives a contiguous gradient for the weight that the
    engine can keep as `.grad` without copying it.
    """
    if b._data.flags.f_contiguous and not b._data.flags.c_contiguous:
        return matmul(grad_output.mT, a).mT
    return matmul(a.mT, grad_output)


class Mm(MatMul):
    _backward_name = "MmBackward0"


class Mv(MatMul):
    _backward_name = "MvBackward0"
    _kernel = "addmv_impl_cpu"


class Dot(MatMul):
    _backward_name = "DotBackward0"
    _kernel = "dot"


class VecMat(MatMul):
    """vector @ matrix: PyTorch computes it as a squeezed matrix product."""

    _op_name = "matmul"
    _backward_name = "SqueezeBackward4"


class Bmm(MatMul):
    _backward_name = "BmmBackward0"
    _kernel = "bmm"


class FoldedMatMul(MatMul):
    """matrix @ batch when the matrix needs a gradient: PyTorch folds it and copies back."""

    _op_name = "matmul"
    _backward_name = "CloneBackward0"


@autocast_op
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch broadcasting rules for 1-D and batched operands."""
    if not isinstance(input, TensorBase):
        raise argument_error("matmul", "input", 1, input)
    if not isinstance(other, TensorBase):
        raise argument_error("matmul", "other", 2, other)
    a_ndim, b_ndim = input._data.ndim, other._data.ndim
    if a_ndim == 2:
        if b_ndim == 2:
            return Mm.apply(input, other)
        if b_ndim == 1:
            return Mv.apply(input, other)
    if a_ndim == 0 or b_ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a_ndim}D and {b_ndim}D"
        )
    if a_ndim == 1:
        if b_ndim == 1:
            return Dot.apply(input, other)
        if b_ndim == 2:
            return VecMat.apply(input, other)
    if a_ndim == 2 and input._requires_grad:
        return FoldedMatMul.apply(input, other)
    return MatMul.apply(input, other)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two matrices (no broadcasting)."""
    _require_tensor(input, "mm", "input", 1)
    _require_tensor(mat2, "mm", "mat2", 2)
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return Mm.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of two 3-D tensors with equal batch sizes (no broadcasting)."""
    _require_tensor(input, "bmm", "input", 1)
    _require_tensor(mat2, "bmm", "mat2", 2)
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    batch, _, inner = input._data.shape
    if mat2._data.shape[:2] != (batch, inner):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {inner}] "
            f"but got: [{mat2._data.shape[0]}, {mat2._data.shape[1]}]."
        )
    return Bmm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product."""
    _require_tensor(input, "mv", "input", 1)
    _require_tensor(vec, "mv", "vec", 2)
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}"
        )
    return Mv.apply(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors."""
    _require_tensor(input, "dot", "input", 1)
    _require_tensor(tensor, "dot", "tensor", 2)
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors"
        )
    return Dot.apply(input, tensor)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors: a column times a row, broadcast."""
    _require_tensor(input, "outer", "input", 1)
    _require_tensor(vec2, "outer", "vec2", 2)
    for name, vector in (("self", input), ("vec2", vec2)):
        if vector._data.ndim != 1:
            raise RuntimeError(
                f"outer: Expected 1-D argument {name}, but got {vector._data.ndim}-D"
            )
    return mul(input.unsqueeze(1), vec2)


ger = outer


class Addmm(Function):
    _backward_name = "AddmmBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, bias, mat1, mat2, beta, alpha):
        x, y = mat1._data, mat2._data
        low = low_precision_of(x.dtype)
        try:
            product = np.matmul(widen(x), widen(y))
        except ValueError:
            raise _matmul_error(x, y) from None
        if alpha != 1:
            product *= alpha
        bias_array = widen(bias._data)
        # NumPy broadcasts the bias: a nested expand op would also pay the sentinel's check
        # over every element of the expanded view
        try:
            if beta != 0:
                product += bias_array if beta == 1 else beta * bias_array
            elif bias_array.shape != product.shape:
                np.broadcast_to(bias_array, product.shape)
        except ValueError:
            # raises PyTorch's message for a bias that cannot broadcast to the product
            expand(bias, product.shape)
            raise
        ctx.save_for_backward(mat1, mat2)
        ctx.bias_shape = bias._data.shape
        ctx.alpha, ctx.beta = alpha, beta
        return _wrap(round_to(product, low))

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the Linear case of forward and of the array backward (lucid/_dynamo/flat.py)
        bias, x, w, beta, alpha = args
        dtype = x.dtype
        if alpha != 1 or beta != 1 or dtype.kind != "f" or dtype.itemsize < 4:
            return None
        if x.ndim != 2 or w.ndim != 2 or w.dtype is not dtype or bias.dtype is not dtype:
            return None
        if needs_input_grad[0] and bias.shape != w.shape[1:]:
            return None

        def forward(bias, x, w, beta, alpha):
            product = np.matmul(x, w)
            product += bias
            return product

        def backward(grad, out, bias, x, w, beta, alpha):
            grad_bias, grad_mat1, grad_mat2, transposed = _addmm_gradients(
                grad, x, w, needs_input_grad, (grad, x, w)
            )
            if transposed:
                grad_mat2 = grad_mat2.swapaxes(-1, -2)
            return grad_bias, grad_mat1, grad_mat2, None, None

        return forward, backward, None

    @staticmethod
    def backward(ctx, grad_output):
        mat1, mat2 = ctx.saved_tensors
        if backward_on_arrays():
            grads = _addmm_backward_arrays(ctx, grad_output, mat1, mat2)
            if grads is not None:
                return grads
        grad_bias = grad_mat1 = grad_mat2 = None
        if ctx.needs_input_grad[0]:
            grad_bias = grad_output if ctx.beta == 1 else grad_output * ctx.beta
            grad_bias = sum_to(grad_bias, ctx.bias_shape)
        scaled = grad_output if ctx.alpha == 1 else grad_output * ctx.alpha
        if ctx.needs_input_grad[1]:
            grad_mat1 = matmul(scaled, mat2.mT)
        if ctx.needs_input_grad[2]:
            grad_mat2 = _matrix_grad_in_layout_of(mat2, mat1, scaled)
        return grad_bias, grad_mat1, grad_mat2, None, None


def _addmm_backward_arrays(ctx, grad_output, mat1, mat2):
    """Addmm's backward on arrays for a Linear layer's case (scales 1, float32/float64
    operands of one dtype, a bias of the product's last dim or none). None where the op path
    is needed."""
    g, x, w = grad_output._data, mat1._data, mat2._data
    if ctx.alpha != 1 or ctx.beta != 1 or g.ndim != 2 or g.dtype.kind != "f":
        return None
    if g.dtype.itemsize < 4 or x.dtype is not g.dtype or w.dtype is not g.dtype:
        return None
    if ctx.needs_input_grad[0] and ctx.bias_shape != g.shape[1:]:
        return None
    grad_bias, grad_mat1, grad_mat2, transposed = _addmm_gradients(
        g, x, w, ctx.needs_input_grad, (grad_output, mat1, mat2)
    )
    grads = [None if grad is None else _wrap(grad) for grad in (grad_bias, grad_mat1, grad_mat2)]
    if transposed:
        # the view as the op path makes it (`mT`), whose base the engine may keep as `.grad`
        # without a copy
        grads[2] = grads[2].mT
    return (*grads, None, None)


def _addmm_gradients(g, x, w, needs_input_grad, operands):
    """The bias, mat1 and mat2 gradient arrays (None where not needed) that the op path
    computes: SumDim's and Mm's forwards, operands in the same layouts, each handing on its
    own flags with its `operands` (grad_output, mat1, mat2: tensors, or the arrays); and
    whether mat2's is its transpose (the caller's to view as mat2's)."""
    grad_output, mat1, mat2 = operands
    needs_bias, needs_mat1, needs_mat2 = needs_input_grad[:3]
    grad_bias = grad_mat1 = grad_mat2 = None
    transposed = False
    if needs_bias:
        grad_bias = np.add.reduce(g, (0,), None, None, False)
        finish_array_backward(SumDim, (grad_output,), (grad_bias,))
    if needs_mat1:
        grad_mat1 = _product(g, w.swapaxes(-1, -2))
        finish_array_backward(Mm, (grad_output, mat2), (grad_mat1,))
    if needs_mat2:
        # _matrix_grad_in_layout_of's choice, on arrays
        transposed = w.flags.f_contiguous and not w.flags.c_contiguous
        if transposed:
            grad_mat2 = _product(g.swapaxes(-1, -2), x)
        else:
            grad_mat2 = _product(x.swapaxes(-1, -2), g)
        finish_array_backward(Mm, (grad_output, mat1), (grad_mat2,))
    return grad_bias, grad_mat1, grad_mat2, transposed


@autocast_op
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2); with beta == 0, `input` is ignored (even nan)."""
    beta, alpha = _addmm_arguments(input, mat1, mat2, beta, alpha)
    return Addmm.apply(input, mat1, mat2, beta, alpha)


def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    beta, alpha = _addmm_arguments(input, mat1, mat2, beta, alpha)
    return apply_inplace(Addmm, input, mat1, mat2, beta, alpha)


def _addmm_arguments(input: Any, mat1: Any, mat2: Any, beta: Any, alpha: Any) -> tuple[Any, Any]:
    """addmm's scales, after PyTorch's errors for its operands."""
    if not (
        isinstance(input, TensorBase)
        and isinstance(mat1, TensorBase)
        and isinstance(mat2, TensorBase)
    ):
        for position, (name, value) in enumerate(
            (("input", input), ("mat1", mat1), ("mat2", mat2))
        ):
            _require_tensor(value, "addmm", name, position + 1)
    x, y = mat1._data, mat2._data
    if x.ndim != 2 or y.ndim != 2:
        name, ndim = ("mat1", x.ndim) if x.ndim != 2 else ("mat2", y.ndim)
        raise RuntimeError(f"{name} must be a matrix, got {ndim}-D tensor")
    dtype = y.dtype
    if input._data.dtype != dtype or x.dtype != dtype:
        name, other = (
            ("self", input._data.dtype) if input._data.dtype != dtype else ("mat1", x.dtype)
        )
        raise RuntimeError(
            f"{name} and mat2 must have the same dtype, but got {_dtype_name(other)} and "
            f"{_dtype_name(dtype)}"
        )
    if beta.__class__ is not int or alpha.__class__ is not int:
        check_number(beta, "addmm", "beta", None)
        check_number(alpha, "addmm", "alpha", None)
    if dtype.kind in _INTEGRAL_KINDS:
        # integer products take integer scales, as PyTorch casts them
        beta, alpha = int(beta), int(alpha)
    return beta, alpha


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


# ----------------------------------------------------------------- baddbmm, addbmm, addmv, addr
# The add-and-multiply family and their in-place forms, then vdot, chain_matmul and kron.
def _scales(numpy_dtype: np.dtype, beta: Any, alpha: Any, op: str) -> tuple[Any, Any]:
    check_number(beta, op, "beta", None)
    check_number(alpha, op, "alpha", None)
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
    _complex_rule = HOLOMORPHIC

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
    return _scales(batch1._data.dtype, beta, alpha, "baddbmm")


@autocast_op
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:  # fmt: skip
    """beta * input + alpha * (batch1 @ batch2), a batch of matrix products plus a bias."""
    beta, alpha = _baddbmm_arguments(input, batch1, batch2, beta, alpha)
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> Tensor:  # fmt: skip
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
    return _scales(batch1._data.dtype, beta, alpha, "addbmm")


@autocast_op
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:  # fmt: skip
    """beta * input + alpha * sum over b of batch1[b] @ batch2[b]."""
    beta, alpha = _addbmm_arguments(input, batch1, batch2, beta, alpha)
    return Addbmm.apply(input, batch1, batch2, beta, alpha)


def addbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:  # fmt: skip
    beta, alpha = _addbmm_arguments(input, batch1, batch2, beta, alpha)
    return apply_inplace(Addbmm, input, batch1, batch2, beta, alpha)


class Addmv(Function):
    _backward_name = "AddmvBackward0"
    _complex_rule = HOLOMORPHIC

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
    return _scales(mat._data.dtype, beta, alpha, "addmv")


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    beta, alpha = _addmv_arguments(input, mat, vec, beta, alpha)
    return Addmv.apply(input, mat, vec, beta, alpha)


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    beta, alpha = _addmv_arguments(input, mat, vec, beta, alpha)
    return apply_inplace(Addmv, input, mat, vec, beta, alpha)


class Addr(Function):
    _backward_name = "AddrBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, input, vec1, vec2, beta, alpha):
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
    _require_named_tensors("addr", input=input, vec1=vec1, vec2=vec2)
    for name, vector in (("vec1", vec1), ("vec2", vec2)):
        if vector._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {vector._data.ndim}-D")
    target = dtypes.result_type(input, vec1, vec2).numpy_dtype
    if target == np.bool_:
        return bool(beta), bool(alpha)
    return _scales(target, beta, alpha, "addr")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    beta, alpha = _addr_arguments(input, vec1, vec2, beta, alpha)
    return Addr.apply(input, vec1, vec2, beta, alpha)


def addr_(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    beta, alpha = _addr_arguments(input, vec1, vec2, beta, alpha)
    return apply_inplace(Addr, input, vec1, vec2, beta, alpha)


class Vdot(Function):
    _backward_name = "VdotBackward0"
    # conj(a).b is not holomorphic in a
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        product = np.asarray(np.vdot(widen(a._data), widen(b._data)))
        return _wrap(round_to(product, low_precision_of(a._data.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d/da a.b = b for real vectors; for complex ones conj(a).b depends on conj(a) alone,
        # so a's gradient is conj(grad) b and b's is grad a
        if ctx.needs_input_grad[0]:
            if grad_output._data.dtype.kind == "c":
                grad_a = grad_output.conj() * b
            else:
                grad_a = grad_output * b
        if ctx.needs_input_grad[1]:
            grad_b = grad_output * a
        return grad_a, grad_b


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors (the first conjugated: the same for real tensors)."""
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
