"""The always-on sentinel: with no anomaly mode, a NaN/Inf reaching backward names its birth."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid._core import sentinel
from lucid.autograd import (
    AnomalyEvent,
    NonFiniteWarning,
    is_sentinel_enabled,
    module_scope,
    set_sentinel,
)
from tests.markers import marked_line

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(__file__, marker)


@pytest.fixture(autouse=True)
def _fresh_sentinel():
    """Each test starts with the sentinel on and no site warned about yet."""
    was_enabled = is_sentinel_enabled()
    set_sentinel(True)
    sentinel.reset_sentinel()
    yield
    set_sentinel(was_enabled)
    sentinel.reset_sentinel()


class _Sqrt(lucid.nn.Module):
    def forward(self, x):
        return x.sqrt()  # <sqrt-in-module>


def _sentinel_warnings(action) -> list[warnings.WarningMessage]:
    """Run `action` and return the NonFiniteWarnings it emitted (every one, no dedup)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        action()  # <backward-call>
    return [w for w in record if issubclass(w.category, NonFiniteWarning)]


def _only_event(record: list[warnings.WarningMessage]) -> AnomalyEvent:
    assert len(record) == 1, [str(w.message) for w in record]
    event = record[0].message.event
    assert isinstance(event, AnomalyEvent)
    return event


def _assert_at(event: AnomalyEvent, marker: str) -> None:
    assert event.filename is not None and Path(event.filename).resolve() == _THIS_FILE
    assert event.lineno == _line(marker)
    assert event.location == f"{event.filename}:{event.lineno}"


# ---------------------------------------------------------------------- the API
def test_warning_category_is_a_runtime_warning_carrying_an_event():
    assert issubclass(NonFiniteWarning, RuntimeWarning)


def test_sentinel_is_on_by_default_in_a_fresh_process():
    result = subprocess.run(
        [sys.executable, "-c", "import lucid; print(lucid.autograd.is_sentinel_enabled())"],
        capture_output=True, text=True, env={**os.environ, "LUCID_SENTINEL": "1"}, timeout=60,
    )  # fmt: skip
    assert result.stdout.strip() == "True", result.stderr


def test_environment_variable_turns_the_sentinel_off_at_import():
    result = subprocess.run(
        [sys.executable, "-c", "import lucid; print(lucid.autograd.is_sentinel_enabled())"],
        capture_output=True, text=True, env={**os.environ, "LUCID_SENTINEL": "0"}, timeout=60,
    )  # fmt: skip
    assert result.stdout.strip() == "False", result.stderr


def test_set_sentinel_toggles_is_sentinel_enabled():
    set_sentinel(False)
    assert is_sentinel_enabled() is False
    set_sentinel(True)
    assert is_sentinel_enabled() is True


# --------------------------------------------------------- births in forward
def test_nan_loss_from_log_of_negative_names_log_and_its_line():
    x = lucid.tensor([-1.0, 2.0], requires_grad=True)
    logged = lucid.log(x)  # <log-negative>
    loss = (logged * 2.0 + 1.0).sum()
    record = _sentinel_warnings(loss.backward)
    event = _only_event(record)
    assert event.op == "log"
    assert event.phase == "forward"
    assert event.kind == "nan"
    assert event.mechanism == "invalid operation"
    assert event.created is True
    _assert_at(event, "log-negative")
    message = str(record[0].message)
    assert "log" in message
    assert f"{event.filename}:{_line('log-negative')}" in message
    assert "invalid operation" in message
    # The warning points at the user's code, not at lucid's internals.
    assert Path(record[0].filename).resolve() == _THIS_FILE


def test_each_birth_site_warns_once():
    def step():
        x = lucid.tensor([-1.0], requires_grad=True)
        lucid.log(x).sum().backward()  # <repeated-site>

    def three_steps():
        for _ in range(3):
            step()

    event = _only_event(_sentinel_warnings(three_steps))
    _assert_at(event, "repeated-site")
    sentinel.reset_sentinel()
    assert len(_sentinel_warnings(step)) == 1, "reset_sentinel forgets the sites warned about"


