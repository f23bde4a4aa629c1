"""Generic checks for every row of the module catalogue (tests/nn/module_catalogue.py).

Each row yields: construction as torch.nn's module of the same name builds it (repr,
parameter and buffer names, shapes, dtypes and requires_grad); parity in float64 and float32
with torch's module, its parameters and buffers copied over (outputs, their dtypes, the
gradients of the inputs and parameters for a seeded random grad_output, and the buffers after
the forward, e.g. running statistics); a state_dict round trip through lucid.save and lucid.load
into a module built from another seed, which must then hold the same state and give the same
outputs; PyTorch's error for a state dict missing a key; and each of the row's invalid calls
raising PyTorch's error type and message ("torch" read as "lucid"). Every lucid.nn module has a
row or a reason in UNCATALOGUED_MODULES.
"""

from __future__ import annotations

import inspect
import io
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn
from tests.nn.module_catalogue import ROWS, UNCATALOGUED_MODULES, ModuleCase
from tests.nn.parity import TOLERANCES, assert_close, to_numpy
from tests.torch_oracle import TORCH_MISSING

REPOSITORY = Path(__file__).resolve().parents[2]
DTYPES = ["float64", "float32"]


@pytest.fixture(scope="module")
def torch_oracle() -> Any:
    return pytest.importorskip("torch", reason=TORCH_MISSING)


def _params(check: str, rows: list[ModuleCase], dtypes: list[str] | None = None) -> list[Any]:
    """pytest params (row[, dtype]), a strict expected failure where the row lists a known
    gap for `check` (or for `check[dtype]`)."""
    params = []
    for row in rows:
        for dtype in [None] if dtypes is None else [d for d in dtypes if d in row.dtypes]:
            gap = row.known_gaps.get(check) or row.known_gaps.get(f"{check}[{dtype}]")
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            values = (row,) if dtype is None else (row, dtype)
            name = row.name if dtype is None else f"{row.name}-{dtype}"
            params.append(pytest.param(*values, id=name, marks=marks))
    return params


# --------------------------------------------------------------------------------- helpers
def _seed(row: ModuleCase, purpose: str) -> int:
    return zlib.crc32(f"{row.name}/{purpose}".encode())


def _arrays(row: ModuleCase, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(_seed(row, "inputs"))
    arrays = []
    for spec in row.inputs:
        if isinstance(spec, tuple):
            array = rng.uniform(-2.0, 2.0, spec)
        elif isinstance(spec, np.ndarray):
            array = spec.copy()
        else:
            array = np.asarray(spec(rng))
        arrays.append(array.astype(dtype) if array.dtype.kind == "f" else array)
    return arrays


def _grad_positions(row: ModuleCase, arrays: list[np.ndarray]) -> list[int]:
    if row.grad_inputs is not None:
        return list(row.grad_inputs)
    return [index for index, array in enumerate(arrays) if array.dtype.kind == "f"]


def _inputs(library: Any, arrays: list[np.ndarray], grad_positions: list[int]) -> list[Any]:
    tensors = [library.from_numpy(array.copy()) for array in arrays]
    for position in grad_positions:
        tensors[position].requires_grad_()
    return tensors


def _flatten(output: Any) -> list[Any]:
    """The tensors of a module's output, nested tuples (LSTM's (h, c)) and None skipped."""
    if isinstance(output, tuple | list):
        return [tensor for item in output for tensor in _flatten(item)]
    return [] if output is None else [output]


def _build(row: ModuleCase, nn: Any, dtype: str) -> Any:
    module = row.make(nn)
    module = module.double() if dtype == "float64" else module.float()
    return module.train(row.train)


def _torch_pair(row: ModuleCase, dtype: str) -> tuple[Any, Any]:
    """(torch module, lucid module with torch's parameters and buffers)."""
    import torch

    torch.manual_seed(_seed(row, "init") % 2**31)
    torch_module = _build(row, torch.nn, dtype)
    lucid_module = _build(row, lucid.nn, dtype)
    state = {
        key: lucid.from_numpy(to_numpy(value).copy())
        for key, value in torch_module.state_dict().items()
    }
    lucid_module.load_state_dict(state)
    return torch_module, lucid_module


def _state(module: Any) -> dict[str, np.ndarray]:
    return {key: to_numpy(value) for key, value in module.state_dict().items()}


def _dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).rsplit(".", 1)[-1]


