"""The import arrows of docs/design.md, by module: _core <- ops, factories <- _legacy_types <-
_tensor <- the autograd tools, nn, optim, utils, debug; every import inside a function listed
with its reason, and no import cycle but through those; the engine knows no op; lucid never
needs torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import lucid

PACKAGE = Path(lucid.__file__).resolve().parent

# Every import of a lucid module inside a function or class body, as (importer, imported
# module): anything else is imported at the module's top. Three reasons keep one there.
#
# A cycle: the imported module imports the importer at its top, so this import must wait for
# the call. docs/design.md allows one kind: a function body (mostly a backward) calling a later
# op family, which builds on the earlier one.
CYCLE_LATE_IMPORTS = {
    # A view written in place or used after its base was written: the view nodes are
    # Functions, and Function builds on the tensor (taken only by such views).
    ("lucid._core.function", "lucid._core.views"): "rebases a view written in place",
    ("lucid._core.tensor", "lucid._core.views"): "refreshes a stale view's grad_fn",
    ("lucid.ops._common", "lucid.ops.fills"): "apply_inplace clones the value it overwrites",
    ("lucid.ops.arithmetic", "lucid.ops.pointwise"): "backward bodies: where, log, isnan",
    ("lucid.ops.broadcast", "lucid.ops.reduction"): "sum_to reduces with sum",
    ("lucid.ops.broadcast", "lucid.ops.shape"): "sum_to reshapes",
    ("lucid.ops.fills", "lucid.ops.reduction"): "a backward sums",
    ("lucid.ops.reduction", "lucid.ops.cumulative"): "prod's backward: exclusive cumprods",
    ("lucid.ops.reduction", "lucid.ops.joining"): "prod's backward concatenates",
    ("lucid.ops.shape", "lucid.ops.indexing"): (
        "movedim, narrow and repeat_interleave build on Alias, Slice and index_select"
    ),
    ("lucid.ops.shape", "lucid.ops.reduction"): "a backward sums",
    # A torch model gets the torch detector, a NaNDetector subclass in the torch extra.
    ("lucid.debug.detector", "lucid.debug.torch._detector"): "the torch detector subclasses it",
}
# On first use: a part that `import lucid` (or the importer's own import) should not load, a
# heavy family or an optional extra (torch, MPI).
FIRST_USE_LATE_IMPORTS = {
    ("lucid._tensor", "lucid.ops.decompositions"): "the matrix functions' family, on first call",
    ("lucid._tensor", "lucid.ops.spectral"): "the FFT family (Tensor.stft/istft), on first call",
    ("lucid.ops.spectral", "lucid.ops.sampling"): "stft's centre padding, on first call",
    ("lucid._process", "lucid._inductor"): "torch._inductor's option tables, when compiling",
    ("lucid._process", "lucid._inductor.config"): "torch._inductor's option table, when compiling",
    ("lucid._process", "lucid._dynamo.recording"): "lucid.compile's recorder, when compiling",
    ("lucid.debug.cli", "lucid.debug.torch._cli"): "the torch extra, for a torch program",
    ("lucid.debug.cli", "lucid.debug.torch._repro"): "the torch extra, for a torch reproducer",
    ("lucid.debug.grad_norm", "lucid.debug.torch._grad_norm"): "the torch extra, for torch tensors",
    ("lucid.autograd.gradcheck", "lucid.autograd.forward_ad"): "check_forward_ad, when asked",
    ("lucid.autograd.functional", "lucid.autograd.forward_ad"): "a forward-mode jacobian",
    ("lucid.func._transforms", "lucid.autograd.forward_ad"): "jvp runs forward mode",
}
# A failed lookup in a torch-mirroring namespace loads the table of why lucid lacks torch's name.
REASON_GIVING = """
    lucid lucid._dynamo lucid._inductor lucid.accelerator lucid.autograd lucid.autograd.graph
    lucid.autograd.profiler
    lucid.backends lucid.cpu lucid.cuda
    lucid.cuda.amp lucid.distributed lucid.func lucid.jit lucid.linalg lucid.nn lucid.nn.attention
    lucid.nn.functional lucid.nn.parallel lucid.nn.utils lucid.optim lucid.profiler lucid.testing
    lucid.utils lucid.utils.benchmark lucid.utils.checkpoint lucid.utils.data lucid.utils.hooks
    lucid.utils.tensorboard
