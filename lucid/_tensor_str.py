"""Printing: a tensor's repr in PyTorch's format (precision, summarising, line width)."""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.dtypes import FLOAT_KINDS

if TYPE_CHECKING:
    from lucid._tensor import Tensor


# ------------------------------------------------------------------------ repr
class _PrintOptions:
    """The print options set_printoptions changes: digits after the point, the element count
    above which a tensor is summarised, the items kept at each edge of a summarised dimension,
    the line width, and scientific notation (None: chosen per tensor)."""

    precision = 4
    threshold: float = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode: bool | None = None


_options = _PrintOptions()

# The presets of `profile`: (precision, threshold, edgeitems, linewidth), PyTorch's values.
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, float("inf"), 3, 80),
}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:  # fmt: skip
    """Set how tensors print: a `profile` ('default', 'short', 'full') first, then each option
    given. `sci_mode` True or False forces or forbids scientific notation; None (the default)
    lets each tensor choose."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"Invalid profile: {profile}. the profile must be one of {list(_PROFILES)}"
            )
        _options.precision, _options.threshold, _options.edgeitems, _options.linewidth = _PROFILES[
            profile
        ]
    if precision is not None:
        _options.precision = precision
    if threshold is not None:
        _options.threshold = threshold
    if edgeitems is not None:
        _options.edgeitems = edgeitems
    if linewidth is not None:
        _options.linewidth = linewidth
    _options.sci_mode = sci_mode


class _ComplexFormat:
    """Complex elements print as PyTorch prints them: the real parts aligned under one format,
    the imaginary parts under another of their own, signed and followed by `j`."""

    def __init__(self, array: np.ndarray) -> None:
        self.real = _ElementFormat(array.real)
        self.imag = _ElementFormat(array.imag)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value: complex) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


class _ElementFormat:
    """The notation and common width every element of one tensor prints with (PyTorch's rules).

    Floats print with 4 decimals; as `1.` when every finite value is a whole number; in
    scientific notation when the finite non-zero magnitudes span more than 1000x, exceed 1e8,
    or (for non-whole values) go below 1e-4.
    """

    def __init__(self, array: np.ndarray) -> None:
        self.is_float = array.dtype.kind in FLOAT_KINDS
        self.is_whole = True
        self.is_scientific = False
        self.width = 1
        if not self.is_float:
            for value in array.reshape(-1).tolist():
                self.width = builtins.max(self.width, len(str(value)))
            return
        values = array.reshape(-1).astype(np.float64)
        values = values[np.isfinite(values) & (values != 0)]
        if values.size == 0:
            return
        magnitudes = np.abs(values)
        largest, smallest = magnitudes.max(), magnitudes.min()
        self.is_whole = builtins.bool(np.all(values == np.ceil(values)))
        self.is_scientific = largest / smallest > 1000.0 or largest > 1.0e8
        if not self.is_whole and smallest < 1.0e-4:
            self.is_scientific = True
        if _options.sci_mode is not None:
            self.is_scientific = _options.sci_mode
        for value in values.tolist():
            if self.is_scientific:
                length = len(f"{value:.{_options.precision}e}")
            elif self.is_whole:
                length = len(f"{value:.0f}") + 1  # the trailing "."
            else:
                length = len(f"{value:.{_options.precision}f}")
            self.width = builtins.max(self.width, length)

    def format(self, value: Any) -> str:
        if not self.is_float:
            text = str(value)
        elif self.is_scientific:
            text = f"{value:{self.width}.{_options.precision}e}"
        elif self.is_whole:
            text = f"{value:.0f}" + ("." if np.isfinite(value) else "")
        else:
            text = f"{value:.{_options.precision}f}"
        return text.rjust(self.width)


def _edges(array: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows: the edge items of every dimension."""
    if array.ndim == 0:
        return array
    if array.shape[0] > 2 * _options.edgeitems:
        array = np.concatenate((array[: _options.edgeitems], array[-_options.edgeitems :]))
    if array.ndim == 1:
        return array
    return np.stack([_edges(row) for row in array])


def _format_body(array: np.ndarray, indent: int, summarize: bool, style: _ElementFormat) -> str:
    if array.ndim == 0:
        return style.format(array.item())
    is_cut = summarize and array.shape[0] > 2 * _options.edgeitems
    if array.ndim == 1:
        values = array.tolist()
        if is_cut:
            items = [style.format(v) for v in values[: _options.edgeitems]] + [" ..."]
            items += [style.format(v) for v in values[-_options.edgeitems :]]
        else:
            items = [style.format(v) for v in values]
        per_line = builtins.max(1, (_options.linewidth - indent) // (style.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if is_cut:
        rows = [
            _format_body(row, indent + 1, summarize, style) for row in array[: _options.edgeitems]
        ]
        rows.append("...")
        rows += [
            _format_body(row, indent + 1, summarize, style) for row in array[-_options.edgeitems :]
        ]
    else:
        rows = [_format_body(row, indent + 1, summarize, style) for row in array]
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _format_tensor(tensor: Tensor) -> str:
    """PyTorch's repr, character for character, with 'lucid.' where PyTorch prints 'torch.'."""
    array = tensor._data
    prefix = "tensor("
    indent = len(prefix)
    default_float = dtypes.get_default_dtype().numpy_dtype
    suffixes = []
    if array.size == 0:
        # An empty tensor shows no elements to tell its dtype or shape by.
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        if array.dtype != default_float:
            suffixes.append(f"dtype={dtypes.from_numpy_dtype(array.dtype)}")
        body = "[]"
    else:
        default_complex = dtypes.get_default_dtype().to_complex().numpy_dtype
        shown_bare = (default_float, default_complex, np.dtype(np.int64), np.dtype(np.bool_))
        if array.dtype not in shown_bare:
            suffixes.append(f"dtype={dtypes.from_numpy_dtype(array.dtype)}")
        summarize = array.size > _options.threshold
        shown = _edges(array) if summarize else array
        style = _ComplexFormat(shown) if array.dtype.kind == "c" else _ElementFormat(shown)
        body = _format_body(array, indent, summarize, style)
    forward_ad = sys.modules.get("lucid.autograd.forward_ad")
    tangent = None if forward_ad is None else forward_ad.tangent_of(tensor)
    if tangent is not None:
        suffixes.append("tangent=" + _format_tensor(tangent))
    if tensor._grad_fn is not None:
        suffixes.append(f"grad_fn=<{tensor._grad_fn.name()}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")

    text = prefix + body
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > _options.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
