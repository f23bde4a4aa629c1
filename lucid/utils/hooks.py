"""RemovableHandle, as torch.utils.hooks has it (defined in lucid._core.hooks)."""

from lucid._core.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
