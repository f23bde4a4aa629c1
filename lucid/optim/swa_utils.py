"""Weight averaging (SWA and EMA): an averaged copy of a model, the SWA learning-rate schedule,
and BatchNorm statistics recomputed for the averaged weights (torch.optim.swa_utils).

Example::

    swa_model = AveragedModel(model)
    scheduler = SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        swa_model.update_parameters(model)
        scheduler.step()
    update_bn(loader, swa_model)
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

import lucid
from lucid import Tensor
from lucid.nn import Module
from lucid.optim.lr_scheduler import LRScheduler, _format_param
from lucid.optim.optimizer import Optimizer, _real_view

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

ParamList = tuple[Tensor, ...] | list[Tensor]

# Every BatchNorm kind (their common base is private to lucid.nn).
_BATCH_NORMS = (
    lucid.nn.BatchNorm1d,
    lucid.nn.BatchNorm2d,
    lucid.nn.BatchNorm3d,
    lucid.nn.SyncBatchNorm,
    lucid.nn.LazyBatchNorm1d,
    lucid.nn.LazyBatchNorm2d,
    lucid.nn.LazyBatchNorm3d,
)


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[ParamList, ParamList, Any], None]:
    """An in-place EMA update of a list of averaged tensors: `ema += (1 - decay) * (p - ema)`."""
    _check_decay(decay)

    @lucid.no_grad()
    def ema_update(ema_param_list: ParamList, current_param_list: ParamList, _: Any) -> None:
        if lucid.is_floating_point(ema_param_list[0]) or lucid.is_complex(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                # a real weight moves each part of a complex tensor on its own
                _real_view(p_ema).lerp_(_real_view(p_model), 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[ParamList, ParamList, Tensor | int], None]:
    """An in-place running mean of a list of averaged tensors over `num_averaged + 1` models."""

    @lucid.no_grad()
    def swa_update(
        averaged_param_list: ParamList,
        current_param_list: ParamList,
        num_averaged: Tensor | int,
    ) -> None:
        if lucid.is_floating_point(averaged_param_list[0]) or lucid.is_complex(
            averaged_param_list[0]
        ):
            for p_averaged, p_model in zip(averaged_param_list, current_param_list, strict=True):
                weight = float(1 / (num_averaged + 1))
                _real_view(p_averaged).lerp_(_real_view(p_model), weight)
        else:
            for p_averaged, p_model in zip(averaged_param_list, current_param_list, strict=True):
                difference = p_model - p_averaged
                if isinstance(num_averaged, Tensor):
                    p_averaged.addcdiv_(difference, num_averaged + 1)
                else:
                    p_averaged.add_(difference, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA of one tensor: `decay * ema + (1 - decay) * current`."""
    _check_decay(decay)

    @lucid.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Tensor | int], Tensor]:
    """The running mean of one tensor over `num_averaged + 1` models."""

    @lucid.no_grad()
    def swa_update(
        averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int
    ) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of `model` whose parameters (and, with `use_buffers`, buffers) hold the
    average of the models passed to `update_parameters`; by default their running mean."""

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
        multi_avg_fn: Callable[[ParamList, ParamList, Tensor | int], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", lucid.tensor(0, dtype=lucid.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average (the first call copies them)."""
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params = self.parameters()
            model_params = model.parameters()
        averaged_detached: list[Tensor] = []
        model_detached: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_params, model_params, strict=False):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged_detached.append(p_averaged.detach())
            model_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                # One group per (device, dtype), as each multi_avg_fn call gets tensors alike.
                groups: dict[tuple[Any, Any], tuple[list[Tensor], list[Tensor]]] = {}
                for p_averaged, p_model in zip(averaged_detached, model_detached, strict=True):
                    key = (p_averaged.device, p_averaged.dtype)
                    averaged_group, model_group = groups.setdefault(key, ([], []))
                    averaged_group.append(p_averaged)
                    model_group.append(p_model)
                for (device, _), (averaged_group, model_group) in groups.items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(averaged_group, model_group, n_averaged)
                    else:
                        # torch's CPU path: the single-tensor mean (its fused lerp is for
                        # accelerators), so the rounding is the same.
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(averaged_group, model_group, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(averaged_detached, model_detached, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))

        if not self.use_buffers:
            # Buffers (BatchNorm's statistics) follow the latest model instead; update_bn
            # recomputes them for the averaged weights.
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@lucid.no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the BatchNorm running statistics of `model` with one pass over `loader`.

    Each batch (or its first element, for a list or tuple) is fed to the model in training
    mode with momentum None, so the statistics are the plain average over the batches.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BATCH_NORMS):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, list | tuple):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to its `swa_lr` over `anneal_epochs` steps, then hold it."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float,
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for group_swa_lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = group_swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, "
                "please use `get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # The lr the schedule started from is recovered from the current one (so another
        # schedule may have changed it): undo the previous step's blend, then blend anew.
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the anneal function (rebuilt on load)."""
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
