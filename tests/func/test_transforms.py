"""lucid.func's autodiff transforms against torch.func in float64: values, argnums and has_aux,
nesting, the forward-mode ones by double vjp, and torch's error messages."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.func as F
from tests.func.parity import assert_tree_close, pair
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def scalar_function(lib):
    def f(x, y):
        return (x.sin() * y.exp()).sum() + (x * x).sum()

    return f


def vector_function(lib):
    def f(x, y):
        return (x.tanh() * y, x.sum() * y.cos())

    return f


@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1, 0)])
def test_grad_matches_torch_for_each_argnums(argnums):
    (x, y), (tx, ty) = pair((3, 2), (3, 2))
    actual = F.grad(scalar_function(lucid), argnums=argnums)(x, y)
    expected = torch.func.grad(scalar_function(torch), argnums=argnums)(tx, ty)
    assert_tree_close(actual, expected)


def test_grad_and_value_with_aux_matches_torch():
    (x,), (tx,) = pair((4,))

    def f(x):
        return (x**3).sum(), {"square": x * x}

    actual = F.grad_and_value(f, has_aux=True)(x)
    expected = torch.func.grad_and_value(f, has_aux=True)(tx)
    assert_tree_close(actual, expected)


def test_grad_of_a_dict_argument_is_a_dict():
    (a, b), (ta, tb) = pair((2, 2), (2,))

    def f(params, scale):
        return ((params["w"] @ params["b"]) * scale).sum()

    actual = F.grad(f)({"w": a, "b": b}, 3.0)
    expected = torch.func.grad(f)({"w": ta, "b": tb}, 3.0)
    assert_tree_close(actual, expected)


def test_nested_grad_is_the_second_derivative():
    (x,), (tx,) = pair(())

    def f(x):
        return x.sin() * x**3

    actual = F.grad(F.grad(F.grad(f)))(x)
    expected = torch.func.grad(torch.func.grad(torch.func.grad(f)))(tx)
    assert_tree_close(actual, expected)


def test_nested_grad_keeps_levels_apart():
    # d/dx [x * d/dy (x + y)] = d/dx [x] = 1: the inner level must not see x as its input.
    (x,), (tx,) = pair(())

    def f(lib_grad):
        return lib_grad(lambda x: x * lib_grad(lambda y: x + y)(x))

    assert_tree_close(f(F.grad)(x), f(torch.func.grad)(tx))
    assert f(F.grad)(x).item() == 1.0


def test_grad_of_an_unused_input_is_zeros():
    (x, y), (tx, ty) = pair((3,), (2,))
    actual = F.grad(lambda x, y: (x * 2).sum(), argnums=1)(x, y)
    assert_tree_close(actual, torch.func.grad(lambda x, y: (x * 2).sum(), argnums=1)(tx, ty))


def test_grad_result_at_top_level_does_not_require_grad():
    (x,), _ = pair((3,))
    assert not F.grad(lambda x: (x * x).sum())(x).requires_grad


def test_grad_composes_with_backward_through_an_input_that_requires_grad():
    (x,), (tx,) = pair((3,))
    x.requires_grad_()
    tx.requires_grad_()
    F.grad(lambda x: (x**3).sum())(x).sum().backward()
    torch.func.grad(lambda x: (x**3).sum())(tx).sum().backward()
    assert_tree_close(x.grad, tx.grad)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda api, x: api.grad(lambda x: x)(x),
            "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
            "with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?",
        ),
        (
            lambda api, x: api.grad(lambda x: 1.0)(x),
            "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>",
        ),
        (
            lambda api, x: api.grad(lambda x: x.sum(), has_aux=True)(x),
            "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if "
            "has_aux is True",
        ),
        (
            lambda api, x: api.grad(lambda x: x.sum(), argnums=2)(x),
            "Got argnum=2, but only 1 positional inputs",
        ),
        (lambda api, x: api.grad(lambda x: x.sum(), argnums=())(x), "argnums must be non-empty"),
        (
            lambda api, x: api.grad(lambda x, y: x.sum(), argnums=(0, -2))(x, x),
            "argnums elements must be unique, got (0, 0)",
        ),
        (
            lambda api, x: api.grad(lambda x: x.sum(), argnums=1.0)(x),
            "argnums must be int or Tuple[int, ...], got: <class 'float'>",
        ),
    ],
)
def test_grad_raises_torch_errors(call, message):
    (x,), (tx,) = pair((3,))
    with pytest.raises(RuntimeError) as lucid_error:
        call(F, x)
    with pytest.raises(RuntimeError) as torch_error:
        call(torch.func, tx)
    assert str(lucid_error.value) == str(torch_error.value) == message


def test_grad_of_a_non_tensor_raises_value_error():
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor, got "):
        F.grad(lambda x: x)(1.0)


def test_vjp_matches_torch_and_can_be_called_twice():
    (x, y, u, v), (tx, ty, tu, tv) = pair((3,), (3,), (3,), ())
    output, vjp_fn = F.vjp(vector_function(lucid), x, y)
    t_output, t_vjp_fn = torch.func.vjp(vector_function(torch), tx, ty)
    assert_tree_close(output, t_output)
    for _ in range(2):
        assert_tree_close(vjp_fn((u, v * y)), t_vjp_fn((tu, tv * ty)))


def test_vjp_with_aux():
    (x,), (tx,) = pair((3,))
    output, vjp_fn, aux = F.vjp(lambda x: (x.exp(), x.sum()), x, has_aux=True)
    t_output, t_vjp_fn, t_aux = torch.func.vjp(lambda x: (x.exp(), x.sum()), tx, has_aux=True)
    assert_tree_close(
        (output, aux, vjp_fn(lucid.ones_like(x))), (t_output, t_aux, t_vjp_fn(torch.ones_like(tx)))
    )


def test_vjp_errors_match_torch():
    (x,), _ = pair((3,))
    with pytest.raises(
        RuntimeError,
        match=r"vjp\(f, \*primals\): expected f\(\*primals\) to "
        r"return only tensors, got unsupported type <class 'float'>",
    ):
        F.vjp(lambda x: 1.0, x)
    _, vjp_fn = F.vjp(lambda x: (x, x), x)
    with pytest.raises(RuntimeError) as error:
        vjp_fn(x)
    assert str(error.value) == (
        "Expected pytree structure of cotangents to be the same as pytree structure of outputs "
        "to the function. cotangents: *, primal output: (*, *)"
    )


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacrev_and_jacfwd_match_torch(argnums):
    (x, y), (tx, ty) = pair((3,), (3,))
    for ours, theirs in ((F.jacrev, torch.func.jacrev), (F.jacfwd, torch.func.jacfwd)):
        actual = ours(vector_function(lucid), argnums=argnums)(x, y)
        expected = theirs(vector_function(torch), argnums=argnums)(tx, ty)
        assert_tree_close(actual, expected)


def test_jacrev_and_jacfwd_with_aux_and_matrix_shapes():
    (x,), (tx,) = pair((2, 3))

    def f(x):
        return x @ x.T, x.sum()

    assert_tree_close(F.jacrev(f, has_aux=True)(x), torch.func.jacrev(f, has_aux=True)(tx))
    assert_tree_close(F.jacfwd(f, has_aux=True)(x), torch.func.jacfwd(f, has_aux=True)(tx))


def test_hessian_matches_torch():
    (x, y), (tx, ty) = pair((3,), (3,))
    actual = F.hessian(scalar_function(lucid), argnums=(0, 1))(x, y)
    expected = torch.func.hessian(scalar_function(torch), argnums=(0, 1))(tx, ty)
    assert_tree_close(actual, expected)


def test_jvp_by_double_vjp_matches_torch():
    (x, y, u, v), (tx, ty, tu, tv) = pair((3,), (3,), (3,), (3,))
    actual = F.jvp(vector_function(lucid), (x, y), (u, v))
    expected = torch.func.jvp(vector_function(torch), (tx, ty), (tu, tv))
    assert_tree_close(actual, expected)
    assert not actual[1][0].requires_grad


def test_jvp_with_aux_and_an_output_independent_of_the_input():
    (x, u), (tx, tu) = pair((3,), (3,))

    def f(lib):
        return lambda x: ((x * 0 + 1).sum() * lib.ones(2, dtype=lib.float64), x.sum())

    # x * 0 + 1 still depends on x, with a zero derivative
    actual = F.jvp(f(lucid), (x,), (u,), has_aux=True)
    expected = torch.func.jvp(f(torch), (tx,), (tu,), has_aux=True)
    assert_tree_close(actual, expected)


def test_jvp_errors_match_torch():
    (x,), _ = pair((2, 3))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        F.jvp(lambda x: x, x, x)
    with pytest.raises(RuntimeError) as error:
        F.jvp(lambda x: x, (x,), (x, x))
    assert str(error.value).endswith(
        "Got primals with structure TreeSpec(tuple, None, [*]) and tangents with structure "
        "TreeSpec(tuple, None, [*,\n  *])"
    )
    with pytest.raises(RuntimeError) as error:
        F.jvp(lambda x: x, (x,), (lucid.ones(3),))
    assert str(error.value) == (
        "Trying to set a forward gradient that has a different size than that of the original "
        "Tensor, this is not supported. Tensor is of size [2, 3] while the given forward "
        "gradient is of size [3]."
    )


def test_linearize_matches_torch_for_several_tangents():
    (x, u, v), (tx, tu, tv) = pair((3,), (3,), (3,))
    output, jvp_fn = F.linearize(lambda x: x.sin() * x, x)
    t_output, t_jvp_fn = torch.func.linearize(lambda x: x.sin() * x, tx)
    assert_tree_close(output, t_output)
    assert_tree_close(jvp_fn(u), t_jvp_fn(tu))
    assert_tree_close(jvp_fn(v), t_jvp_fn(tv))
    with pytest.raises(RuntimeError, match="in flattened pytree doesn't match the shape"):
        jvp_fn(lucid.ones(2))


def test_grad_of_jvp_differentiates_through_the_double_vjp():
    (x, u), (tx, tu) = pair((3,), (3,))

    def g(lib):
        return lambda x: lib.func.jvp(lambda x: x.exp() * x, (x,), (u if lib is lucid else tu,))[
            1
        ].sum()

    assert_tree_close(F.grad(g(lucid))(x), torch.func.grad(g(torch))(tx))


def test_bad_arguments_raise_torch_errors():
    with pytest.raises(ValueError, match="jacrev: `chunk_size` should be greater than 0."):
        F.jacrev(lambda x: x, chunk_size=0)
    with pytest.raises(
        RuntimeError,
        match="Only allowed values for randomness are 'error', 'different', or 'same'. Got bad",
    ):
        F.jacfwd(lambda x: x, randomness="bad")


@pytest.mark.parametrize(
    "call",
    [
        lambda api, x: api.jacfwd(lambda x: 1.0)(x),
        lambda api, x: api.jacfwd(lambda x: x, has_aux=True)(x),
        lambda api, x: api.jacrev(lambda x: x, has_aux=True)(x),
        lambda api, x: api.jacrev(lambda x: 1.0)(x),
        lambda api, x: api.jvp(lambda x: x, (x,), (x,), has_aux=True),
        lambda api, x: api.jvp(lambda x: x, (1.0,), (1.0,)),
        lambda api, x: api.jvp(lambda x: x, (x,), (1.0,)),
        lambda api, x: api.hessian(lambda x: x.sum(), argnums=3)(x),
        lambda api, x: api.vjp(lambda x: x, x)[1]((x,)),
    ],
)
def test_jacobian_and_jvp_errors_match_torch(call):
    (x,), (tx,) = pair((3,))
    with pytest.raises(RuntimeError) as lucid_error:
        call(F, x)
    with pytest.raises(RuntimeError) as torch_error:
        call(torch.func, tx)
    assert str(lucid_error.value) == str(torch_error.value)


def test_a_result_stays_differentiable_for_a_tensor_the_function_closes_over():
    # torch.func's results compose with autograd: a captured parameter gets its gradient
    def closed_over_gradients(lib):
        w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
        results = {
            "grad": lib.func.grad(lambda v: (v * w).sin().sum())(x),
            "vjp": lib.func.vjp(lambda v: (v * w).sin(), x)[1](lib.ones_like(x))[0],
            "jacrev": lib.func.jacrev(lambda v: (v * w).sin())(x).sum(0),
            "jvp": lib.func.jvp(lambda v: (v * w).sin(), (x,), (lib.ones_like(x),))[1],
        }
        grads = {}
        for name, result in results.items():
            assert result.requires_grad, name
            (grads[name],) = lib.autograd.grad(result.sum(), w)
        return grads

    ours, theirs = closed_over_gradients(lucid), closed_over_gradients(torch)
    for name in ours:
        np.testing.assert_allclose(ours[name].numpy(), theirs[name].numpy(), rtol=1e-12)


def test_without_a_captured_tensor_that_requires_grad_results_need_no_grad():
    w = lucid.tensor([1.0, 2.0, 3.0])
    assert not lucid.func.grad(lambda v: (v * w).sin().sum())(lucid.ones(3)).requires_grad
