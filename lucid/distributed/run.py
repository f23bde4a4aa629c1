"""The launcher: `python -m lucid.distributed.run --nproc-per-node N script.py args...` starts N
ranks of `script.py` through the installed MPI's `mpiexec`, as torchrun does for torch.

Each rank finds RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE in its environment, as under
torchrun. `mpiexec -n N python script.py args...` works as well; then `init_process_group` sets
those variables. When a rank fails, MPI's launcher stops the others and the job's exit status
is non-zero.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from lucid.distributed.process_group import _INSTALL_COMMAND

# Run as a file, not a module: the per-rank start needs nothing of lucid before the script runs.
_RANK_ENTRY = Path(__file__).with_name("_rank_entry.py")


def find_mpiexec(python: str = sys.executable) -> str | None:
    """`mpiexec` beside the interpreter (a virtual environment's MPI wheel puts it there), else
    the first on PATH."""
    beside = Path(python).parent / "mpiexec"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("mpiexec")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lucid.distributed.run",
        description="Start N ranks of a training script on this machine through MPI's mpiexec.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--nproc-per-node",
        "--nproc_per_node",
        dest="nproc_per_node",
        type=int,
        default=1,
        help="number of ranks to start (default 1)",
    )
    parser.add_argument(
        "-m",
        "--module",
        action="store_true",
        help="run the script argument as a module, as `python -m` does",
    )
    parser.add_argument("script", help="the training script (or module, with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser


def command(
    nproc_per_node: int, script: str, script_args: list[str], module: bool, mpiexec: str
) -> list[str]:
    """The mpiexec command line that starts the ranks."""
    entry = [str(_RANK_ENTRY), "-m" if module else "--", script, *script_args]
    return [mpiexec, "-n", str(nproc_per_node), sys.executable, *entry]


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    if options.nproc_per_node < 1:
        raise SystemExit(
            f"lucid.distributed.run: --nproc-per-node must be at least 1, got "
            f"{options.nproc_per_node}"
        )
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit(
            f"lucid.distributed.run: no mpiexec next to {sys.executable} or on PATH; "
            f"MPICH has one: {_INSTALL_COMMAND}"
        )
    env = dict(os.environ)
    if options.nproc_per_node > 1:
        # As torchrun: one BLAS thread per rank unless asked otherwise, since the ranks already
        # share the cores.
        env.setdefault("OMP_NUM_THREADS", "1")
    line = command(
        options.nproc_per_node, options.script, options.script_args, options.module, mpiexec
    )
    status = subprocess.call(line, env=env)
    if status != 0:
        print(
            f"lucid.distributed.run: the job failed (mpiexec exit status {status}); when one "
            "rank fails, MPI's launcher stops the others",
            file=sys.stderr,
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
