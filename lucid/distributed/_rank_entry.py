"""The start of one rank under `python -m lucid.distributed.run`: torchrun's environment
variables from MPI's, then the user's script as `__main__`.

Run as a file by mpiexec: `python _rank_entry.py -- script.py args...` (or `-m module args...`).
"""

import os
import runpy
import sys
import time
import traceback


def main() -> None:
    mode, target, *arguments = sys.argv[1:]
    # MPICH's hydra gives each rank PMI_RANK and PMI_SIZE, and its place on the node in
    # MPI_LOCALRANKID and MPI_LOCALNRANKS.
    rank = os.environ.get("PMI_RANK", "0")
    size = os.environ.get("PMI_SIZE", "1")
    os.environ["RANK"] = rank
    os.environ["WORLD_SIZE"] = size
    os.environ["LOCAL_RANK"] = os.environ.get("MPI_LOCALRANKID", rank)
    os.environ["LOCAL_WORLD_SIZE"] = os.environ.get("MPI_LOCALNRANKS", size)
    sys.argv = [target, *arguments]
    try:
        if mode == "-m":
            sys.path[0] = os.getcwd()
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            # The script's folder, not this file's, is the first place its imports look.
            sys.path[0] = os.path.dirname(os.path.abspath(target))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exit:
        if exit.code not in (None, 0):
            _abort(exit.code if isinstance(exit.code, int) else 1, None)
        raise
    except BaseException as error:
        _abort(1, error)
        raise


def _abort(status: int, error: BaseException | None) -> None:
    """End every rank now: a rank that failed must not leave its peers waiting for it in their
    next collective (nor itself wait for them in MPI_Finalize)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    if error is not None:
        traceback.print_exception(error)
    sys.stdout.flush()
    sys.stderr.flush()
    # MPI's launcher tears the job down at once; give it a moment to forward this output first.
    time.sleep(0.2)
    mpi.COMM_WORLD.Abort(status)


if __name__ == "__main__":
    main()
