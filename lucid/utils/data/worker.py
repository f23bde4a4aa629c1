"""Data-loading workers: what a worker knows of itself (get_worker_info), how one task becomes a
batch (shared with loading in the main process), and the loop a worker process runs."""

from __future__ import annotations

import os
import pickle
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

import lucid
from lucid.utils.data import _transport

__all__ = ["WorkerInfo", "get_worker_info"]

# How often an idle worker checks that the process that started it is still there.
_WATCHDOG_SECONDS = 2.0


class WorkerInfo:
    """What a data-loading worker knows of itself: `id`, `num_workers`, `seed`, `dataset`
    (its own copy). Read-only once made."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    _initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)
        self._keys = tuple(kwargs)
        self._initialized = True

    def __setattr__(self, key: str, value: Any) -> None:
        if self._initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self) -> str:
        items = ", ".join(f"{key}={getattr(self, key)}" for key in self._keys)
        return f"{self.__class__.__name__}({items})"


# set in a worker process only
_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The WorkerInfo of the current data-loading worker, or None outside one (in the main
    process, and with `num_workers=0`).

    An IterableDataset reads it to yield only its worker's share of the stream::

        info = get_worker_info()
        start = 0 if info is None else info.id
        step = 1 if info is None else info.num_workers
        return iter(range(start, self.end, step))
    """
    return _worker_info


def _fetch_indexed(dataset: Any, collate_fn: Callable, auto_collation: bool, index: Any) -> Any:
    """The batch of a map-style dataset at `index`: a list of indices, or one index when
    automatic batching is off."""
    if auto_collation:
        return collate_fn([dataset[i] for i in index])
    return collate_fn(dataset[index])


class _StreamFetcher:
    """Reads batches on from one iterator over an IterableDataset; `fetch` raises
    StopIteration once no batch (no full batch, with `drop_last`) is left."""

    def __init__(
        self, dataset: Any, collate_fn: Callable, batch_size: int | None, drop_last: bool
    ) -> None:
        self.samples = iter(dataset)
        self.collate_fn = collate_fn
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.ended = False

    def fetch(self) -> Any:
        if self.ended:
            raise StopIteration
        if self.batch_size is None:
            return self.collate_fn(next(self.samples))
        batch = []
        for _ in range(self.batch_size):
            try:
                batch.append(next(self.samples))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            self.ended = True
            raise StopIteration
        return self.collate_fn(batch)


@dataclass
class _LoadingJob:
    """Everything a worker needs from its DataLoader."""

    dataset: Any
    is_iterable: bool
    auto_collation: bool
    collate_fn: Callable
    batch_size: int | None
    drop_last: bool
    worker_init_fn: Callable[[int], None] | None


class _KeyErrorMessage(str):
    """KeyError's str() is the repr of its argument, which would print the traceback's newlines
    as escapes; this message reprs as itself."""

    def __repr__(self) -> str:
        return self


class _WorkerError:
    """An exception raised in a worker, carried to the main process and raised there with the
    worker's traceback in its message."""

    def __init__(self, worker_id: int) -> None:
        kind = sys.exc_info()[0]
        self.message = (
            f"Caught {kind.__name__} in DataLoader worker process {worker_id}.\n"
            f"Original {traceback.format_exc()}"
        )
        try:
            pickle.dumps(kind)
            self.kind = kind
        except Exception:
            # a class the main process cannot import by name
            self.kind = RuntimeError

    def reraise(self) -> None:
        message = _KeyErrorMessage(self.message) if self.kind is KeyError else self.message
        try:
            error = self.kind(message)
        except Exception:
            # an exception type that takes other arguments than one message
            raise RuntimeError(message) from None
        raise error


# what a worker sends for a task
_BATCH, _ERROR, _STREAM_END = "batch", "error", "end"
# what the main process sends to stop a worker
_STOP = None


def _seed(base_seed: int, worker_id: int) -> int:
    """Seed every random source a dataset may draw from; seeds differ between workers and
    repeat when the main process's generator is seeded."""
    seed = base_seed + worker_id
    random.seed(seed)
    lucid.manual_seed(seed)
    # NumPy's legacy seed takes 32-bit words; spread the 64-bit seed over them rather than
    # truncate, so that seeds differing in high bits still give different streams
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _worker_loop(
    job: _LoadingJob | bytes,
    worker_id: int,
    num_workers: int,
    base_seed: int,
    tasks: Connection,
    results: Connection,
    done: Any,
) -> None:
    """A worker process: seed, run `worker_init_fn`, then turn each task into a result until
    told to stop (`done` set, then None), or until the main process is gone."""
    global _worker_info
    parent = os.getppid()
    try:
        if isinstance(job, bytes):
            job = pickle.loads(job)
        # The workers already share the cores among themselves.
        lucid.set_num_threads(1)
        seed = _seed(base_seed, worker_id)
        _worker_info = WorkerInfo(
            id=worker_id, num_workers=num_workers, seed=seed, dataset=job.dataset
        )
        tasks, results = _transport.Channel(tasks), _transport.Channel(results)
        init_error = None
        if job.worker_init_fn is not None:
            try:
                job.worker_init_fn(worker_id)
            except Exception:
                init_error = _WorkerError(worker_id)
        stream, stream_epoch = None, None
        while True:
            if not tasks.connection.poll(_WATCHDOG_SECONDS):
                if os.getppid() != parent:
                    return
                continue
            task = tasks.receive()
            if task is _STOP or done.is_set():
                return
            epoch, task_index, index = task
            try:
                if init_error is not None:
                    kind, payload = _ERROR, init_error
                elif job.is_iterable:
                    if stream_epoch != epoch:
                        # each epoch reads the worker's copy of the dataset from its start
                        stream = _StreamFetcher(
                            job.dataset, job.collate_fn, job.batch_size, job.drop_last
                        )
                        stream_epoch = epoch
                    try:
                        kind, payload = _BATCH, stream.fetch()
                    except StopIteration:
                        kind, payload = _STREAM_END, None
                else:
                    payload = _fetch_indexed(job.dataset, job.collate_fn, job.auto_collation, index)
                    kind = _BATCH
            except Exception:
                kind, payload = _ERROR, _WorkerError(worker_id)
            try:
                encoded = _transport.encode((epoch, task_index, kind, payload))
            except Exception:
                # the batch itself cannot be pickled
                encoded = _transport.encode((epoch, task_index, _ERROR, _WorkerError(worker_id)))
            # the next task waits without holding this batch's memory
            del payload
            results.send(encoded)
            del encoded
    except KeyboardInterrupt:
        # Ctrl-C reaches the whole process group; the main process reports it
        pass
    except (BrokenPipeError, ConnectionResetError, EOFError):
        # the main process has gone
        pass
