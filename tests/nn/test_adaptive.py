"""Parity of nn.AdaptiveLogSoftmaxWithLoss with torch.nn's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.nn.parity import check_forward_backward, check_repr_and_keys, copy_state
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

DTYPES = ["float64", "float32"]
_RNG = np.random.default_rng(18)
INPUT = _RNG.standard_normal((7, 16))
# classes 0-3 shortlist, 4-7 and 8-11 clusters: rows in each, and a cluster with one row
TARGET = np.array([0, 5, 11, 3, 9, 10, 2])


def _modules(dtype: str, **kwargs) -> tuple:
    arguments = (16, 12, [4, 8])
    torch_module = torch.nn.AdaptiveLogSoftmaxWithLoss(*arguments, **kwargs)
    lucid_module = lucid.nn.AdaptiveLogSoftmaxWithLoss(*arguments, **kwargs)
    if dtype == "float64":
        torch_module, lucid_module = torch_module.double(), lucid_module.double()
    copy_state(torch_module, lucid_module)
    return torch_module, lucid_module


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", [{}, {"div_value": 2.0, "head_bias": True}])
def test_output_loss_and_gradients_match_torch(dtype: str, kwargs: dict) -> None:
    torch_module, lucid_module = _modules(dtype, **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    lucid_out, torch_out = check_forward_backward(
        torch_module, lucid_module, [INPUT.astype(dtype), TARGET], dtype
    )
    assert lucid_out[0].grad_fn.name() == torch_out[0].grad_fn.name() == "AddBackward0"


@pytest.mark.parametrize("dtype", DTYPES)
def test_unbatched_input_and_log_prob_and_predict_match_torch(dtype: str) -> None:
    torch_module, lucid_module = _modules(dtype)
    input = INPUT.astype(dtype)
    torch_result = torch_module(torch.tensor(input[2]), torch.tensor(TARGET[2]))
    lucid_result = lucid_module(lucid.tensor(input[2]), lucid.tensor(TARGET[2]))
    assert lucid_result._fields == torch_result._fields == ("output", "loss")
    assert lucid_result.output.shape == ()
    rtol = 1e-10 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(lucid_result.loss.item(), torch_result.loss.item(), rtol=rtol)
    log_prob = lucid_module.log_prob(lucid.tensor(input)).detach().numpy()
    np.testing.assert_allclose(
        log_prob, torch_module.log_prob(torch.tensor(input)).detach().numpy(), rtol=rtol
    )
    np.testing.assert_allclose(np.exp(log_prob).sum(1), 1.0, rtol=rtol)
    predicted = lucid_module.predict(lucid.tensor(input)).numpy()
    assert predicted.tolist() == torch_module.predict(torch.tensor(input)).tolist()
    assert predicted.tolist() == log_prob.argmax(1).tolist()


@pytest.mark.parametrize(
    ("cutoffs", "match"),
    [([], "^cutoffs should be a sequence of length larger than 0$"),
     ([8, 4], "^cutoffs should be a sequence of unique, positive integers sorted"),
     ([4, 12], "^cutoffs should be a sequence of unique, positive integers sorted"),
     ([4, 4], "^cutoffs should be a sequence of unique, positive integers sorted")],
)  # fmt: skip
def test_bad_cutoffs_raise_torchs_error(cutoffs: list, match: str) -> None:
    for library in (torch, lucid):
        with pytest.raises(ValueError, match=match):
            library.nn.AdaptiveLogSoftmaxWithLoss(16, 12, cutoffs)


@pytest.mark.parametrize(
    ("input_shape", "target", "match"),
    [((7, 16), np.array([0, 1]), "^Input and target should have the same size in the batch"),
     ((16,), np.array([[0]]), "^0D or 1D target tensor expected, multi-target not supported$"),
     ((2, 16), np.array(1), "^0D target tensor expects 1D input tensors, but found inputs with "
                            r"size lucid\.Size\(\[2, 16\]\)$"),
     ((2, 16), np.array([0, 12]), r"^Target values should be in \[0, 11\], but values in range "
                                  r"\[0, 12\] were found\. $")],
)  # fmt: skip
def test_bad_targets_raise_torchs_error(input_shape: tuple, target: np.ndarray, match: str) -> None:
    torch_module, lucid_module = _modules("float64")
    input = np.zeros(input_shape)
    for library, module in ((torch, torch_module), (lucid, lucid_module)):
        with pytest.raises(RuntimeError) as raised:
            module(library.tensor(input), library.tensor(target))
        assert raised.match(match.replace("lucid", "(lucid|torch)"))
