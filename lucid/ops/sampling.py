"""Neural-network ops: padding, interpolation and pixel shuffle (used through nn.functional).

Reflect, replicate and circular padding and nearest interpolation are one gather along each
padded axis (`_Gather`), whose backward is the matching scatter-sum (`_Scatter`) and back, so
every gradient here is built from lucid ops. Linear interpolation is one small matrix per
axis (a GEMM each way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.function import Function
from lucid._core.tensor import _wrap
from lucid.ops._common import check_tensors, not_implemented

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
    _backward_name = "CopySlices"  # PyTorch pads circularly by copying slices
    _op_name = "pad"


class UpsampleNearest1D(_Gather):
    _backward_name = "UpsampleNearest1DBackward0"
    _op_name = "interpolate"


class UpsampleNearest2D(_Gather):
    _backward_name = "UpsampleNearest2DBackward0"
    _op_name = "interpolate"


class UpsampleNearest3D(_Gather):
    _backward_name = "UpsampleNearest3DBackward0"
    _op_name = "interpolate"


_PAD_FUNCTIONS = {
    "reflect": (ReflectionPad1D, ReflectionPad2D, ReflectionPad3D),
    "replicate": (ReplicationPad1D, ReplicationPad2D, ReplicationPad3D),
    "circular": (CircularPad, CircularPad, CircularPad),
}
_NEAREST_FUNCTIONS = (UpsampleNearest1D, UpsampleNearest2D, UpsampleNearest3D)


# --------------------------------------------------------------------------- constant pad
class ConstantPadNd(Function):
    """Pad the last len(pad) // 2 dims with `value`; negative amounts crop."""

    _backward_name = "ConstantPadNdBackward0"
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
    from lucid._core.arguments import raise_type_error  # noqa: PLC0415

    if not isinstance(pad, (tuple, list)):
        raise_type_error(pad, "tuple of ints")
    for position, amount in enumerate(pad):
        if not isinstance(amount, (int, np.integer)) or isinstance(amount, bool):
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element "
                f"of type {type(amount).__name__} at pos {position}"
            )
    return tuple(int(amount) for amount in pad)


def _unsupported_size(size: int, ndim: int) -> NotImplementedError:
    return NotImplementedError(
        f"Padding size {size} is not supported for {ndim}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
    )


def _pad_indices(mode: str, size: int, before: int, after: int) -> np.ndarray:
    """Indices into an axis of `size` that pad it by (before, after) in `mode`."""
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
class _UpsampleLinear(Function):
    """result = input with one interpolation matrix applied along each of its last axes."""

    @staticmethod
    def forward(ctx, x, matrices):
        ctx.matrices = matrices
        array = x._data
        for k, matrix in enumerate(matrices):
            array = _along(array, matrix.astype(array.dtype), len(matrices) - k)
        return _wrap(array)

    @staticmethod
    def backward(ctx, grad_output):
        from lucid.factories import tensor  # noqa: PLC0415

        grad = grad_output
        for k, matrix in enumerate(ctx.matrices):
            transposed = tensor(np.ascontiguousarray(matrix.T), dtype=grad.dtype)
            grad = _along(grad, transposed, len(ctx.matrices) - k)
        return grad, None


def _along(x: Any, matrix: Any, from_end: int) -> Any:
    """matrix (out, in) applied along axis -from_end of x; arrays and tensors alike."""
    if from_end == 1:
        return x @ matrix.T
    shape = tuple(x.shape)
    axis = len(shape) - from_end
    rest = math.prod(shape[axis + 1 :])
    result = matrix @ x.reshape(*shape[:axis], shape[axis], rest)
    return result.reshape(*shape[:axis], matrix.shape[0], *shape[axis + 1 :])


class UpsampleLinear1D(_UpsampleLinear):
    _backward_name = "UpsampleLinear1DBackward0"
    _op_name = "interpolate"


class UpsampleBilinear2D(_UpsampleLinear):
    _backward_name = "UpsampleBilinear2DBackward0"
    _op_name = "interpolate"


class UpsampleTrilinear3D(_UpsampleLinear):
    _backward_name = "UpsampleTrilinear3DBackward0"
    _op_name = "interpolate"


