"""Pointwise ops: math functions, rounding, clamp, where, predicates, comparisons and isin,
logical and bitwise ops and shifts, special functions; each in-place form (exp_, sqrt_,
clamp_, eq_, bitwise_and_, ...) sits below its op."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import argument_error, raise_argument_error
from lucid._core.dtypes import C_TYPE_NAMES, FLOAT_KINDS, INEXACT_KINDS, numpy_finfo
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops import _gamma, _special
from lucid.ops._common import (
    apply_inplace,
    backward_on_arrays,
    cast_error,
    check_complex_into_real,
    check_int,
    check_real_number,
    check_tensors,
    finish_array_backward,
    inplace_operand,
    invalid_combination,
    write_inplace,
    zeros_like_grad,
)
from lucid.ops._common import dtype_name as _dtype_name
from lucid.ops._common import not_implemented as _not_implemented
from lucid.ops._promote import (
    binary_arrays,
    float_array,
    low_precision_of,
    round_to,
    scalar_value,
    widen,
)
from lucid.ops.arithmetic import Mul, Pow, PowTensor, _broadcast_ufunc, _grad_to, _reduce_and_cast
from lucid.ops.arithmetic import pow as _pow
from lucid.ops.arithmetic import pow_ as _pow_
from lucid.ops.broadcast import broadcast_error, common_shape, sum_to
from lucid.ops.fills import to

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "exp", "expm1", "log", "logit", "log1p", "log2", "log10", "sqrt", "rsqrt", "abs", "absolute",
    "sign", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "arcsin", "acos", "arccos", "atan",
    "arctan", "atan2", "arctan2", "floor", "ceil", "round", "trunc", "fix", "erf", "erfc", "lerp",
    "nan_to_num", "square", "float_power", "clamp", "clip", "where", "isnan", "isinf", "isfinite",
    "isposinf", "isneginf", "signbit", "eq", "ne", "lt", "le", "gt", "ge", "greater",
    "greater_equal", "less", "less_equal", "not_equal", "equal", "allclose", "isclose",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "exp_", "sqrt_",
    "abs_", "clamp_", "clip_", "logit_", "sgn", "frac", "deg2rad", "rad2deg", "sinc", "logaddexp",
    "logaddexp2", "hypot", "copysign", "xlogy", "heaviside", "nextafter", "clamp_min", "clamp_max",
    "clamp_min_", "clamp_max_", "frac_", "deg2rad_", "rad2deg_", "sinc_", "xlogy_", "lgamma",
    "digamma", "polygamma", "mvlgamma", "erfinv", "i0", "i0_", "nan_to_num_", "igamma", "igamma_",
    "igammac", "igammac_", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "exp2",
    "expm1_", "exp2_", "log_", "log1p_", "log2_", "log10_", "rsqrt_", "square_", "sin_", "cos_",
    "tan_", "sinh_", "cosh_", "tanh_", "asin_", "acos_", "atan_", "asinh_", "acosh_", "atanh_",
    "arcsin_", "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_", "erf_", "erfc_", "floor_",
    "ceil_", "trunc_", "fix_", "round_", "is_distributed", "angle", "isin",
]  # fmt: skip

_INTEGRAL_KINDS = "iub"


def _cpp_name(numpy_dtype: np.dtype) -> str:
    return C_TYPE_NAMES[numpy_dtype.name]


# ------------------------------------------------------------------ exp / log
class Exp(Function):
    _backward_name = "ExpBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.exp(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        g, y = grad_output._data, result._data
        if (
            g.dtype is y.dtype
            and g.shape == y.shape
            and g.dtype.itemsize != 2
            and backward_on_arrays()
        ):
            # the product `grad_output * result` computes (Mul's forward), on arrays
            grad = _wrap(np.multiply(g, y))
            finish_array_backward(Mul, (grad_output, result), (grad,))
            return grad
        # d/dx exp(x) = exp(x)
        return grad_output * result

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the forward and array backward above (lucid/_dynamo/flat.py)
        (x,) = args
        if x.dtype.kind != "f" or x.dtype.itemsize == 2:
            return None
        return np.exp, (lambda grad, out, x: (np.multiply(grad, out),)), Mul


def exp(input: Tensor) -> Tensor:
    return Exp.apply(input)


def exp_(input: Tensor) -> Tensor:
    return apply_inplace(Exp, input)


class Expm1(Function):
    _backward_name = "Expm1Backward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.expm1(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx (exp(x) - 1) = exp(x) = result + 1
        return grad_output * (result + 1.0)


def expm1(input: Tensor) -> Tensor:
    return Expm1.apply(input)


def expm1_(input: Tensor) -> Tensor:
    return apply_inplace(Expm1, input)


class Log(Function):
    _backward_name = "LogBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.log(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log(x) = 1/x
        return grad_output / x


def log(input: Tensor) -> Tensor:
    return Log.apply(input)


def log_(input: Tensor) -> Tensor:
    return apply_inplace(Log, input)


class Logit(Function):
    """log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps is given."""

    _backward_name = "LogitBackward0"
    _complex_refusal = (NotImplementedError, "\"logit_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, eps):
        ctx.save_for_backward(x)
        ctx.eps = eps
        array = float_array(x)
        low = low_precision_of(array.dtype)
        array = widen(array)  # float16/bfloat16 in float32, rounded once
        if eps is not None and eps >= 0:
            array = np.clip(array, eps, 1.0 - eps)
        return _wrap(round_to(np.log(array / (1.0 - array)), low))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        # d/dx logit(x) = 1 / (x (1 - x)): an infinity of grad_output's sign at 0 and 1 (also
        # at -0.0), nan outside [0, 1] without eps, and 0 where the clamp to [eps, 1 - eps]
        # held x; PyTorch sets each of these cases explicitly, the formula alone gives none
        # (+0.0 as the denominator there: -0.0 would flip the sign, grad * inf would put
        # 0 * inf = nan into the double backward)
        at_pole = logical_or(eq(x, 0.0), eq(x, 1.0))
        grad = grad_output / where(at_pole, 0.0, x * (1.0 - x))
        if eps is None or eps < 0:
            return where(logical_or(lt(x, 0.0), gt(x, 1.0)), math.nan, grad), None
        return where(logical_or(lt(x, eps), gt(x, 1.0 - eps)), 0.0, grad), None


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """The inverse of sigmoid, log(input / (1 - input)); `eps` clamps input to [eps, 1 - eps]."""
    return Logit.apply(input, eps)


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    return apply_inplace(Logit, input, eps)


class Log1p(Function):
    _backward_name = "Log1PBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.log1p(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log(1 + x) = 1/(1 + x)
        return grad_output / (x + 1.0)


def log1p(input: Tensor) -> Tensor:
    return Log1p.apply(input)


def log1p_(input: Tensor) -> Tensor:
    return apply_inplace(Log1p, input)


class Log2(Function):
    _backward_name = "Log2Backward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.log2(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log2(x) = 1/(x ln 2)
        return grad_output / (x * math.log(2.0))


def log2(input: Tensor) -> Tensor:
    return Log2.apply(input)


def log2_(input: Tensor) -> Tensor:
    return apply_inplace(Log2, input)


class Log10(Function):
    _backward_name = "Log10Backward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.log10(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log10(x) = 1/(x ln 10)
        return grad_output / (x * math.log(10.0))


def log10(input: Tensor) -> Tensor:
    return Log10.apply(input)


def log10_(input: Tensor) -> Tensor:
    return apply_inplace(Log10, input)


# ----------------------------------------------------------------- roots, abs
class Sqrt(Function):
    _backward_name = "SqrtBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, out=None):
        if out is not None and out.dtype.kind in FLOAT_KINDS and out.flags.writeable:
            np.sqrt(out, out=out)
            result = x  # sqrt_ wrote into x's own array: x holds the result to save
        else:
            result = _wrap(np.sqrt(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx sqrt(x) = 1/(2 sqrt(x))
        return grad_output / (result * 2.0)


def sqrt(input: Tensor) -> Tensor:
    return Sqrt.apply(input)


def sqrt_(input: Tensor) -> Tensor:
    return apply_inplace(Sqrt, input)


class Rsqrt(Function):
    _backward_name = "RsqrtBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        array = float_array(x)
        result = _wrap(np.reciprocal(np.sqrt(array)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 result^3
        return grad_output * (result * result * result) * -0.5


def rsqrt(input: Tensor) -> Tensor:
    return Rsqrt.apply(input)


def rsqrt_(input: Tensor) -> Tensor:
    return apply_inplace(Rsqrt, input)


class Abs(Function):
    _backward_name = "AbsBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        if x._data.dtype == np.bool_:
            raise _not_implemented("abs_cpu", x._data.dtype)
        ctx.save_for_backward(x)
        return _wrap(np.abs(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        if x._data.dtype.kind == "c":
            # the gradient of |z| is g z/|z| = g sgn(z), 0 at 0
            return grad_output * sgn(x)
        # d/dx |x| = sign(x), taken as 0 at 0 (and at nan, as PyTorch's sign gives 0 there)
        return grad_output * sign(x)


def abs(input: Tensor) -> Tensor:
    return Abs.apply(input)


def abs_(input: Tensor) -> Tensor:
    if isinstance(input, TensorBase) and input._data.dtype.kind == "c":
        # |z| is real: it has no complex tensor to be written into
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return apply_inplace(Abs, input)


absolute = abs


def _sign_array(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.bool_:
        return array.copy()
    if array.dtype.kind in FLOAT_KINDS:
        # (x > 0) - (x < 0) is 0 at nan, as PyTorch's sign is (np.sign gives nan)
        return np.subtract(np.greater(array, 0), np.less(array, 0), dtype=array.dtype)
    return np.sign(array)


class Sign(Function):
    _backward_name = "SignBackward0"
    _complex_refusal = (
        NotImplementedError,
        "Unlike NumPy, lucid.sign is not intended to support complex numbers. Please use "
        "lucid.sgn instead.",
    )

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x._data.shape
        return _wrap(_sign_array(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        # sign is piecewise constant
        return zeros_like_grad(grad_output, ctx.shape)


def sign(input: Tensor) -> Tensor:
    return Sign.apply(input)


def sign_(input: Tensor) -> Tensor:
    return apply_inplace(Sign, input)


def square(input: Tensor) -> Tensor:
    """input * input, as pow(input, 2) (bool squares to int64, as in PyTorch)."""
    try:
        if input._data.dtype == np.bool_:
            input = to(input, dtypes.int64)
    except AttributeError as error:
        raise_argument_error(error)
        raise
    return _pow(input, 2)


def square_(input: Tensor) -> Tensor:
    """input * input in place, as pow_(input, 2)."""
    return _pow_(input, 2)


def _is_complex_operand(value: Any) -> bool:
    if isinstance(value, TensorBase):
        return value._data.dtype.kind == "c"
    return isinstance(value, complex)


def float_power(input: Any, exponent: Any) -> Tensor:
    """pow computed in float64 (complex128 if either operand is complex) whatever the operands'
    dtypes."""
    if not isinstance(input, TensorBase) and not isinstance(exponent, TensorBase):
        raise TypeError(
            f"float_power() expected at least one Tensor operand, got {type(input).__name__} "
            f"and {type(exponent).__name__}"
        )
    is_complex = _is_complex_operand(input) or _is_complex_operand(exponent)
    target = dtypes.complex128 if is_complex else dtypes.float64
    scalar_type = complex if is_complex else float
    if isinstance(input, TensorBase):
        input = to(input, target)
    else:
        input = scalar_type(scalar_value(input))
    if isinstance(exponent, TensorBase):
        exponent = to(exponent, target)
    else:
        exponent = scalar_type(scalar_value(exponent))
    return _pow(input, exponent)


def float_power_(input: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: only a float64 (complex128) tensor can hold its result."""
    is_complex = _is_complex_operand(input) or _is_complex_operand(exponent)
    target = np.complex128 if is_complex else np.float64
    if input._data.dtype != target:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_dtype_name(input._data.dtype)} but the "
            f"operation's result requires dtype {_dtype_name(np.dtype(target))}"
        )
    scalar_type = complex if is_complex else float
    if isinstance(exponent, TensorBase):
        exponent = to(exponent, dtypes.complex128 if is_complex else dtypes.float64)
        return apply_inplace(PowTensor, input, exponent)
    return apply_inplace(Pow, input, scalar_type(scalar_value(exponent)))


