"""Tensor API: metadata, conversions, repr (PyTorch's, character for character), autograd
attributes, casts, layout and Python operators."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import TORCH_MISSING

# (expression over module `m`, PyTorch's repr with "torch." written as "lucid.")
REPR_CASES = [
    ("m.tensor([1, 2, 3])", "tensor([1, 2, 3])"),
    ("m.tensor([-1, 20, 300])", "tensor([ -1,  20, 300])"),
    ("m.tensor([1.0, 2.0, 3.0])", "tensor([1., 2., 3.])"),
    ("m.tensor([1.5, -2.25])", "tensor([ 1.5000, -2.2500])"),
    ("m.tensor([True, False])", "tensor([ True, False])"),
    ("m.tensor(True)", "tensor(True)"),
    ("m.tensor(3.5)", "tensor(3.5000)"),
    ("m.tensor(7)", "tensor(7)"),
    ("m.tensor([])", "tensor([])"),
    ("m.zeros(2, 0)", "tensor([], size=(2, 0))"),
    ("m.zeros(0, dtype=m.int64)", "tensor([], dtype=lucid.int64)"),
    ("m.tensor([[1.5, 2.0], [3.0, 4.0]])", "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]])"),
    ("m.tensor([1.0, 2.0], dtype=m.float64)", "tensor([1., 2.], dtype=lucid.float64)"),
    ("m.tensor([1.0, 2.0], requires_grad=True)", "tensor([1., 2.], requires_grad=True)"),
    ("m.tensor([1.0, 2.0], requires_grad=True) * 2", "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    ("m.tensor([1e10, 1.0])", "tensor([1.0000e+10, 1.0000e+00])"),
    ("m.tensor([1e-5, 1.0])", "tensor([1.0000e-05, 1.0000e+00])"),
    ("m.tensor([1.0, 10000.0])", "tensor([1.0000e+00, 1.0000e+04])"),
    ("m.tensor([float('nan'), float('inf'), -1.5])", "tensor([    nan,     inf, -1.5000])"),
    (
        "m.arange(12.0).reshape(3, 4)",
        "tensor([[ 0.,  1.,  2.,  3.],\n"
        "        [ 4.,  5.,  6.,  7.],\n"
        "        [ 8.,  9., 10., 11.]])",
    ),
    (
        "m.arange(2000.0)",
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])",
    ),
    (
        "m.arange(30.0).reshape(2, 15) * 1.5",
        "tensor([[ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "         12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000],\n"
        "        [22.5000, 24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000,\n"
        "         34.5000, 36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000]])",
    ),
    ("m.tensor([1, 2], dtype=m.int32)", "tensor([1, 2], dtype=lucid.int32)"),
    ("m.tensor([0.5, 1.5], dtype=m.float16)", "tensor([0.5000, 1.5000], dtype=lucid.float16)"),
    (
        "m.arange(24).reshape(2, 3, 4)",
        "tensor([[[ 0,  1,  2,  3],\n"
        "         [ 4,  5,  6,  7],\n"
        "         [ 8,  9, 10, 11]],\n"
        "\n"
        "        [[12, 13, 14, 15],\n"
        "         [16, 17, 18, 19],\n"
        "         [20, 21, 22, 23]]])",
    ),
    (
        "m.tensor(2.0, dtype=m.float64, requires_grad=True)",
        "tensor(2., dtype=lucid.float64, requires_grad=True)",
    ),
    (
        "m.arange(1200).reshape(30, 40)",
        "tensor([[   0,    1,    2,  ...,   37,   38,   39],\n"
        "        [  40,   41,   42,  ...,   77,   78,   79],\n"
        "        [  80,   81,   82,  ...,  117,  118,  119],\n"
        "        ...,\n"
        "        [1080, 1081, 1082,  ..., 1117, 1118, 1119],\n"
        "        [1120, 1121, 1122,  ..., 1157, 1158, 1159],\n"
        "        [1160, 1161, 1162,  ..., 1197, 1198, 1199]])",
    ),
    ("m.tensor([123456789.0, 0.5])", "tensor([1.2346e+08, 5.0000e-01])"),
]


@pytest.mark.parametrize(("expression", "expected"), REPR_CASES, ids=[c[0] for c in REPR_CASES])
def test_repr_matches_pytorch_format(expression, expected):
    assert repr(eval(expression, {"m": lucid})) == expected


@pytest.mark.parametrize(
    "expression",
    [case[0] for case in REPR_CASES]
    + [
        "m.tensor([0.001, 1000.0])",
        "m.tensor([[-0.0, 1.0], [2.5, float('-inf')]])",
        "m.zeros(3, 0, 2, dtype=m.float64)",
        "m.tensor([], dtype=m.bool)",
        "m.arange(2000).reshape(2, 1000) * 1.25",
        "m.tensor([[1e-9]], requires_grad=True) * 3",
        "m.tensor([[1, 2]], dtype=m.uint8)",
        "m.ones(3, 3, 3, 3, dtype=m.int8)",
        "m.tensor([100000.0, 2.5, -3.0]).exp()",
    ],
)
def test_repr_is_identical_to_torch(expression):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    expected = repr(eval(expression, {"m": torch})).replace("torch.", "lucid.")
    assert repr(eval(expression, {"m": lucid})) == expected


def test_repr_under_float64_default_dtype_hides_float64_suffix():
    lucid.set_default_dtype(lucid.float64)
    assert repr(lucid.tensor([1.5])) == "tensor([1.5000])"
    assert repr(lucid.tensor([1.5], dtype=lucid.float32)) == "tensor([1.5000], dtype=lucid.float32)"


def test_str_is_repr():
    x = lucid.tensor([1.0, 2.0])
    assert str(x) == repr(x)


def test_format_of_zero_dim_tensor_formats_its_value():
    assert f"{lucid.tensor(2.5):.2f}" == "2.50"


# ------------------------------------------------------------------ metadata
def test_shape_dtype_ndim_and_size():
    x = lucid.zeros(2, 3)
    assert x.shape == (2, 3)
    assert isinstance(x.shape, lucid.Size) and isinstance(x.shape, tuple)
    assert repr(x.shape) == "lucid.Size([2, 3])"
    assert x.dtype == lucid.float32
    assert x.ndim == 2 and x.dim() == 2
    assert x.size() == (2, 3)
    assert x.size(0) == 2 and x.size(-1) == 3
    assert x.numel() == 6
    assert x.shape.numel() == 6


def test_size_slices_and_concatenations_stay_sizes():
    shape = lucid.zeros(2, 3, 4).shape
    assert repr(shape[1:]) == "lucid.Size([3, 4])"
    assert repr(shape + (5,)) == "lucid.Size([2, 3, 4, 5])"
    assert repr((1,) + shape) == "lucid.Size([1, 2, 3, 4])"
    assert shape[0] == 2 and type(shape[0]) is int


def test_size_with_out_of_range_dim_raises():
    with pytest.raises(
        IndexError,
        match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$",
    ):
        lucid.zeros(2, 3).size(2)


def test_zero_dim_tensor_metadata():
    x = lucid.tensor(3.0)
    assert x.shape == () and x.ndim == 0 and x.numel() == 1


def test_element_size_and_floating_point():
    assert lucid.zeros(1).element_size() == 4
    assert lucid.zeros(1, dtype=lucid.float64).element_size() == 8
    assert lucid.zeros(1).is_floating_point()
    assert not lucid.zeros(1, dtype=lucid.int64).is_floating_point()


# --------------------------------------------------------------- conversions
def test_item_returns_python_scalars():
    assert lucid.tensor(2.5).item() == 2.5
    assert type(lucid.tensor(2.5).item()) is float
    assert type(lucid.tensor(2).item()) is int
    assert type(lucid.tensor(True).item()) is bool
    assert lucid.tensor([[7]]).item() == 7


def test_tolist_returns_nested_python_lists():
    x = lucid.tensor([[1, 2], [3, 4]])
    assert x.tolist() == [[1, 2], [3, 4]]
    assert type(x.tolist()[0][0]) is int
    assert lucid.tensor(1.5).tolist() == 1.5


def test_numpy_shares_memory():
    x = lucid.tensor([1.0, 2.0])
    array = x.numpy()
    assert isinstance(array, np.ndarray)
    array[0] = 9.0
    assert x.tolist() == [9.0, 2.0]
    x.add_(1.0)
    assert array.tolist() == [10.0, 3.0]


def test_numpy_of_detached_tensor_requiring_grad_works():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    assert x.detach().numpy().tolist() == [1.0, 2.0]


def test_array_protocol():
    x = lucid.tensor([1.0, 2.0])
    assert np.asarray(x).tolist() == [1.0, 2.0]
    np.asarray(x)[1] = 5.0
    assert x.tolist() == [1.0, 5.0]
    assert np.array(x, dtype=np.float64).dtype == np.float64


def test_len_and_iteration():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and rows[1].tolist() == [3.0, 4.0]


def test_len_and_iteration_of_zero_dim_tensor_raise():
    with pytest.raises(TypeError, match="^len\\(\\) of a 0-d tensor$"):
        len(lucid.tensor(1.0))
    with pytest.raises(TypeError, match="^iteration over a 0-d tensor$"):
        iter(lucid.tensor(1.0))


def test_python_number_conversions():
    assert float(lucid.tensor(2.5)) == 2.5
    assert int(lucid.tensor(2.7)) == 2
    assert bool(lucid.tensor(0.0)) is False
    assert [10, 20, 30][lucid.tensor(1)] == 20


# ----------------------------------------------------------- autograd fields
def test_requires_grad_settable_on_leaf():
    x = lucid.tensor([1.0, 2.0])
    assert not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf


def test_requires_grad_underscore_returns_self():
    x = lucid.tensor([1.0, 2.0])
    assert x.requires_grad_() is x
    assert x.requires_grad
    assert x.requires_grad_(False) is x
    assert not x.requires_grad


def test_grad_is_settable_including_none():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None
    g = lucid.ones(2)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None
    x.grad = lucid.ones(2)
    del x.grad
    assert x.grad is None


def test_grad_of_wrong_size_is_rejected():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^attempting to assign a gradient of size '\\[3\\]'"):
        x.grad = lucid.ones(3)


def test_grad_of_wrong_dtype_is_rejected():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="^attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype "
        "'Float'",
    ):
        x.grad = lucid.ones(2, dtype=lucid.float64)


def test_grad_of_wrong_type_is_rejected():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        TypeError, match="^assigned grad expected to be a Tensor or None but got grad of type int$"
    ):
        x.grad = 3


def test_grad_fn_and_is_leaf():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert x.grad_fn is None and x.is_leaf
    assert y.grad_fn.name() == "MulBackward0" and not y.is_leaf
    assert y.requires_grad


def test_data_shares_storage_and_is_untracked():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    data = x.data
    assert not data.requires_grad and data.is_leaf and data.grad_fn is None
    data.add_(1.0)
    assert x.tolist() == [2.0, 3.0]
    # changes through .data are invisible to autograd
    assert x._version == 0


def test_data_is_assignable():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    x.data = lucid.tensor([5.0, 6.0, 7.0])
    assert x.tolist() == [5.0, 6.0, 7.0]
    assert x.requires_grad and x.shape == (3,)


def test_detach_shares_storage_and_drops_graph():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    detached = y.detach()
    assert not detached.requires_grad and detached.is_leaf and detached.grad_fn is None
    assert np.shares_memory(detached.numpy(), y.detach().numpy())
    detached.mul_(10.0)
    assert y.tolist() == [20.0, 40.0]


def test_detach_underscore_turns_tensor_into_leaf_in_place():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_clone_copies_and_stays_in_graph():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    assert y.grad_fn.name() == "CloneBackward0"
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_clone_of_plain_tensor_is_independent():
    x = lucid.tensor([1.0, 2.0])
    y = x.clone()
    y.add_(1.0)
    assert x.tolist() == [1.0, 2.0]


def test_tensor_backward_accepts_gradient_retain_graph_create_graph_inputs():
    x = lucid.tensor([3.0, 4.0], requires_grad=True)
    w = lucid.tensor([1.0, 1.0], requires_grad=True)
    y = (x * x * w).sum()
    y.backward(gradient=lucid.tensor(2.0), retain_graph=True, inputs=[x])
    assert x.grad.tolist() == [12.0, 16.0]
    assert w.grad is None
    y.backward(create_graph=True)
    assert x.grad.tolist() == [18.0, 24.0]
    assert w.grad.requires_grad


def test_output_nr_of_multi_output_op():
    x = lucid.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    first, second = x.split(2)
    assert first.output_nr == 0 and second.output_nr == 1


# -------------------------------------------------------------------- casts
def test_cast_methods():
    x = lucid.tensor([1.5, -2.7])
    assert x.float().dtype == lucid.float32
    assert x.double().dtype == lucid.float64
    assert x.half().dtype == lucid.float16
    assert x.long().dtype == lucid.int64 and x.long().tolist() == [1, -2]
    assert x.int().dtype == lucid.int32
    assert x.bool().dtype == lucid.bool and x.bool().tolist() == [True, True]
    assert x.to(lucid.float64).dtype == lucid.float64
    assert x.type(lucid.int32).dtype == lucid.int32


def test_type_without_argument_names_the_tensor_type():
    assert lucid.zeros(1).type() == "lucid.FloatTensor"
    assert lucid.zeros(1, dtype=lucid.float64).type() == "lucid.DoubleTensor"
    assert lucid.zeros(1, dtype=lucid.int64).type() == "lucid.LongTensor"
    assert lucid.zeros(1, dtype=lucid.bool).type() == "lucid.BoolTensor"


def test_to_reads_a_python_float_value_or_type_as_float64():
    # PyTorch's argument parser reads a float value as its type, and the type `float` as float64
    x = lucid.tensor([1.5])
    assert x.to(1.5).dtype == lucid.float64 and x.to(float).dtype == lucid.float64


def test_cast_to_same_dtype_returns_self():
    x = lucid.tensor([1.0, 2.0])
    assert x.float() is x
    assert x.to(lucid.float32) is x


def test_cast_is_differentiable_and_gradient_keeps_input_dtype():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype == lucid.float32
    assert x.grad.tolist() == [2.0, 4.0]


# ------------------------------------------------------------------- layout
def test_contiguous_and_is_contiguous():
    x = lucid.ones(2, 3)
    assert x.is_contiguous()
    assert x.contiguous() is x
    transposed = x.t()
    assert not transposed.is_contiguous()
    assert transposed.stride() == (1, 3)
    made = transposed.contiguous()
    assert made.is_contiguous() and made.stride() == (2, 1)
    assert made.tolist() == transposed.tolist()


# ---------------------------------------------------------------- operators
def test_arithmetic_operators_and_reflected_forms():
    x = lucid.tensor([1.0, 2.0])
    assert (x + 2).tolist() == [3.0, 4.0]
    assert (2 + x).tolist() == [3.0, 4.0]
    assert (x - 2).tolist() == [-1.0, 0.0]
    assert (2 - x).tolist() == [1.0, 0.0]
    assert (x * 3).tolist() == [3.0, 6.0]
    assert (3 * x).tolist() == [3.0, 6.0]
    assert (x / 2).tolist() == [0.5, 1.0]
    assert (2 / x).tolist() == [2.0, 1.0]
    assert (x**2).tolist() == [1.0, 4.0]
    assert (2**x).tolist() == [2.0, 4.0]
    assert (-x).tolist() == [-1.0, -2.0]
    assert abs(-x).tolist() == [1.0, 2.0]
    assert (-x).abs().tolist() == [1.0, 2.0]
    assert (x // 1.5).tolist() == [0.0, 1.0]
    assert (x % 1.5).tolist() == [1.0, 0.5]


def test_matmul_operator():
    a = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = lucid.tensor([1.0, 1.0])
    assert (a @ a).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert (a @ v).tolist() == [3.0, 7.0]
    assert (v @ a).tolist() == [4.0, 6.0]
    assert (v @ v).item() == 2.0


def test_inplace_operators_keep_identity_and_bump_version():
    x = lucid.tensor([1.0, 2.0])
    alias = x
    x += 1
    x *= 2
    x -= 1
    x /= 2
    assert x is alias
    assert x.tolist() == [1.5, 2.5]
    assert x._version == 4


def test_inplace_operator_on_non_leaf_stays_differentiable():
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    x = w * 1.0
    alias = x
    x *= 3
    assert x is alias
    assert x.grad_fn.name() == "MulBackward0"
    x.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_inplace_true_division_of_integer_tensor_raises():
    x = lucid.tensor([1, 2])
    with pytest.raises(
        RuntimeError, match="^result type Float can't be cast to the desired output type Long$"
    ):
        x /= 2


def test_comparison_operators_give_bool_tensors():
    x = lucid.tensor([1.0, 2.0])
    assert (x == 1).tolist() == [True, False]
    assert (x != 1).tolist() == [False, True]
    assert (x < 2).tolist() == [True, False]
    assert (x <= 1).tolist() == [True, False]
    assert (x > 1).tolist() == [False, True]
    assert (x >= 2).tolist() == [False, True]
    assert (1 < x).tolist() == [False, True]
    assert (x == lucid.tensor([1.0, 3.0])).dtype == lucid.bool


def test_comparison_results_do_not_require_grad():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    result = x > 1
    assert not result.requires_grad and result.grad_fn is None


def test_operators_on_integer_tensors_promote_like_pytorch():
    x = lucid.tensor([1, 2])
    assert (x + 1).dtype == lucid.int64
    assert (x * 1.5).dtype == lucid.float32
    assert (x / 2).dtype == lucid.float32
    assert (x / 2).tolist() == [0.5, 1.0]
    assert (x // 2).tolist() == [0, 1]


def test_bool_operators():
    x = lucid.tensor([True, False])
    assert (~x).tolist() == [False, True]
    assert (x & x).tolist() == [True, False]
    assert (x | ~x).tolist() == [True, True]
    assert (x ^ x).tolist() == [False, False]


def test_negating_bool_tensor_raises():
    with pytest.raises(
        RuntimeError,
        match="^Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
        "to invert a mask, use the `~` or `logical_not\\(\\)` operator instead.$",
    ):
        -lucid.tensor([True, False])


def test_tensor_is_hashable_by_identity():
    x = lucid.tensor([1.0])
    y = lucid.tensor([1.0])
    assert len({x, y, x}) == 2


def test_dlpack_export_shares_memory_with_torch_and_numpy():
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    x = lucid.arange(6.0).reshape(2, 3)
    shared = torch.from_dlpack(x)
    shared[0, 0] = 42.0
    assert x[0, 0].item() == 42.0
    assert np.shares_memory(np.from_dlpack(x), x.numpy())


def test_dlpack_export_of_a_tensor_requiring_grad_raises():
    x = lucid.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        x.__dlpack__()


def test_where_keeps_zero_dim_shapes():
    x = lucid.tensor(2.0)
    for condition in (True, False):
        assert lucid.where(lucid.tensor(condition), x, 0.0).shape == ()
        assert lucid.where(lucid.tensor(condition), 0.0, x).shape == ()
        assert lucid.where(lucid.tensor(condition), x, x * 3).shape == ()


def test_tensor_constructor_with_no_arguments_is_empty_as_in_torch():
    assert lucid.Tensor().shape == (0,) and lucid.Tensor().dtype == lucid.float32


# view(dtype) reads the same bits as another dtype; each case runs on lucid and on torch
_VIEW_DTYPE_CASES = [
    lambda lib: lib.ones(2).view(lib.int32),
    lambda lib: lib.tensor([-1.5, 2.0], dtype=lib.float64).view(lib.int64),
    lambda lib: lib.ones(2, 4).view(lib.float64),
    lambda lib: lib.ones(4, dtype=lib.float64).view(lib.float32),
    lambda lib: lib.ones(2, 2, dtype=lib.uint8).view(lib.bool),
    lambda lib: lib.arange(6, dtype=lib.int16).view(lib.float16),
    lambda lib: lib.ones(4, 2)[:, :1].view(lib.float16),
    lambda lib: lib.ones(3, 4)[:, 2:].view(lib.int16),
    lambda lib: lib.ones(3, 4)[:, :2].view(lib.float64),
]
_VIEW_DTYPE_ERRORS = [
    lambda lib: lib.ones(()).view(lib.float64),
    lambda lib: lib.ones(4, 2).t().view(lib.float64),
    lambda lib: lib.ones(2, 3).view(lib.float64),
    lambda lib: lib.ones(5)[1:].view(lib.float64),
    lambda lib: lib.ones(3, 3)[:, :2].view(lib.float64),
]


@pytest.mark.parametrize("case", _VIEW_DTYPE_CASES)
def test_view_dtype_reinterprets_the_bits_as_torch(case):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    ours, theirs = case(lucid), case(torch)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("case", _VIEW_DTYPE_ERRORS)
def test_view_dtype_refuses_what_torch_refuses(case):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    with pytest.raises(RuntimeError) as expected:
        case(torch)
    with pytest.raises(RuntimeError) as error:
        case(lucid)
    assert str(error.value) == str(expected.value)


def test_view_dtype_shares_memory_and_version_and_has_no_gradient():
    x = lucid.ones(4, requires_grad=True)
    bits = x.view(lucid.int32)
    assert not bits.requires_grad and bits.grad_fn is None
    assert not x.view(lucid.float32).requires_grad  # not differentiable, as in PyTorch
    base = lucid.ones(4)
    view = base.view(lucid.int32)
    view[0] = 0
    assert base.tolist() == [0.0, 1.0, 1.0, 1.0] and base._version == 1