def test_distinct_birth_sites_warn_separately():
    x = lucid.tensor([-1.0], requires_grad=True)

    def two_sites():
        lucid.log(x).sum().backward()  # <first-site>
        lucid.log(x).sum().backward()  # <second-site>

    record = _sentinel_warnings(two_sites)
    assert [w.message.event.lineno for w in record] == [
        _line("first-site"),
        _line("second-site"),
    ]


def test_set_sentinel_false_silences_it():
    set_sentinel(False)
    x = lucid.tensor([-1.0], requires_grad=True)
    loss = lucid.log(x).sum()
    assert _sentinel_warnings(loss.backward) == []


def test_chained_sqrt_names_the_first_sqrt():
    x = lucid.tensor([1.0, 3.0], requires_grad=True)
    y = lucid.sqrt(x - 2.0)  # <first-sqrt>
    z = lucid.sqrt(y)
    event = _only_event(_sentinel_warnings(z.sum().backward))
    assert (event.op, event.phase, event.mechanism) == ("sqrt", "forward", "invalid operation")
    _assert_at(event, "first-sqrt")


def test_zero_over_zero_normalisation_names_div():
    x = lucid.tensor([2.0, 2.0, 2.0], requires_grad=True)
    normalised = (x - x.mean()) / x.std()  # <normalise>
    event = _only_event(_sentinel_warnings(normalised.sum().backward))
    assert (event.op, event.phase, event.kind) == ("div", "forward", "nan")
    assert event.mechanism == "invalid operation"
    _assert_at(event, "normalise")


def test_float16_exp_overflow_is_detected():
    x = lucid.tensor([1.0, 12.0], dtype=lucid.float16, requires_grad=True)
    grown = x.exp()  # <half-exp>
    event = _only_event(_sentinel_warnings(grown.sum().backward))
    assert (event.op, event.phase, event.kind) == ("exp", "forward", "inf")
    assert event.mechanism == "overflow"
    _assert_at(event, "half-exp")


bfloat16_only = pytest.mark.skipif(
    lucid.bfloat16.numpy_dtype is None, reason="bfloat16 needs the ml_dtypes package"
)


@bfloat16_only
def test_cast_to_bfloat16_that_overflows_is_a_birth():
    # ml_dtypes' cast raises no NumPy flag of its own: lucid raises the overflow flag for it
    x = lucid.tensor([1.0, 3.4e38], requires_grad=True)
    narrowed = x.to(lucid.bfloat16)  # <bfloat16-cast>
    event = _only_event(_sentinel_warnings(narrowed.float().sum().backward))
    assert (event.phase, event.kind, event.mechanism) == ("forward", "inf", "overflow")
    assert event.op == "to"
    _assert_at(event, "bfloat16-cast")


@bfloat16_only
def test_bfloat16_product_finite_in_float32_but_not_in_bfloat16_is_a_birth():
    # 3e38 * 1.132 is finite in float32, where the product is computed, and past bfloat16's
    # largest value, to which it is rounded
    x = lucid.tensor([1.0, 3.0e38], dtype=lucid.bfloat16, requires_grad=True)
    grown = x * 1.132  # <bfloat16-mul>
    event = _only_event(_sentinel_warnings(grown.float().sum().backward))
    assert (event.op, event.phase, event.kind, event.mechanism) == (
        "mul",
        "forward",
        "inf",
        "overflow",
    )
    _assert_at(event, "bfloat16-mul")


def test_float32_exp_overflow_is_detected():
    x = lucid.tensor([1.0, 100.0], requires_grad=True)
    grown = x.exp()  # <single-exp>
    event = _only_event(_sentinel_warnings(grown.sum().backward))
    assert (event.op, event.kind, event.mechanism) == ("exp", "inf", "overflow")
    _assert_at(event, "single-exp")


