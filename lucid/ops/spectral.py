"""Spectral ops: the discrete Fourier transforms behind lucid.fft, and stft / istft.

As in PyTorch, three transforms carry every gradient: complex to complex (`FftC2C`), real to
complex (`FftR2C`, the whole spectrum or its one-sided half) and one-sided complex to real
(`FftC2R`). Forward runs pocketfft (SciPy's, else NumPy's); each backward is one of the
three again, so higher derivatives need nothing more. The public functions crop or zero-pad
their input (`n`, `s`) and conjugate with differentiable ops around those three, in PyTorch's
order, and stft / istft are written with them and the shape ops (frames are `unfold` windows,
overlap-add is unfold's adjoint); an stft with no gradient to record is one op on arrays.

Normalization is PyTorch's: a transform scales by 1 ("none"), 1/sqrt(n) or 1/n, where
`norm="backward"` leaves the forward transform unscaled and "forward" scales it by 1/n.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import int_list_item_error, invalid_combination, is_int, type_name
from lucid._core.devices import check_device
from lucid._core.dtypes import FLOAT_KINDS, SCALAR_TYPE_NAMES
from lucid._core.function import OWN_COMPLEX_RULE, Function
from lucid._core.grad_mode import is_grad_enabled, no_grad
from lucid._core.tensor import TensorBase, _normalize_dim, _wrap
from lucid.ops._common import autocast_op, check_tensors
from lucid.ops.complex_numbers import conj, conj_physical, real, view_as_real
from lucid.ops.fills import copy_, to
from lucid.ops.joining import cat
from lucid.ops.shape import UnfoldBackward, narrow, roll, unfold

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["stft", "istft"]

# PyTorch's normalization modes: the scale a transform applies
NONE, BY_ROOT_N, BY_N = 0, 1, 2


def _numpy_norm(normalization: int, forward: bool) -> str:
    """NumPy's `norm` for a transform of sign `forward` that scales by `normalization`."""
    if normalization == BY_ROOT_N:
        return "ortho"
    if forward:
        return "backward" if normalization == NONE else "forward"
    return "forward" if normalization == NONE else "backward"


# ------------------------------------------------------------------------------ the library
_POCKETFFT: Any = None


def _pocketfft() -> Any:
    """scipy.fft where SciPy is installed (the `[fft]` extra), else numpy.fft, loaded on the
    first transform. Both are pocketfft; SciPy's build runs a batch's transforms several at a
    time in SIMD lanes, 2-4.5x faster on this machine (docs/design.md)."""
    global _POCKETFFT
    if _POCKETFFT is None:
        try:
            import scipy.fft as module
        except ImportError:
            module = np.fft
        _POCKETFFT = module
    return _POCKETFFT


def _transform(name: str, array: np.ndarray, axes: tuple[int, ...], **arguments: Any) -> np.ndarray:
    """numpy.fft's n-dimensional `name` over `axes`; over one axis, its one-dimensional form,
    the same computation with less argument handling (10 us less in SciPy)."""
    module = _pocketfft()
    if len(axes) == 1:
        sizes = arguments.pop("s", None)
        if sizes is not None:
            arguments["n"] = sizes[0]
        result = getattr(module, name[:-1])(array, axis=axes[0], **arguments)
    else:
        result = getattr(module, name)(array, axes=axes, **arguments)
    if module is not np.fft:
        _raise_flag_as_numpy_would(result)
    return result


def _raise_flag_as_numpy_would(result: np.ndarray) -> None:
    """NumPy reads the CPU's floating-point flags after each of its own kernels, and the
    sentinel and anomaly mode hear of a non-finite value that way; SciPy's kernels run outside
    NumPy, so a non-finite result raises, through NumPy, the flag that made it."""
    values = result
    if result.dtype.kind == "c" and result.flags.c_contiguous:
        values = result.view(result.real.dtype)
    if np.isfinite(values).all():
        return
    if np.isinf(values).any():
        np.multiply(np.finfo(np.float64).max, 2.0)  # the overflow flag
    if np.isnan(values).any():
        np.subtract(np.float64(np.inf), np.inf)  # the invalid flag


# ----------------------------------------------------------------------- the three transforms
class FftC2C(Function):
    """The DFT of a complex tensor over `dims`: exp(-2 pi i jk/n) when `forward`, else +."""

    _backward_name = "FftC2CBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "fft"

    @staticmethod
    def forward(ctx, x, dims, normalization, forward):
        ctx.transform = (dims, normalization, forward)
        if not dims:
            return _wrap(x._data.copy())
        name = "fftn" if forward else "ifftn"
        return _wrap(_transform(name, x._data, axes=dims, norm=_numpy_norm(normalization, forward)))

    @staticmethod
    def backward(ctx, grad_output):
        # a DFT's adjoint is the DFT of the opposite sign with the same scale
        dims, normalization, forward = ctx.transform
        return FftC2C.apply(grad_output, dims, normalization, not forward), None, None, None


def fft_c2c(input: Tensor, dims: tuple[int, ...], normalization: int, forward: bool) -> Tensor:
    return FftC2C.apply(input, dims, normalization, forward)


