"""Cost of lucid.debug.torch on real torch training steps, torch against torch in one run.

    python benchmarks/bench_debug_torch.py            # all measurements
    python benchmarks/bench_debug_torch.py --quick    # fewer rounds

Workloads (2 threads): the MLP 784-512-512-10 b128 with SGD (and, for watch(), at b512 too:
its cost is fixed per step, so the ratio falls as the step grows), and a
TransformerEncoderLayer(256, 4, 1024) block b16x64 with AdamW. Each row times the plain step
and the same step with one tool, in alternating rounds (bench_anomaly.paired_ratio: the
median of per-round ratios). Budgets (issue 26): watch() armed <= 1.05x (met from a step of
about 4 ms: docs/design.md, "watch()'s cost"); one step under the exact instrument (a replay,
find_birth, detect_anomaly) <= 5x; torch's own detect_anomaly is shown beside it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from bench_anomaly import paired_ratio  # noqa: E402

import lucid.debug.torch as debug_torch  # noqa: E402
from lucid.debug.torch._instrument import Instrument  # noqa: E402

torch.set_num_threads(2)


def mlp_workload(batch: int = 128):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512),
        torch.nn.ReLU(),
        torch.nn.Linear(512, 512),
        torch.nn.ReLU(),
        torch.nn.Linear(512, 10),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(batch, 784), torch.randint(0, 10, (batch,))

    def step() -> None:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def block_workload():
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, dropout=0.0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 64, 256)

    def step() -> None:
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()

    return step


def _watch_row(name: str, workload, rounds: int, budget: float | None = 1.05) -> None:
    """watch() entered once, as a loop has it: the watched step runs first, so the watch
    settles on its model (it then hooks that model alone); the plain step beside it meets
    only the global optimizer hooks, which return at once for an optimizer not watched."""
    plain, watched = workload(), workload()
    with debug_torch.watch():
        for _ in range(3):
            watched()
        paired_ratio(f"{name}: watch() armed", plain, watched, rounds, 10, budget=budget)


def _under_instrument(step):
    def run() -> None:
        Instrument(stop_on_first=False).run(step)

    return run


def _under_torch_anomaly(step):
    def run() -> None:
        with torch.autograd.detect_anomaly():
            step()

    return run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    rounds = 5 if options.quick else 11
    import warnings

    warnings.simplefilter("ignore")
    # watch()'s cost is fixed per step (one read of every gradient, and the step's
    # bookkeeping), so its ratio falls as the step grows: the same MLP at four times the
    # batch shows it (docs/design.md, "watch()'s cost").
    _watch_row("mlp b512", lambda: mlp_workload(512), rounds, budget=None)
    for name, workload in (("mlp", mlp_workload), ("block", block_workload)):
        _watch_row(name, workload, rounds)
        plain = workload()
        paired_ratio(
            f"{name}: exact instrument (replay, find_birth)",
            plain,
            _under_instrument(workload()),
            rounds,
            3,
            budget=5.0,
        )
        paired_ratio(
            f"{name}: torch.autograd.detect_anomaly",
            plain,
            _under_torch_anomaly(workload()),
            rounds,
            3,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
