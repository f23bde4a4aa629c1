"""Neural-network ops: dropout, dropout1d/2d/3d, alpha_dropout and feature_alpha_dropout (used
through lucid.nn.functional)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.function import Function
from lucid._core.random import _rng
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import dtype_name as _dtype_name
from lucid.ops._common import not_implemented

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "dropout", "dropout2d", "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
]  # fmt: skip


def _check_probability(p: float) -> None:
    """PyTorch's Python-side check; NaN passes it and fails its kernel's (`_check_nan`)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check_nan(p: float) -> None:
    if p != p:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training)."""
    _check_probability(p)
    _check_input_tensor(input, "dropout")
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=False)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels (dim 1 of (N, C, H, W)) with probability p."""
    _check_probability(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    elif ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    # PyTorch drops dim 1 of whatever it is given (a 3-D input is taken as (N, C, L))
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)


# ------------------------------------------------- feature and alpha dropout
# SELU's negative saturation value, scale * alpha: alpha dropout sets dropped units to it.
_ALPHA_DROPOUT_VALUE = 1.7580993408473766


def _mask_shape(input: Tensor, feature: bool) -> tuple:
    """One Bernoulli(1 - p) draw per element, or one per (sample, channel) when `feature`."""
    shape = tuple(input.shape)
    if feature:
        if len(shape) < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (len(shape) - 2)
    return shape


def _check_not_complex(input: Tensor) -> None:
    # PyTorch draws the mask in the input's dtype, and its bernoulli has no complex kernel
    if input._data.dtype.kind == "c":
        raise not_implemented("bernoulli_scalar_cpu_", input._data.dtype)


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:  # fmt: skip
    """Dropout, feature (channel) dropout and their alpha forms, on one code path."""
    _check_nan(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = _wrap(np.zeros((), input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = _mask_shape(input, feature)
    _check_not_complex(input)
    dtype = input._data.dtype
    if dtype.kind not in FLOAT_KINDS:
        # the scaled noise is floating point and cannot be written into an integer input (alpha
        # dropout's shift, noise - 1, has already promoted a bool mask to Long)
        name = "Long" if alpha and dtype == np.bool_ else _dtype_name(dtype)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")
    if not alpha:
        noise = DropoutNoise.apply(shape, dtype, p, False)
        return input.mul_(noise) if inplace else input * noise
    noise, shift = DropoutNoise.apply(shape, dtype, p, True)
    if inplace:
        return input.mul_(noise).add_(shift)
    return input * noise + shift


class DropoutNoise(Function):
    """Dropout's scaled keep mask (and alpha dropout's shift) drawn from the generator, as an
    op of no tensor input: a lucid.compile replay runs it, so each call draws anew, in order."""

    _op_name = "bernoulli_"

    @staticmethod
    def forward(ctx, shape, dtype, p, alpha):
        if not alpha:
            return _wrap(_scaled_keep_mask(shape, dtype, p))
        keep = (_rng(None).random(shape) >= p).astype(dtype)
        # a and b restore zero mean and unit variance after dropped units are set to
        # -scale*alpha
        a = 1.0 / float(np.sqrt((_ALPHA_DROPOUT_VALUE**2 * p + 1) * (1 - p)))
        noise = _wrap(keep * np.asarray(a, dtype))
        shift = _wrap(((keep - 1) * (_ALPHA_DROPOUT_VALUE * a)
                       + _ALPHA_DROPOUT_VALUE * a * p).astype(dtype))  # fmt: skip
        return noise, shift

    @staticmethod
    def flat_kernels(args, needs_input_grad):
        # dropout's mask, drawn from the default generator in the step's order as in eager
        # (lucid/_dynamo/flat.py); alpha dropout's two outputs keep the lean replay
        if args[3]:
            return None
        return (lambda shape, dtype, p, alpha: _scaled_keep_mask(shape, dtype, p)), None, None


def _scaled_keep_mask(shape: tuple[int, ...], dtype: Any, p: float) -> np.ndarray:
    keep = (_rng(None).random(shape) >= p).astype(dtype)
    return keep * np.asarray(1.0 / (1.0 - p), dtype)


def _check_input_tensor(input: Any, op: str) -> None:
    if not isinstance(input, TensorBase):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")  # fmt: skip


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: dropped units take SELU's saturation value, and an affine
    correction keeps the mean and variance of the activations (when training)."""
    _check_probability(p)
    _check_input_tensor(input, "alpha_dropout")
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """alpha_dropout over whole channels (dim 1) instead of single elements."""
    _check_probability(p)
    _check_input_tensor(input, "feature_alpha_dropout")
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched: bool):
    if batched:
        return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    if inplace:
        # one draw per channel (dim 0), multiplied into the input itself
        _check_nan(p)
        if p == 0 or not training or input.numel() == 0:
            return input
        dtype = input._data.dtype
        if p == 1:
            return input.mul_(_wrap(np.zeros((), dtype)))
        _check_not_complex(input)
        if dtype.kind not in FLOAT_KINDS:
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type {_dtype_name(dtype)}"
            )
        keep = _rng(None).random((input.shape[0],) + (1,) * (input.ndim - 1)) >= p
        return input.mul_(_wrap(keep.astype(dtype) * np.asarray(1.0 / (1.0 - p), dtype)))
    result = _dropout_impl(input.unsqueeze(0), p, training, False, feature=True, alpha=False)
    return result.squeeze(0)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input with probability p (when training)."""
    _check_probability(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _channel_dropout(input, p, training, inplace, batched=ndim == 3)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p."""
    _check_probability(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _channel_dropout(input, p, training, inplace, batched=ndim == 5)
