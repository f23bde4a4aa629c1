"""Accuracy and edge cases of the vectorized erf and erfc (lucid/ops/_special.py) against the
standard library's math.erf and math.erfc."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lucid.ops import _special

_TINY = np.nextafter(0.0, 1.0)  # the smallest subnormal double
# The interval bounds of the method, the tiny-argument thresholds of the C code and the points
# where erf saturates and erfc underflows.
_BOUNDARIES = np.array(
    [0.25, 0.84375, 1.25, _special._FAR_ERF, _special._FAR_ERFC, 6.0, 26.5, 27.3, 28.0]
    + [2.0**-1022, 2.0**-56, 2.0**-28, 2.0**-1]
)

_reference_erf = np.frompyfunc(math.erf, 1, 1)
_reference_erfc = np.frompyfunc(math.erfc, 1, 1)


def _reference(function, x: np.ndarray) -> np.ndarray:
    return (_reference_erf if function is _special.erf else _reference_erfc)(x).astype(np.float64)


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many doubles lie between a and b (0 when equal, -0 and +0 equal)."""

    def ordered(v: np.ndarray) -> np.ndarray:
        bits = v.view(np.int64)
        return np.where(bits < 0, np.int64(-(2**63)) - bits, bits)

    return np.abs(ordered(a) - ordered(b))


@pytest.fixture(scope="module")
def grid() -> np.ndarray:
    """Dense and edge arguments, shuffled so that every block mixes all intervals."""
    rng = np.random.default_rng(20240601)
    edges = np.concatenate(
        [_BOUNDARIES, np.nextafter(_BOUNDARIES, 0.0), np.nextafter(_BOUNDARIES, 30.0)]
    )
    tiny = np.logspace(-300, 0, 20_000)
    points = np.concatenate(
        [np.linspace(-30.0, 30.0, 200_001), tiny, -tiny, edges, -edges, [_TINY, -_TINY, 0.0, -0.0]]
    )
    return rng.permutation(points)


@pytest.mark.parametrize("function", [_special.erf, _special.erfc], ids=["erf", "erfc"])
def test_float64_within_two_ulp_of_math(grid: np.ndarray, function) -> None:
    distance = _ulp_distance(function(grid), _reference(function, grid))
    worst = int(np.argmax(distance))
    assert distance[worst] <= 2, f"{distance[worst]} ulp at x = {grid[worst]!r}"


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(1).normal(size=30_000),  # the tail mostly below 1/0.35
        np.linspace(-0.84, 0.84, 1001),  # one interval only, each in turn
        np.linspace(0.85, 1.24, 1001),
        np.linspace(-30.0, -1.25, 1001),
        np.linspace(1.25, 2.85, 1001),
    ],
    ids=["gaussian", "small", "middle", "tail", "near-tail"],
)
@pytest.mark.parametrize("function", [_special.erf, _special.erfc], ids=["erf", "erfc"])
def test_float64_within_two_ulp_of_math_by_interval(x: np.ndarray, function) -> None:
    assert _ulp_distance(function(x), _reference(function, x)).max() <= 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("function", [_special.erf, _special.erfc], ids=["erf", "erfc"])
def test_result_does_not_depend_on_blocking(monkeypatch, grid: np.ndarray, function, dtype) -> None:
    # small blocks exercise the blocks that hold one interval only, and the partial last block
    x = np.concatenate([grid[:30_000], np.random.default_rng(2).normal(size=20_000)]).astype(dtype)
    whole = function(x)
    monkeypatch.setattr(_special, "_BLOCK", 999)
    np.testing.assert_array_equal(function(x), whole)


def test_erfc_keeps_relative_accuracy_in_the_far_tail() -> None:
    x = np.array([5.0, 10.0, 15.0, 20.0, 26.0])
    # erfc at these points, to 17 digits
    expected = np.array(
        [
            1.5374597944280349e-12,
            2.0884875837625448e-45,
            7.2129941724512067e-100,
            5.3958656116079009e-176,
            5.6631924088561428e-296,
        ]
    )
    np.testing.assert_allclose(_special.erfc(x), expected, rtol=4e-16, atol=0.0)


def test_erfc_underflows_to_zero_only_where_math_is_below_two_subnormals() -> None:
    x = np.linspace(26.0, 28.5, 20_001)
    result = _special.erfc(x)
    reference = _reference(_special.erfc, x)
    assert np.all(result[reference >= 2 * _TINY] > 0.0)
    assert np.all(result[reference == 0.0] == 0.0)
    assert _special.erfc(np.array([28.0, 1e300, np.inf])).tolist() == [0.0, 0.0, 0.0]


