"""The Laplace distribution."""

import lucid
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.location_scale import LocationScale
from lucid.distributions.utils import _EMPTY_SIZE

__all__ = ["Laplace"]


class Laplace(LocationScale, Distribution):
    """A Laplace distribution with location loc and scale scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        finfo = lucid.finfo(self.loc.dtype)
        # u in (eps - 1, 1) keeps log1p(-|u|) finite
        u = lucid.empty(shape, dtype=self.loc.dtype).uniform_(finfo.eps - 1, 1)
        return self.loc - self.scale * u.sign() * lucid.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -lucid.log(2 * self.scale) - lucid.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        deviation = value - self.loc
        return 0.5 - 0.5 * deviation.sign() * lucid.expm1(-deviation.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * lucid.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + lucid.log(2 * self.scale)
