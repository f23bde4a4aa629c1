"""Built-in differentiable ops, by family; each op is a Function with its wrapper below it.

Every family's `__all__` is importable from here, and is what `import lucid` exposes.
"""

from lucid.ops import (
    activations,
    arithmetic,
    combinatorics,
    complex_numbers,
    cumulative,
    distances,
    fills,
    indexing,
    joining,
    matrices,
    pointwise,
    products,
    reduction,
    shape,
    sorting,
    statistics,
    storage,
)
from lucid.ops.activations import *  # noqa: F403
from lucid.ops.arithmetic import *  # noqa: F403
from lucid.ops.broadcast import broadcast_shapes, sum_to  # noqa: F401
from lucid.ops.combinatorics import *  # noqa: F403
from lucid.ops.complex_numbers import *  # noqa: F403
from lucid.ops.cumulative import *  # noqa: F403
from lucid.ops.distances import *  # noqa: F403
from lucid.ops.fills import *  # noqa: F403
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.joining import *  # noqa: F403
from lucid.ops.matrices import *  # noqa: F403
from lucid.ops.pointwise import *  # noqa: F403
from lucid.ops.products import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403
from lucid.ops.sorting import *  # noqa: F403
from lucid.ops.statistics import *  # noqa: F403
from lucid.ops.storage import *  # noqa: F403

# What `import lucid` exposes: each family's `__all__`, the names `torch` has at its top level.
# A family keeps its Tensor-method-only forms (`add_`, `view`) and the activations torch has only
# in torch.nn.functional (`gelu`) out of its `__all__`; Tensor and lucid.nn.functional import
# them from the family by name.
__all__ = [
    name
    for family in (
        activations,
        arithmetic,
        combinatorics,
        complex_numbers,
        cumulative,
        distances,
        fills,
        indexing,
        joining,
        matrices,
        pointwise,
        products,
        reduction,
        shape,
        sorting,
        statistics,
        storage,
    )
    for name in family.__all__
] + ["broadcast_shapes"]
