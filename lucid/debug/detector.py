"""NaNDetector: names the step, module, op and line where a NaN or Inf first appears.

It rides on the always-on sentinel (lucid._core.sentinel): NumPy's floating-point flags
fire inside the op that creates a non-finite value, and the sentinel hands each confirmed birth
to the detector with its op, line and module path, at no cost while values stay finite. What
flags cannot see (a NaN arriving with the batch or a parameter, a NaN written as a value) is
caught by one cheap pass over each module output and a final check of the model's output.
Infinities written as values (attention masks) are what the user asked for, and like the
sentinel the detector does not report them.

This module holds the hooks and the step they follow; the events are made in events.py,
reported through event_log.py, and the float16/bfloat16 headroom and gradient checks sit in
headroom.py and param_grads.py.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

import lucid
from lucid._core import observers
from lucid._core.grad_mode import local_state
from lucid._core.sentinel import (
    BACKWARD_PHASES,
    add_birth_listener,
    capture_frames,
    holds_nonfinite,
    is_nonfinite_allowed,
    is_scaled_backward,
    is_sentinel_enabled,
    node_op_name,
    nonfinite_kind,
    remove_birth_listener,
    step_of,
    user_location,
)
from lucid._tensor import Tensor
from lucid.autograd.anomaly_mode import copy_arguments
from lucid.debug.event_log import _EventLog
from lucid.debug.events import (
    GradEvent,
    NaNEvent,
    _encoded_rng_state,
    _event_from_birth,
    _event_from_input,
    _event_from_loss,
    _event_from_output,
    _tensors_in,
)
from lucid.debug.headroom import HeadroomWarning, _HeadroomWatch, is_low_precision
from lucid.debug.param_grads import _check_parameter_grads
from lucid.nn import Module

__all__ = ["NaNDetector", "NaNEvent", "GradEvent", "HeadroomWarning", "train_with_nan_guard"]

# Nodes remembered per step for naming backward births (check_backward): far above any
# model's op count per step, and a hard bound on memory when a step never ends.
_NODE_PATHS_KEPT = 1 << 16
_EXCUSED_KEPT = 64


def _normalized_op(name: str) -> str:
    """'masked_fill', 'MaskedFill', 'MaskedFillTensorInplace', 'MaskedFillBackward0' -> one key."""
    key = name.replace("_", "").lower().rstrip("0123456789")
    for suffix in ("backward", "inplace", "tensor", "scalar"):
        key = key.removesuffix(suffix)
    return key


def _caller_location() -> str | None:
    """file:line of the innermost caller outside lucid."""
    filename, lineno = user_location(capture_frames(1, 1))
    return None if filename is None else f"{filename}:{lineno}"


def _is_torch_module(value: Any) -> bool:
    """Whether `value` is a torch.nn.Module, without importing torch (none exists before it
    is imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.nn.Module)


def _is_additive_mask(array: np.ndarray) -> bool:
    """Whether an array holding inf is an additive attention mask: -inf, and no NaN or +inf.

    Called only once an inf was found."""
    if array.dtype.kind == "c":
        return False
    return not (np.isnan(array).any() or np.isposinf(array).any())


def _parameter_holds(module: Module, kind: str) -> bool:
    return any(holds_nonfinite(param, kind) for param in module.parameters(recurse=False))


def _names_a_forward_line(birth: Any, owner: Any) -> bool:
    """Whether a backward birth's own location is already the line to report.

    The sentinel names the line inside a user's custom `backward` where a value was created,
    and (where it keeps per-node forward sites) the forward line of a built-in op; otherwise
    its location is the line that called backward(), the innermost user frame right now.
    """
    if birth.filename is None:
        return False
    function = getattr(owner, "function", None)
    if function is not None and not function.__module__.startswith("lucid."):
        return True  # a custom Function: the line inside its backward
    return birth.location != _caller_location()


class _ThreadSteps(threading.local):
    # How deep this thread is inside calls of the detector's model, and the model's own path
    # on the module-path stack (empty when it is the outermost module called).
    depth = 0
    prefix = ""


