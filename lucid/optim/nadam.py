"""NAdam: Adam with Nesterov momentum and a decaying momentum schedule."""

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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, as `torch.optim.NAdam`; `decoupled_weight_decay=True` gives NAdamW."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
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
                momentum_decay = group["momentum_decay"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        state["mu_product"] = lucid.tensor(1.0, dtype=_scalar_dtype())
                        state["exp_avg"] = lucid.zeros_like(param)
                        state["exp_avg_sq"] = lucid.zeros_like(param)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    exp_avg = _real_view(state["exp_avg"])
                    exp_avg_sq = _real_view(state["exp_avg_sq"])
                    param = _real_view(param)
                    mu_product = state["mu_product"]
                    state["step"].add_(1)
                    step = state["step"].item()
                    bias_correction2 = 1 - beta2**step
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            param.mul_(1 - lr * weight_decay)
                        else:
                            grad = grad.add(param, alpha=weight_decay)
                    # The momentum coefficient of this step and of the next (Nesterov look-ahead).
                    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                    mu_product.mul_(mu)
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    denom = exp_avg_sq.div(bias_correction2).sqrt_().add_(eps)
                    mu_product_value = mu_product.item()
                    mu_product_next = mu_product_value * mu_next
                    param.add_(grad.mul(-lr * (1.0 - mu) / (1.0 - mu_product_value)).div_(denom))
                    param.add_(exp_avg.mul((-lr * mu_next) / (1.0 - mu_product_next)).div_(denom))
        return loss
