"""Adafactor: Adam-like steps whose second moment of a matrix is stored as row and column means."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid.optim.adam import _lerp_
from lucid.optim.optimizer import Optimizer, _refuse_complex_parameters, _scalar_dtype

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor, as `torch.optim.Adafactor` (no first moment; updates clipped to RMS `d`)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                beta2_decay = group["beta2_decay"]
                eps1, eps2 = group["eps"]
                d = group["d"]
                weight_decay = group["weight_decay"]
                _refuse_complex_parameters(group, "Adafactor")
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    grad = -param.grad if group["maximize"] else param.grad
                    state = self.state[param]
                    if len(state) == 0:
                        state["step"] = lucid.tensor(0.0, dtype=_scalar_dtype())
                        if grad.dim() > 1:
                            row_shape = list(grad.shape)
                            row_shape[-1] = 1
                            state["row_var"] = lucid.zeros(row_shape, dtype=grad.dtype)
                            col_shape = list(grad.shape)
                            col_shape[-2] = 1
                            state["col_var"] = lucid.zeros(col_shape, dtype=grad.dtype)
                        else:
                            state["variance"] = lucid.zeros_like(grad)
                    if eps1 is None:
                        # As PyTorch: the first parameter's dtype sets it for the whole group.
                        eps1 = lucid.finfo(param.dtype).eps
                    state["step"].add_(1)
                    step = state["step"].item()
                    one_minus_beta2_t = step**beta2_decay
                    rho_t = min(lr, 1 / (step**0.5))
                    # The step is relative to the parameter's RMS, floored at eps2.
                    alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
                    if weight_decay != 0:
                        param.mul_(1 - lr * weight_decay)
                    if grad.dim() > 1:
                        # Rank-1 factorisation of the second moment over the last two dims.
                        row_var = state["row_var"]
                        col_var = state["col_var"]
                        row_norm = lucid.norm(grad, dim=-1, keepdim=True)
                        row_mean = (row_norm * row_norm).div_(grad.size(-1))
                        _lerp_(row_var, row_mean, one_minus_beta2_t)
                        col_norm = lucid.norm(grad, dim=-2, keepdim=True)
                        col_mean = (col_norm * col_norm).div_(grad.size(-2))
                        _lerp_(col_var, col_mean, one_minus_beta2_t)
                        var_estimate = row_var @ col_var
                        var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                    else:
                        variance = state["variance"]
                        _lerp_(variance, grad * grad, one_minus_beta2_t)
                        var_estimate = variance.clone()
                    update = var_estimate.clamp_(min=eps1 * eps1).rsqrt().mul_(grad)
                    denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                    param.add_(update, alpha=-alpha / denom)
        return loss
