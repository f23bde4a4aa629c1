"""GradNormGuard: an early warning that flags exploding or non-finite gradient norms."""

from __future__ import annotations

import bisect
import logging
import math
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.sentinel import gradient_scale, scaled_births
from lucid._tensor import Tensor

if TYPE_CHECKING:
    from lucid.nn import Module

__all__ = ["GradNormEvent", "GradNormGuard"]

logger = logging.getLogger("lucid.debug")

# How many of the largest per-parameter norms an event lists in `top`.
_TOP_COUNT = 5
# Healthy norms kept for the running median; enough for a stable median, small enough that a
# run of millions of steps keeps constant memory and a cheap sort.
_MIN_WINDOW = 100
# During warm-up the median of this many healthy norms already serves, against a stricter
# factor: a too-large learning rate can overflow the weights well inside the first 20 steps.
_WARMUP_MIN_NORMS = 3


@dataclass
class GradNormEvent:
    """One flagged `GradNormGuard.check()`: why it fired and which parameters carry the norm.

    `step` is the 0-based index of the check (the first `check()` is step 0). `reason` is
    `'nonfinite'`, `'threshold'` or `'spike'`. `median` is the running median of earlier healthy
    norms (None before any). `param_norms` maps each parameter with a gradient to the L2 norm
    of that gradient; `top` lists the largest of them, non-finite ones first.
    """

    step: int
    total_norm: float
    reason: str
    median: float | None
    threshold: float | None
    spike_factor: float | None
    param_norms: dict[str, float] = field(repr=False)
    top: list[tuple[str, float]]

    def __str__(self) -> str:
        if self.reason == "nonfinite":
            why = "is non-finite"
        elif self.reason == "threshold":
            why = f"exceeds the threshold {self.threshold:.4g}"
        else:
            factor = self.total_norm / self.median if self.median else math.inf
            why = (
                f"is {factor:.3g}x the running median {self.median:.4g} "
                f"(spike factor {self.spike_factor:g})"
            )
        lines = [f"GradNormGuard step {self.step}: gradient norm {self.total_norm:.4g} {why}"]
        if self.top:
            width = max(len(name) for name, _ in self.top)
            lines.append("  largest parameter gradient norms:")
            lines.extend(f"    {name:<{width}}  {norm:.4g}" for name, norm in self.top)
        return "\n".join(lines)


def _squared_norm(array: np.ndarray) -> float:
    """Sum of squares of `array` as a Python float, finite whenever every element is finite."""
    flat = array.reshape(-1)
    if flat.dtype.kind == "c":
        return float(np.vdot(flat, flat).real)
    if flat.dtype not in (np.float32, np.float64):
        # float16 squares overflow at |g| > 256, and BLAS has no half-precision dot.
        flat = flat.astype(np.float64)
    total = float(np.dot(flat, flat))
    if math.isfinite(total):
        return total
    # A float32 dot overflows once elements pass ~1.8e19 although the norm itself is
    # representable: redo it in float64, scaled, so only a real nan/inf reads as non-finite.
    wide = flat.astype(np.float64)
    scale = float(np.max(np.abs(wide))) if wide.size else 0.0
    if not math.isfinite(scale) or scale == 0.0:
        return float(np.dot(wide, wide))
    scaled = wide / scale
    return float(np.dot(scaled, scaled)) * scale * scale


def _is_scaler_overflow() -> bool:
    """Whether this thread's non-finite gradients come from an overflow in a backward from a
    GradScaler's scaled loss: the scaler skips the step and lowers the scale."""
    births = scaled_births()
    return bool(births) and births[0].phase != "forward" and births[0].mechanism == "overflow"


