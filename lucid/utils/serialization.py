"""Checkpoints without pickle: `save`/`load` in the safetensors format, and PyTorch interop.

A checkpoint is a safetensors file: an 8-byte little-endian header length, a JSON header
giving each tensor's dtype, shape and byte range, then the raw little-endian bytes. Anything
around the tensors (dicts, lists, numbers, strings) is stored as tagged JSON in the header's
``__metadata__``, with tensors referenced by key, so loading never runs code.

complex64 is safetensors' "C64" (interleaved real and imaginary float32 parts, as the
safetensors package writes torch.complex64). The format has no complex128: lucid stores one as
an "F64" tensor with a last dimension of 2 (the `view_as_real` layout, byte for byte) and lists
its key in ``__metadata__["lucid.complex128"]``, so lucid reads it back as complex128 while any
other reader sees the float64 parts.
"""

from __future__ import annotations

import collections
import io
import json
import math
import os
import struct
import zipfile
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

import lucid
from lucid._atomic import write_atomically
from lucid._core.dtypes import when_bfloat16_loads

__all__ = ["save", "load", "from_dlpack", "from_torch_state_dict"]

_FORMAT = "lucid"
_FORMAT_VERSION = "1"
# safetensors' own cap on the header size; a larger value means a corrupted or foreign file.
_MAX_HEADER_BYTES = 100_000_000

_DTYPE_CODES = {
    np.dtype(np.bool_): "BOOL",
    np.dtype(np.uint8): "U8",
    np.dtype(np.int8): "I8",
    np.dtype(np.int16): "I16",
    np.dtype(np.int32): "I32",
    np.dtype(np.int64): "I64",
    np.dtype(np.float16): "F16",
    np.dtype(np.float32): "F32",
    np.dtype(np.float64): "F64",
    np.dtype(np.complex64): "C64",
}
_CODE_DTYPES = {code: dtype for dtype, code in _DTYPE_CODES.items()}


def _register_bfloat16(bfloat16: np.dtype) -> None:
    _DTYPE_CODES[bfloat16] = "BF16"
    _CODE_DTYPES["BF16"] = bfloat16


when_bfloat16_loads(_register_bfloat16)
# safetensors dtypes that have no lucid dtype (yet).
_UNSUPPORTED_CODES = {
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "U16": "uint16",
    "U32": "uint32",
    "U64": "uint64",
}


# ----------------------------------------------------------------------------- save
def _little_endian(array: np.ndarray) -> np.ndarray:
    """The array's bytes in little-endian order, contiguous (bfloat16 by its 16-bit pattern)."""
    if array.dtype.kind == "V":
        return np.ascontiguousarray(array).view(np.uint16).astype("<u2", copy=False)
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))


class _Encoder:
    """Turns an object tree into tagged JSON plus a table of named tensors."""

    def __init__(self, flat_names: bool) -> None:
        self.flat_names = flat_names
        self.tensors: dict[str, np.ndarray] = {}
        # The same Tensor object saved twice (tied weights) is stored once and shared on load.
        self.keys_by_id: dict[int, str] = {}

    def tensor(self, value: lucid.Tensor, name: str | None) -> dict:
        key = self.keys_by_id.get(id(value))
        if key is None:
            key = name if name is not None else f"tensor.{len(self.tensors)}"
            self.keys_by_id[id(value)] = key
            self.tensors[key] = value.detach().numpy()
        return {"type": "tensor", "key": key, "requires_grad": value.requires_grad}

    def encode(self, value: Any, name: str | None = None) -> Any:
        if isinstance(value, lucid.Tensor):
            return self.tensor(value, name if self.flat_names else None)
        if value is None or isinstance(value, (bool, str)):
            return {"type": "value", "value": value}
        if isinstance(value, int):
            return {"type": "int", "value": str(int(value))}
        if isinstance(value, float):
            # Hex keeps floats exact and spells nan/inf, which plain JSON cannot.
            return {"type": "float", "value": float(value).hex()}
        if isinstance(value, lucid.dtype):
            return {"type": "dtype", "value": value.name}
        if isinstance(value, Mapping):
            kind = "ordered_dict" if isinstance(value, collections.OrderedDict) else "dict"
            items = [[self.encode(key), self.encode(item, key)] for key, item in value.items()]
            return {"type": kind, "items": items}
        if isinstance(value, (list, tuple)):
            kind = "list" if isinstance(value, list) else "tuple"
            return {"type": kind, "items": [self.encode(item) for item in value]}
        if isinstance(value, (np.integer, np.floating, np.bool_)):
            return self.encode(value.item())
        raise TypeError(
            f"lucid.save cannot store an object of type {type(value).__name__}: checkpoints "
            "hold tensors, numbers, strings, None, dtypes, and lists, tuples and dicts of them"
        )


