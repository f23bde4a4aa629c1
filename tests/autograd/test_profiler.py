"""lucid.autograd.profiler: PyTorch's documented profiler contract, built as an observer."""

from __future__ import annotations

import gc
import json
import os
import re
import sqlite3
import sys
import threading
import types
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid import _atomic
from lucid._core.function import op_name
from lucid._core.grad_mode import local_state
from lucid.autograd import Function, profiler
from lucid.autograd.profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    emit_nvtx,
    load_nvprof,
    profile,
    record_function,
)
from tests.markers import marked_line
from tests.torch_oracle import TORCH_MISSING

_THIS_FILE = str(Path(__file__).resolve())


def _named(events, name: str) -> list:
    return [event for event in events if event.name == name]


class _ExpTimesTwo(Function):
    """A custom Function whose forward and backward are written in lucid ops."""

    @staticmethod
    def forward(ctx, x):
        result = x.exp() * 2
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class _FailingForward(Function):
    @staticmethod
    def forward(ctx, x):
        x.exp()
        raise ValueError("forward failed on purpose")

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class _FailingBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad_output):
        raise ValueError("backward failed on purpose")


# ------------------------------------------------------------ PyTorch's examples
def test_x_squared_loop_counts_each_forward_op_and_backward_node():
    # The example of PyTorch's profile docstring.
    x = lucid.randn(1, 1, requires_grad=True)
    with profile() as prof:
        for _ in range(100):
            y = x**2
            y.backward()
    averages = {average.key: average for average in prof.key_averages()}
    assert averages["pow"].count == 100
    assert averages["PowBackward0"].count == 100
    assert averages["autograd::engine::evaluate_function: PowBackward0"].count == 100
    top_level = [event.name for event in prof.events() if event.cpu_parent is None]
    assert top_level.count("pow") == 100
    # As in PyTorch, each node's event sits inside the engine's evaluation of it.
    assert top_level.count("autograd::engine::evaluate_function: PowBackward0") == 100
    assert "PowBackward0" not in top_level
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert re.search(r"^\s+pow\s.*\s100\s*$", table, re.MULTILINE)
    assert re.search(r"^\s+PowBackward0\s.*\s100\s*$", table, re.MULTILINE)


def test_label_z_region_holds_the_op_inside_it():
    # The example of PyTorch's record_function docstring.
    x = lucid.randn(1, 1, requires_grad=True)
    with profile() as prof:
        y = x**2
        with record_function("label-z"):
            z = y**3
        y.backward()
    (label,) = _named(prof.events(), "label-z")
    assert [child.name for child in label.cpu_children] == ["pow"]
    assert label.is_user_annotation and label.cpu_parent is None
    assert "label-z" in prof.key_averages().table()
    assert z.shape == (1, 1)


# ------------------------------------------------------------------- recording
def test_enabled_false_is_a_no_op():
    x = lucid.ones(3, requires_grad=True)
    with profile(enabled=False) as prof:
        assert local_state.observers == ()
        (x * 2).sum().backward()
    assert len(prof.events()) == 0
    assert prof.key_averages().table() == ""


def test_observer_is_removed_after_the_block_even_on_error():
    with pytest.raises(ZeroDivisionError):
        with profile():
            assert len(local_state.observers) == 1
            1 / 0
    assert local_state.observers == ()


def test_use_cuda_warns_and_records_cpu_only():
    x = lucid.ones(3)
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        prof = profile(use_cuda=True)
    with prof:
        x * 2
    assert [event.name for event in prof.events()] == ["mul"]
    assert prof.use_cuda is False
    assert "CUDA" not in prof.key_averages().table()


def test_profile_is_not_reentrant():
    prof = profile()
    with prof:
        with pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"):
            prof.__enter__()


def test_results_inside_the_block_raise():
    with profile() as prof:
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            prof.key_averages()


