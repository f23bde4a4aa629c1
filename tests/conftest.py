"""Shared fixtures: every test starts from a fixed seed and lucid's default state."""

from __future__ import annotations

import sys

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


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def pytest_terminal_summary(terminalreporter) -> None:
    """The API coverage per torch namespace, when tests/test_api_coverage.py ran."""
    coverage = getattr(sys.modules.get("tests.test_api_coverage"), "COVERAGE", None)
    if not coverage:
        return
    terminalreporter.section("API coverage against torch (public names lucid has)")
    for namespace, (have, excluded, planned, total) in coverage.items():
        terminalreporter.write_line(
            f"{namespace:<26} {have:4d} / {total:4d}  ({100 * have / total:5.1f} %); "
            f"{excluded} excluded with a reason, {planned} planned"
        )
