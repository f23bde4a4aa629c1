"""Muon: momentum steps of 2-D parameters, orthogonalised by a Newton-Schulz iteration."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid import Tensor
from lucid.optim.adam import _lerp_
from lucid.optim.optimizer import Optimizer, _refuse_complex_parameters

__all__ = ["Muon"]

# The quintic's coefficients, chosen for a steep slope at zero: five steps push every
# singular value into roughly [0.5, 1.5] rather than exactly to 1, which trains as well.
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5
EPS = 1e-7


def _orthogonalize(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                   eps: float) -> Tensor:  # fmt: skip
    """An approximate U V^T of G = U S V^T by `ns_steps` steps of X <- a X + (b A + c A^2) X,
    A = X X^T, from X = G / |G|_F (so every singular value starts at most 1).

    Runs in bfloat16, as PyTorch's (each product computed in float32 and rounded); without
    the ml_dtypes extra, which gives NumPy bfloat16, in the gradient's own dtype.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    # X X^T is the smaller Gram matrix when X is wide
    tall = grad.size(0) > grad.size(1)
    if lucid.bfloat16.numpy_dtype is not None:
        grad = grad.bfloat16()
    ortho = grad.t() if tall else grad
    ortho = ortho / ortho.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = ortho @ ortho.t()
        polynomial = lucid.addmm(gram, gram, gram, beta=b, alpha=c)
        ortho = lucid.addmm(ortho, polynomial, ortho, beta=a)
    return ortho.t() if tall else ortho


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    """The step size of an A x B matrix: scaled so that updates of every shape have a
    comparable RMS ("original"), or the RMS of AdamW's ("match_rms_adamw")."""
    rows, columns = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / columns))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, columns))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon, as `torch.optim.Muon`: for the 2-D weights of hidden layers only (biases and
    embeddings belong to another optimizer such as AdamW)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                if param.dim() != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {param.size()}"
                    )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update; returns the loss computed by `closure`, if given."""
        loss = self._run_closure(closure)
        with lucid.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                if isinstance(lr, Tensor):
                    lr = lr.item()
                weight_decay = group["weight_decay"]
                momentum = group["momentum"]
                _refuse_complex_parameters(group, "Muon")
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    grad = param.grad
                    if grad.dim() != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    state = self.state[param]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = lucid.zeros_like(grad)
                    buffer = _lerp_(state["momentum_buffer"], grad, 1 - momentum)
                    update = lucid.lerp(grad, buffer, momentum) if group["nesterov"] else buffer
                    update = _orthogonalize(
                        update, group["ns_coefficients"], group["ns_steps"], group["eps"]
                    )
                    step_size = _adjust_lr(lr, group["adjust_lr_fn"], param.shape)
                    # weight decay is decoupled: it shrinks the parameter by the unadjusted lr
                    param.mul_(1 - lr * weight_decay)
                    param.add_(update, alpha=-step_size)
        return loss
