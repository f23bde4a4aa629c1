"""Transforms and TransformedDistribution against torch.distributions."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

X = np.array([-1.5, -0.2, 0.0, 0.7, 2.0])
Y = np.array([0.1, 0.5, 1.0, 2.0, 7.5])


def _transforms(module):
    dist = module.distributions
    return {
        "exp": dist.ExpTransform(),
        "affine": dist.AffineTransform(module.tensor(0.5), module.tensor(-2.0)),
        "affine-numbers": dist.AffineTransform(1.0, 3.0),
        "abs": dist.AbsTransform(),
        "compose": dist.ComposeTransform(
            [dist.AffineTransform(0.5, 2.0), dist.ExpTransform(), dist.ExpTransform().inv]
        ),
        "inverse-exp": dist.ExpTransform().inv,
    }


@pytest.mark.parametrize("name", list(_transforms(lucid)))
def test_transform_matches_torch(name: str) -> None:
    ours, theirs = _transforms(lucid)[name], _transforms(torch)[name]
    inputs = Y if name == "inverse-exp" else X
    x_ours, x_theirs = lucid.tensor(inputs), torch.tensor(inputs)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    np.testing.assert_allclose(y_ours.numpy(), y_theirs.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.inv(y_ours).numpy(), theirs.inv(y_theirs).numpy(), rtol=1e-12)
    if name != "abs":
        np.testing.assert_allclose(
            ours.log_abs_det_jacobian(x_ours, y_ours).numpy(),
            theirs.log_abs_det_jacobian(x_theirs, y_theirs).numpy(),
            rtol=1e-12,
        )
        assert int(ours.sign) == int(theirs.sign)
    assert ours.bijective == theirs.bijective
    assert repr(ours.domain) == repr(theirs.domain)
    assert repr(ours.codomain) == repr(theirs.codomain)
    assert ours.event_dim == theirs.event_dim
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    assert ours.inv.inv is ours


def test_cached_transform_inverts_to_the_very_input() -> None:
    transform = D.ExpTransform().with_cache()
    x = lucid.tensor(X)
    assert transform.inv(transform(x)) is x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


def test_identity_transform_is_an_empty_composition() -> None:
    x = lucid.tensor(X)
    assert D.identity_transform(x) is x
    assert repr(D.identity_transform.domain) == "Real()"


def _normal_pushed(module):
    dist = module.distributions
    base = dist.Normal(module.tensor([0.0, 1.0, -1.0]), module.tensor([1.0, 0.5, 2.0]))
    return dist.TransformedDistribution(
        base, [dist.AffineTransform(module.tensor(0.5), module.tensor(-2.0)), dist.ExpTransform()]
    )


def test_transformed_distribution_matches_torch() -> None:
    ours, theirs = _normal_pushed(lucid), _normal_pushed(torch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert repr(ours.support) == repr(theirs.support)
    value = np.array([0.3, 1.2, 4.0])
    for method in ("log_prob", "cdf"):
        np.testing.assert_allclose(
            getattr(ours, method)(lucid.tensor(value)).numpy(),
            getattr(theirs, method)(torch.tensor(value)).numpy(),
            rtol=1e-12,
        )
    quantiles = np.array([0.1, 0.5, 0.8])
    np.testing.assert_allclose(
        ours.icdf(lucid.tensor(quantiles)).numpy(),
        theirs.icdf(torch.tensor(quantiles)).numpy(),
        rtol=1e-12,
    )
    assert ours.sample((4,)).shape == lucid.Size([4, 3])
    expanded = ours.expand((2, 3))
    assert expanded.batch_shape == lucid.Size([2, 3])
    np.testing.assert_allclose(
        expanded.log_prob(lucid.tensor(value)).numpy(),
        theirs.expand((2, 3)).log_prob(torch.tensor(value)).numpy(),
        rtol=1e-12,
    )


def test_transformed_distribution_rsample_is_differentiable() -> None:
    loc = lucid.tensor([0.0, 1.0], requires_grad=True)
    dist = D.TransformedDistribution(D.Normal(loc, 1.0), D.ExpTransform())
    sample = dist.rsample()
    sample.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), sample.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("transforms", ["exp", [1.0]])
def test_transformed_distribution_rejects_what_is_not_a_transform(transforms) -> None:
    with pytest.raises(ValueError) as theirs:
        torch.distributions.TransformedDistribution(torch.distributions.Normal(0, 1), transforms)
    with pytest.raises(ValueError) as ours:
        D.TransformedDistribution(D.Normal(0.0, 1.0), transforms)
    assert str(ours.value) == str(theirs.value)


def test_log_normal_is_a_transformed_normal() -> None:
    dist = D.LogNormal(lucid.tensor([0.0, 1.0]), lucid.tensor([0.5, 1.0]))
    assert isinstance(dist, D.TransformedDistribution)
    assert isinstance(dist.base_dist, D.Normal)
    assert dist.expand((3, 2)).batch_shape == lucid.Size([3, 2])
    assert type(dist.expand((3, 2))) is D.LogNormal
