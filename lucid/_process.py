"""Process settings PyTorch scripts call: thread counts, and `compile` as a pass-through.

lucid's intra-op parallelism is NumPy's BLAS. Its thread count is set through `threadpoolctl`
when that package is installed (it is optional, never a dependency); without it the count
is recorded and reported, and BLAS keeps the threads it started with.
"""

from __future__ import annotations

import builtins
import os
import warnings
from collections.abc import Callable
from typing import Any

__all__ = [
    "compile",
    "get_num_interop_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "set_num_threads",
]

_settings: dict[str, builtins.int | None] = {"threads": None, "interop_threads": None}
_compile_warned = [False]


def _check_thread_count(function: str, value: Any) -> None:
    if not isinstance(value, builtins.int) or isinstance(value, builtins.bool):
        name = "Tensor" if hasattr(value, "_data") else type(value).__name__
        raise RuntimeError(f"{function} expects an int, but got {name}")
    if value <= 0:
        raise RuntimeError(f"{function} expects a positive integer")


def _blas_threads() -> builtins.int | None:
    try:
        import threadpoolctl
    except ImportError:
        return None
    counts = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()
              if pool.get("user_api") == "blas"]  # fmt: skip
    return max(counts) if counts else None


def set_num_threads(num: builtins.int) -> None:
    """Set the number of threads BLAS uses (through `threadpoolctl`, if installed)."""
    _check_thread_count("set_num_threads", num)
    _settings["threads"] = num
    try:
        import threadpoolctl
    except ImportError:
        return
    # Not a context manager: the limit stays in force, as torch.set_num_threads's does.
    threadpoolctl.threadpool_limits(limits=num, user_api="blas")


def get_num_threads() -> builtins.int:
    """The number of threads BLAS uses (as last set, else as `threadpoolctl` reports)."""
    if _settings["threads"] is not None:
        return _settings["threads"]
    return _blas_threads() or os.cpu_count() or 1


def set_num_interop_threads(num: builtins.int) -> None:
    """Record the inter-op thread count; lucid runs ops one at a time, so it changes nothing.

    As in PyTorch, it may be set once.
    """
    _check_thread_count("set_num_interop_threads", num)
    if _settings["interop_threads"] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _settings["interop_threads"] = num


def get_num_interop_threads() -> builtins.int:
    if _settings["interop_threads"] is not None:
        return _settings["interop_threads"]
    return os.cpu_count() or 1


def compile(model: Callable | None = None, *, fullgraph: builtins.bool = False,
            dynamic: builtins.bool | None = None, backend: Any = None, mode: str | None = None,
            options: dict | None = None, disable: builtins.bool = False) -> Any:  # fmt: skip
    """Return `model` unchanged: lucid has no compiler, and runs the model eagerly.

    Warns once per process. Works as `lucid.compile(model)` and as `@lucid.compile(...)`.
    """
    if model is None:
        return lambda function: compile(function)
    if not callable(model):
        raise TypeError(f"A callable function is expected, but {type(model)} is provided.")
    if not _compile_warned[0]:
        _compile_warned[0] = True
        warnings.warn(
            "lucid.compile returns the model unchanged: lucid has no compiler and runs it "
            "eagerly, with the same results",
            UserWarning,
            stacklevel=2,
        )
    return model
