"""nn.utils fusion of BatchNorm into conv/linear, skip_init, clip_grad_norm and memory formats."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import DTYPES, TOLERANCES, assert_close, copy_state
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch
FLOATS = pytest.mark.parametrize("dtype", ["float64", "float32"])


def _randn(dtype: str, *shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dtype][2])


def _trained_bn(name: str, channels: int, dtype: str, affine: bool = True):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_bn = getattr(torch.nn, name)(channels, affine=affine, dtype=torch_dtype)
    with torch.no_grad():
        torch_bn.running_mean.uniform_(-1, 1)
        torch_bn.running_var.uniform_(0.5, 2)
        if affine:
            torch_bn.weight.uniform_(0.5, 2)
            torch_bn.bias.uniform_(-1, 1)
    bn = getattr(nn, name)(channels, affine=affine, dtype=lucid_dtype)
    copy_state(torch_bn, bn)
    return bn.eval(), torch_bn.eval()


@FLOATS
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("kind", ["Conv2d", "ConvTranspose2d"])
def test_fuse_conv_bn_eval_matches_torch_and_the_unfused_pair(dtype, bias, affine, kind):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_conv = getattr(torch.nn, kind)(2, 3, 3, bias=bias, dtype=torch_dtype).eval()
    conv = getattr(nn, kind)(2, 3, 3, bias=bias, dtype=lucid_dtype).eval()
    copy_state(torch_conv, conv)
    bn, torch_bn = _trained_bn("BatchNorm2d", 3, dtype, affine)
    transpose = kind == "ConvTranspose2d"
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose)
    torch_fused = torch.nn.utils.fuse_conv_bn_eval(torch_conv, torch_bn, transpose)
    rtol, atol = TOLERANCES[dtype]
    for name in ("weight", "bias"):
        expected = getattr(torch_fused, name)
        actual = getattr(fused, name)
        assert isinstance(actual, nn.Parameter)
        assert actual.requires_grad == expected.requires_grad
        assert_close(actual, expected, rtol, atol, name)
    x = _randn(dtype, 2, 2, 5, 5)
    assert_close(fused(lucid.tensor(x)), bn(conv(lucid.tensor(x))), rtol * 10, atol * 10)
    assert fused is not conv


@FLOATS
@pytest.mark.parametrize("features", [4, 1])
def test_fuse_linear_bn_eval_matches_torch(dtype, features):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_linear = torch.nn.Linear(5, 4, dtype=torch_dtype).eval()
    linear = nn.Linear(5, 4, dtype=lucid_dtype).eval()
    copy_state(torch_linear, linear)
    bn, torch_bn = _trained_bn("BatchNorm1d", features, dtype)
    fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    torch_fused = torch.nn.utils.fuse_linear_bn_eval(torch_linear, torch_bn)
    rtol, atol = TOLERANCES[dtype]
    assert_close(fused.weight, torch_fused.weight, rtol, atol, "weight")
    assert_close(fused.bias, torch_fused.bias, rtol, atol, "bias")


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return type(error), str(error)
    return None


@pytest.mark.parametrize(
    "call",
    [
        lambda nn: nn.utils.fuse_conv_bn_eval(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)),
        lambda nn: nn.utils.fuse_linear_bn_eval(nn.Linear(3, 4).eval(), nn.BatchNorm1d(3).eval()),
        lambda nn: nn.utils.fuse_linear_bn_eval(nn.Linear(3, 4), nn.BatchNorm1d(4).eval()),
        lambda nn: nn.utils.skip_init(int),
        lambda nn: nn.utils.skip_init(nn.ReLU),
    ],
)
def test_misuse_raises_torch_errors(call):
    expected = _error(lambda: call(torch.nn))
    assert expected is not None
    assert _error(lambda: call(nn)) == expected


def test_skip_init_builds_the_module():
    layer = nn.utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert repr(layer) == repr(torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, bias=False))
    assert tuple(layer.weight.shape) == (4, 3)


def test_clip_grad_norm_is_the_deprecated_spelling_of_clip_grad_norm_():
    param = nn.Parameter(lucid.tensor([3.0, 4.0]))
    param.grad = lucid.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning, match=r"`lucid.nn.utils.clip_grad_norm` is now deprecated"):
        total = nn.utils.clip_grad_norm(param, 1.0)
    assert float(total) == 5.0
    np.testing.assert_allclose(param.grad.numpy(), [0.6, 0.8], rtol=1e-5)


def test_memory_format_conversions_return_the_module():
    conv = nn.Conv2d(2, 3, 3)
    assert nn.utils.convert_conv2d_weight_memory_format(conv, None) is conv
    assert nn.utils.convert_conv3d_weight_memory_format(conv, None) is conv
