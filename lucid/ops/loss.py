"""Neural-network ops: the loss family (used through lucid.nn.functional)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import argument_error, is_int
from lucid._core.dtypes import FLOAT_KINDS, complex_use, result_type
from lucid._core.function import OWN_COMPLEX_RULE, Function
from lucid._core.grad_mode import is_grad_enabled, no_grad
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import (
    autocast_op,
    cast_error,
    check_int,
    check_number,
    check_tensors,
    not_implemented,
)
from lucid.ops._common import dtype_name as _dtype_name
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.activations import log_softmax, logsigmoid, sigmoid, softmax
from lucid.ops.arithmetic import _check_not_bool_negation, minimum
from lucid.ops.broadcast import common_shape
from lucid.ops.convolution import _overload_type_name
from lucid.ops.linear import linear
from lucid.ops.pointwise import Clamp, clamp, exp, log, where

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "ctc_loss", "linear_cross_entropy",
]  # fmt: skip

_REDUCTIONS = ("none", "mean", "sum")


def _check_float_kernel(kernel: str, input: Tensor) -> None:
    """PyTorch's kernels for these losses are defined for floating types only."""
    if input._data.dtype.kind not in FLOAT_KINDS:
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


@autocast_op
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
    if complex_use.in_use and (input.is_complex() or target.is_complex()):
        raise not_implemented("mse_cpu", result_type(input, target).numpy_dtype)
    difference = input - target
    return _weighted_mean(difference * difference, weight, reduction)


@autocast_op
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error `|input - target|`, reduced."""
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
        # float16 and bfloat16 in float32, rounded once
        a, b = np.broadcast_arrays(widen(x._data), widen(y._data))
        difference = np.abs(a - b)
        quadratic = 0.5 * scale * difference * difference
        linear = (difference - 0.5 * threshold) * (threshold * scale)
        result = np.where(difference < threshold, quadratic, linear)
        return _wrap(round_to(result, np.result_type(x._data.dtype, y._data.dtype)))

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


@autocast_op
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """`0.5 d**2 / beta` where `|d| < beta`, else `|d| - 0.5 beta` (`d = input - target`)."""
    check_number(beta, "smooth_l1_loss", "beta", 4, "float")
    reduction = legacy_reduction(size_average, reduce, reduction)
    if not beta >= 0:  # nan too, as PyTorch's check reads
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_float_kernel("smooth_l1_cpu", input)
    _warn_size_mismatch(input, target)
    common_shape(input.shape, target.shape)
    if beta == 0:
        return _reduce((input - target).abs(), reduction)
    return _reduce(SmoothL1Loss.apply(input, target, float(beta), 1.0 / beta), reduction)


@autocast_op
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """`0.5 d**2` where `|d| < delta`, else `delta (|d| - 0.5 delta)` (`d = input - target`)."""
    check_number(delta, "huber_loss", "delta", 4, "float")
    reduction = legacy_reduction(None, None, reduction)
    if not delta > 0:  # nan too, as PyTorch's check reads
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_float_kernel("huber_cpu", input)
    _warn_size_mismatch(input, target)
    common_shape(input.shape, target.shape)
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
        if target_array.ndim == 1 and target_array.shape[0] != 1:
            raise ValueError(
                "For 1D input, 1D target must have size 1, but got target size: "
                f"{target_array.shape[0]}"
            )
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
    # the target itself where it is int64 already: a tensor made here from its values would
    # be a constant to lucid.compile's recording
    return rows, flat_target if flat_target._data is indices else _wrap(indices)


def _target_weights(
    indices: np.ndarray, weight: np.ndarray | None, ignore_index: int, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Per-row weight of the target class (0 where ignored), safe indices and the ignored mask
    (`weight`: the class weights' array, or None)."""
    ignored = indices == ignore_index
    if ignored.any():
        safe = np.where(ignored, 0, indices)
    else:
        ignored = None
        safe = indices
    if weight is None:
        row_weight = np.ones(indices.shape, dtype)
    else:
        row_weight = weight.astype(dtype, copy=False)[safe]
    if ignored is not None:
        row_weight = np.where(ignored, 0.0, row_weight).astype(dtype, copy=False)
    return row_weight, safe, ignored


def _log_softmax_rows(array: np.ndarray, class_last: bool) -> np.ndarray:
    """log_softmax over the classes of (M, C) rows. float16 and bfloat16 rows are computed in
    float32 and rounded as PyTorch's log_softmax of that dtype rounds them (its last-dim
    kernel also rounds the sum and its log), returned as float32."""
    dtype = array.dtype
    array = widen(array)
    # subtract the row maximum so large logits don't overflow exp
    shifted = array - np.max(array, axis=1, keepdims=True)
    total = np.sum(np.exp(shifted), axis=1, keepdims=True)
    if not is_low_precision(dtype):
        shifted -= np.log(total)
        return shifted
    if class_last:
        shifted -= round_to(np.log(round_to(total, dtype)), dtype).astype(np.float32)
    else:
        shifted -= np.log(total)
    return round_to(shifted, dtype).astype(np.float32)


class CrossEntropy(Function):
    """log_softmax + nll over (M, C) rows with class-index targets, in one forward."""

    _op_name = "cross_entropy_loss"
    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, label_smoothing, class_last):
        result, log_probs, denominator = _cross_entropy_arrays(
            x._data, target._data, _array_or_none(weight), ignore_index, reduction,
            label_smoothing, class_last,
        )  # fmt: skip
        ctx.save_for_backward(x, target, weight)
        ctx.log_probs = log_probs
        ctx.config = (ignore_index, reduction, label_smoothing, denominator, class_last)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        x, target, weight = ctx.saved_tensors
        log_probs = ctx.log_probs
        ctx.log_probs = None
        grad_x = CrossEntropyBackward.apply(grad_output, x, target, weight, log_probs, *ctx.config)
        return grad_x, None, None, None, None, None, None

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # forward's arrays, keeping the log-probabilities and the mean's denominator, and
        # CrossEntropyBackward's from them (lucid/_dynamo/flat.py)
        if args[0].dtype.kind != "f":
            return None

        def forward(*args):
            result, log_probs, denominator = _cross_entropy_arrays(*args)
            return result, (log_probs, denominator)

        def backward(grad, out, kept, x, target, weight, ignore_index, reduction, smoothing,
                     last):  # fmt: skip
            log_probs, denominator = kept
            grad_x = _cross_entropy_gradient(grad, x, target, weight, log_probs, ignore_index,
                                             reduction, smoothing, denominator, last)  # fmt: skip
            return (grad_x,) + (None,) * 6

        return forward, backward, CrossEntropyBackward, True


