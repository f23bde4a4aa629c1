"""The profiler's text table, PyTorch's layout, and the time and memory formats it shares with
the events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


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


def _build_table(
    events: list[Any],
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
        events = sorted(events, key=lambda event: getattr(event, attribute), reverse=True)
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
