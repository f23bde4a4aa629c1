"""lucid.random: the default generator's seed and state functions (the same objects as
lucid.manual_seed and the like, as in torch) and fork_rng, which restores the state on exit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from lucid._core.devices import check_device, device
from lucid._core.random import (
    Generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "set_rng_state",
    "get_rng_state",
    "manual_seed",
    "seed",
    "initial_seed",
    "fork_rng",
    "thread_safe_generator",
]

# The device types torch has a device module for; fork_rng refuses the others as torch does.
_DEVICE_MODULES = ("cpu", "cuda", "xpu", "mps", "mtia")


def _device_count(device_type: str) -> int:
    # the CPU is one device; lucid has no accelerator, so every other type has none
    return 1 if device_type == "cpu" else 0


def _check_device_state(device_type: str) -> None:
    """Raise torch's error for reading the RNG state of a device lucid does not have."""
    if device_type == "cpu":
        # torch.cpu has no per-device generator (the CPU state is forked anyway), so torch
        # raises this when asked for one
        raise AttributeError("module 'lucid.cpu' has no attribute 'get_rng_state'")
    check_device(device_type)


@contextlib.contextmanager
def fork_rng(
    devices: Iterable[int] | None = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Fork the RNG: on exit, after an exception too, the default generator's state is what
    it was on entry.

    lucid has no accelerator, so `device_type` names one with no devices (the default,
    ``None``, means CUDA as on torch's CPU build); naming device indices raises torch's
    CPU-build error. `_caller` and `_devices_kw` only word torch's warning about many
    devices, which lucid never has.

    Example::

        with lucid.random.fork_rng():
            noise = lucid.randn(3)  # the draws after the block are as if it never ran
    """
    if device_type == "meta":
        yield
        return
    device_type = device_type or "cuda"
    device(device_type)  # torch's RuntimeError for a string that is no device type
    if device_type not in _DEVICE_MODULES:
        raise RuntimeError(
            f"Device '{device_type}' does not have a corresponding module registered as "
            f"'lucid.{device_type}'."
        )
    if not enabled:
        yield
        return
    device_list = list(range(_device_count(device_type)) if devices is None else devices)
    if device_list:
        _check_device_state(device_type)
    cpu_rng_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)


def thread_safe_generator() -> Generator | None:
    """The generator of the current thread-based data-loader worker, else None (the default
    generator then applies).

    lucid's data-loader workers are processes, for which torch also returns None, so this
    always returns None.
    """
    return None
