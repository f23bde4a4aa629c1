"""Function: the base of every differentiable op; `Function.apply` alone adds graph nodes.

Example::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = lucid.from_numpy(np.exp(x.numpy()))
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result
"""

from __future__ import annotations

import functools
import os
import re
import sys
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import observers
from lucid._core.arguments import raise_argument_error
from lucid._core.dtypes import INEXACT_KINDS, SCALAR_TYPE_NAMES, complex_use
from lucid._core.grad_mode import local_state, no_grad
from lucid._core.graph import Node, accumulator_for, next_sequence_nr
from lucid._core.tensor import TensorBase, _refresh_view, _wrap, mark_inference

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["Function", "FunctionCtx", "once_differentiable", "op_name"]

FunctionCtx = Node

REFUSES_COMPLEX = 0
HOLOMORPHIC = 1
OWN_COMPLEX_RULE = 2

_NOT_RECORDING = tuple((False,) * n for n in range(16))
_NO_EDGE = (None, 0)  # a tensor input that does not require grad
_new_node = object.__new__
_ndarray = np.ndarray
_next_sequence_nr = next_sequence_nr
_set_numpy_state = observers.numpy_state.set
_reset_numpy_state = observers.numpy_state.reset


class Function:
    """Base class of differentiable operations with a custom `forward` and `backward`.

    Subclasses define static `forward(ctx, *args)` (or `forward(*args)` plus
    `setup_context(ctx, inputs, output)`) and `backward(ctx, *grad_outputs)`, and are called
    through `apply`. `_backward_name` sets the grad_fn name; the default is `<Name>Backward`.
    """

    _backward_name: str | None = None
    # The name the op is reported under (profiles, NVTX ranges), where the grad_fn name does
    # not carry the op a user calls; `op_name` derives it otherwise. Not inherited.
    _op_name: str | None = None
    # True where backward needs values kept on ctx (a scalar operand, indices) that PyTorch
    # saves as tensors: the node is then freed after backward like one that saved tensors, so
    # a second backward through it raises, as in PyTorch.
    _keeps_values_for_backward = False
    # True for split and unbind, whose outputs PyTorch refuses to write in place.
    _returns_several_views = False
    # True for ops whose output shape depends on the input's values (masked_select, unique):
    # lucid.compile breaks the graph there, as torch.compile does.
    _data_dependent_shape = False
    # How the op meets complex inputs (PyTorch's convention: a gradient is the conjugate
    # Wirtinger derivative, so a real loss's gradient points along its steepest ascent):
    #   REFUSES_COMPLEX: PyTorch's CPU build has no complex kernel; the op raises
    #     `_complex_refusal`: (error type, message with {dtype} for the scalar type name),
    #     by default PyTorch's NotImplementedError naming the op.
    #   HOLOMORPHIC: forward works on complex arrays as written, and backward is the real
    #     formula conjugated: for y = f(z) with f holomorphic PyTorch's gradient is
    #     grad * conj(f'(z)) = conj(f'(z) * conj(grad)), so the engine hands backward
    #     conj(grad) and conjugates what it returns (ops linear with real coefficients pass
    #     through unchanged, since both conjugations cancel).
    #   OWN_COMPLEX_RULE: forward and backward handle complex values themselves.
    # lucid's built-in ops (lucid.ops) refuse complex inputs unless they say otherwise; any
    # other Function (a user's, lucid's tools') is trusted with them, as in PyTorch.
    _complex_rule = REFUSES_COMPLEX
    _complex_refusal: tuple[type[Exception], str] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """Optional: save for backward here when `forward` takes no ctx (PyTorch 2 style)."""

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._has_setup_context = cls.setup_context is not Function.setup_context
        if "_complex_rule" not in cls.__dict__ and not cls.__module__.startswith("lucid.ops."):
            cls._complex_rule = OWN_COMPLEX_RULE

    _has_setup_context = False

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run `forward` on `args` and, when grad is recorded, add one node to the graph."""
        # This is the hottest function in lucid: every op of every forward and backward
        # pass runs it, so it is written flat, with a fast path for single-tensor outputs.
        state = local_state
        if state.autocast is not None:
            if state.autocast is LEAN_DISPATCH:
                return _lean_apply(cls, args, kwargs)
            # Autocast casts the inputs of the ops it lists, through `to`, so the casts are
            # recorded and backward returns each gradient in its input's dtype.
            args = state.autocast.cast(cls, args)
        if complex_use.in_use and cls._complex_rule == REFUSES_COMPLEX:
            _refuse_complex(cls, args)
        ctx = _new_node(Node)
        ctx.function = cls
        is_recording = False
        if state.enabled:
            needs_input_grad = []
            edges = []
            for arg in args:
                if isinstance(arg, TensorBase):
                    if arg._base is not None and arg._view_version != arg._version_counter[0]:
                        _refresh_view(arg)
                    if arg._requires_grad:
                        is_recording = True
                        needs_input_grad.append(True)
                        grad_fn = arg._grad_fn
                        if grad_fn is None:
                            edges.append((accumulator_for(arg), 0))
                        else:
                            edges.append((grad_fn, arg._output_nr))
                        continue
                    edges.append(_NO_EDGE)
                else:
                    # Non-tensor arguments get no edge at all (None), as in next_functions.
                    edges.append(None)
                needs_input_grad.append(False)
        if is_recording:
            in_inference = False
            ctx.is_recording = True
            ctx.needs_input_grad = tuple(needs_input_grad)
            ctx.input_edges = tuple(edges)
            # Numbered before the forward, as PyTorch numbers a node when it creates it, so
            # that observers (the profiler, NVTX ranges) can tag the op with it from the start.
            ctx.sequence_nr = _next_sequence_nr()
            if state.records_forward_sites:
                ctx.forward_site = _forward_site(state.module_path)
            # The forward itself is never recorded: it computes on arrays, and a custom
            # forward that calls lucid ops must not grow the graph.
            state.enabled = False
        else:
            count = len(args)
            ctx.needs_input_grad = _NOT_RECORDING[count] if count < 16 else (False,) * count
            in_inference = state.inference
        # One read of the observers serves both notifications, and an observer that was told
        # an op began is the one told that it ended.
        watching = state.observers
        if watching:
            if kwargs:
                ctx.forward_kwargs = kwargs  # for lucid.compile's recorder
            observers.before_forward(ctx, args)
        token = _set_numpy_state(state.numpy_extobj)
        try:
            if cls._has_setup_context:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        except BaseException as error:
            if watching:
                observers.on_forward_error(ctx, error)
            # A forward that read `._data` of a non-tensor: PyTorch's TypeError, if a public
            # function on the stack was passed that object where a tensor belongs.
            raise_argument_error(error, _getframe(1))
            raise
        finally:
            _reset_numpy_state(token)
            if is_recording:
                state.enabled = True

        if isinstance(output, TensorBase) and not ctx.dirty_tensors:
            if is_recording:
                for arg in args:
                    if output is arg:
                        output = _alias_view(arg, cls)
                        break
            if output._data.base is not None:
                _share_version_with_view_source(output, output._data.base, args, cls, 0)
            if is_recording:
                array = output._data
                if array.dtype.kind in INEXACT_KINDS and not ctx.non_differentiable:
                    output._requires_grad = True
                    output._grad_fn = ctx
                ctx.output_meta = ((array.shape, array.dtype),)
                if ctx.to_save is not None:
                    _pack_saved(ctx, (output,))
            if watching or state.pending_flags is not None:
                observers.after_forward(ctx, args, (output,))
            if in_inference:
                _mark_inference_outputs((output,), args)
            return output
        output = _finish_outputs(ctx, args, output, is_recording, watching, state)
        if in_inference:
            _mark_inference_outputs(output if type(output) is tuple else (output,), args)
        return output


class _LeanDispatch:
    """`local_state.autocast` while a lucid.compile replay runs a lean entry
    (lucid/_dynamo/recording.py): the ops its forwards and backwards call run through
    `_lean_apply`. It sits in autocast's slot so that eager apply pays no check of its own;
    a composite op that hands its call to autocast (`run`) runs as it is."""

    def run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        state = local_state
        state.autocast = None
        try:
            return function(*args, **kwargs)
        finally:
            state.autocast = self


LEAN_DISPATCH = _LeanDispatch()


def _lean_apply(cls: type, args: tuple, kwargs: dict) -> Any:
    """An op called inside a lean replay, where nothing is recorded, observed or autocast,
    the NumPy error state is set, and any complex refusal would have raised while the call
    was recorded (same dtypes): only its forward, the version of what it wrote in place,
    and the sentinel's look at flags that fired."""
    ctx = _new_node(Node)
    ctx.function = cls
    count = len(args)
    ctx.needs_input_grad = _NOT_RECORDING[count] if count < 16 else (False,) * count
    if cls._has_setup_context:
        output = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, args, output)
    else:
        output = cls.forward(ctx, *args, **kwargs)
    for tensor in ctx.dirty_tensors:
        tensor._version_counter[0] += 1
    if local_state.pending_flags is not None:
        observers.after_forward(ctx, args, output if type(output) is tuple else (output,))
    return output


