"""Neural-network ops: the loss family (used through lucid.nn.functional)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from lucid._core.arguments import argument_error
from lucid._core.function import Function
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import check_tensors, not_implemented
from lucid.ops.arithmetic import _dtype_name
from lucid.ops.broadcast import broadcast_shapes
from lucid.ops.nn_ops import log_softmax, logsigmoid, sigmoid, softmax
from lucid.ops.pointwise import clamp, log, where

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss",
]  # fmt: skip

_REDUCTIONS = ("none", "mean", "sum")


def _check_float_kernel(kernel: str, input: Tensor) -> None:
    """PyTorch's kernels for these losses are defined for floating types only."""
    if input._data.dtype.kind != "f":
        raise not_implemented(kernel, input._data.dtype)


# ---------------------------------------------------------------- reductions
def legacy_reduction(
    size_average: bool | None, reduce: bool | None, reduction: str, stacklevel: int = 3
) -> str:
    """The reduction string, translating the deprecated size_average/reduce flags.

    `stacklevel` points the deprecation warning at the user's call (a loss function's
    caller, or a loss module's constructor's).
    """
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        if not reduce:
            reduction = "none"
        else:
            reduction = "mean" if size_average else "sum"
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=stacklevel,
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _torch_size(shape: tuple[int, ...]) -> str:
    # PyTorch prints shapes in these messages as torch.Size, which lucid calls lucid.Size
    return f"lucid.Size({list(shape)})"


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({_torch_size(target.shape)}) that is different to the input "
            f"size ({_torch_size(input.shape)}). This will likely lead to incorrect results due "
            "to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------- regression
def _check_weight_size(input: Tensor, weight: Tensor | None) -> None:
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted_mean(loss: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    """PyTorch's weighted mse/l1: the weighted sum, divided by the weights' sum for 'mean'."""
    if weight is None:
        return _reduce(loss, reduction)
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error (input - target)**2, reduced."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    _check_weight_size(input, weight)
    difference = input - target
    return _weighted_mean(difference * difference, weight, reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error |input - target|, reduced."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    _check_weight_size(input, weight)
    return _weighted_mean((input - target).abs(), weight, reduction)


class SmoothL1Loss(Function):
    """Elementwise quadratic-then-linear loss; `scale` is 1/beta for smooth L1, 1 for Huber."""

    _op_name = "smooth_l1_loss"
    _backward_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, x, y, threshold, scale):
        ctx.save_for_backward(x, y)
        ctx.threshold, ctx.scale = threshold, scale
        a, b = np.broadcast_arrays(x._data, y._data)
        difference = np.abs(a - b)
        quadratic = 0.5 * scale * difference * difference
        linear = (difference - 0.5 * threshold) * (threshold * scale)
        return _wrap(np.where(difference < threshold, quadratic, linear))

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        difference = x - y
        # scale * d in the quadratic region, threshold * scale * sign(d) beyond it; a clamp
        # keeps nan differences nan, as in PyTorch
        bound = ctx.threshold * ctx.scale
        slope = clamp(difference * ctx.scale, -bound, bound)
        grad = grad_output * slope
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            grad_x = grad.sum_to_size(x.shape)
        if ctx.needs_input_grad[1]:
            grad_y = (-grad).sum_to_size(y.shape)
        return grad_x, grad_y, None, None


class HuberLoss(SmoothL1Loss):
    _backward_name = "HuberLossBackward0"


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_float_kernel("smooth_l1_cpu", input)
    _warn_size_mismatch(input, target)
    broadcast_shapes(input.shape, target.shape)
    if beta == 0:
        return _reduce((input - target).abs(), reduction)
    return _reduce(SmoothL1Loss.apply(input, target, float(beta), 1.0 / beta), reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target)."""
    reduction = legacy_reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_float_kernel("huber_cpu", input)
    _warn_size_mismatch(input, target)
    broadcast_shapes(input.shape, target.shape)
    _check_weight_size(input, weight)
    loss = HuberLoss.apply(input, target, float(delta), 1.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---------------------------------------------------------- classification
def _check_reduction_only(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _class_targets(
    input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int
) -> tuple[Tensor, Tensor]:
    """input as (M, C) rows of class scores and target as (M,) int64, after PyTorch's checks."""
    target_array = target._data
    if target_array.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_dtype_name(target_array.dtype)}"
        )
    shape = input.shape
    if len(shape) == 1:
        if target_array.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        rows, flat_target = input.reshape(1, shape[0]), target.reshape(-1)
    else:
        if target_array.ndim == 0 or shape[0] != target_array.shape[0]:
            batch = 1 if target_array.ndim == 0 else target_array.shape[0]
            raise ValueError(
                f"Expected input batch_size ({shape[0]}) to match target batch_size ({batch})."
            )
        if len(shape) == 2:
            if target_array.ndim != 1:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            rows, flat_target = input, target
        else:
            expected = (shape[0], *shape[2:])
            if target_array.shape != expected:
                raise RuntimeError(
                    f"Expected target size {list(expected)}, got {list(target_array.shape)}"
                )
            rows = input.movedim(1, -1).reshape(-1, shape[1])
            flat_target = target.reshape(-1)
    classes = rows.shape[1]
    if weight is not None and weight._data.size != classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes but "
            f"got weight tensor of shape: {list(weight.shape)}"
        )
    indices = flat_target._data.astype(np.int64, copy=False)
    outside = (indices != ignore_index) & ((indices < 0) | (indices >= classes))
    if outside.any():
        raise IndexError(f"Target {indices[np.argmax(outside)]} is out of bounds.")
    return rows, _wrap(indices)


