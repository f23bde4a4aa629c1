"""Parameter: a leaf tensor that a Module registers as one of its learnable weights."""

from __future__ import annotations

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
