"""Parameter and Buffer, the tensors a Module registers, and lazy modules' placeholders."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import Tensor


class Parameter(Tensor):
    """A tensor that, assigned as a Module attribute, is added to the module's parameters.

    It shares storage with `data` (as PyTorch's does) and is always a leaf.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = lucid.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter.__new__(): argument 'data' (position 1) must be Tensor, "
                f"not {type(data).__name__}"
            )
        param = object.__new__(cls)
        param._data = data._data
        param._requires_grad = False
        param._grad = None
        param._grad_fn = None
        param._output_nr = 0
        # Sharing the version counter keeps in-place writes through either name visible.
        param._version_counter = data._version_counter
        param._grad_accumulator = None
        param._backward_hooks = None
        param._retains_grad = False
        param._name = None
        param._base = None
        param.requires_grad = requires_grad
        return param

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        # All the work happens in __new__; Tensor.__init__ must not rebuild the storage.
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


class Buffer(Tensor):
    """A tensor that, assigned as a Module attribute, is registered as a buffer
    (`persistent=False` keeps it out of the state dict)."""

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = lucid.empty(0)
        buffer = object.__new__(cls)
        buffer._data = data._data
        buffer._requires_grad = False
        buffer._grad = None
        buffer._grad_fn = None
        buffer._output_nr = 0
        buffer._version_counter = data._version_counter
        buffer._grad_accumulator = None
        buffer._backward_hooks = None
        buffer._retains_grad = False
        buffer._name = None
        buffer._base = None
        buffer.requires_grad = data.requires_grad
        buffer.persistent = persistent
        return buffer

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


class UninitializedTensorMixin:
    """A placeholder whose shape is not known yet: a lazy module materializes it at its first
    forward. Its shape cannot be read until then."""

    __slots__ = ()
    cls_to_become: type

    def materialize(self, shape: tuple[int, ...] | int, device: Any = None, dtype: Any = None):
        """Give the placeholder storage of `shape` (uninitialized values) and its final class."""
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self.data = lucid.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module infers at its first forward."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        return Parameter.__new__(cls, lucid.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None):
        pass

    def __deepcopy__(self, memo: dict) -> UninitializedParameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer whose shape a lazy module infers at its first forward. Once materialized it
    is a `Buffer` (a Tensor), where PyTorch's becomes a plain Tensor."""

    __slots__ = ()
    cls_to_become = Buffer

    def __new__(
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
        persistent: bool = True,
    ) -> UninitializedBuffer:  # fmt: skip
        data = lucid.empty(0, device=device, dtype=dtype).requires_grad_(requires_grad)
        return Buffer.__new__(cls, data, persistent=persistent)

    def __init__(
        self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
        persistent: bool = True,
    ) -> None:  # fmt: skip
        pass

    def __deepcopy__(self, memo: dict) -> UninitializedBuffer:
        if id(self) not in memo:
            memo[id(self)] = type(self)(
                self.requires_grad, self.device, self.dtype, persistent=self.persistent
            )
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether `param` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
