"""Complex numbers: the parts of a complex tensor and the tensors made of parts.

lucid's conjugate is eager: `conj()` of a complex tensor is a new tensor holding the conjugated
values (PyTorch's is a lazy view with its conjugate bit set), so `is_conj()` is always False
and `resolve_conj()` has nothing to resolve. `real`, `imag`, `view_as_real` and
`view_as_complex` are views sharing storage, as in PyTorch.

Gradients follow PyTorch's convention, the conjugate Wirtinger derivative: for a real loss L
of z = x + iy the gradient is dL/dx + i dL/dy. For s = f(z) with gradient g arriving, the
gradient of z is conj(g) * ds/dconj(z) + g * conj(ds/dz), which each rule below works out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lucid._core import dtypes
from lucid._core.dtypes import SCALAR_TYPE_NAMES
from lucid._core.function import OWN_COMPLEX_RULE, Function
from lucid._core.tensor import TensorBase, _wrap
from lucid.ops._common import autocast_op, check_tensors
from lucid.ops.broadcast import broadcast_error

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "is_conj", "is_neg",
    "is_complex", "real", "imag", "isreal", "view_as_real", "view_as_complex", "complex", "polar",
]  # fmt: skip


def _is_complex(tensor: TensorBase) -> bool:
    return tensor._data.dtype.kind == "c"


def _parts_view(array: np.ndarray) -> np.ndarray:
    """A real view of a complex array with a last dimension of 2 (real, imaginary)."""
    real_part = array.real
    return np.lib.stride_tricks.as_strided(
        real_part, array.shape + (2,), real_part.strides + (real_part.itemsize,)
    )


class _ArrayView:
    """An object NumPy reads as an array over another array's memory with a new dtype and
    strides, keeping that array alive (complex views of real pairs); `base` links the view
    to its memory's owner, as NumPy's own views do."""

    def __init__(self, source: np.ndarray, interface: dict) -> None:
        self.base = source
        self.__array_interface__ = interface


def _complex_view(array: np.ndarray) -> np.ndarray:
    """The complex view of a real array whose last dimension (stride 1) holds the parts."""
    first = array[..., 0]
    interface = dict(first.__array_interface__)
    complex_dtype = np.dtype(np.complex128 if array.dtype == np.float64 else np.complex64)
    interface["typestr"] = complex_dtype.str
    interface["descr"] = [("", complex_dtype.str)]
    interface["strides"] = first.strides
    return np.asarray(_ArrayView(array, interface))


# ---------------------------------------------------------------- conjugation
class Conj(Function):
    _backward_name = "ConjBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        return _wrap(np.conj(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        # conj is its own derivative's conjugate: ds/dconj(z) = 1, ds/dz = 0
        return conj(grad_output)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a new tensor; a real tensor is its own conjugate)."""
    check_tensors(input)
    if not _is_complex(input):
        return input
    return Conj.apply(input)


class ConjPhysical(Conj):
    """Conj under its own node name, whose backward is conj_physical too."""

    _backward_name = "ConjPhysicalBackward0"

    @staticmethod
    def backward(ctx, grad_output):
        return conj_physical(grad_output)


def conj_physical(input: Tensor) -> Tensor:
    check_tensors(input)
    if not _is_complex(input):
        return input
    return ConjPhysical.apply(input)


class ConjPhysicalInplace(Function):
    """conj_physical_: the conjugated values written into the tensor itself."""

    _backward_name = "ConjPhysicalBackward1"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        if _is_complex(x):
            np.conjugate(x._data, out=x._data)
        # a real tensor is its own conjugate: written in place with the same values
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return conj(grad_output)


def conj_physical_(input: Tensor) -> Tensor:
    check_tensors(input)
    return ConjPhysicalInplace.apply(input)


def resolve_conj(input: Tensor) -> Tensor:
    check_tensors(input)
    return input


def resolve_neg(input: Tensor) -> Tensor:
    check_tensors(input)
    return input


def is_conj(input: Tensor) -> bool:
    """False: lucid's conjugates are computed, never a lazy bit on a view."""
    check_tensors(input)
    return False


def is_neg(input: Tensor) -> bool:
    check_tensors(input)
    return False


def is_complex(input: Tensor) -> bool:
    check_tensors(input)
    return _is_complex(input)


def isreal(input: Tensor) -> Tensor:
    """Where the imaginary part is zero (everywhere, for a real tensor)."""
    check_tensors(input)
    if not _is_complex(input):
        return _wrap(np.ones(input._data.shape, np.bool_))
    return _wrap(input._data.imag == 0)


