"""DataLoader: batches a dataset's samples through a sampler and a collate function."""

from __future__ import annotations

import collections.abc
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import lucid
from lucid.utils.data._multiprocessing import _MultiProcessingDataLoaderIter
from lucid.utils.data.dataset import Dataset, IterableDataset
from lucid.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from lucid.utils.data.worker import _fetch_indexed, _StreamFetcher

__all__ = ["DataLoader", "default_collate", "default_convert"]

_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists and dicts.

    Tensors and NumPy arrays are stacked along a new first dim; Python ints become an int64
    tensor, floats a float64 tensor and bools a bool tensor (as in PyTorch); strings are left
    as they are.
    """
    elem = batch[0]
    if isinstance(elem, lucid.Tensor):
        return lucid.stack(list(batch), 0)
    if isinstance(elem, np.ndarray) or isinstance(elem, np.generic):
        # Strings and objects have no tensor dtype.
        if np.dtype(elem.dtype).kind in "SaUO":
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return lucid.stack([lucid.from_numpy(np.asarray(sample)) for sample in batch], 0)
        return lucid.from_numpy(np.array(batch))
    if isinstance(elem, bool):
        return lucid.tensor(batch, dtype=lucid.bool)
    if isinstance(elem, float):
        return lucid.tensor(batch, dtype=lucid.float64)
    if isinstance(elem, int):
        return lucid.tensor(batch, dtype=lucid.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([sample[key] for sample in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Without batching, samples pass through unchanged except NumPy arrays become tensors."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return lucid.from_numpy(data)
    return data


class DataLoader:
    """Iterates over a dataset in batches.

    With `num_workers > 0`, batches are loaded by that many worker processes (started with
    `multiprocessing_context`, by default the platform's start method: fork on Linux), as in
    PyTorch: each worker seeds lucid's generator, `random` and NumPy's global generator from a
    base seed drawn from `generator` (so `lucid.manual_seed` repeats them), runs
    `worker_init_fn(worker_id)`, and loads whole batches; the batches come in sampler order
    (unless `in_order=False`) and are the same as with `num_workers=0`. An IterableDataset is
    iterated by every worker, each over its own copy: shard it with `get_worker_info()`.
    Large arrays come back through shared memory. `pin_memory` warns and does nothing, as on a
    PyTorch build without an accelerator.

    Example::

        loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True,
                            generator=lucid.Generator().manual_seed(0))
        for inputs, targets in loader:
            ...
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | None = None,
        batch_sampler: Sampler | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: lucid.Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator

        if isinstance(dataset, IterableDataset):
            if shuffle not in (None, False):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )

        if sampler is None and not isinstance(dataset, IterableDataset):
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and sampler is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.multiprocessing_context = _start_context(multiprocessing_context, num_workers)
        # the iterator whose workers persist across epochs (persistent_workers)
        self._iterator: _MultiProcessingDataLoaderIter | None = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_size is not None or self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What is iterated for one batch's index: the batch sampler when batching, else the
        sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> Iterator[Any]:
        if self.pin_memory:
            if self.pin_memory_device:
                warnings.warn(
                    "pin_memory_device is deprecated, the current accelerator will be used as "
                    f"the device,ignore pin_memory_device='{self.pin_memory_device}'.",
                    stacklevel=2,
                )
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                stacklevel=2,
            )
        if self.num_workers == 0:
            # PyTorch's single-process iterator asserts this (NaN and inf included)
            if self.timeout != 0:
                raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
            return self._single_process_batches()
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self, _base_seed(self.generator))
        if self._iterator is None or self._iterator._is_stopped:
            self._iterator = _MultiProcessingDataLoaderIter(self, _base_seed(self.generator))
        else:
            self._iterator._reset()
        return self._iterator

    def _single_process_batches(self) -> Iterator[Any]:
        # drawn although no worker uses it, as PyTorch does, so that a shared generator gives
        # the same shuffles whatever num_workers is
        _base_seed(self.generator)
        if not isinstance(self.dataset, IterableDataset):
            for index in self._index_sampler:
                yield _fetch_indexed(self.dataset, self.collate_fn, self._auto_collation, index)
            return
        stream = _StreamFetcher(self.dataset, self.collate_fn, self.batch_size, self.drop_last)
        while True:
            try:
                batch = stream.fetch()
            except StopIteration:
                return
            yield batch

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)
            if self.batch_size is None:
                return length
            if self.drop_last:
                return length // self.batch_size
            return (length + self.batch_size - 1) // self.batch_size
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


def _base_seed(generator: lucid.Generator | None) -> int:
    """The seed the workers of one iterator derive theirs from (worker i: base seed + i)."""
    return int(lucid.randint(0, 2**63 - 1, (1,), generator=generator).item())


def _start_context(context: Any, num_workers: int) -> Any:
    """PyTorch's checks of `multiprocessing_context`, and the context object it keeps."""
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError(
            "multiprocessing_context can only be used with multi-process loading "
            f"(num_workers > 0), but got num_workers={num_workers}"
        )
    import multiprocessing
    import multiprocessing.context

    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(
                "multiprocessing_context option should specify a valid start method in "
                f"{methods}, but got multiprocessing_context={context!r}"
            )
        return multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={context}"
        )
    return context
