"""Flattening parameters into one vector and back, mirroring torch.nn.utils.convert_parameters."""

from __future__ import annotations

from collections.abc import Iterable

import lucid
from lucid import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _typename(obj: object) -> str:
    """PyTorch's name for a non-tensor object's type: module-qualified unless a builtin."""
    cls = type(obj)
    module = cls.__module__
    if module in ("builtins", "__builtin__", None):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Concatenate the flattened parameters into a single 1-D tensor (a copy)."""
    return lucid.cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of `vec` into the parameters, in order.

    Unlike PyTorch, which makes each parameter a view of `vec`, lucid copies the values into
    the existing parameter storage, so later changes to `vec` do not reach the parameters.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    # PyTorch assigns each slice to `param.data`, which refuses other dtypes where grads flow
    is_differentiable = vec.is_floating_point() or vec.is_complex()
    with lucid.no_grad():
        for param in parameters:
            if param.requires_grad and not is_differentiable:
                raise RuntimeError(
                    "data set to a tensor that requires gradients must be floating point or "
                    "complex dtype"
                )
            count = param.numel()
            param.copy_(vec[pointer : pointer + count].view_as(param))
            pointer += count
