"""A character-level transformer language model, trained on the Python documentation that ships
with the standard library (`pydoc_data.topics`, so nothing is downloaded).

Run it with `python examples/char_transformer.py` (a few minutes; `--minutes` or `--steps` to
change that). It prints the loss now and then and, at the end, text sampled from the model.
With `--bf16` the forward pass and the loss run under `lucid.autocast("cpu", bfloat16)`: the
linear layers and attention compute in bfloat16, the layer norms, the residual stream, the
loss and the weights stay in float32 (bfloat16 keeps float32's exponent range, so no loss
scaling is needed).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

import lucid
from lucid import nn
from lucid.nn import functional as F
from lucid.optim import AdamW


class CharTransformer(nn.Module):
    """Token and learned position embeddings, a causal pre-LN encoder stack, a linear head."""

    def __init__(self, vocab_size: int, context: int, d_model: int = 128, nhead: int = 4,
                 num_layers: int = 2, dim_feedforward: int = 512) -> None:  # fmt: skip
        super().__init__()
        self.context = context
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(
            layer, num_layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False
        )
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens: lucid.Tensor) -> lucid.Tensor:
        """Next-character logits (batch, time, vocab) for token ids (batch, time)."""
        length = tokens.shape[1]
        x = self.token_embedding(tokens) + self.position_embedding(lucid.arange(length))
        # -inf above the diagonal: position t attends only to positions <= t
        mask = lucid.triu(lucid.full((length, length), float("-inf")), diagonal=1)
        return self.head(self.encoder(x, mask=mask, is_causal=True))


def load_text() -> str:
    """The standard library's help-topic texts, concatenated (about 465,000 characters)."""
    from pydoc_data.topics import topics

    return "".join(topics.values())


@dataclass
class TrainResult:
    """The loss of every step and the text sampled at the end."""

    losses: list[float] = field(default_factory=list)
    sample: str = ""


def sample(model: CharTransformer, prompt: str, length: int, stoi: dict[str, int],
           itos: list[str], rng: np.random.Generator, temperature: float = 0.8) -> str:  # fmt: skip
    """Extend `prompt` one character at a time, drawing from the model's softmax."""
    ids = [stoi[c] for c in prompt if c in stoi] or [0]
    model.eval()
    with lucid.no_grad():
        for _ in range(length):
            window = lucid.tensor([ids[-model.context :]])
            logits = model(window)[0, -1] / temperature
            probabilities = F.softmax(logits, dim=-1).numpy().astype(np.float64)
            ids.append(int(rng.choice(len(probabilities), p=probabilities / probabilities.sum())))
    model.train()
    return "".join(itos[i] for i in ids)


def train(steps: int | None = None, minutes: float = 3.0, batch_size: int = 32,
          context: int = 64, lr: float = 2e-3, seed: int = 0, log_every: int = 100,
          sample_length: int = 400, bf16: bool = False) -> TrainResult:  # fmt: skip
    """Train for `steps` steps, or for `minutes` of wall time when `steps` is None; with `bf16`,
    under bfloat16 autocast."""
    lucid.manual_seed(seed)
    rng = np.random.default_rng(seed)
    text = load_text()
    itos = sorted(set(text))
    stoi = {c: i for i, c in enumerate(itos)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    model = CharTransformer(len(itos), context)
    optimizer = AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    print(
        f"{len(text)} characters, vocabulary {len(itos)}, "
        f"{sum(p.numel() for p in model.parameters())} parameters"
    )
    result = TrainResult()
    deadline = time.perf_counter() + minutes * 60
    step = 0

    def keep_going() -> bool:
        return time.perf_counter() < deadline if steps is None else step < steps

    while keep_going():
        starts = rng.integers(0, len(data) - context - 1, size=batch_size)
        windows = np.stack([data[s : s + context + 1] for s in starts])
        inputs, targets = lucid.tensor(windows[:, :-1]), lucid.tensor(windows[:, 1:])
        with lucid.autocast("cpu", dtype=lucid.bfloat16, enabled=bf16):
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, len(itos)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        # a few steep batches early on would otherwise throw the embeddings far off
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        result.losses.append(loss.item())
        if step % log_every == 0 or step == 1:
            recent = result.losses[-log_every:]
            print(f"step {step:5d}  loss {sum(recent) / len(recent):.3f}", flush=True)
    result.sample = sample(model, "The ", sample_length, stoi, itos, rng)
    print(f"--- sample after {step} steps ---\n{result.sample}")
    return result


def main(argv: Sequence[str] | None = None) -> TrainResult:
    parser = argparse.ArgumentParser(
        description="Train a character-level transformer on pydoc_data.topics and sample from it."
    )
    parser.add_argument("--steps", type=int, default=None, help="train this many steps")
    parser.add_argument("--minutes", type=float, default=3.0, help="else train this long")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-length", type=int, default=400)
    parser.add_argument("--bf16", action="store_true", help="train under bfloat16 autocast")
    args = parser.parse_args(argv)
    return train(
        args.steps, args.minutes, args.batch_size, args.context, args.lr, args.seed,
        sample_length=args.sample_length, bf16=args.bf16,
    )  # fmt: skip


if __name__ == "__main__":
    main()
