"""The selection family beyond the catalogue's generic checks: NaN and tie semantics, index
choices PyTorch fixes, named results, grad_fn names, gradients on infinities, the bins of
searchsorted and the histograms, and PyTorch's errors that a catalogue row cannot state."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

NAN = float("nan")
INF = float("inf")


def _pair(array: np.ndarray) -> tuple[lucid.Tensor, object]:
    return lucid.from_numpy(array.copy()), torch.from_numpy(array.copy())


def _assert_same(actual: object, expected: object) -> None:
    """Same dtype, shape and values (NaN where torch has NaN)."""
    actual_array = actual.detach().numpy()
    expected_array = expected.detach().numpy()
    assert str(actual.dtype).rsplit(".", 1)[-1] == str(expected.dtype).rsplit(".", 1)[-1]
    assert actual_array.shape == expected_array.shape
    np.testing.assert_array_equal(actual_array, expected_array)


def _assert_all_same(actual: tuple, expected: tuple) -> None:
    assert len(actual) == len(expected)
    for one, other in zip(actual, expected, strict=True):
        _assert_same(one, other)


# ------------------------------------------------------------------------- named results
@requires_torch
@pytest.mark.parametrize(
    ("name", "call", "fields"),
    [
        ("kthvalue", lambda lib, x: lib.kthvalue(x, 2, 1), ("values", "indices")),
        ("median", lambda lib, x: lib.median(x, 1), ("values", "indices")),
        ("nanmedian", lambda lib, x: lib.nanmedian(x, 1), ("values", "indices")),
        ("mode", lambda lib, x: lib.mode(x, 1), ("values", "indices")),
        ("cummax", lambda lib, x: lib.cummax(x, 1), ("values", "indices")),
        ("cummin", lambda lib, x: lib.cummin(x, 1), ("values", "indices")),
        ("aminmax", lambda lib, x: lib.aminmax(x, dim=1), ("min", "max")),
        ("histogram", lambda lib, x: lib.histogram(x.reshape(-1), 3), ("hist", "bin_edges")),
    ],
)
def test_results_are_named_as_pytorchs(name: str, call, fields: tuple[str, str]) -> None:
    x, t = _pair(np.array([[3.0, 1.0, 2.0], [0.5, 0.5, -1.0]]))
    result, expected = call(lucid, x), call(torch, t)
    assert type(expected).__name__ == name
    assert result._fields == fields
    assert repr(result).startswith(f"lucid.return_types.{name}(\n{fields[0]}=")
    _assert_all_same(tuple(result), tuple(expected))
    method = getattr(x, name)
    assert type(method).__name__ == "method"


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.kthvalue(x, 2, 0).values,
        lambda lib, x: lib.median(x),
        lambda lib, x: lib.median(x, 0).values,
        lambda lib, x: lib.nanmedian(x),
        lambda lib, x: lib.nanmedian(x, 0).values,
        lambda lib, x: lib.mode(x, 0).values,
        lambda lib, x: lib.msort(x),
        lambda lib, x: lib.cummax(x, 0).values,
        lambda lib, x: lib.cummin(x, 0).values,
        lambda lib, x: lib.logcumsumexp(x, 0),
        lambda lib, x: lib.aminmax(x).min,
        lambda lib, x: lib.nansum(x),
        lambda lib, x: lib.nanmean(x),
        lambda lib, x: lib.var_mean(x)[0],
        lambda lib, x: lib.std_mean(x)[1],
        lambda lib, x: lib.diff(x),
        lambda lib, x: lib.unique(x),
        lambda lib, x: lib.unique(x, dim=0),
        lambda lib, x: lib.unique_consecutive(x),
    ],
)
def test_grad_fn_names_are_pytorchs(call) -> None:
    array = np.array([3.0, 1.0, 2.0, 0.5])
    x, t = _pair(array)
    x.requires_grad_()
    t.requires_grad_()
    assert call(lucid, x).grad_fn.name() == call(torch, t).grad_fn.name()


@requires_torch
def test_unique_backward_is_pytorchs_error() -> None:
    x = lucid.tensor([2.0, 1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for '_unique2' is not implemented"):
        lucid.unique(x).sum().backward()
    t = torch.tensor([2.0, 1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for '_unique2' is not implemented"):
        torch.unique(t).sum().backward()


# ------------------------------------------------------------- order statistics and NaN
@requires_torch
@pytest.mark.parametrize("dim", [0, 1])
def test_median_takes_the_first_nan_and_nanmedian_skips_them(dim: int) -> None:
    array = np.array(
        [[1.0, NAN, 0.0, NAN], [3.0, 3.0, 1.0, 2.0], [NAN, NAN, NAN, NAN], [-INF, 5.0, NAN, 4.0]]
    )
    x, t = _pair(array)
    _assert_all_same(tuple(lucid.median(x, dim)), tuple(torch.median(t, dim)))
    has_numbers = ~np.isnan(array).all(axis=dim)
    result, expected = lucid.nanmedian(x, dim), torch.nanmedian(t, dim)
    _assert_same(result.values, expected.values)
    # where a slice holds numbers, its lower median has one place here; which NaN an all-NaN
    # slice names is PyTorch's partition's choice
    np.testing.assert_array_equal(
        result.indices.numpy()[has_numbers], expected.indices[has_numbers]
    )
    _assert_same(lucid.median(x), torch.median(t))
    _assert_same(lucid.nanmedian(x), torch.nanmedian(t))


@requires_torch
def test_median_of_an_even_count_is_the_lower_one_and_integers_work() -> None:
    for array in (np.array([4, 1, 3, 2]), np.array([[0.5, -1.0], [2.0, 7.0]], np.float32)):
        x, t = _pair(array)
        _assert_same(lucid.median(x), torch.median(t))
        _assert_all_same(tuple(lucid.median(x, 0, True)), tuple(torch.median(t, 0, True)))


@requires_torch
def test_kthvalue_counts_nan_as_the_largest() -> None:
    x, t = _pair(np.array([[3.0, 1.0, NAN, 2.0], [NAN, 0.0, -INF, INF]]))
    for k in range(1, 5):
        _assert_all_same(tuple(lucid.kthvalue(x, k)), tuple(torch.kthvalue(t, k)))


def test_order_statistics_of_a_0d_tensor_are_itself() -> None:
    x = lucid.tensor(2.5)
    for result in (lucid.kthvalue(x, 1), lucid.median(x, 0), lucid.mode(x), lucid.cummax(x, 0)):
        assert result.values.item() == 2.5
        assert result.indices.item() == 0
        assert result.indices.dtype == lucid.int64


@requires_torch
@pytest.mark.parametrize(
    "array",
    [
        np.array([1.0, 2.0, 2.0, 3.0, 3.0, 1.0, 2.0]),
        np.array([3.0, 1.0, 1.0, 3.0]),
        np.array([[5, 5, 2, 2, 7, 9], [0, 1, 0, 1, 1, 0]]),
        np.array([[True, False, True], [False, False, True]]),
        np.array([[INF, -INF, INF, 1e30, -INF, 0.0, -0.0]]),
    ],
)
def test_mode_takes_the_smallest_most_frequent_value_at_its_last_place(
    array: np.ndarray,
) -> None:
    x, t = _pair(array)
    for keepdim in (False, True):
        _assert_all_same(tuple(lucid.mode(x, -1, keepdim)), tuple(torch.mode(t, -1, keepdim)))


def test_mode_gradient_goes_to_the_index_it_returns() -> None:
    x = lucid.tensor([[2.0, 1.0, 2.0, 3.0], [4.0, 4.0, 0.0, 0.0]], requires_grad=True)
    values, indices = lucid.mode(x, 1)
    values.sum().backward()
    expected = np.zeros((2, 4))
    expected[[0, 1], indices.numpy()] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


# ------------------------------------------------------------------------------- unique
@requires_torch
@pytest.mark.parametrize("sorted", [True, False])
def test_unique_sorts_and_keeps_every_nan_apart(sorted: bool) -> None:
    array = np.array([[3.0, NAN, 1.0], [1.0, NAN, -0.0], [0.0, INF, -INF]])
    x, t = _pair(array)
    result = lucid.unique(x, sorted, True, True)
    expected = torch.unique(t, sorted, True, True)
    _assert_all_same(result, expected)


@requires_torch
def test_unique_dim_orders_slices_lexicographically() -> None:
    array = np.array([[1.0, INF, 2.0], [-INF, 0.0, 1.0], [1.0, INF, 2.0], [1.0, -1e30, 5.0]])
    x, t = _pair(array)
    for dim in (0, 1, -1):
        _assert_all_same(
            lucid.unique(x, return_inverse=True, return_counts=True, dim=dim),
            torch.unique(t, return_inverse=True, return_counts=True, dim=dim),
        )
        _assert_all_same(
            lucid.unique_consecutive(x, True, True, dim),
            torch.unique_consecutive(t, True, True, dim),
        )


@requires_torch
@pytest.mark.parametrize(
    "array",
    [np.array(3.0), np.zeros((0, 3)), np.array([2, 2, 1, 1, 2]), np.array([True, True, False])],
    ids=["0d", "empty", "int64", "bool"],
)
def test_unique_and_unique_consecutive_match_pytorch_on_edge_inputs(array: np.ndarray) -> None:
    x, t = _pair(array)
    _assert_all_same(lucid.unique(x, True, True, True), torch.unique(t, True, True, True))
    _assert_all_same(
        lucid.unique_consecutive(x, True, True), torch.unique_consecutive(t, True, True)
    )
    if array.ndim:
        _assert_all_same(
            lucid.unique(x, True, True, True, dim=0), torch.unique(t, True, True, True, dim=0)
        )


@requires_torch
def test_unique_consecutive_keeps_nan_runs_apart() -> None:
    x, t = _pair(np.array([1.0, 1.0, NAN, NAN, 2.0, 1.0]))
    _assert_all_same(
        lucid.unique_consecutive(x, True, True), torch.unique_consecutive(t, True, True)
    )


# -------------------------------------------------------------------- running extremes
@requires_torch
@pytest.mark.parametrize(
    "array",
    [
        np.array([[1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN], [0.0, -0.0, INF, INF, -INF, 1.0, 2.0]]),
        np.random.default_rng(0).integers(-2, 3, (4, 9)),
        np.array([[True, False, True, False]]),
    ],
    ids=["nan_and_ties", "int64", "bool"],
)
def test_cummax_and_cummin_take_the_latest_tie_and_stay_nan(array: np.ndarray) -> None:
    x, t = _pair(array)
    for dim in range(-array.ndim, array.ndim):
        _assert_all_same(tuple(lucid.cummax(x, dim)), tuple(torch.cummax(t, dim)))
        _assert_all_same(tuple(lucid.cummin(x, dim)), tuple(torch.cummin(t, dim)))


@requires_torch
def test_cummax_gradient_adds_up_at_the_entry_it_copies() -> None:
    array = np.array([[1.0, 3.0, 3.0, 2.0, NAN, 5.0], [2.0, 1.0, 0.0, 4.0, 4.0, -1.0]])
    grad = np.arange(12.0).reshape(2, 6)
    x, t = _pair(array)
    x.requires_grad_()
    t.requires_grad_()
    lucid.cummax(x, 1).values.backward(lucid.from_numpy(grad))
    torch.cummax(t, 1).values.backward(torch.from_numpy(grad))
    _assert_same(x.grad, t.grad)


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logcumsumexp_is_stable_on_infinities_forward_and_backward(dtype: type) -> None:
    array = np.array(
        [[INF, INF, -INF, 1.0], [-INF, -INF, 1.0, 2.0], [800.0, 1.0, 800.0, -800.0]], dtype
    )
    x, t = _pair(array)
    x.requires_grad_()
    t.requires_grad_()
    result, expected = lucid.logcumsumexp(x, 1), torch.logcumsumexp(t, 1)
    _assert_same(result, expected)
    grad = np.array([[1.0, -2.0, 0.5, 0.0], [0.25, 1.0, -1.0, 2.0], [1.0, 1.0, -3.0, 1.0]], dtype)
    result.backward(lucid.from_numpy(grad))
    expected.backward(torch.from_numpy(grad))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, equal_nan=True)


# ------------------------------------------------------------------------------ quantile
@requires_torch
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("function", ["quantile", "nanquantile"])
def test_quantile_matches_pytorch_on_nan_inf_and_ties(interpolation: str, function: str) -> None:
    array = np.array(
        [
            [0.0, 1.0, 2.0, 3.0, 4.0],
            [1.0, NAN, 3.0, -1.0, 2.0],
            [NAN, NAN, NAN, NAN, NAN],
            [INF, 1.0, INF, -INF, 2.0],
            [2.0, 2.0, 2.0, 5.0, 5.0],
        ]
    )
    x, t = _pair(array)
    q = np.array([0.0, 0.125, 0.25, 0.5, 0.625, 0.9, 1.0])
    for dim, keepdim in ((1, False), (0, True), (None, False), (None, True)):
        result = getattr(lucid, function)(
            x, lucid.from_numpy(q), dim, keepdim, interpolation=interpolation
        )
        expected = getattr(torch, function)(
            t, torch.from_numpy(q), dim, keepdim, interpolation=interpolation
        )
        _assert_same(result, expected)
        scalar = getattr(lucid, function)(x, 0.375, dim, keepdim, interpolation=interpolation)
        _assert_same(
            scalar, getattr(torch, function)(t, 0.375, dim, keepdim, interpolation=interpolation)
        )


@requires_torch
def test_quantile_of_a_0d_tensor_keeps_its_shape() -> None:
    x, t = _pair(np.array(2.0))
    _assert_same(lucid.quantile(x, 0.5), torch.quantile(t, 0.5))
    _assert_same(lucid.quantile(x, 0.5, 0, True), torch.quantile(t, 0.5, 0, True))
    q = np.array([0.2, 0.8])
    _assert_same(
        lucid.quantile(x, lucid.from_numpy(q), 0, True),
        torch.quantile(t, torch.from_numpy(q), 0, True),
    )


@requires_torch
def test_quantile_gradient_matches_pytorch_with_ties() -> None:
    array = np.array([[1.0, 3.0, 3.0, 2.0, 0.5], [2.0, 2.0, 2.0, -1.0, 4.0]])
    x, t = _pair(array)
    x.requires_grad_()
    t.requires_grad_()
    q = np.array([0.1, 0.5, 0.7])
    lucid.quantile(x, lucid.from_numpy(q), 1).sum().backward()
    torch.quantile(t, torch.from_numpy(q), 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@requires_torch
@pytest.mark.parametrize(
    ("q", "kwargs", "message"),
    [
        (np.array([0.5, 1.5]), {}, r"quantile\(\) q values must be in the range \[0, 1\]"),
        (np.array([0.5], np.float32), {}, "q tensor must be same dtype as the input tensor"),
        (0.5, {"dim": 2}, r"Dimension out of range \(expected to be in range of \[-2, 1\]"),
    ],
)
def test_quantile_errors_are_pytorchs(q: object, kwargs: dict, message: str) -> None:
    x, t = _pair(np.ones((2, 3)))
    for library, tensor in ((lucid, x), (torch, t)):
        argument = library.from_numpy(q) if isinstance(q, np.ndarray) else q
        with pytest.raises((RuntimeError, IndexError), match=message):
            library.quantile(tensor, argument, **kwargs)


# -------------------------------------------------------------- searchsorted / bucketize
@requires_torch
@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize(
    "sequence",
    [
        np.array([-INF, 1.0, 2.0, 2.0, 3.0, INF]),
        np.array([1.0, 2.0, NAN, NAN]),
        np.array([NAN, 1.0, 2.0]),
        np.array([[1.0, 2.0, 2.0, 5.0], [NAN, 0.0, 1.0, 1.0], [-1.0, 0.0, 0.0, 0.0]]),
    ],
    ids=["infinities", "nan_last", "nan_first", "batched"],
)
def test_searchsorted_bisects_as_pytorch_with_nan(sequence: np.ndarray, right: bool) -> None:
    values = np.array([NAN, -INF, 0.0, 1.0, 2.0, 2.5, INF, -1.0])
    if sequence.ndim == 2:
        values = np.resize(values, (sequence.shape[0], 8))
    (s, v), (ts, tv) = zip(_pair(sequence), _pair(values), strict=True)
    _assert_same(lucid.searchsorted(s, v, right=right), torch.searchsorted(ts, tv, right=right))
    side = "right" if right else "left"
    _assert_same(
        lucid.searchsorted(s, v, side=side, out_int32=True),
        torch.searchsorted(ts, tv, side=side, out_int32=True),
    )


@requires_torch
def test_searchsorted_with_sorter_scalars_and_mixed_dtypes() -> None:
    unsorted = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, -1.0, 5.0, 4.0]])
    sorter = np.argsort(unsorted, axis=1, kind="stable")
    values = np.array([[2.0, 0.5], [4.5, -3.0]])
    (s, o, v), (ts, to, tv) = zip(_pair(unsorted), _pair(sorter), _pair(values), strict=True)
    _assert_same(lucid.searchsorted(s, v, sorter=o), torch.searchsorted(ts, tv, sorter=to))
    (b,), (tb,) = zip(_pair(np.array([1.0, 2.0, 3.0])), strict=True)
    _assert_same(lucid.searchsorted(b, 2.5), torch.searchsorted(tb, 2.5))
    _assert_same(lucid.searchsorted(b, lucid.tensor(2)), torch.searchsorted(tb, torch.tensor(2)))
    (i,), (ti,) = zip(_pair(np.array([1, 2, 3])), strict=True)
    _assert_same(
        lucid.searchsorted(i, lucid.tensor([1.5, 3.0])),
        torch.searchsorted(ti, torch.tensor([1.5, 3.0], dtype=torch.float64)),
    )
    _assert_same(lucid.bucketize(2.0, b), torch.bucketize(2.0, tb))
    _assert_same(lucid.bucketize(2.0, b, right=True), torch.bucketize(2.0, tb, right=True))


@requires_torch
@pytest.mark.parametrize(
    ("sorter", "message"),
    [
        (np.array([0.0, 1.0]), "sorter must be a tensor of long dtype but got dtype Double"),
        (np.array([0]), r"boundary and sorter must have the same size, but got boundary tensor "
         r"\[2\]and got sorter tensor \[1\]"),
        (np.array([0, 2]), "sorter index out of range"),
    ],
)  # fmt: skip
def test_searchsorted_sorter_errors_are_pytorchs(sorter: np.ndarray, message: str) -> None:
    for library in (lucid, torch):
        sequence = library.tensor([1.0, 2.0], dtype=library.float64)
        with pytest.raises(RuntimeError, match=message):
            library.searchsorted(sequence, sequence, sorter=library.from_numpy(sorter.copy()))


# ------------------------------------------------------------------------------ histograms
@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histc_counts_edges_like_pytorch(dtype: type) -> None:
    rng = np.random.default_rng(5)
    cases = [
        (np.arange(-3.0, 4.0, 0.25), 12, -2.0, 3.0),  # values on the edges
        (np.array([1.0, 1.0, 1.0]), 4, 0, 0),  # one value: its range widened by 1
        (np.array([0.1, NAN, 2.0, 7.0, -5.0]), 3, 0.0, 6.0),  # NaN and outside values skipped
        (rng.standard_normal(1000), 100, 0, 0),  # the data's range
        (np.zeros(0), 5, 0, 0),
    ]
    for values, bins, low, high in cases:
        x, t = _pair(values.astype(dtype))
        _assert_same(lucid.histc(x, bins, low, high), torch.histc(t, bins, low, high))
        _assert_same(x.histc(bins, low, high), t.histc(bins, low, high))


@requires_torch
def test_histogram_matches_pytorch_with_edges_weights_and_density() -> None:
    rng = np.random.default_rng(6)
    values = rng.uniform(-2.0, 2.0, (4, 25))
    weight = rng.uniform(0.0, 1.0, (4, 25))
    edges = np.array([-2.0, -0.5, 0.0, 0.25, 3.0])
    (x, w, e), (tx, tw, te) = zip(_pair(values), _pair(weight), _pair(edges), strict=True)
    for bins, torch_bins in ((e, te), (7, 7)):
        for kwargs in ({}, {"density": True}):
            _assert_all_same(
                tuple(lucid.histogram(x, bins, weight=w, **kwargs)),
                tuple(torch.histogram(tx, torch_bins, weight=tw, **kwargs)),
            )
    _assert_all_same(
        tuple(lucid.histogram(x, 5, range=(-1.0, 1.0))),
        tuple(torch.histogram(tx, 5, range=(-1.0, 1.0))),
    )
    for array in (np.zeros(0), np.array([2.0])):
        (y,), (ty,) = zip(_pair(array), strict=True)
        _assert_all_same(tuple(lucid.histogram(y, 3)), tuple(torch.histogram(ty, 3)))


@requires_torch
def test_bincount_result_dtypes_are_pytorchs() -> None:
    counts = np.array([1, 1, 3, 0])
    for weights in (None, np.array([0.5, 1.5, 2.0, 1.0], np.float32), np.array([1, 2, 3, 4])):
        (c,), (tc,) = zip(_pair(counts), strict=True)
        w = None if weights is None else lucid.from_numpy(weights.copy())
        tw = None if weights is None else torch.from_numpy(weights.copy())
        _assert_same(lucid.bincount(c, w, 6), torch.bincount(tc, tw, 6))
    empty, torch_empty = _pair(np.zeros(0, np.int64))
    _assert_same(lucid.bincount(empty), torch.bincount(torch_empty))


# -------------------------------------------------------------- diff, aminmax, nan reductions
@requires_torch
def test_diff_of_bools_is_xor_and_a_high_order_empties_the_dim() -> None:
    x, t = _pair(np.array([[True, False, False, True]]))
    for n in (0, 1, 2, 5):
        _assert_same(lucid.diff(x, n), torch.diff(t, n))
    y, ty = _pair(np.array([1, 4, 9, 16]))
    _assert_same(lucid.diff(y, 2, 0, y[:1], y[1:]), torch.diff(ty, 2, 0, ty[:1], ty[1:]))


@requires_torch
def test_aminmax_keepdim_and_0d() -> None:
    x, t = _pair(np.array([[1.0, NAN], [0.0, -INF]]))
    _assert_all_same(tuple(lucid.aminmax(x, keepdim=True)), tuple(torch.aminmax(t, keepdim=True)))
    _assert_all_same(tuple(lucid.aminmax(x, dim=0)), tuple(torch.aminmax(t, dim=0)))
    y, ty = _pair(np.array(3.0))
    _assert_all_same(
        tuple(lucid.aminmax(y, dim=0, keepdim=True)), tuple(torch.aminmax(ty, dim=0, keepdim=True))
    )


@requires_torch
def test_nansum_and_nanmean_of_nan_slices_and_integers() -> None:
    x, t = _pair(np.array([[NAN, NAN], [1.0, NAN], [2.0, 4.0]]))
    _assert_same(lucid.nansum(x, 1), torch.nansum(t, 1))
    _assert_same(lucid.nanmean(x, 1), torch.nanmean(t, 1))
    _assert_same(lucid.nanmean(x, keepdim=True), torch.nanmean(t, keepdim=True))
    for array in (np.array([1, 2, 3], np.int32), np.array([True, True, False])):
        y, ty = _pair(array)
        _assert_same(lucid.nansum(y), torch.nansum(ty))
        _assert_same(lucid.nansum(y, dtype=lucid.float32), torch.nansum(ty, dtype=torch.float32))


@requires_torch
@pytest.mark.parametrize("function", ["var_mean", "std_mean"])
@pytest.mark.parametrize("used", [0, 1])
def test_an_unused_moment_does_not_spoil_the_other_gradient(function: str, used: int) -> None:
    array = np.array([[1.0, INF, 2.0], [0.5, -1.0, 3.0]])
    x, t = _pair(array)
    x.requires_grad_()
    t.requires_grad_()
    getattr(lucid, function)(x, 1)[used].sum().backward()
    getattr(torch, function)(t, 1)[used].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, equal_nan=True)


@requires_torch
def test_var_mean_and_std_mean_take_pytorchs_argument_forms() -> None:
    rng = np.random.default_rng(7)
    x, t = _pair(rng.standard_normal((3, 4)))
    for args, kwargs in (
        ((), {}),
        ((False,), {}),
        ((1, True, True), {}),
        (((0, 1),), {"correction": 0, "keepdim": True}),
        ((0,), {"unbiased": False}),
    ):
        for function in ("var_mean", "std_mean"):
            result = getattr(lucid, function)(x, *args, **kwargs)
            expected = getattr(torch, function)(t, *args, **kwargs)
            assert isinstance(result, tuple) and len(result) == 2
            for one, other in zip(result, expected, strict=True):
                np.testing.assert_allclose(one.numpy(), other.numpy(), rtol=1e-12)


@requires_torch
def test_quantile_and_histogram_refuse_half_as_pytorch_does() -> None:
    for library in (lucid, torch):
        x = library.tensor([1.0, 2.0, 3.0], dtype=library.float16)
        with pytest.raises(RuntimeError, match="input tensor must be either float or double"):
            library.quantile(x, 0.5)
        with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Half'"):
            library.histogram(x, 3)
