"""lucid.lobpcg: eigenpairs of well-separated spectra (against NumPy's eigh and torch), both
methods, largest and smallest, batches, a generalised B and a preconditioner; its gradient
against torch's autograd and finite differences; PyTorch's errors; the tracker."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck
from tests.torch_oracle import requires_torch, torch

# a spectrum with clear gaps at both ends, so the 3 extreme pairs are well determined
SPECTRUM = np.concatenate([[0.5, 0.9, 1.4], np.linspace(3.0, 5.0, 14), [8.0, 10.0, 12.5]])


def _symmetric(rng: np.random.Generator, spectrum: np.ndarray = SPECTRUM) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((spectrum.size, spectrum.size)))
    return (q * spectrum) @ q.T


def _assert_same_vectors(ours: np.ndarray, theirs: np.ndarray, tolerance: float) -> None:
    """Eigenvectors are fixed up to sign: compare |cos| of matching columns with 1."""
    cosines = np.abs(np.sum(ours * theirs, axis=-2))
    np.testing.assert_allclose(cosines, 1.0, atol=tolerance)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_extreme_eigenpairs_match_eigh(rng, method, largest) -> None:
    a = _symmetric(rng)
    values, vectors = lucid.lobpcg(
        lucid.tensor(a), k=3, X=lucid.tensor(rng.standard_normal((20, 3))), method=method,
        largest=largest,
    )  # fmt: skip
    reference_values, reference_vectors = np.linalg.eigh(a)
    order = slice(None, -4, -1) if largest else slice(0, 3)
    np.testing.assert_allclose(values.numpy(), reference_values[order], rtol=1e-10)
    _assert_same_vectors(vectors.numpy(), reference_vectors[:, order], 1e-7)


def test_batches_and_a_random_start(rng) -> None:
    a = np.stack([_symmetric(rng), _symmetric(rng, SPECTRUM * 2)])
    values, vectors = lucid.lobpcg(lucid.tensor(a), k=2)
    assert values.shape == (2, 2) and vectors.shape == (2, 20, 2)
    np.testing.assert_allclose(values.numpy(), [[12.5, 10.0], [25.0, 20.0]], rtol=1e-10)


def test_default_k_is_one_and_float32_iterates_in_float32(rng) -> None:
    a = _symmetric(rng).astype(np.float32)
    values, vectors = lucid.lobpcg(lucid.tensor(a))
    assert values.dtype == vectors.dtype == lucid.float32
    assert values.shape == (1,) and vectors.shape == (20, 1)
    np.testing.assert_allclose(values.numpy(), [12.5], rtol=1e-4)


@requires_torch
@pytest.mark.parametrize("method", ["ortho", "basic"])
def test_generalised_problem_and_preconditioner_match_torch(rng, method) -> None:
    a = _symmetric(rng)
    spd = rng.standard_normal((20, 20))
    b = spd @ spd.T / 20 + np.eye(20)
    start = rng.standard_normal((20, 3))
    preconditioner = np.diag(1.0 / np.diag(a))
    arguments = {"k": 3, "method": method, "largest": False}
    values, vectors = lucid.lobpcg(
        lucid.tensor(a), B=lucid.tensor(b), X=lucid.tensor(start), iK=lucid.tensor(preconditioner),
        **arguments,
    )  # fmt: skip
    expected_values, expected_vectors = torch.lobpcg(
        torch.tensor(a), B=torch.tensor(b), X=torch.tensor(start),
        iK=torch.tensor(preconditioner), **arguments,
    )  # fmt: skip
    np.testing.assert_allclose(values.numpy(), expected_values.numpy(), rtol=1e-10)
    # B-orthonormal vectors: compare B-weighted cosines
    cosines = np.abs(np.sum(vectors.numpy() * (b @ expected_vectors.numpy()), axis=0))
    np.testing.assert_allclose(cosines, 1.0, atol=1e-7)


@requires_torch
@pytest.mark.parametrize("k", [1, 3])
def test_gradient_matches_torch_autograd(rng, k) -> None:
    a = _symmetric(rng)
    # an unsymmetric input: both symmetrise it before the iteration
    a = a + np.triu(rng.standard_normal((20, 20)) * 0.01, 1) - np.triu(a * 0, 1)
    start = rng.standard_normal((20, k))
    weights = rng.standard_normal((20, k))

    def loss(library, matrix):
        values, vectors = library.lobpcg(matrix, k=k, X=library.tensor(start))
        # eigenvectors are fixed up to sign: weigh each by the sign that makes it agree
        signs = np.sign(np.sum(vectors.detach().numpy() * weights, axis=0))
        return (values * values).sum() + (vectors * library.tensor(weights * signs)).sum()

    ours = lucid.tensor(a, requires_grad=True)
    loss(lucid, ours).backward()
    theirs = torch.tensor(a, requires_grad=True)
    loss(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-7)
    np.testing.assert_allclose(ours.grad.numpy(), ours.grad.numpy().T, atol=1e-12)


def _pairs(a: lucid.Tensor, start: lucid.Tensor) -> lucid.Tensor:
    """Sign-invariant eigenpair quantities, converged far below gradcheck's step."""
    values, vectors = lucid.lobpcg(a, k=2, X=start, tol=1e-13, niter=-1)
    return lucid.cat([values, (vectors * vectors).flatten(), vectors[0] * vectors[1]])