def test_forward_events_are_named_like_pytorch_ops():
    a = lucid.randn(2, 4, 3, requires_grad=True)
    b = lucid.randn(3, 2, requires_grad=True)
    with profile() as prof:
        c = a @ b
        d = c[0] @ b.t() + 1
        e = d * d
        e.log_softmax(1).sum().backward()
        with lucid.no_grad():
            a.relu_()
    names = [event.name for event in prof.events() if event.cpu_parent is None]
    assert names[:8] == ["matmul", "select", "t", "mm", "add", "mul", "log_softmax", "sum"]
    evaluated = [name.removeprefix("autograd::engine::evaluate_function: ") for name in names]
    assert "LogSoftmaxBackward0" in evaluated and "MulBackward0" in evaluated
    assert "UnsafeViewBackward0" in evaluated and "MmBackward0" in evaluated
    assert names[-1] == "relu_"


def test_every_builtin_op_has_a_lowercase_name():
    def subclasses(cls):
        for subclass in cls.__subclasses__():
            yield subclass
            yield from subclasses(subclass)

    builtins = [
        cls
        for cls in subclasses(Function)
        if cls.__module__.startswith("lucid.ops.") and not cls.__name__.startswith("_")
    ]
    assert len(builtins) > 150
    bad = [
        (cls.__name__, op_name(cls))
        for cls in builtins
        if not re.fullmatch(r"[a-z][a-z0-9_]*", op_name(cls))
    ]
    assert bad == []


def test_op_names_come_from_the_op_definition():
    from lucid.ops import arithmetic, fills, indexing, pointwise, products
    from lucid.ops._common import apply_inplace

    x = lucid.ones(3)
    apply_inplace(pointwise.Exp, x)
    in_place_exp = next(
        cls for cls in pointwise.Exp.__subclasses__() if cls.__module__ == "lucid.ops._common"
    )
    assert op_name(pointwise.Exp) == "exp" and op_name(in_place_exp) == "exp_"
    assert op_name(products.VecMat) == "matmul" and op_name(products.Mm) == "mm"
    assert op_name(indexing.SetitemCopyInplace) == op_name(fills.CopyInplace) == "copy_"
    assert op_name(arithmetic.DivScalar) == "div"  # from its grad_fn name, DivBackward0


def test_custom_function_is_named_after_its_class_and_its_ops_are_children():
    x = lucid.randn(5, requires_grad=True)
    with profile() as prof:
        _ExpTimesTwo.apply(x).sum().backward()
    (forward,) = _named(prof.events(), "_ExpTimesTwo")
    assert [child.name for child in forward.cpu_children] == ["exp", "mul"]
    (backward,) = _named(prof.events(), "_ExpTimesTwoBackward")
    assert [child.name for child in backward.cpu_children] == ["mul"]
    assert backward.sequence_nr == forward.sequence_nr >= 0
    # The ops inside a forward record no node: only the custom op carries a number.
    assert all(child.sequence_nr == -1 for child in forward.cpu_children)


def test_ops_inside_a_backward_node_are_its_children():
    x = lucid.randn(3, requires_grad=True)
    with profile() as prof:
        (x * x).sum().backward()
    (node,) = _named(prof.events(), "MulBackward0")
    assert [child.name for child in node.cpu_children] == ["mul", "mul"]
    assert all(child.cpu_parent is node for child in node.cpu_children)


def test_backward_event_carries_the_sequence_number_of_its_forward_op():
    x = lucid.randn(3, requires_grad=True)
    with profile() as prof:
        y = (x * 2).exp()
        z = y.tanh().sum()
        z.backward()
    forward = {}
    for event in prof.events():
        if event.cpu_parent is None and event.scope == 0:
            forward.setdefault(event.name, event)
    for backward_name, op in [
        ("MulBackward0", "mul"),
        ("ExpBackward0", "exp"),
        ("TanhBackward0", "tanh"),
        ("SumBackward0", "sum"),
    ]:
        (node,) = _named(prof.events(), backward_name)
        assert node.scope == 1
        assert node.sequence_nr == forward[op].sequence_nr >= 0
    assert forward["exp"].sequence_nr == y.grad_fn.sequence_nr