class _NodeRecorder:
    """Observer (check_backward only): where each node of a step was recorded in the forward,
    inside the model or after it (the loss), for naming births in its backward."""

    def __init__(self, detector: NaNDetector) -> None:
        self.detector = detector
        # Read once per op: the step's record (cleared in place) and the thread's depth.
        self.paths = detector._node_paths
        self.local = detector._local

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        # From the first model call on (the loss follows the model), until the step has its
        # event. Kept raw, resolved only on a birth: whether the op ran inside the model, the
        # module-path stack, and the user's forward line as a (code, offset) pair.
        if node.is_recording and self.detector._recording:
            paths = self.paths
            if len(paths) < _NODE_PATHS_KEPT:
                paths[node.sequence_nr] = (
                    self.local.depth,
                    local_state.module_path,
                    capture_frames(1, 1),
                )


# ------------------------------------------------------------------- detector
class NaNDetector:
    """Report the first module whose output turns NaN or Inf, with the op, line and step.

    Drop-in for the common forward-hook detector: the same constructor, `with` or
    `attach()`/`detach()`, `set_batch(i)`, `triggered`, `event`, `events`, `grad_events`,
    `check_grad_norms()`, `summary()`. Unlike a forward-hook design it names the op that created
    the value (from the sentinel), never blames the parent containers or the module that
    consumed a NaN made by a functional op between modules (then the module whose forward ran
    that op is named: the model itself or the parent). It stays cheap: no per-op work while
    values are finite.

    - Steps: each outermost `model(...)` call is one step (`batch_idx` 0, 1, ...). Once
      `set_batch(i)` is called, every later call belongs to batch `i` until the next
      `set_batch`.
    - One event per step: the first non-finite value of that step. Later modules that carry it
      on, and backward values derived from it, are not reported. With `stop_on_first` (the
      default) nothing is recorded after the first event; nothing is ever raised.
    - Module outputs get one cheap pass each (a BLAS dot), on the modules where a value can
      turn non-finite without a floating-point flag (see `_paths_to_watch`); the model's output
      gets a final one.
    - What is a birth follows the sentinel: an op that creates a non-finite value from inputs
      without one. Infinities written as values (`masked_fill`, `fill_`, `full`, `where` with
      an inf, a mask buffer or argument) are not anomalies, nor is an Inf that flows on from
      them, so a -inf attention mask is never reported; a module output holding inf is
      reported only when no op created it and the module's own parameter holds it (with the
      sentinel off, every non-finite output is reported, as the op is not known).
    - `check_inputs`: a positional argument of the model call holding NaN or +inf is reported
      as received (`received`, op 'input', no module) at the line of the model call; a
      parameter that already holds one is reported the same way, with its dotted name as the
      op. An argument holding -inf and neither of those is taken as an additive mask. Keyword
      arguments are not checked.
    - Births outside the model call are events too, with no module (`module_type` None): in
      the loss or the optimizer's update (ops on the model's output or parameters) they belong
      to the current step; on plain tensors (preparing a batch) to the next model call's step.
    - `check_backward` (default True): births during `backward()` are reported too
      (`is_backward`) at their own step, named with the op, the module and the forward line of
      the op whose backward made the value (the sentinel's own where it knows them; otherwise
      the detector's record of each op's forward, kept for the step, in the model and in the
      loss: about 2 us per op, 1-2% of the benchmarks' MLP, CNN and transformer steps). With
      it off, a backward birth shows up a step later as the NaN weights it left behind.
    - `check_grad_norms()`, after `backward()`, puts every parameter gradient that is non-finite
      or has an L2 norm above `grad_norm_warn` into `grad_events`.
    - Under a `lucid.amp.GradScaler`, gradients that still carry the loss scale are judged
      unscaled (their norm divided by the scale), and an overflow of the scaled backward is
      the scaler's to report (it skips the step): neither a backward event nor a gradient
      event. A NaN of an invalid operation in a scaled backward is still reported.
    - `skip_types`: modules of these types, and everything inside them, are not watched (a
      non-finite value one of them hands on is reported where it next turns up).
      `skip_ops`: ops (e.g. 'masked_fill' or 'MaskedFill') whose non-finite results are
      intended; a module output made non-finite by one of them in that step is not reported.
      Inside `lucid.debug.allow_nonfinite()` nothing is reported.
    - float16 and bfloat16 outputs (under autocast, the lower-precision activations) and
      gradients past 1/8 of their dtype's largest value raise one `HeadroomWarning` per
      module or parameter, naming the op that made the value and the user's line.
    - Reports: events go to the `lucid.debug` logger, at WARNING when `verbose` (the first
      event with its full report, later ones in one line), else at DEBUG; with `log_path`,
      each event is also appended to that file as one JSON line (at most `max_events` lines of
      each kind per detector). `events` and `grad_events` keep the newest `max_events`.

    The op of a value is known while the sentinel is on (the default); with it off
    (`LUCID_SENTINEL=0`), events still name the module and step, with `op` None.

    A `torch.nn.Module` is watched the same way, with the same arguments and events, through
    torch's hooks and lucid's exact instrument for torch (lucid.debug.torch; see
    TorchNaNDetector there for what differs). torch is imported only for a torch model.

    Example::

        with lucid.debug.NaNDetector(model) as detector:
            for x, y in loader:
                loss = criterion(model(x), y)
                if detector.triggered:
                    print(detector.event)
                    break
                loss.backward()
                optimizer.step()
    """

    def __new__(cls, model: Any = None, *args: Any, **kwargs: Any) -> NaNDetector:
        # A torch model gets the torch detector, a subclass whose module imports torch.
        if cls is NaNDetector and _is_torch_module(model):
            from lucid.debug.torch._detector import TorchNaNDetector

            return super().__new__(TorchNaNDetector)
        return super().__new__(cls)

    def __init__(
        self,
        model: Module,
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
        if not isinstance(model, Module):
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

        self._modules: dict[str, Module] = {}
        skipped: list[str] = []
        for path, module in model.named_modules():
            if any(path == prefix or path.startswith(prefix + ".") for prefix in skipped):
                continue
            if path and isinstance(module, self.skip_types):
                skipped.append(path)
                continue
            self._modules[path] = module
        self._skipped_paths = tuple(skipped)
        self._named_params: list[tuple[str, str, Tensor]] = []
        self._param_paths: dict[int, str] = {}
        for path, module in self._modules.items():
            for name, param in module.named_parameters(recurse=False):
                full = f"{path}.{name}" if path else name
                self._named_params.append((full, path, param))
                self._param_paths[id(param)] = path

        self._lock = threading.Lock()
        self._handles: list[Any] = []
        self._local = _ThreadSteps()
        self._calls = 0
        self._manual_batch: int | None = None
        self._stopped = False
        # The current step's state, reset when the model is called.
        self._quiet = False  # stopped, or this step already has its event
        self._recording = False  # check_backward, a step has begun and is not quiet
        self._excused_kinds: set[str] = set()
        self._pending_input: tuple[str, np.ndarray, str | None] | None = None
        self._model_location: str | None = None  # the latest model call's line
        self._batch_args: tuple = ()
        self._rng_state: dict | None = None
        self._outside_birth: tuple | None = None
        self._deferred_birth: tuple | None = None
        self._node_paths: dict[int, tuple[int, tuple, tuple]] = {}
        self._recorder = _NodeRecorder(self) if self.check_backward else None
        self._recorder_thread: int | None = None
        self._headroom = _HeadroomWatch()
        self._log = _EventLog(self.log_path, self.max_events)

    # ------------------------------------------------------------ lifecycle
    def _set_options(
        self,
        model: Any,
        stop_on_first: bool,
        check_inputs: bool,
        check_backward: bool,
        grad_norm_warn: float | None,
        skip_types: Any,
        max_events: int,
        verbose: bool,
        skip_ops: Any,
        log_path: Any,
    ) -> None:
        """The arguments, checked as PyTorch-style errors, and the detector's bounded state
        (shared by the torch detector)."""
        if max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {max_events}")
        if grad_norm_warn is not None and not grad_norm_warn > 0:
            raise ValueError(f"grad_norm_warn must be positive or None, got {grad_norm_warn}")
        if isinstance(skip_types, type):
            skip_types = (skip_types,)
        if isinstance(skip_ops, str):
            skip_ops = (skip_ops,)
        self.model = model
        self.stop_on_first = bool(stop_on_first)
        self.check_inputs = bool(check_inputs)
        self.check_backward = bool(check_backward)
        self.grad_norm_warn = None if grad_norm_warn is None else float(grad_norm_warn)
        self.skip_types = tuple(skip_types)
        self.skip_ops = tuple(skip_ops)
        self.max_events = int(max_events)
        self.verbose = bool(verbose)
        self.log_path = None if log_path is None else os.fspath(log_path)
        self.events: deque[NaNEvent] = deque(maxlen=self.max_events)
        self.grad_events: deque[GradEvent] = deque(maxlen=self.max_events)
        self.batch_idx = -1  # the step of the latest model call
        self._first: NaNEvent | None = None
        self._skipped_op_keys = frozenset(_normalized_op(name) for name in self.skip_ops)

    def attach(self) -> NaNDetector:
        """Hook the model (a second call does nothing); returns the detector."""
        with self._lock:
            if self._handles:
                return self
            model = self.model
            handles = [
                model.register_forward_pre_hook(self._before_model),
                model.register_forward_hook(self._after_model, always_call=True),
            ]
            for path in self._paths_to_watch():
                hook = self._output_hook(path)
                handles.append(self._modules[path].register_forward_hook(hook))
            self._handles = handles
            add_birth_listener(self._on_birth)
            if self._recorder is not None:
                observers.add_observer(self._recorder)
                self._recorder_thread = threading.get_ident()
        return self

    def _paths_to_watch(self) -> list[str]:
        """The modules whose output gets one pass per step.

        A value turns non-finite without any op raising a floating-point flag only where
        parameters, buffers or user code put it: so modules owning parameters or buffers
        (MultiheadAttention too, though it has children) and user-defined leaves are watched.
        lucid's own parameter-free layers (ReLU, MaxPool2d, Dropout, Flatten, ...) make
        non-finite values only in ops the sentinel sees, and a plain container outputs what its
        children made. With the sentinel off, every leaf is watched.
        """
        sentinel_on = is_sentinel_enabled()
        watched = []
        for path, module in self._modules.items():
            if not path:
                continue  # the model's own output is checked by _after_model
            owns_state = (
                next(module.parameters(recurse=False), None) is not None
                or next(module.buffers(recurse=False), None) is not None
            )
            is_leaf = next(module.children(), None) is None
            is_lucid_layer = type(module).__module__.startswith("lucid.nn.")
            if owns_state or (is_leaf and not (is_lucid_layer and sentinel_on)):
                watched.append(path)
        return watched

    def detach(self) -> None:
        """Remove every hook (a second call does nothing).

        With `check_backward`, call it from the thread that attached: the op recorder is a
        per-thread observer.
        """
        with self._lock:
            for handle in self._handles:
                handle.remove()
            self._handles = []
            remove_birth_listener(self._on_birth)
            if self._recorder is not None and self._recorder_thread is not None:
                observers.remove_observer(self._recorder)
                self._recorder_thread = None
            self._local.depth = 0

    def __enter__(self) -> NaNDetector:
        return self.attach()

    def __exit__(self, *exc_info: object) -> None:
        self.detach()

    @property
    def is_attached(self) -> bool:
        """Whether the detector's hooks are on the model now."""
        return bool(self._handles)

    def set_batch(self, batch_idx: int) -> None:
        """Label every later model call with `batch_idx` (until the next `set_batch`)."""
        self._manual_batch = int(batch_idx)

    @property
    def triggered(self) -> bool:
        """Whether any NaN/Inf event was recorded."""
        return self._first is not None

    @property
    def event(self) -> NaNEvent | None:
        """The first event (kept even after `events` has dropped it)."""
        return self._first

    # ------------------------------------------------------------ model hooks
    def _before_model(self, module: Module, args: tuple) -> None:
        local = self._local
        local.depth += 1
        if local.depth > 1:
            return
        stack = local_state.module_path
        local.prefix = stack[-1] if stack else ""
        self._calls += 1
        if self._manual_batch is not None:
            self.batch_idx = self._manual_batch
        else:
            step = step_of(module)
            self.batch_idx = self._calls - 1 if step is None else step
        self._quiet = self._stopped
        self._recording = not self._stopped
        if self._stopped:
            return
        self._excused_kinds.clear()
        self._pending_input = None
        self._outside_birth = None
        self._node_paths.clear()
        self._batch_args = args
        self._model_location = _caller_location()
        # The generator's state as a dict: a tenth of get_rng_state()'s cost, which encodes it
        # as JSON bytes; the event encodes it the same way, only when there is an event.
        self._rng_state = lucid.default_generator._rng.bit_generator.state
        deferred = self._deferred_birth
        if deferred is not None:
            # Born outside the model on tensors that need no grad (preparing this batch):
            # an event of this step, and the cause of whatever the batch brings in.
            self._deferred_birth = None
            self._record(self._birth_event(*deferred, None, False, None))
            return
        if self.check_inputs:
            for value in args:
                for tensor in _tensors_in(value):
                    kind = self._array_kind(tensor._data, "", "input")
                    if kind == "inf" and _is_additive_mask(tensor._data):
                        continue  # a mask the user passed: -inf asked for, not an anomaly
                    if kind is not None and not is_nonfinite_allowed():
                        # Named where it is first received: the next watched module to see it.
                        self._pending_input = (kind, tensor._data, _caller_location())
                        return

    def _after_model(self, module: Module, args: tuple, output: Any) -> None:
        local = self._local
        # max: a detector attached inside a model call never saw that call begin.
        local.depth = max(local.depth - 1, 0)
        if local.depth or self._quiet or output is None:
            return
        if self._pending_input is not None:
            self._record(self._input_event("", module, output))
            return
        kind = self._output_kind(output, "")
        if kind is not None and not is_nonfinite_allowed():
            self._on_bad_output("", module, args, output, kind)

    def _output_hook(self, path: str) -> Callable:
        def check_output(module: Module, args: tuple, output: Any) -> None:
            if self._quiet:
                return
            kind = self._output_kind(output, path)
            if kind is not None and not is_nonfinite_allowed():
                self._on_bad_output(path, module, args, output, kind)

        return check_output

    def _output_kind(self, output: Any, path: str) -> str | None:
        if output.__class__ is Tensor:
            return self._array_kind(output._data, path, "activation", output)
        for tensor in _tensors_in(output):
            kind = self._array_kind(tensor._data, path, "activation", tensor)
            if kind is not None:
                return kind
        return None

    def _array_kind(self, array: np.ndarray, name: str, what: str,
                    tensor: Tensor | None = None) -> str | None:  # fmt: skip
        if not is_low_precision(array):
            return nonfinite_kind(array)
        # float16, or bfloat16 (under autocast, the activations of the lower-precision ops)
        grad_fn = None if tensor is None else tensor.grad_fn
        op = None if grad_fn is None else node_op_name(grad_fn)
        return self._headroom.half_kind(array, name, what, op)

    # ------------------------------------------------------------ slow paths
    def _on_bad_output(self, path: str, module: Module, args: tuple, output: Any,
                       kind: str) -> None:  # fmt: skip
        """A watched module's output holds `kind` and no event was made this step yet."""
        pending = self._pending_input
        if pending is not None:
            if holds_nonfinite(tuple(args), "nan") or holds_nonfinite(tuple(args), "inf"):
                self._record(self._input_event(path, module, output))
                return
        elif kind in self._excused_kinds or self._made_by_skipped_op(output):
            return
        elif kind == "inf" and is_sentinel_enabled() and not _parameter_holds(module, kind):
            # No op created it (the sentinel saw no flag): an inf written as a value the user
            # asked for (masked_fill, fill, full, where, a mask buffer or argument) or one
            # flowing on from such a value. Intentional infinities are not anomalies.
            return
        # A parameter that already held it is named where the batch entered the model.
        location = self._model_location if _parameter_holds(module, kind) else _caller_location()
        self._record(_event_from_output(path, module, args, output, kind, location,
                                        self._step_fields()))  # fmt: skip

    def _made_by_skipped_op(self, output: Any) -> bool:
        if not self._skipped_op_keys:
            return False
        for tensor in _tensors_in(output):
            grad_fn = tensor.grad_fn
            if grad_fn is not None and _normalized_op(grad_fn.name()) in self._skipped_op_keys:
                return True
        return False

    def _on_birth(self, birth: Any, node: Any, inputs: tuple, output: Tensor) -> None:
        """The sentinel confirmed an op that created a non-finite value (in the op's thread)."""
        if self._quiet:
            return
        local = self._local
        if birth.phase not in BACKWARD_PHASES:
            if not local.depth:
                self._on_birth_outside(birth, node, inputs, output)
                return
            if self._pending_input is not None:
                return  # a consequence of the bad batch, reported where the batch arrives
            path = self._relative(birth.module_path)
            if self._is_skipped(path) or _normalized_op(birth.op or "") in self._skipped_op_keys:
                if len(self._excused_kinds) < _EXCUSED_KEPT:
                    self._excused_kinds.add(birth.kind)
                return
            self._record(self._birth_event(birth, node, inputs, output, path, False, None))
            return
        if not self.check_backward or self._pending_input is not None:
            return
        if is_scaled_backward() and (
            birth.mechanism == "overflow" or holds_nonfinite(tuple(inputs), "inf")
        ):
            # A GradScaler's scaled gradients overflowing (and the NaNs of inf - inf that
            # follow): how the scale is calibrated. The scaler skips the step and says so.
            return
        if _normalized_op(birth.op or "") in self._skipped_op_keys:
            return
        path, location = self._backward_site(birth)
        if path is not None and self._is_skipped(path):
            return
        self._record(self._birth_event(birth, node, inputs, output, path, True, location))

    def _on_birth_outside(self, birth: Any, node: Any, inputs: tuple, output: Tensor) -> None:
        """A forward birth outside the model call: in the loss, the optimizer's update, or
        preparing a batch."""
        # Kept for train_with_nan_guard's report of a non-finite loss.
        self._outside_birth = (birth, node, inputs, output)
        if birth.phase in ("loss", "optimizer", "update", "eval") or (
            self._calls and any(getattr(value, "requires_grad", False) for value in inputs)
        ):
            # It computes on the model's output or parameters: part of the current step. An
            # optimizer's update is named by the module owning the parameter it updates.
            path = self._relative(birth.module_path) if birth.phase == "optimizer" else None
            self._record(self._birth_event(birth, node, inputs, output, path, False, None))
        else:
            # Plain tensors (data preparation, metrics): the step is the next model call.
            self._deferred_birth = (birth, node, inputs, output)

    def _backward_site(self, birth: Any) -> tuple[str | None, str | None]:
        """(module path, user line) of a backward birth: the module whose forward recorded
        the op (None outside the model) and the forward line of that op, as anomaly mode
        reports them, rather than the line that called backward().

        The sentinel's own event is preferred where it knows them; otherwise the detector's
        record of the node's forward (check_backward keeps one per node) answers.
        """
        owner = local_state.accumulating
        if owner is None:
            owner = local_state.backward_node
        variable = getattr(owner, "variable", None)
        if variable is not None:
            # The gradient sum of a parameter: named by the module that owns it.
            return self._param_paths.get(id(variable)), birth.location
        recorded = None if owner is None else self._node_paths.get(owner.sequence_nr)
        path = None
        if birth.module_path is not None:
            path = self._relative(birth.module_path)
        elif recorded is not None and recorded[0]:
            # Inside the model: its innermost module ("" for the model itself); else None.
            stack = recorded[1]
            path = self._relative(stack[-1] if stack else None)
        location = birth.location
        if recorded is not None and not _names_a_forward_line(birth, owner):
            filename, lineno = user_location(recorded[2])
            if filename is not None:
                location = f"{filename}:{lineno}"
        return path, location

    def _relative(self, module_path: str | None) -> str:
        """A module-path-stack entry as a path under the model ("" for the model itself)."""
        if module_path is None:
            return ""
        prefix = self._local.prefix
        if not prefix:
            return module_path
        if module_path == prefix:
            return ""
        if module_path.startswith(prefix + "."):
            return module_path[len(prefix) + 1 :]
        return module_path

    def _is_skipped(self, path: str) -> bool:
        return any(path == skipped or path.startswith(skipped + ".")
                   for skipped in self._skipped_paths)  # fmt: skip

    # ------------------------------------------------------------ events
    def _step_fields(self) -> dict[str, Any]:
        """The fields shared by every event of the current step: its index and what a
        reproducer needs (the batch, the RNG state at its start, the model)."""
        return {
            "batch_idx": self.batch_idx,
            "model_call": self._calls - 1 if self._calls else None,
            "batch": copy_arguments(self._batch_args),
            "rng_state": None if self._rng_state is None else _encoded_rng_state(self._rng_state),
            "model": weakref.ref(self.model),
        }

    def _module_type(self, path: str | None) -> str | None:
        if path is None:
            return None
        module = self._modules.get(path)
        return type(module).__name__ if module is not None else None

    def _birth_event(self, birth: Any, node: Any, inputs: tuple, output: Tensor,
                     path: str | None, is_backward: bool,
                     location: str | None) -> NaNEvent:  # fmt: skip
        module_type = self._module_type(path)
        return _event_from_birth(birth, node, inputs, output, path, module_type, is_backward,
                                 location, self._step_fields())  # fmt: skip

    def _input_event(self, path: str, module: Module, output: Any) -> NaNEvent:
        pending = self._pending_input
        self._pending_input = None
        return _event_from_input(path, module, output, pending, self._step_fields())

    def _record(self, event: NaNEvent) -> None:
        with self._lock:
            first = self._first is None
            if first:
                self._first = event
            self.events.append(event)
            self._quiet = True
            self._recording = False
            self._stopped = self.stop_on_first
        message = event if first and self.verbose else event.headline()
        self._log.report(message, event.to_dict(), self.verbose)

    def _loss_event(self, loss: Tensor) -> NaNEvent:
        """A non-finite loss that no event of the model explains (train_with_nan_guard)."""
        return _event_from_loss(loss, self._outside_birth, self._step_fields())

    # ------------------------------------------------------------ gradients
    def check_grad_norms(self) -> list[GradEvent]:
        """After `backward()`: flag non-finite gradients and norms above `grad_norm_warn`.

        Returns this call's new events (also appended to `grad_events`); after a NaN event
        with `stop_on_first`, it checks nothing and returns [].
        """
        if self._stopped:
            return []
        found = _check_parameter_grads(
            self._named_params,
            self._module_type,
            self.grad_norm_warn,
            self._headroom,
            self.batch_idx,
        )
        for event in found:
            self.grad_events.append(event)
            self._log.report(event, event.to_dict(), self.verbose)
        return found

    # ------------------------------------------------------------ reporting
    def summary(self) -> str:
        """A readable report: the first event in full, then every kept event in one line."""
        lines = [
            f"NaNDetector on {type(self.model).__name__}: {self._calls} model call(s), "
            f"{len(self.events)} event(s), {len(self.grad_events)} gradient event(s)"
        ]
        if self._first is None:
            lines.append("no NaN or Inf seen")
        else:
            lines.append("first event:")
            lines.extend("  " + line for line in str(self._first).splitlines())
        if len(self.events) > 1:
            lines.append("events:")
            lines.extend(f"  {event.headline()}" for event in self.events)
        if self.grad_events:
            lines.append("gradient events:")
            lines.extend(f"  {str(event).removeprefix('NaNDetector: ')}"
                         for event in self.grad_events)  # fmt: skip
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"NaNDetector({type(self.model).__name__}, attached={self.is_attached}, "
                f"batch_idx={self.batch_idx}, events={len(self.events)}, "
                f"grad_events={len(self.grad_events)})")  # fmt: skip