def _array_or_none(tensor: Tensor | None) -> np.ndarray | None:
    return None if tensor is None else tensor._data


def _cross_entropy_arrays(array: np.ndarray, indices: np.ndarray, weight: np.ndarray | None,
                          ignore_index: int, reduction: str, label_smoothing: float,
                          class_last: bool) -> tuple:  # fmt: skip
    """CrossEntropy's loss, its log-probabilities and its mean's denominator (1 for the
    other reductions), from the rows' and the targets' arrays and the class weights'."""
    # float16 and bfloat16 losses are accumulated in float32 and rounded once
    log_probs = _log_softmax_rows(array, class_last)
    dtype = log_probs.dtype
    row_weight, safe, ignored = _target_weights(indices, weight, ignore_index, dtype)
    rows = np.arange(array.shape[0])
    picked = log_probs[rows, safe]
    loss = -(picked * row_weight)
    smooth = None
    if label_smoothing > 0.0:
        if weight is None:
            smooth = -np.sum(log_probs, axis=1)
        else:
            smooth = -(log_probs @ weight.astype(dtype, copy=False))
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
    return round_to(result, array.dtype), log_probs, denominator


def _target_distribution(
    indices: np.ndarray,
    weight: np.ndarray | None,
    ignore_index: int,
    label_smoothing: float,
    classes: int,
    dtype: np.dtype,
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted target rows q (M, C) that the loss is -sum(q * log_probs), and their sums
    (`weight`: the class weights' array, or None)."""
    row_weight, safe, ignored = _target_weights(indices, weight, ignore_index, dtype)
    rows = np.arange(indices.shape[0])
    distribution = np.zeros((indices.shape[0], classes), dtype)
    distribution[rows, safe] = (1.0 - label_smoothing) * row_weight
    if label_smoothing > 0.0:
        class_weight = np.ones(classes, dtype) if weight is None else weight.astype(dtype)
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
        ctx,
        grad_output,
        x,
        target,
        weight,
        log_probs,
        ignore_index,
        reduction,
        smoothing,
        denom,
        class_last,
    ):
        ctx.save_for_backward(grad_output, x, target, weight)
        ctx.config = (ignore_index, reduction, smoothing, denom, class_last)
        grad = _cross_entropy_gradient(
            grad_output._data, x._data, target._data, _array_or_none(weight), log_probs,
            ignore_index, reduction, smoothing, denom, class_last,
        )  # fmt: skip
        return _wrap(grad)

    @staticmethod
    def backward(ctx, grad_grad):
        grad_output, x, target, weight = ctx.saved_tensors
        ignore_index, reduction, smoothing, denom, _ = ctx.config
        dtype = x._data.dtype
        distribution, total = _target_distribution(
            target._data, _array_or_none(weight), ignore_index, smoothing, x.shape[1], dtype
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
        return grad_grad_output, grad_x, None, None, None, None, None, None, None, None


def _cross_entropy_gradient(g: np.ndarray, x: np.ndarray, indices: np.ndarray,
                            weight: np.ndarray | None, log_probs: np.ndarray | None,
                            ignore_index: int, reduction: str, smoothing: float, denom: Any,
                            class_last: bool) -> np.ndarray:  # fmt: skip
    """CrossEntropyBackward's array, from the incoming gradient's, the rows', the targets'
    and the class weights' arrays (log_probs: the forward's, or None to compute them)."""
    # float16 and bfloat16: computed in float32 from the rounded log-probabilities, with
    # the gradient of the log-probabilities rounded as PyTorch's nll_loss backward rounds
    # it, and the result rounded once
    x_dtype = x.dtype
    if log_probs is None:
        log_probs = _log_softmax_rows(x, class_last)
    dtype = log_probs.dtype
    scale = widen(g).astype(dtype, copy=False) / denom
    scale = round_to(scale, x_dtype).astype(dtype, copy=False)
    if reduction == "none":
        scale = scale[:, None]
    row_weight, safe, ignored = _target_weights(indices, weight, ignore_index, dtype)
    if smoothing == 0.0 and weight is None and ignored is None:
        # the common case: q is the one-hot target and sum(q) = 1
        grad = np.exp(log_probs)
        grad *= scale
        grad[np.arange(indices.shape[0]), safe] -= np.broadcast_to(scale, (len(safe), 1))[:, 0]
        return round_to(grad, x_dtype)
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
        class_weight = np.ones(classes, dtype) if weight is None else weight.astype(dtype)
        grad_log_probs -= np.outer(row_scale, class_weight * (smoothing / classes))
    grad_log_probs = round_to(grad_log_probs, x_dtype).astype(dtype, copy=False)
    grad = np.exp(log_probs)
    grad *= -grad_log_probs.sum(axis=1, keepdims=True)
    grad += grad_log_probs
    return round_to(grad.astype(dtype, copy=False), x_dtype)


def _restore_shape(loss: Tensor, target: Tensor, reduction: str) -> Tensor:
    if reduction == "none" and loss.shape != target.shape:
        return loss.reshape(target.shape)
    return loss


@autocast_op
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
    check_int(ignore_index, "nll_loss_nd", "ignore_index", 5)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_class_weight(input, weight)
    rows, indices = _class_targets(input, target, weight, ignore_index)
    # PyTorch runs 1-d and 2-d inputs through nll_loss's kernel, more dims through nll_loss2d's
    kernel = "nll_loss_out_frame" if input.ndim <= 2 else "nll_loss2d_forward_out_frame"
    _check_float_kernel(kernel, input)
    dtype = rows._data.dtype
    row_weight, safe, ignored = _target_weights(
        indices._data, _array_or_none(weight), ignore_index, dtype
    )
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


@autocast_op
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
    check_int(ignore_index, "cross_entropy_loss", "ignore_index", 5)
    check_number(label_smoothing, "cross_entropy_loss", "label_smoothing", 6, "float")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    # the log_softmax over the classes comes first, with its kernel's name: the last-dim one
    # where the classes are the last dim
    if target.shape == input.shape and target._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            "Expected floating point type for target with class probabilities, got "
            f"{_dtype_name(target._data.dtype)}"
        )
    kernel = "log_softmax_lastdim_kernel_impl" if input.ndim <= 2 else "log_softmax_kernel_impl"
    _check_float_kernel(kernel, input)
    if target._data.dtype.kind in FLOAT_KINDS and target.shape == input.shape:
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    _check_class_weight(input, weight)
    rows, indices = _class_targets(input, target, weight, ignore_index)
    # whether the classes are the input's last dim, as PyTorch's log_softmax sees them
    class_last = input.ndim <= 2
    loss = CrossEntropy.apply(
        rows, indices, weight, ignore_index, reduction, label_smoothing, class_last
    )
    return _restore_shape(loss, target, reduction)


# ------------------------------------------------------------------- binary
def _check_same_size(input: Tensor, target: Tensor, message: str) -> None:
    if target.shape != input.shape:
        raise ValueError(message.format(_torch_size(target.shape), _torch_size(input.shape)))


class BinaryCrossEntropy(Function):
    _backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, y, weight):
        # float16 and bfloat16 in float32, rounded once
        p, t = widen(x._data), widen(y._data)
        if not np.all((p >= 0) & (p <= 1)):
            raise RuntimeError("all elements of input should be between 0 and 1")
        ctx.save_for_backward(x, y, weight)
        with np.errstate(divide="ignore"):
            # log is clamped at -100 so p = 0 or 1 gives a finite loss, as in PyTorch
            log_p = np.maximum(np.log(p), -100.0)
            log_q = np.maximum(np.log1p(-p), -100.0)
        loss = -(t * log_p + (1.0 - t) * log_q)
        if weight is not None:
            loss = loss * widen(weight._data)
        return _wrap(round_to(loss.astype(p.dtype, copy=False), x._data.dtype))

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


