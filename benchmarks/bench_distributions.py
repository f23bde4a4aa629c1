"""lucid.distributions against torch.distributions, side by side (2 threads each): the
workloads issue 29 budgets at 2x torch (MultivariateNormal both forward only and with backward).

    python benchmarks/bench_distributions.py            # 15 rounds
    python benchmarks/bench_distributions.py --quick    # 5 rounds
    python benchmarks/bench_distributions.py --only Multivariate

Rounds alternate the libraries and the medians are compared, as in bench_core.py. Each
workload builds its distribution inside the timed call, as a training step does.
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
import lucid.distributions  # noqa: E402

torch.set_num_threads(2)
BUDGET = 2.0


def normal_step(lib, loc, scale):
    """rsample + log_prob of a (1024, 64) Normal, forward and backward."""
    dist = lib.distributions.Normal(loc, scale)
    dist.log_prob(dist.rsample()).sum().backward()


def categorical_step(lib, logits):
    """sample + log_prob + entropy of a Categorical over (4096, 1000) logits."""
    dist = lib.distributions.Categorical(logits=logits)
    dist.log_prob(dist.sample()).sum() + dist.entropy().sum()


def multivariate_step(lib, loc, scale_tril, samples):
    """log_prob of 1024 samples under a 64-d MultivariateNormal given by its scale_tril."""
    lib.distributions.MultivariateNormal(loc, scale_tril=scale_tril).log_prob(samples).sum()


def multivariate_backward_step(lib, loc, scale_tril, samples):
    """The same log_prob, then its gradient for loc, scale_tril and the samples."""
    dist = lib.distributions.MultivariateNormal(loc, scale_tril=scale_tril)
    dist.log_prob(samples).sum().backward()


def _inputs(lib, arrays, grad: bool) -> tuple:
    return tuple(lib.tensor(array, requires_grad=grad) for array in arrays)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds, budget {BUDGET}x")  # fmt: skip
    rng = np.random.default_rng(0)
    loc = rng.standard_normal((1024, 64)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (1024, 64)).astype(np.float32)
    logits = rng.standard_normal((4096, 1000)).astype(np.float32)
    factor = rng.standard_normal((64, 64)).astype(np.float32) * 0.1
    tril = np.tril(factor, -1) + np.diag(rng.uniform(0.5, 1.5, 64)).astype(np.float32)
    mean = rng.standard_normal(64).astype(np.float32)
    samples = rng.standard_normal((1024, 64)).astype(np.float32)
    workloads = [
        ("Normal (1024, 64) rsample+log_prob, fwd+bwd", normal_step, (loc, scale), True, 10),
        ("Categorical (4096, 1000) sample+log_prob+entropy", categorical_step, (logits,), False, 3),
        (
            "MultivariateNormal 64-d, log_prob of 1024",
            multivariate_step,
            (mean, tril, samples),
            False,
            10,
        ),
        (
            "MultivariateNormal 64-d, log_prob of 1024, fwd+bwd",
            multivariate_backward_step,
            (mean, tril, samples),
            True,
            10,
        ),
    ]
    over = []
    for name, step, arrays, grad, inner in workloads:
        if arguments.only not in name:
            continue
        ratio = compare(
            name,
            step, (lucid, *_inputs(lucid, arrays, grad)),
            step, (torch, *_inputs(torch, arrays, grad)),
            rounds, inner=inner,
        )  # fmt: skip
        if ratio > BUDGET:
            over.append(name)
    print("all within budget" if not over else f"over budget: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
