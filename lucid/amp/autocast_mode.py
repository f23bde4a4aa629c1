"""Autocast: regions where each listed op runs in the dtype PyTorch's CPU autocast gives it.

Inside `with lucid.autocast("cpu"):` the ops of `_POLICIES` cast their floating inputs first:
contractions and convolutions to the region's lower precision (bfloat16 by default), losses,
decompositions and a few others to float32, and concatenations to their widest input dtype.
Every other op runs in its inputs' dtype. The lists are PyTorch 2.13's CPU lists as they
behave (tests/amp/test_autocast_ops.py checks each op against torch), not its CUDA lists: on
the CPU softmax, the norms, sum, exp, log and pow keep a bfloat16 input in bfloat16.

The casts go through `Tensor.to`, so they are recorded: backward converts each gradient back
to its input's dtype, and the backward of a built-in op runs in the dtypes its forward ran in.
Weights (float32 leaves that require grad) are cast once per region and the casts are freed
when the outermost region exits, as PyTorch's `cache_enabled`.

All of it is thread-local (lucid._core.grad_mode), and costs one attribute check per op while
no autocast region is active.
"""

from __future__ import annotations

import copy
import functools
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import lucid
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.grad_mode import local_state
from lucid._core.tensor import TensorBase
from lucid.ops import (
    activations,
    attention,
    complex_numbers,
    convolution,
    decompositions,
    distances,
    indexing,
    joining,
    linear,
    loss,
    matrices,
    pooling,
    products,
    recurrent,
    reduction,
    sampling,
    sorting,
    spectral,
)

__all__ = [
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "is_autocast_available",
    "is_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled",
    "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype",
    "is_autocast_ipu_enabled",
    "set_autocast_ipu_enabled",
    "get_autocast_ipu_dtype",
    "set_autocast_ipu_dtype",
    "is_autocast_xla_enabled",
    "set_autocast_xla_enabled",
    "get_autocast_xla_dtype",
    "set_autocast_xla_dtype",
]

# ------------------------------------------------------------------------------ policies
LOWER_PRECISION_FP = "lower_precision_fp"  # cast floating inputs to the region's dtype
FP32 = "fp32"  # cast lower-precision floating inputs to float32
PROMOTE = "promote"  # cast floating inputs to the widest of their dtypes
# A composite whose PyTorch counterpart is one kernel that autocast does not list: it runs in
# its inputs' dtypes as written, without autocast reaching the ops it is made of.
INPUT_DTYPE = "input_dtype"
# A composite that PyTorch decomposes into float32-list ops followed by a lower-precision one
# (pinv: an SVD, then a matmul): computed in float32, its result rounded to the region's dtype.
FP32_THEN_LOWER_PRECISION_FP = "fp32_then_lower_precision_fp"

