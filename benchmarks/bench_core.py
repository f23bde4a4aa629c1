"""Side-by-side timings of lucid and PyTorch on the foundation workloads (2 threads each, or
--threads N).

    python benchmarks/bench_core.py            # all workloads
    python benchmarks/bench_core.py --quick    # fewer repetitions

(a) chain: 100 small elementwise ops on shape (16,) with requires_grad, forward + backward,
    reported per op. (b) mlp: 784-512-512-10, batch 128, ReLU, cross-entropy, forward +
    backward + a plain SGD update. Each runs eagerly and through lucid.compile (a recorded
    replay), and beside both a hand-written NumPy step (the same ufuncs and GEMMs, in this
    process, so with the allocator setting `import lucid` applies). Each round times lucid
    and PyTorch back to back, and the medians over rounds are compared, so both see the same
    machine state.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from _threads import THREADS  # sets the thread count before NumPy loads

# isort: split

import numpy as np  # noqa: E402
import torch  # noqa: E402

import lucid  # noqa: E402

torch.set_num_threads(THREADS)

CHAIN_LENGTH = 100


def chain_forward(lib, x):
    """(a) forward only: the chain's ops, recorded for a backward that does not run."""
    y = x
    for _ in range(CHAIN_LENGTH // 4):
        y = y * 1.01
        y = y + 0.1
        y = y.tanh()
        y = y * x
    return y


def chain_step(lib, x):
    chain_forward(lib, x).sum().backward()
    x.grad = None


def make_chain_inputs(seed: int):
    data = np.random.default_rng(seed).standard_normal(16).astype(np.float32)
    return (
        lucid.tensor(data, requires_grad=True),
        torch.tensor(data, requires_grad=True),
    )


def make_mlp(seed: int):
    rng = np.random.default_rng(seed)
    sizes = [(784, 512), (512, 512), (512, 10)]
    arrays = []
    for fan_in, fan_out in sizes:
        bound = 1 / np.sqrt(fan_in)
        arrays.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        arrays.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    lucid_params = [lucid.tensor(a, requires_grad=True) for a in arrays]
    torch_params = [torch.tensor(a, requires_grad=True) for a in arrays]
    return (
        (lucid_params, lucid.tensor(x), lucid.tensor(y)),
        (torch_params, torch.tensor(x), torch.tensor(y)),
    )


def lucid_mlp_step(params, x, y, lr=0.01, lib=lucid):
    w1, b1, w2, b2, w3, b3 = params
    h = lib.addmm(b1, x, w1.t()).relu()
    h = lib.addmm(b2, h, w2.t()).relu()
    logits = lib.addmm(b3, h, w3.t())
    loss = -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with lib.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)
    return loss


def torch_mlp_step(params, x, y, lr=0.01):
    w1, b1, w2, b2, w3, b3 = params
    h = torch.nn.functional.linear(x, w1, b1).relu()
    h = torch.nn.functional.linear(h, w2, b2).relu()
    logits = torch.nn.functional.linear(h, w3, b3)
    loss = torch.nn.functional.cross_entropy(logits, y)
    for p in params:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)
    return loss


