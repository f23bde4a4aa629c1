"""nn.init fills tensors in place with PyTorch's distributions, bounds, gains and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.init as init
from tests.torch_oracle import requires_torch, torch


def _values(tensor):
    return tensor.detach().numpy().astype(np.float64)


@requires_torch
@pytest.mark.parametrize(
    "shape", [(3, 5), (7, 2), (16, 4, 3), (8, 3, 5, 5), (2, 6, 1, 2, 3), (4, 0)]
)
def test_fans_match_torch(shape):
    expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(lucid.empty(shape)) == expected


@requires_torch
@pytest.mark.parametrize(
    ("nonlinearity", "param"),
    [
        ("linear", None),
        ("conv2d", None),
        ("conv_transpose3d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("leaky_relu", 3),
        ("selu", None),
    ],
)
def test_calculate_gain_matches_torch(nonlinearity, param):
    expected = torch.nn.init.calculate_gain(nonlinearity, param)
    assert init.calculate_gain(nonlinearity, param) == expected


def test_calculate_gain_errors_match_torch():
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fans_need_two_dimensions():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(lucid.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of"):
        init.kaiming_uniform_(lucid.empty(3, 4), mode="fan_avg")


def test_fills_are_in_place_under_no_grad_and_bump_the_version():
    weight = lucid.zeros(40, 30, requires_grad=True)
    for fill in (
        lambda w: init.uniform_(w, -0.5, 0.5),
        init.normal_,
        init.trunc_normal_,
        lambda w: init.constant_(w, 0.3),
        init.ones_,
        init.zeros_,
        init.eye_,
        init.xavier_uniform_,
        init.xavier_normal_,
        init.kaiming_uniform_,
        init.kaiming_normal_,
        init.orthogonal_,
    ):
        before = weight._version
        assert fill(weight) is weight
        assert weight._version > before
        assert weight.is_leaf and weight.requires_grad and weight.grad_fn is None


def test_constant_ones_zeros_eye():
    weight = lucid.empty(3, 4)
    assert _values(init.constant_(weight, 2.5)).tolist() == [[2.5] * 4] * 3
    assert _values(init.ones_(weight)).sum() == 12
    assert _values(init.zeros_(weight)).sum() == 0
    np.testing.assert_array_equal(_values(init.eye_(weight)), np.eye(3, 4))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(lucid.empty(2, 2, 2))


def _uniform_bound(torch_init, shape, **kwargs):
    """Torch's bound for a uniform init: the largest |value| it draws, to within 0.1%."""
    torch.manual_seed(0)
    values = torch_init(torch.empty(shape), **kwargs)
    return values.abs().max().item()


@requires_torch
@pytest.mark.parametrize(
    ("name", "shape", "kwargs", "bound"),
    [
        ("xavier_uniform_", (200, 300), {}, math.sqrt(6 / 500)),
        ("xavier_uniform_", (64, 32, 3, 3), {"gain": 2.0}, 2 * math.sqrt(6 / (96 * 9))),
        ("kaiming_uniform_", (300, 200), {}, math.sqrt(2) * math.sqrt(3 / 200)),
        (
            "kaiming_uniform_",
            (300, 20, 3),
            {"a": math.sqrt(5)},
            math.sqrt(2 / 6) * math.sqrt(3 / 60),
        ),
        (
            "kaiming_uniform_",
            (100, 400),
            {"mode": "fan_out", "nonlinearity": "relu"},
            math.sqrt(2) * math.sqrt(3 / 100),
        ),
    ],
)
def test_uniform_inits_use_torch_bounds(name, shape, kwargs, bound):
    torch_bound = _uniform_bound(getattr(torch.nn.init, name), shape, **kwargs)
    assert torch_bound == pytest.approx(bound, rel=1e-3)
    values = _values(getattr(init, name)(lucid.empty(shape), **kwargs))
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() == pytest.approx(bound, rel=1e-3)
    # A uniform on [-b, b] has std b / sqrt(3).
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)


