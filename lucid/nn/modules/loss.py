"""Loss modules: thin wrappers over the loss functions in lucid.nn.functional."""

from __future__ import annotations

import math
import warnings
from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.distance import PairwiseDistance
from lucid.nn.modules.linear import Linear
from lucid.nn.modules.module import Module
from lucid.ops.loss import legacy_reduction

__all__ = [
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss",
    "NLLLoss2d", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "PoissonNLLLoss",
    "GaussianNLLLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
    "LinearCrossEntropyLoss",
]  # fmt: skip


class _Loss(Module):
    """Base of the losses: resolves the reduction once, at construction."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = legacy_reduction(size_average, reduce, reduction, stacklevel=4)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class `weight`, kept as a buffer so it moves with the module."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum) absolute error."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum) squared error."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below `beta` (scaled by 1/beta), absolute error above it."""

    __constants__ = ["reduction"]

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below `delta`, delta-scaled absolute error above it."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices, given log-probabilities."""

    __constants__ = ["ignore_index", "reduction"]

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities."""

    __constants__ = ["reduction"]

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, with an optional weight on the positive class."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities `input` from `target`."""

    __constants__ = ["reduction"]

    def __init__(
        self,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineEmbeddingLoss(_Loss):
    """Pulls pairs together (target 1) or pushes them past `margin` apart (target -1)."""

    __constants__ = ["margin", "reduction"]

    def __init__(
        self,
        margin: float = 0.0,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class NLLLoss2d(NLLLoss):
    """NLLLoss under its former name for 2-D inputs (NLLLoss takes any number of dims)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
            "replacement.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class MarginRankingLoss(_Loss):
    """Ranks input1 above input2 where target is 1 (below where -1) by at least `margin`."""

    __constants__ = ["margin", "reduction"]

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class HingeEmbeddingLoss(_Loss):
    """The distance where target is 1, its shortfall from `margin` where target is -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(
        self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss for targets 1 and -1."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss against 0/1 targets, averaged over the classes."""

    __constants__ = ["reduction"]

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss of class scores at a class index."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D "
                "instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(
            input,
            target,
            p=self.p,
            margin=self.margin,
            weight=self.weight,
            reduction=self.reduction,
        )


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss; each target row lists class indices, ended by the first -1."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson-distributed target."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of a target under a Gaussian of predicted mean and variance."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """Keeps the anchor closer to the positive than to the negative by `margin` (p-norm)."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Loss):
    """TripletMarginLoss with any distance function (default the pairwise 2-norm distance)."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(
        self,
        *,
        distance_function: Any = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function = (
            distance_function if distance_function is not None else PairwiseDistance()
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


class CTCLoss(_Loss):
    """Connectionist temporal classification loss."""

    __constants__ = ["blank", "reduction"]

    def __init__(
        self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
    ) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(
        self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any
    ) -> Tensor:
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of a linear map of the input (its weight a parameter of the loss).

    The map is a `Linear` of in_features to `num_classes * prod(out_features)` outputs, reshaped
    to `(num_classes, *out_features)` for a K-dim loss. `options` (PyTorch's chunking) is kept
    and passed on; lucid computes the same loss unchunked.
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index", "label_smoothing"]

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device: Any = None,
        dtype: Any = None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: Any = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear's weight is 2-D: the (num_classes, *out_features) outputs are flattened
        # here and unflattened in forward
        outputs = math.prod(out_features, start=num_classes)
        self.linear = Linear(in_features, outputs, bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        linear_weight = self.linear.weight.reshape((*shape, self.linear.in_features))
        linear_bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(
            input,
            linear_weight,
            target,
            linear_bias=linear_bias,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
