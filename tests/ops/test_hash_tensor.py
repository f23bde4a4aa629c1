"""hash_tensor: PyTorch's xor of 64-bit patterns, returned as int64 holding the same bits (lucid
has no uint64), and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

_FLOATS = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
CALLS = [
    ("all", _FLOATS, (), {}),
    ("dim", _FLOATS, (1,), {}),
    ("negative_dim_keepdim", _FLOATS, (-1,), {"keepdim": True}),
    ("dims", _FLOATS, ((0, 2),), {}),
    ("empty_dims_reduce_all", _FLOATS, ((),), {}),
    ("keepdim_all", _FLOATS, (None,), {"keepdim": True}),
    ("float64", _FLOATS.astype(np.float64), (0,), {}),
    ("float16", _FLOATS.astype(np.float16), (), {}),
    ("nan_and_negative_zero", np.array([np.nan, -0.0, 1.0], np.float32), (), {}),
    ("int8_sign_extends", np.array([-1, 3], np.int8), (), {}),
    ("uint8", np.array([255, 1], np.uint8), (), {}),
    ("bool", np.array([True, False, True]), (), {}),
    ("int32", np.arange(12, dtype=np.int32).reshape(3, 4), (1,), {}),
    ("zero_dim", np.array(5.0), (0,), {}),
    ("empty_kept_dim", np.zeros((0, 3), np.float32), (1,), {}),
]


@requires_torch
@pytest.mark.parametrize("name, array, args, kwargs", CALLS, ids=[call[0] for call in CALLS])
def test_hash_tensor_has_pytorchs_bits(name, array, args, kwargs):
    actual = lucid.hash_tensor(lucid.from_numpy(array.copy()), *args, **kwargs)
    expected = torch.hash_tensor(torch.from_numpy(array.copy()), *args, **kwargs).numpy()
    assert actual.dtype == lucid.int64
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual.numpy().view(np.uint64), expected)


def test_hash_tensor_is_the_xor_of_the_float64_bits():
    values = np.array([1.5, -2.25, 3.0], np.float32)
    bits = values.astype(np.float64).view(np.int64)
    expected = bits[0] ^ bits[1] ^ bits[2]
    assert lucid.from_numpy(values).hash_tensor().item() == expected
    assert not lucid.hash_tensor(lucid.ones(3, requires_grad=True)).requires_grad


BAD_CALLS = [
    lambda t: t.hash_tensor(t.zeros(0, 3)),
    lambda t: t.hash_tensor(t.zeros(0, 3), 0),
    lambda t: t.hash_tensor(t.ones(2, 2), mode=1),
    lambda t: t.hash_tensor(t.ones(2, 2), mode=1.0),
    lambda t: t.hash_tensor(t.ones(2, 2), 2),
    lambda t: t.hash_tensor(t.ones(2, 2), (0, 0)),
    lambda t: t.hash_tensor(t.ones(2, 2), 1.5),
    lambda t: t.hash_tensor([1.0]),
]


@requires_torch
@pytest.mark.parametrize("call", BAD_CALLS)
def test_hash_tensor_refuses_what_pytorch_refuses(call):
    with pytest.raises(Exception) as expected:  # noqa: PT011  (torch's type is the spec)
        call(torch)
    with pytest.raises(type(expected.value)) as actual:
        call(lucid)
    assert str(actual.value) == str(expected.value).replace("torch", "lucid")
