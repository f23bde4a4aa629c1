"""The sentinel: lucid's always-on NaN/Inf trap (NUMERICS.md), and the birth record that every
tier reads.

NumPy's floating-point flags fire inside the op that creates a non-finite value and call
`_on_numpy_flag`; when the op finishes, `_on_op_flags` confirms the outputs with a cheap
finiteness check and records the birth in a small per-thread ring buffer. When `backward()`
meets a non-finite root, or a backward creates a non-finite gradient, one `NonFiniteWarning`
names the birth. The public functions below (frame capture, finiteness checks, event
formatting, birth listeners) are the interface anomaly mode and lucid.debug build on.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lucid._core import observers
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.function import Function, op_name
from lucid._core.grad_mode import _DecoratorContextManager, _LocalState, local_state
from lucid._core.tensor import TensorBase

__all__ = [
    "AnomalyEvent",
    "AnomalyError",
    "NonFiniteWarning",
    "set_sentinel",
    "is_sentinel_enabled",
    "reset_sentinel",
    "module_scope",
    "current_module_path",
    "allow_nonfinite",
    "is_nonfinite_allowed",
    "add_birth_listener",
    "remove_birth_listener",
    "capture_frames",
    "format_frames",
    "user_location",
    "warn_at_user_line",
    "nonfinite_kind",
    "holds_nonfinite",
    "is_view_of_any",
    "mechanism_of",
    "node_op_name",
    "composite_name",
    "site_location",
    "is_custom_function",
    "enter_model",
    "current_step",
    "birth_of",
    "birth_during_backward_of",
    "input_event",
    "received_op",
    "parent_chain",
    "tensor_stats",
    "mark_scaled",
    "is_scaled_backward",
    "scaled_births",
    "clear_scaled_births",
    "gradient_scale",
    "unscale_gradient",
]

# lucid's own files are skipped when looking for the user's line.
_LUCID_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Frames kept per node for the forward traceback: enough to reach the user's training step.
_TRACEBACK_DEPTH = 8
_BIRTHS_KEPT = 32

_set_numpy_state = observers.numpy_state.set
_reset_numpy_state = observers.numpy_state.reset
_QUIET_NUMPY = observers.QUIET_NUMPY

_MECHANISMS = {
    "invalid value": "invalid operation",
    "divide by zero": "division by zero",
    "overflow": "overflow",
}


# ------------------------------------------------------------------- events
@dataclass
class AnomalyEvent:
    """Where and how a non-finite value was born; carried by AnomalyError and NonFiniteWarning."""

    op: str | None
    node_name: str | None
    phase: str  # "forward", "backward", "accumulation" or "input"
    kind: str  # "nan" or "inf"
    mechanism: str | None  # "invalid operation", "division by zero", "overflow" or None
    created: bool
    filename: str | None = None
    lineno: int | None = None
    module_path: str | None = None
    inputs: list[dict[str, Any]] = field(default_factory=list)
    output_index: int = 0
    forward_traceback: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    step: int | None = None
    # The op inside the function the user called, when `op` names that function (nll_loss
    # computing a 0/0 in div); for a birth inside a custom Function's backward, the line of
    # its forward call (`filename`/`lineno` are then the line inside the backward).
    inner_op: str | None = None
    forward_location: str | None = None
    # What the report cannot know, said instead of guessed.
    note: str | None = None
    # For reproducers: the op's Function class and its inputs at the birth (tensors copied as
    # NumPy arrays, other arguments as given); filled where a reproducer may be wanted.
    op_function: Any = field(default=None, repr=False, compare=False)
    op_args: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> str | None:
        if self.filename is None:
            return None
        return f"{self.filename}:{self.lineno}"

    def describe(self) -> str:
        """Every fact of the event, one per line, as the error and the warning print them."""
        origin = (
            f"created here: no input held {self.kind}"
            if self.created
            else f"propagated: an input already held {self.kind}"
        )
        if self.op == "input":
            origin = "received: it arrived in the input batch, no op created it"
        elif not self.created and self.node_name is None and self.op is not None:
            origin = "received: it was already in this parameter, no op created it"
        lines = [
            f"  phase: {self.phase}",
            f"  value: {self.kind} ({origin})",
            f"  mechanism: {self.mechanism or 'unknown (no floating-point flag was raised)'}",
        ]
        if self.inner_op:
            lines.append(f"  inner op: {self.inner_op}")
        if self.location:
            lines.append(f"  at: {self.location}")
        if self.forward_location:
            lines.append(f"  forward call: {self.forward_location}")
        if self.module_path:
            lines.append(f"  module: {self.module_path}")
        if self.step is not None:
            lines.append(f"  step: {self.step}")
        for index, stats in enumerate(self.inputs):
            lines.append(f"  input {index}: " + _format_stats(stats))
        for parent in self.parents:
            lines.append(f"  created during the backward of: {parent}")
        if self.note:
            lines.append(f"  ({self.note})")
        if self.forward_traceback:
            lines.append("Traceback of forward call that caused the error:")
            lines.extend(self.forward_traceback)
        return "\n".join(lines)


class AnomalyError(RuntimeError):
    """Raised in anomaly mode at the birth of a NaN or Inf; `event` holds the facts."""

    def __init__(self, message: str, event: AnomalyEvent) -> None:
        super().__init__(message)
        self.event = event


class NonFiniteWarning(RuntimeWarning):
    """The sentinel's warning: a NaN or Inf reached a boundary; `event` says where it was born."""

    def __init__(self, message: str, event: AnomalyEvent | None = None) -> None:
        super().__init__(message)
        self.event = event


