"""Generic checks for every row of the optimizer catalogue (tests/optim/optimizer_catalogue.py).

For each configuration of each row: the trajectory against torch.optim (parameters after every
step, then the state dict: param_groups equal, state within tolerance), a state_dict round
trip that continues the trajectory exactly, and a step that leaves a parameter without a
gradient (and its state) alone, as torch's does. For each invalid construction of a row:
PyTorch's error type and message. Every lucid.optim optimizer has a row or a reason.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.optim
from tests.optim.optimizer_catalogue import (
    ROWS,
    UNCATALOGUED_OPTIMIZERS,
    OptimizerCase,
    loss,
    problem,
)
from tests.torch_oracle import TORCH_MISSING

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def torch_oracle() -> Any:
    return pytest.importorskip("torch", reason=TORCH_MISSING)


def _params(check: str, with_configs: bool = True) -> list[Any]:
    """pytest params (row, config) or (row, index of an error), a strict expected failure where
    the row lists a known gap for `check`."""
    params = []
    for row in ROWS:
        gap = row.known_gaps.get(check)
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        items = row.configs if with_configs else row.errors
        for index, item in enumerate(items):
            params.append(pytest.param(row, item, id=f"{row.name}-{index}", marks=marks))
    return params


def _tensors(library: Any, arrays: Sequence[np.ndarray]) -> list[Any]:
    return [library.tensor(array, requires_grad=True) for array in arrays]


def _start(row: OptimizerCase, rng: np.random.Generator) -> tuple[list[np.ndarray], Any, Any]:
    weight, bias, inputs, targets = problem(rng)
    return ([weight] if row.matrix_only else [weight, bias]), inputs, targets


def _step(row: OptimizerCase, library: Any, optimizer: Any, params: list[Any], data: Any) -> Any:
    """One optimizer step on the problem's loss, through a closure where the row needs one."""

    def closure() -> Any:
        optimizer.zero_grad()
        value = loss(library, params, *data)
        value.backward()
        return value

    if row.uses_closure:
        return optimizer.step(closure)
    closure()
    return optimizer.step()


def _assert_state_close(ours: Any, theirs: Any, row: OptimizerCase, where: str) -> None:
    """An optimizer state value: tensors within the row's tolerance, lists item by item,
    numbers within it too."""
    if hasattr(theirs, "numpy"):
        np.testing.assert_allclose(
            np.asarray(ours.numpy()),
            theirs.detach().numpy(),
            rtol=row.rtol,
            atol=row.atol,
            err_msg=where,
        )
    elif isinstance(theirs, list | tuple):
        assert len(ours) == len(theirs), where
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            _assert_state_close(mine, other, row, f"{where}[{index}]")
    elif isinstance(theirs, float):
        assert float(ours) == pytest.approx(theirs, rel=row.rtol, abs=row.atol), where
    else:
        assert ours == theirs, where


# ------------------------------------------------------------------------------------ tests
@pytest.mark.parametrize(("row", "config"), _params("trajectory"))
def test_trajectory_matches_torch(row: OptimizerCase, config: dict, torch_oracle: Any, rng) -> None:
    arrays, *data = _start(row, rng)
    ours, theirs = _tensors(lucid, arrays), _tensors(torch_oracle, arrays)
    lucid_optimizer = getattr(lucid.optim, row.name)(ours, **config)
    torch_optimizer = getattr(torch_oracle.optim, row.name)(theirs, **config, **row.torch_only)
    for step in range(row.steps):
        our_loss = _step(row, lucid, lucid_optimizer, ours, data)
        their_loss = _step(row, torch_oracle, torch_optimizer, theirs, data)
        if row.uses_closure:
            assert our_loss.item() == pytest.approx(their_loss.item(), rel=row.rtol)
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            np.testing.assert_allclose(
                mine.detach().numpy(),
                other.detach().numpy(),
                rtol=row.rtol,
                atol=row.atol,
                err_msg=f"parameter {index} after step {step + 1}",
            )
    our_state, their_state = lucid_optimizer.state_dict(), torch_optimizer.state_dict()
    unset = dict.fromkeys(row.torch_only)  # what torch alone was given reads None in lucid
    assert our_state["param_groups"] == [{**g, **unset} for g in their_state["param_groups"]]
    assert our_state["state"].keys() == their_state["state"].keys()
    for index, state in their_state["state"].items():
        assert list(our_state["state"][index]) == list(state)
        for key, value in state.items():
            _assert_state_close(our_state["state"][index][key], value, row, f"state {index} {key}")


