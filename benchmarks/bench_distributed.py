"""Data-parallel training steps on 1 and 2 processes at the same global batch.

    python benchmarks/bench_distributed.py            # launches itself with mpiexec
    python benchmarks/bench_distributed.py --quick    # fewer steps

(b) mlp: 784-512-512-10 (as bench_core's), global batch 128, ReLU, cross-entropy, SGD step.
(d) transformer block: bench_models' pre-norm TransformerEncoderLayer (d_model 128, 4 heads,
    MLP 512, causal), global batch 16 x 64 tokens, forward + backward (its loss, the sum of
    the outputs, is unbounded below: as in bench_models, no update).
Each process runs its shard (global batch / processes) under DistributedDataParallel, one
BLAS thread per process. Reported per step (medians over steps): the step time, the time
blocked waiting for the gradient all-reduces at the end of backward, the all-reduce time when
nothing overlaps it (the same buckets all-reduced back to back, blocking), the fraction of
that hidden behind backward, and the cost of the NaN agreement (flag slots and the gradient
finiteness pass) as a fraction of the step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# One BLAS thread per process: the processes share the cores.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402

import lucid  # noqa: E402
from lucid import nn  # noqa: E402


def make_mlp(rank: int, world: int):
    lucid.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )  # fmt: skip
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    shard = slice(rank * 128 // world, (rank + 1) * 128 // world)
    inputs = (lucid.tensor(x[shard]),)

    def loss(output):
        return nn.functional.cross_entropy(output, lucid.tensor(y[shard]))

    return model, inputs, loss


def make_block(rank: int, world: int):
    from bench_models import block

    lucid.manual_seed(0)
    model = block(lucid, "relu")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64, 128)).astype(np.float32)
    mask = np.triu(np.full((64, 64), -np.inf, dtype=np.float32), 1)
    shard = slice(rank * 16 // world, (rank + 1) * 16 // world)
    mask_tensor = lucid.tensor(mask)

    class Causal(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = model

        def forward(self, x):
            return self.layer(x, src_mask=mask_tensor, is_causal=True)

    return Causal(), (lucid.tensor(x[shard]),), lambda output: output.sum()


# name: (builder, whether the step updates the parameters)
WORKLOADS = {"(b) mlp": (make_mlp, True), "(d) transformer block": (make_block, False)}


def worker(steps: int) -> None:
    import lucid.distributed as dist

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    results = {}
    for name, (make, updates) in WORKLOADS.items():
        model, inputs, loss_fn = make(rank, world)
        ddp = nn.parallel.DistributedDataParallel(model)
        optimizer = lucid.optim.SGD(model.parameters(), lr=1e-3)
        step_times, waits, agreements = [], [], []
        for step in range(steps + 2):
            dist.barrier()
            wait, agreement = ddp._wait_seconds, ddp._agreement_seconds
            start = time.perf_counter()
            optimizer.zero_grad()
            loss_fn(ddp(*inputs)).backward()
            if updates:
                optimizer.step()
            elapsed = time.perf_counter() - start
            if step >= 2:  # the first steps warm caches and the allocator
                step_times.append(elapsed)
                waits.append(ddp._wait_seconds - wait)
                agreements.append(ddp._agreement_seconds - agreement)
        # The same all-reduces with nothing to overlap them: blocking, back to back.
        blocking = []
        for _ in range(steps):
            dist.barrier()
            start = time.perf_counter()
            for bucket in ddp._buckets:
                dist.all_reduce(bucket.tensor)
            blocking.append(time.perf_counter() - start)
        results[name] = {
            "step": statistics.median(step_times),
            "wait": statistics.median(waits),
            "allreduce": statistics.median(blocking) if world > 1 else 0.0,
            "agreement": statistics.median(agreements),
            "buckets": len(ddp._buckets),
        }
    if rank == 0:
        print("RESULT " + json.dumps(results), flush=True)
    dist.destroy_process_group()


def launch(processes: int, steps: int) -> dict:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    command = [str(mpiexec) if mpiexec.exists() else "mpiexec", "-n", str(processes),
               sys.executable, __file__, "--worker", "--steps", str(steps)]  # fmt: skip
    environment = dict(os.environ, PYTHONPATH=str(HERE.parent))
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=900, env=environment, check=True
    )
    for line in completed.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(completed.stdout + completed.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    steps = options.steps or (8 if options.quick else 30)
    if options.worker:
        worker(steps)
        return 0
    one, two = launch(1, steps), launch(2, steps)
    print(f"{'workload':<24}{'1 proc step':>13}{'2 proc step':>13}{'speed-up':>10}"
          f"{'comm wait':>11}{'all-reduce':>12}{'hidden':>8}{'NaN agreement':>15}")  # fmt: skip
    for name in WORKLOADS:
        single, double = one[name], two[name]
        hidden = 1 - double["wait"] / double["allreduce"] if double["allreduce"] else 0.0
        print(
            f"{name:<24}{single['step'] * 1e3:>10.2f} ms{double['step'] * 1e3:>10.2f} ms"
            f"{single['step'] / double['step']:>9.2f}x{double['wait'] * 1e3:>8.2f} ms"
            f"{double['allreduce'] * 1e3:>9.2f} ms{max(hidden, 0.0):>7.0%}"
            f"{double['agreement'] / double['step']:>14.3%}"
        )
    print("comm wait: blocked at the end of backward for the all-reduces (2 processes, "
          "includes waiting for the slower rank); all-reduce: the same buckets all-reduced "
          "blocking, with nothing to overlap; hidden = 1 - wait / all-reduce; NaN agreement: "
          "the agreement's own work per step, as a fraction of the 2-process step.")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
