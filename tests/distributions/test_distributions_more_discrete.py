"""What the catalogue's generic tests cannot reach for Binomial, Multinomial, NegativeBinomial,
FisherSnedecor, InverseGamma, GeneralizedPareto, ContinuousBernoulli, VonMises, Pareto,
Weibull, Kumaraswamy, PowerTransform and their KL pairs: non-tensor and inhomogeneous counts,
circular statistics, branches the catalogue's parameters avoid, and lucid's deliberate
differences from torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from tests.distributions import test_distributions as generic
from tests.distributions.catalogue import DistCase, _array
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

_assert_close = generic._assert_close


def _both(name: str, *args, **kwargs):
    """The lucid and the torch distribution built from the same float64 arrays."""

    def convert(module, value):
        if isinstance(value, np.ndarray):
            return module.tensor(value, dtype=module.float64)
        return value

    ours = getattr(D, name)(
        *[convert(lucid, v) for v in args], **{k: convert(lucid, v) for k, v in kwargs.items()}
    )
    theirs = getattr(torch.distributions, name)(
        *[convert(torch, v) for v in args], **{k: convert(torch, v) for k, v in kwargs.items()}
    )
    return ours, theirs


def _error(constructor):
    with pytest.raises(Exception) as info:
        constructor()
    return info.type, str(info.value).replace("torch.", "lucid.")


# GeneralizedPareto ----------------------------------------------------------------------------

# torch compares concentration with a float32 zero, so its log_prob and cdf raise for float64
# parameters unless float64 is torch's default dtype; lucid compares in the parameters' dtype.
# The generic checks run here with torch's default at float64, which changes nothing else
GENERALIZED_PARETO = DistCase(
    "GeneralizedPareto",
    # concentration 0 (the exponential limit), > 0 and < 0 (a bounded support); the positive
    # ones stay small, where the sample variance has a finite variance of its own
    {
        "loc": _array(-1.0, 0.0, 0.5, 2.0),
        "scale": _array(0.5, 1.0, 1.5, 3.0),
        "concentration": _array(0.0, 0.05, -0.4, -0.1),
    },
    _array(-0.5, 0.4, 2.0, 3.0),
    invalid_params={
        "loc": _array(-1.0, 0.0, 0.5, 2.0),
        "scale": _array(0.5, -1.0, 1.5, 3.0),
        "concentration": _array(0.0, 0.05, -0.4, -0.1),
    },
    # below loc, and above the bounded support's upper end loc + scale / 0.4 = 4.25
    invalid_value=_array(-1.5, 0.4, 4.5, 3.0),
    # not concentration: at 0 log_prob takes the exponential branch, constant in it, as torch
    # does; test_generalized_pareto_log_prob_gradcheck_in_concentration takes the others
    differentiable=("loc", "scale"),
    quantiles=_array(0.05, 0.3, 0.6, 0.95),
)


@pytest.fixture
def torch_default_float64():
    # lucid's default moves too, so that both reprs (in the validation errors) omit the dtype
    previous = torch.get_default_dtype(), lucid.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    lucid.set_default_dtype(lucid.float64)
    yield
    torch.set_default_dtype(previous[0])
    lucid.set_default_dtype(previous[1])


@pytest.mark.parametrize(
    "method",
    ["log_prob", "cdf", "icdf", "entropy", "perplexity", "mean", "mode", "variance", "stddev"],
)
def test_generalized_pareto_values_match_torch(torch_default_float64, method: str) -> None:
    generic.test_values_match_torch(GENERALIZED_PARETO, method)


@pytest.mark.parametrize("method", ["log_prob", "cdf", "entropy", "mean", "variance"])
def test_generalized_pareto_gradients_match_torch(torch_default_float64, method: str) -> None:
    generic.test_gradients_match_torch(GENERALIZED_PARETO, method)


@pytest.mark.parametrize(
    "check",
    [
        generic.test_log_prob_passes_gradcheck,
        generic.test_rsample_gradient_is_the_quantile_reparameterization,
        generic.test_shapes_match_torch,
        generic.test_expand_matches_torch,
        generic.test_invalid_parameters_raise_torchs_error,
        generic.test_value_of_wrong_shape_raises_torchs_error,
        generic.test_sample_mean_and_variance,
    ],
    ids=lambda check: check.__name__,
)
def test_generalized_pareto_generic_checks(torch_default_float64, check) -> None:
    check(GENERALIZED_PARETO)


@pytest.mark.parametrize("method", ["log_prob", "cdf"])
def test_generalized_pareto_values_outside_the_support(torch_default_float64, method) -> None:
    generic.test_values_outside_the_support_raise_torchs_error(GENERALIZED_PARETO, method)


def test_generalized_pareto_float32_matches_torch() -> None:
    # in float32 torch's comparison works with its usual default dtype
    generic.test_float32_parameters_stay_float32_and_match_torch(GENERALIZED_PARETO)


def test_generalized_pareto_log_prob_gradcheck_in_concentration() -> None:
    loc, scale = (
        lucid.tensor(GENERALIZED_PARETO.params["loc"]),
        lucid.tensor(GENERALIZED_PARETO.params["scale"]),
    )
    value = lucid.tensor(GENERALIZED_PARETO.values)
    concentration = lucid.tensor(_array(0.4, 0.05, -0.4, -0.1), requires_grad=True)

    def log_prob(concentration):
        return D.GeneralizedPareto(loc, scale, concentration).log_prob(value)

    def icdf(concentration):
        return D.GeneralizedPareto(loc, scale, concentration).icdf(value.sigmoid())

    assert gradcheck(log_prob, [concentration])
    assert gradcheck(icdf, [concentration])


def test_generalized_pareto_log_prob_in_float64_is_the_closed_form() -> None:
    # independent of torch: log f = -log(scale) - (1 / c + 1) log(1 + c z), or -log(scale) - z
    loc, scale, conc = (GENERALIZED_PARETO.params[k] for k in ("loc", "scale", "concentration"))
    z = (GENERALIZED_PARETO.values - loc) / scale
    safe = np.where(conc == 0, 1.0, conc)
    expected = np.where(conc == 0, -z, -(1 / safe + 1) * np.log1p(safe * z)) - np.log(scale)
    dist = D.GeneralizedPareto(*(lucid.tensor(v) for v in (loc, scale, conc)))
    actual = dist.log_prob(lucid.tensor(GENERALIZED_PARETO.values)).numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-13)


def test_generalized_pareto_moments_are_nan_where_they_diverge(torch_default_float64) -> None:
    params = (np.zeros(3), np.ones(3), _array(0.3, 0.7, 1.2))
    ours, theirs = _both("GeneralizedPareto", *params)
    _assert_close(ours.mean, theirs.mean)
    _assert_close(ours.variance, theirs.variance)
    assert np.isnan(ours.mean.numpy()[2]) and np.isnan(ours.variance.numpy()[1:]).all()


# Binomial -------------------------------------------------------------------------------------


def test_binomial_with_inhomogeneous_total_count_matches_torch() -> None:
    counts, probs = _array(1.0, 4.0, 10.0, 25.0), _array(0.1, 0.35, 0.5, 0.9)
    ours, theirs = _both("Binomial", counts, probs)
    value = _array(0.0, 2.0, 7.0, 20.0)
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))
    for name in ("mean", "mode", "variance"):
        _assert_close(getattr(ours, name), getattr(theirs, name))
    assert repr(ours.support) == repr(theirs.support).replace("torch.", "lucid.")
    for method in ("entropy", "enumerate_support"):
        expected = _error(getattr(theirs, method))
        assert expected[0] is NotImplementedError
        assert _error(getattr(ours, method)) == expected


def test_binomial_samples_lie_in_the_support_and_have_its_moments() -> None:
    lucid.manual_seed(0)
    counts = lucid.tensor([[3.0], [40.0]], dtype=lucid.float64)
    dist = D.Binomial(counts, lucid.tensor([0.2, 0.7], dtype=lucid.float64))
    assert dist.batch_shape == lucid.Size([2, 2])
    samples = dist.sample((20000,)).numpy()
    assert samples.dtype == np.float64
    assert np.all((samples >= 0) & (samples <= counts.numpy()) & (samples % 1 == 0))
    bound = 6 * np.sqrt(dist.variance.numpy() / 20000)
    assert np.all(np.abs(samples.mean(0) - dist.mean.numpy()) <= bound)


def test_binomial_takes_an_int_total_count_and_a_number() -> None:
    ours = D.Binomial(7, lucid.tensor([0.25, 0.5]))
    theirs = torch.distributions.Binomial(7, torch.tensor([0.25, 0.5]))
    assert ours.total_count.dtype == lucid.float32
    _assert_close(ours.total_count, theirs.total_count)
    _assert_close(ours.entropy(), theirs.entropy(), rtol=1e-6)
    scalar = D.Binomial(3, 0.5)
    assert scalar.batch_shape == lucid.Size() and scalar.sample().shape == lucid.Size()
    assert repr(scalar) == repr(torch.distributions.Binomial(3, 0.5))
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")


def test_binomial_log_prob_stays_finite_at_extreme_logits() -> None:
    # log(1 + exp(logits)) written to avoid overflow: exp(800) would be inf
    logits = _array(-800.0, 800.0)
    ours, theirs = _both("Binomial", np.full(2, 5.0), logits=logits)
    value = _array(0.0, 5.0)
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))
    assert np.isfinite(ours.log_prob(lucid.tensor(value)).numpy()).all()


# Multinomial ----------------------------------------------------------------------------------

PROBS_2D = np.array([[0.2, 0.3, 0.5], [0.6, 0.0, 0.4]])
COUNTS_2D = np.array([[1.0, 2.0, 3.0], [4.0, 0.0, 2.0]])


def test_multinomial_with_total_count_matches_torch() -> None:
    ours, theirs = _both("Multinomial", 6, PROBS_2D)
    _assert_close(ours.log_prob(lucid.tensor(COUNTS_2D)), theirs.log_prob(torch.tensor(COUNTS_2D)))
    _assert_close(ours.entropy(), theirs.entropy())
    _assert_close(ours.mean, theirs.mean)
    _assert_close(ours.variance, theirs.variance)
    assert repr(ours.support) == repr(theirs.support)
    assert repr(ours) == repr(theirs)
    expanded_ours, expanded_theirs = ours.expand((4, 2)), theirs.expand((4, 2))
    assert expanded_ours.total_count == 6
    _assert_close(
        expanded_ours.log_prob(lucid.tensor(COUNTS_2D)),
        expanded_theirs.log_prob(torch.tensor(COUNTS_2D)),
    )


def test_multinomial_gradients_match_torch() -> None:
    probs_ours = lucid.tensor(PROBS_2D + 0.1, requires_grad=True)
    probs_theirs = torch.tensor(PROBS_2D + 0.1, requires_grad=True)
    ours = D.Multinomial(6, probs_ours)
    theirs = torch.distributions.Multinomial(6, probs_theirs)
    weights = np.array([0.5, 1.5])
    (ours.log_prob(lucid.tensor(COUNTS_2D)) + ours.entropy()).mul(
        lucid.tensor(weights)
    ).sum().backward()
    (theirs.log_prob(torch.tensor(COUNTS_2D)) + theirs.entropy()).mul(
        torch.tensor(weights)
    ).sum().backward()
    np.testing.assert_allclose(probs_ours.grad.numpy(), probs_theirs.grad.numpy(), rtol=1e-10)


def test_multinomial_zero_probability_category_never_drawn_counts_zero() -> None:
    # log 0 * 0 is taken as 0, not nan, so a zero-probability category may be absent
    logits = np.array([math.log(0.5), -math.inf, math.log(0.5)])
    ours, theirs = _both("Multinomial", 4, logits=logits)
    value = _array(1.0, 0.0, 3.0)
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))


def test_multinomial_samples_count_total_count_trials() -> None:
    lucid.manual_seed(0)
    dist = D.Multinomial(9, lucid.tensor(PROBS_2D))
    samples = dist.sample((20000,))
    assert samples.shape == lucid.Size([20000, 2, 3]) and samples.dtype == lucid.float64
    counts = samples.numpy()
    np.testing.assert_array_equal(counts.sum(-1), 9.0)
    assert np.all(counts[..., 1, 1] == 0)  # the category of probability 0
    bound = 6 * np.sqrt(dist.variance.numpy() / 20000) + 1e-12
    assert np.all(np.abs(counts.mean(0) - dist.mean.numpy()) <= bound)
    lucid.manual_seed(3)
    first = dist.sample((5,)).numpy()
    lucid.manual_seed(3)
    np.testing.assert_array_equal(dist.sample((5,)).numpy(), first)


def test_multinomial_rejects_a_tensor_total_count_and_a_count_above_it() -> None:
    expected = _error(lambda: torch.distributions.Multinomial(torch.tensor(3), torch.ones(3)))
    assert expected[0] is NotImplementedError
    assert _error(lambda: D.Multinomial(lucid.tensor(3), lucid.ones(3))) == expected
    ours, theirs = _both("Multinomial", 3, PROBS_2D, validate_args=True)
    value = COUNTS_2D  # sums of 6 exceed total_count 3
    expected = _error(lambda: theirs.log_prob(torch.tensor(value)))
    assert _error(lambda: ours.log_prob(lucid.tensor(value))) == expected


# NegativeBinomial, FisherSnedecor, InverseGamma ----------------------------------------------


def test_negative_binomial_zero_count_is_certain() -> None:
    # total_count = value = 0 is the outcome 0 with probability 1: log_prob 0, not nan
    ours, theirs = _both("NegativeBinomial", _array(0.0, 0.0, 2.0), probs=_array(0.3, 0.3, 0.3))
    value = _array(0.0, 2.0, 0.0)
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))
    assert ours.log_prob(lucid.tensor(value)).numpy()[0] == 0.0


def test_negative_binomial_samples_are_reproducible_counts() -> None:
    dist = D.NegativeBinomial(lucid.tensor([2.0, 0.5]), lucid.tensor([0.3, 0.8]))
    lucid.manual_seed(11)
    first = dist.sample((50,)).numpy()
    lucid.manual_seed(11)
    np.testing.assert_array_equal(dist.sample((50,)).numpy(), first)
    assert first.dtype == np.float32 and np.all((first >= 0) & (first % 1 == 0))


def test_fisher_snedecor_moments_are_nan_where_they_diverge() -> None:
    ours, theirs = _both("FisherSnedecor", _array(1.0, 3.0, 6.0), _array(1.5, 3.0, 8.0))
    for name in ("mean", "mode", "variance"):
        _assert_close(getattr(ours, name), getattr(theirs, name))
    assert np.isnan(ours.mean.numpy()[0]) and np.isnan(ours.variance.numpy()[:2]).all()


def test_fisher_snedecor_rsample_gradient_is_unbiased_for_the_mean() -> None:
    # E[Y] = df2 / (df2 - 2) whatever df1: the per-draw gradients (one parameter element per
    # draw) must average to 0 in df1 and to -2 / (df2 - 2)^2 in df2, within 6 standard errors
    count = 20000
    df1 = lucid.full((count,), 5.0, dtype=lucid.float64, requires_grad=True)
    df2 = lucid.full((count,), 20.0, dtype=lucid.float64, requires_grad=True)
    lucid.manual_seed(5)
    sample = D.FisherSnedecor(df1, df2).rsample()
    assert sample.grad_fn is not None
    sample.sum().backward()
    for grad, expected in ((df1.grad.numpy(), 0.0), (df2.grad.numpy(), -2 / 18**2)):
        assert abs(grad.mean() - expected) <= 6 * grad.std() / math.sqrt(count)
    lucid.manual_seed(5)
    np.testing.assert_array_equal(
        D.FisherSnedecor(df1, df2).sample().numpy(), sample.detach().numpy()
    )


def test_inverse_gamma_moments_are_infinite_where_they_diverge() -> None:
    ours, theirs = _both("InverseGamma", _array(0.5, 1.5, 2.5), _array(1.0, 2.0, 3.0))
    for name in ("mean", "mode", "variance"):
        _assert_close(getattr(ours, name), getattr(theirs, name))
    _assert_close(ours.entropy(), theirs.entropy())
    assert np.isinf(ours.mean.numpy()[0]) and np.isinf(ours.variance.numpy()[:2]).all()
    expected = _error(lambda: theirs.icdf(torch.tensor(0.5)))
    assert _error(lambda: ours.icdf(lucid.tensor(0.5))) == expected


# ContinuousBernoulli --------------------------------------------------------------------------


def test_continuous_bernoulli_keeps_lims_through_expand() -> None:
    probs = _array(0.2, 0.48, 0.505)
    ours, theirs = _both("ContinuousBernoulli", probs, lims=(0.47, 0.51))
    ours_expanded, theirs_expanded = ours.expand((2, 3)), theirs.expand((2, 3))
    assert ours_expanded._lims == (0.47, 0.51)
    value = _array(0.3, 0.5, 0.9)
    for dist, expected in ((ours, theirs), (ours_expanded, theirs_expanded)):
        _assert_close(dist.log_prob(lucid.tensor(value)), expected.log_prob(torch.tensor(value)))
        _assert_close(dist.mean, expected.mean)
        _assert_close(dist.cdf(lucid.tensor(value)), expected.cdf(torch.tensor(value)))


def test_continuous_bernoulli_cdf_is_clipped_outside_the_unit_interval() -> None:
    ours, theirs = _both("ContinuousBernoulli", _array(0.2, 0.7), validate_args=False)
    value = _array(-0.5, 1.5)
    _assert_close(ours.cdf(lucid.tensor(value)), theirs.cdf(torch.tensor(value)))


def test_continuous_bernoulli_bregman_entropy_matches_torch() -> None:
    # the exponential-family entropy runs through _log_normalizer, torch's quirks included
    ours, theirs = _both("ContinuousBernoulli", logits=_array(-2.0, -0.001, 0.3, 4.0))
    expected = torch.distributions.ExponentialFamily.entropy(theirs)
    _assert_close(D.ExponentialFamily.entropy(ours), expected, rtol=1e-10)


# VonMises -------------------------------------------------------------------------------------


def test_von_mises_samples_have_its_circular_mean_and_variance() -> None:
    # E[exp(i (x - loc))] = I1 / I0 = 1 - variance: both parts of the sample resultant, within
    # 6 standard errors (each part's variance is at most 1 / 2 per draw)
    lucid.manual_seed(0)
    loc = _array(-3.0, 0.0, 1.0, 3.1)
    concentration = _array(0.01, 0.7, 4.0, 50.0)
    dist = D.VonMises(lucid.tensor(loc), lucid.tensor(concentration))
    count = 20000
    samples = dist.sample((count,)).numpy()
    assert samples.dtype == np.float64
    assert np.all((samples >= -math.pi) & (samples < math.pi))
    bound = 6 * np.sqrt(0.5 / count)
    resultant = np.exp(1j * (samples - loc)).mean(0)
    np.testing.assert_allclose(resultant.real, 1 - dist.variance.numpy(), atol=bound)
    np.testing.assert_allclose(resultant.imag, 0.0, atol=bound)


def test_von_mises_sampling_is_reproducible_and_keeps_float32() -> None:
    dist = D.VonMises(lucid.tensor([0.5, -1.0]), lucid.tensor([1e-7, 2.0]))
    lucid.manual_seed(2)
    first = dist.sample((100,))
    lucid.manual_seed(2)
    np.testing.assert_array_equal(dist.sample((100,)).numpy(), first.numpy())
    assert first.dtype == lucid.float32 and not first.requires_grad
    theirs = torch.distributions.VonMises(torch.tensor([0.5, -1.0]), torch.tensor([1e-7, 2.0]))
    assert tuple(first.shape) == tuple(theirs.sample((100,)).shape)


def test_von_mises_density_integrates_to_one() -> None:
    # the normalizer's polynomial approximations (as torch's) are accurate to about 5e-7
    # relative: Abramowitz and Stegun bound 9.8.2's error by 1.9e-7 on a value near 0.4
    grid = np.linspace(-math.pi, math.pi, 20001)
    dist = D.VonMises(lucid.tensor(np.full(3, 0.3)), lucid.tensor(_array(0.2, 3.7, 30.0)))
    density = np.exp(dist.log_prob(lucid.tensor(grid[:, None])).numpy())
    total = density[:-1].sum(0) * (grid[1] - grid[0])  # periodic: the rectangle rule is exact
    np.testing.assert_allclose(total, 1.0, rtol=5e-7)


def test_von_mises_log_bessel_approximation_is_close_to_i0e() -> None:
    from lucid.distributions.von_mises import _log_modified_bessel_fn

    x = lucid.tensor(np.geomspace(1e-3, 200.0, 60))
    exact = (lucid.special.i0e(x).log() + x).numpy()
    np.testing.assert_allclose(_log_modified_bessel_fn(x, 0).numpy(), exact, atol=3e-7)
    exact_i1 = (lucid.special.i1e(x).log() + x).numpy()
    np.testing.assert_allclose(_log_modified_bessel_fn(x, 1).numpy(), exact_i1, atol=3e-7)
    with pytest.raises(AssertionError, match="order must be 0 or 1, got 2"):
        _log_modified_bessel_fn(x, 2)


def test_von_mises_expand_keeps_validation() -> None:
    ours = D.VonMises(lucid.tensor([0.0, 1.0]), lucid.tensor([1.0, 2.0]), validate_args=True)
    expanded = ours.expand((3, 2))
    assert type(expanded) is D.VonMises and expanded._validate_args
    assert expanded.batch_shape == lucid.Size([3, 2])
    assert not D.VonMises(0.0, 1.0, validate_args=False).expand((2,))._validate_args


# Kumaraswamy, Pareto, Weibull -----------------------------------------------------------------


def test_kumaraswamy_mode_is_the_density_maximum() -> None:
    # PyTorch's mode is nan wherever a, b >= 1; lucid's is ((a - 1) / (a b - 1)) ** (1 / a)
    a, b = _array(2.0, 1.0, 3.0, 1.5), _array(5.0, 3.0, 1.0, 1.5)
    dist = D.Kumaraswamy(lucid.tensor(a), lucid.tensor(b))
    mode = dist.mode.numpy()
    np.testing.assert_allclose(mode, ((a - 1) / (a * b - 1)) ** (1 / a), rtol=1e-14)
    grid = np.linspace(0.0, 1.0, 100001)[1:-1, None]
    log_density = dist.log_prob(lucid.tensor(grid)).numpy()
    best = grid[np.argmax(log_density, axis=0), 0]
    np.testing.assert_allclose(mode, np.clip(best, 0.0, 1.0), atol=2e-5)
    undefined = D.Kumaraswamy(
        lucid.tensor(_array(0.5, 2.0, 1.0)), lucid.tensor(_array(2.0, 0.5, 1.0))
    )
    assert np.isnan(undefined.mode.numpy()).all()


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("Pareto", (_array(0.5, 2.0), _array(0.5, 1.5))),  # alpha <= 1 and <= 2: infinite moments
        ("Weibull", (_array(0.5, 2.0), _array(0.5, 3.0))),
        ("Kumaraswamy", (_array(0.5, 2.0), _array(3.0, 1.5))),
        ("InverseGamma", (_array(3.0, 5.0), _array(0.5, 2.0))),
    ],
)
def test_transformed_families_match_torch_and_repr(name: str, params) -> None:
    ours, theirs = _both(name, *params)
    for attribute in ("mean", "variance"):
        _assert_close(getattr(ours, attribute), getattr(theirs, attribute))
    _assert_close(ours.entropy(), theirs.entropy())
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    assert ours.has_rsample == theirs.has_rsample
    assert repr(ours.support) == repr(theirs.support).replace("torch.", "lucid.")


def test_weibull_expand_rebuilds_its_transforms() -> None:
    ours, theirs = _both("Weibull", _array(1.0, 2.0), _array(0.5, 3.0))
    ours_expanded, theirs_expanded = ours.expand((3, 2)), theirs.expand((3, 2))
    assert ours_expanded.concentration_reciprocal.shape == lucid.Size([3, 2])
    value = np.linspace(0.5, 3.0, 6).reshape(3, 2)
    _assert_close(
        ours_expanded.log_prob(lucid.tensor(value)), theirs_expanded.log_prob(torch.tensor(value))
    )
    _assert_close(ours_expanded.cdf(lucid.tensor(value)), theirs_expanded.cdf(torch.tensor(value)))


# PowerTransform -------------------------------------------------------------------------------


@pytest.mark.parametrize("exponent", [2.5, -1.0, np.array([0.5, -2.0, 3.0])], ids=str)
def test_power_transform_matches_torch(exponent) -> None:
    def build(module):
        value = module.tensor(exponent) if isinstance(exponent, np.ndarray) else exponent
        return module.distributions.PowerTransform(value)

    ours, theirs = build(lucid), build(torch)
    x = np.array([[0.2, 1.0, 3.5], [0.7, 2.0, 0.05]])
    y_ours, y_theirs = ours(lucid.tensor(x)), theirs(torch.tensor(x))
    _assert_close(y_ours, y_theirs)
    _assert_close(ours.inv(y_ours), theirs.inv(y_theirs))
    _assert_close(
        ours.log_abs_det_jacobian(lucid.tensor(x), y_ours),
        theirs.log_abs_det_jacobian(torch.tensor(x), y_theirs),
    )
    _assert_close(ours.sign, theirs.sign)
    assert ours.bijective and repr(ours.domain) == repr(theirs.domain)
    assert repr(ours.codomain) == repr(theirs.codomain)
    assert repr(ours) == repr(theirs)
    assert tuple(ours.forward_shape((4, 3))) == tuple(theirs.forward_shape((4, 3)))
    assert tuple(ours.inverse_shape((4, 3))) == tuple(theirs.inverse_shape((4, 3)))


def test_power_transform_equality_and_cache() -> None:
    first = D.PowerTransform(lucid.tensor(2.0))
    assert first == D.PowerTransform(lucid.tensor(2.0))
    assert first != D.PowerTransform(lucid.tensor(3.0))
    assert first != D.ExpTransform()
    cached = first.with_cache()
    assert cached is not first and cached.with_cache() is cached
    x = lucid.tensor([0.5, 4.0])
    assert cached.inv(cached(x)) is x
    # the Jacobian's gradient: d/dx log|a x^(a-1)| = (a - 1) / x
    x = lucid.tensor([0.5, 4.0], dtype=lucid.float64, requires_grad=True)
    transform = D.PowerTransform(lucid.tensor(2.5, dtype=lucid.float64))
    transform.log_abs_det_jacobian(x, transform(x)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.5 / np.array([0.5, 4.0]), rtol=1e-13)


# KL divergences -------------------------------------------------------------------------------

# (p's name and parameters, q's name and parameters): finite cases with every parameter of p
# and q differentiable; the infinite and the generic pairs are in test_kl.py
KL_PAIRS = [
    (
        ("Binomial", {"total_count": np.full(3, 6.0), "probs": _array(0.2, 0.5, 0.9)}),
        ("Binomial", {"total_count": np.full(3, 6.0), "probs": _array(0.4, 0.3, 0.6)}),
    ),
    (
        ("ContinuousBernoulli", {"probs": _array(0.2, 0.4995, 0.8)}),
        ("ContinuousBernoulli", {"probs": _array(0.7, 0.1, 0.5005)}),
    ),
    (
        ("Pareto", {"scale": _array(1.0, 2.0, 3.0), "alpha": _array(0.8, 2.5, 4.0)}),
        ("Pareto", {"scale": _array(0.5, 1.0, 2.5), "alpha": _array(2.0, 1.5, 3.0)}),
    ),
    (
        ("Pareto", {"scale": _array(1.0, 2.0, 3.0), "alpha": _array(1.5, 2.5, 4.0)}),
        ("Exponential", {"rate": _array(0.5, 1.0, 2.0)}),
    ),
    (
        ("Pareto", {"scale": _array(1.0, 2.0, 3.0), "alpha": _array(1.5, 2.5, 4.0)}),
        ("Gamma", {"concentration": _array(0.5, 1.0, 2.0), "rate": _array(2.0, 1.0, 0.5)}),
    ),
    (
        ("Pareto", {"scale": _array(1.0, 2.0, 3.0), "alpha": _array(2.5, 3.5, 4.0)}),
        ("Normal", {"loc": _array(0.5, 1.0, 2.0), "scale": _array(2.0, 1.0, 0.5)}),
    ),
    (
        ("ContinuousBernoulli", {"probs": _array(0.2, 0.4995, 0.8)}),
        ("Exponential", {"rate": _array(0.5, 1.0, 2.0)}),
    ),
    (
        ("ContinuousBernoulli", {"probs": _array(0.2, 0.4995, 0.8)}),
        ("Normal", {"loc": _array(0.5, 1.0, 2.0), "scale": _array(2.0, 1.0, 0.5)}),
    ),
    (
        ("ContinuousBernoulli", {"probs": _array(0.2, 0.4995, 0.8)}),
        ("Uniform", {"low": _array(-0.5, -1.0, 0.0), "high": _array(1.5, 2.0, 1.0)}),
    ),
    (
        ("Beta", {"concentration1": _array(0.5, 1.0, 2.0), "concentration0": _array(2.0, 1, 3)}),
        ("ContinuousBernoulli", {"probs": _array(0.2, 0.4995, 0.8)}),
    ),
    (
        ("Uniform", {"low": _array(0.1, 0.2, 0.0), "high": _array(0.5, 0.9, 1.0)}),
        ("ContinuousBernoulli", {"probs": _array(0.2, 0.4995, 0.8)}),
    ),
    (
        ("Uniform", {"low": _array(0.5, 1.0, 3.0), "high": _array(1.5, 2.0, 4.0)}),
        ("Pareto", {"scale": _array(0.5, 1.0, 2.5), "alpha": _array(2.0, 1.5, 3.0)}),
    ),
]


def _kl_pair(module, p_spec, q_spec):
    tensors = []

    def build(name, params):
        built = {}
        for key, value in params.items():
            built[key] = module.tensor(value, dtype=module.float64, requires_grad=True)
            tensors.append(built[key])
        return getattr(module.distributions, name)(**built)

    kl = module.distributions.kl_divergence(build(*p_spec), build(*q_spec))
    return kl, tensors


@pytest.mark.parametrize(
    ("p_spec", "q_spec"), KL_PAIRS, ids=[f"{p[0]}-{q[0]}" for p, q in KL_PAIRS]
)
def test_kl_pair_and_its_gradients_match_torch(p_spec, q_spec) -> None:
    ours, ours_tensors = _kl_pair(lucid, p_spec, q_spec)
    theirs, theirs_tensors = _kl_pair(torch, p_spec, q_spec)
    _assert_close(ours, theirs)
    finite = np.isfinite(theirs.detach().numpy())
    weights = np.where(finite, np.linspace(0.5, 1.5, finite.size), 0.0)
    (lucid.where(lucid.tensor(finite), ours, 0.0) * lucid.tensor(weights)).sum().backward()
    (torch.where(torch.tensor(finite), theirs, 0.0) * torch.tensor(weights)).sum().backward()
    for mine, reference in zip(ours_tensors, theirs_tensors):
        np.testing.assert_allclose(
            generic._grad_or_zeros(mine), generic._grad_or_zeros(reference), rtol=1e-9, atol=1e-12
        )


def test_kl_binomial_with_fewer_trials_in_p_raises_and_more_is_infinite() -> None:
    def pair(module, p_counts, q_counts):
        dist = module.distributions
        probs = module.tensor([0.3, 0.6], dtype=module.float64)
        return dist.Binomial(module.tensor(p_counts, dtype=module.float64), probs), dist.Binomial(
            module.tensor(q_counts, dtype=module.float64), probs.flip(0)
        )

    expected = _error(
        lambda: torch.distributions.kl_divergence(*pair(torch, [3.0, 5.0], [4.0, 5.0]))
    )
    assert expected[0] is NotImplementedError
    assert _error(lambda: D.kl_divergence(*pair(lucid, [3.0, 5.0], [4.0, 5.0]))) == expected
    ours = D.kl_divergence(*pair(lucid, [6.0, 5.0], [4.0, 5.0]))
    theirs = torch.distributions.kl_divergence(*pair(torch, [6.0, 5.0], [4.0, 5.0]))
    _assert_close(ours, theirs)
    assert np.isinf(ours.numpy()[0]) and np.isfinite(ours.numpy()[1])
