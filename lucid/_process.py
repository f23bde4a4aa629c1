"""Process settings PyTorch scripts call: thread counts, and `compile` (its options are
lucid._dynamo.config and lucid._inductor.config; the compiler is lucid/_dynamo/recording.py).

lucid's intra-op parallelism is NumPy's BLAS. Its thread count is set and read through
`threadpoolctl` (a dependency, imported on the first call: it adds to `import lucid`'s time).
"""

from __future__ import annotations

import builtins
import os
import warnings
from collections.abc import Callable
from typing import Any

from lucid._core.devices import check_device, device
from lucid._core.tensor import TensorBase
from lucid._dynamo import config as _dynamo_config
from lucid._dynamo import list_backends
from lucid._dynamo.exc import InvalidBackend

__all__ = [
    "compile",
    "get_num_interop_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "set_num_threads",
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "get_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
    "set_flush_denormal",
    "set_warn_always",
    "is_warn_always_enabled",
    "set_default_device",
    "get_default_device",
    "typename",
]

_settings: dict[str, builtins.int | None] = {"threads": None, "interop_threads": None}


def _check_thread_count(function: str, value: Any) -> None:
    if not isinstance(value, builtins.int) or isinstance(value, builtins.bool):
        name = "Tensor" if hasattr(value, "_data") else type(value).__name__
        raise RuntimeError(f"{function} expects an int, but got {name}")
    if value <= 0:
        raise RuntimeError(f"{function} expects a positive integer")


def _blas_threads() -> builtins.int | None:
    import threadpoolctl

    counts = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()
              if pool.get("user_api") == "blas"]  # fmt: skip
    return max(counts) if counts else None


def set_num_threads(num: builtins.int) -> None:
    """Set the number of threads BLAS uses."""
    import threadpoolctl

    _check_thread_count("set_num_threads", num)
    _settings["threads"] = num
    # Not a context manager: the limit stays in force, as torch.set_num_threads's does.
    threadpoolctl.threadpool_limits(limits=num, user_api="blas")


def get_num_threads() -> builtins.int:
    """The number of threads BLAS uses (as last set, else as BLAS reports it)."""
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
    """`model` compiled: each call records its ops once per guard set and replays them.

    Works as `lucid.compile(model)` (a module comes back as an `OptimizedModule`, as torch's)
    and as `@lucid.compile(...)`. The recording and its guards are in
    `lucid/_dynamo/recording.py`: results equal eager's bitwise, and what a recording cannot
    hold runs eagerly (a graph break, noted once; `fullgraph=True` raises). `dynamic`: every
    new input shape is recorded anew (up to torch's recompile limit of 8), lucid does not
    generalise a recording over shapes. `mode` and `options` are checked as torch.compile
    checks them and change nothing. `disable=True`, or `lucid._dynamo.config.disable`, returns
    `model` unchanged.
    """
    if model is None:

        def decorate(function: Callable) -> Any:
            if function is None:
                raise RuntimeError("Model can't be None")
            return compile(function, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)  # fmt: skip

        return decorate
    _check_compile_options(backend, mode, options, dynamic)
    if not callable(model):
        raise TypeError(f"A callable function is expected, but {type(model)} is provided.")
    if disable or _dynamo_config.disable:
        return model
    from lucid._dynamo.recording import compiled

    return compiled(model, fullgraph)


# torch's own backends that lucid's recorded replay stands in for.
_REPLAYING_BACKENDS = ("inductor", "eager", "aot_eager")


def _check_compile_options(backend: Any, mode: str | None, options: dict | None,
                           dynamic: builtins.bool | None) -> None:  # fmt: skip
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if isinstance(backend, str) and backend not in list_backends(exclude_tags=()):
        raise InvalidBackend(backend)
    if backend is not None and backend not in _REPLAYING_BACKENDS:
        name = backend if isinstance(backend, str) else getattr(backend, "__name__", "callable")
        raise RuntimeError(
            f"lucid.compile: backend {name!r} is not available in lucid; lucid's compiler "
            "records a call and replays it ('inductor', the default, or 'eager' and "
            "'aot_eager', which replay the same recording)"
        )
    if backend is not None and backend != "inductor":
        return  # another backend takes its options as they come
    from lucid._inductor import config, list_mode_options

    if mode and mode != "default":
        list_mode_options(mode, dynamic)
    if not options:
        return
    known = config.get_config_copy()
    for key in options:
        # torch.compile takes these two out of the options before checking the rest
        if key in ("guard_filter_fn", "use_aoti"):
            continue
        if key.replace("-", "_") not in known:
            raise RuntimeError(
                f"Unexpected optimization option {key}, known options are {list(known.keys())}"
            )


# -------------------------------------------------- determinism, precision, warnings
# lucid's kernels are NumPy's: deterministic on the CPU and always in full float32 precision,
# so these settings are recorded and reported, as a CPU build of PyTorch does.
_flags: dict[str, Any] = {
    "deterministic": False,
    "deterministic_warn_only": False,
    "matmul_precision": "highest",
    "warn_always": False,
}

_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the request; every lucid kernel is deterministic already."""
    if not isinstance(mode, builtins.bool):
        raise TypeError(
            f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}"
        )
    _flags["deterministic"] = mode
    _flags["deterministic_warn_only"] = builtins.bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> builtins.bool:
    return _flags["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> builtins.bool:
    return _flags["deterministic_warn_only"]


def set_deterministic_debug_mode(debug_mode: builtins.int | str) -> None:
    """0/'default' turns deterministic mode off, 1/'warn' on with warnings, 2/'error' on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> builtins.int:
    if not _flags["deterministic"]:
        return 0
    return 1 if _flags["deterministic_warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Record the precision asked for; NumPy's float32 matmul always runs at 'highest'."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _flags["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _flags["matmul_precision"]


def set_flush_denormal(mode: builtins.bool) -> builtins.bool:
    """Whether flushing denormals is supported: not by NumPy, so always False and unchanged
    (lucid's sentinel reports denormal results instead)."""
    _check_bool("flush_denormal", mode)
    return False


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, builtins.bool):
        kind = "Tensor" if hasattr(value, "_data") else type(value).__name__
        raise RuntimeError(f"{name} expects a bool, but got {kind}")


def set_warn_always(b: builtins.bool) -> None:
    _check_bool("setWarnOnlyOnce", b)
    _flags["warn_always"] = b


def is_warn_always_enabled() -> builtins.bool:
    return _flags["warn_always"]


def set_default_device(device: Any) -> None:
    """Only the CPU (or None, which means it) can be the default device."""
    check_device(device)


def get_default_device() -> Any:
    return device("cpu")


def typename(obj: Any) -> str:
    """PyTorch's legacy type name of a tensor (`lucid.FloatTensor`), else the object's type."""
    if isinstance(obj, TensorBase):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"
