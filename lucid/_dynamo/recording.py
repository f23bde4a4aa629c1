"""lucid.compile: record a call once, then replay its ops without the Python around them.

The first call with a new set of guards runs eagerly while a `_Recorder` writes down, in
order, what the call did to tensors:

  (_OP, function, args, kwargs, outputs, site, modes)   an op's `Function.apply` (forward,
      or an update under no_grad), called directly by the step's own code, with the grad
      and inference modes it ran in
  (_CALL, callable, args, kwargs, outputs)       what runs as it is on every replay: an engine
      pass (`backward`, `autograd.grad`), an optimizer's `step` or `zero_grad`
  (_SET_GRAD, tensor, value)                     `t.grad = value`
  (_READ_GRAD, tensor, output)                   reading `t.grad`
  (_ENTER, module, args, kwargs, frames) / (_LEAVE, output)   an outermost module call:
      the step a report names is counted there, and the batch enters at its user line

Arguments are templates: a `_Slot` stands for a tensor of the call (a step argument, an op's
output, a gradient read); everything else, tensors that existed before the call (parameters,
buffers, constants) included, is kept as it is. A later call whose guards match replays the
entries: each op's `apply` runs on the slots' tensors, so the graph, the gradients and every
check are eager's (bitwise equal), while the step's Python (module calls, functional wrappers,
argument parsing) does not run. The NaN tiers see the recorded op's user line and module.

What a recording cannot hold breaks the graph, as torch.compile's graph breaks: a host read
of tensor data (`item`, `bool`, `tolist`, `numpy`, printing), an op whose output shape depends
on the data, a module with hooks, a tensor assigned to a module attribute, a tensor made
outside lucid's ops during the call (`lucid.tensor`, `zeros`, `randn`: a factory's value is
not recorded), or anything observing ops (the profiler, anomaly mode, autocast,
saved-tensor hooks). The call that broke ran eagerly, as do later calls with its guards, with
a one-time warning saying where and why; `fullgraph=True` raises instead. The call's own
Python does not run on a replay, as under `jax.jit`: Python numbers it reads from outside its
arguments (a global, a closure) are recorded as constants (pass a value that changes as an
argument), and side effects that are not on tensors happen on the recording call only.
"""

from __future__ import annotations

import functools
import sys
import warnings
import weakref
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import numpy as np

from lucid import nn
from lucid._core import engine, observers
from lucid._core import function as function_module
from lucid._core.dtypes import complex_use
from lucid._core.function import HOLOMORPHIC, LEAN_DISPATCH
from lucid._core.grad_mode import local_state
from lucid._core.graph import AccumulateGrad, Node
from lucid._core.sentinel import capture_frames, site_location
from lucid._core.tensor import TensorBase, _wrap
from lucid._dynamo import flat
from lucid._dynamo.exc import Unsupported
from lucid.nn.modules import module as _module_code

__all__ = ["CompiledFunction", "OptimizedModule", "compiled", "reset"]

_OP, _CALL, _SET_GRAD, _READ_GRAD, _ENTER, _LEAVE, _LEAN_OP, _LEAN_BACKWARD = range(8)

# torch.compile's default recompile limit per function (torch._dynamo.config
# recompile_limit): past it, new guard sets run eagerly.
_CACHE_LIMIT = 8
_getrefcount = sys.getrefcount
_new_node = object.__new__


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class _Sequence:
    """A list or tuple argument holding tensors (cat's, stack's)."""

    __slots__ = ("kind", "items")

    def __init__(self, kind: type, items: tuple) -> None:
        self.kind = kind
        self.items = items


def _resolve(template: Any, values: list) -> Any:
    kind = template.__class__
    if kind is _Slot:
        return values[template.index]
    if kind is _Sequence:
        return template.kind(_resolve(item, values) for item in template.items)
    return template


class _Recording:
    """One guard set's tape, or the reason it breaks (then the call runs eagerly)."""

    def __init__(self) -> None:
        self.entries: list[tuple] = []
        self.output: Any = None
        self.broken: str | None = None
        # (module, training, parameters, buffers) of every module called, and each tensor
        # from before the call with its (shape, dtype, requires_grad): checked on replay.
        self.modules: list[tuple] = []
        self.externals: dict[int, tuple] = {}
        self.slot_count = 0
        # where the constants of lean ops start among the slots, and their values
        self.constants: tuple = (0, [])
        # the replay on arrays, where every op of a lean recording has array kernels: built
        # after the first replay (from its slots), so the recording call does not pay for it
        self.flat: flat.FlatProgram | None = None
        self.flat_pending = False

    def guards_hold(self) -> bool:
        for module, training, parameters, buffers in self.modules:
            # a hook registered since the recording must run: the call records anew, and breaks
            if module.training is not training or _has_hooks(module):
                return False
            if not _same_objects(module._parameters, parameters) or not _same_objects(
                module._buffers, buffers
            ):
                return False
        for tensor, shape, dtype, requires_grad in self.externals.values():
            array = tensor._data
            if array.shape != shape or array.dtype != dtype:
                return False
            if tensor._requires_grad is not requires_grad:
                return False
        return True


