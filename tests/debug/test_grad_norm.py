"""GradNormGuard: the global norm against torch, event reasons, warm-up, bounded memory, logging
and the early warning before a learning-rate blow-up turns the loss non-finite."""

from __future__ import annotations

import logging
import math
import statistics
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.debug import GradNormEvent, GradNormGuard
from tests.torch_oracle import requires_torch, torch


def _mlp() -> nn.Module:
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def _set_grads(model: nn.Module, scale: float = 1.0, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for param in model.parameters():
        param.grad = lucid.tensor(scale * rng.standard_normal(param.shape).astype(np.float32))


def _feed(guard: GradNormGuard, params: list, norms: list[float]) -> list:
    """Run one check per norm, with the single gradient scaled to exactly that norm."""
    results = []
    for norm in norms:
        params[0].grad = lucid.tensor([norm, 0.0], dtype=lucid.float64)
        results.append(guard.check())
    return results


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_total_norm_matches_torch(dtype: type) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in [(7, 5), (5,), (3, 4, 2), ()]]
    lucid_params = [lucid.tensor(np.zeros_like(a), requires_grad=True) for a in arrays]
    for param, array in zip(lucid_params, arrays):
        param.grad = lucid.tensor(array)
    torch_params = [torch.tensor(np.zeros_like(a), requires_grad=True) for a in arrays]
    for param, array in zip(torch_params, arrays):
        param.grad = torch.tensor(array)
    expected = float(torch.nn.utils.clip_grad_norm_(torch_params, max_norm=math.inf))
    guard = GradNormGuard(lucid_params)
    assert guard.total_norm() == pytest.approx(expected, rel=1e-6)
    assert guard.total_norm() == pytest.approx(
        float(nn.utils.get_total_norm([p.grad for p in lucid_params])), rel=1e-6
    )


def test_float32_norm_past_dot_overflow_stays_finite() -> None:
    # Squares of 1e20 overflow float32, the norm itself does not.
    param = lucid.zeros(3, requires_grad=True)
    param.grad = lucid.tensor([1e20, 0.0, 1e20])
    guard = GradNormGuard([param])
    assert guard.total_norm() == pytest.approx(math.sqrt(2) * 1e20, rel=1e-6)
    assert guard.check() is None


def test_healthy_check_returns_none() -> None:
    model = _mlp()
    guard = GradNormGuard(model, threshold=1e6)
    _set_grads(model)
    assert guard.check() is None
    assert not guard.events
    assert guard.step == 1


def test_threshold_event_names_the_exploding_parameter_first() -> None:
    model = _mlp()
    _set_grads(model)
    model[2].weight.grad = model[2].weight.grad * 1e4
    guard = GradNormGuard(model, threshold=100.0)
    event = guard.check()
    assert event
    assert isinstance(event, GradNormEvent)
    assert event.reason == "threshold"
    assert event.step == 0
    assert event.threshold == 100.0
    assert event.top[0][0] == "2.weight"
    assert set(event.param_norms) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    expected = float(np.linalg.norm(model[2].weight.grad.numpy()))
    assert event.param_norms["2.weight"] == pytest.approx(expected, rel=1e-6)
    assert event.total_norm == pytest.approx(guard.total_norm())
    assert "2.weight" in str(event) and "threshold" in str(event)
    assert list(guard.events) == [event]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nonfinite_event(bad: float) -> None:
    model = _mlp()
    _set_grads(model)
    grad = model[0].bias.grad.numpy().copy()
    grad[3] = bad
    model[0].bias.grad = lucid.tensor(grad)
    guard = GradNormGuard(model, threshold=1e9)
    event = guard.check()
    assert event.reason == "nonfinite"
    assert not math.isfinite(event.total_norm)
    assert event.top[0][0] == "0.bias"
    assert not math.isfinite(event.param_norms["0.bias"])
    assert "non-finite" in str(event)


