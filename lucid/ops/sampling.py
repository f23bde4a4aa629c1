"""Neural-network ops: padding, interpolation, pixel and channel shuffle, affine grids and
grid sampling (used through nn.functional).

Reflect, replicate and circular padding and nearest interpolation are one gather along each
padded axis (`_Gather`), whose backward is the matching scatter-sum (`_Scatter`) and back, so
every gradient here is built from lucid ops. Linear, cubic and antialiased interpolation read
a few weighted taps per output along each axis (`_Resample`, with its adjoint). grid_sample
gathers its taps with lucid ops and weighs them in one last op, so its gradients reach both
the input and the grid.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.arguments import int_list_item_error, is_int_list_item, raise_type_error
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.dtypes import float32 as _FLOAT32
from lucid._core.function import HOLOMORPHIC, REFUSES_COMPLEX, Function
from lucid._core.tensor import TensorBase, _wrap
from lucid.factories import tensor
from lucid.ops._common import (
    autocast_op,
    check_int,
    check_number,
    check_tensors,
    dtype_name,
    not_implemented,
)
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.fills import to
from lucid.ops.joining import stack
from lucid.ops.pointwise import where
from lucid.ops.pooling import adaptive_avg_pool2d, adaptive_avg_pool3d

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__: list[str] = []

# (axis, indices into the input along it, the input's size along it), outermost axis first
Plan = tuple[tuple[int, np.ndarray, int], ...]


def _scatter_axis(array: np.ndarray, indices: np.ndarray, size: int, axis: int) -> np.ndarray:
    """Sum the slices of `array` along `axis` into `size` slots, slice j into slot indices[j]."""
    shape = list(array.shape)
    shape[axis] = size
    if indices.size == 0:
        return np.zeros(shape, array.dtype)
    order = np.argsort(indices, kind="stable")
    ordered = indices[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    summed = np.add.reduceat(np.take(array, order, axis=axis), starts, axis=axis)
    slots = ordered[starts]
    if slots.size == size:  # every slot is hit, in order
        return summed
    result = np.zeros(shape, array.dtype)
    index: list[Any] = [slice(None)] * array.ndim
    index[axis] = slots
    result[tuple(index)] = summed
    return result


class _Gather(Function):
    """result = input taken at plan's indices along each axis; subclasses give grad_fn names."""

    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, plan):
        ctx.plan = plan
        array = x._data
        for axis, indices, _ in plan:
            array = np.take(array, indices, axis=axis)
        return _wrap(array)

    @staticmethod
    def backward(ctx, grad_output):
        return _Scatter.apply(grad_output, ctx.plan), None


class _Scatter(Function):
    """The adjoint of `_Gather`: slices summed back into the input's shape."""

    _backward_name = "GatherBackwardBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "pad"

    @staticmethod
    def forward(ctx, grad, plan):
        ctx.plan = plan
        array = grad._data
        for axis, indices, size in reversed(plan):
            array = _scatter_axis(array, indices, size, axis)
        return _wrap(array)

    @staticmethod
    def backward(ctx, grad_output):
        return _Gather.apply(grad_output, ctx.plan), None


class ReflectionPad1D(_Gather):
    _backward_name = "ReflectionPad1DBackward0"
    _op_name = "pad"


class ReflectionPad2D(_Gather):
    _backward_name = "ReflectionPad2DBackward0"
    _op_name = "pad"


class ReflectionPad3D(_Gather):
    _backward_name = "ReflectionPad3DBackward0"
    _op_name = "pad"


class ReplicationPad1D(_Gather):
    _backward_name = "ReplicationPad1DBackward0"
    _op_name = "pad"


class ReplicationPad2D(_Gather):
    _backward_name = "ReplicationPad2DBackward0"
    _op_name = "pad"


class ReplicationPad3D(_Gather):
    _backward_name = "ReplicationPad3DBackward0"
    _op_name = "pad"


class CircularPad(_Gather):
    _backward_name = "lucid::autograd::CopySlices"  # a circular pad copies slices, as setitem
    _op_name = "pad"


# nearest upsampling gathers as the pads do, but PyTorch has no complex kernel for it
class UpsampleNearest1D(_Gather):
    _backward_name = "UpsampleNearest1DBackward0"
    _complex_rule = REFUSES_COMPLEX
    _op_name = "interpolate"


class UpsampleNearest2D(_Gather):
    _backward_name = "UpsampleNearest2DBackward0"
    _complex_rule = REFUSES_COMPLEX
    _op_name = "interpolate"


class UpsampleNearest3D(_Gather):
    _backward_name = "UpsampleNearest3DBackward0"
    _complex_rule = REFUSES_COMPLEX
    _op_name = "interpolate"


class UpsampleNearestExact1D(_Gather):
    _backward_name = "UpsampleNearestExact1DBackward0"
    _complex_rule = REFUSES_COMPLEX
    _op_name = "interpolate"


class UpsampleNearestExact2D(_Gather):
    _backward_name = "UpsampleNearestExact2DBackward0"
    _complex_rule = REFUSES_COMPLEX
    _op_name = "interpolate"


class UpsampleNearestExact3D(_Gather):
    _backward_name = "UpsampleNearestExact3DBackward0"
    _complex_rule = REFUSES_COMPLEX
    _op_name = "interpolate"


