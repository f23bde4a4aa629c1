"""Shared helpers for torch.nn parity tests: copy torch state into lucid, compare results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lucid
import lucid.optim
from tests.torch_oracle import TORCH_AVAILABLE, torch

if TORCH_AVAILABLE:
    # torch's intra-op thread pool spins on small tensors when the cores are busy (tens of ms a
    # call)
    torch.set_num_threads(1)

# (rtol, atol) per dtype name: float64 must agree to rounding, float32 loosely. Deep stacks
# (attention, transformer layers) accumulate float32 rounding in their gradients beyond one
# op's; their tests pass "float32_deep" as the dtype name.
TOLERANCES = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6), "float32_deep": (1e-4, 1e-5)}

DTYPES = {
    "float64": (lucid.float64, torch.float64, np.float64),
    "float32": (lucid.float32, torch.float32, np.float32),
}


def to_numpy(value: Any) -> np.ndarray:
    """A NumPy copy of a lucid tensor, torch tensor or array."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, lucid.Tensor):
        return np.array(value.detach().numpy())
    return np.asarray(value)


def copy_state(torch_module: torch.nn.Module, lucid_module: lucid.nn.Module) -> None:
    """Load every parameter and buffer of `torch_module` into `lucid_module` (strict)."""
    state = {k: lucid.tensor(to_numpy(v)) for k, v in torch_module.state_dict().items()}
    lucid_module.load_state_dict(state)


def assert_close(actual: Any, expected: Any, rtol: float, atol: float, what: str = "") -> None:
    """Compare a lucid result with a torch (or NumPy) one, shapes included.

    `atol` is scaled by the largest magnitude in `expected` (when above 1): a gradient summed
    from large terms that cancel carries rounding error of the terms' size, not the result's.
    """
    a, e = to_numpy(actual), to_numpy(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    finite = np.abs(e[np.isfinite(e)]) if e.dtype.kind in "fc" else np.abs(e)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol * scale, err_msg=what)


def _is_float(array: np.ndarray) -> bool:
    return array.dtype.kind == "f"


def _flat_outputs(output: Any) -> list:
    if isinstance(output, tuple | list):
        return [item for item in output if item is not None]
    return [output]


def check_forward_backward(
    torch_module: torch.nn.Module,
    lucid_module: lucid.nn.Module,
    inputs: Sequence[np.ndarray],
    dtype: str,
    kwargs: dict | None = None,
    copy: bool = True,
    grad_inputs: bool = True,
) -> tuple[list, list]:
    """Run both modules on the same inputs; compare outputs, input grads and parameter grads.

    Float arrays in `inputs` become tensors that require grad (when `grad_inputs`); integer
    and bool arrays are passed as plain tensors. `kwargs` values that are arrays become
    tensors without grad. Each output is reduced by a random-weighted sum before backward so
    every output element's gradient is checked. Returns (lucid outputs, torch outputs).
    """
    rtol, atol = TOLERANCES[dtype]
    if copy:
        copy_state(torch_module, lucid_module)
    kwargs = kwargs or {}
    torch_inputs = [torch.tensor(a, requires_grad=grad_inputs and _is_float(a)) for a in inputs]
    lucid_inputs = [lucid.tensor(a, requires_grad=grad_inputs and _is_float(a)) for a in inputs]
    torch_kwargs = {
        k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()
    }
    lucid_kwargs = {
        k: lucid.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()
    }
    torch_out = _flat_outputs(torch_module(*torch_inputs, **torch_kwargs))
    lucid_out = _flat_outputs(lucid_module(*lucid_inputs, **lucid_kwargs))
    assert len(torch_out) == len(lucid_out)
    rng = np.random.default_rng(1234)
    torch_loss, lucid_loss = 0, 0
    for index, (lo, to) in enumerate(zip(lucid_out, torch_out, strict=True)):
        assert_close(lo, to, rtol, atol, f"output {index}")
        assert str(lo.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
        if to.requires_grad:
            weights = rng.standard_normal(tuple(to.shape)).astype(to_numpy(to).dtype)
            torch_loss = torch_loss + (to * torch.tensor(weights)).sum()
            lucid_loss = lucid_loss + (lo * lucid.tensor(weights)).sum()
    if isinstance(torch_loss, torch.Tensor):
        torch_loss.backward()
        lucid_loss.backward()
        for index, (li, ti) in enumerate(zip(lucid_inputs, torch_inputs, strict=True)):
            if ti.requires_grad:
                assert_close(li.grad, ti.grad, rtol, atol, f"grad of input {index}")
        compare_grads(torch_module, lucid_module, rtol, atol)
    return lucid_out, torch_out


def compare_grads(
    torch_module: torch.nn.Module, lucid_module: lucid.nn.Module, rtol: float, atol: float
) -> None:
    """Every parameter's .grad matches (both None, or equal)."""
    lucid_params = dict(lucid_module.named_parameters())
    torch_params = dict(torch_module.named_parameters())
    assert list(lucid_params) == list(torch_params)
    for name, tp in torch_params.items():
        lp = lucid_params[name]
        if tp.grad is None:
            assert lp.grad is None, f"{name}: lucid has a grad, torch has none"
        else:
            assert lp.grad is not None, f"{name}: lucid grad is None"
            assert_close(lp.grad, tp.grad, rtol, atol, f"grad of {name}")


def compare_state(
    torch_module: torch.nn.Module, lucid_module: lucid.nn.Module, rtol: float, atol: float
) -> None:
    """Same state_dict keys (in order) and values."""
    torch_state = torch_module.state_dict()
    lucid_state = lucid_module.state_dict()
    assert list(lucid_state) == list(torch_state)
    for name, value in torch_state.items():
        assert_close(lucid_state[name], value, rtol, atol, name)


def check_sgd_steps(
    torch_module: torch.nn.Module,
    lucid_module: lucid.nn.Module,
    make_inputs: Callable[[], Sequence[np.ndarray]],
    dtype: str,
    steps: int = 3,
    lr: float = 0.1,
    copy: bool = True,
) -> None:
    """Train both modules `steps` SGD steps on the same inputs; compare all state after each."""
    rtol, atol = TOLERANCES[dtype]
    # a few steps compound rounding differences, so allow a little more than one pass
    rtol, atol = rtol * 10, atol * 10
    if copy:
        copy_state(torch_module, lucid_module)
    torch_opt = torch.optim.SGD(torch_module.parameters(), lr=lr)
    lucid_opt = lucid.optim.SGD(lucid_module.parameters(), lr=lr)
    rng = np.random.default_rng(4321)
    for _ in range(steps):
        inputs = make_inputs()
        torch_opt.zero_grad()
        lucid_opt.zero_grad()
        torch_out = _flat_outputs(torch_module(*[torch.tensor(a) for a in inputs]))[0]
        lucid_out = _flat_outputs(lucid_module(*[lucid.tensor(a) for a in inputs]))[0]
        weights = rng.standard_normal(tuple(torch_out.shape)).astype(to_numpy(torch_out).dtype)
        (torch_out * torch.tensor(weights)).sum().backward()
        (lucid_out * lucid.tensor(weights)).sum().backward()
        torch_opt.step()
        lucid_opt.step()
        compare_state(torch_module, lucid_module, rtol, atol)


def check_repr_and_keys(torch_module: torch.nn.Module, lucid_module: lucid.nn.Module) -> None:
    """repr and state_dict keys match torch's."""
    assert repr(lucid_module) == repr(torch_module)
    assert list(lucid_module.state_dict()) == list(torch_module.state_dict())
