"""Backward engine: runs Nodes in dependency order and accumulates gradients.

`run_backward` is the one engine entry, and its loop is the pass. What every node does (the
common backward call, freeing what it saved, routing its gradients) stays inline; the sections
below hold what only some nodes need (setup, hooks, captures and `.grad`, the general backward
call, conforming and summing), so the common node pays no extra call. `backward()` and
`grad()` (at the end) check their arguments and call it.
The graph is walked iteratively (deep chains need no recursion), ready nodes run in a
deterministic order (later-created first, leaf sinks as soon as they are ready), and every
gradient is checked against the shape of the input it belongs to.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import observers
from lucid._core.dtypes import FLOAT_KINDS, complex_use, from_numpy_dtype
from lucid._core.function import HOLOMORPHIC
from lucid._core.grad_mode import local_state
from lucid._core.graph import FREED_MESSAGE, AccumulateGrad, accumulator_for
from lucid._core.tensor import TensorBase, _wrap

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["backward", "grad", "run_backward"]

_getrefcount = sys.getrefcount


def run_backward(
    outputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate_grad: bool = True,
) -> list[Tensor | None] | None:
    """Backpropagate `grad_outputs` from `outputs`.

    With `accumulate_grad` (backward) gradients are added into `.grad`: of every leaf, or of
    `inputs` only when given. Without it (grad) nothing is written and the gradients of
    `inputs` are returned, None where an input was not reached.
    """
    root_edges = [_edge_to(tensor) for tensor in outputs]
    # With `inputs`, only the nodes leading to them run (`executes`), and the gradients
    # arriving at their nodes are `captured`.
    captures: dict[Any, list[tuple[int, int]]] | None = None
    executes: set | None = None
    captured: list[Tensor | None] = []
    if inputs is not None:
        captures = _captures_of(inputs)
        executes = _nodes_leading_to(root_edges, captures)
        captured = [None] * len(inputs)

    dependencies = _count_dependencies(root_edges, executes, captures)
    buffers, ready = _seed(root_edges, grad_outputs, dependencies)
    order = len(ready)  # ties in sequence_nr go first-in, first-out

    state = local_state
    # the order nodes are taken up in, for lucid.compile's recording of this pass
    taken = state.backward_order
    sentinel_mark = observers.backward_started(outputs, dependencies)
    previous_mode = state.enabled
    previous_node = state.backward_node
    state.enabled = create_graph
    token = observers.numpy_state.set(state.numpy_extobj)
    # The node whose evaluation observers were told of, and whether it runs. It ends when the
    # next node is popped or the pass stops (also on an error), so the loop keeps its `continue`s.
    evaluating = None
    try:
        while ready:
            if evaluating is not None:
                observers.after_evaluate(*evaluating)
                evaluating = None
            node = heappop(ready)[2]
            if taken is not None:
                taken.append(node)
            grads = buffers.pop(node)
            state.backward_node = node
            is_leaf_sink = node.__class__ is AccumulateGrad
            if state.observers:
                # A node reached only to capture its gradient (autograd.grad) does not run.
                runs = executes is None or node in executes or (is_leaf_sink and accumulate_grad)
                evaluating = (node, runs)
                observers.before_evaluate(node, runs)

            # Hooks see the gradients first and may replace them.
            if is_leaf_sink:
                if node.variable._backward_hooks:
                    grads[0] = _run_hooks(node.variable._backward_hooks, grads[0])
            elif node.tensor_pre_hooks is not None or node.retained_outputs is not None:
                _run_tensor_hooks(node, grads, create_graph)
            if node.pre_hooks:
                grads = _run_node_pre_hooks(node, grads)

            if captures is not None:
                capture = captures.get(node)
                if capture is not None:
                    _capture(capture, grads, captured, inputs, accumulate_grad, create_graph)
                if node not in executes:
                    continue
            elif is_leaf_sink:
                # A leaf that stopped requiring grad (detach_) after it was used gets none.
                if accumulate_grad and grads[0] is not None and node.variable._requires_grad:
                    _write_leaf_grad(node, grads, create_graph, state)
                continue

            # The node's backward.
            input_edges = node.input_edges
            function = node.function
            if len(grads) == 1 and not state.observers and not node.post_hooks:
                # The common case, inline: one output, no observers, no node hooks.
                if grads[0] is None:
                    grad_inputs = (None,) * len(input_edges)
                else:
                    if complex_use.in_use and function._complex_rule == HOLOMORPHIC:
                        grad_inputs = _holomorphic_backward(node, grads[0])
                    else:
                        grad_inputs = function.backward(node, grads[0])
                    if type(grad_inputs) is not tuple:
                        grad_inputs = (grad_inputs,)
                    if len(grad_inputs) != len(input_edges):
                        grad_inputs = _check_gradient_count(node, grad_inputs)
            elif grads[0] is None and all(grad is None for grad in grads):
                grad_inputs = (None,) * len(input_edges)
            else:
                grad_inputs = _call_backward(node, grads, state.observers)
            grads = None
            # Unless retain_graph, what the node saved is freed. A node whose ctx keeps values
            # instead of saved tensors is marked freed too: its backward reads no saved tensor
            # (whose check raises this), so a second one is refused here, before its gradients
            # go on.
            if retain_graph:
                if node.is_freed and function._keeps_values_for_backward:
                    raise RuntimeError(FREED_MESSAGE)
            elif node.saved is not None or node.to_save:
                node.free_saved()
            elif function._keeps_values_for_backward:
                if node.is_freed:
                    raise RuntimeError(FREED_MESSAGE)
                node.is_freed = True

            # Its gradients go on to the nodes of its inputs, conformed to each input's shape
            # and dtype and summed with those already waiting there.
            for index, edge in enumerate(input_edges):
                if edge is None:
                    continue
                next_node, output_nr = edge
                if next_node is None:
                    continue
                if (
                    executes is not None
                    and next_node not in executes
                    and (next_node not in captures)
                ):
                    continue
                grad = grad_inputs[index]
                buffer = buffers.get(next_node)
                if grad is not None:
                    if next_node.__class__ is AccumulateGrad:
                        expected = next_node.variable._data
                        expected_shape, expected_dtype = expected.shape, expected.dtype
                    else:
                        expected_shape, expected_dtype = next_node.output_meta[output_nr]
                    try:
                        array = grad._data
                    except AttributeError:
                        raise RuntimeError(
                            f"expected Variable or None (got {type(grad).__name__})"
                        ) from None
                    if array.shape != expected_shape or (
                        array.dtype is not expected_dtype and array.dtype != expected_dtype
                    ):
                        grad = _conform(node, index, grad, expected_shape, expected_dtype)
                    if buffer is None:
                        buffer = buffers[next_node] = [None] * len(next_node.output_meta)
                        buffer[output_nr] = grad
                    elif buffer[output_nr] is None:
                        buffer[output_nr] = grad
                    else:
                        _add_to_buffer(buffer, output_nr, grad, next_node, create_graph, state)
                elif buffer is None:
                    buffers[next_node] = [None] * len(next_node.output_meta)
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    order += 1
                    heappush(ready, (-next_node.sequence_nr, order, next_node))
            # Drop the loop's own references so a leaf can take its gradient without a copy.
            grad = grad_inputs = buffer = array = None
    except BaseException:
        # a pass that raised (a KeyboardInterrupt too) reports nothing, but must end what its
        # start began
        observers.backward_aborted(sentinel_mark)
        raise
    finally:
        if evaluating is not None:
            observers.after_evaluate(*evaluating)
        observers.numpy_state.reset(token)
        state.enabled = previous_mode
        state.backward_node = previous_node

    if state.observers:
        observers.after_backward_pass(
            [node.variable for node in dependencies if node.__class__ is AccumulateGrad]
        )
    observers.backward_finished(sentinel_mark, dependencies)
    if inputs is not None and not accumulate_grad:
        return captured
    return None


# ------------------------------------------------- setup: roots, captures, dependencies, seeds
def _edge_to(tensor: Tensor) -> tuple[Any, int]:
    """The node a tensor's gradient goes to (its grad_fn, or a leaf's sink) and its slot."""
    grad_fn = tensor._grad_fn
    if grad_fn is None:
        return accumulator_for(tensor), 0
    return grad_fn, tensor._output_nr


def _captures_of(inputs: Sequence[Tensor]) -> dict[Any, list[tuple[int, int]]]:
    """node -> (output_nr, position in `inputs`) of each input whose gradient it receives."""
    captures: dict[Any, list[tuple[int, int]]] = {}
    for index, tensor in enumerate(inputs):
        node, output_nr = _edge_to(tensor)
        captures.setdefault(node, []).append((output_nr, index))
    return captures


def _nodes_leading_to(root_edges: list, captures: dict) -> set:
    """Nodes whose backward must run so that gradients reach the captured nodes."""
    executes: set = set()
    visited: set = set()
    for root, _ in root_edges:
        if root in visited:
            continue
        # One root's walk finishes before the next starts: a root reached from another root
        # must have its answer before that root's is decided (roots pushed together would
        # leave it pending, and the root reaching it would be wrongly left out).
        visited.add(root)
        stack: list[tuple[Any, int]] = [(root, 0)]
        # Iterative post-order: a node executes if any of its next nodes is captured or
        # executes.
        while stack:
            node, child_index = stack[-1]
            edges = node.input_edges
            if child_index < len(edges):
                stack[-1] = (node, child_index + 1)
                child = edges[child_index][0] if edges[child_index] is not None else None
                if child is not None and child not in visited:
                    visited.add(child)
                    stack.append((child, 0))
                continue
            stack.pop()
            for edge in edges:
                child = edge[0] if edge is not None else None
                if child is not None and (child in executes or child in captures):
                    executes.add(node)
                    break
    return executes


def _count_dependencies(root_edges: list, executes: set | None, captures: dict | None) -> dict:
    dependencies: dict[Any, int] = {}
    stack = []
    for node, _ in root_edges:
        if node in dependencies:
            dependencies[node] += 1
        else:
            dependencies[node] = 1
            stack.append(node)
    if executes is None:
        # every node runs (backward() without inputs=): the walk with one lookup per edge
        get = dependencies.get
        while stack:
            for edge in stack.pop().input_edges:
                if edge is None:
                    continue
                child = edge[0]
                if child is None:
                    continue
                count = get(child)
                if count is None:
                    dependencies[child] = 1
                    stack.append(child)
                else:
                    dependencies[child] = count + 1
        return dependencies
    while stack:
        node = stack.pop()
        if node not in executes:
            continue
        for edge in node.input_edges:
            if edge is None or edge[0] is None:
                continue
            child = edge[0]
            if child not in executes and child not in captures:
                continue
            if child in dependencies:
                dependencies[child] += 1
            else:
                dependencies[child] = 1
                stack.append(child)
    return dependencies


def _seed(root_edges: list, grad_outputs: Sequence[Tensor], dependencies: dict) -> tuple:
    """The roots' gradients in their nodes' buffers, and the roots that are ready, as a heap."""
    buffers: dict[Any, list[Tensor | None]] = {}
    ready: list[tuple[int, int, Any]] = []
    for (node, output_nr), grad in zip(root_edges, grad_outputs):
        buffer = buffers.get(node)
        if buffer is None:
            buffer = buffers[node] = [None] * len(node.output_meta)
        buffer[output_nr] = grad if buffer[output_nr] is None else buffer[output_nr] + grad
        dependencies[node] -= 1
        if dependencies[node] == 0:
            ready.append((-node.sequence_nr, len(ready), node))
    heapify(ready)
    return buffers, ready


# ------------------------------------------------- hooks
def _run_tensor_hooks(node: Any, grads: list[Tensor | None], create_graph: bool) -> None:
    hooks_by_output = node.tensor_pre_hooks
    if hooks_by_output:
        for output_nr, hooks in hooks_by_output.items():
            grads[output_nr] = _run_hooks(hooks, grads[output_nr])
    retained = node.retained_outputs
    if retained:
        for output_nr, reference in retained.items():
            tensor = reference()
            if tensor is not None and grads[output_nr] is not None:
                _accumulate_into(tensor, grads[output_nr], create_graph)


def _run_node_pre_hooks(node: Any, grads: list[Tensor | None]) -> list[Tensor | None]:
    for hook in tuple(node.pre_hooks.values()):
        result = hook(tuple(grads))
        if result is not None:
            grads = list(result)
    return grads


def _run_hooks(hooks: dict, grad: Tensor | None) -> Tensor | None:
    for hook in tuple(hooks.values()):
        if grad is None:
            break
        result = hook(grad)
        if result is not None:
            _check_hook_result(hook, grad, result)
            grad = result
    return grad


def _check_hook_result(hook: Any, grad: Tensor, result: Any) -> None:
    """A tensor hook may replace the gradient, but not change its type or size (PyTorch's
    errors, the type checked first)."""
    if not isinstance(result, TensorBase):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._data.dtype != grad._data.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has changed the type of value (was {grad.type()} got "
            f"{result.type()})"
        )
    if result._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _hook_name(hook: Any) -> str:
    # PyTorch's name for a hook: its __name__, which partials and callable objects lack
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


# ------------------------------------------------- accumulation: captured gradients, .grad
def _capture(
    capture: list,
    grads: list,
    captured: list,
    inputs: Any,
    accumulate_grad: bool,
    create_graph: bool,
) -> None:
    """Keep the gradients arriving for `inputs` (autograd.grad, backward(inputs=...))."""
    for output_nr, index in capture:
        captured[index] = grads[output_nr]
        if accumulate_grad:
            _accumulate_into(inputs[index], grads[output_nr], create_graph)


def _write_leaf_grad(node: AccumulateGrad, grads: list, create_graph: bool, state: Any) -> None:
    """Add the gradient arriving at a leaf's sink into its `.grad`, then run the sink's hooks.

    `grads[0]` is read in place, never kept in a local: the engine's list must stay the only
    other reference, so that a first gradient can become `.grad` without a copy.
    """
    variable = node.variable
    if variable._grad is None:
        _accumulate_into(variable, grads[0], create_graph)
    elif state.observers and observers.checks_accumulation():
        previous = variable._grad
        # Out of place, so the check can still see both parts. (A first write needs no
        # check: the gradient was checked as it was made.)
        _accumulate_into(variable, grads[0], True)
        observers.after_accumulate(node, variable._grad, (previous, grads[0]))
    else:
        # A sum that overflows is a birth in accumulation, at this leaf's sink.
        state.accumulating = node
        try:
            _accumulate_into(variable, grads[0], create_graph)
        finally:
            state.accumulating = None
    if node.post_hooks:
        for hook in tuple(node.post_hooks.values()):
            hook((), tuple(grads))


def _accumulate_into(variable: Tensor, grad: Tensor | None, create_graph: bool) -> None:
    """Add `grad` into `variable.grad` as PyTorch's AccumulateGrad does."""
    if grad is None:
        return
    existing = variable._grad
    if existing is None:
        # The caller's list of gradients and this function's argument: two references.
        if create_graph:
            variable._grad = grad if _is_exclusive(grad, 2) else grad.clone()
        elif _is_exclusive(grad, 2) and grad._grad_fn is None and not grad._requires_grad:
            # A view no one else sees (a weight's gradient computed transposed) is kept as a
            # tensor of its own: a `.grad` is never a view, as in PyTorch.
            variable._grad = grad if grad._base is None else _wrap(grad._data)
        else:
            variable._grad = _wrap(grad._data.copy())
    elif create_graph or existing._grad_fn is not None or existing._requires_grad:
        variable._grad = existing + grad
    else:
        existing.add_(grad)