def _serialize(obj: Any) -> tuple[bytes, list[np.ndarray]]:
    flat_names = isinstance(obj, Mapping) and all(
        isinstance(key, str) and key != "__metadata__" and isinstance(value, lucid.Tensor)
        for key, value in obj.items()
    )
    encoder = _Encoder(flat_names)
    structure = encoder.encode(obj)
    header: dict[str, Any] = {
        "__metadata__": {
            "format": _FORMAT,
            "lucid.version": _FORMAT_VERSION,
            "lucid.structure": json.dumps(structure, separators=(",", ":")),
        }
    }
    arrays = []
    offset = 0
    complex128_keys = []
    for key, array in encoder.tensors.items():
        little = _little_endian(array)
        code = _DTYPE_CODES.get(array.dtype)
        shape = array.shape
        if array.dtype == np.complex128:
            complex128_keys.append(key)
            code = "F64"
            shape += (2,)
            little = little.reshape(-1).view("<f8")
        header[key] = {
            "dtype": code,
            "shape": list(shape),
            "data_offsets": [offset, offset + little.nbytes],
        }
        offset += little.nbytes
        arrays.append(little)
    if complex128_keys:
        header["__metadata__"]["lucid.complex128"] = json.dumps(
            complex128_keys, separators=(",", ":")
        )
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Pad with spaces so the tensor data starts 8-byte aligned, as safetensors does.
    encoded += b" " * (-len(encoded) % 8)
    return struct.pack("<Q", len(encoded)) + encoded, arrays


def _write(stream: IO[bytes], header: bytes, arrays: list[np.ndarray]) -> None:
    stream.write(header)
    for array in arrays:
        stream.write(memoryview(array.reshape(-1)).cast("B"))


