"""The `profile` observer, which times every op, backward node and `record_function` region of
its thread, and `record_function`, which labels regions for it and for NVTX emitters."""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections.abc import Iterable
from typing import Any

from lucid._core import observers
from lucid._core.function import op_name
from lucid._core.grad_mode import _DecoratorContextManager
from lucid._core.graph import AccumulateGrad
from lucid._tensor import Tensor
from lucid.autograd.profiler.events import (
    _BACKWARD_SCOPE,
    _FORWARD_SCOPE,
    _USER_SCOPE,
    EventList,
    FunctionEvent,
    FunctionEventAvg,
)

_clock = time.perf_counter_ns

# What an open frame or a closed record describes.
_OP = 0
_NODE = 1
_REGION = 2
_EVALUATION = 3
# An evaluation of a node that does not run (only its gradient was wanted).
_PASSAGE = 4
# A closed record: kind, function (an op) or name, id, parent id, start, end, sequence number.
_RECORD_FIELDS = 7

# The engine's span around one node, as PyTorch names it; its node's event is inside it.
_EVALUATION_PREFIX = "autograd::engine::evaluate_function: "

# A stack kept per event with `with_stack=True`: the innermost frames outside lucid.
_STACK_DEPTH = 16
_LUCID_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


class _Recorders(threading.local):
    """The profiles and NVTX emitters active in this thread, which record_function tells."""

    active: tuple = ()


_recorders = _Recorders()


def _input_shapes(values: Iterable[Any]) -> list[list[int]]:
    # Non-tensor arguments appear as [], as in PyTorch's record_shapes.
    return [list(value._data.shape) if isinstance(value, Tensor) else [] for value in values]


def _user_stack() -> tuple:
    """(code, line) of the innermost frames outside lucid; formatted only when reported."""
    frame = sys._getframe(2)
    entries = []
    while frame is not None and len(entries) < _STACK_DEPTH:
        code = frame.f_code
        if not code.co_filename.startswith(_LUCID_ROOT):
            entries.append((code, frame.f_lineno))
        frame = frame.f_back
    return tuple(entries)


def _format_stack(entries: tuple) -> list[str]:
    return [f"{code.co_filename}({line}): {code.co_name}" for code, line in entries]


def _memory_owner(array: Any) -> Any:
    return array if array.base is None else array.base


