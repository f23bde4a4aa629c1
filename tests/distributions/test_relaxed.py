"""The relaxed (Concrete) distributions and the logistic normal beyond the catalogue rows: their
samples' distribution, rsample's values and gradients given the same uniforms as torch's
formula, and their base distributions against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck, gradgradcheck
from lucid.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
from lucid.distributions.relaxed_categorical import ExpRelaxedCategorical
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

COUNT = 20000
TEMPERATURES = np.array([0.5, 1.0, 2.0, 0.3])
PROBS = np.array([0.1, 0.35, 0.5, 0.9])
SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])


def _torch_import(name: str):
    module, _, attribute = name.rpartition(".")
    return getattr(getattr(torch.distributions, module), attribute)


def test_relaxed_bernoulli_samples_follow_its_cdf() -> None:
    # logit(Y) = (logit(U) + logits) / T, so P(Y <= y) = sigmoid(T logit(y) - logits): the
    # largest gap to the empirical cdf of 20000 draws is about 0.7 / sqrt(20000) = 0.005,
    # and a fixed seed keeps it from flaking
    lucid.manual_seed(0)
    dist = D.RelaxedBernoulli(lucid.tensor(TEMPERATURES), lucid.tensor(PROBS))
    samples = np.sort(dist.sample((COUNT,)).numpy(), axis=0)
    assert samples.shape == (COUNT, 4)
    assert np.all((samples > 0) & (samples < 1))
    logits = np.log(PROBS) - np.log1p(-PROBS)
    cdf = 1 / (1 + np.exp(-(TEMPERATURES * (np.log(samples) - np.log1p(-samples)) - logits)))
    empirical = np.arange(1, COUNT + 1)[:, None] / COUNT
    assert np.abs(cdf - empirical).max() < 0.015


def test_relaxed_one_hot_categorical_samples_peak_with_the_categorical_probabilities() -> None:
    # the Gumbel-max trick: the largest entry of a sample is category k with probability
    # probs[k], at any temperature; 6 standard errors of 20000 draws cannot flake
    lucid.manual_seed(0)
    dist = D.RelaxedOneHotCategorical(lucid.tensor(0.4), lucid.tensor(SIMPLEX))
    samples = dist.sample((COUNT,)).numpy()
    np.testing.assert_allclose(samples.sum(-1), 1.0, rtol=1e-12)
    frequencies = np.eye(3)[samples.argmax(-1)].mean(0)
    bound = 6 * np.sqrt(SIMPLEX * (1 - SIMPLEX) / COUNT)
    assert np.all(np.abs(frequencies - SIMPLEX) <= bound)


def test_relaxed_one_hot_categorical_concentrates_on_vertices_at_low_temperature() -> None:
    lucid.manual_seed(0)
    cold = D.RelaxedOneHotCategorical(lucid.tensor(0.05), lucid.tensor(SIMPLEX)).sample((500,))
    hot = D.RelaxedOneHotCategorical(lucid.tensor(5.0), lucid.tensor(SIMPLEX)).sample((500,))
    assert float(cold.max(-1)[0].mean()) > 0.9
    assert float(hot.max(-1)[0].mean()) < 0.6


def test_logistic_normal_samples_are_a_normal_stick_broken() -> None:
    # the inverse stick breaking of the samples is Normal(loc, scale): its mean within 6
    # standard errors and its variance within 8%
    lucid.manual_seed(0)
    loc = np.array([0.2, -0.5, 1.0])
    scale = np.array([0.5, 1.0, 1.5])
    dist = D.LogisticNormal(lucid.tensor(loc), lucid.tensor(scale))
    samples = dist.sample((COUNT,))
    np.testing.assert_allclose(samples.sum(-1).numpy(), 1.0, rtol=1e-12)
    normal = D.StickBreakingTransform().inv(samples).numpy()
    assert np.all(np.abs(normal.mean(0) - loc) <= 6 * scale / np.sqrt(COUNT))
    np.testing.assert_allclose(normal.var(0), scale**2, rtol=0.08)


def _reparameterized(torch_expression, ours_sample, draw_uniforms, params):
    """torch's formula on the very uniforms lucid's rsample drew (drawn again after
    reseeding), and the gradients of both samples, weighted alike."""
    weights = np.linspace(0.5, 1.5, ours_sample.numel()).reshape(tuple(ours_sample.shape))
    (ours_sample * lucid.tensor(weights)).sum().backward()
    lucid.manual_seed(3)
    uniforms = torch.tensor(draw_uniforms().numpy())
    theirs_params = {
        k: torch.tensor(v.detach().numpy(), requires_grad=True) for k, v in params.items()
    }
    theirs_sample = torch_expression(uniforms, **theirs_params)
    (theirs_sample * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(
        ours_sample.detach().numpy(), theirs_sample.detach().numpy(), rtol=1e-12, atol=1e-14
    )
    for name, param in params.items():
        np.testing.assert_allclose(
            param.grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-10, err_msg=name
        )


def _clamp_probs(probs):
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def test_relaxed_bernoulli_rsample_is_the_reparameterized_sigmoid() -> None:
    params = {
        "temperature": lucid.tensor(TEMPERATURES, requires_grad=True),
        "probs": lucid.tensor(PROBS, requires_grad=True),
    }
    dist = D.RelaxedBernoulli(**params)
    assert dist.has_rsample
    lucid.manual_seed(3)
    sample = dist.rsample((5,))
    assert sample.requires_grad

    def expression(uniforms, temperature, probs):
        u = _clamp_probs(uniforms)
        p = _clamp_probs(probs.expand(uniforms.shape))
        return torch.sigmoid((u.log() - (-u).log1p() + p.log() - (-p).log1p()) / temperature)

    _reparameterized(expression, sample, lambda: lucid.rand((5, 4), dtype=lucid.float64), params)


@pytest.mark.parametrize("parameter", ["probs", "logits"])
def test_relaxed_one_hot_categorical_rsample_is_the_gumbel_softmax(parameter: str) -> None:
    given = SIMPLEX if parameter == "probs" else np.log(SIMPLEX) + 0.3
    params = {
        "temperature": lucid.tensor(0.7, dtype=lucid.float64, requires_grad=True),
        parameter: lucid.tensor(given, requires_grad=True),
    }
    dist = D.RelaxedOneHotCategorical(**params)
    lucid.manual_seed(3)
    sample = dist.rsample((5,))

    def expression(uniforms, temperature, **parameters):
        logits = torch.distributions.Categorical(**parameters).logits
        gumbels = -((-(_clamp_probs(uniforms).log())).log())
        return torch.softmax((logits + gumbels) / temperature, dim=-1)

    _reparameterized(expression, sample, lambda: lucid.rand((5, 2, 3), dtype=lucid.float64), params)


def test_logistic_normal_rsample_gradient_flows_to_loc_and_scale() -> None:
    loc = lucid.tensor([0.2, -0.5, 1.0], dtype=lucid.float64, requires_grad=True)
    scale = lucid.tensor([0.5, 1.0, 1.5], dtype=lucid.float64, requires_grad=True)
    lucid.manual_seed(3)
    sample = D.LogisticNormal(loc, scale).rsample((5,))

    def expression(normals, loc, scale):
        return torch.distributions.StickBreakingTransform()(loc + scale * normals)

    _reparameterized(
        expression,
        sample,
        lambda: lucid.empty((5, 3), dtype=lucid.float64).normal_(),
        {"loc": loc, "scale": scale},
    )


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical"])
def test_rsample_passes_gradcheck_in_the_parameters(name: str) -> None:
    # the same uniforms each call (reseeded), so rsample is a function of the parameters
    param = PROBS if name == "RelaxedBernoulli" else SIMPLEX

    def rsample(temperature, probs):
        lucid.manual_seed(5)
        return getattr(D, name)(temperature, probs, validate_args=False).rsample((3,))

    inputs = [
        lucid.tensor(0.8, dtype=lucid.float64, requires_grad=True),
        lucid.tensor(param, requires_grad=True),
    ]
    assert gradcheck(rsample, inputs)
    assert gradgradcheck(rsample, inputs)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("relaxed_bernoulli.LogitRelaxedBernoulli", {"probs": PROBS}),
        ("relaxed_bernoulli.LogitRelaxedBernoulli", {"logits": PROBS - 0.5}),
        ("relaxed_categorical.ExpRelaxedCategorical", {"probs": SIMPLEX}),
        ("relaxed_categorical.ExpRelaxedCategorical", {"logits": np.log(SIMPLEX)}),
    ],
)
def test_base_distributions_match_torch(name: str, kwargs: dict) -> None:
    ours_class = LogitRelaxedBernoulli if "Bernoulli" in name else ExpRelaxedCategorical
    theirs_class = _torch_import(name)
    temperature = np.array(0.6) if "Categorical" in name else TEMPERATURES
    ours = ours_class(lucid.tensor(temperature), **{k: lucid.tensor(v) for k, v in kwargs.items()})
    theirs = theirs_class(
        torch.tensor(temperature), **{k: torch.tensor(v) for k, v in kwargs.items()}
    )
    assert ours.has_rsample == theirs.has_rsample
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert tuple(ours.param_shape) == tuple(theirs.param_shape)
    assert repr(ours.support) == repr(theirs.support)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    value = np.linspace(-2.0, 2.0, int(np.prod(theirs.batch_shape + theirs.event_shape)))
    value = value.reshape(tuple(theirs.batch_shape + theirs.event_shape))
    np.testing.assert_allclose(
        ours.log_prob(lucid.tensor(value)).numpy(),
        theirs.log_prob(torch.tensor(value)).numpy(),
        rtol=1e-12,
    )
    for attribute in ("probs", "logits"):
        np.testing.assert_allclose(
            getattr(ours, attribute).numpy(), getattr(theirs, attribute).numpy(), rtol=1e-12
        )
    expanded_shape = (3,) + tuple(theirs.batch_shape)
    ours_expanded = ours.expand(expanded_shape)
    assert type(ours_expanded) is ours_class
    assert tuple(ours_expanded.sample((2,)).shape) == tuple(
        theirs.expand(expanded_shape).sample((2,)).shape
    )
    np.testing.assert_allclose(
        ours_expanded.log_prob(lucid.tensor(value)).numpy(),
        theirs.expand(expanded_shape).log_prob(torch.tensor(value)).numpy(),
        rtol=1e-12,
    )


def test_relaxed_distributions_expose_their_parameters() -> None:
    temperature = lucid.tensor(TEMPERATURES)
    dist = D.RelaxedBernoulli(temperature, logits=lucid.tensor(PROBS))
    assert dist.temperature is temperature
    assert isinstance(dist.base_dist, LogitRelaxedBernoulli)
    np.testing.assert_allclose(dist.probs.numpy(), 1 / (1 + np.exp(-PROBS)), rtol=1e-12)
    categorical = D.RelaxedOneHotCategorical(lucid.tensor(0.5), lucid.tensor(SIMPLEX))
    assert isinstance(categorical.base_dist, ExpRelaxedCategorical)
    np.testing.assert_allclose(categorical.logits.numpy(), np.log(SIMPLEX), rtol=1e-12)
    normal = D.LogisticNormal(lucid.zeros(3), lucid.ones(3))
    assert normal.loc.shape == lucid.Size([3]) and normal.scale.shape == lucid.Size([3])


def test_logistic_normal_with_scalar_parameters_matches_torch() -> None:
    # a scalar normal is made a vector of one, so the samples lie on the 2-simplex
    ours = D.LogisticNormal(0.3, 1.5)
    theirs = torch.distributions.LogisticNormal(0.3, 1.5)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) == ()
    assert tuple(ours.event_shape) == tuple(theirs.event_shape) == (2,)
    value = np.array([[0.25, 0.75], [0.9, 0.1]], dtype=np.float32)
    np.testing.assert_allclose(
        ours.log_prob(lucid.tensor(value)).numpy(),
        theirs.log_prob(torch.tensor(value)).numpy(),
        rtol=1e-6,
    )
    assert ours.sample((4,)).shape == lucid.Size([4, 2])


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical"])
def test_invalid_probabilities_raise_even_with_validation_off(name: str) -> None:
    # the base (or its inner Categorical) validates by default, as torch's does
    probs = np.array([0.5, 1.5]) if name == "RelaxedBernoulli" else SIMPLEX - 0.25
    with pytest.raises(ValueError) as theirs:
        getattr(torch.distributions, name)(
            torch.tensor(1.0), torch.tensor(probs), validate_args=False
        )
    with pytest.raises(ValueError) as ours:
        getattr(D, name)(lucid.tensor(1.0), lucid.tensor(probs), validate_args=False)
    assert str(ours.value) == str(theirs.value).replace("torch.", "lucid.")


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical"])
def test_probs_or_logits_but_not_both(name: str) -> None:
    for kwargs in ({}, {"probs": 0.5, "logits": 0.0}):
        with pytest.raises(ValueError) as theirs:
            getattr(torch.distributions, name)(torch.tensor(1.0), **kwargs)
        with pytest.raises(ValueError) as ours:
            getattr(D, name)(lucid.tensor(1.0), **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_relaxed_bernoulli_with_a_number_has_an_empty_batch_shape() -> None:
    ours = D.RelaxedBernoulli(lucid.tensor(0.5), probs=0.3)
    theirs = torch.distributions.RelaxedBernoulli(torch.tensor(0.5), probs=0.3)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) == ()
    assert ours.sample().shape == lucid.Size([])
