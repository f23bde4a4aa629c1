"""Tensor factories and random number generation: the only code that turns raw data into leaves."""

from __future__ import annotations

import builtins
import functools
import math
import operator
import sys
import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes, random
from lucid._core.arguments import (
    call_position,
    int_list_item_error,
    invalid_combination,
    is_int_list_item,
    raise_argument_error,
    raise_type_error,
    type_name,
    type_word,
)
from lucid._core.devices import check_device, check_pin_memory
from lucid._core.dtypes import FLOAT_KINDS, INEXACT_KINDS
from lucid._core.grad_mode import local_state
from lucid._core.random import *  # noqa: F403  (the generator functions are lucid's too)
from lucid._core.random import Generator, _rng
from lucid._core.tensor import (
    Size,
    TensorBase,
    _wrap,
    allocated,
    mark_inference,
)

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    *random.__all__,
    "tensor",
    "as_tensor",
    "from_numpy",
    "scalar_tensor",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "randperm",
    "bernoulli",
    "multinomial",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
    "asarray",
    "frombuffer",
]


# -------------------------------------------------------------------- helpers
def _leaf(array: np.ndarray, requires_grad: bool) -> Tensor:
    result = _wrap(array)
    if local_state.inference:
        mark_inference(result)
    if requires_grad:
        if array.dtype.kind not in INEXACT_KINDS:
            # Factories capitalise this message; the requires_grad setter does not (as PyTorch).
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        result._requires_grad = True
    return result


def _size(size: tuple, name: str = "empty", sequence_only: bool = False) -> tuple[int, ...]:
    """The shape of a factory's `*size` (f(2, 3) or f((2, 3))), with PyTorch's TypeErrors for
    anything else, naming the factory: its parser reports the first item of a sequence and
    every later one with different words (`pos 0`; `at pos i + 1`). `sequence_only`: a size
    that is one argument (full, randint, normal), where PyTorch takes no single int."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and (sequence_only or not is_int_list_item(size[0], 0)):
        shape = size[0]
        if not isinstance(shape, tuple | list | Size):
            raise TypeError(
                f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                f"{type_word(shape)}"
            )
    else:
        shape = size
        if not is_int_list_item(shape[0], 0):
            raise TypeError(f"{name}() takes 1 positional argument but {len(shape)} were given")
    for index, dim in enumerate(shape):
        if not is_int_list_item(dim, index):
            raise int_list_item_error(name, "size", 1, index, dim)
    result = [int(dim) for dim in shape]
    for dim in result:
        if dim < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {dim}: {result}")
    return tuple(result)


# The keyword tail every factory overload in PyTorch's messages ends with.
_FACTORY_KEYWORDS = (
    "Tensor out = None, lucid.dtype dtype = None, lucid.layout layout = None, lucid.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)"
)
_GENERATOR_KEYWORD = "lucid.Generator generator, "
# PyTorch's overloads of the factories whose bad arguments it reports against all of them.
_OVERLOADS = {
    "linspace": tuple(
        f"({first} start, {second} end, int steps, *, {_FACTORY_KEYWORDS}"
        for first, second in (
            ("Tensor", "Tensor"),
            ("Number", "Tensor"),
            ("Tensor", "Number"),
            ("Number", "Number"),
        )  # fmt: skip
    ),
    "logspace": tuple(
        f"({first} start, {second} end, int steps, float base = 10.0, *, {_FACTORY_KEYWORDS}"
        for first, second in (
            ("Tensor", "Tensor"),
            ("Number", "Tensor"),
            ("Tensor", "Number"),
            ("Number", "Number"),
        )  # fmt: skip
    ),
    "randint": tuple(
        f"({head}, *, {generator}{_FACTORY_KEYWORDS}"
        for head in ("int high, tuple of ints size", "int low, int high, tuple of ints size")
        for generator in (_GENERATOR_KEYWORD, "")
    ),
    **{
        name: tuple(
            f"({head}, *, {generator}{_FACTORY_KEYWORDS}" for generator in (_GENERATOR_KEYWORD, "")
        )  # fmt: skip
        for name, head in (
            ("rand", "tuple of ints size"),
            ("randn", "tuple of ints size"),
            ("randperm", "int n"),
        )  # fmt: skip
    },
}


def _check_dtype(function: str, dtype: Any, position: int | None = None) -> None:
    """torch's refusal of a dtype that is no dtype (a string, a NumPy type); Python's float,
    int, bool and complex are dtypes to torch too. `position` is the one the message names,
    where torch names one."""
    if dtype is None or type(dtype) is dtypes.dtype or dtype in _PYTHON_SCALAR_TYPES:
        return
    where = "" if position is None else f" (position {position})"
    raise TypeError(
        f"{function}(): argument 'dtype'{where} must be lucid.dtype, not {type(dtype).__name__}"
    )


_PYTHON_SCALAR_TYPES = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _generator_rng(function: str, generator: Any, args: tuple) -> np.random.Generator:
    if generator is not None and not isinstance(generator, Generator):
        raise invalid_combination(function, args, _OVERLOADS[function], generator=generator)
    return _rng(generator)


def _size_keyword(function: Any) -> Any:
    """Let `function(*size)` take `size=` too, as PyTorch's factories do."""

    @functools.wraps(function)
    def factory(*args: Any, **kwargs: Any) -> Any:
        if "size" in kwargs:
            if args:
                raise TypeError(f"{function.__name__}() got multiple values for argument 'size'")
            args = (kwargs.pop("size"),)
        return function(*args, **kwargs)

    return factory


def _float_dtype(dtype: Any) -> np.dtype:
    if dtype is None:
        return dtypes.get_default_dtype().numpy_dtype
    return dtypes.to_numpy_dtype(dtype)


def _infer_dtype(data: Any) -> np.dtype:
    """PyTorch's inference for Python data: floats -> default dtype, ints -> int64, complex
    numbers -> the default dtype's complex counterpart."""
    array = np.asarray(data)
    kind = array.dtype.kind
    if kind in FLOAT_KINDS:
        if isinstance(data, np.ndarray | np.generic):
            return array.dtype
        return dtypes.get_default_dtype().numpy_dtype
    if kind in "iu":
        if isinstance(data, np.ndarray | np.generic):
            return array.dtype
        return np.dtype(np.int64)
    if kind == "b":
        return np.dtype(np.bool_)
    if kind == "c":
        if isinstance(data, np.ndarray | np.generic):
            return dtypes.from_numpy_dtype(array.dtype).numpy_dtype
        # complex Python numbers: the complex dtype of the default float, as in PyTorch
        return dtypes.result_type(1j).numpy_dtype
    if kind == "O":
        if _first_leaf(data, _is_huge_int) is not _NOT_FOUND:
            raise ValueError("Overflow when unpacking long long")
        odd = _first_leaf(
            data, lambda value: not isinstance(value, bool | int | float | complex | np.generic)
        )
        raise RuntimeError(
            f"Could not infer dtype of {type(data if odd is _NOT_FOUND else odd).__name__}"
        )
    if kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    raise TypeError(f"can't convert data of type {array.dtype} to a lucid tensor")


