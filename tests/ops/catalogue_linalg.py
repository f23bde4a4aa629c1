"""Op catalogue rows: lucid.linalg and the matrix functions torch keeps at its top level.

Inputs are well-conditioned (general matrices shifted by a multiple of the identity,
positive-definite ones as A A^T + n I, triangular ones with a dominant diagonal). Functions of
a symmetric matrix read one triangle only, so, as PyTorch's own tests do, their rows
symmetrise the input inside the op: gradcheck then perturbs a symmetric matrix. Eigenvectors
and singular vectors are fixed only up to sign, so their rows compare sign-invariant
quantities (the vectors' squares, projectors).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import torch

SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
SINGULAR_BATCH = np.stack([np.eye(3), np.zeros((3, 3))])
NOT_POSITIVE_DEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])
INTEGER_MATRIX = np.ones((3, 3), dtype=np.int64)


# ----------------------------------------------------------------------------- inputs
def _general(*shapes: tuple[int, ...], shift: float = 3.0):
    """Uniform matrices plus shift * I on the square part: far from singular."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = []
        for shape in shapes:
            array = rng.uniform(-1.0, 1.0, shape)
            if len(shape) >= 2:
                array = array + shift * np.eye(shape[-2], shape[-1])
            arrays.append(array.astype(dtype))
        return arrays

    return make


def _positive_definite(*shape: int):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        array = rng.uniform(-1.0, 1.0, shape)
        spd = array @ np.swapaxes(array, -1, -2) + shape[-1] * np.eye(shape[-1])
        return [spd.astype(dtype)]

    return make


def _with_rhs(make_matrix: Any, *shapes: tuple[int, ...]):
    """The matrices of `make_matrix`, then uniform right-hand sides of `shapes`."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = make_matrix(rng, dtype)
        return arrays + [rng.uniform(-1.0, 1.0, shape).astype(dtype) for shape in shapes]

    return make


def _lower_factor(n: int, rhs: tuple[int, ...] | None = None):
    """A lower-triangular factor with a positive, dominant diagonal (and a right-hand side)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        factor = np.tril(rng.uniform(-1.0, 1.0, (n, n))) + 2.0 * np.eye(n)
        if rhs is None:
            return [factor.astype(dtype)]
        return [rng.uniform(-1.0, 1.0, rhs).astype(dtype), factor.astype(dtype)]

    return make


def _separated_spectrum(*shape: int):
    """Symmetric matrices with the eigenvalues -1.5, -0.5, 0.5, ... (one apart) in random
    orthonormal bases.

    An eigenvector moves by the perturbation over the eigenvalue gap, so a gap of one keeps
    single-precision eigenvectors and their gradients within a few eps of the exact ones on
    any LAPACK; uniform entries may give gaps of 0.01, where each LAPACK's rounding shows.
    """

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        n = shape[-1]
        basis, _ = np.linalg.qr(rng.uniform(-1.0, 1.0, shape))
        eigenvalues = np.arange(n) - (n - 1) / 2
        array = (basis * eigenvalues) @ np.swapaxes(basis, -1, -2)
        return [array.astype(dtype)]

    return make