_LINEAR_MODES = {"linear": 3, "bilinear": 4, "trilinear": 5}
_LINEAR_FUNCTIONS = {
    "linear": UpsampleLinear1D,
    "bilinear": UpsampleBilinear2D,
    "trilinear": UpsampleTrilinear3D,
}
_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def _nearest_indices(size: int, out: int, scale: float | None) -> np.ndarray:
    if out == size:
        return np.arange(out)
    # PyTorch's CPU kernel computes the source index in float32
    ratio = np.float32(1.0 / scale if scale is not None and scale > 0 else size / out)
    if out == 2 * size and scale is None:
        return np.arange(out) >> 1
    source = np.floor(np.arange(out, dtype=np.float32) * ratio).astype(np.int64)
    return np.minimum(source, size - 1)


def _linear_matrix(size: int, out: int, scale: float | None, align_corners: bool) -> np.ndarray:
    positions = np.arange(out, dtype=np.float64)
    if align_corners:
        source = positions * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
        source = np.maximum((positions + 0.5) * ratio - 0.5, 0.0)
    low = np.minimum(np.floor(source).astype(np.int64), size - 1)
    high = np.minimum(low + 1, size - 1)
    weight = source - low
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.arange(out), low), 1.0 - weight)
    np.add.at(matrix, (np.arange(out), high), weight)
    return matrix


def _interpolate_sizes(input: Tensor, size: Any, scale_factor: Any, spatial: int):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * spatial
        if len(sizes) != spatial:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                f"{sizes}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "output size in (o1, o2, ...,oK) format."
            )
        return [int(s) for s in sizes], [None] * spatial
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != spatial:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(input.shape[2:])} and "
                f"scale_factor of shape {list(scale_factor)}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
            )
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * spatial
    sizes = [math.floor(n * s) for n, s in zip(input.shape[2:], scales)]
    return sizes, scales


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of (N, C, ...) input: nearest, linear, bilinear, trilinear."""
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
    if ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
            f"modes: {_MODES} (got {mode})"
        )
    if mode not in ("nearest", *_LINEAR_MODES):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
            f"modes: {_MODES} (got {mode})"
            if mode not in _MODES.split(" | ")
            else f"lucid's interpolate supports nearest, linear, bilinear and trilinear, not {mode}"
        )
    if antialias:
        raise NotImplementedError("Anti-alias option is only supported for bilinear and bicubic")
    spatial = ndim - 2
    sizes, scales = _interpolate_sizes(input, size, scale_factor, spatial)
    if recompute_scale_factor:
        scales = [None] * spatial
    if input._data.dtype.kind != "f":
        kernel = "upsample_nearest" if mode == "nearest" else f"upsample_{mode}"
        raise not_implemented(f"{kernel}{spatial}d_out_frame", input._data.dtype)
    if any(s <= 0 for s in sizes) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input "
            f"({', '.join(map(str, input.shape[2:]))}) and output "
            f"({', '.join(map(str, sizes))})"
        )
    if mode == "nearest":
        plan = tuple(
            (2 + k, _nearest_indices(input.shape[2 + k], sizes[k], scales[k]), input.shape[2 + k])
            for k in range(spatial)
        )
        return _NEAREST_FUNCTIONS[spatial - 1].apply(input, plan)
    if _LINEAR_MODES[mode] != ndim:
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_MODES[mode]}D input")  # fmt: skip
    matrices = tuple(
        _linear_matrix(input.shape[2 + k], sizes[k], scales[k], align_corners)
        for k in range(spatial)
    )
    return _LINEAR_FUNCTIONS[mode].apply(input, matrices)


# --------------------------------------------------------------------------- pixel shuffle
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
    out_channels = channels // (r * r)
    lead = len(batch)
    x = input.reshape(*batch, out_channels, r, r, height, width)
    x = x.permute(*range(lead), lead, lead + 3, lead + 1, lead + 4, lead + 2)
    return x.reshape(*batch, out_channels, height * r, width * r)


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
    lead = len(batch)
    x = input.reshape(*batch, channels, height // r, r, width // r, r)
    x = x.permute(*range(lead), lead, lead + 2, lead + 4, lead + 1, lead + 3)
    return x.reshape(*batch, channels * r * r, height // r, width // r)
