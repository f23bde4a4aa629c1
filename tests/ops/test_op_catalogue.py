"""Generic checks for every row of the op catalogue (tests/ops/op_catalogue.py).

Each row yields: forward vs its NumPy reference (float64), gradcheck and gradgradcheck
(float64), parity with PyTorch in float32 and float64 (values, shape, dtype and the gradients
of a seeded random grad_output), and the same parity on extreme values (0, -0.0, ±1e30, ±inf,
nan, the smallest denormal). Rows of the families in LOW_PRECISION_FAMILIES also get both
parity checks in float16 and bfloat16 (the float32 inputs rounded to the dtype), with the
dtype's tolerance (and with PyTorch's oneDNN off for rows that say why); where PyTorch's CPU
build refuses an op in a dtype, lucid must refuse too.
Each of a row's error inputs must raise PyTorch's error type and message in lucid (a strict
expected failure where the input names a `known_gap`), and (where torch is installed) the same
error in PyTorch.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

try:
    import ml_dtypes
except ImportError:  # bfloat16 columns skip without it
    ml_dtypes = None

import lucid
from lucid._core.dtypes import FLOAT_KINDS
from lucid.autograd.forward_ad import _NO_COMPLEX_TANGENTS
from tests.ops.complex_gradient_quirks import TORCH_COMPLEX_GRADIENT_QUIRKS
from tests.ops.op_catalogue import CATALOGUE, ErrorInput, OpCase
from tests.torch_oracle import TORCH_MISSING

DTYPES = ["float32", "float64"]
LOW_PRECISION_DTYPES = ["float16", "bfloat16"]
# Every row runs in complex64 and complex128 too: each float input gets a random imaginary
# part, and lucid must give torch's values and gradients, or refuse as torch refuses (the
# same error type and message).
COMPLEX_DTYPES = ["complex64", "complex128"]
# Catalogue families (tests/ops/catalogue_<family>.py) whose rows get the float16 and bfloat16
# columns: a family joins once its ops follow PyTorch's CPU rules for both dtypes.
LOW_PRECISION_FAMILIES = {
    "arithmetic",
    "convolution",
    "functional",
    "indexing",
    "indices",
    "inplace",
    "linalg",
    "loss",
    "nn",
    "normalization",
    "pointwise",
    "reduction",
    "sampling",
    "selection",
    "shape",
}
# torch.testing.assert_close's default (rtol, atol) per dtype; `_scaled_atol` adds the dtype's
# resolution at the scale of the compared tensor.
LOW_PRECISION_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}
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
_LOW_PRECISION_ROW_IDS = {
    id(row)
    for family in LOW_PRECISION_FAMILIES
    for row in importlib.import_module(f"tests.ops.catalogue_{family}").ROWS
}
_WITH_LOW_PRECISION = [
    row for row in _WITH_TORCH if id(row) in _LOW_PRECISION_ROW_IDS and not row.low_precision_skip
]
_WITH_LOW_PRECISION_EXTREMES = [
    pytest.param(row, dtype, id=f"{row.name}-{dtype}")
    for row in _WITH_LOW_PRECISION
    if row.extremes
    for dtype in LOW_PRECISION_DTYPES
    if dtype != "float16" or not row.float16_extremes_skip
    if dtype != "bfloat16" or not row.bfloat16_extremes_skip
]
_ERROR_INPUTS = [(row, error) for row in CATALOGUE for error in row.error_inputs]
_ERROR_IDS = [
    f"{row.name}-{index}" for row in CATALOGUE for index, _ in enumerate(row.error_inputs)
]
# lucid's side of the error inputs: one whose `known_gap` says how lucid differs is expected to
# fail until lucid follows PyTorch.
_LUCID_ERROR_INPUTS = [
    pytest.param(
        row,
        error,
        id=error_id,
        marks=[pytest.mark.xfail(strict=True, reason=error.known_gap)] if error.known_gap else [],
    )
    for (row, error), error_id in zip(_ERROR_INPUTS, _ERROR_IDS, strict=True)
]


def _rows(rows: list[OpCase]) -> Any:
    return pytest.mark.parametrize("row", rows, ids=[row.name for row in rows])


dtypes = pytest.mark.parametrize("dtype", DTYPES)
low_precision_dtypes = pytest.mark.parametrize("dtype", LOW_PRECISION_DTYPES)
error_inputs = pytest.mark.parametrize(
    "row, error",
    _ERROR_INPUTS,
    ids=_ERROR_IDS,
)


@pytest.fixture(scope="module")
def torch_oracle() -> Any:
    """torch, warmed up: its first backward with an explicit gradient imports sympy (~1 s)."""
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    torch.ones(2, requires_grad=True).exp().backward(torch.ones(2))
    return torch


# --------------------------------------------------------------------------- inputs
def _seed(row: OpCase, purpose: str) -> int:
    return zlib.crc32(f"{row.name}/{purpose}".encode())


def _numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a column; bfloat16 is ml_dtypes' (skipped where it is missing)."""
    if dtype == "bfloat16":
        if lucid.bfloat16.numpy_dtype is None:
            pytest.skip("bfloat16 needs the ml_dtypes package")
        return lucid.bfloat16.numpy_dtype
    return np.dtype(dtype)


