"""Built-in differentiable ops, by family; each op is a Function with its wrapper below it.

Every family's `__all__` is importable from here (Tensor methods reach them as `ops.<name>`);
`__all__` below is the subset that `import lucid` exposes, the names `torch` has.
"""

from lucid.ops import arithmetic, fills, indexing, linalg, nn_ops, pointwise, reduction, shape
from lucid.ops.arithmetic import *  # noqa: F403
from lucid.ops.broadcast import broadcast_shapes, sum_to  # noqa: F401
from lucid.ops.fills import *  # noqa: F403
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.linalg import *  # noqa: F403
from lucid.ops.nn_ops import *  # noqa: F403
from lucid.ops.pointwise import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403

# Tensor-method plumbing and in-place forms that torch exposes only as Tensor methods.
_METHOD_ONLY = {
    "add_", "sub_", "mul_", "div_", "pow_", "copy_", "masked_fill_", "uniform_", "normal_",
    "getitem", "setitem_", "numpy_T", "rdiv", "to", "view", "expand", "repeat", "contiguous",
}  # fmt: skip

# Activations that torch exposes only as torch.nn.functional.<name> (lucid.nn.functional too).
_FUNCTIONAL_ONLY = {
    "elu", "elu_", "gelu", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu",
    "leaky_relu_", "logsigmoid", "mish", "one_hot", "relu6", "silu", "softplus",
}  # fmt: skip

__all__ = [
    name
    for family in (arithmetic, fills, indexing, linalg, nn_ops, pointwise, reduction, shape)
    for name in family.__all__
    if name not in _METHOD_ONLY and name not in _FUNCTIONAL_ONLY
] + ["broadcast_shapes"]
