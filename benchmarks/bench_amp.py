"""Autocast budgets: a train step under bfloat16 autocast against the float32 step, for lucid
and for PyTorch, all in one run (2 threads each).

    python benchmarks/bench_amp.py            # (b) and (d)
    python benchmarks/bench_amp.py --quick    # fewer rounds

(b) the MLP 784-512-512-10 train step of bench_core.py (linear layers, cross-entropy, an SGD
    optimizer's step);
(d) the transformer-block forward + backward of bench_models.py, and an SGD step.
Under autocast the forward (and the loss) runs in `autocast("cpu", dtype=bfloat16)`, with a
GradScaler around backward and the update where lucid has one (lucid.amp.GradScaler). Each
round times the four steps back to back; the report is each library's bfloat16 / float32
ratio of medians (lucid's budget: <= 1.3x), and lucid's ratios to PyTorch beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_core import _round, make_mlp  # noqa: E402
from bench_models import block, copy_weights  # noqa: E402

import lucid  # noqa: E402
import lucid.amp  # noqa: E402
import lucid.nn  # noqa: E402

torch.set_num_threads(2)
HAS_SCALER = hasattr(lucid.amp, "GradScaler")


def _scaler(lib, enabled: bool):
    # the float32 steps, and both libraries' steps while lucid has no GradScaler, run without
    if not enabled or not HAS_SCALER:
        return None
    return lib.amp.GradScaler("cpu")


def _backward_and_update(loss, optimizer, scaler) -> None:
    if scaler is None:
        loss.backward()
        optimizer.step()
        return
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def mlp_step(lib, params, optimizer, x, y, autocast: bool, scaler) -> None:
    """bench_core's MLP step, written once for both libraries, with an SGD optimizer."""
    w1, b1, w2, b2, w3, b3 = params
    functional = lib.nn.functional
    optimizer.zero_grad()
    with lib.autocast("cpu", dtype=lib.bfloat16, enabled=autocast):
        h = functional.linear(x, w1, b1).relu()
        h = functional.linear(h, w2, b2).relu()
        loss = functional.cross_entropy(functional.linear(h, w3, b3), y)
    _backward_and_update(loss, optimizer, scaler)


def block_step(lib, model, optimizer, x, mask, autocast: bool, scaler) -> None:
    optimizer.zero_grad()
    x.grad = None
    with lib.autocast("cpu", dtype=lib.bfloat16, enabled=autocast):
        loss = model(x, src_mask=mask, is_causal=True).float().sum()
    _backward_and_update(loss, optimizer, scaler)


def make_mlp_runs() -> dict:
    (lucid_params, lx, ly), (torch_params, tx, ty) = make_mlp(0)
    runs = {}
    for lib, params, x, y in ((lucid, lucid_params, lx, ly), (torch, torch_params, tx, ty)):
        optimizer = lib.optim.SGD(params, lr=0.01)
        for autocast in (False, True):
            arguments = (lib, params, optimizer, x, y, autocast, _scaler(lib, autocast))
            runs[lib.__name__, autocast] = (mlp_step, arguments)
    return runs


def make_block_runs() -> dict:
    torch.manual_seed(0)
    models = {torch: block(torch, "relu"), lucid: block(lucid, "relu")}
    copy_weights(models[torch], models[lucid])
    x = np.random.default_rng(0).standard_normal((16, 64, 128)).astype(np.float32)
    mask = np.triu(np.full((64, 64), -np.inf, dtype=np.float32), 1)
    runs = {}
    for lib, model in models.items():
        # lr 0: the step's cost without the weights drifting between rounds
        optimizer = lib.optim.SGD(model.parameters(), lr=0.0)
        inputs = lib.tensor(x, requires_grad=True)
        for autocast in (False, True):
            arguments = (
                lib, model, optimizer, inputs, lib.tensor(mask), autocast,
                _scaler(lib, autocast),
            )  # fmt: skip
            runs[lib.__name__, autocast] = (block_step, arguments)
    return runs


def measure(name: str, runs: dict, rounds: int, inner: int) -> None:
    for step, args in runs.values():  # warm-up
        step(*args)
        step(*args)
    times: dict = {key: [] for key in runs}
    for _ in range(rounds):
        for key, (step, args) in runs.items():
            times[key].append(_round(step, args, inner))
    median = {key: statistics.median(values) for key, values in times.items()}
    lucid_ratio = median["lucid", True] / median["lucid", False]
    torch_ratio = median["torch", True] / median["torch", False]
    print(f"{name}")
    print(f"  float32   lucid {median['lucid', False] * 1e3:8.2f} ms   torch "
          f"{median['torch', False] * 1e3:8.2f} ms   lucid/torch "
          f"{median['lucid', False] / median['torch', False]:5.2f}x")  # fmt: skip
    print(f"  bfloat16  lucid {median['lucid', True] * 1e3:8.2f} ms   torch "
          f"{median['torch', True] * 1e3:8.2f} ms   lucid/torch "
          f"{median['lucid', True] / median['torch', True]:5.2f}x")  # fmt: skip
    print(f"  bfloat16 / float32: lucid {lucid_ratio:5.2f}x (budget 1.30x), torch "
          f"{torch_ratio:5.2f}x")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 11
    scaler = "with GradScaler" if HAS_SCALER else "without GradScaler (lucid has none yet)"
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds, autocast steps {scaler}")  # fmt: skip
    measure("(b) MLP 784-512-512-10 b128, train step", make_mlp_runs(), rounds, inner=5)
    measure("(d) transformer block, fwd+bwd", make_block_runs(), rounds, inner=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
