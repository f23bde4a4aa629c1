"""lucid.testing: assert_close's tolerances, traversal and messages, and make_tensor's ranges and
errors, against torch.testing where torch is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid.testing import assert_allclose, assert_close, make_tensor
from tests.torch_oracle import requires_torch, torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
DTYPES += ["float16", "bfloat16", "float32", "float64"]


def _outcome(call) -> str | None:
    """None when `call` passes, else the error's type and text, with torch's name as lucid's."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the outcome itself is what is compared
        text = f"{type(error).__name__}: {error}".replace("torch", "lucid")
        # the class is lucid._tensor.Tensor, published as lucid.Tensor
        return text.replace("lucid._tensor.Tensor", "lucid.Tensor")
    return None


# Each case builds (actual, expected) from a module, lucid or torch, so both see the same inputs.
CASES = {
    "float32": lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.1])),
    "float64_2d": lambda m: (
        m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64),
        m.tensor([[1.0, 2.0], [3.0, 0.0]], dtype=m.float64),
    ),
    "int64": lambda m: (m.tensor([1, 2, 3]), m.tensor([1, 5, 3])),
    "uint8_wraps": lambda m: (
        m.tensor([1, 2, 3], dtype=m.uint8),
        m.tensor([4, 2, 3], dtype=m.uint8),
    ),
    "int16_zero_expected": lambda m: (
        m.tensor([5, 1, 3], dtype=m.int16),
        m.tensor([0, 1, 0], dtype=m.int16),
    ),
    "float16": lambda m: (
        m.tensor([1.0, 2.0], dtype=m.float16),
        m.tensor([1.01, 2.0], dtype=m.float16),
    ),
    "bfloat16": lambda m: (
        m.tensor([1.0, 2.0], dtype=m.bfloat16),
        m.tensor([1.5, 2.0], dtype=m.bfloat16),
    ),
    "nan_both": lambda m: (m.tensor([1.0, float("nan")]), m.tensor([1.0, float("nan")])),
    "nan_actual": lambda m: (m.tensor([1.0, float("nan")]), m.tensor([1.0, 2.0])),
    "swapped_zero": lambda m: (m.tensor([0.0, 1.0]), m.tensor([1.0, 0.0])),
    "tiny_vs_zero": lambda m: (m.tensor([1e-6, 2.0]), m.tensor([0.0, 2.0])),
    "zero_dim": lambda m: (m.tensor(1.5), m.tensor(2.0)),
    "bool_tensor": lambda m: (m.tensor([True, False]), m.tensor([True, True])),
    "dtype": lambda m: (m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    "shape": lambda m: (m.tensor([1.0]), m.tensor([1.0, 2.0])),
    "stride": lambda m: (m.zeros(2, 3), m.zeros(2, 3).t().contiguous().t()),
    "int_float": lambda m: (1, 1.0),
    "floats": lambda m: (1.0, 1.1),
    "ints": lambda m: (1, 2),
    "bools": lambda m: (True, False),
    "none": lambda m: (None, 1),
    "small_float": lambda m: (0.0, 1e-9),
    "complex": lambda m: (1 + 2j, 1 + 3j),
    "numpy_scalars": lambda m: (np.float32(1.0), np.float32(1.5)),
    "numpy_arrays": lambda m: (np.array([1.0, 2.0]), np.array([1.0, 3.0])),
    "lengths": lambda m: ([1, 2], [1, 2, 3]),
    "keys": lambda m: ({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    "nested_item": lambda m: ({"a": [1, m.tensor([1.0])]}, {"a": [1, m.tensor([2.0])]}),
    "tensor_vs_float": lambda m: (m.tensor([1.0]), 1.0),
    "strings": lambda m: ("a", "a"),
}
OPTIONS = {
    "defaults": {},
    "no_dtype_check": {"check_dtype": False},
    "exact": {"rtol": 0, "atol": 0},
    "loose": {"rtol": 0.5, "atol": 0.5},
    "rtol_only": {"rtol": 0.1},
    "equal_nan": {"equal_nan": True},
    "check_stride": {"check_stride": True},
    "msg": {"msg": "custom"},
    "msg_callable": {"msg": lambda generated: f"Header\n{generated}"},
    "exact_types": {"allow_subclasses": False},
}


@requires_torch
@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("case", CASES)
def test_assert_close_outcome_and_message_match_torch(case: str, option: str) -> None:
    options = OPTIONS[option]
    expected = _outcome(lambda: torch.testing.assert_close(*CASES[case](torch), **options))
    actual = _outcome(lambda: assert_close(*CASES[case](lucid), **options))
    assert actual == expected


def test_mismatch_message_names_counts_differences_and_tolerances() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_close(lucid.tensor([1.0, 2.0, 3.0]), lucid.tensor([1.0, 2.5, 3.5]))
    assert str(caught.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"),
    [
        ("float16", 1e-3, 1e-5),
        ("bfloat16", 1.6e-2, 1e-5),
        ("float32", 1.3e-6, 1e-5),
        ("float64", 1e-7, 1e-7),
    ],
)
def test_default_tolerances_per_dtype(dtype: str, rtol: float, atol: float) -> None:
    expected = lucid.tensor([0.0], dtype=getattr(lucid, dtype))
    with pytest.raises(AssertionError) as caught:
        assert_close(expected + 1.0, expected)
    assert f"(up to {atol} allowed)" in str(caught.value)
    assert f"(up to {rtol} allowed)" in str(caught.value)


def test_integers_are_compared_exactly_by_default() -> None:
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(lucid.tensor([1, 2]), lucid.tensor([1, 3]))


def test_tolerance_is_atol_plus_rtol_times_expected() -> None:
    assert_close(lucid.tensor([10.5]), lucid.tensor([10.0]), rtol=0.045, atol=0.1)
    with pytest.raises(AssertionError):
        assert_close(lucid.tensor([10.5]), lucid.tensor([10.0]), rtol=0.035, atol=0.1)


def test_tensors_that_require_grad_compare_without_recording() -> None:
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    assert_close(x, x.detach().clone())


def test_failure_in_a_nested_container_names_the_item() -> None:
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]\[1\]$"):
        assert_close({"a": [1, lucid.tensor([1.0])]}, {"a": [1, lucid.tensor([2.0])]})


def test_assert_allclose_is_deprecated_and_compares_across_dtypes() -> None:
    with pytest.warns(FutureWarning, match="assert_allclose"):
        assert_allclose(lucid.tensor([1.0, float("nan")]), [1.00001, float("nan")])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        assert_allclose(lucid.tensor([1.0]), [1.1])


@requires_torch
def test_assert_allclose_is_still_public_in_torch() -> None:
    assert hasattr(torch.testing, "assert_allclose")


def _description(call) -> tuple | str:
    """What make_tensor returned (shape, dtype, grad, contiguity, warnings) or the error text."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call()
    except Exception as error:  # noqa: BLE001 - the outcome itself is what is compared
        return f"{type(error).__name__}: {error}".replace("torch", "lucid")
    messages = [str(warning.message).replace("torch", "lucid") for warning in caught]
    dtype = str(result.dtype).split(".")[1]
    return tuple(result.shape), dtype, result.requires_grad, result.is_contiguous(), messages


MAKE_OPTIONS = {
    "defaults": {},
    "low_equals_high": {"low": 3, "high": 3},
    "low_above_high": {"low": 5, "high": 2},
    "nan_low": {"low": float("nan")},
    "outside_small_dtypes": {"low": 1000, "high": 2000},
    "huge_range": {"low": -1e300, "high": 1e300},
    "requires_grad": {"requires_grad": True},
    "noncontiguous": {"noncontiguous": True},
    "exclude_zero": {"exclude_zero": True},
    "fractional_bounds": {"low": 2.5, "high": 4.5},
}


@requires_torch
@pytest.mark.parametrize("option", MAKE_OPTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_make_tensor_result_and_errors_match_torch(dtype: str, option: str) -> None:
    options = MAKE_OPTIONS[option]
    theirs = _description(
        lambda: torch.testing.make_tensor(
            2, 3, dtype=getattr(torch, dtype), device="cpu", **options
        )
    )
    ours = _description(
        lambda: make_tensor(2, 3, dtype=getattr(lucid, dtype), device="cpu", **options)
    )
    assert ours == theirs


@pytest.mark.parametrize(
    ("dtype", "low", "high"),
    [
        ("bool", 0, 1),
        ("uint8", 0, 9),
        ("int8", -9, 9),
        ("int64", -9, 9),
        ("float32", -9, 9),
        ("bfloat16", -9, 9),
    ],
)
def test_make_tensor_default_range(dtype: str, low: float, high: float) -> None:
    values = make_tensor(4000, dtype=getattr(lucid, dtype), device="cpu").to(lucid.float64)
    assert low <= values.min().item() and values.max().item() <= high
    # the draws reach both ends of the range, so the defaults are not narrower than torch's
    assert values.min().item() < low + 1 and values.max().item() > high - 1


def test_make_tensor_clamps_bounds_to_the_dtype() -> None:
    values = make_tensor(1000, dtype=lucid.uint8, device="cpu", low=-100, high=3)
    assert 0 <= values.min().item() and values.max().item() <= 2


def test_make_tensor_exclude_zero_replaces_zeros() -> None:
    values = make_tensor(5000, dtype=lucid.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert not bool((values == 0).any())
    assert bool((values == 1).any()) and bool((values == -1).any())


def test_make_tensor_noncontiguous_and_memory_format() -> None:
    strided = make_tensor(3, 4, dtype=lucid.float32, device="cpu", noncontiguous=True)
    assert strided.shape == (3, 4) and not strided.is_contiguous()
    # one element has no layout to break
    single = make_tensor(1, dtype=lucid.float32, device="cpu", noncontiguous=True)
    assert single.is_contiguous()
    nhwc = make_tensor(
        2, 3, 4, 5, dtype=lucid.float32, device="cpu", memory_format=lucid.channels_last
    )
    assert nhwc.stride() == (60, 1, 15, 3)
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(
            2, 3, dtype=lucid.float32, device="cpu", noncontiguous=True,
            memory_format=lucid.channels_last,
        )  # fmt: skip


def test_make_tensor_takes_a_shape_sequence() -> None:
    assert make_tensor((2, 3), dtype=lucid.float64, device="cpu").shape == (2, 3)
    assert make_tensor([4], dtype=lucid.float64, device="cpu").shape == (4,)


def test_make_tensor_rejects_a_non_dtype() -> None:
    with pytest.raises(TypeError, match="'float' is not supported by lucid.testing.make_tensor"):
        make_tensor(2, dtype="float", device="cpu")
