"""Births in torch programs as lucid's NaNEvent, and `find_birth`."""

from __future__ import annotations

from typing import Any

from lucid._core.sentinel import BACKWARD_PHASES
from lucid.debug.events import NaNEvent
from lucid.debug.torch._instrument import Instrument, TorchBirth

__all__ = ["find_birth", "to_nan_event"]


def to_nan_event(birth: TorchBirth, *, replayed: str | None = None) -> NaNEvent:
    """The NaNEvent of a birth: the same fields lucid's own tiers fill."""
    stats = birth.output_stats
    inputs = birth.inputs
    return NaNEvent(
        batch_idx=birth.step if birth.step is not None else 0,
        layer_name=birth.module_path or "",
        module_type=birth.module_type,
        kind=birth.kind,
        op=birth.op,
        location=birth.location,
        is_backward=birth.phase in BACKWARD_PHASES,
        input_has_nan=any(_holds(item, "nan") for item in inputs),
        input_has_inf=any(_holds(item, "inf") for item in inputs),
        output_has_nan=bool(stats.get("nan_count")),
        output_has_inf=bool(stats.get("inf_count")),
        output_shape=birth.output_shape,
        stats={key: stats.get(key) for key in ("nan_count", "inf_count", "min", "max", "mean")},
        mechanism=birth.mechanism,
        phase=birth.phase,
        received=birth.received,
        model_call=birth.model_call,
        optimizer=birth.optimizer,
        parameter=birth.parameter,
        state=birth.state,
        aten_op=birth.aten_op,
        node=birth.node_name,
        forward_location=birth.forward_location,
        replayed=replayed,
        rank=birth.rank,
    )


def _holds(stats: dict[str, Any], kind: str) -> bool:
    if "scalar" in stats:
        value = stats["scalar"]
        return value != value if kind == "nan" else value in (float("inf"), float("-inf"))
    return bool(stats.get(f"{kind}_count"))


def find_birth(fn: Any, *args: Any, **kwargs: Any) -> NaNEvent | None:
    """Run `fn(*args, **kwargs)` once under the exact instrument: the first NaN or Inf born,
    forward or backward, as a NaNEvent, or None when every value stayed finite.

    The run stops at the first birth (the rest of `fn` does not run). It costs several times
    a plain call, so it is for a notebook, a test, or one suspicious step.
    """
    instrument = Instrument(stop_on_first=True)
    instrument.run(fn, *args, **kwargs)
    if not instrument.births:
        return None
    return to_nan_event(instrument.births[0])
