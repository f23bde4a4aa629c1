"""lucid.utils.benchmark: torch.utils.benchmark's Timer, Measurement and Compare, for timing
lucid code with many replicates and printing the results side by side.

Example::

    from lucid.utils.benchmark import Compare, Timer

    x = lucid.randn(256, 256)
    results = [
        Timer("x @ x", globals={"x": x}, num_threads=n, label="matmul").blocked_autorange()
        for n in (1, 2)
    ]
    Compare(results).print()
"""

from typing import Any

from lucid.utils.benchmark._common import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)
from lucid.utils.benchmark._compare import Colorize, Compare
from lucid.utils.benchmark._timer import Language, Timer, timer

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "set_torch_threads",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