def numpy_chain_step(x):
    """(a) written by hand in NumPy: the same ops forward, their gradients backward."""
    y = x
    saved = []
    for _ in range(CHAIN_LENGTH // 4):
        a = y * np.float32(1.01)
        b = a + np.float32(0.1)
        c = np.tanh(b)
        saved.append(c)
        y = c * x
    grad_y = np.ones_like(y)
    grad_x = np.zeros_like(x)
    for c in reversed(saved):
        grad_x += grad_y * c
        grad_c = grad_y * x
        grad_y = grad_c * (1 - c * c) * np.float32(1.01)
    return grad_x + grad_y


def numpy_mlp_step(params, x, y, lr=0.01):
    """(b) written by hand in NumPy: the same GEMMs, log-softmax, mean NLL and SGD update."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = x @ w1.T + b1
    r1 = np.maximum(h1, 0)
    h2 = r1 @ w2.T + b2
    r2 = np.maximum(h2, 0)
    logits = r2 @ w3.T + b3
    shifted = logits - logits.max(1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    rows = np.arange(len(y))
    loss = -log_probs[rows, y].mean()
    grad = np.exp(log_probs)
    grad[rows, y] -= 1
    grad /= len(y)
    grads = [None] * 6
    grads[4], grads[5] = grad.T @ r2, grad.sum(0)
    grad = (grad @ w3) * (h2 > 0)
    grads[2], grads[3] = grad.T @ r1, grad.sum(0)
    grad = (grad @ w2) * (h1 > 0)
    grads[0], grads[1] = grad.T @ x, grad.sum(0)
    for p, g in zip(params, grads):
        p -= lr * g
    return loss


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


# After a burst of work, NumPy's OpenBLAS threads spin for up to ~0.1 s and torch's OpenMP
# threads for up to ~0.2 s before they sleep. On 2 cores, a library timed while the other's
# threads still spin runs 2-10x slow, so each switch of library waits for them to settle.
SETTLE_SECONDS = 0.3


def _round(fn, args, inner):
    time.sleep(SETTLE_SECONDS)
    fn(*args)  # wakes this library's threads before the timed calls
    return sum(timed(fn, *args) for _ in range(inner)) / inner


def compare(name, lucid_fn, lucid_args, torch_fn, torch_args, rounds, inner, per=1,
            labels=("lucid", "torch")):  # fmt: skip
    for _ in range(max(3, inner // 4)):  # warm-up
        lucid_fn(*lucid_args)
        torch_fn(*torch_args)
    lucid_times, torch_times = [], []
    for _ in range(rounds):
        lucid_times.append(_round(lucid_fn, lucid_args, inner))
        torch_times.append(_round(torch_fn, torch_args, inner))
    lucid_median = statistics.median(lucid_times) / per
    torch_median = statistics.median(torch_times) / per
    ratio = lucid_median / torch_median
    first, second = labels
    print(f"{name:<40} {first} {lucid_median * 1e6:10.2f} us   {second} "
          f"{torch_median * 1e6:10.2f} us   ratio {ratio:5.2f}x")  # fmt: skip
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--threads", type=int, default=2, help="threads for every side")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"{THREADS} threads each, median of {rounds} rounds")  # fmt: skip

    lucid_x, torch_x = make_chain_inputs(0)
    compare(
        "(a) chain of 100 ops, fwd+bwd, per op",
        chain_step, (lucid, lucid_x), chain_step, (torch, torch_x),
        rounds, inner=20, per=CHAIN_LENGTH,
    )  # fmt: skip
    compare(
        "(a) forward only, per op",
        chain_forward, (lucid, lucid_x), chain_forward, (torch, torch_x),
        rounds, inner=20, per=CHAIN_LENGTH,
    )  # fmt: skip
    compare(
        "(a) NumPy by hand, per op",
        numpy_chain_step, (lucid_x.detach().numpy().copy(),), chain_step, (torch, torch_x),
        rounds, inner=20, per=CHAIN_LENGTH, labels=("numpy", "torch"),
    )  # fmt: skip
    compiled_chain = lucid.compile(chain_step)
    compare(
        "(a) compiled chain, fwd+bwd, per op",
        compiled_chain, (lucid, lucid_x), chain_step, (torch, torch_x),
        rounds, inner=20, per=CHAIN_LENGTH,
    )  # fmt: skip
    lucid_mlp, torch_mlp = make_mlp(0)
    compare(
        "(b) MLP 784-512-512-10 b128, train step",
        lucid_mlp_step, lucid_mlp, torch_mlp_step, torch_mlp, rounds, inner=5,
    )  # fmt: skip
    numpy_params = [p.detach().numpy().copy() for p in lucid_mlp[0]]
    compare(
        "(b) NumPy by hand, MLP train step",
        numpy_mlp_step, (numpy_params, lucid_mlp[1].numpy(), lucid_mlp[2].numpy()),
        torch_mlp_step, torch_mlp, rounds, inner=5, labels=("numpy", "torch"),
    )  # fmt: skip
    compiled_mlp_step = lucid.compile(lucid_mlp_step)
    compare(
        "(b) compiled MLP train step",
        compiled_mlp_step, lucid_mlp, torch_mlp_step, torch_mlp, rounds, inner=5,
    )  # fmt: skip
    numpy_mlp = (numpy_params, lucid_mlp[1].numpy(), lucid_mlp[2].numpy())
    for name, step in (("eager", lucid_mlp_step), ("compiled", compiled_mlp_step)):
        compare(
            f"(b) {name} MLP step / NumPy by hand", step, lucid_mlp, numpy_mlp_step, numpy_mlp,
            rounds, inner=5, labels=("lucid", "numpy"),
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
