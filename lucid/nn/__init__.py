"""lucid.nn: modules, parameters, functional API and initialisation, mirroring torch.nn."""

from typing import Any

from lucid.nn import attention, functional, init, modules, parallel, utils
from lucid.nn.modules import *  # noqa: F403
from lucid.nn.modules import __all__ as _module_names
from lucid.nn.parallel import DataParallel
from lucid.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [
    "Parameter", "functional", "init", "modules", "utils", *_module_names,
    "Buffer", "UninitializedBuffer", "UninitializedParameter",
    "parallel", "DataParallel", "attention",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
