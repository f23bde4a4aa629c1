"""The profiler records the engine's evaluation of every node, AccumulateGrad included, as
PyTorch's CPU profiler does: names, nesting, sequence numbers, counts and the Chrome trace."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import lucid
from lucid.autograd.profiler import profile
from tests.torch_oracle import requires_torch, torch

EVALUATE = "autograd::engine::evaluate_function: "
ACCUMULATE = "lucid::autograd::AccumulateGrad"


def _lucid_name(name: str) -> str:
    return name.replace("torch::autograd::AccumulateGrad", ACCUMULATE)


def _evaluations(events) -> list[tuple]:
    """Each top-level evaluation, in order: its name, scope, whether it has a sequence number,
    and the backward-node events (scope 1) directly inside it."""
    shape = []
    for event in events:
        if event.cpu_parent is None and event.name.startswith(EVALUATE):
            nodes = [
                (_lucid_name(child.name), child.sequence_nr >= 0)
                for child in event.cpu_children
                if child.scope == 1
            ]
            shape.append((_lucid_name(event.name), event.scope, event.sequence_nr >= 0, nodes))
    return shape


def _backward_counts(averages) -> dict[str, int]:
    return {
        _lucid_name(average.key): average.count
        for average in averages
        if average.key.startswith(EVALUATE)
        or "AccumulateGrad" in average.key
        or average.key.endswith("Backward0")
    }


def _models(rng):
    first, second = rng.standard_normal((3, 4)), rng.standard_normal((2, 3))
    biases = rng.standard_normal(3), rng.standard_normal(2)
    lucid_model = lucid.nn.Sequential(
        lucid.nn.Linear(4, 3), lucid.nn.ReLU(), lucid.nn.Linear(3, 2)
    ).double()
    torch_model = torch.nn.Sequential(
        torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)
    ).double()
    for model, module in ((lucid_model, lucid), (torch_model, torch)):
        with module.no_grad():
            model[0].weight.copy_(module.tensor(first))
            model[0].bias.copy_(module.tensor(biases[0]))
            model[2].weight.copy_(module.tensor(second))
            model[2].bias.copy_(module.tensor(biases[1]))
    return lucid_model, torch_model


def _two_steps(module, model, profiler, inputs):
    with profiler() as prof:
        for _ in range(2):
            model(module.tensor(inputs)).sum().backward()
    return prof


@requires_torch
def test_small_model_backward_evaluations_match_torch(rng):
    lucid_model, torch_model = _models(rng)
    inputs = rng.standard_normal((5, 4))
    lucid_prof = _two_steps(lucid, lucid_model, profile, inputs)
    torch_prof = _two_steps(torch, torch_model, torch.autograd.profiler.profile, inputs)

    lucid_shape = _evaluations(lucid_prof.events())
    assert lucid_shape == _evaluations(torch_prof.function_events)
    # Two passes over two layers: a weight and a bias each, written twice.
    assert lucid_shape.count((EVALUATE + ACCUMULATE, 0, False, [(ACCUMULATE, False)])) == 8
    counts = _backward_counts(lucid_prof.key_averages())
    assert counts == _backward_counts(torch_prof.key_averages())
    assert counts[EVALUATE + ACCUMULATE] == counts[ACCUMULATE] == 8
    for parameter, torch_parameter in zip(lucid_model.parameters(), torch_model.parameters()):
        np.testing.assert_allclose(parameter.grad.numpy(), torch_parameter.grad.numpy())


@requires_torch
def test_chrome_trace_counts_match_key_averages_and_torch(rng, tmp_path):
    lucid_model, torch_model = _models(rng)
    inputs = rng.standard_normal((5, 4))
    lucid_prof = _two_steps(lucid, lucid_model, profile, inputs)
    torch_prof = _two_steps(torch, torch_model, torch.autograd.profiler.profile, inputs)
    lucid_path, torch_path = tmp_path / "lucid.json", tmp_path / "torch.json"
    lucid_prof.export_chrome_trace(lucid_path)
    torch_prof.export_chrome_trace(str(torch_path))

    def backward_events(path) -> list[dict]:
        events = json.loads(path.read_text())["traceEvents"]
        return [
            event
            for event in events
            if event.get("ph") == "X"
            and (event["name"].startswith(EVALUATE) or "AccumulateGrad" in event["name"])
        ]

    lucid_events = backward_events(lucid_path)
    lucid_counts = Counter(event["name"] for event in lucid_events)
    torch_counts = Counter(_lucid_name(event["name"]) for event in backward_events(torch_path))
    assert lucid_counts == torch_counts
    averages = {average.key: average.count for average in lucid_prof.key_averages()}
    assert all(averages[name] == count for name, count in lucid_counts.items())
    for event in lucid_events:
        assert event["cat"] == "cpu_op"
        if "AccumulateGrad" in event["name"]:
            assert "Sequence number" not in event["args"]
        else:
            assert event["args"]["Sequence number"] >= 0


@pytest.mark.parametrize(
    "options", [{}, {"record_shapes": True, "with_stack": True, "profile_memory": True}], ids=str
)
def test_accumulation_into_an_existing_grad_is_inside_the_accumulate_grad_event(options):
    w = lucid.randn(3, requires_grad=True)
    with profile(**options) as prof:
        (w * 2).sum().backward()
        (w * 3).sum().backward()
    first, second = [event for event in prof.events() if event.name == ACCUMULATE]
    # The first gradient is handed to `.grad` as it is; the second is added in place.
    assert first.cpu_children == []
    assert [child.name for child in second.cpu_children] == ["add_"]
    (mul_node,) = [event for event in prof.events() if event.name == "MulBackward0"][:1]
    assert mul_node.cpu_parent.name == EVALUATE + "MulBackward0"
    assert mul_node.cpu_parent.sequence_nr == mul_node.sequence_nr >= 0
    for event in (first, second):
        assert event.cpu_parent.name == EVALUATE + ACCUMULATE
        assert event.cpu_parent.cpu_parent is None
        assert event.cpu_parent.cpu_children == [event]
        assert event.scope == 1 and event.cpu_parent.scope == 0
        assert event.sequence_nr == event.cpu_parent.sequence_nr == -1
        outer, inner = event.cpu_parent.time_range, event.time_range
        assert outer.start <= inner.start <= inner.end <= outer.end


@requires_torch
@pytest.mark.parametrize("call", ["grad_of_leaf", "backward_with_inputs", "grad_of_non_leaf"])
def test_captured_nodes_are_evaluated_but_only_accumulators_that_write_run(call):
    def run(module, profiler):
        w = module.ones(3, requires_grad=True)
        b = module.ones(3, requires_grad=True)
        with profiler() as prof:
            y = w * b
            loss = y.exp().sum()
            if call == "grad_of_leaf":
                module.autograd.grad(loss, [w])
            elif call == "backward_with_inputs":
                loss.backward(inputs=[w])
            else:
                module.autograd.grad(loss, [y])
        return prof.events() if module is lucid else prof.function_events

    lucid_shape = _evaluations(run(lucid, profile))
    assert lucid_shape == _evaluations(run(torch, torch.autograd.profiler.profile))
    accumulators = [nodes for name, _, _, nodes in lucid_shape if name == EVALUATE + ACCUMULATE]
    expected = {
        "grad_of_leaf": [[]],
        "backward_with_inputs": [[(ACCUMULATE, False)]],
        "grad_of_non_leaf": [],
    }
    assert accumulators == expected[call]


def test_a_failing_leaf_hook_closes_the_evaluation_and_the_profile_goes_on():
    w = lucid.randn(3, requires_grad=True)

    def fail(grad):
        raise ValueError("hook failed on purpose")

    w.register_hook(fail)
    with profile() as prof:
        with pytest.raises(ValueError, match="hook failed on purpose"):
            (w * 2).sum().backward()
        lucid.ones(2) * 2
    (evaluation,) = [event for event in prof.events() if event.name == EVALUATE + ACCUMULATE]
    assert evaluation.cpu_parent is None and evaluation.time_range.elapsed_us() >= 0
    assert [event.name for event in prof.events()][-1] == "mul"
    assert prof.events()[-1].cpu_parent is None


def test_no_profile_no_evaluation_events_and_same_gradients():
    w = lucid.randn(4, requires_grad=True)
    (w * w).sum().backward()
    expected = w.grad.clone()
    w.grad = None
    with profile() as prof:
        (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), expected.numpy())
    with profile(enabled=False) as disabled:
        (w * w).sum().backward()
    assert len(disabled.events()) == 0
    assert len([event for event in prof.events() if event.name.startswith(EVALUATE)]) == 3
