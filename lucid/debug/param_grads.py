"""NaNDetector's check of parameter gradients after backward(): non-finite gradients, norms
above a threshold, and float16/bfloat16 gradients past the headroom. Gradients that carry a
GradScaler's loss scale are judged unscaled."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from lucid._core.sentinel import gradient_scale
from lucid._tensor import Tensor
from lucid.debug.events import GradEvent
from lucid.debug.grad_norm import _is_scaler_overflow, _squared_norm
from lucid.debug.headroom import _HeadroomWatch, is_low_precision


def _check_parameter_grads(
    named_params: list[tuple[str, str, Tensor]],
    module_type: Callable[[str], str | None],
    threshold: float | None,
    headroom: _HeadroomWatch,
    batch_idx: int,
) -> list[GradEvent]:
    """A GradEvent for every parameter (full name, module path, tensor) whose gradient is
    non-finite or has an L2 norm above `threshold` (None: no norm limit); `module_type` names
    the class of the module at a path."""
    found = []
    with np.errstate(over="ignore", invalid="ignore"):
        for name, path, param in named_params:
            grad = param.grad
            if grad is None:
                continue
            array = grad._data
            scale = gradient_scale(param)
            if is_low_precision(array):
                headroom.half_kind(array, name, "gradient", scale=scale)
            norm = math.sqrt(_squared_norm(array)) / scale
            if not math.isfinite(norm) and _is_scaler_overflow():
                continue  # the scaler skips this step and lowers the scale
            if math.isfinite(norm):
                if threshold is None or norm <= threshold:
                    continue
                reason = "large"
            else:
                reason = "nan" if np.isnan(array).any() else "inf"
            found.append(GradEvent(batch_idx=batch_idx, param_name=name, layer_name=path,
                                   module_type=module_type(path), norm=norm, reason=reason,
                                   threshold=threshold))  # fmt: skip
    return found
