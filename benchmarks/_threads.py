"""The thread count of a side-by-side benchmark, for every side alike: import before NumPy.

`--threads N` on the command line sets the BLAS and OpenMP pools of NumPy and torch through
the environment, before either loads; without it, OMP_NUM_THREADS (default 2) does. The
scripts give torch the same count, so no side's own setting overrides the other's.
"""

from __future__ import annotations

import os
import sys


def _asked_for(argv: list[str]) -> str | None:
    for index, argument in enumerate(argv):
        if argument == "--threads" and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith("--threads="):
            return argument.split("=", 1)[1]
    return None


_asked = _asked_for(sys.argv)
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    if _asked is not None:
        os.environ[_variable] = _asked
    else:
        os.environ.setdefault(_variable, os.environ.get("OMP_NUM_THREADS", "2"))
THREADS = int(os.environ["OMP_NUM_THREADS"])
