"""PyTorch programs built on F.multi_head_attention_forward give the same losses, gradients
and parameters in lucid."""

from __future__ import annotations

import pytest

from tests.compat.harness import compare
from tests.torch_oracle import requires_torch

pytestmark = requires_torch


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_clip_attention_pool_projecting_to_a_smaller_output_dim(rng, dtype):
    data = {"images": rng.standard_normal((12, 3, 8, 8)), "labels": rng.integers(0, 3, 12)}
    losses = compare("clip_attention_pool", data, steps=6, dtype=dtype)
    assert losses[-1] < losses[0]
