"""skip_init: build a module without caring for its initial parameter values."""

from __future__ import annotations

import inspect
from typing import Any

from lucid.nn.modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """`module_cls(*args, **kwargs)` whose parameter values are unspecified.

    lucid has no storage-free device to build on, so the module is built (and initialized)
    as usual; callers must overwrite the parameters, as with PyTorch's uninitialized memory.
    """
    # issubclass raises Python's TypeError for a non-class, as in PyTorch
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
