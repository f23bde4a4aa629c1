"""nn.init's deprecated names without the trailing underscore: warn, then run the new init."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.init as init
from tests.torch_oracle import requires_torch, torch

# old name, arguments after the tensor, shape
CASES = [
    ("uniform", (-1.0, 1.0), (4, 5)),
    ("normal", (0.0, 2.0), (4, 5)),
    ("constant", (0.5,), (4, 5)),
    ("eye", (), (4, 5)),
    ("dirac", (), (4, 2, 3)),
    ("xavier_uniform", (), (4, 5)),
    ("xavier_normal", (), (4, 5)),
    ("kaiming_uniform", (), (4, 5)),
    ("kaiming_normal", (), (4, 5)),
    ("orthogonal", (), (4, 5)),
    ("sparse", (0.5,), (4, 5)),
]


def _warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


@requires_torch
@pytest.mark.parametrize("name, args, shape", CASES)
def test_old_name_warns_as_torch(name, args, shape):
    lucid_warnings = _warnings(lambda: getattr(init, name)(lucid.empty(*shape), *args))
    torch_warnings = _warnings(lambda: getattr(torch.nn.init, name)(torch.empty(*shape), *args))
    assert lucid_warnings == torch_warnings
    assert lucid_warnings[0][0] is FutureWarning


@pytest.mark.parametrize("name, args, shape", CASES)
def test_old_name_fills_as_the_new_init(name, args, shape):
    old, new = getattr(init, name), getattr(init, name + "_")
    assert old.__name__ == name
    lucid.manual_seed(5)
    expected = new(lucid.empty(*shape), *args).numpy().copy()
    lucid.manual_seed(5)
    tensor = lucid.empty(*shape)
    with pytest.warns(FutureWarning):
        result = old(tensor, *args)
    assert result is tensor
    np.testing.assert_array_equal(tensor.numpy(), expected)
