"""Adadelta: steps scaled by running averages of squared gradients and squared updates."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.optimizer import Optimizer, _real_view, _scalar_dtype

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, as `torch.optim.Adadelta`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                rho = group["rho"]
                eps = group["eps"]
                weight_decay = group["weight_decay"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        state["square_avg"] = lucid.zeros_like(param)
                        state["acc_delta"] = lucid.zeros_like(param)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    square_avg = _real_view(state["square_avg"])
                    acc_delta = _real_view(state["acc_delta"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    if weight_decay != 0:
                        grad = grad.add(param, alpha=weight_decay)
                    square_avg.mul_(rho).add_(grad.mul(1 - rho).mul_(grad))
                    std = square_avg.add(eps).sqrt_()
                    delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                    acc_delta.mul_(rho).add_(delta.mul(1 - rho).mul_(delta))
                    param.add_(delta, alpha=-lr)
        return loss
