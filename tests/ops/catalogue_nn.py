"""Op catalogue rows: the nn family (activations, softmax, log_softmax, one_hot)."""

from __future__ import annotations

import math

import numpy as np

import lucid
import lucid.nn.functional
from tests.ops.op_catalogue import ErrorInput, OpCase, dim_out_of_range
from tests.torch_oracle import functional as F
from tests.torch_oracle import torch

_erf = np.vectorize(math.erf, otypes=[np.float64])
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return scale * np.where(x > 0, x, alpha * np.expm1(x * input_scale))


def _softmax(x, dim):
    shifted = np.exp(x - x.max(axis=dim, keepdims=True))
    return shifted / shifted.sum(axis=dim, keepdims=True)


def _log_softmax(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _activation(name: str, reference, torch_op=None, **options) -> OpCase:
    """`lucid.nn.functional.<name>` against `torch.nn.functional.<name>` (or `torch_op`)."""
    return OpCase(
        name,
        getattr(lucid.nn.functional, name),
        torch_op or getattr(F, name),
        reference,
        low=-3.0,
        high=3.0,
        **options,
    )


def _inplace(name: str, lucid_op, torch_op, reference, extremes=True, **kwargs) -> OpCase:
    """`op(x, inplace=True)` on a copy of x, so the leaf input stays untouched."""
    return OpCase(
        name,
        lambda x: lucid_op(x * 1.0, inplace=True, **kwargs),
        lambda x: torch_op(x * 1.0, inplace=True, **kwargs),
        lambda x: reference(x, **kwargs),
        low=-3.0,
        high=3.0,
        extremes=extremes,
    )


# PyTorch's gradient at a nan input of elu/selu/celu, hardtanh/relu6 and hardswish depends on
# where the element sits: its vectorized loop body gives nan (elu, hardswish) or 0 (hardtanh),
# which lucid follows, but the loop's tail, i.e. every element of a small tensor like these
# rows', passes the gradient through. Their extreme-value rows would compare against the tail.
_NAN_GRADIENT_BY_POSITION = {"extremes": False}


def _indices(shape: tuple[int, ...], classes: int):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.integers(0, classes, shape).astype(np.int64)]

    return make


def _one_hot(indices, num_classes=-1):
    classes = indices.max() + 1 if num_classes == -1 else num_classes
    return (indices[..., None] == np.arange(classes)).astype(np.int64)


