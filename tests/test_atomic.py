"""write_atomically: a save killed midway leaves a temporary that the next save removes, and
nothing but lucid's own stale temporaries of the same target is ever removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lucid
from lucid import _atomic
from lucid._atomic import write_atomically

ROOT = Path(__file__).resolve().parents[1]
HOUR_AGO = time.time() - 3600


def _age(path: Path, seconds_ago: float = 3600) -> None:
    then = time.time() - seconds_ago
    os.utime(path, (then, then))


def _kill_mid_save(path: Path) -> None:
    """Run a save that writes 1 MB and is SIGKILLed before it can rename (a crash, no cleanup)."""
    code = (
        "import os, signal, sys\n"
        "from lucid._atomic import write_atomically\n"
        "def write(stream):\n"
        "    stream.write(b'x' * 1_000_000)\n"
        "    stream.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "write_atomically(sys.argv[1], write)\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=ROOT, timeout=60, capture_output=True
    )
    assert process.returncode == -signal.SIGKILL, process.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_save_killed_midway_leaves_a_temporary_that_a_later_save_removes(tmp_path) -> None:
    path = tmp_path / "model.safetensors"
    lucid.save({"x": lucid.ones(3)}, path)
    _kill_mid_save(path)
    (leftover,) = [name for name in os.listdir(tmp_path) if name != "model.safetensors"]
    assert leftover.startswith(".model.safetensors.lucid-tmp-")
    assert (tmp_path / leftover).stat().st_size == 1_000_000
    assert lucid.load(path)["x"].tolist() == [1.0, 1.0, 1.0]  # the old file is intact
    _age(tmp_path / leftover)
    lucid.save({"x": lucid.zeros(2)}, path)
    assert os.listdir(tmp_path) == ["model.safetensors"]


def test_only_stale_lucid_temporaries_of_the_same_target_are_removed(tmp_path) -> None:
    target = tmp_path / "model.safetensors"
    stale = tmp_path / ".model.safetensors.lucid-tmp-0123456789abcdef"
    fresh = tmp_path / ".model.safetensors.lucid-tmp-fedcba9876543210"  # a live writer's
    kept = {
        fresh.name,
        ".other.safetensors.lucid-tmp-0123456789abcdef",  # another target's
        ".model.safetensors.lucid-tmp-notes",  # not lucid's pattern
        ".model.safetensors.lucid-tmp-0123456789abcdef0",
        ".model.safetensors.0123456789abcdef.tmp",
        "model.safetensors.lucid-tmp-0123456789abcdef",
        ".model.safetensors.lucid-tmp-00000000000000000.bak",
    }
    for name in kept - {fresh.name}:
        (tmp_path / name).write_bytes(b"data")
        _age(tmp_path / name)
    fresh.write_bytes(b"being written")
    _age(fresh, seconds_ago=60)
    stale.write_bytes(b"x" * 100)
    _age(stale)
    folder = tmp_path / ".model.safetensors.lucid-tmp-aaaaaaaaaaaaaaaa"
    folder.mkdir()
    os.utime(folder, (HOUR_AGO, HOUR_AGO))
    kept.add(folder.name)
    write_atomically(target, lambda stream: stream.write(b"new"))
    assert target.read_bytes() == b"new"
    assert set(os.listdir(tmp_path)) == kept | {target.name}


def test_a_failed_save_removes_nothing_but_its_own_temporary(tmp_path) -> None:
    target = tmp_path / "trace.json"
    stale = tmp_path / ".trace.json.lucid-tmp-0123456789abcdef"
    stale.write_bytes(b"old")
    _age(stale)

    def failing_write(stream) -> None:
        stream.write("partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, failing_write, binary=False)
    assert os.listdir(tmp_path) == [stale.name]


def test_cleanup_trouble_never_fails_a_save(tmp_path, monkeypatch) -> None:
    def refuse(folder):
        raise PermissionError("no listing")

    monkeypatch.setattr(_atomic.os, "scandir", refuse)
    write_atomically(tmp_path / "a.bin", lambda stream: stream.write(b"ok"))
    assert (tmp_path / "a.bin").read_bytes() == b"ok"
