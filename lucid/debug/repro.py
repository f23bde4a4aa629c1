"""Reproducer bundles: one file that holds everything needed to see a NaN or Inf again.

A bundle is a single lucid checkpoint (safetensors, written atomically by `lucid.save`, read
without pickle by `lucid.load`) holding a JSON-style metadata record (op, op class, kind,
phase, mechanism, location with its source line, module, step, input statistics, versions),
the batch, the RNG state, the model and optimizer state dicts, and the culprit op's
arguments. `load_repro` re-runs the culprit op on those arguments under anomaly mode and
re-raises its `AnomalyError`; `read_repro` returns the contents to restore a whole step.

What a bundle is made from is defined here too: `ReplayResult` (what `replay_step` returns)
and `BackwardCall` (a backward failure's arguments), so that the replay imports this module
and never the other way round.
"""

from __future__ import annotations

import importlib
import linecache
import os
import platform
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

import numpy as np

import lucid
from lucid._core.sentinel import AnomalyError
from lucid._tensor import Tensor
from lucid.autograd import Function
from lucid.autograd.anomaly_mode import detect_anomaly
from lucid.debug.report import _root_cause_report

__all__ = ["BackwardCall", "ReplayResult", "ReproBundle", "load_repro", "read_repro", "save_repro"]

_FORMAT = "lucid.repro"
_FORMAT_VERSION = 1
# Tags for the argument values a checkpoint cannot hold as they are.
_TAG = "__lucid_repro__"


# ------------------------------------------------- what a bundle is made from
class BackwardCall(NamedTuple):
    """`op_args` of a backward failure: what re-running it takes.

    The op is run forward on `forward_args` (tensors as NumPy arrays; `requires_grad` per
    argument) and its outputs are back-propagated with `grad_outputs` (arrays, None where an
    output got no gradient). Only a replay or `python -m lucid.debug` fills it: they keep each
    op's forward arguments until its backward has run.
    """

    forward_args: tuple
    requires_grad: tuple
    grad_outputs: tuple


@dataclass
class ReplayResult:
    """What `replay_step` found (defined here, beside `save_repro`, which writes it).

    `status` is `'clean'` (no check fired), `'reproduced'` (the replay named the first
    non-finite value: `event`, `error`) or `'not_reproduced'` (a check fired but the replay
    under full checks was clean). `checks` says which checks fired on the first run, `value`
    is what `step_fn` returned then. `batch` (NumPy copies, as before the step), `rng_state`,
    `model` and `optimizer` are what `save_repro` needs.
    """

    status: str
    step: int | None
    checks: list[str] = field(default_factory=list)
    event: Any = None
    error: AnomalyError | None = field(default=None, repr=False)
    value: Any = field(default=None, repr=False)
    batch: tuple | None = field(default=None, repr=False)
    rng_state: np.ndarray | None = field(default=None, repr=False)
    model: Any = field(default=None, repr=False)
    optimizer: Any = field(default=None, repr=False)

    @property
    def clean(self) -> bool:
        """True when no check fired on the step."""
        return self.status == "clean"

    def save_repro(self, path: Any) -> str:
        """Write a reproducer bundle of the replayed failure (see `lucid.debug.save_repro`)."""
        return save_repro(self, path)

    def report(self) -> str:
        """What the replay found, as the `NonFiniteWarning` of `replay_step` says it."""
        step = "" if self.step is None else f" {self.step}"
        if self.status == "clean":
            return f"replay_step: step{step} ran clean."
        fired = "\n".join(f"  - {check}" for check in self.checks)
        if self.status == "not_reproduced":
            return (
                f"replay_step: step{step} produced non-finite values:\n{fired}\n"
                "but the replay under full checks (forward and backward, NaN and Inf) was "
                "clean: the problem did not reproduce. Something the replay does not restore "
                "changed between the runs: randomness outside lucid's generator, data loading, "
                "state kept outside the model and optimizer, or the step's own side effects."
            )
        model = self.model
        return (
            f"replay_step: step{step} produced non-finite values:\n{fired}\n"
            "The replay under full checks names the first non-finite value in execution "
            "order:\n" + _root_cause_report(self.event, model)
        )

    def __str__(self) -> str:
        return self.report()


