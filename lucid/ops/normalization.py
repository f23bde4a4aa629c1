"""Neural-network ops: linear layers, dropout, embedding, normalization and attention."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import raise_argument_error
from lucid._core.dtypes import C_TYPE_NAMES, FLOAT_KINDS, SCALAR_TYPE_NAMES
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import Function
from lucid._core.grad_mode import is_grad_enabled, local_state, no_grad
from lucid._core.tensor import _wrap
from lucid.ops._common import check_tensors, dtype_name, not_implemented
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.arithmetic import add, addmm, matmul, mul, mul_
from lucid.ops.broadcast import broadcast_error, sum_to
from lucid.ops.indexing import index_select, scatter_add
from lucid.ops.pointwise import rsqrt
from lucid.ops.reduction import mean, sum
from lucid.ops.sampling import pad

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "linear", "bilinear", "dropout", "dropout2d", "embedding", "batch_norm", "layer_norm",
    "group_norm", "rms_norm", "scaled_dot_product_attention",
    "instance_norm", "local_response_norm",
    "embedding_bag",
]  # fmt: skip


# ------------------------------------------------------------------- linear
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    if local_state.autocast is not None:
        return local_state.autocast.run(linear, input, weight, bias)
    check_tensors(input, weight)
    try:
        ndim = input.ndim
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if ndim == 2:
        if bias is None:
            return matmul(input, weight.t())
        return addmm(bias, input, weight.t())
    if ndim > 2 and bias is not None:
        # one GEMM over the flattened leading dims is faster than a batched matmul
        flat = input.reshape(-1, input.shape[-1])
        return addmm(bias, flat, weight.t()).view(*input.shape[:-1], weight.shape[0])
    output = matmul(input, weight.t())
    return output if bias is None else add(output, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_k = input1^T weight_k input2 + bias_k over the last dimension."""
    if local_state.autocast is not None:
        return local_state.autocast.run(bilinear, input1, input2, weight, bias)
    out_features, in1, in2 = weight.shape
    leading = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, 1, in2)
    # (B, in1) @ (in1, out*in2) contracts input1 with every weight slice in one GEMM
    mixed = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    output = sum(mixed.reshape(-1, out_features, in2) * x2, -1)
    if bias is not None:
        output = output + bias
    return output.reshape(*leading, out_features)


# ------------------------------------------------------------------ dropout
def _check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_mask(input: Tensor, mask_shape: tuple[int, ...], p: float, inplace: bool):
    from lucid._core.random import _rng

    array = input._data
    if p == 1.0:
        scaled = np.zeros(mask_shape, array.dtype)
    else:
        keep = _rng(None).random(mask_shape) >= p
        scaled = keep.astype(array.dtype) * np.asarray(1.0 / (1.0 - p), array.dtype)
    mask = _wrap(scaled)
    if inplace:
        return mul_(input, mask)
    return mul(input, mask)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training)."""
    _check_probability(p)
    if not training or p == 0.0:
        return input
    try:
        shape = input.shape
    except AttributeError as error:
        raise_argument_error(error)
        raise
    return _dropout_with_mask(input, shape, p, inplace)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels (dim 1 of (N, C, H, W)) with probability p."""
    _check_probability(p)
    ndim = input.ndim
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    elif ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    if not training or p == 0.0:
        return input
    if ndim < 2:
        return _dropout_with_mask(input, input.shape, p, inplace)
    mask_shape = tuple(input.shape[:2]) + (1,) * (ndim - 2)
    return _dropout_with_mask(input, mask_shape, p, inplace)


