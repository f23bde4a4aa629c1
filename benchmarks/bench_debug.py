"""Cost of lucid.debug's training-loop tools against the plain training step.

    python benchmarks/bench_debug.py            # all measurements
    python benchmarks/bench_debug.py --quick    # fewer repetitions

The workload is bench_core.py's (b), the MLP 784-512-512-10 training step. Each variant in
VARIANTS wraps that step with one tool; paired_ratio (from bench_anomaly.py) runs the plain and
the instrumented step in alternating rounds and compares medians. Budgets (issue 5):
GradNormGuard.check() <= 1.02x.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

# Both libraries get two BLAS/OpenMP threads, as in bench_core; set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_anomaly import paired_ratio  # noqa: E402
from bench_core import lucid_mlp_step, make_mlp  # noqa: E402

import lucid  # noqa: E402
from lucid.debug import GradNormGuard  # noqa: E402

Step = Callable[[], object]


def _plain(params: list, x: lucid.Tensor, y: lucid.Tensor) -> Step:
    def run() -> None:
        lucid_mlp_step(params, x, y)

    return run


def _with_grad_norm_guard(params: list, x: lucid.Tensor, y: lucid.Tensor) -> Step:
    guard = GradNormGuard(params)

    def run() -> None:
        # lucid_mlp_step leaves this step's gradients in place, so checking right after it
        # reads exactly what a check between backward() and the update would.
        lucid_mlp_step(params, x, y)
        if guard.check():
            raise RuntimeError(f"the benchmark's healthy run was flagged:\n{guard.events[-1]}")

    return run


# (name, factory of the instrumented step from (params, x, y), budget or None).
VARIANTS: list[tuple[str, Callable[[list, lucid.Tensor, lucid.Tensor], Step], float | None]] = [
    ("(b) MLP step, GradNormGuard.check()/plain", _with_grad_norm_guard, 1.02),
]


def time_everything(rounds: int) -> dict[str, float]:
    ratios: dict[str, float] = {}
    for name, factory, budget in VARIANTS:
        # A fresh model per variant, so no variant trains on another's updated weights.
        (params, x, y), _ = make_mlp(0)
        ratios[name] = paired_ratio(
            name, _plain(params, x, y), factory(params, x, y), rounds, inner=5, budget=budget
        )
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__}, numpy {np.__version__}, 2 threads, "
          f"median of {rounds} alternating rounds")  # fmt: skip
    time_everything(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