class FftR2C(Function):
    """The forward DFT of a real tensor over `dims`; `onesided` keeps entries 0..n//2 of the
    last dim, the half that determines the rest (a real signal's spectrum is Hermitian)."""

    _backward_name = "FftR2CBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "fft"

    @staticmethod
    def forward(ctx, x, dims, normalization, onesided):
        dtypes.note_complex()
        array = x._data
        ctx.transform = (dims, normalization, onesided, array.shape[dims[-1]])
        name = "rfftn" if onesided else "fftn"
        return _wrap(_transform(name, array, axes=dims, norm=_numpy_norm(normalization, True)))

    @staticmethod
    def backward(ctx, grad_output):
        # The adjoint of "transform, then keep the lower half" is the real part of the
        # inverse-signed transform of the gradient padded with zeros. For the one-sided
        # transform that is the c2r transform (same scale) of the gradient with entries
        # 1 .. n - (n//2 + 1) halved: c2r counts each of them twice (itself and its mirror),
        # and takes the real part of the others, at half the cost of a complex transform.
        dims, normalization, onesided, last_dim_size = ctx.transform
        if onesided:
            last = dims[-1]
            half = grad_output.shape[last]
            halved = last_dim_size - half
            grad = grad_output
            if halved > 0:
                shape = [1] * grad.ndim
                shape[last] = half
                weights = np.ones(half, grad_output._data.real.dtype)
                weights[1 : 1 + halved] = 0.5
                grad = grad * _wrap(weights.reshape(shape))
            return FftC2R.apply(grad, dims, normalization, last_dim_size), None, None, None
        return real(FftC2C.apply(grad_output, dims, normalization, False)), None, None, None


def fft_r2c(input: Tensor, dims: tuple[int, ...], normalization: int, onesided: bool) -> Tensor:
    return FftR2C.apply(input, dims, normalization, onesided)


class FftC2R(Function):
    """The inverse DFT (sign +) over `dims` of a one-sided spectrum, as the real signal of
    `last_dim_size` entries whose spectrum it is: the imaginary parts that a Hermitian
    spectrum cannot have (entry 0, and entry n/2 for even n) are ignored."""

    _backward_name = "FftC2RBackward0"
    _complex_rule = OWN_COMPLEX_RULE
    _op_name = "fft"

    @staticmethod
    def forward(ctx, x, dims, normalization, last_dim_size):
        array = x._data
        ctx.transform = (dims, normalization)
        sizes = [array.shape[d] for d in dims[:-1]] + [last_dim_size]
        norm = _numpy_norm(normalization, False)
        return _wrap(_transform("irfftn", array, s=sizes, axes=dims, norm=norm))

    @staticmethod
    def backward(ctx, grad_output):
        # each entry strictly between 0 and its mirror stands for itself and its conjugate in
        # the whole spectrum, so its gradient counts twice: entries 1 .. n - (n//2 + 1)
        dims, normalization = ctx.transform
        grad = FftR2C.apply(grad_output, dims, normalization, True)
        last = dims[-1]
        half = grad.shape[last]
        doubled = grad_output.shape[last] - half
        if doubled > 0:
            shape = [1] * grad.ndim
            shape[last] = half
            weights = np.ones(half, grad_output._data.dtype)
            weights[1 : 1 + doubled] = 2
            grad = grad * _wrap(weights.reshape(shape))
        return grad, None, None, None


def fft_c2r(input: Tensor, dims: tuple[int, ...], normalization: int, last_dim_size: int) -> Tensor:
    return FftC2R.apply(input, dims, normalization, last_dim_size)


# -------------------------------------------------------------------------- argument handling
def _check_input(label: str, input: Any) -> None:
    if not isinstance(input, TensorBase):
        raise TypeError(
            f"{label}(): argument 'input' (position 1) must be Tensor, not {type_name(input)}"
        )


def _optional_int(label: str, name: str, value: Any) -> int | None:
    if value is None:
        return None
    if not is_int(value):
        raise TypeError(f"{label}(): argument '{name}' must be int, not {type_name(value)}")
    return int(value)


def _int_argument(label: str, name: str, value: Any) -> int:
    if not is_int(value):
        raise TypeError(f"{label}(): argument '{name}' must be int, not {type_name(value)}")
    return int(value)


def _optional_ints(label: str, name: str, value: Any) -> tuple[int, ...] | None:
    """An int or a sequence of ints as a tuple (None stays None), or PyTorch's TypeError."""
    if value is None:
        return None
    if is_int(value):
        return (int(value),)
    if not isinstance(value, tuple | list) or (value and not is_int(value[0])):
        raise TypeError(
            f"{label}(): argument '{name}' must be tuple of ints, not {type_name(value)}"
        )
    for index, item in enumerate(value):
        if index and not is_int(item):
            raise int_list_item_error(label, name, None, index, item)
    return tuple(int(item) for item in value)


def _check_norm(label: str, norm: Any) -> None:
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"{label}(): argument 'norm' must be str, not {type_name(norm)}")


