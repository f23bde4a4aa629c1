"""lucid: a deep-learning framework on NumPy whose API mirrors PyTorch.

Example::

    import lucid
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad          # tensor([2., 4., 6.])
"""

import importlib
import math
from typing import Any as _Any

from lucid import _malloc

_malloc.tune_malloc()

from lucid import dtypes
from lucid._core import sentinel as _sentinel  # arms the always-on NaN/Inf trap (docs/numerics.md)
from lucid._core.arguments import argument_error as _argument_error
from lucid._core.devices import device
from lucid._core.layouts import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from lucid._core.tensor import Size
from lucid._tensor import Tensor
from lucid._legacy_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from lucid._tensor_str import set_printoptions
from lucid.dtypes import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    finfo,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from lucid.factories import *  # noqa: F403
from lucid.ops import *  # noqa: F403
from lucid.ops import broadcast_shapes

from lucid import autograd
from lucid._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from lucid.autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)

__version__ = "0.1.0"

# Constants torch has at its top level.
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None

# Build flags, as lucid's truth: LAPACK and FFTs come with NumPy; no MKL or OpenMP of its own.
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False


def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    if not isinstance(input, Tensor):
        raise _argument_error("numel", "input", 1, input)
    return input.numel()


def result_type(tensor1: object, tensor2: object) -> dtype:
    return dtypes.result_type(tensor1, tensor2)


def is_floating_point(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise _argument_error("is_floating_point", "input", 1, input)
    return input.is_floating_point()


def get_device(input: Tensor) -> int:
    """-1: the index PyTorch gives a CPU tensor's device."""
    if not isinstance(input, Tensor):
        raise _argument_error("get_device", "input", 1, input)
    return input.get_device()


def detach(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _argument_error("detach", "input", 1, input)
    return input.detach()


def detach_(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _argument_error("detach_", "input", 1, input)
    return input.detach_()


def is_signed(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise _argument_error("is_signed", "input", 1, input)
    return input.is_signed()


def is_nonzero(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise _argument_error("is_nonzero", "input", 1, input)
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise _argument_error("is_same_size", "input", 1, input)
    if not isinstance(other, Tensor):
        raise _argument_error("is_same_size", "other", 2, other)
    return input.is_same_size(other)


def is_inference(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise _argument_error("is_inference", "input", 1, input)
    return input.is_inference()


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether type promotion may cast `from_` to `to`: never to a lower kind (float to integer,
    integer to bool); within a kind any size goes."""
    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, dtype):
            raise TypeError(
                f"can_cast(): argument '{name}' (position {position}) must be lucid.dtype, not "
                f"{type(value).__name__}"
            )
    return to._category >= from_._category


# Subpackages and names that build on the whole namespace load on first use, as attributes
# (torch.nn is an attribute after `import torch`; so is lucid.nn): `import lucid` stays small,
# and the package face imports nothing that imports it back.
_LAZY_SUBPACKAGES = ("nn", "optim", "utils", "debug", "cuda", "backends", "accelerator", "jit")
_LAZY_SUBPACKAGES += ("linalg", "amp", "distributed")
_LAZY_SUBPACKAGES += ("cpu",)
_LAZY_SUBPACKAGES += ("profiler",)
_LAZY_SUBPACKAGES += ("special", "distributions")
_LAZY_SUBPACKAGES += ("func",)
_LAZY_SUBPACKAGES += ("fft",)
_LAZY_SUBPACKAGES += ("testing", "random", "multiprocessing")
_LAZY_SUBPACKAGES += ("_dynamo", "_inductor")  # torch._dynamo.config and the like
_LAZY_NAMES = {
    "load": "lucid.utils.serialization",
    "save": "lucid.utils.serialization",
    "from_dlpack": "lucid.utils.serialization",
    "compile": "lucid._process",
    "get_num_interop_threads": "lucid._process",
    "get_num_threads": "lucid._process",
    "set_num_interop_threads": "lucid._process",
    "set_num_threads": "lucid._process",
    # PyTorch's top-level matrix functions load with their op family, as lucid.linalg does
    "stft": "lucid.ops.spectral",
    "istft": "lucid.ops.spectral",
    "det": "lucid.ops.decompositions",
    "logdet": "lucid.ops.decompositions",
    "slogdet": "lucid.ops.decompositions",
    "inverse": "lucid.ops.decompositions",
    "svd": "lucid.ops.decompositions",
    "cholesky": "lucid.ops.decompositions",
    "cholesky_solve": "lucid.ops.decompositions",
    "cholesky_inverse": "lucid.ops.decompositions",
    "qr": "lucid.ops.decompositions",
    "pinverse": "lucid.ops.decompositions",
    "matrix_exp": "lucid.ops.decompositions",
    "matrix_power": "lucid.ops.decompositions",
    "cross": "lucid.ops.decompositions",
    "lu_unpack": "lucid.ops.decompositions",
    "use_deterministic_algorithms": "lucid._process",
    "are_deterministic_algorithms_enabled": "lucid._process",
    "is_deterministic_algorithms_warn_only_enabled": "lucid._process",
    "set_deterministic_debug_mode": "lucid._process",
    "get_deterministic_debug_mode": "lucid._process",
    "set_float32_matmul_precision": "lucid._process",
    "get_float32_matmul_precision": "lucid._process",
    "set_flush_denormal": "lucid._process",
    "set_warn_always": "lucid._process",
    "is_warn_always_enabled": "lucid._process",
    "set_default_device": "lucid._process",
    "get_default_device": "lucid._process",
    "typename": "lucid._process",
    "geqrf": "lucid.ops.decompositions",
    "orgqr": "lucid.ops.decompositions",
    "ormqr": "lucid.ops.decompositions",
    "lobpcg": "lucid.ops.lobpcg",
}
# Autocast's switches, as torch has them at its top level
_AUTOCAST_NAMES = """
    autocast is_autocast_enabled get_autocast_dtype set_autocast_enabled set_autocast_dtype
    is_autocast_cache_enabled set_autocast_cache_enabled clear_autocast_cache
    autocast_increment_nesting autocast_decrement_nesting is_autocast_cpu_enabled
    set_autocast_cpu_enabled get_autocast_cpu_dtype set_autocast_cpu_dtype get_autocast_gpu_dtype
    set_autocast_gpu_dtype is_autocast_ipu_enabled set_autocast_ipu_enabled get_autocast_ipu_dtype
    set_autocast_ipu_dtype is_autocast_xla_enabled set_autocast_xla_enabled get_autocast_xla_dtype
    set_autocast_xla_dtype
"""
_LAZY_NAMES.update(dict.fromkeys(_AUTOCAST_NAMES.split(), "lucid.amp.autocast_mode"))
# The nn.functional ops that torch also has at its top level as the very same function
_SHARED_WITH_FUNCTIONAL = """
    adaptive_avg_pool1d avg_pool1d bilinear channel_shuffle conv1d conv2d conv3d
    conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity hardshrink
    pairwise_distance pixel_shuffle pixel_unshuffle prelu rrelu_ threshold_
"""
_LAZY_NAMES.update(dict.fromkeys(_SHARED_WITH_FUNCTIONAL.split(), "lucid.nn.functional"))
# torch.GradScaler is torch.amp.GradScaler
_LAZY_NAMES["GradScaler"] = "lucid.amp.grad_scaler"
# torch.vmap is torch.func.vmap
_LAZY_NAMES["vmap"] = "lucid.func"


def __getattr__(name: str) -> _Any:
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"lucid.{name}")
    module = _LAZY_NAMES.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later reads find it without this hook
        return value
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBPACKAGES) | set(_LAZY_NAMES))
