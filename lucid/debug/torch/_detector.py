"""NaNDetector for torch models: the module, op and line where a NaN or Inf first appears.

Real torch has no floating-point flags to read, so the detector looks at module boundaries
and lets the exact instrument (`_instrument.py`) name the op:
- every watched module's output gets one cheap finiteness check (a sum, one host read);
- the first module whose output turns non-finite while its inputs and its own parameters were
  finite is where the value appeared. Its forward is re-run on the same inputs (kept by
  reference while it runs), with the RNG state from just before it and, where known, its
  buffers as they were, under the instrument, which names the op, line and innermost module.
  A module that only consumed a NaN (its input held it) is never blamed: a NaN made by a
  functional op between two children is found in their parent's output, and the parent's
  re-run names the op;
- with `check_backward`, the gradient each watched output receives is checked the same way
  (a tensor hook); on the first non-finite one, the model call is re-run forward and
  backward under the instrument, from inside that hook, with the gradient the model's
  output received. Parameter gradients are read in `check_grad_norms()` (one fused pass).
A clean step costs the hooks and one reduction per watched output and per gradient of one;
nothing is re-run.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from lucid._core.sentinel import is_nonfinite_allowed, step_of
from lucid.debug.detector import NaNDetector, _normalized_op
from lucid.debug.event_log import _EventLog
from lucid.debug.events import GradEvent, NaNEvent, _birth_mechanism
from lucid.debug.torch import _private
from lucid.debug.torch._events import to_nan_event
from lucid.debug.torch._grad_norm import parameter_grad_events
from lucid.debug.torch._instrument import (
    Instrument,
    TorchBirth,
    _held,
    _user_frame,
    replay_match,
    tensor_stats,
)
from lucid.debug.torch._instrument import is_finite as _is_finite

__all__ = ["TorchNaNDetector"]

# Model calls kept for a backward re-run: the calls whose backward may still come (gradient
# accumulation, a model called twice per step); dropped at each optimizer step.
_CALLS_KEPT = 4
# Gradient hooks on module outputs whose handles are kept for detach(): a step's worth.
_GRAD_HANDLES_KEPT = 4096
_STATS_KEYS = ("nan_count", "inf_count", "min", "max", "mean")


@dataclass
class _Frame:
    """One running call of a watched module: what a re-run of it needs."""

    module: torch.nn.Module
    path: str
    args: tuple
    kwargs: dict
    rng_state: tuple
    grad_enabled: bool


@dataclass
class _ModelCall:
    """One outermost call of the model: its step, and what a replay of it needs."""

    args: tuple
    kwargs: dict
    rng_state: tuple
    site: tuple  # (filename, line) of the call in the user's code
    batch_idx: int
    model_call: int
    # Buffers the model changes when called (BatchNorm's running statistics), as they were
    # before this call, by id of the buffer.
    buffers: dict
    buffer_versions: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    grad_outputs: dict = field(default_factory=dict)


class _ThreadState(threading.local):
    def __init__(self) -> None:
        # How deep this thread is inside calls of the model, and its running watched modules.
        self.depth = 0
        self.frames: list[_Frame] = []
        # Outputs of watched modules in the running call whose gradients are to be checked.
        self.outputs: list[torch.Tensor] = []


# ------------------------------------------------------------------ values
def _floating_tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        values = [value]
    else:
        values = _private.tree_flatten(value)[0]
    return [
        v
        for v in values
        if isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex())
    ]


def _kind(tensor: torch.Tensor) -> str:
    return "nan" if bool(torch.isnan(tensor.detach()).any()) else "inf"


def _stats(tensor: torch.Tensor) -> dict[str, Any]:
    stats = tensor_stats(tensor)
    return {key: stats[key] for key in _STATS_KEYS}


def _rng_state() -> tuple:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    return torch.get_rng_state(), cuda


def _set_rng_state(state: tuple) -> None:
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)


def _join(path: str, inner: str | None) -> str:
    if not inner:
        return path
    return f"{path}.{inner}" if path else inner


# ------------------------------------------------------------------ detector
class TorchNaNDetector(NaNDetector):
    """`lucid.debug.NaNDetector` for a `torch.nn.Module`; made by NaNDetector itself.

    The same arguments and events as for a lucid model (see NaNDetector); what differs:

    - Every non-skipped module is watched (torch has no flags to name an op between checks);
      each output costs one reduction and one host read, so on a GPU one synchronisation.
    - The op is named by re-running the first module whose output turned non-finite from
      finite inputs and parameters: its other hooks run again, and buffers it changes are
      restored to their state before the call from the second model call on (on the first,
      BatchNorm's running statistics are as the call left them; in training mode its output
      does not read them). After a re-run buffers and the RNG are as the run left them.
    - `check_backward`: on the first non-finite gradient of a watched module's output in a
      step, the model call is re-run forward and backward under the instrument, with the
      gradient its output received (the event's `replayed` says whether the re-run gave
      the run's outputs). A value born in a backward that reaches only parameter
      gradients (the first layer's own weight gradient) is named when `check_grad_norms()`
      finds it. A NaN made by the loss's backward, outside the model, is reported with no
      op (the loss code is not the model's to re-run).
    - Steps: optimizer steps taken while attached (torch's optimizer hooks), once one was
      seen; model calls before that; `set_batch` or `lucid.debug.set_step` override both.
      A torch `GradScaler` step it skips is not counted.
    - Not for torch models: float16 headroom warnings and births in the optimizer's step
      (a parameter it made non-finite is reported as received at the next call).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        stop_on_first: bool = True,
        check_inputs: bool = True,
        check_backward: bool = True,
        grad_norm_warn: float | None = 100.0,
        skip_types: tuple[type, ...] | type = (),
        max_events: int = 100,
        verbose: bool = True,
        *,
        skip_ops: Iterable[str] = (),
        log_path: str | os.PathLike | None = None,
    ) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"NaNDetector expects an nn.Module, got {type(model).__name__}")
        self._set_options(
            model,
            stop_on_first,
            check_inputs,
            check_backward,
            grad_norm_warn,
            skip_types,
            max_events,
            verbose,
            skip_ops,
            log_path,
        )

        self._modules: dict[str, torch.nn.Module] = {}
        skipped: list[str] = []
        for path, module in model.named_modules():
            if any(path == prefix or path.startswith(prefix + ".") for prefix in skipped):
                continue
            if path and isinstance(module, self.skip_types):
                skipped.append(path)
                continue
            self._modules[path] = module
        self._skipped_paths = tuple(skipped)
        self._named_params: list[tuple[str, str, torch.Tensor]] = []
        for path, module in self._modules.items():
            for name, param in module.named_parameters(recurse=False):
                self._named_params.append((_join(path, name), path, param))
        self._buffers = list(model.named_buffers())
        self._changed_buffers: set[int] = set()  # ids of buffers a model call changed

        self._lock = threading.Lock()
        self._handles: list[Any] = []
        self._grad_handles: deque[Any] = deque(maxlen=_GRAD_HANDLES_KEPT)
        self._local = _ThreadState()
        self._calls = 0
        self._manual_batch: int | None = None
        self._optimizer_steps = 0
        self._saw_optimizer = False
        self._updates_model: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._stopped = False
        self._replaying = False
        # The current step's state, reset when the model is called.
        self._quiet = False  # stopped, or this step already has its event
        self._recording = False
        self._call: _ModelCall | None = None
        self._backward_calls: deque[_ModelCall] = deque(maxlen=_CALLS_KEPT)
        self._excused_kinds: set[str] = set()
        self._pending_input: tuple[str, torch.Tensor] | None = None
        self._first_bad: tuple | None = None
        self._log = _EventLog(self.log_path, self.max_events)

    # ------------------------------------------------------------ lifecycle
    def attach(self) -> TorchNaNDetector:
        """Hook the model (a second call does nothing); returns the detector."""
        with self._lock:
            if self._handles:
                return self
            model = self.model
            handles = [
                model.register_forward_pre_hook(self._before_model, with_kwargs=True),
                model.register_forward_hook(self._after_model, with_kwargs=True, always_call=True),
                _private.register_optimizer_step_post_hook(self._after_optimizer_step),
            ]
            for path, module in self._modules.items():
                if not path:
                    continue  # the model's own hooks above
                handles.append(
                    module.register_forward_pre_hook(self._enter_hook(path), with_kwargs=True)
                )
                handles.append(
                    module.register_forward_hook(
                        self._leave_module, with_kwargs=True, always_call=True
                    )
                )
            self._handles = handles
        return self

    def detach(self) -> None:
        """Remove every hook (a second call does nothing)."""
        with self._lock:
            for handle in self._handles:
                handle.remove()
            self._handles = []
            while self._grad_handles:
                self._grad_handles.popleft().remove()
            self._backward_calls.clear()
            self._call = None
            self._local.depth = 0
            self._local.frames.clear()
            self._local.outputs.clear()

    # ------------------------------------------------------------ steps
    def _after_optimizer_step(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        updates = self._updates_model.get(optimizer)
        if updates is None:
            params = {id(param) for _, _, param in self._named_params}
            updates = any(
                id(param) in params for group in optimizer.param_groups for param in group["params"]
            )
            self._updates_model[optimizer] = updates
        if updates:
            with self._lock:
                self._optimizer_steps += 1
                self._saw_optimizer = True
                # The parameters changed: no earlier call can be replayed as it ran.
                self._backward_calls.clear()

    def _step_now(self) -> int:
        if self._manual_batch is not None:
            return self._manual_batch
        step = step_of(self.model)  # lucid.debug.set_step's, else None for a torch model
        if step is not None:
            return step
        return self._optimizer_steps if self._saw_optimizer else self._calls - 1

    def _step_fields(self, call: _ModelCall | None = None) -> dict[str, Any]:
        """The fields shared by every event of a call (the latest one unless given): its step
        and what a reproducer needs (the batch, copied; the CPU RNG state at the call; the
        model)."""
        call = call or self._call
        if call is None:
            return {"batch_idx": self.batch_idx, "model_call": None}
        batch = tuple(
            value.detach().clone() if isinstance(value, torch.Tensor) else value
            for value in call.args
        )
        return {
            "batch_idx": call.batch_idx,
            "model_call": call.model_call,
            "batch": batch,
            "rng_state": call.rng_state[0].numpy().copy(),
            "model": weakref.ref(self.model),
        }

    # ------------------------------------------------------------ model hooks
    def _before_model(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        if self._replaying:
            return
        local = self._local
        local.depth += 1
        if local.depth > 1:
            return
        local.frames.clear()
        local.outputs.clear()
        self._calls += 1
        self.batch_idx = self._step_now()
        self._quiet = self._stopped
        if self._stopped:
            return
        self._excused_kinds.clear()
        self._pending_input = None
        self._first_bad = None
        rng_state = _rng_state()
        site = _user_frame(1)
        buffers = {
            id(buffer): buffer.clone()
            for _, buffer in self._buffers
            if id(buffer) in self._changed_buffers
        }
        versions = [buffer._version for _, buffer in self._buffers]
        call = _ModelCall(
            args, kwargs, rng_state, site, self.batch_idx, self._calls - 1, buffers, versions
        )
        self._call = call
        if self.check_inputs and not is_nonfinite_allowed():
            self._pending_input = self._bad_batch(args)
        grad_enabled = torch.is_grad_enabled()
        local.frames.append(_Frame(module, "", args, kwargs, rng_state, grad_enabled))

    @staticmethod
    def _bad_batch(args: tuple) -> tuple[str, torch.Tensor] | None:
        """(kind, tensor) of the first positional argument holding NaN or +inf; one holding
        only -inf is an additive mask the user passed, asked for."""
        for tensor in _floating_tensors(args):
            if _is_finite(tensor):
                continue
            values = tensor.detach()
            if bool(torch.isnan(values).any()):
                return "nan", tensor
            if bool(torch.isposinf(values).any()):
                return "inf", tensor
        return None

    def _after_model(self, module: torch.nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        if self._replaying:
            return
        local = self._local
        # max: a detector attached inside a model call never saw that call begin.
        local.depth = max(local.depth - 1, 0)
        if local.depth:
            return
        frame = local.frames.pop() if local.frames and local.frames[-1].module is module else None
        call = self._call
        if call is not None:
            for (_, buffer), version in zip(self._buffers, call.buffer_versions):
                if buffer._version != version:
                    self._changed_buffers.add(id(buffer))
        if frame is not None and not self._quiet and output is not None:
            self._check_model_output(frame, call, _floating_tensors(output))
        local.outputs.clear()

    def _check_model_output(
        self, frame: _Frame, call: _ModelCall, tensors: list[torch.Tensor]
    ) -> None:
        if self._pending_input is not None:
            self._record(self._input_event(tensors))
            return
        bad = [tensor for tensor in tensors if not _is_finite(tensor)]
        if bad:
            self._on_bad_output(frame, bad)
        if not self._quiet and self._first_bad is not None:
            self._explain_received()
        if not self._quiet and self.check_backward and frame.grad_enabled:
            self._watch_model_gradients(call, tensors)

    def _enter_hook(self, path: str) -> Callable:
        def enter(module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
            if self._quiet or self._replaying or not self._local.depth:
                return
            self._local.frames.append(
                _Frame(module, path, args, kwargs, _rng_state(), torch.is_grad_enabled())
            )

        return enter

    def _leave_module(
        self, module: torch.nn.Module, args: tuple, kwargs: dict, output: Any
    ) -> None:
        frames = self._local.frames
        # A re-run of a module still running (an ancestor of the module that saw the value)
        # must not take that module's frame.
        if self._replaying or not frames or frames[-1].module is not module:
            return
        frame = frames.pop()
        if self._quiet or output is None:
            return
        tensors = _floating_tensors(output)
        bad = [tensor for tensor in tensors if not _is_finite(tensor)]
        if bad:
            self._on_bad_output(frame, bad)
        if self.check_backward and frame.grad_enabled and not self._quiet:
            # Hooked when the model returns, after the hooks on its own outputs.
            self._local.outputs.extend(tensor for tensor in tensors if tensor.requires_grad)

    # ------------------------------------------------------------ forward
    def _on_bad_output(self, frame: _Frame, bad: list[torch.Tensor]) -> None:
        """A watched module's output holds NaN or Inf and this step has no event yet."""
        if is_nonfinite_allowed():
            return
        out_nan, out_inf = _held(bad)
        inputs = _floating_tensors((frame.args, frame.kwargs))
        in_nan, in_inf = _held(inputs)
        if self._pending_input is not None and (in_nan or in_inf):
            self._record(self._input_event(bad))
            return
        if self._first_bad is None:
            self._first_bad = (frame, bad[0], in_nan, in_inf, _user_frame(1))
        # Born here, the instrument's rule at module scale: a NaN where no input held one, an
        # Inf where no input held a NaN or an Inf. Otherwise it came in and is not this
        # module's; its parent (whose input was finite) is where it appeared.
        if out_nan and not in_nan:
            kind = "nan"
        elif out_inf and not (in_nan or in_inf):
            kind = "inf"
        else:
            return
        if kind in self._excused_kinds or self._made_by_skipped_op(bad):
            return
        received = self._held_by_own_state(frame.module)
        if received is not None:
            name, tensor, held = received
            self._record(self._parameter_event(frame, name, tensor, held, out_nan, out_inf))
            return
        # The first non-finite value wins: a NaN made from an Inf that came in is the Inf's
        # consequence, so the scope re-run is the nearest enclosing call whose inputs were
        # finite, where that Inf was made (unless it was the user's, already excused).
        scope = frame
        if (in_nan or in_inf) and "inf" not in self._excused_kinds:
            scope = self._finite_ancestor() or frame
        birth = self._rerun(scope)
        if birth is not None:
            self._on_forward_birth(scope, birth)
        elif kind == "nan":
            mechanism = (
                "no op made it when the module was re-run from the same inputs: "
                "written as a value (a constant, masked_fill, a buffer), or the "
                "re-run did not reproduce the run"
            )
            self._record(
                self._output_event(frame, bad[0], kind, in_nan, in_inf, _user_frame(1), mechanism)
            )
        else:
            # No op made it: an inf written as a value the user asked for (masked_fill,
            # full, a mask), or flowing on from one. Intentional infinities are not anomalies.
            self._excused_kinds.add("inf")

    @staticmethod
    def _held_by_own_state(module: torch.nn.Module) -> tuple[str, torch.Tensor, str] | None:
        """(name, tensor, kind) of the module's own parameter holding NaN or Inf, or buffer
        holding NaN (an Inf in a buffer is a mask the user wrote)."""
        for name, param in module.named_parameters(recurse=False):
            if param.is_floating_point() and not _is_finite(param):
                return name, param, _kind(param)
        for name, buffer in module.named_buffers(recurse=False):
            if buffer.is_floating_point() and not _is_finite(buffer) and _kind(buffer) == "nan":
                return name, buffer, "nan"
        return None

    def _made_by_skipped_op(self, tensors: list[torch.Tensor]) -> bool:
        if not self._skipped_op_keys:
            return False
        for tensor in tensors:
            grad_fn = tensor.grad_fn
            if grad_fn is not None and _normalized_op(grad_fn.name()) in self._skipped_op_keys:
                return True
        return False

    def _rerun(self, frame: _Frame) -> TorchBirth | None:
        """Re-run one module's forward under the instrument: its first birth, or None."""
        call = self._call
        module = frame.module
        instrument = Instrument(stop_on_first=False, step=call.batch_idx)
        instrument.model_call_site = call.site
        # The re-run module is the instrument's model: births are named by paths below it.
        instrument.model = module
        instrument.names = {id(inner): name for name, inner in module.named_modules()}
        buffers = list(module.buffers())
        after = [buffer.clone() for buffer in buffers]
        rng_state = _rng_state()
        self._replaying = True
        try:
            with torch.no_grad():
                for buffer in buffers:
                    before = call.buffers.get(id(buffer))
                    if before is not None:
                        buffer.copy_(before)
            _set_rng_state(frame.rng_state)
            with torch.set_grad_enabled(frame.grad_enabled):
                instrument.run(module, *frame.args, **frame.kwargs)
        except Exception:  # noqa: BLE001 - a forward that raises on the value: births so far
            pass
        finally:
            self._replaying = False
            with torch.no_grad():
                for buffer, value in zip(buffers, after):
                    buffer.copy_(value)
            _set_rng_state(rng_state)
        return self._first_birth(module, instrument.births)

    def _finite_ancestor(self) -> _Frame | None:
        """The innermost running call of a watched module whose inputs were all finite."""
        for frame in reversed(self._local.frames):
            if _held(_floating_tensors((frame.args, frame.kwargs))) == (False, False):
                return frame
        return None

    @staticmethod
    def _first_birth(module: torch.nn.Module, births: list) -> TorchBirth | None:
        buffer_names = {name for name, _ in module.named_buffers()}
        for birth in births:
            if (
                birth.received
                and birth.kind == "inf"
                and (birth.phase == "input" or birth.op in buffer_names)
            ):
                continue  # an inf the user passed or wrote into a buffer: a mask
            return birth
        return None

    def _on_forward_birth(self, frame: _Frame, birth: TorchBirth) -> None:
        path = _join(frame.path, birth.module_path)
        op_key = _normalized_op(birth.op or "")
        if self._is_skipped(path) or op_key in self._skipped_op_keys:
            self._excused_kinds.add(birth.kind)
            return
        if birth.phase == "forward" and not frame.grad_enabled:
            birth.phase = "eval"
        if birth.received and birth.phase == "parameter":
            birth.op = _join(frame.path, birth.op)
        module_type = birth.module_type if birth.module_path is not None else None
        self._record(
            self._birth_event(birth, path, module_type or type(frame.module).__name__, self._call)
        )

    def _explain_received(self) -> None:
        """The model returned after a module received a NaN that no checked module, input or
        parameter explains (a keyword argument, check_inputs off, or a NaN made and then
        dropped in code between modules): the model is re-run to find it."""
        frame, tensor, in_nan, in_inf, site = self._first_bad
        if not in_nan or "nan" in self._excused_kinds:
            return  # an Inf that came in: the user's (a mask), or one already excused
        root = _Frame(
            self.model,
            "",
            self._call.args,
            self._call.kwargs,
            self._call.rng_state,
            frame.grad_enabled,
        )
        birth = None
        if not _held(_floating_tensors(self._call.args))[0]:
            birth = self._rerun(root)
        if birth is not None and not birth.received:
            self._on_forward_birth(root, birth)
            return
        mechanism = (
            "its input already held nan, which no checked input or parameter brought "
            "in (a keyword argument, or check_inputs off)"
        )
        self._record(self._output_event(frame, tensor, "nan", in_nan, in_inf, site, mechanism))

    # ------------------------------------------------------------ backward
    def _watch_model_gradients(self, call: _ModelCall, outputs: list[torch.Tensor]) -> None:
        """Keep the gradient each output of the model receives, for a backward re-run, and
        check it: a non-finite one was made by the loss's backward, outside the model."""
        call.outputs = outputs
        handles = self._grad_handles
        for index, tensor in enumerate(outputs):
            if tensor.requires_grad:
                handles.append(tensor.register_hook(self._output_grad_hook(call, index)))
        # The gradient of the model's output is seen first (above): a NaN the loss's backward
        # made is reported there, not as a birth inside the model.
        for tensor in self._local.outputs:
            if not any(tensor is output for output in outputs):
                handles.append(tensor.register_hook(self._check_grad))
        self._local.outputs.clear()
        self._backward_calls.append(call)

    def _output_grad_hook(self, call: _ModelCall, index: int) -> Callable:
        def keep(grad: torch.Tensor) -> None:
            if self._replaying or not self._handles:
                return
            call.grad_outputs[index] = grad
            if not self._quiet and not _is_finite(grad):
                self._on_loss_backward(call, grad)

        return keep

    def _check_grad(self, grad: torch.Tensor) -> None:
        if self._quiet or self._replaying or not self._handles or grad is None:
            return
        if not _is_finite(grad):
            self._on_bad_gradient()

    def _on_loss_backward(self, call: _ModelCall, grad: torch.Tensor) -> None:
        kind = _kind(grad)
        event = NaNEvent(
            layer_name="",
            module_type=None,
            kind=kind,
            op=None,
            location=None,
            is_backward=True,
            input_has_nan=False,
            input_has_inf=False,
            output_has_nan=kind == "nan",
            output_has_inf=bool(torch.isinf(grad).any()),
            output_shape=tuple(grad.shape),
            stats=_stats(grad),
            mechanism=f"the gradient reaching the model's output already held {kind}: the "
            "loss's backward, outside the model, made it",
            phase="backward",
            **self._step_fields(call),
        )
        self._record(event)

    def _on_bad_gradient(self, report_unreproduced: bool = True) -> None:
        """The first non-finite gradient of the step: replay the model calls whose backward
        runs now, newest first, until the instrument names the birth (a replay that stays
        finite is an event too, unless told otherwise)."""
        with self._lock:
            if self._quiet or self._replaying:
                return
            calls = [call for call in reversed(self._backward_calls) if call.grad_outputs]
        if is_nonfinite_allowed():
            return
        for call in calls:
            birth, replayed = self._replay_backward(call)
            if birth is not None:
                if self._is_skipped(birth.module_path or "") or (
                    _normalized_op(birth.op or "") in self._skipped_op_keys
                ):
                    self._quiet = True  # an intended value: the rest of the step follows it
                    return
                module_type = birth.module_type if birth.module_path is not None else None
                event = self._birth_event(birth, birth.module_path or "", module_type, call)
                self._record(dataclasses.replace(event, replayed=replayed))
                return
        if not report_unreproduced:
            return
        call = calls[0] if calls else self._call
        event = NaNEvent(
            layer_name="",
            module_type=None,
            kind="nan",
            op=None,
            location=None,
            is_backward=True,
            input_has_nan=False,
            input_has_inf=False,
            output_has_nan=True,
            output_has_inf=False,
            output_shape=None,
            stats={},
            mechanism="a gradient turned non-finite, but the re-run of the model's forward and "
            "backward stayed finite: the run did not reproduce",
            phase="backward",
            replayed="no",
            **self._step_fields(call),
        )
        self._record(event)

    def _replay_backward(self, call: _ModelCall) -> tuple[TorchBirth | None, str]:
        """Re-run one model call forward and backward (with the gradients its outputs got)
        under the instrument; the run's gradients, buffers and RNG state are put back."""
        model = self.model
        params = list(model.parameters())
        grads = [param.grad for param in params]
        buffers = [buffer for _, buffer in self._buffers]
        after = [buffer.clone() for buffer in buffers]
        rng_state = _rng_state()
        instrument = Instrument(stop_on_first=True, step=call.batch_idx)
        instrument.model_call_site = call.site
        # The replay runs from here: an op with no user frame inside the model (a torch
        # layer's own) is named at the model call, not at this caller's line.
        outside = _user_frame(1)
        instrument.model = model
        instrument.names = {id(inner): name for name, inner in model.named_modules()}
        compared = ["no"]

        def step() -> None:
            with torch.enable_grad():
                outputs = _floating_tensors(model(*call.args, **call.kwargs))
                compared[0] = replay_match(call.outputs, outputs)
                pairs = [
                    (output, call.grad_outputs[index])
                    for index, output in enumerate(outputs)
                    if index in call.grad_outputs and output.requires_grad
                ]
                if pairs:
                    torch.autograd.backward(
                        [output for output, _ in pairs], [grad for _, grad in pairs]
                    )

        self._replaying = True
        try:
            for param in params:
                param.grad = None
            with torch.no_grad():
                for buffer in buffers:
                    before = call.buffers.get(id(buffer))
                    if before is not None:
                        buffer.copy_(before)
            _set_rng_state(call.rng_state)
            instrument.run(step)
        except Exception:  # noqa: BLE001 - a replay that raises: births so far
            pass
        finally:
            self._replaying = False
            for param, grad in zip(params, grads):
                param.grad = grad
            with torch.no_grad():
                for buffer, value in zip(buffers, after):
                    buffer.copy_(value)
            _set_rng_state(rng_state)
        births = [birth for birth in instrument.births if not birth.received]
        if not births:
            return None, compared[0]
        birth = births[0]
        if (birth.filename, birth.lineno) == outside:
            birth.filename, birth.lineno = call.site
        return birth, compared[0]

    # ------------------------------------------------------------ events
    def _is_skipped(self, path: str) -> bool:
        return any(
            path == skipped or path.startswith(skipped + ".") for skipped in self._skipped_paths
        )

    def _birth_event(
        self, birth: TorchBirth, path: str, module_type: str | None, call: _ModelCall | None
    ) -> NaNEvent:
        event = to_nan_event(birth)
        mechanism = event.mechanism
        if birth.received:
            mechanism = (
                f"the parameter {birth.op} already held {birth.kind} before the step: "
                "no op created it"
            )
        elif birth.op is not None:
            mechanism = _birth_mechanism(birth)
        return dataclasses.replace(
            event,
            layer_name=path,
            module_type=module_type,
            mechanism=mechanism,
            **self._step_fields(call),
        )

    def _location(self, site: tuple) -> str | None:
        filename, lineno = site
        return None if filename is None else f"{filename}:{lineno}"

    def _input_event(self, outputs: list[torch.Tensor]) -> NaNEvent:
        """A non-finite batch: received, not born (op 'input', no module), at the line where
        it entered the model."""
        kind, batch = self._pending_input
        self._pending_input = None
        out_nan, out_inf = _held(outputs)
        return NaNEvent(
            layer_name="",
            module_type=None,
            kind=kind,
            op="input",
            location=self._location(self._call.site),
            is_backward=False,
            input_has_nan=bool(torch.isnan(batch).any()),
            input_has_inf=bool(torch.isinf(batch).any()),
            output_has_nan=out_nan,
            output_has_inf=out_inf,
            output_shape=tuple(batch.shape),
            stats=_stats(batch),
            mechanism=f"the batch passed to the model holds {kind}",
            phase="input",
            received=True,
            **self._step_fields(self._call),
        )

    def _parameter_event(
        self,
        frame: _Frame,
        name: str,
        tensor: torch.Tensor,
        kind: str,
        out_nan: bool,
        out_inf: bool,
    ) -> NaNEvent:
        """A parameter that already held `kind`: op is its dotted name, the layer is the
        module that owns it, the line is where the batch entered the model."""
        full = _join(frame.path, name)
        return NaNEvent(
            layer_name=frame.path,
            module_type=type(frame.module).__name__,
            kind=kind,
            op=full,
            location=self._location(self._call.site),
            is_backward=False,
            input_has_nan=False,
            input_has_inf=False,
            output_has_nan=out_nan,
            output_has_inf=out_inf,
            output_shape=tuple(tensor.shape),
            stats=_stats(tensor),
            mechanism=f"the parameter {full} already held {kind} before the step: no op created it",
            phase="parameter",
            received=True,
            **self._step_fields(self._call),
        )

    def _output_event(
        self,
        frame: _Frame,
        tensor: torch.Tensor,
        kind: str,
        in_nan: bool,
        in_inf: bool,
        site: tuple,
        mechanism: str,
    ) -> NaNEvent:
        """A watched module whose output turned non-finite with no op to blame."""
        return NaNEvent(
            layer_name=frame.path,
            module_type=type(frame.module).__name__,
            kind=kind,
            op=None,
            location=self._location(site),
            is_backward=False,
            input_has_nan=in_nan,
            input_has_inf=in_inf,
            output_has_nan=bool(torch.isnan(tensor).any()),
            output_has_inf=bool(torch.isinf(tensor).any()),
            output_shape=tuple(tensor.shape),
            stats=_stats(tensor),
            mechanism=mechanism,
            phase="forward" if frame.grad_enabled else "eval",
            **self._step_fields(self._call),
        )

    def _loss_event(self, loss: torch.Tensor) -> NaNEvent:
        """A non-finite loss that no event of the model explains (train_with_nan_guard)."""
        values = loss.detach()
        kind = _kind(values)
        return NaNEvent(
            layer_name="",
            module_type=None,
            kind=kind,
            op=None,
            location=None,
            is_backward=False,
            input_has_nan=False,
            input_has_inf=False,
            output_has_nan=kind == "nan",
            output_has_inf=bool(torch.isinf(values).any()),
            output_shape=tuple(values.shape),
            stats=_stats(values),
            mechanism="the model's output was finite: the loss computation made it",
            phase="loss",
            **self._step_fields(),
        )

    # ------------------------------------------------------------ gradients
    def check_grad_norms(self) -> list[GradEvent]:
        """After `backward()`: flag non-finite gradients and norms above `grad_norm_warn`,
        from one fused pass over the gradients and one host read.

        With `check_backward`, a non-finite gradient that no event of the step explains (a
        value born in a backward that reached only parameter gradients, which the per-step
        hooks on module outputs do not see) is named first by a backward re-run of the step,
        as an event; with `stop_on_first` this call then returns [], as when the event came
        during backward.
        """
        if self._stopped:
            return []
        found = parameter_grad_events(
            self._named_params, self._module_type, self.grad_norm_warn, self.batch_idx
        )
        if self.check_backward and not self._quiet and any(e.reason != "large" for e in found):
            # A gradient the replay cannot make (set by user code after backward) stays a
            # gradient event only.
            self._on_bad_gradient(report_unreproduced=False)
            if self._stopped:
                return []
        for event in found:
            self.grad_events.append(event)
            self._log.report(event, event.to_dict(), self.verbose)
        return found
