"""lucid.debug.torch on real torch 2.13: each case plants a birth in an ordinary torch program
and checks that the exact instrument (find_birth) and the always-on watch() name the same op,
phase, line (this file's marked line), module and step."""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.markers import marked_line
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(_THIS_FILE, marker)


@dataclass
class Facts:
    op: str | None
    phase: str
    line: int | None
    module: str | None
    step: int = 0


def _facts_of(event: Any) -> Facts:
    line = None
    if event.location is not None:
        filename, _, number = event.location.rpartition(":")
        line = int(number) if Path(filename).resolve() == _THIS_FILE else -1
    module = event.layer_name if event.module_type is not None else None
    return Facts(event.op, event.phase, line, module, event.step)


# ------------------------------------------------------------------ the programs
def _net(middle=None):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 4),
        torch.nn.ReLU(),
        middle or torch.nn.Identity(),
        torch.nn.Linear(4, 1),
    )


def _train_steps(model, batches, loss_fn=None, optimizer=None, steps=1):
    """An ordinary loop: zero_grad, forward, loss, backward, step."""
    optimizer = optimizer or torch.optim.SGD(model.parameters(), lr=0.1)

    def run() -> None:
        for index in range(steps):
            optimizer.zero_grad()
            output = model(batches[index % len(batches)])  # <model-call>
            loss = loss_fn(output) if loss_fn else output.pow(2).mean()
            loss.backward()
            optimizer.step()

    return run


class LogMinusTwo(torch.nn.Module):
    def forward(self, x):
        return torch.log(x - 2.0)  # <fwd-in-module>


def forward_in_module():
    model = _net(LogMinusTwo())
    return _train_steps(model, [torch.ones(2, 4)])


class TwoHalves(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first = torch.nn.Linear(4, 4)
        self.second = torch.nn.Linear(4, 1)

    def forward(self, x):
        h = self.first(x)
        h = h / (h - h)  # <fwd-functional>
        return self.second(h)


def functional_between_modules():
    return _train_steps(TwoHalves(), [torch.ones(2, 4)])


def _log_of_zero_loss(output):
    return torch.log(output - output).mean()  # <loss>


def loss_code():
    return _train_steps(_net(), [torch.ones(2, 4)], loss_fn=_log_of_zero_loss)


class SqrtAtZero(torch.nn.Module):
    def forward(self, x):
        return (x - x).sqrt()  # <bwd-sqrt>


def backward_sqrt_at_zero():
    return _train_steps(_net(SqrtAtZero()), [torch.ones(2, 4)])


class GuardedSqrt(torch.nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x.sqrt(), torch.zeros_like(x))  # <where-sqrt>


def backward_where_sqrt():
    model = _net(GuardedSqrt())
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(4))
        model[0].bias.zero_()
    return _train_steps(model, [torch.tensor([[0.0, 1.0, 2.0, 3.0]])])


class ZeroNorm(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x * 0.0, dim=1, keepdim=True) + x  # <zero-norm>


def backward_norm_of_zero_vector():
    return _train_steps(_net(ZeroNorm()), [torch.ones(2, 4)])


class ZeroOverZero(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad_output):
        zero = grad_output - grad_output
        return zero / zero  # <custom-backward>


class CustomLayer(torch.nn.Module):
    def forward(self, x):
        return ZeroOverZero.apply(x)


def custom_function_backward():
    return _train_steps(_net(CustomLayer()), [torch.ones(2, 4)])


def nan_in_the_batch():
    batch = torch.ones(2, 4)
    batch[1, 2] = float("nan")
    return _train_steps(_net(), [batch])


def nan_in_a_parameter():
    model = _net()
    with torch.no_grad():
        model[3].weight[0, 1] = float("nan")
    return _train_steps(model, [torch.ones(2, 4)])


def adam_exploding_learning_rate():
    model = _net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e38)
    model[0].weight.register_hook(lambda grad: grad * 1e30)
    return _train_steps(model, [torch.ones(2, 4)], optimizer=optimizer)


class MaskedAttention(torch.nn.Module):
    def forward(self, x):
        scores = x @ x.transpose(0, 1)
        causal = torch.ones(2, 2, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))  # an intentional -inf: no birth
        padding = torch.tensor([[False, False], [True, True]])
        weights = torch.softmax(scores.masked_fill(padding, float("-inf")), -1)  # <masked-row>
        return weights @ x


def fully_masked_softmax_row():
    return _train_steps(_net(MaskedAttention()), [torch.ones(2, 4)])


class RandomLog(torch.nn.Module):
    def forward(self, x):
        noise = torch.rand_like(x)
        return torch.log(noise - 0.5)  # <dropout-log>


