"""Thread-local grad mode: no_grad, enable_grad, set_grad_enabled and inference_mode."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


class _LocalState(threading.local):
    """All of lucid's per-thread state; class attributes are each new thread's defaults."""

    enabled = True
    inference = False
    # Active observers (anomaly mode, profiler, lucid.debug); empty means zero-cost.
    observers: tuple = ()
    forward_methods: tuple = ()  # the observers' after_forward methods, resolved once
    method_cache: dict | None = None  # other observer methods by name, made per thread
    anomaly_enabled = False
    anomaly_check_nan = True
    anomaly_check_inf = True
    anomaly_check_forward = True
    # NumPy's error state inside ops: set by lucid._core.observers (quiet, or the sentinel).
    numpy_extobj: object = None
    # Floating-point flags NumPy raised in the running op (the sentinel's callback fills it).
    pending_flags: list | None = None
    last_flags: list | None = None
    node_flags: list | None = None
    # The node whose backward the engine is running, None outside backward.
    backward_node: object = None
    # The node whose input gradients the engine is summing (a leaf's sink for `.grad`).
    accumulating: object = None
    # Dotted module paths pushed by nn.Module.__call__ (innermost last).
    module_path: tuple = ()
    # Whether Function.apply keeps each recorded node's forward site (the sentinel is on).
    records_forward_sites = False
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
    # A birth was recorded in an eval pass and not yet reported (no backward will report it):
    # the model's return and `item`/`tolist`/`numpy` check their value while it is set.
    eval_births = False
    # Autocast (lucid.amp.autocast_mode): the hook Function.apply and the composite ops call
    # while CPU autocast is on, None while it is off (the single check on the hot path).
    autocast: Any = None
    # The device types whose autocast is on, and the dtypes set per device type (both replaced
    # whole on a change, never mutated, so a new thread starts from the class's empty ones).
    autocast_devices: frozenset = frozenset()
    autocast_dtypes: dict = {}
    autocast_cache_enabled = True
    autocast_nesting = 0
    # Casts of weights made in the current autocast region: id -> (weak source, version, cast).
    autocast_cache: dict | None = None


local_state = _LocalState()


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
        self.prev = local_state.enabled
        self.mode = bool(mode)
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
