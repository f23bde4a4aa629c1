"""Matrix functions and decompositions behind lucid.linalg: inverses, determinants, solvers,
Cholesky, QR, eigh, SVD, pinv, lstsq, matrix_exp, LU, and the top-level names PyTorch keeps
for them (det, inverse, svd, ...).

Every forward runs NumPy's batched LAPACK routines on the whole stack of matrices at once;
every backward is written in lucid ops, so it can be differentiated again.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import raise_argument_error
from lucid._core.dtypes import INEXACT_KINDS
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops import complex_numbers
from lucid.ops import cumulative as cumulative_ops
from lucid.ops import joining as joining_ops
from lucid.ops import matrices as matrices_ops
from lucid.ops import pointwise as pointwise_ops
from lucid.ops import reduction as reduction_ops
from lucid.ops import shape as shape_ops
from lucid.ops._common import autocast_op, check_bool, check_number, dtype_name, result_type
from lucid.ops._promote import is_low_precision
from lucid.ops.arithmetic import mul
from lucid.ops.broadcast import broadcast_error, sum_to
from lucid.ops.fills import clone, copy_, to
from lucid.ops.matrices import DiagonalGrad
from lucid.ops.matrices import diagonal as _diagonal
from lucid.ops.products import matmul

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "det", "logdet", "slogdet", "inverse", "svd", "cholesky", "cholesky_solve",
    "cholesky_inverse", "qr", "pinverse", "matrix_exp", "matrix_power", "cross", "lu_unpack",
    "geqrf", "orgqr", "ormqr",
]  # fmt: skip

_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)


class LinAlgError(RuntimeError):
    """A matrix the routine cannot handle (singular, not positive-definite, no convergence)."""


# --------------------------------------------------------------------------- results
InvExResult = result_type("InvExResult", "linalg_inv_ex", "inverse", "info")
LinalgSlogdetResult = result_type("LinalgSlogdetResult", "linalg_slogdet", "sign", "logabsdet")
SlogdetResult = result_type("SlogdetResult", "slogdet", "sign", "logabsdet")
SolveExResult = result_type("SolveExResult", "linalg_solve_ex", "result", "info")
CholeskyExResult = result_type("CholeskyExResult", "linalg_cholesky_ex", "L", "info")
LinalgQrResult = result_type("LinalgQrResult", "linalg_qr", "Q", "R")
QrResult = result_type("QrResult", "qr", "Q", "R")
EighResult = result_type("EighResult", "linalg_eigh", "eigenvalues", "eigenvectors")
EigResult = result_type("EigResult", "linalg_eig", "eigenvalues", "eigenvectors")
LinalgSvdResult = result_type("LinalgSvdResult", "linalg_svd", "U", "S", "Vh")
SvdResult = result_type("SvdResult", "svd", "U", "S", "V")
LstsqResult = result_type(
    "LstsqResult", "linalg_lstsq", "solution", "residuals", "rank", "singular_values"
)
LuFactorResult = result_type("LuFactorResult", "linalg_lu_factor", "LU", "pivots")
LuFactorExResult = result_type("LuFactorExResult", "linalg_lu_factor_ex", "LU", "pivots", "info")
LuResult = result_type("LuResult", "linalg_lu", "P", "L", "U")
LuUnpackResult = result_type("LuUnpackResult", "lu_unpack", "P", "L", "U")


# --------------------------------------------------------------------------- checks
# PyTorch's binding name and argument names, where they are not the Python function's own,
# for its "must be Tensor" TypeError: lucid.linalg.cholesky(None) is `linalg_cholesky():
# argument 'input' (position 1) ...`, lucid.det(None) `det(): argument 'input' ...`.
_LINALG_INPUT = ("input",)
_TORCH_ARGUMENTS = {
    "det": ("det", _LINALG_INPUT),
    "slogdet": ("slogdet", _LINALG_INPUT),
    "matrix_exp": ("matrix_exp", _LINALG_INPUT),
    "matrix_power": ("matrix_power", _LINALG_INPUT),
    "inverse": ("inverse", _LINALG_INPUT),
    "linalg_det": ("linalg_det", ("A",)),
    "linalg_matrix_exp": ("linalg_matrix_exp", _LINALG_INPUT),
    "linalg_matrix_power": ("linalg_matrix_power", _LINALG_INPUT),
    "linalg_cholesky": ("linalg_cholesky", _LINALG_INPUT),
    "cholesky_ex": ("linalg_cholesky_ex", _LINALG_INPUT),
    "cond": ("linalg_cond", _LINALG_INPUT),
    "linalg_cross": ("linalg_cross", ("input", "other")),
    "linalg_diagonal": ("linalg_diagonal", ("A",)),
    "eig": ("linalg_eig", _LINALG_INPUT),
    "eigh": ("linalg_eigh", _LINALG_INPUT),
    "eigvals": ("linalg_eigvals", _LINALG_INPUT),
    "eigvalsh": ("linalg_eigvalsh", _LINALG_INPUT),
    "householder_product": ("linalg_householder_product", ("input", "tau")),
    "inv": ("linalg_inv", ("A",)),
    "inv_ex": ("linalg_inv_ex", ("A",)),
    "ldl_factor": ("linalg_ldl_factor", _LINALG_INPUT),
    "ldl_factor_ex": ("linalg_ldl_factor_ex", _LINALG_INPUT),
    "ldl_solve": ("linalg_ldl_solve", ("LD", "pivots", "B")),
    "lstsq": ("linalg_lstsq", ("input", "b")),
    "lu": ("linalg_lu", ("A",)),
    "lu_factor": ("linalg_lu_factor", ("A",)),
    "lu_factor_ex": ("linalg_lu_factor_ex", ("A",)),
    "lu_solve": ("linalg_lu_solve", ("LU", "pivots", "B")),
    "matrix_norm": ("linalg_matrix_norm", _LINALG_INPUT),
    "norm": ("linalg_norm", _LINALG_INPUT),
    "linalg_qr": ("linalg_qr", ("A",)),
    "linalg_slogdet": ("linalg_slogdet", ("A",)),
    "solve": ("linalg_solve", ("A", "B")),
    "solve_ex": ("linalg_solve_ex", ("A", "B")),
    "solve_triangular": ("linalg_solve_triangular", ("input", "B")),
    "linalg_svd": ("linalg_svd", ("A",)),
    "svdvals": ("linalg_svdvals", ("A",)),
    "tensorinv": ("linalg_tensorinv", _LINALG_INPUT),
    "tensorsolve": ("linalg_tensorsolve", ("input", "other")),
    "vecdot": ("linalg_vecdot", ("x", "y")),
    "vector_norm": ("linalg_vector_norm", _LINALG_INPUT),
}


def _torch_argument_error(error: TypeError) -> TypeError:
    """`error`, a "must be Tensor" TypeError naming lucid's function and parameter, in
    PyTorch's binding and argument names."""
    op, _, rest = str(error).partition("(): argument '")
    binding = _TORCH_ARGUMENTS.get(op)
    if binding is None or not rest:
        return error
    name, _, rest = rest.partition("' (position ")
    position = int(rest.partition(")")[0])
    names = binding[1]
    if position <= len(names):
        name = names[position - 1]
    return TypeError(f"{binding[0]}(): argument '{name}' (position {rest}")


def _array(input: Any) -> np.ndarray:
    """The array of a tensor argument; PyTorch's TypeError for anything else."""
    try:
        return input._data
    except AttributeError as error:
        try:
            raise_argument_error(error)
        except TypeError as type_error:
            raise _torch_argument_error(type_error) from None
        raise


def _check_matrix(name: str, input: Any, square: bool = True, what: str = "A",
                  half: str | None = None) -> np.ndarray:  # fmt: skip
    """PyTorch's checks of a (batch of) matrices: at least 2-D, floating, square if asked.

    `half` is the error for float16, whose LAPACK kernels PyTorch lacks: a kernel name gives
    PyTorch's NotImplementedError, None its "Low precision dtypes" RuntimeError, and
    _HALF_SUPPORTED none at all.
    """
    array = _array(input)
    if array.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if square and array.shape[-1] != array.shape[-2]:
        raise RuntimeError(
            f"{name}: {what} must be batches of square matrices, but they are "
            f"{array.shape[-2]} by {array.shape[-1]} matrices"
        )
    _check_float(name, array, half)
    return array


_HALF_SUPPORTED = ""


def _check_float(name: str, array: np.ndarray, half: str | None = None) -> None:
    if array.dtype.kind not in INEXACT_KINDS:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{dtype_name(array.dtype)}"
        )
    if array.dtype.itemsize == 2 and half != _HALF_SUPPORTED:
        # float16 and bfloat16 alike: LAPACK has neither
        if half is None:
            raise RuntimeError(
                f"{name}: Low precision dtypes not supported. Got {dtype_name(array.dtype)}"
            )
        raise NotImplementedError(f"\"{half}\" not implemented for '{dtype_name(array.dtype)}'")


def _check_same_dtype(name: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type "
            f"{dtype_name(a.dtype)} and B of type {dtype_name(b.dtype)} instead"
        )


def _batch_prefix(info: np.ndarray) -> tuple[str, int]:
    """PyTorch's '(Batch element k): ' for the first failing matrix, and its info code."""
    failed = np.flatnonzero(info.reshape(-1))
    first = int(failed[0])
    prefix = f"(Batch element {first}): " if info.ndim else ""
    return prefix, int(info.reshape(-1)[first])


def _refuse_out(name: str, out: Any) -> None:
    """lucid writes no results into given tensors: say so rather than ignore `out`."""
    if out is not None:
        raise NotImplementedError(f"{name}(out=...) is not supported by lucid")


def _eye_like(array: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.eye(array.shape[-1], dtype=array.dtype), array.shape)


def _diag_array(values: np.ndarray) -> np.ndarray:
    """A (batch of) diagonal matrices with `values` on the diagonal."""
    n = values.shape[-1]
    return values[..., :, None] * np.eye(n, dtype=values.dtype)


def _diag_embed(values: Tensor) -> Tensor:
    """A (batch of) diagonal matrices with `values` on the diagonal, differentiably."""
    shape = tuple(values.shape)
    ndim = len(shape) + 1
    return DiagonalGrad.apply(values, shape + (shape[-1],), 0, ndim - 2, ndim - 1)


def _matrix_diagonal(x: Tensor) -> Tensor:
    return _diagonal(x, 0, -2, -1)


