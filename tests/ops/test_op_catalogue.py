"""Generic checks for every row of the op catalogue (tests/ops/op_catalogue.py).

Each row yields: forward vs its NumPy reference (float64), gradcheck and gradgradcheck
(float64), parity with PyTorch in float32 and float64 (values, shape, dtype and the gradients
of a seeded random grad_output), and the same parity on extreme values (0, -0.0, ±1e30, ±inf,
nan, the smallest denormal).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import lucid
from tests.ops.op_catalogue import CATALOGUE, OpCase
from tests.torch_oracle import TORCH_MISSING

DTYPES = ["float32", "float64"]
# Float64 parity and the NumPy reference share these tolerances (OpCase documents them).
RTOL64 = 1e-10
ATOL64 = 1e-8

# Extreme inputs are this pattern tiled over every float input; input k starts 3k places
# later, so binary ops also meet mixed pairs (inf with 0, nan with 1.0, 1e30 with -inf, ...).
EXTREME_PATTERN = (0.0, -0.0, 1e30, -1e30, np.inf, -np.inf, np.nan, "denormal", 1.0, -1.5)

_WITH_REFERENCE = [row for row in CATALOGUE if row.reference is not None]
_DIFFERENTIABLE = [row for row in CATALOGUE if row.differentiable]
_GRADGRAD = [row for row in _DIFFERENTIABLE if row.gradgrad]
_WITH_TORCH = [row for row in CATALOGUE if row.torch_op is not None]
_WITH_EXTREMES = [row for row in _WITH_TORCH if row.extremes]


def _rows(rows: list[OpCase]) -> Any:
    return pytest.mark.parametrize("row", rows, ids=[row.name for row in rows])


dtypes = pytest.mark.parametrize("dtype", DTYPES)


@pytest.fixture(scope="module")
def torch_oracle() -> Any:
    """torch, warmed up: its first backward with an explicit gradient imports sympy (~1 s)."""
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    torch.ones(2, requires_grad=True).exp().backward(torch.ones(2))
    return torch


# --------------------------------------------------------------------------- inputs
def _seed(row: OpCase, purpose: str) -> int:
    return zlib.crc32(f"{row.name}/{purpose}".encode())


def _make_arrays(row: OpCase, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(_seed(row, "inputs"))
    if row.make_inputs is not None:
        return [np.asarray(array) for array in row.make_inputs(rng, np.dtype(dtype))]
    return [rng.uniform(row.low, row.high, shape).astype(dtype) for shape in row.shapes]


def _grad_positions(row: OpCase, arrays: list[np.ndarray]) -> list[int]:
    if not row.differentiable:
        return []
    if row.grad_inputs is not None:
        return list(row.grad_inputs)
    return [i for i, array in enumerate(arrays) if array.dtype.kind == "f"]


def _lucid_inputs(arrays: list[np.ndarray], grad_positions: list[int]) -> list[lucid.Tensor]:
    tensors = [lucid.from_numpy(array.copy()) for array in arrays]
    for position in grad_positions:
        tensors[position].requires_grad_()
    return tensors


def _torch_inputs(arrays: list[np.ndarray], grad_positions: list[int]) -> list[Any]:
    import torch

    tensors = [torch.from_numpy(array.copy()) for array in arrays]
    for position in grad_positions:
        tensors[position].requires_grad_()
    return tensors


def _extreme_arrays(row: OpCase, dtype: str) -> list[np.ndarray]:
    pattern = np.array(
        [np.finfo(dtype).smallest_subnormal if v == "denormal" else v for v in EXTREME_PATTERN],
        dtype=dtype,
    )
    arrays = []
    for index, array in enumerate(_make_arrays(row, dtype)):
        if array.dtype.kind == "f":
            tiled = np.resize(np.roll(pattern, -3 * index), array.size)
            array = tiled.reshape(array.shape).astype(array.dtype)
        arrays.append(array)
    return arrays


# -------------------------------------------------------------------------- helpers
def _select(row: OpCase, result: Any) -> Any:
    if row.output_index is not None:
        return result[row.output_index]
    return result


def _call_lucid(row: OpCase, tensors: list[lucid.Tensor]) -> Any:
    return _select(row, row.op(*tensors, **row.kwargs))


def _call_torch(row: OpCase, tensors: list[Any]) -> Any:
    return _select(row, row.torch_op(*tensors, **row.kwargs))


def _to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, lucid.Tensor):
        return value.detach().numpy()
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _dtype_name(value: Any) -> str:
    """'float32' for lucid.float32, torch.float32 and np.float32 alike."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return type(value).__name__
    return str(dtype).rsplit(".", 1)[-1]


def _tolerances(row: OpCase, dtype: str) -> tuple[float, float]:
    if dtype == "float32":
        return row.rtol32, row.atol32
    return RTOL64, ATOL64