def _lucid_message(error: BaseException) -> str:
    return str(error).replace("torch", "lucid")


# ------------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("row", _params("construction", ROWS))
def test_construction_matches_torch(row: ModuleCase, torch_oracle: Any) -> None:
    torch_module = row.make(torch_oracle.nn)
    lucid_module = row.make(lucid.nn)
    assert repr(lucid_module) == repr(torch_module)
    ours = {
        name: (tuple(p.shape), _dtype_name(p), p.requires_grad)
        for name, p in lucid_module.named_parameters()
    }
    theirs = {
        name: (tuple(p.shape), _dtype_name(p), p.requires_grad)
        for name, p in torch_module.named_parameters()
    }
    assert list(ours.items()) == list(theirs.items())
    ours = {name: (tuple(b.shape), _dtype_name(b)) for name, b in lucid_module.named_buffers()}
    theirs = {name: (tuple(b.shape), _dtype_name(b)) for name, b in torch_module.named_buffers()}
    assert list(ours.items()) == list(theirs.items())
    assert list(lucid_module.state_dict()) == list(torch_module.state_dict())
    assert lucid_module.training == torch_module.training


_WITH_FORWARD = [row for row in ROWS if row.has_forward]


@pytest.mark.parametrize(("row", "dtype"), _params("parity", _WITH_FORWARD, DTYPES))
def test_forward_and_backward_match_torch(row: ModuleCase, dtype: str, torch_oracle: Any) -> None:
    rtol, atol = TOLERANCES[row.float32_tolerance if dtype == "float32" else dtype]
    torch_module, lucid_module = _torch_pair(row, dtype)
    arrays = _arrays(row, dtype)
    grad_positions = _grad_positions(row, arrays)
    torch_inputs = _inputs(torch_oracle, arrays, grad_positions)
    lucid_inputs = _inputs(lucid, arrays, grad_positions)
    torch_outputs = _flatten(torch_module(*torch_inputs))
    lucid_outputs = _flatten(lucid_module(*lucid_inputs))
    assert len(lucid_outputs) == len(torch_outputs)
    rng = np.random.default_rng(_seed(row, "grad_output"))
    torch_loss = lucid_loss = None
    for index, (ours, theirs) in enumerate(zip(lucid_outputs, torch_outputs, strict=True)):
        assert_close(ours, theirs, rtol, atol, f"{row.name}: output {index} ({dtype})")
        assert _dtype_name(ours) == _dtype_name(theirs), f"{row.name}: output {index} dtype"
        assert ours.requires_grad == theirs.requires_grad, f"{row.name}: output {index}"
        if theirs.requires_grad:
            weights = rng.uniform(-1.0, 1.0, tuple(theirs.shape)).astype(dtype)
            term = (theirs * torch_oracle.from_numpy(weights)).sum()
            torch_loss = term if torch_loss is None else torch_loss + term
            term = (ours * lucid.from_numpy(weights.copy())).sum()
            lucid_loss = term if lucid_loss is None else lucid_loss + term
    if torch_loss is not None:
        torch_loss.backward()
        lucid_loss.backward()
    for position in grad_positions:
        theirs, ours = torch_inputs[position].grad, lucid_inputs[position].grad
        zeros = np.zeros_like(arrays[position])
        assert_close(
            zeros if ours is None else ours,
            zeros if theirs is None else theirs,
            rtol,
            atol,
            f"{row.name}: gradient of input {position} ({dtype})",
        )
    torch_parameters = dict(torch_module.named_parameters())
    for name, parameter in lucid_module.named_parameters():
        theirs = torch_parameters[name].grad
        if theirs is None:
            assert parameter.grad is None or not parameter.grad.numpy().any(), name
        else:
            assert parameter.grad is not None, f"{row.name}: no gradient for {name}"
            assert_close(parameter.grad, theirs, rtol, atol, f"{row.name}: gradient of {name}")
    for name, value in _state(torch_module).items():
        assert_close(_state(lucid_module)[name], value, rtol, atol, f"{row.name}: {name} after")


