"""Each distribution of the catalogue against torch.distributions: values, gradients,
gradcheck, shapes, validate_args errors word for word, and sample statistics."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from tests.distributions.catalogue import CASES, DistCase
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

CASE_IDS = [case.id for case in CASES]


def _lucid_params(case: DistCase, requires_grad: bool = False) -> dict:
    return {
        name: lucid.tensor(value, dtype=lucid.float64, requires_grad=requires_grad)
        for name, value in case.params.items()
    }


def _torch_params(case: DistCase, requires_grad: bool = False) -> dict:
    return {
        name: torch.tensor(value, dtype=torch.float64, requires_grad=requires_grad)
        for name, value in case.params.items()
    }


def _pair(case: DistCase, requires_grad: bool = False):
    ours = getattr(D, case.name)(**_lucid_params(case, requires_grad))
    theirs = getattr(torch.distributions, case.name)(**_torch_params(case, requires_grad))
    return ours, theirs


def _assert_close(ours, theirs, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    expected = theirs.detach().numpy()
    actual = ours.detach().numpy()
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def _evaluations(case: DistCase) -> dict:
    """Each method or property name and how to evaluate it on a distribution."""
    return {
        "log_prob": lambda dist, module: dist.log_prob(module.tensor(case.values)),
        "cdf": lambda dist, module: dist.cdf(module.tensor(case.values)),
        "icdf": lambda dist, module: dist.icdf(
            module.tensor(case.quantiles if case.quantiles is not None else [0.5])
        ),
        "entropy": lambda dist, module: dist.entropy(),
        "perplexity": lambda dist, module: dist.perplexity(),
        "mean": lambda dist, module: dist.mean,
        "mode": lambda dist, module: dist.mode,
        "variance": lambda dist, module: dist.variance,
        "stddev": lambda dist, module: dist.stddev,
    }


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize(
    "method",
    ["log_prob", "cdf", "icdf", "entropy", "perplexity", "mean", "mode", "variance", "stddev"],
)
def test_values_match_torch(case: DistCase, method: str) -> None:
    ours, theirs = _pair(case)
    evaluate = _evaluations(case)[method]
    try:
        expected = evaluate(theirs, torch)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            evaluate(ours, lucid)
        return
    _assert_close(evaluate(ours, lucid), expected, rtol=1e-10)


def _grad_or_zeros(tensor) -> np.ndarray:
    if tensor.grad is None:
        return np.zeros(tuple(tensor.shape))
    return tensor.grad.detach().numpy()


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("method", ["log_prob", "cdf", "entropy", "mean", "variance"])
def test_gradients_match_torch(case: DistCase, method: str) -> None:
    lucid_params = _lucid_params(case, requires_grad=True)
    torch_params = _torch_params(case, requires_grad=True)
    ours = getattr(D, case.name)(**lucid_params)
    theirs = getattr(torch.distributions, case.name)(**torch_params)
    evaluate = _evaluations(case)[method]
    try:
        expected = evaluate(theirs, torch)
    except NotImplementedError:
        return
    if not expected.requires_grad:
        return
    weights = np.linspace(0.5, 1.5, expected.numel()).reshape(tuple(expected.shape))
    try:
        (expected * torch.tensor(weights)).sum().backward()
    except NotImplementedError as error:  # Gamma's cdf has no derivative in concentration
        with pytest.raises(NotImplementedError, match=str(error)):
            (evaluate(ours, lucid) * lucid.tensor(weights)).sum().backward()
        return
    (evaluate(ours, lucid) * lucid.tensor(weights)).sum().backward()
    for name in case.params:
        np.testing.assert_allclose(
            _grad_or_zeros(lucid_params[name]),
            _grad_or_zeros(torch_params[name]),
            rtol=1e-9,
            atol=1e-12,
            err_msg=name,
        )


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_log_prob_passes_gradcheck(case: DistCase) -> None:
    names = list(case.differentiable)
    given = _lucid_params(case, requires_grad=True)
    value = lucid.tensor(case.values)

    def log_prob(*tensors):
        params = dict(given)
        params.update(zip(names, tensors))
        return getattr(D, case.name)(**params, validate_args=False).log_prob(value)

    assert gradcheck(log_prob, [given[name] for name in names])


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.quantiles is not None],
    ids=[case.id for case in CASES if case.quantiles is not None],
)
def test_rsample_gradient_is_the_quantile_reparameterization(case: DistCase) -> None:
    # each of these samples x = icdf(u) at a uniform u, so given the same u, torch's autograd
    # through its icdf gives the gradient rsample must have
    lucid_params = _lucid_params(case, requires_grad=True)
    ours = getattr(D, case.name)(**lucid_params)
    assert ours.has_rsample
    sample = ours.rsample((5,))
    assert sample.requires_grad
    weights = np.linspace(0.5, 1.5, sample.numel()).reshape(tuple(sample.shape))
    (sample * lucid.tensor(weights)).sum().backward()

    torch_params = _torch_params(case, requires_grad=True)
    theirs = getattr(torch.distributions, case.name)(**torch_params)
    quantiles = theirs.cdf(torch.tensor(sample.detach().numpy())).detach()
    (theirs.icdf(quantiles) * torch.tensor(weights)).sum().backward()
    for name in case.params:
        np.testing.assert_allclose(
            lucid_params[name].grad.numpy(), torch_params[name].grad.numpy(), rtol=1e-7
        )


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_shapes_match_torch(case: DistCase) -> None:
    ours, theirs = _pair(case)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert isinstance(ours.batch_shape, lucid.Size)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert tuple(ours.sample().shape) == tuple(theirs.sample().shape)
    assert tuple(ours.sample((3, 2)).shape) == tuple(theirs.sample((3, 2)).shape)
    assert ours.sample().dtype == lucid.float64 or case.name == "Categorical"
    assert not ours.sample().requires_grad
    assert repr(ours.support) == repr(theirs.support).replace("torch.", "lucid.")
    if ours.has_enumerate_support:
        _assert_close(ours.enumerate_support(), theirs.enumerate_support())
        _assert_close(ours.enumerate_support(False), theirs.enumerate_support(False))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_expand_matches_torch(case: DistCase) -> None:
    ours, theirs = _pair(case)
    batch_shape = (3,) + tuple(theirs.batch_shape)
    ours_expanded = ours.expand(batch_shape)
    theirs_expanded = theirs.expand(batch_shape)
    assert type(ours_expanded) is type(ours)
    assert tuple(ours_expanded.batch_shape) == tuple(theirs_expanded.batch_shape)
    assert tuple(ours_expanded.event_shape) == tuple(theirs_expanded.event_shape)
    assert tuple(ours_expanded.sample((2,)).shape) == tuple(theirs_expanded.sample((2,)).shape)
    value = case.values
    _assert_close(
        ours_expanded.log_prob(lucid.tensor(value)), theirs_expanded.log_prob(torch.tensor(value))
    )


def _error(constructor):
    with pytest.raises(Exception) as info:
        constructor()
    return info.type, str(info.value).replace("torch.", "lucid.")


@pytest.mark.parametrize(
    "case", [case for case in CASES if case.invalid_params], ids=lambda case: case.id
)
def test_invalid_parameters_raise_torchs_error(case: DistCase) -> None:
    def ours():
        params = {k: lucid.tensor(v) for k, v in case.invalid_params.items()}
        return getattr(D, case.name)(**params, validate_args=True)

    def theirs():
        params = {k: torch.tensor(v) for k, v in case.invalid_params.items()}
        return getattr(torch.distributions, case.name)(**params, validate_args=True)

    expected = _error(theirs)
    assert expected[0] is ValueError
    assert _error(ours) == expected

    def theirs_unchecked():
        params = {k: torch.tensor(v) for k, v in case.invalid_params.items()}
        return getattr(torch.distributions, case.name)(**params, validate_args=False)

    def ours_unchecked():
        params = {k: lucid.tensor(v) for k, v in case.invalid_params.items()}
        return getattr(D, case.name)(**params, validate_args=False)

    try:
        theirs_unchecked()
    except ValueError:  # StudentT's inner Chi2 validates by default, in torch too
        assert _error(ours_unchecked) == _error(theirs_unchecked)
        return
    ours_unchecked()  # no check when turned off


@pytest.mark.parametrize(
    "case", [case for case in CASES if case.invalid_value is not None], ids=lambda case: case.id
)
@pytest.mark.parametrize("method", ["log_prob", "cdf"])
def test_values_outside_the_support_raise_torchs_error(case: DistCase, method: str) -> None:
    ours, theirs = _pair(case)
    ours._validate_args = theirs._validate_args = True
    try:
        getattr(theirs, method)(torch.tensor(case.values))
    except NotImplementedError:
        return
    ours, theirs = _pair(case)  # fresh, so neither has derived lazy parameters yet
    ours._validate_args = theirs._validate_args = True
    expected = _error(lambda: getattr(theirs, method)(torch.tensor(case.invalid_value)))
    assert _error(lambda: getattr(ours, method)(lucid.tensor(case.invalid_value))) == expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_value_of_wrong_shape_raises_torchs_error(case: DistCase) -> None:
    ours, theirs = _pair(case)
    wrong = np.zeros((5,) + tuple(theirs.event_shape))
    expected = _error(lambda: theirs.log_prob(torch.tensor(wrong)))
    assert _error(lambda: ours.log_prob(lucid.tensor(wrong))) == expected
    if theirs.event_shape:
        wrong_event = np.zeros((2, 7))
        expected = _error(lambda: theirs.log_prob(torch.tensor(wrong_event)))
        assert _error(lambda: ours.log_prob(lucid.tensor(wrong_event))) == expected
    if case.name in ("Gamma", "Chi2"):  # take a value that is not a tensor, as torch does
        _assert_close(ours.log_prob(case.values.tolist()), theirs.log_prob(case.values.tolist()))
        return
    expected = _error(lambda: theirs.log_prob(case.values.tolist()))
    assert _error(lambda: ours.log_prob(case.values.tolist())) == expected


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("Bernoulli", {}),
        ("Bernoulli", {"probs": 0.5, "logits": 0.0}),
        ("Categorical", {}),
        ("Geometric", {}),
        ("OneHotCategorical", {}),
    ],
)
def test_probs_or_logits_but_not_both(name: str, kwargs: dict) -> None:
    expected = _error(lambda: getattr(torch.distributions, name)(**kwargs))
    assert _error(lambda: getattr(D, name)(**kwargs)) == expected


def test_categorical_rejects_a_scalar_parameter() -> None:
    for key in ("probs", "logits"):
        theirs = {key: torch.tensor(0.5)}
        ours = {key: lucid.tensor(0.5)}
        expected = _error(lambda: torch.distributions.Categorical(**theirs))  # noqa: B023
        assert _error(lambda: D.Categorical(**ours)) == expected  # noqa: B023


def test_geometric_rejects_zero_probability() -> None:
    expected = _error(lambda: torch.distributions.Geometric(torch.tensor([0.0, 0.5])))
    assert _error(lambda: D.Geometric(lucid.tensor([0.0, 0.5]))) == expected


def test_independent_rejects_too_many_reinterpreted_dims() -> None:
    expected = _error(lambda: torch.distributions.Independent(torch.distributions.Normal(0, 1), 1))
    assert _error(lambda: D.Independent(D.Normal(0.0, 1.0), 1)) == expected


def test_set_default_validate_args() -> None:
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)  # not checked
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_scalar_parameters_give_an_empty_batch_shape() -> None:
    normal = D.Normal(0.0, 1.0)
    assert normal.batch_shape == lucid.Size()
    assert normal.loc.dtype == lucid.get_default_dtype()
    assert D.Normal(lucid.tensor([0.0], dtype=lucid.float64), 1.0).scale.dtype == lucid.float64
    assert repr(normal) == repr(torch.distributions.Normal(0.0, 1.0))
    assert (
        repr(D.Normal(lucid.zeros(2), 1.0))
        == "Normal(loc: lucid.Size([2]), scale: lucid.Size([2]))"
    )


def test_independent_matches_torch() -> None:
    loc = np.arange(6.0).reshape(2, 3) / 3
    scale = np.linspace(0.5, 2.0, 6).reshape(2, 3)
    value = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    ours = D.Independent(D.Normal(lucid.tensor(loc), lucid.tensor(scale)), 1)
    theirs = torch.distributions.Independent(
        torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale)), 1
    )
    assert ours.batch_shape == lucid.Size([2]) and ours.event_shape == lucid.Size([3])
    assert ours.has_rsample
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))
    _assert_close(ours.entropy(), theirs.entropy())
    _assert_close(ours.mean, theirs.mean)
    _assert_close(ours.variance, theirs.variance)
    expanded = ours.expand((4, 2))
    assert expanded.batch_shape == lucid.Size([4, 2])
    assert expanded.sample((5,)).shape == lucid.Size([5, 4, 2, 3])
    assert repr(ours.support) == repr(theirs.support)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")


# no finite mean and variance to compare with
HEAVY_TAILED = ("Cauchy", "HalfCauchy", "StudentT-undefined-moments")
# mean and variance are circular, not linear (test_distributions_more_discrete.py checks them)
CIRCULAR = ("VonMises",)
# no closed-form mean or variance, in torch either (test_relaxed.py checks their samples)
NO_MOMENTS = ("LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical")
STATISTICS_CASES = [
    case for case in CASES if case.id not in HEAVY_TAILED + CIRCULAR and case.name not in NO_MOMENTS
]


@pytest.mark.parametrize("case", STATISTICS_CASES, ids=[case.id for case in STATISTICS_CASES])
def test_sample_mean_and_variance(case: DistCase) -> None:
    # 20000 draws from a fixed seed: the error of the mean is about std / 141, so a bound of
    # 6 standard errors cannot flake
    lucid.manual_seed(0)
    dist = getattr(D, case.name)(**_lucid_params(case))
    count = 20000
    samples = dist.sample((count,)).double().numpy()
    mean = dist.mean.numpy()
    variance = dist.variance.numpy()
    if case.name == "Categorical":  # its mean is nan: test the frequency of each category
        samples = np.eye(dist.probs.shape[-1])[samples.astype(np.int64)]
        mean = dist.probs.numpy()
        variance = mean * (1 - mean)
    bound = 6 * np.sqrt(variance / count)
    assert np.all(np.abs(samples.mean(0) - mean) <= bound)
    np.testing.assert_allclose(samples.var(0), variance, rtol=0.08)


def test_sampling_follows_manual_seed() -> None:
    dist = D.Normal(lucid.zeros(3), lucid.ones(3))
    lucid.manual_seed(7)
    first = dist.sample((4,)).numpy()
    lucid.manual_seed(7)
    np.testing.assert_array_equal(dist.rsample((4,)).detach().numpy(), first)


def test_cauchy_sample_median() -> None:
    lucid.manual_seed(0)
    samples = D.Cauchy(lucid.tensor([1.0, -2.0]), lucid.tensor([0.5, 2.0])).sample((20000,))
    quartiles = np.quantile(samples.numpy(), [0.25, 0.5, 0.75], axis=0)
    np.testing.assert_allclose(quartiles, [[0.5, -4.0], [1.0, -2.0], [1.5, 0.0]], atol=0.1)


def test_gamma_rsample_gradient_is_implicit_reparameterization() -> None:
    # dx/dalpha = -(dP(alpha, x)/dalpha) / density; torch approximates the same derivative
    # to about 1e-4 relative
    concentration = lucid.tensor([0.3, 0.9, 1.5, 4.0, 12.0, 50.0], requires_grad=True)
    rate = lucid.tensor([0.5, 1.0, 2.0, 1.0, 3.0, 0.7], requires_grad=True)
    sample = D.Gamma(concentration.double(), rate.double()).rsample((50,))
    sample.sum().backward()
    standard = (sample * lucid.tensor(rate.detach().double().numpy())).detach().numpy()
    alpha = np.broadcast_to(concentration.detach().double().numpy(), standard.shape)
    expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(standard)).numpy()
    expected = (expected / rate.detach().double().numpy()).sum(0)
    np.testing.assert_allclose(concentration.grad.numpy(), expected, rtol=3e-4)
    # x = standard / rate: dx/drate = -x / rate
    np.testing.assert_allclose(
        rate.grad.numpy(), -(sample.detach().numpy() / rate.detach().numpy()).sum(0), rtol=1e-6
    )
    assert sample.grad_fn is not None


@pytest.mark.parametrize("name", ["Beta", "Dirichlet"])
def test_rsample_gradient_of_the_mean_matches_the_analytic_one(name: str) -> None:
    # d/dalpha of E[x_0] = alpha_0 / sum(alpha): the sample average of the per-sample
    # gradients must agree (20000 draws from a fixed seed, within a few standard errors)
    lucid.manual_seed(0)
    alpha = np.array([2.0, 3.0])
    concentration = lucid.tensor(alpha, requires_grad=True)
    if name == "Beta":
        dist = D.Beta(concentration[0], concentration[1])
        first = dist.rsample((20000,))
    else:
        first = D.Dirichlet(concentration).rsample((20000,))[:, 0]
    first.mean().backward()
    total = alpha.sum()
    expected = np.array([alpha[1] / total**2, -alpha[0] / total**2])
    np.testing.assert_allclose(concentration.grad.numpy(), expected, atol=4e-3)


def test_exponential_family_entropy_matches_closed_form() -> None:
    dists = [
        D.Normal(lucid.tensor([0.0, 1.0]), lucid.tensor([0.5, 2.0])),
        D.Exponential(lucid.tensor([0.5, 2.0])),
        D.Bernoulli(lucid.tensor([0.2, 0.7])),
    ]
    for dist in dists:
        np.testing.assert_allclose(
            D.ExponentialFamily.entropy(dist).detach().numpy(), dist.entropy().numpy(), rtol=1e-5
        )


def test_straight_through_rsample_is_the_sample_with_the_gradient_of_probs() -> None:
    probs = lucid.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], requires_grad=True)
    dist = D.OneHotCategoricalStraightThrough(probs)
    assert dist.has_rsample
    sample = dist.rsample((4,))
    assert sample.shape == lucid.Size([4, 2, 3])
    assert bool(((sample == 0) | (sample == 1)).all())
    weights = lucid.arange(24.0).reshape(4, 2, 3)
    (sample * weights).sum().backward()
    theirs = torch.tensor(probs.detach().numpy(), requires_grad=True)
    torch_dist = torch.distributions.OneHotCategoricalStraightThrough(theirs)
    torch_sample = torch_dist.rsample((4,))
    (torch_sample * torch.arange(24.0).reshape(4, 2, 3)).sum().backward()
    np.testing.assert_allclose(probs.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


def _entropies(ours, theirs):
    """Both entropies, or (None, None) where torch has none (and then lucid has none)."""
    try:
        expected = theirs.entropy()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.entropy()
        return None, None
    return ours.entropy(), expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_float32_parameters_stay_float32_and_match_torch(case: DistCase) -> None:
    ours = getattr(D, case.name)(
        **{k: lucid.tensor(v, dtype=lucid.float32) for k, v in case.params.items()}
    )
    theirs = getattr(torch.distributions, case.name)(
        **{k: torch.tensor(v, dtype=torch.float32) for k, v in case.params.items()}
    )
    value = case.values.astype(np.float32)
    for ours_result, theirs_result in [
        (ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value))),
        _entropies(ours, theirs),
        (ours.sample((3,)), theirs.sample((3,))),
    ]:
        if ours_result is None:
            continue
        assert str(ours_result.dtype).replace("lucid.", "") == str(theirs_result.dtype).replace(
            "torch.", ""
        )
    np.testing.assert_allclose(
        ours.log_prob(lucid.tensor(value)).numpy(),
        theirs.log_prob(torch.tensor(value)).numpy(),
        rtol=2e-5,
        atol=1e-6,
    )