# ------------------------------------------------------------------------ LU (arrays)
def _lu_factor_array(array: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LU with partial pivoting as LAPACK's getrf: (LU, 1-based pivots, info).

    NumPy exposes no getrf, so the elimination runs one column at a time, each step
    vectorised over the whole batch (the Python loop is over columns, never matrices), and,
    as getrf does, in panels of _LU_BLOCK columns: the rest of the matrix is updated once per
    panel by a triangular solve and a matrix product instead of once per column.
    info is the 1-based index of the first exactly zero pivot, 0 where there is none.
    """
    m, n = array.shape[-2:]
    steps = min(m, n)
    batch = array.shape[:-2]
    count = math.prod(batch)
    lu = array.reshape((count, m, n)).copy()
    pivots = np.empty((count, steps), _INT32)
    info = np.zeros(count, _INT32)
    with np.errstate(all="ignore"):
        for start in range(0, steps, _LU_BLOCK):
            stop = min(start + _LU_BLOCK, steps)
            _lu_factor_panel(lu, start, stop, pivots, info)
            if stop < n:
                # U12 = L11^-1 A12 (L11 unit lower), then A22 -= L21 U12
                lu[:, start:stop, stop:] = _solve_triangular_array(
                    lu[:, start:stop, start:stop], lu[:, start:stop, stop:], False, True, True
                )
                # contiguous operands keep np.matmul on its BLAS path
                lower = np.ascontiguousarray(lu[:, stop:, start:stop])
                upper = np.ascontiguousarray(lu[:, start:stop, stop:])
                lu[:, stop:, stop:] -= lower @ upper
    return (
        lu.reshape(batch + (m, n)),
        pivots.reshape(batch + (steps,)),
        info.reshape(batch),
    )


_LU_BLOCK = 32


def _lu_factor_panel(lu: np.ndarray, start: int, stop: int, pivots: np.ndarray,
                     info: np.ndarray) -> None:  # fmt: skip
    """Unblocked elimination of columns start..stop of a stack of matrices, in place: whole
    rows are swapped, and only the panel's own columns are updated."""
    count, m, n = lu.shape
    # rows addressed in the stack flattened to (count * m, n): NumPy's fast indexing path
    flat_rows = lu.reshape(count * m, n)
    first_rows = np.arange(count) * m
    for k in range(start, stop):
        # the first largest magnitude (|re| + |im| for complex), as i?amax picks it: a NaN
        # never compares larger, so it is picked only where it comes first and nothing can
        # replace it
        column = _cabs1(lu[:, k:, k])
        nan_first = np.isnan(column[:, 0])
        column = np.where(np.isnan(column), -1.0, column)
        pivot_row = k + np.where(nan_first, 0, np.argmax(column, axis=1))
        pivots[:, k] = pivot_row + 1
        pivot_index = first_rows + pivot_row
        swapped = flat_rows[pivot_index]
        flat_rows[pivot_index] = lu[:, k]
        lu[:, k] = swapped
        pivot = lu[:, k, k]
        is_zero = pivot == 0
        info[(info == 0) & is_zero] = k + 1
        # a zero pivot leaves its column as it is (all zeros below), as getrf does
        scale = np.where(is_zero, 1.0, pivot).astype(lu.dtype)
        lu[:, k + 1 :, k] /= scale[:, None]
        lu[:, k + 1 :, k + 1 : stop] -= lu[:, k + 1 :, k, None] * lu[:, k, None, k + 1 : stop]


def _singular_info(array: np.ndarray) -> np.ndarray:
    """getrf's info for each matrix of a stack (0 where the matrix is not exactly singular)."""
    return _lu_factor_array(array)[2]


def _permutation_from_pivots(pivots: np.ndarray, m: int, dtype: np.dtype) -> np.ndarray:
    """The permutation matrices P with A = P L U, from getrf's 1-based row swaps."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((math.prod(batch), pivots.shape[-1])) - 1
    order = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for k in range(flat.shape[1]):
        target = flat[:, k]
        kept = order[:, k].copy()
        order[:, k] = order[rows, target]
        order[rows, target] = kept
    # row k of P^T A is row order[k] of A, so P has a one at (order[k], k)
    permutation = np.zeros((flat.shape[0], m, m), dtype)
    permutation[rows[:, None], order, np.arange(m)[None, :]] = 1
    return permutation.reshape(batch + (m, m))


# ---------------------------------------------------------------------------- inverse
def _inverse_array(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverses and getrf's info; singular matrices get NaN, as PyTorch's inv_ex gives."""
    info = np.zeros(array.shape[:-2], _INT32)
    if array.shape[-1] == 0:
        return array.copy(), info
    try:
        return np.linalg.inv(array), info
    except np.linalg.LinAlgError:
        info = _singular_info(array)
    safe = np.where((info != 0)[..., None, None], _eye_like(array), array)
    inverse = np.linalg.inv(safe)
    inverse[info != 0] = np.nan
    return inverse, info


def _raise_singular(name: str, info: np.ndarray) -> None:
    if np.any(info):
        prefix, code = _batch_prefix(info)
        raise LinAlgError(
            f"{name}: {prefix}The diagonal element {code} is zero, the inversion could not be "
            "completed because the input matrix is singular."
        )


class LinalgInvEx(Function):
    _backward_name = "LinalgInvExBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_inv"

    @staticmethod
    def forward(ctx, a, check_errors):
        inverse, info = _inverse_array(a._data)
        if check_errors:
            _raise_singular("linalg.inv", info)
        result = _wrap(inverse)
        info_tensor = _wrap(info)
        ctx.mark_non_differentiable(info_tensor)
        ctx.save_for_backward(result)
        return result, info_tensor

    @staticmethod
    def backward(ctx, grad_output, grad_info):
        (inverse,) = ctx.saved_tensors
        # d(A^-1) = -A^-1 dA A^-1
        inverse_t = inverse.mT
        return -matmul(inverse_t, matmul(grad_output, inverse_t)), None


@autocast_op
def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> InvExResult:
    """The inverse of each matrix and an info code per matrix (nonzero where singular)."""
    _refuse_out("inv_ex", out)
    _check_matrix("linalg.inv", A)
    inverse, info = LinalgInvEx.apply(A, bool(check_errors))
    return InvExResult(inverse, info)


@autocast_op
def inv(A: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of each square matrix; singular matrices raise LinAlgError."""
    _refuse_out("inv", out)
    _check_matrix("linalg.inv", A)
    return LinalgInvEx.apply(A, True)[0]


@autocast_op
def inverse(input: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of each square matrix (lucid.linalg.inv)."""
    _refuse_out("inverse", out)
    _array(input)
    return inv(input)


# ------------------------------------------------------------------------ determinants
class LinalgDet(Function):
    _backward_name = "LinalgDetBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_det"

    @staticmethod
    def forward(ctx, a):
        result = _wrap(np.asarray(np.linalg.det(a._data)))
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, determinant = ctx.saved_tensors
        # d det(A) = tr(adj(A) dA): the gradient is the cofactor matrix det(A) A^-T
        inverse, info = LinalgInvEx.apply(a, False)
        if not np.any(info._data):
            scale = (grad_output * determinant).unsqueeze(-1).unsqueeze(-1)
            return scale * inverse.mT
        # a singular matrix has no inverse but still cofactors: with A = U S Vh they are
        # det(U) det(Vh) U diag(prod of the other singular values) Vh
        u, values, vh = LinalgSvd.apply(a, False, True)
        n = values.shape[-1]
        ones = _wrap(np.ones(tuple(values.shape[:-1]) + (1,), values._data.dtype))
        before = cumulative_ops.cumprod(
            joining_ops.cat([ones, shape_ops.narrow(values, -1, 0, n - 1)], -1), -1
        )
        after = cumulative_ops.cumprod(
            joining_ops.cat([ones, shape_ops.narrow(values, -1, 1, n - 1).flip(-1)], -1), -1
        ).flip(-1)
        others = before * after
        sign = LinalgDet.apply(u) * LinalgDet.apply(vh)
        scale = (grad_output * sign).unsqueeze(-1).unsqueeze(-1)
        # the transposed cofactors: conj(U) and conj(Vh) for complex A, adj(A) = V .. U^H
        u, vh = _conj_if_complex(u), _conj_if_complex(vh)
        return scale * matmul(u * others.unsqueeze(-2), vh)


def det(A: Tensor, *, out: Any = None) -> Tensor:
    """The determinant of each square matrix."""
    _refuse_out("det", out)
    _check_matrix("linalg.det", A, half="lu_cpu")
    return LinalgDet.apply(A)


def linalg_det(A: Tensor, *, out: Any = None) -> Tensor:
    """The determinant of each square matrix (lucid.linalg.det: PyTorch names its arguments
    apart from lucid.det's)."""
    _refuse_out("det", out)
    _check_matrix("linalg.det", A, half="lu_cpu")
    return LinalgDet.apply(A)


class LinalgSlogdet(Function):
    _backward_name = "LinalgSlogdetBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_slogdet"

    @staticmethod
    def forward(ctx, a):
        array = a._data
        with np.errstate(all="ignore"):
            sign, logabsdet = np.linalg.slogdet(array)
        sign = np.asarray(sign)
        logabsdet = np.asarray(logabsdet)
        # a NaN matrix has sign 0 and a NaN logarithm, as PyTorch reports it
        invalid = np.isnan(logabsdet) | np.isnan(sign)
        sign = np.where(invalid, 0.0, sign).astype(array.dtype)
        sign_tensor = _wrap(sign)
        if array.dtype.kind != "c":
            # a real sign is piecewise constant; a complex one, det / |det|, is not
            ctx.mark_non_differentiable(sign_tensor)
        ctx.save_for_backward(a, sign_tensor)
        # log|det| is real for complex matrices too
        return sign_tensor, _wrap(logabsdet.astype(np.finfo(array.dtype).dtype))

    @staticmethod
    def backward(ctx, grad_sign, grad_logabsdet):
        a, sign = ctx.saved_tensors
        # d log|det A| = Re tr(A^-1 dA), and for complex A the sign e^{i theta} adds
        # d theta = Im tr(A^-1 dA): gA = g A^-H with g = gL - i Im(conj(gS) sign)
        scale = grad_logabsdet
        if sign._data.dtype.kind == "c":
            scale = complex_numbers.complex(scale, -(grad_sign.conj() * sign).imag)
        return scale.unsqueeze(-1).unsqueeze(-1) * inv(a).mH


def slogdet(A: Tensor, *, out: Any = None) -> SlogdetResult:
    """(sign, log|det|) of each square matrix."""
    _refuse_out("slogdet", out)
    _check_matrix("linalg.slogdet", A)
    return SlogdetResult(*LinalgSlogdet.apply(A))


def linalg_slogdet(A: Tensor, *, out: Any = None) -> LinalgSlogdetResult:
    _refuse_out("linalg.slogdet", out)
    _check_matrix("linalg.slogdet", A)
    return LinalgSlogdetResult(*LinalgSlogdet.apply(A))


def logdet(input: Tensor) -> Tensor:
    """log det of each square matrix: NaN where the determinant is negative."""
    _check_matrix("logdet", input)
    sign, logabsdet = LinalgSlogdet.apply(input)
    if sign._data.dtype.kind == "c":
        # log det = log(sign) + log|det|: complex, and -inf where singular
        return pointwise_ops.log(sign) + logabsdet
    negative = pointwise_ops.lt(sign, 0.0)
    # log(-1): the NaN of a negative determinant is an invalid operation, which the sentinel
    # names as this op's birth (a NaN written as a constant would raise no flag).
    undefined = pointwise_ops.log(pointwise_ops.where(negative, sign, 1.0))
    return pointwise_ops.where(negative, undefined, logabsdet)


# ---------------------------------------------------------------------------- solve
def _is_vector_rhs(a: np.ndarray, b: np.ndarray) -> bool:
    """PyTorch's rule: B is a (batch of) vectors when it is 1-D or has one dim fewer than A and
    A's batch shape."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def _solve_array(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solutions of A X = B (B as matrices), broadcasting batches; NaN and info where singular."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    info = np.zeros(batch, _INT32)
    try:
        return np.linalg.solve(a, b), info
    except np.linalg.LinAlgError:
        info = _singular_info(a)
    singular = (info != 0)[..., None, None]
    result = np.linalg.solve(np.where(singular, _eye_like(a), a), b)
    return np.where(singular, np.nan, result), info


class LinalgSolveEx(Function):
    _backward_name = "LinalgSolveExBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_solve"

    @staticmethod
    def forward(ctx, a, b, left, is_vector, check_errors):
        x, y = a._data, b._data
        if not left:
            # X A = B is A^T X^T = B^T
            x = np.swapaxes(x, -1, -2)
            y = np.swapaxes(y, -1, -2)
        if is_vector:
            y = y[..., None]
        solution, info = _solve_array(x, y)
        if check_errors and np.any(info):
            raise LinAlgError(
                "lucid.linalg.solve: The solver failed because the input matrix is singular."
            )
        if is_vector:
            solution = solution[..., 0]
        elif not left:
            solution = np.swapaxes(solution, -1, -2)
        result = _wrap(solution)
        info_tensor = _wrap(info)
        ctx.mark_non_differentiable(info_tensor)
        ctx.left, ctx.is_vector = left, is_vector
        ctx.shape_b = b._data.shape
        ctx.save_for_backward(a, result)
        return result, info_tensor

    @staticmethod
    def backward(ctx, grad_output, grad_info):
        a, x = ctx.saved_tensors
        left, is_vector = ctx.left, ctx.is_vector
        # X = A^-1 B: gB = A^-T gX, gA = -gB X^T (and the mirror image for X A = B)
        grad_b = LinalgSolveEx.apply(a.mT, grad_output, left, is_vector, False)[0]
        grad_a = None
        if ctx.needs_input_grad[0]:
            if is_vector:
                grad_a = -(grad_b.unsqueeze(-1) * x.unsqueeze(-2))
            elif left:
                grad_a = -matmul(grad_b, x.mT)
            else:
                grad_a = -matmul(x.mT, grad_b)
            grad_a = sum_to(grad_a, a.shape)
        grad_b = sum_to(grad_b, ctx.shape_b) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None, None, None


def _solve_checks(A: Tensor, B: Tensor, left: bool) -> bool:
    """PyTorch's checks of linalg.solve's arguments; whether B is a (batch of) vectors."""
    a = _check_matrix("linalg.solve", A, half="lu_cpu")
    b = _array(B)
    _check_same_dtype("linalg.solve", a, b)
    is_vector = left and _is_vector_rhs(a, b)
    equation = "AX = B" if left else "XA = B"
    if is_vector:
        size = b.shape[-1]
    elif b.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    else:
        size = b.shape[-2] if left else b.shape[-1]
    if size != a.shape[-1]:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {equation} "
            f"({a.shape[-2]}x{a.shape[-1]} and {'x'.join(map(str, b.shape[-2:]))})"
        )
    batch_b = b.shape[:-1] if is_vector else b.shape[:-2]
    try:
        np.broadcast_shapes(a.shape[:-2], batch_b)
    except ValueError:
        raise broadcast_error(batch_b, a.shape[:-2]) from None
    return is_vector


@autocast_op
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> SolveExResult:  # fmt: skip
    """Solutions of A X = B (X A = B with left=False) and an info code per matrix."""
    _refuse_out("solve_ex", out)
    is_vector = _solve_checks(A, B, left)
    result, info = LinalgSolveEx.apply(A, B, bool(left), is_vector, bool(check_errors))
    return SolveExResult(result, info)


@autocast_op
def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Any = None) -> Tensor:
    """The solution X of A X = B (X A = B with left=False), batched and broadcast."""
    _refuse_out("solve", out)
    is_vector = _solve_checks(A, B, left)
    return LinalgSolveEx.apply(A, B, bool(left), is_vector, True)[0]


# ------------------------------------------------------------------ solve_triangular
def _triangle(array: np.ndarray, upper: bool, unitriangular: bool) -> np.ndarray:
    """The triangle a triangular solver reads (with ones on the diagonal if unitriangular)."""
    part = np.triu(array) if upper else np.tril(array)
    if unitriangular:
        part = part - np.triu(np.tril(part)) + np.eye(array.shape[-1], dtype=array.dtype)
    return part


def _substitute(triangle: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """Forward or back substitution, as trsm runs it: a zero on the diagonal gives inf/NaN
    instead of an error. One step per row, vectorised over the batch and the columns of B."""
    n = triangle.shape[-1]
    x = np.zeros(np.broadcast_shapes(triangle.shape[:-2], b.shape[:-2]) + b.shape[-2:], b.dtype)
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):
        for row in order:
            # the reference trsm skips a solved entry that is exactly zero: 0 * inf adds no NaN
            terms = triangle[..., row, :, None] * x
            known = np.where(x == 0, 0.0, terms).sum(axis=-2)
            x[..., row, :] = (b[..., row, :] - known) / triangle[..., row, row, None]
    return x


# Triangles larger than this are solved in diagonal blocks of this many rows.
_TRIANGULAR_BLOCK = 16


def _block_substitute(triangle: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray | None:
    """Substitution by blocks of _TRIANGULAR_BLOCK rows, as a blocked trsm runs it, for a
    finite triangle with no zero on its diagonal: the diagonal blocks are inverted (one LAPACK
    call for all of them, on the triangle's own batch, never on its broadcast copies) and every
    other step is a matrix product, so the cost is GEMMs instead of an LU of the whole triangle.
    None where a block's LU underflows to an exact zero pivot."""
    n = triangle.shape[-1]
    size = _TRIANGULAR_BLOCK
    starts = range(0, n, size)
    # a last, smaller block sits in the corner of an identity: its inverse is that corner
    blocks = np.zeros(triangle.shape[:-2] + (len(starts), size, size), triangle.dtype)
    blocks[...] = np.eye(size, dtype=triangle.dtype)
    for index, start in enumerate(starts):
        stop = min(start + size, n)
        blocks[..., index, : stop - start, : stop - start] = triangle[..., start:stop, start:stop]
    try:
        block_inverses = np.linalg.inv(blocks)
    except np.linalg.LinAlgError:
        return None
    batch = np.broadcast_shapes(triangle.shape[:-2], b.shape[:-2])
    # x starts as a C-ordered copy of B (B is often a transposed view) and is solved in place
    x = np.empty(batch + b.shape[-2:], np.result_type(triangle, b))
    x[...] = b
    for index in reversed(range(len(starts))) if upper else range(len(starts)):
        start = starts[index]
        stop = min(start + size, n)
        # subtract the rows already solved: those below the block for an upper triangle,
        # those above it for a lower one
        if upper and stop < n:
            x[..., start:stop, :] -= triangle[..., start:stop, stop:] @ x[..., stop:, :]
        elif not upper and start > 0:
            x[..., start:stop, :] -= triangle[..., start:stop, :start] @ x[..., :start, :]
        inverse = block_inverses[..., index, : stop - start, : stop - start]
        x[..., start:stop, :] = inverse @ x[..., start:stop, :]
    return x


def _solve_triangular_array(a: np.ndarray, b: np.ndarray, upper: bool, left: bool,
                            unitriangular: bool) -> np.ndarray:  # fmt: skip
    triangle = _triangle(a, upper, unitriangular)
    if not left:
        # X A = B is A^T X^T = B^T, with the other triangle
        triangle = np.swapaxes(triangle, -1, -2)
        b = np.swapaxes(b, -1, -2)
        upper = not upper
    n = triangle.shape[-1]
    batch = np.broadcast_shapes(triangle.shape[:-2], b.shape[:-2])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    # checked before broadcasting, so a shared triangle is read once
    is_regular = np.all(np.diagonal(triangle, 0, -2, -1) != 0) and np.all(np.isfinite(triangle))
    solution = None
    if is_regular and n <= _TRIANGULAR_BLOCK:
        try:
            solution = np.linalg.solve(np.broadcast_to(triangle, batch + triangle.shape[-2:]), b)
        except np.linalg.LinAlgError:
            pass  # the LU's pivoting underflowed to an exact zero: substitute instead
    elif is_regular and triangle.ndim == 2 and b.ndim > 2:
        # one triangle for a stack of B's: one solve with all their columns side by side
        columns = np.moveaxis(b, -2, 0).reshape(n, -1)
        solution = _block_substitute(triangle, columns, upper)
        if solution is not None:
            solution = np.moveaxis(solution.reshape((n,) + b.shape[:-2] + b.shape[-1:]), 0, -2)
    elif is_regular:
        solution = _block_substitute(triangle, b, upper)
    if solution is None:
        solution = _substitute(triangle, b, upper)
    return solution if left else np.swapaxes(solution, -1, -2)


class LinalgSolveTriangular(Function):
    _backward_name = "LinalgSolveTriangularBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_solve_triangular"

    @staticmethod
    def forward(ctx, a, b, upper, left, unitriangular):
        result = _wrap(_solve_triangular_array(a._data, b._data, upper, left, unitriangular))
        ctx.upper, ctx.left, ctx.unitriangular = upper, left, unitriangular
        ctx.shape_b = b._data.shape
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, x = ctx.saved_tensors
        upper, left, unitriangular = ctx.upper, ctx.left, ctx.unitriangular
        # as for solve, through A^T (the other triangle); A's gradient keeps A's triangle
        grad_b = LinalgSolveTriangular.apply(a.mT, grad_output, not upper, left, unitriangular)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = -matmul(grad_b, x.mT) if left else -matmul(x.mT, grad_b)
            offset = 1 if unitriangular else 0
            if upper:
                grad_a = matrices_ops.triu(grad_a, offset)
            else:
                grad_a = matrices_ops.tril(grad_a, -offset)
            grad_a = sum_to(grad_a, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(grad_b, ctx.shape_b)
        else:
            grad_b = None
        return grad_a, grad_b, None, None, None


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Any = None) -> Tensor:  # fmt: skip
    """The solution of A X = B (X A = B with left=False) for triangular A, read from the
    upper or lower triangle only."""
    _refuse_out("solve_triangular", out)
    name = "linalg.solve_triangular"
    a = _array(A)
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        # PyTorch's kernel refuses these dtypes before any shape check
        raise NotImplementedError(
            f"\"triangular_solve_cpu\" not implemented for '{dtype_name(a.dtype)}'"
        )
    _check_matrix(name, A)
    b = _array(B)
    if b.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _check_float(name, b)
    size = b.shape[-2] if left else b.shape[-1]
    if size != a.shape[-1]:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {equation} "
            f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})"
        )
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise broadcast_error(b.shape[:-2], a.shape[:-2]) from None
    if a.dtype != b.dtype:
        # PyTorch computes in the promoted dtype
        common = np.promote_types(a.dtype, b.dtype)
        A, B = to(A, common), to(B, common)
    return LinalgSolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))


