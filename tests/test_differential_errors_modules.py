"""Differential fuzz of bad arguments against PyTorch, beyond the functions (issue 28, section 2).

tests/test_differential_errors.py sweeps `lucid.*`, `nn.functional`, `linalg` and Tensor
methods. This file sweeps the rest of the surface lucid shares with PyTorch: every `nn` module's
constructor (each argument in turn made negative, zero, fractional, NaN, infinite, a string or
None, then the module called on a valid input) and forward (wrong dtype and rank, empty, 0-d,
None, lists, non-contiguous views, mismatched shapes), `nn.init`, `nn.utils`, the optimizers
and schedulers (bad hyper-parameters and parameter lists, then a step), `utils.data`, `amp`
and `distributed`'s argument checks that need no process group. Each case is one thunk run on
`lucid` and on `torch` (`classify`):

- numpy: an exception from inside NumPy, or in NumPy's words, reaches the user;
- internal: lucid raises OverflowError, MemoryError, RecursionError, or an AttributeError (or
  similar slip) where PyTorch raises another type or answers;
- silent: PyTorch raises, lucid answers;
- values: both answer with different results (forwards: output shapes and dtypes);
- type / wording: both raise, another builtin type / the same type and another message
  (tallied; `same` counts the same message);
- refuses: PyTorch answers, lucid raises (tallied).

numpy, internal, silent and values are asserted: each must be listed in `KNOWN_SURFACE_GAPS`
(tests/differential_known_gaps.py) with its category and reason, and a listed gap that no longer
shows fails, so the list only shrinks. `test_every_shared_callable_has_cases` fails for a public
callable lucid shares with PyTorch that has no case and no reasoned entry in `EXCLUDED`. Run
`python -m tests.test_differential_errors_modules` for the tally and every non-equal outcome.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.amp
import lucid.distributed
import lucid.nn.init
import lucid.nn.utils
import lucid.optim
import lucid.optim.lr_scheduler
import lucid.utils.data
from tests.differential_known_gaps import KNOWN_SURFACE_GAPS
from tests.nn.module_catalogue import ROWS as MODULE_ROWS
from tests.optim.optimizer_catalogue import ROWS as OPTIMIZER_ROWS
from tests.test_differential_errors import (
    INTERNALS,
    Outcome,
    _builtin_base,
    _describe,
    _normalized,
    _raised_from_numpy,
    print_outcomes,
)
from tests.torch_oracle import TORCH_AVAILABLE, TORCH_MISSING

if TORCH_AVAILABLE:
    import torch
    import torch.amp
    import torch.distributed
    import torch.nn.init
    import torch.nn.utils
    import torch.optim.lr_scheduler
    import torch.utils.data

pytestmark = pytest.mark.skipif(not TORCH_AVAILABLE, reason=TORCH_MISSING)

SEED = 28
ASSERTED = ("numpy", "internal", "silent", "values")
CATEGORIES = ("numpy", "internal", "silent", "values", "type", "wording", "refuses", "same")
CATEGORIES = (*CATEGORIES, "equal")
NAN = float("nan")
INF = float("inf")


# ------------------------------------------------------------------------------ values
@dataclass(frozen=True)
class Array:
    """A tensor argument, built in each library from the same NumPy array."""

    array: np.ndarray
    layout: str = "plain"  # "plain" or "noncontiguous" (a permuted view of a copy)
    requires_grad: bool = False


@dataclass(frozen=True)
class Built:
    """An argument each library builds itself: `make(library)`."""

    make: Callable[[Any], Any]
    label: str = "built"


def build(value: Any, library: Any) -> Any:
    """`value` as `library`'s argument."""
    if isinstance(value, Array):
        if value.layout == "noncontiguous" and value.array.ndim >= 2:
            order = tuple(reversed(range(value.array.ndim)))
            base = library.from_numpy(np.ascontiguousarray(value.array.transpose(order)))
            tensor = base.permute(*order)
        else:
            tensor = library.from_numpy(value.array.copy())
        return tensor.requires_grad_(value.requires_grad)
    if isinstance(value, Built):
        return value.make(library)
    if isinstance(value, list):
        return [build(item, library) for item in value]
    if isinstance(value, tuple):
        return tuple(build(item, library) for item in value)
    if isinstance(value, dict):
        return {key: build(item, library) for key, item in value.items()}
    return value


def _input_array(spec: Any, rng: np.random.Generator) -> np.ndarray:
    """A catalogue input (shape, array or maker) as an array; floats as float32."""
    if isinstance(spec, tuple):
        array = rng.uniform(-2.0, 2.0, spec)
    elif isinstance(spec, np.ndarray):
        array = spec
    else:
        array = np.asarray(spec(rng))
    return array.astype(np.float32) if array.dtype.kind == "f" else array


def _summary(value: Any) -> Any:
    """Shapes and dtypes of a result (module outputs hold other random parameters)."""
    if isinstance(value, lucid.Tensor | torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype).replace("torch.", "lucid."))
    if isinstance(value, list | tuple):
        return tuple(_summary(item) for item in value)
    return _normalized(value)


def _shown(value: Any) -> str:
    """An argument as a report names it."""
    if isinstance(value, Array):
        layout = ", non-contiguous" if value.layout != "plain" else ""
        return f"<{value.array.dtype} tensor of shape {tuple(value.array.shape)}{layout}>"
    if isinstance(value, Built):
        return f"<{value.label}>"
    if isinstance(value, list) and len(str(value)) > 40:
        return "<list>"
    return repr(value)


# ------------------------------------------------------------------------------ cases
@dataclass(frozen=True)
class Case:
    """One call of `target`: `run(library)` returns what is compared (run under each)."""

    target: str  # "nn.Linear", "nn.Linear.forward", "optim.SGD", "data.DataLoader", ...
    kind: str
    run: Callable[[Any], Any]
    # the call, for reports: "nn.Conv1d(3, 4, 3, stride=2.5)"
    call: str = ""


def _mutations(value: Any, default_is_none: bool) -> Iterator[tuple[str, Any]]:
    """Bad values for an argument that takes `value`."""
    if isinstance(value, bool) or isinstance(value, Built):
        if isinstance(value, Built):
            yield "string", "a"
        return
    if isinstance(value, int):
        yield from (("negative", -1), ("zero", 0), ("float", 2.5), ("string", "a"))
    elif isinstance(value, float):
        yield from (("negative", -1.0), ("nan", NAN), ("inf", INF), ("string", "a"))
    elif isinstance(value, str):
        yield "unknown_string", "nonexistent"
    elif isinstance(value, tuple) and value and all(isinstance(v, int | float) for v in value):
        yield "negative_items", tuple(-1 for _ in value)
        yield "float_items", tuple(2.5 for _ in value)
        yield "empty_tuple", ()
    elif isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        yield "negative_items", [-1 for _ in value]
        yield "empty_list", []
    elif value is None and default_is_none:
        yield from (("negative", -100), ("string", "a"))
    if value is not None and not default_is_none:
        yield "none", None


