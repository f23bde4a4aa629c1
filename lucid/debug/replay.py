"""Replay: re-run a training step whose checks fired, under full checks, to name the first
non-finite value in execution order (docs/numerics.md, "The tiers").

`replay_step` runs a step cheaply (the sentinel only); when a check fires it puts back the
state saved before the step (RNG, and model, gradients and optimizer when given) and runs the
same step again under `detect_anomaly()`, forward and backward, with Inf checked too.
"""

from __future__ import annotations

import math
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

import lucid
from lucid._core import observers
from lucid._core.sentinel import (
    AnomalyError,
    NonFiniteWarning,
    add_birth_listener,
    remove_birth_listener,
    restore_step_counts,
    save_step_counts,
)
from lucid._tensor import Tensor
from lucid.autograd.anomaly_mode import copy_arguments
from lucid.debug.repro import BackwardCall, ReplayResult, _quiet_detect_anomaly

if TYPE_CHECKING:
    from lucid.nn import Module
    from lucid.optim import Optimizer

__all__ = ["replay_step"]


# ------------------------------------------------------------------ full checks
class _ForwardArgsRecorder:
    """An autograd observer that keeps each recorded op's forward arguments until its
    backward has run, so that a backward failure can be re-run from them.

    It costs memory like keeping the step's activations once more, which is why only the
    replay and the debugging CLI use it.
    """

    def __init__(self) -> None:
        # Weak keys: a node that is never back-propagated takes its arguments with it.
        self.kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.running: tuple[Any, tuple] | None = None

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        if node.is_recording:
            versions = tuple(v._version if isinstance(v, Tensor) else None for v in inputs)
            self.kept[node] = (inputs, versions)

    def before_backward(self, node: Any, grad_outputs: tuple) -> None:
        self.running = (node, grad_outputs)

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
        # Runs after anomaly mode's check of the same node (observers run in the order they
        # were added), so the culprit is still `running` when that check raises.
        self.kept.pop(node, None)
        self.running = None

    def complete(self, event: Any) -> None:
        """Give a backward event without `op_args` a `BackwardCall` when the node's forward
        arguments are known and unchanged since its forward."""
        if event.phase != "backward" or event.op_args is not None or self.running is None:
            return
        node, grad_outputs = self.running
        kept = self.kept.get(node)
        if kept is None or node.function is not event.op_function:
            return
        inputs, versions = kept
        for value, version in zip(inputs, versions):
            if isinstance(value, Tensor) and value._version != version:
                return  # modified in place since the forward: its old values are gone
        event.op_args = BackwardCall(
            forward_args=copy_arguments(inputs),
            requires_grad=tuple(node.needs_input_grad),
            grad_outputs=copy_arguments(grad_outputs),
        )


@contextmanager
def _full_checks() -> Iterator[_ForwardArgsRecorder]:
    """Anomaly mode with every check on, plus the forward-argument recorder.

    An `AnomalyError` leaving the block carries `op_args` also for a backward failure.
    """
    recorder = _ForwardArgsRecorder()
    with _quiet_detect_anomaly(), observers.observing(recorder):
        try:
            yield recorder
        except BaseException as error:
            anomaly = _anomaly_in(error)
            if anomaly is not None:
                recorder.complete(anomaly.event)
            raise


def _anomaly_in(error: BaseException | None) -> AnomalyError | None:
    """The AnomalyError itself, or one that code wrapped in another exception."""
    seen = 0
    while error is not None and seen < 16:
        if isinstance(error, AnomalyError):
            return error
        error = error.__cause__ or error.__context__
        seen += 1
    return None


# ---------------------------------------------------------------------- checks
def _nonfinite_kind(array: np.ndarray) -> str | None:
    """'nan' or 'inf' when a floating array holds one, else None (one BLAS pass when finite)."""
    if array.dtype.kind not in "fc" or array.size == 0:
        return None
    with np.errstate(all="ignore"):
        flat = array.reshape(-1)
        total = np.dot(flat, flat) if flat.dtype.itemsize >= 4 else np.sum(flat)
        if np.isfinite(total):
            return None
        if np.isnan(array).any():
            return "nan"
        return "inf" if np.isinf(array).any() else None