# ------------------------------------------------------------------ guard loop
def train_with_nan_guard(
    model: Module,
    loader: Iterable[Any],
    criterion: Callable[..., Tensor],
    optimizer: Any,
    max_batches: int | None = None,
    **detector_kwargs: Any,
) -> tuple[list[float], NaNEvent | None]:
    """Train under a NaNDetector and stop at the first non-finite value.

    Each batch from `loader` is `(inputs, targets)` (or `(*inputs, targets)`): the step is
    `optimizer.zero_grad()`, `loss = criterion(model(*inputs), targets)`, `loss.backward()`,
    `check_grad_norms()`, `optimizer.step()`. The loop stops, without calling
    `optimizer.step()` for that batch, at the first event, at a non-finite loss (an event
    naming the op that made it outside the model) or at a non-finite gradient.
    `detector_kwargs` go to NaNDetector. Returns the losses of the batches run (the last one
    non-finite when it stopped there) and the first event, or None.
    """
    losses: list[float] = []
    with NaNDetector(model, **detector_kwargs) as detector:
        for batch_idx, batch in enumerate(loader):
            if max_batches is not None and batch_idx >= max_batches:
                break
            *inputs, targets = batch
            detector.set_batch(batch_idx)
            optimizer.zero_grad()
            loss = criterion(model(*inputs), targets)
            value = float(loss.item())
            losses.append(value)
            if detector.triggered:
                break
            if not math.isfinite(value):
                detector._record(detector._loss_event(loss))
                break
            loss.backward()
            if detector.triggered:
                break
            if any(event.reason != "large" for event in detector.check_grad_norms()):
                break
            optimizer.step()
    return losses, detector.event
