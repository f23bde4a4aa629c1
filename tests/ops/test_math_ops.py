"""Rules of the newer math, shape and random ops that a catalogue row cannot state: grad_fn
names, warnings, gradients PyTorch cannot serve as oracle for, and normal's overloads."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch


def _double(*shape: int, seed: int = 0) -> lucid.Tensor:
    values = np.random.default_rng(seed).uniform(0.5, 2.0, shape)
    return lucid.from_numpy(values).requires_grad_()


GRAD_FN_NAMES = [
    ("sgn", lambda m, x, y: m.sgn(x)),
    ("frac", lambda m, x, y: m.frac(x)),
    ("sinc", lambda m, x, y: m.sinc(x)),
    ("deg2rad", lambda m, x, y: m.deg2rad(x)),
    ("logaddexp", lambda m, x, y: m.logaddexp(x, y)),
    ("logaddexp2", lambda m, x, y: m.logaddexp2(x, y)),
    ("hypot", lambda m, x, y: m.hypot(x, y)),
    ("copysign", lambda m, x, y: m.copysign(x, y)),
    ("copysign_scalar", lambda m, x, y: m.copysign(x, -1.0)),
    ("xlogy", lambda m, x, y: m.xlogy(x, y)),
    ("xlogy_scalar_self", lambda m, x, y: m.xlogy(2.0, y)),
    ("xlogy_scalar_other", lambda m, x, y: m.xlogy(x, 2.0)),
    ("clamp_min", lambda m, x, y: m.clamp_min(x, 1.0)),
    ("clamp_min_tensor", lambda m, x, y: m.clamp_min(x, y)),
    ("clamp_max", lambda m, x, y: m.clamp_max(x, 1.0)),
    ("clamp_max_tensor", lambda m, x, y: m.clamp_max(x, y)),
    ("addcmul", lambda m, x, y: m.addcmul(x, x, y)),
    ("addcdiv", lambda m, x, y: m.addcdiv(x, x, y)),
    ("ldexp", lambda m, x, y: m.ldexp(x, y)),
    ("lgamma", lambda m, x, y: m.lgamma(x)),
    ("digamma", lambda m, x, y: m.digamma(x)),
    ("polygamma", lambda m, x, y: m.polygamma(2, x)),
    ("mvlgamma", lambda m, x, y: m.mvlgamma(x + 1, 2)),
    ("erfinv", lambda m, x, y: m.erfinv(x / 3)),
    ("i0", lambda m, x, y: m.i0(x)),
    ("addmv", lambda m, x, y: m.addmv(x[0], x.T, y[:, 0])),
    ("addr", lambda m, x, y: m.addr(x, x[:, 0], y[0])),
    ("vdot", lambda m, x, y: m.vdot(x[0], y[0])),
    ("cross", lambda m, x, y: m.cross(x, y, dim=0)),
    ("cdist", lambda m, x, y: m.cdist(x, y)),
    ("rot90", lambda m, x, y: m.rot90(x)),
    ("fliplr", lambda m, x, y: m.fliplr(x)),
    ("block_diag", lambda m, x, y: m.block_diag(x, y)),
    ("frexp", lambda m, x, y: m.frexp(x).mantissa),
    ("igamma", lambda m, x, y: m.igamma(x, y)),
    ("igammac", lambda m, x, y: m.igammac(x, y)),
    ("igamma_", lambda m, x, y: (x * 1.0).igamma_(y)),
]


@requires_torch
@pytest.mark.parametrize("name, call", GRAD_FN_NAMES, ids=[name for name, _ in GRAD_FN_NAMES])
def test_grad_fn_is_named_as_pytorchs(name, call):
    x, y = _double(3, 3), _double(3, 3, seed=1)
    tx, ty = (torch.from_numpy(t.detach().numpy()).requires_grad_() for t in (x, y))
    assert call(lucid, x, y).grad_fn.name() == call(torch, tx, ty).grad_fn.name()


def test_sgn_and_nextafter_have_zero_gradients():
    x = lucid.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    (lucid.sgn(x) + lucid.nextafter(x, lucid.zeros(3))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


def test_heaviside_backward_raises_pytorchs_error():
    x = lucid.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = lucid.heaviside(x, lucid.tensor([0.5]))
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, 0.5, 1.0])
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        y.sum().backward()


def test_vander_gradients_check():
    # PyTorch's own vander backward fails, so its gradient is checked here, not by parity
    x = lucid.from_numpy(np.array([0.5, -1.2, 2.0])).requires_grad_()
    assert lucid.autograd.gradcheck(lambda v: lucid.vander(v, 4), (x,))
    assert lucid.autograd.gradgradcheck(lambda v: lucid.vander(v, 4, increasing=True), (x,))


def test_ldexp_gradient_for_a_negative_integer_exponent_is_the_true_power_of_two():
    x = lucid.tensor([3.0, 3.0], requires_grad=True)
    lucid.ldexp(x, lucid.tensor([-2, 1])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.25, 2.0])


def test_meshgrid_without_indexing_warns_and_uses_ij():
    a, b = lucid.arange(3.0), lucid.arange(4.0)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        grid_a, grid_b = lucid.meshgrid(a, b)
    assert grid_a.shape == (3, 4) and grid_b.shape == (3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lucid.meshgrid([a, b], indexing="xy")[0].shape == (4, 3)


def test_cross_without_dim_warns_and_takes_the_first_dim_of_size_3():
    a, b = _double(4, 3), _double(4, 3, seed=1)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        result = lucid.cross(a, b)
    np.testing.assert_allclose(result.detach().numpy(), np.cross(a.detach(), b.detach()))


def test_chain_matmul_is_deprecated_and_a_single_matrix_is_copied():
    a = _double(3, 4)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        copy = lucid.chain_matmul(a)
    assert copy is not a
    np.testing.assert_array_equal(copy.detach().numpy(), a.detach().numpy())


@requires_torch
def test_cdist_switches_to_the_matrix_product_past_25_rows_as_pytorch():
    rng = np.random.default_rng(3)
    x1, x2 = rng.standard_normal((30, 5)), rng.standard_normal((4, 5))
    expected = torch.cdist(torch.from_numpy(x1), torch.from_numpy(x2)).numpy()
    actual = lucid.cdist(lucid.from_numpy(x1), lucid.from_numpy(x2)).numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-12)
    direct = lucid.cdist(
        lucid.from_numpy(x1), lucid.from_numpy(x2), compute_mode="donot_use_mm_for_euclid_dist"
    )
    np.testing.assert_allclose(direct.numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("r, with_replacement", [(2, False), (3, False), (2, True), (3, True)])
def test_combinations_count_and_order_match_itertools(r, with_replacement):
    import itertools

    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    chooser = (
        itertools.combinations_with_replacement if with_replacement else itertools.combinations
    )
    expected = np.array(list(chooser(values, r)))
    actual = lucid.combinations(lucid.tensor(values), r, with_replacement).numpy()
    np.testing.assert_array_equal(actual, expected)


def test_inplace_forms_bump_the_version_and_keep_the_grad_fn_name():
    x = _double(3, 3)
    y = x * 1.0
    version = y._version
    y.addcmul_(x, x, value=0.5).clamp_min_(1.0).lgamma_()
    assert y._version == version + 3
    assert y.grad_fn.name() == "LgammaBackward0"
    y.sum().backward()
    assert x.grad is not None and np.all(np.isfinite(x.grad.numpy()))


def test_special_functions_at_their_poles_and_known_values():
    x = lucid.tensor([1.0, 2.0, 0.5, 0.0, -1.0, -0.0], dtype=lucid.float64)
    np.testing.assert_allclose(
        lucid.lgamma(x).numpy(), [0.0, 0.0, 0.5 * math.log(math.pi), math.inf, math.inf, math.inf]
    )
    digamma = lucid.digamma(x).numpy()
    np.testing.assert_allclose(digamma[:3], [-0.5772156649015329, 0.42278433509846713,
                                             -1.9635100260214235])  # fmt: skip
    assert digamma[3] == -math.inf and math.isnan(digamma[4]) and digamma[5] == math.inf
    # trigamma(1) = pi^2 / 6, to the accuracy of PyTorch's trigamma series (about 1e-9)
    assert lucid.polygamma(1, lucid.tensor(1.0, dtype=lucid.float64)).item() == pytest.approx(
        math.pi**2 / 6, rel=1e-9
    )
    y = lucid.tensor([0.0, 0.5, -0.9, 1.0, -1.0, 1.5], dtype=lucid.float64)
    inverse = lucid.erfinv(y).numpy()
    np.testing.assert_allclose([math.erf(v) for v in inverse[:3]], [0.0, 0.5, -0.9], rtol=1e-15)
    assert inverse[3] == math.inf and inverse[4] == -math.inf and math.isnan(inverse[5])


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_backward_in_input_raises_pytorchs_error(name):
    a, x = _double(3), _double(3, seed=1)
    y = getattr(lucid, name)(a, x)
    with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input' is not"):
        y.sum().backward()


@requires_torch
def test_igamma_edge_cases_are_decided_in_pytorchs_order():
    special = [0.0, 0.5, 1.0, math.inf, math.nan, -1.0]
    a, x = (np.array(values) for values in zip(*[(u, v) for u in special for v in special]))
    for name in ("igamma", "igammac"):
        actual = getattr(lucid, name)(lucid.from_numpy(a), lucid.from_numpy(x)).numpy()
        expected = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=0)


def test_igammac_of_a_tiny_a_is_a_times_the_exponential_integral():
    # Q(a, x) = a E1(x) + O(a^2) as a -> 0, and E1(1) = 0.21938393439552027...
    a = lucid.tensor([1e-300, 5e-324], dtype=lucid.float64)
    upper = lucid.igammac(a, lucid.ones(2, dtype=lucid.float64)).numpy()
    assert upper[0] == pytest.approx(1e-300 * 0.21938393439552027, rel=1e-12)
    assert upper[1] == 0.0
    lower = lucid.igamma(a, lucid.ones(2, dtype=lucid.float64)).numpy()
    np.testing.assert_array_equal(lower, [1.0, 1.0])


@pytest.mark.parametrize("n", [30, 5000, 20000])
def test_igammac_of_an_integer_a_is_the_poisson_tail(n):
    # Q(n, x) = P(Poisson(x) < n) = sum_{k < n} e^-x x^k / k!, each term taken in logs
    x = n + math.sqrt(n) * np.array([-3.0, -0.5, 0.0, 0.7, 4.0])
    a = np.full_like(x, n)
    expected = [
        math.fsum(math.exp(k * math.log(v) - v - math.lgamma(k + 1.0)) for k in range(n)) for v in x
    ]
    upper = lucid.igammac(lucid.from_numpy(a), lucid.from_numpy(x)).numpy()
    lower = lucid.igamma(lucid.from_numpy(a), lucid.from_numpy(x)).numpy()
    # the reference's terms carry rounding of k log x (up to ~2e5): ~1e-11 in the sum
    np.testing.assert_allclose(upper, expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(lower, 1.0 - np.array(expected), rtol=1e-9, atol=1e-10)


def test_igamma_and_igammac_add_up_to_one():
    rng = np.random.default_rng(0)
    a = 10.0 ** rng.uniform(-3.0, 6.0, 2000)
    x = a * rng.uniform(0.0, 2.0, 2000)
    total = lucid.igamma(lucid.from_numpy(a), lucid.from_numpy(x)) + lucid.igammac(
        lucid.from_numpy(a), lucid.from_numpy(x)
    )
    np.testing.assert_allclose(total.numpy(), 1.0, rtol=1e-12)


@pytest.mark.parametrize(
    "mean, std",
    [
        (lambda: lucid.zeros(2, 3, dtype=lucid.float64), lambda: lucid.full((3,), 2.0)),
        (lambda: lucid.zeros(40_000, dtype=lucid.float64), lambda: 2.0),
        (lambda: 0.0, lambda: lucid.full((40_000,), 2.0, dtype=lucid.float64)),
    ],
)
def test_normal_with_tensor_parameters_is_differentiable_in_them(mean, std):
    mean, std = mean(), std()
    for value in (mean, std):
        if isinstance(value, lucid.Tensor):
            value.requires_grad_()
    sample = lucid.normal(mean, std, generator=lucid.Generator().manual_seed(4))
    sample.sum().backward()
    if isinstance(mean, lucid.Tensor):
        np.testing.assert_array_equal(mean.grad.numpy(), np.ones(mean.shape))
    if isinstance(std, lucid.Tensor):
        # d sample / d std is the standard normal noise
        centred = sample.detach() - (mean.detach() if isinstance(mean, lucid.Tensor) else mean)
        expected = (centred / std.detach()).numpy().reshape(-1, *std.shape).sum(0)
        np.testing.assert_allclose(std.grad.numpy(), expected, rtol=1e-6)


def test_normal_draws_have_the_given_mean_and_spread():
    mean = lucid.full((100_000,), 3.0, dtype=lucid.float64)
    draws = lucid.normal(mean, 0.5, generator=lucid.Generator().manual_seed(8)).numpy()
    assert abs(draws.mean() - 3.0) < 6 * 0.5 / math.sqrt(draws.size)
    assert abs(draws.std() - 0.5) < 0.01


NORMAL_ERRORS = [
    lambda m: m.normal(1.0, 2.0),
    lambda m: m.normal(m.zeros(3), m.ones(3), (3,)),
    lambda m: m.normal(m.zeros(3), -m.ones(3)),
    lambda m: m.normal(m.zeros(3), -1.0),
    lambda m: m.normal(m.zeros(3), m.ones(4)),
    lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0),
]


@requires_torch
@pytest.mark.parametrize("call", NORMAL_ERRORS)
def test_normal_refuses_what_pytorch_refuses(call):
    with pytest.raises(Exception) as expected:  # noqa: PT011  (torch's type is the spec)
        call(torch)
    with pytest.raises(Exception) as actual:  # noqa: PT011
        call(lucid)
    assert type(actual.value).__name__ == type(expected.value).__name__
    first_line = str(expected.value).replace("torch", "lucid").split("\n")[0]
    assert str(actual.value).split("\n")[0] == first_line
