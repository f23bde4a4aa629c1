"""Every loss at its degenerate edges, forward and backward, against PyTorch: every target
ignored, a total class weight of zero, and empty batches (values, nan-ness, gradients, errors).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from tests.torch_oracle import functional as torch_functional
from tests.torch_oracle import requires_torch, torch


class Leaf:
    """An argument that is a float64 tensor requiring grad (its gradient is compared)."""

    def __init__(self, array: Any) -> None:
        self.array = np.asarray(array, dtype=np.float64)


@dataclass
class EdgeCase:
    loss: str
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __str__(self) -> str:
        shapes = [
            arg.array.shape if isinstance(arg, Leaf) else getattr(arg, "shape", arg)
            for arg in self.args
        ]
        options = ",".join(
            f"{key}={'array' if isinstance(value, np.ndarray) else value}"
            for key, value in self.kwargs.items()
        )
        return f"{self.loss}{shapes}[{options}]"


_RNG = np.random.default_rng(0)
LOGITS = _RNG.normal(size=(3, 4))
LOG_PROBS = LOGITS - np.log(np.exp(LOGITS).sum(1, keepdims=True))
PROBABILITIES = np.exp(LOG_PROBS)
TARGETS = np.array([0, 1, 2])
IGNORED = np.array([-100, -100, -100])
WEIGHT = np.array([1.0, 2.0, 0.5, 1.5])
# zero for every class the targets use: the mean's total weight is 0
ZERO_FOR_TARGETS = np.array([0.0, 0.0, 0.0, 1.5])
EMPTY = np.zeros((0, 4))
EMPTY_TARGETS = np.zeros((0,), np.int64)
SIGMOIDS = 1.0 / (1.0 + np.exp(-LOGITS))
SOFT_TARGETS = _RNG.uniform(size=(3, 4))


def _cases() -> list[EdgeCase]:
    cases = []
    for reduction in ("mean", "sum", "none"):
        r = {"reduction": reduction}
        for name, scores in (("nll_loss", LOG_PROBS), ("cross_entropy", LOGITS)):
            cases += [
                EdgeCase(name, (Leaf(scores), IGNORED), r),
                EdgeCase(name, (Leaf(scores), IGNORED), {**r, "weight": WEIGHT}),
                EdgeCase(name, (Leaf(scores), TARGETS), {**r, "weight": ZERO_FOR_TARGETS}),
                EdgeCase(name, (Leaf(scores[0]), np.array(-100)), r),
                EdgeCase(name, (Leaf(scores[:, :, None]), IGNORED[:, None]), r),
                EdgeCase(name, (Leaf(EMPTY), EMPTY_TARGETS), r),
                EdgeCase(name, (Leaf(EMPTY), EMPTY_TARGETS), {**r, "weight": WEIGHT}),
                EdgeCase(name, (Leaf(np.zeros((2, 4, 0))), np.zeros((2, 0), np.int64)), r),
            ]
        smooth = {**r, "label_smoothing": 0.1}
        cases += [
            EdgeCase("cross_entropy", (Leaf(LOGITS), IGNORED), smooth),
            EdgeCase("cross_entropy", (Leaf(LOGITS), IGNORED), {**smooth, "weight": WEIGHT}),
            EdgeCase(
                "cross_entropy", (Leaf(LOGITS), TARGETS), {**smooth, "weight": ZERO_FOR_TARGETS}
            ),
            EdgeCase(
                "cross_entropy",
                (Leaf(LOGITS), np.array([0, -100, 2])),
                {**smooth, "weight": np.array([0.0, 1.0, 0.0, 2.0])},
            ),  # fmt: skip
            EdgeCase("cross_entropy", (Leaf(LOGITS), TARGETS), {**smooth, "weight": np.zeros(4)}),
            EdgeCase("cross_entropy", (Leaf(EMPTY), EMPTY_TARGETS), smooth),
        ]
        for options in (r, smooth):
            cases += [
                EdgeCase("cross_entropy", (Leaf(EMPTY), Leaf(EMPTY)), options),
                EdgeCase(
                    "cross_entropy", (Leaf(EMPTY), Leaf(EMPTY)), {**options, "weight": WEIGHT}
                ),
                EdgeCase(
                    "cross_entropy",
                    (Leaf(LOGITS), Leaf(PROBABILITIES)),
                    {**options, "weight": np.zeros(4)},
                ),  # fmt: skip
                EdgeCase(
                    "cross_entropy", (Leaf(np.zeros((2, 4, 0))), Leaf(np.zeros((2, 4, 0)))), options
                ),  # fmt: skip
            ]
        cases += [
            EdgeCase("binary_cross_entropy", (Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase("binary_cross_entropy", (Leaf(EMPTY), Leaf(EMPTY)), {**r, "weight": EMPTY}),
            EdgeCase(
                "binary_cross_entropy",
                (Leaf(SIGMOIDS), Leaf(SOFT_TARGETS)),
                {**r, "weight": np.zeros((3, 4))},
            ),  # fmt: skip
            EdgeCase("binary_cross_entropy_with_logits", (Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase(
                "binary_cross_entropy_with_logits",
                (Leaf(EMPTY), Leaf(EMPTY)),
                {**r, "pos_weight": np.ones(4)},
            ),  # fmt: skip
            EdgeCase(
                "binary_cross_entropy_with_logits",
                (Leaf(LOGITS), Leaf(SOFT_TARGETS)),
                {**r, "weight": np.zeros(4)},
            ),  # fmt: skip
            EdgeCase("kl_div", (Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase("kl_div", (Leaf(EMPTY), Leaf(EMPTY)), {**r, "log_target": True}),
            EdgeCase("smooth_l1_loss", (Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase("smooth_l1_loss", (Leaf(EMPTY), Leaf(EMPTY)), {**r, "beta": 0.0}),
            EdgeCase("cosine_embedding_loss", (Leaf(EMPTY), Leaf(EMPTY), np.zeros((0,))), r),
        ]
        for name in ("mse_loss", "l1_loss", "huber_loss"):
            cases += [
                EdgeCase(name, (Leaf(EMPTY), Leaf(EMPTY)), r),
                EdgeCase(name, (Leaf(EMPTY), Leaf(EMPTY)), {**r, "weight": EMPTY}),
                EdgeCase(
                    name, (Leaf(LOGITS), Leaf(SOFT_TARGETS)), {**r, "weight": np.zeros((3, 4))}
                ),
                # PyTorch wants the weight in the input's shape, not broadcastable to it
                EdgeCase(name, (Leaf(LOGITS), Leaf(SOFT_TARGETS)), {**r, "weight": np.zeros(4)}),
            ]
    cases += _margin_and_likelihood_cases() + _ctc_cases()
    cases += [
        EdgeCase("kl_div", (Leaf(EMPTY), Leaf(EMPTY)), {"reduction": "batchmean"}),
        EdgeCase("kl_div", (Leaf(np.zeros(0)), Leaf(np.zeros(0))), {"reduction": "batchmean"}),
    ]
    return cases


SIGNS = np.sign(SOFT_TARGETS - 0.5)
EMPTY_LABEL_LISTS = np.zeros((0, 4), np.int64)


def _margin_and_likelihood_cases() -> list[EdgeCase]:
    """The margin, likelihood and triplet losses on empty batches and mismatched shapes."""
    cases = []
    for reduction in ("mean", "sum", "none"):
        r = {"reduction": reduction}
        cases += [
            EdgeCase("margin_ranking_loss", (Leaf(EMPTY), Leaf(EMPTY), np.zeros((0, 4))), r),
            EdgeCase("margin_ranking_loss", (Leaf(LOGITS), Leaf(LOGITS[:2]), SIGNS), r),
            EdgeCase("margin_ranking_loss", (Leaf(LOGITS), Leaf(LOGITS), SIGNS[0]), r),
            EdgeCase("hinge_embedding_loss", (Leaf(EMPTY), np.zeros((0, 4))), r),
            EdgeCase("hinge_embedding_loss", (Leaf(LOGITS), SIGNS[:, :3]), r),
            EdgeCase("soft_margin_loss", (Leaf(EMPTY), np.zeros((0, 4))), r),
            EdgeCase("soft_margin_loss", (Leaf(LOGITS), SIGNS[:2]), r),
            EdgeCase("multilabel_soft_margin_loss", (Leaf(EMPTY), np.zeros((0, 4))), r),
            EdgeCase(
                "multilabel_soft_margin_loss",
                (Leaf(EMPTY), np.zeros((0, 4))),
                {**r, "weight": WEIGHT},
            ),  # fmt: skip
            EdgeCase("multilabel_soft_margin_loss", (Leaf(LOGITS), SOFT_TARGETS[:2]), r),
            EdgeCase("multi_margin_loss", (Leaf(LOGITS), TARGETS[:2]), r),
            EdgeCase("multi_margin_loss", (Leaf(LOGITS), TARGETS), {**r, "weight": WEIGHT[:3]}),
            EdgeCase("multilabel_margin_loss", (Leaf(LOGITS), np.zeros((3, 3), np.int64)), r),
            EdgeCase("poisson_nll_loss", (Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase("poisson_nll_loss", (Leaf(EMPTY), Leaf(EMPTY)), {**r, "full": True}),
            EdgeCase("poisson_nll_loss", (Leaf(LOGITS), Leaf(SOFT_TARGETS[:, :3])), r),
            EdgeCase("gaussian_nll_loss", (Leaf(EMPTY), Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase("gaussian_nll_loss", (Leaf(EMPTY), Leaf(EMPTY), Leaf(np.zeros(0))), r),
            EdgeCase(
                "gaussian_nll_loss", (Leaf(LOGITS), Leaf(SOFT_TARGETS), Leaf(SIGMOIDS[:2])), r
            ),
            EdgeCase(
                "gaussian_nll_loss", (Leaf(LOGITS), Leaf(SOFT_TARGETS), Leaf(np.zeros((3, 4)))), r
            ),  # fmt: skip
            EdgeCase("triplet_margin_loss", (Leaf(EMPTY), Leaf(EMPTY), Leaf(EMPTY)), r),
            EdgeCase(
                "triplet_margin_loss", (Leaf(EMPTY), Leaf(EMPTY), Leaf(EMPTY)), {**r, "swap": True}
            ),  # fmt: skip
            EdgeCase("triplet_margin_loss", (Leaf(LOGITS), Leaf(LOGITS[:2]), Leaf(LOGITS)), r),
            EdgeCase(
                "triplet_margin_with_distance_loss", (Leaf(EMPTY), Leaf(EMPTY), Leaf(EMPTY)), r
            ),
        ]
        # PyTorch's sum and mean over an empty batch read memory it never wrote for these two
        # kernels, so only 'none' is compared (lucid's sum there is 0 and its mean nan)
        if reduction == "none":
            cases += [
                EdgeCase("multi_margin_loss", (Leaf(EMPTY), EMPTY_TARGETS), r),
                EdgeCase("multi_margin_loss", (Leaf(EMPTY), EMPTY_TARGETS), {**r, "p": 2}),
                EdgeCase("multilabel_margin_loss", (Leaf(EMPTY), EMPTY_LABEL_LISTS), r),
            ]
    return cases


def _ctc_cases() -> list[EdgeCase]:
    """CTC with empty targets, no input steps, targets too long for their inputs (infinite
    loss, with and without zero_infinity) and an empty batch."""
    log_probs = Leaf(LOG_PROBS[:, None, :].repeat(2, 1))  # (T=3, N=2, C=4)
    cases = []
    for reduction in ("mean", "sum", "none"):
        for zero_infinity in (False, True):
            options = {"reduction": reduction, "zero_infinity": zero_infinity}
            cases += [
                EdgeCase(
                    "ctc_loss",
                    (log_probs, np.array([[1, 2], [3, 3]]), np.array([3, 3]), np.array([0, 2])),
                    options,
                ),  # fmt: skip
                EdgeCase(
                    "ctc_loss",
                    (log_probs, np.array([[1, 2], [3, 3]]), np.array([0, 3]), np.array([0, 1])),
                    options,
                ),  # fmt: skip
                EdgeCase(
                    "ctc_loss",
                    (log_probs, np.array([1, 2, 3, 3]), np.array([3, 1]), np.array([2, 2])),
                    options,
                ),  # fmt: skip
                EdgeCase(
                    "ctc_loss",
                    (
                        Leaf(np.zeros((3, 0, 4))),
                        np.zeros((0, 2), np.int64),
                        EMPTY_TARGETS,
                        EMPTY_TARGETS,
                    ),
                    options,
                ),  # fmt: skip
            ]
    return cases


def _run(library: Any, functional: Any, case: EdgeCase) -> tuple:
    """('ok', loss, [grad per Leaf]) or ('raise', error type name, message)."""
    leaves = []
    args = []
    for arg in case.args:
        if isinstance(arg, Leaf):
            leaf = library.tensor(arg.array.copy(), requires_grad=True)
            leaves.append(leaf)
            args.append(leaf)
        else:
            args.append(library.tensor(arg.copy()))
    kwargs = {
        key: library.tensor(value.copy()) if isinstance(value, np.ndarray) else value
        for key, value in case.kwargs.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the nan losses are the point here
        try:
            loss = getattr(functional, case.loss)(*args, **kwargs)
            loss.sum().backward()
        except Exception as error:
            return ("raise", type(error).__name__, str(error).replace("torch.", "lucid."))
    grads = [None if leaf.grad is None else leaf.grad.numpy() for leaf in leaves]
    return ("ok", np.asarray(loss.detach().numpy()), grads)


def _assert_same(expected: np.ndarray, actual: np.ndarray, what: str) -> None:
    assert actual.shape == expected.shape, what
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=what)
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12, err_msg=what)


@requires_torch
@pytest.mark.parametrize("case", _cases(), ids=str)
def test_loss_at_degenerate_edges_matches_torch(case: EdgeCase) -> None:
    expected = _run(torch, torch_functional, case)
    actual = _run(lucid, F, case)
    assert actual[0] == expected[0], (expected, actual)
    if expected[0] == "raise":
        assert actual[1:] == expected[1:]
        return
    _assert_same(expected[1], actual[1], "loss")
    for index, (grad_expected, grad_actual) in enumerate(zip(expected[2], actual[2])):
        assert (grad_actual is None) == (grad_expected is None), f"grad {index}"
        if grad_expected is not None:
            _assert_same(grad_expected, grad_actual, f"grad {index}")


@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_with_every_target_ignored_has_nan_loss_and_zero_gradient(
    label_smoothing: float,
) -> None:
    logits = lucid.tensor(LOGITS, requires_grad=True)
    loss = F.cross_entropy(logits, lucid.tensor(IGNORED), label_smoothing=label_smoothing)
    loss.backward()
    assert np.isnan(loss.item())
    np.testing.assert_array_equal(logits.grad.numpy(), np.zeros((3, 4)))


@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_cross_entropy_smoothed_with_zero_total_weight_is_nan_not_inf() -> None:
    # PyTorch divides the nll and smoothing terms by the total weight apart: 0/0 + x/0 = nan
    logits = lucid.tensor(LOGITS, requires_grad=True)
    weight = lucid.tensor(ZERO_FOR_TARGETS)
    loss = F.cross_entropy(logits, lucid.tensor(TARGETS), weight=weight, label_smoothing=0.1)
    loss.backward()
    assert np.isnan(loss.item())
    assert np.isnan(logits.grad.numpy()).all()


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weight_of_another_shape_than_the_input_raises(name: str) -> None:
    input = lucid.tensor(LOGITS)
    with pytest.raises(ValueError, match="^Weights and input must have the same size.$"):
        getattr(F, name)(input, input, weight=lucid.ones(4, dtype=lucid.float64))


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_margin_losses_of_an_empty_batch_sum_to_zero_and_average_to_nan(name) -> None:
    # PyTorch returns unwritten memory here (see _cases); lucid returns the sum and mean of
    # no terms
    shape = (0,) if name == "multi_margin_loss" else (0, 4)
    target = lucid.empty(shape, dtype=lucid.long)
    loss = getattr(F, name)
    assert loss(lucid.empty(0, 4), target, reduction="sum").item() == 0.0
    assert math.isnan(loss(lucid.empty(0, 4), target, reduction="mean").item())
