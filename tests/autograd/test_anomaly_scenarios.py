"""The twelve scenarios of issue 3: each NaN/Inf is reported at its birth (op, line, phase, how).

Every culprit call carries a trailing `# <marker>` comment; `_line(marker)` finds its line
number in this file, so the tests check the exact line the report names.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.autograd import (
    AnomalyError,
    AnomalyEvent,
    Function,
    NonFiniteWarning,
    detect_anomaly,
)
from tests.markers import marked_line
from tests.torch_oracle import requires_torch, torch

pytestmark = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled", "ignore:Error detected in"
)

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(__file__, marker)


def _assert_born(
    event: AnomalyEvent,
    marker: str,
    *,
    op: str,
    node_name: str | None = None,
    phase: str,
    kind: str,
    mechanism: str | None,
    created: bool = True,
) -> None:
    """The report names this op at this file's marked line, in this phase, by this mechanism."""
    assert event.op == op
    if node_name is not None:
        assert event.node_name == node_name
    assert event.phase == phase
    assert event.kind == kind
    assert event.mechanism == mechanism
    assert event.created is created
    assert event.filename is not None and Path(event.filename).resolve() == _THIS_FILE
    assert event.lineno == _line(marker)
    assert event.location == f"{event.filename}:{event.lineno}"


def _reset_sentinel() -> None:
    from lucid._core import sentinel

    sentinel.reset_sentinel()


