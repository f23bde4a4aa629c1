"""Optimizers follow PyTorch's trajectories step for step; state dicts round-trip; errors match."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.optim as optim
from tests.torch_oracle import requires_torch, torch

STEPS = 5
# RAdam rectifies its step only once the moving average is long enough (step 6 for beta2=0.9).
LONG_STEPS = {"RAdam": 12, "ASGD": 8}

CASES = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.01, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {}),
    ("Adam", {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.1, "maximize": True, "eps": 1e-3}),
    ("AdamW", {"lr": 0.1}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.05, "alpha": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.05, "momentum": 0.8}),
    ("RMSprop", {"lr": 0.05, "centered": True, "momentum": 0.5, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-3}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1, "eps": 1e-3}),
    ("Adamax", {"lr": 0.05, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.05, "maximize": True, "eps": 1e-3}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.1, "betas": (0.5, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.6, 0.9), "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-3, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.05, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.1, "beta2_decay": -0.5, "eps": (1e-5, 1e-2), "d": 2.0}),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
]


def _problem(rng: np.random.Generator):
    weight = rng.standard_normal((3, 4))
    bias = rng.standard_normal(3)
    inputs = rng.standard_normal((6, 4))
    targets = rng.standard_normal((6, 3))
    return weight, bias, inputs, targets


def _lucid_loss(params, inputs, targets):
    weight, bias = params
    out = lucid.tensor(inputs) @ weight.t() + bias
    return ((out - lucid.tensor(targets)) ** 2).mean() + (weight**4).sum() * 0.01


def _torch_loss(params, inputs, targets):
    weight, bias = params
    out = torch.tensor(inputs) @ weight.t() + bias
    return ((out - torch.tensor(targets)) ** 2).mean() + (weight**4).sum() * 0.01


def _run(name, kwargs, rng, steps=STEPS):
    weight, bias, inputs, targets = _problem(rng)
    lucid_params = [
        lucid.tensor(weight, requires_grad=True),
        lucid.tensor(bias, requires_grad=True),
    ]
    torch_params = [
        torch.tensor(weight, requires_grad=True),
        torch.tensor(bias, requires_grad=True),
    ]
    lucid_opt = getattr(optim, name)(lucid_params, **kwargs)
    torch_opt = getattr(torch.optim, name)(torch_params, foreach=False, **kwargs)
    for _ in range(steps):
        lucid_opt.zero_grad()
        torch_opt.zero_grad()
        _lucid_loss(lucid_params, inputs, targets).backward()
        _torch_loss(torch_params, inputs, targets).backward()
        lucid_opt.step()
        torch_opt.step()
        for ours, theirs in zip(lucid_params, torch_params, strict=True):
            np.testing.assert_allclose(
                ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14
            )
    return lucid_opt, torch_opt, lucid_params


@requires_torch
@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=lambda v: str(v))
def test_trajectory_matches_torch(name, kwargs, rng):
    lucid_opt, torch_opt, _ = _run(name, kwargs, rng, LONG_STEPS.get(name, STEPS))
    ours = lucid_opt.state_dict()
    theirs = torch_opt.state_dict()
    # foreach=False was passed to torch only, to pick its single-tensor code path
    assert ours["param_groups"] == [{**g, "foreach": None} for g in theirs["param_groups"]]
    assert ours["state"].keys() == theirs["state"].keys()
    for index, state in theirs["state"].items():
        assert ours["state"][index].keys() == state.keys()
        for key, value in state.items():
            np.testing.assert_allclose(ours["state"][index][key].numpy(), value.numpy(), rtol=1e-12)


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


ROUND_TRIP_CASES = [CASES[1], CASES[6], CASES[14], CASES[16]] + [
    (name, kwargs) for name, kwargs in CASES[18:] if "maximize" not in kwargs
]


@pytest.mark.parametrize(("name", "kwargs"), ROUND_TRIP_CASES, ids=lambda v: str(v))
def test_state_dict_round_trip_continues_the_trajectory(name, kwargs, rng):
    weight, bias, inputs, targets = _problem(rng)
    params = [lucid.tensor(weight, requires_grad=True), lucid.tensor(bias, requires_grad=True)]
    opt = getattr(optim, name)(params, **kwargs)

    def closure():
        opt.zero_grad()
        loss = _lucid_loss(params, inputs, targets)
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    copies = [p.detach().clone().requires_grad_() for p in params]
    restored = getattr(optim, name)(copies, lr=123.0)
    restored.load_state_dict(opt.state_dict())
    assert restored.param_groups[0]["lr"] == kwargs.get("lr", opt.defaults["lr"])
    assert restored.param_groups[0]["params"] == copies

    def restored_closure():
        restored.zero_grad()
        loss = _lucid_loss(copies, inputs, targets)
        loss.backward()
        return loss

    for _ in range(2):
        opt.step(closure)
        restored.step(restored_closure)
    # Loading casts every state tensor but `step` to the parameter's dtype, as PyTorch does, so
    # NAdam's mu_product and ASGD's eta and mu resume in float64 and differ in the last digits.
    rtol = 1e-7 if name in ("NAdam", "ASGD") else 0
    for ours, theirs in zip(params, copies, strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol)


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
        (lambda p: optim.SGD(p, lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
        (lambda p: optim.Adam(p, lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
        (lambda p: optim.Adam(p, betas=(1.0, 0.9)), ValueError, "beta parameter at index 0: 1.0"),
        (lambda p: optim.Adam(p, eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
        (lambda p: optim.AdamW(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (lambda p: optim.RMSprop(p, alpha=-1), ValueError, "Invalid alpha value: -1"),
        (lambda p: optim.Adagrad(p, lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
        (lambda p: optim.SGD(p, nesterov=True), ValueError, "Nesterov momentum requires"),
        (lambda p: optim.Adamax(p, lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda p: optim.NAdam(p, momentum_decay=-1), ValueError, "Invalid momentum_decay"),
        (lambda p: optim.RAdam(p, betas=(0.9, 1.0)), ValueError, "beta parameter at index 1"),
        (lambda p: optim.Adadelta(p, rho=1.5), ValueError, "Invalid rho value: 1.5"),
        (lambda p: optim.Rprop(p, etas=(0.5, 0.9)), ValueError, "Invalid eta values: 0.5, 0.9"),
        (lambda p: optim.ASGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value"),
        (lambda p: optim.Adafactor(p, lr=-1), ValueError, "Learning rate should be >= 0 but is"),
        (lambda p: optim.Adafactor(p, beta2_decay=0.5), ValueError, "beta2_decay should be <= 0"),
        (lambda p: optim.Adafactor(p, eps=(-1, 1e-3)), ValueError, "epsilon1 should be >= 0"),
        (lambda p: optim.Adafactor(p, d=0.5), ValueError, "Clipping threshold d should be >= 1"),
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
def test_errors_match_torch(make, error, message):
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


LBFGS_CASES = [
    {},
    {"lr": 0.5, "max_iter": 7, "history_size": 3},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "max_iter": 6, "history_size": 2, "lr": 0.8},
    {"line_search_fn": "strong_wolfe", "max_iter": 30, "max_eval": 12},
    {"tolerance_grad": 1e-3, "tolerance_change": 1e-4, "max_iter": 50},
]


@requires_torch
@pytest.mark.parametrize("kwargs", LBFGS_CASES, ids=str)
def test_lbfgs_trajectory_matches_torch(kwargs, rng):
    weight, bias, inputs, targets = _problem(rng)
    lucid_params = [
        lucid.tensor(weight, requires_grad=True),
        lucid.tensor(bias, requires_grad=True),
    ]
    torch_params = [
        torch.tensor(weight, requires_grad=True),
        torch.tensor(bias, requires_grad=True),
    ]
    lucid_opt = optim.LBFGS(lucid_params, **kwargs)
    torch_opt = torch.optim.LBFGS(torch_params, **kwargs)

    def lucid_closure():
        lucid_opt.zero_grad()
        loss = _lucid_loss(lucid_params, inputs, targets)
        loss.backward()
        return loss

    def torch_closure():
        torch_opt.zero_grad()
        loss = _torch_loss(torch_params, inputs, targets)
        loss.backward()
        return loss

    for _ in range(3):
        ours = lucid_opt.step(lucid_closure)
        theirs = torch_opt.step(torch_closure)
        assert ours.item() == pytest.approx(theirs.item(), rel=1e-10)
        for our_param, their_param in zip(lucid_params, torch_params, strict=True):
            np.testing.assert_allclose(
                our_param.detach().numpy(), their_param.detach().numpy(), rtol=1e-10, atol=1e-12
            )
    our_state = lucid_opt.state_dict()["state"][0]
    their_state = torch_opt.state_dict()["state"][0]
    assert our_state.keys() == their_state.keys()
    assert (our_state["func_evals"], our_state["n_iter"]) == (
        their_state["func_evals"],
        their_state["n_iter"],
    )
    assert len(our_state["old_dirs"]) == len(their_state["old_dirs"])
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(
            our_state[key].numpy(), their_state[key].numpy(), rtol=1e-8, atol=1e-12
        )
    assert float(our_state["t"]) == pytest.approx(float(their_state["t"]), rel=1e-8)


def test_lbfgs_state_dict_round_trip_continues_the_trajectory(rng):
    weight, bias, inputs, targets = _problem(rng)
    params = [lucid.tensor(weight, requires_grad=True), lucid.tensor(bias, requires_grad=True)]
    opt = optim.LBFGS(params, max_iter=4, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = _lucid_loss(params, inputs, targets)
        loss.backward()
        return loss

    opt.step(closure)
    copies = [p.detach().clone().requires_grad_() for p in params]
    restored = optim.LBFGS(copies)
    restored.load_state_dict(opt.state_dict())
    assert restored.param_groups[0]["line_search_fn"] == "strong_wolfe"

    def restored_closure():
        restored.zero_grad()
        loss = _lucid_loss(copies, inputs, targets)
        loss.backward()
        return loss

    opt.step(closure)
    restored.step(restored_closure)
    for ours, theirs in zip(params, copies, strict=True):
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


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
        (lambda p: optim.LBFGS(p, lr=-1), ValueError, "Invalid learning rate: -1"),
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
MUON_CASES = [
    {},
    {"lr": 0.05},
    {"lr": 0.05, "momentum": 0.8, "nesterov": False, "weight_decay": 0.0},
    {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3, "eps": 1e-3},
    {"lr": 0.02, "adjust_lr_fn": "original", "ns_coefficients": (2.0, -1.5, 0.5)},
]


@requires_torch
@pytest.mark.parametrize("kwargs", MUON_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("shape", [(3, 5), (5, 3)])
def test_muon_trajectory_matches_torch(kwargs, shape, rng):
    # both run the Newton-Schulz iteration in bfloat16, each product in float32 rounded once
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
        _lucid_loss([ours, lucid.zeros(shape[0])], inputs, targets).backward()
        _torch_loss([theirs, torch.zeros(shape[0])], inputs, targets).backward()
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
        (lambda p: optim.Muon(p, lr=-1.0), r"Learning rate should be >= 0 but is: -1\.0"),
        (lambda p: optim.Muon(p, momentum=-1.0), r"momentum should be >= 0 but is: -1\.0"),
        (lambda p: optim.Muon(p, weight_decay=-1.0), r"weight decay should be >= 0 but is: -1"),
        (
            lambda p: optim.Muon(p, adjust_lr_fn="linear"),
            r"Adjust learning rate function linear is not supported",
        ),
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
