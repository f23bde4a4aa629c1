"""A torch name that lucid lacks is never a silent AttributeError: lucid's namespace gives
torch's message, then the reason, read from the one table (lucid/_absent.py) that
tests/test_api_coverage.py checks against torch. Needs no torch."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import pytest

import lucid
from lucid._absent import ABSENT, EXCLUDED
from tests.api_exclusions import NAMESPACES


def _message(namespace: Any, name: str) -> str:
    with pytest.raises(AttributeError) as caught:
        getattr(namespace, name)
    return str(caught.value)


def test_an_absent_namespace_gives_torch_s_message_then_the_reason():
    reason = ABSENT["torch.onnx"]
    assert _message(lucid, "onnx") == f"module 'lucid' has no attribute 'onnx': {reason}"


def test_an_absent_namespace_is_still_no_attribute():
    assert not hasattr(lucid, "onnx")
    with pytest.raises(ImportError):
        from lucid import onnx  # noqa: F401


def test_a_top_level_name_lucid_lacks_gives_its_reason():
    reason = EXCLUDED["torch"]["sparse_coo_tensor"]
    assert _message(lucid, "sparse_coo_tensor") == (
        f"module 'lucid' has no attribute 'sparse_coo_tensor': {reason}"
    )


def test_a_name_of_torch_functional_gives_its_reason_at_lucid_s_top_level():
    # torch.functional holds functions torch has at its top level, so lucid has them at its
    reason = EXCLUDED["torch.functional"]["svd_lowrank"]
    assert _message(lucid, "svd_lowrank").endswith(f": {reason}")


def test_a_functional_name_lucid_lacks_gives_its_reason():
    import lucid.nn.functional as F

    reason = EXCLUDED["torch.nn.functional"]["scaled_mm"]
    assert _message(F, "scaled_mm") == (
        f"module 'lucid.nn.functional' has no attribute 'scaled_mm': {reason}"
    )


def test_a_namespace_under_a_lucid_one_gives_its_reason():
    utils = importlib.import_module("lucid.nn.utils")
    reason = ABSENT["torch.nn.utils.prune"]
    assert _message(utils, "prune").endswith(f"'prune': {reason}")


def test_a_name_torch_lacks_too_gets_torch_s_message_alone():
    assert _message(lucid, "no_such_name") == "module 'lucid' has no attribute 'no_such_name'"
    linalg = importlib.import_module("lucid.linalg")
    assert _message(linalg, "no_such_name") == (
        "module 'lucid.linalg' has no attribute 'no_such_name'"
    )


def test_lazy_names_still_load():
    assert lucid.nn.functional.relu is lucid.relu
    assert lucid.optim.swa_utils.SWALR.__name__ == "SWALR"


def _first_absent(torch_path: str) -> tuple[str, str, str]:
    """(lucid module, attribute, torch path) of the outermost absent namespace on the way to
    `torch_path`: lucid's lookup stops there."""
    parts = torch_path.split(".")
    for depth in range(2, len(parts) + 1):
        prefix = ".".join(parts[:depth])
        if prefix in ABSENT:
            return (
                "lucid" + ".".join(parts[: depth - 1]).removeprefix("torch"),
                parts[depth - 1],
                prefix,
            )
    raise AssertionError(f"{torch_path} is not absent")


@pytest.mark.parametrize("torch_path", sorted(ABSENT))
def test_every_absent_namespace_gives_its_reason(torch_path: str):
    module_name, name, absent = _first_absent(torch_path)
    module = importlib.import_module(module_name)
    assert _message(module, name) == (
        f"module '{module_name}' has no attribute '{name}': {ABSENT[absent]}"
    )


def _compared_modules() -> list[tuple[str, str]]:
    """The compared pairs whose lucid side is a module (not lucid.Tensor, nor one of
    lucid.backends' option tables) and that lucid lacks names of."""
    return [
        (torch_path, lucid_path)
        for torch_path, lucid_path in NAMESPACES
        if EXCLUDED.get(torch_path) and importlib.util.find_spec(lucid_path) is not None
    ]


@pytest.mark.parametrize(("torch_path", "lucid_path"), _compared_modules())
def test_every_excluded_name_gives_its_reason(torch_path: str, lucid_path: str):
    module = importlib.import_module(lucid_path)
    wrong = [
        name
        for name, reason in sorted(EXCLUDED[torch_path].items())
        if _message(module, name) != f"module '{lucid_path}' has no attribute '{name}': {reason}"
    ]
    assert wrong == [], f"{lucid_path} does not give the reason for: {' '.join(wrong)}"
