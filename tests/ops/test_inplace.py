"""The engine rules of in-place forms (ops/_common.apply_inplace): one node, the op's own
backward and grad_fn name, the old value kept when backward needs it, PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

# (name, call): the same call runs on lucid and on torch tensors, float64 values in
# (0.1, 0.9); `x` is a non-leaf, `o` a second tensor that requires grad.
INPLACE_OPS = [
    ("add_", lambda x, o: x.add_(o, alpha=0.5)),
    ("add_scalar", lambda x, o: x.add_(2.0)),
    ("sub_", lambda x, o: x.sub_(o)),
    ("mul_", lambda x, o: x.mul_(o)),
    ("mul_scalar", lambda x, o: x.mul_(3.0)),
    ("div_", lambda x, o: x.div_(o)),
    ("div_scalar", lambda x, o: x.div_(3.0)),
    ("div_floor", lambda x, o: x.div_(o, rounding_mode="floor")),
    ("remainder_", lambda x, o: x.remainder_(0.3)),
    ("remainder_tensor", lambda x, o: x.remainder_(o)),
    ("pow_", lambda x, o: x.pow_(2.5)),
    ("pow_tensor", lambda x, o: x.pow_(o)),
    ("neg_", lambda x, o: x.neg_()),
    ("exp_", lambda x, o: x.exp_()),
    ("sqrt_", lambda x, o: x.sqrt_()),
    ("abs_", lambda x, o: x.abs_()),
    ("clamp_", lambda x, o: x.clamp_(0.2, 0.8)),
    ("clamp_tensor", lambda x, o: x.clamp_(o * 0.5, o)),
    ("logit_", lambda x, o: x.logit_()),
    ("logit_eps", lambda x, o: x.logit_(eps=0.2)),
    ("masked_fill_", lambda x, o: x.masked_fill_(o > 0.5, 0.0)),
    ("relu_", lambda x, o: x.relu_()),
    ("leaky_relu_", lambda x, o: _functional(x).leaky_relu(x, 0.1, inplace=True)),
    ("elu_", lambda x, o: _functional(x).elu(x, inplace=True)),
    ("celu_", lambda x, o: _functional(x).celu(x, inplace=True)),
    ("selu_", lambda x, o: _functional(x).selu(x, inplace=True)),
    ("silu_", lambda x, o: _functional(x).silu(x, inplace=True)),
    ("mish_", lambda x, o: _functional(x).mish(x, inplace=True)),
    ("hardtanh_", lambda x, o: _functional(x).hardtanh(x, 0.2, 0.8, inplace=True)),
    ("hardsigmoid_", lambda x, o: _functional(x).hardsigmoid(x, inplace=True)),
    ("hardswish_", lambda x, o: _functional(x).hardswish(x, inplace=True)),
    ("fill_", lambda x, o: x.fill_(1.5)),
    ("zero_", lambda x, o: x.zero_()),
    ("copy_", lambda x, o: x.copy_(o)),
]


def _functional(x):
    """lucid.nn.functional or torch.nn.functional, after the tensor's library."""
    if isinstance(x, lucid.Tensor):
        return lucid.nn.functional
    import torch

    return torch.nn.functional


def _inputs(library, requires_grad=True):
    rng = np.random.default_rng(0)
    x = library.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=requires_grad)
    other = library.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=requires_grad)
    return x, other


@pytest.mark.parametrize("case", INPLACE_OPS, ids=[name for name, _ in INPLACE_OPS])
def test_inplace_grad_fn_names_match_torch(case):
    torch = pytest.importorskip("torch")
    _, call = case
    x, other = _inputs(lucid)
    result = call(x * 1.0, other)
    tx, tother = _inputs(torch)
    expected = call(tx * 1.0, tother)
    assert result.grad_fn.name() == expected.grad_fn.name().replace("torch::", "lucid::")
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("case", INPLACE_OPS, ids=[name for name, _ in INPLACE_OPS])
def test_inplace_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    _, call = case
    x, other = _inputs(lucid)
    result = call(x * 1.0, other)
    grads = lucid.autograd.grad(result.sum(), (x, other), allow_unused=True)
    tx, tother = _inputs(torch)
    expected = torch.autograd.grad(call(tx * 1.0, tother).sum(), (tx, tother), allow_unused=True)
    for grad, grad_expected in zip(grads, expected):
        if grad_expected is None:
            assert grad is None or not grad.numpy().any()
        else:
            np.testing.assert_allclose(grad.numpy(), grad_expected.numpy(), rtol=1e-10)


