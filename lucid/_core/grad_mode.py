"""Per-thread state, and grad mode: no_grad, enable_grad, set_grad_enabled and inference_mode.

`local_state` is lucid's one per-thread object, so a hot path (Function.apply, the engine's
loop) reads each field as one attribute. Its fields are declared below, one class per concern,
each naming the module that owns and writes them; a class attribute is the value a thread
starts with. A default that acts as a process-wide switch (the sentinel's) is changed through
`set_thread_default`, never by assigning to the class from another file.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from lucid._core.arguments import type_name

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


# ------------------------------------------------- the sections of local_state
class _GradModeState:
    """Grad and inference mode: written by this module's context managers."""

    enabled = True
    inference = False


class _ObserverState:
    """The active observers (anomaly mode, the profiler, lucid.debug) and their methods, looked
    up once: written by `observers.py` (add_observer, remove_observer). Empty is zero-cost."""

    observers: tuple = ()
    before_forward_methods: tuple = ()
    forward_methods: tuple = ()  # the after_forward methods
    method_cache: dict | None = None  # the other methods by name, made per thread


class _AnomalyModeState:
    """Anomaly mode's switches: written by `autograd/anomaly_mode.py` (set_detect_anomaly)."""

    anomaly_enabled = False
    anomaly_check_nan = True
    anomaly_check_inf = True
    anomaly_check_forward = True


class _SentinelState:
    """NumPy's error state inside ops and the flags it raises: `observers.py` applies the
    state and hands an op's flags on, `sentinel.py` chooses the state and records births."""

    # The error state every op runs in: observers.QUIET_NUMPY, or the sentinel's, which
    # set_sentinel switches for every thread (observers.py sets the quiet one at import).
    numpy_extobj: object = None
    # Whether Function.apply keeps each recorded node's forward site (the sentinel is on).
    records_forward_sites = False
    # The flags NumPy raised in the running op (the sentinel's callback fills it), those of
    # the op that finished last, and those raised during the running node's backward.
    pending_flags: list | None = None
    last_flags: list | None = None
    node_flags: list | None = None
    # A birth was recorded in an eval pass and not yet reported (no backward will report it):
    # the model's return and `item`/`tolist`/`numpy` check their value while it is set.
    eval_births = False


class _EngineState:
    """Where the backward engine is: written by `engine.py`, read by whatever names the node
    a value comes from (the sentinel, anomaly mode, autocast, lucid.debug)."""

    # The node whose backward is running, None outside backward.
    backward_node: object = None
    # The node whose input gradients are being summed (a leaf's sink for `.grad`).
    accumulating: object = None
    # The innermost saved_tensors_hooks' (pack, unpack), and the message that refuses new ones
    # inside disable_saved_tensors_hooks (lucid.autograd.graph).
    saved_tensors_hooks: tuple | None = None
    saved_tensors_hooks_refusal: str | None = None


class _ModelCallState:
    """Module calls and the training loop they make: `nn.Module.__call__` keeps the module
    path, `sentinel.py` (enter_model, module_scope, the optimizer step's begin and end, the
    backward's end) the model's step and the loop's phase."""

    # Dotted module paths on the stack (innermost last; the outermost module pushes none),
    # and the module whose __call__ runs with its path from the outermost.
    module_path: tuple = ()
    calling_module: object = None
    calling_path = ""
    # The latest outermost call of a module with parameters (the model): that model's count of
    # earlier calls (-1 before any), the call's frames (where the batch entered the model), a
    # weak reference to the model, and whether grad was enabled for the call.
    model_step = -1
    model_call_frames: tuple = ()
    model: object = None
    model_grad = True
    # Whether an outermost module call is running, the optimizer whose step() is running
    # (None outside one), whether a backward ran since the latest optimizer step and whether
    # the model ran with grad since the latest backward: what tells a report's phase
    # (forward, loss, update, optimizer, eval).
    in_model = False
    optimizer: object = None
    backward_since_step = False
    model_since_backward = False


