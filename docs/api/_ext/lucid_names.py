"""Which names lucid's API reference documents, and where: the namespaces that mirror torch,
their public names, and the names the hand-written pages document. Shared by the Sphinx
extension (lucid_reference.py) and tests/test_docs.py; needs no Sphinx.

A namespace's public names are its `__all__`, else its attributes without a leading underscore
plus the names it loads on first use (`_LAZY_NAMES`); never a submodule or a typing helper.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import types
from pathlib import Path

# The torch-mirroring namespaces, in the order the reference lists them; each has a page
# reference/<name>.rst holding `.. lucid-namespace:: <name>`.
NAMESPACES = (
    "lucid",
    "lucid.nn",
    "lucid.nn.functional",
    "lucid.nn.init",
    "lucid.nn.utils",
    "lucid.nn.parallel",
    "lucid.nn.attention",
    "lucid.optim",
    "lucid.optim.lr_scheduler",
    "lucid.optim.swa_utils",
    "lucid.autograd",
    "lucid.autograd.functional",
    "lucid.autograd.forward_ad",
    "lucid.autograd.graph",
    "lucid.autograd.profiler",
    "lucid.profiler",
    "lucid.func",
    "lucid.testing",
    "lucid.random",
    "lucid.multiprocessing",
    "lucid.linalg",
    "lucid.fft",
    "lucid.special",
    "lucid.distributions",
    "lucid.distributions.constraints",
    "lucid.distributions.transforms",
    "lucid.amp",
    "lucid.utils",
    "lucid.utils.data",
    "lucid.utils.checkpoint",
    "lucid.utils.benchmark",
    "lucid.utils.tensorboard",
    "lucid.utils.hooks",
    "lucid.distributed",
    "lucid.cuda",
    "lucid.backends",
    "lucid.cpu",
    "lucid.cpu.amp",
    "lucid.cuda.amp",
    "lucid.jit",
    "lucid.accelerator",
)

# Names a module imports for its own annotations, which torch's namespace happens to share.
_NOT_API = {"lucid.nn.functional": {"Tensor"}}

_HERE = Path(__file__).resolve().parent.parent
# `.. autoclass:: lucid.debug.NaNDetector` and the like, in the hand-written pages.
_AUTODOC = re.compile(
    r"^\s*\.\. (?:auto(?:function|class|exception|data|attribute|method|decorator)|"
    r"py:(?:function|class|exception|data|attribute|method|decorator))::\s+([\w.]+)",
    re.MULTILINE,
)


def public_names(module_name: str) -> list[str]:
    """The public names of a lucid namespace, in definition order."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
        names += [name for name in getattr(module, "_LAZY_NAMES", {}) if name not in names]
    public = []
    for name in names:
        if name in _NOT_API.get(module_name, ()):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            continue
        if getattr(value, "__module__", None) in ("typing", "__future__"):
            continue
        public.append(name)
    return public


def hand_written_pages() -> list[Path]:
    """The reference's pages written by hand: every .rst file outside reference/ (and a
    build folder)."""
    pages = []
    for path in sorted(_HERE.rglob("*.rst")):
        folders = set(path.relative_to(_HERE).parts[:-1])
        if not folders & {"reference", "_build"}:
            pages.append(path)
    return pages


def hand_documented() -> set[str]:
    """The full names that a hand-written page documents with a directive."""
    found = set()
    for path in hand_written_pages():
        found.update(_AUTODOC.findall(path.read_text(encoding="utf-8")))
    return found


def _resolve(full: str) -> object:
    """The object a full name stands for, or None when it names no importable object."""
    module_name, _, name = full.rpartition(".")
    while module_name:
        try:
            value = importlib.import_module(module_name)
        except ImportError:
            module_name, _, parent = module_name.rpartition(".")
            name = f"{parent}.{name}"
            continue
        for part in name.split("."):
            value = getattr(value, part, None)
        return value
    return None


def is_routine_or_class(value: object) -> bool:
    return inspect.isclass(value) or inspect.isroutine(value)


@functools.cache
def homes() -> dict[int, tuple[str, object]]:
    """Each function and class by id: the one full name it is documented under (a
    hand-written page's, else the first namespace's that has it) and the object itself."""
    found: dict[int, tuple[str, object]] = {}
    for full in sorted(hand_documented()):
        value = _resolve(full)
        if is_routine_or_class(value):
            found.setdefault(id(value), (full, value))
    for module_name in NAMESPACES:
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            value = getattr(module, name)
            if is_routine_or_class(value):
                found.setdefault(id(value), (f"{module_name}.{name}", value))
    return found
