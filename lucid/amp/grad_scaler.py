"""GradScaler: loss scaling for low-precision gradients, as torch.amp.GradScaler, plus an
account of every skipped step (`last_skip`): which gradients were non-finite, which op, line
and module created the first Inf/NaN, and whether a smaller scale can fix it."""

from __future__ import annotations

import inspect
import logging
import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

import lucid
from lucid._core.sentinel import (
    AnomalyEvent,
    NonFiniteWarning,
    birth_of,
    clear_scaled_births,
    count_optimizer_step,
    is_sentinel_enabled,
    mark_scaled,
    nonfinite_kind,
    received_op,
    scaled_births,
    unscale_gradient,
    warn_at_user_line,
)
from lucid._tensor import Tensor
from lucid.autograd import Function

__all__ = ["OptState", "GradScaler", "SkippedStep"]

logger = logging.getLogger("lucid.debug")


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _holds_nonfinite(array: np.ndarray) -> bool:
    # bfloat16 (NumPy kind "V") is judged through float32, which holds all its values.
    if array.dtype.kind == "V":
        array = array.astype(np.float32)
    return nonfinite_kind(array) is not None


class _CheckAndUnscale(Function):
    """PyTorch's fused non-finite check and unscale: one in-place op over all the gradients
    of an optimizer (one Function call, not one per gradient). Each gradient is judged before
    the division, as PyTorch does; the indices of non-finite ones, and whether they held NaN,
    go into `found`. float32 and float64 gradients are multiplied in their own dtype by the
    float32 reciprocal; float16 and bfloat16 ones in float32, rounded once."""

    @staticmethod
    def forward(ctx: Any, inv_scale: float, found: list, *grads: Tensor) -> None:
        ctx.mark_dirty(*grads)
        factor = np.float32(inv_scale)
        for index, grad in enumerate(grads):
            array = grad.numpy()
            if _holds_nonfinite(array):
                found.append((index, bool(np.isnan(array.astype(np.float32)).any())))
            if inv_scale == 1.0:
                continue
            if array.dtype.itemsize >= 4:
                np.multiply(array, factor, out=array, casting="unsafe")
            else:
                array[...] = array.astype(np.float32) * factor
        # Nothing to hand back: the gradients changed in place (their versions move on).
        return None


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


# Why a step was skipped, as `SkippedStep.mechanism` names it. Only an overflow is the scale's
# doing; for every other cause a smaller scale changes nothing.
_OVERFLOW = "overflow"


@dataclass(frozen=True)
class SkippedStep:
    """Why `GradScaler.step()` skipped `optimizer.step()`: the scaler's `last_skip`.

    `iteration` counts `update()` calls before this step. `parameters` names the parameters
    whose gradients held inf or NaN (dotted names where the optimizer or the model last called
    knows them), and `kind` what they held (`'nan'` if any held NaN, else `'inf'`). `op`,
    `phase`, `location` and `module` say where the first non-finite value of
    the scaled backward was born, and `mechanism` how: `'overflow'` (the scaled loss or scaled
    gradients passed the dtype's range: the scale backs off and the next step fixes it),
    `'invalid operation'` (0/0, inf - inf, ...), `'division by zero'`, `'non-finite forward'`
    (the loss was already non-finite before scaling), `'received'` (a parameter or the input
    already held it) or `'unknown'` (the sentinel is off); for a birth in backward `location`
    is the forward line of the op whose backward made it. `is_overflow` says whether a smaller
    scale fixes it; when the cause is known and no scale fixes it, the scaler also warns.
    `birth` is the sentinel's full record of the birth.
    """

    iteration: int
    scale: float
    parameters: tuple[str, ...]
    kind: str | None
    mechanism: str
    is_overflow: bool
    op: str | None = None
    phase: str | None = None
    location: str | None = None
    module: str | None = None
    birth: AnomalyEvent | None = field(default=None, repr=False, compare=False)

    def headline(self) -> str:
        """The skip in one line, as the `lucid.debug` logger prints it."""
        what = f"{self.kind} gradients" if self.kind else "non-finite gradients"
        where = ", ".join(self.parameters) if self.parameters else "no parameter named"
        line = (
            f"GradScaler skipped optimizer.step() at iteration {self.iteration} (scale "
            f"{self.scale:g}): {what} in {where}; {self._cause()}"
        )
        return line

    def _cause(self) -> str:
        if self.op is None:
            if self.mechanism == "unknown":
                return "cause unknown: the sentinel is off (LUCID_SENTINEL=0)"
            return (
                "no op of the scaled backward created it: it was already in a parameter or "
                "the input"
            )
        module = f" in module '{self.module}'" if self.module else ""
        if self.mechanism == "received":
            return f"first seen as {self.op}, received at {self.location}: no op created it"
        if self.phase == "forward":
            site = f"{self.op} at {self.location}{module}"
            if self.mechanism == _OVERFLOW:
                return f"the scaled output overflowed in {site}"
            return f"the loss was already non-finite before scaling, first born in {site}"
        where = "a gradient sum for" if self.phase == "accumulation" else "the backward of"
        born = self.birth.kind if self.birth is not None else self.kind
        return (
            f"the first {born} was born by {self.mechanism} in {where} {self.op} (forward at "
            f"{self.location}{module})"
        )

    def __str__(self) -> str:
        lines = [self.headline()]
        if self.mechanism == "unknown":
            lines.append(
                "  whether a smaller scale fixes it is unknown: with the sentinel on, the "
                "scaler tells an overflow of the scale from a NaN no scale can fix"
            )
        elif self.is_overflow:
            lines.append(
                "  this is an overflow of the loss scale: update() lowers the scale and the "
                "next steps go on"
            )
        else:
            lines.append(
                "  this is not an overflow of the loss scale: a smaller scale will never fix "
                "it, and the scaler will keep skipping steps"
            )
        return "\n".join(lines)


