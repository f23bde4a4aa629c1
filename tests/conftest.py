"""Shared fixtures: every test starts from a fixed seed and lucid's default state."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid._core.sentinel import reset_sentinel


@pytest.fixture(autouse=True)
def _seeded_and_default_state():
    lucid.manual_seed(0)
    np.random.seed(0)
    # A report's step and phase follow the training loop, which is each test's own.
    reset_sentinel()
    default_dtype = lucid.get_default_dtype()
    yield
    lucid.set_default_dtype(default_dtype)
    assert lucid.is_grad_enabled(), "a test leaked no_grad state"


# Test files that start processes (MPI ranks, gloo ranks, data-loader workers, re-run scripts
# under the launcher): marked `multiprocess`, so `pytest -m "not multiprocess"` is the quick loop.
MULTIPROCESS_FILES = {
    "tests/distributed/test_collectives.py",
    "tests/distributed/test_ddp.py",
    "tests/distributed/test_ddp_digits.py",
    "tests/distributed/test_faults.py",
    "tests/distributed/test_launcher.py",
    "tests/debug/torch/test_ddp.py",
    "tests/utils/test_dataloader_workers.py",
}
_ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if Path(item.fspath).resolve().relative_to(_ROOT).as_posix() in MULTIPROCESS_FILES:
            item.add_marker(pytest.mark.multiprocess)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def pytest_terminal_summary(terminalreporter) -> None:
    """The API coverage per torch namespace, when tests/test_api_coverage.py ran."""
    test_module = sys.modules.get("tests.test_api_coverage")
    coverage = getattr(test_module, "COVERAGE", None)
    if not coverage:
        return
    terminalreporter.section("API coverage against torch (public names lucid has)")
    for namespace, (have, excluded, planned, total) in coverage.items():
        share = 100 * have / total if total else 100.0  # torch.backends holds only namespaces
        terminalreporter.write_line(
            f"{namespace:<26} {have:4d} / {total:4d}  ({share:5.1f} %); "
            f"{excluded} excluded with a reason, {planned} planned"
        )
    terminalreporter.write_line(
        f"and {len(test_module.ABSENT)} torch namespaces lucid has no counterpart of, each with "
        "its reason (lucid/_absent.py)"
    )
