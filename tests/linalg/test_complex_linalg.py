"""Complex linear algebra against PyTorch: eig and eigvals (complex results for real input
too), and the gradients of losses that do not depend on the eigenvectors' phases."""

import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _matrix(rng, dtype, shape=(4, 4)):
    array = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        array = array + 1j * rng.standard_normal(shape)
    return array.astype(dtype)


def _pair(array):
    return (
        lucid.tensor(array, requires_grad=True),
        torch.tensor(array, requires_grad=True),
    )


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOLERANCE = {np.float32: 1e-4, np.complex64: 1e-4, np.float64: 1e-9, np.complex128: 1e-9}


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_values_and_vectors_satisfy_av_equals_vl_as_torch(rng, dtype):
    array = _matrix(rng, dtype, (2, 4, 4))
    values, vectors = lucid.linalg.eig(lucid.tensor(array))
    expected = torch.linalg.eig(torch.tensor(array))
    assert str(values.dtype).split(".")[1] == str(expected.eigenvalues.dtype).split(".")[1]
    assert str(vectors.dtype).split(".")[1] == str(expected.eigenvectors.dtype).split(".")[1]
    l, v = values.numpy(), vectors.numpy()
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(array @ v, v * l[..., None, :], atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol)
    np.testing.assert_allclose(
        np.sort_complex(l.reshape(-1)),
        np.sort_complex(expected.eigenvalues.numpy().reshape(-1)),
        atol=tol * 10,
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvals_matches_torch_up_to_order(rng, dtype):
    array = _matrix(rng, dtype)
    values = lucid.linalg.eigvals(lucid.tensor(array))
    expected = torch.linalg.eigvals(torch.tensor(array)).numpy()
    assert values.numpy().dtype == expected.dtype
    np.testing.assert_allclose(
        np.sort_complex(values.numpy()), np.sort_complex(expected), atol=TOLERANCE[dtype] * 10
    )


def _magnitude(z):
    return ((z * z.conj()).real + 1e-30).sqrt()


def _loss(name, values, vectors):
    """Losses invariant to V -> V e^{i phi}."""
    if name == "abs_values":
        return _magnitude(values).sum()
    if name == "real_values":
        return values.real.sum()
    if name == "abs_vectors":
        return (_magnitude(vectors) * _magnitude(values).unsqueeze(-2)).sum() + values.imag.sum()
    # the projector onto each eigenvector's span, through a matrix product
    first = vectors[..., :, :1]
    return (first @ first.mH).real.sum() + (first @ first.mH).imag.sum()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("loss", ["abs_values", "real_values", "abs_vectors", "projector"])
def test_eig_gradient_of_phase_invariant_loss_matches_torch(rng, dtype, loss):
    array = _matrix(rng, dtype)
    a, ta = _pair(array)
    _loss(loss, *lucid.linalg.eig(a)).backward()
    _loss(loss, *torch.linalg.eig(ta)).backward()
    assert a.grad.numpy().dtype == ta.grad.numpy().dtype
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigvals_gradient_matches_torch(rng, dtype):
    array = _matrix(rng, dtype)
    a, ta = _pair(array)
    (_magnitude(lucid.linalg.eigvals(a)) ** 3).sum().backward()
    (_magnitude(torch.linalg.eigvals(ta)) ** 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-8)


def test_eig_gradient_of_phase_dependent_loss_raises_as_torch(rng):
    a = lucid.tensor(_matrix(rng, np.complex128), requires_grad=True)
    vectors = lucid.linalg.eig(a).eigenvectors
    with pytest.raises(
        RuntimeError,
        match=r"linalg_eig_backward: The eigenvectors in the "
        r"complex case are specified up to multiplication by e\^\{i phi\}\. "
        r"The specified loss function depends on this quantity, so it is "
        r"ill-defined\.",
    ):
        vectors.sum().real.backward()


def test_eig_of_non_finite_matrix_raises_and_eigvals_gives_nan():
    array = np.array([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        lucid.linalg.eig(lucid.tensor(array))
    assert np.all(np.isnan(lucid.linalg.eigvals(lucid.tensor(array)).numpy()))


def test_eig_gradgradcheck_of_phase_invariant_loss(rng):
    array = _matrix(rng, np.complex128, (3, 3))

    a = lucid.tensor(array, requires_grad=True)
    ta = torch.tensor(array, requires_grad=True)
    (grad,) = lucid.autograd.grad(_loss("abs_vectors", *lucid.linalg.eig(a)), a, create_graph=True)
    (tgrad,) = torch.autograd.grad(
        _loss("abs_vectors", *torch.linalg.eig(ta)), ta, create_graph=True
    )
    _magnitude(grad).sum().backward()
    _magnitude(tgrad).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-6)


def _svd_loss(name, u, s, vh):
    """Losses invariant to U -> U e^{i phi}, V -> V e^{i phi}."""
    weights = (
        lucid.arange(u.shape[-1]) if isinstance(u, lucid.Tensor) else torch.arange(u.shape[-1])
    )
    if name == "values":
        return (s * s).sum()
    if name == "u_magnitudes":
        return ((u * u.conj()).real * (weights + 1.0)).sum()
    if name == "u_vh":
        product = u @ vh
        return product.real.sum() + 2.0 * product.imag.sum()
    # a loss through U, S and Vh together
    product = (u * s.unsqueeze(-2)) @ vh
    return (product * product.conj()).real.sum() + ((vh * vh.conj()).real.sum(-1) * weights).sum()


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("loss", ["values", "u_magnitudes", "u_vh", "all"])
def test_complex_svd_gradient_of_phase_invariant_loss_matches_torch(rng, shape, loss):
    array = _matrix(rng, np.complex128, shape)
    a, ta = _pair(array)
    _svd_loss(loss, *lucid.linalg.svd(a, full_matrices=False)).backward()
    _svd_loss(loss, *torch.linalg.svd(ta, full_matrices=False)).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-8)


def test_complex_svd_gradient_of_phase_dependent_loss_raises_as_torch(rng):
    a = lucid.tensor(_matrix(rng, np.complex128, (3, 3)), requires_grad=True)
    u = lucid.linalg.svd(a).U
    with pytest.raises(
        RuntimeError,
        match=r"svd_backward: The singular vectors in the complex "
        r"case are specified up to multiplication by e\^\{i phi\}",
    ):
        u.sum().real.backward()


@pytest.mark.parametrize("upper", [False, True])
def test_complex_eigh_gradient_of_phase_invariant_loss_matches_torch(rng, upper):
    array = _matrix(rng, np.complex128, (2, 4, 4))
    a, ta = _pair(array)
    uplo = "U" if upper else "L"
    values, vectors = lucid.linalg.eigh(a, UPLO=uplo)
    expected_values, expected_vectors = torch.linalg.eigh(ta, UPLO=uplo)
    np.testing.assert_allclose(
        values.detach().numpy(), expected_values.detach().numpy(), atol=1e-10
    )
    weights = np.arange(4.0)
    loss = ((vectors * vectors.conj()).real * lucid.tensor(weights)).sum() + (values**2).sum()
    expected_magnitudes = (expected_vectors * expected_vectors.conj()).real
    expected = (expected_magnitudes * torch.tensor(weights)).sum() + (expected_values**2).sum()
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-8)