# Keyed by an op's Function class (the policy applies in Function.apply) or by a composite's
# wrapper function, decorated with `autocast_op` (lucid/ops/_common.py), which hands the call
# to `_Autocast.run`; max_pool3d alone calls `run` itself, since with indices it is not listed.
_POLICIES: dict[Any, str] = {
    # lower precision: contractions, convolutions, attention, the fused LSTM layer. matmul is
    # one op to autocast whatever kernel its operands pick; mv and dot (Mv, Dot on their own)
    # are not listed.
    products.matmul: LOWER_PRECISION_FP,
    products.Mm: LOWER_PRECISION_FP,
    products.Bmm: LOWER_PRECISION_FP,
    products.MatMul: LOWER_PRECISION_FP,
    products.addmm: LOWER_PRECISION_FP,
    products.baddbmm: LOWER_PRECISION_FP,
    products.addbmm: LOWER_PRECISION_FP,
    decompositions.vecdot: LOWER_PRECISION_FP,
    linear.linear: LOWER_PRECISION_FP,
    convolution.conv1d: LOWER_PRECISION_FP,
    convolution.conv2d: LOWER_PRECISION_FP,
    convolution.conv3d: LOWER_PRECISION_FP,
    convolution.conv_transpose1d: LOWER_PRECISION_FP,
    convolution.conv_transpose2d: LOWER_PRECISION_FP,
    convolution.conv_transpose3d: LOWER_PRECISION_FP,
    activations.prelu: LOWER_PRECISION_FP,
    attention.scaled_dot_product_attention: LOWER_PRECISION_FP,
    recurrent.FusedLSTMLayer: LOWER_PRECISION_FP,
    # torch's affine_grid is a batched matmul of a base grid and theta
    sampling.AffineGridGenerator: LOWER_PRECISION_FP,
    # float32: the losses
    loss.mse_loss: FP32,
    loss.l1_loss: FP32,
    loss.smooth_l1_loss: FP32,
    loss.huber_loss: FP32,
    loss.nll_loss: FP32,
    loss.cross_entropy: FP32,
    loss.binary_cross_entropy: FP32,
    loss.binary_cross_entropy_with_logits: FP32,
    loss.kl_div: FP32,
    loss.cosine_embedding_loss: FP32,
    loss.margin_ranking_loss: FP32,
    loss.hinge_embedding_loss: FP32,
    loss.soft_margin_loss: FP32,
    loss.multi_margin_loss: FP32,
    loss.multilabel_margin_loss: FP32,
    loss.poisson_nll_loss: FP32,
    loss.triplet_margin_loss: FP32,
    loss.ctc_loss: FP32,
    # float32: products, distances, quantiles, sampling, the 3-D pools and unpooling
    reduction.Prod: FP32,
    reduction.ProdDim: FP32,
    matrices.Trace: FP32,
    distances.cdist: FP32,
    sorting.quantile: FP32,
    sorting.nanquantile: FP32,
    sampling.grid_sample: FP32,
    pooling.max_pool3d: FP32,
    pooling.avg_pool3d: FP32,
    pooling.adaptive_avg_pool3d: FP32,
    pooling.adaptive_max_pool3d: FP32,
    pooling.max_unpool1d: FP32,
    pooling.max_unpool2d: FP32,
    pooling.max_unpool3d: FP32,
    pooling.fractional_max_pool2d: FP32,
    pooling.fractional_max_pool3d: FP32,
    # float32: the decompositions and solvers
    decompositions.inv_ex: FP32,
    decompositions.inv: FP32,
    decompositions.inverse: FP32,
    decompositions.solve_ex: FP32,
    decompositions.solve: FP32,
    decompositions.cholesky_ex: FP32,
    decompositions.linalg_cholesky: FP32,
    decompositions.cholesky: FP32,
    decompositions.cholesky_solve: FP32,
    decompositions.cholesky_inverse: FP32,
    decompositions.linalg_qr: FP32,
    decompositions.qr: FP32,
    decompositions.eigh: FP32,
    decompositions.eigvalsh: FP32,
    decompositions.linalg_svd: FP32,
    decompositions.svdvals: FP32,
    decompositions.svd: FP32,
    decompositions.pinverse: FP32,
    decompositions.lstsq: FP32,
    decompositions.matrix_rank: FP32,
    decompositions.cond: FP32,
    decompositions.householder_product: FP32,
    decompositions.geqrf: FP32,
    decompositions.orgqr: FP32,
    decompositions.ormqr: FP32,
    decompositions.tensorinv: FP32,
    decompositions.tensorsolve: FP32,
    decompositions.pinv: FP32_THEN_LOWER_PRECISION_FP,
    decompositions.eig: FP32,
    decompositions.eigvals: FP32,
    # float32: the complex results of real parts, and the FFTs PyTorch lists
    complex_numbers.polar: FP32,
    complex_numbers.view_as_complex: FP32,
    spectral.fft: FP32,
    spectral.ifft: FP32,
    spectral.rfft: FP32,
    spectral.irfft: FP32,
    spectral.hfft: FP32,
    spectral.ihfft: FP32,
    spectral.fft2: FP32,
    spectral.ifft2: FP32,
    spectral.rfft2: FP32,
    spectral.irfft2: FP32,
    spectral.fftn: FP32,
    spectral.ifftn: FP32,
    spectral.rfftn: FP32,
    spectral.irfftn: FP32,
    spectral.stft: FP32,
    spectral.istft: FP32,
    # one kernel in PyTorch, composed of matmuls here: not autocast inside
    linear.bilinear: INPUT_DTYPE,
    decompositions.lu_solve: INPUT_DTYPE,
    # promote
    joining.Cat: PROMOTE,
    joining.Stack: PROMOTE,
    indexing.index_copy: PROMOTE,
}

