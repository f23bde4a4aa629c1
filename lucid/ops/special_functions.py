"""The special functions of torch.special that lucid's other families lack: erfcx, ndtri, the
scaled modified Bessel functions, the Bessel and Airy functions, the Hurwitz zeta function and
the orthogonal polynomials. lucid.special gathers them with the rest of the namespace.

Kernels take and return float64 NumPy arrays (no SciPy at run time). The Bessel, Airy and
polynomial functions have no derivative in PyTorch, so their results never require grad.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.function import Function
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops import _special
from lucid.ops._common import dtype_name
from lucid.ops._promote import binary_arrays, float_array, round_to
from lucid.ops.activations import sigmoid
from lucid.ops.arithmetic import _grad_to
from lucid.ops.broadcast import broadcast_error
from lucid.ops.pointwise import I1, _tiny_and_safe, erfc, exp, i0, log, log1p, sign, where

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "entr",
    "expit",
    "ndtr",
    "log_ndtr",
    "xlog1py",
    "erfcx",
    "ndtri",
    "i0e",
    "i1",
    "i1e",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
    "airy_ai",
    "zeta",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]

_SQRT_PI = math.sqrt(math.pi)
_SQRT_TWO_PI = math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_EULER_GAMMA = 0.5772156649015329
_MACHEP = 1.11022302462515654042e-16


def _check_real(kernel: str, *values: Any) -> None:
    """PyTorch's error for a complex operand of a function with no complex kernel, where no op
    class refuses it first."""
    for value in values:
        if isinstance(value, TensorBase):
            numpy_dtype = value._data.dtype
        elif isinstance(value, complex):
            # a Python complex number: the error names the promoted dtype
            numpy_dtype = dtypes.result_type(*values).numpy_dtype
        else:
            continue
        if numpy_dtype.kind == "c":
            raise NotImplementedError(
                f"\"{kernel}\" not implemented for '{dtype_name(numpy_dtype)}'"
            )


def _unary(kernel: Any, input: Tensor) -> np.ndarray:
    """`kernel` on input's values in float64, rounded to input's float dtype (integers: the
    default dtype)."""
    array = float_array(input)
    flat = array.reshape(-1).astype(np.float64, copy=False)
    with np.errstate(all="ignore"):
        result = kernel(flat)
    return round_to(result, array.dtype).reshape(array.shape)


def _binary_arrays(input: Any, other: Any) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """Both operands (tensors or a tensor and a number), broadcast and in float64, and the
    float dtype of the result: PyTorch's promotion, an integral one as the default dtype."""
    if not isinstance(input, TensorBase) and not isinstance(other, TensorBase):
        raise TypeError("expected at least one Tensor argument")
    x, y = binary_arrays(input, other)
    dtype = x.dtype if isinstance(x, np.ndarray) else y.dtype
    if dtype.kind not in dtypes.FLOAT_KINDS:
        dtype = dtypes.get_default_dtype().numpy_dtype
    a = np.asarray(x, np.float64)
    b = np.asarray(y, np.float64)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    return a, b, dtype


