"""The always-on tier for torch programs: one fused finiteness check per step, and a replay of
the failing step under the exact instrument.

`watch()` hooks every module call and optimizer step globally (no model is edited). It keeps,
per step, a reference to each call of the model (its arguments, the RNG state before it, the
gradient that backward brought to its output) and, once per step, a copy of the model's
buffers. At each optimizer step, before the parameters change, a sum of each gradient (one
fused norm past 64 of them) and the loss are read back together (one host read). When one is
not finite, the step's model calls are replayed under the instrument (RNG and buffers
restored, the run's gradients put aside), which names the birth; a birth in the loss code
needs the whole step, which `@step` makes replayable. A replay never overwrites the run's
state: gradients, buffers and the RNG are put back as they were.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from lucid._core.sentinel import AnomalyError
from lucid.debug.event_log import _EventLog, logger
from lucid.debug.events import NaNEvent
from lucid.debug.torch import _private
from lucid.debug.torch._events import to_nan_event
from lucid.debug.torch._instrument import (
    Instrument,
    TorchBirth,
    _has_parameters,
    _nonfinite,
    _user_frame,
    replay_match,
    tensor_stats,
)

__all__ = ["NonFiniteError", "Watch", "step", "watch"]

_ACTIONS = ("replay", "raise", "warn", "skip_step")
# Model calls kept per step (gradient accumulation over more micro-batches keeps the last).
_KEPT_CALLS = 16
_active: list[Watch] = []


class NonFiniteError(AnomalyError):
    """A watched step went non-finite; `nan_event` (a NaNEvent) names the birth."""

    __module__ = "lucid.debug.torch"

    def __init__(self, message: str, event: Any, nan_event: NaNEvent | None) -> None:
        super().__init__(message, event)
        self.nan_event = nan_event


@dataclass
class _ModelCall:
    model: torch.nn.Module
    args: tuple
    kwargs: dict
    rng_state: torch.Tensor
    site: tuple  # (filename, line) of the call in the user's code
    # The CPU autocast dtype the call ran under (None: autocast off), for the replay.
    autocast: Any = None
    outputs: list = field(default_factory=list)
    grad_outputs: dict = field(default_factory=dict)


@dataclass
class _StepCall:
    """A call of a function decorated with `@step`, replayable whole."""

    fn: Any
    args: tuple
    kwargs: dict
    rng_state: torch.Tensor
    buffers: dict
    grads: dict
    # The parameters and the optimizer's state before the step, to replay it and undo it.
    parameters: dict
    optimizer_state: dict


class Watch:
    """See `watch`."""

    def __init__(
        self,
        model: Any = None,
        optimizer: Any = None,
        *,
        check_inf: bool = True,
        on_nonfinite: str = "replay",
        allow: Any = (),
        log_path: Any = None,
    ) -> None:
        self.models = _as_tuple(model, torch.nn.Module, "model", "a torch.nn.Module")
        self.optimizers = _as_tuple(
            optimizer, torch.optim.Optimizer, "optimizer", "a torch.optim.Optimizer"
        )
        if on_nonfinite not in _ACTIONS:
            raise ValueError(
                f"on_nonfinite must be one of {', '.join(map(repr, _ACTIONS))}, got "
                f"{on_nonfinite!r}"
            )
        self.check_inf = check_inf
        self.on_nonfinite = on_nonfinite
        self.allow = tuple(allow)
        self.log_path = log_path
        self._log = _EventLog(None if log_path is None else os.fspath(log_path), _KEPT_EVENTS)
        self.step = 0
        self.events: list[NaNEvent] = []
        # The first scalar loss of each step, read with the step's check (the CLI compares a
        # rerun with the run by them); bounded.
        self.step_losses: list[float] = []
        # Set by `python -m lucid.debug run`'s rerun: the step to run under the instrument.
        self._arm_step = _arm_step_from_environment()
        self._armed: Instrument | None = None
        self._main_optimizer: Any = None
        self._model: weakref.ref | None = None
        self._calls: list[_ModelCall] = []
        self._buffers: dict | None = None
        self._losses: list[torch.Tensor] = []
        self._depth = 0
        self._replaying = False
        self._step_call: _StepCall | None = None
        self._previous_clean = False
        self._handles: list = []
        self._module_handles: list = []
        self._hooked_models: list = []
        self._scaler_originals: dict = {}
        # The losses as given to GradScaler.scale (before the scale multiplies them), and the
        # last step a GradScaler skipped, explained (None after a step that was taken).
        self._unscaled: list[torch.Tensor] = []
        self.last_skip: NaNEvent | None = None
        self._outer: Watch | None = None
        self._original_backward: Any = None

    # -------------------------------------------------------------- entering
    def __enter__(self) -> Watch:
        if _active:
            # A watch inside a watch: the outer one already sees everything.
            self._outer = _active[-1]
            return self._outer
        self._handles = [
            _private.register_optimizer_step_pre_hook(self._before_step),
            _private.register_optimizer_step_post_hook(self._after_step),
        ]
        if self.models:
            self._hook_models(self.models)
        else:
            # Until the model is known every module call is looked at; torch's global module
            # hooks slow every module's call, so they go once the training loop is found.
            self._module_handles = [
                _private.register_module_forward_pre_hook(self._before_module),
                _private.register_module_forward_hook(self._after_module, always_call=True),
            ]
        self._original_backward = torch.autograd.backward
        torch.autograd.backward = self._backward
        self._wrap_grad_scaler()
        _active.append(self)
        if self._arm_step == self.step:
            self._arm()
        return self

    def _arm(self) -> None:
        """Run this step under the exact instrument from its start (the CLI's rerun)."""
        self._armed = Instrument(
            check_inf=self.check_inf,
            step=self.step,
            allow=self.allow,
            stop_on_first=False,
            on_birth=self._armed_birth,
        )
        self._armed.__enter__()

    def _disarm(self) -> None:
        armed, self._armed = self._armed, None
        if armed is not None:
            armed.__exit__(None, None, None)

    def _armed_birth(self, birth: TorchBirth) -> None:
        # Called from inside the instrument's modes: they are left when the error reaches
        # the watch's exit (a mode cannot be left from inside its own handler).
        self._armed.stopped = True
        diverged = _divergence(self.step_losses)
        if diverged is not None:
            birth.note = diverged
        self._raise(birth, "rerun")

    def __exit__(self, *exc_info: Any) -> None:
        if self._outer is not None:
            self._outer = None
            return
        self._disarm()
        scaler_class = _private.grad_scaler_class()
        for name, original in self._scaler_originals.items():
            setattr(scaler_class, name, original)
        self._scaler_originals = {}
        for handle in self._handles + self._module_handles:
            handle.remove()
        self._handles = []
        self._module_handles = []
        self._hooked_models = []
        torch.autograd.backward = self._original_backward
        _active.remove(self)
        self._forget_step()

    # -------------------------------------------------------------- the run
    def _watches(self, module: torch.nn.Module) -> bool:
        if self._hooked_models:
            return any(module is model for model in self._hooked_models)
        return _has_parameters(module)

    def model(self) -> torch.nn.Module | None:
        """The model: the one given, else the latest outermost module with parameters."""
        if self.models:
            return self.models[0]
        return None if self._model is None else self._model()

    def _before_module(self, module: torch.nn.Module, args: tuple) -> None:
        self._depth += 1
        if self._depth != 1 or self._replaying or not self._watches(module):
            return
        if self._model is None or self._model() is not module:
            self._model = weakref.ref(module)
        call = self._step_call
        if call is not None and not call.parameters:
            # A @step call made before the model was first seen: its state is taken here,
            # before anything in the step changed it.
            call.buffers = {name: b.clone() for name, b in module.named_buffers()}
            for parameter in module.parameters():
                grad = parameter.grad
                call.grads[id(parameter)] = None if grad is None else grad.clone()
                call.parameters[id(parameter)] = parameter.detach().clone()
        if self._buffers is None:
            self._buffers = {name: buffer.clone() for name, buffer in _buffers_of(module)}
        if len(self._calls) == _KEPT_CALLS:
            self._calls.pop(0)
        autocast = torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else None
        self._calls.append(
            _ModelCall(module, args, {}, torch.get_rng_state(), _user_frame(3), autocast)
        )

    def _after_module(self, module: torch.nn.Module, args: tuple, output: Any) -> None:
        self._depth -= 1
        if self._depth != 0 or self._replaying or not self._calls:
            return
        call = self._calls[-1]
        if call.model is not module or call.outputs:
            return
        values = (output,) if type(output) is torch.Tensor else _private.tree_flatten(output)[0]
        outputs = [
            value
            for value in values
            if isinstance(value, torch.Tensor) and value.is_floating_point()
        ]
        call.outputs = outputs
        if torch.is_grad_enabled():
            grads = call.grad_outputs
            for index, value in enumerate(outputs):
                if value.requires_grad:
                    value.register_hook(_grad_keeper(grads, index))
        elif self._main_optimizer is None and self.optimizers == ():
            # An eval pass: no step will check it, so its output is checked here.
            self._check_eval(call)

    def _backward(self, tensors: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._replaying:
            values = tensors if isinstance(tensors, tuple | list) else (tensors,)
            for value in values:
                if isinstance(value, torch.Tensor) and value.is_floating_point():
                    self._losses.append(value.detach())
                    del self._losses[:-_KEPT_CALLS]
        return self._original_backward(tensors, *args, **kwargs)

    def _before_step(self, optimizer: Any, args: tuple, kwargs: dict) -> Any:
        if self._replaying or (self.optimizers and optimizer not in self.optimizers):
            return None
        if self._main_optimizer is None:
            self._main_optimizer = optimizer
        if optimizer is not self._main_optimizer:
            return None
        parameters = [p for group in optimizer.param_groups for p in group["params"]]
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
        if closure is not None:
            # LBFGS and friends compute the loss and gradients inside step(), in the closure:
            # the check follows each evaluation of it.
            def checked_closure() -> Any:
                loss = closure()
                self._check(optimizer, parameters)
                return loss

            if "closure" in kwargs:
                return args, {**kwargs, "closure": checked_closure}
            return (args[0], checked_closure, *args[2:]), kwargs
        return self._check(optimizer, parameters)

    def _check(self, optimizer: Any, parameters: list) -> None:
        if self._armed is not None:
            self._disarm()  # the armed step reached its optimizer step without a birth
        tensors = [p.grad for p in parameters if p.grad is not None] + self._losses
        finite, loss = _check_values(tensors, len(self._losses), self.check_inf)
        if loss is not None and len(self.step_losses) < _KEPT_LOSSES:
            self.step_losses.append(loss)
        if finite:
            self._previous_clean = True
            return None
        return self._on_nonfinite(optimizer, parameters)

    def _after_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        if self._replaying or optimizer is not self._main_optimizer:
            return
        if self._hooked_models == [] and self.model() is not None:
            self._settle_on_the_model(optimizer)
        if self._step_call is not None:
            # Under @step the step itself is checked too (its state before is kept), so a
            # birth in the optimizer is replayed there.
            parameters = [p for group in optimizer.param_groups for p in group["params"]]
            if not _all_finite(parameters, self.check_inf):
                self._on_nonfinite(optimizer, parameters)
            self._step_call = None
        self.step += 1
        self._forget_step()
        if self._arm_step == self.step:
            self._arm()

    def _hook_models(self, models: tuple) -> None:
        for model in models:
            self._module_handles += [
                model.register_forward_pre_hook(self._before_module),
                model.register_forward_hook(self._after_module, always_call=True),
            ]
        self._hooked_models = list(models)

    def _settle_on_the_model(self, optimizer: Any) -> None:
        """After the first step: hook the model alone, if it holds the optimizer's
        parameters (then no other module's call needs looking at)."""
        model = self.model()
        owned = {id(p) for p in model.parameters()}
        if not all(id(p) in owned for g in optimizer.param_groups for p in g["params"]):
            return
        for handle in self._module_handles:
            handle.remove()
        self._module_handles = []
        self._hook_models((model,))

    def _forget_step(self) -> None:
        # Batch references are dropped every step, so memory stays flat.
        self._calls = []
        self._buffers = None
        self._losses = []
        self._unscaled = []

    # -------------------------------------------------------------- GradScaler
    def _wrap_grad_scaler(self) -> None:
        """A GradScaler's overflows are how it calibrates its scale, never births; a step it
        skips is explained (`last_skip`), and a loss that is non-finite before scaling, which
        no scale fixes, is a birth."""
        scaler_class = _private.grad_scaler_class()
        original_scale, original_step = scaler_class.scale, scaler_class.step
        self._scaler_originals = {"scale": original_scale, "step": original_step}
        watch = self

        def scale(scaler: Any, outputs: Any) -> Any:
            if not watch._replaying and isinstance(outputs, torch.Tensor):
                watch._unscaled.append(outputs.detach())
                del watch._unscaled[:-_KEPT_CALLS]
            return original_scale(scaler, outputs)

        def step(scaler: Any, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
            result = original_step(scaler, optimizer, *args, **kwargs)
            if not watch._replaying and _private.skipped_by_scaler(scaler, optimizer):
                watch._on_skipped_step(optimizer, scaler)
            elif not watch._replaying:
                watch.last_skip = None
            return result

        scaler_class.scale, scaler_class.step = scale, step

    def _on_skipped_step(self, optimizer: Any, scaler: Any) -> None:
        parameters = [p for group in optimizer.param_groups for p in group["params"]]
        if not _all_finite(self._unscaled, self.check_inf):
            self._on_nonfinite(optimizer, parameters)  # a non-finite loss: a bug, not a scale
            return
        # An overflow of the scaled backward: the replay names where, and nothing is raised.
        birth, replayed = self.replay(optimizer)
        birth.note = (
            f"GradScaler skipped optimizer.step() at step {self.step} (scale "
            f"{scaler.get_scale():g}): an overflow of the scaled gradients, which a "
            "smaller scale fixes"
        )
        self.last_skip = to_nan_event(birth, replayed=replayed)
        logger.info("%s", f"{birth.headline()}\n{birth.describe()}")
        self.step += 1  # a skipped step is a step, as the scaler counts it
        self._forget_step()

    # -------------------------------------------------------------- a trigger
    def _on_nonfinite(self, optimizer: Any, parameters: list) -> Any:
        action = self.on_nonfinite
        if action == "skip_step":
            for parameter in parameters:
                parameter.grad = None  # the optimizers skip parameters without a gradient
            warnings.warn(
                f"lucid.debug.torch.watch: step {self.step} has non-finite gradients or loss; "
                "the optimizer step was skipped",
                RuntimeWarning,
                stacklevel=4,
            )
            self._forget_step()
            return None
        if action in ("raise", "warn"):
            message = f"lucid.debug.torch.watch: step {self.step} has non-finite gradients or loss"
            if action == "warn":
                warnings.warn(message, RuntimeWarning, stacklevel=4)
                return None
            raise NonFiniteError(message, None, None)
        birth, replayed = self.replay(optimizer)
        self._previous_clean = False
        birth = _agreed_across_ranks(birth, self.step)
        self._raise(birth, replayed)

    def _raise(self, birth: TorchBirth, replayed: str) -> None:
        nan_event = self._record(birth, replayed)
        text = f"{birth.headline()}\n{birth.describe()}"
        if replayed in _REPLAYED:
            text += f"\n  replay: {_REPLAYED[replayed]}"
        raise NonFiniteError(text, birth, nan_event)

    def _record(self, birth: TorchBirth, replayed: str) -> NaNEvent:
        nan_event = to_nan_event(birth, replayed=replayed)
        self.events.append(nan_event)
        del self.events[:-_KEPT_EVENTS]
        self._log.report(nan_event, nan_event.to_dict(), verbose=False)
        return nan_event

    def replay(self, optimizer: Any) -> tuple[TorchBirth, str]:
        """Re-run the failing step under the instrument: the birth, and whether the replay
        reproduced the run ('bitwise', 'approximately' or 'no')."""
        parameters = [p for group in optimizer.param_groups for p in group["params"]]
        grads = {id(p): p.grad for p in parameters}
        rng_state = torch.get_rng_state()
        self._replaying = True
        try:
            if self._step_call is not None:
                return self._replay_step_call(optimizer, parameters)
            return self._replay_model_calls(parameters)
        finally:
            self._replaying = False
            for parameter in parameters:
                parameter.grad = grads[id(parameter)]
            torch.set_rng_state(rng_state)

    def _replay_model_calls(self, parameters: list) -> tuple[TorchBirth, str]:
        calls = self._calls
        model = _eager(calls[0].model) if calls else None
        after = {name: b.clone() for name, b in model.named_buffers()} if model is not None else {}
        for parameter in parameters:
            parameter.grad = None
        reproduced = "bitwise"
        instrument = Instrument(check_inf=self.check_inf, step=self.step, allow=self.allow)
        try:
            if model is not None and self._buffers is not None:
                _load_buffers(model, self._buffers)
            with instrument:
                for call in calls:
                    torch.set_rng_state(call.rng_state)
                    instrument.model_call_site = call.site
                    with _autocast(call.autocast):
                        output = _eager(call.model)(*call.args, **call.kwargs)
                    replayed = [
                        v
                        for v in _private.tree_flatten(output)[0]
                        if isinstance(v, torch.Tensor) and v.is_floating_point()
                    ]
                    reproduced = replay_match(call.outputs, replayed, reproduced)
                    pairs = [
                        (out, call.grad_outputs[i])
                        for i, out in enumerate(replayed)
                        if i in call.grad_outputs and out.requires_grad
                    ]
                    if not _all_finite([grad for _, grad in pairs], self.check_inf):
                        # The gradient reaching the model's output was already non-finite:
                        # the loss code made it, and the model's backward only carries it.
                        break
                    if pairs:
                        torch.autograd.backward(
                            [out for out, _ in pairs], [grad for _, grad in pairs]
                        )
        finally:
            if model is not None:
                _load_buffers(model, after)
        compiled = any(hasattr(call.model, "_orig_mod") for call in calls)
        if instrument.births:
            birth = self._as_step_birth(instrument.births[0])
        else:
            birth = self._birth_outside_the_model(calls)
        if compiled and reproduced != "bitwise":
            # Inductor draws random numbers its own way unless told to draw as eager does.
            hint = (
                "the model is compiled and the replay ran it eagerly, with other values: "
                "the value may be made only by the compiled code; with "
                "torch._inductor.config.fallback_random = True compiled random ops draw as "
                "eager ones do, and the replay can match"
            )
            birth.note = hint if birth.note is None else f"{birth.note}; {hint}"
        return birth, reproduced

    def _replay_step_call(self, optimizer: Any, parameters: list) -> tuple[TorchBirth, str]:
        """The whole step of a `@step` function, optimizer step included, then undone."""
        call = self._step_call
        model = self.model()
        after = {name: b.clone() for name, b in model.named_buffers()} if model is not None else {}
        instrument = Instrument(check_inf=self.check_inf, step=self.step, allow=self.allow)
        try:
            _restore_step_state(call, parameters, optimizer)
            if model is not None:
                _load_buffers(model, call.buffers)
            for parameter in parameters:
                parameter.grad = call.grads.get(id(parameter))
            torch.set_rng_state(call.rng_state)
            with instrument:
                call.fn(*call.args, **call.kwargs)
        finally:
            # The run is left as it was before the failing step (which raises, not steps).
            _restore_step_state(call, parameters, optimizer)
            if model is not None:
                _load_buffers(model, after)
        if instrument.births:
            return self._as_step_birth(instrument.births[0]), "bitwise"
        return self._unreproduced(), "no"

    def _as_step_birth(self, birth: TorchBirth) -> TorchBirth:
        if birth.received and birth.phase == "parameter" and self._previous_clean:
            # The last check saw finite gradients: the previous optimizer step made it.
            birth.phase = "optimizer"
            birth.optimizer = type(self._main_optimizer).__name__
            birth.parameter = birth.op
            birth.step = self.step - 1
            birth.note = (
                f"the parameter {birth.op} was finite at the previous step's check; "
                f"{birth.optimizer}.step() of step {self.step - 1} made it "
                "(replay that step with @lucid.debug.torch.step to name the op)"
            )
        return birth

    def _birth_outside_the_model(self, calls: list) -> TorchBirth:
        """The model's forward and backward replayed clean: the loss code made it."""
        grads = [g for call in calls for g in call.grad_outputs.values()]
        losses = [loss for loss in self._losses if not _all_finite([loss], self.check_inf)]
        bad = next((g for g in grads if not _all_finite([g], self.check_inf)), None)
        source = losses[0] if losses else bad
        if source is None:
            return self._unreproduced()
        stats = tensor_stats(source)
        kind = "nan" if stats["nan_count"] else "inf"
        return TorchBirth(
            op=None,
            node_name=None,
            phase="loss",
            kind=kind,
            mechanism=None,
            created=True,
            step=self.step,
            output_shape=tuple(source.shape),
            output_stats=stats,
            note="the model's forward and backward replayed finite: the loss code (between the "
            "model's output and backward()) made it; to name the op the whole step is needed: "
            "decorate the step function with @lucid.debug.torch.step, or run the script under "
            "python -m lucid.debug run, which runs the step again under the instrument",
        )

    def _unreproduced(self) -> TorchBirth:
        return TorchBirth(
            op=None,
            node_name=None,
            phase="backward",
            kind="nan",
            mechanism=None,
            created=False,
            step=self.step,
            note="the replay of this step stayed finite: the run's NaN/Inf did not reproduce",
        )

    def _check_eval(self, call: _ModelCall) -> None:
        if _all_finite(call.outputs, self.check_inf):
            self._calls = []
            self._buffers = None
            return
        instrument = Instrument(check_inf=self.check_inf, step=self.step, allow=self.allow)
        rng_state = torch.get_rng_state()
        self._replaying = True
        try:
            torch.set_rng_state(call.rng_state)
            instrument.model_call_site = call.site
            with torch.no_grad(), instrument:
                call.model(*call.args, **call.kwargs)
        finally:
            self._replaying = False
            torch.set_rng_state(rng_state)
        birth = instrument.births[0] if instrument.births else self._unreproduced()
        nan_event = self._record(birth, "bitwise" if instrument.births else "no")
        if self.on_nonfinite == "warn":
            warnings.warn(f"{birth.headline()}\n{birth.describe()}", RuntimeWarning, stacklevel=3)
            return
        raise NonFiniteError(f"{birth.headline()}\n{birth.describe()}", birth, nan_event)


def _evidence(birth: TorchBirth) -> int:
    """How much a rank's replay saw: 0 the op that made it (or the input or parameter that
    held it), 1 a non-finite loss of its own, 2 nothing (it came through the all-reduce)."""
    if birth.op is not None:
        return 0
    return 1 if birth.phase == "loss" else 2


def _agreed_across_ranks(birth: TorchBirth, step: int) -> TorchBirth:
    """Under torch.distributed every rank reaches a non-finite step together (the gradients
    are all-reduced): they gather what each replay saw, and every rank reports the birth of
    the rank that saw most (the lowest such rank), saying which rank that is."""
    distributed = torch.distributed
    if not (distributed.is_available() and distributed.is_initialized()):
        return birth
    rank, world = distributed.get_rank(), distributed.get_world_size()
    gathered: list = [None] * world
    # The facts only: the op and arguments kept for a reproducer stay on their rank.
    facts = {
        field.name: getattr(birth, field.name)
        for field in dataclasses.fields(birth)
        if field.name not in ("op_function", "op_args")
    }
    distributed.all_gather_object(gathered, (_evidence(birth), rank, facts))
    evidence, birth_rank, facts = min(gathered, key=lambda item: (item[0], item[1]))
    agreed = TorchBirth(**facts)
    if birth_rank == rank:
        agreed.op_function, agreed.op_args = birth.op_function, birth.op_args
    agreed.rank = birth_rank
    agreed.world_size = world
    if birth_rank != rank:
        agreed.note = (
            f"born on rank {birth_rank}, which reports it too; this rank (rank "
            f"{rank}) received it through the gradients' all-reduce at step {step}"
        )
    elif evidence == 2:
        agreed.note = "no rank's replay saw the value made: it did not reproduce"
    return agreed


_REPLAYED = {
    "approximately": "the replay reproduced the run's outputs approximately, not bitwise",
    "no": "the replay did not reproduce the run: the report is of the replay",
    "rerun": "found by running the script again with this step under the instrument",
}
_KEPT_EVENTS = 100
_KEPT_LOSSES = 100_000
ARM_STEP_VARIABLE = "LUCID_DEBUG_TORCH_ARM_STEP"


def _arm_step_from_environment() -> int | None:
    value = os.environ.get(ARM_STEP_VARIABLE)
    return int(value) if value and value.isdigit() else None


def _divergence(losses: list[float]) -> str | None:
    """Where a rerun's losses left the first run's (the CLI passes them), or None."""
    path = os.environ.get("LUCID_DEBUG_TORCH_LOSSES")
    if not path:
        return None
    try:
        with open(path) as file:
            first = json.load(file)
    except (OSError, ValueError):
        return None
    for index, (before, again) in enumerate(zip(first, losses)):
        if before != again and not (math.isnan(before) and math.isnan(again)):
            return (
                f"the rerun's loss at step {index} is {again!r}, the first run's was "
                f"{before!r}: the program is not deterministic, and this report is of the "
                "rerun"
            )
    return (
        f"the rerun's losses equal the first run's, bitwise, for the {len(first)} steps "
        "before this one"
    )


# A sum reads a tensor once and is cheaper than a norm (measured: a fused _foreach_norm of an
# MLP's gradients costs twice their sums); past this many tensors, the one fused norm's single
# call costs less than a call per tensor.
_SUMMED_TENSORS = 64


def _finiteness_values(tensors: list) -> list:
    """Scalars that are all finite exactly when every element is (sums, or one fused norm
    of many tensors: an inf or a nan makes either non-finite; an overflow is confirmed
    after)."""
    if len(tensors) > _SUMMED_TENSORS:
        return list(_private.foreach_norm(tensors))
    return [tensor.sum() for tensor in tensors]


def _check_values(tensors: list, loss_count: int, check_inf: bool) -> tuple[bool, float | None]:
    """(all finite, the first scalar loss) from a sum of each tensor (or one fused norm),
    read back once; a non-finite one is confirmed per tensor (large values can overflow it)."""
    losses = [t for t in tensors[len(tensors) - loss_count :] if t.numel() == 1]
    tensors = [t for t in tensors if t.is_floating_point() and t.numel()]
    if not tensors:
        return True, None
    values = torch.stack(
        [*_finiteness_values(tensors), *(loss.reshape(()).float() for loss in losses[:1])]
    )
    read = values.tolist()
    loss = read[-1] if losses else None
    if all(math.isfinite(value) for value in read):
        return True, loss
    return _all_finite(tensors, check_inf), loss


def _snapshot_state(optimizer: Any) -> dict:
    return {
        id(parameter): {
            k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in state.items()
        }
        for parameter, state in optimizer.state.items()
    }


def _restore_step_state(call: _StepCall, parameters: list, optimizer: Any) -> None:
    with torch.no_grad():
        for parameter in parameters:
            value = call.parameters.get(id(parameter))
            if value is not None:
                parameter.copy_(value)
    for parameter in parameters:
        state = call.optimizer_state.get(id(parameter))
        if state is None:
            optimizer.state.pop(parameter, None)
        else:
            optimizer.state[parameter] = {
                k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in state.items()
            }


_buffer_lists: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _buffers_of(model: torch.nn.Module) -> list:
    """The model's (name, buffer) pairs, listed once per model: walking every module's
    buffers at each step costs more than the copy of a typical model's few buffers."""
    pairs = _buffer_lists.get(model)
    if pairs is None or any(
        getattr(_owner(model, name), name.rpartition(".")[2], None) is not buffer
        for name, buffer in pairs
    ):
        pairs = _buffer_lists[model] = list(model.named_buffers())
    return pairs


def _owner(model: torch.nn.Module, name: str) -> Any:
    owner = name.rpartition(".")[0]
    return model.get_submodule(owner) if owner else model


def _autocast(dtype: Any) -> Any:
    """The CPU autocast region a model call ran in, for its replay (none if it ran in none)."""
    return torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()


def _eager(model: torch.nn.Module) -> torch.nn.Module:
    """The module a replay runs: eagerly, op by op (the one torch.compile wraps), and on this
    rank alone (the one DistributedDataParallel wraps: a replay makes no collective, so a
    rank that stops at its birth leaves no other rank waiting)."""
    model = getattr(model, "_orig_mod", model)
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = model.module
    return getattr(model, "_orig_mod", model)


def _grad_keeper(store: dict, index: int) -> Any:
    def keep(grad: torch.Tensor) -> None:
        store[index] = grad

    return keep


def _load_buffers(model: torch.nn.Module, values: dict) -> None:
    with torch.no_grad():
        for name, buffer in model.named_buffers():
            if name in values:
                buffer.copy_(values[name])


def _all_finite(tensors: list, check_inf: bool) -> bool:
    """Sums (or one fused norm) of every tensor, read back once; a non-finite one is
    confirmed per tensor (large finite values can overflow it)."""
    tensors = [t for t in tensors if t.is_floating_point() and t.numel()]
    if not tensors:
        return True
    if bool(torch.isfinite(torch.stack(_finiteness_values(tensors))).all()):
        return True
    for tensor in tensors:
        has_nan, has_inf = _nonfinite(tensor)
        if has_nan or (has_inf and check_inf):
            return False
    return True


def _as_tuple(value: Any, kind: type, name: str, expected: str) -> tuple:
    if value is None:
        return ()
    values = tuple(value) if isinstance(value, list | tuple) else (value,)
    for item in values:
        if not isinstance(item, kind):
            raise TypeError(f"watch(): {name} must be {expected}, not {type(item).__name__}")
    return values


def watch(
    model: Any = None,
    optimizer: Any = None,
    *,
    check_inf: bool = True,
    on_nonfinite: str = "replay",
    allow: Any = (),
    log_path: Any = None,
) -> Watch:
    """Watch a torch training loop: `with lucid.debug.torch.watch(): ...`, nothing else changed.

    The models (outermost modules with parameters) and the optimizers are found through
    torch's global hooks unless given. At each step of the optimizer, before it changes the
    parameters, the loss and every gradient are checked in one fused pass. On a NaN or Inf,
    `on_nonfinite` says what happens: "replay" (replay the step under the exact instrument,
    then raise a NonFiniteError naming the birth), "raise", "warn", or "skip_step" (drop the
    step's gradients so the optimizer leaves the parameters, as GradScaler does). Eval loops
    (no optimizer) have each model output checked instead.
    """
    return Watch(
        model,
        optimizer,
        check_inf=check_inf,
        on_nonfinite=on_nonfinite,
        allow=allow,
        log_path=log_path,
    )


def step(fn: Any) -> Any:
    """Make `def train_step(batch) -> loss` replayable whole: on a non-finite step, the loss
    code, backward and optimizer step are replayed too (and undone), so a birth anywhere in
    the step is named. Works inside `watch()`, and watches on its own outside one.

    It keeps, per call, a copy of the model's parameters, buffers and gradients and of the
    optimizer's state (so the step can be replayed and undone), and checks the parameters
    after the optimizer's step: a cost `watch()` alone does not have.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _active:
            with Watch():
                return wrapper(*args, **kwargs)
        current = _active[-1]
        if current._replaying:
            return fn(*args, **kwargs)
        model = current.model()
        buffers = {} if model is None else {n: b.clone() for n, b in model.named_buffers()}
        grads, values = {}, {}
        if model is not None:
            for parameter in model.parameters():
                grad = parameter.grad
                grads[id(parameter)] = None if grad is None else grad.clone()
                values[id(parameter)] = parameter.detach().clone()
        optimizer = current._main_optimizer
        state = {} if optimizer is None else _snapshot_state(optimizer)
        current._step_call = _StepCall(
            fn, args, kwargs, torch.get_rng_state(), buffers, grads, values, state
        )
        return fn(*args, **kwargs)

    return wrapper
