"""`emit_nvtx`: every op, backward node and `record_function` region as an NVTX range, named
as profile events are, through the optional `nvtx` package."""

from __future__ import annotations

import warnings
from typing import Any

from lucid._core import observers
from lucid._core.function import op_name
from lucid.autograd.profiler.recording import _input_shapes, _recorders

_nvtx_warned = False


def _import_nvtx() -> Any:
    """The `nvtx` package, or None (with one warning per process) when it is not installed."""
    global _nvtx_warned
    try:
        import nvtx
    except ImportError:
        if not _nvtx_warned:
            _nvtx_warned = True
            warnings.warn(
                "emit_nvtx: the nvtx package is not installed, so no NVTX ranges are emitted "
                "(pip install nvtx)",
                stacklevel=3,
            )
        return None
    return nvtx


def _nvtx_message(name: str, sequence_nr: int, shapes: list | None) -> str:
    # PyTorch's format: "mul, seq = 12, sizes = [[2, 3], []]".
    message = name if sequence_nr < 0 else f"{name}, seq = {sequence_nr}"
    if shapes is not None:
        message = f"{message}, sizes = {shapes}"
    return message


class emit_nvtx:
    """Make every op, backward node and `record_function` region an NVTX range.

    Ranges are named as profile events are, with the autograd sequence number: a forward op
    that creates a node emits `"mul, seq = 12"` and that node's backward
    `"MulBackward0, seq = 12"`, which is how the two are matched in Nsight or nvprof. With
    `record_shapes` the input shapes follow (`", sizes = [[2, 3], []]"`).

    The ranges go through the `nvtx` package (`pip install nvtx`). Without it, entering
    `emit_nvtx` warns once per process and records nothing.
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = bool(enabled)
        self.record_shapes = bool(record_shapes)
        self.entered = False
        self._nvtx: Any = None
        # Owners of the ranges this emitter pushed, innermost last.
        self._open_owners: list = []

    def __enter__(self) -> emit_nvtx:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        self._nvtx = _import_nvtx()
        if self._nvtx is not None:
            _recorders.active = _recorders.active + (self,)
            observers.add_observer(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._nvtx is None:
            return
        observers.remove_observer(self)
        _recorders.active = tuple(
            recorder for recorder in _recorders.active if recorder is not self
        )
        while self._open_owners:
            self._open_owners.pop()
            self._nvtx.pop_range()
        self._nvtx = None

    def _push(self, owner: Any, message: str) -> None:
        self._open_owners.append(owner)
        self._nvtx.push_range(message)

    def _pop(self, owner: Any) -> None:
        open_owners = self._open_owners
        if not any(open_owner is owner for open_owner in open_owners):
            return
        while open_owners:
            self._nvtx.pop_range()
            if open_owners.pop() is owner:
                return

    def _shapes(self, values: tuple) -> list | None:
        return _input_shapes(values) if self.record_shapes else None

    def before_forward(self, node: Any, inputs: tuple) -> None:
        name = op_name(node.function)
        self._push(node, _nvtx_message(name, node.sequence_nr, self._shapes(inputs)))

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        self._pop(node)

    def on_forward_error(self, node: Any, error: BaseException) -> None:
        self._pop(node)

    def before_backward(self, node: Any, grad_outputs: tuple) -> None:
        message = _nvtx_message(node.name(), node.sequence_nr, self._shapes(grad_outputs))
        self._push(node, message)

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
        self._pop(node)

    def on_backward_error(self, node: Any, error: BaseException) -> None:
        self._pop(node)

    def _open_region(self, region: Any, name: str) -> None:
        self._push(region, name)

    def _close_region(self, region: Any, name: str) -> None:
        self._pop(region)
