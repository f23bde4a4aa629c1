"""Neural-network ops: linear and bilinear (used through lucid.nn.functional)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lucid._core.arguments import raise_argument_error
from lucid._core.dtypes import complex_use
from lucid._core.grad_mode import is_grad_enabled
from lucid.ops._common import autocast_op, check_tensors
from lucid.ops.arithmetic import add
from lucid.ops.products import addmm, matmul
from lucid.ops.reduction import sum

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "linear", "bilinear",
]  # fmt: skip


@autocast_op
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    check_tensors(input, weight)
    try:
        ndim = input.ndim
    except AttributeError as error:
        raise_argument_error(error)
        raise
    if ndim == 2:
        if bias is None:
            return matmul(input, weight.t())
        return addmm(bias, input, weight.t())
    if ndim > 2 and bias is not None:
        # one GEMM over the flattened leading dims is faster than a batched matmul
        flat = input.reshape(-1, input.shape[-1])
        return addmm(bias, flat, weight.t()).view(*input.shape[:-1], weight.shape[0])
    output = matmul(input, weight.t())
    return output if bias is None else add(output, bias)


@autocast_op
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_k = input1^T weight_k input2 + bias_k over the last dimension."""
    check_tensors(input1, input2, weight)
    operands = (input1, input2, weight) if bias is None else (input1, input2, weight, bias)
    if (
        complex_use.in_use
        and is_grad_enabled()
        and any(t.requires_grad for t in operands)
        and any(t.is_complex() for t in operands)
    ):
        # PyTorch's bilinear is its _trilinear kernel, which has no complex derivative.
        raise RuntimeError(
            "_trilinear does not support automatic differentiation for outputs with complex dtype."
        )
    out_features, in1, in2 = weight.shape
    leading = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, 1, in2)
    # (B, in1) @ (in1, out*in2) contracts input1 with every weight slice in one GEMM
    mixed = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    output = sum(mixed.reshape(-1, out_features, in2) * x2, -1)
    if bias is not None:
        output = output + bias
    return output.reshape(*leading, out_features)
