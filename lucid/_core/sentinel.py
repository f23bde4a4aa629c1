"""The sentinel: lucid's always-on NaN/Inf trap (docs/numerics.md), and the birth record that every
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
from lucid._core import tensor as _tensor_module
from lucid._core.dtypes import INEXACT_KINDS
from lucid._core.function import Function, op_name
from lucid._core.grad_mode import _DecoratorContextManager, local_state, set_thread_default
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
    "current_model_call",
    "BACKWARD_PHASES",
    "step_text",
    "step_of",
    "set_step",
    "register_optimizer",
    "begin_optimizer_step",
    "end_optimizer_step",
    "count_optimizer_step",
    "save_step_counts",
    "restore_step_counts",
    "forward_phase",
    "optimizer_site",
    "leave_model",
    "report_read",
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
    # "input", "parameter" (received, not born), "forward", "loss", "backward",
    # "accumulation", "update", "optimizer" or "eval" (docs/numerics.md "Decisions")
    phase: str
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
    # The model call count beside the step, where the two differ (a model called twice per
    # iteration); in the optimizer phase, the optimizer's class, the parameter it was updating
    # and the state that overflowed.
    model_call: int | None = None
    optimizer: str | None = None
    parameter: str | None = None
    state: str | None = None
    # The columns of the call on the reported line, to show which of two calls it was.
    columns: tuple[int, int] | None = None
    # For reproducers: the op's Function class and its inputs at the birth (tensors copied as
    # NumPy arrays, other arguments as given); filled where a reproducer may be wanted.
    op_function: Any = field(default=None, repr=False, compare=False)
    op_args: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> str | None:
        if self.filename is None:
            return None
        return f"{self.filename}:{self.lineno}"

    def optimizer_text(self) -> str:
        """`Adam.step(), updating 0.weight, state exp_avg_sq` (optimizer phase only)."""
        updating = f", updating {self.parameter}" if self.parameter else ""
        state = f", state {self.state}" if self.state else ""
        return f"{self.optimizer}.step(){updating}{state}"

    def born_text(self, kind: str) -> str:
        """How a report of a `kind` value names this birth: its own, or the earlier Inf whose
        consequence the NaN is (the first non-finite value wins)."""
        if self.kind == kind:
            return f"first born in {self.op}"
        return f"the consequence of the {self.kind} first born in {self.op}"

    def describe(self) -> str:
        """Every fact of the event, one per line, as the error and the warning print them."""
        origin = (
            f"created here: no input held {self.kind}"
            if self.created
            else f"propagated: an input already held {self.kind}"
        )
        if self.phase == "input":
            origin = "received: it arrived in the input batch, no op created it"
        elif self.phase == "parameter":
            origin = f"received: the parameter {self.op} already held it, no op created it"
        lines = [
            f"  phase: {self.phase}",
            f"  value: {self.kind} ({origin})",
            f"  mechanism: {self.mechanism or _NO_MECHANISM[self.phase in _RECEIVED]}",
        ]
        if self.inner_op:
            lines.append(f"  inner op: {self.inner_op}")
        if self.location:
            lines.append(f"  at: {self.location}")
            caret = caret_line(self.filename, self.lineno, self.columns, self.inner_op or self.op)
            if caret is not None:
                lines.append(f"      {_source_line(self.filename, self.lineno)}")
                lines.append(f"      {caret}")
        if self.forward_location:
            lines.append(f"  forward call: {self.forward_location}")
        if self.optimizer:
            lines.append(f"  optimizer: {self.optimizer_text()}")
        if self.module_path:
            lines.append(f"  module: {self.module_path}")
        if self.step is not None:
            lines.append(f"  step: {step_text(self.step, self.model_call)}")
        for index, stats in enumerate(self.inputs):
            lines.append(f"  input {index}: " + format_stats(stats))
        for parent in self.parents:
            lines.append(f"  created during the backward of: {parent}")
        if self.note:
            lines.append(f"  ({self.note})")
        if self.forward_traceback:
            lines.append("Traceback of forward call that caused the error:")
            lines.extend(self.forward_traceback)
        return "\n".join(lines)


_RECEIVED = ("input", "parameter")
# The phases of a birth while the engine runs backward; every other phase is outside it.
BACKWARD_PHASES = ("backward", "accumulation")
_NO_MECHANISM = ("unknown (no floating-point flag was raised)", "none: received, no op made it")


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


def step_text(step: int, model_call: int | None) -> str:
    """`4`, or `4 (model call 9)` where the model's call count differs from the step."""
    if model_call is None or model_call == step:
        return str(step)
    return f"{step} (model call {model_call})"