def _is_exclusive(grad: Tensor, engine_references: int) -> bool:
    """True when nothing but the engine can see `grad`, so it may be kept or summed into.

    `engine_references` counts the caller's own references to the tensor (its locals and
    lists); this call's argument and getrefcount's add two more. The array must be
    referenced by this tensor alone (the tensor's reference, the local `array` and
    getrefcount's argument: 3), and when it is a view, its base by that view alone.
    """
    array = grad._data
    if not (
        array.flags.writeable
        and array.flags.c_contiguous
        and _getrefcount(array) == 3
        and _getrefcount(grad) <= engine_references + 2
    ):
        return False
    base = array.base
    if base is None:
        return True
    if base.__class__ is not np.ndarray:
        return False
    # The view's reference, this local and the getrefcount argument: 3; and one more where
    # the view's autograd base is the tensor of that array, which only the view may hold
    # (its `_base`, this local and the argument: 3).
    expected = 3
    holder = grad._base
    if holder is not None and holder._data is base:
        if _getrefcount(holder) != 3:
            return False
        expected = 4
    return _getrefcount(base) == expected


# ------------------------------------------------- a node's backward
def _call_backward(node: Any, grads: list[Tensor | None], active_observers: tuple) -> tuple:
    meta = node.output_meta
    if len(grads) > 1 and node.materialize_grads:
        for output_nr, grad in enumerate(grads):
            if grad is None and meta[output_nr] is not None:
                shape, dtype = meta[output_nr]
                grads[output_nr] = _zeros(shape, dtype)
    backward = node.function.backward
    if complex_use.in_use and node.function._complex_rule == HOLOMORPHIC:
        backward = _holomorphic_backward
    if active_observers:
        observers.before_backward(node, tuple(grads))
        try:
            result = backward(node, *grads)
        except Exception as error:
            observers.on_backward_error(node, error)
            raise
    else:
        result = backward(node, *grads)
    if type(result) is not tuple:
        result = (result,)
    if len(result) != len(node.input_edges):
        result = _check_gradient_count(node, result)
    if node.post_hooks:
        for hook in tuple(node.post_hooks.values()):
            replaced = hook(result, tuple(grads))
            if replaced is not None:
                result = tuple(replaced)
    if active_observers:
        observers.after_backward(node, tuple(grads), result)
    return result