# --------------------------------------------------------------------------- cholesky
def _cholesky_info(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky column by column, vectorised over the batch: (L, info) as potrf reports them.

    info is the order of the first leading minor that is not positive-definite. There, as
    potrf leaves it, L holds the finished columns, the failed pivot on the diagonal, and the
    input's lower triangle elsewhere.
    """
    n = array.shape[-1]
    batch = array.shape[:-2]
    flat = np.tril(array.reshape((-1, n, n)))
    lower = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], _INT32)
    failed_pivot = np.zeros(flat.shape[0], flat.real.dtype)
    with np.errstate(all="ignore"):
        for k in range(n):
            # a Hermitian matrix's pivots are real: |l_kj|^2 is l_kj conj(l_kj)
            row = lower[:, k, :k]
            pivot = (flat[:, k, k] - np.einsum("bj,bj->b", row, row.conj())).real
            failed = (info == 0) & ~(pivot > 0)
            info[failed] = k + 1
            failed_pivot[failed] = pivot[failed]
            active = info == 0
            root = np.sqrt(np.where(active, pivot, 1.0))
            lower[active, k, k] = root[active]
            below = flat[:, k + 1 :, k] - (lower[:, k + 1 :, :k] @ row[..., None].conj())[..., 0]
            lower[active, k + 1 :, k] = (below / root[:, None])[active]
    unfinished = np.flatnonzero(info)
    columns = np.arange(n)[None, :] >= (info[unfinished] - 1)[:, None]
    lower[unfinished] = np.where(columns[:, None, :], flat[unfinished], lower[unfinished])
    lower[unfinished, info[unfinished] - 1, info[unfinished] - 1] = failed_pivot[unfinished]
    return lower.reshape(batch + (n, n)), info.reshape(batch)


def _cholesky_array(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    info = np.zeros(array.shape[:-2], _INT32)
    if array.shape[-1] == 0:
        return array.copy(), info
    # LAPACK reads one triangle only: NumPy's reads the lower one, as lucid does
    if np.all(np.isfinite(np.tril(array))):
        try:
            return np.linalg.cholesky(array), info
        except np.linalg.LinAlgError:
            pass
    return _cholesky_info(array)


def _raise_not_positive_definite(name: str, info: np.ndarray) -> None:
    if np.any(info):
        prefix, code = _batch_prefix(info)
        raise LinAlgError(
            f"{name}: {prefix}The factorization could not be completed because the input is "
            f"not positive-definite (the leading minor of order {code} is not "
            "positive-definite)."
        )


def _cholesky_factor(ctx: Any, a: Tensor, upper: bool, check_errors: bool,
                     name: str) -> tuple[Tensor, np.ndarray]:  # fmt: skip
    array = a._data
    if upper:
        # potrf with uplo='U' reads the upper triangle: the lower one of A^H
        array = np.swapaxes(array, -1, -2)
        if array.dtype.kind == "c":
            array = array.conj()
    lower, info = _cholesky_array(array)
    if check_errors:
        _raise_not_positive_definite(name, info)
    if upper:
        # U = L^H
        lower = np.swapaxes(lower, -1, -2)
        lower = lower.conj() if lower.dtype.kind == "c" else lower.copy()
    result = _wrap(lower)
    ctx.upper = upper
    ctx.save_for_backward(result)
    return result, info


def _cholesky_backward(ctx: Any, grad_output: Tensor) -> Tensor:
    (factor,) = ctx.saved_tensors
    lower, grad_lower = factor, grad_output
    if ctx.upper:
        lower, grad_lower = factor.mH, grad_output.mH
    # A = L L^H: gA = L^-H Phi(L^H gL) L^-1, made Hermitian, Phi keeping the lower triangle
    # with half its diagonal (PyTorch's: the diagonal keeps its imaginary part)
    lower_h = lower.mH
    grad = matrices_ops.tril(matmul(lower_h, grad_lower))
    grad = 0.5 * (grad + matrices_ops.tril(grad, -1).mH)
    grad = LinalgSolveTriangular.apply(lower_h, grad, True, True, False)
    return LinalgSolveTriangular.apply(lower, grad, False, False, False)


class LinalgCholeskyEx(Function):
    _backward_name = "LinalgCholeskyExBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_cholesky"

    @staticmethod
    def forward(ctx, a, upper, check_errors, name):
        result, info = _cholesky_factor(ctx, a, upper, check_errors, name)
        info_tensor = _wrap(info)
        ctx.mark_non_differentiable(info_tensor)
        return result, info_tensor

    @staticmethod
    def backward(ctx, grad_output, grad_info):
        return _cholesky_backward(ctx, grad_output), None, None, None


class CholeskyLegacy(Function):
    _backward_name = "CholeskyBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "cholesky"

    @staticmethod
    def forward(ctx, a, upper):
        return _cholesky_factor(ctx, a, upper, True, "cholesky")[0]

    @staticmethod
    def backward(ctx, grad_output):
        return _cholesky_backward(ctx, grad_output), None


@autocast_op
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> CholeskyExResult:  # fmt: skip
    """The Cholesky factor of each matrix and an info code (nonzero where not positive-definite)."""
    _refuse_out("cholesky_ex", out)
    _check_matrix("linalg.cholesky", A, half="cholesky_cpu")
    factor, info = LinalgCholeskyEx.apply(A, bool(upper), bool(check_errors), "linalg.cholesky")
    return CholeskyExResult(factor, info)


@autocast_op
def linalg_cholesky(A: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:
    _refuse_out("linalg.cholesky", out)
    _check_matrix("linalg.cholesky", A, half="cholesky_cpu")
    return LinalgCholeskyEx.apply(A, bool(upper), True, "linalg.cholesky")[0]


@autocast_op
def cholesky(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The Cholesky factor L (L^T with upper=True) of each symmetric positive-definite matrix;
    deprecated in favour of lucid.linalg.cholesky, as in PyTorch."""
    _refuse_out("cholesky", out)
    check_bool(upper, "cholesky", "upper", 2)
    warnings.warn(
        "lucid.cholesky is deprecated in favor of lucid.linalg.cholesky and will be removed in "
        "a future release.",
        UserWarning,
        stacklevel=2,
    )
    _check_matrix("cholesky", input, half="cholesky_cpu")
    return CholeskyLegacy.apply(input, bool(upper))


class CholeskySolve(Function):
    _backward_name = "CholeskySolveBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, b, factor, upper):
        lower = factor._data
        if upper:
            lower = np.swapaxes(lower, -1, -2).conj()
        lower = np.tril(lower)
        # A = L L^H, so A^-1 B = L^-H (L^-1 B)
        inner = _solve_triangular_array(lower, b._data, False, True, False)
        upper_factor = np.swapaxes(lower, -1, -2).conj()
        result = _wrap(_solve_triangular_array(upper_factor, inner, True, True, False))
        ctx.upper = upper
        ctx.save_for_backward(factor, result)
        ctx.shape_b = b._data.shape
        return result

    @staticmethod
    def backward(ctx, grad_output):
        factor, x = ctx.saved_tensors
        grad_b = CholeskySolve.apply(grad_output, factor, ctx.upper)
        grad_factor = None
        if ctx.needs_input_grad[1]:
            # dX = -A^-1 dA X with dA = dL L^H + L dL^H
            common = matmul(grad_b, x.mH)
            common = common + common.mH
            if ctx.upper:
                grad_factor = -matmul(factor, common)
            else:
                grad_factor = -matmul(common, factor)
            grad_factor = sum_to(grad_factor, factor.shape)
        return sum_to(grad_b, ctx.shape_b), grad_factor, None


@autocast_op
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *,
                   out: Any = None) -> Tensor:  # fmt: skip
    """The solution of A X = B given B (input) and A's Cholesky factor (input2)."""
    _refuse_out("cholesky_solve", out)
    b = _array(input)
    factor = _array(input2)
    if b.ndim < 2 or factor.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {b.ndim} dimensions instead"
            if b.ndim < 2
            else f"u should have at least 2 dimensions, but has {factor.ndim} dimensions instead"
        )
    if b.dtype != factor.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{dtype_name(b.dtype)} and A of type {dtype_name(factor.dtype)} instead."
        )
    _check_float("cholesky_solve", b, "cholesky_solve_cpu")
    if factor.shape[-1] != factor.shape[-2]:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {factor.shape[-2]} by "
            f"{factor.shape[-1]} matrices"
        )
    if b.shape[-2] != factor.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
            f"{factor.shape[-1]} by {factor.shape[-1]} but each b matrix is {b.shape[-2]} by "
            f"{b.shape[-1]}"
        )
    return CholeskySolve.apply(input, input2, bool(upper))


class CholeskyInverse(Function):
    _backward_name = "CholeskyInverseBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, factor, upper):
        array = factor._data
        lower = np.tril(np.swapaxes(array, -1, -2).conj() if upper else array)
        inverse_lower = _solve_triangular_array(lower, _eye_like(lower), False, True, False)
        if inverse_lower.dtype.kind == "c":
            # LAPACK's lauum reads the real part of the diagonal only (a Cholesky factor's
            # is real), as PyTorch's result does for any factor
            diagonal = np.diagonal(inverse_lower, 0, -2, -1)
            inverse_lower = inverse_lower - _diag_array(1j * diagonal.imag)
        # (L L^H)^-1 = L^-H L^-1
        result = np.swapaxes(inverse_lower, -1, -2).conj() @ inverse_lower
        if result.dtype.kind == "c" and result.shape[-1]:
            # and lauum's last step scales the last row by that real part, itself included
            result[..., -1, -1] += diagonal[..., -1].real * 1j * diagonal[..., -1].imag
        result = _wrap(result)
        ctx.upper = upper
        ctx.save_for_backward(factor, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        factor, inverse = ctx.saved_tensors
        common = grad_output + grad_output.mH
        common = matmul(inverse, matmul(common, inverse))
        if ctx.upper:
            return -matmul(factor, common), None
        return -matmul(common, factor), None


@autocast_op
def cholesky_inverse(input: Tensor, upper: bool = False, *, out: Any = None) -> Tensor:
    """The inverse of A = L L^T (U^T U with upper=True) from its Cholesky factor."""
    _refuse_out("cholesky_inverse", out)
    check_bool(upper, "cholesky_inverse", "upper", 2)
    array = _array(input)
    if array.ndim < 2:
        raise RuntimeError(
            "cholesky_inverse: The input tensor input must have at least 2 dimensions."
        )
    if array.shape[-1] != array.shape[-2]:
        raise RuntimeError(
            f"cholesky_inverse: A must be batches of square matrices, but they are "
            f"{array.shape[-2]} by {array.shape[-1]} matrices"
        )
    _check_float("cholesky_inverse", array, "cholesky_inverse_out_cpu")
    zero = np.diagonal(array, 0, -2, -1) == 0
    if np.any(zero):
        # the first zero on each factor's diagonal, 1-based, as potri reports it
        info = np.where(np.any(zero, axis=-1), np.argmax(zero, axis=-1) + 1, 0)
        prefix, code = _batch_prefix(info)
        raise LinAlgError(
            f"cholesky_inverse: {prefix}The diagonal element {code} is zero, the inversion could "
            "not be completed because the input matrix is singular."
        )
    return CholeskyInverse.apply(input, bool(upper))


# -------------------------------------------------------------------------------- qr
class LinalgQr(Function):
    _backward_name = "LinalgQrBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_qr"

    @staticmethod
    def forward(ctx, a, mode):
        array = a._data
        if mode == "r":
            r = (
                np.linalg.qr(array, mode="r")
                if array.size
                else np.zeros(
                    array.shape[:-2] + (min(array.shape[-2:]), array.shape[-1]), array.dtype
                )
            )
            q = np.zeros((0,), array.dtype)
        elif array.size:
            q, r = np.linalg.qr(array, mode=mode)
        else:
            m, n = array.shape[-2:]
            columns = m if mode == "complete" else min(m, n)
            q = np.zeros(array.shape[:-2] + (m, columns), array.dtype)
            r = np.zeros(array.shape[:-2] + (columns, n), array.dtype)
        q_tensor, r_tensor = _wrap(np.ascontiguousarray(q)), _wrap(np.ascontiguousarray(r))
        ctx.mode = mode
        ctx.save_for_backward(a, q_tensor, r_tensor)
        return q_tensor, r_tensor

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        a, q, r = ctx.saved_tensors
        m, n = a.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when "
                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr."
            )
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )
        if m >= n:
            return _qr_backward_tall(q, r, grad_q, grad_r), None
        # A = [X | Y] with X = Q U square: Y = Q V adds Q^T-projected terms to X's gradient
        u = shape_ops.narrow(r, -1, 0, m)
        y = shape_ops.narrow(a, -1, m, n - m)
        grad_u = shape_ops.narrow(grad_r, -1, 0, m)
        grad_v = shape_ops.narrow(grad_r, -1, m, n - m)
        grad_x = _qr_backward_tall(q, u, grad_q + matmul(y, grad_v.mH), grad_u)
        return joining_ops.cat([grad_x, matmul(q, grad_v)], -1), None


def _qr_backward_tall(q: Tensor, r: Tensor, grad_q: Tensor, grad_r: Tensor) -> Tensor:
    """gA = (gQ + Q copyltu(M)) R^-H with M = R gR^H - gQ^H Q, for A = QR with m >= n;
    copyltu(M) is the Hermitian matrix with M's lower triangle (the real part of its
    diagonal)."""
    product = matmul(r, grad_r.mH) - matmul(grad_q.mH, q)
    lower = matrices_ops.tril(product, -1)
    diagonal = _matrix_diagonal(product)
    if diagonal._data.dtype.kind == "c":
        diagonal = diagonal.real
    hermitian = lower + lower.mH + _diag_embed(diagonal)
    right = grad_q + matmul(q, hermitian)
    # B R^-H is the solution X of X R^H = B, R^H lower triangular
    return LinalgSolveTriangular.apply(r.mH, right, False, False, False)


_QR_MODES = ("reduced", "complete", "r")


def _qr_checks(A: Tensor, mode: str) -> None:
    _check_matrix("linalg.qr", A, square=False, half="geqrf_cpu")
    if mode not in _QR_MODES:
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )


@autocast_op
def linalg_qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> LinalgQrResult:
    _refuse_out("linalg.qr", out)
    _qr_checks(A, mode)
    return LinalgQrResult(*LinalgQr.apply(A, mode))


