"""A CPU torch script's `init_process_group("gloo")` on MPI: one note per process, and the
collectives as under "mpi"; each rank prints PASSED when its checks hold."""

import warnings
from datetime import timedelta

import lucid
import lucid.distributed as dist

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.init_process_group(backend="gloo", timeout=timedelta(seconds=30))
    rank, world = dist.get_rank(), dist.get_world_size()
    total = lucid.ones(2) * (rank + 1)
    dist.all_reduce(total)
    assert total.tolist() == [world * (world + 1) / 2] * 2, total.tolist()
    pair = dist.new_group([0, 1], backend=dist.Backend.GLOO)
    dist.barrier(group=pair)
    dist.destroy_process_group()
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    dist.barrier()

notes = [warning for warning in caught if "runs backend='gloo' on MPI" in str(warning.message)]
assert len(notes) == 1, [str(warning.message) for warning in caught]
assert notes[0].category is UserWarning and notes[0].filename == __file__, notes[0]
assert dist.get_backend() == "mpi"
print(f"PASSED rank {rank}", flush=True)
