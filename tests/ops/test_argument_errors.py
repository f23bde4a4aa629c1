"""A non-tensor where a tensor belongs gets PyTorch's TypeError, never an AttributeError from
inside an op; float dims and sizes, negative sizes and out-of-range indices get PyTorch's words."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from tests.torch_oracle import requires_torch


def _must_be_tensor(op: str, name: str, position: int, type_name: str) -> str:
    return f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type_name}"


# (call on a module that is lucid or torch, expected message)
NOT_A_TENSOR = [
    (lambda m: m.abs(None), _must_be_tensor("abs", "input", 1, "NoneType")),
    (lambda m: m.abs(3.0), _must_be_tensor("abs", "input", 1, "float")),
    (lambda m: m.abs([1.0]), _must_be_tensor("abs", "input", 1, "list")),
    (lambda m: m.abs(np.ones(2)), _must_be_tensor("abs", "input", 1, "numpy.ndarray")),
    (lambda m: m.exp_(None), _must_be_tensor("exp_", "input", 1, "NoneType")),
    (lambda m: m.sum(None), _must_be_tensor("sum", "input", 1, "NoneType")),
    (lambda m: m.isnan(None), _must_be_tensor("isnan", "input", 1, "NoneType")),
    (lambda m: m.zeros_like([1.0]), _must_be_tensor("zeros_like", "input", 1, "list")),
    (lambda m: m.argmax(None), _must_be_tensor("argmax", "input", 1, "NoneType")),
    (lambda m: m.flatten(3.0), _must_be_tensor("flatten", "input", 1, "float")),
    (lambda m: m.tril(None), _must_be_tensor("tril", "input", 1, "NoneType")),
    (
        lambda m: m.masked_select(m.ones(2), None),
        _must_be_tensor("masked_select", "mask", 2, "NoneType"),
    ),  # fmt: skip
    (lambda m: m.mean([1.0]), _must_be_tensor("mean", "input", 1, "list")),
    (lambda m: m.matmul(m.ones(2), None), _must_be_tensor("matmul", "other", 2, "NoneType")),
    (lambda m: m.diag(None), _must_be_tensor("diag", "input", 1, "NoneType")),
    (lambda m: m.nn.functional.relu(None), _must_be_tensor("relu", "input", 1, "NoneType")),
]


@pytest.mark.parametrize("call, message", NOT_A_TENSOR)
def test_non_tensor_argument_raises_pytorch_type_error(call, message):
    with pytest.raises(TypeError) as caught:
        call(lucid)
    assert str(caught.value) == message


@requires_torch
@pytest.mark.parametrize("call, message", NOT_A_TENSOR)
def test_non_tensor_argument_message_is_torchs(call, message):
    import torch.nn.functional  # noqa: F401  (torch.nn.functional as an attribute)

    with pytest.raises(TypeError) as caught:
        call(torch)
    assert str(caught.value) == message


def test_argument_error_does_not_hide_a_custom_functions_own_attribute_error():
    class Broken(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.missing_attribute

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(AttributeError):
        Broken.apply(None)


def test_module_forward_with_none_names_the_functional_argument():
    with pytest.raises(TypeError, match=r"linear\(\): argument 'input' \(position 1\)"):
        lucid.nn.Linear(2, 3)(None)
    with pytest.raises(TypeError, match="must be Tensor, not NoneType"):
        F.gelu(None)
