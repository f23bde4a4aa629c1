"""`python -m lucid.debug run` on unmodified PyTorch scripts, from a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.torch_oracle import requires_torch

pytestmark = requires_torch

ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = """\
import sys
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    x = torch.ones(2, 4) * (0.0 if step == BAD_STEP else 1.0)
    optimizer.zero_grad()
    out = model(x)
    loss = (out / x.sum()).pow(2).mean()
    loss.backward()
    optimizer.step()
print("finished")
EXIT
"""


def _run(tmp_path, *arguments, bad_step=-1, ending="", name="train.py"):
    script = tmp_path / name
    script.write_text(_SCRIPT.replace("BAD_STEP", str(bad_step)).replace("EXIT", ending))
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "lucid.debug", "run", *arguments],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_birth_in_the_loss_code_is_named_by_a_rerun_of_its_step(tmp_path):
    result = _run(tmp_path, "train.py", bad_step=3)
    assert result.returncode == 1, result.stderr
    assert "finished" not in result.stdout
    first, _, rerun = result.stderr.partition("running the script again with step 3")
    # The in-process replay of the model stays finite: the loss code made it.
    assert "An inf value was made in the loss code (outside the model)" in first
    assert "  step: 3" in first
    assert "Function 'div' returned inf values in its 0th output." in rerun
    assert "  phase: loss" in rerun and "  mechanism: division by zero" in rerun
    assert f"  at: {tmp_path / 'train.py'}:11" in rerun
    assert "the rerun's losses equal the first run's, bitwise, for the 3 steps" in rerun


def test_rerun_never_prints_the_first_report_only(tmp_path):
    result = _run(tmp_path, "--rerun", "never", "train.py", bad_step=3)
    assert result.returncode == 1
    assert "running the script again" not in result.stderr


def test_a_clean_torch_script_keeps_its_exit_code(tmp_path):
    result = _run(tmp_path, "train.py")
    assert (result.returncode, result.stdout.strip()) == (0, "finished")
    result = _run(tmp_path, "train.py", ending="sys.exit(3)")
    assert result.returncode == 3


def test_a_script_raising_its_own_error_keeps_its_traceback(tmp_path):
    result = _run(tmp_path, "train.py", ending="raise KeyError('mine')")
    assert result.returncode == 1
    assert "KeyError: 'mine'" in result.stderr


def test_dash_m_runs_a_module(tmp_path):
    package = tmp_path / "project"
    package.mkdir()
    (package / "__init__.py").write_text("")
    result = _run(tmp_path, "--torch", "-m", "project.train", bad_step=2, name="project/train.py")
    assert result.returncode == 1, result.stderr
    assert "  step: 2" in result.stderr


def test_the_reproducer_bundle_re_runs_the_op_that_made_the_value(tmp_path):
    script = tmp_path / "forward.py"
    script.write_text(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 1)\n"
        "    def forward(self, x):\n"
        "        return torch.log(self.fc(x) - 1e6)\n"
        "model = Net()\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(3):\n"
        "    optimizer.zero_grad()\n"
        "    model(torch.ones(2, 4)).mean().backward()\n"
        "    optimizer.step()\n"
    )
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    bundle = tmp_path / "bundle.safetensors"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "lucid.debug",
            "run",
            "--rerun",
            "never",
            "--repro",
            str(bundle),
            "forward.py",
        ],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert f"re-raise it with: python -m lucid.debug repro {bundle}" in result.stderr
    again = subprocess.run(
        [sys.executable, "-m", "lucid.debug", "repro", str(bundle)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 1, again.stderr
    assert "reproduced: aten.log.default made nan values again" in again.stderr