def _holomorphic_backward(node: Any, *grads: Tensor | None) -> Any:
    """A holomorphic op's backward under PyTorch's convention: its real formula, handed the
    conjugated gradients, conjugated back (Function's HOLOMORPHIC). Real gradients pass as
    they are."""
    if not any(grad is not None and grad._data.dtype.kind == "c" for grad in grads):
        return node.function.backward(node, *grads)
    result = node.function.backward(node, *[_conj(grad) for grad in grads])
    if type(result) is not tuple:
        return _conj(result)
    return tuple(_conj(grad) for grad in result)


def _conj(grad: Tensor | None) -> Tensor | None:
    if grad is None or grad._data.dtype.kind != "c":
        return grad
    return grad.conj()


def _check_gradient_count(node: Any, result: tuple) -> tuple:
    """Trailing Nones beyond the forward's arguments are dropped; any other count is an error."""
    expected = len(node.input_edges)
    if len(result) > expected and all(extra is None for extra in result[expected:]):
        return result[:expected]
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients "
        f"(expected {expected}, got {len(result)})"
    )


def _zeros(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return _wrap(np.zeros(shape, dtype))


# ------------------------------------------------- routing: conforming and summing gradients
def _conform(
    node: Any, index: int, grad: Tensor, shape: tuple[int, ...], numpy_dtype: Any
) -> Tensor:
    """Fit a gradient to its input's metadata, as PyTorch does: a gradient of a shape the
    input broadcasts to is summed down to it, a different dtype is cast; any other shape
    is an error."""
    grad_shape = grad._data.shape
    if grad_shape != shape:
        if not _is_expandable_to(shape, grad_shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(grad_shape)} but expected shape compatible with {list(shape)}"
            )
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != numpy_dtype:
        if grad._data.dtype.kind == "c" and numpy_dtype.kind != "c":
            # A real input's gradient is the real part of what reached it (PyTorch's rule).
            grad = grad.real
        grad = grad.to(_dtype_of(numpy_dtype))
    return grad


