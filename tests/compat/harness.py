"""Runs one PyTorch program twice: once with `torch` meaning PyTorch, once meaning lucid.

A program under tests/compat/programs/ is ordinary PyTorch code: it says `import torch`,
`import torch.nn as nn`, `from torch.utils.data import DataLoader`, and so on. `load` executes
its source into a fresh module whose `__import__` maps `torch` and `torch.*` onto the framework
under test; nothing else differs between the two runs.

The program's interface:

    make_model() -> nn.Module        # the harness copies PyTorch's initial weights into lucid's
    train(model, data, steps)        # a generator; after each `loss.backward()` it yields the
                                     # loss, before `optimizer.step()`; a last bare `yield`
                                     # follows the last step
    evaluate(model, data) -> dict    # optional; tensors computed after training, compared

`compare` steps the two generators in lockstep and asserts, at every yield, that the losses,
the gradients of every parameter, and the parameters and buffers (i.e. after the previous
step) agree.
"""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import lucid

PROGRAMS = Path(__file__).parent / "programs"
TOLERANCE = {"float64": 1e-10, "float32": 1e-5}


def _importer(framework: str) -> Callable[..., Any]:
    real_import = builtins.__import__

    def _import(name: str, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            name = framework + name[len("torch") :]
        return real_import(name, globals, locals, fromlist, level)

    return _import


def load(program: str, framework: str) -> types.ModuleType:
    """Executes programs/<program>.py with `torch` bound to `framework` ("torch" or "lucid")."""
    path = PROGRAMS / f"{program}.py"
    module = types.ModuleType(f"compat_{program}_{framework}")
    module.__file__ = str(path)
    module.__builtins__ = {**vars(builtins), "__import__": _importer(framework)}
    sys.modules[module.__name__] = module  # dataclasses and pickling look the module up
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def to_numpy(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.detach().cpu().numpy())


def copy_weights(torch_model: Any, lucid_model: Any) -> None:
    state = {k: lucid.tensor(to_numpy(v).copy()) for k, v in torch_model.state_dict().items()}
    lucid_model.load_state_dict(state)


def _assert_close(actual: np.ndarray, expected: np.ndarray, tol: float, what: str) -> None:
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=what)


def _check_model(torch_model: Any, lucid_model: Any, tol: float, step: int, grads: bool) -> None:
    expected = dict(torch_model.named_parameters())
    actual = dict(lucid_model.named_parameters())
    assert list(actual) == list(expected), "parameter names differ"
    for name, p in expected.items():
        q = actual[name]
        _assert_close(to_numpy(q), to_numpy(p), tol, f"step {step}: parameter {name}")
        if grads:
            assert (q.grad is None) == (p.grad is None), f"step {step}: {name}.grad presence"
            if p.grad is not None:
                _assert_close(to_numpy(q.grad), to_numpy(p.grad), tol, f"step {step}: {name}.grad")
    expected_buffers = dict(torch_model.named_buffers())
    actual_buffers = dict(lucid_model.named_buffers())
    assert list(actual_buffers) == list(expected_buffers), "buffer names differ"
    for name, b in expected_buffers.items():
        _assert_close(
            to_numpy(actual_buffers[name]), to_numpy(b), tol, f"step {step}: buffer {name}"
        )


def _lockstep(expected: Iterator[Any], actual: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    sentinel = object()
    while True:
        e, a = next(expected, sentinel), next(actual, sentinel)
        assert (e is sentinel) == (a is sentinel), (
            "the two runs yielded a different number of times"
        )
        if e is sentinel:
            return
        yield e, a


def compare(
    program: str, data: dict[str, np.ndarray], steps: int, dtype: str = "float64"
) -> list[float]:
    """Trains `program` for `steps` steps under both frameworks; returns PyTorch's losses."""
    import torch

    tol = TOLERANCE[dtype]
    ref, ours = load(program, "torch"), load(program, "lucid")
    torch_default, lucid_default = torch.get_default_dtype(), lucid.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    lucid.set_default_dtype(getattr(lucid, dtype))
    try:
        torch.manual_seed(0)
        torch_model = ref.make_model()
        lucid_model = ours.make_model()
        copy_weights(torch_model, lucid_model)
        data = {k: v.astype(dtype) if v.dtype.kind == "f" else v for k, v in data.items()}
        losses = []
        runs = _lockstep(
            ref.train(torch_model, dict(data), steps), ours.train(lucid_model, dict(data), steps)
        )
        for step, (e, a) in enumerate(runs):
            _check_model(torch_model, lucid_model, tol, step, grads=e is not None)
            if e is not None:
                _assert_close(to_numpy(a), to_numpy(e), tol, f"step {step}: loss")
                losses.append(float(to_numpy(e)))
        assert len(losses) == steps
        if hasattr(ref, "evaluate"):
            expected, actual = (
                ref.evaluate(torch_model, dict(data)),
                ours.evaluate(lucid_model, dict(data)),
            )
            assert list(actual) == list(expected), "evaluate() returned different keys"
            for key, value in expected.items():
                _assert_close(to_numpy(actual[key]), to_numpy(value), tol, f"evaluate: {key}")
        return losses
    finally:
        torch.set_default_dtype(torch_default)
        lucid.set_default_dtype(lucid_default)
