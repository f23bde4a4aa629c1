"""NaNDetector's events: what a NaN/Inf event or a flagged gradient says, and how an event is
made from what the detector saw (a sentinel birth, a module output, the batch, the loss)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lucid._core.sentinel import holds_nonfinite, is_sentinel_enabled, nonfinite_kind, step_text
from lucid._tensor import Tensor
from lucid.autograd.anomaly_mode import copy_arguments


@dataclass
class NaNEvent:
    """Where and when a NaN or Inf first appeared during training.

    `batch_idx` (also `step`) is the training step: the optimizer steps taken before it (a
    skipped GradScaler step counts), the model's calls where no optimizer is in use, or what
    `set_batch` / `lucid.debug.set_step` said; `model_call` is the model's own call count
    when it differs (a model called twice per iteration). `layer_name` is the dotted
    `named_modules()` path of the module whose forward produced the value ("" for the model
    itself); `module_type` is its class name, or None when the value was made outside the
    model (in the loss, the training loop, or by a backward op the model did not record).
    `phase` is 'forward', 'loss', 'backward', 'accumulation' (a gradient sum), 'update' (user
    code between backward() and the optimizer step), 'optimizer' (inside optimizer.step();
    `optimizer`, `parameter` and `state` then name the optimizer class, the parameter it was
    updating and the state it wrote), 'eval' (a model call under no_grad), 'input' or
    'parameter'. `op` and `location` (the user's file:line) come from the sentinel's record of
    the op that created the value. A value no op created is `received`: `op` is then 'input'
    (the batch, phase 'input', no module) or the parameter's dotted name (phase 'parameter',
    `layer_name` the module that owns it), and the location is the model call. `op` is None
    when the sentinel is off. `stats` describes the non-finite output: `nan_count`,
    `inf_count`, and `min`, `max`, `mean` over its finite values.

    The fields without a repr serve reproducers: `op_function` (the op's Function class) and
    `op_args` (its inputs at the birth, tensors copied to NumPy arrays), `batch` (the model
    call's positional arguments, copied), `rng_state` (lucid's RNG state at the start of the
    step, as `lucid.get_rng_state()` gives it) and `model` (a weak reference to the model).
    """

    batch_idx: int
    layer_name: str
    module_type: str | None
    kind: str
    op: str | None
    location: str | None
    is_backward: bool
    input_has_nan: bool
    input_has_inf: bool
    output_has_nan: bool
    output_has_inf: bool
    output_shape: tuple[int, ...] | None
    stats: dict[str, Any]
    mechanism: str | None
    phase: str
    op_function: Any = field(default=None, repr=False, compare=False)
    op_args: tuple | None = field(default=None, repr=False, compare=False)
    batch: tuple | None = field(default=None, repr=False, compare=False)
    rng_state: np.ndarray | None = field(default=None, repr=False, compare=False)
    model: Any = field(default=None, repr=False, compare=False)
    received: bool = False
    model_call: int | None = None
    optimizer: str | None = None
    parameter: str | None = None
    state: str | None = None
    # Set by lucid.debug.torch: the aten op that made the value, the autograd node a
    # backward birth ran under, the forward call of a custom Function's backward, and
    # whether the replay that found it reproduced the run ('bitwise', 'approximately', 'no').
    aten_op: str | None = None
    node: str | None = None
    forward_location: str | None = None
    replayed: str | None = None
    rank: int | None = None

    @property
    def step(self) -> int:
        """The training step: `batch_idx` by its other name."""
        return self.batch_idx

    @property
    def where(self) -> str:
        """The module in words: `'encoder.1' (Linear)`, the model itself, or outside it."""
        if self.module_type is None:
            if self.phase == "optimizer":
                return f"{self.optimizer}.step()" if self.optimizer else "the optimizer's step"
            if self.phase == "loss":
                return "the loss, outside the model"
            return "the training loop, outside the model"
        if self.layer_name == "":
            return f"the model itself ({self.module_type})"
        return f"'{self.layer_name}' ({self.module_type})"

    def headline(self) -> str:
        """One line: kind, step, module, op, line."""
        step = step_text(self.batch_idx, self.model_call)
        if self.received:
            if self.phase == "input":
                source = "the input batch"
            else:
                source = f"the parameter '{self.op}' of {self.where}"
            text = f"{self.kind} at step {step} received in {source}, no op made it"
        else:
            text = f"{self.kind} at step {step} in {self.where}, {self.phase}"
            if self.op is not None:
                text += f", made by op {self.op}"
            if self.phase == "optimizer" and self.parameter:
                text += f" updating {self.parameter}"
                if self.state:
                    text += f" (state {self.state})"
        if self.location is not None:
            text += f" at {self.location}"
        return text

    def __str__(self) -> str:
        lines = [f"NaNDetector: {self.headline()}"]
        if self.mechanism:
            lines.append(f"  how: {self.mechanism}")
        stats = self.stats
        shape = "?" if self.output_shape is None else list(self.output_shape)
        lines.append(
            f"  {'batch' if self.op == 'input' and self.received else 'output'}: shape {shape}, "
            f"nan {stats.get('nan_count', 0)}, inf {stats.get('inf_count', 0)}, finite "
            f"min {_number(stats.get('min'))} max {_number(stats.get('max'))} "
            f"mean {_number(stats.get('mean'))}"
        )
        inputs = [name for name, held in (("nan", self.input_has_nan),
                                          ("inf", self.input_has_inf)) if held]  # fmt: skip
        lines.append(f"  inputs held: {', '.join(inputs) if inputs else 'only finite values'}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-safe values (no reproducer fields)."""
        return {
            "event": "nan",
            "batch_idx": self.batch_idx,
            "layer_name": self.layer_name,
            "module_type": self.module_type,
            "kind": self.kind,
            "op": self.op,
            "location": self.location,
            "is_backward": self.is_backward,
            "input_has_nan": self.input_has_nan,
            "input_has_inf": self.input_has_inf,
            "output_has_nan": self.output_has_nan,
            "output_has_inf": self.output_has_inf,
            "output_shape": None if self.output_shape is None else list(self.output_shape),
            "stats": {key: _json_number(value) for key, value in self.stats.items()},
            "mechanism": self.mechanism,
            "phase": self.phase,
            "received": self.received,
            "model_call": self.model_call,
            "optimizer": self.optimizer,
            "parameter": self.parameter,
            "state": self.state,
            "aten_op": self.aten_op,
            "node": self.node,
            "forward_location": self.forward_location,
            "replayed": self.replayed,
            "rank": self.rank,
        }


@dataclass
class GradEvent:
    """A parameter gradient that `check_grad_norms()` flagged.

    `reason` is 'nan' or 'inf' (a non-finite gradient) or 'large' (an L2 norm above
    `threshold`, the detector's `grad_norm_warn`).
    """

    batch_idx: int
    param_name: str
    layer_name: str
    module_type: str
    norm: float
    reason: str
    threshold: float | None

    def __str__(self) -> str:
        if self.reason == "large":
            why = f"has norm {self.norm:.4g} > {self.threshold:g}"
        else:
            why = f"holds {self.reason} values"
        return f"NaNDetector: batch {self.batch_idx}: gradient of '{self.param_name}' {why}"

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-safe values, as the `log_path` file gets it."""
        return {
            "event": "grad",
            "batch_idx": self.batch_idx,
            "param_name": self.param_name,
            "layer_name": self.layer_name,
            "module_type": self.module_type,
            "norm": _json_number(self.norm),
            "reason": self.reason,
            "threshold": self.threshold,
        }


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def _json_number(value: Any) -> Any:
    # JSON has no nan/inf; a count or a finite statistic passes through.
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _array_stats(array: np.ndarray) -> dict[str, Any]:
    stats: dict[str, Any] = {"nan_count": 0, "inf_count": 0, "min": None, "max": None,
                             "mean": None}  # fmt: skip
    if array.size == 0:
        return stats
    if array.dtype.kind not in "fc":
        stats.update(min=array.min().item(), max=array.max().item(),
                     mean=float(array.mean()))  # fmt: skip
        return stats
    finite_mask = np.isfinite(array)
    stats["nan_count"] = int(np.isnan(array).sum())
    stats["inf_count"] = int(np.isinf(array).sum())
    finite = array[finite_mask]
    if finite.size:
        # complex values: the range of their magnitudes
        wide = np.abs(finite) if finite.dtype.kind == "c" else finite.astype(np.float64)
        stats.update(min=float(wide.min()), max=float(wide.max()), mean=float(wide.mean()))
    return stats


def _tensors_in(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, Tensor)]
    return []


def _encoded_rng_state(state: dict) -> np.ndarray:
    """`state` as `lucid.get_rng_state()` gives it: the JSON of the bit generator's state."""
    return np.frombuffer(json.dumps(state).encode(), dtype=np.uint8).copy()


def _birth_mechanism(birth: Any) -> str:
    mechanism = birth.mechanism or "no floating-point flag recorded"
    return f"{mechanism}: created by {birth.op} from inputs without {birth.kind}"


# ------------------------------------------------------------------ making events
# `step` holds the fields every event of one step shares: batch_idx and the reproducer fields
# (batch, rng_state, model), from NaNDetector._step_fields.
def _event_from_birth(
    birth: Any,
    node: Any,
    inputs: tuple,
    output: Tensor,
    path: str | None,
    module_type: str | None,
    is_backward: bool,
    location: str | None,
    step: dict[str, Any],
) -> NaNEvent:
    """The event of an op the sentinel saw create the value (forward or backward)."""
    array = output._data
    op_function = getattr(node, "function", None)
    # A gradient sum has no single op to re-run; every other birth re-runs from its inputs.
    op_args = None if birth.phase == "accumulation" else copy_arguments(inputs)
    birth.op_function, birth.op_args = op_function, op_args
    return NaNEvent(
        layer_name=path if path is not None else "",
        module_type=module_type,
        kind=birth.kind,
        op=birth.op,
        location=location or birth.location,
        is_backward=is_backward,
        input_has_nan=holds_nonfinite(tuple(inputs), "nan"),
        input_has_inf=holds_nonfinite(tuple(inputs), "inf"),
        output_has_nan=bool(np.isnan(array).any()),
        output_has_inf=bool(np.isinf(array).any()),
        output_shape=tuple(array.shape),
        stats=_array_stats(array),
        mechanism=_birth_mechanism(birth) + (", outside the model" if module_type is None else ""),
        phase=birth.phase,
        op_function=op_function,
        op_args=op_args,
        optimizer=birth.optimizer,
        parameter=birth.parameter,
        state=birth.state,
        **step,
    )


def _event_from_output(
    path: str,
    module: Any,
    args: tuple,
    output: Any,
    kind: str,
    location: str | None,
    step: dict[str, Any],
) -> NaNEvent:
    """The event of a watched module whose output turned non-finite with no op to blame."""
    tensors = _tensors_in(output)
    array = next((t._data for t in tensors if nonfinite_kind(t._data) is not None),
                 tensors[0]._data)  # fmt: skip
    input_has = holds_nonfinite(tuple(args), kind)
    params = [name for name, param in module.named_parameters(recurse=False)
              if holds_nonfinite(param, kind)]  # fmt: skip
    if params:
        # Received, not born: named by the parameter and the module that owns it, no op.
        name = f"{path}.{params[0]}" if path else params[0]
        return _event_received(name, path, module, kind, params[0], output, location, step)
    if input_has:
        mechanism = (f"its input already held {kind}, made where no op raised a "
                     "floating-point flag")  # fmt: skip
    elif not is_sentinel_enabled():
        mechanism = "the sentinel is off (LUCID_SENTINEL=0), so the op is not known"
    else:
        mechanism = (f"no op raised a floating-point flag: the {kind} was written as a "
                     "value (a constant, masked_fill, a buffer)")  # fmt: skip
    return NaNEvent(
        layer_name=path,
        module_type=type(module).__name__,
        kind=kind,
        op=None,
        location=location,
        is_backward=False,
        input_has_nan=holds_nonfinite(tuple(args), "nan"),
        input_has_inf=holds_nonfinite(tuple(args), "inf"),
        output_has_nan=bool(np.isnan(array).any()),
        output_has_inf=bool(np.isinf(array).any()),
        output_shape=tuple(array.shape),
        stats=_array_stats(array),
        mechanism=mechanism,
        phase="forward",
        **step,
    )


def _event_received(name: str, path: str, module: Any, kind: str, own_name: str, output: Any,
                    location: str | None, step: dict[str, Any]) -> NaNEvent:  # fmt: skip
    """The event of a parameter that already held `kind`: op is its dotted name, the layer is
    the module that owns it."""
    array = dict(module.named_parameters(recurse=False))[own_name]._data
    mechanism = f"the parameter {name} already held {kind} before the step: no op created it"
    event = _received(name, kind, array, False, output, location, mechanism, step)
    event.layer_name, event.module_type, event.phase = path, type(module).__name__, "parameter"
    return event


def _event_from_input(
    path: str, module: Any, output: Any, pending: tuple, step: dict[str, Any]
) -> NaNEvent:
    """The event of a non-finite batch: received, not born (op `input`, no module), at the
    line where it entered the model."""
    kind, batch_array, location = pending
    mechanism = f"the batch passed to the model holds {kind}"
    return _received("input", kind, batch_array, True, output, location, mechanism, step)


def _received(op: str, kind: str, array: np.ndarray, is_input: bool, output: Any,
              location: str | None, mechanism: str, step: dict[str, Any]) -> NaNEvent:  # fmt: skip
    """A value no op created: `array` (the batch or the parameter) is what the stats describe."""
    return NaNEvent(
        layer_name="",
        module_type=None,
        kind=kind,
        op=op,
        location=location,
        is_backward=False,
        input_has_nan=is_input and bool(np.isnan(array).any()),
        input_has_inf=is_input and bool(np.isinf(array).any()),
        output_has_nan=holds_nonfinite(tuple(_tensors_in(output)), "nan"),
        output_has_inf=holds_nonfinite(tuple(_tensors_in(output)), "inf"),
        output_shape=tuple(array.shape),
        stats=_array_stats(array),
        mechanism=mechanism,
        phase="input" if is_input else "parameter",
        received=True,
        **step,
    )


def _event_from_loss(loss: Tensor, outside_birth: tuple | None, step: dict[str, Any]) -> NaNEvent:
    """A non-finite loss that no event of the model explains (train_with_nan_guard)."""
    array = loss._data
    kind = "nan" if np.isnan(array).any() else "inf"
    op = location = op_function = op_args = None
    mechanism = "the model's output was finite: the loss computation made it"
    if outside_birth is not None:
        birth, node, inputs, _ = outside_birth
        op, location = birth.op, birth.location
        op_function, op_args = getattr(node, "function", None), copy_arguments(inputs)
        mechanism = f"{_birth_mechanism(birth)}, outside the model"
    return NaNEvent(
        layer_name="",
        module_type=None,
        kind=kind,
        op=op,
        location=location,
        is_backward=False,
        input_has_nan=False,
        input_has_inf=False,
        output_has_nan=bool(np.isnan(array).any()),
        output_has_inf=bool(np.isinf(array).any()),
        output_shape=tuple(array.shape),
        stats=_array_stats(array),
        mechanism=mechanism,
        phase="forward",
        op_function=op_function,
        op_args=op_args,
        **step,
    )
