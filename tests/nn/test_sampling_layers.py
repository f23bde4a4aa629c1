"""Padding, upsampling, pixel-shuffle, distance and activation layers against torch.nn."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import check_forward_backward, check_repr_and_keys
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def _layers():
    return [
        ("ZeroPad1d", (2,), (2, 3, 5)),
        ("ZeroPad2d", ((1, 2, 0, 1),), (2, 3, 4, 5)),
        ("ZeroPad3d", (1,), (1, 2, 3, 4, 5)),
        ("ConstantPad1d", ((1, -2), 1.5), (2, 3, 5)),
        ("ConstantPad2d", (1, -0.5), (2, 3, 4, 5)),
        ("ConstantPad3d", ((1, 0, 0, 2, 1, 1), 2.0), (2, 3, 4, 5)),
        ("ReflectionPad1d", (2,), (2, 3, 5)),
        ("ReflectionPad2d", ((1, 2, 3, 0),), (2, 3, 4, 5)),
        ("ReflectionPad3d", (1,), (1, 2, 3, 4, 5)),
        ("ReplicationPad1d", ((3, 1),), (3, 5)),
        ("ReplicationPad2d", (2,), (2, 3, 4, 5)),
        ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),), (2, 3, 4, 5)),
        ("CircularPad1d", ((3, 1),), (2, 3, 5)),
        ("CircularPad2d", (2,), (2, 3, 4, 5)),
        ("CircularPad3d", (1,), (1, 2, 3, 4, 5)),
        ("PixelShuffle", (2,), (2, 8, 3, 4)),
        ("PixelUnshuffle", (2,), (2, 2, 4, 6)),
        ("Upsample", (None, 2.0), (2, 3, 4, 5)),
        ("Upsample", ((5, 7), None, "bilinear"), (2, 3, 4, 5)),
        ("Upsample", (None, 1.5, "bilinear", True), (2, 3, 4, 5)),
        ("Upsample", (None, 3, "linear"), (2, 3, 4)),
        ("UpsamplingNearest2d", (None, 2), (2, 3, 4, 5)),
        ("UpsamplingBilinear2d", ((6, 3),), (2, 3, 4, 5)),
        ("ReLU6", (), (3, 4)),
        ("SELU", (), (3, 4)),
        ("CELU", (0.5,), (3, 4)),
        ("PReLU", (), (2, 3, 4)),
        ("PReLU", (3, 0.1), (2, 3, 4)),
        ("Hardsigmoid", (), (3, 4)),
        ("Hardswish", (), (3, 4)),
        ("Hardshrink", (0.3,), (3, 4)),
        ("Softshrink", (0.3,), (3, 4)),
        ("Softsign", (), (3, 4)),
        ("Tanhshrink", (), (3, 4)),
        ("LogSigmoid", (), (3, 4)),
        ("Threshold", (0.1, 20.0), (3, 4)),
        ("GLU", (), (3, 4)),
        ("GLU", (0,), (4, 3)),
        ("Softmin", (1,), (3, 4)),
        ("Softmax2d", (), (2, 3, 4, 5)),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "args", "shape"), _layers(), ids=lambda v: str(v))
def test_layer_matches_torch(name, args, shape, dtype):
    rng = np.random.default_rng(0)
    torch_layer = getattr(torch.nn, name)(*args)
    lucid_layer = getattr(nn, name)(*args)
    if dtype == "float64":
        torch_layer, lucid_layer = torch_layer.double(), lucid_layer.double()
    check_repr_and_keys(torch_layer, lucid_layer)
    x = rng.uniform(-2.0, 2.0, shape).astype(dtype)
    check_forward_backward(torch_layer, lucid_layer, [x], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "args"), [
    ("CosineSimilarity", ()), ("CosineSimilarity", (0, 1e-6)), ("PairwiseDistance", ()),
    ("PairwiseDistance", (1.0, 1e-6, True)),
])  # fmt: skip
def test_distance_layer_matches_torch(name, args, dtype):
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-2.0, 2.0, (4, 5)).astype(dtype) for _ in range(2))
    check_forward_backward(getattr(torch.nn, name)(*args), getattr(nn, name)(*args), [a, b], dtype)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, 2, "same", "valid"])
def test_conv_padding_mode_matches_torch(mode, padding):
    rng = np.random.default_rng(2)
    for conv, shape in (("Conv1d", (2, 3, 7)), ("Conv2d", (2, 3, 6, 7))):
        torch_conv = getattr(torch.nn, conv)(3, 4, 3, padding=padding, padding_mode=mode)
        torch_conv = torch_conv.double()
        lucid_conv = getattr(nn, conv)(3, 4, 3, padding=padding, padding_mode=mode).double()
        check_repr_and_keys(torch_conv, lucid_conv)
        check_forward_backward(torch_conv, lucid_conv, [rng.standard_normal(shape)], "float64")


def test_pad_gradients_pass_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(3)
    for mode in ("constant", "reflect", "replicate", "circular"):
        x = lucid.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)

        def padded(t, mode=mode):
            return nn.functional.pad(t, (2, 1), mode=mode)

        assert lucid.autograd.gradcheck(padded, (x,))
        assert lucid.autograd.gradgradcheck(padded, (x,))
    for mode in ("nearest", "bilinear"):
        x = lucid.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)

        def resized(t, mode=mode):
            return nn.functional.interpolate(t, size=(5, 3), mode=mode)

        assert lucid.autograd.gradcheck(resized, (x,))
        assert lucid.autograd.gradgradcheck(resized, (x,))
