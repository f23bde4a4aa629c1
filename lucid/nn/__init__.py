"""lucid.nn: modules, parameters, functional API and initialisation, mirroring torch.nn."""

from lucid.nn import functional, init, modules
from lucid.nn.modules import (
    Module,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from lucid.nn.parameter import Parameter

__all__ = [
    "Module",
    "ModuleDict",
    "ModuleList",
    "Parameter",
    "ParameterDict",
    "ParameterList",
    "Sequential",
    "functional",
    "init",
    "modules",
]