def test_ops_that_record_no_node_have_no_sequence_number():
    x = lucid.randn(3)
    with profile() as prof:
        x * 2
    (event,) = prof.events()
    assert event.sequence_nr == -1


def test_nested_record_function_regions_and_their_ops():
    x = lucid.randn(3)
    with profile() as prof:
        with record_function("outer"):
            x + 1
            with record_function("inner"):
                x * 2
    outer, add, inner, mul = prof.events()
    assert [outer.name, add.name, inner.name, mul.name] == ["outer", "add", "inner", "mul"]
    assert outer.cpu_children == [add, inner]
    assert inner.cpu_children == [mul] and mul.cpu_parent is inner
    assert outer.cpu_parent is None


def test_record_function_decorates_and_each_call_is_a_region():
    @record_function("helper")
    def helper(x):
        return x * 3

    x = lucid.randn(2)
    with profile() as prof:
        helper(x)
        helper(x)
    helpers = _named(prof.events(), "helper")
    assert len(helpers) == 2
    assert all([child.name for child in event.cpu_children] == ["mul"] for event in helpers)
    assert helper.__name__ == "helper"


def test_record_function_outside_a_profile_does_nothing():
    with record_function("alone") as region:
        lucid.ones(2) * 2
    assert region.name == "alone"


def test_record_function_rejects_a_non_string_name():
    with pytest.raises(TypeError, match="expects a str name"):
        record_function(3)


def test_self_time_excludes_children_and_total_includes_them():
    x = lucid.randn(64, requires_grad=True)
    with profile() as prof:
        with record_function("step"):
            _ExpTimesTwo.apply(x).sum().backward()
    nested = [event for event in prof.events() if event.cpu_children]
    assert len(nested) >= 3
    for event in prof.events():
        children_total = sum(child.cpu_time_total for child in event.cpu_children)
        assert event.self_cpu_time_total == pytest.approx(event.cpu_time_total - children_total)
        assert event.self_cpu_time_total >= 0
        for child in event.cpu_children:
            assert event.time_range.start <= child.time_range.start
            assert child.time_range.end <= event.time_range.end
    for event in nested:
        assert event.self_cpu_time_total < event.cpu_time_total
    # Self times partition the time of the top-level events.
    top_total = sum(event.cpu_time_total for event in prof.events() if event.cpu_parent is None)
    assert prof.self_cpu_time_total == pytest.approx(top_total)
    assert prof.total_average().self_cpu_time_total == pytest.approx(top_total)
    assert prof.total_average().key == "Total"
    assert prof.total_average().count == len(prof.events())


def test_profiling_does_not_change_results():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in [(8, 5), (3, 5), (3,)]]

    def step():
        x, w, b = (lucid.tensor(array, requires_grad=True) for array in arrays)
        logits = lucid.addmm(b, x, w.t()).relu()
        loss = -logits.log_softmax(1)[:, 0].mean() + (w * w).sum() * 0.01
        loss.backward()
        first_grad = w.grad
        (w.sum() * 2).backward()
        return loss, [t.grad for t in (x, w, b)], first_grad is w.grad

    plain_loss, plain_grads, plain_in_place = step()
    with profile(record_shapes=True, with_stack=True, profile_memory=True):
        profiled_loss, profiled_grads, profiled_in_place = step()
    assert np.array_equal(plain_loss.detach().numpy(), profiled_loss.detach().numpy())
    for plain, profiled in zip(plain_grads, profiled_grads):
        assert np.array_equal(plain.numpy(), profiled.numpy())
    # A leaf's .grad is still summed into in place, as without the profiler.
    assert plain_in_place and profiled_in_place


