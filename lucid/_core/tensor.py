"""TensorBase: the data model every tensor shares (the array, autograd state, versions,
hooks) and `_wrap`; the methods that compute live on lucid.Tensor, which builds on the ops."""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core import dtypes
from lucid._core.arguments import raise_type_error
from lucid._core.devices import CPU, device
from lucid._core.grad_mode import local_state
from lucid._core.hooks import RemovableHandle

if TYPE_CHECKING:
    from lucid._tensor import Tensor


def read_handler(tensor: Any, how: str) -> None:
    """Replaced by lucid._core.sentinel: called when a value of an eval pass that saw a birth
    is read (`item`, `tolist`, `numpy`)."""


_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead."
)


class TensorBase:
    """The state of a tensor: its array and autograd bookkeeping, without the ops."""

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
        # Set only on views (where `_base` is set, no cost in _wrap): the version their
        # grad_fn was made at, and how they were made (_core/views.py).
        "_view_version",
        "_view_creation",
        # Set only by detach_() on a non-leaf: the (grad_fn, output_nr) it had, so that a node
        # that saved it then can refuse it in backward. Unset elsewhere (no cost in _wrap).
        "_detached_from",
        "__weakref__",
    )

    def __init__(self, *args: Any, dtype: dtypes.dtype | None = None) -> None:
        # Mirrors torch.Tensor(data) / torch.Tensor(*sizes) / torch.Tensor() (empty, shape
        # [0]): a default-float tensor.
        if len(args) == 1 and not isinstance(args[0], int):
            array = np.array(_unwrap_nested(args[0]), dtype=_default_numpy_float(dtype))
        else:
            shape = _new_shape(args) if args else (0,)
            target = _default_numpy_float(dtype)
            array = allocated(lambda: np.zeros(shape, target), shape, target)
        _init_tensor(self, array)

    # ----------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        return _shape_size(self._data.shape)

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self) -> device:
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    def _bring_view_up_to_date(self) -> None:
        """A view whose base was written since its grad_fn was made reads the base anew."""
        if self._base is not None and self._view_version != self._version_counter[0]:
            _refresh_view(self)

    @property
    def is_leaf(self) -> bool:
        self._bring_view_up_to_date()
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Any:
        self._bring_view_up_to_date()
        return self._grad_fn

    @property
    def requires_grad(self) -> bool:
        self._bring_view_up_to_date()
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
        if value and self.is_inference() and not local_state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        if value and self._data.dtype.kind not in dtypes.INEXACT_KINDS:
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
        if local_state.recorder is not None:
            local_state.recorder.read_grad(self, self._grad)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value._data.dtype != self._data.dtype:
                given = dtypes.C_TYPE_NAMES[value._data.dtype.name]
                expected = dtypes.SCALAR_TYPE_NAMES[self._data.dtype.name]
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
        if local_state.recorder is not None:
            local_state.recorder.set_grad(self, value)
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        if local_state.recorder is not None:
            local_state.recorder.set_grad(self, None)
        self._grad = None

    @property
    def data(self) -> Tensor:
        """A tensor sharing storage with this one, outside autograd (as PyTorch's `.data`)."""
        if local_state.recorder is not None:  # lucid.compile makes it anew on a replay
            return local_state.recorder.call(_data_of, self)
        return _wrap(self._data)

    @data.setter
    def data(self, value: Tensor | np.ndarray) -> None:
        if local_state.recorder is not None:
            local_state.recorder.call(_set_data, self, value)
            return
        array = value._data if isinstance(value, TensorBase) else np.asarray(value)
        dtypes.from_numpy_dtype(array.dtype)
        self._data = array

    @property
    def _version(self) -> int:
        if self._version_counter.__class__ is InferenceVersion:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    def is_inference(self) -> bool:
        """True for a tensor made in inference_mode (which can't be updated in place outside it)."""
        return self._version_counter.__class__ is InferenceVersion

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
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return _shape_size(self._data.shape)
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
        return self._data.dtype.kind in dtypes.FLOAT_KINDS

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous

    def data_ptr(self) -> int:
        if self._data.size == 0:
            return 0  # as PyTorch: a tensor without elements has no storage to point to
        return self._data.__array_interface__["data"][0]

    def get_device(self) -> int:
        return -1

    # ------------------------------------------------------------- conversions
    def item(self) -> builtins.float | builtins.int | builtins.bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if local_state.eval_births:
            read_handler(self, "was read with item()")
        if local_state.recorder is not None:
            local_state.recorder.host_read(self, "item()")
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        if local_state.eval_births:
            read_handler(self, "was read with tolist()")
        if local_state.recorder is not None:
            local_state.recorder.host_read(self, "tolist()")
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        if local_state.eval_births:
            read_handler(self, "was read with numpy()")
        if local_state.recorder is not None:
            local_state.recorder.host_read(self, "numpy()")
        return self._data

    def __dlpack__(self, *, stream: Any = None, **kwargs: Any) -> Any:
        """Zero-copy export (DLPack) of the storage, for NumPy, PyTorch and others."""
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if local_state.recorder is not None:
            local_state.recorder.host_read(self, "a conversion to a NumPy array")
        if dtype is None:
            return self._data
        return self._data.astype(dtype, copy=False)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> builtins.bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        if local_state.recorder is not None:
            local_state.recorder.host_read(self, "bool()")
        return builtins.bool(self._data.reshape(()))

    def __float__(self) -> builtins.float:
        return builtins.float(_real_value(self.item(), "double"))

    def __int__(self) -> builtins.int:
        return builtins.int(_real_value(self.item(), "int64_t"))

    def __complex__(self) -> builtins.complex:
        return builtins.complex(self.item())

    def __index__(self) -> builtins.int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

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
        if local_state.recorder is not None:  # lucid.compile makes it anew on a replay
            return local_state.recorder.call(TensorBase.detach, self)
        result = _wrap(self._data)
        result._version_counter = self._version_counter
        return result

    def detach_(self) -> Tensor:
        # A view of an inference tensor is not a view to PyTorch (it tracks no view either).
        if self._base is not None and self._version_counter.__class__ is not InferenceVersion:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        if self._grad_fn is not None:
            self._detached_from = (self._grad_fn, self._output_nr)
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self


