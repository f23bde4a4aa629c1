"""Vectorized special functions NumPy lacks: lgamma, digamma, trigamma, the Hurwitz zeta behind
polygamma, erfinv, the modified Bessel function i1 (i0's derivative) and the regularized
incomplete gamma functions behind igamma/igammac.

lgamma, erfinv and i1 take and return float64 arrays; digamma, trigamma and zeta keep their
input's float dtype, as PyTorch's kernels do. Where PyTorch's CPU kernels follow a classic algorithm
(Cephes' digamma, trigamma and zeta), the same algorithm is used, so special values (poles,
infinities, nan) and the accuracy near them agree; lgamma uses a Lanczos approximation, erfinv a
polynomial first guess refined by Newton steps on the accurate erf/erfc of `_special`.
"""

from __future__ import annotations

import math

import numpy as np

from lucid.ops import _special

__all__ = ["digamma", "erfinv", "i1", "igamma", "lgamma", "trigamma", "zeta"]

_LOG_PI = math.log(math.pi)
_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
_EULER_GAMMA = 0.5772156649015329

# Lanczos approximation with g = 7 and 9 terms (relative error near 1e-15 for x >= 0.5).
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
)  # fmt: skip


def _sin_pi(x: np.ndarray) -> np.ndarray:
    """sin(pi x) with x first reduced to [-1, 1], so large x keep their fractional part."""
    return np.sin(math.pi * (x - 2.0 * np.round(0.5 * x)))


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """lgamma for x >= 0.5 (finite)."""
    shifted = x - 1.0
    series = np.full_like(shifted, _LANCZOS[0])
    for index in range(1, len(_LANCZOS)):
        series += _LANCZOS[index] / (shifted + index)
    t = shifted + _LANCZOS_G + 0.5
    return _HALF_LOG_TWO_PI + (shifted + 0.5) * np.log(t) - t + np.log(series)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|: inf at the poles (0 and negative integers) and at -inf."""
    x = np.asarray(x, np.float64)
    result = np.full(x.shape, np.inf)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        pole = finite & (x <= 0) & (x == np.floor(x))
        # near 0, lgamma(x) = -log|x| - euler_gamma x to double precision (sin(pi x) would lose
        # digits on denormals)
        tiny = finite & (np.abs(x) < 1e-10) & ~pole
        right = finite & (x >= 0.5)
        left = finite & (x < 0.5) & ~pole & ~tiny
        result[tiny] = -np.log(np.abs(x[tiny])) - _EULER_GAMMA * x[tiny]
        result[right] = _lgamma_positive(x[right])
        # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        xl = x[left]
        result[left] = _LOG_PI - np.log(np.abs(_sin_pi(xl))) - _lgamma_positive(1.0 - xl)
    # Gamma(1) = Gamma(2) = 1 exactly
    result[(x == 1.0) | (x == 2.0)] = 0.0
    result[np.isnan(x)] = np.nan
    return result


# digamma's asymptotic series in z = 1/x^2, highest power first (B_2k / 2k), and digamma(10).
_DIGAMMA_SERIES = (
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)  # fmt: skip
_DIGAMMA_10 = 2.25175258906672110764


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """digamma for x > 0: recur up to x >= 10, then the asymptotic series."""
    result = np.zeros_like(x)
    # x > 0 reaches 10 within ten steps; whole-array steps beat masked indexing
    for _ in range(10):
        below = x < 10.0
        if not below.any():
            break
        result -= np.where(below, 1.0 / x, 0.0)
        x = np.where(below, x + 1.0, x)
    z = 1.0 / (x * x)
    series = np.zeros_like(x)
    for coefficient in _DIGAMMA_SERIES:
        series = series * z + coefficient
    tail = np.where(x < 1e17, z * series, 0.0)
    value = result + np.log(x) - 0.5 / x - tail
    return np.where(x == 10.0, result + _DIGAMMA_10, value)


def digamma(x: np.ndarray) -> np.ndarray:
    """d/dx lgamma(x): -inf at +0, +inf at -0, nan at negative integers and -inf (computed in
    x's float dtype, as PyTorch does, so float32 keeps PyTorch's rounding near the poles)."""
    x = np.asarray(x)
    result = np.full(x.shape, np.nan, x.dtype)
    with np.errstate(all="ignore"):
        zero = x == 0
        result[zero] = np.copysign(np.inf, -x[zero])
        positive = x > 0
        result[positive] = _digamma_positive(x[positive])
        negative = (x < 0) & (x != np.floor(x)) & np.isfinite(x)
        xn = x[negative]
        # reflection, with pi / tan(pi r) taken on the fractional part r of x
        fraction = xn - np.trunc(xn)
        result[negative] = _digamma_positive(1.0 - xn) - math.pi / np.tan(math.pi * fraction)
    return result


def trigamma(x: np.ndarray) -> np.ndarray:
    """d/dx digamma(x), as PyTorch computes it (in x's float dtype): a reflection below 0.5, six
    recurrence steps and an asymptotic series."""
    x = np.asarray(x).copy()
    with np.errstate(all="ignore"):
        sign = np.ones_like(x)
        result = np.zeros_like(x)
        reflect = x < 0.5
        sign[reflect] = -1.0
        sin_pi_x = np.sin(math.pi * x[reflect])
        result[reflect] -= (math.pi * math.pi) / (sin_pi_x * sin_pi_x)
        x[reflect] = 1.0 - x[reflect]
        for _ in range(6):
            result += 1.0 / (x * x)
            x += 1.0
        ixx = 1.0 / (x * x)
        result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx / 42.0))) / x
        return sign * result


# Euler-Maclaurin coefficients (2k)! / B_2k of Cephes' zeta.
_ZETA_COEFFICIENTS = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18,
)  # fmt: skip


def zeta(s: float, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function sum_k (q + k)^-s for an integer s > 1 (Cephes' algorithm: terms
    summed until q + k > 9, then an Euler-Maclaurin tail); inf at non-positive integer q."""
    q = np.asarray(q)
    with np.errstate(all="ignore"):
        total = np.power(q, -s)
        a = q.copy()
        b = np.zeros_like(q)
        steps = 0
        # poles and non-finite q skip the sum (q + 1 == q for them); so does q below -2^24, whose
        # sum would take |q| steps (its result is left nan)
        pole = (q <= 0) & (q == np.floor(q))
        too_far = (q < -(2.0**24)) & ~pole
        active = np.isfinite(q) & ~pole & ~too_far
        while np.any(active):
            steps += 1
            a[active] += 1.0
            b[active] = np.power(a[active], -s)
            total[active] += b[active]
            active = active & ((steps < 9) | (a <= 9.0))
        w = a
        total += b * w / (s - 1.0)
        total -= 0.5 * b
        factor = np.ones_like(q)
        k = 0.0
        for coefficient in _ZETA_COEFFICIENTS:
            factor *= s + k
            b /= w
            total += factor * b / coefficient
            k += 1.0
            factor *= s + k
            b /= w
            k += 1.0
        total = np.where(too_far, np.nan, total)
        return np.where(pole, np.inf, total)


# Giles' single-precision erfinv approximation ("Approximating the erfinv function", 2010), a
# first guess that two Newton steps bring to double precision.
_ERFINV_CENTRAL = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941,
)  # fmt: skip
_ERFINV_TAIL = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682,
)  # fmt: skip
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erfinv(y: np.ndarray, newton_steps: int = 3) -> np.ndarray:
    """The inverse of erf on [-1, 1]: +-inf at +-1, nan outside. Three Newton steps reach
    double precision; one is enough for a float32 result."""
    y = np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        # the central polynomial on every element, in place; the tail one only where it applies
        # (few elements), each element's arithmetic the same as one where() per coefficient
        wc = w - 2.5
        p = np.full_like(wc, _ERFINV_CENTRAL[0])
        for coefficient in _ERFINV_CENTRAL[1:]:
            p *= wc
            p += coefficient
        tail = np.flatnonzero(~(w < 5.0))
        if tail.size:
            wt = np.sqrt(w.reshape(-1)[tail]) - 3.0
            pt = np.full_like(wt, _ERFINV_TAIL[0])
            for coefficient in _ERFINV_TAIL[1:]:
                pt = coefficient + pt * wt
            p.reshape(-1)[tail] = pt
        x = p * y
        magnitude = np.abs(y)
        # Newton on erf(x) = y; near |y| = 1 on log erfc(|x|) = log(1 - |y|) (1 - |y| is exact
        # there, and the log keeps the steep tail from overshooting). Each side evaluates only
        # its own elements.
        centre = np.flatnonzero(magnitude < 0.5)
        tail = np.flatnonzero(magnitude >= 0.5)
        flat_x = x.reshape(-1).copy()
        flat_y = y.reshape(-1)
        # the tail's first guess can be a few digits off; each step squares the error
        for _ in range(newton_steps):
            xc, yc = flat_x[centre], flat_y[centre]
            step = (yc - _special.erf(xc)) / (_TWO_OVER_SQRT_PI * np.exp(-xc * xc))
            flat_x[centre] = np.where(np.isfinite(step), xc + step, xc)
            xt, yt = flat_x[tail], flat_y[tail]
            complement = _special.erfc(np.abs(xt))
            log_ratio = np.log(complement) - np.log(1.0 - np.abs(yt))
            slope = _TWO_OVER_SQRT_PI * np.exp(-xt * xt)
            step = np.sign(yt) * log_ratio * complement / slope
            flat_x[tail] = np.where(np.isfinite(step), xt + step, xt)
        x = flat_x.reshape(y.shape)
        x = np.where(magnitude == 1.0, np.copysign(np.inf, y), x)
        x = np.where(magnitude > 1.0, np.nan, x)
        return np.where(y == 0, y, x)


