"""Utilities: removable hook handles, data loading, and pickle-free serialization."""

import importlib
from typing import Any

from lucid.utils import hooks

__all__ = ["hooks", "data", "checkpoint", "benchmark", "from_torch_state_dict"]


def __getattr__(name: str) -> Any:
    # data and serialization build on lucid's whole namespace, while the Tensor itself
    # imports lucid.utils.hooks: load them on first use to keep the import order acyclic.
    if name == "data":
        return importlib.import_module("lucid.utils.data")
    if name == "benchmark":
        return importlib.import_module("lucid.utils.benchmark")
    if name == "checkpoint":
        return importlib.import_module("lucid.utils.checkpoint")
    if name == "from_torch_state_dict":
        return importlib.import_module("lucid.utils.serialization").from_torch_state_dict
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
