"""The single instrumentation point: Function.apply and the engine report here.

Observers (anomaly mode, the profiler, lucid.debug) register per thread. With none active,
`Function.apply` and the engine pay one falsy check of `local_state.observers`.

Every op's computation also runs inside lucid's NumPy error state: NumPy's floating-point
warnings are silenced there (PyTorch prints none), and the anomaly sentinel swaps in a state
that reports where non-finite values are born.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from lucid._core.grad_mode import local_state, set_thread_default

__all__ = ["Observer", "observing", "add_observer", "remove_observer"]


class Observer(Protocol):
    """What an observer may implement; every method is optional."""

    def before_forward(self, node: Any, inputs: tuple) -> None: ...

    def on_forward_error(self, node: Any, error: BaseException) -> None: ...

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None: ...

    def before_evaluate(self, node: Any, runs: bool) -> None: ...

    def after_evaluate(self, node: Any, runs: bool) -> None: ...

    def before_backward(self, node: Any, grad_outputs: tuple) -> None: ...

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None: ...

    def after_accumulate(self, node: Any, total: Any, parts: tuple) -> None: ...

    def on_backward_error(self, node: Any, error: BaseException) -> None: ...

    def after_backward_pass(self, leaves: list) -> None: ...


def add_observer(observer: Any) -> None:
    local_state.observers = local_state.observers + (observer,)
    _resolve_forward_methods()


def remove_observer(observer: Any) -> None:
    local_state.observers = tuple(o for o in local_state.observers if o is not observer)
    _resolve_forward_methods()


def _resolve_forward_methods() -> None:
    # Observer methods run for every op and node: look them up once, not per call.
    local_state.forward_methods = _methods_named("after_forward")
    local_state.before_forward_methods = _methods_named("before_forward")
    local_state.method_cache = {}


def _methods_named(name: str) -> tuple:
    methods = (getattr(observer, name, None) for observer in local_state.observers)
    return tuple(method for method in methods if method is not None)


@contextmanager
def observing(observer: Any) -> Iterator[Any]:
    add_observer(observer)
    try:
        yield observer
    finally:
        remove_observer(observer)


# Set by lucid._core.sentinel: called when an op raised floating-point flags.
flag_handler: Any = None


def before_forward(node: Any, inputs: tuple) -> None:
    """Before every op's forward while observers are active (the profiler times from here)."""
    for method in local_state.before_forward_methods:
        method(node, inputs)


def on_forward_error(node: Any, error: BaseException) -> None:
    """An op's forward raised: it ends here, with no `after_forward`."""
    _dispatch("on_forward_error", node, error)


def after_forward(node: Any, inputs: tuple, outputs: tuple) -> None:
    """After every op that raised floating-point flags or ran with observers active."""
    state = local_state
    flags = state.pending_flags
    if flags is not None:
        state.pending_flags = None
        if state.backward_node is not None:
            state.node_flags = flags if state.node_flags is None else state.node_flags + flags
        flag_handler(node, inputs, outputs, flags)
    state.last_flags = flags
    for method in state.forward_methods:
        method(node, inputs, outputs)


def _methods(name: str) -> tuple:
    cache = local_state.method_cache
    if cache is None:
        cache = local_state.method_cache = {}
    methods = cache.get(name)
    if methods is None:
        methods = cache[name] = _methods_named(name)
    return methods


def _dispatch(name: str, *args: Any) -> None:
    for method in _methods(name):
        method(*args)


def checks_accumulation() -> bool:
    """True when an active observer checks gradient sums: the engine then sums out of place,
    so that both parts stay visible. Other observers (the profiler) leave sums as they are."""
    return bool(_methods("after_accumulate"))


def before_evaluate(node: Any, runs: bool) -> None:
    """The engine takes up `node` (an op's node or a leaf's AccumulateGrad): its hooks, then,
    if it `runs`, its backward and the routing of its gradients, or the write of `.grad`."""
    _dispatch("before_evaluate", node, runs)


def after_evaluate(node: Any, runs: bool) -> None:
    _dispatch("after_evaluate", node, runs)


def before_backward(node: Any, grad_outputs: tuple) -> None:
    _dispatch("before_backward", node, grad_outputs)


def after_backward(node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
    _dispatch("after_backward", node, grad_outputs, grad_inputs)


def after_accumulate(node: Any, total: Any, parts: tuple) -> None:
    """A gradient sum for `node`'s input (or a leaf's `.grad`) was formed from `parts`."""
    _dispatch("after_accumulate", node, total, parts)


def on_backward_error(node: Any, error: BaseException) -> None:
    _dispatch("on_backward_error", node, error)


def after_backward_pass(leaves: list) -> None:
    _dispatch("after_backward_pass", leaves)


# Set by lucid._core.sentinel: the sentinel's checks when a backward starts and ends.
backward_start_handler: Any = None
backward_end_handler: Any = None
backward_abort_handler: Any = None


def backward_started(outputs: Any, nodes: Any) -> Any:
    """A backward is about to run over `nodes`; returns a mark for `backward_finished`."""
    if backward_start_handler is None:
        return None
    return backward_start_handler(outputs, nodes)


def backward_finished(mark: Any, nodes: Any) -> None:
    if backward_end_handler is not None:
        backward_end_handler(mark, nodes)


def backward_aborted(mark: Any) -> None:
    """A backward that `backward_started` marked raised before it finished."""
    if backward_abort_handler is not None:
        backward_abort_handler(mark)


# ------------------------------------------------------------ NumPy error state
# np.errstate costs microseconds per use, too much around every op; setting NumPy's
# error-state context variable directly costs tens of nanoseconds. `numpy_state` is that
# variable and QUIET_NUMPY the state that ignores every floating-point error.
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - NumPy < 2 keeps it under numpy.core
    from numpy.core._ufunc_config import _extobj_contextvar, _make_extobj

numpy_state = _extobj_contextvar
make_numpy_state = _make_extobj
QUIET_NUMPY = _make_extobj(all="ignore")
# Every thread's ops run in the quiet state until the sentinel swaps in its own.
set_thread_default("numpy_extobj", QUIET_NUMPY)
