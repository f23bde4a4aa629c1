"""Statistics of samples: covariance and correlation (cov, corrcoef) and counts per bin (histc,
histogram, histogramdd, bincount)."""

from __future__ import annotations

import builtins
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.dtypes import C_TYPE_NAMES, FLOAT_KINDS, INEXACT_KINDS
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops import complex_numbers as complex_ops
from lucid.ops import fills as fills_ops
from lucid.ops import products as products_ops
from lucid.ops import shape as shape_ops
from lucid.ops._common import (
    _array,
    _int_argument,
    check_tensors,
    dtype_name,
    invalid_combination,
    not_implemented,
    result_type,
)
from lucid.ops._promote import is_low_precision, round_to, widen
from lucid.ops.matrices import diagonal
from lucid.ops.pointwise import clamp, sqrt
from lucid.ops.reduction import mean, sum
from lucid.ops.shape import unsqueeze
from lucid.ops.sorting import _INT64, _shape_text

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "cov", "corrcoef", "bincount", "histc", "histogram", "histogramdd",
]  # fmt: skip


# ---------------------------------------------------------------- covariance, correlation
def _check_weights(name: str, weights: Tensor, observations: int, integral: bool) -> None:
    array = weights._data
    if array.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{array.ndim} dimensions"
        )
    if array.size != observations:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {array.size} != {observations}"
        )
    if integral and array.dtype.kind not in "iu":
        raise RuntimeError(
            f"cov(): expected {name} to have integral dtype but got {name} with "
            f"{dtype_name(array.dtype)} dtype"
        )
    if not integral and array.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            f"cov(): expected {name} to have floating point dtype but got {name} with "
            f"{dtype_name(array.dtype)} dtype"
        )
    if np.any(array < 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:  # fmt: skip
    """The covariance matrix of the variables in input's rows (observations in columns), with
    optional integer frequency weights and float observation weights."""
    check_tensors(input)
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{ndim} dimensions"
        )
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if ndim == 2 else shape_ops.reshape(input, (1, -1))
    if x._data.dtype.kind not in INEXACT_KINDS:
        x = fills_ops.to(x, dtypes.get_default_dtype())
    observations = x._data.shape[1]
    weights = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, True)
        weights = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, False)
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        average = mean(x, 1)
        norm_factor = float(observations) - correction
    else:
        weight_sum = sum(weights)
        average = sum(x * weights, 1) / weight_sum
        if correction == 0:
            norm_factor = weight_sum
        elif aweights is None:
            norm_factor = weight_sum - correction
        else:
            norm_factor = weight_sum - sum(weights * aweights) * correction / weight_sum
    if (
        float(np.asarray(norm_factor._data if isinstance(norm_factor, TensorBase) else norm_factor))
        <= 0
    ):
        warnings.warn("cov(): degrees of freedom is <= 0", UserWarning, stacklevel=2)
        norm_factor = 0.0
    centered = x - shape_ops.unsqueeze(average, 1)
    weighted = centered if weights is None else centered * weights
    if weighted._data.dtype.kind == "c":
        # complex covariance pairs each variable with the conjugate of the other
        weighted = weighted.conj()
    product = products_ops.matmul(centered, shape_ops.t(weighted))
    return shape_ops.squeeze(product / norm_factor)


def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the variables in input's rows, in [-1, 1]."""
    covariance = cov(input)
    if covariance._data.ndim == 0:
        return covariance / covariance
    variances = diagonal(covariance)
    is_complex = variances._data.dtype.kind == "c"
    # a complex covariance matrix has a real diagonal (held as complex)
    deviations = sqrt(variances.real if is_complex else variances)
    scaled = covariance / unsqueeze(deviations, 1) / unsqueeze(deviations, 0)
    if is_complex:
        return complex_ops.complex(clamp(scaled.real, -1, 1), clamp(scaled.imag, -1, 1))
    return clamp(scaled, -1, 1)


