"""lucid.debug.NaNDetector and GradNormGuard given a real torch model: the same arguments and
the same NaNEvents / GradNormEvents as for a lucid model (op, phase, module, line, step,
kind, stats), hooks removed on exit, registration thread-safe, memory bounded."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path

import pytest

import lucid
import lucid.nn as lnn
from lucid.debug import GradEvent, GradNormGuard, NaNDetector, NaNEvent
from tests.markers import marked_line
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(_THIS_FILE, marker)


def _line_of(event: NaNEvent) -> int | None:
    """The event's line in this file (-1 for another file, None for no location)."""
    if event.location is None:
        return None
    filename, _, number = event.location.rpartition(":")
    return int(number) if Path(filename).resolve() == _THIS_FILE else -1


# ------------------------------------------------------------------ torch programs
class LogMinusTwo(torch.nn.Module):
    def forward(self, x):
        return torch.log(x - 2.0)  # <log>


class TwoHalves(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first = torch.nn.Linear(4, 4)
        self.second = torch.nn.Linear(4, 1)

    def forward(self, x):
        h = self.first(x)
        h = h / (h - h)  # <functional>
        return self.second(h)


class SqrtAtZero(torch.nn.Module):
    def forward(self, x):
        return (x - x).sqrt()  # <sqrt>


class Exp(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x)  # <exp>


class RandomLog(torch.nn.Module):
    def forward(self, x):
        return torch.log(torch.rand_like(x) - 0.5)  # <random-log>


class NormThenLog(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return torch.log(self.norm(x))


class MaskedAttention(torch.nn.Module):
    def forward(self, x):
        scores = x @ x.transpose(0, 1)
        causal = torch.ones(2, 2, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))  # an intentional -inf: no event
        padding = torch.tensor([[False, False], [True, True]])
        return torch.softmax(scores.masked_fill(padding, float("-inf")), -1) @ x  # <softmax>


class Masker(torch.nn.Module):
    """Writes -inf as a value: what the user asked for, never an event."""

    def forward(self, x):
        return x.masked_fill(x > 0.1, float("-inf"))


def _net(middle=None):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 4), torch.nn.ReLU(), middle or torch.nn.Identity(),
        torch.nn.Linear(4, 1),
    )  # fmt: skip


def _call(model, batch):
    return model(batch)  # <call>


def _train(model, batches, optimizer=None):
    """An ordinary loop: zero_grad, forward, loss, backward, step."""
    optimizer = optimizer or torch.optim.SGD(model.parameters(), lr=0.0)
    for batch in batches:
        optimizer.zero_grad()
        loss = _call(model, batch).pow(2).mean()
        loss.backward()
        optimizer.step()


def _poison(parameter, value=float("nan")):
    with torch.no_grad():
        parameter.view(-1)[0] = value


def _hook_count(model) -> int:
    """Forward hooks on the modules and gradient hooks on the parameters."""
    count = 0
    for module in model.modules():
        count += len(module._forward_hooks) + len(module._forward_pre_hooks)
    for parameter in model.parameters():
        count += len(parameter._backward_hooks or {})
    return count


def _optimizer_hook_count() -> int:
    import torch.optim.optimizer as optimizer_module

    return len(optimizer_module._global_optimizer_post_hooks)


# ------------------------------------------------------------------ construction
def test_a_torch_model_gets_the_torch_detector_with_the_same_signature():
    model = _net()
    detector = NaNDetector(model, True, True, False, 100.0, (), 100, True)
    assert isinstance(detector, NaNDetector) and type(detector).__name__ == "TorchNaNDetector"
    assert (detector.stop_on_first, detector.check_inputs, detector.check_backward) == (
        True, True, False)  # fmt: skip
    assert (detector.grad_norm_warn, detector.max_events, detector.verbose) == (100.0, 100, True)
    assert not detector.is_attached
    assert type(NaNDetector(lnn.Linear(2, 2))) is NaNDetector  # a lucid model: unchanged


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"max_events": 0}, ValueError), ({"grad_norm_warn": -1.0}, ValueError)],
)
def test_invalid_arguments_raise_as_for_a_lucid_model(kwargs, error):
    with pytest.raises(error):
        NaNDetector(_net(), **kwargs)


