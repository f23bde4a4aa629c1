"""gradcheck and gradgradcheck: they pass correct backwards and catch wrong ones."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid._core.tensor import _wrap
from lucid.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def double(*shape: int, low: float = -1.0, high: float = 1.0) -> lucid.Tensor:
    array = np.random.default_rng(len(shape)).uniform(low, high, shape)
    return lucid.from_numpy(array).requires_grad_()


class ExpWithWrongBackward(Function):
    @staticmethod
    def forward(ctx, x):
        result = _wrap(np.exp(x._data))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result * 1.1


class NoisyBackward(Function):
    """x * 3 whose backward adds tiny random noise, as a nondeterministic kernel would."""

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data * 3)

    @staticmethod
    def backward(ctx, grad_output):
        noise = np.random.default_rng().uniform(-1e-9, 1e-9, grad_output.shape)
        return grad_output * (3 + _wrap(noise))


class SquareWithDetachedBackward(Function):
    """Right first derivative, but the backward is not differentiable with respect to x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(x._data**2)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (2 * x.detach())


class GradientIgnoringZeroGradOutput(Function):
    """x * 2 whose backward returns ones when the incoming gradient is all zeros."""

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data * 2)

    @staticmethod
    def backward(ctx, grad_output):
        if np.all(grad_output.numpy() == 0):
            return _wrap(np.ones(grad_output.shape))
        return grad_output * 2


