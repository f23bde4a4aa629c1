"""Cost of lucid.amp.GradScaler's bookkeeping against a float32 (b) MLP training step.

    python benchmarks/bench_grad_scaler.py            # all measurements
    python benchmarks/bench_grad_scaler.py --quick    # fewer repetitions

The workload is bench_core.py's (b), the MLP 784-512-512-10 on a batch of 128 (the same
weights and batch, built here so that this file needs neither torch nor the other
benchmarks), with SGD as an optimizer object (the scaler steps an optimizer). Two measurements:
- the whole step with the scaler (`scaler.scale(loss).backward()`, `scaler.step`,
  `scaler.update()`) against the same step without it, timed in alternating rounds (the
  median of the rounds' ratios, as bench_anomaly.py's paired_ratio): what using it costs;
- the bookkeeping alone (scale, unscale_ with its inf check, the skip decision and update)
  on the gradients of one step, timed per call, as a fraction of the plain step (the fastest
  of many single runs of each).
Budget (issue 18): the bookkeeping alone <= 2% of the float32 (b) step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# Two BLAS threads, as in bench_core; set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import lucid  # noqa: E402
from lucid.amp import GradScaler  # noqa: E402


def make_mlp(seed: int):
    """bench_core.py's (b) parameters and batch, as lucid tensors."""
    rng = np.random.default_rng(seed)
    arrays = []
    for fan_in, fan_out in [(784, 512), (512, 512), (512, 10)]:
        bound = 1 / np.sqrt(fan_in)
        arrays.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        arrays.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    params = [lucid.tensor(a, requires_grad=True) for a in arrays]
    return params, lucid.tensor(x), lucid.tensor(y)


def _timed(step, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        step()
    return time.perf_counter() - start


def paired_ratio(name: str, plain, instrumented, rounds: int, inner: int) -> float:
    """Median over rounds of (instrumented time / plain time), timed back to back in
    alternating order, so drift in the machine's speed cancels out of each round's ratio."""
    for _ in range(max(5, inner)):
        plain()
        instrumented()
    ratios, plain_times, instrumented_times = [], [], []
    for round_index in range(rounds):
        if round_index % 2 == 0:
            off, on = _timed(plain, inner), _timed(instrumented, inner)
        else:
            on, off = _timed(instrumented, inner), _timed(plain, inner)
        plain_times.append(off / inner)
        instrumented_times.append(on / inner)
        ratios.append(on / off)
    ratios.sort()
    ratio = statistics.median(ratios)
    print(f"{name:<44} off {statistics.median(plain_times) * 1e6:9.1f} us   on "
          f"{statistics.median(instrumented_times) * 1e6:9.1f} us   ratio {ratio:5.3f}x "
          f"(rounds {ratios[0]:.3f}-{ratios[-1]:.3f})")  # fmt: skip
    return ratio


def _loss(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    h = lucid.addmm(b1, x, w1.t()).relu()
    h = lucid.addmm(b2, h, w2.t()).relu()
    logits = lucid.addmm(b3, h, w3.t())
    return -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()


def _plain_step(params, x, y):
    optimizer = lucid.optim.SGD(params, lr=0.01)

    def run() -> None:
        optimizer.zero_grad()
        _loss(params, x, y).backward()
        optimizer.step()

    return run


def _scaled_step(params, x, y):
    optimizer = lucid.optim.SGD(params, lr=0.01)
    scaler = GradScaler()

    def run() -> None:
        optimizer.zero_grad()
        scaler.scale(_loss(params, x, y)).backward()
        scaler.step(optimizer)
        scaler.update()
        if scaler.last_skip is not None:
            raise RuntimeError(f"the benchmark's healthy run skipped a step:\n{scaler.last_skip}")

    return run


class _NoStep:
    """The optimizer's parameter groups with a step that does nothing: times the scaler only."""

    def __init__(self, optimizer: lucid.optim.Optimizer) -> None:
        self.param_groups = optimizer.param_groups

    def step(self) -> None:
        pass


def bookkeeping_fraction(params, x, y, repeats: int) -> tuple[float, float]:
    """(seconds of the scaler's bookkeeping per step, seconds of a plain step)."""
    plain = _plain_step(params, x, y)
    for _ in range(5):
        plain()
    step_times = []
    for _ in range(repeats):
        start = time.perf_counter()
        plain()
        step_times.append(time.perf_counter() - start)
    optimizer = _NoStep(lucid.optim.SGD(params, lr=0.01))
    loss = _loss(params, x, y)
    loss.backward()
    grads = [p.grad.clone() for p in params]
    scaler = GradScaler(init_scale=2.0**16)
    times = []
    for _ in range(repeats + 5):
        with lucid.no_grad():
            for p, grad in zip(params, grads, strict=True):
                p.grad.copy_(grad)  # the gradients of one step, as a scaled backward left them
        start = time.perf_counter()
        scaler.scale(loss)
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        times.append(time.perf_counter() - start)
    # The minimum of many single timings: on a shared machine a run is slowed by others' work
    # and never sped up, so the fastest run is the cleanest view of both.
    return min(times[5:]), min(step_times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    params, x, y = make_mlp(0)
    paired_ratio("(b) MLP step, with GradScaler/plain", _plain_step(params, x, y),
                 _scaled_step(params, x, y), rounds, 10)  # fmt: skip
    bookkeeping, step = bookkeeping_fraction(params, x, y, 20 if arguments.quick else 100)
    fraction = bookkeeping / step
    verdict = "ok" if fraction <= 0.02 else "OVER"
    print(f"{'(b) GradScaler bookkeeping alone / MLP step':<44} bookkeeping "
          f"{bookkeeping * 1e6:8.1f} us   step {step * 1e6:9.1f} us   "
          f"{100 * fraction:5.2f}%   budget 2% {verdict}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
