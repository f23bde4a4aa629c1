"""sort, argsort and topk: NaN order, ties, dtypes, 0-d and empty inputs, named results,
gradients and PyTorch's errors (the catalogue rows cover the generic checks)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

NAN = float("nan")
INF = float("inf")


def _lucid_and_torch(array: np.ndarray) -> tuple[lucid.Tensor, object]:
    return lucid.from_numpy(array.copy()), torch.from_numpy(array.copy())


def _assert_equal(actual: lucid.Tensor, expected: object) -> None:
    assert actual.dtype == getattr(lucid, str(expected.dtype).rsplit(".", 1)[-1])
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_sort_puts_nan_last_and_keeps_ties_in_order() -> None:
    x = lucid.tensor([3.0, 1.0, NAN, 1.0, 3.0, NAN, 2.0])
    values, indices = lucid.sort(x)
    np.testing.assert_array_equal(values.numpy(), [1.0, 1.0, 2.0, 3.0, 3.0, NAN, NAN])
    assert indices.tolist() == [1, 3, 6, 0, 4, 2, 5]
    result = x.sort(descending=True)
    np.testing.assert_array_equal(result.values.numpy(), [NAN, NAN, 3.0, 3.0, 2.0, 1.0, 1.0])
    assert result.indices.tolist() == [2, 5, 0, 4, 6, 1, 3]
    assert x.argsort(descending=True).tolist() == [2, 5, 0, 4, 6, 1, 3]


@requires_torch
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize(
    "array",
    [
        np.array([[3.0, NAN, -INF, 0.0, -0.0, INF, NAN, 3.0]] * 2),
        np.random.default_rng(0).integers(0, 3, (3, 300)).astype(np.float32),
        np.random.default_rng(1).integers(-5, 5, (4, 6)),
        np.random.default_rng(2).integers(0, 256, (5, 7)).astype(np.uint8),
        np.random.default_rng(3).integers(0, 2, (3, 9)).astype(bool),
        np.array([[1.5, 1.5], [0.5, 1.5]], np.float16),
    ],
    ids=["extremes", "ties", "int64", "uint8", "bool", "float16"],
)
def test_stable_sort_matches_torch(array: np.ndarray, descending: bool) -> None:
    x, t = _lucid_and_torch(array)
    for dim in range(-array.ndim, array.ndim):
        expected = torch.sort(t, dim=dim, descending=descending, stable=True)
        values, indices = lucid.sort(x, dim=dim, descending=descending, stable=True)
        _assert_equal(values, expected.values)
        _assert_equal(indices, expected.indices)
        argsort = lucid.argsort(x, dim=dim, descending=descending, stable=True)
        _assert_equal(argsort, expected.indices)


@requires_torch
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("size", [6, 200], ids=["full_sort", "partition"])
def test_topk_values_match_torch_on_extremes_and_ties(largest: bool, size: int) -> None:
    pattern = np.array([0.0, 1e30, -1e30, INF, -INF, NAN, 5e-324, 1.0, 1.0, -2.0])
    array = np.resize(pattern, (3, size))
    x, t = _lucid_and_torch(array)
    for k in (0, 1, 3, 6):
        values, indices = lucid.topk(x, k, largest=largest)
        _assert_equal(values, torch.topk(t, k, largest=largest).values)
        np.testing.assert_array_equal(np.take_along_axis(array, indices.numpy(), 1), values)


def test_topk_partition_and_full_sort_agree_without_ties() -> None:
    array = np.random.default_rng(4).permutation(400).reshape(4, 100).astype(np.float64)
    x = lucid.from_numpy(array)
    for largest in (True, False):
        small = lucid.topk(x, 3, largest=largest)
        full = lucid.sort(x, descending=largest)
        np.testing.assert_array_equal(small.values.numpy(), full.values.numpy()[:, :3])
        np.testing.assert_array_equal(small.indices.numpy(), full.indices.numpy()[:, :3])


def test_topk_of_integers_and_along_a_dim() -> None:
    x = lucid.tensor([[3, 1, 2], [0, 5, 4]])
    values, indices = x.topk(1, dim=0)
    assert values.tolist() == [[3, 5, 4]] and indices.tolist() == [[0, 1, 1]]
    assert values.dtype == lucid.int64 and indices.dtype == lucid.int64
    assert lucid.topk(x, 2, largest=False, sorted=False).values.tolist() == [[1, 2], [0, 4]]


def test_zero_dim_and_empty_inputs() -> None:
    scalar = lucid.tensor(2.5)
    for result in (lucid.sort(scalar), lucid.topk(scalar, 1), lucid.topk(scalar, 0)):
        assert result.values.shape == () and result.values.item() == 2.5
        assert result.indices.shape == () and result.indices.item() == 0
    assert lucid.argsort(scalar, dim=-1).shape == ()
    empty = lucid.zeros(3, 0)
    assert lucid.sort(empty).values.shape == (3, 0)
    assert lucid.argsort(empty, dim=0).shape == (3, 0)
    assert lucid.topk(empty, 0).values.shape == (3, 0)
    assert lucid.topk(empty, 2, dim=0).indices.shape == (2, 0)


def test_results_are_named_tuples() -> None:
    x = lucid.tensor([[2.0, 1.0]])
    result = lucid.topk(x, 1)
    values, indices = result
    assert values is result.values and indices is result.indices
    assert result[0] is values and len(result) == 2
    assert repr(result).startswith("lucid.return_types.topk(\nvalues=tensor(")
    assert repr(lucid.sort(x)).startswith("lucid.return_types.sort(\nvalues=tensor(")


def test_backward_sends_each_gradient_to_its_selected_position() -> None:
    x = lucid.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
    values, indices = lucid.topk(x, 2)
    assert values.grad_fn.name() == "TopkBackward0"
    assert not indices.requires_grad and indices.grad_fn is None
    (values * lucid.tensor([[10.0, 20.0], [30.0, 40.0]])).sum().backward()
    assert x.grad.tolist() == [[10.0, 0.0, 20.0], [0.0, 30.0, 40.0]]
    x.grad = None
    values, _ = x.sort(dim=0, descending=True)
    assert values.grad_fn.name() == "SortBackward0"
    (values * lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 5.0, 6.0], [4.0, 2.0, 3.0]]
    assert lucid.argsort(x).grad_fn is None


def test_backward_of_zero_dim_input() -> None:
    x = lucid.tensor(2.0, requires_grad=True)
    (lucid.sort(x).values * 3.0).backward()
    assert x.grad.item() == 3.0


@pytest.mark.parametrize("k", [-1, 4])
def test_topk_k_out_of_range_raises(k: int) -> None:
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        lucid.topk(lucid.zeros(2, 3), k)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        lucid.topk(lucid.tensor(1.0), 2)


def test_dim_out_of_range_raises() -> None:
    x = lucid.zeros(2, 3)
    message = r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"
    for call in (lambda: x.sort(2), lambda: x.argsort(2), lambda: x.topk(1, 2)):
        with pytest.raises(IndexError, match=message):
            call()
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1\)"):
        lucid.sort(lucid.tensor(1.0), 1)


def test_argument_type_errors() -> None:
    x = lucid.zeros(3)
    with pytest.raises(TypeError, match=r"topk\(\): argument 'k' \(position 2\) must be int"):
        lucid.topk(x, 1.0)
    with pytest.raises(TypeError, match=r"topk\(\): argument 'k' \(position 2\) must be int"):
        lucid.topk(x, True)
    with pytest.raises(TypeError, match=r"sort\(\) received an invalid combination"):
        lucid.sort(x, 0.0)
    with pytest.raises(TypeError, match=r"argsort\(\) received an invalid combination"):
        lucid.argsort(x, stable=None)
    with pytest.raises(RuntimeError, match="topk does not support bool dtypes on CPU"):
        lucid.topk(lucid.tensor([True, False]), 1)
    assert lucid.sort(x, stable=None).values.shape == (3,)
