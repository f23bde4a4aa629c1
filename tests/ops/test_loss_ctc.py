"""ctc_loss: what the op catalogue's rows (through log_softmax) cannot express."""

from __future__ import annotations

import time

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from tests.torch_oracle import functional as torch_functional
from tests.torch_oracle import requires_torch, torch


def _log_probs(steps: int, batch: int, classes: int, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(steps, batch, classes))
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


TARGETS = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
INPUT_LENGTHS = np.array([6, 5, 6])
TARGET_LENGTHS = np.array([3, 2, 3])


def _both(log_probs: np.ndarray, *arguments: np.ndarray, **kwargs) -> tuple:
    """(loss, gradient with respect to log_probs) from lucid and from torch, summed losses."""
    results = []
    for library, functional in ((lucid, F), (torch, torch_functional)):
        leaf = library.tensor(log_probs.copy(), requires_grad=True)
        loss = functional.ctc_loss(leaf, *[library.tensor(a) for a in arguments], **kwargs)
        loss.sum().backward()
        results.append((loss.detach().numpy(), leaf.grad.numpy()))
    return results


@requires_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradient_with_respect_to_log_probs_is_torchs(reduction: str) -> None:
    # PyTorch's gradient carries an exp(log_probs) term that log_softmax's backward cancels;
    # lucid keeps it, so gradients taken at log_probs themselves match too
    log_probs = _log_probs(6, 3, 5)
    arguments = (TARGETS, INPUT_LENGTHS, TARGET_LENGTHS)
    (loss, grad), (torch_loss, torch_grad) = _both(log_probs, *arguments, reduction=reduction)
    np.testing.assert_allclose(loss, torch_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, torch_grad, rtol=1e-10, atol=1e-14)
    # steps past a sample's input length get no gradient
    assert not grad[5:, 1].any()


@requires_torch
def test_long_sequences_match_torch_quickly() -> None:
    rng = np.random.default_rng(1)
    steps, batch, classes, longest = 150, 8, 20, 40
    log_probs = _log_probs(steps, batch, classes, seed=1)
    targets = rng.integers(1, classes, (batch, longest))
    input_lengths = rng.integers(100, steps + 1, batch)
    target_lengths = rng.integers(1, longest + 1, batch)
    start = time.perf_counter()
    (loss, grad), (torch_loss, torch_grad) = _both(
        log_probs, targets, input_lengths, target_lengths, reduction="none"
    )
    assert time.perf_counter() - start < 1.0
    np.testing.assert_allclose(loss, torch_loss, rtol=1e-10)
    np.testing.assert_allclose(grad, torch_grad, rtol=1e-8, atol=1e-12)


def test_lengths_as_lists_and_tuples_equal_tensors() -> None:
    log_probs = lucid.tensor(_log_probs(6, 3, 5))
    targets = lucid.tensor(TARGETS)
    expected = F.ctc_loss(
        log_probs, targets, lucid.tensor(INPUT_LENGTHS), lucid.tensor(TARGET_LENGTHS)
    )
    as_list = F.ctc_loss(log_probs, targets, INPUT_LENGTHS.tolist(), TARGET_LENGTHS.tolist())
    as_tuple = F.ctc_loss(
        log_probs, targets, tuple(INPUT_LENGTHS.tolist()), tuple(TARGET_LENGTHS.tolist())
    )
    assert as_list.item() == as_tuple.item() == expected.item()


def test_padding_beyond_target_lengths_is_ignored() -> None:
    log_probs = lucid.tensor(_log_probs(6, 3, 5))
    lengths = (lucid.tensor(INPUT_LENGTHS), lucid.tensor(TARGET_LENGTHS))
    padded = TARGETS.copy()
    padded[1, 2] = -1  # outside sample 1's two labels: any value, even no class
    loss = F.ctc_loss(log_probs, lucid.tensor(padded), *lengths, reduction="none")
    expected = F.ctc_loss(log_probs, lucid.tensor(TARGETS), *lengths, reduction="none")
    np.testing.assert_array_equal(loss.numpy(), expected.numpy())


