"""The amp tests call models: each test leaves this thread's model-call record as it found it,
so a later test's report of a NaN input is not placed at an earlier test's model call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lucid._core.grad_mode import local_state


@pytest.fixture(autouse=True)
def _restore_model_call_record() -> Iterator[None]:
    saved = (local_state.model_step, local_state.model_call_frames, local_state.model)
    yield
    local_state.model_step, local_state.model_call_frames, local_state.model = saved
