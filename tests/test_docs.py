"""The API reference (docs/api) documents every public name only lucid has, and builds with
Sphinx with no warning: no broken cross-reference, no docstring that breaks the markup.

A name is lucid-only when torch has no name like it in the same namespace (torch tells, so
those checks need torch); everything in lucid.debug and lucid.debug.torch is lucid-only. The
names are listed by docs/api/_ext/lucid_names.py, which the reference's pages use too.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
_DOCS = _ROOT / "docs" / "api"
sys.path.insert(0, str(_DOCS / "_ext"))

import lucid_names  # noqa: E402

# lucid-only attributes that a class's instances get in __init__, where no introspection of
# the class finds them.
INSTANCE_ATTRIBUTES = (
    "GradScaler.last_skip",
    "DistributedDataParallel.nonfinite_report",
    "DistributedDataParallel.on_nonfinite",
    "Watch.last_skip",
)


def _hand_written_text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in lucid_names.hand_written_pages())


def _page(name: str) -> str:
    return (_DOCS / name).read_text(encoding="utf-8")


def _lucid_only_names(torch) -> list[str]:
    """`namespace.name` for names torch's namespace lacks, and `Class.member` for public
    members a class defines that torch's class of that name lacks."""
    found = []
    for namespace in lucid_names.NAMESPACES:
        module = importlib.import_module(namespace)
        try:
            counterpart = importlib.import_module(namespace.replace("lucid", "torch", 1))
        except ImportError:
            counterpart = None  # hasattr(None, name) is False: every name is lucid-only
        for name in lucid_names.public_names(namespace):
            if not hasattr(counterpart, name):
                found.append(f"{namespace}.{name}")
                continue
            theirs = getattr(counterpart, name)
            ours = getattr(module, name)
            if inspect.isclass(ours) and inspect.isclass(theirs):
                found.extend(
                    f"{name}.{member}"
                    for member, value in vars(ours).items()
                    if not member.startswith("_")
                    and not hasattr(theirs, member)
                    and not _instance_attribute_of(theirs, member, value)
                )
    return found


def _instance_attribute_of(theirs: type, member: str, value: object) -> bool:
    """Whether lucid's slot `member` holds what torch's class sets on its instances in
    `__init__` (RemovableHandle.id): no introspection of torch's class finds those."""
    code = getattr(getattr(theirs, "__init__", None), "__code__", None)
    is_slot = isinstance(value, types.MemberDescriptorType)
    return is_slot and code is not None and member in code.co_names


def test_every_lucid_only_name_of_a_torch_namespace_is_in_the_reference():
    torch = pytest.importorskip("torch")
    text = _hand_written_text()
    missing = [name for name in _lucid_only_names(torch) if name not in text]
    assert not missing, f"lucid-only names the reference does not document: {missing}"


def test_every_name_of_lucid_debug_and_its_torch_backend_is_documented():
    pytest.importorskip("torch")
    documented = lucid_names.hand_documented()
    modules = ("lucid.debug", "lucid.debug.torch", "lucid.nn.parallel.distributed")
    missing = [
        f"{module}.{name}"
        for module in modules
        for name in importlib.import_module(module).__all__
        if f"{module}.{name}" not in documented
        and f"{module.rpartition('.')[0]}.{name}" not in documented
    ]
    assert not missing, f"not documented by an autodoc directive: {missing}"


def test_every_public_member_of_the_debug_classes_has_a_docstring_or_a_mention():
    # Their pages use `:members:`, which shows only members with a docstring.
    pytest.importorskip("torch")
    text = _hand_written_text()
    missing = []
    for module_name in ("lucid.debug", "lucid.debug.torch"):
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if not inspect.isclass(value):
                continue
            for member, attribute in vars(value).items():
                if member.startswith("_") or f"{name}.{member}" in text:
                    continue
                if isinstance(attribute, dataclasses.Field) or not callable(
                    getattr(attribute, "fget", attribute)
                ):
                    continue  # a dataclass field: its page lists every field
                if not inspect.getdoc(getattr(attribute, "fget", attribute)):
                    missing.append(f"{name}.{member}")
    assert not missing, f"members the reference cannot show: {missing}"


def test_lucid_only_instance_attributes_are_documented():
    text = _hand_written_text()
    assert [name for name in INSTANCE_ATTRIBUTES if name not in text] == []


def test_every_nan_detector_argument_and_event_field_is_explained():
    import lucid.debug

    page = _page("debug.rst")
    arguments = list(inspect.signature(lucid.debug.NaNDetector.__init__).parameters)[1:]
    fields = [field.name for field in dataclasses.fields(lucid.debug.NaNEvent)]
    missing = [name for name in arguments + fields if f"``{name}``" not in page]
    assert not missing, f"debug.rst does not explain: {missing}"


def test_every_anomaly_event_field_is_explained():
    import lucid.autograd

    page = _page("sentinel.rst")
    fields = [field.name for field in dataclasses.fields(lucid.autograd.AnomalyEvent)]
    assert [name for name in fields if f"``{name}``" not in page] == []


def test_every_command_line_option_is_documented():
    source = (_ROOT / "lucid" / "debug" / "cli.py").read_text(encoding="utf-8")
    options = re.findall(r'add_argument\(\s*"(-[\w-]+)"', source)
    commands = re.findall(r'add_parser\(\s*"(\w+)"', source)
    assert options and commands
    page = _page("cli.rst")
    missing = [option for option in options if f".. option:: {option}" not in page]
    missing += [command for command in commands if f"``{command}``" not in page]
    assert not missing, f"cli.rst does not document: {missing}"


def test_every_namespace_has_a_page_and_every_subpackage_a_namespace():
    import lucid

    index = _page("index.rst")
    for namespace in lucid_names.NAMESPACES:
        page = _DOCS / "reference" / f"{namespace}.rst"
        assert f".. lucid-namespace:: {namespace}" in page.read_text(encoding="utf-8")
        assert f"reference/{namespace}\n" in index
    covered = {name.split(".")[1] for name in lucid_names.NAMESPACES if "." in name}
    covered |= {"debug"}  # lucid.debug has hand-written pages
    public = [name for name in lucid._LAZY_SUBPACKAGES if not name.startswith("_")]
    assert [name for name in public if name not in covered] == []


def test_the_reference_builds_without_a_warning(tmp_path):
    pytest.importorskip("sphinx", reason="the [docs] extra is not installed")
    pytest.importorskip("torch", reason="lucid.debug.torch's page imports torch")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
               "-j", "auto", str(_DOCS), str(tmp_path)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "debug.html").is_file()
