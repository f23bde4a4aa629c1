"""Neural-network ops: layer, group, batch (and sync batch), instance, local response and RMS
normalization, and weight_norm (used through lucid.nn.functional and lucid.nn.utils)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import int_list_item_error, is_int_list_item
from lucid._core.dtypes import FLOAT_KINDS, INEXACT_KINDS, SCALAR_TYPE_NAMES
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import Function
from lucid._core.grad_mode import is_grad_enabled, no_grad
from lucid._core.tensor import _normalize_dim, _wrap
from lucid.ops._common import check_int, check_number, check_tensors, not_implemented
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.broadcast import sum_to
from lucid.ops.fills import to
from lucid.ops.pointwise import rsqrt
from lucid.ops.reduction import mean
from lucid.ops.sampling import pad

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "batch_norm", "layer_norm", "group_norm", "rms_norm", "instance_norm", "local_response_norm",
]  # fmt: skip


# ------------------------------------------------------------ normalization
def _mean_over(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """np.mean(a, axes, keepdims=True), as one GEMV when `axes` are the trailing dims."""
    count = len(axes)
    if axes != tuple(range(a.ndim - count, a.ndim)):
        return np.mean(a, axis=axes, keepdims=True)
    size = math.prod(a.shape[a.ndim - count :])
    if not size:
        # nothing to average: any mean normalizes the empty slices, and zero raises no flag
        return np.zeros(a.shape[: a.ndim - count] + (1,) * count, a.dtype)
    # a matrix-vector product is several times faster than NumPy's pairwise reduction
    weights = np.full(size, 1.0 / size, a.dtype)
    return np.matmul(a.reshape(-1, size), weights).reshape(a.shape[: a.ndim - count] + (1,) * count)


def _sum_over(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """np.sum(a, axes), as one GEMV when `axes` are the leading dims."""
    if axes != tuple(range(len(axes))):
        return np.sum(a, axis=axes)
    rows = math.prod(a.shape[: len(axes)])
    return np.matmul(np.ones(rows, a.dtype), a.reshape(rows, -1)).reshape(a.shape[len(axes) :])


def _normalize_arrays(x: np.ndarray, axes: tuple[int, ...], eps: float):
    """(x - mean) * rstd and rstd, with the biased variance over `axes`."""
    centered = x - _mean_over(x, axes)
    # two passes (mean, then mean of squares of the centered values) stay accurate when
    # |mean| >> std, where E[x^2] - E[x]^2 would cancel
    variance = _mean_over(np.square(centered), axes)
    rstd = 1.0 / np.sqrt(variance + np.asarray(eps, x.dtype))
    centered *= rstd
    return centered, rstd


def _normalized_with_graph(x: Tensor, axes: tuple[int, ...], eps: float):
    """The same (xhat, rstd) built from lucid ops, so that double backward sees through them."""
    centered = x - mean(x, axes, keepdim=True)
    rstd = rsqrt(mean(centered * centered, axes, keepdim=True) + eps)
    return centered * rstd, rstd


def _normalize_backward(grad_xhat: Tensor, xhat: Tensor, rstd: Tensor, axes: tuple[int, ...]):
    # d/dx of (x - mean) * rstd applied to grad_xhat: remove the mean and the xhat direction
    projection = mean(grad_xhat * xhat, axes, keepdim=True)
    return (grad_xhat - mean(grad_xhat, axes, keepdim=True) - xhat * projection) * rstd


class _Normalize(Function):
    """(x - mean) / sqrt(var + eps) * weight + bias, with statistics over `axes`.

    Statistics are taken on x viewed as `group_shape` (x's own shape except for group norm);
    weight and bias broadcast against x viewed as `param_shape`. `fixed_stats` is None when
    the statistics come from x, or the (mean, var) arrays of batch norm's running stats.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, group_shape, axes, param_shape, eps, fixed_stats):
        # float16 and bfloat16 are normalized in float32 (statistics, xhat and rstd, which
        # backward keeps) and the output rounded once, as PyTorch's CPU kernels do
        array = widen(x._data)
        if fixed_stats is None:
            xhat, rstd = _normalize_arrays(array.reshape(group_shape), axes, eps)
            xhat = xhat.reshape(array.shape)
        else:
            mean_array, var_array = fixed_stats
            rstd = 1.0 / np.sqrt(var_array + array.dtype.type(eps))
            xhat = (array - mean_array) * rstd
        # xhat is saved for backward, so the output must not share its memory, unless no graph
        # is recorded: then xhat is scaled and shifted in place
        in_place = not ctx.is_recording
        w = None if weight is None else widen(weight._data).reshape(param_shape)
        b = None if bias is None else widen(bias._data).reshape(param_shape)
        output = _scaled_and_shifted(xhat, w, b, in_place)
        if is_low_precision(x._data.dtype):
            output = round_to(output, x._data.dtype)
        elif output is xhat and not in_place:
            output = xhat.copy()
        ctx.group_shape, ctx.axes, ctx.param_shape = group_shape, axes, param_shape
        ctx.eps, ctx.fixed_stats = eps, fixed_stats
        ctx.save_for_backward(x, weight, bias, _wrap(xhat), _wrap(rstd))
        return _wrap(output)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias, xhat, rstd = ctx.saved_tensors
        if not is_grad_enabled():
            return _normalize_backward_arrays(ctx, grad_output, x, weight, bias, xhat, rstd)
        if is_low_precision(x._data.dtype):
            # the same formulas on float32 copies (casts recorded in the graph), each gradient
            # rounded once to its input's dtype
            inputs = (x, weight, bias)
            widened = [None if t is None else to(t, _FLOAT32) for t in (grad_output, *inputs)]
            grads = _normalize_backward_graph(ctx, *widened, rstd)
            grads = tuple(None if g is None else to(g, t.dtype) for g, t in zip(grads, inputs))
        else:
            grads = _normalize_backward_graph(ctx, grad_output, x, weight, bias, rstd)
        return (*grads, None, None, None, None, None)


def _scaled_and_shifted(xhat, w, b, in_place):
    """xhat * w + b (either may be None), into xhat's own memory where `in_place`."""
    output = xhat
    if w is not None:
        output = np.multiply(xhat, w, out=xhat) if in_place else xhat * w
    if b is not None:
        if output is xhat and not in_place:
            output = xhat + b
        else:
            output += b
    return output


def _normalize_backward_graph(ctx, grad_output, x, weight, bias, rstd):
    """_Normalize's gradients in lucid ops, for create_graph: xhat is rebuilt from x so that
    its own derivative is recorded."""
    group_shape, axes, param_shape = ctx.group_shape, ctx.axes, ctx.param_shape
    if ctx.fixed_stats is None:
        grouped, rstd = _normalized_with_graph(x.reshape(group_shape), axes, ctx.eps)
        xhat = grouped.reshape(x.shape)
    else:
        xhat = (x - _wrap(ctx.fixed_stats[0])) * rstd
    grad_x = grad_weight = grad_bias = None
    if ctx.needs_input_grad[0]:
        grad_xhat = grad_output
        if weight is not None:
            grad_xhat = grad_output * weight.reshape(param_shape)
        if ctx.fixed_stats is not None:
            # running statistics are constants: the map x -> xhat is affine
            grad_x = grad_xhat * rstd
        else:
            grad_x = _normalize_backward(
                grad_xhat.reshape(group_shape), xhat.reshape(group_shape), rstd, axes
            ).reshape(x.shape)
    if ctx.needs_input_grad[1]:
        grad_weight = sum_to(grad_output * xhat, param_shape).reshape(weight.shape)
    if ctx.needs_input_grad[2]:
        grad_bias = sum_to(grad_output, param_shape).reshape(bias.shape)
    return grad_x, grad_weight, grad_bias


def _normalize_backward_arrays(ctx, grad_output, x, weight, bias, xhat, rstd):
    """_Normalize's gradients computed on arrays in a few fused passes.

    Taken only when grad mode is off (backward without create_graph), so no graph is lost;
    with create_graph the lucid-op formulas of `_Normalize.backward` run instead.
    """
    group_shape, axes, param_shape = ctx.group_shape, ctx.axes, ctx.param_shape
    # float16 and bfloat16 gradients are computed in float32, like xhat and rstd
    g, xhat_array, rstd_array = widen(grad_output._data), xhat._data, rstd._data
    w = None if weight is None else widen(weight._data)
    grad_x = grad_weight = grad_bias = None
    # the axes that weight and bias broadcast over (param_shape aligns with x's trailing dims)
    offset = g.ndim - len(param_shape)
    param_axes = tuple(
        axis for axis in range(g.ndim) if axis < offset or param_shape[axis - offset] == 1
    )
    # (the fused rows of an empty input have no width to reshape to: the general path serves)
    if (
        ctx.fixed_stats is None
        and param_axes == tuple(range(axes[0]))
        and len(axes) == 1
        and g.size
    ):
        grads = _layer_norm_backward_arrays(ctx.needs_input_grad, g, w, xhat_array, rstd_array)
        return (*_rounded_grads(grads, (x, weight, bias)), None, None, None, None, None)
    if ctx.needs_input_grad[0]:
        grad_xhat = g if w is None else g * w.reshape(param_shape)
        if ctx.fixed_stats is not None:
            grad_x = grad_xhat * rstd_array
        else:
            grouped = grad_xhat.reshape(group_shape)
            xhat_grouped = xhat_array.reshape(group_shape)
            projection = _mean_over(grouped * xhat_grouped, axes)
            result = grouped - _mean_over(grouped, axes)
            result -= xhat_grouped * projection
            result *= rstd_array
            grad_x = result.reshape(g.shape)
    if ctx.needs_input_grad[1]:
        grad_weight = _sum_over(g * xhat_array, param_axes).reshape(weight.shape)
    if ctx.needs_input_grad[2]:
        grad_bias = _sum_over(g, param_axes).reshape(bias.shape)
    grads = _rounded_grads((grad_x, grad_weight, grad_bias), (x, weight, bias))
    return (*grads, None, None, None, None, None)


def _rounded_grads(grads, inputs):
    """Gradient arrays as tensors, each in its input's dtype."""
    return tuple(
        None if grad is None else _wrap(round_to(grad, tensor._data.dtype))
        for grad, tensor in zip(grads, inputs)
    )


def _layer_norm_backward_arrays(needs_input_grad, g, w, xhat, rstd):
    """Layer norm over one trailing dim: row sums become GEMVs with the weight folded in."""
    size = g.shape[-1]
    rows = g.reshape(-1, size)
    xhat_rows = xhat.reshape(-1, size)
    ones = np.ones(rows.shape[0], g.dtype)
    grad_x = grad_weight = grad_bias = None
    g_xhat = rows * xhat_rows
    if needs_input_grad[1]:
        grad_weight = np.matmul(ones, g_xhat)
    if needs_input_grad[2]:
        grad_bias = np.matmul(ones, rows)
    if needs_input_grad[0]:
        weighted = w is not None
        w = np.ones(size, g.dtype) if w is None else w.reshape(size)
        # row means of grad_xhat = g * w and of grad_xhat * xhat, as matrix-vector products
        mean_weights = w * g.dtype.type(1.0 / size)
        rstd_rows = rstd.reshape(-1, 1)
        grad_mean = np.matmul(rows, mean_weights).reshape(-1, 1)
        projection = np.matmul(g_xhat, mean_weights).reshape(-1, 1)
        # grad_x = rstd * (g * w - mean(g * w) - xhat * mean(g * w * xhat))
        result = rows * w if weighted else rows.copy()
        result -= grad_mean
        xhat_rows = xhat_rows * projection
        result -= xhat_rows
        result *= rstd_rows
        grad_x = result.reshape(g.shape)
    return grad_x, grad_weight, grad_bias


class NativeLayerNorm(_Normalize):
    _backward_name = "NativeLayerNormBackward0"

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # forward's arrays over the last dim, keeping xhat and rstd, and the array backward
        # of that case (lucid/_dynamo/flat.py)
        x, weight, bias, group_shape, axes, param_shape, eps, fixed_stats = args
        if fixed_stats is not None or x.dtype.kind != "f" or x.dtype.itemsize < 4 or not x.size:
            return None
        if group_shape != x.shape or axes != (x.ndim - 1,) or param_shape != x.shape[-1:]:
            return None
        for parameter in (weight, bias):
            if parameter is not None and (
                parameter.dtype is not x.dtype or parameter.shape != param_shape
            ):
                return None

        def forward(x, weight, bias, group_shape, axes, param_shape, eps, fixed_stats):
            xhat, rstd = _normalize_arrays(x, axes, eps)
            output = _scaled_and_shifted(xhat, weight, bias, False)
            return (xhat.copy() if output is xhat else output), (xhat, rstd)

        def backward(grad, out, kept, x, weight, *config):
            grads = _layer_norm_backward_arrays(needs_input_grad, grad, weight, *kept)
            return (*grads, None, None, None, None, None)

        return forward, backward, NativeLayerNorm, True


class NativeGroupNorm(_Normalize):
    _backward_name = "NativeGroupNormBackward0"


class NativeBatchNorm(_Normalize):
    _backward_name = "NativeBatchNormBackward0"
    _complex_refusal = (NotImplementedError, "\"batch_norm\" not implemented for '{dtype}'")


def _shape_tuple(shape: Any, op: str) -> tuple[int, ...]:
    """`normalized_shape` as a tuple, or PyTorch's TypeError for one that is no sequence of
    ints (F.layer_norm takes no bare int, where nn.LayerNorm does)."""
    if not isinstance(shape, tuple | list):
        raise TypeError(f"{op}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(shape).__name__}")  # fmt: skip
    for index, size in enumerate(shape):
        if not is_int_list_item(size, index):
            raise int_list_item_error(op, "normalized_shape", 2, index, size)
    return tuple(shape)


def _check_normalized_shape(input: Tensor, normalized_shape: tuple[int, ...], weight) -> None:
    count = len(normalized_shape)
    if (
        count == 0
        or tuple(input.shape[input.ndim - count :]) != normalized_shape
        or (input.ndim < count)
    ):
        expected = ", ".join(["*", *(str(size) for size in normalized_shape)])
        got = ", ".join(str(size) for size in input.shape)
        raise RuntimeError(
            f"Given normalized_shape=[{', '.join(str(s) for s in normalized_shape)}], expected "
            f"input with shape [{expected}], but got input of size[{got}]"
        )
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"[{', '.join(str(s) for s in weight.shape)}] and normalized_shape = "
            f"[{', '.join(str(s) for s in normalized_shape)}]"
        )


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
) -> Tensor:
    """Normalize over the trailing `normalized_shape` dims, then scale and shift."""
    check_tensors(input)
    normalized_shape = _shape_tuple(normalized_shape, "layer_norm")
    check_number(eps, "layer_norm", "eps", 5, "float")
    _check_normalized_shape(input, normalized_shape, weight)
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise not_implemented("LayerNormKernelImpl", input._data.dtype)
    _check_parameter_dtypes(input, weight, bias)
    ndim = input.ndim
    axes = tuple(range(ndim - len(normalized_shape), ndim))
    shape = tuple(input.shape)
    return NativeLayerNorm.apply(input, weight, bias, shape, axes, normalized_shape, eps, None)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
) -> Tensor:
    """Normalize each of `num_groups` channel groups of `(N, C, *)` over its channels and space."""
    check_tensors(input)
    check_number(eps, "group_norm", "eps", 5, "float")
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    shape = tuple(input.shape)
    channels = shape[1]
    if channels % num_groups != 0:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(shape)} and num_groups={num_groups}"
        )
    for name, vector in (("weight", weight), ("bias", bias)):
        if vector is not None and (vector.ndim != 1 or vector.shape[0] != channels):
            # PyTorch prints the weight's shape in both messages ([0] when there is none)
            shown = [0] if weight is None else list(weight.shape)
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {shown} and input of shape {list(shape)}"
            )
    if input._data.dtype.kind not in FLOAT_KINDS:
        raise not_implemented("GroupNormKernelImpl", input._data.dtype)
    _check_parameter_dtypes(input, weight, bias)
    # An explicit size (not -1): an empty batch has one too.
    group_shape = (shape[0], num_groups, math.prod(shape[1:]) // num_groups)
    param_shape = (channels,) + (1,) * (len(shape) - 2)
    return NativeGroupNorm.apply(input, weight, bias, group_shape, (2,), param_shape, eps, None)


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-05,
) -> Tensor:
    """Normalize each channel (dim 1) over the batch and spatial dims.

    When training, batch statistics are used and the running statistics (when given) are
    updated in place with the unbiased variance; otherwise the running statistics are used.
    """
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                weight: Tensor | None, bias: Tensor | None, training: bool, momentum: float,
                eps: float, check_eps: bool = True) -> Tensor:  # fmt: skip
    # instance_norm's kernel is batch norm without batch_norm's own check of eps
    check_tensors(input)
    check_number(momentum, "batch_norm", "momentum", 7, "float")
    check_number(eps, "batch_norm", "eps", 8, "float")
    shape = tuple(input.shape)
    channels = shape[1] if len(shape) > 1 else 1
    # PyTorch counts no channel in a 0-d or 1-d input when it checks per-channel vectors.
    checked_channels = channels if len(shape) > 1 else 0
    axes = (0, *range(2, len(shape)))
    param_shape = (channels,) + (1,) * (len(shape) - 2)
    if training:
        count = int(np.prod([shape[axis] for axis in axes]))
        if count == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"lucid.Size({list(shape)})"
            )
        if check_eps and eps <= 0.0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
        _check_per_channel(checked_channels, weight, bias, running_mean, running_var)
        _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
        if running_mean is not None or running_var is not None:
            _update_running_stats(input._data, axes, count, running_mean, running_var, momentum)
        return NativeBatchNorm.apply(input, weight, bias, shape, axes, param_shape, eps, None)
    if check_eps and eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    for name, stats in (("running_mean", running_mean), ("running_var", running_var)):
        if stats is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    _check_per_channel(checked_channels, weight, bias, running_mean, running_var)
    _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
    dtype = widen(input._data[:0]).dtype
    mean_array = running_mean._data.astype(dtype, copy=False).reshape(param_shape)
    var_array = running_var._data.astype(dtype, copy=False).reshape(param_shape)
    return NativeBatchNorm.apply(
        input, weight, bias, shape, axes, param_shape, eps, (mean_array, var_array)
    )


