"""The Kumaraswamy distribution on (0, 1), a beta-like law with a closed-form cdf."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import AffineTransform, PowerTransform
from lucid.distributions.uniform import Uniform
from lucid.distributions.utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b * B(1 + n / a, b), with the beta function in log space."""
    arg1 = 1 + n / a
    log_value = lucid.lgamma(arg1) + lucid.lgamma(b) - lucid.lgamma(arg1 + b)
    return b * lucid.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """A Kumaraswamy distribution with concentrations concentration1 (a) and concentration0
    (b): (1 - U ** (1 / b)) ** (1 / a) for U ~ Uniform(0, 1).

    mode is the true mode ((a - 1) / (a b - 1)) ** (1 / a), nan where a < 1 or b < 1 (where
    the density is unbounded at an end). PyTorch's formula takes log1p(-b), which is nan for
    every b > 1, so its mode is nan almost everywhere.
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            lucid.full_like(self.concentration0, 0),
            lucid.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        # a = b = 1 is uniform, 0 / 0 here, and has no single mode either
        return lucid.where((a < 1) | (b < 1) | ((a == 1) & (b == 1)), math.nan, mode)

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - lucid.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        # the harmonic number H(b) = digamma(b + 1) + euler_constant
        harmonic = lucid.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * harmonic - lucid.log(self.concentration1) - lucid.log(self.concentration0)
