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

from lucid.autograd.grad_mode import local_state

__all__ = ["Observer", "observing", "add_observer", "remove_observer"]


class Observer(Protocol):
    """What an observer may implement; every method is optional."""

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None: ...

    def before_backward(self, node: Any, grad_outputs: tuple) -> None: ...

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None: ...


def add_observer(observer: Any) -> None:
    local_state.observers = local_state.observers + (observer,)


def remove_observer(observer: Any) -> None:
    local_state.observers = tuple(o for o in local_state.observers if o is not observer)


@contextmanager
def observing(observer: Any) -> Iterator[Any]:
    add_observer(observer)
    try:
        yield observer
    finally:
        remove_observer(observer)


def after_forward(node: Any, inputs: tuple, outputs: tuple) -> None:
    for observer in local_state.observers:
        method = getattr(observer, "after_forward", None)
        if method is not None:
            method(node, inputs, outputs)


def before_backward(node: Any, grad_outputs: tuple) -> None:
    for observer in local_state.observers:
        method = getattr(observer, "before_backward", None)
        if method is not None:
            method(node, grad_outputs)


def after_backward(node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
    for observer in local_state.observers:
        method = getattr(observer, "after_backward", None)
        if method is not None:
            method(node, grad_outputs, grad_inputs)


# ------------------------------------------------------------ NumPy error state
# np.errstate costs microseconds per use, too much around every op; setting NumPy's
# error-state context variable directly costs tens of nanoseconds. `numpy_state` is that
# variable and QUIET_NUMPY the state that ignores every floating-point error.
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - NumPy < 2 keeps it under numpy.core
    from numpy.core._ufunc_config import _extobj_contextvar, _make_extobj

numpy_state = _extobj_contextvar
QUIET_NUMPY = _make_extobj(all="ignore")


def quiet_numpy_errors() -> Any:
    return numpy_state.set(QUIET_NUMPY)


def restore_numpy_errors(token: Any) -> None:
    numpy_state.reset(token)
