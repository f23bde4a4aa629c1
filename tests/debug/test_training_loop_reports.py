"""Reports read right in real training loops (docs/numerics.md "Decisions"): the optimizer's state,
eval passes, the first non-finite value, and the text of a report."""

from __future__ import annotations

import runpy
import warnings

import pytest

import lucid
from lucid import nn
from lucid._core.sentinel import capture_frames, format_frames
from lucid.autograd import AnomalyError, NonFiniteWarning, detect_anomaly
from lucid.debug.report import _root_cause_report
from tests.markers import marked_line


def _sentinel_events(run) -> list:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        run()
    return [w.message.event for w in record if issubclass(w.category, NonFiniteWarning)]


def _line(marker: str) -> int:
    return marked_line(__file__, marker)


def test_an_adam_overflow_names_the_optimizer_the_parameter_and_the_state():
    model = nn.Sequential(nn.Linear(1, 1), nn.Linear(1, 1))
    optimizer = lucid.optim.Adam(model.parameters())

    def step():
        optimizer.zero_grad()
        (model(lucid.full((1, 1), 10.0)) * 1e21).sum().backward()
        optimizer.step()

    (event,) = _sentinel_events(step)
    assert (event.phase, event.optimizer, event.parameter, event.state) == (
        "optimizer", "Adam", "0.weight", "exp_avg_sq")  # fmt: skip
    assert (event.module_path, event.mechanism) == ("0", "overflow")
    assert "optimizer: Adam.step(), updating 0.weight, state exp_avg_sq" in event.describe()


def test_named_parameters_given_to_the_optimizer_name_the_parameter():
    model = nn.Linear(1, 1)
    optimizer = lucid.optim.Adam(model.named_parameters())
    optimizer.zero_grad()
    (model(lucid.full((1, 1), 10.0)) * 1e21).sum().backward()
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        optimizer.step()
    assert (error.value.event.parameter, error.value.event.state) == ("weight", "exp_avg_sq")
    assert "inside optimizer.step()" in str(error.value)


class _LogOfLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return (self.fc(x) * 0.0).log()  # <eval-log>


def test_an_eval_pass_is_reported_when_its_output_leaves_the_model():
    model = _LogOfLinear()
    with lucid.no_grad():
        (event,) = _sentinel_events(lambda: model(lucid.ones(1, 2)))
    assert (event.op, event.phase, event.lineno) == ("log", "eval", _line("eval-log"))


@pytest.mark.parametrize("read", ["item", "tolist", "numpy"])
def test_a_value_of_an_eval_pass_is_reported_when_it_is_read(read):
    model = nn.Linear(2, 1)

    def evaluate():
        with lucid.no_grad():
            out = model(lucid.ones(1, 2))
            score = (out - out).div(out - out).sum()  # <eval-read>
            getattr(score, read)()

    (event,) = _sentinel_events(evaluate)
    assert (event.op, event.phase, event.lineno) == ("div", "eval", _line("eval-read"))


def test_a_nan_after_an_inf_is_reported_as_its_consequence():
    x = lucid.zeros(3, requires_grad=True)

    def step():
        scale = (x * 0.0).rsqrt()  # <first-inf>
        (scale * (x * 0.0)).sum().backward()

    (event,) = _sentinel_events(step)
    assert (event.op, event.kind, event.lineno) == ("rsqrt", "inf", _line("first-inf"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        lucid._core.sentinel.reset_sentinel()
        step()
    (message,) = [str(w.message) for w in record if issubclass(w.category, NonFiniteWarning)]
    assert message.startswith("backward() was called on a nan value the consequence of the inf")


def test_statistics_of_inputs_holding_inf_say_they_are_of_the_finite_values():
    x = lucid.tensor([float("inf"), 1.0, 2.0], requires_grad=True)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        x - x
    assert "finite min=1.0 finite max=2.0 nan=0 inf=1" in str(error.value)


def test_a_scalar_operand_is_listed_among_the_inputs():
    x = lucid.ones(2, requires_grad=True)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        x / 0.0
    assert "input 1: scalar 0.0" in str(error.value)


def test_a_line_with_two_calls_of_the_op_shows_which_one():
    x = lucid.tensor([1.0, 0.0], requires_grad=True)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        y = x.log() + (x * 0.0).log()  # <two-logs>  # noqa: F841
    text = str(error.value)
    source = "y = x.log() + (x * 0.0).log()  # <two-logs>  # noqa: F841"
    assert source in text
    rows = text.splitlines()
    source_row = rows.index(f"      {source}")
    caret_row = rows[source_row + 1]
    assert caret_row.strip() == "^" * len("x.log()")
    assert caret_row.index("^") == rows[source_row].index("x.log()")


def test_a_report_on_a_model_that_is_one_layer_names_it_as_the_model():
    model = nn.LayerNorm(4, eps=0.0)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        model(lucid.ones(2, 4))
    report = _root_cause_report(error.value.event, model)
    assert "module:    the model itself (LayerNorm)" in report
    assert "outside every submodule" not in report


def test_frames_of_a_script_run_by_runpy_hold_no_frozen_frames(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import lucid._core.sentinel as s\nFRAMES = s.capture_frames(1)\n")
    frames = runpy.run_path(str(script))["FRAMES"]
    lines = format_frames(frames)
    assert lines and not any("<frozen" in line for line in lines)
    assert capture_frames(1)  # this test's own frame is kept


def test_a_step_that_calls_its_parents_step_counts_once():
    from lucid._core.sentinel import step_of

    class Wrapped(lucid.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    model = nn.Linear(2, 1)
    optimizer = Wrapped(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        model(lucid.ones(1, 2)).sum().backward()
        optimizer.step()
    assert step_of(model) == 3