def _has_hooks(module: Any) -> bool:
    """Whether calling `module` runs hooks (its own or the global ones): a graph break."""
    return bool(
        module._forward_pre_hooks
        or module._forward_hooks
        or module._backward_hooks
        or module._backward_pre_hooks
        or _module_code._global_forward_pre_hooks
        or _module_code._global_forward_hooks
    )


def _same_objects(mapping: dict, recorded: tuple) -> bool:
    if len(mapping) != len(recorded):
        return False
    return all(a is b for a, b in zip(mapping.values(), recorded))


class _Recorder:
    """The observer (of ops) and `local_state.recorder` (of everything else) of a recording."""

    def __init__(self, recording: _Recording, inputs: list, fullgraph: bool) -> None:
        self.recording = recording
        self.fullgraph = fullgraph
        # slot index -> tensor, and id -> slot index, for every tensor of the call (strong
        # references keep ids unique while recording)
        self.values: list = list(inputs)
        self.input_count = len(inputs)
        self.slots: dict[int, int] = {id(tensor): i for i, tensor in enumerate(inputs)}
        self.depth = 0
        self.pending: list = []
        self.current_op = "an op"  # what a break in an op's arguments names
        # each recorded op's node by entry index, and the node order of each engine pass
        self.nodes: dict[int, Any] = {}
        self.pass_orders: dict[int, list] = {}

    # ------------------------------------------------------------ templates
    def template(self, value: Any) -> Any:
        if isinstance(value, TensorBase):
            index = self.slots.get(id(value))
            if index is not None:
                return _Slot(index)
            key = id(value)
            if key not in self.recording.externals:
                array = value._data
                self.recording.externals[key] = (
                    value,
                    array.shape,
                    array.dtype,
                    value._requires_grad,
                )
            return value
        if isinstance(value, list | tuple) and any(
            isinstance(item, TensorBase | list | tuple) for item in value
        ):
            return _Sequence(type(value) if type(value) in (list, tuple) else tuple,
                             tuple(self.template(item) for item in value))  # fmt: skip
        if isinstance(value, dict) and any(isinstance(v, TensorBase) for v in value.values()):
            self.graph_break("a dict of tensors passed to an op")
        elif isinstance(value, np.ndarray) and value.size > 1:
            # values read from a tensor on the host (an index array): a recorded constant
            # would be stale on the next call
            self.graph_break(f"{self.current_op} is given a NumPy array read from a tensor")
        return value

    def new_slot(self, tensor: Any) -> _Slot | None:
        if not isinstance(tensor, TensorBase):
            return None
        index = len(self.values)
        self.values.append(tensor)
        self.slots[id(tensor)] = index
        return _Slot(index)

    def outputs_of(self, result: Any) -> Any:
        if isinstance(result, TensorBase):
            return self.new_slot(result)
        if isinstance(result, tuple | list):
            return tuple(self.outputs_of(item) for item in result)
        return None

    # ------------------------------------------------------------ breaks
    def graph_break(self, reason: str) -> None:
        if self.recording.broken is None:
            self.recording.broken = reason
        _stop_recording(self)
        if self.fullgraph:
            raise Unsupported(f"lucid.compile(fullgraph=True) cannot record this call: {reason}")

    # ------------------------------------------------------------ ops (as an observer)
    def before_forward(self, node: Any, inputs: tuple) -> None:
        self.depth += 1
        if self.depth != 1 or local_state.backward_node is not None:
            return
        function = node.function
        if function._data_dependent_shape:
            self.graph_break(
                f"{function_module.op_name(function)} makes an output whose shape depends on "
                "the data"
            )
            return
        kwargs = getattr(node, "forward_kwargs", None)
        self.current_op = function_module.op_name(function)
        args = tuple([self.template(arg) for arg in inputs])
        if kwargs:
            kwargs = {name: self.template(value) for name, value in kwargs.items()}
        state = local_state
        # apply has found it already for an op it records while the sentinel keeps sites
        site = node.__dict__.get("forward_site") or function_module._forward_site(state.module_path)
        # grad and inference mode as the op was called in (a no_grad block inside the call);
        # apply has turned grad mode off for the forward of an op it records
        modes = (state.enabled or node.is_recording, state.inference)
        self.pending.append((node, args, kwargs, site, modes))

    def on_forward_error(self, node: Any, error: BaseException) -> None:
        self.depth -= 1
        if self.pending and self.pending[-1][0] is node:
            self.pending.pop()

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        self.depth -= 1
        if not self.pending or self.pending[-1][0] is not node:
            return
        _, args, kwargs, site, modes = self.pending.pop()
        slots = tuple(self.new_slot(output) for output in outputs)
        if node.is_recording:
            self.nodes[len(self.recording.entries)] = node
        self.recording.entries.append((_OP, node.function, args, kwargs, slots, site, modes))

    # ------------------------------------------------------------ the rest (local_state.recorder)
    def call(self, function: Callable, *args: Any, **kwargs: Any) -> Any:
        """Run `function` as it is (its ops unrecorded), and replay it as it is."""
        if self.depth:
            return function(*args, **kwargs)
        arg_templates = tuple(self.template(arg) for arg in args)
        kwarg_templates = {name: self.template(value) for name, value in kwargs.items()}
        # The call runs as eager runs it: unobserved (the engine's fast paths, the ops' array
        # backwards), with a backward pass's node order kept for its lean plan.
        state = local_state
        state.recorder = None
        observers.remove_observer(self)
        order = state.backward_order = [] if function is engine.backward else None
        try:
            result = function(*args, **kwargs)
        finally:
            state.backward_order = None
            if self.recording.broken is None:
                observers.add_observer(self)
                state.recorder = self
        if order is not None:
            self.pass_orders[len(self.recording.entries)] = order
        entry = (_CALL, function, arg_templates, kwarg_templates, self.outputs_of(result))
        self.recording.entries.append(entry)
        return result

    def host_read(self, tensor: Any, how: str) -> None:
        if not self.depth:
            self.graph_break(f"a tensor's data is read on the host ({how})")

    def set_grad(self, tensor: Any, value: Any) -> None:
        if not self.depth:
            entry = (_SET_GRAD, self.template(tensor), self.template(value))
            self.recording.entries.append(entry)

    def read_grad(self, tensor: Any, grad: Any) -> None:
        if not self.depth and grad is not None:
            template = self.template(tensor)
            self.recording.entries.append((_READ_GRAD, template, self.new_slot(grad)))

    def module_called(self, module: Any, outermost: bool, args: tuple, kwargs: dict) -> None:
        if self.depth:
            return
        if _has_hooks(module):
            self.graph_break(f"module {type(module).__name__} has hooks")
            return
        self.recording.modules.append((
            module, module.training, tuple(module._parameters.values()),
            tuple(module._buffers.values()),
        ))  # fmt: skip
        if outermost:
            entry = (
                _ENTER, module, tuple(self.template(arg) for arg in args),
                {name: self.template(value) for name, value in kwargs.items()},
                capture_frames(1, 1),
            )  # fmt: skip
            self.recording.entries.append(entry)

    def module_returned(self, output: Any) -> None:
        if not self.depth:
            self.recording.entries.append((_LEAVE, self.template(output)))

    def tensor_attribute_set(self, module: Any, name: str) -> None:
        if not self.depth:
            self.graph_break(f"a tensor is assigned to {type(module).__name__}.{name}")