ROWS: list[OpCase] = [
    # ------------------------------------------------------------ sigmoid family
    _activation("sigmoid", _sigmoid, torch.sigmoid),
    OpCase("sigmoid_method", lambda x: x.sigmoid(), lambda x: x.sigmoid(), _sigmoid),
    _activation("logsigmoid", lambda x: -np.logaddexp(0.0, -x)),
    _activation("silu", lambda x: x * _sigmoid(x)),
    _activation("softplus", _softplus),
    OpCase(
        "softplus_beta_threshold",
        lucid.nn.functional.softplus,
        F.softplus,
        _softplus,
        low=-3.0,
        high=3.0,
        kwargs={"beta": 2.0, "threshold": 3.0},
    ),
    _activation("mish", lambda x: x * np.tanh(np.logaddexp(0.0, x))),
    # ---------------------------------------------------------------- relu family
    _activation("relu", lambda x: np.maximum(x, 0.0), torch.relu),
    OpCase("relu_method", lambda x: x.relu(), lambda x: x.relu(), lambda x: np.maximum(x, 0.0)),
    OpCase(
        "relu6",
        lambda x: lucid.nn.functional.relu6(x * 3.0),
        lambda x: F.relu6(x * 3.0),
        lambda x: np.clip(x * 3.0, 0.0, 6.0),
        low=-3.0,
        high=3.0,
        **_NAN_GRADIENT_BY_POSITION,
    ),
    _activation("leaky_relu", lambda x: np.where(x > 0, x, 0.01 * x)),
    OpCase(
        "leaky_relu_slope",
        lucid.nn.functional.leaky_relu,
        F.leaky_relu,
        lambda x, negative_slope: np.where(x > 0, x, negative_slope * x),
        kwargs={"negative_slope": 0.2},
    ),
    _activation("elu", _elu, **_NAN_GRADIENT_BY_POSITION),
    OpCase(
        "elu_alpha",
        lucid.nn.functional.elu,
        F.elu,
        lambda x, alpha: _elu(x, alpha),
        low=-3.0,
        high=3.0,
        kwargs={"alpha": 2.0},
        **_NAN_GRADIENT_BY_POSITION,
    ),
    _activation("selu", lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE), **_NAN_GRADIENT_BY_POSITION),
    OpCase(
        "celu",
        lucid.celu,
        torch.celu,
        lambda x, alpha: _elu(x, alpha, 1.0, 1.0 / alpha),
        low=-3.0,
        high=3.0,
        kwargs={"alpha": 0.5},
        **_NAN_GRADIENT_BY_POSITION,
    ),
    _activation("hardtanh", lambda x: np.clip(x, -1.0, 1.0), **_NAN_GRADIENT_BY_POSITION),
    OpCase(
        "hardtanh_bounds",
        lucid.nn.functional.hardtanh,
        F.hardtanh,
        lambda x, min_val, max_val: np.clip(x, min_val, max_val),
        low=-3.0,
        high=3.0,
        kwargs={"min_val": -2.0, "max_val": 0.5},
        **_NAN_GRADIENT_BY_POSITION,
    ),
    OpCase(
        "hardsigmoid",
        lambda x: lucid.nn.functional.hardsigmoid(x * 2.0),
        lambda x: F.hardsigmoid(x * 2.0),
        lambda x: np.clip(x * 2.0 + 3.0, 0.0, 6.0) / 6.0,
        low=-3.0,
        high=3.0,
        # PyTorch defines no second derivative for hardsigmoid.
        gradgrad=False,
    ),
    OpCase(
        "hardswish",
        lambda x: lucid.nn.functional.hardswish(x * 2.0),
        lambda x: F.hardswish(x * 2.0),
        lambda x: x * 2.0 * np.clip(x * 2.0 + 3.0, 0.0, 6.0) / 6.0,
        low=-3.0,
        high=3.0,
        **_NAN_GRADIENT_BY_POSITION,
    ),
    # ------------------------------------------------------------------- gelu
    # PyTorch's float32 gelu(inf) is nan (its vectorized erf), its float64 one inf, as lucid's.
    _activation("gelu", lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))), extremes=False),
    OpCase(
        "gelu_tanh",
        lucid.nn.functional.gelu,
        F.gelu,
        lambda x, approximate: _gelu_tanh(x),
        low=-3.0,
        high=3.0,
        kwargs={"approximate": "tanh"},
    ),
    # --------------------------------------------------------------- in place
    _inplace("relu_inplace", lucid.relu, F.relu, lambda x: np.maximum(x, 0.0)),
    OpCase(
        "relu_",
        lambda x: lucid.relu_(x * 1.0),
        lambda x: torch.relu_(x * 1.0),
        lambda x: np.maximum(x, 0.0),
    ),
    _inplace(
        "leaky_relu_inplace",
        lucid.nn.functional.leaky_relu,
        F.leaky_relu,
        lambda x, negative_slope: np.where(x > 0, x, negative_slope * x),
        negative_slope=0.1,
    ),
    # PyTorch's in-place elu family takes its gradient from the output, and at a nan output
    # its vectorized loop body gives nan where the loop's scalar tail gives the positive
    # branch's slope: which elements of a (3, 4) input fall in the tail depends on the CPU's
    # vector width, so these rows leave out the extreme values
    _inplace(
        "elu_inplace",
        lucid.nn.functional.elu,
        F.elu,
        lambda x, alpha: _elu(x, alpha),
        extremes=False,
        alpha=1.5,
    ),
    _inplace(
        "selu_inplace",
        lucid.selu,
        F.selu,
        lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE),
        extremes=False,
    ),
    _inplace(
        "celu_inplace",
        lucid.celu,
        F.celu,
        lambda x, alpha: _elu(x, alpha, 1.0, 1.0 / alpha),
        extremes=False,
        alpha=2.0,
    ),
    _inplace("silu_inplace", lucid.nn.functional.silu, F.silu, lambda x: x * _sigmoid(x)),
    _inplace(
        "mish_inplace",
        lucid.nn.functional.mish,
        F.mish,
        lambda x: x * np.tanh(np.logaddexp(0.0, x)),
    ),
    _inplace(
        "hardtanh_inplace",
        lucid.nn.functional.hardtanh,
        F.hardtanh,
        lambda x: np.clip(x, -1.0, 1.0),
        **_NAN_GRADIENT_BY_POSITION,
    ),
    _inplace(
        "hardswish_inplace",
        lucid.nn.functional.hardswish,
        F.hardswish,
        lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
        **_NAN_GRADIENT_BY_POSITION,
    ),
    # ----------------------------------------------------------------- softmax
    OpCase(
        "softmax",
        lucid.softmax,
        torch.softmax,
        _softmax,
        shapes=[(3, 5)],
        kwargs={"dim": 1},
        low=-5.0,
        high=5.0,
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [np.arange(12).reshape(3, 4)],
                NotImplementedError,
                "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
                {"dim": 1},
            ),
        ],
    ),
    OpCase(
        "softmax_dim0_3d",
        lucid.softmax,
        torch.softmax,
        _softmax,
        shapes=[(4, 2, 3)],
        kwargs={"dim": 0},
    ),
    OpCase(
        "softmax_method",
        lambda x: x.softmax(-1),
        lambda x: x.softmax(-1),
        lambda x: _softmax(x, -1),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "softmax_large_logits",
        lambda x: lucid.softmax(x * 1e4, -1),
        lambda x: torch.softmax(x * 1e4, -1),
        lambda x: _softmax(x * 1e4, -1),
        shapes=[(3, 4)],
        # Gradients of a saturated softmax are 0 or tiny: finite differences see only noise.
        differentiable=False,
    ),
    OpCase(
        "softmax_dtype",
        lambda x: lucid.softmax(x, 1, dtype=lucid.float64),
        lambda x: torch.softmax(x, 1, dtype=torch.float64),
        lambda x: _softmax(x, 1),
        shapes=[(3, 4)],
    ),
    OpCase(
        "log_softmax",
        lucid.log_softmax,
        torch.log_softmax,
        _log_softmax,
        shapes=[(3, 5)],
        kwargs={"dim": 1},
        low=-5.0,
        high=5.0,
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [np.arange(12).reshape(3, 4)],
                NotImplementedError,
                "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'",
                {"dim": 1},
            ),
        ],
    ),
    OpCase(
        "log_softmax_dim0_3d",
        lucid.log_softmax,
        torch.log_softmax,
        _log_softmax,
        shapes=[(4, 2, 3)],
        kwargs={"dim": 0},
    ),
    OpCase(
        "log_softmax_method",
        lambda x: x.log_softmax(-1),
        lambda x: x.log_softmax(-1),
        lambda x: _log_softmax(x, -1),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "log_softmax_large_logits",
        lambda x: lucid.log_softmax(x * 1e4, -1),
        lambda x: torch.log_softmax(x * 1e4, -1),
        lambda x: _log_softmax(x * 1e4, -1),
        shapes=[(3, 4)],
    ),
    OpCase(
        "log_softmax_dtype",
        lambda x: lucid.log_softmax(x, 0, dtype=lucid.float64),
        lambda x: torch.log_softmax(x, 0, dtype=torch.float64),
        lambda x: _log_softmax(x, 0),
        shapes=[(3, 4)],
    ),
    # ----------------------------------------------------------------- one_hot
    OpCase(
        "one_hot",
        lucid.nn.functional.one_hot,
        F.one_hot,
        _one_hot,
        make_inputs=_indices((2, 3), 4),
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(3,)],
                RuntimeError,
                "one_hot is only applicable to index tensor of type LongTensor",
            ),
            ErrorInput(
                [np.array([7, 0, 1])],
                RuntimeError,
                "Class values must be smaller than num_classes",
                {"num_classes": 3},
            ),
            ErrorInput([np.array([0, -1, 1])], RuntimeError, "Class values must be non-negative"),
        ],
    ),
    OpCase(
        "one_hot_num_classes",
        lambda x: lucid.nn.functional.one_hot(x, 6),
        lambda x: F.one_hot(x, 6),
        lambda x: _one_hot(x, 6),
        make_inputs=_indices((5,), 4),
        differentiable=False,
    ),
]

