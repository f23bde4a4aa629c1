"""Profiler events: FunctionEvent (one call), FunctionEventAvg (the sums over one key) and
EventList, with its averages, table and Chrome trace export."""

from __future__ import annotations

import json
import os
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from lucid._atomic import write_atomically
from lucid.autograd.profiler.table import _build_table, _format_time

# Event scopes, numbered as PyTorch's RecordScope numbers them.
_FORWARD_SCOPE = 0
_BACKWARD_SCOPE = 1
_USER_SCOPE = 7


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class Interval:
    """A start and an end in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


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
        self_device_time_total (or their `cuda_` spellings) and count, largest first; None
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
        text = self._chrome_trace_text()
        write_atomically(path, lambda stream: stream.write(text), binary=False)

    def _chrome_trace_text(self) -> str:
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
        return json.dumps({"traceEvents": trace_events, "displayTimeUnit": "ms"})