# -------------------------------------------------------------- trigonometric
class Sin(Function):
    _backward_name = "SinBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.sin(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx sin(x) = cos(x)
        return grad_output * cos(x)


def sin(input: Tensor) -> Tensor:
    return Sin.apply(input)


def sin_(input: Tensor) -> Tensor:
    return apply_inplace(Sin, input)


class Cos(Function):
    _backward_name = "CosBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.cos(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx cos(x) = -sin(x)
        return grad_output * -sin(x)


def cos(input: Tensor) -> Tensor:
    return Cos.apply(input)


def cos_(input: Tensor) -> Tensor:
    return apply_inplace(Cos, input)


class Tan(Function):
    _backward_name = "TanBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.tan(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx tan(x) = 1 + tan(x)^2
        return grad_output * (result * result + 1.0)


def tan(input: Tensor) -> Tensor:
    return Tan.apply(input)


def tan_(input: Tensor) -> Tensor:
    return apply_inplace(Tan, input)


class Tanh(Function):
    _backward_name = "TanhBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.tanh(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        if backward_on_arrays():
            # TanhBackward's forward, on arrays
            grad = _wrap(_tanh_grad(grad_output._data, result._data))
            finish_array_backward(TanhBackward, (grad_output, result), (grad,))
            return grad
        return TanhBackward.apply(grad_output, result)

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        (x,) = args
        if x.dtype.kind != "f":
            return None
        return np.tanh, (lambda grad, out, x: (_tanh_grad(grad, out),)), TanhBackward


def _tanh_grad(grad: np.ndarray, y: np.ndarray) -> np.ndarray:
    """TanhBackward's forward on arrays: grad * (1 - y^2), y the output."""
    return grad * (1.0 - y * y)


class TanhBackward(Function):
    """tanh's gradient g * (1 - y^2) as one op (y the output), itself differentiable.

    One fused op instead of three keeps backward cheap; its own backward serves double
    backward: d/dg = 1 - y^2, d/dy = -2 g y.
    """

    _backward_name = "TanhBackwardBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, grad_output, result):
        ctx.save_for_backward(grad_output, result)
        y = result._data
        return _wrap(grad_output._data * (1.0 - y * y))

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, result = ctx.saved_tensors
        grad_grad_output = grad_result = None
        if ctx.needs_input_grad[0]:
            grad_grad_output = TanhBackward.apply(grad_grad, result)
        if ctx.needs_input_grad[1]:
            grad_result = grad_grad * grad_output * result * -2.0
        return grad_grad_output, grad_result


def tanh(input: Tensor) -> Tensor:
    return Tanh.apply(input)


def tanh_(input: Tensor) -> Tensor:
    return apply_inplace(Tanh, input)


class Sinh(Function):
    _backward_name = "SinhBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.sinh(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx sinh(x) = cosh(x)
        return grad_output * cosh(x)


def sinh(input: Tensor) -> Tensor:
    return Sinh.apply(input)


def sinh_(input: Tensor) -> Tensor:
    return apply_inplace(Sinh, input)


class Cosh(Function):
    _backward_name = "CoshBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.cosh(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx cosh(x) = sinh(x)
        return grad_output * sinh(x)


def cosh(input: Tensor) -> Tensor:
    return Cosh.apply(input)


def cosh_(input: Tensor) -> Tensor:
    return apply_inplace(Cosh, input)


class Asin(Function):
    _backward_name = "AsinBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.arcsin(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx asin(x) = 1/sqrt(1 - x^2)
        return grad_output * rsqrt(1.0 - x * x)


def asin(input: Tensor) -> Tensor:
    return Asin.apply(input)


arcsin = asin


def asin_(input: Tensor) -> Tensor:
    return apply_inplace(Asin, input)


arcsin_ = asin_


class Acos(Function):
    _backward_name = "AcosBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.arccos(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx acos(x) = -1/sqrt(1 - x^2)
        return grad_output * -rsqrt(1.0 - x * x)


def acos(input: Tensor) -> Tensor:
    return Acos.apply(input)


arccos = acos


def acos_(input: Tensor) -> Tensor:
    return apply_inplace(Acos, input)


arccos_ = acos_


class Atan(Function):
    _backward_name = "AtanBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.arctan(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx atan(x) = 1/(1 + x^2)
        return grad_output / (x * x + 1.0)


def atan(input: Tensor) -> Tensor:
    return Atan.apply(input)


arctan = atan


def atan_(input: Tensor) -> Tensor:
    return apply_inplace(Atan, input)


arctan_ = atan_


