"""lucid.autograd: reverse-mode automatic differentiation, mirroring torch.autograd."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from lucid._tensor import Tensor, _wrap
from lucid.autograd import graph
from lucid.autograd.anomaly_mode import (
    AnomalyError,
    AnomalyEvent,
    NonFiniteWarning,
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_sentinel_enabled,
    module_scope,
    set_detect_anomaly,
    set_sentinel,
)
from lucid.autograd.engine import run_backward
from lucid.autograd.function import Function, FunctionCtx, once_differentiable
from lucid.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "Function",
    "FunctionCtx",
    "Variable",
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "once_differentiable",
    "AnomalyError",
    "AnomalyEvent",
    "NonFiniteWarning",
    "set_sentinel",
    "is_sentinel_enabled",
    "module_scope",
    "gradcheck",
    "gradgradcheck",
    "functional",
    "graph",
    "profiler",
]


def Variable(tensor: Tensor, requires_grad: bool = False) -> Tensor:  # noqa: N802
    """Deprecated PyTorch wrapper kept for old code: returns the tensor itself."""
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _as_tuple(tensors: Tensor | Sequence[Tensor] | None) -> tuple:
    if tensors is None:
        return ()
    if isinstance(tensors, Tensor):
        return (tensors,)
    return tuple(tensors)


def _make_grads(
    outputs: tuple[Tensor, ...], grads: tuple, is_grads_batched: bool = False
) -> list[Tensor]:
    seeds = []
    for index, (output, grad) in enumerate(zip(outputs, grads)):
        if grad is None:
            if output._requires_grad:
                if output._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if output._data.dtype.kind != "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{output.dtype}"
                    )
            seeds.append(_wrap(np.ones(output._data.shape, output._data.dtype)))
            continue
        if not isinstance(grad, Tensor):
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(grad).__name__
            )
        if grad._data.shape != output._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of {grad.shape} and "
                f"output[{index}] has a shape of {output.shape}."
            )
        if grad._data.dtype != output._data.dtype:
            # PyTorch accepts a seed of another real dtype and casts it to the output's.
            grad = grad.to(output.dtype)
        seeds.append(grad)
    return seeds


def _check_requires_grad(outputs: tuple[Tensor, ...]) -> None:
    for index, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            raise TypeError(f"expected a Tensor in outputs, got {type(output).__name__}")
        if not output._requires_grad:
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a grad_fn"
            )


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate into `.grad` of the leaves (or of `inputs`) the gradients of `tensors`.

    Example::

        x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
        lucid.autograd.backward((x * x).sum())   # x.grad == tensor([2., 4., 6.])
    """
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError(
                "'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                "backward(). Please only use 'grad_tensors'."
            )
        grad_tensors = grad_variables
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    _check_requires_grad(outputs)
    seeds = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    input_tuple = _as_tuple(inputs) if inputs is not None else None
    if input_tuple is not None:
        _check_inputs(input_tuple)
    run_backward(outputs, seeds, retain_graph, create_graph, input_tuple, accumulate_grad=True)


def _check_inputs(inputs: tuple) -> None:
    for input in inputs:
        if not isinstance(input, Tensor):
            raise TypeError(f"expected Tensor inputs, got {type(input).__name__}")
        if not input._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, without touching `.grad`.

    Example::

        x = lucid.tensor(3.0, requires_grad=True)
        (dx,) = lucid.autograd.grad(x ** 2, x)   # tensor(6.)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by lucid")
    output_tuple = _as_tuple(outputs)
    input_tuple = _as_tuple(inputs)
    if len(input_tuple) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(output_tuple)
    if len(grads) != len(output_tuple):
        raise RuntimeError(f"got {len(output_tuple)} tensors and {len(grads)} gradients")
    _check_requires_grad(output_tuple)
    _check_inputs(input_tuple)
    seeds = _make_grads(output_tuple, grads)
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(
        output_tuple, seeds, retain_graph, create_graph, input_tuple, accumulate_grad=False
    )
    assert result is not None
    for index, value in enumerate(result):
        if value is None:
            if materialize_grads:
                result[index] = _wrap(np.zeros_like(input_tuple[index]._data))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
    return tuple(result)


# Tools that `import lucid` does not need, loaded on first use as attributes of this package.
_LAZY_SUBMODULES = ("functional", "profiler")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        # Importing the submodule also sets it as this package's attribute, so this runs once.
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))


# As in PyTorch, the function shadows its module's name on lucid.autograd; loaded eagerly, since
# a lazy load would let `import lucid.autograd.gradcheck` bind the module under that name.
from lucid.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402,F401