def _is_torch_tensor(value: Any) -> bool:
    """Whether `value` is a torch.Tensor, without importing torch (none exists before it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _norm_sort_key(item: tuple[str, float]) -> tuple[int, float]:
    # nan first, then inf, then by size: the culprit of a non-finite norm leads `top`.
    norm = item[1]
    if math.isnan(norm):
        return (0, 0.0)
    return (1, -norm)


class GradNormGuard:
    """Flags a step whose global gradient L2 norm is non-finite, too large or a sudden spike.

    Call `check()` after `backward()`. It returns a `GradNormEvent` (truthy) when the norm is
    non-finite, above `threshold`, or above `spike_factor` times the running median of earlier
    healthy norms once `warmup` of them have been seen; otherwise it returns None. Before that,
    from the third step on, a norm above `spike_factor` squared (100 by default) times the
    median so far is a spike already: early norms are noisy, so only a jump that large counts,
    but a learning rate that blows up within the first steps is still caught before the
    weights overflow. Flagged norms never enter the median window, so a blow-up does not
    raise its own baseline.
    Events are kept in `events` (the newest `max_events`, oldest first) and logged to the
    `lucid.debug` logger at WARNING. `spike_factor=None` turns spike detection off.

    `model` is an `nn.Module` (parameters named by `named_parameters()`), an iterable of
    tensors (named `param0`, `param1`, ...) or one tensor; parameters are read once, here.
    A `torch.nn.Module` or torch tensors work the same way (torch is then used, never
    imported here): the norms come from one fused `torch._foreach_norm` pass and one host
    read. A torch `GradScaler`'s scale is not known to the guard, so call `check()` after
    `scaler.unscale_(optimizer)` there.

    Under a `lucid.amp.GradScaler` it judges unscaled norms: a gradient that still carries
    the loss scale (between `scaler.scale(loss).backward()` and `scaler.unscale_`) is divided
    by it, so a growing scale is no spike. A step whose gradients overflowed in the scaled
    backward is the scaler's (it skips the step and lowers the scale): `check()` returns None
    for it and keeps it out of the median.

    Example::

        guard = lucid.debug.GradNormGuard(model, spike_factor=10.0)
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            if event := guard.check():
                print(event)
                break
            optimizer.step()
    """

    def __init__(
        self,
        model: Module | Iterable[Tensor] | Tensor,
        threshold: float | None = None,
        spike_factor: float | None = 10.0,
        warmup: int = 20,
        max_events: int = 100,
    ) -> None:
        if threshold is not None and not threshold > 0:
            raise ValueError(f"threshold must be positive or None, got {threshold}")
        if spike_factor is not None and not spike_factor > 0:
            raise ValueError(f"spike_factor must be positive or None, got {spike_factor}")
        if warmup < 0:
            raise ValueError(f"warmup must be non-negative, got {warmup}")
        if max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {max_events}")
        if isinstance(model, Tensor) or _is_torch_tensor(model):
            self._named_params = [("param0", model)]
        elif callable(getattr(model, "named_parameters", None)):
            self._named_params = list(model.named_parameters())  # type: ignore[union-attr]
        else:
            tensors = list(model)
            self._named_params = [(f"param{i}", p) for i, p in enumerate(tensors)]
        self._params = [p for _, p in self._named_params]
        # torch parameters are measured by torch, in lucid.debug.torch (which imports it).
        self._torch_norms = None
        if self._params and _is_torch_tensor(self._params[0]):
            from lucid.debug.torch import _grad_norm

            self._torch_norms = _grad_norm
        self.threshold = None if threshold is None else float(threshold)
        self.spike_factor = None if spike_factor is None else float(spike_factor)
        self.warmup = int(warmup)
        self.max_events = int(max_events)
        self.events: deque[GradNormEvent] = deque(maxlen=self.max_events)
        self._window: deque[float] = deque(maxlen=max(self.warmup, _MIN_WINDOW))
        # the window's norms kept sorted as well, so the median costs a lookup per check
        self._sorted: list[float] = []
        self.step = 0  # index the next check() will carry

    @property
    def median(self) -> float | None:
        """Running median of the recent healthy norms, or None before the first one."""
        values = self._sorted
        if not values:
            return None
        middle = len(values) // 2
        if len(values) % 2:
            return values[middle]
        return (values[middle - 1] + values[middle]) / 2

    def total_norm(self) -> float:
        """Global L2 norm of the current gradients (parameters without a gradient skipped)."""
        if self._torch_norms is not None:
            return self._torch_norms.total_norm(self._params)
        squared = 0.0
        # An overflowing float32 dot is expected and handled in _squared_norm.
        with np.errstate(over="ignore", invalid="ignore"):
            for param in self._params:
                grad = param.grad
                if grad is not None:
                    scale = gradient_scale(param)
                    squared += _squared_norm(grad.numpy(force=True)) / (scale * scale)
        return math.sqrt(squared)

    def check(self) -> GradNormEvent | None:
        """Inspect the gradients after `backward()`; a `GradNormEvent` if flagged, else None."""
        total = self.total_norm()
        step = self.step
        self.step += 1
        reason = None
        if not math.isfinite(total):
            if self._torch_norms is None and _is_scaler_overflow():
                return None
            reason = "nonfinite"
        elif self.threshold is not None and total > self.threshold:
            reason = "threshold"
        elif self.spike_factor is not None and total > self._spike_limit():
            reason = "spike"
        if reason is None:
            self._remember(total)
            return None
        event = self._make_event(step, total, reason)
        self.events.append(event)
        logger.warning("%s", event)
        return event

    def _spike_limit(self) -> float:
        """The norm above which this check is a spike (inf while there is no baseline)."""
        seen = len(self._window)
        if seen and seen >= self.warmup:
            return self.spike_factor * self.median
        if seen >= _WARMUP_MIN_NORMS:
            return max(self.spike_factor, self.spike_factor**2) * self.median
        return math.inf

    def _remember(self, norm: float) -> None:
        window = self._window
        if len(window) == window.maxlen:
            oldest = window[0]
            del self._sorted[bisect.bisect_left(self._sorted, oldest)]
        window.append(norm)
        bisect.insort(self._sorted, norm)

    def _make_event(self, step: int, total: float, reason: str) -> GradNormEvent:
        # The per-parameter pass only runs here, so healthy steps pay for one dot per tensor.
        if self._torch_norms is not None:
            param_norms = self._torch_norms.parameter_norms(self._named_params)
        else:
            param_norms = self._lucid_parameter_norms()
        top = sorted(param_norms.items(), key=_norm_sort_key)[:_TOP_COUNT]
        return GradNormEvent(
            step=step,
            total_norm=total,
            reason=reason,
            median=self.median,
            threshold=self.threshold,
            spike_factor=self.spike_factor,
            param_norms=param_norms,
            top=top,
        )

    def _lucid_parameter_norms(self) -> dict[str, float]:
        with np.errstate(over="ignore", invalid="ignore"):
            return {
                name: math.sqrt(_squared_norm(param.grad.numpy(force=True))) / gradient_scale(param)
                for name, param in self._named_params
                if param.grad is not None
            }

    def __repr__(self) -> str:
        return (
            f"GradNormGuard(threshold={self.threshold}, spike_factor={self.spike_factor}, "
            f"warmup={self.warmup}, max_events={self.max_events}, step={self.step}, "
            f"events={len(self.events)})"
        )
