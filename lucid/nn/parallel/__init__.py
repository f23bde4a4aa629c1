"""Parallel wrappers of a module: DataParallel (in one process)."""

from lucid.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]
