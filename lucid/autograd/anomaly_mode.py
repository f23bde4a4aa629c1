"""Anomaly mode (`detect_anomaly` / `set_detect_anomaly`), PyTorch's contract: every backward
node's outputs, every gradient accumulation and (lucid only) every forward output are checked,
and the first non-finite value raises `AnomalyError` at its birth, with the forward traceback
of the op, its module path, its inputs and the mechanism (see docs/numerics.md). The always-on
tier, the sentinel, lives in lucid._core.sentinel; its names are re-exported here.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

from lucid._core import observers
from lucid._core.grad_mode import _DecoratorContextManager, local_state
from lucid._core.sentinel import (
    BACKWARD_PHASES,
    AnomalyError,
    AnomalyEvent,
    NonFiniteWarning,
    allow_nonfinite,
    birth_during_backward_of,
    birth_of,
    call_columns,
    capture_frames,
    composite_name,
    current_model_call,
    current_module_path,
    current_step,
    format_frames,
    forward_phase,
    holds_nonfinite,
    input_event,
    input_stats,
    is_custom_function,
    is_nonfinite_allowed,
    is_sentinel_enabled,
    is_view_of_any,
    mechanism_of,
    module_scope,
    node_op_name,
    nonfinite_kind,
    optimizer_site,
    parent_chain,
    received_op,
    set_sentinel,
    tensor_stats,
    user_location,
    warn_at_user_line,
)
from lucid._tensor import Tensor

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled",
    "AnomalyError",
    "AnomalyEvent",
    "NonFiniteWarning",
    "set_sentinel",
    "is_sentinel_enabled",
    "module_scope",
    "allow_nonfinite",
]


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on in this thread."""
    return local_state.anomaly_enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode, while on in this thread, checks for NaN."""
    return local_state.anomaly_check_nan


# -------------------------------------------------------------- anomaly mode
class _AnomalyObserver:
    """Records forward tracebacks and checks every value while anomaly mode is on."""

    @staticmethod
    def _sources(node: Any, inputs: tuple, kind: str) -> tuple:
        """The op's inputs as they were before it ran: a tensor it wrote in place counts as a
        source only if it held `kind` before the write (`Node.mark_dirty` read it)."""
        dirty = node.dirty_tensors
        if not dirty:
            return inputs
        held = node.held_before_write
        which = 0 if kind == "nan" else 1
        sources = []
        for value in inputs:
            position = next((i for i, tensor in enumerate(dirty) if value is tensor), None)
            if position is None or (position < len(held) and held[position][which]):
                sources.append(value)
        return tuple(sources)

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        state = local_state
        backward_node = state.backward_node
        if node.is_recording:
            # This method, observers.after_forward and Function.apply sit above the op.
            node.anomaly_info = (capture_frames(4), current_module_path(), backward_node)
        if backward_node is not None or not state.anomaly_check_forward:
            return
        for index, out in enumerate(outputs):
            # A view of an input holds only the input's values: it creates nothing.
            if not isinstance(out, Tensor) or (
                out._base is not None and not any(out is dirty for dirty in node.dirty_tensors)
            ):
                continue
            kind = nonfinite_kind(out._data)
            if kind is None or not self._checks(kind) or is_nonfinite_allowed():
                continue
            sources = self._sources(node, inputs, kind)
            if any(holds_nonfinite(value, kind) for value in sources):
                source = next(value for value in sources if holds_nonfinite(value, kind))
                if isinstance(source, Tensor) and source._base is not None:
                    # A view (a weight's transpose) holds its base's values: judge the base.
                    source = source._base
                if isinstance(source, Tensor) and source._grad_fn is None and kind == "nan":
                    # Born in no op of this graph: in the input batch, in a parameter, or in
                    # an op on tensors that need no grad, which the sentinel recorded.
                    self._raise_received(node, kind, source, inputs)
                continue
            self._raise(node, "forward", kind, index, inputs, state.last_flags,
                        created=True, backward=False, outputs=outputs)  # fmt: skip

    def before_backward(self, node: Any, grad_outputs: tuple) -> None:
        local_state.node_flags = None

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
        for index, grad in enumerate(grad_inputs):
            if not isinstance(grad, Tensor) or is_view_of_any(grad, grad_outputs):
                continue
            kind = nonfinite_kind(grad._data)
            if kind is None or not self._checks(kind):
                continue
            saved = node.saved or ()
            created = not any(holds_nonfinite(value, kind) for value in (*grad_outputs, *saved))
            self._raise(node, "backward", kind, index, (*grad_outputs, *saved),
                        local_state.node_flags, created=created, backward=True)  # fmt: skip

    def after_accumulate(self, node: Any, total: Tensor, parts: tuple) -> None:
        kind = nonfinite_kind(total._data)
        if kind is None or not self._checks(kind):
            return
        created = not any(holds_nonfinite(part, kind) for part in parts if part is not None)
        self._raise(node, "accumulation", kind, 0, parts, local_state.last_flags,
                    created=created, backward=True)  # fmt: skip

    def after_backward_pass(self, leaves: list) -> None:
        check_leaf_gradients(leaves)

    def on_backward_error(self, node: Any, error: BaseException) -> None:
        info = getattr(node, "anomaly_info", None)
        frames = format_frames(info[0]) if info else []
        warn_at_user_line(
            f"Error detected in {node.name()}. Traceback of forward call that caused the "
            "error:\n" + "\n".join(frames)
        )

    @staticmethod
    def _checks(kind: str) -> bool:
        state = local_state
        return state.anomaly_check_nan if kind == "nan" else state.anomaly_check_inf

    def _raise_received(self, node: Any, kind: str, source: Tensor, inputs: tuple) -> None:
        """A non-finite value that the op consumed but no op of this graph created."""
        event = birth_of(source)
        if event is None:
            event = input_event(kind, received_op(source))
        event = dataclasses.replace(
            event,
            inputs=input_stats(inputs),
            note=f"first consumed by {node_op_name(node)}",
        )
        if event.op == "input":
            headline = (f"The input batch holds {kind} values: they arrived with the data, "
                        "not from any op.")  # fmt: skip
        elif not event.created:
            headline = f"The parameter {event.op} holds {kind} values: no op created them."
        else:
            headline = (f"Function '{event.op}' returned {kind} values in its "
                        f"{_ordinal(event.output_index)} output during the forward pass, on "
                        "tensors that need no grad.")  # fmt: skip
        raise AnomalyError(f"{headline}\n{event.describe()}", event)

    def _raise(self, node: Any, phase: str, kind: str, index: int, inputs: tuple,
               flags: list[str] | None, created: bool, backward: bool,
               outputs: tuple = ()) -> None:  # fmt: skip
        info = getattr(node, "anomaly_info", None)
        frames = info[0] if info else capture_frames()
        filename, lineno = user_location(frames)
        columns = call_columns(frames)
        op, inner_op, forward_location = node_op_name(node), None, None
        optimizer = parameter = optimizer_state = None
        mechanism = mechanism_of(flags, kind) if created else None
        module_path = info[1] if info else current_module_path()
        if phase == "forward":
            phase = forward_phase(inputs)
            composite = composite_name(3)
            if composite is not None and composite != op:
                op, inner_op = composite, op
            if phase == "optimizer":
                optimizer, parameter, optimizer_state, owner_path = optimizer_site(inputs, outputs)
                module_path = module_path or owner_path
        elif phase == "backward" and is_custom_function(node):
            # The user's own backward: the line inside it where the value was born.
            birth = birth_during_backward_of(node)
            if birth is not None:
                forward_location = f"{filename}:{lineno}" if filename else None
                filename, lineno, columns = birth.filename, birth.lineno, birth.columns
                # Created in that backward, with the flag that fired there.
                mechanism, created = birth.mechanism, True
        event = AnomalyEvent(
            op=op,
            inner_op=inner_op,
            forward_location=forward_location,
            step=current_step(),
            model_call=current_model_call(),
            optimizer=optimizer,
            parameter=parameter,
            state=optimizer_state,
            node_name=node.name(),
            phase=phase,
            kind=kind,
            mechanism=mechanism,
            created=created,
            filename=filename,
            lineno=lineno,
            module_path=module_path,
            inputs=input_stats(inputs),
            columns=columns,
            output_index=index,
            forward_traceback=format_frames(frames) if backward else [],
            parents=parent_chain(node),
            op_function=getattr(node, "function", None),
            # A forward (or input) failure re-runs from the op's own arguments; a backward
            # one would also need the forward arguments, which the node does not keep.
            op_args=copy_arguments(inputs) if phase not in BACKWARD_PHASES else None,
        )
        ordinal = _ordinal(index)
        if phase == "backward":
            headline = f"Function '{node.name()}' returned {kind} values in its {ordinal} output."
        elif phase == "accumulation":
            headline = (f"The gradients accumulated for an input of '{node.name()}' sum to {kind} "
                        "values.")  # fmt: skip
        else:
            headline = (f"Function '{op}' returned {kind} values in its {ordinal} output "
                        f"{_DURING[phase]}.")  # fmt: skip
        if backward:
            warn_at_user_line(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                "error:\n" + "\n".join(event.forward_traceback)
            )
        raise AnomalyError(f"{headline}\n{event.describe()}", event)


_DURING = {
    "forward": "during the forward pass",
    "loss": "computing the loss, outside the model",
    "eval": "during an eval pass (no grad)",
    "update": "in the update between backward() and optimizer.step()",
    "optimizer": "inside optimizer.step()",
}


def copy_arguments(values: Any) -> tuple:
    """Arguments as they are now, for reproducers: tensors copied to NumPy arrays (also inside
    lists and tuples), other values as given."""
    copied: list[Any] = []
    for value in values:
        if isinstance(value, Tensor):
            copied.append(value._data.copy())
        elif isinstance(value, list | tuple):
            inner = copy_arguments(tuple(value))
            copied.append(list(inner) if isinstance(value, list) else inner)
        else:
            copied.append(value)
    return tuple(copied)


def _ordinal(index: int) -> str:
    # PyTorch writes "0th", "1th", "2th": kept as is for familiarity.
    return f"{index}th"


_OBSERVER = _AnomalyObserver()


def check_leaf_gradients(leaves: list[Tensor]) -> None:
    """Anomaly mode's last check: the leaves' accumulated gradients at the end of backward."""
    observer = _OBSERVER
    for leaf in leaves:
        grad = leaf._grad
        if grad is None:
            continue
        kind = nonfinite_kind(grad._data)
        if kind is not None and observer._checks(kind):
            raise AnomalyError(
                f"The accumulated gradient of a leaf tensor of shape {list(leaf.shape)} holds "
                f"{kind} values at the end of backward().",
                AnomalyEvent(
                    op=None,
                    node_name="lucid::autograd::AccumulateGrad",
                    phase="accumulation",
                    kind=kind,
                    mechanism=None,
                    created=False,
                    inputs=[tensor_stats(grad)],
                ),  # fmt: skip
            )


def _set_anomaly(enabled: bool, check_nan: bool, check_inf: bool, check_forward: bool) -> None:
    state = local_state
    state.anomaly_enabled = enabled
    state.anomaly_check_nan = check_nan
    state.anomaly_check_inf = check_inf
    state.anomaly_check_forward = check_forward
    if enabled and _OBSERVER not in state.observers:
        observers.add_observer(_OBSERVER)
    elif not enabled:
        observers.remove_observer(_OBSERVER)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """PyTorch's `torch.set_anomaly_enabled`: turn anomaly mode on or off for this thread
    (lucid also checks Inf and forward values while it is on)."""
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan))):
        if value.__class__ is not bool:
            raise TypeError(
                f"set_anomaly_enabled(): argument '{name}' (position {position + 1}) must be "
                f"bool, not {type(value).__name__}"
            )
    _set_anomaly(enabled, check_nan, True, True)


def _current() -> tuple[bool, bool, bool, bool]:
    state = local_state
    return (state.anomaly_enabled, state.anomaly_check_nan, state.anomaly_check_inf,
            state.anomaly_check_forward)  # fmt: skip


class detect_anomaly(_DecoratorContextManager):
    """Context manager and decorator that enables anomaly detection for autograd.

    Beyond PyTorch: `check_inf` (PyTorch checks NaN only) and `check_forward` (forward
    outputs are checked too, so a NaN is caught at the op that made it).

    Example::

        with lucid.autograd.detect_anomaly():
            loss = model(x).sum()
            loss.backward()
    """

    def __init__(self, check_nan: bool = True, *, check_inf: bool = True,
                 check_forward: bool = True) -> None:  # fmt: skip
        self.prev = _current()
        self.check_nan = check_nan
        self.check_inf = check_inf
        self.check_forward = check_forward
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> detect_anomaly:  # type: ignore[override]
        self.prev = _current()
        _set_anomaly(True, self.check_nan, self.check_inf, self.check_forward)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _set_anomaly(*self.prev)

    def clone(self) -> detect_anomaly:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan, check_inf=self.check_inf,
                                  check_forward=self.check_forward)  # fmt: skip


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once, and restored on exit when used in `with`."""

    def __init__(self, mode: bool, check_nan: bool = True, *, check_inf: bool = True,
                 check_forward: bool = True) -> None:  # fmt: skip
        self.prev = _current()
        _set_anomaly(bool(mode), check_nan, check_inf, check_forward)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _set_anomaly(*self.prev)