def _is_float(array: np.ndarray) -> bool:
    """Floating or complex: an input that gets a gradient, a value compared with tolerance."""
    return array.dtype.kind in FLOAT_KINDS or array.dtype.kind == "c"


def _finfo(dtype: np.dtype) -> Any:
    return ml_dtypes.finfo(dtype) if dtype.kind == "V" else np.finfo(dtype)


def _make_arrays(row: OpCase, dtype: str) -> list[np.ndarray]:
    if dtype in COMPLEX_DTYPES:
        # The real column's inputs as real parts, each float input with imaginary parts drawn
        # from the row's range.
        parts = "float32" if dtype == "complex64" else "float64"
        rng = np.random.default_rng(_seed(row, "imaginary parts"))
        return [
            np.asarray(array + 1j * rng.uniform(row.low, row.high, array.shape)).astype(dtype)
            if _is_float(array)
            else array
            for array in _make_arrays(row, parts)
        ]
    if dtype in LOW_PRECISION_DTYPES:
        # The float32 inputs, rounded: a row's input makers need not know the dtype.
        target = _numpy_dtype(dtype)
        arrays = _make_arrays(row, "float32")
        return [array.astype(target) if _is_float(array) else array for array in arrays]
    rng = np.random.default_rng(_seed(row, "inputs"))
    if row.make_inputs is not None:
        return [np.asarray(array) for array in row.make_inputs(rng, np.dtype(dtype))]
    return [rng.uniform(row.low, row.high, shape).astype(dtype) for shape in row.shapes]


def _grad_positions(row: OpCase, arrays: list[np.ndarray]) -> list[int]:
    if not row.differentiable:
        return []
    if row.grad_inputs is not None:
        return list(row.grad_inputs)
    return [i for i, array in enumerate(arrays) if _is_float(array)]


def _lucid_inputs(arrays: list[np.ndarray], grad_positions: list[int]) -> list[lucid.Tensor]:
    tensors = [lucid.from_numpy(array.copy()) for array in arrays]
    for position in grad_positions:
        tensors[position].requires_grad_()
    return tensors


def _torch_inputs(arrays: list[np.ndarray], grad_positions: list[int]) -> list[Any]:
    tensors = [_torch_tensor(array) for array in arrays]
    for position in grad_positions:
        tensors[position].requires_grad_()
    return tensors


def _torch_tensor(array: np.ndarray) -> Any:
    """A torch tensor of the array's values and dtype (torch reads no ml_dtypes bfloat16)."""
    import torch

    if array.dtype.kind == "V":
        # by its bits: torch's own casts would change the sign of NaN
        bits = torch.from_numpy(np.ascontiguousarray(array).view(np.int16).copy())
        return bits.view(torch.bfloat16).reshape(array.shape)
    return torch.from_numpy(array.copy())


