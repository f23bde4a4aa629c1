"""Op catalogue rows: linear, dropout, embedding, normalization and attention."""

from __future__ import annotations

import numpy as np

import lucid.nn.functional as N
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import functional as F


def _layer_norm_reference(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def _linear_reference(x, weight, bias):
    return x @ weight.T + bias


def _attention_reference(query, key, value):
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ value


def _embedding_inputs(rng, dtype):
    return [rng.integers(0, 6, (2, 3)), rng.uniform(-2, 2, (6, 4)).astype(dtype)]


def _batch_norm_eval_inputs(rng, dtype):
    return [
        rng.uniform(-2, 2, (3, 4, 2)).astype(dtype),
        rng.uniform(-1, 1, 4).astype(dtype),
        rng.uniform(0.5, 2, 4).astype(dtype),
        rng.uniform(-2, 2, 4).astype(dtype),
        rng.uniform(-2, 2, 4).astype(dtype),
    ]


def _bool_mask_inputs(rng, dtype):
    mask = rng.random((4, 4)) > 0.4
    mask[:, 0] = True
    return [*(rng.uniform(-2, 2, (2, 4, 3)).astype(dtype) for _ in range(3)), mask]


def _float_mask_inputs(rng, dtype):
    return [*(rng.uniform(-2, 2, (2, 4, 3)).astype(dtype) for _ in range(3))] + [
        rng.uniform(-1, 1, (4, 4)).astype(dtype)
    ]


ROWS: list[OpCase] = [
    OpCase(
        "linear",
        N.linear,
        F.linear,
        _linear_reference,
        shapes=[(4, 3), (5, 3), (5,)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 4), (5, 6)],
                RuntimeError,
                r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 6x5\)",
            ),
            ErrorInput(
                [(3, 4), (5, 4), (6,)],
                RuntimeError,
                r"The expanded size of the tensor \(5\) must match the "
                r"existing size \(6\) at non-singleton dimension 1",
            ),
        ],
    ),
    OpCase(
        "linear_3d",
        N.linear,
        F.linear,
        _linear_reference,
        shapes=[(2, 4, 3), (5, 3), (5,)],
        sums=True,
    ),
    OpCase(
        "linear_1d", N.linear, F.linear, _linear_reference, shapes=[(3,), (5, 3), (5,)], sums=True
    ),
    OpCase(
        "linear_no_bias",
        N.linear,
        F.linear,
        lambda x, w: x @ w.T,
        shapes=[(4, 3), (5, 3)],
        sums=True,
    ),
    OpCase("bilinear", N.bilinear, F.bilinear, shapes=[(4, 3), (4, 2), (5, 3, 2), (5,)], sums=True),
    OpCase(
        "dropout_p0",
        lambda x: N.dropout(x, 0.0),
        lambda x: F.dropout(x, 0.0),
        lambda x: x,
    ),
    OpCase(
        "dropout_eval",
        lambda x: N.dropout(x, 0.5, training=False),
        lambda x: F.dropout(x, 0.5, training=False),
        lambda x: x,
    ),
    OpCase(
        "dropout2d_eval",
        lambda x: N.dropout2d(x, 0.5, training=False),
        lambda x: F.dropout2d(x, 0.5, training=False),
        lambda x: x,
        shapes=[(2, 3, 2, 2)],
    ),
    OpCase(
        "embedding",
        N.embedding,
        F.embedding,
        lambda indices, weight: weight[indices],
        make_inputs=_embedding_inputs,
        grad_inputs=[1],
        error_inputs=[
            ErrorInput(
                [(3,), (5, 4)],
                RuntimeError,
                "Expected tensor for argument #1 'indices' to have one of "
                "the following scalar types: Long, Int",
            ),
            ErrorInput([np.array([7, 0, 1]), (5, 4)], IndexError, "index out of range in self"),
        ],
    ),
    OpCase(
        "layer_norm",
        lambda x, w, b: N.layer_norm(x, (4,), w, b),
        lambda x, w, b: F.layer_norm(x, (4,), w, b),
        _layer_norm_reference,
        shapes=[(2, 3, 4), (4,), (4,)],
        rtol32=1e-4,
        atol32=1e-5,
        error_inputs=[
            ErrorInput(
                [(2, 3, 5), (4,), (4,)],
                RuntimeError,
                r"Given normalized_shape=\[4\], expected input with shape "
                r"\[\*, 4\], but got input of size\[2, 3, 5\]",
            ),
            ErrorInput(
                [(2, 3, 4), (5,), (4,)],
                RuntimeError,
                r"Expected weight to be of same shape as normalized_shape, but got "
                r"weight of shape \[5\] and normalized_shape = \[4\]",
            ),
        ],
    ),
    OpCase(
        "layer_norm_2d_no_affine",
        lambda x: N.layer_norm(x, (3, 4)),
        lambda x: F.layer_norm(x, (3, 4)),
        shapes=[(2, 3, 4)],
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "group_norm",
        lambda x, w, b: N.group_norm(x, 2, w, b),
        lambda x, w, b: F.group_norm(x, 2, w, b),
        shapes=[(2, 4, 3), (4,), (4,)],
        rtol32=1e-4,
        atol32=1e-5,
        # with ±inf and 1e30 in one group both give non-finite garbage, but PyTorch folds
        # the affine into its own scale/shift form, so which entries are inf and which nan differ
        extremes=False,
        error_inputs=[
            ErrorInput(
                [(2, 5, 3), (5,), (5,)],
                RuntimeError,
                r"Expected number of channels in input to be divisible by num_groups, "
                r"but got input of shape \[2, 5, 3\] and num_groups=2",
            )
        ],
    ),
    OpCase(
        "batch_norm_train",
        lambda x, w, b: N.batch_norm(x, None, None, w, b, training=True),
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        shapes=[(3, 4, 2), (4,), (4,)],
        rtol32=1e-4,
        atol32=1e-5,
        # with ±inf and 1e30 in one group both give non-finite garbage, but PyTorch folds
        # the affine into its own scale/shift form, so which entries are inf and which nan differ
        extremes=False,
    ),
    OpCase(
        "batch_norm_eval",
        N.batch_norm,
        F.batch_norm,
        make_inputs=_batch_norm_eval_inputs,
        grad_inputs=[0, 3, 4],
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "rms_norm",
        lambda x, w: N.rms_norm(x, (4,), w),
        lambda x, w: F.rms_norm(x, (4,), w),
        shapes=[(2, 3, 4), (4,)],
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "scaled_dot_product_attention",
        N.scaled_dot_product_attention,
        F.scaled_dot_product_attention,
        _attention_reference,
        shapes=[(2, 4, 3), (2, 5, 3), (2, 5, 2)],
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "scaled_dot_product_attention_causal",
        lambda q, k, v: N.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        shapes=[(1, 2, 4, 3), (1, 2, 4, 3), (1, 2, 4, 3)],
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "scaled_dot_product_attention_bool_mask",
        lambda q, k, v, m: N.scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        make_inputs=_bool_mask_inputs,
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "scaled_dot_product_attention_float_mask",
        lambda q, k, v, m: N.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.7),
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.7),
        make_inputs=_float_mask_inputs,
        grad_inputs=[0, 1, 2],
        rtol32=1e-4,
        atol32=1e-5,
        error_inputs=[
            ErrorInput(
                [(2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), (5, 5)],
                RuntimeError,
                r"The size of tensor a \(4\) must match the size of tensor b \(5\) at "
                r"non-singleton dimension 3",
            ),
            ErrorInput(
                [(2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), (4,)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)",
            ),
        ],
    ),
]