"""
FIRST_USE_LATE_IMPORTS.update(
    {
        (module, "lucid._absent"): "the reasons, on a failed lookup"
        for module in REASON_GIVING.split()
    }
)
LATE_IMPORTS = CYCLE_LATE_IMPORTS | FIRST_USE_LATE_IMPORTS

# Each layer and the layers it may import; a module belongs to the first prefix it matches.
LAYERS = {
    "lucid._core": {"lucid._core"},
    "lucid.ops": {"lucid._core", "lucid.ops", "lucid.factories"},
    "lucid.factories": {"lucid._core"},
    "lucid._tensor": {
        "lucid._core",
        "lucid.ops",
        "lucid.factories",
        "lucid._tensor_str",
        "lucid._legacy_types",
    },
    "lucid._legacy_types": {"lucid._core", "lucid.ops", "lucid.factories"},
    "lucid._tensor_str": {"lucid._core"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Nodes under `if TYPE_CHECKING:`: annotations only, never run."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            if node.test.id == "TYPE_CHECKING":
                skipped |= {id(inner) for inner in ast.walk(node)}
    return skipped


def _owning_module(name: str) -> str | None:
    """The lucid module an imported dotted name lives in (a module, or a name in one)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path, module: str | None = None) -> list[tuple[str, int, bool]]:
    """(imported lucid module, line, is_late) for every import that runs; `from a import b`
    names a.b when b is a module, else a. Late means inside a function or class body."""
    module = module or _module_name(path)
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped = _type_checking_nodes(tree)
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{node.module}" if node.module else package
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        is_late = id(node) not in top_level and not _is_module_level_block(tree, node)
        for name in names:
            owner = _owning_module(name) if _is_within(name, "lucid") else None
            if owner is not None and owner != module:
                found.append((owner, node.lineno, is_late))
    return found


def _is_module_level_block(tree: ast.Module, target: ast.AST) -> bool:
    """Whether an import sits in a module-level try/if block (it runs at import time)."""
    for node in tree.body:
        if isinstance(node, ast.Try | ast.If) and any(inner is target for inner in ast.walk(node)):
            return True
    return False


IMPORTS = {module: _imports(path) for module, path in MODULES.items()}


def _layer_of(module: str) -> str | None:
    for layer in LAYERS:
        if _is_within(module, layer):
            return layer
    return None


def test_the_scan_sees_the_layers():
    assert {"lucid._core.engine", "lucid._core.sentinel", "lucid.ops.arithmetic"} <= set(MODULES)
    function_imports = {(name, is_late) for name, _, is_late in IMPORTS["lucid._core.function"]}
    assert ("lucid._core.tensor", False) in function_imports
    # Annotation-only imports are not arrows; function bodies' imports are late ones.
    assert "lucid._tensor" not in {name for name, _ in function_imports}
    assert ("lucid.ops.pointwise", True) in {
        (name, is_late) for name, _, is_late in IMPORTS["lucid.ops.arithmetic"]
    }


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_each_layer_imports_only_the_layers_below_it(layer):
    allowed = LAYERS[layer]
    bad = [
        (module, name, line)
        for module, imports in IMPORTS.items()
        if _layer_of(module) == layer
        for name, line, _ in imports
        if not any(_is_within(name, below) for below in allowed)
    ]
    assert bad == []


