"""Atomic file replacement: write beside the target, flush to disk, then rename over it.

A crash at any point leaves either the old file or the complete new one, never a mix.
"""

from __future__ import annotations

import errno
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
_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def _temporary_prefix(base: str) -> str:
    return f".{base}{_TEMPORARY_MARK}"


def _failure(error_number: int, name: str) -> OSError:
    # OSError picks the subclass (FileNotFoundError, PermissionError, ...) from the number.
    return OSError(error_number, os.strerror(error_number), name)


def _renamed(error: OSError, name: str) -> OSError:
    """`error` naming the user's `name` instead of the temporary."""
    if error.errno is None:
        return error  # made by hand, naming no file
    return OSError(error.errno, error.strerror, name)


def write_atomically(path: str | os.PathLike, write: Callable[[IO[Any]], None],
                     binary: bool = True) -> None:  # fmt: skip
    """Call `write(stream)` on a temporary file beside `path`, then move it over `path`.

    The temporary is `.<name>.lucid-tmp-<random>` in the folder of the file `path` names,
    after symlinks: a link stays and the file it points to is replaced. A replaced file keeps
    its permission bits. A `path` that is not a regular file (`/dev/null`, a FIFO) is written
    directly, as `open` would. Failing to open raises the `OSError` that `open(path, "wb")`
    would, naming `path`. A process killed while writing leaves the temporary behind; each
    later successful write to the same `path` removes such leftovers once they are untouched
    for 10 minutes, so a writer that is still running is never disturbed. Nothing else in the
    folder is touched.
    """
    name = os.fsdecode(os.fspath(path))
    mode = "wb" if binary else "w"
    encoding = None if binary else "utf-8"
    if not name:
        raise _failure(errno.ENOENT, name)
    if name.endswith((os.sep, os.altsep or os.sep)) or os.path.basename(name) in (".", ".."):
        raise _failure(errno.EISDIR, name)
    try:
        existing = os.stat(name)
    except OSError:
        existing = None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise _failure(errno.EISDIR, name)
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        # A device or a FIFO is a channel, not a file to replace: renaming over it would swap
        # the node itself, so it gets the bytes, as with a plain open().
        with open(name, mode, encoding=encoding) as stream:
            write(stream)
        return
    if existing is not None and not os.access(name, os.W_OK, effective_ids=_EFFECTIVE_IDS):
        # The rename would succeed where open() refuses; a read-only file stays read-only.
        raise _failure(errno.EACCES, name)
    real = os.path.realpath(name)
    folder, base = os.path.split(real)
    prefix = _temporary_prefix(base)
    temporary = os.path.join(folder, prefix + secrets.token_hex(_TOKEN_HEX_DIGITS // 2))
    open_error = None
    try:
        try:
            # 0o666 lets the umask pick a new file's permissions, as a plain open() would.
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as error:
            open_error = error
            raise _renamed(error, name) from None
        stream = os.fdopen(descriptor, mode, encoding=encoding)
        with stream:
            if existing is not None:
                _copy_permissions(stream.fileno(), existing)
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        try:
            os.replace(temporary, real)
        except OSError as error:
            raise _renamed(error, name) from None
    except BaseException:
        # KeyboardInterrupt included: an interrupted save leaves the old file and no temporary,
        # even when Ctrl-C lands as os.open returns, before the descriptor is kept. A file with
        # the temporary's name is this call's own unless os.open failed (O_EXCL).
        if open_error is None and os.path.exists(temporary):
            os.remove(temporary)
        raise
    _sync_folder(folder)
    _remove_stale_temporaries(folder, prefix)


def _copy_permissions(descriptor: int, existing: os.stat_result) -> None:
    # Ownership first (best effort: only root may give a file away), as chown clears the
    # set-user-id bit that the mode copy then restores. Windows has neither call.
    if not hasattr(os, "fchmod"):
        return
    status = os.fstat(descriptor)
    ownership = (existing.st_uid, existing.st_gid)
    if hasattr(os, "fchown") and (status.st_uid, status.st_gid) != ownership:
        try:
            os.fchown(descriptor, existing.st_uid, existing.st_gid)
        except OSError:
            pass
    os.fchmod(descriptor, stat.S_IMODE(existing.st_mode))


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
