"""Side-by-side timings of lucid and PyTorch on model-sized workloads (2 threads each, or
--threads N).

    python benchmarks/bench_models.py            # both workloads
    python benchmarks/bench_models.py --quick    # fewer repetitions

(c) cnn: a training step of conv(1->16, 3, pad 1)-ReLU-maxpool 2-conv(16->32, 3, pad 1)-
    ReLU-maxpool 2-linear(1568->10) on a (64, 1, 28, 28) batch, cross-entropy, SGD.
(d) transformer block: forward + backward of one pre-norm TransformerEncoderLayer
    (d_model 128, 4 heads, MLP 512 with the layer's default ReLU, LayerNorm, causal
    attention, no dropout) on a (16, 64, 128) batch; (d') the same block with GELU.
(e) lstm: forward + backward of a 2-layer LSTM (input and hidden 256) on a sequence of 64
    steps, batch 32, through its output and final states.
Both libraries build the same modules from the same weights (copied from torch); lucid runs
each step eagerly and through lucid.compile (a recorded replay). Each round times lucid and
PyTorch back to back, and the medians over rounds are compared.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _threads import THREADS  # noqa: E402 (sets the thread count before NumPy loads)

# isort: split
import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_core import compare  # noqa: E402

import lucid  # noqa: E402
import lucid.nn  # noqa: E402

torch.set_num_threads(THREADS)


def copy_weights(source: torch.nn.Module, target: lucid.nn.Module) -> None:
    target.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in source.state_dict().items()})


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1568, 10),
    )  # fmt: skip


def make_cnn(seed: int):
    torch.manual_seed(seed)
    torch_model = cnn(torch)
    lucid_model = cnn(lucid)
    copy_weights(torch_model, lucid_model)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    setups = []
    for lib, model in ((lucid, lucid_model), (torch, torch_model)):
        optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
        setups.append((lib, model, optimizer, lib.tensor(x), lib.tensor(y)))
    return setups


def cnn_step(lib, model, optimizer, x, y):
    optimizer.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()


def block(lib, activation):
    return lib.nn.TransformerEncoderLayer(
        128, 4, dim_feedforward=512, dropout=0.0, activation=activation, batch_first=True,
        norm_first=True,
    )  # fmt: skip


def make_block(seed: int, activation: str = "relu"):
    torch.manual_seed(seed)
    torch_model = block(torch, activation)
    lucid_model = block(lucid, activation)
    copy_weights(torch_model, lucid_model)
    x = np.random.default_rng(seed).standard_normal((16, 64, 128)).astype(np.float32)
    mask = np.triu(np.full((64, 64), -np.inf, dtype=np.float32), 1)
    return [
        (lib, model, lib.tensor(x, requires_grad=True), lib.tensor(mask))
        for lib, model in ((lucid, lucid_model), (torch, torch_model))
    ]


def block_step(lib, model, x, mask):
    model.zero_grad()
    x.grad = None
    model(x, src_mask=mask, is_causal=True).sum().backward()


def make_lstm(seed: int):
    torch.manual_seed(seed)
    torch_model = torch.nn.LSTM(256, 256, num_layers=2)
    lucid_model = lucid.nn.LSTM(256, 256, num_layers=2)
    copy_weights(torch_model, lucid_model)
    x = np.random.default_rng(seed).standard_normal((64, 32, 256)).astype(np.float32)
    return [
        (lib, model, lib.tensor(x, requires_grad=True))
        for lib, model in ((lucid, lucid_model), (torch, torch_model))
    ]


def lstm_step(lib, model, x):
    model.zero_grad()
    x.grad = None
    output, (h_n, c_n) = model(x)
    (output.sum() + h_n.sum() + c_n.sum()).backward()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--threads", type=int, default=2, help="threads for every side")
    arguments = parser.parse_args()
    rounds = 5 if arguments.quick else 15
    print(f"lucid {lucid.__version__} vs torch {torch.__version__}, numpy {np.__version__}, "
          f"{THREADS} threads each, median of {rounds} rounds")  # fmt: skip
    lucid_cnn, torch_cnn = make_cnn(0)
    lucid_block, torch_block = make_block(0)
    lucid_gelu, torch_gelu = make_block(0, "gelu")
    lucid_lstm, torch_lstm = make_lstm(0)
    workloads = [
        ("(c) small CNN b64, train step", cnn_step, lucid_cnn, torch_cnn, 5),
        ("(d) transformer block, fwd+bwd", block_step, lucid_block, torch_block, 5),
        ("(d') transformer block with GELU", block_step, lucid_gelu, torch_gelu, 5),
        ("(e) 2-layer LSTM 256, L64 b32, fwd+bwd", lstm_step, lucid_lstm, torch_lstm, 3),
    ]
    for name, step, lucid_args, torch_args, inner in workloads:
        compare(name, step, lucid_args, step, torch_args, rounds, inner=inner)
        compare(f"{name[:4]}compiled", lucid.compile(step), lucid_args, step, torch_args,
                rounds, inner=inner)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