def _is_expandable_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    if len(shape) > len(target):
        return False
    for size, target_size in zip(reversed(shape), reversed(target)):
        if size != target_size and size != 1:
            return False
    return True


def _dtype_of(numpy_dtype: Any) -> Any:
    return from_numpy_dtype(numpy_dtype)


def _add_to_buffer(
    buffer: list, output_nr: int, grad: Tensor, node: Any, create_graph: bool, state: Any
) -> None:
    """Sum `grad` with the gradient already waiting for `node`'s output `output_nr`.

    Shapes and dtypes already match. Without create_graph or a checking observer the first
    gradient is summed into in place when no one else can see it, as PyTorch's input buffer
    does; otherwise a new tensor holds the sum.
    """
    existing = buffer[output_nr]
    if create_graph or (state.observers and observers.checks_accumulation()):
        total = buffer[output_nr] = existing + grad
        if state.observers:
            observers.after_accumulate(node, total, (existing, grad))
        return
    buffer[output_nr] = None
    if _is_exclusive(existing, 1):
        np.add(existing._data, grad._data, out=existing._data)
        buffer[output_nr] = existing
    else:
        buffer[output_nr] = _wrap(np.add(existing._data, grad._data))
    if state.pending_flags is not None:
        # The sum itself overflowed or met inf - inf: a birth there.
        state.accumulating = node
        observers.after_forward(node, (grad,), (buffer[output_nr],))
        state.accumulating = None


