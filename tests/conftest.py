"""Shared fixtures: every test starts from a fixed seed and lucid's default state."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


@pytest.fixture(autouse=True)
def _seeded_and_default_state():
    lucid.manual_seed(0)
    np.random.seed(0)
    default_dtype = lucid.get_default_dtype()
    yield
    lucid.set_default_dtype(default_dtype)
    assert lucid.is_grad_enabled(), "a test leaked no_grad state"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
