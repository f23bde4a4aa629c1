"""torch.autograd.graph's names: the graph's Node (defined in lucid._core.graph)."""

from lucid._core.graph import *  # noqa: F403
from lucid._core.graph import __all__  # noqa: F401