class SplitFailingOnUndefinedNextToZero(Function):
    """Two outputs; the backward fails when one gradient is undefined and the other is zero."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return _wrap(x._data * 2), _wrap(x._data * 3)

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        if grad_a is None and np.all(grad_b.numpy() == 0):
            raise RuntimeError("undefined gradient next to a zero one")
        grad_x = None
        if grad_a is not None:
            grad_x = grad_a * 2
        if grad_b is not None:
            grad_x = grad_b * 3 if grad_x is None else grad_x + grad_b * 3
        return grad_x


def test_gradcheck_and_its_error_are_exported_from_lucid_autograd():
    assert callable(lucid.autograd.gradcheck)
    assert callable(lucid.autograd.gradgradcheck)
    assert issubclass(lucid.autograd.GradcheckError, RuntimeError)


def test_gradcheck_passes_correct_backward_of_builtin_ops():
    x, y = double(3, 4), double(4, 2)
    assert gradcheck(lambda a, b: (a @ b).tanh() * 2, (x, y))
    assert gradcheck(lambda a: (a * a).exp().sum(), x)


def test_gradcheck_accepts_non_tensor_inputs_and_non_differentiable_outputs():
    x, y = double(3), double(3)
    assert gradcheck(lambda a, scale, b: (a * b * scale, a > 0), (x, 2.5, y))


def test_gradcheck_catches_wrong_backward_in_custom_function():
    x = double(2, 2)
    with pytest.raises(GradcheckError) as info:
        gradcheck(ExpWithWrongBackward.apply, (x,))
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:" in message


def test_mismatch_names_the_failing_output_and_input():
    x, y = double(3), double(3)
    with pytest.raises(GradcheckError, match="for output 1 with respect to input 1,"):
        gradcheck(lambda a, b: (a * b, a + ExpWithWrongBackward.apply(b)), (x, y))


def test_raise_exception_false_returns_false_instead_of_raising():
    x = double(3)
    assert gradcheck(ExpWithWrongBackward.apply, (x,), raise_exception=False) is False
    assert gradcheck(lucid.exp, (x,), raise_exception=False) is True


def test_fast_mode_passes_correct_and_catches_wrong_backward():
    x, y = double(3, 4), double(4)
    assert gradcheck(lambda a, b: (a * b).exp(), (x, y), fast_mode=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(ExpWithWrongBackward.apply, (x,), fast_mode=True)
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert "slow mode" in message


def test_nondeterministic_backward_fails_reentrancy_unless_nondet_tol_allows_it():
    x = double(4)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(NoisyBackward.apply, (x,))
    assert gradcheck(NoisyBackward.apply, (x,), nondet_tol=1e-6)
    assert gradcheck(NoisyBackward.apply, (x,), nondet_tol=1e-6, fast_mode=True)


def test_float32_input_warns_like_pytorch():
    x = lucid.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(lucid.exp, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_double_input_does_not_warn(recwarn):
    gradcheck(lucid.exp, (double(3),))
    assert not [w for w in recwarn if "double precision" in str(w.message)]


def test_no_input_requiring_grad_is_a_value_error():
    x = lucid.from_numpy(np.ones(3))
    with pytest.raises(ValueError, match="none of them have requires_grad=True"):
        gradcheck(lucid.exp, (x,))


def test_input_with_zero_stride_is_rejected():
    x = double(1).expand(3)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lucid.exp, (x,))


def test_inputs_are_restored_exactly_and_their_version_is_untouched():
    x = double(3, 2)
    before = x.detach().numpy().copy()
    version = x._version
    gradcheck(lambda a: a.tanh(), (x,))
    gradcheck(lambda a: a.tanh(), (x,), fast_mode=True)
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == version


def test_output_independent_of_inputs_must_have_zero_numerical_gradient():
    x = double(3)
    assert gradcheck(lambda a: (a > 0).double(), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * 2, (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * 2, (x,), fast_mode=True)


def test_backward_must_scale_with_grad_output():
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(GradientIgnoringZeroGradOutput.apply, (double(3),))


def test_backward_must_handle_undefined_output_grads():
    x = double(3)
    with pytest.warns(UserWarning, match="check_undefined_grad=False"):
        with pytest.raises(GradcheckError, match="handle undefined output grads"):
            gradcheck(SplitFailingOnUndefinedNextToZero.apply, (x,))
    assert gradcheck(SplitFailingOnUndefinedNextToZero.apply, (x,), check_undefined_grad=False)


def test_unsupported_options_raise_not_implemented_only_when_enabled():
    x = double(3)
    assert gradcheck(lucid.exp, (x,), check_batched_grad=False)
    with pytest.raises(NotImplementedError):
        gradcheck(lucid.exp, (x,), check_batched_grad=True)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_forward_ad_checks_pass_for_a_correct_forward_mode(fast_mode):
    x = double(3)
    assert gradcheck(lambda t: (t * t).exp(), (x,), check_forward_ad=True, fast_mode=fast_mode)
    assert gradcheck(lucid.sin, (x,), check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(lambda t: (t * t).exp(), (x,), check_fwd_over_rev=True)


class WrongJvp(lucid.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2

    @staticmethod
    def jvp(ctx, tangent):
        return tangent * 3


@pytest.mark.parametrize("fast_mode", [False, True])
def test_forward_ad_check_names_a_wrong_jvp_as_pytorch_does(fast_mode):
    x = double(3)
    assert gradcheck(WrongJvp.apply, (x,))  # backward is right
    with pytest.raises(
        GradcheckError,
        match="Jacobian computed with forward mode mismatch for output 0 with respect to input 0",
    ):
        gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, fast_mode=fast_mode)


def test_option_conflicts_are_assertion_errors_as_in_pytorch():
    x = double(3)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
        gradcheck(lucid.exp, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="requires check_rev_over_rev"):
        gradgradcheck(lucid.exp, (x,), check_rev_over_rev=False, check_fwd_over_rev=True)


def test_gradgradcheck_passes_twice_differentiable_ops():
    x, y = double(3, 4), double(4)
    assert gradgradcheck(lambda a, b: (a * b).tanh().exp(), (x, y))
    assert gradgradcheck(lambda a, b: (a * b).tanh().exp(), (x, y), fast_mode=True)


def test_gradgradcheck_catches_backward_that_is_not_differentiable():
    x = double(3)
    assert gradcheck(SquareWithDetachedBackward.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(SquareWithDetachedBackward.apply, (x,))


def test_gradgradcheck_with_given_and_non_contiguous_grad_outputs():
    x = double(3, 4)
    grad_output = double(3, 4)
    assert gradgradcheck(lambda a: a.exp() * a, (x,), (grad_output,))
    assert gradgradcheck(lambda a: a.exp() * a, (x,), gen_non_contig_grad_outputs=True)


def test_gradgradcheck_grad_outputs_are_seeded():
    """The random grad_outputs do not depend on, or disturb, the global random state."""
    seen = []

    def record(a):
        out = a * a
        out.register_hook(lambda g: seen.append(g.detach().numpy().copy()))
        return out

    x = double(3)
    lucid.manual_seed(1)
    gradgradcheck(record, (x,), check_undefined_grad=False)
    first = seen[0]
    seen.clear()
    lucid.manual_seed(2)
    gradgradcheck(record, (x,), check_undefined_grad=False)
    np.testing.assert_array_equal(seen[0], first)
