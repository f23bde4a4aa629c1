"""Side-by-side timings of lucid and PyTorch, one line per op family added to the catalogue:
linear algebra, losses, special functions and distances, pooling and 3-d convolution, and
resampling (2 threads each).

    python benchmarks/bench_families.py            # all workloads
    python benchmarks/bench_families.py --quick    # fewer repetitions

These lines report ratios, not budgets. Rounds alternate the libraries and the medians are
compared, as in bench_core.py; "fwd+bwd" lines also run backward of the output's sum.
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


def _spd(rng: np.random.Generator, batch: int, size: int) -> np.ndarray:
    """Symmetric positive-definite matrices (well conditioned)."""
    a = rng.standard_normal((batch, size, size))
    return (a @ a.transpose(0, 2, 1) + size * np.eye(size)).astype(np.float32)


def _ctc(lib, log_probs, targets):
    steps, batch, _ = log_probs.shape
    input_lengths = lib.full((batch,), steps, dtype=lib.long)
    target_lengths = lib.full((batch,), targets.shape[1], dtype=lib.long)
    return lib.nn.functional.ctc_loss(log_probs, targets, input_lengths, target_lengths)


def _workloads(rng: np.random.Generator) -> list[tuple[str, object, tuple, bool]]:
    """(name, call taking the library first, input arrays, whether to run backward)."""
    matrix = rng.standard_normal((256, 256)).astype(np.float32)
    small = rng.standard_normal((1000, 8, 8)).astype(np.float32) + 4 * np.eye(8, dtype=np.float32)
    spd = _spd(rng, 1000, 8)
    right = rng.standard_normal((1000, 8, 1)).astype(np.float32)
    logits = rng.standard_normal((200, 32, 50)).astype(np.float32)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = rng.integers(1, 50, (32, 30))
    anchors = [rng.standard_normal((1024, 128)).astype(np.float32) for _ in range(3)]
    points = [rng.standard_normal(shape).astype(np.float32) for shape in ((500, 64), (400, 64))]
    values = rng.uniform(0.1, 10.0, 1_000_000).astype(np.float32)
    unit = rng.uniform(-0.99, 0.99, 1_000_000).astype(np.float32)
    volume = rng.standard_normal((8, 16, 16, 32, 32)).astype(np.float32)
    clip = rng.standard_normal((4, 8, 8, 16, 16)).astype(np.float32)
    kernel = rng.standard_normal((16, 8, 3, 3, 3)).astype(np.float32) * 0.1
    image = rng.standard_normal((8, 32, 64, 64)).astype(np.float32)
    theta = np.tile(np.array([[0.9, 0.1, 0.0], [-0.1, 0.9, 0.0]], np.float32), (8, 1, 1))

    def functional(lib):
        return lib.nn.functional

    return [
        ("linalg.svd 256 x 256", lambda lib, a: lib.linalg.svd(a), (matrix,), False),
        (
            "linalg.solve 1000 x 8 x 8",
            lambda lib, a, b: lib.linalg.solve(a, b),
            (small, right),
            False,
        ),
        ("linalg.eigh 1000 x 8 x 8, fwd+bwd", lambda lib, a: lib.linalg.eigh(a)[0], (spd,), True),
        ("linalg.cholesky 1000 x 8 x 8", lambda lib, a: lib.linalg.cholesky(a), (spd,), False),
        ("linalg.inv 256 x 256, fwd+bwd", lambda lib, a: lib.linalg.inv(a), (matrix,), True),
        ("ctc_loss T200 N32 C50 S30, fwd+bwd", _ctc, (log_probs, targets), True),
        (
            "triplet_margin_loss 1024 x 128, fwd+bwd",
            lambda lib, a, p, n: functional(lib).triplet_margin_loss(a, p, n),
            tuple(anchors),
            True,
        ),
        (
            "cdist p=2 500 x 400 x 64, fwd+bwd",
            lambda lib, a, b: lib.cdist(a, b),
            tuple(points),
            True,
        ),
        (
            "cdist p=1 500 x 400 x 64",
            lambda lib, a, b: lib.cdist(a, b, p=1.0),
            tuple(points),
            False,
        ),
        ("lgamma 1e6, fwd+bwd", lambda lib, x: lib.lgamma(x), (values,), True),
        ("digamma 1e6", lambda lib, x: lib.digamma(x), (values,), False),
        ("erfinv 1e6", lambda lib, x: lib.erfinv(x), (unit,), False),
        (
            "max_pool3d 2 on 8x16x16x32x32, fwd+bwd",
            lambda lib, x: functional(lib).max_pool3d(x, 2),
            (volume,),
            True,
        ),
        (
            "adaptive_avg_pool3d 4 on 8x16x16x32x32",
            lambda lib, x: functional(lib).adaptive_avg_pool3d(x, 4),
            (volume,),
            False,
        ),
        (
            "conv3d 8->16 k3 on 4x8x8x16x16, fwd+bwd",
            lambda lib, x, w: functional(lib).conv3d(x, w, padding=1),
            (clip, kernel),
            True,
        ),
        (
            "interpolate bilinear x2 8x32x64x64, fwd+bwd",
            lambda lib, x: functional(lib).interpolate(x, scale_factor=2, mode="bilinear"),
            (image,),
            True,
        ),
        (
            "affine_grid + grid_sample 8x32x64x64, fwd+bwd",
            lambda lib, x, t: functional(lib).grid_sample(
                x,
                functional(lib).affine_grid(t, list(x.shape), align_corners=False),
                align_corners=False,
            ),
            (image, theta),
            True,
        ),
    ]


def _step(lib, call, backward):
    def run(*inputs):
        output = call(lib, *inputs)
        if backward:
            output.sum().backward()

    return run


def _inputs(lib, arrays, backward):
    tensors = []
    for array in arrays:
        tensor = lib.from_numpy(array.copy())
        tensors.append(tensor.requires_grad_() if backward and array.dtype.kind == "f" else tensor)
    return tuple(tensors)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 11
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds")  # fmt: skip
    for name, call, arrays, backward in _workloads(np.random.default_rng(0)):
        compare(
            name,
            _step(lucid, call, backward),
            _inputs(lucid, arrays, backward),
            _step(torch, call, backward),
            _inputs(torch, arrays, backward),
            rounds,
            inner=3,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
