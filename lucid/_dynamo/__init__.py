"""`lucid._dynamo`: the torch._dynamo names training scripts call around `lucid.compile`.

lucid's compiler records a call and replays it (`lucid/_dynamo/recording.py`). These keep
torch's signatures and argument checks: `reset()` forgets every recording, `is_compiling()`
is True while a call is recorded, and `disable` (which returns the function itself) and the
`mark_*` hints change nothing, since a recording has no traced Python to leave out and no
shapes to generalise. Options live in `lucid._dynamo.config`.

    import lucid._dynamo
    lucid._dynamo.config.suppress_errors = True
    lucid._dynamo.reset()
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import lucid
from lucid._core.grad_mode import local_state
from lucid._dynamo import config, exc

__all__ = [
    "allow_in_graph",
    "config",
    "disable",
    "exc",
    "graph_break",
    "is_compiling",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "reset",
]


# torch 2.13's registered compiler backends: the four it lists by default, and those it tags
# "debug" or "experimental" (listed only with `exclude_tags=()`).
_LISTED_BACKENDS = ("cudagraphs", "inductor", "openxla", "tvm")
_TAGGED_BACKENDS = (
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
    "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "eager", "eager_debug",
    "eager_noexcept", "invoke_subgraph", "non_leaf_compile_error_TESTING_ONLY", "openxla_eval",
    "pre_dispatch_eager", "relu_accuracy_error_TESTING_ONLY", "relu_compile_error_TESTING_ONLY",
    "relu_runtime_error_TESTING_ONLY", "ts",
)  # fmt: skip


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """torch's compiler backend names (lucid runs every one of them eagerly); with
    `exclude_tags=()` the debug and experimental ones too."""
    names = _LISTED_BACKENDS if exclude_tags else _LISTED_BACKENDS + _TAGGED_BACKENDS
    return sorted(names)


def reset() -> None:
    """Forget every recording lucid.compile made (the config is kept, as torch keeps it)."""
    recording = sys.modules.get("lucid._dynamo.recording")
    if recording is not None:
        recording.reset()


def disable(
    fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None,
    wrapping: bool = True,
) -> Any:  # fmt: skip
    """Exclude `fn` from compilation: it is returned unchanged, since lucid runs it eagerly
    anyway. Works as `@disable` and as `@disable(recursive=False)`."""
    if fn is None:
        return lambda function: disable(function, recursive, reason=reason, wrapping=wrapping)
    if not callable(fn):
        raise AssertionError("fn must be callable")
    return fn


def allow_in_graph(fn: Any) -> Any:
    """Let the compiler put `fn` into its graph as is: returns `fn` (a list or tuple of
    callables gives a list of them)."""
    if isinstance(fn, list | tuple):
        return [allow_in_graph(function) for function in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def graph_break(msg: str = "") -> None:
    """Force a graph break: there is no graph, so nothing happens."""


def is_compiling() -> bool:
    """Whether this code runs while lucid.compile records it."""
    return local_state.recorder is not None


def _check_index(index: Any) -> None:
    if not isinstance(index, int | list | tuple):
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")


def mark_dynamic(
    t: Any, index: int | list[Any] | tuple[Any], *, hint_override: int | None = None,
    min: int | None = None, max: int | None = None, specialize_on: list[Any] | None = None,
) -> None:  # fmt: skip
    """Mark dimension(s) `index` of `t` dynamic for the compiler: a no-op (lucid runs every
    shape eagerly), after torch's check of `index`."""
    _check_index(index)


def maybe_mark_dynamic(t: Any, index: int | list[Any] | tuple[Any]) -> None:
    """As `mark_dynamic`, without enforcing it: a no-op after torch's check of `index`."""
    _check_index(index)


def mark_static(t: Any, index: int | list[Any] | tuple[Any] | None = None) -> None:
    """Mark dimension(s) of `t` static for the compiler: a no-op."""


def mark_static_address(t: Any, guard: bool = False) -> None:
    """Mark a tensor's storage as fixed across calls, for CUDA graphs: a no-op on a tensor."""
    if not isinstance(t, lucid.Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
