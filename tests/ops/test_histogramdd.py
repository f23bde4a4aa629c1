"""histogramdd against PyTorch: bins as one count, counts per dim or edges per dim, range,
weight and density, the (hist, bin_edges) result, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

_RNG = np.random.default_rng(0)
_POINTS = _RNG.standard_normal((50, 3)).astype(np.float32)
_WEIGHTS = _RNG.random(50).astype(np.float32)


def _edges(*rows: list[float], dtype: type = np.float32) -> list[np.ndarray]:
    return [np.array(row, dtype) for row in rows]


CASES = [
    ("one_count", _POINTS, (4,), {}),
    ("counts_per_dim", _POINTS, ([2, 3, 4],), {}),
    ("range", _POINTS, ([2, 3, 4],), {"range": [-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]}),
    ("weight", _POINTS, (3,), {"weight": _WEIGHTS}),
    ("density", _POINTS, (3,), {"density": True}),
    ("weighted_density", _POINTS, ([2, 2, 5],), {"weight": _WEIGHTS, "density": True}),
    (
        "edges_batched_float64",
        _POINTS.astype(np.float64).reshape(5, 10, 3),
        (_edges([-1, 0, 1], [-3, 0, 3], [0, 0.5, 1, 4], dtype=np.float64),),
        {},
    ),
    ("decreasing_edges", _POINTS, (_edges([1, 0], [0, 1], [0, 1]),), {}),
    ("empty_input", np.zeros((0, 2), np.float32), (2,), {}),
    ("constant_input", np.zeros((3, 2), np.float32), ([2, 3],), {"density": True}),
    (
        "nan_outside_range",
        np.array([[np.nan, 0.5], [0.2, 0.5]], np.float32),
        (2,),
        {"range": [0.0, 1.0, 0.0, 1.0]},
    ),  # fmt: skip
]


def _convert(library, value):
    if isinstance(value, np.ndarray):
        return library.from_numpy(value.copy())
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return [library.from_numpy(item.copy()) for item in value]
    return value


def _call(library, points, args, kwargs):
    return library.histogramdd(
        library.from_numpy(points.copy()),
        *[_convert(library, value) for value in args],
        **{name: _convert(library, value) for name, value in kwargs.items()},
    )


@requires_torch
@pytest.mark.parametrize("name, points, args, kwargs", CASES, ids=[case[0] for case in CASES])
def test_histogramdd_matches_pytorch(name, points, args, kwargs):
    actual = _call(lucid, points, args, kwargs)
    expected = _call(torch, points, args, kwargs)
    hist = actual.hist.numpy()
    assert str(actual.hist.dtype).split(".")[-1] == str(expected.hist.dtype).split(".")[-1]
    np.testing.assert_allclose(hist, expected.hist.numpy(), rtol=1e-6, atol=0, equal_nan=True)
    assert isinstance(actual.bin_edges, tuple)
    assert len(actual.bin_edges) == len(expected.bin_edges)
    for mine, theirs in zip(actual.bin_edges, expected.bin_edges, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_histogramdd_counts_every_point_in_range_once():
    hist, _ = lucid.histogramdd(lucid.from_numpy(_POINTS), [3, 4, 5])
    assert hist.shape == (3, 4, 5) and hist.sum().item() == len(_POINTS)


BAD_CALLS = [
    lambda t, x: t.histogramdd(x, bins=[2, 2, 2]),
    lambda t, x: t.histogramdd(x, bins=[0, 2]),
    lambda t, x: t.histogramdd(x, bins=2, range=[0.0, 1.0]),
    lambda t, x: t.histogramdd(x, bins=2, range=[1.0, 0.0, 0.0, 1.0]),
    lambda t, x: t.histogramdd(x.long(), bins=2),
    lambda t, x: t.histogramdd(x.half(), bins=2),
    lambda t, x: t.histogramdd(x[0], bins=2),
    lambda t, x: t.histogramdd(x, bins=[t.tensor([0.0, 1.0])]),
    lambda t, x: t.histogramdd(x, bins=2, weight=t.ones(3)),
    lambda t, x: t.histogramdd(x, bins=2, weight=t.ones(4).double()),
    lambda t, x: t.histogramdd(x, bins=[t.tensor([0.0, 1.0]).double(), t.tensor([0.0, 1.0])]),
    lambda t, x: t.histogramdd(x, bins=[t.tensor([[0.0, 1.0]]), t.tensor([0.0, 1.0])]),
    lambda t, x: t.histogramdd(t.tensor([[float("nan"), 1.0]]), bins=2),
    lambda t, x: t.histogramdd(x, bins=2, range=[0.0, float("inf"), 0.0, 1.0]),
    lambda t, x: t.histogramdd(x, 2.5),
]


@requires_torch
@pytest.mark.parametrize("call", BAD_CALLS)
def test_histogramdd_refuses_what_pytorch_refuses(call):
    points = [[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]]
    with pytest.raises(Exception) as expected:  # noqa: PT011  (torch's type is the spec)
        call(torch, torch.tensor(points))
    with pytest.raises(type(expected.value)) as actual:
        call(lucid, lucid.tensor(points))
    assert str(actual.value) == str(expected.value).replace("torch", "lucid")
