"""The random fills exponential_, geometric_, log_normal_, cauchy_, random_, bernoulli_,
poisson and binomial: their distributions (seeded, with bounds of several standard errors, so
a correct sampler cannot fail them and a wrong parameterisation cannot pass), the generator
they draw from, and PyTorch's errors for bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

SAMPLES = 200_000


def _draw(fill: str, *args, dtype=lucid.float64, seed: int = 17, **kwargs) -> np.ndarray:
    generator = lucid.Generator().manual_seed(seed)
    tensor = lucid.zeros(SAMPLES, dtype=dtype)
    result = getattr(tensor, fill)(*args, generator=generator, **kwargs)
    assert result is tensor
    return tensor.numpy().astype(np.float64)


def _assert_mean(draws: np.ndarray, mean: float, std: float) -> None:
    """The sample mean within six standard errors of the true mean."""
    bound = 6.0 * std / math.sqrt(draws.size)
    assert abs(draws.mean() - mean) < bound, (draws.mean(), mean, bound)


def test_exponential_has_mean_and_spread_of_its_rate():
    draws = _draw("exponential_", 2.5)
    assert draws.min() > 0
    _assert_mean(draws, 1 / 2.5, 1 / 2.5)
    # P(X > t) = exp(-rate t)
    tail = np.mean(draws > 1.0)
    assert abs(tail - math.exp(-2.5)) < 6 * math.sqrt(math.exp(-2.5) / SAMPLES)


def test_geometric_counts_trials_from_one():
    p = 0.3
    draws = _draw("geometric_", p)
    assert draws.min() == 1 and np.all(draws == np.round(draws))
    _assert_mean(draws, 1 / p, math.sqrt(1 - p) / p)
    assert abs(np.mean(draws == 1) - p) < 6 * math.sqrt(p * (1 - p) / SAMPLES)


def test_geometric_fills_integer_tensors():
    draws = _draw("geometric_", 0.5, dtype=lucid.int64)
    _assert_mean(draws, 2.0, math.sqrt(2.0))


def test_log_normal_is_exp_of_a_normal():
    logs = np.log(_draw("log_normal_", 0.5, 0.25))
    _assert_mean(logs, 0.5, 0.25)
    assert abs(logs.std() - 0.25) < 0.01


def test_cauchy_has_its_median_and_quartiles():
    draws = _draw("cauchy_", 1.0, 2.0)
    # quartiles of Cauchy(median, sigma) are median -+ sigma
    quartiles = np.quantile(draws, [0.25, 0.5, 0.75])
    np.testing.assert_allclose(quartiles, [-1.0, 1.0, 3.0], atol=0.05)


def test_random_from_to_covers_the_range_uniformly():
    draws = _draw("random_", -3, 5)
    values, counts = np.unique(draws, return_counts=True)
    np.testing.assert_array_equal(values, np.arange(-3, 5))
    expected = SAMPLES / 8
    assert np.all(np.abs(counts - expected) < 6 * math.sqrt(expected))


def test_random_to_alone_starts_at_zero():
    values = np.unique(_draw("random_", 3))
    np.testing.assert_array_equal(values, [0, 1, 2])


@pytest.mark.parametrize(
    "dtype, high",
    [
        (lucid.float32, 2**24),
        (lucid.float64, 2**53),
        (lucid.uint8, 255),
        (lucid.int8, 127),
        (lucid.int64, 2**63 - 1),
        (lucid.bool, 1),
    ],
)
def test_random_without_bounds_uses_the_dtypes_exact_integer_range(dtype, high):
    tensor = lucid.zeros(20_000, dtype=dtype).random_(generator=lucid.Generator().manual_seed(3))
    values = tensor.numpy()
    assert values.min() >= 0 and values.max() <= high
    # the top of the range is reached (up to a sampling margin)
    assert float(values.max()) > 0.99 * high


def test_bernoulli_with_a_probability_tensor_follows_each_probability():
    probabilities = lucid.tensor([0.0, 0.2, 0.9, 1.0], dtype=lucid.float64)
    generator = lucid.Generator().manual_seed(5)
    draws = lucid.zeros(SAMPLES // 4, 4).bernoulli_(probabilities, generator=generator).numpy()
    means = draws.mean(0)
    assert means[0] == 0 and means[3] == 1
    np.testing.assert_allclose(means[1:3], [0.2, 0.9], atol=6 * math.sqrt(0.25 / (SAMPLES // 4)))


def test_bernoulli_fills_integer_and_bool_tensors():
    assert set(np.unique(_draw("bernoulli_", 0.5, dtype=lucid.int64))) == {0.0, 1.0}
    assert lucid.zeros(4, dtype=lucid.bool).bernoulli_(1.0).all()


def test_poisson_has_mean_and_variance_of_its_rate():
    rates = lucid.full((SAMPLES,), 4.0, dtype=lucid.float64)
    draws = lucid.poisson(rates, generator=lucid.Generator().manual_seed(9)).numpy()
    _assert_mean(draws, 4.0, 2.0)
    assert abs(draws.var() - 4.0) < 0.1


def test_poisson_of_zero_rate_is_zero_and_its_gradient_is_zero():
    rates = lucid.tensor([0.0, 2.0, 5.0], requires_grad=True)
    sample = lucid.poisson(rates)
    assert sample[0].item() == 0.0
    assert sample.grad_fn.name() == "PoissonBackward0"
    sample.sum().backward()
    np.testing.assert_array_equal(rates.grad.numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("count, prob", [(10.0, 0.3), (1000.0, 0.02), (50.0, 0.9)])
def test_binomial_has_the_mean_and_variance_of_its_count_and_prob(count, prob):
    counts = lucid.full((SAMPLES,), count, dtype=lucid.float64)
    probs = lucid.tensor(prob, dtype=lucid.float64)
    draws = lucid.binomial(counts, probs, generator=lucid.Generator().manual_seed(4)).numpy()
    variance = count * prob * (1.0 - prob)
    _assert_mean(draws, count * prob, math.sqrt(variance))
    assert abs(draws.var() - variance) < 0.05 * variance
    assert np.all(draws == np.round(draws)) and draws.min() >= 0 and draws.max() <= count


def test_binomial_follows_the_generator_and_keeps_the_count_dtype():
    counts, probs = lucid.full((64,), 20.0), lucid.full((64,), 0.4)
    first = lucid.binomial(counts, probs, generator=lucid.Generator().manual_seed(8))
    second = lucid.binomial(counts, probs, generator=lucid.Generator().manual_seed(8))
    assert first.dtype == lucid.float32
    np.testing.assert_array_equal(first.numpy(), second.numpy())


@requires_torch
def test_binomial_edge_cases_are_pytorchs():
    # no trials or no chance: 0; certain success: the count itself (even fractional or inf)
    count = [0.0, 3.0, 3.0, 3.0, 1.5, 2.5, math.inf, math.inf, -2.0]
    prob = [math.nan, -0.0, math.nan, 1.0, 2.0, 1.0, 0.0, 1.0, 0.5]
    expected = torch.binomial(torch.tensor(count), torch.tensor(prob))
    actual = lucid.binomial(lucid.tensor(count), lucid.tensor(prob))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    shape = lucid.binomial(lucid.ones(3, 1), lucid.full((4,), 0.5)).shape
    assert shape == torch.binomial(torch.ones(3, 1), torch.full((4,), 0.5)).shape


def test_binomial_of_a_huge_count_stays_near_its_mean():
    # beyond NumPy's integer sampler the draw is the normal limit, rounded
    draws = lucid.binomial(
        lucid.full((1000,), 1e30, dtype=lucid.float64),
        lucid.full((1000,), 0.5, dtype=lucid.float64),
        generator=lucid.Generator().manual_seed(1),
    ).numpy()
    assert np.all(np.abs(draws - 5e29) < 6.0 * math.sqrt(2.5e29))
    assert draws.std() > 0


def test_binomial_backward_raises_pytorchs_error():
    counts = lucid.tensor([5.0, 7.0], requires_grad=True)
    draws = lucid.binomial(counts, lucid.tensor([0.5, 0.5]))
    assert draws.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        draws.sum().backward()


def test_same_seed_same_draws_and_the_default_generator_is_seeded_by_manual_seed():
    np.testing.assert_array_equal(_draw("cauchy_", seed=1), _draw("cauchy_", seed=1))
    assert not np.array_equal(_draw("cauchy_", seed=1), _draw("cauchy_", seed=2))
    lucid.manual_seed(11)
    first = lucid.zeros(8).exponential_()
    lucid.manual_seed(11)
    np.testing.assert_array_equal(first.numpy(), lucid.zeros(8).exponential_().numpy())


def test_random_fills_bump_the_version_and_cut_the_gradient():
    x = lucid.ones(3, requires_grad=True)
    y = x * 2.0
    version = y._version
    y.exponential_()
    assert y._version == version + 1
    assert y.grad_fn.name() == "ExponentialBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


BAD_CALLS = [
    ("exponential_", lambda t: t.zeros(3).exponential_(0)),
    ("exponential_", lambda t: t.zeros(3).exponential_(-1.5)),
    ("exponential_", lambda t: t.zeros(3, dtype=t.int64).exponential_()),
    ("geometric_", lambda t: t.zeros(3).geometric_(0)),
    ("geometric_", lambda t: t.zeros(3).geometric_(1.0)),
    ("geometric_", lambda t: t.zeros(3, dtype=t.bool).geometric_(0.5)),
    ("log_normal_", lambda t: t.zeros(3).log_normal_(1.0, 0.0)),
    ("log_normal_", lambda t: t.zeros(3, dtype=t.int64).log_normal_()),
    ("cauchy_", lambda t: t.zeros(3).cauchy_(0.0, 0.0)),
    ("cauchy_", lambda t: t.zeros(3, dtype=t.int64).cauchy_()),
    ("random_", lambda t: t.zeros(3).random_(5, 3)),
    ("random_", lambda t: t.zeros(3).random_(-1)),
    ("random_", lambda t: t.zeros(3, dtype=t.uint8).random_(0, 300)),
    ("random_", lambda t: t.zeros(3, dtype=t.int8).random_(-200, 3)),
    ("random_", lambda t: t.zeros(3).random_(0.5, 3)),
    ("bernoulli_", lambda t: t.zeros(3).bernoulli_(2)),
    ("bernoulli_", lambda t: t.zeros(3).bernoulli_(-0.5)),
    ("bernoulli_", lambda t: t.zeros(3).bernoulli_(t.full((3,), 2.0))),
    ("bernoulli", lambda t: t.bernoulli(t.ones(3, dtype=t.int64))),
    ("bernoulli", lambda t: t.bernoulli(t.full((3,), 2.0))),
    ("bernoulli", lambda t: t.bernoulli(t.ones(3), 2.0)),
    ("bernoulli", lambda t: t.ones(3, dtype=t.bool).bernoulli()),
    ("poisson", lambda t: t.poisson(t.full((3,), -1.0))),
    ("poisson", lambda t: t.poisson(t.ones(3, dtype=t.int64))),
    ("binomial", lambda t: t.binomial(t.ones(3, dtype=t.int64), t.ones(3))),
    ("binomial", lambda t: t.binomial(t.ones(3), t.ones(3, dtype=t.bool))),
    ("binomial", lambda t: t.binomial(t.ones(3), t.ones(3, dtype=t.float64))),
    ("binomial", lambda t: t.binomial(t.ones(3, dtype=t.float16), t.ones(3, dtype=t.float16))),
    ("binomial", lambda t: t.binomial(t.ones(3), 0.5)),
    ("binomial", lambda t: t.binomial(3.0, t.ones(3))),
    ("binomial", lambda t: t.binomial(t.ones(3), t.ones(3), generator=3)),
    ("binomial", lambda t: t.binomial(t.ones(2), t.ones(3))),
]


@requires_torch
@pytest.mark.parametrize(
    "name, call", BAD_CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD_CALLS)]
)
def test_bad_arguments_raise_pytorchs_error(name, call):
    with pytest.raises(Exception) as expected:  # noqa: PT011  (torch's type is the spec)
        call(torch)
    with pytest.raises(Exception) as actual:  # noqa: PT011
        call(lucid)
    assert type(actual.value).__name__ == type(expected.value).__name__
    expected_message = str(expected.value).replace("torch", "lucid")
    assert str(actual.value).split("\n")[0] == expected_message.split("\n")[0]


def test_multinomial_with_replacement_follows_each_rows_weights():
    weights = lucid.tensor([[1.0, 0.0, 6.0, 3.0], [0.0, 0.0, 0.0, 2.0]], dtype=lucid.float64)
    generator = lucid.Generator().manual_seed(21)
    draws = lucid.multinomial(weights, SAMPLES // 2, replacement=True, generator=generator)
    assert draws.dtype == lucid.int64 and draws.shape == (2, SAMPLES // 2)
    frequencies = [np.bincount(row, minlength=4) / row.size for row in draws.numpy()]
    bound = 6 * math.sqrt(0.25 / (SAMPLES // 2))
    np.testing.assert_allclose(frequencies[0], [0.1, 0.0, 0.6, 0.3], atol=bound)
    np.testing.assert_array_equal(frequencies[1], [0.0, 0.0, 0.0, 1.0])


def test_multinomial_without_replacement_draws_distinct_categories_in_race_order():
    weights = lucid.tensor([[1.0, 0.0, 6.0, 3.0]] * 40_000, dtype=lucid.float64)
    draws = lucid.multinomial(weights, 2, generator=lucid.Generator().manual_seed(2)).numpy()
    assert np.all(draws[:, 0] != draws[:, 1]) and not np.any(draws == 1)
    # P(second = 0) = sum over first j != 0 of p_j * p_0 / (1 - p_j)
    second_is_zero = 0.6 * 0.1 / 0.4 + 0.3 * 0.1 / 0.7
    bound = 6 * math.sqrt(0.25 / draws.shape[0])
    assert abs(np.mean(draws[:, 1] == 0) - second_is_zero) < bound
    assert abs(np.mean(draws[:, 0] == 2) - 0.6) < bound


MULTINOMIAL_ERRORS = [
    lambda t: t.multinomial(t.tensor([1.0, 1.0]), 3),
    lambda t: t.multinomial(t.tensor(1.0), 1),
    lambda t: t.multinomial(t.ones(2, 2, 2), 1),
    lambda t: t.multinomial(t.tensor([1.0, float("inf")]), 1),
    lambda t: t.multinomial(t.tensor([1.0, -1.0]), 1),
    lambda t: t.multinomial(t.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    lambda t: t.multinomial(t.tensor([1, 1]), 1),
    lambda t: t.multinomial(t.tensor([1.0, 1.0]), 0),
    lambda t: t.multinomial(t.tensor([1.0, 1.0]), 1.5),
    lambda t: t.tensor([1.0, 1.0]).multinomial(3),
]


@requires_torch
@pytest.mark.parametrize("call", MULTINOMIAL_ERRORS)
def test_multinomial_refuses_what_pytorch_refuses(call):
    test_bad_arguments_raise_pytorchs_error("multinomial", call)
