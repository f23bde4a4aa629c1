"""The exact tier for real torch programs: every op's floating outputs checked, forward and
backward, and the first NaN or Inf named by op, line, module, phase and step.

Two torch modes run together (docs/numerics.md, "The torch backend"):
- a TorchFunctionMode sees each call as the user wrote it (`torch.log`, `F.softmax`, `x / y`,
  `self.fc(x)` reaching `F.linear`): it keeps the call's name, the user's line and the module
  path on a stack, and tags the autograd nodes the call made with them, so that a backward op
  names its forward call;
- a TorchDispatchMode sees every aten op, including those the autograd engine runs for the
  backward formulas, and checks its floating outputs against its inputs.
Global module hooks keep the module stack; global optimizer hooks mark the optimizer's step.
A value is *born* where an output holds a NaN that no input held, or an Inf where no input
held an Inf or a NaN (an Inf the user passed, such as `masked_fill(mask, -inf)`, is an input);
the first birth wins. A non-finite value that no op made was received: in the batch or in a
parameter, named so.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import torch

from lucid._core.sentinel import AnomalyEvent, is_nonfinite_allowed
from lucid.debug.torch import _private

__all__ = ["Instrument", "TorchBirth"]

_TORCH_DIRECTORY = os.path.dirname(torch.__file__) + os.sep
_LUCID_DIRECTORY = os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep
_SKIPPED_MODULES = ("runpy", "contextlib", "functools", "threading", "unittest")
_is_internal: dict[str, bool] = {}

# Dunder methods named by the op a user reads in them.
_OPERATORS = {
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add_",
    "__sub__": "sub",
    "__rsub__": "sub",
    "__isub__": "sub_",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__imul__": "mul_",
    "__truediv__": "div",
    "__rtruediv__": "div",
    "__itruediv__": "div_",
    "__floordiv__": "floor_divide",
    "__rfloordiv__": "floor_divide",
    "__matmul__": "matmul",
    "__rmatmul__": "matmul",
    "__pow__": "pow",
    "__rpow__": "pow",
    "__ipow__": "pow_",
    "__neg__": "neg",
    "__abs__": "abs",
    "__mod__": "remainder",
    "__getitem__": "index",
    "__setitem__": "index_put_",
}
# torch's C namespaces, as the user imports them: (module, prefix of their functions' names).
_NAMESPACES = {
    "torch._C._linalg": ("torch.linalg", "linalg_"),
    "torch._C._special": ("torch.special", "special_"),
    "torch._C._fft": ("torch.fft", "fft_"),
    "torch._C._nn": ("torch.nn.functional", ""),
}
# aten ops whose Inf from finite inputs is a division by zero when an input holds a zero.
_DIVIDING = (
    "div",
    "reciprocal",
    "rsqrt",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "atanh",
    "digamma",
    "lgamma",
    "xlogy",
    "special_xlog1py",
    "logit",
)
_ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"


@dataclass
class TorchBirth(AnomalyEvent):
    """A birth in a torch program: lucid's AnomalyEvent, plus what only torch has."""

    aten_op: str | None = None
    module_type: str | None = None
    output_shape: tuple | None = None
    output_stats: dict[str, Any] = field(default_factory=dict)
    received: bool = False
    # Under torch.distributed: the rank the value was born on, of how many.
    rank: int | None = None
    world_size: int | None = None

    def describe(self) -> str:
        text = super().describe()
        stats = self.output_stats
        if stats:
            text += (
                f"\n  output: shape={list(stats['shape'])} dtype={stats['dtype']} "
                f"device={stats['device']} nan={stats['nan_count']} "
                f"+inf={stats['posinf_count']} -inf={stats['neginf_count']}"
            )
        if self.rank is not None:
            text += f"\n  rank: {self.rank} (of {self.world_size}; every rank agrees)"
        return text

    def headline(self) -> str:
        """torch's anomaly-mode line for a backward birth; its like for the others."""
        ordinal = _ordinal(self.output_index)
        if self.received:
            if self.phase == "input":
                return f"The input batch holds {self.kind} values: they arrived with the data."
            return f"The parameter {self.op} holds {self.kind} values: no op created them."
        if self.phase == "backward" and self.node_name is not None:
            return (
                f"Function '{self.node_name}' returned {self.kind} values in its {ordinal} output."
            )
        if self.op is None:
            where = "the loss code (outside the model)" if self.phase == "loss" else "the step"
            article = "An" if self.kind == "inf" else "A"
            return f"{article} {self.kind} value was made in {where}; no op of the model made it."
        return f"Function '{self.op}' returned {self.kind} values in its {ordinal} output."

    def error(self) -> RuntimeError:
        """torch's anomaly error type and first line, then the report of the birth."""
        return RuntimeError(f"{self.headline()}\n{self.describe()}")


