"""`lucid._dynamo.config`: torch._dynamo.config's options, with torch 2.13's names and defaults.

Training scripts set these next to `lucid.compile` (`config.suppress_errors = True`,
`config.cache_size_limit = 64`, `with config.patch(optimize_ddp=False): ...`). Setting a
known option is accepted quietly and changes nothing, with one exception: `disable = True`
(torch's switch that makes compiled code run eagerly) makes `lucid.compile` return the model
itself. A name torch does not
have raises AttributeError, as torch's does. The table is data (`_config_defaults.py`); values
set are per thread, as torch's are, and no TORCH* environment variable is read.
"""

from __future__ import annotations

import os
import sys

from lucid._dynamo._config_defaults import ALIASES, DEFAULTS, DEPRECATED, UNLISTED
from lucid.utils._config_module import install_config_module

# torch computes these at import from its install path and the working directory.
_MACHINE_DEFAULTS = {
    "base_dir": os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "debug_dir_root": os.path.join(os.getcwd(), "torch_compile_debug"),
}

install_config_module(
    sys.modules[__name__],
    {**DEFAULTS, **_MACHINE_DEFAULTS},
    aliases=ALIASES,
    unlisted=UNLISTED,
    deprecated=DEPRECATED,
)