def _extreme_arrays(row: OpCase, dtype: str) -> list[np.ndarray]:
    info = _finfo(_numpy_dtype(dtype))
    # ±1e30 where the dtype holds it; float16 gets values near its largest instead, so that
    # ops still meet finite values whose results overflow.
    large = min(1e30, float(info.max) / 1.1)
    values = [float(info.smallest_subnormal) if v == "denormal" else v for v in EXTREME_PATTERN]
    values = [np.copysign(large, v) if abs(v) == 1e30 else v for v in values]
    pattern = np.array(values).astype(_numpy_dtype(dtype))
    arrays = []
    for index, array in enumerate(_make_arrays(row, dtype)):
        if _is_float(array):
            tiled = np.resize(np.roll(pattern, -3 * index), array.size)
            array = tiled.reshape(array.shape).astype(array.dtype)
        arrays.append(array)
    return arrays


def _error_call_inputs(error: ErrorInput, library: Any) -> list[Any]:
    """The error input's arguments as `library`'s tensors (lucid or torch)."""
    rng = np.random.default_rng(0)

    def convert(value: Any) -> Any:
        if isinstance(value, tuple):
            return library.from_numpy(rng.uniform(-1.0, 1.0, value))
        if isinstance(value, np.ndarray):
            return library.from_numpy(value.copy())
        if isinstance(value, list):
            return [convert(item) for item in value]
        return value

    return [convert(value) for value in error.inputs]


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
        # torch's conjugates and negations may be lazy bits its numpy() refuses
        value = value.detach().cpu().resolve_conj().resolve_neg()
        if str(value.dtype) == "torch.bfloat16":
            return value.float().numpy().astype(lucid.bfloat16.numpy_dtype)
        return value.numpy()
    if isinstance(value, list | tuple):
        return np.asarray([_to_numpy(item) for item in value])
    return np.asarray(value)


def _size(value: Any) -> int:
    return int(np.size(_to_numpy(value)))


