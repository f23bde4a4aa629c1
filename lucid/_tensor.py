"""Tensor: an ndarray plus autograd state; every method is a one-line delegate into lucid.ops."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lucid import dtypes
from lucid.utils.hooks import RemovableHandle

_FLOAT_KINDS = "f"

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead."
)


class Tensor:
    """A multi-dimensional array that records the operations applied to it for autograd."""

    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad",
        "_grad_fn",
        "_output_nr",
        "_version_counter",
        "_grad_accumulator",
        "_backward_hooks",
        "_retains_grad",
        "_name",
        "_base",
        "__weakref__",
    )

    def __init__(self, *args: Any, dtype: dtypes.dtype | None = None) -> None:
        # Mirrors torch.Tensor(data) / torch.Tensor(*sizes): a default-float tensor.
        if len(args) == 1 and not isinstance(args[0], int):
            array = np.array(_unwrap_nested(args[0]), dtype=_default_numpy_float(dtype))
        else:
            array = np.zeros(args, dtype=_default_numpy_float(dtype))
        _init_tensor(self, array)

    # ----------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Any:
        return self._grad_fn

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            if value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables.")
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and self._data.dtype.kind not in _FLOAT_KINDS:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = builtins.bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        # Unlike the setter, asking a non-leaf (which already requires grad) for True is a no-op.
        if requires_grad and self._grad_fn is not None:
            return self
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value._data.dtype != self._data.dtype:
                given = _C_TYPE_NAMES[value._data.dtype]
                expected = _TYPE_NAMES[self._data.dtype][len("lucid.") : -len("Tensor")]
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{given}' to a tensor with "
                    f"grad_dtype '{expected}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                    "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype "
                    "with caution. Diverging the dtypes of a tensor and its gradient may break "
                    "downstream systems that assume they match."
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def data(self) -> Tensor:
        """A tensor sharing storage with this one, outside autograd (as PyTorch's `.data`)."""
        return _wrap(self._data)

    @data.setter
    def data(self, value: Tensor | np.ndarray) -> None:
        array = value._data if isinstance(value, Tensor) else np.asarray(value)
        dtypes.from_numpy_dtype(array.dtype)
        self._data = array

    @property
    def _version(self) -> int:
        return self._version_counter[0]

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def T(self) -> Tensor:
        return _ops.numpy_T(self)

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor."
            )
        return _ops.transpose(self, -2, -1)

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_normalize_dim(dim, self._data.ndim)]

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        if dim is None:
            return strides
        return strides[_normalize_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    def _is_view(self) -> bool:
        """True when this tensor was made by a view op and shares its base's storage."""
        return self._base is not None

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    def nelement(self) -> int:
        return self._data.size

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def get_device(self) -> int:
        return -1

    # ------------------------------------------------------------- conversions
    def item(self) -> builtins.float | builtins.int | builtins.bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        return self._data

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        """Zero-copy export (DLPack) of the storage, for NumPy, PyTorch and others."""
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if dtype is None:
            return self._data
        return self._data.astype(dtype, copy=False)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def __bool__(self) -> builtins.bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return builtins.bool(self._data.reshape(()))

    def __float__(self) -> builtins.float:
        return builtins.float(self.item())

    def __int__(self) -> builtins.int:
        return builtins.int(self.item())

    def __index__(self) -> builtins.int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def __hash__(self) -> builtins.int:
        return id(self)

    def __repr__(self) -> str:
        return _format_tensor(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("lucid tensors are not picklable; use lucid.save (no pickle) instead")

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        result = _wrap(self._data.copy())
        result._requires_grad = self._requires_grad
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result

    # ----------------------------------------------------------------- autograd
    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | Tensor | None = None,
    ) -> None:
        from lucid.autograd import backward  # late import: autograd builds on Tensor

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call `hook(grad)` when this tensor's gradient is computed; it may return a new grad."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            # A non-leaf's gradient exists only inside the engine, at its grad_fn's output.
            return self._grad_fn.register_tensor_hook(self._output_nr, hook)
        if self._backward_hooks is None:
            self._backward_hooks = {}
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def retain_grad(self) -> None:
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and not self._retains_grad:
            self._grad_fn.retain_output(self)
            self._retains_grad = True

    def detach(self) -> Tensor:
        result = _wrap(self._data)
        result._version_counter = self._version_counter
        return result

    def detach_(self) -> Tensor:
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    # -------------------------------------------------------------- dtype casts
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return _ops.to(self, *args, **kwargs)

    def type(self, dtype: Any = None) -> Tensor | str:
        if dtype is None:
            return _TYPE_NAMES[self._data.dtype]
        return _ops.to(self, dtype)

    def float(self) -> Tensor:
        return _ops.to(self, dtypes.float32)

    def double(self) -> Tensor:
        return _ops.to(self, dtypes.float64)

    def half(self) -> Tensor:
        return _ops.to(self, dtypes.float16)

    def long(self) -> Tensor:
        return _ops.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return _ops.to(self, dtypes.int32)

    def short(self) -> Tensor:
        return _ops.to(self, dtypes.int16)

    def char(self) -> Tensor:
        return _ops.to(self, dtypes.int8)

    def byte(self) -> Tensor:
        return _ops.to(self, dtypes.uint8)

    def bool(self) -> Tensor:
        return _ops.to(self, dtypes.bool)

    def cpu(self) -> Tensor:
        return self

    def clone(self) -> Tensor:
        return _ops.clone(self)

    def type_as(self, other: Tensor) -> Tensor:
        return _ops.to(self, other.dtype)

    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(
        self, size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _factories.full(
            size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad
        )

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    # ---------------------------------------------------------------- operators
    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __iadd__(self, other: Any) -> Tensor:
        return _ops.add_(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.rsub(self, other)

    def __isub__(self, other: Any) -> Tensor:
        return _ops.sub_(self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __imul__(self, other: Any) -> Tensor:
        return _ops.mul_(self, other)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.rdiv(self, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _ops.div_(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.remainder(other, self)

    def __pow__(self, exponent: Any) -> Tensor:
        return _ops.pow(self, exponent)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __ipow__(self, exponent: Any) -> Tensor:
        return _ops.pow_(self, exponent)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __invert__(self) -> Tensor:
        if self._data.dtype.kind == "f":
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
            )
        return _ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __or__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:
            return False  # type: ignore[return-value]
        return _ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:
            return True  # type: ignore[return-value]
        return _ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _ops.setitem_(self, index, value)

    # ------------------------------------------------------------- arithmetic
    def true_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other, rounding_mode="floor")

    def dot(self, other: Tensor) -> Tensor:
        return _ops.dot(self, other)

    # --------------------------------------------------------------- pointwise
    def clip_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    def relu(self) -> Tensor:
        return _ops.relu(self)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def copy_(self, src: Tensor) -> Tensor:
        return _ops.copy_(self, src)

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.log_softmax(self, dim, dtype=dtype)

    # ------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> Tensor:
        return _ops.reshape(self, _varargs_shape(shape))

    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and not isinstance(shape[0], int | tuple | list | Size):
            return _ops.to(self, shape[0])
        return _ops.view(self, _varargs_shape(shape))

    def view_as(self, other: Tensor) -> Tensor:
        return _ops.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return _ops.reshape(self, other.shape)

    def sum_to_size(self, *size: Any) -> Tensor:
        return _ops.sum_to(self, _varargs_shape(size))

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _ops.transpose(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return _ops.transpose(self, dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return _ops.nonzero(self, as_tuple=as_tuple)

    def permute(self, *dims: Any) -> Tensor:
        return _ops.permute(self, _varargs_shape(dims))

    def expand(self, *sizes: Any) -> Tensor:
        return _ops.expand(self, _varargs_shape(sizes))

    def expand_as(self, other: Tensor) -> Tensor:
        return _ops.expand(self, other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        return _ops.repeat(self, _varargs_shape(sizes))

    def tile(self, *dims: Any) -> Tensor:
        return _ops.tile(self, _varargs_shape(dims))

    def flip(self, *dims: Any) -> Tensor:
        return _ops.flip(self, _varargs_shape(dims))

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return _ops.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any, *, reduce: str | None = None) -> Tensor:
        return _ops.scatter(self, dim, index, src, reduce=reduce)


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints like PyTorch's `torch.Size`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"lucid.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        # a slice of a Size is a Size, as in torch
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other: Any) -> Size:
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Size:
        return Size(tuple.__add__(other, self))


def _init_tensor(tensor: Tensor, array: np.ndarray) -> None:
    tensor._data = array
    tensor._requires_grad = False
    tensor._grad = None
    tensor._grad_fn = None
    tensor._output_nr = 0
    tensor._version_counter = [0]
    tensor._grad_accumulator = None
    tensor._backward_hooks = None
    tensor._retains_grad = False
    tensor._name = None
    tensor._base = None


_new_tensor = object.__new__


_ndarray = np.ndarray
_asarray = np.asarray


def _zero_grads(params: Iterable[Tensor], set_to_none: bool) -> None:
    """`zero_grad` of modules and optimizers: drop each `.grad`, or zero it in place detached."""
    for param in params:
        grad = param.grad
        if grad is None:
            continue
        if set_to_none:
            param.grad = None
        else:
            if grad.grad_fn is not None:
                grad.detach_()
            else:
                grad.requires_grad_(False)
            grad.zero_()


def _wrap(array: np.ndarray) -> Tensor:
    """A leaf tensor over `array` without copying; for lucid internals only.

    NumPy returns scalars, not 0-d arrays, from operations on 0-d arrays: those are
    turned back into arrays here.
    """
    if array.__class__ is not _ndarray:
        array = _asarray(array)
    tensor = _new_tensor(Tensor)
    tensor._data = array
    tensor._requires_grad = False
    tensor._grad = None
    tensor._grad_fn = None
    tensor._output_nr = 0
    tensor._version_counter = [0]
    tensor._grad_accumulator = None
    tensor._backward_hooks = None
    tensor._retains_grad = False
    tensor._name = None
    tensor._base = None
    return tensor


def _default_numpy_float(dtype: Any) -> np.dtype:
    if dtype is None:
        return dtypes.get_default_dtype().numpy_dtype
    return dtypes.to_numpy_dtype(dtype)


def _unwrap_nested(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, list | tuple) and data and isinstance(data[0], Tensor):
        return [_unwrap_nested(item) for item in data]
    return data


def _normalize_dim(dim: int, ndim: int) -> int:
    bound = builtins.max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
            f"but got {dim})"
        )
    return dim % bound


def _varargs_shape(args: tuple) -> Any:
    """Accept both f(2, 3) and f((2, 3)) as PyTorch does."""
    if len(args) == 1 and isinstance(args[0], tuple | list | Size):
        return tuple(args[0])
    return args


_TYPE_NAMES = {
    np.dtype(np.float16): "lucid.HalfTensor",
    np.dtype(np.float32): "lucid.FloatTensor",
    np.dtype(np.float64): "lucid.DoubleTensor",
    np.dtype(np.int8): "lucid.CharTensor",
    np.dtype(np.int16): "lucid.ShortTensor",
    np.dtype(np.int32): "lucid.IntTensor",
    np.dtype(np.int64): "lucid.LongTensor",
    np.dtype(np.uint8): "lucid.ByteTensor",
    np.dtype(np.bool_): "lucid.BoolTensor",
}


# The C type names PyTorch's grad setter reports for a mismatched gradient dtype.
_C_TYPE_NAMES = {
    np.dtype(np.float16): "c10::Half",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.int8): "signed char",
    np.dtype(np.int16): "short int",
    np.dtype(np.int32): "int",
    np.dtype(np.int64): "long int",
    np.dtype(np.uint8): "unsigned char",
    np.dtype(np.bool_): "bool",
}


# ------------------------------------------------------------------------ repr
# PyTorch's default print options: digits after the point, the element count above which a
# tensor is summarised, the items kept at each edge of a summarised dimension, line width.
_PRECISION = 4
_SUMMARY_THRESHOLD = 1000
_EDGE_ITEMS = 3
_LINE_WIDTH = 80


class _ElementFormat:
    """The notation and common width every element of one tensor prints with (PyTorch's rules).

    Floats print with 4 decimals; as `1.` when every finite value is a whole number; in
    scientific notation when the finite non-zero magnitudes span more than 1000x, exceed 1e8,
    or (for non-whole values) go below 1e-4.
    """

    def __init__(self, array: np.ndarray) -> None:
        self.is_float = array.dtype.kind == "f"
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
        for value in values.tolist():
            if self.is_scientific:
                length = len(f"{value:.{_PRECISION}e}")
            elif self.is_whole:
                length = len(f"{value:.0f}") + 1  # the trailing "."
            else:
                length = len(f"{value:.{_PRECISION}f}")
            self.width = builtins.max(self.width, length)

    def format(self, value: Any) -> str:
        if not self.is_float:
            text = str(value)
        elif self.is_scientific:
            text = f"{value:{self.width}.{_PRECISION}e}"
        elif self.is_whole:
            text = f"{value:.0f}" + ("." if np.isfinite(value) else "")
        else:
            text = f"{value:.{_PRECISION}f}"
        return text.rjust(self.width)


def _edges(array: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows: the edge items of every dimension."""
    if array.ndim == 0:
        return array
    if array.shape[0] > 2 * _EDGE_ITEMS:
        array = np.concatenate((array[:_EDGE_ITEMS], array[-_EDGE_ITEMS:]))
    if array.ndim == 1:
        return array
    return np.stack([_edges(row) for row in array])


def _format_body(array: np.ndarray, indent: int, summarize: bool, style: _ElementFormat) -> str:
    if array.ndim == 0:
        return style.format(array.item())
    is_cut = summarize and array.shape[0] > 2 * _EDGE_ITEMS
    if array.ndim == 1:
        values = array.tolist()
        if is_cut:
            items = [style.format(v) for v in values[:_EDGE_ITEMS]] + [" ..."]
            items += [style.format(v) for v in values[-_EDGE_ITEMS:]]
        else:
            items = [style.format(v) for v in values]
        per_line = builtins.max(1, (_LINE_WIDTH - indent) // (style.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if is_cut:
        rows = [_format_body(row, indent + 1, summarize, style) for row in array[:_EDGE_ITEMS]]
        rows.append("...")
        rows += [_format_body(row, indent + 1, summarize, style) for row in array[-_EDGE_ITEMS:]]
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
        if array.dtype not in (default_float, np.dtype(np.int64), np.dtype(np.bool_)):
            suffixes.append(f"dtype={dtypes.from_numpy_dtype(array.dtype)}")
        summarize = array.size > _SUMMARY_THRESHOLD
        style = _ElementFormat(_edges(array) if summarize else array)
        body = _format_body(array, indent, summarize, style)
    if tensor._grad_fn is not None:
        suffixes.append(f"grad_fn=<{tensor._grad_fn.name()}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")

    text = prefix + body
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > _LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# Tensor methods delegate to lucid.ops, which itself builds on Tensor: the one sanctioned cycle.
from lucid import factories as _factories  # noqa: E402
from lucid import ops as _ops  # noqa: E402

# Methods that are their op's function itself (the same signature, `self` as `input`), bound
# once the ops exist; a method whose signature or body differs is written out in the class.
# dtype casts
Tensor.contiguous = _ops.contiguous
# arithmetic
Tensor.add = _ops.add
Tensor.add_ = _ops.add_
Tensor.sub = _ops.sub
Tensor.sub_ = _ops.sub_
Tensor.mul = _ops.mul
Tensor.mul_ = _ops.mul_
Tensor.div = _ops.div
Tensor.div_ = _ops.div_
Tensor.neg = _ops.neg
Tensor.neg_ = _ops.neg_
Tensor.pow = _ops.pow
Tensor.pow_ = _ops.pow_
Tensor.reciprocal = _ops.reciprocal
Tensor.matmul = _ops.matmul
Tensor.mm = _ops.mm
Tensor.bmm = _ops.bmm
Tensor.mv = _ops.mv
Tensor.outer = _ops.outer
Tensor.addmm = _ops.addmm
Tensor.maximum = _ops.maximum
Tensor.minimum = _ops.minimum
Tensor.fmod = _ops.fmod
Tensor.remainder = _ops.remainder
# pointwise
Tensor.exp = _ops.exp
Tensor.exp_ = _ops.exp_
Tensor.sqrt_ = _ops.sqrt_
Tensor.abs_ = _ops.abs_
Tensor.expm1 = _ops.expm1
Tensor.log = _ops.log
Tensor.logit = _ops.logit
Tensor.logit_ = _ops.logit_
Tensor.log1p = _ops.log1p
Tensor.log2 = _ops.log2
Tensor.log10 = _ops.log10
Tensor.sqrt = _ops.sqrt
Tensor.rsqrt = _ops.rsqrt
Tensor.abs = _ops.abs
Tensor.sign = _ops.sign
Tensor.sin = _ops.sin
Tensor.cos = _ops.cos
Tensor.tan = _ops.tan
Tensor.tanh = _ops.tanh
Tensor.sinh = _ops.sinh
Tensor.cosh = _ops.cosh
Tensor.asin = _ops.asin
Tensor.acos = _ops.acos
Tensor.atan = _ops.atan
Tensor.atan2 = _ops.atan2
Tensor.sigmoid = _ops.sigmoid
Tensor.relu_ = _ops.relu_
Tensor.diagonal = _ops.diagonal
Tensor.diag = _ops.diag
Tensor.trace = _ops.trace
Tensor.inner = _ops.inner
Tensor.clamp = _ops.clamp
Tensor.clamp_ = _ops.clamp_
Tensor.floor = _ops.floor
Tensor.ceil = _ops.ceil
Tensor.round = _ops.round
Tensor.trunc = _ops.trunc
Tensor.erf = _ops.erf
Tensor.lerp = _ops.lerp
Tensor.nan_to_num = _ops.nan_to_num
Tensor.isnan = _ops.isnan
Tensor.isinf = _ops.isinf
Tensor.isfinite = _ops.isfinite
Tensor.eq = _ops.eq
Tensor.ne = _ops.ne
Tensor.lt = _ops.lt
Tensor.le = _ops.le
Tensor.gt = _ops.gt
Tensor.ge = _ops.ge
Tensor.equal = _ops.equal
Tensor.allclose = _ops.allclose
Tensor.logical_and = _ops.logical_and
Tensor.logical_or = _ops.logical_or
Tensor.logical_xor = _ops.logical_xor
Tensor.logical_not = _ops.logical_not
Tensor.fill_ = _ops.fill_
Tensor.zero_ = _ops.zero_
Tensor.masked_fill = _ops.masked_fill
Tensor.masked_fill_ = _ops.masked_fill_
Tensor.uniform_ = _ops.uniform_
Tensor.normal_ = _ops.normal_
# reduction
Tensor.sum = _ops.sum
Tensor.mean = _ops.mean
Tensor.prod = _ops.prod
Tensor.var = _ops.var
Tensor.std = _ops.std
Tensor.max = _ops.max
Tensor.min = _ops.min
Tensor.amax = _ops.amax
Tensor.amin = _ops.amin
Tensor.argmax = _ops.argmax
Tensor.argmin = _ops.argmin
Tensor.logsumexp = _ops.logsumexp
Tensor.norm = _ops.norm
Tensor.count_nonzero = _ops.count_nonzero
Tensor.dist = _ops.dist
Tensor.cumsum = _ops.cumsum
Tensor.cumprod = _ops.cumprod
Tensor.all = _ops.all
Tensor.any = _ops.any
# shape
Tensor.flatten = _ops.flatten
Tensor.unflatten = _ops.unflatten
Tensor.squeeze = _ops.squeeze
Tensor.unsqueeze = _ops.unsqueeze
Tensor.transpose = _ops.transpose
Tensor.t = _ops.t
Tensor.movedim = _ops.movedim
Tensor.broadcast_to = _ops.broadcast_to
Tensor.take = _ops.take
Tensor.split = _ops.split
Tensor.chunk = _ops.chunk
Tensor.unbind = _ops.unbind
Tensor.narrow = _ops.narrow
Tensor.roll = _ops.roll
Tensor.scatter_add = _ops.scatter_add
Tensor.index_select = _ops.index_select
Tensor.masked_select = _ops.masked_select
Tensor.tril = _ops.tril
Tensor.triu = _ops.triu
