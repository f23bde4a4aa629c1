"""The README's worked example of "Debugging a PyTorch program" runs and prints what it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.torch_oracle import requires_torch

pytestmark = requires_torch

ROOT = Path(__file__).resolve().parents[3]


def _blocks() -> tuple[str, str]:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Debugging a PyTorch program") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    output = re.search(r"```text\n\$ python train_torch.py\n\.\.\.\n(.*?)```", section, re.S)
    return code, output.group(1)


def test_readme_torch_example_prints_what_the_readme_shows(tmp_path):
    code, expected = _blocks()
    (tmp_path / "train_torch.py").write_text(code)
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "train_torch.py"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    printed = result.stderr.replace(str(tmp_path) + os.sep, "/tmp/torch/")
    shown = _rounded(expected).rstrip("\n").splitlines()
    assert _rounded(printed).rstrip("\n").splitlines()[-len(shown) :] == shown


def _rounded(text: str) -> str:
    # The statistics come out of a matmul, whose last bits depend on the CPU's kernel.
    return re.sub(r"-?\d+\.\d+(e[-+]\d+)?", lambda m: f"{float(m.group()):.5g}", text)
