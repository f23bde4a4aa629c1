"""Complex tensors against torch, side by side (2 threads each): the workloads issue 31 budgets
at 2x torch.

    python benchmarks/bench_complex.py            # 15 rounds
    python benchmarks/bench_complex.py --quick    # 5 rounds
    python benchmarks/bench_complex.py --only rfft

Rounds alternate the libraries and the medians are compared, as in bench_core.py.
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
BUDGET = 2.0


def rfft_step(lib, signal):
    """rfft of a (64, 4096) float32 batch along the last dim, forward and backward."""
    lib.fft.rfft(signal).abs().sum().backward()


def stft_step(lib, signal, window):
    """stft of 1 s of 16 kHz audio (n_fft 400, hop 160, Hann window), as speech front ends."""
    lib.stft(signal, 400, hop_length=160, window=window, return_complex=True)


def matmul_step(lib, a, b):
    """A 256 x 256 complex64 matrix product."""
    a @ b


def matmul_backward_step(lib, a, b):
    """The same product, then its gradients for both operands."""
    (a @ b).abs().sum().backward()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds, budget {BUDGET}x")  # fmt: skip
    rng = np.random.default_rng(0)
    signal = rng.standard_normal((64, 4096)).astype(np.float32)
    audio = rng.standard_normal(16000).astype(np.float32)
    a = (rng.standard_normal((256, 256)) + 1j * rng.standard_normal((256, 256))).astype(
        np.complex64
    )
    b = (rng.standard_normal((256, 256)) + 1j * rng.standard_normal((256, 256))).astype(
        np.complex64
    )

    def tensors(lib, arrays, grad):
        return tuple(lib.tensor(array, requires_grad=grad) for array in arrays)

    workloads = [
        ("rfft (64, 4096) float32, fwd+bwd", rfft_step, lambda lib: tensors(lib, [signal], True),
         10),
        (
            "stft 1 s at 16 kHz, n_fft 400, hop 160",
            stft_step,
            lambda lib: (lib.tensor(audio), lib.hann_window(400)),
            10,
        ),
        ("complex64 matmul 256^2", matmul_step, lambda lib: tensors(lib, [a, b], False), 10),
        (
            "complex64 matmul 256^2, fwd+bwd",
            matmul_backward_step,
            lambda lib: tensors(lib, [a, b], True),
            5,
        ),
    ]  # fmt: skip
    over = []
    for name, step, make_inputs, inner in workloads:
        if arguments.only not in name:
            continue
        ratio = compare(
            name,
            step, (lucid, *make_inputs(lucid)),
            step, (torch, *make_inputs(torch)),
            rounds, inner=inner,
        )  # fmt: skip
        if ratio > BUDGET:
            over.append(name)
    print("all within budget" if not over else f"over budget: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