@autocast_op
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
    if target._data.dtype != input._data.dtype:
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
    if isinstance(weight, TensorBase):
        _check_not_differentiable("binary_cross_entropy", "weight", weight)
    if weight is not None and weight.shape != input.shape:
        weight = weight.expand(input.shape)
    return _reduce(BinaryCrossEntropy.apply(input, target, weight), reduction)


class BinaryCrossEntropyWithLogits(Function):
    _backward_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, y, weight, pos_weight):
        # float16 and bfloat16 in float32, rounded once
        z, t = np.broadcast_arrays(widen(x._data), widen(y._data))
        ctx.save_for_backward(x, y, weight, pos_weight)
        # softplus(-z) = log1p(exp(-|z|)) + max(-z, 0) never overflows
        softplus_negative = np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0.0)
        if pos_weight is None:
            loss = (1.0 - t) * z + softplus_negative
        else:
            log_weight = 1.0 + (widen(pos_weight._data) - 1.0) * t
            loss = (1.0 - t) * z + log_weight * softplus_negative
        if weight is not None:
            loss = loss * widen(weight._data)
        # PyTorch computes the loss into a tensor of the target's dtype
        return _wrap(round_to(loss, y._data.dtype))

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


def _check_logits_operands(input: Tensor, target: Tensor, weight: Any, pos_weight: Any) -> None:
    """PyTorch's errors for a target that is no float tensor and for weights whose shapes do
    not broadcast to the loss's, in the order its kernel meets them (pos_weight with target,
    then the loss with weight)."""
    target_dtype = target._data.dtype
    if target_dtype == np.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if target_dtype.kind not in FLOAT_KINDS:
        # PyTorch computes the loss into a tensor of target's dtype
        raise cast_error(result_type(input, target).numpy_dtype, target_dtype)
    shape = input._data.shape
    for operands in ((pos_weight, target), (input, weight)):
        if all(isinstance(operand, TensorBase) for operand in operands):
            broadcast = common_shape(*(operand._data.shape for operand in operands))
            if broadcast != shape:
                raise RuntimeError(
                    f"output with shape {list(shape)} doesn't match the broadcast shape "
                    f"{list(broadcast)}"
                )


@autocast_op
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
    for name, value in (("weight", weight), ("pos_weight", pos_weight)):
        if isinstance(value, TensorBase):
            _check_not_differentiable("binary_cross_entropy_with_logits", name, value)
    _check_float_kernel("log_sigmoid_cpu", input)
    _check_logits_operands(input, target, weight, pos_weight)
    return _reduce(BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight), reduction)


# -------------------------------------------------------------- divergences
@autocast_op
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
    if input._data.dtype.kind == "c" or target._data.dtype.kind == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if input._data.dtype.kind not in FLOAT_KINDS or target._data.dtype.kind not in FLOAT_KINDS:
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


@autocast_op
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
    check_tensors(input1, input2, target)
    check_number(margin, "cosine_embedding_loss", "margin", 4, "float")
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
    # the clamp comes first, as in PyTorch, whose error a complex input meets there
    hinge = clamp(cosine - margin, min=0.0)
    positive = where(target == 1, 1.0 - cosine, 0.0)
    negative = where(target == -1, hinge, 0.0)
    return _reduce(positive + negative, reduction)


# ------------------------------------------------------------------ margins
class ClampMin(Clamp):
    """clamp with a lower bound only: PyTorch's clamp_min, the last node of its margin losses."""

    _backward_name = "ClampMinBackward0"


def _hinge(input: Tensor) -> Tensor:
    return ClampMin.apply(input, 0, None)


def _check_not_differentiable(op: str, name: str, value: Tensor) -> None:
    """PyTorch's kernel has no derivative for this argument: requiring one is an error."""
    if value.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"The function '{op}' is not differentiable with respect to argument '{name}'. "
            "This input cannot have requires_grad True."
        )


