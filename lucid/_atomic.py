"""Atomic file replacement: write beside the target, flush to disk, then rename over it.

A crash at any point leaves either the old file or the complete new one, never a mix.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from typing import IO, Any

__all__ = ["write_atomically"]

# A temporary is `.<target name>.lucid-tmp-<16 hex digits>`: hidden, named after its target,
# and in a form no other tool writes, so the clean-up below touches only lucid's own files.
_TEMPORARY_MARK = ".lucid-tmp-"
_TOKEN_HEX_DIGITS = 16
# A temporary untouched this long belongs to a writer that died. Age is the test, not the
# writer's pid: pids are reused (a restarted container's trainer often has the same one) and
# mean nothing across hosts or pid namespaces sharing a folder. A live writer touches its file
# with every write; only an fsync of many GB on a slow network disk, or a stopped process,
# leaves it untouched for minutes.
_STALE_AFTER_SECONDS = 600.0


def _temporary_prefix(base: str) -> str:
    return f".{base}{_TEMPORARY_MARK}"


def write_atomically(path: str | os.PathLike, write: Callable[[IO[Any]], None],
                     binary: bool = True) -> None:  # fmt: skip
    """Call `write(stream)` on a temporary file beside `path`, then move it over `path`.

    The temporary is `.<name>.lucid-tmp-<random>` in `path`'s folder. A process killed while
    writing leaves it behind; each later successful write to the same `path` removes such
    leftovers once they are untouched for 10 minutes, so a writer that is still running is
    never disturbed. Nothing else in the folder is touched.
    """
    folder, base = os.path.split(os.path.abspath(os.fspath(path)))
    prefix = _temporary_prefix(base)
    temporary = os.path.join(folder, prefix + secrets.token_hex(_TOKEN_HEX_DIGITS // 2))
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
    _remove_stale_temporaries(folder, prefix)


def _remove_stale_temporaries(folder: str, prefix: str) -> None:
    # Best effort: the new file is already in place, so a failure here must not fail the save.
    pattern = re.compile(re.escape(prefix) + f"[0-9a-f]{{{_TOKEN_HEX_DIGITS}}}")
    cutoff = time.time() - _STALE_AFTER_SECONDS
    try:
        with os.scandir(folder) as scan:
            entries = [entry for entry in scan if pattern.fullmatch(entry.name)]
    except OSError:
        return
    for entry in entries:
        try:
            status = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(status.st_mode) and status.st_mtime < cutoff:
                os.remove(entry.path)
        except OSError:
            continue


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
