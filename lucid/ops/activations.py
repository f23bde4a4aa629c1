"""Neural-network ops: the activations (sigmoid, relu, elu, gelu, silu, softplus, mish,
hardtanh, hardsigmoid, hardswish, rrelu, glu, prelu, hardshrink, ...) and softmax and
log_softmax."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import call_position, raise_argument_error
from lucid._core.dtypes import FLOAT_KINDS, INEXACT_KINDS, SCALAR_TYPE_NAMES, complex_use
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.random import _rng
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.factories import _check_dtype, _kernel_scalar
from lucid.ops import _special
from lucid.ops._common import (
    apply_inplace,
    autocast_op,
    backward_on_arrays,
    check_number,
    check_tensors,
    finish_array_backward,
)
from lucid.ops._common import dtype_name as _dtype_name
from lucid.ops._promote import float_array, is_low_precision, round_to, widen
from lucid.ops.broadcast import sum_to
from lucid.ops.fills import to
from lucid.ops.joining import cat
from lucid.ops.pointwise import Where, _select, exp, tanh, where

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "sigmoid", "relu", "relu_", "selu", "selu_", "celu", "celu_", "softmax", "log_softmax",
    "sigmoid_",
]  # fmt: skip

_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_SQRT_2_OVER_PI = 0.7978845608028654
_GELU_KAPPA = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
# PyTorch's hardsigmoid backward scales by 1/6 rounded to float32, for every dtype.
_ONE_SIXTH = float(np.float32(1.0 / 6.0))


def _float_input(x: Tensor, kernel: str) -> np.ndarray:
    """The array of a floating tensor in its working precision (float32 for float16 and
    bfloat16); integer and bool inputs are PyTorch's NotImplementedError."""
    array = x._data
    if array.dtype.kind not in FLOAT_KINDS:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(array.dtype)}'")
    return widen(array)


def _sigmoid_array(x: np.ndarray) -> np.ndarray:
    # exp(-x) may overflow to inf for very negative x; 1 / (1 + inf) is then the exact 0
    result = np.negative(x)
    if not x.ndim:
        result = np.asarray(result)  # a 0-d input gives a NumPy scalar, which out= rejects
    np.exp(result, out=result)
    result += 1.0
    return np.reciprocal(result, out=result)


# ------------------------------------------------------------------- sigmoid
class Sigmoid(Function):
    _backward_name = "SigmoidBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        array = float_array(x)
        result = _wrap(round_to(_sigmoid_array(widen(array)), array.dtype))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        if backward_on_arrays():
            grad = _wrap(_sigmoid_gradient(grad_output._data, result._data))
            finish_array_backward(SigmoidBackward, (grad_output, result), (grad,))
            return grad
        return SigmoidBackward.apply(grad_output, result)

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the forward and array backward above (lucid/_dynamo/flat.py)
        (x,) = args
        if x.dtype.kind != "f":
            return None

        def forward(x):
            return round_to(_sigmoid_array(widen(x)), x.dtype)

        def backward(grad, out, x):
            return (_sigmoid_gradient(grad, out),)

        return forward, backward, SigmoidBackward


def _sigmoid_gradient(grad: np.ndarray, result: np.ndarray) -> np.ndarray:
    """g * y * (1 - y) (y the output), in float32 for float16/bfloat16 and rounded once."""
    y = widen(result)
    return round_to(widen(grad) * (1.0 - y) * y, result.dtype)


class SigmoidBackward(Function):
    """Sigmoid's gradient g * y * (1 - y) as one op (y the output), differentiable again."""

    _backward_name = "SigmoidBackwardBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, grad_output, result):
        ctx.save_for_backward(grad_output, result)
        return _wrap(_sigmoid_gradient(grad_output._data, result._data))

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, result = ctx.saved_tensors
        grad_grad_output = grad_result = None
        if ctx.needs_input_grad[0]:
            grad_grad_output = SigmoidBackward.apply(grad_grad, result)
        if ctx.needs_input_grad[1]:
            # d/dy g y (1 - y) = g (1 - 2y)
            grad_result = grad_grad * grad_output * (1.0 - result * 2.0)
        return grad_grad_output, grad_result


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input)), computed without overflow."""
    return Sigmoid.apply(input)


def sigmoid_(input: Tensor) -> Tensor:
    return apply_inplace(Sigmoid, input)


class LogSigmoid(Function):
    _backward_name = "LogSigmoidBackward0"
    _complex_refusal = (NotImplementedError, "\"log_sigmoid_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        array = _float_input(x, "log_sigmoid_cpu")
        ctx.save_for_backward(x)
        # log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|)): no overflow for any x
        result = np.minimum(array, 0) - np.log1p(np.exp(-np.abs(array)))
        return _wrap(round_to(result, x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log sigmoid(x) = 1 - sigmoid(x) = sigmoid(-x)
        return grad_output * sigmoid(-x)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(input)), stable for large `|input|`."""
    return LogSigmoid.apply(input)


# ---------------------------------------------------------------------- relu
def _relu_array(x: Tensor) -> np.ndarray:
    array = x._data
    if array.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return np.maximum(array, 0)