class _AutocastState:
    """Autocast: written by `amp/autocast_mode.py`."""

    # The hook Function.apply and the composite ops call while CPU autocast is on, None while
    # it is off (the single check on the hot path).
    autocast: Any = None
    # The device types whose autocast is on, and the dtypes set per device type (both replaced
    # whole on a change, never mutated, so a new thread starts from these empty ones).
    autocast_devices: frozenset = frozenset()
    autocast_dtypes: dict = {}
    autocast_cache_enabled = True
    autocast_nesting = 0
    # Casts of weights made in the current autocast region: id -> (weak source, version, cast).
    autocast_cache: dict | None = None


class _CompileState:
    """lucid.compile (`lucid/_dynamo/recording.py`): the recorder of a call being recorded,
    which tensor reads, gradient writes, module calls and engine passes report to, the
    recorded user site of the op a replay runs (what a forward birth in it names), and the
    node order of a backward being recorded."""

    recorder: Any = None
    replay_site: tuple | None = None
    # the list a recorded backward pass appends each node it takes up to, in order
    backward_order: list | None = None


class _LocalState(
    threading.local,
    _GradModeState,
    _ObserverState,
    _AnomalyModeState,
    _SentinelState,
    _EngineState,
    _ModelCallState,
    _AutocastState,
    _CompileState,
):
    """All of lucid's per-thread state, in one object with a section per concern.

    `threading.local` comes first: its attribute lookup walks the class's bases as far as
    `threading.local` on every read, so the sections, after it, cost nothing.
    """


local_state = _LocalState()


def set_thread_default(name: str, value: object) -> None:
    """Make `value` the `local_state.<name>` of every thread that has not assigned its own."""
    if name.startswith("_") or not hasattr(_LocalState, name):
        raise AttributeError(f"local_state has no field '{name}'")
    setattr(_LocalState, name, value)


# ------------------------------------------------- grad mode
def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are recorded."""
    return local_state.enabled


def is_inference_mode_enabled() -> bool:
    return local_state.inference


class _DecoratorContextManager:
    """A context manager that also works as a decorator, entering a fresh copy per call."""

    def __call__(self, func: F) -> F:
        if isinstance(func, type) or not callable(func):
            raise TypeError(f"{type(self).__name__} can only decorate functions")

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return decorated  # type: ignore[return-value]

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()


class _BareDecoratorContextManager(_DecoratorContextManager):
    """Also decorates without parentheses (`@no_grad`), as PyTorch allows."""

    def __new__(cls, func: Callable | None = None) -> Any:
        if func is None:
            return super().__new__(cls)
        return cls()(func)


class no_grad(_BareDecoratorContextManager):
    """Disable gradient recording in this thread; restores the previous mode on exit."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = local_state.enabled
        local_state.enabled = False

    def __exit__(self, *exc_info: object) -> None:
        local_state.enabled = self.prev


class enable_grad(_BareDecoratorContextManager):
    """Enable gradient recording in this thread; restores the previous mode on exit."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = local_state.enabled
        local_state.enabled = True

    def __exit__(self, *exc_info: object) -> None:
        local_state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off: takes effect at once, and restores on exit when used in `with`."""

    def __init__(self, mode: bool) -> None:
        if mode.__class__ is not bool:
            # PyTorch's binding names the argument `enabled`
            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{type_name(mode)}"
            )
        self.prev = local_state.enabled
        self.mode = mode
        local_state.enabled = self.mode

    def __call__(self, func: F) -> F:
        # Used as a decorator the constructor must not have flipped the mode for good.
        local_state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        local_state.enabled = self.mode

    def __exit__(self, *exc_info: object) -> None:
        local_state.enabled = self.prev

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, for code that will never need autograd; tensors made inside are inference
    tensors. `mode=False` turns inference mode off and grad mode on, as in PyTorch."""

    def __new__(cls, mode: bool | Callable = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (True, False)

    def __enter__(self) -> None:
        self.prev = (local_state.enabled, local_state.inference)
        local_state.enabled = not self.mode
        local_state.inference = bool(self.mode)

    def __exit__(self, *exc_info: object) -> None:
        local_state.enabled, local_state.inference = self.prev

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)