# ---------------------------------------------------------------- embedding
class Embedding(Function):
    _backward_name = "EmbeddingBackward0"
    _keeps_values_for_backward = True  # PyTorch saves the indices

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.indices = indices
        ctx.padding_idx = padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        ctx.num_weights = weight._data.shape[0]
        return _wrap(weight._data[indices])

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.needs_input_grad[0]:
            return None, None, None, None
        indices = ctx.indices.reshape(-1)
        dim = grad_output.shape[-1]
        rows = grad_output.reshape(-1, dim)
        row_scale = None
        if ctx.padding_idx is not None:
            # the padding row is a fixed vector: it never receives gradient
            row_scale = (indices != ctx.padding_idx).astype(rows._data.dtype)
        if ctx.scale_grad_by_freq:
            counts = np.bincount(indices, minlength=ctx.num_weights)
            frequency = 1.0 / counts[indices]
            row_scale = frequency if row_scale is None else row_scale * frequency
        if row_scale is not None:
            rows = rows * _wrap(row_scale.astype(rows._data.dtype).reshape(-1, 1))
        target = _wrap(np.zeros((ctx.num_weights, dim), rows._data.dtype))
        index = _wrap(np.broadcast_to(indices.reshape(-1, 1), (indices.size, dim)))
        # scatter_add accumulates rows whose index repeats
        return scatter_add(target, 0, index, rows), None, None, None


