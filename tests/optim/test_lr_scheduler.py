"""Learning-rate schedules give PyTorch's lr sequences; state dicts resume them; errors match."""

from __future__ import annotations

import math

import pytest

import lucid
import lucid.optim as optim
from lucid.optim import lr_scheduler
from tests.torch_oracle import requires_torch, torch

EPOCHS = 30


def _optimizers(name="SGD", **kwargs):
    ours = getattr(optim, name)(
        [
            {"params": [lucid.zeros(2, requires_grad=True)]},
            {"params": [lucid.zeros(2, requires_grad=True)], "lr": 0.3},
        ],
        lr=0.1,
        **kwargs,
    )
    theirs = getattr(torch.optim, name)(
        [
            {"params": [torch.zeros(2, requires_grad=True)]},
            {"params": [torch.zeros(2, requires_grad=True)], "lr": 0.3},
        ],
        lr=0.1,
        **kwargs,
    )
    return ours, theirs


def _lambda(epoch):
    return 0.95**epoch + 0.01 * epoch


SCHEDULES = [
    ("StepLR", {"step_size": 7}),
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [4, 10, 10, 21], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": _lambda}),
    ("LambdaLR", {"lr_lambda": [_lambda, lambda epoch: 1.0 / (epoch + 1)]}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.2, "end_factor": 0.6, "total_iters": 12}),
    ("OneCycleLR", {"max_lr": 1.0, "total_steps": EPOCHS + 1}),
    ("OneCycleLR", {"max_lr": [1.0, 2.0], "epochs": 4, "steps_per_epoch": 8, "three_phase": True}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 40, "anneal_strategy": "linear"}),
    ("MultiplicativeLR", {"lr_lambda": lambda epoch: 0.9 + 0.001 * epoch}),
    ("MultiplicativeLR", {"lr_lambda": [_lambda, lambda epoch: 0.97]}),
    ("ConstantLR", {}),
    ("ConstantLR", {"factor": 0.25, "total_iters": 9}),
    ("PolynomialLR", {}),
    ("PolynomialLR", {"total_iters": 20, "power": 2.5}),
    ("CosineAnnealingWarmRestarts", {"T_0": 7}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.01}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4}),
    (
        "CyclicLR",
        {
            "base_lr": [0.01, 0.02],
            "max_lr": 0.5,
            "step_size_up": 3,
            "step_size_down": 5,
            "mode": "triangular2",
        },
    ),
    (
        "CyclicLR",
        {
            "base_lr": 0.01,
            "max_lr": 0.1,
            "step_size_up": 2,
            "mode": "exp_range",
            "gamma": 0.9,
            "base_momentum": 0.5,
            "max_momentum": [0.9, 0.95],
        },
    ),
    (
        "CyclicLR",
        {
            "base_lr": 0.01,
            "max_lr": 0.1,
            "step_size_up": 4,
            "cycle_momentum": False,
            "scale_fn": lambda x: 1 / (1 + x),
            "scale_mode": "iterations",
        },
    ),
]


def _step_both(ours, theirs, our_opt, their_opt):
    our_opt.step()
    their_opt.step()
    ours.step()
    theirs.step()


@requires_torch
@pytest.mark.parametrize(("name", "kwargs"), SCHEDULES, ids=lambda v: str(v))
def test_lr_sequence_matches_torch(name, kwargs):
    optimizer_name = "Adam" if name == "OneCycleLR" or kwargs.get("mode") == "exp_range" else "SGD"
    extra = {"momentum": 0.9} if optimizer_name == "SGD" else {}
    our_opt, their_opt = _optimizers(optimizer_name, **extra)
    ours = getattr(lr_scheduler, name)(our_opt, **kwargs)
    theirs = getattr(torch.optim.lr_scheduler, name)(their_opt, **kwargs)
    assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)
    for _ in range(EPOCHS):
        _step_both(ours, theirs, our_opt, their_opt)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-13, abs=1e-16)
        for our_group, their_group in zip(our_opt.param_groups, their_opt.param_groups):
            assert our_group["lr"] == pytest.approx(their_group["lr"], rel=1e-13, abs=1e-16)
            if optimizer_name == "Adam":
                assert our_group["betas"] == pytest.approx(their_group["betas"], rel=1e-13)
            else:
                assert our_group["momentum"] == pytest.approx(their_group["momentum"], rel=1e-13)


