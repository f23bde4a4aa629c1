"""Import time of lucid against NumPy's, each the median over fresh interpreters.

    python benchmarks/bench_import.py               # 15 processes each
    python benchmarks/bench_import.py --runs 31 --importtime

Each run is a new `python -c` that times `import <module>` with perf_counter, so the
interpreter's own start is left out. The runs of lucid and NumPy alternate, so drift on a shared
machine hits both alike. Two settings are timed: the environment as it is, and with bytecode
cached (PYTHONPYCACHEPREFIX in a temporary folder, PYTHONDONTWRITEBYTECODE unset). They differ
where PYTHONDONTWRITEBYTECODE is set over an editable install: no `.pyc` of lucid exists, so
every import compiles lucid's source again (about 1 MB of it, most of the import's time), while
NumPy's installed `.pyc` files are read. `--importtime` adds the sum of lucid's own module self
times from `python -X importtime` and the ten costliest modules by self time, in both settings.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

TIMER = "import time; s = time.perf_counter(); import {module}; print(time.perf_counter() - s)"
IMPORTTIME_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def time_import(module: str, environment: dict[str, str]) -> float:
    """Seconds one fresh interpreter takes to import `module`."""
    result = subprocess.run(
        [sys.executable, "-c", TIMER.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return float(result.stdout.strip())


def self_times(environment: dict[str, str]) -> list[tuple[int, str]]:
    """(self microseconds, module) for every module `import lucid` loads."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import lucid"],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    rows = []
    for line in result.stderr.splitlines():
        match = IMPORTTIME_LINE.match(line)
        if match:
            rows.append((int(match[1]), match[4]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per module")
    parser.add_argument("--importtime", action="store_true", help="add -X importtime's view")
    args = parser.parse_args()

    cached = dict(os.environ)
    cached.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as cache:
        cached["PYTHONPYCACHEPREFIX"] = cache
        settings = {"as the environment is": dict(os.environ), "bytecode cached": cached}
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            print("PYTHONDONTWRITEBYTECODE is set: nothing imported writes bytecode")
        for setting, environment in settings.items():
            time_import("lucid", environment)  # writes the bytecode cache, where one is kept
            times: dict[str, list[float]] = {"lucid": [], "numpy": []}
            for _ in range(args.runs):
                for module in times:
                    times[module].append(time_import(module, environment))
            print(f"{setting}:")
            for module, samples in times.items():
                quartiles = statistics.quantiles(samples, n=4)
                print(
                    f"  import {module:<6} median {1000 * statistics.median(samples):6.1f} ms "
                    f"(25th-75th percentile {1000 * quartiles[0]:.1f}-"
                    f"{1000 * quartiles[2]:.1f} ms, {args.runs} processes)"
                )
            if args.importtime:
                rows = self_times(environment)
                own = sum(us for us, name in rows if name.split(".")[0] == "lucid")
                print(f"  -X importtime: lucid modules' self time {own / 1000:.1f} ms")
                for us, name in sorted(rows, reverse=True)[:10]:
                    print(f"    {us / 1000:6.1f} ms  {name}")


if __name__ == "__main__":
    main()
