"""Dtype objects over NumPy dtypes, the default dtype, and PyTorch's type-promotion rules."""

from __future__ import annotations

import numpy as np

__all__ = [
    "dtype",
    "float16",
    "half",
    "float32",
    "float",
    "float64",
    "double",
    "int8",
    "int16",
    "short",
    "int32",
    "int",
    "int64",
    "long",
    "uint8",
    "bool",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
    "result_type",
    "to_numpy_dtype",
    "from_numpy_dtype",
]

_builtin_bool = bool
_builtin_int = int
_builtin_float = float


class dtype:
    """A lucid dtype; `numpy_dtype` is the NumPy dtype that stores it."""

    __slots__ = ("name", "numpy_dtype", "is_floating_point", "is_signed", "itemsize", "_category")

    def __init__(self, name: str, numpy_dtype: np.dtype, category: _builtin_int) -> None:
        self.name = name
        self.numpy_dtype = np.dtype(numpy_dtype)
        # 0 = bool, 1 = integer, 2 = floating: the order PyTorch promotes across.
        self._category = category
        self.is_floating_point = category == 2
        self.is_signed = self.numpy_dtype.kind in "if"
        self.itemsize = self.numpy_dtype.itemsize

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __reduce__(self) -> str:
        return self.name

    def to_complex(self) -> dtype:
        raise TypeError("lucid has no complex dtypes")


float16 = half = dtype("float16", np.float16, 2)
float32 = float = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
int16 = short = dtype("int16", np.int16, 1)
int32 = int = dtype("int32", np.int32, 1)
int64 = long = dtype("int64", np.int64, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool = dtype("bool", np.bool_, 0)

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool)
_FROM_NUMPY: dict[np.dtype, dtype] = {d.numpy_dtype: d for d in _ALL}

_default_float = float32


def from_numpy_dtype(numpy_dtype: np.dtype) -> dtype:
    """The lucid dtype stored as `numpy_dtype`; TypeError for dtypes lucid does not support."""
    try:
        return _FROM_NUMPY[numpy_dtype]
    except KeyError:
        pass
    numpy_dtype = np.dtype(numpy_dtype)
    if numpy_dtype in _FROM_NUMPY:
        return _FROM_NUMPY[numpy_dtype]
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{numpy_dtype.name}. The only supported types "
        "are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
    )


def to_numpy_dtype(d: dtype | np.dtype | type | str | None) -> np.dtype | None:
    """NumPy dtype for a lucid dtype (or anything NumPy accepts); None stays None."""
    if d is None:
        return None
    if type(d) is dtype:
        return d.numpy_dtype
    if d is _builtin_float:
        # PyTorch reads the Python type `float` as float64, whatever the default dtype.
        return np.dtype(np.float64)
    if d is _builtin_int:
        return np.dtype(np.int64)
    if d is _builtin_bool:
        return np.dtype(np.bool_)
    return from_numpy_dtype(np.dtype(d)).numpy_dtype


def as_dtype(d: dtype | np.dtype | type | str) -> dtype:
    """Normalise anything dtype-like to a lucid dtype."""
    if type(d) is dtype:
        return d
    return from_numpy_dtype(to_numpy_dtype(d))


def get_default_dtype() -> dtype:
    """The floating dtype used for Python floats and float factories (float32 unless changed)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; like PyTorch, only float dtypes are accepted."""
    global _default_float
    if type(d) is not dtype:
        raise TypeError(
            "invalid dtype object: only floating-point types are supported as the default type"
        )
    if d not in (float16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be cast to without losing category (PyTorch's table)."""
    for position, value in enumerate((type1, type2)):
        if not isinstance(value, dtype):
            raise TypeError(
                f"promote_types(): argument 'type{position + 1}' (position {position + 1}) must "
                f"be lucid.dtype, not {type(value).__name__}"
            )
    if type1 is type2:
        return type1
    # Across categories the higher one's dtype wins as is (int32 + float16 -> float16), where
    # NumPy would widen the float to hold every integer.
    if type1._category != type2._category:
        return type1 if type1._category > type2._category else type2
    return _FROM_NUMPY[np.promote_types(type1.numpy_dtype, type2.numpy_dtype)]


def _scalar_category(value: object) -> _builtin_int:
    if isinstance(value, _builtin_bool | np.bool_):
        return 0
    if isinstance(value, _builtin_int | np.integer):
        return 1
    if isinstance(value, _builtin_float | np.floating):
        return 2
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def result_type(*operands: object) -> dtype:
    """PyTorch's promotion over tensors and Python scalars.

    Dimensioned tensors take priority over zero-dim tensors, which take priority over
    Python scalars; a lower-priority operand only matters when its category (bool < int <
    float) is higher than every higher-priority operand's, and then a zero-dim tensor
    contributes its own dtype while a Python scalar contributes the default for its
    category (default float dtype, int64, bool).
    """
    dimensioned = None
    zero_dim = None
    scalar_category = -1
    for operand in operands:
        dt = getattr(operand, "dtype", None)
        if type(dt) is dtype:
            if operand.ndim:
                dimensioned = dt if dimensioned is None else promote_types(dimensioned, dt)
            else:
                zero_dim = dt if zero_dim is None else promote_types(zero_dim, dt)
        else:
            scalar_category = max(scalar_category, _scalar_category(operand))
    result = dimensioned
    if zero_dim is not None:
        if result is None:
            result = zero_dim
        elif zero_dim._category > result._category:
            result = zero_dim
    if scalar_category >= 0:
        if result is None or scalar_category > result._category:
            result = (bool, int64, _default_float)[scalar_category]
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result
