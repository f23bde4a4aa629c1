"""LowRankMultivariateNormal, MixtureSameFamily, LKJCholesky and Wishart against torch:
values and gradients in float64, shapes, expand, repr, validation errors, sample statistics,
and the KL pairs torch registers for them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

TD = torch.distributions if hasattr(torch, "distributions") else None

LOC = np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]])
COV_FACTOR = np.array(
    [[[0.5, 0.1], [0.2, -0.3], [1.0, 0.4]], [[0.3, 0.0], [-0.2, 0.6], [0.1, 0.2]]]
)
COV_DIAG = np.array([[1.0, 0.5, 2.0], [0.3, 0.8, 1.2]])
VALUE = np.array([[0.5, 0.2, 1.0], [0.0, 0.0, 0.0]])
COVARIANCE = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])


def _error(build):
    with pytest.raises(Exception) as info:
        build()
    return info.type, str(info.value).replace("torch.", "lucid.")


def _close(ours, theirs, rtol=1e-10, atol=1e-12) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


def _leaves(*arrays):
    ours = [lucid.tensor(array, requires_grad=True) for array in arrays]
    theirs = [torch.tensor(array, requires_grad=True) for array in arrays]
    return ours, theirs


# ------------------------------------------------------------ LowRankMultivariateNormal
def _lowrank(module, loc=LOC, cov_factor=COV_FACTOR, cov_diag=COV_DIAG, **kwargs):
    tensors = [module.tensor(array) for array in (loc, cov_factor, cov_diag)]
    return module.distributions.LowRankMultivariateNormal(*tensors, **kwargs)


def test_lowrank_values_match_torch() -> None:
    ours, theirs = _lowrank(lucid), _lowrank(torch)
    assert ours.batch_shape == lucid.Size([2]) and ours.event_shape == lucid.Size([3])
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    _close(ours.log_prob(lucid.tensor(VALUE)), theirs.log_prob(torch.tensor(VALUE)))
    for name in (
        "entropy", "mean", "mode", "variance", "stddev", "covariance_matrix",
        "precision_matrix", "scale_tril",
    ):  # fmt: skip
        mine, expected = getattr(ours, name), getattr(theirs, name)
        if callable(mine):
            mine, expected = mine(), expected()
        _close(mine, expected)
    expanded, theirs_expanded = ours.expand((4, 2)), theirs.expand((4, 2))
    assert expanded.batch_shape == lucid.Size([4, 2])
    _close(expanded.log_prob(lucid.tensor(VALUE)), theirs_expanded.log_prob(torch.tensor(VALUE)))
    _close(expanded.entropy(), theirs_expanded.entropy())
    assert tuple(ours.rsample((5,)).shape) == tuple(theirs.rsample((5,)).shape) == (5, 2, 3)


def test_lowrank_broadcasts_loc_factor_and_diag() -> None:
    # one factor for a batch of locs, and a diag shared by both
    ours = _lowrank(lucid, LOC, COV_FACTOR[0], COV_DIAG[0])
    theirs = _lowrank(torch, LOC, COV_FACTOR[0], COV_DIAG[0])
    assert tuple(ours.cov_factor.shape) == (2, 3, 2) and tuple(ours.cov_diag.shape) == (2, 3)
    values = np.random.default_rng(0).standard_normal((4, 2, 3))
    _close(ours.log_prob(lucid.tensor(values)), theirs.log_prob(torch.tensor(values)))


def test_lowrank_log_prob_gradients_match_torch_and_pass_gradcheck() -> None:
    ours_leaves, theirs_leaves = _leaves(LOC, COV_FACTOR, COV_DIAG)
    D.LowRankMultivariateNormal(*ours_leaves).log_prob(lucid.tensor(VALUE)).sum().backward()
    TD.LowRankMultivariateNormal(*theirs_leaves).log_prob(torch.tensor(VALUE)).sum().backward()
    for mine, expected in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-9, atol=1e-12)
    value = lucid.tensor(VALUE)

    def log_prob(loc, cov_factor, cov_diag):
        return D.LowRankMultivariateNormal(loc, cov_factor, cov_diag).log_prob(value)

    assert gradcheck(
        log_prob, [lucid.tensor(a, requires_grad=True) for a in (LOC, COV_FACTOR, COV_DIAG)]
    )


def test_lowrank_samples_have_its_mean_and_covariance_and_are_seeded() -> None:
    dist = _lowrank(lucid, LOC[0], COV_FACTOR[0], COV_DIAG[0])
    lucid.manual_seed(3)
    samples = dist.sample((20000,)).numpy()
    lucid.manual_seed(3)
    np.testing.assert_array_equal(dist.sample((20000,)).numpy(), samples)
    covariance = COV_FACTOR[0] @ COV_FACTOR[0].T + np.diag(COV_DIAG[0])
    # 6 standard errors of a mean of 20000 draws
    np.testing.assert_allclose(
        samples.mean(0), LOC[0], atol=6 * np.sqrt(covariance.diagonal().max() / 20000)
    )
    np.testing.assert_allclose(np.cov(samples.T), covariance, atol=0.08)


def test_lowrank_rsample_is_differentiable() -> None:
    loc, cov_factor, cov_diag = (
        lucid.tensor(a, requires_grad=True) for a in (LOC, COV_FACTOR, COV_DIAG)
    )
    D.LowRankMultivariateNormal(loc, cov_factor, cov_diag).rsample((3,)).sum().backward()
    np.testing.assert_array_equal(loc.grad.numpy(), np.full(LOC.shape, 3.0))
    assert cov_factor.grad is not None and cov_diag.grad is not None


@pytest.mark.parametrize(
    "arrays",
    [
        (np.array(0.0), COV_FACTOR[0], COV_DIAG[0]),
        (LOC[0], COV_DIAG[0], COV_DIAG[0]),
        (LOC[0], COV_FACTOR[0][:2], COV_DIAG[0]),
        (LOC[0], COV_FACTOR[0], COV_DIAG[0][:2]),
        (np.zeros((3, 3)), COV_FACTOR, COV_DIAG),
        (LOC[0], COV_FACTOR[0], -COV_DIAG[0]),
    ],
)
def test_lowrank_invalid_arguments_raise_torchs_error(arrays) -> None:
    expected = _error(lambda: _lowrank(torch, *arrays, validate_args=True))
    assert _error(lambda: _lowrank(lucid, *arrays, validate_args=True)) == expected


def test_lowrank_value_outside_the_support_shape_raises_torchs_error() -> None:
    def score(module):
        return _lowrank(module).log_prob(module.zeros(2, 4, dtype=module.float64))

    assert _error(lambda: score(lucid)) == _error(lambda: score(torch))


# ---------------------------------------------------------------------- KL divergences
def _mvn(module):
    return module.distributions.MultivariateNormal(
        module.tensor(LOC[::-1].copy()), covariance_matrix=module.tensor(COVARIANCE)
    )


def _second_lowrank(module):
    return _lowrank(module, LOC[::-1].copy(), COV_FACTOR[::-1].copy() * 1.5, COV_DIAG[0] + 0.2)


@pytest.mark.parametrize(
    "pair",
    [
        (_lowrank, _second_lowrank),
        (_lowrank, _mvn),
        (_mvn, _lowrank),
        (_second_lowrank, _lowrank),
    ],
    ids=["lowrank-lowrank", "lowrank-mvn", "mvn-lowrank", "lowrank-lowrank-reversed"],
)
def test_kl_pairs_match_torch(pair) -> None:
    build_p, build_q = pair
    ours = D.kl_divergence(build_p(lucid), build_q(lucid))
    theirs = TD.kl_divergence(build_p(torch), build_q(torch))
    assert tuple(ours.shape) == tuple(theirs.shape) == (2,)
    _close(ours, theirs)


def test_kl_of_a_lowrank_normal_with_itself_is_zero_and_kl_gradients_match_torch() -> None:
    np.testing.assert_allclose(
        D.kl_divergence(_lowrank(lucid), _lowrank(lucid)).numpy(), 0.0, atol=1e-12
    )
    ours_leaves, theirs_leaves = _leaves(LOC, COV_FACTOR, COV_DIAG)
    ours = D.kl_divergence(D.LowRankMultivariateNormal(*ours_leaves), _mvn(lucid))
    theirs = TD.kl_divergence(TD.LowRankMultivariateNormal(*theirs_leaves), _mvn(torch))
    ours.sum().backward()
    theirs.sum().backward()
    for mine, expected in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kinds", [("lowrank", "lowrank"), ("lowrank", "mvn"), ("mvn", "lowrank")])
def test_kl_of_different_event_shapes_raises_torchs_error(kinds) -> None:
    def build(module, kind, n):
        if kind == "mvn":
            return module.distributions.MultivariateNormal(module.zeros(n), module.eye(n))
        return module.distributions.LowRankMultivariateNormal(
            module.zeros(n), module.ones(n, 1), module.ones(n)
        )

    def kl(module):
        dist = module.distributions
        return dist.kl_divergence(build(module, kinds[0], 2), build(module, kinds[1], 3))

    assert _error(lambda: kl(lucid)) == _error(lambda: kl(torch))


# ------------------------------------------------------------------ MixtureSameFamily
MIX_LOGITS = np.array([[0.2, -0.5, 1.0], [0.0, 0.3, -0.2]])
MIX_LOC = np.array([[[-1.0, 0.5], [0.0, 1.0], [2.0, -0.5]], [[0.3, 0.1], [1.5, -1.0], [-2.0, 0.0]]])
MIX_SCALE = np.array([[[0.5, 1.0], [1.5, 0.7], [0.8, 2.0]], [[1.0, 1.0], [0.4, 0.9], [1.2, 0.6]]])


def _mixture(module, logits=MIX_LOGITS, loc=MIX_LOC, scale=MIX_SCALE, event=True, **kwargs):
    """A batch of 2 mixtures of 3 components: bivariate (Independent) normals if event, else
    univariate normals; arrays become tensors, tensors are used as given."""
    dist = module.distributions
    logits, loc, scale = (
        module.tensor(x) if isinstance(x, np.ndarray) else x for x in (logits, loc, scale)
    )
    if event:
        components = dist.Independent(dist.Normal(loc, scale), 1)
    else:
        components = dist.Normal(loc[..., 0], scale[..., 0])
    return dist.MixtureSameFamily(dist.Categorical(logits=logits), components, **kwargs)


@pytest.mark.parametrize("event", [True, False])
def test_mixture_values_match_torch(event: bool) -> None:
    ours, theirs = _mixture(lucid, event=event), _mixture(torch, event=event)
    assert ours.batch_shape == lucid.Size(theirs.batch_shape)
    assert ours.event_shape == lucid.Size(theirs.event_shape)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    values = np.random.default_rng(1).standard_normal((5, 2, 2) if event else (5, 2))
    _close(ours.log_prob(lucid.tensor(values)), theirs.log_prob(torch.tensor(values)))
    _close(ours.mean, theirs.mean)
    _close(ours.variance, theirs.variance)
    if not event:  # Independent has no cdf
        _close(ours.cdf(lucid.tensor(values)), theirs.cdf(torch.tensor(values)))
    expanded, theirs_expanded = ours.expand((3, 2)), theirs.expand((3, 2))
    assert expanded.batch_shape == lucid.Size([3, 2])
    _close(
        expanded.log_prob(lucid.tensor(values[:3])),
        theirs_expanded.log_prob(torch.tensor(values[:3])),
    )
    assert tuple(ours.sample((4,)).shape) == tuple(theirs.sample((4,)).shape)
    assert ours.support.event_dim == theirs.support.event_dim
    assert ours.mixture_distribution is ours._mixture_distribution
    assert ours.component_distribution is ours._component_distribution


def test_mixture_with_one_mixing_law_for_a_batch_of_components() -> None:
    ours = _mixture(lucid, logits=MIX_LOGITS[0])
    theirs = _mixture(torch, logits=MIX_LOGITS[0])
    values = np.random.default_rng(2).standard_normal((5, 2, 2))
    _close(ours.log_prob(lucid.tensor(values)), theirs.log_prob(torch.tensor(values)))
    _close(ours.mean, theirs.mean)
    _close(ours.variance, theirs.variance)
    assert tuple(ours.sample((6,)).shape) == (6, 2, 2)


def test_mixture_log_prob_gradients_match_torch() -> None:
    ours_leaves, theirs_leaves = _leaves(MIX_LOGITS, MIX_LOC, MIX_SCALE)
    values = np.random.default_rng(3).standard_normal((4, 2, 2))
    _mixture(lucid, *ours_leaves).log_prob(lucid.tensor(values)).sum().backward()
    _mixture(torch, *theirs_leaves).log_prob(torch.tensor(values)).sum().backward()
    for mine, expected in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_mixture_samples_follow_the_mixture() -> None:
    """One component per draw: the sample mean and the share of draws near each well
    separated component match the weights."""
    weights = np.array([0.2, 0.5, 0.3])
    locs = np.array([-10.0, 0.0, 10.0])
    dist = D.MixtureSameFamily(
        D.Categorical(lucid.tensor(weights)), D.Normal(lucid.tensor(locs), lucid.ones(3))
    )
    lucid.manual_seed(4)
    samples = dist.sample((20000,)).numpy()
    lucid.manual_seed(4)
    np.testing.assert_array_equal(dist.sample((20000,)).numpy(), samples)
    shares = [np.mean(np.abs(samples - loc) < 5.0) for loc in locs]
    # 6 standard errors of a proportion of 20000 draws
    np.testing.assert_allclose(shares, weights, atol=6 * np.sqrt(0.25 / 20000))
    assert abs(samples.mean() - weights @ locs) < 6 * np.sqrt(dist.variance.item() / 20000)


def test_mixture_invalid_arguments_raise_torchs_errors() -> None:
    def build(module, case):
        dist = module.distributions
        normal = dist.Normal(module.zeros(2, 3), module.ones(2, 3))
        if case == "not categorical":
            return dist.MixtureSameFamily(normal, normal)
        if case == "not a distribution":
            return dist.MixtureSameFamily(dist.Categorical(module.ones(3)), module.ones(3))
        if case == "batch":
            return dist.MixtureSameFamily(dist.Categorical(module.ones(4, 3)), normal)
        return dist.MixtureSameFamily(dist.Categorical(module.ones(2, 4)), normal)

    for case in ("not categorical", "not a distribution", "batch", "components"):
        # each lambda runs before the loop moves on, so it sees its own case
        assert _error(lambda: build(lucid, case)) == _error(lambda: build(torch, case))  # noqa: B023


def test_mixture_value_outside_the_support_raises_torchs_error() -> None:
    def score(module):
        dist = module.distributions
        components = dist.Gamma(
            module.ones(3, dtype=module.float64), module.ones(3, dtype=module.float64)
        )
        mixture = dist.MixtureSameFamily(dist.Categorical(module.ones(3)), components)
        return mixture.log_prob(module.tensor([1.0, -1.0], dtype=module.float64))

    assert _error(lambda: score(lucid)) == _error(lambda: score(torch))


# ------------------------------------------------------------------------ LKJCholesky
CONCENTRATIONS = np.array([0.5, 1.0, 3.0])


def test_lkj_log_prob_matches_torch_on_its_samples() -> None:
    ours = D.LKJCholesky(4, lucid.tensor(CONCENTRATIONS))
    theirs = TD.LKJCholesky(4, torch.tensor(CONCENTRATIONS))
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    assert ours.batch_shape == lucid.Size([3]) and ours.event_shape == lucid.Size([4, 4])
    lucid.manual_seed(5)
    samples = ours.sample((6,))
    assert tuple(samples.shape) == (6, 3, 4, 4) == tuple(theirs.sample((6,)).shape)
    assert bool(D.constraints.corr_cholesky.check(samples).all())
    _close(ours.log_prob(samples), theirs.log_prob(torch.tensor(samples.numpy())))
    expanded = ours.expand((2, 3))
    _close(
        expanded.log_prob(samples[:2]),
        theirs.expand((2, 3)).log_prob(torch.tensor(samples.numpy()[:2])),
    )
    assert repr(D.LKJCholesky(3, 0.5)) == repr(TD.LKJCholesky(3, 0.5))


def test_lkj_log_prob_gradient_matches_torch() -> None:
    (ours_concentration,), (theirs_concentration,) = _leaves(CONCENTRATIONS)
    lucid.manual_seed(6)
    samples = D.LKJCholesky(3, lucid.tensor(CONCENTRATIONS)).sample((4,))
    D.LKJCholesky(3, ours_concentration).log_prob(samples).sum().backward()
    TD.LKJCholesky(3, theirs_concentration).log_prob(torch.tensor(samples.numpy())).sum().backward()
    np.testing.assert_allclose(
        ours_concentration.grad.numpy(), theirs_concentration.grad.numpy(), rtol=1e-10
    )


@pytest.mark.parametrize(("dim", "concentration"), [(3, 1.0), (5, 1.0), (4, 3.0)])
def test_lkj_samples_have_the_lkj_marginals(dim: int, concentration: float) -> None:
    """Under LKJ(c) every correlation of M = L L^T is 2 Beta(a, a) - 1 with a = c - 1 + dim/2,
    whose variance is 1 / (2a + 1) (torch 2.13's sampler fails this for rows after the
    second)."""
    lucid.manual_seed(7)
    factors = D.LKJCholesky(dim, lucid.tensor(concentration, dtype=lucid.float64)).sample((20000,))
    factors = factors.numpy()
    correlations = (factors @ np.swapaxes(factors, -1, -2))[:, *np.tril_indices(dim, -1)]
    a = concentration - 1 + dim / 2
    expected = 1 / (2 * a + 1)
    # the variance of a variance estimate of 20000 draws: (m4 - var^2) / N, m4 from the Beta
    fourth_moment = 3 / ((2 * a + 1) * (2 * a + 3))
    tolerance = 6 * np.sqrt((fourth_moment - expected**2) / 20000)
    np.testing.assert_allclose(correlations.var(0), expected, atol=tolerance)
    np.testing.assert_allclose(correlations.mean(0), 0.0, atol=6 * np.sqrt(expected / 20000))


def test_lkj_invalid_arguments_raise_torchs_errors() -> None:
    # a concentration <= 0 is refused by the inner Beta first, in torch as here; dim 2 keeps
    # that Beta's parameters the same as torch's (they differ from the third row on)
    for dim, concentration in ((1, 1.0), (2, -1.0)):

        def build(module, dim=dim, concentration=concentration):
            return module.distributions.LKJCholesky(
                dim, module.tensor(concentration), validate_args=True
            )

        assert _error(lambda: build(lucid)) == _error(lambda: build(torch))


# ----------------------------------------------------------------------------- Wishart
DF = np.array([4.0, 6.5])
PARAMETERIZATIONS = {
    "covariance_matrix": COVARIANCE,
    "precision_matrix": np.linalg.inv(COVARIANCE),
    "scale_tril": np.linalg.cholesky(COVARIANCE),
}


def _wishart(module, kind="scale_tril", df=DF, matrix=None, **kwargs):
    matrix = PARAMETERIZATIONS[kind] if matrix is None else matrix
    df = module.tensor(df) if isinstance(df, np.ndarray) else df
    return module.distributions.Wishart(df, **{kind: module.tensor(matrix)}, **kwargs)


@pytest.mark.parametrize("kind", list(PARAMETERIZATIONS))
def test_wishart_values_match_torch(kind: str) -> None:
    ours, theirs = _wishart(lucid, kind), _wishart(torch, kind)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    assert ours.batch_shape == lucid.Size([2]) and ours.event_shape == lucid.Size([3, 3])
    lucid.manual_seed(8)
    samples = ours.sample((4,))
    assert tuple(samples.shape) == (4, 2, 3, 3)
    _close(ours.log_prob(samples), theirs.log_prob(torch.tensor(samples.numpy())))
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(ours, name), getattr(theirs, name))
    _close(ours.entropy(), theirs.entropy())
    expanded, theirs_expanded = ours.expand((3, 2)), theirs.expand((3, 2))
    _close(
        expanded.log_prob(samples[:3]), theirs_expanded.log_prob(torch.tensor(samples.numpy()[:3]))
    )
    assert tuple(expanded.sample().shape) == (3, 2, 3, 3)


def test_wishart_with_a_number_df_and_its_mode_where_undefined() -> None:
    ours, theirs = _wishart(lucid, df=3.5), _wishart(torch, df=3.5)
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    _close(ours.mean, theirs.mean)
    _close(ours.entropy(), theirs.entropy())
    # df <= p + 1: no mode, NaN as in torch
    assert np.isnan(ours.mode.numpy()).all() and np.isnan(theirs.mode.numpy()).all()


def test_wishart_log_prob_and_entropy_gradients_match_torch() -> None:
    ours_leaves, theirs_leaves = _leaves(DF, PARAMETERIZATIONS["scale_tril"])
    value = 2.0 * COVARIANCE + np.eye(3)
    ours = D.Wishart(ours_leaves[0], scale_tril=ours_leaves[1])
    theirs = TD.Wishart(theirs_leaves[0], scale_tril=theirs_leaves[1])
    (ours.log_prob(lucid.tensor(value)).sum() + ours.entropy().sum()).backward()
    (theirs.log_prob(torch.tensor(value)).sum() + theirs.entropy().sum()).backward()
    for mine, expected in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_wishart_log_prob_passes_gradcheck() -> None:
    value = lucid.tensor(2.0 * COVARIANCE + np.eye(3))

    # through the lower triangle only: cholesky_solve's gradient (torch's too) does not zero
    # the upper triangle its forward never reads
    def log_prob(df, factor):
        return D.Wishart(df, scale_tril=factor.tril(), validate_args=False).log_prob(value)

    leaves = [lucid.tensor(a, requires_grad=True) for a in (DF, PARAMETERIZATIONS["scale_tril"])]
    assert gradcheck(log_prob, leaves)


def test_wishart_samples_have_its_mean_and_variance_and_rsample_is_differentiable() -> None:
    dist = _wishart(lucid, "covariance_matrix", df=np.array(7.0))
    lucid.manual_seed(9)
    samples = dist.sample((20000,)).numpy()
    lucid.manual_seed(9)
    np.testing.assert_array_equal(dist.sample((20000,)).numpy(), samples)
    variance = dist.variance.numpy()
    np.testing.assert_allclose(
        samples.mean(0), 7.0 * COVARIANCE, atol=6 * np.sqrt(variance / 20000).max()
    )
    np.testing.assert_allclose(samples.var(0), variance, rtol=0.1)
    df = lucid.tensor(7.0, requires_grad=True)
    scale_tril = lucid.tensor(PARAMETERIZATIONS["scale_tril"], requires_grad=True)
    D.Wishart(df, scale_tril=scale_tril).rsample((3,)).sum().backward()
    assert np.isfinite(df.grad.numpy()) and np.isfinite(scale_tril.grad.numpy()).all()


def test_wishart_warns_only_for_low_df_and_not_on_regular_samples() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _wishart(lucid, df=np.array([4.0, 5.0])).rsample((5,))
    with pytest.warns(UserWarning, match="Low df values detected"):
        _wishart(lucid, df=np.array([2.5, 5.0]))


@pytest.mark.parametrize(
    "case", ["none", "two", "vector", "df too small"], ids=lambda case: case.replace(" ", "_")
)
def test_wishart_invalid_arguments_raise_torchs_errors(case: str) -> None:
    def build(module):
        dist = module.distributions
        eye = module.eye(3, dtype=module.float64)
        df = module.tensor([4.0], dtype=module.float64)
        if case == "none":
            return dist.Wishart(df)
        if case == "two":
            return dist.Wishart(df, covariance_matrix=eye, scale_tril=eye)
        if case == "vector":
            return dist.Wishart(df, scale_tril=module.ones(3, dtype=module.float64))
        return dist.Wishart(module.tensor([2.0], dtype=module.float64), scale_tril=eye)

    assert _error(lambda: build(lucid)) == _error(lambda: build(torch))


def test_wishart_invalid_matrix_and_value_raise_torchs_errors() -> None:
    def bad_matrix(module):
        return _wishart(module, "covariance_matrix", matrix=-np.eye(3), validate_args=True)

    def bad_value(module):
        return _wishart(module).log_prob(module.tensor(-np.eye(3)))

    assert _error(lambda: bad_matrix(lucid)) == _error(lambda: bad_matrix(torch))
    assert _error(lambda: bad_value(lucid)) == _error(lambda: bad_value(torch))


def test_wishart_kl_is_the_exponential_family_bregman_divergence_as_in_torch() -> None:
    def kl(module):
        p = _wishart(module, "covariance_matrix", df=np.array(5.0))
        q = _wishart(module, "scale_tril", df=np.array(7.0), matrix=np.eye(3) * 1.5)
        return module.distributions.kl_divergence(p, q)

    _close(kl(lucid), kl(torch), rtol=1e-9)