def _assert_close(actual: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    """Same shape; floats within tolerance with NaN and ±inf in the same places; rest equal."""
    actual_array = _to_numpy(actual)
    expected_array = _to_numpy(expected)
    assert actual_array.shape == expected_array.shape, (
        f"{what}: shape {actual_array.shape} != expected {expected_array.shape}"
    )
    if actual_array.dtype.kind == "f" or expected_array.dtype.kind == "f":
        np.testing.assert_allclose(
            actual_array, expected_array, rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )
    else:
        np.testing.assert_array_equal(actual_array, expected_array, err_msg=what)


def _builtin_base(error_type: type) -> type:
    """torch's own error classes (e.g. LinAlgError) compare as the builtin they derive from."""
    return next(base for base in error_type.__mro__ if base.__module__ == "builtins")


def _grad_output(row: OpCase, output: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(_seed(row, "grad_output"))
    return rng.uniform(-1.0, 1.0, output.shape).astype(output.dtype)


def _compare_with_torch(row: OpCase, arrays: list[np.ndarray], dtype: str, check: str) -> None:
    """Run lucid and torch on the same arrays; compare outputs and the gradients of backward."""
    import torch

    grad_positions = _grad_positions(row, arrays)
    lucid_inputs = _lucid_inputs(arrays, grad_positions)
    torch_inputs = _torch_inputs(arrays, grad_positions)
    try:
        expected = _call_torch(row, torch_inputs)
    except Exception as torch_error:  # noqa: BLE001  (lucid must refuse the same inputs)
        with pytest.raises(_builtin_base(type(torch_error))):
            _call_lucid(row, lucid_inputs)
        return
    actual = _call_lucid(row, lucid_inputs)
    rtol, atol = _tolerances(row, dtype)
    _assert_close(actual, expected, rtol, atol, f"{row.name}: {check}, output ({dtype})")
    assert _dtype_name(actual) == _dtype_name(expected), (
        f"{row.name}: {check}, output dtype {_dtype_name(actual)} != torch's "
        f"{_dtype_name(expected)} ({dtype})"
    )
    if not (grad_positions and isinstance(expected, torch.Tensor) and expected.requires_grad):
        return
    assert isinstance(actual, lucid.Tensor) and actual.requires_grad, (
        f"{row.name}: {check}, output does not require grad but torch's does ({dtype})"
    )
    grad_output = _grad_output(row, _to_numpy(expected))
    expected.backward(torch.from_numpy(grad_output.copy()))
    actual.backward(lucid.from_numpy(grad_output.copy()))
    for position in grad_positions:
        # An input backward never reaches has a None grad in one library and may have zeros
        # in the other; both mean zero.
        expected_grad = torch_inputs[position].grad
        actual_grad = lucid_inputs[position].grad
        zeros = np.zeros_like(arrays[position])
        _assert_close(
            zeros if actual_grad is None else actual_grad,
            zeros if expected_grad is None else expected_grad,
            rtol,
            atol,
            f"{row.name}: {check}, gradient of input {position} ({dtype})",
        )


# ---------------------------------------------------------------------------- tests
@_rows(_WITH_REFERENCE)
def test_forward_matches_numpy_reference(row: OpCase) -> None:
    arrays = _make_arrays(row, "float64")
    actual = _call_lucid(row, _lucid_inputs(arrays, []))
    expected = _select(row, row.reference(*arrays, **row.kwargs))
    _assert_close(actual, np.asarray(expected), RTOL64, ATOL64, f"{row.name}: forward vs NumPy")


@_rows(_DIFFERENTIABLE)
def test_gradcheck(row: OpCase) -> None:
    arrays = _make_arrays(row, "float64")
    inputs = _lucid_inputs(arrays, _grad_positions(row, arrays))
    try:
        lucid.autograd.gradcheck(lambda *args: _call_lucid(row, list(args)), tuple(inputs))
    except lucid.autograd.GradcheckError as error:
        pytest.fail(f"{row.name}: gradcheck failed (float64)\n{error}")


@_rows(_GRADGRAD)
def test_gradgradcheck(row: OpCase) -> None:
    arrays = _make_arrays(row, "float64")
    inputs = _lucid_inputs(arrays, _grad_positions(row, arrays))
    try:
        lucid.autograd.gradgradcheck(lambda *args: _call_lucid(row, list(args)), tuple(inputs))
    except lucid.autograd.GradcheckError as error:
        pytest.fail(f"{row.name}: gradgradcheck failed (float64)\n{error}")


@dtypes
@_rows(_WITH_TORCH)
def test_matches_torch(row: OpCase, dtype: str, torch_oracle: Any) -> None:
    _compare_with_torch(row, _make_arrays(row, dtype), dtype, "torch parity")


@dtypes
@_rows(_WITH_EXTREMES)
# Non-finite inputs and results are the point here: the sentinel's reports are expected.
@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_extreme_values_match_torch(row: OpCase, dtype: str, torch_oracle: Any) -> None:
    _compare_with_torch(row, _extreme_arrays(row, dtype), dtype, "extreme values")