def _refuse_complex(cls: type, args: tuple) -> None:
    """Raise the op's error if a tensor argument (or one in a list of them) is complex."""
    for arg in args:
        if isinstance(arg, list | tuple):
            _refuse_complex(cls, arg)
        elif isinstance(arg, TensorBase) and arg._data.dtype.kind == "c":
            error_type, message = cls._complex_refusal or (
                NotImplementedError,
                f"\"{op_name(cls)}\" not implemented for '{{dtype}}'",
            )
            raise error_type(message.replace("{dtype}", SCALAR_TYPE_NAMES[arg._data.dtype.name]))


_LUCID_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_getframe = sys._getframe


# Whether each source file is lucid's own, by file name (an interned string, hashed once).
_is_lucid_file: dict[str, bool] = {}


def _forward_site(module_path: tuple) -> tuple | None:
    """Where a recorded op was called from, for the sentinel's reports of its backward: the
    first frame outside lucid, as a code object and an instruction offset (resolved to a line
    only when a report is made), and the module path on the stack."""
    frame = _getframe(2)  # the caller of Function.apply
    while True:
        code = frame.f_code
        filename = code.co_filename
        is_lucid = _is_lucid_file.get(filename)
        if is_lucid is None:
            is_lucid = _is_lucid_file[filename] = filename.startswith(_LUCID_DIRECTORY)
        if not is_lucid:
            return (code, frame.f_lasti, module_path)
        frame = frame.f_back
        if frame is None:
            return None


