"""GradScaler.last_skip: a skipped step names the parameters with non-finite gradients and the
op, line and module where the first Inf/NaN of the scaled backward was born, tells an overflow
of the loss scale (logged, no warning) from a NaN no scale can fix (a warning), and the
sentinel stays quiet about scaled backwards while unscaled ones warn as before."""

from __future__ import annotations

import dataclasses
import inspect
import logging
import warnings

import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid._core.sentinel import reset_sentinel, set_sentinel
from lucid.amp import GradScaler, SkippedStep
from lucid.autograd.anomaly_mode import NonFiniteWarning


class HalfLinear(nn.Module):
    """float32 weights computing in float16, its output handed back as float32."""

    def __init__(self, inputs: int, outputs: int) -> None:
        super().__init__()
        self.linear = nn.Linear(inputs, outputs)

    def forward(self, x):
        weight, bias = self.linear.weight.half(), self.linear.bias.half()
        return F.linear(x.half(), weight, bias).float()  # the float16 gradient is born here


HALF_LINE = inspect.getsourcelines(HalfLinear.forward)[1] + 2


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.head = HalfLinear(16, 4)
        self.boost = 1.0
        self.bug = None

    def forward(self, x):
        out = self.head(F.relu(self.body(x))) * self.boost
        if self.bug == "zero over zero":
            out = out + (self.body.weight.sum() * 0).sqrt() * 0  # sqrt'(0) * 0 = inf * 0
        elif self.bug == "forward":
            out = out + (self.body.weight.sum() * 0 - 1).log()
        return out


BUG_LINE = inspect.getsourcelines(Net.forward)[1] + 3


def _setup(named=False):
    lucid.manual_seed(0)
    model = Net()
    params = model.named_parameters() if named else model.parameters()
    optimizer = lucid.optim.SGD(params, lr=0.01)
    return model, optimizer, lucid.randn(32, 8), lucid.randn(32, 4)


def _iteration(model, optimizer, scaler, x, y, boost=1.0, bug=None):
    model.boost, model.bug = boost, bug
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    result = scaler.step(optimizer)
    scaler.update()
    return result


@pytest.fixture(autouse=True)
def _fresh_sentinel():
    reset_sentinel()
    yield
    reset_sentinel()


def test_overflow_skip_names_parameters_op_line_and_module():
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    _iteration(model, optimizer, scaler, x, y)
    assert scaler.last_skip is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow of the scale warns about nothing
        _iteration(model, optimizer, scaler, x, y, boost=1e3)
    skip = scaler.last_skip
    assert isinstance(skip, SkippedStep)
    assert skip.is_overflow and skip.mechanism == "overflow" and skip.birth.kind == "inf"
    assert skip.kind == "nan"  # inf - inf downstream of the overflow
    assert skip.iteration == 1 and skip.scale == 2.0**16
    assert skip.phase == "backward" and skip.module == "head"
    assert skip.location == f"{__file__}:{HALF_LINE}"
    # float16 gradients overflow; body's float32 ones are inf downstream of them
    assert set(skip.parameters) == {"body.weight", "body.bias", "head.linear.weight",
                                    "head.linear.bias"}  # fmt: skip
    assert skip.birth is not None and skip.birth.op == skip.op
    text = str(skip)
    assert "overflow" in text and "head" in text and f":{HALF_LINE}" in text
    assert scaler.get_scale() == 2.0**15
    _iteration(model, optimizer, scaler, x, y)
    assert scaler.last_skip is None


def test_the_skip_names_what_the_sentinel_names_for_the_same_unscaled_backward():
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    _iteration(model, optimizer, scaler, x, y, boost=1e3)
    skip = scaler.last_skip
    model.boost = 1e3
    optimizer.zero_grad()
    with pytest.warns(NonFiniteWarning) as caught:  # an unscaled backward warns as before
        (F.mse_loss(model(x), y) * 2.0**16).backward()
    event = caught[0].message.event
    assert (event.op, event.phase, event.location, event.module_path, event.mechanism) == (
        skip.op, skip.phase, skip.location, skip.module, skip.mechanism)  # fmt: skip


