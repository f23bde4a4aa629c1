"""lucid.testing: assert_close and make_tensor, with torch.testing's tolerances, ranges and
messages, for tests of code written against lucid.

Example::

    from lucid.testing import assert_close, make_tensor
    x = make_tensor(2, 3, dtype=lucid.float32, device="cpu")
    assert_close(x * 1.0, x)
"""

from __future__ import annotations

import cmath
import collections.abc
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from lucid import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# {dtype: (rtol, atol)}: torch's defaults, about the float format's resolution near 1
_DTYPE_PRECISIONS = {
    lucid.float16: (0.001, 1e-5),
    lucid.bfloat16: (0.016, 1e-5),
    lucid.float32: (1.3e-6, 1e-5),
    lucid.float64: (1e-7, 1e-7),
}
# Python numbers are compared with the tolerances of the dtype torch gives them; complex numbers
# (which lucid tensors cannot hold) get complex128's, the same as float64's.
_NUMBER_PRECISIONS = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed check, carried to assert_close with the position of the item that failed."""

    def __init__(self, error_type: type[Exception], message: str, item: tuple[Any, ...]) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.item = item

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.error_type(msg)
        message = self.message
        if self.item:
            where = "".join(str([key]) for key in self.item)
            message += f"\n\nThe failure occurred for item {where}"
        return self.error_type(msg(message) if callable(msg) else message)


def _tolerances(
    precisions: list[tuple[float, float]], rtol: float | None, atol: float | None, item: tuple
) -> tuple[float, float]:
    # Both or neither: with only atol=0 given, a loose default rtol would still let values pass.
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Mismatch(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
            item,
        )
    if rtol is not None:
        return rtol, atol
    return max(p[0] for p in precisions), max(p[1] for p in precisions)


def _mismatch_message(
    identifier: str,
    extra: str,
    abs_diff: float,
    abs_index: tuple[int, ...] | None,
    rel_diff: float,
    rel_index: tuple[int, ...] | None,
    rtol: float,
    atol: float,
) -> str:
    equality = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, diff, index, tolerance in (
        ("absolute", abs_diff, abs_index, atol),
        ("relative", rel_diff, rel_index, rtol),
    ):
        if index is None:
            line = f"{kind.title()} difference: {diff}"
        else:
            line = f"Greatest {kind} difference: {diff} at index {index}"
        if not equality:
            line += f" (up to {tolerance} allowed)"
        lines.append(line)
    return "\n".join(lines)


def _scalar_message(actual: Any, expected: Any, rtol: float, atol: float, identifier: str) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_message(identifier, extra, abs_diff, None, rel_diff, None, rtol, atol)


class _NonePair:
    def __init__(self, actual: Any, expected: Any, item: tuple, **options: Any) -> None:
        self.actual, self.expected, self.item = actual, expected, item

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            message = f"None mismatch: {self.actual} is not {self.expected}"
            raise _Mismatch(AssertionError, message, self.item)


class _BooleanPair:
    def __init__(self, actual: Any, expected: Any, item: tuple, **options: Any) -> None:
        self.actual, self.expected, self.item = bool(actual), bool(expected), item

    def compare(self) -> None:
        if self.actual is not self.expected:
            message = f"Booleans mismatch: {self.actual} is not {self.expected}"
            raise _Mismatch(AssertionError, message, self.item)


class _NumberPair:
    def __init__(
        self,
        actual: Any,
        expected: Any,
        item: tuple,
        *,
        rtol: float | None,
        atol: float | None,
        equal_nan: bool,
        check_dtype: bool,
        **options: Any,
    ) -> None:
        # NumPy scalars compare as the Python number they hold
        self.actual, self.expected = (
            value.item() if isinstance(value, np.number) else value for value in (actual, expected)
        )
        self.item = item
        precisions = [_NUMBER_PRECISIONS[type(value)] for value in (self.actual, self.expected)]
        self.rtol, self.atol = _tolerances(precisions, rtol, atol, item)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            message = f"The (d)types do not match: {type(actual)} != {type(expected)}."
            raise _Mismatch(AssertionError, message, self.item)
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        message = _scalar_message(actual, expected, self.rtol, self.atol, "Scalars")
        raise _Mismatch(AssertionError, message, self.item)


class _TensorPair:
    def __init__(
        self,
        actual: Tensor,
        expected: Tensor,
        item: tuple,
        *,
        rtol: float | None,
        atol: float | None,
        equal_nan: bool,
        check_device: bool,
        check_dtype: bool,
        check_layout: bool,
        check_stride: bool,
        **options: Any,
    ) -> None:
        self.actual, self.expected, self.item = actual, expected, item
        precisions = [_DTYPE_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        self.rtol, self.atol = _tolerances(precisions, rtol, atol, item)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _attribute_mismatch(self, name: str, actual: Any, expected: Any) -> _Mismatch:
        message = f"The values for attribute '{name}' do not match: {actual} != {expected}."
        return _Mismatch(AssertionError, message, self.item)

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if actual.shape != expected.shape:
            raise self._attribute_mismatch("shape", actual.shape, expected.shape)
        if actual.layout != expected.layout:
            if self.check_layout:
                raise self._attribute_mismatch("layout", actual.layout, expected.layout)
        elif self.check_stride and actual.stride() != expected.stride():
            raise self._attribute_mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            raise self._attribute_mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            raise self._attribute_mismatch("dtype", actual.dtype, expected.dtype)
        if actual.dtype != expected.dtype:
            common = lucid.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)
        with lucid.no_grad():
            self._compare_values(actual.detach(), expected.detach())

    def _compare_values(self, actual: Tensor, expected: Tensor) -> None:
        matches = lucid.isclose(
            actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan
        )
        if bool(matches.all()):
            return
        if actual.shape == lucid.Size([]):
            message = _scalar_message(
                actual.item(), expected.item(), self.rtol, self.atol, "Scalars"
            )
            raise _Mismatch(AssertionError, message, self.item)

        total = matches.numel()
        mismatched = total - int(matches.sum())
        extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
        if not actual.dtype.is_floating_point:
            # integer differences overflow their own dtype (uint8: 0 - 1 == 255)
            actual, expected = actual.to(lucid.int64), expected.to(lucid.int64)
        # the differences are computed in the compared dtype, so the reported values are the
        # ones torch reports for the same inputs
        abs_diff = (actual - expected).abs()
        rel_diff = abs_diff / expected.abs()
        matched = matches.numpy()
        abs_values = abs_diff.numpy().copy()
        rel_values = rel_diff.numpy().copy()
        # only mismatches count: a matching pair with expected 0 would give a nan ratio
        abs_values[matched] = 0
        rel_values[matched] = 0
        # argmax returns the first nan where there is one, as torch.max does
        abs_index = np.unravel_index(np.argmax(abs_values.astype(np.float64)), matched.shape)
        rel_index = np.unravel_index(np.argmax(rel_values.astype(np.float64)), matched.shape)
        message = _mismatch_message(
            "Tensor-likes",
            extra,
            abs_values[abs_index].item(),
            tuple(int(i) for i in abs_index),
            float(rel_values[rel_index]),
            tuple(int(i) for i in rel_index),
            self.rtol,
            self.atol,
        )
        raise _Mismatch(AssertionError, message, self.item)


def _as_tensor(value: Any) -> Tensor | None:
    if isinstance(value, Tensor):
        return value
    try:
        return lucid.as_tensor(value)
    except Exception:
        return None


def _make_pair(actual: Any, expected: Any, item: tuple, allow_subclasses: bool, options: dict):
    """The first comparison that accepts both inputs: None, booleans, numbers, then tensor-likes."""
    if actual is None or expected is None:
        return _NonePair(actual, expected, item)
    boolean_types = (bool, np.bool_)
    if isinstance(actual, boolean_types) and isinstance(expected, boolean_types):
        return _BooleanPair(actual, expected, item)
    number_types = (int, float, complex, np.number)
    if isinstance(actual, number_types) and isinstance(expected, number_types):
        return _NumberPair(actual, expected, item, **options)
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if related and (allow_subclasses or type(actual) is type(expected)):
        actual_tensor, expected_tensor = _as_tensor(actual), _as_tensor(expected)
        if actual_tensor is not None and expected_tensor is not None:
            return _TensorPair(actual_tensor, expected_tensor, item, **options)
    message = (
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
    )
    raise _Mismatch(TypeError, message, item)


def _collect_pairs(
    actual: Any, expected: Any, item: tuple, allow_subclasses: bool, options: dict
) -> list:
    """Walk matching sequences and mappings, so that their structure is checked before any value
    (a length mismatch is reported even where an earlier element differs)."""
    sequence = collections.abc.Sequence
    if (
        isinstance(actual, sequence)
        and not isinstance(actual, str)
        and isinstance(expected, sequence)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            message = f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
            raise _Mismatch(AssertionError, message, item)
        pairs = []
        for index in range(len(actual)):
            pairs += _collect_pairs(
                actual[index], expected[index], (*item, index), allow_subclasses, options
            )
        return pairs
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            message = (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}"
            )
            raise _Mismatch(AssertionError, message, item)
        try:
            keys = sorted(actual_keys)
        except TypeError:  # keys of mixed types: keep the set's order
            keys = list(actual_keys)
        pairs = []
        for key in keys:
            pairs += _collect_pairs(
                actual[key], expected[key], (*item, key), allow_subclasses, options
            )
        return pairs
    return [_make_pair(actual, expected, item, allow_subclasses, options)]


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Assert that `actual` and `expected` are close: ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise, through nested sequences and mappings.

    Without `rtol` and `atol` the tolerances are the loosest of the two dtypes' defaults
    (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7,
    integers and booleans exact).

    Example::

        >>> assert_close(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.5]))
        AssertionError: Tensor-likes are not close!
        ...
    """
    __tracebackhide__ = True
    options = {
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check_device": check_device,
        "check_dtype": check_dtype,
        "check_layout": check_layout,
        "check_stride": check_stride,
    }
    # msg replaces the message of a value mismatch only; a mismatch of structure or types
    # keeps its own, as torch's does
    try:
        pairs = _collect_pairs(actual, expected, (), allow_subclasses, options)
    except _Mismatch as mismatch:
        raise mismatch.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Mismatch as mismatch:
            raise mismatch.to_error(msg) from None


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated, as in torch: use `assert_close`. Compares across dtypes, with nan equal to
    nan and looser default tolerances (float16 1e-3/1e-3, float32 1e-4/1e-5, float64 1e-5/1e-8)."""
    warnings.warn(
        "`lucid.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `lucid.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = lucid.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = lucid.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        precisions = {
            lucid.float16: (1e-3, 1e-3),
            lucid.float32: (1e-4, 1e-5),
            lucid.float64: (1e-5, 1e-8),
        }
        pair = [precisions.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pair), max(p[1] for p in pair)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )


_INTEGRAL_TYPES = (lucid.uint8, lucid.int8, lucid.int16, lucid.int32, lucid.int64)
_FLOATING_TYPES = (lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64)


def _checked_range(
    low: float | None,
    high: float | None,
    dtype: Any,
    lowest_inclusive: float,
    highest_exclusive: float,
    default_low: float,
    default_high: float,
) -> tuple[float, float]:
    """[low, high) from the user's bounds or the dtype's defaults, clamped to what it holds."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING_TYPES:
        warnings.warn(
            "Passing `low==high` to `lucid.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `lucid.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})"
        )
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype is lucid.bool or dtype in _INTEGRAL_TYPES:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape: int | lucid.Size | list[int] | tuple[int, ...],
    dtype: lucid.dtype,
    device: str | lucid.device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: lucid.memory_format | None = None,
) -> Tensor:
    """A tensor of `shape` with values drawn uniformly from [low, high).

    The default range is [0, 2) for bool, [0, 10) for uint8, [-9, 10) for the signed integers
    and [-9, 9) for floats; bounds outside the dtype's finite range are clamped to it.

    Example::

        >>> make_tensor(2, 3, dtype=lucid.int64, device="cpu", low=0, high=5)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got {noncontiguous=} and {memory_format=}"
        )
    is_integral = dtype is lucid.bool or dtype in _INTEGRAL_TYPES
    if requires_grad and is_integral:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got {dtype=}"
        )
    # a tensor of one element (or none) has no layout to make non-contiguous
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is lucid.bool:
        low, high = _checked_range(low, high, dtype, 0, 2, 0, 2)
        result = lucid.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL_TYPES:
        info = lucid.iinfo(dtype)
        # int64's exclusive bound cannot exceed its own maximum, as randint's high is an int64
        highest = info.max + (1 if dtype is not lucid.int64 else 0)
        low, high = _checked_range(low, high, dtype, info.min, highest, -9, 10)
        result = lucid.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_TYPES:
        info = lucid.finfo(dtype)
        low, high = _checked_range(low, high, dtype, info.min, info.max, -9, 9)
        result = lucid.empty(shape, device=device, dtype=dtype)
        if high - low >= info.max:
            # the width overflows the dtype: draw from half the interval and double
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by lucid.testing.make_tensor()."
        )

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if is_integral else lucid.finfo(dtype).tiny
    if dtype in _FLOATING_TYPES:
        result.requires_grad = requires_grad
    return result


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
