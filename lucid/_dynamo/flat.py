"""The flat replay: a lean recording whose every op has array kernels, replayed on arrays.

A lean replay (recording.py) still runs each op's `forward(ctx, ...)` and `backward`, which
make a `Node` and wrap every result in a `Tensor`: about 2 us per op around a ufunc of 0.3 us
on small tensors. An op class may instead give `flat_kernels(args, needs_input_grad)`: for the
arguments it was recorded with (a tensor's array, or the constant), either None or
`(forward, backward, stands_for)`, where `forward(*args)` is the array its forward makes and
`backward(grad, out, *args)` the gradient arrays its backward makes (None where not needed),
both computed by the very NumPy calls of the op's own paths, so the results are bitwise equal
(tests/test_compile.py). An op that records no graph (grad mode off, or no input needing a
gradient) needs only the forward; an in-place one (an optimizer's `p.add_(p.grad, ...)`) is
its op's `flat_inplace(args, needs_input_grad)`, whose forward writes its first argument.

When every op of a recording has them, and the recording holds only ops, backward passes,
`.grad` reads and writes, and calls that run as they are on tensors from before the call (an
optimizer's `step`), the replay is a loop of kernel calls over a list of arrays: no `Node`,
no `Tensor`, no dispatch, except where a value leaves the call (a leaf's `.grad`, the call's
result) and on the rare path of a floating-point flag, where the op's node is made and the
sentinel hears of it as from the op itself (`stands_for` names the op a backward's arrays
compute, as `finish_array_backward` does; None: the backward hands on each piece's flags
itself, under its node).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

import numpy as np

from lucid._core import engine, observers
from lucid._core.grad_mode import local_state
from lucid._core.graph import AccumulateGrad, Node, accumulator_for
from lucid._core.sentinel import enter_model, leave_model
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import as_tensors

_FORWARD, _BACKWARD, _SET_GRAD, _READ_GRAD, _CALL, _ALIAS, _ENTER, _LEAVE = range(8)
# forwards that also keep values for their backward, or make several outputs
_FORWARD_KEEPING, _FORWARD_SEVERAL = range(8, 10)
_new_node = object.__new__


class _FlatOp:
    """One op: its kernels, where its arguments and output live (`outs`: the slots of an op
    of several outputs), and how to name it; for an in-place op, the tensor it writes (an
    argument's index among the call's inputs, or the tensor itself), whose version it bumps
    as eager does; for one whose forward keeps values for its backward (the 4th item of its
    kernels true), the slot they are kept in until its backward has run."""

    __slots__ = ("forward", "backward", "stands_for", "getter", "out", "outs", "keep",
                 "prototype", "site", "target")  # fmt: skip

    def __init__(self, kernels: tuple, getter: Any, out: Any, prototype: dict, site: Any,
                 target: Any = None):  # fmt: skip
        self.forward, self.backward, self.stands_for = kernels[:3]
        self.getter = getter
        self.out = out if out.__class__ is int else None
        self.outs = None if out.__class__ is int else out
        self.keep = None
        self.prototype = prototype
        self.site = site
        self.target = target


class _FlatPass:
    """One backward pass: the root's slot, and per step (op, routes, output metadata) or
    (None, sink, the leaf's argument slot or None), routes being (input index, step
    position, output number) triples; `sizes` gives each step's number of outputs."""

    __slots__ = ("root", "steps", "sizes")

    def __init__(self, root: int, steps: list, sizes: list) -> None:
        self.root = root
        self.steps = steps
        self.sizes = sizes


class FlatProgram:
    """The steps of a flat replay; the slots that hold tensors, whose arrays are read on each
    replay (`.data =` may have replaced one since); and the values of the slots it adds after
    the recording's own (the tensors and constants of ops that record no graph)."""

    __slots__ = ("steps", "tensor_slots", "extra")

    def __init__(self, steps: list, tensor_slots: list, extra: list) -> None:
        self.steps = steps
        self.tensor_slots = tensor_slots
        self.extra = extra


class Kinds:
    """The entry kinds of recording.py that a flat program is built from."""

    def __init__(self, **kinds: Any) -> None:
        self.__dict__.update(kinds)


