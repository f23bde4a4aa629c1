"""EmbeddingBag, Unfold / Fold and gumbel_softmax against torch.nn (gumbel_softmax, being
random, by its properties)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from tests.torch_oracle import functional as TF
from tests.torch_oracle import requires_torch, torch


def _both(array: np.ndarray, requires_grad: bool = False):
    return (
        lucid.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def _close(a, b) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-10)


def _same_error(call_lucid, call_torch) -> None:
    with pytest.raises(Exception) as expected:
        call_torch()
    with pytest.raises(type(expected.value)) as got:
        call_lucid()
    message = str(got.value).replace("lucid._tensor.", "torch.")
    assert message.replace("lucid.Size", "torch.Size") == str(expected.value)


# ------------------------------------------------------------------- embedding_bag
_BAGS = [
    # (indices, offsets, keyword arguments)
    ([1, 2, 4, 4, 3, 0, 7], [0, 2, 2, 5], {"mode": "sum"}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 2, 2, 5], {"mode": "mean"}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 2, 2, 5], {"mode": "max"}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 3, 3, 6], {"mode": "mean", "include_last_offset": True}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 1, 7], {"mode": "max", "include_last_offset": True}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 2, 5], {"mode": "sum", "padding_idx": 4}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 2, 4], {"mode": "mean", "padding_idx": 4}),
    ([1, 2, 4, 4, 3, 0, 7], [0, 2, 4], {"mode": "max", "padding_idx": -4}),
    ([[1, 2, 4], [4, 3, 0], [7, 7, 1]], None, {"mode": "mean"}),
    ([[1, 2, 4], [4, 3, 0], [7, 7, 1]], None, {"mode": "max", "padding_idx": 7}),
    ([], [0, 0], {"mode": "mean"}),
]


@requires_torch
@pytest.mark.parametrize("indices, offsets, kwargs", _BAGS)
def test_embedding_bag_matches_torch_forward_and_backward(rng, indices, offsets, kwargs):
    weight = rng.standard_normal((8, 3))
    lw, tw = _both(weight, requires_grad=True)
    li, ti = _both(np.array(indices, dtype=np.int64))
    lo, to = _both(np.array(offsets, dtype=np.int64)) if offsets is not None else (None, None)
    expected = TF.embedding_bag(ti, tw, to, **kwargs)
    got = F.embedding_bag(li, lw, lo, **kwargs)
    _close(got, expected)
    grad = rng.standard_normal(tuple(expected.shape))
    expected.backward(torch.tensor(grad))
    got.backward(lucid.tensor(grad))
    _close(lw.grad, tw.grad)


@requires_torch
@pytest.mark.parametrize("two_d", [False, True])
def test_embedding_bag_per_sample_weights_match_torch(rng, two_d):
    weight = rng.standard_normal((6, 4))
    indices = np.array([[0, 5, 2], [3, 3, 1]]) if two_d else np.array([0, 5, 2, 3, 3, 1])
    samples = rng.standard_normal(indices.shape)
    lw, tw = _both(weight, requires_grad=True)
    ls, ts = _both(samples, requires_grad=True)
    li, ti = _both(indices)
    offsets = None if two_d else np.array([0, 1, 4])
    lo, to = _both(offsets) if offsets is not None else (None, None)
    expected = TF.embedding_bag(ti, tw, to, mode="sum", per_sample_weights=ts, padding_idx=3)
    got = F.embedding_bag(li, lw, lo, mode="sum", per_sample_weights=ls, padding_idx=3)
    _close(got, expected)
    expected.sum().backward()
    got.sum().backward()
    _close(lw.grad, tw.grad)
    _close(ls.grad, ts.grad)


def _frequency_cases():
    """scale_grad_by_freq over modes, 1-d and 2-d input, per_sample_weights, padding_idx and
    include_last_offset; the indices repeat in runs of different lengths, so that each run
    is scaled by its own count only where PyTorch's kernel does so."""
    flat = [1, 2, 2, 2, 3, 4, 4, 0, 2, 5]
    square = [[1, 2, 2, 2, 3], [4, 4, 0, 2, 5]]
    for mode, samples, padding, last, two_d in itertools.product(
        ("sum", "mean", "max"), (False, True), (None, 2, -2), (False, True), (False, True)
    ):
        if (samples and mode != "sum") or (two_d and last):
            continue
        kwargs = {"mode": mode, "padding_idx": padding, "include_last_offset": last}
        offsets = None if two_d else [0, 3, 3, 7, 10] if last else [0, 3, 3, 7]
        yield square if two_d else flat, offsets, samples, kwargs


