"""lucid.autograd: reverse-mode automatic differentiation, mirroring torch.autograd."""

from __future__ import annotations

import importlib
from typing import Any

from lucid._core.engine import backward, grad
from lucid._core.function import Function, FunctionCtx, once_differentiable
from lucid._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from lucid._tensor import Tensor
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
from lucid.autograd.grad_mode import set_multithreading_enabled

# As in PyTorch, the function shadows its module's name on lucid.autograd; loaded eagerly, since
# a lazy load would let `import lucid.autograd.gradcheck` bind the module under that name.
from lucid.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

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
    "set_multithreading_enabled",
]


def Variable(tensor: Tensor, requires_grad: bool = False) -> Tensor:  # noqa: N802
    """Deprecated PyTorch wrapper kept for old code: returns the tensor itself."""
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


# Tools that `import lucid` does not need, loaded on first use as attributes of this package.
_LAZY_SUBMODULES = ("functional", "profiler", "forward_ad")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        # Importing the submodule also sets it as this package's attribute, so this runs once.
        return importlib.import_module(f"{__name__}.{name}")
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
