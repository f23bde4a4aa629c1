"""In-process A/B of lucid against an earlier commit of itself (2 BLAS threads).

    python benchmarks/ab_lucid.py --baseline HEAD~3        # (a)-(i), sentinel, anomaly mode
    python benchmarks/ab_lucid.py --baseline main --quick  # fewer rounds
    python benchmarks/ab_lucid.py --baseline HEAD --only f,g,h,i  # single ops (f)-(i)

The baseline commit's `lucid/` is exported with `git archive` and loaded beside the working
tree's under the name `lucid_baseline` (its imports rewritten), so both run in one process
on the same machine state. Each round times a step of one, then the other, in alternating
order; the report is the median of the per-round ratios (new / baseline) and their spread
(25th-75th percentile), since drift on a shared machine exceeds the effects measured here.
Import time and the number of lucid modules `import lucid` loads are measured in fresh
interpreters, with bytecode cached.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")

import warnings  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_core  # noqa: E402
import bench_models  # noqa: E402

REPOSITORY = Path(__file__).resolve().parent.parent
BASELINE_NAME = "lucid_baseline"


def export_baseline(revision: str, directory: Path) -> Path:
    """Write the revision's lucid/ as `lucid_baseline/` in directory, imports renamed."""
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", "--format=tar", revision, "lucid"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(directory, filter="data")
    target = directory / BASELINE_NAME
    (directory / "lucid").rename(target)
    for path in target.rglob("*.py"):
        # Every reference to the package as a name: imports, `lucid.x` uses, module paths.
        text = re.sub(r"(?<![\w.])lucid(?!\w)", BASELINE_NAME, path.read_text())
        path.write_text(text)
    return directory


def load_both(revision: str, directory: Path):
    sys.path.insert(0, str(export_baseline(revision, directory)))
    sys.path.insert(0, str(REPOSITORY))
    baseline = importlib.import_module(BASELINE_NAME)
    importlib.import_module(f"{BASELINE_NAME}.nn")
    importlib.import_module(f"{BASELINE_NAME}.optim")
    new = importlib.import_module("lucid")
    importlib.import_module("lucid.nn")
    importlib.import_module("lucid.optim")
    assert Path(new.__file__).resolve().parent == REPOSITORY / "lucid", new.__file__
    return baseline, new


# ---------------------------------------------------------------------------- workloads
# The steps of bench_core.py and bench_models.py, built for one lucid or the other.
def chain(lib, seed):
    data = np.random.default_rng(seed).standard_normal(16).astype(np.float32)
    x = lib.tensor(data, requires_grad=True)
    return lambda: bench_core.chain_step(lib, x)


def mlp(lib, seed):
    (params, x, y), _ = bench_core.make_mlp(seed)
    arguments = ([lib.tensor(p.detach().numpy(), requires_grad=True) for p in params],
                 lib.tensor(x.numpy()), lib.tensor(y.numpy()))  # fmt: skip
    return lambda: bench_core.lucid_mlp_step(*arguments, lib=lib)


def cnn(lib, seed):
    lib.manual_seed(seed)
    model = bench_models.cnn(lib)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 64))
    return lambda: bench_models.cnn_step(lib, model, optimizer, x, y)


def block(lib, seed):
    lib.manual_seed(seed)
    model = bench_models.block(lib, "relu")
    data = np.random.default_rng(seed).standard_normal((16, 64, 128)).astype(np.float32)
    x = lib.tensor(data, requires_grad=True)
    mask = lib.tensor(np.triu(np.full((64, 64), -np.inf, dtype=np.float32), 1))
    return lambda: bench_models.block_step(lib, model, x, mask)


def lstm(lib, seed):
    lib.manual_seed(seed)
    model = lib.nn.LSTM(256, 256, num_layers=2)
    data = np.random.default_rng(seed).standard_normal((64, 32, 256)).astype(np.float32)
    x = lib.tensor(data, requires_grad=True)
    return lambda: bench_models.lstm_step(lib, model, x)


# Single ops, forward and backward, on the shapes of the transformer block.
def _op_step(lib, seed, shape, forward):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    grad = lib.tensor(rng.standard_normal(shape).astype(np.float32))

    def step():
        x.grad = None
        forward(x).backward(grad)

    return step


def layer_norm(lib, seed):
    rng = np.random.default_rng(seed + 1)
    weight, bias = (lib.tensor(rng.standard_normal(128).astype(np.float32), requires_grad=True)
                    for _ in range(2))  # fmt: skip
    return _op_step(lib, seed, (16, 64, 128),
                    lambda x: lib.nn.functional.layer_norm(x, (128,), weight, bias))  # fmt: skip


