"""MultivariateNormal against torch: each parameterization, gradients, rsample, errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

COVARIANCE = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
LOC = np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]])
VALUE = np.array([[0.5, 0.2, 1.0], [0.0, 0.0, 0.0]])
PARAMETERIZATIONS = {
    "covariance_matrix": COVARIANCE,
    "precision_matrix": np.linalg.inv(COVARIANCE),
    "scale_tril": np.linalg.cholesky(COVARIANCE),
}


def _pair(kind: str, requires_grad: bool = False):
    ours_loc = lucid.tensor(LOC, requires_grad=requires_grad)
    ours_matrix = lucid.tensor(PARAMETERIZATIONS[kind], requires_grad=requires_grad)
    theirs_loc = torch.tensor(LOC, requires_grad=requires_grad)
    theirs_matrix = torch.tensor(PARAMETERIZATIONS[kind], requires_grad=requires_grad)
    ours = D.MultivariateNormal(ours_loc, **{kind: ours_matrix})
    theirs = torch.distributions.MultivariateNormal(theirs_loc, **{kind: theirs_matrix})
    return ours, theirs, (ours_loc, ours_matrix), (theirs_loc, theirs_matrix)


@pytest.mark.parametrize("kind", list(PARAMETERIZATIONS))
def test_values_match_torch(kind: str) -> None:
    ours, theirs, _, _ = _pair(kind)
    assert ours.batch_shape == lucid.Size([2]) and ours.event_shape == lucid.Size([3])
    results = [
        (ours.log_prob(lucid.tensor(VALUE)), theirs.log_prob(torch.tensor(VALUE))),
        (ours.entropy(), theirs.entropy()),
        (ours.mean, theirs.mean),
        (ours.mode, theirs.mode),
        (ours.variance, theirs.variance),
        (ours.stddev, theirs.stddev),
        (ours.covariance_matrix, theirs.covariance_matrix),
        (ours.precision_matrix, theirs.precision_matrix),
        (ours.scale_tril, theirs.scale_tril),
    ]
    for mine, expected in results:
        np.testing.assert_allclose(
            mine.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-14
        )
    assert tuple(ours.sample((4,)).shape) == tuple(theirs.sample((4,)).shape)
    expanded = ours.expand((5, 2))
    np.testing.assert_allclose(
        expanded.log_prob(lucid.tensor(VALUE)).numpy(),
        theirs.expand((5, 2)).log_prob(torch.tensor(VALUE)).numpy(),
        rtol=1e-10,
    )


@pytest.mark.parametrize("kind", list(PARAMETERIZATIONS))
def test_log_prob_gradients_match_torch(kind: str) -> None:
    ours, theirs, ours_leaves, theirs_leaves = _pair(kind, requires_grad=True)
    ours.log_prob(lucid.tensor(VALUE)).sum().backward()
    theirs.log_prob(torch.tensor(VALUE)).sum().backward()
    for mine, expected in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_log_prob_passes_gradcheck() -> None:
    scale_tril = lucid.tensor(PARAMETERIZATIONS["scale_tril"], requires_grad=True)
    loc = lucid.tensor(LOC, requires_grad=True)
    value = lucid.tensor(VALUE)

    def log_prob(loc, scale_tril):
        return D.MultivariateNormal(loc, scale_tril=scale_tril, validate_args=False).log_prob(value)

    assert gradcheck(log_prob, [loc, scale_tril])


def test_rsample_gradient_matches_torch_given_the_same_noise() -> None:
    ours, _, (loc, matrix), _ = _pair("scale_tril", requires_grad=True)
    sample = ours.rsample((4,))
    weights = np.linspace(0.5, 1.5, 24).reshape(4, 2, 3)
    (sample * lucid.tensor(weights)).sum().backward()
    # the noise behind the sample, then torch's loc + L eps
    eps = np.linalg.solve(
        PARAMETERIZATIONS["scale_tril"], (sample.detach().numpy() - LOC)[..., None]
    )
    theirs_loc = torch.tensor(LOC, requires_grad=True)
    theirs_matrix = torch.tensor(PARAMETERIZATIONS["scale_tril"], requires_grad=True)
    theirs_sample = theirs_loc + (theirs_matrix @ torch.tensor(eps)).squeeze(-1)
    (theirs_sample * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), theirs_loc.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(matrix.grad.numpy(), theirs_matrix.grad.numpy(), rtol=1e-9)


def test_sample_mean_and_covariance() -> None:
    lucid.manual_seed(0)
    dist = D.MultivariateNormal(lucid.tensor(LOC[0]), covariance_matrix=lucid.tensor(COVARIANCE))
    samples = dist.sample((20000,)).numpy()
    np.testing.assert_allclose(samples.mean(0), LOC[0], atol=6 * np.sqrt(2.0 / 20000))
    np.testing.assert_allclose(np.cov(samples.T), COVARIANCE, atol=0.06)


def _error(build):
    with pytest.raises(Exception) as info:
        build()
    return info.type, str(info.value).replace("torch.", "lucid.")


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"covariance_matrix": np.eye(3), "scale_tril": np.eye(3)},
        {"covariance_matrix": np.ones(3)},
        {"scale_tril": np.ones(3)},
        {"precision_matrix": np.ones(3)},
        {"covariance_matrix": np.diag([1.0, -1.0, 1.0])},
        {"covariance_matrix": COVARIANCE + np.triu(np.ones((3, 3)), 1)},
        {"scale_tril": np.triu(np.ones((3, 3)))},
        {"scale_tril": np.diag([1.0, -1.0, 1.0])},
    ],
)
def test_invalid_arguments_raise_torchs_error(kwargs: dict) -> None:
    expected = _error(
        lambda: torch.distributions.MultivariateNormal(
            torch.zeros(3), **{k: torch.tensor(v) for k, v in kwargs.items()}, validate_args=True
        )
    )
    ours = _error(
        lambda: D.MultivariateNormal(
            lucid.zeros(3, dtype=lucid.float64),
            **{k: lucid.tensor(v) for k, v in kwargs.items()},
            validate_args=True,
        )
    )
    assert ours == expected


def test_scalar_loc_raises_torchs_error() -> None:
    expected = _error(
        lambda: torch.distributions.MultivariateNormal(torch.tensor(0.0), torch.eye(1))
    )
    assert _error(lambda: D.MultivariateNormal(lucid.tensor(0.0), lucid.eye(1))) == expected


def test_kl_matches_torch() -> None:
    p, theirs_p, _, _ = _pair("covariance_matrix")
    other = np.array([[1.0, 0.2, 0.0], [0.2, 0.8, 0.1], [0.0, 0.1, 1.5]])
    q = D.MultivariateNormal(
        lucid.tensor(LOC[::-1].copy()), scale_tril=lucid.tensor(np.linalg.cholesky(other))
    )
    theirs_q = torch.distributions.MultivariateNormal(
        torch.tensor(LOC[::-1].copy()), scale_tril=torch.tensor(np.linalg.cholesky(other))
    )
    np.testing.assert_allclose(
        D.kl_divergence(p, q).numpy(),
        torch.distributions.kl_divergence(theirs_p, theirs_q).numpy(),
        rtol=1e-10,
    )


def test_kl_of_different_event_shapes_raises_torchs_error() -> None:
    def kl(module):
        dist = module.distributions
        return dist.kl_divergence(
            dist.MultivariateNormal(module.zeros(2), module.eye(2)),
            dist.MultivariateNormal(module.zeros(3), module.eye(3)),
        )

    assert _error(lambda: kl(lucid)) == _error(lambda: kl(torch))
