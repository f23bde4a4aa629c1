"""Helpers shared by the op families: PyTorch's dtype names in messages, `apply_inplace`, which
derives the in-place form of any out-of-place op (`exp_` from `Exp`) instead of a twin class,
and `autocast_op`, a composite op's one entry to autocast."""

from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from lucid._core import dtypes, observers
from lucid._core.arguments import (
    argument_error,
    call_position,
    invalid_combination,
    raise_type_error,
    type_name,
    type_word,
)
from lucid._core.dtypes import FLOAT_KINDS, SCALAR_TYPE_NAMES
from lucid._core.function import Function, op_name
from lucid._core.grad_mode import enable_grad, local_state
from lucid._core.graph import Node
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._promote import is_low_precision, scalar_value

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "apply_inplace", "autocast_op", "backward_on_arrays", "can_write_into", "check_int",
    "check_number", "check_tensors", "cast_error", "dtype_name", "finish_array_backward",
    "inplace_operand", "invalid_combination", "not_implemented", "write_inplace",
    "zeros_like_grad",
]  # fmt: skip


_Op = TypeVar("_Op", bound=Callable[..., Any])


def autocast_op(function: _Op) -> _Op:
    """Make a composite op one op to autocast, as its PyTorch counterpart is one kernel.

    While CPU autocast is on, a call goes to the hook (`_Autocast.run` in
    lucid/amp/autocast_mode.py), which casts the arguments by the policy `_POLICIES` keys by
    this decorated function and calls it again with autocast off; otherwise the cost is one
    attribute check and one call. Ops that are one Function need no decorator: autocast
    reaches them in `Function.apply`.
    """

    # a private name in the frame, so the sentinel's reports name the op, not this wrapper
    @functools.wraps(function)
    def _autocast_entry(*args: Any, **kwargs: Any) -> Any:
        hook = local_state.autocast
        if hook is not None:
            return hook.run(_autocast_entry, *args, **kwargs)
        return function(*args, **kwargs)

    return _autocast_entry  # type: ignore[return-value]


def backward_on_arrays() -> bool:
    """Whether a backward may compute its gradient on arrays instead of through ops (the
    design's fast array backwards): grad mode is off (no create_graph), and no observer (the
    profiler, anomaly mode) watches the ops it would have called."""
    state = local_state
    return not state.enabled and not state.observers


def finish_array_backward(function: type, inputs: tuple, outputs: tuple) -> None:
    """A backward computed on arrays hands the flags its ufuncs raised to the sentinel as the
    op it stands for (`function` on `inputs`) would have, so a birth there is named alike.
    Inputs and outputs may be tensors or arrays (wrapped only when a flag fired)."""
    if local_state.pending_flags is not None:
        ctx = object.__new__(Node)
        ctx.function = function
        observers.after_forward(ctx, as_tensors(inputs), as_tensors(outputs))


def as_tensors(values: tuple) -> tuple:
    """`values` with each array (or NumPy scalar) wrapped as a tensor, the rest as they are."""
    return tuple(_wrap(v) if isinstance(v, np.ndarray | np.generic) else v for v in values)


def dtype_name(numpy_dtype: np.dtype) -> str:
    return SCALAR_TYPE_NAMES[numpy_dtype.name]


def not_implemented(kernel: str, numpy_dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dtype_name(numpy_dtype)}'")


def inplace_operand(value: Any, op: str) -> Any:
    """The `other` of a Tensor method `op` that takes a Tensor or a Number (`remainder_`), as a
    tensor or a Python scalar; anything else is PyTorch's TypeError naming both overloads."""
    if isinstance(value, TensorBase):
        return value
    try:
        return scalar_value(value)
    except TypeError:
        name = type(value).__name__
        raise TypeError(
            f"{op}() received an invalid combination of arguments - got ({name}), but expected "
            "one of:\n * (Tensor other)\n      didn't match because some of the arguments have "
            f"invalid types: (!{name}!)\n * (Number other)\n      didn't match because some of "
            f"the arguments have invalid types: (!{name}!)\n"
        ) from None


def cast_error(result_dtype: np.dtype, target_dtype: np.dtype) -> RuntimeError | None:
    """PyTorch's error for an in-place result that its input's dtype cannot hold (a float
    result into an integer tensor), or None when the cast is allowed."""
    if result_dtype == target_dtype or np.can_cast(result_dtype, target_dtype, "same_kind"):
        return None
    return RuntimeError(
        f"result type {dtype_name(result_dtype)} can't be cast to the desired output "
        f"type {dtype_name(target_dtype)}"
    )


