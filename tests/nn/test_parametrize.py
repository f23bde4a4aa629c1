"""nn.utils.parametrize and nn.utils.parametrizations against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.utils.parametrize as P
from tests.nn.parity import (
    DTYPES,
    TOLERANCES,
    check_forward_backward,
    compare_state,
    copy_state,
)
from tests.torch_oracle import TORCH_AVAILABLE, requires_torch, torch

FLOATS = pytest.mark.parametrize("dtype", ["float64", "float32"])


def _randn(dtype: str, *shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dtype][2])


def _symmetric_class(base):
    class Symmetric(base.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    return Symmetric


def _scale_class(base):
    class Scale(base.Module):
        def forward(self, x):
            return x * 2.0

    return Scale


Symmetric = _symmetric_class(nn)
Scale = _scale_class(nn)
if TORCH_AVAILABLE:
    TorchSymmetric = _symmetric_class(torch.nn)
    TorchScale = _scale_class(torch.nn)


@requires_torch
@FLOATS
def test_registered_parametrization_matches_torch(dtype):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    layer, torch_layer = (
        nn.Linear(3, 3, dtype=lucid_dtype),
        torch.nn.Linear(3, 3, dtype=torch_dtype),
    )
    P.register_parametrization(layer, "weight", Symmetric())
    P.register_parametrization(layer, "weight", Scale())
    torch.nn.utils.parametrize.register_parametrization(torch_layer, "weight", TorchSymmetric())
    torch.nn.utils.parametrize.register_parametrization(torch_layer, "weight", TorchScale())
    assert type(layer).__name__ == type(torch_layer).__name__ == "ParametrizedLinear"
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    assert [name for name, _ in layer.named_parameters()] == [
        name for name, _ in torch_layer.named_parameters()
    ]
    copy_state(torch_layer, layer)
    check_forward_backward(torch_layer, layer, [_randn(dtype, 4, 3)], dtype, copy=False)
    assert P.is_parametrized(layer) and P.is_parametrized(layer, "weight")
    assert not P.is_parametrized(layer, "bias")
    assert P.type_before_parametrizations(layer) is nn.Linear


def test_assignment_goes_through_right_inverse():
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    original = layer.parametrizations.weight.original
    value = lucid.arange(9.0).reshape(3, 3)
    layer.weight = value
    assert layer.parametrizations.weight.original is original
    np.testing.assert_array_equal(original.detach().numpy(), np.triu(value.numpy()))
    expected = np.triu(value.numpy()) + np.triu(value.numpy(), 1).T
    np.testing.assert_array_equal(layer.weight.detach().numpy(), expected)
    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Scale())
    with pytest.raises(
        RuntimeError, match="parametrization Scale does not implement right_inverse"
    ):
        layer.weight = value


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_restores_the_class_and_the_parameter(leave_parametrized):
    layer = nn.Linear(3, 3)
    parameter = layer.weight
    before = parameter.detach().numpy().copy()
    P.register_parametrization(layer, "weight", Symmetric())
    parametrized = layer.weight.detach().numpy().copy()
    P.remove_parametrizations(layer, "weight", leave_parametrized)
    assert type(layer) is nn.Linear and not hasattr(layer, "parametrizations")
    assert layer.weight is parameter and list(layer.state_dict()) == ["bias", "weight"]
    expected = parametrized if leave_parametrized else np.triu(before)
    np.testing.assert_allclose(layer.weight.detach().numpy(), expected)


def test_cached_computes_each_tensor_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    layer = P.register_parametrization(nn.Linear(3, 3), "weight", Counting())
    calls.clear()
    with P.cached():
        first, second = layer.weight, layer.weight
    assert first is second and len(calls) == 1
    layer.weight
    assert len(calls) == 2


def test_buffers_can_be_parametrized():
    module = nn.BatchNorm1d(3)
    P.register_parametrization(module, "running_var", Scale())
    assert "parametrizations.running_var.original" in module.state_dict()
    np.testing.assert_array_equal(module.running_var.numpy(), [2.0, 2.0, 2.0])


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return type(error), str(error).split("\n")[0]
    return None


@requires_torch
def test_misuse_raises_torch_errors():
    class Shrink(nn.Module):
        def forward(self, x):
            return x[0]

    class TorchShrink(torch.nn.Module):
        def forward(self, x):
            return x[0]

    class Double(nn.Module):
        def forward(self, x):
            return x.double()

    class TorchDouble(torch.nn.Module):
        def forward(self, x):
            return x.double()

    pairs = [
        (lambda: P.register_parametrization(nn.Linear(3, 3), "weight", Shrink()),
         lambda: torch.nn.utils.parametrize.register_parametrization(
             torch.nn.Linear(3, 3), "weight", TorchShrink())),
        (lambda: P.register_parametrization(nn.Linear(3, 3), "weight", Double()),
         lambda: torch.nn.utils.parametrize.register_parametrization(
             torch.nn.Linear(3, 3), "weight", TorchDouble())),
        (lambda: P.ParametrizationList([], nn.Parameter(lucid.ones(1))),
         lambda: torch.nn.utils.parametrize.ParametrizationList(
             [], torch.nn.Parameter(torch.ones(1)))),
    ]  # fmt: skip
    for lucid_call, torch_call in pairs:
        assert _error(lucid_call) == _error(torch_call)
    error = _error(lambda: P.register_parametrization(nn.Linear(3, 3), "foo", Scale()))
    assert error[0] is ValueError and "does not have a parameter, a buffer, or a" in error[1]
    error = _error(lambda: P.remove_parametrizations(nn.Linear(3, 3), "weight"))
    assert error[0] is ValueError


# ------------------------------------------------------- parametrizations.*
@requires_torch
@FLOATS
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch(dtype, dim):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    layer = nn.Conv2d(2, 3, 3, dtype=lucid_dtype)
    torch_layer = torch.nn.Conv2d(2, 3, 3, dtype=torch_dtype)
    nn.utils.parametrizations.weight_norm(layer, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(torch_layer, dim=dim)
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    copy_state(torch_layer, layer)
    check_forward_backward(torch_layer, layer, [_randn(dtype, 2, 2, 5, 5)], dtype, copy=False)
    P.remove_parametrizations(layer, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(torch_layer, "weight")
    compare_state(torch_layer, layer, *TOLERANCES[dtype])


@requires_torch
@FLOATS
@pytest.mark.parametrize("kind", ["Linear", "ConvTranspose2d"])
def test_spectral_norm_parametrization_matches_torch(dtype, kind):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    args = (5, 4) if kind == "Linear" else (2, 3, 3)
    shape = (3, 5) if kind == "Linear" else (2, 2, 4, 4)
    layer = getattr(nn, kind)(*args, dtype=lucid_dtype)
    torch_layer = getattr(torch.nn, kind)(*args, dtype=torch_dtype)
    nn.utils.parametrizations.spectral_norm(layer, n_power_iterations=2)
    torch.nn.utils.parametrizations.spectral_norm(torch_layer, n_power_iterations=2)
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    copy_state(torch_layer, layer)
    rtol, atol = TOLERANCES[dtype]
    for step in range(2):
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


def test_spectral_norm_parametrization_normalizes_the_largest_singular_value():
    layer = nn.utils.parametrizations.spectral_norm(nn.Linear(6, 5, dtype=lucid.float64))
    singular = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)
    assert abs(singular[0] - 1.0) < 1e-3


@requires_torch
def test_spectral_norm_parametrization_errors_match_torch():
    calls = [
        lambda nn: nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4), dim=3),
        lambda nn: nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4), n_power_iterations=0),
    ]
    for call in calls:
        assert _error(lambda call=call: call(nn)) == _error(lambda call=call: call(torch.nn))
    error = _error(lambda: nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4), name="foo"))
    assert error[0] is ValueError and "has no parameter or buffer with name 'foo'" in error[1]