# rrelu outside training: leaky_relu with the mean slope (training draws random slopes, tested in
# tests/nn/test_dropout_variants.py), and alpha dropout outside training, the identity
ROWS += [
    OpCase(
        "rrelu_eval",
        lucid.nn.functional.rrelu,
        F.rrelu,
        lambda x, lower, upper: np.where(x > 0, x, x * (lower + upper) / 2),
        low=-3.0,
        high=3.0,
        kwargs={"lower": 0.1, "upper": 0.3},
        error_inputs=[
            ErrorInput(
                [(3,)],
                RuntimeError,
                "Lower bound should be less than or equal to the upper bound",
                {"lower": 0.5, "upper": 0.1},
            ),
            ErrorInput(
                [(3,)],
                TypeError,
                r"rrelu\(\): argument 'lower' \(position 2\) must be Number, not str",
                {"lower": "a"},
            ),
        ],
    ),
    _activation("rrelu", lambda x: np.where(x > 0, x, x * (1 / 8 + 1 / 3) / 2)),
    _inplace(
        "rrelu_inplace",
        lucid.nn.functional.rrelu,
        F.rrelu,
        lambda x, lower, upper: np.where(x > 0, x, x * (lower + upper) / 2),
        lower=0.2,
        upper=0.4,
    ),
    OpCase(
        "rrelu_",
        lambda x: lucid.nn.functional.rrelu_(x * 1.0),
        lambda x: F.rrelu_(x * 1.0),
        lambda x: np.where(x > 0, x, x * (1 / 8 + 1 / 3) / 2),
    ),
    OpCase(
        "alpha_dropout_eval",
        lambda x, p=0.5: lucid.nn.functional.alpha_dropout(x * 1.0, p),
        lambda x, p=0.5: F.alpha_dropout(x * 1.0, p),
        lambda x: x,
        error_inputs=[
            ErrorInput(
                [(3,)],
                ValueError,
                "dropout probability has to be between 0 and 1, but got 1.5",
                {"p": 1.5},
            )
        ],
    ),
    OpCase(
        "feature_alpha_dropout_p0",
        lambda x: lucid.nn.functional.feature_alpha_dropout(x * 1.0, 0.0, True),
        lambda x: F.feature_alpha_dropout(x * 1.0, 0.0, True),
        lambda x: x,
    ),
]
