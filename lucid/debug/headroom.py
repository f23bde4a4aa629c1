"""The low-precision headroom check: one HeadroomWarning per module or parameter whose float16
or bfloat16 values pass 1/8 of the dtype's largest value, a few steps of growth from
overflowing. Under autocast the lower-precision activations are what it watches."""

from __future__ import annotations

import math

import numpy as np

import lucid
from lucid._core.dtypes import when_bfloat16_loads
from lucid._core.sentinel import warn_at_user_line

_HALF = np.dtype(np.float16)
# Values past 1/8 of a dtype's largest value are a few multiplications from inf.
_HEADROOM_FRACTION = 8
# The watched dtypes: NumPy dtype -> (name, largest finite value). bfloat16 only where
# ml_dtypes gives NumPy the type.
_WATCHED: dict[np.dtype, tuple[str, float]] = {_HALF: ("float16", float(np.finfo(np.float16).max))}
when_bfloat16_loads(
    lambda bfloat16: _WATCHED.__setitem__(bfloat16, ("bfloat16", lucid.finfo(lucid.bfloat16).max))
)


class HeadroomWarning(RuntimeWarning):
    """A float16 or bfloat16 activation or gradient passed 1/8 of its dtype's largest value
    (65504 for float16, about 3.39e38 for bfloat16)."""


def is_low_precision(array: np.ndarray) -> bool:
    """Whether the headroom check watches `array` (float16, or bfloat16)."""
    return array.dtype in _WATCHED


def _low_kind(array: np.ndarray) -> tuple[str | None, float]:
    """('nan' | 'inf' | None, largest magnitude) of a float16 or bfloat16 array."""
    if array.size == 0:
        return None, 0.0
    if array.dtype is not _HALF:
        array = array.astype(np.float32)
    high = float(array.max())
    low = float(array.min())
    if math.isnan(high) or math.isnan(low):
        return "nan", math.nan
    if math.isinf(high) or math.isinf(low):
        return "inf", math.inf
    return None, max(high, -low)


class _HeadroomWatch:
    """Warns once per (name, what) about low-precision values past the headroom."""

    def __init__(self) -> None:
        self.warned: set[tuple[str, str]] = set()

    def half_kind(
        self,
        array: np.ndarray,
        name: str,
        what: str,
        op: str | None = None,
        scale: float = 1.0,
    ) -> str | None:
        """'nan', 'inf' or None for a float16 or bfloat16 array; warns when its finite values
        pass the headroom (`name` is the module or parameter, `what` 'activation', 'input' or
        'gradient', `op` the op that made it; `scale` a loss scale the values carry, divided
        out before judging)."""
        kind, peak = _low_kind(array)
        dtype_name, largest = _WATCHED[array.dtype]
        if kind is None and peak / scale > largest / _HEADROOM_FRACTION:
            self.warn_at_user_line(name, what, peak / scale, dtype_name, largest, op)
        return kind

    def warn_at_user_line(
        self,
        name: str,
        what: str,
        peak: float,
        dtype_name: str,
        largest: float,
        op: str | None = None,
    ) -> None:
        site = (name, what)
        if site in self.warned:
            return
        self.warned.add(site)
        where = f"'{name}'" if name else "the model"
        made = f" (made by {op})" if op else ""
        warn_at_user_line(
            HeadroomWarning(
                f"a {dtype_name} {what} of {where}{made} reached {peak:.6g}, past 1/8 of "
                f"{dtype_name}'s largest value ({largest:g}): a few more steps of growth "
                "overflow to inf"
            )
        )
