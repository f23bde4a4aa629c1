"""lucid's demo: train a small CNN on scikit-learn's bundled 8x8 digits and report its test
accuracy; then, in a second act, hunt down a planted NaN bug.

Run it with `python examples/demo.py [--epochs N] [--seed S]`; it needs scikit-learn
(`pip install -e ".[demo]"`), imported only when the demo runs. Everything is seeded: the
same seed gives the same weights, split, batch order and accuracy, and the bug surfaces at the
same step.
"""

from __future__ import annotations

import argparse
import functools
import linecache
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

import numpy as np

import lucid
from lucid import nn
from lucid.autograd import NonFiniteWarning
from lucid.debug import ReplayResult, replay_step
from lucid.optim import Adam
from lucid.optim.lr_scheduler import CosineAnnealingLR
from lucid.utils.data import DataLoader, Subset, TensorDataset, random_split

__all__ = [
    "BugHuntResult",
    "ProgressBar",
    "TrainResult",
    "build_model",
    "bug_hunt",
    "load_digits_dataset",
    "main",
    "train",
]

_INSTALL_HINT = 'the demo needs scikit-learn for its dataset: pip install -e ".[demo]"'


class ProgressBar:
    """A one-line text progress bar, redrawn in place with carriage returns on a terminal.

    As tqdm does, it draws only when its stream (stderr by default) is a terminal: redirected
    into a log, redraws would pile up as kilobytes of carriage returns, so it writes just its
    final state, one line, at `close()`. `interactive` overrides the check.

    >>> bar = ProgressBar(100, "epoch 1")
    >>> bar.update(loss=0.5)
    >>> bar.close()
    """

    def __init__(
        self,
        total: int,
        description: str = "",
        width: int = 30,
        stream: IO[str] | None = None,
        interactive: bool | None = None,
    ) -> None:
        self.total = total
        self.description = description
        self.width = width
        self.stream = sys.stderr if stream is None else stream
        if interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            interactive = bool(isatty()) if callable(isatty) else False
        self.interactive = interactive
        self.count = 0
        self.postfix = ""

    def update(self, steps: int = 1, **postfix: float) -> None:
        self.count = min(self.count + steps, self.total)
        if postfix:
            self.postfix = " ".join(f"{name}={value:.4f}" for name, value in postfix.items())
        if self.interactive:
            self.stream.write("\r" + self._line())
            self.stream.flush()

    def _line(self) -> str:
        filled = self.width * self.count // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        return f"{self.description} [{bar}] {self.count}/{self.total} {self.postfix}"

    def close(self) -> None:
        self.stream.write("\n" if self.interactive else self._line() + "\n")
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


# ------------------------------------------------------------------ act two
# The training code of act two, as a user would write it in train.py. Reports skip lucid's
# own files to point at the user's line, and this module is one of them, so the code is
# compiled under a file name of its own, with its source registered for tracebacks.
BUGGY_CODE_NAME = "<act two: train.py>"
BUGGY_CODE = """\
class BatchStandardize(nn.Module):
    \"\"\"Standardise each feature over the batch (the planted bug: no epsilon).\"\"\"

    def forward(self, x):
        mean = x.mean(dim=0)
        std = x.std(dim=0, unbiased=False)
        return (x - mean) / std


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 64)
        self.norm = BatchStandardize()
        self.out = nn.Linear(64, 10)

    def forward(self, images):
        features = self.norm(self.hidden(images.flatten(1)))
        return self.out(features.relu())


def train_step(model, optimizer, images, labels):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss
"""


def _buggy_code() -> dict:
    """Act two's training code, compiled as the user's file `BUGGY_CODE_NAME`."""
    lines = BUGGY_CODE.splitlines(keepends=True)
    # A size and no modification time: linecache keeps the entry (there is no file to check).
    linecache.cache[BUGGY_CODE_NAME] = (len(BUGGY_CODE), None, lines, BUGGY_CODE_NAME)
    namespace: dict = {"nn": nn, "__name__": "lucid_demo_act_two"}
    exec(compile(BUGGY_CODE, BUGGY_CODE_NAME, "exec"), namespace)
    return namespace


