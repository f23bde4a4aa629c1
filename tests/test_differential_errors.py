"""Differential fuzz of bad and edge inputs against PyTorch (issue 15, section 2).

Every public callable lucid shares with PyTorch (`lucid.*`, `lucid.nn.functional.*`,
`lucid.linalg.*`, Tensor methods, properties and operators) is called with generated inputs of
each applicable kind (`KINDS`): wrong dtypes, shape mismatches, out-of-range and float dims,
negative and zero sizes, out-of-range and float indices, empty and 0-d tensors, None, Python
scalars and lists in tensor positions, non-contiguous views, in-place ops on leaves that
require grad, on views of them, with a shape change and through a view of float or integer
tensors (the write must reach the base). The arguments come from lucid's signature, one role
per parameter name (`_ROLES`); each call is run in lucid and in torch on the same values and
classified (`classify`):

- numpy: an exception from inside NumPy (last traceback frame in numpy) or in NumPy's words
  reaches the user;
- internal: lucid's internals escape: an AttributeError (or similar slip), OverflowError,
  MemoryError or RecursionError where PyTorch raises another type or answers;
- silent: PyTorch raises, lucid returns;
- values: both return, the results (or the tensors written in place) differ;
- type: both raise, with different exception types (tallied, not asserted);
- wording: both raise the same type, with messages that differ once "torch" reads "lucid"
  (lucid.linalg only);
- refuses: PyTorch returns, lucid raises (tallied, not asserted);
- same / equal: both raise the same type / both return equal results.

The first four are asserted: a call in one of them must be listed in KNOWN_GAPS
(tests/differential_known_gaps.py) with that category, and a listed gap that no longer shows
fails too, so the list only shrinks. The `lucid.linalg` functions get inputs of their own
(`_linalg_kinds`: a symmetric positive-definite A, right-hand sides and pivots that fit it,
then wrong dtypes, non-square and wrongly shaped matrices, batches that do not broadcast,
non-tensors), and for them the error itself is held to PyTorch's: `type` and `wording` are
asserted too. Run `python -m tests.test_differential_errors` for the full tally; `pytest -s -k
tally` prints it too.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import operator
import re
import sys
import time
import traceback
import warnings
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as lucid_functional
from tests.differential_known_gaps import KNOWN_GAPS
from tests.torch_oracle import TORCH_AVAILABLE, TORCH_MISSING

if TORCH_AVAILABLE:
    import torch
    import torch.nn.functional as torch_functional

pytestmark = pytest.mark.skipif(not TORCH_AVAILABLE, reason=TORCH_MISSING)

SEED = 15
# Calls per (callable, kind): each draws fresh values, so raising this widens the sweep.
CALLS_PER_KIND = 1
RTOL = 1e-5
ATOL = 1e-6
ASSERTED = ("numpy", "internal", "silent", "values")
# lucid.linalg's errors are compared word for word as well
ASSERTED_LINALG = ("numpy", "internal", "silent", "values", "type", "wording")
CATEGORIES = (
    "numpy",
    "internal",
    "silent",
    "values",
    "type",
    "wording",
    "refuses",
    "same",
    "equal",
)

# Excluded callables, with the reason.
RANDOM = "random: values depend on the generator, not comparable with PyTorch's"
GLOBAL_STATE = "changes process-wide state that other tests rely on"
EXCLUDED: dict[str, str] = {
    **{
        name: RANDOM
        for name in (
            "lucid.bernoulli",
            "lucid.binomial",
            "lucid.multinomial",
            "lucid.normal",
            "lucid.rand",
            "lucid.rand_like",
            "lucid.randint",
            "lucid.randint_like",
            "lucid.randn",
            "lucid.randn_like",
            "lucid.randperm",
            "F.dropout",
            "F.dropout2d",
            "F.dropout1d",
            "F.dropout3d",
            "F.gumbel_softmax",
            "Tensor.uniform_",
            "Tensor.normal_",
            "lucid.poisson",
            "Tensor.exponential_",
            "Tensor.geometric_",
            "Tensor.log_normal_",
            "Tensor.cauchy_",
            "Tensor.random_",
            "Tensor.bernoulli_",
            "Tensor.bernoulli",
            "Tensor.multinomial",
        )
    },
    **{
        name: GLOBAL_STATE
        for name in (
            "lucid.manual_seed",
            "lucid.seed",
            "lucid.initial_seed",
            "lucid.get_rng_state",
            "lucid.set_rng_state",
            "lucid.set_default_dtype",
            "lucid.set_grad_enabled",
            "lucid.set_anomaly_enabled",
            "lucid.enable_grad",
            "lucid.no_grad",
            "lucid.inference_mode",
            "lucid.set_num_threads",
            "lucid.set_num_interop_threads",
        )
    },
    "lucid.get_num_threads": "a process setting: lucid's BLAS thread count is not torch's",
    "lucid.get_num_interop_threads": "a process setting: lucid's count is not torch's",
    "lucid.save": "writes files",
    "lucid.load": "reads files",
    "lucid.from_dlpack": "takes another framework's tensor by design",
    "lucid.Generator": "a class: its objects are compared nowhere",
    "lucid.Size": "a class (tuple subclass): covered by the shape methods",
    "lucid.Tensor": "the class itself: its methods are targets",
    "lucid.dtype": "a class: dtype objects differ by design",
    "Tensor.data_ptr": "an address: differs by design",
    "Tensor.const_data_ptr": "an address: differs by design",
    "Tensor.numpy": "returns a NumPy array by design; covered by every comparison",
    "Tensor.register_hook": "takes a callable; hooks have tests of their own",
    "Tensor.backward": "autograd misuse has tests of its own (tests/autograd/test_errors.py)",
    "Tensor.device": "a device object: differs by design (lucid is CPU only)",
    "Tensor.grad_fn": "node objects: differ by design",
}
# Results that are uninitialized memory: only their shape and dtype are compared.
UNINITIALIZED = {"lucid.empty", "lucid.empty_like", "Tensor.new_empty"}
# (callable, kind) results PyTorch leaves unspecified, compared by shape and dtype only: max
# unpooling with every index the same, whose writes PyTorch's threads order differently from
# run to run.
WRITE_ORDER_UNSPECIFIED = {(f"F.max_unpool{dims}d", "index_out_of_range") for dims in (1, 2, 3)}
# (values, indices) results whose indices PyTorch leaves unspecified among equal values (its
# topk and kthvalue pick ties in no documented order): the values are compared, the indices by
# shape, and lucid's indices must select its values.
TIES_UNSPECIFIED = {"lucid.topk", "Tensor.topk", "lucid.kthvalue", "Tensor.kthvalue"}
# (eigenvalues, eigenvectors) results: each eigenvector is fixed only up to its sign (a phase,
# for complex ones), which LAPACK builds choose differently; the vectors are compared with
# each column's largest entry made real and positive.
SIGN_UNSPECIFIED = {"linalg.eigh", "linalg.eig"}

# Operators, called as a user writes them (operator.iadd(v, x) is `v += x`, so a missing
# in-place form shows as a write that goes nowhere).
BINARY_OPERATORS = {
    "__add__": operator.add,
    "__sub__": operator.sub,
    "__mul__": operator.mul,
    "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv,
    "__mod__": operator.mod,
    "__pow__": operator.pow,
    "__matmul__": operator.matmul,
    "__and__": operator.and_,
    "__or__": operator.or_,
    "__xor__": operator.xor,
    "__lshift__": operator.lshift,
    "__rshift__": operator.rshift,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__getitem__": operator.getitem,
}
INPLACE_OPERATORS = {
    "__iadd__": operator.iadd,
    "__isub__": operator.isub,
    "__imul__": operator.imul,
    "__itruediv__": operator.itruediv,
    "__ifloordiv__": operator.ifloordiv,
    "__imod__": operator.imod,
    "__ipow__": operator.ipow,
    "__iand__": operator.iand,
    "__ior__": operator.ior,
    "__ixor__": operator.ixor,
    "__ilshift__": operator.ilshift,
    "__irshift__": operator.irshift,
}
UNARY_OPERATORS = {
    "__neg__": operator.neg,
    "__abs__": operator.abs,
    "__invert__": operator.invert,
    "__bool__": bool,
    "__float__": float,
    "__int__": int,
    "__len__": len,
}

# An exception in NumPy's words, though raised from lucid's code.
NUMPY_WORDING = re.compile(
    r"\baxis -?\d|operands could not be broadcast|cannot reshape array|could not broadcast|"
    r"\bufunc\b|numpy|ndarray|array of size|setting an array element|return arrays must be|"
    r"object too deep|gufunc|objects cannot be broadcast|only integer scalar arrays|"
    r"zero-size array|integer arrays with one element|array must not contain"
)
# Exceptions that are a slip inside lucid rather than an argument check.
SLIPS = (AttributeError, ZeroDivisionError, UnboundLocalError, NameError, AssertionError)
# Exceptions that are lucid's internals escaping, whatever their message.
INTERNALS = (*SLIPS, OverflowError, MemoryError, RecursionError)


# ------------------------------------------------------------------------------ values
@dataclass(frozen=True)
class Array:
    """A tensor argument, built in each library from the same NumPy array."""

    array: np.ndarray
    layout: str = "plain"  # "plain", "transposed" (non-contiguous view), "row" (x[0] of base)
    requires_grad: bool = False


@dataclass(frozen=True)
class Dtype:
    name: str


def _build(value: Any, library: Any, made: list[Any]) -> Any:
    """`value` as `library`'s argument; tensors built are appended to `made` (with bases)."""
    if isinstance(value, Array):
        if value.layout == "transposed":
            base = library.from_numpy(np.ascontiguousarray(value.array.T).copy())
            tensor = base.t() if base.ndim == 2 else base
        elif value.layout == "row":
            base = library.from_numpy(value.array[None].copy())
            base.requires_grad_(value.requires_grad)
            tensor = base[0]
            made.append(base)
            return tensor
        else:
            tensor = library.from_numpy(value.array.copy())
        tensor.requires_grad_(value.requires_grad)
        made.append(tensor)
        return tensor
    if isinstance(value, Dtype):
        return getattr(library, value.name)
    if isinstance(value, list):
        return [_build(item, library, made) for item in value]
    if isinstance(value, tuple):
        return tuple(_build(item, library, made) for item in value)
    return value


