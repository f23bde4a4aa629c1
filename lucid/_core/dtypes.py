"""Dtype objects over NumPy dtypes, the default dtype, PyTorch's type-promotion rules, and
finfo/iinfo.

bfloat16 is stored as `ml_dtypes.bfloat16`, a NumPy dtype from the optional `ml_dtypes`
package (the `bfloat16` extra). Without it `lucid.bfloat16` still exists, so code that names it
imports, but making a tensor of it raises an error that says what to install.

ml_dtypes is imported on the first read of `bfloat16.numpy_dtype` (or the first bfloat16 NumPy
array lucid meets), not with lucid: its C extension takes several times as long to load as
the rest of lucid together.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_ml_dtypes = None  # the ml_dtypes module once bfloat16 is loaded

__all__ = [
    "dtype",
    "float16",
    "half",
    "bfloat16",
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
    "complex64",
    "cfloat",
    "complex128",
    "cdouble",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
    "result_type",
    "to_numpy_dtype",
    "from_numpy_dtype",
    "finfo",
    "iinfo",
]

_builtin_bool = bool
_builtin_int = int
_builtin_float = float


class dtype:
    """A lucid dtype; `numpy_dtype` is the NumPy dtype that stores it."""

    __slots__ = (
        "name",
        "numpy_dtype",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "itemsize",
        "_category",
    )

    def __init__(
        self, name: str, numpy_dtype: np.dtype | None, category: _builtin_int, itemsize: int = 0
    ) -> None:
        self.name = name
        # 0 = bool, 1 = integer, 2 = floating, 3 = complex: the order PyTorch promotes across.
        self._category = category
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        if numpy_dtype is None:
            # bfloat16: the slot stays unset until _load_bfloat16 fills it (None when
            # ml_dtypes is not installed; to_numpy_dtype then raises).
            self.is_signed = True
            self.itemsize = itemsize
        else:
            self.numpy_dtype = np.dtype(numpy_dtype)
            self.is_signed = self.numpy_dtype.kind in "ifc" or category == 2
            self.itemsize = self.numpy_dtype.itemsize

    def __getattr__(self, name: str) -> object:
        # Reached only while bfloat16's numpy_dtype slot is unset, i.e. before its first use.
        if name == "numpy_dtype" and self.name == "bfloat16":
            return _load_bfloat16()
        raise AttributeError(f"'lucid.dtype' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __reduce__(self) -> str:
        return self.name

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this floating dtype (complex ones are their own)."""
        if self._category == 3:
            return self
        return complex128 if self is float64 else complex64

    def to_real(self) -> dtype:
        """The floating dtype of a complex dtype's parts (real dtypes are their own)."""
        if self._category != 3:
            return self
        return float64 if self is complex128 else float32