@autocast_op
def qr(input: Tensor, some: bool = True, *, out: Any = None) -> QrResult:
    """Q and R of each matrix (reduced unless some=False); deprecated in favour of
    lucid.linalg.qr, as in PyTorch."""
    _refuse_out("qr", out)
    check_bool(some, "qr", "some", 2)
    warnings.warn(
        "lucid.qr is deprecated in favor of lucid.linalg.qr and will be removed in a future "
        "release. The boolean parameter 'some' has been replaced with a string parameter "
        "'mode'.",
        UserWarning,
        stacklevel=2,
    )
    mode = "reduced" if some else "complete"
    _qr_checks(input, mode)
    return QrResult(*LinalgQr.apply(input, mode))


# ------------------------------------------------------------------------------ eigh
def _check_uplo(UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def _check_eigh_input(A: Tensor) -> np.ndarray:
    array = _array(A)
    if (array.ndim >= 2 and array.dtype.kind not in INEXACT_KINDS) or array.dtype.itemsize == 2:
        raise NotImplementedError(
            f"\"linalg_eigh_cpu\" not implemented for '{dtype_name(array.dtype)}'"
        )
    return _check_matrix("linalg.eigh", A)


class LinalgEigh(Function):
    _backward_name = "LinalgEighBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_eigh"

    @staticmethod
    def forward(ctx, a, UPLO, compute_vectors):
        array = a._data
        triangle = np.tril(array) if UPLO == "L" else np.triu(array)
        if not np.all(np.isfinite(triangle)):
            raise LinAlgError(
                "linalg.eigh: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues."
            )
        if compute_vectors or ctx.needs_input_grad[0]:
            values, vectors = np.linalg.eigh(array, UPLO)
        else:
            values, vectors = np.linalg.eigvalsh(array, UPLO), None
        values_tensor = _wrap(values)
        ctx.set_materialize_grads(False)
        if vectors is None:
            return values_tensor
        vectors_tensor = _wrap(vectors)
        ctx.uplo = UPLO
        ctx.save_for_backward(values_tensor, vectors_tensor, None if compute_vectors else a)
        if compute_vectors:
            return values_tensor, vectors_tensor
        return values_tensor

    @staticmethod
    def backward(ctx, grad_values, grad_vectors=None):
        values, vectors, a = ctx.saved_tensors
        if a is not None and is_grad_enabled():
            # a graph of the gradient needs V as a function of A, not as a constant
            values, vectors = LinalgEigh.apply(a, ctx.uplo, True)
        vectors_h = vectors.mH
        if grad_vectors is None:
            # eigenvalues only: gA = V diag(gL) V^H
            return matmul(vectors * grad_values.unsqueeze(-2), vectors_h), None, None
        # gA = V (skew(V^H gV) / E + diag(gL)) V^H with E_ij = L_j - L_i (1 on the diagonal);
        # only the skew part of V^H gV is seen by losses invariant to the eigenvectors' signs
        # (phases, for complex matrices)
        projected = matmul(vectors_h, grad_vectors)
        is_complex = projected._data.dtype.kind == "c"
        if is_complex:
            _check_gauge_invariance("linalg_eigh_backward", _matrix_diagonal(projected))
        projected = 0.5 * (projected - projected.mH)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
        gaps = gaps + _wrap(np.eye(values.shape[-1], dtype=values._data.dtype))
        inner = projected / gaps
        if grad_values is not None:
            if is_complex:
                # the skew-Hermitian diagonal is imaginary: gL replaces it, as in PyTorch
                inner = inner - _diag_embed(_matrix_diagonal(inner))
            inner = inner + _diag_embed(grad_values)
        return matmul(vectors, matmul(inner, vectors_h)), None, None


@autocast_op
def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors of each symmetric matrix, read from
    its lower (UPLO='L') or upper triangle."""
    _refuse_out("eigh", out)
    _check_eigh_input(A)
    _check_uplo(UPLO)
    return EighResult(*LinalgEigh.apply(A, UPLO, True))


@autocast_op
def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """Eigenvalues (ascending) of each symmetric matrix."""
    _refuse_out("eigvalsh", out)
    _check_eigh_input(A)
    _check_uplo(UPLO)
    return LinalgEigh.apply(A, UPLO, False)


def _check_general_eigen_input(name: str, A: Tensor) -> None:
    """The errors PyTorch's eig gives before it computes: the matrix shape, then the dtype of
    its complex twin."""
    array = _array(A)
    if array.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if array.shape[-1] != array.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {array.shape[-2]} by "
            f"{array.shape[-1]} matrices"
        )
    if array.dtype.kind not in INEXACT_KINDS:
        raise RuntimeError(f"Unknown Complex ScalarType for {dtype_name(array.dtype)}")
    if array.dtype.itemsize == 2:
        raise NotImplementedError(
            f"\"linalg_eig_out_cpu\" not implemented for '{dtype_name(array.dtype)}'"
        )


_EIG_NOT_FINITE = "lucid.linalg.eig: input tensor should not contain infs or NaNs."


def _check_gauge_invariance(name: str, projected_diagonal: Tensor) -> None:
    """PyTorch's check that a loss does not depend on the phases of complex eigenvectors:
    with V -> V e^{i phi} the loss changes by Im(diag(V^H gV)) . phi, which must vanish."""
    if projected_diagonal._data.dtype.kind != "c":
        return
    if not np.allclose(projected_diagonal._data.imag, 0.0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(
            f"{name}: The eigenvectors in the complex case are specified up to multiplication "
            "by e^{i phi}. The specified loss function depends on this quantity, so it is "
            "ill-defined."
        )


class LinalgEig(Function):
    _backward_name = "LinalgEigBackward0"
    _op_name = "linalg_eig"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, a, compute_vectors):
        array = a._data
        # the results are complex whatever the input: float32 gives complex64
        complex_dtype = np.result_type(array.dtype, np.complex64)
        finite = np.all(np.isfinite(array), axis=(-2, -1))
        ctx.set_materialize_grads(False)
        if not compute_vectors and not ctx.needs_input_grad[0]:
            # eigvals checks nothing: a non-finite matrix has NaN eigenvalues, as in PyTorch
            safe = np.where(finite[..., None, None], array, 0.0)
            values = np.linalg.eigvals(safe).astype(complex_dtype)
            values[~finite] = np.nan * (1 + 1j)
            return _wrap(values)
        if not np.all(finite):
            raise RuntimeError(_EIG_NOT_FINITE)
        values, vectors = np.linalg.eig(array)
        # LAPACK's geev, as PyTorch's: each eigenvector has norm 1
        values_tensor = _wrap(values.astype(complex_dtype))
        vectors_tensor = _wrap(vectors.astype(complex_dtype))
        ctx.save_for_backward(values_tensor, vectors_tensor, None if compute_vectors else a)
        if compute_vectors:
            return values_tensor, vectors_tensor
        return values_tensor

    @staticmethod
    def backward(ctx, grad_values, grad_vectors=None):
        values, vectors, a = ctx.saved_tensors
        if a is not None and is_grad_enabled():
            # a graph of the gradient needs V as a function of A, not as a constant
            values, vectors = LinalgEig.apply(a, True)
        vectors_h = vectors.mH
        if grad_vectors is None:
            if grad_values is None:
                return None, None
            # eigenvalues only: A = V L V^-1 gives gA = V^-H diag(gL) V^H
            right = grad_values.unsqueeze(-1) * vectors_h
            return LinalgSolveEx.apply(vectors_h, right, True, False, False)[0], None
        projected = matmul(vectors_h, grad_vectors)
        diagonal = _matrix_diagonal(projected)
        _check_gauge_invariance("linalg_eig_backward", diagonal)
        # project onto the tangent space of matrices whose columns have norm 1
        projected = projected - matmul(vectors_h, vectors * diagonal.real.unsqueeze(-2))
        conj_values = values.conj()
        gaps = conj_values.unsqueeze(-2) - conj_values.unsqueeze(-1)
        gaps = gaps + _wrap(np.eye(values.shape[-1], dtype=values._data.dtype))
        inner = projected / gaps
        if grad_values is not None:
            inner = inner - _diag_embed(_matrix_diagonal(inner)) + _diag_embed(grad_values)
        # gA = V^-H inner V^H
        right = matmul(inner, vectors_h)
        return LinalgSolveEx.apply(vectors_h, right, True, False, False)[0], None


@autocast_op
def eig(A: Tensor, *, out: Any = None) -> EigResult:
    """Eigenvalues and eigenvectors (each of norm 1) of each square matrix, complex for real
    input too; gradients need losses that do not depend on the eigenvectors' phases."""
    _refuse_out("eig", out)
    _check_general_eigen_input("linalg.eig", A)
    return EigResult(*LinalgEig.apply(A, True))


@autocast_op
def eigvals(A: Tensor, *, out: Any = None) -> Tensor:
    """The (complex) eigenvalues of each square matrix."""
    _refuse_out("eigvals", out)
    _check_general_eigen_input("linalg.eigvals", A)
    return LinalgEig.apply(A, False)


# ------------------------------------------------------------------------------- svd
def _svd_array(array: np.ndarray, full_matrices: bool, compute_uv: bool) -> Any:
    m, n = array.shape[-2:]
    if np.any(np.isnan(array)):
        raise LinAlgError(
            "linalg.svd: The algorithm failed to converge because the input matrix contained "
            "non-finite values."
        )
    k = min(m, n)
    batch = array.shape[:-2]
    infinite = np.any(np.isinf(array), axis=(-2, -1))
    safe = np.where(infinite[..., None, None], 0.0, array).astype(array.dtype)
    if array.size == 0:
        rows, columns = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, rows, dtype=array.dtype), batch + (m, rows)).copy()
        vh = np.broadcast_to(np.eye(columns, n, dtype=array.dtype), batch + (columns, n)).copy()
        s = np.zeros(batch + (k,), array.dtype)
        return (u, s, vh) if compute_uv else s
    if not compute_uv:
        s = np.linalg.svd(safe, compute_uv=False)
        s[infinite] = np.nan
        return s
    u, s, vh = np.linalg.svd(safe, full_matrices=full_matrices)
    # an infinite entry leaves nothing finite to decompose: PyTorch reports NaN
    s[infinite] = np.nan
    u[infinite] = np.nan
    vh[infinite] = np.nan
    return u, s, vh


class LinalgSvd(Function):
    _backward_name = "LinalgSvdBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_svd"

    @staticmethod
    def forward(ctx, a, full_matrices, compute_uv):
        array = a._data
        ctx.set_materialize_grads(False)
        if not compute_uv and not ctx.needs_input_grad[0]:
            return _wrap(_svd_array(array, False, False))
        u, s, vh = _svd_array(array, full_matrices, True)
        u_tensor, s_tensor, vh_tensor = _wrap(u), _wrap(s), _wrap(vh)
        ctx.full_matrices = full_matrices
        ctx.compute_uv = compute_uv
        ctx.save_for_backward(u_tensor, s_tensor, vh_tensor, None if compute_uv else a)
        if compute_uv:
            return u_tensor, s_tensor, vh_tensor
        return s_tensor

    @staticmethod
    def backward(ctx, *grad_outputs):
        u, s, vh, a = ctx.saved_tensors
        if ctx.compute_uv:
            grad_u, grad_s, grad_vh = grad_outputs
        else:
            grad_u, grad_s, grad_vh = None, grad_outputs[0], None
            if is_grad_enabled():
                # a graph of the gradient needs U and Vh as functions of A, not as constants
                u, s, vh = LinalgSvd.apply(a, False, True)
        return _svd_backward(ctx, u, s, vh, grad_u, grad_s, grad_vh), None, None


def _svd_backward(ctx: Any, u: Tensor, s: Tensor, vh: Tensor, grad_u: Any, grad_s: Any,
                  grad_vh: Any) -> Tensor | None:  # fmt: skip
    """The gradient of A = U diag(S) Vh, for losses that do not depend on the signs of the
    singular vectors; repeated singular values make it infinite or NaN, as in PyTorch."""
    if grad_u is None and grad_s is None and grad_vh is None:
        return None
    m, n = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    if ctx.full_matrices:
        # the columns past min(m, n) are arbitrary: they take no gradient
        u = shape_ops.narrow(u, -1, 0, k)
        vh = shape_ops.narrow(vh, -2, 0, k)
        if grad_u is not None:
            grad_u = shape_ops.narrow(grad_u, -1, 0, k)
        if grad_vh is not None:
            grad_vh = shape_ops.narrow(grad_vh, -2, 0, k)
    if grad_u is None and grad_vh is None:
        # singular values only: gA = U diag(gS) Vh
        return matmul(u * grad_s.unsqueeze(-2), vh)
    s_row, s_column = s.unsqueeze(-2), s.unsqueeze(-1)
    squares = s * s
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1)
    gaps = gaps + _wrap(np.eye(k, dtype=s._data.dtype))
    is_complex = u._data.dtype.kind == "c"
    if grad_u is not None:
        projected_u = matmul(u.mH, grad_u)
        skew_u = projected_u - projected_u.mH
    if grad_vh is not None:
        projected_v = matmul(vh, grad_vh.mH)
        skew_v = projected_v - projected_v.mH
    if is_complex:
        _check_svd_gauge_invariance(
            skew_u if grad_u is not None else None, skew_v if grad_vh is not None else None
        )
    if grad_u is not None and grad_vh is not None:
        grad = (skew_u * s_row + s_column * skew_v) / gaps
    elif grad_u is not None:
        grad = (skew_u / gaps) * s_row
    else:
        grad = s_column * (skew_v / gaps)
    if grad_s is not None:
        grad = grad + _diag_embed(grad_s)
    if is_complex and grad_u is not None:
        # the phases of U and V move together: diag(U^H gU) / (2 S) is their share
        grad = grad + _diag_embed(_matrix_diagonal(skew_u) / (2.0 * s))
    if m > n and grad_u is not None:
        # the part of gU outside U's column space: (I - U U^H) gU S^-1
        grad = matmul(u, grad)
        scaled = grad_u / s_row
        grad = grad + scaled - matmul(u, matmul(u.mH, scaled))
        return matmul(grad, vh)
    if m < n and grad_vh is not None:
        grad = matmul(grad, vh)
        scaled = grad_vh / s_column
        grad = grad + scaled - matmul(matmul(scaled, vh.mH), vh)
        return matmul(u, grad)
    return matmul(u, matmul(grad, vh))


def _check_svd_gauge_invariance(skew_u: Tensor | None, skew_v: Tensor | None) -> None:
    """PyTorch's check that a loss does not depend on the phases of complex singular vectors:
    U -> U e^{i phi}, V -> V e^{i phi} leaves A unchanged, so Im diag(U^H gU) must cancel
    Im diag(V^H gV)."""
    imag_u = imag_v = 0.0
    if skew_u is not None:
        imag_u = np.diagonal(skew_u._data, 0, -2, -1).imag
    if skew_v is not None:
        imag_v = np.diagonal(skew_v._data, 0, -2, -1).imag
    if not np.allclose(imag_u, -imag_v, rtol=1e-2, atol=1e-2):
        raise RuntimeError(
            "svd_backward: The singular vectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this phase "
            "term, making it ill-defined."
        )


def _check_svd_input(A: Tensor) -> None:
    _check_matrix("linalg.svd", A, square=False, half="linalg_svd_cpu")


@autocast_op
def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None,
                out: Any = None) -> LinalgSvdResult:  # fmt: skip
    _refuse_out("linalg.svd", out)
    _check_svd_input(A)
    return LinalgSvdResult(*LinalgSvd.apply(A, bool(full_matrices), True))


@autocast_op
def svdvals(A: Tensor, *, driver: Any = None, out: Any = None) -> Tensor:
    """The singular values of each matrix, in descending order."""
    _refuse_out("svdvals", out)
    _check_svd_input(A)
    return LinalgSvd.apply(A, False, False)