def birth_after_random_draws():
    model = _net(torch.nn.Sequential(torch.nn.Dropout(0.5), RandomLog()))
    return _train_steps(model, [torch.ones(2, 4)])


class NormThenLog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return torch.log(self.norm(x))  # <bn-log>


def batchnorm_then_log():
    model = _net(NormThenLog())
    return _train_steps(model, [torch.randn(6, 4, generator=torch.Generator().manual_seed(1))])


def gradient_accumulation():
    model = _net(SqrtAtZero())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def run() -> None:
        optimizer.zero_grad()
        for _ in range(3):
            model(torch.ones(2, 4)).pow(2).mean().backward()
        optimizer.step()

    return run


def lbfgs_closure():
    model = _net(LogMinusTwo())
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=2)

    def run() -> None:
        def closure():
            optimizer.zero_grad()
            loss = model(torch.ones(2, 4)).pow(2).mean()
            loss.backward()
            return loss

        optimizer.step(closure)

    return run


class Exp(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x)  # <exp>


def a_later_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(Exp(), torch.nn.Linear(4, 1))
    batches = [torch.ones(2, 4), torch.ones(2, 4), torch.full((2, 4), 100.0)]
    return _train_steps(model, batches, steps=3)


@dataclass
class Case:
    name: str
    program: Any
    facts: Facts
    # What watch() can say where it differs: a birth in the loss code needs the whole step.
    watch_facts: Facts | None = None
    # False where the model masks the birth before the gradients (ReLU's backward zeroes the
    # NaN): the always-on check then has nothing to see, and rightly stays quiet.
    reaches_gradients: bool = True


CASES = [
    Case(
        "forward in a module",
        forward_in_module,
        Facts("log", "forward", _line("fwd-in-module"), "2"),
    ),
    Case(
        "functional op between modules",
        functional_between_modules,
        Facts("div", "forward", _line("fwd-functional"), ""),
    ),
    Case(
        "loss code",
        loss_code,
        Facts("log", "loss", _line("loss"), None),
        watch_facts=Facts(None, "loss", None, None),
    ),
    Case(
        "backward: sqrt at 0",
        backward_sqrt_at_zero,
        Facts("sqrt", "backward", _line("bwd-sqrt"), "2"),
    ),
    Case(
        "backward: where hiding a NaN branch",
        backward_where_sqrt,
        Facts("sqrt", "backward", _line("where-sqrt"), "2"),
        reaches_gradients=False,
    ),
    Case(
        "backward: norm of a zero vector",
        backward_norm_of_zero_vector,
        Facts("vector_norm", "backward", _line("zero-norm"), "2"),
        reaches_gradients=False,
    ),
    Case(
        "a custom Function's backward",
        custom_function_backward,
        Facts("ZeroOverZero", "backward", _line("custom-backward"), "2"),
    ),
    Case(
        "a NaN in the batch", nan_in_the_batch, Facts("input", "input", _line("model-call"), None)
    ),
    Case(
        "a NaN already in a parameter",
        nan_in_a_parameter,
        Facts("3.weight", "parameter", _line("model-call"), "3"),
    ),
    Case(
        "softmax over a fully masked row",
        fully_masked_softmax_row,
        Facts("softmax", "forward", _line("masked-row"), "2"),
    ),
    Case(
        "a birth after random draws (dropout)",
        birth_after_random_draws,
        Facts("log", "forward", _line("dropout-log"), "2.1"),
    ),
    Case("BatchNorm, then log", batchnorm_then_log, Facts("log", "forward", _line("bn-log"), "2")),
    Case(
        "gradient accumulation",
        gradient_accumulation,
        Facts("sqrt", "backward", _line("bwd-sqrt"), "2"),
    ),
    Case("LBFGS closure", lbfgs_closure, Facts("log", "forward", _line("fwd-in-module"), "2")),
    Case(
        "a birth at a later step", a_later_step, Facts("exp", "forward", _line("exp"), "0", step=2)
    ),
]


def _debug_torch():
    import lucid.debug.torch as debug_torch

    return debug_torch


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_find_birth_names_op_phase_line_module_and_step(case):
    event = _debug_torch().find_birth(case.program())
    assert event is not None
    assert _facts_of(event) == case.facts


def test_an_optimizer_step_that_overflows_names_the_optimizer_and_the_parameter():
    event = _debug_torch().find_birth(adam_exploding_learning_rate())
    assert (event.phase, event.op, event.optimizer) == ("optimizer", "addcmul_", "Adam")
    assert (event.parameter, event.state) == ("0.weight", "exp_avg_sq")


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_watch_replays_the_failing_step_and_names_the_same_birth(case):
    debug_torch = _debug_torch()
    if not case.reaches_gradients:
        with debug_torch.watch():
            case.program()()
        return
    with pytest.raises(debug_torch.NonFiniteError) as raised:
        with debug_torch.watch():
            case.program()()
    event = raised.value.nan_event
    assert _facts_of(event) == (case.watch_facts or case.facts)
    assert event.replayed == "bitwise"


