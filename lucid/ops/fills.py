"""Whole-tensor writes and copies: the in-place-only fills (fill_, zero_, copy_, uniform_,
normal_), which replace a tensor's values rather than compute from them, and the copies and
casts (clone, contiguous, to) that every other family's backward uses."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import factories
from lucid._core import devices, dtypes, layouts
from lucid._core.arguments import argument_error, raise_type_error
from lucid._core.devices import check_device
from lucid._core.dtypes import C_TYPE_NAMES, FLOAT_KINDS, INEXACT_KINDS, numpy_finfo
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function
from lucid._core.random import Generator, _rng
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import check_tensors, dtype_name, invalid_combination, zeros_like_grad
from lucid.ops._common import not_implemented as _not_implemented
from lucid.ops._promote import round_to, scalar_value
from lucid.ops.broadcast import broadcast_error, common_shape, sum_to

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "clone", "fill_", "zero_",
    "poisson", "normal",
]  # fmt: skip
__all__ += [
    "fill",
]
__all__ += ["binomial"]


# --------------------------------------------------------------------- casts
def _grad_in(grad: Tensor, numpy_dtype: np.dtype) -> Tensor:
    """`grad` in an input's dtype: a real input takes the real part of a complex gradient
    (PyTorch's rule), without the cast's warning."""
    if grad._data.dtype.kind == "c" and numpy_dtype.kind != "c":
        grad = grad.real
    return to(grad, numpy_dtype)


def fill_scalar(value: Any, numpy_dtype: np.dtype) -> Any:
    """A Python number to write into a tensor of `numpy_dtype`, converted as PyTorch's fills
    convert it: a complex number for a real dtype is refused unless its imaginary part is
    zero (a bool keeps whether it is nonzero)."""
    if value.__class__ is not complex or numpy_dtype.kind == "c":
        return value
    if numpy_dtype.kind == "b":
        return bool(value)
    return factories._kernel_scalar(value, numpy_dtype).item()


def refuse_complex_grad_for_real(grad: Tensor, numpy_dtype: np.dtype) -> None:
    """PyTorch's engine check for a formula that hands a real input a complex gradient (ops
    whose formula takes no real part, unlike a cast's)."""
    if grad._data.dtype.kind == "c" and numpy_dtype.kind != "c":
        raise RuntimeError(
            "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
            "grad_is_complex) to be true, but got false.  (Could this error message be "
            "improved?  If so, please report an enhancement request to PyTorch.)"
        )


class To(Function):
    _backward_name = "ToCopyBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, numpy_dtype, copy):
        source = x._data
        ctx.input_dtype = source.dtype
        if source.dtype.kind == "c":
            source = factories.real_part_for(source, numpy_dtype)
        if numpy_dtype.kind == "V" and source.dtype != numpy_dtype:
            # ml_dtypes' cast to bfloat16 raises no overflow flag: round_to raises it
            return _wrap(round_to(source, numpy_dtype))
        return _wrap(source.astype(numpy_dtype, copy=copy))

    @staticmethod
    def backward(ctx, grad_output):
        # complex -> real: the real gradient g comes back as g + 0j; real -> complex: Re(g)
        return _grad_in(grad_output, ctx.input_dtype), None, None


def _cast_target(dtype: Any) -> np.dtype:
    # A Python float type means float64 here (as in PyTorch), not the default dtype; so does a
    # float value, which PyTorch's argument parser reads as its type.
    if dtype is builtins.float or type(dtype) is builtins.float:
        return np.dtype(np.float64)
    return dtypes.to_numpy_dtype(dtype)


def to(input: Tensor, *args: Any, dtype: Any = None, copy: bool = False,
       non_blocking: bool = False, device: Any = None,
       memory_format: Any = None) -> Tensor:  # fmt: skip
    """Cast to a dtype, or to another tensor's dtype (only the 'cpu' device holds tensors).

    Accepts the forms to(dtype), to(device, dtype), to(other) and positional
    `non_blocking, copy` flags after them, as PyTorch does.
    """
    flags = []
    for arg in args:
        if isinstance(arg, TensorBase):
            dtype = arg.dtype
        elif isinstance(arg, bool):
            flags.append(arg)
        elif isinstance(arg, str | int | devices.device) or arg is None:
            # a device, or an int naming an accelerator's device index
            check_device(arg)
        else:
            dtype = arg
    if len(flags) > 1:
        copy = flags[1]
    check_device(device)
    if dtype is None:
        return input.clone() if copy else input
    target = _cast_target(dtype)
    if target == input._data.dtype and not copy:
        return input
    return To.apply(input, target, True)


class Clone(Function):
    _backward_name = "CloneBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data.copy())

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    return Clone.apply(input)


def contiguous(input: Tensor, *args: Any,
               memory_format: Any = layouts.contiguous_format) -> Tensor:  # fmt: skip
    if args:
        # PyTorch's Tensor.contiguous takes memory_format by keyword only
        verb = "was" if len(args) == 1 else "were"
        raise TypeError(f"contiguous() takes 0 positional arguments but {len(args)} {verb} given")
    if memory_format is layouts.channels_last or memory_format is layouts.channels_last_3d:
        rank = 4 if memory_format is layouts.channels_last else 5
        if input._data.ndim != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format")
        return CloneChannelsLast.apply(input)
    if input._data.flags.c_contiguous:
        return input
    return Clone.apply(input)


# ------------------------------------------------------------------- fills
class FillInplace(Function):
    """Fill with a Python number: the result no longer depends on the old values."""

    _op_name = "fill_"
    _backward_name = "FillBackward2"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, value):
        ctx.mark_dirty(x)
        x._data.fill(value)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape), None


