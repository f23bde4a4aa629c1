"""Models under autocast match torch.autocast("cpu") on the same weights and inputs: an MLP,
the CNN and a transformer block, in bfloat16 and float16. Outputs, losses and every gradient
agree in dtype, and in value to the tolerance of the lower precision."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn
from tests.nn.parity import assert_close, copy_state
from tests.torch_oracle import requires_torch, torch


def _has_low_precision_matmul() -> bool:
    low = lucid.ones(2, 2).to(lucid.bfloat16)
    return lucid.mm(low, low).dtype is lucid.bfloat16


pytestmark = [
    requires_torch,
    pytest.mark.skipif(
        not _has_low_precision_matmul(),
        reason="lucid's bfloat16 matmul returns float32 (branch lowprec-core)",
    ),
]

# (rtol, atol) by the lower precision: a few roundings of the dtype through a small network
# (atol is scaled by the largest magnitude compared, as in tests/nn/parity.py)
TOLERANCES = {"bfloat16": (3e-2, 3e-2), "float16": (4e-3, 4e-3)}


def _values(tensor: Any) -> np.ndarray:
    """The values of a lucid or torch tensor of any float dtype, as float32 (exact)."""
    return np.asarray(tensor.detach().float().numpy())


def _mlp(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 5)
    )


def _cnn(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 5),
    )  # fmt: skip


def _block(lib: Any) -> Any:
    return lib.nn.TransformerEncoderLayer(
        32, 4, dim_feedforward=64, dropout=0.0, batch_first=True, norm_first=True
    )


def _classify(lib: Any, model: Any, x: Any, target: Any) -> tuple[Any, Any]:
    output = model(x)
    return output, lib.nn.functional.cross_entropy(output, target)


def _regress(lib: Any, model: Any, x: Any, target: Any) -> tuple[Any, Any]:
    mask = lib.nn.Transformer.generate_square_subsequent_mask(x.shape[1])
    output = model(x, src_mask=mask, is_causal=True)
    return output, lib.nn.functional.mse_loss(output, target)


CASES = {
    "mlp": (_mlp, (8, 20), (8,), _classify),
    "cnn": (_cnn, (6, 1, 16, 16), (6,), _classify),
    "transformer block": (_block, (3, 7, 32), (3, 7, 32), _regress),
}


def _run(lib: Any, model: Any, step: Any, x: np.ndarray, target: np.ndarray, dtype: str):
    inputs = lib.tensor(x, requires_grad=True)
    targets = lib.tensor(target)
    with lib.autocast("cpu", dtype=getattr(lib, dtype)):
        output, loss = step(lib, model, inputs, targets)
    loss.backward()
    grads = {name: parameter.grad for name, parameter in model.named_parameters()}
    return output, loss, inputs.grad, grads


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", list(CASES))
def test_model_under_autocast_matches_torch(case: str, dtype: str) -> None:
    build, input_shape, target_shape, step = CASES[case]
    torch.manual_seed(0)
    torch_model = build(torch)
    lucid_model = build(lucid)
    copy_state(torch_model, lucid_model)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(input_shape).astype(np.float32)
    if step is _classify:
        target = rng.integers(0, 5, target_shape)
    else:
        target = rng.standard_normal(target_shape).astype(np.float32)

    expected = _run(torch, torch_model, step, x, target, dtype)
    actual = _run(lucid, lucid_model, step, x, target, dtype)

    rtol, atol = TOLERANCES[dtype]
    names = ("output", "loss", "input gradient")
    for name, got, want in zip(names, actual[:3], expected[:3], strict=True):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], name
        assert_close(_values(got), _values(want), rtol, atol, name)
    assert actual[3].keys() == expected[3].keys()
    for name, want in expected[3].items():
        got = actual[3][name]
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], name
        assert_close(_values(got), _values(want), rtol, atol, f"grad of {name}")