@requires_torch
@pytest.mark.parametrize("indices, offsets, samples, kwargs", list(_frequency_cases()), ids=str)
def test_embedding_bag_scale_grad_by_freq_matches_torch(indices, offsets, samples, kwargs):
    rng = np.random.default_rng(7)
    kwargs = {**kwargs, "scale_grad_by_freq": kwargs["mode"] != "max"}
    lw, tw = _both(rng.standard_normal((6, 3)), requires_grad=True)
    li, ti = _both(np.array(indices))
    lo, to = _both(np.array(offsets)) if offsets is not None else (None, None)
    ls = ts = None
    if samples:
        ls, ts = _both(rng.standard_normal(np.shape(indices)), requires_grad=True)
    expected = TF.embedding_bag(ti, tw, to, per_sample_weights=ts, **kwargs)
    got = F.embedding_bag(li, lw, lo, per_sample_weights=ls, **kwargs)
    _close(got, expected)
    assert got.grad_fn.name() == expected.grad_fn.name()
    grad = rng.standard_normal(tuple(expected.shape))
    expected.backward(torch.tensor(grad))
    got.backward(lucid.tensor(grad))
    _close(lw.grad, tw.grad)
    if samples:
        _close(ls.grad, ts.grad)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_passes_gradcheck_and_gradgradcheck(mode):
    rng = np.random.default_rng(8)
    weight = lucid.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    samples = lucid.tensor(rng.standard_normal(7), requires_grad=True)
    indices = lucid.tensor([1, 2, 2, 5, 0, 2, 3])
    offsets = lucid.tensor([0, 3, 3, 5])

    def bags(w, s):
        # (scale_grad_by_freq rescales the gradient on purpose, so gradcheck cannot use it)
        extra = {"per_sample_weights": s} if mode == "sum" else {}
        return F.embedding_bag(indices, w, offsets, mode=mode, padding_idx=5, **extra)

    assert lucid.autograd.gradcheck(bags, (weight, samples))
    assert lucid.autograd.gradgradcheck(bags, (weight, samples))


@requires_torch
def test_embedding_bag_module_matches_torch_with_copied_weights(rng):
    for kwargs in ({}, {"mode": "sum", "padding_idx": -1}, {"mode": "max", "max_norm": 1.0}):
        reference = torch.nn.EmbeddingBag(7, 3, dtype=torch.float64, **kwargs)
        layer = nn.EmbeddingBag(7, 3, dtype=lucid.float64, **kwargs)
        assert repr(layer) == repr(reference)
        assert list(layer.state_dict()) == list(reference.state_dict())
        layer.load_state_dict({"weight": reference.weight.detach().numpy().copy()})
        li, ti = _both(np.array([[1, 6, 6], [0, 2, 5]]))
        _close(layer(li), reference(ti))
        _close(layer.weight, reference.weight)  # max_norm renormalised both in place
    pretrained = nn.EmbeddingBag.from_pretrained(lucid.ones(4, 2), mode="sum")
    assert not pretrained.weight.requires_grad
    assert pretrained(lucid.tensor([[0, 1]])).tolist() == [[2.0, 2.0]]


@requires_torch
def test_embedding_bag_errors_match_torch():
    weight = np.ones((5, 3))
    lw, tw = _both(weight)
    li, ti = _both(np.array([1, 2, 4]))
    l2, t2 = _both(np.array([[1, 2], [3, 4]]))
    cases = [
        lambda f, t, w, i, i2: f.embedding_bag(i, w, t.tensor([1, 2])),
        lambda f, t, w, i, i2: f.embedding_bag(i, w, t.tensor([0, 7])),
        lambda f, t, w, i, i2: f.embedding_bag(t.tensor([0, 9]), w, t.tensor([0])),
        lambda f, t, w, i, i2: f.embedding_bag(i, w),
        lambda f, t, w, i, i2: f.embedding_bag(i, w, t.tensor([[0]])),
        lambda f, t, w, i, i2: f.embedding_bag(i2, w, t.tensor([0])),
        lambda f, t, w, i, i2: f.embedding_bag(i, w, t.tensor([0]), mode="min"),
        lambda f, t, w, i, i2: f.embedding_bag(i2, w, mode="max", scale_grad_by_freq=True),
        lambda f, t, w, i, i2: f.embedding_bag(i2, w, mode="mean", per_sample_weights=w[:2, :2]),
        lambda f, t, w, i, i2: f.embedding_bag(i2, w, per_sample_weights=w[:1]),
        lambda f, t, w, i, i2: f.embedding_bag(i2, w[0]),
        lambda f, t, w, i, i2: f.embedding_bag(i2[None], w),
        lambda f, t, w, i, i2: f.embedding_bag(i2, w, padding_idx=5),
        lambda f, t, w, i, i2: f.embedding_bag(i2.double(), w, mode="sum"),
    ]
    for case in cases:
        _same_error(
            lambda case=case: case(F, lucid, lw, li, l2),
            lambda case=case: case(TF, torch, tw, ti, t2),
        )