def test_erf_is_exactly_odd(grid: np.ndarray) -> None:
    np.testing.assert_array_equal(_special.erf(-grid), -_special.erf(grid))


def test_special_values() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    erf = _special.erf(x)
    erfc = _special.erfc(x)
    assert erf[:4].tolist() == [0.0, 0.0, 1.0, -1.0]
    assert not np.signbit(erf[0]) and np.signbit(erf[1])
    assert np.isnan(erf[4])
    assert erfc[:4].tolist() == [1.0, 1.0, 0.0, 2.0]
    assert np.isnan(erfc[4])
    assert _special.erf(np.array([6.0, -1e300])).tolist() == [1.0, -1.0]
    assert _special.erfc(np.array([-6.0, -1e300])).tolist() == [2.0, 2.0]


def _low_precision_ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    bits = np.dtype(f"int{8 * a.dtype.itemsize}")

    def ordered(v: np.ndarray) -> np.ndarray:
        signed = v.view(bits).astype(np.int64)
        return np.where(signed < 0, -(2 ** (8 * a.dtype.itemsize - 1)) - signed, signed)

    return np.abs(ordered(a) - ordered(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("function", [_special.erf, _special.erfc], ids=["erf", "erfc"])
def test_low_precision_is_the_float64_result_rounded(dtype, function) -> None:
    rng = np.random.default_rng(7)
    info = np.finfo(dtype)
    special = [0.0, -0.0, info.tiny, info.smallest_subnormal, info.max, -info.max, 1.25, -1.25]
    x = np.concatenate(
        [
            rng.normal(scale=2.0, size=20_000),
            rng.uniform(-12.0, 12.0, 20_000),
            np.nextafter(np.array([1.25, 10.1], dtype=dtype), np.array(0.0, dtype=dtype)),
            np.array(special, dtype=np.float64),
        ]
    ).astype(dtype)
    # most elements below 1.25 in one call, most above in the other: both ways of splitting
    narrow = rng.normal(scale=0.7, size=20_000).astype(dtype)
    result = np.concatenate([function(narrow), function(x)])
    x = np.concatenate([narrow, x])
    assert result.dtype == dtype
    # the short approximations for 32 bits and less are off by one unit only next to ties
    distance = _low_precision_ulp_distance(result, function(x.astype(np.float64)).astype(dtype))
    assert distance.max() <= 1
    assert np.count_nonzero(distance) <= x.size // 1000
    reference = _reference(function, x.astype(np.float64)).astype(dtype)
    assert _low_precision_ulp_distance(result, reference).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_low_precision_special_values(dtype) -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 11.0, -11.0], dtype=dtype)
    erf = _special.erf(x)
    erfc = _special.erfc(x)
    assert erf[:4].tolist() == [0.0, 0.0, 1.0, -1.0] and np.signbit(erf[1])
    assert erfc[:4].tolist() == [1.0, 1.0, 0.0, 2.0]
    assert np.isnan(erf[4]) and np.isnan(erfc[4])
    assert erf[5:].tolist() == [1.0, -1.0] and erfc[5:].tolist() == [0.0, 2.0]
    np.testing.assert_array_equal(_special.erf(-x[:4]), -erf[:4])


@pytest.mark.parametrize("function", [_special.erf, _special.erfc], ids=["erf", "erfc"])
def test_shapes_and_layouts(function) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.normal(scale=3.0, size=(40, 30))
    expected = function(matrix.ravel()).reshape(matrix.shape)
    np.testing.assert_array_equal(function(matrix.T), expected.T)
    np.testing.assert_array_equal(function(matrix[::3, 1::2]), expected[::3, 1::2])
    scalar = function(np.array(0.5, dtype=np.float32))
    assert scalar.shape == () and scalar.dtype == np.float32
    assert scalar == np.float32(_reference(function, np.array([0.5]))[0])
    for shape in [(0,), (2, 0, 3)]:
        empty = function(np.empty(shape, dtype=np.float16))
        assert empty.shape == shape and empty.dtype == np.float16
    source = np.linspace(-3.0, 3.0, 11)
    before = source.copy()
    function(source)
    np.testing.assert_array_equal(source, before)


def test_integer_input_is_rejected() -> None:
    with pytest.raises(TypeError, match="floating-point"):
        _special.erf(np.arange(3))
