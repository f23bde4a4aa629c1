"""spectral_norm and remove_spectral_norm: the forward-pre-hook form of spectral normalization."""

from __future__ import annotations

from typing import Any, TypeVar

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules import conv
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter, is_lazy

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]

ModuleT = TypeVar("ModuleT", bound=Module)


class SpectralNorm:
    """The hook that sets `name` to `name_orig` / sigma before each forward, where sigma, the
    largest singular value, is estimated by power iteration on the buffers `name_u`,
    `name_v` (one or more steps per training forward, none in evaluation)."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        weight_mat = weight
        if self.dim != 0:
            # the normalized dim becomes the rows
            others = [d for d in range(weight_mat.dim()) if d != self.dim]
            weight_mat = weight_mat.permute(self.dim, *others)
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # u and v are updated in place: they are the module's buffers, and the estimate
            # improves across forwards
            with lucid.no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(lucid.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(lucid.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                # copies, so the gradient graph does not see later in-place updates
                u = u.clone()
                v = v.clone()
        sigma = lucid.dot(u, lucid.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with lucid.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if is_lazy(weight):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying spectral normalization"
            )
        with lucid.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            height, width = weight_mat.size()
            u = F.normalize(weight.new_empty(height).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(width).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # until the first forward, `name` holds the unnormalized values
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def _transposed_convolutions() -> tuple[type, ...]:
    names = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
    return tuple(getattr(conv, name) for name in names if hasattr(conv, name))


def spectral_norm(
    module: ModuleT, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
    dim: int | None = None,
) -> ModuleT:  # fmt: skip
    """Divide `module.<name>` by its spectral norm before each forward; the parameter becomes
    `<name>_orig`, the power-iteration vectors the buffers `<name>_u` and `<name>_v`.
    `dim` defaults to 1 for transposed convolutions (their output channels), else 0.

    Example::

        layer = nn.utils.spectral_norm(nn.Linear(20, 40))
        sorted(layer.state_dict())  # ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        dim = 1 if isinstance(module, _transposed_convolutions()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: ModuleT, name: str = "weight") -> ModuleT:
    """Undo spectral_norm: `name` becomes a plain parameter holding the normalized weight."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