@pytest.mark.parametrize("row", _params("round_trip", ROWS))
def test_state_dict_round_trip_restores_the_module(row: ModuleCase) -> None:
    lucid.manual_seed(_seed(row, "first"))
    module = _build(row, lucid.nn, "float64")
    arrays = _arrays(row, "float64")
    if module.training and row.has_forward:
        module(*_inputs(lucid, arrays, []))  # a training step moves running statistics
    buffer = io.BytesIO()
    lucid.save(module.state_dict(), buffer)
    buffer.seek(0)
    lucid.manual_seed(_seed(row, "second"))
    restored = _build(row, lucid.nn, "float64")
    restored.load_state_dict(lucid.load(buffer))
    expected, actual = _state(module), _state(restored)
    assert list(actual) == list(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(actual[name], value, err_msg=f"{row.name}: {name}")
    if not row.has_forward:
        return
    module.eval()
    restored.eval()
    with lucid.no_grad():
        outputs = _flatten(module(*_inputs(lucid, arrays, [])))
        again = _flatten(restored(*_inputs(lucid, arrays, [])))
    for ours, theirs in zip(again, outputs, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=row.name)


_WITH_STATE = [row for row in ROWS if row.make(lucid.nn).state_dict()]


@pytest.mark.parametrize("row", _params("missing_key", _WITH_STATE))
def test_state_dict_missing_a_key_raises_torch_error(row: ModuleCase, torch_oracle: Any) -> None:
    messages = []
    for nn in (torch_oracle.nn, lucid.nn):
        module = row.make(nn)
        state = module.state_dict()
        state.pop(next(iter(state)))
        with pytest.raises(RuntimeError) as error:
            module.load_state_dict(state)
        messages.append(str(error.value))
    assert messages[1] == messages[0].replace("torch", "lucid")


_ERRORS = [
    pytest.param(
        row,
        invalid,
        id=f"{row.name}-{index}",
        marks=[pytest.mark.xfail(strict=True, reason=row.known_gaps["errors"])]
        if "errors" in row.known_gaps
        else [],
    )
    for row in ROWS
    for index, invalid in enumerate(row.errors)
]


@pytest.mark.parametrize(("row", "invalid"), _ERRORS)
def test_invalid_call_raises_torch_error(row: ModuleCase, invalid: Any, torch_oracle: Any) -> None:
    with pytest.raises(Exception) as expected:  # noqa: PT011  (torch's type, compared below)
        invalid(torch_oracle.nn, torch_oracle)
    with pytest.raises(Exception) as error:  # noqa: PT011
        invalid(lucid.nn, lucid)
    assert error.type.__name__ == expected.type.__name__
    assert str(error.value) == _lucid_message(expected.value)


# ----------------------------------------------------------------------------- coverage
def _public_modules() -> list[str]:
    return sorted(
        name
        for name in lucid.nn.__all__
        if inspect.isclass(getattr(lucid.nn, name))
        and issubclass(getattr(lucid.nn, name), lucid.nn.Module)
    )


def test_every_module_has_a_row_or_a_reason() -> None:
    with_rows = {row.class_name for row in ROWS}
    missing = [
        name for name in _public_modules() if name not in with_rows | UNCATALOGUED_MODULES.keys()
    ]
    assert not missing, f"lucid.nn modules with no row and no reason: {' '.join(missing)}"
    stale = sorted(name for name in UNCATALOGUED_MODULES if name in with_rows)
    assert not stale, f"UNCATALOGUED_MODULES names modules that have rows: {' '.join(stale)}"
    unknown = sorted(set(UNCATALOGUED_MODULES) - set(_public_modules()))
    assert not unknown, f"UNCATALOGUED_MODULES names no lucid.nn module: {' '.join(unknown)}"


@pytest.mark.parametrize("name", sorted(UNCATALOGUED_MODULES))
def test_uncatalogued_module_is_named_by_its_test(name: str) -> None:
    _, test = UNCATALOGUED_MODULES[name]
    path = REPOSITORY / test
    assert path.is_file(), f"{name}: its test {test} does not exist"
    assert re.search(rf"\b{name}\b", path.read_text()), f"{test} does not name {name}"


def test_row_names_are_unique() -> None:
    names = [row.name for row in ROWS]
    assert len(names) == len(set(names))
