"""The index and scatter ops beyond the catalogue rows: how amax/amin share ties, prod's
gradient through zeros, include_self, integer dtypes, 0-d inputs, the in-place forms, grad_fn
names, and tril/triu_indices."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def _pair(array: Any, requires_grad: bool = False) -> tuple[lucid.Tensor, Any]:
    array = np.asarray(array)
    x = lucid.from_numpy(array.copy())
    t = torch.from_numpy(array.copy())
    if requires_grad:
        x.requires_grad_()
        t.requires_grad_()
    return x, t


def _assert_same(actual: lucid.Tensor, expected: Any) -> None:
    assert str(actual.dtype).rsplit(".", 1)[-1] == str(expected.dtype).rsplit(".", 1)[-1]
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


def _torch_quietly(function: Any) -> Any:
    # index_reduce is a beta API in PyTorch and says so on every call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return function()


# ------------------------------------------------------------------------- amax / amin ties
def test_amax_ties_share_the_gradient_evenly() -> None:
    x = lucid.tensor([5.0, 1.0], requires_grad=True)
    src = lucid.tensor([5.0, 5.0, 3.0], requires_grad=True)
    index = lucid.tensor([0, 0, 1])
    x.scatter_reduce(0, index, src, "amax").sum().backward()
    # three entries hold the maximum 5 of slot 0; 3 beats x's 1 in slot 1
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 0.0])
    np.testing.assert_allclose(src.grad.numpy(), [1 / 3, 1 / 3, 1.0])


@requires_torch
@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_ties_are_split_as_pytorch_splits_them(reduce: str, include_self: bool) -> None:
    # ties everywhere: x and src drawn from three values
    rng = np.random.default_rng(0)
    x, tx = _pair(rng.integers(0, 3, (4, 5)).astype(np.float64), True)
    src, tsrc = _pair(rng.integers(0, 3, (6, 5)).astype(np.float64), True)
    index, tindex = _pair(rng.integers(0, 4, (6, 5)))
    grad = rng.standard_normal((4, 5))
    result = lucid.scatter_reduce(x, 0, index, src, reduce, include_self=include_self)
    expected = torch.scatter_reduce(tx, 0, tindex, tsrc, reduce, include_self=include_self)
    _assert_same(result, expected)
    result.backward(lucid.from_numpy(grad.copy()))
    expected.backward(torch.from_numpy(grad.copy()))
    _assert_same(x.grad, tx.grad)
    _assert_same(src.grad, tsrc.grad)


def test_amax_and_amin_propagate_nan() -> None:
    nan = float("nan")
    x = lucid.tensor([1.0, nan, 3.0])
    src = lucid.tensor([nan, 5.0, -1.0])
    index = lucid.tensor([0, 1, 2])
    np.testing.assert_array_equal(x.scatter_reduce(0, index, src, "amax").numpy(), [nan, nan, 3])
    np.testing.assert_array_equal(x.scatter_reduce(0, index, src, "amin").numpy(), [nan, nan, -1])


# ------------------------------------------------------------------------ prod with zeros
_PROD_CASES = {
    "one_zero_in_src": ([2.0, 3.0, 4.0], [0.0, 5.0, 6.0, 7.0]),
    "two_zeros_in_src": ([2.0, 3.0, 4.0], [0.0, 0.0, 6.0, 7.0]),
    "zero_in_self": ([0.0, 3.0, 4.0], [2.0, 5.0, 6.0, 7.0]),
    "zeros_in_both": ([0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 7.0]),
}


@requires_torch
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("case", list(_PROD_CASES), ids=list(_PROD_CASES))
def test_prod_gradient_through_zeros_matches_pytorch(case: str, include_self: bool) -> None:
    x_values, src_values = _PROD_CASES[case]
    x, tx = _pair(np.array(x_values), True)
    src, tsrc = _pair(np.array(src_values), True)
    index, tindex = _pair(np.array([0, 0, 2, 1]))
    result = lucid.scatter_reduce(x, 0, index, src, "prod", include_self=include_self)
    expected = torch.scatter_reduce(tx, 0, tindex, tsrc, "prod", include_self=include_self)
    _assert_same(result, expected)
    grad = np.array([0.5, -1.5, 2.0])
    result.backward(lucid.from_numpy(grad.copy()))
    expected.backward(torch.from_numpy(grad.copy()))
    _assert_same(x.grad, tx.grad)
    _assert_same(src.grad, tsrc.grad)


@pytest.mark.parametrize("case", list(_PROD_CASES), ids=list(_PROD_CASES))
def test_prod_with_zeros_passes_gradcheck_and_gradgradcheck(case: str) -> None:
    x_values, src_values = _PROD_CASES[case]
    x = lucid.tensor(x_values, dtype=lucid.float64, requires_grad=True)
    src = lucid.tensor(src_values, dtype=lucid.float64, requires_grad=True)
    index = lucid.tensor([0, 0, 2, 1])

    def function(x: lucid.Tensor, src: lucid.Tensor) -> lucid.Tensor:
        return lucid.scatter_reduce(x, 0, index, src, "prod")

    assert lucid.autograd.gradcheck(function, (x, src))
    if case != "two_zeros_in_src":
        assert lucid.autograd.gradgradcheck(function, (x, src))
        return
    # PyTorch's formula has the wrong derivative there, and both libraries refuse it
    with pytest.raises(RuntimeError, match=r"Double backward is unsupported for src when >1 zeros"):
        lucid.autograd.gradgradcheck(function, (x, src))


# --------------------------------------------------------------- dtypes, 0-d, include_self
@requires_torch
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8, np.float16])
def test_scatter_reduce_on_other_dtypes_matches_pytorch(
    reduce: str, include_self: bool, dtype: type
) -> None:
    # small integers: float16 holds every sum and product exactly, whatever their order
    rng = np.random.default_rng(1)
    x, tx = _pair(rng.integers(0, 3, (4, 3)).astype(dtype))
    src, tsrc = _pair(rng.integers(0, 3, (5, 3)).astype(dtype))
    index, tindex = _pair(rng.integers(0, 3, (5, 3)))
    result = x.scatter_reduce(0, index, src, reduce, include_self=include_self)
    expected = tx.scatter_reduce(0, tindex, tsrc, reduce, include_self=include_self)
    _assert_same(result, expected)


def test_bool_tensors_refuse_the_reductions_pytorch_refuses() -> None:
    x = lucid.tensor([True, False, False])
    index = lucid.tensor([1, 1, 2])
    src = lucid.tensor([True, True, False])
    assert x.scatter_reduce(0, index, src, "amax").tolist() == [True, True, False]
    with pytest.raises(NotImplementedError, match="reduce_mean\" not implemented for 'Bool'"):
        x.scatter_reduce(0, index, src, "mean")
    with pytest.raises(NotImplementedError, match="\"index_func_\" not implemented for 'Bool'"):
        x.index_reduce(0, index, src, "amax")
    with pytest.raises(NotImplementedError, match='exclude_input_init" not implemented for'):
        x.index_reduce(0, index, src, "prod", include_self=False)


def test_integer_mean_rounds_down() -> None:
    x = lucid.tensor([1, 1, 7])
    result = x.scatter_reduce(0, lucid.tensor([0, 1, 1]), lucid.tensor([-4, 2, 2]), "mean")
    assert result.tolist() == [-2, 1, 7]


@requires_torch
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_on_integers_matches_pytorch(reduce: str, include_self: bool) -> None:
    rng = np.random.default_rng(2)
    x, tx = _pair(rng.integers(-9, 9, (3, 4)))
    source, tsource = _pair(rng.integers(-9, 9, (3, 6)))
    index, tindex = _pair(np.array([3, 0, 3, 3, 1, 0]))
    result = x.index_reduce(1, index, source, reduce, include_self=include_self)
    expected = _torch_quietly(
        lambda: tx.index_reduce(1, tindex, tsource, reduce, include_self=include_self)
    )
    _assert_same(result, expected)


@requires_torch
def test_integer_index_add_truncates_alpha_as_pytorch() -> None:
    x, tx = _pair(np.zeros((3, 2), np.int64))
    source, tsource = _pair(np.ones((2, 2), np.int64))
    index, tindex = _pair(np.array([1, 1]))
    _assert_same(
        x.index_add(0, index, source, alpha=2.5), tx.index_add(0, tindex, tsource, alpha=2.5)
    )


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.index_add(0, m.tensor(0), m.tensor(2.0, dtype=x.dtype), alpha=3),
        lambda m, x: x.index_copy(0, m.tensor([0]), m.tensor(2.0, dtype=x.dtype)),
        lambda m, x: x.index_fill(0, m.tensor([0, -1]), -1.0),
        lambda m, x: x.put(m.tensor([0, -1]), m.tensor([4.0, 5.0], dtype=x.dtype), True),
        lambda m, x: x.scatter_reduce(0, m.tensor(0), m.tensor(3.0, dtype=x.dtype), "prod"),
        lambda m, x: x.index_reduce(0, m.tensor(0), m.tensor(3.0, dtype=x.dtype), "amin"),
        lambda m, x: x.scatter_reduce(0, m.tensor([0, 0]), x.expand(2) * 2, "mean"),
        lambda m, x: m.take_along_dim(x, m.tensor([0, 0])),
    ],
    ids=[
        "index_add",
        "index_copy",
        "index_fill",
        "put",
        "scatter_reduce",
        "index_reduce",
        "scatter_reduce_repeated",
        "take_along_dim",
    ],
)
def test_zero_dim_inputs_match_pytorch(call: Any) -> None:
    x, tx = _pair(np.array(1.5), True)
    result = call(lucid, x)
    expected = _torch_quietly(lambda: call(torch, tx))
    _assert_same(result, expected)
    result.sum().backward()
    expected.sum().backward()
    _assert_same(x.grad, tx.grad)


# ---------------------------------------------------------------------------- index_add
def _index_add_by_loop(x: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray) -> Any:
    result = x.copy()
    for k, position in enumerate(index):
        target = (slice(None),) * dim + (position,)
        result[target] += source[(slice(None),) * dim + (k,)]
    return result


@pytest.mark.parametrize(
    "shape, dim, index",
    [
        ((6, 140), 0, [5, 0, 5, 5, 2, 0, 1]),  # wide slices, a few repeats
        ((3, 4, 50), 1, [3, 3, 0, 1, 3]),  # wide slices of a middle dim
        ((4, 200), 0, [2] * 40 + [0, 3]),  # one position repeated many times
        ((6, 5), 0, [5, 0, 5, 5, 2, 0, 1]),  # narrow slices
    ],
    ids=["wide", "middle_dim", "many_repeats", "narrow"],
)
def test_index_add_adds_every_slice_however_often_its_position_repeats(
    shape: tuple, dim: int, index: list
) -> None:
    # integer-valued floats, so the order of the additions cannot change the sums
    rng = np.random.default_rng(3)
    x = rng.integers(-9, 9, shape).astype(np.float64)
    source_shape = list(shape)
    source_shape[dim] = len(index)
    source = rng.integers(-9, 9, source_shape).astype(np.float64)
    expected = _index_add_by_loop(x, dim, np.array(index), source)
    positions = lucid.tensor(index)
    result = lucid.from_numpy(x).index_add(dim, positions, lucid.from_numpy(source))
    np.testing.assert_array_equal(result.numpy(), expected)
    inplace = lucid.from_numpy(x.copy())
    inplace.index_add_(dim, positions, lucid.from_numpy(source))
    np.testing.assert_array_equal(inplace.numpy(), expected)


def test_index_add_inplace_on_a_transposed_view_writes_through_to_its_base() -> None:
    base = lucid.zeros(3, 2)
    base.t().index_add_(0, lucid.tensor([1, 1]), lucid.ones(2, 3))
    assert base.tolist() == [[0.0, 2.0]] * 3


def test_index_add_inplace_of_its_own_values_reads_them_before_writing() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0])
    x.index_add_(0, lucid.tensor([1, 2, 0]), x)
    assert x.tolist() == [4.0, 3.0, 5.0]


# -------------------------------------------------------------------------- index_put / put
def test_index_put_accumulate_adds_up_repeated_positions() -> None:
    x = lucid.zeros(4)
    index = lucid.tensor([1, 3, 1, 1])
    result = x.index_put((index,), lucid.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
    assert result.tolist() == [0.0, 8.0, 0.0, 2.0]
    assert x.put(index, lucid.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True).tolist() == [
        0.0, 8.0, 0.0, 2.0,
    ]  # fmt: skip


def test_index_put_with_repeated_positions_of_one_value_writes_it() -> None:
    # which of several values lands on a repeated position is unspecified; one value is not
    result = lucid.zeros(3).index_put((lucid.tensor([2, 2, 0]),), lucid.tensor(7.0))
    assert result.tolist() == [7.0, 0.0, 7.0]


def test_index_put_rejects_what_pytorch_rejects() -> None:
    x = lucid.zeros(3, 4)
    with pytest.raises(TypeError, match=r"must be tuple of Tensors, not Tensor"):
        x.index_put(lucid.tensor([0]), lucid.tensor(1.0))
    with pytest.raises(TypeError, match="expected Tensor as element 0 in argument 0, but got "):
        x.index_put((None, lucid.tensor([0])), lucid.tensor(1.0))
    with pytest.raises(TypeError, match=r"argument 'values' \(position 2\) must be Tensor"):
        x.index_put((lucid.tensor([0]),), 1.0)
    with pytest.raises(TypeError, match="argument 'accumulate' must be bool, not int"):
        x.index_put((lucid.tensor([0]),), lucid.tensor(1.0), accumulate=1)
    with pytest.raises(IndexError, match=r"too many indices for tensor of dimension 2 \(got 3\)"):
        x.index_put((lucid.tensor([0]),) * 3, lucid.tensor(1.0))


def test_put_into_an_empty_tensor_is_an_error() -> None:
    with pytest.raises(IndexError, match=r"put_\(\): Tried to put elements into an empty tensor"):
        lucid.zeros(0).put(lucid.tensor([0]), lucid.tensor([1.0]))


# ----------------------------------------------------------------------- in-place forms
_INPLACE = {
    "index_add_": lambda x: x.index_add_(0, lucid.tensor([1, 1]), lucid.ones(2, 3)),
    "index_copy_": lambda x: x.index_copy_(0, lucid.tensor([2, 0]), lucid.ones(2, 3)),
    "index_fill_": lambda x: x.index_fill_(1, lucid.tensor([0, 2]), 4.0),
    "index_reduce_": lambda x: x.index_reduce_(0, lucid.tensor([1, 1]), lucid.ones(2, 3), "amax"),
    "index_put_": lambda x: x.index_put_((lucid.tensor([1, 1]),), lucid.ones(3), True),
    "put_": lambda x: x.put_(lucid.tensor([5, 0]), lucid.ones(2)),
    "masked_scatter_": lambda x: x.masked_scatter_(
        lucid.tensor([True, False, True]), lucid.ones(6)
    ),
    "scatter_": lambda x: x.scatter_(0, lucid.tensor([[2, 0, 1]]), lucid.ones(1, 3)),
    "scatter_add_": lambda x: x.scatter_add_(0, lucid.tensor([[2, 0, 2]]), lucid.ones(1, 3)),
    "scatter_reduce_": lambda x: x.scatter_reduce_(
        0, lucid.tensor([[2, 0, 2]]), lucid.ones(1, 3), "sum"
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", list(_INPLACE), ids=list(_INPLACE))
def test_inplace_form_writes_into_its_input_and_its_views(name: str) -> None:
    base = lucid.arange(9.0).reshape(3, 3)
    expected = _INPLACE[name](base.clone())
    x = base.clone()
    view = x[1:]
    version = x._version
    assert _INPLACE[name](x) is x
    assert x._version == version + 1
    np.testing.assert_array_equal(x.numpy(), expected.numpy())
    np.testing.assert_array_equal(view.numpy(), expected.numpy()[1:])


@pytest.mark.parametrize("name", list(_INPLACE), ids=list(_INPLACE))
def test_inplace_form_on_a_leaf_that_requires_grad_is_refused(name: str) -> None:
    x = lucid.zeros(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        _INPLACE[name](x)


def test_inplace_index_add_keeps_the_history_of_its_input() -> None:
    w = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w * 2
    y.index_add_(0, lucid.tensor([0, 0]), lucid.tensor([1.0, 1.0]), alpha=5)
    assert y.grad_fn.name() == "IndexAddBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


# -------------------------------------------------------------------------- grad_fn names
_NAMED = {
    "index_add": lambda m, x: x.index_add(0, m.tensor([0]), x[:1]),
    "index_copy": lambda m, x: x.index_copy(0, m.tensor([0]), x[:1]),
    "index_fill": lambda m, x: x.index_fill(0, m.tensor([0]), 1.0),
    "index_fill_tensor": lambda m, x: x.index_fill(0, m.tensor([0]), x[0, 0]),
    "index_reduce": lambda m, x: x.index_reduce(0, m.tensor([0]), x[:1], "mean"),
    "index_put": lambda m, x: x.index_put((m.tensor([0]),), x[0]),
    "put": lambda m, x: x.put(m.tensor([0]), x[0, :1]),
    "scatter_reduce": lambda m, x: x.scatter_reduce(0, m.tensor([[0]]), x[:1, :1], "sum"),
    "masked_scatter": lambda m, x: x.masked_scatter(m.tensor([True, False]), x),
    "select_scatter": lambda m, x: m.select_scatter(x, x[0], 0, 1),
    "slice_scatter": lambda m, x: m.slice_scatter(x, x[:1], 0, 0, 1),
    "diagonal_scatter": lambda m, x: m.diagonal_scatter(x, x[0]),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "take_along_dim": lambda m, x: m.take_along_dim(x, m.tensor([[0]]), 1),
}


@requires_torch
@pytest.mark.parametrize("name", list(_NAMED), ids=list(_NAMED))
def test_grad_fn_names_are_pytorchs(name: str) -> None:
    x, tx = _pair(np.ones((2, 2)), True)
    actual = _NAMED[name](lucid, x).grad_fn.name()
    expected = _torch_quietly(lambda: _NAMED[name](torch, tx)).grad_fn.name()
    assert actual == expected


@requires_torch
@pytest.mark.parametrize("name", list(_NAMED), ids=list(_NAMED))
def test_a_second_backward_is_refused_where_pytorch_refuses_it(name: str) -> None:
    def second_backward_fails(library: Any, x: Any) -> bool:
        result = _NAMED[name](library, x * 1).sum()
        result.backward()
        try:
            result.backward()
        except RuntimeError as error:
            assert "Trying to backward through the graph a second time" in str(error)
            return True
        return False

    x, tx = _pair(np.ones((2, 2)), True)
    expected = _torch_quietly(lambda: second_backward_fails(torch, tx))
    assert second_backward_fails(lucid, x) == expected


def test_scatter_reduce_max_is_amax_without_a_derivative() -> None:
    # PyTorch's forward also takes 'max' and 'min', which its backward then refuses
    x = lucid.zeros(3, requires_grad=True)
    result = x.scatter_reduce(0, lucid.tensor([0, 0]), lucid.tensor([1.0, 2.0]), "max")
    assert result.tolist() == [2.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="Expected 'reduce' to be one of 'sum', 'prod', 'mean'"):
        result.sum().backward()


# ----------------------------------------------------------------------- tril/triu_indices
@requires_torch
@pytest.mark.parametrize("row, col", [(0, 3), (3, 0), (1, 1), (3, 3), (4, 2), (2, 5)])
@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 4])
def test_triangle_indices_match_pytorch(row: int, col: int, offset: int) -> None:
    for name in ("tril_indices", "triu_indices"):
        _assert_same(getattr(lucid, name)(row, col, offset), getattr(torch, name)(row, col, offset))
    _assert_same(
        lucid.tril_indices(row, col, offset, dtype=lucid.int32),
        torch.tril_indices(row, col, offset, dtype=torch.int32),
    )


def test_triangle_indices_errors_are_pytorchs() -> None:
    with pytest.raises(RuntimeError, match="row must be non-negative, got-1"):
        lucid.tril_indices(-1, 2)
    with pytest.raises(RuntimeError, match="col must be non-negative, got-2"):
        lucid.triu_indices(3, -2)
    with pytest.raises(NotImplementedError, match="\"tril_indices\" not implemented for 'Float'"):
        lucid.tril_indices(3, 3, dtype=lucid.float32)