@requires_torch
def test_one_cycle_cycles_sgd_momentum():
    our_opt, their_opt = _optimizers("SGD", momentum=0.9)
    ours = lr_scheduler.OneCycleLR(our_opt, max_lr=0.4, total_steps=20, pct_start=0.25)
    theirs = torch.optim.lr_scheduler.OneCycleLR(their_opt, max_lr=0.4, total_steps=20,
                                                 pct_start=0.25)  # fmt: skip
    for _ in range(19):
        _step_both(ours, theirs, our_opt, their_opt)
        assert our_opt.param_groups[0]["momentum"] == pytest.approx(
            their_opt.param_groups[0]["momentum"], rel=1e-13
        )
    our_opt.step()
    ours.step()
    with pytest.raises(ValueError, match="Tried to step 21 times. The specified number of"):
        ours.step()


@requires_torch
def test_sequential_lr_matches_torch():
    our_opt, their_opt = _optimizers()
    ours = lr_scheduler.SequentialLR(
        our_opt,
        [
            lr_scheduler.LinearLR(our_opt, start_factor=0.1, total_iters=5),
            lr_scheduler.ExponentialLR(our_opt, gamma=0.9),
            lr_scheduler.CosineAnnealingLR(our_opt, T_max=6),
        ],
        milestones=[5, 15],
    )
    theirs = torch.optim.lr_scheduler.SequentialLR(
        their_opt,
        [
            torch.optim.lr_scheduler.LinearLR(their_opt, start_factor=0.1, total_iters=5),
            torch.optim.lr_scheduler.ExponentialLR(their_opt, gamma=0.9),
            torch.optim.lr_scheduler.CosineAnnealingLR(their_opt, T_max=6),
        ],
        milestones=[5, 15],
    )
    assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)
    for _ in range(EPOCHS):
        _step_both(ours, theirs, our_opt, their_opt)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-13)


@requires_torch
def test_chained_scheduler_matches_torch():
    our_opt, their_opt = _optimizers()
    ours = lr_scheduler.ChainedScheduler(
        [
            lr_scheduler.ConstantLR(our_opt, factor=0.1, total_iters=4),
            lr_scheduler.ExponentialLR(our_opt, gamma=0.9),
            lr_scheduler.PolynomialLR(our_opt, total_iters=40, power=0.5),
        ]
    )
    theirs = torch.optim.lr_scheduler.ChainedScheduler(
        [
            torch.optim.lr_scheduler.ConstantLR(their_opt, factor=0.1, total_iters=4),
            torch.optim.lr_scheduler.ExponentialLR(their_opt, gamma=0.9),
            torch.optim.lr_scheduler.PolynomialLR(their_opt, total_iters=40, power=0.5),
        ]
    )
    assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)
    for _ in range(EPOCHS):
        _step_both(ours, theirs, our_opt, their_opt)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-13)
    assert ours.state_dict().keys() == theirs.state_dict().keys()


@requires_torch
@pytest.mark.parametrize("epochs", [[0.5, 1.5, 2.25, 3.0, 7.5, 20.0], [4, 11, 2, 30]], ids=str)
def test_cosine_warm_restarts_step_with_epoch_matches_torch(epochs):
    our_opt, their_opt = _optimizers()
    ours = lr_scheduler.CosineAnnealingWarmRestarts(our_opt, T_0=3, T_mult=2)
    theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(their_opt, T_0=3, T_mult=2)
    for epoch in epochs:
        ours.step(epoch)
        theirs.step(epoch)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-13)
        assert (ours.T_i, ours.T_cur, ours.last_epoch) == (
            theirs.T_i,
            theirs.T_cur,
            theirs.last_epoch,
        )


@requires_torch
@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("ConstantLR", {"factor": 0.5, "total_iters": 3}),
        ("PolynomialLR", {"total_iters": 8, "power": 2.0}),
        ("MultiplicativeLR", {"lr_lambda": lambda epoch: 0.9}),
    ],
)
def test_step_with_epoch_uses_the_same_closed_form_as_torch(name, kwargs):
    our_opt, their_opt = _optimizers()
    ours = getattr(lr_scheduler, name)(our_opt, **kwargs)
    theirs = getattr(torch.optim.lr_scheduler, name)(their_opt, **kwargs)
    for epoch in [2, 5, 3, 10]:
        our_opt.step()
        their_opt.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            ours.step(epoch)
        with pytest.warns(UserWarning, match="epoch parameter"):
            theirs.step(epoch)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-13)