def check_complex_into_real(input: Tensor, *others: Any) -> None:
    """PyTorch's cast error for an in-place op on a real `input` with a complex operand (a
    tensor or a Python number) among `others`: PyTorch checks the cast before it looks for a
    kernel, so this error comes before the op's refusal of complex operands."""
    if not isinstance(input, TensorBase) or input._data.dtype.kind == "c":
        return
    for other in others:
        if isinstance(other, complex) or (
            isinstance(other, TensorBase) and other._data.dtype.kind == "c"
        ):
            operands = [value for value in others if value is not None]
            target = dtypes.result_type(input, *operands).numpy_dtype
            raise cast_error(target, input._data.dtype)


# The C type PyTorch reads a number operand as, per real input dtype: float16 and bfloat16
# compute in float.
_NUMBER_TYPES = {**dtypes.CONVERSION_TYPE_NAMES, "float16": "float", "bfloat16": "float"}


def check_real_number(value: Any, *tensors: Any) -> None:
    """PyTorch's error for a Python complex number (a weight, a scale) beside real `tensors`,
    which PyTorch reads as a real C number of their promoted dtype."""
    if not isinstance(value, complex):
        return
    if all(isinstance(x, TensorBase) and x._data.dtype.kind != "c" for x in tensors):
        name = dtypes.result_type(*tensors).numpy_dtype.name
        c_type = _NUMBER_TYPES[name]
        raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")


def zeros_like_grad(grad_output: Tensor, shape: tuple[int, ...]) -> Tensor:
    """The gradient of a piecewise-constant op or of an overwritten input: exact zeros of
    `shape`, as PyTorch gives (grad_output * 0 would be nan where grad_output is inf)."""
    return _wrap(np.zeros(shape, grad_output._data.dtype))


def check_tensors(*values: Any) -> None:
    """PyTorch's TypeError for an argument that is no tensor, naming it as the calling public
    function's parameter: `narrow(): argument 'input' (position 1) must be Tensor, not NoneType`.
    For wrappers that read an argument's array before any op can report it."""
    for value in values:
        if not isinstance(value, TensorBase):
            raise_type_error(value, "Tensor")


def check_number(value: Any, op: str, name: str, position: int | None,
                 expected: str = "Number") -> None:  # fmt: skip
    """PyTorch's TypeError for an argument that is no Number (a Python or NumPy scalar, or a
    zero-dim tensor) where one belongs: `leaky_relu(): argument 'negative_slope' (position 2)
    must be Number, not str`. `position` is None for a keyword-only argument (PyTorch names no
    position then); `expected` is the word PyTorch's signature uses (`float` for eps). A float
    or int costs one class test."""
    cls = value.__class__
    if cls is float or cls is int:
        return
    if isinstance(value, int | float | complex | np.generic):
        return
    if isinstance(value, TensorBase) and value._data.ndim == 0:
        return
    where = "" if position is None else f" (position {call_position(op, position)})"
    raise TypeError(f"{op}(): argument '{name}'{where} must be {expected}, not {type_word(value)}")


def check_bool(value: Any, op: str, name: str, position: int | None) -> None:
    """PyTorch's TypeError for an argument that is no bool where a bool belongs (`keepdim=3`
    would otherwise count as True): `sum(): argument 'keepdim' (position 3) must be bool, not
    int`; without a position where PyTorch names none. A bool costs one class test."""
    if value.__class__ is bool:
        return
    where = "" if position is None else f" (position {call_position(op, position)})"
    raise TypeError(f"{op}(): argument '{name}'{where} must be bool, not {type_name(value)}")


def check_int(value: Any, op: str, name: str, position: int | None) -> None:
    """PyTorch's TypeError for an argument that is no integer (a Python or NumPy int, or a
    zero-dim integer tensor; not a bool) where an int belongs: `tril(): argument 'diagonal'
    (position 2) must be int, not float`. An int costs one class test."""
    if value.__class__ is int or isinstance(value, np.integer):
        return
    if isinstance(value, TensorBase) and value._data.ndim == 0 and value._data.dtype.kind in "iu":
        return
    where = "" if position is None else f" (position {call_position(op, position)})"
    raise TypeError(f"{op}(): argument '{name}'{where} must be int, not {type_word(value)}")


def can_write_into(out: np.ndarray | None, other: Any) -> bool:
    """Whether `out <op>= other` can run as one NumPy ufunc into `out` with PyTorch's result:
    `other` is a tensor of out's dtype and no more dims, or a Python number beside floats.

    A shape that would grow `out` still fails in NumPy (ValueError): callers then fall back
    to the out-of-place result, which `write_inplace` rejects with PyTorch's message.
    """
    if out is None or not out.flags.writeable:
        return False
    if is_low_precision(out.dtype):
        # float16 and bfloat16 compute in float32 and round once (the out-of-place path)
        return False
    if isinstance(other, TensorBase):
        array = other._data
        return array.dtype == out.dtype and array.ndim <= out.ndim
    return out.dtype.kind in FLOAT_KINDS and (other.__class__ is float or other.__class__ is int)


