"""lucid.linalg beyond the catalogue rows: the namespace, named results, info codes, the
gauge rules of eigh/svd gradients, drivers and tolerances, LU, and torch's older names."""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

NAN = float("nan")


def _float64(array: np.ndarray, requires_grad: bool = False) -> lucid.Tensor:
    tensor = lucid.from_numpy(np.asarray(array, dtype=np.float64).copy())
    return tensor.requires_grad_() if requires_grad else tensor


def _well_conditioned(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(shape[-2], shape[-1])


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(17)


# ------------------------------------------------------------------------- namespace
def test_linalg_is_a_lazy_submodule_and_an_attribute() -> None:
    module = importlib.import_module("lucid.linalg")
    assert lucid.linalg is module is sys.modules["lucid.linalg"]
    assert "linalg" in dir(lucid)
    assert issubclass(lucid.linalg.LinAlgError, RuntimeError)
    assert lucid.linalg.matmul is lucid.matmul


def test_import_lucid_loads_neither_linalg_nor_its_op_family() -> None:
    import subprocess

    code = (
        "import sys, lucid\n"
        "family = ('lucid.linalg', 'lucid.ops.decompositions')\n"
        "print(sorted(name for name in sys.modules if name in family))\n"
        "lucid.det(lucid.eye(2))\n"
        "print('lucid.ops.decompositions' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split("\n")[:2] == ["[]", "True"], result.stderr


def test_results_are_named_tuples_printed_as_return_types(rng) -> None:
    a = _float64(_well_conditioned(rng, 3, 3))
    result = lucid.linalg.svd(a)
    u, s, vh = result
    assert result.U is u and result.S is s and result.Vh is vh
    assert repr(result).startswith("lucid.return_types.linalg_svd(\nU=tensor(")
    assert lucid.linalg.slogdet(a)._fields == ("sign", "logabsdet")
    assert repr(lucid.slogdet(a)).startswith("lucid.return_types.slogdet(")
    assert lucid.linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert lucid.linalg.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")
    assert lucid.svd(a)._fields == ("U", "S", "V")
    assert lucid.linalg.lu(a)._fields == ("P", "L", "U")
    assert lucid.linalg.lu_factor_ex(a)._fields == ("LU", "pivots", "info")


def test_tensor_methods_are_the_top_level_functions(rng) -> None:
    a = _float64(_well_conditioned(rng, 3, 3))
    spd = a @ a.mT
    np.testing.assert_array_equal(a.det().numpy(), lucid.det(a).numpy())
    np.testing.assert_array_equal(a.inverse().numpy(), lucid.linalg.inv(a).numpy())
    np.testing.assert_array_equal(a.matrix_power(3).numpy(), lucid.matrix_power(a, 3).numpy())
    np.testing.assert_array_equal(spd.logdet().numpy(), lucid.logdet(spd).numpy())
    np.testing.assert_array_equal(a.pinverse().numpy(), lucid.pinverse(a).numpy())
    np.testing.assert_array_equal(a.matrix_exp().numpy(), lucid.linalg.matrix_exp(a).numpy())
    assert a.svd().V.shape == (3, 3)
    assert a.slogdet().sign.item() == lucid.linalg.slogdet(a).sign.item()


# ----------------------------------------------------------------------- info codes
@requires_torch
def test_inv_ex_reports_the_zero_pivot_per_matrix_as_torch_does() -> None:
    stack = np.stack(
        [np.eye(3), np.zeros((3, 3)), [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]]
    )
    inverse, info = lucid.linalg.inv_ex(_float64(stack))
    expected_inverse, expected_info = torch.linalg.inv_ex(torch.from_numpy(stack))
    assert info.dtype == lucid.int32
    assert info.tolist() == expected_info.tolist() == [0, 1, 3]
    np.testing.assert_array_equal(inverse.numpy()[0], np.eye(3))
    with pytest.raises(lucid.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal"):
        lucid.linalg.inv_ex(_float64(stack), check_errors=True)


@requires_torch
def test_cholesky_ex_and_solve_ex_report_failures_without_raising() -> None:
    stack = np.stack([np.eye(2) * 4.0, [[1.0, 2.0], [2.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]])
    factor, info = lucid.linalg.cholesky_ex(_float64(stack))
    expected_factor, expected_info = torch.linalg.cholesky_ex(torch.from_numpy(stack))
    assert info.tolist() == expected_info.tolist() == [0, 2, 1]
    # where the factorisation stops, the partial factor is LAPACK's, failed pivot included
    np.testing.assert_array_equal(factor.numpy(), expected_factor.numpy())
    np.testing.assert_array_equal(factor.numpy()[1], [[1.0, 0.0], [2.0, -3.0]])
    singular = np.stack([np.eye(2), np.zeros((2, 2))])
    result, info = lucid.linalg.solve_ex(_float64(singular), _float64(np.ones((2, 2, 1))))
    _, expected_info = torch.linalg.solve_ex(
        torch.from_numpy(singular), torch.ones(2, 2, 1, dtype=torch.float64)
    )
    assert info.tolist() == expected_info.tolist() == [0, 1]
    np.testing.assert_array_equal(result.numpy()[0], np.ones((2, 1)))


@requires_torch
def test_lu_factor_matches_torchs_pivots_and_reconstructs(rng) -> None:
    array = rng.uniform(-1.0, 1.0, (4, 5, 5))
    lu, pivots = lucid.linalg.lu_factor(_float64(array))
    expected_lu, expected_pivots = torch.linalg.lu_factor(torch.from_numpy(array))
    assert pivots.dtype == lucid.int32
    assert pivots.tolist() == expected_pivots.tolist()
    np.testing.assert_allclose(lu.numpy(), expected_lu.numpy(), rtol=1e-10, atol=1e-12)
    permutation, lower, upper = lucid.linalg.lu(_float64(array))
    np.testing.assert_allclose((permutation @ lower @ upper).numpy(), array, atol=1e-12)
    unpacked = lucid.lu_unpack(lu, pivots)
    np.testing.assert_array_equal(unpacked.P.numpy(), permutation.numpy())
    solution = lucid.linalg.lu_solve(lu, pivots, _float64(np.ones((4, 5, 2))))
    np.testing.assert_allclose(array @ solution.numpy(), np.ones((4, 5, 2)), atol=1e-10)


# ------------------------------------------------------------- gradients, gauge rules
def test_cond_in_the_one_norm_has_a_gradient(rng) -> None:
    a = _float64(_well_conditioned(rng, 3, 3), requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x: lucid.linalg.cond(x, 1), (a,))
    assert lucid.autograd.gradcheck(lambda x: lucid.linalg.cond(x, "fro"), (a,))


def test_gauge_invariant_losses_of_svd_and_eigh_have_finite_gradients(rng) -> None:
    a = _float64(rng.uniform(-1.0, 1.0, (4, 3)), requires_grad=True)
    u, s, vh = lucid.linalg.svd(a, full_matrices=False)
    # U diag(S) Vh is A itself: its gradient is the incoming one, whatever the signs
    (u * s.unsqueeze(-2) @ vh).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones((4, 3)), atol=1e-12)
    b = _float64(rng.uniform(-1.0, 1.0, (3, 3)), requires_grad=True)
    assert lucid.autograd.gradcheck(
        lambda x: (lambda v: v @ v.mT)(lucid.linalg.eigh((x + x.mT) / 2).eigenvectors[..., :1]),
        (b,),
    )


@requires_torch
def test_repeated_singular_values_and_eigenvalues_give_torchs_nan_gradients() -> None:
    for decompose in (lambda x: lucid.linalg.svd(x)[0], lambda x: lucid.linalg.eigh(x)[1]):
        a = lucid.eye(3, dtype=lucid.float64).requires_grad_()
        decompose(a).sum().backward()
        assert np.isnan(a.grad.numpy()).all()
    expected = torch.eye(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.svd(expected)[0].sum().backward()
    assert torch.isnan(expected.grad).all()
    # singular values alone stay differentiable at repeated values
    a = lucid.eye(3, dtype=lucid.float64).requires_grad_()
    lucid.linalg.svdvals(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3), atol=1e-12)


def test_qr_derivatives_torch_does_not_define_raise_its_errors(rng) -> None:
    a = _float64(rng.uniform(-1.0, 1.0, (4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        lucid.linalg.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows"):
        lucid.linalg.qr(a, mode="complete").Q.sum().backward()


def test_svd_gradient_ignores_the_columns_past_the_rank_with_full_matrices(rng) -> None:
    array = rng.uniform(-1.0, 1.0, (5, 3))
    full = _float64(array, requires_grad=True)
    reduced = _float64(array, requires_grad=True)
    lucid.linalg.svd(full).S.sum().backward()
    lucid.linalg.svd(reduced, full_matrices=False).S.sum().backward()
    np.testing.assert_allclose(full.grad.numpy(), reduced.grad.numpy(), atol=1e-12)


# ------------------------------------------------------------ drivers and tolerances
@requires_torch
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_returns_what_each_driver_computes(rng, driver) -> None:
    a, b = rng.uniform(-1.0, 1.0, (2, 5, 3)), rng.uniform(-1.0, 1.0, (2, 5, 2))
    result = lucid.linalg.lstsq(_float64(a), _float64(b), driver=driver)
    expected = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        actual, wanted = getattr(result, name), getattr(expected, name)
        assert tuple(actual.shape) == tuple(wanted.shape), name
        np.testing.assert_allclose(actual.numpy(), wanted.numpy(), rtol=1e-10, atol=1e-12)


@requires_torch
def test_tolerances_of_pinv_and_matrix_rank_follow_torch() -> None:
    array = np.diag([4.0, 1.0, 1e-3, 1e-17])
    for kwargs in ({}, {"atol": 0.5}, {"rtol": 0.1}, {"atol": 0.01, "rtol": 0.5}, {"tol": 0.5}):
        rank = lucid.linalg.matrix_rank(_float64(array), **kwargs)
        expected = torch.linalg.matrix_rank(torch.from_numpy(array), **kwargs)
        assert rank.item() == expected.item(), kwargs
        if "tol" not in kwargs:
            pinv = lucid.linalg.pinv(_float64(array), **kwargs)
            expected_pinv = torch.linalg.pinv(torch.from_numpy(array), **kwargs)
            np.testing.assert_allclose(pinv.numpy(), expected_pinv.numpy(), rtol=1e-12)
    atol = lucid.tensor([0.5, 2.0], dtype=lucid.float64)
    ranks = lucid.linalg.matrix_rank(_float64(np.stack([array, array])), atol=atol)
    assert ranks.tolist() == [2, 1]


# ------------------------------------------------------------------- old names
def test_old_top_level_names_warn_as_torch_does(rng) -> None:
    a = _float64(_well_conditioned(rng, 3, 3))
    spd = a @ a.mT
    with pytest.warns(UserWarning, match="lucid.cholesky is deprecated"):
        lucid.cholesky(spd)
    with pytest.warns(UserWarning, match="lucid.qr is deprecated"):
        lucid.qr(a)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        lucid.cross(a, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.linalg.cross(a, a)


@requires_torch
def test_svd_without_uv_returns_zero_u_and_v(rng) -> None:
    array = rng.uniform(-1.0, 1.0, (4, 3))
    result = lucid.svd(_float64(array), compute_uv=False)
    expected = torch.svd(torch.from_numpy(array), compute_uv=False)
    for actual, wanted in zip(result, expected):
        assert tuple(actual.shape) == tuple(wanted.shape)
        np.testing.assert_allclose(actual.numpy(), wanted.numpy(), rtol=1e-12, atol=1e-12)


@requires_torch
def test_non_finite_inputs_propagate_or_raise_as_in_torch() -> None:
    nan_matrix = np.full((3, 3), NAN)
    with pytest.raises(lucid.linalg.LinAlgError, match="contained non-finite values"):
        lucid.linalg.svd(_float64(nan_matrix))
    with pytest.raises(lucid.linalg.LinAlgError, match="linalg.eigh: The algorithm failed"):
        lucid.linalg.eigh(_float64(nan_matrix))
    assert np.isnan(lucid.linalg.inv(_float64(nan_matrix)).numpy()).all()
    assert np.isnan(lucid.linalg.det(_float64(nan_matrix)).item())
    with_inf = np.eye(3)
    with_inf[0, 1] = np.inf
    # eigh reads the lower triangle only, so an inf above the diagonal is never seen
    values = lucid.linalg.eigvalsh(_float64(with_inf))
    expected = torch.linalg.eigvalsh(torch.from_numpy(with_inf))
    np.testing.assert_array_equal(values.numpy(), expected.numpy())
    assert np.isnan(lucid.linalg.svdvals(_float64(with_inf)).numpy()).all()
    assert lucid.linalg.cond(_float64(np.zeros((3, 3))), 1).item() == np.inf


def test_batched_solvers_take_one_lapack_call_for_the_whole_stack(rng) -> None:
    """A stack of 2000 small systems: a Python loop over the batch would take seconds."""
    import time

    a = _float64(_well_conditioned(rng, 2000, 4, 4))
    b = _float64(rng.uniform(-1.0, 1.0, (2000, 4, 1)))
    start = time.perf_counter()
    for function in (
        lambda: lucid.linalg.solve(a, b),
        lambda: lucid.linalg.inv(a),
        lambda: lucid.linalg.eigh(a),
        lambda: lucid.linalg.svd(a),
        lambda: lucid.linalg.matrix_exp(a),
        lambda: lucid.linalg.lu_factor(a),
        lambda: lucid.linalg.solve_triangular(a, b, upper=True),
    ):
        function()
    assert time.perf_counter() - start < 1.0


def test_det_of_a_singular_matrix_has_the_cofactor_gradient() -> None:
    """Rank n - 1 leaves nonzero cofactors (adj of [[1, 2], [2, 4]] is [[4, -2], [-2, 1]]),
    which lucid returns through the SVD where the inverse does not exist; torch 2.13 returns
    zeros there, which its own gradcheck rejects."""
    singular = _float64([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    lucid.linalg.det(singular).backward()
    np.testing.assert_allclose(singular.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    rank_one = _float64([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], requires_grad=True)
    assert lucid.autograd.gradcheck(lucid.linalg.det, (rank_one,))
    stack = _float64(np.stack([np.eye(3), np.zeros((3, 3))]), requires_grad=True)
    lucid.linalg.det(stack).sum().backward()
    np.testing.assert_allclose(stack.grad.numpy(), np.stack([np.eye(3), np.zeros((3, 3))]))


@requires_torch
@pytest.mark.parametrize("shape", [(2, 70, 70), (100, 45), (45, 100)])
def test_blocked_lu_matches_torch_across_panels(rng, shape) -> None:
    """Matrices wider than one panel of the blocked elimination, square and not."""
    array = rng.uniform(-1.0, 1.0, shape)
    lu, pivots, info = lucid.linalg.lu_factor_ex(_float64(array))
    expected_lu, expected_pivots, expected_info = torch.linalg.lu_factor_ex(torch.from_numpy(array))
    assert pivots.tolist() == expected_pivots.tolist()
    assert info.tolist() == expected_info.tolist()
    np.testing.assert_allclose(lu.numpy(), expected_lu.numpy(), rtol=1e-9, atol=1e-11)


# ------------------------------------------------------------------ geqrf, orgqr, ormqr
def test_geqrf_records_a_node_whose_backward_is_torchs_error(rng) -> None:
    a, tau = lucid.geqrf(_float64(_well_conditioned(rng, 4, 3), requires_grad=True))
    assert a.grad_fn.name() == "GeqrfBackward0"
    assert a.grad_fn is tau.grad_fn
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented"):
        a.sum().backward()


def test_geqrf_factors_reproduce_the_matrix_through_orgqr_and_ormqr(rng) -> None:
    array = _well_conditioned(rng, 2, 5, 3)
    a, tau = _float64(array).geqrf()
    q = a.orgqr(tau)
    r = lucid.triu(a[..., :3, :])
    np.testing.assert_allclose((q @ r).numpy(), array, rtol=1e-12, atol=1e-12)
    # Q^T A is R stacked on zeros, computed without forming Q
    qt_a = a.ormqr(tau, _float64(array), transpose=True).numpy()
    np.testing.assert_allclose(qt_a[..., :3, :], r.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qt_a[..., 3:, :], 0.0, atol=1e-12)


@requires_torch
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_gradients_match_torchs(rng, left, transpose) -> None:
    a, tau = rng.uniform(-1, 1, (2, 4, 3)), rng.uniform(-1, 1, (2, 3))
    other = rng.uniform(-1, 1, (2, 4, 2) if left else (2, 2, 4))
    grad = rng.uniform(-1, 1, (2, 4, 2) if left else (2, 2, 4))
    ours = [_float64(x, requires_grad=True) for x in (a, tau, other)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (a, tau, other)]
    result = lucid.ormqr(*ours, left, transpose)
    assert result.grad_fn.name() == "OrmqrBackward0"
    result.backward(_float64(grad))
    torch.ormqr(*theirs, left, transpose).backward(torch.tensor(grad))
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=1e-12)
