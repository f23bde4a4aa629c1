"""Batch normalization layers with running statistics: BatchNorm1d, 2d and 3d, and
SyncBatchNorm, whose statistics span every rank of a process group."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, distributed
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter
from lucid.ops.normalization import sync_batch_norm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Parameters and running-statistics buffers shared by the BatchNorm and InstanceNorm layers."""

    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(lucid.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(lucid.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer(
                "running_mean", lucid.zeros(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "running_var", lucid.ones(num_features, device=device, dtype=dtype)
            )
            # the batch counter stays int64 whatever the parameters' dtype
            self.register_buffer(
                "num_batches_tracked", lucid.tensor(0, dtype=lucid.long, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def _load_own_state(
        self, state_dict: Mapping[str, Any], prefix: str, assign: bool, errors: list[str],
        missing: list[str], unexpected: list[str],
    ) -> None:  # fmt: skip
        # Checkpoints older than the batch counter (PyTorch's version < 2, or no version
        # recorded) load with the counter kept as it is, as PyTorch does.
        version = getattr(state_dict, "_metadata", {}).get(prefix[:-1], {}).get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            counter = self.num_batches_tracked
            if counter is None:
                counter = lucid.tensor(0, dtype=lucid.long)
            state_dict = ChainMap({key: counter}, state_dict)
        super()._load_own_state(state_dict, prefix, assign, errors, missing, unexpected)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    """The forward shared by the BatchNorm layers."""

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # momentum=None keeps a cumulative (equal-weight) average over all batches seen
                average_factor = 1.0 / float(self.num_batches_tracked)
        # in eval mode without running stats the batch statistics are used, as in training
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_stats = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep_stats else None,
            self.running_var if keep_stats else None,
            self.weight,
            self.bias,
            use_batch_stats,
            average_factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics span the batches of every rank of a process group.

    In training mode with an initialised process group of more than one rank, the per-channel
    statistics (forward) and gradient sums (backward) are all-reduced over `process_group` (the
    default group when None); otherwise it is plain batch norm, as in PyTorch. Unlike
    PyTorch's, it runs on the CPU.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        group = self.process_group
        world_size = 1
        if use_batch_stats and self.training and distributed.is_initialized():
            world_size = distributed.get_world_size(group)
        if world_size == 1:
            return super().forward(input)
        average_factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                average_factor = 1.0 / float(self.num_batches_tracked)

        def sum_across(array: np.ndarray) -> np.ndarray:
            total = lucid.from_numpy(np.ascontiguousarray(array))
            distributed.all_reduce(total, group=group)
            return total.numpy()

        keep_stats = self.track_running_stats
        return sync_batch_norm(
            input,
            self.running_mean if keep_stats else None,
            self.running_var if keep_stats else None,
            self.weight,
            self.bias,
            average_factor,
            self.eps,
            sum_across,
        )

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """`module` with every BatchNorm*d layer in it replaced by a SyncBatchNorm that shares
        its parameters and running statistics."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                with lucid.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
