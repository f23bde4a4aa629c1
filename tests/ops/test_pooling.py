"""Pooling and N-d convolution behaviour the op catalogue cannot express: argmax indices and
NaN/inf windows against PyTorch, PyTorch's errors, and inf/NaN reaching only what it touches."""

from __future__ import annotations

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


def _both(op: str, x: np.ndarray, **kwargs):
    return getattr(LF, op)(lucid.tensor(x), **kwargs), getattr(F, op)(torch.tensor(x), **kwargs)


@requires_torch
@pytest.mark.parametrize(
    ("op", "shape", "kwargs"),
    [
        ("max_pool3d", (2, 2, 5, 4, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
        ("max_pool3d", (2, 4, 5, 6), {"kernel_size": 2, "dilation": 2, "ceil_mode": True}),
        ("max_pool1d", (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}),
        ("adaptive_max_pool1d", (2, 3, 9), {"output_size": 4}),
        ("adaptive_max_pool2d", (2, 3, 7, 9), {"output_size": (3, 4)}),
        ("adaptive_max_pool2d", (2, 3, 4), {"output_size": (6, 5)}),
        ("adaptive_max_pool3d", (2, 2, 5, 7, 6), {"output_size": (2, 3, 4)}),
    ],
)
def test_max_pool_indices_match_torch_with_nan_and_inf(rng, op, shape, kwargs):
    # the first maximum wins, a later NaN beats everything, an all -inf window points at its
    # first real element
    x = rng.choice([np.nan, np.inf, -np.inf, 0.0, 1.0, -np.inf], size=shape)
    (values, indices), (expected, expected_indices) = _both(op, x, return_indices=True, **kwargs)
    np.testing.assert_array_equal(values.numpy(), expected.numpy())
    np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    assert indices.dtype == lucid.int64


@requires_torch
@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool_indices_match_torch_with_nan_and_inf(rng, dims):
    shape = (2, 3, *(9,) * dims)
    x = rng.choice([np.nan, np.inf, -np.inf, 0.0, 1.0], size=shape)
    samples = rng.uniform(size=(2, 3, dims))
    op = f"fractional_max_pool{dims}d"
    lucid_result = getattr(LF, op)(
        lucid.tensor(x), 2, output_size=4, return_indices=True,
        _random_samples=lucid.tensor(samples),
    )  # fmt: skip
    torch_result = getattr(F, op)(
        torch.tensor(x), 2, output_size=4, return_indices=True,
        _random_samples=torch.tensor(samples),
    )  # fmt: skip
    for lucid_array, torch_array in zip(lucid_result, torch_result):
        np.testing.assert_array_equal(lucid_array.numpy(), torch_array.numpy())


@requires_torch
@pytest.mark.parametrize(
    ("op", "shape", "kwargs"),
    [
        ("adaptive_avg_pool2d", (2, 3, 7, 9), {"output_size": (3, 4)}),
        ("adaptive_avg_pool3d", (2, 2, 5, 7, 6), {"output_size": (2, 3, 4)}),
        ("adaptive_avg_pool1d", (2, 3, 9), {"output_size": 4}),
        ("avg_pool3d", (2, 2, 5, 4, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ],
)
def test_average_pools_spread_inf_and_nan_only_to_their_windows(rng, op, shape, kwargs):
    x = rng.standard_normal(shape)
    x[0, 0].flat[0] = np.inf
    x[1, 1].flat[-1] = np.nan
    x[0, 1].flat[3] = 1e30
    lucid_result, torch_result = _both(op, x, **kwargs)
    np.testing.assert_array_equal(np.isnan(lucid_result.numpy()), np.isnan(torch_result.numpy()))
    np.testing.assert_array_equal(np.isinf(lucid_result.numpy()), np.isinf(torch_result.numpy()))
    np.testing.assert_allclose(lucid_result.numpy(), torch_result.numpy(), rtol=1e-12)


@requires_torch
@pytest.mark.parametrize(
    ("op", "x_shape", "w_shape", "kwargs"),
    [
        ("conv1d", (2, 4, 6), (4, 2, 2), {"groups": 2}),
        ("conv2d", (2, 3, 5, 4), (4, 3, 3, 2), {}),
        ("conv2d", (1, 2, 6, 5), (3, 2, 2, 2), {"dilation": (2, 1), "padding": (1, 0)}),
        ("conv3d", (2, 3, 4, 3, 4), (4, 3, 2, 2, 3), {}),
    ],
)
def test_conv_gradients_with_inf_and_nan_stay_where_torch_has_them(rng, op, x_shape, w_shape,
                                                                   kwargs):  # fmt: skip
    # stride-1 convolutions compute positions past each plane's edge and drop them; an inf
    # or NaN weight or input must not leak from those into the gradients
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    x.flat[5] = np.inf
    w.flat[1] = np.nan
    w.flat[-1] = -np.inf
    grad = rng.standard_normal(getattr(F, op)(torch.tensor(x), torch.tensor(w), **kwargs).shape)
    results = []
    for lib, functional in ((lucid, LF), (torch, F)):
        inputs = [lib.tensor(a, requires_grad=True) for a in (x, w)]
        getattr(functional, op)(*inputs, **kwargs).backward(lib.tensor(grad))
        results.append([t.grad.numpy() for t in inputs])
    for lucid_array, torch_array in zip(*results):
        np.testing.assert_array_equal(np.isnan(lucid_array), np.isnan(torch_array))
        np.testing.assert_array_equal(np.isinf(lucid_array), np.isinf(torch_array))


@requires_torch
def test_conv3d_nan_weight_is_nan_everywhere_as_torch_float64():
    # torch's float32 conv3d answers some of these windows finite; its float64 one, and lucid
    # in both precisions, make every output NaN, as a NaN term must
    x = np.ones((1, 2, 3, 3, 3))
    w = np.ones((1, 2, 2, 2, 2))
    w[0, 1, 1, 0, 1] = np.nan
    expected = F.conv3d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    assert np.isnan(expected).all()
    for dtype in (np.float64, np.float32):
        result = LF.conv3d(lucid.tensor(x.astype(dtype)), lucid.tensor(w.astype(dtype)), padding=1)
        assert np.isnan(result.numpy()).all()


@requires_torch
@pytest.mark.parametrize(
    ("op", "args", "kwargs"),
    [
        ("conv3d", [(2, 3, 5, 5, 5), (4, 3, 3, 3, 3)], {"stride": 0}),
        ("conv3d", [(3, 5, 5), (4, 3, 3, 3, 3)], {}),
        ("conv3d", [(2, 3, 5, 5, 5), (4, 3, 6, 3, 3)], {}),
        ("conv3d", [(2, 4, 5, 5, 5), (4, 3, 3, 3, 3)], {"groups": 2}),
        ("conv3d", [(2, 4, 5, 5, 5), (4, 4, 3, 3)], {}),
        ("conv2d", [(2, 4, 5, 5), (4, 4, 3, 3, 3)], {"stride": (2, 1)}),
        ("conv1d", [(2, 4, 5), (4, 4)], {}),
        ("conv_transpose1d", [(2, 4, 5), (4, 4, 3, 3)], {}),
        ("conv_transpose1d", [(2, 3, 5), (3, 2, 3)], {"stride": 2, "output_padding": 2}),
        ("conv_transpose1d", [(2, 3, 5), (3, 2, 3)], {"output_padding": -1}),
        ("conv_transpose1d", [(2, 4, 5), (3, 2, 3)], {}),
        ("conv_transpose1d", [(2, 3, 5), (3, 2, 3)], {"padding": "same"}),
        (
            "conv_transpose3d",
            [(2, 3, 4, 4, 4), (3, 2, 3, 3, 3)],
            {"stride": 2, "output_padding": 2},
        ),
        ("conv_transpose3d", [(2, 3, 4, 4, 4), (3, 2, 3, 3, 3)], {"padding": "valid"}),
        ("max_pool3d", [(3, 4, 5)], {"kernel_size": 2}),
        ("max_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": (2, 2)}),
        ("max_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 2, "stride": (1, 1)}),
        ("max_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 2, "padding": 2}),
        ("max_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 5}),
        ("max_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 2, "dilation": 0}),
        ("max_pool3d", [(2, 0, 4, 5, 6)], {"kernel_size": 2}),
        ("avg_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 5, "padding": 1}),
        ("avg_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 2, "padding": -1}),
        ("avg_pool3d", [(2, 3, 4, 5, 6)], {"kernel_size": 2, "divisor_override": 0}),
        ("avg_pool3d", [(2, 3, 4, 0, 6)], {"kernel_size": 2}),
        ("adaptive_avg_pool1d", [(2, 3, 4, 5)], {"output_size": 2}),
        ("adaptive_avg_pool1d", [(3, 4)], {"output_size": (2, 2)}),
        ("adaptive_avg_pool3d", [(4, 5, 6)], {"output_size": 2}),
        ("adaptive_avg_pool3d", [(2, 4, 5, 6)], {"output_size": (2, 2)}),
        ("adaptive_avg_pool3d", [(2, 4, 5, 6)], {"output_size": -1}),
        ("adaptive_avg_pool3d", [(2, 3, 0, 5, 6)], {"output_size": 2}),
        ("adaptive_max_pool1d", [(3, 4)], {"output_size": -1}),
        ("adaptive_max_pool2d", [(2, 3, 4, 5, 6)], {"output_size": 2}),
        ("adaptive_max_pool2d", [(3, 4, 5)], {"output_size": (2, 2, 2)}),
        ("adaptive_max_pool3d", [(2, 3, 0, 5, 6)], {"output_size": 2}),
        ("fractional_max_pool2d", [(2, 3, 8, 8)], {"kernel_size": 2}),
        ("fractional_max_pool2d", [(2, 3, 8, 8)], {"kernel_size": 2, "output_ratio": 0.5}),
        ("fractional_max_pool2d", [(2, 3, 8, 8)], {"kernel_size": 4, "output_size": 6}),
        ("fractional_max_pool3d", [(2, 3, 8, 8, 8)], {"kernel_size": 4, "output_size": 6}),
        ("lp_pool2d", [(2, 3, 8, 8)], {"norm_type": 2, "kernel_size": 9}),
        ("lp_pool3d", [(3, 4, 4)], {"norm_type": 2, "kernel_size": 2}),
        ("fractional_max_pool2d", [(8, 8)], {"kernel_size": 2, "output_size": 3}),
        ("fractional_max_pool2d", [(1, 2, 3, 8, 8)], {"kernel_size": 2, "output_size": 3}),
        ("adaptive_avg_pool2d", [(2, 3, 4, 5)], {"output_size": (2, 2, 2)}),
        ("adaptive_max_pool3d", [(2, 3, 4, 5, 6)], {"output_size": (2, 2)}),
    ],
)
def test_errors_match_torch(rng, op, args, kwargs):
    arrays = [rng.standard_normal(shape) for shape in args]
    _error(
        lambda: getattr(LF, op)(*[lucid.tensor(a) for a in arrays], **kwargs),
        lambda: getattr(F, op)(*[torch.tensor(a) for a in arrays], **kwargs),
    )


@requires_torch
@pytest.mark.parametrize(
    ("op", "pooled", "kwargs"),
    [
        ("max_unpool2d", (2, 3, 2, 2), {"kernel_size": 2, "output_size": (9, 9)}),
        ("max_unpool2d", (2, 3, 2, 2), {"kernel_size": 2, "output_size": (9, 9, 9)}),
        ("max_unpool2d", (2, 2, 2), {"kernel_size": 2, "dtype": "int32"}),
        ("max_unpool2d", (2, 3, 2, 2), {"kernel_size": 2, "padding": 3}),
        ("max_unpool2d", (2, 3, 2, 2), {"kernel_size": 2, "index": 100}),
        ("max_unpool2d", (2, 2), {"kernel_size": 2}),
        ("max_unpool1d", (3, 2), {"kernel_size": 2, "index": 100}),
        ("max_unpool1d", (3, 2), {"kernel_size": 2.5}),
        ("max_unpool3d", (2, 3, 2, 2, 2), {"kernel_size": 2, "index": -1}),
        ("max_unpool3d", (2, 3, 2, 2, 2), {"kernel_size": 2, "dtype": "float32"}),
        ("max_unpool3d", (2, 0, 2, 2, 2), {"kernel_size": 2}),
    ],
)
def test_max_unpool_errors_match_torch(rng, op, pooled, kwargs):
    values = rng.standard_normal(pooled)
    index = np.full(pooled, kwargs.pop("index", 0), dtype=kwargs.pop("dtype", "int64"))
    _error(
        lambda: getattr(LF, op)(lucid.tensor(values), lucid.tensor(index), **kwargs),
        lambda: getattr(F, op)(torch.tensor(values), torch.tensor(index), **kwargs),
    )


def test_grad_fn_names_match_torch(rng):
    x3 = lucid.tensor(rng.standard_normal((2, 3, 4, 4, 4)), requires_grad=True)
    x2 = lucid.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
    x1 = lucid.tensor(rng.standard_normal((2, 3, 6)), requires_grad=True)
    w3 = lucid.randn(2, 3, 2, 2, 2, dtype=lucid.float64)
    w1 = lucid.randn(3, 2, 2, dtype=lucid.float64)
    assert LF.conv3d(x3, w3).grad_fn.name() == "ConvolutionBackward0"
    assert LF.conv_transpose1d(x1, w1).grad_fn.name() == "ConvolutionBackward0"
    assert LF.max_pool3d(x3, 2).grad_fn.name() == "MaxPool3DWithIndicesBackward0"
    assert LF.avg_pool3d(x3, 2).grad_fn.name() == "AvgPool3DBackward0"
    assert LF.adaptive_avg_pool3d(x3, 3).grad_fn.name() == "AdaptiveAvgPool3DBackward0"
    assert LF.adaptive_max_pool2d(x2, 3).grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    assert LF.adaptive_max_pool3d(x3, 3).grad_fn.name() == "AdaptiveMaxPool3DBackward0"
    assert LF.adaptive_max_pool1d(x1, 3).grad_fn.name() == "SqueezeBackward1"
    assert LF.lp_pool2d(x2, 2, 2).grad_fn.name() == "PowBackward0"
    assert LF.fractional_max_pool2d(x2, 2, 3).grad_fn.name() == "FractionalMaxPool2DBackward0"
    assert LF.fractional_max_pool3d(x3, 2, 3).grad_fn.name() == "FractionalMaxPool3DBackward0"
    values, indices = LF.max_pool2d(x2, 2, return_indices=True)
    assert LF.max_unpool2d(values, indices, 2).grad_fn.name() == "MaxUnpool2DBackward0"
    values, indices = LF.max_pool3d(x3, 2, return_indices=True)
    assert LF.max_unpool3d(values, indices, 2).grad_fn.name() == "MaxUnpool3DBackward0"


@requires_torch
@pytest.mark.parametrize(
    ("op", "shape", "kwargs"),
    [
        ("max_pool3d", (0, 3, 4, 5, 6), {"kernel_size": 2, "return_indices": True}),
        ("avg_pool3d", (0, 3, 4, 5, 6), {"kernel_size": 2}),
        ("adaptive_max_pool2d", (0, 3, 4, 5), {"output_size": 2, "return_indices": True}),
        ("adaptive_avg_pool3d", (0, 3, 4, 5, 6), {"output_size": 2}),
        ("fractional_max_pool2d", (0, 3, 8, 8), {"kernel_size": 2, "output_size": 3}),
        ("adaptive_max_pool2d", (2, 3, 4, 5), {"output_size": 0}),
    ],
)
def test_empty_batches_and_outputs_match_torch(rng, op, shape, kwargs):
    lucid_result, torch_result = _both(op, rng.standard_normal(shape), **kwargs)
    if not isinstance(torch_result, tuple):
        lucid_result, torch_result = (lucid_result,), (torch_result,)
    for lucid_array, torch_array in zip(lucid_result, torch_result):
        assert tuple(lucid_array.shape) == tuple(torch_array.shape)
        assert lucid_array.numpy().dtype == torch_array.numpy().dtype


@requires_torch
@pytest.mark.parametrize("op", ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"])
def test_transposed_convolution_of_an_empty_batch_matches_torch(op):
    dims = int(op[-2])
    x, w = np.zeros((0, 4, *(3,) * dims)), np.ones((4, 1, *(2,) * dims))
    result = getattr(LF, op)(lucid.tensor(x), lucid.tensor(w), groups=2)
    expected = getattr(F, op)(torch.tensor(x), torch.tensor(w), groups=2)
    assert tuple(result.shape) == tuple(expected.shape)


@requires_torch
@pytest.mark.parametrize(
    ("op", "shape"), [("avg_pool3d", (1, 2, 4, 4, 4)), ("avg_pool2d", (1, 2, 4, 4))]
)
def test_integer_averages_round_toward_zero_as_torch(rng, op, shape):
    x = rng.integers(-9, 9, shape)
    lucid_result, torch_result = _both(op, x, kernel_size=2)
    np.testing.assert_array_equal(lucid_result.numpy(), torch_result.numpy())
