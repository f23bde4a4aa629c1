"""RAdam: Adam whose adaptive step is rectified while the second moment's variance is large."""

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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, as `torch.optim.RAdam`; `decoupled_weight_decay=True` gives RAdamW."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
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
                        state["exp_avg_sq"] = lucid.zeros_like(param)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    exp_avg = _real_view(state["exp_avg"])
                    exp_avg_sq = _real_view(state["exp_avg_sq"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    step = state["step"].item()
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            param.mul_(1 - lr * weight_decay)
                        else:
                            grad = grad.add(param, alpha=weight_decay)
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    bias_correction1 = 1 - beta1**step
                    bias_correction2 = 1 - beta2**step
                    update = (exp_avg / bias_correction1).mul_(lr)
                    # Length of the approximated simple moving average; the variance of the
                    # adaptive lr is tractable only once it exceeds 5 (else plain momentum SGD).
                    rho_inf = 2 / (1 - beta2) - 1
                    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                    if rho_t > 5.0:
                        rect = (
                            (rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                        ) ** 0.5  # fmt: skip
                        adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                        update.mul_(adaptive_lr).mul_(rect)
                    param.sub_(update)
        return loss
