"""Atomic file replacement: write beside the target, flush to disk, then rename over it.

A crash at any point leaves either the old file or the complete new one, never a mix.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from typing import IO, Any

__all__ = ["write_atomically"]


def write_atomically(path: str | os.PathLike, write: Callable[[IO[Any]], None],
                     binary: bool = True) -> None:  # fmt: skip
    """Call `write(stream)` on a temporary file beside `path`, then move it over `path`."""
    folder, base = os.path.split(os.path.abspath(os.fspath(path)))
    temporary = os.path.join(folder, f".{base}.{secrets.token_hex(8)}.tmp")
    # 0o666 lets the umask pick the new file's permissions, as a plain open() would.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if binary:
            stream = os.fdopen(descriptor, "wb")
        else:
            stream = os.fdopen(descriptor, "w", encoding="utf-8")
        with stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    # Makes the rename itself durable; not every platform lets a folder be opened.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