def _finish_outputs(
    ctx: Node, args: tuple, output: Any, is_recording: bool, watching: tuple, state: Any
) -> Any:
    """The general case of `apply`: several outputs, in-place outputs, non-tensor outputs."""
    is_tuple = type(output) is tuple
    outputs = output if is_tuple else (output,)
    dirty = ctx.dirty_tensors
    function = ctx.function
    finished = []
    for index, out in enumerate(outputs):
        if isinstance(out, TensorBase) and not any(out is tensor for tensor in dirty):
            if is_recording and any(out is arg for arg in args):
                # Returning an input unchanged must not rewrite the caller's tensor.
                out = next(_alias_view(arg, function) for arg in args if out is arg)
            elif out._data.base is not None:
                _share_version_with_view_source(out, out._data.base, args, function, index)
        finished.append(out)
    outputs = tuple(finished)
    for tensor in dirty:
        tensor._version_counter[0] += 1

    if is_recording:
        non_differentiable = ctx.non_differentiable
        meta = []
        for index, out in enumerate(outputs):
            if not isinstance(out, TensorBase):
                meta.append(None)
                continue
            # Every tensor output keeps its metadata, so backward can be handed zeros for
            # outputs that are non-differentiable or received no gradient.
            meta.append((out._data.shape, out._data.dtype))
            if out._data.dtype.kind in INEXACT_KINDS and not any(
                out is tensor for tensor in non_differentiable
            ):
                out._requires_grad = True
                out._grad_fn = ctx
                out._output_nr = index
        ctx.output_meta = tuple(meta)
        if ctx.to_save is not None:
            _pack_saved(ctx, outputs)
        for tensor in dirty:
            if tensor._base is not None:
                if len(outputs) != 1:
                    raise RuntimeError(
                        "Functions which modify views in-place must return a single Variable"
                    )
                _rebase_view(tensor, ctx)
    if watching or state.pending_flags is not None:
        observers.after_forward(ctx, args, outputs)
    if is_tuple:
        return outputs
    return outputs[0]