# The dtype each device type's autocast defaults to, as PyTorch's; the device types listed
# here but not in _AUTOCAST_DEVICES have a default dtype but no autocast state of their own.
_DEFAULT_DTYPES = {
    "cpu": lucid.bfloat16,
    "cuda": lucid.float16,
    "ipu": lucid.float16,
    "xpu": lucid.float16,
    "hip": lucid.float16,
    "maia": lucid.bfloat16,
    "xla": lucid.bfloat16,
    "mps": lucid.float16,
    "hpu": lucid.bfloat16,
    "mtia": lucid.float16,
    "privateuseone": lucid.float16,
}
_AUTOCAST_DEVICES = frozenset(_DEFAULT_DTYPES) - {"hip"}
_SUPPORTED_DTYPES = (lucid.bfloat16, lucid.float16)
_CPU_DEFAULT = _DEFAULT_DTYPES["cpu"]
_FLOAT32 = lucid.float32


class _Autocast:
    """The hook installed in `local_state.autocast` while CPU autocast is on."""

    __slots__ = ()

    def cast(self, op: Any, args: tuple) -> tuple:
        """`args` as the op's policy casts them (unchanged for an op autocast does not list)."""
        policy = _POLICIES.get(op)
        if policy is None:
            return args
        node = local_state.backward_node
        if node is not None and _is_builtin(node):
            return args
        return _cast_arguments(policy, args)

    def run(self, function: Callable, *args: Any, **kwargs: Any) -> Any:
        """Call a composite op (the `autocast_op` function that `_POLICIES` names) with its
        inputs cast by its policy, and autocast off inside it (it is one op to autocast, as
        its PyTorch counterpart is)."""
        policy = _POLICIES[function]
        node = local_state.backward_node
        if node is None or not _is_builtin(node):
            # one cast over both, so the promote policy's widest dtype sees every argument
            values = _cast_arguments(policy, args + tuple(kwargs.values()))
            args = values[: len(args)]
            kwargs = dict(zip(kwargs, values[len(args) :], strict=True))
        hook = local_state.autocast
        local_state.autocast = None
        try:
            result = function(*args, **kwargs)
        finally:
            local_state.autocast = hook
        if policy == FP32_THEN_LOWER_PRECISION_FP:
            return _cast_value(result, local_state.autocast_dtypes.get("cpu", _CPU_DEFAULT))
        return result


_HOOK = _Autocast()


def _is_builtin(node: Any) -> bool:
    """Whether the backward being run is a lucid op's (a user's Function may autocast)."""
    function = getattr(node, "function", None)
    return function is None or function.__module__.startswith("lucid.")


def _is_eligible(value: Any) -> bool:
    # float64 is never autocast, as in PyTorch
    return (
        isinstance(value, TensorBase)
        and value._data.dtype.kind in FLOAT_KINDS
        and value._data.dtype.itemsize != 8
    )


def _cast_arguments(policy: str, args: tuple) -> tuple:
    if policy == INPUT_DTYPE:
        return args
    if policy == LOWER_PRECISION_FP:
        target = local_state.autocast_dtypes.get("cpu", _CPU_DEFAULT)
    elif policy == FP32 or policy == FP32_THEN_LOWER_PRECISION_FP:
        target = _FLOAT32
    else:
        target = _widest(args)
        if target is None:
            return args
    return tuple(_cast_value(value, target) for value in args)


def _widest(args: tuple) -> Any:
    """The promote policy's dtype: the one floating dtype of the eligible inputs, or float32
    where they differ; None without eligible inputs."""
    found = None
    for value in args:
        values = value if isinstance(value, list | tuple) else (value,)
        for item in values:
            if _is_eligible(item):
                if found is None:
                    found = item.dtype
                elif item.dtype is not found:
                    return _FLOAT32
    return found


