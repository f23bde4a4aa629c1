"""The legacy tensor types: `lucid.FloatTensor`, `lucid.LongTensor`, ..., as PyTorch has them.

Each is a type object, not a subclass of Tensor. Calling one is PyTorch's legacy constructor: it
makes a lucid.Tensor of its dtype from sizes, data or another tensor. `isinstance(x,
lucid.FloatTensor)` is True for a float32 tensor; `Tensor.type()` names these types
("lucid.FloatTensor") and casts to them, by object or by name.

Example::

    ids = lucid.LongTensor([3, 1, 4])      # tensor([3, 1, 4])
    buffer = lucid.FloatTensor(2, 3)       # uninitialised, float32
    isinstance(buffer, lucid.FloatTensor)  # True
"""

from __future__ import annotations

import importlib
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import factories
from lucid._core import dtypes, layouts
from lucid._core.arguments import described_with_items
from lucid._core.devices import check_device, device
from lucid._core.tensor import Size, TensorBase
from lucid.ops.indexing import Alias
from lucid.ops.storage import is_index, torch_class_name, torch_type_name, unpack_sizes

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "set_default_tensor_type",
]  # fmt: skip


class tensortype(type):  # noqa: N801  (PyTorch's name for the class of its legacy types)
    """The class of the legacy tensor types: calling one constructs, `isinstance` checks dtype."""

    dtype: dtypes.dtype

    def __new__(metacls, name: str, bases: tuple, namespace: dict) -> tensortype:
        # Named as lucid's, as PyTorch's are torch.FloatTensor.
        namespace["__module__"] = "lucid"
        return super().__new__(metacls, name, bases, namespace)

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        return _legacy_new(cls.dtype, args, kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        return (
            isinstance(instance, TensorBase)
            and dtypes.from_numpy_dtype(instance._data.dtype) is cls.dtype
        )

    @property
    def is_cuda(cls) -> bool:
        return False

    @property
    def is_sparse(cls) -> bool:
        return False

    @property
    def is_sparse_csr(cls) -> bool:
        return False

    @property
    def is_xpu(cls) -> bool:
        return False

    @property
    def layout(cls) -> layouts.layout:
        return layouts.strided


class FloatTensor(metaclass=tensortype):
    """float32 tensors: `FloatTensor(sizes...)`, `FloatTensor(data)`, `FloatTensor(tensor)`."""

    dtype = dtypes.float32


class DoubleTensor(metaclass=tensortype):
    """float64 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.float64


class HalfTensor(metaclass=tensortype):
    """float16 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.float16


class BFloat16Tensor(metaclass=tensortype):
    """bfloat16 tensors (with ml_dtypes installed), made as FloatTensor makes float32 ones."""

    dtype = dtypes.bfloat16


class LongTensor(metaclass=tensortype):
    """int64 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.int64


class IntTensor(metaclass=tensortype):
    """int32 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.int32


class ShortTensor(metaclass=tensortype):
    """int16 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.int16


class CharTensor(metaclass=tensortype):
    """int8 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.int8


class ByteTensor(metaclass=tensortype):
    """uint8 tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.uint8


class BoolTensor(metaclass=tensortype):
    """bool tensors, made as FloatTensor makes float32 ones."""

    dtype = dtypes.bool


_LEGACY_TYPES = (
    FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
    CharTensor, ByteTensor, BoolTensor,
)  # fmt: skip


# ------------------------------------------------------------- the constructor
# PyTorch's signatures of the legacy constructor, as its error lists them, each with the type
# and name its message parser reads out of every comma-separated part (`*` is a part too).
_SIGNATURES = (
    ("(*, lucid.device device = None)", ("*", "lucid.device device ="), ("*", "None")),
    ("(lucid.Storage storage)", ("lucid.Storage",), ("storage",)),
    ("(Tensor other)", ("Tensor",), ("other",)),
    (
        "(tuple of ints size, *, lucid.device device = None)",
        ("tuple of ints", "*", "lucid.device device ="),
        ("size", "*", "None"),
    ),
    (
        "(object data, *, lucid.device device = None)",
        ("object", "*", "lucid.device device ="),
        ("data", "*", "None"),
    ),
)
_OPTIONS = (
    "TensorOptions(dtype={}, device=cpu, layout=Strided, requires_grad=false (default), "
    "pinned_memory=false (default), memory_format=(nullopt))"
)


def _legacy_new(dtype: dtypes.dtype, args: tuple, kwargs: dict) -> Tensor:
    """PyTorch's legacy constructor for `dtype`: () empty, (sizes...) uninitialised, (data) a
    copy cast to `dtype`, (tensor) an alias of a tensor of `dtype`; `device` may be the CPU."""
    keywords = [name for name in kwargs if name != "device"]
    if not args and len(keywords) == 1 and keywords[0] in ("other", "size", "data"):
        # The one argument of a signature may also be given by its name.
        value = kwargs[keywords[0]]
        if keywords[0] == "size" and (is_index(value) or isinstance(value, tuple | list)):
            _check_device(kwargs.get("device"))
            sizes = (value,) if is_index(value) else value
            return _uninitialised(dtype, unpack_sizes("new", sizes))
        if keywords[0] == "data":
            _check_device(kwargs.get("device"))
            return _from_data(dtype, value)
        if keywords[0] == "other" and isinstance(value, TensorBase):
            args, keywords = (value,), []
    if keywords:
        raise _invalid_arguments(args, kwargs)
    if len(args) == 1 and isinstance(args[0], TensorBase):
        return _alias_of(dtype, args[0], "device" in kwargs)
    _check_device(kwargs.get("device"))
    if not args:
        return factories.empty(0, dtype=dtype)
    first = args[0]
    if is_index(first) or isinstance(first, Size):
        return _uninitialised(dtype, unpack_sizes("new", args if is_index(first) else first))
    if len(args) > 1:
        raise _invalid_arguments(args, kwargs)
    return _from_data(dtype, first)


def _from_data(dtype: dtypes.dtype, data: Any) -> Tensor:
    if isinstance(data, str | bytes):
        raise TypeError(f"new(): invalid data type '{torch_type_name(data)}'")
    if not _is_sequence(data):
        raise TypeError(f"new(): data must be a sequence (got {torch_type_name(data)})")
    return factories.tensor(data, dtype=dtype)


def _alias_of(dtype: dtypes.dtype, other: Tensor, device_given: bool) -> Tensor:
    if device_given:
        raise RuntimeError(
            "Legacy tensor constructor of the form lucid.Tensor(tensor, device=device) is not "
            "supported.  Use lucid.tensor(...) or lucid.as_tensor(...) instead."
        )
    other_dtype = dtypes.from_numpy_dtype(other._data.dtype)
    if other_dtype is not dtype:
        expected = _OPTIONS.format(dtypes.C_TYPE_NAMES[dtype.name])
        given = _OPTIONS.format(dtypes.C_TYPE_NAMES[other_dtype.name])
        raise TypeError(f"expected {expected} (got {given})")
    return Alias.apply(other, (Ellipsis,), False)


def _check_device(target: Any) -> None:
    if target is None:
        return
    kind = (target if isinstance(target, device) else device(target)).type
    if kind != "cpu":
        raise RuntimeError(
            f"legacy constructor expects device type: cpu but device type: {kind} was passed"
        )


def _uninitialised(dtype: dtypes.dtype, shape: tuple[int, ...]) -> Tensor:
    for size in shape:
        if size < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {size}: {list(shape)}"
            )
    if math.prod(shape) * dtype.itemsize > 2**63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return factories.empty(shape, dtype=dtype)


def _is_sequence(value: Any) -> bool:
    """Python's sequence protocol as PyTorch tests it: a NumPy array is a sequence; a scalar, a
    dict or a tensor (which PyTorch indexes as a mapping) is not."""
    if isinstance(value, dict | np.generic | TensorBase):
        return False
    return hasattr(type(value), "__getitem__")


def _invalid_arguments(args: tuple, kwargs: dict) -> TypeError:
    """PyTorch's TypeError for arguments that fit none of the constructor's signatures, with
    its notes under each signature that takes as many arguments."""
    # PyTorch reads the keywords out of a hash map, which yields them newest first.
    keywords = dict(reversed(kwargs.items()))
    given = "".join(f"{torch_type_name(arg)}, " for arg in args)
    given += "".join(f"{name}={torch_type_name(value)}, " for name, value in keywords.items())
    if args:
        given = given[:-2]
    lines = []
    for signature, types, names in _SIGNATURES:
        lines.append(f" * {signature}\n")
        if len(args) + len(keywords) != len(names):
            continue
        named = names[max(0, len(names) - len(keywords)) :]
        unmatched = [name for name in keywords if name not in named]
        if unmatched:
            lines.append(
                "      didn't match because some of the keywords were incorrect: "
                f"{', '.join(unmatched)}\n"
            )
            continue
        described = ""
        for position in range(len(args) + len(keywords)):
            is_keyword = position >= len(args)
            value = keywords[names[position]] if is_keyword else args[position]
            mark = "" if torch_type_name(value) == types[position] else "!"
            prefix = f"{names[position]}=" if is_keyword else ""
            described += f"{mark}{prefix}{described_with_items(value, torch_type_name)}{mark}, "
        if args:
            described = described[:-2]
        lines.append(
            f"      didn't match because some of the arguments have invalid types: ({described})\n"
        )
    return TypeError(
        f"new() received an invalid combination of arguments - got ({given}), but expected one "
        f"of:\n{''.join(lines)}"
    )


# ------------------------------------------------------------- naming the types
def _named(name: str) -> Any:
    """The legacy type (or Tensor's default, as None) a type name names; PyTorch's names pass,
    so that `x.type('torch.FloatTensor')` in ported code works."""
    module, _, type_name = name.rpartition(".")
    if module in ("lucid", "torch"):
        if type_name == "Tensor":
            return None
        for legacy in _LEGACY_TYPES:
            if legacy.__name__ == type_name:
                return legacy
    if module in ("lucid.cuda", "torch.cuda") and type_name.endswith("Tensor"):
        check_device("cuda")
    raise ValueError(f"invalid type: '{name}'")


def type_dtype(value: Any) -> dtypes.dtype:
    """The dtype `Tensor.type(value)` casts to: a dtype, a legacy type or its name ("lucid." or
    "torch." with the type), or "lucid.Tensor" for the default dtype. lucid.Tensor itself is
    the caller's to map."""
    if isinstance(value, dtypes.dtype):
        return value
    if isinstance(value, str):
        legacy = _named(value)
        return dtypes.get_default_dtype() if legacy is None else legacy.dtype
    if isinstance(value, tensortype):
        return value.dtype
    if isinstance(value, type):
        raise ValueError(f"invalid type: '{torch_class_name(value)}'")
    raise TypeError("dtype must be a type, str, or dtype object")


# ----------------------------------------------------- set_default_tensor_type
_warned = [False]


def set_default_tensor_type(t: type | str, /) -> None:
    """Deprecated in PyTorch (it warns once): set the default dtype to that of the floating
    legacy type `t` (or its name, "lucid.DoubleTensor"; PyTorch's names pass too)."""
    if isinstance(t, str):
        t = _import_dotted_name(t)
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "lucid.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "lucid.set_default_dtype() and lucid.set_default_device() as alternatives.",
            UserWarning,
            stacklevel=2,
        )
    if not isinstance(t, tensortype):
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(t.dtype)


def _import_dotted_name(name: str) -> Any:
    """The object a dotted name names, as PyTorch resolves it, with `torch` read as lucid."""
    root, *attributes = name.split(".")
    target = importlib.import_module("lucid" if root == "torch" else root)
    for attribute in attributes:
        target = getattr(target, attribute)
    return target