# ------------------------------------------------------------------- unfold / fold
_WINDOWS = [
    # (input shape, kernel_size, dilation, padding, stride)
    ((2, 3, 5, 6), 2, 1, 0, 1),
    ((2, 3, 5, 6), (2, 3), (1, 2), (1, 0), (2, 1)),
    ((1, 2, 7, 7), 3, 2, 2, 3),
    ((3, 4, 5), (3, 1), 1, 1, (1, 2)),
]


@requires_torch
@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", _WINDOWS)
def test_unfold_and_fold_match_torch(rng, shape, kernel, dilation, padding, stride):
    lx, tx = _both(rng.standard_normal(shape), requires_grad=True)
    expected = TF.unfold(tx, kernel, dilation, padding, stride)
    got = F.unfold(lx, kernel, dilation, padding, stride)
    assert got.grad_fn.name() == expected.grad_fn.name() == "Im2ColBackward0"
    _close(got, expected)
    grad = rng.standard_normal(tuple(expected.shape))
    expected.backward(torch.tensor(grad))
    got.backward(lucid.tensor(grad))
    _close(lx.grad, tx.grad)

    lc, tc = _both(rng.standard_normal(tuple(expected.shape)), requires_grad=True)
    size = shape[-2:]
    expected = TF.fold(tc, size, kernel, dilation, padding, stride)
    got = F.fold(lc, size, kernel, dilation, padding, stride)
    assert got.grad_fn.name() == expected.grad_fn.name() == "Col2ImBackward0"
    _close(got, expected)
    grad = rng.standard_normal(shape)
    expected.backward(torch.tensor(grad))
    got.backward(lucid.tensor(grad))
    _close(lc.grad, tc.grad)


@requires_torch
def test_unfold_and_fold_modules_match_torch(rng):
    pairs = [
        (nn.Unfold((2, 3), padding=1), torch.nn.Unfold((2, 3), padding=1)),
        (nn.Fold((4, 5), 2, stride=(2, 1)), torch.nn.Fold((4, 5), 2, stride=(2, 1))),
    ]
    shapes = [(2, 3, 4, 5), (2, 12, 8)]
    for (layer, reference), shape in zip(pairs, shapes, strict=True):
        assert repr(layer) == repr(reference)
        lx, tx = _both(rng.standard_normal(shape))
        _close(layer(lx), reference(tx))


def test_fold_is_the_adjoint_of_unfold(rng):
    x = lucid.tensor(rng.standard_normal((2, 3, 6, 5)))
    config = dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    cols = F.unfold(x, **config)
    y = lucid.tensor(rng.standard_normal(tuple(cols.shape)))
    left = float((cols * y).sum())
    right = float((x * F.fold(y, (6, 5), **config)).sum())
    assert abs(left - right) < 1e-10 * max(1.0, abs(left))


def test_unfold_and_fold_pass_gradcheck_and_gradgradcheck(rng):
    x = lucid.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    cols = lucid.tensor(rng.standard_normal((1, 8, 6)), requires_grad=True)

    def unfolded(x):
        return F.unfold(x, 2, padding=1, stride=2)

    def folded(cols):
        return F.fold(cols, (3, 4), 2)

    for function, argument in ((unfolded, x), (folded, cols)):
        assert lucid.autograd.gradcheck(function, (argument,))
        assert lucid.autograd.gradgradcheck(function, (argument,))


