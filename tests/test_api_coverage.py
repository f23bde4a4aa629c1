"""Every public name and parameter of PyTorch's API that lucid lacks is there for a reason.

Every public torch namespace is either compared name by name (tests/api_exclusions.py's
NAMESPACES) or has no lucid counterpart and is listed with the reason (lucid/_absent.py's
ABSENT); a torch top-level namespace in neither fails. In a compared namespace, the public
names lucid does not have must each appear in lucid/_absent.py's EXCLUDED with the reason:
CUDA-only, sparse or quantized tensors, complex dtypes, TorchScript internals and so on. lucid's
namespaces give that reason in their AttributeError (tests/test_absent_names.py). A name that
lucid gains must leave the table (a stale entry fails too), so the table always reads as what
lucid deliberately is not. Where torch's signature of a shared name can be inspected, every
parameter it accepts is accepted by lucid's, or is listed with its reason. The coverage per
namespace is printed at the end of the run.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from typing import Any

import pytest

from lucid._absent import ABSENT, EXCLUDED, REASONS
from tests.api_exclusions import EXCLUDED_PARAMETERS, NAMESPACES
from tests.torch_oracle import requires_torch

pytestmark = requires_torch

# Filled as the tests run and printed by conftest's terminal summary.
COVERAGE: dict[str, tuple[int, int, int, int]] = {}


def _resolve(path: str) -> Any:
    """The module or class at a dotted path, importing submodules on the way."""
    root, *parts = path.split(".")
    target: Any = importlib.import_module(root)
    for depth, part in enumerate(parts, start=1):
        try:
            target = getattr(target, part)
        except AttributeError:
            target = importlib.import_module(".".join([root, *parts[:depth]]))
    return target


def _public_names(namespace: Any) -> set[str]:
    """torch's public names of a namespace: its `__all__` where it has one, else what dir()
    shows, without private names and submodules (those are namespaces of their own)."""
    if isinstance(namespace, types.ModuleType) and hasattr(namespace, "__all__"):
        names = set(namespace.__all__)
    else:
        names = set(dir(namespace))
    return {
        name
        for name in names
        if not name.startswith("_")
        and not isinstance(getattr(namespace, name, None), types.ModuleType)
    }


def _missing(torch_path: str, lucid_path: str) -> tuple[set[str], set[str]]:
    """(torch's public names, those lucid lacks)."""
    names = _public_names(_resolve(torch_path))
    ours = _resolve(lucid_path)
    return names, {name for name in names if not hasattr(ours, name)}


@pytest.mark.parametrize(("torch_path", "lucid_path"), NAMESPACES)
def test_every_missing_name_has_a_reason(torch_path: str, lucid_path: str) -> None:
    names, missing = _missing(torch_path, lucid_path)
    excluded = EXCLUDED.get(torch_path, {})
    unexplained = sorted(missing - excluded.keys())
    planned = sum("planned" in excluded.get(name, "") for name in missing)
    COVERAGE[torch_path] = (len(names) - len(missing), len(missing) - planned, planned, len(names))
    assert not unexplained, (
        f"{len(unexplained)} public names of {torch_path} are missing from {lucid_path} "
        f"without a reason in lucid/_absent.py: {' '.join(unexplained)}"
    )


@pytest.mark.parametrize(("torch_path", "lucid_path"), NAMESPACES)
def test_no_exclusion_is_stale(torch_path: str, lucid_path: str) -> None:
    names, missing = _missing(torch_path, lucid_path)
    excluded = EXCLUDED.get(torch_path, {}).keys()
    stale = sorted(name for name in excluded if name not in missing)
    assert not stale, (
        f"lucid/_absent.py excludes names of {torch_path} that {lucid_path} has or "
        f"torch does not: {' '.join(stale)}"
    )


def test_every_exclusion_table_is_of_a_compared_namespace() -> None:
    compared = {torch_path for torch_path, _ in NAMESPACES}
    assert sorted(EXCLUDED.keys() - compared) == []


def test_every_top_level_torch_namespace_is_compared_or_absent() -> None:
    """A namespace that torch adds fails here until it is compared name by name (NAMESPACES) or
    listed in lucid/_absent.py's ABSENT with the reason lucid has no counterpart of it."""
    import torch

    found = {module.name for module in pkgutil.iter_modules(torch.__path__)}
    public = {name for name in found if not name.startswith("_")}
    listed = {path for path, _ in NAMESPACES} | ABSENT.keys()
    assert sorted(name for name in public if f"torch.{name}" not in listed) == []


def test_no_namespace_is_both_compared_and_absent() -> None:
    compared = {torch_path for torch_path, _ in NAMESPACES}
    assert sorted(compared & ABSENT.keys()) == []


def test_every_absent_namespace_sits_in_a_compared_or_absent_one() -> None:
    """So lucid's lookup reaches it: the parent namespace is lucid's (and gives the reason) or
    is absent itself (and gives its own)."""
    compared = {torch_path for torch_path, _ in NAMESPACES}
    orphans = [path for path in ABSENT if path.rpartition(".")[0] not in compared | ABSENT.keys()]
    assert orphans == []


@pytest.mark.parametrize("torch_path", sorted(ABSENT))
def test_every_absent_namespace_is_torch_s_and_not_lucid_s(torch_path: str) -> None:
    importlib.import_module(torch_path)  # a namespace torch dropped fails here
    lucid_parent, _, name = ("lucid" + torch_path.removeprefix("torch")).rpartition(".")
    if "torch" + lucid_parent.removeprefix("lucid") in ABSENT:
        return  # lucid lacks the parent, so the child too
    assert not hasattr(_resolve(lucid_parent), name), (
        f"lucid has {lucid_parent}.{name}: compare it with {torch_path} in NAMESPACES instead"
    )


def _signature(target: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(target.__init__ if isinstance(target, type) else target)
    except (TypeError, ValueError):  # a builtin without text signature
        return None


def _parameter_gaps() -> dict[tuple[str, str], set[str]]:
    """(namespace, name) -> torch parameter names lucid's callable does not accept."""
    gaps = {}
    for torch_path, lucid_path in NAMESPACES:
        theirs, ours = _resolve(torch_path), _resolve(lucid_path)
        for name in sorted(_public_names(theirs)):
            if not hasattr(ours, name):
                continue
            torch_signature = _signature(getattr(theirs, name))
            lucid_signature = _signature(getattr(ours, name))
            if torch_signature is None or lucid_signature is None:
                continue
            accepted = lucid_signature.parameters
            if any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
                continue
            lacking = {
                p.name
                for p in torch_signature.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                and p.name != "self"
                and p.name not in accepted
            }
            if lacking:
                gaps[(torch_path, name)] = lacking
    return gaps


def test_every_parameter_torch_accepts_is_accepted_or_has_a_reason() -> None:
    unexplained = []
    for key, lacking in sorted(_parameter_gaps().items()):
        reasons = EXCLUDED_PARAMETERS.get(key, {})
        unexplained += [f"{key[0]}.{key[1]}({name}=)" for name in sorted(lacking - reasons.keys())]
    assert not unexplained, (
        f"parameters torch accepts and lucid does not, without a reason: {', '.join(unexplained)}"
    )


def test_no_parameter_exclusion_is_stale() -> None:
    gaps = _parameter_gaps()
    stale = [
        f"{key[0]}.{key[1]}({name}=)"
        for key, reasons in sorted(EXCLUDED_PARAMETERS.items())
        for name in sorted(reasons)
        if name not in gaps.get(key, set())
    ]
    assert not stale, f"parameter exclusions lucid no longer needs: {', '.join(stale)}"


def test_every_reason_is_one_of_the_named_reasons() -> None:
    used = {reason for table in EXCLUDED.values() for reason in table.values()}
    used |= set(ABSENT.values())
    used |= {reason for table in EXCLUDED_PARAMETERS.values() for reason in table.values()}
    assert used <= set(REASONS), sorted(used - set(REASONS))


def test_top_level_names_torch_shares_with_functional_are_the_same_function() -> None:
    import torch
    import torch.nn.functional as torch_F

    import lucid
    import lucid.nn.functional as F

    shared = [
        name
        for name in _public_names(torch_F)
        if getattr(torch, name, None) is getattr(torch_F, name) and hasattr(F, name)
    ]
    assert "conv2d" in shared
    different = [name for name in shared if getattr(lucid, name, None) is not getattr(F, name)]
    assert not different, different


# The names lucid's top level has and torch's does not: lucid's own (docs/api/extras.rst).
# Plumbing (the sentinel module, the argument-error helper, the allocator tuning) is private.
LUCID_ONLY_TOP_LEVEL = {"igamma_", "igammac_"}


def test_top_level_has_no_public_name_torch_lacks_but_lucid_own() -> None:
    import torch

    import lucid

    ours = {
        name
        for name in vars(lucid)
        if not name.startswith("_") and not isinstance(getattr(lucid, name), types.ModuleType)
    }
    assert ours - set(dir(torch)) == LUCID_ONLY_TOP_LEVEL
