"""`lucid.accelerator`, as PyTorch's CPU build answers: no accelerator."""

from __future__ import annotations

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None: there is no accelerator (the CPU is not one)."""
    return None


def device_count() -> int:
    return 0
