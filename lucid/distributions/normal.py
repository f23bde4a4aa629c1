"""The normal (Gaussian) distribution."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.location_scale import LocationScale
from lucid.distributions.utils import _EMPTY_SIZE, _standard_normal

__all__ = ["Normal"]


class Normal(LocationScale, ExponentialFamily):
    """A normal distribution with mean loc and standard deviation scale.

    Example::

        m = lucid.distributions.Normal(lucid.tensor([0.0]), lucid.tensor([1.0]))
        m.rsample((3,)), m.log_prob(lucid.tensor([0.5]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=_EMPTY_SIZE):
        with lucid.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + lucid.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * lucid.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + lucid.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * lucid.log(-math.pi / y)
