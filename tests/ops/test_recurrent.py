"""The fused LSTM and GRU cell ops: forward against the composed form, the fast array backward
against the differentiable one (DESIGN, "Fast array backward"), gradcheck and gradgradcheck."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.ops.recurrent import (
    _gru_cell_composed,
    _lstm_cell_composed,
    _lstm_layer_composed,
    fused_gru_cell,
    fused_lstm_cell,
    fused_lstm_layer,
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


# ------------------------------------------------------------------ LSTM layer
STEPS, FEATURES = 5, 3


def _layer_inputs(bias: bool = True):
    rng = np.random.default_rng(8)
    scale = 1 / np.sqrt(HIDDEN)

    def tensor(*shape, spread=1.0):
        return lucid.tensor(rng.uniform(-spread, spread, shape), requires_grad=True)

    weights = [tensor(4 * HIDDEN, FEATURES, spread=scale), tensor(4 * HIDDEN, HIDDEN, spread=scale)]
    biases = (
        [tensor(4 * HIDDEN, spread=scale), tensor(4 * HIDDEN, spread=scale)]
        if bias
        else [None, None]
    )
    return [
        tensor(STEPS, BATCH, FEATURES),
        tensor(BATCH, HIDDEN),
        tensor(BATCH, HIDDEN),
        *weights,
        *biases,
    ]


def _layer_loss(layer, inputs, used):
    output, h, c = layer(*inputs)
    rng = np.random.default_rng(9)
    loss = lucid.zeros((), dtype=lucid.float64)
    if "output" in used:
        loss = loss + (output * lucid.tensor(rng.standard_normal(output.shape))).sum()
    if "h" in used:
        loss = loss + (h * lucid.tensor(rng.standard_normal(h.shape))).sum()
    if "c" in used:
        loss = loss + (c * lucid.tensor(rng.standard_normal(c.shape))).sum()
    return loss


def test_fused_lstm_layer_forward_matches_the_composed_ops() -> None:
    inputs = _layer_inputs()
    for fused, composed in zip(
        fused_lstm_layer(*inputs), _lstm_layer_composed(*inputs), strict=True
    ):
        np.testing.assert_allclose(
            fused.detach().numpy(), composed.detach().numpy(), rtol=1e-13, atol=1e-15
        )


@pytest.mark.parametrize("used", [("output",), ("h",), ("c",), ("output", "h", "c")])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_lstm_layer_fast_and_differentiable_backwards_agree(used, bias) -> None:
    inputs = [t for t in _layer_inputs(bias)]
    present = [t for t in inputs if t is not None]
    loss = _layer_loss(lambda *a: fused_lstm_layer(*a), inputs, used)
    composed = _layer_loss(lambda *a: _lstm_layer_composed(*a), inputs, used)
    _check_backwards(loss, composed, present)


def test_fused_lstm_layer_gradcheck_and_gradgradcheck() -> None:
    inputs = [t for t in _layer_inputs() if t is not None]
    assert lucid.autograd.gradcheck(fused_lstm_layer, inputs)
    assert lucid.autograd.gradgradcheck(fused_lstm_layer, inputs)


def test_lstm_output_grad_fn_is_named_as_pytorch_names_it() -> None:
    torch = pytest.importorskip("torch")
    lstm, torch_lstm = lucid.nn.LSTM(3, 4, num_layers=2), torch.nn.LSTM(3, 4, num_layers=2)
    output, (h, c) = lstm(lucid.randn(5, 2, 3))
    expected, (torch_h, torch_c) = torch_lstm(torch.randn(5, 2, 3))
    assert output.grad_fn.name() == expected.grad_fn.name()
    assert h.grad_fn.name() == torch_h.grad_fn.name()
    assert c.grad_fn.name() == torch_c.grad_fn.name()