def make_flat(entries: list, record_values: list, input_count: int, first_constant: int,
              returned: set, kinds: Kinds) -> FlatProgram | None:  # fmt: skip
    """The flat program of lean `entries`, or None where some entry has no flat form.

    `record_values` is the replay's slot list as the recording filled it (the constants from
    `first_constant` on); `returned` the slots the call's result reads; `kinds` the entry
    kinds of recording.py and its `_Slot` class.
    """
    builder = _Builder(record_values, input_count, returned, kinds)
    for entry in entries:
        step = builder.step(entry)
        if step is None:
            return None
        builder.program.append(step)
    tensor_slots = [
        index
        for index in range(first_constant, len(record_values) + len(builder.extra))
        if isinstance(builder.value(index), TensorBase)
    ]
    return FlatProgram(builder.program, tensor_slots, builder.extra)


class _Builder:
    def __init__(self, record_values: list, input_count: int, returned: set, kinds: Kinds):
        self.record_values = record_values
        self.input_count = input_count
        self.returned = returned
        self.kinds = kinds
        # an in-place op's output is its input itself, in a slot of its own
        self.argument_of = {id(record_values[i]): i for i in range(input_count)}
        self.ops: dict[int, _FlatOp] = {}  # by context slot
        self.program: list = []
        self.extra: list = []

    def value(self, index: int) -> Any:
        count = len(self.record_values)
        return self.record_values[index] if index < count else self.extra[index - count]

    def step(self, entry: tuple) -> tuple | None:
        kinds = self.kinds
        kind = entry[0]
        if kind == kinds.lean_op:
            return self._lean_op(entry)
        if kind == kinds.lean_backward:
            plan = _flat_pass(entry[1], self.ops, self.record_values)
            return None if plan is None else (_BACKWARD, plan)
        if kind == kinds.op:
            return self._op(entry)
        if kind == kinds.set_grad:
            _, tensor, value = entry
            if value.__class__ is kinds.slot or isinstance(value, TensorBase):
                return None
            target = self._tensor_of(tensor)
            return None if target is None else (_SET_GRAD, (target, value))
        if kind == kinds.read_grad:
            _, tensor, output = entry
            target = self._tensor_of(tensor)
            if target is None or output.index in self.returned:
                return None  # a returned gradient is the tensor itself, not a copy of it
            return (_READ_GRAD, (target, output.index))
        if kind == kinds.call:
            _, function, args, kwargs, outputs = entry
            if function is TensorBase.detach and not kwargs and outputs.__class__ is kinds.slot:
                # a detached value is the array itself (the tensor made of it has no graph)
                (source,) = args
                if source.__class__ is kinds.slot:
                    return (_ALIAS, (source.index, outputs.index))
            # what runs as it is (an optimizer's step or zero_grad), on tensors from before
            # the call alone, and hands nothing on
            if outputs is not None or any(
                _holds_slot(value, kinds) for value in (*args, *kwargs.values())
            ):
                return None
            return (_CALL, (function, args, kwargs))
        if kind == kinds.enter:
            # the sentinel's count of the model's calls, and its look at the batch: the
            # arguments are the call's own tensors (or from before it)
            _, module, args, kwargs, frames = entry
            given = (*args, *kwargs.values())
            if any(value.__class__ is kinds.sequence for value in given):
                return None
            are_slots = tuple(value.__class__ is kinds.slot for value in given)
            targets = tuple(self._tensor_of(v) if slot else v for v, slot in zip(given, are_slots))
            if any(slot and target is None for target, slot in zip(targets, are_slots)):
                return None
            return (_ENTER, (module, targets, are_slots, len(args), tuple(kwargs), frames))
        if kind == kinds.leave:
            # (the output's slot, or None and what the sentinel is given: a tensor from
            # before the call, or nothing it looks at)
            output = entry[1]
            if output.__class__ is kinds.slot:
                return (_LEAVE, (output.index, None))
            return (_LEAVE, (None, output if isinstance(output, TensorBase) else None))
        return None

    def _tensor_of(self, template: Any) -> Any:
        """An argument's index among the inputs, or a tensor from before the call; None for
        a tensor the call made (it has no tensor in a flat replay)."""
        if template.__class__ is self.kinds.slot:
            return self.argument_of.get(id(self.record_values[template.index]))
        return template if isinstance(template, TensorBase) else None

    def _lean_op(self, entry: tuple) -> tuple | None:
        _, function, getter, kwargs, outputs, site, prototype, context_slot, out = entry
        # the class's own: an in-place form inherits its op's kernels, which do not write
        builder = vars(function).get("flat_kernels")
        if builder is None or kwargs or getter.__class__ is tuple:
            return None
        if out is False:
            # several outputs (unbind's views), each in a slot of its own
            if function._has_setup_context or len(outputs) < 2 or None in outputs:
                return None
            out = tuple(slot.index for slot in outputs)
        args = getter(self.record_values)
        arrays = tuple(a._data if isinstance(a, TensorBase) else a for a in args)
        kernels = builder(arrays, prototype["needs_input_grad"])
        if kernels is None:
            return None
        op = self.ops[context_slot] = _FlatOp(kernels, getter, out, prototype, site)
        if len(kernels) > 3 and kernels[3]:
            return None if op.outs is not None else self._keeping(op)
        return (_FORWARD if op.outs is None else _FORWARD_SEVERAL, op)

    def _keeping(self, op: _FlatOp) -> tuple:
        """The step of an op whose forward keeps values for its backward, in a new slot."""
        op.keep = len(self.record_values) + len(self.extra)
        self.extra.append(None)
        return (_FORWARD_KEEPING, op)

    def _op(self, entry: tuple) -> tuple | None:
        """An op that records no graph (its inputs need no gradient, or grad mode is off):
        forward only, an in-place one (an optimizer's update) writing its target's array."""
        _, function, args, kwargs, outputs, site, (_, inference) = entry
        if kwargs or inference or len(outputs) != 1 or outputs[0] is None:
            return None
        if outputs[0].index in self.returned:
            return None
        indices = []
        for arg in args:
            if arg.__class__ is self.kinds.slot:
                indices.append(arg.index)
            elif arg.__class__ is self.kinds.sequence:
                return None  # a list of the call's tensors
            else:
                indices.append(len(self.record_values) + len(self.extra))
                self.extra.append(arg)
        values = [self.value(index) for index in indices]
        arrays = tuple(v._data if isinstance(v, TensorBase) else v for v in values)
        target = None
        original = vars(function).get("_inplace_of")
        if original is not None:
            builder = vars(original).get("flat_inplace")
            target = self._tensor_of(args[0])
            if target is None:
                return None
        else:
            builder = vars(function).get("flat_kernels")
        kernels = None if builder is None else builder(arrays, (False,) * len(args))
        if kernels is None:
            return None
        getter = itemgetter(*indices) if len(indices) > 1 else _single(indices[0])
        prototype = {"function": function, "is_recording": False,
                     "needs_input_grad": (False,) * len(args)}  # fmt: skip
        op = _FlatOp(kernels, getter, outputs[0].index, prototype, site, target)
        if len(kernels) > 3 and kernels[3]:
            return self._keeping(op)  # (kept for no backward)
        return (_FORWARD, op)


