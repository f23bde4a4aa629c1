"""lucid.autograd.forward_ad: dual tensors, their errors, and each rule family against torch.

Every op's forward-mode Jacobian is checked against finite differences by the op catalogue
(tests/ops/test_op_catalogue.py::test_forward_ad_gradcheck); these tests hold the API, the
engine rules forward mode adds, and values next to torch's forward mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.autograd.forward_ad as fwAD
import lucid.nn.functional as F
from tests.torch_oracle import requires_torch


def double(*shape: int, seed: int = 0) -> lucid.Tensor:
    return lucid.from_numpy(np.random.default_rng(seed).uniform(-1, 1, shape))


def tangent_of(fn, x: lucid.Tensor, t: lucid.Tensor) -> lucid.Tensor:
    with fwAD.dual_level():
        return fwAD.unpack_dual(fn(fwAD.make_dual(x, t))).tangent


# ------------------------------------------------------------------------------- API
def test_make_dual_outside_a_level_raises_pytorchs_error():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(double(3), double(3))


def test_make_dual_checks_size_and_dtypes_as_pytorch():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward"):
            fwAD.make_dual(double(3), double(2))
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            fwAD.make_dual(double(3), lucid.arange(3))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(lucid.arange(3), double(3))
        dual = fwAD.make_dual(double(3), double(3))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level"):
            fwAD.make_dual(dual, double(3))


def test_nested_levels_are_refused_as_in_pytorch():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()


def test_unpack_dual_gives_a_named_pair_and_none_for_a_plain_tensor():
    x, t = double(3), double(3, seed=1)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        unpacked = fwAD.unpack_dual(dual)
        assert isinstance(unpacked, fwAD.UnpackedDualTensor)
        assert unpacked._fields == ("primal", "tangent")
        assert unpacked.tangent is t
        assert fwAD.unpack_dual(unpacked.primal).tangent is None
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(dual > 0).tangent is None  # not floating point
    with pytest.raises(TypeError, match=r"argument 'dual' \(position 1\) must be Tensor, not int"):
        fwAD.unpack_dual(3)


def test_leaving_the_level_drops_every_tangent():
    with fwAD.dual_level():
        y = fwAD.make_dual(double(3), double(3)).exp()
        assert fwAD.unpack_dual(y).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None
    assert not fwAD.tangent_level_is_open()


def test_the_level_is_left_after_an_exception():
    with pytest.raises(ZeroDivisionError), fwAD.dual_level():
        raise ZeroDivisionError
    with fwAD.dual_level():  # no nested-level error: the first one was closed
        pass


def test_dual_level_decorates_a_function():
    @fwAD.dual_level()
    def tangent(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t).sin()).tangent

    x, t = double(4), double(4, seed=1)
    np.testing.assert_allclose(tangent(x, t).numpy(), np.cos(x.numpy()) * t.numpy())


@requires_torch
def test_repr_of_a_dual_tensor_shows_its_tangent_as_pytorch():
    import torch
    import torch.autograd.forward_ad as torch_fwAD

    x, t = double(2, 3), double(2, 3, seed=1)
    with fwAD.dual_level():
        ours = repr(fwAD.make_dual(x, t))
    with torch_fwAD.dual_level():
        theirs = repr(
            torch_fwAD.make_dual(torch.from_numpy(x.numpy()), torch.from_numpy(t.numpy()))
        )
    assert ours == theirs.replace("torch.", "lucid.")


def test_ops_on_plain_tensors_inside_a_level_get_no_tangent():
    with fwAD.dual_level():
        assert fwAD.unpack_dual(double(3).exp()).tangent is None


# ------------------------------------------------------------------------ engine rules
def test_rule_elementwise_op_uses_its_backward_on_the_tangent():
    x, t = double(5), double(5, seed=1)
    expected = t.numpy() / np.cosh(x.numpy()) ** 2
    np.testing.assert_allclose(tangent_of(lucid.tanh, x, t).numpy(), expected, rtol=1e-12)


def test_rule_elementwise_op_with_a_broadcast_input_is_derived_instead():
    x, t = double(1, 4), double(1, 4, seed=1)
    other = double(3, 4, seed=2)
    result = tangent_of(lambda d: lucid.atan2(d, other), x, t).numpy()
    xv, ov = x.numpy(), other.numpy()
    np.testing.assert_allclose(result, ov / (xv**2 + ov**2) * t.numpy(), rtol=1e-12)


def test_rule_linear_op_applies_itself_to_the_tangent():
    x, t = double(2, 3), double(2, 3, seed=1)
    result = tangent_of(lambda d: d.t().reshape(6)[1:4], x, t)
    np.testing.assert_array_equal(result.numpy(), t.numpy().T.reshape(6)[1:4])


def test_rule_linear_op_drops_a_constant_operand():
    x, t = double(3), double(3, seed=1)
    np.testing.assert_array_equal(tangent_of(lambda d: 2.5 - d + 1, x, t).numpy(), -t.numpy())


def test_rule_product_sums_one_term_per_factor():
    a, ta = double(3, 4), double(3, 4, seed=1)
    b, tb = double(4, 2, seed=2), double(4, 2, seed=3)
    with fwAD.dual_level():
        out = fwAD.make_dual(a, ta) @ fwAD.make_dual(b, tb)
        result = fwAD.unpack_dual(out).tangent.numpy()
    expected = ta.numpy() @ b.numpy() + a.numpy() @ tb.numpy()
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_rule_inplace_op_reruns_on_the_values_before_the_write():
    x, t = double(4) + 2, double(4, seed=1)

    def log_in_place(d):
        y = d.clone()
        y.log_()
        return y

    np.testing.assert_allclose(tangent_of(log_in_place, x, t).numpy(), t.numpy() / x.numpy())


def test_rule_inplace_op_under_no_grad_still_carries_the_tangent():
    x, t = double(4) + 2, double(4, seed=1)

    def clamp_without_grad(d):
        y = d.clone()
        with lucid.no_grad():
            y.clamp_(min=1e-6)
        return y.log()

    np.testing.assert_allclose(
        tangent_of(clamp_without_grad, x, t).numpy(), t.numpy() / x.numpy(), rtol=1e-12
    )


def test_rule_derived_random_op_sees_the_numbers_its_forward_drew():
    x, t = double(50) + 2, double(50, seed=1)
    lucid.manual_seed(0)
    with fwAD.dual_level():
        out = lucid.normal(fwAD.make_dual(x, t), 0.5)
        after = lucid.rand(1)
        result = fwAD.unpack_dual(out).tangent
    lucid.manual_seed(0)
    assert lucid.equal(lucid.normal(x, 0.5), fwAD.unpack_dual(out).primal)
    assert lucid.equal(lucid.rand(1), after)  # the stream goes on as without forward mode
    np.testing.assert_allclose(result.numpy(), t.numpy(), rtol=1e-12)


def test_rule_saved_output_carries_its_tangent_into_backward():
    # forward over reverse: exp's backward reads its saved output
    x, t = double(3), double(3, seed=1)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t).requires_grad_()
        (grad,) = lucid.autograd.grad(dual.exp().sum(), dual, create_graph=True)
        result = fwAD.unpack_dual(grad).tangent
    np.testing.assert_allclose(result.detach().numpy(), np.exp(x.numpy()) * t.numpy())


def test_rule_tangent_is_differentiable_with_respect_to_the_primal():
    # reverse over forward: d/dx of (J t) for sin is -sin(x) t
    x, t = double(3).requires_grad_(), double(3, seed=1)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fwAD.make_dual(x, t).sin()).tangent
    (grad,) = lucid.autograd.grad(tangent.sum(), x)
    np.testing.assert_allclose(grad.numpy(), -np.sin(x.detach().numpy()) * t.numpy())


def test_rule_op_without_a_differentiable_backward_raises_pytorchs_error():
    logits = double(3, 5)
    target = lucid.tensor([1, 0, 4])
    with fwAD.dual_level():
        dual = fwAD.make_dual(logits, double(3, 5, seed=1))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with multi_margin"):
            F.multi_margin_loss(dual, target)


# -------------------------------------------------------------------- custom Functions
class SinWithJvp(lucid.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_forward(x)
        ctx.scale = scale
        return x.sin() * scale

    @staticmethod
    def backward(ctx, grad):
        raise AssertionError("forward mode must not call backward")

    @staticmethod
    def jvp(ctx, x_tangent, scale_tangent):
        assert scale_tangent is None  # a non-tensor input gets None, as in PyTorch
        (x,) = ctx.saved_tensors
        return x_tangent * x.cos() * ctx.scale


class BackwardOnly(lucid.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_custom_function_jvp_reads_what_forward_saved_for_it():
    x, t = double(4), double(4, seed=1)
    result = tangent_of(lambda d: SinWithJvp.apply(d, 3.0), x, t)
    np.testing.assert_allclose(result.numpy(), t.numpy() * np.cos(x.numpy()) * 3.0)


def test_custom_function_jvp_gets_zeros_for_a_tensor_without_tangent():
    seen = []

    class Pair(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def jvp(ctx, tx, ty):
            seen.append(ty)
            return tx

    with fwAD.dual_level():
        Pair.apply(fwAD.make_dual(double(3), double(3)), double(3))
    assert lucid.equal(seen[0], lucid.zeros(3, dtype=lucid.float64))


def test_custom_function_without_jvp_raises_pytorchs_error():
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            BackwardOnly.apply(fwAD.make_dual(double(3), double(3)))


# ------------------------------------------------------------------------ parity
@requires_torch
def test_mlp_tangent_matches_torch_forward_mode():
    import torch
    import torch.autograd.forward_ad as torch_fwAD

    rng = np.random.default_rng(0)
    w1, b1 = rng.normal(size=(16, 8)), rng.normal(size=16)
    w2, b2 = rng.normal(size=(4, 16)), rng.normal(size=4)
    x, t = rng.normal(size=(5, 8)), rng.normal(size=(5, 8))

    def model(lib, functional, xs):
        h = functional.gelu(functional.linear(xs, lib.tensor(w1), lib.tensor(b1)))
        h = functional.layer_norm(h, (16,))
        return functional.log_softmax(functional.linear(h, lib.tensor(w2), lib.tensor(b2)), 1)

    with fwAD.dual_level():
        ours = fwAD.unpack_dual(model(lucid, F, fwAD.make_dual(lucid.tensor(x), lucid.tensor(t))))
    with torch_fwAD.dual_level():
        dual = torch_fwAD.make_dual(torch.tensor(x), torch.tensor(t))
        theirs = torch_fwAD.unpack_dual(model(torch, torch.nn.functional, dual))
    np.testing.assert_allclose(ours.primal.numpy(), theirs.primal.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.tangent.numpy(), theirs.tangent.numpy(), rtol=1e-8, atol=1e-12)


@requires_torch
def test_conv_tangent_with_every_input_dual_matches_torch():
    import torch
    import torch.autograd.forward_ad as torch_fwAD

    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=s) for s in ((2, 3, 6, 6), (4, 3, 3, 3), (4,))]
    tangents = [rng.normal(size=a.shape) for a in arrays]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(lucid.tensor(a), lucid.tensor(t)) for a, t in zip(arrays, tangents)]
        ours = fwAD.unpack_dual(F.conv2d(*duals, padding=1)).tangent.numpy()
    with torch_fwAD.dual_level():
        duals = [
            torch_fwAD.make_dual(torch.tensor(a), torch.tensor(t)) for a, t in zip(arrays, tangents)
        ]
        theirs = torch_fwAD.unpack_dual(torch.nn.functional.conv2d(*duals, padding=1)).tangent
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)
