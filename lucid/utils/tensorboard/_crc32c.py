"""CRC-32C (Castagnoli), the checksum of TFRecord framing, in NumPy with no compiled helper.

A byte-at-a-time table loop costs one Python step per byte. Long inputs are instead cut into
equal chunks whose checksums NumPy advances side by side, one column of bytes per step, and
the chunks are then chained with the linear map "append L zero bytes" (CRC is linear over
GF(2)), so the Python steps number about 2 * sqrt(len(data)).
"""

from __future__ import annotations

import numpy as np

_POLYNOMIAL = 0x82F63B78  # Castagnoli, bit-reflected
_MASK_DELTA = 0xA282EAD8
_LANE_THRESHOLD = 2048  # below this, the plain loop is faster than setting up lanes


def _make_table() -> np.ndarray:
    values = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        values = np.where(values & 1, (values >> 1) ^ np.uint32(_POLYNOMIAL), values >> 1)
    return values.astype(np.uint32)


_TABLE = _make_table()
_TABLE_LIST = _TABLE.tolist()


def _advance(register: int, data: bytes | memoryview) -> int:
    """The raw register after `data`, with no conditioning; one Python step per byte."""
    table = _TABLE_LIST
    for byte in data:
        register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
    return register


def _advance_lanes(registers: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Advance each lane's register over its row of bytes; `columns` is (length, lanes)."""
    table = _TABLE
    for column in columns:
        registers = table[(registers ^ column) & 0xFF] ^ (registers >> 8)
    return registers


def _byte_tables(images: np.ndarray) -> list[list[int]]:
    """Four 256-entry tables applying the linear map whose image of bit k is images[k]."""
    values = np.arange(256, dtype=np.uint32)
    tables = []
    for byte in range(4):
        table = np.zeros(256, dtype=np.uint32)
        for bit in range(8):
            table ^= np.where((values >> bit) & 1, images[8 * byte + bit], np.uint32(0))
        tables.append(table.tolist())
    return tables


def crc32c(data: bytes) -> int:
    """CRC-32C of `data`."""
    size = len(data)
    if size < _LANE_THRESHOLD:
        return _advance(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    length = int(np.sqrt(size))
    count = size // length
    chunks = np.frombuffer(data, dtype=np.uint8, count=count * length).reshape(count, length)
    # Lanes: the chunks (the first carries the initial register, the rest start from zero),
    # then 32 lanes of zero bytes starting from each single bit, whose results are the
    # images of the map "append `length` zero bytes".
    lanes = np.zeros((length, count + 32), dtype=np.uint32)
    lanes[:, :count] = chunks.T
    registers = np.zeros(count + 32, dtype=np.uint32)
    registers[0] = 0xFFFFFFFF
    registers[count:] = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
    registers = _advance_lanes(registers, lanes)
    table0, table1, table2, table3 = _byte_tables(registers[count:])
    register = 0
    # register(A + B) = shift(register(A), len(B)) ^ raw(B): the map is linear, so each
    # chunk's own checksum (from zero) is combined with the shifted running register.
    for chunk_register in registers[:count].tolist():
        register = (
            table0[register & 0xFF]
            ^ table1[(register >> 8) & 0xFF]
            ^ table2[(register >> 16) & 0xFF]
            ^ table3[register >> 24]
            ^ chunk_register
        )
    register = _advance(register, memoryview(data)[count * length :])
    return register ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The TFRecord checksum: CRC-32C rotated and offset, so a CRC of CRCs is not trivial."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
