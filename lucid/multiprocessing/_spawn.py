"""spawn and start_processes: start N processes running fn(i, *args), and on the first failure
stop the others and raise it, with the child's traceback."""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "start_processes",
]

log = logging.getLogger(__name__)

# Linux's prctl option that sends the child a signal when its parent dies
_PR_SET_PDEATHSIG = 1


class ProcessException(Exception):
    """A process started by start_processes failed: which one (`error_index`) and its pid."""

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed with an exception in fn; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process exited with a non-zero code, or was killed by a signal."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> tuple:
        arguments = (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)
        return type(self), arguments


def _die_with_parent() -> None:
    # a child whose parent was killed would otherwise run on as an orphan; torch sets the
    # same signal from C
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)
        except (OSError, AttributeError):
            pass


def _run(fn: Callable, index: int, args: tuple, error_file: str) -> None:
    """A child's entry point: run fn(index, *args) and leave its traceback for the parent."""
    _die_with_parent()
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped this process with SIGINT, after another one failed
    except Exception:
        with open(error_file, "wb") as file:
            pickle.dump(traceback.format_exc(), file)
        sys.exit(1)


class ProcessContext:
    """The processes start_processes started, with `join` to wait for them."""

    def __init__(self, processes: list, error_files: list[str]) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(process.pid) for process in self.processes]

    def _join_all(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to `timeout` seconds for processes to end; True once all have.

        When one has failed, the others get `grace_period` seconds to end, then SIGTERM, then
        SIGKILL, and the failure is raised: ProcessRaisedException with the child's
        traceback, or ProcessExitedException with its exit code or signal.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels

        if grace_period is not None:
            self._join_all(grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning(
                    "Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                    process.pid,
                )
                process.kill()
            process.join()

        failed = self.processes[error_index]
        error_file = self.error_files[error_index]
        if not os.access(error_file, os.R_OK):
            exit_code = failed.exitcode
            if exit_code < 0:
                try:
                    name = signal.Signals(-exit_code).name
                except ValueError:
                    name = f"<Unknown signal {-exit_code}>"
                raise ProcessExitedException(
                    f"process {error_index:d} terminated with signal {name}",
                    error_index=error_index,
                    error_pid=failed.pid,
                    exit_code=exit_code,
                    signal_name=name,
                )
            raise ProcessExitedException(
                f"process {error_index:d} terminated with exit code {exit_code:d}",
                error_index=error_index,
                error_pid=failed.pid,
                exit_code=exit_code,
            )
        with open(error_file, "rb") as file:
            original_trace = pickle.load(file)
        os.unlink(error_file)
        message = f"\n\n-- Process {error_index:d} terminated with the following error:\n"
        raise ProcessRaisedException(message + original_trace, error_index, failed.pid)


def start_processes(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start `nprocs` processes running ``fn(i, *args)`` with the given start method; wait for
    them all when `join`, else return their ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes = []
    error_files = []
    for index in range(nprocs):
        # a name no file has: the child creates it only to report an exception
        file = tempfile.NamedTemporaryFile(
            prefix="lucid-errorfile-", suffix=".pickle", delete=False
        )
        file.close()
        os.unlink(file.name)
        process = context.Process(target=_run, args=(fn, index, args, file.name), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(file.name)
    process_context = ProcessContext(processes, error_files)
    if not join:
        return process_context
    while not process_context.join():
        pass
    return None


def spawn(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start `nprocs` processes with the spawn method running ``fn(i, *args)``; see
    start_processes. `fn` must be importable (defined at a module's top level).

    Example::

        def train(rank, world_size): ...

        lucid.multiprocessing.spawn(train, args=(2,), nprocs=2)
    """
    if start_method != "spawn":
        message = (
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " lucid.multiprocessing.start_processes(...)"
        )
        warnings.warn(message, FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
