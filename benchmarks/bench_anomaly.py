"""Cost of lucid's NaN/Inf detection against its own plain runs, with PyTorch's beside it.

    python benchmarks/bench_anomaly.py            # all measurements
    python benchmarks/bench_anomaly.py --quick    # fewer repetitions

Workloads are those of bench_core.py and bench_models.py: (a) the 100-op elementwise chain,
forward + backward, (b) the MLP 784-512-512-10 training step, (c) the CNN training step and
(d) the transformer block's forward + backward. Each round runs the plain and the instrumented
step back to back, alternating which goes first; the ratio is the median of the rounds' ratios,
so both sides of each ratio see the same machine state. Budgets (docs/numerics.md): sentinel on/off
<= 1.02x on (b), (c), (d) and <= 1.10x on (a); detect_anomaly()/off <= 1.3x on (b), (c), (d)
and <= 2x on (a); <= 1 KB of forward traceback per node under anomaly mode.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

# Both libraries get two BLAS/OpenMP threads, as in bench_core; set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_core import (  # noqa: E402
    CHAIN_LENGTH,
    chain_step,
    lucid_mlp_step,
    make_chain_inputs,
    make_mlp,
    torch_mlp_step,
)
from bench_models import block_step, cnn_step, make_block, make_cnn  # noqa: E402

import lucid  # noqa: E402
from lucid.autograd import detect_anomaly, set_sentinel  # noqa: E402

# Anomaly mode announces itself on every construction; the timings need no reminder.
warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")


def _timed(step: Callable[[], object], inner: int) -> float:
    # Collect first (untimed) so that a full collection of torch's and lucid's import-time
    # objects does not land inside one side's round; the collector stays on while timing.
    gc.collect()
    start = time.perf_counter()
    for _ in range(inner):
        step()
    return (time.perf_counter() - start) / inner


def paired_ratio(
    name: str,
    plain: Callable[[], object],
    instrumented: Callable[[], object],
    rounds: int,
    inner: int,
    per: int = 1,
    budget: float | None = None,
) -> float:
    """Median over rounds of (instrumented time / plain time), the two timed back to back in
    alternating order: each round's pair shares the machine's state of the moment, so drift in
    its speed (large on shared machines) cancels out of the ratio."""
    # Warm-up long enough that the first timed round does not pay for allocator and BLAS
    # thread start-up (a short one left the first MLP round 3x slow).
    for _ in range(max(5, inner)):
        plain()
        instrumented()
    plain_times, instrumented_times = [], []
    for round_index in range(rounds):
        if round_index % 2 == 0:
            plain_times.append(_timed(plain, inner))
            instrumented_times.append(_timed(instrumented, inner))
        else:
            instrumented_times.append(_timed(instrumented, inner))
            plain_times.append(_timed(plain, inner))
    plain_median = statistics.median(plain_times) / per
    instrumented_median = statistics.median(instrumented_times) / per
    # The spread of per-round ratios shows how much of a small difference is noise.
    round_ratios = sorted(on / off for on, off in zip(instrumented_times, plain_times))
    ratio = statistics.median(round_ratios)
    verdict = ""
    if budget is not None:
        verdict = f"   budget {budget:.2f}x {'ok' if ratio <= budget else 'OVER'}"
    print(f"{name:<44} off {plain_median * 1e6:9.2f} us   on {instrumented_median * 1e6:9.2f} us"
          f"   ratio {ratio:5.3f}x (rounds {round_ratios[0]:.2f}-{round_ratios[-1]:.2f})"
          f"{verdict}")  # fmt: skip
    return ratio


# ------------------------------------------------------------------- timing cases
def _with_sentinel(enabled: bool, step: Callable[..., object], *args: object):
    def run() -> None:
        set_sentinel(enabled)
        step(*args)

    return run


def _under(mode_factory: Callable[[], object], step: Callable[..., object], *args: object):
    """The step with a mode entered around it, as a decorated training step would be."""
    mode = mode_factory()

    def run() -> None:
        with mode:
            step(*args)

    return run


def _plain(step: Callable[..., object], *args: object):
    def run() -> None:
        step(*args)

    return run


def time_everything(rounds: int) -> dict[str, float]:
    ratios: dict[str, float] = {}
    lucid_x, torch_x = make_chain_inputs(0)
    lucid_mlp, torch_mlp = make_mlp(0)
    lucid_cnn = make_cnn(0)[0]
    lucid_block = make_block(0)[0]

    print("-- tier 0: sentinel on vs off (lucid)")
    ratios["sentinel mlp"] = paired_ratio(
        "(b) MLP step, sentinel on/off",
        _with_sentinel(False, lucid_mlp_step, *lucid_mlp),
        _with_sentinel(True, lucid_mlp_step, *lucid_mlp),
        rounds, inner=5, budget=1.02,
    )  # fmt: skip
    ratios["sentinel cnn"] = paired_ratio(
        "(c) CNN step, sentinel on/off",
        _with_sentinel(False, cnn_step, *lucid_cnn),
        _with_sentinel(True, cnn_step, *lucid_cnn),
        rounds, inner=2, budget=1.02,
    )  # fmt: skip
    ratios["sentinel block"] = paired_ratio(
        "(d) transformer block, sentinel on/off",
        _with_sentinel(False, block_step, *lucid_block),
        _with_sentinel(True, block_step, *lucid_block),
        rounds, inner=2, budget=1.02,
    )  # fmt: skip
    ratios["sentinel chain"] = paired_ratio(
        "(a) chain, per op, sentinel on/off",
        _with_sentinel(False, chain_step, lucid, lucid_x),
        _with_sentinel(True, chain_step, lucid, lucid_x),
        rounds, inner=20, per=CHAIN_LENGTH, budget=1.10,
    )  # fmt: skip
    set_sentinel(True)

    print("-- tier 2: detect_anomaly() vs off (lucid, sentinel on as by default)")
    ratios["lucid anomaly mlp"] = paired_ratio(
        "(b) MLP step, lucid detect_anomaly/off",
        _plain(lucid_mlp_step, *lucid_mlp),
        _under(detect_anomaly, lucid_mlp_step, *lucid_mlp),
        rounds, inner=5, budget=1.3,
    )  # fmt: skip
    ratios["lucid anomaly cnn"] = paired_ratio(
        "(c) CNN step, lucid detect_anomaly/off",
        _plain(cnn_step, *lucid_cnn),
        _under(detect_anomaly, cnn_step, *lucid_cnn),
        rounds, inner=2, budget=1.3,
    )  # fmt: skip
    ratios["lucid anomaly block"] = paired_ratio(
        "(d) transformer block, lucid detect_anomaly/off",
        _plain(block_step, *lucid_block),
        _under(detect_anomaly, block_step, *lucid_block),
        rounds, inner=2, budget=1.3,
    )  # fmt: skip
    ratios["lucid anomaly chain"] = paired_ratio(
        "(a) chain, per op, lucid detect_anomaly/off",
        _plain(chain_step, lucid, lucid_x),
        _under(detect_anomaly, chain_step, lucid, lucid_x),
        rounds, inner=20, per=CHAIN_LENGTH, budget=2.0,
    )  # fmt: skip

    print("-- for comparison: PyTorch's detect_anomaly() vs off")
    ratios["torch anomaly mlp"] = paired_ratio(
        "(b) MLP step, torch detect_anomaly/off",
        _plain(torch_mlp_step, *torch_mlp),
        _under(torch.autograd.detect_anomaly, torch_mlp_step, *torch_mlp),
        rounds, inner=5,
    )  # fmt: skip
    ratios["torch anomaly chain"] = paired_ratio(
        "(a) chain, per op, torch detect_anomaly/off",
        _plain(chain_step, torch, torch_x),
        _under(torch.autograd.detect_anomaly, chain_step, torch, torch_x),
        rounds, inner=20, per=CHAIN_LENGTH,
    )  # fmt: skip
    return ratios


# ------------------------------------------------------------------------ memory
_OWNED_TYPES = (tuple, list, dict, str, bytes, int, float)


def owned_bytes(value: object, seen: set[int] | None = None) -> int:
    """Bytes of the containers, strings and numbers a record owns; code objects, nodes and
    other shared objects are references only and are not counted."""
    seen = set() if seen is None else seen
    if id(value) in seen or value is None or not isinstance(value, _OWNED_TYPES):
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, tuple | list):
        size += sum(owned_bytes(item, seen) for item in value)
    elif isinstance(value, dict):
        size += sum(owned_bytes(k, seen) + owned_bytes(v, seen) for k, v in value.items())
    return size


def _nested(depth: int, build: Callable[[], object]) -> object:
    """Build the graph `depth` Python frames below here, as a model's forward would be.

    Two functions alternate so that no traceback formatter folds the frames as a recursion.
    """
    if depth == 0:
        return build()
    return _nested_other(depth - 1, build)


def _nested_other(depth: int, build: Callable[[], object]) -> object:
    if depth == 0:
        return build()
    return _nested(depth - 1, build)


def _lucid_chain_nodes(x: lucid.Tensor) -> list:
    y = x
    for _ in range(CHAIN_LENGTH // 4):
        y = (((y * 1.01) + 0.1).tanh()) * x
    nodes, stack, seen = [], [y.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or not hasattr(node, "anomaly_info"):
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(edge[0] for edge in node.next_functions)
    return [y, nodes]


def _torch_chain_nodes(x: torch.Tensor) -> list:
    y = x
    for _ in range(CHAIN_LENGTH // 4):
        y = (((y * 1.01) + 0.1).tanh()) * x
    nodes, stack, seen = [], [y.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(edge[0] for edge in node.next_functions)
    return [y, nodes]


def memory_per_node(extra_depth: int) -> tuple[float, float | None]:
    """Mean bytes of forward traceback kept per op node under anomaly mode."""
    lucid_x, torch_x = make_chain_inputs(0)
    with detect_anomaly():
        _, nodes = _nested(extra_depth, lambda: _lucid_chain_nodes(lucid_x))
    lucid_sizes = [owned_bytes(node.anomaly_info) for node in nodes if node.anomaly_info]
    lucid_bytes = statistics.mean(lucid_sizes) if lucid_sizes else float("nan")

    torch_bytes = None
    with torch.autograd.detect_anomaly():
        _, torch_nodes = _nested(extra_depth, lambda: _torch_chain_nodes(torch_x))
    sizes = []
    for node in torch_nodes:
        metadata = getattr(node, "metadata", None)
        if isinstance(metadata, dict) and "traceback_" in metadata:
            sizes.append(owned_bytes(metadata["traceback_"]))
    if sizes:
        torch_bytes = statistics.mean(sizes)
    return lucid_bytes, torch_bytes


def report_memory() -> None:
    print("-- forward traceback kept per node under anomaly mode (code objects not counted)")
    for extra_depth in (0, 20):
        lucid_bytes, torch_bytes = memory_per_node(extra_depth)
        torch_text = (
            f"torch {torch_bytes:8.0f} B" if torch_bytes is not None
            else "torch: not measurable (no traceback_ in node metadata)"
        )  # fmt: skip
        verdict = "ok" if lucid_bytes <= 1024 else "OVER"
        print(f"   stack +{extra_depth:<2} frames: lucid {lucid_bytes:8.0f} B   {torch_text}"
              f"   budget 1024 B {verdict}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} alternating rounds")  # fmt: skip
    time_everything(rounds)
    report_memory()
    return 0


if __name__ == "__main__":
    sys.exit(main())
