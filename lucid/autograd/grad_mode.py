"""torch.autograd.grad_mode's names: grad and inference modes (defined in lucid._core.grad_mode),
and the engine's multithreading switch."""

from __future__ import annotations

from lucid._core.grad_mode import *  # noqa: F403
from lucid._core.grad_mode import __all__ as _core_names
from lucid._core.grad_mode import _DecoratorContextManager

__all__ = [*_core_names, "set_multithreading_enabled"]

# process-wide, as PyTorch's: lucid's engine runs every backward on the calling thread, so
# the switch changes nothing but is kept for code that sets and restores it
_multithreading_enabled = True


def _is_multithreading_enabled() -> bool:
    return _multithreading_enabled


def _set_multithreading(mode: bool) -> None:
    global _multithreading_enabled
    _multithreading_enabled = mode


class set_multithreading_enabled(_DecoratorContextManager):  # noqa: N801
    """Allow or forbid multithreaded backward: takes effect at once, and restores the previous
    setting on exit when used in `with`. lucid's backward is single-threaded either way."""

    def __init__(self, mode: bool) -> None:
        self.prev = _is_multithreading_enabled()
        self.mode = bool(mode)
        _set_multithreading(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _set_multithreading(self.prev)

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)
