"""Arithmetic ops: add, sub, mul, div, pow, matmul family, maximum/minimum, fmod, remainder."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import dtypes
from lucid._tensor import Tensor, _wrap
from lucid.autograd.function import Function
from lucid.ops._promote import binary_arrays, float_array, scalar_value
from lucid.ops.broadcast import broadcast_error, sum_to

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "rdiv", "neg", "negative", "pow", "reciprocal", "matmul", "mm", "bmm", "mv",
    "dot", "outer", "ger", "addmm", "maximum", "minimum", "fmod", "remainder",
    "add_", "sub_", "mul_", "div_", "pow_", "neg_",
]  # fmt: skip


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, Tensor) else ()


def _binary(ufunc: Any, a: Any, b: Any) -> np.ndarray:
    x, y = binary_arrays(a, b)
    try:
        return ufunc(x, y)
    except ValueError:
        raise broadcast_error(_shape(a), _shape(b)) from None


def _check_tensor_operand(input: Any, other: Any) -> None:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"expected at least one Tensor operand, got {type(input).__name__} and "
            f"{type(other).__name__}"
        )


class Add(Function):
    _backward_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.a_shape = _shape(a)
        ctx.b_shape = _shape(b)
        ctx.alpha = alpha
        if alpha == 1:
            return _wrap(_binary(np.add, a, b))
        x, y = binary_arrays(a, b)
        try:
            return _wrap(x + y * alpha)
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


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input + alpha * other, broadcasting."""
    if not isinstance(other, Tensor):
        other = scalar_value(other)
    if not isinstance(input, Tensor):
        _check_tensor_operand(input, other)
        input = scalar_value(input)
    return Add.apply(input, other, alpha)


class Sub(Function):
    _backward_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.a_shape = _shape(a)
        ctx.b_shape = _shape(b)
        ctx.alpha = alpha
        if alpha == 1:
            return _wrap(_binary(np.subtract, a, b))
        x, y = binary_arrays(a, b)
        try:
            return _wrap(x - y * alpha)
        except ValueError:
            raise broadcast_error(ctx.a_shape, ctx.b_shape) from None

    @staticmethod
    def backward(ctx, grad_output):
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output, ctx.a_shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(-grad_output if ctx.alpha == 1 else grad_output * -ctx.alpha,
                            ctx.b_shape)  # fmt: skip
        return grad_a, grad_b, None


