"""Behaviour of the normalization family that the op catalogue cannot express."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as N
from tests.torch_oracle import functional as F
from tests.torch_oracle import requires_torch, torch


def _pair(array: np.ndarray, requires_grad: bool = True) -> tuple[lucid.Tensor, torch.Tensor]:
    return (
        lucid.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


# ------------------------------------------------------------------ dropout
def test_dropout_keeps_the_expected_fraction_and_scales_survivors() -> None:
    lucid.manual_seed(0)
    x = lucid.ones(200, 100)
    y = N.dropout(x, p=0.3).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)


def test_dropout_gradient_uses_the_same_mask() -> None:
    lucid.manual_seed(1)
    x = lucid.ones(50, 40, requires_grad=True)
    y = N.dropout(x, p=0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    assert y.grad_fn.name() == "MulBackward0"


def test_dropout_is_reproducible_under_manual_seed() -> None:
    x = lucid.ones(10, 10)
    lucid.manual_seed(3)
    first = N.dropout(x).numpy()
    lucid.manual_seed(3)
    np.testing.assert_array_equal(N.dropout(x).numpy(), first)


def test_dropout_with_p_one_gives_zeros() -> None:
    x = lucid.ones(4, 5)
    np.testing.assert_array_equal(N.dropout(x, p=1.0).numpy(), np.zeros((4, 5), np.float32))


def test_dropout_outside_training_returns_the_input() -> None:
    x = lucid.ones(3)
    assert N.dropout(x, 0.5, training=False) is x


@requires_torch
@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_out_of_range_raises_like_torch(p: float) -> None:
    with pytest.raises(ValueError, match=f"between 0 and 1, but got {p}"):
        N.dropout(lucid.ones(3), p)
    with pytest.raises(ValueError, match=f"between 0 and 1, but got {p}"):
        F.dropout(torch.ones(3), p)


def test_dropout_inplace_modifies_the_input() -> None:
    lucid.manual_seed(0)
    x = lucid.ones(20, 20)
    y = N.dropout(x, 0.5, inplace=True)
    assert y is x
    assert (x.numpy() == 0).any()


def test_dropout2d_zeroes_whole_channels() -> None:
    lucid.manual_seed(0)
    y = N.dropout2d(lucid.ones(8, 16, 3, 3), p=0.5).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    assert (per_channel == 0).any() and (per_channel != 0).any()


# ---------------------------------------------------------------- embedding
@requires_torch
def test_embedding_accumulates_repeated_indices_and_skips_padding() -> None:
    rng = np.random.default_rng(0)
    indices = np.array([[1, 2, 1], [0, 1, 4]])
    weight, torch_weight = _pair(rng.standard_normal((5, 3)))
    grad = rng.standard_normal((2, 3, 3))
    output = N.embedding(lucid.tensor(indices), weight, padding_idx=0)
    expected = F.embedding(torch.tensor(indices), torch_weight, padding_idx=0)
    output.backward(lucid.tensor(grad))
    expected.backward(torch.tensor(grad))
    np.testing.assert_allclose(weight.grad.numpy(), torch_weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(weight.grad.numpy()[0], 0.0)
    assert output.grad_fn.name() == "EmbeddingBackward0"


@requires_torch
def test_embedding_scale_grad_by_freq_matches_torch() -> None:
    indices = np.array([1, 1, 1, 3])
    weight, torch_weight = _pair(np.ones((4, 2)))
    N.embedding(lucid.tensor(indices), weight, scale_grad_by_freq=True).sum().backward()
    F.embedding(torch.tensor(indices), torch_weight, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(weight.grad.numpy(), torch_weight.grad.numpy())


@requires_torch
def test_embedding_max_norm_renormalises_used_rows_in_place() -> None:
    rng = np.random.default_rng(2)
    array = rng.standard_normal((6, 4)) * 3
    weight, torch_weight = _pair(array, requires_grad=False)
    indices = np.array([0, 2, 2])
    output = N.embedding(lucid.tensor(indices), weight, max_norm=1.0)
    expected = F.embedding(torch.tensor(indices), torch_weight, max_norm=1.0)
    np.testing.assert_allclose(output.numpy(), expected.numpy(), rtol=1e-7)
    np.testing.assert_allclose(weight.numpy(), torch_weight.numpy(), rtol=1e-7)


def test_embedding_index_out_of_range_raises() -> None:
    with pytest.raises(IndexError, match="index out of range in self"):
        N.embedding(lucid.tensor([5]), lucid.ones(5, 2))


# --------------------------------------------------------------- batch norm
@requires_torch
def test_batch_norm_updates_running_stats_with_unbiased_variance() -> None:
    x = np.random.default_rng(0).standard_normal((6, 3, 4))
    mean, torch_mean = lucid.zeros(3, dtype=lucid.float64), torch.zeros(3, dtype=torch.float64)
    var, torch_var = lucid.ones(3, dtype=lucid.float64), torch.ones(3, dtype=torch.float64)
    for _ in range(2):
        N.batch_norm(lucid.tensor(x), mean, var, training=True, momentum=0.2)
        F.batch_norm(torch.tensor(x), torch_mean, torch_var, training=True, momentum=0.2)
    np.testing.assert_allclose(mean.numpy(), torch_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), torch_var.numpy(), rtol=1e-12)


def test_batch_norm_needs_more_than_one_value_per_channel_when_training() -> None:
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        N.batch_norm(lucid.ones(1, 3), None, None, training=True)


def test_batch_norm_in_evaluation_mode_needs_running_stats() -> None:
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        N.batch_norm(lucid.ones(2, 3), None, None)


# -------------------------------------------------------------- layer norm
@requires_torch
def test_layer_norm_of_a_constant_row_is_finite_with_finite_gradients() -> None:
    array = np.full((2, 8), 1e4, np.float32)
    x, torch_x = _pair(array)
    output = N.layer_norm(x, (8,))
    expected = F.layer_norm(torch_x, (8,))
    output.sum().backward()
    expected.sum().backward()
    np.testing.assert_array_equal(output.detach().numpy(), expected.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), torch_x.grad.numpy(), atol=1e-6)


@requires_torch
def test_layer_norm_of_large_activations_matches_torch() -> None:
    array = (np.random.default_rng(0).standard_normal((4, 16)) * 1e3 + 1e5).astype(np.float32)
    np.testing.assert_allclose(
        N.layer_norm(lucid.tensor(array), (16,)).numpy(),
        F.layer_norm(torch.tensor(array), (16,)).numpy(),
        atol=1e-3,
    )


def test_layer_norm_shape_mismatch_raises_like_torch() -> None:
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 3\]"):
        N.layer_norm(lucid.ones(2, 4), (3,))


@requires_torch
def test_rms_norm_default_eps_matches_torch() -> None:
    array = np.zeros((2, 4), np.float32)
    array[0] = 1e-4
    np.testing.assert_allclose(
        N.rms_norm(lucid.tensor(array), (4,)).numpy(),
        F.rms_norm(torch.tensor(array), (4,)).numpy(),
        rtol=1e-5,
    )


# --------------------------------------------------------------- attention
@requires_torch
def test_attention_row_with_no_allowed_key_is_zero_like_torch() -> None:
    rng = np.random.default_rng(0)
    mask = np.ones((3, 3), bool)
    mask[1] = False
    arrays = [rng.standard_normal((2, 3, 4)) for _ in range(3)]
    lucid_inputs = [lucid.tensor(a, requires_grad=True) for a in arrays]
    torch_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    output = N.scaled_dot_product_attention(*lucid_inputs, attn_mask=lucid.tensor(mask))
    expected = F.scaled_dot_product_attention(*torch_inputs, attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(output.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    output.sum().backward()
    expected.sum().backward()
    for ours, theirs in zip(lucid_inputs, torch_inputs, strict=True):
        assert np.isfinite(ours.grad.numpy()).all()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


@requires_torch
@pytest.mark.parametrize(
    ("query_shape", "key_shape", "value_shape"),
    [
        ((2, 3, 5, 4), (1, 3, 6, 4), (2, 1, 6, 3)),  # batch dims broadcast
        ((1, 3, 5, 4), (1, 3, 6, 4), (2, 3, 6, 3)),  # value's batch is the widest
        ((3, 5, 4), (2, 1, 6, 4), (6, 3)),  # operands of different ranks
        ((5, 4), (6, 4), (6, 3)),  # unbatched
        ((2, 3, 0, 4), (2, 3, 6, 4), (2, 3, 6, 3)),  # no queries
        ((2, 3, 5, 4), (2, 3, 0, 4), (2, 3, 0, 3)),  # no keys: a zero output, as in PyTorch
    ],
)
def test_attention_shapes_match_torch(query_shape, key_shape, value_shape) -> None:
    rng = np.random.default_rng(0)
    pairs = [_pair(rng.standard_normal(shape)) for shape in (query_shape, key_shape, value_shape)]
    output = N.scaled_dot_product_attention(*(lucid_input for lucid_input, _ in pairs))
    expected = F.scaled_dot_product_attention(*(torch_input for _, torch_input in pairs))
    np.testing.assert_allclose(output.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    weights = rng.standard_normal(tuple(expected.shape))
    output.backward(lucid.tensor(weights))
    expected.backward(torch.tensor(weights))
    for lucid_input, torch_input in pairs:
        assert lucid_input.grad.shape == tuple(torch_input.grad.shape)
        np.testing.assert_allclose(lucid_input.grad.numpy(), torch_input.grad.numpy(), atol=1e-12)


def test_attention_of_large_scores_is_finite() -> None:
    query = lucid.full((1, 2, 4), 1e3)
    output = N.scaled_dot_product_attention(query, query, query, is_causal=True)
    assert np.isfinite(output.numpy()).all()


def test_attention_with_mask_and_is_causal_raises() -> None:
    query = lucid.ones(1, 2, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        N.scaled_dot_product_attention(
            query, query, query, attn_mask=lucid.ones(2, 2), is_causal=True
        )


def test_attention_with_dropout_zeroes_weights_and_keeps_the_mean() -> None:
    lucid.manual_seed(0)
    query = lucid.zeros(1, 64, 8)
    value = lucid.ones(1, 64, 8)
    output = N.scaled_dot_product_attention(query, query, value, dropout_p=0.5).numpy()
    assert abs(output.mean() - 1.0) < 0.1
