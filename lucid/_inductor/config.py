"""`lucid._inductor.config`: torch._inductor.config's options, with torch 2.13's names and
defaults, sub-configs included (`config.triton.cudagraphs`, `config.cpp.threads`).

Scripts set these next to `lucid.compile` (`config.coordinate_descent_tuning = True`,
`config.fallback_random = True`). lucid has no compiler and runs every model eagerly, so no
option changes what lucid computes: a known one is accepted quietly, and a name torch does not
have raises AttributeError, as torch's does. `lucid.compile(options=...)` checks its option
names against this table, as torch.compile does. Values set are per thread, as torch's are,
and no TORCH* environment variable is read.
"""

from __future__ import annotations

import os
import sys

from lucid._inductor._config_defaults import ALIASES, DEFAULTS, DEPRECATED, UNLISTED
from lucid.utils._config_module import install_config_module


def _compile_threads() -> int:
    if sys.platform == "win32":
        return 1
    if hasattr(os, "sched_getaffinity"):  # the CPUs this process may run on
        return min(32, len(os.sched_getaffinity(0)))
    return min(32, os.cpu_count() or 1)


# torch computes these at import, from its install path, the working directory and the CPUs;
# lucid's installation stands in for torch's.
_CUTLASS_DIR = os.path.realpath(
    os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "../third_party/cutlass/"
    )
)
_MACHINE_DEFAULTS = {
    "compile_threads": _compile_threads(),
    "cutlass.cutlass_dir": _CUTLASS_DIR,
    "cuda.cutlass_dir": _CUTLASS_DIR,
    "xpu.cutlass_dir": os.path.realpath(""),
}

install_config_module(
    sys.modules[__name__],
    {**DEFAULTS, **_MACHINE_DEFAULTS},
    aliases=ALIASES,
    unlisted=UNLISTED,
    deprecated=DEPRECATED,
)
