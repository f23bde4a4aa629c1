"""lucid.linalg.ldl_factor / ldl_factor_ex / ldl_solve beyond the catalogue rows: LAPACK's
Bunch-Kaufman pivots on many matrices (2x2 blocks, blocked sizes, non-finite entries), the
solve without torch, and PyTorch's refusal to differentiate either."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

SPECIALS = (0.0, np.nan, np.inf, -np.inf, 1e30, -1e30, 5e-324)


def _indefinite(rng: np.random.Generator, *shape: int, diagonal: float = 0.05) -> np.ndarray:
    array = rng.standard_normal(shape)
    n = shape[-1]
    array[..., np.arange(n), np.arange(n)] *= diagonal
    return array


def _assert_factor_matches_torch(array: np.ndarray) -> None:
    ours = lucid.linalg.ldl_factor_ex(lucid.tensor(array))
    theirs = torch.linalg.ldl_factor_ex(torch.from_numpy(array))
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    tolerance = 1e-4 if array.dtype == np.float32 else 1e-9
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=tolerance, atol=tolerance)


@requires_torch
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 17, 64, 70])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pivots_and_factor_match_lapack_sytrf(rng, n, dtype) -> None:
    """Batches that mix 1x1 and 2x2 pivots, past the size where LAPACK switches to its
    blocked kernel, read from the lower triangle of non-symmetric input."""
    array = _indefinite(rng, 4, n, n).astype(dtype)
    pivots = lucid.linalg.ldl_factor(lucid.tensor(array)).pivots.numpy()
    if n >= 3:
        assert (pivots < 0).any() and (pivots > 0).any()
    _assert_factor_matches_torch(array)


@requires_torch
def test_non_finite_entries_pivot_as_lapack_does(rng) -> None:
    for trial in range(100):
        n = int(rng.integers(2, 6))
        array = rng.standard_normal((n, n))
        for _ in range(int(rng.integers(1, 4))):
            i, j = rng.integers(0, n, 2)
            array[i, j] = SPECIALS[int(rng.integers(0, len(SPECIALS)))]
        if trial % 4 == 0:
            array[np.arange(n), np.arange(n)] = 0.0
        ours = lucid.linalg.ldl_factor_ex(lucid.tensor(array))
        theirs = torch.linalg.ldl_factor_ex(torch.from_numpy(array))
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
        np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
        np.testing.assert_allclose(
            ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-9, atol=1e-9, equal_nan=True
        )


def test_solve_of_the_factor_inverts_the_lower_symmetric_matrix(rng) -> None:
    array = _indefinite(rng, 3, 9, 9)
    symmetric = np.tril(array) + np.swapaxes(np.tril(array, -1), -1, -2)
    ld, pivots = lucid.linalg.ldl_factor(lucid.tensor(array), hermitian=True)
    assert (pivots.numpy() < 0).any()
    identity = lucid.tensor(np.broadcast_to(np.eye(9), (3, 9, 9)).copy())
    inverse = lucid.linalg.ldl_solve(ld, pivots, identity).numpy()
    np.testing.assert_allclose(symmetric @ inverse, np.broadcast_to(np.eye(9), (3, 9, 9)),
                               atol=1e-9)  # fmt: skip


def test_named_results_and_dtypes() -> None:
    result = lucid.linalg.ldl_factor_ex(lucid.tensor([[0.0, 2.0], [2.0, 0.0]]))
    assert result._fields == ("LD", "pivots", "info")
    assert result.pivots.dtype == lucid.int32 and result.info.dtype == lucid.int32
    assert result.pivots.tolist() == [-2, -2]
    assert result.LD.tolist() == [[0.0, 0.0], [2.0, 0.0]]
    assert lucid.linalg.ldl_factor(lucid.eye(2))._fields == ("LD", "pivots")


def test_info_is_the_first_zero_block_per_matrix() -> None:
    batch = lucid.tensor(
        [[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]]
    )
    assert lucid.linalg.ldl_factor_ex(batch).info.tolist() == [2, 1, 0]
    with pytest.raises(RuntimeError, match=r"ldl_factor: Unknown error code: 2\."):
        lucid.linalg.ldl_factor(batch)


def test_empty_batches() -> None:
    ld, pivots, info = lucid.linalg.ldl_factor_ex(lucid.zeros(2, 0, 0))
    assert ld.shape == (2, 0, 0) and pivots.shape == (2, 0) and info.tolist() == [0, 0]
    ld, pivots = lucid.linalg.ldl_factor(lucid.eye(3))
    assert lucid.linalg.ldl_solve(ld, pivots, lucid.zeros(3, 0)).shape == (3, 0)


@pytest.mark.parametrize("which", ["factor", "solve"])
def test_backward_through_ldl_raises_as_pytorch(which) -> None:
    a = lucid.tensor([[2.0, 1.0], [1.0, -3.0]], requires_grad=True)
    if which == "factor":
        output = lucid.linalg.ldl_factor(a).LD
        expected = "derivative for aten::linalg_ldl_factor_ex is not implemented"
    else:
        ld, pivots = lucid.linalg.ldl_factor(a.detach())
        output = lucid.linalg.ldl_solve(ld, pivots, a)
        expected = "derivative for aten::linalg_ldl_solve is not implemented"
    assert output.requires_grad
    with pytest.raises(RuntimeError, match=expected):
        output.sum().backward()