def _norm_from_string(norm: str | None, forward: bool) -> int:
    """The scale of a transform of sign `forward` under NumPy's `norm` names."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap_dim(dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _normalize_dim(dim, ndim)


def _dtype_word(tensor: Tensor) -> str:
    return SCALAR_TYPE_NAMES[tensor._data.dtype.name]


def _promote(input: Tensor, require_complex: bool) -> Tensor:
    """Integers and bool as the default float dtype; complex when `require_complex`. Half
    precision is refused, as PyTorch's CPU FFTs refuse it."""
    kind = input._data.dtype.kind
    if kind == "c":
        return input
    dtype = input.dtype if kind in FLOAT_KINDS else dtypes.get_default_dtype()
    if dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"Unsupported dtype {SCALAR_TYPE_NAMES[dtype.name]}")
    if require_complex:
        dtype = dtype.to_complex()
    return input if dtype is input.dtype else to(input, dtype)


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """x cropped (from index 0) or zero-padded (at the end) to `sizes` along `dims`."""
    for dim, size in zip(dims, sizes):
        current = x.shape[dim]
        if size < current:
            x = narrow(x, dim, 0, size)
        elif size > current:
            shape = list(x.shape)
            shape[dim] = size - current
            x = cat([x, _wrap(np.zeros(shape, x._data.dtype))], dim)
    return x


def _check_out(name: str, out: Any, is_complex: bool) -> None:
    if out is None:
        return
    check_tensors(out)
    if is_complex and out._data.dtype.kind != "c":
        raise RuntimeError(f"{name} expects a complex output tensor, but got {_dtype_word(out)}")
    if not is_complex and out._data.dtype.kind not in FLOAT_KINDS:
        raise RuntimeError(
            f"{name} expects a floating point output tensor, but got {_dtype_word(out)}"
        )


def _write_out(result: Tensor, out: Tensor) -> Tensor:
    """`result` written into `out` (resized to it, cast to out's dtype), as PyTorch's out=."""
    with no_grad():
        shape = tuple(result.shape)
        if tuple(out.shape) != shape:
            if out.numel():
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape "
                    f"{list(out.shape)}, which does not match the required output shape "
                    f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                    "release outputs will not be resized unless they have zero elements. You "
                    "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                    "elements with t.resize_(0).",
                    UserWarning,
                    stacklevel=3,
                )
            out.resize_(shape)
        copy_(out, result)
    return out


def _finish(result_of: Any, out: Tensor | None, kernel: str | None, *tensors: Tensor) -> Tensor:
    """Run `result_of()`, into `out` when given. PyTorch's out= kernels refuse autograd;
    `kernel` names the one that refuses (None where PyTorch writes through a conjugation,
    which lets the values through)."""
    if out is None:
        return result_of()
    if kernel is not None and is_grad_enabled():
        if any(tensor.requires_grad for tensor in (*tensors, out)):
            raise RuntimeError(
                f"{kernel}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
    with no_grad():
        result = result_of()
    return _write_out(result, out)


# --------------------------------------------------------------------- one-dimensional forms
def _c2c_1d(
    name: str, out: Any, input: Tensor, n: int | None, dim: int, norm: Any, forward: bool
) -> Tensor:
    _check_out(name, out, True)
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim] if n is None else n
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    normalization = _norm_from_string(norm, forward)

    def result() -> Tensor:
        x = input if n is None else _resize(input, (dim,), (n,))
        return fft_c2c(x, (dim,), normalization, forward)

    return _finish(result, out, "_fft_c2c", input)


def _r2c_1d(
    name: str,
    out: Any,
    input: Tensor,
    n: int | None,
    dim: int,
    norm: Any,
    forward: bool,
    onesided: bool,
) -> Tensor:
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype_word(input)}")
    _check_out(name, out, True)
    x = _promote(input, False)
    dim = _wrap_dim(dim, x.ndim)
    size = x.shape[dim] if n is None else n
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    normalization = _norm_from_string(norm, forward)

    def result() -> Tensor:
        resized = x if n is None else _resize(x, (dim,), (n,))
        spectrum = fft_r2c(resized, (dim,), normalization, onesided)
        # the inverse transform of a real signal is the conjugate of its forward one
        return spectrum if forward else conj(spectrum)

    return _finish(result, out, "_fft_r2c" if forward else None, input)


