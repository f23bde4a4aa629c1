"""Dropout layers: elementwise, whole channels (1d, 2d, 3d) and the alpha forms, as in torch.nn."""

from __future__ import annotations

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.modules.module import Module

__all__ = [
    "Dropout", "Dropout2d", "Dropout1d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
]  # fmt: skip


class _DropoutNd(Module):
    """Shared constructor and repr of the dropout layers."""

    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """While training, zero each element with probability p and scale the rest by 1/(1-p)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """While training, zero whole channels of (N, C, H, W) input with probability p."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """While training, zero whole channels of (N, C, L) or (C, L) input with probability p."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """While training, zero whole channels of (N, C, D, H, W) input with probability p."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the zero mean and unit variance of SELU activations."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout over whole channels."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