@dataclass
class BugHuntResult:
    """What act two saw: every step's loss, the replay of the failing step and its report."""

    losses: list[float] = field(default_factory=list)
    replay: ReplayResult | None = None
    report: str = ""
    seconds: float = 0.0


def bug_hunt(
    seed: int = 0,
    batch_size: int = 32,
    lr: float = 0.05,
    log_every: int = 8,
    dataset: TensorDataset | None = None,
    stream: IO[str] | None = None,
) -> BugHuntResult:
    """Act two: train `BUGGY_CODE`'s network, whose batch standardisation divides by the batch
    standard deviation, until the loss turns NaN, and show lucid's report of the failing step.

    The data is cut to whole batches plus one example, so the epoch's last batch holds a
    single example: its standard deviation is 0 and `(x - mean) / std` is 0/0. Each step runs
    through `lucid.debug.replay_step`, which replays the failing step under full checks.
    """
    start = time.perf_counter()
    out = sys.stdout if stream is None else stream
    code = _buggy_code()
    if dataset is None:
        dataset = load_digits_dataset()
    size = (len(dataset) - 1) // batch_size * batch_size + 1
    lucid.manual_seed(seed)
    model = code["Net"]()
    optimizer = lucid.optim.SGD(model.parameters(), lr=lr)
    loader = DataLoader(
        Subset(dataset, range(size)), batch_size=batch_size, shuffle=True,
        generator=lucid.Generator().manual_seed(seed),
    )  # fmt: skip
    step_fn = functools.partial(code["train_step"], model, optimizer)
    result = BugHuntResult()
    listing = "\n".join(f"  {number:2d} | {line}" for number, line in
                        enumerate(BUGGY_CODE.splitlines()[:7], start=1))  # fmt: skip
    print(f"\nAct two: a planted bug. The training code {BUGGY_CODE_NAME} standardises "
          f"features with\nbatch statistics and no epsilon:\n{listing}\n"
          "A plain training loop prints:", file=out)  # fmt: skip
    for step, (images, labels) in enumerate(loader):
        with warnings.catch_warnings():
            # The demo prints the replay's report itself.
            warnings.simplefilter("ignore", NonFiniteWarning)
            replay = replay_step(step_fn, images, labels, model=model, optimizer=optimizer,
                                 step=step)  # fmt: skip
        loss = float(replay.value.item())
        result.losses.append(loss)
        if step % log_every == 0 or not replay.clean:
            print(f"  step {step:3d}  loss {loss:.4f}", file=out)
        if not replay.clean:
            result.replay = replay
            result.report = _bug_report(replay)
            print(result.report, file=out)
            break
    result.seconds = time.perf_counter() - start
    return result


def _bug_report(replay: ReplayResult) -> str:
    fired = "\n".join(f"  - {check}" for check in replay.checks)
    return (
        f"\nThat is all a plain loop shows: a bare nan at step {replay.step}.\n"
        f"lucid's cheap checks on every step fired:\n{fired}\n"
        f"so lucid.debug.replay_step re-ran step {replay.step} under full checks:\n"
        + str(replay).split("execution order:\n", 1)[-1]
        + "\nThe epoch's last batch holds a single example: its standard deviation is 0, "
        "and 0/0 is nan.\nThe fix: divide by (std + eps)."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python examples/demo.py",
        description="Train a small CNN on the 8x8 digits, then find a planted NaN bug.",
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
    # flush: in a log (stdout a pipe) the heading would otherwise land after the epoch lines.
    print("Act one: train a CNN on the 8x8 digits.", flush=True)
    result = train(args.epochs, args.batch_size, args.lr, args.seed, dataset=dataset)
    print(f"test accuracy: {result.test_accuracy:.2%} ({result.seconds:.1f} s)")
    bug_hunt(args.seed, dataset=dataset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
