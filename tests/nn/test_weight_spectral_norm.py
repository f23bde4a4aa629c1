"""nn.utils.weight_norm and spectral_norm (the hook-based forms) against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import (
    DTYPES,
    TOLERANCES,
    assert_close,
    check_forward_backward,
    compare_state,
    copy_state,
)
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch
FLOATS = pytest.mark.parametrize("dtype", ["float64", "float32"])


def _randn(dtype: str, *shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dtype][2])


def _layers(kind: str, dtype: str):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    if kind == "linear":
        return nn.Linear(5, 4, dtype=lucid_dtype), torch.nn.Linear(5, 4, dtype=torch_dtype), (3, 5)
    if kind == "conv":
        return (nn.Conv2d(2, 3, 3, dtype=lucid_dtype), torch.nn.Conv2d(2, 3, 3, dtype=torch_dtype),
                (2, 2, 5, 5))  # fmt: skip
    return (nn.ConvTranspose2d(2, 3, 3, dtype=lucid_dtype),
            torch.nn.ConvTranspose2d(2, 3, 3, dtype=torch_dtype), (2, 2, 4, 4))  # fmt: skip


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return function(*args, **kwargs)


# --------------------------------------------------------------- weight_norm
@FLOATS
@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm_matches_torch(dtype, kind, dim):
    layer, torch_layer, shape = _layers(kind, dtype)
    _quiet(nn.utils.weight_norm, layer, dim=dim)
    _quiet(torch.nn.utils.weight_norm, torch_layer, dim=dim)
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    assert [tuple(p.shape) for p in layer.parameters()] == [
        tuple(p.shape) for p in torch_layer.parameters()
    ]
    copy_state(torch_layer, layer)
    check_forward_backward(torch_layer, layer, [_randn(dtype, *shape)], dtype)
    assert layer.weight.grad_fn.name() == torch_layer.weight.grad_fn.name()
    _quiet(nn.utils.remove_weight_norm, layer)
    torch.nn.utils.remove_weight_norm(torch_layer)
    compare_state(torch_layer, layer, *TOLERANCES[dtype])
    assert isinstance(layer.weight, nn.Parameter)


def test_weight_norm_warns_and_keeps_the_weight():
    layer = nn.Linear(5, 4)
    before = layer.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match=r"`lucid.nn.utils.weight_norm` is deprecated"):
        nn.utils.weight_norm(layer)
    np.testing.assert_allclose(layer.weight.detach().numpy(), before, rtol=1e-6)
    np.testing.assert_allclose(
        layer.weight_g.detach().numpy()[:, 0], np.linalg.norm(before, axis=1), rtol=1e-6
    )


def test_weight_norm_gradient_checks_in_float64():
    layer = _quiet(nn.utils.weight_norm, nn.Conv2d(2, 3, 2, dtype=lucid.float64), dim=1)
    x = lucid.randn(1, 2, 3, 3, dtype=lucid.float64)

    def run(g, v):
        return lucid.ops.normalization.weight_norm(v, g, 1)

    g = layer.weight_g.detach().clone().requires_grad_(True)
    v = layer.weight_v.detach().clone().requires_grad_(True)
    assert lucid.autograd.gradcheck(run, (g, v))
    assert lucid.autograd.gradgradcheck(run, (g, v))
    assert layer(x).shape == (1, 3, 2, 2)


def _errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            call()
        except Exception as error:  # noqa: BLE001 - the error itself is under test
            return type(error), str(error).replace("torch", "lucid")
    return None


@pytest.mark.parametrize(
    "call",
    [
        lambda nn: nn.utils.weight_norm(nn.utils.weight_norm(nn.Linear(3, 4))),
        lambda nn: nn.utils.remove_weight_norm(nn.Linear(2, 2)),
        lambda nn: nn.utils.weight_norm(nn.LazyLinear(3)),
        lambda nn: nn.utils.spectral_norm(nn.utils.spectral_norm(nn.Linear(3, 4))),
        lambda nn: nn.utils.spectral_norm(nn.Linear(3, 4), n_power_iterations=0),
        lambda nn: nn.utils.remove_spectral_norm(nn.Linear(2, 2)),
        lambda nn: nn.utils.spectral_norm(nn.Linear(3, 4, bias=False), name="bias"),
        lambda nn: nn.utils.spectral_norm(nn.LazyLinear(3)),
    ],
)
def test_misuse_raises_torch_errors(call):
    expected = _errors(lambda: call(torch.nn))
    assert expected is not None
    assert _errors(lambda: call(nn)) == expected


# ------------------------------------------------------------- spectral_norm
@FLOATS
@pytest.mark.parametrize("kind", ["linear", "conv", "transposed"])
@pytest.mark.parametrize("options", [{}, {"n_power_iterations": 3}, {"dim": 1, "eps": 1e-6}])
def test_spectral_norm_power_iteration_matches_torch(dtype, kind, options):
    layer, torch_layer, shape = _layers(kind, dtype)
    nn.utils.spectral_norm(layer, **options)
    torch.nn.utils.spectral_norm(torch_layer, **options)
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    copy_state(torch_layer, layer)
    rtol, atol = TOLERANCES[dtype]
    for step in range(3):
        # each training forward moves u and v one power-iteration step (or more)
        check_forward_backward(
            torch_layer, layer, [_randn(dtype, *shape, seed=step)], dtype, copy=False
        )
        compare_state(torch_layer, layer, rtol, atol)
        layer.zero_grad()
        torch_layer.zero_grad()
    layer.eval()
    torch_layer.eval()
    check_forward_backward(torch_layer, layer, [_randn(dtype, *shape)], dtype, copy=False)
    compare_state(torch_layer, layer, rtol, atol)
    nn.utils.remove_spectral_norm(layer)
    torch.nn.utils.remove_spectral_norm(torch_layer)
    compare_state(torch_layer, layer, rtol, atol)
    assert isinstance(layer.weight, nn.Parameter)


def test_spectral_norm_bounds_the_largest_singular_value():
    layer = nn.utils.spectral_norm(nn.Linear(8, 6, dtype=lucid.float64), n_power_iterations=30)
    layer(lucid.randn(1, 8, dtype=lucid.float64))
    singular = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)
    assert abs(singular[0] - 1.0) < 1e-6


def test_spectral_norm_initial_weight_and_buffers():
    layer = nn.Linear(5, 4)
    original = layer.weight
    nn.utils.spectral_norm(layer)
    assert layer.weight_orig is original
    assert not isinstance(layer.weight, nn.Parameter)
    assert abs(float(layer.weight_u.norm()) - 1) < 1e-6
    assert abs(float(layer.weight_v.norm()) - 1) < 1e-6
    assert [name for name, _ in layer.named_buffers()] == ["weight_u", "weight_v"]
    assert_close(layer.weight, original, 0, 0)