def _check_parameter_dtypes(input: Tensor, *parameters: Tensor | None) -> None:
    """PyTorch's CPU rule for the dtypes of a norm's weight, bias and running statistics:
    all the input's dtype or, for a float16 or bfloat16 input, all float32 (the first one
    present decides which, and PyTorch's message says which rule was broken)."""
    present = [parameter for parameter in parameters if parameter is not None]
    if not present:
        return
    dtype = input._data.dtype
    if present[0]._data.dtype == dtype:
        for parameter in present[1:]:
            if parameter._data.dtype != dtype:
                raise RuntimeError(
                    f"expected scalar type {SCALAR_TYPE_NAMES[dtype.name]} but found "
                    f"{SCALAR_TYPE_NAMES[parameter._data.dtype.name]}"
                )
        return
    if dtype == np.float64:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if not is_low_precision(dtype) or any(p._data.dtype != np.float32 for p in present):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def _check_per_channel(channels: int, weight: Any, bias: Any, running_mean: Any,
                       running_var: Any) -> None:  # fmt: skip
    """PyTorch's check, in its order, that each per-channel vector has one entry a channel."""
    named = (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
             ("bias", bias))  # fmt: skip
    for name, vector in named:
        if vector is not None and vector._data.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {vector._data.size}")


def _update_running_stats(array, axes, count, running_mean, running_var, momentum) -> None:
    array = widen(array)
    batch_mean = array.mean(axis=axes)
    batch_var = array.var(axis=axes) * (count / (count - 1))
    # running stats are buffers, not graph inputs: they are updated without a node
    for running, batch_stat in ((running_mean, batch_mean), (running_var, batch_var)):
        if running is None:
            continue
        data = running._data
        if is_low_precision(data.dtype):
            # blended in float32 and rounded once
            data[...] = widen(data) * (1.0 - momentum) + momentum * batch_stat
        else:
            data *= 1.0 - momentum
            data += momentum * batch_stat.astype(data.dtype)
        running._version_counter[0] += 1