def _dtype_name(value: Any) -> str:
    """'float32' for lucid.float32, torch.float32 and np.float32 alike."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return type(value).__name__
    return str(dtype).rsplit(".", 1)[-1]


def _tolerances(row: OpCase, dtype: str) -> tuple[float, float]:
    if dtype == "float32":
        return row.rtol32, row.atol32
    if dtype == "complex64":
        # a complex product is four float32 products and two sums: twice the rounding
        return 2 * row.rtol32, 2 * row.atol32
    if dtype in LOW_PRECISION_TOLERANCES:
        return LOW_PRECISION_TOLERANCES[dtype]
    return RTOL64, ATOL64


def _scaled_atol(expected: Any, dtype: str, atol: float) -> float:
    """`atol`, plus, for float16 and bfloat16, one unit of the dtype's resolution at the
    largest finite |value| expected.

    Both libraries round intermediates to the dtype at the scale of the values they combine
    (a difference that cancels, a gradient made of several rounded factors, a broadcast
    operand's gradient summed over rounded per-batch products), so where a result is small
    beside its terms an error of a unit of that scale is rounding, not a wrong answer.
    """
    if dtype not in LOW_PRECISION_DTYPES:
        return atol
    array = _to_numpy(expected).astype(np.float64)
    finite = np.abs(array[np.isfinite(array)])
    if finite.size == 0:
        return atol
    return atol + float(_finfo(_numpy_dtype(dtype)).eps) * float(finite.max())


def _assert_close(actual: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    """Same shape; floats within tolerance with NaN and ±inf in the same places; rest equal."""
    actual_array = _to_numpy(actual)
    expected_array = _to_numpy(expected)
    assert actual_array.shape == expected_array.shape, (
        f"{what}: shape {actual_array.shape} != expected {expected_array.shape}"
    )
    if _is_float(actual_array) or _is_float(expected_array):
        if actual_array.dtype.kind == "V" or expected_array.dtype.kind == "V":
            # NumPy's comparisons do not know bfloat16: compare its exact float32 values.
            actual_array = actual_array.astype(np.float32)
            expected_array = expected_array.astype(np.float32)
        np.testing.assert_allclose(
            actual_array, expected_array, rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )
    else:
        np.testing.assert_array_equal(actual_array, expected_array, err_msg=what)


def _on_magnitudes(row: OpCase, arrays: list[np.ndarray], grad_positions: list[int]) -> Any:
    """For a row that `sums`: (torch inputs, output) of its op on absolute values.

    The op is a sum of products of its float inputs and float coefficients, so the same op on
    their absolute values adds up the magnitudes of each output's terms, and its backward on
    the absolute grad_output those of each gradient's terms. torch (the oracle) computes them
    in the row's dtype, so a product that overflows counts as an infinite term.
    """
    absolute = [np.asarray(np.abs(a)) if _is_float(a) else a for a in arrays]
    tensors = _torch_inputs(absolute, grad_positions)
    kwargs = {k: abs(v) if isinstance(v, float) else v for k, v in row.kwargs.items()}
    return tensors, _select(row, row.torch_op(*tensors, **kwargs))


def _assert_sum_close(
    actual: Any,
    expected: Any,
    magnitudes: np.ndarray,
    terms: int,
    rtol: float,
    atol: float,
    what: str,
) -> None:
    """Compare sums of extreme values only where the result does not depend on the order.

    Two correct kernels may add the same terms in different orders (a BLAS adding into the
    bias first, pairwise vs sequential sums, FMA or not). Where 1e30 cancels -1e30 the result
    is rounding noise of the order: torch's addmm gives -1.5 on one CPU where NumPy gives 0.0.
    The forward error of any summation order of n terms is at most (n - 1) * u * M, with u the
    unit roundoff and M the sum of the terms' absolute values (Higham, Accuracy and Stability
    of Numerical Algorithms, 4.2), so:
    - finiteness must match torch everywhere: terms that are all finite and whose magnitudes
      sum to a finite M give a finite result in every order, and an infinite or NaN term
      leaves every order non-finite;
    - NaN and ±inf must match torch wherever no infinite term meets another: a NaN term (a
      NaN input, 0 * inf) makes every order NaN, and where M is finite there is nothing to
      meet. Where M is inf (infinite or overflowing terms) the kind is the order's: +inf and
      -inf terms give NaN when they meet, and an FMA that adds an overflowing product exactly
      gives ±inf where rounding the product first gives NaN, so any non-finite value passes;
    - finite values are compared with the row's tolerance widened by that bound,
      (n - 1) * u * M, with n bounded by the number of input elements: where M is of the
      order of the result (no cancellation) the widening is below the tolerance, and where
      huge terms cancel it covers the order-dependent noise.
    """
    actual_array = _to_numpy(actual)
    expected_array = _to_numpy(expected)
    assert actual_array.shape == expected_array.shape, (
        f"{what}: shape {actual_array.shape} != expected {expected_array.shape}"
    )
    eps = float(_finfo(expected_array.dtype).eps)
    if expected_array.dtype.kind == "V":
        # NumPy's comparisons do not know bfloat16: compare its exact float32 values.
        actual_array = actual_array.astype(np.float32)
        expected_array = expected_array.astype(np.float32)
        magnitudes = np.asarray(magnitudes).astype(np.float32)
    finite = np.isfinite(expected_array)
    mismatched = np.argwhere(np.isfinite(actual_array) != finite)
    assert mismatched.size == 0, (
        f"{what}: finite where torch is not, or the reverse, at {mismatched.tolist()}: "
        f"lucid {actual_array.ravel().tolist()}, torch {expected_array.ravel().tolist()}"
    )
    kind_is_fixed = ~finite & ~np.isinf(magnitudes)
    np.testing.assert_array_equal(
        actual_array[kind_is_fixed], expected_array[kind_is_fixed], err_msg=f"{what}: NaN/inf"
    )
    # (a row whose op scales by a negative constant gives negative "magnitudes")
    bound = (terms - 1) * eps / 2 * np.abs(magnitudes[finite]).astype(np.float64)
    error = np.abs(actual_array[finite] - expected_array[finite])
    allowed = atol + rtol * np.abs(expected_array[finite]) + bound
    assert np.all(error <= allowed), (
        f"{what}: lucid {actual_array[finite].tolist()} != torch "
        f"{expected_array[finite].tolist()} beyond {allowed.tolist()}"
    )


@contextlib.contextmanager
def _torch_kernels(row: OpCase, dtype: str) -> Iterator[None]:
    """PyTorch's kernels for a column: as it chooses them, or without oneDNN for the float16
    and bfloat16 columns of a row that says why (`low_precision_without_onednn`).

    The switch is read when PyTorch picks a kernel, in backward as much as in forward, so it
    spans the whole comparison.
    """
    import torch

    if dtype not in LOW_PRECISION_DTYPES or not row.low_precision_without_onednn:
        yield
        return
    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = enabled


def _builtin_base(error_type: type) -> type:
    """torch's own error classes (e.g. LinAlgError) compare as the builtin they derive from."""
    return next(base for base in error_type.__mro__ if base.__module__ == "builtins")


