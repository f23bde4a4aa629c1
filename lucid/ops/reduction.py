"""Reductions: sum, nansum, mean, nanmean, prod, var, std, var_mean, std_mean, max/min,
amax/amin, aminmax, argmax/argmin, logsumexp, norm, renorm, all, any, count_nonzero, hash_tensor."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import raise_argument_error
from lucid._core.dtypes import FLOAT_KINDS, INEXACT_KINDS
from lucid._core.function import HOLOMORPHIC, OWN_COMPLEX_RULE, Function, once_differentiable
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap

# Module imports, not names: these families may import this one, and attribute lookups at
# call time work whichever module finishes loading first.
from lucid.ops import arithmetic as arithmetic_ops
from lucid.ops import fills as fills_ops
from lucid.ops import pointwise as pointwise_ops
from lucid.ops import shape as shape_ops
from lucid.ops._common import (
    _array,
    _int_argument,
    apply_inplace,
    check_bool,
    check_int,
    check_number,
    check_tensors,
    dtype_name,
    not_implemented,
    result_type,
    zeros_like_grad,
)
from lucid.ops._promote import float_array, is_low_precision, low_precision_of, round_to, widen

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "sum", "mean", "prod", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "logsumexp", "norm", "all", "any", "count_nonzero", "renorm", "hash_tensor", "aminmax",
    "nanmean", "nansum", "std_mean", "var_mean",
]  # fmt: skip


_INT64 = np.dtype(np.int64)
_FLOAT16 = np.dtype(np.float16)
_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)
_COMPLEX128 = np.dtype(np.complex128)
# The real dtype of each complex one: var, std and norms of complex input are real.
_REAL_OF = {np.dtype(np.complex64): _FLOAT32, _COMPLEX128: _FLOAT64}

# (accumulator, result) dtypes of sum/prod/cumsum/cumprod when no dtype is given: PyTorch
# returns int64 for integral and bool input, and accumulates half precision in float32.
_ACCUMULATORS = {
    np.dtype(np.bool_): (_INT64, _INT64),
    np.dtype(np.uint8): (_INT64, _INT64),
    np.dtype(np.int8): (_INT64, _INT64),
    np.dtype(np.int16): (_INT64, _INT64),
    np.dtype(np.int32): (_INT64, _INT64),
    np.dtype(np.int64): (_INT64, _INT64),
    _FLOAT16: (_FLOAT32, _FLOAT16),
}
dtypes.when_bfloat16_loads(
    lambda bfloat16: _ACCUMULATORS.__setitem__(bfloat16, (_FLOAT32, bfloat16))
)


# --------------------------------------------------------------------------------- helpers
def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """`dim` (None, int or sequence) as a sorted tuple of non-negative dims; None means all.

    A 0-d tensor accepts dim 0 and -1 but has no dim to reduce, so it gets ().
    """
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = _normalize_dim(dim, ndim)
        return (dim,) if ndim else ()
    dims = []
    for item in dim:
        if not isinstance(item, int):
            raise TypeError(
                f"dim must be an int or a tuple of ints, but found an element of type "
                f"{type(item).__name__}"
            )
        dims.append(_normalize_dim(item, ndim))
    dims.sort()
    for previous, current in zip(dims, dims[1:]):
        if previous == current:
            raise RuntimeError(f"dim {current} appears multiple times in the list of dims")
    return tuple(dims) if ndim else ()


def _keepdim_shape(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> tuple[int, ...]:
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if index in dims else size for index, size in enumerate(shape))


def _reduced_shape(shape: tuple[int, ...], dims: tuple[int, ...] | None,
                   keepdim: bool) -> tuple[int, ...]:  # fmt: skip
    if keepdim:
        return _keepdim_shape(shape, dims)
    if dims is None:
        return ()
    return tuple(size for index, size in enumerate(shape) if index not in dims)


def _reduced_count(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> int:
    """How many input elements feed each output element."""
    if dims is None:
        return math.prod(shape)
    return math.prod(shape[index] for index in dims)


def restore_reduced(grad: Tensor, shape: tuple[int, ...], dims: tuple[int, ...] | None,
                    keepdim: bool) -> Tensor:  # fmt: skip
    """A reduction's output (or its gradient) with the reduced dims back as size 1, so that it
    broadcasts against the input of `shape`."""
    if keepdim:
        return grad
    target = _keepdim_shape(shape, dims)
    if grad._data.shape == target:
        return grad
    return shape_ops.reshape(grad, target)


def expand_reduced(grad: Tensor, shape: tuple[int, ...], dims: tuple[int, ...] | None,
                   keepdim: bool) -> Tensor:  # fmt: skip
    """Broadcast a reduction's gradient back over the reduced dimensions of `shape`."""
    return shape_ops.expand(restore_reduced(grad, shape, dims, keepdim), shape)


def _as_dtype(grad: Tensor, numpy_dtype: np.dtype | None) -> Tensor:
    """The gradient in the input's dtype, for ops whose `dtype` argument changed the output's."""
    if numpy_dtype is None or grad._data.dtype == numpy_dtype:
        return grad
    return fills_ops.to(grad, numpy_dtype)


def _reciprocal(value: float) -> float:
    # Python raises on 1 / 0; PyTorch divides by a zero count and gets inf.
    return 1.0 / value if value else math.inf


def _check_int_dim(name: str, dim: Any) -> None:
    if not isinstance(dim, int):
        raise TypeError(
            f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}"
        )


def _accumulate(reduce: Any, array: np.ndarray, axis: Any, keepdim: bool,
                dtype: np.dtype | None) -> np.ndarray:  # fmt: skip
    """`reduce(array)` (np.add.reduce, ...) in PyTorch's result dtype for sum-like ops."""
    if dtype is not None:
        return reduce(array, axis, dtype, None, keepdim)
    accumulators = _ACCUMULATORS.get(array.dtype)
    if accumulators is None:
        return reduce(array, axis, None, None, keepdim)
    accumulator, result = accumulators
    return round_to(np.asarray(reduce(array, axis, accumulator, None, keepdim)), result)


