"""Starting an MPI job of test workers: each launch is bounded in time, loopback only, and the
distributed tests skip with the reason when the `distributed` extra is not installed."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKERS = Path(__file__).resolve().parent / "workers"


def _mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpiexec")


MPIEXEC = _mpiexec()
MISSING = None
if importlib.util.find_spec("mpi4py") is None:
    MISSING = "mpi4py is not installed (pip install mpi4py mpich)"
elif MPIEXEC is None:
    MISSING = "no mpiexec next to the interpreter or on PATH (the MPICH wheel provides one)"

requires_mpi = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # One NumPy thread per rank: the ranks already share the machine's cores.
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = "1"
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        env.pop(name, None)
    # Unbuffered, print writes a line's text and its newline separately, and mpiexec may
    # interleave another rank's output between them.
    env.pop("PYTHONUNBUFFERED", None)
    return env


def launch(
    worker: str, ranks: int, *args: str, timeout: float = 60, mpi_args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """Run tests/distributed/workers/<worker> on `ranks` processes through mpiexec."""
    command = [MPIEXEC, *mpi_args, "-n", str(ranks), sys.executable, str(WORKERS / worker), *args]
    return subprocess.run(
        command,
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_every_rank_passed(result: subprocess.CompletedProcess, ranks: int) -> None:
    report = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, report
    passed = sorted(int(rank) for rank in re.findall(r"PASSED rank (\d+)", result.stdout))
    assert passed == list(range(ranks)), report
