"""Layouts and memory formats: the objects PyTorch scripts pass as `layout=` and
`memory_format=`. lucid's tensors are always strided; contiguous() honours channels_last."""

from __future__ import annotations

__all__ = [
    "layout", "strided", "memory_format", "contiguous_format", "preserve_format",
    "channels_last", "channels_last_3d",
]  # fmt: skip


class layout:  # noqa: N801  (PyTorch's class name)
    """A tensor's storage layout; lucid has one, `lucid.strided`."""

    __slots__ = ("_name",)

    def __new__(cls, *args: object, **kwargs: object) -> layout:
        raise TypeError("cannot create 'lucid.layout' instances")

    def __repr__(self) -> str:
        return f"lucid.{self._name}"

    def __reduce__(self) -> str:
        return self._name


class memory_format:  # noqa: N801  (PyTorch's class name)
    """The order of a tensor's dims in memory, as contiguous() and `*_like` factories take it."""

    __slots__ = ("_name",)

    def __new__(cls, *args: object, **kwargs: object) -> memory_format:
        raise TypeError("cannot create 'lucid.memory_format' instances")

    def __repr__(self) -> str:
        return f"lucid.{self._name}"

    def __reduce__(self) -> str:
        return self._name


def _named(cls: type, name: str) -> object:
    # The fixed set of instances, made past __new__ (which refuses, as PyTorch's does).
    instance = object.__new__(cls)
    instance._name = name
    return instance


strided = _named(layout, "strided")
contiguous_format = _named(memory_format, "contiguous_format")
preserve_format = _named(memory_format, "preserve_format")
channels_last = _named(memory_format, "channels_last")
channels_last_3d = _named(memory_format, "channels_last_3d")
