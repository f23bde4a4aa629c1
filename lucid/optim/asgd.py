"""Averaged SGD: SGD with a decaying step and a running average of the iterates in `ax`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.optimizer import Optimizer, _real_view, _scalar_dtype

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent, as `torch.optim.ASGD`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
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
                lambd = group["lambd"]
                alpha = group["alpha"]
                t0 = group["t0"]
                weight_decay = group["weight_decay"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        state["eta"] = lucid.tensor(lr, dtype=_scalar_dtype())
                        state["mu"] = lucid.tensor(1.0, dtype=_scalar_dtype())
                        state["ax"] = lucid.zeros_like(param)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    ax = _real_view(state["ax"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    step = state["step"].item()
                    if weight_decay != 0:
                        grad = grad.add(param, alpha=weight_decay)
                    eta = state["eta"].item()
                    param.mul_(1 - lambd * eta)
                    param.add_(grad, alpha=-eta)
                    mu = state["mu"].item()
                    if mu != 1:
                        ax.add_(param.sub(ax).mul_(mu))
                    else:
                        ax.copy_(param)
                    state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
                    state["mu"].fill_(1 / max(1, step - t0))
        return loss