def _target_weights(
    indices: np.ndarray, weight: Tensor | None, ignore_index: int, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Per-row weight of the target class (0 where ignored), safe indices and the ignored mask."""
    ignored = indices == ignore_index
    if ignored.any():
        safe = np.where(ignored, 0, indices)
    else:
        ignored = None
        safe = indices
    if weight is None:
        row_weight = np.ones(indices.shape, dtype)
    else:
        row_weight = weight._data.astype(dtype, copy=False)[safe]
    if ignored is not None:
        row_weight = np.where(ignored, 0.0, row_weight).astype(dtype, copy=False)
    return row_weight, safe, ignored


def _log_softmax_rows(array: np.ndarray) -> np.ndarray:
    # subtract the row maximum so large logits don't overflow exp
    shifted = array - np.max(array, axis=1, keepdims=True)
    shifted -= np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return shifted


class CrossEntropy(Function):
    """log_softmax + nll over (M, C) rows with class-index targets, in one forward."""

    _op_name = "cross_entropy_loss"
    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, label_smoothing):
        array = x._data
        if array.dtype.kind != "f":
            raise RuntimeError(f"\"log_softmax\" not implemented for '{_dtype_name(array.dtype)}'")
        dtype = array.dtype
        log_probs = _log_softmax_rows(array)
        indices = target._data
        row_weight, safe, ignored = _target_weights(indices, weight, ignore_index, dtype)
        rows = np.arange(array.shape[0])
        picked = log_probs[rows, safe]
        loss = -(picked * row_weight)
        smooth = None
        if label_smoothing > 0.0:
            if weight is None:
                smooth = -np.sum(log_probs, axis=1)
            else:
                smooth = -(log_probs @ weight._data.astype(dtype, copy=False))
        if ignored is not None:
            # -inf log-probabilities of ignored rows must not leak as 0 * inf = nan
            loss = np.where(ignored, 0.0, loss)
            if smooth is not None:
                smooth = np.where(ignored, 0.0, smooth)
        classes = array.shape[1]
        if reduction == "mean":
            # PyTorch divides the nll and the smoothing terms by the total weight separately,
            # so a zero total weight gives nan (0/0), not inf
            denominator = row_weight.sum()
            result = loss.sum() / denominator
            if smooth is not None:
                smoothed = smooth.sum() / denominator
                result = (1.0 - label_smoothing) * result + (label_smoothing / classes) * smoothed
            result = np.asarray(result, dtype)
        else:
            denominator = 1.0
            if smooth is not None:
                loss = (1.0 - label_smoothing) * loss + (label_smoothing / classes) * smooth
            if reduction == "sum":
                result = np.asarray(loss.sum(), dtype)
            else:
                result = loss.astype(dtype, copy=False)
        ctx.save_for_backward(x, target, weight)
        ctx.log_probs = log_probs
        ctx.config = (ignore_index, reduction, label_smoothing, denominator)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        x, target, weight = ctx.saved_tensors
        log_probs = ctx.log_probs
        ctx.log_probs = None
        grad_x = CrossEntropyBackward.apply(grad_output, x, target, weight, log_probs, *ctx.config)
        return grad_x, None, None, None, None, None


def _target_distribution(
    indices: np.ndarray,
    weight: Tensor | None,
    ignore_index: int,
    label_smoothing: float,
    classes: int,
    dtype: np.dtype,
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted target rows q (M, C) that the loss is -sum(q * log_probs), and their sums."""
    row_weight, safe, ignored = _target_weights(indices, weight, ignore_index, dtype)
    rows = np.arange(indices.shape[0])
    distribution = np.zeros((indices.shape[0], classes), dtype)
    distribution[rows, safe] = (1.0 - label_smoothing) * row_weight
    if label_smoothing > 0.0:
        class_weight = np.ones(classes, dtype) if weight is None else weight._data.astype(dtype)
        valid = np.ones(indices.shape, dtype) if ignored is None else (~ignored).astype(dtype)
        distribution += np.outer(valid, class_weight * (label_smoothing / classes))
    return distribution, distribution.sum(axis=1, keepdims=True)


class CrossEntropyBackward(Function):
    """Cross-entropy's input gradient r * (softmax(x) * sum(q) - q) as one op.

    q is the weighted (and smoothed) one-hot target, r the incoming gradient per row divided by
    the mean's denominator.
    """

    _backward_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(
        ctx, grad_output, x, target, weight, log_probs, ignore_index, reduction, smoothing, denom
    ):
        ctx.save_for_backward(grad_output, x, target, weight)
        ctx.config = (ignore_index, reduction, smoothing, denom)
        dtype = x._data.dtype
        if log_probs is None:
            log_probs = _log_softmax_rows(x._data)
        scale = grad_output._data.astype(dtype, copy=False) / denom
        if reduction == "none":
            scale = scale[:, None]
        indices = target._data
        row_weight, safe, ignored = _target_weights(indices, weight, ignore_index, dtype)
        if smoothing == 0.0 and weight is None and ignored is None:
            # the common case: q is the one-hot target and sum(q) = 1
            grad = np.exp(log_probs)
            grad *= scale
            grad[np.arange(indices.shape[0]), safe] -= np.broadcast_to(scale, (len(safe), 1))[:, 0]
            return _wrap(grad)
        # G - softmax * sum(G) with G = d loss / d log_probs, built as PyTorch builds it: an
        # ignored row's G is exactly 0 and a class outside the target gets no nll term, so a
        # zero total weight (an infinite scale) gives 0 for ignored rows where PyTorch does
        # and nan where PyTorch does, not 0 * inf everywhere
        rows = np.arange(indices.shape[0])
        row_scale = np.broadcast_to(scale, (len(safe), 1))[:, 0]
        if ignored is not None:
            row_scale = np.where(ignored, 0.0, row_scale)
        grad_log_probs = np.zeros(log_probs.shape, dtype)
        grad_log_probs[rows, safe] = -(1.0 - smoothing) * row_weight * row_scale
        if smoothing > 0.0:
            classes = log_probs.shape[1]
            class_weight = np.ones(classes, dtype) if weight is None else weight._data.astype(dtype)
            grad_log_probs -= np.outer(row_scale, class_weight * (smoothing / classes))
        grad = np.exp(log_probs)
        grad *= -grad_log_probs.sum(axis=1, keepdims=True)
        grad += grad_log_probs
        return _wrap(grad.astype(dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, x, target, weight = ctx.saved_tensors
        ignore_index, reduction, smoothing, denom = ctx.config
        dtype = x._data.dtype
        distribution, total = _target_distribution(
            target._data, weight, ignore_index, smoothing, x.shape[1], dtype
        )
        total_tensor = _wrap(total)
        probabilities = softmax(x, 1)
        scale = grad_output / denom
        if reduction == "none":
            scale = scale.reshape(-1, 1)
        grad_grad_output = grad_x = None
        if ctx.needs_input_grad[0]:
            # the op is linear in grad_output: its derivative is softmax * sum(q) - q over denom
            contribution = grad_grad * (probabilities * total_tensor - _wrap(distribution))
            if reduction == "none":
                grad_grad_output = contribution.sum(1) / denom
            else:
                grad_grad_output = contribution.sum() / denom
        if ctx.needs_input_grad[1]:
            # d softmax / dx applied to grad_grad: p * (gg - sum(gg p)), scaled per row
            weighted = (grad_grad * probabilities).sum(1, keepdim=True)
            grad_x = probabilities * (grad_grad - weighted) * (scale * total_tensor)
        return grad_grad_output, grad_x, None, None, None, None, None, None, None


def _restore_shape(loss: Tensor, target: Tensor, reduction: str) -> Tensor:
    if reduction == "none" and loss.shape != target.shape:
        return loss.reshape(target.shape)
    return loss


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of log-probabilities `input` (N, C, ...) at class `target`."""
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    rows, indices = _class_targets(input, target, weight, ignore_index)
    dtype = rows._data.dtype
    row_weight, safe, ignored = _target_weights(indices._data, weight, ignore_index, dtype)
    picked = rows.gather(1, _wrap(safe.reshape(-1, 1))).reshape(-1)
    loss = -picked * _wrap(row_weight)
    if ignored is not None:
        loss = where(_wrap(ignored), 0.0, loss)
    if reduction == "mean":
        return loss.sum() / _wrap(np.asarray(row_weight.sum(), dtype))
    if reduction == "sum":
        return loss.sum()
    return _restore_shape(loss, target, reduction)


def _cross_entropy_probabilities(
    input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, label_smoothing: float
) -> Tensor:
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / classes
    terms = log_softmax(input, class_dim) * target
    if weight is not None:
        weight_shape = [1] * input.ndim
        weight_shape[class_dim] = classes
        terms = terms * weight.reshape(weight_shape)
    loss = -terms.sum(class_dim)
    if reduction == "mean":
        # the mean is over batch elements, not classes
        return loss.sum() / (input._data.size // classes if input._data.size else 0)
    return _reduce(loss, reduction)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits `input` (N, C, ...) against class indices or class probabilities.

    Class-index targets take a fused path: log_softmax and nll in one op, whose backward is
    (softmax - one_hot) * scale in one op.
    """
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target._data.dtype.kind == "f" and target.shape == input.shape:
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    rows, indices = _class_targets(input, target, weight, ignore_index)
    loss = CrossEntropy.apply(rows, indices, weight, ignore_index, reduction, label_smoothing)
    return _restore_shape(loss, target, reduction)


# ------------------------------------------------------------------- binary
def _check_same_size(input: Tensor, target: Tensor, message: str) -> None:
    if target.shape != input.shape:
        raise ValueError(message.format(_torch_size(target.shape), _torch_size(input.shape)))


class BinaryCrossEntropy(Function):
    _backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, y, weight):
        p, t = x._data, y._data
        if not np.all((p >= 0) & (p <= 1)):
            raise RuntimeError("all elements of input should be between 0 and 1")
        ctx.save_for_backward(x, y, weight)
        with np.errstate(divide="ignore"):
            # log is clamped at -100 so p = 0 or 1 gives a finite loss, as in PyTorch
            log_p = np.maximum(np.log(p), -100.0)
            log_q = np.maximum(np.log1p(-p), -100.0)
        loss = -(t * log_p + (1.0 - t) * log_q)
        if weight is not None:
            loss = loss * weight._data
        return _wrap(loss.astype(p.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        x, y, weight = ctx.saved_tensors
        if weight is not None:
            grad_output = grad_output * weight
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            # d/dp = (p - t) / (p (1 - p)), the denominator kept from 0 like PyTorch's eps
            grad_x = grad_output * (x - y) / clamp((1.0 - x) * x, min=1e-12)
        if ctx.needs_input_grad[1]:
            # d/dt = log(1 - p) - log(p), with the forward's clamp
            grad_y = grad_output * (clamp(log(1.0 - x), min=-100.0) - clamp(log(x), min=-100.0))
        return grad_x, grad_y, None


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log p + (1 - t) log(1 - p)) for probabilities p = input, logs clamped at -100."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_float_kernel("binary_cross_entropy", input)
    if target._data.dtype.kind != "f":
        raise RuntimeError(
            f"Found dtype {_dtype_name(target._data.dtype)} but expected "
            f"{_dtype_name(input._data.dtype)}"
        )
    _check_same_size(
        input,
        target,
        "Using a target size ({}) that is different to the input size ({}) is deprecated. "
        "Please ensure they have the same size.",
    )
    targets = target._data
    # NaN fails both comparisons, as in PyTorch's check
    if not np.logical_and(targets >= 0, targets <= 1).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    if weight is not None and weight.shape != input.shape:
        weight = weight.expand(input.shape)
    return _reduce(BinaryCrossEntropy.apply(input, target, weight), reduction)


class BinaryCrossEntropyWithLogits(Function):
    _backward_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, y, weight, pos_weight):
        z, t = np.broadcast_arrays(x._data, y._data)
        ctx.save_for_backward(x, y, weight, pos_weight)
        # softplus(-z) = log1p(exp(-|z|)) + max(-z, 0) never overflows
        softplus_negative = np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0.0)
        if pos_weight is None:
            loss = (1.0 - t) * z + softplus_negative
        else:
            log_weight = 1.0 + (pos_weight._data - 1.0) * t
            loss = (1.0 - t) * z + log_weight * softplus_negative
        if weight is not None:
            loss = loss * weight._data
        return _wrap(loss.astype(x._data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        x, y, weight, pos_weight = ctx.saved_tensors
        if weight is not None:
            grad_output = grad_output * weight
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            # d/dz = (1 + (w_pos - 1) t) sigmoid(z) - w_pos t
            if pos_weight is None:
                grad_x = grad_output * (sigmoid(x) - y)
            else:
                log_weight = 1.0 + (pos_weight - 1.0) * y
                grad_x = grad_output * (log_weight * sigmoid(x) - pos_weight * y)
            grad_x = grad_x.sum_to_size(x.shape)
        if ctx.needs_input_grad[1]:
            # d/dt = -z + (w_pos - 1) softplus(-z), softplus(-z) = -logsigmoid(z)
            if pos_weight is None:
                grad_y = grad_output * -x
            else:
                grad_y = grad_output * (-x - (pos_weight - 1.0) * logsigmoid(x))
            grad_y = grad_y.sum_to_size(y.shape)
        return grad_x, grad_y, None, None


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed stably from the logits."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "Target size ({}) must be the same as input size ({})")
    _check_float_kernel("log_sigmoid_cpu", input)
    return _reduce(BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight), reduction)


# -------------------------------------------------------------- divergences
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Kullback-Leibler divergence of log-probabilities `input` from `target`."""
    for position, (name, value) in enumerate((("input", input), ("target", target))):
        if not isinstance(value, TensorBase):
            raise argument_error("kl_div", name, position + 1, value)
    if input._data.dtype.kind != "f" or target._data.dtype.kind != "f":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    elif reduction != "batchmean":
        _check_reduction_only(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy: a zero target contributes 0 even where log(target) is -inf
        loss = where(target == 0, 0.0, target * target.log()) - target * input
    if reduction == "batchmean":
        batch = input.shape[0] if input.ndim else 1
        return loss.sum() / batch
    return _reduce(loss, reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != target.ndim + 1 or input2.ndim != target.ndim + 1:
        raise RuntimeError(
            f"{target.ndim}D target tensor expects {target.ndim + 1}D input tensors, but found "
            f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    dim = 1 if input1.ndim == 2 else 0
    epsilon = 1e-12
    product = (input1 * input2).sum(dim)
    square1 = (input1 * input1).sum(dim) + epsilon
    square2 = (input2 * input2).sum(dim) + epsilon
    cosine = product / (square1 * square2).sqrt()
    positive = where(target == 1, 1.0 - cosine, 0.0)
    negative = where(target == -1, clamp(cosine - margin, min=0.0), 0.0)
    return _reduce(positive + negative, reduction)