def _quiet_detect_anomaly() -> detect_anomaly:
    """Anomaly mode with every check on, as a bundle's op and a replayed step run under."""
    # Its "has been enabled" warning is for users who turn it on themselves.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return detect_anomaly(check_nan=True, check_inf=True, check_forward=True)


# ------------------------------------------------------------------- arguments
def _encode(value: Any, top: bool) -> Any:
    """An op argument as checkpoint data. Top-level arrays were tensors (anomaly mode copies
    each tensor argument to NumPy); nested arrays are the op's own NumPy arguments."""
    if isinstance(value, Tensor):
        value = value.numpy(force=True)
    if isinstance(value, np.ndarray):
        tensor = lucid.from_numpy(np.array(value, copy=True))
        return tensor if top else {_TAG: "ndarray", "value": tensor}
    if value is None or isinstance(value, bool | int | float | str | lucid.dtype):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, slice):
        return {_TAG: "slice", "value": [_encode(part, False) for part in
                                          (value.start, value.stop, value.step)]}  # fmt: skip
    if value is Ellipsis:
        return {_TAG: "ellipsis"}
    if isinstance(value, np.dtype):
        return {_TAG: "numpy_dtype", "value": value.str}
    if isinstance(value, list | tuple):
        items = [_encode(item, False) for item in value]
        return items if isinstance(value, list) else tuple(items)
    raise TypeError(f"an op argument of type {type(value).__name__} cannot be stored")


def _decode(value: Any, top: bool) -> Any:
    if isinstance(value, Tensor):
        return lucid.from_numpy(value.numpy().copy()) if top else value.numpy()
    if isinstance(value, dict):
        tag = value.get(_TAG)
        if tag == "ndarray" and isinstance(value.get("value"), Tensor):
            return value["value"].numpy()
        if tag == "slice" and isinstance(value.get("value"), list) and len(value["value"]) == 3:
            return slice(*(_decode(part, False) for part in value["value"]))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "numpy_dtype" and isinstance(value.get("value"), str):
            return np.dtype(value["value"])
        raise ValueError(f"unknown op argument record {value!r}")
    if isinstance(value, list):
        return [_decode(item, False) for item in value]
    if isinstance(value, tuple):
        return tuple(_decode(item, False) for item in value)
    return value


def _op_call(op_args: Any) -> tuple[dict | None, str | None]:
    """The stored call of the culprit op, or None and the reason there is none."""
    if op_args is None:
        return None, "the event carries no op arguments"
    try:
        if isinstance(op_args, BackwardCall):
            grads = tuple(None if g is None else _encode(g, True) for g in op_args.grad_outputs)
            return {
                "call": "backward",
                "args": [_encode(arg, True) for arg in op_args.forward_args],
                "requires_grad": [bool(flag) for flag in op_args.requires_grad],
                "grad_outputs": list(grads),
            }, None
        return {"call": "forward", "args": [_encode(arg, True) for arg in op_args]}, None
    except TypeError as error:
        return None, str(error)


