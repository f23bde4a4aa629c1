"""Root-cause reports: the facts of an anomaly event, one per line (op, value, mechanism, line
with its source text, module, step, inputs), as the replay and `python -m lucid.debug` print
them."""

from __future__ import annotations

import linecache
import os
from typing import Any

from lucid._core.sentinel import caret_line, format_stats, step_text

_LUCID_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


_OUTSIDE = {
    "loss": "none: in the loss, outside the model",
    "update": "none: in the update between backward() and optimizer.step()",
    "optimizer": "none: inside optimizer.step()",
    "input": "none: the value arrived with the input batch",
}


def _module_label(path: str | None, model: Any, phase: str) -> str:
    if not path and phase in _OUTSIDE:
        return _OUTSIDE[phase]
    if model is None:
        return path if path else "the model itself, or no module (not known)"
    root = type(model).__name__
    if not path:
        return f"the model itself ({root}), outside its submodules"
    try:
        kind = type(model.get_submodule(path)).__name__
    except AttributeError:
        return f"{path} in {root}"
    return f"{path} ({kind}) in {root}"


def _root_cause_report(event: Any, model: Any = None, step_note: str = "") -> str:
    """The facts of an anomaly event, one per line: op, value, mechanism, line with its
    source text, module, step, inputs."""
    if event.op is None:
        op = "none: the value was already in a gradient when backward() finished"
    elif event.phase == "backward":
        op = f"{event.op} (backward, in {event.node_name})"
    else:
        op = f"{event.op} ({event.phase})"
    if event.phase in ("input", "parameter"):
        source = "the input batch" if event.phase == "input" else f"the parameter {event.op}"
        value = f"{event.kind}, received: it was already in {source}, no op created it"
    elif event.created:
        value = f"{event.kind}, created by this op (no input held {event.kind})"
    else:
        value = f"{event.kind}, propagated (an input already held {event.kind})"
    lines = [
        f"  op:        {op}",
        f"  value:     {value}",
        f"  mechanism: {event.mechanism or 'unknown (no floating-point flag was raised)'}",
    ]
    if event.filename is not None:
        lines.append(f"  line:      {event.filename}:{event.lineno}")
        source = linecache.getline(event.filename, event.lineno or 0).strip()
        if source:
            lines.append(f"             {source}")
            caret = caret_line(event.filename, event.lineno, event.columns,
                               event.inner_op or event.op)  # fmt: skip
            if caret is not None:
                lines.append(f"             {caret}")
    else:
        lines.append("  line:      unknown")
    if event.optimizer:
        lines.append(f"  optimizer: {event.optimizer_text()}")
    lines.append(f"  module:    {_module_label(event.module_path, model, event.phase)}")
    step = "unknown" if event.step is None else step_text(event.step, event.model_call)
    lines.append(f"  step:      {step}{step_note}")
    for index, stats in enumerate(event.inputs):
        lines.append(f"  input {index}:   {format_stats(stats)}")
    traceback = _user_frames(event.forward_traceback)
    if event.phase == "backward" and traceback:
        lines.append("  forward traceback of the op:")
        lines.extend("  " + line for line in traceback)
    return "\n".join(lines)


def _user_frames(traceback: list[str]) -> list[str]:
    """A formatted traceback without lucid's own frames (the replay's, the CLI's)."""
    kept: list[str] = []
    is_lucid_frame = False
    for line in traceback:
        if line.startswith("  File "):
            is_lucid_frame = line.startswith(f'  File "{_LUCID_DIRECTORY}')
        if not is_lucid_frame:
            kept.append(line)
    return kept
