"""`lucid.cuda.amp`: PyTorch's deprecated home of GradScaler. Without CUDA the scaler it makes
is disabled with a warning, as in a PyTorch build without CUDA."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from lucid._core.dtypes import float16
from lucid.amp.autocast_mode import autocast as _autocast
from lucid.amp.autocast_mode import custom_bwd as _custom_bwd
from lucid.amp.autocast_mode import custom_fwd as _custom_fwd
from lucid.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class GradScaler(_GradScaler):
    """Deprecated: use `lucid.amp.GradScaler("cuda", ...)`."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`lucid.cuda.amp.GradScaler(args...)` is deprecated. "
            "Please use `lucid.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)  # fmt: skip


class autocast(_autocast):
    """Deprecated: use `lucid.autocast("cuda", ...)`; without CUDA it warns and stays off."""

    def __init__(
        self, enabled: bool = True, dtype: Any = float16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`lucid.cuda.amp.autocast(args...)` is deprecated. "
            "Please use `lucid.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd: Callable | None = None, *, cast_inputs: Any = None) -> Callable:
    """Deprecated: use `lucid.amp.custom_fwd(..., device_type="cuda")`."""
    warnings.warn(
        "`lucid.cuda.amp.custom_fwd(args...)` is deprecated. "
        "Please use `lucid.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Callable) -> Callable:
    """Deprecated: use `lucid.amp.custom_bwd(..., device_type="cuda")`."""
    warnings.warn(
        "`lucid.cuda.amp.custom_bwd(args...)` is deprecated. "
        "Please use `lucid.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _custom_bwd(bwd, device_type="cuda")


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
