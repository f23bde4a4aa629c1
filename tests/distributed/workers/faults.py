"""A rank that dies or stalls: the others must fail with DistBackendError within the timeout.

argv[1] is what rank 1 does before the job's first all_reduce: "stall" (sleeps far past the
timeout), "kill" (SIGKILLs itself) or "late" (sleeps past the timeout, then catches up).
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
if rank == 1:
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60 if mode == "stall" else 4)

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
