"""The README's worked example of "Mixed precision" runs and prints what the README shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _blocks() -> tuple[str, str]:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("A worked example: float32 weights") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    output = re.search(r"```text\n\$ python train_fp16.py\n(.*?)```", section, re.S).group(1)
    return code, output


def test_readme_worked_example_prints_what_the_readme_shows(tmp_path):
    code, expected = _blocks()
    script = tmp_path / "train_fp16.py"
    script.write_text(code)
    environment = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="default")
    result = subprocess.run([sys.executable, "train_fp16.py"], cwd=tmp_path, env=environment,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    printed = (result.stderr + result.stdout).replace(str(tmp_path) + os.sep, "/tmp/amp/")
    shown = expected.rstrip("\n").splitlines()
    # stderr (log lines, the warning) and stdout interleave on a terminal; compare each stream
    assert sorted(printed.rstrip("\n").splitlines()) == sorted(shown)
    assert "overflow in the backward of addmm" in expected
    assert "division by zero in the backward of sqrt" in expected
