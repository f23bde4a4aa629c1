"""Data loading: datasets, samplers and the DataLoader (mirrors torch.utils.data)."""

from typing import Any

from lucid.utils.data.dataloader import DataLoader, default_collate, default_convert
from lucid.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from lucid.utils.data.distributed import DistributedSampler
from lucid.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from lucid.utils.data.worker import get_worker_info

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
    "ChainDataset",
    "StackDataset",
    "WeightedRandomSampler",
    "get_worker_info",
    "DistributedSampler",
]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