def save(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    """Save tensors, state dicts or optimizer state dicts to `f` (a path or binary file).

    Writing to a path is atomic: the data goes to a temporary file in the same folder,
    which replaces `f` only once fully written and synced, so a crash mid-save leaves any
    previous file intact. The temporary a killed save leaves behind (`.<name>.lucid-tmp-*`)
    is deleted by a later save to the same path once it is 10 minutes old.

    Example::

        lucid.save(model.state_dict(), "model.safetensors")
        model.load_state_dict(lucid.load("model.safetensors"))
    """
    header, arrays = _serialize(obj)
    if not isinstance(f, (str, os.PathLike)):
        _write(f, header, arrays)
        return
    try:
        write_atomically(f, lambda stream: _write(stream, header, arrays))
    except OSError as error:
        if error.filename != os.fsdecode(f):
            raise
        raise _open_failure(os.fsdecode(f), error) from error


def _open_failure(name: str, error: OSError) -> RuntimeError:
    """torch.save's error for a path it cannot open (its C++ writer's words, less the file and
    line of its check); `error` names the path. Unlike torch, a name starting with a dot is fine:
    safetensors derives no archive name from it."""
    if os.path.basename(name) in ("", "."):
        return RuntimeError(f"invalid file name: {name}")
    parent = os.path.dirname(name)
    if parent and not os.path.isdir(parent):
        return RuntimeError(f"Parent directory {parent} does not exist.")
    return RuntimeError(f"open file failed with strerror: {error.strerror}")


def _corrupt(problem: str) -> RuntimeError:
    return RuntimeError(f"lucid.load: {problem}")


def _torch_pickle_kind(content: bytes) -> str | None:
    """How `content` is a PyTorch pickle checkpoint, or None; nothing is unpickled.

    torch.save writes a zip archive holding `<name>/data.pkl` (its default since 1.6), or,
    in its legacy format, a bare pickle stream, whose first opcode (PROTO) is the byte 0x80.
    """
    if len(content) >= 9 and content[8:9] == b"{":
        # a safetensors header: its length's low byte may well be 0x80
        (header_length,) = struct.unpack("<Q", content[:8])
        if header_length <= _MAX_HEADER_BYTES:
            return None
    if content[:1] == b"\x80":
        return "a pickle stream, as torch.save's legacy format writes"
    if content[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, ValueError, OSError):
            return None
        if any(name == "data.pkl" or name.endswith("/data.pkl") for name in names):
            return "torch.save's zip archive, with a data.pkl pickle inside"
    return None


def _torch_pickle_error(kind: str, source: str | None) -> RuntimeError:
    where = "path" if source is None else source
    return _corrupt(
        f"{source or 'the file'} is a PyTorch pickle checkpoint ({kind}), not a lucid "
        "checkpoint. lucid never unpickles, since unpickling can run arbitrary code. Load it "
        "with PyTorch, then convert it:\n"
        f"    state_dict = torch.load({where}, map_location='cpu', weights_only=True)\n"
        "    model.load_state_dict(lucid.utils.from_torch_state_dict(state_dict))\n"
        "For a checkpoint dict, convert the state dict inside it (e.g. checkpoint['model']); "
        "lucid.save(model.state_dict(), path) then stores it in lucid's format."
    )


def _parse_header(content: bytes) -> tuple[dict, dict | None, memoryview]:
    """The tensor entries, lucid's metadata (None for a file written elsewhere), the data."""
    size = len(content)
    if size < 8:
        raise _corrupt(f"not a lucid checkpoint: the file has only {size} bytes (truncated?)")
    (header_length,) = struct.unpack("<Q", content[:8])
    if header_length > _MAX_HEADER_BYTES:
        raise _corrupt(
            f"not a lucid checkpoint: header length {header_length} is implausibly large"
        )
    if 8 + header_length > size:
        raise _corrupt(
            f"header length {header_length} exceeds file size {size}: the file is truncated "
            "or not a lucid checkpoint"
        )
    try:
        header = json.loads(content[8 : 8 + header_length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise _corrupt(f"not a lucid checkpoint: the header is not valid JSON ({error})") from None
    if not isinstance(header, dict):
        raise _corrupt("not a lucid checkpoint: the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if not isinstance(metadata, dict) or metadata.get("format") != _FORMAT:
        # Any other safetensors file (the safetensors package's, from NumPy or torch).
        return header, None, memoryview(content)[8 + header_length :]
    if metadata.get("lucid.version") != _FORMAT_VERSION:
        raise _corrupt(f"unsupported lucid checkpoint version {metadata.get('lucid.version')!r}")
    return header, metadata, memoryview(content)[8 + header_length :]


def _read_tensor(key: str, entry: Any, data: memoryview) -> np.ndarray:
    if not isinstance(entry, dict):
        raise _corrupt(f"corrupted checkpoint: the entry for tensor {key!r} is not an object")
    code = entry.get("dtype")
    if code == "BF16" and lucid.bfloat16.numpy_dtype is None:  # the read loads ml_dtypes
        unsupported = "bfloat16, which needs the ml_dtypes package"
    else:
        unsupported = _UNSUPPORTED_CODES.get(code) if isinstance(code, str) else None
    if unsupported is not None:
        raise RuntimeError(
            f"lucid.load: tensor {key!r} has dtype {code} ({unsupported}), which "
            "lucid does not support: convert it before saving (e.g. to float32)"
        )
    dtype = _CODE_DTYPES.get(code) if isinstance(code, str) else None
    if dtype is None:
        raise _corrupt(
            f"corrupted checkpoint: tensor {key!r} has unknown dtype {entry.get('dtype')!r}"
        )
    shape = entry.get("shape")
    offsets = entry.get("data_offsets")
    if not (
        isinstance(shape, list)
        and all(type(dim) is int and dim >= 0 for dim in shape)
        and isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(offset) is int and offset >= 0 for offset in offsets)
    ):
        raise _corrupt(f"corrupted checkpoint: tensor {key!r} has an invalid shape or offsets")
    begin, end = offsets
    expected = math.prod(shape) * dtype.itemsize
    if end - begin != expected:
        raise _corrupt(
            f"corrupted checkpoint: tensor {key!r} has {end - begin} bytes of data but its "
            f"shape {shape} and dtype need {expected}"
        )
    if end > len(data):
        raise _corrupt(
            f"tensor {key!r} data_offsets [{begin}, {end}] exceed the data section "
            f"({len(data)} bytes): the file is truncated"
        )
    if dtype.kind == "V":
        # bfloat16 has no byte order of its own in NumPy: read its bits as 16-bit integers
        bits = np.frombuffer(data[begin:end], dtype="<u2").astype(np.uint16)
        return bits.view(dtype).reshape(shape)
    little = np.frombuffer(data[begin:end], dtype=dtype.newbyteorder("<"))
    # A native-order copy: writable, and independent of the file's buffer.
    return little.astype(dtype, copy=True).reshape(shape)


def _check_layout(header: dict, size: int) -> None:
    """The safetensors rule (its package refuses a file that breaks it): the tensors' byte
    ranges, in order, cover the data section exactly, with no overlap, gap or trailing byte."""
    position = 0
    for key, entry in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
        begin, end = entry["data_offsets"]
        if begin < position:
            raise _corrupt(
                f"corrupted checkpoint: tensor {key!r} data_offsets [{begin}, {end}] overlap "
                f"another tensor's bytes (which end at {position})"
            )
        if begin > position:
            raise _corrupt(
                f"corrupted checkpoint: bytes [{position}, {begin}] of the data section belong "
                f"to no tensor (tensor {key!r} starts at {begin})"
            )
        position = end
    if position != size:
        raise _corrupt(
            f"corrupted checkpoint: the data section has {size - position} bytes after the "
            "last tensor"
        )


def _complex128_keys(metadata: dict, tensors: dict[str, lucid.Tensor]) -> list[str]:
    """The keys of the float64 (..., 2) tensors that hold complex128 values (see the module
    docstring), checked against the tensors they name."""
    listed = metadata.get("lucid.complex128")
    if listed is None:
        return []
    try:
        keys = json.loads(listed)
    except (TypeError, ValueError, RecursionError):
        keys = None
    if not (isinstance(keys, list) and all(isinstance(key, str) for key in keys)):
        raise _corrupt("corrupted checkpoint: the lucid.complex128 metadata is not a list of keys")
    for key in keys:
        tensor = tensors.get(key)
        if tensor is None or tensor.dtype != lucid.float64 or tensor.shape[-1:] != (2,):
            raise _corrupt(
                f"corrupted checkpoint: tensor {key!r}, listed as complex128, is not a float64 "
                "tensor with a last dimension of 2"
            )
    return keys


class _Decoder:
    def __init__(self, tensors: dict[str, lucid.Tensor]) -> None:
        self.tensors = tensors

    def decode(self, node: Any) -> Any:
        if not isinstance(node, dict) or "type" not in node:
            raise _corrupt("corrupted checkpoint: malformed structure in the metadata")
        kind = node["type"]
        try:
            if kind == "tensor":
                tensor = self.tensors[node["key"]]
                if node.get("requires_grad") is True and not tensor.requires_grad:
                    tensor.requires_grad_(True)
                return tensor
            if kind == "value" and (
                node["value"] is None or isinstance(node["value"], (bool, str))
            ):
                return node["value"]
            if kind == "int":
                return int(node["value"])
            if kind == "float":
                return float.fromhex(node["value"])
            if kind == "dtype" and isinstance(getattr(lucid, node["value"], None), lucid.dtype):
                return getattr(lucid, node["value"])
            if kind in ("dict", "ordered_dict"):
                result = collections.OrderedDict() if kind == "ordered_dict" else {}
                for key, value in node["items"]:
                    result[self.decode(key)] = self.decode(value)
                return result
            if kind == "list":
                return [self.decode(item) for item in node["items"]]
            if kind == "tuple":
                return tuple(self.decode(item) for item in node["items"])
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise _corrupt(
                f"corrupted checkpoint: bad {kind!r} entry in the metadata ({error!r})"
            ) from None
        raise _corrupt(f"corrupted checkpoint: unknown structure type {kind!r}")


def load(
    f: str | os.PathLike | IO[bytes], map_location: Any = None, *, weights_only: bool = True
) -> Any:
    """Load what `save` wrote, or any safetensors file (as a dict of tensors by name).

    Raises RuntimeError for truncated, corrupted or foreign files, and for safetensors
    dtypes lucid has no dtype for (float8, unsigned ints above 8 bits; bfloat16 without
    the ml_dtypes extra).

    Checkpoints hold only data, so loading never executes code whatever `weights_only` says;
    `map_location` and `weights_only` are accepted for PyTorch compatibility (lucid tensors
    live on the CPU). A PyTorch `.pt`/`.pth` file is a pickle, which lucid never unpickles:
    load it with `torch.load` and convert it with `lucid.utils.from_torch_state_dict`.
    """
    if isinstance(f, (str, os.PathLike)):
        source = repr(os.fspath(f))
        with open(f, "rb") as stream:
            content = stream.read()
    else:
        name = getattr(f, "name", None)
        source = repr(name) if isinstance(name, str) else None
        content = f.read()
    content = bytes(content)
    kind = _torch_pickle_kind(content)
    if kind is not None:
        raise _torch_pickle_error(kind, source)
    header, metadata, data = _parse_header(content)
    tensors = {
        key: lucid.from_numpy(_read_tensor(key, entry, data)) for key, entry in header.items()
    }
    _check_layout(header, len(data))
    if metadata is None:
        # A file lucid did not write: its tensors, by name, in the file's order.
        return tensors
    for key in _complex128_keys(metadata, tensors):
        # the parts are contiguous, so the complex128 view of the pairs is a plain array
        parts = tensors[key].numpy()
        tensors[key] = lucid.from_numpy(parts.view(np.complex128)[..., 0])
    try:
        structure = json.loads(metadata["lucid.structure"])
    except (KeyError, TypeError, ValueError, RecursionError):
        raise _corrupt(
            "corrupted checkpoint: the lucid structure metadata is missing or not JSON"
        ) from None
    try:
        return _Decoder(tensors).decode(structure)
    except RecursionError:
        raise _corrupt(
            "corrupted checkpoint: the structure metadata is nested too deeply"
        ) from None


# ---------------------------------------------------------------------------- interop
class _CapsuleHolder:
    """Presents a bare DLPack capsule (legacy `to_dlpack` output) through `__dlpack__`."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU: NumPy rejects any other device anyway


def from_dlpack(ext_tensor: Any) -> lucid.Tensor:
    """A lucid tensor sharing memory with `ext_tensor` (an object with `__dlpack__`, or a
    DLPack capsule), e.g. a NumPy array or a CPU PyTorch tensor."""
    if not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _CapsuleHolder(ext_tensor)
    return lucid.from_numpy(np.from_dlpack(ext_tensor))


def from_torch_state_dict(state_dict: Mapping[str, Any]) -> collections.OrderedDict:
    """Copy a PyTorch state dict's tensors into lucid tensors, for `Module.load_state_dict`.

    Works by duck typing (anything with `.detach().cpu().numpy()`), so torch is not imported;
    bfloat16 tensors stay bfloat16 (through float32, which holds each of their values
    exactly). Other values pass through unchanged.
    """
    result = collections.OrderedDict()
    for key, value in state_dict.items():
        if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "numpy"):
            value = value.detach().cpu()
            if str(getattr(value, "dtype", "")) == "torch.bfloat16":
                widened = value.float().numpy()
                value = lucid.from_numpy(widened.astype(lucid.bfloat16.numpy_dtype or np.float32))
            else:
                value = lucid.from_numpy(np.array(value.numpy(), copy=True))
        elif isinstance(value, np.ndarray):
            value = lucid.from_numpy(value.copy())
        result[key] = value
    return result
