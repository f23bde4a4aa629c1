"""lucid.nn.functional: PyTorch's functional neural-network API, over lucid's op families."""

from lucid.ops.convolution import *  # noqa: F403
from lucid.ops.loss import *  # noqa: F403
from lucid.ops.nn_ops import (  # noqa: F401
    celu,
    elu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softplus,
)
from lucid.ops.normalization import *  # noqa: F403
from lucid.ops.pointwise import tanh  # noqa: F401
