"""Entry points of the processes tests/test_multiprocessing.py starts, in a module that imports
only lucid, so that a spawned child (which imports the module again) starts quickly."""

from __future__ import annotations

import os
import sys

import lucid


def put_scaled(index: int, queue, values: lucid.Tensor) -> None:
    queue.put((index, values * (index + 1)))


def raise_in_second(index: int) -> None:
    if index == 1:
        raise ValueError("child failed on purpose")


def exit_with_code(index: int) -> None:
    sys.exit(3)


def kill_itself(index: int) -> None:
    os.kill(os.getpid(), 9)


def modify(index: int, values: lucid.Tensor) -> None:
    values.add_(1.0)