def format_stats(stats: dict[str, Any]) -> str:
    """One input of a report: a Python number as itself; a tensor's shape, dtype, min and max
    (of its finite values, said so when it holds NaN or Inf) and its NaN and Inf counts."""
    if "scalar" in stats:
        return f"scalar {stats['scalar']!r}"
    finite = "finite " if stats["nan_count"] or stats["inf_count"] else ""
    return (
        f"shape={list(stats['shape'])} dtype={stats['dtype']} {finite}min={stats['min']} "
        f"{finite}max={stats['max']} nan={stats['nan_count']} inf={stats['inf_count']}"
    )


def input_stats(values: tuple) -> list[dict[str, Any]]:
    """The inputs of an op as a report lists them: tensors and Python numbers (`x / 0.0`)."""
    stats = []
    for value in values:
        if isinstance(value, TensorBase):
            stats.append(tensor_stats(value))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            stats.append({"scalar": value})
    return stats


def tensor_stats(value: TensorBase) -> dict[str, Any]:
    array = value._data
    stats: dict[str, Any] = {"shape": tuple(array.shape), "dtype": str(value.dtype),
                             "min": None, "max": None, "nan_count": 0, "inf_count": 0}  # fmt: skip
    if array.dtype.kind in INEXACT_KINDS and array.size:
        # A complex value is non-finite when either part is; its range is of magnitudes.
        finite = np.isfinite(array)
        stats["nan_count"] = int(np.isnan(array).sum())
        stats["inf_count"] = int(np.isinf(array).sum())
        if finite.any():
            values = np.abs(array[finite]) if array.dtype.kind == "c" else array[finite]
            stats["min"] = float(values.min())
            stats["max"] = float(values.max())
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
    set_thread_default("numpy_extobj", _SENTINEL_NUMPY if enabled else observers.QUIET_NUMPY)
    set_thread_default("records_forward_sites", bool(enabled))


def is_sentinel_enabled() -> bool:
    """Whether the sentinel is on (it is unless set_sentinel(False) or LUCID_SENTINEL=0)."""
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
    while frame is not None and frame.f_code.co_filename.startswith(_FRAMEWORK_FILES):
        frame = frame.f_back
    flat: list[Any] = []
    while frame is not None and len(flat) < 2 * depth:
        flat.append(frame.f_code)
        flat.append(frame.f_lasti)
        frame = frame.f_back
    return tuple(flat)


# lucid's own files, and the interpreter's frozen modules (`<frozen runpy>` running
# `python -m`): never the user's line; frozen frames further out are left out when formatted.
_FRAMEWORK_FILES = (_LUCID_DIRECTORY, "<frozen ")


def call_columns(flat: tuple) -> tuple[int, int] | None:
    """The columns of the call on the user's line (Python 3.11 positions), or None."""
    if not flat:
        return None
    code, offset = flat[0], flat[1]
    positions = list(code.co_positions())
    index = offset // 2
    if index >= len(positions):
        return None
    _, _, start, end = positions[index]
    return None if start is None or end is None else (start, end)


