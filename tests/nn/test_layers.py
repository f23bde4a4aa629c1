"""Parity of lucid's layer modules with torch.nn: outputs, gradients, SGD steps, repr, init."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from lucid.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from lucid.nn.modules.dropout import Dropout, Dropout2d
from lucid.nn.modules.flatten import Flatten, Unflatten
from lucid.nn.modules.linear import Bilinear, Identity, Linear
from lucid.nn.modules.normalization import GroupNorm, LayerNorm, RMSNorm
from lucid.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from lucid.nn.modules.sparse import Embedding
from tests.nn.parity import (
    DTYPES,
    TOLERANCES,
    check_forward_backward,
    check_repr_and_keys,
    check_sgd_steps,
    compare_state,
)
from tests.torch_oracle import requires_torch, torch

FLOATS = pytest.mark.parametrize("dtype", ["float64", "float32"])


def _pair(torch_cls, lucid_cls, dtype: str, *args, **kwargs):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_module = torch_cls(*args, dtype=torch_dtype, **kwargs)
    lucid_module = lucid_cls(*args, dtype=lucid_dtype, **kwargs)
    return torch_module, lucid_module


def _randn(dtype: str, *shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dtype][2])


# ------------------------------------------------------------------ linear
@requires_torch
def test_identity_returns_input_and_ignores_arguments():
    module = Identity(3, foo="bar")
    x = lucid.randn(2, 3)
    assert module(x) is x
    assert repr(module) == repr(torch.nn.Identity(3, foo="bar")) == "Identity()"
    assert list(module.state_dict()) == []


@requires_torch
@FLOATS
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 5), (5,)])
def test_linear_parity(dtype, bias, shape):
    torch_module, lucid_module = _pair(torch.nn.Linear, Linear, dtype, 5, 3, bias=bias)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, *shape)], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, *shape)], dtype)


def test_linear_init_bounds_and_reproducible():
    lucid.manual_seed(3)
    module = Linear(20, 30)
    bound = 1 / math.sqrt(20)
    weight, bias = module.weight.detach().numpy(), module.bias.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
    # uniform on (-bound, bound): spread covers most of the range, std ~ bound/sqrt(3)
    assert np.abs(weight).max() > 0.9 * bound
    assert abs(weight.std() - bound / math.sqrt(3)) < 0.1 * bound
    lucid.manual_seed(3)
    again = Linear(20, 30)
    np.testing.assert_array_equal(again.weight.detach().numpy(), weight)
    np.testing.assert_array_equal(again.bias.detach().numpy(), bias)
    assert module.weight.dtype == lucid.get_default_dtype()
    assert module.in_features == 20 and module.out_features == 30
    assert Linear(3, 2, bias=False).bias is None


def test_linear_zero_in_features_gives_zero_bias():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        module = Linear(0, 3)
    assert module.weight.shape == (3, 0)
    np.testing.assert_array_equal(module.bias.detach().numpy(), np.zeros(3, np.float32))


@requires_torch
@FLOATS
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_parity(dtype, bias):
    torch_module, lucid_module = _pair(torch.nn.Bilinear, Bilinear, dtype, 4, 3, 2, bias=bias)
    check_repr_and_keys(torch_module, lucid_module)
    inputs = [_randn(dtype, 2, 5, 4, seed=1), _randn(dtype, 2, 5, 3, seed=2)]
    check_forward_backward(torch_module, lucid_module, inputs, dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: inputs, dtype)


def test_bilinear_init_bounds_and_errors():
    module = Bilinear(16, 3, 5)
    bound = 1 / math.sqrt(16)
    assert np.abs(module.weight.detach().numpy()).max() <= bound
    assert np.abs(module.bias.detach().numpy()).max() <= bound
    with pytest.raises(ValueError, match=r"in1_features must be > 0, but got \(in1_features=0\)"):
        Bilinear(0, 3, 5)


# ----------------------------------------------------------------- dropout
@requires_torch
@pytest.mark.parametrize(
    "cls, torch_cls", [(Dropout, torch.nn.Dropout), (Dropout2d, torch.nn.Dropout2d)]
)
def test_dropout_repr_and_bad_probability(cls, torch_cls):
    assert repr(cls()) == repr(torch_cls())
    assert repr(cls(0.2, inplace=True)) == repr(torch_cls(0.2, inplace=True))
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError) as lucid_error:
            cls(p)
        with pytest.raises(ValueError) as torch_error:
            torch_cls(p)
        assert str(lucid_error.value) == str(torch_error.value)


def test_dropout_train_scales_and_eval_is_identity():
    module = Dropout(0.25)
    x = lucid.ones(200, 50, requires_grad=True)
    y = module(x)
    values = np.unique(y.detach().numpy())
    np.testing.assert_allclose(values, [0.0, 1 / 0.75], rtol=1e-6)
    kept = (y.detach().numpy() != 0).mean()
    assert abs(kept - 0.75) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy(), rtol=1e-6)
    module.eval()
    assert module(x) is x
    assert Dropout(0.0)(x) is x


def test_dropout2d_drops_whole_channels_and_eval_is_identity():
    module = Dropout2d(0.5)
    x = lucid.ones(8, 16, 3, 3)
    y = module(x).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))
    assert set(np.unique(y)) <= {0.0, 2.0}
    module.eval()
    assert module(x) is x


def test_dropout_inplace_writes_into_input():
    x = lucid.ones(10, 10)
    y = Dropout(0.5, inplace=True)(x)
    assert y is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}


# ----------------------------------------------------------- normalization
@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-3}],
)
def test_layer_norm_parity(dtype, kwargs):
    torch_module, lucid_module = _pair(torch.nn.LayerNorm, LayerNorm, dtype, [3, 4], **kwargs)
    # non-trivial affine parameters so their gradients are exercised
    with torch.no_grad():
        for param in torch_module.parameters():
            param.copy_(torch.randn(param.shape, generator=torch.Generator().manual_seed(5)))
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 2, 3, 4)], dtype)
    if list(torch_module.parameters()):
        check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 2, 3, 4)], dtype)


@requires_torch
def test_layer_norm_int_shape_and_init():
    module = LayerNorm(6)
    assert module.normalized_shape == (6,)
    assert repr(module) == repr(torch.nn.LayerNorm(6))
    np.testing.assert_array_equal(module.weight.detach().numpy(), np.ones(6))
    np.testing.assert_array_equal(module.bias.detach().numpy(), np.zeros(6))


@requires_torch
@FLOATS
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"bias": False}])
def test_group_norm_parity(dtype, kwargs):
    torch_module, lucid_module = _pair(torch.nn.GroupNorm, GroupNorm, dtype, 2, 6, **kwargs)
    with torch.no_grad():
        for param in torch_module.parameters():
            param.copy_(torch.randn(param.shape, generator=torch.Generator().manual_seed(5)))
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 3, 6, 2, 2)], dtype)
    if list(torch_module.parameters()):
        check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 3, 6, 5)], dtype)


@requires_torch
def test_group_norm_indivisible_channels_raises():
    with pytest.raises(ValueError) as lucid_error:
        GroupNorm(4, 6)
    with pytest.raises(ValueError) as torch_error:
        torch.nn.GroupNorm(4, 6)
    assert str(lucid_error.value) == str(torch_error.value)


@requires_torch
@FLOATS
@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"eps": 1e-4}])
def test_rms_norm_parity(dtype, kwargs):
    torch_module, lucid_module = _pair(torch.nn.RMSNorm, RMSNorm, dtype, 4, **kwargs)
    with torch.no_grad():
        for param in torch_module.parameters():
            param.copy_(torch.randn(param.shape, generator=torch.Generator().manual_seed(5)))
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 2, 3, 4)], dtype)
    if list(torch_module.parameters()):
        check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 5, 4)], dtype)


# --------------------------------------------------------------- batchnorm
def _randomize(torch_module: torch.nn.Module) -> None:
    """Non-trivial parameters, so their gradients and effect are exercised."""
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for param in torch_module.parameters():
            param.copy_(torch.randn(param.shape, generator=generator, dtype=param.dtype))


@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "cls, torch_cls, shape",
    [
        (BatchNorm1d, torch.nn.BatchNorm1d, (6, 3)),
        (BatchNorm1d, torch.nn.BatchNorm1d, (4, 3, 5)),
        (BatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 2, 3)),
    ],
)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"momentum": None},
        {"momentum": 0.3, "eps": 1e-3},
        {"affine": False},
        {"bias": False},
        {"track_running_stats": False},
    ],
)
def test_batch_norm_parity_train_then_eval(dtype, cls, torch_cls, shape, kwargs):
    torch_module, lucid_module = _pair(torch_cls, cls, dtype, 3, **kwargs)
    _randomize(torch_module)
    check_repr_and_keys(torch_module, lucid_module)
    rtol, atol = TOLERANCES[dtype]
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, *shape)], dtype)
    compare_state(torch_module, lucid_module, rtol, atol)
    if list(torch_module.parameters()):
        check_sgd_steps(
            torch_module, lucid_module, lambda: [_randn(dtype, *shape, seed=7)], dtype, copy=False
        )
    torch_module.eval()
    lucid_module.eval()
    before = {k: v.clone() for k, v in torch_module.state_dict().items()}
    check_forward_backward(
        torch_module, lucid_module, [_randn(dtype, *shape, seed=3)], dtype, copy=False
    )
    # eval mode leaves the running statistics and the batch counter untouched
    compare_state(torch_module, lucid_module, rtol, atol)
    for key, value in torch_module.state_dict().items():
        assert torch.equal(value, before[key])


def test_batch_norm_buffers_counter_and_cumulative_average():
    module = BatchNorm1d(2, momentum=None)
    assert module.num_batches_tracked.dtype == lucid.int64
    assert module.num_batches_tracked.item() == 0
    batches = [np.random.default_rng(i).standard_normal((5, 2)) for i in range(3)]
    for batch in batches:
        module(lucid.tensor(batch, dtype=lucid.float32))
    assert module.num_batches_tracked.item() == 3
    # momentum=None averages the batch statistics with equal weights
    expected_mean = np.mean([b.mean(0) for b in batches], axis=0)
    expected_var = np.mean([b.var(0, ddof=1) for b in batches], axis=0)
    np.testing.assert_allclose(module.running_mean.numpy(), expected_mean, rtol=1e-5)
    np.testing.assert_allclose(module.running_var.numpy(), expected_var, rtol=1e-5)
    module.reset_running_stats()
    assert module.num_batches_tracked.item() == 0
    np.testing.assert_array_equal(module.running_var.numpy(), np.ones(2))


def test_batch_norm_without_running_stats_uses_batch_stats_in_eval():
    module = BatchNorm2d(3, track_running_stats=False).eval()
    assert module.running_mean is None and module.num_batches_tracked is None
    x = lucid.randn(4, 3, 2, 2) * 5 + 2
    y = module(x).detach().numpy()
    np.testing.assert_allclose(y.mean((0, 2, 3)), np.zeros(3), atol=1e-5)


@requires_torch
def test_batch_norm_bad_input_dims_raise_torch_errors():
    for cls, torch_cls, shape in [
        (BatchNorm1d, torch.nn.BatchNorm1d, (2, 3, 4, 5)),
        (BatchNorm2d, torch.nn.BatchNorm2d, (2, 3)),
    ]:
        with pytest.raises(ValueError) as lucid_error:
            cls(3)(lucid.randn(*shape))
        with pytest.raises(ValueError) as torch_error:
            torch_cls(3)(torch.randn(*shape))
        assert str(lucid_error.value) == str(torch_error.value)


# -------------------------------------------------------------------- conv
CONV2D_CASES = [
    {},
    {"stride": 2, "padding": 1},
    {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)},
    {"padding": "same", "dilation": 2},
    {"padding": "same", "kernel_size": (2, 3)},
    {"padding": "valid", "bias": False},
    {"groups": 2, "padding": 1},
]


@requires_torch
@FLOATS
@pytest.mark.parametrize("kwargs", CONV2D_CASES)
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
def test_conv2d_parity(dtype, kwargs):
    kwargs = {"kernel_size": 3, **kwargs}
    torch_module, lucid_module = _pair(torch.nn.Conv2d, Conv2d, dtype, 4, 6, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 2, 4, 7, 6)], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 2, 4, 6, 5)], dtype)


@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"stride": 2, "padding": 2, "dilation": 2}, {"padding": "same"}, {"groups": 2}],
)
def test_conv1d_parity(dtype, kwargs):
    torch_module, lucid_module = _pair(torch.nn.Conv1d, Conv1d, dtype, 4, 2, 3, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 2, 4, 9)], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 3, 4, 8)], dtype)


@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"stride": 2, "padding": 1, "output_padding": 1},
        {"stride": (2, 3), "output_padding": (1, 2), "dilation": 1},
        {"groups": 2, "bias": False, "dilation": 2},
    ],
)
def test_conv_transpose2d_parity(dtype, kwargs):
    torch_module, lucid_module = _pair(
        torch.nn.ConvTranspose2d, ConvTranspose2d, dtype, 4, 6, 3, **kwargs
    )
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, 2, 4, 4, 5)], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [_randn(dtype, 2, 4, 3, 3)], dtype)


@requires_torch
@pytest.mark.parametrize("output_size", [[9, 9], [10, 10], [2, 6, 10, 9]])
def test_conv_transpose2d_output_size(output_size):
    torch_module = torch.nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, dtype=torch.float64)
    lucid_module = ConvTranspose2d(6, 4, 3, stride=2, padding=1, dtype=lucid.float64)
    inputs = [_randn("float64", 2, 6, 5, 5)]
    check_forward_backward(
        torch_module, lucid_module, inputs, "float64", kwargs={"output_size": output_size}
    )


@requires_torch
def test_conv_transpose2d_bad_output_size_raises_torch_error():
    lucid_module = ConvTranspose2d(6, 4, 3, stride=2, padding=1)
    torch_module = torch.nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1)
    for size in ([11, 9], [1, 2, 3]):
        with pytest.raises(ValueError) as lucid_error:
            lucid_module(lucid.randn(2, 6, 5, 5), output_size=size)
        with pytest.raises(ValueError) as torch_error:
            torch_module(torch.randn(2, 6, 5, 5), output_size=size)
        assert str(lucid_error.value) == str(torch_error.value).replace("torch.Size", "lucid.Size")


def test_conv_init_bounds_and_reproducible():
    lucid.manual_seed(11)
    module = Conv2d(3, 8, 5)
    bound = 1 / math.sqrt(3 * 5 * 5)
    weight = module.weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert np.abs(module.bias.detach().numpy()).max() <= bound
    lucid.manual_seed(11)
    np.testing.assert_array_equal(Conv2d(3, 8, 5).weight.detach().numpy(), weight)
    transposed = ConvTranspose2d(4, 6, 3, groups=2)
    assert transposed.weight.shape == (4, 3, 3, 3)
    # fan_in of a transposed weight is its dim 1 (out_channels/groups) times the kernel
    assert np.abs(transposed.bias.detach().numpy()).max() <= 1 / math.sqrt(3 * 9)


@requires_torch
@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((4, 6, 3), {"groups": 0}),
        ((4, 6, 3), {"groups": 3}),
        ((4, 6, 3), {"groups": 4}),
        ((4, 6, 3), {"padding": "full"}),
        ((4, 6, 3), {"padding": "same", "stride": 2}),
    ],
)
def test_conv_bad_arguments_raise_torch_errors(args, kwargs):
    with pytest.raises(ValueError) as lucid_error:
        Conv2d(*args, **kwargs)
    with pytest.raises(ValueError) as torch_error:
        torch.nn.Conv2d(*args, **kwargs)
    # PyTorch prints a set of valid padding strings, whose order varies between runs
    assert str(lucid_error.value).split("{")[0] == str(torch_error.value).split("{")[0]


@requires_torch
def test_conv_padding_mode_checks_match_torch():
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        Conv1d(2, 2, 3, padding_mode="mirror")
    with pytest.raises(ValueError) as lucid_error:
        ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError) as torch_error:
        torch.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    assert str(lucid_error.value) == str(torch_error.value)


# ----------------------------------------------------------------- pooling
@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "cls, torch_cls, args, kwargs, shape",
    [
        (MaxPool2d, torch.nn.MaxPool2d, (2,), {}, (2, 3, 6, 6)),
        (MaxPool2d, torch.nn.MaxPool2d, (3,), {"stride": 2, "padding": 1}, (2, 3, 7, 6)),
        (
            MaxPool2d,
            torch.nn.MaxPool2d,
            ((2, 3),),
            {"dilation": 2, "ceil_mode": True},
            (1, 2, 9, 9),
        ),
        (MaxPool1d, torch.nn.MaxPool1d, (3,), {"stride": 2, "padding": 1}, (2, 3, 9)),
        (AvgPool2d, torch.nn.AvgPool2d, (2,), {}, (2, 3, 6, 6)),
        (AvgPool2d, torch.nn.AvgPool2d, (3,), {"stride": 2, "padding": 1}, (2, 3, 7, 6)),
        (
            AvgPool2d,
            torch.nn.AvgPool2d,
            (3,),
            {"padding": 1, "count_include_pad": False, "ceil_mode": True, "stride": 2},
            (2, 3, 6, 6),
        ),
        (AvgPool2d, torch.nn.AvgPool2d, (2,), {"divisor_override": 3}, (1, 2, 4, 4)),
        (AvgPool1d, torch.nn.AvgPool1d, (3,), {"stride": 2, "padding": 1}, (2, 3, 9)),
        (AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, ((3, 2),), {}, (2, 3, 7, 5)),
        (AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, (1,), {}, (2, 3, 4, 4)),
        (AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d, ((None, 2),), {}, (3, 5, 6)),
    ],
)
def test_pooling_parity(dtype, cls, torch_cls, args, kwargs, shape):
    torch_module, lucid_module = torch_cls(*args, **kwargs), cls(*args, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn(dtype, *shape)], dtype)


@requires_torch
def test_max_pool_return_indices():
    torch_module = torch.nn.MaxPool2d(2, return_indices=True)
    lucid_module = MaxPool2d(2, return_indices=True)
    outputs, _ = check_forward_backward(
        torch_module, lucid_module, [_randn("float64", 1, 2, 4, 4)], "float64"
    )
    torch_indices = torch_module(torch.tensor(_randn("float64", 1, 2, 4, 4)))[1]
    np.testing.assert_array_equal(outputs[1].numpy(), torch_indices.numpy())
    assert outputs[1].dtype == lucid.int64


# ------------------------------------------------------------------ sparse
@requires_torch
@FLOATS
@pytest.mark.parametrize(
    "kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -2}, {"scale_grad_by_freq": True}]
)
def test_embedding_parity(dtype, kwargs):
    torch_module, lucid_module = _pair(torch.nn.Embedding, Embedding, dtype, 6, 3, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    indices = np.array([[0, 1, 4], [4, 4, 5]], dtype=np.int64)
    check_forward_backward(torch_module, lucid_module, [indices], dtype)
    check_sgd_steps(torch_module, lucid_module, lambda: [indices], dtype)


def test_embedding_padding_row_is_zero_and_gets_no_gradient():
    module = Embedding(5, 4, padding_idx=2)
    np.testing.assert_array_equal(module.weight.detach().numpy()[2], np.zeros(4))
    module(lucid.tensor([2, 2, 3])).sum().backward()
    np.testing.assert_array_equal(module.weight.grad.numpy()[2], np.zeros(4))
    np.testing.assert_array_equal(module.weight.grad.numpy()[3], np.ones(4))
    assert module.padding_idx == 2 and Embedding(5, 4, padding_idx=-1).padding_idx == 4
    for bad in (5, -6):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            Embedding(5, 4, padding_idx=bad)


def test_embedding_init_is_standard_normal_and_reproducible():
    lucid.manual_seed(2)
    weight = Embedding(400, 50).weight.detach().numpy()
    assert abs(weight.mean()) < 0.02 and abs(weight.std() - 1) < 0.02
    lucid.manual_seed(2)
    np.testing.assert_array_equal(Embedding(400, 50).weight.detach().numpy(), weight)


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_embedding_max_norm_parity(dtype):
    torch_module, lucid_module = _pair(torch.nn.Embedding, Embedding, dtype, 6, 3, max_norm=1.0)
    assert repr(lucid_module) == repr(torch_module)
    indices = np.array([[0, 1], [1, 5]], dtype=np.int64)
    check_forward_backward(torch_module, lucid_module, [indices], dtype)
    # the looked-up rows were renormalised in place in both
    rtol, atol = TOLERANCES[dtype]
    compare_state(torch_module, lucid_module, rtol, atol)


@requires_torch
def test_embedding_from_pretrained():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    torch_module = torch.nn.Embedding.from_pretrained(torch.tensor(table), padding_idx=0)
    lucid_module = Embedding.from_pretrained(lucid.tensor(table), padding_idx=0)
    assert repr(lucid_module) == repr(torch_module)
    assert not lucid_module.weight.requires_grad
    # from_pretrained keeps the given rows, the padding row included
    np.testing.assert_array_equal(lucid_module.weight.detach().numpy(), table)
    out = lucid_module(lucid.tensor([3, 0]))
    np.testing.assert_array_equal(out.numpy(), table[[3, 0]])
    assert Embedding.from_pretrained(lucid.tensor(table), freeze=False).weight.requires_grad
    with pytest.raises(
        AssertionError, match="Embeddings parameter is expected to be 2-dimensional"
    ):
        Embedding.from_pretrained(lucid.zeros(3))
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        Embedding(3, 3, _weight=lucid.zeros(4, 3))


# ----------------------------------------------------------------- flatten
@requires_torch
@pytest.mark.parametrize(
    "cls, torch_cls, args",
    [
        (Flatten, torch.nn.Flatten, ()),
        (Flatten, torch.nn.Flatten, (0, 2)),
        (Unflatten, torch.nn.Unflatten, (1, (2, 6))),
        (Unflatten, torch.nn.Unflatten, (-1, [2, -1])),
    ],
)
def test_flatten_unflatten_parity(cls, torch_cls, args):
    lucid_module, torch_module = cls(*args), torch_cls(*args)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn("float64", 3, 12, 4)], "float64")


@requires_torch
def test_unflatten_bad_size_raises_torch_errors():
    for size in (5, (2, 3.0)):
        with pytest.raises(TypeError) as lucid_error:
            Unflatten(1, size)
        with pytest.raises(TypeError) as torch_error:
            torch.nn.Unflatten(1, size)
        assert str(lucid_error.value) == str(torch_error.value)
