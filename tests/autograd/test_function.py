"""Custom autograd.Function: forward/backward, ctx API, setup_context, once_differentiable."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import lucid
from lucid import autograd
from lucid.autograd import Function


def _leaf(values=(1.0, 2.0), dtype=lucid.float32) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=dtype, requires_grad=True)


def _numerical_gradient(func, array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar func(tensor) at `array` (float64)."""
    gradient = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        shifted = array.copy()
        shifted[index] += eps
        above = func(lucid.tensor(shifted)).item()
        shifted[index] -= 2 * eps
        below = func(lucid.tensor(shifted)).item()
        gradient[index] = (above - below) / (2 * eps)
    return gradient


# ------------------------------------------------- examples in the style of PyTorch's docs
class Exp(Function):
    """e^x, saving its output: the derivative of e^x is e^x itself."""

    @staticmethod
    def forward(ctx, x):
        result = lucid.from_numpy(np.asarray(np.exp(x.detach().numpy())))
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class LinearFunction(Function):
    """x @ w^T + b, computing only the gradients that are asked for."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight, bias)
        output = x.mm(weight.t())
        if bias is not None:
            output = output + bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(x)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_x, grad_weight, grad_bias


class MulConstant(Function):
    """x * constant, with the constant kept on ctx since it is not a tensor."""

    @staticmethod
    def forward(ctx, x, constant):
        ctx.constant = constant
        return x * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class Cube(Function):
    """x^3 written in setup_context style: forward takes no ctx."""

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x**2


def test_exp_function_forward_and_backward():
    x = _leaf((0.0, 1.0, -2.0), dtype=lucid.float64)
    y = Exp.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), np.exp([0.0, 1.0, -2.0]))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0, -2.0]))


def test_custom_function_grad_fn_is_named_after_the_class():
    y = Exp.apply(_leaf())
    assert y.grad_fn.name() == "ExpBackward"
    assert not y.is_leaf and y.requires_grad
    assert repr(y).endswith("grad_fn=<ExpBackward>)")


def test_exp_function_supports_double_backward():
    x = lucid.tensor(0.5, dtype=lucid.float64, requires_grad=True)
    (d1,) = autograd.grad(Exp.apply(x), x, create_graph=True)
    (d2,) = autograd.grad(d1, x)
    assert math.isclose(d2.item(), math.exp(0.5))


def test_linear_function_matches_finite_differences():
    rng = np.random.default_rng(0)
    x_data, w_data, b_data = rng.normal(size=(4, 3)), rng.normal(size=(2, 3)), rng.normal(size=2)
    x = lucid.tensor(x_data, requires_grad=True)
    w = lucid.tensor(w_data, requires_grad=True)
    b = lucid.tensor(b_data, requires_grad=True)
    LinearFunction.apply(x, w, b).sum().backward()
    np.testing.assert_allclose(
        w.grad.numpy(),
        _numerical_gradient(
            lambda t: LinearFunction.apply(lucid.tensor(x_data), t, lucid.tensor(b_data)).sum(),
            w_data,
        ),
        rtol=1e-6,
    )
    np.testing.assert_allclose(x.grad.numpy(), np.ones((4, 2)) @ w_data)
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 4.0])


def test_linear_function_without_bias():
    x = lucid.tensor([[1.0, 2.0]], requires_grad=True)
    w = lucid.tensor([[3.0, 4.0]], requires_grad=True)
    out = LinearFunction.apply(x, w)
    assert out.tolist() == [[11.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[3.0, 4.0]]
    assert w.grad.tolist() == [[1.0, 2.0]]


def test_needs_input_grad_reflects_which_inputs_require_grad():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, c, scale):
            seen.append(("forward", ctx.needs_input_grad))
            return a * b * c * scale

        @staticmethod
        def backward(ctx, grad_output):
            seen.append(("backward", ctx.needs_input_grad))
            return grad_output, None, grad_output, None

    a = _leaf()
    b = lucid.tensor([1.0, 1.0])
    c = _leaf() * 1.0
    Probe.apply(a, b, c, 2.0).sum().backward()
    assert seen == [
        ("forward", (True, False, True, False)),
        ("backward", (True, False, True, False)),
    ]


def test_linear_function_skips_gradients_that_are_not_needed():
    x = lucid.tensor([[1.0, 2.0]])
    w = lucid.tensor([[3.0, 4.0]], requires_grad=True)
    LinearFunction.apply(x, w).sum().backward()
    assert x.grad is None
    assert w.grad.tolist() == [[1.0, 2.0]]


def test_non_tensor_arguments_are_passed_through_and_get_none_gradients():
    x = _leaf()
    y = MulConstant.apply(x, 5.0)
    assert y.tolist() == [5.0, 10.0]
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_setup_context_style_function():
    x = _leaf((2.0, -1.0))
    y = Cube.apply(x)
    assert y.tolist() == [8.0, -1.0]
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [12.0, 3.0]


def test_setup_context_receives_inputs_and_output():
    captured = {}

    class Scale(Function):
        @staticmethod
        def forward(x, factor):
            return x * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            captured["inputs"] = inputs
            captured["output"] = output
            ctx.factor = inputs[1]

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.factor, None

    x = _leaf()
    y = Scale.apply(x, 3.0)
    assert captured["inputs"][0] is x and captured["inputs"][1] == 3.0
    assert captured["output"] is y
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_forward_runs_without_recording():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(lucid.is_grad_enabled())
            inner = x * 2
            seen.append(inner.grad_fn)
            return inner

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    Probe.apply(_leaf())
    assert seen == [False, None]


def test_saved_tensors_round_trip():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, None, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            x, missing, y = ctx.saved_tensors
            assert missing is None
            return grad_output * y, grad_output * x

    x = _leaf((1.0, 2.0))
    y = _leaf((3.0, 4.0))
    Keep.apply(x, y).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]
    assert y.grad.tolist() == [1.0, 2.0]


def test_save_for_backward_rejects_non_tensors():
    class SavesNumber(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(
        TypeError,
        match="^save_for_backward can only save variables, but argument 0 is of type int$",
    ):
        SavesNumber.apply(_leaf())


def test_saved_tensors_are_freed_after_backward():
    x = _leaf()
    y = Exp.apply(x)
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        node.saved_tensors


def test_modifying_a_saved_input_in_place_raises_version_error():
    class SavesInput(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    h = _leaf() * 1.0
    y = SavesInput.apply(h)
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_modifying_a_saved_output_in_place_names_the_function():
    y = Exp.apply(_leaf())
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match=re.escape("which is output 0 of Exp, is at version 1")):
        y.sum().backward()


def test_mark_dirty_returns_the_input_with_a_new_grad_fn():
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.mul_(2.0)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    x = _leaf()
    h = x * 1.0
    version = h._version
    out = DoubleInPlace.apply(h)
    assert out is h
    assert h.grad_fn.name() == "DoubleInPlaceBackward"
    assert h._version > version
    assert h.tolist() == [2.0, 4.0]
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_on_leaf_requiring_grad_raises():
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(
        RuntimeError,
        match="^a leaf Variable that requires grad has been used in an in-place operation.$",
    ):
        DoubleInPlace.apply(_leaf())


def test_mark_non_differentiable_output_does_not_require_grad():
    class WithMask(Function):
        @staticmethod
        def forward(ctx, x):
            doubled = x * 2
            mask = x * 0
            ctx.mark_non_differentiable(mask)
            return doubled, mask

        @staticmethod
        def backward(ctx, grad_doubled, grad_mask):
            return grad_doubled * 2

    x = _leaf()
    doubled, mask = WithMask.apply(x)
    assert doubled.requires_grad
    assert not mask.requires_grad and mask.grad_fn is None
    doubled.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_non_differentiable_output_gets_zero_gradient_in_backward():
    seen = []

    class WithMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = x * 0
            ctx.mark_non_differentiable(mask)
            return x * 2, mask

        @staticmethod
        def backward(ctx, grad_doubled, grad_mask):
            seen.append(grad_mask)
            return grad_doubled * 2

    doubled, _ = WithMask.apply(_leaf())
    doubled.sum().backward()
    assert seen[0] is not None and seen[0].tolist() == [0.0, 0.0]


def test_integer_outputs_never_require_grad():
    class CountPositive(Function):
        @staticmethod
        def forward(ctx, x):
            return (x > 0).long().sum()

        @staticmethod
        def backward(ctx, grad_output):
            return None

    out = CountPositive.apply(_leaf((1.0, -1.0)))
    assert out.item() == 1
    assert not out.requires_grad and out.grad_fn is None


def test_unused_output_gets_zeros_by_default():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            seen.append((grad_a, grad_b))
            return grad_a * 2 + grad_b * 3

    x = _leaf()
    a, _ = Two.apply(x)
    a.sum().backward()
    ((grad_a, grad_b),) = seen
    assert grad_a.tolist() == [1.0, 1.0]
    assert grad_b.tolist() == [0.0, 0.0]
    assert x.grad.tolist() == [2.0, 2.0]


def test_set_materialize_grads_false_passes_none():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            seen.append((grad_a, grad_b))
            grad = grad_a * 2
            if grad_b is not None:
                grad = grad + grad_b * 3
            return grad

    x = _leaf()
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen[0][1] is None
    assert x.grad.tolist() == [2.0, 2.0]


def test_multiple_outputs_both_used():
    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a * 2 + grad_b * 3

    x = _leaf()
    a, b = Two.apply(x)
    assert a.grad_fn is b.grad_fn
    assert (a.output_nr, b.output_nr) == (0, 1)
    (a + b).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_backward_returning_none_means_no_gradient():
    class Blocks(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return None

    x = _leaf()
    w = _leaf()
    (Blocks.apply(x) + w).sum().backward()
    assert x.grad is None
    assert w.grad.tolist() == [1.0, 1.0]


def test_extra_none_gradients_are_ignored():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2, None, None

    x = _leaf()
    Extra.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


class _ReturnsGradients(Function):
    count = 0

    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        return (grad_output,) * _ReturnsGradients.count


@pytest.mark.parametrize("count", [1, 3])
def test_returning_wrong_number_of_gradients_raises(count):
    _ReturnsGradients.count = count
    x, y = _leaf(), _leaf()
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            f"function _ReturnsGradientsBackward returned an incorrect number of gradients "
            f"(expected 2, got {count})"
        ),
    ):
        _ReturnsGradients.apply(x, y).sum().backward()


def test_returning_gradient_of_wrong_shape_raises():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.sum()

    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Function WrongShapeBackward returned an invalid gradient at index 0 - got [] but "
            "expected shape compatible with [2]"
        ),
    ):
        WrongShape.apply(_leaf()).sum().backward()


def test_returning_expandable_gradient_is_summed_to_input_shape():
    class Broadcasting(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.expand(3, 2)

    x = _leaf()
    Broadcasting.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_returning_non_tensor_gradient_raises():
    class ReturnsInt(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return 3

    with pytest.raises(RuntimeError, match=re.escape("expected Variable or None (got int)")):
        ReturnsInt.apply(_leaf()).sum().backward()


def test_gradient_of_other_dtype_is_cast_to_input_dtype():
    class ReturnsDouble(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return (grad_output * 2).double()

    x = _leaf()
    ReturnsDouble.apply(x).sum().backward()
    assert x.grad.dtype == lucid.float32
    assert x.grad.tolist() == [2.0, 2.0]


def test_returning_an_input_unchanged_gives_a_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 5

    x = _leaf()
    y = Identity.apply(x)
    assert y is not x
    assert x.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_function_without_inputs_requiring_grad_records_nothing():
    y = Exp.apply(lucid.tensor([0.0]))
    assert y.grad_fn is None and not y.requires_grad


def test_function_under_no_grad_records_nothing():
    with lucid.no_grad():
        y = Exp.apply(_leaf())
    assert y.grad_fn is None and not y.requires_grad


def test_once_differentiable_runs_backward_without_recording():
    seen = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, grad_output):
            seen.append(lucid.is_grad_enabled())
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    x = _leaf()
    (d1,) = autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert seen == [False]
    assert d1.tolist() == [2.0, 4.0]
    assert not d1.requires_grad
    from lucid.autograd.function import once_differentiable

    assert once_differentiable is autograd.once_differentiable


def test_once_differentiable_keeps_backward_name():
    def backward(ctx, grad_output):
        return grad_output

    assert autograd.once_differentiable(backward).__name__ == "backward"


def test_variable_returns_the_tensor_itself():
    tensor = lucid.ones(2)
    variable = autograd.Variable(tensor, requires_grad=True)
    assert type(variable) is lucid.Tensor
    assert variable.requires_grad and variable.is_leaf
    plain = autograd.Variable(lucid.ones(2))
    assert not plain.requires_grad


def test_function_ctx_is_the_grad_fn():
    captured = []

    class Capture(Function):
        @staticmethod
        def forward(ctx, x):
            captured.append(ctx)
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    y = Capture.apply(_leaf())
    assert captured[0] is y.grad_fn
    assert isinstance(captured[0], autograd.FunctionCtx)


def test_custom_function_inside_a_larger_graph():
    x = _leaf((0.5, 1.5), dtype=lucid.float64)
    y = Cube.apply(MulConstant.apply(Exp.apply(x), 2.0))
    y.sum().backward()
    # d/dx (2 e^x)^3 = 24 e^{3x}
    np.testing.assert_allclose(x.grad.numpy(), 24 * np.exp(3 * np.array([0.5, 1.5])))