# ------------------------------------------------------------------------------------- sum
class Sum(Function):
    """Sum of every element."""

    _backward_name = "SumBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dtype):
        array = x._data
        ctx.shape = array.shape
        ctx.input_dtype = array.dtype if dtype is not None else None
        return _wrap(_accumulate(np.add.reduce, array, None, False, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # d/dx sum(x) = 1 for every element
        return _as_dtype(shape_ops.expand(grad_output, ctx.shape), ctx.input_dtype), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # without a dtype: the same reduction, and the gradient broadcast (expand's view)
        x, dtype = args
        if dtype is not None or x.dtype.kind != "f":
            return None
        shape = x.shape

        def backward(grad, out, x, dtype):
            return np.broadcast_to(grad, shape), None

        return (lambda x, dtype: _accumulate(np.add.reduce, x, None, False, None)), backward, Sum


class SumDim(Function):
    """Sum over some dims."""

    _backward_name = "SumBackward1"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.keepdim = keepdim
        ctx.input_dtype = array.dtype if dtype is not None else None
        return _wrap(_accumulate(np.add.reduce, array, dims, keepdim, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        grad = expand_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        return _as_dtype(grad, ctx.input_dtype), None, None, None


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum over `dim` (an int or a tuple; all dims when None or empty)."""
    check_bool(keepdim, "sum", "keepdim", 3)
    if dtype is not None:
        dtype = dtypes.to_numpy_dtype(dtype)
    if dim is None and not keepdim:
        return Sum.apply(input, dtype)
    dims = normalize_dims(dim, input._data.ndim) or None
    return SumDim.apply(input, dims, keepdim, dtype)


# --------------------------------------------------------------------------------- nansum
class Nansum(Function):
    _backward_name = "NansumBackward0"
    _complex_refusal = (RuntimeError, "nansum on CPU does not support complex inputs")

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        array = x._data
        result = np.asarray(_accumulate(np.add.reduce, array, dims, keepdim, dtype))
        if array.dtype.kind in FLOAT_KINDS:
            # Most inputs hold no NaN: sum first, and mask the NaNs only where a sum shows one.
            nan = None
            if np.isnan(result).any():
                nan = np.isnan(array)
                masked = np.where(nan, 0, array)
                result = np.asarray(_accumulate(np.add.reduce, masked, dims, keepdim, dtype))
            if ctx.needs_input_grad[0]:
                ctx.shape = array.shape
                ctx.dims = dims
                ctx.keepdim = keepdim
                ctx.save_for_backward(_wrap(np.isnan(array) if nan is None else nan))
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        (nan,) = ctx.saved_tensors
        # d/dx nansum(x) = 1 where x is a number, 0 where it is NaN
        grad = restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        return pointwise_ops.where(nan, 0.0, grad), None, None, None


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """`sum` treating NaN as zero."""
    check_bool(keepdim, "nansum", "keepdim", 3)
    array = _array(input)
    if dtype is not None:
        dtype = dtypes.to_numpy_dtype(dtype)
    dims = normalize_dims(dim, array.ndim) or None
    if dims is None and keepdim:
        dims = tuple(range(array.ndim))
    return Nansum.apply(input, dims, keepdim, dtype)


# ------------------------------------------------------------------------------------ mean
def _mean_array(array: np.ndarray, dims: tuple[int, ...] | None, keepdim: bool,
                dtype: np.dtype | None) -> np.ndarray:  # fmt: skip
    count = array.size if dims is None else _reduced_count(array.shape, dims)
    if dtype is None and is_low_precision(array.dtype):
        total = np.add.reduce(array, dims, _FLOAT32, None, keepdim)
        return round_to(np.asarray(total / np.float32(count)), array.dtype)
    return np.add.reduce(array, dims, dtype, None, keepdim) / count


class Mean(Function):
    """Mean of every element."""

    _backward_name = "MeanBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dtype):
        array = x._data
        ctx.shape = array.shape
        ctx.input_dtype = array.dtype if dtype is not None else None
        return _wrap(_mean_array(array, None, False, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        # d/dx mean(x) = 1/N for every element
        grad = shape_ops.expand(grad_output / math.prod(ctx.shape), ctx.shape)
        return _as_dtype(grad, ctx.input_dtype), None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        x, dtype = args
        return _mean_kernels(x, None, False, dtype)


class MeanDim(Function):
    """Mean over some dims."""

    _backward_name = "MeanBackward1"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.keepdim = keepdim
        ctx.input_dtype = array.dtype if dtype is not None else None
        return _wrap(_mean_array(array, dims, keepdim, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        count = _reduced_count(ctx.shape, ctx.dims)
        grad = expand_reduced(grad_output / count, ctx.shape, ctx.dims, ctx.keepdim)
        return _as_dtype(grad, ctx.input_dtype), None, None, None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        x, dims, keepdim, dtype = args
        return _mean_kernels(x, dims, keepdim, dtype)


def _mean_kernels(x: np.ndarray, dims: tuple[int, ...] | None, keepdim: bool,
                  dtype: Any) -> tuple | None:  # fmt: skip
    """Mean's and MeanDim's flat kernels (lucid/_dynamo/flat.py), without a dtype: the same
    mean, and the gradient's quotient (the division op's np.true_divide) with the reduced
    dims back, broadcast (expand's view)."""
    if dtype is not None or x.dtype.kind != "f" or x.dtype.itemsize < 4 or not x.size:
        return None
    shape = x.shape
    count = _reduced_count(shape, dims)
    kept_shape = _keepdim_shape(shape, dims)

    def forward(x, *config):
        return _mean_array(x, dims, keepdim, None)

    def backward(grad, out, x, *config):
        quotient = np.true_divide(grad, count).reshape(kept_shape)
        return (np.broadcast_to(quotient, shape), *(None,) * len(config))

    return forward, backward, arithmetic_ops.DivScalar


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean over `dim` (an int or a tuple; all dims when None or empty); float or complex input."""
    check_bool(keepdim, "mean", "keepdim", 3)
    try:
        if dtype is not None:
            dtype = dtypes.to_numpy_dtype(dtype)
            if dtype.kind not in INEXACT_KINDS:
                raise RuntimeError(
                    "mean(): could not infer output dtype. Optional dtype must be either a "
                    f"floating point or complex dtype. Got: {dtype_name(dtype)}"
                )
        elif input._data.dtype.kind not in INEXACT_KINDS:
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point "
                f"or complex dtype. Got: {dtype_name(input._data.dtype)}"
            )
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if dim is None and not keepdim:
        return Mean.apply(input, dtype)
    dims = normalize_dims(dim, input._data.ndim) or None
    return MeanDim.apply(input, dims, keepdim, dtype)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> Tensor:  # fmt: skip
    """`mean` of the entries that are not NaN (NaN where a slice has none)."""
    check_bool(keepdim, "nanmean", "keepdim", 3)
    array = _array(input)
    if array.dtype.kind not in INEXACT_KINDS:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{dtype_name(array.dtype)}"
        )
    count = nansum(pointwise_ops.logical_not(pointwise_ops.isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ------------------------------------------------------------------------------------ prod
def _prod_forward(ctx, x, dims, keepdim, dtype):
    array = x._data
    ctx.shape = array.shape
    ctx.dims = dims
    ctx.keepdim = keepdim
    ctx.input_dtype = array.dtype if dtype is not None else None
    result = _wrap(_accumulate(np.multiply.reduce, array, dims, keepdim, dtype))
    if ctx.needs_input_grad[0]:
        ctx.zero_count = int(np.count_nonzero(array == 0))
        ctx.save_for_backward(x, result)
    return result


def _prod_backward(ctx, grad_output):
    x, result = ctx.saved_tensors
    grad = restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
    if ctx.zero_count == 0:
        # d/dx_i prod(x) = prod(x) / x_i while no factor is zero
        grad = grad * (restore_reduced(result, ctx.shape, ctx.dims, ctx.keepdim) / x)
    elif ctx.dims is None and ctx.zero_count > 1 and not is_grad_enabled():
        # Every product of the other factors holds a zero; PyTorch returns exact zeros here
        # (not inf * 0 = NaN where another factor is infinite).
        return zeros_like_grad(grad_output, ctx.shape)
    else:
        grad = grad * _product_of_others(x, ctx.dims)
    return _as_dtype(grad, ctx.input_dtype)


def _product_of_others(x: Tensor, dims: tuple[int, ...] | None) -> Tensor:
    """prod(x) / x_i along `dims` without dividing, for inputs with zeros.

    The product of the factors before x_i times the product of those after it, both exclusive
    cumprods, so that its own derivative (prod's second derivative) is right at zeros too.
    """
    # late imports: cumulative and joining build on this module
    from lucid.ops.cumulative import cumprod
    from lucid.ops.joining import cat

    if dims is None:
        flat = _product_of_others(shape_ops.reshape(x, (-1,)), (0,))
        return shape_ops.reshape(flat, x._data.shape)
    flip, narrow = shape_ops.flip, shape_ops.narrow
    (dim,) = dims
    size = x._data.shape[dim]
    ones = _wrap(np.ones(_keepdim_shape(x._data.shape, dims), x._data.dtype))
    before = cumprod(cat([ones, narrow(x, dim, 0, size - 1)], dim), dim)
    reversed_after = cumprod(cat([ones, flip(narrow(x, dim, 1, size - 1), dim)], dim), dim)
    return before * flip(reversed_after, dim)


class Prod(Function):
    """Product of every element."""

    _backward_name = "ProdBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dtype):
        return _prod_forward(ctx, x, None, False, dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return _prod_backward(ctx, grad_output), None


class ProdDim(Function):
    """Product along one dim."""

    _backward_name = "ProdBackward1"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        return _prod_forward(ctx, x, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return _prod_backward(ctx, grad_output), None, None, None


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:  # fmt: skip
    """Product of all elements, or along the single dim `dim`."""
    check_bool(keepdim, "prod", "keepdim", 3)
    if dtype is not None:
        dtype = dtypes.to_numpy_dtype(dtype)
    if dim is None:
        return Prod.apply(input, dtype)
    _check_int_dim("prod", dim)
    dims = normalize_dims(dim, input._data.ndim) or None
    return ProdDim.apply(input, dims, keepdim, dtype)


# ------------------------------------------------------------------------------- var / std
def _variance(array: np.ndarray, dims: tuple[int, ...] | None, dof: float,
              keepdim: bool) -> np.ndarray:  # fmt: skip
    # In float64, as PyTorch accumulates: std of ±1e30 in float32 is finite (var is not).
    work = array.astype(_COMPLEX128 if array.dtype.kind == "c" else _FLOAT64, copy=False)
    count = _reduced_count(array.shape, dims)
    centered = work - np.add.reduce(work, dims, None, None, True) / count
    if centered.dtype.kind == "c":
        # the variance of complex values is the mean of |z - mean(z)|^2
        centered = np.abs(centered)
    return np.add.reduce(centered * centered, dims, None, None, keepdim) / builtins.max(0, dof)


def _variance_args(name: str, input: Tensor, dim: Any, unbiased: Any,
                   correction: Any) -> tuple[tuple[int, ...] | None, float]:  # fmt: skip
    """The dims and the degrees of freedom (N - correction) of var/std."""
    try:
        if input._data.dtype.kind not in INEXACT_KINDS:
            raise RuntimeError("std and var only support floating point and complex dtypes")
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if isinstance(dim, bool):
        # var(x, True) is var(x, unbiased=True)
        if unbiased is not None:
            raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not bool")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(
            f"{name}() received an invalid combination of arguments: unbiased and correction "
            "cannot both be given"
        )
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = normalize_dims(dim, input._data.ndim) or None
    dof = _reduced_count(input._data.shape, dims) - correction
    if dof <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    return dims, dof


def _variance_backward(x: Tensor, grad: Tensor, dims: tuple[int, ...] | None,
                       dof: float) -> Tensor:  # fmt: skip
    """Gradient of var(x) over `dims`; `grad` keeps the reduced dims."""
    x_mean = mean(x, dims, True)
    if dims is None and dof <= 0:
        # PyTorch's gradient when no degree of freedom is left: 2 / dof taken as +inf, and
        # NaN (inf * 0) where x equals the mean
        where = pointwise_ops.where
        return where(pointwise_ops.eq(x, x_mean), grad * math.nan, grad * math.inf)
    # d/dx var(x) = 2 (x - mean(x)) / (N - correction); for complex x, with the real grad of
    # the real var, this is PyTorch's conjugate Wirtinger gradient too
    return (x - x_mean) * (grad * (2.0 * _reciprocal(dof)))


class Var(Function):
    _backward_name = "VarBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dims, dof, keepdim):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.dof = dof
        ctx.keepdim = keepdim
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)
        variance = np.asarray(_variance(array, dims, dof, keepdim))
        return _wrap(round_to(variance, _REAL_OF.get(array.dtype, array.dtype)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad = restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        return _variance_backward(x, grad, ctx.dims, ctx.dof), None, None, None


def var(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:  # fmt: skip
    """Variance over `dim`, divided by N - correction (correction 1 unless `unbiased` is False)."""
    check_bool(keepdim, "var", "keepdim", 4)
    dims, dof = _variance_args("var", input, dim, unbiased, correction)
    return Var.apply(input, dims, dof, keepdim)


class Std(Function):
    _backward_name = "StdBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dims, dof, keepdim):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.dof = dof
        ctx.keepdim = keepdim
        variance = _variance(array, dims, dof, keepdim)
        result = np.asarray(np.sqrt(variance))
        result = _wrap(round_to(result, _REAL_OF.get(array.dtype, array.dtype)))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        grad = restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        std = restore_reduced(result, ctx.shape, ctx.dims, ctx.keepdim)
        # d std = d var / (2 std); PyTorch takes 0 where std is 0
        grad_var = pointwise_ops.where(pointwise_ops.eq(std, 0.0), 0.0, grad / (std * 2.0))
        return _variance_backward(x, grad_var, ctx.dims, ctx.dof), None, None, None


def std(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:  # fmt: skip
    """Standard deviation over `dim` (see `var` for `unbiased` and `correction`)."""
    check_bool(keepdim, "std", "keepdim", 4)
    dims, dof = _variance_args("std", input, dim, unbiased, correction)
    return Std.apply(input, dims, dof, keepdim)


# ------------------------------------------------------------------------ std_mean / var_mean
def _add_mean_backward(ctx: Any, grad: Tensor | None, grad_mean: Tensor | None) -> Any:
    """`grad` plus the gradient of the mean. An output the loss did not use has no gradient
    (not zeros), so that 0 * inf never turns the other's gradient into NaN."""
    if grad_mean is None:
        return grad
    # d/dx mean(x) = 1 / N
    grad_mean = restore_reduced(grad_mean, ctx.shape, ctx.dims, ctx.keepdim)
    count = _reduced_count(ctx.shape, ctx.dims)
    grad_mean = shape_ops.expand(grad_mean * (1.0 / count if count else float("nan")), ctx.shape)
    return grad_mean if grad is None else grad + grad_mean


class VarMean(Function):
    _backward_name = "VarMeanBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dims, dof, keepdim):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.dof = dof
        ctx.keepdim = keepdim
        ctx.set_materialize_grads(False)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x)
        variance = np.asarray(_variance(array, dims, dof, keepdim))
        variance = variance.astype(_REAL_OF.get(array.dtype, array.dtype))
        mean = _mean_array(array, dims, keepdim, None)
        return _wrap(variance), _wrap(np.asarray(mean))

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        (x,) = ctx.saved_tensors
        grad_var_input = None
        if grad_var is not None:
            grad_var = restore_reduced(grad_var, ctx.shape, ctx.dims, ctx.keepdim)
            grad_var_input = _variance_backward(x, grad_var, ctx.dims, ctx.dof)
        return _add_mean_backward(ctx, grad_var_input, grad_mean), None, None, None


class StdMean(Function):
    _backward_name = "StdMeanBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dims, dof, keepdim):
        array = x._data
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.dof = dof
        ctx.keepdim = keepdim
        ctx.set_materialize_grads(False)
        deviation = np.sqrt(_variance(array, dims, dof, keepdim))
        deviation = deviation.astype(_REAL_OF.get(array.dtype, array.dtype))
        deviation = _wrap(np.asarray(deviation))
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, deviation)
        mean = _mean_array(array, dims, keepdim, None)
        return deviation, _wrap(np.asarray(mean))

    @staticmethod
    def backward(ctx, grad_std, grad_mean):
        x, deviation = ctx.saved_tensors
        grad_std_input = None
        if grad_std is not None:
            restore = restore_reduced
            grad_std = restore(grad_std, ctx.shape, ctx.dims, ctx.keepdim)
            deviation = restore(deviation, ctx.shape, ctx.dims, ctx.keepdim)
            # d std = d var / (2 std); PyTorch takes 0 where std is 0
            where = pointwise_ops.where
            grad_var = where(pointwise_ops.eq(deviation, 0.0), 0.0, grad_std / (deviation * 2.0))
            grad_std_input = _variance_backward(x, grad_var, ctx.dims, ctx.dof)
        return _add_mean_backward(ctx, grad_std_input, grad_mean), None, None, None


def _paired_moments(name: str, function: Any, input: Tensor, dim: Any, unbiased: Any,
                    keepdim: bool, correction: Any) -> tuple:  # fmt: skip
    check_tensors(input)
    if input._data.dtype.kind not in INEXACT_KINDS:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    dims, dof = _variance_args(name, input, dim, unbiased, correction)
    if dims is None and keepdim:
        dims = tuple(range(input._data.ndim))
    return tuple(function.apply(input, dims, dof, keepdim))


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple:  # fmt: skip
    """(var, mean) over `dim` in one pass (see `var` for `unbiased` and `correction`)."""
    check_bool(keepdim, "var_mean", "keepdim", 4)
    return _paired_moments("var_mean", VarMean, input, dim, unbiased, keepdim, correction)


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple:  # fmt: skip
    """(std, mean) over `dim` in one pass (see `var` for `unbiased` and `correction`)."""
    check_bool(keepdim, "std_mean", "keepdim", 4)
    return _paired_moments("std_mean", StdMean, input, dim, unbiased, keepdim, correction)


# ------------------------------------------------------------------------------- max / min
MaxResult = result_type("MaxResult", "max", "values", "indices")
MinResult = result_type("MinResult", "min", "values", "indices")


def _extreme_all_forward(ctx, x, ufunc):
    array = x._data
    value = ufunc.reduce(array, None)
    if ctx.needs_input_grad[0]:
        # Ties share the gradient evenly; a NaN result came from the NaNs, which get it.
        mask = np.isnan(array) if np.isnan(value) else array == value
        ctx.count = int(np.count_nonzero(mask))
        ctx.save_for_backward(_wrap(mask))
    return _wrap(value)


def _extreme_all_backward(ctx, grad_output):
    (mask,) = ctx.saved_tensors
    return pointwise_ops.where(mask, grad_output / ctx.count, 0.0)


def _extreme_dim_forward(ctx, x, dim, keepdim, arg_function):
    array = x._data
    indices = arg_function(array, dim, keepdims=True)
    values = np.take_along_axis(array, indices, dim) if array.ndim else array.copy()
    if ctx.needs_input_grad[0]:
        ctx.shape = array.shape
        ctx.dims = (dim,) if array.ndim else ()
        ctx.keepdim = keepdim
        # The whole gradient goes to the element the index names (the first of any ties).
        selected = np.zeros(array.shape, np.bool_)
        if array.ndim:
            np.put_along_axis(selected, indices, True, dim)
        else:
            selected[()] = True
        ctx.save_for_backward(_wrap(selected))
    if not keepdim and array.ndim:
        values = values.squeeze(dim)
        indices = indices.squeeze(dim)
    return _wrap(values), _wrap(indices.astype(_INT64, copy=False))


def _extreme_dim_backward(ctx, grad_values):
    (selected,) = ctx.saved_tensors
    grad = restore_reduced(grad_values, ctx.shape, ctx.dims, ctx.keepdim)
    return pointwise_ops.where(selected, grad, 0.0)


class MaxAll(Function):
    _backward_name = "MaxBackward1"
    _complex_refusal = (NotImplementedError, "\"max_all\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        return _extreme_all_forward(ctx, x, np.maximum)

    @staticmethod
    def backward(ctx, grad_output):
        return _extreme_all_backward(ctx, grad_output)


class MaxDim(Function):
    _backward_name = "MaxBackward0"
    _complex_refusal = (RuntimeError, "max(): does not support complex input")

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        return _extreme_dim_forward(ctx, x, dim, keepdim, np.argmax)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _extreme_dim_backward(ctx, grad_values), None, None


class MinAll(Function):
    _backward_name = "MinBackward1"
    _complex_refusal = (NotImplementedError, "\"min_all\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x):
        return _extreme_all_forward(ctx, x, np.minimum)

    @staticmethod
    def backward(ctx, grad_output):
        return _extreme_all_backward(ctx, grad_output)


class MinDim(Function):
    _backward_name = "MinBackward0"
    _complex_refusal = (RuntimeError, "min(): does not support complex input")

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        return _extreme_dim_forward(ctx, x, dim, keepdim, np.argmin)

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        return _extreme_dim_backward(ctx, grad_values), None, None


def _check_reduction_dims(name: str, array: np.ndarray, dims: tuple[int, ...] | None,
                          error: type[Exception] = RuntimeError) -> None:  # fmt: skip
    """PyTorch's errors for max-like reductions (no identity) over empty dims."""
    if dims is None:
        if array.size == 0:
            message = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            if error is RuntimeError:
                message += " Specify the reduction dim with the 'dim' argument."
            raise error(message)
        return
    for dim in dims:
        if array.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _extreme(name: str, all_function: Any, dim_function: Any, result_type: Any, input: Tensor,
             dim: Any, keepdim: bool) -> Any:  # fmt: skip
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if dim is None:
        _check_reduction_dims(name, array, None)
        return all_function.apply(input)
    _check_int_dim(name, dim)
    dim = _normalize_dim(dim, array.ndim)
    if array.ndim:
        _check_reduction_dims(name, array, (dim,))
    return result_type(*dim_function.apply(input, dim, keepdim))


def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """Largest element; along `dim`, a (values, indices) named tuple; with a tensor, `maximum`."""
    check_bool(keepdim, "max", "keepdim", 3)
    if isinstance(dim, TensorBase):
        return arithmetic_ops.maximum(input, dim)
    return _extreme("max", MaxAll, MaxDim, MaxResult, input, dim, keepdim)


def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """Smallest element; along `dim`, a (values, indices) named tuple; with a tensor, `minimum`."""
    check_bool(keepdim, "min", "keepdim", 3)
    if isinstance(dim, TensorBase):
        return arithmetic_ops.minimum(input, dim)
    return _extreme("min", MinAll, MinDim, MinResult, input, dim, keepdim)


# ----------------------------------------------------------------------------- amax / amin
def _amax_forward(ctx, x, dims, keepdim, ufunc):
    array = x._data
    result = ufunc.reduce(array, dims, None, None, True)
    if ctx.needs_input_grad[0]:
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.keepdim = keepdim
        # Ties share the gradient evenly. A slice holding NaN matches nothing: 0 / 0 makes its
        # whole gradient NaN, as in PyTorch.
        mask = (array == result).astype(array.dtype)
        ctx.save_for_backward(_wrap(mask / np.add.reduce(mask, dims, None, None, True)))
    if not keepdim:
        result = result.reshape(_reduced_shape(array.shape, dims, False))
    return _wrap(result)


def _amax_backward(ctx, grad_output):
    (weights,) = ctx.saved_tensors
    return restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim) * weights


class Amax(Function):
    _backward_name = "AmaxBackward0"
    _complex_refusal = (NotImplementedError, "\"max_values_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        return _amax_forward(ctx, x, dims, keepdim, np.maximum)

    @staticmethod
    def backward(ctx, grad_output):
        return _amax_backward(ctx, grad_output), None, None


class Amin(Function):
    _backward_name = "AminBackward0"
    _complex_refusal = (NotImplementedError, "\"min_values_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        return _amax_forward(ctx, x, dims, keepdim, np.minimum)

    @staticmethod
    def backward(ctx, grad_output):
        return _amax_backward(ctx, grad_output), None, None


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Largest value over `dim` (all dims when empty); ties share the gradient evenly."""
    check_bool(keepdim, "amax", "keepdim", 3)
    try:
        dims = normalize_dims(dim, input._data.ndim) or None
    except AttributeError as error:
        raise_argument_error(error)
        raise
    _check_reduction_dims("amax", input._data, dims)
    return Amax.apply(input, dims, keepdim)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Smallest value over `dim` (all dims when empty); ties share the gradient evenly."""
    check_bool(keepdim, "amin", "keepdim", 3)
    try:
        dims = normalize_dims(dim, input._data.ndim) or None
    except AttributeError as error:
        raise_argument_error(error)
        raise
    _check_reduction_dims("amin", input._data, dims)
    return Amin.apply(input, dims, keepdim)


# ---------------------------------------------------------------------------------- aminmax
AminmaxResult = result_type("AminmaxResult", "aminmax", "min", "max")


def _share_among_ties(array: np.ndarray, result: np.ndarray, dims: Any) -> np.ndarray:
    """Gradient weights of an extreme: ties share it evenly; a NaN slice gets NaN (0 / 0)."""
    mask = (array == result).astype(array.dtype)
    return mask / np.add.reduce(mask, dims, None, None, True)


class Aminmax(Function):
    _backward_name = "AminmaxBackward0"
    _complex_refusal = (NotImplementedError, "\"aminmax_cpu\" not implemented for '{dtype}'")

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        array = x._data
        low = np.minimum.reduce(array, dims, None, None, True)
        high = np.maximum.reduce(array, dims, None, None, True)
        if ctx.needs_input_grad[0]:
            ctx.shape = array.shape
            ctx.dims = dims
            ctx.keepdim = keepdim
            ctx.save_for_backward(
                _wrap(_share_among_ties(array, low, dims)),
                _wrap(_share_among_ties(array, high, dims)),
            )
        if not keepdim:
            shape = _reduced_shape(array.shape, dims, False)
            low, high = low.reshape(shape), high.reshape(shape)
        return _wrap(low), _wrap(high)

    @staticmethod
    def backward(ctx, grad_min, grad_max):
        low_weights, high_weights = ctx.saved_tensors
        restore = restore_reduced
        grad = restore(grad_min, ctx.shape, ctx.dims, ctx.keepdim) * low_weights
        grad = grad + restore(grad_max, ctx.shape, ctx.dims, ctx.keepdim) * high_weights
        return grad, None, None


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AminmaxResult:
    """(min, max) over all entries or along `dim`, in one pass over the arguments."""
    array = _array(input)
    if dim is None:
        if array.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity."
            )
        dims = None
    else:
        _int_argument("aminmax", dim, "dim", 2)
        dim = _normalize_dim(dim, array.ndim)
        if array.ndim and array.shape[dim] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
        dims = (dim,) if array.ndim else None
    if dims is None and keepdim:
        dims = tuple(range(array.ndim))
    return AminmaxResult(*Aminmax.apply(input, dims, keepdim))


# ------------------------------------------------------------------------- argmax / argmin
def _arg_extreme(name: str, function: Any, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if array.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if array.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        _check_reduction_dims(name, array, None, IndexError)
        index = np.asarray(function(array), _INT64)
        return _wrap(index.reshape((1,) * array.ndim) if keepdim else index)
    _check_int_dim(name, dim)
    dim = _normalize_dim(dim, array.ndim)
    if array.ndim:
        _check_reduction_dims(name, array, (dim,))
    return _wrap(np.asarray(function(array, dim, keepdims=keepdim), _INT64))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened input when `dim` is None)."""
    check_bool(keepdim, "argmax", "keepdim", 3)
    return _arg_extreme("argmax", np.argmax, input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened input when `dim` is None)."""
    check_bool(keepdim, "argmin", "keepdim", 3)
    return _arg_extreme("argmin", np.argmin, input, dim, keepdim)


# ------------------------------------------------------------------------------- logsumexp
class Logsumexp(Function):
    _backward_name = "LogsumexpBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        array = float_array(x)
        low = low_precision_of(array.dtype)
        array = widen(array)  # float16/bfloat16 accumulate in float32, rounded once
        ctx.shape = array.shape
        ctx.dims = dims
        ctx.keepdim = keepdim
        # Subtract the max so large inputs don't overflow; an infinite max is replaced by 0 so
        # that rows of -inf give log(0) = -inf rather than -inf - -inf = NaN. Complex inputs
        # shift by the max of the real parts, which leaves the phase of the sum as it is.
        real = array.real
        peak = np.maximum.reduce(real, dims, None, None, True, -np.inf)
        peak = np.where(np.isfinite(peak), peak, 0).astype(real.dtype, copy=False)
        total = np.add.reduce(np.exp(array - peak), dims, None, None, True)
        result = round_to(np.log(total) + peak, low)
        if not keepdim:
            result = result.reshape(_reduced_shape(array.shape, dims, False))
        result = _wrap(result)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result = ctx.saved_tensors
        grad = restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        result = restore_reduced(result, ctx.shape, ctx.dims, ctx.keepdim)
        # d/dx logsumexp(x) = softmax(x) = exp(x - logsumexp(x))
        return grad * pointwise_ops.exp(x - result), None, None


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(input))) over `dim`, computed without overflow."""
    check_bool(keepdim, "logsumexp", "keepdim", 3)
    check_tensors(input)
    if dim is None:
        raise TypeError(
            "logsumexp(): argument 'dim' (position 1) must be tuple of ints, not NoneType"
        )
    dims = normalize_dims(dim, input._data.ndim) or None
    return Logsumexp.apply(input, dims, keepdim)


# ------------------------------------------------------------------------------------ norm
def _vector_norm_array(array: np.ndarray, ord: Any, dims: tuple[int, ...] | None) -> np.ndarray:
    """The `ord`-norm of `array` over `dims`, keeping the reduced dims."""
    if ord == 2:
        return np.sqrt(np.add.reduce(array * array, dims, None, None, True))
    if ord == 0:
        return np.add.reduce(array != 0, dims, array.dtype, None, True)
    magnitude = np.abs(array)
    if ord == 1:
        return np.add.reduce(magnitude, dims, None, None, True)
    if ord == math.inf:
        return np.maximum.reduce(magnitude, dims, None, None, True)
    if ord == -math.inf:
        return np.minimum.reduce(magnitude, dims, None, None, True)
    return np.add.reduce(magnitude**ord, dims, None, None, True) ** (1.0 / ord)


def _vector_norm_constants(array: np.ndarray, norm: np.ndarray, ord: Any,
                           dims: tuple[int, ...] | None) -> tuple[Any, Any]:  # fmt: skip
    """sign(x) and, for the inf-norms, how the gradient splits between the extreme elements."""
    if ord in (0, 2):
        return None, None
    # PyTorch's sign of NaN is 0
    sign = (array > 0).astype(array.dtype) - (array < 0).astype(array.dtype)
    if not math.isinf(ord):
        return _wrap(sign), None
    # Ties share the gradient evenly; NaN elements take part, as in PyTorch.
    magnitude = np.abs(array)
    mask = ((magnitude == norm) | np.isnan(magnitude)).astype(array.dtype)
    weights = sign * mask / np.add.reduce(mask, dims, None, None, True)
    return None, _wrap(weights)


def _vector_norm_backward(x: Tensor, norm: Tensor, grad: Tensor, ord: Any, sign: Any,
                          weights: Any) -> Tensor | None:  # fmt: skip
    """Gradient of the `ord`-norm; `norm` and `grad` keep the reduced dims."""
    where, eq = pointwise_ops.where, pointwise_ops.eq
    if ord == 0:
        return None
    if ord == 1:
        # d/dx sum |x| = sign(x)
        return grad * sign
    if math.isinf(ord):
        return grad * weights
    if ord == 2:
        # d/dx ||x|| = x / ||x||, taken as 0 at the zero vector as PyTorch does
        return x * where(eq(norm, 0.0), 0.0, grad / norm)
    # d/dx ||x||_p = sign(x) |x|^(p-1) / ||x||^(p-1); |x| is written through x so that it can
    # be differentiated again
    # (zero bases are swapped for 1 before a negative power, so that no inf is computed only
    # to be masked: the sentinel would report it as born)
    magnitude = x * sign
    if ord < 1:
        zero = eq(x, 0.0)
        scaled = where(zero, 0.0, sign * where(zero, 1.0, magnitude) ** (ord - 1))
        return scaled * grad * norm ** (1 - ord)
    zero_norm = eq(norm, 0.0)
    scale = where(zero_norm, 0.0, grad / where(zero_norm, 1.0, norm) ** (ord - 1))
    if ord < 2:
        return sign * magnitude ** (ord - 1) * scale
    return x * magnitude ** (ord - 2) * scale


class LinalgVectorNorm(Function):
    _backward_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, x, ord, dims, keepdim):
        array = x._data
        # float16/bfloat16 accumulate in float32 and round once
        norm = round_to(_vector_norm_array(widen(array), ord, dims), low_precision_of(array.dtype))
        result = norm if keepdim else norm.reshape(_reduced_shape(array.shape, dims, False))
        result = _wrap(result)
        if ctx.needs_input_grad[0]:
            ctx.shape = array.shape
            ctx.dims = dims
            ctx.ord = ord
            ctx.keepdim = keepdim
            sign, weights = _vector_norm_constants(array, norm, ord, dims)
            ctx.save_for_backward(x, result, sign, weights)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, result, sign, weights = ctx.saved_tensors
        grad = restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim)
        norm = restore_reduced(result, ctx.shape, ctx.dims, ctx.keepdim)
        return _vector_norm_backward(x, norm, grad, ctx.ord, sign, weights), None, None, None


def _check_norm_input(input: Tensor, dtype: Any, name: str) -> Tensor:
    array_dtype = input._data.dtype
    if array_dtype.kind not in INEXACT_KINDS:
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{dtype_name(array_dtype)}"
        )
    if dtype is None:
        return input
    target = dtypes.to_numpy_dtype(dtype)
    if target.kind not in INEXACT_KINDS:
        raise RuntimeError(
            f"{name}: dtype should be floating point or complex, but got {dtype_name(target)}"
        )
    if array_dtype.kind == "c" and target.kind != "c":
        raise RuntimeError(
            f"{name}: dtype should be complex for complex inputs, but got {dtype_name(target)}"
        )
    if array_dtype.kind != "c" and target.kind == "c":
        raise RuntimeError(
            f"{name}: dtype should be real for real inputs, but got {dtype_name(target)}"
        )
    if target.itemsize < array_dtype.itemsize:
        raise RuntimeError(
            f"{name}: the dtype of the input ({dtype_name(array_dtype)}) should be "
            f"convertible without narrowing to the specified dtype ({dtype_name(target)})"
        )
    return fills_ops.to(input, target)


def _vector_norm(input: Tensor, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    input = _check_norm_input(input, dtype, "linalg.vector_norm")
    if input._data.dtype.kind == "c":
        # The norm of complex values is the norm of their magnitudes; abs's backward turns the
        # real gradient into PyTorch's complex one (times z / |z|).
        input = pointwise_ops.abs(input)
    array = input._data
    dims = normalize_dims(dim, array.ndim) or None
    if math.isinf(ord):
        # max/min of |x| has no identity to give for an empty reduction
        name = "inf" if ord > 0 else "-inf"
        if dims is None and array.size == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because "
                "the operation does not have an identity"
            )
        for given in [dim] if isinstance(dim, int) else dim or ():
            if array.shape[_normalize_dim(given, array.ndim)] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {name} norm on the dimension "
                    f"{given}because this dimension is empty and the operation does not have "
                    "an identity"
                )
    return LinalgVectorNorm.apply(input, ord, dims, keepdim)


class NuclearNorm(Function):
    """Sum of the singular values over two dims (PyTorch builds it from svdvals and a sum)."""

    _op_name = "nuclear_norm"
    _backward_name = "SumBackward1"
    # Singular values are real; for complex A the gradient is U V^H as for real A.
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        matrices = np.moveaxis(x._data, dims, (-2, -1))
        if not np.isfinite(matrices).all():
            raise RuntimeError(
                "linalg.svd: The algorithm failed to converge because the input matrix contained "
                "non-finite values."
            )
        u, singular_values, vh = np.linalg.svd(matrices, full_matrices=False)
        result = np.add.reduce(singular_values, -1)
        if keepdim:
            result = np.expand_dims(result, dims)
        if ctx.needs_input_grad[0]:
            ctx.shape = x._data.shape
            ctx.dims = dims
            ctx.keepdim = keepdim
            # d/dA sum(svdvals(A)) = U V^T for A of full rank
            ctx.save_for_backward(_wrap(np.moveaxis(u @ vh, (-2, -1), dims)))
        return _wrap(result)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (direction,) = ctx.saved_tensors
        return (
            restore_reduced(grad_output, ctx.shape, ctx.dims, ctx.keepdim) * direction,
            None,
            None,
        )


def _matrix_norm(input: Tensor, ord: str, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    given = list(range(ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if len(given) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, given))}"
        )
    dims = tuple(_normalize_dim(d, ndim) for d in given)
    if dims[0] == dims[1]:
        raise RuntimeError(
            f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})"
        )
    input = _check_norm_input(input, dtype, "linalg.matrix_norm")
    if is_low_precision(input._data.dtype):
        raise RuntimeError(
            "linalg.matrix_norm: Low precision dtypes not supported. Got "
            f"{dtype_name(input._data.dtype)}"
        )
    return NuclearNorm.apply(input, dims, keepdim)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:  # fmt: skip
    """The p-norm over `dim` (a vector norm of all elements when None); p may be a number,
    'fro' or 'nuc' (over exactly two dims)."""
    check_bool(keepdim, "linalg_vector_norm", "keepdim", 4)
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return _vector_norm(input, 2, dim, keepdim, dtype)
        return _matrix_norm(input, p, dim, keepdim, dtype)
    return _vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype)


# ----------------------------------------------------------------- all / any / count_nonzero
def _logical_reduction(function: Any, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    # An empty dim list reduces nothing here, unlike sum, as in PyTorch.
    axis = None if dim is None else normalize_dims(dim, array.ndim)
    result = np.asarray(function(array, axis, keepdims=keepdim))
    # PyTorch keeps uint8 for uint8 input and returns bool otherwise.
    return _wrap(result.astype(np.uint8) if array.dtype == np.uint8 else result)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether every element over `dim` is nonzero."""
    check_bool(keepdim, "all", "keepdim", 3)
    return _logical_reduction(np.all, input, dim, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether some element over `dim` is nonzero."""
    check_bool(keepdim, "any", "keepdim", 3)
    return _logical_reduction(np.any, input, dim, keepdim)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """How many elements over `dim` are nonzero (int64)."""
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    axis = normalize_dims(dim, array.ndim) or None
    return _wrap(np.asarray(np.count_nonzero(array, axis), _INT64))


def hash_tensor(input: Tensor, dim: Any = None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """The xor of the 64-bit patterns of the elements over `dim` (all dims by default): floats
    are widened to float64 and integers to int64 first.

    lucid has no uint64: the result is int64 holding the same 64 bits (a hash of 2**63 or more
    reads as negative; `.numpy().view(numpy.uint64)` gives PyTorch's number).
    """
    try:
        array = input._data
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError(f"hash_tensor(): argument 'mode' must be int, not {type(mode).__name__}")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if dim is not None and not isinstance(dim, int | tuple | list):
        raise TypeError(
            "hash_tensor(): argument 'dim' (position 2) must be tuple of ints, not "
            f"{type(dim).__name__}"
        )
    # an empty dim list reduces every dim, as in PyTorch
    dims = normalize_dims(dim, array.ndim) if dim is not None and dim != () and dim != [] else None
    if dims is None:
        if array.size == 0:
            raise RuntimeError(
                "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
    else:
        for index in dims:
            if array.shape[index] == 0:
                raise IndexError(
                    f"hash_tensor: Expected reduction dim {index} to have non-zero size."
                )
    if array.dtype.kind == "c":
        raise not_implemented("xor_sum_cpu", array.dtype)
    if array.dtype.kind in FLOAT_KINDS:
        bits = array.astype(np.float64).view(np.int64)
    else:
        bits = array.astype(np.int64)
    return _wrap(np.asarray(np.bitwise_xor.reduce(bits, axis=dims, keepdims=keepdim), np.int64))


class Renorm(Function):
    """Each slice along `dim` whose p-norm n exceeds maxnorm, scaled by maxnorm / (n + 1e-7)."""

    _backward_name = "RenormBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, p, others, maxnorm):
        array = x._data
        low = low_precision_of(array.dtype)
        if low is not None:
            # float16/bfloat16: norms and scales stay in float32, the result is rounded once
            array = widen(array)
        # complex slices are measured by the norm of their magnitudes
        norms = _vector_norm_array(np.abs(array) if array.dtype.kind == "c" else array, p, others)
        with np.errstate(invalid="ignore"):
            exceeds = norms > maxnorm
        scale = np.where(exceeds, maxnorm / np.where(exceeds, norms + 1e-7, 1.0), 1.0)
        ctx.save_for_backward(x)
        ctx.options = (p, others, maxnorm)
        result = (array * scale.astype(array.dtype)).astype(array.dtype, copy=False)
        return _wrap(round_to(result, low))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        p, others, maxnorm = ctx.options
        low = low_precision_of(x._data.dtype)
        if low is not None:
            # as the forward: norms and scales in float32, the gradient rounded once
            x, grad_output = fills_ops.to(x, _FLOAT32), fills_ops.to(grad_output, _FLOAT32)
        where = pointwise_ops.where
        norms = _vector_norm(x, p, others, True, None)
        exceeds = norms > maxnorm
        # Slices within maxnorm pass the gradient through unchanged; only scaled slices see
        # the norm's derivative, so a NaN norm elsewhere cannot leak into it.
        safe_norms = where(exceeds, norms, 1.0)
        safe_x = where(exceeds, x, 0.0)
        denominator = safe_norms + 1e-7
        scale = where(exceeds, maxnorm / denominator, 1.0)
        # d/dx_i of n = ||x||_p is sign(x_i) |x_i|^(p-1) / n^(p-1); for complex x, sgn(x_i)
        # in its place, and the real part of <grad, x> gives the norm's (real) gradient
        is_complex = x._data.dtype.kind == "c"
        sign = pointwise_ops.sgn(safe_x) if is_complex else pointwise_ops.sign(safe_x)
        if p == math.inf:
            is_max = pointwise_ops.abs(safe_x) == safe_norms
            norm_grad = sign * is_max / sum(is_max, others, True)
        else:
            magnitude = pointwise_ops.abs(safe_x)
            norm_grad = sign * (magnitude / safe_norms) ** (p - 1)
        if is_complex:
            inner = sum(grad_output * safe_x.conj(), others, True).real
        else:
            inner = sum(grad_output * safe_x, others, True)
        correction = inner * norm_grad * (-maxnorm / (denominator * denominator))
        grad = grad_output * scale + where(exceeds, correction, 0.0)
        return (grad if low is None else fills_ops.to(grad, low)), None, None, None


def renorm(input: Tensor, p: Any = shape_ops.REQUIRED, dim: int = shape_ops.REQUIRED,
           maxnorm: Any = shape_ops.REQUIRED) -> Tensor:  # fmt: skip
    """Each slice of input along `dim` whose p-norm exceeds `maxnorm`, scaled down to it."""
    return Renorm.apply(input, *_renorm_arguments("renorm", input, p, dim, maxnorm))


def renorm_(input: Tensor, p: Any = shape_ops.REQUIRED, dim: int = shape_ops.REQUIRED,
            maxnorm: Any = shape_ops.REQUIRED) -> Tensor:  # fmt: skip
    return apply_inplace(Renorm, input, *_renorm_arguments("renorm_", input, p, dim, maxnorm))


def _renorm_arguments(name: str, input: Tensor, p: Any, dim: int, maxnorm: Any) -> tuple:
    shape_ops.missing_arguments(name, {"p": p, "dim": dim, "maxnorm": maxnorm})
    check_tensors(input)
    check_number(p, "renorm", "p", 2)
    check_int(dim, "renorm", "dim", 3)
    check_number(maxnorm, "renorm", "maxnorm", 4)
    ndim = input._data.ndim
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    dim = _normalize_dim(dim, ndim)
    return p, tuple(d for d in range(ndim) if d != dim), maxnorm