def test_gradcheck_and_gradgradcheck(rng) -> None:
    spectrum = np.array([0.5, 1.0, 1.5, 2.0, 5.0, 7.0])
    a = lucid.tensor(_symmetric(rng, spectrum), requires_grad=True)
    start = lucid.tensor(rng.standard_normal((6, 2)))
    assert gradcheck(lambda matrix: _pairs(matrix, start), (a,), atol=1e-6)
    assert gradgradcheck(lambda matrix: _pairs(matrix, start), (a,), atol=1e-5)


def test_grad_fn_name_and_unused_outputs(rng) -> None:
    a = lucid.tensor(_symmetric(rng), requires_grad=True)
    values, vectors = lucid.lobpcg(a, k=2, X=lucid.tensor(rng.standard_normal((20, 2))))
    assert values.grad_fn.name() == "LOBPCGAutogradFunctionBackward"
    values.sum().backward()
    np.testing.assert_allclose(np.trace(a.grad.numpy()), 2.0, rtol=1e-8)


def test_backward_with_b_raises_as_pytorch(rng) -> None:
    a = lucid.tensor(_symmetric(rng), requires_grad=True)
    values, _ = lucid.lobpcg(a, k=1, B=lucid.eye(20, dtype=lucid.float64))
    with pytest.raises(ValueError, match=r"lobpcg\.backward does not support backward with B"):
        values.sum().backward()


def test_tracker_sees_every_iteration_and_can_stop_it(rng) -> None:
    seen = []

    def tracker(worker):
        seen.append((worker.ivars["istep"], worker.X.shape, worker.E.shape))
        if worker.ivars["istep"] == 2:
            worker.bvars["force_stop"] = True

    lucid.lobpcg(lucid.tensor(_symmetric(rng)), k=2, tracker=tracker, tol=1e-300)
    assert seen == [(1, (20, 2), (2,)), (2, (20, 2), (2,))]


@requires_torch
@pytest.mark.parametrize(
    "arguments",
    [
        {"A": (9, 8)},
        {"A": (9, 9), "k": 4},
        {"A": (9, 9), "B": (8, 8)},
        {"A": (9, 9), "X": (8, 2)},
        {"A": (9, 9), "X": np.ones((9, 2), np.float32)},
        {"A": np.ones((9, 9), np.int32)},
        {"A": np.ones((9, 9), np.float16)},
        {"A": (9, 9), "k": 2, "n": 4},
    ],
    ids=str,
)
def test_errors_match_torch(arguments) -> None:
    def call(library):
        converted = {
            name: library.tensor(
                np.asarray(value) if isinstance(value, np.ndarray) else np.ones(value)
            )
            if name in ("A", "B", "X")
            else value
            for name, value in arguments.items()
        }
        return library.lobpcg(**converted)

    with pytest.raises(Exception) as expected:  # noqa: PT011  (compared below)
        call(torch)
    with pytest.raises(type(expected.value)) as raised:
        call(lucid)
    assert str(raised.value) == str(expected.value).replace("torch", "lucid")
