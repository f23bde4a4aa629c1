"""SummaryWriter writes the event files torch.utils.tensorboard writes, read back with the
tensorboard package's own reader; the writer itself needs only NumPy."""

from __future__ import annotations

import gc
import io
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.utils.tensorboard import SummaryWriter
from lucid.utils.tensorboard._crc32c import crc32c, masked_crc32c
from tests.torch_oracle import requires_torch, torch

ROOT = Path(__file__).resolve().parents[2]
tensorboard = pytest.importorskip("tensorboard", reason="tensorboard reads the event files back")

from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    EventFileLoader,
    RawEventFileLoader,
)
from tensorboard.compat.proto import event_pb2  # noqa: E402
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import (  # noqa: E402
    masked_crc32c as reference_masked_crc32c,
)
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402


def _event_files(log_dir: Path) -> dict[str, list[Path]]:
    """Event files by run (their folder relative to `log_dir`), oldest first."""
    runs: dict[str, list[Path]] = {}
    for path in sorted(log_dir.rglob("events.out.tfevents.*")):
        runs.setdefault(str(path.parent.relative_to(log_dir)), []).append(path)
    return runs


def _raw_events(log_dir: Path) -> dict[str, list[event_pb2.Event]]:
    """Each run's events as written (no conversion), parsed from their records."""
    return {
        run: [
            event_pb2.Event.FromString(record)
            for path in paths
            for record in RawEventFileLoader(str(path)).Load()
        ]
        for run, paths in _event_files(log_dir).items()
    }


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)))


def _comparable(event: event_pb2.Event) -> event_pb2.Event:
    """The event with what legitimately differs taken out: the wall time of events stamped
    "now", the writer's name, PNG bytes (compared as pixels) and the order of map entries."""
    event = event_pb2.Event.FromString(event.SerializeToString())
    if event.HasField("file_version") or event.wall_time > 1e6:
        event.ClearField("wall_time")
    event.ClearField("source_metadata")
    for value in event.summary.value:
        if value.HasField("image"):
            value.image.encoded_image_string = b""
        if value.metadata.plugin_data.plugin_name == "hparams":
            content = plugin_data_pb2.HParamsPluginData.FromString(
                value.metadata.plugin_data.content
            )
            value.metadata.plugin_data.content = content.SerializeToString(deterministic=True)
    return event


def _write_both(tmp_path: Path, calls) -> tuple[dict, dict]:
    lucid_dir, torch_dir = tmp_path / "lucid", tmp_path / "torch"
    with SummaryWriter(lucid_dir) as writer:
        calls(writer, lucid)
    from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter

    with TorchSummaryWriter(torch_dir) as writer:
        calls(writer, torch)
    return _raw_events(lucid_dir), _raw_events(torch_dir)


def _assert_same_events(lucid_runs: dict, torch_runs: dict) -> None:
    assert sorted(lucid_runs) == sorted(torch_runs)
    for run, torch_events in torch_runs.items():
        lucid_events = lucid_runs[run]
        assert len(lucid_events) == len(torch_events), run
        for mine, theirs in zip(lucid_events, torch_events):
            assert _comparable(mine) == _comparable(theirs)
            for my_value, their_value in zip(mine.summary.value, theirs.summary.value):
                if their_value.HasField("image"):
                    np.testing.assert_array_equal(
                        _pixels(my_value.image.encoded_image_string),
                        _pixels(their_value.image.encoded_image_string),
                    )


# ------------------------------------------------------------------ checksums
@pytest.mark.parametrize("size", [0, 1, 9, 2047, 2048, 2049, 4099, 65537, 300_007])
def test_masked_crc32c_matches_tensorboards(size):
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    assert masked_crc32c(data) == reference_masked_crc32c(data)


def test_crc32c_check_value():
    # The standard check value of CRC-32C: the checksum of the ASCII digits 1 to 9.
    assert crc32c(b"123456789") == 0xE3069283


