"""Datasets: map-style and iterable sources of samples, subsets and random splits."""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import lucid

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "Subset",
    "random_split",
    "ChainDataset",
    "StackDataset",
]


class Dataset:
    """A map-style dataset: subclasses implement `__getitem__` (and usually `__len__`)."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset, Iterable):
    """A dataset read as a stream: subclasses implement `__iter__` (abstract, as in PyTorch,
    so the base class cannot be instantiated)."""

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the index-th rows of the given tensors, returned as a tuple."""

    def __init__(self, *tensors: lucid.Tensor) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[lucid.Tensor, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """The datasets one after another."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for dataset in self.datasets:
            total += len(dataset)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index = len(self) + index
        dataset_index = bisect.bisect_right(self.cumulative_sizes, index)
        offset = self.cumulative_sizes[dataset_index - 1] if dataset_index > 0 else 0
        return self.datasets[dataset_index][index - offset]


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: lucid.Generator | None = None,
) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths (or fractions)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for position, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {position} is not between 0 and 1")
            counts.append(int(math.floor(len(dataset) * fraction)))
        # Hand the rounding remainder out one by one from the front, as PyTorch does.
        for position in range(len(dataset) - sum(counts)):
            counts[position % len(counts)] += 1
        for position, count in enumerate(counts):
            if count == 0:
                warnings.warn(
                    f"Length of split at index {position} is 0. "
                    f"This might result in an empty dataset.",
                    stacklevel=2,
                )
        lengths = counts
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    permutation = lucid.randperm(sum(lengths), generator=generator).tolist()
    subsets = []
    start = 0
    for length in lengths:
        subsets.append(Subset(dataset, permutation[start : start + length]))
        start += length
    return subsets


def _check_iterable(dataset: Any) -> None:
    if not isinstance(dataset, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, one stream after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for dataset in self.datasets:
            _check_iterable(dataset)
            yield from dataset

    def __len__(self) -> int:
        total = 0
        for dataset in self.datasets:
            _check_iterable(dataset)
            total += len(dataset)
        return total


class StackDataset(Dataset):
    """Samples zipped from datasets of equal length: a tuple per index (positional datasets)
    or a dict (keyword datasets).

    Example::

        pairs = StackDataset(images=images, labels=labels)
        pairs[0]  # {"images": images[0], "labels": labels[0]}
    """

    datasets: tuple[Dataset, ...] | dict[str, Dataset]

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args) if args else list(kwargs.values())
        self._length = len(datasets[0])
        if any(self._length != len(dataset) for dataset in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """A batch of samples, fetched per dataset with its own `__getitems__` when it has one."""
        named = isinstance(self.datasets, dict)
        datasets = self.datasets.items() if named else enumerate(self.datasets)
        columns = {}
        for key, dataset in datasets:
            if callable(getattr(dataset, "__getitems__", None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(
                        "Nested dataset's output size mismatch. Expected "
                        f"{len(indices)}, got {len(items)}"
                    )
                columns[key] = items
            else:
                columns[key] = [dataset[index] for index in indices]
        if named:
            return [{key: column[row] for key, column in columns.items()}
                    for row in range(len(indices))]  # fmt: skip
        return [tuple(column[row] for column in columns.values()) for row in range(len(indices))]

    def __len__(self) -> int:
        return self._length
