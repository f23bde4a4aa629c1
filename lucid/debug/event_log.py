"""Where NaNDetector's events go: the `lucid.debug` logger and, with a path, a JSON-lines file
(one event per line, at most `max_lines` lines of each kind)."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

logger = logging.getLogger("lucid.debug")


class _EventLog:
    """Logs events and appends them to `path` (None: no file), `max_lines` of each kind."""

    def __init__(self, path: str | None, max_lines: int) -> None:
        self.path = path
        self.max_lines = max_lines
        self._lines_written = {"nan": 0, "grad": 0}

    def report(self, message: object, record: dict[str, Any], verbose: bool) -> None:
        """Log `message` (formatted only if a handler wants it) at WARNING when `verbose`, else
        at DEBUG, with `record` (the event as JSON-safe values) as the log record's
        `lucid_event`; then append `record` to the file."""
        level = logging.WARNING if verbose else logging.DEBUG
        # stacklevel 2: the log record names the detector's line that reported the event.
        logger.log(level, "%s", message, extra={"lucid_event": record}, stacklevel=2)
        self.append(record)

    def append(self, record: dict[str, Any]) -> None:
        if self.path is None or self._lines_written[record["event"]] >= self.max_lines:
            return
        self._lines_written[record["event"]] += 1
        line = (json.dumps(record, allow_nan=False) + "\n").encode()
        # One write on an O_APPEND descriptor: a line is never interleaved with another
        # writer's or left half-written before the next one.
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
