"""The three tiers agree (docs/numerics.md "Decisions"): one table of birth scenarios runs through
the always-on sentinel, `detect_anomaly()` and `NaNDetector`, and each names the same op,
phase, mechanism, line (this file's marked line), module path (or none) and step."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid._core import sentinel
from lucid.autograd import AnomalyError, Function, NonFiniteWarning, detect_anomaly
from lucid.debug import NaNDetector
from tests.markers import marked_line

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(_THIS_FILE, marker)


@dataclass
class Facts:
    """What a report says of a birth, in the terms every tier shares."""

    op: str | None
    phase: str
    mechanism: str | None
    line: int | None
    module: str | None
    step: int | None


@dataclass
class Scenario:
    name: str
    build: Any  # () -> (model, step): step(model) runs one training step
    expected: Facts
    steps: int = 1  # how many steps to run (the birth happens in the last one)


# ------------------------------------------------------------------------ models
class Log(nn.Module):
    def forward(self, x):
        return x.log()  # <fwd-in-module>


class Net(nn.Module):
    """encoder (Linear, ReLU, Log) then head: the birth is in encoder.2."""

    def __init__(self, middle: nn.Module | None = None) -> None:
        super().__init__()
        lucid.manual_seed(0)
        self.encoder = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), middle or nn.Identity())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x))  # <net-forward>


def _train(model: nn.Module, batch: lucid.Tensor, loss_fn=None):
    def step(model: nn.Module) -> None:
        out = model(batch)  # <model-call>
        loss = out.sum() if loss_fn is None else loss_fn(out)
        loss.backward()

    return step


def forward_in_module():
    model = Net(Log())
    return model, _train(model, -lucid.ones(2, 4) * 100)


class ComplexLog(nn.Module):
    """A complex tensor made from the features, whose log meets 0 + 0j."""

    def forward(self, x):
        z = lucid.complex(x - x, x - x)
        return z.log().real  # <complex-log>


def complex_log_of_zero():
    model = Net(ComplexLog())
    return model, _train(model, lucid.ones(2, 4))


class ComplexExp(nn.Module):
    def forward(self, x):
        z = lucid.complex(x * 1e4, x)
        return z.exp().imag  # <complex-exp>


def complex_exp_overflow():
    model = Net(ComplexExp())
    model.encoder[0].weight.data = lucid.eye(4)
    model.encoder[0].bias.data = lucid.ones(4)
    return model, _train(model, lucid.ones(2, 4))


class FunctionalBetween(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        lucid.manual_seed(0)
        self.first = nn.Linear(4, 4)
        self.second = nn.Linear(4, 2)

    def forward(self, x):
        h = self.first(x)
        h = h / (h - h)  # <fwd-functional>
        return self.second(h)


def functional_between_modules():
    model = FunctionalBetween()
    return model, _train(model, lucid.ones(2, 4))


def loss_birth():
    model = Net()
    return model, _train(model, lucid.ones(2, 4), lambda out: (out - out).log().sum())  # <loss>


class SqrtAtZero(nn.Module):
    def forward(self, x):
        return (x - x).sqrt()  # <bwd-sqrt>


def backward_sqrt_at_zero():
    model = Net(SqrtAtZero())
    return model, _train(model, lucid.ones(2, 4))


class GuardedSqrt(nn.Module):
    def forward(self, x):
        return lucid.where(x > 0, x.sqrt(), lucid.zeros_like(x))  # <where-sqrt>


def backward_where_sqrt():
    model = Net(GuardedSqrt())
    batch = lucid.tensor([[0.0, 1.0, 2.0, 3.0]])
    model.encoder[0].weight.data = lucid.eye(4)
    model.encoder[0].bias.data = lucid.zeros(4)
    return model, _train(model, batch)


class L2Pool(nn.Module):
    """Root of the sum of squares over pairs of features."""

    def forward(self, x):
        squares = (x * x).reshape(x.shape[0], -1, 2).sum(-1)
        return squares.sqrt()  # <l2-pool>


class PoolNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        lucid.manual_seed(0)
        self.proj = nn.Linear(4, 4)
        self.pool = L2Pool()
        self.head = nn.Linear(2, 1)

    def forward(self, x):
        return self.head(self.pool(self.proj(x)))


def backward_pooling_sum_of_squares_zero():
    model = PoolNet()
    model.proj.weight.data = lucid.zeros(4, 4)
    model.proj.bias.data = lucid.zeros(4)
    return model, _train(model, lucid.ones(1, 4))


class TwoBranches(nn.Module):
    """h feeds two branches whose gradients are each finite; their sum overflows."""

    def forward(self, x):
        h = x.relu()  # <accumulate>
        return h * 2e38 + h * 2e38


def accumulation_overflow():
    model = Net(TwoBranches())
    model.head.weight.data = lucid.full((2, 4), 0.5)
    batch = lucid.ones(1, 4) * 1e-3
    return model, _train(model, batch)


class HalfAttention(nn.Module):
    def forward(self, x):
        q = x.half()
        return (q @ q.transpose(-2, -1)).float()  # <fp16-logits>


def float16_attention_overflow():
    model = Net(HalfAttention())
    model.encoder[0].weight.data = lucid.eye(4) * 300.0
    model.encoder[0].bias.data = lucid.zeros(4)
    return model, _train(model, lucid.ones(4, 4))


class MaskedAttention(nn.Module):
    def forward(self, x):
        scores = x @ x.transpose(-2, -1)
        mask = lucid.ones(scores.shape, dtype=lucid.bool)
        with lucid.debug.allow_nonfinite():
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(-1) @ x  # <masked-rows>


def fully_masked_attention_rows():
    model = Net(MaskedAttention())
    return model, _train(model, lucid.ones(2, 4))


class Deep(nn.Module):
    """One feature per layer, so every product is one correctly rounded multiplication and
    the step and op where the values overflow are the same on every machine."""

    def __init__(self) -> None:
        super().__init__()
        lucid.manual_seed(0)
        self.first = nn.Linear(1, 1)
        self.second = nn.Linear(1, 1)

    def forward(self, x):
        return self.second(self.first(x))


def exploding_learning_rate():
    model = Deep()
    optimizer = lucid.optim.SGD(model.parameters(), lr=1e3)
    batch = lucid.full((1, 1), 10.0)

    def step(model: nn.Module) -> None:
        optimizer.zero_grad()
        out = model(batch)
        (out * out).mean().backward()  # <explode-loss>
        optimizer.step()

    return model, step


def nan_in_input_batch():
    model = Net()
    return model, _train(model, lucid.tensor([[1.0, float("nan"), 0.0, 2.0]]))


def nan_in_parameter():
    model = Net()
    with lucid.no_grad():
        model.head.weight[0, 1] = float("nan")
    return model, _train(model, lucid.ones(2, 4))


class ZeroOverZero(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        zero = grad_output - grad_output
        return zero / zero  # <custom-backward>


class Custom(nn.Module):
    def forward(self, x):
        return ZeroOverZero.apply(x)


def custom_function_backward():
    model = Net(Custom())
    return model, _train(model, lucid.ones(2, 4))


def ops_without_grad():
    model = Net()
    data = lucid.zeros(2, 4)

    def step(model: nn.Module) -> None:
        standardised = data / data.sum(dim=0)  # <no-grad>
        model(standardised).sum().backward()

    return model, step


class SampleStd(nn.Module):
    def forward(self, x):
        return x / x.std(dim=0)  # <std>


def std_of_a_single_sample():
    model = Net(SampleStd())
    return model, _train(model, lucid.ones(1, 4))


class AngleOfCosine(nn.Module):
    """The cosine of the angle of (0.1, 4) with itself: each step is one correctly rounded
    float32 operation, so it is 1.0000001 on every machine."""

    def forward(self, x):
        a, b = x[:, :1] + 0.1, x[:, 1:2] + 4.0
        norm = (a * a + b * b).sqrt()
        cosine = (a / norm) * (a / norm) + (b / norm) * (b / norm)
        return cosine.acos() + x  # <acos>


def acos_of_a_rounded_cosine():
    model = Net(AngleOfCosine())
    model.encoder[0].weight.data = lucid.zeros(4, 4)
    model.encoder[0].bias.data = lucid.zeros(4)
    return model, _train(model, lucid.ones(2, 4))


def layer_norm_zero_eps():
    model = Net(nn.LayerNorm(4, eps=0.0))
    model.encoder[0].weight.data = lucid.zeros(4, 4)
    model.encoder[0].bias.data = lucid.zeros(4)
    return model, _train(model, lucid.ones(2, 4))


class LogFeatures(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        lucid.manual_seed(0)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x.log())  # <log-features>


def model_called_twice_per_iteration():
    model = LogFeatures()
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.0)
    batches = iter([lucid.ones(2, 4)] * 5 + [lucid.zeros(2, 4)])

    def step(model: nn.Module) -> None:
        optimizer.zero_grad()
        (model(next(batches)) - model(next(batches))).sum().backward()  # <siamese>
        optimizer.step()

    return model, step


def nan_in_a_parameter_with_a_loss_module():
    model = Net()
    criterion = nn.MSELoss()
    with lucid.no_grad():
        model.head.weight[0, 1] = float("nan")
    batch = lucid.ones(2, 4)

    def step(model: nn.Module) -> None:
        out = model(batch)  # <model-call-criterion>
        criterion(out, lucid.zeros(2, 2)).backward()

    return model, step


def adam_state_overflows():
    model = Deep()
    optimizer = lucid.optim.Adam(model.parameters())
    batch = lucid.full((1, 1), 10.0)

    def step(model: nn.Module) -> None:
        optimizer.zero_grad()
        (model(batch) * 1e21).sum().backward()
        optimizer.step()  # <adam-step>

    return model, step


def update_dividing_by_a_zero_norm():
    model = Deep()
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)
    batch = lucid.full((1, 1), 10.0)

    def step(model: nn.Module) -> None:
        optimizer.zero_grad()
        (model(batch) * 0.0).sum().backward()
        with lucid.no_grad():
            norm = sum((p.grad * p.grad).sum() for p in model.parameters()).sqrt()
            for p in model.parameters():
                p.grad.div_(norm)  # <clip-by-zero-norm>
        optimizer.step()

    return model, step


class InplaceSquare(nn.Module):
    def forward(self, x):
        h = x + 1e20
        return h.mul_(h)  # <inplace-overflow>


def inplace_overflow():
    model = Net(InplaceSquare())
    return model, _train(model, lucid.ones(2, 4))


class RsqrtThenZero(nn.Module):
    def forward(self, x):
        zero = x - x
        scale = zero.rsqrt()  # <rsqrt-inf>
        return scale * zero


def first_inf_then_nan():
    model = Net(RsqrtThenZero())
    return model, _train(model, lucid.ones(2, 4))


class LogDetOfNegative(nn.Module):
    def forward(self, x):
        reflection = lucid.tensor([[1.0, 0.0], [0.0, -1.0]]) + x[:2, :2] * 0.0
        return x + lucid.logdet(reflection)  # <logdet>


def logdet_of_negative_determinant():
    model = Net(LogDetOfNegative())
    return model, _train(model, lucid.ones(2, 4))


class ExpInBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        grown = (grad_output * 100.0).exp()  # <custom-exp>
        return grown / grown


class CustomExp(nn.Module):
    def forward(self, x):
        return ExpInBackward.apply(x)


def custom_backward_exp_overflow():
    model = Net(CustomExp())
    model.head.weight.data = lucid.ones(2, 4)
    return model, _train(model, lucid.ones(2, 4))


def eval_pass_read_with_item():
    model = Net(Log())
    batch = -lucid.ones(2, 4) * 100

    def step(model: nn.Module) -> None:
        with lucid.no_grad():
            model(batch).sum().item()

    return model, step


# ------------------------------------------------------------------------ the table
class LogOfAViewWrittenInPlace(nn.Module):
    def forward(self, x):
        h = x - 2.0
        h[:, 1:].log_()  # <view-log>
        return h


def forward_inplace_on_a_view():
    model = Net(LogOfAViewWrittenInPlace())
    return model, _train(model, lucid.ones(2, 4))


class SqrtOfAViewWrittenInPlace(nn.Module):
    def forward(self, x):
        h = x - x
        h.t()[1:].sqrt_()  # <view-sqrt>
        return h


def backward_inplace_on_a_view():
    model = Net(SqrtOfAViewWrittenInPlace())
    return model, _train(model, lucid.ones(2, 4))


def _facts(op, phase, mechanism, marker, module, step=0) -> Facts:
    return Facts(op, phase, mechanism, _line(marker), module, step)


SCENARIOS = [
    Scenario("forward in a module", forward_in_module,
             _facts("log", "forward", "division by zero", "fwd-in-module", "encoder.2")),
    Scenario("complex log of 0 + 0j", complex_log_of_zero,
             _facts("log", "forward", "division by zero", "complex-log", "encoder.2")),
    Scenario("complex exp that overflows", complex_exp_overflow,
             _facts("exp", "forward", "overflow", "complex-exp", "encoder.2")),
    Scenario("functional op between modules", functional_between_modules,
             _facts("div", "forward", "division by zero", "fwd-functional", None)),
    Scenario("loss", loss_birth,
             _facts("log", "loss", "division by zero", "loss", None)),
    Scenario("backward: sqrt at 0", backward_sqrt_at_zero,
             _facts("sqrt", "backward", "division by zero", "bwd-sqrt", "encoder.2")),
    Scenario("backward: where around sqrt", backward_where_sqrt,
             _facts("sqrt", "backward", "invalid operation", "where-sqrt", "encoder.2")),
    Scenario("backward: sqrt of a zero sum of squares in a pool",
             backward_pooling_sum_of_squares_zero,
             _facts("sqrt", "backward", "division by zero", "l2-pool", "pool")),
    Scenario("overflow only in a gradient sum", accumulation_overflow,
             _facts("relu", "accumulation", "overflow", "accumulate", "encoder.2")),
    Scenario("float16 attention logits", float16_attention_overflow,
             _facts("matmul", "forward", "overflow", "fp16-logits", "encoder.2")),
    Scenario("fully masked attention rows", fully_masked_attention_rows,
             _facts("softmax", "forward", "invalid operation", "masked-rows", "encoder.2")),
    Scenario("exploding learning rate", exploding_learning_rate,
             _facts("mul", "loss", "overflow", "explode-loss", None, step=2), steps=3),
    Scenario("nan in the input batch", nan_in_input_batch,
             _facts("input", "input", None, "model-call", None)),
    Scenario("nan already in a parameter", nan_in_parameter,
             _facts("head.weight", "parameter", None, "model-call", "head")),
    Scenario("a custom Function's backward", custom_function_backward,
             _facts("ZeroOverZero", "backward", "invalid operation", "custom-backward",
                    "encoder.2")),
    Scenario("ops on tensors that need no grad", ops_without_grad,
             _facts("div", "forward", "invalid operation", "no-grad", None)),
    Scenario("std of a single sample", std_of_a_single_sample,
             _facts("std", "forward", "invalid operation", "std", "encoder.2")),
    Scenario("acos of a cosine a rounding step above 1", acos_of_a_rounded_cosine,
             _facts("acos", "forward", "invalid operation", "acos", "encoder.2")),
    Scenario("LayerNorm with eps 0 on a constant row", layer_norm_zero_eps,
             _facts("layer_norm", "forward", "invalid operation", "net-forward", "encoder.2")),
    Scenario("a model called twice per iteration", model_called_twice_per_iteration,
             _facts("log", "forward", "division by zero", "log-features", None, step=2),
             steps=3),
    Scenario("nan in a parameter, with a loss module", nan_in_a_parameter_with_a_loss_module,
             _facts("head.weight", "parameter", None, "model-call-criterion", "head")),
    Scenario("an Adam state that overflows", adam_state_overflows,
             _facts("addcmul_", "optimizer", "overflow", "adam-step", "first")),
    Scenario("an update dividing by a zero norm", update_dividing_by_a_zero_norm,
             _facts("div_", "update", "invalid operation", "clip-by-zero-norm", None)),
    Scenario("an in-place op that overflows", inplace_overflow,
             _facts("mul_", "forward", "overflow", "inplace-overflow", "encoder.2")),
    Scenario("an inf, then 0 * inf", first_inf_then_nan,
             _facts("rsqrt", "forward", "division by zero", "rsqrt-inf", "encoder.2")),
    Scenario("logdet of a negative determinant", logdet_of_negative_determinant,
             _facts("logdet", "forward", "invalid operation", "logdet", "encoder.2")),
    Scenario("an overflow inside a custom backward", custom_backward_exp_overflow,
             _facts("ExpInBackward", "backward", "overflow", "custom-exp", "encoder.2")),
    Scenario("an in-place op on a view", forward_inplace_on_a_view,
             _facts("log_", "forward", "invalid operation", "view-log", "encoder.2")),
    Scenario("backward of an in-place op on a view", backward_inplace_on_a_view,
             _facts("sqrt_", "backward", "division by zero", "view-sqrt", "encoder.2")),
    Scenario("an eval pass read with item()", eval_pass_read_with_item,
             _facts("log", "eval", "division by zero", "fwd-in-module", "encoder.2")),
]  # fmt: skip


# ------------------------------------------------------------------------ the tiers
def _line_of(location_or_filename: str | None, lineno: int | None = None) -> int | None:
    if location_or_filename is None:
        return None
    if lineno is None:
        location_or_filename, _, number = location_or_filename.rpartition(":")
        lineno = int(number)
    return lineno if Path(location_or_filename).resolve() == _THIS_FILE else -1


def _mechanism(text: str | None) -> str | None:
    if text is None:
        return None
    for mechanism in ("invalid operation", "division by zero", "overflow"):
        if text.startswith(mechanism):
            return mechanism
    return None


def sentinel_facts(scenario: Scenario) -> Facts | None:
    model, step = scenario.build()
    sentinel.reset_sentinel()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(scenario.steps):
            step(model)
    found = [w.message.event for w in record if issubclass(w.category, NonFiniteWarning)]
    if not found:
        return None
    event = found[0]
    return Facts(event.op, event.phase, event.mechanism, _line_of(event.filename, event.lineno),
                 event.module_path, event.step)  # fmt: skip


def anomaly_facts(scenario: Scenario) -> Facts | None:
    model, step = scenario.build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            try:
                for _ in range(scenario.steps):
                    step(model)
            except AnomalyError as error:
                event = error.event
                return Facts(event.op, event.phase, event.mechanism,
                             _line_of(event.filename, event.lineno), event.module_path,
                             event.step)  # fmt: skip
    return None


def detector_facts(scenario: Scenario) -> Facts | None:
    model, step = scenario.build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NaNDetector(model, verbose=False) as detector:
            for _ in range(scenario.steps):
                step(model)
                if detector.triggered:
                    break
    event = detector.event
    if event is None:
        return None
    phase = getattr(event, "phase", "backward" if event.is_backward else "forward")
    module = event.layer_name or None
    return Facts(event.op, phase, _mechanism(event.mechanism), _line_of(event.location),
                 module, event.batch_idx)  # fmt: skip


TIERS = {"sentinel": sentinel_facts, "detect_anomaly": anomaly_facts, "NaNDetector": detector_facts}


@pytest.mark.parametrize("tier", list(TIERS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_tier_names_the_same_birth(scenario: Scenario, tier: str):
    facts = TIERS[tier](scenario)
    assert facts == scenario.expected


def test_the_table_covers_every_kind_of_birth():
    phases = {scenario.expected.phase for scenario in SCENARIOS}
    assert phases == {
        "input",
        "parameter",
        "forward",
        "loss",
        "backward",
        "accumulation",
        "optimizer",
        "update",
        "eval",
    }
    assert {"input", "head.weight"} <= {scenario.expected.op for scenario in SCENARIOS}
    assert np.isfinite(_line("model-call"))