class Atan2(Function):
    _backward_name = "Atan2Backward0"
    _complex_refusal = (NotImplementedError, "\"atan2_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        y, x = binary_arrays(a, b)
        if y.dtype.kind in _INTEGRAL_KINDS:
            default = dtypes.get_default_dtype().numpy_dtype
            y, x = y.astype(default), x.astype(default)
        try:
            result = np.arctan2(y, x)
        except ValueError:
            raise broadcast_error(y.shape, x.shape) from None
        ctx.save_for_backward(a, b)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d/da atan2(a, b) = b/(a^2 + b^2), d/db atan2(a, b) = -a/(a^2 + b^2); PyTorch takes
        # both as 0 where a^2 + b^2 is 0. Dividing by a safe 1 there keeps nan out of the
        # second derivative too.
        denominator = a * a + b * b
        is_zero = eq(denominator, 0.0)
        scale = where(is_zero, 0.0, grad_output / where(is_zero, 1.0, denominator))
        if ctx.needs_input_grad[0]:
            grad_a = _grad_to(scale * b, a)
        if ctx.needs_input_grad[1]:
            grad_b = _grad_to(scale * -a, b)
        return grad_a, grad_b


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point (other, input), in (-pi, pi]."""
    if not isinstance(other, TensorBase):
        raise argument_error("atan2", "other", 2, other)
    return Atan2.apply(input, other)


arctan2 = atan2


def atan2_(input: Tensor, other: Tensor) -> Tensor:
    if not isinstance(other, TensorBase):
        raise argument_error("atan2_", "other", 1, other)
    check_complex_into_real(input, other)
    return apply_inplace(Atan2, input, other)


arctan2_ = atan2_


# ------------------------------------------------------------------- erf
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erf(Function):
    _backward_name = "ErfBackward0"
    _complex_refusal = (NotImplementedError, "\"erf_vml_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_special.erf(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
        return grad_output * (exp(-(x * x)) * _TWO_OVER_SQRT_PI)


def erf(input: Tensor) -> Tensor:
    return Erf.apply(input)


def erf_(input: Tensor) -> Tensor:
    return apply_inplace(Erf, input)


class Erfc(Function):
    _backward_name = "ErfcBackward0"
    _complex_refusal = (NotImplementedError, "\"erfc_vml_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_special.erfc(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx erfc(x) = -2/sqrt(pi) exp(-x^2)
        return grad_output * (exp(-(x * x)) * -_TWO_OVER_SQRT_PI)


def erfc(input: Tensor) -> Tensor:
    return Erfc.apply(input)


def erfc_(input: Tensor) -> Tensor:
    return apply_inplace(Erfc, input)


# ------------------------------------------------------------------ rounding
class _Rounding(Function):
    """floor, ceil, trunc and round are piecewise constant: their gradient is zero."""

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, ctx.shape)


def _integral_copy_or_fail(x: Tensor, kernel: str) -> np.ndarray | None:
    """Integer input rounds to itself; bool input is an error, as in PyTorch."""
    array = x._data
    if array.dtype == np.bool_:
        raise _not_implemented(kernel, array.dtype)
    if array.dtype.kind in "iu":
        return array.copy()
    return None


class Floor(_Rounding):
    _backward_name = "FloorBackward0"
    _complex_refusal = (NotImplementedError, "floor is not supported for complex inputs")

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x._data.shape
        result = _integral_copy_or_fail(x, "floor_vml_cpu")
        return _wrap(np.floor(x._data) if result is None else result)


def floor(input: Tensor) -> Tensor:
    return Floor.apply(input)


def floor_(input: Tensor) -> Tensor:
    return apply_inplace(Floor, input)


class Ceil(_Rounding):
    _backward_name = "CeilBackward0"
    _complex_refusal = (NotImplementedError, "ceil is not supported for complex inputs")

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x._data.shape
        result = _integral_copy_or_fail(x, "ceil_vml_cpu")
        return _wrap(np.ceil(x._data) if result is None else result)


def ceil(input: Tensor) -> Tensor:
    return Ceil.apply(input)


def ceil_(input: Tensor) -> Tensor:
    return apply_inplace(Ceil, input)


class Trunc(_Rounding):
    _backward_name = "TruncBackward0"
    _complex_refusal = (NotImplementedError, "trunc is not supported for complex inputs")

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x._data.shape
        result = _integral_copy_or_fail(x, "trunc_vml_cpu")
        return _wrap(np.trunc(x._data) if result is None else result)


def trunc(input: Tensor) -> Tensor:
    return Trunc.apply(input)


fix = trunc


def trunc_(input: Tensor) -> Tensor:
    return apply_inplace(Trunc, input)


fix_ = trunc_


class Round(_Rounding):
    """Round half to even."""

    _backward_name = "RoundBackward0"
    _complex_refusal = (NotImplementedError, "\"round_vml_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x._data.shape
        result = _integral_copy_or_fail(x, "round_vml_cpu")
        return _wrap(np.rint(x._data) if result is None else result)


class RoundDecimals(_Rounding):
    """Round half to even at `decimals` digits after the point (before it when negative)."""

    _backward_name = "RoundBackward1"
    _complex_refusal = (NotImplementedError, "\"round_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, decimals):
        ctx.shape = x._data.shape
        array = x._data
        if array.dtype.kind not in FLOAT_KINDS:
            raise _not_implemented("round_cpu", array.dtype)
        # Scale in the input's own precision, as PyTorch does, so results match bit for bit
        # (float16/bfloat16: in float32, rounded once, as PyTorch's kernels compute them).
        low = low_precision_of(array.dtype)
        array = widen(array)
        scale = np.asarray(10.0 ** builtins.abs(decimals), dtype=array.dtype)
        if decimals >= 0:
            return _wrap(round_to(np.rint(array * scale) / scale, low))
        return _wrap(round_to(np.rint(array / scale) * scale, low))

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, ctx.shape), None


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    if decimals == 0:
        return Round.apply(input)
    check_int(decimals, "round", "decimals", None)
    return RoundDecimals.apply(input, int(decimals))


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    if decimals == 0:
        return apply_inplace(Round, input)
    check_int(decimals, "round_", "decimals", None)
    return apply_inplace(RoundDecimals, input, int(decimals))


# ---------------------------------------------------------- lerp, nan_to_num
def _lerp_array(start: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    # Interpolate from the nearer end, so weight 1 gives exactly `end` (as PyTorch does).
    difference = end - start
    if not isinstance(weight, np.ndarray):
        if builtins.abs(weight) < 0.5:
            return start + weight * difference
        return end - difference * (1.0 - weight)
    near_start = np.abs(weight) < 0.5
    return np.where(near_start, start + weight * difference, end - difference * (1.0 - weight))


class Lerp(Function):
    """Linear interpolation with a Python-number weight."""

    _backward_name = "LerpBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, start, end, weight):
        s, e = start._data, end._data
        low = low_precision_of(s.dtype)
        try:
            result = round_to(_lerp_array(widen(s), widen(e), weight), low)
        except ValueError:
            raise broadcast_error(s.shape, e.shape) from None
        ctx.weight = weight
        ctx.shapes = (s.shape, e.shape)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        weight = ctx.weight
        start_shape, end_shape = ctx.shapes
        grad_start = grad_end = None
        # lerp = start + w (end - start): d/dstart = 1 - w, d/dend = w
        if ctx.needs_input_grad[0]:
            grad_start = sum_to(grad_output * (1.0 - weight), start_shape)
        if ctx.needs_input_grad[1]:
            grad_end = sum_to(grad_output * weight, end_shape)
        return grad_start, grad_end, None


class LerpTensor(Function):
    """Linear interpolation with a tensor weight."""

    _backward_name = "LerpBackward1"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, start, end, weight):
        s, e = start._data, end._data
        w = weight._data.astype(s.dtype, copy=False)
        low = low_precision_of(s.dtype)
        try:
            result = round_to(_lerp_array(widen(s), widen(e), widen(w)), low)
        except ValueError:
            common_shape(s.shape, e.shape, w.shape)
            raise
        ctx.save_for_backward(start, end, weight)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        start, end, weight = ctx.saved_tensors
        grad_start = grad_end = grad_weight = None
        # d/dstart = 1 - w, d/dend = w, d/dw = end - start
        if ctx.needs_input_grad[0]:
            grad_start = sum_to(grad_output * (1.0 - weight), start.shape)
        if ctx.needs_input_grad[1]:
            grad_end = sum_to(grad_output * weight, end.shape)
        if ctx.needs_input_grad[2]:
            grad_weight = _grad_to(grad_output * (end - start), weight)
        return grad_start, grad_end, grad_weight


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """input + weight * (end - input), with a tensor or Python-number weight."""
    _check_lerp(input, end, weight)
    if isinstance(weight, TensorBase):
        return LerpTensor.apply(input, end, weight)
    return Lerp.apply(input, end, scalar_value(weight))


def _check_lerp_dtypes(input: Tensor, end: Tensor, weight: Tensor | None) -> None:
    start_dtype = input._data.dtype
    if end._data.dtype != start_dtype:
        raise RuntimeError(
            f"expected dtype {_cpp_name(start_dtype)} for `end` but got dtype "
            f"{_cpp_name(end._data.dtype)}"
        )
    if weight is not None and weight.ndim > 0 and weight._data.dtype != start_dtype:
        raise RuntimeError(
            f"expected dtype {_cpp_name(start_dtype)} for `weight` but got dtype "
            f"{_cpp_name(weight._data.dtype)}"
        )
    if start_dtype.kind not in INEXACT_KINDS:
        kernel = "lerp_kernel_scalar" if weight is None else "lerp_kernel_tensor"
        raise _not_implemented(kernel, start_dtype)


def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    _check_lerp(input, end, weight)
    if isinstance(weight, TensorBase):
        return apply_inplace(LerpTensor, input, end, weight)
    return apply_inplace(Lerp, input, end, scalar_value(weight))


def _check_lerp(input: Tensor, end: Any, weight: Any) -> None:
    """PyTorch's errors for lerp's operands: end a tensor of input's dtype, a float input, and a
    dimensioned tensor weight of input's dtype."""
    if not isinstance(end, TensorBase):
        raise argument_error("lerp", "end", 2, end)
    start_dtype = input._data.dtype
    if end._data.dtype != start_dtype:
        raise RuntimeError(
            f"expected dtype {_cpp_name(start_dtype)} for `end` but got dtype "
            f"{_cpp_name(end._data.dtype)}"
        )
    if isinstance(weight, TensorBase):
        # A 0-d weight may have any dtype; a dimensioned one must match the input's.
        if weight.ndim > 0 and weight._data.dtype != start_dtype:
            raise RuntimeError(
                f"expected dtype {_cpp_name(start_dtype)} for `weight` but got dtype "
                f"{_cpp_name(weight._data.dtype)}"
            )
        if start_dtype.kind not in INEXACT_KINDS:
            raise _not_implemented("lerp_kernel_tensor", start_dtype)
        return
    check_real_number(scalar_value(weight), input, end)
    if start_dtype.kind not in INEXACT_KINDS:
        raise _not_implemented("lerp_kernel_scalar", start_dtype)


class NanToNum(Function):
    _backward_name = "NanToNumBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        array = x._data
        if array.dtype.kind not in FLOAT_KINDS:
            if array.dtype.kind != "c":
                return _wrap(array.copy())
        info = numpy_finfo(array.dtype)
        posinf = info.max if posinf is None else posinf
        neginf = info.min if neginf is None else neginf
        ctx.save_for_backward(x)
        # NumPy's nan_to_num leaves bfloat16 alone (it is no NumPy float): replace in float32
        replaced = np.nan_to_num(widen(array), copy=True, nan=nan, posinf=posinf, neginf=neginf)
        return _wrap(round_to(replaced, low_precision_of(array.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # identity where x is finite, constant elsewhere
        return grad_output * isfinite(x), None, None, None


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:  # fmt: skip
    """Replace nan, +inf and -inf (default: 0 and the dtype's largest and lowest finite values)."""
    if (
        isinstance(input, TensorBase)
        and input._data.dtype.kind == "c"
        and input.requires_grad
        and is_grad_enabled()
    ):
        # PyTorch's out-of-place form has no complex derivative (its in-place form has)
        raise RuntimeError(
            "nan_to_num does not support automatic differentiation for outputs with complex dtype."
        )
    posinf = None if posinf is None else scalar_value(posinf)
    neginf = None if neginf is None else scalar_value(neginf)
    return NanToNum.apply(input, scalar_value(nan), posinf, neginf)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:  # fmt: skip
    posinf = None if posinf is None else scalar_value(posinf)
    neginf = None if neginf is None else scalar_value(neginf)
    return apply_inplace(NanToNum, input, scalar_value(nan), posinf, neginf)


# --------------------------------------------------------------------- clamp
_CLAMP_NONE_MESSAGE = "lucid.clamp: At least one of 'min' or 'max' must not be None"


def _clamp_array(array: np.ndarray, low: Any, high: Any) -> np.ndarray:
    # min(max(x, low), high): high wins when low > high, and nan anywhere propagates.
    if low is not None:
        array = np.maximum(array, low)
    if high is not None:
        array = np.minimum(array, high)
    return array


def _clamp_mask(x: Tensor, low: Any, high: Any) -> Tensor:
    """Where the gradient passes: low <= x <= high (the bounds included)."""
    if low is None:
        return le(x, high)
    if high is None:
        return ge(x, low)
    return logical_and(ge(x, low), le(x, high))


def _number_clamp_dtype(x: Tensor, low: Any, high: Any) -> np.dtype:
    """The result dtype of clamping x to number bounds."""
    array_dtype = x._data.dtype
    if array_dtype.kind in FLOAT_KINDS:
        # numbers never promote a float tensor
        return array_dtype
    bounds = [bound for bound in (low, high) if bound is not None]
    return dtypes.result_type(x, *bounds).numpy_dtype


class Clamp(Function):
    """Clamp to Python-number bounds."""

    _backward_name = "ClampBackward1"
    _complex_refusal = (NotImplementedError, "clamp is not supported for complex types")

    @staticmethod
    def forward(ctx, x, low, high):
        target = _number_clamp_dtype(x, low, high)
        ctx.save_for_backward(x)
        ctx.low, ctx.high = low, high
        array = x._data.astype(target, copy=False)
        # float16/bfloat16 compare with the bounds at float32 (NumPy would widen the result)
        return _wrap(round_to(_clamp_array(widen(array), low, high), low_precision_of(target)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return where(_clamp_mask(x, ctx.low, ctx.high), grad_output, 0.0), None, None


def _clamp_tensor_array(x: Tensor, low: Tensor | None, high: Tensor | None) -> np.ndarray:
    bounds = [bound for bound in (low, high) if bound is not None]
    target = dtypes.result_type(x, *bounds).numpy_dtype
    array = x._data.astype(target, copy=False)
    low_array = None if low is None else low._data.astype(target, copy=False)
    high_array = None if high is None else high._data.astype(target, copy=False)
    try:
        return _clamp_array(array, low_array, high_array)
    except ValueError:
        common_shape(*[t._data.shape for t in (x, *bounds)])
        raise


def _clamp_bound_grads(ctx: Any, grad_output: Tensor, x: Tensor, low: Any, high: Any) -> tuple:
    """Gradients of clamp with respect to tensor bounds: a bound gets it where it is the result."""
    grad_low = grad_high = None
    if ctx.needs_input_grad[1]:
        # low is the result where x < low, unless high overrides it (low >= high)
        selected = lt(x, low) if high is None else logical_and(lt(x, low), lt(low, high))
        grad_low = _grad_to(where(selected, grad_output, 0.0), low)
    if ctx.needs_input_grad[2]:
        # high is the result where x > high, and wherever high < low
        selected = gt(x, high) if low is None else logical_or(gt(x, high), lt(high, low))
        grad_high = _grad_to(where(selected, grad_output, 0.0), high)
    return grad_low, grad_high


class ClampTensor(Function):
    """Clamp to tensor bounds (either may be None)."""

    _backward_name = "ClampBackward0"
    _complex_refusal = (NotImplementedError, "clamp is not supported for complex types")

    @staticmethod
    def forward(ctx, x, low, high):
        ctx.save_for_backward(x, low, high)
        return _wrap(_clamp_tensor_array(x, low, high))

    @staticmethod
    def backward(ctx, grad_output):
        x, low, high = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = _grad_to(where(_clamp_mask(x, low, high), grad_output, 0.0), x)
        return (grad_x, *_clamp_bound_grads(ctx, grad_output, x, low, high))


def _clamp_bounds(input: Tensor, min: Any, max: Any) -> tuple[bool, Any, Any]:
    """(tensor_bounds, min, max), resolving which overload applies as PyTorch does: two number
    bounds (a 0-d tensor counts as a number beside a number) or two tensor bounds."""
    if min is None and max is None:
        raise RuntimeError(_CLAMP_NONE_MESSAGE)
    min_is_tensor, max_is_tensor = isinstance(min, TensorBase), isinstance(max, TensorBase)
    if min_is_tensor or max_is_tensor:
        if min is None or max is None or (min_is_tensor and max_is_tensor):
            return True, min, max
        tensor_bound = min if min_is_tensor else max
        if tensor_bound.ndim != 0:
            raise TypeError(
                f"clamp() received an invalid combination of arguments - got (Tensor, "
                f"{type(min).__name__ if not min_is_tensor else 'Tensor'}, "
                f"{type(max).__name__ if not max_is_tensor else 'Tensor'}), but expected one of:"
                "\n * (Tensor input, Tensor min = None, Tensor max = None)"
                "\n * (Tensor input, Number min = None, Number max = None)"
            )
        if min_is_tensor:
            min = min.item()
        else:
            max = max.item()
    min = None if min is None else scalar_value(min)
    max = None if max is None else scalar_value(max)
    if (isinstance(min, complex) or isinstance(max, complex)) and input._data.dtype.kind != "c":
        # PyTorch reads a number bound as a double
        raise RuntimeError("value cannot be converted to type double without overflow")
    return False, min, max


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit input to [min, max]; either bound may be None, a number or a tensor."""
    tensor_bounds, min, max = _clamp_bounds(input, min, max)
    if tensor_bounds:
        _refuse_complex_bounds(input, min, max)
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(input, min, max)


def _refuse_complex_bounds(input: Tensor, min: Tensor | None, max: Tensor | None) -> None:
    """PyTorch's error for a complex tensor bound of a real input (a complex input is refused
    by the op itself): it names the kernel the bounds select."""
    if input._data.dtype.kind == "c":
        return
    bounds = [bound for bound in (min, max) if bound is not None]
    if any(bound._data.dtype.kind == "c" for bound in bounds):
        kernel = (
            "clamp_cpu" if len(bounds) == 2 else "maximum_cpu" if max is None else "minimum_cpu"
        )
        raise _not_implemented(kernel, dtypes.result_type(input, *bounds).numpy_dtype)


clip = clamp


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    tensor_bounds, min, max = _clamp_bounds(input, min, max)
    if tensor_bounds:
        check_complex_into_real(input, min, max)
        return apply_inplace(ClampTensor, input, min, max)
    array = input._data
    target = _number_clamp_dtype(input, min, max)
    if not np.can_cast(target, array.dtype, "same_kind"):
        # PyTorch names the output type by its C type here, unlike other in-place ops.
        raise RuntimeError(
            f"result type {_dtype_name(target)} can't be cast to the desired output type "
            f"{_cpp_name(array.dtype)}"
        )
    return apply_inplace(Clamp, input, min, max)


clip_ = clamp_


# --------------------------------------------------------------------- where
_SAME_SIZE_INTEGER = {2: np.int16, 4: np.int32, 8: np.int64}


def _bits(array: np.ndarray, integer: type, shape: tuple) -> np.ndarray:
    """A contiguous integer view of a float array's bits (0-d stays 0-d)."""
    return np.ascontiguousarray(array).view(integer).reshape(shape)


def _select(condition: np.ndarray, x: Any, y: Any) -> np.ndarray:
    """np.where(condition, x, y), exact, through bit masks where possible.

    np.where branches per element and mispredicts on irregular masks (ReLU's backward):
    ten times slower than masking the bits of same-shape float arrays, which selects
    exactly (nan, inf and -0.0 included). A Python 0.0 on either side counts as +0.0 bits.
    """
    shape = condition.shape
    x_is_array = isinstance(x, np.ndarray)
    y_is_array = isinstance(y, np.ndarray)
    reference = x if x_is_array else y
    if (
        not isinstance(reference, np.ndarray)
        or reference.dtype.kind not in FLOAT_KINDS
        or reference.shape != shape
        or condition.dtype != np.bool_
        or (x_is_array and (x.shape != shape or x.dtype != reference.dtype))
        or (y_is_array and (y.shape != shape or y.dtype != reference.dtype))
        or (not x_is_array and x != 0)
        or (not y_is_array and y != 0)
        or (not x_is_array and not y_is_array)
    ):
        return np.where(condition, x, y)
    integer = _SAME_SIZE_INTEGER[reference.dtype.itemsize]
    if not x_is_array:
        # keep y where the condition fails: condition - 1 is all ones exactly there
        keep_y = np.subtract(condition.view(np.int8), 1, out=np.empty(shape, dtype=integer))
        result = np.bitwise_and(_bits(y, integer, shape), keep_y, out=keep_y)
        return result.view(reference.dtype)
    # all ones where condition holds, zeros elsewhere (cast and negate in one pass)
    keep_x = np.negative(condition.view(np.int8), out=np.empty(shape, dtype=integer))
    # (an explicit output also keeps 0-d results arrays, not NumPy scalars)
    result = np.empty(shape, integer) if y_is_array else keep_x
    np.bitwise_and(_bits(x, integer, shape), keep_x, out=result)
    if y_is_array:
        np.invert(keep_x, out=keep_x)
        np.bitwise_and(_bits(y, integer, shape), keep_x, out=keep_x)
        np.bitwise_or(result, keep_x, out=result)
    return result.view(reference.dtype)


class Where(Function):
    _backward_name = "WhereBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, condition, a, b):
        if isinstance(a, TensorBase) or isinstance(b, TensorBase):
            x, y = binary_arrays(a, b)
        else:
            target = dtypes.result_type(a, b).numpy_dtype
            x, y = np.asarray(a, target), np.asarray(b, target)
        try:
            result = _select(condition._data, x, y)
        except ValueError:
            common_shape(condition._data.shape, np.shape(x), np.shape(y))
            raise
        ctx.save_for_backward(condition)
        # Operands may have been promoted: gradients go back in each input's shape and dtype.
        ctx.a_meta = (a._data.shape, a._data.dtype) if isinstance(a, TensorBase) else None
        ctx.b_meta = (b._data.shape, b._data.dtype) if isinstance(b, TensorBase) else None
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        (condition,) = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[1]:
            grad_a = _reduce_and_cast(where(condition, grad_output, 0.0), *ctx.a_meta)
        if ctx.needs_input_grad[2]:
            grad_b = _reduce_and_cast(where(condition, 0.0, grad_output), *ctx.b_meta)
        return None, grad_a, grad_b


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Elements of `input` where `condition` holds, else of `other`.

    With only `condition`, the indices of its nonzero elements (one tensor per dimension).
    """
    check_tensors(condition)
    if input is None and other is None:
        # A 0-d condition counts as one element, as in PyTorch (NumPy refuses it).
        return tuple(_wrap(index) for index in np.nonzero(np.atleast_1d(condition._data)))
    condition_dtype = condition._data.dtype
    if condition_dtype == np.uint8:
        warnings.warn(
            "where received a uint8 condition tensor. This behavior is deprecated and will be "
            "removed in a future version of lucid. Use a boolean condition instead.",
            UserWarning,
            stacklevel=2,
        )
        condition = _wrap(condition._data.astype(np.bool_))
    elif condition_dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_dtype_name(condition_dtype)}"
        )
    return Where.apply(condition, scalar_value(input), scalar_value(other))


# ---------------------------------------------------------------- predicates
def isnan(input: Tensor) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind not in INEXACT_KINDS:
        return _wrap(np.zeros(array.shape, np.bool_))
    return _wrap(np.isnan(array))


def isinf(input: Tensor) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind not in INEXACT_KINDS:
        return _wrap(np.zeros(array.shape, np.bool_))
    return _wrap(np.isinf(array))


def isfinite(input: Tensor) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind not in INEXACT_KINDS:
        return _wrap(np.ones(array.shape, np.bool_))
    return _wrap(np.isfinite(array))


def isposinf(input: Tensor) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind == "c":
        raise RuntimeError("isposinf does not support complex inputs.")
    if array.dtype.kind not in FLOAT_KINDS:
        return _wrap(np.zeros(array.shape, np.bool_))
    return _wrap(np.isposinf(array))


def isneginf(input: Tensor) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind == "c":
        raise RuntimeError("isneginf does not support complex inputs.")
    if array.dtype.kind not in FLOAT_KINDS:
        return _wrap(np.zeros(array.shape, np.bool_))
    return _wrap(np.isneginf(array))


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set: negative numbers, -0.0 and negative nans."""
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind in FLOAT_KINDS:
        return _wrap(np.signbit(array))
    if array.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if array.dtype.kind == "i":
        return _wrap(np.less(array, 0))
    return _wrap(np.zeros(array.shape, np.bool_))


# --------------------------------------------------------------- comparisons
def _promoted_arrays(input: Any, other: Any) -> tuple[Any, Any]:
    """Both operands as binary_arrays gives them, except that an integer scalar beside an
    integer tensor wraps around into its dtype (as PyTorch casts it) instead of overflowing."""
    if other.__class__ is int and input._data.dtype.kind in "iu":
        return input._data, np.array(other).astype(input._data.dtype)
    if input.__class__ is int and other._data.dtype.kind in "iu":
        return np.array(input).astype(other._data.dtype), other._data
    return binary_arrays(input, other)


def _comparison_operand(name: str, value: Any) -> Any:
    if isinstance(value, TensorBase):
        return value
    if isinstance(value, bool | int | float | complex | np.generic):
        return scalar_value(value)
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got (Tensor, "
        f"{type(value).__name__}), but expected one of:\n * (Tensor input, Tensor other)\n"
        f" * (Tensor input, Number other)"
    )


# The kernels PyTorch names when an ordering comparison meets complex numbers (NumPy orders
# them lexicographically; PyTorch refuses).
_ORDERING_KERNELS = {
    np.less: "lt_cpu", np.less_equal: "le_cpu", np.greater: "gt_cpu", np.greater_equal: "ge_cpu",
}  # fmt: skip


def _compare(name: str, ufunc: Any, input: Any, other: Any) -> Tensor:
    if not isinstance(input, TensorBase):
        raise invalid_combination(name, (input, other), (
            "(Tensor input, Tensor other, *, Tensor out = None)",
            "(Tensor input, Number other, *, Tensor out = None)",
        ))  # fmt: skip
    x, y = _promoted_arrays(input, _comparison_operand(name, other))
    # (x is input's array, in the promoted dtype)
    if x.dtype.kind == "c" and ufunc in _ORDERING_KERNELS:
        raise _not_implemented(_ORDERING_KERNELS[ufunc], x.dtype)
    # float16/bfloat16 compare exactly in float32, where NumPy's kernels are vectorised (7x
    # faster than ml_dtypes' element-at-a-time bfloat16 comparisons)
    x, y = widen(x), widen(y)
    try:
        return _wrap(ufunc(x, y))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


# Comparisons and logical ops in place write 0 and 1 in the input's dtype. They are piecewise
# constant, so their gradient is zero; the grad_fn names are PyTorch's (scalar, tensor other).
class _CompareInplace(Function):
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, other, name, ufunc):
        ctx.shape = x._data.shape
        ctx.other_shape = other._data.shape if isinstance(other, TensorBase) else None
        return _compare(name, ufunc, x, other)

    @staticmethod
    def backward(ctx, grad_output):
        grad_other = None
        if ctx.other_shape is not None and ctx.needs_input_grad[1]:
            grad_other = zeros_like_grad(grad_output, ctx.other_shape)
        return zeros_like_grad(grad_output, ctx.shape), grad_other, None, None


def _compare_(name: str, ufunc: Any, forms: tuple, input: Tensor, other: Any) -> Tensor:
    check_tensors(input)
    other = inplace_operand(other, name + "_")
    form = forms[1] if isinstance(other, TensorBase) else forms[0]
    return apply_inplace(form, input, other, name, ufunc)


def eq(input: Tensor, other: Any) -> Tensor:
    return _compare("eq", np.equal, input, other)


class EqScalarInplace(_CompareInplace):
    _backward_name = "EqBackward0"


class EqTensorInplace(_CompareInplace):
    _backward_name = "EqBackward1"


def eq_(input: Tensor, other: Any) -> Tensor:
    return _compare_("eq", np.equal, (EqScalarInplace, EqTensorInplace), input, other)


def ne(input: Tensor, other: Any) -> Tensor:
    return _compare("ne", np.not_equal, input, other)


class NeScalarInplace(_CompareInplace):
    _backward_name = "NeBackward0"


class NeTensorInplace(_CompareInplace):
    _backward_name = "NeBackward1"


def ne_(input: Tensor, other: Any) -> Tensor:
    return _compare_("ne", np.not_equal, (NeScalarInplace, NeTensorInplace), input, other)


def lt(input: Tensor, other: Any) -> Tensor:
    return _compare("lt", np.less, input, other)


class LtScalarInplace(_CompareInplace):
    _backward_name = "LtBackward0"


class LtTensorInplace(_CompareInplace):
    _backward_name = "LtBackward1"


def lt_(input: Tensor, other: Any) -> Tensor:
    return _compare_("lt", np.less, (LtScalarInplace, LtTensorInplace), input, other)


def le(input: Tensor, other: Any) -> Tensor:
    return _compare("le", np.less_equal, input, other)


class LeScalarInplace(_CompareInplace):
    _backward_name = "LeBackward0"


class LeTensorInplace(_CompareInplace):
    _backward_name = "LeBackward1"


def le_(input: Tensor, other: Any) -> Tensor:
    return _compare_("le", np.less_equal, (LeScalarInplace, LeTensorInplace), input, other)


def gt(input: Tensor, other: Any) -> Tensor:
    return _compare("gt", np.greater, input, other)


class GtScalarInplace(_CompareInplace):
    _backward_name = "GtBackward0"


class GtTensorInplace(_CompareInplace):
    _backward_name = "GtBackward1"


def gt_(input: Tensor, other: Any) -> Tensor:
    return _compare_("gt", np.greater, (GtScalarInplace, GtTensorInplace), input, other)


def ge(input: Tensor, other: Any) -> Tensor:
    return _compare("ge", np.greater_equal, input, other)


class GeScalarInplace(_CompareInplace):
    _backward_name = "GeBackward0"


class GeTensorInplace(_CompareInplace):
    _backward_name = "GeBackward1"


def ge_(input: Tensor, other: Any) -> Tensor:
    return _compare_("ge", np.greater_equal, (GeScalarInplace, GeTensorInplace), input, other)


def greater(input: Tensor, other: Any) -> Tensor:
    return _compare("greater", np.greater, input, other)


greater_ = gt_


def greater_equal(input: Tensor, other: Any) -> Tensor:
    return _compare("greater_equal", np.greater_equal, input, other)


greater_equal_ = ge_


def less(input: Tensor, other: Any) -> Tensor:
    return _compare("less", np.less, input, other)


less_ = lt_


def less_equal(input: Tensor, other: Any) -> Tensor:
    return _compare("less_equal", np.less_equal, input, other)


less_equal_ = le_


def not_equal(input: Tensor, other: Any) -> Tensor:
    return _compare("not_equal", np.not_equal, input, other)


not_equal_ = ne_


def equal(input: Tensor, other: Tensor) -> bool:
    """True if both have the same shape and elements (nan is never equal)."""
    try:
        if input._data.shape != other._data.shape:
            return False
    except AttributeError as error:
        raise_argument_error(error)
        raise
    x, y = binary_arrays(input, other)
    return bool(np.array_equal(x, y))


def _check_same_dtype(input: Tensor, other: Tensor) -> None:
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(
            f"{_dtype_name(input._data.dtype)} did not match {_dtype_name(other._data.dtype)}"
        )


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:  # fmt: skip
    """`|input - other| <= atol + rtol * |other|` elementwise; infinities are close when equal."""
    check_tensors(input, other)
    _check_same_dtype(input, other)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    try:
        x, y = input._data, other._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    try:
        exactly = np.equal(x, y)
    except ValueError:
        raise broadcast_error(x.shape, y.shape) from None
    if x.dtype.kind not in INEXACT_KINDS:
        # integers: compare in float64 so the difference cannot overflow
        x, y = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        # inf - inf is nan here, and is settled by the exact comparison above
        close = np.abs(x - y) <= atol + rtol * np.abs(y)
    result = exactly | (close & np.isfinite(x) & np.isfinite(y))
    if equal_nan:
        result |= np.isnan(x) & np.isnan(y)
    return _wrap(result)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:  # fmt: skip
    """True if isclose holds everywhere."""
    try:
        return bool(np.all(isclose(input, other, rtol, atol, equal_nan)._data))
    except AttributeError as error:
        raise_argument_error(error)
        raise


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:  # fmt: skip
    """Whether each of `elements` occurs in `test_elements` (either may be a number)."""

    def is_number(value: Any) -> bool:
        return isinstance(value, int | float | complex) and not isinstance(value, TensorBase)

    if not (
        (isinstance(elements, TensorBase) or is_number(elements))
        and (isinstance(test_elements, TensorBase) or is_number(test_elements))
        and (isinstance(elements, TensorBase) or isinstance(test_elements, TensorBase))
    ):
        raise invalid_combination("isin", (elements, test_elements), (
            "(Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)",
            "(Number element, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)",
            "(Tensor elements, Number test_element, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)",
        ))  # fmt: skip
    values = elements._data if isinstance(elements, TensorBase) else np.asarray(elements)
    tests = test_elements._data if isinstance(test_elements, TensorBase) else test_elements
    for array in (values, np.asarray(tests)):
        if array.dtype == np.bool_ or array.dtype.kind == "c":
            raise RuntimeError(
                f"Unsupported input type encountered for isin(): {_dtype_name(array.dtype)}"
            )
    return _wrap(np.isin(values, tests, assume_unique=assume_unique, invert=invert))


# ----------------------------------------------------------- logical, bitwise
def _check_other_tensor(name: str, other: Any) -> None:
    if not isinstance(other, TensorBase):
        raise argument_error(name, "other", 2, other)


def _logical(name: str, ufunc: Any, input: Tensor, other: Tensor) -> Tensor:
    _check_other_tensor(name, other)
    try:
        return _wrap(ufunc(input._data, other._data))
    except ValueError:
        raise broadcast_error(input._data.shape, other._data.shape) from None


def _write_untracked(input: Tensor, result: Tensor) -> Tensor:
    """Write a logical op's result into its input outside autograd, as PyTorch does: the data
    and the version change, the history does not (a leaf that requires grad is written too)."""
    write_inplace(input, result._data)
    input._version_counter[0] += 1
    return input


def _check_other_operand(name: str, other: Any) -> None:
    if not isinstance(other, TensorBase):
        raise argument_error(name, "other", 1, other)


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    check_tensors(input, other)
    return _logical("logical_and", np.logical_and, input, other)


def logical_and_(input: Tensor, other: Tensor) -> Tensor:
    check_tensors(input)
    _check_other_operand("logical_and_", other)
    return _write_untracked(input, _logical("logical_and_", np.logical_and, input, other))


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    check_tensors(input, other)
    return _logical("logical_or", np.logical_or, input, other)


def logical_or_(input: Tensor, other: Tensor) -> Tensor:
    check_tensors(input)
    _check_other_operand("logical_or_", other)
    return _write_untracked(input, _logical("logical_or_", np.logical_or, input, other))


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    check_tensors(input, other)
    return _logical("logical_xor", np.logical_xor, input, other)


def logical_xor_(input: Tensor, other: Tensor) -> Tensor:
    check_tensors(input)
    _check_other_operand("logical_xor_", other)
    return _write_untracked(input, _logical("logical_xor_", np.logical_xor, input, other))


def logical_not(input: Tensor) -> Tensor:
    try:
        return _wrap(np.logical_not(input._data))
    except AttributeError as error:
        raise_argument_error(error)
        raise


def logical_not_(input: Tensor) -> Tensor:
    return _write_untracked(input, logical_not(input))


def _bitwise(name: str, function: type[Function], input: Any, other: Any) -> Tensor:
    if not isinstance(input, TensorBase) and not isinstance(other, TensorBase):
        raise TypeError(
            f"{name}() expected at least one Tensor operand, got {type(input).__name__} and "
            f"{type(other).__name__}"
        )
    return function.apply(scalar_value(input), scalar_value(other))


def _bitwise_result(ufunc: Any, kernel: str, a: Any, b: Any, out: np.ndarray | None) -> Tensor:
    """`ufunc` of integer or bool operands in PyTorch's promoted dtype (not differentiable).

    `out` is the input's own array when the op runs in place: PyTorch checks that the result
    can be cast into it before it looks for a kernel for the result's dtype.
    """
    target = dtypes.result_type(a, b).numpy_dtype
    if out is not None:
        error = cast_error(target, out.dtype)
        if error is not None:
            raise error
    if target.kind in INEXACT_KINDS:
        raise _not_implemented(kernel, target)
    x, y = _promoted_arrays(a, b)
    try:
        return _wrap(ufunc(x, y))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


class BitwiseAnd(Function):
    _complex_refusal = (NotImplementedError, "\"bitwise_and_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b, out=None):
        return _bitwise_result(np.bitwise_and, "bitwise_and_cpu", a, b, out)


class BitwiseOr(Function):
    _complex_refusal = (NotImplementedError, "\"bitwise_or_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b, out=None):
        return _bitwise_result(np.bitwise_or, "bitwise_or_cpu", a, b, out)


class BitwiseXor(Function):
    _complex_refusal = (NotImplementedError, "\"bitwise_xor_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b, out=None):
        return _bitwise_result(np.bitwise_xor, "bitwise_xor_cpu", a, b, out)


def _shift_operands(x: Any, y: Any, kernel: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype:
        # a bool tensor beside a Python int: the result is int64
        dtype = np.result_type(x, y)
        x, y = x.astype(dtype), y.astype(dtype)
    if x.dtype.kind == "b":
        raise _not_implemented(kernel, x.dtype)
    return x, y


def _left_shift(x: Any, y: Any) -> np.ndarray:
    # Shifts by a negative amount or by the width or more give 0 in PyTorch (C leaves them
    # undefined).
    x, y = _shift_operands(x, y, "lshift_cpu")
    in_range = (y >= 0) & (y < x.dtype.itemsize * 8)
    return np.where(in_range, np.left_shift(x, np.where(in_range, y, 0)), 0)


def _right_shift(x: Any, y: Any) -> np.ndarray:
    # Out-of-range amounts fill with the sign bit (0 for unsigned types), as in PyTorch.
    x, y = _shift_operands(x, y, "rshift_cpu")
    width = x.dtype.itemsize * 8
    in_range = (y >= 0) & (y < width)
    if x.dtype.kind == "u":
        return np.where(in_range, np.right_shift(x, np.where(in_range, y, 0)), 0)
    return np.right_shift(x, np.where(in_range, y, width - 1))


class BitwiseLeftShift(Function):
    _complex_refusal = (NotImplementedError, "\"lshift_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b, out=None):
        return _bitwise_result(_left_shift, "lshift_cpu", a, b, out)


class BitwiseRightShift(Function):
    _complex_refusal = (NotImplementedError, "\"rshift_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b, out=None):
        return _bitwise_result(_right_shift, "rshift_cpu", a, b, out)


def bitwise_and(input: Any, other: Any) -> Tensor:
    """Bitwise AND of integer or bool tensors (logical AND for bool)."""
    return _bitwise("bitwise_and", BitwiseAnd, input, other)


def bitwise_and_(input: Tensor, other: Any) -> Tensor:
    return apply_inplace(BitwiseAnd, input, inplace_operand(other, "bitwise_and_"))


def bitwise_or(input: Any, other: Any) -> Tensor:
    return _bitwise("bitwise_or", BitwiseOr, input, other)


def bitwise_or_(input: Tensor, other: Any) -> Tensor:
    return apply_inplace(BitwiseOr, input, inplace_operand(other, "bitwise_or_"))


def bitwise_xor(input: Any, other: Any) -> Tensor:
    return _bitwise("bitwise_xor", BitwiseXor, input, other)


def bitwise_xor_(input: Tensor, other: Any) -> Tensor:
    return apply_inplace(BitwiseXor, input, inplace_operand(other, "bitwise_xor_"))


def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """input * 2**other for integer tensors, wrapping around on overflow."""
    return _bitwise("bitwise_left_shift", BitwiseLeftShift, input, other)


def bitwise_left_shift_(input: Tensor, other: Any) -> Tensor:
    return apply_inplace(BitwiseLeftShift, input, inplace_operand(other, "bitwise_left_shift_"))


def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """input // 2**other for integer tensors (an arithmetic shift: the sign is kept)."""
    return _bitwise("bitwise_right_shift", BitwiseRightShift, input, other)


def bitwise_right_shift_(input: Tensor, other: Any) -> Tensor:
    return apply_inplace(BitwiseRightShift, input, inplace_operand(other, "bitwise_right_shift_"))


def bitwise_not(input: Tensor) -> Tensor:
    """Bitwise NOT of an integer tensor; logical NOT of a bool tensor."""
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype.kind in INEXACT_KINDS:
        raise _not_implemented("bitwise_not_cpu", array.dtype)
    return _wrap(np.invert(array))


class BitwiseNot(Function):
    """Bitwise NOT for the in-place form; integer and bool tensors never require grad."""

    _complex_refusal = (NotImplementedError, "\"bitwise_not_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        array = x._data
        if array.dtype.kind in FLOAT_KINDS:
            raise _not_implemented("bitwise_not_cpu", array.dtype)
        return _wrap(np.invert(array))

    @staticmethod
    def backward(ctx, grad_output):
        return None


def bitwise_not_(input: Tensor) -> Tensor:
    check_tensors(input)
    return apply_inplace(BitwiseNot, input)


# ============================================================ more math
# sgn, frac, deg2rad/rad2deg, sinc, logaddexp/logaddexp2, hypot, copysign, xlogy, heaviside,
# nextafter, clamp_min/clamp_max and the gamma-family functions.
def _float_input(input: Any) -> np.ndarray:
    """The array of a unary op that computes in floats (integers become the default dtype)."""
    try:
        return float_array(input)
    except AttributeError as error:
        raise_argument_error(error)
        raise


_UNCHECKED = object()


def _tensor_other(op: str, other: Any, name: str = "other", input: Any = _UNCHECKED) -> None:
    """PyTorch's TypeError for a non-tensor in a binary op that takes tensors only (`input` is
    checked too when given)."""
    if input is not _UNCHECKED and not isinstance(input, TensorBase):
        raise argument_error(op, "input", 1, input)
    if not isinstance(other, TensorBase):
        raise argument_error(op, name, 2, other)


def _float_pair(a: Any, b: Any, kernel: str | None) -> tuple[Any, Any]:
    """Both operands promoted as PyTorch does; an integral result type is refused with `kernel`'s
    error, or (kernel None) computed in the default float dtype."""
    x, y = binary_arrays(a, b)
    for array in (x, y):
        if isinstance(array, np.ndarray) and array.dtype.kind in _INTEGRAL_KINDS:
            if kernel is not None:
                raise _not_implemented(kernel, array.dtype)
            default = dtypes.get_default_dtype().numpy_dtype
            x = x.astype(default) if isinstance(x, np.ndarray) else x
            y = y.astype(default) if isinstance(y, np.ndarray) else y
            break
    return x, y


def _safe_abs(z: Tensor) -> tuple[Tensor, Tensor]:
    """|z|, with 1 where z is 0 so dividing by it raises no flag, and the mask of those zeros."""
    magnitude = abs(z)
    is_zero = eq(magnitude, 0.0)
    return where(is_zero, 1.0, magnitude), is_zero


class Sgn(Function):
    _backward_name = "SgnBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        array = x._data
        if array.dtype.kind == "c":
            ctx.save_for_backward(x)
            magnitude = np.abs(array)
            is_zero = magnitude == 0
            # z / |z|, and 0 at 0 (divided by a safe 1 there), each part by the real |z| as
            # PyTorch divides (a complex division would rescale and give inf at denormals)
            divisor = np.where(is_zero, 1, magnitude)
            result = np.empty_like(array)
            result.real = np.where(is_zero, 0, array.real / divisor)
            result.imag = np.where(is_zero, 0, array.imag / divisor)
            return _wrap(result)
        ctx.shape = array.shape
        return _wrap(_sign_array(array))

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.saved_tensors:
            (x,) = ctx.saved_tensors
            # s = z/|z|: ds/dz = 1/(2|z|), ds/dconj(z) = -s^2/(2|z|), so the gradient is
            # (g - conj(g) s^2) / (2|z|), taken as 0 at 0
            magnitude, is_zero = _safe_abs(x)
            s = sgn(x)
            grad = (grad_output - grad_output.conj() * s * s) / (magnitude * 2.0)
            return where(is_zero, 0.0, grad)
        # the sign of a real number is piecewise constant
        return zeros_like_grad(grad_output, ctx.shape)


def sgn(input: Tensor) -> Tensor:
    """The sign of each element (for real tensors the same as sign)."""
    return Sgn.apply(input)


def sgn_(input: Tensor) -> Tensor:
    return apply_inplace(Sgn, input)


class Frac(Function):
    _backward_name = "FracBackward0"
    _complex_refusal = (NotImplementedError, "\"frac_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        array = x._data
        if array.dtype.kind not in FLOAT_KINDS:
            raise _not_implemented("frac_cpu", array.dtype)
        return _wrap(array - np.trunc(array))

    @staticmethod
    def backward(ctx, grad_output):
        # d/dx (x - trunc(x)) = 1 almost everywhere
        return grad_output


def frac(input: Tensor) -> Tensor:
    """The fractional part, input - trunc(input), with input's sign."""
    return Frac.apply(input)


def frac_(input: Tensor) -> Tensor:
    return apply_inplace(Frac, input)


_DEGREES_TO_RADIANS = math.pi / 180.0
_RADIANS_TO_DEGREES = 180.0 / math.pi


class _ScaleBy(Function):
    """Multiplication by a constant `_factor` (in the input's float dtype)."""

    _factor = 1.0

    @classmethod
    def forward(cls, ctx, x):
        array = _float_input(x)
        return _wrap(array * np.asarray(cls._factor, array.dtype))

    @classmethod
    def backward(cls, ctx, grad_output):
        return grad_output * cls._factor


class Deg2Rad(_ScaleBy):
    _backward_name = "Deg2RadBackward0"
    _complex_refusal = (RuntimeError, "deg2rad is not supported for complex tensors.")
    _factor = _DEGREES_TO_RADIANS


class Rad2Deg(_ScaleBy):
    _backward_name = "Rad2DegBackward0"
    _complex_refusal = (RuntimeError, "rad2deg is not supported for complex tensors.")
    _factor = _RADIANS_TO_DEGREES


def deg2rad(input: Tensor) -> Tensor:
    return Deg2Rad.apply(input)


def deg2rad_(input: Tensor) -> Tensor:
    return apply_inplace(Deg2Rad, input)


def rad2deg(input: Tensor) -> Tensor:
    return Rad2Deg.apply(input)


def rad2deg_(input: Tensor) -> Tensor:
    return apply_inplace(Rad2Deg, input)


class Sinc(Function):
    _backward_name = "SincBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        array = _float_input(x)
        ctx.save_for_backward(x)
        low = low_precision_of(array.dtype)
        array = widen(array)  # float16/bfloat16 in float32, rounded once
        angle = array * np.asarray(math.pi, array.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            result = np.sin(angle) / angle
        # sin(pi x) / (pi x) tends to 1 at 0, where the quotient is 0/0
        return _wrap(round_to(np.where(array == 0, np.ones((), array.dtype), result), low))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx sinc(x) = (cos(pi x) - sinc(x)) / x, 0 at x = 0; this form stays finite for
        # denormal x, where pi x^2 underflows to 0
        is_zero = eq(x, 0.0)
        safe = where(is_zero, 1.0, x)
        derivative = (cos(safe * math.pi) - sinc(safe)) / safe
        return grad_output * where(is_zero, 0.0, derivative)


def sinc(input: Tensor) -> Tensor:
    """The normalized sinc, sin(pi x) / (pi x), and 1 at x = 0."""
    return Sinc.apply(input)


def sinc_(input: Tensor) -> Tensor:
    return apply_inplace(Sinc, input)


def _complex_logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(exp(x) + exp(y)) for complex arrays as PyTorch computes it: log1p(exp(low - high)) +
    high, with high the operand of larger real part (y where the real parts tie)."""
    y_is_low = y.real < x.real
    low = np.where(y_is_low, y, x)
    high = np.where(y_is_low, x, y)
    with np.errstate(invalid="ignore", over="ignore"):
        result = np.log1p(np.exp(low - high)) + high
        # equal infinite real parts: -inf gives low itself, +inf the plain formula (low - high
        # would be nan)
        both_infinite = np.isinf(low.real) & (low.real == high.real)
        if both_infinite.any():
            plain = np.log(np.exp(low) + np.exp(high))
            result = np.where(both_infinite, np.where(low.real < 0, low, plain), result)
        is_nan = np.isnan(low)
        if is_nan.any():
            result = np.where(is_nan, complex(math.nan, math.nan), result)
    return result


class LogAddExp(Function):
    _backward_name = "LogaddexpBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "logaddexp_cpu")
        ctx.save_for_backward(a, b)
        if x.dtype.kind == "c":
            return _wrap(_broadcast_ufunc(_complex_logaddexp, x, y))
        return _wrap(_broadcast_ufunc(np.logaddexp, x, y))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d/da log(e^a + e^b) = 1 / (1 + e^(b - a)), and symmetrically for b
        if ctx.needs_input_grad[0]:
            grad_a = _grad_to(grad_output / (exp(b - a) + 1.0), a)
        if ctx.needs_input_grad[1]:
            grad_b = _grad_to(grad_output / (exp(a - b) + 1.0), b)
        return grad_a, grad_b


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """log(exp(input) + exp(other)), without overflow for large inputs."""
    _tensor_other("logaddexp", other, input=input)
    return LogAddExp.apply(input, other)


class LogAddExp2(Function):
    _backward_name = "Logaddexp2Backward0"
    _complex_refusal = (NotImplementedError, "\"logaddexp2_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "logaddexp2_cpu")
        ctx.save_for_backward(a, b)
        return _wrap(_broadcast_ufunc(np.logaddexp2, x, y))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d/da log2(2^a + 2^b) = 1 / (1 + 2^(b - a)), and symmetrically for b
        if ctx.needs_input_grad[0]:
            grad_a = _grad_to(grad_output / (_pow(2.0, b - a) + 1.0), a)
        if ctx.needs_input_grad[1]:
            grad_b = _grad_to(grad_output / (_pow(2.0, a - b) + 1.0), b)
        return grad_a, grad_b


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """log2(2**input + 2**other), without overflow for large inputs."""
    _tensor_other("logaddexp2", other, input=input)
    return LogAddExp2.apply(input, other)


class Hypot(Function):
    _backward_name = "HypotBackward0"
    _complex_refusal = (NotImplementedError, "\"hypot_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "hypot_cpu")
        result = _wrap(_broadcast_ufunc(np.hypot, x, y))
        ctx.save_for_backward(a, b, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, b, result = ctx.saved_tensors
        grad_a = grad_b = None
        # d/da sqrt(a^2 + b^2) = a / hypot(a, b)
        if ctx.needs_input_grad[0]:
            grad_a = _grad_to(grad_output * a / result, a)
        if ctx.needs_input_grad[1]:
            grad_b = _grad_to(grad_output * b / result, b)
        return grad_a, grad_b


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """sqrt(input**2 + other**2), without overflow or underflow in the squares."""
    _tensor_other("hypot", other, input=input)
    return Hypot.apply(input, other)


def hypot_(input: Tensor, other: Tensor) -> Tensor:
    _tensor_other("hypot_", other)
    check_complex_into_real(input, other)
    return apply_inplace(Hypot, input, other)


def _copysign_grad(grad_output: Tensor, x: Tensor, result: Tensor) -> Tensor:
    # d/dx copysign(x, y) = result / x: +-1, and 0 where x is 0
    is_zero = eq(x, 0.0)
    return _grad_to(grad_output * where(is_zero, 0.0, result / where(is_zero, 1.0, x)), x)


class Copysign(Function):
    _backward_name = "CopysignBackward0"
    _complex_refusal = (NotImplementedError, "\"copysign_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, None)
        result = _wrap(_broadcast_ufunc(np.copysign, x, y))
        ctx.save_for_backward(a, result)
        ctx.other_shape = b._data.shape
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, result = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = _copysign_grad(grad_output, a, result)
        if ctx.needs_input_grad[1]:
            # the result depends on other's sign only, which is piecewise constant
            grad_b = zeros_like_grad(grad_output, ctx.other_shape)
        return grad_a, grad_b


class CopysignScalar(Function):
    _backward_name = "CopysignBackward1"
    _complex_refusal = (NotImplementedError, "\"copysign_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, sign_source):
        x, y = _float_pair(a, sign_source, None)
        result = _wrap(np.copysign(x, np.asarray(y, x.dtype)))
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, result = ctx.saved_tensors
        return _copysign_grad(grad_output, a, result), None


_COPYSIGN_OVERLOADS = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)


def _copysign_other(op: str, other: Any) -> Any:
    if isinstance(other, TensorBase):
        return other
    try:
        return scalar_value(other)
    except TypeError:
        raise invalid_combination(
            op, (TensorBase.__new__(TensorBase), other), _COPYSIGN_OVERLOADS
        ) from None


def copysign(input: Tensor, other: Any) -> Tensor:
    """The magnitude of input with the sign of other (a tensor or a number)."""
    if not isinstance(input, TensorBase):
        raise invalid_combination("copysign", (input, other), _COPYSIGN_OVERLOADS)
    other = _copysign_other("copysign", other)
    _refuse_complex_number("copysign_cpu", input, other)
    if isinstance(other, TensorBase):
        return Copysign.apply(input, other)
    return CopysignScalar.apply(input, other)


def copysign_(input: Tensor, other: Any) -> Tensor:
    other = _copysign_other("copysign_", other)
    check_complex_into_real(input, other)
    _refuse_complex_number("copysign_cpu", input, other)
    if isinstance(other, TensorBase):
        return apply_inplace(Copysign, input, other)
    return apply_inplace(CopysignScalar, input, other)


def _refuse_complex_number(kernel: str, input: Any, other: Any) -> None:
    """`kernel`'s error for a Python complex operand, which no op class sees as complex."""
    if isinstance(input, complex) or isinstance(other, complex):
        raise _not_implemented(kernel, dtypes.result_type(input, other).numpy_dtype)


def _xlogy_array(x: Any, y: Any) -> np.ndarray:
    # 0 * log(y) is 0 (even at y = 0 or inf) unless y is nan
    x, y = np.asarray(x), np.asarray(y)
    try:
        shape = np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x.shape, y.shape) from None
    with np.errstate(divide="ignore", invalid="ignore"):
        product = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), product.dtype), product).reshape(shape)


class Xlogy(Function):
    _backward_name = "XlogyBackward0"
    _complex_refusal = (NotImplementedError, "\"xlogy_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, None)
        ctx.save_for_backward(a, b)
        return _wrap(_xlogy_array(x, y))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d/dx x log(y) = log(y), taken as 0 where x is 0 and log(y) is not real or -inf
        # (PyTorch's convention); d/dy x log(y) = x / y
        if ctx.needs_input_grad[0]:
            derivative = where(logical_and(eq(a, 0.0), le(b, 0.0)), 0.0, log(b))
            grad_a = _grad_to(grad_output * derivative, a)
        if ctx.needs_input_grad[1]:
            grad_b = _grad_to(grad_output * a / b, b)
        return grad_a, grad_b


class XlogyScalarSelf(Function):
    _backward_name = "XlogyBackward1"
    _complex_refusal = (NotImplementedError, "\"xlogy_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, None)
        ctx.save_for_backward(b)
        ctx.scalar = a
        return _wrap(_xlogy_array(np.asarray(x, y.dtype), y))

    @staticmethod
    def backward(ctx, grad_output):
        (b,) = ctx.saved_tensors
        return None, _grad_to(grad_output * ctx.scalar / b, b)


class XlogyScalarOther(Function):
    _backward_name = "XlogyBackward2"
    _complex_refusal = (NotImplementedError, "\"xlogy_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, None)
        ctx.save_for_backward(a)
        ctx.scalar = b
        return _wrap(_xlogy_array(x, np.asarray(y, x.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        scalar = ctx.scalar
        # d/dx x log(c) = log(c); where log(c) is not finite (c <= 0, nan) it is 0 at x = 0
        if scalar > 0:
            return _grad_to(grad_output * math.log(scalar), a), None
        log_value = -math.inf if scalar == 0 else math.nan
        return _grad_to(grad_output * where(eq(a, 0.0), 0.0, log_value), a), None


def xlogy(input: Any, other: Any) -> Tensor:
    """input * log(other), taken as 0 where input is 0 (unless other is nan)."""
    overloads = (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Number self, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    )
    if isinstance(input, TensorBase):
        if isinstance(other, TensorBase):
            return Xlogy.apply(input, other)
        try:
            scalar = scalar_value(other)
        except TypeError:
            raise invalid_combination("xlogy", (input, other), overloads) from None
        if isinstance(scalar, bool):
            scalar = int(scalar)
        _refuse_complex_number("xlogy_cpu", input, scalar)
        return XlogyScalarOther.apply(input, scalar)
    if isinstance(other, TensorBase):
        try:
            scalar = scalar_value(input)
        except TypeError:
            raise invalid_combination("xlogy", (input, other), overloads) from None
        _refuse_complex_number("xlogy_cpu", scalar, other)
        return XlogyScalarSelf.apply(scalar, other)
    raise invalid_combination("xlogy", (input, other), overloads)


def xlogy_(input: Tensor, other: Any) -> Tensor:
    if isinstance(other, TensorBase):
        check_complex_into_real(input, other)
        return apply_inplace(Xlogy, input, other)
    return apply_inplace(XlogyScalarOther, input, inplace_operand(other, "xlogy_"))


class Heaviside(Function):
    # PyTorch defines no derivative for heaviside: its node fails when backward reaches it.
    _backward_name = "NotImplemented"
    _complex_refusal = (RuntimeError, "heaviside is not yet implemented for complex tensors.")
    _op_name = "heaviside"

    @staticmethod
    def forward(ctx, x, values):
        a, b = x._data, values._data
        if a.dtype != b.dtype:
            raise RuntimeError(
                "heaviside is not yet implemented for tensors with different dtypes."
            )
        if a.dtype.kind == "b":
            raise _not_implemented("heaviside_cpu", a.dtype)
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise broadcast_error(a.shape, b.shape) from None
        # 0 below zero (and at nan), 1 above it, `values` at zero
        step = (a > 0).astype(a.dtype)
        return _wrap(np.where(a == 0, b, step).reshape(shape))

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where input < 0, 1 where input > 0, values where input == 0."""
    _tensor_other("heaviside", values, "values", input=input)
    return Heaviside.apply(input, values)


def heaviside_(input: Tensor, values: Tensor) -> Tensor:
    _tensor_other("heaviside_", values, "values")
    return apply_inplace(Heaviside, input, values)


class NextAfter(Function):
    _backward_name = "NextafterBackward0"
    _complex_refusal = (NotImplementedError, "\"nextafter_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "nextafter_cpu")
        ctx.shapes = (a._data.shape, b._data.shape)
        return _wrap(_broadcast_ufunc(np.nextafter, x, y))

    @staticmethod
    def backward(ctx, grad_output):
        # the next representable number is piecewise constant in both arguments
        input_shape, other_shape = ctx.shapes
        return (
            zeros_like_grad(grad_output, input_shape),
            zeros_like_grad(grad_output, other_shape),
        )


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next floating-point number after input in the direction of other."""
    _tensor_other("nextafter", other, input=input)
    return NextAfter.apply(input, other)


def nextafter_(input: Tensor, other: Tensor) -> Tensor:
    _tensor_other("nextafter_", other)
    check_complex_into_real(input, other)
    return apply_inplace(NextAfter, input, other)


class ClampMin(Clamp):
    _backward_name = "ClampMinBackward0"
    _complex_refusal = (NotImplementedError, "clamp is not supported for complex types")

    @staticmethod
    def forward(ctx, x, low):
        return Clamp.forward(ctx, x, low, None)

    @staticmethod
    def backward(ctx, grad_output):
        return Clamp.backward(ctx, grad_output)[:2]


class ClampMax(Clamp):
    _backward_name = "ClampMaxBackward0"
    _complex_refusal = (NotImplementedError, "clamp is not supported for complex types")

    @staticmethod
    def forward(ctx, x, high):
        return Clamp.forward(ctx, x, None, high)

    @staticmethod
    def backward(ctx, grad_output):
        return Clamp.backward(ctx, grad_output)[:2]


class ClampMinTensor(Function):
    _backward_name = "ClampMinBackward1"
    _complex_refusal = (NotImplementedError, "\"maximum_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, low):
        ctx.save_for_backward(x, low)
        return _wrap(_clamp_tensor_array(x, low, None))

    @staticmethod
    def backward(ctx, grad_output):
        x, low = ctx.saved_tensors
        grad_x = grad_low = None
        # x passes where x >= low; low is the result elsewhere
        if ctx.needs_input_grad[0]:
            grad_x = _grad_to(where(ge(x, low), grad_output, 0.0), x)
        if ctx.needs_input_grad[1]:
            grad_low = _grad_to(where(lt(x, low), grad_output, 0.0), low)
        return grad_x, grad_low


class ClampMaxTensor(Function):
    _backward_name = "ClampMaxBackward1"
    _complex_refusal = (NotImplementedError, "\"minimum_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, high):
        ctx.save_for_backward(x, high)
        return _wrap(_clamp_tensor_array(x, None, high))

    @staticmethod
    def backward(ctx, grad_output):
        x, high = ctx.saved_tensors
        grad_x = grad_high = None
        # x passes where x <= high; high is the result elsewhere
        if ctx.needs_input_grad[0]:
            grad_x = _grad_to(where(le(x, high), grad_output, 0.0), x)
        if ctx.needs_input_grad[1]:
            grad_high = _grad_to(where(gt(x, high), grad_output, 0.0), high)
        return grad_x, grad_high


def _one_sided_bound(op: str, input: Any, bound: Any, name: str) -> Any:
    if isinstance(bound, TensorBase):
        return bound
    if isinstance(bound, complex):
        raise NotImplementedError("clamp is not supported for complex types")
    try:
        return scalar_value(bound)
    except TypeError:
        raise invalid_combination(
            op, (input, bound),
            (f"(Tensor input, Tensor {name}, *, Tensor out = None)",
             f"(Tensor input, Number {name}, *, Tensor out = None)"),
        ) from None  # fmt: skip


def _check_inplace_clamp(input: Tensor, bound: Any) -> None:
    target = _number_clamp_dtype(input, bound, None)
    if not np.can_cast(target, input._data.dtype, "same_kind"):
        # PyTorch names the output type by its C type here, as for clamp_
        raise RuntimeError(
            f"result type {_dtype_name(target)} can't be cast to the desired output type "
            f"{_cpp_name(input._data.dtype)}"
        )


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """Limit input from below: max(input, min), nan propagating."""
    min = _one_sided_bound("clamp_min", input, min, "min")
    if isinstance(min, TensorBase):
        return ClampMinTensor.apply(input, min)
    return ClampMin.apply(input, min)


def clamp_min_(input: Tensor, min: Any) -> Tensor:
    min = _one_sided_bound("clamp_min_", input, min, "min")
    if isinstance(min, TensorBase):
        check_complex_into_real(input, min)
        return apply_inplace(ClampMinTensor, input, min)
    _check_inplace_clamp(input, min)
    return apply_inplace(ClampMin, input, min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """Limit input from above: min(input, max), nan propagating."""
    max = _one_sided_bound("clamp_max", input, max, "max")
    if isinstance(max, TensorBase):
        return ClampMaxTensor.apply(input, max)
    return ClampMax.apply(input, max)


def clamp_max_(input: Tensor, max: Any) -> Tensor:
    max = _one_sided_bound("clamp_max_", input, max, "max")
    if isinstance(max, TensorBase):
        check_complex_into_real(input, max)
        return apply_inplace(ClampMaxTensor, input, max)
    _check_inplace_clamp(input, max)
    return apply_inplace(ClampMax, input, max)


# ------------------------------------------------------ gamma family, erfinv, i0
def _special_result(function: Any, x: Tensor, native: bool = False) -> np.ndarray:
    """`function` on x's values, in x's float dtype (integers in the default dtype): computed in
    float64, or in that dtype itself when `native` (float32 for float16/bfloat16, as PyTorch)."""
    array = _float_input(x)
    dtype = array.dtype
    # computed on a 1-d array, so the kernels may index a 0-d input too
    flat = widen(array.reshape(-1)) if native else array.reshape(-1).astype(np.float64, copy=False)
    return round_to(function(flat), dtype).reshape(array.shape)


class Lgamma(Function):
    _backward_name = "LgammaBackward0"
    _complex_refusal = (NotImplementedError, "\"lgamma_vml_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_special_result(_gamma.lgamma, x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log|Gamma(x)| = digamma(x)
        return grad_output * digamma(x)


def lgamma(input: Tensor) -> Tensor:
    """log|Gamma(input)|."""
    return Lgamma.apply(input)


def lgamma_(input: Tensor) -> Tensor:
    return apply_inplace(Lgamma, input)


def _polygamma_array(n: int, array: np.ndarray) -> np.ndarray:
    if n == 0:
        return _gamma.digamma(array)
    if n == 1:
        return _gamma.trigamma(array)
    # polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x)
    sign = 1.0 if n % 2 else -1.0
    with np.errstate(all="ignore"):
        return (sign * math.factorial(n)) * _gamma.zeta(n + 1.0, array)


class Polygamma(Function):
    _backward_name = "PolygammaBackward0"
    _complex_refusal = (NotImplementedError, "\"polygamma\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        # digamma in float64 (the nearest to the true value); trigamma and zeta in x's dtype,
        # whose rounding near the poles PyTorch's float32 results carry
        native = n > 0
        return _wrap(_special_result(lambda array: _polygamma_array(n, array), x, native=native))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx polygamma(n, x) = polygamma(n + 1, x)
        return grad_output * Polygamma.apply(x, ctx.n + 1), None


class Digamma(Polygamma):
    _backward_name = "DigammaBackward0"
    _complex_refusal = (NotImplementedError, "\"digamma\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        return Polygamma.forward(ctx, x, 0)

    @staticmethod
    def backward(ctx, grad_output):
        return Polygamma.backward(ctx, grad_output)[0]


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma: -inf at +0, nan at negative integers."""
    return Digamma.apply(input)


def digamma_(input: Tensor) -> Tensor:
    return apply_inplace(Digamma, input)


def _polygamma_order(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(
            f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


def _check_polygamma_input(input: Any, n: int) -> None:
    """PyTorch's error for complex input, which names the kernel of order n (digamma, trigamma;
    polygamma from n = 2 on, the class's own error)."""
    if n < 2 and isinstance(input, TensorBase) and input._data.dtype.kind == "c":
        raise _not_implemented("digamma" if n == 0 else "trigamma", input._data.dtype)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma."""
    n = _polygamma_order(n)
    _check_polygamma_input(input, n)
    return Polygamma.apply(input, n)


def polygamma_(input: Tensor, n: int) -> Tensor:
    n = _polygamma_order(n)
    _check_polygamma_input(input, n)
    return apply_inplace(Polygamma, input, n)


class Mvlgamma(Function):
    _backward_name = "MvlgammaBackward0"
    _complex_refusal = (NotImplementedError, "\"arange_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p

        # log of the multivariate gamma: p(p-1)/4 log(pi) + sum_j lgamma(x - j/2), j < p
        def multivariate(array: np.ndarray) -> np.ndarray:
            offsets = -0.5 * np.arange(p, dtype=np.float64)
            terms = _gamma.lgamma(array[..., None] + offsets)
            return p * (p - 1) / 4.0 * math.log(math.pi) + terms.sum(-1)

        return _wrap(_special_result(multivariate, x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx = sum_j digamma(x - j/2), each argument formed as x + offset (so x = -0.0 meets
        # +0.0, as in PyTorch), summed from the largest offset down
        derivative = None
        for j in range(ctx.p - 1, -1, -1):
            term = digamma(x + (0.0 if j == 0 else -0.5 * j))
            derivative = term if derivative is None else derivative + term
        return grad_output * derivative, None


def _mvlgamma_order(p: Any) -> int:
    if isinstance(p, bool) or not isinstance(p, int | np.integer):
        raise TypeError(
            f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}"
        )
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return int(p)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension p."""
    return Mvlgamma.apply(input, _mvlgamma_order(p))


def mvlgamma_(input: Tensor, p: int) -> Tensor:
    return apply_inplace(Mvlgamma, input, _mvlgamma_order(p))


def _igamma_array(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """The regularized incomplete gamma of broadcast a and x, computed in float64 and rounded
    to their float dtype."""
    try:
        a_full, x_full = np.broadcast_arrays(a, x)
    except ValueError:
        raise broadcast_error(a.shape, x.shape) from None
    flat = _gamma.igamma(a_full.reshape(-1), x_full.reshape(-1), upper)
    return flat.astype(a_full.dtype, copy=False).reshape(a_full.shape)


class Igamma(Function):
    _backward_name = "IgammaBackward0"
    _complex_refusal = (NotImplementedError, "\"igamma_cpu\" not implemented for '{dtype}'")
    _upper = False

    @classmethod
    def forward(cls, ctx, a, x):
        kernel = "igammac_cpu" if cls._upper else "igamma_cpu"
        a_array, x_array = _float_pair(a, x, kernel)
        ctx.save_for_backward(a, x)
        return _wrap(_igamma_array(a_array, x_array, cls._upper))

    @classmethod
    def backward(cls, ctx, grad_output):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            # as PyTorch, which defines no derivative in a (it needs sums of digamma-weighted
            # series)
            name = "igammac" if cls._upper else "igamma"
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        grad_x = None
        if ctx.needs_input_grad[1]:
            # d/dx P(a, x) = x^(a - 1) e^(-x) / Gamma(a) = -d/dx Q(a, x)
            density = exp((a - 1.0) * log(x) - x - lgamma(a))
            grad_x = _grad_to(-grad_output * density if cls._upper else grad_output * density, x)
        return None, grad_x


class Igammac(Igamma):
    _backward_name = "IgammacBackward0"
    _complex_refusal = (NotImplementedError, "\"igammac_cpu\" not implemented for '{dtype}'")
    _upper = True


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other)."""
    _tensor_other("igamma", other, input=input)
    return Igamma.apply(input, other)


def igamma_(input: Tensor, other: Tensor) -> Tensor:
    _tensor_other("igamma_", other)
    check_complex_into_real(input, other)
    return apply_inplace(Igamma, input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    _tensor_other("igammac", other, input=input)
    return Igammac.apply(input, other)


def igammac_(input: Tensor, other: Tensor) -> Tensor:
    _tensor_other("igammac_", other)
    check_complex_into_real(input, other)
    return apply_inplace(Igammac, input, other)


_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


class Erfinv(Function):
    _backward_name = "ErfinvBackward0"
    _complex_refusal = (NotImplementedError, "\"erfinv_vml_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        steps = 3 if _float_input(x).dtype == np.float64 else 1
        result = _wrap(_special_result(lambda y: _gamma.erfinv(y, steps), x))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dy erfinv(y) = sqrt(pi)/2 exp(erfinv(y)^2)
        return grad_output * (exp(result * result) * _HALF_SQRT_PI)


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function on [-1, 1]."""
    return Erfinv.apply(input)


def erfinv_(input: Tensor) -> Tensor:
    return apply_inplace(Erfinv, input)


class I0(Function):
    _backward_name = "I0Backward0"
    _complex_refusal = (NotImplementedError, "\"i0_vml_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(all="ignore"):
            return _wrap(_special_result(np.i0, x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx I0(x) = I1(x)
        return grad_output * I1.apply(x)


class I1(Function):
    _backward_name = "SpecialI1Backward0"
    _complex_refusal = (NotImplementedError, "\"i1_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        result = _wrap(_special_result(_gamma.i1, x))
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        # d/dx I1(x) = I0(x) - I1(x) / x, which tends to 1/2 at 0
        is_tiny, safe = _tiny_and_safe(x)
        return grad_output * where(is_tiny, 0.5, I0.apply(safe) - result / safe)


def _tiny_and_safe(x: Tensor) -> tuple[Tensor, Tensor]:
    """Where |x| is not above the dtype's epsilon (nan included), and x with those elements
    set to epsilon: PyTorch's guard for the 1/x of the i1 and i1e derivatives."""
    epsilon = float(np.finfo(x._data.dtype).eps) if x._data.dtype.kind == "f" else 2.0**-23
    is_tiny = ~(abs(x) > epsilon)
    return is_tiny, where(is_tiny, epsilon, x)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order zero."""
    return I0.apply(input)


def i0_(input: Tensor) -> Tensor:
    return apply_inplace(I0, input)


# --------------------------------------------------- inverse hyperbolic functions, exp2
class Asinh(Function):
    _backward_name = "AsinhBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.arcsinh(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx asinh(x) = 1/sqrt(x^2 + 1)
        return grad_output * rsqrt(x * x + 1.0)


def asinh(input: Tensor) -> Tensor:
    return Asinh.apply(input)


arcsinh = asinh


def _inplace_without_derivative(base: type, name: str) -> type:
    """PyTorch records `name`_ under its own grad_fn name (`<Base>Backward1`) and defines no
    derivative for it: the in-place twin of `base` whose backward says so."""

    def backward(ctx, grad_output):
        raise NotImplementedError(
            f"the derivative for 'inplace version of {name}' is not implemented."
        )

    namespace = {"_backward_name": f"{base.__name__}Backward1", "backward": staticmethod(backward)}
    return type(f"{base.__name__}Inplace", (base,), namespace)


AsinhInplace = _inplace_without_derivative(Asinh, "asinh")


def asinh_(input: Tensor) -> Tensor:
    return apply_inplace(AsinhInplace, input)


arcsinh_ = asinh_


class Acosh(Function):
    _backward_name = "AcoshBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.arccosh(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        if x._data.dtype.kind == "c":
            # 1/(sqrt(z + 1) sqrt(z - 1)), PyTorch's form: it keeps acosh's branch, where
            # 1/sqrt(z^2 - 1) flips sign across the cut of sqrt
            return grad_output * (rsqrt(x + 1.0) * rsqrt(x - 1.0))
        # d/dx acosh(x) = 1/sqrt(x^2 - 1)
        return grad_output * rsqrt(x * x - 1.0)


def acosh(input: Tensor) -> Tensor:
    return Acosh.apply(input)


arccosh = acosh


AcoshInplace = _inplace_without_derivative(Acosh, "acosh")


def acosh_(input: Tensor) -> Tensor:
    return apply_inplace(AcoshInplace, input)


arccosh_ = acosh_


class Atanh(Function):
    _backward_name = "AtanhBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(np.arctanh(float_array(x)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx atanh(x) = 1/(1 - x^2)
        return grad_output / (1.0 - x * x)


def atanh(input: Tensor) -> Tensor:
    return Atanh.apply(input)


arctanh = atanh


AtanhInplace = _inplace_without_derivative(Atanh, "atanh")


def atanh_(input: Tensor) -> Tensor:
    return apply_inplace(AtanhInplace, input)


arctanh_ = atanh_


_LN2 = math.log(2.0)


class Exp2(Function):
    _backward_name = "Exp2Backward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.exp2(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx 2^x = 2^x ln 2
        return grad_output * (result * _LN2)


def exp2(input: Tensor) -> Tensor:
    return Exp2.apply(input)


def exp2_(input: Tensor) -> Tensor:
    return apply_inplace(Exp2, input)


def is_distributed(input: Tensor) -> bool:
    """False: a lucid tensor lives in one process (lucid.distributed moves copies)."""
    check_tensors(input)
    return False


class Angle(Function):
    """The argument of a number: atan2(imag, real) for complex; for a real number pi for
    negatives, 0 otherwise, NaN for NaN."""

    _backward_name = "AngleBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        array = float_array(x)
        if array.dtype.kind == "c":
            ctx.save_for_backward(x)
            return _wrap(np.angle(array))
        ctx.shape = array.shape
        # -0.0 is not negative, so its angle is 0 as PyTorch gives.
        result = np.where(array < 0, np.asarray(math.pi, array.dtype), array.dtype.type(0))
        return _wrap(np.where(np.isnan(array), array, result))

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.saved_tensors:
            (x,) = ctx.saved_tensors
            # the gradient of arg(z) is g i z / |z|^2, taken as 0 at 0
            magnitude, is_zero = _safe_abs(x)
            grad = grad_output * x * 1j / (magnitude * magnitude)
            return where(is_zero, 0.0, grad)
        # piecewise constant
        return zeros_like_grad(grad_output, ctx.shape)


def angle(input: Tensor) -> Tensor:
    check_tensors(input)
    return Angle.apply(input)
