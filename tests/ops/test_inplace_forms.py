"""The in-place forms of pointwise, comparison, reduction, shape and scatter ops (`sin_`,
`eq_`, `cumsum_`, `t_`, `scatter_`, ...) and torch's alternative names for them, against torch:
values, grad_fn names, gradients, the version counter and the leaf error."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _library(x):
    if isinstance(x, lucid.Tensor):
        return lucid
    import torch

    return torch


def _index(x, rows):
    return _library(x).tensor(rows)


# (name, call): the same call runs on lucid and on torch; `x` is a non-leaf float64 (3, 4)
# tensor of values in (0.1, 0.9), `o` a second one that requires grad.
INPLACE_FORMS = [
    ("acos_", lambda x, o: x.acos_()),
    ("arccos_", lambda x, o: x.arccos_()),
    ("asin_", lambda x, o: x.asin_()),
    ("arcsin_", lambda x, o: x.arcsin_()),
    ("atan_", lambda x, o: x.atan_()),
    ("arctan_", lambda x, o: x.arctan_()),
    ("acosh_", lambda x, o: (x + 1.0).acosh_()),
    ("arccosh_", lambda x, o: (x + 1.0).arccosh_()),
    ("asinh_", lambda x, o: x.asinh_()),
    ("arcsinh_", lambda x, o: x.arcsinh_()),
    ("atanh_", lambda x, o: x.atanh_()),
    ("arctanh_", lambda x, o: x.arctanh_()),
    ("atan2_", lambda x, o: x.atan2_(o)),
    ("arctan2_", lambda x, o: x.arctan2_(o)),
    ("ceil_", lambda x, o: (x * 4.0).ceil_()),
    ("floor_", lambda x, o: (x * 4.0).floor_()),
    ("round_", lambda x, o: (x * 4.0).round_()),
    ("round_decimals", lambda x, o: x.round_(decimals=1)),
    ("trunc_", lambda x, o: (x * 4.0).trunc_()),
    ("fix_", lambda x, o: (x * 4.0).fix_()),
    ("cos_", lambda x, o: x.cos_()),
    ("cosh_", lambda x, o: x.cosh_()),
    ("sin_", lambda x, o: x.sin_()),
    ("sinh_", lambda x, o: x.sinh_()),
    ("tan_", lambda x, o: x.tan_()),
    ("tanh_", lambda x, o: x.tanh_()),
    ("sigmoid_", lambda x, o: x.sigmoid_()),
    ("log_", lambda x, o: x.log_()),
    ("log10_", lambda x, o: x.log10_()),
    ("log1p_", lambda x, o: x.log1p_()),
    ("log2_", lambda x, o: x.log2_()),
    ("expm1_", lambda x, o: x.expm1_()),
    ("exp2_", lambda x, o: x.exp2_()),
    ("rsqrt_", lambda x, o: x.rsqrt_()),
    ("reciprocal_", lambda x, o: x.reciprocal_()),
    ("erf_", lambda x, o: x.erf_()),
    ("erfc_", lambda x, o: x.erfc_()),
    ("square_", lambda x, o: x.square_()),
    ("sign_", lambda x, o: (x - 0.5).sign_()),
    ("negative_", lambda x, o: x.negative_()),
    ("absolute_", lambda x, o: (x - 0.5).absolute_()),
    ("eq_scalar", lambda x, o: (x * 4.0).round_().eq_(2.0)),
    ("eq_tensor", lambda x, o: x.eq_(o)),
    ("ne_", lambda x, o: x.ne_(o)),
    ("lt_", lambda x, o: x.lt_(o)),
    ("le_", lambda x, o: x.le_(0.5)),
    ("gt_", lambda x, o: x.gt_(o)),
    ("ge_", lambda x, o: x.ge_(0.5)),
    ("greater_", lambda x, o: x.greater_(o)),
    ("greater_equal_", lambda x, o: x.greater_equal_(o)),
    ("less_", lambda x, o: x.less_(0.5)),
    ("less_equal_", lambda x, o: x.less_equal_(o)),
    ("not_equal_", lambda x, o: x.not_equal_(0.5)),
    ("fmod_", lambda x, o: x.fmod_(0.3)),
    ("fmod_tensor", lambda x, o: x.fmod_(o)),
    ("true_divide_", lambda x, o: x.true_divide_(o)),
    ("divide_", lambda x, o: x.divide_(o, rounding_mode="floor")),
    ("multiply_", lambda x, o: x.multiply_(o)),
    ("subtract_", lambda x, o: x.subtract_(o, alpha=2)),
    ("lerp_", lambda x, o: x.lerp_(o, 0.3)),
    ("lerp_tensor", lambda x, o: x.lerp_(o, o)),
    ("nan_to_num_", lambda x, o: x.log().log().nan_to_num_(nan=0.5)),
    ("cumsum_", lambda x, o: x.cumsum_(1)),
    ("cumprod_", lambda x, o: x.cumprod_(0)),
    ("squeeze_", lambda x, o: x[:1].clone().squeeze_()),
    ("squeeze_dim", lambda x, o: x.unsqueeze(1).clone().squeeze_(1)),
    ("squeeze_dims", lambda x, o: x.unsqueeze(1).clone().squeeze_((0, 1))),
    ("unsqueeze_", lambda x, o: x.unsqueeze_(-1)),
    ("t_", lambda x, o: x.t_()),
    ("transpose_", lambda x, o: x.transpose_(0, 1)),
    ("swapaxes_", lambda x, o: x.swapaxes_(1, 0)),
    ("swapdims_", lambda x, o: x.swapdims_(0, -1)),
    ("tril_", lambda x, o: x.tril_()),
    ("triu_", lambda x, o: x.triu_(1)),
    ("scatter_", lambda x, o: x.scatter_(0, _index(x, [[2, 0, 1, 2]]), o[:1])),
    ("scatter_value", lambda x, o: x.scatter_(1, _index(x, [[3], [0], [1]]), 0.25)),
    (
        "scatter_add_",
        lambda x, o: x.scatter_add_(0, _index(x, [[2, 0, 2, 2], [0, 0, 1, 2]]), o[:2]),
    ),
]

# Logical ops written in place run outside autograd in torch: the tensor keeps its history.
LOGICAL_FORMS = [
    ("logical_not_", lambda x, o: (x - 0.5).round_().logical_not_()),
    ("logical_and_", lambda x, o: (x - 0.5).round_().logical_and_(o)),
    ("logical_or_", lambda x, o: (x - 0.5).round_().logical_or_(o * 0.0)),
    ("logical_xor_", lambda x, o: (x - 0.5).round_().logical_xor_(o)),
]


def _inputs(library, requires_grad=True):
    rng = np.random.default_rng(0)
    x = library.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=requires_grad)
    other = library.tensor(rng.uniform(0.1, 0.9, (3, 4)), requires_grad=requires_grad)
    return x, other


ALL_FORMS = INPLACE_FORMS + LOGICAL_FORMS


@pytest.mark.parametrize("case", ALL_FORMS, ids=[name for name, _ in ALL_FORMS])
def test_inplace_form_matches_torch_value_and_grad_fn_name(case):
    torch = pytest.importorskip("torch")
    _, call = case
    x, other = _inputs(lucid)
    result = call(x * 1.0, other)
    tx, tother = _inputs(torch)
    expected = call(tx * 1.0, tother)
    assert result.grad_fn.name() == expected.grad_fn.name().replace("torch::", "lucid::")
    assert tuple(result.shape) == tuple(expected.shape)
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


NO_DERIVATIVE = ("acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_")
DIFFERENTIABLE_FORMS = [case for case in ALL_FORMS if case[0] not in NO_DERIVATIVE]


@pytest.mark.parametrize("name", NO_DERIVATIVE)
def test_inverse_hyperbolic_inplace_forms_have_no_derivative_as_in_torch(name):
    torch = pytest.importorskip("torch")
    call = dict(INPLACE_FORMS)[name]
    for library in (torch, lucid):
        x, other = _inputs(library)
        with pytest.raises(NotImplementedError) as error:
            call(x * 1.0, other).sum().backward()
        assert (
            str(error.value)
            == f"the derivative for 'inplace version of a{name[-5:-1]}' is not implemented."
        )


@pytest.mark.parametrize(
    "case", DIFFERENTIABLE_FORMS, ids=[name for name, _ in DIFFERENTIABLE_FORMS]
)
def test_inplace_form_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    _, call = case
    x, other = _inputs(lucid)
    result = call(x * 1.0, other)
    grads = lucid.autograd.grad(result.sum(), (x, other), allow_unused=True)
    tx, tother = _inputs(torch)
    expected = torch.autograd.grad(call(tx * 1.0, tother).sum(), (tx, tother), allow_unused=True)
    for grad, grad_expected in zip(grads, expected):
        if grad_expected is None:
            assert grad is None or not grad.numpy().any()
        else:
            np.testing.assert_allclose(grad.numpy(), grad_expected.numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["logical_not_", "logical_and_", "logical_or_", "logical_xor_"])
def test_logical_inplace_form_writes_a_leaf_outside_autograd(name):
    x = lucid.tensor([0.0, 0.5, 2.0], requires_grad=True)
    arguments = () if name == "logical_not_" else (lucid.tensor([1.0, 0.0, 0.0]),)
    getattr(x, name)(*arguments)
    assert x.grad_fn is None and x.requires_grad and x._version == 1


# (method, arguments) for the direct checks: every in-place method this file covers.
DIRECT_CALLS = [
    *[
        (name, ())
        for name in (
            "acos_ arccos_ asin_ arcsin_ atan_ arctan_ asinh_ arcsinh_ atanh_ arctanh_ ceil_ "
            "floor_ round_ trunc_ fix_ cos_ cosh_ sin_ sinh_ tan_ tanh_ sigmoid_ log_ log10_ "
            "log1p_ log2_ expm1_ exp2_ rsqrt_ reciprocal_ erf_ erfc_ square_ sign_ negative_ "
            "absolute_ nan_to_num_ t_ squeeze_ tril_ triu_"
        ).split()
    ],
    ("acosh_", ()),
    ("arccosh_", ()),
    *[
        (name, (0.5,))
        for name in (
            "eq_ ne_ lt_ le_ gt_ ge_ greater_ greater_equal_ less_ less_equal_ not_equal_ fmod_ "
            "true_divide_ divide_ multiply_ subtract_"
        ).split()
    ],
    *[(name, ("other",)) for name in ("atan2_", "arctan2_")],
    ("lerp_", ("other", 0.5)),
    ("cumsum_", (0,)),
    ("cumprod_", (1,)),
    ("unsqueeze_", (0,)),
    ("transpose_", (0, 1)),
    ("swapaxes_", (0, 1)),
    ("swapdims_", (0, 1)),
    ("scatter_", (0, "index", 1.0)),
    ("scatter_add_", (0, "index", "other")),
]


def _direct_arguments(arguments, other):
    values = {"other": other, "index": lucid.tensor([[0, 1, 2, 0]])}
    return [values.get(a, a) if isinstance(a, str) else a for a in arguments]


@pytest.mark.parametrize("case", DIRECT_CALLS, ids=[name for name, _ in DIRECT_CALLS])
def test_inplace_method_returns_its_input_and_bumps_version_once(case):
    name, arguments = case
    x, other = _inputs(lucid, requires_grad=False)
    x = x + 1.0
    version = x._version
    result = getattr(x, name)(*_direct_arguments(arguments, other))
    assert result is x
    assert x._version == version + 1


@pytest.mark.parametrize("case", DIRECT_CALLS, ids=[name for name, _ in DIRECT_CALLS])
def test_inplace_method_on_leaf_requiring_grad_raises(case):
    name, arguments = case
    x, other = _inputs(lucid)
    before = x.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        getattr(x, name)(*_direct_arguments(arguments, other))
    assert x.shape == before.shape
    np.testing.assert_array_equal(x.detach().numpy(), before)


def test_inplace_writes_through_views():
    x = lucid.tensor([[0.25, 0.5], [0.75, 1.0]], dtype=lucid.float64)
    row = x[0]
    x.sin_()
    np.testing.assert_allclose(row.numpy(), np.sin([0.25, 0.5]), rtol=1e-15)
    x.eq_(x[1])
    np.testing.assert_array_equal(row.numpy(), [0.0, 0.0])


def test_metadata_inplace_forms_keep_storage_shared_with_views():
    x = lucid.arange(6.0).reshape(2, 3)
    view = x.view(6)
    x.t_()
    assert x.shape == (3, 2)
    x.mul_(2.0)
    np.testing.assert_array_equal(view.numpy(), np.arange(6.0) * 2)
    x.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
    assert x.shape == (2, 3)


@pytest.mark.parametrize(
    "name", ["sin_", "log_", "sigmoid_", "reciprocal_", "exp2_", "acosh_", "rsqrt_"]
)
def test_inplace_float_result_into_integer_tensor_raises_torch_error(name):
    torch = pytest.importorskip("torch")
    x = lucid.tensor([1, 2, 3])
    with pytest.raises(RuntimeError) as error:
        getattr(x, name)()
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.tensor([1, 2, 3]), name)()
    assert str(error.value) == str(expected.value)


def test_square_of_integer_tensor_in_place_matches_torch():
    x = lucid.tensor([1, -2, 3])
    x.square_()
    np.testing.assert_array_equal(x.numpy(), [1, 4, 9])


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(2, 3, 4).t_(),
        lambda lib: lib.ones(2.0 if False else 2).tril_(),
        lambda lib: lib.ones(3).bitwise_not_(),
        lambda lib: lib.ones(3).eq_("a"),
        lambda lib: lib.ones(3).atan2_(1.0),
        lambda lib: lib.ones(3).logical_and_(1),
        lambda lib: lib.ones(3, dtype=lib.int64).lerp_(lib.ones(3, dtype=lib.int64), 0.5),
        lambda lib: lib.ones(3).lerp_(lib.ones(3, dtype=lib.float64), 0.5),
        lambda lib: lib.ones(3).cumsum_(3),
        lambda lib: lib.ones(3).transpose_(0, 2),
        lambda lib: lib.ones(3).fmod_("a"),
    ],
)
def test_inplace_form_errors_match_torch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type) as error:
        call(lucid)
    assert str(error.value) == str(expected.value).replace("torch", "lucid")


def test_integer_and_bool_bitwise_not_in_place_matches_torch():
    x = lucid.tensor([0, 5, -3])
    x.bitwise_not_()
    np.testing.assert_array_equal(x.numpy(), [-1, -6, 2])
    flags = lucid.tensor([True, False])
    flags.bitwise_not_()
    np.testing.assert_array_equal(flags.numpy(), [False, True])


def test_comparison_in_place_keeps_the_input_dtype():
    x = lucid.tensor([1, 2, 3])
    x.gt_(1)
    assert x.dtype == lucid.int64
    np.testing.assert_array_equal(x.numpy(), [0, 1, 1])


# torch's top-level in-place functions that are forms of ops lucid has.
TOP_LEVEL_INPLACE = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
    "atanh_ ceil_ clamp_ clip_ cos_ cosh_ erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ log10_ log1p_ "
    "log2_ log_ logit_ nan_to_num_ neg_ negative_ reciprocal_ relu_ round_ rsqrt_ selu_ celu_ "
    "sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_"
).split()


@pytest.mark.parametrize("name", TOP_LEVEL_INPLACE)
def test_top_level_inplace_function_matches_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    values = rng.uniform(1.1, 1.9, (2, 3)) if "cosh" in name else rng.uniform(0.1, 0.9, (2, 3))
    arguments = (0.2, 0.8) if name in ("clamp_", "clip_") else ()
    x = lucid.tensor(values)
    result = getattr(lucid, name)(x, *arguments)
    expected = getattr(torch, name)(torch.tensor(values), *arguments)
    assert result is x
    np.testing.assert_allclose(x.numpy(), expected.numpy(), rtol=1e-12)