def _check_not_bool_subtraction(input: Any, other: Any) -> None:
    for value in (input, other):
        if isinstance(value, Tensor) and value._data.dtype == np.bool_ or value is True:
            raise RuntimeError(
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """input - alpha * other, broadcasting."""
    _check_tensor_operand(input, other)
    input = scalar_value(input)
    other = scalar_value(other)
    if isinstance(input, Tensor) and input._data.dtype == np.bool_:
        _check_not_bool_subtraction(input, other)
    return Sub.apply(input, other, alpha)


subtract = sub


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """other - alpha * input (the reflected `other - input`)."""
    return sub(other, input, alpha=alpha)


class Mul(Function):
    _backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(
            a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None
        )
        ctx.a = a if not isinstance(a, Tensor) else None
        ctx.b = b if not isinstance(b, Tensor) else None
        return _wrap(_binary(np.multiply, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        if a is None:
            a = ctx.a
        if b is None:
            b = ctx.b
        grad_a = grad_b = None
        # d(ab)/da = b, d(ab)/db = a
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output * b, a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = sum_to(grad_output * a, b.shape)
        return grad_a, grad_b


def mul(input: Any, other: Any) -> Tensor:
    """input * other, broadcasting."""
    if not isinstance(other, Tensor):
        other = scalar_value(other)
    if not isinstance(input, Tensor):
        _check_tensor_operand(input, other)
        input = scalar_value(input)
    return Mul.apply(input, other)


multiply = mul


class Div(Function):
    _backward_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
            if not isinstance(y, np.ndarray) or y.dtype.kind != "f":
                default = dtypes.get_default_dtype().numpy_dtype
                x = np.asarray(x, default) if not isinstance(x, float) else x
                y = np.asarray(y, default) if not isinstance(y, float) else y
        try:
            result = np.true_divide(x, y)
        except ValueError:
            raise broadcast_error(_shape(a), _shape(b)) from None
        ctx.save_for_backward(
            a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None
        )
        ctx.a = None if isinstance(a, Tensor) else a
        ctx.b = None if isinstance(b, Tensor) else b
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output / (b if b is not None else ctx.b), a.shape)
        if ctx.needs_input_grad[1]:
            numerator = a if a is not None else ctx.a
            grad_b = sum_to(-grad_output * numerator / (b * b), b.shape)
        return grad_a, grad_b


class DivRounding(Function):
    """Division with rounding_mode 'trunc' or 'floor': piecewise constant, so zero gradient."""

    _backward_name = "DivBackward1"

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        x, y = binary_arrays(a, b)
        ctx.a_shape, ctx.b_shape = _shape(a), _shape(b)
        try:
            integral = np.result_type(x, y).kind in "iub"
            if rounding_mode == "floor":
                if integral:
                    if np.any(np.asarray(y) == 0):
                        raise RuntimeError("ZeroDivisionError")
                    result = np.floor_divide(x, y)
                else:
                    result = np.floor(np.true_divide(x, y))
            elif integral:
                if np.any(np.asarray(y) == 0):
                    raise RuntimeError("ZeroDivisionError")
                quotient = np.true_divide(x, y)
                result = np.trunc(quotient).astype(np.result_type(x, y))
            else:
                result = np.trunc(np.true_divide(x, y))
        except ValueError:
            raise broadcast_error(ctx.a_shape, ctx.b_shape) from None
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.pointwise import zeros_like_grad

        grad_a = zeros_like_grad(grad_output, ctx.a_shape) if ctx.needs_input_grad[0] else None
        grad_b = zeros_like_grad(grad_output, ctx.b_shape) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """input / other; `rounding_mode` None (true division), 'trunc' or 'floor'."""
    _check_tensor_operand(input, other)
    input = scalar_value(input)
    other = scalar_value(other)
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    return DivRounding.apply(input, other, rounding_mode)


divide = div
true_divide = div


def floor_divide(input: Any, other: Any) -> Tensor:
    return div(input, other, rounding_mode="floor")


def rdiv(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """other / input (the reflected `other / input`)."""
    return div(other, input, rounding_mode=rounding_mode)


class Neg(Function):
    _backward_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        if x._data.dtype == np.bool_:
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return _wrap(np.negative(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


def neg(input: Tensor) -> Tensor:
    return Neg.apply(input)


negative = neg


class Pow(Function):
    """Tensor to a scalar power."""

    _backward_name = "PowBackward0"

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        array, exponent = binary_arrays(x, exponent)
        if array.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if exponent == 2:
            return _wrap(np.multiply(array, array))
        return _wrap(np.power(array, exponent))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        exponent = ctx.exponent
        # d/dx x^p = p x^(p-1); p = 0 gives exactly zero, also where x is 0
        if exponent == 0:
            return grad_output * 0.0, None
        if exponent == 1:
            return grad_output, None
        if exponent == 2:
            return grad_output * (x * 2.0), None
        return grad_output * (pow(x, exponent - 1) * exponent), None


class PowTensor(Function):
    """Power with a tensor exponent (either base or exponent may be a scalar)."""

    _backward_name = "PowBackward1"

    @staticmethod
    def forward(ctx, base, exponent):
        x, y = binary_arrays(base, exponent)
        if (
            isinstance(x, np.ndarray)
            and x.dtype.kind in "iu"
            and np.any(np.asarray(y) < 0)
        ):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        try:
            result = _wrap(np.power(x, y))
        except ValueError:
            raise broadcast_error(_shape(base), _shape(exponent)) from None
        ctx.save_for_backward(
            base if isinstance(base, Tensor) else None,
            exponent if isinstance(exponent, Tensor) else None,
            result,
        )
        ctx.base = None if isinstance(base, Tensor) else base
        ctx.exponent = None if isinstance(exponent, Tensor) else exponent
        return result

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.pointwise import log, where

        base, exponent, result = ctx.saved_tensors
        grad_base = grad_exponent = None
        if ctx.needs_input_grad[0]:
            # d/db b^e = e b^(e-1)
            exponent_value = exponent if exponent is not None else ctx.exponent
            grad_base = grad_output * exponent_value * pow(base, exponent_value - 1)
            if isinstance(exponent_value, Tensor):
                # exactly zero where the exponent is zero (0 * 0^-1 would be nan)
                grad_base = where(exponent_value == 0, 0.0, grad_base)
            grad_base = sum_to(grad_base, base.shape)
        if ctx.needs_input_grad[1]:
            # d/de b^e = b^e log b; taken as 0 where b == 0 and e >= 0, as PyTorch does
            base_value = base if base is not None else ctx.base
            if isinstance(base_value, Tensor):
                log_base = where(base_value == 0, 0.0, log(base_value))
            else:
                log_base = float(np.log(base_value)) if base_value != 0 else 0.0
            grad_exponent = sum_to(grad_output * result * log_base, exponent.shape)
        return grad_base, grad_exponent


def pow(input: Any, exponent: Any) -> Tensor:
    """input ** exponent, for tensor or scalar base and exponent."""
    _check_tensor_operand(input, exponent)
    input = scalar_value(input)
    exponent = scalar_value(exponent)
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        return Pow.apply(input, exponent)
    return PowTensor.apply(input, exponent)


class Reciprocal(Function):
    _backward_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.reciprocal(float_array(x)))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        # d/dx 1/x = -1/x^2
        return -grad_output * result * result


def reciprocal(input: Tensor) -> Tensor:
    return Reciprocal.apply(input)


# ---------------------------------------------------------------------- matmul
def _matmul_error(a: np.ndarray, b: np.ndarray) -> RuntimeError:
    if a.ndim == 2 and b.ndim == 2:
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    if a.ndim == 1 and b.ndim == 1:
        return RuntimeError(
            "inconsistent tensor size, expected tensor [" + str(a.shape[0]) + "] and src ["
            + str(b.shape[0]) + "] to have the same number of elements, but got "
            + f"{a.shape[0]} and {b.shape[0]} elements respectively"
        )
    if a.ndim == 2 and b.ndim == 1:
        return RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
            f"vec ({b.shape[0]})"
        )
    return RuntimeError(
        "Expected size for first two dimensions of batch2 tensor to be: "
        f"[{b.shape[0] if b.ndim > 2 else ''}, {a.shape[-1]}] but got: "
        f"[{', '.join(str(s) for s in b.shape[:-1])}]."
        if a.ndim == 3 and b.ndim == 3
        else f"mat1 and mat2 shapes cannot be multiplied "
        f"({'x'.join(str(s) for s in a.shape)} and {'x'.join(str(s) for s in b.shape)})"
    )


class MatMul(Function):
    _backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim == 0 or y.ndim == 0:
            raise RuntimeError(
                f"both arguments to matmul need to be at least 1D, but they are {x.ndim}D and "
                f"{y.ndim}D"
            )
        if x.dtype != y.dtype:
            raise RuntimeError(
                "expected m1 and m2 to have the same dtype, but got: "
                f"{a.dtype.name if hasattr(a.dtype, 'name') else a.dtype} != {b.dtype}"
            )
        ctx.save_for_backward(a, b)
        try:
            return _wrap(np.matmul(x, y))
        except ValueError:
            raise _matmul_error(x, y) from None

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        a_ndim, b_ndim = a.ndim, b.ndim
        # Promote vectors to matrices so one rule covers every case, then undo it.
        a2 = a.unsqueeze(0) if a_ndim == 1 else a
        b2 = b.unsqueeze(-1) if b_ndim == 1 else b
        g = grad_output
        if a_ndim == 1 and b_ndim == 1:
            g = g.reshape(1, 1)
        elif a_ndim == 1:
            g = g.unsqueeze(-2)
        elif b_ndim == 1:
            g = g.unsqueeze(-1)
        if ctx.needs_input_grad[0]:
            grad_a = matmul(g, b2.mT)
            grad_a = sum_to(grad_a, a2.shape)
            if a_ndim == 1:
                grad_a = grad_a.reshape(a.shape)
        if ctx.needs_input_grad[1]:
            grad_b = matmul(a2.mT, g)
            grad_b = sum_to(grad_b, b2.shape)
            if b_ndim == 1:
                grad_b = grad_b.reshape(b.shape)
        return grad_a, grad_b


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch broadcasting rules for 1-D and batched operands."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(
            f"matmul(): argument 'other' (position 2) must be Tensor, not "
            f"{type(other if isinstance(input, Tensor) else input).__name__}"
        )
    return MatMul.apply(input, other)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return MatMul.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return MatMul.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}"
        )
    return MatMul.apply(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors"
        )
    return MatMul.apply(input, tensor)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors, composed from matmul of a column and a row."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"outer: expected 1D tensors, but got {input.ndim}D and {vec2.ndim}D tensors"
        )
    return matmul(input.unsqueeze(1), vec2.unsqueeze(0))