def test_module_path_is_named():
    x = lucid.tensor([-1.0], requires_grad=True)
    with module_scope("encoder"):
        with module_scope("encoder.1"):
            logged = lucid.log(x)  # <in-module>
    record = _sentinel_warnings(logged.sum().backward)
    event = _only_event(record)
    assert event.module_path == "encoder.1"
    assert "encoder.1" in str(record[0].message)
    _assert_at(event, "in-module")


# -------------------------------------------------------- births in backward
def test_non_finite_leaf_gradient_names_its_backward_birth():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    root = x.sqrt()  # <sqrt-forward>
    loss = root.sum()
    event = _only_event(_sentinel_warnings(loss.backward))
    assert np.isfinite(loss.item())
    assert (event.op, event.node_name, event.phase) == ("sqrt", "SqrtBackward0", "backward")
    assert (event.kind, event.mechanism) == ("inf", "division by zero")
    # The sentinel keeps each node's forward site: a backward birth names the forward line
    # of the op whose backward created it, as anomaly mode does.
    _assert_at(event, "sqrt-forward")


def test_nan_born_in_backward_of_where_guard():
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    guarded = lucid.where(x > 0, x.sqrt(), 0.0)  # <guarded-sqrt>
    event = _only_event(_sentinel_warnings(guarded.sum().backward))
    assert (event.op, event.phase, event.kind) == ("sqrt", "backward", "nan")
    assert event.mechanism == "invalid operation"
    _assert_at(event, "guarded-sqrt")


def test_backward_birth_warning_names_the_forward_line_of_the_op_and_its_module():
    model = lucid.nn.Sequential(_Sqrt())
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    loss = model(x).sum()
    record = _sentinel_warnings(loss.backward)
    event = _only_event(record)
    _assert_at(event, "sqrt-in-module")
    assert event.module_path == "0"
    assert f"forward at {event.location}" in str(record[0].message)


def test_backward_birth_of_a_graph_recorded_with_the_sentinel_off_says_what_it_lacks():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    sentinel.set_sentinel(False)
    try:
        loss = x.sqrt().sum()
    finally:
        sentinel.set_sentinel(True)
    event = _only_event(_sentinel_warnings(loss.backward))
    _assert_at(event, "backward-call")
    assert "forward line of the op is not known" in event.describe()


def test_a_birth_site_warns_once_per_process_not_once_per_thread():
    import threading

    x = lucid.tensor([-1.0], requires_grad=True)

    def step():
        lucid.log(x).sum().backward()  # <shared-site>

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        step()
        thread = threading.Thread(target=step)
        thread.start()
        thread.join(5)
    found = [w for w in record if issubclass(w.category, NonFiniteWarning)]
    assert len(found) == 1, [str(w.message).splitlines()[0] for w in found]


def test_overflow_when_two_branch_gradients_are_summed_is_an_accumulation_birth():
    x = lucid.tensor([1.0], requires_grad=True)
    shared = x * 1.0
    first, second = shared * 1.0, shared * 1.0

    def backward():
        # Each branch brings a finite 3e38; only their float32 sum overflows.
        seeds = [lucid.tensor([3e38]), lucid.tensor([3e38])]
        lucid.autograd.backward([first, second], seeds)

    event = _only_event(_sentinel_warnings(backward))
    assert np.isinf(x.grad.numpy()).all()
    assert (event.phase, event.kind, event.mechanism) == ("accumulation", "inf", "overflow")
    assert event.created is True


def test_overflow_when_writing_into_leaf_grad_warns():
    x = lucid.tensor([1.0], requires_grad=True)
    x.grad = lucid.tensor([3e38])
    y = x * 1.0
    # The old .grad and the new gradient are finite; the accumulated .grad is not.
    event = _only_event(_sentinel_warnings(lambda: y.backward(lucid.tensor([3e38]))))
    assert np.isinf(x.grad.numpy()).all()
    assert (event.phase, event.kind, event.mechanism) == ("accumulation", "inf", "overflow")


