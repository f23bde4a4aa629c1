"""A rank that dies or stalls never hangs the job: the others raise DistBackendError within the
process group's timeout (2 s in the worker), and the job ends non-zero in bounded time."""

from __future__ import annotations

import re
import time

from tests.distributed.launch import launch, requires_mpi

pytestmark = requires_mpi

# The worker's timeout is 2 s; a job that outlives this has hung.
BOUND = 25


def _run(mode: str, ranks: int):
    start = time.monotonic()
    result = launch("faults.py", ranks, mode, timeout=60)
    return result, time.monotonic() - start


def test_a_stalled_rank_fails_the_others_within_the_timeout():
    result, elapsed = _run("stall", 3)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert elapsed < BOUND, output
    caught = re.findall(r"rank (\d) caught DistBackendError after ([\d.]+) s: (.*)", result.stdout)
    # ranks 0 and 2 both time out; the first to abort may end the other before it reports
    assert caught and {rank for rank, _, _ in caught} <= {"0", "2"}, output
    rank, waited, message = caught[0]
    assert 2.0 <= float(waited) < 10, output
    assert message.startswith(f"[Rank {rank}] all_reduce did not finish"), output
    assert "timeout of 0:00:02" in message, output
    # the group is unusable afterwards; the failing rank's traceback says why the job ended
    assert "the process group is broken by an earlier failed collective" in result.stdout
    assert "lucid.distributed.DistBackendError" in result.stderr


def test_a_rank_that_never_joins_fails_init_within_the_timeout():
    result, elapsed = _run("absent", 2)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and elapsed < BOUND, output
    assert "[Rank 0] init_process_group did not finish" in result.stdout, output


def test_a_killed_rank_ends_the_job():
    # MPICH's launcher (hydra) stops every rank as soon as one dies of a signal or exits
    # non-zero, so the others end at once, before any timeout, and mpiexec reports it.
    result, elapsed = _run("kill", 2)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and elapsed < BOUND, output
    assert "Killed (signal 9)" in output
    assert "finished the all_reduce" not in result.stdout


def test_a_wait_with_its_own_timeout_raises_within_it():
    result, elapsed = _run("recv", 2)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and elapsed < BOUND, output
    assert (
        "rank 0 caught DistBackendError: [Rank 0] recv did not finish within the process "
        "group's timeout of 0:00:00.300000" in result.stdout
    ), output
