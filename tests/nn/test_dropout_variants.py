"""Channel dropout (1d, 3d), alpha dropout and RReLU: functional forms and their modules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from tests.torch_oracle import functional as TF
from tests.torch_oracle import requires_torch, torch


@pytest.fixture(autouse=True)
def _seeded():
    lucid.manual_seed(0)


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return type(error), str(error)
    return None


@requires_torch
@pytest.mark.parametrize(
    "name, shape, kwargs",
    [
        ("dropout1d", (2, 3, 4, 5), {}),
        ("dropout1d", (3,), {}),
        ("dropout1d", (2, 3), {"p": 1.5}),
        ("alpha_dropout", (2, 3), {"p": -0.5, "training": True}),
        ("feature_alpha_dropout", (3,), {"training": True}),
        ("feature_alpha_dropout", (2, 3), {"p": 2.0}),
        ("dropout3d", (2, 3), {"p": 1.2}),
        ("rrelu", (3,), {"lower": 0.5, "upper": 0.1}),
        ("rrelu", (3,), {"lower": 0.5, "upper": 0.1, "training": True}),
        ("rrelu", (3,), {"lower": "a"}),
    ],
)
def test_bad_arguments_raise_torch_errors(name, shape, kwargs):
    lucid_error = _error(lambda: getattr(F, name)(lucid.ones(*shape), **kwargs))
    torch_error = _error(lambda: getattr(TF, name)(torch.ones(*shape), **kwargs))
    assert torch_error is not None
    assert lucid_error == torch_error


@requires_torch
@pytest.mark.parametrize(
    "name", ["alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout3d", "rrelu"]
)
@pytest.mark.parametrize("dtype", ["long", "bool"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 4), (2, 3, 4, 5)])
def test_integer_and_bool_inputs_raise_torch_errors(name, dtype, shape):
    lucid_input = lucid.ones(*shape, dtype=getattr(lucid, dtype))
    torch_input = torch.ones(*shape, dtype=getattr(torch, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lucid_error = _error(lambda: getattr(F, name)(lucid_input, training=True))
        torch_error = _error(lambda: getattr(TF, name)(torch_input, training=True))
    assert lucid_error == torch_error


@requires_torch
@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_non_tensor_input_raises_torch_type_error(name):
    assert _error(lambda: getattr(F, name)([1.0])) == _error(lambda: getattr(TF, name)([1.0]))


@requires_torch
@pytest.mark.parametrize(
    "name, shape, kwargs",
    [
        ("dropout1d", (2, 3, 5), {}),
        ("dropout1d", (3, 5), {}),
        ("dropout1d", (3, 5), {"training": False}),
        ("dropout3d", (2, 3, 2, 2, 2), {}),
        ("dropout3d", (3, 2, 2, 2), {}),
        ("dropout3d", (2, 3, 2, 2, 2), {"training": False}),
        ("dropout3d", (3, 2, 2), {}),
        ("alpha_dropout", (2, 3), {"training": True}),
        ("alpha_dropout", (2, 3), {"p": 1.0, "training": True}),
        ("feature_alpha_dropout", (2, 3, 4), {"training": True}),
        ("feature_alpha_dropout", (2, 3, 4), {"p": 1.0, "training": True}),
        ("rrelu", (2, 3), {}),
        ("rrelu", (2, 3), {"training": True}),
    ],
)
def test_grad_fn_shape_and_warnings_match_torch(name, shape, kwargs):
    x = lucid.ones(*shape, requires_grad=True)
    x_torch = torch.ones(*shape, requires_grad=True)
    with warnings.catch_warnings(record=True) as lucid_warnings:
        warnings.simplefilter("always")
        y = getattr(F, name)(x * 1.0, **kwargs)
    with warnings.catch_warnings(record=True) as torch_warnings:
        warnings.simplefilter("always")
        y_torch = getattr(TF, name)(x_torch * 1.0, **kwargs)
    assert tuple(y.shape) == tuple(y_torch.shape)
    assert y.grad_fn.name() == y_torch.grad_fn.name()
    assert [str(w.message) for w in lucid_warnings] == [str(w.message) for w in torch_warnings]


def test_eval_and_zero_probability_return_the_input():
    x = lucid.randn(2, 3, 4)
    for function in (F.alpha_dropout, F.feature_alpha_dropout):
        assert function(x, 0.5) is x  # training defaults to False
        assert function(x, 0.0, training=True) is x
    assert F.dropout1d(x, 0.5, training=False) is x
    assert F.dropout3d(lucid.ones(1, 2, 2, 2, 2), 0.0).grad_fn is None


def test_channel_dropout_drops_whole_channels_and_scales_the_rest():
    for function, shape in [(F.dropout1d, (6, 40, 7)), (F.dropout3d, (6, 40, 2, 3, 2))]:
        y = function(lucid.ones(*shape), 0.25).numpy().reshape(6, 40, -1)
        assert np.all(y.min(-1) == y.max(-1))
        assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}


def test_unbatched_channel_dropout_in_place_writes_the_input():
    x = lucid.ones(30, 4)
    assert F.dropout1d(x, 0.5, inplace=True) is x
    values = x.numpy()
    assert np.all(values.min(-1) == values.max(-1))
    assert set(np.unique(values)) == {0.0, 2.0}


@requires_torch
@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_values_match_torch(feature):
    """Kept and dropped units take torch's values: a * x + b and a * (-alpha) + b."""
    name = "feature_alpha_dropout" if feature else "alpha_dropout"
    x = np.linspace(-1, 1, 5)[None, None, :].repeat(50, 0).repeat(20, 1)
    torch.manual_seed(0)
    y_torch = getattr(TF, name)(torch.tensor(x), 0.3, True).numpy()
    y = getattr(F, name)(lucid.tensor(x), 0.3, True).numpy()
    # the output at each input value is one of two values: kept or dropped
    for column in range(5):
        np.testing.assert_allclose(
            np.unique(y[..., column].round(12)), np.unique(y_torch[..., column].round(12))
        )


