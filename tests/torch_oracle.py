"""torch, the test-only parity oracle, importable whether or not torch is installed.

    from tests.torch_oracle import requires_torch, torch

    @requires_torch
    def test_linear_matches_torch(): ...

Without torch, `torch` (and `functional`, `data`) are placeholders, so module-level tables may
still name torch functions and classes (`OpCase(..., torch.add, ...)`, parametrize lists,
default arguments). A test that uses torch says so with `requires_torch` (a module made only
of parity tests sets `pytestmark = requires_torch`) and is skipped with `TORCH_MISSING` as the
reason. Calling a placeholder fails the test and names the missing marker, so a parity test
that forgot it shows up when the suite runs without torch (tests/test_without_torch.py keeps
collection clean).
"""

from __future__ import annotations

from typing import Any

import pytest

TORCH_MISSING = "torch is the parity oracle and is not installed"


class _Absent:
    """Stands in for `torch` or an attribute path below it when torch is not installed."""

    def __init__(self, path: str) -> None:
        self._path = path

    def __getattr__(self, name: str) -> _Absent:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Absent(f"{self._path}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail(
            f"{self._path}() needs torch, which is not installed: mark the test "
            "`requires_torch` (tests/torch_oracle.py)",
            pytrace=False,
        )

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        # `class TorchNet(torch.nn.Module)` at module level still defines a (useless) class.
        return (object,)

    def __repr__(self) -> str:
        return f"<{self._path}: torch is not installed>"


try:
    import torch
    import torch.nn.functional as functional
    import torch.utils.data as data
except ImportError:
    TORCH_AVAILABLE = False
    torch = _Absent("torch")
    functional = _Absent("torch.nn.functional")
    data = _Absent("torch.utils.data")
else:
    TORCH_AVAILABLE = True

requires_torch = pytest.mark.skipif(not TORCH_AVAILABLE, reason=TORCH_MISSING)

__all__ = ["TORCH_AVAILABLE", "TORCH_MISSING", "data", "functional", "requires_torch", "torch"]