def _c2r_1d(
    name: str, out: Any, input: Tensor, n: int | None, dim: int, norm: Any, forward: bool
) -> Tensor:
    _check_out(name, out, False)
    x = _promote(input, True)
    dim = _wrap_dim(dim, x.ndim)
    size = 2 * (x.shape[dim] - 1) if n is None else n
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    normalization = _norm_from_string(norm, forward)

    def result() -> Tensor:
        half = x if n is None else _resize(x, (dim,), (size // 2 + 1,))
        if forward:
            # hfft is irfft of the conjugate, with the forward transform's scale
            half = conj(half)
        return fft_c2r(half, (dim,), normalization, size)

    return _finish(result, out, "_fft_c2r", input)


def _one_dimensional(label: str, input: Any, n: Any, dim: Any, norm: Any) -> tuple:
    _check_input(label, input)
    n = _optional_int(label, "n", n)
    dim = _int_argument(label, "dim", dim)
    _check_norm(label, norm)
    return n, dim


@autocast_op
def fft(
    input: Tensor,
    n: int | None = None,
    dim: int = -1,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The one-dimensional discrete Fourier transform."""
    n, dim = _one_dimensional("fft_fft", input, n, dim, norm)
    if input._data.dtype.kind == "c":
        return _c2c_1d("fft", out, input, n, dim, norm, True)
    return _r2c_1d("fft", out, input, n, dim, norm, True, False)


@autocast_op
def ifft(
    input: Tensor,
    n: int | None = None,
    dim: int = -1,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform."""
    n, dim = _one_dimensional("fft_ifft", input, n, dim, norm)
    if input._data.dtype.kind == "c":
        return _c2c_1d("ifft", out, input, n, dim, norm, False)
    return _r2c_1d("ifft", out, input, n, dim, norm, False, False)


@autocast_op
def rfft(
    input: Tensor,
    n: int | None = None,
    dim: int = -1,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The one-sided DFT of a real signal: entries 0 .. n//2."""
    n, dim = _one_dimensional("fft_rfft", input, n, dim, norm)
    return _r2c_1d("rfft", out, input, n, dim, norm, True, True)


@autocast_op
def irfft(
    input: Tensor,
    n: int | None = None,
    dim: int = -1,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The inverse of rfft: the real signal of length n (default 2 * (size - 1))."""
    n, dim = _one_dimensional("fft_irfft", input, n, dim, norm)
    return _c2r_1d("irfft", out, input, n, dim, norm, False)


@autocast_op
def hfft(
    input: Tensor,
    n: int | None = None,
    dim: int = -1,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The DFT of a Hermitian signal given by its first half: a real spectrum of length n."""
    n, dim = _one_dimensional("fft_hfft", input, n, dim, norm)
    return _c2r_1d("hfft", out, input, n, dim, norm, True)


@autocast_op
def ihfft(
    input: Tensor,
    n: int | None = None,
    dim: int = -1,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The inverse of hfft: the one-sided inverse DFT of a real signal."""
    n, dim = _one_dimensional("fft_ihfft", input, n, dim, norm)
    return _r2c_1d("ihfft", out, input, n, dim, norm, False, True)


# ------------------------------------------------------------------- n-dimensional forms
def _shape_and_dims(
    input: Tensor, s: tuple[int, ...] | None, dim: tuple[int, ...] | None
) -> tuple[list[int], list[int]]:
    """PyTorch's reading of (s, dim): the dims transformed and their signal sizes."""
    ndim = input.ndim
    dims: list[int] = []
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [input.shape[d] if n == -1 else n for n, d in zip(s, dims)]
    elif dim is None:
        dims = list(range(ndim))
        shape = list(input.shape)
    else:
        shape = [input.shape[d] for d in dims]
    for size in shape:
        if size <= 0:
            raise RuntimeError(f"Invalid number of data points ({size}) specified")
    return shape, dims


def _c2r_shape_and_dims(
    name: str, input: Tensor, s: tuple[int, ...] | None, dim: tuple[int, ...] | None
) -> tuple[list[int], list[int], int]:
    """(input sizes, dims, last_dim_size) of a transform to a real signal."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or s[-1] == -1:
        last_dim_size = 2 * (input.shape[dims[-1]] - 1)
    else:
        last_dim_size = shape[-1]
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")
    shape[-1] = last_dim_size // 2 + 1
    return shape, dims, last_dim_size


def _n_dimensional(label: str, input: Any, s: Any, dim: Any, norm: Any) -> tuple:
    _check_input(label, input)
    s = _optional_ints(label, "s", s)
    dim = _optional_ints(label, "dim", dim)
    _check_norm(label, norm)
    return s, dim


def _c2c_nd(out: Any, input: Tensor, s: Any, dim: Any, norm: Any, forward: bool) -> Tensor:
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, True)
    _check_out("fftn", out, True)
    normalization = _norm_from_string(norm, forward)

    def result() -> Tensor:
        return fft_c2c(_resize(x, dims, shape), tuple(dims), normalization, forward)

    return _finish(result, out, "_fft_c2c", input)


def _rfftn(out: Any, input: Tensor, s: Any, dim: Any, norm: Any) -> Tensor:
    if input._data.dtype.kind == "c":
        raise RuntimeError(
            f"rfftn expects a real-valued input tensor, but got {_dtype_word(input)}"
        )
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _promote(input, False)
    _check_out("rfftn", out, True)
    normalization = _norm_from_string(norm, True)

    def result() -> Tensor:
        return fft_r2c(_resize(x, dims, shape), tuple(dims), normalization, True)

    return _finish(result, out, "_fft_r2c", input)


def _irfftn(out: Any, input: Tensor, s: Any, dim: Any, norm: Any) -> Tensor:
    shape, dims, last_dim_size = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _promote(input, True)
    _check_out("irfftn", out, False)
    normalization = _norm_from_string(norm, False)

    def result() -> Tensor:
        return fft_c2r(_resize(x, dims, shape), tuple(dims), normalization, last_dim_size)

    return _finish(result, out, "_fft_c2r", input)


def _hfftn(out: Any, input: Tensor, s: Any, dim: Any, norm: Any) -> Tensor:
    shape, dims, last_dim_size = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _promote(input, True)
    _check_out("hfftn", out, False)
    normalization = _norm_from_string(norm, True)

    def result() -> Tensor:
        # the forward transform over all dims but the last, then hfft along it
        half = _resize(x, dims, shape)
        if len(dims) > 1:
            half = fft_c2c(half, tuple(dims[:-1]), normalization, True)
        return fft_c2r(conj(half), (dims[-1],), normalization, last_dim_size)

    return _finish(result, out, "_fft_c2r", input)


def _ihfftn(out: Any, input: Tensor, s: Any, dim: Any, norm: Any) -> Tensor:
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_dtype_word(input)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _promote(input, False)
    _check_out("ihfftn", out, True)
    normalization = _norm_from_string(norm, False)

    def result() -> Tensor:
        # ihfft along the last dim, then the inverse transform over the others
        spectrum = fft_r2c(_resize(x, dims, shape), (dims[-1],), normalization, True)
        if len(dims) == 1:
            return conj(spectrum)
        return fft_c2c(conj_physical(spectrum), tuple(dims[:-1]), normalization, False)

    return _finish(result, out, None if len(dims) == 1 else "_fft_c2c", input)


@autocast_op
def fft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The two-dimensional DFT."""
    s, dim = _n_dimensional("fft_fft2", input, s, dim, norm)
    return _c2c_nd(out, input, s, dim, norm, True)


@autocast_op
def ifft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The two-dimensional inverse DFT."""
    s, dim = _n_dimensional("fft_ifft2", input, s, dim, norm)
    return _c2c_nd(out, input, s, dim, norm, False)


@autocast_op
def fftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The N-dimensional DFT (over every dim by default)."""
    s, dim = _n_dimensional("fft_fftn", input, s, dim, norm)
    return _c2c_nd(out, input, s, dim, norm, True)


@autocast_op
def ifftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The N-dimensional inverse DFT."""
    s, dim = _n_dimensional("fft_ifftn", input, s, dim, norm)
    return _c2c_nd(out, input, s, dim, norm, False)


@autocast_op
def rfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The two-dimensional DFT of a real signal, one-sided in the last dim."""
    s, dim = _n_dimensional("fft_rfft2", input, s, dim, norm)
    return _rfftn(out, input, s, dim, norm)


@autocast_op
def irfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The inverse of rfft2."""
    s, dim = _n_dimensional("fft_irfft2", input, s, dim, norm)
    return _irfftn(out, input, s, dim, norm)


@autocast_op
def rfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The N-dimensional DFT of a real signal, one-sided in the last dim."""
    s, dim = _n_dimensional("fft_rfftn", input, s, dim, norm)
    return _rfftn(out, input, s, dim, norm)


@autocast_op
def irfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The inverse of rfftn."""
    s, dim = _n_dimensional("fft_irfftn", input, s, dim, norm)
    return _irfftn(out, input, s, dim, norm)


def hfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The two-dimensional DFT of a Hermitian signal given by its first half."""
    s, dim = _n_dimensional("fft_hfft2", input, s, dim, norm)
    return _hfftn(out, input, s, dim, norm)


def ihfft2(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The inverse of hfft2."""
    s, dim = _n_dimensional("fft_ihfft2", input, s, dim, norm)
    return _ihfftn(out, input, s, dim, norm)


def hfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The N-dimensional DFT of a Hermitian signal given by its first half."""
    s, dim = _n_dimensional("fft_hfftn", input, s, dim, norm)
    return _hfftn(out, input, s, dim, norm)


def ihfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """The inverse of hfftn."""
    s, dim = _n_dimensional("fft_ihfftn", input, s, dim, norm)
    return _ihfftn(out, input, s, dim, norm)


# ------------------------------------------------------------------ shifts and frequencies
def _shift(label: str, input: Any, dim: Any, rounds_up: bool) -> Tensor:
    _check_input(label, input)
    dims = _optional_ints(label, "dim", dim)
    if dims is None:
        dims = tuple(range(input.ndim))
    shifts = []
    for d in dims:
        size = input.shape[_wrap_dim(d, input.ndim)]
        shifts.append((size + 1) // 2 if rounds_up else size // 2)
    return roll(input, shifts, dims)


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Move the zero frequency to the centre of `dim` (every dim by default)."""
    return _shift("fft_fftshift", input, dim, False)


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of fftshift."""
    return _shift("fft_ifftshift", input, dim, True)


def _frequencies(
    label: str,
    n: Any,
    d: Any,
    out: Any,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    onesided: bool,
) -> Tensor:
    if not is_int(n):
        raise TypeError(f"{label}(): argument 'n' (position 1) must be int, not {type_name(n)}")
    n = int(n)
    if isinstance(d, TensorBase) and d.ndim == 0:
        d = d.item()
    if isinstance(d, bool) or not isinstance(d, int | float | np.integer | np.floating):
        raise TypeError(f"{label}(): argument 'd' must be float, not {type_name(d)}")
    check_device(device)
    if out is not None:
        check_tensors(out)
    target = dtypes.as_dtype(dtype) if dtype is not None else None
    if out is not None and target is not None and target is not out.dtype:
        raise RuntimeError(
            f"dtype {SCALAR_TYPE_NAMES[target.name]} does not match dtype of out parameter "
            f"({_dtype_word(out)})"
        )
    if target is None:
        target = out.dtype if out is not None else dtypes.get_default_dtype()
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if target.is_complex:
        raise NotImplementedError(
            f"\"arange_cpu\" not implemented for '{SCALAR_TYPE_NAMES[target.name]}'"
        )
    if not target.is_floating_point:
        raise RuntimeError(f"{label[4:]} requires a floating point or complex dtype")
    # PyTorch counts in the target dtype and scales in its arithmetic type (float32 for the
    # half-precision dtypes), by the scalar 1 / (n d) rounded to it
    compute = np.float64 if target is dtypes.float64 else np.float32
    values = np.arange(n // 2 + 1 if onesided else n, dtype=compute)
    if not onesided:
        values[n - n // 2 :] -= n
    with np.errstate(divide="ignore", invalid="ignore"):
        values *= compute(np.float64(1.0) / np.float64(n * float(d)))
    result = _wrap(values.astype(target.numpy_dtype))
    if out is not None:
        return _write_out(result, out)
    return result.requires_grad_(requires_grad)


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an n-point DFT with sample spacing d: [0, 1, ..., -1] / (n d)."""
    return _frequencies("fft_fftfreq", n, d, out, dtype, device, requires_grad, False)


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of rfft's n-point spectrum: [0, 1, ..., n // 2] / (n d)."""
    return _frequencies("fft_rfftfreq", n, d, out, dtype, device, requires_grad, True)


# ----------------------------------------------------------------------------- stft, istft
def _type_string(tensor: Tensor) -> str:
    """How PyTorch's stft/istft messages print a tensor's type: its legacy type name, or the
    CPU type for complex tensors (which have no legacy name)."""
    if tensor._data.dtype.kind == "c":
        return f"CPU{_dtype_word(tensor)}Type"
    return tensor.type()


def _optional_word(value: Any) -> str:
    if value is None:
        return "None"
    return str(int(value))


def _window_string(window: Tensor | None) -> str:
    if window is None:
        return "None"
    return f"{_type_string(window)}{{{list(window.shape)}}}"


_STFT_OVERLOADS = (
    "(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = "
    'None, bool center = True, str pad_mode = "reflect", bool normalized = False, bool onesided '
    "= None, bool return_complex = None, bool align_to_window = None)",
    "(Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = "
    "None, bool normalized = False, bool onesided = None, bool return_complex = None, bool "
    "align_to_window = None)",
)


# stft's arguments as its overloads type them: (type, whether None is allowed)
_STFT_ARGUMENT_KINDS = (
    (TensorBase, False), (int, False), (int, True), (int, True), (TensorBase, True),
    (bool, False), (bool, True), (bool, True), (bool, True),
)  # fmt: skip


def _check_stft_types(args: tuple) -> None:
    """PyTorch's TypeError when stft's arguments (as it passes them on, without center and
    pad_mode) fit neither of its overloads."""
    fits = [
        optional if value is None else is_int(value) if kind is int else isinstance(value, kind)
        for value, (kind, optional) in zip(args, _STFT_ARGUMENT_KINDS)
    ]
    if all(fits):
        return
    words = []
    for index, (value, fit) in enumerate(zip(args, fits)):
        word = type_name(value) if not isinstance(value, TensorBase) else "Tensor"
        if isinstance(value, list | tuple):
            word = f"list of [{', '.join(type_name(item) for item in value)}]"
        # PyTorch's parser marks every argument past n_fft in this line, fitting or not
        words.append(word if fit and index < 2 else f"!{word}!")
    second = (
        f"{_STFT_OVERLOADS[1]}\n      didn't match because some of the arguments have invalid "
        f"types: ({', '.join(words)})"
    )
    raise invalid_combination("stft", args, (_STFT_OVERLOADS[0], second))


def _centred_window(window: Tensor | None, win_length: int, n_fft: int, dtype: np.dtype) -> Tensor:
    """The window (ones of `dtype` if None) zero-padded on both sides to n_fft entries."""
    if window is None:
        window = _wrap(np.ones(win_length, dtype))
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    dtype = window._data.dtype
    right = n_fft - win_length - left
    return cat([_wrap(np.zeros(left, dtype)), window, _wrap(np.zeros(right, dtype))])


def _runs_fused(
    input: Tensor,
    n_fft: int,
    window: Tensor | None,
    center: bool,
    pad_mode: str,
    onesided: bool | None,
    align_to_window: bool | None,
) -> bool:
    """Whether stft can run as one NumPy computation (`StftWithoutGrad`): a real signal and
    window of one dtype, the one-sided spectrum, and no gradient to record. Anything else,
    including every argument that is an error, takes the path of differentiable ops."""
    if not is_int(n_fft):
        return False
    dtype = input._data.dtype
    if dtype not in _FUSED_DTYPES or input.ndim not in (1, 2) or 0 in input.shape:
        return False
    if window is not None and not (
        isinstance(window, TensorBase) and window._data.dtype == dtype and window.ndim == 1
    ):
        return False
    if onesided is False or align_to_window:
        return False
    if center and (pad_mode not in _FUSED_PAD_MODES or input.shape[-1] <= n_fft // 2):
        return False
    return not (
        is_grad_enabled() and (input.requires_grad or (window is not None and window.requires_grad))
    )


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_FUSED_PAD_MODES = ("reflect", "constant", "replicate", "circular")


def _padded_signal(array: np.ndarray, half: int, pad_mode: str) -> np.ndarray:
    """Rows of a signal padded by `half` at each end in `pad_mode`, the values pad gives."""
    if pad_mode in ("replicate", "circular"):
        from lucid.ops.sampling import _pad_indices

        return array.take(_pad_indices(pad_mode, array.shape[-1], half, half), axis=-1)
    length = array.shape[-1]
    padded = np.empty((array.shape[0], length + 2 * half), array.dtype)
    padded[:, half : half + length] = array
    if pad_mode == "constant":
        padded[:, :half] = 0
        padded[:, half + length :] = 0
    else:  # reflect about the end samples, which are not repeated
        padded[:, :half] = array[:, half:0:-1]
        padded[:, half + length :] = array[:, -2 : -half - 2 : -1]
    return padded


class StftWithoutGrad(Function):
    """stft of a real signal when no gradient is recorded: padding, framing, windowing and the
    one-sided DFT as NumPy calls on arrays, the same calls the differentiable path makes, so
    the two give equal bits (test) at a third of the cost of six ops."""

    _op_name = "stft"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x, window, n_fft, hop, win_length, center, pad_mode, normalization):
        dtypes.note_complex()
        array = x._data if x.ndim == 2 else x._data[None]
        if center:
            array = _padded_signal(array, n_fft // 2, pad_mode)
        count = 1 + (array.shape[-1] - n_fft) // hop
        frames = np.lib.stride_tricks.as_strided(
            array,
            (array.shape[0], count, n_fft),
            (array.strides[0], hop * array.strides[1], array.strides[1]),
            writeable=False,
        )
        if win_length == n_fft and window is not None:
            frames = frames * window._data
        elif win_length < n_fft:
            centred = np.zeros(n_fft, array.dtype)
            left = (n_fft - win_length) // 2
            centred[left : left + win_length] = 1 if window is None else window._data
            frames = frames * centred
        norm = _numpy_norm(normalization, True)
        spectrum = _transform("rfftn", frames, axes=(2,), norm=norm)
        spectrum = spectrum.transpose(0, 2, 1)
        return _wrap(spectrum if x.ndim == 2 else spectrum[0])


def _stft_problem(
    input: Tensor, n_fft: int, hop: int, win: int, window: Tensor | None, length: int
) -> str | None:
    """What PyTorch's stft says is wrong with its (padded) input and sizes, or None."""
    if input._data.dtype.kind not in "fVc":
        return "expected a tensor of floating point or complex values"
    if input.ndim not in (1, 2):
        return "expected a 1D or 2D tensor"
    if n_fft <= 0 or n_fft > length:
        return f"expected 0 < n_fft < {length}, but got n_fft={win}"
    if hop <= 0:
        return f"expected hop_length > 0, but got hop_length={hop}"
    if win <= 0 or win > n_fft:
        return f"expected 0 < win_length <= n_fft, but got win_length={win}"
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        return (
            f"expected a 1D window tensor of size equal to win_length={win}, but got window with "
            f"size {list(window.shape)}"
        )
    return None


@autocast_op
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform: the DFT of each window of the signal, (B?, N, T).

    Example::

        x = lucid.randn(1000)
        spectrum = lucid.stft(x, 64, window=lucid.hann_window(64), return_complex=True)
        lucid.istft(spectrum, 64, window=lucid.hann_window(64), length=1000)  # ~= x
    """
    if not isinstance(input, TensorBase):
        # PyTorch's stft is Python that asks its input for .dim() first
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
    check_tensors(input)
    arguments = (input, n_fft, hop_length, win_length, window, normalized, onesided)
    _check_stft_types(arguments + (return_complex, align_to_window))
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    fused = _runs_fused(input, n_fft, window, center, pad_mode, onesided, align_to_window)
    if center and not fused:
        from lucid.ops.sampling import pad  # the padding family, loaded on first use

        signal_dim = input.ndim
        extended_shape = [1] * (3 - signal_dim) + list(input.shape)
        padded = pad(input.view(extended_shape), [n_fft // 2, n_fft // 2], pad_mode)
        input = padded.view(padded.shape[-signal_dim:] if signal_dim else ())
    padded_shape = list(input.shape)
    if center and fused:  # the fused op pads inside
        padded_shape[-1] += 2 * (n_fft // 2)
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    is_complex = input._data.dtype.kind == "c" or (
        window is not None and window._data.dtype.kind == "c"
    )
    gives_complex = is_complex if return_complex is None else return_complex
    if not gives_complex:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise an "
            "error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.",
            UserWarning,
            stacklevel=2,
        )
    problem = _stft_problem(input, n_fft, hop, win, window, padded_shape[-1])
    if problem is not None:
        raise RuntimeError(
            f"stft({_type_string(input)}{padded_shape}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_string(window)}, normalized={int(normalized)}, "
            f"onesided={_optional_word(onesided)}, return_complex="
            f"{_optional_word(return_complex)}, align_to_window={_optional_word(align_to_window)})"
            f" : {problem}"
        )
    if fused:
        normalization = BY_ROOT_N if normalized else NONE
        spectrum = StftWithoutGrad.apply(
            input, window, n_fft, hop, win, center, pad_mode, normalization
        )
        return spectrum if gives_complex else view_as_real(spectrum)
    signal = input.unsqueeze(0) if input.ndim == 1 else input
    if align_to_window and win < n_fft:
        # each frame is the win_length samples from its start, windowed, then centred in n_fft
        frames = unfold(signal, -1, win, hop)
        if window is not None:
            frames = frames * window
        left = (n_fft - win) // 2
        leading = list(frames.shape[:2])
        dtype = frames._data.dtype
        before = _wrap(np.zeros(leading + [left], dtype))
        after = _wrap(np.zeros(leading + [n_fft - win - left], dtype))
        frames = cat([before, frames, after], -1)
    else:
        frames = unfold(signal, -1, n_fft, hop)
        if window is not None or win < n_fft:
            frames = frames * _centred_window(window, win, n_fft, signal._data.dtype)
    if frames.dtype in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {_dtype_word(frames)}")
    complex_frames = frames._data.dtype.kind == "c"
    is_onesided = not complex_frames if onesided is None else onesided
    normalization = BY_ROOT_N if normalized else NONE
    if complex_frames:
        if is_onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spectrum = fft_c2c(frames, (2,), normalization, True)
    else:
        spectrum = fft_r2c(frames, (2,), normalization, is_onesided)
    spectrum = spectrum.transpose(1, 2)
    if input.ndim == 1:
        spectrum = spectrum.squeeze(0)
    return spectrum if gives_complex else view_as_real(spectrum)


@autocast_op
def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse short-time Fourier transform: overlap-add of the frames' inverse DFTs,
    divided by the summed squared window (least squares, Griffin and Lim)."""
    check_tensors(input)
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if input._data.dtype.kind != "c":
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    parts_dim = input.ndim + 1  # PyTorch reads the sizes off view_as_real(input)
    for position in (-2, -3):
        if parts_dim < -position:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-parts_dim}, "
                f"{parts_dim - 1}], but got {position})"
            )
    n_frames = input.shape[-1]
    fft_size = input.shape[-2]
    expected_length = n_fft + hop * (n_frames - 1)
    is_onesided = fft_size != n_fft if onesided is None else onesided
    described = (
        f"istft({_type_string(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_string(window)}, center={int(center)}, "
        f"normalized={int(normalized)}, onesided={_optional_word(onesided)}, "
        f"length={'None' if length is None else length}, "
        f"return_complex={int(return_complex)}) "
    )
    if input.numel() == 0:
        raise RuntimeError(described + ": input tensor cannot be empty.")
    if parts_dim not in (3, 4):
        raise RuntimeError(
            described + f": expected a tensor with 3 or 4 dimensions, but got {parts_dim}"
        )
    if is_onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(
            described + ": expected the frequency dimension (3rd to the last) of the input "
            f"tensor to match n_fft / 2 + 1 when onesided=True, but got {fft_size}"
        )
    if not is_onesided and n_fft != fft_size:
        raise RuntimeError(
            described + ": expected the frequency dimension (3rd to the last) of the input "
            f"tensor to match n_fft when onesided=False, but got {fft_size}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(described + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(described + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(
            described + ": Invalid window shape. window has to be 1D and length of `win_length`"
        )
    window_full = _centred_window(window, win, n_fft, input._data.real.dtype)
    spectra = input.unsqueeze(0) if input.ndim == 2 else input
    spectra = spectra.transpose(1, 2)  # (channel, n_frames, fft_size)
    normalization = BY_ROOT_N if normalized else BY_N
    if return_complex:
        if is_onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft_c2c(spectra, (2,), normalization, False)
    else:
        if window is not None and window._data.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not is_onesided:
            spectra = narrow(spectra, -1, 0, n_fft // 2 + 1)
        frames = fft_c2r(spectra, (2,), normalization, n_fft)
    frames = frames * window_full.view(1, 1, n_fft)
    channels = frames.shape[0]
    signal = UnfoldBackward.apply(frames, (channels, expected_length), 1, n_fft, hop)
    squared = (window_full * window_full).expand(1, n_frames, n_fft)
    envelope = UnfoldBackward.apply(squared, (1, expected_length), 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_length
    signal = signal[:, start:end]
    envelope = envelope[:, start:end]
    if np.abs(envelope._data).min(initial=np.inf) < 1e-11:
        raise RuntimeError(described + "window overlap add min: 1\n[ CPUBoolType{} ]")
    signal = signal / envelope
    if input.ndim == 2:
        signal = signal.squeeze(0)
    if end > expected_length:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
        shape = list(signal.shape)
        shape[-1] = end - expected_length
        signal = cat([signal, _wrap(np.zeros(shape, signal._data.dtype))], -1)
    return signal