def _ordinal(index: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(index % 10 if index % 100 not in (11, 12, 13) else 0)
    return f"{index}{suffix or 'th'}"


@dataclass
class _Call:
    """One call as the user wrote it, and where it ran."""

    op: str
    qualified: str
    filename: str | None
    lineno: int | None
    module_path: str | None
    module_type: str | None


class _Stop(BaseException):
    """Ends an instrumented run at its first birth (find_birth, detect_anomaly)."""


# ------------------------------------------------------------------ frames
def _internal(filename: str) -> bool:
    internal = _is_internal.get(filename)
    if internal is None:
        name = os.path.splitext(os.path.basename(filename))[0]
        internal = (
            filename.startswith(_TORCH_DIRECTORY)
            or filename.startswith(_LUCID_DIRECTORY)
            or filename.startswith("<frozen")
            or (
                os.path.dirname(filename) == os.path.dirname(os.__file__)
                and name in _SKIPPED_MODULES
            )
        )
        _is_internal[filename] = internal
    return internal


def _user_frame(depth: int = 2) -> tuple[str | None, int | None]:
    """The innermost frame outside torch, lucid and the standard library's runners."""
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _internal(filename):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None, None


def _aten_name(aten: str) -> str:
    """`div` of `aten.div.Tensor`."""
    return aten.split(".")[1] if aten.startswith("aten.") else aten


def _call_name(func: Any) -> tuple[str, str]:
    """(op, qualified name) of a function a TorchFunctionMode sees."""
    name = getattr(func, "__name__", None) or str(func)
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", name)
    op = _OPERATORS.get(name, name)
    module = getattr(func, "__module__", None)
    namespace = _NAMESPACES.get(module)
    if namespace is not None:
        # torch.linalg.vector_norm is torch._C._linalg.linalg_vector_norm underneath.
        module, prefix = namespace
        op = name = name.removeprefix(prefix)
    qualified = getattr(func, "__qualname__", name)
    if qualified.startswith("_TensorBase.") or qualified.startswith("TensorBase."):
        qualified = "Tensor." + qualified.split(".", 1)[1]
    if module and not qualified.startswith("Tensor."):
        module = "torch" if module == "torch._C._VariableFunctions" else module
        if module.startswith("torch.nn.functional"):
            module = "F"
        qualified = f"{module}.{qualified}"
    return op, qualified


# ------------------------------------------------------------------ values
def _floating(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex())


def _nonfinite(tensor: torch.Tensor) -> tuple[bool, bool]:
    """(holds nan, holds inf); one sum when finite: a finite sum means finite elements (an
    inf or a nan makes any sum non-finite), and a sum that overflowed is looked at closer.
    Detached, so a check records no autograd node; 2-byte floats are summed in float32, so
    their finite values rarely overflow the sum."""
    if tensor.numel() == 0:
        return False, False
    values = tensor.detach()
    low_precision = values.dtype in (torch.float16, torch.bfloat16)
    total = values.sum(dtype=torch.float32) if low_precision else values.sum()
    if bool(torch.isfinite(total)):
        return False, False
    return bool(torch.isnan(values).any()), bool(torch.isinf(values).any())


def is_finite(tensor: torch.Tensor) -> bool:
    """Whether every element of `tensor` is finite (one sum when it is)."""
    return not any(_nonfinite(tensor))


_MATCHES = ("bitwise", "approximately", "no")


def replay_match(originals: list, replayed: list, so_far: str = "bitwise") -> str:
    """How a replay's outputs match the run's: 'bitwise', 'approximately' or 'no' (never
    better than `so_far`, the match of the replay's earlier outputs)."""
    if len(originals) != len(replayed):
        return "no"
    result = so_far
    for original, again in zip(originals, replayed):
        original, again = original.detach(), again.detach()
        if original.shape != again.shape:
            return "no"
        if torch.equal(original, again):
            continue
        if not torch.allclose(original, again, equal_nan=True):
            return "no"
        result = max(result, "approximately", key=_MATCHES.index)
    return result


def _held(values: list) -> tuple[bool, bool]:
    nan = inf = False
    for value in values:
        if _floating(value):
            has_nan, has_inf = _nonfinite(value)
        elif isinstance(value, float):
            has_nan, has_inf = value != value, value in (math.inf, -math.inf)
        else:
            continue
        nan, inf = nan or has_nan, inf or has_inf
    return nan, inf


def _holds_zero(values: list) -> bool:
    return any(
        (_floating(value) and value.numel() and bool((value == 0).any()))
        or (isinstance(value, int | float) and value == 0)
        for value in values
    )


def tensor_stats(tensor: torch.Tensor) -> dict[str, Any]:
    """What a report says of a tensor: shape, dtype, finite min/max/mean, nan/inf counts."""
    values = tensor.detach()
    if values.is_complex():
        values = torch.view_as_real(values)
    values = values.to(torch.float64) if values.is_floating_point() else values
    finite = values[torch.isfinite(values)] if values.is_floating_point() else values.flatten()
    floating = values.is_floating_point()
    stats: dict[str, Any] = {
        "shape": tuple(tensor.shape),
        "dtype": str(tensor.dtype).replace("torch.", ""),
        "device": str(tensor.device),
        "nan_count": int(torch.isnan(values).sum()) if floating else 0,
        "inf_count": int(torch.isinf(values).sum()) if floating else 0,
        "posinf_count": int(torch.isposinf(values).sum()) if floating else 0,
        "neginf_count": int(torch.isneginf(values).sum()) if floating else 0,
        "min": None,
        "max": None,
        "mean": None,
    }
    if finite.numel():
        stats["min"] = float(finite.min())
        stats["max"] = float(finite.max())
        stats["mean"] = float(finite.to(torch.float64).mean())
    return stats


def _input_stats(values: list) -> list[dict[str, Any]]:
    stats = []
    for value in values:
        if isinstance(value, torch.Tensor):
            stats.append(tensor_stats(value))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            stats.append({"scalar": value})
    return stats


def _mutated_arguments(func: Any, args: tuple, kwargs: dict) -> tuple[list, list]:
    """The arguments an aten op writes (self of `mul_`, the lists of `_foreach_add_`), and
    those of them whose old values it never reads (`out=`, `copy_`, random fills)."""
    written, unread = [], []
    overwrites = func._schema.name.split("::")[-1] in _OVERWRITING
    for position, argument in enumerate(func._schema.arguments):
        alias = argument.alias_info
        if alias is None or not alias.is_write:
            continue
        if argument.name in kwargs:
            value = kwargs[argument.name]
        elif position < len(args):
            value = args[position]
        else:
            continue
        values = _private.tree_flatten(value)[0]
        written.extend(values)
        if overwrites or argument.is_out:
            unread.extend(values)
    return written, unread


# In-place ops that write every element without reading the old value: that value (often
# uninitialised memory) is no input of theirs.
_OVERWRITING = frozenset((
    "copy_", "fill_", "zero_", "bernoulli_", "normal_", "uniform_", "random_", "exponential_",
    "geometric_", "cauchy_", "log_normal_", "set_", "resize_", "resize_as_",
))  # fmt: skip
# Ops whose output is uninitialised memory, which may hold any bit pattern, NaN included.
_UNINITIALISED = frozenset((
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty",
    "aten::new_empty_strided", "aten::empty_permuted",
))  # fmt: skip


_aliasing: dict[Any, bool] = {}


def _aliases_an_input(func: Any) -> bool:
    """Whether an aten op returns a view of an input and writes nothing (view, t, detach)."""
    aliasing = _aliasing.get(func)
    if aliasing is None:
        schema = func._schema
        aliasing = _aliasing[func] = (
            not schema.is_mutable
            and bool(schema.returns)
            and all(value.alias_info is not None for value in schema.returns)
        )
    return aliasing


# ------------------------------------------------------------------ the modes
class _FunctionMode(_private.TorchFunctionMode):
    def __init__(self, instrument: Instrument) -> None:
        super().__init__()
        self.instrument = instrument

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None):
        kwargs = kwargs or {}
        instrument = self.instrument
        name = getattr(func, "__name__", "")
        if name == "__get__" or name in ("size", "dim", "numel", "__len__", "__repr__", "item"):
            return func(*args, **kwargs)
        if name == "backward" or func is torch.autograd.backward or func is torch.autograd.grad:
            try:
                return func(*args, **kwargs)
            finally:
                instrument.backward_done = True
        names = _call_names.get(func)
        if names is None:
            names = _call_names[func] = _call_name(func)
        return instrument.call(func, names, args, kwargs)


