"""lucid.nn.utils: gradient clipping, parameter/vector conversion, rnn packing and weight
reparameterizations, as in torch."""

from typing import Any

from lucid.nn.utils import parametrizations, parametrize, rnn
from lucid.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from lucid.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from lucid.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from lucid.nn.utils.init import skip_init
from lucid.nn.utils.memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from lucid.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from lucid.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
    "remove_spectral_norm",
    "remove_weight_norm",
    "spectral_norm",
    "weight_norm",
    "clip_grad_norm",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "skip_init",
    "parametrizations",
    "parametrize",
]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
