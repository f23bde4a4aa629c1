"""RemovableHandle: the handle every `register_*hook` returns."""

from __future__ import annotations

import itertools
from typing import Any

_next_id = itertools.count()


class RemovableHandle:
    """Removes a hook from the dict it was registered in; also a context manager."""

    __slots__ = ("hooks_dict_ref", "id")

    def __init__(self, hooks_dict: dict[int, Any]) -> None:
        self.hooks_dict_ref = hooks_dict
        self.id = next(_next_id)

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()
