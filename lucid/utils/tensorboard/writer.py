"""SummaryWriter: TensorBoard event files (scalars, histograms, images, text, hparams) written
with NumPy and the standard library alone."""

from __future__ import annotations

import itertools
import os
import socket
import struct
import threading
import time
import weakref
from datetime import datetime
from typing import Any

import numpy as np

from lucid import Tensor
from lucid.utils.tensorboard import _proto
from lucid.utils.tensorboard._crc32c import masked_crc32c
from lucid.utils.tensorboard._png import encode_png

__all__ = ["FileWriter", "SummaryWriter"]

# Event files of one process are numbered, so two opened in the same second differ in name.
_file_numbers = itertools.count()
_file_numbers_lock = threading.Lock()


def _write_out_and_close(file: Any, pending: list[bytes]) -> None:
    if pending:
        file.write(b"".join(pending))
        pending.clear()
    file.flush()
    os.fsync(file.fileno())
    file.close()


class _EventFile:
    """One event file: TFRecord framing, a queue of at most `max_queue` encoded records.

    A record is appended whole (length, its checksum, data, the data's checksum) and never
    rewritten, so a crash can at worst leave the last record short, which readers skip;
    every record before it stays readable.
    """

    def __init__(self, log_dir: str, max_queue: int, flush_secs: float, filename_suffix: str):
        os.makedirs(log_dir, exist_ok=True)
        with _file_numbers_lock:
            number = next(_file_numbers)
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{number}{filename_suffix}"
        )
        self.path = os.path.join(log_dir, name)
        self._file = open(self.path, "wb")  # noqa: SIM115 - kept open for the writer's life
        self._max_queue = max(int(max_queue), 1)
        self._flush_secs = flush_secs
        self._next_flush = time.monotonic() + flush_secs
        self._pending: list[bytes] = []
        self._lock = threading.Lock()
        self.closed = False
        # Runs on close(), when the writer is collected, or at interpreter exit, whichever
        # comes first, so queued events reach the file even if close() is never called.
        self._finalizer = weakref.finalize(self, _write_out_and_close, self._file, self._pending)

    def write(self, record: bytes) -> None:
        header = struct.pack("<Q", len(record))
        framed = (
            header
            + struct.pack("<I", masked_crc32c(header))
            + record
            + struct.pack("<I", masked_crc32c(record))
        )
        with self._lock:
            if self.closed:
                raise OSError("Writer is closed")
            self._pending.append(framed)
            if len(self._pending) >= self._max_queue or time.monotonic() >= self._next_flush:
                self._write_pending()

    def _write_pending(self) -> None:
        if self._pending:
            self._file.write(b"".join(self._pending))
            self._pending.clear()
        self._file.flush()
        self._next_flush = time.monotonic() + self._flush_secs

    def flush(self) -> None:
        with self._lock:
            if self.closed:
                raise OSError("Writer is closed")
            self._write_pending()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self._finalizer()


class FileWriter:
    """Writes events to one new event file in `log_dir`, as `torch.utils.tensorboard.FileWriter`.

    Events wait in a queue of at most `max_queue`; the queue is written out when it is full,
    on the first event after `flush_secs`, and on `flush()` and `close()`. lucid writes from
    the calling thread, so no event waits on a background thread and none is lost when the
    program ends without `close()`.
    """

    def __init__(
        self, log_dir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""
    ) -> None:
        self._log_dir = str(log_dir)
        self._file = _EventFile(self._log_dir, max_queue, flush_secs, filename_suffix)
        first = _proto.event(
            time.time(), 0, file_version="brain.Event:2", source_writer="lucid.utils.tensorboard"
        )
        self._file.write(first)
        self._file.flush()

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self._log_dir

    def add_event(self, event: Any, step: int | None = None, walltime: float | None = None) -> None:
        """Write an `Event` protocol-buffer object (from the protobuf runtime, if the caller
        has one), stamped with `walltime` (now by default) and `step`, as PyTorch's does."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self._file.write(event.SerializeToString())

    def add_summary(
        self, summary: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Write a `Summary`: its encoded bytes, or a protocol-buffer object."""
        if not isinstance(summary, bytes):
            summary = summary.SerializeToString()
        self._add(global_step, walltime, summary=summary)

    def _add(
        self,
        step: int | None,
        walltime: float | None,
        *,
        summary: bytes | None = None,
        file_version: str | None = None,
        session_log: bytes | None = None,
    ) -> None:
        wall_time = time.time() if walltime is None else float(walltime)
        record = _proto.event(
            wall_time,
            0 if step is None else int(step),
            file_version=file_version,
            summary=summary,
            session_log=session_log,
        )
        self._file.write(record)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