def _holds_slot(template: Any, kinds: Kinds) -> bool:
    if template.__class__ is kinds.slot:
        return True
    if template.__class__ is kinds.sequence:
        return any(_holds_slot(item, kinds) for item in template.items)
    return False


def _single(index: int) -> Any:
    def get(values: list) -> tuple:
        return (values[index],)

    return get


def _flat_pass(plan: Any, ops: dict, record_values: list) -> _FlatPass | None:
    steps: list = []
    sizes: list = []
    for context_slot, function, routes, _, output_meta in plan.steps:
        if context_slot is None:  # a leaf's sink; `routes` holds its argument slot or None
            steps.append((None, function, routes))
            sizes.append(1)
            continue
        op = ops.get(context_slot)
        if op is None or len(output_meta) != (1 if op.outs is None else len(op.outs)):
            return None
        if None in output_meta:
            return None
        args = op.getter(record_values)
        flat_routes = []
        for input_index, target, output_nr, shape, dtype, _ in routes:
            arg = args[input_index]
            # the kernels give each gradient its input's shape and dtype: eager's conform
            # step would do nothing
            if not isinstance(arg, TensorBase):
                return None
            if arg._data.shape != shape or arg._data.dtype != dtype:
                return None
            flat_routes.append((input_index, target, output_nr))
        steps.append((op, tuple(flat_routes), output_meta))
        sizes.append(len(output_meta))
    if plan.root_output_nr != 0 or sizes[0] != 1:
        return None
    return _FlatPass(plan.root, steps, sizes)


