"""Side-by-side timings of lucid and PyTorch on the index and scatter ops (2 threads each).

    python benchmarks/bench_indexing.py            # all workloads
    python benchmarks/bench_indexing.py --quick    # fewer repetitions

Every workload moves 1e6 float32 values to random positions (repeats included):
(a) index_add_ into a vector of 1e6 (the budget: at most 2x PyTorch), (b) index_add_ of rows,
(c) scatter_add_ and (d) scatter_reduce amax on a 1000 x 1000 matrix, (e) index_put_ with
accumulate, (f) put_ with accumulate, (g) index_add forward + backward with respect to self
and source. Rounds alternate the two libraries, and the medians over rounds are compared.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import lucid  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import compare  # noqa: E402

torch.set_num_threads(2)

SIZE = 1_000_000


def _both(array: np.ndarray) -> tuple:
    return lucid.from_numpy(array.copy()), torch.from_numpy(array.copy())


def make_workloads(seed: int) -> dict:
    """name -> (step, lucid arguments, torch arguments); each step runs on either library."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(SIZE).astype(np.float32)
    positions = rng.integers(0, SIZE, SIZE)
    rows = rng.integers(0, 10_000, 10_000)
    matrix_index = rng.integers(0, 1000, (1000, 1000))
    workloads = {}

    x, tx = _both(np.zeros(SIZE, np.float32))
    index, tindex = _both(positions)
    source, tsource = _both(values)
    workloads["(a) index_add_ 1e6 into a vector of 1e6"] = (
        lambda x, index, source: x.index_add_(0, index, source),
        (x, index, source),
        (tx, tindex, tsource),
    )

    x, tx = _both(np.zeros((10_000, 100), np.float32))
    index, tindex = _both(rows)
    source, tsource = _both(values.reshape(10_000, 100))
    workloads["(b) index_add_ of 1e4 rows of 100"] = (
        lambda x, index, source: x.index_add_(0, index, source),
        (x, index, source),
        (tx, tindex, tsource),
    )

    x, tx = _both(np.zeros((1000, 1000), np.float32))
    index, tindex = _both(matrix_index)
    source, tsource = _both(values.reshape(1000, 1000))
    workloads["(c) scatter_add_ 1000 x 1000, dim 0"] = (
        lambda x, index, source: x.scatter_add_(0, index, source),
        (x, index, source),
        (tx, tindex, tsource),
    )
    workloads["(d) scatter_reduce amax 1000 x 1000"] = (
        lambda x, index, source: x.scatter_reduce(0, index, source, "amax"),
        (x, index, source),
        (tx, tindex, tsource),
    )

    x, tx = _both(np.zeros(SIZE, np.float32))
    index, tindex = _both(positions)
    source, tsource = _both(values)
    workloads["(e) index_put_ accumulate 1e6"] = (
        lambda x, index, source: x.index_put_((index,), source, accumulate=True),
        (x, index, source),
        (tx, tindex, tsource),
    )
    workloads["(f) put_ accumulate 1e6"] = (
        lambda x, index, source: x.put_(index, source, accumulate=True),
        (x, index, source),
        (tx, tindex, tsource),
    )

    x, tx = _both(np.zeros(SIZE, np.float32))
    x.requires_grad_()
    tx.requires_grad_()
    source, tsource = _both(values)
    source.requires_grad_()
    tsource.requires_grad_()
    workloads["(g) index_add 1e6, fwd+bwd"] = (
        _index_add_step,
        (x, index, source),
        (tx, tindex, tsource),
    )
    return workloads


def _index_add_step(x, index, source):
    x.grad = source.grad = None
    x.index_add(0, index, source).sum().backward()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds")  # fmt: skip
    with_grad = "(g) index_add 1e6, fwd+bwd"
    for name, (step, lucid_args, torch_args) in make_workloads(0).items():
        if name == with_grad:
            compare(name, step, lucid_args, step, torch_args, rounds, inner=5)
            continue
        with lucid.no_grad(), torch.no_grad():
            compare(name, step, lucid_args, step, torch_args, rounds, inner=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