@autocast_op
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *,
        out: Any = None) -> SvdResult:  # fmt: skip
    """(U, S, V) with A = U diag(S) V^T (V, not Vh as lucid.linalg.svd returns); reduced
    unless some=False. Without compute_uv, U and V are zeros."""
    _refuse_out("svd", out)
    check_bool(some, "svd", "some", 2)
    check_bool(compute_uv, "svd", "compute_uv", 3)
    _check_svd_input(input)
    if not compute_uv:
        array = input._data
        m, n = array.shape[-2:]
        values = LinalgSvd.apply(input, False, False)
        u = _wrap(np.zeros(array.shape[:-2] + (m, m), array.dtype))
        v = _wrap(np.zeros(array.shape[:-2] + (n, n), array.dtype))
        return SvdResult(u, values, v)
    u, values, vh = LinalgSvd.apply(input, not some, True)
    return SvdResult(u, values, vh.mH)


# ------------------------------------------------------------------------------ pinv
def _tolerance_array(value: Any, dtype: np.dtype) -> np.ndarray | None:
    if value is None:
        return None
    if isinstance(value, TensorBase):
        return value._data.astype(dtype)
    return np.asarray(value, dtype)


def _cutoff(singular_values: np.ndarray, atol: Any, rtol: Any, default_rtol: float) -> Any:
    """max(atol, rtol * largest singular value), with PyTorch's defaults: rtol is eps * max(m, n)
    unless only a positive atol is given, and then 0."""
    dtype = singular_values.dtype
    atol_array = _tolerance_array(atol, dtype)
    rtol_array = _tolerance_array(rtol, dtype)
    if rtol_array is None:
        use_default = atol_array is None or not np.all(atol_array > 0)
        rtol_array = np.asarray(default_rtol if use_default else 0.0, dtype)
    if atol_array is None:
        atol_array = np.asarray(0.0, dtype)
    largest = np.max(singular_values, axis=-1, initial=0.0)
    return np.maximum(atol_array, rtol_array * largest)[..., None]


class LinalgPinv(Function):
    _backward_name = "LinalgPinvBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_pinv"

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        array = a._data
        m, n = array.shape[-2:]
        default_rtol = float(np.finfo(array.dtype).eps) * max(m, n)
        if hermitian:
            triangle = np.tril(array)
            if not np.all(np.isfinite(triangle)):
                raise LinAlgError(
                    "linalg.eigh: The algorithm failed to converge because the input matrix is "
                    "ill-conditioned or has too many repeated eigenvalues."
                )
            values, vectors = np.linalg.eigh(array)
            magnitudes = np.abs(values)
            kept = magnitudes > _cutoff(magnitudes, atol, rtol, default_rtol)
            with np.errstate(divide="ignore"):
                inverted = np.where(kept, 1.0 / np.where(kept, values, 1.0), 0.0)
            result = (vectors * inverted[..., None, :].astype(array.dtype)) @ np.swapaxes(
                vectors, -1, -2
            ).conj()
        else:
            u, values, vh = _svd_array(array, False, True)
            kept = values > _cutoff(values, atol, rtol, default_rtol)
            inverted = np.where(kept, 1.0 / np.where(kept, values, 1.0), 0.0)
            # A+ = V diag(1 / S) U^H
            result = (
                np.swapaxes(vh, -1, -2).conj() * inverted[..., None, :].astype(array.dtype)
            ) @ np.swapaxes(u, -1, -2).conj()
            result[np.any(np.isnan(values), axis=-1)] = np.nan
        result = _wrap(result.astype(array.dtype))
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, pinv_a = ctx.saved_tensors
        return _pinv_backward(grad_output, pinv_a, a), None, None, None


def _pinv_backward(grad: Tensor, pinv_a: Tensor, a: Tensor) -> Tensor:
    """The gradient of A+ (Golub and Pereyra's derivative of the pseudo-inverse, for A of
    locally constant rank), arranged to multiply the smallest matrices."""
    m, n = a.shape[-2:]
    pinv_t = pinv_a.mH
    grad_t = grad.mH
    if m <= n:
        k = matmul(grad_t, pinv_a)
        k_pinv_t = matmul(k, pinv_t)
        return (
            -matmul(pinv_a, k).mH
            + k_pinv_t
            - matmul(matmul(a, pinv_a), k_pinv_t)
            + matmul(matmul(pinv_t, pinv_a), grad_t - matmul(k, a))
        )
    k = matmul(pinv_a, grad_t)
    pinv_t_k = matmul(pinv_t, k)
    return (
        -matmul(k, pinv_a).mH
        + matmul(matmul(grad_t - matmul(a, k), pinv_a), pinv_t)
        + pinv_t_k
        - matmul(matmul(pinv_t_k, pinv_a), a)
    )


def _check_pinv_input(A: Tensor) -> None:
    array = _array(A)
    if array.ndim < 2 or array.dtype.kind not in INEXACT_KINDS or array.dtype.itemsize == 2:
        shape = ", ".join(map(str, array.shape))
        raise RuntimeError(
            f"linalg.pinv({dtype_name(array.dtype)}{{[{shape}]}}): expected a tensor with 2 or "
            "more dimensions of float, double, cfloat or cdouble types"
        )


@autocast_op
def pinv(A: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
         rtol: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """The Moore-Penrose pseudo-inverse of each matrix: singular values at or below
    max(atol, rtol * largest) count as zero (rcond is rtol's older name)."""
    _refuse_out("pinv", out)
    _check_pinv_input(A)
    if rcond is not None:
        rtol = rcond
    return LinalgPinv.apply(A, atol, rtol, bool(hermitian))


@autocast_op
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, singular values below rcond * largest counting as zero."""
    check_number(rcond, "pinverse", "rcond", 2, "float")
    _check_pinv_input(input)
    return LinalgPinv.apply(input, None, rcond, False)


# ------------------------------------------------------------------------------ lstsq
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


class LinalgLstsq(Function):
    _backward_name = "LinalgLstsqBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_lstsq"

    @staticmethod
    def forward(ctx, a, b, rcond, driver, is_vector):
        x, y = a._data, b._data
        if is_vector:
            y = y[..., None]
        m, n = x.shape[-2:]
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        x = np.broadcast_to(x, batch + x.shape[-2:])
        y = np.broadcast_to(y, batch + y.shape[-2:])
        if rcond is None:
            rcond = float(np.finfo(x.dtype).eps) * max(m, n)
        u, values, vh = _svd_array(x, False, True)
        kept = values > rcond * np.max(values, axis=-1, initial=0.0)[..., None]
        inverted = np.where(kept, 1.0 / np.where(kept, values, 1.0), 0.0).astype(x.dtype)
        # X = V diag(1 / S) U^H B
        vh_h, u_h = np.swapaxes(vh, -1, -2).conj(), np.swapaxes(u, -1, -2).conj()
        solution = vh_h @ (inverted[..., :, None] * (u_h @ y))
        rank = np.sum(kept, axis=-1).astype(_INT64)
        empty = np.zeros((0,), x.dtype)
        residuals = empty
        full_rank = bool(np.all(rank == n))
        if m > n and (driver == "gels" or (driver != "gelsy" and full_rank)):
            difference = x @ solution - y
            if difference.dtype.kind == "c":
                difference = np.abs(difference)
            residuals = np.sum(difference**2, axis=-2)
            if is_vector:
                residuals = residuals[..., 0]
        if is_vector:
            solution = solution[..., 0]
        singular_values = values if driver in ("gelsd", "gelss") else empty
        rank_result = np.zeros((0,), _INT64) if driver == "gels" else rank
        result = _wrap(solution)
        outputs = (_wrap(residuals), _wrap(rank_result), _wrap(singular_values))
        ctx.mark_non_differentiable(*outputs[1:])
        ctx.is_vector = is_vector
        ctx.save_for_backward(a, b, result)
        ctx.set_materialize_grads(False)
        return (result, *outputs)

    @staticmethod
    def backward(ctx, grad_solution, grad_residuals, grad_rank, grad_singular_values):
        a, b, solution = ctx.saved_tensors
        is_vector = ctx.is_vector
        matrix_b = b.unsqueeze(-1) if is_vector else b
        matrix_x = solution.unsqueeze(-1) if is_vector else solution
        grad_a = grad_b = None
        if grad_solution is not None:
            # the solution is A+ B: differentiate the pseudo-inverse
            grad = grad_solution.unsqueeze(-1) if is_vector else grad_solution
            pinv_a = pinv(a)
            if ctx.needs_input_grad[0]:
                grad_a = _pinv_backward(matmul(grad, matrix_b.mH), pinv_a, a)
            if ctx.needs_input_grad[1]:
                grad_b = matmul(pinv_a.mH, grad)
        if grad_residuals is not None and grad_residuals.numel():
            # at the minimiser X, d||A X - B||^2 = 2 <A X - B, dA X - dB> (X's own change
            # does not count: the gradient in X is zero there)
            weights = grad_residuals.unsqueeze(-1) if is_vector else grad_residuals
            scaled = 2.0 * (matmul(a, matrix_x) - matrix_b) * weights.unsqueeze(-2)
            grad_a = matmul(scaled, matrix_x.mH) + (0.0 if grad_a is None else grad_a)
            grad_b = -scaled + (0.0 if grad_b is None else grad_b)
        if grad_a is not None and ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_a, a.shape)
        else:
            grad_a = None
        if grad_b is not None and ctx.needs_input_grad[1]:
            grad_b = sum_to(grad_b.squeeze(-1) if is_vector else grad_b, b.shape)
        else:
            grad_b = None
        return grad_a, grad_b, None, None, None


@autocast_op
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None,
          out: Any = None) -> LstsqResult:  # fmt: skip
    """The least-squares solution of A X = B, with the residuals, rank and singular values the
    driver reports (lucid solves through the SVD for every driver)."""
    _refuse_out("lstsq", out)
    name = "lucid.linalg.lstsq"
    a, b = _array(A), _array(B)
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(
            f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{name}: Expected input and other to have the same dtype, but got input's dtype "
            f"{dtype_name(a.dtype)} and other's dtype {dtype_name(b.dtype)}"
        )
    if a.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    is_vector = b.ndim == a.ndim - 1
    batch_b = b.shape[:-1] if is_vector else b.shape[:-2]
    try:
        np.broadcast_shapes(a.shape[:-2], batch_b)
    except ValueError:
        raise broadcast_error(a.shape[:-2], batch_b) from None
    if is_vector and b.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-1)")
    if not is_vector and b.shape[-2] != a.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
    return LstsqResult(*LinalgLstsq.apply(A, B, rcond, driver, is_vector))


# ------------------------------------------------------------------------- matrix_exp
_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
# the largest 1-norm for which the degree-13 Padé approximant is exact in double precision
# (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005)
_PADE13_THETA = 5.371920351148152


def _matrix_exp_array(array: np.ndarray) -> np.ndarray:
    """exp of each matrix by scaling and squaring around a degree-13 Padé approximant, the
    scaling chosen per matrix; matrices with a non-finite entry give NaN, as PyTorch's do."""
    if array.shape[-1] == 0:
        return array.copy()
    dtype = array.dtype
    work = array.astype(np.complex128 if dtype.kind == "c" else np.float64)
    finite = np.all(np.isfinite(work), axis=(-2, -1))
    work = np.where(finite[..., None, None], work, 0.0)
    norm = np.max(np.sum(np.abs(work), axis=-2), axis=-1)
    with np.errstate(divide="ignore"):
        squarings = np.maximum(0, np.ceil(np.log2(norm / _PADE13_THETA))).astype(np.int64)
    squarings = np.where(norm > 0, squarings, 0)
    scaled = work / np.ldexp(1.0, squarings)[..., None, None]
    b = _PADE13
    identity = np.eye(array.shape[-1])
    a2 = scaled @ scaled
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = scaled @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
        + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity
    )  # fmt: skip
    v = (
        a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
        + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    )  # fmt: skip
    with np.errstate(over="ignore", invalid="ignore"):
        result = np.linalg.solve(v - u, v + u)
        # undo the scaling: square each matrix as many times as it was halved
        for step in range(int(np.max(squarings, initial=0))):
            result = np.where((step < squarings)[..., None, None], result @ result, result)
    result = np.where(finite[..., None, None], result, np.nan)
    return result.astype(dtype)


class LinalgMatrixExp(Function):
    _backward_name = "LinalgMatrixExpBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_matrix_exp"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(_matrix_exp_array(a._data))

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        # the adjoint of the Fréchet derivative: exp([[A^T, G], [0, A^T]]) holds it in its
        # upper right block (Higham, Functions of Matrices, 3.2)
        n = a.shape[-1]
        a_t = a.mT
        zeros = _wrap(np.zeros(tuple(a.shape), a._data.dtype))
        top = joining_ops.cat([a_t, grad_output], -1)
        bottom = joining_ops.cat([zeros, a_t], -1)
        block = LinalgMatrixExp.apply(joining_ops.cat([top, bottom], -2))
        return shape_ops.narrow(shape_ops.narrow(block, -2, 0, n), -1, n, n)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix."""
    # half precision is computed in double and rounded, as PyTorch computes it too
    _check_matrix("linalg.matrix_exp", A, half=_HALF_SUPPORTED)
    return LinalgMatrixExp.apply(A)


def linalg_matrix_exp(A: Tensor) -> Tensor:
    """lucid.linalg.matrix_exp, lucid.matrix_exp under the name PyTorch's errors give it."""
    _check_matrix("linalg.matrix_exp", A, half=_HALF_SUPPORTED)
    return LinalgMatrixExp.apply(A)


# ----------------------------------------------------------------------- matrix_power
def matrix_power(A: Tensor, n: int) -> Tensor:
    """A to the integer power n (by repeated squaring; negative n through the inverse)."""
    return _matrix_power(A, n)


def linalg_matrix_power(A: Tensor, n: int) -> Tensor:
    """lucid.linalg.matrix_power, lucid.matrix_power under the name PyTorch's errors give it."""
    return _matrix_power(A, n)


def _matrix_power(A: Tensor, n: int) -> Tensor:
    array = _array(A)
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(
            f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}"
        )
    if array.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_power: The input tensor A must have at least 2 dimensions."
        )
    if array.shape[-1] != array.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{array.shape[-2]} by {array.shape[-1]} matrices"
        )
    n = int(n)
    if n == 0:
        # a copy of the identity that still belongs to A's graph (its gradient is zero)
        identity = np.broadcast_to(np.eye(array.shape[-1], dtype=array.dtype), array.shape)
        return copy_(clone(A), _wrap(identity))
    base = inv(A) if n < 0 else A
    n = abs(n)
    result = None
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


