"""LinearCrossEntropyOptions: PyTorch's settings for a chunked linear_cross_entropy.

PyTorch computes linear_cross_entropy a batch chunk at a time when given these options, so
that the (batch, classes) logits never exist whole. lucid accepts and checks the same options
but computes the loss unchunked whatever they say: its result and gradients are those of
`options=None`, and chunking, accumulation dtype and policy change nothing. A second backward
needs `retain_graph=True` as with any lucid graph; `allow_retain_graph` neither adds nor
removes that rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import lucid

__all__ = ["LinearCrossEntropyOptions"]

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """The options of PyTorch's chunked linear_cross_entropy, with its defaults and checks:
    `allow_retain_graph`, `batch_chunk_size` (rows per chunk, None for one chunk),
    `chunking_method` ("auto", "aspect_ratio", "aspect_ratio:N" or None), `acc_policy`
    ("auto", "accurate", "balanced", "compact") and `acc_dtype` (None or a float dtype).
    lucid computes the same loss unchunked whatever they are (see the module docstring).
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, separator, factor = self.chunking_method.partition(":")
            if not separator:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (
            lucid.float16,
            lucid.bfloat16,
            lucid.float32,
            lucid.float64,
        ):
            raise ValueError(
                "acc_dtype must be one of {None, lucid.float16, lucid.bfloat16, lucid.float32, "
                f"lucid.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                "pick automatically."
            )
