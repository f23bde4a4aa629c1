"""lucid.nn.attention: torch's switches for scaled_dot_product_attention's kernels.

lucid has one attention kernel, NumPy's (torch's MATH backend, in effect), so choosing a
backend checks its arguments as torch does and changes nothing.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# torch warns with the reasons a fused kernel was passed over when this is True; lucid has
# no fused kernel to pass over, so the flag is read by nothing
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The backends of scaled dot product attention, with torch's values.

    As torch's, a member converts with ``int()`` but does not equal its integer.
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value


@contextlib.contextmanager
def sdpa_kernel(
    backends: list[SDPBackend] | SDPBackend, set_priority: bool = False
) -> Iterator[dict]:
    """Select the backends scaled_dot_product_attention may use (in order of priority with
    `set_priority`) inside the block.

    lucid computes attention with one kernel whatever is chosen, so this only checks
    `backends`, as torch does: a backend or a list of them.

    Example::

        with sdpa_kernel(SDPBackend.MATH):
            F.scaled_dot_product_attention(q, k, v)
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    # torch yields an empty dict too
    yield {}


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
