"""Intra-op parallelism: large array work split across a small pool of threads.

NumPy releases the GIL inside ufunc loops and array copies, so one op's work on a large
array, cut into row ranges, runs on several cores at once, as PyTorch's intra-op threads do.
BLAS calls are left alone: they have their own threads.

Work below `GRAIN` elements runs on the calling thread: handing a range to a worker costs
about 20 microseconds, the time to stream some 50k elements.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from queue import SimpleQueue

import numpy as np

from lucid.autograd import observers
from lucid.autograd.grad_mode import local_state

__all__ = ["get_num_threads", "set_num_threads", "parallel_for", "elementwise", "copy", "GRAIN"]

GRAIN = 1 << 16
# NumPy's floating-point flags kept per op, as the sentinel's callback keeps them.
_FLAGS_KEPT = 8

_numpy_state = observers.numpy_state


def _default_threads() -> int:
    # PyTorch reads OMP_NUM_THREADS too; without it, every core this process may use.
    configured = os.environ.get("OMP_NUM_THREADS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity masks
        return os.cpu_count() or 1


_threads = _default_threads()


def get_num_threads() -> int:
    """The number of threads lucid uses to split one op's work (BLAS keeps its own)."""
    return _threads


def set_num_threads(num_threads: int) -> None:
    """Set the number of threads that split one op's work; 1 runs everything in the caller."""
    global _threads
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(
            f"set_num_threads(): argument 'int' must be int, not {type(num_threads).__name__}"
        )
    if num_threads <= 0:
        raise RuntimeError("Number of threads must be positive")
    _threads = num_threads


class _Pool:
    """Worker threads, each fed through its own queue; one op uses the pool at a time."""

    def __init__(self, size: int) -> None:
        self.pid = os.getpid()
        self.size = size
        self.lock = threading.Lock()
        self.done: SimpleQueue = SimpleQueue()
        self.queues: list[SimpleQueue] = []
        for index in range(size):
            tasks: SimpleQueue = SimpleQueue()
            worker = threading.Thread(
                target=_serve, args=(tasks, self.done), name=f"lucid-worker-{index}", daemon=True
            )
            worker.start()
            self.queues.append(tasks)


def _serve(tasks: SimpleQueue, done: SimpleQueue) -> None:
    state = local_state
    while True:
        work, start, stop, numpy_extobj = tasks.get()
        # The caller's NumPy error state, so the sentinel's flags fire here too; they are
        # handed back to the caller, whose op they belong to.
        token = _numpy_state.set(numpy_extobj)
        try:
            work(start, stop)
            outcome = state.pending_flags
        except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread
            outcome = error
        finally:
            _numpy_state.reset(token)
            state.pending_flags = None
        done.put(outcome)


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _get_pool(size: int) -> _Pool:
    global _pool
    pool = _pool
    # A forked child inherits the pool object but not its threads.
    if pool is None or pool.size < size or pool.pid != os.getpid():
        with _pool_lock:
            pool = _pool
            if pool is None or pool.size < size or pool.pid != os.getpid():
                pool = _pool = _Pool(size)
    return pool


def parallel_for(work: Callable[[int, int], None], count: int, elements: int) -> None:
    """Run `work(start, stop)` over disjoint ranges covering [0, count).

    `elements` is the total work in array elements; small work, a single thread, or a pool
    already busy (another thread's op, or a nested call) runs `work(0, count)` right here.
    Each range must write its own part of the output and read nothing another range writes.
    """
    parts = min(_threads, count, elements // (GRAIN // 2))
    if parts < 2:
        work(0, count)
        return
    pool = _get_pool(parts - 1)
    if not pool.lock.acquire(blocking=False):
        work(0, count)
        return
    try:
        numpy_extobj = _numpy_state.get()
        bounds = [count * part // parts for part in range(parts + 1)]
        for part in range(1, parts):
            pool.queues[part - 1].put((work, bounds[part], bounds[part + 1], numpy_extobj))
        error = None
        try:
            work(bounds[0], bounds[1])
        except BaseException as raised:  # noqa: BLE001 - the workers must be collected first
            error = raised
        for _ in range(parts - 1):
            outcome = pool.done.get()
            if isinstance(outcome, BaseException):
                error = error or outcome
            elif outcome:
                _merge_flags(outcome)
        if error is not None:
            raise error
    finally:
        pool.lock.release()


def _merge_flags(flags: list) -> None:
    state = local_state
    pending = state.pending_flags
    if pending is None:
        state.pending_flags = flags[:_FLAGS_KEPT]
    else:
        pending.extend(flags[: _FLAGS_KEPT - len(pending)])


def elementwise(ufunc: Callable, inputs: tuple, out: np.ndarray) -> np.ndarray:
    """`ufunc(*inputs, out=out)`, split into ranges when `out` is large.

    A C-contiguous `out` is split as a flat array, together with every input of its shape
    that is C-contiguous too; otherwise ranges of the first axis are split. Any other input
    (a scalar, or an array that broadcasts) goes whole to every range.
    """
    size = out.size
    if size < GRAIN or out.ndim == 0:
        ufunc(*inputs, out=out)
        return out
    shape = out.shape
    if out.flags.c_contiguous and all(
        not isinstance(value, np.ndarray)
        or value.ndim == 0
        or (value.shape == shape and value.flags.c_contiguous)
        for value in inputs
    ):
        target = out.reshape(-1)
        inputs = tuple(
            value.reshape(-1) if isinstance(value, np.ndarray) and value.ndim else value
            for value in inputs
        )
        count = size
    else:
        target = out
        count = shape[0]
    split = tuple(
        isinstance(value, np.ndarray) and value.ndim == target.ndim and value.shape[0] == count
        for value in inputs
    )

    def work(start: int, stop: int) -> None:
        parts = [value[start:stop] if is_split else value for value, is_split in zip(inputs, split)]
        ufunc(*parts, out=target[start:stop])

    parallel_for(work, count, size)
    return out


def copy(array: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `array`, ranges of its first axis copied in parallel."""
    out = np.empty(array.shape, array.dtype)
    if array.size < GRAIN or array.ndim == 0:
        out[...] = array
        return out

    def work(start: int, stop: int) -> None:
        out[start:stop] = array[start:stop]

    parallel_for(work, array.shape[0], array.size)
    return out
