"""The negative binomial distribution: the number of successes before total_count failures."""

import lucid
import lucid.nn.functional as F
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.gamma import Gamma
from lucid.distributions.utils import (
    _EMPTY_SIZE,
    broadcast_all,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """A negative binomial distribution: successes of probability probs (or log-odds logits,
    not both) before total_count failures; total_count may be any nonnegative real."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self, total_count, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * lucid.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / lucid.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        # the gamma-Poisson mixture: a Poisson draw whose rate is Gamma(r, (1 - p) / p)
        return Gamma(
            concentration=self.total_count, rate=lucid.exp(-self.logits), validate_args=False
        )

    def sample(self, sample_shape=_EMPTY_SIZE):
        with lucid.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return lucid.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log((1 - p)^r p^k), with log p = logsigmoid(logits) and log(1 - p) its mirror
        failures = self.total_count * F.logsigmoid(-self.logits)
        log_unnormalized_prob = failures + value * F.logsigmoid(self.logits)
        log_normalization = (
            -lucid.lgamma(self.total_count + value)
            + lucid.lgamma(1.0 + value)
            + lucid.lgamma(self.total_count)
        )
        # total_count = value = 0 is the certain outcome 0, where the lgammas are infinite
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
