"""lucid.func.vmap, a loop over the mapped dimension: in_dims/out_dims semantics against
torch.func.vmap, nesting, randomness, per-sample gradients and torch's error messages."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.func as F
import lucid.nn as lnn
from tests.func.parity import assert_tree_close, pair
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def both(call):
    """call(api, lib, tensors) for lucid and for torch on the same float64 values."""

    def run(*shapes):
        ours, theirs = pair(*shapes)
        return call(F, lucid, ours), call(torch.func, torch, theirs)

    return run


@pytest.mark.parametrize(
    ("in_dims", "out_dims", "y_shape"),
    [
        (0, 0, (4, 6)),
        (1, 0, (4, 6)),
        (-1, 1, (4, 6)),
        ((0, None), 0, (5,)),
        ((1, None), -1, (5,)),
        ((0, 1), (0, 1), (6, 4)),
    ],
)
def test_in_dims_and_out_dims_match_torch(in_dims, out_dims, y_shape):
    def call(api, lib, tensors):
        x, y = tensors
        return api.vmap(lambda a, b: (a * b.sum(), a.exp()), in_dims=in_dims, out_dims=out_dims)(
            x, y
        )

    actual, expected = both(call)((4, 6), y_shape)
    assert_tree_close(actual, expected)


def test_nested_in_dims_over_dicts_and_lists():
    def call(api, lib, tensors):
        a, b, c = tensors
        f = api.vmap(
            lambda d, scale: d["a"] * d["b"][0] + scale,
            in_dims=({"a": 0, "b": [1]}, None),
        )
        return f({"a": a, "b": [b]}, c)

    actual, expected = both(call)((2, 3), (3, 2), (3,))
    assert_tree_close(actual, expected)


def test_out_dims_none_returns_the_unmapped_output():
    def call(api, lib, tensors):
        (x,) = tensors
        return api.vmap(lambda a: (a * 2, 7), out_dims=(0, None))(x)

    actual, expected = both(call)((3, 2))
    assert_tree_close(actual, expected)


def test_nested_vmap_matches_torch():
    def call(api, lib, tensors):
        x, y = tensors
        outer_product = api.vmap(api.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))
        return outer_product(x, y)

    actual, expected = both(call)((3,), (4,))
    assert_tree_close(actual, expected)
    assert tuple(actual.shape) == (3, 4)


def test_kwargs_are_not_mapped():
    def call(api, lib, tensors):
        x, y = tensors
        return api.vmap(lambda a, *, offset: a + offset)(x, offset=y)

    actual, expected = both(call)((2, 3), (3,))
    assert_tree_close(actual, expected)


def test_vmap_of_grad_of_jacrev_composes():
    def call(api, lib, tensors):
        (x,) = tensors
        return api.vmap(api.jacrev(lambda r: r.sin() * r.sum()))(x)

    actual, expected = both(call)((5, 3))
    assert_tree_close(actual, expected)


def test_randomness_error_raises_on_a_random_op():
    x = lucid.ones(3, 2)
    with pytest.raises(RuntimeError) as error:
        F.vmap(lambda a: a + lucid.rand(2))(x)
    assert str(error.value) == (
        "vmap: called random operation while in randomness error mode. Please either use the "
        "'same' or 'different' randomness flags on vmap or perform the randomness operation "
        "out of vmap"
    )


def test_randomness_same_gives_every_sample_one_draw_and_different_does_not():
    x = lucid.zeros(4, 3)
    same = F.vmap(lambda a: a + lucid.rand(3), randomness="same")(x).numpy()
    different = F.vmap(lambda a: a + lucid.rand(3), randomness="different")(x).numpy()
    assert (same == same[0]).all()
    assert not (different == different[0]).all()


class MLP:
    """The same two-layer MLP in lucid and torch, from one set of float64 weights."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.arrays = {
            "0.weight": rng.normal(size=(8, 5)),
            "0.bias": rng.normal(size=(8,)),
            "2.weight": rng.normal(size=(1, 8)),
            "2.bias": rng.normal(size=(1,)),
        }

    def lucid(self):
        model = lnn.Sequential(lnn.Linear(5, 8), lnn.Tanh(), lnn.Linear(8, 1)).double()
        params = {k: lucid.from_numpy(v.copy()) for k, v in self.arrays.items()}
        return model, params

    def torch(self):
        model = torch.nn.Sequential(
            torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)
        ).double()
        params = {k: torch.from_numpy(v.copy()) for k, v in self.arrays.items()}
        return model, params