def _grad_output(row: OpCase, output: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(_seed(row, "grad_output"))
    values = rng.uniform(-1.0, 1.0, output.shape)
    if output.dtype.kind == "c":
        values = values + 1j * rng.uniform(-1.0, 1.0, output.shape)
    return np.asarray(values).astype(output.dtype)


def _compare_with_torch(
    row: OpCase,
    arrays: list[np.ndarray],
    dtype: str,
    check: str,
    order_dependent_sums: bool = False,
) -> None:
    """Run lucid and torch on the same arrays; compare outputs and the gradients of backward.

    With `order_dependent_sums`, the outputs of a row that `sums` are compared as sums whose
    value may depend on the summation order (`_assert_sum_close`).
    """
    import torch

    grad_positions = _grad_positions(row, arrays)
    lucid_inputs = _lucid_inputs(arrays, grad_positions)
    torch_inputs = _torch_inputs(arrays, grad_positions)
    try:
        expected = _call_torch(row, torch_inputs)
    except Exception as torch_error:  # noqa: BLE001  (lucid must refuse the same inputs)
        with pytest.raises(_builtin_base(type(torch_error))) as raised:
            _call_lucid(row, lucid_inputs)
        if dtype in COMPLEX_DTYPES:
            message = str(torch_error).replace("torch", "lucid")
            assert str(raised.value) == message, (
                f"{row.name}: lucid refuses {dtype} with {str(raised.value)!r}, torch with "
                f"{message!r}"
            )
        return
    actual = _call_lucid(row, lucid_inputs)
    rtol, atol = _tolerances(row, dtype)
    what = f"{row.name}: {check}, output ({dtype})"
    sums = order_dependent_sums and row.sums
    if sums:
        # a bound on the number of terms of any output or gradient element
        terms = sum(array.size for array in arrays if _is_float(array)) + _size(expected)
        absolute_inputs, absolute_output = _on_magnitudes(row, arrays, grad_positions)
        magnitudes = _to_numpy(absolute_output)
        _assert_sum_close(actual, expected, magnitudes, terms, rtol, atol, what)
    else:
        _assert_close(actual, expected, rtol, _scaled_atol(expected, dtype, atol), what)
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
    expected.backward(_torch_tensor(grad_output))
    actual.backward(lucid.from_numpy(grad_output.copy()))
    if sums:
        absolute_output.backward(_torch_tensor(np.asarray(np.abs(grad_output))))
    for position in grad_positions:
        # An input backward never reaches has a None grad in one library and may have zeros
        # in the other; both mean zero.
        expected_grad = torch_inputs[position].grad
        actual_grad = lucid_inputs[position].grad
        zeros = np.zeros_like(arrays[position])
        actual_grad = zeros if actual_grad is None else actual_grad
        expected_grad = zeros if expected_grad is None else expected_grad
        what = f"{row.name}: {check}, gradient of input {position} ({dtype})"
        if sums:
            magnitude = absolute_inputs[position].grad
            magnitudes = zeros if magnitude is None else _to_numpy(magnitude)
            _assert_sum_close(actual_grad, expected_grad, magnitudes, terms, rtol, atol, what)
        else:
            grad_atol = _scaled_atol(expected_grad, dtype, atol)
            _assert_close(actual_grad, expected_grad, rtol, grad_atol, what)


def _involves_complex(row: OpCase) -> bool:
    """Whether the row's float64 call has a complex input, output or intermediate (a node of
    its graph with a complex output)."""
    arrays = _make_arrays(row, "float64")
    result = _call_lucid(row, _lucid_inputs(arrays, _grad_positions(row, arrays)))
    outputs = result if isinstance(result, tuple) else (result,)
    pending = [out.grad_fn for out in outputs if isinstance(out, lucid.Tensor)]
    seen = set()
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        metas = getattr(node, "output_meta", None) or ()
        if any(meta is not None and meta[1].kind == "c" for meta in metas):
            return True
        pending.extend(next_node for next_node, _ in node.next_functions)
    return any(array.dtype.kind == "c" for array in arrays)


def _runs_on_complex(row: OpCase) -> bool:
    """Whether lucid runs the row's op on complex inputs (where it refuses them,
    test_complex_matches_torch checks that torch refuses them too)."""
    arrays = _make_arrays(row, "complex128")
    try:
        _call_lucid(row, _lucid_inputs(arrays, _grad_positions(row, arrays)))
    except Exception:  # noqa: BLE001  (any refusal: its error is checked against torch's)
        return False
    return True


_COMPLEX_DIFFERENTIABLE = [
    row
    for row in _DIFFERENTIABLE
    if row.name not in TORCH_COMPLEX_GRADIENT_QUIRKS and _runs_on_complex(row)
]


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


@_rows(_DIFFERENTIABLE)
def test_forward_ad_gradcheck(row: OpCase) -> None:
    """Forward mode (lucid.autograd.forward_ad) gives the Jacobian finite differences give.

    An op whose backward is not itself differentiable (no gradgradcheck) has no rule to derive
    its jvp from; it either has a rule of its own or raises PyTorch's NotImplementedError for
    an op without forward AD, never a wrong tangent."""
    arrays = _make_arrays(row, "float64")
    inputs = _lucid_inputs(arrays, _grad_positions(row, arrays))
    try:
        lucid.autograd.gradcheck(
            lambda *args: _call_lucid(row, list(args)),
            tuple(inputs),
            check_forward_ad=True,
            check_backward_ad=False,
        )
    except lucid.autograd.GradcheckError as error:
        pytest.fail(f"{row.name}: forward-mode gradcheck failed (float64)\n{error}")
    except NotImplementedError as error:
        if str(error) == _NO_COMPLEX_TANGENTS:
            # complex inputs or intermediates: refused, never a wrong tangent
            assert _involves_complex(row), f"{row.name}: {error}"
            return
        if row.gradgrad:
            raise
        assert re.fullmatch(
            r"Trying to use forward AD with \w+ that does not support it because it has not "
            r"been implemented yet\.",
            str(error),
        ), f"{row.name}: {error}"


@dtypes
@_rows(_WITH_TORCH)
def test_matches_torch(row: OpCase, dtype: str, torch_oracle: Any) -> None:
    _compare_with_torch(row, _make_arrays(row, dtype), dtype, "torch parity")


@pytest.mark.parametrize(
    "row, dtype",
    [
        pytest.param(row, dtype, id=f"{row.name}-{dtype}")
        for row in _WITH_EXTREMES
        for dtype in DTYPES
        if dtype != "float32" or not row.float32_extremes_skip
    ],
)
# Non-finite inputs and results are the point here: the sentinel's reports are expected.
@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_extreme_values_match_torch(row: OpCase, dtype: str, torch_oracle: Any) -> None:
    _compare_with_torch(
        row, _extreme_arrays(row, dtype), dtype, "extreme values", order_dependent_sums=True
    )


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@_rows(_WITH_TORCH)
def test_complex_matches_torch(row: OpCase, dtype: str, torch_oracle: Any) -> None:
    _compare_with_torch(row, _make_arrays(row, dtype), dtype, "complex parity")


@_rows(_COMPLEX_DIFFERENTIABLE)
def test_complex_gradcheck(row: OpCase) -> None:
    """Each backward on complex inputs gives the conjugate Wirtinger derivatives that finite
    differences along the real and imaginary parts give (PyTorch's convention)."""
    arrays = _make_arrays(row, "complex128")
    inputs = _lucid_inputs(arrays, _grad_positions(row, arrays))
    try:
        lucid.autograd.gradcheck(lambda *args: _call_lucid(row, list(args)), tuple(inputs))
    except lucid.autograd.GradcheckError as error:
        pytest.fail(f"{row.name}: gradcheck failed (complex128)\n{error}")


@_rows([row for row in _COMPLEX_DIFFERENTIABLE if row.gradgrad])
def test_complex_gradgradcheck(row: OpCase) -> None:
    arrays = _make_arrays(row, "complex128")
    inputs = _lucid_inputs(arrays, _grad_positions(row, arrays))
    try:
        lucid.autograd.gradgradcheck(lambda *args: _call_lucid(row, list(args)), tuple(inputs))
    except lucid.autograd.GradcheckError as error:
        pytest.fail(f"{row.name}: gradgradcheck failed (complex128)\n{error}")


@low_precision_dtypes
@_rows(_WITH_LOW_PRECISION)
def test_low_precision_matches_torch(row: OpCase, dtype: str, torch_oracle: Any) -> None:
    with _torch_kernels(row, dtype):
        _compare_with_torch(row, _make_arrays(row, dtype), dtype, "torch parity")


@pytest.mark.parametrize("row, dtype", _WITH_LOW_PRECISION_EXTREMES)
@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_low_precision_extreme_values_match_torch(
    row: OpCase, dtype: str, torch_oracle: Any
) -> None:
    with _torch_kernels(row, dtype):
        _compare_with_torch(
            row, _extreme_arrays(row, dtype), dtype, "extreme values", order_dependent_sums=True
        )


@pytest.mark.parametrize("row, error", _LUCID_ERROR_INPUTS)
def test_error_input_raises_pytorchs_error(row: OpCase, error: ErrorInput) -> None:
    with pytest.raises(error.error_type, match=error.match):
        row.op(*_error_call_inputs(error, lucid), **error.kwargs)


@error_inputs
def test_error_input_is_pytorchs_error(row: OpCase, error: ErrorInput, torch_oracle: Any) -> None:
    """The catalogue's expected error is the one PyTorch raises (its names read as lucid's)."""
    with pytest.raises(Exception) as raised:  # noqa: PT011  (the type is checked below)
        row.torch_op(*_error_call_inputs(error, torch_oracle), **error.kwargs)
    assert _builtin_base(raised.type) is _builtin_base(error.error_type), (
        f"{row.name}: PyTorch raises {raised.type.__name__}, the row expects "
        f"{error.error_type.__name__}"
    )
    message = str(raised.value).replace("torch", "lucid")
    assert re.search(error.match, message), (
        f"{row.name}: PyTorch's message {message!r} does not match {error.match!r}"
    )


def test_sums_of_extremes_compare_only_what_the_order_cannot_change():
    def check(actual, expected, magnitudes):
        arrays = [np.array(values, dtype=np.float64) for values in (actual, expected, magnitudes)]
        _assert_sum_close(*arrays, terms=8, rtol=RTOL64, atol=ATOL64, what="sum")

    check([0.0], [-1.5], [2e30])  # 1e30 cancelled -1e30: the rest is the order's noise
    check([np.nan, -np.inf], [np.inf, np.nan], [np.inf, np.inf])  # inf met -inf, or not
    with pytest.raises(AssertionError):
        check([0.0], [-1.5], [2.5])  # well-conditioned: the value counts
    with pytest.raises(AssertionError):
        check([0.0], [np.inf], [np.inf])  # finite where torch is not
    with pytest.raises(AssertionError):
        check([np.inf], [np.nan], [np.nan])  # a NaN term makes every order NaN


def test_low_precision_tolerance_allows_one_unit_at_the_tensors_scale_and_no_more():
    if lucid.bfloat16.numpy_dtype is None:
        pytest.skip("bfloat16 needs the ml_dtypes package")
    bfloat16 = lucid.bfloat16.numpy_dtype
    rtol, atol = LOW_PRECISION_TOLERANCES["bfloat16"]

    def check(actual, expected):
        actual, expected = (np.array(v, np.float32).astype(bfloat16) for v in (actual, expected))
        _assert_close(actual, expected, rtol, _scaled_atol(expected, "bfloat16", atol), "x")

    # a result that cancelled to 0.05 beside a 4.0: one unit at 4.0 (2**-5) is rounding
    check([4.0, 0.05], [4.0, 0.05 + 2.0**-6])
    with pytest.raises(AssertionError):
        check([4.0, 0.05], [4.0, 0.05 + 2.0**-4])  # two units at 4.0 is an error
    with pytest.raises(AssertionError):
        check([1.0], [1.03125])  # one unit at 1.0 plus the rtol is 0.024, short of 0.031
