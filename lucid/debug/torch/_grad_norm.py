"""Gradient norms of torch parameters for GradNormGuard and NaNDetector.check_grad_norms(): one
fused pass over every gradient and one host read."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from lucid.debug.events import GradEvent
from lucid.debug.torch import _private

__all__ = ["gradient_norms", "parameter_grad_events", "parameter_norms", "total_norm"]


def gradient_norms(tensors: list[torch.Tensor]) -> list[float]:
    """The L2 norm of each tensor, from one fused pass and one host read.

    A float32 norm overflows once elements pass ~1.8e19 although the norm itself is finite:
    such a tensor is measured again in float64, so only a real NaN or Inf reads as non-finite.
    """
    if not tensors:
        return []
    norms = _private.foreach_norm(tensors)
    device = norms[0].device
    values = torch.stack([norm.to(device, torch.float64) for norm in norms]).tolist()
    for index, value in enumerate(values):
        if not math.isfinite(value):
            tensor = tensors[index]
            if bool(torch.isfinite(tensor).all()):
                values[index] = float(torch.linalg.vector_norm(tensor.to(torch.float64)))
    return values


def total_norm(parameters: list[torch.Tensor]) -> float:
    """The global L2 norm of the parameters' gradients (parameters without one skipped)."""
    grads = [param.grad for param in parameters if param.grad is not None]
    return math.sqrt(sum(norm * norm for norm in gradient_norms(grads)))


def parameter_norms(named_parameters: list[tuple[str, torch.Tensor]]) -> dict[str, float]:
    """Each parameter with a gradient mapped to the L2 norm of that gradient."""
    named = [(name, param.grad) for name, param in named_parameters if param.grad is not None]
    norms = gradient_norms([grad for _, grad in named])
    return {name: norm for (name, _), norm in zip(named, norms)}


def parameter_grad_events(
    named_parameters: list[tuple[str, str, torch.Tensor]],
    module_type: Callable[[str], str | None],
    threshold: float | None,
    batch_idx: int,
) -> list[GradEvent]:
    """A GradEvent for every parameter (full name, module path, tensor) whose gradient is
    non-finite or has an L2 norm above `threshold` (None: no norm limit)."""
    named = [
        (name, path, param.grad) for name, path, param in named_parameters if param.grad is not None
    ]
    norms = gradient_norms([grad for _, _, grad in named])
    found = []
    for (name, path, grad), norm in zip(named, norms):
        if math.isfinite(norm):
            if threshold is None or norm <= threshold:
                continue
            reason = "large"
        else:
            reason = "nan" if bool(torch.isnan(grad).any()) else "inf"
        found.append(
            GradEvent(
                batch_idx=batch_idx,
                param_name=name,
                layer_name=path,
                module_type=module_type(path),
                norm=norm,
                reason=reason,
                threshold=threshold,
            )
        )
    return found
