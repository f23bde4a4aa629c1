"""Gradient clipping by total norm or by value, mirroring torch.nn.utils.clip_grad."""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

import lucid
from lucid import Tensor
from lucid._core.arguments import invalid_combination

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
    "clip_grad_norm",
]  # fmt: skip

_TensorOrTensors = Tensor | Iterable[Tensor]
_CLAMP_OVERLOADS = (
    "(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)",
    "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)",
)


def _magnitude(tensor: Tensor) -> Tensor:
    """|z| of a complex tensor, as PyTorch's norms measure complex values; a real one as is."""
    if not tensor.is_complex():
        return tensor
    parts = lucid.view_as_real(tensor)
    return lucid.hypot(parts[..., 0], parts[..., 1])


def get_total_norm(
    tensors: _TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The norm of the per-tensor norms, as if all tensors were concatenated into one vector.

    `foreach` is accepted for compatibility; lucid has a single CPU implementation.
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return lucid.tensor(0.0)
    with lucid.no_grad():
        norms = [_magnitude(tensor).norm(norm_type) for tensor in tensors]
        total_norm = lucid.stack(norms).norm(norm_type)
    if error_if_nonfinite and not bool(total_norm.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total_norm


def clip_grads_with_norm_(
    parameters: _TensorOrTensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale gradients in place by min(max_norm / (total_norm + 1e-6), 1)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with lucid.no_grad():
        # Multiplying by a coefficient clamped to 1 (instead of branching) keeps NaN and Inf
        # norms flowing into the gradients exactly as PyTorch does.
        clip_coef = max_norm / (total_norm + 1e-6)
        if not isinstance(clip_coef, Tensor):
            # a number for total_norm: PyTorch's torch.clamp refuses the coefficient
            raise invalid_combination("clamp", (clip_coef,), _CLAMP_OVERLOADS, max=1.0)
        clip_coef = clip_coef.clamp(max=1.0)
        for grad in grads:
            grad.mul_(clip_coef)


def clip_grad_norm_(
    parameters: _TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Clip the gradients' total norm to `max_norm` in place; returns the norm before clipping.

    >>> total = clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        # A generator can be walked only once, and both the norm and the scaling need it.
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(
    parameters: _TensorOrTensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    parameters = list(parameters)
    if any(p.grad is not None and p.grad.is_complex() for p in parameters):
        # PyTorch's clamp refuses complex values (its order over mixed dtypes is unspecified,
        # so lucid refuses before clamping any gradient)
        raise NotImplementedError("clamp is not supported for complex types")
    with lucid.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(
    parameters: _TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated spelling of `clip_grad_norm_`."""
    warnings.warn(
        "`lucid.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`lucid.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