# ---------------------------------------------------------- parity with torch
@requires_torch
def test_scalars_text_and_steps_match_torch(tmp_path):
    def calls(writer, module):
        writer.add_scalar("loss", 0.5, 3, walltime=10.0)
        writer.add_scalar("loss", module.tensor(0.25), 4, walltime=11.0)
        writer.add_scalar("zero", 0.0, 0, walltime=12.0)
        writer.add_scalar("nan", float("nan"), -2, walltime=12.5)
        writer.add_scalar("new", np.float32(1.5), 5, walltime=13.0, new_style=True)
        writer.add_scalar("double", 1 / 3, 6, walltime=14.0, new_style=True, double_precision=True)
        writer.add_scalar("no step", 2, walltime=15.0)
        writer.add_text("notes", "a **bold** ünïcode line", 7, walltime=16.0)
        writer.add_scalars("group/a", {"x": 1.0, "y": module.tensor([2.0])}, 8, walltime=17.0)
        writer.add_scalars("group/a", {"x": 3.0}, 9, walltime=18.0)

    lucid_runs, torch_runs = _write_both(tmp_path, calls)
    _assert_same_events(lucid_runs, torch_runs)
    assert sorted(lucid_runs) == [".", "group_a_x", "group_a_y"]
    nan_event = [event for event in lucid_runs["."] if event.step == -2][0]
    assert np.isnan(nan_event.summary.value[0].simple_value)


@requires_torch
@pytest.mark.parametrize(
    ("bins", "max_bins"),
    [("tensorflow", None), (30, None), (30, 7), ("auto", None), ([-1.0, 0.0, 0.5, 4.0], None)],
    ids=str,
)
def test_histogram_buckets_match_torch(tmp_path, bins, max_bins):
    rng = np.random.default_rng(0)
    samples = [
        rng.standard_normal(1000),
        rng.integers(-3, 4, 50),
        np.full(7, 2.5),
        np.array([0.0, 1e-13, -1e-13, 1e19]),
        rng.standard_normal((4, 5)).astype(np.float32),
    ]

    def calls(writer, module):
        for step, values in enumerate(samples):
            writer.add_histogram("h", values, step, bins=bins, walltime=1.0, max_bins=max_bins)
        writer.add_histogram("tensor", module.tensor(samples[0]), 9, bins=bins, walltime=2.0)

    lucid_runs, torch_runs = _write_both(tmp_path, calls)
    _assert_same_events(lucid_runs, torch_runs)
    histograms = [event.summary.value[0].histo for event in lucid_runs["."][1:]]
    assert histograms[0].num == 1000 and len(histograms[0].bucket) > 3


@requires_torch
def test_histogram_raw_matches_torch(tmp_path):
    def calls(writer, module):
        writer.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 17.0, [1.0, 2.0, 3.0], [1, 2, 3], 1, 5.0)

    _assert_same_events(*_write_both(tmp_path, calls))


@requires_torch
@pytest.mark.parametrize(
    ("shape", "dtype", "dataformats", "method"),
    [
        ((3, 6, 5), np.float64, "CHW", "add_image"),
        ((1, 6, 5), np.float32, "CHW", "add_image"),
        ((4, 6, 5), np.uint8, "CHW", "add_image"),
        ((6, 5, 3), np.uint8, "HWC", "add_image"),
        ((6, 5, 2), np.uint8, "HWC", "add_image"),
        ((6, 5), np.float32, "HW", "add_image"),
        ((5, 6), np.float32, "WH", "add_image"),
        ((10, 3, 4, 5), np.float32, "NCHW", "add_images"),
        ((3, 4, 5, 1), np.uint8, "NHWC", "add_images"),
    ],
    ids=str,
)
def test_images_decode_to_torchs_pixels(tmp_path, shape, dtype, dataformats, method):
    rng = np.random.default_rng(1)
    if dtype == np.uint8:
        array = rng.integers(0, 256, shape).astype(np.uint8)
    else:
        # Out of [0, 1] too, so clipping is checked.
        array = rng.uniform(-0.2, 1.2, shape).astype(dtype)

    def calls(writer, module):
        getattr(writer, method)("image", array, 3, walltime=1.0, dataformats=dataformats)
        if dtype != np.uint8:
            getattr(writer, method)(
                "tensor", module.tensor(array), 4, walltime=1.0, dataformats=dataformats
            )

    _assert_same_events(*_write_both(tmp_path, calls))


@requires_torch
def test_hparams_match_torch(tmp_path):
    def calls(writer, module):
        writer.add_hparams(
            {"lr": 0.1, "batch": 32, "optimizer": "adam", "nesterov": True, "skip": None},
            {"hparam/accuracy": 0.9, "hparam/loss": module.tensor(0.25)},
            hparam_domain_discrete={"optimizer": ["adam", "sgd"], "batch": [16, 32]},
            run_name="trial-1",
            global_step=2,
        )

    lucid_runs, torch_runs = _write_both(tmp_path, calls)
    _assert_same_events(lucid_runs, torch_runs)
    tags = [event.summary.value[0].tag for event in lucid_runs["trial-1"][1:]]
    assert tags == [
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
        "hparam/accuracy",
        "hparam/loss",
    ]