def caret_line(filename: str | None, lineno: int | None, columns: tuple | None,
               op: str | None) -> str | None:  # fmt: skip
    """A caret under the reported call where its line holds two calls of that op."""
    if filename is None or columns is None or op is None:
        return None
    source = _source_line_raw(filename, lineno)
    name = op.rstrip("_") + "("
    if source.count(name) < 2:
        return None
    start, end = columns
    indent = len(source) - len(source.lstrip())
    return " " * (start - indent) + "^" * max(end - start, 1)


def _line_of(code: Any, offset: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return code.co_firstlineno


def warn_at_user_line(message: Any, category: type[Warning] | None = None) -> None:
    """Warn pointing at the user's line: the first caller frame outside lucid."""
    level = 2
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_FRAMEWORK_FILES):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def format_frames(flat: tuple) -> list[str]:
    """Innermost call last, like a Python traceback."""
    lines = []
    for index in range(len(flat) - 2, -1, -2):
        code = flat[index]
        if code.co_filename.startswith("<frozen "):
            continue
        lineno = _line_of(code, flat[index + 1])
        lines.append(f'  File "{code.co_filename}", line {lineno}, in {code.co_name}')
        source = _source_line(code.co_filename, lineno)
        if source:
            lines.append(f"    {source}")
    return lines


def _source_line(filename: str, lineno: int) -> str:
    return _source_line_raw(filename, lineno).strip()


def _source_line_raw(filename: str, lineno: int | None) -> str:
    import linecache

    return linecache.getline(filename, lineno or 0).rstrip("\n")


def user_location(flat: tuple) -> tuple[str | None, int | None]:
    if not flat:
        return None, None
    return flat[0].co_filename, _line_of(flat[0], flat[1])


# -------------------------------------------------------------- what is wrong
def nonfinite_kind(array: np.ndarray) -> str | None:
    """'nan' or 'inf' when the array holds one (NaN first), else None; cheap when finite."""
    if array.dtype.kind not in INEXACT_KINDS or array.size == 0:
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
        if array.dtype.kind not in INEXACT_KINDS:
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
    """Forget this thread's recorded births, where its training loop is (the latest model,
    the phase, set_step's step) and every site already warned about."""
    _births.events.clear()
    _births.backward_mark = _births.count
    state = local_state
    state.model = None
    state.model_step = -1
    state.model_grad = True
    state.backward_since_step = state.model_since_backward = state.eval_births = False
    _user_step.value = None
    with _warned_lock:
        _warned_sites.clear()


# ------------------------------------------------------------------ the step
# The step is the training iteration (docs/numerics.md "Decisions"): the number of steps the
# model's optimizer has taken, model calls only where no optimizer is in use, or what the
# user said with set_step. Process-wide, like the counts it is made of; weak, so that models
# and optimizers can still be freed.
_model_calls: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_optimizer_steps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The optimizer found for each model (a weak reference), until an optimizer is added.
_optimizer_of_model: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Outermost modules with parameters called so far, the latest last: where a parameter's name
# is looked up.
_MODELS_KEPT = 8
_models: deque = deque(maxlen=_MODELS_KEPT)


class _UserStep:
    value: int | None = None  # set_step's, for the whole process


_user_step = _UserStep()


def set_step(step: int | None) -> None:
    """Say which training step runs now: every later report names it, until the next call
    (None goes back to counting optimizer steps)."""
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise TypeError(f"set_step(): step must be an int or None, not {type(step).__name__}")
    _user_step.value = step


def register_optimizer(optimizer: Any) -> None:
    """An optimizer was made: from now on its steps are the step of its parameters' model."""
    _optimizer_steps.setdefault(optimizer, 0)
    _optimizer_of_model.clear()


def _optimizer_of(model: Any) -> Any:
    """The live optimizer that updates `model`'s first parameter, or None."""
    reference = _optimizer_of_model.get(model)
    if reference is not None:
        return reference()
    first = next(model.parameters(), None)
    found = None
    if first is not None:
        for optimizer in list(_optimizer_steps.keys()):
            if any(param is first for group in optimizer.param_groups for param in group["params"]):
                found = optimizer
                break
    _optimizer_of_model[model] = (lambda: None) if found is None else weakref.ref(found)
    return found