# ------------------------------------------------------------------ rank, cond, norms
@autocast_op
def matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """The number of singular values (`|eigenvalues|` with hermitian) above
    max(atol, rtol * largest); tol is atol's older name."""
    _refuse_out("matrix_rank", out)
    array = _array(A)
    if array.ndim < 2:
        raise RuntimeError(
            "lucid.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    if array.dtype.kind not in INEXACT_KINDS or array.dtype.itemsize == 2:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol = tol
    m, n = array.shape[-2:]
    if hermitian:
        if not np.all(np.isfinite(np.tril(array))):
            raise LinAlgError(
                "linalg.eigh: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues."
            )
        values = np.abs(np.linalg.eigvalsh(array)) if array.size else np.zeros(array.shape[:-1])
    else:
        values = _svd_array(array, False, False)
    default_rtol = float(np.finfo(array.dtype).eps) * max(m, n)
    cutoff = _cutoff(values, atol, rtol, default_rtol)
    return _wrap(np.sum(values > cutoff, axis=-1).astype(_INT64))


_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """The ord-norm of x's elements over dim (all of them when None)."""
    _refuse_out("vector_norm", out)
    if isinstance(ord, str) or not isinstance(ord, int | float | np.number):
        raise TypeError(
            f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{type(ord).__name__}"
        )
    _array(x)
    return reduction_ops._vector_norm(x, ord, dim, keepdim, dtype)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """The ord-norm of each matrix over the two dims: 'fro', 'nuc', ±1 and ±inf (largest or
    smallest column or row sum of magnitudes), ±2 (largest or smallest singular value)."""
    _refuse_out("matrix_norm", out)
    array = _array(A)
    if array.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    given = [dim] if isinstance(dim, int) else list(dim)
    if len(given) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, given))}"
        )
    dims = tuple(_normalize_dim(d, array.ndim) for d in given)
    if dims[0] == dims[1]:
        raise RuntimeError(
            f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})"
        )
    if isinstance(ord, str):
        if ord == "fro":
            # the dtype errors name matrix_norm, not the vector_norm that computes it
            reduction_ops._check_norm_input(A, dtype, "linalg.matrix_norm")
            return vector_norm(A, 2, dims, keepdim, dtype=dtype)
        A = reduction_ops._check_norm_input(A, dtype, "linalg.matrix_norm")
        result = reduction_ops.sum(svdvals(shape_ops.movedim(A, dims, (-2, -1))), -1)
        if keepdim:
            for d in sorted(dims):
                result = result.unsqueeze(d)
        return result
    A = reduction_ops._check_norm_input(A, dtype, "linalg.matrix_norm")
    if abs(ord) == 2:
        moved = shape_ops.movedim(A, dims, (-2, -1))
        values = svdvals(moved)
        result = reduction_ops.amax(values, -1) if ord > 0 else reduction_ops.amin(values, -1)
        if keepdim:
            for d in sorted(dims):
                result = result.unsqueeze(d)
        return result
    # ±1: columns (sum over rows, then extreme over columns); ±inf: rows
    summed, extreme = dims if abs(ord) == 1 else dims[::-1]
    sums = reduction_ops.sum(pointwise_ops.abs(A), summed, keepdim=True)
    reduce = reduction_ops.amax if ord > 0 else reduction_ops.amin
    result = reduce(sums, extreme, keepdim=True)
    if not keepdim:
        result = result.squeeze(max(dims)).squeeze(min(dims))
    return result


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """A vector norm (dim an int or one dim, or ord None with dim None: all elements) or a
    matrix norm (dim two dims, or a 2-D input with ord given)."""
    _refuse_out("norm", out)
    array = _array(A)
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if array.ndim == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if array.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(
        f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
        f"Got {array.ndim}D."
    )


@autocast_op
def cond(A: Tensor, p: Any = None, *, out: Any = None) -> Tensor:
    """The condition number of each matrix in the p-norm (2 by default: the ratio of the
    extreme singular values)."""
    _refuse_out("cond", out)
    array = _array(A)
    if array.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        _check_svd_input(A)
        values = svdvals(A)
        largest = shape_ops.narrow(values, -1, 0, 1).squeeze(-1)
        smallest = shape_ops.narrow(values, -1, values.shape[-1] - 1, 1).squeeze(-1)
        if p == -2:
            return smallest / largest
        return largest / smallest
    if p not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if array.shape[-1] != array.shape[-2]:
        raise RuntimeError(
            f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
            f"{array.shape[-2]} by {array.shape[-1]} matrices"
        )
    inverse, info = inv_ex(A)
    # a singular matrix has an infinite condition number
    singular = _wrap((info._data > 0)[..., None, None])
    inverse = pointwise_ops.where(singular, math.inf, inverse)
    # 0 * inf (a zero matrix) and NaN entries count as infinitely ill-conditioned
    return pointwise_ops.nan_to_num(matrix_norm(A, p) * matrix_norm(inverse, p), math.inf, math.inf)


# ---------------------------------------------------------------------- cross, vecdot
class LinalgCross(Function):
    _backward_name = "LinalgCrossBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_cross"

    @staticmethod
    def forward(ctx, a, b, dim):
        x, y = np.broadcast_arrays(a._data, b._data)
        ctx.dim = dim
        ctx.save_for_backward(a, b)
        return _wrap(np.cross(x, y, axis=dim))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d(a x b) = da x b + a x db, and <g, da x b> = <b x g, da>
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(LinalgCross.apply(b, grad_output, ctx.dim), a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(LinalgCross.apply(grad_output, a, ctx.dim), b.shape)
        return grad_a, grad_b, None


def _cross_checks(name: str, input: Tensor, other: Tensor,
                  dim: int | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """PyTorch's checks of cross's operands; with `dim` (linalg.cross) the length-3 check
    comes before broadcasting, as there."""
    a, b = _array(input), _array(other)
    if a.ndim != b.ndim:
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {dtype_name(a.dtype)} but found {dtype_name(b.dtype)}"
        )
    if a.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if dim is not None:
        axis = _normalize_dim(dim, a.ndim)
        if a.shape[axis] != 3 or b.shape[axis] != 3:
            raise RuntimeError(
                f"{name}: inputs dimension {dim} must have length 3. Got {a.shape[axis]} "
                f"and {b.shape[axis]}"
            )
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    return a, b


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    _refuse_out("linalg.cross", out)
    a, _ = _cross_checks("linalg.cross", input, other, dim)
    return LinalgCross.apply(input, other, _normalize_dim(dim, a.ndim))


def cross(input: Tensor, other: Tensor, dim: int | None = None, *, out: Any = None) -> Tensor:
    """The cross product of 3-vectors along dim (without dim: the first dim of size 3, a
    deprecated default kept from PyTorch)."""
    _refuse_out("cross", out)
    a, b = _cross_checks("linalg.cross", input, other)
    if dim is None:
        warnings.warn(
            "Using lucid.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use lucid.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        shape = np.broadcast_shapes(a.shape, b.shape)
        sizes = [d for d, size in enumerate(shape) if size == 3]
        if not sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes[0]
    axis = _normalize_dim(dim, a.ndim)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[axis]} "
            f"and {b.shape[axis]}"
        )
    return LinalgCross.apply(input, other, axis)


@autocast_op
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """The dot product of x and y along dim, broadcasting the other dims."""
    _refuse_out("vecdot", out)
    a, b = _array(x), _array(y)
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{dtype_name(a.dtype)} and y of type {dtype_name(b.dtype)} instead"
        )
    _check_float("linalg.vecdot", a, _HALF_SUPPORTED)
    if a.ndim == 1 and b.ndim == 1 and a.shape != b.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
            f"to have the same number of elements, but got {a.shape[0]} and {b.shape[0]} "
            "elements respectively"
        )
    if a.dtype.kind == "c":
        # PyTorch's vecdot conjugates x: sum(conj(x) * y)
        x = x.conj()
    return reduction_ops.sum(mul(x, y), dim)


# ------------------------------------------------------------------------- multi_dot
def _chain_order(sizes: list[int]) -> list[list[int]]:
    """The cheapest parenthesisation of a matrix chain (the classic dynamic programme over
    chain lengths); split[i][j] is where the product of matrices i..j splits."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                total = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if total < cost[i][j]:
                    cost[i][j] = total
                    split[i][j] = k
    return split


def multi_dot(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """The product of a chain of matrices in the cheapest order; the first and last may be
    vectors (a row and a column)."""
    _refuse_out("multi_dot", out)
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    arrays = [_array(tensor) for tensor in tensors]
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for index, array in enumerate(arrays[1:-1], 1):
        if array.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {index} must be 2D but got {array.ndim}D")
    for index, array in enumerate(arrays[1:], 1):
        if array.dtype != arrays[0].dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{arrays[0].dtype.name.replace('float64', 'double').replace('float32', 'float')} "
                f"and tensor {index} "
                f"{array.dtype.name.replace('float64', 'double').replace('float32', 'float')}"
            )
    matrices = list(tensors)
    if first == 1:
        matrices[0] = tensors[0].unsqueeze(0)
    if last == 1:
        matrices[-1] = tensors[-1].unsqueeze(-1)
    shapes = [tuple(matrix.shape) for matrix in matrices]
    for index in range(len(shapes) - 1):
        if shapes[index][1] != shapes[index + 1][0]:
            raise RuntimeError(
                f"multi_dot(): tensors {index} and {index + 1} with shapes "
                f"{list(arrays[index].shape)} and {list(arrays[index + 1].shape)} cannot be "
                "multiplied"
            )
    sizes = [shape[0] for shape in shapes] + [shapes[-1][1]]
    split = _chain_order(sizes)

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return matrices[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    result = product(0, len(matrices) - 1)
    if first == 1 and last == 1:
        return shape_ops.reshape(result, ())
    if first == 1:
        return result.squeeze(0)
    if last == 1:
        return result.squeeze(-1)
    return result


# ------------------------------------------------------------------ householder_product
@autocast_op
def householder_product(A: Tensor, tau: Tensor, *, out: Any = None) -> Tensor:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i column i of A
    below the diagonal and 1 on it (Q of a QR factorisation in geqrf's compact form).

    Composed from matmul, so its backward needs no formula of its own (its grad_fn is the
    last op of the chain, not PyTorch's LinalgHouseholderProductBackward0).
    """
    _refuse_out("householder_product", out)
    name = "lucid.linalg.householder_product"
    a, t = _array(A), _array(tau)
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = a.shape[-2:]
    if m < n:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if t.ndim != a.ndim - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {t.ndim} and input.ndim is equal to {a.ndim}"
        )
    if n < t.shape[-1]:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if t.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
            f"{list(t.shape[:-1])}"
        )
    if a.dtype.kind not in INEXACT_KINDS or a.dtype.itemsize == 2:
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{dtype_name(a.dtype)}'")
    if t.dtype != a.dtype:
        raise RuntimeError(
            f"{name}: tau dtype {dtype_name(t.dtype)} does not match input dtype "
            f"{dtype_name(a.dtype)}"
        )
    rows = np.arange(m)[:, None]
    below = matrices_ops.tril(A, -1)
    result = _wrap(np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy())
    # Applied right to left, Q = H_1 (H_2 (... (H_k I))), as orgqr does: H_i leaves the
    # columns before i alone and sets column i to e_i - tau_i v_i directly, so an inf in v_i
    # meets no zero there.
    for i in range(t.shape[-1] - 1, -1, -1):
        unit = _wrap((rows == i).astype(a.dtype))
        # column i below the diagonal, 1 on it (a sum that meets no 0 * inf)
        v = shape_ops.narrow(below, -1, i, 1) + unit
        scale = shape_ops.narrow(tau, -1, i, 1).unsqueeze(-1)
        parts = [shape_ops.narrow(result, -1, 0, i), unit - scale * v]
        if i + 1 < n:
            rest = shape_ops.narrow(result, -1, i + 1, n - i - 1)
            parts.append(rest - scale * matmul(v, matmul(v.mH, rest)))
        result = joining_ops.cat(parts, -1)
    return result


# ------------------------------------------------------------------ geqrf, orgqr, ormqr
GeqrfResult = result_type("GeqrfResult", "geqrf", "a", "tau")


class Geqrf(Function):
    """LAPACK's compact QR: R on and above the diagonal, the Householder vectors below it,
    and their scales tau. PyTorch defines no derivative for it."""

    _backward_name = "GeqrfBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, a):
        array = a._data
        m, n = array.shape[-2:]
        if array.size:
            # NumPy's 'raw' mode returns geqrf's Fortran-ordered factor, that is its transpose
            h, tau = np.linalg.qr(array, mode="raw")
            factor = np.ascontiguousarray(np.swapaxes(h, -1, -2))
        else:
            factor = np.zeros(array.shape, array.dtype)
            tau = np.zeros(array.shape[:-2] + (min(m, n),), array.dtype)
        return _wrap(factor), _wrap(np.ascontiguousarray(tau))

    @staticmethod
    def backward(ctx, grad_a, grad_tau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@autocast_op
def geqrf(input: Tensor, *, out: Any = None) -> GeqrfResult:
    """The QR factorisation of each matrix in LAPACK's compact form (a, tau); Q is
    householder_product(a, tau), and ormqr multiplies by it without forming it."""
    _refuse_out("geqrf", out)
    array = _array(input)
    if array.ndim < 2:
        raise RuntimeError("lucid.geqrf: input must have at least 2 dimensions.")
    if array.dtype.kind not in INEXACT_KINDS or array.dtype.itemsize == 2:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{dtype_name(array.dtype)}'")
    return GeqrfResult(*Geqrf.apply(input))


@autocast_op
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """Q from geqrf's (a, tau): PyTorch's older name of linalg.householder_product."""
    return householder_product(input, input2)


def _reflectors(a: Tensor, count: int) -> list[Tensor]:
    """The Householder vectors v_i of geqrf's compact form: column i of `a` below the
    diagonal, 1 on it, 0 above."""
    rows = np.arange(a.shape[-2])[:, None]
    below = matrices_ops.tril(a, -1)
    vectors = []
    for i in range(count):
        unit = _wrap((rows == i).astype(a._data.dtype))
        vectors.append(shape_ops.narrow(below, -1, i, 1) + unit)
    return vectors


def _reflect(v: Tensor, tau_i: Tensor, w: Tensor) -> Tensor:
    """H w with H = I - tau v v^H (H^H is the same with conj(tau))."""
    return w - tau_i * (v @ (v.mH @ w))


def _conj_if_complex(x: Tensor) -> Tensor:
    return x.conj() if x._data.dtype.kind == "c" else x


class Ormqr(Function):
    """op(Q) C or C op(Q), Q = H_1 ... H_k from geqrf's (a, tau), one reflector at a time:
    Q is never formed. op is the conjugate transpose with `transpose`, as in PyTorch."""

    _backward_name = "OrmqrBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, a, tau, other, left, transpose):
        array, scales = a._data, tau._data
        count = scales.shape[-1]
        # the right-hand products are left-hand ones: C op(Q) = (op(Q)^H C^H)^H
        work = other._data if left else np.swapaxes(other._data, -1, -2).conj()
        work = work.copy()
        # the reflectors of Q^H = H_k^H ... H_1^H, applied first to last, scale by conj(tau)
        ascending = transpose == left
        if ascending:
            scales = scales.conj()
        order = range(count) if ascending else range(count - 1, -1, -1)
        for i in order:
            # H_i touches rows i: only, as LAPACK applies it: an inf in the rows above meets
            # no 0 * inf from v's zeros there
            v = array[..., i:, i : i + 1].copy()
            v[..., 0, :] = 1
            scale = scales[..., i, None, None]
            rows = work[..., i:, :]
            update = scale * (v @ (np.swapaxes(v, -1, -2).conj() @ rows))
            # a reflector whose tau is 0 is the identity, which LAPACK skips
            rows -= np.where(scale == 0, 0, update)
        result = work if left else np.swapaxes(work, -1, -2).conj()
        ctx.left, ctx.transpose = left, transpose
        ctx.save_for_backward(a, tau, other)
        return _wrap(np.ascontiguousarray(result))

    @staticmethod
    def backward(ctx, grad_output):
        a, tau, other = ctx.saved_tensors
        left, transpose = ctx.left, ctx.transpose
        count = tau.shape[-1]
        ascending = transpose == left
        order = list(range(count)) if ascending else list(range(count - 1, -1, -1))
        vectors = _reflectors(a, count)
        if ascending:
            tau = _conj_if_complex(tau)
        scales = [shape_ops.narrow(tau, -1, i, 1).unsqueeze(-1) for i in order]
        # the states before each reflector, in the order they are applied
        states = [other if left else other.mH]
        for i, scale in zip(order, scales):
            states.append(_reflect(vectors[i], scale, states[-1]))
        grad = grad_output if left else grad_output.mH
        grad_vectors: list[Any] = [None] * count
        grad_taus: list[Any] = [None] * count
        for step in range(count - 1, -1, -1):
            i, scale, before = order[step], scales[step], states[step]
            conj_scale = _conj_if_complex(scale)
            v = vectors[i]
            # w' = H w with H = I - s v v^H: dH = -ds v v^H - s (dv v^H + v dv^H)
            grad_v_t = v.mH @ grad
            before_v_t = v.mH @ before
            grad_scale = -(grad_v_t * _conj_if_complex(before_v_t)).sum(-1)
            # s is conj(tau) where Q^H's reflectors act
            grad_taus[i] = _conj_if_complex(grad_scale) if ascending else grad_scale
            grad_vectors[i] = -(
                conj_scale * (grad @ before_v_t.mH) + scale * (before @ grad_v_t.mH)
            )
            grad = _reflect(v, conj_scale, grad)
        grad_a = grad_tau = grad_other = None
        if ctx.needs_input_grad[0]:
            # only the entries below the diagonal hold the vectors
            grad_a = matrices_ops.tril(joining_ops.cat(grad_vectors, -1), -1) if count else None
            if grad_a is None or count < a.shape[-1]:
                missing = a.shape[-1] - count
                padding = _wrap(np.zeros(tuple(a.shape[:-1]) + (missing,), a._data.dtype))
                grad_a = padding if grad_a is None else joining_ops.cat([grad_a, padding], -1)
        if ctx.needs_input_grad[1]:
            grad_tau = (
                joining_ops.cat(grad_taus, -1)
                if count
                else _wrap(np.zeros(tuple(tau.shape), tau._data.dtype))
            )
        if ctx.needs_input_grad[2]:
            grad_other = grad if left else grad.mH
        return grad_a, grad_tau, grad_other, None, None


@autocast_op
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False, *, out: Any = None) -> Tensor:  # fmt: skip
    """op(Q) @ input3 (or input3 @ op(Q) with left=False), op the transpose if `transpose`,
    Q the orthogonal factor held in geqrf's (input, input2)."""
    _refuse_out("ormqr", out)
    name = "lucid.ormqr"
    a, tau, other = _array(input), _array(input2), _array(input3)
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != a.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim < 1 or tau.shape[-1] != min(other.shape[side], a.shape[-1]):
        raise RuntimeError(
            f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )
    if tau.ndim != a.ndim - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {a.ndim}"
        )
    if other.ndim != a.ndim:
        raise RuntimeError(
            f"{name}: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {other.ndim} and input.ndim is equal to {a.ndim}"
        )
    for what, array in (("tau", tau), ("other", other)):
        if array.shape[: a.ndim - 2] != a.shape[:-2]:
            raise RuntimeError(
                f"{name}: Expected batch dimensions of {what} to be equal to input.shape[:-2], "
                f"but got {list(array.shape[: a.ndim - 2])}"
            )
    for what, array in (("tau", tau), ("other", other)):
        if array.dtype != a.dtype:
            # PyTorch's message runs "dtype" into the type name
            raise RuntimeError(
                f"{name}: Expected input and {what} to have the same dtype, but input has "
                f"dtype{dtype_name(a.dtype)} and {what} has dtype {dtype_name(array.dtype)}"
            )
    if a.dtype.kind not in INEXACT_KINDS or a.dtype.itemsize == 2:
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for '{dtype_name(a.dtype)}'")
    return Ormqr.apply(input, input2, input3, bool(left), bool(transpose))


