"""How a batch travels from a loading worker to the main process: pickled, as multiprocessing's
own queues do, with every large array buffer out of band in one anonymous shared-memory file
whose descriptor crosses the socket, so the main process maps the worker's bytes rather than
reading them through the socket and copying them again.

The file is a memfd: it has no name, so nothing can leak from /dev/shm, whichever process
dies; its memory goes back once the last array over it is freed. Pickle is used here only
between processes of one DataLoader, never for anything written to disk.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import socket
import struct
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

import lucid

# Below this, copying a buffer through the socket costs less than making and mapping a file.
_OUT_OF_BAND_BYTES = 1 << 16
# Each buffer starts on a cache-line boundary inside the shared file.
_ALIGNMENT = 64
_HAS_MEMFD = hasattr(os, "memfd_create") and hasattr(socket, "send_fds")

_NON_LEAF_ERROR = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
    "not support crossing process boundaries.  If you just want to transfer the data, call "
    "detach() on the tensor before serializing (e.g., putting it on the queue)."
)


def _rebuild_tensor(array: np.ndarray, dtype: np.dtype | None, requires_grad: bool) -> Any:
    if dtype is not None:
        array = array.view(dtype)
    return lucid.from_numpy(array).requires_grad_(requires_grad)


class _Pickler(pickle.Pickler):
    """Pickles lucid tensors as their arrays (a Tensor refuses plain pickling, so that no
    checkpoint is ever a pickle)."""

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, lucid.Tensor):
            return NotImplemented
        if obj.requires_grad and not obj.is_leaf:
            raise RuntimeError(_NON_LEAF_ERROR)
        array = obj.detach().numpy()
        dtype = None
        if array.dtype.kind == "V":
            # NumPy pickles ml_dtypes' bfloat16 in band only; its bits as unsigned integers of
            # the same width can go out of band.
            dtype = array.dtype
            array = array.view(f"u{array.dtype.itemsize}")
        return _rebuild_tensor, (array, dtype, obj.requires_grad)


def dumps(obj: Any, buffers: list[pickle.PickleBuffer] | None = None) -> memoryview:
    """Pickle `obj`; with a `buffers` list, buffers of at least _OUT_OF_BAND_BYTES are appended
    to it instead of being written into the pickle."""

    def place(buffer: pickle.PickleBuffer) -> bool:
        if buffer.raw().nbytes < _OUT_OF_BAND_BYTES:
            return True
        buffers.append(buffer)
        return False

    stream = io.BytesIO()
    _Pickler(stream, protocol=5, buffer_callback=None if buffers is None else place).dump(obj)
    return stream.getbuffer()


def _offsets(sizes: Sequence[int]) -> tuple[list[int], int]:
    offsets, end = [], 0
    for size in sizes:
        offsets.append(end)
        end += -(-size // _ALIGNMENT) * _ALIGNMENT
    return offsets, end


def encode(obj: Any) -> tuple[bytes, list[memoryview]]:
    """Pickle `obj` for `send`: the frame (buffer sizes, then the pickle) and the raw bytes of
    the buffers that go out of band. Raises what pickling raises, before anything is sent."""
    buffers: list[pickle.PickleBuffer] | None = [] if _HAS_MEMFD else None
    body = dumps(obj, buffers)
    raws = [buffer.raw() for buffer in buffers or ()]
    sizes = [raw.nbytes for raw in raws]
    return struct.pack(f"<I{len(sizes)}Q", len(sizes), *sizes) + body, raws


def send(connection: Connection, channel: socket.socket, encoded: tuple) -> None:
    """Send what `encode` made down the worker's result `connection`; `channel` is a socket
    over the same descriptor, for passing the shared file."""
    frame, raws = encoded
    connection.send_bytes(frame)
    if not raws:
        return
    offsets, total = _offsets([raw.nbytes for raw in raws])
    descriptor = os.memfd_create("lucid-dataloader-batch", os.MFD_CLOEXEC)
    try:
        os.ftruncate(descriptor, total)
        for raw, offset in zip(raws, offsets):
            # pwrite fills the file's pages without mapping them into this process
            written = 0
            while written < raw.nbytes:
                written += os.pwrite(descriptor, raw[written:], offset + written)
        socket.send_fds(channel, [b"F"], [descriptor])
    finally:
        os.close(descriptor)


def _read_frame(connection: Connection) -> tuple[tuple[int, ...], memoryview]:
    frame = memoryview(connection.recv_bytes())
    (count,) = struct.unpack_from("<I", frame)
    sizes = struct.unpack_from(f"<{count}Q", frame, 4)
    return sizes, frame[4 + 8 * count :]


def _receive_descriptor(channel: socket.socket) -> int:
    _, descriptors, _, _ = socket.recv_fds(channel, 1, 1)
    if not descriptors:
        raise EOFError("the worker's socket closed before its shared memory arrived")
    return descriptors[0]


def receive(connection: Connection, channel: socket.socket) -> Any:
    """The next object `send` put on the other end; its large arrays lie in shared memory."""
    sizes, body = _read_frame(connection)
    if not sizes:
        return pickle.loads(body)
    descriptor = _receive_descriptor(channel)
    offsets, total = _offsets(sizes)
    try:
        # Writable, as a batch made in this process would be; the worker has closed its copy,
        # so nothing else sees the writes.
        mapped = mmap.mmap(descriptor, total)
    finally:
        os.close(descriptor)
    view = memoryview(mapped)
    buffers = [view[offset : offset + size] for offset, size in zip(offsets, sizes)]
    return pickle.loads(body, buffers=buffers)


def discard(connection: Connection, channel: socket.socket) -> None:
    """Read the next message and drop it, releasing its shared memory unmapped."""
    sizes, _ = _read_frame(connection)
    if sizes:
        os.close(_receive_descriptor(channel))
