"""Op catalogue rows: complex numbers — the tensors made of parts, the parts and views of
complex tensors, the non-holomorphic ops on them, and linalg.eig, whose results are complex.

Rows whose op takes a complex tensor make their inputs complex in every column (the float32
column as complex64, the float64 one as complex128). Eigenvectors are fixed only up to a
phase, so their row compares the phase-invariant |v|^2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import torch

L = lucid.linalg
TL = None if torch is None else torch.linalg


def _complex_inputs(*shapes: tuple[int, ...], low: float = -2.0, high: float = 2.0) -> Any:
    """Complex arrays of `shapes`, each part uniform in [low, high), in the column's complex
    dtype (complex64 beside float32, complex128 beside float64)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        target = np.complex64 if np.dtype(dtype).itemsize <= 4 else np.complex128
        return [
            (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(target)
            for shape in shapes
        ]

    return make


# PyTorch's vectorised complex64 kernels read a denormal |z| as 0 in some lanes (sgn of a
# denormal is inf + nan j there, 1 in the scalar tail), which depends on the CPU's vector width.
_SIMD_DENORMALS = "torch's complex64 sgn at denormals depends on the CPU's vector lanes"


def _magnitude_and_angle(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [
        rng.uniform(0.2, 2.0, (3, 4)).astype(dtype),
        rng.uniform(-3.0, 3.0, (3, 4)).astype(dtype),
    ]


def _general(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    """A 4x4 matrix with well separated eigenvalues (a diagonal 1..4 plus a small part)."""
    return [(np.diag([1.0, 2.0, 3.0, 4.0]) + 0.3 * rng.uniform(-1.0, 1.0, (4, 4))).astype(dtype)]


def _power_sums(library: Any, eigenvalues: Any) -> Any:
    """sum(l^k) for k = 1..n: the eigenvalues whatever order LAPACK returns them in."""
    powers = [(eigenvalues**k).sum(-1) for k in range(1, eigenvalues.shape[-1] + 1)]
    return library.stack(powers)


def _power_sums_reference(a: np.ndarray) -> np.ndarray:
    eigenvalues = np.linalg.eigvals(a)
    return np.stack([(eigenvalues**k).sum(-1) for k in range(1, eigenvalues.shape[-1] + 1)])


def _exp_of(library: Any) -> Any:
    """V diag(exp(l)) V^-1 from eig: matrix_exp(A), unchanged by the order of the eigenpairs and
    the phase of each eigenvector."""

    def exp_of(a: Any) -> Any:
        eigenvalues, vectors = library.linalg.eig(a)
        return (vectors * eigenvalues.exp().unsqueeze(-2)) @ library.linalg.inv(vectors)

    return exp_of


def _expm_reference(a: np.ndarray) -> np.ndarray:
    eigenvalues, vectors = np.linalg.eig(a)
    return (vectors * np.exp(eigenvalues)[..., None, :]) @ np.linalg.inv(vectors)


ROWS: list[OpCase] = [
    # ---------------------------------------------------------- tensors made of parts
    OpCase(
        "complex",
        lucid.complex,
        None if torch is None else torch.complex,
        lambda re, im: re + 1j * im,
        shapes=((3, 4), (3, 4)),
        error_inputs=[
            ErrorInput(
                [np.ones(2, np.int32), np.ones(2, np.int32)],
                RuntimeError,
                "Expected both inputs to be Half, Float or Double tensors but got Int and Int",
            ),
        ],
    ),
    OpCase(
        "complex.broadcast",
        lucid.complex,
        None if torch is None else torch.complex,
        lambda re, im: re + 1j * im,
        shapes=((3, 4), (4,)),
    ),
    OpCase(
        "polar",
        lucid.polar,
        None if torch is None else torch.polar,
        lambda r, theta: r * np.exp(1j * theta),
        make_inputs=_magnitude_and_angle,
        float32_extremes_skip=_SIMD_DENORMALS,
    ),
    OpCase(
        "view_as_complex",
        lucid.view_as_complex,
        None if torch is None else torch.view_as_complex,
        lambda x: x[..., 0] + 1j * x[..., 1],
        shapes=((3, 4, 2),),
        error_inputs=[
            ErrorInput([(3, 3)], RuntimeError, "Tensor must have a last dimension of size 2"),
        ],
    ),
    # ------------------------------------------------------------ parts and views
    OpCase(
        "view_as_real",
        lucid.view_as_real,
        None if torch is None else torch.view_as_real,
        lambda z: np.stack([z.real, z.imag], -1),
        make_inputs=_complex_inputs((3, 4)),
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "view_as_real is only supported for complex tensors"),
        ],
    ),
    OpCase(
        "real.complex",
        lucid.real,
        None if torch is None else torch.real,
        np.real,
        make_inputs=_complex_inputs((3, 4)),
    ),
    OpCase(
        "imag.complex",
        lucid.imag,
        None if torch is None else torch.imag,
        np.imag,
        make_inputs=_complex_inputs((3, 4)),
    ),
    OpCase(
        "conj.complex",
        lambda z: lucid.conj(z) * 1,
        lambda z: torch.conj(z) * 1,
        np.conj,
        make_inputs=_complex_inputs((3, 4)),
    ),
    OpCase(
        "conj_physical.complex",
        lucid.conj_physical,
        None if torch is None else torch.conj_physical,
        np.conj,
        make_inputs=_complex_inputs((3, 4)),
    ),
    # ------------------------------------------------ non-holomorphic ops of complex values
    OpCase(
        "abs.complex",
        lucid.abs,
        None if torch is None else torch.abs,
        np.abs,
        make_inputs=_complex_inputs((3, 4)),
        float32_extremes_skip=_SIMD_DENORMALS,
    ),
    OpCase(
        "angle.complex",
        lucid.angle,
        None if torch is None else torch.angle,
        np.angle,
        make_inputs=_complex_inputs((3, 4)),
    ),
    OpCase(
        "sgn.complex",
        lucid.sgn,
        None if torch is None else torch.sgn,
        lambda z: z / np.abs(z),
        make_inputs=_complex_inputs((3, 4)),
        float32_extremes_skip=_SIMD_DENORMALS,
    ),
    OpCase(
        "mul.conj",
        lambda a, b: a * b.conj(),
        lambda a, b: a * b.conj(),
        lambda a, b: a * np.conj(b),
        make_inputs=_complex_inputs((3, 4), (3, 4)),
    ),
    # ------------------------------------------------------------------------- eig
    OpCase(
        "linalg.eigvals",
        lambda a: _power_sums(lucid, L.eigvals(a)),
        None if TL is None else (lambda a: _power_sums(torch, TL.eigvals(a))),
        _power_sums_reference,
        make_inputs=_general,
        rtol32=1e-4,
        atol32=1e-4,
    ),
    OpCase(
        "linalg.eig.eigenvalues",
        lambda a: _power_sums(lucid, L.eig(a).eigenvalues),
        None if TL is None else (lambda a: _power_sums(torch, TL.eig(a).eigenvalues)),
        _power_sums_reference,
        make_inputs=_general,
        rtol32=1e-4,
        atol32=1e-4,
    ),
    OpCase(
        "linalg.eig.exp",
        _exp_of(lucid),
        None if torch is None else _exp_of(torch),
        _expm_reference,
        make_inputs=_general,
        rtol32=1e-4,
        atol32=1e-4,
    ),
]
