"""lucid.profiler against torch.profiler: the schedule's actions, the steps a schedule records
and hands to on_trace_ready, the trace files TensorBoard's plugin reads, and the errors."""

from __future__ import annotations

import gzip
import json
import os
import warnings

import pytest

import lucid
import lucid.profiler as P
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

SCHEDULES = [
    {"wait": 1, "warmup": 1, "active": 2},
    {"wait": 1, "warmup": 1, "active": 2, "repeat": 2},
    {"wait": 0, "warmup": 2, "active": 1, "skip_first": 3},
    {"wait": 3, "warmup": 1, "active": 2, "skip_first": 2, "skip_first_wait": 1},
]


@pytest.mark.parametrize("arguments", SCHEDULES, ids=lambda a: ",".join(map(str, a.values())))
def test_schedule_gives_torchs_actions(arguments):
    ours, theirs = P.schedule(**arguments), torch.profiler.schedule(**arguments)
    assert [ours(step).name for step in range(20)] == [theirs(step).name for step in range(20)]


@pytest.mark.parametrize(
    "arguments",
    [
        {"wait": -1, "warmup": 1, "active": 1},
        {"wait": 0, "warmup": 1, "active": 0},
        {"wait": 0, "warmup": 1, "active": 1, "repeat": -1},
        {"wait": 0, "warmup": 1, "active": 1, "skip_first": -2},
    ],
)
def test_bad_schedules_raise_torchs_error(arguments):
    with pytest.raises(AssertionError) as expected:
        torch.profiler.schedule(**arguments)
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments") as raised:
        P.schedule(**arguments)
    assert str(raised.value) == str(expected.value)


def test_a_schedule_without_warmup_warns_as_torchs():
    with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
        P.schedule(wait=1, warmup=0, active=1)


def test_negative_step_is_refused():
    with pytest.raises(AssertionError, match="Step must be non-negative. Got -1."):
        P.schedule(wait=0, warmup=1, active=1)(-1)


def _cycles(library, steps, **schedule_arguments):
    """Each call of on_trace_ready: the step it came at, and (lucid only: torch's events name
    every step ProfilerStep*) the steps whose regions its recording holds."""
    cycles = []

    def ready(prof):
        names = [event.name for event in prof.events()] if library is lucid else []
        recorded = sorted(int(n.split("#")[1]) for n in names if n.startswith("ProfilerStep#"))
        cycles.append((prof.step_num, recorded))

    x = library.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        profiler = library.profiler.profile(
            activities=[library.profiler.ProfilerActivity.CPU],
            schedule=library.profiler.schedule(**schedule_arguments),
            on_trace_ready=ready,
        )
        with profiler as prof:
            for _ in range(steps):
                (x * 2).sum().backward()
                prof.step()
    return cycles


@pytest.mark.parametrize("arguments", SCHEDULES, ids=lambda a: ",".join(map(str, a.values())))
def test_the_traces_come_at_torchs_steps_and_hold_the_active_ones(arguments):
    ours = _cycles(lucid, 12, **arguments)
    assert [step for step, _ in ours] == [step for step, _ in _cycles(torch, 12, **arguments)]
    action = P.schedule(**arguments)
    active = [s for s in range(12) if action(s).name in ("RECORD", "RECORD_AND_SAVE")]
    assert [step for _, steps in ours for step in steps] == active
    # each trace ends with the step that saves it
    assert all(action(steps[-1]) == P.ProfilerAction.RECORD_AND_SAVE for _, steps in ours)


def test_without_a_schedule_the_block_is_one_recording_of_every_op():
    x = lucid.ones(3, requires_grad=True)
    ready = []
    with P.profile(on_trace_ready=ready.append) as prof:
        for _ in range(3):
            (x * 2).sum().backward()
            prof.step()
    assert ready == [prof]
    averages = {average.key: average.count for average in prof.key_averages()}
    assert averages["sum"] == 3 and averages["MulBackward0"] == 3, averages
    assert not any(name.startswith("ProfilerStep#") for name in averages)
    assert "mul" in prof.key_averages().table(sort_by="self_cpu_time_total")


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler_writes_one_trace_per_cycle(tmp_path, use_gzip):
    x = lucid.ones(3, requires_grad=True)
    with P.profile(
        schedule=P.schedule(wait=0, warmup=1, active=2, repeat=2),
        on_trace_ready=P.tensorboard_trace_handler(str(tmp_path), "worker0", use_gzip),
    ) as prof:
        for _ in range(8):
            (x * 2).sum().backward()
            prof.step()
    suffix = ".pt.trace.json.gz" if use_gzip else ".pt.trace.json"
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2
    assert all(name.startswith("worker0.") and name.endswith(suffix) for name in files)
    with open(tmp_path / files[0], "rb") as stream:
        data = stream.read()
    trace = json.loads(gzip.decompress(data) if use_gzip else data)
    names = {event["name"] for event in trace["traceEvents"] if event.get("ph") == "X"}
    # the plugin finds the steps by their annotations and the ops by their category
    assert {"ProfilerStep#1", "ProfilerStep#2", "mul"} <= names
    categories = {event["cat"] for event in trace["traceEvents"] if event.get("ph") == "X"}
    assert categories == {"cpu_op", "user_annotation"}


def test_the_names_and_enums_are_torchs():
    for enum_name in ("ProfilerActivity", "ProfilerAction", "DeviceType"):
        ours, theirs = getattr(P, enum_name), getattr(torch.profiler, enum_name)
        assert {m: v.value for m, v in ours.__members__.items()} == {
            m: v.value for m, v in theirs.__members__.items()
        }
    assert P.supported_activities() == {P.ProfilerActivity.CPU}
    assert P.record_function is lucid.autograd.profiler.record_function


def test_no_activity_is_refused_and_use_cuda_is_deprecated():
    with pytest.raises(AssertionError, match="No valid profiler activities found"):
        P.profile(activities=[])
    with pytest.warns(FutureWarning, match="`use_cuda` is deprecated"):
        P.profile(use_cuda=False)


def test_results_before_any_recording_are_refused():
    prof = P.profile(schedule=P.schedule(wait=5, warmup=1, active=1))
    with prof:
        prof.step()
        with pytest.raises(RuntimeError, match="no step yet"):
            prof.key_averages()


def test_export_stacks_writes_folded_stacks(tmp_path):
    x = lucid.ones(3, requires_grad=True)
    with P.profile(with_stack=True) as prof:
        (x * 2).sum().backward()
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any("test_profiler_module.py" in line for line in lines)
    with pytest.raises(RuntimeError, match="with_stack=True"):
        P.profile().export_stacks(str(path))