class profile:
    """Record every op, backward node and `record_function` region run in this thread.

    Args:
        enabled: False makes the context manager a no-op (its results are empty).
        use_cuda: lucid runs on the CPU; True warns and records CPU time only.
        record_shapes: record the input shapes of every event (for
            `key_averages(group_by_input_shape=True)` and the trace).
        with_stack: record the innermost source lines outside lucid that led to each op; a
            backward event gets the stack of the forward op that created its node.
        profile_memory: record the bytes of the arrays each op allocates for its outputs.

    Example::

        with lucid.autograd.profiler.profile(record_shapes=True) as prof:
            loss = model(x).sum()
            loss.backward()
        print(prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total"))
        prof.export_chrome_trace("trace.json")
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        record_shapes: bool = False,
        with_stack: bool = False,
        profile_memory: bool = False,
    ) -> None:
        self.enabled = bool(enabled)
        self.use_cuda = False
        if self.enabled and use_cuda:
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
        self.record_shapes = bool(record_shapes)
        self.with_stack = bool(with_stack)
        self.profile_memory = bool(profile_memory)
        self._is_detailed = self.record_shapes or self.with_stack or self.profile_memory
        self.entered = False
        self._running = False
        self._thread = 0
        self._start_ns = 0
        self._next_id = 0
        # Open frames, innermost last: (id, parent id, owner, shapes, stack, arrays the
        # children returned (profile_memory), start). The owner (node or region) is held only
        # while open; closed events keep names and numbers, never nodes or tensors.
        self._frames: list[tuple] = []
        # Closed events, _RECORD_FIELDS values each, laid flat in one list: a tuple per event
        # would be one more object for the garbage collector to track, and its passes over
        # a growing profile cost more than the recording itself.
        self._records: list = []
        # By event id, when shapes, stacks or memory are recorded: (shapes, stack, bytes
        # allocated by the event itself).
        self._details: dict[int, tuple] = {}
        self._function_events: EventList | None = None

    # ----------------------------------------------------------------- lifetime
    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._running = True
        self._thread = threading.get_native_id()
        _recorders.active = _recorders.active + (self,)
        self._start_ns = _clock()
        observers.add_observer(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.enabled or not self._running:
            return
        observers.remove_observer(self)
        _recorders.active = tuple(
            recorder for recorder in _recorders.active if recorder is not self
        )
        # Events still open (the profile ended inside an op or region) have no end.
        self._frames.clear()
        self._running = False
        self._function_events = None

    # ------------------------------------------------------- observer methods
    # before_forward and after_forward run for every op: the plain case (no shapes, stacks
    # or memory) is written out in them, the rest goes through _open and _close.
    def before_forward(self, node: Any, inputs: tuple) -> None:
        if self._is_detailed:
            self._open(node, inputs)
            return
        frames = self._frames
        event_id = self._next_id
        self._next_id = event_id + 1
        parent_id = frames[-1][0] if frames else -1
        frames.append((event_id, parent_id, node, None, None, None, _clock()))

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        end = _clock()
        frames = self._frames
        if self._is_detailed or not frames or frames[-1][2] is not node:
            self._close(_OP, node, end, inputs, outputs)
            return
        frame = frames.pop()
        self._records += (_OP, node.function, frame[0], frame[1], frame[6], end, node.sequence_nr)

    def on_forward_error(self, node: Any, error: BaseException) -> None:
        self._close(_OP, node, _clock(), (), ())

    # before_evaluate and after_evaluate run for every backward node, and write the plain
    # case out as the forward methods do.
    def before_evaluate(self, node: Any, runs: bool) -> None:
        is_sink = runs and node.__class__ is AccumulateGrad
        if self._is_detailed:
            self._open(node, None)
            if is_sink:
                # A leaf's sink has no backward for before_backward to announce: its event is
                # the write of `.grad`, the whole of its evaluation.
                self._open(node, None)
            return
        frames = self._frames
        event_id = self._next_id
        parent_id = frames[-1][0] if frames else -1
        if is_sink:
            self._next_id = event_id + 2
            start = _clock()
            frames.append((event_id, parent_id, node, None, None, None, start))
            frames.append((event_id + 1, event_id, node, None, None, None, start))
        else:
            self._next_id = event_id + 1
            frames.append((event_id, parent_id, node, None, None, None, _clock()))

    def after_evaluate(self, node: Any, runs: bool) -> None:
        end = _clock()
        frames = self._frames
        if not runs:
            self._close(_PASSAGE, node, end, (), ())
            return
        is_sink = node.__class__ is AccumulateGrad
        if self._is_detailed or not frames or frames[-1][2] is not node:
            if is_sink:
                self._close(_NODE, node, end, (), ())
            self._close(_EVALUATION, node, end, (), ())
            return
        sequence_nr = node.sequence_nr
        if is_sink:
            frame = frames.pop()
            self._records += (_NODE, node.name(), frame[0], frame[1], frame[6], end, -1)
            if not frames or frames[-1][2] is not node:
                self._close(_EVALUATION, node, end, (), ())
                return
            sequence_nr = -1
        frame = frames.pop()
        self._records += (
            _EVALUATION, node.name(), frame[0], frame[1], frame[6], end, sequence_nr
        )  # fmt: skip

    def before_backward(self, node: Any, grad_outputs: tuple) -> None:
        self._open(node, grad_outputs)

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
        end = _clock()
        self._close(_NODE, node, end, grad_outputs, grad_inputs)

    def on_backward_error(self, node: Any, error: BaseException) -> None:
        self._close(_NODE, node, _clock(), (), ())

    def _open_region(self, region: Any, name: str) -> None:
        self._open(region, None)

    def _close_region(self, region: Any, name: str) -> None:
        self._close(_REGION, region, _clock(), (), ())

    def _open(self, owner: Any, inputs: Iterable[Any] | None) -> None:
        frames = self._frames
        event_id = self._next_id
        self._next_id = event_id + 1
        frames.append(
            (
                event_id,
                frames[-1][0] if frames else -1,
                owner,
                self._shapes_of(inputs),
                _user_stack() if self.with_stack else None,
                [] if self.profile_memory else None,
                _clock(),  # last, so the bookkeeping above is not timed as the event's
            )
        )

    def _shapes_of(self, inputs: Iterable[Any] | None) -> list | None:
        if not self.record_shapes:
            return None
        # A region has no inputs; PyTorch lists its shapes as [].
        return [] if inputs is None else _input_shapes(inputs)

    def _close(self, kind: int, owner: Any, end: int, inputs: tuple, outputs: tuple) -> None:
        frames = self._frames
        if frames and frames[-1][2] is owner:
            frame = frames.pop()
        else:
            # Only an event begun before this profile saw it ends unmatched: skip it.
            index = len(frames) - 1
            while index >= 0 and frames[index][2] is not owner:
                index -= 1
            if index < 0:
                return
            frame = frames[index]
            del frames[index:]
        if kind == _OP:
            what = owner.function
        elif kind == _REGION:
            what = owner.name
        else:
            what = owner.name()
        # A leaf's sink follows no forward op, and a node passed over is not its op's backward
        # (PyTorch numbers both -1 too).
        if kind == _REGION or kind == _PASSAGE or owner.__class__ is AccumulateGrad:
            sequence_nr = -1
        else:
            sequence_nr = owner.sequence_nr
        self._records += (kind, what, frame[0], frame[1], frame[6], end, sequence_nr)
        if self._is_detailed:
            allocated = 0
            if frame[5] is not None:
                allocated = self._allocated(kind, frame[5], inputs, outputs)
            self._details[frame[0]] = (frame[3], frame[4], allocated)

    def _allocated(self, kind: int, child_arrays: list, inputs: tuple, outputs: tuple) -> int:
        """Bytes of this event's outputs that it allocated itself, not an input's memory (a
        view, an in-place result) and not an array one of its children returned."""
        frames = self._frames
        handed_up = frames[-1][5] if frames else None
        if kind == _REGION or kind == _EVALUATION or kind == _PASSAGE:
            if handed_up is not None:
                handed_up.extend(child_arrays)
            return 0
        input_owners = [_memory_owner(value._data) for value in inputs if isinstance(value, Tensor)]
        allocated = 0
        for output in outputs:
            if not isinstance(output, Tensor):
                continue
            array = output._data
            owner = _memory_owner(array)
            if any(owner is input_owner for input_owner in input_owners):
                continue
            if handed_up is not None:
                handed_up.append(array)
            if any(array is child or owner is child for child in child_arrays):
                continue
            allocated += array.nbytes
        return allocated

    # ---------------------------------------------------------------- results
    def _check_finished(self) -> None:
        if self.enabled and (self._running or not self.entered):
            raise RuntimeError("Profiler didn't finish running")

    @property
    def function_events(self) -> EventList:
        self._check_finished()
        if self._function_events is None:
            self._function_events = self._build_events()
        return self._function_events

    def events(self) -> EventList:
        """Every recorded event, in the order they began."""
        return self.function_events

    def _build_events(self) -> EventList:
        start_ns = self._start_ns
        by_id: dict[int, FunctionEvent] = {}
        parents = []
        records = self._records
        columns = (records[field::_RECORD_FIELDS] for field in range(_RECORD_FIELDS))
        for kind, what, event_id, parent_id, start, end, seq in zip(*columns):
            shapes, stack, memory = self._details.get(event_id, (None, None, 0))
            if kind == _OP:
                name, scope = op_name(what), _FORWARD_SCOPE
            elif kind == _NODE:
                name, scope = what, _BACKWARD_SCOPE
            elif kind == _EVALUATION or kind == _PASSAGE:
                name, scope = _EVALUATION_PREFIX + what, _FORWARD_SCOPE
            else:
                name, scope = what, _USER_SCOPE
            by_id[event_id] = FunctionEvent(
                id=event_id,
                name=name,
                thread=self._thread,
                start_us=(start - start_ns) / 1000,
                end_us=(end - start_ns) / 1000,
                input_shapes=shapes,
                stack=_format_stack(stack) if stack is not None else None,
                scope=scope,
                cpu_memory_usage=memory,
                sequence_nr=seq,
                is_user_annotation=kind == _REGION,
            )
            parents.append((event_id, parent_id))
        # Records are in the order events ended, children before their parents, so each
        # child's memory total is complete before it is added to its parent's.
        for event_id, parent_id in parents:
            parent = by_id.get(parent_id)
            if parent is not None:
                child = by_id[event_id]
                child.cpu_parent = parent
                parent.cpu_children.append(child)
                parent.cpu_memory_usage += child.cpu_memory_usage
        events = sorted(by_id.values(), key=lambda event: event.id)
        for event in events:
            event.cpu_children.sort(key=lambda child: child.id)
        if self.with_stack:
            _stacks_from_forward(events)
        return EventList(events, profile_memory=self.profile_memory)

    # ----------------------------------------------------------------- reports
    def key_averages(
        self, group_by_input_shape: bool = False, group_by_stack_n: int = 0
    ) -> EventList:
        """Averages over events of one name (and one input shape, or one top of stack)."""
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self) -> FunctionEventAvg:
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self time, in microseconds."""
        return self.function_events.self_cpu_time_total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        return self.function_events.table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
        )

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        self.function_events.export_chrome_trace(path)

    export_chrome_trace.__doc__ = EventList.export_chrome_trace.__doc__

    def __str__(self) -> str:
        if self._running:
            return "<unfinished lucid.autograd.profile>"
        return str(self.function_events)

    def __repr__(self) -> str:
        if self._running:
            return "<unfinished lucid.autograd.profile>"
        return repr(self.function_events)


