"""torch.autograd.function's names: Function and its ctx (defined in lucid._core.function)."""

from lucid._core.function import *  # noqa: F403
from lucid._core.function import __all__  # noqa: F401
