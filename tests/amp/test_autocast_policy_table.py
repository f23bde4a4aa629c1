"""The autocast policy table and the ops agree: each composite it names is decorated with
`autocast_op`, each decorated op is in it, and the one hand-written prologue forwards its
function's every parameter."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import lucid
import lucid.ops
from lucid._core.function import Function
from lucid.amp import autocast_mode
from lucid.ops._common import autocast_op

_DECORATED_CODE = autocast_op(lambda: None).__code__
_OPS_DIRECTORY = Path(lucid.ops.__file__).parent
# A prologue that must stay hand-written: max_pool3d is on the float32 list only without
# indices (with them it is another op in PyTorch).
_PROLOGUES = {"max_pool3d"}


def _is_autocast_op(value: object) -> bool:
    return getattr(value, "__code__", None) is _DECORATED_CODE


def _op_modules() -> list:
    names = [info.name for info in pkgutil.iter_modules(lucid.ops.__path__)]
    return [importlib.import_module(f"lucid.ops.{name}") for name in names]


def test_every_composite_in_the_policy_table_is_an_autocast_op():
    unwrapped = [
        f"{key.__module__}.{key.__name__}"
        for key in autocast_mode._POLICIES
        if not (isinstance(key, type) and issubclass(key, Function))
        and not _is_autocast_op(key)
        and key.__name__ not in _PROLOGUES
    ]
    assert unwrapped == []


def test_every_autocast_op_has_a_policy():
    missing = [
        f"{module.__name__}.{name}"
        for module in _op_modules()
        for name, value in vars(module).items()
        if _is_autocast_op(value)
        and value.__module__ == module.__name__
        and value not in autocast_mode._POLICIES
    ]
    assert missing == []


def test_autocast_op_keeps_the_signature_and_name():
    assert lucid.matmul.__name__ == "matmul"
    assert inspect.signature(lucid.quantile) == inspect.signature(lucid.quantile.__wrapped__)
    assert "interpolation" in inspect.signature(lucid.quantile).parameters


def _prologues() -> list[tuple[str, ast.FunctionDef, ast.Call]]:
    found = []
    for path in sorted(_OPS_DIRECTORY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("autocast.run"):
                    found.append((path.name, node, call))
    return found


def test_only_the_listed_prologues_are_hand_written():
    assert sorted(node.name for _, node, _ in _prologues()) == sorted(_PROLOGUES)


def test_each_hand_written_prologue_forwards_every_parameter_in_order():
    for file, node, call in _prologues():
        arguments = node.args
        assert arguments.vararg is None and arguments.kwarg is None, (file, node.name)
        positional = [argument.arg for argument in arguments.posonlyargs + arguments.args]
        forwarded = [ast.unparse(value) for value in call.args]
        assert forwarded[0] == node.name, (file, node.name)
        assert forwarded[1:] == positional[: len(forwarded) - 1], (file, node.name)
        rest = positional[len(forwarded) - 1 :] + [a.arg for a in arguments.kwonlyargs]
        keywords = [(keyword.arg, ast.unparse(keyword.value)) for keyword in call.keywords]
        assert keywords == [(name, name) for name in rest], (file, node.name)
