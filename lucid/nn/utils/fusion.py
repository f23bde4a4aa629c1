"""Folding an evaluation-mode BatchNorm into the convolution or linear layer before it."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import lucid
from lucid import Tensor
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]  # fmt: skip

ModuleT = TypeVar("ModuleT", bound=Module)


def fuse_conv_bn_eval(conv: ModuleT, bn: Any, transpose: bool = False) -> ModuleT:
    """A copy of `conv` whose output equals bn(conv(x)) with bn's running statistics."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose,
    )  # fmt: skip
    return fused_conv


def fuse_conv_bn_weights(
    conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
    bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False,
) -> tuple[Parameter, Parameter]:  # fmt: skip
    """Convolution weight and bias with the batch norm folded in: each output channel (dim 0,
    or dim 1 when `transpose`) is scaled by bn_w / sqrt(bn_rv + eps) and shifted."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = lucid.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = lucid.ones_like(bn_rm)
    if bn_b is None:
        bn_b = lucid.zeros_like(bn_rm)
    inverse_std = lucid.rsqrt(bn_rv + bn_eps)
    spatial = [1] * (conv_w.ndim - 2)
    shape = [1, -1, *spatial] if transpose else [-1, 1, *spatial]
    fused_w = (conv_w * (bn_w * inverse_std).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * inverse_std * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: ModuleT, bn: Any) -> ModuleT:
    """A copy of `linear` whose output equals bn(linear(x)) with bn's running statistics."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    # bn's channels must broadcast against the linear layer's output features
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias,
    )  # fmt: skip
    return fused_linear


def fuse_linear_bn_weights(
    linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
    bn_w: Tensor, bn_b: Tensor,
) -> tuple[Parameter, Parameter]:  # fmt: skip
    """Linear weight and bias with the batch norm folded in."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = lucid.zeros_like(bn_rm)
    scale = bn_w * lucid.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
