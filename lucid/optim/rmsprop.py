"""RMSprop with momentum, centering and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.adam import _lerp_
from lucid.optim.optimizer import Optimizer, _real_view, _scalar_dtype

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as `torch.optim.RMSprop`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                alpha = group["alpha"]
                eps = group["eps"]
                weight_decay = group["weight_decay"]
                momentum = group["momentum"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        state["square_avg"] = lucid.zeros_like(param)
                        if momentum > 0:
                            state["momentum_buffer"] = lucid.zeros_like(param)
                        if group["centered"]:
                            state["grad_avg"] = lucid.zeros_like(param)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    square_avg = _real_view(state["square_avg"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    if weight_decay != 0:
                        grad = grad.add(param, alpha=weight_decay)
                    square_avg.mul_(alpha).add_(grad.mul(1 - alpha).mul_(grad))
                    if group["centered"]:
                        grad_avg = _real_view(state["grad_avg"])
                        _lerp_(grad_avg, grad, 1 - alpha)
                        avg = square_avg.sub(grad_avg * grad_avg).sqrt_()
                    else:
                        avg = square_avg.sqrt()
                    avg = avg.add_(eps)
                    if momentum > 0:
                        buffer = _real_view(state["momentum_buffer"])
                        buffer.mul_(momentum).add_(grad / avg)
                        param.add_(buffer, alpha=-lr)
                    else:
                        param.add_(grad.mul(-lr).div_(avg))
        return loss
