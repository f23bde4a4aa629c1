"""Programs in the style of old PyTorch tutorials (legacy tensor types, resize_) train the same
in lucid as in PyTorch."""

from __future__ import annotations

from tests.compat.harness import compare
from tests.torch_oracle import requires_torch

pytestmark = requires_torch


def test_text_classifier_with_legacy_tensor_types_and_handwritten_momentum(rng):
    # float32 only: torch.FloatTensor(data) is float32 whatever the default dtype is.
    data = {
        "ids": rng.integers(1, 20, (12, 7)),
        "lengths": rng.integers(2, 8, 12),
        "features": rng.standard_normal((12, 4)),
        "labels": rng.integers(0, 3, 12),
    }
    losses = compare("legacy_tensor_types", data, steps=6, dtype="float32")
    assert losses[-1] < losses[0]