def _nested_arrays(data: Any) -> Any:
    """Tensors nested in lists as the scalars PyTorch reads them as (a tensor of one element,
    whatever its shape; any other is PyTorch's ValueError), so NumPy sees plain values."""
    if isinstance(data, TensorBase):
        if data._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data._data.reshape(())[()]
    if isinstance(data, list | tuple):
        return [_nested_arrays(item) for item in data]
    return data


_NOT_FOUND = object()


def _first_leaf(data: Any, wanted: Any) -> Any:
    """The first value in nested lists for which `wanted(value)` holds, else _NOT_FOUND."""
    if isinstance(data, list | tuple):
        for item in data:
            found = _first_leaf(item, wanted)
            if found is not _NOT_FOUND:
                return found
        return _NOT_FOUND
    return data if wanted(data) else _NOT_FOUND


def _is_huge_int(value: Any) -> bool:
    return type(value) is int and not -(2**63) <= value < 2**63


def _checked_integers(plain: Any, target: np.dtype) -> np.ndarray:
    """Python data as integers of `target`, refused as PyTorch refuses a value out of the
    type's range (an unsigned type takes negative integers down to -max, wrapping them)."""
    wide = np.array(plain)
    if wide.dtype.kind == "b":
        return wide.astype(target)
    if wide.dtype.kind == "c":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    limits = np.iinfo(target)
    low = -int(limits.max) if wide.dtype.kind in "iu" and limits.min == 0 else int(limits.min)
    if wide.size and (
        (wide.dtype.kind == "f" and np.isnan(wide).any())
        or wide.min() < low
        or wide.max() > int(limits.max)
    ):
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")
    return wide.astype(target)


# A value past the target dtype's range becomes inf (or, for an integer dtype, what the cast
# gives), as torch.tensor makes it, without NumPy's RuntimeWarning.
def _quiet_cast() -> np.errstate:
    return np.errstate(over="ignore", invalid="ignore")


# ------------------------------------------------------------------ complex casts
# PyTorch warns once per process (TORCH_WARN_ONCE) when a cast drops imaginary parts.
_complex_cast_warned = [False]


def real_part_for(source: np.ndarray, numpy_dtype: np.dtype) -> np.ndarray:
    """`source` ready to be cast to `numpy_dtype`: a complex array going to a real dtype
    gives its real part, with PyTorch's warning; bool keeps "is nonzero" of the whole value."""
    if source.dtype.kind != "c" or numpy_dtype.kind in "cb":
        return source
    if not _complex_cast_warned[0]:
        _complex_cast_warned[0] = True
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            UserWarning,
            stacklevel=_user_stacklevel(),
        )
    return source.real


