"""lucid.autograd.profiler loads on first use: `import lucid` pays for no profiler, no sqlite3."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_lucid_loads_no_profiler_and_no_sqlite3():
    code = (
        "import sys, lucid\n"
        "print(sorted(m for m in sys.modules if m == 'sqlite3' or 'profiler' in m"
        " or m == 'lucid.autograd.functional'))\n"
    )
    assert _run(code) == "[]"


def test_profiler_is_an_attribute_of_lucid_autograd_after_import_lucid():
    code = (
        "import lucid\n"
        "with lucid.autograd.profiler.profile() as prof:\n"
        "    lucid.ones(2) * 2\n"
        "print([event.name for event in prof.events()])\n"
    )
    assert _run(code) == "['mul']"


def test_profiler_imports_by_name_and_loads_sqlite3_only_to_read_a_trace():
    code = (
        "import sys\n"
        "import lucid.autograd.profiler\n"
        "from lucid.autograd.profiler import load_nvprof, profile\n"
        "from lucid.autograd import profiler\n"
        "assert profiler is lucid.autograd.profiler and profile is profiler.profile\n"
        "print('sqlite3' in sys.modules)\n"
    )
    assert _run(code) == "False"


def test_functional_is_an_attribute_of_lucid_autograd_after_import_lucid():
    code = (
        "import lucid\n"
        "x = lucid.tensor([1.0, 2.0])\n"
        "print(lucid.autograd.functional.jacobian(lambda t: t * t, x).tolist())\n"
        "print('functional' in dir(lucid.autograd), 'profiler' in dir(lucid.autograd))\n"
    )
    assert _run(code) == "[[2.0, 0.0], [0.0, 4.0]]\nTrue True"


def test_unknown_attribute_of_lucid_autograd_raises_attribute_error():
    code = (
        "import lucid\n"
        "try:\n"
        "    lucid.autograd.no_such_tool\n"
        "except AttributeError as error:\n"
        "    print(error)\n"
    )
    assert _run(code) == "module 'lucid.autograd' has no attribute 'no_such_tool'"