# ------------------------------------------------- entry points: backward() and grad()
def _as_tuple(tensors: Tensor | Sequence[Tensor] | None) -> tuple:
    if tensors is None:
        return ()
    if isinstance(tensors, TensorBase):
        return (tensors,)
    return tuple(tensors)


def _make_grads(
    outputs: tuple[Tensor, ...], grads: tuple, is_grads_batched: bool = False
) -> list[Tensor]:
    seeds = []
    for index, (output, grad) in enumerate(zip(outputs, grads)):
        if grad is None:
            if output._requires_grad:
                if output._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if output._data.dtype.kind not in FLOAT_KINDS:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{output.dtype}"
                    )
            seeds.append(_wrap(np.ones(output._data.shape, output._data.dtype)))
            continue
        if not isinstance(grad, TensorBase):
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(grad).__name__
            )
        if grad._data.shape != output._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of {grad.shape} and "
                f"output[{index}] has a shape of {output.shape}."
            )
        if grad._data.dtype != output._data.dtype:
            # PyTorch accepts a seed of another real dtype and casts it to the output's.
            grad = grad.to(output.dtype)
        seeds.append(grad)
    return seeds


def _check_requires_grad(outputs: tuple[Tensor, ...]) -> None:
    for index, output in enumerate(outputs):
        if not isinstance(output, TensorBase):
            raise TypeError(f"expected a Tensor in outputs, got {type(output).__name__}")
        if not output.requires_grad:  # the property: a view written since is brought up to date
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a grad_fn"
            )


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate into `.grad` of the leaves (or of `inputs`) the gradients of `tensors`.

    Example::

        x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
        lucid.autograd.backward((x * x).sum())   # x.grad == tensor([2., 4., 6.])
    """
    recorder = local_state.recorder
    if recorder is not None:  # lucid.compile records the pass, to run it as it is
        return recorder.call(backward, tensors, grad_tensors, retain_graph, create_graph,
                             grad_variables, inputs)  # fmt: skip
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError(
                "'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                "backward(). Please only use 'grad_tensors'."
            )
        grad_tensors = grad_variables
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    _check_requires_grad(outputs)
    seeds = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    input_tuple = _as_tuple(inputs) if inputs is not None else None
    if input_tuple is not None:
        _check_inputs(input_tuple)
    run_backward(outputs, seeds, retain_graph, create_graph, input_tuple, accumulate_grad=True)


def _check_inputs(inputs: tuple) -> None:
    for input in inputs:
        if not isinstance(input, TensorBase):
            raise TypeError(f"expected Tensor inputs, got {type(input).__name__}")
        if not input.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, without touching `.grad`.

    Example::

        x = lucid.tensor(3.0, requires_grad=True)
        (dx,) = lucid.autograd.grad(x ** 2, x)   # tensor(6.)
    """
    recorder = local_state.recorder
    if recorder is not None:
        return recorder.call(
            grad, outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs,
            allow_unused, is_grads_batched, materialize_grads,
        )  # fmt: skip
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by lucid")
    output_tuple = _as_tuple(outputs)
    input_tuple = _as_tuple(inputs)
    if len(input_tuple) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(output_tuple)
    if len(grads) != len(output_tuple):
        raise RuntimeError(f"got {len(output_tuple)} tensors and {len(grads)} gradients")
    _check_requires_grad(output_tuple)
    _check_inputs(input_tuple)
    seeds = _make_grads(output_tuple, grads)
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(
        output_tuple, seeds, retain_graph, create_graph, input_tuple, accumulate_grad=False
    )
    assert result is not None
    for index, value in enumerate(result):
        if value is None:
            if materialize_grads:
                result[index] = _wrap(np.zeros_like(input_tuple[index]._data))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
    return tuple(result)
