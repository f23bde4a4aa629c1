"""Lazy modules: layers whose parameter shapes are inferred from the first input they see."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import Tensor
from lucid.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from lucid.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from lucid.nn.modules.instancenorm import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _InstanceNorm,
)
from lucid.nn.modules.linear import Linear
from lucid.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyModuleMixin", "LazyLinear", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
]  # fmt: skip


class LazyModuleMixin:
    """Mixed in before a Module class, it defers parameter shapes to the first forward.

    A lazy module holds `UninitializedParameter`/`UninitializedBuffer` placeholders. Before
    its first forward it calls `initialize_parameters(*args, **kwargs)`, which materializes
    them from the input, and then turns into `cls_to_become` (LazyLinear becomes Linear).
    Loading a state dict materializes the placeholders with the loaded shapes.

    Example::

        layer = nn.LazyLinear(10)
        layer(lucid.randn(4, 3))  # now a Linear(in_features=3, out_features=10)
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize the uninitialized parameters from the first forward's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still a placeholder."""
        tensors = (*self._parameters.values(), *self._buffers.values())
        return any(is_lazy(tensor) for tensor in tensors)

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _load_own_state(
        self, state_dict: Any, prefix: str, assign: bool, errors: list[str],
        missing: list[str], unexpected: list[str],
    ) -> None:  # fmt: skip
        # a checkpoint of an initialized module gives the placeholders their shapes
        for name, value in (*self._parameters.items(), *self._buffers.items()):
            if not is_lazy(value):
                continue
            loaded = state_dict.get(prefix + name)
            if isinstance(loaded, Tensor) and not is_lazy(loaded):
                with lucid.no_grad():
                    value.materialize(loaded.shape)
        super()._load_own_state(state_dict, prefix, assign, errors, missing, unexpected)


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear layer whose in_features is inferred from the first input's last dimension."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with lucid.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            # weights loaded from a checkpoint: the input must fit them
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """The lazy BatchNorm and InstanceNorm layers: num_features comes from the input's dim 1."""

    def __init__(
        self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
        track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
        bias: bool = True,
    ) -> None:  # fmt: skip
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = lucid.tensor(0, dtype=lucid.long, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features is inferred from the first input."""

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input: Tensor) -> None:
        BatchNorm1d._check_input_dim(self, input)


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features is inferred from the first input."""

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input: Tensor) -> None:
        BatchNorm2d._check_input_dim(self, input)


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features is inferred from the first input."""

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input: Tensor) -> None:
        BatchNorm3d._check_input_dim(self, input)


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose num_features is inferred from the first input."""

    cls_to_become = InstanceNorm1d

    def _get_no_batch_dim(self) -> int:
        return 2

    def _check_input_dim(self, input: Tensor) -> None:
        InstanceNorm1d._check_input_dim(self, input)


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm2d whose num_features is inferred from the first input."""

    cls_to_become = InstanceNorm2d

    def _get_no_batch_dim(self) -> int:
        return 3

    def _check_input_dim(self, input: Tensor) -> None:
        InstanceNorm2d._check_input_dim(self, input)


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm3d whose num_features is inferred from the first input."""

    cls_to_become = InstanceNorm3d

    def _get_no_batch_dim(self) -> int:
        return 4

    def _check_input_dim(self, input: Tensor) -> None:
        InstanceNorm3d._check_input_dim(self, input)


class _LazyConvMixin(LazyModuleMixin):
    """The lazy convolutions: in_channels comes from the input's channel dim (dim 1 of a
    batch, dim 0 of a single sample)."""

    _spatial_dims = 2

    def _make_lazy(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _input_channels(self, input: Tensor) -> int:
        batched = input.dim() == self._spatial_dims + 2
        return input.shape[1] if batched else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._input_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with lucid.no_grad():
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConvNd(_LazyConvMixin):
    def __init__(
        self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
        dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
        device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        # built with no channels and no bias, then given placeholders (as torch's lazy convs)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)  # fmt: skip
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTransposeNd(_LazyConvMixin):
    def __init__(
        self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
        output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode)  # fmt: skip
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConvNd, Conv1d):
    """A Conv1d whose in_channels is inferred from the first input."""

    cls_to_become = Conv1d
    _spatial_dims = 1


class LazyConv2d(_LazyConvNd, Conv2d):
    """A Conv2d whose in_channels is inferred from the first input."""

    cls_to_become = Conv2d
    _spatial_dims = 2


class LazyConv3d(_LazyConvNd, Conv3d):
    """A Conv3d whose in_channels is inferred from the first input."""

    cls_to_become = Conv3d
    _spatial_dims = 3


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is inferred from the first input."""

    cls_to_become = ConvTranspose1d
    _spatial_dims = 1


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is inferred from the first input."""

    cls_to_become = ConvTranspose2d
    _spatial_dims = 2


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is inferred from the first input."""

    cls_to_become = ConvTranspose3d
    _spatial_dims = 3
