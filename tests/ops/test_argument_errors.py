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
    (lambda m: m.cumsum([1.0], 0), _must_be_tensor("cumsum", "input", 1, "list")),
    (
        lambda m: m.nn.functional.linear(m.ones(2, 3), None),
        _must_be_tensor("linear", "weight", 2, "NoneType"),
    ),  # fmt: skip
    (lambda m: m.where(None), _must_be_tensor("where", "condition", 1, "NoneType")),
    (lambda m: m.ones(2).view_as(None), _must_be_tensor("view_as", "other", 1, "NoneType")),
    (lambda m: m.bernoulli(None), _must_be_tensor("bernoulli", "input", 1, "NoneType")),
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


# (call on lucid or torch, exception type, message)
WORDING = [
    (lambda m: m.unsqueeze(m.ones(2, 3), 1.0),
     TypeError, "unsqueeze(): argument 'dim' (position 2) must be int, not float"),
    (lambda m: m.softmax(m.ones(2, 3), 1.0),
     TypeError, "softmax(): argument 'dim' (position 2) must be int, not float"),
    (lambda m: m.flatten(m.ones(2, 3), 1.0),
     TypeError, "flatten(): argument 'start_dim' (position 2) must be int, not float"),
    (lambda m: m.unbind(m.ones(2, 3), 1.0),
     TypeError, "unbind(): argument 'dim' (position 2) must be int, not float"),
    (lambda m: m.ones(2).__setitem__(2, 1.0),
     IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda m: m.ones(2, 3).__setitem__((0, 5), 1.0),
     IndexError, "index 5 is out of bounds for dimension 1 with size 3"),
    (lambda m: m.ones(2).__setitem__(m.tensor([2]), 1.0),
     IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda m: m.ones(2, -3),
     RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]"),
    (lambda m: m.ones(2, 3).view(-2, 3),
     RuntimeError, "invalid shape dimension -2 at index 0 of shape [-2, 3]"),
    (lambda m: m.ones(2, 3).expand(-2, 3),
     RuntimeError, "The expanded size of the tensor (-2) must match the existing size (2) at "
     "non-singleton dimension 0.  Target sizes: [-2, 3].  Tensor sizes: [2, 3]"),
]  # fmt: skip


@pytest.mark.parametrize("call, error, message", WORDING)
def test_dims_sizes_and_indices_use_pytorch_words(call, error, message):
    with pytest.raises(error) as caught:
        call(lucid)
    assert str(caught.value) == message


@requires_torch
@pytest.mark.parametrize("call, error, message", WORDING)
def test_dims_sizes_and_indices_words_are_torchs(call, error, message):
    import torch

    with pytest.raises(error) as caught:
        call(torch)
    assert str(caught.value) == message


def test_numpy_integer_dim_is_accepted():
    assert lucid.ones(2, 3).unsqueeze(np.int64(1)).shape == (2, 1, 3)