def _check_class_weight(input: Tensor, weight: Tensor | None) -> None:
    """Class weights of nll_loss (and cross_entropy over class indices) take no gradient;
    PyTorch names the 2-d kernel for inputs of more than two dims."""
    if isinstance(weight, TensorBase):
        kernel = "nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward"
        _check_not_differentiable(kernel, "weight", weight)


@autocast_op
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin): target 1 ranks input1 first, -1 input2."""
    check_number(margin, "margin_ranking_loss", "margin", 4, "float")
    check_tensors(input1, input2, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_torch_size(input1.shape)}, input2: {_torch_size(input2.shape)}, "
            f"target: {_torch_size(target.shape)} "
        )
    return _reduce(_hinge(-target * (input1 - input2) + margin), reduction)


@autocast_op
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1 (input a distance)."""
    check_number(margin, "hinge_embedding_loss", "margin", 3, "float")
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    shortfall = _hinge(margin - input)
    if shortfall.dtype != input.dtype:
        # PyTorch keeps an integer input's dtype, truncating margin - input
        shortfall = shortfall.to(input.dtype)
    # both terms are kept wherever target is neither 1 nor -1, as in PyTorch
    margin_term = where(target != 1, shortfall, 0)
    distance_term = where(target != -1, input, 0)
    return _reduce(margin_term + distance_term, reduction)


class SoftMarginLoss(Function):
    """log(1 + exp(-target * input)), reduced inside the op as PyTorch's kernel does."""

    _backward_name = "SoftMarginLossBackward0"
    # PyTorch runs it on complex input only where no gradient is recorded (`soft_margin_loss`)
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, y, reduction):
        ctx.save_for_backward(x, y)
        ctx.reduction = reduction
        # exp, then log1p, as PyTorch computes it: a margin below about -710 (float64)
        # overflows to inf there too
        # (float16 and bfloat16 in float32, rounded once)
        dtype = x._data.dtype
        loss = np.log1p(np.exp(-widen(y._data) * widen(x._data)))
        loss = loss.astype(np.float32 if is_low_precision(dtype) else dtype, copy=False)
        if reduction == "mean":
            return _wrap(round_to(np.asarray(loss.sum() / loss.size, loss.dtype), dtype))
        if reduction == "sum":
            return _wrap(round_to(np.asarray(loss.sum(), loss.dtype), dtype))
        return _wrap(round_to(loss, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        # d/dx log(1 + exp(-y x)) = -y z / (1 + z) with z = exp(-y x)
        z = exp(-y * x)
        grad = -y * z / (1.0 + z) * grad_output
        if ctx.reduction == "mean":
            grad = grad / x.numel()
        return grad.sum_to_size(x.shape), None, None


@autocast_op
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Two-class logistic loss log(1 + exp(-target * input)) for targets 1 and -1."""
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    # PyTorch's kernel negates the input first, then writes a float result into its dtype
    _check_not_bool_negation(input)
    is_complex = input._data.dtype.kind == "c"
    if input._data.dtype.kind not in FLOAT_KINDS and not is_complex:
        raise RuntimeError(
            "result type Float can't be cast to the desired output type "
            f"{_dtype_name(input._data.dtype)}"
        )
    _check_not_differentiable("soft_margin_loss", "target", target)
    if is_complex and input.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "soft_margin_loss does not support automatic differentiation for outputs with "
            "complex dtype."
        )
    shape = common_shape(input.shape, target.shape)
    if tuple(shape) != tuple(input.shape):
        raise RuntimeError(
            f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}"
        )
    return SoftMarginLoss.apply(input, target, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class logistic loss against 0/1 targets, averaged over the classes (last dim)."""
    check_tensors(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not valid")


def _check_margin_input(input: Tensor) -> tuple[int, int]:
    """(rows, classes) of a margin loss's input: a vector or a matrix of class scores."""
    shape = input.shape
    if not (
        (len(shape) == 2 and shape[1] != 0) or (len(shape) == 1 and shape[0] != 0) or not shape
    ):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(shape)}"
        )
    rows = 1 if len(shape) <= 1 else shape[0]
    classes = 1 if not shape else shape[-1]
    return rows, classes


def _check_long_target(target: Tensor) -> None:
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_name(target._data.dtype)}")


def _reduce_rows(loss: np.ndarray, reduction: str, per_row_shape: tuple, dtype) -> np.ndarray:
    """A margin kernel's reduction: the mean is over rows (each row already averaged)."""
    if reduction == "mean":
        return np.asarray(loss.sum() / loss.shape[0], dtype)
    if reduction == "sum":
        return np.asarray(loss.sum(), dtype)
    return loss.astype(dtype, copy=False).reshape(per_row_shape)


def _row_scale(grad_output: Tensor, reduction: str, rows: int, classes: int, dtype) -> np.ndarray:
    """The factor each row's hinge counts with: 1/classes, over rows for the mean, times the
    incoming gradient (one per row without reduction)."""
    if reduction == "none":
        scale = grad_output._data.reshape(-1, 1) / classes
    elif reduction == "mean":
        scale = np.full((rows, 1), grad_output._data / (rows * classes))
    else:
        scale = np.full((rows, 1), grad_output._data / classes)
    return scale.astype(dtype, copy=False)


def _multi_margin_hinges(rows: np.ndarray, labels: np.ndarray, margin: float) -> tuple:
    """margin - x[label] + x[j] for every class j, and where it counts: above 0 and j not the
    label (a nan is left out, as in PyTorch's kernel)."""
    picked = np.take_along_axis(rows, labels[:, None], 1)
    z = margin - picked + rows
    active = z > 0
    active[np.arange(labels.shape[0]), labels] = False
    return z, active


