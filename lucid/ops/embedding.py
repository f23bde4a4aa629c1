"""Neural-network ops: embedding, embedding_bag and one_hot (used through lucid.nn.functional)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from lucid._core.arguments import argument_error
from lucid._core.dtypes import complex_use
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.grad_mode import is_grad_enabled, no_grad
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import check_number, check_tensors, dtype_name
from lucid.ops._promote import round_to, widen
from lucid.ops.indexing import index_select, scatter_add
from lucid.ops.reduction import sum

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "embedding", "embedding_bag", "one_hot",
]  # fmt: skip


class Embedding(Function):
    _backward_name = "EmbeddingBackward0"
    # a row lookup: linear with real coefficients (`embedding` refuses to record it on complex)
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # PyTorch saves the indices

    @staticmethod
    def forward(ctx, weight, index_tensor, padding_idx, scale_grad_by_freq):
        # The index tensor comes in a 1-tuple: as a tensor argument it would be an edge of
        # the graph, which PyTorch's EmbeddingBackward0 does not have; as an array it would
        # be a constant to lucid.compile's recording.
        indices = index_tensor[0]._data
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
        check_number(max_norm, "embedding_renorm_", "max_norm", 3, "float")
        with no_grad():
            EmbeddingRenorm.apply(weight, indices, max_norm, norm_type)
    if weight.requires_grad and complex_use.in_use and weight.is_complex() and is_grad_enabled():
        raise RuntimeError(
            "embedding does not support automatic differentiation for outputs with complex dtype."
        )
    return Embedding.apply(weight, (input,), padding_idx, scale_grad_by_freq)


class EmbeddingBag(Function):
    """Sums, means or maxes of bags of weight rows; entries are the kept (non-padding) ones.

    `entry_rows` are the weight rows of the entries in input order and `bag_of` each entry's
    bag (non-decreasing); `positions` are the entries' places in the flat input, where the
    gradient of per_sample_weights goes.
    """

    _backward_name = "EmbeddingBagBackward0"
    _complex_refusal = (
        RuntimeError,
        "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
        "Half, BFloat16, Float, Double; but got CPU{dtype}Type instead (while checking "
        "arguments for embedding_bag)",
    )
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
        check_number(max_norm, "embedding_renorm_", "max_norm", 3, "float")
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


# ------------------------------------------------------------------------- one_hot
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 indicators of `tensor`'s class values along a new last dimension."""
    if not isinstance(tensor, TensorBase):
        raise argument_error("one_hot", "input", 1, tensor)
    indices = tensor._data
    if indices.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if indices.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _wrap(np.zeros(indices.shape + (num_classes,), np.int64))
    if indices.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(indices.max()) + 1
    elif indices.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _wrap((indices[..., None] == np.arange(num_classes)).astype(np.int64))