# 1 ---------------------------------------------------------------------------------------
def test_01_log_of_negative_is_reported_at_the_log_line_not_later():
    x = lucid.tensor([-1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            scaled = x * 2.0
            logged = lucid.log(scaled)  # <s01-log>
            loss = (logged * 3.0 - 1.0).mean()
            loss.backward()
    _assert_born(
        error.value.event, "s01-log", op="log", node_name="LogBackward0", phase="forward",
        kind="nan", mechanism="invalid operation",
    )  # fmt: skip


# 2 ---------------------------------------------------------------------------------------
def test_02_zero_over_zero_in_hand_written_normalisation_of_a_constant_batch():
    x = lucid.tensor([3.0, 3.0, 3.0, 3.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            normalised = (x - x.mean()) / x.std()  # <s02-div>
            normalised.pow(2).sum().backward()
    _assert_born(
        error.value.event, "s02-div", op="div", node_name="DivBackward0", phase="forward",
        kind="nan", mechanism="invalid operation",
    )  # fmt: skip


# 3 ---------------------------------------------------------------------------------------
def test_03_sqrt_of_zero_gives_inf_in_backward():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        root = lucid.sqrt(x)  # <s03-sqrt>
        with pytest.raises(AnomalyError) as error:
            root.sum().backward()
    _assert_born(
        error.value.event, "s03-sqrt", op="sqrt", node_name="SqrtBackward0", phase="backward",
        kind="inf", mechanism="division by zero",
    )  # fmt: skip
    assert str(error.value).splitlines()[0] == (
        "Function 'SqrtBackward0' returned inf values in its 0th output."
    )


@requires_torch
def test_03_pytorch_misses_the_inf_lucid_reports():
    t = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with torch.autograd.detect_anomaly():
            torch.sqrt(t).sum().backward()
    assert torch.isinf(t.grad[0])


# 4 ---------------------------------------------------------------------------------------
def test_04_where_guarding_sqrt_gives_nan_born_in_backward():
    # At x = 0 the masked branch is finite (sqrt(0) = 0) and the forward is clean; backward
    # multiplies the zero gradient of the masked entry by 1/(2 sqrt(0)) = inf: 0 * inf = NaN.
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        guarded = lucid.where(x > 0, x.sqrt(), 0.0)  # <s04-where>
        with pytest.raises(AnomalyError) as error:
            guarded.sum().backward()
    _assert_born(
        error.value.event, "s04-where", op="sqrt", node_name="SqrtBackward0", phase="backward",
        kind="nan", mechanism="invalid operation",
    )  # fmt: skip
    assert str(error.value).splitlines()[0] == (
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    )
    traceback_text = "\n".join(error.value.event.forward_traceback)
    assert f"line {_line('s04-where')}" in traceback_text


def test_04_where_guarding_sqrt_of_negative_reports_the_forward_birth_first():
    # With negative x the NaN is already born in the forward sqrt (masked by where):
    # lucid reports it there, earlier than PyTorch's backward report.
    x = lucid.tensor([-1.0, 4.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            guarded = lucid.where(x > 0, x.sqrt(), 0.0)  # <s04-negative>
            guarded.sum().backward()
    _assert_born(
        error.value.event, "s04-negative", op="sqrt", node_name="SqrtBackward0",
        phase="forward", kind="nan", mechanism="invalid operation",
    )  # fmt: skip


def test_04_where_guarding_sqrt_of_negative_without_forward_checks_fires_in_backward():
    x = lucid.tensor([-1.0, 4.0], requires_grad=True)
    with detect_anomaly(check_forward=False):
        guarded = lucid.where(x > 0, x.sqrt(), 0.0)  # <s04-unchecked>
        with pytest.raises(AnomalyError) as error:
            guarded.sum().backward()
    event = error.value.event
    assert (event.op, event.node_name, event.phase, event.kind) == (
        "sqrt", "SqrtBackward0", "backward", "nan",
    )  # fmt: skip
    assert event.created is False, "the NaN came from the saved forward output"
    assert event.lineno == _line("s04-unchecked")


# 5 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype, large", [(lucid.float32, 100.0), (lucid.float16, 12.0)], ids=["float32", "float16"]
)
def test_05_exp_overflows_to_inf(dtype, large):
    x = lucid.tensor([1.0, large], dtype=dtype, requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            grown = x.exp()  # <s05-exp>
            grown.sum().backward()
    _assert_born(
        error.value.event, "s05-exp", op="exp", node_name="ExpBackward0", phase="forward",
        kind="inf", mechanism="overflow",
    )  # fmt: skip
    assert str(dtype).split(".")[-1] in str(error.value.event.inputs[0]["dtype"])


# 6 ---------------------------------------------------------------------------------------
def test_06_chained_sqrt_blames_the_first_sqrt():
    x = lucid.tensor([1.0, 3.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            y = lucid.sqrt(x - 2.0)  # <s06-first>
            z = lucid.sqrt(y)  # <s06-second>
            z.sum().backward()
    _assert_born(
        error.value.event, "s06-first", op="sqrt", node_name="SqrtBackward0", phase="forward",
        kind="nan", mechanism="invalid operation",
    )  # fmt: skip
    assert error.value.event.lineno != _line("s06-second")


# 7 ---------------------------------------------------------------------------------------
def _opposite_infinite_branches(x: lucid.Tensor) -> lucid.Tensor:
    """h = relu(x) feeds two sqrt branches; at h = 0 their gradients are +inf and -inf."""
    h = lucid.relu(x)  # <s07-fanout>
    return h.sqrt() - h.sqrt()


def test_07_inf_minus_inf_born_only_in_gradient_accumulation():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    # check_inf=False: the two infinite branch gradients pass; their sum is the first NaN.
    with detect_anomaly(check_inf=False):
        out = _opposite_infinite_branches(x)
        with pytest.raises(AnomalyError) as error:
            out.sum().backward()
    _assert_born(
        error.value.event, "s07-fanout", op="relu", node_name="ReluBackward0",
        phase="accumulation", kind="nan", mechanism="invalid operation",
    )  # fmt: skip


def test_07_with_inf_checks_the_first_infinite_branch_is_reported():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        h = lucid.relu(x)
        out = h.sqrt() - h.sqrt()  # <s07-branches>
        with pytest.raises(AnomalyError) as error:
            out.sum().backward()
    _assert_born(
        error.value.event, "s07-branches", op="sqrt", node_name="SqrtBackward0",
        phase="backward", kind="inf", mechanism="division by zero",
    )  # fmt: skip


# 8 ---------------------------------------------------------------------------------------
def test_08_softmax_over_a_fully_masked_row():
    scores = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    mask = lucid.tensor([[False, True], [True, True]])
    with detect_anomaly():
        masked = scores.masked_fill(mask, float("-inf"))  # explicit -inf: no anomaly
        with pytest.raises(AnomalyError) as error:
            attention = lucid.softmax(masked, dim=-1)  # <s08-softmax>
            attention.sum().backward()
    _assert_born(
        error.value.event, "s08-softmax", op="softmax", node_name="SoftmaxBackward0",
        phase="forward", kind="nan", mechanism="invalid operation",
    )  # fmt: skip


# 9 ---------------------------------------------------------------------------------------
class BadGrad(Function):
    """Identity whose backward computes 0/0."""

    @staticmethod
    def forward(ctx, input):
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        zero = grad_output - grad_output
        return zero / zero  # <s09-nan-in-backward>


def test_09_custom_backward_that_returns_nan():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = BadGrad.apply(x)  # <s09-nan-apply>
        with pytest.raises(AnomalyError) as error:
            (y * 2.0).sum().backward()
    # The line inside the user's backward where the value was born, with the forward call
    # as context.
    _assert_born(
        error.value.event, "s09-nan-in-backward", op="BadGrad", node_name="BadGradBackward",
        phase="backward", kind="nan", mechanism="invalid operation",
    )  # fmt: skip
    assert error.value.event.forward_location == f"{__file__}:{_line('s09-nan-apply')}"
    assert str(error.value).splitlines()[0] == (
        "Function 'BadGradBackward' returned nan values in its 0th output."
    )


class _Refused(Exception):
    pass


class Refusing(Function):
    """Identity whose backward raises."""

    @staticmethod
    def forward(ctx, input):
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        raise _Refused("no gradient today")


def test_09_custom_backward_that_raises():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = Refusing.apply(x)  # <s09-raise-apply>
        with pytest.warns(UserWarning, match="Error detected in RefusingBackward") as record:
            with pytest.raises(_Refused, match="no gradient today"):
                y.sum().backward()
    text = "\n".join(str(w.message) for w in record)
    assert "Traceback of forward call that caused the error:" in text
    assert f'File "{__file__}", line {_line("s09-raise-apply")}' in text


# 10 --------------------------------------------------------------------------------------
def test_10_nan_in_the_input_batch_is_reported_as_coming_from_the_input():
    batch = lucid.tensor([[1.0, float("nan")], [0.5, 2.0]])
    weight = lucid.tensor([[0.5], [1.0]], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            hidden = batch @ weight  # <s10-first-use>
            hidden.relu().sum().backward()
    event = error.value.event
    assert (event.op, event.phase) == ("input", "input"), "data NaN is received, not born"
    assert event.module_path is None
    assert event.kind == "nan"
    assert event.created is False
    assert event.mechanism is None
    assert event.lineno == _line("s10-first-use")
    assert Path(event.filename).resolve() == _THIS_FILE
    assert "during the forward pass" not in str(error.value).splitlines()[0]
    assert any(stats["nan_count"] == 1 for stats in event.inputs)


# 11 --------------------------------------------------------------------------------------
def test_11_nan_in_double_backward_reports_the_parent_chain():
    # d/dx x^1.5 = 1.5 x^0.5 is finite at 0, but its own backward needs x^-0.5 = inf there;
    # with a zero incoming gradient that becomes 0 * inf = NaN in the double backward.
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly(check_inf=False):
        y = x**1.5  # <s11-outer>
        (slope,) = lucid.autograd.grad(y.sum(), x, create_graph=True)  # <s11-create-graph>
        with pytest.raises(AnomalyError) as error:
            lucid.autograd.grad(slope, x, grad_outputs=lucid.zeros_like(slope))
    _assert_born(
        error.value.event, "s11-create-graph", op="pow", node_name="PowBackward0",
        phase="backward", kind="nan", mechanism="invalid operation",
    )  # fmt: skip
    parents = error.value.event.parents
    assert parents, "a node made during a create_graph backward names its parents"
    outermost = parents[-1]
    assert "PowBackward0" in outermost
    assert f"{__file__}:{_line('s11-outer')}" in outermost
    assert outermost in str(error.value)


# 12 --------------------------------------------------------------------------------------
def _masked_attention_loss(scores: lucid.Tensor) -> lucid.Tensor:
    # Every row keeps at least one finite score: the -inf entries get probability 0.
    mask = lucid.tensor([[False, True, True], [True, False, False]])
    attention = lucid.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    values = lucid.tensor([[1.0], [2.0], [3.0]])
    return (attention @ values).pow(2).sum()


def test_12_sentinel_is_silent_on_masked_softmax_with_a_finite_entry_per_row():
    _reset_sentinel()
    scores = lucid.tensor([[0.5, 1.0, -2.0], [3.0, 0.0, 1.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonFiniteWarning)
        loss = _masked_attention_loss(scores)
        loss.backward()
    assert np.isfinite(loss.item())
    assert np.isfinite(scores.grad.numpy()).all()


def test_12_anomaly_mode_does_not_raise_on_masked_softmax_with_a_finite_entry_per_row():
    scores = lucid.tensor([[0.5, 1.0, -2.0], [3.0, 0.0, 1.0]], requires_grad=True)
    with detect_anomaly():
        loss = _masked_attention_loss(scores)
        loss.backward()
    assert np.isfinite(scores.grad.numpy()).all()
