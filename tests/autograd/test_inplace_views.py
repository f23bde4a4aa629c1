"""In-place writes through views under autograd (_core/views.py), against PyTorch: the base's
history is rebased (CopySlices), a view whose base changed reads itself from the base anew
(AsStridedBackward0), and PyTorch's refusals where it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

# (name, view): the same call makes a view on lucid and torch tensors of shape (3, 4).
VIEW_KINDS = [
    ("slice", lambda b: b[1:]),
    ("strided_slice", lambda b: b[::2, 1::2]),
    ("select", lambda b: b[1]),
    ("column", lambda b: b[:, 2]),
    ("narrow", lambda b: b.narrow(1, 1, 2)),
    ("transpose", lambda b: b.transpose(0, 1)),
    ("t", lambda b: b.t()),
    ("mT", lambda b: b.mT),
    ("permute", lambda b: b.permute(1, 0)),
    ("view", lambda b: b.view(2, 6)),
    ("view_minus_one", lambda b: b.view(-1)),
    ("reshape", lambda b: b.reshape(6, 2)),
    ("flatten", lambda b: b.flatten()),
    ("unflatten", lambda b: b.unflatten(1, (2, 2))),
    ("unsqueeze", lambda b: b.unsqueeze(0)),
    ("none_index", lambda b: b[None]),
    ("ellipsis", lambda b: b[...]),
    ("squeeze", lambda b: b[None].squeeze(0)),
    ("diagonal", lambda b: b.diagonal()),
    ("diagonal_offset", lambda b: b.diagonal(1)),
    ("movedim", lambda b: b.movedim(0, 1)),
    ("swapaxes", lambda b: b.swapaxes(0, 1)),
    ("tensor_split", lambda b: b.tensor_split(2, dim=1)[1]),
    ("hsplit", lambda b: b.hsplit(2)[0]),
    ("view_of_view", lambda b: b[1:].t()[1:]),
    ("select_of_transpose", lambda b: b.t()[3]),
    ("view_as", lambda b: b.view_as(b)),
]

# (name, write): in-place ops on the view `v`; `w` requires grad and broadcasts to any view.
INPLACE_WRITES = [
    ("add_tensor", lambda v, w: v.add_(w)),
    ("iadd", lambda v, w: v.__iadd__(w * 2)),
    ("mul_tensor", lambda v, w: v.mul_(w)),
    ("mul_scalar", lambda v, w: v.mul_(3.0)),
    ("div_tensor", lambda v, w: v.div_(w + 2)),
    ("exp_", lambda v, w: v.exp_()),
    ("sigmoid_", lambda v, w: v.sigmoid_()),
    ("copy_", lambda v, w: v.copy_(w.expand_as(v))),
    ("zero_", lambda v, w: v.zero_()),
    ("fill_", lambda v, w: v.fill_(1.5)),
    ("clamp_", lambda v, w: v.clamp_(-0.5, 0.5)),
    ("addcmul_", lambda v, w: v.addcmul_(w, w, value=0.5)),
    ("pow_", lambda v, w: v.pow_(2)),
    ("chain", lambda v, w: v.mul_(w).add_(1.0).exp_()),
]


def _run(framework, make_view, write, x_value, w_value, weights):
    x = framework.tensor(x_value, requires_grad=True)
    w = framework.tensor(w_value, requires_grad=True)
    base = x * 1.5
    view = make_view(base)
    write(view, w)
    loss = (base * framework.tensor(weights)).sum() + (view * view).sum()
    loss.backward()
    return {
        "base": base.detach().numpy(),
        "view": view.detach().numpy(),
        "x.grad": x.grad.numpy(),
        "w.grad": w.grad.numpy() if w.grad is not None else None,
        "base.grad_fn": type(base.grad_fn).__name__ if framework is torch else base.grad_fn.name(),
        "view.grad_fn": type(view.grad_fn).__name__ if framework is torch else view.grad_fn.name(),
        "version": (base._version, view._version),
    }


@requires_torch
@pytest.mark.parametrize("view_name, make_view", VIEW_KINDS, ids=[k[0] for k in VIEW_KINDS])
@pytest.mark.parametrize("write_name, write", INPLACE_WRITES, ids=[k[0] for k in INPLACE_WRITES])
def test_inplace_write_through_a_view_rebases_the_base_as_torch(
    rng, view_name, make_view, write_name, write
):
    x_value = rng.uniform(-1, 1, (3, 4))
    w_value = rng.uniform(0.2, 0.9, ())
    weights = rng.uniform(-1, 1, (3, 4))
    ours = _run(lucid, make_view, write, x_value, w_value, weights)
    theirs = _run(torch, make_view, write, x_value, w_value, weights)
    for key in ("base", "view", "x.grad", "w.grad"):
        if theirs[key] is None:
            assert ours[key] is None or not ours[key].any(), key
        else:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=1e-12, err_msg=key)
    assert ours["base.grad_fn"] == theirs["base.grad_fn"] == "CopySlices"
    assert ours["view.grad_fn"] == theirs["view.grad_fn"] == "AsStridedBackward0"
    assert ours["version"] == theirs["version"]


def _base_without_grad(framework, x_value):
    # The decoder-loop pattern: a buffer of zeros filled through views of it.
    x = framework.tensor(x_value, requires_grad=True)
    out = framework.zeros(3, 4, dtype=framework.float64)
    out[:, 1].copy_(x[:, 0])
    out[:, 2] += x[:, 1] * 2
    out.t()[3].mul_(x[:, 2]).add_(x[:, 3])
    out[0].exp_()
    assert out.requires_grad and not out.is_leaf
    (out * framework.arange(12.0, dtype=framework.float64).view(3, 4)).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@requires_torch
def test_a_base_without_grad_takes_the_history_written_through_its_views(rng):
    x_value = rng.uniform(-1, 1, (3, 4))
    for ours, theirs in zip(_base_without_grad(lucid, x_value), _base_without_grad(torch, x_value)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


# (name, scenario): a view is made, then its base or another view of it is written in place,
# then the first view is used: it must see its base's new history.
STALE_VIEWS = [
    ("base_written", lambda b, w: (b[1], b.mul_(w))[0]),
    ("other_view_written", lambda b, w: (b[1], b[:, 2].mul_(w))[0]),
    ("base_written_twice", lambda b, w: (b.t(), b.mul_(w), b.add_(w))[0]),
    ("view_of_view_written", lambda b, w: (b[1:], b[1:][0].exp_())[0]),
    ("overlapping_view", lambda b, w: (b[0].expand(2, 4), b.mul_(w))[0]),
]


def _stale(framework, scenario, x_value, w_value):
    x = framework.tensor(x_value, requires_grad=True)
    w = framework.tensor(w_value, requires_grad=True)
    base = x * 1.0
    view = scenario(base, w)
    assert type(view.grad_fn).__name__ == "AsStridedBackward0" or (
        view.grad_fn.name() == "AsStridedBackward0"
    )
    (view * view).sum().backward()
    return x.grad.numpy(), None if w.grad is None else w.grad.numpy()


@requires_torch
@pytest.mark.parametrize("name, scenario", STALE_VIEWS, ids=[s[0] for s in STALE_VIEWS])
def test_a_view_whose_base_was_written_reads_the_new_history(rng, name, scenario):
    x_value = rng.uniform(0.1, 1, (3, 4))
    w_value = rng.uniform(0.5, 1.5, ())
    ours = _stale(lucid, scenario, x_value, w_value)
    theirs = _stale(torch, scenario, x_value, w_value)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    if theirs[1] is None:
        assert ours[1] is None
    else:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_a_view_of_a_base_without_grad_requires_grad_once_the_base_does():
    out = lucid.zeros(3, 4)
    row = out[0]
    assert not row.requires_grad
    out.add_(lucid.ones(3, 4, requires_grad=True))
    assert row.requires_grad and row.grad_fn.name() == "AsStridedBackward0"


def test_a_view_written_under_no_grad_keeps_gradients_to_its_base():
    x = lucid.ones(2, 3, requires_grad=True)
    rows = x * 2.0
    row = rows[0]
    with lucid.no_grad():
        row.add_(1.0)
    row.sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]


def test_inplace_on_a_view_under_no_grad_records_nothing():
    base = lucid.ones(2, 3, requires_grad=True) * 1.0
    grad_fn = base.grad_fn
    with lucid.no_grad():
        base[0].mul_(2.0)
    assert base.grad_fn is grad_fn


def _inplace_view_function(x):
    b = x * 1.0
    b[1:].mul_(x[:3])
    b.unsqueeze(0)[0, 2:].add_(x[:2].t() * 2)
    b[:2].sigmoid_()  # last: it keeps its result, which any later write would modify
    return b


def test_gradcheck_and_gradgradcheck_through_views_written_in_place(rng):
    x = lucid.tensor(rng.uniform(0.1, 0.9, 4), requires_grad=True)
    assert lucid.autograd.gradcheck(_inplace_view_function, (x,))
    assert lucid.autograd.gradgradcheck(_inplace_view_function, (x,))


@requires_torch
def test_double_backward_through_copy_slices_matches_torch(rng):
    value = rng.uniform(0.1, 0.9, (2, 3))
    results = []
    for framework in (lucid, torch):
        x = framework.tensor(value, requires_grad=True)
        b = x * x
        b[0].mul_(x[1])
        b.t()[1].exp_()
        (grad,) = framework.autograd.grad(b.sum(), x, create_graph=True)
        (grad * grad).sum().backward()
        results.append((grad.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@requires_torch
@pytest.mark.parametrize("op", ["exp_", "add_"])
def test_second_backward_through_copy_slices_raises_as_in_torch(op):
    outcomes = []
    for framework in (lucid, torch):
        x = framework.ones(2, 3, requires_grad=True)
        b = x + 0.0
        getattr(b[0], op)(*(() if op == "exp_" else (1.0,)))
        b.sum().backward()
        try:
            b.sum().backward()
            outcomes.append("ok")
        except RuntimeError as error:
            outcomes.append(str(error).split(".")[0])
    assert outcomes[0] == outcomes[1]


def test_detach_is_no_view_to_autograd():
    x = lucid.ones(3, requires_grad=True)
    base = x * 2.0
    detached = base.detach()
    detached.add_(x)
    assert detached.grad_fn.name() == "AddBackward0"
    assert base.grad_fn.name() == "MulBackward0"


# -------------------------------------------------------------------------- refusals
def _refusal(framework, scenario):
    try:
        scenario(framework)
    except RuntimeError as error:
        return str(error)
    return None


def _view_of_leaf(t):
    t.ones(3, requires_grad=True)[1:].add_(1.0)


def _view_made_without_grad(t):
    base = t.ones(3, requires_grad=True) * 1.0
    with t.no_grad():
        view = base[1:]
    view.add_(1.0)


def _view_made_without_grad_of_a_base_without_grad(t):
    base = t.zeros(3)
    with t.no_grad():
        view = base[1:]
    view.add_(t.ones(2, requires_grad=True))


def _view_made_in_inference(t):
    base = t.ones(3, requires_grad=True) * 1.0
    with t.inference_mode():
        view = base[1:]
    view.add_(1.0)


def _unbind_output(t):
    (t.ones(2, 3, requires_grad=True) * 1.0).unbind(1)[2].add_(1.0)


def _split_output(t):
    (t.ones(4, 3, requires_grad=True) * 1.0).split(2)[1].mul_(2.0)


def _split_with_sizes_output(t):
    (t.ones(4, 3, requires_grad=True) * 1.0).split([1, 3])[0].mul_(2.0)


def _chunk_output(t):
    (t.ones(4, 3, requires_grad=True) * 1.0).chunk(2)[0].exp_()


def _view_of_an_unbind_output(t):
    (t.ones(2, 3, requires_grad=True) * 1.0).unbind(0)[0][1:].add_(1.0)


def _unbind_output_of_a_base_without_grad(t):
    t.zeros(2, 3).unbind(0)[1].add_(t.ones(3, requires_grad=True))


def _custom_function_view(t):
    class Identity(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view_as(a)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    Identity.apply(t.ones(3, requires_grad=True) * 1.0).add_(1.0)


def _custom_function_returning_its_input(t):
    class Passthrough(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    Passthrough.apply(t.ones(3, requires_grad=True) * 1.0).mul_(2.0)


def _expanded_view(t):
    (t.ones(3, 1, requires_grad=True) * 1.0).expand(3, 4).add_(1.0)


REFUSALS = [
    _view_of_leaf, _view_made_without_grad, _view_made_without_grad_of_a_base_without_grad,
    _view_made_in_inference, _unbind_output, _split_output, _split_with_sizes_output,
    _chunk_output, _view_of_an_unbind_output, _unbind_output_of_a_base_without_grad,
    _custom_function_view, _custom_function_returning_its_input, _expanded_view,
]  # fmt: skip


@requires_torch
@pytest.mark.parametrize("scenario", REFUSALS, ids=[s.__name__.strip("_") for s in REFUSALS])
def test_inplace_write_through_a_view_is_refused_as_torch_refuses(scenario):
    theirs = _refusal(torch, scenario)
    assert theirs is not None
    assert _refusal(lucid, scenario) == theirs


# (name, scenario): writes PyTorch allows that the refusals above must not catch.
ALLOWED = [
    ("view_of_leaf_under_no_grad", lambda t: _under_no_grad(t, lambda: t.ones(3)[1:].add_(1.0))),
    ("view_made_and_written_under_no_grad", lambda t: _under_no_grad(
        t, lambda: (t.ones(3, requires_grad=True) * 1.0)[1:].add_(1.0))),
    ("view_made_without_grad_written_without_grad", lambda t: _view_without_grad_then(t)),
    ("unbind_output_without_grad", lambda t: t.zeros(2, 3).unbind(0)[1].add_(1.0)),
    ("tensor_split_output", lambda t: (t.ones(4, requires_grad=True) * 1.0).tensor_split(2)[1]
        .add_(1.0)),
]  # fmt: skip


def _under_no_grad(t, write):
    with t.no_grad():
        write()


def _view_without_grad_then(t):
    base = t.zeros(3)
    with t.no_grad():
        view = base[1:]
    view.add_(1.0)


@pytest.mark.parametrize("name, scenario", ALLOWED, ids=[a[0] for a in ALLOWED])
def test_inplace_write_through_a_view_is_allowed_where_torch_allows(name, scenario):
    assert _refusal(lucid, scenario) is None


def _transposed_base(framework, make_view, x_value, w_value):
    # The base's own array is column-major here (an op on a transpose keeps its layout).
    x = framework.tensor(x_value, requires_grad=True)
    w = framework.tensor(w_value, requires_grad=True)
    base = x.t() * 1.5
    view = make_view(base)
    view.mul_(w).add_(1.0)
    (base * base).sum().backward()
    return base.detach().numpy(), x.grad.numpy(), w.grad.numpy()


# The views that stay views of a column-major base (view and reshape to other shapes need a
# copy, or torch refuses them).
_COLUMN_MAJOR_VIEWS = [kind for kind in VIEW_KINDS if kind[0] in (
    "slice", "strided_slice", "select", "column", "narrow", "transpose", "t", "permute",
    "diagonal", "select_of_transpose", "view_of_view", "movedim",
)]  # fmt: skip


@requires_torch
@pytest.mark.parametrize(
    "view_name, make_view", _COLUMN_MAJOR_VIEWS, ids=[k[0] for k in _COLUMN_MAJOR_VIEWS]
)
def test_a_view_of_a_base_laid_out_column_major_is_rebased_as_torch(rng, view_name, make_view):
    x_value = rng.uniform(-1, 1, (4, 3))
    w_value = rng.uniform(0.5, 1.5, ())
    ours = _transposed_base(lucid, make_view, x_value, w_value)
    theirs = _transposed_base(torch, make_view, x_value, w_value)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12)
