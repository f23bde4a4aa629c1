"""Reproducer bundles of torch births: the aten op that made the value and its arguments, in
one safetensors file (no pickle), which `python -m lucid.debug repro` re-runs."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import torch

from lucid.debug.torch._instrument import Instrument, TorchBirth

__all__ = ["BUNDLE_KEY", "save_torch_repro", "show_torch_repro"]

BUNDLE_KEY = "lucid_torch_repro"


class _Unrepresentable(ValueError):
    pass


def _encode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        name = f"argument.{len(tensors)}"
        tensors[name] = value.detach().contiguous()
        return {"tensor": name}
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}  # JSON has no nan or inf
    if isinstance(value, list | tuple):
        return {
            "list" if isinstance(value, list) else "tuple": [
                _encode(item, tensors) for item in value
            ]
        }
    if isinstance(value, dict):
        return {"dict": {key: _encode(item, tensors) for key, item in value.items()}}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.memory_format | torch.layout):
        return {"torch": str(value).removeprefix("torch.")}
    raise _Unrepresentable(f"an argument of type {type(value).__name__}")


def _decode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if not isinstance(value, dict):
        return value
    ((kind, item),) = value.items()
    if kind == "tensor":
        return tensors[item]
    if kind == "float":
        return float(item)
    if kind in ("list", "tuple"):
        items = [_decode(entry, tensors) for entry in item]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {key: _decode(entry, tensors) for key, entry in item.items()}
    if kind == "dtype":
        return getattr(torch, item)
    if kind == "device":
        return torch.device(item)
    return getattr(torch, item)


def save_torch_repro(birth: TorchBirth, path: str | os.PathLike, report: str) -> str:
    """Write the bundle atomically (a temporary file renamed over `path`); its path."""
    from safetensors.torch import save_file

    if birth.op_function is None or birth.op_args is None:
        raise ValueError("the birth kept no op to re-run (it was received, not made)")
    tensors: dict[str, torch.Tensor] = {}
    try:
        arguments = _encode(birth.op_args, tensors)
    except _Unrepresentable as error:
        raise ValueError(f"the op's arguments cannot be saved: {error}") from None
    metadata = {
        BUNDLE_KEY: "1",
        "op": str(birth.op_function),
        "arguments": json.dumps(arguments),
        "report": report,
    }
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=directory, suffix=".safetensors.tmp")
    os.close(descriptor)
    try:
        save_file(tensors, temporary, metadata=metadata)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return path


def _aten_op(name: str) -> Any:
    namespace, op, overload = name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload)


def show_torch_repro(path: str, report: Any) -> int:
    """Re-run the bundle's op under the instrument: 1 when it makes the value again, else 2."""
    from safetensors import safe_open

    with safe_open(path, framework="pt") as bundle:
        metadata = bundle.metadata() or {}
        tensors = {name: bundle.get_tensor(name) for name in bundle.keys()}
    report(metadata.get("report", ""))
    args, kwargs = _decode(json.loads(metadata["arguments"]), tensors)
    instrument = Instrument(stop_on_first=False)
    with instrument:
        _aten_op(metadata["op"])(*args, **kwargs)
    if instrument.births:
        birth = instrument.births[0]
        report(
            f"reproduced: {metadata['op']} made {birth.kind} values again from the saved arguments"
        )
        return 1
    report(f"not reproduced: {metadata['op']} stayed finite on the saved arguments")
    return 2