# ------------------------------------------------------------------ naming the birth
def test_a_birth_inside_a_submodule_names_its_op_line_module_step_and_stats():
    model = _net(LogMinusTwo())
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        _train(model, [torch.ones(2, 4)])
    (event,) = detector.events
    assert (event.op, event.phase, event.layer_name, event.module_type) == (
        "log", "forward", "2", "LogMinusTwo")  # fmt: skip
    assert (_line_of(event), event.batch_idx, event.kind, event.is_backward) == (
        _line("log"), 0, "nan", False)  # fmt: skip
    assert event.mechanism == "invalid operation: created by log from inputs without nan"
    assert (event.input_has_nan, event.input_has_inf) == (False, False)
    assert (event.output_has_nan, event.output_shape, event.received) == (True, (2, 4), False)
    assert event.stats == {"nan_count": 8, "inf_count": 0, "min": None, "max": None,
                           "mean": None}  # fmt: skip
    assert event.aten_op == "aten.log.default"


def test_a_functional_op_between_modules_blames_the_parent_not_the_consumer():
    # h / (h - h) makes inf in the parent's own code; `second` only consumes it (and turns
    # it into nan): a forward-hook detector blames `second`.
    model = TwoHalves()
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        _call(model, torch.ones(2, 4))
    (event,) = detector.events
    assert (event.op, event.phase, event.layer_name, event.module_type, event.kind) == (
        "div", "forward", "", "TwoHalves", "inf")  # fmt: skip
    assert _line_of(event) == _line("functional")
    assert event.mechanism.startswith("division by zero")
    assert event.stats["inf_count"] == 8 and event.where == "the model itself (TwoHalves)"


def test_a_functional_op_in_a_child_module_is_named_by_that_child_from_a_re_run_inside_it():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), TwoHalves(), torch.nn.Linear(1, 1))
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        for _ in range(2):
            _call(model, torch.ones(2, 4))
        assert detector._local.frames == []
    assert [(e.op, e.layer_name, e.module_type, e.batch_idx) for e in detector.events] == [
        ("div", "1", "TwoHalves", 0), ("div", "1", "TwoHalves", 1)]  # fmt: skip


def test_a_nan_in_the_batch_is_received_at_the_model_call():
    batch = torch.ones(2, 4)
    batch[1, 2] = float("nan")
    model = _net()
    with NaNDetector(model, verbose=False) as detector:
        _call(model, batch)
    event = detector.event
    assert (event.op, event.phase, event.layer_name, event.module_type, event.received) == (
        "input", "input", "", None, True)  # fmt: skip
    assert (_line_of(event), event.kind, event.input_has_nan, event.output_has_nan) == (
        _line("call"), "nan", True, True)  # fmt: skip
    assert event.output_shape == (2, 4) and event.stats["nan_count"] == 1
    assert event.mechanism == "the batch passed to the model holds nan"


def test_an_additive_mask_of_minus_inf_in_the_batch_is_not_an_event():
    model = torch.nn.Sequential(Masker())
    mask = torch.zeros(2, 4)
    mask[0, 1] = float("-inf")
    with NaNDetector(model, verbose=False) as detector:
        _call(model, mask)
    assert not detector.triggered


def test_a_nan_in_a_parameter_is_received_named_by_the_parameter_and_its_module():
    torch.manual_seed(0)
    model = torch.nn.Sequential(OrderedDict(
        encoder=torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                    torch.nn.Linear(8, 8)),
        head=torch.nn.Linear(8, 2),
    ))  # fmt: skip
    _poison(model.encoder[2].weight)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        _call(model, torch.ones(3, 4))
    (event,) = detector.events
    assert (event.op, event.phase, event.layer_name, event.module_type, event.received) == (
        "encoder.2.weight", "parameter", "encoder.2", "Linear", True)  # fmt: skip
    assert (_line_of(event), event.kind, event.output_shape) == (_line("call"), "nan", (8, 8))
    assert event.stats["nan_count"] == 1 and not event.input_has_nan and event.output_has_nan
    assert "the parameter encoder.2.weight already held nan" in event.mechanism


def test_a_nan_in_a_parameter_of_a_leaf_model_names_the_model_itself():
    model = torch.nn.Linear(2, 2)
    _poison(model.bias)
    with NaNDetector(model, verbose=False) as detector:
        _call(model, torch.ones(1, 2))
    event = detector.event
    assert (event.op, event.layer_name, event.module_type, event.phase) == (
        "bias", "", "Linear", "parameter")  # fmt: skip


