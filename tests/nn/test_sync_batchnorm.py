"""SyncBatchNorm in one process (plain batch norm, as PyTorch), its op with a one-replica sum,
and DataParallel on a CPU. The multi-rank equality is tests/distributed's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.autograd import gradcheck
from lucid.ops.normalization import sync_batch_norm
from tests.torch_oracle import requires_torch, torch


def _one_replica(array):
    return array


def test_without_a_process_group_it_is_batch_norm():
    lucid.manual_seed(0)
    x = lucid.randn(6, 3, 4, dtype=lucid.float64, requires_grad=True)
    synced, plain = nn.SyncBatchNorm(3).double(), nn.BatchNorm1d(3).double()
    y = synced(x)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    np.testing.assert_array_equal(y.detach().numpy(), plain(x).detach().numpy())
    np.testing.assert_array_equal(synced.running_var.numpy(), plain.running_var.numpy())


@requires_torch
def test_single_process_forward_matches_torch():
    x = np.random.default_rng(1).normal(size=(5, 2, 3, 3))
    ours = nn.SyncBatchNorm(2, momentum=None).double()(lucid.tensor(x))
    theirs = torch.nn.SyncBatchNorm(2, momentum=None).double()(torch.tensor(x))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)


def test_input_checks_are_torchs():
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        nn.SyncBatchNorm(3)(lucid.ones(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(lucid.ones(2, 0))


def test_the_op_on_one_replica_equals_batch_norm_with_its_gradients():
    generator = np.random.default_rng(2)
    x = lucid.tensor(generator.normal(3.0, 2.0, (4, 3, 5)), requires_grad=True)
    weight = lucid.tensor(generator.normal(size=3), requires_grad=True)
    bias = lucid.tensor(generator.normal(size=3), requires_grad=True)
    stats = [lucid.zeros(3, dtype=lucid.float64), lucid.ones(3, dtype=lucid.float64)]
    expected_stats = [lucid.zeros(3, dtype=lucid.float64), lucid.ones(3, dtype=lucid.float64)]
    y = sync_batch_norm(x, *stats, weight, bias, 0.1, 1e-5, _one_replica)
    assert y.grad_fn.name() == "SyncBatchNormBackward"
    expected = nn.functional.batch_norm(x, *expected_stats, weight, bias, True, 0.1, 1e-5)
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    for ours, theirs in zip(stats, expected_stats):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-14)
    upstream = lucid.tensor(generator.normal(size=(4, 3, 5)))
    ours = lucid.autograd.grad((y * upstream).sum(), (x, weight, bias))
    theirs = lucid.autograd.grad((expected * upstream).sum(), (x, weight, bias))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)


def test_the_op_passes_gradcheck_and_refuses_double_backward():
    generator = np.random.default_rng(3)
    x = lucid.tensor(generator.normal(size=(3, 2, 2)), requires_grad=True)
    weight = lucid.tensor(generator.normal(size=2), requires_grad=True)
    bias = lucid.tensor(generator.normal(size=2), requires_grad=True)

    def function(x, weight, bias):
        return sync_batch_norm(x, None, None, weight, bias, 0.1, 1e-5, _one_replica)

    assert gradcheck(function, (x, weight, bias))
    y = function(x, weight, bias).pow(2).sum()
    with pytest.raises(RuntimeError, match="cannot be differentiated again"):
        lucid.autograd.grad(y, x, create_graph=True)


def test_convert_sync_batchnorm_shares_parameters_and_statistics():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, affine=True), nn.ReLU())
    model.eval()
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    layer = converted[1]
    assert type(layer) is nn.SyncBatchNorm and not layer.training
    assert layer.weight is model[1].weight and layer.running_mean is model[1].running_mean
    assert layer.num_batches_tracked is model[1].num_batches_tracked
    assert type(converted[0]) is nn.Conv2d
    assert list(converted.state_dict()) == list(model.state_dict())
    lone = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(4, affine=False))
    assert type(lone) is nn.SyncBatchNorm and lone.weight is None


def test_data_parallel_calls_the_module_on_the_cpu():
    model = nn.Linear(2, 3)
    wrapped = nn.DataParallel(model, device_ids=[0], output_device=0)
    assert wrapped.module is model and wrapped.device_ids == []
    x = lucid.ones(4, 2)
    np.testing.assert_array_equal(wrapped(x).detach().numpy(), model(x).detach().numpy())
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]
    assert nn.parallel.DataParallel is nn.DataParallel
