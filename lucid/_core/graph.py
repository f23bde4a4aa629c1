"""Graph nodes: Node (a recorded op, which is also its ctx) and AccumulateGrad (a leaf's sink).

Saved tensors live on the node as `(tensors, versions)`; `saved_tensors` checks each
version on unpack and the engine frees them after backward unless `retain_graph`.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.dtypes import INEXACT_KINDS
from lucid._core.grad_mode import local_state
from lucid._core.hooks import RemovableHandle
from lucid._core.tensor import InferenceVersion, TensorBase, _wrap

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["Node", "AccumulateGrad", "accumulator_for", "FREED_MESSAGE"]

# Creation order of nodes; the engine runs later-created nodes first, as PyTorch does.
_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


# PyTorch's refusal of an in-place write through a view, by how the view was made: who made
# it (its op, or the mode it was made in when it has no grad_fn), then why that forbids it.
_VIEW_MADE_WITHOUT_GRAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
)
_VIEW_MADE_IN_INFERENCE = (
    "A view was created in inference mode and is being modified inplace in normal mode."
)
_VIEW_MADE_BY = "Output {output_nr} of {op} is a view and is being modified inplace."
_VIEW_REFUSAL_REASONS = {
    "several": " This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one.",
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you want "
    "the inplace to be tracked).",
    "inference": " Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "inference_mode block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).",
    "custom": " This view was created inside a custom Function (or because an input was "
    "returned as-is) and the autograd logic to handle view+inplace would override the custom "
    "backward associated with the custom Function, leading to incorrect gradients. This "
    "behavior is forbidden. You can fix this by cloning the output of the custom Function.",
}


_INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)

_DETACHED_SAVED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead"
)


class _NodeHooks:
    """Hook registration shared by op nodes and leaf sinks (`pre_hooks`, `post_hooks`)."""

    __slots__ = ()

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after this node; it may return new grad_inputs."""
        if self.post_hooks is None:
            self.post_hooks = {}
        handle = RemovableHandle(self.post_hooks)
        self.post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_outputs)` runs before this node; it may return new grad_outputs."""
        if self.pre_hooks is None:
            self.pre_hooks = {}
        handle = RemovableHandle(self.pre_hooks)
        self.pre_hooks[handle.id] = fn
        return handle


def _held_nonfinite(tensor: Tensor) -> tuple[bool, bool]:
    """(holds nan, holds inf); isfinite raises no floating-point flag inside the op."""
    array = tensor._data
    if array.dtype.kind not in INEXACT_KINDS or np.isfinite(array).all():
        return (False, False)
    return (bool(np.isnan(array).any()), bool(np.isinf(array).any()))


# Set while a forward-mode dual level is open: a saved output's tangent passes to the alias
# `saved_tensors` makes of it (lucid.autograd.forward_ad).
saved_output_unpacked: Callable[[Tensor, Tensor], None] | None = None


class Node(_NodeHooks):
    """A recorded call of a Function: the `ctx` its forward saw and the `grad_fn` of its outputs.

    Class attributes are defaults, so creating a node only stores what differs.
    """

    function: Any = None
    needs_input_grad: tuple[bool, ...] = ()
    # One entry per forward argument: (node, output_nr) for a tensor, None for a non-tensor.
    input_edges: tuple[tuple[Any, int] | None, ...] = ()
    sequence_nr = -1
    materialize_grads = True
    output_meta: tuple[tuple[tuple[int, ...], Any] | None, ...] = ()
    to_save: tuple[Tensor | None, ...] | None = None
    dirty_tensors: tuple[Tensor, ...] = ()
    non_differentiable: tuple[Tensor, ...] = ()
    is_recording = False
    saved: tuple[Tensor | None, ...] | None = None
    saved_versions: tuple[int, ...] = ()
    saved_output_nrs: tuple[int, ...] = ()
    is_freed = False
    pre_hooks: dict[int, Callable] | None = None
    post_hooks: dict[int, Callable] | None = None
    tensor_pre_hooks: dict[int, dict[int, Callable]] | None = None
    retained_outputs: dict[int, weakref.ref] | None = None
    anomaly_info: Any = None
    # (code, instruction offset, module path) of the op's call, kept while the sentinel is on.
    forward_site: tuple | None = None
    parent: Node | None = None
    # In anomaly mode, (holds nan, holds inf) of each dirty tensor before the write.
    held_before_write: tuple[tuple[bool, bool], ...] = ()
    # What a custom Function's forward kept for its jvp (ctx.save_for_forward).
    saved_for_forward: tuple[Tensor | None, ...] | None = None
    # Set when the saved tensors were packed by saved_tensors_hooks: `saved` then holds what
    # the pack hook returned, and each read of `saved_tensors` calls this on it.
    unpack_hook: Callable[[Any], Tensor] | None = None

    # ----------------------------------------------------------- ctx methods
    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for backward; modifying them in place afterwards is an error.

        Types are checked when the node is recorded (Function.apply), not here: this runs
        in every op's forward, also when nothing is recorded.
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for the Function's `jvp` (forward-mode AD), read as `saved_tensors`."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare tensors the forward modifies in place (call before modifying them)."""
        for tensor in tensors:
            if tensor._version_counter.__class__ is InferenceVersion and not local_state.inference:
                raise RuntimeError(_INFERENCE_INPLACE_MESSAGE)
        for tensor in tensors:
            if tensor._base is not None:
                self._check_view_write(tensor)
            elif self.is_recording and tensor._grad_fn is None and tensor._requires_grad:
                raise RuntimeError(self._leaf_message("a leaf Variable"))
        self.dirty_tensors = tensors
        if local_state.anomaly_enabled:
            # Anomaly mode judges an in-place op against its inputs as they were before the
            # write (docs/numerics.md): what each dirty tensor held, read before the forward writes.
            self.held_before_write = tuple(_held_nonfinite(tensor) for tensor in tensors)

    def _check_view_write(self, view: Tensor) -> None:
        """PyTorch's errors for an in-place write through a view that autograd would record
        (also where the view's base requires grad but the view, made without grad, does not);
        recorded writes are then rebased onto the base (_core/views.py)."""
        base = view._base
        recorded = self.is_recording or (local_state.enabled and base._requires_grad)
        if not recorded:
            return
        creation = view._view_creation
        if creation is not None:
            kind = creation[0]
            if kind == "inference" and local_state.inference:
                return
            grad_fn = view._grad_fn
            if grad_fn is not None:
                made = _VIEW_MADE_BY.format(output_nr=view._output_nr, op=_op_name(grad_fn))
            elif kind == "inference":
                made = _VIEW_MADE_IN_INFERENCE
            else:
                made = _VIEW_MADE_WITHOUT_GRAD
            raise RuntimeError(made + _VIEW_REFUSAL_REASONS[kind])
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError(self._leaf_message("a view of a leaf Variable"))

    def _leaf_message(self, what: str) -> str:
        # PyTorch words this differently for built-in ops and custom Functions.
        is_builtin = self.function.__module__.startswith("lucid.")
        return (
            f"{what} that requires grad {'is being' if is_builtin else 'has been'} used in an "
            "in-place operation."
        )

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        if self.is_freed:
            raise RuntimeError(FREED_MESSAGE)
        saved = self.saved
        if saved is None:
            return self.to_save or ()
        if self.unpack_hook is not None:
            return self._unpack_with_hook(saved)
        if not self.saved_output_nrs:
            for tensor, version in zip(saved, self.saved_versions):
                # A tensor that requires no grad may be a saved non-leaf detached in place.
                if tensor is not None and (
                    tensor._version_counter[0] != version or not tensor._requires_grad
                ):
                    self._check_saved(tensor, version, -1)
            return saved
        unpacked = []
        for tensor, version, output_nr in zip(saved, self.saved_versions, self.saved_output_nrs):
            if tensor is None:
                unpacked.append(None)
                continue
            if tensor._version_counter[0] != version or (
                output_nr < 0 and not tensor._requires_grad
            ):
                self._check_saved(tensor, version, output_nr)
            if output_nr >= 0:
                tensor = self._saved_output(tensor, output_nr)
            unpacked.append(tensor)
        return tuple(unpacked)

    def _saved_output(self, tensor: Tensor, output_nr: int) -> Tensor:
        """A saved output is stored without its grad_fn (no reference cycle) and gets it back
        here, as an alias, so that double backward can differentiate through it."""
        alias = _wrap(tensor._data)
        alias._version_counter = tensor._version_counter
        alias._requires_grad = True
        alias._grad_fn = self
        alias._output_nr = output_nr
        if saved_output_unpacked is not None:
            saved_output_unpacked(tensor, alias)
        return alias

    def _unpack_with_hook(self, packed: tuple) -> tuple[Tensor | None, ...]:
        unpack = self.unpack_hook
        unpacked = []
        for value, output_nr in zip(packed, self.saved_output_nrs):
            if value is None:
                unpacked.append(None)
                continue
            tensor = unpack(value)
            if not isinstance(tensor, TensorBase):
                raise TypeError(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                    f"of type {type(tensor).__name__}"
                )
            if output_nr >= 0:
                tensor = self._saved_output(tensor, output_nr)
            unpacked.append(tensor)
        return tuple(unpacked)

    def _check_saved(self, tensor: Tensor, version: int, output_nr: int) -> None:
        """PyTorch's errors for a saved tensor modified in place since, or, when it was saved as
        a non-leaf input, detached in place since (the edge it came by is still this node's)."""
        if tensor._version_counter[0] != version:
            raise RuntimeError(_version_error(self, tensor, version, output_nr))
        if output_nr < 0:
            detached_from = getattr(tensor, "_detached_from", None)
            if detached_from is not None and detached_from in self.input_edges:
                raise RuntimeError(_DETACHED_SAVED_MESSAGE)

    # ---------------------------------------------------------- Node methods
    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """One (node, output_nr) pair per tensor input; (None, 0) where it needs no grad."""
        return tuple(edge for edge in self.input_edges if edge is not None)

    def name(self) -> str:
        function = self.function
        return function._backward_name or function.__name__ + "Backward"

    @property
    def metadata(self) -> dict:
        metadata = self.__dict__.get("_metadata")
        if metadata is None:
            metadata = self.__dict__["_metadata"] = {}
        return metadata

    def register_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if self.tensor_pre_hooks is None:
            self.tensor_pre_hooks = {}
        hooks = self.tensor_pre_hooks.setdefault(output_nr, {})
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def retain_output(self, tensor: Tensor) -> None:
        if self.retained_outputs is None:
            self.retained_outputs = {}
        self.retained_outputs[tensor._output_nr] = weakref.ref(tensor)

    def free_saved(self) -> None:
        self.saved = None
        self.to_save = None
        self.is_freed = True

    def __call__(self, *grad_outputs: Tensor | None) -> Any:
        return self.function.backward(self, *grad_outputs)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(_NodeHooks):
    """The sink of a leaf tensor: the engine adds the arriving gradient into `variable.grad`."""

    __slots__ = ("variable", "sequence_nr", "pre_hooks", "post_hooks", "__weakref__")

    next_functions = ()
    input_edges = ()
    output_meta = (None,)  # one output: the gradient arriving for the leaf
    needs_input_grad = (True,)
    tensor_pre_hooks = None
    retained_outputs = None
    anomaly_info = None

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        # Accumulators run as soon as they are ready: they sort after every op node.
        self.sequence_nr = 1 << 62
        self.pre_hooks = None
        self.post_hooks = None

    def name(self) -> str:
        return "lucid::autograd::AccumulateGrad"

    @property
    def metadata(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def leaves_reached(tensors: Iterable[Any]) -> dict[int, Tensor]:
    """The leaf tensors (by id) whose AccumulateGrad the graphs of `tensors` reach."""
    reached: dict[int, Tensor] = {}
    seen: set[int] = set()
    stack = [tensor.grad_fn for tensor in tensors if tensor.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached[id(variable)] = variable
            continue
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return reached


def accumulator_for(tensor: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad, shared by every op that reads the leaf while it is alive.

    The tensor holds it weakly, so leaf and sink form no reference cycle.
    """
    reference = tensor._grad_accumulator
    if reference is not None:
        accumulator = reference()
        if accumulator is not None:
            return accumulator
    accumulator = AccumulateGrad(tensor)
    tensor._grad_accumulator = weakref.ref(accumulator)
    return accumulator


def _version_error(node: Node, tensor: Tensor, expected: int, output_nr: int) -> str:
    shape = list(tensor._data.shape)
    type_name = tensor.type()
    # PyTorch names the op that produced the tensor: the node name without "Backward0".
    if output_nr >= 0:
        which = f", which is output {output_nr} of {_op_name(node)},"
    elif tensor._grad_fn is not None:
        which = f", which is output {tensor._output_nr} of {_op_name(tensor._grad_fn)},"
    else:
        which = ""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name} {shape}]{which} is at version "
        f"{tensor._version_counter[0]}; expected version {expected} instead. Hint: enable "
        "anomaly detection to find the operation that failed to compute its gradient, with "
        "lucid.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def _op_name(node: Any) -> str:
    return re.sub(r"Backward\d*$", "", node.name())
