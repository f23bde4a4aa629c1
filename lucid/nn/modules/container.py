"""Containers: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from lucid import Tensor
from lucid.nn.modules.module import Module, _addindent
from lucid.nn.parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _normalise_index(index: Any, length: int) -> int:
    index = operator.index(index)
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range")
    return index + length if index < 0 else index


class Sequential(Module):
    """Modules run one after another; built from modules or from an OrderedDict of them."""

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return list(self._modules.values())[_normalise_index(index, len(self))]

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[_normalise_index(index, len(self))]
        setattr(self, key, module)

    def __delitem__(self, index: int | slice) -> None:
        if isinstance(index, slice):
            for key in list(self._modules)[index]:
                delattr(self, key)
        else:
            delattr(self, list(self._modules)[_normalise_index(index, len(self))])
        # Positional names are renumbered so they stay 0..n-1, as in PyTorch.
        modules = list(self._modules.values())
        self._modules.clear()
        for position, module in enumerate(modules):
            self._modules[str(position)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        result = Sequential()
        for module in self:
            result.append(module)
        for module in other:
            result.append(module)
        return result

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        length = len(self._modules)
        if not -length <= index <= length:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += length
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for position, item in enumerate(modules):
            self._modules[str(position)] = item
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for module in sequential:
            self.append(module)
        return self

    def pop(self, key: int | slice) -> Module:
        value = self[key]
        del self[key]
        return value

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children named "0", "1", ..."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[str(_normalise_index(index, len(self)))]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, str(_normalise_index(index, len(self))), module)

    def __delitem__(self, index: int | slice) -> None:
        if isinstance(index, slice):
            for key in list(self._modules)[index]:
                delattr(self, key)
        else:
            delattr(self, str(_normalise_index(index, len(self))))
        modules = list(self._modules.values())
        self._modules.clear()
        for position, module in enumerate(modules):
            self._modules[str(position)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        result = ModuleList()
        for module in self:
            result.append(module)
        for module in other:
            result.append(module)
        return result

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> None:
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for position, item in enumerate(modules):
            self.add_module(str(position), item)

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for module in modules:
            self.append(module)
        return self

    def pop(self, key: int | slice) -> Module:
        value = self[key]
        del self[key]
        return value

    def __repr__(self) -> str:
        # Runs of identical reprs are folded into one line, "(0-2): 3 x Linear(...)".
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        groups: list[tuple[int, int, str]] = []
        start = 0
        for index in range(1, len(reprs) + 1):
            if index == len(reprs) or reprs[index] != reprs[start]:
                groups.append((start, index - 1, reprs[start]))
                start = index
        lines = []
        for first, last, text in groups:
            text = _addindent(text, 2)
            if first == last:
                lines.append(f"({first}): {text}")
            else:
                lines.append(f"({first}-{last}): {last - first + 1} x {text}")
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]


class ModuleDict(Module):
    """A dict of modules, registered as children under their keys (insertion order kept)."""

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        value = self[key]
        del self[key]
        return value

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        if isinstance(modules, Mapping):
            for key, module in modules.items():
                self[key] = module
            return
        for index, item in enumerate(modules):
            if not isinstance(item, Iterable) or isinstance(item, (str, bytes)):
                raise TypeError(
                    f"ModuleDict update sequence element #{index} should be Iterable; is "
                    + type(item).__name__
                )
            item = tuple(item)
            if len(item) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{index} has length {len(item)}; "
                    "2 is required"
                )
            self[item[0]] = item[1]


def _parameter_line(key: str, value: Any, type_name: str) -> str:
    if isinstance(value, Tensor):
        size = "x".join(str(size) for size in value.shape)
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{type_name} of size {size}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


def _tensor_type(value: Any) -> str:
    return value.type() if isinstance(value, Tensor) else ""


class ParameterList(Module):
    """A list of parameters, registered under "0", "1", ...; plain tensors become Parameters."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return ParameterList([self[i] for i in range(len(self))[index]])
        return getattr(self, str(_normalise_index(index, len(self))))

    def __setitem__(self, index: int, value: Any) -> None:
        index = _normalise_index(index, len(self))
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, str(index), value)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        index = len(self)
        self._size += 1
        self[index] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            _parameter_line(str(i), value, str(getattr(value, "dtype", "")))
            for i, value in enumerate(self)
        )


class ParameterDict(Module):
    """A dict of parameters under string keys; plain tensors become Parameters."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable | None = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def keys(self) -> Iterable[str]:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return [(key, self[key]) for key in self._keys]

    def values(self) -> Iterable[Any]:
        return [self[key] for key in self._keys]

    def update(self, parameters: Mapping[str, Any] | Iterable) -> None:
        if isinstance(parameters, Mapping):
            items = parameters.items()
            if not isinstance(parameters, (OrderedDict, ParameterDict)):
                items = sorted(items)
            for key, value in items:
                self[key] = value
            return
        for index, item in enumerate(parameters):
            item = tuple(item)
            if len(item) != 2:
                raise ValueError(
                    f"ParameterDict update sequence element #{index} has length {len(item)}; "
                    "2 is required"
                )
            self[item[0]] = item[1]

    def extra_repr(self) -> str:
        return "\n".join(
            _parameter_line(key, self[key], _tensor_type(self[key])) for key in self._keys
        )
