"""The Dirichlet distribution over the probability simplex."""

import lucid
import lucid.nn.functional as F
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.gamma import _standard_gamma
from lucid.distributions.utils import _EMPTY_SIZE

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """A Dirichlet distribution with the concentrations along the last dim.

    rsample normalizes standard gamma draws, each with its implicit reparameterization
    gradient, so the gradient is the exact derivative of that sampler (torch's _Dirichlet
    backward uses a different per-sample estimate with the same expectation).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        gammas = _standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            lucid.xlogy(self.concentration - 1.0, value).sum(-1)
            + lucid.lgamma(self.concentration.sum(-1))
            - lucid.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentration_minus_one = (self.concentration - 1).clamp(min=0.0)
        mode = concentration_minus_one / concentration_minus_one.sum(-1, True)
        # with every concentration below one the density peaks at a vertex
        mask = (self.concentration < 1).all(dim=-1)
        vertex = F.one_hot(mode.argmax(dim=-1), concentration_minus_one.shape[-1])
        return lucid.where(mask.unsqueeze(-1), vertex.to(mode.dtype), mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        total = self.concentration.sum(-1)
        return (
            lucid.lgamma(self.concentration).sum(-1)
            - lucid.lgamma(total)
            - (k - total) * lucid.digamma(total)
            - ((self.concentration - 1.0) * lucid.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lucid.lgamma(x.sum(-1))