# Tracebacks and reprs name a class by its module: the one users import these from.
AnomalyEvent.__module__ = "lucid.autograd.anomaly_mode"
AnomalyError.__module__ = "lucid.autograd.anomaly_mode"
NonFiniteWarning.__module__ = "lucid.autograd.anomaly_mode"


def _format_stats(stats: dict[str, Any]) -> str:
    return (
        f"shape={list(stats['shape'])} dtype={stats['dtype']} min={stats['min']} "
        f"max={stats['max']} nan={stats['nan_count']} inf={stats['inf_count']}"
    )


def tensor_stats(value: TensorBase) -> dict[str, Any]:
    array = value._data
    stats: dict[str, Any] = {"shape": tuple(array.shape), "dtype": str(value.dtype),
                             "min": None, "max": None, "nan_count": 0, "inf_count": 0}  # fmt: skip
    if array.dtype.kind in FLOAT_KINDS and array.size:
        finite = np.isfinite(array)
        stats["nan_count"] = int(np.isnan(array).sum())
        stats["inf_count"] = int(np.isinf(array).sum())
        if finite.any():
            stats["min"] = float(array[finite].min())
            stats["max"] = float(array[finite].max())
    elif array.size:
        stats["min"] = array.min().item()
        stats["max"] = array.max().item()
    return stats


# --------------------------------------------------------- state and toggles
def _on_numpy_flag(kind: str, flag: int) -> None:
    """NumPy's error callback inside lucid ops: note the flag for the op that is running.

    It only records (the op checks its outputs when it finishes); it never raises.
    """
    state = local_state
    flags = state.pending_flags
    if flags is None:
        state.pending_flags = [kind]
    elif len(flags) < 8:
        flags.append(kind)


_SENTINEL_NUMPY = observers.make_numpy_state(call=_on_numpy_flag, all="call", under="ignore")


def set_sentinel(enabled: bool) -> None:
    """Turn the always-on sentinel on or off for every thread (LUCID_SENTINEL=0 at import: off)."""
    _LocalState.numpy_extobj = _SENTINEL_NUMPY if enabled else observers.QUIET_NUMPY
    _LocalState.records_forward_sites = bool(enabled)


def is_sentinel_enabled() -> bool:
    return local_state.numpy_extobj is _SENTINEL_NUMPY


set_sentinel(os.environ.get("LUCID_SENTINEL", "1") != "0")


@contextmanager
def module_scope(name: str) -> Iterator[None]:
    """Push `name` (a dotted module path) on this thread's module-path stack.

    Reports name the innermost module; `nn.Module.__call__` pushes its path here.
    """
    previous = local_state.module_path
    local_state.module_path = previous + (name,)
    try:
        yield
    finally:
        local_state.module_path = previous


class _Allowance(threading.local):
    depth = 0  # how many allow_nonfinite() regions this thread is inside


_allowance = _Allowance()