# ------------------------------------------------------------ entr, expit, ndtr, xlog1py
class Entr(Function):
    _backward_name = "SpecialEntrBackward0"
    _complex_refusal = (NotImplementedError, "\"entr_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)

        def kernel(v: np.ndarray) -> np.ndarray:
            # -x log x, 0 at 0 (its limit) and -inf left of it; nan stays nan
            result = np.where(v > 0, -v * np.log(np.where(v > 0, v, 1.0)), -np.inf)
            return np.where(v == 0, 0.0, np.where(np.isnan(v), v, result))

        return _wrap(_unary(kernel, x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx -x log x = -(1 + log x): inf at 0 and nan left of it, as PyTorch
        return grad_output * -(1.0 + log(x))


def entr(input: Tensor) -> Tensor:
    """The elementwise entropy -input * log(input) (0 at 0, -inf for negative input)."""
    return Entr.apply(input)


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-input))."""
    return sigmoid(input)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, erfc(-input / sqrt 2) / 2."""
    _check_real("erf_vml_cpu", input)
    return 0.5 * erfc(input * -_SQRT_HALF)


class LogNdtr(Function):
    _backward_name = "SpecialLogNdtrBackward0"
    _complex_refusal = (NotImplementedError, "\"log_ndtr_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        def kernel(v: np.ndarray) -> np.ndarray:
            # PyTorch's split: below -1 through erfcx, whose tail does not underflow
            t = v * _SQRT_HALF
            low = np.log(_erfcx_kernel(-t) / 2.0) - t * t
            return np.where(v < -1.0, low, np.log1p(-_special.erfc(t) / 2.0))

        result = _wrap(_unary(kernel, x))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        # d/dx log ndtr(x) = phi(x) / ndtr(x) = exp(-(log ndtr(x) + x^2 / 2)) / sqrt(2 pi)
        return grad_output / _SQRT_TWO_PI * exp(-(result + x * x / 2.0))


def log_ndtr(input: Tensor) -> Tensor:
    """The log of the standard normal CDF, accurate far into the left tail."""
    return LogNdtr.apply(input)


def _xlog1py_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        result = np.where(x == 0, 0.0, x * np.log1p(y))
    return np.where(np.isnan(y), np.nan, result)


class Xlog1py(Function):
    _backward_name = "SpecialXlog1PyBackward0"
    _complex_refusal = (NotImplementedError, "\"xlog1py_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, y):
        x_array, y_array, dtype = _binary_arrays(x, y)
        ctx.save_for_backward(x, y)
        return _wrap(round_to(_xlog1py_array(x_array, y_array), dtype))

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            # d/dx x log1p(y) = log1p(y); PyTorch takes it as 0 where x is 0 and log1p(y) is
            # -inf or nan
            masked = (x == 0) & (y <= -1.0)
            grad_x = _grad_to(grad_output * where(masked, 0.0, log1p(y)), x)
        if ctx.needs_input_grad[1]:
            # d/dy x log1p(y) = x / (1 + y)
            grad_y = _grad_to(grad_output * x / (y + 1.0), y)
        return grad_x, grad_y


def xlog1py(input: Any, other: Any) -> Tensor:
    """input * log1p(other), taken as 0 where input is 0 (unless other is nan)."""
    if not isinstance(input, TensorBase):
        input = _as_tensor_beside(input, other)
    if not isinstance(other, TensorBase):
        other = _as_tensor_beside(other, input)
    return Xlog1py.apply(input, other)


# --------------------------------------------------------------------------------- erfcx
def _erfcx_kernel(x: np.ndarray) -> np.ndarray:
    """exp(x^2) erfc(x): the product where erfc is far from underflow, an asymptotic series
    beyond; for x < 0 through erfcx(x) = 2 exp(x^2) - erfcx(-x)."""
    magnitude = np.abs(x)
    result = np.empty_like(x)
    near = magnitude < 12.0
    z = magnitude[near]
    # x^2 = hi^2 + (2 hi lo + lo^2) with hi^2 exact, so exp(x^2) keeps its precision
    hi = np.floor(z * 2.0**20) / 2.0**20
    lo = z - hi
    result[near] = np.exp(hi * hi) * np.exp(lo * (hi + z)) * _special.erfc(z)
    far = magnitude[~near]
    # 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k; at x >= 12 twenty terms reach 1e-26
    term = np.ones_like(far)
    total = term.copy()
    inverse = 1.0 / (2.0 * far * far)
    for k in range(1, 21):
        term = term * -(2 * k - 1) * inverse
        total += term
    result[~near] = total / (far * _SQRT_PI)
    negative = x < 0
    z = magnitude[negative]
    hi = np.floor(z * 2.0**20) / 2.0**20
    lo = z - hi
    exp_square = np.exp(hi * hi) * np.exp(lo * (hi + z))
    result[negative] = 2.0 * exp_square - result[negative]
    result[np.isnan(x)] = np.nan
    result[x == -np.inf] = np.inf
    return result


class Erfcx(Function):
    _backward_name = "SpecialErfcxBackward0"
    _complex_refusal = (NotImplementedError, "\"erfcx_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        result = _wrap(_unary(_erfcx_kernel, x))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi)
        return grad_output * (2.0 * x * result - 2.0 / _SQRT_PI)


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function exp(x^2) erfc(x)."""
    return Erfcx.apply(input)


# --------------------------------------------------------------------------------- ndtri
# Acklam's rational first guess for the normal quantile (relative error below 1.2e-9), which
# Halley steps on the accurate erfcx bring to double precision.
_ACKLAM_A = (
    -3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
    -3.066479806614716e01, 2.506628277459239e00,
)  # fmt: skip
_ACKLAM_B = (
    -5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
    -1.328068155288572e01, 1.0,
)  # fmt: skip
_ACKLAM_C = (
    -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
    4.374664141464968e00, 2.938163982698783e00,
)  # fmt: skip
_ACKLAM_D = (
    7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00, 1.0,
)  # fmt: skip


def _horner(coefficients: tuple, x: np.ndarray) -> np.ndarray:
    total = np.full_like(x, coefficients[0])
    for coefficient in coefficients[1:]:
        total = total * x + coefficient
    return total


def _ndtri_kernel(p: np.ndarray) -> np.ndarray:
    """The normal quantile, computed on the lower half (1 - p is exact for p >= 1/2)."""
    lower = np.minimum(p, 1.0 - p)
    central = lower > 0.02425
    q = lower - 0.5
    r = q * q
    x = _horner(_ACKLAM_A, r) * q / _horner(_ACKLAM_B, r)
    t = np.sqrt(-2.0 * np.log(np.where(central, 0.5, lower)))
    x = np.where(central, x, _horner(_ACKLAM_C, t) / _horner(_ACKLAM_D, t))
    log_lower = np.log(lower)
    # near the median p - 1/2 is exact, and erf gives the residual to its relative precision
    middle = lower > 0.25
    for _ in range(2):
        # Halley on ndtr(x) = lower, the residual in ratio to the density phi(x); in the tail
        # as ratios that neither underflows: ndtr(x) / phi(x) = sqrt(2 pi) erfcx(-x / sqrt 2)
        # / 2, lower / phi(x) from logs
        mills = 0.5 * _SQRT_TWO_PI * _erfcx_kernel(-x / math.sqrt(2.0))
        step = mills - _SQRT_TWO_PI * np.exp(log_lower + 0.5 * x * x)
        centre = (0.5 * _special.erf(x / math.sqrt(2.0)) - q) * _SQRT_TWO_PI * np.exp(0.5 * x * x)
        step = np.where(middle, centre, step)
        x = np.where(np.isfinite(step), x - step / (1.0 + 0.5 * x * step), x)
    x = np.where(lower == 0.0, -np.inf, x)
    x = np.where(p > 0.5, -x, x)
    return np.where((p < 0.0) | (p > 1.0), np.nan, x)


class Ndtri(Function):
    _backward_name = "SpecialNdtriBackward0"
    _complex_refusal = (NotImplementedError, "\"ndtri_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, p):
        result = _wrap(_unary(_ndtri_kernel, p))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dp ndtri(p) = 1 / phi(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
        return grad_output * (_SQRT_TWO_PI * exp(0.5 * result * result))


def ndtri(input: Tensor) -> Tensor:
    """The inverse of the standard normal CDF (the normal quantile)."""
    return Ndtri.apply(input)


# ------------------------------------------------------------ modified Bessel I, scaled
def _i_scaled(order: int, x: np.ndarray) -> np.ndarray:
    """exp(-|x|) I_order(x) for order 0 or 1: the power series for |x| <= 30, the asymptotic
    expansion beyond (both to double precision)."""
    magnitude = np.abs(x)
    result = np.empty_like(x)
    near = magnitude <= 30.0
    half = 0.5 * magnitude[near]
    square = half * half
    term = np.ones_like(half) if order == 0 else half.copy()
    total = term.copy()
    for k in range(1, 90):
        term = term * square / (k * (k + order))
        total += term
    result[near] = total * np.exp(-magnitude[near])
    far = magnitude[~near]
    mu = 4.0 * order * order
    term = np.ones_like(far)
    total = term.copy()
    for k in range(1, 30):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * far)
        total += term
    result[~near] = total / np.sqrt(2.0 * math.pi * far)
    result[np.isnan(x)] = np.nan
    return np.copysign(result, x) if order == 1 else result


class I0e(Function):
    _backward_name = "SpecialI0EBackward0"
    _complex_refusal = (NotImplementedError, "\"i0e_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        result = _wrap(_unary(lambda v: _i_scaled(0, v), x))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        # d/dx e^-|x| I0(x) = i1e(x) - sgn(x) i0e(x)
        return grad_output * (I1e.apply(x) - sign(x) * result)


class I1e(Function):
    _backward_name = "SpecialI1EBackward0"
    _complex_refusal = (NotImplementedError, "\"i1e_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        result = _wrap(_unary(lambda v: _i_scaled(1, v), x))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        # d/dx e^-|x| I1(x) = i0e(x) - i1e(x) (sgn(x) + 1/x), which tends to 1/2 at 0
        is_tiny, safe = _tiny_and_safe(x)
        derivative = I0e.apply(safe) - result * (sign(safe) + 1.0 / safe)
        return grad_output * where(is_tiny, 0.5, derivative)


def i0e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function of order zero, exp(-abs(x)) I0(x)."""
    return I0e.apply(input)


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order one."""
    return I1.apply(input)


def i1e(input: Tensor) -> Tensor:
    """The exponentially scaled modified Bessel function of order one, exp(-abs(x)) I1(x)."""
    return I1e.apply(input)


def _no_grad_result(kernel: Any, input: Tensor) -> Tensor:
    """A result PyTorch defines no derivative for: it does not require grad."""
    return _wrap(_unary(kernel, input))


def _in_dtype(input: Tensor) -> np.ndarray:
    """input's values in its float dtype, flat: where PyTorch's kernel computes in float32,
    its intermediates overflow or underflow at float32's limits, which lucid's float64 kernels
    then follow."""
    return float_array(input).reshape(-1)


def modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order zero (no derivative)."""
    _check_real("modified_bessel_i0_cpu", input)
    with np.errstate(all="ignore"):
        return _wrap(i0(input.detach())._data)


def modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order one (no derivative)."""
    _check_real("modified_bessel_i1_cpu", input)
    return _wrap(i1(input.detach())._data)


# ------------------------------------------------------------- modified Bessel K
def _k_small(order: int, x: np.ndarray) -> np.ndarray:
    """K_order(x) for 0 < x <= 2 from the power series of I and the logarithmic term."""
    half = 0.5 * x
    square = half * half
    log_half = np.log(half)
    harmonic = np.zeros_like(x)
    if order == 0:
        # K0 = -(log(x/2) + gamma) I0 + sum_k H_k (x^2/4)^k / (k!)^2
        term = np.ones_like(x)
        i_total = term.copy()
        series = np.zeros_like(x)
        for k in range(1, 40):
            term = term * square / (k * k)
            harmonic = harmonic + 1.0 / k
            i_total += term
            series += harmonic * term
        return -(log_half + _EULER_GAMMA) * i_total + series
    # K1 = 1/x + log(x/2) I1 - (x/4) sum_k (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!)
    term = half.copy()
    i_total = term.copy()
    psi_sum = 1.0 - 2.0 * _EULER_GAMMA
    series = psi_sum * term
    for k in range(1, 40):
        term = term * square / (k * (k + 1))
        psi_sum += 1.0 / k + 1.0 / (k + 1)
        i_total += term
        series += psi_sum * term
    return 1.0 / x + log_half * i_total - 0.5 * series


_TRAPEZOID_STEP = 0.1
_TRAPEZOID_NODES = np.arange(0, 61) * _TRAPEZOID_STEP


def _k_scaled_large(nu: float, x: np.ndarray) -> np.ndarray:
    """exp(x) K_nu(x) for x >= 2: the trapezoidal rule on int_0^inf exp(-x (cosh t - 1))
    cosh(nu t) dt (which converges geometrically for this analytic integrand) for x <= 25, the
    asymptotic expansion beyond."""
    result = np.empty_like(x)
    near = x <= 25.0
    t = _TRAPEZOID_NODES
    # cosh t - 1 = 2 sinh(t/2)^2 keeps the exponent exact near t = 0
    rise = 2.0 * np.sinh(0.5 * t) ** 2
    weights = np.cosh(nu * t) * _TRAPEZOID_STEP
    weights[0] *= 0.5
    result[near] = np.exp(-np.outer(x[near], rise)) @ weights
    far = x[~near]
    mu = 4.0 * nu * nu
    term = np.ones_like(far)
    total = term.copy()
    for k in range(1, 30):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * far)
        total += term
    result[~near] = np.sqrt(0.5 * math.pi / far) * total
    return result


def _k_kernel(order: int, scaled: bool, x: np.ndarray) -> np.ndarray:
    result = np.full_like(x, np.nan)
    small = (x > 0.0) & (x <= 2.0)
    values = _k_small(order, x[small])
    result[small] = values * np.exp(x[small]) if scaled else values
    large = x > 2.0
    values = _k_scaled_large(float(order), x[large])
    result[large] = values if scaled else values * np.exp(-x[large])
    result[x == 0.0] = np.inf
    return result


def _k(order: int, scaled: bool, input: Tensor) -> Tensor:
    # where x/2 underflows in the input's dtype, PyTorch's log(x/2) is -inf in these kernels
    # (not in its float32 K0's): the scaled K0 is inf there and K1 (inf - inf) nan
    values = _in_dtype(input)
    with np.errstate(all="ignore"):
        underflows = (values > 0) & (values * values.dtype.type(0.5) == 0)
    if order == 0 and not scaled:
        underflows[:] = False

    def kernel(x: np.ndarray) -> np.ndarray:
        result = _k_kernel(order, scaled, x)
        result[underflows] = np.inf if order == 0 else np.nan
        return result

    return _no_grad_result(kernel, input)


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order zero (no derivative)."""
    _check_real("modified_bessel_k0_cpu", input)
    return _k(0, False, input)


def modified_bessel_k1(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order one (no derivative)."""
    _check_real("modified_bessel_k1_cpu", input)
    return _k(1, False, input)


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:
    """exp(x) K0(x) (no derivative)."""
    _check_real("scaled_modified_bessel_k0_cpu", input)
    return _k(0, True, input)


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:
    """exp(x) K1(x) (no derivative)."""
    _check_real("scaled_modified_bessel_k1_cpu", input)
    return _k(1, True, input)


# ------------------------------------------------------------------ Bessel J and Y
def _hankel(order: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic P and Q of J_order and Y_order, for x >= 16 (error near exp(-2x))."""
    mu = 4.0 * order * order
    p = np.ones_like(x)
    q = np.zeros_like(x)
    term = np.ones_like(x)
    inverse = 1.0 / (8.0 * x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) * inverse / k
        if k % 2:
            q += term if k % 4 == 1 else -term
        else:
            p += term if k % 4 == 0 else -term
    return p, q


def _j_series(order: int, x: np.ndarray) -> np.ndarray:
    half = 0.5 * x
    square = half * half
    term = np.ones_like(x) if order == 0 else half.copy()
    total = term.copy()
    for k in range(1, 60):
        term = term * -square / (k * (k + order))
        total += term
    return total


def _bessel_j(order: int, x: np.ndarray) -> np.ndarray:
    magnitude = np.abs(x)
    result = np.empty_like(x)
    near = magnitude < 16.0
    result[near] = _j_series(order, magnitude[near])
    far = magnitude[~near]
    p, q = _hankel(order, far)
    # Cephes subtracts the phase in floating point, as PyTorch's kernel does
    phase = far - (0.25 + 0.5 * order) * math.pi
    result[~near] = np.sqrt(2.0 / (math.pi * far)) * (p * np.cos(phase) - q * np.sin(phase))
    return np.where(x < 0, -result, result) if order == 1 else result


def _bessel_y(order: int, x: np.ndarray) -> np.ndarray:
    result = np.full_like(x, np.nan)
    near = (x > 0.0) & (x < 16.0)
    z = x[near]
    half = 0.5 * z
    square = half * half
    # log x - log 2 rather than log(x / 2), which is -inf for the smallest subnormal
    log_half = np.log(z) - math.log(2.0)
    if order == 0:
        # Y0 = (2/pi) ((log(x/2) + gamma) J0 + sum_k (-1)^(k+1) H_k (x^2/4)^k / (k!)^2)
        term = np.ones_like(z)
        series = np.zeros_like(z)
        harmonic = 0.0
        for k in range(1, 60):
            term = term * -square / (k * k)
            harmonic += 1.0 / k
            series -= harmonic * term
        result[near] = (2.0 / math.pi) * ((log_half + _EULER_GAMMA) * _j_series(0, z) + series)
    else:
        # Y1 = -2/(pi x) + (2/pi) log(x/2) J1
        #      - (1/pi) sum_k (-1)^k (psi(k+1) + psi(k+2)) (x/2)^(2k+1) / (k! (k+1)!)
        term = half.copy()
        psi_sum = 1.0 - 2.0 * _EULER_GAMMA
        series = psi_sum * term
        for k in range(1, 60):
            term = term * -square / (k * (k + 1))
            psi_sum += 1.0 / k + 1.0 / (k + 1)
            series += psi_sum * term
        leading = -2.0 / (math.pi * z)
        result[near] = leading + (2.0 / math.pi) * log_half * _j_series(1, z) - series / math.pi
    far = x >= 16.0
    z = x[far]
    p, q = _hankel(order, z)
    phase = z - (0.25 + 0.5 * order) * math.pi
    result[far] = np.sqrt(2.0 / (math.pi * z)) * (p * np.sin(phase) + q * np.cos(phase))
    result[x == 0.0] = -np.inf
    return result


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order zero (no derivative)."""
    _check_real("bessel_j0_cpu", input)
    return _no_grad_result(lambda x: _bessel_j(0, x), input)


def bessel_j1(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order one (no derivative)."""
    _check_real("bessel_j1_cpu", input)
    return _no_grad_result(lambda x: _bessel_j(1, x), input)


def bessel_y0(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order zero (no derivative)."""
    _check_real("bessel_y0_cpu", input)
    return _no_grad_result(lambda x: _bessel_y(0, x), input)


def bessel_y1(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order one (no derivative)."""
    _check_real("bessel_y1_cpu", input)
    return _no_grad_result(lambda x: _bessel_y(1, x), input)


def _spherical_j0_kernel(x: np.ndarray) -> np.ndarray:
    small = np.abs(x) < 0.5
    s = x * x
    # sin(x)/x = sum_k (-x^2)^k / (2k+1)!, summed where the quotient would lose digits
    term = np.ones_like(x)
    series = term.copy()
    for k in range(1, 12):
        term = term * -s / ((2 * k) * (2 * k + 1))
        series += term
    quotient = np.sin(x) / np.where(small, 1.0, x)
    return np.where(small, series, np.where(np.isinf(x), 0.0, quotient))


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """The spherical Bessel function of the first kind of order zero, sin(x)/x (no
    derivative)."""
    _check_real("spherical_bessel_j0_cpu", input)
    return _no_grad_result(_spherical_j0_kernel, input)


# ------------------------------------------------------------------------------- Airy Ai
_AIRY_C1 = 0.35502805388781723926
_AIRY_C2 = 0.25881940379280679840


def _airy_series(x: np.ndarray) -> np.ndarray:
    """Ai(x) = c1 f(x) - c2 g(x), f and g the Maclaurin series of the Airy equation."""
    cube = x * x * x
    f_term = np.ones_like(x)
    g_term = x.copy()
    f = f_term.copy()
    g = g_term.copy()
    for k in range(1, 80):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f += f_term
        g += g_term
    return _AIRY_C1 * f - _AIRY_C2 * g


def _airy_taylor(anchor: float, value: Any, slope: Any, t: Any, terms: int = 40) -> tuple:
    """Ai and Ai' at anchor + t from Ai and Ai' at anchor: the Taylor series of Ai'' = x Ai,
    whose coefficients follow c_(k+2) = (anchor c_k + c_(k-1)) / ((k+1)(k+2))."""
    coefficients = [value, slope, anchor * value / 2.0]
    for k in range(1, terms):
        coefficients.append((anchor * coefficients[k] + coefficients[k - 1]) / ((k + 1) * (k + 2)))
    total = 0.0 * t + coefficients[-1]
    derivative = 0.0 * t + (len(coefficients) - 1) * coefficients[-1]
    for k in range(len(coefficients) - 2, -1, -1):
        total = total * t + coefficients[k]
        if k:
            derivative = derivative * t + k * coefficients[k]
    return total, derivative


def _airy_anchors() -> dict[int, tuple[float, float]]:
    """Ai and Ai' at -2, -3, ..., -8, stepped from 0 (stable: Ai oscillates there)."""
    anchors = {}
    value, slope = _AIRY_C1, -_AIRY_C2
    for anchor in range(0, -8, -1):
        value, slope = _airy_taylor(float(anchor), value, slope, -1.0)
        anchors[anchor - 1] = (value, slope)
    return anchors


_AIRY_ANCHORS = _airy_anchors()


def _airy_kernel(x: np.ndarray) -> np.ndarray:
    result = np.full_like(x, np.nan)
    middle = (x >= -2.0) & (x <= 2.0)
    result[middle] = _airy_series(x[middle])
    # on [-8, -2) the Maclaurin series cancels, so Taylor series about the nearest integer
    for anchor, (value, slope) in _AIRY_ANCHORS.items():
        near = (x >= -8.0) & (x < -2.0) & (np.abs(x - anchor) <= 0.5)
        result[near] = _airy_taylor(float(anchor), value, slope, x[near] - anchor)[0]
    right = x > 2.0
    z = x[right]
    zeta = 2.0 / 3.0 * z * np.sqrt(z)
    # Ai(x) = sqrt(x / 3) K_{1/3}(zeta) / pi
    scaled = _k_scaled_large(1.0 / 3.0, zeta)
    result[right] = np.sqrt(z / 3.0) / math.pi * scaled * np.exp(-zeta)
    result[x == np.inf] = np.nan
    left = x < -8.0
    z = x[left]
    root = np.sqrt(-z)
    # Cephes' order of operations, so that the phase of huge arguments is PyTorch's
    zeta = -2.0 * z * root / 3.0
    # u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_(k-1): the asymptotic series of Ai(-x)
    p = np.ones_like(zeta)
    q = np.zeros_like(zeta)
    term = np.ones_like(zeta)
    for k in range(1, 30):
        term = term * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216.0 * k * zeta)
        if k % 2:
            q += term if k % 4 == 1 else -term
        else:
            p += term if k % 4 == 0 else -term
    phase = zeta + 0.25 * math.pi
    result[left] = (np.sin(phase) * p - np.cos(phase) * q) / (_SQRT_PI * np.sqrt(root))
    result[x == -np.inf] = np.nan
    return result


def airy_ai(input: Tensor) -> Tensor:
    """The Airy function Ai (no derivative)."""
    _check_real("airy_ai_cpu", input)
    # where PyTorch's zeta = -2 x sqrt(-x) / 3 overflows in the input's dtype, its phase and
    # so Ai are nan
    values = _in_dtype(input)
    with np.errstate(all="ignore"):
        overflows = np.isinf(values * values.dtype.type(-2.0) * np.sqrt(-values)) & (values < 0)

    def kernel(x: np.ndarray) -> np.ndarray:
        result = _airy_kernel(x)
        result[overflows] = np.nan
        return result

    return _no_grad_result(kernel, input)


# --------------------------------------------------------------------------------- zeta
_ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18,
)  # fmt: skip


def _zeta_kernel(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function sum_k (q + k)^-x, Cephes' algorithm as PyTorch runs it
    (including where each element stops), so that its special values agree."""
    result = np.full_like(x, np.nan)
    # Cephes' order: x = 1 is a pole, x < 1 outside the domain, then poles at q = 0, -1, ...
    pole = (x == 1.0) | (~(x < 1.0) & (q <= 0.0) & (q == np.floor(q)))
    domain = ~(x < 1.0) & ~pole & ~((q <= 0.0) & (x != np.floor(x)))
    # the sum runs until q + k > 9, so a (non-integer) q below -2^24 would take millions of
    # steps: its result is left nan, as lucid's polygamma zeta leaves it
    summed = np.flatnonzero(domain & ~(q < -(2.0**24)))
    s_x = x.reshape(-1)[summed]
    s_q = q.reshape(-1)[summed]
    total = np.power(s_q, -s_x)
    a = s_q.copy()
    b = np.zeros_like(s_q)
    done = np.zeros(s_q.shape, bool)
    steps = 0
    looping = ~done
    while np.any(looping):
        steps += 1
        a = np.where(looping, a + 1.0, a)
        b = np.where(looping, np.power(a, -s_x), b)
        total = np.where(looping, total + b, total)
        done = done | (looping & (np.abs(b / total) < _MACHEP))
        looping = ~done & ((steps < 9) | (a <= 9.0))
    w = a
    open_ = ~done
    total = np.where(open_, total + b * w / (s_x - 1.0) - 0.5 * b, total)
    factor = np.ones_like(s_q)
    k = 0.0
    for coefficient in _ZETA_A:
        factor = factor * (s_x + k)
        b = b / w
        t = factor * b / coefficient
        total = np.where(open_, total + t, total)
        open_ = open_ & ~(np.abs(t / total) < _MACHEP)
        k += 1.0
        factor = factor * (s_x + k)
        b = b / w
        k += 1.0
    flat = result.reshape(-1)
    flat[summed] = total
    result = flat.reshape(x.shape)
    result[pole] = np.inf
    return result


def _zeta_array(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _zeta_kernel(np.ascontiguousarray(x), np.ascontiguousarray(q))


class Zeta(Function):
    _backward_name = "SpecialZetaBackward0"
    _complex_refusal = (NotImplementedError, "\"zeta_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, q):
        x_array, q_array, dtype = _binary_arrays(x, q)
        ctx.save_for_backward(x, q)
        ctx.dtype = dtype
        return _wrap(round_to(_zeta_array(x_array, q_array), dtype))

    @staticmethod
    def backward(ctx, grad_output):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        # d/dq zeta(x, q) = -x zeta(x + 1, q)
        return None, _grad_to(grad_output * -x * zeta(x + 1.0, q), q)


def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function sum_k (other + k)^-input."""
    if not isinstance(input, TensorBase):
        input = _as_tensor_beside(input, other)
    if not isinstance(other, TensorBase):
        other = _as_tensor_beside(other, input)
    return Zeta.apply(input, other)


def _as_tensor_beside(value: Any, tensor: Tensor) -> Tensor:
    """A Python number as a 0-d tensor of the other operand's float dtype (a complex number
    in the promoted complex dtype, for the op to refuse)."""
    dtype = tensor._data.dtype
    if isinstance(value, complex):
        dtype = dtypes.result_type(tensor, value).numpy_dtype
    elif dtype.kind not in dtypes.FLOAT_KINDS:
        dtype = dtypes.get_default_dtype().numpy_dtype
    return _wrap(np.asarray(value, dtype))


# -------------------------------------------------------------- orthogonal polynomials
def _polynomial(recurrence: Any, input: Any, n: Any) -> Tensor:
    """A polynomial of degree n (truncated to an integer, as PyTorch does) at input; PyTorch
    defines no derivative."""
    x, degree, dtype = _binary_arrays(input, n)
    with np.errstate(all="ignore"):
        degree = np.where(np.isfinite(degree), degree, -1.0).astype(np.int64)
        result = recurrence(np.ascontiguousarray(x), degree)
    return _wrap(round_to(result, dtype))


def _three_term(x: np.ndarray, n: np.ndarray, first: np.ndarray, step: Any) -> np.ndarray:
    """p_n from p_0 = 1, p_1 = first and p_(k+1) = step(k, p_k, p_(k-1)), per element of n."""
    result = np.where(n == 0, 1.0, first)
    previous = np.ones_like(x)
    current = first
    top = int(n.max(initial=0))
    for k in range(1, top):
        following = step(k, current, previous)
        result = np.where(n == k + 1, following, result)
        previous, current = current, following
    return np.where(n < 0, 0.0, result)


def _chebyshev_t(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    result = _three_term(x, n, x.copy(), lambda k, p, q: (x + x) * p - q)
    trig = (n > 6) & (np.abs(x) < 1.0)
    result = np.where(trig, np.cos(n * np.arccos(x)), result)
    edge = np.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return np.where((np.abs(x) == 1.0) & (n >= 0), edge, result)


def _chebyshev_u(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    result = _three_term(x, n, x + x, lambda k, p, q: (x + x) * p - q)
    theta = np.arccos(x)
    sine = np.sin(theta)
    trig_value = np.where(
        sine != 0.0, np.sin((n + 1) * theta) / np.where(sine != 0.0, sine, 1.0), (n + 1) * x
    )
    result = np.where((n > 8) & (np.abs(x) < 1.0), trig_value, result)
    edge = np.where((x > 0) | (n % 2 == 0), n + 1.0, -(n + 1.0))
    return np.where((np.abs(x) == 1.0) & (n >= 0), edge, result)


def _chebyshev_v(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    result = _three_term(x, n, x + x - 1.0, lambda k, p, q: (x + x) * p - q)
    theta = np.arccos(x)
    half = np.cos(0.5 * theta)
    odd_sign = np.where(n % 2 == 0, n + n + 1.0, -(n + n + 1.0))
    trig_value = np.where(
        np.sin(0.5 * theta) != 1.0,
        np.cos((n + 0.5) * theta) / np.where(half != 0, half, 1.0),
        odd_sign,
    )
    result = np.where((n > 8) & (np.abs(x) < 1.0), trig_value, result)
    edge = np.where(x > 0, 1.0, odd_sign)
    return np.where((np.abs(x) == 1.0) & (n >= 0), edge, result)


def _chebyshev_w(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    result = _three_term(x, n, x + x + 1.0, lambda k, p, q: (x + x) * p - q)
    theta = np.arccos(x)
    half = np.sin(0.5 * theta)
    at_one = np.where(x > 0, n + n + 1.0, np.where(n % 2 == 0, 1.0, -1.0))
    trig_value = np.where(
        np.cos(0.5 * theta) != 1.0,
        np.sin((n + 0.5) * theta) / np.where(half != 0, half, 1.0),
        at_one,
    )
    result = np.where((n > 8) & (np.abs(x) < 1.0), trig_value, result)
    return np.where((np.abs(x) == 1.0) & (n >= 0), at_one, result)


def _hermite_h(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    # H_(k+1) = 2x H_k - 2k H_(k-1)
    return _three_term(x, n, x + x, lambda k, p, q: (x + x) * p - (k + k) * q)


def _hermite_he(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    # He_(k+1) = x He_k - k He_(k-1)
    return _three_term(x, n, x.copy(), lambda k, p, q: x * p - k * q)


def _laguerre_l(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    # (k+1) L_(k+1) = (2k + 1 - x) L_k - k L_(k-1)
    result = _three_term(
        x, n, 1.0 - x, lambda k, p, q: (((k + k) + (1.0 - x)) * p - k * q) / (k + 1)
    )
    return np.where((x == 0.0) & (n >= 0), 1.0, result)


def _legendre_p(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    # (k+1) P_(k+1) = (2k+1) x P_k - k P_(k-1)
    result = _three_term(x, n, x.copy(), lambda k, p, q: ((k + k + 1) * x * p - k * q) / (k + 1))
    edge = np.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return np.where((np.abs(x) == 1.0) & (n >= 0), edge, result)


def chebyshev_polynomial_t(input: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the first kind T_n(input)."""
    _check_real("chebyshev_polynomial_t_cpu", input, n)
    return _polynomial(_chebyshev_t, input, n)


def chebyshev_polynomial_u(input: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the second kind U_n(input)."""
    _check_real("chebyshev_polynomial_u_cpu", input, n)
    return _polynomial(_chebyshev_u, input, n)


def chebyshev_polynomial_v(input: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the third kind V_n(input)."""
    _check_real("chebyshev_polynomial_v_cpu", input, n)
    return _polynomial(_chebyshev_v, input, n)


def chebyshev_polynomial_w(input: Any, n: Any) -> Tensor:
    """The Chebyshev polynomial of the fourth kind W_n(input)."""
    _check_real("chebyshev_polynomial_w_cpu", input, n)
    return _polynomial(_chebyshev_w, input, n)


def shifted_chebyshev_polynomial_t(input: Any, n: Any) -> Tensor:
    """T_n(2 input - 1)."""
    _check_real("shifted_chebyshev_polynomial_t_cpu", input, n)
    return _polynomial(lambda x, k: _chebyshev_t(x + x - 1.0, k), input, n)


def shifted_chebyshev_polynomial_u(input: Any, n: Any) -> Tensor:
    """U_n(2 input - 1)."""
    _check_real("shifted_chebyshev_polynomial_u_cpu", input, n)
    return _polynomial(lambda x, k: _chebyshev_u(x + x - 1.0, k), input, n)


def shifted_chebyshev_polynomial_v(input: Any, n: Any) -> Tensor:
    """V_n(2 input - 1)."""
    _check_real("shifted_chebyshev_polynomial_v_cpu", input, n)
    return _polynomial(lambda x, k: _chebyshev_v(x + x - 1.0, k), input, n)


def shifted_chebyshev_polynomial_w(input: Any, n: Any) -> Tensor:
    """W_n(2 input - 1)."""
    _check_real("shifted_chebyshev_polynomial_w_cpu", input, n)
    return _polynomial(lambda x, k: _chebyshev_w(x + x - 1.0, k), input, n)


def hermite_polynomial_h(input: Any, n: Any) -> Tensor:
    """The physicists' Hermite polynomial H_n(input)."""
    _check_real("hermite_polynomial_h_cpu", input, n)
    return _polynomial(_hermite_h, input, n)


def hermite_polynomial_he(input: Any, n: Any) -> Tensor:
    """The probabilists' Hermite polynomial He_n(input)."""
    _check_real("hermite_polynomial_he_cpu", input, n)
    return _polynomial(_hermite_he, input, n)


def laguerre_polynomial_l(input: Any, n: Any) -> Tensor:
    """The Laguerre polynomial L_n(input)."""
    _check_real("laguerre_polynomial_l_cpu", input, n)
    return _polynomial(_laguerre_l, input, n)


def legendre_polynomial_p(input: Any, n: Any) -> Tensor:
    """The Legendre polynomial P_n(input)."""
    _check_real("legendre_polynomial_p_cpu", input, n)
    return _polynomial(_legendre_p, input, n)
