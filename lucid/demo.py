"""`python -m lucid.demo`: train a small CNN on scikit-learn's bundled 8x8 digits and report
its test accuracy.

The data ships inside scikit-learn (no download); scikit-learn is imported only when the demo
runs, so `import lucid` needs NumPy alone. Everything is seeded: the same seed gives the same
weights, split, batch order and accuracy.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

import numpy as np

import lucid
from lucid import nn
from lucid.optim import Adam
from lucid.optim.lr_scheduler import CosineAnnealingLR
from lucid.utils.data import DataLoader, TensorDataset, random_split

__all__ = ["ProgressBar", "TrainResult", "build_model", "load_digits_dataset", "main", "train"]

_INSTALL_HINT = 'lucid.demo needs scikit-learn for its dataset: pip install -e ".[demo]"'


class ProgressBar:
    """A one-line text progress bar, redrawn in place with carriage returns.

    >>> bar = ProgressBar(100, "epoch 1")
    >>> bar.update(loss=0.5)
    >>> bar.close()
    """

    def __init__(self, total: int, description: str = "", width: int = 30,
                 stream: IO[str] | None = None) -> None:  # fmt: skip
        self.total = total
        self.description = description
        self.width = width
        self.stream = sys.stderr if stream is None else stream
        self.count = 0
        self.postfix = ""

    def update(self, steps: int = 1, **postfix: float) -> None:
        self.count = min(self.count + steps, self.total)
        if postfix:
            self.postfix = " ".join(f"{name}={value:.4f}" for name, value in postfix.items())
        self._draw()

    def _draw(self) -> None:
        filled = self.width * self.count // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        line = f"\r{self.description} [{bar}] {self.count}/{self.total} {self.postfix}"
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


@dataclass
class TrainResult:
    """What `train` measured: the loss of every step, the final test accuracy, wall time."""

    losses: list[float] = field(default_factory=list)
    test_accuracy: float = 0.0
    seconds: float = 0.0


def load_digits_dataset() -> TensorDataset:
    """scikit-learn's 1797 8x8 digit images as (N, 1, 8, 8) float32 in [0, 1] and int64 labels.

    Raises ModuleNotFoundError when scikit-learn is not installed.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    # pixel intensities run from 0 to 16 in this dataset
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    return TensorDataset(lucid.tensor(images), lucid.tensor(digits.target.astype(np.int64)))


def build_model() -> nn.Sequential:
    """Two conv-ReLU-pool stages (8x8 -> 4x4 -> 2x2) and a small classifier head."""
    return nn.Sequential(
        nn.Conv2d(1, 32, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 2 * 2, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )


def accuracy(model: nn.Module, inputs: lucid.Tensor, targets: lucid.Tensor) -> float:
    """The fraction of `inputs` whose highest logit is the target class."""
    model.eval()
    with lucid.no_grad():
        predictions = model(inputs).argmax(dim=1)
    model.train()
    return float((predictions == targets).float().mean().item())


def _stack(subset: Sequence[tuple[lucid.Tensor, lucid.Tensor]]) -> tuple[lucid.Tensor, ...]:
    """One batch holding a whole (small) dataset split."""
    return next(iter(DataLoader(subset, batch_size=len(subset))))


def train(epochs: int = 12, batch_size: int = 32, lr: float = 3e-3, seed: int = 0,
          max_steps: int | None = None, progress: bool = True,
          dataset: TensorDataset | None = None) -> TrainResult:  # fmt: skip
    """Train the CNN on 80% of the digits with Adam and measure accuracy on the other 20%.

    `max_steps` stops early (for smoke tests); `dataset` replaces the digits (same shapes).
    """
    start = time.perf_counter()
    lucid.manual_seed(seed)
    if dataset is None:
        dataset = load_digits_dataset()
    train_set, test_set = random_split(
        dataset, [0.8, 0.2], generator=lucid.Generator().manual_seed(seed)
    )
    loader = DataLoader(
        train_set, batch_size=batch_size, shuffle=True,
        generator=lucid.Generator().manual_seed(seed + 1),
    )  # fmt: skip
    model = build_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = Adam(model.parameters(), lr=lr)
    # decaying the step size to zero over the run settles the weights into a good minimum,
    # which makes the final accuracy much less sensitive to the seed
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    result = TrainResult()
    for epoch in range(epochs):
        bar = ProgressBar(len(loader), f"epoch {epoch + 1:2d}/{epochs}") if progress else None
        epoch_start = len(result.losses)
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
            result.losses.append(loss.item())
            if bar is not None:
                epoch_losses = result.losses[epoch_start:]
                bar.update(loss=sum(epoch_losses) / len(epoch_losses))
            if max_steps is not None and len(result.losses) >= max_steps:
                break
        if bar is not None:
            bar.close()
        if max_steps is not None and len(result.losses) >= max_steps:
            break
    result.test_accuracy = accuracy(model, *_stack(test_set))
    result.seconds = time.perf_counter() - start
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m lucid.demo", description="Train a small CNN on the 8x8 digits."
    )
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        dataset = load_digits_dataset()
    except ModuleNotFoundError as error:
        if error.name is None or not error.name.startswith("sklearn"):
            raise
        print(_INSTALL_HINT, file=sys.stderr)
        return 1
    result = train(args.epochs, args.batch_size, args.lr, args.seed, dataset=dataset)
    print(f"test accuracy: {result.test_accuracy:.2%} ({result.seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
