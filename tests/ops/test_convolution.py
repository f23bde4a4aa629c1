"""Convolution and pooling behaviour the op catalogue cannot express: errors, 'same' padding."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as LF
from tests.torch_oracle import functional as F
from tests.torch_oracle import requires_torch, torch


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _error(call_lucid, call_torch) -> None:
    with pytest.raises(Exception) as torch_error:
        call_torch()
    with pytest.raises(type(torch_error.value)) as lucid_error:
        call_lucid()
    assert str(lucid_error.value) == str(torch_error.value)


@requires_torch
@pytest.mark.parametrize(
    ("op", "input_shape", "weight_shape", "kwargs"),
    [
        ("conv2d", (3, 4), (4, 3, 3, 3), {}),
        ("conv2d", (2, 4, 5, 5), (4, 3, 3, 3), {}),
        ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {"groups": 2}),
        ("conv2d", (1, 3, 2, 2), (4, 3, 3, 3), {}),
        ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {"stride": 2, "padding": "same"}),
        ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {"padding": "foo"}),
        ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {"stride": 0}),
        ("conv2d", (2, 3, 8, 8), (4, 3, 3, 3), {"padding": -1}),
        ("conv1d", (3, 4, 5, 5), (4, 3, 3), {}),
        ("conv_transpose2d", (2, 3, 8, 8), (4, 3, 3, 3), {}),
        ("conv_transpose2d", (2, 3, 8, 8), (3, 2, 3, 3), {"output_padding": 1}),
    ],
)
def test_convolution_errors_match_torch(rng, op, input_shape, weight_shape, kwargs):
    x = rng.standard_normal(input_shape)
    w = rng.standard_normal(weight_shape)
    _error(
        lambda: getattr(LF, op)(lucid.tensor(x), lucid.tensor(w), **kwargs),
        lambda: getattr(F, op)(torch.tensor(x), torch.tensor(w), **kwargs),
    )


@requires_torch
def test_bias_size_error_matches_torch(rng):
    x, w, b = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((4, 3, 3, 3)), np.ones(3)
    _error(
        lambda: LF.conv2d(lucid.tensor(x), lucid.tensor(w), lucid.tensor(b)),
        lambda: F.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b)),
    )


@requires_torch
@pytest.mark.parametrize(
    ("op", "shape", "kwargs"),
    [
        ("max_pool2d", (2, 3, 8, 8), {"kernel_size": 3, "padding": 2}),
        ("avg_pool2d", (2, 3, 8, 8), {"kernel_size": 3, "padding": 2}),
        ("max_pool2d", (1, 1, 2, 2), {"kernel_size": 3}),
        ("max_pool2d", (2, 3, 8, 8), {"kernel_size": 2, "stride": 0}),
        ("avg_pool2d", (2, 3, 8, 8), {"kernel_size": 2, "divisor_override": 0}),
        ("max_pool1d", (2, 3, 4, 5), {"kernel_size": 2}),
        ("avg_pool1d", (2, 3, 4, 5), {"kernel_size": 2}),
        ("adaptive_avg_pool2d", (3, 4), {"output_size": 2}),
    ],
)
def test_pooling_errors_match_torch(rng, op, shape, kwargs):
    x = rng.standard_normal(shape)
    _error(
        lambda: getattr(LF, op)(lucid.tensor(x), **kwargs),
        lambda: getattr(F, op)(torch.tensor(x), **kwargs),
    )


@requires_torch
@pytest.mark.parametrize(
    ("weight_shape", "dilation", "groups"),
    [((4, 3, 3, 3), 1, 1), ((4, 3, 2, 2), 1, 1), ((4, 3, 2, 3), (3, 2), 1), ((6, 1, 2, 2), 1, 3)],
)
def test_same_padding_matches_torch(rng, weight_shape, dilation, groups):
    x = rng.standard_normal((2, 3, 6, 5))
    w = rng.standard_normal(weight_shape)
    lx, lw = lucid.tensor(x, requires_grad=True), lucid.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    out = LF.conv2d(lx, lw, padding="same", dilation=dilation, groups=groups)
    with warnings.catch_warnings():
        # PyTorch warns that even kernels need a zero-padded copy; lucid pads silently
        warnings.simplefilter("ignore", UserWarning)
        expected = F.conv2d(tx, tw, padding="same", dilation=dilation, groups=groups)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), atol=1e-12)


def test_grad_fn_names_match_torch(rng):
    x = lucid.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((4, 3, 3, 3)))
    assert LF.conv2d(x, w).grad_fn.name() == "ConvolutionBackward0"
    assert LF.conv_transpose2d(x, w.transpose(0, 1)).grad_fn.name() == "ConvolutionBackward0"
    assert LF.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert LF.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert LF.adaptive_avg_pool2d(x, 3).grad_fn.name() == "AdaptiveAvgPool2DBackward0"


@requires_torch
@pytest.mark.parametrize(
    ("size", "kwargs"),
    [
        ((2, 3, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
        ((2, 3, 6, 6), {"kernel_size": 2}),  # windows tiling the input take a faster path
        ((2, 3, 6, 6), {"kernel_size": (3, 2)}),
    ],
)
def test_max_pool_indices_match_torch_with_nan_and_inf(rng, size, kwargs):
    x = rng.choice([np.nan, np.inf, -np.inf, 0.0, 1.0], size=size)
    values, indices = LF.max_pool2d(lucid.tensor(x), return_indices=True, **kwargs)
    expected_values, expected_indices = F.max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
    np.testing.assert_array_equal(values.numpy(), expected_values.numpy())
    np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    assert indices.dtype == lucid.int64


def test_float32_stays_float32(rng):
    x = lucid.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), requires_grad=True)
    out = LF.max_pool2d(LF.conv2d(x, w, padding=1), 2)
    out.sum().backward()
    assert out.dtype == x.grad.dtype == w.grad.dtype == lucid.float32


@requires_torch
def test_max_pool_tiles_route_nonfinite_gradients_to_the_argmax_only(rng):
    # ReLU-like input: many windows tie at 0, so the first-of-ties rule decides the routing
    x = np.maximum(rng.standard_normal((2, 3, 6, 8)), 0.0)
    grad = rng.standard_normal((2, 3, 3, 4))
    grad[0, 0, 0, :2] = [np.nan, np.inf]
    lucid_x = lucid.tensor(x, requires_grad=True)
    torch_x = torch.tensor(x, requires_grad=True)
    LF.max_pool2d(lucid_x, 2).backward(lucid.tensor(grad))
    F.max_pool2d(torch_x, 2).backward(torch.tensor(grad))
    np.testing.assert_array_equal(lucid_x.grad.numpy(), torch_x.grad.numpy())


@requires_torch
@pytest.mark.parametrize(
    ("dims", "kwargs"),
    [
        (2, {"padding": 1}),
        (2, {"padding": (2, 1), "dilation": (2, 1), "bias": False}),
        (2, {"stride": 2, "padding": 1}),
        (2, {"groups": 2, "padding": 1}),
        (1, {"padding": 2, "dilation": 2}),
    ],
)
def test_conv_built_block_by_block_matches_torch(rng, monkeypatch, dims, kwargs):
    # a one-byte budget gives every image its own window-matrix block
    monkeypatch.setattr(lucid.ops.convolution, "_BLOCK_BYTES", 1)
    use_bias = kwargs.pop("bias", True)
    spatial = (7, 6) if dims == 2 else (9,)
    x = rng.standard_normal((3, 4, *spatial))
    w = rng.standard_normal((6, 4 // kwargs.get("groups", 1), *(3,) * dims))
    b = rng.standard_normal(6) if use_bias else None
    op = "conv2d" if dims == 2 else "conv1d"
    results = []
    for lib, functional in ((lucid, LF), (torch, F)):
        inputs = [lib.tensor(a, requires_grad=True) for a in (x, w) + ((b,) if use_bias else ())]
        out = getattr(functional, op)(*inputs, **kwargs)
        out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in inputs])
    for lucid_array, torch_array in zip(*results):
        np.testing.assert_allclose(lucid_array, torch_array, rtol=1e-10, atol=1e-10)


def test_conv_keeps_no_window_matrix_for_backward(rng):
    # the window matrix is kh * kw times the input; backward rebuilds it block by block
    x = lucid.tensor(rng.standard_normal((4, 16, 32, 32)).astype(np.float32), requires_grad=True)
    w = lucid.tensor(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), requires_grad=True)
    tracemalloc.start()
    try:
        out = LF.conv2d(x, w, padding=1)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    output_bytes = out.numel() * 4
    assert held < 1.5 * output_bytes, (held, output_bytes)
    out.sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape


# conv1d/2d/3d get all seven arguments by position, as the nn modules pass them, so that
# PyTorch's overload error lists the same arguments as lucid's. A string padding for
# conv_transpose is left out: it comes by keyword, and PyTorch then names no position
# (tests/ops/test_pooling.py).
_ARGUMENT_TYPE_CASES = [
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, (1, 2.5), 0, 1, 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, 1, [1, 2.5], 1, 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, 1, "same", (1, 2.5), 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, [2.5, 1], 0, 1, 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, np.float64(2), 0, 1, 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, 1, None, 1, 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, 2.5, "same", 1, 1)),
    ("conv2d", (1, 4, 6, 6), (6, 4, 3, 3), (None, 1, 0, 1, 1.0)),
    ("conv1d", (1, 3, 8), (4, 3, 3), (None, (2.5,), (0,), (1,), 1)),
    ("conv3d", (1, 2, 3, 3, 3), (3, 2, 2, 2, 2), (None, 1, 0, (1, 1, 2.5), 1)),
    ("conv3d", (1, 2, 3, 3, 3), (3, 2, 2, 2, 2), (None, 1, 0, (1, 1, 1), 1.5)),
    ("conv_transpose1d", (1, 3, 8), (3, 2, 3), (None, 2.5)),
    ("conv_transpose2d", (1, 4, 6, 6), (4, 2, 3, 3), (None, (1, 2.5))),
    ("conv_transpose2d", (1, 4, 6, 6), (4, 2, 3, 3), (None, 2, 0, 0.5)),
    ("conv_transpose2d", (1, 4, 6, 6), (4, 2, 3, 3), (None, 1, 0, 0, 1.0)),
    ("conv_transpose2d", (1, 4, 6, 6), (4, 2, 3, 3), (None, 1, 0, 0, 1, [2.5])),
    ("conv_transpose3d", (1, 2, 3, 3, 3), (2, 2, 2, 2, 2), (None, None)),
]


@requires_torch
@pytest.mark.parametrize(("op", "input_shape", "weight_shape", "args"), _ARGUMENT_TYPE_CASES)
def test_convolution_argument_type_errors_match_torch(rng, op, input_shape, weight_shape, args):
    x = rng.standard_normal(input_shape)
    w = rng.standard_normal(weight_shape)
    _error(
        lambda: getattr(LF, op)(lucid.tensor(x), lucid.tensor(w), *args),
        lambda: getattr(F, op)(torch.tensor(x), torch.tensor(w), *args),
    )


# float64, single image, one group: PyTorch's reference kernels, whose messages do not depend
# on oneDNN
@requires_torch
@pytest.mark.parametrize(
    ("op", "input_shape", "weight_shape"),
    [
        ("conv1d", (1, 3, 8), (4, 3, 0)),
        ("conv2d", (1, 4, 6, 6), (6, 4, 0, 3)),
        ("conv3d", (1, 2, 3, 3, 3), (2, 2, 0, 2, 2)),
        ("conv_transpose1d", (1, 3, 8), (3, 2, 0)),
        ("conv_transpose1d", (1, 3, 8), (3, 0, 3)),
        ("conv_transpose2d", (1, 4, 6, 6), (4, 0, 3, 3)),
        ("conv_transpose2d", (1, 4, 6, 6), (4, 0, 0, 3)),
        ("conv_transpose3d", (1, 2, 3, 3, 3), (2, 0, 2, 2, 2)),
        ("conv_transpose3d", (1, 2, 3, 3, 3), (2, 2, 0, 2, 2)),
    ],
)
def test_empty_kernel_errors_match_torch(rng, op, input_shape, weight_shape):
    x = rng.standard_normal(input_shape)
    w = np.zeros(weight_shape)
    _error(
        lambda: getattr(LF, op)(lucid.tensor(x), lucid.tensor(w)),
        lambda: getattr(F, op)(torch.tensor(x), torch.tensor(w)),
    )


@requires_torch
def test_integer_like_sizes_are_accepted(rng):
    x = rng.standard_normal((1, 4, 6, 6))
    w = rng.standard_normal((6, 4, 3, 3))
    strides = [
        (np.int64(2), np.int64(2)),
        (lucid.tensor(2), torch.tensor(2)),
        ((2, np.int32(2)), (2, np.int32(2))),
        ((2, lucid.tensor(2)), (2, torch.tensor(2))),
        # past the first item PyTorch's parser takes a bool as an int
        ((2, True), (2, True)),
    ]
    for lucid_stride, torch_stride in strides:
        expected = F.conv2d(torch.tensor(x), torch.tensor(w), None, torch_stride).numpy()
        actual = LF.conv2d(lucid.tensor(x), lucid.tensor(w), None, lucid_stride).numpy()
        np.testing.assert_allclose(actual, expected)


@requires_torch
def test_empty_kernel_over_no_input_channels_answers():
    empty = LF.conv2d(lucid.zeros(1, 0, 4, 4), lucid.zeros(6, 0, 0, 3))
    assert empty.shape == tuple(F.conv2d(torch.zeros(1, 0, 4, 4), torch.zeros(6, 0, 0, 3)).shape)
