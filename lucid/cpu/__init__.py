"""`lucid.cpu`, as `torch.cpu`: here only the deprecated `lucid.cpu.amp.GradScaler`."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # lucid.cpu.amp loads on first use, as lucid's subpackages do.
    if name == "amp":
        import importlib

        return importlib.import_module("lucid.cpu.amp")
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
