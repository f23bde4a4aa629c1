"""Lazy modules (shapes from the first forward), their placeholders, and nn.Buffer."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import copy_state, to_numpy
from tests.torch_oracle import requires_torch, torch

_SHAPE_ERROR = "Can't access the shape of an uninitialized parameter or buffer"

LAZY = [
    ("LazyLinear", (4,), (3, 5), "Linear"),
    ("LazyBatchNorm1d", (), (4, 3, 5), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), (4, 3, 2, 2, 2), "BatchNorm3d"),
    ("LazyInstanceNorm1d", (), (4, 3, 5), "InstanceNorm1d"),
    ("LazyInstanceNorm2d", (), (4, 3, 2, 2), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", (), (4, 3, 2, 2, 2), "InstanceNorm3d"),
    ("LazyConv1d", (4, 3), (2, 6, 7), "Conv1d"),
    ("LazyConv2d", (4, 3, 2, 1), (2, 6, 7, 5), "Conv2d"),
    ("LazyConv3d", (4, 2), (2, 3, 4, 5, 3), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3, 2), (2, 6, 7), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (4, 3), (2, 6, 4, 5), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (4, 2, 1, 0, 0, 2), (2, 6, 3, 4, 3), "ConvTranspose3d"),
    ("LazyConv2d", (4, 3), (6, 7, 5), "Conv2d"),
]


@requires_torch
@pytest.mark.parametrize("name, args, shape, becomes", LAZY)
def test_lazy_module_repr_state_dict_and_first_forward_match_torch(name, args, shape, becomes):
    module, torch_module = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(module) == repr(torch_module)
    assert module.has_uninitialized_params()
    state, torch_state = module.state_dict(), torch_module.state_dict()
    assert list(state) == list(torch_state)
    assert [type(value).__name__ for value in state.values()] == [
        type(value).__name__ for value in torch_state.values()
    ]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    output, torch_output = module(lucid.tensor(x)), torch_module(torch.tensor(x))
    assert type(module).__name__ == type(torch_module).__name__ == becomes
    assert isinstance(module, getattr(nn, becomes))
    assert repr(module) == repr(torch_module)
    assert all(type(p) is nn.Parameter for p in module.parameters())
    assert {k: tuple(v.shape) for k, v in module.state_dict().items()} == {
        k: tuple(v.shape) for k, v in torch_module.state_dict().items()
    }
    # with the same weights, the same outputs
    copy_state(torch_module, module)
    np.testing.assert_allclose(
        to_numpy(module(lucid.tensor(x))), to_numpy(torch_module(torch.tensor(x))), rtol=1e-5,
        atol=1e-6,
    )  # fmt: skip
    assert tuple(output.shape) == tuple(torch_output.shape)


def test_lazy_linear_infers_in_features_and_initializes_within_bounds():
    layer = nn.LazyLinear(3, dtype=lucid.float64)
    with pytest.raises(RuntimeError, match=_SHAPE_ERROR):
        layer.weight.shape
    layer(lucid.randn(2, 7, 16, dtype=lucid.float64))
    assert layer.in_features == 16 and tuple(layer.weight.shape) == (3, 16)
    assert layer.weight.dtype == lucid.float64
    assert np.abs(layer.weight.detach().numpy()).max() <= 1 / 4
    assert len(layer._forward_pre_hooks) == 0


def test_lazy_linear_without_bias():
    layer = nn.LazyLinear(3, bias=False)
    assert layer.bias is None
    layer(lucid.randn(2, 4))
    assert layer.bias is None and list(layer.state_dict()) == ["weight"]


def test_loading_a_checkpoint_materializes_and_forward_keeps_it():
    source = nn.Linear(5, 3)
    layer = nn.LazyLinear(3)
    layer.load_state_dict(source.state_dict())
    assert type(layer) is nn.LazyLinear and tuple(layer.weight.shape) == (3, 5)
    layer(lucid.randn(2, 5))
    assert type(layer) is nn.Linear
    np.testing.assert_array_equal(layer.weight.detach().numpy(), source.weight.detach().numpy())


@requires_torch
def test_loaded_lazy_linear_takes_in_features_from_the_weights_as_torch():
    state = torch.nn.Linear(5, 3).state_dict()
    layer, torch_layer = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    layer.load_state_dict({key: lucid.tensor(value.numpy()) for key, value in state.items()})
    torch_layer.load_state_dict(state)
    with pytest.raises(AssertionError) as error:
        layer(lucid.randn(1, 4))
    with pytest.raises(AssertionError) as torch_error:
        torch_layer(torch.randn(1, 4))
    assert str(error.value) == str(torch_error.value)
    layer(lucid.randn(1, 5))
    torch_layer(torch.randn(1, 5))
    assert repr(layer) == repr(torch_layer)


def test_loading_a_lazy_checkpoint_into_an_initialized_module_raises():
    with pytest.raises(RuntimeError, match=_SHAPE_ERROR):
        nn.Linear(5, 3).load_state_dict(nn.LazyLinear(3).state_dict())


def test_lazy_into_lazy_loads_and_stays_lazy():
    layer = nn.LazyBatchNorm1d()
    layer.load_state_dict(nn.LazyBatchNorm1d().state_dict())
    assert layer.has_uninitialized_params()


def test_lazy_batch_norm_materializes_running_stats_and_counts_batches():
    layer = nn.LazyBatchNorm2d(momentum=None)
    layer(lucid.randn(4, 3, 2, 2))
    np.testing.assert_array_equal(layer.weight.detach().numpy(), np.ones(3))
    assert int(layer.num_batches_tracked) == 1 and tuple(layer.running_var.shape) == (3,)


def test_deepcopy_of_a_lazy_module_stays_lazy():
    clone = copy.deepcopy(nn.LazyLinear(2))
    assert isinstance(clone.weight, nn.UninitializedParameter)
    clone(lucid.randn(1, 3))
    assert tuple(clone.weight.shape) == (2, 3)


def test_uninitialized_placeholders_materialize_into_their_final_class():
    param = nn.UninitializedParameter()
    buffer = nn.UninitializedBuffer()
    assert repr(param) == "<UninitializedParameter>" and repr(buffer) == "<UninitializedBuffer>"
    assert param.requires_grad and not buffer.requires_grad
    param.materialize((2, 3))
    buffer.materialize(4, dtype=lucid.float64)
    assert type(param) is nn.Parameter and tuple(param.shape) == (2, 3) and param.requires_grad
    assert isinstance(buffer, lucid.Tensor) and buffer.dtype == lucid.float64


def test_a_module_without_initialize_parameters_raises():
    class Incomplete(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented"):
        Incomplete()(lucid.ones(1))


# ------------------------------------------------------------------ Buffer
class _WithBuffers(nn.Module):
    def __init__(self, framework):
        super().__init__()
        self.kept = framework.nn.Buffer(framework.ones(2))
        self.scratch = framework.nn.Buffer(framework.zeros(1), persistent=False)


@requires_torch
def test_buffer_assignment_registers_buffers_like_torch():
    module = _WithBuffers(lucid)

    class TorchWithBuffers(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = torch.nn.Buffer(torch.ones(2))
            self.scratch = torch.nn.Buffer(torch.zeros(1), persistent=False)

    expected = TorchWithBuffers()
    assert [name for name, _ in module.named_buffers()] == [
        name for name, _ in expected.named_buffers()
    ]
    assert list(module.state_dict()) == list(expected.state_dict()) == ["kept"]
    assert list(module.parameters()) == []


def test_buffer_shares_storage_and_keeps_requires_grad():
    data = lucid.ones(3, requires_grad=True)
    buffer = nn.Buffer(data)
    assert buffer.requires_grad and buffer.grad_fn is None
    with lucid.no_grad():
        data.mul_(2)
    np.testing.assert_array_equal(buffer.detach().numpy(), [2.0, 2.0, 2.0])
    assert tuple(nn.Buffer().shape) == (0,)


def test_lazy_conv_refuses_channels_that_groups_do_not_divide():
    layer = nn.LazyConv2d(4, 3, groups=2)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        layer(lucid.randn(1, 3, 5, 5))
