"""lucid.multiprocessing: Python's multiprocessing, plus torch's sharing-strategy switches and
`spawn`/`start_processes`, which start N processes and raise the first one's failure.

Every name of the standard module is re-exported, so ``import lucid.multiprocessing as mp``
replaces ``import multiprocessing``. Importing it registers, as torch does, how tensors travel
through multiprocessing's queues, pipes and process arguments. Where torch moves a tensor's
storage into shared memory, a lucid tensor is a NumPy array and is sent by value: the receiver
gets a copy, and its writes are not seen by the sender (with the fork method the child also
inherits a copy of the parent's memory). The sharing strategy is kept and checked as torch's
is, and changes nothing.
"""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *  # noqa: F403

from lucid.multiprocessing._reductions import init_reductions
from lucid.multiprocessing._spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__
__all__ += [
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "start_processes",
]

# torch's defaults per platform: macOS and Windows cannot pass file descriptors between
# processes the way torch's shared-memory tensors need
if sys.platform in ("darwin", "win32"):
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy: str) -> None:
    """Set the strategy for sharing CPU tensors (recorded only: lucid tensors pickle by
    value)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this platform supports."""
    return _all_sharing_strategies


init_reductions()
