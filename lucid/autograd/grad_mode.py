"""torch.autograd.grad_mode's names: grad and inference modes (defined in lucid._core.grad_mode)."""

from lucid._core.grad_mode import *  # noqa: F403
from lucid._core.grad_mode import __all__  # noqa: F401
