"""NumPy operands for an op, cast the way PyTorch promotes dtypes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.tensor import TensorBase

if TYPE_CHECKING:
    from lucid._tensor import Tensor

_INTEGRAL_KINDS = "iub"


def scalar_value(value: Any) -> Any:
    """NumPy scalars act as Python scalars in lucid (weak in promotion), as in PyTorch."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, TensorBase):
        return value
    if isinstance(value, bool | int | float):
        return value
    raise TypeError(f"expected a Tensor or a Python number, but got {type(value).__name__}")


def binary_arrays(a: Any, b: Any) -> tuple[Any, Any]:
    """The arrays (or Python scalars) a binary op computes on, in the promoted dtype."""
    if isinstance(a, TensorBase):
        x = a._data
        if isinstance(b, TensorBase):
            y = b._data
            if x.dtype == y.dtype:
                return x, y
            target = dtypes.result_type(a, b).numpy_dtype
            return x.astype(target, copy=False), y.astype(target, copy=False)
        if b.__class__ is float and x.dtype.kind in _INTEGRAL_KINDS:
            return x.astype(dtypes.get_default_dtype().numpy_dtype), b
        return x, b
    y = b._data
    if a.__class__ is float and y.dtype.kind in _INTEGRAL_KINDS:
        return a, y.astype(dtypes.get_default_dtype().numpy_dtype)
    return a, y


def float_array(x: Tensor) -> np.ndarray:
    """The array of `x`, as the default float dtype when `x` is integral (exp, log, ...)."""
    array = x._data
    if array.dtype.kind in _INTEGRAL_KINDS:
        return array.astype(dtypes.get_default_dtype().numpy_dtype)
    return array
