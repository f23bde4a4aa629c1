"""Augmented assignments (`//=`, `%=`, `&=`, `|=`, `^=`, `<<=`, `>>=`) are in-place ops, as in
PyTorch: they write through views, bump the version once and raise PyTorch's errors."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

# (symbol, in-place operator, method, NumPy reference, dtype the operator is defined for)
AUGMENTED = [
    ("//", operator.ifloordiv, "floor_divide_", np.floor_divide, lucid.float32),
    ("%", operator.imod, "remainder_", np.remainder, lucid.float32),
    ("&", operator.iand, "bitwise_and_", np.bitwise_and, lucid.int64),
    ("|", operator.ior, "bitwise_or_", np.bitwise_or, lucid.int64),
    ("^", operator.ixor, "bitwise_xor_", np.bitwise_xor, lucid.int64),
    ("<<", operator.ilshift, "bitwise_left_shift_", np.left_shift, lucid.int64),
    (">>", operator.irshift, "bitwise_right_shift_", np.right_shift, lucid.int64),
]
IDS = [case[0] + "=" for case in AUGMENTED]


@pytest.mark.parametrize("case", AUGMENTED, ids=IDS)
def test_augmented_assignment_writes_through_a_view(case):
    _, inplace, _, reference, dtype = case
    x = lucid.arange(6, dtype=dtype).reshape(2, 3) + 3
    expected = x.numpy().copy()
    expected[0] = reference(expected[0], np.array(2).astype(expected.dtype))
    view = x[0]
    result = inplace(view, 2)
    assert result is view
    np.testing.assert_array_equal(x.numpy(), expected)


@pytest.mark.parametrize("case", AUGMENTED, ids=IDS)
def test_augmented_assignment_bumps_the_version_once(case):
    _, inplace, method, _, dtype = case
    x = lucid.ones(3, dtype=dtype) * 5
    inplace(x, 2)
    assert x._version == 1
    getattr(x, method)(lucid.ones(3, dtype=dtype))
    assert x._version == 2


@pytest.mark.parametrize("inplace", [operator.ifloordiv, operator.imod], ids=["//=", "%="])
def test_augmented_assignment_on_a_leaf_requiring_grad_raises(inplace):
    x = lucid.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        inplace(x, 2.0)


@pytest.mark.parametrize("case", AUGMENTED, ids=IDS)
def test_augmented_assignment_to_a_broadcast_shape_raises(case):
    _, inplace, _, _, dtype = case
    x = lucid.ones(3, dtype=dtype)
    with pytest.raises(RuntimeError) as error:
        inplace(x, lucid.ones(2, 3, dtype=dtype))
    assert str(error.value) == "output with shape [3] doesn't match the broadcast shape [2, 3]"
    assert x.shape == (3,)


@pytest.mark.parametrize("case", AUGMENTED, ids=IDS)
def test_augmented_assignment_result_that_cannot_be_cast_raises(case):
    _, inplace, _, _, _ = case
    with pytest.raises(RuntimeError) as error:
        inplace(lucid.ones(3, dtype=lucid.int64), 2.0)
    assert str(error.value) == "result type Float can't be cast to the desired output type Long"
    with pytest.raises(RuntimeError) as error:
        inplace(lucid.ones(3, dtype=lucid.bool), lucid.ones(3, dtype=lucid.int64))
    assert str(error.value) == "result type Long can't be cast to the desired output type Bool"


def test_floor_divide_inplace_backward_names_the_inplace_op():
    y = lucid.ones(3, requires_grad=True) * 1
    y //= 0.7
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide_ is not implemented"):
        y.sum().backward()


def test_remainder_inplace_has_remainders_gradient():
    x = lucid.tensor([0.5, 1.5, 2.5], requires_grad=True)
    divisor = lucid.tensor([0.7, 0.7, 0.7], requires_grad=True)
    y = x * 1
    y %= divisor
    assert y.grad_fn.name() == "RemainderBackward1"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(divisor.grad.numpy(), -np.floor(np.array([0.5, 1.5, 2.5]) / 0.7))


def test_rounding_division_of_bools_is_not_implemented():
    flags = lucid.tensor([True, False])
    with pytest.raises(NotImplementedError, match="\"div_floor_cpu\" not implemented for 'Bool'"):
        lucid.floor_divide(flags, flags)
    with pytest.raises(NotImplementedError, match="\"div_trunc_cpu\" not implemented for 'Bool'"):
        lucid.div(flags, True, rounding_mode="trunc")


# ------------------------------------------------------------------ parity with torch
def _outcome(call):
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, str(error)
    return "value", result.tolist(), str(result.dtype).split(".")[-1]


# (name, call on the library): each runs on lucid and on torch.
PARITY = [
    ("lshift_out_of_range", lambda L: L.tensor([3, 3, 3, 3]) << L.tensor([2, 70, -3, 63])),
    ("rshift_out_of_range", lambda L: L.tensor([-5, 7, 1, 3]) >> L.tensor([1, 64, -1, 0])),
    ("rshift_uint8", lambda L: L.tensor([200, 7], dtype=L.uint8) >> L.tensor([9, -1])),
    ("lshift_uint8_wraps", lambda L: L.tensor([200, 7], dtype=L.uint8) << 1),
    ("rshift_int8_sign_fill", lambda L: L.tensor([-100, 100], dtype=L.int8) >> 9),
    ("lshift_bool_int", lambda L: L.tensor([True, False]) << 1),
    ("lshift_bool_bool", lambda L: L.tensor([True, False]) << L.tensor([True, True])),
    ("rshift_bool_bool", lambda L: L.tensor([True, False]) >> L.tensor([True, True])),
    ("rlshift", lambda L: 2 << L.tensor([1, 2])),
    ("rrshift", lambda L: 64 >> L.tensor([1, 2])),
    ("lshift_float", lambda L: L.tensor([1, 2]) << 2.0),
    ("lshift_function", lambda L: L.bitwise_left_shift(L.tensor([1, 2]), 3)),
    ("rshift_function_scalar_first", lambda L: L.bitwise_right_shift(64, L.tensor([1, 2]))),
    ("lshift_int8_long", lambda L: L.tensor([3], dtype=L.int8) << L.tensor([2])),
    ("int32_or_long_inplace", lambda L: L.ones(3, dtype=L.int32).bitwise_or_(L.ones(3) > 0)),
    ("int32_ior_long", lambda L: L.ones(3, dtype=L.int32).__ior__(L.ones(3, dtype=L.int64) * 6)),
    ("float_iand", lambda L: L.ones(3).__iand__(2)),
    ("float_ilshift", lambda L: L.ones(3).__ilshift__(2)),
    ("long_iand_float", lambda L: L.ones(3, dtype=L.int64).__iand__(2.0)),
    ("bool_ixor_true", lambda L: L.ones(3, dtype=L.bool).bitwise_xor_(True)),
    ("bool_remainder_", lambda L: L.ones(3, dtype=L.bool).remainder_(1)),
    ("floor_divide_tensor", lambda L: L.full((3,), 7.0).floor_divide_(L.tensor([2.0, -2.0, 0.5]))),
    ("floor_divide_int_by_zero", lambda L: L.ones(3, dtype=L.int64).floor_divide_(0)),
    ("remainder_tensor", lambda L: L.full((3,), 7.0).remainder_(L.tensor([2.0, -2.0, 0.5]))),
    ("remainder_none", lambda L: L.ones(3).remainder_(None)),
    ("bitwise_left_shift_none", lambda L: L.ones(3, dtype=L.int64).bitwise_left_shift_(None)),
]


@requires_torch
@pytest.mark.parametrize("case", PARITY, ids=[case[0] for case in PARITY])
def test_inplace_forms_and_shifts_match_torch(case):
    _, call = case
    lucid_outcome = _outcome(lambda: call(lucid))
    torch_outcome = _outcome(lambda: call(torch))
    assert lucid_outcome == torch_outcome