def test_an_overflow_skip_logs_one_info_line(caplog):
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    with caplog.at_level(logging.INFO, logger="lucid.debug"):
        _iteration(model, optimizer, scaler, x, y, boost=1e3)
        _iteration(model, optimizer, scaler, x, y)
    records = [r for r in caplog.records if r.name == "lucid.debug"]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert "\n" not in records[0].getMessage()
    assert records[0].getMessage() == scaler_headline(records[0])
    assert records[0].lucid_event["mechanism"] == "overflow"
    assert records[0].lucid_event["module"] == "head"


def scaler_headline(record):
    event = record.lucid_event
    assert event["event"] == "skip" and event["is_overflow"] is True
    return record.getMessage()


def test_an_invalid_operation_warns_that_no_scale_fixes_it(caplog):
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    with caplog.at_level(logging.INFO, logger="lucid.debug"):
        with pytest.warns(NonFiniteWarning, match="a smaller scale will never fix it"):
            _iteration(model, optimizer, scaler, x, y, bug="zero over zero")
    skip = scaler.last_skip
    assert not skip.is_overflow and skip.mechanism == "invalid operation"
    assert skip.kind == "nan" and skip.phase == "backward"
    assert skip.location == f"{__file__}:{BUG_LINE}"
    assert skip.parameters == ("body.weight",)
    assert [r.levelno for r in caplog.records if r.name == "lucid.debug"] == [logging.WARNING]


def test_a_nan_already_in_forward_is_not_a_scale_problem():
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    with pytest.warns(NonFiniteWarning) as caught:
        _iteration(model, optimizer, scaler, x, y, bug="forward")
    assert len(caught) == 1  # the scaler's, not also the sentinel's
    skip = scaler.last_skip
    assert skip.mechanism == "non-finite forward" and not skip.is_overflow
    assert skip.op == "log" and skip.phase == "forward"
    assert skip.location == f"{__file__}:{BUG_LINE + 2}"
    assert "already non-finite before scaling" in str(skip)


def test_named_optimizer_groups_name_the_parameters():
    model, optimizer, x, y = _setup(named=True)
    scaler = GradScaler()
    _iteration(model, optimizer, scaler, x, y, boost=1e3)
    assert "head.linear.weight" in scaler.last_skip.parameters


def test_with_the_sentinel_off_the_cause_is_unknown_and_not_warned_about(caplog):
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    set_sentinel(False)
    try:
        with warnings.catch_warnings(), caplog.at_level(logging.INFO, logger="lucid.debug"):
            warnings.simplefilter("error")
            _iteration(model, optimizer, scaler, x, y, boost=1e3)
    finally:
        set_sentinel(True)
    skip = scaler.last_skip
    assert skip.mechanism == "unknown" and skip.op is None and not skip.is_overflow
    assert "the sentinel is off" in str(skip) and "never fix" not in str(skip)
    assert [r.levelno for r in caplog.records if r.name == "lucid.debug"] == [logging.INFO]


def test_the_skip_is_a_frozen_dataclass():
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    _iteration(model, optimizer, scaler, x, y, boost=1e3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        scaler.last_skip.scale = 1.0


def test_a_float16_output_whose_scaling_overflows_is_an_overflow():
    weight = lucid.ones(4, requires_grad=True)
    optimizer = lucid.optim.SGD([weight], lr=0.1)
    scaler = GradScaler()
    out = (weight * 2.0).half()  # 2 * 65536 passes float16's 65504
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler.scale(out).backward(lucid.ones(4, dtype=lucid.float16))
        scaler.step(optimizer)
    assert scaler.last_skip.is_overflow and scaler.last_skip.phase == "forward"
    assert scaler.last_skip.op == "mul"