def _cast_value(value: Any, target: Any) -> Any:
    if isinstance(value, list | tuple):
        # a sequence of tensors (cat's); sizes and other sequences pass as they are
        if not any(isinstance(item, TensorBase) for item in value):
            return value
        return type(value)(_cast_value(item, target) for item in value)
    if not _is_eligible(value) or value.dtype is target:
        return value
    if (
        target is not _FLOAT32
        and value._requires_grad
        and value._grad_fn is None
        and value._base is None
        and value.dtype is _FLOAT32
        and local_state.autocast_cache_enabled
        and local_state.enabled
    ):
        return _cached_cast(value, target)
    return value.to(target)


def _cached_cast(weight: Any, target: Any) -> Any:
    """A weight's cast, made once per region (and again if the weight changed in place)."""
    cache = local_state.autocast_cache
    if cache is None:
        cache = local_state.autocast_cache = {}
    key = (id(weight), target)
    entry = cache.get(key)
    version = weight._version_counter[0]
    if entry is not None and entry[0]() is weight and entry[1] == version:
        return entry[2]
    cast = weight.to(target)
    cache[key] = (weakref.ref(weight), version, cast)
    return cast


# ------------------------------------------------------------------------------ state
def _check_str(function: str, value: Any, name: str = "device_type", position: int = 1) -> None:
    if not isinstance(value, str):
        raise TypeError(
            f"{function}(): argument '{name}' (position {position}) must be str, not "
            f"{type(value).__name__}"
        )


def _device_type(device_type: str) -> str:
    """The device type of a device string, with PyTorch's error for an unknown one."""
    return lucid.device(device_type).type


def _autocast_device(device_type: str) -> str:
    kind = _device_type(device_type)
    if kind not in _AUTOCAST_DEVICES:
        raise RuntimeError(
            "unknown device type for autocast in get_autocast_dispatch_key_from_device_type"
        )
    return kind


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be used on `device_type` ('cpu', 'cuda', ...)."""
    _check_str("_is_autocast_available", device_type)
    return _device_type(device_type) in _AUTOCAST_DEVICES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for `device_type` in this thread; without one, CUDA's (as in
    PyTorch, where the argument-free form predates the others)."""
    if device_type is None:
        return "cuda" in local_state.autocast_devices
    _check_str("is_autocast_enabled", device_type)
    return _autocast_device(device_type) in local_state.autocast_devices


def set_autocast_enabled(device_type: Any, enabled: Any = None) -> None:
    """Turn autocast on or off for `device_type` (CUDA's without one) in this thread."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
        position = 1
    else:
        _check_str("set_autocast_enabled", device_type)
        position = 2
    if not isinstance(enabled, bool):
        raise TypeError(
            f"set_autocast_enabled(): argument 'enabled' (position {position}) must be bool, "
            f"not {type(enabled).__name__}"
        )
    kind = _autocast_device(device_type)
    devices = local_state.autocast_devices
    local_state.autocast_devices = devices | {kind} if enabled else devices - {kind}
    if kind == "cpu":
        local_state.autocast = _HOOK if enabled else None


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast uses on `device_type` in this thread."""
    _check_str("get_autocast_dtype", device_type)
    kind = _device_type(device_type)
    dtype = local_state.autocast_dtypes.get(kind)
    if dtype is None:
        dtype = _DEFAULT_DTYPES.get(kind)
        if dtype is None:
            raise RuntimeError("unsupported scalarType")
    return dtype


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype autocast uses on `device_type` in this thread."""
    _check_str("set_autocast_dtype", device_type)
    if not isinstance(dtype, lucid.dtype):
        raise TypeError(
            "set_autocast_dtype(): argument 'dtype' (position 2) must be lucid.dtype, not "
            f"{type(dtype).__name__}"
        )
    kind = _device_type(device_type)
    local_state.autocast_dtypes = {**local_state.autocast_dtypes, kind: dtype}


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions cache the casts of weights (the default) in this thread."""
    return local_state.autocast_cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    local_state.autocast_cache_enabled = enabled


def clear_autocast_cache() -> None:
    """Free this thread's cached weight casts (the outermost autocast region does on exit)."""
    local_state.autocast_cache = None


