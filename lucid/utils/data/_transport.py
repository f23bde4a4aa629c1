"""How objects travel between the main process and a loading worker (tasks one way, batches
the other): pickled, as multiprocessing's own queues do, with lucid tensors reduced to their
arrays and every large buffer out of band in one anonymous shared-memory file whose descriptor
crosses the socket, so the receiver maps the sender's bytes rather than reading them through
the socket and copying them again.

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
    """Pickle `obj` for `Channel.send`: the frame and the raw bytes that go to shared memory.
    Raises what pickling raises, before anything is sent.

    The frame is the number of shared buffers, whether the pickle itself is among them (the
    last), their sizes, then the pickle if not. A large pickle goes to shared memory as well,
    so that every frame is small: neither side's socket buffer can fill with frames the other
    is not reading, which would let the two processes wait on each other.
    """
    buffers: list[pickle.PickleBuffer] | None = [] if _HAS_MEMFD else None
    body = dumps(obj, buffers)
    raws = [buffer.raw() for buffer in buffers or ()]
    body_is_shared = _HAS_MEMFD and body.nbytes >= _OUT_OF_BAND_BYTES
    if body_is_shared:
        raws.append(body)
    sizes = [raw.nbytes for raw in raws]
    header = struct.pack(f"<IB{len(sizes)}Q", len(sizes), body_is_shared, *sizes)
    return header if body_is_shared else header + body, raws


class Channel:
    """One end of a duplex multiprocessing Pipe (a socket pair), sending objects as `encode`
    makes them and passing the shared file's descriptor beside the frame."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        # a socket object over the same descriptor, for sendmsg/recvmsg with SCM_RIGHTS
        self.socket = socket.socket(fileno=os.dup(connection.fileno()))

    def fileno(self) -> int:
        return self.connection.fileno()

    def close(self) -> None:
        self.socket.close()
        self.connection.close()

    def send(self, encoded: tuple[bytes, list[memoryview]]) -> None:
        frame, raws = encoded
        self.connection.send_bytes(frame)
        if not raws:
            return
        offsets, total = _offsets([raw.nbytes for raw in raws])
        descriptor = os.memfd_create("lucid-dataloader", os.MFD_CLOEXEC)
        try:
            os.ftruncate(descriptor, total)
            for raw, offset in zip(raws, offsets):
                # pwrite fills the file's pages without mapping them into this process
                written = 0
                while written < raw.nbytes:
                    written += os.pwrite(descriptor, raw[written:], offset + written)
            socket.send_fds(self.socket, [b"F"], [descriptor])
        finally:
            os.close(descriptor)

    def _read_frame(self) -> tuple[tuple[int, ...], bool, memoryview]:
        frame = memoryview(self.connection.recv_bytes())
        count, body_is_shared = struct.unpack_from("<IB", frame)
        sizes = struct.unpack_from(f"<{count}Q", frame, 5)
        return sizes, bool(body_is_shared), frame[5 + 8 * count :]

    def _receive_descriptor(self) -> int:
        _, descriptors, _, _ = socket.recv_fds(self.socket, 1, 1)
        if not descriptors:
            raise EOFError("the socket closed before the shared memory's descriptor came")
        return descriptors[0]

    def receive(self) -> Any:
        """The next object the other end sent; its large arrays lie in shared memory."""
        sizes, body_is_shared, body = self._read_frame()
        if not sizes:
            return pickle.loads(body)
        descriptor = self._receive_descriptor()
        offsets, total = _offsets(sizes)
        try:
            # Writable, as a batch made in this process would be; the sender has closed its
            # copy, so nothing else sees the writes.
            mapped = mmap.mmap(descriptor, total)
        finally:
            os.close(descriptor)
        view = memoryview(mapped)
        buffers = [view[offset : offset + size] for offset, size in zip(offsets, sizes)]
        if body_is_shared:
            body = buffers.pop()
        return pickle.loads(body, buffers=buffers)

    def discard(self) -> None:
        """Read the next message and drop it, unmapped."""
        sizes, _, _ = self._read_frame()
        if sizes:
            os.close(self._receive_descriptor())
