"""Autograd and shape errors: PyTorch's exception types and wording, one rule per test."""

from __future__ import annotations

import re

import pytest

import lucid
from lucid import autograd
from tests.torch_oracle import TORCH_MISSING, requires_torch, torch

FREED_GRAPH_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _leaf(values=(1.0, 2.0)) -> lucid.Tensor:
    return lucid.tensor(list(values), requires_grad=True)


def _raises(error_type, message):
    """pytest.raises matching the whole message literally."""
    return pytest.raises(error_type, match="^" + re.escape(message) + "$")


def test_backward_twice_without_retain_graph_raises():
    x = _leaf()
    y = (x * x).sum()
    y.backward()
    with _raises(RuntimeError, FREED_GRAPH_MESSAGE):
        y.backward()


def test_grad_twice_without_retain_graph_raises():
    x = _leaf()
    y = x.exp().sum()
    autograd.grad(y, x)
    with _raises(RuntimeError, FREED_GRAPH_MESSAGE):
        autograd.grad(y, x)


def test_implicit_gradient_for_non_scalar_output_raises():
    x = _leaf()
    with _raises(RuntimeError, "grad can be implicitly created only for scalar outputs"):
        (x * x).backward()


def test_backward_on_tensor_without_grad_raises():
    x = lucid.tensor([1.0, 2.0])
    with _raises(
        RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        (x * x).sum().backward()


def test_grad_of_output_without_grad_raises_naming_its_index():
    x = _leaf()
    with _raises(
        RuntimeError, "element 1 of tensors does not require grad and does not have a grad_fn"
    ):
        autograd.grad([x.sum(), lucid.ones(())], x)


def test_grad_with_input_that_does_not_require_grad_raises():
    x = _leaf()
    with _raises(RuntimeError, "One of the differentiated Tensors does not require grad"):
        autograd.grad(x.sum(), lucid.ones(2))


def test_grad_with_unused_input_raises_unless_allow_unused():
    x = _leaf()
    unused = _leaf()
    with _raises(
        RuntimeError,
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior.",
    ):
        autograd.grad((x * 2).sum(), [x, unused])


def test_grad_allow_unused_false_with_materialize_grads_raises():
    x = _leaf()
    with _raises(
        ValueError,
        "Expected allow_unused to be True or not passed when materialize_grads=True, "
        "but got: allow_unused=False.",
    ):
        autograd.grad((x * 2).sum(), x, allow_unused=False, materialize_grads=True)


def test_backward_with_empty_inputs_raises():
    x = _leaf()
    with _raises(RuntimeError, "`inputs` argument to `backward()` cannot be empty."):
        x.sum().backward(inputs=[])


def test_grad_with_empty_inputs_raises():
    x = _leaf()
    with _raises(RuntimeError, "`inputs` argument to `grad()` cannot be empty."):
        autograd.grad(x.sum(), [])


def test_python_number_as_gradient_raises_type_error():
    x = _leaf()
    with _raises(TypeError, "gradients can be either Tensors or None, but got float"):
        autograd.grad((x * 2).sum(), x, grad_outputs=[1.0])


def test_fewer_gradients_than_outputs_raises():
    x = _leaf()
    with _raises(RuntimeError, "got 2 tensors and 1 gradients"):
        autograd.backward([(x * 2).sum(), (x * 3).sum()], [None])


def test_gradient_of_wrong_shape_raises():
    x = _leaf()
    with _raises(
        RuntimeError,
        "Mismatch in shape: grad_output[0] has a shape of lucid.Size([3]) and output[0] has a "
        "shape of lucid.Size([2]).",
    ):
        (x * 2).backward(lucid.ones(3))


def test_inplace_on_leaf_requiring_grad_raises():
    x = _leaf()
    message = "a leaf Variable that requires grad is being used in an in-place operation."
    with _raises(RuntimeError, message):
        x.add_(1.0)
    with _raises(RuntimeError, message):
        x += 1.0
    assert x.tolist() == [1.0, 2.0]


def test_inplace_on_leaf_under_no_grad_is_allowed():
    x = _leaf()
    with lucid.no_grad():
        x.mul_(2.0)
    assert x.tolist() == [2.0, 4.0]
    assert x.is_leaf and x.requires_grad


def test_inplace_on_saved_tensor_raises_version_error():
    x = _leaf()
    y = x * 1.0
    z = y * y
    y.add_(1.0)
    with _raises(
        RuntimeError,
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [lucid.FloatTensor [2]], which is output 0 of Add, is at version 1; "
        "expected version 0 instead. Hint: enable anomaly detection to find the operation that "
        "failed to compute its gradient, with "
        "lucid.autograd.set_detect_anomaly(True, check_nan=False).",
    ):
        z.sum().backward()


def test_inplace_on_saved_output_names_its_op():
    x = lucid.tensor([1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    y = x.exp()
    y.mul_(2.0)
    with pytest.raises(
        RuntimeError,
        match=re.escape("[lucid.DoubleTensor [2]], which is output 0 of Exp, is at version 1"),
    ):
        y.sum().backward()


def test_inplace_on_saved_tensor_without_grad_fn_raises_version_error():
    x = _leaf()
    w = lucid.tensor([3.0, 4.0])
    y = x * w
    w.add_(1.0)
    with _raises(
        RuntimeError,
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [lucid.FloatTensor [2]] is at version 1; expected version 0 instead. Hint: "
        "enable anomaly detection to find the operation that failed to compute its gradient, "
        "with lucid.autograd.set_detect_anomaly(True, check_nan=False).",
    ):
        y.sum().backward()


def test_version_error_matches_pytorch_wording():
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)

    def message(module):
        x = module.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x * 1.0
        z = y * y
        y.mul_(2.0)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        return str(info.value)

    assert message(lucid) == message(torch).replace("torch.", "lucid.")


def test_broadcast_mismatch_names_both_sizes():
    with _raises(
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1",
    ):
        lucid.ones(2, 3) + lucid.ones(3, 2)
    with _raises(
        RuntimeError,
        "The size of tensor a (5) must match the size of tensor b (3) at non-singleton dimension 0",
    ):
        lucid.ones(5) * lucid.ones(3)


def test_matmul_shape_mismatch_raises():
    with _raises(RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)"):
        lucid.ones(2, 3) @ lucid.ones(4, 3)


def test_matmul_vector_size_mismatch_raises():
    with _raises(
        RuntimeError,
        "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
        "elements, but got 3 and 4 elements respectively",
    ):
        lucid.ones(3) @ lucid.ones(4)


def test_matmul_batched_by_matrix_mismatch_reports_folded_rows():
    with _raises(RuntimeError, "mat1 and mat2 shapes cannot be multiplied (6x4 and 5x6)"):
        lucid.ones(2, 3, 4) @ lucid.ones(5, 6)


def test_matmul_vector_by_matrix_mismatch_reports_row_vector():
    with _raises(RuntimeError, "mat1 and mat2 shapes cannot be multiplied (1x3 and 2x2)"):
        lucid.ones(3) @ lucid.ones(2, 2)


def test_matmul_batch_broadcast_mismatch_raises_broadcast_error():
    with _raises(
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
    ):
        lucid.ones(3, 2, 3) @ lucid.ones(2, 3, 2)


def test_view_of_non_contiguous_layout_raises():
    message = (
        "view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
    )
    with _raises(RuntimeError, message):
        lucid.ones(2, 3).t().view(6)
    with _raises(RuntimeError, message):
        lucid.ones(2, 3, 4).permute(2, 0, 1).view(2, 12)


def test_view_of_wrong_size_raises():
    with _raises(RuntimeError, "shape '[3]' is invalid for input of size 2"):
        lucid.ones(2).view(3)


def test_requires_grad_on_integer_tensor_raises():
    x = lucid.tensor([1, 2])
    message = "only Tensors of floating point and complex dtype can require gradients"
    with _raises(RuntimeError, message):
        x.requires_grad = True
    with _raises(RuntimeError, message):
        x.requires_grad_()
    assert not x.requires_grad


def test_factory_requires_grad_on_integer_dtype_raises():
    with _raises(
        RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"
    ):
        lucid.tensor([1, 2], requires_grad=True)


def test_requires_grad_false_on_integer_tensor_is_allowed():
    x = lucid.tensor([1, 2])
    x.requires_grad = False
    assert not x.requires_grad


def test_requires_grad_false_on_non_leaf_raises():
    y = _leaf() * 2
    with _raises(
        RuntimeError,
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach().",
    ):
        y.requires_grad = False


def test_setting_requires_grad_true_on_non_leaf_raises():
    y = _leaf() * 2
    with _raises(RuntimeError, "you can only change requires_grad flags of leaf variables."):
        y.requires_grad = True


def test_requires_grad_method_with_true_on_non_leaf_is_a_no_op():
    y = _leaf() * 2
    assert y.requires_grad_() is y
    assert y.requires_grad and y.grad_fn is not None


def test_numpy_on_tensor_requiring_grad_raises():
    with _raises(
        RuntimeError,
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
    ):
        _leaf().numpy()


def test_hook_on_tensor_without_grad_raises():
    with _raises(RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"):
        lucid.ones(2).register_hook(lambda grad: grad)


def test_retain_grad_on_tensor_without_grad_raises():
    with _raises(RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"):
        lucid.ones(2).retain_grad()


def test_item_of_many_elements_raises():
    with _raises(RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar"):
        lucid.ones(2).item()


def test_bool_of_many_elements_raises():
    with _raises(RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"):
        bool(lucid.ones(2))


@requires_torch
@pytest.mark.parametrize(
    ("shape", "sizes"),
    [((2, 2), (4, 5)), ((3,), (-1, 3)), ((2, 3), (-1, 4, 3)), ((5, 4, 3), (4, 5))],
)
def test_expand_errors_name_the_dim_pytorch_checks_first(shape, sizes):
    # PyTorch checks from the last dim, so a shape wrong in several dims names the last
    with pytest.raises(RuntimeError) as expected:
        torch.ones(*shape).expand(*sizes)
    with _raises(RuntimeError, str(expected.value).replace("torch.", "lucid.")):
        lucid.ones(*shape).expand(*sizes)


@requires_torch
def test_addmm_bias_that_cannot_broadcast_raises_expand_error():
    for beta in (1, 0, 0.5):
        with pytest.raises(RuntimeError) as expected:
            torch.addmm(torch.ones(2, 2), torch.ones(4, 2), torch.ones(2, 5), beta=beta)
        with _raises(RuntimeError, str(expected.value)):
            lucid.addmm(lucid.ones(2, 2), lucid.ones(4, 2), lucid.ones(2, 5), beta=beta)