def test_inplace_on_leaf_requiring_grad_raises():
    x = lucid.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x.exp_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x.mul_(2.0)
    assert x._version == 0
    np.testing.assert_array_equal(x.detach().numpy(), np.ones(3, np.float32))


def test_inplace_on_leaf_under_no_grad_is_allowed():
    x = lucid.ones(3, requires_grad=True)
    with lucid.no_grad():
        x.mul_(2.0).add_(1.0)
    np.testing.assert_array_equal(x.detach().numpy(), np.full(3, 3.0, np.float32))
    assert x.grad_fn is None and x.requires_grad


def test_inplace_form_writes_through_views():
    base = lucid.arange(6.0).reshape(2, 3)
    row = base[1]
    row.mul_(10.0)
    row.exp_()
    np.testing.assert_allclose(base.numpy()[1], np.exp(np.arange(3.0, 6.0) * 10.0), rtol=1e-6)
    base.sqrt_()
    np.testing.assert_allclose(row.numpy(), np.exp(np.arange(3.0, 6.0) * 5.0), rtol=1e-6)


def test_inplace_form_bumps_version_once():
    for requires_grad in (False, True):
        x = lucid.rand(5, requires_grad=requires_grad) * 1.0
        before = x._version
        x.add_(1.0, alpha=2.0)
        assert x._version == before + 1
        x.exp_()
        x.clamp_(0.0, 2.0)
        x.logit_(eps=0.1)
        assert x._version == before + 4


def test_inplace_result_modified_again_raises_version_error():
    x = lucid.rand(3, requires_grad=True)
    y = x * 1.0
    y.exp_()  # saves its result, which is y itself
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_backward_uses_old_value():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    other = lucid.tensor([4.0, 5.0, 6.0], requires_grad=True)
    y = x * 1.0
    y.mul_(other)
    y.sum().backward()
    np.testing.assert_array_equal(other.grad.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 5.0, 6.0])


def test_inplace_backward_uses_old_value_double_backward():
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.float64, requires_grad=True)
    y = x * 1.0
    y.pow_(3)
    (grad,) = lucid.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), 3 * np.array([1.0, 4.0, 9.0]))
    (second,) = lucid.autograd.grad(grad.sum(), x)
    np.testing.assert_allclose(second.numpy(), 6 * np.array([1.0, 2.0, 3.0]))


def test_inplace_gradgradcheck_through_saved_old_value_and_result():
    x = lucid.tensor([0.3, 0.6, 0.8], dtype=lucid.float64, requires_grad=True)
    other = lucid.tensor([0.5, 1.5, 2.0], dtype=lucid.float64, requires_grad=True)
    checks = [
        lambda a, b: (a * 1.0).mul_(b),
        lambda a, b: (a * 1.0).div_(b),
        lambda a, b: (a * 1.0).pow_(b),
        lambda a, b: (a * 1.0).exp_() * b,
        lambda a, b: (a * 1.0).logit_() * b,
        lambda a, b: lucid.nn.functional.silu(a * b, inplace=True),
    ]
    for function in checks:
        assert lucid.autograd.gradgradcheck(function, (x, other))


def test_inplace_of_tensor_with_itself_uses_old_value_for_both_operands():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    y.mul_(y)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_inplace_result_that_cannot_be_cast_raises_pytorch_error():
    x = lucid.arange(3)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output"):
        x.exp_()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output"):
        x.add_(0.5)
    with pytest.raises(RuntimeError, match="output type long int"):
        x.clamp_(0.5, 1.5)
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2])
    assert x._version == 0


def test_inplace_result_of_broadcast_shape_raises_pytorch_error():
    x = lucid.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast"):
        x.add_(lucid.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast"):
        x.mul_(lucid.ones(2, 3))


def test_inplace_written_straight_into_input_matches_out_of_place():
    rng = np.random.default_rng(1)
    for dtype in (lucid.float32, lucid.float64, lucid.int64):
        x = lucid.tensor(rng.integers(1, 9, (4, 3)), dtype=dtype)
        other = lucid.tensor(rng.integers(1, 9, (3,)), dtype=dtype)
        for name in ("add", "sub", "mul"):
            expected = getattr(lucid, name)(x, other)
            np.testing.assert_array_equal(getattr(x.clone(), name + "_")(other).numpy(), expected)
        expected = lucid.add(x, other, alpha=2)
        np.testing.assert_array_equal(x.clone().add_(other, alpha=2).numpy(), expected.numpy())
    x = lucid.rand(4, 3)
    np.testing.assert_allclose(x.clone().div_(2.0).numpy(), (x / 2.0).numpy())
    np.testing.assert_allclose(x.clone().sqrt_().numpy(), x.sqrt().numpy())