def _bound(signature: inspect.Signature, args: tuple, kwargs: dict) -> tuple[list, dict]:
    """Positional and keyword arguments of a call, by the signature's names."""
    bound = signature.bind_partial(*args, **kwargs)
    positional, keywords = [], {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        elif len(positional) < len(args):
            positional.append(value)
        else:
            keywords[name] = value
    return positional, keywords


def _constructor_cases(
    prefix: str,
    name: str,
    make: Callable[[Any, list, dict], Any],
    signature: inspect.Signature,
    args: tuple,
    kwargs: dict,
    then: Callable[[Any, Any], Any],
    skip: tuple[str, ...] = (),
) -> Iterator[Case]:
    """`valid`, then each argument of the constructor mutated in turn; `then(library, obj)`
    uses what was built (a forward, a step) and gives what is compared."""
    positional, keywords = _bound(signature, args, kwargs)
    names = list(signature.parameters)

    def case(kind: str, call_args: list, call_kwargs: dict) -> Case:
        def run(library: Any) -> Any:
            built_args = [build(value, library) for value in call_args]
            built_kwargs = {key: build(value, library) for key, value in call_kwargs.items()}
            return then(library, make(library, built_args, built_kwargs))

        shown = [_shown(value) for value in call_args]
        shown += [f"{key}={_shown(value)}" for key, value in call_kwargs.items()]
        return Case(f"{prefix}.{name}", kind, run, f"{prefix}.{name}({', '.join(shown)})")

    yield case("valid", positional, keywords)
    for position, parameter in enumerate(signature.parameters.values()):
        if parameter.name in ("self", "device", "dtype", *skip) or parameter.name.startswith("_"):
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        default = parameter.default
        if position < len(positional):
            value = positional[position]
        elif parameter.name in keywords:
            value = keywords[parameter.name]
        elif default is inspect.Parameter.empty:
            continue
        else:
            value = default
        for kind, bad in _mutations(value, default is None):
            if position < len(positional):
                changed = list(positional)
                changed[position] = bad
                yield case(f"{parameter.name}={kind}", changed, keywords)
            else:
                yield case(
                    f"{parameter.name}={kind}", positional, {**keywords, parameter.name: bad}
                )
    del names


# ------------------------------------------------------------------------- nn modules
# Rows for modules the catalogue leaves out (lazy modules, containers): (args, kwargs, inputs).
EXTRA_MODULE_ROWS: dict[str, tuple[tuple, dict, tuple]] = {
    "LazyLinear": ((3,), {}, ((2, 4),)),
    "LazyConv1d": ((4, 3), {}, ((2, 3, 6),)),
    "LazyConv2d": ((4, 3), {}, ((1, 2, 5, 5),)),
    "LazyConv3d": ((2, 2), {}, ((1, 2, 3, 3, 3),)),
    "LazyConvTranspose1d": ((4, 3), {}, ((2, 3, 6),)),
    "LazyConvTranspose2d": ((4, 3), {}, ((1, 2, 4, 4),)),
    "LazyConvTranspose3d": ((2, 2), {}, ((1, 2, 3, 3, 3),)),
    "LazyBatchNorm1d": ((), {}, ((4, 3),)),
    "LazyBatchNorm2d": ((), {}, ((2, 3, 2, 2),)),
    "LazyBatchNorm3d": ((), {}, ((2, 2, 2, 2, 2),)),
    "LazyInstanceNorm1d": ((), {}, ((2, 3, 5),)),
    "LazyInstanceNorm2d": ((), {}, ((2, 2, 3, 4),)),
    "LazyInstanceNorm3d": ((), {}, ((1, 2, 2, 3, 2),)),
    "NLLLoss2d": ((), {}, ()),
    "SyncBatchNorm": ((3,), {}, ()),
    "ModuleList": (([Built(lambda library: library.nn.Linear(2, 2), "Linear")],), {}, ()),
    "ParameterList": (([Array(np.ones((2, 2), np.float32))],), {}, ()),
    "ModuleDict": (({"a": Built(lambda library: library.nn.Linear(2, 2), "Linear")},), {}, ()),
    "ParameterDict": (({"a": Array(np.ones((2, 2), np.float32))},), {}, ()),
    "Buffer": ((Array(np.ones((2, 2), np.float32)),), {}, ()),
    "Parameter": ((Array(np.ones((2, 2), np.float32)),), {}, ()),
    "Module": ((), {}, ()),
    "LinearCrossEntropyOptions": ((), {}, ()),
}


def _layer(name: str, *args: Any, **kwargs: Any) -> Built:
    return Built(lambda library: getattr(library.nn, name)(*args, **kwargs), name)


# Constructors the catalogue builds with a function: base arguments to mutate.
BUILT_MODULE_ARGS: dict[str, tuple[tuple, dict]] = {
    "Sequential": ((_layer("Linear", 4, 5), _layer("Tanh")), {}),
    "DataParallel": ((_layer("Linear", 4, 3),), {}),
    "TransformerEncoder": (
        (_layer("TransformerEncoderLayer", 8, 2, 16, 0.0, batch_first=True), 2),
        {"enable_nested_tensor": False},
    ),
    "TransformerDecoder": ((_layer("TransformerDecoderLayer", 8, 2, 16, 0.0), 2), {}),
    "FractionalMaxPool2d": ((2,), {"output_size": 3}),
    "FractionalMaxPool3d": ((2,), {"output_size": 3}),
}


def _module_rows() -> dict[str, tuple[tuple, dict, tuple, Callable[[Any], Any] | None]]:
    """class name -> (args, kwargs, input specs, build): the first catalogue row of each."""
    rows: dict[str, tuple[tuple, dict, tuple, Callable[[Any], Any] | None]] = {}
    for row in MODULE_ROWS:
        if row.class_name in rows:
            continue
        args, kwargs = tuple(row.args), dict(row.kwargs)
        if row.build is not None:
            args, kwargs = BUILT_MODULE_ARGS.get(row.class_name, (None, None))
        inputs = tuple(row.inputs) if row.has_forward else ()
        build_fn = row.build if row.class_name.startswith("Fractional") else None
        rows[row.class_name] = (args, kwargs, inputs, build_fn)
    for name, (args, kwargs, inputs) in EXTRA_MODULE_ROWS.items():
        rows.setdefault(name, (args, kwargs, inputs, None))
    return rows


def _forward(inputs: list[Any]) -> Callable[[Any, Any], Any]:
    def then(library: Any, module: Any) -> Any:
        if not inputs:
            return module
        return _summary(module(*[build(value, library) for value in inputs]))

    return then


def _forward_kinds(arrays: list[np.ndarray], rng: np.random.Generator) -> Iterator[tuple]:
    """(kind, inputs) of bad forward inputs; the first input is the one changed."""
    first = arrays[0]
    rest = [Array(array) for array in arrays[1:]]
    yield "valid", [Array(first), *rest]
    if first.dtype.kind == "f":
        yield "int_tensor", [Array(np.round(first).astype(np.int64)), *rest]
        yield "float64", [Array(first.astype(np.float64)), *rest]
        if first.ndim >= 2:
            yield "noncontiguous", [Array(first, "noncontiguous"), *rest]
    else:
        yield "float_tensor", [Array(first.astype(np.float32)), *rest]
    if first.ndim >= 1:
        yield "rank_minus_one", [Array(first[0]), *rest]
        yield "empty_batch", [Array(first[:0]), *rest]
    yield "rank_plus_one", [Array(np.stack([first, first])), *rest]
    yield "zero_d", [Array(first.reshape(-1)[:1].reshape(())), *rest]
    yield "none", [None, *rest]
    yield "python_list", [first.tolist(), *rest]
    if rest:
        second = arrays[1]
        if second.ndim >= 1:
            wrong = np.concatenate([second, second[..., :1]], axis=-1)
            yield "shape_mismatch", [Array(first), Array(wrong), *rest[1:]]
        yield "missing_input", [Array(first)]


def module_cases() -> Iterator[Case]:
    rows = _module_rows()
    for name in sorted(rows):
        args, kwargs, specs, build_fn = rows[name]
        lucid_class = getattr(lucid.nn, name)
        rng = np.random.default_rng([SEED, len(name)])
        arrays = [_input_array(spec, rng) for spec in specs]
        inputs = [Array(array) for array in arrays]
        if args is not None:
            signature = inspect.signature(lucid_class)
            if name in ("RNN", "LSTM", "GRU"):
                # (*args, **kwargs), passed on to RNNBase after its `mode`
                base = inspect.signature(lucid.nn.RNNBase)
                parameters = list(base.parameters.values())[1:]
                if name == "RNN":
                    nonlinearity = inspect.Parameter(
                        "nonlinearity", inspect.Parameter.KEYWORD_ONLY, default="tanh"
                    )
                    parameters.append(nonlinearity)
                signature = base.replace(parameters=parameters)

            def make(library: Any, call_args: list, call_kwargs: dict, name: str = name) -> Any:
                return getattr(library.nn, name)(*call_args, **call_kwargs)

            yield from _constructor_cases(
                "nn", name, make, signature, args, kwargs, _forward(inputs)
            )
        if not arrays:
            continue
        for kind, changed in _forward_kinds(arrays, rng):

            def run(
                library: Any, name=name, changed=changed, args=args, kwargs=kwargs, make=build_fn
            ) -> Any:
                if make is not None:
                    module = make(library.nn)
                else:
                    module = getattr(library.nn, name)(
                        *build(list(args), library), **build(kwargs, library)
                    )
                return _summary(module(*[build(value, library) for value in changed]))

            inputs_shown = ", ".join(_shown(value) for value in changed)
            yield Case(f"nn.{name}.forward", kind, run, f"nn.{name}(...)({inputs_shown})")


# ---------------------------------------------------------------------------- nn.init
def _init_cases() -> Iterator[Case]:
    """Each nn.init function on tensors of every rank and dtype, and its arguments mutated."""
    tensors = {
        "valid": Array(np.zeros((4, 3, 3), np.float32)),
        "matrix": Array(np.zeros((4, 6), np.float32)),
        "one_d": Array(np.zeros((5,), np.float32)),
        "zero_d": Array(np.zeros((), np.float32)),
        "empty": Array(np.zeros((0, 3), np.float32)),
        "int_tensor": Array(np.zeros((4, 6), np.int64)),
        "five_d": Array(np.zeros((2, 2, 2, 2, 2), np.float32)),
        "six_d": Array(np.zeros((1, 1, 1, 1, 1, 1), np.float32)),
        "requires_grad_leaf": Array(np.zeros((4, 6), np.float32), requires_grad=True),
        "python_list": [[0.0, 0.0], [0.0, 0.0]],
        "none": None,
    }
    deterministic = {"constant_", "ones_", "zeros_", "eye_", "dirac_", "constant", "eye", "dirac"}
    for name in sorted(_shared("init")):
        function = getattr(lucid.nn.init, name)
        if not inspect.isfunction(function):
            continue
        signature = inspect.signature(function)
        first = next(iter(signature.parameters))
        if name == "calculate_gain":
            for kind, args in (
                ("valid", ("leaky_relu", 0.2)),
                ("unknown_string", ("nonexistent",)),
                ("param_string", ("leaky_relu", "a")),
                ("param_bool", ("leaky_relu", True)),
                ("param_nan", ("leaky_relu", NAN)),
                ("selu", ("selu",)),
                ("none", (None,)),
            ):
                yield Case(
                    f"init.{name}",
                    kind,
                    lambda library, args=args: library.nn.init.calculate_gain(*args),
                )
            continue
        required = {
            parameter.name: {"val": 0.5, "sparsity": 0.5}.get(parameter.name, 0.5)
            for parameter in list(signature.parameters.values())[1:]
            if parameter.default is inspect.Parameter.empty
        }

        def summary(result: Any, name: str = name) -> Any:
            if name in deterministic:
                return _normalized(result)
            return _summary(result)

        def run_init(library: Any, tensor: Any, kwargs: dict, name: str = name) -> Any:
            with lucid.no_grad() if library is lucid else torch.no_grad():
                return summary(getattr(library.nn.init, name)(build(tensor, library), **kwargs))

        for kind, tensor in tensors.items():
            yield Case(
                f"init.{name}",
                kind,
                lambda library, tensor=tensor, required=required, run_init=run_init: run_init(
                    library, tensor, dict(required)
                ),
            )

        def outside_no_grad(library: Any, name: str = name, required: dict = required) -> Any:
            leaf = build(tensors["requires_grad_leaf"], library)
            return _summary(getattr(library.nn.init, name)(leaf, **required))

        yield Case(f"init.{name}", "leaf_outside_no_grad", outside_no_grad)
        for parameter in list(signature.parameters.values())[1:]:
            if parameter.name in ("generator",) or parameter.kind is parameter.VAR_KEYWORD:
                continue
            value = required.get(parameter.name, parameter.default)
            for kind, bad in _mutations(value, parameter.default is None):
                kwargs = {**required, parameter.name: bad}
                yield Case(
                    f"init.{name}",
                    f"{parameter.name}={kind}",
                    lambda library, kwargs=kwargs, run_init=run_init: run_init(
                        library, tensors["valid"], kwargs
                    ),
                )
        del first


# --------------------------------------------------------------------------- nn.utils
def _linear_with_grads(library: Any) -> Any:
    linear = library.nn.Linear(3, 2)
    for parameter in linear.parameters():
        parameter.grad = library.ones_like(parameter)
    return linear


def _utils_cases() -> Iterator[Case]:
    """nn.utils: gradient clipping, vector conversion, reparametrizations, fusion."""
    utils = "nn.utils"

    def clip(name: str, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        def run(library: Any) -> Any:
            linear = _linear_with_grads(library)
            result = getattr(library.nn.utils, name)(linear.parameters(), *args, **kwargs)
            grads = [parameter.grad for parameter in linear.parameters()]
            return _normalized((result, grads))

        return run

    for name, base in (
        ("clip_grad_norm_", {"max_norm": 1.0}),
        ("clip_grad_norm", {"max_norm": 1.0}),
        ("clip_grad_value_", {"clip_value": 0.5}),
    ):
        yield Case(f"{utils}.{name}", "valid", clip(name, **base))
        key = next(iter(base))
        for kind, bad in (("nan", NAN), ("string", "a"), ("none", None), ("negative", -1.0)):
            yield Case(f"{utils}.{name}", f"{key}={kind}", clip(name, **{key: bad}))
        if name != "clip_grad_value_":
            for kind, bad in (("unknown_string", "foo"), ("negative", -1.0), ("zero", 0.0)):
                yield Case(
                    f"{utils}.{name}", f"norm_type={kind}", clip(name, **base, norm_type=bad)
                )
            yield Case(
                f"{utils}.{name}",
                "error_if_nonfinite",
                clip(name, max_norm=1.0, norm_type=INF, error_if_nonfinite="a"),
            )
    for name in ("clip_grad_norm_", "clip_grad_value_", "get_total_norm"):
        first = 1.0 if name == "clip_grad_norm_" else 0.5

        def odd(library: Any, value: Any, name: str = name, first: float = first) -> Any:
            if name == "get_total_norm":
                return _normalized(library.nn.utils.get_total_norm(build(value, library)))
            return _normalized(getattr(library.nn.utils, name)(build(value, library), first))

        for kind, value in (
            ("empty_list", []),
            ("none", None),
            ("python_number", 1.5),
            ("int_tensor", [Array(np.ones((2,), np.int64))]),
            ("tensor", Array(np.ones((2,), np.float32))),
        ):
            yield Case(
                f"{utils}.{name}", kind, lambda library, value=value, odd=odd: odd(library, value)
            )
    for kind, norm in (("valid", 2.0), ("norm_type=string", "a"), ("norm_type=nan", NAN)):
        yield Case(
            f"{utils}.get_total_norm",
            kind,
            lambda library, norm=norm: _normalized(
                library.nn.utils.get_total_norm([library.ones(2)], norm_type=norm)
            ),
        )

    def grads_with_norm(library: Any, total: Any, max_norm: Any) -> Any:
        linear = _linear_with_grads(library)
        library.nn.utils.clip_grads_with_norm_(linear.parameters(), max_norm, build(total, library))
        return _normalized([parameter.grad for parameter in linear.parameters()])

    for kind, total, max_norm in (
        ("valid", Array(np.array(2.0, np.float32)), 1.0),
        ("total_norm=python_number", 2.0, 1.0),
        ("total_norm=none", None, 1.0),
        ("max_norm=nan", Array(np.array(2.0, np.float32)), NAN),
        ("max_norm=string", Array(np.array(2.0, np.float32)), "a"),
    ):
        yield Case(
            f"{utils}.clip_grads_with_norm_",
            kind,
            lambda library, total=total, max_norm=max_norm: grads_with_norm(
                library, total, max_norm
            ),
        )
    for kind, value in (
        ("valid", [Array(np.ones((2, 2), np.float32)), Array(np.ones(3, np.float32))]),
        ("empty_list", []),
        ("tensor", Array(np.ones((2, 2), np.float32))),
        ("none", None),
        ("python_list", [[1.0, 2.0]]),
        ("mixed_dtypes", [Array(np.ones(2, np.float32)), Array(np.ones(2, np.float64))]),
    ):
        yield Case(
            f"{utils}.parameters_to_vector",
            kind,
            lambda library, value=value: _normalized(
                library.nn.utils.parameters_to_vector(build(value, library))
            ),
        )

    def to_parameters(library: Any, vector: Any) -> Any:
        linear = library.nn.Linear(2, 2)
        library.nn.utils.vector_to_parameters(build(vector, library), linear.parameters())
        return _normalized(list(linear.parameters()))

    for kind, vector in (
        ("valid", Array(np.arange(6, dtype=np.float32))),
        ("too_short", Array(np.arange(4, dtype=np.float32))),
        ("too_long", Array(np.arange(8, dtype=np.float32))),
        ("matrix", Array(np.arange(6, dtype=np.float32).reshape(2, 3))),
        ("python_list", [0.0] * 6),
        ("none", None),
        ("int_tensor", Array(np.arange(6))),
    ):
        yield Case(
            f"{utils}.vector_to_parameters",
            kind,
            lambda library, vector=vector: to_parameters(library, vector),
        )

    def reparametrize(function: str, **kwargs: Any) -> Callable[[Any], Any]:
        def run(library: Any) -> Any:
            linear = library.nn.Linear(3, 2)
            module = getattr(library.nn.utils, function)(linear, **kwargs)
            return _summary(module(library.ones(4, 3)))

        return run

    for name, bad in (
        ("weight_norm", {"name": "nonexistent"}),
        ("weight_norm", {"dim": 5}),
        ("weight_norm", {"dim": 2.5}),
        ("spectral_norm", {"name": "nonexistent"}),
        ("spectral_norm", {"n_power_iterations": 0}),
        ("spectral_norm", {"n_power_iterations": -1}),
        ("spectral_norm", {"eps": -1.0}),
        ("spectral_norm", {"dim": 5}),
    ):
        key, value = next(iter(bad.items()))
        yield Case(f"{utils}.{name}", "valid", reparametrize(name))
        yield Case(f"{utils}.{name}", f"{key}={value}", reparametrize(name, **bad))
    for name in ("weight_norm", "spectral_norm"):
        yield Case(
            f"{utils}.{name}",
            "not_a_module",
            lambda library, name=name: getattr(library.nn.utils, name)("a"),
        )
    for name in ("remove_weight_norm", "remove_spectral_norm"):
        yield Case(
            f"{utils}.{name}",
            "not_applied",
            lambda library, name=name: getattr(library.nn.utils, name)(library.nn.Linear(2, 2)),
        )
        yield Case(
            f"{utils}.{name}",
            "valid",
            lambda library, name=name: _summary(
                getattr(library.nn.utils, name)(
                    getattr(library.nn.utils, name.removeprefix("remove_"))(library.nn.Linear(2, 2))
                )(library.ones(1, 2))
            ),
        )
    for kind, make in (
        ("valid", lambda library: library.nn.Linear),
        ("not_a_class", lambda library: library.nn.Linear(2, 2)),
        ("not_a_module_class", lambda library: int),
    ):
        yield Case(
            f"{utils}.skip_init",
            kind,
            lambda library, make=make: _summary(
                library.nn.utils.skip_init(make(library), 2, 3).weight
            ),
        )

    def fuse(name: str, train: bool, sizes: tuple[int, int]) -> Callable[[Any], Any]:
        def run(library: Any) -> Any:
            if "conv" in name:
                first = library.nn.Conv2d(2, sizes[0], 1)
            else:
                first = library.nn.Linear(2, sizes[0])
            bn = (
                library.nn.BatchNorm2d(sizes[1])
                if "conv" in name
                else library.nn.BatchNorm1d(sizes[1])
            )
            first.train(train)
            bn.train(train)
            return _summary(getattr(library.nn.utils, name)(first, bn).weight)

        return run

    for name in ("fuse_conv_bn_eval", "fuse_linear_bn_eval"):
        yield Case(f"{utils}.{name}", "valid", fuse(name, False, (3, 3)))
        yield Case(f"{utils}.{name}", "training", fuse(name, True, (3, 3)))
        yield Case(f"{utils}.{name}", "size_mismatch", fuse(name, False, (3, 4)))

    def fuse_weights(name: str, sizes: tuple[int, int], eps: Any) -> Callable[[Any], Any]:
        def run(library: Any) -> Any:
            if "conv" in name:
                weight, bias = library.ones(sizes[0], 2, 1, 1), library.ones(sizes[0])
            else:
                weight, bias = library.ones(sizes[0], 2), library.ones(sizes[0])
            stats = [library.ones(sizes[1]) for _ in range(4)]
            return _normalized(
                getattr(library.nn.utils, name)(weight, bias, stats[0], stats[1], eps, *stats[2:])
            )

        return run

    for name in ("fuse_conv_bn_weights", "fuse_linear_bn_weights"):
        yield Case(f"{utils}.{name}", "valid", fuse_weights(name, (3, 3), 1e-5))
        yield Case(f"{utils}.{name}", "size_mismatch", fuse_weights(name, (3, 4), 1e-5))
        yield Case(f"{utils}.{name}", "eps=string", fuse_weights(name, (3, 3), "a"))
    for name in ("convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"):
        for kind, make in (
            ("valid", lambda library: library.nn.Conv2d(2, 2, 1)),
            ("not_a_module", lambda library: "a"),
        ):
            yield Case(
                f"{utils}.{name}",
                kind,
                lambda library, make=make, name=name: _summary(
                    getattr(library.nn.utils, name)(make(library), library.channels_last).weight
                ),
            )
        yield Case(
            f"{utils}.{name}",
            "memory_format=string",
            lambda library, name=name: getattr(library.nn.utils, name)(
                library.nn.Conv2d(2, 2, 1), "a"
            ),
        )
        # clone() and resize_() of each weight refuse a format of another rank, and preserve
        for memory_format in ("contiguous_format", "preserve_format", "channels_last",
                              "channels_last_3d"):  # fmt: skip
            yield Case(
                f"{utils}.{name}",
                f"memory_format={memory_format}",
                lambda library, name=name, memory_format=memory_format: _summary(
                    getattr(library.nn.utils, name)(
                        library.nn.Sequential(
                            library.nn.Conv2d(2, 2, 1), library.nn.Conv3d(2, 2, 1)
                        ),
                        getattr(library, memory_format),
                    )[0].weight
                ),
            )


# ---------------------------------------------------------------------------- optim
def _parameter() -> Array:
    return Array(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)


def _params_kinds() -> Iterator[tuple[str, Any]]:
    """Bad `params` arguments of an optimizer."""
    leaf = _parameter()
    yield "params=empty_list", []
    yield "params=single_tensor", leaf
    yield "params=python_number", [1.5]
    yield "params=none", None
    yield "params=int_tensor", [Array(np.ones((2, 2), np.int64))]
    yield "params=non_leaf", [Built(lambda library: library.ones(2, requires_grad=True) * 2)]
    yield "params=group_without_params", [{"lr": 0.1}]
    yield (
        "params=overlapping_groups",
        [Built(lambda library: _shared_groups(library), "overlapping groups")],
    )
    yield "params=group_of_strings", [{"params": ["a"]}]
    yield "params=dict", {"params": [leaf]}


def _shared_groups(library: Any) -> Any:
    raise NotImplementedError  # replaced in _optimizer_params


def _optimizer_params(value: Any, library: Any) -> Any:
    if (
        isinstance(value, list)
        and value
        and isinstance(value[0], Built)
        and value[0].label == "overlapping groups"
    ):
        shared = library.ones(2, requires_grad=True)
        return [{"params": [shared]}, {"params": [shared]}]
    return build(value, library)


def _step(name: str) -> Callable[[Any, Any], Any]:
    """One step with a gradient of ones, then the parameters (LBFGS: a closure)."""

    def then(library: Any, optimizer: Any) -> Any:
        parameters = [p for group in optimizer.param_groups for p in group["params"]]
        if name == "SparseAdam" or not parameters:
            return _normalized(parameters)

        def closure() -> Any:
            optimizer.zero_grad()
            loss = sum((p * p).sum() for p in parameters)
            loss.backward()
            return loss

        if name == "LBFGS":
            optimizer.step(closure)
        else:
            for parameter in parameters:
                parameter.grad = library.ones_like(parameter)
            optimizer.step()
        return _normalized([parameter.detach() for parameter in parameters])

    return then


def optimizer_cases() -> Iterator[Case]:
    configs = {row.name: dict(row.configs[0]) for row in OPTIMIZER_ROWS}
    for name in sorted(_shared("optim")):
        optimizer_class = getattr(lucid.optim, name)
        if not isinstance(optimizer_class, type):
            continue
        signature = inspect.signature(optimizer_class)
        if name == "Optimizer":
            args: tuple = (_parameter(), {"lr": 0.1})
            kwargs: dict = {}
            args = ([_parameter()], {"lr": 0.1})
        else:
            args, kwargs = ([_parameter()],), configs.get(name, {})

        def make(library: Any, call_args: list, call_kwargs: dict, name: str = name) -> Any:
            call_args = [_optimizer_params(call_args[0], library), *call_args[1:]]
            return getattr(library.optim, name)(*call_args, **call_kwargs)

        then = _step(name) if name != "Optimizer" else (lambda library, optimizer: optimizer)
        yield from _constructor_cases(
            "optim", name, make, signature, args, kwargs, then, skip=("params",)
        )
        for kind, params in _params_kinds():
            yield from (
                Case(
                    f"optim.{name}",
                    kind,
                    lambda library, params=params, name=name, args=args, kwargs=kwargs: (
                        getattr(library.optim, name)(
                            _optimizer_params(params, library),
                            *build(list(args[1:]), library),
                            **kwargs,
                        )
                        and "built"
                    ),
                ),
            )
        if name != "Optimizer":
            yield Case(
                f"optim.{name}",
                "add_param_group=duplicate",
                lambda library, name=name, kwargs=kwargs: _add_duplicate(library, name, kwargs),
            )


def _add_duplicate(library: Any, name: str, kwargs: dict) -> Any:
    parameter = library.ones(2, 2, requires_grad=True)
    optimizer = getattr(library.optim, name)([parameter], **kwargs)
    optimizer.add_param_group({"params": [parameter]})
    return "added"


# ------------------------------------------------------------------------- schedulers
def _lambda(epoch: int) -> float:
    return 0.9**epoch


# What one run of a case shares between its arguments (the optimizer of a scheduler and of the
# schedulers it chains); cleared before each run.
_RUN_STATE: dict[str, Any] = {}


def _optimizer(library: Any) -> Any:
    """The run's optimizer (one per run, so inner and outer schedulers share it)."""
    if "optimizer" not in _RUN_STATE:
        parameter = library.ones(2, requires_grad=True)
        _RUN_STATE["optimizer"] = library.optim.SGD([parameter], lr=0.1, momentum=0.9)
    return _RUN_STATE["optimizer"]


def _inner(name: str, *args: Any, **kwargs: Any) -> Built:
    """A scheduler on the run's optimizer, for SequentialLR and ChainedScheduler."""

    def make(library: Any) -> Any:
        scheduler_class = getattr(library.optim.lr_scheduler, name)
        return scheduler_class(_optimizer(library), *args, **kwargs)

    return Built(make, f"scheduler {name}")


SCHEDULER_ARGS: dict[str, tuple[tuple, dict]] = {
    "LRScheduler": ((), {}),
    "LambdaLR": ((_lambda,), {}),
    "MultiplicativeLR": ((_lambda,), {}),
    "StepLR": ((2,), {"gamma": 0.5}),
    "MultiStepLR": (([2, 4],), {"gamma": 0.5}),
    "ConstantLR": ((), {"factor": 0.5, "total_iters": 3}),
    "LinearLR": ((), {"start_factor": 0.5, "end_factor": 1.0, "total_iters": 3}),
    "ExponentialLR": ((0.9,), {}),
    "PolynomialLR": ((), {"total_iters": 4, "power": 2.0}),
    "CosineAnnealingLR": ((5,), {"eta_min": 0.01}),
    "CosineAnnealingWarmRestarts": ((3,), {"T_mult": 2, "eta_min": 0.01}),
    "CyclicLR": ((0.01, 0.1), {"step_size_up": 2}),
    "OneCycleLR": ((0.1,), {"total_steps": 10}),
    "ReduceLROnPlateau": ((), {"factor": 0.5, "patience": 1}),
    "SequentialLR": (
        ([_inner("ConstantLR", factor=0.5, total_iters=2), _inner("ExponentialLR", 0.9)], [2]),
        {},
    ),
    "ChainedScheduler": (
        ([_inner("ConstantLR", factor=0.5, total_iters=2), _inner("ExponentialLR", 0.9)],),
        {},
    ),
}


def _scheduled(name: str) -> Callable[[Any, Any], Any]:
    """Three steps, then every group's lr."""

    def then(library: Any, scheduler: Any) -> Any:
        optimizer = _optimizer(library)
        for epoch in range(3):
            if name == "ReduceLROnPlateau":
                scheduler.step(1.0)
            else:
                scheduler.step()
            del epoch
        return _normalized([group["lr"] for group in optimizer.param_groups])

    return then


def scheduler_cases() -> Iterator[Case]:
    for name in sorted(_shared("lr_scheduler")):
        args, kwargs = SCHEDULER_ARGS[name]
        scheduler_class = getattr(lucid.optim.lr_scheduler, name)
        signature = inspect.signature(scheduler_class)
        if name == "ChainedScheduler":
            call_args: tuple = args
        else:
            call_args = (Built(_optimizer, "optimizer"), *args)

        def make(library: Any, built_args: list, built_kwargs: dict, name: str = name) -> Any:
            scheduler_class = getattr(library.optim.lr_scheduler, name)
            return scheduler_class(*built_args, **built_kwargs)

        skip = ("optimizer", "lr_lambda", "verbose")
        yield from _constructor_cases(
            "lr_scheduler",
            name,
            make,
            signature,
            call_args,
            kwargs,
            _scheduled(name) if name != "LRScheduler" else (lambda library, scheduler: "built"),
            skip=skip,
        )
        if name == "ChainedScheduler":
            continue
        for kind, optimizer in (
            ("optimizer=none", None),
            ("optimizer=string", "a"),
            ("optimizer=list", Built(lambda library: [library.ones(2)], "list")),
        ):
            yield Case(
                f"lr_scheduler.{name}",
                kind,
                lambda library, optimizer=optimizer, args=args, kwargs=kwargs, make=make: make(
                    library,
                    [build(optimizer, library), *build(list(args), library)],
                    kwargs,
                ),
            )
        if name in ("LambdaLR", "MultiplicativeLR"):
            for kind, function in (
                ("lr_lambda=string", "a"),
                ("lr_lambda=wrong_count", [_lambda, _lambda]),
            ):
                yield Case(
                    f"lr_scheduler.{name}",
                    kind,
                    lambda library, function=function, make=make: make(
                        library, [_optimizer(library), function], {}
                    ),
                )


# ------------------------------------------------------------------------- utils.data
def _dataset(library: Any) -> Any:
    features = library.arange(12, dtype=library.float32).reshape(6, 2)
    return library.utils.data.TensorDataset(features, library.arange(6))


def _batches(library: Any, loader: Any) -> Any:
    return _normalized([batch for batch in loader])


def data_cases() -> Iterator[Case]:
    data = "data"
    dataset = Built(_dataset, "dataset")
    indices = Built(lambda library: library.utils.data.SequentialSampler(range(6)), "sampler")
    batches = Built(
        lambda library: library.utils.data.BatchSampler(range(6), 2, False), "batch sampler"
    )
    signature = inspect.signature(lucid.utils.data.DataLoader)

    def make_loader(library: Any, args: list, kwargs: dict) -> Any:
        return library.utils.data.DataLoader(*args, **kwargs)

    yield from _constructor_cases(
        data,
        "DataLoader",
        make_loader,
        signature,
        (dataset,),
        {"batch_size": 2, "num_workers": 0, "timeout": 0.0},
        _batches,
        skip=(
            "multiprocessing_context",
            "generator",
            "worker_init_fn",
            "in_order",
            "pin_memory_device",
        ),
    )
    for kind, kwargs in (
        ("sampler_with_shuffle", {"sampler": indices, "shuffle": True}),
        ("batch_sampler_with_batch_size", {"batch_sampler": batches, "batch_size": 3}),
        ("batch_sampler_with_shuffle", {"batch_sampler": batches, "shuffle": True}),
        ("batch_sampler_with_drop_last", {"batch_sampler": batches, "drop_last": True}),
        ("batch_sampler_with_sampler", {"batch_sampler": batches, "sampler": indices}),
        ("prefetch_without_workers", {"prefetch_factor": 2}),
        ("persistent_without_workers", {"persistent_workers": True}),
        ("collate_fn=string", {"collate_fn": "a"}),
        ("sampler=list", {"sampler": [0, 1, 2]}),
        ("batch_size=none_and_drop_last", {"batch_size": None, "drop_last": True}),
    ):
        yield Case(
            f"{data}.DataLoader",
            kind,
            lambda library, kwargs=kwargs: _batches(
                library, library.utils.data.DataLoader(_dataset(library), **build(kwargs, library))
            ),
        )
    for kind, value in (("dataset=none", None), ("dataset=number", 5), ("dataset=list", [1, 2])):
        yield Case(
            f"{data}.DataLoader",
            kind,
            lambda library, value=value: _batches(library, library.utils.data.DataLoader(value)),
        )

    def sampler_case(name: str, kind: str, *args: Any, **kwargs: Any) -> Case:
        def run(library: Any) -> Any:
            sampler = getattr(library.utils.data, name)(*build(list(args), library), **kwargs)
            # random samplers: only how many they give is compared
            items = list(sampler)
            return _normalized((len(items), len(sampler)))

        return Case(f"{data}.{name}", kind, run)

    for name, base, bad in (
        (
            "SequentialSampler",
            (range(5),),
            {"data_source=none": ((None,), {}), "data_source=number": ((5,), {})},
        ),
        (
            "RandomSampler",
            (range(5),),
            {
                "num_samples=zero": ((range(5),), {"num_samples": 0}),
                "num_samples=negative": ((range(5),), {"num_samples": -1}),
                "num_samples=float": ((range(5),), {"num_samples": 2.5}),
                "num_samples=string": ((range(5),), {"num_samples": "a"}),
                "replacement=string": ((range(5),), {"replacement": "a"}),
                "num_samples_without_replacement": ((range(5),), {"num_samples": 8}),
                "data_source=empty": ((range(0),), {}),
            },
        ),
        (
            "SubsetRandomSampler",
            ([0, 2, 4],),
            {"indices=none": ((None,), {}), "indices=number": ((3,), {})},
        ),
        (
            "WeightedRandomSampler",
            ([0.2, 0.8], 4),
            {
                "num_samples=zero": (([0.2, 0.8], 0), {}),
                "num_samples=negative": (([0.2, 0.8], -1), {}),
                "num_samples=float": (([0.2, 0.8], 2.5), {}),
                "num_samples=bool": (([0.2, 0.8], True), {}),
                "replacement=string": (([0.2, 0.8], 4), {"replacement": "a"}),
                "weights=negative": (([-0.2, 0.8], 4), {}),
                "weights=matrix": (([[0.2, 0.8]], 4), {}),
                "weights=strings": ((["a", "b"], 4), {}),
                "weights=empty": (([], 4), {}),
                "without_replacement_too_many": (([0.2, 0.8], 4), {"replacement": False}),
            },
        ),
        (
            "BatchSampler",
            (range(5), 2, False),
            {
                "batch_size=zero": ((range(5), 0, False), {}),
                "batch_size=negative": ((range(5), -1, False), {}),
                "batch_size=float": ((range(5), 2.5, False), {}),
                "batch_size=bool": ((range(5), True, False), {}),
                "batch_size=string": ((range(5), "a", False), {}),
                "drop_last=string": ((range(5), 2, "a"), {}),
                "drop_last=number": ((range(5), 2, 1), {}),
                "sampler=none": ((None, 2, False), {}),
            },
        ),
        (
            "DistributedSampler",
            (range(6),),
            {
                "rank_out_of_range": ((range(6),), {"num_replicas": 2, "rank": 2}),
                "rank=negative": ((range(6),), {"num_replicas": 2, "rank": -1}),
                "num_replicas=zero": ((range(6),), {"num_replicas": 0, "rank": 0}),
                "without_process_group": ((range(6),), {}),
                "num_replicas=float": ((range(6),), {"num_replicas": 2.5, "rank": 0}),
            },
        ),
    ):
        base_kwargs = {"num_replicas": 2, "rank": 0} if name == "DistributedSampler" else {}
        yield sampler_case(name, "valid", *base, **base_kwargs)
        for kind, (args, kwargs) in bad.items():
            yield sampler_case(name, kind, *args, **kwargs)
    yield Case(f"{data}.Sampler", "valid", lambda library: library.utils.data.Sampler() and "built")
    yield Case(
        f"{data}.Sampler", "data_source", lambda library: library.utils.data.Sampler(range(3))
    )
    yield Case(
        f"{data}.Sampler", "iterate_base", lambda library: list(library.utils.data.Sampler())
    )
    yield Case(f"{data}.Sampler", "len_base", lambda library: len(library.utils.data.Sampler()))

    def dataset_case(name: str, kind: str, make: Callable[[Any], Any]) -> Case:
        def run(library: Any) -> Any:
            value = make(library)
            if isinstance(value, library.utils.data.IterableDataset):
                return _normalized(list(value))
            return _normalized([value[index] for index in range(len(value))])

        return Case(f"{data}.{name}", kind, run)

    def tensors(library: Any, *sizes: int) -> list[Any]:
        return [library.arange(size, dtype=library.float32) for size in sizes]

    for name, kind, make in (
        ("TensorDataset", "valid", lambda lib: lib.utils.data.TensorDataset(*tensors(lib, 3, 3))),
        (
            "TensorDataset",
            "size_mismatch",
            lambda lib: lib.utils.data.TensorDataset(*tensors(lib, 3, 4)),
        ),
        ("TensorDataset", "no_tensors", lambda lib: lib.utils.data.TensorDataset()),
        ("TensorDataset", "python_list", lambda lib: lib.utils.data.TensorDataset([1, 2])),
        ("TensorDataset", "zero_d", lambda lib: lib.utils.data.TensorDataset(lib.tensor(1.0))),
        ("Subset", "valid", lambda lib: lib.utils.data.Subset(_dataset(lib), [0, 2])),
        ("Subset", "index_out_of_range", lambda lib: lib.utils.data.Subset(_dataset(lib), [10])),
        ("Subset", "indices=none", lambda lib: lib.utils.data.Subset(_dataset(lib), None)),
        ("Subset", "indices=float", lambda lib: lib.utils.data.Subset(_dataset(lib), [1.5])),
        ("ConcatDataset", "valid", lambda lib: lib.utils.data.ConcatDataset([_dataset(lib)] * 2)),
        ("ConcatDataset", "empty", lambda lib: lib.utils.data.ConcatDataset([])),
        ("ConcatDataset", "number", lambda lib: lib.utils.data.ConcatDataset(5)),
        (
            "ConcatDataset",
            "iterable_dataset",
            lambda lib: lib.utils.data.ConcatDataset([_Counting(lib)]),
        ),
        (
            "StackDataset",
            "valid",
            lambda lib: lib.utils.data.StackDataset(_dataset(lib), _dataset(lib)),
        ),
        (
            "StackDataset",
            "size_mismatch",
            lambda lib: lib.utils.data.StackDataset(*tensors(lib, 3, 4)),
        ),
        ("StackDataset", "empty", lambda lib: lib.utils.data.StackDataset()),
        (
            "StackDataset",
            "args_and_kwargs",
            lambda lib: lib.utils.data.StackDataset(_dataset(lib), b=_dataset(lib)),
        ),
        ("ChainDataset", "valid", lambda lib: lib.utils.data.ChainDataset([_Counting(lib)] * 2)),
        ("ChainDataset", "map_dataset", lambda lib: lib.utils.data.ChainDataset([_dataset(lib)])),
        ("ChainDataset", "number", lambda lib: lib.utils.data.ChainDataset(5)),
        ("Dataset", "getitem_base", lambda lib: [lib.utils.data.Dataset()[0]]),
        ("Dataset", "valid", lambda lib: []),
        ("IterableDataset", "iterate_base", lambda lib: list(lib.utils.data.IterableDataset())),
        ("IterableDataset", "valid", lambda lib: _Counting(lib)),
    ):
        yield dataset_case(name, kind, make)
    for kind, lengths in (
        ("valid", [2, 4]),
        ("fractions", [0.5, 0.5]),
        ("sum_mismatch", [2, 3]),
        ("negative", [-1, 7]),
        ("fractions_over_one", [0.5, 0.6]),
        ("float_lengths", [2.5, 3.5]),
        ("empty", []),
        ("strings", ["a", "b"]),
    ):
        yield Case(
            f"{data}.random_split",
            kind,
            lambda library, lengths=lengths: _normalized(
                [len(part) for part in library.utils.data.random_split(_dataset(library), lengths)]
            ),
        )
    for kind, batch in (
        ("valid", lambda lib: [lib.ones(2), lib.ones(2)]),
        ("shape_mismatch", lambda lib: [lib.ones(2), lib.ones(3)]),
        ("empty", lambda lib: []),
        ("objects", lambda lib: [object(), object()]),
        ("strings", lambda lib: ["a", "b"]),
        ("mixed", lambda lib: [lib.ones(2), 1.0]),
        ("numbers", lambda lib: [1, 2]),
        ("dicts_mismatch", lambda lib: [{"a": lib.ones(1)}, {"b": lib.ones(1)}]),
        ("uneven_lists", lambda lib: [[1, 2], [3]]),
        ("none", lambda lib: None),
    ):
        for name in ("default_collate", "default_convert"):
            yield Case(
                f"{data}.{name}",
                kind,
                lambda library, batch=batch, name=name: _normalized(
                    getattr(library.utils.data, name)(batch(library))
                ),
            )
    yield Case(
        f"{data}.get_worker_info", "valid", lambda library: library.utils.data.get_worker_info()
    )
    yield Case(
        f"{data}.get_worker_info",
        "argument",
        lambda library: library.utils.data.get_worker_info(1),
    )


def _Counting(library: Any) -> Any:  # noqa: N802  (builds a class per library)
    class Counting(library.utils.data.IterableDataset):
        def __iter__(self) -> Iterator[int]:
            return iter(range(3))

    return Counting()


# -------------------------------------------------------------------------------- amp
def amp_cases() -> Iterator[Case]:
    def autocast(library: Any, *args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with library.amp.autocast(*args, **kwargs):
                result = library.ones(2, 2) @ library.ones(2, 2)
        return _normalized((result.dtype, len(caught) > 0))

    for kind, args, kwargs in (
        ("valid", ("cpu",), {}),
        ("valid_bfloat16", ("cpu",), {"dtype": "bfloat16"}),
        ("device_type=unknown", ("nonexistent",), {}),
        ("device_type=number", (1,), {}),
        ("device_type=none", (None,), {}),
        ("device_type=with_index", ("cpu:0",), {}),
        ("dtype=int32", ("cpu",), {"dtype": "int32"}),
        ("dtype=float64", ("cpu",), {"dtype": "float64"}),
        ("dtype=string", ("cpu",), {"dtype": "a"}),
        ("enabled=string", ("cpu",), {"enabled": "a"}),
        ("enabled=none", ("cpu",), {"enabled": None}),
        ("cache_enabled=string", ("cpu",), {"cache_enabled": "a"}),
        ("no_device_type", (), {}),
    ):

        def run(library: Any, args: tuple = args, kwargs: dict = kwargs) -> Any:
            if kwargs.get("dtype") in ("bfloat16", "int32", "float64"):
                kwargs = {**kwargs, "dtype": getattr(library, kwargs["dtype"])}
            return autocast(library, *args, **kwargs)

        yield Case("amp.autocast", kind, run)
    for kind, device in (
        ("valid", "cpu"),
        ("unknown", "nonexistent"),
        ("number", 1),
        ("none", None),
        ("with_index", "cpu:0"),
    ):
        yield Case(
            "amp.is_autocast_available",
            kind,
            lambda library, device=device: library.amp.is_autocast_available(device),
        )

    def scaler(library: Any, *args: Any, **kwargs: Any) -> Any:
        scaler = library.amp.GradScaler(*args, **kwargs)
        parameter = library.ones(2, requires_grad=True)
        optimizer = library.optim.SGD([parameter], lr=0.1)
        scaler.scale((parameter * 2).sum()).backward()
        scaler.step(optimizer)
        scaler.update()
        return _normalized((scaler.get_scale(), parameter.detach()))

    for kind, args, kwargs in (
        ("valid", ("cpu",), {}),
        ("device=unknown", ("nonexistent",), {}),
        ("device=number", (1,), {}),
        ("init_scale=negative", ("cpu",), {"init_scale": -1.0}),
        ("init_scale=nan", ("cpu",), {"init_scale": NAN}),
        ("init_scale=string", ("cpu",), {"init_scale": "a"}),
        ("growth_factor=string", ("cpu",), {"growth_factor": "a"}),
        ("growth_factor=half", ("cpu",), {"growth_factor": 0.5}),
        ("backoff_factor=two", ("cpu",), {"backoff_factor": 2.0}),
        ("backoff_factor=string", ("cpu",), {"backoff_factor": "a"}),
        ("growth_interval=zero", ("cpu",), {"growth_interval": 0}),
        ("growth_interval=float", ("cpu",), {"growth_interval": 2.5}),
        ("growth_interval=string", ("cpu",), {"growth_interval": "a"}),
        ("enabled=string", ("cpu",), {"enabled": "a"}),
    ):
        yield Case(
            "amp.GradScaler",
            kind,
            lambda library, args=args, kwargs=kwargs: scaler(library, *args, **kwargs),
        )

    def misuse(library: Any, how: str) -> Any:
        scaler = library.amp.GradScaler("cpu")
        parameter = library.ones(2, requires_grad=True)
        optimizer = library.optim.SGD([parameter], lr=0.1)
        if how == "scale_string":
            return scaler.scale("a")
        if how == "scale_list":
            return _normalized(scaler.scale([parameter * 1.0, parameter * 2.0]))
        if how == "scale_number":
            return scaler.scale(2.0)
        scaler.scale((parameter * 2).sum()).backward()
        if how == "unscale_twice":
            scaler.unscale_(optimizer)
            scaler.unscale_(optimizer)
        elif how == "step_not_optimizer":
            scaler.step("a")
        elif how == "step_twice":
            scaler.step(optimizer)
            scaler.step(optimizer)
        elif how == "update_string":
            scaler.update("a")
        elif how == "update_nan":
            scaler.update(NAN)
        elif how == "update_int_tensor":
            scaler.update(library.tensor([2]))
        elif how == "update_two_values":
            scaler.update(library.tensor([2.0, 3.0]))
        elif how == "load_state_dict_empty":
            scaler.load_state_dict({})
        return _normalized(scaler.get_scale())

    for how in (
        "scale_string",
        "scale_list",
        "scale_number",
        "unscale_twice",
        "step_not_optimizer",
        "step_twice",
        "update_string",
        "update_nan",
        "update_int_tensor",
        "update_two_values",
        "load_state_dict_empty",
    ):
        yield Case("amp.GradScaler", how, lambda library, how=how: misuse(library, how))

    def decorated(library: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        decorator = getattr(library.amp, name)
        wrapped = decorator(*args, **kwargs)
        if callable(wrapped) and not args:
            wrapped = wrapped(lambda ctx, x: x)
        return "<decorated>"

    for name in ("custom_fwd", "custom_bwd"):
        for kind, args, kwargs in (
            ("valid", (), {"device_type": "cpu"}),
            ("no_device_type", (), {}),
            ("device_type=unknown", (), {"device_type": "nonexistent"}),
            ("device_type=number", (), {"device_type": 1}),
            ("not_callable", (5,), {"device_type": "cpu"}),
        ):
            if name == "custom_bwd" and "device_type" not in kwargs:
                continue
            yield Case(
                f"amp.{name}",
                kind,
                lambda library, name=name, args=args, kwargs=kwargs: decorated(
                    library, name, *args, **kwargs
                ),
            )


# ------------------------------------------------------------------------ distributed
def distributed_cases() -> Iterator[Case]:
    """Calls before any process group exists, and bad arguments to init_process_group."""

    def call(name: str, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        def run(library: Any) -> Any:
            built_args = [build(value, library) for value in args]
            return _normalized(getattr(library.distributed, name)(*built_args, **kwargs))

        return run

    tensor = Array(np.ones(2, np.float32))
    calls: dict[str, tuple] = {
        "all_gather": ([tensor, tensor], tensor),
        "all_gather_into_tensor": (Array(np.ones(4, np.float32)), tensor),
        "all_gather_object": ([None], 1),
        "all_reduce": (tensor,),
        "barrier": (),
        "broadcast": (tensor, 0),
        "broadcast_object_list": ([1], 0),
        "gather": (tensor,),
        "get_backend": (),
        "get_rank": (),
        "get_world_size": (),
        "irecv": (tensor, 0),
        "isend": (tensor, 0),
        "recv": (tensor, 0),
        "send": (tensor, 0),
        "reduce": (tensor, 0),
        "reduce_scatter_tensor": (tensor, Array(np.ones(4, np.float32))),
        "scatter": (tensor,),
        "new_group": (),
        "destroy_process_group": (),
        "is_initialized": (),
        "is_available": (),
        "is_mpi_available": (),
    }
    for name, args in calls.items():
        yield Case(f"distributed.{name}", "before_init", call(name, *args))
    for name in ("all_reduce", "broadcast", "send", "isend", "irecv", "recv", "reduce"):
        yield Case(f"distributed.{name}", "not_a_tensor", call(name, "a", *calls[name][1:]))
    # init_process_group: each bad argument is refused before any rendezvous is tried
    for kind, kwargs in (
        ("backend=unknown", {"backend": "nonexistent", "rank": 0, "world_size": 1}),
        ("backend=number", {"backend": 1, "rank": 0, "world_size": 1}),
        ("timeout=number", {"backend": "gloo", "timeout": 5, "rank": 0, "world_size": 1}),
        ("timeout=string", {"backend": "gloo", "timeout": "a", "rank": 0, "world_size": 1}),
        ("init_method_and_store", {"backend": "gloo", "init_method": "env://", "store": object()}),
        ("store_without_rank", {"backend": "gloo", "store": object()}),
    ):
        yield Case(
            "distributed.init_process_group",
            kind,
            lambda library, kwargs=kwargs: library.distributed.init_process_group(**kwargs),
        )
    for kind, value in (
        ("valid", "gloo"),
        ("unknown", "nonexistent"),
        ("number", 1),
        ("upper", "GLOO"),
    ):
        yield Case(
            "distributed.Backend",
            kind,
            lambda library, value=value: str(library.distributed.Backend(value)),
        )
    for name in ("DistError", "DistBackendError"):
        yield Case(
            f"distributed.{name}",
            "valid",
            lambda library, name=name: str(getattr(library.distributed, name)("message")),
        )
    yield Case(
        "distributed.ReduceOp",
        "valid",
        lambda library: sorted(
            name
            for name in ("SUM", "PRODUCT", "MIN", "MAX")
            if hasattr(library.distributed.ReduceOp, name)
        ),
    )
    yield Case(
        "distributed.GroupMember",
        "valid",
        lambda library: library.distributed.GroupMember.WORLD is None,
    )


# ---------------------------------------------------------------------------- methods
def _tensor(*shape: int) -> Array:
    return Array(np.ones(shape, np.float32))


def _linear(library: Any) -> Any:
    return library.nn.Linear(3, 2)


def _sgd(library: Any) -> Any:
    return _optimizer(library)


def _step_lr(library: Any) -> Any:
    return library.optim.lr_scheduler.StepLR(_optimizer(library), 2)


def _grad_scaler(library: Any) -> Any:
    return library.amp.GradScaler("cpu")


_PARAMETER = Built(lambda library: library.nn.Parameter(library.ones(2)), "Parameter")
_LAYER = Built(lambda library: library.nn.Linear(2, 2), "Linear")
_OTHER_PARAMETER = Built(lambda library: library.ones(2, requires_grad=True), "leaf")
_SAME_PARAMETER = Built(lambda library: _optimizer(library).param_groups[0]["params"][0], "its own")
_FLOAT64 = Built(lambda library: library.float64, "float64")
_INT64 = Built(lambda library: library.int64, "int64")
_WRONG_SHAPES = Built(
    lambda library: {"weight": library.ones(1), "bias": library.ones(2)}, "wrong shapes"
)
_EXTRA_KEY = Built(
    lambda library: {**library.nn.Linear(3, 2).state_dict(), "extra": library.ones(1)}, "extra"
)
_TWO_GROUPS = Built(
    lambda library: {"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]}, "2 groups"
)
_TWO_PARAMS = Built(
    lambda library: {
        "state": {},
        "param_groups": [{**_optimizer(library).state_dict()["param_groups"][0], "params": [0, 1]}],
    },
    "2 params",
)

# (owner, object's builder, {method: [(kind, args, kwargs)]}): every method each class shares
# with PyTorch's, called with bad arguments on a small object.
METHOD_CASES: list[tuple[str, Callable[[Any], Any], dict[str, list[tuple[str, tuple, dict]]]]] = [
    (
        "nn.Module",
        _linear,
        {
            "add_module": [
                ("valid", ("extra", _LAYER), {}),
                ("name=number", (1, _LAYER), {}),
                ("name=dotted", ("a.b", _LAYER), {}),
                ("name=empty", ("", _LAYER), {}),
                ("name=existing_attribute", ("weight", _LAYER), {}),
                ("module=string", ("extra", "a"), {}),
            ],
            "register_module": [
                ("valid", ("extra", _LAYER), {}),
                ("name=dotted", ("a.b", _LAYER), {}),
                ("module=tensor", ("extra", _tensor(2)), {}),
            ],
            "apply": [("valid", (print,), {}), ("fn=string", ("a",), {})],
            "bfloat16": [("valid", (), {}), ("argument", (1,), {})],
            "double": [("valid", (), {}), ("argument", (1,), {})],
            "float": [("valid", (), {}), ("argument", (1,), {})],
            "half": [("valid", (), {}), ("argument", (1,), {})],
            "cpu": [("valid", (), {}), ("argument", (1, 2), {})],
            "cuda": [("without_cuda", (), {})],
            "buffers": [("valid", (), {}), ("recurse=string", ("a",), {})],
            "children": [("valid", (), {}), ("argument", (1,), {})],
            "modules": [("valid", (), {}), ("argument", (1,), {})],
            "parameters": [("valid", (), {}), ("recurse=string", ("a",), {})],
            "named_buffers": [("valid", (), {}), ("prefix=number", (), {"prefix": 1})],
            "named_children": [("valid", (), {}), ("argument", (1,), {})],
            "named_modules": [("valid", (), {}), ("prefix=number", (), {"prefix": 1})],
            "named_parameters": [("valid", (), {}), ("prefix=number", (), {"prefix": 1})],
            "eval": [("valid", (), {}), ("argument", (1,), {})],
            "train": [
                ("valid", (False,), {}),
                ("mode=string", ("a",), {}),
                ("mode=none", (None,), {}),
                ("mode=number", (1,), {}),
            ],
            "extra_repr": [("valid", (), {}), ("argument", (1,), {})],
            "get_buffer": [
                ("target=nonexistent", ("nonexistent",), {}),
                ("target=parameter", ("weight",), {}),
                ("target=number", (1,), {}),
            ],
            "get_parameter": [
                ("valid", ("weight",), {}),
                ("target=nonexistent", ("nonexistent",), {}),
                ("target=nested_nonexistent", ("a.b",), {}),
                ("target=number", (1,), {}),
            ],
            "get_submodule": [
                ("valid", ("",), {}),
                ("target=nonexistent", ("nonexistent",), {}),
                ("target=parameter", ("weight",), {}),
                ("target=number", (1,), {}),
            ],
            "load_state_dict": [
                ("empty", ({},), {}),
                ("empty_not_strict", ({},), {"strict": False}),
                ("wrong_shapes", (_WRONG_SHAPES,), {}),
                ("wrong_shapes_not_strict", (_WRONG_SHAPES,), {"strict": False}),
                ("unexpected_key", (_EXTRA_KEY,), {}),
                ("not_a_mapping", ("a",), {}),
                ("none", (None,), {}),
            ],
            "register_buffer": [
                ("valid", ("extra", _tensor(2)), {}),
                ("name=dotted", ("a.b", _tensor(2)), {}),
                ("name=empty", ("", _tensor(2)), {}),
                ("name=number", (1, _tensor(2)), {}),
                ("name=existing_attribute", ("weight", _tensor(2)), {}),
                ("tensor=number", ("extra", 1.0), {}),
                ("tensor=none", ("extra", None), {}),
            ],
            "register_parameter": [
                ("valid", ("extra", _PARAMETER), {}),
                ("name=dotted", ("a.b", _PARAMETER), {}),
                ("name=empty", ("", _PARAMETER), {}),
                ("name=number", (1, _PARAMETER), {}),
                ("name=existing_attribute", ("weight", _PARAMETER), {}),
                ("param=tensor", ("extra", _tensor(2)), {}),
                ("param=number", ("extra", 1.0), {}),
            ],
            "register_forward_hook": [("hook=string", ("a",), {})],
            "register_forward_pre_hook": [("hook=string", ("a",), {})],
            "register_full_backward_hook": [("hook=string", ("a",), {})],
            "register_full_backward_pre_hook": [("hook=string", ("a",), {})],
            "requires_grad_": [
                ("valid", (False,), {}),
                ("requires_grad=string", ("a",), {}),
                ("requires_grad=none", (None,), {}),
            ],
            "state_dict": [("valid", (), {}), ("prefix=number", (), {"prefix": 1})],
            "to": [
                ("valid", (_FLOAT64,), {}),
                ("dtype=int64", (_INT64,), {}),
                ("device=unknown", ("nonexistent",), {}),
                ("string", ("a",), {}),
                ("number", (1.5,), {}),
                ("no_argument", (), {}),
            ],
            "type": [("valid", (_FLOAT64,), {}), ("dst_type=number", (1,), {})],
            "zero_grad": [("valid", (), {}), ("set_to_none=false", (False,), {})],
        },
    ),
    (
        "nn.Module",
        lambda library: library.nn.Module(),
        {"forward": [("base_class", (_tensor(2),), {}), ("base_class_no_input", (), {})]},
    ),
    (
        "optim.Optimizer",
        _sgd,
        {
            "add_param_group": [
                ("valid", ({"params": [_OTHER_PARAMETER]},), {}),
                ("param_group=list", ([_OTHER_PARAMETER],), {}),
                ("without_params", ({"lr": 0.1},), {}),
                ("overlapping", ({"params": [_SAME_PARAMETER]},), {}),
                ("params=set", ({"params": {"a"}},), {}),
                ("params=non_leaf", ({"params": [Built(lambda lib: lib.ones(2) * 2)]},), {}),
                ("lr=negative", ({"params": [_OTHER_PARAMETER], "lr": -1.0},), {}),
            ],
            "load_state_dict": [
                ("empty", ({},), {}),
                ("not_a_dict", ("a",), {}),
                ("group_count_mismatch", (_TWO_GROUPS,), {}),
                ("param_count_mismatch", (_TWO_PARAMS,), {}),
            ],
            "state_dict": [("valid", (), {}), ("argument", (1,), {})],
            "step": [("valid", (), {}), ("closure=string", ("a",), {})],
            "zero_grad": [("valid", (), {}), ("set_to_none=false", (False,), {})],
        },
    ),
    (
        "lr_scheduler.LRScheduler",
        _step_lr,
        {
            "get_last_lr": [("valid", (), {}), ("argument", (1,), {})],
            "get_lr": [("valid", (), {}), ("argument", (1,), {})],
            "load_state_dict": [("empty", ({},), {}), ("not_a_dict", ("a",), {})],
            "state_dict": [("valid", (), {}), ("argument", (1,), {})],
            "step": [
                ("valid", (), {}),
                ("epoch=float", (2.5,), {}),
                ("epoch=string", ("a",), {}),
                ("epoch=negative", (-3,), {}),
            ],
        },
    ),
    (
        "amp.GradScaler",
        _grad_scaler,
        {
            "get_backoff_factor": [("valid", (), {}), ("argument", (1,), {})],
            "get_growth_factor": [("valid", (), {}), ("argument", (1,), {})],
            "get_growth_interval": [("valid", (), {}), ("argument", (1,), {})],
            "get_scale": [("valid", (), {}), ("argument", (1,), {})],
            "is_enabled": [("valid", (), {}), ("argument", (1,), {})],
            "set_backoff_factor": [("valid", (0.25,), {}), ("none", (), {})],
            "set_growth_factor": [("valid", (3.0,), {}), ("none", (), {})],
            "set_growth_interval": [("valid", (3,), {}), ("none", (), {})],
            "load_state_dict": [("empty", ({},), {}), ("not_a_dict", ("a",), {})],
            "state_dict": [("valid", (), {}), ("argument", (1,), {})],
            "scale": [("valid", (_tensor(2),), {}), ("string", ("a",), {}), ("none", (None,), {})],
            "step": [("not_an_optimizer", ("a",), {}), ("none", (None,), {})],
            "unscale_": [("not_an_optimizer", ("a",), {}), ("none", (None,), {})],
            "update": [("before_any_step", (), {}), ("new_scale=string", ("a",), {})],
        },
    ),
]


def _state_of(library: Any, obj: Any) -> Any:
    """What a method left behind: a module's parameters and buffers."""
    if isinstance(obj, library.nn.Module):
        return _summary(list(obj.state_dict().items()))
    return None


def method_cases() -> Iterator[Case]:
    for owner, make, methods in METHOD_CASES:
        for method, calls in methods.items():
            for kind, args, kwargs in calls:

                def run(library: Any, make=make, method=method, args=args, kwargs=kwargs) -> Any:
                    obj = make(library)
                    result = getattr(obj, method)(
                        *build(list(args), library), **build(kwargs, library)
                    )
                    if method.startswith("register_") and method.endswith("hook"):
                        # a hook is only called when the module runs
                        output = obj(library.ones(4, 3, requires_grad=True))
                        output.sum().backward()
                    if inspect.isgenerator(result):
                        result = list(result)
                    return _summary((result, _state_of(library, obj)))

                shown = ", ".join(
                    [_shown(value) for value in args]
                    + [f"{k}={_shown(v)}" for k, v in kwargs.items()]
                )
                yield Case(f"{owner}.{method}", kind, run, f"{owner}.{method}({shown})")


# ----------------------------------------------------------------------------- surface
NAMESPACES: dict[str, tuple[str, str]] = {
    "nn": ("lucid.nn", "torch.nn"),
    "init": ("lucid.nn.init", "torch.nn.init"),
    "nn.utils": ("lucid.nn.utils", "torch.nn.utils"),
    "optim": ("lucid.optim", "torch.optim"),
    "lr_scheduler": ("lucid.optim.lr_scheduler", "torch.optim.lr_scheduler"),
    "data": ("lucid.utils.data", "torch.utils.data"),
    "amp": ("lucid.amp", "torch.amp"),
    "distributed": ("lucid.distributed", "torch.distributed"),
}


def _module(path: str) -> Any:
    return sys.modules[path] if path in sys.modules else __import__(path, fromlist=["_"])


@functools.cache
def _shared(namespace: str) -> tuple[str, ...]:
    """Public callables lucid's namespace defines that torch's namespace has too (names it
    merely imports, such as typing helpers, are not its surface)."""
    lucid_path, torch_path = NAMESPACES[namespace]
    lucid_module, torch_module = _module(lucid_path), _module(torch_path)
    names = []
    for name in dir(lucid_module):
        if name.startswith("_") or not hasattr(torch_module, name):
            continue
        value = getattr(lucid_module, name)
        if inspect.ismodule(value) or not callable(value):
            continue
        if not getattr(value, "__module__", lucid_path).startswith(lucid_path):
            continue
        names.append(name)
    return tuple(sorted(names))


def _method_owners() -> dict[str, tuple[type, type]]:
    """The base classes whose methods are targets too."""
    return {
        "nn.Module": (lucid.nn.Module, torch.nn.Module),
        "optim.Optimizer": (lucid.optim.Optimizer, torch.optim.Optimizer),
        "lr_scheduler.LRScheduler": (
            lucid.optim.lr_scheduler.LRScheduler,
            torch.optim.lr_scheduler.LRScheduler,
        ),
        "amp.GradScaler": (lucid.amp.GradScaler, torch.amp.GradScaler),
    }


def _public_names(owner: type) -> set[str]:
    return {name for name in dir(owner) if not name.startswith("_")}


def surface() -> list[str]:
    """Every target the coverage test expects: each shared callable, each shared module's
    forward, and each method the base classes share."""
    found = []
    for owner, (lucid_class, torch_class) in _method_owners().items():
        for name in sorted(_public_names(lucid_class) & _public_names(torch_class)):
            if callable(inspect.getattr_static(lucid_class, name)):
                found.append(f"{owner}.{name}")
    for namespace in NAMESPACES:
        for name in _shared(namespace):
            found.append(f"{namespace}.{name}")
            if namespace == "nn":
                value = getattr(lucid.nn, name)
                if isinstance(value, type) and issubclass(value, lucid.nn.Module):
                    found.append(f"nn.{name}.forward")
    return found


NO_FORWARD = "has no forward of its own"
# Targets with no generated case, and why.
EXCLUDED: dict[str, str] = {
    "nn.ModuleList.forward": "a container: " + NO_FORWARD,
    "nn.ModuleDict.forward": "a container: " + NO_FORWARD,
    "nn.ParameterList.forward": "a container: " + NO_FORWARD,
    "nn.ParameterDict.forward": "a container: " + NO_FORWARD,
    "nn.RNNBase.forward": "a base class torch gives no forward",
    "nn.RNNCellBase.forward": "a base class torch gives no forward",
    "nn.SyncBatchNorm.forward": (
        "needs a process group in training: tests/nn/test_sync_batchnorm.py runs ranks"
    ),
    "nn.NLLLoss2d.forward": "NLLLoss's forward, swept under nn.NLLLoss.forward",
    "nn.UninitializedParameter": "a lazy module's placeholder, built by the lazy modules swept",
    "nn.UninitializedBuffer": "a lazy module's placeholder, built by the lazy modules swept",
    "distributed.ProcessGroup": "built by init_process_group only: needs ranks",
    "distributed.Work": "returned by collectives only: needs ranks",
}


@functools.cache
def cases() -> tuple[Case, ...]:
    generators = (
        module_cases,
        _init_cases,
        _utils_cases,
        optimizer_cases,
        scheduler_cases,
        data_cases,
        amp_cases,
        distributed_cases,
        method_cases,
    )
    return tuple(case for generator in generators for case in generator())


# ------------------------------------------------------------------------------ calling
def _autocast_state(library: Any) -> tuple[bool, Any, bool]:
    return (
        library.is_autocast_enabled("cpu"),
        library.get_autocast_dtype("cpu"),
        library.is_autocast_cache_enabled(),
    )


def _run(case: Case, library: Any) -> tuple[str, Any]:
    _RUN_STATE.clear()
    # an autocast whose __enter__ raises halfway leaves its flags set, in both libraries
    enabled, dtype, cache_enabled = _autocast_state(library)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", case.run(library)
    except Exception as error:  # noqa: BLE001  (every exception is an outcome)
        return "error", error
    finally:
        library.set_autocast_enabled("cpu", enabled)
        library.set_autocast_dtype("cpu", dtype)
        library.set_autocast_cache_enabled(cache_enabled)


def _message(error: BaseException) -> str:
    return str(error).replace("torch", "lucid").replace("Torch", "Lucid")


def _difference(actual: Any, expected: Any) -> str | None:
    if isinstance(expected, np.ndarray) or isinstance(actual, np.ndarray):
        if not (isinstance(expected, np.ndarray) and isinstance(actual, np.ndarray)):
            return f"{type(actual).__name__} where torch gives {type(expected).__name__}"
        if actual.shape != expected.shape:
            return f"shape {actual.shape} != torch's {expected.shape}"
        if actual.dtype != expected.dtype and not (
            actual.dtype == np.int64 and expected.dtype == np.uint64
        ):
            return f"dtype {actual.dtype} != torch's {expected.dtype}"
        if np.allclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True):
            return None
        return "values differ"
    if isinstance(expected, tuple | list) and isinstance(actual, tuple | list):
        if len(actual) != len(expected):
            return f"{len(actual)} results != torch's {len(expected)}"
        for one, other in zip(actual, expected, strict=True):
            difference = _difference(one, other)
            if difference:
                return difference
        return None
    if isinstance(expected, float) and isinstance(actual, int | float):
        if math.isclose(actual, expected, rel_tol=1e-5, abs_tol=1e-6) or (
            math.isnan(expected) and math.isnan(actual)
        ):
            return None
    if isinstance(expected, str) and expected.startswith("<"):
        return None  # objects of the library's own classes are not compared
    if actual != expected:
        return f"{actual!r} != torch's {expected!r}"[:160]
    return None


def classify(case: Case) -> Outcome:
    torch_status, expected = _run(case, torch)
    lucid_status, actual = _run(case, lucid)
    if lucid_status == "error":
        if _raised_from_numpy(actual, expected) or type(actual).__module__.startswith("numpy"):
            return Outcome(case.target, case.kind, "numpy", _describe(actual))
        if isinstance(actual, INTERNALS) and (
            torch_status == "ok" or _builtin_base(type(actual)) is not _builtin_base(type(expected))
        ):
            torch_side = _describe(expected) if torch_status == "error" else "answers"
            return Outcome(
                case.target, case.kind, "internal", f"{_describe(actual)}; torch: {torch_side}"
            )
    if torch_status == "error" and lucid_status == "ok":
        return Outcome(case.target, case.kind, "silent", f"torch: {_describe(expected)}")
    if torch_status == "ok" and lucid_status == "error":
        return Outcome(case.target, case.kind, "refuses", _describe(actual))
    if torch_status == "error":
        detail = f"{_describe(actual)}; torch: {_describe(expected)}"
        if _builtin_base(type(actual)) is not _builtin_base(type(expected)):
            return Outcome(case.target, case.kind, "type", detail)
        if _message(actual) != _message(expected):
            return Outcome(case.target, case.kind, "wording", detail)
        return Outcome(case.target, case.kind, "same", _describe(actual))
    difference = _difference(_normalized(actual), _normalized(expected))
    if difference:
        return Outcome(case.target, case.kind, "values", difference)
    return Outcome(case.target, case.kind, "equal", "")


@functools.cache
def outcomes_by_target() -> dict[str, tuple[Outcome, ...]]:
    grouped: dict[str, list[Outcome]] = {}
    for case in cases():
        grouped.setdefault(case.target, []).append(classify(case))
    return {target: tuple(outcomes) for target, outcomes in grouped.items()}


def _case_targets() -> list[str]:
    return sorted({case.target for case in cases()}) if TORCH_AVAILABLE else []


# -------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("name", _case_targets())
def test_bad_arguments_get_pytorchs_answer(name: str) -> None:
    """No NumPy error, escaped internal, silent answer or value difference beyond the known
    gaps; a listed gap that no longer shows fails too."""
    grad_enabled = lucid.is_grad_enabled()
    problems, seen = [], {}
    for outcome in outcomes_by_target()[name]:
        seen[outcome.kind] = outcome.category
        known = KNOWN_SURFACE_GAPS.get((name, outcome.kind))
        if outcome.category in ASSERTED and (known is None or known[0] != outcome.category):
            problems.append(f"{outcome.kind}: {outcome.category}: {outcome.detail}")
    for (target, kind), (category, _) in KNOWN_SURFACE_GAPS.items():
        if target == name and seen.get(kind) != category:
            problems.append(
                f"{kind}: listed as a known {category} gap but now {seen.get(kind)}: "
                "remove it from tests/differential_known_gaps.py"
            )
    assert lucid.is_grad_enabled() == grad_enabled
    assert not lucid.distributed.is_initialized()
    assert not lucid.is_autocast_enabled("cpu")
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_every_shared_callable_has_cases() -> None:
    """A public callable lucid shares with torch is swept or excluded with a reason."""
    swept = set(_case_targets())
    missing = [name for name in surface() if name not in swept and name not in EXCLUDED]
    assert not missing, f"public callables shared with torch with no generated case: {missing}"
    stale = sorted(name for name in EXCLUDED if name in swept or name not in surface())
    assert not stale, f"EXCLUDED names targets that are swept or not shared: {stale}"


def test_known_surface_gaps_are_reasoned() -> None:
    targets = set(_case_targets())
    for (target, kind), (category, reason) in KNOWN_SURFACE_GAPS.items():
        assert target in targets, f"KNOWN_SURFACE_GAPS names {target}, which is not swept"
        assert category in ASSERTED, f"{target} {kind}: {category} is not an asserted category"
        assert len(reason) > 20, f"{target} {kind}: give the reason"


def tally_table(outcomes: list[Outcome], seconds: float) -> str:
    counts = Counter(outcome.category for outcome in outcomes)
    by_namespace = Counter(
        target.rsplit(".", 1)[0] if target.count(".") > 1 else target.split(".")[0]
        for target in {o.target for o in outcomes}
    )
    lines = [
        f"surface fuzz: {len(outcomes)} cases over {len({o.target for o in outcomes})} targets "
        f"({seconds:.1f} s)",
        "targets per namespace: " + ", ".join(f"{k} {v}" for k, v in sorted(by_namespace.items())),
    ]
    for category in CATEGORIES:
        lines.append(f"{category:<10} {counts[category]:>6}")
    lines.append(f"known gaps listed: {len(KNOWN_SURFACE_GAPS)}")
    return "\n".join(lines)


def test_tally() -> None:
    """Prints the tally (visible with -s)."""
    started = time.perf_counter()
    outcomes = [outcome for target in outcomes_by_target().values() for outcome in target]
    print("\n" + tally_table(outcomes, time.perf_counter() - started))
    assert len(outcomes) > 1000


def main() -> None:
    started = time.perf_counter()
    outcomes = [outcome for target in outcomes_by_target().values() for outcome in target]
    print(tally_table(outcomes, time.perf_counter() - started))
    print_outcomes(outcomes, CATEGORIES, set(sys.argv[1:]))


if __name__ == "__main__":
    if not TORCH_AVAILABLE:
        sys.exit(TORCH_MISSING)
    main()
