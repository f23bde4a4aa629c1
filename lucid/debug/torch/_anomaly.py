"""torch's anomaly mode as a superset: Inf and forward values checked too, and the birth's
report in the exception."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from lucid.debug.torch._instrument import Instrument

__all__ = ["detect_anomaly", "is_anomaly_enabled", "set_detect_anomaly"]

_active: list[Instrument] = []


def is_anomaly_enabled() -> bool:
    """Whether lucid's anomaly mode for torch is on in this process."""
    return bool(_active)


class set_detect_anomaly:  # noqa: N801 - torch's name
    """torch.autograd.set_detect_anomaly, and more: a function and a context manager that
    checks every op's outputs (forward with `check_forward`, Inf with `check_inf`) and raises
    at the first birth a RuntimeError whose first line is torch's and whose rest is the report.
    """

    def __init__(
        self,
        mode: bool,
        check_nan: bool = True,
        *,
        check_inf: bool = True,
        check_forward: bool = True,
    ) -> None:
        self.mode = bool(mode)
        self._previous = list(_active)
        self._instrument: Instrument | None = None
        _deactivate()
        if self.mode and check_nan:
            self._instrument = Instrument(
                check_inf=check_inf,
                check_forward=check_forward,
                stop_on_first=False,
                raise_on_birth=True,
            )
            self._instrument.__enter__()
            _active.append(self._instrument)

    def __enter__(self) -> set_detect_anomaly:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        _deactivate()
        for instrument in self._previous:
            instrument.__enter__()
            _active.append(instrument)


def _deactivate() -> None:
    while _active:
        _active.pop().__exit__(None, None, None)


class detect_anomaly:  # noqa: N801 - torch's name
    """torch.autograd.detect_anomaly as a superset (see set_detect_anomaly): a context manager
    and a decorator that restores the previous state on exit, also after an exception."""

    def __init__(
        self, check_nan: bool = True, *, check_inf: bool = True, check_forward: bool = True
    ) -> None:
        self.check_nan = check_nan
        self.check_inf = check_inf
        self.check_forward = check_forward
        self._setter: set_detect_anomaly | None = None
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> detect_anomaly:
        self._setter = set_detect_anomaly(
            True, self.check_nan, check_inf=self.check_inf, check_forward=self.check_forward
        )
        return self

    def __exit__(self, *exc_info: Any) -> None:
        setter, self._setter = self._setter, None
        if setter is not None:
            setter.__exit__(*exc_info)

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(
                self.check_nan, check_inf=self.check_inf, check_forward=self.check_forward
            ):
                return fn(*args, **kwargs)

        return wrapper
