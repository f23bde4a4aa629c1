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
from lucid.distributions.binomial import Binomial
from lucid.distributions.categorical import Categorical
from lucid.distributions.cauchy import Cauchy
from lucid.distributions.chi2 import Chi2
from lucid.distributions.constraint_registry import biject_to, transform_to
from lucid.distributions.continuous_bernoulli import ContinuousBernoulli
from lucid.distributions.dirichlet import Dirichlet
from lucid.distributions.distribution import Distribution
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.exponential import Exponential
from lucid.distributions.fishersnedecor import FisherSnedecor
from lucid.distributions.gamma import Gamma
from lucid.distributions.generalized_pareto import GeneralizedPareto
from lucid.distributions.geometric import Geometric
from lucid.distributions.gumbel import Gumbel
from lucid.distributions.half_cauchy import HalfCauchy
from lucid.distributions.half_normal import HalfNormal
from lucid.distributions.independent import Independent
from lucid.distributions.inverse_gamma import InverseGamma
from lucid.distributions.kl import kl_divergence, register_kl
from lucid.distributions.kumaraswamy import Kumaraswamy
from lucid.distributions.laplace import Laplace
from lucid.distributions.lkj_cholesky import LKJCholesky
from lucid.distributions.log_normal import LogNormal
from lucid.distributions.logistic_normal import LogisticNormal
from lucid.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from lucid.distributions.mixture_same_family import MixtureSameFamily
from lucid.distributions.multinomial import Multinomial
from lucid.distributions.multivariate_normal import MultivariateNormal
from lucid.distributions.negative_binomial import NegativeBinomial
from lucid.distributions.normal import Normal
from lucid.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from lucid.distributions.pareto import Pareto
from lucid.distributions.poisson import Poisson
from lucid.distributions.relaxed_bernoulli import RelaxedBernoulli
from lucid.distributions.relaxed_categorical import RelaxedOneHotCategorical
from lucid.distributions.studentT import StudentT
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from lucid.distributions.uniform import Uniform
from lucid.distributions.von_mises import VonMises
from lucid.distributions.weibull import Weibull
from lucid.distributions.wishart import Wishart

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExpTransform",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
]
