"""SparseAdam: Adam that updates only the rows a gradient touched, as for embedding tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid import Tensor
from lucid.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Masked Adam, as `torch.optim.SparseAdam`, for `nn.Embedding(sparse=True)` tables.

    lucid has no sparse tensors: `nn.Embedding(sparse=True)` gives a dense gradient whose
    untouched rows are zero. PyTorch refuses dense gradients here, which would make every
    ported `Embedding(sparse=True)` + `SparseAdam` program fail, so lucid accepts them and
    reads the sparsity back from the values: a slice `param[i]` along dim 0 (a row of an
    embedding table, an element of a vector) takes part in a step when any element of its
    gradient is nonzero (NaN counts). On those rows the moments and the parameter follow
    PyTorch's sparse update exactly; the other rows, and their moments, are left as they are.

    The one difference: PyTorch also updates a row that was looked up but whose gradient is
    exactly zero everywhere (its moments decay and the parameter moves by the old momentum);
    lucid cannot tell such a row from one that was not looked up, and skips it. Rows at
    `padding_idx` are skipped by both.

    Example::

        >>> emb = lucid.nn.Embedding(1000, 16, sparse=True)
        >>> opt = lucid.optim.SparseAdam(emb.parameters(), lr=1e-2)
        >>> emb(lucid.tensor([[1, 5, 5]])).sum().backward()
        >>> opt.step()  # rows 1 and 5 move, the other 998 are untouched
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [
            [group_index, param_index]
            for group_index, group in enumerate(self.param_groups)
            for param_index, param in enumerate(group["params"])
            if param.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = float(group["lr"])
                beta1, beta2 = group["betas"]
                eps = group["eps"]
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    state = self.state[param]
                    if len(state) == 0:
                        # A plain int, as PyTorch keeps it for this optimizer.
                        state["step"] = 0
                        state["exp_avg"] = lucid.zeros_like(param)
                        state["exp_avg_sq"] = lucid.zeros_like(param)
                    # The step counts every call with a gradient, even one that touches no row.
                    state["step"] += 1
                    grad = -param.grad if group["maximize"] else param.grad
                    self._update_touched_rows(param, grad, state, lr, beta1, beta2, eps)
        return loss

    @staticmethod
    def _update_touched_rows(
        param: Tensor,
        grad: Tensor,
        state: dict[str, Any],
        lr: float,
        beta1: float,
        beta2: float,
        eps: float,
    ) -> None:
        if param.dim() == 0:
            if not bool(grad.ne(0)):
                return
            # A 0-d parameter is one row; view it as a vector so the row code below applies.
            param, grad = param.view(1), grad.view(1)
            exp_avg, exp_avg_sq = state["exp_avg"].view(1), state["exp_avg_sq"].view(1)
        else:
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        touched = grad.ne(0).reshape(grad.shape[0], -1).any(dim=1)
        rows = lucid.nonzero(touched).view(-1)
        if rows.numel() == 0:
            return
        grad_rows = grad[rows]
        # old <- b * old + (1 - b) * new, written as old += (1 - b) * (new - old)
        old_exp_avg = exp_avg[rows]
        exp_avg_update = grad_rows.sub(old_exp_avg).mul_(1 - beta1)
        exp_avg[rows] = old_exp_avg + exp_avg_update
        old_exp_avg_sq = exp_avg_sq[rows]
        exp_avg_sq_update = grad_rows.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
        exp_avg_sq[rows] = old_exp_avg_sq + exp_avg_sq_update

        numer = exp_avg_update.add_(old_exp_avg)
        denom = exp_avg_sq_update.add_(old_exp_avg_sq).sqrt_().add_(eps)
        step = state["step"]
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr * math.sqrt(bias_correction2) / bias_correction1
        param[rows] = param[rows] + numer.div_(denom).mul_(-step_size)
