"""The protocol-buffer messages of TensorBoard event files, encoded by hand (no protobuf runtime).

Each builder returns a message's wire bytes with its fields in field-number order, as the
reference encoder writes them. A field left at its default is omitted, except a member of a
`oneof` (which has presence). Field numbers are those of TensorBoard's event.proto,
summary.proto, tensor.proto and the hparams plugin's api.proto and plugin_data.proto.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

# Wire types.
_VARINT = 0
_FIXED64 = 1
_LENGTH_DELIMITED = 2
_FIXED32 = 5

# TensorProto dtypes (types.proto).
DT_FLOAT = 1
DT_DOUBLE = 2
DT_STRING = 7

# SessionLog.status
SESSION_LOG_START = 1


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # negative int64 and enum values take ten bytes, two's complement
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint((number << 3) | wire_type)


def varint_field(number: int, value: int) -> bytes:
    return _key(number, _VARINT) + _varint(int(value))


def double_field(number: int, value: float) -> bytes:
    return _key(number, _FIXED64) + struct.pack("<d", value)


def float_field(number: int, value: float) -> bytes:
    return _key(number, _FIXED32) + struct.pack("<f", value)


def bytes_field(number: int, value: bytes) -> bytes:
    return _key(number, _LENGTH_DELIMITED) + _varint(len(value)) + value


def string_field(number: int, value: str) -> bytes:
    return bytes_field(number, value.encode("utf-8"))


def packed_doubles(number: int, values: Iterable[float]) -> bytes:
    values = list(values)
    if not values:
        return b""
    return bytes_field(number, struct.pack(f"<{len(values)}d", *values))


def packed_floats(number: int, values: Iterable[float]) -> bytes:
    values = list(values)
    if not values:
        return b""
    return bytes_field(number, struct.pack(f"<{len(values)}f", *values))


# ----------------------------------------------------------------- event.proto
def event(
    wall_time: float,
    step: int,
    *,
    file_version: str | None = None,
    summary: bytes | None = None,
    session_log: bytes | None = None,
    source_writer: str | None = None,
) -> bytes:
    out = b""
    if wall_time:
        out += double_field(1, wall_time)
    if step:
        out += varint_field(2, step)
    if file_version is not None:
        out += string_field(3, file_version)
    if summary is not None:
        out += bytes_field(5, summary)
    if session_log is not None:
        out += bytes_field(7, session_log)
    if source_writer is not None:
        out += bytes_field(10, string_field(1, source_writer))
    return out


def session_log(status: int) -> bytes:
    return varint_field(1, status)


# --------------------------------------------------------------- summary.proto
def summary(values: Iterable[bytes]) -> bytes:
    return b"".join(bytes_field(1, value) for value in values)


def summary_value(
    tag: str,
    *,
    metadata: bytes | None = None,
    simple_value: float | None = None,
    image: bytes | None = None,
    histo: bytes | None = None,
    tensor: bytes | None = None,
) -> bytes:
    out = string_field(1, tag) if tag else b""
    if simple_value is not None:
        out += float_field(2, simple_value)
    if image is not None:
        out += bytes_field(4, image)
    if histo is not None:
        out += bytes_field(5, histo)
    if tensor is not None:
        out += bytes_field(8, tensor)
    if metadata is not None:
        out += bytes_field(9, metadata)
    return out


def plugin_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    plugin_data = string_field(1, plugin_name) + (bytes_field(2, content) if content else b"")
    return bytes_field(1, plugin_data)


def histogram(
    minimum: float,
    maximum: float,
    num: float,
    total: float,
    sum_squares: float,
    bucket_limits: Iterable[float],
    buckets: Iterable[float],
) -> bytes:
    out = b""
    for number, value in enumerate((minimum, maximum, num, total, sum_squares), start=1):
        if value:
            out += double_field(number, value)
    return out + packed_doubles(6, bucket_limits) + packed_doubles(7, buckets)


def image(height: int, width: int, colorspace: int, encoded: bytes) -> bytes:
    out = b""
    for number, value in enumerate((height, width, colorspace), start=1):
        if value:
            out += varint_field(number, value)
    return out + (bytes_field(4, encoded) if encoded else b"")


# ---------------------------------------------------------------- tensor.proto
def tensor(
    dtype: int,
    shape: Iterable[int] | None = None,
    *,
    float_val: Iterable[float] = (),
    double_val: Iterable[float] = (),
    string_val: Iterable[bytes] = (),
) -> bytes:
    out = varint_field(1, dtype)
    if shape is not None:
        dims = b"".join(bytes_field(2, varint_field(1, size) if size else b"") for size in shape)
        out += bytes_field(2, dims)
    out += packed_floats(5, float_val) + packed_doubles(6, double_val)
    return out + b"".join(bytes_field(8, value) for value in string_val)


# --------------------------------------------------------- the hparams plugin
HPARAMS_PLUGIN = "hparams"
EXPERIMENT_TAG = "_hparams_/experiment"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"
SESSION_END_INFO_TAG = "_hparams_/session_end_info"
DATA_TYPE_STRING = 1
DATA_TYPE_FLOAT64 = 3
STATUS_SUCCESS = 1


def struct_value(value: float | str | bool) -> bytes:
    """google.protobuf.Value holding a number, a string or a bool (each a oneof member)."""
    if isinstance(value, bool):
        return varint_field(4, value)
    if isinstance(value, str):
        return string_field(3, value)
    return double_field(2, value)


def hparam_info(name: str, data_type: int, domain_discrete: list | None) -> bytes:
    out = string_field(1, name) + varint_field(4, data_type)
    if domain_discrete is not None:
        values = b"".join(bytes_field(1, struct_value(value)) for value in domain_discrete)
        out += bytes_field(5, values)
    return out


def experiment(hparam_infos: Iterable[bytes], metric_tags: Iterable[str]) -> bytes:
    out = b"".join(bytes_field(4, info) for info in hparam_infos)
    # MetricInfo.name is a MetricName whose tag is field 2.
    return out + b"".join(
        bytes_field(5, bytes_field(1, string_field(2, tag))) for tag in metric_tags
    )


def session_start_info(hparams: Iterable[tuple[str, bytes]]) -> bytes:
    # A map is a repeated entry message: key 1, value 2.
    return b"".join(
        bytes_field(1, string_field(1, key) + bytes_field(2, value)) for key, value in hparams
    )


def session_end_info(status: int) -> bytes:
    return varint_field(1, status)


def hparams_plugin_data(*, experiment: bytes | None = None, session_start_info: bytes | None = None,
                        session_end_info: bytes | None = None) -> bytes:  # fmt: skip
    """HParamsPluginData at version 0 (omitted as the default) with one of its messages."""
    if experiment is not None:
        return bytes_field(2, experiment)
    if session_start_info is not None:
        return bytes_field(3, session_start_info)
    return bytes_field(4, session_end_info or b"")