float16 = half = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", None, 2, itemsize=2)
float32 = float = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
int16 = short = dtype("int16", np.int16, 1)
int32 = int = dtype("int32", np.int32, 1)
int64 = long = dtype("int64", np.int64, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool = dtype("bool", np.bool_, 0)
complex64 = cfloat = dtype("complex64", np.complex64, 3)
complex128 = cdouble = dtype("complex128", np.complex128, 3)

_ALL = (
    float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64,
    complex128,
)  # fmt: skip
# Complex dtypes join the table on first use (note_complex), so that lucid knows from then
# on that complex tensors may exist, at no cost to programs that never make one.
_FROM_NUMPY: dict[np.dtype, dtype] = {
    d.numpy_dtype: d for d in _ALL if d is not bfloat16 and d._category < 3
}


class _ComplexUse:
    """Whether any complex tensor may exist: until one does, ops skip checking their inputs
    for complex values (Function.apply)."""

    __slots__ = ("in_use",)

    def __init__(self) -> None:
        self.in_use = False


complex_use = _ComplexUse()


def note_complex() -> None:
    """Record that complex tensors may now exist; every path that makes a complex array from
    real ones (a complex dtype resolved, a complex Python scalar, a real-to-complex op) calls
    this first."""
    if not complex_use.in_use:
        complex_use.in_use = True
        _FROM_NUMPY[complex64.numpy_dtype] = complex64
        _FROM_NUMPY[complex128.numpy_dtype] = complex128


# What else learns bfloat16's NumPy dtype when it loads (tables keyed by NumPy dtype).
_BFLOAT16_CALLBACKS: list[Callable[[np.dtype], None]] = []


def _load_bfloat16() -> np.dtype | None:
    """Import ml_dtypes and give bfloat16 its NumPy dtype, None when ml_dtypes is missing."""
    global _ml_dtypes
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - exercised by the without-extras test
        bfloat16.numpy_dtype = None
        return None
    _ml_dtypes = ml_dtypes
    numpy_dtype = np.dtype(ml_dtypes.bfloat16)
    _FROM_NUMPY[numpy_dtype] = bfloat16
    bfloat16.numpy_dtype = numpy_dtype
    for callback in _BFLOAT16_CALLBACKS:
        callback(numpy_dtype)
    return numpy_dtype


def when_bfloat16_loads(callback: Callable[[np.dtype], None]) -> None:
    """Call `callback(numpy_dtype)` once bfloat16 has a NumPy dtype: now if it has one
    already, else when ml_dtypes is first loaded (never without ml_dtypes)."""
    _BFLOAT16_CALLBACKS.append(callback)
    if _ml_dtypes is not None:
        callback(bfloat16.numpy_dtype)


# PyTorch names a dtype in its messages by scalar type ("Half") or by C++ type ("c10::Half").
SCALAR_TYPE_NAMES = {
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip
C_TYPE_NAMES = {
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}  # fmt: skip
# PyTorch's names of the C++ types in "value cannot be converted to type ... without overflow"
CONVERSION_TYPE_NAMES = {
    "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "bool": "bool",
}  # fmt: skip
# NumPy kinds of lucid's floating dtypes: "V" is ml_dtypes' bfloat16, which NumPy files as a
# void-like type; lucid has no other "V" dtype, so `kind in FLOAT_KINDS` means "floating".
FLOAT_KINDS = "fV"
# Floating or complex: the kinds that carry gradients and can hold NaN or Inf.
INEXACT_KINDS = "fVc"
_BFLOAT16_MISSING = (
    "lucid.bfloat16 needs the ml_dtypes package, which gives NumPy a bfloat16 type: "
    'pip install ml_dtypes (from a lucid checkout: pip install -e ".[bfloat16]")'
)

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
    if numpy_dtype.kind == "c" and numpy_dtype.itemsize <= 16:
        note_complex()
        return _FROM_NUMPY[numpy_dtype]
    if numpy_dtype.name == "bfloat16" and _ml_dtypes is None and bfloat16.numpy_dtype is not None:
        # A bfloat16 array made with ml_dtypes before lucid loaded it: loading registered it.
        return from_numpy_dtype(numpy_dtype)
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{numpy_dtype.type.__name__}. The only supported "
        "types are: float64, float32, float16, complex64, complex128, bfloat16, int64, int32, "
        "int16, int8, uint8, and bool."
    )


def to_numpy_dtype(d: dtype | np.dtype | type | str | None) -> np.dtype | None:
    """NumPy dtype for a lucid dtype (or anything NumPy accepts); None stays None."""
    if d is None:
        return None
    if type(d) is dtype:
        if d.numpy_dtype is None:
            raise RuntimeError(_BFLOAT16_MISSING)
        if d._category == 3:
            note_complex()
        return d.numpy_dtype
    if d is _builtin_float:
        # PyTorch reads the Python type `float` as float64, whatever the default dtype.
        return np.dtype(np.float64)
    if d is _builtin_int:
        return np.dtype(np.int64)
    if d is _builtin_bool:
        return np.dtype(np.bool_)
    if d is complex:
        note_complex()
        return np.dtype(np.complex128)
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
    if d not in (float16, bfloat16, float32, float64):
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
    if type1._category == 3 or type2._category == 3:
        # A complex dtype's parts widen to hold the other's values: complex64 with float64
        # is complex128, with any integer or smaller float complex64.
        if type1._category == type2._category:
            return complex128
        real, complex_type = (type2, type1) if type1._category == 3 else (type1, type2)
        return complex128 if complex_type is complex128 or real is float64 else complex64
    # bfloat16 and float16 each hold values the other cannot, so together they need float32.
    if type1 is bfloat16 or type2 is bfloat16:
        other = type2 if type1 is bfloat16 else type1
        if other is float16:
            return float32
        return other if other._category == 2 else bfloat16
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
    if isinstance(value, complex | np.complexfloating):
        return 3
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
            result = _higher_category(result, zero_dim)
    if scalar_category >= 0:
        if result is None:
            result = _scalar_default(scalar_category)
        elif scalar_category > result._category:
            result = _higher_category(result, _scalar_default(scalar_category))
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result


def _scalar_default(category: _builtin_int) -> dtype:
    """The dtype a Python scalar of `category` stands for: bool, int64, the default float, or
    the complex dtype of the default float."""
    if category == 3:
        note_complex()
        return complex128 if _default_float is float64 else complex64
    return (bool, int64, _default_float)[category]


def _higher_category(higher_priority: dtype, lower_priority: dtype) -> dtype:
    """A lower-priority operand of a higher category decides the category; a complex one
    over a floating result keeps the result's precision (float64 with a zero-dim complex64
    is complex128, float32 with complex128 is complex64), as PyTorch combines them."""
    if lower_priority._category == 3 and higher_priority._category == 2:
        return higher_priority.to_complex()
    return lower_priority


def numpy_finfo(numpy_dtype: np.dtype) -> object:
    """NumPy's finfo of a floating NumPy dtype; ml_dtypes' for bfloat16, which NumPy's finfo
    does not know."""
    if numpy_dtype.kind == "V":
        return _ml_dtypes.finfo(numpy_dtype)
    return np.finfo(numpy_dtype)


def _check_dtype_argument(function: str, value: object) -> None:
    if type(value) is not dtype:
        raise TypeError(
            f"{function}(): argument 'type' (position 1) must be lucid.dtype, not "
            f"{type(value).__name__}"
        )


def _short(value: _builtin_float) -> str:
    return f"{value:g}"


class finfo:
    """Machine limits of a floating dtype, with PyTorch's attribute names."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - PyTorch's name
        if type is None:
            type = _default_float
        _check_dtype_argument("finfo", type)
        # A complex dtype's limits are those of its parts.
        type = type.to_real()
        if type._category != 2:
            raise TypeError(
                "lucid.finfo() requires a floating point input type. Use lucid.iinfo to handle "
                "'lucid.finfo'"
            )
        numpy_info = numpy_finfo(to_numpy_dtype(type))
        self.bits = type.itemsize * 8
        self.eps = _builtin_float(numpy_info.eps)
        self.max = _builtin_float(numpy_info.max)
        self.min = _builtin_float(numpy_info.min)
        self.tiny = self.smallest_normal = _builtin_float(numpy_info.smallest_normal)
        # 10 ** -precision, computed in float64 (ml_dtypes rounds it to bfloat16).
        self.resolution = 10.0**-numpy_info.precision
        self.dtype = type.name

    def __eq__(self, other: object) -> _builtin_bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> _builtin_int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, "
            f"max={_short(self.max)}, eps={_short(self.eps)}, "
            f"smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Machine limits of an integer dtype, with PyTorch's attribute names."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: dtype) -> None:  # noqa: A002 - PyTorch's name
        _check_dtype_argument("iinfo", type)
        if type is bool:
            raise TypeError("lucid.bool is not supported by lucid.iinfo")
        if type._category != 1:
            raise TypeError(
                "lucid.iinfo() requires an integer input type. Use lucid.finfo to handle "
                "'lucid.iinfo'"
            )
        numpy_info = np.iinfo(type.numpy_dtype)
        self.bits = numpy_info.bits
        self.max = _builtin_int(numpy_info.max)
        self.min = _builtin_int(numpy_info.min)
        self.dtype = type.name

    def __eq__(self, other: object) -> _builtin_bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> _builtin_int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})"
