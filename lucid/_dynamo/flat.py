"""The flat replay: a lean recording whose every op has array kernels, replayed on arrays.

A lean replay (recording.py) still runs each op's `forward(ctx, ...)` and `backward`, which
make a `Node` and wrap every result in a `Tensor`: about 2 us per op around a ufunc of 0.3 us
on small tensors. An op class may instead give `flat_kernels(args, needs_input_grad)`: for the
arguments it was recorded with (a tensor's array, or the constant), either None or
`(forward, backward, stands_for)`, where `forward(*args)` is the array its forward makes and
`backward(grad, out, *args)` the gradient arrays its backward makes (None where not needed),
both computed by the very NumPy calls of the op's own paths, so the results are bitwise equal
(tests/test_compile.py). When every op of a recording has them, and the recording holds only
ops, backward passes and `.grad` writes, the replay is a loop of kernel calls over a list of
arrays: no `Node`, no `Tensor`, no dispatch, except where a value leaves the call (a leaf's
`.grad`, the call's result) and on the rare path of a floating-point flag, where the op's
node is made and the sentinel hears of it as from the op itself (`stands_for` names the op a
backward's arrays compute, as `finish_array_backward` does).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from lucid._core import engine, observers
from lucid._core.grad_mode import local_state
from lucid._core.graph import AccumulateGrad, Node, accumulator_for
from lucid._core.tensor import TensorBase, _wrap

_FORWARD, _BACKWARD, _SET_GRAD = range(3)
_new_node = object.__new__


class _FlatOp:
    """One op: its kernels, where its arguments and output live, and how to name it."""

    __slots__ = ("forward", "backward", "stands_for", "getter", "out", "prototype", "site")

    def __init__(self, kernels: tuple, getter: Any, out: int, prototype: dict, site: Any):
        self.forward, self.backward, self.stands_for = kernels
        self.getter = getter
        self.out = out
        self.prototype = prototype
        self.site = site


class _FlatPass:
    """One backward pass: the root's slot, and per step (op, routes) or (None, sink, the
    leaf's argument slot or None), routes being (input index, step position) pairs."""

    __slots__ = ("root", "steps")

    def __init__(self, root: int, steps: list) -> None:
        self.root = root
        self.steps = steps


class FlatProgram:
    """The steps of a flat replay, and the constant slots that hold tensors, whose arrays are
    read on each replay (`.data =` may have replaced one since)."""

    __slots__ = ("steps", "tensor_slots")

    def __init__(self, steps: list, tensor_slots: list) -> None:
        self.steps = steps
        self.tensor_slots = tensor_slots


def make_flat(entries: list, record_values: list, input_count: int, first_constant: int,
              kinds: tuple) -> FlatProgram | None:  # fmt: skip
    """The flat program of lean `entries`, or None where some entry has no flat form.

    `record_values` is the replay's slot list as the recording filled it (the constants from
    `first_constant` on); `kinds` the entry kinds (_SET_GRAD, _LEAN_OP, _LEAN_BACKWARD) and
    the `_Slot` class of recording.py.
    """
    set_grad, lean_op, lean_backward, slot_class = kinds
    ops: dict[int, _FlatOp] = {}  # by context slot
    program: list = []
    for entry in entries:
        kind = entry[0]
        if kind == lean_op:
            _, function, getter, kwargs, outputs, site, prototype, context_slot, out = entry
            # the class's own: an in-place form inherits its op's kernels, which do not write
            builder = vars(function).get("flat_kernels")
            if builder is None or out is False or kwargs or getter.__class__ is tuple:
                return None
            args = getter(record_values)
            arrays = tuple(a._data if isinstance(a, TensorBase) else a for a in args)
            kernels = builder(arrays, prototype["needs_input_grad"])
            if kernels is None:
                return None
            op = ops[context_slot] = _FlatOp(kernels, getter, out, prototype, site)
            program.append((_FORWARD, op))
        elif kind == lean_backward:
            plan = _flat_pass(entry[1], ops, record_values)
            if plan is None:
                return None
            program.append((_BACKWARD, plan))
        elif kind == set_grad:
            _, tensor, value = entry
            if value.__class__ is slot_class or isinstance(value, TensorBase):
                return None
            if tensor.__class__ is slot_class:
                if tensor.index >= input_count:
                    return None
                program.append((_SET_GRAD, (tensor.index, None, value)))
            else:
                program.append((_SET_GRAD, (None, tensor, value)))
        else:
            return None
    tensor_slots = [
        index
        for index in range(first_constant, len(record_values))
        if isinstance(record_values[index], TensorBase)
    ]
    return FlatProgram(program, tensor_slots)


