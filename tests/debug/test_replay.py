"""replay_step: a step whose cheap checks fire is replayed under full checks, from the state
saved before it, and the first non-finite value in execution order is named."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import AnomalyError, NonFiniteWarning
from lucid.debug import BackwardCall, ReplayResult, replay_step


class ZeroNorm(nn.Module):
    """Divides by the batch standard deviation: 0/0 on a batch of one example."""

    def forward(self, x):
        std = x.std(dim=0, unbiased=False)
        return (x - x.mean(dim=0)) / std  # the birth line


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = ZeroNorm()
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.norm(self.fc(x)).relu())


def _training(lr: float = 0.1, optimizer_class=lucid.optim.SGD):
    model = Net()
    optimizer = optimizer_class(model.parameters(), lr=lr)

    def step(x):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        return loss

    return model, optimizer, step


def _replay(*args, **kwargs) -> ReplayResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonFiniteWarning)
        return replay_step(*args, **kwargs)


def test_clean_step_reports_clean_and_keeps_its_update() -> None:
    model, optimizer, step = _training()
    before = model.fc.weight.detach().clone()
    x = lucid.rand(8, 4) + 1.0
    result = _replay(step, x, model=model, optimizer=optimizer, step=0)
    assert result.clean and result.status == "clean"
    assert result.event is None and result.checks == []
    assert math.isfinite(result.value.item())
    assert not np.array_equal(model.fc.weight.detach().numpy(), before.numpy())
    assert str(result) == "replay_step: step 0 ran clean."


def test_replay_names_the_first_nonfinite_value_in_forward() -> None:
    # Div makes nan first; the relu, linear and loss after it only carry it on.
    model, optimizer, step = _training()
    result = _replay(step, lucid.ones(1, 4), model=model, optimizer=optimizer, step=7)
    assert result.status == "reproduced"
    event = result.event
    assert (event.op, event.phase, event.kind) == ("div", "forward", "nan")
    assert event.module_path == "norm" and event.step == 7
    assert event.mechanism == "invalid operation" and event.created
    assert event.filename == __file__
    assert "the birth line" in open(__file__).read().splitlines()[event.lineno - 1]
    assert isinstance(result.error, AnomalyError)
    assert any("step_fn returned a nan value" in check for check in result.checks)


def test_replay_report_names_op_line_module_step_and_inputs() -> None:
    model, optimizer, step = _training()
    result = _replay(step, lucid.ones(1, 4), model=model, optimizer=optimizer, step=3)
    report = str(result)
    assert "op:        div (forward)" in report
    assert "return (x - x.mean(dim=0)) / std  # the birth line" in report
    assert "module:    norm (ZeroNorm) in Net" in report
    assert "step:      3" in report
    assert "mechanism: invalid operation" in report
    assert "input 1:   shape=[4]" in report


def test_replay_names_a_nonfinite_value_born_in_backward_only() -> None:
    # sqrt(0) is finite; its gradient 1/(2 sqrt(0)) is the first non-finite value.
    weight = lucid.zeros(3, requires_grad=True)

    def step(x):
        loss = (weight * x).sqrt().sum()
        loss.backward()
        return loss

    result = _replay(step, lucid.ones(3), step=2)
    assert result.status == "reproduced"
    event = result.event
    assert (event.op, event.phase, event.kind) == ("sqrt", "backward", "inf")
    assert (
        event.lineno is not None
        and "sqrt()" in open(__file__).read().splitlines()[event.lineno - 1]
    )
    assert any("the sentinel saw inf born in sqrt (backward)" in c for c in result.checks)
    # The replay kept the op's forward arguments: enough to re-run the backward alone.
    call = event.op_args
    assert isinstance(call, BackwardCall)
    np.testing.assert_array_equal(call.forward_args[0], np.zeros(3, np.float32))
    assert call.requires_grad == (True,)
    np.testing.assert_array_equal(call.grad_outputs[0], np.ones(3, np.float32))


def test_backward_nan_is_found_from_parameter_gradients_without_any_warning() -> None:
    # The sentinel warns once per site: the second failure at the same site is found by
    # the births it records and the gradient check, not by a warning.
    model = nn.Linear(2, 1)
    with lucid.no_grad():
        model.weight.zero_()
        model.bias.zero_()

    def step(x):
        model.zero_grad()
        model(x).sqrt().sum().backward()

    for attempt in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = replay_step(step, lucid.ones(1, 2), model=model, step=attempt)
        assert result.status == "reproduced", attempt
        assert result.event.op == "sqrt" and result.event.phase == "backward"
        assert [w.category for w in caught] == [NonFiniteWarning]


def test_replay_says_so_plainly_when_the_replay_is_clean() -> None:
    calls = []

    def flaky_step(x):
        calls.append(1)
        # Non-finite on the first run only: state the replay cannot restore.
        return x.sum() / (len(calls) - 1)

    with pytest.warns(NonFiniteWarning, match="the problem did not reproduce"):
        result = replay_step(flaky_step, lucid.ones(2), step=5)
    assert result.status == "not_reproduced" and not result.clean
    assert result.event is None and len(calls) == 2
    assert "replay under full checks (forward and backward, NaN and Inf) was clean" in str(result)


def test_fired_step_issues_a_warning_carrying_the_report() -> None:
    model, optimizer, step = _training()
    with pytest.warns(NonFiniteWarning, match="op:        div") as record:
        result = replay_step(step, lucid.ones(1, 4), model=model, optimizer=optimizer)
    assert record[0].message.event is result.event


def test_replay_restores_rng_state_for_the_replay_and_after_it() -> None:
    draws = []

    def noisy_step(x):
        noise = lucid.rand(3)
        draws.append(noise.numpy().copy())
        return (x * noise).log().sum()  # log(0) = -inf

    lucid.manual_seed(11)
    result = _replay(noisy_step, lucid.zeros(3))
    assert result.status == "reproduced" and result.event.op == "log"
    assert len(draws) == 2
    np.testing.assert_array_equal(draws[0], draws[1])
    # After a fired step the generator is back where the step started.
    np.testing.assert_array_equal(lucid.rand(3).numpy(), draws[0])
    lucid.manual_seed(11)
    np.testing.assert_array_equal(result.rng_state, lucid.get_rng_state().numpy())


def test_clean_step_leaves_the_rng_advanced() -> None:
    lucid.manual_seed(3)
    first = lucid.rand(2).numpy()
    lucid.manual_seed(3)
    _replay(lambda: lucid.rand(2).sum())
    assert not np.array_equal(lucid.rand(2).numpy(), first)


def test_fired_step_puts_parameters_gradients_and_optimizer_state_back() -> None:
    model, optimizer, step = _training(lr=0.01, optimizer_class=lucid.optim.Adam)
    step(lucid.rand(8, 4) + 1.0)  # gives Adam state and leaves gradients behind
    params = [p.detach().clone().numpy() for p in model.parameters()]
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    adam = [
        {key: value.numpy().copy() for key, value in state.items() if key != "step"}
        for state in optimizer.state.values()
    ]
    result = _replay(step, lucid.ones(1, 4), model=model, optimizer=optimizer)
    assert result.status == "reproduced"
    for param, saved, grad in zip(model.parameters(), params, grads):
        np.testing.assert_array_equal(param.detach().numpy(), saved)
        np.testing.assert_array_equal(param.grad.numpy(), grad)
    for state, saved in zip(optimizer.state.values(), adam):
        for key, value in saved.items():
            np.testing.assert_array_equal(state[key].numpy(), value)


def test_replay_restores_a_batch_the_step_modified_in_place() -> None:
    def step(x):
        x.mul_(0.0)
        return (x / x).sum()

    x = lucid.ones(3)
    result = _replay(step, x)
    assert result.status == "reproduced" and result.event.op == "div"
    np.testing.assert_array_equal(x.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(result.batch[0], np.ones(3, np.float32))


def test_anomaly_error_raised_by_the_step_counts_as_fired() -> None:
    def step(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lucid.autograd.detect_anomaly():
                return (x / x).sum()

    result = _replay(step, lucid.zeros(2))
    assert result.status == "reproduced" and result.event.op == "div"
    assert result.checks[0].startswith("AnomalyError raised: Function 'div'")


def test_other_warnings_of_the_step_are_shown_as_usual() -> None:
    def step(x):
        warnings.warn("from the step", UserWarning, stacklevel=1)
        return x.sum()

    with pytest.warns(UserWarning, match="from the step"):
        result = replay_step(step, lucid.ones(2))
    assert result.clean


def test_nonfinite_value_in_a_returned_tuple_fires() -> None:
    result = _replay(lambda x: (x.sum(), {"log": (x - 1.0).log().sum()}), lucid.ones(2))
    assert result.status == "reproduced"
    assert (result.event.op, result.event.kind) == ("log", "inf")


def test_kept_forward_arguments_are_dropped_once_their_backward_ran() -> None:
    from lucid.debug.replay import _full_checks

    model = Net()
    with _full_checks() as recorder:
        loss = model(lucid.rand(4, 4) + 1.0).sum()
        assert len(recorder.kept) > 5
        loss.backward()
        assert len(recorder.kept) == 0


def test_a_replayed_step_is_counted_once_and_named_by_the_training_step() -> None:
    from lucid._core.sentinel import step_of

    model, optimizer, step = _training()
    for _ in range(2):
        _replay(step, lucid.randn(8, 4), model=model, optimizer=optimizer)
    result = _replay(step, lucid.ones(1, 4), model=model, optimizer=optimizer)
    assert result.event.step == 2 and result.event.model_call is None
    assert step_of(model) == 2  # put back to before the failed step, as its parameters are
