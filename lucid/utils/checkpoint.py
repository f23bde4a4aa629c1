"""Activation checkpointing: keep a region's inputs, drop its activations, and recompute them
during backward (torch.utils.checkpoint).

The non-reentrant variant (`use_reentrant=False`, the recommended one) works as PyTorch's:
the region runs once, recorded as usual, but under saved-tensor hooks that keep nothing of
what its ops save for backward; the first backward read of one of those tensors runs the
region again (under the forward's RNG and autocast state) and hands each node the value it
saved, while the gradients flow through the region's own graph, node by node. The reentrant
variant is one node standing for the region, whose backward replays and differentiates it.

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
_early_stop_enabled: bool | None = None
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
    """Override every non-reentrant checkpoint's `early_stop` inside the block: whether a
    recomputation stops once it has made every tensor backward needs."""
    global _early_stop_enabled
    previous = _early_stop_enabled
    _early_stop_enabled = enable
    try:
        yield
    finally:
        _early_stop_enabled = previous


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


class _StopRecomputation(Exception):
    """Raised inside a recomputation once every tensor the forward saved is recomputed."""


class _Frame:
    """One checkpointed region: its inputs, the metadata of each tensor its forward saved (in
    order), and the values a recomputation made of them, each handed out once."""

    def __init__(self, replay: _Replay, args: tuple, context: Any, check: bool, early_stop: bool):
        self.replay = replay
        self.args = args
        self.recompute_context = context
        self.check = check
        self.early_stop = early_stop
        self.saved_metadata: list[dict | None] = []
        self.recomputed: dict[int, lucid.Tensor] = {}

    def pack(self, tensor: lucid.Tensor) -> tuple[_Frame, int]:
        self.saved_metadata.append(_metadata(tensor) if self.check else None)
        return (self, len(self.saved_metadata) - 1)

    @staticmethod
    def unpack(handle: tuple[_Frame, int]) -> lucid.Tensor:
        frame, index = handle
        value = frame.recomputed.pop(index, None)
        if value is None:
            # The first read in this backward (or a later backward, with retain_graph).
            frame.recompute()
            value = frame.recomputed.pop(index)
        return value

    def recompute(self) -> None:
        expected = len(self.saved_metadata)
        recomputed: dict[int, lucid.Tensor] = {}
        # A backward that records its own graph (create_graph) differentiates through the
        # recomputed values: they then come from the region's real inputs, graph and all.
        # Otherwise only the values are kept and the recomputation's graph is dropped.
        create_graph = lucid.is_grad_enabled()

        def keep(tensor: lucid.Tensor) -> lucid.Tensor | None:
            index = len(recomputed)
            if index >= expected:
                raise CheckpointError(
                    "lucid.utils.checkpoint: trying to save more tensors during recomputation "
                    f"than during the original forward pass.\n{_DEBUG_TIP}"
                )
            recomputed[index] = tensor if create_graph else tensor.detach()
            if self.early_stop and len(recomputed) == expected:
                raise _StopRecomputation
            return tensor if create_graph else None

        inputs = self.args if create_graph else detach_variable(self.args)
        try:
            with lucid.autograd.graph.saved_tensors_hooks(keep, _as_kept):
                self.replay.run(inputs, self.recompute_context)
        except _StopRecomputation:
            pass
        if self.check:
            _check_recomputed(self.saved_metadata, recomputed)
        self.recomputed = recomputed


def _as_kept(tensor: lucid.Tensor) -> lucid.Tensor:
    """What a recomputation's own node reads back: only a double backward reads any."""
    return tensor


def _metadata(tensor: lucid.Tensor) -> dict[str, Any]:
    return {"shape": tensor.shape, "dtype": tensor.dtype, "device": tensor.device}


def _check_recomputed(forward: list[dict | None], recomputed: dict[int, lucid.Tensor]) -> None:
    """PyTorch's CheckpointError when the recomputation saved other tensors than the forward."""
    if len(forward) != len(recomputed):
        raise CheckpointError(
            "lucid.utils.checkpoint: A different number of tensors was saved "
            "during the original forward and recomputation.\n"
            f"Number of tensors saved during forward: {len(forward)}\n"
            f"Number of tensors saved during recomputation: {len(recomputed)}.\n{_DEBUG_TIP}"
        )
    mismatched = ""
    for index, meta in enumerate(forward):
        again = _metadata(recomputed[index])
        if meta != again:
            mismatched += (
                f"tensor at position {index}:\nsaved metadata: {meta}\n"
                f"recomputed metadata: {again}\n"
            )
    if mismatched:
        raise CheckpointError(
            "lucid.utils.checkpoint: Recomputed values for the following tensors "
            f"have different metadata than during the forward pass.\n{mismatched}.\n{_DEBUG_TIP}"
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

    `preserve_rng_state` (default True) is taken from kwargs, as in PyTorch. `early_stop`
    ends a recomputation once it has made every saved tensor; the determinism check compares
    the metadata of what the forward and the recomputation saved. `debug` adds no operator
    traces.
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

    frame = _Frame(
        _Replay(function, kwargs, preserve_rng_state),
        tuple(args),
        recompute_context,
        determinism_check != "none",
        early_stop if _early_stop_enabled is None else _early_stop_enabled,
    )
    with lucid.autograd.graph.saved_tensors_hooks(frame.pack, _Frame.unpack), forward_context:
        return function(*args, **kwargs)


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
