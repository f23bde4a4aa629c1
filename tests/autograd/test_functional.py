"""lucid.autograd.functional: closed-form results, and torch.autograd.functional parity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import functional as F


def torch_module() -> Any:
    """torch, or a skip of the calling test when it is not installed."""
    return pytest.importorskip("torch", reason="torch.autograd.functional is the reference")


def arrays(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, shape) for shape in shapes]


def both(values: list[np.ndarray]) -> tuple[Any, Any]:
    """The same arrays as lucid and torch arguments: a tuple, or the tensor itself for one."""
    torch = torch_module()
    lucid_args = tuple(lucid.from_numpy(v.copy()) for v in values)
    torch_args = tuple(torch.from_numpy(v.copy()) for v in values)
    if len(values) == 1:
        return lucid_args[0], torch_args[0]
    return lucid_args, torch_args


def assert_same(actual: Any, expected: Any, path: str = "result") -> None:
    """Same nesting of tuples, shapes, values and requires_grad."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{path}: expected a tuple, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{index}]")
        return
    assert isinstance(actual, lucid.Tensor), f"{path}: expected a Tensor, got {type(actual)}"
    assert tuple(actual.shape) == tuple(expected.shape), f"{path}: shape differs"
    assert actual.requires_grad == expected.requires_grad, f"{path}: requires_grad differs"
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=path
    )


def same_error(lucid_call: Callable[[], Any], torch_call: Callable[[], Any]) -> None:
    """Both raise the same exception type and message (with lucid. spelled for torch.)."""
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as actual:
        lucid_call()
    assert str(actual.value) == str(expected.value).replace("torch.", "lucid.")


# Functions written once, run on either library's tensors.
def two_in_two_out(x, y):
    return (x * y).exp(), (y * x.tanh()).sum()


def one_in_one_out(x):
    return (x * x).tanh()


def scalar_of_two(x, y):
    return (x.exp() * y * y).sum()


def scalar_of_one(x):
    return (x.exp() * x).sum()


# ------------------------------------------------------------ closed-form results
def double(values: list[float]) -> lucid.Tensor:
    return lucid.tensor(values, dtype=lucid.float64)


def test_jacobian_and_hessian_of_known_functions():
    x = double([1.0, 2.0, 3.0])
    jac = F.jacobian(lambda t: t * t, x)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))
    hess = F.hessian(lambda t: (t * t * t).sum(), x)
    np.testing.assert_allclose(hess.numpy(), np.diag([6.0, 12.0, 18.0]))


def test_tuple_inputs_and_outputs_give_nested_tuples_of_the_right_shapes():
    x, y = double([1.0, 2.0, 3.0]), double([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    jac = F.jacobian(lambda a, b: (a * b, (a * b).sum()), (x, y))
    assert [[tuple(j.shape) for j in row] for row in jac] == [
        [(2, 3, 3), (2, 3, 2, 3)],
        [(3,), (2, 3)],
    ]
    np.testing.assert_allclose(jac[1][0].numpy(), y.numpy().sum(0))
    hess = F.hessian(lambda a, b: (a * b).sum(), (x, y))
    assert [[tuple(h.shape) for h in row] for row in hess] == [
        [(3, 3), (3, 2, 3)],
        [(2, 3, 3), (2, 3, 2, 3)],
    ]


def test_products_of_known_functions():
    x, v = double([1.0, 2.0]), double([3.0, -1.0])
    out, result = F.vjp(lambda t: t * t, x, v)
    np.testing.assert_allclose(result.numpy(), [6.0, -4.0])
    np.testing.assert_allclose(out.numpy(), [1.0, 4.0])
    _, result = F.jvp(lambda t: t * t, x, v)
    np.testing.assert_allclose(result.numpy(), [6.0, -4.0])
    # f = sum(x^3): H = diag(6x), so Hv = vH = 6 x v.
    for product in (F.hvp, F.vhp):
        out, result = product(lambda t: (t * t * t).sum(), x, v)
        np.testing.assert_allclose(result.numpy(), [18.0, -12.0])
        np.testing.assert_allclose(out.numpy(), 9.0)


# ------------------------------------------------------------------ torch parity
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_matches_torch(create_graph):
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,), (2, 3)))
    assert_same(
        F.jacobian(two_in_two_out, lx, create_graph=create_graph),
        TF.jacobian(two_in_two_out, tx, create_graph=create_graph),
    )
    lx, tx = both(arrays((2, 2)))
    assert_same(
        F.jacobian(one_in_one_out, lx, create_graph=create_graph),
        TF.jacobian(one_in_one_out, tx, create_graph=create_graph),
    )


