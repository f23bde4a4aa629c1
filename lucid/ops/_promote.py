"""NumPy operands for an op, cast the way PyTorch promotes dtypes; float16 and bfloat16
computed in float32 and rounded once, as PyTorch's CPU kernels do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes, observers
from lucid._core.tensor import TensorBase

if TYPE_CHECKING:
    from lucid._tensor import Tensor

_INTEGRAL_KINDS = "iub"
_FLOAT32 = np.dtype(np.float32)
# float32's largest value squared: a product whose only purpose is to raise the overflow flag.
_HUGE = np.array(np.finfo(np.float32).max)


def is_low_precision(dtype: np.dtype) -> bool:
    """float16 or bfloat16: the floating dtypes PyTorch computes in float32 on CPU."""
    return dtype.itemsize == 2 and dtype.kind in dtypes.FLOAT_KINDS


def low_precision_of(dtype: np.dtype) -> np.dtype | None:
    """`dtype` where it is float16 or bfloat16 (to round a float32 result to), else None."""
    return dtype if dtype.itemsize == 2 and dtype.kind in dtypes.FLOAT_KINDS else None


def widen(array: Any) -> Any:
    """A float16/bfloat16 array as float32 (anything else as it is)."""
    if isinstance(array, np.ndarray) and array.dtype.itemsize == 2:
        if array.dtype.kind in dtypes.FLOAT_KINDS:
            return array.astype(_FLOAT32)
    return array


def round_to(array: Any, dtype: np.dtype | None) -> Any:
    """`array` rounded to `dtype` (None: as it is), with NumPy's overflow flag raised where a
    finite value becomes infinite, so the sentinel sees a narrowing cast's overflow as a birth.

    NumPy's own float16 cast raises the flag; ml_dtypes' bfloat16 cast raises none.
    """
    if dtype is None or array.dtype == dtype:
        return array
    result = np.asarray(array).astype(dtype)
    if dtype.kind == "V" and array.dtype.kind == "f" and result.size:
        # Infinities read from the bits (exponent all ones, mantissa zero): ml_dtypes' isinf
        # runs an element at a time and costs more than the cast itself.
        infinite = (result.view(np.uint16) & 0x7FFF) == 0x7F80
        if infinite.any() and np.isfinite(np.asarray(array)[infinite]).any():
            np.multiply(_HUGE, _HUGE)
    return result


def opmath_arrays(a: Any, b: Any) -> tuple[Any, Any, np.dtype | None]:
    """binary_arrays' operands, in float32 where the result is float16 or bfloat16, and the
    dtype to round the result to (None where no rounding is needed).

    PyTorch's CPU kernels compute these dtypes in float32, with a Python scalar taken at
    float32 precision: `bfloat16(3.0) * 1.004` is 3.0156 (3.012 rounded), not 3.0 (3.0 times
    1.004 rounded to bfloat16, i.e. 1.0).
    """
    x, y = binary_arrays(a, b)
    dtype = x.dtype if isinstance(x, np.ndarray) else y.dtype
    if dtype.itemsize == 2 and dtype.kind in dtypes.FLOAT_KINDS:
        # From the operands themselves: a Python scalar or zero-dim float64 operand enters at
        # float32 precision, not rounded to the result's dtype first.
        x = a._data.astype(_FLOAT32) if isinstance(a, TensorBase) else a
        y = b._data.astype(_FLOAT32) if isinstance(b, TensorBase) else b
        return x, y, dtype
    return x, y, None


def scalar_value(value: Any) -> Any:
    """NumPy scalars act as Python scalars in lucid (weak in promotion), as in PyTorch."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, TensorBase):
        return value
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, complex):
        dtypes.note_complex()
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
            x = x.astype(dtypes.get_default_dtype().numpy_dtype)
        elif b.__class__ is complex and x.dtype.kind != "c":
            x = x.astype(dtypes.result_type(a, b).numpy_dtype)
        return x, _scalar_beside(b, x)
    y = b._data
    if a.__class__ is float and y.dtype.kind in _INTEGRAL_KINDS:
        y = y.astype(dtypes.get_default_dtype().numpy_dtype)
    elif a.__class__ is complex and y.dtype.kind != "c":
        y = y.astype(dtypes.result_type(a, b).numpy_dtype)
    return _scalar_beside(a, y), y


def _scalar_beside(value: Any, array: np.ndarray) -> Any:
    """A Python scalar operand beside `array`: as it is, except beside float16/bfloat16, where
    it becomes a zero-dim array of that dtype (NumPy would widen the result for bfloat16)."""
    if array.dtype.itemsize == 2 and array.dtype.kind in dtypes.FLOAT_KINDS:
        # A scalar beyond the dtype's range becomes inf, as in PyTorch (1 < 1e6 in float16
        # is True), without NumPy's cast warning: this runs outside the op's error state.
        token = observers.numpy_state.set(observers.QUIET_NUMPY)
        try:
            return np.asarray(value, array.dtype)
        finally:
            observers.numpy_state.reset(token)
    return value


def float_array(x: Tensor) -> np.ndarray:
    """The array of `x`, as the default float dtype when `x` is integral (exp, log, ...)."""
    array = x._data
    if array.dtype.kind in _INTEGRAL_KINDS:
        return array.astype(dtypes.get_default_dtype().numpy_dtype)
    return array
