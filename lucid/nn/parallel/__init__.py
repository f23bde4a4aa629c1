"""lucid.nn.parallel: data-parallel training over lucid.distributed, mirroring torch.nn.parallel."""

from lucid.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
