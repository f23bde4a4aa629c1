"""PyTorch's TypeError for an argument of the wrong type, worked out only after an op has failed.

Ops read `x._data` without first checking that `x` is a tensor, because that check would cost
every call. When the read fails, the `AttributeError` names the object that lacked the
attribute; `Function.apply` (for a forward) or a wrapper that reads its input before `apply`
hands the error to `raise_argument_error`, which looks for that object among the parameters of
the public function on the stack and raises PyTorch's message in its place::

    abs(): argument 'input' (position 1) must be Tensor, not NoneType

A correct call never reaches this module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

import numpy as np

__all__ = [
    "argument_error", "invalid_combination", "raise_argument_error", "raise_type_error",
    "type_name", "type_word",
]  # fmt: skip

_LUCID_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Helpers that pass an op's arguments on; the public function is further out.
_HELPER_FILES = (os.path.join(_LUCID_DIRECTORY, "ops", "_common.py"),)
_MISSING = object()


def type_name(value: Any) -> str:
    """A value's type as PyTorch names it in argument errors: `float`, `numpy.ndarray`."""
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def argument_error(op: str, name: str, position: int, value: Any,
                   expected: str = "Tensor") -> TypeError:  # fmt: skip
    return TypeError(
        f"{op}(): argument '{name}' (position {call_position(op, position)}) must be "
        f"{expected}, not {type_name(value)}"
    )


# The code objects of Tensor's methods that are lucid's functions bound to the class (x.tril is
# lucid.tril), each a copy named `Tensor.<name>` (lucid._tensor makes them), by id (a copy
# compares equal to its original) to the method's name. A frame running one of them is a call
# in method form.
METHOD_CODES: dict[int, str] = {}


def call_position(op: str, position: int) -> int:
    """`position`, an argument's 1-based place in the function `op` (the tensor first), as the
    call the user wrote counts it: one less when they called `op` as a Tensor method, whose
    tensor is `self` (x.tril(1.5): 'diagonal' is at position 1, as in PyTorch)."""
    return position - 1 if position > 1 and called_as_method(op) else position


def called_as_method(op: str) -> bool:
    """Whether the user's call into lucid now running is `op` in method form (`x.op(...)`)."""
    frame = sys._getframe(1)
    entry = None
    while frame is not None and frame.f_code.co_filename.startswith(_LUCID_DIRECTORY):
        entry = frame
        frame = frame.f_back
    return entry is not None and METHOD_CODES.get(id(entry.f_code)) == op


def invalid_combination(function: str, args: tuple, overloads: Sequence[str],
                        **keywords: Any) -> TypeError:  # fmt: skip
    """PyTorch's TypeError for arguments that match none of `function`'s overloads (PyTorch's
    signature text, each may carry its "didn't match because" line): `args` and `keywords` are
    the arguments given, named by type as PyTorch names them::

        randn() received an invalid combination of arguments - got (int, generator=str), but
        expected one of:
         * (tuple of ints size, *, lucid.Generator generator, ...)
    """
    got = [type_word(value) for value in args]
    got += [f"{name}={type_word(value)}" for name, value in keywords.items()]
    expected = "".join(f"\n * {overload}" for overload in overloads)
    return TypeError(
        f"{function}() received an invalid combination of arguments - got ({', '.join(got)}), "
        f"but expected one of:{expected}\n"
    )


def int_list_item_error(op: str, name: str, position: int | None, index: int,
                        value: Any) -> TypeError:  # fmt: skip
    """PyTorch's TypeError for an item of an int list that is no int. Its parser checks the
    first item when it picks the overload (`... at pos 0`) and the others while it unpacks the
    list, counting from 1 (and taking a bool there): `is_int_list_item` says which pass."""
    word = "Tensor" if hasattr(value, "_data") else type_name(value)
    if index == 0:
        where = "" if position is None else f" (position {call_position(op, position)})"
        return TypeError(
            f"{op}(): argument '{name}'{where} must be tuple of ints, but found element of type "
            f"{word} at pos 0"
        )
    return TypeError(
        f"{op}(): argument '{name}' failed to unpack the object at pos {index + 1} with error "
        f'"type must be tuple of ints,but got {word}"'
    )