def _latest_model() -> Any:
    reference = local_state.model
    return None if reference is None else reference()


def step_of(model: Any) -> int | None:
    """The training step for a report about `model` (None: the latest model called)."""
    if _user_step.value is not None:
        return _user_step.value
    if model is None:
        model = _latest_model()
    if model is not None:
        optimizer = _optimizer_of(model)
        if optimizer is not None:
            return _optimizer_steps.get(optimizer, 0)
        calls = _model_calls.get(model)
        return calls if calls is not None and calls >= 0 else None
    # Before the first model call: the first step, whether optimizer steps or calls count.
    return 0


def current_step() -> int | None:
    """The training step now (docs/numerics.md): set_step's, else the optimizer steps the latest
    model's optimizer has taken, else that model's earlier calls (0 before any)."""
    return step_of(None)


def current_model_call() -> int | None:
    """How many times the latest model had been called before its latest call."""
    step = local_state.model_step
    return step if step >= 0 else None


def begin_optimizer_step(optimizer: Any) -> tuple:
    """`optimizer.step()` begins (Optimizer's wrapper): births until it ends are in the
    optimizer phase. A birth of the update between backward() and this step is reported now,
    before the parameters change. Returns the mark `end_optimizer_step` takes."""
    state = local_state
    if state.backward_since_step and _births.count > _births.backward_mark:
        _report_since(_births.backward_mark, ("update",),
                      "the update before optimizer.step() made {kind} values")  # fmt: skip
    previous = state.optimizer
    state.optimizer = optimizer
    return (previous, _births.count)


def end_optimizer_step(optimizer: Any, mark: tuple) -> None:
    """`optimizer.step()` ended: the step count grows, and a birth inside it is reported."""
    previous, count = mark
    state = local_state
    state.optimizer = previous
    if previous is optimizer:
        return  # a subclass's step() calling its parent's: one step
    count_optimizer_step(optimizer)
    if previous is None and _births.count > count:
        _report_since(count, ("optimizer",), "optimizer.step() made {kind} values")


def save_step_counts() -> tuple:
    """The optimizers' step counts and the models' call counts, for `restore_step_counts`:
    a replayed step must not count twice."""
    return (list(_optimizer_steps.items()), list(_model_calls.items()), local_state.model_step)


def restore_step_counts(saved: tuple) -> None:
    optimizers, models, model_step = saved
    _optimizer_steps.update(optimizers)
    _model_calls.update(models)
    local_state.model_step = model_step


def count_optimizer_step(optimizer: Any) -> None:
    """One more step of `optimizer` (also a step GradScaler skipped): the next iteration."""
    _optimizer_steps[optimizer] = _optimizer_steps.get(optimizer, 0) + 1
    local_state.backward_since_step = False


def _report_since(count: int, phases: tuple, headline: str) -> None:
    """Warn about the first birth in `phases` recorded after `count` (none in anomaly mode,
    which raised at the birth, or inside allow_nonfinite)."""
    if not is_sentinel_enabled() or local_state.anomaly_enabled or _allowance.depth:
        return
    for event in _events_since(count):
        if event.phase in phases:
            text = headline.format(kind=event.kind)
            _warn_once(event, f"{text}, first born in {event.op} at {event.location}.")
            return


def forward_phase(inputs: tuple) -> str:
    """The phase of an op outside backward (docs/numerics.md "Decisions"), from where it runs."""
    state = local_state
    if state.optimizer is not None:
        return "optimizer"
    if state.in_model:
        return "forward" if state.model_grad else "eval"
    if state.model_since_backward and any(
        isinstance(value, TensorBase) and value._requires_grad for value in inputs
    ):
        return "loss"
    if not state.enabled:
        if state.backward_since_step:
            return "update"
        if not state.model_grad:
            return "eval"
    return "forward"