class InferenceVersion(list):
    """The version counter of a tensor made in inference mode, which marks it as an inference
    tensor: in-place updates outside inference mode refuse it (graph.Node.mark_dirty)."""

    __slots__ = ()


def _refresh_view(view: TensorBase) -> None:
    # views.py builds on Function, which builds on this module (a cycle broken here, on a
    # path only stale views take).
    from lucid._core.views import refresh

    refresh(view)


def mark_inference(tensor: TensorBase) -> None:
    """Make a tensor created in inference mode an inference tensor (views share the mark)."""
    tensor._version_counter = InferenceVersion([0])


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints like PyTorch's `torch.Size`."""

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        values = tuple(sizes)
        if all(type(value) is int for value in values):
            return tuple.__new__(cls, values)
        checked = []
        for index, value in enumerate(values):
            # PyTorch takes what converts to an index: NumPy integers, bools, integer tensors
            # of one element, but no float, string or float tensor.
            floating = isinstance(value, TensorBase) and value._data.dtype.kind not in "biu"
            try:
                if floating:
                    raise TypeError
                checked.append(operator.index(value))
            except TypeError:
                name = "Tensor" if isinstance(value, TensorBase) else type(value).__name__
                raise TypeError(
                    f"lucid.Size() takes an iterable of 'int' (item {index} is '{name}')"
                ) from None
        return tuple.__new__(cls, checked)

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


def _shape_size(shape: tuple[int, ...]) -> Size:
    """A NumPy shape as a Size, unchecked: its entries are ints (the hot path of `.shape`)."""
    return tuple.__new__(Size, shape)