class allow_nonfinite(_DecoratorContextManager):
    """Mark intentional infinities (e.g. -inf attention masks): inside this context (or a
    decorated function) the sentinel records no births and warns about nothing, anomaly mode
    skips its forward checks and lucid.debug's detectors report nothing. It nests, is
    per-thread, and costs nothing where it is not used: the flag is read only once a
    non-finite value has been found.

    Example::

        with lucid.debug.allow_nonfinite():
            scores = scores.masked_fill(mask, float("-inf"))
    """

    def __enter__(self) -> None:
        _allowance.depth += 1

    def __exit__(self, *exc_info: object) -> None:
        _allowance.depth -= 1


def is_nonfinite_allowed() -> bool:
    """Whether this thread is inside `allow_nonfinite()`."""
    return _allowance.depth > 0


def current_module_path() -> str | None:
    path = local_state.module_path
    return path[-1] if path else None


# -------------------------------------------------------------- frame capture
def capture_frames(skip: int = 2, depth: int = _TRACEBACK_DEPTH) -> tuple:
    """The calling user frames as flat raw (code, instruction offset) pairs.

    `skip` frames are known to be lucid's; the rest of lucid's frames are skipped by file.
    Offsets are cheaper to read than line numbers; `_line_of` maps them on error only.
    """
    frame = sys._getframe(skip)
    while frame is not None and frame.f_code.co_filename.startswith(_LUCID_DIRECTORY):
        frame = frame.f_back
    flat: list[Any] = []
    while frame is not None and len(flat) < 2 * depth:
        flat.append(frame.f_code)
        flat.append(frame.f_lasti)
        frame = frame.f_back
    return tuple(flat)


def _line_of(code: Any, offset: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return code.co_firstlineno


def warn_at_user_line(message: Any, category: type[Warning] | None = None) -> None:
    """Warn pointing at the user's line: the first caller frame outside lucid."""
    level = 2
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LUCID_DIRECTORY):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def format_frames(flat: tuple) -> list[str]:
    """Innermost call last, like a Python traceback."""
    lines = []
    for index in range(len(flat) - 2, -1, -2):
        code = flat[index]
        lineno = _line_of(code, flat[index + 1])
        lines.append(f'  File "{code.co_filename}", line {lineno}, in {code.co_name}')
        source = _source_line(code.co_filename, lineno)
        if source:
            lines.append(f"    {source}")
    return lines


def _source_line(filename: str, lineno: int) -> str:
    import linecache

    return linecache.getline(filename, lineno).strip()


def user_location(flat: tuple) -> tuple[str | None, int | None]:
    if not flat:
        return None, None
    return flat[0].co_filename, _line_of(flat[0], flat[1])


# -------------------------------------------------------------- what is wrong
def nonfinite_kind(array: np.ndarray) -> str | None:
    """'nan' or 'inf' when the array holds one (NaN first), else None; cheap when finite."""
    if array.dtype.kind not in FLOAT_KINDS or array.size == 0:
        return None
    token = _set_numpy_state(_QUIET_NUMPY)
    try:
        # A finite sum of squares (one BLAS pass) or sum means every element is finite;
        # otherwise look closer, since finite values can also overflow the sum.
        flags = array.flags
        if array.dtype.itemsize >= 4 and (flags.c_contiguous or flags.f_contiguous):
            flat = array.ravel("K")  # a view in either memory order
            total = flat.dot(flat)
        else:
            total = np.add.reduce(array, axis=None)
        if total - total == 0:
            return None
        if np.isnan(array).any():
            return "nan"
        return "inf" if np.isinf(array).any() else None
    finally:
        _reset_numpy_state(token)


def holds_nonfinite(value: Any, kind: str) -> bool:
    """Whether an input (tensor or Python number) holds a value of `kind`."""
    if isinstance(value, TensorBase):
        array = value._data
        if array.dtype.kind not in FLOAT_KINDS:
            return False
        return bool(np.isnan(array).any() if kind == "nan" else np.isinf(array).any())
    if isinstance(value, float):
        return value != value if kind == "nan" else value in (float("inf"), float("-inf"))
    if isinstance(value, list | tuple):
        return any(holds_nonfinite(item, kind) for item in value)
    return False


def is_view_of_any(tensor: TensorBase, sources: tuple) -> bool:
    """Whether `tensor` is an incoming gradient itself or a view of one (already checked)."""
    base = tensor._base
    for source in sources:
        if source is tensor or (base is not None and (base is source or base is source._base)):
            return True
    return False


