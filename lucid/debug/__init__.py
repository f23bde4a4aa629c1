"""Training-loop tools for finding where NaNs and exploding gradients come from."""

from lucid.debug.grad_norm import GradNormEvent, GradNormGuard

__all__ = ["GradNormEvent", "GradNormGuard"]