ger = outer


class Addmm(Function):
    _backward_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, bias, mat1, mat2, beta, alpha):
        x, y = mat1._data, mat2._data
        if x.ndim != 2 or y.ndim != 2:
            raise RuntimeError(
                f"mat1 must be a matrix, got {x.ndim}-D tensor" if x.ndim != 2
                else f"mat2 must be a matrix, got {y.ndim}-D tensor"
            )
        try:
            product = np.matmul(x, y)
        except ValueError:
            raise _matmul_error(x, y) from None
        if alpha != 1:
            product *= alpha
        bias_array = bias._data
        try:
            if beta == 1:
                product += bias_array
            elif beta != 0:
                product += beta * bias_array
        except ValueError:
            raise broadcast_error(bias_array.shape, product.shape) from None
        ctx.save_for_backward(mat1, mat2)
        ctx.bias_shape = bias_array.shape
        ctx.alpha, ctx.beta = alpha, beta
        return _wrap(product)

    @staticmethod
    def backward(ctx, grad_output):
        mat1, mat2 = ctx.saved_tensors
        grad_bias = grad_mat1 = grad_mat2 = None
        if ctx.needs_input_grad[0]:
            grad_bias = grad_output if ctx.beta == 1 else grad_output * ctx.beta
            grad_bias = sum_to(grad_bias, ctx.bias_shape)
        scaled = grad_output if ctx.alpha == 1 else grad_output * ctx.alpha
        if ctx.needs_input_grad[1]:
            grad_mat1 = matmul(scaled, mat2.mT)
        if ctx.needs_input_grad[2]:
            grad_mat2 = matmul(mat1.mT, scaled)
        return grad_bias, grad_mat1, grad_mat2, None, None


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    return Addmm.apply(input, mat1, mat2, beta, alpha)