# ---------------------------------------------------------- not born in an op
def test_nan_from_the_input_batch_is_reported_as_input():
    batch = lucid.tensor([[1.0, float("nan")], [0.5, 2.0]])
    weight = lucid.tensor([[0.5], [1.0]], requires_grad=True)
    loss = (batch @ weight).sum()
    event = _only_event(_sentinel_warnings(loss.backward))
    assert (event.op, event.phase, event.module_path) == ("input", "input", None)
    assert event.kind == "nan"
    assert event.created is False
    assert event.mechanism is None


# -------------------------------------------------------------------- silence
def test_legitimate_infinities_that_never_reach_the_loss_are_silent():
    x = lucid.tensor([[0.5, 1.0, 80.0], [2.0, -1.0, 0.0]], requires_grad=True)

    def step():
        # An overflow on a side branch the loss never reads, and masked attention scores.
        unused = (x * 100.0).exp()
        assert np.isinf(unused.detach().numpy()).any()
        mask = lucid.tensor([[False, True, True], [True, False, True]])
        attention = lucid.softmax(x.masked_fill(mask, float("-inf")), dim=-1)
        loss = (attention * x).sum()
        loss.backward()
        assert np.isfinite(loss.item())

    assert _sentinel_warnings(step) == []
    assert np.isfinite(x.grad.numpy()).all()


def test_finite_training_step_is_silent():
    w = lucid.tensor([[0.1, -0.2], [0.3, 0.4]], requires_grad=True)
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])

    def step():
        loss = (x @ w).tanh().log_softmax(1).mean()
        loss.backward()

    assert _sentinel_warnings(step) == []


def test_lucid_ops_emit_no_numpy_runtime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = lucid.tensor([-1.0, 0.0, 1e30])
        lucid.log(values)
        lucid.tensor([1.0]) / lucid.tensor([0.0])
        (values * values).exp()


# ------------------------------------------------------- NumPy's global state
def _overflowing_lucid_step() -> None:
    x = lucid.tensor([0.0, 100.0, -1.0], requires_grad=True)
    loss = (x.exp() + x / lucid.tensor(0.0) + x.sqrt()).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonFiniteWarning)
        loss.backward()


def test_numpy_error_settings_are_untouched():
    before = (np.geterr(), np.geterrcall())
    _overflowing_lucid_step()
    assert (np.geterr(), np.geterrcall()) == before


def test_user_seterr_raise_applies_to_numpy_but_not_inside_lucid():
    previous = np.seterr(all="raise")
    try:
        quotient = lucid.tensor([1.0]) / lucid.tensor([0.0])
        assert np.isinf(quotient.item())
        _overflowing_lucid_step()
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.array([1.0]) / np.array([0.0])
    finally:
        np.seterr(**previous)


def test_user_error_callback_is_not_called_by_lucid_ops():
    calls = []

    def callback(kind, flag):
        calls.append(kind)

    previous_call = np.seterrcall(callback)
    previous = np.seterr(all="call")
    try:
        _overflowing_lucid_step()
        assert calls == []
        assert np.geterrcall() is callback
        np.log(np.array([-1.0]))
        assert calls == ["invalid value"]
    finally:
        np.seterr(**previous)
        np.seterrcall(previous_call)


def test_numpy_outside_lucid_still_warns_as_configured():
    _overflowing_lucid_step()
    with pytest.warns(RuntimeWarning, match="invalid value encountered in log") as record:
        np.log(np.array([-1.0]))
    assert not any(issubclass(w.category, NonFiniteWarning) for w in record)


def test_user_numpy_between_lucid_ops_is_not_reported_as_a_lucid_birth():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        outside = np.log(np.array([-1.0, 1.0], dtype=np.float32))  # NumPy, not lucid
    loss = (x * lucid.tensor(outside)).sum()
    event = _only_event(_sentinel_warnings(loss.backward))
    assert (event.op, event.phase, event.created) == ("input", "input", False)