def test_find_birth_of_a_finite_program_is_none():
    model = _net()
    assert _debug_torch().find_birth(_train_steps(model, [torch.ones(2, 4)], steps=2)) is None


# ------------------------------------------------------------------ compiled and checkpointed
class CheckpointedSqrt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = SqrtAtZero()

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.inner, x, use_reentrant=False)


def test_a_backward_birth_in_a_recomputed_checkpoint_names_the_original_site():
    program = _train_steps(_net(CheckpointedSqrt()), [torch.ones(2, 4)])
    event = _debug_torch().find_birth(program)
    assert _facts_of(event) == Facts("sqrt", "backward", _line("bwd-sqrt"), "2.inner")


def test_a_compiled_model_is_replayed_eagerly():
    model = _net(LogMinusTwo())
    compiled = torch.compile(model, backend="eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    debug_torch = _debug_torch()
    with pytest.raises(debug_torch.NonFiniteError) as raised:
        with debug_torch.watch():
            optimizer.zero_grad()
            compiled(torch.ones(2, 4)).pow(2).mean().backward()
            optimizer.step()
    event = raised.value.nan_event
    assert _facts_of(event) == Facts("log", "forward", _line("fwd-in-module"), "2")
    assert event.replayed == "bitwise"


@pytest.mark.skipif(
    shutil.which("g++") is None and shutil.which("c++") is None,
    reason="torch's inductor compiles C++ on the CPU: no C++ compiler here",
)
def test_a_model_compiled_by_inductor_is_replayed_eagerly():
    model = _net(LogMinusTwo())
    compiled = torch.compile(model)  # the default backend, inductor: fused C++ kernels
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    debug_torch = _debug_torch()
    with pytest.raises(debug_torch.NonFiniteError) as raised:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch: global hooks fire twice
            with debug_torch.watch():
                optimizer.zero_grad()
                compiled(torch.ones(2, 4)).pow(2).mean().backward()
                optimizer.step()
    event = raised.value.nan_event
    assert _facts_of(event) == Facts("log", "forward", _line("fwd-in-module"), "2")
    assert event.replayed in ("bitwise", "approximately")


def test_an_output_only_overwritten_is_no_input_of_the_op():
    # out= and copy_ never read what they overwrite (often uninitialised memory, NaN bits
    # included): a 0/0 written over a NaN is still a birth, and a finite copy none.
    def divide_into_nans():
        torch.div(torch.zeros(3), torch.zeros(3), out=torch.full((3,), float("nan")))  # <out>

    event = _debug_torch().find_birth(divide_into_nans)
    assert (event.op, event.phase, event.aten_op) == ("div", "forward", "aten.div.out")
    assert event.location.endswith(f":{_line('out')}")
    assert (
        _debug_torch().find_birth(lambda: torch.full((3,), float("nan")).copy_(torch.ones(3)).exp())
        is None
    )


class LogOnTheFirstCallOnly(torch.nn.Module):
    """Python state the replay does not restore: its replay differs from the run."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return torch.log(x - (10.0 if self.calls == 1 else -10.0))


def test_a_compiled_model_whose_replay_differs_says_so_and_how_to_match_it():
    model = _net(LogOnTheFirstCallOnly())
    compiled = torch.compile(model, backend="eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    debug_torch = _debug_torch()
    with pytest.raises(debug_torch.NonFiniteError) as raised:
        with debug_torch.watch():
            optimizer.zero_grad()
            compiled(torch.ones(2, 4)).pow(2).mean().backward()
            optimizer.step()
    assert raised.value.nan_event.replayed == "no"
    note = raised.value.event.note
    assert "replay ran it eagerly" in note and "fallback_random = True" in note
    assert "did not reproduce the run" in str(raised.value)


def test_instruments_in_two_threads_keep_their_own_births_and_restore_function_apply():
    import threading

    original = torch.autograd.Function.__dict__["apply"]
    found = {}
    barrier = threading.Barrier(2)

    def run(name, program):
        barrier.wait()
        found[name] = _facts_of(_debug_torch().find_birth(program))

    threads = [
        threading.Thread(target=run, args=("custom", custom_function_backward())),
        threading.Thread(target=run, args=("forward", forward_in_module())),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found["custom"] == Facts("ZeroOverZero", "backward", _line("custom-backward"), "2")
    assert found["forward"] == Facts("log", "forward", _line("fwd-in-module"), "2")
    assert torch.autograd.Function.__dict__["apply"] is original