# -------------------------------------------------------------------- metadata
def _plain(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-style data (numbers, strings, lists, string-keyed dicts)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if depth < 8 and isinstance(value, Mapping):
        return {str(key): _plain(item, depth + 1) for key, item in value.items()}
    if depth < 8 and isinstance(value, list | tuple):
        return [_plain(item, depth + 1) for item in value]
    return str(value)


def _class_path(function: Any) -> str | None:
    if not isinstance(function, type):
        return None
    return f"{function.__module__}.{function.__qualname__}"


def _location(event: Any) -> tuple[str | None, str | None]:
    location = getattr(event, "location", None)
    if not location:
        return None, None
    filename, _, lineno = str(location).rpartition(":")
    source = linecache.getline(filename, int(lineno)).strip() if lineno.isdigit() else ""
    return str(location), source or None


def _module_type(model: Any, path: str | None) -> str | None:
    if model is None or path is None:
        return None
    try:
        return type(model.get_submodule(path)).__name__
    except AttributeError:
        return None


def _metadata(event: Any, op_call: dict | None, missing: str | None, model: Any) -> dict:
    location, source = _location(event)
    step = getattr(event, "step", None)
    if step is None:
        step = getattr(event, "batch_idx", None)
    module = getattr(event, "module_path", None)
    if module is None:
        module = getattr(event, "layer_name", None)
    is_backward = getattr(event, "is_backward", None)
    phase = getattr(event, "phase", None)
    if phase is None and is_backward is not None:
        phase = "backward" if is_backward else "forward"
    return _plain(
        {
            "op": getattr(event, "op", None),
            "op_class": _class_path(getattr(event, "op_function", None)),
            "node_name": getattr(event, "node_name", None),
            "kind": getattr(event, "kind", None),
            "phase": phase,
            "mechanism": getattr(event, "mechanism", None),
            "created": getattr(event, "created", None),
            "location": location,
            "source_line": source,
            "module": module,
            "module_type": getattr(event, "module_type", None) or _module_type(model, module),
            "step": step,
            "inputs": getattr(event, "inputs", None),
            "stats": getattr(event, "stats", None),
            "op_call": None if op_call is None else op_call["call"],
            "op_call_missing": missing,
            "lucid_version": lucid.__version__,
            "numpy_version": np.__version__,
            "python_version": platform.python_version(),
        }
    )


# ------------------------------------------------------------------------ save
def _batch(batch: Any) -> list | None:
    if batch is None:
        return None
    if isinstance(batch, Tensor | np.ndarray):
        batch = (batch,)
    stored = []
    for item in batch:
        try:
            stored.append(_encode(item, True))
        except TypeError:
            stored.append(None)  # e.g. a string label list the checkpoint cannot hold
    return stored


def _model(value: Any) -> Any:
    return value() if isinstance(value, weakref.ref) else value


def save_repro(event: Any, path: str | os.PathLike, *, model: Any = None,
               optimizer: Any = None, batch: Any = None, rng_state: Any = None) -> str:  # fmt: skip
    """Write a reproducer bundle for `event` to `path`; returns the absolute path.

    `event` is an `AnomalyEvent` (from `AnomalyError.event`), a `NaNEvent` or a
    `ReplayResult`; its `batch`, `rng_state` and `model` are used when it has them, and the
    keyword arguments override or add them (`model` an `nn.Module`, `optimizer` an
    `Optimizer`, `batch` a tensor or a sequence of them, `rng_state` from
    `lucid.get_rng_state()`). The file is a lucid checkpoint (safetensors, no pickle),
    written atomically; missing parent folders are created. The culprit op's arguments are
    stored when the event has them (`op_args`); a backward failure has them only from
    `replay_step` or `python -m lucid.debug`, which keep each op's forward arguments.

    Example::

        try:
            loss.backward()
        except lucid.autograd.AnomalyError as error:
            lucid.debug.save_repro(error.event, "nan.safetensors", model=model)
    """
    if isinstance(event, ReplayResult):
        if event.event is None:
            raise ValueError(
                f"save_repro: the replay found nothing to reproduce (status {event.status!r})"
            )
        source = event
        event = event.event
        batch = source.batch if batch is None else batch
        rng_state = source.rng_state if rng_state is None else rng_state
        model = source.model if model is None else model
        optimizer = source.optimizer if optimizer is None else optimizer
    batch = getattr(event, "batch", None) if batch is None else batch
    rng_state = getattr(event, "rng_state", None) if rng_state is None else rng_state
    model = _model(getattr(event, "model", None) if model is None else model)
    op_call, missing = _op_call(getattr(event, "op_args", None))
    if rng_state is not None:
        array = rng_state.numpy() if isinstance(rng_state, Tensor) else rng_state
        rng_state = lucid.from_numpy(np.array(array, dtype=np.uint8))
    bundle = {
        "format": _FORMAT,
        "version": _FORMAT_VERSION,
        "metadata": _metadata(event, op_call, missing, model),
        "batch": _batch(batch),
        "rng_state": rng_state,
        "model": None if model is None else model.state_dict(),
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "op_call": op_call,
    }
    path = os.path.abspath(os.fspath(path))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lucid.save(bundle, path)
    return path


# ------------------------------------------------------------------------ load
@dataclass
class ReproBundle:
    """The contents of a reproducer bundle (see `read_repro`).

    `batch` is a tuple of tensors (None where an item could not be stored), `rng_state` a
    uint8 tensor for `lucid.set_rng_state`, `model_state` / `optimizer_state` state dicts.
    """

    path: str
    metadata: dict
    batch: tuple | None = field(repr=False)
    rng_state: Tensor | None = field(repr=False)
    model_state: Any = field(repr=False)
    optimizer_state: Any = field(repr=False)
    op_call: dict | None = field(repr=False)

    def restore(self, model: Any = None, optimizer: Any = None) -> None:
        """Put the RNG state, and the given model's and optimizer's state, back as saved."""
        if self.rng_state is not None:
            lucid.set_rng_state(self.rng_state)
        for target, state, name in ((model, self.model_state, "model"),
                                    (optimizer, self.optimizer_state, "optimizer")):  # fmt: skip
            if target is not None:
                if state is None:
                    raise ValueError(f"the reproducer bundle {self.path} holds no {name} state")
                target.load_state_dict(state)

    def reexecute(self, function: type | None = None) -> NoReturn:
        """Re-run the culprit op on its saved arguments under anomaly mode; raises its
        `AnomalyError`, or RuntimeError when the bundle holds no call or it runs clean.

        Only op classes of the `lucid` package are imported from the bundle's record; pass
        `function` to re-run an op defined elsewhere (a custom `autograd.Function`).
        """
        metadata = self.metadata
        if self.op_call is None:
            raise RuntimeError(
                f"lucid.debug.load_repro: {self.path} holds no arguments for the culprit op "
                f"({metadata.get('op_call_missing')}); its batch, RNG and model/optimizer "
                "state can still be restored with read_repro(path).restore(model, optimizer)"
            )
        if function is None:
            function = _lucid_function(metadata.get("op_class"), self.path)
        call = self.op_call
        try:
            args = tuple(_decode(arg, True) for arg in call["args"])
            grads = tuple(_decode(grad, True) for grad in call.get("grad_outputs") or ())
            requires_grad = call.get("requires_grad") or ()
        except (KeyError, TypeError, ValueError) as error:
            raise _corrupt(self.path, f"malformed op call record ({error})") from None
        try:
            with warnings.catch_warnings(), _quiet_detect_anomaly():
                # Anomaly mode's "Error detected in ..." warning repeats the error raised.
                warnings.filterwarnings("ignore", message="Error detected in ")
                if call["call"] == "backward":
                    _run_backward(function, args, requires_grad, grads)
                else:
                    function.apply(*args)
        except AnomalyError as error:
            error.add_note(
                f"reproduced by lucid.debug.load_repro from {self.path}; recorded: "
                f"{metadata.get('kind')} in {metadata.get('op')} ({metadata.get('phase')}) at "
                f"{metadata.get('location')}"
            )
            raise
        raise RuntimeError(
            f"lucid.debug.load_repro: {function.__name__} ran on the saved arguments without "
            f"a non-finite value: {self.path} does not reproduce the recorded "
            f"{metadata.get('kind')} ({metadata.get('phase')}). An in-place op overwrites its "
            "input, so its saved argument already holds the result; restore the step with "
            "read_repro(path).restore(model, optimizer) and replay it instead."
        )

    def __str__(self) -> str:
        meta = self.metadata
        lines = [f"lucid reproducer {self.path}"]
        for key in ("op", "op_class", "kind", "phase", "mechanism", "location", "source_line",
                    "module", "module_type", "step", "op_call", "lucid_version"):  # fmt: skip
            if meta.get(key) is not None:
                lines.append(f"  {key}: {meta[key]}")
        return "\n".join(lines)


def _run_backward(function: Any, args: tuple, requires_grad: Any, grads: tuple) -> None:
    leaves = []
    for position, arg in enumerate(args):
        wants = position < len(requires_grad) and requires_grad[position]
        if isinstance(arg, Tensor) and wants and arg.is_floating_point():
            arg.requires_grad_(True)
        leaves.append(arg)
    outputs = function.apply(*leaves)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    roots, seeds = [], []
    for output, grad in zip(outputs, grads):
        if isinstance(output, Tensor) and output.requires_grad and grad is not None:
            roots.append(output)
            seeds.append(grad)
    if roots:
        lucid.autograd.backward(roots, seeds)


def _lucid_function(path: Any, bundle: str) -> Any:
    """The Function class at `path`, imported only from lucid's own modules."""
    if not isinstance(path, str) or "." not in path:
        raise RuntimeError(f"lucid.debug.load_repro: {bundle} records no op class to re-run")
    module_name, _, name = path.rpartition(".")
    parts = module_name.split(".")
    # Never an import outside lucid, nor of a module that runs when imported (__main__).
    if parts[0] != "lucid" or any(not part.isidentifier() or part.startswith("__")
                                  for part in parts):  # fmt: skip
        raise RuntimeError(
            f"lucid.debug.load_repro: the culprit op {path} is not one of lucid's ops and "
            "bundles never import other code; import it yourself and pass it: "
            "read_repro(path).reexecute(function=TheFunction)"
        )
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        raise RuntimeError(
            f"lucid.debug.load_repro: {bundle} names the op {path}, which this lucid "
            f"({lucid.__version__}) does not have"
        ) from None
    if not (isinstance(function, type) and issubclass(function, Function)):
        raise RuntimeError(f"lucid.debug.load_repro: {path} is not an autograd Function")
    return function


def _corrupt(path: str, problem: str) -> RuntimeError:
    return RuntimeError(f"lucid.debug: {path} is not a usable reproducer bundle: {problem}")


def read_repro(path: str | os.PathLike) -> ReproBundle:
    """Read a bundle written by `save_repro`; RuntimeError when it is truncated or corrupt."""
    path = os.fspath(path)
    try:
        content = lucid.load(path)
    except RuntimeError as error:
        raise _corrupt(path, str(error)) from None
    if not isinstance(content, dict) or content.get("format") != _FORMAT:
        raise _corrupt(path, "it is a lucid checkpoint but not a reproducer bundle")
    if content.get("version") != _FORMAT_VERSION:
        raise _corrupt(path, f"unsupported bundle version {content.get('version')!r}")
    metadata = content.get("metadata")
    op_call = content.get("op_call")
    batch = content.get("batch")
    rng_state = content.get("rng_state")
    call_is_valid = op_call is None or (
        isinstance(op_call, dict)
        and isinstance(op_call.get("args"), list)
        and op_call.get("call") in ("forward", "backward")
    )
    if (
        not isinstance(metadata, dict)
        or not call_is_valid
        or not (batch is None or isinstance(batch, list))
        or not (rng_state is None or isinstance(rng_state, Tensor))
    ):
        raise _corrupt(path, "its records are malformed")
    return ReproBundle(
        path=path,
        metadata=metadata,
        batch=None if batch is None else tuple(batch),
        rng_state=rng_state,
        model_state=content.get("model"),
        optimizer_state=content.get("optimizer"),
        op_call=op_call,
    )


def load_repro(path: str | os.PathLike, *, function: type | None = None) -> NoReturn:
    """Re-run the culprit op of the bundle at `path` under anomaly mode and re-raise its
    `AnomalyError` (see `ReproBundle.reexecute`; `read_repro` gives the bundle's contents).

    Example::

        lucid.debug.load_repro("nan.safetensors")   # AnomalyError: Function 'Div' ...
    """
    read_repro(path).reexecute(function)
