"""A KeyboardInterrupt inside backward(), optimizer.step() or a save propagates as itself, leaves
the engine's per-thread state as it was, and leaves a checkpoint old or new, never partial."""

from __future__ import annotations

import gc
import os
import weakref

import numpy as np
import pytest

import lucid
from lucid import _atomic
from lucid._core import observers, sentinel
from lucid._core.grad_mode import local_state
from lucid.autograd import Function
from lucid.utils import serialization


class InterruptingBackward(Function):
    """The identity, whose backward is where Ctrl-C lands while `interrupts` is set."""

    interrupts = True

    @staticmethod
    def forward(ctx, input):
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        if InterruptingBackward.interrupts:
            raise KeyboardInterrupt
        return grad_output


@pytest.fixture(autouse=True)
def _interrupts_on():
    InterruptingBackward.interrupts = True
    yield
    InterruptingBackward.interrupts = True


def _engine_state() -> tuple:
    return (
        lucid.is_grad_enabled(),
        local_state.backward_node,
        local_state.optimizer,
        observers.numpy_state.get(),
    )


def _leaf() -> lucid.Tensor:
    return lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)


def _assert_a_fresh_backward_works(x: lucid.Tensor) -> None:
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_keyboard_interrupt_in_a_functions_backward_propagates_and_leaves_state_clean() -> None:
    x = _leaf()
    before = _engine_state()
    loss = (InterruptingBackward.apply(x * 2) * 3).sum()
    with pytest.raises(KeyboardInterrupt):
        loss.backward()
    assert _engine_state() == before
    assert x.grad is None  # the interrupt came before the leaf
    _assert_a_fresh_backward_works(x)


def test_keyboard_interrupt_in_a_tensor_hook_propagates_and_leaves_state_clean() -> None:
    x = _leaf()
    before = _engine_state()
    hidden = x * 2

    def interrupt(grad):
        raise KeyboardInterrupt

    hidden.register_hook(interrupt)
    with pytest.raises(KeyboardInterrupt):
        (hidden * hidden).sum().backward()
    assert _engine_state() == before
    assert x.grad is None
    _assert_a_fresh_backward_works(x)


def test_an_interrupted_create_graph_backward_restores_no_grad() -> None:
    # create_graph switches grad mode on for the pass: the interrupt must switch it back.
    x = _leaf()
    loss = (InterruptingBackward.apply(x * 2) ** 2).sum()
    with lucid.no_grad():
        with pytest.raises(KeyboardInterrupt):
            loss.backward(create_graph=True)
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()
    assert local_state.backward_node is None


def test_an_interrupted_graph_is_freed_once_dropped() -> None:
    x = _leaf()
    hidden = x * 2
    loss = (InterruptingBackward.apply(hidden) * hidden).sum()
    reference = weakref.ref(hidden)
    del hidden
    with pytest.raises(KeyboardInterrupt) as caught:
        loss.backward()
    del loss, caught  # the traceback's frames hold the graph until then
    gc.collect()
    assert reference() is None


def test_an_interrupted_backward_with_retain_graph_can_run_again() -> None:
    x = _leaf()
    loss = (InterruptingBackward.apply(x * 2) * x).sum()
    with pytest.raises(KeyboardInterrupt):
        loss.backward(retain_graph=True)
    InterruptingBackward.interrupts = False
    loss.backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]  # d/dx 2x * x = 4x, counted once


def test_an_interrupted_backward_without_retain_graph_refuses_to_run_again() -> None:
    # As in PyTorch: the nodes that ran before the interrupt freed what they saved.
    x = _leaf()
    loss = (InterruptingBackward.apply(x * 2) * x).sum()
    with pytest.raises(KeyboardInterrupt):
        loss.backward()
    InterruptingBackward.interrupts = False
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_an_interrupted_scaled_backward_ends_the_scaled_state() -> None:
    x = _leaf()
    scaler = lucid.amp.GradScaler("cpu")
    loss = InterruptingBackward.apply(x * 2).sum()
    with pytest.raises(KeyboardInterrupt):
        scaler.scale(loss).backward()
    try:
        assert not sentinel.is_scaled_backward()
    finally:
        sentinel.clear_scaled_births()


