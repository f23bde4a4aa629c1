"""write_atomically: a save killed at any point leaves the old file or the complete new one, a
temporary that a later save removes once stale, and nothing but lucid's own stale temporaries of
the same target is ever removed; a save that cannot open its path fails as torch.save does."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lucid
from lucid import _atomic
from lucid._atomic import write_atomically
from tests.torch_oracle import requires_torch, torch

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


def _is_temporary(name: str) -> bool:
    return _atomic._TEMPORARY_MARK in name


# A target lucid.save cannot open, made in the test's folder, and torch.save's message for it.
UNOPENABLE = [
    ("missing/model.pt", "Parent directory missing does not exist."),
    ("afile/model.pt", "Parent directory afile does not exist."),
    ("afile/deeper/model.pt", "Parent directory afile/deeper does not exist."),
    ("adir", "open file failed with strerror: Is a directory"),
    ("adir/", "invalid file name: adir/"),
    ("missing/", "invalid file name: missing/"),
    (".", "invalid file name: ."),
    ("..", "open file failed with strerror: Is a directory"),
    ("", "invalid file name: "),
]
UNOPENABLE_IDS = [name or "empty" for name, _ in UNOPENABLE]


def _unopenable_folder(tmp_path: Path, monkeypatch) -> Path:
    # "" and ".." reach the folder above the working one: it must stay empty of temporaries too.
    work = tmp_path / "work"
    work.mkdir()
    (work / "afile").write_bytes(b"a file")
    (work / "adir").mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("name, message", UNOPENABLE, ids=UNOPENABLE_IDS)
def test_a_save_that_cannot_open_raises_torchs_error_and_leaves_no_temporary(
    tmp_path, monkeypatch, name, message
) -> None:
    work = _unopenable_folder(tmp_path, monkeypatch)
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$") as caught:
        lucid.save({"x": lucid.ones(2)}, name)
    assert isinstance(caught.value.__cause__, OSError)
    assert caught.value.__cause__.filename == name  # the user's path, never the temporary
    assert sorted(os.listdir(work)) == ["adir", "afile"]
    assert os.listdir(work / "adir") == []
    assert os.listdir(tmp_path) == ["work"]


@requires_torch
@pytest.mark.parametrize("name, message", UNOPENABLE, ids=UNOPENABLE_IDS)
def test_unopenable_paths_match_torch_save(tmp_path, monkeypatch, name, message) -> None:
    _unopenable_folder(tmp_path, monkeypatch)
    with pytest.raises(RuntimeError) as caught:
        torch.save(torch.ones(2), name)
    # less the location of torch's C++ check: "[enforce fail at inline_container.cc:747] . "
    assert re.sub(r"^\[enforce fail at [^\]]*\] \. ", "", str(caught.value)) == message


@pytest.mark.parametrize("name", ["missing/a.json", "afile/a.json", "adir", "adir/", "", "."])
def test_write_atomically_raises_what_open_would_naming_the_path(
    tmp_path, monkeypatch, name
) -> None:
    work = _unopenable_folder(tmp_path, monkeypatch)
    with pytest.raises(OSError) as expected:
        open(name, "w")
    with pytest.raises(OSError) as caught:
        write_atomically(name, lambda stream: stream.write("{}"), binary=False)
    assert type(caught.value) is type(expected.value)
    assert (caught.value.errno, caught.value.filename) == (expected.value.errno, name)
    assert sorted(os.listdir(work)) == ["adir", "afile"]


def test_a_failure_inside_the_write_keeps_its_own_type(tmp_path) -> None:
    def failing_write(stream) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomically(tmp_path / "a.bin", failing_write)
    assert os.listdir(tmp_path) == []


def test_a_replaced_file_keeps_its_permission_bits(tmp_path) -> None:
    path = tmp_path / "model.safetensors"
    lucid.save({"x": lucid.ones(2)}, path)
    path.chmod(0o604)
    lucid.save({"x": lucid.zeros(3)}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert lucid.load(path)["x"].tolist() == [0.0, 0.0, 0.0]


def test_a_replaced_file_keeps_its_owner(tmp_path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root may give a file to another user")
    path = tmp_path / "model.safetensors"
    lucid.save({"x": lucid.ones(2)}, path)
    os.chown(path, 65534, 65534)
    lucid.save({"x": lucid.zeros(3)}, path)
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_a_read_only_target_is_refused_as_torch_refuses_and_left_alone(tmp_path) -> None:
    path = tmp_path / "model.safetensors"
    lucid.save({"x": lucid.ones(2)}, path)
    path.chmod(0o444)
    if os.geteuid() == 0:
        # root writes a read-only file (torch.save too); what must not change is its mode
        lucid.save({"x": lucid.zeros(3)}, path)
        assert lucid.load(path)["x"].tolist() == [0.0, 0.0, 0.0]
    else:
        message = "^open file failed with strerror: Permission denied$"
        with pytest.raises(RuntimeError, match=message):
            lucid.save({"x": lucid.zeros(3)}, path)
        assert lucid.load(path)["x"].tolist() == [1.0, 1.0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert os.listdir(tmp_path) == [path.name]


def test_a_folder_without_write_permission_is_refused_as_torch_refuses(tmp_path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores permission bits, so the folder is writable")
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        message = "^open file failed with strerror: Permission denied$"
        with pytest.raises(RuntimeError, match=message):
            lucid.save({"x": lucid.ones(2)}, folder / "model.safetensors")
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o755)


def test_a_save_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.safetensors"
    lucid.save({"x": lucid.ones(2)}, target)
    target.chmod(0o640)
    link = tmp_path / "latest.safetensors"
    link.symlink_to(target)
    lucid.save({"x": lucid.zeros(3)}, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert lucid.load(target)["x"].tolist() == [0.0, 0.0, 0.0]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["latest.safetensors", "real"]
    assert os.listdir(tmp_path / "real") == ["model.safetensors"]


def test_a_save_through_a_dangling_symlink_creates_its_target(tmp_path) -> None:
    link = tmp_path / "latest.safetensors"
    link.symlink_to("model.safetensors")
    lucid.save({"x": lucid.ones(2)}, link)
    assert link.is_symlink()
    assert lucid.load(tmp_path / "model.safetensors")["x"].tolist() == [1.0, 1.0]


def test_a_save_to_dev_null_writes_through_it(monkeypatch) -> None:
    if not os.path.exists(os.devnull) or os.devnull != "/dev/null":
        pytest.skip("needs /dev/null")

    def refuse(source, destination):
        # renaming over /dev/null would break the machine for everyone, not just fail the test
        raise AssertionError(f"renamed {source} over {destination}")

    monkeypatch.setattr(_atomic.os, "replace", refuse)
    lucid.save({"x": lucid.ones(2)}, os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_save_to_a_fifo_writes_through_it(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # The reader is open before the save, so the save's open() does not wait for one; the
    # checkpoint stays under the pipe's 64 KiB buffer, so its writes do not wait either.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        lucid.save({"x": lucid.arange(10.0)}, fifo)
        received = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert os.listdir(tmp_path) == ["pipe"]
    (tmp_path / "copy.safetensors").write_bytes(received)
    assert lucid.load(tmp_path / "copy.safetensors")["x"].tolist() == list(range(10))


# The child saves generation after generation of one checkpoint; each try forks it, signals it
# (SIGKILL: a crash; SIGINT: Ctrl-C, a KeyboardInterrupt wherever Python is) after a random delay
# of up to two saves, so it lands before, during and after the rename, and checks that the file
# loads completely as the last generation seen or a later one.
_KILL_LOOP = """
import json, os, random, signal, sys, time
import lucid

