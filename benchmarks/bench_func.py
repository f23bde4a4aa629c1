"""Per-sample gradients with vmap(grad(f)) against torch.func, side by side (2 threads each):
an MLP 32-64-10 on a batch of 64, budget 3x torch. Then func.jvp, which runs forward mode
(lucid.autograd.forward_ad), against the same function's forward+backward in the same
library: an MLP 784-512-512-10 (GELU, tanh) on a batch of 128, budget 1.5x.

    python benchmarks/bench_func.py            # 15 rounds
    python benchmarks/bench_func.py --quick    # 5 rounds

Rounds alternate the libraries and the medians are compared, as in bench_core.py. A third
line times lucid's own Python loop of single-sample grads: lucid.func.vmap is that loop, so
the first two lucid lines should agree, and the gap to torch is what batching rules would win.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

# Both libraries get two BLAS/OpenMP threads; this must be set before NumPy loads.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.func  # noqa: E402
from bench_core import _round, compare  # noqa: E402  (alternating rounds, medians)

import lucid  # noqa: E402
import lucid.func  # noqa: E402
import lucid.nn  # noqa: E402

torch.set_num_threads(2)
BUDGET = 3.0
BATCH = 64
JVP_BUDGET = 1.5


def make_model(lib, rng):
    """An MLP 32-64-10 and its parameters as plain (detached) tensors, float32."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    shapes = {"0.weight": (64, 32), "0.bias": (64,), "2.weight": (10, 64), "2.bias": (10,)}
    params = {
        name: lib.tensor(rng.standard_normal(shape).astype(np.float32) * 0.1)
        for name, shape in shapes.items()
    }
    return model, params


def make_loss(lib, model):
    def loss(params, x, y):
        logits = lib.func.functional_call(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(logits, y.unsqueeze(0))

    return loss


def vmap_step(lib, loss, params, x, y):
    lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


def loop_step(lib, loss, params, x, y):
    grads = [lib.func.grad(loss)(params, x[i], y[i]) for i in range(x.shape[0])]
    {name: lib.stack([g[name] for g in grads]) for name in params}


def make_jvp_case(lib, rng):
    """An MLP 784-512-512-10 with its input and a tangent, float32."""
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(784, 512), nn.GELU(), nn.Linear(512, 512), nn.Tanh(), nn.Linear(512, 10)
    )
    x = lib.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    tangent = lib.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    return lib, model, x, tangent


def jvp_step(lib, model, x, tangent):
    lib.func.jvp(model, (x,), (tangent,))


def forward_backward_step(lib, model, x, tangent):
    inputs = x.detach().requires_grad_()
    output = model(inputs)
    output.backward(lib.ones_like(output))


def jvp_ratio(lib, rounds: int) -> float:
    """Median jvp over median forward+backward, alternating rounds within the library."""
    case = make_jvp_case(lib, np.random.default_rng(0))
    jvp_times, step_times = [], []
    for _ in range(rounds):
        jvp_times.append(_round(jvp_step, case, 3))
        step_times.append(_round(forward_backward_step, case, 3))
    ratio = statistics.median(jvp_times) / statistics.median(step_times)
    spread = (min(jvp_times) / max(step_times), max(jvp_times) / min(step_times))
    name = f"{lib.__name__} func.jvp vs fwd+bwd, MLP b128"
    print(f"{name:<40} jvp {statistics.median(jvp_times) * 1e3:8.2f} ms   fwd+bwd "
          f"{statistics.median(step_times) * 1e3:8.2f} ms   ratio {ratio:5.2f}x "
          f"(spread {spread[0]:.2f}-{spread[1]:.2f})")  # fmt: skip
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"2 threads, median of {rounds} rounds, budget {BUDGET}x")  # fmt: skip
    x_values = np.random.default_rng(1).standard_normal((BATCH, 32)).astype(np.float32)
    y_values = np.random.default_rng(2).integers(0, 10, BATCH)
    runs = {}
    for lib in (lucid, torch):
        model, params = make_model(lib, np.random.default_rng(0))
        runs[lib] = (lib, make_loss(lib, model), params, lib.tensor(x_values), lib.tensor(y_values))
    ratio = compare(
        f"vmap(grad) per-sample grads, MLP b{BATCH}",
        vmap_step, runs[lucid], vmap_step, runs[torch], rounds, inner=3,
    )  # fmt: skip
    vmap_times, loop_times = [], []
    for _ in range(rounds):  # alternating, as compare() does, but both sides are lucid
        vmap_times.append(_round(vmap_step, runs[lucid], 3))
        loop_times.append(_round(loop_step, runs[lucid], 3))
    vmap_median, loop_median = statistics.median(vmap_times), statistics.median(loop_times)
    name = "lucid vmap(grad) vs its Python loop"
    print(f"{name:<40} vmap  {vmap_median * 1e6:10.2f} us   loop  {loop_median * 1e6:10.2f} us"
          f"   ratio {vmap_median / loop_median:5.2f}x")  # fmt: skip
    print("within budget" if ratio <= BUDGET else f"over budget: {ratio:.1f}x > {BUDGET}x")
    jvp = jvp_ratio(lucid, rounds)
    jvp_ratio(torch, rounds)
    print(
        "jvp within budget" if jvp <= JVP_BUDGET else f"jvp over budget: {jvp:.2f}x > {JVP_BUDGET}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