def i1(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind of order one: its power series for
    |x| <= 30, its asymptotic expansion beyond (both converged to double precision)."""
    x = np.asarray(x, np.float64)
    magnitude = np.abs(x)
    result = np.empty_like(x)
    with np.errstate(all="ignore"):
        near = magnitude <= 30.0
        half = 0.5 * magnitude[near]
        term = half.copy()
        total = term.copy()
        square = half * half
        for k in range(1, 90):
            term = term * square / (k * (k + 1))
            total += term
        result[near] = total
        far = magnitude[~near]
        # e^x / sqrt(2 pi x) * sum_k (-1)^k prod_j (4 - (2j - 1)^2) / (k! (8x)^k)
        term = np.ones_like(far)
        total = term.copy()
        for k in range(1, 30):
            term = term * -(4.0 - (2 * k - 1) ** 2) / (k * 8.0 * far)
            total += term
        scale = np.exp(0.5 * far)
        result[~near] = scale * (scale / np.sqrt(2.0 * math.pi * far)) * total
    return np.copysign(result, x)


# The incomplete gamma iterations stop per element once a step changes the result by less than
# this (relative); the iteration cap is reached only by a and x both beyond ~1e7 and close.
_IGAMMA_EPSILON = 1e-16
_IGAMMA_MAX_ITERATIONS = 20000
_LENTZ_TINY = 1e-300


def _igamma_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The lower regularized P(a, x) / prefactor, times a: sum_n x^n / ((a+1)...(a+n)).
    Converges fast for x < a + 1, where its terms shrink from the start."""
    total = np.ones_like(x)
    term = np.ones_like(x)
    denominator = a.copy()
    active = np.arange(x.size)
    for _ in range(_IGAMMA_MAX_ITERATIONS):
        if active.size == 0:
            break
        denominator[active] += 1.0
        term[active] *= x[active] / denominator[active]
        total[active] += term[active]
        active = active[np.abs(term[active]) > _IGAMMA_EPSILON * np.abs(total[active])]
    return total


def _igammac_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The upper regularized Q(a, x) / prefactor by Lentz's method on Legendre's continued
    fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))),
    which converges fast for x >= a + 1."""
    b = x + 1.0 - a
    c = np.full_like(x, 1.0 / _LENTZ_TINY)
    d = 1.0 / b
    h = d.copy()
    active = np.arange(x.size)
    for step in range(1, _IGAMMA_MAX_ITERATIONS + 1):
        if active.size == 0:
            break
        an = -step * (step - a[active])
        b[active] += 2.0
        d_active = an * d[active] + b[active]
        d_active = np.where(np.abs(d_active) < _LENTZ_TINY, _LENTZ_TINY, d_active)
        c_active = b[active] + an / c[active]
        c_active = np.where(np.abs(c_active) < _LENTZ_TINY, _LENTZ_TINY, c_active)
        d[active] = 1.0 / d_active
        c[active] = c_active
        delta = d[active] * c_active
        h[active] *= delta
        active = active[np.abs(delta - 1.0) > _IGAMMA_EPSILON]
    return h


# Above this a, x within 30% of a is left to Temme's uniform expansion (two terms, within ~1e-13
# there): the iterations' length grows as sqrt(a) near x = a, and their prefactor's logarithm,
# of size a log a, costs digits.
_IGAMMA_LARGE_A = 1e4
_IGAMMA_NEAR = 0.3


def _igamma_large(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """P(a, x) or (`upper`) Q(a, x) for large a and x near a by Temme's uniform asymptotic
    expansion: Q = erfc(eta sqrt(a / 2)) / 2 + R and P = erfc(-eta sqrt(a / 2)) / 2 - R, with
    R = e^(-a eta^2 / 2) / sqrt(2 pi a) (C0(eta) + C1(eta) / a), mu = x / a - 1 and
    eta^2 / 2 = mu - log(1 + mu), eta of mu's sign. Each is computed directly, so a tail far
    below 1 keeps its digits."""
    # x - a is exact where x is near a, so mu keeps its digits when x / a rounds to 1
    mu = (x - a) / a
    half_eta_squared = mu - np.log1p(mu)
    # near mu = 0 the difference above cancels: its Taylor series instead
    near = np.abs(mu) < 1e-3
    m = mu[near]
    half_eta_squared[near] = (
        m * m * (0.5 - m * (1 / 3 - m * (1 / 4 - m * (1 / 5 - m * (1 / 6 - m * (1 / 7 - m / 8))))))
    )
    eta = np.sign(mu) * np.sqrt(2.0 * half_eta_squared)
    c0 = np.empty_like(mu)
    c1 = np.empty_like(mu)
    far = ~near
    mu_far, eta_far = mu[far], eta[far]
    c0[far] = 1.0 / mu_far - 1.0 / eta_far
    c1[far] = 1.0 / eta_far**3 - 1.0 / mu_far**3 - 1.0 / mu_far**2 - 1.0 / (12.0 * mu_far)
    # the closed forms above cancel near eta = 0: their Taylor series there
    e = eta[near]
    c0[near] = -1.0 / 3.0 + e * (1.0 / 12.0 - e * (2.0 / 135.0))
    c1[near] = -1.0 / 540.0 - e * (1.0 / 288.0 - e * (1.0 / 378.0))
    remainder = np.exp(-a * half_eta_squared) / np.sqrt(2.0 * math.pi * a) * (c0 + c1 / a)
    if upper:
        return 0.5 * _special.erfc(eta * np.sqrt(0.5 * a)) + remainder
    return 0.5 * _special.erfc(-eta * np.sqrt(0.5 * a)) - remainder


def igamma(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """The regularized lower (P) or, with `upper`, upper (Q = 1 - P) incomplete gamma function
    of float64 arrays of one shape. The smaller of P and Q is computed directly (series below
    x = a + 1, continued fraction above) and the other as its complement, so neither tail loses
    digits. The edge cases are decided in PyTorch's order: nan where a < 0 or x < 0; at a = 0,
    P = 1 for x > 0 (else nan); at x = 0, P = 0; at a = inf, P = 0 (nan if x is inf too); at
    x = inf, P = 1."""
    a = np.asarray(a, np.float64)
    x = np.asarray(x, np.float64)
    lower_value = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        undecided = ~((a < 0) | (x < 0))
        for case, value in (
            (a == 0, np.where(x > 0, 1.0, np.nan)),
            (x == 0, 0.0),
            (np.isposinf(a), np.where(np.isposinf(x), np.nan, 0.0)),
            (np.isposinf(x), 1.0),
        ):
            hit = undecided & case
            lower_value[hit] = np.broadcast_to(value, x.shape)[hit]
            undecided &= ~case
        regular = undecided & ~np.isnan(a) & ~np.isnan(x)
        special = ~regular
        result = 1.0 - lower_value if upper else lower_value
        large = regular & (a > _IGAMMA_LARGE_A) & (np.abs(x - a) < _IGAMMA_NEAR * a)
        series = regular & ~large & (x < a + 1.0)
        fraction = regular & ~large & ~series
        # prefactor x^a e^-x / Gamma(a), in logs so large a and x don't overflow
        a_series, x_series = a[series], x[series]
        log_prefactor = a_series * np.log(x_series) - x_series - lgamma(a_series + 1.0)
        p = np.exp(log_prefactor) * _igamma_series(a_series, x_series)
        result[series] = 1.0 - p if upper else p
        a_fraction, x_fraction = a[fraction], x[fraction]
        log_prefactor = a_fraction * np.log(x_fraction) - x_fraction - lgamma(a_fraction)
        q = np.exp(log_prefactor) * _igammac_fraction(a_fraction, x_fraction)
        result[fraction] = q if upper else 1.0 - q
        result[large] = _igamma_large(a[large], x[large], upper)
        result[special & np.isnan(lower_value)] = np.nan
    return result
