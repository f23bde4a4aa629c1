"""Activation checkpointing: keep a region's inputs, drop its activations, and recompute them
during backward (torch.utils.checkpoint).

Both variants are one `Function` node standing for the whole region. Its backward replays the
region under the forward's RNG and autocast state and differentiates the replay.

Example::

    y = checkpoint(block, x, use_reentrant=False)
    y.sum().backward()  # block runs again here
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import lucid
from lucid.autograd import Function

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

_DEFAULT_DETERMINISM_MODE = "default"
_debug_enabled: bool | None = None
_DETERMINISM_CHECKS = ("default", "none")
_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`lucid.utils.checkpoint.checkpoint(...)`.\n"
)


class CheckpointError(RuntimeError):
    """The replay of a checkpointed region differs from its forward."""


_ContextPair = tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]


def noop_context_fn() -> _ContextPair:
    """The default `context_fn`: no context around the forward or its replay."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor in `inputs` requires grad: the reentrant variant then gives none."""
    if not any(value.requires_grad for value in inputs if isinstance(value, lucid.Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Accepted for PyTorch's API; lucid's replay always runs the whole region."""
    yield


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Override every checkpoint's `debug` inside the block (None: each call's own)."""
    global _debug_enabled
    previous = _debug_enabled
    _debug_enabled = enabled
    try:
        yield
    finally:
        _debug_enabled = previous


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Detached copies of the tensors in `inputs`, keeping each one's requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    detached = []
    for value in inputs:
        if isinstance(value, lucid.Tensor):
            leaf = value.detach()
            leaf.requires_grad = value.requires_grad
            value = leaf
        detached.append(value)
    return tuple(detached)


class _Replay:
    """What a region's backward needs to run it again as its forward ran."""

    def __init__(self, function: Callable, kwargs: dict, preserve_rng_state: bool) -> None:
        self.function = function
        self.kwargs = kwargs
        self.preserve_rng_state = preserve_rng_state
        # Taken before the forward draws, so the replay draws the same dropout masks.
        self.rng_state = lucid.get_rng_state() if preserve_rng_state else None
        self.autocast_enabled = lucid.is_autocast_enabled("cpu")
        self.autocast_dtype = lucid.get_autocast_dtype("cpu")

    def run(self, args: tuple, context: contextlib.AbstractContextManager) -> Any:
        """Call the function on `args` with grad on, under the forward's RNG and autocast."""
        outer_state = lucid.get_rng_state() if self.preserve_rng_state else None
        if self.preserve_rng_state:
            lucid.set_rng_state(self.rng_state)
        try:
            autocast = lucid.autocast(
                "cpu", dtype=self.autocast_dtype, enabled=self.autocast_enabled
            )
            with lucid.enable_grad(), autocast, context:
                return self.function(*args, **self.kwargs)
        finally:
            # The replay must not move the caller's generator: training goes on from where
            # the forward left it.
            if self.preserve_rng_state:
                lucid.set_rng_state(outer_state)


def _flatten(value: Any) -> list[lucid.Tensor]:
    """The tensors in a (nested) tuple, list or dict, in order."""
    if isinstance(value, lucid.Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [tensor for item in value for tensor in _flatten(item)]
    if isinstance(value, dict):
        return [tensor for item in value.values() for tensor in _flatten(item)]
    return []


def _unflatten(value: Any, tensors: Iterable[lucid.Tensor]) -> Any:
    """`value` with its tensors replaced, in `_flatten`'s order, by `tensors`."""
    iterator = iter(tensors)

    def rebuild(item: Any) -> Any:
        if isinstance(item, lucid.Tensor):
            return next(iterator)
        if isinstance(item, tuple | list):
            rebuilt = [rebuild(inner) for inner in item]
            # A namedtuple takes its fields positionally.
            return type(item)(*rebuilt) if hasattr(item, "_fields") else type(item)(rebuilt)
        if isinstance(item, dict):
            return type(item)((key, rebuild(inner)) for key, inner in item.items())
        return item

    return rebuild(value)


def _leaves_reached(outputs: list[lucid.Tensor], known: list[lucid.Tensor]) -> list[lucid.Tensor]:
    """The leaf tensors that require grad reached from `outputs`' graph, other than `known`:
    the parameters (and other captured tensors) the region used without taking them as args."""
    known_ids = {id(tensor) for tensor in known}
    found: dict[int, lucid.Tensor] = {}
    seen: set[int] = set()
    stack = [output.grad_fn for output in outputs if output.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            if id(variable) not in known_ids:
                found.setdefault(id(variable), variable)
            continue
        stack += [child for child, _ in node.next_functions if child is not None]
    for output in outputs:
        # A region that returns a captured leaf as it is records no node for it.
        if output.requires_grad and output.grad_fn is None and id(output) not in known_ids:
            found.setdefault(id(output), output)
    return list(found.values())


def _metadata(tensor: lucid.Tensor) -> dict[str, Any]:
    return {"shape": tensor.shape, "dtype": tensor.dtype, "device": tensor.device}


def _check_replay(forward: list[dict], replayed: list[lucid.Tensor]) -> None:
    """Raise CheckpointError when the replay's outputs differ in number or metadata."""
    if len(forward) != len(replayed):
        raise CheckpointError(
            "lucid.utils.checkpoint: A different number of tensors was output "
            "during the original forward and recomputation.\n"
            f"Number of tensors output during forward: {len(forward)}\n"
            f"Number of tensors output during recomputation: {len(replayed)}.\n{_DEBUG_TIP}"
        )
    mismatched = ""
    for index, (meta, tensor) in enumerate(zip(forward, replayed, strict=True)):
        if meta != _metadata(tensor):
            mismatched += (
                f"tensor at position {index}:\nsaved metadata: {meta}\n"
                f"recomputed metadata: {_metadata(tensor)}\n"
            )
    if mismatched:
        raise CheckpointError(
            "lucid.utils.checkpoint: Recomputed values for the following tensors "
            f"have different metadata than during the forward pass.\n{mismatched}.\n{_DEBUG_TIP}"
        )


class _NonReentrantCheckpoint(Function):
    """The region as one node; its inputs are the args' tensors and the leaves it captured.

    The region already ran (with grad on, so its captured leaves could be found); the forward
    only hands its outputs on, cut from the region's graph so its activations are freed.
    """

    @staticmethod
    def forward(ctx, region, arg_count, *tensors):
        ctx.region = region
        ctx.arg_count = arg_count
        ctx.save_for_backward(*tensors)
        ctx.set_materialize_grads(False)
        outputs = region.pop("outputs")
        results = tuple(output.detach() for output in outputs)
        ctx.mark_non_differentiable(
            *(result for result, out in zip(results, outputs, strict=True) if not out.requires_grad)
        )
        return results

    @staticmethod
    def backward(ctx, *grad_outputs):
        region = ctx.region
        saved = ctx.saved_tensors
        arg_tensors = saved[: ctx.arg_count]
        captured = saved[ctx.arg_count :]
        leaves = [tensor.detach().requires_grad_(tensor.requires_grad) for tensor in arg_tensors]
        args = list(region["args"])
        for position, leaf in zip(region["tensor_positions"], leaves, strict=True):
            args[position] = leaf
        replayed = _flatten(region["replay"].run(tuple(args), region["recompute_context"]))
        if region["metadata"] is not None:
            _check_replay(region["metadata"], replayed)
        wanted = [*leaves, *captured]
        inputs = [tensor for tensor, need in zip(wanted, ctx.needs_input_grad[2:]) if need]
        pairs = [
            (output, grad)
            for output, grad in zip(replayed, grad_outputs, strict=False)
            if grad is not None and output.requires_grad
        ]
        # Latest-recorded output first: autograd.grad's pruning drops the gradient of an output
        # whose graph reaches another output listed before it (e.g. y and y.sum()).
        pairs.sort(key=lambda pair: -getattr(pair[0].grad_fn, "sequence_nr", -1))
        grads = iter(())
        if inputs and pairs:
            # retain_graph: a captured non-leaf tensor's own graph belongs to the caller, who
            # may still backpropagate through it.
            grads = iter(
                lucid.autograd.grad(
                    [output for output, _ in pairs],
                    inputs,
                    [grad for _, grad in pairs],
                    retain_graph=True,
                    allow_unused=True,
                )
            )
        return (None, None) + tuple(
            next(grads, None) if need else None for need in ctx.needs_input_grad[2:]
        )


class CheckpointFunction(Function):
    """The reentrant variant: the region runs under no_grad; backward replays it and
    backpropagates the replay, writing the region's parameters' .grad itself."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.replay = _Replay(run_function, {}, preserve_rng_state)
        ctx.tensor_positions = [i for i, arg in enumerate(args) if isinstance(arg, lucid.Tensor)]
        ctx.args = [None if isinstance(arg, lucid.Tensor) else arg for arg in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_positions))
        with lucid.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        args = list(ctx.args)
        for position, tensor in zip(ctx.tensor_positions, ctx.saved_tensors, strict=True):
            args[position] = tensor
        detached = detach_variable(tuple(args))
        outputs = ctx.replay.run(detached, contextlib.nullcontext())
        if isinstance(outputs, lucid.Tensor):
            outputs = (outputs,)
        pairs = [
            (output, grad)
            for output, grad in zip(outputs, grad_outputs, strict=False)
            if isinstance(output, lucid.Tensor) and output.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        lucid.autograd.backward([output for output, _ in pairs], [grad for _, grad in pairs])
        grads = tuple(arg.grad if isinstance(arg, lucid.Tensor) else None for arg in detached)
        return (None, None) + grads


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], _ContextPair] = noop_context_fn,
    determinism_check: str = _DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """Run `function(*args, **kwargs)` keeping only its inputs; backward recomputes the rest.

    `preserve_rng_state` (default True) is taken from kwargs, as in PyTorch. Differences: the
    replay always runs the whole region (`early_stop` is accepted and has no effect) and
    `debug` adds no operator traces; the determinism check compares the region's outputs.
    """
    if use_reentrant is None:
        warnings.warn(
            "lucid.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if _debug_enabled if _debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
            f"but got {determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    if not lucid.is_grad_enabled():
        with forward_context:
            return function(*args, **kwargs)

    replay = _Replay(function, kwargs, preserve_rng_state)
    tensor_positions = [i for i, arg in enumerate(args) if isinstance(arg, lucid.Tensor)]
    arg_tensors = [args[i] for i in tensor_positions]
    # Run on detached args so the graph walk below stops at the region's own inputs.
    leaves = detach_variable(tuple(args))
    with forward_context:
        result = function(*leaves, **kwargs)
    outputs = _flatten(result)
    captured = _leaves_reached(outputs, [leaves[i] for i in tensor_positions])
    tensors = [*arg_tensors, *captured]
    if not any(tensor.requires_grad for tensor in tensors):
        return result
    region = {
        "outputs": outputs,
        "replay": replay,
        "args": [None if isinstance(arg, lucid.Tensor) else arg for arg in args],
        "tensor_positions": tensor_positions,
        "recompute_context": recompute_context,
        "metadata": None if determinism_check == "none" else [_metadata(t) for t in outputs],
    }
    # Dropping the region's own outputs frees its activations; only the node's copies remain.
    del leaves, outputs
    results = _NonReentrantCheckpoint.apply(region, len(arg_tensors), *tensors)
    return _unflatten(result, results)


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Split `functions` (a list or nn.Sequential) into `segments` and checkpoint each one but
    the last."""
    if use_reentrant is None:
        warnings.warn(
            "lucid.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_segment(start: int, end: int) -> Callable:
        def forward(value: Any) -> Any:
            for index in range(start, end + 1):
                value = functions[index](value)
            return value

        return forward

    if isinstance(functions, lucid.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    # The last segment runs plainly: its activations are needed by backward straight away.
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_segment(start, end),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve_rng_state,
        )
    return run_segment(end + 1, len(functions) - 1)(input)


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
