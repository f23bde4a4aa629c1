"""`lucid.backends`, as PyTorch's CPU build answers: no MPS, no cuDNN; the flags are accepted.

Setting `lucid.backends.cudnn.benchmark = True` (or `deterministic`, `enabled`,
`allow_tf32`) changes nothing: lucid computes with NumPy, deterministically.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

__all__ = ["cuda", "cudnn", "mps"]


def _false() -> bool:
    return False


mps = SimpleNamespace(is_available=_false, is_built=_false)
cudnn = SimpleNamespace(
    is_available=_false, enabled=True, benchmark=False, deterministic=False, allow_tf32=True
)
cuda = SimpleNamespace(
    is_built=_false,
    matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
)


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