def _stop_recording(recorder: _Recorder) -> None:
    if local_state.recorder is recorder:
        local_state.recorder = None
    if recorder in local_state.observers:
        observers.remove_observer(recorder)


def _flatten(value: Any, leaves: list) -> Any:
    """The tensors in `value` (nested lists, tuples, dicts), and a hashable key for the rest."""
    if isinstance(value, TensorBase):
        leaves.append(value)
        array = value._data
        return (_TENSOR, array.shape, array.dtype, value._requires_grad, value._grad_fn is None)
    if type(value) in (list, tuple):
        return (type(value), tuple(_flatten(item, leaves) for item in value))
    if type(value) is dict:
        return (dict, tuple((key, _flatten(item, leaves)) for key, item in value.items()))
    return (type(value), value)


_TENSOR = object()


def _can_replay() -> bool:
    state = local_state
    return (
        not state.observers
        and state.autocast is None
        and state.saved_tensors_hooks is None
        and state.recorder is None
    )


def compiled(model: Callable, fullgraph: bool) -> Any:
    """What `lucid.compile` returns: an OptimizedModule for a module, else a function."""
    if isinstance(model, nn.Module):
        return OptimizedModule(model, fullgraph)
    compiled_function = CompiledFunction(model, fullgraph)

    @functools.wraps(model)
    def compiled_call(*args: Any, **kwargs: Any) -> Any:
        return compiled_function(*args, **kwargs)

    compiled_call._compiled_function = compiled_function
    return compiled_call


