"""`lucid.accelerator`, as PyTorch's CPU build answers: no accelerator."""

from __future__ import annotations

from typing import Any

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None: there is no accelerator (the CPU is not one)."""
    return None


def device_count() -> int:
    return 0


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