# ------------------------------------------------------------ maximum/minimum
class Maximum(Function):
    _backward_name = "MaximumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_binary(np.maximum, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        return _select_grads(ctx, grad_output, greater=True)


class Minimum(Function):
    _backward_name = "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_binary(np.minimum, a, b))

    @staticmethod
    def backward(ctx, grad_output):
        return _select_grads(ctx, grad_output, greater=False)


def _select_grads(ctx, grad_output, greater):
    from lucid.ops.pointwise import where

    a, b = ctx.saved_tensors
    # Ties split the gradient evenly, as PyTorch does.
    a_wins = (a > b) if greater else (a < b)
    tie = a == b
    half = grad_output * 0.5
    grad_a = grad_b = None
    zero = 0.0
    if ctx.needs_input_grad[0]:
        grad_a = sum_to(where(tie, half, where(a_wins, grad_output, zero)), a.shape)
    if ctx.needs_input_grad[1]:
        b_wins = (b > a) if greater else (b < a)
        grad_b = sum_to(where(tie, half, where(b_wins, grad_output, zero)), b.shape)
    return grad_a, grad_b


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return Maximum.apply(input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return Minimum.apply(input, other)


# ------------------------------------------------------------ fmod / remainder
class Fmod(Function):
    _backward_name = "FmodBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        if _is_integral_zero_divisor(x, y):
            raise RuntimeError("ZeroDivisionError")
        ctx.save_for_backward(a, b if isinstance(b, Tensor) else None)
        ctx.b = None if isinstance(b, Tensor) else b
        try:
            return _wrap(np.fmod(x, y))
        except ValueError:
            raise broadcast_error(_shape(a), _shape(b)) from None

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


class Remainder(Function):
    _backward_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = binary_arrays(a, b)
        if _is_integral_zero_divisor(x, y):
            raise RuntimeError("ZeroDivisionError")
        ctx.save_for_backward(
            a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None
        )
        ctx.a = None if isinstance(a, Tensor) else a
        ctx.b = None if isinstance(b, Tensor) else b
        try:
            return _wrap(np.remainder(x, y))
        except ValueError:
            raise broadcast_error(_shape(a), _shape(b)) from None

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        # remainder(a, b) = a - floor(a / b) * b
        if ctx.needs_input_grad[0]:
            grad_a = sum_to(grad_output, a.shape)
        if ctx.needs_input_grad[1]:
            numerator = a if a is not None else ctx.a
            grad_b = sum_to(-grad_output * div(numerator, b, rounding_mode="floor"), b.shape)
        return grad_a, grad_b


def _is_integral_zero_divisor(x: Any, y: Any) -> bool:
    integral = np.result_type(x, y).kind in "iub"
    return integral and bool(np.any(np.asarray(y) == 0))


def fmod(input: Tensor, other: Any) -> Tensor:
    """C-style remainder: the result has the sign of `input`."""
    return Fmod.apply(input, scalar_value(other))


def remainder(input: Any, other: Any) -> Tensor:
    """Python-style modulus: the result has the sign of `other`."""
    _check_tensor_operand(input, other)
    return Remainder.apply(scalar_value(input), scalar_value(other))


# ----------------------------------------------------------------- in-place
class AddInplace(Function):
    _backward_name = "AddBackward0"

    @staticmethod
    def forward(ctx, x, other, alpha):
        ctx.mark_dirty(x)
        ctx.other_shape = _shape(other)
        ctx.alpha = alpha
        result = _binary(np.add, x, other if alpha == 1 else _scaled(other, alpha))
        _write_inplace(x, result)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        grad_other = None
        if ctx.needs_input_grad[1]:
            grad_other = grad_output if ctx.alpha == 1 else grad_output * ctx.alpha
            grad_other = sum_to(grad_other, ctx.other_shape)
        return grad_output, grad_other, None


def _scaled(value: Any, alpha: Any) -> Any:
    if isinstance(value, Tensor):
        return _wrap(value._data * alpha)
    return value * alpha


def _write_inplace(x: Tensor, result: np.ndarray) -> None:
    """Store an in-place op's result into x's own storage (views of x see it)."""
    target = x._data
    if result.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if result.dtype != target.dtype and not np.can_cast(result.dtype, target.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {_dtype_name(result.dtype)} can't be cast to the desired output "
            f"type {_dtype_name(target.dtype)}"
        )
    np.copyto(target, result, casting="unsafe")


def _dtype_name(numpy_dtype: np.dtype) -> str:
    return {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char",
            "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
            "bool": "Bool"}[numpy_dtype.name]  # fmt: skip


def add_(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return AddInplace.apply(input, scalar_value(other), alpha)


def sub_(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return AddInplace.apply(input, scalar_value(other), -alpha)


class MulInplace(Function):
    _backward_name = "MulBackward0"

    @staticmethod
    def forward(ctx, x, other):
        ctx.mark_dirty(x)
        # The old value of x is needed for other's gradient: keep a copy, since x changes.
        other_is_tensor = isinstance(other, Tensor)
        if other_is_tensor and ctx.needs_input_grad[1]:
            ctx.save_for_backward(_wrap(x._data.copy()), other)
        elif other_is_tensor:
            ctx.save_for_backward(None, other)
        ctx.other = None if other_is_tensor else other
        ctx.other_shape = _shape(other)
        _write_inplace(x, _binary(np.multiply, x, other))
        return x

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.other is not None:
            return grad_output * ctx.other, None
        old_x, other = ctx.saved_tensors
        grad_other = None
        if ctx.needs_input_grad[1]:
            grad_other = sum_to(grad_output * old_x, ctx.other_shape)
        return grad_output * other, grad_other


def mul_(input: Tensor, other: Any) -> Tensor:
    return MulInplace.apply(input, scalar_value(other))


class DivInplace(Function):
    _backward_name = "DivBackward0"

    @staticmethod
    def forward(ctx, x, other, rounding_mode):
        ctx.mark_dirty(x)
        other_is_tensor = isinstance(other, Tensor)
        ctx.other = None if other_is_tensor else other
        ctx.rounding_mode = rounding_mode
        if rounding_mode is None:
            if x._data.dtype.kind != "f":
                raise RuntimeError(
                    f"result type Float can't be cast to the desired output type "
                    f"{_dtype_name(x._data.dtype)}"
                )
            result = _binary(np.true_divide, x, other)
        else:
            result = DivRounding.forward(ctx, x, other, rounding_mode)._data
        if other_is_tensor:
            # d(x/o)/do = -(x/o)/o: the result suffices, so save it rather than the old x.
            ctx.save_for_backward(other, _wrap(result.copy()))
        _write_inplace(x, result)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.rounding_mode is not None:
            return grad_output * 0.0, None, None
        if ctx.other is not None:
            return grad_output / ctx.other, None, None
        other, result = ctx.saved_tensors
        grad_other = None
        if ctx.needs_input_grad[1]:
            grad_other = sum_to(-grad_output * result / other, other.shape)
        return grad_output / other, grad_other, None


def div_(input: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    return DivInplace.apply(input, scalar_value(other), rounding_mode)


class PowInplace(Function):
    _backward_name = "PowBackward0"

    @staticmethod
    def forward(ctx, x, exponent):
        if isinstance(exponent, Tensor):
            raise NotImplementedError("pow_ with a tensor exponent is not supported by lucid")
        ctx.mark_dirty(x)
        ctx.exponent = exponent
        ctx.save_for_backward(_wrap(x._data.copy()))
        _write_inplace(x, np.power(x._data, exponent))
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (old_x,) = ctx.saved_tensors
        exponent = ctx.exponent
        if exponent == 0:
            return grad_output * 0.0, None
        return grad_output * (pow(old_x, exponent - 1) * exponent), None


def pow_(input: Tensor, exponent: Any) -> Tensor:
    return PowInplace.apply(input, scalar_value(exponent))


class NegInplace(Function):
    _backward_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        np.negative(x._data, out=x._data)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output


def neg_(input: Tensor) -> Tensor:
    return NegInplace.apply(input)
