"""The Cauchy (Lorentz) distribution."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.location_scale import LocationScale
from lucid.distributions.utils import _EMPTY_SIZE

__all__ = ["Cauchy"]


class Cauchy(LocationScale, Distribution):
    """A Cauchy distribution with median loc and half width at half maximum scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return lucid.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return lucid.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        eps = lucid.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return lucid.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return lucid.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