def replay_flat(program: FlatProgram, values: list, inputs: list, grad_mode: bool) -> None:
    """Run `program` over `values` (the replay's slot list, holding tensors at the inputs and
    at tensor constants): arrays replace them first, and every slot holds an array after.
    Grad mode is off but for what runs as it is, which sees the caller's `grad_mode`."""
    for index, tensor in enumerate(inputs):
        values[index] = tensor._data
    values += program.extra
    for index in program.tensor_slots:
        values[index] = values[index]._data
    state = local_state
    for kind, payload in program.steps:
        if kind == _FORWARD:
            op = payload
            values[op.out] = op.forward(*op.getter(values))
            if op.target is not None:
                _tensor(op.target, inputs)._version_counter[0] += 1
            if state.pending_flags is not None:
                _forward_flags(op, values, inputs, state)
        elif kind == _FORWARD_KEEPING:
            op = payload
            values[op.out], values[op.keep] = op.forward(*op.getter(values))
            if state.pending_flags is not None:
                _forward_flags(op, values, inputs, state)
        elif kind == _FORWARD_SEVERAL:
            op = payload
            for index, array in zip(op.outs, op.forward(*op.getter(values))):
                values[index] = array
            if state.pending_flags is not None:
                _forward_flags(op, values, inputs, state)
        elif kind == _BACKWARD:
            _backward(payload, values, inputs, state)
        elif kind == _SET_GRAD:
            target, value = payload
            _tensor(target, inputs)._grad = value
        elif kind == _READ_GRAD:
            target, output = payload
            grad = _tensor(target, inputs)._grad
            if grad is None:
                raise RuntimeError(
                    "lucid.compile: a gradient the recorded call read is None on this call "
                    "(something set it to None during the call); run the function eagerly"
                )
            values[output] = grad._data
        elif kind == _CALL:
            function, args, kwargs = payload
            state.enabled = grad_mode
            try:
                function(*args, **kwargs)
            finally:
                state.enabled = False
        elif kind == _ALIAS:
            source, output = payload
            values[output] = values[source]
        elif kind == _ENTER:
            module, targets, are_slots, count, names, frames = payload
            given = [_tensor(t, inputs) if slot else t for t, slot in zip(targets, are_slots)]
            state.enabled = grad_mode  # the sentinel notes the mode the model ran in
            try:
                enter_module(module, given[:count], dict(zip(names, given[count:])), frames)
            finally:
                state.enabled = False
        else:
            index, output = payload
            leave_module(output if index is None else _wrap(values[index]))


def enter_module(module: Any, args: list, kwargs: dict, frames: tuple) -> None:
    """An outermost module call of a replay, as the sentinel hears of one in eager: at the
    user line it was recorded at (`frames`, the step's Python does not run)."""
    state = local_state
    enter_model(module, tuple(args), kwargs, frames)
    state.calling_module = module
    state.calling_path = ""
    state.in_model = True


def leave_module(output: Any) -> None:
    state = local_state
    state.calling_module = None
    state.in_model = False
    leave_model(output)


def _tensor(target: Any, inputs: list) -> TensorBase:
    """The tensor a step names: an argument by its index, or a tensor from before the call."""
    return inputs[target] if target.__class__ is int else target


def _node(op: _FlatOp) -> Node:
    """The op's node for the NaN tiers, made only when a flag fired."""
    node = _new_node(Node)
    node.__dict__.update(op.prototype)
    return node


def _forward_flags(op: _FlatOp, values: list, inputs: list, state: Any) -> None:
    node = _node(op)
    state.replay_site = op.site
    args = as_tensors(op.getter(values))
    if op.outs is not None:
        outputs = tuple(_wrap(values[index]) for index in op.outs)
        try:
            observers.after_forward(node, args, outputs)
        finally:
            state.replay_site = None
        return
    output = _wrap(values[op.out])
    if op.target is not None:
        # an in-place op's input and output are its target: the report names that tensor
        output = _tensor(op.target, inputs)
        args = (output,) + args[1:]
        node.dirty_tensors = (output,)
    try:
        observers.after_forward(node, args, (output,))
    finally:
        state.replay_site = None


