"""lucid.linalg.solve_triangular on triangles larger than one block (solved by blocks of
_TRIANGULAR_BLOCK rows): accuracy against the conditioning, gradients, broadcasting, and the
substitution fallbacks for zero and underflowing diagonals."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.ops.decompositions import _TRIANGULAR_BLOCK
from tests.torch_oracle import requires_torch, torch

# sizes around the block: exactly one, one row over, several blocks with a ragged last one
SIZES = [_TRIANGULAR_BLOCK, _TRIANGULAR_BLOCK + 1, 40, 100]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(3)


def _triangle(rng: np.random.Generator, n: int, upper: bool, *batch: int) -> np.ndarray:
    """A triangle with off-diagonals in [-1, 1] and a diagonal of magnitude in [1, 2], both
    signs; its condition number grows with n (about 1e2 at 17, up to 1e7 at 100)."""
    lower = np.tril(rng.uniform(-1.0, 1.0, batch + (n, n)), -1)
    diagonal = rng.uniform(1.0, 2.0, batch + (n,)) * rng.choice([-1.0, 1.0], batch + (n,))
    lower = lower + diagonal[..., None] * np.eye(n)
    return np.swapaxes(lower, -1, -2).copy() if upper else lower


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", SIZES)
def test_blocked_solve_is_as_accurate_as_the_conditioning_allows(rng, n, upper, dtype) -> None:
    """Normwise backward error within n * eps (a backward-stable solve), and forward error
    against a float64 LU solve of the same rounded inputs within cond(A) * eps."""
    triangle = _triangle(rng, n, upper).astype(dtype)
    b = rng.standard_normal((n, 5)).astype(dtype)
    x = lucid.linalg.solve_triangular(lucid.tensor(triangle), lucid.tensor(b), upper=upper)
    assert x.dtype == lucid.tensor(b).dtype
    x = x.numpy().astype(np.float64)
    triangle, b = triangle.astype(np.float64), b.astype(np.float64)
    eps = np.finfo(dtype).eps
    residual = np.linalg.norm(b - triangle @ x)
    backward_error = residual / (np.linalg.norm(triangle) * np.linalg.norm(x))
    assert backward_error <= n * eps
    reference = np.linalg.solve(triangle, b)
    forward_error = np.linalg.norm(x - reference) / np.linalg.norm(reference)
    assert forward_error <= np.linalg.cond(triangle) * eps


@requires_torch
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_blocked_solve_matches_torch_with_broadcast_batches(rng, upper, unitriangular, left):
    """A batch of triangles against one B, one triangle against a batch of B's (solved as one
    system with all their columns), and both batched."""
    n = 40
    cases = [((3,), ()), ((), (2, 3)), ((2, 1), (3,))]
    for triangle_batch, b_batch in cases:
        triangle = _triangle(rng, n, upper, *triangle_batch)
        b = rng.standard_normal(b_batch + ((n, 4) if left else (4, n)))
        flags = {"upper": upper, "left": left, "unitriangular": unitriangular}
        ours = lucid.linalg.solve_triangular(lucid.tensor(triangle), lucid.tensor(b), **flags)
        theirs = torch.linalg.solve_triangular(torch.tensor(triangle), torch.tensor(b), **flags)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [False, True])
def test_blocked_solve_passes_gradcheck(rng, upper, left) -> None:
    n = _TRIANGULAR_BLOCK + 4
    triangle = lucid.tensor(_triangle(rng, n, upper), requires_grad=True)
    b = lucid.tensor(rng.standard_normal((n, 2) if left else (2, n)), requires_grad=True)

    def solve(triangle, b):
        return lucid.linalg.solve_triangular(triangle, b, upper=upper, left=left)

    assert gradcheck(solve, [triangle, b])


@requires_torch
def test_blocked_solve_gradients_match_torch(rng) -> None:
    n = 40
    triangle = _triangle(rng, n, False, 2)
    b = rng.standard_normal((n, 3))
    ours_triangle = lucid.tensor(triangle, requires_grad=True)
    ours_b = lucid.tensor(b, requires_grad=True)
    theirs_triangle = torch.tensor(triangle, requires_grad=True)
    theirs_b = torch.tensor(b, requires_grad=True)
    lucid.linalg.solve_triangular(ours_triangle, ours_b, upper=False).pow(2).sum().backward()
    torch.linalg.solve_triangular(theirs_triangle, theirs_b, upper=False).pow(2).sum().backward()
    np.testing.assert_allclose(ours_triangle.grad.numpy(), theirs_triangle.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours_b.grad.numpy(), theirs_b.grad.numpy(), rtol=1e-10)


@requires_torch
@pytest.mark.parametrize("n", [4, 40])
def test_a_zero_on_a_large_diagonal_gives_torchs_inf_and_nan(rng, n) -> None:
    triangle = _triangle(rng, n, False)
    triangle[n // 2, n // 2] = 0.0
    b = rng.standard_normal((n, 3))
    ours = lucid.linalg.solve_triangular(lucid.tensor(triangle), lucid.tensor(b), upper=False)
    theirs = torch.linalg.solve_triangular(torch.tensor(triangle), torch.tensor(b), upper=False)
    assert np.isinf(ours.numpy()[n // 2]).all()
    # the same infs (with their signs) and NaNs in the same places; finite entries to rounding
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13, equal_nan=True)


@requires_torch
@pytest.mark.parametrize("n", [4, 40])
def test_a_diagonal_whose_lu_underflows_is_substituted_as_trsm_does(n) -> None:
    """Nonzero but tiny diagonal entries under a 1: partial pivoting's LU of that block ends
    on an exact zero pivot (1e-200 * 1e-200 underflows), which a substitution never forms."""
    triangle = np.eye(n)
    triangle[0, 0] = triangle[1, 1] = 1e-200
    triangle[1, 0] = 1.0
    b = np.ones((n, 2))
    ours = lucid.linalg.solve_triangular(lucid.tensor(triangle), lucid.tensor(b), upper=False)
    theirs = torch.linalg.solve_triangular(torch.tensor(triangle), torch.tensor(b), upper=False)
    assert ours.numpy()[0, 0] == 1e200
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