class SyncBatchNorm(Function):
    """Batch norm whose statistics span the batches of every replica (process).

    `stats` is (mean, rstd, count) over the global batch, from `sync_batch_norm`; `sum_across`
    maps an array to its elementwise sum over the replicas (an all_reduce the caller supplies,
    so the op knows no communication). Backward sums the two per-channel gradient reductions
    across replicas the same way; weight and bias get this replica's share of their gradient,
    which data-parallel training then averages, as in PyTorch.
    """

    _backward_name = "SyncBatchNormBackward"

    @staticmethod
    def forward(ctx, x, weight, bias, param_shape, axes, stats, sum_across):
        array = x._data
        mean_array, rstd_array, count = stats
        rstd = rstd_array.astype(array.dtype).reshape(param_shape)
        xhat = (array - mean_array.astype(array.dtype).reshape(param_shape)) * rstd
        output = xhat
        if weight is not None:
            output = xhat * weight._data.reshape(param_shape)
        if bias is not None:
            output = output + bias._data.reshape(param_shape)
        if output is xhat:
            output = xhat.copy()
        ctx.param_shape, ctx.axes, ctx.count, ctx.sum_across = param_shape, axes, count, sum_across
        ctx.save_for_backward(weight, _wrap(xhat), _wrap(rstd))
        return _wrap(output)

    @staticmethod
    def backward(ctx, grad_output):
        weight, xhat, rstd = ctx.saved_tensors
        if is_grad_enabled():
            # the gradient's cross-replica sums are communication, not recorded ops
            raise RuntimeError(
                "SyncBatchNorm's backward cannot be differentiated again (create_graph=True)"
            )
        param_shape, axes = ctx.param_shape, ctx.axes
        g, xhat_array = grad_output._data, xhat._data
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_xhat = g if weight is None else g * weight._data.reshape(param_shape)
            local = np.stack(
                [
                    np.sum(grad_xhat, axis=axes, dtype=np.float64),
                    np.sum(grad_xhat * xhat_array, axis=axes, dtype=np.float64),
                ]
            )
            means = ctx.sum_across(local) / ctx.count
            mean_grad = means[0].astype(g.dtype).reshape(param_shape)
            projection = means[1].astype(g.dtype).reshape(param_shape)
            # d/dx of (x - mean) * rstd over the global batch, as in batch norm's backward
            grad_x = _wrap((grad_xhat - mean_grad - xhat_array * projection) * rstd._data)
        if ctx.needs_input_grad[1]:
            grad_weight = _wrap(np.sum(g * xhat_array, axis=axes))
        if ctx.needs_input_grad[2]:
            grad_bias = _wrap(np.sum(g, axis=axes))
        return grad_x, grad_weight, grad_bias, None, None, None, None


