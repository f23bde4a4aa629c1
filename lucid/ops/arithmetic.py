"""Arithmetic ops: add, sub, mul, div, pow, neg, reciprocal, maximum/minimum, fmax/fmin, fmod,
remainder, addcmul, addcdiv, gcd, lcm, ldexp, frexp, each with its in-place form below it."""

from __future__ import annotations

import cmath
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import argument_error
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function, op_name
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import (
    apply_inplace,
    backward_on_arrays,
    can_write_into,
    check_complex_into_real,
    check_number,
    check_real_number,
    check_tensors,
    finish_array_backward,
    inplace_operand,
    invalid_combination,
    not_implemented,
    result_type,
    zeros_like_grad,
)
from lucid.ops._promote import (
    binary_arrays,
    float_array,
    low_precision_of,
    opmath_arrays,
    round_to,
    scalar_value,
    widen,
)
from lucid.ops.broadcast import broadcast_error, common_shape, sum_to
from lucid.ops.fills import to

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "neg", "negative", "pow", "reciprocal", "maximum", "minimum", "fmod",
    "remainder", "neg_", "addcmul", "addcdiv", "gcd", "gcd_", "lcm", "lcm_", "ldexp", "ldexp_",
    "frexp", "negative_", "reciprocal_", "positive", "fmax", "fmin",
]  # fmt: skip

_INTEGRAL_KINDS = "iub"
_INT32 = 1 << 31


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, TensorBase) else ()


def _binary(ufunc: Any, a: Any, b: Any) -> np.ndarray:
    # The common case first: a float32/float64 tensor and a Python float, which NumPy
    # computes in the tensor's dtype as promotion asks (what opmath_arrays would hand over).
    if b.__class__ is float and a.__class__ is not float:
        x = a._data
        if x.dtype.kind == "f" and x.dtype.itemsize >= 4:
            return ufunc(x, b)
    elif a.__class__ is float and b.__class__ is not float:
        y = b._data
        if y.dtype.kind == "f" and y.dtype.itemsize >= 4:
            return ufunc(a, y)
    x, y, low = opmath_arrays(a, b)
    try:
        return round_to(ufunc(x, y), low)
    except ValueError:
        raise broadcast_error(_shape(a), _shape(b)) from None
    except OverflowError:
        # A Python int outside an integer tensor's range wraps around, as in PyTorch.
        return ufunc(*_wrap_python_ints(x, y))


def _wrap_python_ints(x: Any, y: Any) -> tuple[Any, Any]:
    if isinstance(x, int):
        x = np.array(x).astype(y.dtype)
    if isinstance(y, int):
        y = np.array(y).astype(x.dtype)
    return x, y


# ----------------------------------------------------------------- arguments
def _operand(value: Any, op: str, name: str, position: int) -> Any:
    """A non-tensor operand as a Python scalar, or PyTorch's TypeError for anything else."""
    try:
        return scalar_value(value)
    except TypeError:
        raise argument_error(op, name, position, value) from None


def _scalar_tensor(value: Any) -> Tensor:
    """A Python scalar as the 0-d tensor PyTorch makes of it when both operands are scalars."""
    return _wrap(np.asarray(value, dtypes.result_type(value).numpy_dtype))


def _overload_error(op: str, args: tuple, signatures: tuple[str, ...]) -> TypeError:
    got = ", ".join("Tensor" if isinstance(a, TensorBase) else type(a).__name__ for a in args)
    lines = "".join(f"\n * {signature}" for signature in signatures)
    return TypeError(
        f"{op}() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:{lines}\n"
    )


def _check_alpha(input: Any, other: Any, alpha: Any, op: str) -> None:
    check_number(alpha, op, "alpha", None)
    result = dtypes.result_type(input, other)
    if isinstance(alpha, bool) and result is not dtypes.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if result.is_complex:
        return
    if isinstance(alpha, complex):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )
    if not result.is_floating_point and isinstance(alpha, float):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )


def _inplace_operand(value: Any, op: str) -> Any:
    if isinstance(value, TensorBase):
        return value
    return _operand(value, op, "other", 1)


def _require_tensor(value: Any, op: str, name: str, position: int) -> None:
    if not isinstance(value, TensorBase):
        raise argument_error(op, name, position, value)