def test_forward_error_ends_its_event_and_the_profile_goes_on():
    x = lucid.randn(3, requires_grad=True)
    with profile() as prof:
        with pytest.raises(ValueError, match="forward failed on purpose"):
            _FailingForward.apply(x)
        x * 2
    failed, exp, mul = prof.events()
    assert failed.name == "_FailingForward" and failed.cpu_children == [exp]
    assert mul.name == "mul" and mul.cpu_parent is None


def test_backward_error_ends_its_event_and_the_profile_goes_on():
    x = lucid.randn(3, requires_grad=True)
    with profile() as prof:
        y = _FailingBackward.apply(x).sum()
        with pytest.raises(ValueError, match="backward failed on purpose"):
            y.backward()
        x * 2
    (node,) = _named(prof.events(), "_FailingBackwardBackward")
    assert node.cpu_parent.name == "autograd::engine::evaluate_function: _FailingBackwardBackward"
    assert node.cpu_parent.cpu_parent is None
    assert _named(prof.events(), "mul")[-1].cpu_parent is None


def test_profile_keeps_no_nodes_or_tensors_alive():
    x = lucid.randn(16, requires_grad=True)
    with profile(record_shapes=True, with_stack=True, profile_memory=True) as prof:
        y = (x * 2).exp()
        node = weakref.ref(y.grad_fn)
        tensor = weakref.ref(y)
        y.sum().backward()
    del y
    gc.collect()
    assert node() is None and tensor() is None
    assert prof._frames == []


def test_nested_profiles_both_record():
    x = lucid.randn(3)
    with profile() as outer:
        x + 1
        with profile() as inner:
            with record_function("region"):
                x * 2
    assert [event.name for event in outer.events()] == ["add", "region", "mul"]
    assert [event.name for event in inner.events()] == ["region", "mul"]


def test_profile_records_only_its_own_thread():
    x = lucid.randn(3)
    with profile() as prof:
        worker = threading.Thread(target=lambda: x * 2)
        worker.start()
        worker.join()
        x + 1
    assert [event.name for event in prof.events()] == ["add"]
    assert prof.events()[0].thread == threading.get_native_id()


# ---------------------------------------------------------- shapes, stacks, memory
def test_record_shapes_and_group_by_input_shape():
    a, b = lucid.randn(2, 3), lucid.randn(4)
    with profile(record_shapes=True) as prof:
        a * a
        b * b
        b * b
        a * 2
        with record_function("region"):
            pass
    (mul_averages,) = [average for average in prof.key_averages() if average.key == "mul"]
    assert mul_averages.count == 4 and mul_averages.input_shapes is None
    grouped = {
        (average.key, str(average.input_shapes)): average.count
        for average in prof.key_averages(group_by_input_shape=True)
    }
    assert grouped == {
        ("mul", "[[2, 3], [2, 3]]"): 1,
        ("mul", "[[4], [4]]"): 2,
        ("mul", "[[2, 3], []]"): 1,
        ("region", "[]"): 1,
    }
    table = prof.key_averages(group_by_input_shape=True).table()
    assert table.splitlines()[1].rstrip().endswith("Input Shapes")
    assert "[[4], [4]]" in table
    assert "Input Shapes" not in prof.key_averages().table()


def test_with_stack_names_the_calling_line_and_backward_gets_the_forward_stack():
    x = lucid.randn(3, requires_grad=True)
    with profile(with_stack=True) as prof:
        y = x.exp()  # <exp-call>
        y.sum().backward()
    (exp,) = _named(prof.events(), "exp")
    assert exp.stack[0] == f"{_THIS_FILE}({marked_line(__file__, 'exp-call')}): " + (
        "test_with_stack_names_the_calling_line_and_backward_gets_the_forward_stack"
    )
    assert all("lucid/" not in entry.split("(")[0] for entry in exp.stack)
    (node,) = _named(prof.events(), "ExpBackward0")
    assert node.stack == exp.stack
    assert all(child.stack == exp.stack for child in node.cpu_children)
    table = prof.key_averages(group_by_stack_n=1).table()
    # A long source entry keeps its end, as in PyTorch's table.
    assert "Source Location" in table and exp.stack[0][-40:] in table