class Relu(Function):
    _backward_name = "ReluBackward0"
    _complex_refusal = (NotImplementedError, "clamp is not supported for complex types")

    @staticmethod
    def forward(ctx, x):
        result = _wrap(_relu_array(x))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        y, g = result._data, grad_output._data
        if (
            g.dtype is y.dtype
            and g.dtype.kind == "f"
            and g.dtype.itemsize >= 4
            and g.shape == y.shape
            and backward_on_arrays()
        ):
            # what the ops below compute (le, then where's exact bit-mask select), on arrays
            grad = _wrap(_select(y <= 0, 0.0, g))
            finish_array_backward(Where, (grad_output,), (grad,))
            return grad
        # gradient 1 where the output is positive (also where it is nan), else 0
        return where(result <= 0, 0.0, grad_output)

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the forward and array backward above (lucid/_dynamo/flat.py)
        (x,) = args
        if x.dtype.kind != "f" or x.dtype.itemsize < 4:
            return None

        def backward(grad, out, x):
            return (_select(out <= 0, 0.0, grad),)

        return (lambda x: np.maximum(x, 0)), backward, Where


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0)."""
    if inplace:
        return apply_inplace(Relu, input)
    return Relu.apply(input)


def relu_(input: Tensor) -> Tensor:
    return apply_inplace(Relu, input)


class LeakyRelu(Function):
    _backward_name = "LeakyReluBackward0"
    _complex_refusal = (NotImplementedError, "\"leaky_relu_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, negative_slope):
        array = _float_input(x, "leaky_relu_cpu")
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return _wrap(round_to(np.where(array > 0, array, array * negative_slope), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return where(x > 0, grad_output, grad_output * ctx.negative_slope), None


class LeakyReluSavingResult(Function):
    """leaky_relu as leaky_relu_ runs it: PyTorch's in-place form keeps the output, not the
    input, and the output's sign selects the slope (so a negative slope cannot be undone)."""

    _backward_name = "LeakyReluBackward1"
    _complex_refusal = (NotImplementedError, "\"leaky_relu_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, negative_slope):
        array = _float_input(x, "leaky_relu_cpu")
        ctx.negative_slope = negative_slope
        result = np.where(array > 0, array, array * negative_slope)
        result = _wrap(round_to(result, x._data.dtype))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead."
            )
        (result,) = ctx.saved_tensors
        return where(result > 0, grad_output, grad_output * ctx.negative_slope), None


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where positive, else negative_slope * input."""
    check_number(negative_slope, "leaky_relu", "negative_slope", 2)
    if inplace:
        return apply_inplace(LeakyReluSavingResult, input, negative_slope)
    return LeakyRelu.apply(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    check_number(negative_slope, "leaky_relu_", "negative_slope", 2)
    return apply_inplace(LeakyReluSavingResult, input, negative_slope)


# ---------------------------------------------------------------- elu family
def _elu_array(array: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    # expm1 only of the non-positive part: no overflow, and exact near 0
    negative = np.expm1(np.minimum(array, 0) * input_scale) * (alpha * scale)
    return np.where(array <= 0, negative, array * scale)


class Elu(Function):
    """scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)): elu, selu and celu."""

    _backward_name = "EluBackward0"
    _complex_refusal = (NotImplementedError, "\"elu_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        array = _float_input(x, "elu_cpu")
        ctx.save_for_backward(x)
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        return _wrap(round_to(_elu_array(array, alpha, scale, input_scale), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        coefficient = ctx.alpha * ctx.scale * ctx.input_scale
        # exp never sees positive x, so neither it nor its derivative overflows
        negative = where(x > 0, 0.0, x) * ctx.input_scale
        grad_negative = grad_output * coefficient * exp(negative)
        return where(x > 0, grad_output * ctx.scale, grad_negative), None, None, None


class Celu(Elu):
    _backward_name = "CeluBackward0"


class EluSavingResult(Function):
    """elu (selu, celu) as elu_ runs it: PyTorch's in-place form keeps the output, not the
    input, and takes the derivative from it: alpha * exp(x) = output + alpha."""

    _backward_name = "EluBackward1"
    _complex_refusal = (NotImplementedError, "\"elu_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        array = _float_input(x, "elu_cpu")
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        result = _elu_array(array, alpha, scale, input_scale)
        result = _wrap(round_to(result, x._data.dtype))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.alpha < 0:
            raise RuntimeError(
                "In-place elu backward calculation is triggered with a negative slope which is "
                "not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead."
            )
        (result,) = ctx.saved_tensors
        grad_negative = grad_output * ctx.input_scale * (result + ctx.alpha * ctx.scale)
        return where(result <= 0, grad_negative, grad_output * ctx.scale), None, None, None


class CeluSavingResult(EluSavingResult):
    _backward_name = "CeluBackward1"


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input) - 1)."""
    check_number(alpha, "elu", "alpha", 2)
    if inplace:
        return apply_inplace(EluSavingResult, input, alpha, 1.0, 1.0)
    return Elu.apply(input, alpha, 1.0, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    check_number(alpha, "elu_", "alpha", 2)
    return apply_inplace(EluSavingResult, input, alpha, 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(input, alpha) with the self-normalizing constants."""
    if inplace:
        return apply_inplace(EluSavingResult, input, _SELU_ALPHA, _SELU_SCALE, 1.0)
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input: Tensor) -> Tensor:
    return apply_inplace(EluSavingResult, input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def _check_celu_alpha(alpha: float, op: str) -> None:
    check_number(alpha, op, "alpha", 2)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input / alpha) - 1)."""
    _check_celu_alpha(alpha, "celu")
    if inplace:
        return apply_inplace(CeluSavingResult, input, alpha, 1.0, 1.0 / alpha)
    return Celu.apply(input, alpha, 1.0, 1.0 / alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    _check_celu_alpha(alpha, "celu_")
    return apply_inplace(CeluSavingResult, input, alpha, 1.0, 1.0 / alpha)


# ---------------------------------------------------------------------- gelu
def _normal_cdf_array(array: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _special.erf(array * _SQRT1_2))


# Numerical Recipes' erfc (Press et al., section 6.2): erfc(a) = t exp(-a^2 + P(t)) with
# t = 1 / (1 + a/2), relative error below 1.2e-7 for every a >= 0. ln 2 is folded into P's
# constant term, so that the exponential gives erfc(a) / 2 directly.
_HALF_ERFC = (
    -1.26551223 - math.log(2.0),
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)
# Phi(-15) is below the smallest float32 subnormal, and 15^2 stays finite
_CDF_SATURATION = 15.0
# Elements per block of the float32 kernels: their few temporaries stay in the L2 cache, where
# whole-array temporaries of a large activation would stream through memory once per ufunc.
_BLOCK = 32768


def _gelu_single(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x * Phi(x), Phi(x)) for a float32 array, in float32 arithmetic.

    Phi is within 2.5e-7 of the exact CDF; in the lower tail it keeps its relative accuracy,
    within 1e-6 down to x = -3 and 1e-5 down to the float32 underflow, where the rounding of
    x^2 / 2 in its exponent dominates (PyTorch's float32 1 + erf(x) cancels to 0 there).
    """
    flat = x.reshape(-1)
    cdf = np.empty(x.shape, np.float32)
    result = np.empty(x.shape, np.float32)
    cdf_flat, result_flat = cdf.reshape(-1), result.reshape(-1)
    width = min(flat.size, _BLOCK)
    a_space = np.empty(width, np.float32)
    t_space = np.empty(width, np.float32)
    for start in range(0, flat.size, _BLOCK):
        block = flat[start : start + _BLOCK]
        a, t = a_space[: block.size], t_space[: block.size]
        phi = cdf_flat[start : start + block.size]
        # |x|, clamped so that x*x cannot overflow (Phi is 0 or 1 there anyway); erfc's
        # argument is |x| / sqrt(2), and t = 1 / (1 + |x| / (2 sqrt 2))
        np.abs(block, out=a)
        np.minimum(a, _CDF_SATURATION, out=a)
        np.multiply(a, 0.5 * _SQRT1_2, out=t)
        t += 1.0
        np.reciprocal(t, out=t)
        np.multiply(t, _HALF_ERFC[-1], out=phi)
        for coefficient in _HALF_ERFC[-2:0:-1]:
            phi += coefficient
            phi *= t
        phi += _HALF_ERFC[0]
        # erfc's a^2 as x*x / 2: one rounding, where (|x| / sqrt 2)^2 takes three
        a *= a
        a *= 0.5
        phi -= a
        np.exp(phi, out=phi)
        phi *= t
        # phi is erfc(|x|/sqrt 2) / 2: Phi(x) itself for x < 0 (so the lower tail keeps its
        # relative accuracy), 1 - phi beyond; chosen by the sign bit, since np.where
        # mispredicts a branch per element when the signs are mixed
        np.subtract(1.0, phi, out=t)
        negative, upper, chosen = a.view(np.int32), t.view(np.int32), phi.view(np.int32)
        np.right_shift(block.view(np.int32), 31, out=negative)
        chosen ^= upper
        chosen &= negative
        chosen ^= upper
        np.multiply(block, phi, out=result_flat[start : start + block.size])
    return result, cdf


def _normal_pdf(x: Tensor) -> Tensor:
    return exp(x * x * -0.5) * _INV_SQRT_2PI


class Gelu(Function):
    _backward_name = "GeluBackward0"
    _complex_refusal = (NotImplementedError, "\"GeluKernelImpl\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, approximate):
        array = _float_input(x, "GeluKernelImpl")
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (array + _GELU_KAPPA * (array * array * array))
            return _wrap(round_to(0.5 * array * (1.0 + np.tanh(inner)), x._data.dtype))
        # erf is costly per element here: keep the CDF for backward instead of recomputing it,
        # as a saved tensor (so checkpointing drops it too) in float32 unless x is float64:
        # float32 is what a float32 gradient needs.
        if array.dtype == np.float64:
            cdf = _normal_cdf_array(array)
            result = array * cdf
        else:
            result, cdf = _gelu_single(array)
        ctx.save_for_backward(x, _wrap(cdf))
        return _wrap(round_to(result, x._data.dtype))

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # exact float32 GELU's forward, keeping the CDF, and GeluBackward's arrays
        # (lucid/_dynamo/flat.py)
        x, approximate = args
        if approximate != "none" or x.dtype != np.float32:
            return None

        def forward(x, approximate):
            return _gelu_single(x)

        def backward(grad, out, cdf, x, approximate):
            return _gelu_gradient(grad, x, cdf), None

        return forward, backward, GeluBackward, True

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.approximate == "none":
            x, cdf = ctx.saved_tensors
            return GeluBackward.apply(grad_output, x, cdf), None
        (x,) = ctx.saved_tensors
        dtype = x.dtype
        if is_low_precision(x._data.dtype):
            # in float32, as PyTorch's kernel: x^3 of a large float16 input stays finite there
            x, grad_output = to(x, _FLOAT32), to(grad_output, _FLOAT32)
        x_squared = x * x
        inner = (x + x_squared * x * _GELU_KAPPA) * _SQRT_2_OVER_PI
        tanh_inner = tanh(inner)
        # d/dx [x/2 (1 + tanh(u))] = (1 + tanh(u))/2 + x/2 (1 - tanh(u)^2) u'
        left_derivative = (tanh_inner + 1.0) * 0.5
        right_derivative = (x * 0.5) * (1.0 - tanh_inner * tanh_inner)
        right_derivative = right_derivative * (
            (x_squared * (3.0 * _GELU_KAPPA) + 1.0) * _SQRT_2_OVER_PI
        )
        grad_x = grad_output * (left_derivative + right_derivative)
        return (grad_x if grad_x.dtype == dtype else to(grad_x, dtype)), None


class GeluBackward(Function):
    """GELU's gradient g * (Phi(x) + x phi(x)) as one op, given the CDF from forward."""

    _backward_name = "GeluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad_output, x, cdf):
        ctx.save_for_backward(grad_output, x, cdf)
        result = _gelu_gradient(widen(grad_output._data), widen(x._data), cdf._data)
        return _wrap(round_to(result, grad_output._data.dtype))

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, x, cdf = ctx.saved_tensors
        grad_grad_output = grad_x = None
        if ctx.needs_input_grad[0]:
            grad_grad_output = GeluBackward.apply(grad_grad, x, cdf)
        if ctx.needs_input_grad[1]:
            # d/dx (Phi(x) + x phi(x)) = phi(x) (2 - x^2)
            grad_x = grad_grad * grad_output * (_normal_pdf(x) * (2.0 - x * x))
        return grad_grad_output, grad_x, None


def _gelu_gradient(g: np.ndarray, array: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """g * (Phi(x) + x phi(x)) on arrays, block by block, given the forward's CDF."""
    result = np.empty(array.shape, np.result_type(array, g, cdf))
    flat, g_flat, cdf_flat = array.reshape(-1), g.reshape(-1), cdf.reshape(-1)
    result_flat = result.reshape(-1)
    for start in range(0, flat.size, _BLOCK):
        block = slice(start, start + _BLOCK)
        x_block, out = flat[block], result_flat[block]
        # phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
        np.multiply(x_block, x_block, out=out)
        out *= -0.5
        np.exp(out, out=out)
        out *= _INV_SQRT_2PI
        out *= x_block
        out += cdf_flat[block]
        out *= g_flat[block]
    return result


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """input * Phi(input), Phi the standard normal CDF ('tanh': its tanh approximation)."""
    if approximate not in ("none", "tanh"):
        if not isinstance(approximate, str):
            raise TypeError(
                f"gelu(): argument 'approximate' must be str, not {type(approximate).__name__}"
            )
        raise RuntimeError("approximate argument must be either none or tanh.")
    return Gelu.apply(input, approximate)


# ---------------------------------------------------------------------- silu
def _silu_array(x: Tensor) -> np.ndarray:
    array = x._data
    if array.dtype.kind not in INEXACT_KINDS:
        raise NotImplementedError(f"\"silu_cpu\" not implemented for '{_dtype_name(array.dtype)}'")
    array = widen(array)
    # x / (1 + exp(-x)): -0 (not nan) where exp overflows, nan only for x = -inf as in PyTorch
    denominator = np.negative(array)
    if not array.ndim:
        denominator = np.asarray(denominator)  # NumPy scalars cannot be written through out=
    np.exp(denominator, out=denominator)
    denominator += 1.0
    return np.divide(array, denominator, out=denominator)


def _silu_backward(grad_output: Tensor, x: Tensor) -> Tensor:
    s = sigmoid(x)
    # d/dx x sigmoid(x) = sigmoid(x) (1 + x (1 - sigmoid(x)))
    return grad_output * s * (x * (1.0 - s) + 1.0)


class Silu(Function):
    _backward_name = "SiluBackward0"
    # PyTorch runs silu on complex input but records no complex derivative: `silu` refuses
    # to record it, and the in-place form's backward is the real formula, unconjugated
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(round_to(_silu_array(x), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _silu_backward(grad_output, x)


def _records_complex(input: Any) -> bool:
    """Whether a complex input would be recorded for backward."""
    return (
        isinstance(input, TensorBase)
        and input.requires_grad
        and input._data.dtype.kind == "c"
        and is_grad_enabled()
    )


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input) (swish)."""
    if inplace:
        return apply_inplace(Silu, input)
    if complex_use.in_use and _records_complex(input):
        raise RuntimeError(
            "silu does not support automatic differentiation for outputs with complex dtype."
        )
    return Silu.apply(input)


# ------------------------------------------------------------------ softplus
class Softplus(Function):
    _backward_name = "SoftplusBackward0"
    _complex_refusal = (NotImplementedError, "\"softplus_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, beta, threshold):
        array = _float_input(x, "softplus_cpu")
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        scaled = array * beta
        # above the threshold softplus is the identity; exp never sees those values
        smooth = np.log1p(np.exp(np.minimum(scaled, threshold))) / beta
        return _wrap(round_to(np.where(scaled > threshold, array, smooth), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        scaled = x * ctx.beta
        # d/dx log(1 + exp(beta x)) / beta = sigmoid(beta x)
        smooth = grad_output * sigmoid(scaled)
        return where(scaled > ctx.threshold, grad_output, smooth), None, None


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * input)) / beta, the identity where beta * input > threshold."""
    check_number(beta, "softplus", "beta", 2)
    check_number(threshold, "softplus", "threshold", 3)
    return Softplus.apply(input, beta, threshold)


# ---------------------------------------------------------------------- mish
def _mish_array(x: Tensor) -> np.ndarray:
    array = _float_input(x, "mish_cpu")
    # softplus as max(x, 0) + log(1 + exp(-|x|)) cannot overflow
    soft = np.maximum(array, 0) + np.log1p(np.exp(-np.abs(array)))
    return array * np.tanh(soft)


def _mish_backward(grad_output: Tensor, x: Tensor) -> Tensor:
    tanh_softplus = tanh(softplus(x))
    # d/dx x tanh(softplus(x)) = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)
    slope = x * sigmoid(x) * (1.0 - tanh_softplus * tanh_softplus)
    return grad_output * (tanh_softplus + slope)


class Mish(Function):
    _backward_name = "MishBackward0"
    _complex_refusal = (NotImplementedError, "\"mish_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(round_to(_mish_array(x), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _mish_backward(grad_output, x)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * tanh(softplus(input))."""
    if inplace:
        return apply_inplace(Mish, input)
    return Mish.apply(input)


# ------------------------------------------------------------------ hardtanh
def _hardtanh_array(x: Tensor, min_val: float, max_val: float) -> np.ndarray:
    array = x._data
    if array.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if array.dtype.kind not in FLOAT_KINDS:
        # integer inputs keep their dtype: the bounds are truncated to integers
        return np.minimum(np.maximum(array, int(min_val)), int(max_val)).astype(array.dtype)
    return round_to(np.minimum(np.maximum(widen(array), min_val), max_val), array.dtype)


def _hardtanh_backward(grad_output: Tensor, x: Tensor, min_val: float, max_val: float) -> Tensor:
    # the gradient passes strictly inside the bounds only (not at them, nor for nan)
    return where(x > min_val, where(x < max_val, grad_output, 0.0), 0.0)


class Hardtanh(Function):
    _backward_name = "HardtanhBackward0"
    _complex_refusal = (NotImplementedError, "clamp is not supported for complex types")

    @staticmethod
    def forward(ctx, x, min_val, max_val):
        ctx.save_for_backward(x)
        ctx.min_val, ctx.max_val = min_val, max_val
        return _wrap(_hardtanh_array(x, min_val, max_val))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _hardtanh_backward(grad_output, x, ctx.min_val, ctx.max_val), None, None


def _check_hardtanh_bounds(min_val: float, max_val: float) -> None:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """input clamped to [min_val, max_val]."""
    _check_hardtanh_bounds(min_val, max_val)
    if inplace:
        return apply_inplace(Hardtanh, input, min_val, max_val)
    return Hardtanh.apply(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    _check_hardtanh_bounds(min_val, max_val)
    return apply_inplace(Hardtanh, input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# --------------------------------------------------------- hardsigmoid/swish
def _hardsigmoid_array(x: Tensor) -> np.ndarray:
    array = _float_input(x, "hardsigmoid_cpu")
    return np.minimum(np.maximum(array + 3.0, 0.0), 6.0) / 6.0


def _hardsigmoid_backward(grad_output: Tensor, x: Tensor) -> Tensor:
    # slope 1/6 strictly inside (-3, 3), else 0
    inside = where(x < 3.0, grad_output * _ONE_SIXTH, 0.0)
    return where(x > -3.0, inside, 0.0)


class Hardsigmoid(Function):
    _backward_name = "HardsigmoidBackward0"
    _complex_refusal = (NotImplementedError, "\"hardsigmoid_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(round_to(_hardsigmoid_array(x), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _hardsigmoid_backward(grad_output, x)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(input + 3) / 6."""
    if inplace:
        return apply_inplace(Hardsigmoid, input)
    return Hardsigmoid.apply(input)


def _hardswish_array(x: Tensor) -> np.ndarray:
    array = _float_input(x, "hardswish_cpu")
    return array * np.minimum(np.maximum(array + 3.0, 0.0), 6.0) / 6.0


def _hardswish_backward(grad_output: Tensor, x: Tensor) -> Tensor:
    # 0 up to -3, x/3 + 1/2 between, 1 from 3 on
    upper = where(x >= 3.0, grad_output, grad_output * (x / 3.0 + 0.5))
    return where(x <= -3.0, 0.0, upper)


class Hardswish(Function):
    _backward_name = "HardswishBackward0"
    _complex_refusal = (NotImplementedError, "\"hardswish_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(round_to(_hardswish_array(x), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _hardswish_backward(grad_output, x)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * relu6(input + 3) / 6."""
    if inplace:
        return apply_inplace(Hardswish, input)
    return Hardswish.apply(input)


# ------------------------------------------------------------------- softmax
def _float_array(x: Tensor, dim: int, kernel: str) -> np.ndarray:
    """x's array in float32 at least, with at least one dim; PyTorch's error for others."""
    array = x._data
    if array.dtype.kind not in FLOAT_KINDS:
        variant = "_lastdim" if dim >= array.ndim - 1 else ""
        name = f"{kernel}{variant}_kernel_impl"
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype_name(array.dtype)}'")
    array = widen(array)
    if array.ndim == 0:
        array = array.reshape(1)
    return array


def _shifted(x: Tensor, dim: int, kernel: str) -> np.ndarray:
    """x minus its maximum along dim, so exp cannot overflow; computed in float32 at least."""
    array = _float_array(x, dim, kernel)
    return array - np.max(array, axis=dim, keepdims=True)


def _row_max(rows: np.ndarray) -> np.ndarray:
    """The maximum of each row of a 2-d array, as a column; a row's first nan is its maximum,
    as with np.max. The value at argmax costs half of np.max over short rows."""
    count, width = rows.shape
    flat_indices = rows.argmax(axis=1)
    flat_indices += np.arange(0, count * width, width)
    return np.take(rows.reshape(-1), flat_indices).reshape(-1, 1)


def _row_sums(rows: np.ndarray) -> np.ndarray:
    """The sum of each row of a 2-d array, as a column: one GEMV, several times faster than
    NumPy's pairwise reduction over short rows."""
    return np.matmul(rows, np.ones(rows.shape[1], rows.dtype)).reshape(-1, 1)


def _softmax_last_dim(array: np.ndarray) -> np.ndarray:
    """Softmax over the last dim of a float32/float64 array with at least one dim."""
    result = np.exp(array) if array.max() <= _UNSHIFTED_LIMIT else None
    if result is None:
        # a large, infinite or nan input: every row shifted by its own maximum
        return _softmax_rows(array.reshape(-1, array.shape[-1])).reshape(array.shape)
    # Below the limit exp(x) and a row's sum are finite, and where the sum is at least 1 (the
    # log-sum-exp is not negative) each exp(x) keeps as many bits as exp(x - max) and its
    # quotient, so those rows need no max. The others (all -inf among them) are redone.
    rows = result.reshape(-1, array.shape[-1])
    sums = _row_sums(rows)
    redo = np.flatnonzero(sums < 1.0)
    if redo.size:
        sums[redo] = 1.0
    rows *= np.reciprocal(sums, out=sums)
    if redo.size:
        rows[redo] = _softmax_rows(array.reshape(rows.shape)[redo])
    return result


def _softmax_rows(rows: np.ndarray) -> np.ndarray:
    # a row of only -inf gives -inf - -inf = nan, as in PyTorch
    result = rows - _row_max(rows)
    np.exp(result, out=result)
    result *= np.reciprocal(_row_sums(result))
    return result


# exp(64) times any row length that fits in memory is far from float32's overflow
_UNSHIFTED_LIMIT = 64.0


class Softmax(Function):
    _backward_name = "SoftmaxBackward0"
    # forward refuses complex input with PyTorch's message, which names the kernel by dim
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        if x._data.size == 0:
            result = _wrap(x._data.copy())
        elif dim == x._data.ndim - 1:
            array = _float_array(x, dim, "softmax")
            result = _wrap(_softmax_last_dim(array).astype(x._data.dtype, copy=False))
        else:
            # a row of only -inf gives -inf - -inf = nan, as in PyTorch
            e = np.exp(_shifted(x, dim, "softmax"))
            e /= np.sum(e, axis=dim, keepdims=True)
            result = _wrap(e.reshape(x._data.shape).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return SoftmaxBackward.apply(grad_output, result, ctx.dim), None


class SoftmaxBackward(Function):
    """Softmax's gradient y * (g - sum(g * y)) as one op (y the output)."""

    _backward_name = "SoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, grad_output, result, dim):
        ctx.save_for_backward(grad_output, result)
        ctx.dim = dim
        dtype = grad_output._data.dtype
        g, y = widen(grad_output._data), widen(result._data)
        if y.ndim == 0:
            return _wrap(round_to(g * 0.0, dtype))
        if dim < y.ndim - 1 or not y.size:
            weighted = np.sum(g * y, axis=dim, keepdims=True)
            return _wrap(round_to(y * (g - weighted), dtype))
        width = y.shape[-1]
        g_rows, y_rows = g.reshape(-1, 1, width), y.reshape(-1, width, 1)
        # the row sums of g * y as a stack of dot products, with no product array
        weighted = np.matmul(g_rows, y_rows).reshape(y.shape[:-1] + (1,))
        output = g - weighted
        output *= y
        return _wrap(round_to(output, dtype))

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, result = ctx.saved_tensors
        grad_grad_output = grad_result = None
        if ctx.needs_input_grad[0]:
            # the map g -> y * (g - sum(g y)) is symmetric, so it is its own transpose
            grad_grad_output = SoftmaxBackward.apply(grad_grad, result, ctx.dim)
        if ctx.needs_input_grad[1]:
            # d/dy_k: gg_k (g_k - sum(g y)) - g_k sum(gg y)
            weighted = _sum_keepdim(grad_output * result, ctx.dim)
            grad_result = grad_grad * (grad_output - weighted)
            grad_result = grad_result - grad_output * _sum_keepdim(grad_grad * result, ctx.dim)
        return grad_grad_output, grad_result, None


def _sum_keepdim(x: Tensor, dim: int) -> Tensor:
    if x._data.ndim == 0:
        return x
    return x.sum(dim, keepdim=True)


class LogSoftmax(Function):
    _backward_name = "LogSoftmaxBackward0"
    # forward refuses complex input with PyTorch's message, which names the kernel by dim
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        if x._data.size == 0:
            result = _wrap(x._data.copy())
        else:
            dtype = x._data.dtype
            if dim == x._data.ndim - 1:
                shifted, total = _shifted_rows(_float_array(x, dim, "log_softmax"))
            else:
                shifted = _shifted(x, dim, "log_softmax")
                total = np.sum(np.exp(shifted), axis=dim, keepdims=True)
            if is_low_precision(dtype) and dim == x._data.ndim - 1:
                # PyTorch's last-dim kernel for float16 and bfloat16 keeps the sum and its log
                # in the input's dtype; rounding them here gives its results
                log_total = round_to(np.log(round_to(total, dtype)), dtype).astype(np.float32)
            else:
                log_total = np.log(total)
            shifted -= log_total
            result = _wrap(shifted.reshape(x._data.shape).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return LogSoftmaxBackward.apply(grad_output, result, ctx.dim), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # forward's last-dim path and LogSoftmaxBackward's (lucid/_dynamo/flat.py)
        x, dim = args
        if x.dtype.kind != "f" or x.dtype.itemsize < 4 or not x.size or dim != x.ndim - 1:
            return None

        def forward(x, dim):
            shifted, total = _shifted_rows(x)
            shifted -= np.log(total)
            return shifted.reshape(x.shape)

        def backward(grad, out, x, dim):
            return _log_softmax_gradient_rows(grad, out), None

        return forward, backward, LogSoftmaxBackward


def _shifted_rows(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows (over the last dim) of an array of at least one dim, each less its maximum,
    and the sums of their exponentials (as a column)."""
    rows = array.reshape(-1, array.shape[-1])
    shifted = rows - _row_max(rows)
    return shifted, _row_sums(np.exp(shifted))


def _log_softmax_gradient_rows(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """g - exp(y) * sum(g) over the last dim of y, a non-empty array of at least one dim."""
    width = y.shape[-1]
    output = np.exp(y)
    rows = output.reshape(-1, width)
    rows *= _row_sums(g.reshape(-1, width))
    np.subtract(g.reshape(-1, width), rows, out=rows)
    return output


class LogSoftmaxBackward(Function):
    """LogSoftmax's gradient g - exp(y) * sum(g) as one op (y the output)."""

    _backward_name = "LogSoftmaxBackwardDataBackward0"

    @staticmethod
    def forward(ctx, grad_output, result, dim):
        ctx.save_for_backward(grad_output, result)
        ctx.dim = dim
        dtype = grad_output._data.dtype
        g, y = widen(grad_output._data), widen(result._data)
        if y.ndim == 0:
            return _wrap(round_to(g - np.exp(y) * g, dtype))
        if dim < y.ndim - 1 or not y.size:
            return _wrap(round_to(g - np.exp(y) * np.sum(g, axis=dim, keepdims=True), dtype))
        return _wrap(round_to(_log_softmax_gradient_rows(g, y), dtype))

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, result = ctx.saved_tensors
        grad_grad_output = grad_result = None
        softmax_result = exp(result)
        if ctx.needs_input_grad[0]:
            # d/dg_k: gg_k - sum(gg exp(y))
            grad_grad_output = grad_grad - _sum_keepdim(grad_grad * softmax_result, ctx.dim)
        if ctx.needs_input_grad[1]:
            # d/dy_k: -gg_k exp(y_k) sum(g)
            grad_result = -(grad_grad * softmax_result) * _sum_keepdim(grad_output, ctx.dim)
        return grad_grad_output, grad_result, None


def _softmax_dim(input: Tensor, dim: int | None, name: str) -> int:
    try:
        if dim is None:
            warnings.warn(
                f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                "include dim=X as an argument.",
                UserWarning,
                stacklevel=3,
            )
            dim = 0 if input._data.ndim in (0, 1, 3) else 1
    except AttributeError as error:
        raise_argument_error(error)
        raise
    return _normalize_dim(dim, input._data.ndim)


def _softmax_input(input: Tensor, dtype: Any, op: str) -> Tensor:
    if dtype is None:
        return input
    _check_dtype(op, dtype, call_position(op, 3))
    return to(input, dtype)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """exp(input) / sum(exp(input)) along dim, stable for large logits.

    `dtype` casts the input first (the cast is part of the graph).
    """
    check_tensors(input)
    dim = _softmax_dim(input, dim, "softmax")
    return Softmax.apply(_softmax_input(input, dtype, "softmax"), dim)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """input - logsumexp(input) along dim, stable for large logits."""
    check_tensors(input)
    dim = _softmax_dim(input, dim, "log_softmax")
    return LogSoftmax.apply(_softmax_input(input, dtype, "log_softmax"), dim)


# ----------------------------------------------------------------- glu, prelu
class Glu(Function):
    """a * sigmoid(b), a and b the halves of input along dim (F.glu checks its arguments)."""

    _backward_name = "GluBackward0"
    _complex_refusal = (NotImplementedError, "\"glu_cpu\" not implemented for '{dtype}'")
    _op_name = "glu"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        ctx.save_for_backward(x)
        a, b = np.split(widen(x._data), 2, axis=dim)
        return _wrap(round_to(a * _sigmoid_array(b), x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        a, b = x.chunk(2, ctx.dim)
        gate = sigmoid(b)
        # d/da = sigmoid(b); d/db = a * sigmoid(b) * (1 - sigmoid(b))
        grad_a = grad_output * gate
        grad_b = grad_a * a * (1 - gate)
        return cat([grad_a, grad_b], ctx.dim), None


class PreluKernel(Function):
    """input where positive, else weight * input; weight is one value or one per channel
    (dim 1). F.prelu checks its arguments."""

    _backward_name = "PreluKernelBackward0"
    _complex_refusal = (NotImplementedError, "\"prelu_cpu\" not implemented for '{dtype}'")
    _op_name = "prelu"

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        array = x._data
        w = weight._data.reshape(_prelu_weight_shape(weight, x))
        return _wrap(np.where(array > 0, array, w * array))

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        shape = _prelu_weight_shape(weight, x)
        positive = x > 0
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = where(positive, grad_output, grad_output * weight.reshape(shape))
        if ctx.needs_input_grad[1]:
            # d/dw = input where input <= 0
            slopes = where(positive, 0.0, grad_output * x)
            grad_weight = sum_to(slopes, shape).reshape(weight.shape)
        return grad_x, grad_weight


def _prelu_weight_shape(weight: Tensor, x: Tensor) -> tuple[int, ...]:
    """The shape that broadcasts weight against x: one value, or one per channel (dim 1)."""
    if weight.numel() == 1 or x.ndim < 2:
        return ()
    return (weight.numel(), *([1] * (x.ndim - 2)))


# --------------------------------------------------------------------- rrelu
class RreluWithNoise(Function):
    """leaky_relu with a random negative slope per element in training, uniform in
    [lower, upper], and the mean slope (lower + upper) / 2 in evaluation."""

    _backward_name = "RreluWithNoiseBackward0"
    # forward refuses complex input with PyTorch's message, which depends on `training`
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, lower, upper, training):
        # in evaluation PyTorch runs leaky_relu, and its kernel's error
        array = _float_input(x, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
        if training:
            slope = _rng(None).uniform(lower, upper, array.shape).astype(array.dtype)
        else:
            slope = np.asarray((lower + upper) / 2, array.dtype)
        # the noise is the derivative: 1 where the input is positive, its slope elsewhere
        noise = np.where(array > 0, np.ones((), array.dtype), slope)
        ctx.save_for_backward(_wrap(round_to(noise, x._data.dtype)))
        return _wrap(round_to(array * noise, x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        (noise,) = ctx.saved_tensors
        return grad_output * noise, None, None, None


class RreluWithNoiseSavingResult(RreluWithNoise):
    """rrelu as rrelu_ runs it, under PyTorch's in-place grad_fn name."""

    _backward_name = "RreluWithNoiseBackward1"


def _check_rrelu_arguments(lower: float, upper: float, op: str) -> None:
    for position, (name, value) in enumerate((("lower", lower), ("upper", upper)), 2):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Number, "
                            f"not {type(value).__name__}")  # fmt: skip
    for name, value in (("lower", lower), ("upper", upper)):
        if not math.isfinite(value):
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {float(value):g}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """input where positive, else input times a slope drawn from U(lower, upper) (training) or
    (lower + upper) / 2 (evaluation)."""
    _check_rrelu_arguments(lower, upper, "rrelu")
    if inplace:
        return apply_inplace(RreluWithNoiseSavingResult, input, lower, upper, training)
    return RreluWithNoise.apply(input, lower, upper, training)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    _check_rrelu_arguments(lower, upper, "rrelu_")
    return apply_inplace(RreluWithNoiseSavingResult, input, lower, upper, training)


# ---------------------------------------------------- hardshrink, prelu (also Tensor methods)
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """`input` where `|input| > lambd`, else 0."""
    check_tensors(input)
    check_number(lambd, "hardshrink", "lambd", 2)
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise NotImplementedError(
            f"\"hardshrink_cpu\" not implemented for '{_dtype_name(input._data.dtype)}'"
        )
    return where((input >= -lambd) & (input <= lambd), 0.0, input)


@autocast_op
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, input) + weight * min(0, input), weight per channel (dim 1) or shared."""
    check_tensors(input, weight)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")  # fmt: skip
    if input.dtype != weight.dtype:
        raise RuntimeError(
            "prelu: Type promoting not supported. Got "
            f"{SCALAR_TYPE_NAMES[input.dtype.name]} and {SCALAR_TYPE_NAMES[weight.dtype.name]}"
        )
    count = weight.numel()
    if count != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if input.ndim == 0 or count != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {count} and channel size = {channels}."
            )
    return PreluKernel.apply(input, weight)


# ------------------------------------------------------------------------- threshold
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """input where input > threshold, else value."""
    return _threshold(input, threshold, value, inplace, "threshold")


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place threshold."""
    return _threshold(input, threshold, value, True, "threshold_")


def _threshold(input: Tensor, bound: float, value: float, inplace: bool, op: str) -> Tensor:
    if not isinstance(input, TensorBase):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")  # fmt: skip
    for name, number, position in (("threshold", bound, 2), ("value", value, 3)):
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Number, "
                            f"not {type(number).__name__}")  # fmt: skip
    dtype = input._data.dtype
    if dtype.kind in "bc":
        raise NotImplementedError(f"\"threshold_cpu\" not implemented for '{_dtype_name(dtype)}'")
    # the value as the kernel's scalar of the input's dtype (truncated for an integer dtype,
    # where the threshold is converted too), with PyTorch's overflow error
    value = _kernel_scalar(value, dtype).item()
    if dtype.kind in "iu":
        bound = _kernel_scalar(bound, dtype).item()
    result = where(input <= bound, value, input)
    if inplace:
        return input.copy_(result)
    return result
