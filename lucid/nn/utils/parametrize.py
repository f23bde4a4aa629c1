"""Parametrizations: a parameter or buffer computed by modules from a stored original.

After `register_parametrization(module, "weight", P())`, reading `module.weight` runs
`P()(original)`, where the original lives at `module.parametrizations.weight.original`;
assigning to `module.weight` stores `P().right_inverse(value)` as the original.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn.modules.container import ModuleDict, ModuleList
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter

__all__ = [
    "cached", "ParametrizationList", "register_parametrization", "is_parametrized",
    "remove_parametrizations", "type_before_parametrizations",
]  # fmt: skip

# parametrized tensors computed once per `cached()` block, keyed by (module id, tensor name)
_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within this block each parametrized tensor is computed once, at its first read (useful
    when a parametrized weight is read many times in one forward, as in recurrent layers)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _replace_values(target: Tensor, value: Tensor) -> None:
    """Give `target` the values (and shape) of `value`, keeping the object optimizers hold."""
    with lucid.no_grad():
        if target.shape == value.shape and target.dtype == value.dtype:
            target.copy_(value)
        else:
            target.data = value.detach().clone()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original value(s):
    `original`, or `original0`, `original1`, ... when the first `right_inverse` returns a
    sequence."""

    def __init__(
        self, modules: Sequence[Module], original: Tensor | Parameter, unsafe: bool = False
    ) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with lucid.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, Sequence):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            # the original object stays the one an optimizer may already hold
            if new is not original:
                _replace_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for index, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {index} of the sequence with type "
                        f"{type(value).__name__}."
                    )
                if isinstance(original, Parameter):
                    value = Parameter(value.detach(), original.requires_grad)
                else:
                    value = value.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{index}", value)
        if not self.unsafe:
            result = self()
            if not isinstance(result, Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(result).__name__}."
                )
            if result.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {result.dtype}"
                )
            if result.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {result.shape}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Store `value` as the tensor's new value, through each `right_inverse` in reverse."""
        with lucid.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                        f"`original` has dtype {self.original.dtype}"
                    )
                _replace_values(self.original, value)
            else:
                if not isinstance(value, Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}."
                    )
                for index, tensor in enumerate(value):
                    _replace_values(getattr(self, f"original{index}"), tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            result = self[0](self.original)
        else:
            originals = [getattr(self, f"original{index}") for index in range(self.ntensors)]
            result = self[0](*originals)
        for module in list(self)[1:]:
            result = module(result)
        return result


def _parametrized_deepcopy(self: Module, memo: dict) -> Module:
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _parametrized_getstate(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict()."
    )


def _inject_new_class(module: Module) -> None:
    """Give `module` a class of its own (Parametrized<Name>) to hold the tensors' properties."""
    cls = module.__class__
    namespace: dict[str, Any] = {"__getstate__": _parametrized_getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _parametrized_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make `module.<tensor_name>` the output of `parametrization` on a stored original.

    A second registration on the same tensor applies after the first. `unsafe=True` allows a
    parametrization that changes the tensor's shape or dtype.

    Example::

        class Symmetric(nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(-1, -2)

        layer = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            result = parametrization(current)
            if not isinstance(result, Tensor):
                raise ValueError(
                    f"A parametrization must return a tensor. Got {type(result).__name__}."
                )
            if result.dtype != current.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {current.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {result.dtype}"
                )
            if result.shape != current.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {current.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {result.shape}"
                )
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, when given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Remove the parametrizations of `tensor_name`: it becomes a plain parameter or buffer
    holding its parametrized value (or its original one, with leave_parametrized=False)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with lucid.no_grad():
                _replace_values(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        with lucid.no_grad():
            value = getattr(module, tensor_name)
        requires_grad = parametrizations.original0.requires_grad
        if isinstance(parametrizations.original0, Parameter):
            original = Parameter(value.detach(), requires_grad)
        else:
            original = value.detach().requires_grad_(requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
