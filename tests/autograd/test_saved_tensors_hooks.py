"""lucid.autograd.graph's hooks on what the graph saves for backward, against torch's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd.graph import (
    GradientEdge,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    save_on_cpu,
    saved_tensors_hooks,
)


def _pair():
    rng = np.random.default_rng(0)
    return (lucid.tensor(rng.normal(size=3), requires_grad=True) for _ in range(2))


def _grads(x, y, loss):
    loss.backward()
    grads = (x.grad.numpy().copy(), y.grad.numpy().copy())
    x.grad = y.grad = None
    return grads


# ------------------------------------------------------------------------ engine rules
def test_rule_pack_hook_sees_each_saved_tensor_and_backward_reads_the_unpacked_one():
    x, y = _pair()
    plain = _grads(x, y, (x * y).exp().sum())
    packed, unpacked = [], []

    def pack(tensor):
        packed.append(tuple(tensor.shape))
        return ("kept", tensor)

    def unpack(kept):
        unpacked.append(kept[0])
        return kept[1]

    with saved_tensors_hooks(pack, unpack):
        loss = (x * y).exp().sum()
    assert packed == [(3,), (3,), (3,)]  # mul's two inputs, exp's output: as torch counts
    assert unpacked == []
    hooked = _grads(x, y, loss)
    assert unpacked == ["kept"] * 3
    for a, b in zip(hooked, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_rule_unpack_hook_must_return_a_tensor_as_in_torch():
    x, _ = _pair()
    with saved_tensors_hooks(lambda tensor: 3, lambda packed: packed):
        loss = x.exp().sum()
    with pytest.raises(
        TypeError, match="unpack_hook expected to be a Tensor but got result of type int"
    ):
        loss.backward()


def test_rule_the_innermost_hooks_apply():
    x, _ = _pair()
    order = []
    with saved_tensors_hooks(lambda t: order.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: order.append("inner") or t, lambda t: t):
            (x * 2).exp()
        x.exp()
    assert order == ["inner", "outer"]


def test_rule_ops_inside_a_pack_hook_are_not_packed_again():
    x, _ = _pair()
    calls = []

    def pack(tensor):
        calls.append(None)
        return tensor.exp().log()  # ops that save tensors of their own

    with saved_tensors_hooks(pack, lambda t: t):
        x.exp()
    assert len(calls) == 1


def test_rule_a_saved_output_unpacked_keeps_double_backward():
    x, _ = _pair()
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        (grad,) = lucid.autograd.grad(x.exp().sum(), x, create_graph=True)
    (second,) = lucid.autograd.grad(grad.sum(), x)
    np.testing.assert_allclose(second.numpy(), np.exp(x.detach().numpy()))


def test_rule_without_hooks_nothing_changes_after_they_exit():
    x, _ = _pair()
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    y = x.exp()
    assert y.grad_fn.unpack_hook is None


# ------------------------------------------------------------------------- the API
def test_disable_saved_tensors_hooks_refuses_new_hooks_with_its_message():
    @disable_saved_tensors_hooks("hooks are off here")
    def refused():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    with pytest.raises(RuntimeError, match="^hooks are off here$"):
        refused()
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again outside
        pass


def test_save_on_cpu_keeps_copies_as_torch_does_for_cpu_tensors():
    x, y = _pair()
    plain = _grads(x, y, (x * y).sum())
    with save_on_cpu():
        a = x * 1
        loss = (a * y).sum()
    a.add_(1)  # the saved copy is not the tensor: no version error, the old value is used
    for ours, expected in zip(_grads(x, y, loss), plain, strict=True):
        np.testing.assert_array_equal(ours, expected)


def test_get_gradient_edge_names_the_node_or_the_accumulator():
    x, _ = _pair()
    y = x * 2
    assert get_gradient_edge(y) == GradientEdge(y.grad_fn, 0, None)
    leaf_edge = get_gradient_edge(x)
    assert type(leaf_edge.node).__name__ == "AccumulateGrad" and leaf_edge.output_nr == 0
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(lucid.ones(2))


def test_increment_version_makes_backward_refuse_the_modified_saved_tensor():
    x, _ = _pair()
    y = x.exp()
    increment_version(y)
    with pytest.raises(RuntimeError, match="has been modified by an inplace operation"):
        y.sum().backward()
