"""The private torch APIs lucid.debug.torch relies on, in one place: a torch release that
changes one of them fails tests/debug/torch/test_private_api.py loudly, not a report quietly.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.modules.module as _module_hooks
import torch.optim.optimizer as _optimizer_hooks
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_unflatten

__all__ = [
    "TorchDispatchMode",
    "TorchFunctionMode",
    "current_autograd_node",
    "custom_function_apply",
    "foreach_norm",
    "grad_scaler_class",
    "next_sequence_nr",
    "no_torch_function",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "sequence_nr",
    "set_custom_function_apply",
    "skipped_by_scaler",
    "tree_flatten",
    "tree_unflatten",
]


# Inside it no TorchFunctionMode sees a call (the instrument's own checks).
no_torch_function = torch._C.DisableTorchFunction


def current_autograd_node() -> Any:
    """The autograd node whose backward is running on this thread, or None in forward."""
    return torch._C._current_autograd_node()


def next_sequence_nr() -> int:
    """The sequence number the next autograd node made on this thread will get."""
    return torch._C._autograd._get_sequence_nr()


def sequence_nr(node: Any) -> int:
    return node._sequence_nr()


def custom_function_apply() -> Any:
    """The classmethod object `torch.autograd.Function.apply` (custom Functions' entry, which
    a TorchFunctionMode does not see), to wrap while instrumenting and put back after."""
    return torch.autograd.Function.__dict__["apply"]


def set_custom_function_apply(method: Any) -> None:
    torch.autograd.Function.apply = method


def grad_scaler_class() -> Any:
    """torch.amp.GradScaler, whose `scale` and `step` a watch wraps while it is on."""
    return torch.amp.GradScaler


def skipped_by_scaler(scaler: Any, optimizer: Any) -> bool:
    """Whether the GradScaler's last step() for `optimizer` found inf/NaN and skipped it."""
    state = scaler._per_optimizer_states.get(id(optimizer))
    found = None if state is None else state.get("found_inf_per_device")
    return bool(found) and sum(value.item() for value in found.values()) > 0


def foreach_norm(tensors: list) -> list:
    """One 2-norm per tensor in one fused pass (a non-finite element makes it non-finite)."""
    return torch._foreach_norm(tensors)


# Global hooks: every module's call and every optimizer's step, with no model edited.
register_module_forward_pre_hook = _module_hooks.register_module_forward_pre_hook
register_module_forward_hook = _module_hooks.register_module_forward_hook
register_optimizer_step_pre_hook = _optimizer_hooks.register_optimizer_step_pre_hook
register_optimizer_step_post_hook = _optimizer_hooks.register_optimizer_step_post_hook