def write_inplace(x: Tensor, result: np.ndarray) -> None:
    """Store an in-place op's result into x's own storage (views of x see it)."""
    target = x._data
    if not target.flags.writeable:
        # Read-only arrays are views whose elements share memory (expand, Tensor.unfold): a
        # write could not give each element its own value.
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    if result.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if result.dtype != target.dtype:
        error = cast_error(result.dtype, target.dtype)
        if error is not None:
            raise error
    np.copyto(target, result, casting="unsafe")


# ------------------------------------------------------------------ in-place forms
_inplace_forms: dict[type, type] = {}


def apply_inplace(function: type[Function], input: Tensor, *args: Any) -> Tensor:
    """Run the out-of-place op `function` on `input` and write the result into `input`.

    `apply_inplace(Exp, x)` is `x.exp_()`: the node has Exp's backward and grad_fn name.
    """
    form = _inplace_forms.get(function)
    if form is None:
        form = _inplace_forms[function] = _inplace_form(function)
    return form.apply(input, *args)


def _inplace_form(function: type[Function]) -> type[Function]:
    """`function` with a forward that writes its result into its first input.

    Its forward marks the input dirty (so `Function.apply` bumps its version once and raises
    PyTorch's errors for a leaf that requires grad or a view), runs `function.forward`, and
    fixes what that forward saved: the input, about to be overwritten, becomes a differentiable
    copy of its old value; the result becomes the input itself, which holds it from now on
    (modifying it again makes backward raise the version error, as in PyTorch).

    A forward that takes `out` (add, mul, div, sqrt: the optimizers' hot ops) is handed the
    input's array and may compute straight into it, saving a temporary and a copy (it then
    returns the input itself); it does so only when it keeps no input for backward and the
    result has out's shape and dtype.
    """
    takes_out = "out" in inspect.signature(function.forward).parameters

    class InplaceForm(function):  # type: ignore[misc, valid-type]
        _op_name = op_name(function) + "_"
        # for lucid.compile's flat replay, which runs its op's `flat_inplace` kernel
        _inplace_of = function

        @staticmethod
        def forward(ctx: Any, x: Tensor, *args: Any) -> Tensor:
            ctx.mark_dirty(x)
            if takes_out:
                output = function.forward(ctx, x, *args, out=x._data)
            else:
                output = function.forward(ctx, x, *args)
            if output is not x:
                saved = ctx.to_save
                if saved is not None and ctx.is_recording:
                    ctx.to_save = _saved_across_write(saved, x, output)
                write_inplace(x, output._data)
            return x

    # Named for tracebacks and reprs; reports name it by `_op_name` (`exp_`).
    InplaceForm.__name__ = InplaceForm.__qualname__ = function.__name__ + "Inplace"
    return InplaceForm


def _saved_across_write(saved: tuple, x: Tensor, output: Tensor) -> tuple:
    old_value = None
    fixed = []
    for tensor in saved:
        if tensor is x:
            if old_value is None:
                # Recorded as a clone of x, so a double backward reaches x's history through it.
                from lucid.ops.fills import Clone

                with enable_grad():
                    old_value = Clone.apply(x)
            tensor = old_value
        elif tensor is output:
            tensor = x
        fixed.append(tensor)
    return tuple(fixed)


def result_repr(result: tuple, name: str) -> str:
    """A named result (values and indices, mantissa and exponent, ...) printed as
    torch.return_types prints it, under lucid's name."""
    items = ",\n".join(f"{field}={value!r}" for field, value in zip(result._fields, result))
    return f"lucid.return_types.{name}(\n{items})"


def result_type(class_name: str, op: str, *fields: str) -> type:
    """A named-tuple result with `fields` (PyTorch's names), printed as torch.return_types.<op>
    prints it."""
    base = collections.namedtuple(class_name, fields)
    return type(
        class_name, (base,), {"__slots__": (), "__repr__": lambda self: result_repr(self, op)}
    )


def _require_named_tensors(op: str, **named: Any) -> None:
    for position, (name, value) in enumerate(named.items(), start=1):
        if not isinstance(value, TensorBase):
            raise argument_error(op, name, position, value)


def _array(input: Any) -> np.ndarray:
    check_tensors(input)
    return input._data


def _int_argument(name: str, value: Any, argument: str, position: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(
            f"{name}(): argument '{argument}' (position {call_position(name, position)}) "
            "must be int, not "
            f"{type(value).__name__}"
        )
