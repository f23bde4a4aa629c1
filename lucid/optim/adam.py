"""Adam and AdamW (decoupled weight decay), with amsgrad and maximize."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid import Tensor
from lucid.optim.optimizer import (
    Optimizer,
    _real_view,
    _scalar_dtype,
    check_adam_hyperparameters,
)

__all__ = ["Adam", "AdamW"]


def _lerp_(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """In-place start += weight * (end - start), rounded from the nearer end as PyTorch's lerp."""
    if abs(weight) < 0.5:
        return start.add_((end - start).mul_(weight))
    return start.copy_(end - (end - start).mul_(1 - weight))


class Adam(Optimizer):
    """Adam, as `torch.optim.Adam`; `decoupled_weight_decay=True` makes it AdamW."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_hyperparameters(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _init_state(self, param: Tensor, amsgrad: bool) -> dict[str, Any]:
        state = self.state[param]
        if len(state) == 0:
            state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
            state["exp_avg"] = lucid.zeros_like(param)
            state["exp_avg_sq"] = lucid.zeros_like(param)
            if amsgrad:
                state["max_exp_avg_sq"] = lucid.zeros_like(param)
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                beta1, beta2 = group["betas"]
                eps = group["eps"]
                weight_decay = group["weight_decay"]
                amsgrad = group["amsgrad"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self._init_state(param, amsgrad)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    exp_avg = _real_view(state["exp_avg"])
                    exp_avg_sq = _real_view(state["exp_avg_sq"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    if weight_decay != 0:
                        if group["decoupled_weight_decay"]:
                            param.mul_(1 - lr * weight_decay)
                        else:
                            grad = grad.add(param, alpha=weight_decay)
                    _lerp_(exp_avg, grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                    step = state["step"].item()
                    bias_correction1 = 1 - beta1**step
                    bias_correction2 = 1 - beta2**step
                    step_size = lr / bias_correction1
                    bias_correction2_sqrt = bias_correction2**0.5
                    if amsgrad:
                        max_exp_avg_sq = _real_view(state["max_exp_avg_sq"])
                        max_exp_avg_sq.copy_(lucid.maximum(max_exp_avg_sq, exp_avg_sq))
                        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    else:
                        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    param.add_(exp_avg.mul(-step_size).div_(denom))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01), as `torch.optim.AdamW`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
