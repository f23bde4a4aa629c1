"""`python -m lucid.debug`: runs a training script under the checks, prints the root cause of
the first non-finite value with a reproducer, and exits non-zero; a clean run exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import lucid
from lucid.debug import cli, read_repro

_TRAIN = """\
import sys
import lucid
from lucid import nn


class ZeroNorm(nn.Module):
    def forward(self, x):
        std = x.std(dim=0, unbiased=False)
        return (x - x.mean(dim=0)) / std


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = ZeroNorm()
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.norm(self.fc(x)))


lucid.manual_seed(0)
model = Net()
loss_fn = nn.MSELoss()
optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
bad_step = int(sys.argv[1])
for step in range(5):
    # a batch of one example at bad_step: its standard deviation is 0
    x = lucid.randn(8, 4) if step != bad_step else lucid.ones(1, 4)
    optimizer.zero_grad()
    loss = loss_fn(model(x), lucid.zeros(len(x), 1))
    loss.backward()
    optimizer.step()
print("finished")
"""


def _script(tmp_path: Path, source: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lucid.debug", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(lucid.__file__).parent.parent)},
    )


def test_help_documents_run_and_repro(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: python -m lucid.debug")
    assert "python -m lucid.debug run train.py [args...]" in text
    assert "python -m lucid.debug repro BUNDLE" in text
    assert "exit code is 1" in text


def test_clean_script_runs_with_its_arguments_and_exits_zero(tmp_path) -> None:
    _script(tmp_path, _TRAIN)
    result = _run("run", "train.py", "99", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "finished\n"
    assert "lucid.debug" not in result.stderr
    assert not (tmp_path / "lucid_repro.safetensors").exists()


def test_nan_script_prints_the_root_cause_saves_a_reproducer_and_fails(tmp_path) -> None:
    script = _script(tmp_path, _TRAIN)
    result = _run("run", "train.py", "3", cwd=tmp_path)
    assert result.returncode == 1
    assert "finished" not in result.stdout
    report = result.stderr
    assert "op:        div (forward)" in report
    assert f"line:      {script}:9" in report
    assert "return (x - x.mean(dim=0)) / std" in report
    assert "module:    norm (ZeroNorm) in Net" in report
    assert "step:      3 (the training iteration, from 0" in report
    assert "mechanism: invalid operation" in report
    assert "input 1:   shape=[4] dtype=lucid.float32 min=0.0 max=0.0 nan=0 inf=0" in report
    bundle_path = tmp_path / "lucid_repro.safetensors"
    assert f"reproducer: {bundle_path}" in report
    bundle = read_repro(bundle_path)
    assert bundle.metadata["step"] == 3 and bundle.metadata["module_type"] == "ZeroNorm"
    assert bundle.batch[0].shape == (1, 4) and set(bundle.model_state) == {
        "fc.weight", "fc.bias", "out.weight", "out.bias"
    }  # fmt: skip

    replayed = _run("repro", str(bundle_path), cwd=tmp_path)
    assert replayed.returncode == 1
    assert "reproduced: Function 'div' returned nan values" in replayed.stderr


def test_backward_nan_report_and_reproducer_name_the_backward_op(tmp_path, capsys) -> None:
    _script(
        tmp_path,
        """\
        import lucid
        from lucid import nn

        model = nn.Linear(2, 2)
        with lucid.no_grad():
            model.weight.zero_()
            model.bias.zero_()
        for step in range(2):
            loss = model(lucid.ones(3, 2)).sqrt().sum()
            loss.backward()
        """,
    )
    bundle = tmp_path / "out" / "bundle.safetensors"
    script = str(tmp_path / "train.py")
    assert cli.main(["run", "--repro", str(bundle), script]) == 1
    report = capsys.readouterr().err
    assert "op:        sqrt (backward, in SqrtBackward0)" in report
    assert "loss = model(lucid.ones(3, 2)).sqrt().sum()" in report
    assert "step:      0" in report
    assert "forward traceback of the op:" in report
    assert cli.main(["repro", str(bundle)]) == 1
    assert "Function 'SqrtBackward0' returned inf values" in capsys.readouterr().err


def test_script_exit_code_and_argv_pass_through(tmp_path, capsys) -> None:
    script = _script(
        tmp_path,
        """\
        import sys
        print(sys.argv[1:], __name__)
        sys.exit(int(sys.argv[1]))
        """,
    )
    assert cli.main(["run", str(script), "3", "--flag"]) == 3
    assert capsys.readouterr().out == "['3', '--flag'] __main__\n"


def test_an_anomaly_the_script_wraps_in_another_error_is_still_reported(tmp_path, capsys) -> None:
    script = _script(
        tmp_path,
        """\
        import lucid
        x = lucid.zeros(2, requires_grad=True)
        try:
            y = x.log()
        except RuntimeError as error:
            raise ValueError("training failed") from error
        """,
    )
    assert cli.main(["run", "--no-repro", str(script)]) == 1
    report = capsys.readouterr().err
    assert "op:        log (forward)" in report and "y = x.log()" in report
    assert "reproducer: not saved (--no-repro)" in report


def test_other_errors_of_the_script_propagate(tmp_path) -> None:
    script = _script(tmp_path, "raise KeyError('missing')\n")
    with pytest.raises(KeyError, match="missing"):
        cli.main(["run", "--no-repro", str(script)])
    # The checks are off again afterwards.
    assert not lucid.autograd.is_anomaly_enabled()


def test_missing_script_is_a_clear_error(tmp_path, capsys) -> None:
    assert cli.main(["run", str(tmp_path / "nope.py")]) == 2
    assert "can't open file" in capsys.readouterr().err


def test_repro_of_an_unusable_bundle_exits_two(tmp_path, capsys) -> None:
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"\x00" * 3)
    assert cli.main(["repro", str(broken)]) == 2
    assert "is not a usable reproducer bundle" in capsys.readouterr().err


_TRAIN_LOOP = """\
import sys
import lucid
from lucid import nn

lucid.manual_seed(0)
model = nn.Sequential(nn.Linear(1, 1), nn.Linear(1, 1))
criterion = nn.MSELoss()
optimizer = lucid.optim.Adam(model.parameters())
for step in range(4):
    optimizer.zero_grad()
    scale = 1e19 if step == 2 else 1.0
    # called twice per iteration: the step is the iteration, not the model call
    out = model(lucid.ones(1, 1)) - model(lucid.zeros(1, 1))
    criterion(out * scale, lucid.zeros(1, 1)).backward()
    optimizer.step()
print("finished")
"""


def test_an_optimizer_birth_is_named_with_its_iteration_state_and_parameter(tmp_path) -> None:
    script = _script(tmp_path, _TRAIN_LOOP)
    result = _run("run", "--no-repro", "train.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    report = result.stderr
    assert "inside optimizer.step()" in report
    assert "op:        addcmul_ (optimizer)" in report
    assert "optimizer: Adam.step(), updating 0.weight, state exp_avg_sq" in report
    assert f"line:      {script}:15" in report
    assert "step:      2 (model call 5)" in report
    assert "<frozen" not in report