def test_no_spike_during_warmup_then_spike() -> None:
    param = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    guard = GradNormGuard([param], warmup=5, spike_factor=10.0)
    # A 1000x jump at step 1 is not a spike yet: the baseline is still warming up.
    assert _feed(guard, [param], [1.0, 1000.0, 1.0, 1.0, 1.0]) == [None] * 5
    event = _feed(guard, [param], [1000.0])[0]
    assert event.reason == "spike"
    assert event.step == 5
    assert event.median == pytest.approx(1.0)
    assert event.top == [("param0", 1000.0)]
    assert "running median" in str(event)
    # Just under the factor is healthy; the spike did not enter the median window.
    assert _feed(guard, [param], [9.0])[0] is None
    assert guard.median == pytest.approx(1.0)


def test_flagged_norms_stay_out_of_the_median() -> None:
    param = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    guard = GradNormGuard([param], warmup=3)
    _feed(guard, [param], [2.0, 2.0, 2.0])
    results = _feed(guard, [param], [math.nan, math.inf, 500.0, 2.0])
    assert [r.reason if r else None for r in results] == ["nonfinite", "nonfinite", "spike", None]
    assert guard.median == 2.0


def test_median_is_the_median_of_the_latest_window() -> None:
    param = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    guard = GradNormGuard([param], warmup=0, spike_factor=None)
    norms = [float(v) for v in np.random.default_rng(0).uniform(1.0, 5.0, 250)]
    _feed(guard, [param], norms)
    window = norms[-guard._window.maxlen :]
    assert guard.median == pytest.approx(statistics.median(window), rel=1e-12)
    assert len(guard._sorted) == len(window)


def test_spike_factor_none_disables_spikes() -> None:
    param = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    guard = GradNormGuard([param], warmup=0, spike_factor=None)
    assert _feed(guard, [param], [1.0, 1e6]) == [None, None]


def test_events_and_window_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL, logger="lucid.debug")
    param = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    guard = GradNormGuard([param], threshold=10.0, max_events=7)
    small = lucid.tensor([1.0, 0.0], dtype=lucid.float64)
    large = lucid.tensor([100.0, 0.0], dtype=lucid.float64)
    for step in range(10_000):
        param.grad = large if step % 2 else small
        guard.check()
    assert len(guard.events) == 7
    assert [event.step for event in guard.events] == list(range(9_987, 10_000, 2))
    assert len(guard._window) == guard._window.maxlen <= 200
    assert guard.step == 10_000


def test_parameters_without_grad_are_skipped() -> None:
    model = _mlp()
    _set_grads(model)
    model[0].weight.grad = None
    guard = GradNormGuard(model, threshold=1e-3)
    expected = math.sqrt(
        sum(float(np.sum(p.grad.numpy().astype(np.float64) ** 2)) for p in model.parameters()
            if p.grad is not None)
    )  # fmt: skip
    event = guard.check()
    assert event.total_norm == pytest.approx(expected, rel=1e-6)
    assert "0.weight" not in event.param_norms
    for param in model.parameters():
        param.grad = None
    assert guard.check() is None
    assert guard.total_norm() == 0.0


def test_bare_iterable_and_single_tensor_names() -> None:
    params = [lucid.zeros(2, requires_grad=True), lucid.zeros(3, requires_grad=True)]
    params[1].grad = lucid.tensor([0.0, 5.0, 0.0])
    event = GradNormGuard(iter(params), threshold=1.0).check()
    assert event.top == [("param1", 5.0)]
    single = lucid.zeros(2, requires_grad=True)
    single.grad = lucid.tensor([3.0, 4.0])
    assert GradNormGuard(single, threshold=1.0).check().total_norm == 5.0


def test_events_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    param = lucid.zeros(2, requires_grad=True)
    param.grad = lucid.tensor([math.nan, 0.0])
    guard = GradNormGuard([param])
    with caplog.at_level(logging.WARNING, logger="lucid.debug"):
        event = guard.check()
    records = [r for r in caplog.records if r.name == "lucid.debug"]
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING
    assert records[0].getMessage() == str(event)