def _symmetric(a: Any) -> Any:
    """The symmetric (for complex inputs, Hermitian) part: the input a function of a symmetric
    matrix reads."""
    if isinstance(a, np.ndarray):
        return (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    return (a + a.mH) / 2


def _quietly(function: Any) -> Any:
    """The call without the deprecation warning torch (and lucid) give for the old names."""

    def call(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function(*args, **kwargs)

    return call


def _squares(tensor: Any) -> Any:
    """|v|^2 elementwise: unchanged by the sign (or, for complex vectors, the phase) each
    eigenvector or singular vector is fixed only up to."""
    return (tensor * tensor.conj()).real


def _indefinite(*shapes: tuple[int, ...]):
    """Symmetric matrices with a small diagonal (Bunch-Kaufman then takes 2x2 pivots as well
    as 1x1 ones), then uniform right-hand sides of the further `shapes`."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        array = rng.uniform(-1.0, 1.0, shapes[0])
        array = array + np.swapaxes(array, -1, -2)
        n = shapes[0][-1]
        array[..., np.arange(n), np.arange(n)] *= 0.05
        rhs = [rng.uniform(-1.0, 1.0, shape).astype(dtype) for shape in shapes[1:]]
        return [array.astype(dtype)] + rhs

    return make


def _factored(*shapes: tuple[int, ...]):
    """LD and pivots of _indefinite's matrices (lucid's factor, which the ldl_factor_ex rows
    hold to torch's), then the right-hand sides."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        matrix, *rhs = _indefinite(*shapes)(rng, dtype)
        ld, pivots, _ = lucid.linalg.ldl_factor_ex(lucid.tensor(matrix))
        return [ld.numpy(), pivots.numpy()] + rhs

    return make


def _lower_symmetric(a: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose lower triangle is a's: what the LDL factorisation reads."""
    return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)


# --------------------------------------------------------------------------- references
def _slogdet_reference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.linalg.slogdet(a)


def _solve_reference(a: np.ndarray, b: np.ndarray, left: bool = True) -> np.ndarray:
    if left:
        return (
            np.linalg.solve(a, b[..., None])[..., 0]
            if b.ndim == a.ndim - 1
            else np.linalg.solve(a, b)
        )
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _matrix_power_reference(n: int) -> Any:
    return lambda a: np.linalg.matrix_power(a, n)


# ------------------------------------------------------------------------- error inputs
def _not_matrix(name: str) -> ErrorInput:
    return ErrorInput(
        [(3,)], RuntimeError, rf"{name}: The input tensor A must have at least 2 dimensions\."
    )


def _not_square(name: str) -> ErrorInput:
    return ErrorInput(
        [(2, 3)],
        RuntimeError,
        rf"{name}: A must be batches of square matrices, but they are 2 by 3 matrices",
    )


def _integer(name: str) -> ErrorInput:
    return ErrorInput(
        [INTEGER_MATRIX],
        RuntimeError,
        rf"{name}: Expected a floating point or complex tensor as input\. Got Long",
    )


_SINGULAR_INV = [
    ErrorInput(
        [SINGULAR],
        RuntimeError,
        r"linalg\.inv: The diagonal element 3 is zero, the inversion could not be completed "
        r"because the input matrix is singular\.",
    ),
    ErrorInput(
        [SINGULAR_BATCH],
        RuntimeError,
        r"linalg\.inv: \(Batch element 1\): The diagonal element 1 is zero",
    ),
]


L = lucid.linalg
TL = torch.linalg

# torch 2.13's CPU matrix_exp returns inf or nan for float16 and bfloat16 matrices whose
# exponential is finite (around 1 here); lucid computes in double and rounds (a test in
# tests/ops/test_low_precision.py checks that against float64)
_MATRIX_EXP_LOW_PRECISION = (
    "PyTorch's CPU kernel gives inf/nan for float16/bfloat16 matrices with a finite "
    "exponential; lucid's result is checked against float64 in test_low_precision.py"
)

ROWS = [
    # --------------------------------------------------------------- inverse, det
    OpCase(
        "linalg.inv",
        L.inv,
        TL.inv,
        reference=np.linalg.inv,
        make_inputs=_general((2, 3, 3)),
        error_inputs=[
            _not_matrix("linalg.inv"),
            _not_square("linalg.inv"),
            _integer("linalg.inv"),
            *_SINGULAR_INV,
        ],
    ),
    OpCase(
        "linalg.inv_ex",
        L.inv_ex,
        TL.inv_ex,
        make_inputs=_general((3, 3)),
        output_index=0,
    ),
    OpCase(
        "inverse",
        lucid.inverse,
        torch.inverse,
        reference=np.linalg.inv,
        make_inputs=_general((3, 3)),
    ),  # fmt: skip
    OpCase(
        "linalg.det",
        L.det,
        TL.det,
        reference=np.linalg.det,
        make_inputs=_general((2, 3, 3)),
        error_inputs=[_not_matrix("linalg.det"), _not_square("linalg.det"), _integer("linalg.det")],
    ),
    OpCase("det", lucid.det, torch.det, reference=np.linalg.det, make_inputs=_general((4, 4))),
    OpCase(
        "linalg.slogdet",
        L.slogdet,
        TL.slogdet,
        reference=_slogdet_reference,
        make_inputs=_general((2, 3, 3), shift=-3.0),
        output_index=1,
        error_inputs=[_not_square("linalg.slogdet"), _integer("linalg.slogdet")],
    ),
    OpCase(
        "slogdet.sign",
        lucid.slogdet,
        torch.slogdet,
        reference=_slogdet_reference,
        make_inputs=_general((2, 3, 3), shift=-3.0),
        output_index=0,
        differentiable=False,
    ),  # fmt: skip
    OpCase("logdet", lucid.logdet, torch.logdet, make_inputs=_positive_definite(2, 3, 3)),
    # --------------------------------------------------------------------- solvers
    OpCase(
        "linalg.solve",
        L.solve,
        TL.solve,
        reference=_solve_reference,
        make_inputs=_with_rhs(_general((2, 3, 3)), (2, 3, 2)),
        error_inputs=[
            ErrorInput(
                [(3, 3), np.ones((3, 2), np.float32)],
                RuntimeError,
                r"linalg\.solve: Expected A and B to have the same dtype, but found A of type "
                r"Double and B of type Float instead",
            ),
            ErrorInput(
                [(3, 3), (4, 2)],
                RuntimeError,
                r"linalg\.solve: Incompatible shapes of A and B for the equation AX = B "
                r"\(3x3 and 4x2\)",
            ),
            ErrorInput(
                [np.zeros((3, 3)), (3, 2)],
                RuntimeError,
                r"lucid\.linalg\.solve: The solver failed because the input matrix is singular\.",
            ),
            ErrorInput(
                [(2, 3), (2, 1)],
                RuntimeError,
                r"linalg\.solve: A must be batches of square matrices, but they are 2 by 3 "
                "matrices",
            ),
        ],
    ),
    OpCase(
        "linalg.solve.vector_broadcast",
        L.solve,
        TL.solve,
        reference=_solve_reference,
        make_inputs=_with_rhs(_general((2, 3, 3)), (2, 3)),
    ),
    OpCase(
        "linalg.solve.batch_broadcast",
        L.solve,
        TL.solve,
        make_inputs=_with_rhs(_general((2, 3, 3)), (3, 4)),
    ),
    OpCase(
        "linalg.solve.right",
        L.solve,
        TL.solve,
        reference=_solve_reference,
        kwargs={"left": False},
        make_inputs=_with_rhs(_general((3, 3)), (2, 3)),
    ),
    OpCase(
        "linalg.solve_ex",
        L.solve_ex,
        TL.solve_ex,
        make_inputs=_with_rhs(_general((3, 3)), (3, 2)),
        output_index=0,
    ),
    OpCase(
        "linalg.solve_triangular.upper",
        L.solve_triangular,
        TL.solve_triangular,
        kwargs={"upper": True},
        make_inputs=_with_rhs(_general((2, 3, 3)), (2, 3, 2)),
        error_inputs=[
            ErrorInput(
                [(3, 3), (3,)],
                RuntimeError,
                r"linalg\.solve_triangular: The input tensor B must have at least 2 dimensions\.",
                {"upper": True},
            ),
            ErrorInput(
                [(3, 3), (4, 2)],
                RuntimeError,
                r"linalg\.solve_triangular: Incompatible shapes of A and B for the equation "
                r"AX = B \(3x3 and 4x2\)",
                {"upper": True},
            ),
        ],
    ),
    OpCase(
        "linalg.solve_triangular.lower_unit_right",
        L.solve_triangular,
        TL.solve_triangular,
        kwargs={"upper": False, "left": False, "unitriangular": True},
        make_inputs=_with_rhs(_general((3, 3)), (2, 3)),
        # with inf in A, which entries of X are NaN depends on the order in which the BLAS
        # kernel (torch's and NumPy's differ) applies and skips the updates
        extremes=False,
    ),
    # -------------------------------------------------------------------- cholesky
    OpCase(
        "linalg.cholesky",
        lambda a: L.cholesky(_symmetric(a)),
        lambda a: TL.cholesky(_symmetric(a)),
        reference=np.linalg.cholesky,
        make_inputs=_positive_definite(2, 3, 3),
        error_inputs=[
            ErrorInput(
                [NOT_POSITIVE_DEFINITE],
                RuntimeError,
                r"linalg\.cholesky: The factorization could not be completed because the input "
                r"is not positive-definite \(the leading minor of order 2 is not "
                r"positive-definite\)\.",
            ),
        ],
    ),
    OpCase(
        "linalg.cholesky.upper",
        lambda a: L.cholesky(_symmetric(a), upper=True),
        lambda a: TL.cholesky(_symmetric(a), upper=True),
        make_inputs=_positive_definite(3, 3),
    ),
    OpCase(
        "linalg.cholesky_ex",
        lambda a: L.cholesky_ex(_symmetric(a)),
        lambda a: TL.cholesky_ex(_symmetric(a)),
        make_inputs=_positive_definite(3, 3),
        output_index=0,
    ),
    OpCase(
        "cholesky",
        _quietly(lambda a: lucid.cholesky(_symmetric(a))),
        _quietly(lambda a: torch.cholesky(_symmetric(a))),
        make_inputs=_positive_definite(3, 3),
    ),
    OpCase(
        "cholesky_solve",
        lambda b, factor: lucid.cholesky_solve(b, factor.tril()),
        lambda b, factor: torch.cholesky_solve(b, factor.tril()),
        make_inputs=_lower_factor(3, (3, 2)),
    ),
    OpCase(
        "cholesky_solve.upper",
        lambda b, factor: lucid.cholesky_solve(b, factor.tril().mT, upper=True),
        lambda b, factor: torch.cholesky_solve(b, factor.tril().mT, upper=True),
        make_inputs=_lower_factor(3, (3, 2)),
    ),
    OpCase(
        "cholesky_inverse",
        lambda factor: lucid.cholesky_inverse(factor.tril()),
        lambda factor: torch.cholesky_inverse(factor.tril()),
        make_inputs=_lower_factor(3),
    ),
    # -------------------------------------------------------------------------- qr
    OpCase(
        "linalg.qr.Q",
        L.qr,
        TL.qr,
        make_inputs=_general((2, 4, 3)),
        output_index=0,
        error_inputs=[
            ErrorInput(
                [(3, 3)],
                RuntimeError,
                r"qr received unrecognized mode 'full' but expected one of 'reduced' "
                r"\(default\), 'r', or 'complete'",
                {"mode": "full"},
            ),
            _integer("linalg.qr"),
        ],
    ),  # fmt: skip
    OpCase("linalg.qr.R", L.qr, TL.qr, make_inputs=_general((2, 4, 3)), output_index=1),
    # A NaN or inf column spreads through a wide QR differently in torch's LAPACK and
    # NumPy's (blocked Householder updates): the non-finite garbage is not compared.
    OpCase(
        "linalg.qr.wide_Q",
        L.qr,
        TL.qr,
        make_inputs=_general((3, 5)),
        output_index=0,
        extremes=False,
    ),
    OpCase(
        "linalg.qr.wide_R",
        L.qr,
        TL.qr,
        make_inputs=_general((3, 5)),
        output_index=1,
        extremes=False,
    ),
    OpCase(
        "linalg.qr.complete",
        L.qr,
        TL.qr,
        kwargs={"mode": "complete"},
        make_inputs=_general((3, 5)),
        output_index=0,
        extremes=False,
    ),
    OpCase(
        "linalg.qr.r",
        L.qr,
        TL.qr,
        kwargs={"mode": "r"},
        make_inputs=_general((4, 3)),
        output_index=1,
        differentiable=False,
    ),  # fmt: skip
    OpCase(
        "qr",
        _quietly(lucid.qr),
        _quietly(torch.qr),
        make_inputs=_general((4, 3)),
        output_index=1,
    ),  # fmt: skip
    # ------------------------------------------------------------------------ eigh
    OpCase(
        "linalg.eigh",
        L.eigh,
        TL.eigh,
        make_inputs=lambda rng, dtype: [
            _symmetric(rng.uniform(-1.0, 1.0, (2, 4, 4))).astype(dtype)
        ],
        output_index=0,
        # gradients are checked on the symmetrised rows below
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(3, 3)],
                RuntimeError,
                r"Expected UPLO argument to be 'L' or 'U', but got X",
                {"UPLO": "X"},
            ),
            ErrorInput(
                [INTEGER_MATRIX],
                NotImplementedError,
                "\"linalg_eigh_cpu\" not implemented for 'Long'",
            ),
            _not_square("linalg.eigh"),
        ],
    ),
    OpCase(
        "linalg.eigh.eigenvalues",
        lambda a: L.eigh(_symmetric(a)),
        lambda a: TL.eigh(_symmetric(a)),
        make_inputs=_general((2, 4, 4), shift=0.0),
        output_index=0,
    ),
    OpCase(
        "linalg.eigh.eigenvectors",
        lambda a: _squares(L.eigh(_symmetric(a)).eigenvectors),
        lambda a: _squares(TL.eigh(_symmetric(a)).eigenvectors),
        # single-precision eigenvectors are accurate to eps / (eigenvalue gap)
        make_inputs=_separated_spectrum(2, 4, 4),
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "linalg.eigh.upper",
        lambda a: _squares(L.eigh(_symmetric(a), UPLO="U").eigenvectors),
        lambda a: _squares(TL.eigh(_symmetric(a), UPLO="U").eigenvectors),
        make_inputs=_separated_spectrum(4, 4),
    ),
    OpCase(
        "linalg.eigvalsh",
        lambda a: L.eigvalsh(_symmetric(a)),
        lambda a: TL.eigvalsh(_symmetric(a)),
        make_inputs=_general((3, 3), shift=0.0),
    ),
    # ------------------------------------------------------------------------- svd
    OpCase(
        "linalg.svd.S",
        L.svd,
        TL.svd,
        kwargs={"full_matrices": False},
        make_inputs=_general((2, 4, 3), shift=0.0),
        output_index=1,
        error_inputs=[_integer("linalg.svd"), _not_matrix("linalg.svd")],
    ),  # fmt: skip
    OpCase(
        "linalg.svd.U",
        lambda a: _squares(L.svd(a, full_matrices=False).U),
        lambda a: _squares(TL.svd(a, full_matrices=False).U),
        make_inputs=_general((2, 4, 3), shift=0.0),
    ),
    OpCase(
        "linalg.svd.Vh",
        lambda a: _squares(L.svd(a, full_matrices=False).Vh),
        lambda a: _squares(TL.svd(a, full_matrices=False).Vh),
        make_inputs=_general((2, 4, 3), shift=0.0),
    ),
    OpCase(
        "linalg.svd.wide_projector",
        lambda a: (lambda r: r.Vh.mH @ r.Vh)(L.svd(a, full_matrices=False)),
        lambda a: (lambda r: r.Vh.mH @ r.Vh)(TL.svd(a, full_matrices=False)),
        make_inputs=_general((3, 5), shift=0.0),
    ),
    OpCase(
        "linalg.svd.full_U",
        lambda a: _squares(L.svd(a).U[..., :3]),
        lambda a: _squares(TL.svd(a).U[..., :3]),
        make_inputs=_general((5, 3), shift=0.0),
        # single-precision singular vectors are accurate to eps / (singular value gap)
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "linalg.svdvals",
        L.svdvals,
        TL.svdvals,
        reference=lambda a: np.linalg.svd(a, compute_uv=False),
        make_inputs=_general((2, 3, 5), shift=0.0),
    ),  # fmt: skip
    OpCase(
        "svd",
        lambda a: _squares(lucid.svd(a).V),
        lambda a: _squares(torch.svd(a).V),
        make_inputs=_general((4, 3), shift=0.0),
    ),
    OpCase(
        "svd.compute_uv",
        lambda a: lucid.svd(a, compute_uv=False),
        lambda a: torch.svd(a, compute_uv=False),
        make_inputs=_general((4, 3), shift=0.0),
        output_index=1,
    ),
    # -------------------------------------------------------------- pinv, lstsq
    OpCase(
        "linalg.pinv",
        L.pinv,
        TL.pinv,
        reference=np.linalg.pinv,
        make_inputs=_general((2, 4, 3), shift=0.0),
        error_inputs=[
            ErrorInput(
                [INTEGER_MATRIX],
                RuntimeError,
                r"linalg\.pinv\(Long\{\[3, 3\]\}\): expected a tensor with 2 or more dimensions "
                r"of float, double, cfloat or cdouble types",
            ),
        ],
    ),  # fmt: skip
    OpCase(
        "linalg.pinv.wide",
        L.pinv,
        TL.pinv,
        make_inputs=_general((3, 5), shift=0.0),
    ),  # fmt: skip
    OpCase(
        "linalg.pinv.hermitian",
        lambda a: L.pinv(_symmetric(a), hermitian=True),
        lambda a: TL.pinv(_symmetric(a), hermitian=True),
        make_inputs=_general((4, 4)),
    ),
    OpCase(
        "linalg.pinv.rank_deficient_atol",
        lambda a: L.pinv(a, atol=0.5),
        lambda a: TL.pinv(a, atol=0.5),
        make_inputs=lambda rng, dtype: [np.diag([3.0, 2.0, 0.1]).astype(dtype)],
        # the cut singular value makes the rank jump under perturbation: no derivative
        differentiable=False,
    ),
    OpCase("pinverse", lucid.pinverse, torch.pinverse, make_inputs=_general((4, 3), shift=0.0)),
    OpCase(
        "linalg.lstsq.solution",
        L.lstsq,
        TL.lstsq,
        make_inputs=_with_rhs(_general((2, 5, 3)), (2, 5, 2)),
        output_index=0,
        error_inputs=[
            ErrorInput(
                [(3, 3), (3, 2)],
                RuntimeError,
                r"lucid\.linalg\.lstsq: parameter `driver` should be one of "
                r"\(gels, gelsy, gelsd, gelss\)",
                {"driver": "gelsx"},
            ),
            ErrorInput(
                [(3, 3), (4, 2)],
                RuntimeError,
                r"lucid\.linalg\.lstsq: input\.size\(-2\) should match other\.size\(-2\)",
            ),
        ],
    ),
    OpCase(
        "linalg.lstsq.residuals",
        L.lstsq,
        TL.lstsq,
        kwargs={"driver": "gelsd"},
        make_inputs=_with_rhs(_general((5, 3)), (5, 2)),
        output_index=1,
    ),
    OpCase(
        "linalg.lstsq.singular_values",
        L.lstsq,
        TL.lstsq,
        kwargs={"driver": "gelss"},
        make_inputs=_with_rhs(_general((5, 3)), (5, 2)),
        output_index=3,
        differentiable=False,
    ),
    OpCase(
        "linalg.lstsq.vector",
        L.lstsq,
        TL.lstsq,
        make_inputs=_with_rhs(_general((3, 3)), (3,)),
        output_index=0,
    ),
    # ------------------------------------------------------ matrix_exp, matrix_power
    OpCase(
        "linalg.matrix_exp",
        L.matrix_exp,
        TL.matrix_exp,
        make_inputs=_general((2, 3, 3), shift=0.0),
        error_inputs=[_not_square("linalg.matrix_exp"), _integer("linalg.matrix_exp")],
        low_precision_skip=_MATRIX_EXP_LOW_PRECISION,
    ),
    OpCase(
        "matrix_exp.scaled",
        lucid.matrix_exp,
        torch.matrix_exp,
        make_inputs=lambda rng, dtype: [(8.0 * rng.uniform(-1.0, 1.0, (3, 3))).astype(dtype)],
        rtol32=1e-4,
        low_precision_skip=_MATRIX_EXP_LOW_PRECISION,
    ),
    OpCase(
        "linalg.matrix_power",
        L.matrix_power,
        TL.matrix_power,
        reference=lambda a, n: np.linalg.matrix_power(a, n),
        kwargs={"n": 3},
        make_inputs=_general((2, 3, 3), shift=0.0),
        error_inputs=[
            ErrorInput(
                [(3, 3), 2.0],
                TypeError,
                r"linalg_matrix_power\(\): argument 'n' \(position 2\) must be int, not float",
            ),
            ErrorInput(
                [(2, 3)],
                RuntimeError,
                r"linalg\.matrix_power: A must be batches of square matrices",
                {"n": 2},
            ),
        ],
    ),
    OpCase(
        "matrix_power.negative",
        lucid.matrix_power,
        torch.matrix_power,
        reference=lambda a, n: np.linalg.matrix_power(a, n),
        kwargs={"n": -2},
        make_inputs=_general((3, 3)),
    ),  # fmt: skip
    OpCase(
        "matrix_power.zero",
        lucid.matrix_power,
        torch.matrix_power,
        reference=lambda a, n: np.linalg.matrix_power(a, n),
        kwargs={"n": 0},
        make_inputs=_general((3, 3)),
    ),  # fmt: skip
    # ------------------------------------------------------------ rank, cond, norms
    OpCase(
        "linalg.matrix_rank",
        L.matrix_rank,
        TL.matrix_rank,
        reference=np.linalg.matrix_rank,
        make_inputs=lambda rng, dtype: [
            np.stack([SINGULAR, np.eye(3), np.zeros((3, 3))]).astype(dtype)
        ],
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [INTEGER_MATRIX],
                RuntimeError,
                r"This function doesn't handle types other than float and double",
            ),
        ],
    ),
    OpCase(
        "linalg.matrix_rank.hermitian_atol",
        lambda a: L.matrix_rank(_symmetric(a), hermitian=True, atol=1.0),
        lambda a: TL.matrix_rank(_symmetric(a), hermitian=True, atol=1.0),
        make_inputs=_general((2, 4, 4), shift=0.0),
        differentiable=False,
    ),
    OpCase(
        "linalg.cond", L.cond, TL.cond, reference=np.linalg.cond, make_inputs=_general((2, 3, 3))
    ),
    OpCase(
        "linalg.cond.-2",
        L.cond,
        TL.cond,
        kwargs={"p": -2},
        make_inputs=_general((4, 3)),
    ),  # fmt: skip
    OpCase(
        "linalg.cond.1",
        L.cond,
        TL.cond,
        reference=np.linalg.cond,
        kwargs={"p": 1},
        make_inputs=_general((2, 3, 3)),
        # torch's own backward of cond(p=1) fails (it fills the inverse in place); lucid's
        # gradient is checked in tests/linalg
        differentiable=False,
    ),
    OpCase(
        "linalg.matrix_norm",
        L.matrix_norm,
        TL.matrix_norm,
        make_inputs=_general((2, 3, 4), shift=0.0),
        error_inputs=[
            ErrorInput(
                [(3, 3)], RuntimeError, r"linalg\.matrix_norm: Order 3 not supported\.", {"ord": 3}
            ),
            ErrorInput(
                [(3,)],
                RuntimeError,
                r"linalg\.matrix_norm: The input tensor A must have at least 2 dimensions\.",
            ),
        ],
    ),
    *[
        OpCase(
            f"linalg.matrix_norm.{ord}",
            L.matrix_norm,
            TL.matrix_norm,
            reference=lambda a, ord: np.linalg.norm(a, ord, axis=(-2, -1)),
            kwargs={"ord": ord},
            make_inputs=_general((2, 3, 4), shift=0.0),
        )
        for ord in ("nuc", 1, -1, 2, -2, float("inf"), float("-inf"))
    ],
    OpCase(
        "linalg.matrix_norm.dims_keepdim",
        L.matrix_norm,
        TL.matrix_norm,
        kwargs={"ord": 1, "dim": (2, 0), "keepdim": True},
        make_inputs=_general((3, 2, 4), shift=0.0),
    ),
    OpCase(
        "linalg.norm",
        L.norm,
        TL.norm,
        make_inputs=_general((2, 3, 4), shift=0.0),
        error_inputs=[
            ErrorInput(
                [(2, 2, 2)],
                RuntimeError,
                r"linalg\.norm: If dim is not specified but ord is, the input must be 1D or 2D\. "
                r"Got 3D\.",
                {"ord": 2},
            ),
        ],
    ),
    OpCase(
        "linalg.norm.matrix_ord",
        L.norm,
        TL.norm,
        kwargs={"ord": -2},
        make_inputs=_general((3, 4), shift=0.0),
    ),
    OpCase(
        "linalg.norm.vector_dim",
        L.norm,
        TL.norm,
        kwargs={"ord": 3, "dim": 1},
        make_inputs=_general((3, 4), shift=0.0),
    ),
    OpCase(
        "linalg.vector_norm",
        L.vector_norm,
        TL.vector_norm,
        kwargs={"ord": 1.5, "dim": (0, 2)},
        make_inputs=_general((2, 3, 4), shift=0.0),
        error_inputs=[
            ErrorInput(
                [(3, 3), "fro"],
                TypeError,
                r"linalg_vector_norm\(\): argument 'ord' \(position 2\) must be Number, not str",
            ),
        ],
    ),
    # ------------------------------------------------------------ products of vectors
    OpCase(
        "linalg.cross",
        L.cross,
        TL.cross,
        reference=np.cross,
        shapes=[(4, 3), (1, 3)],
        error_inputs=[
            ErrorInput(
                [(4,), (4,)],
                RuntimeError,
                r"linalg\.cross: inputs dimension -1 must have length 3\. Got 4 and 4",
            ),
            ErrorInput(
                [(2, 3), (3,)],
                RuntimeError,
                r"linalg\.cross: inputs must have the same number of dimensions\.",
            ),
        ],
    ),
    OpCase(
        "cross",
        lucid.cross,
        torch.cross,
        kwargs={"dim": 0},
        shapes=[(3, 4), (3, 4)],
        reference=lambda a, b, dim: np.cross(a, b, axis=dim),
    ),  # fmt: skip
    OpCase(
        "linalg.vecdot",
        L.vecdot,
        TL.vecdot,
        shapes=[(2, 4), (3, 1, 4)],
        reference=lambda a, b: np.sum(a * b, -1),
        sums=True,
        error_inputs=[
            ErrorInput(
                [np.ones(3, np.float32), np.ones(3)],
                RuntimeError,
                r"linalg\.vecdot: Expected x and y to have the same dtype, but found x of type "
                r"Float and y of type Double instead",
            ),
        ],
    ),  # fmt: skip
    OpCase(
        "linalg.multi_dot",
        lambda *tensors: L.multi_dot(tensors),
        lambda *tensors: TL.multi_dot(tensors),
        reference=lambda *arrays: np.linalg.multi_dot(arrays),
        shapes=[(3,), (3, 10), (10, 2), (2, 4)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 3)], RuntimeError, r"multi_dot\(\): expected at least 2 tensors but got 1"
            ),
            ErrorInput(
                [(3, 3), (3,), (3, 3)],
                RuntimeError,
                r"multi_dot\(\): tensor 1 must be 2D but got 1D",
            ),
            ErrorInput(
                [(3, 3), (2, 2)],
                RuntimeError,
                r"multi_dot\(\): tensors 0 and 1 with shapes \[3, 3\] and \[2, 2\] cannot be "
                r"multiplied",
            ),
        ],
    ),
    OpCase(
        "linalg.householder_product",
        L.householder_product,
        TL.householder_product,
        shapes=[(2, 5, 3), (2, 2)],
        low=-1.0,
        high=1.0,
        sums=True,
        error_inputs=[
            ErrorInput(
                [(2, 3), (2,)],
                RuntimeError,
                r"lucid\.linalg\.householder_product: input\.shape\[-2\] must be greater than or "
                r"equal to input\.shape\[-1\]",
            ),
            ErrorInput(
                [(3, 2), (3,)],
                RuntimeError,
                r"lucid\.linalg\.householder_product: input\.shape\[-1\] must be greater than or "
                r"equal to tau\.shape\[-1\]",
            ),
        ],
    ),
    # ---------------------------------------------------------------- tensor forms
    OpCase(
        "linalg.tensorinv",
        L.tensorinv,
        TL.tensorinv,
        reference=np.linalg.tensorinv,
        kwargs={"ind": 2},
        make_inputs=lambda rng, dtype: [
            (rng.uniform(-1, 1, (6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6).astype(dtype)
        ],
        error_inputs=[
            ErrorInput(
                [(3, 3)],
                RuntimeError,
                r"Expected a strictly positive integer for 'ind', but got 0",
                {"ind": 0},
            ),
            ErrorInput(
                [(2, 3)],
                RuntimeError,
                r"Expected self to satisfy the requirement prod\(self\.shape\[ind:\]\) == "
                r"prod\(self\.shape\[:ind\]\), but got 3 != 2",
                {"ind": 1},
            ),
        ],
    ),
    OpCase(
        "linalg.tensorsolve",
        L.tensorsolve,
        TL.tensorsolve,
        reference=np.linalg.tensorsolve,
        make_inputs=lambda rng, dtype: [
            (rng.uniform(-1, 1, (6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6).astype(dtype),
            rng.uniform(-1, 1, (2, 3)).astype(dtype),
        ],
    ),
    OpCase(
        "linalg.tensorsolve.dims",
        L.tensorsolve,
        TL.tensorsolve,
        kwargs={"dims": (0,)},
        make_inputs=lambda rng, dtype: [
            (rng.uniform(-1, 1, (6, 6)) + 3 * np.eye(6)).reshape(6, 2, 3).astype(dtype),
            rng.uniform(-1, 1, (2, 3)).astype(dtype),
        ],
    ),
    OpCase(
        "linalg.diagonal",
        L.diagonal,
        TL.diagonal,
        kwargs={"offset": 1},
        shapes=[(2, 3, 4)],
        reference=lambda a, offset: np.diagonal(a, offset, -2, -1),
    ),
    # -------------------------------------------------------------------------- LU
    OpCase(
        "linalg.lu_factor",
        L.lu_factor,
        TL.lu_factor,
        make_inputs=_general((2, 4, 4), shift=0.0),
        output_index=0,
        error_inputs=[
            ErrorInput(
                [INTEGER_MATRIX], NotImplementedError, "\"lu_cpu\" not implemented for 'Long'"
            ),
            ErrorInput(
                [(3,)],
                RuntimeError,
                r"lucid\.lu_factor: Expected tensor with 2 or more dimensions\. Got size: \[3\] "
                "instead",
            ),
        ],
    ),
    OpCase(
        "linalg.lu_factor.pivots",
        L.lu_factor,
        TL.lu_factor,
        make_inputs=_general((2, 4, 4), shift=0.0),
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "linalg.lu_factor_ex.info",
        L.lu_factor_ex,
        TL.lu_factor_ex,
        make_inputs=lambda rng, dtype: [
            np.stack([SINGULAR, np.eye(3), np.zeros((3, 3))]).astype(dtype)
        ],
        output_index=2,
        differentiable=False,
    ),
    OpCase("linalg.lu.L", L.lu, TL.lu, make_inputs=_general((2, 3, 3), shift=0.0), output_index=1),
    OpCase("linalg.lu.U", L.lu, TL.lu, make_inputs=_general((3, 3), shift=0.0), output_index=2),
    OpCase(
        "linalg.lu.P_wide",
        L.lu,
        TL.lu,
        make_inputs=_general((3, 5), shift=0.0),
        output_index=0,
        differentiable=False,
    ),  # fmt: skip
    OpCase(
        "linalg.lu_solve",
        lambda a, b: L.lu_solve(*L.lu_factor(a), b),
        lambda a, b: TL.lu_solve(*TL.lu_factor(a), b),
        make_inputs=_with_rhs(_general((2, 3, 3), shift=0.0), (2, 3, 2)),
    ),
    OpCase(
        "linalg.lu_solve.adjoint_right",
        lambda a, b: L.lu_solve(*L.lu_factor(a), b, left=False, adjoint=True),
        lambda a, b: TL.lu_solve(*TL.lu_factor(a), b, left=False, adjoint=True),
        make_inputs=_with_rhs(_general((3, 3), shift=0.0), (2, 3)),
    ),
    OpCase(
        "lu_unpack.P",
        lambda a: lucid.lu_unpack(*L.lu_factor(a))[0],
        lambda a: torch.lu_unpack(*TL.lu_factor(a))[0],
        make_inputs=_general((2, 4, 3), shift=0.0),
        differentiable=False,
    ),
    OpCase(
        "lu_unpack.L",
        lambda a: lucid.lu_unpack(*L.lu_factor(a))[1],
        lambda a: torch.lu_unpack(*TL.lu_factor(a))[1],
        make_inputs=_general((4, 4), shift=0.0),
    ),
    # -------------------------------------------------------------- geqrf, orgqr, ormqr
    # geqrf is LAPACK's own kernel: where a NaN or inf column spreads depends on its blocking
    # and scaling, which torch's LAPACK and NumPy's do differently, so the non-finite
    # garbage is not compared (as for the wide QR rows above).
    OpCase(
        "geqrf.a",
        lucid.geqrf,
        torch.geqrf,
        make_inputs=_general((2, 5, 3)),
        output_index=0,
        differentiable=False,
        extremes=False,
        error_inputs=[
            ErrorInput(
                [(3,)], RuntimeError, r"lucid\.geqrf: input must have at least 2 dimensions\."
            ),
            ErrorInput(
                [INTEGER_MATRIX], NotImplementedError, r"\"geqrf_cpu\" not implemented for 'Long'"
            ),
        ],
    ),  # fmt: skip
    OpCase(
        "geqrf.tau",
        lucid.geqrf,
        torch.geqrf,
        make_inputs=_general((3, 5)),
        output_index=1,
        differentiable=False,
        extremes=False,
    ),
    OpCase(
        "orgqr",
        lucid.orgqr,
        torch.orgqr,
        shapes=[(5, 3), (2,)],
        low=-1.0,
        high=1.0,
        sums=True,
    ),
    OpCase(
        "ormqr",
        lucid.ormqr,
        torch.ormqr,
        shapes=[(2, 5, 3), (2, 3), (2, 5, 4)],
        low=-1.0,
        high=1.0,
        sums=True,
        error_inputs=[
            ErrorInput(
                [(5,), (3,), (5, 2)],
                RuntimeError,
                r"lucid\.ormqr: input must have at least 2 dimensions\.",
            ),
            ErrorInput(
                [(5, 3), (3,), (5,)],
                RuntimeError,
                r"lucid\.ormqr: other must have at least 2 dimensions\.",
            ),
            ErrorInput(
                [(5, 3), (3,), (5, 2)],
                RuntimeError,
                r"lucid\.ormqr: other\.shape\[-1\] must be equal to input\.shape\[-2\]",
                {"left": False},
            ),
            ErrorInput(
                [(5, 3), (2,), (5, 2)],
                RuntimeError,
                r"lucid\.ormqr: tau\.shape\[-1\] must be equal to min\(other\.shape\[-2\], "
                r"input\.shape\[-1\]\)",
            ),
            ErrorInput(
                [(5, 3), (1, 3), (5, 2)],
                RuntimeError,
                r"lucid\.ormqr: Expected tau to have one dimension less than input, but got "
                r"tau\.ndim equal to 2 and input\.ndim is equal to 2",
            ),
            ErrorInput(
                [(2, 5, 3), (2, 3), (5, 2)],
                RuntimeError,
                r"lucid\.ormqr: Expected other to have the same number of dimensions as input",
            ),
            ErrorInput(
                [(2, 5, 3), (3, 3), (2, 5, 2)],
                RuntimeError,
                r"lucid\.ormqr: Expected batch dimensions of tau to be equal to "
                r"input\.shape\[:-2\], but got \[3\]",
            ),
            ErrorInput(
                [(2, 5, 3), (2, 3), (3, 5, 2)],
                RuntimeError,
                r"lucid\.ormqr: Expected batch dimensions of other to be equal to "
                r"input\.shape\[:-2\], but got \[3\]",
            ),
            ErrorInput(
                [(5, 3), np.ones(3, np.float32), (5, 2)],
                RuntimeError,
                r"lucid\.ormqr: Expected input and tau to have the same dtype, but input has "
                r"dtypeDouble and tau has dtype Float",
            ),
            ErrorInput(
                [np.ones((5, 3), np.int64), np.ones(3, np.int64), np.ones((5, 2), np.int64)],
                NotImplementedError,
                r"\"ormqr_cpu\" not implemented for 'Long'",
            ),
        ],
    ),
    OpCase(
        "ormqr.left_transpose",
        lucid.ormqr,
        torch.ormqr,
        shapes=[(5, 3), (3,), (5, 2)],
        kwargs={"transpose": True},
        low=-1.0,
        high=1.0,
        sums=True,
    ),
    OpCase(
        "ormqr.right",
        lucid.ormqr,
        torch.ormqr,
        shapes=[(4, 2), (2,), (3, 4)],
        kwargs={"left": False},
        low=-1.0,
        high=1.0,
        sums=True,
    ),
    OpCase(
        "ormqr.right_transpose",
        lucid.ormqr,
        torch.ormqr,
        shapes=[(2, 4, 5), (2, 4), (2, 3, 4)],
        kwargs={"left": False, "transpose": True},
        low=-1.0,
        high=1.0,
        sums=True,
        # LAPACK's reflector kernel skips the trailing zeros of v and the zero columns of C,
        # so whether an inf there makes 0 * inf depends on where the zeros fall; the other
        # ormqr rows compare extremes
        extremes=False,
    ),
    # --------------------------------------------------------------------------- LDL
    # The compact LD and the pivots are compared with torch's sytrf exactly (pivots) and to
    # rounding (LD); PyTorch defines no derivative for either op.
    OpCase(
        "linalg.ldl_factor_ex.LD",
        L.ldl_factor_ex,
        TL.ldl_factor_ex,
        make_inputs=_indefinite((3, 6, 6)),
        output_index=0,
        differentiable=False,
        error_inputs=[
            _not_matrix(r"lucid\.linalg\.ldl_factor_ex"),
            _not_square(r"lucid\.linalg\.ldl_factor_ex"),
            _integer(r"lucid\.linalg\.ldl_factor_ex"),
            ErrorInput(
                [np.ones((2, 2), np.float16)],
                NotImplementedError,
                "\"ldl_factor_kernel_cpu\" not implemented for 'Half'",
            ),
            ErrorInput(
                [(2, 2)],
                TypeError,
                r"linalg_ldl_factor_ex\(\): argument 'hermitian' must be bool, not int",
                {"hermitian": 1},
            ),
            ErrorInput(
                [SINGULAR_BATCH],
                RuntimeError,
                r"lucid\.linalg\.ldl_factor_ex: Unknown error code: 1\.",
                {"check_errors": True},
            ),
        ],
    ),
    OpCase(
        "linalg.ldl_factor_ex.pivots",
        L.ldl_factor_ex,
        TL.ldl_factor_ex,
        make_inputs=_indefinite((4, 7, 7)),
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "linalg.ldl_factor_ex.info",
        L.ldl_factor_ex,
        TL.ldl_factor_ex,
        make_inputs=lambda rng, dtype: [
            np.stack([SINGULAR, np.eye(3), np.zeros((3, 3)), np.diag([1.0, 0.0, 2.0])]).astype(
                dtype
            )
        ],
        output_index=2,
        differentiable=False,
    ),
    OpCase(
        "linalg.ldl_factor.hermitian",
        L.ldl_factor,
        TL.ldl_factor,
        kwargs={"hermitian": True},
        make_inputs=_indefinite((5, 5)),
        output_index=0,
        differentiable=False,
        # ldl_factor raises where an extreme input leaves a zero diagonal block
        extremes=False,
        error_inputs=[
            ErrorInput(
                [SINGULAR_BATCH],
                RuntimeError,
                r"lucid\.linalg\.ldl_factor: Unknown error code: 1\.",
            )
        ],
    ),
    OpCase(
        "linalg.ldl_solve",
        lambda a, b: L.ldl_solve(*L.ldl_factor_ex(a)[:2], b),
        lambda a, b: TL.ldl_solve(*TL.ldl_factor_ex(a)[:2], b),
        reference=lambda a, b: np.linalg.solve(_lower_symmetric(a), b),
        make_inputs=_indefinite((2, 5, 5), (2, 5, 3)),
        differentiable=False,
    ),
    OpCase(
        "linalg.ldl_solve.broadcast",
        lambda a, b: L.ldl_solve(*L.ldl_factor_ex(a)[:2], b, hermitian=True),
        lambda a, b: TL.ldl_solve(*TL.ldl_factor_ex(a)[:2], b, hermitian=True),
        reference=lambda a, b: np.linalg.solve(_lower_symmetric(a), b),
        make_inputs=_indefinite((4, 4), (2, 4, 2)),
        differentiable=False,
    ),
    OpCase(
        "linalg.ldl_solve.factored",
        L.ldl_solve,
        TL.ldl_solve,
        make_inputs=_factored((2, 6, 6), (2, 6, 2)),
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [np.eye(3), np.ones(3, np.int32), np.ones((3, 1), np.float32)],
                RuntimeError,
                r"Expected b and A to have the same dtype, but found b of type Float and A of "
                r"type Double instead\.",
            ),
            ErrorInput(
                [np.eye(3), np.ones(3, np.int32), (4, 1)],
                RuntimeError,
                r"Incompatible matrix sizes for lucid\.linalg\.ldl_solve: each A matrix is 3 by "
                r"3 but each b matrix is 4 by 1",
            ),
            ErrorInput(
                [np.eye(3), np.ones(3, np.int32), (3,)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)",
            ),
            ErrorInput(
                [np.eye(3), np.ones(2, np.int32), (3, 1)],
                RuntimeError,
                r"lucid\.linalg\.ldl_solve: Expected LD\.shape\[:-1\] and pivots\.shape to be the "
                r"same, but got pivots with shape \[2\] instead",
            ),
            ErrorInput(
                [np.eye(3), (3,), (3, 1)],
                RuntimeError,
                r"lucid\.linalg\.ldl_solve: Expected pivots to be integers\. Got Double",
            ),
            ErrorInput(
                [np.eye(3), np.array([1, 2, 4], np.int32), (3, 1)],
                RuntimeError,
                r"Pivots given to ldl_solve must all satisfy \|pivot\| <= LD\.size\(-2\)",
            ),
            ErrorInput(
                [np.eye(3), np.array([0, 2, 3], np.int32), (3, 1)],
                RuntimeError,
                r"Pivots given to ldl_solve must all satisfy \|pivot\| >= 1",
            ),
            ErrorInput(
                [np.eye(3)[None].repeat(2, 0), np.ones((2, 3), np.int32), (3, 3, 1)],
                RuntimeError,
                r"The size of tensor a \(3\) must match the size of tensor b \(2\) at "
                r"non-singleton dimension 0",
            ),
        ],
    ),
]
