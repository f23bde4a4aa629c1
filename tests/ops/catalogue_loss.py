"""Op catalogue rows: the loss family."""

from __future__ import annotations

import functools
import itertools

import numpy as np

from lucid.ops import loss
from lucid.ops.activations import log_softmax
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import functional as torch_functional
from tests.torch_oracle import torch

REDUCTIONS = ("mean", "sum", "none")


def _pair(shape: tuple[int, ...]):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.uniform(-2, 2, shape).astype(dtype), rng.uniform(-2, 2, shape).astype(dtype)]

    return make


def _logits_and_classes(shape: tuple[int, ...], ignore: bool = False):
    """Logits (N, C, ...) and int64 class targets (N, ...), the second one ignored if asked."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        target = rng.integers(0, shape[1], (shape[0], *shape[2:]))
        if ignore:
            target.reshape(-1)[1] = -100
        return [rng.uniform(-3, 3, shape).astype(dtype), target]

    return make


def _logits_and_probabilities(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(-3, 3, (4, 5)).astype(dtype), rng.dirichlet(np.ones(5), 4).astype(dtype)]


def _probabilities_pair(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(0.05, 0.95, (3, 4)).astype(dtype), rng.uniform(0, 1, (3, 4)).astype(dtype)]


def _logits_and_binary(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(-4, 4, (3, 4)).astype(dtype), rng.uniform(0, 1, (3, 4)).astype(dtype)]


def _log_probabilities_pair(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    input = np.log(rng.dirichlet(np.ones(5), 3)).astype(dtype)
    return [input, rng.dirichlet(np.ones(5), 3).astype(dtype)]


def _embedding_pair(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [
        rng.uniform(-2, 2, (4, 3)).astype(dtype),
        rng.uniform(-2, 2, (4, 3)).astype(dtype),
        np.array([1, -1, 1, -1], np.int64),
    ]


def _weight_tensors(weight: np.ndarray):
    """lucid and torch calls with a fixed per-class weight (cast to the input's dtype)."""
    import lucid

    def lucid_op(name: str, **kwargs):
        def call(input, target):
            w = lucid.from_numpy(weight.astype(input.detach().numpy().dtype))
            return getattr(loss, name)(input, target, weight=w, **kwargs)

        return call

    def torch_op(name: str, **kwargs):
        def call(input, target):
            w = torch.from_numpy(weight).to(input.dtype)
            return getattr(torch_functional, name)(input, target, weight=w, **kwargs)

        return call

    return lucid_op, torch_op


_CLASS_WEIGHT = np.array([0.5, 1.0, 2.0, 0.25, 1.5])
_lucid_weighted, _torch_weighted = _weight_tensors(_CLASS_WEIGHT)

# PyTorch's float16 mse_loss backward rounds 2 * (input - target) to float16 before the
# incoming gradient scales it, so a difference past 32752 gives inf there (-40000 against 0
# with a gradient of 0.01: -inf, where lucid gives the finite -800).
_MSE_FLOAT16 = "PyTorch's float16 mse_loss backward overflows 2 * (input - target) first"

ROWS: list[OpCase] = []
for reduction in REDUCTIONS:
    options = {"reduction": reduction}
    ROWS += [
        OpCase(f"mse_loss_{reduction}", loss.mse_loss, torch_functional.mse_loss,
               make_inputs=_pair((3, 4)), kwargs=options,
               float16_extremes_skip=_MSE_FLOAT16),
        OpCase(f"l1_loss_{reduction}", loss.l1_loss, torch_functional.l1_loss,
               make_inputs=_pair((3, 4)), kwargs=options),
        OpCase(f"smooth_l1_loss_{reduction}", loss.smooth_l1_loss,
               torch_functional.smooth_l1_loss, make_inputs=_pair((3, 4)),
               kwargs={**options, "beta": 0.7}),
        OpCase(f"huber_loss_{reduction}", loss.huber_loss, torch_functional.huber_loss,
               make_inputs=_pair((3, 4)), kwargs={**options, "delta": 1.3}),
        OpCase(f"cross_entropy_{reduction}", loss.cross_entropy, torch_functional.cross_entropy,
               make_inputs=_logits_and_classes((4, 5)), grad_inputs=[0], kwargs=options),
        OpCase(f"cross_entropy_nd_ignore_{reduction}", loss.cross_entropy,
               torch_functional.cross_entropy,
               make_inputs=_logits_and_classes((2, 5, 3), ignore=True), grad_inputs=[0],
               kwargs=options),
        OpCase(f"cross_entropy_smoothing_{reduction}", loss.cross_entropy,
               torch_functional.cross_entropy, make_inputs=_logits_and_classes((4, 5), True),
               grad_inputs=[0], kwargs={**options, "label_smoothing": 0.2}),
        OpCase(f"cross_entropy_weight_smoothing_{reduction}",
               _lucid_weighted("cross_entropy", label_smoothing=0.1, **options),
               _torch_weighted("cross_entropy", label_smoothing=0.1, **options),
               make_inputs=_logits_and_classes((4, 5), True), grad_inputs=[0]),
        OpCase(f"cross_entropy_probabilities_{reduction}", loss.cross_entropy,
               torch_functional.cross_entropy, make_inputs=_logits_and_probabilities,
               kwargs={**options, "label_smoothing": 0.1}),
        OpCase(f"nll_loss_{reduction}", loss.nll_loss, torch_functional.nll_loss,
               make_inputs=_logits_and_classes((2, 5, 3), ignore=True), grad_inputs=[0],
               kwargs=options),
        OpCase(f"nll_loss_weight_{reduction}", _lucid_weighted("nll_loss", **options),
               _torch_weighted("nll_loss", **options),
               make_inputs=_logits_and_classes((4, 5), True), grad_inputs=[0]),
        OpCase(f"binary_cross_entropy_{reduction}", loss.binary_cross_entropy,
               torch_functional.binary_cross_entropy, make_inputs=_probabilities_pair,
               kwargs=options),
        OpCase(f"binary_cross_entropy_with_logits_{reduction}",
               loss.binary_cross_entropy_with_logits,
               torch_functional.binary_cross_entropy_with_logits,
               make_inputs=_logits_and_binary, kwargs=options),
        OpCase(f"kl_div_{reduction}", loss.kl_div, torch_functional.kl_div,
               make_inputs=_log_probabilities_pair, grad_inputs=[0], kwargs=options),
        OpCase(f"kl_div_log_target_{reduction}", loss.kl_div, torch_functional.kl_div,
               make_inputs=_log_probabilities_pair, kwargs={**options, "log_target": True}),
        OpCase(f"cosine_embedding_loss_{reduction}", loss.cosine_embedding_loss,
               torch_functional.cosine_embedding_loss, make_inputs=_embedding_pair,
               grad_inputs=[0, 1], kwargs={**options, "margin": 0.2}),
    ]  # fmt: skip
ROWS.append(
    OpCase("kl_div_batchmean", loss.kl_div, torch_functional.kl_div,
           make_inputs=_log_probabilities_pair, grad_inputs=[0],
           kwargs={"reduction": "batchmean"})
)  # fmt: skip


# ------------------------------------------------------------- issue 17: the other losses
def _reduced(loss_array: np.ndarray, reduction: str = "mean") -> np.ndarray:
    if reduction == "mean":
        return loss_array.mean()
    if reduction == "sum":
        return loss_array.sum()
    return loss_array


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def _with_signs(count: int, shape: tuple[int, ...] = (3, 4)):
    """`count` float inputs of `shape` and a float target of ±1 in that shape."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        inputs = [rng.uniform(-2, 2, shape).astype(dtype) for _ in range(count)]
        return [*inputs, rng.choice([-1.0, 1.0], shape).astype(dtype)]

    return make


def _margin_ranking_reference(a, b, target, margin=0.0, reduction="mean"):
    return _reduced(np.maximum(0.0, -target * (a - b) + margin), reduction)


def _hinge_embedding_reference(x, target, margin=1.0, reduction="mean"):
    loss = np.where(target != 1, np.maximum(0.0, margin - x), 0.0)
    return _reduced(loss + np.where(target != -1, x, 0.0), reduction)


def _soft_margin_reference(x, target, reduction="mean"):
    return _reduced(np.log1p(np.exp(-target * x)), reduction)


def _scores_and_labels(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(-2, 2, (4, 5)).astype(dtype), rng.integers(0, 2, (4, 5)).astype(dtype)]


def _multilabel_soft_margin_reference(x, target, reduction="mean", weight=None):
    loss = -(target * _log_sigmoid(x) + (1 - target) * _log_sigmoid(-x))
    if weight is not None:
        loss = loss * weight
    return _reduced(loss.mean(-1), reduction)


def _scores_and_class(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(-1, 1, (4, 5)).astype(dtype), rng.integers(0, 5, 4)]


def _multi_margin_reference(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    rows = x.reshape(-1, x.shape[-1])
    losses = []
    for row, label in zip(rows, target.reshape(-1)):
        total = 0.0
        for j, score in enumerate(row):
            if j != label:
                total += max(0.0, margin - row[label] + score) ** p
        scale = 1.0 if weight is None else weight[label]
        losses.append(scale * total / row.shape[0])
    return _reduced(np.array(losses), reduction)


def _scores_and_label_lists(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    """Label lists ended by -1 (entries after it are ignored), one list full, one empty."""
    target = np.array([[3, 0, -1, 1, 2], [1, 1, 4, -1, 0], [0, 1, 2, 3, 4], [-1, 2, 2, 0, 1]])
    return [rng.uniform(-1, 1, (4, 5)).astype(dtype), target]


def _multilabel_margin_reference(x, target, reduction="mean"):
    losses = []
    for row, labels in zip(x.reshape(-1, x.shape[-1]), target.reshape(-1, x.shape[-1])):
        listed = list(itertools.takewhile(lambda label: label >= 0, labels))
        total = 0.0
        for label in listed:
            for j, score in enumerate(row):
                if j not in listed:
                    total += max(0.0, 1.0 - row[label] + score)
        losses.append(total / row.shape[0])
    return _reduced(np.array(losses), reduction)


def _rates_and_counts(positive: bool):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        low = 0.1 if positive else -2.0
        # counts around 1 (Stirling's term starts there), none within reach of gradcheck's step
        counts = rng.choice([0.0, 0.5, 1.5, 2.0, 3.5], (3, 4)) + rng.uniform(0, 0.25, (3, 4))
        return [rng.uniform(low, 2, (3, 4)).astype(dtype), counts.astype(dtype)]

    return make


def _poisson_nll_reference(x, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    if log_input:
        loss = np.exp(x) - target * x
    else:
        loss = x - target * np.log(x + eps)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = target * np.log(target) - target + 0.5 * np.log(2 * np.pi * target)
        loss = loss + np.where(target <= 1, 0.0, stirling)
    return _reduced(loss, reduction)


def _means_and_variances(var_shape: tuple[int, ...]):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        x, target = rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(-2, 2, (2, 3, 4))
        return [x.astype(dtype), target.astype(dtype), rng.uniform(0.2, 2, var_shape).astype(dtype)]

    return make


def _gaussian_nll_reference(x, target, var, full=False, eps=1e-6, reduction="mean"):
    if var.shape == x.shape[:-1]:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * np.log(2 * np.pi)
    return _reduced(loss, reduction)


def _distance(a, b, p=2.0, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1.0 / p)


def _triplet_reference(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                       reduction="mean"):  # fmt: skip
    negative_distance = _distance(anchor, negative, p, eps)
    if swap:
        negative_distance = np.minimum(negative_distance, _distance(positive, negative, p, eps))
    loss = np.maximum(0.0, margin + _distance(anchor, positive, p, eps) - negative_distance)
    return _reduced(loss, reduction)


def _triplet_with_distance_reference(anchor, positive, negative, margin=1.0, swap=False,
                                     reduction="mean"):  # fmt: skip
    return _triplet_reference(anchor, positive, negative, margin, swap=swap, reduction=reduction)


# CTC: logits (T, N, C) -> log_softmax -> ctc_loss; the reference sums the probability of
# every path of C**T that collapses (repeats merged, then blanks dropped) to the target
_CTC_STEPS, _CTC_CLASSES = 5, 5
_CTC_TARGETS = np.array([[1, 2, 0], [3, 3, 1], [2, 0, 0]])
_CTC_INPUT_LENGTHS = np.array([5, 5, 3])
_CTC_TARGET_LENGTHS = np.array([2, 3, 1])


def _ctc_inputs(
    concatenated: bool = False, unbatched: bool = False, input_lengths=_CTC_INPUT_LENGTHS
):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        if unbatched:
            logits = rng.uniform(-2, 2, (_CTC_STEPS, _CTC_CLASSES)).astype(dtype)
            return [logits, np.array([3, 3, 1]), np.array(5), np.array(3)]
        logits = rng.uniform(-2, 2, (_CTC_STEPS, 3, _CTC_CLASSES)).astype(dtype)
        targets = _CTC_TARGETS
        if concatenated:
            targets = np.concatenate([row[:n] for row, n in zip(targets, _CTC_TARGET_LENGTHS)])
        return [logits, targets, input_lengths, _CTC_TARGET_LENGTHS]

    return make


def _ctc_path_nll(log_probs: np.ndarray, target: list[int], blank: int) -> float:
    total = -np.inf
    steps, classes = log_probs.shape
    for path in itertools.product(range(classes), repeat=steps):
        merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
        if [c for c in merged if c != blank] == target:
            total = np.logaddexp(total, log_probs[np.arange(steps), list(path)].sum())
    return -total


def _ctc_reference(logits, targets, input_lengths, target_lengths, blank=0, reduction="mean",
                   zero_infinity=False):  # fmt: skip
    if logits.ndim == 2:
        logits, targets = logits[:, None], targets.reshape(1, -1)
        input_lengths, target_lengths = input_lengths.reshape(1), target_lengths.reshape(1)
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    offsets = np.cumsum(target_lengths) - target_lengths
    losses = []
    for n, (steps, length) in enumerate(zip(input_lengths, target_lengths)):
        if targets.ndim == 1:
            target = targets[offsets[n] : offsets[n] + length]
        else:
            target = targets[n, :length]
        losses.append(_ctc_path_nll(log_probs[:steps, n], target.tolist(), blank))
    losses = np.array(losses)
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if reduction == "mean":
        return (losses / np.maximum(target_lengths, 1)).mean()
    if logits.shape[1] == 1 and reduction == "none":
        return losses.reshape(())
    return _reduced(losses, reduction)


def _ctc_op(logits, targets, input_lengths, target_lengths, **kwargs):
    log_probs = log_softmax(logits, logits.ndim - 1)
    return loss.ctc_loss(log_probs, targets, input_lengths, target_lengths, **kwargs)


def _torch_ctc_op(logits, targets, input_lengths, target_lengths, **kwargs):
    log_probs = logits.log_softmax(logits.ndim - 1)
    return torch_functional.ctc_loss(log_probs, targets, input_lengths, target_lengths, **kwargs)


_MARGIN_ERRORS = [
    ErrorInput(
        [(3, 4), (4,), (4,)],
        RuntimeError,
        r"margin_ranking_loss : All input tensors should have same dimension but got "
        r"sizes: input1: lucid\.Size\(\[3, 4\]\), input2: lucid\.Size\(\[4\]\)",
    ),
    ErrorInput(
        [(3, 4), (2, 4), (3, 4)],
        RuntimeError,
        r"The size of tensor a \(3\) must match the size of tensor b \(2\)",
    ),
]
_SOFT_MARGIN_ERRORS = [
    ErrorInput(
        [np.array([1, 2]), np.array([1, -1])],
        RuntimeError,
        "^result type Float can't be cast to the desired output type Long$",
    ),
    ErrorInput(
        [np.array([True, False]), np.array([1, -1])],
        RuntimeError,
        "^Negation, the `-` operator, on a bool tensor is not supported",
    ),
    ErrorInput(
        [(4,), (2, 4)],
        RuntimeError,
        r"^output with shape \[4\] doesn't match the broadcast shape \[2, 4\]$",
    ),
    ErrorInput(
        [(2, 4), (3,)],
        RuntimeError,
        r"The size of tensor a \(4\) must match the size of tensor b \(3\)",
    ),
]
_MULTI_MARGIN_ERRORS = [
    ErrorInput([(2, 4), np.array([1, 2, 3])], RuntimeError,
               r"target tensor should be 1-D with size equal to the number of input samples "
               r"\(batch size\)\. Expected target size \[2\], but got \[3\]\. Input has shape "
               r"\[2, 4\]\."),
    ErrorInput([(2, 4), np.array([1, 4])], RuntimeError, "^target out of range$"),
    ErrorInput([(2, 4, 3), np.array([1, 2])], RuntimeError,
               r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
               r"\[2, 4, 3\]"),
    ErrorInput([(2, 0), np.array([0, 0])], RuntimeError, r"but got: \[2, 0\]"),
    ErrorInput([(2, 4), np.array([1.0, 2.0])], RuntimeError,
               "expected scalar type Long but found Double"),
    ErrorInput([(2, 4), np.array([1, 2])], ValueError, "^only p == 1 and p == 2 supported$",
               {"p": 3}),
    ErrorInput([(2, 4), np.array([1, 2]), 1, 1.0, (3,)], RuntimeError,
               r"inconsistent weight size, expected 4 but got \[3\]"),
    ErrorInput([(2, 4), np.array([1, 2]), 1, 1.0, (4, 1)], ValueError,
               "^weight must be one-dimensional$"),
]  # fmt: skip
_MULTILABEL_MARGIN_ERRORS = [
    ErrorInput([(2, 4), np.array([[1, 2, 3]])], RuntimeError,
               r"inconsistent target size: \[1, 3\] for input of size: \[2, 4\]"),
    ErrorInput([(2, 4), np.array([[1, 5, -1, 0], [0, -1, 0, 0]])], RuntimeError,
               "argument #2 'target' is out of range"),
    ErrorInput([(2, 4), np.array([[1, -2, -1, 0], [0, -1, 0, 0]])], RuntimeError,
               "argument #2 'target' is out of range"),
    ErrorInput([(2, 4), (2, 4)], RuntimeError, "expected scalar type Long but found Double"),
]  # fmt: skip
_CTC_CALL = [(5, 2, 4), np.array([[1, 2], [3, 3]]), np.array([5, 5]), np.array([2, 2])]
_CTC_CONTEXT = r" \(while checking arguments for ctc_loss_allocate_outputs\)"
_CTC_ERRORS = [
    ErrorInput(_CTC_CALL, RuntimeError, "^blank must be in label range$", {"blank": 4}),
    ErrorInput([*_CTC_CALL[:2], np.array([5]), _CTC_CALL[3]], RuntimeError,
               "^input_lengths must be of size batch_size$"),
    ErrorInput([*_CTC_CALL[:3], np.array([2, 2, 2])], RuntimeError,
               "^target_lengths must be of size batch_size$"),
    ErrorInput([*_CTC_CALL[:2], np.array([6, 5]), _CTC_CALL[3]], RuntimeError,
               "^Expected input_lengths to have value at most 5, but got value 6" + _CTC_CONTEXT),
    ErrorInput([*_CTC_CALL[:2], np.array([-1, 5]), _CTC_CALL[3]], RuntimeError,
               "^Expected input_lengths to have value at least 0, but got value -1"),
    ErrorInput([*_CTC_CALL[:3], np.array([3, 2])], RuntimeError,
               r"^Expected tensor to have size at least 3 at dimension 1, but got size 2 for "
               r"argument #2 'targets'" + _CTC_CONTEXT),
    ErrorInput([_CTC_CALL[0], np.array([1, 2, 3]), *_CTC_CALL[2:]], RuntimeError,
               r"^Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 "
               r"'targets'"),
    ErrorInput([(5, 2, 4, 1), *_CTC_CALL[1:]], RuntimeError,
               r"^Expected 3-dimensional tensor, but got 5-dimensional tensor for argument #1 "
               r"'log_probs'"),
    ErrorInput([(0, 2, 4), *_CTC_CALL[1:]], RuntimeError, "^log_probs tensor must not be empty$"),
    ErrorInput([*_CTC_CALL[:2], np.array([5.0, 5.0]), _CTC_CALL[3]], RuntimeError,
               "^input_lengths must be integral$"),
    ErrorInput(_CTC_CALL, ValueError, "^bad is not a valid value for reduction$",
               {"reduction": "bad"}),
]  # fmt: skip
_TRIPLET_ERRORS = [
    ErrorInput([(2, 4), (4,), (2, 4)], RuntimeError,
               r"The anchor, positive, and negative tensors are expected to have the same number "
               r"of dimensions, but got: anchor 2D, positive 1D, and negative 2D inputs"),
    ErrorInput([(2, 4), (2, 4), (2, 4)], ValueError, "^margin must be greater than 0, got 0$",
               {"margin": 0}),
]  # fmt: skip
_GAUSSIAN_ERRORS = [
    ErrorInput([(2, 4), (2, 4), np.full((3, 4), 0.5)], ValueError, "^var is of incorrect size$"),
    ErrorInput([(2, 4), (2, 4), np.full((2, 4), -0.5)], ValueError,
               "^var has negative entry/entries$"),
    ErrorInput([(2, 4), (2, 4), -0.5], ValueError, "^var has negative entry/entries$"),
    ErrorInput([(2, 4), (2, 4), np.full((2, 4), 0.5)], ValueError, "^bad is not valid$",
               {"reduction": "bad"}),
]  # fmt: skip

for reduction in REDUCTIONS:
    options = {"reduction": reduction}
    ROWS += [
        OpCase(f"margin_ranking_loss_{reduction}", loss.margin_ranking_loss,
               torch_functional.margin_ranking_loss, _margin_ranking_reference,
               make_inputs=_with_signs(2), kwargs={**options, "margin": 0.3},
               error_inputs=_MARGIN_ERRORS if reduction == "mean" else ()),
        OpCase(f"hinge_embedding_loss_{reduction}", loss.hinge_embedding_loss,
               torch_functional.hinge_embedding_loss, _hinge_embedding_reference,
               make_inputs=_with_signs(1), grad_inputs=[0], kwargs={**options, "margin": 0.5}),
        OpCase(f"soft_margin_loss_{reduction}", loss.soft_margin_loss,
               torch_functional.soft_margin_loss, _soft_margin_reference,
               make_inputs=_with_signs(1), grad_inputs=[0], kwargs=options,
               error_inputs=_SOFT_MARGIN_ERRORS if reduction == "mean" else ()),
        OpCase(f"multilabel_soft_margin_loss_{reduction}", loss.multilabel_soft_margin_loss,
               torch_functional.multilabel_soft_margin_loss, _multilabel_soft_margin_reference,
               make_inputs=_scores_and_labels, kwargs=options),
        OpCase(f"multilabel_soft_margin_loss_weight_{reduction}",
               _lucid_weighted("multilabel_soft_margin_loss", **options),
               _torch_weighted("multilabel_soft_margin_loss", **options),
               functools.partial(_multilabel_soft_margin_reference, weight=_CLASS_WEIGHT,
                                 reduction=reduction),
               make_inputs=_scores_and_labels),
        OpCase(f"multi_margin_loss_{reduction}", loss.multi_margin_loss,
               torch_functional.multi_margin_loss, _multi_margin_reference,
               make_inputs=_scores_and_class, grad_inputs=[0], gradgrad=False, kwargs=options,
               error_inputs=_MULTI_MARGIN_ERRORS if reduction == "mean" else ()),
        OpCase(f"multi_margin_loss_p2_weight_{reduction}",
               _lucid_weighted("multi_margin_loss", p=2, margin=0.7, **options),
               _torch_weighted("multi_margin_loss", p=2, margin=0.7, **options),
               functools.partial(_multi_margin_reference, p=2, margin=0.7, weight=_CLASS_WEIGHT,
                                 reduction=reduction),
               make_inputs=_scores_and_class, grad_inputs=[0], gradgrad=False),
        OpCase(f"multilabel_margin_loss_{reduction}", loss.multilabel_margin_loss,
               torch_functional.multilabel_margin_loss, _multilabel_margin_reference,
               make_inputs=_scores_and_label_lists, grad_inputs=[0], gradgrad=False,
               kwargs=options,
               error_inputs=_MULTILABEL_MARGIN_ERRORS if reduction == "mean" else ()),
        OpCase(f"poisson_nll_loss_{reduction}", loss.poisson_nll_loss,
               torch_functional.poisson_nll_loss, _poisson_nll_reference,
               make_inputs=_rates_and_counts(False), kwargs=options),
        OpCase(f"poisson_nll_loss_rates_full_{reduction}", loss.poisson_nll_loss,
               torch_functional.poisson_nll_loss, _poisson_nll_reference,
               make_inputs=_rates_and_counts(True),
               kwargs={**options, "log_input": False, "full": True}),
        OpCase(f"gaussian_nll_loss_{reduction}", loss.gaussian_nll_loss,
               torch_functional.gaussian_nll_loss, _gaussian_nll_reference,
               make_inputs=_means_and_variances((2, 3, 4)), kwargs=options,
               error_inputs=_GAUSSIAN_ERRORS if reduction == "mean" else ()),
        OpCase(f"gaussian_nll_loss_shared_var_full_{reduction}", loss.gaussian_nll_loss,
               torch_functional.gaussian_nll_loss, _gaussian_nll_reference,
               make_inputs=_means_and_variances((2, 3)), kwargs={**options, "full": True}),
        OpCase(f"gaussian_nll_loss_var_dim_of_one_{reduction}", loss.gaussian_nll_loss,
               torch_functional.gaussian_nll_loss, _gaussian_nll_reference,
               make_inputs=_means_and_variances((2, 1, 4)), kwargs=options),
        OpCase(f"triplet_margin_loss_{reduction}", loss.triplet_margin_loss,
               torch_functional.triplet_margin_loss, _triplet_reference,
               shapes=[(3, 4), (3, 4), (3, 4)], kwargs={**options, "margin": 2.0}, sums=True,
               error_inputs=_TRIPLET_ERRORS if reduction == "mean" else ()),
        OpCase(f"triplet_margin_loss_swap_p3_{reduction}", loss.triplet_margin_loss,
               torch_functional.triplet_margin_loss, _triplet_reference,
               shapes=[(3, 4), (3, 4), (3, 4)], sums=True,
               kwargs={**options, "margin": 1.5, "p": 3.0, "swap": True}),
        OpCase(f"triplet_margin_with_distance_loss_{reduction}",
               loss.triplet_margin_with_distance_loss,
               torch_functional.triplet_margin_with_distance_loss,
               _triplet_with_distance_reference, shapes=[(3, 4), (3, 4), (3, 4)], sums=True,
               kwargs={**options, "margin": 2.0, "swap": True}),
        OpCase(f"ctc_loss_{reduction}", _ctc_op, _torch_ctc_op, _ctc_reference,
               make_inputs=_ctc_inputs(), grad_inputs=[0], gradgrad=False, kwargs=options,
               error_inputs=_CTC_ERRORS if reduction == "mean" else ()),
        OpCase(f"ctc_loss_concatenated_blank_{reduction}", _ctc_op, _torch_ctc_op,
               _ctc_reference, make_inputs=_ctc_inputs(concatenated=True), grad_inputs=[0],
               gradgrad=False, kwargs={**options, "blank": 4}),
        OpCase(f"ctc_loss_unbatched_{reduction}", _ctc_op, _torch_ctc_op, _ctc_reference,
               make_inputs=_ctc_inputs(unbatched=True), grad_inputs=[0], gradgrad=False,
               kwargs=options),
    ]  # fmt: skip
ROWS.append(
    # sample 2's target (3, 3, 1) needs 4 steps and gets 3: its infinite loss is zeroed
    OpCase("ctc_loss_zero_infinity", _ctc_op, _torch_ctc_op, _ctc_reference,
           make_inputs=_ctc_inputs(input_lengths=np.array([5, 3, 3])), grad_inputs=[0],
           gradgrad=False, kwargs={"reduction": "sum", "zero_infinity": True, "blank": 4})
)  # fmt: skip


# linear_cross_entropy: input (N, F) or (F,), linear_weight (C, [d,] F), class-index or
# probability targets
def _features_and_classes(batch: tuple[int, ...], out_features: tuple[int, ...] = (),
                          bias: bool = False, probabilities: bool = False):  # fmt: skip
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = [
            rng.uniform(-1, 1, (*batch, 3)).astype(dtype),
            rng.uniform(-1, 1, (5, *out_features, 3)).astype(dtype),
        ]
        if probabilities:
            target = rng.dirichlet(np.ones(5), batch).astype(dtype)
        else:
            target = rng.integers(0, 5, (*batch, *out_features))
            if batch:
                target.reshape(-1)[0] = -100
        arrays.append(target)
        if bias:
            arrays.append(rng.uniform(-1, 1, (5, *out_features)).astype(dtype))
        return arrays

    return make


def _linear_cross_entropy_reference(input, linear_weight, target, linear_bias=None,
                                    reduction="mean", ignore_index=None):  # fmt: skip
    logits = np.tensordot(input, linear_weight, axes=([-1], [-1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    class_dim = 0 if input.ndim == 1 else 1
    shifted = logits - logits.max(class_dim, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(class_dim, keepdims=True))
    if target.dtype.kind == "f":
        losses = -(log_probs * target).sum(class_dim)
        return _reduced(losses, reduction)
    ignored = target == (-100 if ignore_index is None else ignore_index)
    picked = np.take_along_axis(
        log_probs, np.expand_dims(np.where(ignored, 0, target), class_dim), class_dim
    ).squeeze(class_dim)
    losses = np.where(ignored, 0.0, -picked)
    if reduction == "mean":
        return losses.sum() / (~ignored).sum()
    return _reduced(losses, reduction)


def _with_bias(function):
    def call(input, linear_weight, target, linear_bias, **kwargs):
        return function(input, linear_weight, target, linear_bias=linear_bias, **kwargs)

    return call


_LINEAR_CROSS_ENTROPY_ERRORS = [
    ErrorInput([(2, 2, 3), (5, 3), np.array([0, 1])], RuntimeError,
               "^expected input with dimensionality 1 or 2, got 3$"),
    ErrorInput([(2, 3), (3,), np.array([0, 1])], RuntimeError,
               "^expected linear_weight with dimensionality at least 2, got 1$"),
    ErrorInput([(2, 3), (5, 4), np.array([0, 1])], RuntimeError,
               r"^expected equal input and linear_weight last dimensions \(in_features\), got 3 "
               r"and 4, respectively$"),
    ErrorInput([(3,), (5, 2, 3), np.array([0, 1])], RuntimeError,
               r"^K-dimensional loss defined by linear_weight shape \(5, 2, 3\) requires batched "
               r"input, \(N, 3\), got unbatched input with shape \(3,\)$"),
    ErrorInput([(2, 3), (5, 3), (2, 5)], RuntimeError,
               "^ignore_index cannot be specified when target contains probabilities$",
               {"ignore_index": 1}),
]  # fmt: skip
for reduction in REDUCTIONS:
    options = {"reduction": reduction}
    ROWS += [
        OpCase(f"linear_cross_entropy_{reduction}", loss.linear_cross_entropy,
               torch_functional.linear_cross_entropy, _linear_cross_entropy_reference,
               make_inputs=_features_and_classes((4,)), grad_inputs=[0, 1], kwargs=options,
               sums=True,
               error_inputs=_LINEAR_CROSS_ENTROPY_ERRORS if reduction == "mean" else ()),
        OpCase(f"linear_cross_entropy_bias_kdim_{reduction}",
               _with_bias(loss.linear_cross_entropy),
               _with_bias(torch_functional.linear_cross_entropy),
               _linear_cross_entropy_reference,
               make_inputs=_features_and_classes((4,), (2,), bias=True), grad_inputs=[0, 1, 3],
               kwargs=options, sums=True),
        OpCase(f"linear_cross_entropy_unbatched_{reduction}", loss.linear_cross_entropy,
               torch_functional.linear_cross_entropy, _linear_cross_entropy_reference,
               make_inputs=_features_and_classes(()), grad_inputs=[0, 1], kwargs=options,
               sums=True),
        OpCase(f"linear_cross_entropy_probabilities_{reduction}", loss.linear_cross_entropy,
               torch_functional.linear_cross_entropy, _linear_cross_entropy_reference,
               make_inputs=_features_and_classes((4,), probabilities=True), kwargs=options,
               sums=True),
    ]  # fmt: skip
