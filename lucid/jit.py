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


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