def _model_and_optimizer() -> tuple[lucid.nn.Module, lucid.optim.Optimizer]:
    model = lucid.nn.Linear(3, 2)
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)
    model(lucid.ones(4, 3)).sum().backward()
    return model, optimizer


def test_keyboard_interrupt_in_an_optimizer_closure_leaves_state_clean() -> None:
    model, optimizer = _model_and_optimizer()
    before = _engine_state()

    def closure():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        optimizer.step(closure)
    assert _engine_state() == before
    weight = model.weight.detach().clone()
    optimizer.step()
    assert not lucid.equal(model.weight, weight)


def test_keyboard_interrupt_midway_through_an_update_leaves_state_clean(monkeypatch) -> None:
    model, optimizer = _model_and_optimizer()
    weight, bias = model.weight.detach().clone(), model.bias.detach().clone()
    before = _engine_state()
    original_add = lucid.Tensor.add_
    calls = []

    def add_then_interrupt(self, *args, **kwargs):
        calls.append(self)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original_add(self, *args, **kwargs)

    monkeypatch.setattr(lucid.Tensor, "add_", add_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        optimizer.step()  # SGD's no_grad update, interrupted between the two parameters
    monkeypatch.undo()
    assert _engine_state() == before
    # As in PyTorch the step is not undone: the weight moved, the bias did not.
    assert not lucid.equal(model.weight, weight) and lucid.equal(model.bias, bias)
    optimizer.step()
    assert not lucid.equal(model.bias, bias)
    assert model.weight.grad_fn is None and model.weight.is_leaf


def _checkpoint(value: float) -> dict:
    return {"weight": lucid.full((256, 256), value), "step": lucid.tensor([int(value)])}


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def _interrupt_after(function):
    def call_then_interrupt(*args, **kwargs):
        function(*args, **kwargs)
        raise KeyboardInterrupt

    return call_then_interrupt


def _create_then_interrupt(path, flags, mode=0o777, *, dir_fd=None, _open=os.open):
    # Ctrl-C landing as os.open returns, before the caller holds the descriptor.
    os.close(_open(path, flags, mode, dir_fd=dir_fd))
    raise KeyboardInterrupt


def _write_half_then_interrupt(stream, header, arrays) -> None:
    stream.write(header)
    stream.write(memoryview(arrays[0].reshape(-1)).cast("B")[: arrays[0].nbytes // 2])
    raise KeyboardInterrupt


# Where Ctrl-C lands in a save, and whether the new checkpoint is in place once it has.
INTERRUPTED_SAVES = {
    "as the temporary is created": (_atomic.os, "open", _create_then_interrupt, False),
    "mid-write": (serialization, "_write", _write_half_then_interrupt, False),
    "in fsync": (_atomic.os, "fsync", _interrupt, False),
    "before the rename": (_atomic.os, "replace", _interrupt, False),
    "right after the rename": (_atomic.os, "replace", _interrupt_after(os.replace), True),
    "syncing the folder": (_atomic, "_sync_folder", _interrupt, True),
    "removing stale temporaries": (_atomic, "_remove_stale_temporaries", _interrupt, True),
}


@pytest.mark.parametrize("where", INTERRUPTED_SAVES)
def test_an_interrupted_save_leaves_the_old_checkpoint_or_the_new_one_and_no_temporary(
    tmp_path, monkeypatch, where
) -> None:
    path = tmp_path / "model.safetensors"
    lucid.save(_checkpoint(1.0), path)
    owner, name, replacement, is_replaced = INTERRUPTED_SAVES[where]
    monkeypatch.setattr(owner, name, replacement)
    with pytest.raises(KeyboardInterrupt):
        lucid.save(_checkpoint(2.0), path)
    monkeypatch.undo()
    expected = 2.0 if is_replaced else 1.0
    loaded = lucid.load(path)
    assert loaded["step"].tolist() == [int(expected)]
    assert np.all(loaded["weight"].numpy() == expected)
    assert os.listdir(tmp_path) == [path.name]