@pytest.mark.parametrize(
    "kwargs",
    [{"threshold": 0.0}, {"spike_factor": -1.0}, {"warmup": -1}, {"max_events": 0}],
)
def test_invalid_arguments(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        GradNormGuard([lucid.zeros(1, requires_grad=True)], **kwargs)


def test_flags_learning_rate_blowup_before_the_loss_goes_nonfinite() -> None:
    lucid.manual_seed(0)
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.standard_normal((64, 8)).astype(np.float32))
    y = lucid.tensor(rng.standard_normal((64, 1)).astype(np.float32))
    model = nn.Sequential(
        nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
    )
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.05)
    guard = GradNormGuard(model)
    blowup_step = 30
    first_event = first_nonfinite_loss = None
    with warnings.catch_warnings():
        # lucid's sentinel warns about the non-finite loss this test provokes on purpose.
        warnings.simplefilter("ignore")
        for step in range(60):
            if step == blowup_step:
                for group in optimizer.param_groups:
                    group["lr"] = 1e4
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            event = guard.check()
            if event and first_event is None:
                first_event = event
            if not math.isfinite(loss.item()):
                first_nonfinite_loss = step
                break
            optimizer.step()
    assert first_event is not None and first_nonfinite_loss is not None
    assert first_event.step == blowup_step + 1
    assert first_event.reason == "spike"
    assert first_event.step < first_nonfinite_loss


def _first_event_and_first_nonfinite(model: nn.Module, lr: float) -> tuple:
    """Train `model` on a seeded regression with SGD at `lr`, guarded as the README configures
    GradNormGuard; the step of its first event and of the first non-finite loss or gradient."""
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.standard_normal((64, 8)).astype(np.float32))
    y = x @ lucid.tensor(rng.standard_normal((8, 1)).astype(np.float32))
    optimizer = lucid.optim.SGD(model.parameters(), lr=lr)
    guard = GradNormGuard(model, spike_factor=10.0, warmup=20)
    first_event = None
    with warnings.catch_warnings():
        # lucid's sentinel warns about the non-finite values this run provokes on purpose
        warnings.simplefilter("ignore")
        for step in range(100):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            norm = guard.total_norm()
            event = guard.check()
            if event and first_event is None:
                first_event = event
            if not (math.isfinite(loss.item()) and math.isfinite(norm)):
                return first_event, step
            optimizer.step()
    return first_event, None


@pytest.mark.parametrize(
    "architecture, lr",
    [("linear", 5.0), ("linear", 10.0), ("mlp", 1.0), ("mlp", 2.0), ("mlp", 10.0)],
)
def test_readme_guard_warns_before_a_fast_learning_rate_blowup(architecture: str, lr: float):
    # These runs overflow within the guard's 20 warm-up steps (by steps 9 to 16).
    lucid.manual_seed(0)
    if architecture == "linear":
        model = nn.Linear(8, 1)
    else:
        model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    first_event, first_nonfinite = _first_event_and_first_nonfinite(model, lr)
    assert first_nonfinite is not None and first_nonfinite < 20
    assert first_event is not None, f"no warning before the non-finite step {first_nonfinite}"
    assert first_event.reason == "spike"
    assert first_event.step <= first_nonfinite - 1


def test_warmup_flags_only_jumps_of_spike_factor_squared_over_the_first_norms() -> None:
    param = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    guard = GradNormGuard([param], spike_factor=10.0, warmup=20)
    # two norms are no baseline yet; then 99x the median of the first three is still noise
    assert _feed(guard, [param], [1.0, 500.0, 1.0, 99.0, 1.0]) == [None] * 5
    event = _feed(guard, [param], [150.0])[0]
    assert (event.reason, event.step, event.median) == ("spike", 5, 1.0)
    assert "running median" in str(event)
    # after warm-up the ordinary factor applies
    _feed(guard, [param], [1.0] * 20)
    assert _feed(guard, [param], [9.0])[0] is None
    assert _feed(guard, [param], [11.0])[0].reason == "spike"
