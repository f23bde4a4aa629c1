"""weight_norm and remove_weight_norm: the forward-pre-hook form of weight normalization."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter, is_lazy
from lucid.ops.normalization import norm_except_dim
from lucid.ops.normalization import weight_norm as _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

ModuleT = TypeVar("ModuleT", bound=Module)


class WeightNorm:
    """The hook that recomputes `name` from `name_g` (magnitude) and `name_v` (direction)
    before each forward."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if is_lazy(weight):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying weight normalization"
            )
        # the weight becomes a function of two new parameters, magnitude and direction
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: ModuleT, name: str = "weight", dim: int = 0) -> ModuleT:
    """Reparameterize `module.<name>` as g * v / ||v|| (norm over all dims but `dim`; dim=None
    over the whole tensor), with parameters `<name>_g` and `<name>_v`.

    Example::

        layer = nn.utils.weight_norm(nn.Linear(20, 40))
        layer.weight_g.shape  # (40, 1)
    """
    warnings.warn(
        "`lucid.nn.utils.weight_norm` is deprecated in favor of "
        "`lucid.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: ModuleT, name: str = "weight") -> ModuleT:
    """Undo weight_norm: `name` becomes a plain parameter again, with its current value."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
