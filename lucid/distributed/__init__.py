"""Data-parallel communication on MPI, mirroring torch.distributed.

Start a job with `python -m lucid.distributed.run --nproc-per-node N script.py args...` or
with MPI's own launcher, `mpiexec -n N python script.py args...`; in the script,
`init_process_group("mpi")` joins it (so does "gloo", what CPU torch scripts write; "nccl"
raises, since lucid has no CUDA). Collectives write into their tensors in place and, as in
torch, are not recorded by autograd: no gradient flows through `all_reduce` and its kin.

Needs mpi4py and an MPI: `pip install mpi4py mpich` (from a lucid checkout, the `distributed`
extra: `pip install -e ".[distributed]"`).
Every blocking call waits at most the group's `timeout`, then raises DistBackendError; after
that the group is unusable and the rank aborts the MPI job at exit rather than hang in MPI's
shutdown. An uncaught exception on a rank ends the whole job too (its peers would otherwise
wait for it in their next collective). When a rank dies of a signal or exits non-zero, MPI's
launcher (MPICH's hydra) ends the job at once; a rank that never starts MPI holds the others
in MPI's own start-up, which only the launcher (or a job timeout) bounds.

Objects go over the wire as JSON, never as pickles: `broadcast_object_list` and
`all_gather_object` take JSON-able objects only.
"""

from typing import Any

from lucid.distributed.collectives import (
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    send,
)
from lucid.distributed.process_group import (
    Backend,
    DistBackendError,
    DistError,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    new_group,
)

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
