"""`load_nvprof`: an nvprof trace's SQLite export read back as profiler events, with each
kernel's time given to the NVTX range that launched it."""

from __future__ import annotations

import json
import os
import re
from bisect import bisect_right

from lucid.autograd.profiler.events import (
    _BACKWARD_SCOPE,
    _FORWARD_SCOPE,
    EventList,
    FunctionEvent,
)

# A backward node's range is named after its grad_fn (`MulBackward0`).
_BACKWARD_NAME = re.compile(r"\w+Backward\d+")

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
    # Imported here: reading a trace is rare, and `import lucid` should not load sqlite3.
    import sqlite3

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