_PAD_FUNCTIONS = {
    "reflect": (ReflectionPad1D, ReflectionPad2D, ReflectionPad3D),
    "replicate": (ReplicationPad1D, ReplicationPad2D, ReplicationPad3D),
    "circular": (CircularPad, CircularPad, CircularPad),
}
_NEAREST_FUNCTIONS = {
    "nearest": (UpsampleNearest1D, UpsampleNearest2D, UpsampleNearest3D),
    "nearest-exact": (UpsampleNearestExact1D, UpsampleNearestExact2D, UpsampleNearestExact3D),
}


# --------------------------------------------------------------------------- constant pad
class ConstantPadNd(Function):
    """Pad the last len(pad) // 2 dims with `value`; negative amounts crop."""

    _backward_name = "ConstantPadNdBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "pad"

    @staticmethod
    def forward(ctx, x, pad, value):
        ctx.pad = pad
        array = x._data
        dims = len(pad) // 2
        crop: list[Any] = [slice(None)] * array.ndim
        widths = [(0, 0)] * array.ndim
        for k in range(dims):
            axis = array.ndim - 1 - k
            before, after = pad[2 * k], pad[2 * k + 1]
            crop[axis] = slice(max(-before, 0), array.shape[axis] - max(-after, 0))
            widths[axis] = (max(before, 0), max(after, 0))
        array = array[tuple(crop)]
        if array.dtype == np.bool_:
            value = bool(value)
        return _wrap(np.pad(array, widths, constant_values=value))

    @staticmethod
    def backward(ctx, grad_output):
        # the gradient of a pad is the crop that undoes it, itself a pad by -amount
        return ConstantPadNd.apply(grad_output, tuple(-p for p in ctx.pad), 0), None, None


# --------------------------------------------------------------------------- F.pad
def _pad_amounts(pad: Any) -> tuple[int, ...]:
    if not isinstance(pad, (tuple, list)):
        raise_type_error(pad, "tuple of ints")
    for index, amount in enumerate(pad):
        if not is_int_list_item(amount, index):
            raise int_list_item_error("pad", "pad", 2, index, amount)
    return tuple(int(amount) for amount in pad)


def _unsupported_size(size: int, ndim: int) -> NotImplementedError:
    return NotImplementedError(
        f"Padding size {size} is not supported for {ndim}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
    )


@functools.lru_cache(maxsize=64)
def _pad_indices(mode: str, size: int, before: int, after: int) -> np.ndarray:
    """Indices into an axis of `size` that pad it by (before, after) in `mode`; kept for the
    next call of the same shape (a training loop pads alike every step), so read-only."""
    indices = _build_pad_indices(mode, size, before, after)
    indices.flags.writeable = False
    return indices


def _build_pad_indices(mode: str, size: int, before: int, after: int) -> np.ndarray:
    if mode == "circular":
        # negative amounts crop first; the wrap then repeats the cropped axis
        start = max(-before, 0)
        kept = size - start - max(-after, 0)
        positions = np.arange(max(before, 0) + kept + max(after, 0)) - max(before, 0)
        return start + positions % kept
    positions = np.arange(before + size + after) - before
    if mode == "replicate":
        return np.clip(positions, 0, size - 1)
    positions = np.abs(positions)  # reflect about the first element
    return np.where(positions > size - 1, 2 * (size - 1) - positions, positions)