def test_complex_det_gradient_of_a_singular_matrix_matches_torch(rng):
    low_rank = _matrix(rng, np.complex128, (3, 2)) @ _matrix(rng, np.complex128, (2, 3))
    a, ta = _pair(low_rank)
    determinant, expected = lucid.linalg.det(a), torch.linalg.det(ta)
    (2.0 * determinant.real + determinant.imag).backward()
    (2.0 * expected.real + expected.imag).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-10)


def test_complex_slogdet_sign_is_complex_and_differentiable_as_torch(rng):
    a, ta = _pair(_matrix(rng, np.complex128, (2, 3, 3)))
    sign, logabsdet = lucid.linalg.slogdet(a)
    expected_sign, expected_logabsdet = torch.linalg.slogdet(ta)
    assert str(logabsdet.dtype) == "lucid.float64"
    np.testing.assert_allclose(sign.detach().numpy(), expected_sign.detach().numpy())
    (logabsdet + 3.0 * sign.real + sign.imag).sum().backward()
    (expected_logabsdet + 3.0 * expected_sign.real + expected_sign.imag).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cholesky_upper_reads_the_upper_triangle_as_torch(rng, dtype):
    factor = np.tril(_matrix(rng, dtype, (3, 3))) + 3.0 * np.eye(3)
    hermitian = factor @ factor.conj().T
    # a lower triangle that is not the upper one's mirror: only the upper one may be read
    skewed = np.triu(hermitian) + np.tril(_matrix(rng, dtype, (3, 3)), -1)
    result = lucid.linalg.cholesky(lucid.tensor(skewed), upper=True).numpy()
    expected = torch.linalg.cholesky(torch.tensor(skewed), upper=True).numpy()
    np.testing.assert_allclose(result, expected, atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_complex_lu_solve_matches_torch(rng, left, adjoint):
    matrix = _matrix(rng, np.complex128, (4, 4))
    rhs = _matrix(rng, np.complex128, (4, 2) if left else (2, 4))
    lu, pivots = lucid.linalg.lu_factor(lucid.tensor(matrix))
    expected_lu, expected_pivots = torch.linalg.lu_factor(torch.tensor(matrix))
    np.testing.assert_allclose(lu.numpy(), expected_lu.numpy(), atol=1e-12)
    np.testing.assert_array_equal(pivots.numpy(), expected_pivots.numpy())
    result = lucid.linalg.lu_solve(lu, pivots, lucid.tensor(rhs), left=left, adjoint=adjoint)
    expected = torch.linalg.lu_solve(
        expected_lu, expected_pivots, torch.tensor(rhs), left=left, adjoint=adjoint
    )
    np.testing.assert_allclose(result.numpy(), expected.resolve_conj().numpy(), atol=1e-12)


@pytest.mark.parametrize("hermitian", [True, False])
def test_complex_ldl_factor_and_solve_match_torch(rng, hermitian):
    for _ in range(20):
        n = int(rng.integers(1, 7))
        array = _matrix(rng, np.complex128, (n, n))
        array = array + (array.conj().T if hermitian else array.T)
        # a small diagonal makes Bunch-Kaufman take 2x2 pivots too
        array[np.diag_indices(n)] *= 0.05
        rhs = _matrix(rng, np.complex128, (n, 2))
        ld, pivots, info = lucid.linalg.ldl_factor_ex(lucid.tensor(array), hermitian=hermitian)
        expected = torch.linalg.ldl_factor_ex(torch.tensor(array), hermitian=hermitian)
        np.testing.assert_array_equal(pivots.numpy(), expected.pivots.numpy())
        np.testing.assert_allclose(ld.numpy(), expected.LD.numpy(), atol=1e-10)
        solution = lucid.linalg.ldl_solve(ld, pivots, lucid.tensor(rhs), hermitian=hermitian)
        expected_solution = torch.linalg.ldl_solve(
            expected.LD, expected.pivots, torch.tensor(rhs), hermitian=hermitian
        )
        np.testing.assert_allclose(solution.numpy(), expected_solution.numpy(), atol=1e-8)
