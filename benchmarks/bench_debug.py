"""Cost of lucid.debug's training-loop tools against the plain training step.

    python benchmarks/bench_debug.py            # all measurements
    python benchmarks/bench_debug.py --quick    # fewer repetitions

The workload is bench_core.py's (b), the MLP 784-512-512-10 training step. Each variant in
VARIANTS wraps that step with one tool; paired_ratio (from bench_anomaly.py) runs the plain and
the instrumented step in alternating rounds; the ratio is the median of the rounds' ratios. The
NaNDetector rows build their own models: (b) the same MLP as nn.Sequential with
nn.CrossEntropyLoss and SGD, (c) and (d) bench_models.py's CNN training step and transformer
block; the detector stays attached to one copy of the model, the plain step runs on another.
Budgets (issue 5): GradNormGuard.check() <= 1.02x, NaNDetector attached <= 1.05x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Both libraries get two BLAS/OpenMP threads, as in bench_core; set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_anomaly import paired_ratio  # noqa: E402
from bench_core import lucid_mlp_step, make_mlp  # noqa: E402
from bench_models import block_step, cnn_step, make_block, make_cnn  # noqa: E402

import lucid  # noqa: E402
import lucid.nn as nn  # noqa: E402
from lucid.debug import GradNormGuard, NaNDetector  # noqa: E402

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


def _mlp_module_step() -> tuple[nn.Module, Step]:
    (params, x, y), _ = make_mlp(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))  # fmt: skip
    with lucid.no_grad():
        for target, source in zip(model.parameters(), params):
            target.copy_(source)
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()

    def run() -> None:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()

    return model, run


def _cnn_step() -> tuple[nn.Module, Step]:
    setup = make_cnn(0)[0]
    return setup[1], lambda: cnn_step(*setup)


def _block_step() -> tuple[nn.Module, Step]:
    setup = make_block(0)[0]
    return setup[1], lambda: block_step(*setup)


def _with_nan_detector(workload: Callable[[], tuple[nn.Module, Step]], **options: Any):
    """A factory of (plain, instrumented): two copies of `workload`, one under a detector
    built with `options`."""

    def factory(params: list, x: lucid.Tensor, y: lucid.Tensor) -> tuple[Step, Step]:
        _, plain = workload()
        model, step = workload()
        detector = NaNDetector(model, **options).attach()

        def run() -> None:
            step()
            if detector.triggered:
                raise RuntimeError(f"the benchmark's healthy run was flagged:\n{detector.event}")

        return plain, run

    return factory


# (name, factory from (params, x, y) of the instrumented step, or of a (plain, instrumented)
# pair for variants with their own workload, budget or None).
VARIANTS: list[tuple[str, Callable[[list, lucid.Tensor, lucid.Tensor], Any], float | None]] = [
    ("(b) MLP step, GradNormGuard.check()/plain", _with_grad_norm_guard, 1.02),
    ("(b) MLP module step, NaNDetector/plain", _with_nan_detector(_mlp_module_step), 1.05),
    ("(c) CNN step, NaNDetector/plain", _with_nan_detector(_cnn_step), 1.05),
    ("(d) transformer block, NaNDetector/plain", _with_nan_detector(_block_step), 1.05),
]

# check_backward off and on (--check-backward): the measurement behind its default.
CHECK_BACKWARD_VARIANTS = [
    (f"({label}) {name}, check_backward={flag}/plain",
     _with_nan_detector(workload, check_backward=flag), 1.05)
    for label, name, workload in (("b", "MLP", _mlp_module_step), ("c", "CNN", _cnn_step),
                                  ("d", "block", _block_step))
    for flag in (False, True)
]  # fmt: skip


def time_everything(rounds: int, variants: list = VARIANTS) -> dict[str, float]:
    ratios: dict[str, float] = {}
    for name, factory, budget in variants:
        # A fresh model per variant, so no variant trains on another's updated weights.
        (params, x, y), _ = make_mlp(0)
        built = factory(params, x, y)
        plain, instrumented = built if isinstance(built, tuple) else (_plain(params, x, y), built)
        ratios[name] = paired_ratio(name, plain, instrumented, rounds, inner=5, budget=budget)
    return ratios


def check_cost(repeats: int) -> float:
    """GradNormGuard.check() timed alone, as a fraction of the plain step it follows.

    Whole-step ratios on a shared machine swing by more than the 2% budget; the check's own
    time (best of `repeats` runs, against the median step) is the steadier measure.
    """
    (params, x, y), _ = make_mlp(0)
    lucid_mlp_step(params, x, y)
    guard = GradNormGuard(params)
    for _ in range(guard.warmup + 10):  # past warm-up, so the spike test runs as in training
        guard.check()
    check_seconds = min(timeit.repeat(guard.check, number=50, repeat=repeats)) / 50
    step_seconds = statistics.median(
        timeit.repeat(lambda: lucid_mlp_step(params, x, y), number=1, repeat=repeats)
    )
    fraction = check_seconds / step_seconds
    print(f"{'(b) GradNormGuard.check() alone / MLP step':<44} check {check_seconds * 1e6:8.1f} us"
          f"   step {step_seconds * 1e6:9.2f} us   cost {fraction * 100:.2f}%"
          f"   budget 2% {'ok' if fraction <= 0.02 else 'OVER'}")  # fmt: skip
    return fraction


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument(
        "--check-backward",
        action="store_true",
        help="only NaNDetector with check_backward off and on, (b), (c), (d)",
    )
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__}, numpy {np.__version__}, 2 threads, "
          f"median of {rounds} alternating rounds")  # fmt: skip
    if arguments.check_backward:
        time_everything(rounds, CHECK_BACKWARD_VARIANTS)
        return 0
    time_everything(rounds)
    check_cost(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
