"""arange, linspace and logspace equal PyTorch 2.13's CPU results bit for bit.

PyTorch's AVX2 and AVX-512 kernels fuse `start + step * i` into one rounding, which lucid
follows (lucid/factories.py); its baseline kernels, for CPUs without AVX2, round twice, so the
parity tests skip there.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.factories import _fma, _fma32
from tests.torch_oracle import requires_torch, torch

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTEGERS = ["int64", "int32", "int16", "int8", "uint8"]

LINSPACE = [
    (-math.pi, math.pi, 2000),
    (0, 1, 0),
    (0, 1, 1),
    (0, 1, 2),
    (0, 1, 3),
    (0, 1, 8),
    (0.1, 0.7, 101),
    (-3.3, 7.7, 555),
    (1e-3, 1e3, 999),
    (5, -2, 64),
    (5, -2, 65),  # start > end, odd count
    (1e10, 1e10 + 1, 33),
    (-1e-30, 1e-30, 77),  # tiny range
    (-1e30, 1e30, 1001),  # huge range
    (2.5, 2.5, 9),
    (-1, 1, 2**16 + 3),
    (0, 255, 256),
    (-5, 5, 4),  # a negative integer wraps in uint8
    (0.7, 10.9, 5),  # integer dtypes truncate start and end
    (3, -7, 11),
    (0, 60000, 7),
    (-0.0, 0.0, 4),
]
LOGSPACE = [
    (-math.pi, math.pi, 2000),
    (0, 1, 0),
    (0, 1, 1),
    (0, 1, 2),
    (0, 3, 7),
    (-10, 10, 101),
    (-3.3, 7.7, 555),
    (2, 2, 5),
    (-300, 300, 1001),
    (0, 400, 5),  # overflows to inf
    (1.5, -2.5, 64),
]
ARANGE = [
    (0, 1, 0.1),
    (-3.3, 7.7, 0.37),
    (0, 100, 0.01),
    (1e-3, 1e3, 0.777),
    (5, -2, -0.3),
    (0, 10, 1),
    (0, 30000, 1.1),
    (10, 0, -3),
    (-1e6, 1e6, 12345.678),
    (0, 5, 1.5),  # int64 counts in truncated integers, other integer dtypes in double
    (0.5, 3.7, 1),
    (-2.5, 3, 1.0),
    (0, 300, 100),
    (-5, 5, 1),  # wraps in uint8
    (0, 1, 1e-4),
    (1e15, 1e15 + 1000, 7.3),
    (0, 1000, 1 / 3),
    (-0.0, -3, -1),
]


def _skip_unless_torch_fuses() -> None:
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("PyTorch runs its baseline kernels here, which round twice where lucid fuses")


def _bits(array: np.ndarray) -> np.ndarray:
    """The raw bits, so that -0.0 differs from 0.0 and NaNs compare by pattern."""
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def _torch_numpy(tensor: Any) -> np.ndarray:
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(lucid.bfloat16.numpy_dtype)
    return tensor.numpy()


def _outcome(function: Any, args: tuple, dtype: Any, **kwargs: Any) -> Any:
    try:
        result = function(*args, dtype=dtype, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error is part of what is compared
        return type(error), str(error)
    return result


def _assert_same(name: str, args: tuple, dtype: str, **kwargs: Any) -> None:
    expected = _outcome(getattr(torch, name), args, getattr(torch, dtype), **kwargs)
    actual = _outcome(getattr(lucid, name), args, getattr(lucid, dtype), **kwargs)
    if isinstance(expected, tuple) or isinstance(actual, tuple):
        assert actual == expected, (name, args, dtype)
        return
    expected, actual = _torch_numpy(expected), actual.numpy()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    differ = np.flatnonzero(_bits(actual) != _bits(expected))
    assert differ.size == 0, (
        f"{name}{args} {dtype}: {differ.size} values differ, first at {differ[:5]}: "
        f"{actual[differ[:3]]} != torch's {expected[differ[:3]]}"
    )


@requires_torch
@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
def test_linspace_is_torchs_bit_for_bit(dtype):
    _skip_unless_torch_fuses()
    for args in LINSPACE:
        _assert_same("linspace", args, dtype)


@requires_torch
@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
def test_logspace_is_torchs_bit_for_bit(dtype):
    # logspace is compiled once and unfused: no skip on CPUs without AVX2
    for args in LOGSPACE:
        for base in (10.0, 2.0, math.e, 0.5, 3.7):
            _assert_same("logspace", args, dtype, base=base)


@requires_torch
@pytest.mark.parametrize("dtype", FLOATS + INTEGERS)
def test_arange_is_torchs_bit_for_bit(dtype):
    _skip_unless_torch_fuses()
    for args in ARANGE:
        _assert_same("arange", args, dtype)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_a_long_arange_is_torchs_with_one_torch_thread(dtype):
    _skip_unless_torch_fuses()
    # beyond 32768 elements PyTorch splits the range among its threads; one thread keeps it whole
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _assert_same("arange", (-3.3, 20000.7, 0.37), dtype)
    finally:
        torch.set_num_threads(threads)


@requires_torch
@pytest.mark.parametrize(
    ("name", "args", "dtype"),
    [
        ("arange", (0, 2, 0.5), "int64"),  # the step truncates to 0
        ("arange", (0, 2, 0), "float32"),
        ("arange", (0, math.inf), "float32"),
        ("arange", (0, -2, 1), "float32"),
        ("arange", (0, 3), "bool"),
        ("arange", (0, 1, math.nan), "float32"),
        ("linspace", (0, 1, 3), "bool"),
        ("linspace", (0, 1, 1), "bool"),
        ("linspace", (0, 300, 4), "uint8"),
        ("linspace", (-5.0, 5, 4), "uint8"),  # a negative float does not wrap
        ("linspace", (0, 1e39, 3), "float32"),
        ("linspace", (0, 1e39, 1), "float32"),  # one step converts only the start
        ("linspace", (0, 70000, 3), "float16"),
        ("linspace", (0, 1, -1), "float32"),
        ("logspace", (0, 1, 3), "bool"),
        ("logspace", (0, 10, 1), "float16"),
        ("logspace", (0, 1, -1), "float32"),
    ],
)
def test_errors_and_edge_cases_are_torchs(name, args, dtype):
    _assert_same(name, args, dtype)


def test_fma_rounds_once():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        a, b, c = rng.standard_normal(3) * 2.0 ** rng.integers(-200, 200, 3)
        if rng.random() < 0.3:
            c = -a * b * (1 + 1e-13 * rng.standard_normal())  # heavy cancellation
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        assert float(_fma(a, b, c)) == float(exact)
    for _ in range(2000):
        a, b, c = (rng.standard_normal(3) * 2.0 ** rng.integers(-40, 40, 3)).astype(np.float32)
        exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
        got = _fma32(a, b, c)[()]
        error = abs(Fraction(float(got)) - exact)
        for neighbour in np.nextafter(got, np.float32([-np.inf, np.inf])):
            assert error <= abs(Fraction(float(neighbour)) - exact)


def test_fma_keeps_the_sign_of_an_exact_zero_and_passes_infinities():
    assert math.copysign(1.0, float(_fma(-1.0, 0, -0.0))) == -1.0
    assert math.copysign(1.0, float(_fma(1.0, 0, -0.0))) == 1.0
    assert np.isnan(_fma(np.inf, 0, 1.0))
    assert float(_fma(np.inf, 2, 1.0)) == np.inf