def test_an_inf_in_a_parameter_is_received_too():
    model = torch.nn.Sequential(OrderedDict(fc=torch.nn.Linear(2, 2)))
    _poison(model.fc.weight, float("inf"))
    with NaNDetector(model, verbose=False) as detector:
        _call(model, torch.tensor([[1.0, 1.0]]))
    event = detector.event
    assert (event.op, event.layer_name, event.kind, event.received) == ("fc.weight", "fc",
                                                                       "inf", True)  # fmt: skip


def test_an_inf_written_as_a_value_is_intentional_and_a_fully_masked_softmax_row_is_not():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Masker())
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        for _ in range(3):
            _call(model, torch.ones(2, 4))
    assert not detector.triggered
    model = _net(MaskedAttention())
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        _call(model, torch.ones(2, 4))
    (event,) = detector.events
    assert (event.op, event.layer_name, event.kind, _line_of(event)) == (
        "softmax", "2", "nan", _line("softmax"))  # fmt: skip


def test_a_birth_after_random_draws_is_named_and_the_rng_is_left_as_the_run_left_it():
    model = _net(torch.nn.Sequential(torch.nn.Dropout(0.5), RandomLog()))
    torch.manual_seed(3)
    _call(model, torch.ones(2, 4))
    plain = torch.get_rng_state()
    torch.manual_seed(3)
    with NaNDetector(model, verbose=False) as detector:
        _call(model, torch.ones(2, 4))
    assert (detector.event.op, detector.event.layer_name) == ("log", "2.1")
    assert _line_of(detector.event) == _line("random-log")
    assert torch.equal(torch.get_rng_state(), plain)


def test_a_re_run_leaves_batchnorm_running_statistics_as_the_run_left_them():
    batch = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    plain = _net(NormThenLog())
    _call(plain, batch)
    _call(plain, batch)
    model = _net(NormThenLog())
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        _call(model, batch)
        _call(model, batch)
    assert [(event.op, event.layer_name, event.batch_idx) for event in detector.events] == [
        ("log", "2", 0), ("log", "2", 1)]  # fmt: skip
    for name, buffer in plain[2].norm.named_buffers():
        assert torch.equal(dict(model[2].norm.named_buffers())[name], buffer), name


def test_a_model_call_under_no_grad_is_the_eval_phase():
    model = _net(LogMinusTwo())
    with torch.no_grad(), NaNDetector(model, verbose=False) as detector:
        _call(model, torch.ones(2, 4))
    assert (detector.event.op, detector.event.phase, detector.event.layer_name) == (
        "log", "eval", "2")  # fmt: skip


def test_check_inputs_off_names_the_first_module_with_its_input_flags():
    batch = torch.ones(2, 4)
    batch[0, 0] = float("nan")
    model = _net()
    with NaNDetector(model, check_inputs=False, verbose=False) as detector:
        _call(model, batch)
    event = detector.event
    assert (event.phase, event.layer_name, event.op, event.input_has_nan) == (
        "forward", "0", None, True)  # fmt: skip
    assert "input already held nan" in event.mechanism


# ------------------------------------------------------------------ backward
def test_a_backward_birth_names_the_forward_line_and_module_and_keeps_the_runs_gradients():
    plain = _net(SqrtAtZero())
    _call(plain, torch.ones(2, 4)).pow(2).mean().backward()
    model = _net(SqrtAtZero())
    with NaNDetector(model, verbose=False) as detector:
        _call(model, torch.ones(2, 4)).pow(2).mean().backward()
    event = detector.event
    assert (event.op, event.phase, event.is_backward, event.layer_name, event.module_type) == (
        "sqrt", "backward", True, "2", "SqrtAtZero")  # fmt: skip
    assert (_line_of(event), event.kind, event.batch_idx) == (_line("sqrt"), "inf", 0)
    assert event.mechanism.startswith("division by zero") and event.replayed == "bitwise"
    assert event.node == "SqrtBackward0"
    for mine, theirs in zip(model.parameters(), plain.parameters()):
        assert torch.equal(mine.grad, theirs.grad) or torch.allclose(
            mine.grad, theirs.grad, equal_nan=True
        )


