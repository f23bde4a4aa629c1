"""Where lucid differs from PyTorch on what an op catalogue row leaves out, the difference as a
strict expected failure: it shows in every run, and fails once lucid follows PyTorch, so the
row can then take the check back."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as LF
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="lucid's embedding_bag max propagates a NaN of a bag; PyTorch's skips it unless "
    "it comes first (the row embedding_bag[max] leaves out the extreme values)",
)
def test_embedding_bag_max_treats_nan_as_torch_does():
    weight = np.array([[1.0, -2.0], [np.nan, 3.0], [0.5, np.nan]])
    indices, offsets = np.array([0, 1, 2]), np.array([0])
    expected = torch.nn.functional.embedding_bag(
        torch.tensor(indices), torch.tensor(weight), torch.tensor(offsets), mode="max"
    )
    actual = LF.embedding_bag(
        lucid.tensor(indices), lucid.tensor(weight), lucid.tensor(offsets), mode="max"
    )
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


# PyTorch's vectorized kernel gives these gradients at a nan input for all but a tensor's last
# few elements (its loop's tail passes the gradient through); lucid's out-of-place elu and
# hardtanh follow the kernel, these pass it through (their rows leave out the extreme values).
NAN_GRADIENT_GAPS = {
    "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x),
    "elu_": lambda F, x: F.elu_(x * 1.0),
    "celu_": lambda F, x: F.celu_(x * 1.0),
    "selu_": lambda F, x: F.selu_(x * 1.0),
}


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="lucid passes the gradient through at a nan input, where PyTorch's vectorized "
    "kernel gives 0 (hardshrink, softshrink) or nan (elu_, celu_, selu_)",
)
@pytest.mark.parametrize("name", sorted(NAN_GRADIENT_GAPS))
@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_gradient_at_nan_is_torchs_vectorized_one(name):
    call = NAN_GRADIENT_GAPS[name]
    gradients = []
    for library, functional in ((torch, torch.nn.functional), (lucid, LF)):
        # 64 elements: all in the vectorized body of PyTorch's loop
        x = library.full((64,), float("nan"), dtype=library.float64, requires_grad=True)
        call(functional, x).backward(library.ones(64, dtype=library.float64))
        gradients.append(np.asarray(x.grad.detach().numpy()[:8]))
    np.testing.assert_array_equal(gradients[1], gradients[0])