@pytest.mark.parametrize(("row", "config"), _params("round_trip"))
def test_state_dict_round_trip_continues_the_trajectory(
    row: OptimizerCase, config: dict, rng
) -> None:
    arrays, *data = _start(row, rng)
    params = _tensors(lucid, arrays)
    optimizer = getattr(lucid.optim, row.name)(params, **config)
    for _ in range(3):
        _step(row, lucid, optimizer, params, data)
    copies = [param.detach().clone().requires_grad_() for param in params]
    # other hyperparameters, which loading must replace
    restored = getattr(lucid.optim, row.name)(copies, lr=123.0)
    restored.load_state_dict(optimizer.state_dict())
    assert restored.param_groups[0]["lr"] == optimizer.param_groups[0]["lr"]
    assert restored.param_groups[0]["params"] == copies
    for _ in range(2):
        _step(row, lucid, optimizer, params, data)
        _step(row, lucid, restored, copies, data)
    # Loading casts every state tensor but `step` to the parameter's dtype, as PyTorch does, so
    # NAdam's mu_product and ASGD's eta and mu resume in float64 and differ in the last digits.
    rtol = 1e-7 if row.name in ("NAdam", "ASGD") else 0
    for ours, theirs in zip(params, copies, strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol)


@pytest.mark.parametrize(("row", "config"), _params("skips"))
def test_step_skips_a_parameter_without_gradient(
    row: OptimizerCase, config: dict, torch_oracle: Any, rng
) -> None:
    """The second parameter gets no gradient: it stays, and neither library makes its state."""
    arrays, *data = _start(row, rng)
    frozen = rng.standard_normal(arrays[0].shape)
    states = []
    for library in (lucid, torch_oracle):
        params = _tensors(library, [*arrays, frozen])
        extra = row.torch_only if library is torch_oracle else {}
        optimizer = getattr(library.optim, row.name)(params, **config, **extra)
        for _ in range(2):
            _step(row, library, optimizer, params[:-1], data)
        np.testing.assert_array_equal(params[-1].detach().numpy(), frozen)
        states.append(sorted(optimizer.state_dict()["state"]))
    assert states[0] == states[1]


@pytest.mark.parametrize(("row", "kwargs"), _params("errors", with_configs=False))
def test_invalid_argument_raises_torch_error(
    row: OptimizerCase, kwargs: dict, torch_oracle: Any
) -> None:
    shape = (2, 3) if row.matrix_only else (2,)
    with pytest.raises(Exception) as expected:  # noqa: PT011  (torch's type, compared below)
        getattr(torch_oracle.optim, row.name)(
            [torch_oracle.zeros(shape, requires_grad=True)], **kwargs
        )
    with pytest.raises(Exception) as error:  # noqa: PT011
        getattr(lucid.optim, row.name)([lucid.zeros(shape, requires_grad=True)], **kwargs)
    assert error.type.__name__ == expected.type.__name__
    assert str(error.value) == str(expected.value).replace("torch", "lucid")


def test_every_optimizer_has_a_row_or_a_reason() -> None:
    public = sorted(
        name
        for name in lucid.optim.__all__
        if inspect.isclass(getattr(lucid.optim, name))
        and issubclass(getattr(lucid.optim, name), lucid.optim.Optimizer)
        and name != "Optimizer"
    )
    with_rows = {row.name for row in ROWS}
    missing = [name for name in public if name not in with_rows | UNCATALOGUED_OPTIMIZERS.keys()]
    assert not missing, f"lucid.optim optimizers with no row and no reason: {' '.join(missing)}"
    stale = sorted(
        (set(UNCATALOGUED_OPTIMIZERS) & with_rows) | (set(UNCATALOGUED_OPTIMIZERS) - set(public))
    )
    assert not stale, f"stale UNCATALOGUED_OPTIMIZERS entries: {' '.join(stale)}"
    for name, (_, test) in UNCATALOGUED_OPTIMIZERS.items():
        path = REPOSITORY / test
        assert path.is_file() and re.search(rf"\b{name}\b", path.read_text()), (name, test)
