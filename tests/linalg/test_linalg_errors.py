"""The "must be Tensor" TypeError of the matrix functions lucid has twice, at the top level and
in lucid.linalg: each names PyTorch's binding and argument (det(): 'input', linalg_det(): 'A'),
which the differential fuzz checks for lucid.linalg only."""

from __future__ import annotations

import warnings

import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

CALLS = [
    ("det", ()),
    ("slogdet", ()),
    ("matrix_exp", ()),
    ("matrix_power", (2,)),
    ("inverse", ()),
    ("logdet", ()),
    ("linalg.det", ()),
    ("linalg.slogdet", ()),
    ("linalg.matrix_exp", ()),
    ("linalg.matrix_power", (2,)),
    ("linalg.inv", ()),
    ("linalg.cholesky", ()),
    ("linalg.ldl_factor", ()),
]


def _function(library, path):
    target = library
    for part in path.split("."):
        target = getattr(target, part)
    return target


@requires_torch
@pytest.mark.parametrize(("path", "rest"), CALLS, ids=[path for path, _ in CALLS])
def test_non_tensor_argument_gets_pytorchs_names(path, rest) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError) as expected:
            _function(torch, path)([[1.0]], *rest)
        with pytest.raises(TypeError) as raised:
            _function(lucid, path)([[1.0]], *rest)
    assert str(raised.value) == str(expected.value)
