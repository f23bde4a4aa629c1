"""Loading in worker processes: the iterator a DataLoader with `num_workers > 0` returns. It
starts the workers, keeps `prefetch_factor` tasks in flight per worker, hands batches out in
sampler order (as they come, with `in_order=False`), and stops the workers when it is
exhausted, deleted or broken.

Each worker has a pipe of tasks and a socket of results (see `_transport`), so the main process
waits on exactly the worker whose batch is due, and on every worker's exit at the same time:
a worker that dies is noticed at once, not after a polling interval.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import time
import weakref
from collections.abc import Iterator
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

from lucid.utils.data import _transport
from lucid.utils.data.dataset import IterableDataset
from lucid.utils.data.worker import _ERROR, _STOP, _STREAM_END, _LoadingJob, _worker_loop

if TYPE_CHECKING:
    from lucid.utils.data.dataloader import DataLoader

# How long stopping waits for a worker to finish its current task before killing it.
_SHUTDOWN_SECONDS = 5.0


class _Workers:
    """The processes and their channels. Kept apart from the iterator so that the finalizer
    that stops them holds no reference to the iterator."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.processes: list[Any] = []
        self.tasks: list[_transport.Channel] = []
        self.results: list[_transport.Channel] = []
        # set before the stop messages, so that a worker drops the tasks queued before them
        self.done: Any = None
        self.stopped = False

    def stop(self) -> None:
        """Ask every worker to stop, drain what they still send, and reap them; a worker that
        does not stop within _SHUTDOWN_SECONDS is killed. Leaves no process or descriptor."""
        # A forked worker holds copies of this object; only the process that started the
        # workers may stop them.
        if self.stopped or os.getpid() != self.owner:
            return
        self.stopped = True
        if self.done is not None:
            self.done.set()
        for channel in self.tasks:
            try:
                channel.send(_transport.encode(_STOP))
            except OSError:
                pass
        running = {process.sentinel: process for process in self.processes}
        readers = list(self.results)
        deadline = time.monotonic() + _SHUTDOWN_SECONDS
        while running and time.monotonic() < deadline:
            # Read while waiting: a worker blocked sending a batch could not see its stop.
            for ready in wait([*running, *readers], deadline - time.monotonic()):
                if ready in running:
                    del running[ready]
                    continue
                try:
                    ready.discard()
                except (EOFError, OSError):
                    readers.remove(ready)
        for process in running.values():
            process.kill()
        for process in self.processes:
            process.join()
        for channel in [*self.tasks, *self.results]:
            channel.close()


def _exit_description(process: Any) -> str:
    code = process.exitcode
    if code is None:
        return f"pid {process.pid} closed its channel"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"pid {process.pid} was killed by {name}"
    return f"pid {process.pid} exited with code {code}"


class _MultiProcessingDataLoaderIter(Iterator):
    """Batches of a DataLoader loaded by `num_workers` worker processes."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        # What it needs of the loader, not the loader: the loader holds a persistent iterator,
        # and without a cycle between them its workers stop as soon as the loader is dropped.
        self._index_sampler = loader._index_sampler
        self._persistent = loader.persistent_workers
        self._is_iterable = isinstance(loader.dataset, IterableDataset)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._in_order = loader.in_order
        self._timeout = loader.timeout
        self._workers = _Workers()
        self._finalizer = weakref.finalize(self, self._workers.stop)
        context = loader.multiprocessing_context or multiprocessing.get_context()
        job = _LoadingJob(
            dataset=loader.dataset,
            is_iterable=self._is_iterable,
            auto_collation=loader._auto_collation,
            collate_fn=loader.collate_fn,
            batch_size=loader.batch_size,
            drop_last=loader.drop_last,
            worker_init_fn=loader.worker_init_fn,
        )
        # A forked worker inherits the job; any other start method receives it pickled.
        payload = job if context.get_start_method() == "fork" else bytes(_transport.dumps(job))
        workers = self._workers
        workers.done = context.Event()
        try:
            for worker_id in range(self._num_workers):
                tasks, worker_tasks = context.Pipe(duplex=True)
                results, worker_results = context.Pipe(duplex=True)
                process = context.Process(
                    target=_worker_loop,
                    args=(payload, worker_id, self._num_workers, base_seed, worker_tasks,
                          worker_results, workers.done),
                    daemon=True,
                )  # fmt: skip
                process.start()
                worker_tasks.close()
                worker_results.close()
                workers.processes.append(process)
                workers.tasks.append(_transport.Channel(tasks))
                workers.results.append(_transport.Channel(results))
        except BaseException:
            self._finalizer()
            raise
        self._epoch = -1
        self._start_epoch()

    def _start_epoch(self) -> None:
        self._epoch += 1
        self._indices = itertools.repeat(None) if self._is_iterable else iter(self._index_sampler)
        self._next_task = 0
        # task index -> worker, in the order the tasks were sent
        self._in_flight: dict[int, int] = {}
        self._active = [True] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._send_task()

    def _reset(self) -> None:
        """Start the next epoch on the same workers (persistent_workers); results of the
        previous epoch that are still on their way are dropped as they arrive."""
        if self._workers.stopped:
            raise RuntimeError("the DataLoader's workers have stopped")
        self._start_epoch()

    @property
    def _is_stopped(self) -> bool:
        return self._workers.stopped

    def _send_task(self) -> None:
        if self._indices is None or not any(self._active):
            return
        worker = next(self._next_worker)
        while not self._active[worker]:
            worker = next(self._next_worker)
        try:
            index = next(self._indices)
        except StopIteration:
            self._indices = None
            return
        self._workers.tasks[worker].send(_transport.encode((self._epoch, self._next_task, index)))
        self._in_flight[self._next_task] = worker
        self._next_task += 1

    def __next__(self) -> Any:
        while self._in_flight and not self._workers.stopped:
            if self._in_order:
                # the oldest task in flight; a worker answers its tasks in the order it got them
                worker = next(iter(self._in_flight.values()))
                waiting = [worker]
            else:
                waiting = sorted(set(self._in_flight.values()))
            worker, task, kind, payload = self._receive(waiting)
            del self._in_flight[task]
            self._send_task()
            if kind == _STREAM_END:
                self._active[worker] = False
                continue
            if kind == _ERROR:
                payload.reraise()
            return payload
        if not self._persistent:
            self._finalizer()
        raise StopIteration

    def _receive(self, workers: list[int]) -> tuple[int, int, Any, Any]:
        """The next current-epoch message from one of `workers`: (worker, task, kind,
        payload). Raises if any worker has died, or after `timeout` seconds."""
        readers = {self._workers.results[worker]: worker for worker in workers}
        sentinels = [process.sentinel for process in self._workers.processes]
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait([*readers, *sentinels], remaining)
            if not ready:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            for connection in ready:
                if connection not in readers:
                    continue
                try:
                    epoch, task, kind, payload = connection.receive()
                except (EOFError, OSError):
                    raise self._worker_failure() from None
                if epoch == self._epoch:
                    return readers[connection], task, kind, payload
            if any(sentinel in ready for sentinel in sentinels):
                raise self._worker_failure()

    def _worker_failure(self) -> RuntimeError:
        """Stop the workers, and say which died and how (torch's words, then the cause)."""
        processes = self._workers.processes
        # the pipe can close a moment before the exit is visible
        for process in processes:
            process.join(timeout=0.1 if process.exitcode is None else 0)
        failed = [process for process in processes if process.exitcode is not None]
        failed = failed or processes
        self._finalizer()
        pids = ", ".join(str(process.pid) for process in failed)
        causes = "; ".join(_exit_description(process) for process in failed)
        return RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly ({causes})")
