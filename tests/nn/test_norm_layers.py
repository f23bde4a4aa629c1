"""InstanceNorm, LocalResponseNorm, dirac_/sparse_ and old BatchNorm checkpoints, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from tests.torch_oracle import requires_torch, torch

TOLERANCE = {"float64": 1e-10, "float32": 1e-5}


def _pair(rng, shape, dtype):
    array = rng.standard_normal(shape).astype(dtype)
    return (lucid.tensor(array, requires_grad=True),
            torch.tensor(array, requires_grad=True))  # fmt: skip


def _close(actual, expected, dtype):
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=0, atol=TOLERANCE[dtype]
    )


def _copy_state(ours, theirs):
    ours.load_state_dict({key: lucid.tensor(value.numpy())
                          for key, value in theirs.state_dict().items()})  # fmt: skip


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (3, 4, 7)),
                                         ("InstanceNorm1d", (4, 7)),
                                         ("InstanceNorm2d", (2, 4, 5, 3)),
                                         ("InstanceNorm3d", (2, 4, 3, 2, 3))])  # fmt: skip
@pytest.mark.parametrize("affine, track", [(False, False), (True, True), (True, False),
                                           (False, True)])  # fmt: skip
def test_instance_norm_matches_torch_in_training_and_eval(name, shape, dtype, affine, track):
    rng = np.random.default_rng(0)
    theirs = getattr(torch.nn, name)(4, affine=affine, track_running_stats=track,
                                     momentum=0.3).to(getattr(torch, dtype))  # fmt: skip
    ours = getattr(nn, name)(4, affine=affine, track_running_stats=track, momentum=0.3,
                             dtype=getattr(lucid, dtype))  # fmt: skip
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if affine:
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(rng.standard_normal(4)))
            theirs.bias.copy_(torch.tensor(rng.standard_normal(4)))
    _copy_state(ours, theirs)
    for training in (True, True, False):
        ours.train(training)
        theirs.train(training)
        x, tx = _pair(rng, shape, dtype)
        output, expected = ours(x), theirs(tx)
        _close(output, expected, dtype)
        upstream = rng.standard_normal(shape).astype(dtype)
        output.backward(lucid.tensor(upstream))
        expected.backward(torch.tensor(upstream))
        _close(x.grad, tx.grad, dtype)
        if affine:
            _close(ours.weight.grad, theirs.weight.grad, dtype)
            _close(ours.bias.grad, theirs.bias.grad, dtype)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(),
                                       rtol=0, atol=TOLERANCE[dtype])  # fmt: skip


@requires_torch
def test_instance_norm_gradgradcheck_matches_torch():
    rng = np.random.default_rng(1)
    x, tx = _pair(rng, (2, 3, 5), "float64")
    w, tw = _pair(rng, (3,), "float64")
    (grad,) = lucid.autograd.grad((F.instance_norm(x, weight=w) ** 3).sum(), x, create_graph=True)
    (tgrad,) = torch.autograd.grad((torch.nn.functional.instance_norm(tx, weight=tw) ** 3).sum(),
                                   tx, create_graph=True)  # fmt: skip
    _close(grad, tgrad, "float64")
    (grad.sum() * 1.0).backward()
    tgrad.sum().backward()
    _close(w.grad, tw.grad, "float64")


@requires_torch
def test_instance_norm_errors_match_torch():
    for module, shape in (("InstanceNorm1d", (2, 3, 4, 5)), ("InstanceNorm2d", (2, 3)),
                          ("InstanceNorm3d", (2, 3, 4))):  # fmt: skip
        with pytest.raises(ValueError) as ours:
            getattr(nn, module)(3)(lucid.zeros(shape))
        with pytest.raises(ValueError) as theirs:
            getattr(torch.nn, module)(3)(torch.zeros(shape))
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm1d(4, affine=True)(lucid.zeros(2, 3, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(lucid.zeros(2, 3, 5))
    with pytest.raises(ValueError) as ours:
        F.instance_norm(lucid.zeros(2, 3, 1))
    with pytest.raises(ValueError) as theirs:
        torch.nn.functional.instance_norm(torch.zeros(2, 3, 1))
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "lucid.Size")
    with pytest.raises(RuntimeError, match="running_mean and running_var to be defined"):
        F.instance_norm(lucid.zeros(2, 3, 4), use_input_stats=False)


@requires_torch
def test_instance_norm_old_checkpoint_with_untracked_running_stats_is_an_error():
    state = {"running_mean": lucid.zeros(3), "running_var": lucid.ones(3)}
    with pytest.raises(RuntimeError, match='Unexpected running stats buffer\\(s\\) "running_mean"'):
        nn.InstanceNorm1d(3).load_state_dict(state)
    with pytest.raises(RuntimeError, match="Unexpected running stats"):
        torch.nn.InstanceNorm1d(3).load_state_dict({k: torch.tensor(v.numpy())
                                                    for k, v in state.items()})  # fmt: skip


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 3, 4), (1, 5, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm_matches_torch(shape, size, dtype):
    rng = np.random.default_rng(size)
    x, tx = _pair(rng, shape, dtype)
    ours, theirs = (
        nn.LocalResponseNorm(size, 0.3, 0.6, 1.5),
        torch.nn.LocalResponseNorm(size, 0.3, 0.6, 1.5),
    )
    assert repr(ours) == repr(theirs)
    output, expected = ours(x), theirs(tx)
    _close(output, expected, dtype)
    upstream = rng.standard_normal(shape).astype(dtype)
    output.backward(lucid.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    _close(x.grad, tx.grad, dtype)


def test_local_response_norm_refuses_fewer_than_three_dims():
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(lucid.zeros(2, 3), 2)


@requires_torch
@pytest.mark.parametrize("shape, groups", [((4, 3, 5), 1), ((6, 2, 3, 3), 3),
                                           ((4, 4, 3, 2, 5), 2), ((2, 5, 4), 1)])  # fmt: skip
def test_dirac_matches_torch(shape, groups):
    ours = nn.init.dirac_(lucid.ones(shape), groups)
    theirs = torch.nn.init.dirac_(torch.ones(shape), groups)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_dirac_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        nn.init.dirac_(lucid.zeros(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        nn.init.dirac_(lucid.zeros(3, 3, 3), groups=2)


@pytest.mark.parametrize("sparsity, zeros", [(0.0, 0), (0.1, 1), (0.35, 4), (1.0, 10)])
def test_sparse_zeroes_ceil_sparsity_times_rows_in_every_column(sparsity, zeros):
    lucid.manual_seed(0)
    weight = nn.init.sparse_(lucid.empty(10, 7, dtype=lucid.float64), sparsity, std=0.5)
    assert ((weight.numpy() == 0).sum(0) == zeros).all()
    assert np.abs(weight.numpy()).max() <= 5.0
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        nn.init.sparse_(lucid.zeros(3), 0.5)


@requires_torch
@pytest.mark.parametrize("trained", [False, True])
def test_batch_norm_loads_checkpoint_without_num_batches_tracked_as_torch(trained):
    rng = np.random.default_rng(2)
    ours, theirs = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    if trained:
        x = rng.standard_normal((4, 3)).astype("float32")
        ours(lucid.tensor(x))
        theirs(torch.tensor(x))
    old = {"weight": rng.standard_normal(3), "bias": rng.standard_normal(3),
           "running_mean": rng.standard_normal(3), "running_var": rng.random(3) + 0.5}  # fmt: skip
    ours_result = ours.load_state_dict({k: lucid.tensor(v) for k, v in old.items()})
    theirs_result = theirs.load_state_dict({k: torch.tensor(v) for k, v in old.items()})
    assert ours_result.missing_keys == theirs_result.missing_keys == []
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    assert int(ours.num_batches_tracked) == (1 if trained else 0)


def test_batch_norm_in_a_model_loads_old_checkpoint_and_still_reports_other_missing_keys():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    state = {key: value for key, value in model.state_dict().items()
             if not key.endswith("num_batches_tracked")}  # fmt: skip
    model.load_state_dict(state)
    del state["1.running_var"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "1.running_var"'):
        model.load_state_dict(state)