path, tries, seed, kill_signal = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(seed)
# A process started in the background may inherit SIGINT ignored; Ctrl-C's behaviour is wanted.
signal.signal(signal.SIGINT, signal.default_int_handler)


def checkpoint(generation):
    return {"generation": lucid.tensor([generation]), "weights": lucid.full((64, 1024), generation)}


lucid.save(checkpoint(0), path)
start = time.perf_counter()
for _ in range(3):
    lucid.save(checkpoint(0), path)
save_seconds = (time.perf_counter() - start) / 3
generation = 0
kept = replaced = 0
ready_reader, ready_writer = os.pipe()
for _ in range(tries):
    child = os.fork()
    if child == 0:
        try:
            # Signalled only once in its loop: a SIGINT during fork's own clean-up is swallowed.
            os.write(ready_writer, b"!")
            next_generation = generation
            while True:
                next_generation += 1
                lucid.save(checkpoint(next_generation), path)
        finally:
            os._exit(1)
    os.read(ready_reader, 1)
    time.sleep(random.uniform(0.0, 2.0 * save_seconds))
    os.kill(child, kill_signal)
    deadline = time.monotonic() + 5.0
    while os.waitpid(child, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            sys.exit(f"the child outlived signal {kill_signal} by 5 s")
        time.sleep(0.001)
    loaded = lucid.load(path)
    found = int(loaded["generation"].item())
    assert found >= generation, (found, generation)
    assert loaded["weights"].shape == (64, 1024)
    assert (loaded["weights"] == float(found)).all().item(), found
    kept += found == generation
    replaced += found > generation
    generation = found
print(json.dumps({"kept": kept, "replaced": replaced, "generation": generation}))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")
@pytest.mark.parametrize("kill_signal", ["SIGKILL", "SIGINT"])
def test_saves_killed_at_random_points_leave_the_old_file_or_the_new_one_complete(
    tmp_path, rng, kill_signal
) -> None:
    path = tmp_path / "model.safetensors"
    tries = 200
    number = str(int(getattr(signal, kill_signal)))
    process = subprocess.run(
        [sys.executable, "-c", _KILL_LOOP, str(path), str(tries), str(rng.integers(2**31)), number],
        cwd=ROOT,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert process.returncode == 0, process.stderr
    outcome = json.loads(process.stdout)
    assert outcome["kept"] + outcome["replaced"] == tries
    # Both sides of the rename were hit: kills that kept the old file and kills after a rename.
    assert outcome["kept"] > 0 and outcome["replaced"] > 0, outcome
    leftovers = [name for name in os.listdir(tmp_path) if _is_temporary(name)]
    if kill_signal == "SIGKILL":
        assert leftovers, "no kill landed while a temporary was being written"
    else:
        assert leftovers == [], "a KeyboardInterrupt left its temporary behind"
    # The temporaries are fresh, as a live writer's would be: the next save leaves them alone,
    # and removes them once they are stale.
    lucid.save({"x": lucid.ones(1)}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(leftovers + [path.name])
    for name in leftovers:
        _age(tmp_path / name)
    lucid.save({"x": lucid.ones(1)}, path)
    assert os.listdir(tmp_path) == [path.name]
