"""Recurrent, attention and transformer modules under autocast give torch.autocast("cpu")'s
dtypes, and its values and gradients to bfloat16 tolerance: PyTorch runs a CPU LSTM layer as
one lower-precision op, a GRU or an RNN as linear layers and pointwise ops (whose float32
hidden state promotes), attention as linear layers and matmuls."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn
from tests.nn.parity import assert_close, copy_state
from tests.torch_oracle import requires_torch, torch


def _has_bfloat16_matmul() -> bool:
    low = lucid.ones(2, 2).to(lucid.bfloat16)
    return lucid.mm(low, low).dtype is lucid.bfloat16


pytestmark = [
    requires_torch,
    pytest.mark.skipif(
        not _has_bfloat16_matmul(), reason="lucid's bfloat16 matmul returns float32"
    ),
]

MODULES = {
    "LSTM": lambda nn: nn.LSTM(8, 6),
    "LSTM 2 layers bidirectional": lambda nn: nn.LSTM(8, 6, num_layers=2, bidirectional=True),
    "LSTM with projections": lambda nn: nn.LSTM(8, 6, proj_size=3),
    "GRU": lambda nn: nn.GRU(8, 6),
    "RNN": lambda nn: nn.RNN(8, 6),
    "RNN relu": lambda nn: nn.RNN(8, 6, nonlinearity="relu"),
    "LSTMCell": lambda nn: nn.LSTMCell(8, 6),
    "GRUCell": lambda nn: nn.GRUCell(8, 6),
    "RNNCell": lambda nn: nn.RNNCell(8, 6),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(8, 2),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
    "TransformerDecoderLayer": lambda nn: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
    "Bilinear": lambda nn: nn.Bilinear(8, 8, 4),
}
# the modules that take one step (batch, features) rather than a sequence
STEP_MODULES = {"LSTMCell", "GRUCell", "RNNCell", "Bilinear"}


def _tensors(result: Any) -> list[Any]:
    if isinstance(result, tuple | list):
        return [tensor for item in result for tensor in _tensors(item)]
    return [result] if result is not None else []


def _values(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.detach().float().numpy())


def _run(lib: Any, module: Any, name: str, x: np.ndarray) -> tuple[list[Any], Any, list[Any]]:
    inputs = lib.tensor(x[0] if name in STEP_MODULES else x, requires_grad=True)
    arguments = {
        "MultiheadAttention": (inputs, inputs, inputs),
        "TransformerDecoderLayer": (inputs, inputs),
        "Bilinear": (inputs, inputs),
    }.get(name, (inputs,))
    with lib.autocast("cpu"):
        outputs = _tensors(module(*arguments))
    sum(output.float().sum() for output in outputs).backward()
    return outputs, inputs.grad, [parameter.grad for parameter in module.parameters()]


@pytest.mark.parametrize("name", list(MODULES))
def test_module_under_autocast_matches_torch(name: str) -> None:
    torch.manual_seed(0)
    torch_module = MODULES[name](torch.nn)
    lucid_module = MODULES[name](lucid.nn)
    copy_state(torch_module, lucid_module)
    x = np.random.default_rng(0).standard_normal((5, 3, 8)).astype(np.float32)

    try:
        expected = _run(torch, torch_module, name, x)
    except RuntimeError as error:
        # torch's bfloat16 LSTM is a oneDNN primitive, which some CPUs lack (no
        # avx512_bf16): the reference cannot run here
        if "could not create a primitive descriptor" not in str(error):
            raise
        pytest.skip(f"torch.autocast's {name} cannot run on this CPU: {error}")
    actual = _run(lucid, lucid_module, name, x)

    pairs = [
        *(("output", got, want) for got, want in zip(actual[0], expected[0], strict=True)),
        ("input gradient", actual[1], expected[1]),
        *(("weight gradient", got, want) for got, want in zip(actual[2], expected[2], strict=True)),
    ]
    assert len(actual[0]) == len(expected[0])
    for what, got, want in pairs:
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
        assert_close(_values(got), _values(want), 3e-2, 3e-2, what)