_call_names: dict[Any, tuple[str, str]] = {}


class _DispatchMode(_private.TorchDispatchMode):
    def __init__(self, instrument: Instrument) -> None:
        super().__init__()
        self.instrument = instrument

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None):
        kwargs = kwargs or {}
        instrument = self.instrument
        if (
            instrument.stopped
            or instrument.busy
            or _aliases_an_input(func)
            or func._schema.name in _UNINITIALISED
        ):
            # A view's values are its input's: it can carry a NaN, never make one. Nor can
            # uninitialised memory, whatever its bits.
            return func(*args, **kwargs)
        written = before = None
        if func._schema.is_mutable:
            # An in-place op is judged against its inputs as they were before the write (an
            # output it only overwrites is no input).
            written, unread = _mutated_arguments(func, args, kwargs)
            inputs = [*_private.tree_flatten((args, kwargs))[0]]
            with _private.no_torch_function():
                before = [
                    None
                    if any(value is u for u in unread)
                    else value.clone()
                    if _floating(value) and any(value is w for w in written)
                    else value
                    for value in inputs
                ]
        result = func(*args, **kwargs)
        outputs = written if written else _private.tree_flatten(result)[0]
        # The checks' own ops are none of the program's: the function mode does not see them.
        with _private.no_torch_function():
            for index, output in enumerate(outputs):
                if not _floating(output):
                    continue
                has_nan, has_inf = _nonfinite(output)
                if not (has_nan or (has_inf and instrument.check_inf)):
                    continue
                if before is not None:
                    inputs = before
                else:
                    inputs = [*_private.tree_flatten((args, kwargs))[0]]
                held_nan, held_inf = _held(inputs)
                instrument.on_nonfinite(
                    func,
                    inputs,
                    output,
                    index,
                    has_nan,
                    has_inf,
                    held_nan,
                    held_inf,
                    _private.tree_flatten((args, kwargs)),
                )
                break
        return result


