"""Autograd profiler: times every op and backward node, as torch.autograd.profiler does.

`profile` is an observer (observers.py): with none active, `Function.apply` and the engine pay
their one falsy check and nothing else. While one is active, each op's forward and each
backward node is an event with its wall-clock start and end; ops called inside another op
(a custom Function's forward, a backward written in lucid ops) and ops inside a
`record_function` region are its children, so self times exclude them and totals include them.

Example::

    x = lucid.randn(1, 1, requires_grad=True)
    with lucid.autograd.profiler.profile() as prof:
        for _ in range(100):
            y = x**2
            y.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

Like all of lucid's state, profiling is per thread: a profile records the thread that entered
it. Forward events are named after the op (`mul`, `log_softmax`; a custom Function by its class
name), backward events after the node (`MulBackward0`). An op that records a node carries the
node's sequence number, and so does the node's backward event: that is how a backward event is
matched to the forward op that created it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import threading
import time
import warnings
import weakref
from bisect import bisect_right
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from lucid._core import observers
from lucid._core.grad_mode import _DecoratorContextManager
from lucid._tensor import Tensor
from lucid.utils.atomic import write_atomically

__all__ = [
    "profile",
    "record_function",
    "emit_nvtx",
    "load_nvprof",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "Kernel",
]

_clock = time.perf_counter_ns

# Event scopes, numbered as PyTorch's RecordScope numbers them.
_FORWARD_SCOPE = 0
_BACKWARD_SCOPE = 1
_USER_SCOPE = 7

# What an open frame or a closed record describes.
_OP = 0
_NODE = 1
_REGION = 2
# A closed record: kind, function (an op) or name, id, parent id, start, end, sequence number.
_RECORD_FIELDS = 7

# A stack kept per event with `with_stack=True`: the innermost frames outside lucid.
_STACK_DEPTH = 16
_LUCID_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# ------------------------------------------------------------------------- op names
# Ops whose grad_fn is named after another aten op than the one they run.
_FORWARD_NAME_OVERRIDES = {
    "MatMul": "matmul",
    "VecMat": "matmul",
    "FoldedMatMul": "matmul",
    "CrossEntropy": "cross_entropy_loss",
    "SmoothL1Loss": "smooth_l1_loss",
    "NuclearNorm": "nuclear_norm",
    "RemainderScalarDividend": "remainder",
}
_BACKWARD_NAME = re.compile(r"(\w+?)Backward\d+")
# Weak, so that a custom Function class defined in a function can still be freed.
_forward_names: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def _forward_name(function: type) -> str:
    """The op name a Function's forward is reported under: PyTorch's aten name for lucid's
    ops (`mul`, `log_softmax`, `add_` for an in-place add), the class name for a custom one."""
    name = _forward_names.get(function)
    if name is None:
        name = _forward_names[function] = _derive_forward_name(function)
    return name


def _derive_forward_name(function: type) -> str:
    class_name = function.__name__
    if not function.__module__.startswith("lucid."):
        return class_name
    override = _FORWARD_NAME_OVERRIDES.get(class_name)
    if override is not None:
        return override
    # The grad_fn name carries PyTorch's op (DivScalar -> DivBackward0 -> div); lucid's own
    # nodes (lucid::autograd::...) and unnumbered names fall back to the class name.
    backward_name = function._backward_name or ""
    match = _BACKWARD_NAME.fullmatch(backward_name)
    is_inplace = class_name.endswith("Inplace")
    if match is not None:
        stem = match.group(1)
    else:
        stem = class_name[: -len("Inplace")] if is_inplace else class_name
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", stem)
    words = re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()
    return words + "_" if is_inplace else words


# --------------------------------------------------------------------------- events
Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class Interval:
    """A start and an end in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _FormattedTimes:
    """Averages and formatted times shared by FunctionEvent and FunctionEventAvg."""

    count: int
    cpu_time_total: float
    device_time_total: float
    self_cpu_time_total: float
    self_device_time_total: float

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call, in microseconds."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self) -> str:
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self) -> str:
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self) -> str:
        return _format_time(self.self_device_time_total)


