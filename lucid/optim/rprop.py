"""Rprop: per-element step sizes that grow while a gradient keeps its sign, shrink when it flips."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.optimizer import Optimizer, _real_view, _scalar_dtype

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation, as `torch.optim.Rprop`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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
                etaminus, etaplus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        state["prev"] = lucid.zeros_like(param)
                        # a complex parameter's parts step independently, each from lr
                        initial_step = group["lr"]
                        if param.is_complex():
                            initial_step = complex(initial_step, initial_step)
                        state["step_size"] = lucid.full_like(param, initial_step)
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    prev = _real_view(state["prev"])
                    step_size = _real_view(state["step_size"])
                    param = _real_view(param)
                    state["step"].add_(1)
                    sign = grad.mul(prev).sign()
                    factor = lucid.ones_like(sign)
                    factor.masked_fill_(sign.gt(0), etaplus)
                    factor.masked_fill_(sign.lt(0), etaminus)
                    step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                    # After a sign flip the element does not move, and the next step treats it
                    # as fresh (its remembered gradient is zero).
                    grad = grad.masked_fill(sign.lt(0), 0)
                    param.sub_(grad.sign().mul_(step_size))
                    prev.copy_(grad)
        return loss
