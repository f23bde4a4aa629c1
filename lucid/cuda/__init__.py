"""`lucid.cuda`, as a PyTorch build without CUDA answers: nothing is available.

Scripts that ask (`if lucid.cuda.is_available()`) run on the CPU; calls that need a GPU
raise PyTorch's error for such a build.
"""

from __future__ import annotations

from typing import Any

from lucid._core.devices import check_device

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "synchronize",
]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def current_device() -> int:
    check_device("cuda")
    return 0


def get_device_name(device: Any = None) -> str:
    check_device("cuda")
    return ""


def synchronize(device: Any = None) -> None:
    check_device("cuda")


def manual_seed(seed: int) -> None:
    """Seeding CUDA without CUDA does nothing, as in PyTorch (lucid.manual_seed seeds the CPU)."""


def manual_seed_all(seed: int) -> None:
    """Does nothing, as in PyTorch without CUDA."""


def empty_cache() -> None:
    """Does nothing: there is no CUDA cache."""


def memory_allocated(device: Any = None) -> int:
    return 0


def __getattr__(name: str) -> Any:
    # lucid.cuda.amp (its deprecated GradScaler) loads on first use, as lucid's subpackages do.
    if name == "amp":
        import importlib

        return importlib.import_module("lucid.cuda.amp")
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
