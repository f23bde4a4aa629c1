"""Anomaly mode: detect_anomaly / set_detect_anomaly, PyTorch's contract (see NUMERICS.md).

While enabled, every backward node's outputs are checked and the first NaN raises
`RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.`
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from lucid.autograd import observers
from lucid.autograd.grad_mode import _DecoratorContextManager, local_state

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]  # fmt: skip


def is_anomaly_enabled() -> bool:
    return local_state.anomaly_enabled


def is_anomaly_check_nan_enabled() -> bool:
    return local_state.anomaly_check_nan


class _AnomalyObserver:
    """Checks each backward node's gradients for NaN while anomaly mode checks NaN."""

    def after_backward(self, node: Any, grad_outputs: tuple, grad_inputs: tuple) -> None:
        if not local_state.anomaly_check_nan:
            return
        for index, grad in enumerate(grad_inputs):
            if grad is not None and np.isnan(grad._data).any():
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {index}th output."
                )


_OBSERVER = _AnomalyObserver()


def _set_anomaly(enabled: bool, check_nan: bool) -> None:
    local_state.anomaly_enabled = enabled
    local_state.anomaly_check_nan = check_nan
    if enabled and _OBSERVER not in local_state.observers:
        observers.add_observer(_OBSERVER)
    elif not enabled:
        observers.remove_observer(_OBSERVER)


class detect_anomaly(_DecoratorContextManager):
    """Context manager and decorator that enables anomaly detection for autograd."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> detect_anomaly:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        _set_anomaly(True, self.check_nan)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _set_anomaly(self.prev, self.prev_check_nan)

    def clone(self) -> detect_anomaly:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once, and restored on exit when used in `with`."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        _set_anomaly(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _set_anomaly(self.prev, self.prev_check_nan)
