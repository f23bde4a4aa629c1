"""Parallel wrappers of a module, mirroring torch.nn.parallel: DataParallel (in one process)
and DistributedDataParallel (one replica per process, over lucid.distributed)."""

from typing import Any

from lucid.nn.parallel.data_parallel import DataParallel
from lucid.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
