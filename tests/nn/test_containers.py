"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict vs torch.nn."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import lucid
from lucid import nn
from tests.torch_oracle import requires_torch, torch


class Add(nn.Module):
    def __init__(self, amount: float) -> None:
        super().__init__()
        self.amount = amount

    def forward(self, x):
        return x + self.amount

    def extra_repr(self) -> str:
        return f"amount={self.amount}"


class TorchAdd(torch.nn.Module):
    def __init__(self, amount: float) -> None:
        super().__init__()
        self.amount = amount

    def forward(self, x):
        return x + self.amount

    def extra_repr(self) -> str:
        return f"amount={self.amount}"


def _same_repr(lucid_module, torch_module) -> None:
    assert repr(lucid_module) == repr(torch_module).replace("TorchAdd", "Add").replace(
        "torch", "lucid"
    )


# ---------------------------------------------------------------- Sequential
@requires_torch
def test_sequential_forward_names_and_repr():
    model = nn.Sequential(Add(1), Add(2), Add(3))
    reference = torch.nn.Sequential(TorchAdd(1), TorchAdd(2), TorchAdd(3))
    assert model(lucid.tensor(0.0)).item() == 6
    assert list(model._modules) == ["0", "1", "2"]
    _same_repr(model, reference)


@requires_torch
def test_sequential_from_ordered_dict_keeps_names():
    model = nn.Sequential(OrderedDict(first=Add(1), second=Add(2)))
    assert [name for name, _ in model.named_children()] == ["first", "second"]
    assert model.first is model[0]
    sliced = model[1:]
    assert type(sliced) is nn.Sequential and list(sliced._modules) == ["second"]
    _same_repr(model, torch.nn.Sequential(OrderedDict(first=TorchAdd(1), second=TorchAdd(2))))


@requires_torch
def test_sequential_mutation_matches_torch():
    ours = nn.Sequential(Add(0), Add(1), Add(2))
    theirs = torch.nn.Sequential(TorchAdd(0), TorchAdd(1), TorchAdd(2))
    for container, make in ((ours, Add), (theirs, TorchAdd)):
        del container[0]
        container.insert(1, make(10))
        container.append(make(20))
        container.extend([make(30)])
        container[-1] = make(40)
        container.pop(0)
    _same_repr(ours, theirs)
    assert len(ours) == len(theirs) == 4
    assert [m.amount for m in ours] == [m.amount for m in theirs]
    assert [m.amount for m in ours[::2]] == [m.amount for m in theirs[::2]]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ours[5]


@requires_torch
def test_sequential_ordered_dict_delete_renumbers_like_torch():
    ours = nn.Sequential(OrderedDict(a=Add(1), b=Add(2)))
    theirs = torch.nn.Sequential(OrderedDict(a=TorchAdd(1), b=TorchAdd(2)))
    del ours[0]
    del theirs[0]
    assert list(ours._modules) == list(theirs._modules)


def test_sequential_add():
    joined = nn.Sequential(Add(1)) + nn.Sequential(Add(2))
    assert len(joined) == 2 and joined(lucid.tensor(0.0)).item() == 3


def test_sequential_registers_parameters():
    inner = nn.Module()
    inner.weight = nn.Parameter(lucid.ones(2))
    model = nn.Sequential(inner, nn.Sequential(inner))
    assert [n for n, _ in model.named_parameters()] == ["0.weight"]
    assert list(model.state_dict()) == ["0.weight", "1.0.weight"]


# ---------------------------------------------------------------- ModuleList
@requires_torch
def test_module_list_matches_torch():
    ours = nn.ModuleList([Add(1), Add(1)])
    theirs = torch.nn.ModuleList([TorchAdd(1), TorchAdd(1)])
    for container, make in ((ours, Add), (theirs, TorchAdd)):
        container.append(make(2))
        container.insert(0, make(0))
        container.extend([make(3)])
        container += [make(3)]
        del container[1]
        container[0] = make(5)
    _same_repr(ours, theirs)
    assert list(ours._modules) == list(theirs._modules)
    assert [m.amount for m in ours[1:3]] == [m.amount for m in theirs[1:3]]
    assert type(ours[1:3]) is nn.ModuleList
    assert ours.pop(-1).amount == theirs.pop(-1).amount
    assert len(ours) == len(theirs)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        ours[9]
    _same_repr(nn.ModuleList(), torch.nn.ModuleList())


def test_module_list_extend_requires_iterable():
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        nn.ModuleList().extend(Add(1))


# ---------------------------------------------------------------- ModuleDict
@requires_torch
def test_module_dict_matches_torch():
    ours = nn.ModuleDict({"b": Add(1), "a": Add(2)})
    theirs = torch.nn.ModuleDict({"b": TorchAdd(1), "a": TorchAdd(2)})
    for container, make in ((ours, Add), (theirs, TorchAdd)):
        container["c"] = make(3)
        container.update([("d", make(4))])
        del container["b"]
    _same_repr(ours, theirs)
    assert list(ours.keys()) == list(theirs.keys())
    assert "a" in ours and "b" not in ours and len(ours) == 3
    assert ours.pop("a").amount == 2
    assert [m.amount for m in ours.values()] == [3, 4]
    with pytest.raises(KeyError):
        ours["missing"]
    ours.clear()
    assert len(ours) == 0


# ---------------------------------------------------------------- ParameterList / Dict
@requires_torch
def test_parameter_list_wraps_tensors_and_repr():
    ours = nn.ParameterList([lucid.ones(2, 3), nn.Parameter(lucid.ones(2))])
    theirs = torch.nn.ParameterList([torch.ones(2, 3), torch.nn.Parameter(torch.ones(2))])
    assert all(type(p) is nn.Parameter for p in ours)
    ours.append(lucid.zeros(1))
    theirs.append(torch.zeros(1))
    _same_repr(ours, theirs)
    assert [n for n, _ in ours.named_parameters()] == ["0", "1", "2"]
    assert len(ours) == 3 and ours[-1].shape == (1,)
    ours[0] = lucid.zeros(4)
    assert ours[0].shape == (4,) and type(ours[0]) is nn.Parameter
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ours[3]


@requires_torch
def test_parameter_dict_matches_torch():
    ours = nn.ParameterDict({"b": lucid.ones(1), "a": lucid.ones(2)})
    theirs = torch.nn.ParameterDict({"b": torch.ones(1), "a": torch.ones(2)})
    assert list(ours.keys()) == list(theirs.keys())
    _same_repr(ours, theirs)
    ours["c"] = lucid.zeros(3)
    assert type(ours["c"]) is nn.Parameter and "c" in ours
    assert [n for n, _ in ours.named_parameters()] == ["a", "b", "c"]
    assert ours.pop("b").shape == (1,)
    assert len(ours) == 2 and ours.get("b") is None
    ours.clear()
    assert len(ours) == 0 and list(ours.parameters()) == []


def test_parameter_containers_train_with_gradients():
    params = nn.ParameterList([lucid.ones(2), lucid.ones(2)])
    (params[0] * params[1] * 3).sum().backward()
    np.testing.assert_array_equal(params[0].grad.numpy(), [3.0, 3.0])
