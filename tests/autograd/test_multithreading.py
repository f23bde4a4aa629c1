"""set_multithreading_enabled: a process-wide switch, set at once and restored by `with`."""

from __future__ import annotations

import pytest

import lucid
from lucid.autograd.grad_mode import _is_multithreading_enabled
from tests.torch_oracle import requires_torch, torch


@pytest.fixture(autouse=True)
def _restore():
    yield
    lucid.autograd.set_multithreading_enabled(True)


def _trace(autograd, is_enabled):
    """The setting after each way of using the switch."""
    seen = [is_enabled()]
    with autograd.set_multithreading_enabled(False):
        seen.append(is_enabled())
    seen.append(is_enabled())
    autograd.set_multithreading_enabled(False)
    seen.append(is_enabled())
    autograd.set_multithreading_enabled(True)

    @autograd.set_multithreading_enabled(False)
    def decorated():
        return is_enabled()

    seen += [decorated(), is_enabled()]
    autograd.set_multithreading_enabled(True)
    autograd.set_multithreading_enabled(False).clone()
    seen.append(is_enabled())
    autograd.set_multithreading_enabled(True)
    return seen


@requires_torch
def test_setting_follows_torch():
    expected = _trace(torch.autograd, torch._C._is_multithreading_enabled)
    actual = _trace(lucid.autograd, _is_multithreading_enabled)
    assert actual == expected


def test_backward_runs_the_same_with_the_switch_off():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with lucid.autograd.set_multithreading_enabled(False):
        (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
