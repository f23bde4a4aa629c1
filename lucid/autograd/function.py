"""Function: the base of every differentiable op; `Function.apply` is the only code that adds a node.

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

from typing import Any

from lucid._tensor import Tensor, _wrap
from lucid.autograd import observers
from lucid.autograd.grad_mode import local_state
from lucid.autograd.graph import Node, accumulator_for, next_sequence_nr

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

FunctionCtx = Node

_NOT_RECORDING = tuple((False,) * n for n in range(16))
_quiet_numpy = observers.quiet_numpy_errors
_restore_numpy = observers.restore_numpy_errors


class Function:
    """Base class of differentiable operations with a custom `forward` and `backward`.

    Subclasses define static `forward(ctx, *args)` (or `forward(*args)` plus
    `setup_context(ctx, inputs, output)`) and `backward(ctx, *grad_outputs)`, and are called
    through `apply`. `_backward_name` sets the grad_fn name; the default is `<Name>Backward`.
    """

    _backward_name: str | None = None

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
        return _SETUP_CONTEXT_NOT_OVERRIDDEN

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("forward-mode AD (jvp) is not implemented in lucid")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        state = local_state
        ctx = Node()
        ctx.function = cls
        is_recording = False
        if state.enabled:
            needs_input_grad = []
            for arg in args:
                if isinstance(arg, Tensor) and arg._requires_grad:
                    needs_input_grad.append(True)
                    is_recording = True
                else:
                    needs_input_grad.append(False)
            if is_recording:
                ctx.is_recording = True
                ctx.needs_input_grad = tuple(needs_input_grad)
                edges = []
                for arg in args:
                    if isinstance(arg, Tensor) and arg._requires_grad:
                        grad_fn = arg._grad_fn
                        if grad_fn is None:
                            edges.append((accumulator_for(arg), 0))
                        else:
                            edges.append((grad_fn, arg._output_nr))
                    else:
                        edges.append((None, 0))
                ctx.next_functions = tuple(edges)
        if not is_recording:
            count = len(args)
            ctx.needs_input_grad = _NOT_RECORDING[count] if count < 16 else (False,) * count

        token = _quiet_numpy()
        try:
            if is_recording:
                state.enabled = False
                try:
                    output = _run_forward(cls, ctx, args, kwargs)
                finally:
                    state.enabled = True
            else:
                output = _run_forward(cls, ctx, args, kwargs)
        finally:
            _restore_numpy(token)

        is_tuple = type(output) is tuple
        outputs = output if is_tuple else (output,)
        dirty = ctx.dirty_tensors
        for index, out in enumerate(outputs):
            if not isinstance(out, Tensor):
                continue
            if dirty and any(out is tensor for tensor in dirty):
                continue
            for arg in args:
                if out is arg:
                    # Returning an input unchanged must not rewrite the caller's tensor.
                    out = _wrap(arg._data)
                    out._version_counter = arg._version_counter
                    if is_tuple:
                        outputs = outputs[:index] + (out,) + outputs[index + 1 :]
                    else:
                        outputs = (out,)
                    break
            else:
                base = out._data.base
                if base is not None:
                    _share_version_with_view_source(out, base, args)
        for tensor in dirty:
            tensor._version_counter[0] += 1

        if is_recording:
            ctx.sequence_nr = next_sequence_nr()
            non_differentiable = ctx.non_differentiable
            meta = []
            for index, out in enumerate(outputs):
                if (
                    not isinstance(out, Tensor)
                    or out._data.dtype.kind != "f"
                    or (non_differentiable and any(out is t for t in non_differentiable))
                ):
                    meta.append(None)
                    continue
                out._requires_grad = True
                out._grad_fn = ctx
                out._output_nr = index
                meta.append((out._data.shape, out._data.dtype))
            ctx.output_meta = tuple(meta)
            if ctx.to_save is not None:
                _pack_saved(ctx, outputs)
        if state.observers:
            observers.after_forward(ctx, args, outputs)
        if is_tuple:
            return outputs
        return outputs[0]


_SETUP_CONTEXT_NOT_OVERRIDDEN = object()


def _run_forward(cls: type[Function], ctx: Node, args: tuple, kwargs: dict) -> Any:
    if cls.setup_context is Function.setup_context:
        return cls.forward(ctx, *args, **kwargs)
    output = cls.forward(*args, **kwargs)
    cls.setup_context(ctx, args, output)
    return output


def _share_version_with_view_source(out: Tensor, base: Any, args: tuple) -> None:
    """A forward that returns a view of an input shares that input's version counter."""
    for arg in args:
        if isinstance(arg, Tensor):
            source = arg._data
            if source is base or source.base is base:
                out._version_counter = arg._version_counter
                return


def _pack_saved(ctx: Node, outputs: tuple) -> None:
    saved = ctx.to_save
    versions = []
    output_nrs = []
    stored = []
    has_output = False
    for tensor in saved:
        if tensor is None:
            stored.append(None)
            versions.append(0)
            output_nrs.append(-1)
            continue
        versions.append(tensor._version_counter[0])
        for index, out in enumerate(outputs):
            if tensor is out:
                # Keep the output without its grad_fn so node and output form no cycle.
                alias = _wrap(tensor._data)
                alias._version_counter = tensor._version_counter
                stored.append(alias)
                output_nrs.append(index)
                has_output = True
                break
        else:
            stored.append(tensor)
            output_nrs.append(-1)
    ctx.saved = tuple(stored)
    ctx.saved_versions = tuple(versions)
    if has_output:
        ctx.saved_output_nrs = tuple(output_nrs)
    ctx.to_save = None


def once_differentiable(fn: Any) -> Any:
    """Decorator for a backward that cannot itself be differentiated (runs it under no_grad)."""
    import functools

    from lucid.autograd.grad_mode import no_grad

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper
