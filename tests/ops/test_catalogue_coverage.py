"""Every public op name has a row in the op catalogue, or an entry here naming the test that
covers it, so that a new op cannot land untested.

The public op names are `lucid.ops.__all__` (what `import lucid` exposes), `lucid.linalg`'s
`__all__` (as `linalg.<name>`), `lucid.special`'s (as `special.<name>`), the public functions
of `lucid.nn.functional` and the attributes of `lucid.Tensor` bound to a function of
`lucid.ops` (operators included). A name that two namespaces bind to different functions is
qualified by the namespace (`F.softmax`, `Tensor.unfold`), since each function needs its own
test.

A catalogue row covers the name it is named after, alone or followed by a variant (`add`,
`add_alpha`, `conv2d[groups]`, `linalg.qr.Q`); of the names a row's name starts with that way
the longest wins, so `clamp_max_tensor` covers `clamp_max` and not `clamp`. A name bound to
the same function as a covered name is covered with it (`ger` is `outer`). Every other name
needs an `UNCATALOGUED` entry: the reason it has no row and the test file that covers it,
which must exist and call it.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import lucid
import lucid.linalg
import lucid.nn.functional
import lucid.special
from lucid._tensor import function_of
from tests.ops.op_catalogue import CATALOGUE

REPOSITORY = Path(__file__).resolve().parents[2]
# Row names that do not start with the name they cover: the operator's own method name.
ROW_PREFIXES = {"getitem": "__getitem__", "rdiv": "__rtruediv__"}
# Rows of the in-place forms of index writes, named `<op>_inplace`. (The nn family's
# `<activation>_inplace` rows call `<activation>(..., inplace=True)` and cover the activation.)
ROW_COVERS = {
    f"{op}_inplace": f"{op}_"
    for op in (
        "index_add",
        "index_copy",
        "index_fill",
        "index_put",
        "index_reduce",
        "masked_fill",
        "masked_scatter",
        "put",
        "scatter",
        "scatter_add",
        "scatter_reduce",
    )
}


@dataclass(frozen=True)
class Uncatalogued:
    """Why a public op name has no catalogue row, and the test file (from the repository root)
    that covers it. `call` is a regex that file must contain; by default a call of the name,
    `name(`, as a function or a method."""

    reason: str
    test: str
    call: str = ""


# ------------------------------------------------------------------------------------ reasons
RANDOM = (
    "draws random numbers, so it has no deterministic reference or gradient to check: its "
    "test compares moments, ranges and seeding with torch"
)
QUERY = "returns a Python bool or int about a tensor (no tensor result, no gradient)"
RESIZE = (
    "resizes a tensor's storage in place (not differentiable; fresh elements are "
    "uninitialised memory)"
)
HASH = "a reduction to an integer hash (not differentiable): its test compares torch's bits"
HISTOGRAM = "a histogram (integer bin counts and float edges, not differentiable)"

_RANDOM_FILLS = "tests/ops/test_random_fills.py"
_ALIASES = "tests/ops/test_aliases.py"
_RESIZE = "tests/test_resize.py"

UNCATALOGUED: dict[str, Uncatalogued] = {
    # -------------------------------------------------------------------------- random
    "bernoulli_": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "binomial": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "cauchy_": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "exponential_": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "geometric_": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "log_normal_": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "poisson": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "random_": Uncatalogued(RANDOM, _RANDOM_FILLS),
    "normal": Uncatalogued(RANDOM, "tests/ops/test_math_ops.py", r"lucid\.normal\("),
    "gumbel_softmax": Uncatalogued(RANDOM, "tests/nn/test_bags_and_folds.py"),
    # ------------------------------------------------------------ queries and storage
    "is_complex": Uncatalogued(QUERY, _ALIASES, '"is_complex"'),
    "is_conj": Uncatalogued(QUERY, _ALIASES, '"is_conj"'),
    "is_distributed": Uncatalogued(QUERY, _ALIASES, '"is_distributed"'),
    "is_neg": Uncatalogued(QUERY, _ALIASES, '"is_neg"'),
    "storage_offset": Uncatalogued(QUERY, "tests/test_tensor_layout_queries.py"),
    "resize": Uncatalogued(RESIZE, _RESIZE),
    "resize_": Uncatalogued(RESIZE, _RESIZE),
    "resize_as": Uncatalogued(RESIZE, _RESIZE),
    "resize_as_": Uncatalogued(RESIZE, _RESIZE),
    # ------------------------------------------------------ results the rows cannot hold
    "hash_tensor": Uncatalogued(HASH, "tests/ops/test_hash_tensor.py"),
    "histogramdd": Uncatalogued(HISTOGRAM, "tests/ops/test_histogramdd.py"),
}


# ------------------------------------------------------------------------------- public names
def _bound_function(value: Any) -> Any:
    """The function behind a class attribute: a property's getter, a staticmethod's function,
    the op function a method is a copy of (lucid._tensor binds copies, for method-form errors)."""
    if isinstance(value, property):
        return value.fget
    return function_of(getattr(value, "__func__", value))


def _is_op_function(value: Any) -> bool:
    module = getattr(value, "__module__", None) or ""
    return module == "lucid.ops" or module.startswith("lucid.ops.")


def _namespaces() -> dict[str, dict[str, Any]]:
    """{namespace: {name: function}} for the four namespaces of public op names."""
    functional = lucid.nn.functional
    tensor_methods: dict[str, Any] = {}
    seen: set[str] = set()
    for klass in lucid.Tensor.__mro__:  # a subclass's attribute hides its bases'
        for name, value in vars(klass).items():
            function = _bound_function(value)
            if name not in seen and _is_op_function(function):
                tensor_methods[name] = function
            seen.add(name)
    return {
        "lucid": {name: getattr(lucid, name) for name in lucid.ops.__all__},
        # lucid.nn.functional has no __all__: its public functions are those of lucid.nn and
        # lucid.ops, not the helpers it imports from elsewhere (factories, typing)
        "F": {
            name: value
            for name, value in vars(functional).items()
            if not name.startswith("_")
            and inspect.isfunction(value)
            and (_is_op_function(value) or value.__module__.startswith("lucid.nn"))
        },
        "Tensor": tensor_methods,
        "linalg": {
            name: getattr(lucid.linalg, name)
            for name in lucid.linalg.__all__
            if not inspect.isclass(getattr(lucid.linalg, name))
        },
        "special": {name: getattr(lucid.special, name) for name in lucid.special.__all__},
    }


def public_op_names() -> dict[str, Any]:
    """{public op name: its function}, names qualified where namespaces disagree."""
    namespaces = _namespaces()
    names: dict[str, Any] = {}
    for name, function in namespaces.pop("linalg").items():
        names[f"linalg.{name}"] = function
    for name, function in namespaces.pop("special").items():
        names[f"special.{name}"] = function
    bare = sorted({name for functions in namespaces.values() for name in functions})
    for name in bare:
        holders = {
            space: functions[name] for space, functions in namespaces.items() if name in functions
        }
        if len({id(function) for function in holders.values()}) == 1:
            names[name] = next(iter(holders.values()))
            continue
        for space, function in holders.items():
            names[name if space == "lucid" else f"{space}.{name}"] = function
    return names


PUBLIC = public_op_names()


def _owner(row_name: str) -> str | None:
    """The public name a row covers: the longest one its name is, or starts with before `_`,
    `[` or `.`."""
    if row_name in ROW_COVERS:
        return ROW_COVERS[row_name]
    for prefix, name in ROW_PREFIXES.items():
        if row_name.startswith(prefix):
            row_name = name + row_name[len(prefix) :]
    best = None
    for name in PUBLIC:
        matches = row_name == name or (row_name.startswith(name) and row_name[len(name)] in "_[.")
        if matches and (best is None or len(name) > len(best)):
            best = name
    return best


def rows_by_name() -> dict[str, list[str]]:
    """{public name: the catalogue rows that cover it}."""
    covered: dict[str, list[str]] = {}
    for row in CATALOGUE:
        owner = _owner(row.name)
        if owner is not None:
            covered.setdefault(owner, []).append(row.name)
    return covered


ROWS = rows_by_name()


def aliases() -> dict[str, str]:
    """{public name without a row: the name with a row bound to the same function}."""
    by_function = {id(PUBLIC[name]): name for name in sorted(ROWS)}
    return {
        name: by_function[id(function)]
        for name, function in PUBLIC.items()
        if name not in ROWS and id(function) in by_function
    }


ALIASES = aliases()


def _call_pattern(name: str) -> str:
    bare = name.rsplit(".", 1)[-1]
    return rf"(?<![\w]){re.escape(bare)}\s*\("


# ---------------------------------------------------------------------------------- tests
def test_every_public_op_name_has_a_row_or_a_reason() -> None:
    missing = sorted(set(PUBLIC) - set(ROWS) - set(ALIASES) - set(UNCATALOGUED))
    assert not missing, (
        f"{len(missing)} public op names have no catalogue row (tests/ops/catalogue_*.py) and "
        f"no entry in UNCATALOGUED: {' '.join(missing)}"
    )


def test_no_uncatalogued_entry_is_stale() -> None:
    stale = sorted(name for name in UNCATALOGUED if name not in PUBLIC)
    covered = sorted(name for name in UNCATALOGUED if name in ROWS or name in ALIASES)
    assert not stale, f"UNCATALOGUED names that are no public op name: {' '.join(stale)}"
    assert not covered, f"UNCATALOGUED names that now have a row: {' '.join(covered)}"


@pytest.mark.parametrize("name", sorted(UNCATALOGUED))
def test_uncatalogued_name_is_called_by_its_test(name: str) -> None:
    entry = UNCATALOGUED[name]
    path = REPOSITORY / entry.test
    assert path.is_file(), f"{name}: its test {entry.test} does not exist"
    assert path.resolve() != Path(__file__).resolve(), f"{name}: this file tests no op"
    pattern = entry.call or _call_pattern(name)
    assert re.search(pattern, path.read_text()), (
        f"{name}: {entry.test} does not call it (no match for {pattern!r})"
    )


def test_every_row_named_in_row_covers_exists() -> None:
    names = {row.name for row in CATALOGUE}
    stale = sorted(set(ROW_COVERS) - names)
    assert not stale, f"ROW_COVERS names rows the catalogue no longer has: {' '.join(stale)}"


def test_name_matching_finds_the_longest_public_name() -> None:
    assert _owner("clamp_max_tensor") == "clamp_max"
    assert _owner("clamp_tensor") == "clamp"
    assert _owner("add_") == "add_"
    assert _owner("index_add_inplace") == "index_add_"
    assert _owner("celu_inplace") == "celu"
    assert _owner("conv2d[groups]") == "conv2d"
    assert _owner("linalg.qr.Q") == "linalg.qr"
    assert _owner("getitem_int") == "__getitem__"
    assert _owner("addition") is None