@requires_torch
def test_cyclic_lr_state_dict_keeps_callable_objects_only():
    class Halve:
        def __init__(self, base):
            self.base = base

        def __call__(self, cycle):
            return self.base**cycle

    opt, _ = _optimizers()
    scheduler = lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=Halve(0.5))
    state = scheduler.state_dict()
    assert state["_scale_fn_custom"] == {"base": 0.5}
    assert "_scale_fn_ref" not in state
    other = lr_scheduler.CyclicLR(_optimizers()[0], 0.01, 0.1, step_size_up=2, scale_fn=Halve(2))
    other.load_state_dict(state)
    assert other._scale_fn_custom.base == 0.5
    plain = lr_scheduler.CyclicLR(_optimizers()[0], 0.01, 0.1, mode="exp_range", gamma=0.5)
    state = plain.state_dict()
    assert state["_scale_fn_custom"] is None
    plain.load_state_dict(state)
    assert plain.scale_fn(2) == 0.25


@requires_torch
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"mode": "max", "factor": 0.5, "patience": 2, "cooldown": 2, "min_lr": [0.01, 0.02]},
        {"threshold_mode": "abs", "threshold": 0.05, "patience": 1, "min_lr": 0.002},
    ],
    ids=str,
)
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    our_opt, their_opt = _optimizers()
    ours = lr_scheduler.ReduceLROnPlateau(our_opt, **kwargs)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(their_opt, **kwargs)
    metrics = [1.0 / (1 + epoch) if epoch < 6 else 0.2 + 0.01 * math.sin(epoch) for epoch in
               range(EPOCHS)]  # fmt: skip
    for metric in metrics:
        ours.step(lucid.tensor(metric, dtype=lucid.float64))
        theirs.step(metric)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)
        assert (ours.num_bad_epochs, ours.cooldown_counter, ours.best) == (
            theirs.num_bad_epochs,
            theirs.cooldown_counter,
            theirs.best,
        )
    assert ours.get_last_lr() != [0.1, 0.3]


@requires_torch
@pytest.mark.parametrize(
    "make",
    [
        lambda opt: lr_scheduler.StepLR(opt, step_size=4, gamma=0.5),
        lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=6),
        lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=30),
        lambda opt: lr_scheduler.SequentialLR(
            opt,
            [lr_scheduler.LinearLR(opt, total_iters=3), lr_scheduler.ExponentialLR(opt, 0.8)],
            milestones=[3],
        ),
        lambda opt: lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=7),
        lambda opt: lr_scheduler.PolynomialLR(opt, total_iters=12, power=1.5),
        lambda opt: lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.95),
        lambda opt: lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=3),
        lambda opt: lr_scheduler.CyclicLR(opt, 0.01, 0.2, step_size_up=3, mode="triangular2"),
        lambda opt: lr_scheduler.ChainedScheduler(
            [lr_scheduler.ConstantLR(opt, total_iters=7), lr_scheduler.ExponentialLR(opt, 0.8)]
        ),
    ],
)
def test_state_dict_resumes_the_schedule(make):
    our_opt, _ = _optimizers()
    scheduler = make(our_opt)
    for _ in range(5):
        our_opt.step()
        scheduler.step()
    saved_scheduler = scheduler.state_dict()
    saved_optimizer = our_opt.state_dict()
    assert "optimizer" not in saved_scheduler
    expected = []
    for _ in range(10):
        our_opt.step()
        scheduler.step()
        expected.append(scheduler.get_last_lr())

    fresh_opt, _ = _optimizers()
    fresh = make(fresh_opt)
    fresh_opt.load_state_dict(saved_optimizer)
    fresh.load_state_dict(saved_scheduler)
    resumed = []
    for _ in range(10):
        fresh_opt.step()
        fresh.step()
        resumed.append(fresh.get_last_lr())
    assert resumed == expected


@requires_torch
def test_lambda_lr_state_dict_saves_callable_objects_only():
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def __call__(self, epoch):
            return self.factor * epoch

    our_opt, _ = _optimizers()
    scheduler = lr_scheduler.LambdaLR(our_opt, [Scale(0.5), _lambda])
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"factor": 0.5}, None]
    other = lr_scheduler.LambdaLR(_optimizers()[0], [Scale(2.0), _lambda])
    other.load_state_dict(state)
    assert other.lr_lambdas[0].factor == 0.5


