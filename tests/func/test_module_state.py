"""lucid.func.functional_call and stack_module_state: values against torch.func, the module's
own tensors put back (also after an error), tied weights, strict keys and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.func as F
import lucid.nn as lnn
from tests.func.parity import assert_tree_close
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def linear_pair(seed=0):
    rng = np.random.default_rng(seed)
    weight, bias, x = rng.normal(size=(2, 3)), rng.normal(size=(2,)), rng.normal(size=(4, 3))
    model, t_model = lnn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    params = {"weight": lucid.from_numpy(weight.copy()), "bias": lucid.from_numpy(bias.copy())}
    t_params = {"weight": torch.from_numpy(weight), "bias": torch.from_numpy(bias)}
    return (model, params, lucid.from_numpy(x.copy())), (t_model, t_params, torch.from_numpy(x))


def test_functional_call_matches_torch_and_restores_parameters():
    (model, params, x), (t_model, t_params, tx) = linear_pair()
    original = model.weight
    assert_tree_close(
        F.functional_call(model, params, (x,)), torch.func.functional_call(t_model, t_params, (tx,))
    )
    assert model.weight is original
    assert isinstance(model.weight, lnn.Parameter)
    assert [name for name, _ in model.named_parameters()] == ["weight", "bias"]


def test_functional_call_takes_a_single_argument_and_split_dicts():
    (model, params, x), (t_model, t_params, tx) = linear_pair()
    actual = F.functional_call(model, ({"weight": params["weight"]}, {"bias": params["bias"]}), x)
    expected = torch.func.functional_call(
        t_model, ({"weight": t_params["weight"]}, {"bias": t_params["bias"]}), tx
    )
    assert_tree_close(actual, expected)


def test_functional_call_restores_parameters_when_the_forward_raises():
    (model, params, _), _ = linear_pair()
    original = model.weight
    with pytest.raises(RuntimeError):
        F.functional_call(model, params, (lucid.ones(4, 7, dtype=lucid.float64),))
    assert model.weight is original
    assert model.bias is not params["bias"]


def test_functional_call_gradients_flow_to_the_given_tensors():
    (model, params, x), (t_model, t_params, tx) = linear_pair()
    actual = F.grad(lambda p: F.functional_call(model, p, (x,)).sum())(params)
    expected = torch.func.grad(lambda p: torch.func.functional_call(t_model, p, (tx,)).sum())(
        t_params
    )
    assert_tree_close(actual, expected)
    assert model.weight.grad is None


def test_functional_call_swaps_buffers_and_restores_them():
    model = lnn.BatchNorm1d(3).double()
    model.eval()
    running_mean = lucid.ones(3, dtype=lucid.float64)
    output = F.functional_call(
        model, {"running_mean": running_mean}, (lucid.zeros(2, 3, dtype=lucid.float64),)
    )
    t_model = torch.nn.BatchNorm1d(3).double().eval()
    expected = torch.func.functional_call(
        t_model,
        {"running_mean": torch.ones(3, dtype=torch.float64)},
        (torch.zeros(2, 3, dtype=torch.float64),),
    )
    assert_tree_close(output, expected)
    assert (model.running_mean.numpy() == 0).all()


def tied_model(nn):
    """Two linear layers sharing one weight, in lucid.nn or torch.nn."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.b = nn.Linear(3, 3)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    return Model().double()


@pytest.mark.parametrize("tie_weights", [True, False])
def test_tied_weights_follow_one_value_unless_untied(tie_weights):
    model, t_model = tied_model(lnn), tied_model(torch.nn)
    with torch.no_grad():
        for (_, p), (_, tp) in zip(model.named_parameters(), t_model.named_parameters()):
            tp.copy_(torch.from_numpy(p.detach().numpy().copy()))
    x = np.random.default_rng(0).normal(size=(2, 3))
    actual = F.functional_call(
        model,
        {"a.weight": lucid.ones(3, 3, dtype=lucid.float64)},
        (lucid.from_numpy(x.copy()),),
        tie_weights=tie_weights,
    )
    expected = torch.func.functional_call(
        t_model,
        {"a.weight": torch.ones(3, 3, dtype=torch.float64)},
        (torch.from_numpy(x),),
        tie_weights=tie_weights,
    )
    assert_tree_close(actual, expected)
    assert model.b.weight is model.a.weight


