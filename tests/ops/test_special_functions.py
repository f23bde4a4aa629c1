"""lucid.special's kernels against SciPy over wide ranges (the catalogue rows draw from small
ones), and the derivatives PyTorch does not define."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.special

scipy_special = pytest.importorskip("scipy.special", reason="SciPy is the reference")

_WIDE = np.concatenate(
    [np.linspace(-60.0, 60.0, 4001), np.logspace(-12, 2.5, 400), -np.logspace(-12, 2.5, 400)]
)
_POSITIVE = _WIDE[_WIDE > 0]


def _airy_ai(x: np.ndarray) -> np.ndarray:
    return scipy_special.airy(x)[0]


# (name, SciPy reference, inputs, relative tolerance, absolute tolerance): the absolute one
# allows for the digits a function's zeros leave (J, Y and Ai oscillate).
KERNELS = [
    ("erfcx", scipy_special.erfcx, _WIDE[_WIDE > -26.0], 1e-13, 0.0),
    ("ndtri", scipy_special.ndtri, np.concatenate([np.logspace(-300, -0.31, 400),
                                                   np.linspace(0.0, 1.0, 2001)]), 1e-14, 1e-15),
    # SciPy flushes the subnormal ones of the far tail to zero
    ("log_ndtr", scipy_special.log_ndtr, _WIDE, 1e-13, 1e-300),
    ("ndtr", scipy_special.ndtr, _WIDE, 1e-12, 1e-300),
    ("i0e", scipy_special.i0e, _WIDE, 1e-14, 0.0),
    ("i1", scipy_special.i1, _WIDE, 1e-14, 0.0),
    ("i1e", scipy_special.i1e, _WIDE, 1e-14, 0.0),
    ("bessel_j0", scipy_special.j0, _WIDE, 1e-12, 1e-10),
    ("bessel_j1", scipy_special.j1, _WIDE, 1e-12, 1e-10),
    ("bessel_y0", scipy_special.y0, _POSITIVE, 1e-12, 1e-10),
    ("bessel_y1", scipy_special.y1, _POSITIVE, 1e-12, 1e-10),
    ("modified_bessel_i0", scipy_special.i0, _WIDE, 1e-14, 0.0),
    ("modified_bessel_i1", scipy_special.i1, _WIDE, 1e-14, 0.0),
    ("modified_bessel_k0", scipy_special.k0, _POSITIVE, 1e-13, 0.0),
    ("modified_bessel_k1", scipy_special.k1, _POSITIVE, 1e-13, 0.0),
    ("scaled_modified_bessel_k0", scipy_special.k0e, _POSITIVE, 1e-13, 0.0),
    ("scaled_modified_bessel_k1", scipy_special.k1e, _POSITIVE, 1e-13, 0.0),
    ("spherical_bessel_j0", lambda x: scipy_special.spherical_jn(0, x), _WIDE, 1e-14, 1e-16),
    ("airy_ai", _airy_ai, _WIDE[_WIDE < 100.0], 1e-11, 1e-13),
    ("entr", scipy_special.entr, _WIDE, 1e-14, 0.0),
    ("expit", scipy_special.expit, _WIDE, 1e-14, 0.0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "reference", "x", "rtol", "atol"), KERNELS, ids=[row[0] for row in KERNELS]
)
def test_kernel_matches_scipy_over_a_wide_range(name, reference, x, rtol, atol) -> None:
    actual = getattr(lucid.special, name)(lucid.from_numpy(x.copy())).numpy()
    np.testing.assert_allclose(actual, reference(x), rtol=rtol, atol=atol, equal_nan=True)


def test_zeta_matches_scipy_over_a_wide_range() -> None:
    x, q = np.meshgrid(np.linspace(1.01, 30.0, 60), np.concatenate([np.logspace(-3, 6, 40)]))
    actual = lucid.special.zeta(lucid.from_numpy(x.copy()), lucid.from_numpy(q.copy())).numpy()
    np.testing.assert_allclose(actual, scipy_special.zeta(x, q), rtol=1e-12)


POLYNOMIALS = [
    ("chebyshev_polynomial_t", scipy_special.eval_chebyt, -1.0, 1.0),
    ("chebyshev_polynomial_u", scipy_special.eval_chebyu, -1.0, 1.0),
    ("shifted_chebyshev_polynomial_t", scipy_special.eval_sh_chebyt, 0.0, 1.0),
    ("shifted_chebyshev_polynomial_u", scipy_special.eval_sh_chebyu, 0.0, 1.0),
    ("hermite_polynomial_h", scipy_special.eval_hermite, -4.0, 4.0),
    ("hermite_polynomial_he", scipy_special.eval_hermitenorm, -4.0, 4.0),
    ("laguerre_polynomial_l", scipy_special.eval_laguerre, 0.0, 10.0),
    ("legendre_polynomial_p", scipy_special.eval_legendre, -1.0, 1.0),
]


@pytest.mark.parametrize(
    ("name", "reference", "low", "high"), POLYNOMIALS, ids=[row[0] for row in POLYNOMIALS]
)
def test_polynomial_matches_scipy_up_to_degree_thirty(name, reference, low, high) -> None:
    x, n = np.meshgrid(np.linspace(low, high, 41), np.arange(31))
    actual = getattr(lucid.special, name)(lucid.from_numpy(x.copy()), lucid.from_numpy(n)).numpy()
    expected = reference(n, x)
    scale = np.max(np.abs(expected), axis=1, keepdims=True)
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=0.0 + 1e-12 * scale.max())


def test_chebyshev_v_and_w_match_their_trigonometric_forms() -> None:
    theta = np.linspace(0.05, 3.09, 41)
    x, n = np.meshgrid(np.cos(theta), np.arange(16))
    t, degree = np.meshgrid(theta, np.arange(16))
    v = lucid.special.chebyshev_polynomial_v(lucid.from_numpy(x.copy()), lucid.from_numpy(n))
    w = lucid.special.chebyshev_polynomial_w(lucid.from_numpy(x.copy()), lucid.from_numpy(n))
    np.testing.assert_allclose(v.numpy(), np.cos((degree + 0.5) * t) / np.cos(t / 2), atol=1e-11)
    np.testing.assert_allclose(w.numpy(), np.sin((degree + 0.5) * t) / np.sin(t / 2), atol=1e-11)


def test_zeta_derivative_in_the_exponent_is_not_implemented() -> None:
    x = lucid.tensor([2.0, 3.0], dtype=lucid.float64, requires_grad=True)
    q = lucid.tensor([1.0, 2.0], dtype=lucid.float64)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        lucid.special.zeta(x, q).sum().backward()


def test_zeta_takes_a_number_for_either_argument() -> None:
    q = lucid.tensor([1.0, 2.0], dtype=lucid.float64)
    np.testing.assert_allclose(lucid.special.zeta(2.0, q).numpy(), scipy_special.zeta(2.0, [1, 2]))
    np.testing.assert_allclose(lucid.special.zeta(q + 1.0, 1.0).numpy(), scipy_special.zeta([2, 3]))


@pytest.mark.parametrize(
    "name",
    ["airy_ai", "bessel_j0", "bessel_y1", "modified_bessel_i0", "modified_bessel_k1",
     "scaled_modified_bessel_k0", "spherical_bessel_j0"],
)  # fmt: skip
def test_function_without_a_derivative_in_pytorch_returns_no_graph(name: str) -> None:
    x = lucid.tensor([0.5, 1.5], requires_grad=True)
    result = getattr(lucid.special, name)(x)
    assert not result.requires_grad and result.grad_fn is None


def test_polynomial_returns_no_graph() -> None:
    x = lucid.tensor([0.5, 1.5], requires_grad=True)
    assert not lucid.special.legendre_polynomial_p(x, 3).requires_grad


def test_names_shared_with_lucid_are_the_same_functions() -> None:
    assert lucid.special.psi is lucid.digamma
    assert lucid.special.gammaln is lucid.lgamma
    assert lucid.special.multigammaln is lucid.mvlgamma
    assert lucid.special.gammainc is lucid.igamma
    assert lucid.special.gammaincc is lucid.igammac
