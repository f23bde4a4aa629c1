"""Each test here leaves the thread as if no model had been called: the sentinel names a value
received without a model call at the current line, and later test files rely on that."""

from __future__ import annotations

import pytest

from lucid._core.grad_mode import local_state
from lucid._core.sentinel import reset_sentinel


@pytest.fixture(autouse=True)
def _no_model_call_outlives_the_test():
    yield
    local_state.model_step = -1
    local_state.model = None
    local_state.model_call_frames = ()
    reset_sentinel()
