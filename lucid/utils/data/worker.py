"""Worker information for code running inside a data-loading worker."""

from __future__ import annotations

from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]


class WorkerInfo:
    """What a data-loading worker knows of itself: `id`, `num_workers`, `seed`, `dataset`
    (its own copy). Read-only once made."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    _initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)
        self._keys = tuple(kwargs)
        self._initialized = True

    def __setattr__(self, key: str, value: Any) -> None:
        if self._initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self) -> str:
        items = ", ".join(f"{key}={getattr(self, key)}" for key in self._keys)
        return f"{self.__class__.__name__}({items})"


# set in a worker process; lucid's DataLoader loads in the calling process, so it stays None
_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The WorkerInfo of the current data-loading worker, or None outside one.

    lucid's DataLoader loads every batch in the calling process (see DataLoader), so this is
    None there, as in PyTorch's main process; an IterableDataset can rely on that to yield
    the whole stream.
    """
    return _worker_info
