"""DistributedSampler: each rank's share of a dataset's indices, disjoint across ranks."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

import lucid
from lucid.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices rank `rank` of `num_replicas` visits: every `num_replicas`-th of one order of
    the dataset (shuffled by `seed + epoch` when `shuffle`), padded by repeating its start so
    every rank gets as many (or, with `drop_last`, trimmed to a multiple of `num_replicas`).

    `num_replicas` and `rank` default to the default process group's. Call `set_epoch` at the
    start of each epoch so the shuffle changes. The shuffle is lucid's `randperm`, so a seed
    gives other orders than torch's does.

    Example::

        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for batch in loader: ...
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = lucid.distributed.get_world_size()
        if rank is None:
            rank = lucid.distributed.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        length = len(dataset)
        if drop_last and length % num_replicas != 0:
            # the largest share every rank can have without repeating an index
            self.num_samples = math.ceil((length - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(length / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        length = len(self.dataset)
        if self.shuffle:
            generator = lucid.Generator().manual_seed(self.seed + self.epoch)
            indices = lucid.randperm(length, generator=generator).tolist()
        else:
            indices = list(range(length))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch that, with `seed`, decides the shuffle; all ranks must agree on it."""
        self.epoch = epoch
