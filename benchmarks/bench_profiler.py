"""Cost of lucid's autograd profiler against the plain step, with PyTorch's beside it.

    python benchmarks/bench_profiler.py            # all measurements
    python benchmarks/bench_profiler.py --quick    # fewer repetitions

Workloads are those of bench_core.py: (a) the 100-op elementwise chain, forward + backward,
reported per op, and (b) the MLP 784-512-512-10 training step. Every run of an instrumented
step enters a fresh profile around it (a profile is not reentrant) and leaves its events
unread, so the ratios are the cost of recording; building tables is not timed. paired_ratio
(from bench_anomaly.py) alternates plain and instrumented rounds; the ratio is the median of
the rounds' ratios.
Budgets (issue 6): profile(enabled=False)/plain <= 1.01x and profile()/plain <= 1.5x on the
MLP. (With no profile at all, Function.apply pays one falsy check of a local; that check
cannot be switched off in one process, so it is measured by timing `a + b` on a checkout
before and after it.)
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
import torch  # noqa: E402
from bench_anomaly import paired_ratio  # noqa: E402
from bench_core import (  # noqa: E402
    CHAIN_LENGTH,
    chain_step,
    lucid_mlp_step,
    make_chain_inputs,
    make_mlp,
    torch_mlp_step,
)

import lucid  # noqa: E402
from lucid.autograd.profiler import profile  # noqa: E402

Step = Callable[[], object]


def _plain(step: Callable[..., object], *args: object) -> Step:
    def run() -> None:
        step(*args)

    return run


def _profiled(make_profile: Callable[[], object], step: Callable[..., object], *args) -> Step:
    """The step inside a profile made fresh for each run, as `with profile() as prof:` is."""

    def run() -> None:
        with make_profile():
            step(*args)

    return run


# (name, workload, profile factory, budget or None); workloads are built per variant.
VARIANTS: list[tuple[str, str, Callable[[], object], float | None]] = [
    ("(b) MLP step, profile(enabled=False)/plain", "mlp", lambda: profile(enabled=False), 1.01),
    ("(b) MLP step, profile()/plain", "mlp", profile, 1.5),
    ("(b) MLP step, profile(record_shapes=True)/plain", "mlp",
     lambda: profile(record_shapes=True), None),
    ("(b) MLP step, profile(profile_memory=True)/plain", "mlp",
     lambda: profile(profile_memory=True), None),
    ("(a) chain, per op, profile(enabled=False)/plain", "chain",
     lambda: profile(enabled=False), None),
    ("(a) chain, per op, profile()/plain", "chain", profile, None),
]  # fmt: skip

TORCH_VARIANTS: list[tuple[str, str, Callable[[], object]]] = [
    ("(b) MLP step, torch profile()/plain", "mlp", torch.autograd.profiler.profile),
    ("(a) chain, per op, torch profile()/plain", "chain", torch.autograd.profiler.profile),
]


def _workload(kind: str, library: object) -> tuple[Callable[..., object], tuple, dict]:
    """(step, its arguments, paired_ratio's keyword arguments) for a fresh workload."""
    if kind == "mlp":
        lucid_mlp, torch_mlp = make_mlp(0)
        if library is lucid:
            return lucid_mlp_step, lucid_mlp, {"inner": 5}
        return torch_mlp_step, torch_mlp, {"inner": 5}
    lucid_x, torch_x = make_chain_inputs(0)
    x = lucid_x if library is lucid else torch_x
    return chain_step, (library, x), {"inner": 20, "per": CHAIN_LENGTH}


def time_everything(rounds: int) -> dict[str, float]:
    ratios: dict[str, float] = {}
    print("-- lucid: profiler vs plain")
    for name, kind, make_profile, budget in VARIANTS:
        step, args, options = _workload(kind, lucid)
        ratios[name] = paired_ratio(
            name,
            _plain(step, *args),
            _profiled(make_profile, step, *args),
            rounds,
            budget=budget,
            **options,
        )
    print("-- for comparison: PyTorch's autograd profiler vs plain")
    for name, kind, make_profile in TORCH_VARIANTS:
        step, args, options = _workload(kind, torch)
        ratios[name] = paired_ratio(
            name, _plain(step, *args), _profiled(make_profile, step, *args), rounds, **options
        )
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} alternating rounds")  # fmt: skip
    time_everything(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
