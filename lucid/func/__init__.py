"""lucid.func: torch.func's function transforms (grad, vjp, jacrev, jvp, jacfwd, hessian,
linearize, vmap) and functional_call, on lucid's reverse-mode engine.

Two differences from torch.func run through it: there is no forward mode, so jvp, jacfwd and
linearize use the double-vjp trick; and vmap loops over the mapped dimension instead of
batching ops.
"""

from __future__ import annotations

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