def mechanism_of(flags: list[str] | None, kind: str) -> str | None:
    if not flags:
        return None
    mechanisms = [_MECHANISMS.get(flag) for flag in flags]
    if kind == "nan" and "invalid operation" in mechanisms:
        return "invalid operation"
    for mechanism in mechanisms:
        if mechanism is not None:
            return mechanism
    return None


def node_op_name(node: Any) -> str:
    """The op a node records, as a user writes it (`pow`, not the class `PowTensor`)."""
    function = getattr(node, "function", None)
    return op_name(function) if function is not None else type(node).__name__


_OPS_DIRECTORY = os.path.join(_LUCID_DIRECTORY, "ops") + os.sep
_FUNCTIONAL_FILE = os.path.join(_LUCID_DIRECTORY, "nn", "functional.py")


def composite_name(skip: int = 2) -> str | None:
    """The op function the user called, when the op that is running sits inside it (nll_loss
    around a div): the outermost public function of lucid's op files on the live stack below
    the user's frame. Walks the stack, so it runs only when a report is made."""
    frame = sys._getframe(skip)
    name = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_LUCID_DIRECTORY):
            break
        code_name = frame.f_code.co_name
        if (
            (filename.startswith(_OPS_DIRECTORY) or filename == _FUNCTIONAL_FILE)
            and not code_name.startswith("_")
            and code_name not in ("forward", "backward", "apply")
        ):
            name = code_name
        frame = frame.f_back
    return name


def site_location(site: tuple | None) -> tuple[str | None, int | None, str | None]:
    """(file, line, module path) of a node's forward site (see Function.apply)."""
    if site is None:
        return None, None, None
    code, offset, module_path = site
    return code.co_filename, _line_of(code, offset), module_path[-1] if module_path else None


def is_custom_function(node: Any) -> bool:
    """Whether a node records a user's own autograd.Function (its backward is user code)."""
    function = getattr(node, "function", None)
    return function is not None and not function.__module__.startswith("lucid.")


def _node_label(node: Any) -> str:
    info = getattr(node, "anomaly_info", None)
    label = node.name()
    if info:
        filename, lineno = user_location(info[0])
        if filename:
            label += f" (forward at {filename}:{lineno})"
    return label


def parent_chain(node: Any) -> list[str]:
    chain = []
    info = getattr(node, "anomaly_info", None)
    parent = info[2] if info else None
    while parent is not None and len(chain) < 16:
        chain.append(_node_label(parent))
        info = getattr(parent, "anomaly_info", None)
        parent = info[2] if info else None
    return chain


# ------------------------------------------------------------------ sentinel
class _Births(threading.local):
    def __init__(self) -> None:
        self.events: deque = deque(maxlen=_BIRTHS_KEPT)
        # Births ever recorded: marks stay valid once the ring is full and drops the oldest.
        self.count = 0
        # The count when this thread's latest backward ended: births after it belong to the
        # step now running.
        self.backward_mark = 0


_births = _Births()
# Sites already reported, for the whole process: a site warns once, whichever thread hits it.
_warned_sites: set = set()
_warned_lock = threading.Lock()
# Called as listener(event, node, inputs, output) at each recorded birth, from the thread
# that ran the op (lucid.debug's NaNDetector); empty unless a listener is attached.
_birth_listeners: tuple = ()
_listeners_lock = threading.Lock()


def add_birth_listener(listener: Any) -> None:
    """Call `listener(event, node, inputs, output)` for every birth the sentinel records."""
    global _birth_listeners
    with _listeners_lock:
        if listener not in _birth_listeners:
            _birth_listeners = _birth_listeners + (listener,)


def remove_birth_listener(listener: Any) -> None:
    global _birth_listeners
    with _listeners_lock:
        _birth_listeners = tuple(known for known in _birth_listeners if known != listener)


def reset_sentinel() -> None:
    """Forget this thread's recorded births and every site already warned about."""
    _births.events.clear()
    _births.backward_mark = _births.count
    with _warned_lock:
        _warned_sites.clear()


def current_step() -> int | None:
    """The step: how many times the model called last on this thread (outermost) had been
    called before that call; None before any model call."""
    step = local_state.model_step
    return step if step >= 0 else None


