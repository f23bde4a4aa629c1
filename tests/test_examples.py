"""Smoke tests: the digits demo and the examples train for a few steps and produce sane output."""

from __future__ import annotations

import importlib.util
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lucid
from lucid.utils.data import TensorDataset

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load_example(name: str, monkeypatch: pytest.MonkeyPatch):
    """Import examples/<name>.py as a module (registered, as dataclasses need)."""
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch):
    return _load_example("demo", monkeypatch)


def test_demo_training_steps_lower_the_loss(demo) -> None:
    result = demo.train(epochs=1, max_steps=12, progress=False)
    assert len(result.losses) == 12
    assert all(math.isfinite(loss) for loss in result.losses)
    assert sum(result.losses[-3:]) / 3 < result.losses[0]
    assert 0.0 <= result.test_accuracy <= 1.0


def test_demo_training_is_reproducible_on_any_digit_shaped_data(demo) -> None:
    images = lucid.rand(40, 1, 8, 8, generator=lucid.Generator().manual_seed(1))
    labels = lucid.arange(40) % 10
    dataset = TensorDataset(images, labels)
    first = demo.train(epochs=2, batch_size=8, progress=False, dataset=dataset)
    second = demo.train(epochs=2, batch_size=8, progress=False, dataset=dataset)
    assert len(first.losses) == 8
    assert first.losses == second.losses
    assert first.test_accuracy == second.test_accuracy


def test_demo_act_two_reports_the_planted_bug_with_op_line_module_and_step(demo) -> None:
    images = lucid.rand(40, 1, 8, 8, generator=lucid.Generator().manual_seed(2))
    labels = lucid.arange(40) % 10
    stream = io.StringIO()
    result = demo.bug_hunt(batch_size=8, dataset=TensorDataset(images, labels), stream=stream)
    # 33 of the 40 examples are kept: four batches of 8, then (step 4) a batch of one
    assert len(result.losses) == 5 and math.isnan(result.losses[-1])
    assert all(math.isfinite(loss) for loss in result.losses[:-1])
    event = result.replay.event
    assert (event.op, event.kind, event.module_path, event.step) == ("div", "nan", "norm", 4)
    text = stream.getvalue()
    assert "  step   4  loss nan" in text and "a bare nan at step 4" in text
    assert f"line:      {demo.BUGGY_CODE_NAME}:7\n             return (x - mean) / std" in text
    assert "module:    norm (BatchStandardize) in Net" in text
    assert "step:      4\n" in text
    assert "mechanism: invalid operation" in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_demo_progress_bar_redraws_one_line_on_a_terminal(demo) -> None:
    stream = _Terminal()
    bar = demo.ProgressBar(4, "epoch 1", width=8, stream=stream)
    for _ in range(4):
        bar.update(loss=0.25)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1
    assert text.rstrip("\n").split("\r")[-1] == "epoch 1 [########] 4/4 loss=0.2500"


def test_demo_progress_bar_writes_only_its_final_line_when_not_a_terminal(demo) -> None:
    stream = io.StringIO()
    bar = demo.ProgressBar(4, "epoch 1", width=8, stream=stream)
    for _ in range(4):
        bar.update(loss=0.25)
    assert stream.getvalue() == ""
    bar.close()
    assert stream.getvalue() == "epoch 1 [########] 4/4 loss=0.2500\n"


