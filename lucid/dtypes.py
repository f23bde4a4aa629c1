"""lucid.dtypes: the dtype objects and promotion rules (defined in lucid._core.dtypes)."""

from lucid._core.dtypes import *  # noqa: F403
from lucid._core.dtypes import __all__, as_dtype  # noqa: F401