# Calls of each outermost model so far: a model's step is its own count, as NaNDetector and
# `python -m lucid.debug` count them. Weak, so a model can still be freed.
_model_calls: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def enter_model(model: Any, args: tuple, kwargs: dict) -> None:
    """An outermost nn.Module call begins (called by Module.__call__): the model's next step.
    Notes where the batch enters the model, and records a non-finite input as received."""
    state = local_state
    step = _model_calls.get(model, -1) + 1
    _model_calls[model] = step
    state.model_step = step
    state.model = weakref.ref(model)
    state.model_call_frames = capture_frames(2, 1)
    if state.numpy_extobj is not _SENTINEL_NUMPY or _allowance.depth:
        return
    for value in (*args, *kwargs.values()):
        if isinstance(value, TensorBase) and not value._requires_grad:
            kind = nonfinite_kind(value._data)
            if kind is not None:
                born = birth_of(value)
                if born is None:
                    _record(input_event(kind, "input"), None, None)
                else:
                    # Made by ops on plain tensors before the model call (data preparation):
                    # a birth of the step that feeds it to the model.
                    born.step = step
                return


def received_op(tensor: TensorBase | None) -> str:
    """How a report names a non-finite value no op created: `input` for data, the dotted
    name of the parameter of the latest model call that holds it, else `parameter`."""
    if tensor is None or not tensor._requires_grad:
        return "input"
    reference = local_state.model
    model = None if reference is None else reference()
    if model is not None:
        for name, parameter in model.named_parameters():
            if parameter is tensor:
                return name
    return "parameter"


def input_event(kind: str, op: str, module_path: str | None = None) -> AnomalyEvent:
    """A non-finite value received, not born: in the input batch, or in a parameter. Its line
    is where the batch entered the model (the latest model call, while that model lives), else
    the current user line."""
    state = local_state
    model = state.model() if state.model is not None else None
    frames = state.model_call_frames if model is not None else capture_frames(3, 1)
    filename, lineno = user_location(frames)
    return AnomalyEvent(op=op, node_name=None, phase="forward", kind=kind, mechanism=None,
                        created=False, filename=filename, lineno=lineno,
                        module_path=module_path, step=current_step())  # fmt: skip


def _record(event: AnomalyEvent, node: Any, owner: Any, output: Any = None) -> None:
    """Keep a birth: the event, the node of the op, the node whose backward or gradient sum
    was running (None in forward) and a weak reference to the non-finite output."""
    reference = None if output is None else weakref.ref(output)
    _births.events.append((event, node, owner, reference))
    _births.count += 1


def _on_op_flags(node: Any, inputs: tuple, outputs: tuple, flags: list[str]) -> None:
    """An op raised floating-point flags: confirm non-finite outputs, record a birth."""
    if _allowance.depth:
        return
    # An in-place op's input now holds its result: only the other inputs can be sources.
    dirty = getattr(node, "dirty_tensors", ())
    sources = [value for value in inputs if not any(value is tensor for tensor in dirty)]
    for index, out in enumerate(outputs):
        if not isinstance(out, TensorBase):
            continue
        kind = nonfinite_kind(out._data)
        if kind is None or any(holds_nonfinite(value, kind) for value in sources):
            continue
        event = _birth_event(node, kind, flags, index)
        owner = node if event.phase == "forward" else _owner()
        _record(event, node, owner if owner is not node else None, out)
        for listener in _birth_listeners:
            listener(event, node, inputs, out)
        return
    if _inside_another_op():
        # An op called inside another op's forward (Addmm expanding its bias) took the flags
        # the enclosing op had raised: hand them back for that op to confirm when it ends.
        state = local_state
        pending = state.pending_flags
        state.pending_flags = flags if pending is None else pending + flags


def _owner() -> Any:
    """The node a birth during backward belongs to: the one whose gradients are being
    summed, else the one whose backward is running."""
    state = local_state
    return state.accumulating if state.accumulating is not None else state.backward_node