class OptimizedModule(nn.Module):
    """A compiled module, as torch.compile returns it: `_orig_mod` is the module (its
    parameters and state_dict keys are under that name, as torch's), other attributes are
    read from it, and calls are recorded and replayed."""

    def __init__(self, mod: nn.Module, fullgraph: bool = False) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled_function", CompiledFunction(mod, fullgraph))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_function(*args, **kwargs)

    forward = __call__

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


_compiled_functions: weakref.WeakSet = weakref.WeakSet()


def reset() -> None:
    """Forget every recording (lucid._dynamo.reset)."""
    for compiled_function in list(_compiled_functions):
        compiled_function.recordings.clear()


class CompiledFunction:
    """`fn` compiled: its calls recorded per guard set and replayed (see the module)."""

    def __init__(self, fn: Callable, fullgraph: bool) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.recordings: dict[Any, _Recording] = {}
        self._warned: set[str] = set()
        _compiled_functions.add(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _can_replay():
            return self.fn(*args, **kwargs)
        leaves: list = []
        key = _flatten((args, kwargs), leaves)
        state = local_state
        key = (key, state.enabled, state.inference, state.records_forward_sites)
        # Two arguments that are one tensor replay as one slot: the pattern is in the key.
        ids = [id(leaf) for leaf in leaves]
        if len(set(ids)) != len(ids):
            key = (key, tuple(ids.index(i) for i in ids))
        try:
            recording = self.recordings.get(key)
        except TypeError:  # an unhashable argument: nothing to guard on
            return self.fn(*args, **kwargs)
        if recording is not None:
            if recording.broken is not None:
                if self.fullgraph:
                    raise Unsupported(
                        f"lucid.compile(fullgraph=True) cannot record this call: {recording.broken}"
                    )
                return self.fn(*args, **kwargs)
            if recording.guards_hold():
                return _replay(recording, leaves)
            del self.recordings[key]
        if len(self.recordings) >= _CACHE_LIMIT:
            self._note(f"more than {_CACHE_LIMIT} guard sets (recompile_limit)")
            return self.fn(*args, **kwargs)
        recording = _Recording()
        self.recordings[key] = recording
        try:
            return self._record(recording, leaves, args, kwargs)
        except BaseException:
            # a call that raised is recorded anew next time (a graph break is kept)
            if recording.broken is None:
                self.recordings.pop(key, None)
            raise

    def _record(self, recording: _Recording, leaves: list, args: tuple, kwargs: dict) -> Any:
        recorder = _Recorder(recording, leaves, self.fullgraph)
        observers.add_observer(recorder)
        local_state.recorder = recorder
        try:
            result = self.fn(*args, **kwargs)
        finally:
            _stop_recording(recorder)
        if recording.broken is None:
            recording.output = _output_template(recorder, result)
            _check_externals(recorder, result)
        if recording.broken is not None:
            recording.entries = []
            recording.externals = {}
            if self.fullgraph:
                raise Unsupported(
                    f"lucid.compile(fullgraph=True) cannot record this call: {recording.broken}"
                )
            self._note(recording.broken)
        recording.slot_count = len(recorder.values)
        if recording.broken is None:
            _make_lean(recording, recorder)
            recording.flat_pending = any(entry[0] == _LEAN_OP for entry in recording.entries)
        return result

    def _note(self, reason: str) -> None:
        if reason not in self._warned:
            self._warned.add(reason)
            name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
            warnings.warn(
                f"lucid.compile: {name} runs eagerly (graph break): {reason}",
                UserWarning,
                stacklevel=3,
            )


def _check_externals(recorder: _Recorder, result: Any) -> None:
    """A tensor from outside the call that nothing but the recording holds was made during
    it by something other than an op (a factory): its value is not recorded, so it breaks."""
    recording = recorder.recording
    if not recording.externals:
        return
    returned: list = []
    _flatten(result, returned)
    held = _template_references(recording)
    for entry in recording.externals.values():
        tensor = entry[0]
        # the externals table, this local, getrefcount's argument, templates holding it
        references = _getrefcount(tensor) - 3 - sum(r is tensor for r in returned)
        if references <= held.get(id(tensor), 0):
            recording.broken = (
                "a tensor was made during the call outside lucid's ops (a factory such as "
                f"lucid.tensor, zeros or randn){_first_use(recording, tensor)}; pass it in as "
                "an argument"
            )
            return


def _first_use(recording: _Recording, tensor: Any) -> str:
    """', first given to <op> at <file>:<line>' for the first op entry reading `tensor`."""
    for entry in recording.entries:
        if entry[0] == _OP and any(_holds(part, tensor) for part in entry[2:4]):
            filename, line, _ = site_location(entry[5])
            where = f" at {filename}:{line}" if filename is not None else ""
            return f", first given to {function_module.op_name(entry[1])}{where}"
    return ""


def _template_references(recording: _Recording) -> dict[int, int]:
    """id -> how many times the recording's templates hold that tensor (one walk)."""
    counts: dict[int, int] = {}
    for entry in recording.entries:
        for part in entry[2:]:
            _count_tensors(part, counts)
    _count_tensors(recording.output, counts)
    return counts


def _count_tensors(template: Any, counts: dict[int, int]) -> None:
    if isinstance(template, TensorBase):
        counts[id(template)] = counts.get(id(template), 0) + 1
    elif template.__class__ is _Sequence:
        for item in template.items:
            _count_tensors(item, counts)
    elif template.__class__ is tuple:
        for item in template:
            _count_tensors(item, counts)
    elif template.__class__ is dict:
        for item in template.values():
            _count_tensors(item, counts)


def _holds(template: Any, tensor: Any) -> bool:
    """Whether `template` holds `tensor`."""
    counts: dict[int, int] = {}
    _count_tensors(template, counts)
    return id(tensor) in counts


_FLAT_KINDS = flat.Kinds(op=_OP, call=_CALL, set_grad=_SET_GRAD, read_grad=_READ_GRAD,
                        enter=_ENTER, leave=_LEAVE, lean_op=_LEAN_OP,
                        lean_backward=_LEAN_BACKWARD, slot=_Slot, sequence=_Sequence)  # fmt: skip


def _build_flat(recording: _Recording, values: list, input_count: int) -> None:
    """After a lean replay: its slots as the op kernels' arguments, to build the flat form."""
    recording.flat_pending = False
    first_constant = recording.constants[0]
    returned = {slot.index for slot in _slots_in(recording.output)}
    recording.flat = flat.make_flat(recording.entries, values, input_count, first_constant,
                                    returned, _FLAT_KINDS)  # fmt: skip


def _slots_in(template: Any) -> list:
    if template.__class__ is _Slot:
        return [template]
    if type(template) in (list, tuple):
        return [slot for item in template for slot in _slots_in(item)]
    if type(template) is dict:
        return [slot for item in template.values() for slot in _slots_in(item)]
    return []


def _replay(recording: _Recording, inputs: list) -> Any:
    values = inputs + [None] * (recording.slot_count - len(inputs))
    first_constant, constants = recording.constants
    if constants:
        values[first_constant:] = constants
    state = local_state
    if recording.flat is not None:
        return _replay_flat(recording, values, inputs, state)
    grad_mode = state.enabled
    inference_mode = state.inference
    sites = state.records_forward_sites
    # a thread that kept the sentinel's default must keep it (set_sentinel reaches it)
    own_sites = "records_forward_sites" in state.__dict__
    # apply would look for the user's line on the stack (the replay's own); the recorded
    # line is set on each node instead, and is what a forward birth names.
    state.records_forward_sites = False
    token = observers.numpy_state.set(state.numpy_extobj)
    # Lean entries run with grad mode off (as apply runs a forward) and the ops they call
    # through apply's lean dispatch; the rest as eager runs them.
    lean = False
    try:
        for entry in recording.entries:
            kind = entry[0]
            if kind >= _LEAN_OP:
                if not lean:
                    lean = True
                    state.enabled = False
                    state.autocast = LEAN_DISPATCH
                if kind != _LEAN_OP:
                    state.replay_site = None
                    _lean_backward(entry[1], values, state)
                    continue
                output_index = entry[8]
                if output_index is False:
                    _lean_op(entry, values, state, sites)
                    continue
                # _lean_op's common case, inline (it runs once per op of the step)
                args = entry[2](values)
                ctx = _new_node(Node)
                ctx.__dict__.update(entry[6])
                values[entry[7]] = ctx
                if sites:
                    state.replay_site = entry[5]
                output = entry[1].forward(ctx, *args)
                for tensor in ctx.dirty_tensors:
                    tensor._version_counter[0] += 1
                if output.__class__ is tuple:
                    values[output_index] = output[0]
                else:
                    values[output_index] = output
                    if state.pending_flags is not None:
                        output = (output,)
                if state.pending_flags is not None:
                    observers.after_forward(ctx, args, output)
                continue
            if lean:
                lean = False
                state.enabled = grad_mode
                state.autocast = None
            if kind == _OP:
                _, function, args, kwargs, outputs, site, (enabled, inference) = entry
                args = [_resolve(arg, values) for arg in args]
                if sites:
                    state.replay_site = site
                state.enabled = enabled
                state.inference = inference
                try:
                    if kwargs:
                        kwargs = {n: _resolve(v, values) for n, v in kwargs.items()}
                        result = function.apply(*args, **kwargs)
                    else:
                        result = function.apply(*args)
                finally:
                    state.enabled = grad_mode
                    state.inference = inference_mode
                if type(result) is not tuple:
                    result = (result,)
                for slot, item in zip(outputs, result):
                    if slot is not None:
                        values[slot.index] = item
                if sites:
                    _set_site(result, site)
            elif kind == _CALL:
                _, function, args, kwargs, outputs = entry
                state.replay_site = None
                state.records_forward_sites = sites
                try:
                    result = function(
                        *[_resolve(arg, values) for arg in args],
                        **{name: _resolve(value, values) for name, value in kwargs.items()},
                    )
                finally:
                    state.records_forward_sites = False
                _store(outputs, result, values)
            elif kind == _READ_GRAD:
                values[entry[2].index] = _resolve(entry[1], values)._grad
            elif kind == _SET_GRAD:
                _resolve(entry[1], values)._grad = _resolve(entry[2], values)
            elif kind == _ENTER:
                _, module, args, kwargs, frames = entry
                flat.enter_module(module, [_resolve(a, values) for a in args],
                                  {n: _resolve(v, values) for n, v in kwargs.items()},
                                  frames)  # fmt: skip
            else:
                flat.leave_module(_resolve(entry[1], values))
    finally:
        state.enabled = grad_mode
        state.autocast = None
        observers.numpy_state.reset(token)
        if own_sites:
            state.records_forward_sites = sites
        else:
            del state.records_forward_sites
        state.replay_site = None
        state.calling_module = None
        state.in_model = False
    if recording.flat_pending:
        _build_flat(recording, values, len(inputs))
    return _resolve_output(recording.output, values)


def _replay_flat(recording: _Recording, values: list, inputs: list, state: Any) -> Any:
    grad_mode = state.enabled
    token = observers.numpy_state.set(state.numpy_extobj)
    state.enabled = False  # as a lean replay runs: hooks' ops record no graph
    try:
        flat.replay_flat(recording.flat, values, inputs, grad_mode)
    finally:
        state.enabled = grad_mode
        observers.numpy_state.reset(token)
        state.calling_module = None
        state.in_model = False
    return _resolve_output(recording.output, _FlatOutputs(values, inputs))


class _FlatOutputs:
    """The slots of a flat replay as `_resolve_output` reads them: an argument is the tensor
    passed, anything made becomes a new tensor (one, however often it is returned)."""

    __slots__ = ("values", "inputs")

    def __init__(self, values: list, inputs: list) -> None:
        self.values = values
        self.inputs = inputs

    def __getitem__(self, index: int) -> Any:
        if index < len(self.inputs):
            return self.inputs[index]
        value = self.values[index]
        if isinstance(value, np.ndarray | np.generic):
            value = self.values[index] = _wrap(value)
        return value


def _store(outputs: Any, result: Any, values: list) -> None:
    if outputs is None:
        return
    if outputs.__class__ is _Slot:
        values[outputs.index] = result
        return
    for template, item in zip(outputs, result):
        if template is not None:
            _store(template, item, values)


def _set_site(result: tuple, site: Any) -> None:
    for item in result:
        if isinstance(item, TensorBase) and item._grad_fn is not None:
            item._grad_fn.forward_site = site
            return


def _output_template(recorder: _Recorder, value: Any) -> Any:
    if type(value) in (list, tuple):
        return type(value)(_output_template(recorder, item) for item in value)
    if type(value) is dict:
        return {key: _output_template(recorder, item) for key, item in value.items()}
    return recorder.template(value)


def _resolve_output(template: Any, values: list) -> Any:
    if template.__class__ is _Slot:
        return values[template.index]
    if type(template) in (list, tuple):
        return type(template)(_resolve_output(item, values) for item in template)
    if type(template) is dict:
        return {key: _resolve_output(item, values) for key, item in template.items()}
    return template


# ------------------------------------------------------------ lean replay
# Where the call's own backward consumes the whole graph its ops made (a training step), the
# graph need not exist: each op's forward runs on its node's ctx alone, and the backward runs
# the recorded evaluation order with each gradient's destination written down, instead of
# the engine's dependency counts, heap and dictionaries. The kernels, the order and the
# additions are eager's, so the results are bitwise equal.
class _LeanPass:
    """One recorded engine pass: its root (slot and output), its steps, its buffers' sizes."""

    __slots__ = ("root", "root_output_nr", "steps", "buffer_sizes")

    def __init__(self, root: int, root_output_nr: int, steps: list, buffer_sizes: list) -> None:
        self.root = root
        self.root_output_nr = root_output_nr
        # (ctx slot, function, routes, input count, output meta) for an op node; (None,
        # sink, the leaf's slot if it is an argument, None, None) for a leaf; routes: (input
        # index, buffer, output_nr, shape, dtype, ctx slot of the destination or None for a
        # leaf)
        self.steps = steps
        self.buffer_sizes = buffer_sizes


def _make_lean(recording: _Recording, recorder: _Recorder) -> None:
    entries = recording.entries
    nodes = recorder.nodes
    entry_of = {id(node): index for index, node in nodes.items()}
    context_slots = {index: len(recorder.values) + n for n, index in enumerate(nodes)}
    covered: set[int] = set()
    passes: dict[int, _LeanPass] = {}
    for call_index, order in recorder.pass_orders.items():
        plan = _lean_pass(entries[call_index], order, entry_of, context_slots, recorder)
        if plan is None:
            return
        passes[call_index] = plan
        covered.update(entry_of[id(node)] for node in order if id(node) in entry_of)
    if not passes:
        return
    values = recorder.values
    for index, node in nodes.items():
        if index in covered:
            continue
        for slot in entries[index][4]:
            # an output with a graph no pass of the call consumed, that something outside the
            # recording still holds (the values list and getrefcount's argument are two):
            # its graph outlives the call
            if (
                slot is not None
                and values[slot.index]._grad_fn is node
                and (_getrefcount(values[slot.index]) > 2)
            ):
                return
    lean = []
    # Constants get slots of their own, filled once: every argument of a lean op is then
    # read from the slots by one itemgetter call.
    constants: list = []
    first_constant = len(recorder.values) + len(nodes)
    for index, entry in enumerate(entries):
        if index in passes:
            lean.append((_LEAN_BACKWARD, passes[index]))
        elif index in nodes:
            _, function, args, kwargs, outputs, site, _ = entry
            node = nodes[index]
            indices = []
            for arg in args:
                if arg.__class__ is _Slot:
                    indices.append(arg.index)
                elif arg.__class__ is _Sequence:
                    break
                else:
                    indices.append(first_constant + len(constants))
                    constants.append(arg)
            else:
                getter = itemgetter(*indices) if len(indices) > 1 else None
                if len(indices) == 1:
                    getter = _single(indices[0])
                elif not indices:
                    getter = _no_arguments
                args = getter
            prototype = {"function": function, "is_recording": True,
                         "needs_input_grad": node.needs_input_grad,
                         "sequence_nr": node.sequence_nr}  # fmt: skip
            if local_state.records_forward_sites:
                prototype["forward_site"] = site
            # the common case the replay runs inline: arguments by one getter, no keywords,
            # forward(ctx, *args), one output
            plain = (
                args.__class__ is not tuple
                and not kwargs
                and not function._has_setup_context
                and len(outputs) == 1
                and outputs[0] is not None
            )
            lean.append((_LEAN_OP, function, args, kwargs, outputs, site, prototype,
                         context_slots[index], plain and outputs[0].index))  # fmt: skip
        else:
            lean.append(entry)
    recording.entries = lean
    recording.slot_count = first_constant + len(constants)
    recording.constants = (first_constant, constants)


def _lean_pass(entry: tuple, order: list, entry_of: dict, context_slots: dict,
               recorder: _Recorder) -> _LeanPass | None:  # fmt: skip
    """The plan of a recorded `backward()`, or None where it needs the engine (hooks, a
    graph from before the call, retain_graph or create_graph, inputs=, a given gradient)."""
    _, function, args, kwargs, _ = entry
    tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs = args
    if (
        kwargs
        or tensors.__class__ is not _Slot
        or grad_tensors is not None
        or retain_graph
        or (create_graph or grad_variables is not None or inputs is not None)
    ):
        return None
    root = recorder.values[tensors.index]
    if root._grad_fn is None or not order or order[0] is not root._grad_fn:
        return None
    positions = {id(node): n for n, node in enumerate(order)}
    steps: list = []
    buffer_sizes = []
    for node in order:
        if node.pre_hooks or node.post_hooks or node.tensor_pre_hooks or node.retained_outputs:
            return None
        if node.__class__ is AccumulateGrad:
            variable = node.variable
            if variable._backward_hooks:
                return None
            steps.append((None, node, _argument_slot(recorder, variable), None, None))
            buffer_sizes.append(1)
            continue
        index = entry_of.get(id(node))
        if index is None:
            return None
        routes = []
        for input_index, edge in enumerate(node.input_edges):
            if edge is None or edge[0] is None:
                continue
            target, output_nr = edge
            position = positions.get(id(target))
            if position is None:
                return None
            if target.__class__ is AccumulateGrad:
                # the leaf's shape and dtype are guards of the recording
                leaf = target.variable._data
                routes.append((input_index, position, 0, leaf.shape, leaf.dtype, None))
            else:
                shape, dtype = target.output_meta[output_nr]
                routes.append((input_index, position, output_nr, shape, dtype,
                               context_slots[entry_of[id(target)]]))  # fmt: skip
        steps.append((context_slots[index], node.function, tuple(routes),
                      len(node.input_edges), node.output_meta))  # fmt: skip
        buffer_sizes.append(len(node.output_meta))
    return _LeanPass(tensors.index, root._output_nr, steps, buffer_sizes)


def _argument_slot(recorder: _Recorder, tensor: Any) -> _Slot | None:
    """The slot of the call's argument `tensor` (a later call may pass another), or None."""
    for index in range(recorder.input_count):
        if recorder.values[index] is tensor:
            return _Slot(index)
    return None


def _single(index: int) -> Callable:
    def get(values: list) -> tuple:
        return (values[index],)

    return get


def _no_arguments(values: list) -> tuple:
    return ()


def _lean_op(entry: tuple, values: list, state: Any, sites: bool) -> None:
    """An op of a lean recording: its forward on a ctx of its own (grad mode is off)."""
    _, function, args, kwargs, outputs, site, prototype, context_slot, _ = entry
    if args.__class__ is tuple:
        args = tuple([_resolve(arg, values) for arg in args])
    else:
        args = args(values)
    ctx = _new_node(Node)
    ctx.__dict__.update(prototype)
    if sites:
        state.replay_site = site
    values[context_slot] = ctx
    if kwargs:
        kwargs = {name: _resolve(value, values) for name, value in kwargs.items()}
        if function._has_setup_context:
            output = function.forward(*args, **kwargs)
            function.setup_context(ctx, args, output)
        else:
            output = function.forward(ctx, *args, **kwargs)
    elif function._has_setup_context:
        output = function.forward(*args)
        function.setup_context(ctx, args, output)
    else:
        output = function.forward(ctx, *args)
    result = output if type(output) is tuple else (output,)
    for tensor in ctx.dirty_tensors:
        tensor._version_counter[0] += 1
    for slot, item in zip(outputs, result):
        if slot is not None:
            values[slot.index] = item
    if state.pending_flags is not None:
        observers.after_forward(ctx, args, result)


def _lean_backward(plan: _LeanPass, values: list, state: Any) -> None:
    root = values[plan.root]
    array = root._data
    nodes = {values[step[0]] if step[0] is not None else step[1]: 0 for step in plan.steps}
    buffers = [[None] * size for size in plan.buffer_sizes]
    buffers[0][plan.root_output_nr] = _wrap(np.ones(array.shape, array.dtype))
    with flat.backward_pass(root, nodes, state):
        for position, step in enumerate(plan.steps):
            context_slot, function, routes, input_count, output_meta = step
            grads = buffers[position]
            buffers[position] = None
            if context_slot is None:  # a leaf's sink: its .grad
                flat.write_leaf(flat.sink_now(function, routes, values), grads, state)
                continue
            ctx = values[context_slot]
            state.backward_node = ctx
            if len(grads) == 1:
                if grads[0] is None:
                    continue
                if complex_use.in_use and function._complex_rule == HOLOMORPHIC:
                    grad_inputs = engine._holomorphic_backward(ctx, grads[0])
                else:
                    grad_inputs = function.backward(ctx, grads[0])
            else:
                if all(grad is None for grad in grads):
                    continue
                if ctx.materialize_grads:
                    for output_nr, grad in enumerate(grads):
                        if grad is None and output_meta[output_nr] is not None:
                            grads[output_nr] = engine._zeros(*output_meta[output_nr])
                if complex_use.in_use and function._complex_rule == HOLOMORPHIC:
                    grad_inputs = engine._holomorphic_backward(ctx, *grads)
                else:
                    grad_inputs = function.backward(ctx, *grads)
            grads = None
            ctx.to_save = None
            if type(grad_inputs) is not tuple:
                grad_inputs = (grad_inputs,)
            if len(grad_inputs) != input_count:
                grad_inputs = grad_inputs[:input_count]
            for input_index, target, output_nr, shape, dtype, target_slot in routes:
                grad = grad_inputs[input_index]
                if grad is None:
                    continue
                buffer = buffers[target]
                grad_array = grad._data
                if grad_array.shape != shape or (
                    grad_array.dtype is not dtype and grad_array.dtype != dtype
                ):
                    grad = engine._conform(ctx, input_index, grad, shape, dtype)
                existing = buffer[output_nr]
                if existing is None:
                    buffer[output_nr] = grad
                    continue
                total = buffer[output_nr] = _wrap(np.add(existing._data, grad._data))
                if state.pending_flags is not None:
                    # the sum overflowed or met inf - inf: a birth in accumulation
                    if target_slot is None:
                        owner = plan.steps[target][1]
                    else:
                        owner = values[target_slot]
                    state.accumulating = owner
                    observers.after_forward(owner, (grad,), (total,))
                    state.accumulating = None
            grad = grad_array = grad_inputs = buffer = existing = total = None
