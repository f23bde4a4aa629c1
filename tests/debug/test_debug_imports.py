"""lucid.debug's modules import one another one way: no cycle, not even through a late import."""

from __future__ import annotations

import ast
from pathlib import Path

import lucid.debug

DEBUG = Path(lucid.debug.__file__).resolve().parent


def _debug_imports(path: Path) -> set[str]:
    """The lucid.debug modules `path` imports anywhere in its body (late imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("lucid.debug.") and (DEBUG / f"{name[12:]}.py").is_file():
                found.add(name[12:])
    return found


def test_debug_modules_form_no_import_cycle():
    graph = {path.stem: _debug_imports(path) - {path.stem} for path in DEBUG.glob("*.py")}
    graph.pop("__init__")
    assert {"replay", "repro", "detector"} <= set(graph)
    cycles = []

    def visit(module: str, trail: tuple[str, ...]) -> None:
        for imported in sorted(graph.get(module, ())):
            if imported in trail:
                cycles.append(trail[trail.index(imported) :] + (imported,))
            else:
                visit(imported, trail + (imported,))

    for module in sorted(graph):
        visit(module, (module,))
    assert cycles == []


def test_replay_imports_repro_and_repro_not_replay():
    assert "repro" in _debug_imports(DEBUG / "replay.py")
    assert "replay" not in _debug_imports(DEBUG / "repro.py")
