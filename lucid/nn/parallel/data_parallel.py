"""DataParallel: PyTorch's single-process, multi-device wrapper, as it behaves on a machine
without accelerators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid.nn.modules.module import Module


class DataParallel(Module):
    """Wraps `module` and calls it: lucid computes on the CPU, where PyTorch's DataParallel
    finds no devices to split the batch over and does the same (`device_ids` is then []).
    For training on several processes use DistributedDataParallel.

    The wrapped module is the attribute `module`, so state dict keys gain a `module.` prefix,
    as in PyTorch.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[int] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
