"""Parity of lucid's activation and loss modules with torch.nn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid.nn.modules import activation as A
from lucid.nn.modules import loss as L
from tests.nn.parity import TOLERANCES, assert_close, check_forward_backward, check_repr_and_keys
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

DTYPES = ["float64", "float32"]

# (name, constructor args, constructor kwargs)
ACTIVATIONS = [
    ("ReLU", (), {}),
    ("ReLU", (), {"inplace": True}),
    ("LeakyReLU", (0.2,), {}),
    ("LeakyReLU", (), {"inplace": True}),
    ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}),
    ("SiLU", (), {"inplace": True}),
    ("Tanh", (), {}),
    ("Sigmoid", (), {}),
    ("Softmax", (), {"dim": 1}),
    ("Softmax", (-1,), {}),
    ("LogSoftmax", (), {"dim": 0}),
    ("LogSoftmax", (1,), {}),
    ("ELU", (), {"alpha": 0.5}),
    ("ELU", (), {"inplace": True}),
    ("Softplus", (), {"beta": 2.0, "threshold": 3.0}),
    ("Softplus", (), {}),
    ("Mish", (), {}),
    ("Mish", (), {"inplace": True}),
    ("Hardtanh", (-0.5, 0.7), {}),
    ("Hardtanh", (), {"inplace": True}),
]


def _activation_input(dtype: str) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal((4, 5)) * 2
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "args", "kwargs"), ACTIVATIONS)
def test_activation_parity(name: str, args: tuple, kwargs: dict, dtype: str) -> None:
    torch_module = getattr(torch.nn, name)(*args, **kwargs)
    lucid_module = getattr(A, name)(*args, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    x = _activation_input(dtype)
    if not kwargs.get("inplace", False):
        check_forward_backward(torch_module, lucid_module, [x], dtype)
        return
    # in-place on a leaf that requires grad is an error, so act on a non-leaf and check that
    # the input itself was overwritten and gradients still flow back through it
    rtol, atol = TOLERANCES[dtype]
    tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
    t_inner, l_inner = tx * 1.5, lx * 1.5
    t_out, l_out = torch_module(t_inner), lucid_module(l_inner)
    assert l_out is l_inner
    assert_close(l_out, t_out, rtol, atol, "output")
    weights = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    (t_out * torch.tensor(weights)).sum().backward()
    (l_out * lucid.tensor(weights)).sum().backward()
    assert_close(lx.grad, tx.grad, rtol, atol, "input grad")


def test_activation_defaults_and_errors() -> None:
    assert repr(A.Softmax()) == repr(torch.nn.Softmax()) == "Softmax(dim=None)"
    assert repr(A.GELU()) == "GELU(approximate='none')"
    assert repr(A.Hardtanh(inplace=True)) == repr(torch.nn.Hardtanh(inplace=True))
    with pytest.raises(AssertionError, match=r"max_val \(0\) must be greater than min_val \(1\)"):
        A.Hardtanh(1, 0)
    with pytest.warns(FutureWarning, match="min_value` is deprecated"):
        module = A.Hardtanh(min_value=-2.0)
    assert module.min_val == -2.0
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = A.Softmax()(lucid.ones(2, 3))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3))


# ------------------------------------------------------------------------------ losses
def _regression_inputs(dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(2)
    return [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype)]


def test_softmax_rows_with_a_small_sum_match_the_shifted_form(rng: np.random.Generator) -> None:
    # rows whose exponentials sum below 1 (or to 0) are redone with their max subtracted,
    # beside rows that are not; logits above 64 take the shifted form for every row
    x = rng.standard_normal((5, 64)).astype(np.float32)
    x[1] -= 100.0
    x[2] = -np.inf
    x[2, 7] = -95.0
    x[3] = x[3] * 0.1 - 6.0
    rtol, atol = TOLERANCES["float32"]
    for logits in (x, x + 70.0):
        lucid_x, torch_x = lucid.tensor(logits, requires_grad=True), torch.tensor(logits)
        torch_x.requires_grad_(True)
        lucid_y, torch_y = lucid.softmax(lucid_x, -1), torch.softmax(torch_x, -1)
        assert_close(lucid_y, torch_y, rtol, atol, "output")
        weights = rng.standard_normal(x.shape).astype(np.float32)
        lucid_y.backward(lucid.tensor(weights))
        torch_y.backward(torch.tensor(weights))
        assert_close(lucid_x.grad, torch_x.grad, rtol, atol, "input grad")


def test_float32_gelu_follows_the_float64_one_over_a_wide_range() -> None:
    # the float32 kernel computes in float32: its CDF must hold up in both tails
    x = np.linspace(-12.0, 12.0, 24001).astype(np.float32)
    reference = lucid.tensor(x.astype(np.float64), requires_grad=True)
    single = lucid.tensor(x, requires_grad=True)
    for tensor in (reference, single):
        lucid.nn.functional.gelu(tensor).sum().backward()
    expected = lucid.nn.functional.gelu(reference).detach().numpy()
    got = lucid.nn.functional.gelu(single).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=5e-7)
    np.testing.assert_allclose(single.grad.numpy(), reference.grad.numpy(), rtol=1e-6, atol=5e-7)


REGRESSION = [
    ("MSELoss", {}),
    ("MSELoss", {"reduction": "sum"}),
    ("L1Loss", {"reduction": "none"}),
    ("L1Loss", {}),
    ("SmoothL1Loss", {"beta": 0.5}),
    ("SmoothL1Loss", {"reduction": "none"}),
    ("HuberLoss", {"delta": 0.7}),
    ("HuberLoss", {"reduction": "sum"}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kwargs"), REGRESSION)
def test_regression_loss_parity(name: str, kwargs: dict, dtype: str) -> None:
    torch_module, lucid_module = getattr(torch.nn, name)(**kwargs), getattr(L, name)(**kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, _regression_inputs(dtype), dtype)


def _class_inputs(dtype: str, ignore: int | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((5, 4)).astype(dtype)
    target = rng.integers(0, 4, size=5)
    if ignore is not None:
        target[1] = ignore
    return [logits, target]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"reduction": "sum", "label_smoothing": 0.1},
        {"weight": [0.5, 1.0, 2.0, 1.5]},
        {"weight": [0.5, 1.0, 2.0, 1.5], "label_smoothing": 0.2, "reduction": "none"},
        {"ignore_index": 2},
    ],
)
def test_cross_entropy_parity(kwargs: dict, dtype: str) -> None:
    torch_kwargs, lucid_kwargs = dict(kwargs), dict(kwargs)
    if "weight" in kwargs:
        weight = np.array(kwargs["weight"], dtype=dtype)
        torch_kwargs["weight"], lucid_kwargs["weight"] = torch.tensor(weight), lucid.tensor(weight)
    torch_module = torch.nn.CrossEntropyLoss(**torch_kwargs)
    lucid_module = L.CrossEntropyLoss(**lucid_kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    inputs = _class_inputs(dtype, kwargs.get("ignore_index", -100))
    check_forward_backward(torch_module, lucid_module, inputs, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_probability_targets(dtype: str) -> None:
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((3, 5)).astype(dtype)
    target = rng.random((3, 5)).astype(dtype)
    target /= target.sum(1, keepdims=True)
    kwargs = {"label_smoothing": 0.1}
    check_forward_backward(
        torch.nn.CrossEntropyLoss(**kwargs), L.CrossEntropyLoss(**kwargs), [logits, target], dtype
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("use_weight", [False, True])
def test_nll_loss_parity(use_weight: bool, dtype: str) -> None:
    weight = np.array([1.0, 0.2, 3.0, 0.7], dtype=dtype) if use_weight else None
    torch_module = torch.nn.NLLLoss(None if weight is None else torch.tensor(weight))
    lucid_module = L.NLLLoss(None if weight is None else lucid.tensor(weight))
    check_repr_and_keys(torch_module, lucid_module)
    logits, target = _class_inputs(dtype, ignore=-100)
    log_probs = torch.log_softmax(torch.tensor(logits), 1).numpy()
    check_forward_backward(torch_module, lucid_module, [log_probs, target], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("use_weight", [False, True])
def test_bce_parity(use_weight: bool, dtype: str) -> None:
    rng = np.random.default_rng(5)
    probs = rng.uniform(0.05, 0.95, (4, 3)).astype(dtype)
    target = rng.random((4, 3)).astype(dtype)
    weight = rng.random(3).astype(dtype) if use_weight else None
    torch_module = torch.nn.BCELoss(None if weight is None else torch.tensor(weight))
    lucid_module = L.BCELoss(None if weight is None else lucid.tensor(weight))
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [probs, target], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_bce_with_logits_parity(reduction: str, dtype: str) -> None:
    rng = np.random.default_rng(6)
    logits = (rng.standard_normal((4, 3)) * 3).astype(dtype)
    target = rng.random((4, 3)).astype(dtype)
    weight, pos_weight = rng.random(3).astype(dtype), rng.uniform(0.5, 3, 3).astype(dtype)
    torch_module = torch.nn.BCEWithLogitsLoss(
        torch.tensor(weight), reduction=reduction, pos_weight=torch.tensor(pos_weight)
    )
    lucid_module = L.BCEWithLogitsLoss(
        lucid.tensor(weight), reduction=reduction, pos_weight=lucid.tensor(pos_weight)
    )
    check_repr_and_keys(torch_module, lucid_module)
    assert isinstance(lucid_module.pos_weight, lucid.Tensor)
    assert dict(lucid_module.named_parameters()) == {}
    check_forward_backward(torch_module, lucid_module, [logits, target], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "kwargs", [{"reduction": "batchmean"}, {"reduction": "sum", "log_target": True}]
)
def test_kl_div_parity(kwargs: dict, dtype: str) -> None:
    rng = np.random.default_rng(7)
    log_probs = torch.log_softmax(torch.tensor(rng.standard_normal((3, 4))), 1).numpy()
    target = torch.softmax(torch.tensor(rng.standard_normal((3, 4))), 1).numpy()
    if kwargs.get("log_target"):
        target = np.log(target)
    inputs = [log_probs.astype(dtype), target.astype(dtype)]
    torch_module, lucid_module = torch.nn.KLDivLoss(**kwargs), L.KLDivLoss(**kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, inputs, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_cosine_embedding_parity(margin: float, dtype: str) -> None:
    rng = np.random.default_rng(8)
    x1 = rng.standard_normal((5, 3)).astype(dtype)
    x2 = rng.standard_normal((5, 3)).astype(dtype)
    target = np.array([1, -1, 1, -1, -1])
    torch_module = torch.nn.CosineEmbeddingLoss(margin)
    lucid_module = L.CosineEmbeddingLoss(margin)
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [x1, x2, target], dtype)


def test_loss_buffers_and_attributes() -> None:
    weight = np.array([1.0, 2.0, 3.0])
    torch_module = torch.nn.CrossEntropyLoss(torch.tensor(weight), ignore_index=1)
    lucid_module = L.CrossEntropyLoss(lucid.tensor(weight), ignore_index=1)
    assert list(lucid_module.state_dict()) == list(torch_module.state_dict()) == ["weight"]
    assert dict(lucid_module.named_buffers())["weight"] is lucid_module.weight
    assert lucid_module.ignore_index == 1 and lucid_module.label_smoothing == 0.0
    assert L.BCEWithLogitsLoss().weight is None and L.BCEWithLogitsLoss().pos_weight is None
    assert list(L.BCEWithLogitsLoss().state_dict()) == []
    assert L.HuberLoss().delta == 1.0 and L.SmoothL1Loss().beta == 1.0


@pytest.mark.parametrize(
    ("size_average", "reduce", "expected"),
    [(False, None, "sum"), (None, False, "none"), (True, True, "mean"), (False, False, "none")],
)
def test_legacy_reduction_args(size_average, reduce, expected: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch_module = torch.nn.MSELoss(size_average, reduce)
    with pytest.warns(UserWarning) as record:
        lucid_module = L.MSELoss(size_average, reduce)
    assert lucid_module.reduction == torch_module.reduction == expected
    assert str(record[0].message) == str(caught[0].message)
    for name in ["L1Loss", "SmoothL1Loss", "KLDivLoss", "CosineEmbeddingLoss"]:
        with pytest.warns(UserWarning):
            assert getattr(L, name)(size_average=size_average, reduce=reduce).reduction == expected
    for name in ["NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"]:
        with pytest.warns(UserWarning):
            module = getattr(L, name)(None, size_average=size_average, reduce=reduce)
        assert module.reduction == expected
