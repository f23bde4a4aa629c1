"""DataLoader epochs with 2 worker processes against 0, for lucid and PyTorch side by side.

    python benchmarks/bench_dataloader_workers.py             # 7 rounds a case
    python benchmarks/bench_dataloader_workers.py --rounds 15

Three datasets: one whose __getitem__ waits 2 ms (I/O-bound loading, where workers overlap
the waits), one whose __getitem__ does about as much NumPy work (CPU-bound; on a 2-core
machine the main process competes with the workers), and one that only slices large images
(what crossing the process boundary costs). Workers persist across epochs, so an epoch's time
excludes their start; the first epoch, which includes it, is reported apart. Each round runs
one epoch of every loader (lucid and torch, 0 and 2 workers) in rotating order, and a ratio is
the median of its per-round ratios, since a shared machine's load drifts more than the
effects measured.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


class Sleepy:
    """Each sample waits 2 ms, as a read from disk or network would."""

    def __len__(self) -> int:
        return 256

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        time.sleep(0.002)
        return np.full((3, 32, 32), index, np.float32), index


class Augmented:
    """Each sample is made with NumPy work: noise, a blur and a normalisation."""

    def __init__(self) -> None:
        self.images = np.random.default_rng(0).random((256, 3, 64, 64), np.float32)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        image = self.images[index]
        for _ in range(6):
            image = image + np.random.standard_normal(image.shape).astype(np.float32) * 0.01
            image = 0.25 * (np.roll(image, 1, 1) + np.roll(image, -1, 1) + 2 * image)
        image = (image - image.mean()) / (image.std() + 1e-5)
        return image.astype(np.float32), index


class LargeImages:
    """Cheap samples, large batches: 3x128x128 float32 images, 12.6 MB a batch of 64."""

    def __init__(self) -> None:
        self.images = np.random.default_rng(0).random((512, 3, 128, 128), np.float32)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        return self.images[index], index


def epoch(loader) -> float:
    start = time.perf_counter()
    for images, _ in loader:
        images.sum()
    return time.perf_counter() - start


def measure(frameworks: dict, dataset, batch_size: int, rounds: int) -> dict:
    """Per-round epoch times of every (framework, workers) loader, in rotating order."""
    loaders = {}
    for framework, loader_class in frameworks.items():
        loaders[framework, 0] = loader_class(dataset, batch_size=batch_size)
        loaders[framework, 2] = loader_class(
            dataset, batch_size=batch_size, num_workers=2, persistent_workers=True
        )
    # the first epoch starts the workers
    first = {key: epoch(loader) for key, loader in loaders.items()}
    keys = list(loaders)
    times = {key: [] for key in keys}
    for round_index in range(rounds):
        shift = round_index % len(keys)
        for key in keys[shift:] + keys[:shift]:
            times[key].append(epoch(loaders[key]))
    return first, times


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(numerators, denominators))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()

    import torch
    import torch.utils.data

    import lucid
    import lucid.utils.data

    torch.set_num_threads(1)
    lucid.set_num_threads(1)
    frameworks = {"lucid": lucid.utils.data.DataLoader, "torch": torch.utils.data.DataLoader}
    cases = [
        ("sleep 2 ms a sample", Sleepy(), 32),
        ("NumPy work a sample", Augmented(), 32),
        ("large batches (12.6 MB)", LargeImages(), 64),
    ]
    print(f"ms an epoch (median of {options.rounds} rounds); ratios: median of per-round ratios")
    print(
        f"{'dataset':24} {'':6} {'0 workers':>9} {'2 workers':>9} {'0 / 2 w':>8} {'1st epoch':>9}"
    )
    for name, dataset, batch_size in cases:
        first, times = measure(frameworks, dataset, batch_size, options.rounds)
        for framework in frameworks:
            serial, parallel = times[framework, 0], times[framework, 2]
            print(
                f"{name:24} {framework:6} {statistics.median(serial) * 1e3:9.1f} "
                f"{statistics.median(parallel) * 1e3:9.1f} "
                f"{median_ratio(serial, parallel):7.2f}x {first[framework, 2] * 1e3:9.1f}"
            )
        serial = median_ratio(times["lucid", 0], times["torch", 0])
        parallel = median_ratio(times["lucid", 2], times["torch", 2])
        print(f"{'':24} {'lucid/torch':11} {serial:4.2f}x {parallel:8.2f}x")


if __name__ == "__main__":
    main()