def _parameter_name(tensor: Any) -> str | None:
    """The dotted name of a parameter of a model called so far, the latest model first."""
    for reference in reversed(_models):
        model = reference()
        if model is None:
            continue
        for name, parameter in model.named_parameters():
            if parameter is tensor:
                return name
    return None


def _owning_module(parameter_name: str | None) -> str | None:
    """The module path of a dotted parameter name (None for the model's own parameter)."""
    return None if parameter_name is None else parameter_name.rpartition(".")[0] or None


def optimizer_site(inputs: tuple, outputs: tuple) -> tuple[str, str | None, str | None, str | None]:
    """In the optimizer phase: (optimizer class, parameter name, state key, the module owning
    the parameter) of the parameter an op is updating, found by identity among the op's
    tensors: the parameter, its gradient or one of its state tensors (the state key names the
    one the op writes or reads)."""
    optimizer = local_state.optimizer
    tensors = [value for value in (*outputs, *inputs) if isinstance(value, TensorBase)]
    for group in optimizer.param_groups:
        names = group.get("param_names")
        for position, param in enumerate(group["params"]):
            state = optimizer.state.get(param, {})
            key = None
            for tensor in tensors:
                for name, value in state.items():
                    if value is tensor:
                        key = name
                        break
                if key is not None or tensor is param or tensor is param._grad:
                    break
            else:
                continue
            name = names[position] if names is not None else _parameter_name(param)
            return type(optimizer).__name__, name, key, _owning_module(name)
    return type(optimizer).__name__, None, None, None


def enter_model(model: Any, args: tuple, kwargs: dict, frames: tuple | None = None) -> None:
    """An outermost nn.Module call begins (called by Module.__call__). A module with
    parameters is the model: its call count grows, and its call is where the batch enters
    (the caller's user frames, or `frames` where a replay knows them). A non-finite value in
    the arguments is recorded as received (parameterless modules, a loss, are never the
    model, but what they are given is checked the same way)."""
    state = local_state
    if _has_parameters(model):
        calls = _model_calls.get(model, -1) + 1
        _model_calls[model] = calls
        state.model_step = calls
        if state.model is None or state.model() is not model:
            state.model = weakref.ref(model)
            if not any(reference() is model for reference in _models):
                _models.append(state.model)
        state.model_call_frames = capture_frames(2, 1) if frames is None else frames
        state.model_grad = state.enabled
        state.model_since_backward = state.enabled
        state.backward_since_step = False
        is_model = True
    else:
        is_model = False
    if state.numpy_extobj is not _SENTINEL_NUMPY or _allowance.depth:
        return
    for value in (*args, *kwargs.values()):
        if isinstance(value, TensorBase) and not value._requires_grad:
            kind = nonfinite_kind(value._data)
            if kind is not None:
                born = birth_of(value)
                if born is None:
                    event = input_event(kind, "input")
                    if not is_model:
                        # where a module without parameters (a loss) was given it
                        event.filename, event.lineno = user_location(capture_frames(2, 1))
                    _record(event, None, None)
                elif is_model:
                    # Made by ops on plain tensors before the model call (data preparation):
                    # a birth of the step that feeds it to the model.
                    born.step = step_of(model)
                return


def _has_parameters(module: Any) -> bool:
    """`next(module.parameters(), None) is not None`, without its generators (the check runs
    on every outermost module call)."""
    pending = [module]
    seen = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for parameter in current._parameters.values():
            if parameter is not None:
                return True
        pending.extend(child for child in current._modules.values() if child is not None)
    return False


def leave_model(output: Any) -> None:
    """An outermost module call returned: in an eval pass (no backward will report), a
    non-finite output names the birth of its first non-finite value."""
    state = local_state
    if state.eval_births and isinstance(output, TensorBase):
        report_read(output, "left the model")