def test_group_by_stack_n_separates_call_sites():
    x = lucid.randn(3)
    with profile(with_stack=True) as prof:
        x * 2  # first-site
        x * 2  # second-site
    by_stack = prof.key_averages(group_by_stack_n=1)
    assert len(by_stack) == 2
    assert sorted(len(average.stack) for average in by_stack) == [1, 1]
    assert len(prof.key_averages()) == 1


def test_profile_memory_counts_bytes_each_op_allocates():
    x = lucid.zeros(100, requires_grad=True)
    with profile(profile_memory=True) as prof:
        y = x * 2
        y.view(10, 10)
        with lucid.no_grad():
            y.add_(1)
        _ExpTimesTwo.apply(x)
    mul, view, add_, custom, exp, inner_mul = prof.events()
    assert mul.cpu_memory_usage == 400 and mul.self_cpu_memory_usage == 400
    assert view.name == "view" and view.cpu_memory_usage == 0
    assert add_.name == "add_" and add_.cpu_memory_usage == 0
    # The custom op returns what its children made: it allocated nothing itself.
    assert custom.cpu_children == [exp, inner_mul]
    assert custom.cpu_memory_usage == 800 and custom.self_cpu_memory_usage == 0
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "400 B" in table


# ----------------------------------------------------------------------- tables
def test_table_columns_and_layout_mirror_pytorch():
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    torch_x = torch.randn(3, requires_grad=True)
    with torch.autograd.profiler.profile() as torch_prof:
        (torch_x * 2).sum().backward()
    x = lucid.randn(3, requires_grad=True)
    with profile() as prof:
        (x * 2).sum().backward()
    # A narrow name column gives both tables the same widths: header and rules must match.
    torch_lines = torch_prof.key_averages().table(max_name_column_width=10).splitlines()
    lines = prof.key_averages().table(max_name_column_width=10).splitlines()
    assert lines[:3] == torch_lines[:3]
    assert lines[-2] == torch_lines[-2]
    assert lines[-1].startswith("Self CPU time total: ")
    assert len(lines[3:-2]) == len(prof.key_averages())
    assert all(re.fullmatch(r" *\S+", line[:10]) for line in lines[3:-2])


def test_table_sort_by_orders_rows_largest_first():
    x = lucid.randn(3)
    with profile() as prof:
        for _ in range(3):
            x * 2
        x + 1
        for _ in range(2):
            x.exp()
    rows = prof.key_averages().table(sort_by="count").splitlines()[3:-2]
    assert [row.split()[0] for row in rows] == ["mul", "exp", "add"]
    averages = prof.key_averages()
    for key in ["cpu_time_total", "self_cpu_time_total", "cpu_time"]:
        rows = averages.table(sort_by=key).splitlines()[3:-2]
        ordered = sorted(averages, key=lambda average: getattr(average, key), reverse=True)
        assert [row.split()[0] for row in rows] == [average.key for average in ordered]


def test_table_invalid_sort_by_raises_with_the_valid_keys():
    with profile() as prof:
        lucid.ones(2) * 2
    with pytest.raises(ValueError, match="invalid sort_by 'bogus'.*self_cpu_time_total"):
        prof.key_averages().table(sort_by="bogus")
    with pytest.raises(ValueError, match="invalid time_unit"):
        prof.key_averages().table(time_unit="hours")


def test_table_row_limit_header_name_width_and_time_unit():
    x = lucid.randn(3)
    with profile() as prof:
        x * 2
        x + 1
        x.exp()
        with record_function("a-region-with-a-rather-long-name"):
            pass
    table = prof.key_averages().table(
        row_limit=2, header="my header", max_name_column_width=20, time_unit="ms"
    )
    lines = table.splitlines()
    assert lines[0] == "=" * len(lines[2].rstrip()) and lines[1] == "my header"
    rows = lines[5:-2]
    assert [row.split()[0] for row in rows] == ["mul", "add"]
    assert all(re.search(r"\d\.\d{3}ms", row) for row in rows)
    full = prof.key_averages().table(max_name_column_width=20)
    assert "a-region-with-a-r..." in full


