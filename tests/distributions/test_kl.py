"""kl_divergence against torch for each registered pair, and register_kl's dispatch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from tests.torch_oracle import TORCH_AVAILABLE, requires_torch, torch

pytestmark = requires_torch

P = np.array([0.1, 0.35, 0.5, 0.9, 0.0, 1.0])
Q = np.array([0.3, 0.35, 0.7, 0.2, 0.4, 0.0])
A = np.array([-1.0, 0.0, 0.5, 2.0, 0.3, -0.2])
B = np.array([0.5, 1.0, 1.5, 3.0, 0.7, 2.2])
SIMPLEX_P = np.array([[0.2, 0.3, 0.5], [0.6, 0.0, 0.4]])
SIMPLEX_Q = np.array([[0.1, 0.6, 0.3], [0.5, 0.5, 0.0]])

# (name, p's parameters, q's parameters)
PAIRS = [
    ("Normal", {"loc": A, "scale": B}, {"loc": A[::-1].copy(), "scale": B[::-1].copy()}),
    ("Laplace", {"loc": A, "scale": B}, {"loc": A[::-1].copy(), "scale": B[::-1].copy()}),
    ("Cauchy", {"loc": A, "scale": B}, {"loc": A[::-1].copy(), "scale": B[::-1].copy()}),
    ("Exponential", {"rate": B}, {"rate": B[::-1].copy()}),
    ("Poisson", {"rate": B}, {"rate": B[::-1].copy()}),
    ("Bernoulli", {"probs": P}, {"probs": Q}),
    ("Geometric", {"probs": P[:4]}, {"probs": Q[:4]}),
    ("Categorical", {"probs": SIMPLEX_P}, {"probs": SIMPLEX_Q}),
    ("OneHotCategorical", {"probs": SIMPLEX_P}, {"probs": SIMPLEX_Q}),
    ("Uniform", {"low": A - 1, "high": A + 1}, {"low": A - 2, "high": A + 1.5 * B - 1}),
    ("Gamma", {"concentration": B, "rate": B + 0.5}, {"concentration": B[::-1].copy(), "rate": B}),
    (
        "Beta",
        {"concentration1": B, "concentration0": B + 0.5},
        {"concentration1": B[::-1].copy(), "concentration0": B},
    ),
    (
        "Dirichlet",
        {"concentration": B.reshape(2, 3)},
        {"concentration": B[::-1].reshape(2, 3) + 0.2},
    ),
]


def _build(module, name: str, params: dict, requires_grad: bool = False):
    tensors = {
        key: module.tensor(value, dtype=module.float64, requires_grad=requires_grad)
        for key, value in params.items()
    }
    return getattr(module.distributions, name)(**tensors), tensors


@pytest.mark.parametrize(("name", "p_params", "q_params"), PAIRS, ids=[pair[0] for pair in PAIRS])
def test_kl_matches_torch(name: str, p_params: dict, q_params: dict) -> None:
    finite = not name.startswith(("Bernoulli", "Categorical", "OneHot", "Uniform"))
    ours_p, ours_tensors = _build(lucid, name, p_params, requires_grad=finite)
    ours_q, _ = _build(lucid, name, q_params)
    theirs_p, theirs_tensors = _build(torch, name, p_params, requires_grad=finite)
    theirs_q, _ = _build(torch, name, q_params)
    ours = D.kl_divergence(ours_p, ours_q)
    theirs = torch.distributions.kl_divergence(theirs_p, theirs_q)
    assert ours.dtype == lucid.float64
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    if finite:
        ours.sum().backward()
        theirs.sum().backward()
        for key in p_params:
            np.testing.assert_allclose(
                ours_tensors[key].grad.numpy(), theirs_tensors[key].grad.numpy(), rtol=1e-9
            )


@pytest.mark.parametrize(
    ("p_name", "p_params", "q_name", "q_params"),
    [
        ("Exponential", {"rate": B}, "Gamma", {"concentration": B[::-1].copy(), "rate": B}),
        ("Gamma", {"concentration": B[::-1].copy(), "rate": B}, "Exponential", {"rate": B}),
    ],
)
def test_cross_kl_matches_torch(p_name, p_params, q_name, q_params) -> None:
    ours = D.kl_divergence(_build(lucid, p_name, p_params)[0], _build(lucid, q_name, q_params)[0])
    theirs = torch.distributions.kl_divergence(
        _build(torch, p_name, p_params)[0], _build(torch, q_name, q_params)[0]
    )
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)


def test_kl_of_independent_sums_the_reinterpreted_dims() -> None:
    def build(module, loc, scale):
        normal = module.distributions.Normal(module.tensor(loc), module.tensor(scale))
        return module.distributions.Independent(normal, 1)

    loc, scale = A.reshape(2, 3), B.reshape(2, 3)
    ours = D.kl_divergence(build(lucid, loc, scale), build(lucid, scale, loc**2 + 0.5))
    theirs = torch.distributions.kl_divergence(
        build(torch, loc, scale), build(torch, scale, loc**2 + 0.5)
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_kl_of_the_same_exponential_family_is_the_bregman_divergence() -> None:
    from lucid.distributions.kl import _kl_expfamily_expfamily

    p = D.Normal(lucid.tensor(A), lucid.tensor(B))
    q = D.Normal(lucid.tensor(B), lucid.tensor(B + 1))
    np.testing.assert_allclose(
        _kl_expfamily_expfamily(p, q).detach().numpy(), D.kl_divergence(p, q).numpy(), rtol=1e-9
    )


def test_unregistered_pair_raises_torchs_not_implemented_error() -> None:
    with pytest.raises(NotImplementedError) as theirs:
        torch.distributions.kl_divergence(
            torch.distributions.Categorical(torch.ones(3)), torch.distributions.Normal(0.0, 1.0)
        )
    with pytest.raises(NotImplementedError) as ours:
        D.kl_divergence(D.Categorical(lucid.ones(3)), D.Normal(0.0, 1.0))
    assert str(ours.value) == str(theirs.value)


def test_register_kl_prefers_the_most_specific_pair() -> None:
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)
    assert float(D.kl_divergence(p, q)) == pytest.approx(0.5)

    @D.register_kl(MyNormal, MyNormal)
    def _kl_mine(p, q):
        return lucid.tensor(-1.0)

    try:
        assert float(D.kl_divergence(p, q)) == -1.0
        assert float(D.kl_divergence(D.Normal(0.0, 1.0), q)) == pytest.approx(0.5)
    finally:
        from lucid.distributions.kl import _KL_MEMOIZE, _KL_REGISTRY

        del _KL_REGISTRY[MyNormal, MyNormal]
        _KL_MEMOIZE.clear()


def _registered_pairs() -> list[tuple[str, str]]:
    """torch's registered pairs of distributions lucid has, but the generic ones (none
    without torch: the module's tests are skipped then)."""
    if not TORCH_AVAILABLE:
        return []
    from torch.distributions.kl import _KL_REGISTRY

    # the generic pairs, MultivariateNormal's (tests/distributions/test_multivariate_normal.py)
    # and LowRankMultivariateNormal's (tests/distributions/test_lowrank_mixture.py)
    generic = {"ExponentialFamily", "Independent", "TransformedDistribution", "MultivariateNormal"}
    generic.add("LowRankMultivariateNormal")
    pairs = []
    for type_p, type_q in _KL_REGISTRY:
        names = (type_p.__name__, type_q.__name__)
        if set(names) & generic or not all(hasattr(D, name) for name in names):
            continue
        pairs.append(names)
    return sorted(pairs)


