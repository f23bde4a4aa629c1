"""What `import lucid` must not load: lucid's first-use parts, optional dependencies and standard
library modules that only some calls need. A module count rather than a timing, since shared
machines are too noisy to time; benchmarks/bench_import.py measures the time itself."""

from __future__ import annotations

import json
import subprocess
import sys

# Each loads on first use (lucid/__init__.py's __getattr__, or a function that imports it).
LUCID_FIRST_USE = [
    "lucid.nn",
    "lucid.optim",
    "lucid.utils",
    "lucid.debug",
    "lucid.linalg",
    "lucid.special",
    "lucid.distributions",
    "lucid.ops.special_functions",
    "lucid.ops.decompositions",
    "lucid.ops.lobpcg",
    "lucid.autograd.profiler",
    "lucid.distributed",
    "lucid.amp",
    "lucid.cuda",
    "lucid._process",
    "lucid._dynamo",
    "lucid._inductor",
    "lucid._absent",  # why lucid lacks a torch name, read when a lookup fails
]
# Optional or first-use dependencies: torch (lucid.debug.torch), scipy and PIL (tests and
# lucid.utils), ml_dtypes (bfloat16's first NumPy use), threadpoolctl (lucid.set_num_threads),
# mpi4py (lucid.distributed).
THIRD_PARTY = ["torch", "scipy", "PIL", "ml_dtypes", "threadpoolctl", "mpi4py"]
# Standard library modules NumPy does not load either, which only a few lucid calls need.
STANDARD_LIBRARY = [
    "decimal",  # erfc's exp tables, built on its first call
    "fractions",
    "statistics",
    "json",
    "logging",
    "subprocess",
    "multiprocessing",
    "concurrent.futures",
    "asyncio",
    "socket",
    "tempfile",
    "shutil",
    "zipfile",
    "tarfile",
    "gzip",
    "argparse",
    "pprint",
    "difflib",
    "uuid",
    "unittest",
    "importlib.metadata",
    "pkgutil",
    "tracemalloc",
    "cProfile",
    "pstats",
    "csv",
    "queue",
    "email",
    "http",
    "xml",
]


def _modules_loaded_by_import_lucid() -> set[str]:
    """Modules `import lucid` adds in a fresh interpreter (the interpreter's start-up ones, such
    as an editable install's finder, are left out)."""
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import lucid\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout))


def test_import_lucid_loads_no_first_use_part_and_no_heavy_module():
    loaded = _modules_loaded_by_import_lucid()
    assert "lucid.ops.pointwise" in loaded  # the scan sees what `import lucid` loads
    unwanted = LUCID_FIRST_USE + THIRD_PARTY + STANDARD_LIBRARY
    assert sorted(name for name in unwanted if name in loaded) == []
