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


def _reconstruction(ld: np.ndarray, pivots: np.ndarray) -> tuple[np.ndarray, ...]:
    """(L D L^T, |L| |D| |L^T|, order) from one matrix's compact sytrf factor, where P A P^T =
    L D L^T and P takes the rows of A in `order`.

    sytrf interchanges rows only inside the trailing block it works on; applying each
    interchange to the columns of L already computed too (as getrf does) gathers them into
    one permutation. The products leave out the structural zeros of L and D, so an infinite
    pivot makes its own terms NaN and no others.
    """
    n = ld.shape[-1]
    lower, d = np.eye(n), np.zeros((n, n))
    order, block = np.arange(n), np.zeros(n, np.int64)
    k = 0
    while k < n:
        size = 1 if pivots[k] > 0 else 2
        last, other = k + size - 1, abs(int(pivots[k])) - 1
        lower[[last, other], :k] = lower[[other, last], :k]
        order[[last, other]] = order[[other, last]]
        diagonal = np.tril(ld[k : k + size, k : k + size])
        d[k : k + size, k : k + size] = diagonal + np.tril(diagonal, -1).T
        lower[k + size :, k : k + size] = ld[k + size :, k : k + size]
        block[k : k + size] = k
        k += size
    rows = np.arange(n)[:, None]
    in_block = block[:, None] == block[None, :]
    in_lower = (rows == rows.T) | ((rows > rows.T) & ~in_block)
    present = in_lower[:, None, :, None] & in_lower[None, :, None, :] & in_block
    with np.errstate(invalid="ignore"):
        terms = lower[:, None, :, None] * d * lower[None, :, None, :]
    terms = np.where(present, terms, 0.0)
    return terms.sum((2, 3)), np.abs(terms).sum((2, 3)), order


@requires_torch
def test_non_finite_entries_pivot_as_lapack_does(rng) -> None:
    """LAPACK's pivots, info and non-finite entries on matrices with NaN, ±inf, ±1e30 and
    denormal entries; the finite values as a factorisation.

    Where ±1e30 terms cancel, an entry of the factor is rounding noise set by the BLAS's order
    and FMA: one whose exact value is 0.0625 came out -1.28e11 from MKL's sytrf on one CPU
    and -1.37e11 from lucid, both within eps of its 1e27-sized terms. So L D L^T must give
    back P A P^T within the componentwise backward error of block LDL^T, p(n) u (|A| +
    |L||D||L^T|) (Higham, Accuracy and Stability of Numerical Algorithms, Theorem 11.3; p a
    linear polynomial, here 4n with the product's own rounding, plus half the smallest
    denormal per rounding that underflows), and equal LAPACK's values only where no huge
    entry is read. NaN and infinities need no such care: a NaN term, or +inf meeting -inf,
    is NaN in every order, and float64 does not overflow on these entries.
    """
    eps = np.finfo(np.float64).eps
    denormal = np.finfo(np.float64).smallest_subnormal
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
        ld, lapack_ld = ours.LD.numpy(), theirs.LD.numpy()
        finite = np.isfinite(lapack_ld)
        np.testing.assert_array_equal(np.isfinite(ld), finite)
        np.testing.assert_array_equal(ld[~finite], lapack_ld[~finite])
        lower = np.tril(array)
        if not (np.abs(lower) == 1e30).any():
            np.testing.assert_allclose(ld[finite], lapack_ld[finite], rtol=1e-9, atol=1e-9)
        product, magnitudes, order = _reconstruction(ld, ours.pivots.numpy())
        symmetric = lower + np.tril(lower, -1).T
        permuted = symmetric[np.ix_(order, order)]
        checked = np.isfinite(product) & np.isfinite(permuted)
        error = np.abs(product[checked] - permuted[checked])
        bound = (2 * n * eps * (np.abs(permuted) + magnitudes) + n * denormal)[checked]
        assert (error <= bound).all(), f"trial {trial}: L D L^T misses P A P^T by {error - bound}"


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