def test_jacobian_with_single_input_and_tuple_output_and_vectorize():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))

    def func(x):
        return x.exp(), x * 2

    assert_same(F.jacobian(func, lx), TF.jacobian(func, tx))
    assert_same(F.jacobian(func, lx, vectorize=True), TF.jacobian(func, tx))


def test_jacobian_of_output_independent_of_an_input_is_zero():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,), (2,)))
    assert_same(F.jacobian(lambda x, y: x * 2, lx), TF.jacobian(lambda x, y: x * 2, tx))


@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_matches_torch(create_graph):
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,), (2, 3)))
    assert_same(
        F.hessian(scalar_of_two, lx, create_graph=create_graph),
        TF.hessian(scalar_of_two, tx, create_graph=create_graph),
    )
    lx, tx = both(arrays((4,)))
    assert_same(
        F.hessian(scalar_of_one, lx, create_graph=create_graph),
        TF.hessian(scalar_of_one, tx, create_graph=create_graph),
    )


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_matches_torch(create_graph):
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,), (2, 3)))
    lv, tv = both(arrays((2, 3), (), seed=1))
    assert_same(
        F.vjp(two_in_two_out, lx, lv, create_graph=create_graph),
        TF.vjp(two_in_two_out, tx, tv, create_graph=create_graph),
    )
    lx, tx = both(arrays((4,)))
    assert_same(F.vjp(scalar_of_one, lx), TF.vjp(scalar_of_one, tx))


@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp_matches_torch(create_graph):
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,), (2, 3)))
    lv, tv = both(arrays((3,), (2, 3), seed=1))
    assert_same(
        F.jvp(two_in_two_out, lx, lv, create_graph=create_graph),
        TF.jvp(two_in_two_out, tx, tv, create_graph=create_graph),
    )
    lx, tx = both(arrays((2, 2)))
    lv, tv = both(arrays((2, 2), seed=1))
    assert_same(F.jvp(one_in_one_out, lx, lv), TF.jvp(one_in_one_out, tx, tv))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_vector_products_match_torch(name, create_graph):
    TF = torch_module().autograd.functional
    lucid_fn, torch_fn = getattr(F, name), getattr(TF, name)
    lx, tx = both(arrays((3,), (2, 3)))
    lv, tv = both(arrays((3,), (2, 3), seed=1))
    assert_same(
        lucid_fn(scalar_of_two, lx, lv, create_graph=create_graph),
        torch_fn(scalar_of_two, tx, tv, create_graph=create_graph),
    )
    lx, tx = both(arrays((4,)))
    lv, tv = both(arrays((4,), seed=1))
    assert_same(lucid_fn(scalar_of_one, lx, lv), torch_fn(scalar_of_one, tx, tv))


def test_create_graph_results_differentiate_back_to_the_inputs():
    torch = torch_module()
    TF = torch.autograd.functional
    data = arrays((3,))[0]
    x = lucid.from_numpy(data.copy()).requires_grad_()
    t = torch.from_numpy(data.copy()).requires_grad_()
    F.jacobian(one_in_one_out, x, create_graph=True).sum().backward()
    TF.jacobian(one_in_one_out, t, create_graph=True).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_caller_tensors_get_no_grad_without_create_graph():
    x = lucid.from_numpy(arrays((3,))[0]).requires_grad_()
    _, result = F.vjp(scalar_of_one, x)
    assert x.grad is None
    assert not result.requires_grad


# ------------------------------------------------------------------------- errors
def test_v_of_wrong_shape_or_count_is_rejected_like_torch():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))
    lv, tv = both(arrays((2,)))
    same_error(lambda: F.vjp(one_in_one_out, lx, lv), lambda: TF.vjp(one_in_one_out, tx, tv))
    same_error(lambda: F.jvp(one_in_one_out, lx, lv), lambda: TF.jvp(one_in_one_out, tx, tv))
    lv2, tv2 = both(arrays((3,), (3,)))
    same_error(lambda: F.vjp(one_in_one_out, lx, lv2), lambda: TF.vjp(one_in_one_out, tx, tv2))

    def pair(x):
        return x * 2, x

    lv3, tv3 = both(arrays((3,), (2,)))
    same_error(lambda: F.vjp(pair, lx, lv3), lambda: TF.vjp(pair, tx, tv3))
    same_error(lambda: F.vjp(pair, lx, (lv3[0],)), lambda: TF.vjp(pair, tx, (tv3[0],)))


def test_missing_v_is_only_allowed_for_single_elements():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))
    same_error(lambda: F.vjp(one_in_one_out, lx), lambda: TF.vjp(one_in_one_out, tx))
    same_error(lambda: F.jvp(one_in_one_out, lx), lambda: TF.jvp(one_in_one_out, tx))
    same_error(lambda: F.hvp(scalar_of_one, lx), lambda: TF.hvp(scalar_of_one, tx))