def _run_python(code: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter; fails the test with its stderr if it fails."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result


def _cycle_members(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = lowlink[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = lowlink[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    lowlink[node] = min(lowlink[node], index[child])
                continue
            work.pop()
            if work:
                lowlink[work[-1][0]] = min(lowlink[work[-1][0]], lowlink[node])
            if lowlink[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _edges(imports: dict, ignored: set[tuple[str, str]]) -> dict[str, set[str]]:
    return {
        module: {name for name, _, _ in found if (module, name) not in ignored}
        for module, found in imports.items()
    }


def test_no_import_cycle_but_the_listed_late_imports():
    assert _cycle_members(_edges(IMPORTS, set(LATE_IMPORTS))) == []


def _late_imports(imports: dict) -> set[tuple[str, str]]:
    return {
        (module, name) for module, found in imports.items() for name, _, is_late in found if is_late
    }


def test_every_late_import_is_listed_with_its_reason():
    unlisted = sorted(_late_imports(IMPORTS) - set(LATE_IMPORTS))
    assert unlisted == [], "import these at the module's top, or list them with a reason"


def test_import_lucid_loads_no_profiler_nn_sqlite_or_numpy_random():
    code = (
        "import sys, lucid\n"
        "print(' '.join(m for m in ('lucid.nn', 'lucid.optim', 'lucid.debug', 'sqlite3', "
        "'numpy.random', 'scipy') if m in sys.modules))\n"
    )
    result = _run_python(code)
    assert result.stdout.split() == []


def _reaches(start: str, goal: str) -> bool:
    """Whether importing `start` imports `goal`, through imports at modules' tops."""
    seen, stack = set(), [start]
    while stack:
        module = stack.pop()
        if module == goal:
            return True
        if module not in seen:
            seen.add(module)
            stack += [name for name, _, is_late in IMPORTS.get(module, ()) if not is_late]
    return False


def test_the_listed_late_imports_are_late_and_still_needed():
    for importer, imported in LATE_IMPORTS:
        uses = [is_late for name, _, is_late in IMPORTS[importer] if name == imported]
        assert any(uses), f"({importer}, {imported}) is gone: remove it from the list"
        assert all(uses), f"{importer} also imports {imported} at its top"
    for importer, imported in CYCLE_LATE_IMPORTS:
        assert _reaches(imported, importer), f"no cycle: import {imported} at {importer}'s top"
    for importer, imported in FIRST_USE_LATE_IMPORTS:
        assert not _reaches(importer, imported), f"{importer} loads {imported} anyway"


def test_late_import_scan_sees_imports_in_function_and_class_bodies(tmp_path):
    module = tmp_path / "late.py"
    module.write_text(
        "import lucid.ops.fills\n"
        "def f():\n"
        "    from lucid.ops.shape import reshape\n"
        "class C:\n"
        "    from lucid.ops import pointwise\n"
        "if True:\n"
        "    from lucid.ops import reduction\n"
    )
    found = {(name, is_late) for name, _, is_late in _imports(module, "lucid.late")}
    assert found == {
        ("lucid.ops.fills", False),
        ("lucid.ops.shape", True),
        ("lucid.ops.pointwise", True),
        ("lucid.ops.reduction", False),
    }


def test_cycle_check_finds_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle_members(edges) == [["a", "b", "c"]]


def test_core_loads_alone_without_ops_tools_or_the_package_face():
    # A bare `lucid` package object stands in for the face, so only _core's own imports run.
    code = (
        "import sys, types\n"
        f"package = types.ModuleType('lucid'); package.__path__ = [{str(PACKAGE)!r}]\n"
        "sys.modules['lucid'] = package\n"
        "import lucid._core.engine, lucid._core.sentinel, lucid._core.random\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('lucid.'))\n"
        "print(' '.join(loaded))\n"
    )
    result = _run_python(code)
    loaded = result.stdout.split()
    assert "lucid._core.engine" in loaded
    assert [name for name in loaded if not _is_within(name, "lucid._core")] == []


def test_subpackages_are_attributes_after_import_lucid():
    code = (
        "import lucid\n"
        "print(lucid.nn.Linear.__name__, lucid.optim.SGD.__name__, lucid.utils.data.__name__,\n"
        "      lucid.save.__name__, lucid.autograd.profiler.__name__)\n"
    )
    result = _run_python(code)
    assert result.stdout.split() == [
        "Linear",
        "SGD",
        "lucid.utils.data",
        "save",
        "lucid.autograd.profiler",
    ]


UPPER_LAYERS = ("nn", "optim", "debug")


def _engine_internals_used(path: Path) -> list[tuple[str, str, int]]:
    """Every import or attribute use of the engine, the graph module or SavedTensor."""
    internals = ("lucid._core.engine", "lucid._core.graph", "lucid.autograd.graph")
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        bad += [
            (path.name, name, node.lineno)
            for name in names
            if any(_is_within(name, internal) for internal in internals)
        ]
        if isinstance(node, ast.Attribute):
            owner = node.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else None
            owner_name = owner.id if isinstance(owner, ast.Name) else owner_name
            if node.attr == "SavedTensor" or (
                owner_name in ("autograd", "_core") and node.attr in ("engine", "graph")
            ):
                bad.append((path.name, node.attr, node.lineno))
        elif isinstance(node, ast.Name) and node.id == "SavedTensor":
            bad.append((path.name, node.id, node.lineno))
    return bad


def test_upper_layers_never_use_engine_graph_or_saved_tensor():
    # Covers every module of lucid.nn, lucid.optim and lucid.debug as they come to exist.
    bad = []
    for package in UPPER_LAYERS:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            bad += _engine_internals_used(path)
    assert bad == []


def test_engine_internals_check_flags_each_kind_of_use(tmp_path):
    module = tmp_path / "uses_internals.py"
    module.write_text(
        "from lucid._core.engine import run_backward\n"
        "import lucid\n"
        "graph = lucid.autograd.graph\n"
        "saved = SavedTensor\n"
    )
    found = {name for _, name, _ in _engine_internals_used(module)}
    assert {"lucid._core.engine", "graph", "SavedTensor"} <= found


def test_upper_layers_import_no_private_names_from_other_packages():
    """nn, optim and debug build on public names (and the sentinel's interface) only."""
    bad = []
    for package in UPPER_LAYERS:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                if not _is_within(node.module, "lucid") or _is_within(
                    node.module, f"lucid.{package}"
                ):
                    continue
                for alias in node.names:
                    if alias.name.startswith("_"):
                        bad.append((path.name, f"{node.module}.{alias.name}", node.lineno))
    assert bad == []


def _op_class_names() -> set[str]:
    names = set()
    for path in sorted((PACKAGE / "ops").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
    return names


def test_engine_names_no_op_class():
    op_classes = _op_class_names()
    assert {"Mul", "Exp", "Sum"} <= op_classes  # the scan sees the op families
    tree = ast.parse((PACKAGE / "_core" / "engine.py").read_text())
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
    result = _run_python(code)
    assert result.stdout.strip() == "ok"


def test_import_lucid_does_not_import_torch():
    code = "import sys, lucid; print('torch' in sys.modules)"
    result = _run_python(code)
    assert result.stdout.strip() == "False"


# The one place lucid imports torch: the debugger for torch programs (the [torch] extra),
# loaded only when a program asks for lucid.debug.torch.
TORCH_BACKEND = PACKAGE / "debug" / "torch"


def test_lucid_source_never_imports_torch():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(TORCH_BACKEND):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            if any(_is_within(name, "torch") for name in names):
                bad.append((str(path.relative_to(PACKAGE)), node.lineno))
    assert bad == []