# ----------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    name: str  # "lucid.add", "F.conv2d", "Tensor.sum", "Tensor.__iadd__", "Tensor.T"
    style: str  # "function", "method", "property", "operator"
    parameters: tuple[inspect.Parameter, ...]

    def call(self, library: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        prefix, name = self.name.split(".", 1)
        if self.style == "operator":
            function = {**BINARY_OPERATORS, **INPLACE_OPERATORS, **UNARY_OPERATORS}[name]
            return function(*args)
        if self.style == "property":
            return getattr(args[0], name)
        if self.style == "method":
            return getattr(args[0], name)(*args[1:], **kwargs)
        module = {"lucid": library, "F": library.nn.functional, "linalg": library.linalg}[prefix]
        if library is lucid:
            module = {"lucid": lucid, "F": lucid_functional, "linalg": lucid.linalg}[prefix]
        return getattr(module, name)(*args, **kwargs)


def _public(module: Any) -> set[str]:
    return {name for name in dir(module) if not name.startswith("_")}


def _parameters(function: Any, drop_self: bool) -> tuple[inspect.Parameter, ...]:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return ()
    if drop_self and parameters:
        parameters = parameters[1:]  # the tensor the method is bound to
    return tuple(parameters)


@functools.cache
def targets() -> tuple[Target, ...]:
    found = []
    for name in sorted(_public(lucid) & _public(torch)):
        if callable(getattr(lucid, name)) and callable(getattr(torch, name)):
            found.append(Target(f"lucid.{name}", "function", _parameters(getattr(lucid, name), 0)))
    for name in sorted(_public(lucid_functional) & _public(torch_functional)):
        function = getattr(lucid_functional, name)
        if callable(function) and not inspect.ismodule(function):
            found.append(Target(f"F.{name}", "function", _parameters(function, False)))
    for name in sorted(_public(lucid.Tensor) & _public(torch.Tensor)):
        attribute = inspect.getattr_static(lucid.Tensor, name)
        if isinstance(attribute, property) or not callable(attribute):
            found.append(Target(f"Tensor.{name}", "property", ()))
        else:
            found.append(Target(f"Tensor.{name}", "method", _parameters(attribute, True)))
    for name in (*BINARY_OPERATORS, *INPLACE_OPERATORS, *UNARY_OPERATORS):
        found.append(Target(f"Tensor.{name}", "operator", ()))
    for name in sorted(_public(lucid.linalg) & _public(torch.linalg)):
        function = getattr(lucid.linalg, name)
        if inspect.isfunction(function):
            found.append(Target(f"linalg.{name}", "function", _parameters(function, False)))
    return tuple(target for target in found if target.name not in EXCLUDED)


# ------------------------------------------------------------------------------- roles
def _role(name: str) -> str:
    """What a parameter of this name takes; lucid's parameter names are PyTorch's."""
    if name in ("dim", "dim0", "dim1", "dim2", "axis0", "axis1", "source", "destination"):
        return "dim"
    if name in ("start_dim", "end_dim"):
        return "dim"
    if name in ("dims",):
        return "dims"
    if name in ("size", "shape", "sizes", "shapes", "normalized_shape", "output_size"):
        return "size"
    if name in ("index", "indices"):
        return "index"
    if name in ("mask", "condition"):
        return "mask"
    if name in ("tensors", "operands"):
        return "tensors"
    if name == "dtype":
        return "dtype"
    if name == "equation":
        return "equation"
    if name in (
        "chunks",
        "split_size_or_sections",
        "n",
        "m",
        "steps",
        "num_classes",
        "num_groups",
        "kernel_size",
        "length",
        "shifts",
        "diagonal",
        "start",
        "end",
        "repeats",
        "k",
        "sections",
    ):
        return "count"
    if name in ("value", "fill_value", "exponent", "scalar", "alpha", "beta", "p", "other"):
        return "tensor_or_number" if name in ("other", "exponent", "value") else "number"
    if name in ("data", "obj", "ndarray", "ext_tensor", "iterable"):
        return "data"
    return "tensor"


def _required(target: Target) -> list[inspect.Parameter]:
    return [
        parameter
        for parameter in target.parameters
        if parameter.default is inspect.Parameter.empty
        and parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]


# ------------------------------------------------------------------------------- kinds
def _floats(rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
    return Array(rng.uniform(-1.0, 1.0, shape))


def _base_value(role: str, rng: np.random.Generator, parameter_name: str) -> Any:
    if role == "dim":
        return 1 if parameter_name in ("dim1", "axis1", "end_dim", "destination") else 0
    if role == "dims":
        return (0,)
    if role == "size":
        return (4,) if parameter_name == "normalized_shape" else (3, 4)
    if role == "index":
        return Array(rng.integers(0, 3, (3, 4)))
    if role == "mask":
        return Array(rng.integers(0, 2, (3, 4)).astype(bool))
    if role == "tensors":
        return [_floats(rng, (3, 4)), _floats(rng, (3, 4))]
    if role == "dtype":
        return Dtype("float32")
    if role == "equation":
        return "ij->ji"
    if role == "count":
        return 2
    if role == "number":
        return 0.5
    if role == "data":
        if parameter_name == "ndarray":
            return rng.uniform(-1.0, 1.0, (3, 4))
        return [[1.0, 2.0], [3.0, 4.0]]
    return _floats(rng, (3, 4))


def _base_call(target: Target, rng: np.random.Generator) -> tuple[list[Any], list[str]]:
    """Arguments for the required parameters (for methods and operators: self first)."""
    if target.style == "property":
        return [_floats(rng, (3, 4))], ["tensor"]
    if target.style == "operator":
        name = target.name.split(".", 1)[1]
        if name in UNARY_OPERATORS:
            return [_floats(rng, (3, 4))], ["tensor"]
        if name == "__getitem__":
            return [_floats(rng, (3, 4)), 1], ["tensor", "index_value"]
        return [_floats(rng, (3, 4)), _floats(rng, (3, 4))], ["tensor", "tensor"]
    args, roles = [], []
    if target.style == "method":
        args.append(_floats(rng, (3, 4)))
        roles.append("tensor")
    for parameter in _required(target):
        role = _role(parameter.name)
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            if role in ("size", "dims"):
                value = _base_value(role, rng, parameter.name)
                args.extend(value)
                roles.extend([f"{role}_item"] * len(value))
            elif role == "tensors":
                args.extend(_base_value(role, rng, parameter.name))
                roles.extend(["tensor", "tensor"])
            continue
        args.append(_base_value(role, rng, parameter.name))
        roles.append(role)
    if target.name == "lucid.einsum":
        args, roles = (
            ["ij,jk->ik", _floats(rng, (3, 4)), _floats(rng, (4, 5))],
            [
                "equation",
                "tensor",
                "tensor",
            ],
        )
    return args, roles


def _optional_names(target: Target) -> set[str]:
    return {
        parameter.name
        for parameter in target.parameters
        if parameter.default is not inspect.Parameter.empty
    }


def _positions(roles: list[str], *wanted: str) -> list[int]:
    return [index for index, role in enumerate(roles) if role in wanted]


def _with_arrays(args: list[Any], change: Callable[[Array], Any]) -> list[Any]:
    def visit(value: Any) -> Any:
        if isinstance(value, Array):
            return change(value)
        if isinstance(value, list) and any(isinstance(item, Array) for item in value):
            return [visit(item) for item in value]
        return value

    return [visit(value) for value in args]


def _float_arrays_to(dtype: str) -> Callable[[Array], Array]:
    def change(value: Array) -> Array:
        if value.array.dtype.kind != "f":
            return value
        if dtype == "bool":
            return Array(value.array > 0)
        return Array(np.round(value.array * 4).astype(dtype))

    return change


def _reshaped(shape: tuple[int, ...]) -> Callable[[Array], Array]:
    def change(value: Array) -> Array:
        rng = np.random.default_rng(value.array.size)
        if value.array.dtype.kind == "f":
            return Array(rng.uniform(-1.0, 1.0, shape))
        return Array(np.zeros(shape, value.array.dtype))

    return change


def _kinds(target: Target, rng: np.random.Generator) -> Iterator[tuple[str, list, dict]]:
    """(kind, args, kwargs) for every kind of input that applies to `target`."""
    args, roles = _base_call(target, rng)
    optional = _optional_names(target)
    tensors = _positions(roles, "tensor")
    short = target.name.split(".", 1)[1]
    inplace = target.style != "property" and (
        short in INPLACE_OPERATORS or (short.endswith("_") and not short.startswith("_"))
    )
    yield "valid", args, {}
    if target.style == "property":
        yield "zero_d", [_floats(rng, ())], {}
        yield "one_d", [_floats(rng, (3,))], {}
        yield "empty", [_floats(rng, (0, 4))], {}
        yield "int_tensor", [Array(rng.integers(-3, 4, (3, 4)))], {}
        return
    yield "noncontiguous", _with_arrays(args, lambda value: Array(value.array, "transposed")), {}
    yield "int_tensor", _with_arrays(args, _float_arrays_to("int64")), {}
    yield "bool_tensor", _with_arrays(args, _float_arrays_to("bool")), {}
    yield "float32_with_float64", _mixed_precision(args, tensors), {}
    yield "empty", _with_arrays(args, _reshaped((0, 4))), {}
    yield "zero_d", _with_arrays(args, _reshaped(())), {}
    yield "three_d", _with_arrays(args, _reshaped((2, 3, 4))), {}
    # Non-tensors where a tensor goes: the first tensor after self for methods.
    skip = 1 if target.style in ("method", "operator") else 0
    first = tensors[skip] if len(tensors) > skip else None
    if first is not None:
        for kind, value in (("none", None), ("python_scalar", 1.5), ("python_list", [1.0, 2.0])):
            changed = list(args)
            changed[first] = value
            yield kind, changed, {}
    if len(tensors) >= 2:
        changed = list(args)
        changed[tensors[1]] = _floats(rng, (5,))
        yield "shape_mismatch", changed, {}
    dims = _positions(roles, "dim")
    for kind, value in (("dim_out_of_range", 5), ("dim_negative", -5), ("dim_float", 1.5)):
        if dims:
            changed = list(args)
            changed[dims[0]] = value
            yield kind, changed, {}
        elif "dim" in optional:
            yield kind, args, {"dim": value}
    sizes = _positions(roles, "size", "size_item", "count")
    for kind, value in (("negative_size", -2), ("zero_size", 0), ("float_size", 2.5)):
        if sizes:
            changed = list(args)
            position = sizes[0]
            if roles[position] == "size":
                changed[position] = (value, *args[position][1:])
            else:
                changed[position] = value
            yield kind, changed, {}
    indices = _positions(roles, "index", "index_value")
    if indices:
        position = indices[0]
        changed = list(args)
        if roles[position] == "index_value":
            changed[position] = 7
        else:
            changed[position] = Array(np.full((3, 4), 7))
        yield "index_out_of_range", changed, {}
        changed = list(args)
        changed[position] = 1.5 if roles[position] == "index_value" else _floats(rng, (3, 4))
        yield "float_index", changed, {}
    if inplace and tensors and tensors[0] == 0:
        leaf = Array(args[0].array, requires_grad=True)
        yield "inplace_on_leaf", [leaf, *args[1:]], {}
        yield "inplace_on_view_of_leaf", [Array(args[0].array, "row", True), *args[1:]], {}
        yield "inplace_through_view", [Array(args[0].array, "row"), *args[1:]], {}
        integers = _with_arrays(args, _float_arrays_to("int64"))
        yield "inplace_through_view_int", [Array(integers[0].array, "row"), *integers[1:]], {}
        if len(tensors) >= 2:
            changed = list(args)
            changed[0] = _floats(rng, (4,))
            yield "inplace_shape_change", changed, {}
        if "other" in {parameter.name for parameter in _required(target)} or short in (
            INPLACE_OPERATORS
        ):
            yield "inplace_python_number", [args[0], 2.0, *args[2:]], {}


# ------------------------------------------------------------------------ linalg kinds
def _linalg_base_value(name: str, rng: np.random.Generator) -> tuple[Any, str]:
    """A valid argument for a lucid.linalg parameter, and its role: `matrix` (square, the
    one the function factors), `rhs`, `vector`, `pivots` or a plain value."""
    if name in ("A", "LU", "LD"):
        m = rng.uniform(-1.0, 1.0, (3, 3))
        spd = m @ m.T + 3.0 * np.eye(3)
        return Array(np.tril(spd) if name == "LD" else spd), "matrix"
    if name == "B":
        return _floats(rng, (3, 2)), "rhs"
    if name in ("input", "other", "x", "y"):
        return _floats(rng, (2, 3)), "vector"
    if name == "tau":
        return _floats(rng, (2,)), "vector"
    if name == "pivots":
        return Array(np.arange(1, 4, dtype=np.int32)), "pivots"
    if name == "tensors":
        return [_floats(rng, (3, 3)), _floats(rng, (3, 2))], "tensors"
    if name == "n":
        return 2, "count"
    if name == "upper":
        return True, "flag"
    return _floats(rng, (3, 3)), "matrix"


def _linalg_kinds(target: Target, rng: np.random.Generator) -> Iterator[tuple[str, list, dict]]:
    """(kind, args, kwargs) for a lucid.linalg function: a valid call, then one bad input."""
    args, kwargs, roles = [], {}, []
    for parameter in _required(target):
        value, role = _linalg_base_value(parameter.name, rng)
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
            roles.append(role)
    floats = _positions(roles, "matrix", "rhs", "vector")
    yield "valid", args, kwargs
    yield (
        "noncontiguous",
        _with_arrays(args, lambda value: Array(value.array, "transposed")),
        kwargs,
    )
    yield "int_tensor", _with_arrays(args, _float_arrays_to("int64")), kwargs
    yield "bool_tensor", _with_arrays(args, _float_arrays_to("bool")), kwargs
    yield "float16", _with_arrays(args, _float_arrays_to("float16")), kwargs
    yield "float32_with_float64", _mixed_precision(args, floats), kwargs
    if not floats:
        return
    first = floats[0]
    for kind, shape in (
        ("non_square", (3, 4)),
        ("one_d", (3,)),
        ("zero_d", ()),
        ("empty_matrix", (0, 0)),
        ("empty_batch", (0, 3, 3)),
    ):
        changed = list(args)
        changed[first] = Array(rng.uniform(-1.0, 1.0, shape))
        yield kind, changed, kwargs
    for kind, value in (("none", None), ("python_list", [[1.0, 2.0], [3.0, 4.0]])):
        changed = list(args)
        changed[first] = value
        yield kind, changed, kwargs
    tensors = _positions(roles, "matrix", "rhs", "vector", "pivots")
    if len(tensors) >= 2:
        # a batch of 2 against a batch of 4: no broadcast
        changed = list(args)
        for position, batch in zip(tensors, (2, 4, 4), strict=False):
            array = args[position].array
            changed[position] = Array(np.broadcast_to(array, (batch, *array.shape)).copy())
        yield "batch_mismatch", changed, kwargs
        changed = list(args)
        second = tensors[1]
        changed[second] = Array(rng.uniform(-1.0, 1.0, (5, 1)).astype(args[second].array.dtype))
        yield "shape_mismatch", changed, kwargs


def _mixed_precision(args: list[Any], tensors: list[int]) -> list[Any]:
    changed = list(args)
    if tensors:
        first = changed[tensors[0]]
        changed[tensors[0]] = Array(first.array.astype(np.float32))
    return changed


# ------------------------------------------------------------------------------ calling
@dataclass(frozen=True)
class Outcome:
    target: str
    kind: str
    category: str
    detail: str


def _run(target: Target, library: Any, args: list[Any], kwargs: dict) -> tuple[Any, ...]:
    """('ok', result, tensors made) or ('error', exception, tensors made)."""
    made: list[Any] = []
    try:
        built = [_build(value, library, made) for value in args]
        built_kwargs = {key: _build(value, library, made) for key, value in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = target.call(library, built, built_kwargs)
    except Exception as error:  # noqa: BLE001  (every exception is an outcome)
        return ("error", error, made)
    return ("ok", result, made)


def _normalized(value: Any) -> Any:
    """A library-neutral form of a result: arrays, tuples, numbers, strings."""
    if isinstance(value, lucid.Tensor) or isinstance(value, torch.Tensor):
        # NumPy holds bfloat16 only through ml_dtypes and torch refuses to export it: both
        # sides compare as float32, which holds every bfloat16 exactly.
        if str(value.dtype).endswith("bfloat16"):
            value = value.float()
        array = np.array(value.detach().numpy(), copy=True)
        # lucid has no uint64: where PyTorch returns one (hash_tensor), lucid's int64 holds
        # the same bits
        return array.view(np.int64) if array.dtype == np.uint64 else array
    if isinstance(value, lucid.Size | torch.Size):
        return tuple(int(size) for size in value)
    if isinstance(value, list | tuple):
        return tuple(_normalized(item) for item in value)
    if isinstance(value, lucid.dtype | torch.dtype):
        return str(value).replace("torch.", "lucid.")
    if isinstance(value, bool | int | float | complex | str | type(None) | np.generic):
        return value.replace("torch", "lucid") if isinstance(value, str) else value
    return f"<{type(value).__name__}>"


def _difference(actual: Any, expected: Any, shapes_only: bool) -> str | None:
    """Why two normalized results differ, or None."""
    if isinstance(expected, np.ndarray) or isinstance(actual, np.ndarray):
        if not (isinstance(expected, np.ndarray) and isinstance(actual, np.ndarray)):
            return f"{type(actual).__name__} where torch gives {type(expected).__name__}"
        if actual.shape != expected.shape:
            return f"shape {actual.shape} != torch's {expected.shape}"
        if shapes_only:
            return None
        if actual.dtype.kind in "fc" or expected.dtype.kind in "fc":
            if np.allclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True):
                return None
            return "values differ"
        if not np.array_equal(actual, expected):
            return "values differ"
        return None
    if isinstance(expected, tuple) and isinstance(actual, tuple):
        if len(actual) != len(expected):
            return f"{len(actual)} results != torch's {len(expected)}"
        for one, other in zip(actual, expected, strict=True):
            difference = _difference(one, other, shapes_only)
            if difference:
                return difference
        return None
    if isinstance(expected, float) and isinstance(actual, int | float):
        if np.isclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True):
            return None
    if isinstance(expected, str) and expected.startswith("<"):
        return None  # objects of the library's own classes (contexts, handles) are not compared
    if actual != expected:
        return f"{actual!r} != torch's {expected!r}"
    return None


def _ties_difference(actual: Any, expected: Any, input: Any) -> str | None:
    """Why (values, indices) results differ where the indices of equal values may."""
    values, indices = _normalized(actual)
    expected_values, expected_indices = _normalized(expected)
    difference = _difference(values, expected_values, False) or _difference(
        indices, expected_indices, True
    )
    if difference or not indices.ndim:
        return difference
    # the sweep passes no dim, so the op ran along the last one (kept by topk, reduced by
    # kthvalue)
    array = _normalized(input)
    if indices.ndim < array.ndim:
        indices = indices[..., None]
        values = values[..., None]
    selected = np.take_along_axis(array, indices, -1)
    return _difference(selected, values, False) and "indices do not select the values"


def _signs_fixed(result: Any) -> Any:
    """(values, vectors) with each column of vectors turned so its largest entry is real and
    positive."""
    values, vectors = _normalized(result)
    if vectors.size:
        largest = np.take_along_axis(vectors, np.abs(vectors).argmax(-2)[..., None, :], -2)
        magnitude = np.abs(largest)
        phase = np.conj(largest) / np.where(magnitude == 0, 1, magnitude)
        vectors = vectors * np.where(magnitude == 0, 1, phase)
    return values, vectors


def _raised_from_numpy(error: BaseException, torch_error: Any) -> bool:
    """Raised inside NumPy, or in NumPy's words where PyTorch's message has none of them."""
    frames = traceback.extract_tb(error.__traceback__)
    if frames and "/numpy/" in frames[-1].filename.replace("\\", "/"):
        return True
    if isinstance(torch_error, BaseException) and NUMPY_WORDING.search(str(torch_error)):
        return False
    return bool(NUMPY_WORDING.search(str(error)))


def _escaped_internal(error: BaseException, torch_status: str, torch_error: Any) -> bool:
    """An internal exception of lucid's where PyTorch answers or raises another type."""
    if not isinstance(error, INTERNALS):
        return False
    return torch_status == "ok" or _builtin_base(type(error)) is not _builtin_base(
        type(torch_error)
    )


def _builtin_base(error_type: type) -> type:
    return next(base for base in error_type.__mro__ if base.__module__ == "builtins")


def _message(error: BaseException) -> str:
    return str(error).replace("torch", "lucid")


def classify(target: Target, kind: str, args: list[Any], kwargs: dict) -> Outcome:
    torch_outcome = _run(target, torch, args, kwargs)
    lucid_outcome = _run(target, lucid, args, kwargs)
    torch_status, expected, torch_made = torch_outcome
    lucid_status, actual, lucid_made = lucid_outcome
    if lucid_status == "error" and _raised_from_numpy(actual, expected):
        return Outcome(target.name, kind, "numpy", _describe(actual))
    if lucid_status == "error" and _escaped_internal(actual, torch_status, expected):
        torch_side = _describe(expected) if torch_status == "error" else "answers"
        return Outcome(target.name, kind, "internal", f"{_describe(actual)}; torch: {torch_side}")
    if torch_status == "error" and lucid_status == "ok":
        return Outcome(target.name, kind, "silent", f"torch: {_describe(expected)}")
    if torch_status == "ok" and lucid_status == "error":
        return Outcome(target.name, kind, "refuses", _describe(actual))
    if torch_status == "error":
        if _builtin_base(type(actual)) is _builtin_base(type(expected)):
            if target.name.startswith("linalg.") and _message(actual) != _message(expected):
                detail = f"{_describe(actual)}; torch: {_describe(expected)}"
                return Outcome(target.name, kind, "wording", detail)
            return Outcome(target.name, kind, "same", _describe(actual))
        slip = " (slip)" if isinstance(actual, SLIPS) else ""
        detail = f"{_describe(actual)}{slip}; torch: {_describe(expected)}"
        return Outcome(target.name, kind, "type", detail)
    shapes_only = target.name in UNINITIALIZED or (target.name, kind) in WRITE_ORDER_UNSPECIFIED
    if target.name in TIES_UNSPECIFIED:
        difference = _ties_difference(actual, expected, lucid_made[0])
    elif target.name in SIGN_UNSPECIFIED:
        difference = _difference(_signs_fixed(actual), _signs_fixed(expected), False)
    else:
        difference = _difference(_normalized(actual), _normalized(expected), shapes_only)
    if difference is None and kind.startswith("inplace"):
        # what was written in place: the input (and the base of a view) afterwards
        difference = _difference(
            _normalized(tuple(lucid_made)), _normalized(tuple(torch_made)), False
        )
        difference = difference and f"after the call, inputs: {difference}"
    if difference:
        return Outcome(target.name, kind, "values", difference)
    return Outcome(target.name, kind, "equal", "")


def _describe(error: BaseException) -> str:
    message = str(error).split("\n")[0][:120]
    return f"{type(error).__name__}: {message}"


@functools.cache
def sweep(name: str) -> tuple[Outcome, ...]:
    """Every call of one target, classified."""
    target = next(target for target in targets() if target.name == name)
    outcomes = []
    kinds = _linalg_kinds if name.startswith("linalg.") else _kinds
    for repeat in range(CALLS_PER_KIND):
        rng = np.random.default_rng([SEED, zlib.crc32(name.encode()), repeat])
        for kind, args, kwargs in kinds(target, rng):
            outcomes.append(classify(target, kind, args, kwargs))
    return tuple(outcomes)


def _target_names() -> list[str]:
    return [target.name for target in targets()] if TORCH_AVAILABLE else []


@contextlib.contextmanager
def _autocast_settings_kept():
    """Put back the process-wide autocast settings that setters among the targets change
    (`set_autocast_cpu_dtype(float32)` turns later `autocast("cpu")` regions off)."""
    saved = [
        (lib, lib.get_autocast_dtype("cpu"), lib.is_autocast_enabled("cpu"),
         lib.is_autocast_cache_enabled())
        for lib in (lucid, torch)
    ]  # fmt: skip
    try:
        yield
    finally:
        for lib, dtype, enabled, cache in saved:
            lib.set_autocast_dtype("cpu", dtype)
            lib.set_autocast_enabled("cpu", enabled)
            lib.set_autocast_cache_enabled(cache)


# -------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("name", _target_names())
def test_bad_inputs_get_pytorchs_answer(name: str) -> None:
    """No NumPy exception, silent answer or value difference beyond the known gaps."""
    problems = []
    seen = {}
    grad_enabled = lucid.is_grad_enabled()
    asserted = ASSERTED_LINALG if name.startswith("linalg.") else ASSERTED
    with _autocast_settings_kept():
        for outcome in sweep(name):
            key = (outcome.target, outcome.kind)
            seen[key] = outcome.category
            known = KNOWN_GAPS.get(key)
            if outcome.category in asserted and known != outcome.category:
                problems.append(f"{outcome.kind}: {outcome.category}: {outcome.detail}")
    for key, category in KNOWN_GAPS.items():
        if key[0] == name and seen.get(key) != category:
            problems.append(
                f"{key[1]}: listed as a known {category} gap but now {seen.get(key)}: "
                "remove it from tests/differential_known_gaps.py"
            )
    assert lucid.is_grad_enabled() == grad_enabled
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_known_gaps_name_targets_that_exist() -> None:
    names = set(_target_names())
    stale = sorted({key[0] for key in KNOWN_GAPS} - names)
    assert not stale, f"KNOWN_GAPS names callables that are not targets: {stale}"
    wrong = sorted(
        key
        for key, category in KNOWN_GAPS.items()
        if category not in (ASSERTED_LINALG if key[0].startswith("linalg.") else ASSERTED)
    )
    assert not wrong, f"KNOWN_GAPS lists categories that are not asserted: {wrong}"


def test_tally() -> None:
    """Prints the tally (visible with -s)."""
    started = time.perf_counter()
    outcomes = [outcome for name in _target_names() for outcome in sweep(name)]
    print("\n" + tally_table(outcomes, time.perf_counter() - started))
    assert len(outcomes) > 1000


def tally_table(outcomes: list[Outcome], seconds: float) -> str:
    counts = Counter(outcome.category for outcome in outcomes)
    slips = sum(1 for outcome in outcomes if outcome.detail.find("(slip)") >= 0)
    lines = [
        f"differential fuzz: {len(outcomes)} calls over {len(_target_names())} callables "
        f"({seconds:.1f} s)",
        f"{'category':<10} {'calls':>6}",
    ]
    for category in CATEGORIES:
        lines.append(f"{category:<10} {counts[category]:>6}")
    lines.append(f"(type: {slips} of them an AttributeError or similar slip inside lucid)")
    lines.append(f"known gaps listed: {len(KNOWN_GAPS)}")
    return "\n".join(lines)


def main() -> None:
    started = time.perf_counter()
    outcomes = [outcome for name in _target_names() for outcome in sweep(name)]
    seconds = time.perf_counter() - started
    print(tally_table(outcomes, seconds))
    print_outcomes(outcomes, CATEGORIES, set(sys.argv[1:]))


def print_outcomes(outcomes: list[Outcome], categories: tuple[str, ...], show: set[str]) -> None:
    """Every outcome of the categories in `show` (by default all but same and equal)."""
    show = show or set(categories) - {"same", "equal", "wording"}
    width = max((len(outcome.target) for outcome in outcomes), default=0) + 1
    for category in categories:
        if category not in show:
            continue
        rows = [outcome for outcome in outcomes if outcome.category == category]
        print(f"\n== {category} ({len(rows)})")
        for outcome in rows:
            print(f"{outcome.target:<{width}} {outcome.kind:<32} {outcome.detail}")


if __name__ == "__main__":
    if not TORCH_AVAILABLE:
        sys.exit(TORCH_MISSING)
    main()