def _mark_inference_outputs(outputs: tuple, args: tuple) -> None:
    """Outputs made in inference mode are inference tensors, except views of a normal tensor
    and inputs returned as they are (as in PyTorch)."""
    for out in outputs:
        if (
            isinstance(out, TensorBase)
            and out._base is None
            and not any(out is arg for arg in args)
        ):
            mark_inference(out)


def _alias(tensor: Tensor) -> Tensor:
    alias = _wrap(tensor._data)
    alias._version_counter = tensor._version_counter
    return alias


def _alias_view(tensor: Tensor, function: type) -> Tensor:
    """An input a forward returned as it is: a new tensor viewing all of it."""
    alias = _wrap(tensor._data)
    _make_view(alias, tensor, function, 0)
    return alias


def _share_version_with_view_source(
    out: Tensor, base: Any, args: tuple, function: type, output_nr: int
) -> None:
    """A forward that returns a view of an input makes it a view of that input's base."""
    owner = _memory_owner(base)
    for arg in args:
        if isinstance(arg, TensorBase):
            source = arg._data
            if source is owner or source.base is owner or _memory_owner(source) is owner:
                _make_view(out, arg, function, output_nr)
                return


def _memory_owner(array: Any) -> Any:
    """The array owning the memory `array` views: NumPy links a view to it through `.base`,
    directly, or through the objects `as_strided` wraps views in."""
    base = array.base
    if base is None:
        return array
    if base.__class__ is _ndarray and base.base is None:
        return base
    while True:
        parent = getattr(base, "base", None)
        if parent is None:
            return base
        base = parent


def _make_view(out: Tensor, source: Tensor, function: type, output_nr: int) -> None:
    """`out` shares the version counter of `source` and has its base (the root) as `_base`;
    `_view_creation` says when an in-place write to it must be refused (Node.mark_dirty):
    made without grad mode or in inference mode, by a custom Function, or as one of several
    views (split, unbind). A view of such a view inherits it."""
    counter = source._version_counter
    out._version_counter = counter
    out._view_version = counter[0]
    parent = source._base
    creation = None
    if parent is None:
        out._base = source
    else:
        out._base = parent
        creation = source._view_creation
    if creation is None:
        state = local_state
        if state.inference:
            creation = _CREATED_IN_INFERENCE
        elif not state.enabled:
            creation = _CREATED_WITHOUT_GRAD
        elif not function.__module__.startswith("lucid."):
            creation = ("custom", function, output_nr)
        elif function._returns_several_views:
            creation = ("several", function, output_nr)
    out._view_creation = creation


_CREATED_IN_INFERENCE = ("inference",)
_CREATED_WITHOUT_GRAD = ("no_grad",)


def _rebase_view(view: Tensor, node: Node) -> None:
    # views.py builds on Function (a cycle broken here, on a path only views written take).
    from lucid._core.views import rebase

    rebase(view, node)


