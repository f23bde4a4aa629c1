"""`lucid.jit`: TorchScript is out of scope for lucid; its entry points say so."""

from __future__ import annotations

from typing import Any

__all__ = ["script", "trace"]

_MESSAGE = (
    "lucid.jit.{} is not supported: lucid has no TorchScript. Run the model directly "
    "(it runs eagerly), and save its weights with lucid.save(model.state_dict(), path)"
)


def script(obj: Any, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_MESSAGE.format("script"))


def trace(func: Any, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(_MESSAGE.format("trace"))