@pytest.mark.parametrize(
    ("call", "error_type"),
    [
        (lambda api, m, x: api.functional_call(m, 3, (x,)), ValueError),
        (lambda api, m, x: api.functional_call(m, [3], (x,)), ValueError),
        (
            lambda api, m, x: api.functional_call(m, ({"a.bias": x[0]}, {"a.bias": x[0]}), (x,)),
            ValueError,
        ),
        (
            lambda api, m, x: api.functional_call(m, {"a.weight": x, "b.weight": x * 2}, (x,)),
            ValueError,
        ),
        (lambda api, m, x: api.functional_call(m, {"foo": x}, (x,), strict=True), RuntimeError),
    ],
)
def test_functional_call_errors_match_torch(call, error_type):
    model, t_model = tied_model(lnn), tied_model(torch.nn)
    x, tx = lucid.ones(3, 3, dtype=lucid.float64), torch.ones(3, 3, dtype=torch.float64)
    with pytest.raises(error_type) as lucid_error:
        call(F, model, x)
    with pytest.raises(error_type) as torch_error:
        call(torch.func, t_model, tx)
    assert str(lucid_error.value) == str(torch_error.value)


def test_stack_module_state_stacks_parameters_as_new_leaves_and_buffers():
    models = [lnn.BatchNorm1d(3) for _ in range(3)]
    params, buffers = F.stack_module_state(models)
    assert list(params) == ["weight", "bias"]
    assert list(buffers) == ["running_mean", "running_var", "num_batches_tracked"]
    assert tuple(params["weight"].shape) == (3, 3)
    assert params["weight"].requires_grad and params["weight"].is_leaf
    assert not buffers["running_var"].requires_grad
    assert tuple(buffers["num_batches_tracked"].shape) == (3,)


def test_stack_module_state_runs_an_ensemble_under_vmap():
    rng = np.random.default_rng(0)
    models = [lnn.Linear(3, 2).double() for _ in range(4)]
    x = lucid.from_numpy(rng.normal(size=(5, 3)))
    params, buffers = F.stack_module_state(models)

    def call_one(p, b, x):
        return F.functional_call(models[0], (p, b), (x,))

    ensemble = F.vmap(call_one, in_dims=(0, 0, None))(params, buffers, x)
    for index, model in enumerate(models):
        np.testing.assert_allclose(
            ensemble[index].detach().numpy(), model(x).detach().numpy(), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize(
    "build",
    [
        lambda nn: [],
        lambda nn: [nn.Linear(3, 2), nn.Linear(3, 2).eval()],
        lambda nn: [nn.Linear(3, 2), nn.Conv1d(1, 1, 1)],
        lambda nn: [nn.Linear(3, 2), nn.Linear(3, 2).requires_grad_(False)],
    ],
)
def test_stack_module_state_errors_match_torch(build):
    with pytest.raises(RuntimeError) as lucid_error:
        F.stack_module_state(build(lnn))
    with pytest.raises(RuntimeError) as torch_error:
        torch.func.stack_module_state(build(torch.nn))
    assert str(lucid_error.value) == str(torch_error.value)


def test_replace_all_batch_norm_modules_normalizes_with_batch_statistics_as_torch():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3)) * 3 + 1
    model = lnn.Sequential(lnn.Linear(3, 3), lnn.BatchNorm1d(3)).double().eval()
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)).double().eval()
    with torch.no_grad():
        t_model[0].weight.copy_(torch.from_numpy(model[0].weight.detach().numpy()))
        t_model[0].bias.copy_(torch.from_numpy(model[0].bias.detach().numpy()))
    assert F.replace_all_batch_norm_modules_(model) is model
    torch.func.replace_all_batch_norm_modules_(t_model)
    assert model[1].running_mean is None and not model[1].track_running_stats
    assert list(dict(model.named_buffers())) == []
    assert_tree_close(model(lucid.from_numpy(x.copy())), t_model(torch.from_numpy(x)))
