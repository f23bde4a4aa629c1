"""Adamax: Adam with the infinity norm of past gradients in place of their second moment."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.adam import _lerp_
from lucid.optim.optimizer import (
    Optimizer,
    _real_view,
    _scalar_dtype,
    check_adam_hyperparameters,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, as `torch.optim.Adamax`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                beta1, beta2 = group["betas"]
                eps = group["eps"]
                weight_decay = group["weight_decay"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        state["exp_avg"] = lucid.zeros_like(param)
                        state["exp_inf"] = lucid.zeros_like(param)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    # a complex parameter's infinity norm is per part (PyTorch's), not of |z|
                    exp_avg = _real_view(state["exp_avg"])
                    exp_inf = _real_view(state["exp_inf"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    if weight_decay != 0:
                        grad = grad.add(param, alpha=weight_decay)
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_inf.copy_(lucid.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
                    clr = lr / (1 - beta1 ** state["step"].item())
                    param.add_(exp_avg.mul(-clr).div_(exp_inf))
        return loss