# ----------------------------------------------------------------- the parts
class Real(Function):
    # PyTorch takes the real part as a select of view_as_real, so its node is a select's.
    _backward_name = "SelectBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data.real)

    @staticmethod
    def backward(ctx, grad_output):
        return complex(grad_output, grad_output.new_zeros(grad_output.shape))


class Imag(Function):
    _backward_name = "SelectBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data.imag)

    @staticmethod
    def backward(ctx, grad_output):
        # dL/dy is the gradient's imaginary part: i * grad
        return complex(grad_output.new_zeros(grad_output.shape), grad_output)


def real(input: Tensor) -> Tensor:
    """The real part, a view (a real tensor is its own real part)."""
    check_tensors(input)
    if not _is_complex(input):
        return input
    return Real.apply(input)


def imag(input: Tensor) -> Tensor:
    """The imaginary part, a view; only complex tensors have one (PyTorch's error otherwise)."""
    check_tensors(input)
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


class ViewAsReal(Function):
    _backward_name = "ViewAsRealBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        return _wrap(_parts_view(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        return complex(grad_output[..., 0], grad_output[..., 1])


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor, with a last dimension of 2: (real, imaginary)."""
    check_tensors(input)
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


class ViewAsComplex(Function):
    _backward_name = "ViewAsComplexBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, x):
        dtypes.note_complex()
        return _wrap(_complex_view(x._data))

    @staticmethod
    def backward(ctx, grad_output):
        return view_as_real(grad_output)


@autocast_op
def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a real tensor whose last dimension, of size 2 and stride 1, holds
    each element's (real, imaginary) parts."""
    check_tensors(input)
    array = input._data
    if array.dtype not in (np.float32, np.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {SCALAR_TYPE_NAMES[array.dtype.name]}"
        )
    if array.ndim == 0 or array.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    itemsize = array.itemsize
    if array.strides[-1] != itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(stride % (2 * itemsize) for stride in array.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(input)


# --------------------------------------------------------- tensors made of parts
def _check_parts(first: Tensor, second: Tensor) -> None:
    a, b = first._data.dtype, second._data.dtype
    if a.kind not in dtypes.FLOAT_KINDS or b.kind not in dtypes.FLOAT_KINDS or a.itemsize == 2:
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{SCALAR_TYPE_NAMES[a.name]} and {SCALAR_TYPE_NAMES[b.name]}"
        )
    if a != b:
        raise RuntimeError(
            f"Expected object of scalar type {SCALAR_TYPE_NAMES[a.name]} but got scalar type "
            f"{SCALAR_TYPE_NAMES[b.name]} for second argument"
        )
    try:
        np.broadcast_shapes(first._data.shape, second._data.shape)
    except ValueError:
        raise broadcast_error(first._data.shape, second._data.shape) from None


class Complex(Function):
    _backward_name = "ComplexBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, real_part, imag_part):
        dtypes.note_complex()
        x, y = np.broadcast_arrays(real_part._data, imag_part._data)
        result = np.empty(x.shape, np.complex128 if x.dtype == np.float64 else np.complex64)
        result.real = x
        result.imag = y
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad_output):
        return real(grad_output), imag(grad_output)


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor real + i imag (both floating, of one dtype; they broadcast)."""
    check_tensors(real, imag)
    _check_parts(real, imag)
    return Complex.apply(real, imag)


class Polar(Function):
    _backward_name = "PolarBackward0"
    _complex_rule = OWN_COMPLEX_RULE

    @staticmethod
    def forward(ctx, magnitude, angle):
        dtypes.note_complex()
        r, theta = np.broadcast_arrays(magnitude._data, angle._data)
        result = np.empty(r.shape, np.complex128 if r.dtype == np.float64 else np.complex64)
        result.real = r * np.cos(theta)
        result.imag = r * np.sin(theta)
        output = _wrap(result)
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        # z = r e^(i theta): dz/dr = e^(i theta), dz/dtheta = i z, both real inputs; as
        # PyTorch, e^(i theta) is taken as sgn(z) (0 where r is 0)
        grad_magnitude = real(grad_output * conj(output.sgn()))
        grad_angle = real(grad_output * conj(output * 1j))
        return grad_magnitude, grad_angle


@autocast_op
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    check_tensors(abs, angle)
    _check_parts(abs, angle)
    return Polar.apply(abs, angle)
