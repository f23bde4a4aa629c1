"""Adagrad with learning-rate decay, weight decay and an initial accumulator value."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.optimizer import Optimizer, _real_view, _scalar_dtype

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as `torch.optim.Adagrad`."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        # Adagrad's state exists from construction (PyTorch's state_dict shows it before a step).
        for group in self.param_groups:
            for param in group["params"]:
                state = self.state[param]
                state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                # a complex parameter's parts are independent reals, each starting at the value
                initial_value = group["initial_accumulator_value"]
                if param.is_complex():
                    initial_value = complex(initial_value, initial_value)
                state["sum"] = lucid.full_like(param, initial_value)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                lr_decay = group["lr_decay"]
                weight_decay = group["weight_decay"]
                eps = group["eps"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    state["step"].add_(1)
                    step = state["step"].item()
                    grad = _real_view(param.grad)
                    if group["maximize"]:
                        grad = -grad
                    state_sum = _real_view(state["sum"])
                    param = _real_view(param)
                    if weight_decay != 0:
                        grad = grad.add(param, alpha=weight_decay)
                    clr = lr / (1 + (step - 1) * lr_decay)
                    state_sum.add_(grad * grad)
                    std = state_sum.sqrt().add_(eps)
                    param.add_(grad.mul(-clr).div_(std))
        return loss