def test_label_outside_the_classes_raises_index_error() -> None:
    # PyTorch reads out of bounds here; lucid refuses, as nll_loss does
    targets = TARGETS.copy()
    targets[0, 1] = 7
    with pytest.raises(IndexError, match=r"^Target 7 is out of bounds\.$"):
        F.ctc_loss(
            lucid.tensor(_log_probs(6, 3, 5)),
            lucid.tensor(targets),
            lucid.tensor(INPUT_LENGTHS),
            lucid.tensor(TARGET_LENGTHS),
        )


def test_second_derivative_is_not_implemented_as_in_torch() -> None:
    log_probs = lucid.tensor(_log_probs(6, 3, 5), requires_grad=True)
    loss = F.ctc_loss(
        log_probs, lucid.tensor(TARGETS), lucid.tensor(INPUT_LENGTHS), lucid.tensor(TARGET_LENGTHS)
    )
    (grad,) = lucid.autograd.grad(loss, log_probs, create_graph=True)
    with pytest.raises(RuntimeError, match="^derivative for aten::_ctc_loss_backward is not"):
        grad.sum().backward()


@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_zero_infinity_zeroes_the_loss_and_gradient_of_impossible_targets() -> None:
    log_probs = lucid.tensor(_log_probs(6, 3, 5), requires_grad=True)
    # sample 2 needs 3 + 2 (repeats) = 5 steps and gets 4
    arguments = (lucid.tensor(TARGETS), lucid.tensor([6, 5, 4]), lucid.tensor(TARGET_LENGTHS))
    infinite = F.ctc_loss(log_probs, *arguments, reduction="none").detach()
    assert np.isinf(infinite[2].item()) and np.isfinite(infinite[:2].numpy()).all()
    loss = F.ctc_loss(log_probs, *arguments, reduction="sum", zero_infinity=True)
    loss.backward()
    assert loss.item() == pytest.approx(infinite[:2].sum().item(), rel=1e-12)
    assert not log_probs.grad[:, 2].numpy().any()
    assert log_probs.grad[:, 0].numpy().any()


def test_grad_fn_names_follow_torch() -> None:
    log_probs = lucid.tensor(_log_probs(6, 3, 5), requires_grad=True)
    arguments = (lucid.tensor(TARGETS), lucid.tensor(INPUT_LENGTHS), lucid.tensor(TARGET_LENGTHS))
    names = {
        (reduction, zero_infinity): F.ctc_loss(
            log_probs, *arguments, reduction=reduction, zero_infinity=zero_infinity
        ).grad_fn.name()
        for reduction in ("none", "mean", "sum")
        for zero_infinity in (False, True)
    }
    assert names == {
        ("none", False): "CtcLossBackward0",
        ("none", True): "WhereBackward0",
        ("mean", False): "MeanBackward0",
        ("mean", True): "MeanBackward0",
        ("sum", False): "SumBackward0",
        ("sum", True): "SumBackward0",
    }


def test_ctc_loss_module_passes_its_options() -> None:
    log_probs = lucid.tensor(_log_probs(6, 3, 5))
    arguments = (lucid.tensor(TARGETS), lucid.tensor(INPUT_LENGTHS), lucid.tensor(TARGET_LENGTHS))
    module = lucid.nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)
    expected = F.ctc_loss(log_probs, *arguments, blank=4, reduction="sum", zero_infinity=True)
    assert module(log_probs, *arguments).item() == expected.item()


@requires_torch
def test_a_label_equal_to_blank_follows_torchs_rule() -> None:
    # no valid target holds the blank, but PyTorch defines the result: such a label may be
    # reached past the blank before it whenever the label two states back differs
    targets = np.array([[1, 0, 2], [0, 0, 1], [4, 4, 4]])
    arguments = (targets, INPUT_LENGTHS, TARGET_LENGTHS)
    (loss, grad), (torch_loss, torch_grad) = _both(_log_probs(6, 3, 5), *arguments)
    np.testing.assert_allclose(loss, torch_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, torch_grad, rtol=1e-10, atol=1e-14)
