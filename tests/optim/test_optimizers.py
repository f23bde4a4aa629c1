"""The Optimizer base class against PyTorch: parameter groups, state dict layout, closures,
zero_grad, argument errors; and the optimizers' behaviour beyond their catalogue rows
(tests/optim/optimizer_catalogue.py): a float32 trajectory, LBFGS's stopping and options,
Muon on tall and wide matrices."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.optim as optim
from tests.optim.optimizer_catalogue import ROWS, loss
from tests.torch_oracle import requires_torch, torch

STEPS = 5


@requires_torch
def test_float32_trajectory_close_to_torch(rng):
    weight = rng.standard_normal((3, 4)).astype(np.float32)
    ours = lucid.tensor(weight, requires_grad=True)
    theirs = torch.tensor(weight, requires_grad=True)
    lucid_opt = optim.Adam([ours], lr=0.1)
    torch_opt = torch.optim.Adam([theirs], lr=0.1, foreach=False)
    for _ in range(STEPS):
        lucid_opt.zero_grad()
        torch_opt.zero_grad()
        (ours**2).sum().backward()
        (theirs**2).sum().backward()
        lucid_opt.step()
        torch_opt.step()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert lucid_opt.state[ours]["step"].dtype == lucid.float32


def test_state_dict_uses_integer_indices_like_torch():
    a = lucid.zeros(2, requires_grad=True)
    b = lucid.zeros(3, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    a.grad = lucid.ones(2)
    b.grad = lucid.ones(3)
    opt.step()
    state = opt.state_dict()
    assert list(state["state"]) == [0, 1]
    assert [group["params"] for group in state["param_groups"]] == [[0], [1]]
    assert [group["lr"] for group in state["param_groups"]] == [0.1, 0.5]
    assert state["state"][1]["momentum_buffer"].tolist() == [1.0, 1.0, 1.0]


def test_load_state_dict_checks_group_sizes():
    a = lucid.zeros(2, requires_grad=True)
    b = lucid.zeros(3, requires_grad=True)
    state = optim.SGD([a, b]).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}]).load_state_dict(state)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([a]).load_state_dict(state)


def test_step_returns_closure_loss_and_skips_params_without_grad():
    a = lucid.ones(2, requires_grad=True)
    b = lucid.ones(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 2.0
    assert a.tolist() == [0.0, 0.0]
    assert b.tolist() == [1.0, 1.0]
    assert a.is_leaf and a.grad_fn is None


def test_zero_grad_set_to_none_or_zeros():
    a = lucid.ones(2, requires_grad=True)
    opt = optim.SGD([a])
    a.grad = lucid.ones(2)
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_update_bumps_parameter_version():
    a = lucid.ones(2, requires_grad=True)
    opt = optim.Adam([a])
    a.grad = lucid.ones(2)
    before = a._version
    opt.step()
    assert a._version > before


def test_add_param_group_fills_defaults():
    a = lucid.zeros(2, requires_grad=True)
    b = lucid.zeros(2, requires_grad=True)
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "betas": (0.5, 0.6)})
    group = opt.param_groups[1]
    assert group["params"] == [b]
    assert group["lr"] == 0.1
    assert group["betas"] == (0.5, 0.6)
    assert group["eps"] == 1e-8


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda p: optim.SGD(p[0]), TypeError, "should be an iterable of Tensors or dicts"),
        (lambda p: optim.SGD([]), ValueError, "optimizer got an empty parameter list"),
        (lambda p: optim.SGD([1]), TypeError, "can only optimize Tensors, but one of the params"),
        (lambda p: optim.SGD([p[0] * 2]), ValueError, "can't optimize a non-leaf Tensor"),
        (
            lambda p: optim.SGD([{"params": p}, {"params": p}]),
            ValueError,
            "some parameters appear in more than one parameter group",
        ),
        (
            lambda p: optim.SGD([{"params": set(p)}]),
            TypeError,
            "optimizer parameters need to be organized in ordered collections",
        ),
    ],
)
def test_parameter_list_errors_match_torch(make, error, message):
    params = [lucid.zeros(2, requires_grad=True)]
    with pytest.raises(error, match=message):
        make(params)


def test_duplicate_parameters_in_a_group_warn():
    a = lucid.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([a, a])


def test_named_parameters_keep_their_names():
    a = lucid.zeros(2, requires_grad=True)
    b = lucid.zeros(2, requires_grad=True)
    opt = optim.SGD([("layer.weight", a), ("layer.bias", b)], lr=0.1)
    assert opt.param_groups[0]["params"] == [a, b]
    assert opt.param_groups[0]["param_names"] == ["layer.weight", "layer.bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["layer.weight", "layer.bias"]
    with pytest.raises(ValueError, match="cannot add param group without names"):
        opt.add_param_group({"params": [lucid.zeros(1, requires_grad=True)]})
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("w", a), b])


def test_lbfgs_stops_at_once_when_the_gradient_is_small():
    a = lucid.ones(2, requires_grad=True)
    opt = optim.LBFGS([a], tolerance_grad=10.0)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 2.0
    assert len(calls) == 1
    assert a.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda p: optim.LBFGS(
                [{"params": p}, {"params": [lucid.zeros(1, requires_grad=True)]}]
            ),
            ValueError,
            "LBFGS doesn't support per-parameter options",
        ),
    ],
)
def test_lbfgs_errors_match_torch(make, error, message):
    params = [lucid.zeros(2, requires_grad=True)]
    with pytest.raises(error, match=message):
        make(params)


def test_lbfgs_rejects_unknown_line_search():
    a = lucid.ones(2, requires_grad=True)
    opt = optim.LBFGS([a], line_search_fn="backtracking")
    assert opt.defaults["max_eval"] == 25

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# --------------------------------------------------------------------------------- Muon
MUON_CONFIGS = next(row.configs for row in ROWS if row.name == "Muon")


@requires_torch
@pytest.mark.parametrize("kwargs", MUON_CONFIGS, ids=lambda v: str(v))
def test_muon_trajectory_on_a_tall_matrix_matches_torch(kwargs, rng):
    """Muon orthogonalizes a tall matrix through its transpose (the catalogue's row runs a wide
    one); both run the Newton-Schulz iteration in bfloat16, each product in float32 rounded
    once."""
    shape = (5, 3)
    weight = rng.standard_normal(shape)
    inputs = rng.standard_normal((6, shape[1]))
    targets = rng.standard_normal((6, shape[0]))
    ours = lucid.tensor(weight, requires_grad=True)
    theirs = torch.tensor(weight, requires_grad=True)
    lucid_opt = optim.Muon([ours], **kwargs)
    torch_opt = torch.optim.Muon([theirs], **kwargs)
    for _ in range(STEPS):
        lucid_opt.zero_grad()
        torch_opt.zero_grad()
        loss(lucid, [ours], inputs, targets).backward()
        loss(torch, [theirs], inputs, targets).backward()
        lucid_opt.step()
        torch_opt.step()
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14
        )
    assert lucid_opt.state_dict()["param_groups"] == torch_opt.state_dict()["param_groups"]
    np.testing.assert_allclose(
        lucid_opt.state[ours]["momentum_buffer"].numpy(),
        torch_opt.state[theirs]["momentum_buffer"].numpy(),
        rtol=1e-12,
    )


def test_muon_update_is_nearly_orthogonal():
    # five default steps leave every singular value of the update within about [0.5, 1.5]
    grad = lucid.tensor(np.random.default_rng(3).standard_normal((4, 7)))
    singular_values = np.linalg.svd(
        optim.muon._orthogonalize(grad, (3.4445, -4.775, 2.0315), 5, 1e-7).numpy(), compute_uv=False
    )
    assert np.all((singular_values > 0.5) & (singular_values < 1.5))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda p: optim.Muon(p + [lucid.zeros(3, requires_grad=True)]),
            r"Muon only supports 2D parameters whereas we found a parameter with size: "
            r"lucid\.Size\(\[3\]\)",
        ),
    ],
)
def test_muon_errors_match_torch(make, message):
    with pytest.raises(ValueError, match=message):
        make([lucid.zeros(2, 3, requires_grad=True)])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ns_steps": 100}, "Number of steps must be less than 100 for computational efficiency"),
        ({"ns_coefficients": (1.0, 2.0)}, "Coefficients must be a tuple of exactly 3 values"),
    ],
)
def test_muon_step_errors_match_torch(kwargs, message):
    weight = lucid.ones(2, 3, requires_grad=True)
    opt = optim.Muon([weight], **kwargs)
    (weight**2).sum().backward()
    with pytest.raises(ValueError, match=message):
        opt.step()
