"""nn.utils: gradient clipping and parameter/vector conversion against torch.nn.utils."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn.utils as nn_utils
from lucid import nn
from tests.torch_oracle import requires_torch, torch

DTYPES = [(lucid.float32, torch.float32, np.float32), (lucid.float64, torch.float64, np.float64)]
SHAPES = [(3, 4), (5,), (2, 1, 3)]


def _pair(grads: list[np.ndarray], lucid_dtype, torch_dtype):
    """Lucid and torch parameters (zeros) carrying the same gradients."""
    lucid_params, torch_params = [], []
    for grad in grads:
        lp = nn.Parameter(lucid.zeros(grad.shape, dtype=lucid_dtype))
        lp.grad = lucid.tensor(grad, dtype=lucid_dtype)
        tp = torch.nn.Parameter(torch.zeros(grad.shape, dtype=torch_dtype))
        tp.grad = torch.tensor(grad, dtype=torch_dtype)
        lucid_params.append(lp)
        torch_params.append(tp)
    return lucid_params, torch_params


def _random_grads(rng, np_dtype, scale: float = 3.0) -> list[np.ndarray]:
    return [(rng.standard_normal(shape) * scale).astype(np_dtype) for shape in SHAPES]


def _assert_same_grads(lucid_params, torch_params, rtol: float) -> None:
    for lp, tp in zip(lucid_params, torch_params):
        np.testing.assert_allclose(lp.grad.numpy(), tp.grad.numpy(), rtol=rtol, atol=1e-7)
        assert lp.grad.dtype == lp.dtype


@requires_torch
@pytest.mark.parametrize("norm_type", [1, 2.0, math.inf, 0.5, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_clip_grad_norm_matches_torch(rng, norm_type, max_norm, dtypes) -> None:
    lucid_dtype, torch_dtype, np_dtype = dtypes
    lucid_params, torch_params = _pair(_random_grads(rng, np_dtype), lucid_dtype, torch_dtype)
    total = nn_utils.clip_grad_norm_(lucid_params, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(torch_params, max_norm, norm_type=norm_type)
    rtol = 1e-5 if np_dtype == np.float32 else 1e-12
    assert isinstance(total, lucid.Tensor) and total.shape == ()
    assert total.dtype == lucid_dtype
    np.testing.assert_allclose(total.item(), expected.item(), rtol=rtol)
    _assert_same_grads(lucid_params, torch_params, rtol)


@requires_torch
def test_clip_grad_norm_single_tensor_and_generator(rng) -> None:
    grads = _random_grads(rng, np.float64)
    lucid_params, torch_params = _pair(grads, lucid.float64, torch.float64)
    total = nn_utils.clip_grad_norm_(lucid_params[0], 1.0)
    expected = torch.nn.utils.clip_grad_norm_(torch_params[0], 1.0)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    total = nn_utils.clip_grad_norm_((p for p in lucid_params), 1.0, foreach=True)
    expected = torch.nn.utils.clip_grad_norm_((p for p in torch_params), 1.0)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    _assert_same_grads(lucid_params, torch_params, 1e-12)


@requires_torch
def test_clip_grad_norm_skips_parameters_without_grad(rng) -> None:
    lucid_params, torch_params = _pair(_random_grads(rng, np.float64), lucid.float64, torch.float64)
    lucid_params.append(nn.Parameter(lucid.ones(4, dtype=lucid.float64)))
    torch_params.append(torch.nn.Parameter(torch.ones(4, dtype=torch.float64)))
    total = nn_utils.clip_grad_norm_(lucid_params, 0.1)
    expected = torch.nn.utils.clip_grad_norm_(torch_params, 0.1)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    assert lucid_params[-1].grad is None


def test_clip_grad_norm_without_grads_returns_zero() -> None:
    params = [nn.Parameter(lucid.ones(3))]
    total = nn_utils.clip_grad_norm_(params, 1.0)
    assert total.shape == () and total.item() == 0.0
    assert nn_utils.clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_norm_empty_generator_warns() -> None:
    with pytest.warns(UserWarning, match="empty generator"):
        nn_utils.clip_grad_norm_((p for p in []), 1.0)


@requires_torch
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm_nonfinite_scales_like_torch(rng, bad, norm_type) -> None:
    grads = _random_grads(rng, np.float32)
    grads[1][2] = bad
    lucid_params, torch_params = _pair(grads, lucid.float32, torch.float32)
    total = nn_utils.clip_grad_norm_(lucid_params, 1.0, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(torch_params, 1.0, norm_type=norm_type)
    np.testing.assert_equal(total.item(), expected.item())
    for lp, tp in zip(lucid_params, torch_params):
        np.testing.assert_allclose(lp.grad.numpy(), tp.grad.numpy(), rtol=1e-6, equal_nan=True)


@requires_torch
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_clip_grad_norm_nonfinite_raises_and_leaves_grads(rng, bad) -> None:
    grads = _random_grads(rng, np.float64)
    grads[0][0, 0] = bad
    lucid_params, torch_params = _pair(grads, lucid.float64, torch.float64)
    with pytest.raises(RuntimeError) as torch_error:
        torch.nn.utils.clip_grad_norm_(torch_params, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as lucid_error:
        nn_utils.clip_grad_norm_(lucid_params, 1.0, error_if_nonfinite=True)
    assert str(lucid_error.value) == str(torch_error.value)
    for lp, grad in zip(lucid_params, grads):
        np.testing.assert_array_equal(lp.grad.numpy(), grad)


@requires_torch
def test_get_total_norm_and_clip_grads_with_norm_match_torch(rng) -> None:
    lucid_params, torch_params = _pair(_random_grads(rng, np.float64), lucid.float64, torch.float64)
    total = nn_utils.get_total_norm([p.grad for p in lucid_params], 3.0)
    expected = torch.nn.utils.get_total_norm([p.grad for p in torch_params], 3.0)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    assert nn_utils.clip_grads_with_norm_(lucid_params, 2.0, total) is None
    torch.nn.utils.clip_grads_with_norm_(torch_params, 2.0, expected)
    _assert_same_grads(lucid_params, torch_params, 1e-12)


@requires_torch
def test_clip_grad_norm_records_no_graph(rng) -> None:
    lucid_params, _ = _pair(_random_grads(rng, np.float64), lucid.float64, torch.float64)
    for p in lucid_params:
        p.grad.requires_grad_(True)
    total = nn_utils.clip_grad_norm_(lucid_params, 0.1)
    assert total.grad_fn is None and not total.requires_grad


@requires_torch
@pytest.mark.parametrize("clip_value", [0.5, 2, 100.0])
@pytest.mark.parametrize("dtypes", DTYPES, ids=["float32", "float64"])
def test_clip_grad_value_matches_torch(rng, clip_value, dtypes) -> None:
    lucid_dtype, torch_dtype, np_dtype = dtypes
    grads = _random_grads(rng, np_dtype)
    grads[2][0, 0, 1] = np.nan
    lucid_params, torch_params = _pair(grads, lucid_dtype, torch_dtype)
    lucid_params.append(nn.Parameter(lucid.ones(2, dtype=lucid_dtype)))
    assert nn_utils.clip_grad_value_(lucid_params, clip_value) is None
    torch.nn.utils.clip_grad_value_(torch_params, clip_value)
    for lp, tp in zip(lucid_params, torch_params):
        np.testing.assert_array_equal(lp.grad.numpy(), tp.grad.numpy())
    assert lucid_params[-1].grad is None
    single = nn.Parameter(lucid.zeros(3))
    single.grad = lucid.tensor([-5.0, 0.25, 5.0])
    nn_utils.clip_grad_value_(single, 1.0, foreach=False)
    np.testing.assert_array_equal(single.grad.numpy(), [-1.0, 0.25, 1.0])


@requires_torch
def test_parameters_to_vector_matches_torch(rng) -> None:
    arrays = [rng.standard_normal(shape) for shape in SHAPES]
    lucid_params = [nn.Parameter(lucid.tensor(a)) for a in arrays]
    torch_params = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    vec = nn_utils.parameters_to_vector(lucid_params)
    expected = torch.nn.utils.parameters_to_vector(torch_params)
    assert vec.shape == (expected.numel(),)
    np.testing.assert_array_equal(vec.detach().numpy(), expected.detach().numpy())
    # like torch, the vector stays in the graph of the parameters
    vec.sum().backward()
    for p in lucid_params:
        np.testing.assert_array_equal(p.grad.numpy(), np.ones(p.shape))


@requires_torch
def test_vector_to_parameters_round_trip(rng) -> None:
    model = nn.Sequential()
    params = [nn.Parameter(lucid.tensor(rng.standard_normal(shape))) for shape in SHAPES]
    for index, p in enumerate(params):
        model.register_parameter(f"p{index}", p)
    vec = nn_utils.parameters_to_vector(model.parameters()).detach()
    new = vec * 2 + 1
    nn_utils.vector_to_parameters(new, model.parameters())
    for p in params:
        assert isinstance(p, nn.Parameter) and p.requires_grad and p.grad_fn is None
    round_trip = nn_utils.parameters_to_vector(params).detach()
    np.testing.assert_array_equal(round_trip.numpy(), new.numpy())
    torch_params = [torch.nn.Parameter(torch.zeros(shape, dtype=torch.float64)) for shape in SHAPES]
    torch.nn.utils.vector_to_parameters(torch.tensor(new.numpy()), torch_params)
    for p, tp in zip(params, torch_params):
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())


@requires_torch
@pytest.mark.parametrize("vec", [np.zeros(3), [0.0, 1.0], 3.0])
def test_vector_to_parameters_rejects_non_tensor_like_torch(vec) -> None:
    with pytest.raises(TypeError) as torch_error:
        torch.nn.utils.vector_to_parameters(vec, [torch.nn.Parameter(torch.zeros(3))])
    with pytest.raises(TypeError) as lucid_error:
        nn_utils.vector_to_parameters(vec, [nn.Parameter(lucid.zeros(3))])
    assert str(lucid_error.value) == str(torch_error.value)


def test_vector_to_parameters_too_short_raises() -> None:
    with pytest.raises(RuntimeError):
        nn_utils.vector_to_parameters(lucid.zeros(2), [nn.Parameter(lucid.zeros(3))])