def _user_stacklevel() -> int:
    """The stacklevel of the first frame outside lucid, so a warning names the user's line."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("lucid"):
        frame = frame.f_back
        level += 1
    return level


# ------------------------------------------------------------------ factories
def tensor(
    data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:  # fmt: skip
    """A new leaf tensor holding a copy of `data` (nested lists, scalars, arrays, tensors).

    Example::

        x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    """
    check_device(device)
    check_pin_memory(pin_memory)
    if isinstance(data, TensorBase):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than lucid.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        source = data._data
        target = dtypes.to_numpy_dtype(dtype) or source.dtype
        with _quiet_cast():
            array = real_part_for(source, target).astype(target, copy=True)
    else:
        _check_dtype("tensor", dtype)
        plain = _nested_arrays(data)
        try:
            target = dtypes.to_numpy_dtype(dtype) if dtype is not None else _infer_dtype(plain)
            if target.kind in "iu" and not isinstance(plain, np.ndarray | np.generic):
                if _first_leaf(plain, _is_huge_int) is not _NOT_FOUND:
                    raise ValueError("Overflow when unpacking long long")
                array = _checked_integers(plain, target)
            else:
                if isinstance(plain, np.ndarray):
                    plain = real_part_for(plain, target)
                with _quiet_cast():
                    array = np.array(plain, dtype=target)
        except TypeError as error:
            if "complex" in str(error) and target.kind not in "iu":
                raise TypeError("must be real number, not complex") from None
            raise
        except ValueError:
            error = _ragged_error(plain)
            if error is None:
                raise
            raise error from None
    return _leaf(array, requires_grad)


def _ragged_error(data: Any) -> Exception | None:
    """PyTorch's error for nested sequences that do not form a rectangular shape.

    The expected length at each depth is that of the first sequence there; the first
    sequence (depth first) that differs, or a number where a sequence belongs, is reported.
    """
    shape = []
    probe = data
    while _is_sequence(probe):
        shape.append(len(probe))
        if len(probe) == 0:
            break
        probe = probe[0]

    def first_error(item: Any, dim: int) -> Exception | None:
        if dim == len(shape):
            if not _is_sequence(item):
                return None
            # A sequence where the first element at this depth was a number: PyTorch reads
            # it as a number of that kind.
            if isinstance(probe, float | np.floating):
                return TypeError(f"must be real number, not {type(item).__name__}")
            return TypeError(f"'{type(item).__name__}' object cannot be interpreted as an integer")
        if not _is_sequence(item):
            return TypeError("not a sequence")
        if len(item) != shape[dim]:
            return ValueError(
                f"expected sequence of length {shape[dim]} at dim {dim} (got {len(item)})"
            )
        for element in item:
            error = first_error(element, dim + 1)
            if error is not None:
                return error
        return None

    return first_error(data, 0)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.ndim > 0)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like `tensor`, but shares memory with a tensor or ndarray when the dtype allows."""
    check_device(device)
    if isinstance(data, TensorBase):
        if dtype is None or dtypes.to_numpy_dtype(dtype) == data._data.dtype:
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray):
        dtypes.from_numpy_dtype(data.dtype)
        target = dtypes.to_numpy_dtype(dtype) if dtype is not None else data.dtype
        with _quiet_cast():
            return _wrap(real_part_for(data, target).astype(target, copy=False))
    return tensor(data, dtype=dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with `ndarray` (writes to one are seen by the other)."""
    if not isinstance(ndarray, np.ndarray):
        kind = type(ndarray)
        name = kind.__qualname__
        if kind.__module__ != "builtins":
            name = f"{kind.__module__}.{name}"
        raise TypeError(f"expected np.ndarray (got {name})")
    dtypes.from_numpy_dtype(ndarray.dtype)
    owner = ndarray
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    _lent_arrays[id(owner)] = owner
    return _wrap(ndarray)


# Memory lent by from_numpy: PyTorch cannot resize such a storage (resize_ refuses it), so
# lucid does not either. Weak, so a lent array is freed as usual.
_lent_arrays: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def is_lent(array: np.ndarray) -> bool:
    """Whether `array`'s memory came from `from_numpy`."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return _lent_arrays.get(id(owner)) is owner


def scalar_tensor(value: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:  # fmt: skip
    check_device(device)
    if isinstance(value, TensorBase) and value._data.ndim == 0:
        value = value.item()  # a 0-d tensor is a Number here, as in PyTorch
    if not isinstance(value, bool | int | float | complex | np.generic):
        raise TypeError(
            f"scalar_tensor(): argument 's' (position 1) must be Number, not "
            f"{'Tensor' if isinstance(value, TensorBase) else type(value).__name__}"
        )
    target = _float_dtype(dtype)
    if isinstance(value, complex | np.complexfloating):
        dtypes.note_complex()
        value = _complex_fill(complex(value), target)
    return _leaf(np.array(value, dtype=target), requires_grad)


@_size_keyword
def zeros(*size: Any, dtype: Any = None, device: Any = None, pin_memory: bool = False,
          requires_grad: bool = False, out: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    check_pin_memory(pin_memory)
    _check_dtype("zeros", dtype)
    try:
        shape = _size(size, "zeros")
    except RuntimeError:
        # PyTorch's zeros checks sizes itself, with its own wording.
        raise RuntimeError("zeros: Dimension size must be non-negative.") from None
    target = _float_dtype(dtype)
    return _leaf(allocated(lambda: np.zeros(shape, target), shape, target), requires_grad)


@_size_keyword
def ones(*size: Any, dtype: Any = None, device: Any = None, pin_memory: bool = False,
         requires_grad: bool = False, out: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    check_pin_memory(pin_memory)
    _check_dtype("ones", dtype)
    shape, target = _size(size, "ones"), _float_dtype(dtype)
    return _leaf(allocated(lambda: np.ones(shape, target), shape, target), requires_grad)


@_size_keyword
def empty(*size: Any, dtype: Any = None, device: Any = None, pin_memory: bool = False,
          requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    check_pin_memory(pin_memory)
    _check_dtype("empty", dtype)
    shape, target = _size(size, "empty"), _float_dtype(dtype)
    return _leaf(allocated(lambda: np.empty(shape, target), shape, target), requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         pin_memory: bool = False, requires_grad: bool = False) -> Tensor:  # fmt: skip
    check_device(device)
    check_pin_memory(pin_memory)
    _check_dtype("full", dtype)
    fill_value = _fill_number("full", fill_value)
    target = _infer_dtype(fill_value) if dtype is None else dtypes.to_numpy_dtype(dtype)
    fill_value = _complex_fill(fill_value, target)
    shape = _size((size,), "full", sequence_only=True)
    return _leaf(allocated(lambda: np.full(shape, fill_value, target), shape, target),
                 requires_grad)  # fmt: skip


def _fill_number(function: str, value: Any) -> Any:
    """A fill value as a Python number: a number, a NumPy scalar or a 0-d tensor (PyTorch's
    `Number`); anything else is its TypeError."""
    if isinstance(value, TensorBase) and value._data.ndim == 0:
        return value.item()
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        value = value.item()
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, complex):
        dtypes.note_complex()
        return value
    raise TypeError(
        f"{function}(): argument 'fill_value' (position 2) must be Number, not {type_word(value)}"
    )


def _complex_fill(value: Any, target: np.dtype) -> Any:
    """A fill value for a complex dtype, or a complex one for a real dtype, converted as
    PyTorch's fill converts it."""
    if target.kind == "c":
        return _kernel_scalar(value, target)
    if not isinstance(value, complex):
        return value
    if target.kind == "b":
        return bool(value)
    return _kernel_scalar(value, target)


def _python_number(value: Any) -> Any:
    return value.item() if isinstance(value, TensorBase) else value


def _is_number(value: Any) -> bool:
    """A Number to PyTorch's argument parser: a Python or NumPy scalar, or a zero-dim tensor."""
    if isinstance(value, TensorBase):
        return value._data.ndim == 0
    return isinstance(value, int | float | complex | np.generic)


_ARANGE_SIGNATURES = (
    " * (Number end, *, Tensor out = None, lucid.dtype dtype = None, lucid.layout layout = None, "
    "lucid.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (Number start, Number end, *, lucid.dtype dtype = None, lucid.layout layout = None, "
    "lucid.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (Number start, Number end, Number step = 1, *, Tensor out = None, lucid.dtype dtype = "
    "None, lucid.layout layout = None, lucid.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)"
)


# ------------------------------------------------------- arange, linspace, logspace, bit for bit
# These compute what PyTorch's CPU kernels compute, to the last bit (checked against torch by
# tests/test_range_factories_bitwise.py). PyTorch compiles the arange and linspace kernels once
# per CPU capability, and its AVX2 and AVX-512 builds fuse `start + step * i` into one
# multiply-add with a single rounding; lucid follows those builds, the ones PyTorch picks on any
# x86-64 CPU of the last decade (its baseline build, for CPUs without AVX2, rounds twice).
# NumPy has no fused multiply-add, so `_fma` computes one exactly. logspace is compiled once,
# unfused, and calls C's pow().


def _check_arange_bounds(start: Any, end: Any, step: Any) -> None:
    """PyTorch's checks, in double."""
    first, last, stride = float(start), float(end), float(step)
    if not (stride > 0 or stride < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(first) and math.isfinite(last)):
        raise RuntimeError(f"unsupported range: {first:g} -> {last:g}")
    if not ((stride > 0 and last >= first) or (stride < 0 and last <= first)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


class _NotGiven:
    """The default of an argument whose explicit None PyTorch refuses (arange's bounds)."""

    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def arange(start: Any = _NOT_GIVEN, end: Any = _NOT_GIVEN, step: Any = 1, *, dtype: Any = None,
           device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Values from `start` to `end` (exclusive) by `step`; int64 when all three are ints.

    Bit for bit PyTorch's CPU result (see `_arange_values`), up to 32768 elements or with one
    PyTorch thread: beyond that PyTorch splits the range among its threads, and where the
    pieces start moves the last bit of a few floating-point values.
    """
    check_device(device)
    check_pin_memory(pin_memory)
    if start is _NOT_GIVEN and end is _NOT_GIVEN:
        raise TypeError(
            "arange() received an invalid combination of arguments - got (), but expected one "
            "of:\n" + _ARANGE_SIGNATURES
        )
    if end is _NOT_GIVEN and not _is_number(start):
        raise TypeError(
            f"arange(): argument 'end' (position 1) must be Number, not {type(start).__name__}"
        )
    if not all(_is_number(value) for value in (start, end, step) if value is not _NOT_GIVEN):
        given = (start, end) if step == 1 and step.__class__ is int else (start, end, step)
        got = ", ".join(type(value).__name__ for value in given if value is not _NOT_GIVEN)
        raise TypeError(
            f"arange() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n{_ARANGE_SIGNATURES}\n"
        )
    if start is _NOT_GIVEN:
        start = 0
    elif end is _NOT_GIVEN:
        start, end = 0, start
    start, end, step = _python_number(start), _python_number(end), _python_number(step)
    start, end, step = _real_bound(start), _real_bound(end), _real_bound(step)
    if dtype is None:
        integral = all(isinstance(v, int | np.integer) for v in (start, end, step))
        target = np.dtype(np.int64) if integral else dtypes.get_default_dtype().numpy_dtype
    else:
        target = dtypes.to_numpy_dtype(dtype)
    _check_range_dtype("arange_cpu", target)
    if target.kind == "c":
        raise _not_implemented_for("arange_cpu", target)
    _check_arange_bounds(start, end, step)
    size = _arange_size(start, end, step, target)
    return _leaf(_arange_values(start, step, size, target), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """`steps` values from `start` to `end`, bit for bit as PyTorch's CPU kernel computes them
    (see `_linspace_values`)."""
    check_device(device)
    check_pin_memory(pin_memory)
    if (not isinstance(steps, int | np.integer) or isinstance(steps, bool)
            or not (_is_number(start) and _is_number(end))):  # fmt: skip
        raise invalid_combination("linspace", (start, end, steps), _OVERLOADS["linspace"])
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _check_dtype("linspace", dtype)
    start, end = _python_number(start), _python_number(end)
    target = _range_dtype("linspace", start, end, dtype)
    if steps <= 1:  # PyTorch fills a single value: only `start` is converted
        return _leaf(_filled(start, steps, target), requires_grad)
    _check_range_dtype("linspace_cpu", target)
    return _leaf(_linspace_values(start, end, steps, target), requires_grad)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    """`base` to the powers linspace would give, bit for bit as PyTorch's CPU computes them (see
    `_logspace_values`)."""
    check_device(device)
    check_pin_memory(pin_memory)
    if (not isinstance(steps, int | np.integer) or isinstance(steps, bool)
            or not (_is_number(start) and _is_number(end))):  # fmt: skip
        raise invalid_combination("logspace", (start, end, steps), _OVERLOADS["logspace"])
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _check_dtype("logspace", dtype)
    start, end = _python_number(start), _python_number(end)
    target = _range_dtype("logspace", start, end, dtype)
    if steps <= 1:
        if target.kind == "c":
            value = complex(float(base)) ** complex(start) if steps else 0j
        else:
            value = _libm_pow(float(base), float(start)) if steps else 0.0
        return _leaf(_filled(value, steps, target), requires_grad)
    _check_range_dtype("logspace_cpu", target)
    return _leaf(_logspace_values(start, end, steps, float(base), target), requires_grad)


def _range_dtype(function: str, start: Any, end: Any, dtype: Any) -> np.dtype:
    """linspace's and logspace's dtype: the default one, or its complex counterpart for a
    complex bound, which PyTorch refuses to cast to a real `dtype`."""
    target = _float_dtype(dtype)
    if not any(isinstance(value, complex | np.complexfloating) for value in (start, end)):
        return target
    inferred = dtypes.result_type(1j).numpy_dtype
    if dtype is None:
        return inferred
    if target.kind != "c":
        raise RuntimeError(
            f"lucid.{function}(): inferred dtype {dtypes.C_TYPE_NAMES[inferred.name]} can't be "
            f"safely cast to passed dtype {dtypes.SCALAR_TYPE_NAMES[target.name]}"
        )
    return target


def _filled(value: Any, count: int, target: np.dtype) -> np.ndarray:
    """`count` (0 or 1) copies of `value`, converted as PyTorch's fill_ converts it."""
    if count == 0:
        return np.empty(0, dtype=target)
    if target.kind == "b":
        return np.full(1, bool(value))
    return np.full(1, _kernel_scalar(value, target), dtype=target)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, e): s = a + b rounded, and a + b = s + e exactly (Knuth's TwoSum)."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _split(x: Any) -> tuple[Any, Any]:
    """x = hi + lo exactly, each with at most 26 significant bits (Veltkamp's split). Integers
    below 2**26 need no split; values too large for the splitting constant are scaled by a
    power of two, which is exact."""
    if x.dtype.kind in "iu" and (x.size == 0 or np.abs(x).max() < 2**26):
        return x.astype(np.float64), 0.0
    x = x.astype(np.float64)
    large = np.abs(x) > 2.0**996
    x = np.where(large, x * 2.0**-28, x)
    scaled = 134217729.0 * x  # 2**27 + 1
    hi = scaled - (scaled - x)
    scale = np.where(large, 2.0**28, 1.0)
    return hi * scale, (x - hi) * scale


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e): p = a * b rounded, and a * b = p + e exactly (Dekker's product)."""
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    p = (a_hi + a_lo) * (b_hi + b_lo)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _add_round_to_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd: when inexact, the neighbour of the exact sum whose last bit is 1."""
    s, error = _two_sum(a, b)
    bits = np.asarray(s).view(np.int64)
    # an even inexact sum moves one unit away from zero if the error points that way, else
    # toward it (the neighbour either way has its last bit set)
    away = (error > 0) == (s > 0)
    inexact_even = (error != 0) & (bits & 1 == 0) & np.isfinite(s)
    step = np.where(inexact_even, np.where(away, 1, -1), 0)
    return (bits + step).view(np.float64)


def _fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """a * b + c in float64 with one rounding, as an FMA instruction computes it.

    The product is split exactly into two doubles and added to c exactly; the low parts are
    summed rounded to odd, so that the last addition rounds once (Boldo and Melquiond, "Emulation
    of FMA and correctly rounded sums", IEEE TC 2008). Where that overflows (or an input is not
    finite) the unfused result stands in: the FMA's too, but for an overflowing product. Tiny
    products (below about 1e-290, where the split's parts go subnormal) may be off by a unit.
    Integer operands (indices) are taken as they are, unconverted, so that they need no split.
    """
    a, b = np.asarray(a), np.asarray(b)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(all="ignore"):
        product, product_error = _two_product(a, b)
        high, low = _two_sum(c, product)
        fused = np.asarray(high + _add_round_to_odd(low, product_error))
        # An exact zero means a * b was exact, so the unfused sum has the zero's sign right
        # where the last addition above may not.
        unfinished = ~np.isfinite(fused) | (fused == 0)
        if unfinished.any():
            plain = np.broadcast_to(a.astype(np.float64) * b + c, fused.shape)
            fused[unfinished] = plain[unfinished]
    return fused


def _fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """a * b + c for float32 values with one rounding: the product is exact in float64, and the
    sum there, rounded to odd, rounds to float32 as the exact sum would."""
    a, b, c = (np.asarray(v, dtype=np.float32).astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        return _add_round_to_odd(a * b, c).astype(np.float32)


def _kernel_scalar(value: Any, target: np.dtype) -> Any:
    """A Python number as a PyTorch kernel receives it (`Scalar::to<T>()`): a float truncated
    toward zero for an integer type, a value outside the type an error (an unsigned type also
    takes a negative integer down to -max, wrapping it), Half and BFloat16 rounded through
    float32 as c10 rounds them."""
    if isinstance(value, bool | np.bool_):
        value = int(value)
    overflow = RuntimeError(
        f"value cannot be converted to type {dtypes.CONVERSION_TYPE_NAMES[target.name]} without "
        "overflow"
    )
    if target.kind == "c":
        wide = np.array(complex(value), dtype=np.complex128)
        limit = dtypes.numpy_finfo(target).max
        if any(math.isfinite(part) and abs(part) > limit for part in (wide.real, wide.imag)):
            raise overflow
        return wide.astype(target)[()]
    if isinstance(value, complex | np.complexfloating):
        # c10 refuses to drop a nonzero imaginary part
        if value.imag != 0:
            raise overflow
        value = value.real
    if target.kind in "iu":
        info = np.iinfo(target)
        if isinstance(value, int | np.integer):
            value = int(value)
            lowest = -info.max if target.kind == "u" else info.min
            if value < lowest or value > info.max:
                raise overflow
            return np.array(value, dtype=np.int64).astype(target)[()]
        value = float(value)
        if math.isnan(value) or value < info.min or value > info.max:
            raise overflow
        return np.array(math.trunc(value), dtype=np.int64).astype(target)[()]
    if isinstance(value, int | np.integer):
        wide = np.array(int(value), dtype=np.int64)
    else:
        wide = np.array(float(value), dtype=np.float64)
    if np.isfinite(wide) and abs(wide) > dtypes.numpy_finfo(target).max:
        raise overflow
    if target.itemsize == 2:  # c10 converts to Half and BFloat16 from float only
        wide = wide.astype(np.float32)
    return wide.astype(target)[()]


def _check_range_dtype(kernel: str, target: np.dtype) -> None:
    if target.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _not_implemented_for(kernel: str, target: np.dtype) -> NotImplementedError:
    name = dtypes.SCALAR_TYPE_NAMES[target.name]
    return NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _real_bound(value: Any) -> Any:
    """A complex range bound as PyTorch reads it, a double: its real part, if it has no
    imaginary part."""
    if isinstance(value, complex | np.complexfloating):
        return float(_kernel_scalar(value, np.dtype(np.float64)))
    return value


def _arange_size(start: Any, end: Any, step: Any, target: np.dtype) -> int:
    """PyTorch's element count: in int64 for an int64 result, else ceil((end - start) / step)
    in double."""
    if target == np.int64:
        first, last = _kernel_scalar(start, target), _kernel_scalar(end, target)
        stride = int(_kernel_scalar(step, target))
        if stride == 0:
            raise ValueError("step must be nonzero")
        sign = (stride > 0) - (stride < 0)
        numerator = int(last) - int(first) + stride - sign
        size = builtins.abs(numerator) // builtins.abs(stride)  # C++ division truncates
        return size if (numerator >= 0) == (stride > 0) else -size
    size = math.ceil((float(end) - float(start)) / float(step))
    if size < 0 or size > np.iinfo(np.int64).max:
        raise RuntimeError("invalid size, possible overflow?")
    return size


def _arange_values(start: Any, step: Any, size: int, target: np.dtype) -> np.ndarray:
    """PyTorch's arange kernel. It accumulates in double (float for Half and BFloat16, int64 for
    integers) and fills 32-byte vectors two at a time: a vector's first lane is start + step * i
    rounded to the dtype, lane k adds k * step to it; the last size % (2 * lanes) elements come
    one at a time, as start + step * i."""
    index = np.arange(size)
    if target.kind in "iu":
        first = int(_kernel_scalar(start, np.dtype(np.int64)))
        stride = int(_kernel_scalar(step, np.dtype(np.int64)))
        with np.errstate(over="ignore"):
            return (np.int64(first) + np.int64(stride) * index).astype(target)
    exact = 2.0 ** (dtypes.numpy_finfo(target).nmant + 1)
    negative_zero = float(start) == 0 and math.copysign(1.0, float(start)) < 0
    if float(start).is_integer() and float(step).is_integer() and not negative_zero:
        if builtins.max(abs(float(start)), abs(float(start) + float(step) * size)) <= exact:
            # integers the dtype holds exactly: no rounding anywhere, whatever the order
            return (int(start) + int(step) * index).astype(target)
    if target.itemsize == 2:  # Half and BFloat16 accumulate in float
        first = _kernel_scalar(start, np.dtype(np.float32))
        stride = _kernel_scalar(step, np.dtype(np.float32))
        fma = _fma32
    else:
        first, stride, fma = float(start), float(step), _fma
    lanes = 32 // target.itemsize
    vectorized = size - size % (2 * lanes)
    values = np.empty(size, dtype=target)
    grid = values[:vectorized].reshape(-1, lanes)
    with np.errstate(all="ignore"):
        base = fma(stride, index[:vectorized:lanes], first).astype(target)
        grid[:, 0] = base
        lane = np.arange(1, lanes)
        grid[:, 1:] = fma(lane, stride, base[:, None].astype(np.float64)).astype(target)
        values[vectorized:] = fma(stride, index[vectorized:], first).astype(target)
    return values


def _linspace_values(start: Any, end: Any, steps: int, target: np.dtype) -> np.ndarray:
    """PyTorch's linspace kernel: step = (end - start) / (steps - 1) in the dtype (in double for
    integers), the first half start + step * i and the rest end - step * (steps - 1 - i),
    fused for float32, float64 and integers, rounded at every operation for Half and
    BFloat16 (c10 computes those in float, rounding each result)."""
    first, last = _kernel_scalar(start, target), _kernel_scalar(end, target)
    halfway = steps // 2
    up = np.arange(halfway)  # i for the first half
    down = np.arange(steps - 1 - halfway, -1, -1)  # steps - 1 - i for the rest
    with np.errstate(all="ignore"):
        if target.kind == "c":
            # the kernel multiplies by a real index, so each part is fused on its own
            step = (last - first) / target.type(steps - 1)
            real_dtype = np.float32 if target == np.complex64 else np.float64
            fused = _fma32 if target == np.complex64 else _fma
            up, down = up.astype(real_dtype), down.astype(real_dtype)
            values = np.empty(steps, target)
            for part in ("real", "imag"):
                lower = fused(getattr(step, part), up, getattr(first, part))
                upper = fused(-getattr(step, part), down, getattr(last, part))
                setattr(values, part, np.concatenate([lower, upper]))
            return values
        if target.kind in "iu":
            step = (float(last) - float(first)) / (steps - 1)
            lower, upper = _fma(step, up, float(first)), _fma(-step, down, float(last))
        elif target.itemsize == 2:
            step = (last - first) / np.float32(steps - 1).astype(target)
            lower = first + step * up.astype(np.float32).astype(target)
            upper = last - step * down.astype(np.float32).astype(target)
        else:
            step = (last - first) / target.type(steps - 1)
            if target == np.float32:  # the index is converted to float first
                lower = _fma32(step, up.astype(target), first)
                upper = _fma32(-step, down.astype(target), last)
            else:
                lower, upper = _fma(step, up, first), _fma(-step, down, last)
        return np.concatenate([lower, upper]).astype(target)


def _libm_pow(base: float, exponent: float) -> float:
    """C's pow(), which PyTorch calls (NumPy's power may use SIMD code that differs from it in
    the last bit; math.pow is the C library's), with C's results where math.pow raises."""
    try:
        return math.pow(base, exponent)
    except OverflowError:
        negative = base < 0 and exponent.is_integer() and exponent % 2 == 1
        return -math.inf if negative else math.inf
    except ValueError:
        if base != 0:
            return math.nan  # a negative base to a fractional power
        odd = exponent.is_integer() and exponent % 2 == 1
        return -math.inf if odd and math.copysign(1.0, base) < 0 else math.inf


def _logspace_values(start: Any, end: Any, steps: int, base: float, target: np.dtype) -> np.ndarray:
    """PyTorch's logspace (not a per-capability kernel, so nothing is fused): the exponents as
    linspace lays them out, with the step in double, and C's pow() of each."""
    first, last = _kernel_scalar(start, target), _kernel_scalar(end, target)
    if target.kind == "c":
        return _complex_logspace_values(first, last, steps, base, target)
    if target.kind in "iu":
        difference = float(int(last) - int(first))  # C++ promotes small integers to int
    else:
        with np.errstate(all="ignore"):
            difference = float(last - first)
    step = difference / (steps - 1)
    index = np.arange(steps)
    with np.errstate(all="ignore"):
        exponents = np.where(
            index < steps // 2,
            float(first) + step * index,
            float(last) - step * (steps - 1 - index),
        )
    values = np.array([_libm_pow(float(base), exponent) for exponent in exponents.tolist()])
    if target.kind in FLOAT_KINDS and target.itemsize == 2:
        values = values.astype(np.float32)  # c10 converts to Half and BFloat16 from float
    with np.errstate(all="ignore"):
        return values.astype(target)


def _complex_logspace_values(first: Any, last: Any, steps: int, base: float,
                             target: np.dtype) -> np.ndarray:  # fmt: skip
    """logspace for a complex dtype: the exponents laid out as linspace's, in the dtype, and
    the complex power of `base` to each."""
    step = (last - first) / target.type(steps - 1)
    index = np.arange(steps)
    with np.errstate(all="ignore"):
        exponents = np.where(
            index < steps // 2,
            first + step * index.astype(target),
            last - step * (steps - 1 - index).astype(target),
        )
        return np.power(target.type(base), exponents).astype(target)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        pin_memory: bool = False, requires_grad: bool = False) -> Tensor:  # fmt: skip
    check_device(device)
    check_pin_memory(pin_memory)
    for position, (name, value) in enumerate((("n", n), ("m", m))):
        if value is not None and not isinstance(value, int | np.integer):
            raise TypeError(
                f"eye(): argument '{name}' (position {position + 1}) must be int, not "
                f"{type(value).__name__}"
            )
    if n < 0 or (m is not None and m < 0):
        which, value = ("n", n) if n < 0 else ("m", m)
        raise RuntimeError(f"{which} must be greater or equal to 0, got {value}")
    return _leaf(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


# ----------------------------------------------------------------------- random
def _random_float_dtype(dtype: Any, kernel: str) -> np.dtype:
    """The dtype of a continuous distribution's samples; PyTorch has no integer kernels."""
    target = _float_dtype(dtype)
    if target.kind not in INEXACT_KINDS:
        name = dtypes.SCALAR_TYPE_NAMES[target.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    return target


def _as_complex(parts: np.ndarray, target: np.dtype) -> np.ndarray:
    """Complex numbers of `target` from pairs (real, imaginary) along the last dim of `parts`."""
    real_dtype = np.float32 if target == np.complex64 else np.float64
    return np.ascontiguousarray(parts.astype(real_dtype)).view(target)[..., 0]


@_size_keyword
def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         pin_memory: bool = False, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Uniform samples on [0, 1)."""
    check_device(device)
    check_pin_memory(pin_memory)
    _check_dtype("rand", dtype)
    rng = _generator_rng("rand", generator, size)
    target = _random_float_dtype(dtype, "check_uniform_bounds")
    shape = _size(size, "rand")
    if target.kind == "c":
        # PyTorch draws the real and imaginary parts each uniform on [0, 1)
        parts = allocated(lambda: rng.random((*shape, 2)), shape, target)
        return _leaf(_as_complex(parts, target), requires_grad)
    if target.itemsize == 2:
        # float16/bfloat16: float32 samples rounded; one that rounds up to 1 wraps to 0, as
        # PyTorch keeps its samples in [0, 1)
        values = allocated(lambda: rng.random(shape, dtype=np.float32), shape, target)
        values = values.astype(target)
        values[values == 1] = 0
        return _leaf(values, requires_grad)
    values = allocated(lambda: rng.random(shape), shape, target).astype(target)
    return _leaf(values, requires_grad)


@_size_keyword
def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          pin_memory: bool = False, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Standard normal samples."""
    check_device(device)
    check_pin_memory(pin_memory)
    _check_dtype("randn", dtype)
    rng = _generator_rng("randn", generator, size)
    target = _random_float_dtype(dtype, "normal_kernel_cpu")
    shape = _size(size, "randn")
    if target.kind == "c":
        # PyTorch's complex normal has unit variance: each part has variance 1/2
        parts = allocated(lambda: rng.standard_normal((*shape, 2)), shape, target)
        return _leaf(_as_complex(parts * math.sqrt(0.5), target), requires_grad)
    if target.itemsize == 2:
        # float16/bfloat16 samples are drawn in float32 and rounded, as PyTorch's
        values = allocated(lambda: rng.standard_normal(shape, dtype=np.float32), shape, target)
        values = values.astype(target)
        return _leaf(values, requires_grad)
    values = allocated(lambda: rng.standard_normal(shape), shape, target).astype(target)
    return _leaf(values, requires_grad)


def randint(low: int, high: int | None = None, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            pin_memory: bool = False, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Integers uniform on [low, high); `randint(high, size)` as in PyTorch."""
    check_device(device)
    check_pin_memory(pin_memory)
    given = tuple(value for value in (low, high, size) if value is not None)
    if size is None:
        if high is None or not isinstance(high, tuple | list | Size):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    bounds_are_ints = all(isinstance(v, int | np.integer) and not isinstance(v, bool)
                          for v in (low, high))  # fmt: skip
    if not bounds_are_ints or (generator is not None and not isinstance(generator, Generator)):
        keywords = {} if generator is None else {"generator": generator}
        raise invalid_combination("randint", given, _OVERLOADS["randint"], **keywords)
    _check_dtype("randint", dtype)
    if high <= low:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    target = dtypes.to_numpy_dtype(dtype) if dtype is not None else np.dtype(np.int64)
    if target.kind == "c":
        raise RuntimeError(
            "check_random_bounds handles only integral, floating-point and boolean types"
        )
    shape = _size((size,), "randint", sequence_only=True)
    values = allocated(lambda: _rng(generator).integers(low, high, shape, dtype=np.int64),
                        shape, target).astype(target)  # fmt: skip
    return _leaf(values, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    check_device(device)
    check_pin_memory(pin_memory)
    rng = _generator_rng("randperm", generator, (n,))
    _check_dtype("randperm", dtype)
    target = dtypes.to_numpy_dtype(dtype) if dtype is not None else np.dtype(np.int64)
    if target.kind == "c":
        raise _not_implemented_for("randperm", target)
    _size((n,))
    return _leaf(rng.permutation(n).astype(target), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: Generator | None = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Normal samples; `mean` and `std` may be tensors (broadcast) or floats with `size`."""
    check_device(device)
    mean_array = mean._data if isinstance(mean, TensorBase) else mean
    std_array = std._data if isinstance(std, TensorBase) else std
    if np.any(np.asarray(std_array) < 0):
        # PyTorch prints the double as C++ streams do (%g).
        raise RuntimeError(f"normal expects std >= 0.0, but found std {np.min(std_array):g}")
    if size is not None:
        shape = _size((size,), "normal", sequence_only=True)
    else:
        shape = np.broadcast_shapes(np.shape(mean_array), np.shape(std_array))
    if isinstance(mean, TensorBase):
        target = mean._data.dtype
    elif isinstance(std, TensorBase):
        target = std._data.dtype
    else:
        target = _float_dtype(dtype)
    noise = _rng(generator).standard_normal(shape, dtype=np.float64)
    return _leaf((mean_array + std_array * noise).astype(target), requires_grad)


# PyTorch names dtypes by scalar type in bernoulli's and multinomial's messages.
_SCALAR_NAMES = {
    "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip


def bernoulli(input: Tensor, p: float | None = None, *,
              generator: Generator | None = None) -> Tensor:  # fmt: skip
    if not isinstance(input, TensorBase):
        raise_type_error(input, "Tensor")
    if input._data.dtype.kind == "c":
        kernel = "bernoulli_tensor_cpu_self_" if p is None else "bernoulli_scalar_cpu_"
        raise _not_implemented_for(kernel, input._data.dtype)
    if p is None:
        probabilities = input._data
        if probabilities.dtype.kind not in FLOAT_KINDS:
            raise NotImplementedError(
                '"bernoulli_tensor_cpu_p_" not implemented for '
                f"'{_SCALAR_NAMES[probabilities.dtype.name]}'"
            )
        if np.any(~((probabilities >= 0) & (probabilities <= 1))):
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)"
            )
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        probabilities = p
    draws = _rng(generator).random(input._data.shape) < probabilities
    return _wrap(draws.astype(input._data.dtype))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:  # fmt: skip
    """Indices drawn from the categories of each row of `input`, weighted by its entries."""
    if not isinstance(input, TensorBase):
        raise_type_error(input, "Tensor")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int | np.integer):
        raise TypeError(
            f"multinomial(): argument 'num_samples' (position "
            f"{call_position('multinomial', 2)}) must be int, not {type(num_samples).__name__}"
        )
    if replacement.__class__ is not bool:
        raise TypeError(
            f"multinomial(): argument 'replacement' (position "
            f"{call_position('multinomial', 3)}) must be bool, not {type_name(replacement)}"
        )
    array = input._data
    if array.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if array.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{_SCALAR_NAMES[array.dtype.name]}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = array.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    weights = np.atleast_2d(array.astype(np.float64))
    if np.any(~np.isfinite(weights) | (weights < 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = weights.sum(-1, keepdims=True)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(generator)
    rows = weights.shape[0]
    if replacement:
        # inverse CDF for every row at once: rows are laid end to end, row r shifted by r, so a
        # single sorted search serves them all (the last positive category ends its row at 1)
        cdf = np.cumsum(weights / totals, axis=-1)
        cdf[cdf >= cdf[:, -1:]] = 1.0
        offsets = np.arange(rows, dtype=np.float64)[:, None]
        draws = rng.random((rows, num_samples)) + offsets
        flat = np.searchsorted((cdf + offsets).ravel(), draws.ravel(), side="right")
        result = flat.reshape(rows, num_samples) - categories * np.arange(rows)[:, None]
    else:
        # exponential races: category i finishes at E_i / w_i; the first num_samples to finish
        # are a draw without replacement, in order
        with np.errstate(divide="ignore"):
            finish = rng.standard_exponential(weights.shape) / weights
        result = np.argsort(finish, axis=-1, kind="stable")[:, :num_samples]
    result = np.minimum(result, categories - 1).astype(np.int64)
    return _wrap(result if array.ndim == 2 else result[0])


# ------------------------------------------------------------------ *_like
def _like_dtype(input: Tensor, dtype: Any) -> np.dtype:
    return dtypes.to_numpy_dtype(dtype) if dtype is not None else input._data.dtype


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    try:
        return _leaf(np.zeros(input._data.shape, _like_dtype(input, dtype)), requires_grad)
    except AttributeError as error:
        raise_argument_error(error)
        raise


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    try:
        return _leaf(np.ones(input._data.shape, _like_dtype(input, dtype)), requires_grad)
    except AttributeError as error:
        raise_argument_error(error)
        raise


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    try:
        return _leaf(np.empty(input._data.shape, _like_dtype(input, dtype)), requires_grad)
    except AttributeError as error:
        raise_argument_error(error)
        raise


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    if not isinstance(input, TensorBase):
        raise_type_error(input, "Tensor")
    _check_dtype("full_like", dtype)
    fill_value = _fill_number("full_like", fill_value)
    target = _like_dtype(input, dtype)
    fill_value = _complex_fill(fill_value, target)
    return _leaf(np.full(input._data.shape, fill_value, target), requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    try:
        return rand(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)
    except AttributeError as error:
        raise_argument_error(error)
        raise


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    check_device(device)
    try:
        return randn(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)
    except AttributeError as error:
        raise_argument_error(error)
        raise


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None,
                 device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    check_device(device)
    try:
        return randint(low, high, input._data.shape, dtype=dtype or input.dtype,
                       requires_grad=requires_grad)  # fmt: skip
    except AttributeError as error:
        raise_argument_error(error)
        raise


# ------------------------------------------------------------------ window functions
_WINDOW_C_TYPES = {
    "float16": "c10::Half", "float32": "float", "float64": "double", "int8": "signed char",
    "int16": "short int", "int32": "int", "int64": "long int", "uint8": "unsigned char",
    "bool": "bool",
}  # fmt: skip


def _window(
    name: str,
    window_length: int,
    periodic: bool,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    shape: Any,
) -> Tensor:
    """A window of `window_length` points: `shape(position)` for positions in [0, 1] across a
    symmetric window, one point longer (its last point dropped) when `periodic`."""
    check_device(device)
    numpy_dtype = _float_dtype(dtype)
    if numpy_dtype.kind not in INEXACT_KINDS:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_WINDOW_C_TYPES[numpy_dtype.name]}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
        )
    window_length = operator.index(window_length)
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    if window_length <= 1:
        return _leaf(np.ones(window_length, numpy_dtype), requires_grad)
    if numpy_dtype.kind == "c":
        # PyTorch builds a window from arange, which has no complex kernel
        raise _not_implemented_for("arange_cpu", numpy_dtype)
    points = window_length + 1 if periodic else window_length
    position = np.arange(window_length, dtype=np.float64) / (points - 1)
    return _leaf(shape(position).astype(numpy_dtype), requires_grad)


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window, 0.5 - 0.5 cos(2 pi n / N)."""
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda t: 0.5 - 0.5 * np.cos(2.0 * np.pi * t),
    )


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window, alpha - beta cos(2 pi n / N)."""
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda t: alpha - beta * np.cos(2.0 * np.pi * t),
    )


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window, 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda t: 0.42 - 0.5 * np.cos(2.0 * np.pi * t) + 0.08 * np.cos(4.0 * np.pi * t),
    )


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Bartlett (triangular) window, `1 - |2n / N - 1|`."""
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda t: 1.0 - np.abs(2.0 * t - 1.0),
    )


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Kaiser window, I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta)."""
    return _window(
        "kaiser_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda t: (
            np.i0(beta * np.sqrt(np.clip(1.0 - (2.0 * t - 1.0) ** 2, 0.0, None))) / np.i0(beta)
        ),
    )


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:  # fmt: skip
    """`obj` as a tensor, sharing its memory where it can (a tensor or a NumPy array of the
    asked dtype) unless `copy`; `copy=False` where a copy is needed is an error."""
    check_device(device)
    if isinstance(obj, TensorBase):
        target = obj.dtype if dtype is None else dtypes.as_dtype(dtype)
        if target == obj.dtype and not copy:
            return obj
        if copy is False:
            raise ValueError(
                "can't alias tensor from device 'cpu' to device 'cpu' with a dtype change"
            )
        return obj.to(target, copy=True)
    if isinstance(obj, np.ndarray) and not copy:
        array = obj if dtype is None else obj.astype(dtypes.to_numpy_dtype(dtype), copy=False)
        if copy is False and array is not obj:
            raise ValueError("can't alias NumPy arrays with differing dtypes")
        return _leaf(array, requires_grad)
    return tensor(obj, dtype=dtype, requires_grad=requires_grad)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:  # fmt: skip
    """A 1-d tensor over an object exposing the buffer protocol, sharing its memory."""
    numpy_dtype = dtypes.to_numpy_dtype(dtype)
    length = memoryview(buffer).nbytes
    if length == 0 and count == -1 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    return _leaf(np.frombuffer(buffer, numpy_dtype, count, offset), requires_grad)
