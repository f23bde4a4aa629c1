"""torch.autograd.graph's names: the graph's Node (defined in lucid._core.graph) and the hooks
on what the graph saves for backward."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

from lucid._core.grad_mode import _DecoratorContextManager, local_state
from lucid._core.graph import *  # noqa: F403
from lucid._core.graph import __all__ as _core_names
from lucid._core.graph import accumulator_for
from lucid._core.tensor import TensorBase

__all__ = [
    *_core_names,
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
]


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: each tensor an op saves for backward inside it is replaced by
    `pack_hook(tensor)`, and reading it in backward returns `unpack_hook(packed)`.

    The innermost active pair applies. Activation checkpointing is built on this: its pack
    hook keeps nothing, and its unpack hook recomputes the forward.

    Example::

        with lucid.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = x.exp()   # exp's saved output is a copy made by the pack hook
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        refusal = local_state.saved_tensors_hooks_refusal
        if refusal is not None:
            raise RuntimeError(refusal)
        self._previous = local_state.saved_tensors_hooks
        local_state.saved_tensors_hooks = (self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc_info: Any) -> None:
        local_state.saved_tensors_hooks = self._previous


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Keep saved tensors in CPU memory and move them back to their device for backward.

    lucid's tensors are on the CPU already, so, as PyTorch does for a CPU tensor, each saved
    tensor is a copy (which in-place changes of the original no longer reach); `pin_memory`
    has no effect without an accelerator.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: TensorBase) -> tuple:
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed: tuple) -> TensorBase:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks(_DecoratorContextManager):  # noqa: N801 - PyTorch's name
    """Inside it, entering saved_tensors_hooks (or anything built on them, as
    checkpointing) raises RuntimeError with `error_message`."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def clone(self) -> disable_saved_tensors_hooks:
        return self.__class__(self.error_message)

    def __enter__(self) -> None:
        self._previous = local_state.saved_tensors_hooks_refusal
        local_state.saved_tensors_hooks_refusal = self.error_message

    def __exit__(self, *exc_info: Any) -> None:
        local_state.saved_tensors_hooks_refusal = self._previous


GradientEdge = namedtuple(
    "GradientEdge", ("node", "output_nr", "ownership_token"), defaults=(None,)
)
GradientEdge.__doc__ = "An edge of the graph: a node and which of its inputs' gradients."


def get_gradient_edge(tensor: TensorBase) -> GradientEdge:
    """The edge by which `tensor`'s gradient enters the graph: its grad_fn and output number,
    or its AccumulateGrad for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    if tensor.grad_fn is None:
        return GradientEdge(accumulator_for(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor._output_nr)


def increment_version(tensor: TensorBase | list | tuple) -> None:
    """Bump the version counter(s), as an in-place write would, so that backward through a
    node that saved the tensor raises PyTorch's error for a modified saved tensor."""
    for item in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        item._version_counter[0] += 1


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
