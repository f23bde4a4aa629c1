"""`lucid._inductor`: torch._inductor's option table (`lucid._inductor.config`) and the small
helpers scripts call with it.

lucid has no compiler; `lucid.compile` checks its `mode` and `options` against these, as
torch.compile does, and then runs the model eagerly.
"""

from __future__ import annotations

from typing import Any

from lucid._inductor import config

__all__ = ["cudagraph_mark_step_begin", "list_mode_options", "list_options"]

# torch 2.13's modes and the options each sets (torch._inductor.list_mode_options)
_LITE_MODE_OPTIONS = {
    "fallback_by_default": True,
    "selective_decompose": True,
    "reorder_for_peak_memory": False,
    "reorder_for_compute_comm_overlap": False,
    "triton.reorder_for_reducing_graph_partitions": False,
    "use_pre_grad_passes": False,
    "use_joint_graph_passes": False,
    "use_post_grad_passes": False,
    "use_dce": False,
    "allow_buffer_reuse": False,
}


def list_mode_options(mode: str | None = None, dynamic: bool | None = None) -> dict[str, Any]:
    """The options each `lucid.compile` mode sets (all modes when `mode` is None)."""
    mode_options: dict[str, dict[str, Any]] = {
        "default": {},
        "lite": dict(_LITE_MODE_OPTIONS),
        "reduce-overhead": {"triton.cudagraphs": True},
        "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
        "max-autotune": {
            "max_autotune": True,
            "triton.cudagraphs": True,
            "coordinate_descent_tuning": True,
        },
    }
    if not mode:
        return mode_options
    if mode not in mode_options:
        raise RuntimeError(
            f"Unrecognized mode={mode}, should be one of: {', '.join(mode_options.keys())}"
        )
    return mode_options[mode]


def list_options() -> list[str]:
    """The names of every option in `lucid._inductor.config`."""
    return list(config.get_config_copy())


def cudagraph_mark_step_begin() -> None:
    """Mark the start of a training or inference step for CUDA graphs: a no-op on the CPU."""


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