def test_non_tensor_inputs_and_outputs_are_type_errors():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))
    same_error(lambda: F.vjp(one_in_one_out, [lx]), lambda: TF.vjp(one_in_one_out, [tx]))
    same_error(
        lambda: F.jacobian(lambda x, s: x, (lx, 2)), lambda: TF.jacobian(lambda x, s: x, (tx, 2))
    )
    same_error(lambda: F.jacobian(lambda x: 3.0, lx), lambda: TF.jacobian(lambda x: 3.0, tx))


def test_hessian_needs_a_single_element_output():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))
    same_error(lambda: F.hessian(one_in_one_out, lx), lambda: TF.hessian(one_in_one_out, tx))
    same_error(lambda: F.vhp(one_in_one_out, lx, lx), lambda: TF.vhp(one_in_one_out, tx, tx))

    def pair(x):
        return x.sum(), x.sum()

    same_error(lambda: F.hessian(pair, lx), lambda: TF.hessian(pair, tx))


def test_strict_mode_errors_match_torch():
    torch = torch_module()
    TF = torch.autograd.functional
    lx, tx = both(arrays((3,), (3,)))
    ly, ty = both(arrays((3,)))

    def first_only(x, y):
        return x * 2

    same_error(
        lambda: F.vjp(first_only, lx, ly, strict=True),
        lambda: TF.vjp(first_only, tx, ty, strict=True),
    )
    same_error(
        lambda: F.jacobian(first_only, lx, strict=True),
        lambda: TF.jacobian(first_only, tx, strict=True),
    )
    same_error(
        lambda: F.jacobian(lambda x: x * 2, ly, strict=True, create_graph=True),
        lambda: TF.jacobian(lambda x: x * 2, ty, strict=True, create_graph=True),
    )
    same_error(
        lambda: F.jvp(first_only, lx, lx, strict=True),
        lambda: TF.jvp(first_only, tx, tx, strict=True),
    )
    constant = lucid.from_numpy(arrays((3,))[0])
    same_error(
        lambda: F.vjp(lambda x: constant, ly, ly, strict=True),
        lambda: TF.vjp(lambda x: torch.from_numpy(constant.numpy()), ty, ty, strict=True),
    )


def test_strict_mode_rejects_linear_functions_in_second_order_products():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))

    def linear(x):
        return (x * 2).sum()

    same_error(
        lambda: F.hessian(linear, lx, strict=True), lambda: TF.hessian(linear, tx, strict=True)
    )
    same_error(
        lambda: F.hvp(linear, lx, lx, strict=True), lambda: TF.hvp(linear, tx, tx, strict=True)
    )
    same_error(
        lambda: F.vhp(linear, lx, lx, strict=True), lambda: TF.vhp(linear, tx, tx, strict=True)
    )


def test_jacobian_strategy_errors():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))
    same_error(
        lambda: F.jacobian(one_in_one_out, lx, strategy="sideways"),
        lambda: TF.jacobian(one_in_one_out, tx, strategy="sideways"),
    )
    same_error(
        lambda: F.jacobian(one_in_one_out, lx, strict=True, vectorize=True),
        lambda: TF.jacobian(one_in_one_out, tx, strict=True, vectorize=True),
    )
    for kwargs in (
        {},
        {"create_graph": True, "vectorize": True},
        {"strict": True, "vectorize": True},
    ):
        same_error(
            lambda kwargs=kwargs: F.jacobian(one_in_one_out, lx, strategy="forward-mode", **kwargs),
            lambda kwargs=kwargs: TF.jacobian(
                one_in_one_out, tx, strategy="forward-mode", **kwargs
            ),
        )


def test_forward_mode_jacobian_and_hessian_match_torch():
    TF = torch_module().autograd.functional
    lx, tx = both(arrays((3,)))
    ly, ty = both(arrays((2,)))

    def pair(lib):
        return lambda x, y: (x.sin() * y.sum(), (x * x).sum() + y.exp())

    ours = F.jacobian(pair(lucid), (lx, ly), strategy="forward-mode", vectorize=True)
    theirs = TF.jacobian(pair(torch_module()), (tx, ty), strategy="forward-mode", vectorize=True)
    for our_row, their_row in zip(ours, theirs):
        for our, their in zip(our_row, their_row):
            np.testing.assert_allclose(our.numpy(), their.numpy(), rtol=1e-12)
    ours = F.hessian(scalar_of_one, lx, outer_jacobian_strategy="forward-mode", vectorize=True)
    theirs = TF.hessian(scalar_of_one, tx, outer_jacobian_strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
