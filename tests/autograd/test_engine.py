"""The backward engine: backward()/grad() semantics, graph nodes, hooks, memory, versions."""

from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager

import numpy as np
import pytest

import lucid
from lucid import autograd
from tests.torch_oracle import TORCH_MISSING


def _leaf(values=(1.0, 2.0, 3.0), dtype=lucid.float32) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=dtype, requires_grad=True)


@contextmanager
def _without_cycle_collector():
    """Objects must die by reference counting alone while this is active."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ------------------------------------------------------------------ backward()
def test_backward_of_scalar_writes_leaf_grad():
    x = _leaf()
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert x.grad.dtype == lucid.float32


def test_backward_accumulates_into_leaf_grad_across_calls():
    x = _leaf()
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]


def test_backward_accumulates_when_a_leaf_is_used_twice():
    x = _leaf()
    (x * x + x).sum().backward()
    assert x.grad.tolist() == [3.0, 5.0, 7.0]


def test_backward_with_gradient_gives_vector_jacobian_product():
    x = _leaf()
    y = x * lucid.tensor([10.0, 20.0, 30.0])
    y.backward(lucid.tensor([1.0, 0.5, -1.0]))
    assert x.grad.tolist() == [10.0, 10.0, -30.0]


def test_vector_jacobian_product_through_matmul():
    w = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    x = lucid.tensor([1.0, -1.0], requires_grad=True)
    y = w @ x
    v = lucid.tensor([1.0, 2.0, 3.0])
    y.backward(v)
    # d(v . Wx)/dx = W^T v, d/dW = v x^T
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy().T @ v.numpy())
    np.testing.assert_allclose(w.grad.numpy(), np.outer(v.numpy(), [1.0, -1.0]))


def test_autograd_backward_accepts_several_roots_and_grad_tensors():
    x = _leaf()
    a = x * 2
    b = (x * x).sum()
    autograd.backward([a, b], [lucid.ones(3), None])
    assert x.grad.tolist() == [4.0, 6.0, 8.0]


def test_backward_with_inputs_only_touches_those_inputs():
    x = _leaf()
    w = _leaf((4.0, 5.0, 6.0))
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    assert w.grad.tolist() == [1.0, 2.0, 3.0]


def test_autograd_backward_inputs_accepts_a_single_tensor():
    x = _leaf()
    w = _leaf((4.0, 5.0, 6.0))
    autograd.backward((x * w).sum(), inputs=x)
    assert x.grad.tolist() == [4.0, 5.0, 6.0]
    assert w.grad is None


def test_backward_with_non_leaf_inputs_fills_its_grad():
    x = _leaf()
    h = x * 3
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [6.0, 12.0, 18.0]
    assert x.grad is None


def test_retain_graph_allows_a_second_backward():
    x = _leaf()
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy())


def test_backward_on_a_leaf_seeds_its_own_grad():
    x = _leaf()
    g = lucid.tensor([1.0, 2.0, 3.0])
    x.backward(g)
    assert x.grad.tolist() == [1.0, 2.0, 3.0]


def test_backward_seed_of_other_integer_dtype_is_cast_to_output_dtype():
    x = _leaf()
    (x * 2).backward(lucid.ones(3, dtype=lucid.int64))
    assert x.grad.dtype == lucid.float32
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_backward_in_no_grad_still_computes_gradients():
    x = _leaf()
    y = (x * x).sum()
    with lucid.no_grad():
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_float64_gradients_stay_float64():
    x = _leaf(dtype=lucid.float64)
    (x * 0.5 + x.exp()).sum().backward()
    assert x.grad.dtype == lucid.float64


# ---------------------------------------------------------------------- grad()
def test_grad_returns_gradients_without_touching_dot_grad():
    x = _leaf()
    (dx,) = autograd.grad((x * x).sum(), x)
    assert dx.tolist() == [2.0, 4.0, 6.0]
    assert x.grad is None


def test_grad_returns_a_tuple_matching_inputs():
    x = _leaf()
    w = _leaf((4.0, 5.0, 6.0))
    result = autograd.grad((x * w).sum(), [x, w])
    assert isinstance(result, tuple) and len(result) == 2
    assert result[0].tolist() == [4.0, 5.0, 6.0]
    assert result[1].tolist() == [1.0, 2.0, 3.0]


def test_grad_with_grad_outputs_gives_vector_jacobian_product():
    x = _leaf()
    y = x * x
    (dx,) = autograd.grad(y, x, grad_outputs=lucid.tensor([1.0, 0.0, 2.0]))
    assert dx.tolist() == [2.0, 0.0, 12.0]


def test_grad_with_respect_to_non_leaf():
    x = _leaf()
    h = x * 2
    loss = (h * h).sum()
    (dh,) = autograd.grad(loss, h)
    assert dh.tolist() == [4.0, 8.0, 12.0]


def test_grad_allow_unused_returns_none_for_unused_input():
    x = _leaf()
    unused = _leaf()
    dx, du = autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert dx.tolist() == [2.0, 2.0, 2.0]
    assert du is None


def test_grad_materialize_grads_gives_zeros_for_unused_input():
    x = _leaf()
    unused = _leaf(dtype=lucid.float64)
    dx, du = autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert dx.tolist() == [2.0, 2.0, 2.0]
    assert du.tolist() == [0.0, 0.0, 0.0]
    assert du.dtype == lucid.float64


def test_grad_only_inputs_argument_is_accepted():
    x = _leaf()
    (dx,) = autograd.grad((x * 2).sum(), x, only_inputs=True)
    assert dx.tolist() == [2.0, 2.0, 2.0]


def test_grad_frees_graph_unless_retained():
    x = _leaf()
    y = (x * x).sum()
    autograd.grad(y, x, retain_graph=True)
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        autograd.grad(y, x)


def test_grad_without_create_graph_returns_detached_tensors():
    x = _leaf()
    (dx,) = autograd.grad((x * x).sum(), x)
    assert not dx.requires_grad
    assert dx.grad_fn is None


def test_create_graph_gives_higher_derivatives_of_cube():
    x = lucid.tensor(2.0, requires_grad=True)
    y = x**3
    (d1,) = autograd.grad(y, x, create_graph=True)
    (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    assert d1.item() == 12.0  # 3x^2
    assert d2.item() == 12.0  # 6x
    assert d3.item() == 6.0  # 6
    assert d1.requires_grad and d2.requires_grad


def test_backward_create_graph_makes_grad_differentiable():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    grad = x.grad
    assert grad.requires_grad
    assert grad.tolist() == [3.0, 12.0]
    (d2,) = autograd.grad(grad.sum(), x)
    assert d2.tolist() == [6.0, 12.0]


def test_double_backward_through_exp_saved_output():
    x = lucid.tensor([0.5, -1.0], dtype=lucid.float64, requires_grad=True)
    (d1,) = autograd.grad(x.exp().sum(), x, create_graph=True)
    (d2,) = autograd.grad(d1.sum(), x)
    np.testing.assert_allclose(d2.numpy(), np.exp([0.5, -1.0]))


def test_hessian_vector_product_by_double_backward():
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.float64, requires_grad=True)
    # f = (sum x^2)(sum x), so H = 2 sum(x) I + 2 (x 1^T + 1 x^T)
    f = (x * x).sum() * x.sum()
    (g,) = autograd.grad(f, x, create_graph=True)
    v = lucid.tensor([1.0, 0.0, -1.0], dtype=lucid.float64)
    (hv,) = autograd.grad((g * v).sum(), x)
    s = 6.0
    hessian = 2 * s * np.eye(3) + 2 * np.add.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(hv.numpy(), hessian @ v.numpy())


# ------------------------------------------------------------------ Node API
def test_grad_fn_name_is_pytorch_name():
    x = _leaf()
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert (x + 2).grad_fn.name() == "AddBackward0"
    assert x.exp().grad_fn.name() == "ExpBackward0"
    assert x.view(3, 1).grad_fn.name() == "ViewBackward0"


def test_grad_fn_repr_names_the_node():
    x = _leaf()
    assert repr((x * 2).grad_fn).startswith("<MulBackward0 object at 0x")


def test_leaf_has_no_grad_fn_and_is_leaf():
    x = _leaf()
    y = x * 2
    assert x.grad_fn is None and x.is_leaf
    assert y.grad_fn is not None and not y.is_leaf
    plain = lucid.ones(2)
    assert plain.is_leaf and plain.grad_fn is None


def test_next_functions_point_to_accumulate_grad_for_leaves():
    x = _leaf()
    w = lucid.tensor([1.0, 2.0, 3.0])
    y = x * w
    next_functions = y.grad_fn.next_functions
    assert isinstance(next_functions, tuple)
    assert len(next_functions) == 2
    (accumulator, index), (missing, missing_index) = next_functions
    assert index == 0 and missing is None and missing_index == 0
    assert type(accumulator).__name__ == "AccumulateGrad"
    assert accumulator.variable is x
    assert accumulator.name().endswith("::autograd::AccumulateGrad")


def test_next_functions_chain_to_earlier_nodes():
    x = _leaf()
    y = x * 2
    z = y.exp()
    ((node, index),) = z.grad_fn.next_functions
    assert node is y.grad_fn and index == 0


def test_the_same_leaf_shares_one_accumulator():
    x = _leaf()
    y = x * x
    assert y.grad_fn.next_functions[0][0] is y.grad_fn.next_functions[1][0]
    z = x + 1
    assert z.grad_fn.next_functions[0][0] is y.grad_fn.next_functions[0][0]


def test_next_functions_has_one_edge_per_tensor_input():
    # Python scalars are not graph inputs in lucid (PyTorch wraps them as tensors and shows
    # a (None, 0) edge for `x + 2`); tensors that need no grad show (None, 0).
    x = _leaf()
    assert len(x.sum().grad_fn.next_functions) == 1
    assert len((x + 2).grad_fn.next_functions) == 1
    assert len((x + x).grad_fn.next_functions) == 2
    assert (x + lucid.ones(3)).grad_fn.next_functions[1] == (None, 0)


def test_node_register_hook_sees_grad_inputs_and_grad_outputs():
    x = _leaf()
    y = x * 2
    seen = []
    y.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: seen.append((grad_inputs, grad_outputs))
    )
    y.sum().backward()
    ((grad_inputs, grad_outputs),) = seen
    assert grad_inputs[0].tolist() == [2.0, 2.0, 2.0]
    assert grad_outputs[0].tolist() == [1.0, 1.0, 1.0]


def test_node_hook_can_replace_grad_inputs():
    x = _leaf()
    y = x * 2
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 10, None))
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_node_prehook_sees_and_can_replace_grad_outputs():
    x = _leaf()
    y = x * 2
    seen = []

    def prehook(grad_outputs):
        seen.append(grad_outputs[0].tolist())
        return (grad_outputs[0] * 10,)

    y.grad_fn.register_prehook(prehook)
    y.sum().backward()
    assert seen == [[1.0, 1.0, 1.0]]
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_node_hook_handle_remove_stops_it():
    x = _leaf()
    y = x * 2
    calls = []
    handle = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append(1))
    pre_handle = y.grad_fn.register_prehook(lambda grad_outputs: calls.append(2))
    handle.remove()
    pre_handle.remove()
    y.sum().backward()
    assert calls == []


def test_accumulate_grad_node_hooks_run():
    x = _leaf()
    y = x * 2
    accumulator = y.grad_fn.next_functions[0][0]
    seen = []
    accumulator.register_prehook(
        lambda grad_outputs: seen.append(("pre", grad_outputs[0].tolist()))
    )
    accumulator.register_hook(lambda grad_inputs, grad_outputs: seen.append(("post", grad_inputs)))
    y.sum().backward()
    assert seen == [("pre", [2.0, 2.0, 2.0]), ("post", ())]


# ---------------------------------------------------------------- tensor hooks
def test_leaf_tensor_hook_sees_gradient():
    x = _leaf()
    seen = []
    x.register_hook(lambda grad: seen.append(grad.tolist()))
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]


def test_leaf_tensor_hook_can_replace_gradient():
    x = _leaf()
    x.register_hook(lambda grad: grad * 100)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [200.0, 200.0, 200.0]


def test_non_leaf_tensor_hook_runs_and_can_replace_gradient():
    x = _leaf()
    y = x * 2
    seen = []
    y.register_hook(lambda grad: seen.append(grad.tolist()))
    y.register_hook(lambda grad: grad * 100)
    (y * 3).sum().backward()
    assert seen == [[3.0, 3.0, 3.0]]
    assert x.grad.tolist() == [600.0, 600.0, 600.0]


def test_tensor_hook_handle_remove_works_for_leaf_and_non_leaf():
    x = _leaf()
    y = x * 2
    calls = []
    leaf_handle = x.register_hook(lambda grad: calls.append("leaf"))
    inner_handle = y.register_hook(lambda grad: calls.append("inner"))
    leaf_handle.remove()
    inner_handle.remove()
    y.sum().backward()
    assert calls == []
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_tensor_hook_handle_is_a_context_manager():
    x = _leaf()
    calls = []
    with x.register_hook(lambda grad: calls.append(1)):
        (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert calls == [1]


def test_hooks_on_one_tensor_run_in_registration_order():
    x = _leaf()
    order = []
    for index in range(5):
        x.register_hook(lambda grad, index=index: order.append(index))
    (x * 2).sum().backward()
    assert order == [0, 1, 2, 3, 4]


def test_hooks_fire_in_the_same_order_as_pytorch():
    def record(module):
        order = []
        x = module.tensor([1.0, 2.0], requires_grad=True)
        a = x * 2
        b = x * 3
        c = a * b
        for name, tensor in (("x", x), ("a", a), ("b", b), ("c", c)):
            tensor.register_hook(lambda grad, name=name: order.append(name))
        a.grad_fn.register_hook(lambda grad_inputs, grad_outputs: order.append("node a"))
        b.grad_fn.register_prehook(lambda grad_outputs: order.append("pre b"))
        c.sum().backward()
        return order

    expected = ["c", "b", "pre b", "a", "node a", "x"]
    assert record(lucid) == expected
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    assert record(torch) == expected


def test_retain_grad_fills_grad_of_non_leaf():
    x = _leaf()
    y = x * 2
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0, 12.0]


def test_retained_grad_accumulates_across_backward_calls():
    x = _leaf()
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert y.grad.tolist() == [8.0, 16.0, 24.0]


def test_retained_grad_sees_hook_result():
    x = _leaf()
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda grad: grad * 100)
    y.sum().backward()
    assert y.grad.tolist() == [100.0, 100.0, 100.0]
    assert x.grad.tolist() == [200.0, 200.0, 200.0]


def test_retain_grad_on_leaf_is_a_no_op():
    x = _leaf()
    x.retain_grad()
    assert not x.retains_grad
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_grad_of_non_leaf_without_retain_grad_is_none_and_warns():
    x = _leaf()
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert y.grad is None


# ----------------------------------------------------------------- engine rules
def test_ten_thousand_deep_chain_backward_has_no_recursion_error():
    x = lucid.tensor(1.0, dtype=lucid.float64, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001**10_000, rtol=1e-9)


def test_ten_thousand_deep_chain_can_be_deleted_without_backward():
    x = lucid.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y + 1.0
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None


def _fan_out_gradient() -> bytes:
    lucid.manual_seed(1)
    x = lucid.randn(64, requires_grad=True)
    weights = [lucid.randn(64) for _ in range(40)]
    total = None
    for index, w in enumerate(weights):
        branch = (x * w).tanh() if index % 2 else (x * w + x).exp() * 1e-3
        total = branch if total is None else total + branch
    total.sum().backward()
    return x.grad.numpy().tobytes()


def test_gradient_accumulation_is_bitwise_deterministic():
    first = _fan_out_gradient()
    for _ in range(3):
        assert _fan_out_gradient() == first


def test_hook_firing_order_is_stable_across_runs():
    def run():
        order = []
        x = _leaf()
        branches = [x * float(k) for k in range(1, 8)]
        for k, branch in enumerate(branches):
            branch.register_hook(lambda grad, k=k: order.append(k))
        total = branches[0]
        for branch in branches[1:]:
            total = total + branch
        total.sum().backward()
        return order

    first = run()
    assert sorted(first) == list(range(7))
    assert all(run() == first for _ in range(3))


def test_intermediate_tensor_is_freed_by_backward_without_gc():
    with _without_cycle_collector():
        x = _leaf()
        h = x * 2
        loss = (h * h).sum()
        reference = weakref.ref(h)
        del h
        assert reference() is not None  # kept alive by the saved tensors of h * h
        loss.backward()
        assert reference() is None


def test_intermediate_tensor_is_kept_with_retain_graph():
    with _without_cycle_collector():
        x = _leaf()
        h = x * 2
        loss = (h * h).sum()
        reference = weakref.ref(h)
        del h
        loss.backward(retain_graph=True)
        assert reference() is not None
        loss.backward()
        assert reference() is None


def test_graph_dies_with_its_output_without_gc():
    with _without_cycle_collector():
        x = _leaf()
        y = (x * 2).exp()
        loss = (y * y).sum()
        nodes = [weakref.ref(loss.grad_fn), weakref.ref(y.grad_fn)]
        del y, loss
        assert all(node() is None for node in nodes)


def test_saved_output_does_not_keep_graph_alive_without_gc():
    with _without_cycle_collector():
        x = _leaf()
        y = x.exp()  # exp saves its own output
        node = weakref.ref(y.grad_fn)
        tensor = weakref.ref(y)
        del y
        assert node() is None and tensor() is None


def test_saved_tensors_are_freed_after_backward():
    x = _leaf()
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn.saved_tensors


def test_leaf_grads_never_alias_each_other_after_add():
    x = _leaf()
    w = _leaf()
    (x + w).sum().backward()
    assert x.grad is not w.grad
    x.grad.add_(1.0)
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())


def test_leaf_grad_does_not_alias_the_seed_gradient():
    x = _leaf()
    g = lucid.tensor([1.0, 2.0, 3.0])
    x.backward(g)
    assert x.grad is not g
    g.add_(10.0)
    assert x.grad.tolist() == [1.0, 2.0, 3.0]


def test_leaf_grad_does_not_alias_a_passed_through_seed():
    x = _leaf()
    g = lucid.tensor([1.0, 2.0, 3.0])
    (x + 0.0).backward(g)
    assert x.grad is not g
    assert not np.shares_memory(x.grad.numpy(), g.numpy())


def test_leaf_grad_does_not_alias_a_hook_result_kept_elsewhere():
    x = _leaf()
    kept = lucid.zeros(3)
    x.register_hook(lambda grad: kept)
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert kept.tolist() == [0.0, 0.0, 0.0]


def test_accumulating_into_grad_keeps_grad_identity_when_possible():
    x = _leaf()
    (x * 2).sum().backward()
    first = x.grad
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    assert first.tolist() == x.grad.tolist()


def test_grad_set_to_none_restarts_accumulation():
    x = _leaf()
    (x * 2).sum().backward()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


# ------------------------------------------------------------- version counter
def test_version_starts_at_zero_and_increments_on_inplace_ops():
    x = lucid.ones(3)
    assert x._version == 0
    x.add_(1.0)
    assert x._version == 1
    x.mul_(2.0)
    x += 1.0
    assert x._version == 3


def test_version_is_not_bumped_by_out_of_place_ops():
    x = lucid.ones(3)
    _ = x + 1.0
    _ = x.exp()
    assert x._version == 0


def test_version_is_shared_by_views():
    x = lucid.ones(2, 3)
    view = x.view(6)
    x.add_(1.0)
    assert view._version == 1
    view.mul_(2.0)
    assert x._version == 2
    assert x.tolist() == [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]


def test_version_is_shared_by_detach():
    x = _leaf()
    detached = x.detach()
    detached.add_(1.0)
    assert x._version == 1
    assert x.detach()._version == 1
    assert x.tolist() == [2.0, 3.0, 4.0]


def test_version_is_not_shared_by_clone():
    x = lucid.ones(3)
    copy = x.clone()
    copy.add_(1.0)
    assert x._version == 0 and copy._version == 1
    x.add_(1.0)
    assert copy._version == 1


def test_inplace_on_input_saved_through_a_view_is_detected():
    x = _leaf()
    base = x * 1.0
    view = base.view(3)
    y = view * view
    base.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_gradient_shared_by_two_inputs_is_not_summed_into_in_place():
    # AddBackward hands the same gradient object to both of its inputs; when each of those
    # inputs then receives another contribution, summing in place would corrupt the other.
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    a = x * 3.0
    b = x * 5.0
    y = a + b
    z = y + a * 7.0 + b * 11.0
    z.sum().backward()
    # dz/dx = (1 + 7) * 3 + (1 + 11) * 5 = 84
    assert x.grad.tolist() == [84.0, 84.0]


def test_gradient_seen_by_a_hook_is_not_summed_into_in_place():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2.0
    seen = []
    b = a * 1.0
    b.register_hook(lambda grad: seen.append(grad))
    c = b + b * 3.0
    c.sum().backward()
    assert seen[0].tolist() == [4.0, 4.0]
    assert x.grad.tolist() == [8.0, 8.0]


def test_view_remembers_its_root_base():
    x = lucid.ones(2, 3, requires_grad=True) * 1.0
    row = x[0]
    element = row[1:]
    assert row._is_view() and row._base is x
    assert element._base is x
    assert not x._is_view()


def test_inplace_on_a_view_under_no_grad_is_allowed_and_bumps_the_base_version():
    x = lucid.ones(2, 3, requires_grad=True)
    version = x._version
    with lucid.no_grad():
        x[0].zero_()
    assert x.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert x._version > version


def test_grad_of_several_outputs_counts_an_output_reached_from_another():
    """An output whose graph passes through another output given earlier still contributes:
    the walk that decides which nodes run finishes one output before starting the next."""
    for outputs in (lambda y: [y, y.sum()], lambda y: [y.sum(), y]):
        w = lucid.tensor([1.0, 2.0], requires_grad=True)
        y = w * w
        first, second = outputs(y)
        # the vector output seeded with ones, the sum with 2: d/dw = 2 w (1 + 2)
        seeds = [lucid.full_like(out, 1.0 if out.ndim else 2.0) for out in (first, second)]
        (grad,) = lucid.autograd.grad([first, second], [w], seeds)
        np.testing.assert_array_equal(grad.numpy(), [6.0, 12.0])


def test_a_first_gradient_nobody_else_holds_becomes_grad_without_a_copy():
    x = lucid.randn(4, 5)
    layer = lucid.nn.Linear(5, 3)
    layer(x).sum().backward()
    # the weight's gradient is computed transposed, a view of its product: kept as it is (a
    # copy would own its memory), as a tensor of its own, as PyTorch's AccumulateGrad keeps it
    grad = layer.weight.grad
    assert grad.numpy().base is not None
    assert grad._base is None and grad.is_contiguous()
    np.testing.assert_allclose(grad.numpy(), np.tile(x.sum(0).numpy(), (3, 1)), rtol=1e-6)
    x.requires_grad_()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [[2.0] * 5] * 4