def _stacks_from_forward(events: list[FunctionEvent]) -> None:
    """Give a backward node's event, and the ops inside it, the stack of its forward op."""

    def backward_ancestor(event: FunctionEvent | None) -> FunctionEvent | None:
        while event is not None and event.scope != _BACKWARD_SCOPE:
            event = event.cpu_parent
        return event

    forward_stacks: dict[int, list[str]] = {}
    ancestors = [backward_ancestor(event) for event in events]
    for event, ancestor in zip(events, ancestors):
        if ancestor is None and event.sequence_nr >= 0 and event.stack:
            forward_stacks.setdefault(event.sequence_nr, event.stack)
    for event, ancestor in zip(events, ancestors):
        if ancestor is not None:
            event.stack = forward_stacks.get(ancestor.sequence_nr, [])


class record_function(_DecoratorContextManager):
    """Label a region so that it appears, with the ops inside it, in profiles and NVTX ranges.

    A context manager and a decorator; regions nest. Outside a profile it does nothing.

    Example::

        with lucid.autograd.profiler.profile() as prof:
            y = x**2
            with lucid.autograd.profiler.record_function("label-z"):
                z = y**3
            y.backward()
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function() expects a str name, got {type(name).__name__}")
        self.name = name
        # torch attaches this string to the region's event; lucid's events keep no such field
        self.args = args
        self._told: tuple = ()

    def __enter__(self) -> record_function:
        told = _recorders.active
        self._told = told
        for recorder in told:
            recorder._open_region(self, self.name)
        return self

    def __exit__(self, *exc_info: object) -> None:
        told = self._told
        self._told = ()
        for recorder in reversed(told):
            recorder._close_region(self, self.name)

    def clone(self) -> record_function:
        return record_function(self.name)