def _catalogue_params(name: str) -> dict:
    from tests.distributions.catalogue import CASES

    return next(case.params for case in CASES if case.name == name)


@pytest.mark.parametrize(
    ("p_name", "q_name"), _registered_pairs(), ids=[f"{p}-{q}" for p, q in _registered_pairs()]
)
def test_every_registered_pair_of_torch_matches(p_name: str, q_name: str) -> None:
    p_params, q_params = _catalogue_params(p_name), _catalogue_params(q_name)
    if p_name == q_name:  # a second distribution of the same family
        q_params = {key: value[::-1].copy() for key, value in q_params.items()}
    ours = D.kl_divergence(_build(lucid, p_name, p_params)[0], _build(lucid, q_name, q_params)[0])
    theirs = torch.distributions.kl_divergence(
        _build(torch, p_name, p_params)[0], _build(torch, q_name, q_params)[0]
    )
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)


def test_kl_of_transformed_distributions_with_the_same_transforms() -> None:
    p = D.LogNormal(lucid.tensor(A), lucid.tensor(B))
    q = D.LogNormal(lucid.tensor(B), lucid.tensor(B + 1))
    theirs = torch.distributions.kl_divergence(
        torch.distributions.LogNormal(torch.tensor(A), torch.tensor(B)),
        torch.distributions.LogNormal(torch.tensor(B), torch.tensor(B + 1)),
    )
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), theirs.numpy(), rtol=1e-12)