def test_alpha_dropout_keeps_selu_mean_and_variance():
    activations = F.selu(lucid.randn(400_000, dtype=lucid.float64))
    y = F.alpha_dropout(activations, 0.2, training=True).numpy()
    assert abs(y.mean() - activations.numpy().mean()) < 0.01
    assert abs(y.std() - activations.numpy().std()) < 0.01


def test_alpha_dropout_gradient_is_the_kept_scale():
    x = lucid.randn(50, 30, dtype=lucid.float64, requires_grad=True)
    y = F.alpha_dropout(x, 0.4, training=True)
    y.sum().backward()
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.4 + 1) * 0.6)
    assert set(np.unique(x.grad.numpy().round(12))) == {0.0, round(a, 12)}


def test_rrelu_training_samples_slopes_within_bounds_and_backward_uses_them():
    x = lucid.tensor(np.concatenate([-np.linspace(0.1, 2, 500), np.linspace(0.1, 2, 500)]))
    x.requires_grad_(True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    slopes = (y.detach().numpy() / x.detach().numpy())[:500]
    assert np.all((slopes >= 0.1) & (slopes <= 0.3)) and slopes.std() > 0.03
    np.testing.assert_allclose(y.detach().numpy()[500:], x.detach().numpy()[500:])
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy() / x.detach().numpy())


def test_rrelu_in_place_forms_write_the_input():
    x = lucid.tensor([-1.0, 2.0])
    assert F.rrelu_(x) is x
    np.testing.assert_allclose(x.numpy(), [-(1 / 8 + 1 / 3) / 2, 2.0], rtol=1e-6)
    leaf = lucid.tensor([-1.0, 2.0], requires_grad=True)
    y = leaf * 1.0
    F.rrelu(y, training=True, inplace=True)
    assert y.grad_fn.name() == "RreluWithNoiseBackward1"


@requires_torch
def test_in_place_activations_are_exported_like_torch():
    for name in ("relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "rrelu_"):
        x = np.linspace(-2, 2, 7)
        lucid_x, torch_x = lucid.tensor(x), torch.tensor(x)
        assert getattr(F, name)(lucid_x) is lucid_x
        getattr(TF, name)(torch_x)
        np.testing.assert_allclose(lucid_x.numpy(), torch_x.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ modules
@requires_torch
@pytest.mark.parametrize(
    "name, args", [("Dropout1d", ()), ("Dropout3d", (0.2, True)), ("AlphaDropout", (0.1,)),
                   ("FeatureAlphaDropout", ()), ("RReLU", ()), ("RReLU", (0.1, 0.2, True))],
)  # fmt: skip
def test_module_repr_matches_torch(name, args):
    assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@requires_torch
@pytest.mark.parametrize("name", ["Dropout1d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"])
def test_dropout_modules_reject_bad_probability_as_torch(name):
    assert _error(lambda: getattr(nn, name)(1.5)) == _error(lambda: getattr(torch.nn, name)(1.5))


def test_modules_are_identity_in_eval_and_random_in_training():
    x = lucid.randn(4, 6, 5, 2, 2)
    for module in (nn.Dropout3d(), nn.AlphaDropout(), nn.FeatureAlphaDropout()):
        assert not np.array_equal(module(x).numpy(), x.numpy())
        assert module.eval()(x) is x
    x = lucid.randn(4, 6, 5)
    assert not np.array_equal(nn.Dropout1d()(x).numpy(), x.numpy())
    assert nn.Dropout1d().eval()(x) is x


@requires_torch
def test_rrelu_module_in_eval_matches_torch():
    x = np.random.default_rng(0).standard_normal((3, 4))
    expected = torch.nn.RReLU(0.2, 0.4).eval()(torch.tensor(x)).numpy()
    np.testing.assert_allclose(nn.RReLU(0.2, 0.4).eval()(lucid.tensor(x)).numpy(), expected)