def _backward(plan: _FlatPass, values: list, inputs: list, state: Any) -> None:
    root = values[plan.root]
    steps, sizes = plan.steps, plan.sizes
    sinks = {id(step): sink_now(step[1], step[2], inputs) for step in steps if step[0] is None}
    # the nodes the sentinel's root and end-of-pass checks look for births and leaves in
    nodes = dict.fromkeys(sinks.values(), 0)
    # a step's gradient: an array, or for an op of several outputs a list of them
    buffers: list = [None] * len(steps)
    buffers[0] = np.ones(root.shape, root.dtype)
    with backward_pass(_wrap(root), nodes, state):
        for position, step in enumerate(steps):
            grad = buffers[position]
            buffers[position] = None
            if grad is None:
                continue
            op = step[0]
            if op is None:
                leaf_grads = [_wrap(grad)]
                grad = None  # the tensor's own reference only: `.grad` takes it without a copy
                write_leaf(sinks[id(step)], leaf_grads, state)
                leaf_grads = None
                continue
            args = op.getter(values)
            if op.outs is None:
                out = values[op.out]
            else:
                # zeros for outputs no gradient reached, as eager materializes them
                grad = [np.zeros(*meta) if g is None else g for g, meta in zip(grad, step[2])]
                out = tuple(values[index] for index in op.outs)
            # what the forward kept lives until its backward
            kept = () if op.keep is None else (values[op.keep],)
            if op.stands_for is None:
                # a backward of several array pieces hands each one's flags to the sentinel
                # itself (as `finish_array_backward` does in eager), as its node's
                node = _node(op)
                nodes[node] = 0
                state.backward_node = node
                grads = op.backward(grad, out, *kept, *args)
                state.backward_node = None
            else:
                grads = op.backward(grad, out, *kept, *args)
                if state.pending_flags is not None:
                    _backward_flags(op, grad, grads, args, out, state, nodes)
            if kept:
                values[op.keep] = kept = None
            for input_index, target, output_nr in step[1]:
                result = grads[input_index]
                if result is None:
                    continue
                if sizes[target] == 1:
                    existing = buffers[target]
                    if existing is None:
                        buffers[target] = result
                        continue
                    total = buffers[target] = np.add(existing, result)
                else:
                    several = buffers[target]
                    if several is None:
                        several = buffers[target] = [None] * sizes[target]
                    existing = several[output_nr]
                    if existing is None:
                        several[output_nr] = result
                        continue
                    total = several[output_nr] = np.add(existing, result)
                if state.pending_flags is not None:
                    _accumulation_flags(steps[target], sinks, result, total, state, nodes)
            grad = grads = result = existing = total = out = args = several = None


@contextmanager
def backward_pass(root: TensorBase, nodes: dict, state: Any) -> Iterator[None]:
    """A replayed engine pass as the sentinel sees one: begun at `root` over `nodes` (which
    may still grow), finished, or aborted on an error; the running node is put back."""
    mark = observers.backward_started((root,), nodes)
    previous_node = state.backward_node
    try:
        yield
    except BaseException:
        observers.backward_aborted(mark)
        raise
    finally:
        state.backward_node = previous_node
    observers.backward_finished(mark, nodes)


def sink_now(recorded: AccumulateGrad, argument: Any, values: list) -> AccumulateGrad:
    """The sink of the leaf this call passed where the recording had `recorded`'s leaf (the
    `argument` slot, or None for a tensor from outside the call's arguments): another tensor
    of the same shape and dtype may be passed, whose own .grad it is."""
    if argument is not None:
        variable = values[argument.index]
        if variable is not recorded.variable:
            return accumulator_for(variable)
    return recorded


def write_leaf(sink: AccumulateGrad, grads: list, state: Any) -> None:
    """A gradient reaching a leaf's sink in a replay: the leaf's hooks, as the engine runs
    them (one registered after the recording too), then into its `.grad`."""
    variable = sink.variable
    if variable._backward_hooks:
        grads[0] = engine._run_hooks(variable._backward_hooks, grads[0])
    if sink.pre_hooks:
        grads = engine._run_node_pre_hooks(sink, grads)
    if grads[0] is not None and variable._requires_grad:
        engine._write_leaf_grad(sink, grads, False, state)


def _backward_flags(op: _FlatOp, grad: Any, grads: tuple, args: tuple, out: Any, state: Any,
                    nodes: dict) -> None:  # fmt: skip
    node = _node(op)
    nodes[node] = 0
    state.backward_node = node
    inner = _new_node(Node)
    inner.function = op.stands_for
    made = tuple(_wrap(g) for g in grads if g is not None)
    # the incoming gradients and the outputs, one by one (an op of several has lists of them)
    received = (grad, out) if op.outs is None else (*grad, *out)
    observers.after_forward(inner, as_tensors(received + args), made)


def _accumulation_flags(target: tuple, sinks: dict, grad: Any, total: Any, state: Any,
                        nodes: dict) -> None:  # fmt: skip
    owner = sinks[id(target)] if target[0] is None else _node(target[0])
    nodes[owner] = 0
    state.accumulating = owner
    try:
        observers.after_forward(owner, (_wrap(grad),), (_wrap(total),))
    finally:
        state.accumulating = None
