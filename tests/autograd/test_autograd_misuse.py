"""Autograd misuse gets PyTorch's error: a second backward through a freed graph, a hook that
changes the gradient's size or type, detach_() on a view or on a saved tensor, and an in-place
update of an inference tensor outside inference mode."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

FREED = "Trying to backward through the graph a second time"


# ------------------------------------------------------------ second backward
# Ops whose backward needs only a value kept on ctx (a scalar operand, indices): PyTorch saves
# it as a tensor, so its node is freed too.
KEEPS_VALUES = [
    ("mul_scalar", lambda x: x * 1.5),
    ("div_scalar", lambda x: x / 1.5),
    ("div_rounding", lambda x: lucid.div(x, 1.5, rounding_mode="floor")),
    ("index", lambda x: x[lucid.tensor([0, 2])]),
    ("mask_index", lambda x: x[x > 2]),
    ("embedding", lambda x: lucid.nn.functional.embedding(lucid.tensor([0, 1]), x.view(2, 3))),
    ("max_pool", lambda x: lucid.nn.functional.max_pool1d(x.view(1, 1, 6), 2)),
    ("setitem", lambda x: _set(x + 0, lucid.tensor([1, 2]), 5.0)),
    ("setitem_slice", lambda x: _set(x + 0, slice(0, 2), 5.0)),
]

# Ops whose backward needs nothing saved: PyTorch runs a second backward through them.
KEEPS_NOTHING = [
    ("add_scalar", lambda x: x + 1.5),
    ("neg", lambda x: -x),
    ("sum", lambda x: x.sum()),
    ("view", lambda x: x.view(2, 3)),
    ("slice", lambda x: x[1:3]),
    ("select", lambda x: x[1]),
    ("fill_everything", lambda x: _set(x + 0, Ellipsis, 5.0)),
]


def _set(tensor, index, value):
    tensor[index] = value
    return tensor


def _backward_twice(library, build):
    x = library.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    loss = build(x).sum()
    loss.backward()
    loss.backward()
    return x.grad


@pytest.mark.parametrize("case", KEEPS_VALUES, ids=[case[0] for case in KEEPS_VALUES])
def test_backward_twice_without_retain_graph_raises_where_ctx_kept_values(case):
    with pytest.raises(RuntimeError, match=FREED):
        _backward_twice(lucid, case[1])


@pytest.mark.parametrize("case", KEEPS_NOTHING, ids=[case[0] for case in KEEPS_NOTHING])
def test_backward_twice_through_ops_that_keep_nothing_accumulates_as_pytorch(case):
    grad = _backward_twice(lucid, case[1])
    once = lucid.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    case[1](once).sum().backward()
    np.testing.assert_allclose(grad.numpy(), 2 * once.grad.numpy())


def test_backward_twice_with_retain_graph_is_allowed():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3.0).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_backward_with_retain_graph_after_a_freeing_backward_raises():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3.0).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match=FREED):
        loss.backward(retain_graph=True)


def test_grad_twice_through_a_scalar_multiply_raises():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3.0).sum()
    lucid.autograd.grad(loss, x)
    with pytest.raises(RuntimeError, match=FREED):
        lucid.autograd.grad(loss, x)


@requires_torch
@pytest.mark.parametrize(
    "case", KEEPS_VALUES + KEEPS_NOTHING, ids=[case[0] for case in KEEPS_VALUES + KEEPS_NOTHING]
)
def test_backward_twice_raises_where_torch_raises(case):
    name, build = case
    torch_build = _TORCH_BUILDS.get(name, build)

    def outcome(library, function):
        try:
            _backward_twice(library, function)
        except RuntimeError as error:
            return str(error)
        return "accumulated"

    assert outcome(lucid, build) == outcome(torch, torch_build)


# The same ops for torch where the lucid call names lucid.
_TORCH_BUILDS = {
    "div_rounding": lambda x: torch.div(x, 1.5, rounding_mode="floor"),
    "index": lambda x: x[torch.tensor([0, 2])],
    "embedding": lambda x: torch.nn.functional.embedding(torch.tensor([0, 1]), x.view(2, 3)),
    "max_pool": lambda x: torch.nn.functional.max_pool1d(x.view(1, 1, 6), 2),
    "setitem": lambda x: _set(x + 0, torch.tensor([1, 2]), 5.0),
}


# ------------------------------------------------------------------------- hooks
def _hooked_backward(library, hook, on_leaf=False, dtype=None):
    x = library.ones(3, requires_grad=True, dtype=dtype)
    y = x * 2
    (x if on_leaf else y).register_hook(hook)
    (y * 1).sum().backward()
    return x.grad


def resized(grad):
    return lucid.ones(4) if isinstance(grad, lucid.Tensor) else torch.ones(4)


def retyped(grad):
    return grad.double()


class _CallableHook:
    def __call__(self, grad):
        return resized(grad)


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non_leaf", "leaf"])
def test_tensor_hook_changing_the_size_raises(on_leaf):
    with pytest.raises(RuntimeError) as error:
        _hooked_backward(lucid, resized, on_leaf)
    assert str(error.value) == "hook 'resized' has changed the size of value"


@pytest.mark.parametrize("on_leaf", [False, True], ids=["non_leaf", "leaf"])
def test_tensor_hook_changing_the_type_raises(on_leaf):
    with pytest.raises(RuntimeError) as error:
        _hooked_backward(lucid, retyped, on_leaf)
    assert str(error.value) == (
        "hook 'retyped' has changed the type of value (was lucid.FloatTensor got "
        "lucid.DoubleTensor)"
    )


def test_tensor_hook_changing_a_broadcastable_size_raises():
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        _hooked_backward(lucid, lambda grad: lucid.ones(1), on_leaf=True)


def test_tensor_hook_without_a_name_is_unknown():
    with pytest.raises(RuntimeError, match="hook '<unknown>' has changed the size"):
        _hooked_backward(lucid, _CallableHook())
    with pytest.raises(RuntimeError, match="hook '<unknown>' has changed the size"):
        _hooked_backward(lucid, functools.partial(lambda scale, grad: resized(grad), 2))


def test_tensor_hook_returning_a_non_tensor_raises_type_error():
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        _hooked_backward(lucid, lambda grad: 3)


def test_tensor_hook_returning_a_same_shaped_gradient_replaces_it():
    grad = _hooked_backward(lucid, lambda grad: grad * 3)
    np.testing.assert_allclose(grad.numpy(), [6.0, 6.0, 6.0])


HOOKS = [
    ("resized", resized, False, None),
    ("resized_leaf", resized, True, None),
    ("retyped", retyped, False, None),
    ("retyped_leaf", retyped, True, None),
    ("to_long", lambda grad: grad.long(), False, None),
    ("half_from_double", lambda grad: grad.half(), False, "float64"),
    ("both_changed", lambda grad: resized(grad).double(), False, None),
    ("callable", _CallableHook(), False, None),
    ("non_tensor", lambda grad: 3, False, None),
]


@requires_torch
@pytest.mark.parametrize("case", HOOKS, ids=[case[0] for case in HOOKS])
def test_tensor_hook_errors_match_torch(case):
    _, hook, on_leaf, dtype = case

    def outcome(library):
        try:
            _hooked_backward(library, hook, on_leaf, getattr(library, dtype) if dtype else None)
        except (RuntimeError, TypeError) as error:
            return type(error).__name__, str(error).replace("torch.", "lucid.")
        return None

    assert outcome(lucid) == outcome(torch)


# ----------------------------------------------------------------------- detach_
DETACH_VIEW = re.escape("Can't detach views in-place. Use detach() instead.")

VIEWS = [
    ("slice", lambda: lucid.zeros(3)[0:2]),
    ("view_of_leaf_requiring_grad", lambda: lucid.zeros(3, requires_grad=True)[0:2]),
    ("view_of_non_leaf", lambda: (lucid.zeros(3, requires_grad=True) * 2).view(3)),
    ("transpose", lambda: lucid.zeros(2, 3).t()),
    ("unbind", lambda: lucid.zeros(2, 3).unbind()[0]),
]


@pytest.mark.parametrize("case", VIEWS, ids=[case[0] for case in VIEWS])
def test_detach_inplace_on_a_view_raises(case):
    with pytest.raises(RuntimeError, match=DETACH_VIEW):
        case[1]().detach_()


def test_detach_inplace_on_a_view_made_under_no_grad_raises():
    x = lucid.zeros(3, requires_grad=True)
    with lucid.no_grad():
        view = x[0:2]
    with pytest.raises(RuntimeError, match=DETACH_VIEW):
        view.detach_()


def test_detach_inplace_on_detached_and_non_view_tensors_is_allowed():
    x = lucid.zeros(3, requires_grad=True)
    assert x.detach().detach_() is not None
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad


def test_saved_non_leaf_detached_in_place_raises_in_backward():
    x = lucid.ones(3, requires_grad=True)
    a = x * 2
    z = a.sin()  # saves a, a non-leaf
    a.detach_()
    with pytest.raises(RuntimeError) as error:
        z.sum().backward()
    assert str(error.value) == (
        "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This "
        "is not supported, please use out-of-place `.detach()` instead"
    )


def test_saved_output_detached_in_place_is_still_usable():
    x = lucid.ones(3, requires_grad=True)
    y = x.exp()  # saves its result
    z = y * 3.0
    y.detach_()
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(np.ones(3)), rtol=1e-6)


def test_tensor_detached_in_place_before_it_is_saved_is_a_constant():
    x = lucid.ones(3, requires_grad=True)
    a = x * 2
    a.detach_()
    (a * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_detached_result_without_grad_cannot_backward():
    y = lucid.ones(3, requires_grad=True).exp()
    y.detach_()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        y.sum().backward()


def test_leaf_detached_in_place_after_use_gets_no_gradient():
    x = lucid.ones(3, requires_grad=True)
    w = lucid.ones(3, requires_grad=True)
    loss = (x * w).sum()
    w.detach_()
    loss.backward()
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 1.0])


@requires_torch
def test_detach_and_saved_tensor_errors_match_torch():
    def outcome(library, steps):
        try:
            return steps(library)
        except RuntimeError as error:
            return str(error).replace("torch/", "lucid/")

    def saved_input(L):
        x = L.ones(3, requires_grad=True)
        a = x * 2
        z = a * a
        a.detach_()
        z.sum().backward()

    def view(L):
        L.zeros(3).view(3).detach_()

    for steps in (saved_input, view):
        lucid_outcome = outcome(lucid, steps).replace("lucid/optim", "torch/optim")
        assert lucid_outcome == outcome(torch, steps).replace("lucid/optim", "torch/optim")


# ------------------------------------------------------------ inference tensors
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)

UPDATES = [
    ("add_", lambda t: t.add_(1)),
    ("zero_", lambda t: t.zero_()),
    ("setitem", lambda t: t.__setitem__(0, 5.0)),
    ("augmented", lambda t: t.__iadd__(1)),
    ("view", lambda t: t[0:2].mul_(2)),
    ("copy_", lambda t: t.copy_(lucid.ones(3))),
    ("uniform_", lambda t: t.uniform_()),
]


def _inference_tensors():
    with lucid.inference_mode():
        return lucid.ones(3), lucid.ones(3) * 2


@pytest.mark.parametrize("case", UPDATES, ids=[case[0] for case in UPDATES])
def test_inplace_update_of_inference_tensor_outside_inference_mode_raises(case):
    for tensor in _inference_tensors():
        before = tensor.numpy().copy()
        with pytest.raises(RuntimeError) as error:
            case[1](tensor)
        assert str(error.value) == INFERENCE_INPLACE
        np.testing.assert_array_equal(tensor.numpy(), before)


def test_inplace_update_of_inference_tensor_under_no_grad_raises():
    tensor, _ = _inference_tensors()
    with lucid.no_grad(), pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        tensor.add_(1)


def test_inplace_update_of_inference_tensor_inside_inference_mode_is_allowed():
    tensor, result = _inference_tensors()
    with lucid.inference_mode():
        tensor.add_(1)
        result[0] = 7.0
    np.testing.assert_array_equal(tensor.numpy(), [2.0, 2.0, 2.0])
    with lucid.inference_mode(), lucid.inference_mode(False):
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            tensor.add_(1)


def test_tensors_made_in_inference_mode_are_inference_tensors():
    normal = lucid.ones(3)
    with lucid.inference_mode():
        made, computed = lucid.ones(3), normal * 2
        view_of_normal = normal[0:2]
        normal.add_(1)  # a normal tensor may be updated inside
    assert made.is_inference() and computed.is_inference() and made.detach().is_inference()
    assert not normal.is_inference() and not view_of_normal.is_inference()
    assert not made.clone().is_inference() and not (made + normal).is_inference()
    view_of_normal.add_(1)  # a view of a normal tensor stays normal
    np.testing.assert_array_equal(normal.numpy(), [3.0, 3.0, 2.0])
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter."):
        made._version
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
        made.requires_grad_()


def test_inference_mode_false_turns_inference_off_and_grad_on():
    with lucid.no_grad(), lucid.inference_mode(False):
        assert lucid.is_grad_enabled()
    with lucid.inference_mode(), lucid.inference_mode(False):
        assert not lucid.is_inference_mode_enabled()
        assert lucid.is_grad_enabled()
        assert not lucid.ones(2).is_inference()