class MultiMarginLoss(Function):
    """Multi-class hinge loss: sum over j != y of max(0, margin - x[y] + x[j])**p / C."""

    _backward_name = "MultiMarginLossBackward0"

    @staticmethod
    def forward(ctx, x, target, p, margin, weight, reduction):
        ctx.save_for_backward(x, target, weight)
        ctx.config = (p, margin, reduction)
        dtype = x._data.dtype
        rows_count, classes = _check_margin_input(x)
        rows = x._data.reshape(rows_count, classes)
        labels = target._data.reshape(-1)
        z, active = _multi_margin_hinges(rows, labels, margin)
        terms = np.where(active, z if p == 1 else z * z, 0.0)
        if weight is not None:
            terms = terms * weight._data.astype(dtype, copy=False)[labels][:, None]
        loss = terms.sum(1) / classes
        per_row_shape = (rows_count,) if target.ndim > 0 else ()
        return _wrap(_reduce_rows(loss, reduction, per_row_shape, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        x, target, weight = ctx.saved_tensors
        grad = MultiMarginLossBackward.apply(grad_output, x, target, weight, *ctx.config)
        return grad, None, None, None, None, None


class MultiMarginLossBackward(Function):
    """multi_margin_loss's input gradient; PyTorch defines no derivative of it."""

    _backward_name = "lucid::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, grad_output, x, target, weight, p, margin, reduction):
        dtype = x._data.dtype
        rows_count, classes = _check_margin_input(x)
        rows = x._data.reshape(rows_count, classes)
        labels = target._data.reshape(-1)
        z, active = _multi_margin_hinges(rows, labels, margin)
        # d/dx[j] of the hinge is 1 (p = 1) or 2 z (p = 2), and minus their sum for x[label]
        slope = np.where(active, 1.0 if p == 1 else 2.0 * z, 0.0)
        if weight is not None:
            slope = slope * weight._data.astype(dtype, copy=False)[labels][:, None]
        grad = slope * _row_scale(grad_output, reduction, rows_count, classes, dtype)
        grad[np.arange(rows_count), labels] = -grad.sum(1)
        return _wrap(grad.astype(dtype, copy=False).reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_grad):
        raise RuntimeError("derivative for aten::multi_margin_loss_backward is not implemented")


@autocast_op
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss of class scores `input` (N, C) or (C,) at class `target`."""
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    check_number(margin, "multi_margin_loss", "margin", 4)
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if isinstance(weight, TensorBase):
        _check_not_differentiable("multi_margin_loss", "weight", weight)
    rows, classes = _check_margin_input(input)
    if target.ndim > 1 or target.numel() != rows:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{rows}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(
            f"inconsistent weight size, expected {classes} but got {list(weight.shape)}"
        )
    if input._data.dtype not in (np.float32, np.float64):
        # PyTorch's CPU kernel has no float16 or bfloat16 either
        raise not_implemented("multi_margin_loss_cpu_kernel", input._data.dtype)
    _check_long_target(target)
    labels = target._data
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise RuntimeError("target out of range")
    return MultiMarginLoss.apply(input, target, p, float(margin), weight, reduction)


def _multilabel_hinges(rows: np.ndarray, labels: np.ndarray) -> tuple:
    """For each row, its labels (up to the first negative entry) against every other class:
    1 - x[label] + x[j] (rows, positions, classes), where it counts (above 0, j no label,
    the position a label), and the safe label indices."""
    count, classes = rows.shape
    is_label_position = np.cumprod(labels >= 0, axis=1).astype(bool)
    # the labels are a prefix of each row: only the longest prefix's positions are kept, so
    # the hinges take (rows, labels, classes), not (rows, classes, classes)
    longest = int(is_label_position.sum(1).max()) if count else 0
    is_label_position, labels = is_label_position[:, :longest], labels[:, :longest]
    safe = np.where(is_label_position, labels, 0)
    is_target = np.zeros((count, classes + 1), bool)
    # positions past the labels write into a spare last column
    is_target[np.arange(count)[:, None], np.where(is_label_position, labels, classes)] = True
    is_target = is_target[:, :classes]
    picked = np.take_along_axis(rows, safe, 1)
    z = 1.0 - picked[:, :, None] + rows[:, None, :]
    active = (z > 0) & is_label_position[:, :, None] & ~is_target[:, None, :]
    return z, active, safe


class MultilabelMarginLoss(Function):
    """Multi-label hinge loss: each label's score against every non-label class's, over C."""

    _backward_name = "MultilabelMarginLossBackward0"

    @staticmethod
    def forward(ctx, x, target, reduction):
        ctx.save_for_backward(x, target)
        ctx.reduction = reduction
        dtype = x._data.dtype
        rows_count, classes = _check_margin_input(x)
        rows = x._data.reshape(rows_count, classes)
        z, active, _ = _multilabel_hinges(rows, target._data.reshape(rows_count, classes))
        loss = np.where(active, z, 0.0).sum((1, 2)) / classes
        per_row_shape = (rows_count,) if target.ndim > 1 else ()
        return _wrap(_reduce_rows(loss, reduction, per_row_shape, dtype))

    @staticmethod
    def backward(ctx, grad_output):
        x, target = ctx.saved_tensors
        return MultilabelMarginLossBackward.apply(grad_output, x, target, ctx.reduction), None, None


class MultilabelMarginLossBackward(Function):
    """multilabel_margin_loss's input gradient; PyTorch defines no derivative of it."""

    _backward_name = "lucid::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, grad_output, x, target, reduction):
        dtype = x._data.dtype
        rows_count, classes = _check_margin_input(x)
        rows = x._data.reshape(rows_count, classes)
        _, active, safe = _multilabel_hinges(rows, target._data.reshape(rows_count, classes))
        scale = _row_scale(grad_output, reduction, rows_count, classes, dtype)
        # each active hinge adds to its class j and takes from its label
        grad = active.sum(1) * scale
        np.add.at(grad, (np.arange(rows_count)[:, None], safe), -active.sum(2) * scale)
        return _wrap(grad.astype(dtype, copy=False).reshape(x._data.shape))

    @staticmethod
    def backward(ctx, grad_grad):
        raise RuntimeError(
            "derivative for aten::multilabel_margin_loss_backward is not implemented"
        )


@autocast_op
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label hinge loss; each target row lists class indices, ended by the first -1."""
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    rows, classes = _check_margin_input(input)
    if input.ndim <= 1:
        consistent = target.ndim <= 1 and target.numel() == classes
    else:
        consistent = target.ndim == 2 and tuple(target.shape) == (rows, classes)
    if not consistent:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    if input._data.dtype not in (np.float32, np.float64):
        # PyTorch's CPU kernel has no float16 or bfloat16 either
        raise not_implemented("multilabel_margin_loss_forward_out_frame", input._data.dtype)
    _check_long_target(target)
    labels = target._data
    if labels.size and (labels.min() < -1 or labels.max() >= classes):
        raise RuntimeError("argument #2 'target' is out of range")
    return MultilabelMarginLoss.apply(input, target, reduction)


# ---------------------------------------------------------- likelihoods
@autocast_op
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of `target` under Poisson(input), or Poisson(exp(input))."""
    check_number(eps, "poisson_nll_loss", "eps", 5, "float")
    check_tensors(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        # Stirling's approximation of log(target!), counted only for targets above 1
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + where(target <= 1, 0.0, stirling)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of `target` under N(input, var), without or with its constant.

    `var` may have the input's shape, lack its last dim, have one dim of size 1 where the
    input's differs, or be a float.
    """
    check_tensors(input, target)
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _wrap(np.full_like(input._data, var))
    else:
        check_tensors(var)
        if var._data.dtype.kind == "c":
            # NumPy orders complex numbers; PyTorch's var < 0 has no complex kernel
            raise not_implemented("lt_cpu", var._data.dtype)
        if np.any(var._data < 0):
            raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        mismatched = [v for i, v in zip(input.shape, var.shape) if i != v]
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(mismatched) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    # the clamp keeps log(var) finite; done without grad, so the gradient reaches var unclamped
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ triplets
def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6) -> Tensor:
    return (x1 - x2 + eps).norm(p, max(x1.ndim, x2.ndim, 1) - 1)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )


def _triplet_loss(
    anchor: Tensor, positive: Tensor, negative: Tensor, distance: Any, margin: float, swap: bool
) -> Tensor:
    positive_distance = distance(anchor, positive)
    negative_distance = distance(anchor, negative)
    if swap:
        # the positive may be closer to the negative than the anchor is: use that distance
        negative_distance = minimum(negative_distance, distance(positive, negative))
    return _hinge(margin + positive_distance - negative_distance)


@autocast_op
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""
    check_tensors(anchor, positive, negative)
    check_number(p, "triplet_margin_loss", "p", 5, "float")
    check_number(eps, "triplet_margin_loss", "eps", 6, "float")
    reduction = legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)

    def distance(x1: Tensor, x2: Tensor) -> Tensor:
        return _pairwise_distance(x1, x2, p, eps)

    return _reduce(_triplet_loss(anchor, positive, negative, distance, margin, swap), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Any = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_loss with any distance (default the pairwise 2-norm distance)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    check_tensors(anchor, positive, negative)
    _check_triplet_dims(anchor, positive, negative)
    distance = _pairwise_distance if distance_function is None else distance_function
    return _reduce(_triplet_loss(anchor, positive, negative, distance, margin, swap), reduction)


# ----------------------------------------------------------------------- CTC
# PyTorch's two ctc_loss overloads (lengths as int lists or as tensors), as its errors print them
_CTC_SIGNATURES = tuple(
    f"(Tensor log_probs, Tensor targets, {kind} input_lengths, {kind} target_lengths, int blank "
    "= 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)"
    for kind in ("tuple of ints", "Tensor")
)


def _check_ctc_arguments(log_probs: Tensor, targets: Tensor, input_lengths: Any,
                         target_lengths: Any, blank: Any, zero_infinity: Any) -> None:  # fmt: skip
    """PyTorch's TypeError for ctc_loss arguments that match neither overload: its parser
    marks every argument past the targets in the first, and the lengths only where they are no
    tensors in the second (the reduction shows as the int PyTorch passes)."""
    lengths = (input_lengths, target_lengths)
    as_tensors = all(isinstance(value, TensorBase) for value in lengths)
    as_lists = all(
        isinstance(value, list | tuple) and all(is_int(item) for item in value) for value in lengths
    )
    if (as_tensors or as_lists) and is_int(blank) and isinstance(zero_infinity, bool):
        return
    args = (log_probs, targets, *lengths, blank, 1, zero_infinity)
    got = ", ".join(_overload_type_name(arg) for arg in args)
    expected = ""
    for signature, tensors_match in zip(_CTC_SIGNATURES, (False, True)):
        marked = [_overload_type_name(arg, elements=True) for arg in args]
        for index in range(2, len(args)):
            if not (tensors_match and index < 4 and isinstance(args[index], TensorBase)):
                marked[index] = f"!{marked[index]}!"
        expected += (
            f"\n * {signature}\n      didn't match because some of the arguments have invalid "
            f"types: ({', '.join(marked)})"
        )
    raise TypeError(
        f"ctc_loss() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:{expected}\n"
    )


def _ctc_lengths(lengths: Any, name: str) -> np.ndarray:
    if isinstance(lengths, TensorBase):
        array = lengths._data
        if array.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return array.astype(np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _logaddexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log(exp(a) + exp(b) + exp(c)) as PyTorch's CTC kernel sums it: around the largest term,
    which counts as 0 when all three are -inf."""
    largest = np.maximum(a, b)
    np.maximum(largest, c, out=largest)
    np.copyto(largest, 0.0, where=largest == -np.inf)
    result = np.exp(a - largest)
    result += np.exp(b - largest)
    result += np.exp(c - largest)
    np.log(result, out=result)
    result += largest
    return result


class CtcLoss(Function):
    """Connectionist temporal classification: -log of the total probability of every
    alignment of each target with its input, by the forward (alpha) recursion in log space.

    The states of sample n are its target with a blank around every label (2 L_n + 1); the
    recursion runs over time, vectorised over samples and states.
    """

    _op_name = "ctc_loss"
    _backward_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, states, input_lengths, target_lengths, zero_infinity):
        lp = log_probs._data
        steps, batch, _ = lp.shape
        width = states.shape[1]
        # a label state may also be reached from two back, past a blank, unless that state
        # holds the same class (PyTorch's rule, which also decides for a label equal to blank)
        can_skip = np.zeros(states.shape, bool)
        can_skip[:, 2:] = states[:, 2:] != states[:, :-2]
        state_count = np.arange(width) < (2 * target_lengths + 1)[:, None]
        emissions = lp[:, np.arange(batch)[:, None], states]
        # two -inf columns in front: the states one and two back are slices of the row
        padded = np.full((steps, batch, width + 2), -np.inf, lp.dtype)
        alpha = padded[:, :, 2:]
        if steps:
            alpha[0, :, 0] = emissions[0, :, 0]
            if width > 1:
                alpha[0, :, 1] = np.where(target_lengths > 0, emissions[0, :, 1], -np.inf)
        for t in range(1, steps):
            previous = padded[t - 1]
            two_back = np.where(can_skip, previous[:, :-2], -np.inf)
            total = _logaddexp3(previous[:, 2:], previous[:, 1:-1], two_back)
            total += emissions[t]
            np.copyto(total, -np.inf, where=~(state_count & (t < input_lengths)[:, None]))
            alpha[t] = total
        nll = _ctc_end(alpha, input_lengths, target_lengths)
        ctx.save_for_backward(log_probs)
        ctx.config = (states, can_skip, input_lengths, target_lengths, zero_infinity)
        ctx.alpha, ctx.nll = alpha, nll
        return _wrap(nll.astype(lp.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_output):
        (log_probs,) = ctx.saved_tensors
        alpha, nll = ctx.alpha, ctx.nll
        grad = CtcLossBackward.apply(grad_output, log_probs, alpha, nll, *ctx.config)
        return grad, None, None, None, None


def _ctc_end(alpha: np.ndarray, input_lengths: np.ndarray, target_lengths: np.ndarray):
    """-log p(target | input): the alignments ending in the last label or the blank after it."""
    batch = alpha.shape[1]
    samples = np.arange(batch)
    last = np.maximum(input_lengths - 1, 0)
    final = alpha[last, samples] if alpha.shape[0] else np.full((batch, 1), -np.inf)
    end_blank = final[samples, 2 * target_lengths]
    end_label = np.where(
        target_lengths > 0, final[samples, np.maximum(2 * target_lengths - 1, 0)], -np.inf
    )
    nll = -np.logaddexp(end_blank, end_label)
    # no input steps: the empty target has probability 1, any other none
    return np.where(input_lengths == 0, np.where(target_lengths == 0, -0.0, np.inf), nll)


def _logsumexp_by_class(values: np.ndarray, states: np.ndarray, classes: int) -> np.ndarray:
    """log of the summed exp(values) (T, N, states) over the states of each class: (T, N, C),
    -inf for a class no state holds.

    The states of all samples are sorted by (sample, class) once, so each (sample, class) is
    one run that the reductions take at a time, around the run's largest value.
    """
    steps, batch, width = values.shape
    key = (np.arange(batch)[:, None] * classes + states).reshape(-1)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])))
    runs = sorted_key[starts]
    lengths = np.diff(np.append(starts, key.shape[0]))
    grouped = values.reshape(steps, batch * width)[:, order]
    largest = np.maximum.reduceat(grouped, starts, axis=1)
    np.copyto(largest, 0.0, where=largest == -np.inf)
    total = np.add.reduceat(np.exp(grouped - np.repeat(largest, lengths, axis=1)), starts, axis=1)
    result = np.full((steps, batch, classes), -np.inf, values.dtype)
    with np.errstate(divide="ignore"):
        # a run of -inf values (no alignment passes there) sums to 0: its log is -inf
        result[:, runs // classes, runs % classes] = np.log(total) + largest
    return result


class CtcLossBackward(Function):
    """ctc_loss's gradient from the backward (beta) recursion; PyTorch defines no derivative
    of it.

    As in PyTorch, the gradient is exp(log_probs) - p(alignments through (t, c)) / p(target),
    which is the gradient with respect to log_probs plus exp(log_probs): log_softmax's
    backward removes that term for normalised log_probs, so the gradient with respect to the
    logits is exact and matches PyTorch's to the last bit of the formula.
    """

    _backward_name = "lucid::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, grad_output, log_probs, alpha, nll, states, can_skip, input_lengths,
                target_lengths, zero_infinity):  # fmt: skip
        lp = log_probs._data
        steps, batch, classes = lp.shape
        width = states.shape[1]
        samples = np.arange(batch)
        emissions = lp[:, samples[:, None], states]
        state_count = np.arange(width) < (2 * target_lengths + 1)[:, None]
        # a state reaches the state two ahead when that one may skip back to it
        skip_ahead = np.zeros(states.shape, bool)
        skip_ahead[:, :-2] = can_skip[:, 2:]
        ends = np.zeros(states.shape, bool)
        ends[samples, 2 * target_lengths] = True
        ends[samples, np.maximum(2 * target_lengths - 1, 0)] |= target_lengths > 0
        # two -inf columns behind: the states one and two ahead are slices of the row
        padded = np.full((steps, batch, width + 2), -np.inf, lp.dtype)
        beta = padded[:, :, :-2]
        for t in range(steps - 1, -1, -1):
            if t + 1 < steps:
                following = padded[t + 1]
                two_ahead = np.where(skip_ahead, following[:, 2:], -np.inf)
                total = _logaddexp3(following[:, :-2], following[:, 1:-1], two_ahead)
                total += emissions[t]
            else:
                total = np.full(states.shape, -np.inf, lp.dtype)
            is_last = (t == input_lengths - 1)[:, None]
            total = np.where(is_last, np.where(ends, emissions[t], -np.inf), total)
            np.copyto(total, -np.inf, where=~(state_count & (t < input_lengths)[:, None]))
            beta[t] = total
        # log of the summed probability of the alignments through each (t, n, class)
        through = _logsumexp_by_class(alpha + beta, states, classes)
        # at a sample's last step PyTorch takes the last label's term in place of the final
        # blank's, not beside it, when that label is the blank itself (a target no valid
        # input has): kept, so such targets get PyTorch's gradient too
        last_label = np.maximum(2 * target_lengths - 1, 0)
        quirk = np.flatnonzero(
            (target_lengths > 0)
            & (input_lengths > 0)
            & (states[samples, last_label] == states[:, 0])
        )
        if quirk.size:
            step = input_lengths[quirk] - 1
            label_term = (
                alpha[step, quirk, last_label[quirk]] + beta[step, quirk, last_label[quirk]]
            )
            through[step, quirk, states[quirk, 0]] = label_term
        grad = np.exp(lp) - np.exp(through + nll[None, :, None] - lp)
        grad *= np.broadcast_to(grad_output._data, (batch,)).astype(lp.dtype)[None, :, None]
        keep = (np.arange(steps)[:, None] < input_lengths[None, :])[:, :, None]
        if zero_infinity:
            keep = keep & (nll != np.inf)[None, :, None]
        return _wrap(np.where(keep, grad, 0.0).astype(lp.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad_grad):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


def _ctc_states(
    targets: Tensor, target_lengths: np.ndarray, batch: int, classes: int, blank: int
) -> np.ndarray:
    """Each sample's target with a blank before, between and after its labels, padded with
    blanks to the longest: (batch, 2 * max(target_lengths) + 1)."""
    longest = int(target_lengths.max()) if batch else 0
    positions = np.arange(longest)
    is_label = positions < target_lengths[:, None]
    array = targets._data
    if array.ndim == 1:
        offsets = np.cumsum(target_lengths) - target_lengths
        flat = np.minimum(offsets[:, None] + positions, max(array.shape[0] - 1, 0))
        labels = array[flat] if array.size else np.zeros(flat.shape, np.int64)
    else:
        labels = array.reshape(array.shape[0], -1)[:, :longest]
    labels = np.where(is_label, labels, blank).astype(np.int64)
    outside = is_label & ((labels < 0) | (labels >= classes))
    if outside.any():
        raise IndexError(f"Target {labels[outside][0]} is out of bounds.")
    states = np.full((batch, 2 * longest + 1), blank, np.int64)
    states[:, 1::2] = labels
    return states


def _ctc_check(
    log_probs: Tensor, targets: Tensor, input_lengths: np.ndarray, target_lengths: np.ndarray
) -> None:
    context = "(while checking arguments for ctc_loss_allocate_outputs)"
    if log_probs.ndim != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for "
            f"argument #1 'log_probs' {context}"
        )
    steps, batch, _ = log_probs.shape
    if input_lengths.shape[0] != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.shape[0] != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for name, lengths in (("target_lengths", target_lengths), ("input_lengths", input_lengths)):
        if lengths.size and lengths.min() < 0:
            raise RuntimeError(
                f"Expected {name} to have value at least 0, but got value {lengths.min()} {context}"
            )
    if input_lengths.size and input_lengths.max() > steps:
        raise RuntimeError(
            f"Expected input_lengths to have value at most {steps}, but got value "
            f"{input_lengths.max()} {context}"
        )
    shape = targets.shape
    if targets.ndim == 1:
        total = int(target_lengths.sum())
        if shape[0] != total:
            raise RuntimeError(
                f"Expected tensor to have size {total} at dimension 0, but got size {shape[0]} "
                f"for argument #2 'targets' {context}"
            )
    else:
        longest = int(target_lengths.max()) if target_lengths.size else 0
        if targets.ndim < 2 or shape[1] < longest:
            size = shape[1] if targets.ndim >= 2 else 0
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                f"{size} for argument #2 'targets' {context}"
            )


