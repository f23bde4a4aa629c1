"""bfloat16 linear and conv2d, forward + backward: lucid bfloat16 beside lucid float32 and
PyTorch bfloat16 (2 threads each), medians of interleaved rounds.

    python benchmarks/bench_low_precision.py            # 15 rounds
    python benchmarks/bench_low_precision.py --quick    # 5 rounds

linear: (256, 512) input, (512, 512) weight and bias. conv2d: (32, 16, 28, 28) input, 32
3x3 filters with padding 1 and a bias. lucid computes both GEMMs of the 2-byte floats in
float32 and rounds once (NumPy has no BLAS for them), so its bfloat16 cost is its float32
cost plus the casts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import lucid  # noqa: E402
import lucid.nn.functional as F  # noqa: E402

torch.set_num_threads(2)


def _tensors(library, arrays, dtype_name):
    dtype = getattr(library, dtype_name)
    return [library.tensor(a).to(dtype).requires_grad_() for a in arrays]


def linear_step(library, functional_module, x, w, b):
    functional_module.linear(x, w, b).sum().backward()
    x.grad = w.grad = b.grad = None


def conv_step(library, functional_module, x, w, b):
    functional_module.conv2d(x, w, b, padding=1).sum().backward()
    x.grad = w.grad = b.grad = None


def _time(step, library, functional_module, tensors, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        step(library, functional_module, *tensors)
    return (time.perf_counter() - start) / inner


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    rounds = 5 if parser.parse_args().quick else 15
    rng = np.random.default_rng(0)

    def arrays(*shapes):
        return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]

    workloads = {
        "linear (256,512)x(512,512)": (
            linear_step,
            arrays((256, 512), (512, 512), (512,)),
            5,
        ),
        "conv2d (32,16,28,28) * 32x3x3": (
            conv_step,
            arrays((32, 16, 28, 28), (32, 16, 3, 3), (32,)),
            2,
        ),
    }
    for name, (step, data, inner) in workloads.items():
        runs = {
            "lucid bfloat16": (lucid, F, _tensors(lucid, data, "bfloat16")),
            "lucid float32": (lucid, F, _tensors(lucid, data, "float32")),
            "torch bfloat16": (torch, torch.nn.functional, _tensors(torch, data, "bfloat16")),
        }
        times: dict[str, list[float]] = {key: [] for key in runs}
        for library, functional_module, tensors in runs.values():
            step(library, functional_module, *tensors)  # warm-up
        for _ in range(rounds):
            for key, run in runs.items():
                times[key].append(_time(step, *run, inner))
        medians = {key: statistics.median(values) for key, values in times.items()}
        base = medians["lucid bfloat16"]
        print(f"{name}: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in medians.items()))
        print(
            f"  lucid bf16 / lucid f32 = {base / medians['lucid float32']:.2f}x, "
            f"lucid bf16 / torch bf16 = {base / medians['torch bfloat16']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
