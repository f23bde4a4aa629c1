"""lucid.nn.modules: Module, its containers, and the layers built on them."""

from lucid.nn.modules.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from lucid.nn.modules.module import Module

__all__ = ["Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
