"""Profiler op names: the name a Function's forward is reported under in profiles and NVTX
ranges (PyTorch's aten name for lucid's ops, the class name for a custom Function)."""

from __future__ import annotations

import re
import weakref

# Ops whose grad_fn is named after another aten op than the one they run.
_FORWARD_NAME_OVERRIDES = {
    "MatMul": "matmul",
    "VecMat": "matmul",
    "FoldedMatMul": "matmul",
    "CrossEntropy": "cross_entropy_loss",
    "SmoothL1Loss": "smooth_l1_loss",
    "NuclearNorm": "nuclear_norm",
    "RemainderScalarDividend": "remainder",
}
_BACKWARD_NAME = re.compile(r"(\w+?)Backward\d+")
# Weak, so that a custom Function class defined in a function can still be freed.
_forward_names: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def _forward_name(function: type) -> str:
    """The op name a Function's forward is reported under: PyTorch's aten name for lucid's
    ops (`mul`, `log_softmax`, `add_` for an in-place add), the class name for a custom one."""
    name = _forward_names.get(function)
    if name is None:
        name = _forward_names[function] = _derive_forward_name(function)
    return name


def _derive_forward_name(function: type) -> str:
    class_name = function.__name__
    if not function.__module__.startswith("lucid."):
        return class_name
    override = _FORWARD_NAME_OVERRIDES.get(class_name)
    if override is not None:
        return override
    # The grad_fn name carries PyTorch's op (DivScalar -> DivBackward0 -> div); lucid's own
    # nodes (lucid::autograd::...) and unnumbered names fall back to the class name.
    backward_name = function._backward_name or ""
    match = _BACKWARD_NAME.fullmatch(backward_name)
    is_inplace = class_name.endswith("Inplace")
    if match is not None:
        stem = match.group(1)
    else:
        stem = class_name[: -len("Inplace")] if is_inplace else class_name
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", stem)
    words = re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()
    return words + "_" if is_inplace else words
