"""Loss ops: PyTorch's errors and warnings, and options the op catalogue cannot express."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.ops import loss
from tests.torch_oracle import functional as torch_functional
from tests.torch_oracle import requires_torch, torch


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
        loss.binary_cross_entropy(_logits(), lucid.zeros(3, 4, dtype=lucid.float64))


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


# --------------------------------------------------------- issue 17: the other losses
def _signs() -> lucid.Tensor:
    return lucid.from_numpy(np.array([[1.0, -1.0, 1.0, -1.0]] * 3))


def _new_loss_calls(library, functional) -> dict:
    """One call per loss of issue 17, on float64 leaves that require grad."""
    rng = np.random.default_rng(4)

    def leaf(*shape):
        return library.tensor(rng.uniform(-1, 1, shape), requires_grad=True)

    signs = library.tensor(np.sign(rng.uniform(-1, 1, (3, 4))))
    labels = library.tensor([[1, 3, -1, 0], [0, -1, 1, 1], [2, 1, 0, 3]])
    log_probs = library.tensor(rng.normal(size=(5, 2, 4))).log_softmax(2).detach()
    log_probs.requires_grad_()
    ctc_arguments = [library.tensor(a) for a in ([[1, 2], [3, 3]], [5, 4], [2, 2])]
    return {
        "margin_ranking_loss": lambda **r: functional.margin_ranking_loss(
            leaf(3, 4), leaf(3, 4), signs, **r
        ),
        "hinge_embedding_loss": lambda **r: functional.hinge_embedding_loss(leaf(3, 4), signs, **r),
        "soft_margin_loss": lambda **r: functional.soft_margin_loss(leaf(3, 4), signs, **r),
        "multilabel_soft_margin_loss": lambda **r: functional.multilabel_soft_margin_loss(
            leaf(3, 4), (signs > 0).double(), **r
        ),
        "multi_margin_loss": lambda **r: functional.multi_margin_loss(
            leaf(3, 4), library.tensor([0, 3, 1]), **r
        ),
        "multilabel_margin_loss": lambda **r: functional.multilabel_margin_loss(
            leaf(3, 4), labels, **r
        ),
        "poisson_nll_loss": lambda **r: functional.poisson_nll_loss(leaf(3, 4), leaf(3, 4), **r),
        "poisson_nll_loss_full": lambda **r: functional.poisson_nll_loss(
            leaf(3, 4), leaf(3, 4) + 2.0, log_input=False, full=True, **r
        ),
        "gaussian_nll_loss": lambda **r: functional.gaussian_nll_loss(
            leaf(3, 4), leaf(3, 4), leaf(3, 4).abs(), **r
        ),
        "gaussian_nll_loss_full": lambda **r: functional.gaussian_nll_loss(
            leaf(3, 4), leaf(3, 4), 0.5, full=True, **r
        ),
        "triplet_margin_loss": lambda **r: functional.triplet_margin_loss(
            leaf(3, 4), leaf(3, 4), leaf(3, 4), swap=True, **r
        ),
        "triplet_margin_with_distance_loss": lambda **r: (
            functional.triplet_margin_with_distance_loss(leaf(3, 4), leaf(3, 4), leaf(3, 4), **r)
        ),
        "ctc_loss": lambda **r: functional.ctc_loss(log_probs, *ctc_arguments, **r),
    }


@requires_torch
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_grad_fn_names_of_the_other_losses_are_torchs(reduction: str) -> None:
    lucid_calls = _new_loss_calls(lucid, F)
    torch_calls = _new_loss_calls(torch, torch_functional)
    for name, call in lucid_calls.items():
        expected = torch_calls[name](reduction=reduction).grad_fn.name()
        assert call(reduction=reduction).grad_fn.name() == expected, name


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_margin_kernels_have_no_second_derivative_as_in_torch(name: str) -> None:
    input = _logits().requires_grad_()
    target = (
        lucid.tensor([0, 3, 1])
        if name == "multi_margin_loss"
        else lucid.tensor([[1, -1, 0, 0]] * 3)
    )
    (grad,) = lucid.autograd.grad(getattr(F, name)(input, target), input, create_graph=True)
    with pytest.raises(RuntimeError, match=f"^derivative for aten::{name}_backward is not"):
        grad.sum().backward()


def test_soft_margin_loss_is_not_differentiable_in_target() -> None:
    target = _signs().requires_grad_()
    message = (
        "^The function 'soft_margin_loss' is not differentiable with respect to argument "
        "'target'. This input cannot have requires_grad True.$"
    )
    with pytest.raises(RuntimeError, match=message):
        F.soft_margin_loss(_logits(), target)
    with lucid.no_grad():
        F.soft_margin_loss(_logits(), target)


@requires_torch
def test_gaussian_nll_gradient_reaches_var_through_its_clamp_like_torch() -> None:
    # var below eps is clamped for the value only: the gradient is the unclamped one
    var = np.array([[1e-9, 0.5, 2.0, 0.0]] * 3)
    grads = []
    for library, functional in ((lucid, F), (torch, torch_functional)):
        leaf = library.tensor(var.copy(), requires_grad=True)
        input = library.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
        functional.gaussian_nll_loss(input, input * 0.5, leaf).backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_gaussian_nll_float_var_equals_a_tensor_of_it() -> None:
    target = _logits() * 0.5
    expected = F.gaussian_nll_loss(_logits(), target, lucid.full((3, 4), 0.25, dtype=lucid.float64))
    assert F.gaussian_nll_loss(_logits(), target, 0.25).item() == expected.item()


def test_multilabel_soft_margin_loss_names_a_bad_reduction_as_torch() -> None:
    with pytest.raises(ValueError, match="^bad is not valid$"):
        F.multilabel_soft_margin_loss(_logits(), _logits(), reduction="bad")


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("margin_ranking_loss", lambda: (_logits(), _logits(), _signs())),
        ("hinge_embedding_loss", lambda: (_logits(), _signs())),
        ("soft_margin_loss", lambda: (_logits(), _signs())),
        ("multilabel_soft_margin_loss", lambda: (_logits(), _signs().abs())),
        ("multi_margin_loss", lambda: (_logits(), lucid.tensor([0, 3, 1]))),
        ("multilabel_margin_loss", lambda: (_logits(), lucid.tensor([[1, -1, 0, 0]] * 3))),
        ("poisson_nll_loss", lambda: (_logits(), _logits().abs())),
        ("triplet_margin_loss", lambda: (_logits(), _logits() * 0.5, _logits() * 2.0)),
    ],
)
def test_legacy_size_average_and_reduce_pick_the_reduction(name: str, arguments) -> None:
    function = getattr(F, name)
    with pytest.warns(UserWarning, match="reduction='sum' instead"):
        legacy = function(*arguments(), size_average=False)
    assert legacy.item() == function(*arguments(), reduction="sum").item()
    with pytest.warns(UserWarning, match="reduction='none' instead"):
        legacy = function(*arguments(), reduce=False)
    np.testing.assert_array_equal(legacy.numpy(), function(*arguments(), reduction="none").numpy())


@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_margin_kernels_mean_of_an_empty_batch_is_nan() -> None:
    # PyTorch returns whatever its output memory held here; the mean of no rows is nan
    empty = lucid.zeros(0, 4, dtype=lucid.float64)
    assert np.isnan(F.multi_margin_loss(empty, lucid.zeros(0, dtype=lucid.int64)).item())
    assert np.isnan(F.multilabel_margin_loss(empty, lucid.zeros(0, 4, dtype=lucid.int64)).item())


def test_hinge_embedding_loss_keeps_an_integer_input_dtype_as_torch() -> None:
    result = F.hinge_embedding_loss(
        lucid.tensor([1, 2, -3]), lucid.tensor([-1, -1, -1]), margin=2.5, reduction="none"
    )
    assert result.dtype == lucid.int64
    assert result.tolist() == [1, 0, 5]
