"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.optimizer import Optimizer, _real_view

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as `torch.optim.SGD`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                momentum = group["momentum"]
                dampening = group["dampening"]
                weight_decay = group["weight_decay"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    # SGD is linear in its real coefficients, so stepping a complex parameter's
                    # real view gives PyTorch's complex arithmetic part for part.
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    if weight_decay != 0:
                        grad = grad.add(_real_view(param), alpha=weight_decay)
                    if momentum != 0:
                        state = self.state[param]
                        buffer = state.get("momentum_buffer")
                        if buffer is None:
                            # a tensor of its own, complex for a complex parameter
                            state["momentum_buffer"] = lucid.zeros_like(param.grad)
                            buffer = _real_view(state["momentum_buffer"]).copy_(grad)
                        else:
                            buffer = _real_view(buffer)
                            buffer.mul_(momentum).add_(grad, alpha=1 - dampening)
                        grad = grad.add(buffer, alpha=momentum) if group["nesterov"] else buffer
                    _real_view(param).add_(grad, alpha=-lr)
        return loss