# ------------------------------------------------------------------ add / sub
class Add(Function):
    _backward_name = "AddBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, a, b, alpha, out=None):
        ctx.a_shape = _shape(a)
        ctx.b_shape = _shape(b)
        ctx.alpha = alpha
        if can_write_into(out, b):
            # add_ (the optimizers' update): accumulate into a's own storage, no temporary
            value = b._data if isinstance(b, TensorBase) else b
            try:
                np.add(out, value if alpha == 1 else value * alpha, out=out)
                return a
            except ValueError:
                pass
        if alpha == 1:
            return _wrap(_binary(np.add, a, b))
        x, y, low = opmath_arrays(a, b)
        try:
            return _wrap(round_to(np.add(x, y * alpha), low))
        except ValueError:
            raise broadcast_error(ctx.a_shape, ctx.b_shape) from None

    @staticmethod
    def backward(ctx, grad_output):
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output, ctx.a_shape)
        if ctx.needs_input_grad[1]:
            grad_b = grad_output if ctx.alpha == 1 else grad_output * ctx.alpha
            grad_b = sum_to(grad_b, ctx.b_shape)
        return grad_a, grad_b, None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # a float tensor plus a Python float or a tensor of its dtype and shape, alpha 1: one
        # np.add (what _binary computes), and the gradient passed on as it is (sum_to's)
        a, b, alpha = args
        if alpha.__class__ is not int or alpha != 1 or a.dtype.kind != "f" or a.dtype.itemsize < 4:
            return None
        if b.__class__ is not float and not (
            b.__class__ is np.ndarray and b.dtype is a.dtype and b.shape == a.shape
        ):
            return None
        needs_a, needs_b = needs_input_grad[:2]

        def backward(grad, out, a, b, alpha):
            return (grad if needs_a else None, grad if needs_b else None, None)

        return (lambda a, b, alpha: np.add(a, b)), backward, Add

    @staticmethod
    def flat_inplace(args, needs_input_grad):
        # add_ of a tensor of the same dtype and shape (the optimizers' update): forward's
        # write into a's own storage
        a, b, alpha = args
        if b.__class__ is not np.ndarray or b.dtype is not a.dtype or b.shape != a.shape:
            return None
        if a.dtype.kind != "f" or a.dtype.itemsize < 4 or not a.flags.writeable:
            return None  # can_write_into's cases

        def forward(a, b, alpha):
            np.add(a, b if alpha == 1 else b * alpha, out=a)
            return a

        return forward, None, Add


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input + alpha * other, broadcasting."""
    if not isinstance(other, TensorBase) and other.__class__ is not float:
        other = _operand(other, "add", "other", 2)
    if not isinstance(input, TensorBase):
        input = _operand(input, "add", "input", 1)
        if not isinstance(other, TensorBase):
            input = _scalar_tensor(input)
    if alpha.__class__ is not int or alpha != 1:
        _check_alpha(input, other, alpha, "add")
    return Add.apply(input, other, alpha)


def add_(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    other = _inplace_operand(other, "add_")
    if alpha.__class__ is not int or alpha != 1:
        _check_alpha(input, other, alpha, "add_")
    return apply_inplace(Add, input, other, alpha)


class Sub(Function):
    _backward_name = "SubBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, a, b, alpha, out=None):
        ctx.a_shape = _shape(a)
        ctx.b_shape = _shape(b)
        ctx.alpha = alpha
        if can_write_into(out, b):
            value = b._data if isinstance(b, TensorBase) else b
            try:
                np.subtract(out, value if alpha == 1 else value * alpha, out=out)
                return a
            except ValueError:
                pass
        if alpha == 1:
            return _wrap(_binary(np.subtract, a, b))
        x, y, low = opmath_arrays(a, b)
        try:
            return _wrap(round_to(np.subtract(x, y * alpha), low))
        except ValueError:
            raise broadcast_error(ctx.a_shape, ctx.b_shape) from None

    @staticmethod
    def backward(ctx, grad_output):
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output, ctx.a_shape)
        if ctx.needs_input_grad[1]:
            grad_b = -grad_output if ctx.alpha == 1 else grad_output * -ctx.alpha
            grad_b = sum_to(grad_b, ctx.b_shape)
        return grad_a, grad_b, None


class Rsub(Sub):
    """`rsub(input, other)` = other - alpha * input, with tensor `other`."""

    _backward_name = "RsubBackward0"


class RsubScalar(Sub):
    """`scalar - tensor`: PyTorch records it under its own name."""

    _backward_name = "RsubBackward1"


def _is_bool(value: Any) -> bool:
    return value.__class__ is bool or (
        isinstance(value, TensorBase) and value._data.dtype == np.bool_
    )


def _check_no_bool(input: Any, other: Any) -> None:
    input_is_bool = _is_bool(input)
    other_is_bool = _is_bool(other)
    if input_is_bool and other_is_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if input_is_bool or other_is_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _sub_operands(input: Any, other: Any, alpha: Any, op: str) -> tuple[Any, Any]:
    if not isinstance(other, TensorBase):
        other = _operand(other, op, "other", 2)
    if not isinstance(input, TensorBase):
        input = _operand(input, op, "input", 1)
        if not isinstance(other, TensorBase):
            input = _scalar_tensor(input)
    _check_no_bool(input, other)
    if alpha.__class__ is not int or alpha != 1:
        _check_alpha(input, other, alpha, op)
    return input, other


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input - alpha * other, broadcasting."""
    input, other = _sub_operands(input, other, alpha, "sub")
    return Sub.apply(input, other, alpha)


subtract = sub