# ------------------------------------------------------------- value conversion
def _make_np(value: Any) -> np.ndarray:
    """An array from a NumPy array, a Python or NumPy scalar, or a lucid Tensor."""
    if isinstance(value, np.ndarray):
        return value
    if np.isscalar(value):
        return np.array([value])
    if isinstance(value, Tensor):
        array = value.detach().numpy()
        # TensorBoard has no bfloat16; float16 keeps the values (as PyTorch does).
        if array.dtype.name == "bfloat16":
            array = array.astype(np.float16)
        return array
    raise NotImplementedError(f"Got {type(value)}, but numpy array or lucid tensor are expected.")


def _numbers(values: Any) -> list[float]:
    """A flat list of floats from a sequence, an array or a lucid Tensor."""
    array = values if isinstance(values, list | tuple) else _make_np(values)
    return np.asarray(array, dtype=float).reshape(-1).tolist()


def _scalar_summary(
    tag: str, value: Any, new_style: bool = False, double_precision: bool = False
) -> bytes:
    array = _make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions).             "
            f"Was given size: {array.size} and {array.ndim} dimensions."
        )
    number = float(array)
    if not new_style:
        return _proto.summary([_proto.summary_value(tag, simple_value=number)])
    if double_precision:
        tensor = _proto.tensor(_proto.DT_DOUBLE, double_val=[number])
    else:
        tensor = _proto.tensor(_proto.DT_FLOAT, float_val=[number])
    metadata = _proto.plugin_metadata("scalars")
    return _proto.summary([_proto.summary_value(tag, metadata=metadata, tensor=tensor)])


def _default_bins() -> list[float]:
    """TensorBoard's default bucket edges: +-1e-12 growing by 1.1 up to 1e20, and 0.

    The edges are products taken one at a time (1e-12 * 1.1 * 1.1 ...), each rounded, so
    they are built by a running product, not by powers, to be the same floats."""
    factors = np.full(800, 1.1)  # 1.1 ** 774 > 1e32: enough to pass 1e20
    factors[0] = 1e-12
    positive = np.multiply.accumulate(factors)
    positive = positive[positive < 1e20]
    return np.concatenate([-positive[::-1], [0.0], positive]).tolist()