def _birth_event(node: Any, kind: str, flags: list[str], index: int) -> AnomalyEvent:
    """What the sentinel knows of a birth, from the live stack and the node's forward site.

    Forward: the user's line and module on the stack now, and the op function the user
    called. Backward or a gradient sum: the forward line and module of the op whose backward
    it is (kept per node while the sentinel is on); inside a custom Function's backward, the
    line in that backward, with the forward call as context.
    """
    state = local_state
    frames = capture_frames(4)
    filename, lineno = user_location(frames)
    module_path = current_module_path()
    op = node_op_name(node)
    inner_op = forward_location = note = None
    if state.accumulating is not None:
        owner, phase = state.accumulating, "accumulation"
    elif state.backward_node is not None:
        owner, phase = state.backward_node, "backward"
    else:
        owner, phase = node, "forward"
    if phase == "forward":
        composite = composite_name(4)
        if composite is not None and composite != op:
            op, inner_op = composite, op
    else:
        op = node_op_name(owner)
        forward_file, forward_line, forward_module = site_location(
            getattr(owner, "forward_site", None)
        )
        info = getattr(owner, "anomaly_info", None)
        if forward_file is None and info:
            forward_file, forward_line = user_location(info[0])
            forward_module = info[1]
        if phase == "backward" and is_custom_function(owner):
            # The flag fired in the user's own backward: its line is on the stack now.
            if forward_file is not None:
                forward_location = f"{forward_file}:{forward_line}"
            module_path = forward_module
        elif forward_file is not None:
            filename, lineno, module_path = forward_file, forward_line, forward_module
        else:
            module_path = None
            note = (
                "the line above is the backward() call: the graph was recorded while the "
                "sentinel was off, so the forward line of the op is not known"
            )
    return AnomalyEvent(
        op=op,
        node_name=owner.name(),
        phase=phase,
        kind=kind,
        mechanism=mechanism_of(flags, kind),
        created=True,
        filename=filename,
        lineno=lineno,
        module_path=module_path,
        output_index=index,
        step=current_step(),
        inner_op=inner_op,
        forward_location=forward_location,
        note=note,
    )


_APPLY_CODE = Function.apply.__func__.__code__


def _inside_another_op() -> bool:
    """Whether the op being finished runs inside another op's forward (two applies on the
    stack). Walks the stack, so it runs only once flags have fired."""
    frame = sys._getframe(2)
    applies = 0
    while frame is not None:
        if frame.f_code is _APPLY_CODE:
            applies += 1
            if applies == 2:
                return True
        frame = frame.f_back
    return False


def _birth_in_graph(nodes: Any) -> AnomalyEvent | None:
    """The earliest recorded birth whose node belongs to the graph being differentiated."""
    best = None
    for event, node, backward_node, _ in _births.events:
        owner = backward_node if backward_node is not None else node
        if owner is not None and owner in nodes and (best is None or owner.sequence_nr < best[1]):
            best = (event, owner.sequence_nr)
    return None if best is None else best[0]


def _birth_outside_graph(kind: str) -> AnomalyEvent | None:
    """The earliest birth of `kind` since the previous backward that is no node of the graph:
    a value received in the input batch, or made by ops on tensors that need no grad."""
    events = _births.events
    new = _births.count - _births.backward_mark
    for position in range(max(len(events) - new, 0), len(events)):
        event = events[position][0]
        if event.kind == kind and event.phase == "forward":
            return event
    return None


def birth_of(tensor: TensorBase) -> AnomalyEvent | None:
    """The recorded forward birth whose output `tensor` is (or is a view of): an op's on
    tensors that need no grad, which no graph links to the op that consumes it."""
    array = tensor._data
    for event, _, owner, reference in reversed(_births.events):
        output = None if reference is None else reference()
        if owner is None and output is not None:
            made = output._data
            if (
                array is made
                or array.base is made
                or (made.base is not None and array.base is made.base)
            ):
                return event
    return None


def birth_during_backward_of(node: Any) -> AnomalyEvent | None:
    """The latest birth recorded while `node`'s backward ran (its line is in that backward)."""
    for event, _, owner, _ in reversed(_births.events):
        if owner is node and event.phase == "backward":
            return event
    return None


def _nonfinite_leaf(nodes: Any, kind: str) -> Any:
    """A leaf of the graph (a parameter) that already holds `kind`; only looked for once a
    non-finite root has no birth to name."""
    for node in nodes:
        variable = getattr(node, "variable", None)
        if variable is not None and holds_nonfinite(variable, kind):
            return variable
    return None


def _warn_once(event: AnomalyEvent, headline: str) -> None:
    site = (event.op, event.filename, event.lineno, event.phase)
    with _warned_lock:
        if site in _warned_sites:
            return
        _warned_sites.add(site)
    warn_at_user_line(NonFiniteWarning(f"{headline}\n{event.describe()}", event))


