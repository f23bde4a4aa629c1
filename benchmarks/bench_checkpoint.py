"""Memory and time of activation checkpointing (lucid.utils.checkpoint) on an 8-layer MLP.

    python benchmarks/bench_checkpoint.py            # all measurements
    python benchmarks/bench_checkpoint.py --quick    # fewer repetitions
    python benchmarks/bench_checkpoint.py --activation GELU --batch 2048

The workload is one forward and backward of eight Linear+activation layers (width 1024, by
default ReLU and batch 256, float32, a sum as the loss), run three ways: plainly, with each
layer checkpointed, and with checkpoint_sequential in 4 segments. Two measurements per way:
- the peak memory above the step's start, with the gradients already allocated by an earlier
  step, so that the peak is the activations the step holds, which is what checkpointing
  trades: lucid's by tracemalloc (NumPy reports its buffers to it), torch's from its
  profiler's memory events (each op's own allocations and the frees, summed in time order);
- the step's time, the median of alternating rounds against the plain step, torch's beside.
Budget: checkpointed peak <= 0.5x the plain peak, time <= 1.4x.

What checkpointing can save depends on the layer, in torch as in lucid: ReLU keeps its output,
which is the next Linear's saved input, so a plain Linear+ReLU stack already holds about one
activation per layer, as many as per-layer checkpointing keeps (torch measures 1.00x); GELU
keeps its input too, so there per-layer checkpointing halves what is held. At batch 256 the
weight gradients (4 MiB each, against 1 MiB activations) weigh on the peak either way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc

# Two BLAS threads, as in bench_core; set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")

import numpy as np  # noqa: E402

import lucid  # noqa: E402
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: E402

WIDTH, LAYERS, SEGMENTS = 1024, 8, 4


def make_model(library, activation: str):
    layers = []
    for _ in range(LAYERS):
        layers += [library.nn.Linear(WIDTH, WIDTH), getattr(library.nn, activation)()]
    return library.nn.Sequential(*layers)


def steps(library, model, x, checkpoint_fn, checkpoint_sequential_fn):
    """The three ways of running one step, by name."""
    blocks = [model[i : i + 2] for i in range(0, len(model), 2)]

    def plain():
        model(x).sum().backward()

    def each_layer():
        h = x
        for block in blocks:
            h = checkpoint_fn(block, h, use_reentrant=False)
        h.sum().backward()

    def sequential():
        checkpoint_sequential_fn(model, SEGMENTS, x, use_reentrant=False).sum().backward()

    return {"plain": plain, "each layer": each_layer, f"{SEGMENTS} segments": sequential}


def peak_bytes(step) -> int:
    step()  # the gradients exist before the measured step, as in training
    tracemalloc.start()
    tracemalloc.reset_peak()
    start, _ = tracemalloc.get_traced_memory()
    step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - start


def torch_peak_bytes(torch, step) -> int:
    """torch's peak above the step's start: its CPU allocator is invisible to tracemalloc,
    so the profiler's memory accounting is summed in time order instead."""
    step()
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as profiler:
        step()
    current = peak = 0
    for event in sorted(profiler.events(), key=lambda event: event.time_range.start):
        # an op's own allocations, and the frees the profiler records on their own
        current += (
            event.cpu_memory_usage if event.name == "[memory]" else event.self_cpu_memory_usage
        )
        peak = max(peak, current)
    return peak


def paired_ratio(plain, other, rounds: int) -> float:
    """Median over rounds of other's time / plain's, run back to back so drift cancels."""
    ratios = []
    for _ in range(rounds):
        start = time.perf_counter()
        plain()
        middle = time.perf_counter()
        other()
        ratios.append((time.perf_counter() - middle) / (middle - start))
    return statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--activation", default="ReLU", choices=["ReLU", "GELU", "Tanh"])
    parser.add_argument("--batch", type=int, default=256)
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15

    lucid.manual_seed(0)
    model = make_model(lucid, arguments.activation)
    shape = (arguments.batch, WIDTH)
    x = lucid.tensor(np.random.default_rng(0).standard_normal(shape, dtype=np.float32))
    lucid_steps = steps(lucid, model, x, checkpoint, checkpoint_sequential)

    torch_steps = None
    try:
        import torch
        from torch.utils.checkpoint import checkpoint as torch_checkpoint
        from torch.utils.checkpoint import checkpoint_sequential as torch_sequential

        torch.set_num_threads(2)
        torch_model = make_model(torch, arguments.activation)
        torch_x = torch.from_numpy(x.numpy())
        torch_steps = steps(torch, torch_model, torch_x, torch_checkpoint, torch_sequential)
    except ImportError:
        pass

    plain_peak = peak_bytes(lucid_steps["plain"])
    torch_plain_peak = (
        None if torch_steps is None else torch_peak_bytes(torch, torch_steps["plain"])
    )
    print(f"MLP {LAYERS}x({WIDTH}->{WIDTH}, {arguments.activation}), batch {arguments.batch}")
    print(f"{'way':<12} {'peak MiB':>9} {'x plain':>8} {'torch x':>8} "
          f"{'time x plain':>13} {'torch time x':>13}")  # fmt: skip
    for name, step in lucid_steps.items():
        peak = peak_bytes(step) if name != "plain" else plain_peak
        ratio = paired_ratio(lucid_steps["plain"], step, rounds)
        torch_ratio = torch_memory = "-"
        if torch_steps is not None:
            torch_steps[name]()
            torch_ratio = f"{paired_ratio(torch_steps['plain'], torch_steps[name], rounds):.2f}"
            torch_memory = f"{torch_peak_bytes(torch, torch_steps[name]) / torch_plain_peak:.2f}"
        print(
            f"{name:<12} {peak / 2**20:>9.1f} {peak / plain_peak:>8.2f} {torch_memory:>8} "
            f"{ratio:>13.2f} {torch_ratio:>13}"
        )


if __name__ == "__main__":
    main()
