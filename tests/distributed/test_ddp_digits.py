"""examples/ddp_digits.py: two processes reach one process's accuracy, and a NaN planted on
rank 1 stops both ranks, each naming rank 1."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.distributed.launch import MPIEXEC, ROOT, environment, requires_mpi

pytestmark = requires_mpi
pytest.importorskip("sklearn", reason="the digits data needs scikit-learn (the demo extra)")

EXAMPLE = ROOT / "examples" / "ddp_digits.py"


def run_example(ranks: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MPIEXEC, "-n", str(ranks), sys.executable, str(EXAMPLE), "--epochs", "1", *args],
        capture_output=True, text=True, timeout=120, env=environment(), cwd=ROOT,
    )  # fmt: skip


def test_two_processes_reach_the_accuracy_of_one() -> None:
    one = run_example(1, "--max-steps", "25")
    two = run_example(2, "--max-steps", "25")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    accuracy_one = one.stdout.split("test accuracy ")[1].split()[0]
    accuracy_two = two.stdout.split("test accuracy ")[1].split()[0]
    assert float(accuracy_one) > 0.25  # trained: chance is 0.1
    assert accuracy_one == accuracy_two


def test_a_nan_planted_on_rank_1_stops_every_rank_naming_rank_1() -> None:
    completed = run_example(2, "--plant-nan", "3", "--max-steps", "6")
    reports = [line for line in completed.stdout.splitlines() if "stopped at step" in line]
    source = EXAMPLE.read_text().splitlines()
    line = 1 + next(index for index, text in enumerate(source) if "images / images.amax" in text)
    assert sorted(reports) == [
        f"[rank {rank}] stopped at step 3: a nan was born on rank 1 in div (forward) at "
        f"{EXAMPLE}:{line}"
        for rank in (0, 1)
    ]
    assert "on rank 0 it was received through the gradient all-reduce" in completed.stdout
    # Both ranks name rank 1's samples, as its DistributedSampler handed them out.
    samples = [line for line in completed.stdout.splitlines() if line.startswith("  samples: ")]
    assert len(samples) == 2 and samples[0] == samples[1]
    assert len(samples[0].split(",")) == 16