def sentinel_check_roots(outputs: tuple, nodes: Any) -> tuple | None:
    """At backward(): a non-finite root names where its first non-finite value was born.

    Returns the mark `sentinel_check_backward` starts from (the count of recorded births and
    this graph's earliest forward birth), or None when it already warned for this graph.
    """
    if _scaled_roots and any(_is_scaled(output) for output in outputs):
        return _check_scaled_roots(outputs, nodes)
    graph_birth = _birth_in_graph(nodes) if _births.events else None
    mark = (_births.count, graph_birth)
    if not is_sentinel_enabled() or local_state.anomaly_enabled:
        return mark
    for output in outputs:
        kind = nonfinite_kind(output._data)
        if kind is None:
            continue
        if _allowance.depth:
            return None
        event = graph_birth if graph_birth is not None else _birth_outside_graph(kind)
        if event is None:
            leaf = _nonfinite_leaf(nodes, kind)
            event = input_event(kind, received_op(leaf))
            source = ("it came from the input data" if leaf is None
                      else f"the parameter {event.op} already held it")  # fmt: skip
            headline = (
                f"backward() was called on a {kind} value that no lucid op created: {source}."
            )
        elif event.op == "input":
            headline = (f"backward() was called on a {kind} value that arrived in the input "
                        f"batch, which entered the model at {event.location}.")  # fmt: skip
        else:
            outside = "" if event is graph_birth else ", on tensors that need no grad"
            headline = (f"backward() was called on a {kind} value first born in "
                        f"{event.op} ({event.phase}) at {event.location}{outside}.")  # fmt: skip
        _warn_once(event, headline)
        # One report per graph: the backward's own births are the same story.
        return None
    return mark


def sentinel_check_backward(mark: tuple | None, nodes: Any) -> None:
    """After a backward: gradients made non-finite during it name their birth, and so do
    leaf gradients made non-finite by a value born in forward that the loss did not show."""
    _births.backward_mark = _births.count
    if mark is not None and len(mark) == 3:
        _end_scaled_backward(mark)
        return
    if mark is None or local_state.anomaly_enabled or not is_sentinel_enabled():
        return
    count, graph_birth = mark
    events = _births.events
    new = _births.count - count
    for position in range(max(len(events) - new, 0), len(events)):
        event = events[position][0]
        if event.phase in ("backward", "accumulation"):
            if _allowance.depth:
                return
            where = "a gradient sum for" if event.phase == "accumulation" else "the backward of"
            headline = (
                f"backward produced {event.kind} gradients, first born in {where} "
                f"{event.op} (forward at {event.location})."
            )
            _warn_once(event, headline)
            return
    if graph_birth is None or _allowance.depth:
        return
    # A value born in forward that a mask (where, masked_fill) hid from the loss still
    # flows back through its op's backward: the leaves' gradients tell.
    for node in nodes:
        variable = getattr(node, "variable", None)
        grad = None if variable is None else variable._grad
        if grad is not None and nonfinite_kind(grad._data) is not None:
            kind = nonfinite_kind(grad._data)
            headline = (
                f"backward produced {kind} gradients (a leaf of shape {list(variable.shape)}): "
                f"the {graph_birth.kind} born in {graph_birth.op} ({graph_birth.phase}) at "
                f"{graph_birth.location} did not reach the loss, but reaches the gradients "
                "through the backward."
            )
            _warn_once(graph_birth, headline)
            return


# ------------------------------------------------------------ scaled backwards
# A GradScaler multiplies the loss by a large scale so that small float16 gradients survive,
# and lowers the scale when gradients overflow: in a backward from a scaled loss an overflow is
# how the scale is calibrated, not an anomaly. So the sentinel does not warn about such a
# backward; it keeps its births for the scaler, which skips the step and says why (and warns
# itself when the cause is no overflow). Nothing here runs unless a scaler marked a root.
# Keyed by id with weak references (a WeakSet would compare tensors with `==`, elementwise).
_scaled_roots: dict[int, weakref.ref] = {}
_root_scales: dict[int, float] = {}
# Enough to name the first birth and a few after it; a backward that overflows everywhere
# keeps only these.
_SCALED_BIRTHS_KEPT = 8


class _ScaledBackwards(threading.local):
    def __init__(self) -> None:
        self.births: list[AnomalyEvent] = []
        self.active = False  # a scaled backward is running on this thread


_scaled = _ScaledBackwards()


