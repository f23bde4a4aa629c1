"""`lucid.cpu.amp`: PyTorch's deprecated home of the CPU GradScaler and autocast."""

from __future__ import annotations

import warnings
from typing import Any

from lucid._core.dtypes import bfloat16
from lucid.amp.autocast_mode import autocast as _autocast
from lucid.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


class GradScaler(_GradScaler):
    """Deprecated: use `lucid.amp.GradScaler("cpu", ...)`."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`lucid.cpu.amp.GradScaler(args...)` is deprecated. "
            "Please use `lucid.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)  # fmt: skip


class autocast(_autocast):
    """Deprecated: use `lucid.autocast("cpu", ...)`."""

    def __init__(
        self, enabled: bool = True, dtype: Any = bfloat16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`lucid.cpu.amp.autocast(args...)` is deprecated. "
            "Please use `lucid.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