def sub_(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    other = _inplace_operand(other, "sub_")
    _check_no_bool(input, other)
    if alpha.__class__ is not int or alpha != 1:
        _check_alpha(input, other, alpha, "sub_")
    return apply_inplace(Sub, input, other, alpha)


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """other - alpha * input (also the reflected `other - input`)."""
    if not isinstance(input, TensorBase):
        raise invalid_combination("rsub", (input, other), (
            "(Tensor input, Tensor other, *, Number alpha = 1)",
            "(Tensor input, Number other, Number alpha = 1)",
        ))  # fmt: skip
    input, other = _sub_operands(input, other, alpha, "rsub")
    if isinstance(other, TensorBase):
        return Rsub.apply(other, input, alpha)
    return RsubScalar.apply(other, input, alpha)


# ------------------------------------------------------------------------ mul
class Mul(Function):
    _backward_name = "MulBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, a, b, out=None):
        needs_a, needs_b = ctx.needs_input_grad
        if needs_a or needs_b:
            # each gradient needs only the other operand: save just what backward will use
            ctx.save_for_backward(a if needs_b else None, b if needs_a else None)
            ctx.a_shape = a._data.shape
            ctx.b_shape = b._data.shape
        x, y = a._data, b._data
        if not needs_b and can_write_into(out, b):
            try:
                np.multiply(out, y, out=out)
                return a
            except ValueError:
                pass
        if x.dtype is y.dtype and x.shape == y.shape and x.dtype.itemsize != 2:
            return _wrap(np.multiply(x, y))
        # (float16/bfloat16 go through float32: a product past the dtype's largest value
        # then raises the overflow flag when rounded)
        return _wrap(_binary(np.multiply, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        if backward_on_arrays():
            grads = _mul_backward_arrays(ctx, grad_output, a, b)
            if grads is not None:
                return grads
        grad_a = grad_b = None
        # d(ab)/da = b, d(ab)/db = a
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output * b, ctx.a_shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(grad_output * a, ctx.b_shape)
        return grad_a, grad_b

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # the forward and array backward above, for float operands of one dtype and shape
        x, y = args
        if x.dtype is not y.dtype or x.shape != y.shape or x.dtype.kind != "f":
            return None
        if x.dtype.itemsize == 2:
            return None
        needs_a, needs_b = needs_input_grad

        def backward(grad, out, a, b):
            return (np.multiply(grad, b) if needs_a else None,
                    np.multiply(grad, a) if needs_b else None)  # fmt: skip

        return np.multiply, backward, Mul


def _mul_backward_arrays(ctx, grad_output, a, b):
    """Mul's backward where no operand broadcasts or promotes: the products `grad_output * b`
    and `grad_output * a` compute (Mul's forward on equal dtypes and shapes), on arrays.
    None where the op path is needed."""
    g = grad_output._data
    needs_a, needs_b = ctx.needs_input_grad
    for needed, other, shape in ((needs_a, b, ctx.__dict__.get("a_shape")),
                                 (needs_b, a, ctx.__dict__.get("b_shape"))):  # fmt: skip
        if needed:
            array = other._data
            if array.dtype is not g.dtype or array.shape != g.shape or shape != g.shape:
                return None
    if g.dtype.itemsize == 2:
        return None
    grad_a = grad_b = None
    # one product at a time, each handing on its own flags, as the two ops would
    if needs_a:
        grad_a = _wrap(np.multiply(g, b._data))
        finish_array_backward(Mul, (grad_output, b), (grad_a,))
    if needs_b:
        grad_b = _wrap(np.multiply(g, a._data))
        finish_array_backward(Mul, (grad_output, a), (grad_b,))
    return grad_a, grad_b


class MulScalar(Function):
    """A tensor times a Python scalar, in either order: backward needs only the scalar."""

    _backward_name = "MulBackward0"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # PyTorch saves the scalar, as a tensor

    @staticmethod
    def forward(ctx, x, scalar, out=None):
        ctx.scalar = scalar
        if can_write_into(out, scalar):
            np.multiply(out, scalar, out=out)
            return x
        return _wrap(_binary(np.multiply, x, scalar))

    @staticmethod
    def backward(ctx, grad_output):
        scalar = ctx.scalar
        g = grad_output._data
        if (
            (scalar.__class__ is float or (scalar.__class__ is int and -_INT32 < scalar < _INT32))
            and g.dtype.kind == "f"
            and g.dtype.itemsize >= 4
            and backward_on_arrays()
        ):
            # what `grad_output * scalar` computes (MulScalar's forward), on arrays
            grad = _wrap(np.multiply(g, scalar))
            finish_array_backward(MulScalar, (grad_output, scalar), (grad,))
            return grad, None
        return grad_output * scalar, None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # a float32/float64 tensor and a Python float: _binary's np.multiply, both ways
        x, scalar = args
        if scalar.__class__ is not float or x.dtype.kind != "f" or x.dtype.itemsize < 4:
            return None

        def backward(grad, out, x, scalar):
            return np.multiply(grad, scalar), None

        return np.multiply, backward, MulScalar


def mul(input: Any, other: Any) -> Tensor:
    """input * other, broadcasting."""
    if isinstance(other, TensorBase):
        if isinstance(input, TensorBase):
            return Mul.apply(input, other)
        return MulScalar.apply(other, _operand(input, "mul", "input", 1))
    if other.__class__ is not float and other.__class__ is not int:
        other = _operand(other, "mul", "other", 2)
    if not isinstance(input, TensorBase):
        input = _scalar_tensor(_operand(input, "mul", "input", 1))
    return MulScalar.apply(input, other)


multiply = mul


def mul_(input: Tensor, other: Any) -> Tensor:
    other = _inplace_operand(other, "mul_")
    if isinstance(other, TensorBase):
        return apply_inplace(Mul, input, other)
    return apply_inplace(MulScalar, input, other)


# ------------------------------------------------------------------------ div
def _true_divide(a: Any, b: Any) -> np.ndarray:
    x, y, low = opmath_arrays(a, b)
    x_integral = (
        x.dtype.kind in _INTEGRAL_KINDS if isinstance(x, np.ndarray) else x.__class__ is not float
    )
    y_integral = (
        y.dtype.kind in _INTEGRAL_KINDS if isinstance(y, np.ndarray) else y.__class__ is not float
    )
    if x_integral and y_integral:
        # True division of integers gives the default float dtype.
        default = dtypes.get_default_dtype().numpy_dtype
        if isinstance(x, np.ndarray):
            x = x.astype(default)
        if isinstance(y, np.ndarray):
            y = y.astype(default)
    try:
        return round_to(np.true_divide(x, y), low)
    except ValueError:
        raise broadcast_error(_shape(a), _shape(b)) from None


class Div(Function):
    """Division by a tensor (the dividend may be a Python scalar)."""

    _backward_name = "DivBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, a, b, out=None):
        needs_a, needs_b = ctx.needs_input_grad
        if needs_a or needs_b:
            a_is_tensor = isinstance(a, TensorBase)
            ctx.save_for_backward(a if needs_b and a_is_tensor else None, b)
            if not a_is_tensor:
                ctx.a = a
            ctx.a_shape = _shape(a)
        if not needs_b and can_write_into(out, b) and out.dtype.kind in FLOAT_KINDS:
            try:
                np.true_divide(out, b._data, out=out)
                return a
            except ValueError:
                pass
        return _wrap(_true_divide(a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output / b, ctx.a_shape)
        if ctx.needs_input_grad[1]:
            numerator = ctx.a if a is None else a
            grad_b = sum_to(-grad_output * (numerator / b / b), b.shape)
        return grad_a, grad_b


class DivScalar(Function):
    """A tensor divided by a Python scalar: backward needs only the scalar."""

    _backward_name = "DivBackward0"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # PyTorch saves the scalar, as a tensor

    @staticmethod
    def forward(ctx, x, scalar, out=None):
        ctx.scalar = scalar
        if can_write_into(out, scalar):
            np.true_divide(out, scalar, out=out)
            return x
        return _wrap(_true_divide(x, scalar))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output / ctx.scalar, None


def _rounded_quotient(a: Any, b: Any, rounding_mode: str) -> np.ndarray:
    """a / b rounded toward zero ('trunc') or toward -inf ('floor'), in the promoted dtype."""
    x, y, low = opmath_arrays(a, b)
    try:
        common = np.result_type(x, y)
        kind = common.kind
        if kind == "c":
            # (DivRounding and FloorDivide let complex operands through to refuse them here,
            # under the kernel of the rounding mode)
            raise not_implemented(f"div_{rounding_mode}_cpu", common)
        if kind == "b":
            # NumPy would answer in int8; PyTorch has no kernel for bool division
            raise not_implemented(f"div_{rounding_mode}_cpu", np.dtype(np.bool_))
        if kind in _INTEGRAL_KINDS:
            if np.any(np.asarray(y) == 0):
                raise RuntimeError("ZeroDivisionError")
            quotient = np.floor_divide(x, y)
            if rounding_mode == "trunc":
                # floor and trunc differ by one where the signs differ and the division is inexact
                inexact = (quotient * y) != x
                quotient = quotient + (inexact & ((np.asarray(x) < 0) != (np.asarray(y) < 0)))
            return quotient
        if rounding_mode == "trunc":
            return round_to(np.trunc(np.true_divide(x, y)), low)
        # floor_divide rounds the exact quotient, not the rounded x / y (1 // 0.1 == 9)
        return round_to(np.floor_divide(x, y), low)
    except ValueError:
        raise broadcast_error(_shape(a), _shape(b)) from None


class DivRounding(Function):
    """Division with rounding_mode 'trunc' or 'floor': piecewise constant, so zero gradient."""

    _backward_name = "DivBackward2"
    _complex_rule = OWN_COMPLEX_RULE
    _keeps_values_for_backward = True  # PyTorch saves the divisor

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        ctx.a_shape, ctx.b_shape = _shape(a), _shape(b)
        return _wrap(_rounded_quotient(a, b, rounding_mode))

    @staticmethod
    def backward(ctx, grad_output):
        grad_a = zeros_like_grad(grad_output, ctx.a_shape) if ctx.needs_input_grad[0] else None
        grad_b = zeros_like_grad(grad_output, ctx.b_shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None


def _check_rounding_mode(rounding_mode: Any) -> None:
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """input / other; `rounding_mode` None (true division), 'trunc' or 'floor'."""
    if not isinstance(other, TensorBase) and other.__class__ is not float:
        other = _operand(other, "div", "other", 2)
    if not isinstance(input, TensorBase):
        input = _operand(input, "div", "input", 1)
        if not isinstance(other, TensorBase):
            input = _scalar_tensor(input)
    if rounding_mode is None:
        if isinstance(other, TensorBase):
            return Div.apply(input, other)
        return DivScalar.apply(input, other)
    _check_rounding_mode(rounding_mode)
    return DivRounding.apply(input, other, rounding_mode)


divide = div


def true_divide(dividend: Any, divisor: Any) -> Tensor:
    return div(dividend, divisor)


def div_(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    other = _inplace_operand(other, "div_")
    if rounding_mode is not None:
        _check_rounding_mode(rounding_mode)
        return apply_inplace(DivRounding, input, other, rounding_mode)
    if isinstance(other, TensorBase):
        return apply_inplace(Div, input, other)
    return apply_inplace(DivScalar, input, other)


class FloorDivide(Function):
    """PyTorch defines no derivative for floor_divide: backward through it is an error."""

    _backward_name = "lucid::autograd::NotImplemented"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, a, b):
        return _wrap(_rounded_quotient(a, b, "floor"))

    @staticmethod
    def backward(ctx, grad_output):
        # named as called: floor_divide, or floor_divide_ for the in-place form
        raise RuntimeError(f"derivative for aten::{op_name(ctx.function)} is not implemented")


def floor_divide(input: Any, other: Any) -> Tensor:
    """input / other rounded toward negative infinity (not differentiable, as in PyTorch)."""
    if not isinstance(other, TensorBase):
        other = _operand(other, "floor_divide", "other", 2)
    if not isinstance(input, TensorBase):
        input = _operand(input, "floor_divide", "input", 1)
        if not isinstance(other, TensorBase):
            input = _scalar_tensor(input)
    return FloorDivide.apply(input, other)


def floor_divide_(input: Tensor, other: Any) -> Tensor:
    other = inplace_operand(other, "floor_divide_")
    check_complex_into_real(input, other)
    return apply_inplace(FloorDivide, input, other)


def rdiv(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """other / input (the reflected `other / input`)."""
    if rounding_mode is None:
        if isinstance(other, TensorBase):
            return div(other, input)
        # PyTorch computes `scalar / x` as reciprocal(x) * scalar.
        return mul(reciprocal(input), _operand(other, "div", "input", 1))
    if rounding_mode == "floor":
        return floor_divide(other, input)
    return div(other, input, rounding_mode=rounding_mode)


# ------------------------------------------------------------------------ neg
def _check_not_bool_negation(x: Tensor) -> None:
    if x._data.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )


class Neg(Function):
    _backward_name = "NegBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        return _wrap(np.negative(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # np.negative both ways (-grad_output is this op again), on float arrays
        if args[0].dtype.kind != "f":
            return None
        return np.negative, (lambda grad, out, x: (np.negative(grad),)), Neg


def neg(input: Tensor) -> Tensor:
    if not isinstance(input, TensorBase):
        raise argument_error("neg", "input", 1, input)
    _check_not_bool_negation(input)
    return Neg.apply(input)


negative = neg


def neg_(input: Tensor) -> Tensor:
    check_tensors(input)
    _check_not_bool_negation(input)
    return apply_inplace(Neg, input)


negative_ = neg_


# ------------------------------------------------------------------------ pow
def _power(a: Any, b: Any) -> np.ndarray:
    """a ** b in the promoted dtype, with PyTorch's integer rules for negative exponents."""
    if isinstance(a, TensorBase) and a._data.dtype == np.bool_:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    x, y, low = opmath_arrays(a, b)
    try:
        if np.result_type(x, y).kind not in _INTEGRAL_KINDS:
            if y.__class__ in (int, float):
                if y == 2:
                    return round_to(np.multiply(x, x), low)
                if low == np.float16 and y in (0.5, -0.5):
                    # PyTorch's float16 kernel calls C pow here (+0 for -0 ** 0.5, +inf for
                    # -inf ** 0.5), where its other kernels and NumPy's scalar-exponent fast
                    # path take the square root; NumPy's C pow runs for an array exponent
                    return round_to(np.power(x, np.full(x.shape, y, x.dtype)), low)
                if y == -0.5:
                    # as PyTorch's rsqrt: -0 gives -inf and -inf gives nan (C pow differs)
                    return round_to(np.reciprocal(np.sqrt(x)), low)
            return round_to(np.power(x, y), low)
        negative = np.asarray(y) < 0
        if not negative.any():
            return np.power(x, y)
        if not isinstance(y, np.ndarray):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        # Integer x ** -n truncates to 0, except for x == 1 and x == -1.
        result = np.power(x, np.where(negative, 0, y))
        odd = (y & 1) == 1
        unit = np.where(x == -1, np.where(odd, -1, 1), np.where(x == 1, 1, 0))
        return np.where(negative, unit, result).astype(result.dtype, copy=False)
    except ValueError:
        raise broadcast_error(_shape(a), _shape(b)) from None


class Pow(Function):
    """Tensor to a scalar power."""

    _backward_name = "PowBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        return _wrap(_power(x, exponent))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        exponent = ctx.exponent
        # d/dx x^p = p x^(p-1); p = 0 gives exactly zero, also where x is 0
        if exponent == 0:
            return grad_output * 0.0, None
        if exponent == 2:
            return grad_output * (x * 2.0), None
        return grad_output * (pow(x, exponent - 1) * exponent), None


class PowTensor(Function):
    """Power with a tensor exponent (the base may be a tensor or a scalar)."""

    _backward_name = "PowBackward1"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, base, exponent):
        result = _wrap(_power(base, exponent))
        base_is_tensor = isinstance(base, TensorBase)
        ctx.save_for_backward(base if base_is_tensor else None, exponent, result)
        if not base_is_tensor:
            ctx.base = base
        return result

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.pointwise import log, logical_and, where

        base, exponent, result = ctx.saved_tensors
        grad_base = grad_exponent = None
        if ctx.needs_input_grad[0]:
            # d/db b^e = e b^(e-1), taken as exactly 0 where e == 0 (also where b == 0)
            grad_base = grad_output * (exponent * pow(base, exponent - 1))
            grad_base = sum_to(where(exponent == 0, 0.0, grad_base), base.shape)
        if ctx.needs_input_grad[1]:
            # d/de b^e = b^e log b, taken as 0 where b == 0 and e >= 0 (e real, for complex e)
            if exponent._data.dtype.kind == "c":
                is_nonnegative = logical_and(exponent.imag == 0, exponent.real >= 0)
            else:
                is_nonnegative = exponent >= 0
            if base is None:
                if ctx.base == 0:
                    grad_log = where(is_nonnegative, 0.0, result * -math.inf)
                elif result._data.dtype.kind == "c":
                    grad_log = result * cmath.log(ctx.base)
                else:
                    grad_log = result * math.log(ctx.base)
            else:
                at_zero = where(is_nonnegative, base == 0, False)
                if base._data.dtype.kind != "c" and result._data.dtype.kind == "c":
                    # a real base beside a complex exponent: its log is complex (log of a
                    # negative number included)
                    base = to(base, result._data.dtype)
                grad_log = where(at_zero, 0.0, result * log(base))
            grad_exponent = sum_to(grad_output * grad_log, exponent.shape)
        return grad_base, grad_exponent


class PowScalarBase(PowTensor):
    """A Python scalar to a tensor power."""

    _backward_name = "PowBackward2"


_POW_SIGNATURES = (
    "(Tensor input, Tensor exponent, *, Tensor out = None)",
    "(Number self, Tensor exponent, *, Tensor out = None)",
    "(Tensor input, Number exponent, *, Tensor out = None)",
)


def pow(input: Any, exponent: Any) -> Tensor:
    """input ** exponent, for tensor or scalar base and exponent."""
    if isinstance(input, TensorBase):
        if isinstance(exponent, TensorBase):
            return PowTensor.apply(input, exponent)
        try:
            exponent = scalar_value(exponent)
        except TypeError:
            raise _overload_error("pow", (input, exponent), _POW_SIGNATURES) from None
        return Pow.apply(input, exponent)
    if not isinstance(exponent, TensorBase):
        raise _overload_error("pow", (input, exponent), _POW_SIGNATURES)
    try:
        input = scalar_value(input)
    except TypeError:
        raise _overload_error("pow", (input, exponent), _POW_SIGNATURES) from None
    return PowScalarBase.apply(input, exponent)


def pow_(input: Tensor, exponent: Any) -> Tensor:
    if isinstance(exponent, TensorBase):
        return apply_inplace(PowTensor, input, exponent)
    try:
        exponent = scalar_value(exponent)
    except TypeError:
        name = type(exponent).__name__
        raise TypeError(
            f"pow_() received an invalid combination of arguments - got ({name}), but expected "
            "one of:\n * (Tensor exponent)\n      didn't match because some of the arguments "
            f"have invalid types: (!{name}!)\n * (Number exponent)\n      didn't match because "
            f"some of the arguments have invalid types: (!{name}!)\n"
        ) from None
    return apply_inplace(Pow, input, exponent)


class Reciprocal(Function):
    _backward_name = "ReciprocalBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.reciprocal(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx 1/x = -1/x^2
        return -grad_output * (result * result)


def reciprocal(input: Tensor) -> Tensor:
    if not isinstance(input, TensorBase):
        raise argument_error("reciprocal", "input", 1, input)
    return Reciprocal.apply(input)


def reciprocal_(input: Tensor) -> Tensor:
    check_tensors(input)
    return apply_inplace(Reciprocal, input)


# ------------------------------------------------------------ maximum/minimum
class Maximum(Function):
    _backward_name = "MaximumBackward0"
    _complex_refusal = (RuntimeError, "maximum not implemented for complex tensors.")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_binary(np.maximum, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return _select_grads(ctx, grad_output, a < b, a > b, a == b)


class Minimum(Function):
    _backward_name = "MinimumBackward0"
    _complex_refusal = (RuntimeError, "minimum not implemented for complex tensors.")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_binary(np.minimum, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return _select_grads(ctx, grad_output, a > b, a < b, a == b)


def _select_grads(ctx: Any, grad_output: Tensor, a_loses: Tensor, b_loses: Tensor,
                  tie: Tensor) -> tuple[Tensor | None, Tensor | None]:  # fmt: skip
    """Each side gets the gradient unless the other side won; ties split it evenly.

    Where a NaN is compared, neither side lost, so both get the full gradient (as in PyTorch).
    """
    from lucid.ops.pointwise import where

    a, b = ctx.saved_tensors
    shared = where(tie, grad_output * 0.5, grad_output)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = sum_to(where(a_loses, 0.0, shared), a.shape)
    if ctx.needs_input_grad[1]:
        grad_b = sum_to(where(b_loses, 0.0, shared), b.shape)
    return grad_a, grad_b


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum (NaN propagates)."""
    _require_tensor(input, "maximum", "input", 1)
    _require_tensor(other, "maximum", "other", 2)
    return Maximum.apply(input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum (NaN propagates)."""
    _require_tensor(input, "minimum", "input", 1)
    _require_tensor(other, "minimum", "other", 2)
    return Minimum.apply(input, other)


# ------------------------------------------------------------ fmod / remainder
def _modulo(ufunc: Any, a: Any, b: Any, kernel: str) -> np.ndarray:
    x, y, low = opmath_arrays(a, b)
    common = np.result_type(x, y)
    kind = common.kind
    if kind == "b" or kind == "c":
        # (complex here: a Python complex divisor, which no class refuses)
        raise not_implemented(kernel, common)
    if kind in _INTEGRAL_KINDS and np.any(np.asarray(y) == 0):
        raise RuntimeError("ZeroDivisionError")
    try:
        return round_to(ufunc(x, y), low)
    except ValueError:
        raise broadcast_error(_shape(a), _shape(b)) from None


class Fmod(Function):
    """fmod with a scalar divisor."""

    _backward_name = "FmodBackward0"
    _complex_refusal = (NotImplementedError, "\"fmod_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        return _wrap(_modulo(np.fmod, a, b, "fmod_cpu"))

    @staticmethod
    def backward(ctx, grad_output):
        # d/da (a - trunc(a / b) * b) = 1
        return grad_output, None


class FmodTensor(Function):
    _backward_name = "FmodBackward1"
    _complex_refusal = (NotImplementedError, "\"fmod_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_modulo(np.fmod, a, b, "fmod_cpu"))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # fmod(a, b) = a - trunc(a / b) * b
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(-grad_output * div(a, b, rounding_mode="trunc"), b.shape)
        return grad_a, grad_b


_FMOD_SIGNATURES = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)


def fmod(input: Tensor, other: Any) -> Tensor:
    """C-style remainder: the result has the sign of `input`."""
    if not isinstance(input, TensorBase):
        raise _overload_error("fmod", (input, other), _FMOD_SIGNATURES)
    if isinstance(other, TensorBase):
        return FmodTensor.apply(input, other)
    try:
        other = scalar_value(other)
    except TypeError:
        raise _overload_error("fmod", (input, other), _FMOD_SIGNATURES) from None
    return Fmod.apply(input, other)


def fmod_(input: Tensor, other: Any) -> Tensor:
    other = inplace_operand(other, "fmod_")
    check_complex_into_real(input, other)
    if isinstance(other, TensorBase):
        return apply_inplace(FmodTensor, input, other)
    return apply_inplace(Fmod, input, other)


class Remainder(Function):
    """remainder with a scalar divisor."""

    _backward_name = "RemainderBackward0"
    _complex_refusal = (NotImplementedError, "\"remainder_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        return _wrap(_modulo(np.remainder, a, b, "remainder_cpu"))

    @staticmethod
    def backward(ctx, grad_output):
        # d/da (a - floor(a / b) * b) = 1
        return grad_output, None


class RemainderTensor(Function):
    _backward_name = "RemainderBackward1"
    _complex_refusal = (NotImplementedError, "\"remainder_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_modulo(np.remainder, a, b, "remainder_cpu"))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # remainder(a, b) = a - floor(a / b) * b
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(-grad_output * div(a, b, rounding_mode="floor"), b.shape)
        return grad_a, grad_b


class RemainderScalarDividend(Function):
    """`scalar % tensor`: PyTorch defines no derivative, so backward through it is an error."""

    _op_name = "remainder"
    _backward_name = "lucid::autograd::NotImplemented"
    _complex_refusal = (NotImplementedError, "\"remainder_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        return _wrap(_modulo(np.remainder, a, b, "remainder_cpu"))

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::remainder is not implemented")


def _remainder_signature_error(input: Any, other: Any) -> TypeError:
    # PyTorch marks the arguments that fail the (Number self, Tensor other) overload
    other_fails = not isinstance(other, TensorBase)
    input_fails = other_fails or not isinstance(input, bool | int | float)
    marks = []
    for value, fails in ((input, input_fails), (other, other_fails)):
        name = "Tensor" if isinstance(value, TensorBase) else type(value).__name__
        marks.append(f"!{name}!" if fails else name)
    return _overload_error(
        "remainder",
        (input, other),
        (
            "(Tensor input, Tensor other, *, Tensor out = None)",
            "(Number self, Tensor other)\n      didn't match because some of the arguments have "
            f"invalid types: ({marks[0]}, {marks[1]})",
            "(Tensor input, Number other, *, Tensor out = None)",
        ),
    )


def remainder(input: Any, other: Any) -> Tensor:
    """Python-style modulus: the result has the sign of `other`."""
    if isinstance(input, TensorBase):
        if isinstance(other, TensorBase):
            return RemainderTensor.apply(input, other)
        try:
            other = scalar_value(other)
        except TypeError:
            raise _remainder_signature_error(input, other) from None
        return Remainder.apply(input, other)
    if not isinstance(other, TensorBase):
        raise _remainder_signature_error(input, other)
    try:
        input = scalar_value(input)
    except TypeError:
        raise _remainder_signature_error(input, other) from None
    return RemainderScalarDividend.apply(input, other)


def remainder_(input: Tensor, other: Any) -> Tensor:
    other = inplace_operand(other, "remainder_")
    check_complex_into_real(input, other)
    if isinstance(other, TensorBase):
        return apply_inplace(RemainderTensor, input, other)
    return apply_inplace(Remainder, input, other)


# ======================================================= addcmul, addcdiv, gcd, lcm, ldexp, frexp
def _reduce_and_cast(grad: Tensor, shape: tuple[int, ...], numpy_dtype: np.dtype) -> Tensor:
    """`grad` summed back to an input's shape and cast to its dtype (operands may have been
    broadcast and promoted)."""
    grad = sum_to(grad, shape)
    if grad._data.dtype != numpy_dtype:
        if grad._data.dtype.kind == "c" and numpy_dtype.kind != "c":
            # a real input promoted beside a complex one: its gradient is the real part
            grad = grad.real
        grad = to(grad, numpy_dtype)
    return grad


def _grad_to(grad: Tensor, input: Tensor) -> Tensor:
    """`grad` summed back to input's shape and cast to its dtype."""
    return _reduce_and_cast(grad, input._data.shape, input._data.dtype)


def _ternary_arrays(op: str, input: Tensor, tensor1: Tensor, tensor2: Tensor) -> tuple:
    """The three operands of addcmul/addcdiv broadcast-checked and in their promoted dtype."""
    for position, (name, value) in enumerate(
        (("input", input), ("tensor1", tensor1), ("tensor2", tensor2))
    ):
        _require_tensor(value, op, name, position + 1)
    common_shape(input._data.shape, tensor1._data.shape, tensor2._data.shape)
    target = dtypes.result_type(input, tensor1, tensor2).numpy_dtype
    return tuple(t._data.astype(target, copy=False) for t in (input, tensor1, tensor2))


def _scale_value(value: Any, numpy_dtype: np.dtype) -> Any:
    value = scalar_value(value)
    if isinstance(value, TensorBase):
        value = value.item()
    # an integer result takes an integer scale, as PyTorch casts it
    return int(value) if numpy_dtype.kind in _INTEGRAL_KINDS else value


class Addcmul(Function):
    _backward_name = "AddcmulBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        x, a, b = _ternary_arrays("addcmul", input, tensor1, tensor2)
        if x.dtype == np.bool_:
            raise not_implemented("addcmul_cpu_out", x.dtype)
        value = _scale_value(value, x.dtype)
        ctx.save_for_backward(input, tensor1, tensor2)
        ctx.value = value
        low = low_precision_of(x.dtype)
        x, a, b = widen(x), widen(a), widen(b)  # float16/bfloat16: one rounding, as PyTorch
        return _wrap(round_to(x + value * a * b, low))

    @staticmethod
    def backward(ctx, grad_output):
        input, tensor1, tensor2 = ctx.saved_tensors
        value = ctx.value
        grad_input = grad_tensor1 = grad_tensor2 = None
        # d/dt1 (x + v t1 t2) = v t2, d/dt2 = v t1
        if ctx.needs_input_grad[0]:
            grad_input = _grad_to(grad_output, input)
        if ctx.needs_input_grad[1]:
            grad_tensor1 = _grad_to(grad_output * tensor2 * value, tensor1)
        if ctx.needs_input_grad[2]:
            grad_tensor2 = _grad_to(grad_output * tensor1 * value, tensor2)
        return grad_input, grad_tensor1, grad_tensor2, None


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 * tensor2, broadcast."""
    check_real_number(value, input, tensor1, tensor2)
    return Addcmul.apply(input, tensor1, tensor2, value)


def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    check_real_number(value, input, tensor1, tensor2)
    return apply_inplace(Addcmul, input, tensor1, tensor2, value)


_ADDCDIV_INTEGER_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * lucid.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)


class Addcdiv(Function):
    _backward_name = "AddcdivBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        for t in (tensor1, tensor2):
            if isinstance(t, TensorBase) and t._data.dtype.kind in _INTEGRAL_KINDS:
                if tensor1._data.dtype.kind in _INTEGRAL_KINDS:
                    raise RuntimeError(_ADDCDIV_INTEGER_MESSAGE)
        x, a, b = _ternary_arrays("addcdiv", input, tensor1, tensor2)
        value = _scale_value(value, x.dtype)
        ctx.save_for_backward(input, tensor1, tensor2)
        ctx.value = value
        low = low_precision_of(x.dtype)
        x, a, b = widen(x), widen(a), widen(b)  # float16/bfloat16: one rounding, as PyTorch
        return _wrap(round_to(x + value * a / b, low))

    @staticmethod
    def backward(ctx, grad_output):
        input, tensor1, tensor2 = ctx.saved_tensors
        value = ctx.value
        grad_input = grad_tensor1 = grad_tensor2 = None
        # d/dt1 (x + v t1 / t2) = v / t2, d/dt2 = -v t1 / t2^2
        if ctx.needs_input_grad[0]:
            grad_input = _grad_to(grad_output, input)
        if ctx.needs_input_grad[1]:
            grad_tensor1 = _grad_to(grad_output * (value / tensor2), tensor1)
        if ctx.needs_input_grad[2]:
            grad_tensor2 = _grad_to(-grad_output * (tensor1 * value / tensor2) / tensor2, tensor2)
        return grad_input, grad_tensor1, grad_tensor2, None


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 / tensor2, broadcast (float tensors only)."""
    check_real_number(value, input, tensor1, tensor2)
    return Addcdiv.apply(input, tensor1, tensor2, value)


def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    check_real_number(value, input, tensor1, tensor2)
    return apply_inplace(Addcdiv, input, tensor1, tensor2, value)


def _integer_pair(op: str, a: Tensor, b: Any, kernel: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(b, TensorBase):
        raise argument_error(op, "other", 2, b)
    x, y = binary_arrays(a, b)
    if x.dtype.kind not in "iu":
        raise not_implemented(kernel, x.dtype)
    return x, y


class Gcd(Function):
    """The greatest common divisor (integers only, so there is no gradient to define)."""

    _backward_name = "GcdBackward0"
    _complex_refusal = (NotImplementedError, "\"gcd_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _integer_pair("gcd", a, b, "gcd_cpu")
        return _wrap(_broadcast_ufunc(np.gcd, x, y))


class Lcm(Function):
    """The least common multiple, non-negative (integers only)."""

    _backward_name = "LcmBackward0"
    _complex_refusal = (NotImplementedError, "\"lcm_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, a, b):
        x, y = _integer_pair("lcm", a, b, "lcm_cpu")
        return _wrap(_broadcast_ufunc(np.lcm, x, y))


def _broadcast_ufunc(ufunc: Any, x: Any, y: Any) -> np.ndarray:
    """A binary ufunc whose operands fail to broadcast raises PyTorch's size error."""
    try:
        return ufunc(x, y)
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise greatest common divisor of two integer tensors (gcd(0, 0) = 0)."""
    return Gcd.apply(input, other)


def gcd_(input: Tensor, other: Tensor) -> Tensor:
    if isinstance(other, TensorBase):
        check_complex_into_real(input, other)
    return apply_inplace(Gcd, input, other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise least common multiple of two integer tensors."""
    return Lcm.apply(input, other)


def lcm_(input: Tensor, other: Tensor) -> Tensor:
    if isinstance(other, TensorBase):
        check_complex_into_real(input, other)
    return apply_inplace(Lcm, input, other)


_LOG_2 = math.log(2.0)


class Ldexp(Function):
    _backward_name = "LdexpBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        if x.dtype.kind in _INTEGRAL_KINDS:
            default = dtypes.get_default_dtype().numpy_dtype
            x, y = x.astype(default), y.astype(default)
        with np.errstate(over="ignore"):
            scale = np.power(np.asarray(2.0, x.dtype), y)
        result = _wrap(_broadcast_ufunc(np.multiply, x, scale))
        ctx.save_for_backward(a, b, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        a, b, result = ctx.saved_tensors
        grad_a = grad_b = None
        # d/dx x 2^e = 2^e, d/de x 2^e = x 2^e log 2
        if ctx.needs_input_grad[0]:
            grad_a = _grad_to(grad_output * pow(2.0, b), a)
        if ctx.needs_input_grad[1]:
            grad_b = _grad_to(grad_output * result * _LOG_2, b)
        return grad_a, grad_b


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """input * 2**other, computed in floats."""
    _require_tensor(other, "ldexp", "other", 2)
    return Ldexp.apply(input, other)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:
    _require_tensor(other, "ldexp_", "other", 2)
    return apply_inplace(Ldexp, input, other)


FrexpResult = result_type("FrexpResult", "frexp", "mantissa", "exponent")


class Frexp(Function):
    _backward_name = "FrexpBackward0"
    _complex_refusal = (RuntimeError, "lucid.frexp() only supports floating-point dtypes")

    @staticmethod
    def forward(ctx, x):
        array = x._data
        if array.dtype.kind not in FLOAT_KINDS:
            raise RuntimeError("lucid.frexp() only supports floating-point dtypes")
        mantissa, exponent = np.frexp(array)
        exponent = _wrap(exponent.astype(np.int32))
        ctx.save_for_backward(exponent)
        return _wrap(mantissa), exponent

    @staticmethod
    def backward(ctx, grad_mantissa, grad_exponent):
        (exponent,) = ctx.saved_tensors
        # mantissa = x / 2^exponent, with the exponent piecewise constant
        return grad_mantissa / pow(2.0, exponent)


def frexp(input: Tensor) -> FrexpResult:
    """input as mantissa * 2**exponent, with `|mantissa|` in [0.5, 1) and an int32 exponent."""
    check_tensors(input)
    return FrexpResult(*Frexp.apply(input))


def positive(input: Tensor) -> Tensor:
    """The input itself (unary plus); bool tensors have no unary plus, as in PyTorch."""
    check_tensors(input)
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ------------------------------------------------------------------ fmax / fmin
class Fmax(Function):
    _backward_name = "FmaxBackward0"
    _complex_refusal = (RuntimeError, "fmax not implemented for complex tensors.")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_binary(np.fmax, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return _fmax_fmin_grads(ctx, grad_output, a >= b)


class Fmin(Function):
    _backward_name = "FminBackward0"
    _complex_refusal = (RuntimeError, "fmin not implemented for complex tensors.")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_binary(np.fmin, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return _fmax_fmin_grads(ctx, grad_output, a <= b)


def _fmax_fmin_grads(ctx: Any, grad_output: Tensor, a_wins: Tensor) -> tuple:
    """The whole gradient goes to the operand taken: a on ties and where b is NaN, else b."""
    from lucid.ops.pointwise import isnan, logical_or, where

    a, b = ctx.saved_tensors
    a_taken = logical_or(a_wins, isnan(b))
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = sum_to(where(a_taken, grad_output, 0.0), a.shape)
    if ctx.needs_input_grad[1]:
        grad_b = sum_to(where(a_taken, 0.0, grad_output), b.shape)
    return grad_a, grad_b


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN: NaN only where both are NaN."""
    _require_tensor(input, "fmax", "input", 1)
    _require_tensor(other, "fmax", "other", 2)
    return Fmax.apply(input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN: NaN only where both are NaN."""
    _require_tensor(input, "fmin", "input", 1)
    _require_tensor(other, "fmin", "other", 2)
    return Fmin.apply(input, other)