@requires_torch
def test_step_with_epoch_uses_closed_form_and_warns():
    our_opt, _ = _optimizers()
    scheduler = lr_scheduler.StepLR(our_opt, step_size=2, gamma=0.5)
    with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)`"):
        scheduler.step(5)
    assert scheduler.get_last_lr() == pytest.approx([0.025, 0.075])


@requires_torch
def test_get_lr_outside_step_warns():
    scheduler = lr_scheduler.ExponentialLR(_optimizers()[0], gamma=0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        scheduler.get_lr()


@requires_torch
@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda opt: lr_scheduler.StepLR(None, 3), TypeError, "NoneType is not an Optimizer"),
        (lambda opt: lr_scheduler.StepLR(opt, 3, last_epoch=4), KeyError, "initial_lr"),
        (lambda opt: lr_scheduler.LambdaLR(opt, [_lambda]), ValueError, "Expected 2 lr_lambdas"),
        (lambda opt: lr_scheduler.LinearLR(opt, start_factor=0), ValueError, "greater than 0"),
        (lambda opt: lr_scheduler.LinearLR(opt, end_factor=2), ValueError, "between 0 and 1"),
        (lambda opt: lr_scheduler.ReduceLROnPlateau(opt, factor=1.0), ValueError, "Factor"),
        (lambda opt: lr_scheduler.ReduceLROnPlateau(opt, mode="up"), ValueError, "mode up is"),
        (
            lambda opt: lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1]),
            ValueError,
            "expected 2 min_lrs, got 1",
        ),
        (
            lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=1.0),
            ValueError,
            "You must define either total_steps OR",
        ),
        (
            lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=0),
            ValueError,
            "Expected positive integer total_steps, but got 0",
        ),
        (
            lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=[1.0], total_steps=5),
            ValueError,
            "max_lr must have the same length as optimizer.param_groups",
        ),
        (
            lambda opt: lr_scheduler.OneCycleLR(opt, 1.0, 5, anneal_strategy="step"),
            ValueError,
            "anneal_strategy must be one of 'cos' or 'linear', instead got step",
        ),
        (
            lambda opt: lr_scheduler.SequentialLR(opt, [lr_scheduler.StepLR(opt, 2)], [1]),
            ValueError,
            "number of schedulers 1 and the number of milestones to be equal to 1",
        ),
        (
            lambda opt: lr_scheduler.SequentialLR(
                opt, [lr_scheduler.StepLR(opt, 2), lr_scheduler.ReduceLROnPlateau(opt)], [1]
            ),
            ValueError,
            "does not support `ReduceLROnPlateau`",
        ),
        (
            lambda opt: lr_scheduler.MultiplicativeLR(opt, [_lambda, 2.0]),
            TypeError,
            "lr_lambda should be a function, but got float",
        ),
        (
            lambda opt: lr_scheduler.ConstantLR(opt, factor=1.5),
            ValueError,
            "Constant multiplicative factor expected to be between 0 and 1.",
        ),
        (
            lambda opt: lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0),
            ValueError,
            "Expected positive integer T_0, but got 0",
        ),
        (
            lambda opt: lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5),
            ValueError,
            "Expected integer T_mult >= 1, but got 1.5",
        ),
        (
            lambda opt: lr_scheduler.CosineAnnealingWarmRestarts(opt, 2).step(-1),
            ValueError,
            "Expected non-negative epoch, but got -1",
        ),
        (
            lambda opt: lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="sine"),
            ValueError,
            "mode is invalid and scale_fn is None",
        ),
        (
            lambda opt: lr_scheduler.CyclicLR(opt, [0.1], 1.0),
            ValueError,
            "base_lr must have the same length as optimizer.param_groups",
        ),
        (
            lambda opt: lr_scheduler.ChainedScheduler([]),
            ValueError,
            "ChainedScheduler expects at least one scheduler to be chained",
        ),
        (
            lambda opt: lr_scheduler.ChainedScheduler(
                [lr_scheduler.StepLR(opt, 2), lr_scheduler.StepLR(_optimizers()[0], 2)]
            ),
            ValueError,
            "expects all schedulers to belong to the same optimizer",
        ),
    ],
)
def test_errors_match_torch(make, error, message):
    with pytest.raises(error, match=message):
        make(_optimizers()[0])


def test_one_cycle_and_cyclic_require_momentum():
    opt = optim.Adagrad([lucid.zeros(2, requires_grad=True)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.CyclicLR(opt, 0.1, 1.0)
    lr_scheduler.CyclicLR(opt, 0.1, 1.0, cycle_momentum=False)