class FillTensorInplace(Function):
    """Fill with a 0-d tensor, which receives the sum of the gradient."""

    _op_name = "fill_"
    _backward_name = "FillBackward3"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, value):
        ctx.mark_dirty(x)
        x._data[...] = factories.real_part_for(value._data, x._data.dtype)
        ctx.value_dtype = value._data.dtype
        return x

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.ops.reduction import sum

        grad_value = None
        if ctx.needs_input_grad[1]:
            refuse_complex_grad_for_real(grad_output, ctx.value_dtype)
            grad_value = to(sum(grad_output), ctx.value_dtype)
        return zeros_like_grad(grad_output, grad_output.shape), grad_value


def fill_(input: Tensor, value: Any) -> Tensor:
    """Set every element to `value` (a number or a 0-d tensor)."""
    if isinstance(value, TensorBase):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        return FillTensorInplace.apply(input, value)
    return FillInplace.apply(input, fill_scalar(scalar_value(value), input._data.dtype))


class ZeroInplace(Function):
    _op_name = "zero_"
    _backward_name = "ZeroBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        x._data.fill(0)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape)


def zero_(input: Tensor) -> Tensor:
    return ZeroInplace.apply(input)


class CopyInplace(Function):
    """Copy src (broadcast to self's shape, cast to self's dtype) into self."""

    _op_name = "copy_"
    _backward_name = "lucid::autograd::CopyBackwards"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, src):
        ctx.mark_dirty(x)
        target = x._data
        source = src._data if isinstance(src, TensorBase) else np.asarray(src)
        if source.shape != target.shape:
            shape = common_shape(target.shape, source.shape)
            if shape != target.shape:
                raise RuntimeError(
                    f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                    f"{list(shape)}"
                )
        ctx.src_shape = source.shape
        ctx.src_dtype = source.dtype
        np.copyto(target, factories.real_part_for(source, target.dtype), casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        grad_src = None
        if ctx.needs_input_grad[1]:
            # cast before reducing, so a wider src dtype also gets the wider sum
            grad_src = sum_to(_grad_in(grad_output, ctx.src_dtype), ctx.src_shape)
        return zeros_like_grad(grad_output, grad_output.shape), grad_src


def copy_(input: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy the elements of `src` into `input`, broadcasting and casting as needed."""
    if not isinstance(src, TensorBase):
        src = scalar_value(src)
    return CopyInplace.apply(input, src)


def _standard_normal(rng: Any, shape: tuple, numpy_dtype: np.dtype) -> np.ndarray:
    """Draws of unit variance in float64, or complex128 for a complex dtype, whose real and
    imaginary parts PyTorch draws each with variance 1/2."""
    if numpy_dtype.kind != "c":
        return rng.standard_normal(shape, dtype=np.float64)
    parts = rng.standard_normal((*shape, 2), dtype=np.float64) * np.sqrt(0.5)
    return parts.view(np.complex128)[..., 0]


class UniformInplace(Function):
    """Fill with uniform draws in [low, high): the result no longer depends on the old values."""

    _op_name = "uniform_"
    _backward_name = "UniformBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, low, high, generator):
        ctx.mark_dirty(x)
        if x._data.dtype.kind == "c":
            # PyTorch draws the real and imaginary parts each uniform on [low, high)
            parts = low + (high - low) * _rng(generator).random((*x._data.shape, 2))
            np.copyto(x._data, parts[..., 0] + 1j * parts[..., 1], casting="unsafe")
            return x
        draws = _rng(generator).random(x._data.shape, dtype=np.float64)
        np.copyto(x._data, low + (high - low) * draws, casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape), None, None, None


def uniform_(input: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with numbers drawn uniformly from [a, b)."""
    _check_generator("uniform_", generator)
    if input._data.dtype.kind not in INEXACT_KINDS:
        raise _not_implemented("check_uniform_bounds", input._data.dtype)
    a, b = scalar_value(a), scalar_value(b)
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
        )
    return UniformInplace.apply(input, a, b, generator)


class NormalInplace(Function):
    """Fill with normal draws: the result no longer depends on the old values."""

    _op_name = "normal_"
    _backward_name = "NormalBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, mean, std, generator):
        ctx.mark_dirty(x)
        if x._data.dtype.kind == "c":
            # each part is mean + std / sqrt(2) * N(0, 1), as PyTorch draws them
            draws = _standard_normal(_rng(generator), x._data.shape, x._data.dtype)
            values = mean + std * draws.real + 1j * (mean + std * draws.imag)
            np.copyto(x._data, values, casting="unsafe")
            return x
        draws = _rng(generator).standard_normal(x._data.shape, dtype=np.float64)
        np.copyto(x._data, mean + std * draws, casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return zeros_like_grad(grad_output, grad_output.shape), None, None, None


def normal_(input: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Any = None) -> Tensor:  # fmt: skip
    """Fill with numbers drawn from N(mean, std^2)."""
    _check_generator("normal_", generator)
    if input._data.dtype.kind not in INEXACT_KINDS:
        raise _not_implemented("normal_kernel_cpu", input._data.dtype)
    mean, std = scalar_value(mean), scalar_value(std)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return NormalInplace.apply(input, mean, std, generator)


# ======================================================= the other random fills, poisson
def _check_generator(op: str, generator: Any) -> None:
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(
            f"{op}(): argument 'generator' must be lucid.Generator, not {type(generator).__name__}"
        )


class _RandomFill(Function):
    """Fill with draws from a distribution: the result no longer depends on the old values.

    A subclass's `_draw(rng, shape, dtype, *parameters)` returns the draws as an array."""

    @staticmethod
    def _draw(rng: Any, shape: tuple, dtype: np.dtype, *parameters: Any) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, x, generator, *parameters):
        ctx.mark_dirty(x)
        ctx.parameter_count = len(parameters)
        draws = cls._draw(_rng(generator), x._data.shape, x._data.dtype, *parameters)
        np.copyto(x._data, draws, casting="unsafe")
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return (zeros_like_grad(grad_output, grad_output.shape), None) + (
            None,
        ) * ctx.parameter_count


def _positive_uniform(rng: Any, shape: tuple) -> np.ndarray:
    # in (0, 1]: 1 - [0, 1), so the log of a draw is finite
    return 1.0 - rng.random(shape, dtype=np.float64)


class ExponentialInplace(_RandomFill):
    _op_name = "exponential_"
    _backward_name = "ExponentialBackward0"

    @staticmethod
    def _draw(rng, shape, dtype, rate):
        # inverse CDF of Exp(rate): -log(U) / rate
        return -np.log(_positive_uniform(rng, shape)) / rate


def exponential_(input: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with draws from the exponential distribution of rate `lambd`."""
    _check_generator("exponential_", generator)
    lambd = scalar_value(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_scalar_name(input._data.dtype)}"
        )
    return ExponentialInplace.apply(input, generator, lambd)


class GeometricInplace(_RandomFill):
    _op_name = "geometric_"
    _complex_refusal = (NotImplementedError, "\"geometric_cpu\" not implemented for '{dtype}'")
    _backward_name = "GeometricBackward0"

    @staticmethod
    def _draw(rng, shape, dtype, p):
        # the number of Bernoulli(p) trials up to the first success, from 1
        return rng.geometric(p, shape)


def geometric_(input: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with draws from the geometric distribution: trials up to the first success."""
    _check_generator("geometric_", generator)
    p = scalar_value(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if input._data.dtype == np.bool_:
        raise _not_implemented("geometric_cpu", input._data.dtype)
    return GeometricInplace.apply(input, generator, p)


class LogNormalInplace(_RandomFill):
    _op_name = "log_normal_"
    _backward_name = "LogNormalBackward0"

    @staticmethod
    def _draw(rng, shape, dtype, mean, std):
        return np.exp(mean + std * rng.standard_normal(shape, dtype=np.float64))


def log_normal_(input: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Any = None) -> Tensor:  # fmt: skip
    """Fill with exp(N(mean, std^2)) draws."""
    _check_generator("log_normal_", generator)
    mean, std = scalar_value(mean), scalar_value(std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise _not_implemented("log_normal_cpu", input._data.dtype)
    return LogNormalInplace.apply(input, generator, mean, std)


class CauchyInplace(_RandomFill):
    _op_name = "cauchy_"
    _backward_name = "CauchyBackward0"

    @staticmethod
    def _draw(rng, shape, dtype, median, sigma):
        # inverse CDF: median + sigma tan(pi (U - 1/2))
        return median + sigma * np.tan(np.pi * (rng.random(shape, dtype=np.float64) - 0.5))


def cauchy_(input: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Any = None) -> Tensor:  # fmt: skip
    """Fill with draws from the Cauchy distribution centred at `median` with scale `sigma`."""
    _check_generator("cauchy_", generator)
    median, sigma = scalar_value(median), scalar_value(sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {C_TYPE_NAMES[input._data.dtype.name]}"
        )
    return CauchyInplace.apply(input, generator, median, sigma)


class RandomInplace(_RandomFill):
    _op_name = "random_"
    _backward_name = "RandomBackward0"

    @staticmethod
    def _draw(rng, shape, dtype, low, high):
        # integers uniform on [low, high), drawn exactly in int64 (or uint64 past its range)
        if high > np.iinfo(np.int64).max:
            return rng.integers(low, high, shape, dtype=np.uint64)
        return rng.integers(low, high, shape, dtype=np.int64)


def _scalar_name(numpy_dtype: np.dtype) -> str:
    return dtype_name(numpy_dtype)


def _default_random_bound(numpy_dtype: np.dtype) -> int:
    """One past the largest value random_() draws: every integer a float holds exactly (up to
    2^mantissa bits, inclusive) or the integer type's whole non-negative range."""
    if numpy_dtype == np.bool_:
        return 2
    if numpy_dtype.kind in FLOAT_KINDS:
        return 2 ** (numpy_finfo(numpy_dtype).nmant + 1) + 1
    return int(np.iinfo(numpy_dtype).max) + 1


def random_(input: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill with integers uniform on [from, to): random_(), random_(to), random_(from, to)."""
    _check_generator("random_", generator)
    values = list(args)
    for name in ("from", "to"):
        if name in kwargs:
            values.append(kwargs.pop(name))
    if (
        kwargs
        or len(values) > 2
        or any(
            v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer))
            for v in values
        )
    ):
        names = ", ".join(type(v).__name__ for v in values)
        marked = ", ".join(f"!{type(v).__name__}!" for v in values)
        raise TypeError(
            f"random_() received an invalid combination of arguments - got ({names}), but "
            "expected one of:\n * (*, lucid.Generator generator = None)\n      didn't match "
            f"because some of the arguments have invalid types: ({marked})\n * (int from, int "
            "to, *, lucid.Generator generator = None)\n * (int to, *, lucid.Generator generator "
            "= None)\n"
        )
    dtype = input._data.dtype
    if dtype.kind == "c":
        if values:
            raise RuntimeError(
                "check_random_bounds handles only integral, floating-point and boolean types"
            )
        raise _not_implemented("random_kernel_cpu", dtype)
    if len(values) == 2 and values[1] is not None:
        low, high = int(values[0]), int(values[1])
    elif len(values) == 1:
        low, high = 0, int(values[0])
    else:
        low = int(values[0]) if values else 0
        high = _default_random_bound(dtype)
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= low <= info.max:
            raise RuntimeError(f"from is out of bounds for {C_TYPE_NAMES[dtype.name]}")
        if not info.min <= high - 1 <= info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {C_TYPE_NAMES[dtype.name]}")
    return RandomInplace.apply(input, generator, low, high)


class BernoulliInplace(_RandomFill):
    _op_name = "bernoulli_"
    _backward_name = "BernoulliBackward0"

    @classmethod
    def forward(cls, ctx, x, generator, p):
        ctx.mark_dirty(x)
        ctx.parameter_count = 1
        probability = p._data if isinstance(p, TensorBase) else p
        draws = _rng(generator).random(x._data.shape, dtype=np.float64) < probability
        np.copyto(x._data, draws, casting="unsafe")
        return x


def bernoulli_(input: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 1 with probability p (a number or a tensor broadcast to input), else 0."""
    _check_generator("bernoulli_", generator)
    if input._data.dtype.kind == "c":
        kernel = (
            "bernoulli_tensor_cpu_self_" if isinstance(p, TensorBase) else "bernoulli_scalar_cpu_"
        )
        raise _not_implemented(kernel, input._data.dtype)
    if isinstance(p, TensorBase) and p._data.dtype.kind == "c":
        raise _not_implemented("bernoulli_tensor_cpu_p_", p._data.dtype)
    if isinstance(p, TensorBase):
        probability = p._data
        if np.any(~((probability >= 0) & (probability <= 1))):
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)"
            )
        np.broadcast_to(probability, input._data.shape)
    else:
        p = scalar_value(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return BernoulliInplace.apply(input, generator, p)


class Poisson(Function):
    _backward_name = "PoissonBackward0"

    @staticmethod
    def forward(ctx, rates, generator):
        array = rates._data
        ctx.shape = array.shape
        return _wrap(_rng(generator).poisson(array.astype(np.float64)).astype(array.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # a sample is piecewise constant in its rate
        return zeros_like_grad(grad_output, ctx.shape), None


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Draws from Poisson distributions with the rates in `input`."""
    if not isinstance(input, TensorBase):
        raise_type_error(input, "Tensor")
    _check_generator("poisson", generator)
    array = input._data
    if array.dtype.kind not in FLOAT_KINDS:
        raise _not_implemented("poisson_cpu", array.dtype)
    if np.any(~(array >= 0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Poisson.apply(input, generator)


# Trial counts from here on exceed NumPy's int64 sampler; a binomial draw is then normal to far
# below the float spacing of the count.
_BINOMIAL_NORMAL_COUNT = 2.0**62


def _binomial_draws(rng: Any, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Binomial draws in float64 of broadcast float64 count and prob, with PyTorch's edge cases:
    0 where count <= 0 or prob <= 0, count itself where prob >= 1, nan where prob is nan."""
    result = np.zeros(count.shape)
    with np.errstate(invalid="ignore"):
        decided = (count <= 0) | (prob <= 0)
        certain = ~decided & (prob >= 1)
        result[certain] = count[certain]
        decided |= certain
        undefined = ~decided & (np.isnan(prob) | np.isnan(count))
        result[undefined] = np.nan
        decided |= undefined
        endless = ~decided & np.isinf(count)
        result[endless] = np.inf
        decided |= endless
    # a trial count is whole: a fractional count gives its whole part's number of trials
    trials = np.floor(count)
    huge = ~decided & (trials >= _BINOMIAL_NORMAL_COUNT)
    drawn = ~decided & ~huge
    result[drawn] = rng.binomial(trials[drawn].astype(np.int64), prob[drawn])
    n, p = trials[huge], prob[huge]
    normal = n * p + np.sqrt(n * p * (1.0 - p)) * rng.standard_normal(n.shape)
    result[huge] = np.clip(np.round(normal), 0.0, n)
    return result


class Binomial(Function):
    # PyTorch defines no derivative for binomial: its node fails when backward reaches it.
    _backward_name = "NotImplemented"
    _op_name = "binomial"

    @staticmethod
    def forward(ctx, count, prob, generator):
        count_array, prob_array = count._data, prob._data
        try:
            count_full, prob_full = np.broadcast_arrays(count_array, prob_array)
        except ValueError:
            raise broadcast_error(count_array.shape, prob_array.shape) from None
        draws = _binomial_draws(
            _rng(generator), count_full.astype(np.float64), prob_full.astype(np.float64)
        )
        return _wrap(draws.astype(count_array.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("derivative for aten::binomial is not implemented")


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Draws from binomial distributions with `count` trials of success probability `prob`
    (float tensors of one dtype, broadcast together). A fractional count gives its whole part's
    number of trials; a nan or infinite count (where prob is in (0, 1)) gives nan or inf."""
    for position, (name, value) in enumerate((("count", count), ("prob", prob)), start=1):
        if not isinstance(value, TensorBase):
            raise argument_error("binomial", name, position, value)
    _check_generator("binomial", generator)
    for name, value in (("count", count), ("prob", prob)):
        if value._data.dtype.kind not in FLOAT_KINDS:
            raise ValueError(
                f"binomial only supports floating-point dtypes for {name}, got: "
                f"{dtype_name(value._data.dtype)}"
            )
    if prob._data.dtype != count._data.dtype:
        raise RuntimeError(
            f"Found dtype {dtype_name(prob._data.dtype)} but expected "
            f"{dtype_name(count._data.dtype)}"
        )
    if count._data.dtype == np.float16:
        raise _not_implemented("binomial_cpu", count._data.dtype)
    return Binomial.apply(count, prob, generator)


class _Normal(Function):
    """Normal draws mean + std * noise with tensor parameters, differentiable in them."""

    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, mean, std, generator):
        mean_array = mean._data if isinstance(mean, TensorBase) else mean
        std_array = std._data if isinstance(std, TensorBase) else std
        target = (mean if isinstance(mean, TensorBase) else std)._data.dtype
        shape = common_shape(np.shape(mean_array), np.shape(std_array))
        noise = _standard_normal(_rng(generator), shape, target)
        result = _wrap((mean_array + std_array * noise).astype(target))
        ctx.save_for_backward(
            mean if isinstance(mean, TensorBase) else None,
            std if isinstance(std, TensorBase) else None,
            result,
        )
        return result

    @staticmethod
    def backward(ctx, grad_output):
        mean, std, result = ctx.saved_tensors
        grad_mean = grad_std = None
        # result = mean + std * noise: d/dmean = 1, d/dstd = noise = (result - mean) / std
        if ctx.needs_input_grad[0]:
            grad_mean = sum_to(grad_output, mean.shape)
        if ctx.needs_input_grad[1]:
            centred = result if mean is None else result - mean
            grad_std = sum_to(grad_output * centred / std, std.shape)
        return grad_mean, grad_std, None


class NormalTensorFloat(_Normal):
    _backward_name = "NormalBackward1"


class NormalFloatTensor(_Normal):
    _backward_name = "NormalBackward2"


class NormalTensors(_Normal):
    _backward_name = "NormalBackward3"


_NORMAL_OVERLOADS = (
    "(Tensor mean, Tensor std, *, lucid.Generator generator = None, Tensor out = None)",
    "(Tensor mean, float std = 1, *, lucid.Generator generator = None, Tensor out = None)",
    "(float mean, Tensor std, *, lucid.Generator generator = None, Tensor out = None)",
    "(float mean, float std, tuple of ints size, *, lucid.Generator generator = None, Tensor "
    "out = None, lucid.dtype dtype = None, lucid.layout layout = None, lucid.device device = "
    "None, bool pin_memory = False, bool requires_grad = False)",
)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Normal draws: tensor means and/or stds (broadcast, differentiable in both), or two
    numbers with a `size`."""
    _check_generator("normal", generator)
    tensors = [value for value in (mean, std) if isinstance(value, TensorBase)]
    if not tensors:
        if size is None:
            raise invalid_combination("normal", (mean, std), _NORMAL_OVERLOADS)
        return factories.normal(
            mean, std, size, generator=generator, dtype=dtype, device=device,
            requires_grad=requires_grad,
        )  # fmt: skip
    if size is not None:
        raise invalid_combination("normal", (mean, std, size), _NORMAL_OVERLOADS)
    check_device(device)
    if isinstance(std, TensorBase) and std._data.dtype.kind == "c":
        raise RuntimeError("normal expects standard deviation to be non-complex")
    for value in tensors:
        if value._data.dtype.kind not in INEXACT_KINDS:
            raise _not_implemented("normal_kernel_cpu", value._data.dtype)
    if isinstance(std, TensorBase):
        if np.any(std._data < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        std = scalar_value(std)
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if not isinstance(mean, TensorBase):
        mean = scalar_value(mean)
    if isinstance(mean, TensorBase) and isinstance(std, TensorBase):
        common_shape(mean._data.shape, std._data.shape)
        return NormalTensors.apply(mean, std, generator)
    if isinstance(mean, TensorBase):
        return NormalTensorFloat.apply(mean, std, generator)
    return NormalFloatTensor.apply(mean, std, generator)


class CloneChannelsLast(Function):
    """A copy whose memory holds the channel dim (dim 1) last, as channels_last asks."""

    _backward_name = "CloneBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x):
        array = x._data
        order = (0, *range(2, array.ndim), 1)
        stored = np.ascontiguousarray(array.transpose(order))
        return _wrap(stored.transpose(np.argsort(order)))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class Fill(Function):
    """A tensor of input's shape and dtype holding `value`: the out-of-place fill_."""

    _backward_name = "FillBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, value):
        ctx.shape = x._data.shape
        return _wrap(np.full(x._data.shape, value, x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # the result does not depend on the input's values
        return zeros_like_grad(grad_output, ctx.shape), None


def fill(input: Tensor, value: Any) -> Tensor:
    check_tensors(input)
    if isinstance(value, TensorBase):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        value = value._data.item()
    return Fill.apply(input, scalar_value(value))
