"""Births the sentinel and anomaly mode must name since docs/numerics.md's "Decisions": ops on
tensors that need no grad, values masked in forward that reach the gradients, inputs and
parameters as received, ops as users write them, a custom backward's own line."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from lucid._core import sentinel
from lucid.autograd import AnomalyError, AnomalyEvent, Function, NonFiniteWarning, detect_anomaly
from tests.markers import marked_line

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(_THIS_FILE, marker)


@pytest.fixture(autouse=True)
def _fresh_sentinel():
    sentinel.reset_sentinel()
    yield
    sentinel.reset_sentinel()


def _warned(action) -> AnomalyEvent:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        action()
    found = [w for w in record if issubclass(w.category, NonFiniteWarning)]
    assert len(found) == 1, [str(w.message) for w in found]
    return found[0].message.event


def _at(event: AnomalyEvent, marker: str) -> bool:
    return Path(event.filename).resolve() == _THIS_FILE and event.lineno == _line(marker)


# ------------------------------------------------- ops on tensors that need no grad
def test_sentinel_names_a_birth_in_an_op_on_tensors_that_need_no_grad():
    data = lucid.zeros(4, 3)
    normalised = data / data.sum(dim=0)  # <no-grad-div>
    weight = lucid.ones(3, requires_grad=True)
    loss = (normalised * weight).sum()
    event = _warned(loss.backward)
    assert (event.op, event.phase, event.kind, event.created) == ("div", "forward", "nan", True)
    assert event.mechanism == "invalid operation"
    assert _at(event, "no-grad-div")


def test_anomaly_mode_names_a_no_grad_birth_made_before_it_was_turned_on():
    data = lucid.zeros(4, 3)
    normalised = data / data.sum(dim=0)  # <no-grad-div-early>
    weight = lucid.ones(3, requires_grad=True)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        (normalised * weight).sum().backward()
    event = error.value.event
    assert (event.op, event.phase, event.created) == ("div", "forward", True)
    assert _at(event, "no-grad-div-early")


# ----------------------------------------------------- masked in forward, not in backward
def test_a_nan_masked_in_forward_that_reaches_the_leaf_gradient_is_reported():
    x = lucid.tensor([-1.0, 4.0], requires_grad=True)
    guarded = lucid.where(x > 0, x.sqrt(), 0.0)  # <masked-sqrt>
    loss = guarded.sum()
    event = _warned(loss.backward)
    assert np.isfinite(loss.item()) and np.isnan(x.grad.numpy()[0])
    assert (event.op, event.phase, event.kind) == ("sqrt", "forward", "nan")
    assert _at(event, "masked-sqrt")


def test_finite_gradients_after_a_masked_birth_say_nothing_more():
    x = lucid.tensor([-1.0, 4.0], requires_grad=True)
    # The mask keeps the sqrt's nan out of the loss and, through where's zero gradient and
    # no division, out of the gradient too: nothing to report.
    guarded = lucid.where(x > 0, x, 0.0) + lucid.where(x > 0, x.sqrt(), 0.0).detach()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        guarded.sum().backward()
    assert not [w for w in record if issubclass(w.category, NonFiniteWarning)]


# ------------------------------------------------------------- received, not born
class _TwoLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(2, 3)
        self.second = nn.Linear(3, 1)

    def forward(self, x):
        return self.second(self.first(x).relu())


def test_sentinel_reports_a_nan_input_batch_at_the_model_call_with_its_step():
    model = _TwoLayers()
    model(lucid.ones(1, 2))
    batch = lucid.tensor([[1.0, float("nan")]])
    loss = model(batch).sum()  # <model-call>
    event = _warned(loss.backward)
    assert (event.op, event.phase, event.created, event.module_path) == (
        "input", "input", False, None,
    )  # fmt: skip
    assert event.step == 1
    assert _at(event, "model-call")
    assert "arrived in the input batch" in event.describe()


def test_anomaly_mode_reports_a_nan_input_batch_at_the_model_call_without_a_module():
    model = _TwoLayers()
    batch = lucid.tensor([[1.0, float("nan")]])
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        model(batch).sum().backward()  # <model-call-anomaly>
    event = error.value.event
    assert (event.op, event.phase, event.module_path, event.step) == ("input", "input", None, 0)
    assert _at(event, "model-call-anomaly")
    assert str(error.value).startswith("The input batch holds nan values")


def test_a_nan_input_after_the_model_is_gone_is_reported_at_its_own_line():
    model = _TwoLayers()
    model(lucid.ones(1, 2))
    del model
    batch = lucid.tensor([[1.0, float("nan")]])
    weight = lucid.tensor([[0.5], [1.0]], requires_grad=True)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        (batch @ weight).sum().backward()  # <after-model>
    event = error.value.event
    assert (event.op, event.created) == ("input", False)
    assert _at(event, "after-model")


def test_a_nan_already_in_a_parameter_is_reported_as_received():
    model = _TwoLayers()
    with lucid.no_grad():
        model.first.weight[0, 0] = float("nan")
    loss = model(lucid.ones(1, 2)).sum()
    event = _warned(loss.backward)
    assert (event.op, event.phase, event.created, event.module_path) == (
        "first.weight", "parameter", False, "first")  # fmt: skip
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        model(lucid.ones(1, 2))
    assert (error.value.event.op, error.value.event.module_path) == ("first.weight", "first")


# ------------------------------------------------------------ op names as users write them
def test_pow_with_a_tensor_exponent_is_reported_as_pow():
    base = lucid.tensor([-8.0], requires_grad=True)
    exponent = lucid.tensor([0.5])
    event = _warned(lambda: (base**exponent).sum().backward())
    assert event.op == "pow"


def test_a_birth_inside_a_composite_function_names_the_function_and_the_inner_op():
    logits = lucid.randn(3, 4, requires_grad=True)
    targets = lucid.tensor([-100, -100, -100])
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        F.nll_loss(logits.log_softmax(1), targets)  # <composite>
    event = error.value.event
    assert (event.op, event.inner_op) == ("nll_loss", "div")
    assert _at(event, "composite")
    assert "inner op: div" in str(error.value)


# ------------------------------------------------------ a custom Function's backward
class _ZeroOverZero(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        zero = grad_output - grad_output
        return zero / zero  # <custom-backward-line>


def test_sentinel_names_the_line_inside_a_custom_backward_with_the_forward_call():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = _ZeroOverZero.apply(x)  # <custom-apply>
    event = _warned((y * 2.0).sum().backward)
    assert (event.op, event.phase, event.kind) == ("_ZeroOverZero", "backward", "nan")
    assert _at(event, "custom-backward-line")
    assert event.forward_location == f"{event.filename}:{_line('custom-apply')}"


# ------------------------------------------------------------------- the API
def test_anomaly_switches_are_top_level_as_in_torch():
    assert lucid.is_anomaly_enabled() is False
    lucid.set_anomaly_enabled(True)
    try:
        assert lucid.is_anomaly_enabled() and lucid.is_anomaly_check_nan_enabled()
        lucid.set_anomaly_enabled(True, False)
        assert not lucid.is_anomaly_check_nan_enabled()
    finally:
        lucid.set_anomaly_enabled(False)
    assert lucid.is_anomaly_enabled() is False
    with pytest.raises(TypeError, match="argument 'enabled' \\(position 1\\) must be bool"):
        lucid.set_anomaly_enabled("yes")


def test_lucid_debug_is_an_attribute_after_import_lucid():
    assert lucid.debug.allow_nonfinite is sentinel.allow_nonfinite
    assert "debug" in dir(lucid)
