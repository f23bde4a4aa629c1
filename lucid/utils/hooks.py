"""RemovableHandle, as torch.utils.hooks has it (defined in lucid._core.hooks)."""

from typing import Any

from lucid._core.hooks import RemovableHandle

__all__ = ["RemovableHandle"]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