def report_read(tensor: TensorBase, how: str) -> None:
    """A value of an eval pass is leaving lucid (`item`, `tolist`, `numpy`, the model's
    return): if it is non-finite, warn about the first birth of the pass."""
    state = local_state
    kind = nonfinite_kind(tensor._data)
    if kind is None:
        return
    state.eval_births = False
    if not is_sentinel_enabled() or state.anomaly_enabled or _allowance.depth:
        return
    event = _first_birth_since(_births.backward_mark, kind)
    if event is not None:
        _warn_once(event, f"a {kind} value {how}, {event.born_text(kind)} ({event.phase}) at "
                          f"{event.location}.")  # fmt: skip


def received_op(tensor: TensorBase | None) -> str:
    """How a report names a non-finite value no op created: `input` for data, the dotted
    name of the parameter that holds it (in the models called so far), else `parameter`."""
    if tensor is None or not tensor._requires_grad:
        return "input"
    name = _parameter_name(tensor)
    return "parameter" if name is None else name


def input_event(kind: str, op: str, module_path: str | None = None) -> AnomalyEvent:
    """A non-finite value received, not born: in the input batch (op `input`, phase input),
    or in a parameter (op its name, phase parameter, module its owner). Its line is where the
    batch entered the model (the latest model call, while that model lives), else the current
    user line."""
    state = local_state
    model = _latest_model()
    frames = state.model_call_frames if model is not None else capture_frames(3, 1)
    filename, lineno = user_location(frames)
    phase = "input" if op == "input" else "parameter"
    if phase == "parameter" and module_path is None and op != "parameter":
        module_path = _owning_module(op)
    return AnomalyEvent(op=op, node_name=None, phase=phase, kind=kind, mechanism=None,
                        created=False, filename=filename, lineno=lineno,
                        module_path=module_path, step=current_step(),
                        model_call=current_model_call())  # fmt: skip


def _record(event: AnomalyEvent, node: Any, owner: Any, output: Any = None) -> None:
    """Keep a birth: the event, the node of the op, the node whose backward or gradient sum
    was running (None in forward) and a weak reference to the non-finite output."""
    reference = None if output is None else weakref.ref(output)
    _births.events.append((event, node, owner, reference))
    _births.count += 1
    if event.phase == "eval":
        local_state.eval_births = True


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
        event = _birth_event(node, kind, flags, index, inputs, outputs)
        owner = node if event.phase not in BACKWARD_PHASES else _owner()
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


def _birth_event(node: Any, kind: str, flags: list[str], index: int, inputs: tuple,
                 outputs: tuple) -> AnomalyEvent:  # fmt: skip
    """What the sentinel knows of a birth, from the live stack and the node's forward site.

    Forward: the user's line and module on the stack now, and the op function the user
    called. Backward or a gradient sum: the forward line and module of the op whose backward
    it is (kept per node while the sentinel is on); inside a custom Function's backward, the
    line in that backward, with the forward call as context.
    """
    state = local_state
    frames = capture_frames(4)
    filename, lineno = user_location(frames)
    columns = call_columns(frames)
    module_path = current_module_path()
    op = node_op_name(node)
    inner_op = forward_location = note = optimizer = parameter = optimizer_state = None
    if state.accumulating is not None:
        owner, phase = state.accumulating, "accumulation"
    elif state.backward_node is not None:
        owner, phase = state.backward_node, "backward"
    else:
        owner, phase = node, forward_phase(inputs)
    if phase not in BACKWARD_PHASES and state.replay_site is not None:
        # a lucid.compile replay: the op's line and module as they were recorded
        filename, lineno, module_path = site_location(state.replay_site)
        columns = call_columns(state.replay_site[:2])
    if phase not in BACKWARD_PHASES:
        composite = composite_name(4)
        if composite is not None and composite != op:
            op, inner_op = composite, op
        if phase == "optimizer":
            optimizer, parameter, optimizer_state, owner_path = optimizer_site(inputs, outputs)
            module_path = module_path or owner_path
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
            site = getattr(owner, "forward_site", None)
            columns = None if site is None else call_columns(site[:2])
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
        model_call=current_model_call(),
        optimizer=optimizer,
        parameter=parameter,
        state=optimizer_state,
        columns=columns,
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
    """The earliest birth since the previous backward that can explain a root of `kind` and
    is no node of the graph: a value received in the input batch, or made by ops on tensors
    that need no grad (in the optimizer's or the user's update, preparing data)."""
    return _first_birth_since(_births.backward_mark, kind)