def _value_kind(value: Any, depth: int = 0) -> str | None:
    """The non-finite kind in a step's return value: a tensor, array, number or a container."""
    if isinstance(value, Tensor):
        return _nonfinite_kind(value.numpy(force=True))
    if isinstance(value, np.ndarray | np.generic):
        return _nonfinite_kind(np.asarray(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return "inf" if math.isinf(value) else None
    if depth < 2 and isinstance(value, list | tuple | dict):
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            kind = _value_kind(item, depth + 1)
            if kind is not None:
                return kind
    return None


def _named_parameters(model: Module | None, optimizer: Optimizer | None) -> list:
    named: list[tuple[str, Tensor]] = []
    seen: set[int] = set()
    if model is not None:
        for name, param in model.named_parameters():
            seen.add(id(param))
            named.append((name, param))
    if optimizer is not None:
        index = 0
        for group in optimizer.param_groups:
            for param in group["params"]:
                if id(param) not in seen:
                    seen.add(id(param))
                    named.append((f"optimizer parameter {index}", param))
                index += 1
    return named


def _parameter_checks(named: list) -> list[str]:
    for name, param in named:
        kind = _nonfinite_kind(param.numpy(force=True))
        if kind is not None:
            return [f"parameter {name!r} holds {kind} after the step"]
        grad = param.grad
        if grad is not None:
            kind = _nonfinite_kind(grad.numpy(force=True))
            if kind is not None:
                return [f"the gradient of {name!r} holds {kind} after the step"]
    return []


# -------------------------------------------------------------------- snapshot
def _cloned(value: Any) -> Any:
    """A copy of an optimizer state dict whose tensors share no memory with the original."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {key: _cloned(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        copied = [_cloned(item) for item in value]
        return copied if isinstance(value, list) else tuple(copied)
    return value


class _Snapshot:
    """What a step may change, saved before it: RNG, batch, parameters, gradients and
    optimizer state."""

    def __init__(self, batch: tuple, model: Module | None, optimizer: Optimizer | None,
                 named: list) -> None:  # fmt: skip
        self.rng_state = lucid.get_rng_state()
        self.step_counts = save_step_counts()
        self.batch = [
            (value, value._version, value.numpy(force=True).copy())
            for value in batch
            if isinstance(value, Tensor)
        ]
        self.model = model
        self.optimizer = optimizer
        self.model_state = (
            None
            if model is None
            else {
                name: value.numpy(force=True).copy() for name, value in model.state_dict().items()
            }
        )
        self.grads = [
            (param, None if param.grad is None else param.grad.numpy(force=True).copy())
            for _, param in named
        ]
        self.optimizer_state = None if optimizer is None else _cloned(optimizer.state_dict())

    def batch_arrays(self, batch: tuple) -> tuple:
        """The batch as it was before the step: tensors as NumPy arrays, other items as given."""
        saved = iter(array for _, _, array in self.batch)
        return tuple(next(saved) if isinstance(value, Tensor) else value for value in batch)

    def restore(self) -> None:
        lucid.set_rng_state(self.rng_state)
        restore_step_counts(self.step_counts)
        with lucid.no_grad():
            for tensor, version, array in self.batch:
                if tensor._version != version:
                    tensor.copy_(lucid.from_numpy(array))
            if self.model is not None:
                self.model.load_state_dict(
                    {name: lucid.from_numpy(array) for name, array in self.model_state.items()}
                )
        for param, grad in self.grads:
            param.grad = None if grad is None else lucid.from_numpy(grad.copy())
        if self.optimizer is not None:
            # load_state_dict copies, so the snapshot can be restored again.
            self.optimizer.load_state_dict(self.optimizer_state)


# ---------------------------------------------------------------------- replay
def _first_run(step_fn: Callable, batch: tuple, named: list) -> tuple[list[str], Any]:
    """Run the step with the cheap checks; which of them fired, and the step's value."""
    checks: list[str] = []
    warned: list[str] = []
    value = None
    show = warnings.showwarning

    def intercept(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        # The sentinel's warning becomes part of the replay's report; others show as usual.
        if issubclass(category, NonFiniteWarning):
            warned.append("the sentinel warned: " + str(message).splitlines()[0])
        else:
            show(message, category, *args, **kwargs)

    thread = threading.get_ident()
    births: list[Any] = []

    def on_birth(event: Any, node: Any, inputs: tuple, output: Any) -> None:
        # The sentinel saw an op create a NaN/Inf; it warns about each site only once per
        # process, so its births, not its warnings, tell every step apart.
        if not births and threading.get_ident() == thread:
            births.append(event)

    # Swapping the display function, not `catch_warnings`, leaves the warning filters and
    # their once-per-location registries as they are.
    warnings.showwarning = intercept
    add_birth_listener(on_birth)
    try:
        value = step_fn(*batch)
    except (AnomalyError, NonFiniteWarning) as error:
        checks.append(f"{type(error).__name__} raised: " + str(error).splitlines()[0])
    finally:
        remove_birth_listener(on_birth)
        warnings.showwarning = show
    if births:
        birth = births[0]
        checks.append(f"the sentinel saw {birth.kind} born in {birth.op} ({birth.phase}) at "
                      f"{birth.location}")  # fmt: skip
    else:
        checks.extend(warned[:1])
    kind = _value_kind(value)
    if kind is not None:
        checks.append(f"step_fn returned a {kind} value")
    if not checks:
        checks.extend(_parameter_checks(named))
    return checks, value


def replay_step(
    step_fn: Callable,
    *batch: Any,
    model: Module | None = None,
    optimizer: Optimizer | None = None,
    step: int | None = None,
) -> ReplayResult:
    """Run `step_fn(*batch)`; when a check fires, replay it under full checks.

    The first run costs what the step costs, plus a copy of the batch and, when `model` or
    `optimizer` is given, of their state and gradients. A check fires when the step raises
    `AnomalyError`, the sentinel records an op creating a NaN or Inf or warns
    (`NonFiniteWarning`, unless the warning filters drop it), `step_fn` returns a NaN or Inf
    (a loss, or a tuple or dict holding one), or a parameter or gradient of `model` /
    `optimizer`, or the gradient of a batch tensor, is non-finite afterwards. Then the saved
    state is put back and the step runs again under `detect_anomaly()` (forward and
    backward, NaN and Inf) to name the first non-finite value in execution order. After a
    fired step, RNG, batch, parameters, gradients and optimizer state are back as they were
    before it, so the caller decides what comes next; a `NonFiniteWarning` carrying the
    report is also issued, so a loop that ignores the result does not go on silently.
    Warnings of the replay itself are not shown (the first run showed them). `step` only
    labels the report.

    Pass `model` and `optimizer` whenever `step_fn` updates them: without them the replay
    starts from the parameters the failed step left behind. Not thread-safe: it swaps
    `warnings.showwarning` while the step runs.

    Example::

        for step, (x, y) in enumerate(loader):
            result = lucid.debug.replay_step(train_step, x, y, model=model,
                                             optimizer=optimizer, step=step)
            if not result.clean:
                print(result)   # op, line, module, step, inputs, mechanism
                result.save_repro("nan_repro.safetensors")
                break
    """
    named = _named_parameters(model, optimizer)
    # Batch tensors that require grad are leaves too: their gradients are checked as well.
    named += [(f"batch argument {index}", value) for index, value in enumerate(batch)
              if isinstance(value, Tensor) and value.requires_grad]  # fmt: skip
    snapshot = _Snapshot(batch, model, optimizer, named)
    checks, value = _first_run(step_fn, batch, named)
    if not checks:
        return ReplayResult("clean", step, value=value)

    snapshot.restore()
    error = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with _full_checks():
                step_fn(*batch)
    except AnomalyError as caught:
        error = caught
        # The replay's own model calls are not the run's: the step is what was replayed.
        error.event.model_call = None
        if step is not None:
            error.event.step = step
    finally:
        snapshot.restore()
    result = ReplayResult(
        status="not_reproduced" if error is None else "reproduced",
        step=step,
        checks=checks,
        event=None if error is None else error.event,
        error=error,
        value=value,
        batch=snapshot.batch_arrays(batch),
        rng_state=snapshot.rng_state.numpy(),
        model=model,
        optimizer=optimizer,
    )
    warnings.warn(NonFiniteWarning(result.report(), result.event), stacklevel=2)
    return result