@autocast_op
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss of `log_probs` (T, N, C) or (T, C).

    `targets` are padded (N, S) or concatenated (sum(target_lengths),); lengths are tensors,
    lists or tuples. 'mean' divides each loss by its target length, then averages.
    """
    check_tensors(log_probs, targets)
    _check_reduction_only(reduction)
    _check_ctc_arguments(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    input_array = _ctc_lengths(input_lengths, "input_lengths")
    target_array = _ctc_lengths(target_lengths, "target_lengths")
    if log_probs._data.dtype not in (np.float32, np.float64):
        # PyTorch's CPU kernel has no float16 or bfloat16 either
        raise not_implemented("ctc_loss_cpu", log_probs._data.dtype)
    batched = log_probs.ndim == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        if targets.ndim <= 1:
            targets = targets.reshape(1, -1)
    classes = log_probs.shape[-1]
    if blank < 0 or blank >= classes:
        raise RuntimeError("blank must be in label range")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    _ctc_check(log_probs, targets, input_array, target_array)
    states = _ctc_states(targets, target_array, log_probs.shape[1], classes, blank)
    loss = CtcLoss.apply(log_probs, states, input_array, target_array, zero_infinity)
    if zero_infinity:
        loss = where(loss == np.inf, 0.0, loss)
    if not batched:
        loss = loss.squeeze(0)
    if reduction == "mean":
        divisor = np.maximum(target_array, 1).astype(loss._data.dtype)
        return (loss / _wrap(divisor.reshape(loss.shape))).mean()
    return _reduce(loss, reduction)


# ------------------------------------------------------- linear + cross entropy
def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...).

    `linear_weight` is (C, in_features) or (C, d_1, ..., d_K, in_features) for a K-dim loss.
    PyTorch's `options` choose a chunked computation that saves memory; lucid computes the
    same loss unchunked whatever they are.
    """
    check_tensors(input, linear_weight, target)
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}"
        )
    batch_shape = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively"
        )
    classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}"
        )
    if out_features and not batch_shape:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batch_shape, classes, *out_features)
    chunkable = (
        reduction in ("mean", "sum", "none")
        and label_smoothing == 0.0
        and target._data.dtype == np.int64
        and not out_features
    )
    if chunkable and options is not None and type(options).__name__ != "LinearCrossEntropyOptions":
        # PyTorch reads the chunking settings from `options` only where it would chunk; the
        # options class lives in nn, above ops, so it is known here by name
        raise AttributeError(f"'{type(options).__name__}' object has no attribute '_adjust'")
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        # one linear map to every (class, position) pair, then the logits' own shape
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