# ------------------------------------------------------------------ histc / histogram / bincount
HistogramResult = result_type("HistogramResult", "histogram", "hist", "bin_edges")
HistogramddResult = result_type("HistogramddResult", "histogramdd", "hist", "bin_edges")


def _number_text(value: float) -> str:
    if np.isnan(value):
        return "-nan" if np.signbit(value) else "nan"
    return f"{value:g}"


def _linear_edges(low: float, high: float, bins: int, dtype: np.dtype) -> np.ndarray:
    """`bins` + 1 equally spaced edges from `low` to `high`, rounded as PyTorch's linspace
    rounds them, so that a value on an edge lands in the same bin: the step in the dtype, the
    first half counted up from `low` and the second half down from `high`, each edge rounded
    once (a fused multiply-add, done here in a wider type)."""
    start, end = dtype.type(low), dtype.type(high)
    step = (end - start) / dtype.type(bins)
    wide = np.longdouble if dtype == np.float64 else np.float64
    places = np.arange(bins + 1)
    from_start = wide(step) * places.astype(wide) + wide(start)
    from_end = wide(end) - wide(step) * (bins - places).astype(wide)
    return np.where(places < (bins + 1) // 2, from_start, from_end).astype(dtype)


def _bin_indices(values: np.ndarray, edges: np.ndarray, interpolate: bool) -> np.ndarray:
    """The bin of each value (the last bin holds its right edge too); -1 outside the edges and
    for NaN. With `interpolate` (histc's rule), the bin is read off a linear scale in the
    values' dtype without looking at the edges, as PyTorch does; otherwise it is found among
    the edges."""
    bins = edges.size - 1
    low, high = edges[0], edges[-1]
    inside = (values >= low) & (values <= high)
    if interpolate:
        work = np.where(inside, values, low)
        scale = values.dtype.type(bins)
        guess = ((work - low) * scale / (high - low)).astype(_INT64)
    else:
        guess = np.searchsorted(edges, values, "right").astype(_INT64) - 1
    return np.where(inside, np.minimum(guess, bins - 1), -1)


def _float_only(array: np.ndarray) -> None:
    if array.dtype.kind not in FLOAT_KINDS:
        raise not_implemented("histogram_cpu", array.dtype)


def _count_bins(bin_index: np.ndarray, bins: int, weights: np.ndarray | None,
                dtype: np.dtype) -> np.ndarray:  # fmt: skip
    kept = bin_index >= 0
    chosen = None if weights is None else weights.reshape(-1)[kept.reshape(-1)]
    counts = np.bincount(bin_index[kept], weights=chosen, minlength=bins)
    return counts.astype(dtype)


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Counts of `input` in `bins` equal bins over [min, max] (over the data's range when both
    are equal); values outside the range and NaN are not counted."""
    array = _array(input)
    _int_argument("histc", bins, "bins", 2)
    if array.dtype.kind != "c":
        _float_only(array)
    if bins <= 0:
        raise RuntimeError(f"lucid.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("lucid.histc: max must be larger than min")
    if array.dtype.kind == "c":
        # without a range PyTorch first looks for the data's (aminmax), which takes no complex
        raise not_implemented("aminmax_cpu" if low == high else "histogram_cpu", array.dtype)
    if low == high and array.size:
        low, high = float(np.min(array)), float(np.max(array))
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(
            f"lucid.histc: range of [{_number_text(low)}, {_number_text(high)}] is not finite"
        )
    if low == high:
        low, high = low - 1.0, high + 1.0
    edges = _linear_edges(low, high, bins, array.dtype)
    return _wrap(_count_bins(_bin_indices(array.reshape(-1), edges, True), bins, None,
                             array.dtype))  # fmt: skip


_HISTOGRAM_OVERLOADS = (
    "(Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, tuple of "
    "Tensors out = None)",
    "(Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, bool "
    "density = False, tuple of Tensors out = None)",
)


def _histogram_edges(input: Tensor, bins: Any, range: Any, dim: int = 0,
                     array: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """The bin edges of dimension `dim` (whose values are `array`, by default the input's),
    after PyTorch's checks of `bins` and `range`."""
    if array is None:
        array = input._data
    if isinstance(bins, TensorBase):
        edges = bins._data
        if edges.ndim != 1:
            raise RuntimeError(
                "lucid.histogramdd: bins tensor should have one dimension, but got "
                f"{edges.ndim} dimensions in the bins tensor for dimension {dim}"
            )
        if edges.dtype != array.dtype:
            raise RuntimeError(
                "lucid.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {C_TYPE_NAMES[array.dtype.name]} and bins for "
                f"dimension {dim} with dtype {C_TYPE_NAMES[edges.dtype.name]}"
            )
        return edges.copy()
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise invalid_combination("histogram", (input, bins), _HISTOGRAM_OVERLOADS)
    if bins <= 0:
        raise RuntimeError(
            f"lucid.histogram(): bins must be > 0, but got {bins} for dimension {dim}"
        )
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif array.size:
        low, high = float(np.min(array)), float(np.max(array))
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(
            f"lucid.histogramdd: min should not exceed max, but got min {_number_text(low)} max "
            f"{_number_text(high)} for dimension {dim}"
        )
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(
            f"lucid.histogramdd: dimension {dim}'s range [{_number_text(low)}, "
            f"{_number_text(high)}] is not finite"
        )
    if low == high:
        low, high = low - 0.5, high + 0.5
    return _linear_edges(low, high, bins, array.dtype)


def _histogram_weights(weight: Tensor, array: np.ndarray) -> np.ndarray:
    """The weight array of histogram/histogramdd, which must share the input's dtype."""
    weights = _array(weight)
    if weights.dtype != array.dtype:
        raise RuntimeError(
            "lucid.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({C_TYPE_NAMES[array.dtype.name]}), "
            f"and weight({C_TYPE_NAMES[weights.dtype.name]})"
        )
    return weights


def histogram(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,
              density: bool = False) -> HistogramResult:  # fmt: skip
    """(hist, bin_edges): counts (or summed `weight`) of `input` in `bins` equal bins over
    `range` (the data's range by default), or between the edges `bins` gives as a tensor."""
    array = _array(input)
    # PyTorch's float16/bfloat16 kernel needs given edges or a given range (it computes no
    # range from the data in these dtypes); the counting runs in float32 here
    low = is_low_precision(array.dtype) and (isinstance(bins, TensorBase) or range is not None)
    if array.dtype.kind == "c" and (isinstance(bins, TensorBase) or range is not None):
        # given edges or a given range are checked first, and the counting kernel then refuses
        # complex values (with neither, finding the data's range refuses them); edges from a
        # range are made in the real dtype, only to check it
        _histogram_edges(input, bins, range, array=array if range is None else array.real)
        raise not_implemented("histogram_cpu", array.dtype)
    if array.dtype not in (np.float32, np.float64) and not low:
        raise not_implemented("histogramdd", array.dtype)
    edges = _histogram_edges(input, bins, range)
    weights = None
    if weight is not None:
        weights = _histogram_weights(weight, array)
        if weights.shape != array.shape:
            raise RuntimeError(
                "lucid.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{_shape_text((array.size, 1))} and weight with shape {_shape_text(weights.shape)}"
            )
    bin_count = builtins.max(edges.size - 1, 0)
    bin_index = _bin_indices(widen(array).reshape(-1), widen(edges), False) if bin_count else None
    if bin_index is None:
        hist = np.zeros(0, array.dtype)
    else:
        hist = _count_bins(bin_index, bin_count, widen(weights), np.float32 if low else array.dtype)
    if density and bin_count:
        hist = hist / hist.sum() / np.diff(widen(edges))
    return HistogramResult(_wrap(round_to(hist, array.dtype)), _wrap(edges))


_HISTOGRAMDD_OVERLOADS = tuple(
    f"(Tensor input, {bins} bins, tuple of floats range = None, Tensor weight = None, bool "
    "density = False)"
    for bins in ("int", "tuple of ints", "tuple of Tensors")
)


def histogramdd(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,
                density: bool = False) -> HistogramddResult:  # fmt: skip
    """(hist, bin_edges): the D-dimensional histogram of the points in `input`'s rows (its last
    dim is D). `bins` is a bin count for every dim, one count per dim, or one edges tensor per
    dim; `range` gives (min, max) of every dim in turn (the data's range by default)."""
    array = _array(input)
    if array.dtype not in (np.float32, np.float64):
        raise not_implemented("histogramdd", array.dtype)
    if array.ndim < 2:
        raise RuntimeError("lucid.histogramdd: input tensor should have at least 2 dimensions")
    dims = array.shape[-1]
    points = array.reshape(-1, dims)
    if isinstance(bins, int) and not isinstance(bins, bool):
        per_dim = [bins] * dims
    elif isinstance(bins, list | tuple) and all(isinstance(item, TensorBase) for item in bins):
        if len(bins) != dims:
            raise RuntimeError(
                f"lucid.histogramdd: expected {dims} sequences of bin edges for a {dims}-"
                f"dimensional histogram but got {len(bins)}"
            )
        per_dim = list(bins)
    elif isinstance(bins, list | tuple) and all(
        isinstance(item, int) and not isinstance(item, bool) for item in bins
    ):
        if len(bins) != dims:
            raise RuntimeError(
                "histogramdd: The size of bins must be equal to the innermost dimension of the "
                "input."
            )
        per_dim = list(bins)
    else:
        raise invalid_combination("histogramdd", (input, bins), _HISTOGRAMDD_OVERLOADS)
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(
            f"lucid.histogramdd: for a {dims}-dimensional histogram range should have "
            f"{2 * dims} elements, but got {len(range)}"
        )
    edges = [
        _histogram_edges(
            input,
            per_dim[dim],
            None if range is None else range[2 * dim : 2 * dim + 2],
            dim,
            points[:, dim],
        )
        for dim in builtins.range(dims)
    ]
    weights = None
    if weight is not None:
        weights = _histogram_weights(weight, array)
        if weights.shape != array.shape[:-1]:
            raise RuntimeError(
                "lucid.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{_shape_text(array.shape)} and weight with shape {_shape_text(weights.shape)}"
            )
    counts = tuple(builtins.max(edge.size - 1, 0) for edge in edges)
    if 0 in counts:
        hist = np.zeros(counts, array.dtype)
    else:
        # each point's bin along every dim, flattened to one index; a point outside any dim's
        # edges (or NaN there) is not counted
        indices = [_bin_indices(points[:, dim], edges[dim], False) for dim in builtins.range(dims)]
        inside = np.logical_and.reduce([index >= 0 for index in indices])
        flat = np.ravel_multi_index(tuple(np.where(inside, index, 0) for index in indices), counts)
        flat = np.where(inside, flat, -1)
        hist = _count_bins(flat, int(np.prod(counts)), weights, array.dtype).reshape(counts)
    if density and hist.size:
        # divide by the total and by each bin's volume (the product of its widths)
        volume = np.ones(counts)
        for dim, edge in enumerate(edges):
            shape = [1] * dims
            shape[dim] = counts[dim]
            volume = volume * np.diff(edge).astype(np.float64).reshape(shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = (hist / hist.sum() / volume).astype(array.dtype)
    return HistogramddResult(_wrap(hist), tuple(_wrap(edge) for edge in edges))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in the 1-D `input` (or the sum of its
    `weights`), with at least `minlength` bins."""
    array = _array(input)
    if array.dtype.kind not in "iu":
        raise not_implemented("bincount_cpu", array.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if array.ndim != 1 or (array.size and array.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _wrap(np.bincount(array, minlength=minlength).astype(_INT64))
    weight_array = _array(weights)
    if weight_array.ndim != 1 or weight_array.shape[0] != array.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    result_dtype = weight_array.dtype if weight_array.dtype == np.float32 else np.float64
    counts = np.bincount(array, weights=weight_array.astype(np.float64), minlength=minlength)
    return _wrap(counts.astype(result_dtype))
