"""lucid.distributions: PyTorch's torch.distributions API (parameterizable probability
distributions, their constraints and KL divergences), loaded on first use.

Example::

    import lucid
    from lucid.distributions import Normal, kl_divergence
    p = Normal(lucid.zeros(3, requires_grad=True), lucid.ones(3))
    x = p.rsample((5,))  # differentiable with respect to loc and scale
    p.log_prob(x).sum().backward()
    kl_divergence(p, Normal(1.0, 2.0))
"""

from lucid.distributions import constraints
from lucid.distributions.bernoulli import Bernoulli
from lucid.distributions.beta import Beta
from lucid.distributions.categorical import Categorical
from lucid.distributions.cauchy import Cauchy
from lucid.distributions.chi2 import Chi2
from lucid.distributions.dirichlet import Dirichlet
from lucid.distributions.distribution import Distribution
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.exponential import Exponential
from lucid.distributions.gamma import Gamma
from lucid.distributions.geometric import Geometric
from lucid.distributions.gumbel import Gumbel
from lucid.distributions.half_cauchy import HalfCauchy
from lucid.distributions.half_normal import HalfNormal
from lucid.distributions.independent import Independent
from lucid.distributions.kl import kl_divergence, register_kl
from lucid.distributions.laplace import Laplace
from lucid.distributions.log_normal import LogNormal
from lucid.distributions.multivariate_normal import MultivariateNormal
from lucid.distributions.normal import Normal
from lucid.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from lucid.distributions.poisson import Poisson
from lucid.distributions.studentT import StudentT
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    Transform,
    identity_transform,
)
from lucid.distributions.uniform import Uniform

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExpTransform",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
    "StudentT",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
]
