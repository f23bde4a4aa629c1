"""lucid.multiprocessing: the standard module's names, torch's sharing-strategy switches, and
spawn/start_processes, which run fn(i, *args) in N processes and raise the first failure."""

from __future__ import annotations

import multiprocessing
import pickle
import time
from multiprocessing.reduction import ForkingPickler

import pytest

import lucid
import lucid.multiprocessing as mp
from tests import multiprocessing_children as children
from tests.torch_oracle import requires_torch, torch

# Every process-starting test stops waiting after this long, so a hung child fails the test.
JOIN_SECONDS = 60.0
FORK = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="fork is not available"
)


def _join_within(context: mp.ProcessContext, seconds: float = JOIN_SECONDS) -> None:
    """Join `context` or fail once `seconds` have passed, ending the processes left."""
    deadline = time.monotonic() + seconds
    try:
        while not context.join(timeout=max(0.0, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                pytest.fail(f"the processes did not end within {seconds} s")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
                process.join()


def test_tensors_travel_by_value_through_multiprocessing_pickler() -> None:
    leaf = lucid.tensor([1.0, 2.0], requires_grad=True)
    received = pickle.loads(ForkingPickler.dumps(leaf))
    assert lucid.equal(received.detach(), leaf.detach()) and received.requires_grad
    assert received.is_leaf
    half = lucid.tensor([1.5, -2.0], dtype=lucid.bfloat16)
    assert lucid.equal(pickle.loads(ForkingPickler.dumps(half)), half)
    parameter = lucid.nn.Parameter(lucid.ones(2))
    assert type(pickle.loads(ForkingPickler.dumps(parameter))) is lucid.nn.Parameter


def test_a_non_leaf_that_requires_grad_is_refused() -> None:
    with pytest.raises(RuntimeError, match="^Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(lucid.tensor([1.0], requires_grad=True) * 2)


def test_plain_pickle_still_refuses_tensors() -> None:
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(lucid.ones(2))


def test_standard_module_names_are_reexported() -> None:
    for name in multiprocessing.__all__:
        assert name in mp.__all__
        assert hasattr(mp, name)
    assert mp.Process is multiprocessing.Process
    assert mp.get_context is multiprocessing.get_context


@requires_torch
def test_all_matches_torch() -> None:
    assert set(torch.multiprocessing.__all__) <= set(mp.__all__)


def test_sharing_strategy_is_checked_and_recorded() -> None:
    strategies = mp.get_all_sharing_strategies()
    default = mp.get_sharing_strategy()
    assert default in strategies
    try:
        mp.set_sharing_strategy("file_system")
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy(default)
    with pytest.raises(AssertionError) as caught:
        mp.set_sharing_strategy("bogus")
    assert str(caught.value) == f"invalid sharing strategy 'bogus', expected one of {strategies}"


@requires_torch
def test_sharing_strategies_match_torch() -> None:
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()


def test_exceptions_pickle_with_their_fields() -> None:
    raised = pickle.loads(pickle.dumps(mp.ProcessRaisedException("trace", 1, 42)))
    assert (raised.msg, raised.error_index, raised.error_pid) == ("trace", 1, 42)
    exited = pickle.loads(pickle.dumps(mp.ProcessExitedException("gone", 0, 7, -9, "SIGKILL")))
    assert (exited.exit_code, exited.signal_name, exited.error_pid) == (-9, "SIGKILL", 7)


@pytest.mark.multiprocess
def test_spawn_runs_each_index_and_tensors_travel_by_value() -> None:
    queue = multiprocessing.get_context("spawn").Queue()
    values = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lucid.float64)
    context = mp.spawn(children.put_scaled, args=(queue, values), nprocs=2, join=False)
    assert len(context.pids()) == 2
    received = dict(queue.get(timeout=JOIN_SECONDS) for _ in range(2))
    _join_within(context)
    assert lucid.equal(received[0], values) and lucid.equal(received[1], values * 2)
    assert received[1].dtype == lucid.float64


@pytest.mark.multiprocess
@FORK
def test_a_child_writing_to_a_tensor_leaves_the_parents_unchanged() -> None:
    # lucid tensors are NumPy arrays sent by value, never through shared memory
    values = lucid.zeros(3)
    context = mp.start_processes(children.modify, args=(values,), join=False, start_method="fork")
    _join_within(context)
    assert lucid.equal(values, lucid.zeros(3))


@pytest.mark.multiprocess
@FORK
def test_an_exception_in_a_child_is_raised_with_its_traceback() -> None:
    context = mp.start_processes(
        children.raise_in_second, nprocs=2, join=False, start_method="fork"
    )
    with pytest.raises(mp.ProcessRaisedException) as caught:
        _join_within(context)
    assert caught.value.error_index == 1
    assert caught.value.error_pid == context.processes[1].pid
    message = str(caught.value)
    assert message.startswith("\n\n-- Process 1 terminated with the following error:\n")
    assert "ValueError: child failed on purpose" in message


@pytest.mark.multiprocess
@FORK
def test_a_child_exit_code_is_raised() -> None:
    context = mp.start_processes(children.exit_with_code, join=False, start_method="fork")
    with pytest.raises(mp.ProcessExitedException, match="^process 0 terminated with exit code 3$"):
        _join_within(context)


@pytest.mark.multiprocess
@FORK
def test_a_child_killed_by_a_signal_is_named() -> None:
    context = mp.start_processes(children.kill_itself, join=False, start_method="fork")
    with pytest.raises(mp.ProcessExitedException) as caught:
        _join_within(context)
    assert str(caught.value) == "process 0 terminated with signal SIGKILL"
    assert caught.value.signal_name == "SIGKILL"
    assert caught.value.exit_code == -9


def test_spawn_warns_for_another_start_method(monkeypatch) -> None:
    started = []
    monkeypatch.setattr(
        mp._spawn, "start_processes", lambda *args, **kwargs: started.append(kwargs)
    )
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(children.exit_with_code, start_method="fork")
    # it starts with spawn all the same
    assert started == [{"start_method": "spawn"}]


def test_join_with_no_processes_is_done() -> None:
    assert mp.ProcessContext([], []).join() is True
