"""A rank that dies or stalls: the others must fail with DistBackendError within the timeout.

argv[1] is what rank 1 does before the job's first all_reduce: "stall" (sleeps far past the
timeout), "kill" (SIGKILLs itself), "absent" (starts MPI but never calls init_process_group)
or "recv" (rank 0 waits, with a timeout of its own, for a message rank 1 never sends). A rank
that never starts MPI at all holds the others in MPI's own start-up, which only the launcher
bounds.
"""

import os
import signal
import sys
import time
from datetime import timedelta

import lucid
import lucid.distributed as dist

TIMEOUT = timedelta(seconds=2)
mode = sys.argv[1]
if mode == "absent" and os.environ["PMI_RANK"] == "1":
    from mpi4py import MPI  # noqa: F401

    time.sleep(60)
try:
    dist.init_process_group("mpi", timeout=TIMEOUT)
except dist.DistBackendError as error:
    print(f"rank {os.environ['PMI_RANK']} caught DistBackendError: {error}", flush=True)
    raise
rank = dist.get_rank()
print(f"rank {rank} started", flush=True)
if mode == "recv":
    if rank == 0:
        work = dist.irecv(lucid.zeros(2), src=1)
        try:
            work.wait(timeout=timedelta(milliseconds=300))
        except dist.DistBackendError as error:
            print(f"rank 0 caught DistBackendError: {error}", flush=True)
            assert not work.is_success()
            raise
    else:
        time.sleep(30)
if rank == 1:
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)

x = lucid.ones(4)
start = time.monotonic()
try:
    dist.all_reduce(x)
except dist.DistBackendError as error:
    waited = time.monotonic() - start
    print(f"rank {rank} caught DistBackendError after {waited:.1f} s: {error}", flush=True)
    try:
        dist.broadcast(x, src=0)
    except dist.DistBackendError as again:
        print(f"rank {rank} then: {again}", flush=True)
    raise
print(f"rank {rank} finished the all_reduce", flush=True)