def test_without_check_backward_the_nan_shows_up_as_the_weights_it_left_behind():
    model = _net(SqrtAtZero())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with NaNDetector(model, check_backward=False, verbose=False) as detector:
        _train(model, [torch.ones(2, 4)] * 2, optimizer)
    event = detector.event
    assert (event.phase, event.received, event.batch_idx, event.layer_name) == (
        "parameter", True, 1, "0")  # fmt: skip


class Amplify(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 1e30


class Amplifier(torch.nn.Module):
    def forward(self, x):
        return Amplify.apply(x)


def test_a_backward_birth_seen_only_in_a_parameters_gradient_is_named_by_check_grad_norms():
    # The first layer's weight gradient overflows; no module output's gradient holds it.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Amplifier(), torch.nn.Linear(4, 1))
    with NaNDetector(model, verbose=False) as detector:
        _call(model, torch.full((2, 4), 1e10)).sum().backward()
        assert not detector.triggered
        assert detector.check_grad_norms() == []  # stopped at the event, as in backward
    event = detector.event
    assert (event.op, event.phase, event.layer_name, event.module_type, event.kind) == (
        "linear", "backward", "0", "Linear", "inf")  # fmt: skip
    assert (_line_of(event), event.node, event.replayed) == (_line("call"), "AddmmBackward0",
                                                             "bitwise")  # fmt: skip
    assert event.mechanism.startswith("overflow")


def test_a_nan_the_losss_backward_makes_is_named_outside_the_model():
    model = _net()
    with NaNDetector(model, verbose=False) as detector:
        output = _call(model, torch.ones(2, 4))
        torch.log(output - output).mean().backward()
    event = detector.event
    assert (event.phase, event.is_backward, event.module_type, event.op) == (
        "backward", True, None, None)  # fmt: skip
    assert "the loss's backward, outside the model" in event.mechanism


# ------------------------------------------------------------------ steps
def test_the_step_counts_optimizer_steps_and_a_birth_at_a_later_step_says_so():
    torch.manual_seed(0)
    model = torch.nn.Sequential(Exp(), torch.nn.Linear(4, 1))
    batches = [torch.ones(2, 4), torch.ones(2, 4), torch.full((2, 4), 100.0)]
    with NaNDetector(model, verbose=False) as detector:
        _train(model, batches)
    event = detector.event
    assert (event.op, event.layer_name, event.kind, event.batch_idx, _line_of(event)) == (
        "exp", "0", "inf", 2, _line("exp"))  # fmt: skip
    assert event.mechanism.startswith("overflow")


def test_the_step_is_the_iteration_when_the_model_is_called_twice_per_step():
    model = _net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    with NaNDetector(model, verbose=False) as detector:
        for step in range(3):
            optimizer.zero_grad()
            _call(model, torch.ones(2, 4))
            batch = torch.ones(2, 4)
            if step == 2:
                batch[0, 0] = float("nan")
            _call(model, batch)
            optimizer.step()
    assert (detector.event.batch_idx, detector.event.model_call) == (2, 5)
    assert "step 2 (model call 5)" in detector.event.headline()


def test_set_batch_and_set_step_label_the_later_calls():
    model = _net()
    _poison(model[0].weight)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        detector.set_batch(40)
        _call(model, torch.ones(2, 4))
    assert detector.event.batch_idx == 40
    lucid.debug.set_step(7)
    try:
        with NaNDetector(model, verbose=False) as detector:
            _call(model, torch.ones(2, 4))
    finally:
        lucid.debug.set_step(None)
    assert detector.event.batch_idx == 7


# ------------------------------------------------------------------ options
def test_skip_types_are_not_hooked_nor_anything_inside_them_and_their_births_are_not_events():
    model = _net(torch.nn.Sequential(LogMinusTwo()))
    with NaNDetector(model, skip_types=(LogMinusTwo,), verbose=False) as detector:
        assert len(model[2][0]._forward_hooks) == len(model[2][0]._forward_pre_hooks) == 0
        assert len(model[2]._forward_hooks) == 1
        _call(model, torch.ones(2, 4))
    assert not detector.triggered
    with NaNDetector(model, skip_types=torch.nn.Sequential, verbose=False) as detector:
        # The model itself is never skipped; the inner Sequential and its child are.
        assert len(model._forward_hooks) == len(model._forward_pre_hooks) == 1
        assert len(model[2]._forward_hooks) == len(model[2][0]._forward_hooks) == 0
        assert len(model[0]._forward_hooks) == 1
    with NaNDetector(model, verbose=False) as detector:
        _call(model, torch.ones(2, 4))
    assert (detector.event.layer_name, detector.event.op) == ("2.0", "log")


def test_skip_ops_ignores_an_op_by_function_name():
    model = _net(LogMinusTwo())
    with NaNDetector(model, skip_ops=["log"], verbose=False) as detector:
        _call(model, torch.ones(2, 4))
    assert not detector.triggered


def test_stop_on_first_records_nothing_after_the_first_event():
    model = _net()
    _poison(model[0].weight)
    with NaNDetector(model, verbose=False) as detector:
        for _ in range(5):
            _call(model, torch.ones(2, 4)).sum().backward()
        assert detector.check_grad_norms() == []
    assert len(detector.events) == 1 and detector.event.batch_idx == 0 and detector.triggered


def test_max_events_bounds_the_events_and_the_log_file(tmp_path):
    path = tmp_path / "events.jsonl"
    model = _net()
    _poison(model[3].bias)
    with NaNDetector(model, stop_on_first=False, max_events=3, log_path=path,
                     verbose=False) as detector:  # fmt: skip
        for _ in range(10):
            _call(model, torch.ones(2, 4))
    assert [event.batch_idx for event in detector.events] == [7, 8, 9]
    assert detector.event.batch_idx == 0 and detector.event.op == "3.bias"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [record["batch_idx"] for record in records] == [0, 1, 2]
    assert records[0] == detector.event.to_dict()


def test_events_go_to_the_lucid_debug_logger_in_full_when_verbose(caplog):
    model = _net()
    _poison(model[0].weight)
    with caplog.at_level("DEBUG", logger="lucid.debug"):
        with NaNDetector(model) as detector:
            _call(model, torch.ones(2, 4))
    (record,) = [r for r in caplog.records if r.name == "lucid.debug"]
    assert record.levelname == "WARNING" and record.getMessage() == str(detector.event)
    assert "1 model call(s), 1 event(s)" in detector.summary()


def test_check_grad_norms_flags_large_and_nonfinite_gradients_in_one_pass():
    torch.manual_seed(0)
    model = torch.nn.Sequential(OrderedDict(fc1=torch.nn.Linear(3, 3),
                                            fc2=torch.nn.Linear(3, 1)))  # fmt: skip
    model(torch.randn(4, 3)).sum().backward()
    with NaNDetector(model, grad_norm_warn=1e3, verbose=False) as detector:
        assert detector.check_grad_norms() == []
        model.fc1.weight.grad *= 1e6
        model.fc2.bias.grad[0] = float("inf")
        found = detector.check_grad_norms()
    assert [(e.param_name, e.layer_name, e.module_type, e.reason) for e in found] == [
        ("fc1.weight", "fc1", "Linear", "large"), ("fc2.bias", "fc2", "Linear", "inf")]  # fmt: skip
    assert isinstance(found[0], GradEvent) and found[0].norm > 1e3
    assert list(detector.grad_events) == found and not detector.triggered


def test_train_with_nan_guard_runs_a_torch_model_and_names_a_loss_made_outside_it():
    model = _net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    batches = [(torch.ones(2, 4), torch.ones(2, 1))] * 3
    losses, event = lucid.debug.train_with_nan_guard(
        model, batches, lambda output, target: torch.log(output - output).mean(), optimizer,
        verbose=False,
    )  # fmt: skip
    assert len(losses) == 1 and losses[0] == float("-inf")
    assert (event.phase, event.module_type, event.op, event.kind, event.batch_idx) == (
        "loss", None, None, "inf", 0)  # fmt: skip
    losses, event = lucid.debug.train_with_nan_guard(
        model, batches, torch.nn.functional.mse_loss, optimizer, verbose=False)  # fmt: skip
    assert len(losses) == 3 and event is None


# ------------------------------------------------------------------ lifecycle
def test_detach_removes_every_hook():
    model = _net(torch.nn.BatchNorm1d(4))
    before = _optimizer_hook_count()
    with NaNDetector(model, verbose=False) as detector:
        assert _hook_count(model) > 0 and _optimizer_hook_count() == before + 1
        output = _call(model, torch.randn(3, 4))
        assert len(output._backward_hooks) == 1  # the model output's gradient is watched
    assert not detector.is_attached
    assert _hook_count(model) == 0 and _optimizer_hook_count() == before
    assert not output._backward_hooks
    output.sum().backward()  # no hook of a detached detector runs
    assert not detector.triggered


def test_hooks_are_removed_when_the_with_body_raises():
    model = _net()
    with pytest.raises(RuntimeError, match="boom"):
        with NaNDetector(model):
            _call(model, torch.ones(2, 4))
            raise RuntimeError("boom")
    assert _hook_count(model) == 0


def test_a_forward_that_raises_does_not_leave_the_step_open():
    model = _net()
    with NaNDetector(model, verbose=False) as detector:
        with pytest.raises(RuntimeError):
            _call(model, torch.ones(2, 5))  # wrong width
        assert detector._local.depth == 0 and detector._local.frames == []
        _poison(model[3].weight)
        _call(model, torch.ones(2, 4))
    assert (detector.event.op, detector.event.batch_idx) == ("3.weight", 1)


def test_attach_twice_is_harmless_and_concurrent_attach_registers_one_set_of_hooks():
    model = _net()
    detector = NaNDetector(model)
    assert detector.attach() is detector and detector.attach() is detector
    expected = _hook_count(model)
    detector.detach()
    detector.detach()
    assert _hook_count(model) == 0
    barrier = threading.Barrier(8)

    def attach_then_detach() -> None:
        barrier.wait()
        detector.attach()

    threads = [threading.Thread(target=attach_then_detach) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _hook_count(model) == expected
    threads = [threading.Thread(target=detector.detach) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _hook_count(model) == 0 and not detector.is_attached


def test_model_calls_from_two_threads_keep_their_own_module_stacks():
    model = _net(LogMinusTwo())
    events = []
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        barrier = threading.Barrier(2)

        def run() -> None:
            barrier.wait()
            for _ in range(3):
                with torch.no_grad():
                    _call(model, torch.ones(2, 4))

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        events = list(detector.events)
    assert events and all((e.op, e.layer_name) == ("log", "2") for e in events)


# ------------------------------------------------------------------ cost
def test_a_clean_step_re_runs_nothing_and_keeps_bounded_state(monkeypatch):
    # Not a timing test: a clean step must never enter the instrument, must check each
    # watched output once, and must keep no more than a few calls' references.
    from lucid.debug.torch import _detector

    entered = []
    checks = []
    is_finite = _detector._is_finite

    class CountingInstrument(_detector.Instrument):
        def __enter__(self):
            entered.append(self)
            return super().__enter__()

    def counting_is_finite(tensor):
        checks.append(tuple(tensor.shape))
        return is_finite(tensor)

    monkeypatch.setattr(_detector, "Instrument", CountingInstrument)
    monkeypatch.setattr(_detector, "_is_finite", counting_is_finite)
    model = _net(torch.nn.BatchNorm1d(4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with NaNDetector(model, verbose=False) as detector:
        _train(model, [torch.randn(3, 4)])
        checks.clear()
        for _ in range(30):
            _train(model, [torch.randn(3, 4)], optimizer)
        assert detector._local.frames == [] and detector._local.outputs == []
        assert len(detector._backward_calls) <= 1  # dropped at each optimizer step
        assert len(detector._grad_handles) <= 30 * 6
    assert entered == [] and not detector.triggered
    # Per step: the batch, 5 module outputs (4 layers and the model) and 4 gradients (the
    # last layer's output is the model's); parameter gradients only in check_grad_norms().
    assert len(checks) == 30 * (1 + 5 + 4)


# ------------------------------------------------------------------ GradNormGuard
def test_grad_norm_guard_on_a_torch_model_flags_a_nonfinite_norm_and_names_the_parameter():
    torch.manual_seed(0)
    model = torch.nn.Sequential(OrderedDict(fc1=torch.nn.Linear(3, 3),
                                            fc2=torch.nn.Linear(3, 1)))  # fmt: skip
    guard = GradNormGuard(model)
    model(torch.randn(4, 3)).sum().backward()
    assert guard.check() is None and guard.step == 1
    model.fc1.bias.grad[0] = float("nan")
    event = guard.check()
    assert event and (event.reason, event.step) == ("nonfinite", 1)
    assert event.top[0][0] == "fc1.bias" and set(event.param_norms) == {
        "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}  # fmt: skip


def test_grad_norm_guard_threshold_and_spike_after_warmup_on_torch_tensors():
    parameter = torch.nn.Parameter(torch.zeros(4))
    guard = GradNormGuard([parameter], threshold=50.0, spike_factor=10.0, warmup=3)
    for norm in (1.0, 1.2, 0.9, 1.1):
        parameter.grad = torch.full((4,), norm / 2)  # norm of 4 equal values: 2 * value
        assert guard.check() is None
    parameter.grad = torch.full((4,), 15.0 / 2)
    spike = guard.check()
    assert spike.reason == "spike" and spike.total_norm == pytest.approx(15.0)
    parameter.grad = torch.full((4,), 30.0)
    assert guard.check().reason == "threshold"
    assert GradNormGuard(parameter)._named_params[0][0] == "param0"  # one tensor, not its rows


def test_grad_norm_guard_reads_every_torch_gradient_in_one_fused_pass(monkeypatch):
    from lucid.debug.torch import _private

    calls = []
    foreach_norm = _private.foreach_norm

    def counting_foreach_norm(tensors):
        calls.append(len(tensors))
        return foreach_norm(tensors)

    monkeypatch.setattr(_private, "foreach_norm", counting_foreach_norm)
    model = _net()
    _call(model, torch.ones(2, 4)).sum().backward()
    guard = GradNormGuard(model)
    expected = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad)
                                                     for p in model.parameters()]))  # fmt: skip
    assert guard.total_norm() == pytest.approx(float(expected))
    assert calls == [4]


def test_grad_norm_guard_measures_a_float32_norm_that_overflows_a_sum_of_squares():
    parameter = torch.nn.Parameter(torch.zeros(4))
    parameter.grad = torch.full((4,), 1e20)
    assert GradNormGuard(parameter).total_norm() == pytest.approx(2e20)


# ------------------------------------------------------------------ parity with lucid
class LucidLogMinusTwo(lnn.Module):
    def forward(self, x):
        return lucid.log(x - 2.0)


class LucidTwoHalves(lnn.Module):
    def __init__(self):
        super().__init__()
        self.first = lnn.Linear(4, 4)
        self.second = lnn.Linear(4, 1)

    def forward(self, x):
        h = self.first(x)
        h = h / (h - h)
        return self.second(h)


class LucidSqrtAtZero(lnn.Module):
    def forward(self, x):
        return (x - x).sqrt()


def _lucid_net(middle=None):
    lucid.manual_seed(0)
    return lnn.Sequential(lnn.Linear(4, 4), lnn.ReLU(), middle or lnn.Identity(),
                          lnn.Linear(4, 1))  # fmt: skip


def _facts(event: NaNEvent) -> tuple:
    module_type = None if event.module_type is None else event.module_type.removeprefix("Lucid")
    return (event.op, event.phase, event.layer_name, module_type, event.kind,
            event.is_backward, event.received, event.batch_idx, event.input_has_nan,
            event.output_shape, event.stats["nan_count"], event.stats["inf_count"],
            event.mechanism)  # fmt: skip


def _batch_with_nan(framework):
    batch = framework.ones(2, 4)
    batch[1, 2] = float("nan")
    return batch


PARITY = {
    "birth in a submodule": (lambda: _net(LogMinusTwo()),
                             lambda: _lucid_net(LucidLogMinusTwo()), None),
    "functional op between modules": (TwoHalves, LucidTwoHalves, None),
    "backward birth": (lambda: _net(SqrtAtZero()), lambda: _lucid_net(LucidSqrtAtZero()),
                       None),
    "nan in the batch": (_net, _lucid_net, "nan batch"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(PARITY))
def test_a_torch_model_gets_the_same_event_as_the_same_lucid_model(name):
    import warnings

    torch_model, lucid_model, batch = PARITY[name]
    facts = []
    for framework, make in ((torch, torch_model), (lucid, lucid_model)):
        model = make()
        inputs = _batch_with_nan(framework) if batch else framework.ones(2, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
                model(inputs).pow(2).mean().backward()
        assert len(detector.events) == 1
        facts.append(_facts(detector.event))
    assert facts[0] == facts[1]