def _check_non_constant(input: Tensor, mode: str, pad: tuple[int, ...]) -> None:
    dims = len(pad) // 2
    shape = tuple(input.shape)
    ndim = len(shape)
    if mode == "circular":
        for k in range(dims):
            size = shape[ndim - 1 - k]
            if pad[2 * k] > size or pad[2 * k + 1] > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if size - max(-pad[2 * k], 0) - max(-pad[2 * k + 1], 0) <= 0 and (
                pad[2 * k] > 0 or pad[2 * k + 1] > 0
            ):
                raise RuntimeError("Padding value causes wrapping around more than once.")
        return
    if input._data.dtype == np.bool_:
        kernel = "reflection_pad" if mode == "reflect" else "replication_pad"
        raise not_implemented(f"{kernel}{dims}d", input._data.dtype)
    batch_dims = ndim - dims
    if any(size == 0 for size in shape[batch_dims:]) or (batch_dims == 2 and shape[1] == 0):
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch "
            f"size and other non-zero dimensions for input, but got: {list(shape)}"
        )
    letters = "DHW"[3 - dims :]
    for k in range(dims):
        axis = ndim - 1 - k
        size = shape[axis]
        before, after = pad[2 * k], pad[2 * k + 1]
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({before}, {after}) at dimension {axis} of "
                f"input {list(shape)}"
            )
        if size + before + after < 1:
            letter = letters[dims - 1 - k]
            raise RuntimeError(
                f"input ({letter}: {size}) is too small. Calculated output {letter}: "
                f"{size + before + after}"
            )


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None):
    """Pad the last len(pad) // 2 dims of input: (left, right, top, bottom, front, back)."""
    check_tensors(input)
    if value is not None:
        check_number(value, "pad", "value", 4, "float")
        if isinstance(value, complex):
            raise TypeError("pad(): argument 'value' (position 4) must be float, not complex")
    amounts = _pad_amounts(pad)
    if len(amounts) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input.ndim
    if len(amounts) > 2 * ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(amounts)} and input of dimension {ndim}"
        )
    if mode == "constant":
        shape = tuple(input.shape)
        for k in range(len(amounts) // 2):
            if shape[ndim - 1 - k] + amounts[2 * k] + amounts[2 * k + 1] < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return ConstantPadNd.apply(input, amounts, 0 if value is None else value)
    if mode not in _PAD_FUNCTIONS:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(amounts) // 2
    if dims not in (1, 2, 3) or ndim not in (dims + 1, dims + 2):
        raise _unsupported_size(len(amounts), ndim)
    _check_non_constant(input, mode, amounts)
    plan = tuple(
        (ndim - 1 - k, _pad_indices(mode, input.shape[ndim - 1 - k], *amounts[2 * k : 2 * k + 2]),
         input.shape[ndim - 1 - k])
        for k in reversed(range(dims))
    )  # fmt: skip
    return _PAD_FUNCTIONS[mode][dims - 1].apply(input, plan)


# --------------------------------------------------------------------------- interpolate
def _along(x: Any, matrix: Any, from_end: int) -> Any:
    """matrix (out, in) applied along axis -from_end of x; arrays and tensors alike."""
    if from_end == 1:
        return x @ matrix.T
    shape = tuple(x.shape)
    axis = len(shape) - from_end
    rest = math.prod(shape[axis + 1 :])
    result = matrix @ x.reshape(*shape[:axis], shape[axis], rest)
    return result.reshape(*shape[:axis], matrix.shape[0], *shape[axis + 1 :])


# (indices (out, T) into the axis, weights (out, T), which taps are real (out, T) or None)
Taps = tuple[np.ndarray, np.ndarray, np.ndarray | None]


def _apply_taps(array: np.ndarray, taps: Taps, axis: int) -> np.ndarray:
    """out[i] = sum over t of weights[i, t] * array[indices[i, t]] along `axis`."""
    indices, weights, valid = taps
    gathered = np.take(array, indices, axis=axis)  # the axis becomes (out, T)
    shape = [1] * gathered.ndim
    shape[axis], shape[axis + 1] = weights.shape
    products = gathered * weights.astype(array.dtype).reshape(shape)
    if valid is not None:
        # padding taps read nothing, not 0 * (whatever pixel they point at)
        products = np.where(valid.reshape(shape), products, 0)
    return products.sum(axis + 1)


def _tap_matrix(taps: Taps, size: int) -> np.ndarray:
    """The (out, size) matrix whose rows hold each output's tap weights."""
    indices, weights, valid = taps
    if valid is not None:
        weights = np.where(valid, weights, 0.0)
    matrix = np.zeros((indices.shape[0], size))
    rows = np.broadcast_to(np.arange(indices.shape[0])[:, None], indices.shape)
    np.add.at(matrix, (rows.ravel(), indices.ravel()), weights.ravel())
    return matrix


class _Resample(Function):
    """result = input resampled along each of its last axes by a few taps per output point.

    A finite input goes through one dense matrix per axis (fast); one with NaN or inf reads
    only the taps, so a non-finite pixel reaches only the outputs that read it."""

    _backward_name = "ResampleBackward0"
    _op_name = "interpolate"

    @staticmethod
    def forward(ctx, x, plan):
        # float16 and bfloat16 are resampled in float32 and rounded once
        array = widen(x._data)
        ctx.plan = plan
        ctx.sizes = sizes = array.shape[array.ndim - len(plan) :]
        if np.isfinite(array).all():
            # the same sums as a dense matrix per axis (its other entries are exact zeros),
            # and a GEMM is several times faster than gathering the taps
            for k, taps in enumerate(plan):
                matrix = _tap_matrix(taps, sizes[k]).astype(array.dtype)
                array = _along(array, matrix, len(plan) - k)
            return _wrap(round_to(array, x._data.dtype))
        for k, taps in enumerate(plan):
            array = _apply_taps(array, taps, array.ndim - len(plan) + k)
        return _wrap(round_to(array, x._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        return _ResampleAdjoint.apply(grad_output, ctx.plan, ctx.sizes), None


class _ResampleAdjoint(Function):
    """The adjoint of `_Resample`: each output's gradient spread back over its taps."""

    _backward_name = "ResampleBackwardBackward0"
    _op_name = "interpolate"

    @staticmethod
    def forward(ctx, grad, plan, sizes):
        ctx.plan = plan
        array = widen(grad._data)
        for k in reversed(range(len(plan))):
            # the gradient is finite where the input was not, so one dense (size, out) matrix
            # per axis (a GEMM) is safe here, and much faster than scattering tap by tap
            matrix = _tap_matrix(plan[k], sizes[k]).T.astype(array.dtype)
            array = _along(array, np.ascontiguousarray(matrix), len(plan) - k)
        return _wrap(round_to(array, grad._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        return _Resample.apply(grad_output, ctx.plan), None, None


class UpsampleLinear1D(_Resample):
    _backward_name = "UpsampleLinear1DBackward0"
    _op_name = "interpolate"


class UpsampleBilinear2D(_Resample):
    _backward_name = "UpsampleBilinear2DBackward0"
    _op_name = "interpolate"


class UpsampleTrilinear3D(_Resample):
    _backward_name = "UpsampleTrilinear3DBackward0"
    _op_name = "interpolate"


class UpsampleBicubic2D(_Resample):
    _backward_name = "UpsampleBicubic2DBackward0"
    _op_name = "interpolate"


class UpsampleBilinear2DAa(_Resample):
    _backward_name = "UpsampleBilinear2DAaBackward0"
    _op_name = "interpolate"


class UpsampleBicubic2DAa(_Resample):
    _backward_name = "UpsampleBicubic2DAaBackward0"
    _op_name = "interpolate"


class UpsampleLanczos2DAa(_Resample):
    _backward_name = "UpsampleLanczos2DAaBackward0"
    _op_name = "interpolate"


# mode -> (input ndim, the Function); bicubic and the antialiased modes are 4-D only
_TAP_FUNCTIONS = {
    "linear": (3, UpsampleLinear1D),
    "bilinear": (4, UpsampleBilinear2D),
    "trilinear": (5, UpsampleTrilinear3D),
    "bicubic": (4, UpsampleBicubic2D),
}
_ANTIALIAS_FUNCTIONS = {
    "bilinear": UpsampleBilinear2DAa,
    "bicubic": UpsampleBicubic2DAa,
    "lanczos": UpsampleLanczos2DAa,
}
# half the width of each antialiasing filter, in input pixels at scale 1
_FILTER_RADII = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
# the kernel PyTorch names when an integer tensor reaches it, by mode and spatial dims
_INTEGER_KERNELS = {
    ("nearest", 2): "upsample_nearest2d_channels_last",
    ("nearest-exact", 2): "upsample_nearest2d_channels_last",
    ("bilinear", 2): "upsample_bilinear2d_channels_last",
    ("nearest", 1): "compute_indices_weights_nearest",
    ("nearest", 3): "compute_indices_weights_nearest",
    ("nearest-exact", 1): "compute_indices_weights_nearest",
    ("nearest-exact", 3): "compute_indices_weights_nearest",
    ("linear", 1): "compute_indices_weights_linear",
    ("trilinear", 3): "compute_indices_weights_linear",
    ("bicubic", 2): "compute_indices_weights_cubic",
    ("area", 1): "adaptive_avg_pool2d",
    ("area", 2): "adaptive_avg_pool2d",
    ("area", 3): "adaptive_avg_pool3d_cpu",
}


def _nearest_indices(size: int, out: int, scale: float | None, exact: bool) -> np.ndarray:
    if out == size:
        return np.arange(out)
    # PyTorch's CPU kernel computes the source index in float32
    ratio = np.float32(1.0 / scale if scale is not None and scale > 0 else size / out)
    if exact:
        # nearest-exact samples at pixel centres: floor((i + 0.5) * ratio)
        centres = (np.arange(out, dtype=np.float64) + 0.5) * np.float64(ratio)
        source = np.floor(centres.astype(np.float32)).astype(np.int64)
        return np.minimum(source, size - 1)
    if out == 2 * size and scale is None:
        return np.arange(out) >> 1
    source = np.floor(np.arange(out, dtype=np.float32) * ratio).astype(np.int64)
    return np.minimum(source, size - 1)


def _source_ratio(size: int, out: int, scale: float | None, align_corners: bool) -> float:
    """Input pixels per output pixel: corner to corner, or the given scale, or size / out."""
    if align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else size / out


def _linear_taps(size: int, out: int, scale: float | None, align_corners: bool) -> Taps:
    positions = np.arange(out, dtype=np.float64)
    ratio = _source_ratio(size, out, scale, align_corners)
    if align_corners:
        source = positions * ratio
    else:
        source = np.maximum((positions + 0.5) * ratio - 0.5, 0.0)
    low = np.minimum(np.floor(source).astype(np.int64), size - 1)
    high = np.minimum(low + 1, size - 1)
    weight = source - low
    return np.stack([low, high], 1), np.stack([1.0 - weight, weight], 1), None


def _cubic_weights(distance: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter a, at |distance| < 2 (0 beyond)."""
    x = np.abs(distance)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _cubic_taps(size: int, out: int, scale: float | None, align_corners: bool) -> Taps:
    positions = np.arange(out, dtype=np.float64)
    ratio = _source_ratio(size, out, scale, align_corners)
    # unlike linear, cubic does not clamp a source left of the first pixel centre
    source = positions * ratio if align_corners else (positions + 0.5) * ratio - 0.5
    floor = np.floor(source)
    taps = floor[:, None] + np.arange(-1, 3)
    weights = _cubic_weights(source[:, None] - taps, -0.75)
    # taps past either edge read the edge pixel
    return np.clip(taps.astype(np.int64), 0, size - 1), weights, None


def _antialias_taps(
    size: int, out: int, scale: float | None, align_corners: bool, mode: str
) -> Taps:
    """Weights of a filter stretched over the input pixels one output pixel covers, so that
    downsampling averages instead of skipping pixels (normalised per output pixel)."""
    ratio = _source_ratio(size, out, scale, align_corners)
    half_width = _FILTER_RADII[mode]
    stretch = max(ratio, 1.0)
    support = half_width * stretch
    # align_corners changes only the ratio here: the centres stay at pixel centres
    centres = ratio * (np.arange(out, dtype=np.float64) + 0.5)
    first = np.maximum(np.trunc(centres - support + 0.5).astype(np.int64), 0)
    last = np.minimum(np.trunc(centres + support + 0.5).astype(np.int64), size)
    taps = first[:, None] + np.arange(int(math.ceil(2 * support)) + 2)
    distance = (taps - centres[:, None] + 0.5) / stretch
    if mode == "bilinear":
        weights = np.maximum(1.0 - np.abs(distance), 0.0)
    elif mode == "bicubic":
        weights = _cubic_weights(distance, -0.5)
    else:
        # Lanczos-3: a sinc windowed by a sinc three times as wide
        weights = np.where(np.abs(distance) < 3.0, np.sinc(distance) * np.sinc(distance / 3), 0.0)
    inside = taps < last[:, None]
    weights = np.where(inside, weights, 0.0)
    totals = weights.sum(axis=1, keepdims=True)
    weights = weights / np.where(totals == 0, 1.0, totals)
    return np.minimum(np.where(inside, taps, first[:, None]), size - 1), weights, inside


def _is_integer(value: Any) -> bool:
    """An int, a NumPy integer or a tensor of an integer dtype, as PyTorch takes for a size."""
    if isinstance(value, TensorBase):
        return value._data.dtype.kind in "iu"
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _interpolate_sizes(input: Tensor, size: Any, scale_factor: Any, spatial: int):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * spatial
        if len(sizes) != spatial:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "output size in (o1, o2, ...,oK) format."
            )
        if not all(_is_integer(s) for s in sizes):
            # PyTorch checks the items of a list or tuple here and a single size in its kernel's
            # argument parser; one message for both names the types
            raise TypeError(
                "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                f"Tuple[int, int, int], but got size with types {[type(s) for s in sizes]}"
            )
        return [int(s) for s in sizes], [None] * spatial
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != spatial:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(input.shape[2:])} and "
                f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
            )
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * spatial
    sizes = [math.floor(n * s) for n, s in zip(input.shape[2:], scales)]
    return sizes, scales


def _check_interpolate_sizes(input: Tensor, sizes: list[int], mode: str) -> None:
    spatial = len(sizes)
    shape = tuple(input.shape)
    if any(s <= 0 for s in sizes) or any(n == 0 for n in shape[2:]):
        letters = "DHW"[3 - spatial :]
        given = ", ".join(f"{letter}: {n}" for letter, n in zip(letters, shape[2:]))
        wanted = ", ".join(f"{letter}: {n}" for letter, n in zip(letters, sizes))
        joint = " and" if spatial == 1 else ""
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({given}){joint} "
            f"output ({wanted})"
        )
    if shape[1] == 0:
        raise RuntimeError(
            f"Non-empty {len(shape)}D data tensor expected but got a tensor with sizes "
            f"{list(shape)}"
        )


def _area(input: Tensor, sizes: list[int]) -> Tensor:
    """Area interpolation: adaptive average pooling to `sizes`."""
    spatial = len(sizes)
    shape = tuple(input.shape)
    if any(s < 0 for s in sizes):
        pool = "adaptive_avg_pool3d" if spatial == 3 else "adaptive_avg_pool2d"
        if spatial == 3:  # PyTorch's own spacing
            wanted = f"{sizes[0]}, {sizes[1]},{sizes[2]}"
        else:
            wanted = ", ".join(map(str, sizes if spatial > 1 else [1, *sizes]))
        raise RuntimeError(
            f"{pool}: elements of output_size must be greater than or equal to 0 but received "
            f"{{{wanted}}}"
        )
    pooled_shape = (*shape[:2], 1, shape[2]) if spatial == 1 else shape
    # the 3-d pool also refuses zero channels; the 2-d one only empty spatial dims
    checked = range(1, 5) if spatial == 3 else range(2, 4)
    empty = [axis for axis in checked if pooled_shape[axis] == 0]
    if empty:
        pool = "adaptive_avg_pool3d" if spatial == 3 else "adaptive_avg_pool2d"
        raise RuntimeError(
            f"{pool}(): Expected input to have non-zero size for non-batch dimensions, but "
            f"input has sizes {list(pooled_shape)} with dimension {empty[0]} being empty"
        )
    if spatial == 1:
        return adaptive_avg_pool2d(input.unsqueeze(-2), (1, sizes[0])).squeeze(-2)
    if spatial == 2:
        return adaptive_avg_pool2d(input, tuple(sizes))
    return adaptive_avg_pool3d(input, tuple(sizes))


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of (N, C, ...) input.

    Modes: nearest, nearest-exact, linear (3-D), bilinear (4-D), bicubic (4-D), trilinear
    (5-D), area, lanczos (4-D, antialias=True only); antialias=True (bilinear, bicubic,
    lanczos) widens the filter when downsampling.
    """
    check_tensors(input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    ndim = input.ndim
    spatial = ndim - 2
    if ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
            f"modes: {_MODES} (got {mode})"
        )
    sizes, scales = _interpolate_sizes(input, size, scale_factor, spatial)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        # the kernel then sees only the output size, as if the caller had given it
        scales = [None] * spatial
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if mode in _TAP_FUNCTIONS and _TAP_FUNCTIONS[mode][0] != ndim and mode != "bicubic":
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs "
                                  f"{_TAP_FUNCTIONS[mode][0]}D input")  # fmt: skip
    if mode == "lanczos" and ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    known = mode in ("nearest", "nearest-exact", "area", "lanczos") or mode in _TAP_FUNCTIONS
    if not known or (mode in ("bicubic", "lanczos") and ndim != 4):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
            f"modes: {_MODES} (got {mode})"
        )
    dtype = input._data.dtype
    # complex input reaches adaptive_avg_pool (area), which runs only its global average
    is_complex_area = mode == "area" and dtype.kind == "c"
    if (dtype.kind not in FLOAT_KINDS and not is_complex_area) or (
        antialias and is_low_precision(dtype)
    ):
        # PyTorch's CPU build has no antialiased kernels for float16 and bfloat16 either
        kernel = "compute_index_ranges_weights" if antialias else _INTEGER_KERNELS[mode, spatial]
        raise not_implemented(kernel, dtype)
    if mode == "area":
        return _area(input, sizes)
    _check_interpolate_sizes(input, sizes, mode)
    if mode in _NEAREST_FUNCTIONS:
        exact = mode == "nearest-exact"
        plan = tuple(
            (2 + k, _nearest_indices(input.shape[2 + k], sizes[k], scales[k], exact),
             input.shape[2 + k])
            for k in range(spatial)
        )  # fmt: skip
        return _NEAREST_FUNCTIONS[mode][spatial - 1].apply(input, plan)
    if antialias:
        plan = tuple(
            _antialias_taps(input.shape[2 + k], sizes[k], scales[k], align_corners, mode)
            for k in range(spatial)
        )
        return _ANTIALIAS_FUNCTIONS[mode].apply(input, plan)
    build = _cubic_taps if mode == "bicubic" else _linear_taps
    plan = tuple(
        build(input.shape[2 + k], sizes[k], scales[k], align_corners) for k in range(spatial)
    )
    return _TAP_FUNCTIONS[mode][1].apply(input, plan)


# --------------------------------------------------------------------------- pixel shuffle
class PixelShuffle(Function):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r); pixel_shuffle checks the shapes."""

    _backward_name = "PixelShuffleBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "pixel_shuffle"

    @staticmethod
    def forward(ctx, x, r):
        ctx.factor = r
        array = x._data
        *batch, channels, height, width = array.shape
        lead = len(batch)
        blocks = array.reshape(*batch, channels // (r * r), r, r, height, width)
        blocks = blocks.transpose(*range(lead), lead, lead + 3, lead + 1, lead + 4, lead + 2)
        return _wrap(blocks.reshape(*batch, channels // (r * r), height * r, width * r))

    @staticmethod
    def backward(ctx, grad_output):
        return PixelUnshuffle.apply(grad_output, ctx.factor), None


class PixelUnshuffle(Function):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W); pixel_unshuffle checks the shapes."""

    _backward_name = "PixelUnshuffleBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "pixel_unshuffle"

    @staticmethod
    def forward(ctx, x, r):
        ctx.factor = r
        array = x._data
        ctx.empty = array.size == 0
        if ctx.empty:
            # PyTorch returns an empty input as it is, in the input's shape
            return _wrap(array.copy())
        *batch, channels, height, width = array.shape
        lead = len(batch)
        blocks = array.reshape(*batch, channels, height // r, r, width // r, r)
        blocks = blocks.transpose(*range(lead), lead, lead + 2, lead + 4, lead + 1, lead + 3)
        return _wrap(blocks.reshape(*batch, channels * r * r, height // r, width // r))

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.empty:
            return grad_output, None
        return PixelShuffle.apply(grad_output, ctx.factor), None


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r)."""
    check_tensors(input)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={channels} is not divisible by {r * r}"
        )
    return PixelShuffle.apply(input, r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W)."""
    check_tensors(input)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    r = downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, channels, height, width = input.shape
    if height % r:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={height} is not divisible by {r}"
        )
    if width % r:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={width} is not divisible by {r}"
        )
    return PixelUnshuffle.apply(input, r)


# --------------------------------------------------------------------------- channel shuffle
class ChannelShuffle(Function):
    """(N, g * k, *) -> (N, k * g, *): channel i * k + j moves to j * g + i."""

    _backward_name = "ChannelShuffleBackward0"
    _complex_rule = HOLOMORPHIC
    _op_name = "channel_shuffle"

    @staticmethod
    def forward(ctx, x, groups):
        ctx.groups = groups
        array = x._data
        batch, channels, *rest = array.shape
        blocks = array.reshape(batch, groups, channels // groups, *rest).swapaxes(1, 2)
        return _wrap(blocks.reshape(array.shape))

    @staticmethod
    def backward(ctx, grad_output):
        # shuffling into k groups undoes shuffling into g groups
        return ChannelShuffle.apply(grad_output, grad_output.shape[1] // ctx.groups), None


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of `(N, C, *)` input from `groups` groups."""
    check_tensors(input)
    check_int(groups, "channel_shuffle", "groups", 2)
    if input.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    channels = input.shape[1]
    if channels % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {channels} channels and "
            f"{groups} groups."
        )
    return ChannelShuffle.apply(input, groups)


# --------------------------------------------------------------------------- affine_grid
_ALIGN_CORNERS_DEFAULT = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _base_line(size: int, align_corners: bool) -> np.ndarray:
    """Normalised pixel positions along an axis of `size`: corners at +-1, or centres."""
    if size <= 1:
        return np.zeros(1)
    line = np.linspace(-1.0, 1.0, size)
    return line if align_corners else line * ((size - 1) / size)


class AffineGridGenerator(Function):
    """grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over the output's normalised positions."""

    _backward_name = "AffineGridGeneratorBackward0"
    _op_name = "affine_grid"
    _keeps_values_for_backward = True

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        spatial = tuple(size[2:])
        # the last axis varies fastest; x runs along it, then y, then z
        lines = [_base_line(n, align_corners) for n in reversed(spatial)]
        mesh = np.meshgrid(*reversed(lines), indexing="ij")
        columns = [axis.ravel() for axis in reversed(mesh)]
        base = np.stack([*columns, np.ones(columns[0].size)], 1).astype(theta._data.dtype)
        ctx.base = base
        # float16 and bfloat16 multiply in float32 (no BLAS for them) and round once
        grid = np.matmul(widen(base), widen(theta._data).swapaxes(1, 2))
        return _wrap(round_to(grid.reshape(size[0], *spatial, len(spatial)), theta._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        batch, dims = grad_output.shape[0], grad_output.shape[-1]
        rows = grad_output.reshape(batch, -1, dims).transpose(1, 2)
        return rows @ tensor(ctx.base, dtype=grad_output.dtype), None, None


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of an affine map theta (N, 2, 3) or (N, 3, 4) for an output `size`
    (N, C, H, W) or (N, C, D, H, W), in grid_sample's normalised coordinates."""
    import warnings  # noqa: PLC0415

    check_tensors(theta)
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{size}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{size}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{theta.shape[0]}, {theta.shape[-1]}] but got: [{size[0]}, {theta.shape[-1]}]."
        )
    return AffineGridGenerator.apply(theta, size, align_corners)


# --------------------------------------------------------------------------- grid_sample
class _GridSampler(Function):
    """The last step of grid_sample: the taps gathered from the input around each output point,
    weighted and summed. values (N, C, K, P) carry the gradient to the input, weights (N, K, P)
    to the grid; `grid` is passed only where no weight depends on it (nearest), so that it
    still gets its zero gradient."""

    @staticmethod
    def forward(ctx, weights, values, grid, shape, dtype):
        ctx.save_for_backward(weights, values)
        ctx.grid_shape = None if grid is None else tuple(grid.shape)
        products = values._data * weights._data[:, None]
        result = products.sum(2)
        # float16 and bfloat16 inputs were sampled in float32: the output is rounded once
        return _wrap(round_to(result.reshape(*result.shape[:2], *shape), dtype))

    @staticmethod
    def backward(ctx, grad_output):
        weights, values = ctx.saved_tensors
        batch, channels, taps, points = values.shape
        grad = grad_output.reshape(batch, channels, 1, points)
        grad_weights = grad_values = grad_grid = None
        if ctx.needs_input_grad[0]:
            grad_weights = (grad * values).sum(1)
        if ctx.needs_input_grad[1]:
            grad_values = grad * weights.unsqueeze(1)
        if ctx.grid_shape is not None and ctx.needs_input_grad[2]:
            grad_grid = _wrap(np.zeros(ctx.grid_shape, grad_output._data.dtype))
        return grad_weights, grad_values, grad_grid, None, None


class _TapGather(Function):
    """values[n, c, j] = input[n, c, index[n, j]] over (N, C, S) input: the same taps for
    every channel."""

    _backward_name = "TapGatherBackward0"
    _op_name = "grid_sample"

    @staticmethod
    def forward(ctx, x, index):
        ctx.index = index
        ctx.size = x.shape[2]
        return _wrap(np.take_along_axis(x._data, index[:, None, :], axis=2))

    @staticmethod
    def backward(ctx, grad_output):
        return _TapScatter.apply(grad_output, ctx.index, ctx.size), None


class _TapScatter(Function):
    """The adjoint of `_TapGather`: each tap's gradient summed into the pixel it read."""

    _backward_name = "TapGatherBackwardBackward0"
    _op_name = "grid_sample"

    @staticmethod
    def forward(ctx, grad, index, size):
        ctx.index = index
        array = grad._data
        batch, channels, _ = array.shape
        # one bincount over (n, c, pixel) slots sums repeated taps far faster than ufunc.at
        slots = np.arange(batch * channels).reshape(batch, channels, 1) * size
        flat = (slots + index[:, None, :]).ravel()
        summed = np.bincount(flat, weights=array.ravel(), minlength=batch * channels * size)
        return _wrap(summed.reshape(batch, channels, size).astype(array.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        return _TapGather.apply(grad_output, ctx.index), None, None


class GridSampler2D(_GridSampler):
    _backward_name = "GridSampler2DBackward0"
    _op_name = "grid_sample"


class GridSampler3D(_GridSampler):
    _backward_name = "GridSampler3DBackward0"
    _op_name = "grid_sample"


def _unnormalize(coordinate: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixel units: -1 and 1 are the corner pixels' centres, or their outer edges."""
    if align_corners:
        return (coordinate + 1) * ((size - 1) / 2)
    return ((coordinate + 1) * size - 1) / 2


def _reflect(coordinate: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Fold coordinates back into [low, high] by mirroring at both ends, any number of times."""
    if twice_low == twice_high:
        return coordinate * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = abs(coordinate - low)
    flips = np.floor(distance._data / span)
    extra = distance - _wrap(flips * span)
    return where(_wrap(flips % 2 == 0), extra + low, span - extra + low)


def _reflect_index(index: np.ndarray, twice_low: int, twice_high: int) -> np.ndarray:
    """`_reflect` on an array of pixel indices, which need no gradient."""
    if twice_low == twice_high:
        return np.zeros_like(index)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = np.abs(index - low)
    flips = np.floor(distance / span)
    extra = distance - flips * span
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def _pad_coordinate(coordinate: Tensor, size: int, padding_mode: str, align_corners: bool):
    """Where coordinates outside the input read under border or reflection padding."""
    if padding_mode == "reflection":
        if align_corners:
            coordinate = _reflect(coordinate, 0, 2 * (size - 1))
        else:
            coordinate = _reflect(coordinate, -1, 2 * size - 1)
    if padding_mode == "zeros":
        return coordinate
    return coordinate.clamp(0, size - 1)


def _pad_index(index: np.ndarray, size: int, padding_mode: str, align_corners: bool):
    """`_pad_coordinate` on an array of pixel indices (bicubic's taps)."""
    if padding_mode == "reflection":
        if align_corners:
            index = _reflect_index(index, 0, 2 * (size - 1))
        else:
            index = _reflect_index(index, -1, 2 * size - 1)
    if padding_mode == "zeros":
        return index
    return np.clip(index, 0, size - 1)


def _cubic_coefficients(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights (a = -0.75) of the taps at -1, 0, 1, 2 from floor(x)."""
    a = -0.75
    near = [t, 1 - t]
    far = [t + 1, 2 - t]

    def inner(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def outer(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [outer(far[0]), inner(near[0]), inner(near[1]), outer(far[1])]


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def _check_grid_sample(input: Tensor, grid: Tensor, mode: str) -> None:
    shape, grid_shape = list(input.shape), list(grid.shape)
    if shape and grid_shape and shape[0] != grid_shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {shape} and grid with sizes {grid_shape}"
        )
    if grid_shape and grid_shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, "
            f"but got grid with sizes {grid_shape}"
        )
    for axis in range(2, input.ndim):
        if shape[axis] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {shape} with dimension {axis} being empty"
            )
    rank = 4 if input.ndim == 4 else 5
    if input.ndim != rank or grid.ndim != rank:
        raise RuntimeError(
            f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, "
            f"but got input with sizes {shape} and grid with sizes {grid_shape}"
        )
    if mode == "bicubic" and rank == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input._data.dtype.kind not in FLOAT_KINDS:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if rank == 4 else "grid_sampler3d_cpu"
        raise not_implemented(kernel, input._data.dtype)
    if grid._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"expected scalar type {dtype_name(input._data.dtype)} but found "
            f"{dtype_name(grid._data.dtype)}"
        )


@autocast_op
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) input at grid (N, Ho, Wo, 2) of normalised (x, y) points, or
    (N, C, D, H, W) input at (N, Do, Ho, Wo, 3) points (bicubic is 2-D only)."""
    import warnings  # noqa: PLC0415

    check_tensors(input, grid)
    if mode not in _GRID_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    _check_grid_sample(input, grid, mode)
    dtype = input._data.dtype
    if is_low_precision(dtype):
        # float16 and bfloat16 pixels are weighted and summed in float32 and the output
        # rounded once by the last step; the coordinates and tap weights stay in the grid's
        # dtype, rounded op by op as PyTorch's vectorised kernel computes them
        input = to(input, _FLOAT32)
    spatial = input.ndim - 2
    batch, channels, *sizes = input.shape
    out_shape = tuple(grid.shape[1:-1])
    points = math.prod(out_shape)
    coordinates = grid.reshape(batch, points, spatial)
    # per input axis, its taps: (index array (N, P), weight tensor or None)
    axis_taps: list[list[tuple[np.ndarray, Tensor | None]]] = []
    for axis, size in enumerate(sizes):
        # the grid's last dim lists x (the last input axis) first
        coordinate = coordinates[:, :, spatial - 1 - axis]
        if mode == "bicubic":
            coordinate = _unnormalize(coordinate, size, align_corners)
            low = np.floor(coordinate._data)
            weights = _cubic_coefficients(coordinate - _wrap(low))
            taps = [
                (_pad_index(low + k - 1, size, padding_mode, align_corners), weight)
                for k, weight in enumerate(weights)
            ]
        else:
            coordinate = _unnormalize(coordinate, size, align_corners)
            coordinate = _pad_coordinate(coordinate, size, padding_mode, align_corners)
            if mode == "nearest":
                # round half to even, as the kernel's nearbyint does
                taps = [(np.round(coordinate._data), None)]
            else:
                low = np.floor(coordinate._data)
                fraction = coordinate - _wrap(low)
                taps = [(low, 1 - fraction), (low + 1, fraction)]
        axis_taps.append(taps)
    flat_indices, valid_masks, tap_weights = [], [], []
    for combination in itertools.product(*axis_taps):
        flat = np.zeros((batch, points), np.int64)
        valid = np.ones((batch, points), bool)
        weight = None
        for size, (index, axis_weight) in zip(sizes, combination, strict=True):
            inside = (index >= 0) & (index < size)  # False for NaN
            valid &= inside
            flat = flat * size + np.where(inside, index, 0).astype(np.int64)
            if axis_weight is not None:
                weight = axis_weight if weight is None else weight * axis_weight
        flat_indices.append(flat)
        valid_masks.append(valid)
        tap_weights.append(weight)
    taps = len(flat_indices)
    index = np.stack(flat_indices, 1).reshape(batch, taps * points)
    values = _TapGather.apply(input.reshape(batch, channels, -1), index)
    values = values.reshape(batch, channels, taps, points)
    # taps outside the input read zeros (never the clamped pixel times a zero weight)
    valid = _wrap(np.stack(valid_masks, 1)[:, None])
    values = where(valid, values, _wrap(np.zeros((), input._data.dtype)))
    if mode == "nearest":
        weights = _wrap(np.ones((batch, 1, points), input._data.dtype))
        source = grid
    else:
        weights = stack(tap_weights, 1)
        source = None
    function = GridSampler2D if spatial == 2 else GridSampler3D
    return function.apply(weights, values, source, out_shape, dtype)