@requires_torch
@pytest.mark.parametrize(
    ("name", "shape", "kwargs", "std"),
    [
        ("normal_", (300, 300), {"mean": 1.5, "std": 0.3}, 0.3),
        ("xavier_normal_", (200, 300), {"gain": 0.5}, 0.5 * math.sqrt(2 / 500)),
        ("kaiming_normal_", (300, 200), {"nonlinearity": "relu"}, math.sqrt(2 / 200)),
        ("kaiming_normal_", (50, 30, 5), {"mode": "fan_out", "a": 0.1}, None),
    ],
)
def test_normal_inits_match_torch_statistics(name, shape, kwargs, std):
    torch.manual_seed(0)
    ours = _values(getattr(init, name)(lucid.empty(shape), **kwargs))
    theirs = getattr(torch.nn.init, name)(torch.empty(shape), **kwargs).numpy()
    if std is not None:
        assert theirs.std() == pytest.approx(std, rel=0.02)
    assert ours.std() == pytest.approx(theirs.std(), rel=0.03)
    assert ours.mean() == pytest.approx(kwargs.get("mean", 0.0), abs=4 * ours.std() / 300)


def _truncated_normal_moments(mean, std, a, b):
    def pdf(x):
        return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)

    def cdf(x):
        return (1 + math.erf(x / math.sqrt(2))) / 2

    alpha, beta = (a - mean) / std, (b - mean) / std
    mass = cdf(beta) - cdf(alpha)
    shift = (pdf(alpha) - pdf(beta)) / mass
    variance = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / mass - shift**2
    return mean + std * shift, std * math.sqrt(variance)


@requires_torch
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"mean": 1.0, "std": 0.5, "a": 0.5, "b": 3.0}, {"std": 2.0, "a": -1.0, "b": 4.0}],
    ids=str,
)
def test_trunc_normal_matches_torch_statistics_and_bounds(kwargs):
    torch.manual_seed(0)
    ours = _values(init.trunc_normal_(lucid.empty(300, 300), **kwargs))
    theirs = torch.nn.init.trunc_normal_(torch.empty(300, 300, dtype=torch.float64), **kwargs)
    theirs = theirs.numpy()
    a, b = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
    expected_mean, expected_std = _truncated_normal_moments(
        kwargs.get("mean", 0.0), kwargs.get("std", 1.0), a, b
    )
    assert ours.min() >= a
    assert ours.max() <= b
    # 90000 draws: the sample mean is within 5 standard errors, the std within 2%.
    assert ours.mean() == pytest.approx(expected_mean, abs=5 * expected_std / 300)
    assert ours.std() == pytest.approx(expected_std, rel=0.02)
    assert theirs.std() == pytest.approx(expected_std, rel=0.02)
    assert np.quantile(ours, [0.1, 0.5, 0.9]) == pytest.approx(
        np.quantile(theirs, [0.1, 0.5, 0.9]), abs=0.03 * expected_std / 0.5
    )


@requires_torch
def test_trunc_normal_inverse_error_function_is_accurate():
    points = np.linspace(-0.999999, 0.999999, 101)
    ours = init._erfinv(lucid.tensor(points)).numpy()
    # near ±1 erfinv is ill-conditioned: one ulp of y moves x by ~1e-13 relative
    np.testing.assert_allclose(ours, torch.erfinv(torch.tensor(points)).numpy(), rtol=1e-12)


def test_trunc_normal_warns_when_mean_is_far_from_the_interval():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(lucid.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (5, 3, 2, 2)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    weight = init.orthogonal_(lucid.empty(shape, dtype=lucid.float64), gain=2.0)
    matrix = _values(weight).reshape(shape[0], -1)
    small = min(matrix.shape)
    product = matrix @ matrix.T if matrix.shape[0] == small else matrix.T @ matrix
    np.testing.assert_allclose(product, 4.0 * np.eye(small), atol=1e-12)


def test_orthogonal_errors_and_empty():
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(lucid.empty(4))
    assert init.orthogonal_(lucid.empty(0, 3)).shape == (0, 3)


def test_kaiming_on_zero_element_tensor_warns_and_returns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(lucid.empty(0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.kaiming_normal_(lucid.empty(2, 3))


def test_generator_makes_draws_reproducible():
    first = init.xavier_uniform_(lucid.empty(4, 5), generator=lucid.Generator().manual_seed(3))
    second = init.xavier_uniform_(lucid.empty(4, 5), generator=lucid.Generator().manual_seed(3))
    np.testing.assert_array_equal(_values(first), _values(second))
