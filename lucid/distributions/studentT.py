"""Student's t distribution."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.chi2 import Chi2
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE, _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """A Student's t distribution with df degrees of freedom, location loc and scale scale."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        # undefined for df <= 1
        return lucid.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # infinite for 1 < df <= 2, undefined for df <= 1
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        result = lucid.where(self.df > 2, finite, math.inf)
        return lucid.where(self.df <= 1, math.nan, result)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SIZE):
        # a normal over the root of a chi-squared over its df
        shape = self._extended_shape(sample_shape)
        normal = _standard_normal(shape, dtype=self.df.dtype)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * normal * lucid.rsqrt(chi2 / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        normalizer = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + lucid.lgamma(0.5 * self.df)
            - lucid.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * lucid.log1p(y**2.0 / self.df) - normalizer

    def entropy(self):
        lbeta = lucid.lgamma(0.5 * self.df) + math.lgamma(0.5) - lucid.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5
            * (self.df + 1)
            * (lucid.digamma(0.5 * (self.df + 1)) - lucid.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