def sync_batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None,
    bias: Tensor | None,
    momentum: float,
    eps: float,
    sum_across: Any,
) -> Tensor:
    """Training-mode batch norm over the global batch of all replicas; `sum_across` sums an
    array over the replicas. Updates the running statistics with the global ones."""
    check_tensors(input)
    array = input._data
    shape = tuple(array.shape)
    channels = shape[1]
    axes = (0, *range(2, len(shape)))
    param_shape = (channels,) + (1,) * (len(shape) - 2)
    _check_per_channel(channels, weight, bias, running_mean, running_var)
    local_count = math.prod(shape[axis] for axis in axes)
    # float64 sums: the global count and sums over many replicas' batches stay exact enough
    totals = sum_across(np.concatenate([[local_count], np.sum(array, axis=axes, dtype=np.float64)]))
    count = totals[0]
    mean_array = totals[1:] / count
    centered = array - mean_array.astype(array.dtype).reshape(param_shape)
    # the second pass, on centered values, stays accurate when |mean| >> std
    variance = sum_across(np.sum(np.square(centered), axis=axes, dtype=np.float64)) / count
    rstd_array = 1.0 / np.sqrt(variance + eps)
    if running_mean is not None:
        data = running_mean._data
        data *= 1.0 - momentum
        data += (momentum * mean_array).astype(data.dtype)
        running_mean._version_counter[0] += 1
    if running_var is not None:
        data = running_var._data
        data *= 1.0 - momentum
        unbiased = variance * (count / max(count - 1, 1))
        data += (momentum * unbiased).astype(data.dtype)
        running_var._version_counter[0] += 1
    stats = (mean_array, rstd_array, count)
    return SyncBatchNorm.apply(input, weight, bias, param_shape, axes, stats, sum_across)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-05,
) -> Tensor:
    """Normalize each (sample, channel) of `(N, C, *)` input over its spatial dims.

    As in PyTorch, this is batch norm of the input viewed as `(1, N * C, *)`, with the
    per-channel vectors repeated N times; the running statistics get the batch average.
    """
    check_tensors(input)
    check_number(momentum, "instance_norm", "momentum", 7, "float")
    check_number(eps, "instance_norm", "eps", 8, "float")
    shape = tuple(input.shape)
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"lucid.Size({list(shape)})"
        )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    batch, channels = input.size(0), input.size(1)
    if batch == 0 and (weight is not None or bias is not None):
        # PyTorch's kernel reads the affine parameters through the first sample
        raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    repeated = [None if vector is None else vector.repeat(batch)
                for vector in (weight, bias)]  # fmt: skip
    with no_grad():
        stats = [None if vector is None else vector.repeat(batch)
                 for vector in (running_mean, running_var)]  # fmt: skip
    output = _batch_norm(
        input.reshape((1, batch * channels) + shape[2:]),
        stats[0],
        stats[1],
        repeated[0],
        repeated[1],
        use_input_stats,
        momentum,
        eps,
        check_eps=False,
    )
    with no_grad():
        for running, updated in zip((running_mean, running_var), stats):
            if running is not None:
                running.copy_(updated.reshape((batch, channels)).mean(0))
    return output.reshape(shape)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divide each channel by (k + alpha * mean of squares over `size` neighbouring channels)^beta.

    The window is centred (size // 2 channels before, (size - 1) // 2 after) and zero-padded at
    the edges, as PyTorch's average pooling over channels is.
    """
    check_tensors(input)
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    if dim > 3 and is_low_precision(input._data.dtype):
        # PyTorch averages the squares of a 4-D or 5-D input with avg_pool3d, which its CPU
        # build does not have for float16 and bfloat16
        raise not_implemented("avg_pool3d_out_frame", input._data.dtype)
    if input._data.dtype.kind == "c":
        # nor, for complex input, avg_pool2d (3-D input) or avg_pool3d
        raise not_implemented(
            "avg_pool2d" if dim == 3 else "avg_pool3d_out_frame", input._data.dtype
        )
    channels = input.shape[1]
    squares = input * input
    # pad the channel dim (the last pair of a pad list addresses dim 1)
    padded = pad(squares, [0, 0] * (dim - 2) + [size // 2, (size - 1) // 2])
    window = padded.narrow(1, 0, channels)
    for offset in range(1, size):
        window = window + padded.narrow(1, offset, channels)
    div = (window / size * alpha + k) ** beta
    return input / div


def rms_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """input / sqrt(mean(input^2) + eps) * weight over the trailing `normalized_shape` dims."""
    check_tensors(input)
    normalized_shape = _shape_tuple(normalized_shape, "rms_norm")
    if eps is not None:
        check_number(eps, "rms_norm", "eps", 4, "float")
    _check_normalized_shape(input, normalized_shape, weight)
    dtype = input._data.dtype
    if dtype.kind not in INEXACT_KINDS:
        raise not_implemented("rms_norm", dtype)
    # float16 and bfloat16 are normalized in float32 (eps too: float32's) and the result,
    # weight included, cast back once, as in PyTorch
    low_precision = is_low_precision(dtype)
    if low_precision:
        input = to(input, _FLOAT32)
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    ndim = input.ndim
    axes = tuple(range(ndim - len(normalized_shape), ndim))
    output = input * rsqrt(mean(input * input, axes, keepdim=True) + eps)
    if weight is not None:
        output = output * weight
    return to(output, dtype) if low_precision else output


# --------------------------------------------------------------- weight norm
def _dims_except(ndim: int, dim: int) -> tuple[int, ...]:
    return tuple(d for d in range(ndim) if d != dim)


class WeightNormInterface(Function):
    """v * g / ||v||, the norm taken over every dim of v except `dim` (kept with size 1)."""

    _backward_name = "WeightNormInterfaceBackward0"
    _complex_refusal = (NotImplementedError, "\"weight_norm_kernel\" not implemented for '{dtype}'")
    _op_name = "weight_norm"

    @staticmethod
    def forward(ctx, v, g, dim):
        others = _dims_except(v.ndim, dim)
        array = widen(v._data)
        norm = np.sqrt(np.sum(np.square(array), axis=others, keepdims=True))
        ctx.dim = dim
        ctx.save_for_backward(v, g)
        return _wrap(round_to(array * (widen(g._data) / norm), v._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        v, g = ctx.saved_tensors
        others = _dims_except(v.ndim, ctx.dim)
        norm = (v * v).sum(others, keepdim=True).sqrt()
        # d/dg = <grad, v> / ||v||; d/dv = g / ||v|| * (grad - v <grad, v> / ||v||^2)
        projection = (grad_output * v).sum(others, keepdim=True)
        grad_g = grad_v = None
        if ctx.needs_input_grad[1]:
            grad_g = (projection / norm).reshape(g.shape)
        if ctx.needs_input_grad[0]:
            grad_v = (g / norm) * (grad_output - v * (projection / (norm * norm)))
        return grad_v, grad_g, None


def weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v * g / norm_except_dim(v, 2, dim); dim=-1 takes the norm of the whole tensor."""
    # PyTorch runs its fused kernel (and names its grad_fn) for the first and last dims only
    if dim == 0 or dim == v.ndim - 1:
        return WeightNormInterface.apply(v, g, dim)
    return v * (g / norm_except_dim(v, 2, dim))


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The p-norm of v over every dim except `dim` (kept with size 1); dim=-1: of all of v."""
    check_tensors(v)
    check_int(pow, "norm_except_dim", "pow", 2)
    check_int(dim, "norm_except_dim", "dim", 3)
    if dim == -1:
        return v.norm(pow)
    return v.norm(pow, _dims_except(v.ndim, _normalize_dim(dim, v.ndim)), keepdim=True)
