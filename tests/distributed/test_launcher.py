"""`python -m lucid.distributed.run`: torchrun's spellings and environment, MPI's mpiexec
underneath, and a failing rank that ends the job at once instead of leaving the others waiting."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from lucid.distributed import run
from tests.distributed.launch import (
    ROOT,
    WORKERS,
    assert_every_rank_passed,
    environment,
    launch,
    requires_mpi,
)


def _launcher(*arguments: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "lucid.distributed.run", *arguments],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, time.monotonic() - start


@requires_mpi
def test_the_launcher_starts_ranks_with_torchruns_environment():
    script = str(WORKERS / "environment.py")
    result, _ = _launcher("--nproc_per_node", "2", script, "a", "--b")
    assert_every_rank_passed(result, 2)
    seen = sorted(re.findall(r"RANK=.*?main=__main__", result.stdout))
    assert seen == [
        f"RANK={rank} WORLD_SIZE=2 LOCAL_RANK={rank} LOCAL_WORLD_SIZE=2 OMP_NUM_THREADS=1 "
        "argv=['a', '--b'] main=__main__"
        for rank in range(2)
    ]


@requires_mpi
def test_a_rank_that_exits_non_zero_ends_the_job_with_its_status():
    result, elapsed = _launcher("--nproc-per-node", "3", str(WORKERS / "environment.py"),
                                "--fail-on-rank-1")  # fmt: skip
    assert result.returncode == 3 and elapsed < 25, result.stderr
    assert "lucid.distributed.run: the job failed (mpiexec exit status 3)" in result.stderr
    assert "PASSED" not in result.stdout


@requires_mpi
def test_an_uncaught_exception_under_plain_mpiexec_ends_the_job():
    start = time.monotonic()
    result = launch("environment.py", 2, "--raise-on-rank-1")
    assert result.returncode != 0 and time.monotonic() - start < 25, result.stderr
    assert "ValueError: planted on rank 1" in result.stderr
    assert "PASSED" not in result.stdout


def test_the_launcher_says_when_there_is_no_mpiexec(monkeypatch):
    monkeypatch.setattr(run, "find_mpiexec", lambda: None)
    with pytest.raises(SystemExit, match=r"MPICH has one: pip install mpi4py mpich \(from a lucid"):
        run.main(["--nproc-per-node", "2", "train.py"])


def test_the_launcher_rejects_no_ranks():
    with pytest.raises(SystemExit, match="--nproc-per-node must be at least 1, got 0"):
        run.main(["--nproc-per-node", "0", "train.py"])


def test_the_mpiexec_command_line():
    line = run.command(4, "train.py", ["--epochs", "2"], False, "/opt/mpi/bin/mpiexec")
    assert line[:4] == ["/opt/mpi/bin/mpiexec", "-n", "4", sys.executable]
    assert line[4].endswith("_rank_entry.py")
    assert line[5:] == ["--", "train.py", "--epochs", "2"]
    assert run.command(2, "pkg.train", [], True, "mpiexec")[5:] == ["-m", "pkg.train"]


def test_find_mpiexec_looks_beside_the_interpreter_then_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert run.find_mpiexec(str(tmp_path / "python")) is None
    beside = tmp_path / "mpiexec"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    assert run.find_mpiexec(str(tmp_path / "python")) == str(beside)
