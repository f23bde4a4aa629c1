"""torch._dynamo's first compile turns torch.distributions' argument validation off for the
whole process (another test may have compiled); lucid's default is on, as torch's is in a
fresh process, so the comparisons here run with torch's default on."""

from __future__ import annotations

import pytest

from tests.torch_oracle import TORCH_AVAILABLE


@pytest.fixture(autouse=True)
def torch_validates_arguments_by_default():
    if not TORCH_AVAILABLE:
        yield
        return
    import torch.distributions

    previous = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(previous)