def per_sample_loss(api, model):
    def loss(params, x, y):
        prediction = api.functional_call(model, params, (x.unsqueeze(0),))
        return ((prediction.squeeze(0) - y) ** 2).sum()

    return loss


def test_per_sample_gradients_equal_a_loop_and_torch():
    rng = np.random.default_rng(1)
    x_values, y_values = rng.normal(size=(6, 5)), rng.normal(size=(6, 1))
    mlp = MLP()
    model, params = mlp.lucid()
    t_model, t_params = mlp.torch()
    x, y = lucid.from_numpy(x_values), lucid.from_numpy(y_values)
    loss = per_sample_loss(F, model)

    batched = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    expected = torch.func.vmap(
        torch.func.grad(per_sample_loss(torch.func, t_model)), in_dims=(None, 0, 0)
    )(t_params, torch.from_numpy(x_values), torch.from_numpy(y_values))
    assert_tree_close(batched, expected)
    looped = [F.grad(loss)(params, x[i], y[i]) for i in range(6)]
    for name in params:
        np.testing.assert_allclose(
            batched[name].numpy(), np.stack([g[name].numpy() for g in looped]), rtol=0, atol=0
        )


@pytest.mark.parametrize(
    ("call", "error_type"),
    [
        (lambda api, x: api.vmap(lambda a: a)(), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=[0])(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=None)(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=(0, 0))(x), ValueError),
        (lambda api, x: api.vmap(lambda a, b: a, in_dims=(0,))(x, x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=({"a": 0},))({"b": x}), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=((0, 0),))((x,)), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=2)(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=-3)(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=(1.5,))(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a)(1.0), ValueError),
        (lambda api, x: api.vmap(lambda a: a, in_dims=(None,))(x), ValueError),
        (lambda api, x: api.vmap(lambda a, b: a)(x, x[0]), ValueError),
        (lambda api, x: api.vmap(lambda a: 1)(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a.sum(), out_dims=None)(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, out_dims=(0, 0))(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, out_dims=1.5)(x), ValueError),
        (lambda api, x: api.vmap(lambda a: a, out_dims=2)(x), IndexError),
        (lambda api, x: api.vmap(lambda a: a, chunk_size=0), ValueError),
        (lambda api, x: api.vmap(lambda a: a, randomness="bad"), RuntimeError),
    ],
)
def test_errors_match_torch_word_for_word(call, error_type):
    (x,), (tx,) = pair((2, 3))
    with pytest.raises(error_type) as lucid_error:
        call(F, x)
    with pytest.raises(error_type) as torch_error:
        call(torch.func, tx)
    # torch prints its Size type; the rest of each message is the same
    assert str(lucid_error.value) == str(torch_error.value).replace("torch.", "lucid.")


def test_chunk_size_does_not_change_results():
    (x,), _ = pair((5, 2))
    expected = F.vmap(lambda a: a.exp())(x)
    chunked = F.vmap(lambda a: a.exp(), chunk_size=2)(x)
    np.testing.assert_array_equal(chunked.numpy(), expected.numpy())


def test_a_mapped_dimension_of_size_zero_gives_empty_outputs_as_torch():
    def outputs(lib):
        x, w = lib.ones(0, 3), lib.ones(3)
        return (
            lib.func.vmap(lambda v: (v * 2).sum())(x),
            *lib.func.vmap(lambda v: (v, v.sum()), out_dims=(1, 0))(x),
            lib.func.vmap(lambda v, u: v * u, in_dims=(0, None))(x, w),
        )

    ours, theirs = outputs(lucid), outputs(torch)
    assert [tuple(o.shape) for o in ours] == [tuple(t.shape) for t in theirs]
    assert [str(o.dtype) for o in ours] == [str(t.dtype).replace("torch", "lucid") for t in theirs]
