"""Parallel wrappers of a module, mirroring torch.nn.parallel: DataParallel (in one process)
and DistributedDataParallel (one replica per process, over lucid.distributed)."""

from lucid.nn.parallel.data_parallel import DataParallel
from lucid.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
