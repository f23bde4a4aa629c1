"""weight_norm and spectral_norm as parametrizations (nn.utils.parametrize)."""

from __future__ import annotations

from typing import TypeVar

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.module import Module
from lucid.nn.utils import parametrize
from lucid.nn.utils.spectral_norm import _transposed_convolutions
from lucid.ops.normalization import norm_except_dim
from lucid.ops.normalization import weight_norm as _weight_norm

__all__ = ["weight_norm", "spectral_norm"]

ModuleT = TypeVar("ModuleT", bound=Module)


class _WeightNorm(Module):
    """weight = g * v / ||v||, from the originals (g, v)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: ModuleT, name: str = "weight", dim: int | None = 0) -> ModuleT:
    """Parametrize `module.<name>` as g * v / ||v||: the originals are
    `parametrizations.<name>.original0` (g) and `original1` (v).

    Checkpoints of the hook-based form (`<name>_g`, `<name>_v`) load after renaming those
    keys to `parametrizations.<name>.original0` and `original1`.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value, estimated by power iteration on the
    buffers `_u` and `_v` (15 steps at registration, then `n_power_iterations` per training
    forward)."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            height, width = weight_mat.size()
            u = weight_mat.new_empty(height).normal_(0, 1)
            v = weight_mat.new_empty(width).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            others = [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(self.dim, *others)
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # in place: u and v are buffers whose estimate improves across forwards
        with lucid.no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(
                    lucid.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u
                )
                self._v = F.normalize(
                    lucid.mv(weight_mat.t(), self._u), dim=0, eps=self.eps, out=self._v
                )

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # copies, so the graph does not see the next forward's in-place updates
        u = self._u.clone()
        v = self._v.clone()
        sigma = lucid.dot(u, lucid.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: ModuleT, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
    dim: int | None = None,
) -> ModuleT:  # fmt: skip
    """Parametrize `module.<name>` as itself divided by its spectral norm; `dim` defaults to
    1 for transposed convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _transposed_convolutions()) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