class GradScaler:
    """Scales the loss so that small low-precision gradients do not flush to zero, skips the
    steps whose gradients overflowed, and adjusts the scale; as torch.amp.GradScaler.

    lucid runs on the CPU, so `device` defaults to `"cpu"` (PyTorch's default is `"cuda"`,
    which, as in PyTorch without CUDA, disables the scaler with a warning). Beyond PyTorch,
    `last_skip` is None after a step that was taken and a `SkippedStep` after one that was
    skipped, naming the parameters with non-finite gradients and the op, line and module where
    the first Inf/NaN of the scaled backward was born. Each skip is logged in one line to the
    `lucid.debug` logger (INFO for an overflow, which calibrates the scale, or when the
    sentinel is off and the cause unknown; WARNING otherwise), and a skip that no scale can
    fix (a 0/0, a NaN already in forward) also raises a
    `NonFiniteWarning`. The sentinel does not warn about a backward from a scaled loss: its
    overflows are the scaler's to report.

    Example::

        scaler = lucid.amp.GradScaler()
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)  # optional: clip or inspect unscaled gradients
            lucid.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            if scaler.last_skip is not None:
                print(scaler.last_skip)
    """

    def __init__(
        self,
        device: str = "cpu",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        self.last_skip: SkippedStep | None = None
        if self._device == "cuda" and enabled:
            warnings.warn(
                "lucid.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            # Made on the first scale(), as PyTorch does (a float32 scalar and an int32 count).
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(
                _refresh_per_optimizer_state
            )
            self._iteration = 0
            # Per optimizer: (parameter, group, group index, index, held NaN) of each parameter
            # whose gradient was non-finite when unscale_() looked.
            self._nonfinite: dict[int, list[tuple[Tensor, dict, int, int, bool]]] = {}
            self._scaling_birth: AnomalyEvent | None = None

    # ------------------------------------------------------------------ scale
    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, device: Any) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = lucid.full((), self._init_scale, dtype=lucid.float32)
        self._growth_tracker = lucid.full((), self._init_growth_tracker, dtype=lucid.int32)

    def scale(self, outputs: Tensor | Iterable[Tensor]) -> Any:
        """Multiply a tensor, or the tensors of nested lists and tuples, by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return self._scale_one(outputs)

        def apply_scale(value: Any) -> Any:
            if isinstance(value, Tensor):
                return self._scale_one(value)
            if isinstance(value, Iterable):
                scaled = map(apply_scale, value)
                if isinstance(value, list | tuple):
                    return type(value)(scaled)
                return scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _scale_one(self, output: Tensor) -> Tensor:
        if self._scale is None:
            self._lazy_init_scale_growth_tracker(output.device)
        scale = self._scale
        result = output * scale
        mark_scaled(result, scale.item())
        # A float16 output times the scale can itself overflow: the one birth the scaler makes.
        if self._scaling_birth is None and _holds_nonfinite(result.detach().numpy()):
            if not _holds_nonfinite(output.detach().numpy()):
                self._scaling_birth = birth_of(result)
        return result

    # ------------------------------------------------------------------ unscale
    def _unscale_grads_(
        self, optimizer: Any, inv_scale: float, found_inf: Tensor, allow_fp16: bool
    ) -> dict[Any, Tensor]:
        """Divide the optimizer's gradients by the scale (`inv_scale` 1.0: only look) and note
        in `found_inf` whether any held inf or NaN; returns {device: found_inf}."""
        grads = []
        places = []
        for group_index, group in enumerate(optimizer.param_groups):
            for index, param in enumerate(group["params"]):
                if not isinstance(param, Tensor):
                    raise AssertionError(
                        f"expected param to be lucid.Tensor, got {type(param).__name__}"
                    )
                grad = param.grad
                if grad is None:
                    continue
                if not allow_fp16 and grad.dtype == lucid.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads.append(grad)
                places.append((param, group, group_index, index))
        found: list[tuple[int, bool]] = []
        if grads:
            with lucid.no_grad():
                _CheckAndUnscale.apply(inv_scale, found, *grads)
            if inv_scale != 1.0:
                for param, *_ in places:
                    unscale_gradient(param)
        seen = bool(grads)
        nonfinite = [(*places[index], holds_nan) for index, holds_nan in found]
        self._nonfinite[id(optimizer)] = nonfinite
        if nonfinite:
            found_inf.fill_(1.0)
        return {found_inf.device: found_inf} if seen else {}

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, once per optimizer per iteration
        (`step` does it when it was not called), e.g. to clip them before `step`."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # The reciprocal in float64, rounded to float32 once, as PyTorch computes it.
        with np.errstate(divide="ignore", over="ignore"):
            inv_scale = float(np.float32(np.float64(1.0) / self._scale.item()))
        found_inf = lucid.zeros((), dtype=lucid.float32)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False
        )
        optimizer_state["stage"] = OptState.UNSCALED

    # ------------------------------------------------------------------ step
    def _maybe_opt_step(
        self, optimizer: Any, optimizer_state: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        if not sum(value.item() for value in optimizer_state["found_inf_per_device"].values()):
            self.last_skip = None
            return optimizer.step(*args, **kwargs)
        self._report_skip(optimizer)
        # A skipped step is still the loop's iteration: the step count moves on.
        count_optimizer_step(optimizer)
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale the gradients (unless `unscale_` did) and run `optimizer.step(*args,
        **kwargs)` unless a gradient holds inf or NaN; returns what `optimizer.step` returned.
        A closure is not supported while the scaler is enabled."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_scaling_optimizer(optimizer, optimizer_state, args, kwargs)
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return result

    def _step_scaling_optimizer(
        self, optimizer: Any, optimizer_state: dict[str, Any], args: tuple, kwargs: dict
    ) -> Any:
        """An optimizer that handles scaled gradients itself: it gets the scaler (if its step
        takes `grad_scaler`) or `grad_scale` and `found_inf` as attributes, as in PyTorch."""
        has_grad_scaler_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if has_grad_scaler_kwarg:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed "
                "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                "`found_inf: Tensor` to the passed optimizer and let the optimizer use them "
                "directly.",
                FutureWarning,
                stacklevel=3,
            )
            kwargs.update({"grad_scaler": self})
        else:
            if optimizer_state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scale = self._scale
            found_inf = sum(optimizer_state["found_inf_per_device"].values())
            optimizer.grad_scale = (
                getattr(optimizer, "grad_scale", None)
                if optimizer_state["stage"] == OptState.UNSCALED
                else scale * getattr(optimizer, "grad_scale", 1)
            )
            optimizer.found_inf = found_inf
        result = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        if not has_grad_scaler_kwarg:
            del optimizer.grad_scale
            del optimizer.found_inf
        return result

    # ------------------------------------------------------------------ update
    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off if a step of this iteration was skipped, grow it after
        `growth_interval` steps in a row without one; or set it to `new_scale`."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element lucid.cuda.FloatTensor or "
                    "lucid.FloatTensor with requires_grad=False."
                )
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [
                found_inf
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(scale, growth_tracker, any(v.item() for v in found_infs))
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)
        self._iteration += 1
        self._nonfinite = {}
        self._scaling_birth = None
        clear_scaled_births()

    def _update_scale(self, scale: Tensor, growth_tracker: Tensor, found_inf: bool) -> None:
        """PyTorch's update rule, in its arithmetic: the factor multiplies in float64 and the
        scale is stored as float32, so both libraries follow the same trajectory."""
        if not isinstance(self._growth_interval, int):
            # PyTorch's kernel takes it as an int, and its binding refuses anything else
            raise TypeError(
                "_amp_update_scale_(): argument 'growth_interval' (position 6) must be int, not "
                f"{type(self._growth_interval).__name__}"
            )
        current = scale.item()
        if found_inf:
            scale.fill_(current * self._backoff_factor)
            growth_tracker.fill_(0)
            return
        successful = growth_tracker.item() + 1
        if successful == self._growth_interval:
            with np.errstate(over="ignore"):
                grown = float(np.float32(current * self._growth_factor))
            # never grow the scale past float32's range to inf
            if math.isfinite(grown):
                scale.fill_(grown)
            growth_tracker.fill_(0)
        else:
            growth_tracker.fill_(successful)

    # ------------------------------------------------------------------ why a skip
    def _report_skip(self, optimizer: Any) -> None:
        """Make `last_skip` for a skipped step, log it, and warn when no scale can fix it."""
        births = scaled_births()
        scaling = self._scaling_birth
        first = scaling if scaling is not None else (births[0] if births else None)
        parameters = tuple(
            self._parameter_name(*entry[:4]) for entry in self._nonfinite.get(id(optimizer), ())
        )
        found = self._nonfinite.get(id(optimizer), ())
        kind = ("nan" if any(entry[-1] for entry in found) else "inf") if found else None
        if first is None:
            mechanism = "received" if is_sentinel_enabled() else "unknown"
            skip = SkippedStep(self._iteration, self.get_scale(), parameters, kind, mechanism,
                               False)  # fmt: skip
        else:
            if first is scaling:
                mechanism = _OVERFLOW
            elif first.op == "input" or not first.created:
                mechanism = "received"
            elif first.phase == "forward":
                mechanism = "non-finite forward"
            else:
                mechanism = first.mechanism or "unknown"
            skip = SkippedStep(
                iteration=self._iteration,
                scale=self.get_scale(),
                parameters=parameters,
                kind=kind,
                mechanism=mechanism,
                is_overflow=mechanism == _OVERFLOW,
                op=first.op,
                phase=first.phase,
                location=first.location,
                module=first.module_path,
                birth=first,
            )
        self.last_skip = skip
        record = {"event": "skip", "iteration": skip.iteration, "scale": skip.scale,
                  "parameters": list(parameters), "kind": skip.kind,
                  "mechanism": skip.mechanism, "is_overflow": skip.is_overflow,
                  "op": skip.op, "phase": skip.phase, "location": skip.location,
                  "module": skip.module}  # fmt: skip
        # An overflow is how the scale calibrates itself, and with the sentinel off the cause
        # is not known: a line of information. Anything else is a bug: a warning.
        is_bug = not skip.is_overflow and skip.mechanism != "unknown"
        level = logging.WARNING if is_bug else logging.INFO
        logger.log(level, "%s", skip.headline(), extra={"lucid_event": record}, stacklevel=3)
        if is_bug:
            warn_at_user_line(NonFiniteWarning(str(skip), first))

    @staticmethod
    def _parameter_name(param: Tensor, group: dict, group_index: int, index: int) -> str:
        """The optimizer's name for a parameter, else its name in the model called last on
        this thread, else its place in the optimizer."""
        names = group.get("param_names")
        if names is not None:
            return names[index]
        name = received_op(param)
        if name != "parameter":
            return name
        return f"param_groups[{group_index}]['params'][{index}]"

    # ------------------------------------------------------------------ state
    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            if self._growth_tracker is None:
                return self._init_growth_tracker
            return self._growth_tracker.item()
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} when
        disabled); take it after update()."""
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer: Any) -> dict[Any, Tensor]:
        self._check_scale_growth_tracker("_check_inf_per_device")
        found_inf = lucid.zeros((), dtype=lucid.float32)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, 1.0, found_inf, True)
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer: Any) -> dict[Any, Tensor]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
