"""The von Mises distribution, the circular analogue of the normal, with log I0 and log I1 from
Abramowitz and Stegun's polynomial approximations and Best and Fisher's rejection sampler."""

import math

import lucid
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import _EMPTY_SIZE, broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz and Stegun 9.8.1 to 9.8.4 (relative error below 2e-7), the approximations PyTorch
# uses, so that log_prob and variance agree with it: for t = x / 3.75 below 1, I0(x) and
# I1(x) / x are polynomials in t^2; above, sqrt(x) exp(-x) I0(x) and I1(x) are polynomials in
# 1 / t
_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813)
_I0_LARGE = (
    0.39894228,
    0.01328592,
    0.00225319,
    -0.00157565,
    0.00916281,
    -0.02057706,
    0.02635537,
    -0.01647633,
    0.00392377,
)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411)
_I1_LARGE = (
    0.39894228,
    -0.03988024,
    -0.00362018,
    0.00163801,
    -0.01031555,
    0.02282967,
    -0.02895312,
    0.01787654,
    -0.00420059,
)


def _polynomial(y, coefficients):
    """sum_i coefficients[i] * y^i, by Horner's rule from the highest power."""
    result = coefficients[-1]
    for coefficient in reversed(coefficients[:-1]):
        result = coefficient + y * result
    return result


def _log_modified_bessel_fn(x, order: int = 0):
    """log I_order(x) for x > 0 and order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small_coefficients, large_coefficients = (
        (_I0_SMALL, _I0_LARGE) if order == 0 else (_I1_SMALL, _I1_LARGE)
    )
    y = x / 3.75
    small = _polynomial(y * y, small_coefficients)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    # the large-x form carries exp(x) / sqrt(x) in log space, where it cannot overflow
    large = x - 0.5 * x.log() + _polynomial(3.75 / x, large_coefficients).log()
    return lucid.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's wrapped-Cauchy envelope: redraw every undecided entry until each has
    been accepted once, then shift by loc and wrap to [-pi, pi)."""
    done = lucid.zeros(x.shape, dtype=lucid.bool)
    while not done.all():
        u = lucid.rand((3,) + tuple(x.shape), dtype=loc.dtype)
        u1, u2, u3 = u.unbind()
        z = lucid.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = lucid.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """A von Mises distribution on the circle with mean angle loc and concentration; loc and
    values may be any real numbers, read as angles modulo 2 pi. mean and variance are the
    circular ones: loc, and 1 - I1(concentration) / I0(concentration).

    Example::

        angles = VonMises(lucid.tensor([1.0]), lucid.tensor([4.0])).sample((3,))
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        event_shape = lucid.Size()
        super().__init__(batch_shape, event_shape, validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * lucid.cos(value - self.loc)
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    # sampling runs in float64: in float32 the acceptance test can fail for ever at
    # concentrations below about 1e-4
    @lazy_property
    def _loc(self):
        return self.loc.to(lucid.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(lucid.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        # rho -> kappa / 2 as kappa -> 0, where the closed form loses every digit
        proposal_r_taylor = 1 / kappa + kappa
        return lucid.where(kappa < 1e-5, proposal_r_taylor, proposal_r)

    def sample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        with lucid.no_grad():
            x = lucid.empty(shape, dtype=self._loc.dtype)
            samples = _rejection_sample(self._loc, self._concentration, self._proposal_r, x)
            return samples.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean, loc."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(concentration) / I0(concentration)."""
        return (
            1
            - (
                _log_modified_bessel_fn(self.concentration, order=1)
                - _log_modified_bessel_fn(self.concentration, order=0)
            ).exp()
        )