def test_top_level_events_only_hides_nested_events():
    x = lucid.randn(3)
    with profile() as prof:
        with record_function("outer"):
            x * 2
    table = prof.events().table(top_level_events_only=True)
    assert "outer" in table and "mul" not in table
    assert "This report only display top-level ops statistics" in table


def test_event_list_and_averages_types():
    with profile() as prof:
        lucid.ones(2) * 2
    assert isinstance(prof.events(), EventList)
    assert all(isinstance(event, FunctionEvent) for event in prof.events())
    assert all(isinstance(average, FunctionEventAvg) for average in prof.key_averages())
    assert str(prof) == prof.events().table()


# ----------------------------------------------------------------- chrome trace
def test_chrome_trace_schema(tmp_path):
    x = lucid.randn(2, 3, requires_grad=True)
    with profile(record_shapes=True) as prof:
        with record_function("forward-pass"):
            y = (x * 2).sum()
        y.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    document = json.loads(path.read_text())
    events = document["traceEvents"]
    complete = [event for event in events if event["ph"] == "X"]
    assert len(complete) == len(prof.events())
    for event in complete:
        assert set(event) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}
        assert isinstance(event["ts"], int | float) and isinstance(event["dur"], int | float)
        assert event["dur"] >= 0 and event["pid"] == os.getpid()
        assert event["tid"] == threading.get_native_id()
    by_name = {}
    for event in complete:
        by_name.setdefault(event["name"], event)
    assert by_name["mul"]["args"]["Input Dims"] == [[2, 3], []]
    assert by_name["forward-pass"]["cat"] == "user_annotation"
    assert by_name["mul"]["cat"] == "cpu_op"
    mul_seq = by_name["mul"]["args"]["Sequence number"]
    assert by_name["MulBackward0"]["args"]["Sequence number"] == mul_seq
    region, mul = by_name["forward-pass"], by_name["mul"]
    assert region["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= region["ts"] + region["dur"]
    metadata = [event for event in events if event["ph"] == "M"]
    assert {event["name"] for event in metadata} == {"process_name", "thread_name"}


def test_chrome_trace_write_is_atomic(tmp_path, monkeypatch):
    with profile() as prof:
        lucid.ones(2) * 2
    path = tmp_path / "trace.json"
    path.write_text("previous")

    def failing_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(_atomic.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        prof.export_chrome_trace(path)
    assert path.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json"]
    monkeypatch.undo()
    prof.export_chrome_trace(str(path))
    assert json.loads(path.read_text())["traceEvents"][-1]["name"] == "mul"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json"]


def test_chrome_trace_of_averages_raises(tmp_path):
    with profile() as prof:
        lucid.ones(2) * 2
    with pytest.raises(TypeError, match="needs the profiled events"):
        prof.key_averages().export_chrome_trace(tmp_path / "trace.json")


# ------------------------------------------------------------------------- NVTX
@pytest.fixture
def fake_nvtx(monkeypatch):
    calls: list[tuple[str, str | None]] = []
    module = types.SimpleNamespace(
        push_range=lambda message: calls.append(("push", message)),
        pop_range=lambda: calls.append(("pop", None)),
    )
    monkeypatch.setitem(sys.modules, "nvtx", module)
    return calls


def test_emit_nvtx_ranges_carry_seq_of_forward_and_backward(fake_nvtx):
    x = lucid.randn(2, requires_grad=True)
    with emit_nvtx(record_shapes=True):
        with record_function("step"):
            y = x * x
        y.sum().backward()
    pushes = [message for kind, message in fake_nvtx if kind == "push"]
    seq = y.grad_fn.sequence_nr
    assert pushes[:2] == ["step", f"mul, seq = {seq}, sizes = [[2], [2]]"]
    assert f"MulBackward0, seq = {seq}, sizes = [[2]]" in pushes
    # Ops inside backward record no node, so they carry no seq.
    assert "mul, sizes = [[2], [2]]" in pushes
    depth = 0
    for kind, _ in fake_nvtx:
        depth += 1 if kind == "push" else -1
        assert depth >= 0
    assert depth == 0
    assert local_state.observers == ()


def test_emit_nvtx_without_the_package_warns_once_and_records_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "nvtx", None)
    monkeypatch.setattr(profiler.nvtx, "_nvtx_warned", False)
    with pytest.warns(UserWarning, match="nvtx package is not installed"):
        with emit_nvtx():
            assert local_state.observers == ()
            lucid.ones(2) * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with emit_nvtx():
            lucid.ones(2) * 2


def test_emit_nvtx_disabled_and_not_reentrant(fake_nvtx):
    with emit_nvtx(enabled=False):
        lucid.ones(2) * 2
    assert fake_nvtx == []
    context = emit_nvtx()
    with context:
        with pytest.raises(RuntimeError, match="NVTX annotation context manager is not reentrant"):
            context.__enter__()


# ----------------------------------------------------------------------- nvprof
def _write_nvprof(path: Path) -> None:
    """A minimal nvprof export: two nested NVTX ranges, one kernel launched in the inner one."""
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (
            _id_ INTEGER PRIMARY KEY, flags INT, timestamp INT, id INT, objectKind INT,
            objectId BLOB, name INT, domain INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
            _id_ INTEGER PRIMARY KEY, cbid INT, start INT, end INT, processId INT,
            threadId INT, correlationId INT, returnValue INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (
            _id_ INTEGER PRIMARY KEY, start INT, end INT, deviceId INT, contextId INT,
            streamId INT, correlationId INT, name INT);
        INSERT INTO StringTable VALUES
            (1, 'step'), (2, 'mul, seq = 7, sizes = [[2, 3], [2, 3]]'),
            (3, 'MulBackward0, seq = 7'), (4, 'elementwise_kernel');
        INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (flags, timestamp, id, name) VALUES
            (2, 1000, 1, 1), (2, 2000, 2, 2), (4, 5000, 2, 0), (4, 9000, 1, 0),
            (2, 10000, 3, 3), (4, 14000, 3, 0);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (cbid, start, end, correlationId) VALUES
            (211, 3000, 4000, 42);
        INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
            (start, end, deviceId, correlationId, name) VALUES (4500, 6500, 0, 42, 4);
        """
    )
    connection.commit()
    connection.close()


def test_load_nvprof_reads_ranges_nesting_seq_and_kernels(tmp_path):
    path = tmp_path / "trace.nvvp"
    _write_nvprof(path)
    events = load_nvprof(path)
    assert [event.name for event in events] == ["step", "mul", "MulBackward0"]
    step, mul, backward = events
    assert (step.time_range.start, step.time_range.end) == (1.0, 9.0)
    assert mul.cpu_parent is step and step.cpu_children == [mul]
    assert mul.sequence_nr == backward.sequence_nr == 7 and step.sequence_nr == -1
    assert mul.input_shapes == [[2, 3], [2, 3]]
    assert backward.scope == 1 and mul.scope == 0
    assert mul.kernels == [profiler.Kernel("elementwise_kernel", 0, 2.0)]
    assert mul.self_device_time_total == 2.0 and step.device_time_total == 2.0
    assert step.self_device_time_total == 0
    assert step.self_cpu_time_total == pytest.approx(8.0 - 3.0)
    table = events.table()
    assert "Self CUDA" in table and "CUDA total" in table
    assert table.splitlines()[-1] == "Self CUDA time total: 2.000us"


def test_load_nvprof_rejects_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_nvprof(tmp_path / "absent.nvvp")
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE things (x INT)").connection.commit()
    with pytest.raises(ValueError, match="is not an nvprof trace"):
        load_nvprof(other)