class FunctionEvent(_FormattedTimes):
    """One profiled call: an op's forward, a backward node, or a `record_function` region.

    Times are in microseconds from the start of the profile. `cpu_children` are the events
    that ran inside this one; `sequence_nr` is the autograd node's number (-1 for none).
    """

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        input_shapes: list | None = None,
        stack: list[str] | None = None,
        scope: int = _FORWARD_SCOPE,
        cpu_memory_usage: int = 0,
        sequence_nr: int = -1,
        is_user_annotation: bool = False,
        use_device: str | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.stack = stack
        self.scope = scope
        self.cpu_memory_usage = cpu_memory_usage
        self.sequence_nr = sequence_nr
        self.is_user_annotation = is_user_annotation
        self.use_device = use_device
        self.kernels: list[Kernel] = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None

    @property
    def key(self) -> str:
        return self.name

    @property
    def trace_name(self) -> str:
        return self.name

    def append_kernel(self, name: str, device: int, duration: float) -> None:
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child: FunctionEvent) -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        self.cpu_parent = parent

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        """Kernel time of this event and of the events inside it (loaded nvprof traces)."""
        if not self.use_device:
            return 0
        own = sum(kernel.duration for kernel in self.kernels)
        return own + sum(child.device_time_total for child in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        if not self.use_device:
            return 0
        return sum(kernel.duration for kernel in self.kernels)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
            f"start_us={self.time_range.start} end_us={self.time_range.end} "
            f"cpu_children={[child.id for child in self.cpu_children]} thread={self.thread} "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
            f"seq_nr={self.sequence_nr}>"
        )