@requires_torch
def test_purge_step_events_match_torch(tmp_path):
    for log_dir, writer_class in [
        (tmp_path / "lucid", SummaryWriter),
        (tmp_path / "torch", torch.utils.tensorboard.SummaryWriter),
    ]:
        with writer_class(log_dir, purge_step=5) as writer:
            writer.add_scalar("x", 1.0, 5, walltime=1.0)
    (lucid_events,) = _raw_events(tmp_path / "lucid").values()
    (torch_events,) = _raw_events(tmp_path / "torch").values()
    assert [_comparable(event) for event in lucid_events] == [
        _comparable(event) for event in torch_events
    ]
    assert lucid_events[1].step == 5 and lucid_events[2].session_log.status == 1


# ------------------------------------------------------------ reading back
def test_tensorboards_loader_reads_every_kind_of_summary(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("s", 1.5, 1)
        writer.add_histogram("h", lucid.randn(100), 2)
        writer.add_image("i", lucid.rand(3, 4, 4), 3)
        writer.add_text("t", "text", 4)
    (path,) = _event_files(tmp_path)["."]
    events = list(EventFileLoader(str(path)).Load())
    assert events[0].file_version == "brain.Event:2"
    tags = [(event.step, event.summary.value[0].tag) for event in events[1:]]
    assert tags == [(1, "s"), (2, "h"), (3, "i"), (4, "t/text_summary")]


def test_file_name_and_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1", filename_suffix=".v2") as writer:
        log_dir = Path(writer.get_logdir())
    assert log_dir.parent == Path("runs")
    assert log_dir.name.endswith("_" + socket.gethostname() + "_lr0.1")
    # The date part: month name, day, then time, e.g. Nov26_07-14-03.
    stamp = log_dir.name.split("_")[:2]
    assert len(stamp[0]) == 5 and stamp[0][:3].isalpha() and len(stamp[1]) == 8
    (name,) = os.listdir(log_dir)
    prefix, seconds, host_and_rest = name.split(".", 3)[2], name.split(".")[3], name
    assert prefix == "tfevents" and len(seconds) == 10
    assert host_and_rest.endswith(f".{os.getpid()}." + name.split(".")[-2] + ".v2")


def test_close_then_add_opens_a_new_file(tmp_path):
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("a", 1.0, 0)
    writer.close()
    writer.close()
    writer.add_scalar("a", 2.0, 1)
    writer.close()
    files = _event_files(tmp_path)["."]
    assert len(files) == 2
    values = []
    for path in files:
        events = [event_pb2.Event.FromString(r) for r in RawEventFileLoader(str(path)).Load()]
        assert events[0].file_version == "brain.Event:2"
        values += [event.summary.value[0].simple_value for event in events[1:]]
    assert sorted(values) == [1.0, 2.0]


# ------------------------------------------------------ queue and safe writes
def test_queue_holds_at_most_max_queue_events(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=3)
    (path,) = _event_files(tmp_path)["."]
    header_size = path.stat().st_size
    writer.add_scalar("a", 1.0, 0)
    writer.add_scalar("a", 2.0, 1)
    assert path.stat().st_size == header_size  # queued, not yet written
    writer.add_scalar("a", 3.0, 2)
    assert path.stat().st_size > header_size  # the third filled the queue: all written
    assert len(list(RawEventFileLoader(str(path)).Load())) == 4
    writer.add_scalar("a", 4.0, 3)
    writer.flush()
    assert len(list(RawEventFileLoader(str(path)).Load())) == 5
    writer.close()


def test_flush_secs_zero_writes_every_event_at_once(tmp_path):
    writer = SummaryWriter(tmp_path, flush_secs=0)
    (path,) = _event_files(tmp_path)["."]
    for step in range(3):
        writer.add_scalar("a", float(step), step)
        assert len(list(RawEventFileLoader(str(path)).Load())) == step + 2
    writer.close()


def test_a_crash_keeps_every_record_written_before_it(tmp_path):
    # The process dies without close (os._exit skips every exit handler): the records the
    # full queues wrote are all readable; only the last queue, never written, is lost.
    script = (
        "import os, sys\n"
        "from lucid.utils.tensorboard import SummaryWriter\n"
        "writer = SummaryWriter(sys.argv[1], max_queue=4)\n"
        "for step in range(10):\n"
        "    writer.add_scalar('loss', float(step), step)\n"
        "os._exit(1)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, check=False)
    (path,) = _event_files(tmp_path)["."]
    steps = [event.step for event in _raw_events(tmp_path)["."][1:]]
    assert steps == list(range(8))
    # A record cut short by a crash mid-write: the reader stops there, the rest stays intact.
    with open(path, "ab") as file:
        file.write(struct.pack("<Q", 100) + b"\x00\x01\x02")
    assert [event.step for event in _raw_events(tmp_path)["."][1:]] == list(range(8))


def test_a_writer_collected_without_close_writes_its_queue(tmp_path):
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("loss", 1.0, 7)
    del writer
    gc.collect()
    assert [event.step for event in _raw_events(tmp_path)["."][1:]] == [7]


def test_records_are_tfrecord_framed_with_masked_crc32c(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("a", 1.0, 1)
    (path,) = _event_files(tmp_path)["."]
    data = path.read_bytes()
    offset, records = 0, 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        (length_crc,) = struct.unpack_from("<I", data, offset + 8)
        record = data[offset + 12 : offset + 12 + length]
        (record_crc,) = struct.unpack_from("<I", data, offset + 12 + length)
        assert length_crc == masked_crc32c(data[offset : offset + 8])
        assert record_crc == masked_crc32c(record)
        offset += 16 + length
        records += 1
    assert offset == len(data) and records == 2


def test_writer_needs_only_numpy_and_exit_writes_what_is_queued(tmp_path):
    # The second writer is never closed: the exit handler writes its queued event.
    script = (
        "import sys\n"
        "from importlib.abc import MetaPathFinder\n"
        "BLOCKED = ('torch', 'tensorboard', 'google', 'PIL')\n"
        "class Refuse(MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "import lucid\n"
        "from lucid.utils.tensorboard import SummaryWriter\n"
        "with SummaryWriter(sys.argv[1]) as writer:\n"
        "    writer.add_scalar('a', 1.0, 0)\n"
        "    writer.add_histogram('h', lucid.randn(50), 0)\n"
        "    writer.add_image('i', lucid.rand(3, 4, 4), 0)\n"
        "    writer.add_text('t', 'x', 0)\n"
        "    writer.add_hparams({'lr': 0.1}, {'m': 1.0}, run_name='r')\n"
        "left_open = SummaryWriter(sys.argv[1] + '/open')\n"
        "left_open.add_scalar('loss', 1.0, 1)\n"
        "loaded = [name for name in sys.modules if name.split('.')[0] in BLOCKED]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    runs = _raw_events(tmp_path)
    assert len(runs["."]) == 5 and len(runs["r"]) == 5
    assert [event.step for event in runs["open"][1:]] == [1]


# ------------------------------------------------------------------ errors
_ERROR_CALLS = [
    lambda w: w.add_image("a", np.zeros((3, 4, 5)), dataformats="CCW"),
    lambda w: w.add_image("a", np.zeros((3, 4)), dataformats="CHW"),
    lambda w: w.add_images("a", np.zeros((2, 4, 5, 5)), dataformats="NCHW"),
    lambda w: w.add_scalar("a", np.zeros(3)),
    lambda w: w.add_scalar("a", [1.0]),
    lambda w: w.add_scalar("a", "blob"),
    lambda w: w.add_histogram("a", np.zeros(0)),
    lambda w: w.add_hparams([], {}),
    lambda w: w.add_hparams({"a": [1]}, {}),
    lambda w: w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"a": [1.0]}),
    lambda w: w.add_hparams({"a": 1}, {}, hparam_domain_discrete=[1]),
    lambda w: w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"b": [1]}),
    lambda w: w.add_histogram_raw("a", 0, 1, 2, 1, 1, [1, 2], [1]),
]


@requires_torch
@pytest.mark.parametrize("index", range(len(_ERROR_CALLS)))
def test_errors_match_torch(tmp_path, index):
    call = _ERROR_CALLS[index]
    from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter

    with TorchSummaryWriter(tmp_path / "torch") as writer:
        with pytest.raises(Exception) as torch_error:
            call(writer)
    with SummaryWriter(tmp_path / "lucid") as writer:
        with pytest.raises(Exception) as lucid_error:
            call(writer)
    assert type(lucid_error.value) is type(torch_error.value)
    assert str(lucid_error.value) == str(torch_error.value).replace("torch", "lucid")


@pytest.mark.parametrize("method", ["add_graph", "add_embedding"])
def test_unsupported_methods_say_so(tmp_path, method):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(NotImplementedError, match=f"{method} is not implemented in lucid"):
            getattr(writer, method)(lucid.nn.Linear(2, 2))
