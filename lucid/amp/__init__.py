"""lucid.amp: mixed precision, as torch.amp: `autocast` (ops run in a lower precision where
that is safe) and `GradScaler` (loss scaling against float16 gradient underflow), whose skipped
steps say which op made the gradients non-finite."""

from lucid.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from lucid.amp.grad_scaler import GradScaler, SkippedStep

__all__ = [
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "is_autocast_available",
    "GradScaler",
    "SkippedStep",
]
