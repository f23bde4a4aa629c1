"""lucid.distributions.utils against torch.distributions.utils: the lower triangle of a matrix
as a vector and back, with torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.distributions import utils
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


@pytest.mark.parametrize("diag", [-2, -1, 0, 1])
def test_lower_triangles_round_trip_as_torchs(diag):
    matrix = np.arange(2 * 16, dtype=np.float64).reshape(2, 4, 4)
    import torch.distributions.utils as torch_utils

    expected = torch_utils.tril_matrix_to_vec(torch.tensor(matrix), diag)
    vector = utils.tril_matrix_to_vec(lucid.tensor(matrix), diag)
    np.testing.assert_array_equal(vector.numpy(), expected.numpy())
    back = utils.vec_to_tril_matrix(vector, diag)
    np.testing.assert_array_equal(back.numpy(), torch_utils.vec_to_tril_matrix(expected, diag))


def test_vec_to_tril_matrix_is_differentiable():
    vector = lucid.tensor(np.linspace(0.1, 0.6, 6), requires_grad=True)
    assert lucid.autograd.gradcheck(lambda v: utils.vec_to_tril_matrix(v), (vector,))
    assert lucid.autograd.gradgradcheck(lambda v: utils.vec_to_tril_matrix(v) ** 2, (vector,))


@pytest.mark.parametrize(
    ("call", "size"),
    [("tril_matrix_to_vec", 4), ("vec_to_tril_matrix", 5)],
)
def test_bad_sizes_raise_torchs_errors(call, size):
    import torch.distributions.utils as torch_utils

    argument = (4, 4) if call == "tril_matrix_to_vec" else (size,)
    diag = 5 if call == "tril_matrix_to_vec" else 0
    with pytest.raises(Exception) as expected:
        getattr(torch_utils, call)(torch.ones(argument, dtype=torch.float64), diag)
    with pytest.raises(type(expected.value)) as raised:
        getattr(utils, call)(lucid.ones(argument, dtype=lucid.float64), diag)
    assert str(raised.value) == str(expected.value)
