"""The fused LSTM and GRU cell ops: forward against the composed form, the fast array backward
against the differentiable one (DESIGN, "Fast array backward"), gradcheck and gradgradcheck."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.ops.recurrent import (
    _gru_cell_composed,
    _lstm_cell_composed,
    fused_gru_cell,
    fused_lstm_cell,
)

BATCH, HIDDEN = 3, 4


def _tensor(seed: int, *shape: int, dtype=np.float64, grad: bool = True) -> lucid.Tensor:
    array = (np.random.default_rng(seed).standard_normal(shape) * 1.5).astype(dtype)
    return lucid.tensor(array, requires_grad=grad)


def _lstm_inputs(dtype=np.float64):
    return _tensor(0, BATCH, 4 * HIDDEN, dtype=dtype), _tensor(1, BATCH, HIDDEN, dtype=dtype)


def _gru_inputs(dtype=np.float64):
    return (
        _tensor(2, BATCH, 3 * HIDDEN, dtype=dtype),
        _tensor(3, BATCH, 3 * HIDDEN, dtype=dtype),
        _tensor(4, BATCH, HIDDEN, dtype=dtype),
    )


def _lstm_loss(cell, gates, c, used):
    h, c_next = cell(gates, c)
    loss = lucid.zeros(())
    if used in ("h", "both"):
        loss = loss + (h * _tensor(5, BATCH, HIDDEN, grad=False)).sum()
    if used in ("c", "both"):
        loss = loss + (c_next * _tensor(6, BATCH, HIDDEN, grad=False)).sum()
    return loss


def _gru_loss(cell, *inputs):
    return (cell(*inputs) * _tensor(7, BATCH, HIDDEN, grad=False)).sum()


def _check_backwards(loss, composed_loss, inputs):
    """The fast array backward, the differentiable form and the composed ops all agree."""
    fast = lucid.autograd.grad(loss, inputs, retain_graph=True)
    graph = lucid.autograd.grad(loss, inputs, create_graph=True)
    composed = lucid.autograd.grad(composed_loss, inputs)
    for a, b, c in zip(fast, graph, composed, strict=True):
        assert b.grad_fn is not None  # create_graph went through the lucid-op form
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_lstm_cell_forward_matches_the_composed_ops(dtype) -> None:
    gates, c = _lstm_inputs(dtype)
    h, c_next = fused_lstm_cell(gates, c)
    assert h.grad_fn.name() == "FusedLSTMCellBackward0"
    expected_h, expected_c = _lstm_cell_composed(gates, c)
    assert h.dtype == expected_h.dtype and c_next.dtype == expected_c.dtype
    np.testing.assert_allclose(
        h.detach().numpy(), expected_h.detach().numpy(), rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(
        c_next.detach().numpy(), expected_c.detach().numpy(), rtol=1e-6, atol=1e-7
    )


@pytest.mark.parametrize("used", ["h", "c", "both"])
def test_fused_lstm_cell_fast_and_differentiable_backwards_agree(used) -> None:
    gates, c = _lstm_inputs()
    _check_backwards(
        _lstm_loss(fused_lstm_cell, gates, c, used),
        _lstm_loss(_lstm_cell_composed, gates, c, used),
        [gates, c],
    )


def test_fused_lstm_cell_without_a_cell_gradient_input() -> None:
    gates = _tensor(0, BATCH, 4 * HIDDEN)
    c = _tensor(1, BATCH, HIDDEN, grad=False)
    h, _ = fused_lstm_cell(gates, c)
    (grad,) = lucid.autograd.grad(h.sum(), gates)
    (expected,) = lucid.autograd.grad(_lstm_cell_composed(gates, c)[0].sum(), gates)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)


def test_fused_lstm_cell_gradcheck_and_gradgradcheck() -> None:
    inputs = _lstm_inputs()
    assert lucid.autograd.gradcheck(fused_lstm_cell, inputs)
    assert lucid.autograd.gradgradcheck(fused_lstm_cell, inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_gru_cell_forward_matches_the_composed_ops(dtype) -> None:
    inputs = _gru_inputs(dtype)
    h = fused_gru_cell(*inputs)
    assert h.grad_fn.name() == "FusedGRUCellBackward0"
    expected = _gru_cell_composed(*inputs)
    assert h.dtype == expected.dtype
    np.testing.assert_allclose(h.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_fused_gru_cell_fast_and_differentiable_backwards_agree() -> None:
    inputs = _gru_inputs()
    _check_backwards(
        _gru_loss(fused_gru_cell, *inputs), _gru_loss(_gru_cell_composed, *inputs), list(inputs)
    )


def test_fused_gru_cell_gradcheck_and_gradgradcheck() -> None:
    inputs = _gru_inputs()
    assert lucid.autograd.gradcheck(fused_gru_cell, inputs)
    assert lucid.autograd.gradgradcheck(fused_gru_cell, inputs)


def test_mixed_dtypes_take_the_composed_form() -> None:
    gates, c = _tensor(0, BATCH, 4 * HIDDEN), _tensor(1, BATCH, HIDDEN, dtype=np.float32)
    h, c_next = fused_lstm_cell(gates, c)
    expected_h, expected_c = _lstm_cell_composed(gates, c)
    assert h.dtype == expected_h.dtype and c_next.dtype == expected_c.dtype
