"""torch's alternative names and the smaller functions the API coverage found missing:
stacking and splitting helpers, index queries, fill_diagonal_, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _library(name):
    if name == "lucid":
        return lucid
    return pytest.importorskip("torch")


def _values(library, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    return library.tensor(rng.uniform(-1.0, 1.0, shape), requires_grad=True)


# (name, call) run on lucid and torch alike: the grad_fn name of the result must be torch's.
GRAD_FN_CASES = [
    ("hstack", lambda lib, x: lib.hstack([x, x])),
    ("vstack", lambda lib, x: lib.vstack([x[0], x])),
    ("dstack", lambda lib, x: lib.dstack([x, x])),
    ("column_stack", lambda lib, x: lib.column_stack([x[:, 0], x])),
    ("atleast_1d", lambda lib, x: lib.atleast_1d(x[0, 0])),
    ("atleast_2d", lambda lib, x: lib.atleast_2d(x[0])),
    ("atleast_3d", lambda lib, x: lib.atleast_3d(x)),
    ("tensor_split", lambda lib, x: lib.tensor_split(x, 3, dim=1)[2]),
    ("hsplit", lambda lib, x: lib.hsplit(x, [1])[1]),
    ("select", lambda lib, x: lib.select(x, 0, 1)),
    ("select_method", lambda lib, x: x.select(1, -1)),
    ("unfold", lambda lib, x: x.unfold(1, 2, 1)),
    ("fmax", lambda lib, x: lib.fmax(x, x.flip(0))),
    ("fmin", lambda lib, x: x.fmin(x.flip(0))),
    ("renorm", lambda lib, x: x.renorm(2, 0, 0.5)),
    ("repeat_interleave", lambda lib, x: x.repeat_interleave(2, dim=0)),
    ("repeat_interleave_counts", lambda lib, x: x.repeat_interleave(lib.tensor([1, 0, 2]), dim=0)),
    ("where_method", lambda lib, x: x.where(x > 0, 0.0)),
    ("ravel", lambda lib, x: x.ravel()),
    ("positive", lambda lib, x: lib.positive(x * 1.0)),
    ("fill_diagonal_", lambda lib, x: (x * 1.0).fill_diagonal_(2.0)),
    ("cumulative_trapezoid", lambda lib, x: lib.cumulative_trapezoid(x)),
]


@pytest.mark.parametrize("case", GRAD_FN_CASES, ids=[name for name, _ in GRAD_FN_CASES])
def test_grad_fn_name_and_value_match_torch(case):
    torch = _library("torch")
    _, call = case
    result = call(lucid, _values(lucid))
    expected = call(torch, _values(torch))
    assert result.grad_fn.name() == expected.grad_fn.name().replace("torch::", "lucid::")
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    ("shape", "wrap"), [((3, 4), False), ((7, 3), False), ((7, 3), True), ((3, 3, 3), False)]
)
def test_fill_diagonal_matches_torch(shape, wrap):
    torch = _library("torch")
    x = lucid.zeros(*shape)
    result = x.fill_diagonal_(2.5, wrap=wrap)
    expected = torch.zeros(*shape).fill_diagonal_(2.5, wrap=wrap)
    assert result is x
    np.testing.assert_array_equal(x.numpy(), expected.numpy())


def test_fill_diagonal_gradient_is_zero_on_the_diagonal():
    x = lucid.ones(3, 3, requires_grad=True)
    (grad,) = lucid.autograd.grad((x * 2.0).fill_diagonal_(0.0).sum(), (x,))
    np.testing.assert_array_equal(grad.numpy(), 2.0 * (1.0 - np.eye(3)))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(4).fill_diagonal_(1.0),
        lambda lib: lib.ones(2, 3, 4).fill_diagonal_(1.0),
        lambda lib: lib.atleast_1d(3),
        lambda lib: lib.hstack(lib.ones(3)),
        lambda lib: lib.tensor_split(lib.ones(3, 4), lib.tensor([[1]])),
        lambda lib: lib.tensor_split(lib.ones(3, 4), 2.5),
        lambda lib: lib.dsplit(lib.ones(3, 4), 2),
        lambda lib: lib.hsplit(lib.tensor(1.0), 2),
        lambda lib: lib.repeat_interleave(lib.tensor([[1, 2]])),
        lambda lib: lib.repeat_interleave(lib.ones(3, 4), lib.tensor([1, 2]), dim=0),
        lambda lib: lib.unravel_index(lib.tensor([1.0]), (3, 4)),
        lambda lib: lib.ones(3).unfold(0, 5, 1),
        lambda lib: lib.fmax(lib.ones(3), 1.0),
        lambda lib: lib.trapezoid(lib.ones(3, 4), 2.0),
        lambda lib: lib.cov(lib.ones(3, 4), fweights=lib.tensor([1.0, 2.0, 1.0, 1.0])),
        lambda lib: lib.gradient(lib.ones(3, 4), edge_order=3),
        lambda lib: lib.renorm(lib.ones(3, 4), 2, 0, -1.0),
        lambda lib: lib.positive(lib.tensor([True])),
    ],
)
def test_errors_match_torch(call):
    torch = _library("torch")
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type) as error:
        call(lucid)
    assert str(error.value) == str(expected.value).replace("torch", "lucid")


def test_atleast_forms_accept_several_tensors_or_one_sequence():
    a, b = lucid.tensor(1.0), lucid.ones(2)
    assert [t.shape for t in lucid.atleast_3d(a, b)] == [(1, 1, 1), (1, 2, 1)]
    assert [t.shape for t in lucid.atleast_2d([a, b])] == [(1, 1), (1, 2)]
    matrix = lucid.ones(2, 3)
    assert lucid.atleast_1d(matrix) is matrix


def test_broadcast_tensors_expands_only_what_differs():
    torch = _library("torch")
    x, v = lucid.ones(3, 4), lucid.arange(4.0)
    first, second = lucid.broadcast_tensors(x, v)
    assert first is x
    expected = torch.broadcast_tensors(torch.ones(3, 4), torch.arange(4.0))[1]
    np.testing.assert_array_equal(second.numpy(), expected.numpy())


def test_argwhere_isin_unravel_index_match_torch():
    torch = _library("torch")
    values = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    np.testing.assert_array_equal(
        lucid.argwhere(lucid.tensor(values)).numpy(), torch.argwhere(torch.tensor(values)).numpy()
    )
    assert lucid.tensor(values).argwhere().dtype == lucid.int64
    elements, tests = np.array([1, 2, 3, 4]), np.array([2, 4, 9])
    for invert in (False, True):
        np.testing.assert_array_equal(
            lucid.isin(lucid.tensor(elements), lucid.tensor(tests), invert=invert).numpy(),
            torch.isin(torch.tensor(elements), torch.tensor(tests), invert=invert).numpy(),
        )
    np.testing.assert_array_equal(
        lucid.isin(lucid.tensor(elements), 3).numpy(), torch.isin(torch.tensor(elements), 3).numpy()
    )
    np.testing.assert_array_equal(
        lucid.isin(2, lucid.tensor(tests)).numpy(), torch.isin(2, torch.tensor(tests)).numpy()
    )
    flat = np.array([5, 7, 0, -1])
    for result, expected in zip(
        lucid.unravel_index(lucid.tensor(flat), (3, 4)),
        torch.unravel_index(torch.tensor(flat), (3, 4)),
    ):
        assert result.dtype == lucid.int64
        np.testing.assert_array_equal(result.numpy(), expected.numpy())


def test_repeat_interleave_of_counts_alone_matches_torch():
    torch = _library("torch")
    counts = np.array([1, 0, 3, 2])
    np.testing.assert_array_equal(
        lucid.repeat_interleave(lucid.tensor(counts)).numpy(),
        torch.repeat_interleave(torch.tensor(counts)).numpy(),
    )
    np.testing.assert_array_equal(
        lucid.tensor(2.0).repeat_interleave(3).numpy(), torch.tensor(2.0).repeat_interleave(3)
    )


def test_unfold_reads_the_input_storage():
    x = lucid.arange(6.0)
    windows = x.unfold(0, 3, 1)
    x.mul_(10.0)
    np.testing.assert_array_equal(
        windows.numpy(), [[0, 10, 20], [10, 20, 30], [20, 30, 40], [30, 40, 50]]
    )


def test_unfold_of_zero_dim_tensor_matches_torch():
    torch = _library("torch")
    assert lucid.tensor(3.0).unfold(0, 1, 1).shape == torch.tensor(3.0).unfold(0, 1, 1).shape


def test_unfold_gradient_adds_overlapping_windows_and_double_backward_runs():
    x = lucid.tensor(np.arange(5.0), requires_grad=True)
    windows = x.unfold(0, 3, 1)
    (grad,) = lucid.autograd.grad(windows.sum(), (x,), create_graph=True)
    np.testing.assert_array_equal(grad.detach().numpy(), [1, 2, 3, 2, 1])
    assert lucid.autograd.gradcheck(lambda t: t.unfold(0, 2, 2), (x,))
    assert lucid.autograd.gradgradcheck(lambda t: t.unfold(0, 3, 1), (x,))


def test_fmax_fmin_ignore_nan_and_give_ties_to_the_first_operand_as_torch():
    torch = _library("torch")
    a = [1.0, 2.0, float("nan"), 3.0, float("nan")]
    b = [1.0, 3.0, 1.0, float("nan"), float("nan")]
    for name in ("fmax", "fmin"):
        x, y = lucid.tensor(a, requires_grad=True), lucid.tensor(b, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        result = getattr(lucid, name)(x, y)
        expected = getattr(torch, name)(tx, ty)
        np.testing.assert_array_equal(result.detach().numpy(), expected.detach().numpy())
        result.sum().backward()
        expected.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
        np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())


def test_tensor_methods_alias_the_functions():
    x = lucid.tensor([[0.2, -0.4], [0.6, 0.1]])
    np.testing.assert_array_equal(x.arccos().numpy(), lucid.acos(x).numpy())
    np.testing.assert_array_equal(x.absolute().numpy(), x.abs().numpy())
    np.testing.assert_array_equal(x.negative().numpy(), (-x).numpy())
    np.testing.assert_array_equal(x.subtract(x, alpha=2).numpy(), (-x).numpy())
    np.testing.assert_array_equal(x.greater_equal(0.1).numpy(), (x >= 0.1).numpy())
    np.testing.assert_array_equal(x.isclose(x).numpy(), np.ones((2, 2), bool))
    assert lucid.positive(x) is x


# ------------------------------------------------ complex-number queries on real tensors
def test_complex_queries_of_real_tensors_match_torch():
    torch = _library("torch")
    values = np.array([[-1.5, 0.0, 2.0], [-0.0, np.nan, 1.0]])
    for dtype in ("float32", "int64", "uint8", "bool"):
        array = values.astype(np.float32) if dtype == "float32" else np.nan_to_num(values)
        array = array.astype(dtype)
        x, t = lucid.tensor(array), torch.tensor(array)
        for name in (
            "is_conj",
            "is_neg",
            "is_complex",
            "is_signed",
            "is_inference",
            "is_distributed",
        ):
            assert getattr(lucid, name)(x) == getattr(torch, name)(t), (name, dtype)
            assert getattr(x, name)() == getattr(t, name)(), (name, dtype)
        np.testing.assert_array_equal(lucid.isreal(x).numpy(), torch.isreal(t).numpy())
        for name in ("conj", "conj_physical", "resolve_conj", "resolve_neg", "real"):
            assert getattr(lucid, name)(x) is x
        assert x.real is x and x.conj() is x and x.conj_physical_() is x
        if dtype != "bool":
            np.testing.assert_array_equal(lucid.angle(x).numpy(), torch.angle(t).numpy())


def test_imag_of_a_real_tensor_raises_torch_error():
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        lucid.ones(2).imag
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        lucid.imag(lucid.ones(2))


def test_is_nonzero_and_is_same_size_match_torch():
    torch = _library("torch")
    for values in ([0.0], [2.0], [float("nan")], 3, [[True]]):
        assert lucid.is_nonzero(lucid.tensor(values)) == torch.is_nonzero(torch.tensor(values))
    assert lucid.ones(2, 3).is_same_size(lucid.zeros(2, 3))
    assert not lucid.is_same_size(lucid.ones(2, 3), lucid.ones(3, 2))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.is_nonzero(lib.ones(2)),
        lambda lib: lib.is_nonzero(lib.ones(0)),
        lambda lib: lib.is_nonzero(1),
        lambda lib: lib.ones(2).is_same_size(3),
        lambda lib: lib.ones(2, 3, 4).H,
        lambda lib: lib.ones(3).H,
        lambda lib: lib.ones(3).mH,
        lambda lib: lib.can_cast(1, lib.float32),
        lambda lib: lib.conj(3),
    ],
)
def test_query_errors_match_torch(call):
    torch = _library("torch")
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type) as error:
        call(lucid)
    assert str(error.value) == str(expected.value).replace("torch", "lucid")


def test_can_cast_matches_torch_for_every_pair():
    torch = _library("torch")
    names = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
    for source in names:
        for target in names:
            assert lucid.can_cast(getattr(lucid, source), getattr(lucid, target)) == (
                torch.can_cast(getattr(torch, source), getattr(torch, target))
            ), (source, target)


def test_zero_dim_conjugate_transposes_warn_and_return_the_tensor():
    x = lucid.tensor(2.0)
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        assert x.mH is x
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        assert lucid.adjoint(x) is x


def test_writing_into_views_that_share_elements_raises_torch_error():
    torch = _library("torch")
    with pytest.raises(RuntimeError) as expected:
        torch.ones(3).expand(2, 3).exp_()
    with pytest.raises(RuntimeError) as error:
        lucid.ones(3).expand(2, 3).exp_()
    assert str(error.value) == str(expected.value)
    windows = lucid.arange(5.0).unfold(0, 2, 1)
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        windows.mul_(2.0)
    np.testing.assert_array_equal(windows.clone().mul_(2.0).numpy()[0], [0.0, 2.0])
