"""MultivariateNormal.log_prob for a batch of scale_tril factors: samples over the batch are
solved as columns of one system per factor; other shapes broadcast the factors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def _factors(rng: np.random.Generator, batch: int, n: int) -> np.ndarray:
    a = rng.standard_normal((batch, n, n))
    return np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


# sample dims before the batch (the columns path), none, and a batch dim of 1 to broadcast;
# n = 20 is more than one block of the triangular solve
@pytest.mark.parametrize("n", [3, 20])
@pytest.mark.parametrize("value_shape", [(5, 2, 4), (4,), (5, 1)])
def test_log_prob_over_a_batch_of_factors_matches_torch(n: int, value_shape: tuple) -> None:
    rng = np.random.default_rng(5)
    scale_tril = _factors(rng, 4, n)
    loc = rng.standard_normal((4, n))
    value = rng.standard_normal(value_shape + (n,))
    ours_leaves = [lucid.tensor(array, requires_grad=True) for array in (loc, scale_tril, value)]
    theirs_leaves = [torch.tensor(array, requires_grad=True) for array in (loc, scale_tril, value)]
    ours = D.MultivariateNormal(ours_leaves[0], scale_tril=ours_leaves[1])
    theirs = torch.distributions.MultivariateNormal(theirs_leaves[0], scale_tril=theirs_leaves[1])
    ours_log_prob = ours.log_prob(ours_leaves[2])
    theirs_log_prob = theirs.log_prob(theirs_leaves[2])
    assert tuple(ours_log_prob.shape) == tuple(theirs_log_prob.shape)
    np.testing.assert_allclose(
        ours_log_prob.detach().numpy(), theirs_log_prob.detach().numpy(), rtol=1e-12
    )
    ours_log_prob.sum().backward()
    theirs_log_prob.sum().backward()
    for mine, expected in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_log_prob_over_a_batch_of_factors_passes_gradcheck() -> None:
    rng = np.random.default_rng(6)
    scale_tril = lucid.tensor(_factors(rng, 2, 3), requires_grad=True)
    loc = lucid.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    value = lucid.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)

    def log_prob(loc, scale_tril, value):
        distribution = D.MultivariateNormal(loc, scale_tril=scale_tril, validate_args=False)
        return distribution.log_prob(value)

    assert gradcheck(log_prob, [loc, scale_tril, value])