# ------------------------------------------------------------------ tensorinv, tensorsolve
@autocast_op
def tensorinv(A: Tensor, ind: int = 2, *, out: Any = None) -> Tensor:
    """The inverse of A seen as a map from its first `ind` dims to the rest."""
    _refuse_out("tensorinv", out)
    array = _array(A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > array.ndim:
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {array.ndim}")
    rows = math.prod(array.shape[:ind])
    columns = math.prod(array.shape[ind:])
    if rows != columns:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {columns} != {rows}"
        )
    result = inv(shape_ops.reshape(A, (rows, columns)))
    return shape_ops.reshape(result, array.shape[ind:] + array.shape[:ind])


@autocast_op
def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Any = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B."""
    _refuse_out("tensorsolve", out)
    array = _array(A)
    b = _array(B)
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        sources = [_normalize_dim(d, array.ndim) for d in dims]
        A = shape_ops.movedim(A, sources, list(range(array.ndim - len(sources), array.ndim)))
        array = A._data
    if array.ndim < b.ndim:
        # PyTorch slices A's shape past its end here
        raise RuntimeError("cannot create std::vector larger than max_size()")
    result_shape = array.shape[b.ndim :]
    columns = math.prod(result_shape)
    # the requirement as PyTorch checks it: the solution has as many entries as B
    rows = math.prod(b.shape)
    if rows != columns:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {columns} != {rows}"
        )
    matrix = shape_ops.reshape(A, (columns, columns))
    result = solve(matrix, shape_ops.reshape(B, (columns,)))
    return shape_ops.reshape(result, result_shape)


def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    _array(A)
    return _diagonal(A, offset, dim1, dim2)


# -------------------------------------------------------------------------------- LU
def _lu_backward(permutation: Tensor, lower: Tensor, upper: Tensor, grad_lower: Tensor,
                 grad_upper: Tensor) -> Tensor:  # fmt: skip
    """The gradient of A = P L U for square A: P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T."""
    inner = matrices_ops.tril(matmul(lower.mT, grad_lower), -1) + matrices_ops.triu(
        matmul(grad_upper, upper.mT)
    )
    inner = LinalgSolveTriangular.apply(lower.mT, inner, True, True, True)
    inner = LinalgSolveTriangular.apply(upper.mT, inner, False, False, False)
    return matmul(permutation, inner)


def _check_square_lu_grad(shape: Sequence[int], name: str) -> None:
    if shape[-1] != shape[-2]:
        raise NotImplementedError(
            f"lucid implements the derivative of {name} for square matrices only"
        )


class LinalgLuFactorEx(Function):
    _backward_name = "LinalgLuFactorExBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_lu_factor"

    @staticmethod
    def forward(ctx, a, check_errors):
        lu, pivots, info = _lu_factor_array(a._data)
        if check_errors and np.any(info):
            prefix, code = _batch_prefix(info)
            raise LinAlgError(
                f"linalg.lu_factor: {prefix}The factorization could not be completed because "
                f"the input matrix is singular (U[{code}, {code}] is zero)."
            )
        outputs = (_wrap(lu), _wrap(pivots), _wrap(info))
        ctx.mark_non_differentiable(*outputs[1:])
        permutation = _permutation_from_pivots(pivots.astype(np.int64), lu.shape[-2], lu.dtype)
        ctx.save_for_backward(outputs[0], _wrap(permutation))
        return outputs

    @staticmethod
    def backward(ctx, grad_lu, grad_pivots, grad_info):
        lu, permutation = ctx.saved_tensors
        _check_square_lu_grad(lu.shape, "linalg.lu_factor")
        identity = _wrap(np.eye(lu.shape[-1], dtype=lu._data.dtype))
        lower = matrices_ops.tril(lu, -1) + identity
        upper = matrices_ops.triu(lu)
        grad = _lu_backward(
            permutation, lower, upper, matrices_ops.tril(grad_lu, -1), matrices_ops.triu(grad_lu)
        )
        return grad, None


def _check_lu_input(name: str, A: Tensor, pivot: bool) -> None:
    array = _array(A)
    if array.ndim < 2:
        shape = ", ".join(map(str, array.shape))
        # PyTorch's linalg.lu names itself here; lu_factor(_ex) say torch.lu_factor
        prefix = name if name == "linalg.lu" else "lucid.lu_factor"
        raise RuntimeError(
            f"{prefix}: Expected tensor with 2 or more dimensions. Got size: [{shape}] instead"
        )
    if array.dtype.kind not in INEXACT_KINDS or array.dtype.itemsize == 2:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{dtype_name(array.dtype)}'")
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out: Any = None) -> LuFactorExResult:  # fmt: skip
    """The compact LU factorisation with partial pivoting, its 1-based pivots and an info code
    per matrix (the first zero pivot)."""
    _refuse_out("lu_factor_ex", out)
    _check_lu_input("linalg.lu_factor_ex", A, pivot)
    return LuFactorExResult(*LinalgLuFactorEx.apply(A, bool(check_errors)))


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> LuFactorResult:
    """The compact LU factorisation with partial pivoting (L below the diagonal, U on and
    above it) and its 1-based pivots."""
    _refuse_out("lu_factor", out)
    _check_lu_input("linalg.lu_factor", A, pivot)
    lu, pivots, _ = LinalgLuFactorEx.apply(A, False)
    return LuFactorResult(lu, pivots)


def _unpack_arrays(lu: np.ndarray, pivots: np.ndarray) -> tuple[np.ndarray, ...]:
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    upper = np.triu(lu[..., :k, :])
    permutation = _permutation_from_pivots(pivots.astype(np.int64), m, lu.dtype)
    return permutation, lower, upper


class LinalgLu(Function):
    _backward_name = "LinalgLuBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "linalg_lu"

    @staticmethod
    def forward(ctx, a):
        lu, pivots, _ = _lu_factor_array(a._data)
        permutation, lower, upper = (_wrap(part) for part in _unpack_arrays(lu, pivots))
        ctx.mark_non_differentiable(permutation)
        ctx.save_for_backward(permutation, lower, upper)
        return permutation, lower, upper

    @staticmethod
    def backward(ctx, grad_permutation, grad_lower, grad_upper):
        permutation, lower, upper = ctx.saved_tensors
        _check_square_lu_grad(lower.shape[:-1] + upper.shape[-1:], "linalg.lu")
        return _lu_backward(permutation, lower, upper, grad_lower, grad_upper)


def lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> LuResult:
    """P, L, U with A = P L U (partial pivoting; L unit lower, U upper trapezoidal)."""
    _refuse_out("lu", out)
    _check_lu_input("linalg.lu", A, pivot)
    return LuResult(*LinalgLu.apply(A))


def _unpack(lu: Tensor, pivots: np.ndarray) -> tuple[Tensor, Tensor, Tensor]:
    """P, L, U from the compact LU form, L and U differentiably (as views of LU's triangles)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    identity = _wrap(np.eye(m, k, dtype=lu._data.dtype))
    lower = matrices_ops.tril(shape_ops.narrow(lu, -1, 0, k), -1) + identity
    upper = matrices_ops.triu(shape_ops.narrow(lu, -2, 0, k))
    permutation = _permutation_from_pivots(pivots.astype(np.int64), m, lu._data.dtype)
    return _wrap(permutation), lower, upper


def _check_pivots(name: str, pivots: np.ndarray) -> None:
    if pivots.dtype != _INT32:
        raise RuntimeError(
            f"{name}: LU_pivots is expected to be a contiguous tensor of lucid.int32 dtype.\n"
            "Note: this function is intended to be used with the output produced by "
            "lucid.linalg.lu_factor"
        )


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out: Any = None) -> LuUnpackResult:  # fmt: skip
    """P, L, U from lu_factor's compact form and pivots."""
    _refuse_out("lu_unpack", out)
    lu_array, pivots = _array(LU_data), _array(LU_pivots)
    _check_pivots("lu_unpack", pivots)
    permutation, lower, upper = _unpack(LU_data, pivots)
    empty = _wrap(np.zeros((0,), lu_array.dtype))
    if not unpack_data:
        lower = upper = empty
    if not unpack_pivots:
        permutation = empty
    return LuUnpackResult(permutation, lower, upper)


def _check_lu_solve_inputs(LU: Tensor, pivots: Tensor, B: Tensor, left: bool) -> None:
    """PyTorch's checks of lu_solve's arguments, in its order."""
    name = "linalg.lu_solve"
    lu_array, pivot_array, b = _array(LU), _array(pivots), _array(B)
    _check_float(f"lucid.{name}", lu_array, _HALF_SUPPORTED)
    if lu_array.dtype != b.dtype:
        raise RuntimeError(
            f"{name}: Expected LU and B to have the same dtype, but found LU of type "
            f"{dtype_name(lu_array.dtype)} and B of type {dtype_name(b.dtype)} instead"
        )
    if pivot_array.dtype != _INT32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type lucid.int32")
    _check_matrix(f"lucid.{name}", LU, half=_HALF_SUPPORTED)
    if b.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = lu_array.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {equation} ({n}x{n} and "
            f"{b.shape[-2]}x{b.shape[-1]})"
        )
    if pivot_array.ndim < 1 or pivot_array.shape[-1] != n:
        raise RuntimeError(
            f"{name}: Number of pivots per batch should be same as the dimension of the matrix"
        )
    if pivot_array.shape != lu_array.shape[:-1]:
        shape = ", ".join(map(str, pivot_array.shape))
        raise RuntimeError(
            f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape [{shape}] instead"
        )
    if is_low_precision(lu_array.dtype):
        raise NotImplementedError(
            f"\"linalg.lu_solve_cpu\" not implemented for '{dtype_name(lu_array.dtype)}'"
        )
    try:
        np.broadcast_shapes(b.shape[:-2], lu_array.shape[:-2])
    except ValueError:
        raise broadcast_error(b.shape[:-2], lu_array.shape[:-2]) from None


@autocast_op
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out: Any = None) -> Tensor:  # fmt: skip
    """The solution of A X = B from A = P L U in lu_factor's form (A^T X = B with adjoint;
    X A = B with left=False), by two triangular solves."""
    _refuse_out("lu_solve", out)
    _check_lu_solve_inputs(LU, pivots, B, left)
    permutation, lower, upper = _unpack(LU, _array(pivots))
    # X A = B is A^T X^T = B^T: the other of the two systems, on B^T (and X A^H = B is
    # A X^H = B^H)
    transposed = adjoint == left
    rhs = B if left else (B.mH if adjoint else B.mT)
    if not transposed:
        # A X = B: X = U^-1 L^-1 P^T B
        x = matmul(permutation.mT, rhs)
        x = LinalgSolveTriangular.apply(lower, x, False, True, True)
        x = LinalgSolveTriangular.apply(upper, x, True, True, False)
    else:
        # A^H X = B: X = P L^-H U^-H B (A^T, L^-T, U^-T for X A = B)
        upper_t, lower_t = (upper.mH, lower.mH) if adjoint else (upper.mT, lower.mT)
        x = LinalgSolveTriangular.apply(upper_t, rhs, False, True, False)
        x = LinalgSolveTriangular.apply(lower_t, x, True, True, True)
        x = matmul(permutation, x)
    if left:
        return x
    return x.mH if adjoint else x.mT


# ------------------------------------------------------------------------------ LDL
LdlFactorResult = result_type("LdlFactorResult", "linalg_ldl_factor", "LD", "pivots")
LdlFactorExResult = result_type("LdlFactorExResult", "linalg_ldl_factor_ex", "LD", "pivots", "info")

# Bunch and Kaufman's threshold: it bounds the growth of the entries by (1 + 1/alpha)^2 per
# 2x2 step, the same bound a 1x1 step with partial pivoting would give
_BUNCH_KAUFMAN_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _cabs1(x: np.ndarray) -> np.ndarray:
    """The magnitude LAPACK's complex pivoting compares: |re| + |im| (|x| when real)."""
    if x.dtype.kind == "c":
        return np.abs(x.real) + np.abs(x.imag)
    return np.abs(x)


def _first_max(magnitude: np.ndarray, valid: np.ndarray) -> tuple[Any, Any]:
    """The index and value of each row's largest entry within `valid`, as the BLAS torch
    links picks it: the first largest, or the first NaN if there is one."""
    index = np.argmax(np.where(valid, magnitude, -1.0), axis=-1)
    return index, magnitude[np.arange(magnitude.shape[0]), index]


def _mirror_lower(block: np.ndarray, hermitian: bool = False) -> None:
    """Copy the strict lower triangle of each matrix over its upper one (conjugated if
    `hermitian`), in place: the factor reads (and LAPACK updates) the lower triangle only."""
    upper = np.triu_indices(block.shape[-1], 1)
    lower = block[:, upper[1], upper[0]]
    block[:, upper[0], upper[1]] = lower.conj() if hermitian else lower


