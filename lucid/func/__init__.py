"""lucid.func: torch.func's function transforms (grad, vjp, jacrev, jvp, jacfwd, hessian,
linearize, vmap) and functional_call, on lucid's engine.

jvp runs forward mode (lucid.autograd.forward_ad); jacfwd and linearize, and a jvp inside
an open dual level, use the double-vjp trick on the reverse-mode engine. vmap loops over the
mapped dimension instead of batching ops.
"""

from __future__ import annotations

from typing import Any

from lucid.func._module_state import (
    functional_call,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from lucid.func._transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from lucid.func._vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