def _first_of(first: AnomalyEvent | None, second: AnomalyEvent | None) -> AnomalyEvent | None:
    """Whichever of two recorded births came first (the first non-finite value wins)."""
    if first is None:
        return second
    if second is None or first is second:
        return first
    for event, *_ in _births.events:
        if event is first or event is second:
            return event
    return first


def _events_since(count: int) -> Iterator[AnomalyEvent]:
    """The births recorded after the `count`-th, oldest first (as many as the ring kept)."""
    events = _births.events
    new = _births.count - count
    for position in range(max(len(events) - new, 0), len(events)):
        yield events[position][0]


def _first_birth_since(count: int, kind: str) -> AnomalyEvent | None:
    """The first birth outside backward recorded after `count` that can explain a value of
    `kind`: one of that kind, or an Inf where the value is NaN (0 * inf, inf - inf: the first
    non-finite value wins)."""
    for event in _events_since(count):
        if event.phase not in BACKWARD_PHASES and (event.kind == kind or event.kind == "inf"):
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
    """The first birth recorded while `node`'s backward ran (its line is in that backward):
    the first non-finite value wins over what later lines of the backward made of it."""
    for event, _, owner, _ in _births.events:
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
        event = _first_of(graph_birth, _birth_outside_graph(kind))
        if event is None:
            leaf = _nonfinite_leaf(nodes, kind)
            event = input_event(kind, received_op(leaf))
            source = ("it came from the input data" if leaf is None
                      else f"the parameter {event.op} already held it")  # fmt: skip
            headline = (
                f"backward() was called on a {kind} value that no lucid op created: {source}."
            )
        elif event.phase == "input":
            headline = (f"backward() was called on a {kind} value that arrived in the input "
                        f"batch, which entered the model at {event.location}.")  # fmt: skip
        else:
            outside = "" if event is graph_birth else ", on tensors that need no grad"
            headline = (f"backward() was called on a {kind} value {event.born_text(kind)} "
                        f"({event.phase}) at {event.location}{outside}.")  # fmt: skip
        _warn_once(event, headline)
        # One report per graph: the backward's own births are the same story.
        return None
    return mark


def sentinel_check_backward(mark: tuple | None, nodes: Any) -> None:
    """After a backward: gradients made non-finite during it name their birth, and so do
    leaf gradients made non-finite by a value born in forward that the loss did not show."""
    _births.backward_mark = _births.count
    state = local_state
    state.backward_since_step = True
    state.model_since_backward = False
    state.eval_births = False
    if mark is not None and len(mark) == 3:
        _end_scaled_backward(mark)
        return
    if mark is None or local_state.anomaly_enabled or not is_sentinel_enabled():
        return
    count, graph_birth = mark
    for event in _events_since(count):
        if event.phase in BACKWARD_PHASES:
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
            event = _first_of(graph_birth, _birth_outside_graph(kind))
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


def end_aborted_backward(mark: tuple | None) -> None:
    """A backward that raised: a scaled one's state ends (its births are not reported)."""
    if mark is not None and len(mark) == 3:
        _scaled.active = mark[2]


def _end_scaled_backward(mark: tuple) -> None:
    count, _, previous = mark
    _scaled.active = previous
    if _allowance.depth or local_state.anomaly_enabled or not is_sentinel_enabled():
        return
    for event in _events_since(count):
        if event.phase in BACKWARD_PHASES:
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
_tensor_module.read_handler = report_read
observers.backward_start_handler = sentinel_check_roots
observers.backward_end_handler = sentinel_check_backward
observers.backward_abort_handler = end_aborted_backward
