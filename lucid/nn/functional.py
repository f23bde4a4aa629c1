"""lucid.nn.functional: PyTorch's functional neural-network API, over lucid's op families."""

from __future__ import annotations

import warnings
from typing import Any

from lucid._tensor import Tensor
from lucid.ops import nn_ops
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
    logsigmoid,
    mish,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softplus,
)
from lucid.ops.normalization import *  # noqa: F403
from lucid.ops.pointwise import tanh  # noqa: F401


# torch.nn.functional's softmax family takes `dim` as optional (deprecated implicit choice),
# where lucid.softmax and Tensor.softmax require it, as torch's do.
def _implicit_dim(input: Tensor, dim: int | None, name: str) -> int | None:
    if dim is None and isinstance(input, Tensor):
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=3,
        )
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:  # fmt: skip
    """exp(input) / sum(exp(input)) along dim; without `dim`, PyTorch's implicit choice."""
    return nn_ops.softmax(input, _implicit_dim(input, dim, "softmax"), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:  # fmt: skip
    """input - logsumexp(input) along dim; without `dim`, PyTorch's implicit choice."""
    return nn_ops.log_softmax(input, _implicit_dim(input, dim, "log_softmax"), dtype)