def mark_scaled(tensor: TensorBase, scale: float) -> None:
    """Mark `tensor` as a loss multiplied by the loss scale `scale` (GradScaler.scale): births
    in a backward from it are kept for the scaler (`scaled_births`) instead of warned about,
    and the gradients it writes are known to carry `scale` (`gradient_scale`)."""
    key = id(tensor)

    # Single dict operations, atomic under the GIL: no lock, which the collector could
    # otherwise re-enter by running this callback while it is held.
    def forget(_: Any) -> None:
        if _scaled_roots.get(key) is reference:
            _scaled_roots.pop(key, None)
            _root_scales.pop(key, None)

    reference = weakref.ref(tensor, forget)
    _scaled_roots[key] = reference
    _root_scales[key] = scale


def _is_scaled(tensor: TensorBase) -> bool:
    reference = _scaled_roots.get(id(tensor))
    return reference is not None and reference() is tensor


def is_scaled_backward() -> bool:
    """Whether this thread is running a backward from a scaled loss."""
    return _scaled.active


def scaled_births() -> tuple[AnomalyEvent, ...]:
    """This thread's births in backwards from scaled losses since `clear_scaled_births()`,
    in the order they happened: a forward birth the scaled loss carried comes first."""
    return tuple(_scaled.births)


def clear_scaled_births() -> None:
    _scaled.births = []
    _scaled.active = False


def _keep_scaled(event: AnomalyEvent) -> None:
    births = _scaled.births
    if len(births) < _SCALED_BIRTHS_KEPT and not any(event is known for known in births):
        births.append(event)


def _check_scaled_roots(outputs: tuple, nodes: Any) -> tuple:
    """sentinel_check_roots for a scaled loss: keep, do not warn. The mark's third item says
    the backward is scaled, and what `is_scaled_backward` said before it."""
    graph_birth = _birth_in_graph(nodes) if _births.events else None
    if is_sentinel_enabled() and not local_state.anomaly_enabled and not _allowance.depth:
        for output in outputs:
            kind = nonfinite_kind(output._data)
            if kind is None:
                continue
            event = graph_birth if graph_birth is not None else _birth_outside_graph(kind)
            if event is None:
                event = input_event(kind, received_op(_nonfinite_leaf(nodes, kind)))
            _keep_scaled(event)
            break
    for output in outputs:
        if _is_scaled(output):
            _note_scaled_leaves(nodes, _root_scales.get(id(output), 1.0))
            break
    previous = _scaled.active
    _scaled.active = True
    return (_births.count, graph_birth, previous)


def _end_scaled_backward(mark: tuple) -> None:
    count, _, previous = mark
    _scaled.active = previous
    if _allowance.depth or local_state.anomaly_enabled or not is_sentinel_enabled():
        return
    events = _births.events
    new = _births.count - count
    for position in range(max(len(events) - new, 0), len(events)):
        event = events[position][0]
        if event.phase in ("backward", "accumulation"):
            _keep_scaled(event)


# Leaves whose `.grad` a scaled backward wrote, by id: (weak reference, the scale). An entry
# lasts until the scaler unscales that gradient (`unscale_gradient`); ids are checked against
# the reference, so a reused id never inherits a scale.
_scaled_leaves: dict[int, tuple[weakref.ref, float]] = {}
# Past this many entries the dead ones are dropped (a run that keeps making new parameters).
_SCALED_LEAVES_PRUNED_AT = 1 << 12


def _note_scaled_leaves(nodes: Any, scale: float) -> None:
    leaves = _scaled_leaves
    if len(leaves) > _SCALED_LEAVES_PRUNED_AT:
        for key in [key for key, (reference, _) in leaves.items() if reference() is None]:
            leaves.pop(key, None)
    for node in nodes:
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves[id(variable)] = (weakref.ref(variable), scale)


def gradient_scale(tensor: TensorBase) -> float:
    """The loss scale `tensor.grad` carries now: that of a GradScaler whose scaled backward
    wrote it and which has not unscaled it yet, else 1.0. Divide a gradient norm by it to
    judge the unscaled norm (lucid.debug's gradient checks do)."""
    entry = _scaled_leaves.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return 1.0
    return entry[1]


def unscale_gradient(tensor: TensorBase) -> None:
    """The scaler divided `tensor.grad` by its scale: it carries none now."""
    _scaled_leaves.pop(id(tensor), None)


observers.flag_handler = _on_op_flags
observers.backward_start_handler = sentinel_check_roots
observers.backward_end_handler = sentinel_check_backward
