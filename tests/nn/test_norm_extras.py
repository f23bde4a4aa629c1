"""BatchNorm3d and CrossMapLRN2d against torch: outputs, gradients, running statistics."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import (
    DTYPES,
    TOLERANCES,
    assert_close,
    check_forward_backward,
    check_repr_and_keys,
    compare_state,
)
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch
FLOATS = pytest.mark.parametrize("dtype", ["float64", "float32"])


def _randn(dtype: str, *shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(DTYPES[dtype][2])


@FLOATS
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"momentum": None},
                                    {"track_running_stats": False}])  # fmt: skip
def test_batch_norm3d_train_and_eval_match_torch(dtype, kwargs):
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_module = torch.nn.BatchNorm3d(3, dtype=torch_dtype, **kwargs)
    module = nn.BatchNorm3d(3, dtype=lucid_dtype, **kwargs)
    check_repr_and_keys(torch_module, module)
    x = _randn(dtype, 2, 3, 2, 3, 2)
    check_forward_backward(torch_module, module, [x], dtype)
    compare_state(torch_module, module, 1e-5, 1e-6)
    check_forward_backward(torch_module.eval(), module.eval(), [x], dtype, copy=False)


def test_batch_norm3d_rejects_other_ranks_as_torch():
    for shape in [(2, 3, 4, 4), (2, 3)]:
        with pytest.raises(ValueError) as lucid_error:
            nn.BatchNorm3d(3)(lucid.ones(*shape))
        with pytest.raises(ValueError) as torch_error:
            torch.nn.BatchNorm3d(3)(torch.ones(*shape))
        assert str(lucid_error.value) == str(torch_error.value)


@FLOATS
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_cross_map_lrn2d_forward_matches_torch(dtype, size):
    args = (size, 1e-2, 0.75, 1.5)
    x = _randn(dtype, 2, 6, 3, 2)
    check_repr_and_keys(torch.nn.CrossMapLRN2d(*args), nn.CrossMapLRN2d(*args))
    rtol, atol = TOLERANCES[dtype]
    expected = torch.nn.CrossMapLRN2d(*args)(torch.tensor(x))
    assert_close(nn.CrossMapLRN2d(*args)(lucid.tensor(x)), expected, rtol, atol)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_cross_map_lrn2d_gradient_is_the_forward_derivative(size):
    """PyTorch's hand-written backward of this legacy layer fails its own gradcheck (and raises
    for size 1); lucid differentiates the forward it shares with PyTorch."""
    x = lucid.tensor(_randn("float64", 2, 5, 2, 2), requires_grad=True)
    module = nn.CrossMapLRN2d(size, 0.5, 0.75, 1.5)
    assert lucid.autograd.gradcheck(module, (x,))
    assert lucid.autograd.gradgradcheck(module, (x,))


def test_cross_map_lrn2d_default_arguments_and_rank_error():
    assert repr(nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    with pytest.raises(ValueError) as lucid_error:
        nn.CrossMapLRN2d(3)(lucid.ones(2, 3, 4))
    with pytest.raises(ValueError) as torch_error:
        torch.nn.CrossMapLRN2d(3)(torch.ones(2, 3, 4))
    assert str(lucid_error.value) == str(torch_error.value)
