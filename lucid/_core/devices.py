"""Devices: `lucid.device`, and the one check every factory and cast makes of a device argument.

lucid computes on the CPU with NumPy. Other device types parse, as in PyTorch, but placing a
tensor on one raises the error a CPU-only PyTorch build raises.
"""

from __future__ import annotations

import builtins
import re
from typing import Any

__all__ = ["device"]

# PyTorch's device types, in the order its parser lists them.
_DEVICE_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
    "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)  # fmt: skip
_DEVICE_STRING = re.compile(r"([a-z]+)(?::(0|[1-9]\d*))?")
# The device types PyTorch reports as "not compiled" with an AssertionError.
_NOT_COMPILED = {"cuda": "CUDA", "xpu": "XPU"}


def _signature_error(argument: Any) -> TypeError:
    name = "Tensor" if hasattr(argument, "_data") else type(argument).__name__
    return TypeError(
        f"device() received an invalid combination of arguments - got ({name}), but expected "
        "one of:\n * (lucid.device device)\n      didn't match because some of the arguments "
        f"have invalid types: (!{name}!)\n * (str type, int index = -1)\n"
    )


class device:
    """Where a tensor lives: `lucid.device("cpu")`, `lucid.device("cpu", 0)`, `"cuda:1"`.

    Any PyTorch device type parses; only "cpu" can hold tensors.

    Example::

        lucid.zeros(3, device=lucid.device("cpu"))
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type: Any, index: Any = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise _signature_error(type)
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, builtins.int) and not isinstance(type, builtins.bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise _signature_error(type)
        if index is not None and (
            not isinstance(index, builtins.int) or isinstance(index, builtins.bool)
        ):
            raise TypeError(
                "device(): argument 'index' (position 2) must be int, not "
                f"{builtins.type(index).__name__}"
            )
        match = _DEVICE_STRING.fullmatch(type)
        if match is None and re.match(r"[a-z]+", type) is None:
            raise _unknown_type(type)
        if match is None:
            if type.split(":")[0] not in _DEVICE_TYPES:
                raise _unknown_type(type)
            raise RuntimeError(f"Invalid device string: '{type}'")
        kind, parsed_index = match.group(1), match.group(2)
        if kind not in _DEVICE_TYPES:
            raise _unknown_type(type)
        if parsed_index is not None:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed "
                    f"explicitly: {type}"
                )
            index = builtins.int(parsed_index)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self._type = kind
        self._index = index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self) -> builtins.int | None:
        return self._index

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __eq__(self, other: object) -> builtins.bool:
        # A string compares by its text too (PyTorch says False for device("cpu") == "cpu"):
        # lucid's Tensor.device was the string "cpu", and code comparing it keeps working.
        if isinstance(other, str):
            return str(self) == other
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self) -> builtins.int:
        return hash((self._type, self._index))

    def __reduce__(self) -> tuple:
        if self._index is None:
            return (device, (self._type,))
        return (device, (self._type, self._index))


def _unknown_type(text: str) -> RuntimeError:
    return RuntimeError(
        f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {text}"
    )


CPU = device("cpu")


def check_device(target: Any) -> None:
    """Raise PyTorch's CPU-build error unless `target` (None, a string, an int, a device) is
    the CPU."""
    if target is None:
        return
    if not isinstance(target, device):
        target = device(target)
    if target._type == "cpu":
        return
    backend = _NOT_COMPILED.get(target._type)
    if backend is not None:
        raise AssertionError(f"lucid not compiled with {backend} enabled (lucid runs on the CPU)")
    raise NotImplementedError(f"lucid has no '{target._type}' device: lucid runs on the CPU only")


def check_pin_memory(pin_memory: Any) -> None:
    """Pinned memory needs an accelerator, which lucid has not (PyTorch's CPU build raises)."""
    if pin_memory:
        raise RuntimeError(
            "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
            "allocator is available on this system."
        )
