"""lucid.debug for unmodified PyTorch programs: where a NaN or Inf is born in real torch.

    with lucid.debug.torch.watch():          # the loop unchanged; costs one check per step
        for batch, target in loader:
            ...

- `watch()`: the always-on tier. At each optimizer step (before the parameters change) one
  fused check of the loss and every gradient, and a reference to the batch and the RNG state;
  on a NaN or Inf, the failing step is replayed under the exact instrument to name the birth.
- `step`: a decorator for `def train_step(batch) -> loss`, whose whole step (loss code and
  backward too) can then be replayed in-process.
- `find_birth(fn, *args, **kwargs)`: one call under the exact instrument, for notebooks and
  tests; the first birth as a NaNEvent, or None.
- `detect_anomaly()` / `set_detect_anomaly()`: torch's, as a superset: Inf and forward values
  checked too, and the birth's report in the exception.

The exact instrument checks every op's outputs, forward and backward (see `_instrument.py`);
it costs several times a plain step, so it runs only on the step that needs it.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by tests/test_without_torch.py
    raise ImportError(
        "lucid.debug.torch debugs PyTorch programs and needs torch: "
        'pip install "lucid-numerics[torch]" (or pip install torch)'
    ) from error

from lucid.debug.torch._anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from lucid.debug.torch._events import find_birth
from lucid.debug.torch._watch import NonFiniteError, Watch, step, watch

__all__ = [
    "NonFiniteError",
    "Watch",
    "detect_anomaly",
    "find_birth",
    "is_anomaly_enabled",
    "set_detect_anomaly",
    "step",
    "watch",
]