def softmax(lib, seed):
    return _op_step(lib, seed, (16, 4, 64, 64), lambda x: lib.softmax(x, -1))


def log_softmax(lib, seed):
    return _op_step(lib, seed, (16, 4, 64, 64), lambda x: lib.log_softmax(x, -1))


def gelu(lib, seed):
    return _op_step(lib, seed, (16, 64, 512), lib.nn.functional.gelu)


WORKLOADS = {"(a) chain": (chain, 40), "(b) mlp": (mlp, 10), "(c) cnn": (cnn, 3),
             "(d) block": (block, 3), "(e) lstm": (lstm, 2), "(f) layer_norm": (layer_norm, 20),
             "(g) softmax": (softmax, 10), "(h) log_softmax": (log_softmax, 10),
             "(i) gelu": (gelu, 3)}  # fmt: skip


def under(lib, mode: str, step):
    """The step with the sentinel off, as it is (on), or in detect_anomaly()."""
    if mode == "sentinel off":

        def wrapped():
            was = lib.autograd.is_sentinel_enabled()
            lib.autograd.set_sentinel(False)
            try:
                step()
            finally:
                lib.autograd.set_sentinel(was)

        return wrapped
    if mode == "detect_anomaly":
        warnings.filterwarnings("ignore", "Anomaly Detection has been enabled")

        def wrapped():
            with lib.autograd.detect_anomaly():
                step()

        return wrapped
    return step


# ---------------------------------------------------------------------------- timing
def _time(step, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        step()
    return (time.perf_counter() - start) / inner


def paired_ratios(new_step, baseline_step, rounds: int, inner: int) -> list[float]:
    for _ in range(2):
        new_step()
        baseline_step()
    ratios = []
    for index in range(rounds):
        if index % 2:
            base = _time(baseline_step, inner)
            new = _time(new_step, inner)
        else:
            new = _time(new_step, inner)
            base = _time(baseline_step, inner)
        ratios.append(new / base)
    return ratios


def summary(ratios: list[float]) -> str:
    quartiles = statistics.quantiles(ratios, n=4)
    return (f"{statistics.median(ratios):6.3f}x  (25-75%: {quartiles[0]:.3f}-{quartiles[2]:.3f},"
            f" {len(ratios)} rounds)")  # fmt: skip


def import_cost(python_path: str, module: str, runs: int) -> tuple[float, int]:
    code = (
        "import sys, time; start = time.perf_counter(); "
        f"import {module}; elapsed = time.perf_counter() - start; "
        f"print(elapsed, len([m for m in sys.modules if m.split('.')[0] == '{module}']))"
    )
    environment = dict(os.environ, PYTHONPATH=python_path)
    times, count = [], 0
    for _ in range(runs + 1):  # the first run writes the bytecode cache
        out = subprocess.run([sys.executable, "-c", code], env=environment, check=True,
                             capture_output=True, text=True).stdout.split()  # fmt: skip
        times.append(float(out[0]))
        count = int(out[1])
    return statistics.median(times[1:]), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare against")
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default="", help="comma-separated workload letters, e.g. a,b")
    parser.add_argument(
        "--modes",
        default="sentinel on",
        help="comma-separated: 'sentinel on', 'sentinel off', 'detect_anomaly'",
    )
    args = parser.parse_args()
    rounds = 9 if args.quick else 21
    with tempfile.TemporaryDirectory() as directory:
        baseline, new = load_both(args.baseline, Path(directory))
        print(f"new: {REPOSITORY} (working tree)   baseline: {args.baseline}")
        for name, (build, inner) in WORKLOADS.items():
            if args.only and name[1] not in args.only.split(","):
                continue
            for mode in args.modes.split(","):
                new_step = under(new, mode, build(new, 0))
                baseline_step = under(baseline, mode, build(baseline, 0))
                ratios = paired_ratios(new_step, baseline_step, rounds, inner)
                print(f"{name:<15} {mode:<15} new/baseline {summary(ratios)}", flush=True)
        runs = 5 if args.quick else 11
        for label, path, module in (("new", str(REPOSITORY), "lucid"),
                                    ("baseline", directory, BASELINE_NAME)):  # fmt: skip
            seconds, count = import_cost(path, module, runs)
            print(f"import {label:<9} {seconds * 1e3:7.1f} ms  {count} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
