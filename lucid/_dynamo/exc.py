"""`lucid._dynamo.exc`: the exceptions of torch._dynamo that a program catches around a compile.

An unknown backend name, and what `lucid.compile(fullgraph=True)` cannot record.
"""

from __future__ import annotations

__all__ = ["InvalidBackend", "TorchDynamoException", "Unsupported"]


class TorchDynamoException(RuntimeError):
    """The base of torch._dynamo's errors (a RuntimeError, as torch's)."""


class InvalidBackend(TorchDynamoException):
    """`compile(backend=name)` with a name that is no registered backend."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `lucid._dynamo.list_backends()` for available "
            "backends."
        )


class Unsupported(TorchDynamoException):
    """A call `lucid.compile(fullgraph=True)` cannot record (a graph break)."""