@requires_torch
def test_unfold_and_fold_errors_match_torch():
    cases = [
        ("unfold", (2, 3), (2,), {}),
        ("unfold", (2,), (2,), {}),
        ("unfold", (), (2,), {}),
        ("unfold", (1, 2, 3, 3), (4,), {}),
        ("unfold", (1, 2, 3, 3), (2,), {"stride": 0}),
        ("unfold", (1, 2, 3, 3), (0,), {}),
        ("unfold", (1, 2, 3, 3), (2,), {"dilation": 0}),
        ("unfold", (1, 2, 3, 3), (2,), {"padding": -1}),
        ("unfold", (1, 0, 3, 3), (2,), {}),
        ("unfold", (2, 3, 3, 3, 3), (2,), {}),
        ("unfold", (1, 2, 3, 3), ((2, 2, 2),), {}),
        ("unfold", (1, 2, 3, 3), (2.0,), {}),
        ("fold", (1, 5, 4), (3, 2), {}),
        ("fold", (1, 8, 5), (3, 2), {}),
        ("fold", (2, 3, 8, 4), (3, 2), {}),
        ("fold", (1, 0, 4), (3, 2), {}),
        ("fold", (2,), (3, 2), {}),
        ("fold", (1, 8, 4), (3, 2.0), {}),
        ("fold", (1, 8, 4), ((3, 3, 3), 2), {}),
    ]
    for name, shape, args, kwargs in cases:
        lx, tx = _both(np.zeros(shape))
        _same_error(
            lambda name=name, lx=lx, args=args, kwargs=kwargs: getattr(F, name)(
                lx, *args, **kwargs
            ),
            lambda name=name, tx=tx, args=args, kwargs=kwargs: getattr(TF, name)(
                tx, *args, **kwargs
            ),
        )
    _same_error(lambda: F.unfold(lucid.zeros(1, 1, 2, 2, dtype=lucid.int64), 2),
                lambda: TF.unfold(torch.zeros(1, 1, 2, 2, dtype=torch.int64), 2))  # fmt: skip


def test_unfold_and_fold_of_an_empty_batch_have_empty_results():
    assert F.unfold(lucid.zeros(0, 2, 3, 3), 2).shape == (0, 8, 4)
    assert F.fold(lucid.zeros(0, 8, 4), 3, 2).shape == (0, 2, 3, 3)


# ------------------------------------------------------------------- gumbel_softmax
def test_gumbel_softmax_samples_lie_on_the_simplex():
    logits = lucid.randn(5, 7, dtype=lucid.float64)
    sample = F.gumbel_softmax(logits, tau=0.5)
    assert sample.shape == (5, 7)
    assert (sample >= 0).all()
    np.testing.assert_allclose(sample.sum(-1).numpy(), np.ones(5), atol=1e-12)
    along_first = F.gumbel_softmax(logits, dim=0)
    np.testing.assert_allclose(along_first.sum(0).numpy(), np.ones(7), atol=1e-12)


def test_gumbel_softmax_is_reproducible_under_a_seeded_generator():
    logits = lucid.randn(4, 6)
    lucid.manual_seed(3)
    first = F.gumbel_softmax(logits)
    lucid.manual_seed(3)
    assert lucid.equal(first, F.gumbel_softmax(logits))
    assert not lucid.equal(first, F.gumbel_softmax(logits))


def test_gumbel_softmax_follows_the_logits():
    # with far larger logits than the noise, the sample is the softmax's one-hot argmax
    logits = lucid.tensor([[0.0, 60.0, 0.0], [90.0, 0.0, 0.0]])
    assert F.gumbel_softmax(logits, hard=True).tolist() == [[0, 1, 0], [1, 0, 0]]


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    logits = lucid.randn(4, 6, dtype=lucid.float64, requires_grad=True)
    weights = lucid.randn(4, 6, dtype=lucid.float64)
    lucid.manual_seed(7)
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True)
    assert ((hard == 0) | (hard == 1)).all()
    assert hard.sum(-1).tolist() == [1.0] * 4
    (grad_hard,) = lucid.autograd.grad((hard * weights).sum(), logits)
    lucid.manual_seed(7)
    soft = F.gumbel_softmax(logits, tau=0.7)
    assert lucid.equal(hard.argmax(-1), soft.argmax(-1))
    (grad_soft,) = lucid.autograd.grad((soft * weights).sum(), logits)
    # straight through: the forward is one-hot, the gradient the soft sample's
    np.testing.assert_allclose(grad_hard.numpy(), grad_soft.numpy(), atol=1e-12)


def test_gumbel_softmax_eps_is_deprecated():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(lucid.randn(2, 3), eps=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.gumbel_softmax(lucid.randn(2, 3))