def _flat_pass(plan: Any, ops: dict, record_values: list) -> _FlatPass | None:
    steps: list = []
    for context_slot, function, routes, _, output_meta in plan.steps:
        if context_slot is None:  # a leaf's sink; `routes` holds its argument slot or None
            steps.append((None, function, routes))
            continue
        op = ops.get(context_slot)
        if op is None or len(output_meta) != 1:
            return None
        args = op.getter(record_values)
        flat_routes = []
        for input_index, target, output_nr, shape, dtype, _ in routes:
            arg = args[input_index]
            # the kernels give each gradient its input's shape and dtype: eager's conform
            # step would do nothing
            if not isinstance(arg, TensorBase) or output_nr != 0:
                return None
            if arg._data.shape != shape or arg._data.dtype != dtype:
                return None
            flat_routes.append((input_index, target))
        steps.append((op, tuple(flat_routes)))
    return _FlatPass(plan.root, steps)


def replay_flat(program: FlatProgram, values: list, inputs: list) -> None:
    """Run `program` over `values` (the replay's slot list, holding tensors at the inputs and
    at tensor constants): arrays replace them first, and every slot holds an array after."""
    for index, tensor in enumerate(inputs):
        values[index] = tensor._data
    for index in program.tensor_slots:
        values[index] = values[index]._data
    state = local_state
    for kind, payload in program.steps:
        if kind == _FORWARD:
            op = payload
            values[op.out] = op.forward(*op.getter(values))
            if state.pending_flags is not None:
                _forward_flags(op, values, state)
        elif kind == _BACKWARD:
            _backward(payload, values, inputs, state)
        else:
            index, tensor, value = payload
            (tensor if index is None else inputs[index])._grad = value


def _node(op: _FlatOp) -> Node:
    """The op's node for the NaN tiers, made only when a flag fired."""
    node = _new_node(Node)
    node.__dict__.update(op.prototype)
    return node


def _tensors(arrays: tuple) -> tuple:
    return tuple(_wrap(a) if isinstance(a, np.ndarray | np.generic) else a for a in arrays)


def _forward_flags(op: _FlatOp, values: list, state: Any) -> None:
    node = _node(op)
    state.replay_site = op.site
    try:
        observers.after_forward(node, _tensors(op.getter(values)), (_wrap(values[op.out]),))
    finally:
        state.replay_site = None


def _backward(plan: _FlatPass, values: list, inputs: list, state: Any) -> None:
    root = values[plan.root]
    steps = plan.steps
    sinks = {id(step): sink_now(step[1], step[2], inputs) for step in steps if step[0] is None}
    # the nodes the sentinel's root and end-of-pass checks look for births and leaves in
    nodes = dict.fromkeys(sinks.values(), 0)
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
            grads = op.backward(grad, values[op.out], *args)
            if state.pending_flags is not None:
                _backward_flags(op, grad, grads, args, values[op.out], state, nodes)
            for input_index, target in step[1]:
                result = grads[input_index]
                if result is None:
                    continue
                existing = buffers[target]
                if existing is None:
                    buffers[target] = result
                    continue
                total = buffers[target] = np.add(existing, result)
                if state.pending_flags is not None:
                    _accumulation_flags(steps[target], sinks, result, total, state, nodes)
            grad = grads = result = existing = total = None


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
    observers.after_forward(inner, _tensors((grad, out) + args), made)


def _accumulation_flags(target: tuple, sinks: dict, grad: Any, total: Any, state: Any,
                        nodes: dict) -> None:  # fmt: skip
    owner = sinks[id(target)] if target[0] is None else _node(target[0])
    nodes[owner] = 0
    state.accumulating = owner
    try:
        observers.after_forward(owner, (_wrap(grad),), (_wrap(total),))
    finally:
        state.accumulating = None