def autocast_increment_nesting() -> int:
    local_state.autocast_nesting += 1
    return local_state.autocast_nesting


def autocast_decrement_nesting() -> int:
    local_state.autocast_nesting -= 1
    return local_state.autocast_nesting


# The deprecated per-device forms, with PyTorch's DeprecationWarning.
def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"lucid.{old} is deprecated. Please use lucid.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def _check_enabled(enabled: Any) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")


def _check_dtype(dtype: Any) -> None:
    if not isinstance(dtype, lucid.dtype):
        raise TypeError(f"dtype must be a lucid.dtype (got {type(dtype).__name__})")


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _check_enabled(enabled)
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> Any:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    _check_dtype(dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> Any:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: Any) -> None:
    _check_dtype(dtype)
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_ipu_enabled() -> bool:
    _deprecated("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return is_autocast_enabled("ipu")


def set_autocast_ipu_enabled(enabled: bool) -> None:
    _check_enabled(enabled)
    _deprecated("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    set_autocast_enabled("ipu", enabled)


def get_autocast_ipu_dtype() -> Any:
    _deprecated("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return get_autocast_dtype("ipu")


def set_autocast_ipu_dtype(dtype: Any) -> None:
    _check_dtype(dtype)
    _deprecated("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    set_autocast_dtype("ipu", dtype)


def is_autocast_xla_enabled() -> bool:
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled: bool) -> None:
    _check_enabled(enabled)
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    set_autocast_enabled("xla", enabled)


def get_autocast_xla_dtype() -> Any:
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype: Any) -> None:
    _check_dtype(dtype)
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    set_autocast_dtype("xla", dtype)


# ------------------------------------------------------------------------------ autocast
class autocast:
    """A region (context manager or decorator) where ops run in mixed precision.

    Example::

        with lucid.autocast("cpu"):  # bfloat16, PyTorch's CPU default
            loss = loss_fn(model(x), y)  # linear layers in bfloat16, the loss in float32
        loss.backward()

    Regions nest (an inner `enabled=False` region turns autocast off) and are per thread.
    Only "cpu" autocast changes lucid's ops; the other device types keep their state as
    PyTorch's do, and "cuda" warns and disables itself, as on a PyTorch build without CUDA.
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        if enabled:
            if device_type == "cuda":
                warnings.warn(
                    "CUDA is not available or torch_xla is imported. Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif self.fast_dtype not in _SUPPORTED_DTYPES:
                name = device_type.upper()
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, _SUPPORTED_DTYPES))
                    + " currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        if self._enabled is None:
            # set_autocast_enabled reads a lone argument as CUDA's flag; here it is the second
            raise TypeError(
                "set_autocast_enabled(): argument 'enabled' (position 2) must be bool, not NoneType"
            )
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc_info: object) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with lucid.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            # a copy per call, so recursive and concurrent calls each restore their own state
            with copy.copy(self):
                return func(*args, **kwargs)

        return decorate_autocast


# ------------------------------------------------------------------- custom Functions
def _cast_inputs(value: Any, device_type: str, dtype: Any) -> Any:
    """Floating tensors (not float64) in `value`, and in its containers, cast to `dtype`."""
    if isinstance(value, TensorBase):
        eligible = value.is_floating_point() and value.dtype is not lucid.float64
        return value.to(dtype) if eligible and device_type == "cpu" else value
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, dict):
        return {
            _cast_inputs(key, device_type, dtype): _cast_inputs(item, device_type, dtype)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(_cast_inputs(item, device_type, dtype) for item in value)
    return value


def custom_fwd(
    fwd: Callable | None = None, *, device_type: str, cast_inputs: Any = None
) -> Callable:
    """Decorate a custom Function's `forward`: with `cast_inputs`, inside an autocast region
    its floating inputs are cast to that dtype and it runs with autocast off; without, it
    runs under the region's autocast. `custom_bwd` then runs backward in the same state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast_inputs(args, device_type, cast_inputs),
                **_cast_inputs(kwargs, device_type, cast_inputs),
            )

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorate a custom Function's `backward` to run in the autocast state of its forward
    (which `custom_fwd` recorded)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