class FunctionEventAvg(_FormattedTimes):
    """The sums over several events with one key (see `EventList.key_averages`)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes: list | None = None
        self.stack: list[str] | None = None
        self.scope: int | None = None
        self.is_user_annotation = False
        self.use_device: str | None = None
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] | None = None

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.key is None:
            # The first event sets what all events of this key share.
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.is_user_annotation = other.is_user_annotation
            self.use_device = other.use_device
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
        elif other.key != self.key:
            raise ValueError(f"cannot add an event of key {other.key!r} to {self.key!r}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


# Keys `table(sort_by=...)` accepts; "cuda" names are PyTorch's older spelling of "device".
_SORT_KEYS = (
    "cpu_time",
    "cpu_time_total",
    "self_cpu_time_total",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "device_time",
    "device_time_total",
    "self_device_time_total",
    "cuda_time",
    "cuda_time_total",
    "self_cuda_time_total",
    "count",
)
_TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


class EventList(list):
    """A list of FunctionEvents (or their averages) with tables, averages and trace export."""

    def __init__(
        self,
        events: Iterable[Any] = (),
        use_device: str | None = None,
        profile_memory: bool = False,
    ) -> None:
        super().__init__(events)
        self._use_device = use_device
        self._profile_memory = profile_memory

    def __str__(self) -> str:
        return self.table()

    @property
    def self_cpu_time_total(self) -> float:
        return sum(event.self_cpu_time_total for event in self)

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The events as a text table, PyTorch's layout.

        `sort_by` is one of cpu_time, cpu_time_total, self_cpu_time_total,
        cpu_memory_usage, self_cpu_memory_usage, device_time, device_time_total,
        self_device_time_total (or their cuda_ spellings) and count, largest first; None
        keeps the list's order. `time_unit` fixes the unit of every time: "s", "ms" or "us".
        """
        return _build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            profile_memory=self._profile_memory,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def key_averages(
        self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0
    ) -> EventList:
        """One FunctionEventAvg per event name (and input shapes, or top stack frames)."""
        stats: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            key: tuple = (event.key, event.is_user_annotation)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple((event.stack or [])[:group_by_stack_n])
            average = stats.get(key)
            if average is None:
                average = stats[key] = FunctionEventAvg()
            average.add(event)
        for average in stats.values():
            average.stack = (average.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                average.input_shapes = None
        return EventList(
            stats.values(), use_device=self._use_device, profile_memory=self._profile_memory
        )

    def total_average(self) -> FunctionEventAvg:
        """The sum over all events, under the key "Total"."""
        total = FunctionEventAvg()
        for event in self:
            total.key = None
            total.add(event)
        total.key = "Total"
        return total

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the events as a Chrome trace (JSON) that chrome://tracing and Perfetto load.

        Each event is a complete event (`"ph": "X"`) with `ts` and `dur` in microseconds; its
        `args` hold the input shapes ("Input Dims"), the autograd sequence number ("Sequence
        number") and the call stack when they were recorded. The file is replaced atomically.
        """
        for event in self:
            if not isinstance(event, FunctionEvent):
                raise TypeError(
                    "export_chrome_trace needs the profiled events (prof.events()), not "
                    f"{type(event).__name__} averages"
                )
        process = os.getpid()
        trace_events: list[dict] = [
            {"name": "process_name", "ph": "M", "pid": process, "tid": 0,
             "args": {"name": "lucid"}},
        ]  # fmt: skip
        for thread in sorted({event.thread for event in self}):
            trace_events.append(
                {"name": "thread_name", "ph": "M", "pid": process, "tid": thread,
                 "args": {"name": f"thread {thread}"}}
            )  # fmt: skip
        for event in self:
            args: dict[str, Any] = {}
            if event.input_shapes is not None:
                args["Input Dims"] = event.input_shapes
            if event.sequence_nr >= 0:
                args["Sequence number"] = event.sequence_nr
            if event.stack:
                args["Call stack"] = ";".join(event.stack)
            if event.cpu_memory_usage:
                args["CPU Mem"] = event.cpu_memory_usage
            trace_events.append(
                {
                    "name": event.trace_name,
                    "cat": "user_annotation" if event.is_user_annotation else "cpu_op",
                    "ph": "X",
                    # Rounded to the nanosecond the clock measured.
                    "ts": round(event.time_range.start, 3),
                    "dur": round(event.time_range.elapsed_us(), 3),
                    "pid": process,
                    "tid": event.thread,
                    "args": args,
                }
            )
        text = json.dumps({"traceEvents": trace_events, "displayTimeUnit": "ms"})
        write_atomically(path, lambda stream: stream.write(text), binary=False)


# ---------------------------------------------------------------------------- table
def _build_table(
    events: EventList,
    sort_by: str | None,
    row_limit: int,
    max_src_column_width: int | None,
    max_name_column_width: int | None,
    max_shapes_column_width: int | None,
    header: str | None,
    profile_memory: bool,
    top_level_events_only: bool,
    time_unit: str | None,
) -> str:
    if sort_by is not None and sort_by not in _SORT_KEYS:
        raise ValueError(f"invalid sort_by {sort_by!r}; expected one of: {', '.join(_SORT_KEYS)}")
    if time_unit is not None and time_unit not in _TIME_UNITS:
        raise ValueError(f"invalid time_unit {time_unit!r}; expected one of: s, ms, us")
    if len(events) == 0:
        return ""

    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device")
        events = EventList(
            sorted(events, key=lambda event: getattr(event, attribute), reverse=True),
            use_device=events._use_device,
            profile_memory=profile_memory,
        )
    use_device = next((event.use_device for event in events if event.use_device), None)
    has_device_time = any(event.self_device_time_total > 0 for event in events)
    has_input_shapes = any(event.input_shapes for event in events)
    stacks = [event.stack for event in events if event.stack]

    def width_of(values: Iterable[int], limit: int | None) -> int:
        width = max(values) + 4
        return width if limit is None else min(width, limit)

    name_width = width_of((len(event.key) for event in events), max_name_column_width)
    number_width = 12
    spacing = 2

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    device = (use_device or "cuda").upper()
    if has_device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [number_width] * (len(headers) - 1)
    alignments = [">"] * len(headers)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(
            width_of((len(str(event.input_shapes)) for event in events), max_shapes_column_width)
        )
        alignments.append(">")
    if stacks:
        source_width = width_of(
            (len(entry) for stack in stacks for entry in stack), max_src_column_width
        )
        headers.append("Source Location")
        widths.append(source_width)
        alignments.append("<")

    row_format = "".join(
        "{:" + alignment + str(width) + "}" + " " * spacing
        for alignment, width in zip(alignments, widths)
    )
    separator = "".join("-" * width + " " * spacing for width in widths)
    line_length = sum(widths) + spacing * (len(widths) - 1)

    def formatted(time_us: float) -> str:
        if time_unit is None:
            return _format_time(time_us)
        return f"{time_us / _TIME_UNITS[time_unit]:.3f}{time_unit}"

    def trimmed(path: str) -> str:
        if len(path) > source_width:
            path = "..." + path[len(path) - source_width + 3 :]
        return path

    self_cpu_total = sum(event.self_cpu_time_total for event in events)
    self_device_total = sum(event.self_device_time_total for event in events)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        row = [
            name,
            _format_time_share(event.self_cpu_time_total, self_cpu_total),
            formatted(event.self_cpu_time_total),
            _format_time_share(event.cpu_time_total, self_cpu_total),
            formatted(event.cpu_time_total),
            formatted(event.cpu_time),
        ]
        if has_device_time:
            row += [
                formatted(event.self_device_time_total),
                _format_time_share(event.self_device_time_total, self_device_total),
                formatted(event.device_time_total),
                formatted(event.device_time),
            ]
        if profile_memory:
            row += [
                _format_memory(event.cpu_memory_usage),
                _format_memory(event.self_cpu_memory_usage),
            ]
        row.append(event.count)
        if has_input_shapes:
            row.append(str(event.input_shapes)[: widths[len(row)]])
        if stacks:
            stack = event.stack or []
            row.append(trimmed(stack[0]) if stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            blanks = [""] * (len(headers) - 1)
            for entry in (event.stack or [])[1:]:
                lines.append(row_format.format(*blanks, trimmed(entry)))
            lines.append(row_format.format(*blanks, ""))
    lines += [separator, f"Self CPU time total: {formatted(self_cpu_total)}"]
    if has_device_time:
        lines.append(f"Self {device} time total: {formatted(self_device_total)}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ recording
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
        elif kind == _NODE:
            what = owner.name()
        else:
            what = owner.name
        sequence_nr = owner.sequence_nr if kind != _REGION else -1
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
        if kind == _REGION:
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
                name, scope = _forward_name(what), _FORWARD_SCOPE
            elif kind == _NODE:
                name, scope = what, _BACKWARD_SCOPE
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

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function() expects a str name, got {type(name).__name__}")
        self.name = name
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


# --------------------------------------------------------------------------- NVTX
_nvtx_warned = False


def _import_nvtx() -> Any:
    """The `nvtx` package, or None (with one warning per process) when it is not installed."""
    global _nvtx_warned
    try:
        import nvtx
    except ImportError:
        if not _nvtx_warned:
            _nvtx_warned = True
            warnings.warn(
                "emit_nvtx: the nvtx package is not installed, so no NVTX ranges are emitted "
                "(pip install nvtx)",
                stacklevel=3,
            )
        return None
    return nvtx


def _nvtx_message(name: str, sequence_nr: int, shapes: list | None) -> str:
    # PyTorch's format: "mul, seq = 12, sizes = [[2, 3], []]".
    message = name if sequence_nr < 0 else f"{name}, seq = {sequence_nr}"
    if shapes is not None:
        message = f"{message}, sizes = {shapes}"
    return message


class emit_nvtx:
    """Make every op, backward node and `record_function` region an NVTX range.

    Ranges are named as profile events are, with the autograd sequence number: a forward op
    that creates a node emits `"mul, seq = 12"` and that node's backward
    `"MulBackward0, seq = 12"`, which is how the two are matched in Nsight or nvprof. With
    `record_shapes` the input shapes follow (`", sizes = [[2, 3], []]"`).

    The ranges go through the `nvtx` package (`pip install nvtx`). Without it, entering
    `emit_nvtx` warns once per process and records nothing.
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = bool(enabled)
        self.record_shapes = bool(record_shapes)
        self.entered = False
        self._nvtx: Any = None
        # Owners of the ranges this emitter pushed, innermost last.
        self._open_owners: list = []

    def __enter__(self) -> emit_nvtx:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        self._nvtx = _import_nvtx()
        if self._nvtx is not None:
            _recorders.active = _recorders.active + (self,)
            observers.add_observer(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._nvtx is None:
            return
        observers.remove_observer(self)
        _recorders.active = tuple(
            recorder for recorder in _recorders.active if recorder is not self
        )
        while self._open_owners:
            self._open_owners.pop()
            self._nvtx.pop_range()
        self._nvtx = None

    def _push(self, owner: Any, message: str) -> None:
        self._open_owners.append(owner)
        self._nvtx.push_range(message)

    def _pop(self, owner: Any) -> None:
        open_owners = self._open_owners
        if not any(open_owner is owner for open_owner in open_owners):
            return
        while open_owners:
            self._nvtx.pop_range()
            if open_owners.pop() is owner:
                return

    def _shapes(self, values: tuple) -> list | None:
        return _input_shapes(values) if self.record_shapes else None

    def before_forward(self, node: Any, inputs: tuple) -> None:
        name = _forward_name(node.function)
        self._push(node, _nvtx_message(name, node.sequence_nr, self._shapes(inputs)))

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        self._pop(node)

    def on_forward_error(self, node: Any, error: BaseException) -> None:
        self._pop(node)

    def before_backward(self, node: Any, grad_outputs: tuple) -> None:
        message = _nvtx_message(node.name(), node.sequence_nr, self._shapes(grad_outputs))
        self._push(node, message)

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
        self._pop(node)

    def on_backward_error(self, node: Any, error: BaseException) -> None:
        self._pop(node)

    def _open_region(self, region: Any, name: str) -> None:
        self._push(region, name)

    def _close_region(self, region: Any, name: str) -> None:
        self._pop(region)


# ------------------------------------------------------------------------ nvprof
_MARKER_QUERY = """
SELECT start.id AS marker_id, start.name AS name_id,
       start.timestamp AS start_time, finish.timestamp AS end_time
FROM CUPTI_ACTIVITY_KIND_MARKER AS start
     INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS finish ON start.id = finish.id
WHERE start.name != 0 AND finish.name = 0
"""
_KERNEL_QUERY = """
SELECT runtime.start AS launch_time, kernel.name AS name_id, kernel.deviceId AS device,
       kernel.start AS kernel_start, kernel.end AS kernel_end
FROM CUPTI_ACTIVITY_KIND_RUNTIME AS runtime
     INNER JOIN CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL AS kernel
     ON kernel.correlationId = runtime.correlationId
"""
_NVTX_NAME = re.compile(
    r"(?P<name>.*?)(?:, seq = (?P<seq>-?\d+))?(?:, op_id = \d+)?(?:, sizes = (?P<sizes>\[.*\]))?"
)


def load_nvprof(path: str | os.PathLike) -> EventList:
    """Read the ranges of an nvprof trace (its SQLite export) as an EventList.

    Each NVTX range (as `emit_nvtx` writes them) is an event; its name, sequence number and
    input shapes are read back from the range's message, ranges inside ranges become children,
    and every kernel is attributed, as device time, to the innermost range that launched it.
    nvprof's nanosecond timestamps become microseconds.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no nvprof trace at {path!r}")
    connection = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
    try:
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        missing = {"StringTable", "CUPTI_ACTIVITY_KIND_MARKER"} - tables
        if missing:
            raise ValueError(
                f"{path!r} is not an nvprof trace: it has no {', '.join(sorted(missing))} table"
            )
        strings = dict(connection.execute("SELECT _id_, value FROM StringTable"))
        events = []
        for marker_id, name_id, start, end in connection.execute(_MARKER_QUERY):
            events.append(_event_from_marker(marker_id, strings.get(name_id, ""), start, end))
        kernels: list = []
        if {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"} <= tables:
            kernels = list(connection.execute(_KERNEL_QUERY))
    finally:
        connection.close()
    events.sort(key=lambda event: (event.time_range.start, -event.time_range.end))
    roots = _nest_by_interval(events)
    for launch_time, name_id, device, kernel_start, kernel_end in kernels:
        owner = _innermost_containing(roots, launch_time / 1000)
        if owner is not None:
            owner.append_kernel(
                strings.get(name_id, str(name_id)), device, (kernel_end - kernel_start) / 1000
            )
    use_device = "cuda" if kernels else None
    for event in events:
        event.use_device = use_device
    return EventList(events, use_device=use_device)


def _event_from_marker(marker_id: int, message: str, start: int, end: int) -> FunctionEvent:
    name, sequence_nr, shapes = message, -1, None
    match = _NVTX_NAME.fullmatch(message)
    try:
        if match is not None and match.group("sizes") is not None:
            shapes = json.loads(match.group("sizes"))
    except json.JSONDecodeError:
        # Not a range emit_nvtx wrote: keep the message whole as the name.
        match = None
    if match is not None:
        name = match.group("name")
        if match.group("seq") is not None:
            sequence_nr = int(match.group("seq"))
    scope = _BACKWARD_SCOPE if _BACKWARD_NAME.fullmatch(name) else _FORWARD_SCOPE
    return FunctionEvent(
        id=marker_id,
        name=name,
        thread=0,
        start_us=start / 1000,
        end_us=end / 1000,
        input_shapes=shapes,
        scope=scope,
        sequence_nr=sequence_nr,
    )


def _nest_by_interval(events: list[FunctionEvent]) -> list[FunctionEvent]:
    """Make each event a child of the innermost earlier event whose interval holds it; ranges
    that overlap only partly stay unrelated. `events` is sorted by (start, -end). Returns the
    events that have no parent."""
    roots: list[FunctionEvent] = []
    open_events: list[FunctionEvent] = []
    for event in events:
        while open_events:
            parent = open_events[-1]
            if event.time_range.start < parent.time_range.end and (
                event.time_range.end <= parent.time_range.end
            ):
                parent.append_cpu_child(event)
                event.set_cpu_parent(parent)
                break
            open_events.pop()
        if event.cpu_parent is None:
            roots.append(event)
        open_events.append(event)
    return roots


def _innermost_containing(candidates: list[FunctionEvent], time_us: float) -> FunctionEvent | None:
    """The deepest event whose interval holds `time_us`; `candidates` are sorted siblings."""
    found = None
    while candidates:
        starts = [event.time_range.start for event in candidates]
        index = bisect_right(starts, time_us) - 1
        if index < 0 or candidates[index].time_range.end < time_us:
            break
        found = candidates[index]
        candidates = found.cpu_children
    return found
