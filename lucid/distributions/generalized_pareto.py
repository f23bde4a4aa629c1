"""The generalized Pareto distribution, the law of exceedances over a high threshold."""

import math
from numbers import Number

import lucid
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """A generalized Pareto distribution with location loc, scale and shape concentration;
    concentration 0 is the exponential limit, and concentration < 0 bounds the support above.

    PyTorch compares concentration with a float32 zero, so its log_prob and cdf raise for
    float64 parameters; lucid compares in the parameters' own dtype.
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = lucid.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        u = lucid.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def _safe_concentration(self):
        """Whether concentration is (close to) 0, and concentration with those entries set to
        1, so that the other branch's 1 / concentration stays finite there (and so does its
        gradient)."""
        eq_zero = lucid.isclose(self.concentration, lucid.zeros_like(self.concentration))
        safe_conc = lucid.where(eq_zero, lucid.ones_like(self.concentration), self.concentration)
        return eq_zero, safe_conc

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + lucid.ones_like(z)
        # concentration -1 is uniform: its y * log1p(-z) is 0 * -inf at the upper bound
        where_nonzero = lucid.where(y == 0, y, y * lucid.log1p(safe_conc * z))
        return -self.scale.log() - lucid.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """log(1 - cdf(value))."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -lucid.log1p(safe_conc * z) / safe_conc
        return lucid.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        """log(cdf(value))."""
        return lucid.log1p(-lucid.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return lucid.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = lucid.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * lucid.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return lucid.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = lucid.where(valid, self.concentration, 0.5)
        result = self.loc + self.scale / (1 - safe_conc)
        return lucid.where(valid, result, math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = lucid.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return lucid.where(valid, result, math.nan)

    def entropy(self):
        result = lucid.log(self.scale) + self.concentration + 1
        return lucid.broadcast_to(result, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = lucid.where(
            self.concentration < 0, lower - self.scale / self.concentration, math.inf
        )
        return constraints.interval(lower, upper)
