"""Prints what a rank sees: torchrun's variables, its arguments and its rank in the group."""

import os
import sys

import lucid.distributed as dist

names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMP_NUM_THREADS")
seen = " ".join(f"{name}={os.environ.get(name)}" for name in names)
dist.init_process_group()
assert dist.get_rank() == int(os.environ["RANK"])
assert dist.get_world_size() == int(os.environ["WORLD_SIZE"])
print(f"{seen} argv={sys.argv[1:]} main={__name__}", flush=True)
if "--fail-on-rank-1" in sys.argv and dist.get_rank() == 1:
    sys.exit(3)
if "--raise-on-rank-1" in sys.argv and dist.get_rank() == 1:
    raise ValueError("planted on rank 1")
dist.barrier()
print(f"PASSED rank {dist.get_rank()}", flush=True)