def is_int(value: Any) -> bool:
    """Whether PyTorch's parser takes `value` as an int: a Python or NumPy int (not a bool) or
    a 0-d integer tensor."""
    if hasattr(value, "_data"):
        return value._data.ndim == 0 and value._data.dtype.kind in "iu"
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def is_int_list_item(value: Any, index: int) -> bool:
    """Whether PyTorch's parser takes `value` as item `index` of an int list: a Python or
    NumPy int, or a 0-d integer tensor; past the first item also a bool, which it reads as 0
    or 1, and a one-element integer tensor."""
    if index == 0:
        return is_int(value)
    if hasattr(value, "_data"):
        return value._data.dtype.kind in "iu" and value._data.size == 1
    return isinstance(value, int | np.integer)


def type_word(value: Any) -> str:
    """A value's type as PyTorch's overload errors name it: `Tensor`, `float`, `str`."""
    # a tensor has `_data` (this module sits below tensor.py)
    return "Tensor" if hasattr(value, "_data") else type(value).__name__


def described_with_items(value: Any, name_of: Callable[[Any], str]) -> str:
    """A value as PyTorch's overload errors describe a mismatched argument: its type by
    `name_of`, and a list or tuple with its items': `list of [int, float]`, `tuple of (int,)`."""
    if not isinstance(value, tuple | list):
        return name_of(value)
    items = ", ".join(name_of(item) for item in value)
    if isinstance(value, list):
        return f"list of [{items}]"
    return f"tuple of ({items}{',' if len(value) == 1 else ''})"


def raise_argument_error(error: BaseException, frame: FrameType | None = None) -> None:
    """Raise PyTorch's TypeError in place of `error` when `error` is an `AttributeError` on a
    non-tensor that the caller passed where a tensor belongs; otherwise return, and the caller
    re-raises `error`. `frame` is the innermost lucid frame to search (default: the caller's).
    """
    if error.__class__ is not AttributeError:
        return
    culprit = getattr(error, "obj", _MISSING)
    # a tensor (it has `_data`; this module sits below tensor.py) is no argument of the wrong type
    if culprit is _MISSING or hasattr(culprit, "_data"):
        return
    if frame is None:
        frame = sys._getframe(1)
    _raise_for(culprit, "Tensor", frame, tensor_only=True)


def raise_type_error(value: Any, expected: str) -> None:
    """Raise PyTorch's TypeError for `value`, passed to a public function on the caller's stack
    where an `expected` ("int") belongs: `unsqueeze(): argument 'dim' (position 2) must be int,
    not float`; a plain TypeError where no parameter holds it."""
    _raise_for(value, expected, sys._getframe(1), tensor_only=False)
    raise TypeError(f"expected {expected}, but got {type_name(value)}")


def _raise_for(culprit: Any, expected: str, frame: FrameType | None, tensor_only: bool) -> None:
    while frame is not None and frame.f_code.co_filename.startswith(_LUCID_DIRECTORY):
        code = frame.f_code
        if not code.co_name.startswith("_") and code.co_filename not in _HELPER_FILES:
            found = _find_parameter(frame, culprit, tensor_only)
            if found is not None:
                name, position = found
                raise argument_error(code.co_name, name, position, culprit, expected) from None
        frame = frame.f_back


def _find_parameter(frame: FrameType, culprit: Any, tensor_only: bool) -> tuple[str, int] | None:
    """The first parameter of `frame`'s function that holds `culprit` (and, for a tensor, has
    no default or a default of None), with PyTorch's 1-based position (methods skip self)."""
    code = frame.f_code
    function = frame.f_globals.get(code.co_name)
    # an op decorated with autocast_op: the defaults are the undecorated function's
    function = getattr(function, "__wrapped__", function)
    defaults = getattr(function, "__defaults__", None) or ()
    names = code.co_varnames[: code.co_argcount]
    first_default = len(names) - len(defaults)
    values = frame.f_locals
    offset = 1 if names[:1] == ("self",) else 0
    for index, name in enumerate(names):
        if index < offset or values.get(name, _MISSING) is not culprit:
            continue
        if tensor_only and index >= first_default and defaults[index - first_default] is not None:
            continue
        return name, index + 1 - offset
    return None
