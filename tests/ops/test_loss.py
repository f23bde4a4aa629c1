"""Loss ops: PyTorch's errors and warnings, and options the op catalogue cannot express."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.ops import loss


def _logits() -> lucid.Tensor:
    return lucid.from_numpy(np.linspace(-1.0, 1.0, 12).reshape(3, 4))


def test_bad_reduction_string_raises_value_error() -> None:
    with pytest.raises(ValueError, match="^bad is not a valid value for reduction$"):
        loss.mse_loss(_logits(), _logits(), reduction="bad")
    with pytest.raises(ValueError, match="^bad is not a valid value for reduction$"):
        loss.cross_entropy(_logits(), lucid.tensor([0, 1, 2]), reduction="bad")


def test_target_batch_size_mismatch_raises() -> None:
    message = r"^Expected input batch_size \(3\) to match target batch_size \(2\)\.$"
    with pytest.raises(ValueError, match=message):
        loss.cross_entropy(_logits(), lucid.tensor([0, 1]))


def test_target_out_of_bounds_raises_index_error() -> None:
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        loss.cross_entropy(_logits(), lucid.tensor([0, 1, 5]))
    with pytest.raises(IndexError, match=r"^Target -3 is out of bounds\.$"):
        loss.nll_loss(_logits(), lucid.tensor([0, -3, 1]))


def test_float_class_target_raises_dtype_error() -> None:
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got"):
        loss.cross_entropy(_logits(), lucid.tensor([0.0, 1.0, 2.0]))


def test_spatial_target_shape_mismatch_raises() -> None:
    input = lucid.zeros(3, 4, 5)
    target = lucid.zeros(3, 6, dtype=lucid.int64)
    with pytest.raises(RuntimeError, match=r"^Expected target size \[3, 5\], got \[3, 6\]$"):
        loss.nll_loss(input, target)


def test_weight_of_wrong_size_raises() -> None:
    with pytest.raises(RuntimeError, match="for all 4 classes or no classes"):
        loss.cross_entropy(_logits(), lucid.tensor([0, 1, 2]), weight=lucid.ones(3))


def test_label_smoothing_out_of_range_raises() -> None:
    with pytest.raises(RuntimeError, match=r"^label_smoothing must be between 0\.0 and 1\.0"):
        loss.cross_entropy(_logits(), lucid.tensor([0, 1, 2]), label_smoothing=1.5)


def test_binary_cross_entropy_input_outside_unit_interval_raises() -> None:
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        loss.binary_cross_entropy(_logits(), lucid.zeros(3, 4))


def test_binary_cross_entropy_clamps_log_at_minus_100() -> None:
    result = loss.binary_cross_entropy(lucid.tensor([0.0, 1.0]), lucid.tensor([1.0, 0.0]))
    assert result.item() == 100.0


def test_bce_with_logits_is_finite_for_huge_logits() -> None:
    input = lucid.tensor([1e4, -1e4], requires_grad=True)
    result = loss.binary_cross_entropy_with_logits(input, lucid.tensor([0.0, 1.0]), reduction="sum")
    result.backward()
    assert result.item() == 2e4
    assert input.grad.tolist() == [1.0, -1.0]


def test_bce_with_logits_target_size_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="must be the same as input size"):
        loss.binary_cross_entropy_with_logits(_logits(), lucid.zeros(3, 5))


def test_kl_div_mean_warns_about_batchmean() -> None:
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        loss.kl_div(_logits(), _logits().exp())


def test_mse_loss_warns_on_broadcast_target() -> None:
    with pytest.warns(UserWarning, match="different to the input size"):
        loss.mse_loss(_logits(), lucid.zeros(4))


def test_negative_beta_and_delta_raise() -> None:
    with pytest.raises(RuntimeError, match="does not support negative values for beta"):
        loss.smooth_l1_loss(_logits(), _logits(), beta=-1.0)
    with pytest.raises(RuntimeError, match="does not support non-positive values for delta"):
        loss.huber_loss(_logits(), _logits(), delta=0.0)


def test_cross_entropy_grad_fn_is_nll_loss_backward() -> None:
    input = _logits().requires_grad_()
    assert loss.cross_entropy(input, lucid.tensor([0, 1, 2])).grad_fn.name() == "NllLossBackward0"


def test_all_ignored_targets_give_nan_mean_like_torch() -> None:
    result = loss.cross_entropy(_logits(), lucid.tensor([-100, -100, -100]))
    assert np.isnan(result.item())


def test_cross_entropy_double_backward_matches_finite_differences() -> None:
    input = _logits().requires_grad_()
    target = lucid.tensor([0, -100, 3])
    weight = lucid.tensor([1.0, 2.0, 0.5, 1.5], dtype=lucid.float64)

    def fn(x: lucid.Tensor) -> lucid.Tensor:
        return loss.cross_entropy(x, target, weight=weight, label_smoothing=0.1)

    assert lucid.autograd.gradgradcheck(fn, (input,))
