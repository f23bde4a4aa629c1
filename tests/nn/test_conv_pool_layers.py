"""Parity of the 3-D and transposed convolution layers and of the pooling layers beyond
MaxPool/AvgPool 1-D/2-D with torch.nn: outputs, gradients, state dicts, repr, argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn
from tests.nn.parity import DTYPES, check_forward_backward, check_repr_and_keys, check_sgd_steps
from tests.torch_oracle import requires_torch, torch

FLOATS = pytest.mark.parametrize("dtype", ["float64", "float32"])


def _randn(dtype: str, *shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dtype][2])


def _pair(name: str, dtype: str, *args, **kwargs):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_module = getattr(torch.nn, name)(*args, dtype=torch_dtype, **kwargs)
    lucid_module = getattr(nn, name)(*args, dtype=lucid_dtype, **kwargs)
    return torch_module, lucid_module


# ------------------------------------------------------------ convolutions
@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"stride": (2, 1, 2), "padding": 1, "dilation": (1, 2, 1)},
        {"padding": "same", "groups": 2},
        {"padding": 1, "padding_mode": "reflect", "bias": False},
        {"padding": (1, 0, 2), "padding_mode": "circular"},
        {"padding": 1, "padding_mode": "replicate"},
    ],
)
def test_conv3d_parity(dtype, kwargs):
    torch_module, lucid_module = _pair("Conv3d", dtype, 4, 6, 3, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 2, 4, 5, 6, 5)], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 2, 4, 4, 5, 4)], dtype)


@requires_torch
@FLOATS
@pytest.mark.parametrize(
    ("name", "shape", "kwargs"),
    [
        ("ConvTranspose1d", (2, 4, 5), {}),
        ("ConvTranspose1d", (2, 4, 5), {"stride": 3, "padding": 1, "output_padding": 2}),
        ("ConvTranspose1d", (4, 5), {"groups": 2, "dilation": 2, "bias": False}),
        ("ConvTranspose3d", (2, 4, 3, 4, 3), {}),
        ("ConvTranspose3d", (2, 4, 3, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
        ("ConvTranspose3d", (4, 3, 2, 3), {"groups": 2, "dilation": (1, 2, 1), "bias": False}),
    ],
)
def test_conv_transpose_parity(dtype, name, shape, kwargs):
    torch_module, lucid_module = _pair(name, dtype, 4, 6, 3, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, *shape)], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, *shape, seed=1)], dtype)


@requires_torch
@pytest.mark.parametrize(
    ("name", "shape", "output_size"),
    [
        ("ConvTranspose1d", (2, 6, 5), [10]),
        ("ConvTranspose1d", (2, 6, 5), [2, 4, 9]),
        ("ConvTranspose3d", (2, 6, 3, 3, 2), [6, 5, 4]),
        ("ConvTranspose3d", (6, 3, 3, 2), [4, 5, 6, 3]),
    ],
)
def test_conv_transpose_output_size(name, shape, output_size):
    torch_module, lucid_module = _pair(name, "float64", 6, 4, 3, stride=2, padding=1)
    check_forward_backward(
        torch_module,
        lucid_module,
        [_randn("float64", *shape)],
        "float64",
        kwargs={"output_size": output_size},
    )


@requires_torch
@pytest.mark.parametrize(
    ("name", "shape", "output_size"),
    [("ConvTranspose1d", (2, 6, 5), [12]), ("ConvTranspose3d", (2, 6, 3, 3, 2), [5, 5])],
)
def test_conv_transpose_bad_output_size_raises_torch_error(name, shape, output_size):
    torch_module, lucid_module = _pair(name, "float64", 6, 4, 3, stride=2, padding=1)
    with pytest.raises(ValueError) as torch_error:
        torch_module(torch.zeros(shape, dtype=torch.float64), output_size=output_size)
    with pytest.raises(ValueError) as lucid_error:
        lucid_module(lucid.zeros(*shape, dtype=lucid.float64), output_size=output_size)
    assert str(lucid_error.value) == str(torch_error.value).replace("torch.Size", "lucid.Size")


@requires_torch
def test_conv_transpose_rejects_padding_modes_as_torch():
    for name in ("ConvTranspose1d", "ConvTranspose3d"):
        with pytest.raises(ValueError) as torch_error:
            getattr(torch.nn, name)(2, 2, 3, padding_mode="reflect")
        with pytest.raises(ValueError) as lucid_error:
            getattr(nn, name)(2, 2, 3, padding_mode="reflect")
        assert str(lucid_error.value) == str(torch_error.value)


# ----------------------------------------------------------------- pooling
POOLS = [
    ("MaxPool3d", (2,), {}, (2, 3, 4, 6, 4)),
    ("MaxPool3d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 5, 6, 7)),
    ("AvgPool3d", (2,), {}, (2, 3, 4, 6, 4)),
    ("AvgPool3d", ((3, 2, 3),), {"stride": 2, "padding": 1, "count_include_pad": False},
     (3, 5, 6, 7)),
    ("AvgPool3d", (2,), {"divisor_override": 3, "ceil_mode": True}, (1, 2, 5, 4, 5)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 3, 5, 4, 7)),
    ("AdaptiveAvgPool3d", (1,), {}, (3, 5, 4, 7)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveMaxPool2d", ((3, 4),), {}, (2, 3, 7, 5)),
    ("AdaptiveMaxPool2d", ((None, 2),), {"return_indices": True}, (3, 7, 5)),
    ("AdaptiveMaxPool3d", (2,), {"return_indices": True}, (2, 3, 5, 4, 7)),
    ("LPPool1d", (2, 3), {"stride": 2}, (2, 3, 9)),
    ("LPPool2d", (3.0, (2, 3)), {"ceil_mode": True}, (2, 3, 7, 8)),
    ("LPPool3d", (1.5, 2), {"stride": 1}, (2, 3, 4, 3, 4)),
]  # fmt: skip


@requires_torch
@FLOATS
@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), POOLS)
def test_pooling_parity(dtype, name, args, kwargs, shape):
    torch_module, lucid_module = (
        getattr(torch.nn, name)(*args, **kwargs),
        getattr(nn, name)(*args, **kwargs),
    )
    check_repr_and_keys(torch_module, lucid_module)
    data = _randn(dtype, *shape)
    if name.startswith("LP"):
        # a fractional power of a negative window sum is NaN in both; keep the values real
        data = np.abs(data) + 0.1
    check_forward_backward(torch_module, lucid_module, [data], dtype)


@requires_torch
@pytest.mark.parametrize(
    ("dims", "shape"), [(1, (2, 3, 8)), (2, (2, 3, 6, 8)), (3, (2, 3, 4, 6, 4)), (2, (3, 6, 8))]
)
def test_max_unpool_inverts_max_pool_as_torch(dims, shape):
    data = _randn("float64", *shape)
    torch_pool = getattr(torch.nn, f"MaxPool{dims}d")(2, return_indices=True)
    values, indices = torch_pool(torch.tensor(data))
    torch_module = getattr(torch.nn, f"MaxUnpool{dims}d")(2)
    lucid_module = getattr(nn, f"MaxUnpool{dims}d")(2)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [values.numpy(), indices.numpy()], "float64")
    size = [s + 1 for s in shape[-dims:]]
    check_forward_backward(
        torch_module,
        lucid_module,
        [values.numpy(), indices.numpy()],
        "float64",
        kwargs={"output_size": size},
    )


@requires_torch
@pytest.mark.parametrize(
    ("dims", "kwargs", "shape"),
    [
        (2, {"output_size": (4, 3)}, (2, 3, 9, 8)),
        (2, {"output_ratio": 0.5, "return_indices": True}, (3, 9, 8)),
        (3, {"output_size": 3}, (2, 3, 7, 6, 8)),
        (3, {"output_ratio": (0.5, 0.6, 0.4)}, (2, 3, 7, 6, 8)),
    ],
)
def test_fractional_max_pool_parity_with_given_samples(dims, kwargs, shape):
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = np.random.default_rng(1).uniform(size=(batch, shape[-dims - 1], dims))
    torch_module = getattr(torch.nn, f"FractionalMaxPool{dims}d")(
        2, _random_samples=torch.tensor(samples), **kwargs
    )
    lucid_module = getattr(nn, f"FractionalMaxPool{dims}d")(
        2, _random_samples=lucid.tensor(samples), **kwargs
    )
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn("float64", *shape)], "float64")


def test_fractional_max_pool_draws_samples_from_lucids_generator():
    x = lucid.randn(2, 3, 9, 9)
    lucid.manual_seed(5)
    first = nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)[1]
    lucid.manual_seed(5)
    again = nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)[1]
    lucid.manual_seed(6)
    other = nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)[1]
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert (first.numpy() != other.numpy()).any()


@requires_torch
@pytest.mark.parametrize(
    ("dims", "kwargs"),
    [
        (2, {}),
        (2, {"output_size": 2, "output_ratio": 0.5}),
        (2, {"output_ratio": 1.5}),
        (3, {"output_ratio": (0.5, 2, 0.5)}),
        (3, {}),
    ],
)
def test_fractional_max_pool_bad_arguments_raise_torch_errors(dims, kwargs):
    with pytest.raises(ValueError) as torch_error:
        getattr(torch.nn, f"FractionalMaxPool{dims}d")(2, **kwargs)
    with pytest.raises(ValueError) as lucid_error:
        getattr(nn, f"FractionalMaxPool{dims}d")(2, **kwargs)
    assert str(lucid_error.value) == str(torch_error.value)
