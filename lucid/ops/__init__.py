"""Built-in differentiable ops, by family; each op is a Function with its wrapper below it.

Every family's `__all__` is importable from here, and is what `import lucid` exposes.
"""

from lucid.ops import (
    arithmetic,
    fills,
    indexing,
    linalg,
    nn_ops,
    pointwise,
    reduction,
    selection,
    shape,
    storage,
)
from lucid.ops.arithmetic import *  # noqa: F403
from lucid.ops.broadcast import broadcast_shapes, sum_to  # noqa: F401
from lucid.ops.fills import *  # noqa: F403
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.linalg import *  # noqa: F403
from lucid.ops.nn_ops import *  # noqa: F403
from lucid.ops.pointwise import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.selection import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403
from lucid.ops.storage import *  # noqa: F403

# What `import lucid` exposes: each family's `__all__`, the names `torch` has at its top level.
# A family keeps its Tensor-method-only forms (`add_`, `view`) and the activations torch has only
# in torch.nn.functional (`gelu`) out of its `__all__`; Tensor and lucid.nn.functional import
# them from the family by name.
__all__ = [
    name
    for family in (
        arithmetic,
        fills,
        indexing,
        linalg,
        nn_ops,
        pointwise,
        reduction,
        shape,
        selection,
        storage,
    )
    for name in family.__all__
] + ["broadcast_shapes"]
