"""Autograd profiler: times every op and backward node, as torch.autograd.profiler does.

`profile` is an observer (observers.py): with none active, `Function.apply` and the engine pay
their one falsy check and nothing else. While one is active, each op's forward and each
backward node is an event with its wall-clock start and end; ops called inside another op
(a custom Function's forward, a backward written in lucid ops) and ops inside a
`record_function` region are its children, so self times exclude them and totals include them.

Example::

    x = lucid.randn(1, 1, requires_grad=True)
    with lucid.autograd.profiler.profile() as prof:
        for _ in range(100):
            y = x**2
            y.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

Like all of lucid's state, profiling is per thread: a profile records the thread that entered
it. Forward events are named after the op (`mul`, `log_softmax`; a custom Function by its class
name), backward events after the node (`MulBackward0`). An op that records a node carries the
node's sequence number, and so does the node's backward event: that is how a backward event is
matched to the forward op that created it.
"""

from __future__ import annotations

from typing import Any

from lucid.autograd.profiler.events import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    Interval,
    Kernel,
)
from lucid.autograd.profiler.nvprof import load_nvprof
from lucid.autograd.profiler.nvtx import emit_nvtx
from lucid.autograd.profiler.recording import profile, record_function

__all__ = [
    "profile",
    "record_function",
    "emit_nvtx",
    "load_nvprof",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "Kernel",
]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