def _ldl_step(work: np.ndarray, alpha: float) -> tuple[np.ndarray, ...]:
    """One Bunch-Kaufman pivot choice on the trailing blocks `work` (each symmetric, its
    first column the one to eliminate): the relative pivot row, the block size (1 or 2) and
    whether the column is zero or NaN at the diagonal (no elimination then)."""
    count, m = work.shape[:2]
    rows = np.arange(count)
    columns = np.arange(m)
    absakk = _cabs1(work[:, 0, 0])
    if m > 1:
        below = np.broadcast_to(columns >= 1, (count, m))
        imax, colmax = _first_max(_cabs1(work[:, :, 0]), below)
    else:
        imax, colmax = np.zeros(count, np.int64), np.zeros(count, absakk.dtype)
    # LAPACK's MAX(a, b) is `a > b ? a : b`: a NaN diagonal with a nonzero column below is
    # pivoted away, not reported
    zero = np.where(absakk > colmax, absakk, colmax) == 0
    # the largest off-diagonal entry of row imax: its part left of the diagonal, then the
    # part below it (column imax), as LAPACK reads the two from the lower triangle
    row = _cabs1(work[rows, imax, :])
    _, rowmax = _first_max(row, columns < imax[:, None])
    has_below = imax < m - 1
    _, below_max = _first_max(row, columns > imax[:, None])
    rowmax = np.where(has_below & ~(rowmax > below_max), below_max, rowmax)
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = (absakk >= alpha * colmax) | (absakk >= alpha * colmax * (colmax / rowmax))
    single = keep | (_cabs1(work[rows, imax, imax]) >= alpha * rowmax) | zero
    pivot = np.where(keep | zero, 0, imax)
    return pivot, np.where(single, 1, 2), zero


def _ldl_factor_array(array: np.ndarray, hermitian: bool = False) -> tuple[np.ndarray, ...]:
    """LDL^T with Bunch-Kaufman pivoting as LAPACK's sytrf (lower): (LD, 1-based pivots, info);
    L D L^H as hetrf with `hermitian` (a complex matrix's diagonal then read as real).

    NumPy exposes no sytrf. The elimination runs one column at a time over the whole batch
    (the Python loop is over columns, never matrices or entries); a matrix that took a 2x2
    pivot at the previous column sits the next one out. Each step works on the trailing block
    kept as a full symmetric matrix mirrored from its lower triangle, so the symmetric row
    and column interchange is one gather and reads exactly the values LAPACK's lower-triangle
    swaps move.
    """
    batch_shape, n = array.shape[:-2], array.shape[-1]
    lower = np.tril(array).reshape(math.prod(batch_shape), n, n)
    hermitian = hermitian and array.dtype.kind == "c"
    if hermitian:
        lower = lower - _diag_array(1j * np.diagonal(lower, 0, -2, -1).imag)
    mirrored = np.swapaxes(np.tril(lower, -1), -1, -2)
    work = lower + (mirrored.conj() if hermitian else mirrored)
    ld = np.zeros_like(work)
    pivots = np.zeros(work.shape[:2], np.int32)
    info = np.zeros(work.shape[0], np.int32)
    next_column = np.zeros(work.shape[0], np.int64)
    for k in range(n):
        active = np.flatnonzero(next_column == k)
        if active.size == 0:
            continue
        block = work[active, k:, k:]
        m = n - k
        pivot, step, zero = _ldl_step(block, _BUNCH_KAUFMAN_ALPHA)
        info[active] = np.where((info[active] == 0) & zero, k + 1, info[active])
        # interchange rows and columns kk and kp, kk the last row of the pivot block
        last = step - 1
        order = np.tile(np.arange(m), (active.size, 1))
        entries = np.arange(active.size)
        order[entries, last] = pivot
        order[entries, pivot] = last
        block = block[entries[:, None, None], order[:, :, None], order[:, None, :]]
        one = np.flatnonzero((step == 1) & ~zero)
        two = np.flatnonzero(step == 2)
        columns = ld[active, k:, k:]
        columns[:, :, 0] = block[:, :, 0]
        if one.size and m > 1:
            x = block[one, 1:, 0]
            inverse = 1.0 / block[one, 0, 0]
            scaled = inverse[:, None] * x
            # BLAS's syr skips the rank-1 update when its scale 1/d is zero (d infinite) and
            # every column j where x_j is zero, so infinities there do not turn into NaNs
            scaled[x == 0] = 0.0
            update = np.where((inverse != 0)[:, None, None] & (x != 0)[:, None, :], 1.0, 0.0)
            with np.errstate(invalid="ignore"):
                # her's update x x^H / d for Hermitian matrices, syr's x x^T / d otherwise
                product = x[:, :, None] * (scaled.conj() if hermitian else scaled)[:, None, :]
            block[one, 1:, 1:] -= np.where(update != 0, product, 0.0)
            columns[one, 1:, 0] = x * inverse[:, None]
        if two.size and hermitian:
            d = block[two]
            columns[two, 1, 1] = d[:, 1, 1]
            if m > 2:
                # hetf2's 2x2 elimination: the off-diagonal entry's modulus scales it
                modulus = np.abs(d[:, 1, 0])
                d11 = d[:, 1, 1].real / modulus
                d22 = d[:, 0, 0].real / modulus
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = d[:, 1, 0] / modulus
                scale = (t / modulus)[:, None]
                wk = scale * (d11[:, None] * d[:, 2:, 0] - d21[:, None] * d[:, 2:, 1])
                wkp1 = scale * (d22[:, None] * d[:, 2:, 1] - d21.conj()[:, None] * d[:, 2:, 0])
                rest = d[:, 2:, 2:] - d[:, 2:, 0, None] * wk.conj()[:, None, :]
                rest = rest - d[:, 2:, 1, None] * wkp1.conj()[:, None, :]
                block[two, 2:, 2:] = rest - _diag_array(1j * np.diagonal(rest, 0, -2, -1).imag)
                columns[two, 2:, 0] = wk
                columns[two, 2:, 1] = wkp1
        elif two.size:
            d = block[two]
            columns[two, 1, 1] = d[:, 1, 1]
            if m > 2:
                d21 = d[:, 1, 0]
                d11 = d[:, 1, 1] / d21
                d22 = d[:, 0, 0] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = (t / d21)[:, None]
                wk = d21 * (d11[:, None] * d[:, 2:, 0] - d[:, 2:, 1])
                wkp1 = d21 * (d22[:, None] * d[:, 2:, 1] - d[:, 2:, 0])
                block[two, 2:, 2:] = (d[:, 2:, 2:] - d[:, 2:, 0, None] * wk[:, None, :]) - d[
                    :, 2:, 1, None
                ] * wkp1[:, None, :]
                columns[two, 2:, 0] = wk
                columns[two, 2:, 1] = wkp1
        _mirror_lower(block, hermitian)
        work[active, k:, k:] = block
        ld[active, k:, k:] = columns
        absolute = (k + pivot + 1).astype(np.int32)
        pivots[active, k] = np.where(step == 1, absolute, -absolute)
        if two.size:
            pivots[active[two], k + 1] = -absolute[two]
        next_column[active] = k + step
    return (
        np.tril(ld).reshape(array.shape),
        pivots.reshape(batch_shape + (n,)),
        info.reshape(batch_shape),
    )


def _pivot_blocks(pivots: np.ndarray) -> np.ndarray:
    """Where each (flattened) matrix's pivot blocks start: a negative pivot opens a 2x2 block
    that also takes the next column, as LAPACK's sytrs reads them."""
    count, n = pivots.shape
    starts = np.zeros((count, n), bool)
    next_column = np.zeros(count, np.int64)
    for k in range(n):
        starts[:, k] = next_column == k
        width = np.where(pivots[:, k] < 0, 2, 1) if k < n - 1 else 1
        next_column = np.where(starts[:, k], k + width, next_column)
    return starts


def _swap_rows(b: np.ndarray, entries: np.ndarray, row: int, other: np.ndarray) -> None:
    """Swap row `row` with row `other[i]` of matrix `entries[i]` of `b`, in place."""
    first = b[entries, row].copy()
    b[entries, row] = b[entries, other]
    b[entries, other] = first


def _ldl_solve_array(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray,
                     hermitian: bool = False) -> np.ndarray:  # fmt: skip
    """X with A X = B from sytrf's compact LD and pivots, as LAPACK's sytrs (lower): first
    L D Y = P B one pivot block at a time down the columns, then L^T P^T X = Y back up, each
    step over every matrix of the batch whose block starts (or ends) there."""
    n = ld.shape[-1]
    count = math.prod(ld.shape[:-2])
    ld = ld.reshape(count, n, n)
    # hetrs (L D L^H): a 1x1 block read as real, L^H and conj(D's off-diagonal) on the way
    hermitian = hermitian and ld.dtype.kind == "c"
    diagonal = np.diagonal(ld, 0, -2, -1).real if hermitian else np.diagonal(ld, 0, -2, -1)
    adjoint = ld.conj() if hermitian else ld
    pivots = pivots.reshape(count, n).astype(np.int64)
    x = b.reshape(count, n, b.shape[-1]).copy()
    starts = _pivot_blocks(pivots)
    single = starts & (pivots > 0)
    double = starts & (pivots < 0)
    double[:, -1] = False
    # each step's 1x1 or 2x2 division may meet a zero pivot: LAPACK divides all the same
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for k in range(n):
            one = np.flatnonzero(single[:, k])
            if one.size:
                _swap_rows(x, one, k, pivots[one, k] - 1)
                x[one, k + 1 :] -= ld[one, k + 1 :, k, None] * x[one, k, None, :]
                x[one, k] *= (1.0 / diagonal[one, k])[:, None]
            two = np.flatnonzero(double[:, k])
            if two.size:
                _swap_rows(x, two, k + 1, -pivots[two, k] - 1)
                x[two, k + 2 :] -= ld[two, k + 2 :, k, None] * x[two, k, None, :]
                x[two, k + 2 :] -= ld[two, k + 2 :, k + 1, None] * x[two, k + 1, None, :]
                off = ld[two, k + 1, k][:, None]
                off_conj = off.conj() if hermitian else off
                # hetrs reads a 2x2 block's diagonal as it is stored
                upper = ld[two, k, k][:, None] / off_conj
                lower = ld[two, k + 1, k + 1][:, None] / off
                denominator = upper * lower - 1.0
                first = x[two, k] / off_conj
                second = x[two, k + 1] / off
                x[two, k] = (lower * first - second) / denominator
                x[two, k + 1] = (upper * second - first) / denominator
        for k in range(n - 1, -1, -1):
            one = np.flatnonzero(single[:, k])
            if one.size:
                x[one, k] -= np.einsum("bi,bij->bj", adjoint[one, k + 1 :, k], x[one, k + 1 :])
                _swap_rows(x, one, k, pivots[one, k] - 1)
            two = np.flatnonzero(double[:, k - 1]) if k > 0 else np.empty(0, np.int64)
            if two.size:
                tail = x[two, k + 1 :]
                x[two, k] -= np.einsum("bi,bij->bj", adjoint[two, k + 1 :, k], tail)
                x[two, k - 1] -= np.einsum("bi,bij->bj", adjoint[two, k + 1 :, k - 1], tail)
                _swap_rows(x, two, k, -pivots[two, k] - 1)
    return x.reshape(b.shape)


def _check_hermitian(name: str, hermitian: Any) -> None:
    if hermitian.__class__ is not bool:
        raise TypeError(
            f"{name}(): argument 'hermitian' must be bool, not {type(hermitian).__name__}"
        )


class LinalgLdlFactorEx(Function):
    """PyTorch defines no derivative for the LDL factorisation: backward through it is an
    error."""

    _backward_name = "lucid::autograd::NotImplemented"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_ldl_factor_ex"

    @staticmethod
    def forward(ctx, a, check_errors, name, hermitian):
        ld, pivots, info = _ldl_factor_array(a._data, hermitian)
        if check_errors and np.any(info):
            _, code = _batch_prefix(info)
            raise RuntimeError(f"lucid.linalg.{name}: Unknown error code: {code}.")
        outputs = (_wrap(ld), _wrap(pivots), _wrap(info))
        ctx.mark_non_differentiable(*outputs[1:])
        return outputs

    @staticmethod
    def backward(ctx, grad_ld, grad_pivots, grad_info):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
                  out: Any = None) -> LdlFactorExResult:  # fmt: skip
    """The compact LDL^T factorisation of a symmetric (possibly indefinite) matrix with
    Bunch-Kaufman pivoting, LAPACK's sytrf layout: L below the diagonal, the 1x1 and 2x2
    blocks of D on it, 1-based pivots (negative for a 2x2 block) and an info code per matrix
    (the first exactly zero diagonal block). Only the lower triangle of A is read; for real
    matrices `hermitian` changes nothing."""
    _refuse_out("ldl_factor_ex", out)
    _check_hermitian("linalg_ldl_factor_ex", hermitian)
    _check_matrix("lucid.linalg.ldl_factor_ex", A, half="ldl_factor_kernel_cpu")
    factors = LinalgLdlFactorEx.apply(A, bool(check_errors), "ldl_factor_ex", hermitian)
    return LdlFactorExResult(*factors)


def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> LdlFactorResult:
    """The compact LDL^T factorisation with Bunch-Kaufman pivoting and its pivots, as
    ldl_factor_ex gives them; a matrix with an exactly zero diagonal block is an error."""
    _refuse_out("ldl_factor", out)
    _check_hermitian("linalg_ldl_factor", hermitian)
    _check_matrix("lucid.linalg.ldl_factor_ex", A, half="ldl_factor_kernel_cpu")
    ld, pivots, _ = LinalgLdlFactorEx.apply(A, True, "ldl_factor", hermitian)
    return LdlFactorResult(ld, pivots)


class LinalgLdlSolve(Function):
    """PyTorch defines no derivative for ldl_solve: backward through it is an error."""

    _backward_name = "lucid::autograd::NotImplemented"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "linalg_ldl_solve"

    @staticmethod
    def forward(ctx, ld, pivots, b, hermitian):
        ld_array, pivot_array, b_array = ld._data, pivots._data, b._data
        batch_ld, batch_b = ld_array.shape[:-2], b_array.shape[:-2]
        try:
            batch = np.broadcast_shapes(batch_ld, batch_b)
        except ValueError:
            raise broadcast_error(batch_b, batch_ld) from None
        n = ld_array.shape[-1]
        ld_array = np.broadcast_to(ld_array, batch + (n, n))
        pivot_array = np.broadcast_to(pivot_array, batch + (n,))
        b_array = np.broadcast_to(b_array, batch + b_array.shape[-2:])
        return _wrap(_ldl_solve_array(ld_array, pivot_array, b_array, hermitian))

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out: Any = None) -> Tensor:  # fmt: skip
    """The solution X of A X = B from ldl_factor's compact LD and pivots of A."""
    _refuse_out("ldl_solve", out)
    _check_hermitian("linalg_ldl_solve", hermitian)
    name = "lucid.linalg.ldl_solve"
    ld = _check_matrix(name, LD, half=_HALF_SUPPORTED)
    pivot_array, b = _array(pivots), _array(B)
    if b.dtype != ld.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{dtype_name(b.dtype)} and A of type {dtype_name(ld.dtype)} instead."
        )
    rows = b.shape[_normalize_dim(-2, b.ndim)]
    n = ld.shape[-1]
    if rows != n:
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b "
            f"matrix is {rows} by {b.shape[-1]}"
        )
    if pivot_array.shape != ld.shape[:-1]:
        shape = ", ".join(map(str, pivot_array.shape))
        raise RuntimeError(
            f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape [{shape}] instead"
        )
    if pivot_array.dtype.kind not in "iu":
        raise RuntimeError(
            f"{name}: Expected pivots to be integers. Got {dtype_name(pivot_array.dtype)}"
        )
    if is_low_precision(ld.dtype):
        raise NotImplementedError(
            f"\"ldl_solve_kernel_cpu\" not implemented for '{dtype_name(ld.dtype)}'"
        )
    magnitude = np.abs(pivot_array.astype(np.int64))
    if magnitude.size and magnitude.max() > n:
        raise RuntimeError(
            "Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you "
            "properly pass the result of ldl_factor?"
        )
    if magnitude.size and magnitude.min() < 1:
        raise RuntimeError(
            "Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass "
            "the result of ldl_factor?"
        )
    return LinalgLdlSolve.apply(LD, pivots, B, hermitian)