def _pack_saved(ctx: Node, outputs: tuple) -> None:
    """Turn `ctx.to_save` into the node's saved tensors with their current versions."""
    hooks = local_state.saved_tensors_hooks
    if hooks is not None:
        _pack_with_hooks(ctx, outputs, hooks)
        return
    saved = ctx.to_save
    if len(outputs) == 1:
        output = outputs[0]
        if len(saved) == 1 and saved[0] is output:
            # An op that keeps its output alone (exp, tanh, sigmoid, softmax): the general
            # path's result, without its loop.
            ctx.saved = (_alias(output),)
            ctx.saved_versions = (output._version_counter[0],)
            ctx.saved_output_nrs = (0,)
            ctx.to_save = None
            return
        for tensor in saved:
            if tensor is output or (tensor is not None and not isinstance(tensor, TensorBase)):
                break
        else:
            # The common case: inputs only, no output among them.
            ctx.saved = saved
            # (a list comprehension: a generator costs twice as much at these sizes)
            ctx.saved_versions = tuple(
                [0 if tensor is None else tensor._version_counter[0] for tensor in saved]
            )
            ctx.to_save = None
            return
    versions = []
    output_nrs = None
    stored = list(saved)
    for position, tensor in enumerate(saved):
        if tensor is None:
            versions.append(0)
            continue
        if not isinstance(tensor, TensorBase):
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{position} is of type {type(tensor).__name__}"
            )
        versions.append(tensor._version_counter[0])
        for index, out in enumerate(outputs):
            if tensor is out:
                # Keep the output without its grad_fn so node and output form no cycle.
                stored[position] = _alias(tensor)
                if output_nrs is None:
                    output_nrs = [-1] * len(saved)
                output_nrs[position] = index
                break
    ctx.saved = tuple(stored)
    ctx.saved_versions = tuple(versions)
    if output_nrs is not None:
        ctx.saved_output_nrs = tuple(output_nrs)
    ctx.to_save = None


def _pack_with_hooks(ctx: Node, outputs: tuple, hooks: tuple) -> None:
    """Keep what the pack hook makes of each saved tensor; `saved_tensors` unpacks it."""
    pack, unpack = hooks
    packed = []
    output_nrs = []
    state = local_state
    # Ops a pack hook runs (a copy to keep) save nothing through the hook again.
    state.saved_tensors_hooks = None
    try:
        for position, tensor in enumerate(ctx.to_save):
            if tensor is None:
                packed.append(None)
                output_nrs.append(-1)
                continue
            if not isinstance(tensor, TensorBase):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{position} is of type {type(tensor).__name__}"
                )
            output_nr = next((i for i, out in enumerate(outputs) if out is tensor), -1)
            # An output is handed over without its grad_fn, so what the hook keeps forms no
            # cycle with the node.
            packed.append(pack(_alias(tensor) if output_nr >= 0 else tensor))
            output_nrs.append(output_nr)
    finally:
        state.saved_tensors_hooks = hooks
        # Also when a hook raised (checkpointing stops a recomputation so): the node would
        # otherwise hold its output, and the output the node, in a cycle.
        ctx.to_save = None
    ctx.saved = tuple(packed)
    ctx.saved_versions = (0,) * len(packed)
    ctx.saved_output_nrs = tuple(output_nrs)
    ctx.unpack_hook = unpack


def once_differentiable(fn: Any) -> Any:
    """Decorator for a backward that cannot itself be differentiated (runs it under no_grad)."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper


_BACKWARD_NAME = re.compile(r"(\w+?)Backward\d+")
# Weak, so that a custom Function class defined in a function can still be freed.
_op_names: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def op_name(function: type) -> str:
    """The name an op is reported under, as a user writes it: PyTorch's aten name for lucid's
    ops (`mul`, `log_softmax`, `add_` for an in-place add), the class name for a custom one.

    It is the class's own `_op_name` where the class sets one; else the op in its grad_fn name
    (DivScalar -> DivBackward0 -> `div`); else the class name in snake case.
    """
    name = _op_names.get(function)
    if name is None:
        name = _op_names[function] = _derive_op_name(function)
    return name


def _derive_op_name(function: type) -> str:
    explicit = function.__dict__.get("_op_name")  # the class's own, not a parent's
    if explicit is not None:
        return explicit
    class_name = function.__name__
    if not function.__module__.startswith("lucid."):
        return class_name
    match = _BACKWARD_NAME.fullmatch(function._backward_name or "")
    stem = match.group(1) if match is not None else class_name
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", stem)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()