def _histogram_summary(tag: str, values: Any, bins: Any, max_bins: int | None) -> bytes:
    values = _make_np(values).astype(float)
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        # Merge runs of `subsampling` neighbouring buckets, zero-padding the last run.
        subsampling = len(counts) // max_bins
        remainder = len(counts) % subsampling
        if remainder != 0:
            counts = np.pad(counts, (0, subsampling - remainder))
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        merged = np.empty(counts.size + 1, dtype=limits.dtype)
        merged[:-1] = limits[:-1:subsampling]
        merged[-1] = limits[-1]
        limits = merged
    # Keep the buckets from just before the first nonempty one to the last nonempty one.
    cumulative = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cumulative, [0, cumulative[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    histogram = _proto.histogram(
        values.min(),
        values.max(),
        len(values),
        values.sum(),
        values.dot(values),
        limits.tolist(),
        counts.tolist(),
    )
    return _proto.summary([_proto.summary_value(tag, histo=histogram)])


def _make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """(N, 3, H, W) images tiled row by row onto one (3, rows * H, ncols * W) canvas."""
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, channels, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    padded = np.zeros((nrows * ncols, channels, height, width), dtype=images.dtype)
    padded[:count] = images
    grid = padded.reshape(nrows, ncols, channels, height, width).transpose(2, 0, 3, 1, 4)
    return grid.reshape(channels, nrows * height, ncols * width)


def _to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(
            "You can not use the same dimension shorthand twice.             "
            f"input_format: {dataformats}"
        )
    if array.ndim != len(dataformats):
        raise AssertionError(
            "size of input tensor and input format are different.         "
            f"tensor shape: {array.shape}, input_format: {dataformats}"
        )
    dataformats = dataformats.upper()
    if len(dataformats) == 4:
        nchw = array.transpose([dataformats.find(axis) for axis in "NCHW"])
        return _make_grid(nchw).transpose(1, 2, 0)
    if len(dataformats) == 3:
        hwc = array.transpose([dataformats.find(axis) for axis in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    hw = array.transpose([dataformats.find(axis) for axis in "HW"])
    return np.stack([hw, hw, hw], 2)


def _image_summary(tag: str, img_tensor: Any, dataformats: str) -> bytes:
    array = _to_hwc(_make_np(img_tensor), dataformats)
    # uint8 images are taken as 0..255, anything else as 0..1.
    scale = 1 if array.dtype == np.uint8 else 255
    pixels = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = pixels.shape
    image = _proto.image(height, width, channels, encode_png(np.ascontiguousarray(pixels)))
    return _proto.summary([_proto.summary_value(tag, image=image)])


def _text_summary(tag: str, text: str) -> bytes:
    # TextPluginData at version 0 encodes to nothing, so the plugin carries no content.
    metadata = _proto.plugin_metadata("text")
    tensor = _proto.tensor(_proto.DT_STRING, [1], string_val=[text.encode("utf_8")])
    value = _proto.summary_value(tag + "/text_summary", metadata=metadata, tensor=tensor)
    return _proto.summary([value])


def _hparams_summaries(
    hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None
) -> tuple[bytes, bytes, bytes]:
    """The experiment, session-start and session-end summaries of the hparams plugin."""
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for key, domain in hparam_domain_discrete.items():
        if (
            key not in hparam_dict
            or not isinstance(domain, list)
            or not all(isinstance(value, type(hparam_dict[key])) for value in domain)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{key}] should be a list of same type as "
                f"hparam_dict[{key}]."
            )
    infos, values = [], []
    for key, value in hparam_dict.items():
        if value is None:
            continue
        # bool is an int: like PyTorch, booleans are logged as the numbers 0 and 1.
        if isinstance(value, int | float):
            values.append((key, _proto.double_field(2, value)))
            data_type = _proto.DATA_TYPE_FLOAT64
        elif isinstance(value, str):
            values.append((key, _proto.string_field(3, value)))
            data_type = _proto.DATA_TYPE_STRING
        elif isinstance(value, Tensor):
            values.append((key, _proto.double_field(2, float(_make_np(value).reshape(-1)[0]))))
            infos.append(_proto.hparam_info(key, _proto.DATA_TYPE_FLOAT64, None))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or lucid.Tensor")
        domain = hparam_domain_discrete.get(key)
        if domain is not None and data_type == _proto.DATA_TYPE_FLOAT64:
            domain = [float(number) for number in domain]
        infos.append(_proto.hparam_info(key, data_type, domain))

    def plugin_summary(tag: str, content: bytes) -> bytes:
        metadata = _proto.plugin_metadata(_proto.HPARAMS_PLUGIN, content)
        return _proto.summary([_proto.summary_value(tag, metadata=metadata)])

    experiment = _proto.hparams_plugin_data(experiment=_proto.experiment(infos, metric_dict))
    start = _proto.hparams_plugin_data(session_start_info=_proto.session_start_info(values))
    end = _proto.hparams_plugin_data(
        session_end_info=_proto.session_end_info(_proto.STATUS_SUCCESS)
    )
    return (
        plugin_summary(_proto.EXPERIMENT_TAG, experiment),
        plugin_summary(_proto.SESSION_START_INFO_TAG, start),
        plugin_summary(_proto.SESSION_END_INFO_TAG, end),
    )


# ----------------------------------------------------------------- the writer
class SummaryWriter:
    """Write TensorBoard event files, as `torch.utils.tensorboard.SummaryWriter`.

    The files are the same as PyTorch's (TFRecord framing with masked CRC-32C around `Event`
    protocol buffers), encoded by lucid itself: no protobuf, tensorboard or imaging package
    is needed to write them. Events are written from the calling thread (see `FileWriter`).
    `add_graph` and `add_embedding` are not implemented.

    Example::

        >>> from lucid.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter("runs/exp1") as writer:
        ...     for step in range(100):
        ...         writer.add_scalar("loss", 1 / (step + 1), step)
    """

    def __init__(
        self,
        log_dir: str | os.PathLike | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The main writer; after `close()` the next call opens a new event file."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard hides the events at and after this step in earlier files.
                self.file_writer._add(self.purge_step, None, file_version="brain.Event:2")
                self.file_writer._add(
                    self.purge_step, None, session_log=_proto.session_log(_proto.SESSION_LOG_START)
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str | os.PathLike:
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number; `new_style` stores it as a tensor of the scalars plugin."""
        summary = _scalar_summary(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers on one chart, each in its own run `<log_dir>/<main_tag>_<tag>`."""
        walltime = time.time() if walltime is None else walltime
        main_log_dir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            run_dir = main_log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(run_dir)
            if writer is None:
                writer = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[run_dir] = writer
            writer.add_summary(_scalar_summary(main_tag, scalar_value), global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log a histogram of `values`; `bins` as NumPy's, or TensorBoard's default edges."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        summary = _histogram_summary(tag, values, bins, max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,  # noqa: A002 - PyTorch's argument names
        max: float,  # noqa: A002
        num: int,
        sum: float,  # noqa: A002
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram already counted: upper edge and count of each bucket."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        histogram = _proto.histogram(
            min,
            max,
            num,
            sum,
            sum_squares,
            _numbers(bucket_limits),
            _numbers(bucket_counts),
        )
        summary = _proto.summary([_proto.summary_value(tag, histo=histogram)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log an image (uint8 in 0..255, or floats in 0..1), stored as PNG."""
        summary = _image_summary(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images tiled into one grid, eight per row."""
        summary = _image_summary(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a string (rendered as Markdown) under `<tag>/text_summary`."""
        summary = _text_summary(tag, text_string)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log one trial's hyperparameters and metrics, in a run of its own below `log_dir`."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = _hparams_summaries(
            hparam_dict, metric_dict, hparam_domain_discrete
        )
        if not run_name:
            run_name = str(time.time())
        log_dir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=log_dir) as trial:
            trial.file_writer.add_summary(experiment, global_step)
            trial.file_writer.add_summary(start, global_step)
            trial.file_writer.add_summary(end, global_step)
            for key, value in metric_dict.items():
                trial.add_scalar(key, value, global_step)

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Not implemented: PyTorch draws the graph of a TorchScript trace, which lucid lacks."""
        raise NotImplementedError(
            "SummaryWriter.add_graph is not implemented in lucid: it needs a traced graph of "
            "the model (a GraphDef), and lucid has no tracer"
        )

    def add_embedding(
        self,
        mat: Any,
        metadata: list | None = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: list | None = None,
    ) -> None:
        """Not implemented: the projector's files (tensors, sprites, its config) are not written."""
        raise NotImplementedError(
            "SummaryWriter.add_embedding is not implemented in lucid: the embedding "
            "projector's files are not written"
        )

    def flush(self) -> None:
        """Write every queued event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Write every queued event and close the files; a later `add_*` opens a new file."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
