"""The gamma distribution, and the standard gamma draw whose gradient in the concentration is
implicit reparameterization."""

from numbers import Number

import numpy as np

import lucid
from lucid._core.function import Function
from lucid._core.random import _rng
from lucid._core.tensor import _wrap
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import _EMPTY_SIZE, broadcast_all
from lucid.ops import _gamma

__all__ = ["Gamma"]


def _standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha of a Gamma(alpha, 1) draw x held at its quantile: -dP(alpha, x)/dalpha over
    the density, P the regularized lower incomplete gamma function."""
    # a central difference in alpha: P is smooth in alpha, and a step of 1e-5 relative keeps
    # both the truncation (step squared) and the rounding (eps / step) near 1e-10
    step = 1e-5 * np.maximum(alpha, 1.0)
    upper = _gamma.igamma(alpha + step, x, upper=False)
    lower = _gamma.igamma(alpha - np.minimum(step, alpha / 2), x, upper=False)
    dp_dalpha = (upper - lower) / (step + np.minimum(step, alpha / 2))
    log_density = (alpha - 1.0) * np.log(x) - x - _gamma.lgamma(alpha)
    return -dp_dalpha / np.exp(log_density)


class _StandardGamma(Function):
    _backward_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, concentration):
        alpha = concentration._data.astype(np.float64)
        sample = _rng(None).standard_gamma(alpha)
        # draws that underflow to 0 would give log_prob -inf: keep them at the smallest normal
        sample = np.maximum(sample, np.finfo(concentration._data.dtype).tiny)
        ctx.save_for_backward(
            _wrap(_standard_gamma_grad(alpha, sample).astype(concentration._data.dtype))
        )
        return _wrap(sample.astype(concentration._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (sample_grad,) = ctx.saved_tensors
        return grad_output * sample_grad


def _standard_gamma(concentration):
    return _StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    """A gamma distribution with shape concentration and inverse scale rate; rsample's gradient
    in concentration is implicit reparameterization."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = lucid.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = lucid.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        if not lucid.is_tensor(value):
            value = lucid.tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (
            lucid.xlogy(self.concentration, self.rate)
            + lucid.xlogy(self.concentration - 1, value)
            - self.rate * value
            - lucid.lgamma(self.concentration)
        )

    def entropy(self):
        return (
            self.concentration
            - lucid.log(self.rate)
            + lucid.lgamma(self.concentration)
            + (1.0 - self.concentration) * lucid.digamma(self.concentration)
        )

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lucid.lgamma(x + 1) + (x + 1) * lucid.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return lucid.special.gammainc(self.concentration, self.rate * value)