def test_demo_training_redirected_to_a_log_writes_no_carriage_returns() -> None:
    # as `python examples/demo.py > train.log 2>&1` would: neither stream is a terminal
    code = (
        "import runpy, lucid; from lucid.utils.data import TensorDataset\n"
        f"demo = runpy.run_path({str(EXAMPLES / 'demo.py')!r})\n"
        "images = lucid.rand(40, 1, 8, 8, generator=lucid.Generator().manual_seed(1))\n"
        "dataset = TensorDataset(images, lucid.arange(40) % 10)\n"
        "demo['train'](epochs=2, batch_size=8, dataset=dataset)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        cwd=EXAMPLES.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    log = result.stdout + result.stderr
    assert "\r" not in log
    lines = log.splitlines()
    assert len(lines) == 2  # one line per epoch, none per batch
    assert lines[0].startswith("epoch  1/2 [") and " 4/4 loss=" in lines[0]
    assert lines[1].startswith("epoch  2/2 [") and " 4/4 loss=" in lines[1]


def test_demo_heading_comes_before_the_training_in_a_log() -> None:
    # `python examples/demo.py > train.log 2>&1`: stdout is block-buffered into a pipe, the
    # epoch lines go to stderr; the heading must still come first.
    code = (
        "import importlib.util, sys, lucid; from lucid.utils.data import TensorDataset\n"
        f"spec = importlib.util.spec_from_file_location('demo', {str(EXAMPLES / 'demo.py')!r})\n"
        "demo = importlib.util.module_from_spec(spec); sys.modules['demo'] = demo\n"
        "spec.loader.exec_module(demo)\n"
        "images = lucid.rand(40, 1, 8, 8, generator=lucid.Generator().manual_seed(1))\n"
        "dataset = TensorDataset(images, lucid.arange(40) % 10)\n"
        "demo.load_digits_dataset = lambda: dataset\n"
        "demo.bug_hunt = lambda seed, dataset: None\n"
        "demo.main(['--epochs', '1'])\n"
    )
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    result = subprocess.run(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=60, cwd=EXAMPLES.parent, env=buffered,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == "Act one: train a CNN on the 8x8 digits.", lines
    assert lines[1].startswith("epoch  1/1 [") and lines[2].startswith("test accuracy: ")


def test_demo_without_sklearn_prints_install_hint(demo, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    assert demo.main([]) == 1
    assert 'pip install -e ".[demo]"' in capsys.readouterr().err


def test_lucid_and_demo_import_without_sklearn() -> None:
    code = (
        "import runpy, sys; sys.modules['sklearn'] = None; import lucid; "
        f"runpy.run_path({str(EXAMPLES / 'demo.py')!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_demo_runs_as_a_script_from_any_directory(tmp_path) -> None:
    # As the README runs it: `python examples/demo.py`, not as a module of the package.
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py"), "--help"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: python examples/demo.py")


def test_demo_is_not_part_of_the_package() -> None:
    # The library needs NumPy alone; the demo, which needs scikit-learn, is an example.
    assert not (Path(lucid.__file__).parent / "demo.py").exists()


def test_char_transformer_smoke_run(monkeypatch, capsys) -> None:
    example = _load_example("char_transformer", monkeypatch)
    result = example.main(["--steps", "2", "--sample-length", "16", "--batch-size", "4"])
    assert len(result.losses) == 2 and all(math.isfinite(loss) for loss in result.losses)
    # an untrained model is close to uniform over the ~100-character vocabulary
    assert abs(result.losses[0] - math.log(103)) < 1.0
    assert result.sample.startswith("The ") and len(result.sample) == 4 + 16
    output = capsys.readouterr().out
    assert "step     1  loss" in output and "--- sample after 2 steps ---" in output


def _has_bfloat16_matmul() -> bool:
    low = lucid.ones(2, 2).to(lucid.bfloat16)
    return lucid.mm(low, low).dtype is lucid.bfloat16


@pytest.mark.skipif(
    not _has_bfloat16_matmul(), reason="lucid's bfloat16 matmul returns float32 (lowprec-core)"
)
def test_char_transformer_trains_under_bfloat16_autocast(monkeypatch, capsys) -> None:
    example = _load_example("char_transformer", monkeypatch)
    arguments = ["--steps", "3", "--sample-length", "8", "--batch-size", "4", "--bf16"]
    result = example.main(arguments)
    assert len(result.losses) == 3 and all(math.isfinite(loss) for loss in result.losses)
    assert abs(result.losses[0] - math.log(103)) < 1.0
    assert result.sample.startswith("The ") and len(result.sample) == 4 + 8
