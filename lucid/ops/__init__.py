"""Built-in differentiable ops, by family; each op is a Function with its wrapper below it."""

from lucid.ops.arithmetic import *  # noqa: F403
from lucid.ops.broadcast import broadcast_shapes, sum_to  # noqa: F401
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.linalg import *  # noqa: F403
from lucid.ops.nn_ops import *  # noqa: F403
from lucid.ops.pointwise import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403