# ------------------------------------------------------------------ the instrument
class Instrument:
    """Runs code under the exact tier; `births` holds what it found, the first first.

    `stop_on_first` ends the run at the first birth (raising out of the instrumented code,
    caught on exit); `raise_on_birth` raises the birth's error to the caller instead (anomaly
    mode); `check_inf=False` watches NaN only; `check_forward=False` only backward values;
    `allow` names modules (dotted paths, or module classes) whose births are intentional;
    `on_birth(birth)` is called at the first birth (it may raise). Inside
    `lucid.debug.allow_nonfinite()` nothing is a birth.
    """

    def __init__(
        self,
        *,
        check_inf: bool = True,
        check_forward: bool = True,
        stop_on_first: bool = True,
        raise_on_birth: bool = False,
        step: int | None = None,
        max_births: int = 8,
        allow: tuple = (),
        on_birth: Any = None,
    ) -> None:
        self.raise_on_birth = raise_on_birth
        self.on_birth = on_birth
        self.allow = tuple(allow)
        # Without a step given (a replay says which), the optimizer steps taken while on.
        self.counts_steps = step is None
        step = 0 if step is None else step
        self.check_inf = check_inf
        self.check_forward = check_forward
        self.stop_on_first = stop_on_first
        self.step = step
        self.max_births = max_births
        self.births: list[TorchBirth] = []
        self.calls: list[_Call] = []
        self.modules: list[torch.nn.Module] = []
        self.tags: dict[Any, _Call] = {}
        self.model: torch.nn.Module | None = None
        self.names: dict[int, str] = {}
        self.optimizer: Any = None
        self.in_closure = 0
        self.backward_done = False
        self.stopped = False
        self.busy = False
        self.thread = threading.get_ident()
        self.allowed_seen = False
        # Where the model was called in the user's code, when a replay calls it from lucid.
        self.model_call_site: tuple | None = None
        self._handles: list = []
        self._modes: list = []

    # -------------------------------------------------------------- entering
    def __enter__(self) -> Instrument:
        self._handles = [
            _private.register_module_forward_pre_hook(self._enter_module),
            _private.register_module_forward_hook(self._leave_module, always_call=True),
            _private.register_optimizer_step_pre_hook(self._enter_optimizer),
            _private.register_optimizer_step_post_hook(self._leave_optimizer),
        ]
        self._modes = [_FunctionMode(self), _DispatchMode(self)]
        for mode in self._modes:
            mode.__enter__()
        _enter_custom_apply(self)
        return self

    def __exit__(self, *exc_info: Any) -> bool:
        if self._modes:
            _leave_custom_apply(self)
        for mode in reversed(self._modes):
            mode.__exit__(None, None, None)
        for handle in self._handles:
            handle.remove()
        self._modes, self._handles = [], []
        self.tags.clear()
        self.calls.clear()
        self.modules.clear()
        return exc_info[0] is _Stop

    def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)` under the instrument; None if the first birth stopped it."""
        with self:
            return fn(*args, **kwargs)

    # -------------------------------------------------------------- modules
    def _enter_module(self, module: torch.nn.Module, args: tuple) -> None:
        if threading.get_ident() != self.thread:
            return  # the hooks are global; the modes, and this instrument, are per thread
        # The checks' own ops are none of the program's: neither mode looks at them.
        self.busy = True
        try:
            with _private.no_torch_function():
                self._note_module(module, args)
        finally:
            self.busy = False
        self.modules.append(module)

    def _note_module(self, module: torch.nn.Module, args: tuple) -> None:
        if not self.modules and self.model is None and _has_parameters(module):
            self.model = module
            self.names = {id(m): name for name, m in module.named_modules()}
            self.backward_done = False
            self._check_received(module, args)
        elif not self.modules and module is self.model:
            self.backward_done = False
            self._check_received(module, args)

    def _leave_module(self, module: torch.nn.Module, args: tuple, output: Any) -> None:
        if threading.get_ident() == self.thread and self.modules and self.modules[-1] is module:
            self.modules.pop()

    def module_here(self) -> tuple[str | None, str | None]:
        """(dotted path, class name) of the innermost running module of the model."""
        for module in reversed(self.modules):
            path = self.names.get(id(module))
            if path is not None:
                return path, type(module).__name__
        return None, None

    def in_model(self) -> bool:
        return any(id(module) in self.names for module in self.modules)

    # -------------------------------------------------------------- optimizers
    def _enter_optimizer(self, optimizer: Any, args: tuple, kwargs: dict) -> Any:
        if threading.get_ident() != self.thread:
            return None
        self.optimizer = optimizer
        # `args` starts with the optimizer itself; a closure follows it or is a keyword.
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
        if closure is None:
            return None

        def watched_closure() -> Any:
            # LBFGS and friends run forward and backward inside step(): those are not its ops.
            self.in_closure += 1
            try:
                return closure()
            finally:
                self.in_closure -= 1

        if "closure" in kwargs:
            return args, {**kwargs, "closure": watched_closure}
        return (args[0], watched_closure, *args[2:]), kwargs

    def _leave_optimizer(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        if threading.get_ident() != self.thread:
            return
        self.optimizer = None
        if self.counts_steps:
            self.step += 1

    # -------------------------------------------------------------- calls and nodes
    def call(self, func: Any, names: tuple[str, str], args: tuple, kwargs: dict) -> Any:
        """Run one call as the user wrote it, with its name, line and module on the stack;
        then tag the autograd nodes it made with them."""
        filename, lineno = _user_frame(3)
        path, module_type = self.module_here()
        call = _Call(names[0], names[1], filename, lineno, path, module_type)
        first = _private.next_sequence_nr()
        self.calls.append(call)
        try:
            result = func(*args, **kwargs)
        finally:
            self.calls.pop()
        if torch.is_grad_enabled():
            self.tag_nodes(result, call, first)
        return result

    def tag_nodes(self, result: Any, call: _Call, first: int) -> None:
        """Tag the autograd nodes `call` made (numbered from `first` on) with it."""
        pending = [
            value.grad_fn
            for value in _private.tree_flatten(result)[0]
            if isinstance(value, torch.Tensor) and value.grad_fn is not None
        ]
        tags = self.tags
        while pending:
            node = pending.pop()
            if node is None or node in tags or _private.sequence_nr(node) < first:
                continue
            tags[node] = call
            pending.extend(next_node for next_node, _ in node.next_functions)

    # -------------------------------------------------------------- births
    def phase(self, node: Any) -> str:
        if node is not None:
            return "accumulation" if node.name() == _ACCUMULATE_GRAD else "backward"
        if self.optimizer is not None and not self.in_closure:
            return "optimizer"
        if self.in_model():
            return "forward" if torch.is_grad_enabled() or self.optimizer else "eval"
        if self.backward_done:
            return "update"
        return "loss" if self.model is not None else "forward"

    def on_nonfinite(
        self,
        func: Any,
        inputs: list,
        output: torch.Tensor,
        index: int,
        has_nan: bool,
        has_inf: bool,
        held_nan: bool,
        held_inf: bool,
        layout: Any = None,
    ) -> None:
        if is_nonfinite_allowed():
            self.allowed_seen = True  # inside lucid.debug.allow_nonfinite(): the user's own
            return
        node = _private.current_autograd_node()
        phase = self.phase(node)
        if phase in ("forward", "loss", "eval", "update") and not self.check_forward:
            return
        if has_nan and not held_nan:
            kind = "nan"
        elif has_inf and not (held_inf or held_nan) and self.check_inf:
            kind = "inf"
        else:
            if not self.births and not self.allowed_seen:
                self._received_at(inputs, "nan" if has_nan else "inf")
            return
        aten = str(func)
        base = _aten_name(aten)
        if kind == "nan":
            mechanism = "invalid operation"
        elif base.rstrip("_") in _DIVIDING and _holds_zero(inputs):
            mechanism = "division by zero"
        else:
            mechanism = "overflow"
        if phase in ("backward", "accumulation"):
            birth = self._backward_birth(node, phase, aten, func)
        else:
            birth = self._forward_birth(phase, aten)
        birth.kind, birth.mechanism = kind, mechanism
        birth.inputs = _input_stats(inputs)
        birth.output_index = index
        birth.output_shape = tuple(output.shape)
        birth.output_stats = tensor_stats(output)
        if phase == "optimizer":
            self._name_optimizer_target(birth, inputs, output)
        if layout is not None:
            # For a reproducer: the aten op and its arguments as they were (copied; an output
            # it only overwrites, as it is now).
            flat, spec = layout
            birth.op_function = func
            copies = [
                value.detach().clone() if isinstance(value, torch.Tensor) else value
                for value in (now if kept is None else kept for kept, now in zip(inputs, flat))
            ]
            birth.op_args = _private.tree_unflatten(copies, spec)
        self._record(birth)

    def _forward_birth(self, phase: str, aten: str) -> TorchBirth:
        if self.calls:
            call = self.calls[-1]
            return self._made(call.op, None, phase, aten, call)
        filename, lineno = _user_frame(3)
        path, module_type = self.module_here()
        site = _Call(_aten_name(aten), aten, filename, lineno, path, module_type)
        return self._made(site.op, None, phase, aten, site)

    def _backward_birth(self, node: Any, phase: str, aten: str, func: Any) -> TorchBirth:
        name = node.name()
        target = node
        if (
            phase == "backward"
            and func is torch.ops.aten.add.Tensor
            and not (name.startswith("Add") or name.startswith("Sub"))
        ):
            # The engine summing two gradients that meet at an input of the next node.
            phase = "accumulation"
            target = next((n for n, _ in node.next_functions if n is not None), node)
        call = self.tags.get(target)
        if target.name() == _ACCUMULATE_GRAD:
            variable = target.variable
            op = self._parameter_name(variable) or f"a leaf of shape {list(variable.shape)}"
            birth = self._made(op, name, phase, aten, None)
        elif call is None:
            birth = self._made(name, name, phase, aten, None)
            birth.note = "the forward call of this node ran before the instrument was on"
        else:
            birth = self._made(call.op, name, phase, aten, call)
        forward_cls = getattr(node, "_forward_cls", None)
        if forward_cls is not None and phase == "backward":
            # A custom Function: the line inside its backward, with the forward call beside.
            birth.op = forward_cls.__name__
            if call is not None and call.filename is not None:
                birth.forward_location = f"{call.filename}:{call.lineno}"
            birth.filename, birth.lineno = _user_frame(4)
        return birth

    def _made(
        self, op: str, node_name: str | None, phase: str, aten: str, call: _Call | None
    ) -> TorchBirth:
        """A birth by `op` (its kind and mechanism filled in by the caller), at the user's
        line and module of `call` (none where the call is unknown)."""
        return TorchBirth(
            op=op,
            node_name=node_name,
            phase=phase,
            kind="",
            mechanism=None,
            created=True,
            filename=None if call is None else call.filename,
            lineno=None if call is None else call.lineno,
            module_path=None if call is None else call.module_path,
            step=self.step,
            inner_op=aten,
            aten_op=aten,
            module_type=None if call is None else call.module_type,
        )

    def _received_at(self, inputs: list, kind: str) -> None:
        """A non-finite value met before any birth: no op made it. Named by where it is."""
        for value in inputs:
            name = self._parameter_name(value) if isinstance(value, torch.Tensor) else None
            if name is not None:
                self._record(self._parameter_birth(name, value, kind))
                return

    def _check_received(self, model: torch.nn.Module, args: tuple) -> None:
        if self.births:
            return
        for value in _private.tree_flatten(args)[0]:
            if _floating(value):
                has_nan, has_inf = _nonfinite(value)
                if has_nan or (has_inf and self.check_inf):
                    filename, lineno = self.model_call_site or _user_frame(3)
                    self._record(
                        TorchBirth(
                            op="input",
                            node_name=None,
                            phase="input",
                            kind="nan" if has_nan else "inf",
                            mechanism=None,
                            created=False,
                            filename=filename,
                            lineno=lineno,
                            step=self.step,
                            received=True,
                            output_shape=tuple(value.shape),
                            output_stats=tensor_stats(value),
                        )
                    )
                    return
        for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
            if _floating(tensor):
                has_nan, has_inf = _nonfinite(tensor)
                if has_nan or (has_inf and self.check_inf):
                    self._record(self._parameter_birth(name, tensor, "nan" if has_nan else "inf"))
                    return

    def _parameter_birth(self, name: str, tensor: torch.Tensor, kind: str) -> TorchBirth:
        owner = name.rpartition(".")[0]
        module = self.model.get_submodule(owner) if self.model is not None else None
        filename, lineno = self.model_call_site or _user_frame(3)
        return TorchBirth(
            op=name,
            node_name=None,
            phase="parameter",
            kind=kind,
            mechanism=None,
            created=False,
            filename=filename,
            lineno=lineno,
            module_path=owner,
            step=self.step,
            received=True,
            module_type=type(module).__name__ if module else None,
            output_shape=tuple(tensor.shape),
            output_stats=tensor_stats(tensor),
        )

    def _parameter_name(self, tensor: torch.Tensor) -> str | None:
        if self.model is None:
            return None
        for name, parameter in [*self.model.named_parameters(), *self.model.named_buffers()]:
            if parameter is tensor:
                return name
        return None

    def _name_optimizer_target(self, birth: TorchBirth, inputs: list, output: Any) -> None:
        optimizer = self.optimizer
        birth.optimizer = type(optimizer).__name__
        birth.filename, birth.lineno = _user_frame(4)
        birth.module_path = birth.module_type = None
        for parameter, state in optimizer.state.items():
            for key, value in state.items():
                if value is output:
                    birth.parameter = self._parameter_name(parameter) or "a parameter"
                    birth.state = key
                    return
        for value in [output, *inputs]:
            name = self._parameter_name(value) if isinstance(value, torch.Tensor) else None
            if name is not None:
                birth.parameter = name
                return

    def _is_allowed(self, birth: TorchBirth) -> bool:
        path = birth.module_path
        if path is None:
            return False
        module = self.model.get_submodule(path) if self.model is not None else None
        for allowed in self.allow:
            if isinstance(allowed, type):
                if isinstance(module, allowed):
                    return True
            elif path == allowed or path.startswith(f"{allowed}."):
                return True
        return False

    def _record(self, birth: TorchBirth) -> None:
        if self.allow and self._is_allowed(birth):
            # What flows on from an intentional value is no received value either.
            self.allowed_seen = True
            return
        if len(self.births) < self.max_births:
            self.births.append(birth)
        if self.on_birth is not None and len(self.births) == 1:
            self.on_birth(birth)
        if self.raise_on_birth:
            raise birth.error()
        if self.stop_on_first and not self.stopped:
            self.stopped = True
            raise _Stop


# Custom Functions' `apply`, which no TorchFunctionMode sees, is wrapped once while any
# instrument is on, in any thread; the wrapper hands each call to its own thread's innermost
# instrument (instruments nest, and threads enter and leave them in any order).
_apply_lock = threading.Lock()
_apply_state: dict[str, Any] = {"users": 0, "original": None}
_thread_instruments = threading.local()


def _instruments_here() -> list:
    stack = getattr(_thread_instruments, "stack", None)
    if stack is None:
        stack = _thread_instruments.stack = []
    return stack


def _custom_apply(cls: type, *args: Any, **kwargs: Any) -> Any:
    original = _apply_state["original"].__func__
    stack = _instruments_here()
    if not stack:
        return original(cls, *args, **kwargs)
    # A custom Function's forward call is a call like any other (named by its class).
    bound = functools.partial(original, cls)
    return stack[-1].call(bound, (cls.__name__, cls.__qualname__), args, kwargs)


def _enter_custom_apply(instrument: Instrument) -> None:
    with _apply_lock:
        if _apply_state["users"] == 0:
            _apply_state["original"] = _private.custom_function_apply()
            _private.set_custom_function_apply(classmethod(_custom_apply))
        _apply_state["users"] += 1
    _instruments_here().append(instrument)


def _leave_custom_apply(instrument: Instrument) -> None:
    stack = _instruments_here()
    if instrument in stack:
        stack.remove(instrument)
    with _apply_lock:
        _apply_state["users"] -= 1
        if _apply_state["users"] == 0:
            _private.set_custom_function_apply(_apply_state["original"])
            _apply_state["original"] = None


def _has_parameters(module: torch.nn.Module) -> bool:
    return next(module.parameters(), None) is not None
