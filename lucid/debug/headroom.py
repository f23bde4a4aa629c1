"""The float16 headroom check: one HeadroomWarning per module or parameter whose float16
values pass 1/8 of float16's largest value, a few steps of growth from overflowing."""

from __future__ import annotations

import math

import numpy as np

from lucid._core.sentinel import warn_at_user_line

_HALF = np.dtype(np.float16)
# float16 values past 1/8 of the largest float16 (65504) are a few multiplications from inf.
_HALF_HEADROOM = float(np.finfo(np.float16).max) / 8


class HeadroomWarning(RuntimeWarning):
    """A float16 activation or gradient passed 1/8 of float16's largest value (65504).

    lucid has no bfloat16 (NumPy has none), so float16 is the only low precision watched.
    """


def _half_kind(array: np.ndarray) -> tuple[str | None, float]:
    """('nan' | 'inf' | None, largest magnitude) of a float16 array, in two passes."""
    if array.size == 0:
        return None, 0.0
    high = float(array.max())
    low = float(array.min())
    if math.isnan(high) or math.isnan(low):
        return "nan", math.nan
    if math.isinf(high) or math.isinf(low):
        return "inf", math.inf
    return None, max(high, -low)


class _HeadroomWatch:
    """Warns once per (name, what) about float16 values past the headroom."""

    def __init__(self) -> None:
        self.warned: set[tuple[str, str]] = set()

    def half_kind(self, array: np.ndarray, name: str, what: str) -> str | None:
        """'nan', 'inf' or None for a float16 array; warns when its finite values pass the
        headroom (`name` is the module or parameter, `what` 'activation', 'input' or
        'gradient')."""
        kind, peak = _half_kind(array)
        if kind is None and peak > _HALF_HEADROOM:
            self.warn_at_user_line(name, what, peak)
        return kind

    def warn_at_user_line(self, name: str, what: str, peak: float) -> None:
        site = (name, what)
        if site in self.warned:
            return
        self.warned.add(site)
        where = f"'{name}'" if name else "the model"
        warn_at_user_line(
            HeadroomWarning(
                f"a float16 {what} of {where} reached {peak:.6g}, past 1/8 of float16's largest "
                f"value ({_HALF_HEADROOM * 8:g}): a few more steps of growth overflow to inf"
            )
        )
