"""Side-by-side timings of lucid and PyTorch on the selection ops (2 threads each).

    python benchmarks/bench_selection.py            # all workloads
    python benchmarks/bench_selection.py --quick    # fewer repetitions

Each workload runs on 1e6 float32 values (a flat vector, or 1000 x 1000 along the last dim);
the budget is unique and median at most 2x PyTorch. Rounds alternate the libraries and the
medians are compared, as in bench_core.py.
"""

from __future__ import annotations

import argparse
import os
import sys

# Both libraries get two BLAS/OpenMP threads; this must be set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_core import compare  # noqa: E402  (alternating rounds, medians)

import lucid  # noqa: E402

torch.set_num_threads(2)

SIZE = 1_000_000


def _workloads(rng: np.random.Generator) -> list[tuple[str, object, tuple]]:
    """(name, call taking the library first, input arrays) for each workload."""
    flat = rng.standard_normal(SIZE).astype(np.float32)
    square = flat.reshape(1000, 1000)
    repeated = rng.integers(0, 1000, SIZE).astype(np.float32)
    repeated_square = repeated.reshape(1000, 1000)
    counts = rng.integers(0, 1000, SIZE)
    boundaries = np.sort(rng.standard_normal(1000).astype(np.float32))
    return [
        ("unique, 1e6 float32", lambda lib, x: lib.unique(x), (flat,)),
        ("unique, 1e6 float32 with 1000 values", lambda lib, x: lib.unique(x), (repeated,)),
        (
            "unique + inverse + counts, 1e6 float32",
            lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True),
            (repeated,),
        ),
        ("median, 1e6 float32", lambda lib, x: lib.median(x), (flat,)),
        ("median dim=1, 1000 x 1000", lambda lib, x: lib.median(x, 1), (square,)),
        ("nanmedian dim=1, 1000 x 1000", lambda lib, x: lib.nanmedian(x, 1), (square,)),
        (
            "kthvalue k=100 dim=1, 1000 x 1000",
            lambda lib, x: lib.kthvalue(x, 100, 1),
            (square,),
        ),
        ("mode dim=1, 1000 x 1000", lambda lib, x: lib.mode(x, 1), (repeated_square,)),
        ("quantile 0.3, 1e6 float32", lambda lib, x: lib.quantile(x, 0.3), (flat,)),
        ("cummax dim=1, 1000 x 1000", lambda lib, x: lib.cummax(x, 1), (square,)),
        (
            "logcumsumexp dim=1, 1000 x 1000",
            lambda lib, x: lib.logcumsumexp(x, 1),
            (square,),
        ),
        (
            "searchsorted 1e6 in 1000",
            lambda lib, b, x: lib.searchsorted(b, x),
            (boundaries, flat),
        ),
        ("histc 100 bins, 1e6 float32", lambda lib, x: lib.histc(x), (flat,)),
        ("bincount, 1e6 int64", lambda lib, x: lib.bincount(x), (counts,)),
        ("aminmax, 1e6 float32", lambda lib, x: lib.aminmax(x), (flat,)),
        ("nansum, 1e6 float32", lambda lib, x: lib.nansum(x), (flat,)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 11
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds")  # fmt: skip
    for name, call, arrays in _workloads(np.random.default_rng(0)):
        lucid_inputs = tuple(lucid.from_numpy(array.copy()) for array in arrays)
        torch_inputs = tuple(torch.from_numpy(array.copy()) for array in arrays)
        compare(
            name,
            lambda *inputs, call=call: call(lucid, *inputs),
            lucid_inputs,
            lambda *inputs, call=call: call(torch, *inputs),
            torch_inputs,
            rounds,
            inner=3,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