def _init_tensor(tensor: TensorBase, array: np.ndarray) -> None:
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


# lucid._tensor registers the Tensor class at import; until then (the core alone) `_wrap`
# builds bare TensorBase objects.
_tensor_class: type = TensorBase


def register_tensor_class(cls: type) -> None:
    """Make `_wrap` build instances of `cls`: the one late binding from the Tensor class
    (whose methods call ops) down to the core (which ops build on)."""
    global _tensor_class
    _tensor_class = cls


def _real_value(value: Any, c_type: str) -> Any:
    """A Python number as a real one: a complex value only if its imaginary part is zero
    (PyTorch's checked conversion)."""
    if isinstance(value, builtins.complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return value.real
    return value


def _data_of(tensor: TensorBase) -> TensorBase:
    return tensor.data


def _set_data(tensor: TensorBase, value: Any) -> None:
    tensor.data = value


def _wrap(array: np.ndarray) -> Tensor:
    """A leaf tensor over `array` without copying; for lucid internals only.

    NumPy returns scalars, not 0-d arrays, from operations on 0-d arrays: those are
    turned back into arrays here.
    """
    if array.__class__ is not _ndarray:
        array = _asarray(array)
    tensor = _new_tensor(_tensor_class)
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


# The most bytes one allocation may ask for: PyTorch computes a storage's size in int64.
_MAX_BYTES = 2**63 - 1


def storage_bytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """The bytes a new array of `shape` and `dtype` takes, or PyTorch's RuntimeError for a size
    past int64."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > _MAX_BYTES:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return nbytes


def allocation_error(nbytes: int) -> RuntimeError:
    """PyTorch's error for memory the machine lacks (NumPy's MemoryError quotes its shapes)."""
    return RuntimeError(
        f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. "
        "Error code 12 (Cannot allocate memory)"
    )


def allocated(make: Callable[[], np.ndarray], shape: tuple[int, ...],
              dtype: np.dtype) -> np.ndarray:  # fmt: skip
    """`make()`, with PyTorch's RuntimeErrors for a size past int64 or memory the machine
    lacks (NumPy's MemoryError or "array is too big" would quote its own internals)."""
    nbytes = storage_bytes(shape, dtype)
    try:
        return make()
    except (MemoryError, ValueError) as error:
        if isinstance(error, ValueError) and "too big" not in str(error):
            raise
        raise allocation_error(nbytes) from None


def _new_shape(sizes: tuple[int, ...]) -> tuple[int, ...]:
    for size in sizes:
        if size < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {size}: {list(sizes)}"
            )
    return sizes


def _default_numpy_float(dtype: Any) -> np.dtype:
    if dtype is None:
        return dtypes.get_default_dtype().numpy_dtype
    return dtypes.to_numpy_dtype(dtype)


def _unwrap_nested(data: Any) -> Any:
    if isinstance(data, TensorBase):
        return data._data
    if isinstance(data, list | tuple) and data and isinstance(data[0], TensorBase):
        return [_unwrap_nested(item) for item in data]
    return data


def _normalize_dim(dim: int, ndim: int) -> int:
    bound = builtins.max(ndim, 1)
    if dim.__class__ is not int:
        # NumPy integers pass; a float or None is PyTorch's TypeError, naming the argument
        if not hasattr(dim, "__index__") or dim.__class__ is bool:
            raise_type_error(dim, "int")
        dim = dim.__index__()
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


# Tensor.type()'s names: "lucid.HalfTensor", "lucid.BFloat16Tensor", ...
_TYPE_NAMES = {
    d.numpy_dtype: f"lucid.{dtypes.SCALAR_TYPE_NAMES[d.name]}Tensor"
    for d in dtypes._ALL
    if d is not dtypes.bfloat16
}
dtypes.when_bfloat16_loads(
    lambda bfloat16: _TYPE_NAMES.__setitem__(bfloat16, "lucid.BFloat16Tensor")
)
