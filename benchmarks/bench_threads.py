"""lucid's steps with 1 and 2 BLAS threads, on an idle machine and with another process busy.

    python benchmarks/bench_threads.py            # all measurements
    python benchmarks/bench_threads.py --quick    # fewer rounds

What the default thread count is chosen by. Workloads, lucid alone (no torch in the process,
whose own thread pools would change what is measured): (a) the 100-op chain, forward +
backward; (b) the MLP 784-512-512-10 b128 SGD step; (c) the small CNN step, b64; (d) the
transformer block (d 128, 4 heads, MLP 512, causal) forward + backward. "busy" runs one
process spinning in pure Python beside the benchmark, as a second job on a shared machine
would. Each round times every thread count back to back; medians over rounds are reported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import threadpoolctl

import lucid

_SPIN = "while True:\n    pass\n"


def chain():
    x = lucid.tensor(np.random.default_rng(0).standard_normal(16).astype(np.float32),
                     requires_grad=True)  # fmt: skip

    def step() -> None:
        y = x
        for _ in range(25):
            y = (((y * 1.01) + 0.1).tanh()) * x
        y.sum().backward()
        x.grad = None

    return step


def mlp():
    lucid.manual_seed(0)
    nn = lucid.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))  # fmt: skip
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
    x, y = lucid.randn(128, 784), lucid.randint(0, 10, (128,))

    def step() -> None:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def cnn():
    lucid.manual_seed(0)
    nn = lucid.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1568, 10),
    )  # fmt: skip
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
    x, y = lucid.randn(64, 1, 28, 28), lucid.randint(0, 10, (64,))

    def step() -> None:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def block():
    lucid.manual_seed(0)
    model = lucid.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0,
                                             batch_first=True, norm_first=True)  # fmt: skip
    x = lucid.randn(16, 64, 128, requires_grad=True)
    mask = lucid.triu(lucid.full((64, 64), float("-inf")), 1)

    def step() -> None:
        model.zero_grad()
        x.grad = None
        model(x, src_mask=mask, is_causal=True).sum().backward()

    return step


WORKLOADS = {"(a) chain": (chain, 20), "(b) mlp": (mlp, 10), "(c) cnn": (cnn, 3),
             "(d) block": (block, 5)}  # fmt: skip


def _time(step, inner: int) -> float:
    step()
    start = time.perf_counter()
    for _ in range(inner):
        step()
    return (time.perf_counter() - start) / inner


def measure(rounds: int, thread_counts: tuple[int, ...]) -> dict[str, dict[int, float]]:
    steps = {name: (make(), inner) for name, (make, inner) in WORKLOADS.items()}
    times: dict[str, dict[int, list[float]]] = {
        name: {count: [] for count in thread_counts} for name in steps
    }
    for _ in range(rounds):
        for count in thread_counts:
            with threadpoolctl.threadpool_limits(count, user_api="blas"):
                for name, (step, inner) in steps.items():
                    times[name][count].append(_time(step, inner))
    return {name: {c: statistics.median(t) for c, t in by.items()} for name, by in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    rounds = 3 if options.quick else 7
    counts = tuple(sorted({1, 2, os.cpu_count() or 1}))
    print(f"{os.cpu_count()} cores; BLAS: {threadpoolctl.threadpool_info()[0]['internal_api']}")
    for load in ("idle", "busy"):
        spinner = None
        if load == "busy":
            spinner = subprocess.Popen([sys.executable, "-c", _SPIN])
        try:
            result = measure(rounds, counts)
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
        for name, by in result.items():
            cells = "  ".join(f"{c} thread{'s' * (c > 1)} {1e3 * t:8.2f} ms" for c, t in by.items())
            ratio = by[counts[-1]] / by[1]
            print(f"{load:4}  {name:10} {cells}   {counts[-1]}/1: {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
