"""The continuous Bernoulli distribution on [0, 1], the normalized form of the Bernoulli
likelihood in a continuous value (Loaiza-Ganem and Cunningham, NeurIPS 2019)."""

import math
from numbers import Number

import lucid
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import (
    _EMPTY_SIZE,
    broadcast_all,
    clamp_probs,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from lucid.nn.functional import binary_cross_entropy_with_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """A continuous Bernoulli distribution given by probs in (0, 1) or logits (not both); they
    are the shape parameter and its log-odds, not a probability.

    Within lims, near probs = 1/2, the closed forms divide 0 by 0: the normalizer, mean and
    variance there are Taylor expansions about 1/2, and cdf and icdf the uniform ones.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(
        self,
        probs=None,
        logits=None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # checked here, when asked for either way, because the clamp below would hide it
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = lucid.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = lucid.Size(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return lucid.logical_or(
            lucid.le(self.probs, self._lims[0]), lucid.gt(self.probs, self._lims[1])
        )

    def _cut_probs(self):
        # probs inside lims moved to lims[0], so the unused closed-form branch stays finite
        return lucid.where(
            self._outside_unstable_region(),
            self.probs,
            self._lims[0] * lucid.ones_like(self.probs),
        )

    def _cont_bern_log_norm(self):
        """The log normalizing constant, as a function of probs."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = lucid.where(
            lucid.le(cut_probs, 0.5), cut_probs, lucid.zeros_like(cut_probs)
        )
        cut_probs_above_half = lucid.where(
            lucid.ge(cut_probs, 0.5), cut_probs, lucid.ones_like(cut_probs)
        )
        log_norm = lucid.log(
            lucid.abs(lucid.log1p(-cut_probs) - lucid.log(cut_probs))
        ) - lucid.where(
            lucid.le(cut_probs, 0.5),
            lucid.log1p(-2.0 * cut_probs_below_half),
            lucid.log(2.0 * cut_probs_above_half - 1.0),
        )
        x = lucid.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return lucid.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (
            lucid.log1p(-cut_probs) - lucid.log(cut_probs)
        )
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * lucid.pow(x, 2)) * x
        return lucid.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return lucid.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = cut_probs * (cut_probs - 1.0) / lucid.pow(
            1.0 - 2.0 * cut_probs, 2
        ) + 1.0 / lucid.pow(lucid.log1p(-cut_probs) - lucid.log(cut_probs), 2)
        x = lucid.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return lucid.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        u = lucid.rand(shape, dtype=self.probs.dtype)
        with lucid.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        u = lucid.rand(shape, dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (
            -binary_cross_entropy_with_logits(logits, value, reduction="none")
            + self._cont_bern_log_norm()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (
            lucid.pow(cut_probs, value) * lucid.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0
        ) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = lucid.where(self._outside_unstable_region(), cdfs, value)
        return lucid.where(
            lucid.le(value, 0.0),
            lucid.zeros_like(value),
            lucid.where(lucid.ge(value, 1.0), lucid.ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return lucid.where(
            self._outside_unstable_region(),
            (lucid.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - lucid.log1p(-cut_probs))
            / (lucid.log(cut_probs) - lucid.log1p(-cut_probs)),
            value,
        )

    def entropy(self):
        log_probs0 = lucid.log1p(-self.probs)
        log_probs1 = lucid.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizing constant, as a function of the natural parameter (logits)."""
        out_unst_reg = lucid.logical_or(
            lucid.le(x, self._lims[0] - 0.5), lucid.gt(x, self._lims[1] - 0.5)
        )
        cut_nat_params = lucid.where(out_unst_reg, x, (self._lims[0] - 0.5) * lucid.ones_like(x))
        log_norm = lucid.log(lucid.abs(lucid.special.expm1(cut_nat_params))) - lucid.log(
            lucid.abs(cut_nat_params)
        )
        taylor = 0.5 * x + lucid.pow(x, 2) / 24.0 - lucid.pow(x, 4) / 2880.0
        return lucid.where(out_unst_reg, log_norm, taylor)