class EmbeddingRenorm(Function):
    _backward_name = "EmbeddingRenormBackward0"
    _keeps_values_for_backward = True  # PyTorch saves the indices

    @staticmethod
    def forward(ctx, weight, indices, max_norm, norm_type):
        ctx.mark_dirty(weight)
        array = weight._data
        rows = np.unique(indices)
        selected = array[rows]
        norms = np.linalg.norm(selected, ord=norm_type, axis=1)
        over = norms > max_norm
        # the small constant keeps renormalised rows just under max_norm, as PyTorch does
        scale = np.where(over, max_norm / (norms + 1e-7), 1.0).astype(array.dtype)
        array[rows] = selected * scale[:, None]
        return weight


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` picked by the integer tensor `input` (sparse gradients are dense)."""
    check_tensors(input, weight)
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead (while checking arguments for "
            "embedding)"
        )
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num_weights = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num_weights:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num_weights:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num_weights + padding_idx
    indices = input._data
    if indices.size and (indices.min() < 0 or indices.max() >= num_weights):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with no_grad():
            EmbeddingRenorm.apply(weight, indices, max_norm, norm_type)
    return Embedding.apply(weight, indices, padding_idx, scale_grad_by_freq)


class EmbeddingBag(Function):
    """Sums, means or maxes of bags of weight rows; entries are the kept (non-padding) ones.

    `entry_rows` are the weight rows of the entries in input order and `bag_of` each entry's
    bag (non-decreasing); `positions` are the entries' places in the flat input, where the
    gradient of per_sample_weights goes.
    """

    _backward_name = "EmbeddingBagBackward0"
    _op_name = "embedding_bag"
    _keeps_values_for_backward = True  # PyTorch saves the indices and bag assignment

    @staticmethod
    def forward(ctx, weight, per_sample_weights, plan):
        entry_rows, bag_of, positions, bags, count, mode, frequency = plan
        ctx.plan = plan
        # float16 and bfloat16 bags are summed in float32 and rounded once
        dtype = weight._data.dtype
        array = widen(weight._data)
        dim = array.shape[1]
        sizes = np.bincount(bag_of, minlength=bags)
        ctx.sizes = sizes
        result = np.zeros((bags, dim), array.dtype)
        filled = np.flatnonzero(sizes)
        firsts = np.concatenate(([0], np.cumsum(sizes)[:-1]))[filled]
        rows = array[entry_rows]
        if mode == "max":
            if filled.size:
                result[filled] = np.maximum.reduceat(rows, firsts, axis=0)
            # the first entry of its bag that holds each maximum, per feature
            best = result[bag_of]
            is_max = (rows == best) | (np.isnan(rows) & np.isnan(best))
            candidates = np.where(is_max, np.arange(entry_rows.size)[:, None], entry_rows.size)
            ctx.winners = np.minimum.reduceat(candidates, firsts, axis=0) if filled.size else None
            ctx.filled = filled
            ctx.save_for_backward(weight)
            return _wrap(round_to(result, dtype))
        if per_sample_weights is not None:
            rows = rows * widen(per_sample_weights._data)[positions][:, None]
        if filled.size:
            result[filled] = np.add.reduceat(rows, firsts, axis=0)
        if mode == "mean":
            result /= np.maximum(sizes, 1).astype(array.dtype)[:, None]
        ctx.save_for_backward(weight, per_sample_weights)
        return _wrap(round_to(result, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        entry_rows, bag_of, positions, bags, count, mode, frequency = ctx.plan
        dtype = grad_output._data.dtype
        num_weights, dim = ctx.saved_tensors[0].shape
        target = _wrap(np.zeros((num_weights, dim), dtype))
        if mode == "max":
            if ctx.winners is None or not ctx.needs_input_grad[0]:
                return None, None, None
            # each filled bag's gradient goes, feature by feature, to the row that won it
            winners = ctx.winners
            grad_rows = index_select(grad_output, 0, _wrap(ctx.filled))
            index = _wrap(entry_rows[winners])
            return scatter_add(target, 0, index, grad_rows), None, None
        weight, per_sample_weights = ctx.saved_tensors
        grad_entries = index_select(grad_output, 0, _wrap(bag_of))
        scale = np.ones(entry_rows.size)
        if mode == "mean":
            scale = scale / np.maximum(ctx.sizes, 1)[bag_of]
        grad_weight = grad_per_sample = None
        if ctx.needs_input_grad[0]:
            entry_scale = scale if frequency is None else scale * frequency
            scaled = grad_entries * _wrap(entry_scale.astype(dtype)[:, None])
            if per_sample_weights is not None:
                chosen = index_select(per_sample_weights, 0, _wrap(positions))
                scaled = scaled * chosen.unsqueeze(1)
            index = _wrap(np.broadcast_to(entry_rows[:, None], (entry_rows.size, dim)))
            grad_weight = scatter_add(target, 0, index, scaled)
        if per_sample_weights is not None and ctx.needs_input_grad[1]:
            rows = index_select(weight, 0, _wrap(entry_rows))
            products = sum(grad_entries * rows, 1)
            grad_per_sample = scatter_add(
                _wrap(np.zeros(count, dtype)), 0, _wrap(positions), products
            )
        return grad_weight, grad_per_sample, None


def _frequency_scale(indices: np.ndarray) -> np.ndarray:
    """Per entry, the factor scale_grad_by_freq applies to its gradient.

    PyTorch's kernel sorts the indices into runs of equal values and divides run k by the
    count of the value at sorted position k, which is the run's own count only while every
    earlier run has length one; lucid divides by the same numbers so that gradients agree.
    """
    if not indices.size:
        return np.ones(0)
    order = np.argsort(indices, kind="stable")
    ordered = indices[order]
    run_of = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]) - 1
    divisor = np.empty(indices.size)
    divisor[order] = np.bincount(indices)[ordered[run_of]]
    return 1.0 / divisor


def _bag_arguments(input, offsets, per_sample_weights):
    """PyTorch's checks of embedding_bag's shapes: (flat indices, offsets, include_last_offset
    override or None, flat per_sample_weights)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        starts = np.arange(0, input.numel(), max(input.shape[1], 1), dtype=np.int64)
        if not input.shape[1]:
            starts = np.zeros(input.shape[0], dtype=np.int64)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input._data.reshape(-1), starts, False, per_sample_weights
    if input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input._data, None, None, per_sample_weights
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")


def _check_indices(array: np.ndarray, kind: str) -> None:
    if array.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{dtype_name(array.dtype)}Tensor instead (while "
            f"checking arguments for {kind})"
        )


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxes of bags of `weight` rows, without materialising the lookups per bag.

    A 1-D `input` is split into bags at `offsets`; a 2-D one is one bag per row. Entries equal
    to `padding_idx` are left out of their bag (and of a mean's count); an empty bag is zeros.

    >>> embedding_bag(lucid.tensor([1, 2, 4]), lucid.ones(5, 2), lucid.tensor([0, 1]), mode="sum")
    tensor([[1., 1.],
            [2., 2.]])
    """
    check_tensors(input, weight)
    if weight.dtype == "int64" and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    indices, starts, forced_last, per_sample_weights = _bag_arguments(
        input, offsets, per_sample_weights
    )
    if forced_last is not None:
        include_last_offset = forced_last
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    _check_indices(indices, "embedding_bag")
    offsets_type = dtype_name(indices.dtype)
    if starts is None:
        _check_indices(offsets._data, "embedding_bag")
        offsets_type = dtype_name(offsets._data.dtype)
        starts = offsets._data.astype(np.int64)
    num_weights, dim = weight.shape
    if max_norm is not None:
        with no_grad():
            EmbeddingRenorm.apply(weight, indices, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(
                "padding_idx must be within the number of embeddings, "
                f"-{num_weights} through {num_weights - 1}, but got {padding_idx}"
            )
        padding_idx %= num_weights
    count = indices.size
    if starts.size:
        if starts[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {starts[0]}\n"
                f"[ torch.{offsets_type}Tensor{{}} ]"
            )
        if starts[-1] > count:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {count} but got "
                f"offsets[-1] of {starts[-1]}"
            )
    if count and (indices.min() < 0 or indices.max() >= num_weights):
        bad = indices[(indices < 0) | (indices >= num_weights)][0]
        raise RuntimeError(
            f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad}"
        )
    if include_last_offset:
        # the last offset only closes the list: PyTorch's last bag runs to the input's end
        starts = starts[:-1]
    bags = starts.size
    position = np.arange(count)
    # each entry's bag: the last bag starting at or before it (empty bags share its start)
    bag_of = np.searchsorted(starts, position, side="right") - 1
    keep = bag_of >= 0
    if padding_idx is not None:
        keep &= indices != padding_idx
    kept = np.flatnonzero(keep)
    frequency = None
    if scale_grad_by_freq:
        frequency = _frequency_scale(indices)[kept]
    plan = (indices[kept], bag_of[kept], kept, bags, count, mode, frequency)
    return EmbeddingBag.apply(weight, per_sample_weights, plan)


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
        output = xhat
        if weight is not None:
            output = xhat * widen(weight._data).reshape(param_shape)
        if bias is not None:
            if output is xhat:
                output = xhat + widen(bias._data).reshape(param_shape)
            else:
                output += widen(bias._data).reshape(param_shape)
        if is_low_precision(x._data.dtype):
            output = round_to(output, x._data.dtype)
        elif output is xhat:
            # xhat is saved for backward; the output must not share its memory
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
            from lucid.ops.fills import to  # noqa: PLC0415

            inputs = (x, weight, bias)
            widened = [None if t is None else to(t, _FLOAT32) for t in (grad_output, *inputs)]
            grads = _normalize_backward_graph(ctx, *widened, rstd)
            grads = tuple(None if g is None else to(g, t.dtype) for g, t in zip(grads, inputs))
        else:
            grads = _normalize_backward_graph(ctx, grad_output, x, weight, bias, rstd)
        return (*grads, None, None, None, None, None)


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
        grads = _layer_norm_backward_arrays(ctx, g, w, xhat_array, rstd_array)
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


def _layer_norm_backward_arrays(ctx, g, w, xhat, rstd):
    """Layer norm over one trailing dim: row sums become GEMVs with the weight folded in."""
    size = g.shape[-1]
    rows = g.reshape(-1, size)
    xhat_rows = xhat.reshape(-1, size)
    ones = np.ones(rows.shape[0], g.dtype)
    grad_x = grad_weight = grad_bias = None
    g_xhat = rows * xhat_rows
    if ctx.needs_input_grad[1]:
        grad_weight = np.matmul(ones, g_xhat)
    if ctx.needs_input_grad[2]:
        grad_bias = np.matmul(ones, rows)
    if ctx.needs_input_grad[0]:
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


class NativeGroupNorm(_Normalize):
    _backward_name = "NativeGroupNormBackward0"


class NativeBatchNorm(_Normalize):
    _backward_name = "NativeBatchNormBackward0"


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


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
    normalized_shape = _shape_tuple(normalized_shape)
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
    """Normalize each of `num_groups` channel groups of (N, C, *) over its channels and space."""
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
    check_tensors(input)
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
                f"torch.Size({list(shape)})"
            )
        _check_per_channel(checked_channels, weight, bias, running_mean, running_var)
        _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
        if running_mean is not None or running_var is not None:
            _update_running_stats(input._data, axes, count, running_mean, running_var, momentum)
        return NativeBatchNorm.apply(input, weight, bias, shape, axes, param_shape, eps, None)
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
    """Normalize each (sample, channel) of (N, C, *) input over its spatial dims.

    As in PyTorch, this is batch norm of the input viewed as (1, N * C, *), with the
    per-channel vectors repeated N times; the running statistics get the batch average.
    """
    check_tensors(input)
    shape = tuple(input.shape)
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"torch.Size({list(shape)})"
        )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    batch, channels = input.size(0), input.size(1)
    repeated = [None if vector is None else vector.repeat(batch)
                for vector in (weight, bias)]  # fmt: skip
    with no_grad():
        stats = [None if vector is None else vector.repeat(batch)
                 for vector in (running_mean, running_var)]  # fmt: skip
    output = batch_norm(
        input.reshape((1, batch * channels) + shape[2:]),
        stats[0],
        stats[1],
        repeated[0],
        repeated[1],
        use_input_stats,
        momentum,
        eps,
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
    normalized_shape = _shape_tuple(normalized_shape)
    _check_normalized_shape(input, normalized_shape, weight)
    dtype = input._data.dtype
    if dtype.kind not in FLOAT_KINDS:
        raise not_implemented("rms_norm", dtype)
    # float16 and bfloat16 are normalized in float32 (eps too: float32's) and the result,
    # weight included, cast back once, as in PyTorch
    low_precision = is_low_precision(dtype)
    if low_precision:
        from lucid.ops.fills import to  # noqa: PLC0415

        input = to(input, _FLOAT32)
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    ndim = input.ndim
    axes = tuple(range(ndim - len(normalized_shape), ndim))
    output = input * rsqrt(mean(input * input, axes, keepdim=True) + eps)
    if weight is not None:
        output = output * weight
    return to(output, dtype) if low_precision else output


# ---------------------------------------------------------------- attention


def _attention_mask(attn_mask: Tensor | None, is_causal: bool, query, key, dtype):
    """The additive mask (or None) and, when some row masks every key, the rows still alive."""
    length, source_length = query.shape[-2], key.shape[-2]
    if attn_mask is not None and not is_causal:
        # PyTorch reads the mask's last two dims before broadcasting it
        if attn_mask.ndim == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        if attn_mask.ndim == 1:
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
            )
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
        scores_shape = (*batch, length, source_length)
        try:
            np.broadcast_shapes(scores_shape, attn_mask.shape)
        except ValueError:
            raise broadcast_error(scores_shape, attn_mask.shape) from None
    if is_causal:
        allowed = np.tril(np.ones((length, source_length), dtype=bool))
        additive = np.where(allowed, dtype.type(0), dtype.type(-np.inf))
    elif attn_mask is None:
        return None, None
    elif attn_mask._data.dtype == np.bool_:
        # True means "may attend", as in PyTorch
        additive = np.where(attn_mask._data, dtype.type(0), dtype.type(-np.inf))
    else:
        additive = attn_mask._data.astype(dtype, copy=False)
    masked_rows = np.all(additive == -np.inf, axis=-1, keepdims=True)
    if not masked_rows.any():
        return additive, None
    # PyTorch's CPU kernel returns zeros (not nan) for a query that may attend to nothing
    return np.where(masked_rows, dtype.type(0), additive), ~masked_rows


def _keys_first(array: np.ndarray, ndim: int) -> np.ndarray:
    """A (..., Lq, Lk) mask-like array as a view that broadcasts against (Lk, *batch, Lq),
    where batch has ndim - 2 dims."""
    array = array.reshape((1,) * (ndim - array.ndim) + array.shape)
    return np.moveaxis(np.swapaxes(array, -1, -2), -2, 0)


class ScaledDotProductAttention(Function):
    """softmax(q k^T * scale + mask) v, with the probabilities held keys-first.

    The probabilities live in one (Lk, *batch, Lq) array: each batch entry's P^T is a
    strided (Lk, Lq) view of it that BLAS reads directly, and the softmax's reductions over
    keys become elementwise passes over rows of batch * Lq values. Reduced in the natural
    (..., Lq, Lk) layout, every key row is a separate short NumPy loop, several times
    slower for attention-sized rows.
    """

    _backward_name = "ScaledDotProductAttentionBackward0"

    @staticmethod
    def forward(ctx, query, key, value, additive, alive_rows, scale):
        # float16 and bfloat16 attend in float32 (the probabilities backward keeps too), and
        # the output is rounded once
        q, k, v = widen(query._data), widen(key._data), widen(value._data)
        ndim = max(q.ndim, k.ndim, v.ndim)
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        keys = k.shape[-2]
        probabilities_t = np.empty((keys, *batch, q.shape[-2]), dtype=q.dtype)
        # (*batch, Lk, Lq) views of it: the transposed scores, then probabilities
        scores_t = np.moveaxis(probabilities_t, 0, -2)
        np.matmul(k, np.swapaxes(q * q.dtype.type(scale), -1, -2), out=scores_t)
        if additive is not None:
            probabilities_t += _keys_first(additive, ndim)
        by_key = probabilities_t.reshape(keys, probabilities_t.size // max(keys, 1))
        if keys:
            # subtract each query's max so large scores don't overflow exp
            by_key -= by_key.max(axis=0)
            np.exp(by_key, out=by_key)
            by_key /= by_key.sum(axis=0)
        if alive_rows is not None:
            probabilities_t *= _keys_first(alive_rows, ndim)
        ctx.additive, ctx.alive_rows, ctx.scale = additive, alive_rows, scale
        ctx.save_for_backward(query, key, value, _wrap(probabilities_t))
        output = np.matmul(np.swapaxes(scores_t, -1, -2), v)
        return _wrap(round_to(output, query._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        query, key, value, probabilities_t = ctx.saved_tensors
        scale = ctx.scale
        if not is_grad_enabled():
            return _attention_backward_arrays(ctx, grad_output, query, key, value, probabilities_t)
        dtype = query.dtype
        if is_low_precision(query._data.dtype):
            # the same formulas on float32 copies (casts recorded in the graph), rounded once
            from lucid.ops.fills import to  # noqa: PLC0415

            grad_output, query, key, value = (
                to(t, _FLOAT32) for t in (grad_output, query, key, value)
            )
        # create_graph: rebuild the probabilities from query and key so they are recorded
        probabilities = _attention_probabilities(query, key, ctx.additive, ctx.alive_rows, scale)
        grad_query = grad_key = grad_value = None
        if ctx.needs_input_grad[2]:
            # d(P V)/dV: P^T grad
            grad_value = sum_to(matmul(probabilities.transpose(-2, -1), grad_output), value.shape)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            grad_probabilities = matmul(grad_output, value.transpose(-2, -1))
            # softmax backward: P * (dP - rowsum(dP * P)), then the 1/sqrt(E) scale
            weighted = grad_probabilities * probabilities
            grad_scores = weighted - probabilities * sum(weighted, -1, keepdim=True)
            grad_scores = grad_scores * scale
            if ctx.needs_input_grad[0]:
                grad_query = sum_to(matmul(grad_scores, key), query.shape)
            if ctx.needs_input_grad[1]:
                grad_key = sum_to(matmul(grad_scores.transpose(-2, -1), query), key.shape)
        if query.dtype != dtype:
            grad_query, grad_key, grad_value = (
                None if grad is None else to(grad, dtype)
                for grad in (grad_query, grad_key, grad_value)
            )
        return grad_query, grad_key, grad_value, None, None, None


def _attention_backward_arrays(ctx, grad_output, query, key, value, probabilities_t):
    """The attention gradients on arrays, keys-first like the forward's probabilities;
    taken only when grad mode is off (no create_graph)."""
    dtype = query._data.dtype
    g, p_t = widen(grad_output._data), probabilities_t._data
    q, k, v = widen(query._data), widen(key._data), widen(value._data)
    keys = p_t.shape[0]
    # P^T per batch entry, (*batch, Lk, Lq)
    p_views = np.moveaxis(p_t, 0, -2)
    grad_query = grad_key = grad_value = None
    if ctx.needs_input_grad[2]:
        grad_value = _wrap(round_to(_sum_to_shape(np.matmul(p_views, g), v.shape), dtype))
    if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
        # dP^T = V g^T, then the softmax backward P * (dP - sum over keys of dP * P), scaled
        grad_t = np.empty_like(p_t)
        grad_views = np.moveaxis(grad_t, 0, -2)
        np.matmul(v, np.swapaxes(g, -1, -2), out=grad_views)
        columns = p_t.size // max(keys, 1)
        by_key, p_by_key = grad_t.reshape(keys, columns), p_t.reshape(keys, columns)
        by_key -= (by_key * p_by_key).sum(axis=0)
        by_key *= p_by_key
        by_key *= by_key.dtype.type(ctx.scale)
        if ctx.needs_input_grad[0]:
            grad_query = np.matmul(np.swapaxes(grad_views, -1, -2), k)
            grad_query = _wrap(round_to(_sum_to_shape(grad_query, q.shape), dtype))
        if ctx.needs_input_grad[1]:
            grad_key = _wrap(round_to(_sum_to_shape(np.matmul(grad_views, q), k.shape), dtype))
    return grad_query, grad_key, grad_value, None, None, None


def _sum_to_shape(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Undo batch broadcasting of an attention operand (arrays only)."""
    if array.shape == shape:
        return array
    return sum_to(_wrap(array), shape)._data


def _attention_probabilities(query, key, additive, alive_rows, scale):
    from lucid.ops.nn_ops import softmax

    scores = matmul(query * scale, key.transpose(-2, -1))
    if additive is not None:
        scores = scores + _wrap(additive)
    probabilities = softmax(scores, -1)
    if alive_rows is not None:
        probabilities = probabilities * _wrap(alive_rows.astype(probabilities._data.dtype))
    return probabilities


def _repeat_heads(tensor: Tensor, heads: int) -> Tensor:
    shape = tuple(tensor.shape)
    repeats = heads // shape[-3]
    expanded = tensor.unsqueeze(-3).expand(*shape[:-2], repeats, *shape[-2:])
    return expanded.reshape(*shape[:-3], heads, *shape[-2:])


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dims.

    A boolean mask marks the keys each query may attend to; a float mask is added to the
    scores. A query that may attend to no key gets a zero output, as in PyTorch's CPU kernel.
    """
    if local_state.autocast is not None:
        return local_state.autocast.run(
            scaled_dot_product_attention,
            query,
            key,
            value,
            attn_mask,
            dropout_p,
            is_causal,
            scale,
            enable_gqa,
        )
    check_tensors(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if query._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(f"expected scalar type Float but found {dtype_name(query._data.dtype)}")
    if not query._data.dtype == key._data.dtype == value._data.dtype:
        names = [
            C_TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name) for t in (query, key, value)
        ]
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{names[0]} key.dtype: {names[1]} and value.dtype: {names[2]} instead."
        )
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3])
        value = _repeat_heads(value, query.shape[-3])
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    working_type = widen(query._data[:0]).dtype
    additive, alive_rows = _attention_mask(attn_mask, is_causal, query, key, working_type)
    if dropout_p > 0.0:
        if additive is not None:
            additive = additive.astype(query._data.dtype, copy=False)
        probabilities = _attention_probabilities(query, key, additive, alive_rows, scale)
        return matmul(dropout(probabilities, dropout_p), value)
    return ScaledDotProductAttention.apply(query, key, value, additive, alive_rows, scale)
