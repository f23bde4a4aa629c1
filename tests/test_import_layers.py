"""The import arrows of DESIGN.md: dtypes, utils.hooks <- _tensor <- autograd <- ops <- nn, optim,
debug; the engine knows no op; lucid never needs torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import lucid

PACKAGE = Path(lucid.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, top_level_only: bool = False) -> list[tuple[str, int]]:
    """(imported module, line) for every import statement; `from a import b` yields a and a.b."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _module_name(path).rsplit(".", node.level)[0]
                base = f"{package}.{node.module}" if node.module else package
            else:
                base = node.module
            found.append((base, node.lineno))
            found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return found


def _lucid_imports(path: Path, top_level_only: bool = False) -> list[tuple[str, int]]:
    return [
        (name, line)
        for name, line in _imports(path, top_level_only)
        if name == "lucid" or name.startswith("lucid.")
    ]


def _is_within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


def _python_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.py")) if directory.is_dir() else []


def test_dtypes_imports_nothing_from_lucid_but_hooks():
    allowed = ("lucid.utils.hooks",)
    bad = [
        (name, line)
        for name, line in _lucid_imports(PACKAGE / "dtypes.py")
        if not any(_is_within(name, module) for module in allowed)
    ]
    assert bad == []


def test_hooks_imports_nothing_from_lucid_but_dtypes():
    allowed = ("lucid.dtypes",)
    bad = [
        (name, line)
        for name, line in _lucid_imports(PACKAGE / "utils" / "hooks.py")
        if not any(_is_within(name, module) for module in allowed)
    ]
    assert bad == []


def test_tensor_module_top_imports_only_dtypes_and_hooks():
    """Reaching lucid.ops, factories or autograd from _tensor must be a late import."""
    path = PACKAGE / "_tensor.py"
    tree = ast.parse(path.read_text())
    first_class = next(node.lineno for node in tree.body if isinstance(node, ast.ClassDef))
    allowed = ("lucid.dtypes", "lucid.utils.hooks")
    bad = [
        (name, line)
        for name, line in _lucid_imports(path, top_level_only=True)
        if line < first_class
        and not any(_is_within(name, module) for module in allowed)
        and name != "lucid"
    ]
    assert bad == []


@pytest.mark.parametrize("module", ["engine.py", "graph.py"])
def test_engine_and_graph_never_import_ops(module):
    bad = [
        (name, line)
        for name, line in _lucid_imports(PACKAGE / "autograd" / module)
        if _is_within(name, "lucid.ops")
    ]
    assert bad == []


def test_autograd_reaches_ops_only_through_late_imports():
    bad = []
    for path in _python_files(PACKAGE / "autograd"):
        for name, line in _lucid_imports(path, top_level_only=True):
            if _is_within(name, "lucid.ops"):
                bad.append((path.name, name, line))
    assert bad == []


def test_ops_never_import_engine_or_graph():
    bad = []
    for path in _python_files(PACKAGE / "ops"):
        for name, line in _lucid_imports(path):
            if _is_within(name, "lucid.autograd.engine") or _is_within(
                name, "lucid.autograd.graph"
            ):
                bad.append((path.name, name, line))
    assert bad == []


UPPER_LAYERS = ("nn", "optim", "debug")


def _engine_internals_used(path: Path) -> list[tuple[str, str, int]]:
    """Every import or attribute use of the engine, the graph module or SavedTensor."""
    bad = []
    for name, line in _lucid_imports(path):
        if _is_within(name, "lucid.autograd.engine") or _is_within(name, "lucid.autograd.graph"):
            bad.append((path.name, name, line))
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute):
            owner = node.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else None
            owner_name = owner.id if isinstance(owner, ast.Name) else owner_name
            if node.attr == "SavedTensor" or (
                owner_name == "autograd" and node.attr in ("engine", "graph")
            ):
                bad.append((path.name, node.attr, node.lineno))
        elif isinstance(node, ast.Name) and node.id == "SavedTensor":
            bad.append((path.name, node.id, node.lineno))
    return bad


def test_upper_layers_never_use_engine_graph_or_saved_tensor():
    # Covers every module of lucid.nn, lucid.optim and lucid.debug as they come to exist.
    bad = []
    for package in UPPER_LAYERS:
        for path in _python_files(PACKAGE / package):
            bad += _engine_internals_used(path)
    assert bad == []


def test_engine_internals_check_flags_each_kind_of_use(tmp_path):
    module = tmp_path / "uses_internals.py"
    module.write_text(
        "from lucid.autograd.engine import run_backward\n"
        "import lucid\n"
        "graph = lucid.autograd.graph\n"
        "saved = SavedTensor\n"
    )
    found = {name for _, name, _ in _engine_internals_used(module)}
    assert {"lucid.autograd.engine", "graph", "SavedTensor"} <= found


def _op_class_names() -> set[str]:
    names = set()
    for path in _python_files(PACKAGE / "ops"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
    return names


def test_engine_names_no_op_class():
    op_classes = _op_class_names()
    assert {"Mul", "Exp", "Sum"} <= op_classes  # the scan sees the op families
    tree = ast.parse((PACKAGE / "autograd" / "engine.py").read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in op_classes:
            bad.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr in op_classes:
            bad.append((node.attr, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in op_classes or node.value.endswith("Backward0"):
                bad.append((node.value, node.lineno))
    assert bad == []


def test_import_lucid_works_without_torch():
    # A finder that refuses torch stands in for an environment where it is not installed.
    code = (
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is not installed')\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "import lucid\n"
        "x = lucid.tensor([1.0, 2.0], requires_grad=True)\n"
        "(x * x).sum().backward()\n"
        "assert x.grad.tolist() == [2.0, 4.0]\n"
        "assert not any(m == 'torch' or m.startswith('torch.') for m in sys.modules), 'torch'\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_import_lucid_does_not_import_torch():
    code = "import sys, lucid; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_lucid_source_never_imports_torch():
    bad = []
    for path in _python_files(PACKAGE):
        for name, line in _imports(path):
            if _is_within(name, "torch"):
                bad.append((str(path.relative_to(PACKAGE)), line))
    assert bad == []
