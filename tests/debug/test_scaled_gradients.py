"""lucid.debug under a GradScaler: GradNormGuard and NaNDetector judge unscaled gradient norms,
leave an overflow of the scaled backward to the scaler, and still report a NaN no scale fixes;
the headroom warning covers bfloat16 and names the op, line and module."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid._core.sentinel import reset_sentinel
from lucid.amp import GradScaler
from lucid.debug import GradNormGuard, HeadroomWarning, NaNDetector


class HalfNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.boost = 1.0
        self.bug = False

    def forward(self, x):
        h = F.relu(self.fc1(x))
        out = F.linear(h.half(), self.fc2.weight.half(), self.fc2.bias.half()).float()
        if self.bug:
            out = out + (self.fc1.weight.sum() * 0).sqrt() * 0  # sqrt'(0) * 0: a 0/0 NaN
        return out * self.boost


@pytest.fixture(autouse=True)
def _fresh_sentinel():
    reset_sentinel()
    yield
    reset_sentinel()


def _setup():
    lucid.manual_seed(0)
    model = HalfNet()
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, lucid.randn(32, 8), lucid.randn(32, 4)


def _scaled_backward(model, optimizer, scaler, x, y, boost=1.0, bug=False):
    model.boost, model.bug = boost, bug
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()


def test_grad_norm_guard_judges_the_unscaled_norm():
    model, optimizer, x, y = _setup()
    scaler = GradScaler(init_scale=2.0**12)
    guard = GradNormGuard(model)
    _scaled_backward(model, optimizer, scaler, x, y)
    scaled_norm = guard.total_norm()
    scaler.unscale_(optimizer)
    unscaled_norm = guard.total_norm()
    assert math.isclose(scaled_norm, unscaled_norm, rel_tol=1e-3)
    raw = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in model.parameters()))
    assert math.isclose(unscaled_norm, raw, rel_tol=1e-6)  # unscaled now: its own norm
    scaler.step(optimizer)
    scaler.update()


def test_grad_norm_guard_sees_no_spike_when_the_scale_grows():
    model, optimizer, x, y = _setup()
    scaler = GradScaler(init_scale=1.0, growth_factor=8.0, growth_interval=1)
    guard = GradNormGuard(model, spike_factor=3.0, warmup=2)
    for _ in range(5):  # the scale grows 8x per step; the gradients do not
        _scaled_backward(model, optimizer, scaler, x, y)
        assert guard.check() is None
        scaler.step(optimizer)
        scaler.update()
    assert scaler.get_scale() == 8.0**5
    assert not guard.events


def test_grad_norm_guard_leaves_a_scale_overflow_to_the_scaler_but_flags_a_nan():
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    guard = GradNormGuard(model)
    _scaled_backward(model, optimizer, scaler, x, y, boost=1e3)
    assert not math.isfinite(guard.total_norm())
    assert guard.check() is None
    scaler.step(optimizer)
    scaler.update()
    assert scaler.last_skip.is_overflow
    _scaled_backward(model, optimizer, scaler, x, y, bug=True)
    event = guard.check()
    assert event is not None and event.reason == "nonfinite"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler.step(optimizer)
    scaler.update()


def test_nan_detector_judges_unscaled_norms_and_leaves_overflows_to_the_scaler():
    model, optimizer, x, y = _setup()
    scaler = GradScaler()
    with NaNDetector(model, grad_norm_warn=100.0, verbose=False) as detector:
        _scaled_backward(model, optimizer, scaler, x, y)
        assert detector.check_grad_norms() == []  # 65536x the norm, but unscaled it is small
        scaler.step(optimizer)
        scaler.update()
        _scaled_backward(model, optimizer, scaler, x, y, boost=1e3)
        assert detector.check_grad_norms() == []
        scaler.step(optimizer)
        scaler.update()
        assert scaler.last_skip.is_overflow
        assert not detector.triggered
        _scaled_backward(model, optimizer, scaler, x, y, bug=True)
    assert detector.triggered and detector.event.is_backward
    assert detector.event.kind == "nan"


def test_nan_detector_reports_large_unscaled_norms():
    model, optimizer, x, y = _setup()
    scaler = GradScaler(init_scale=2.0**8)
    with NaNDetector(model, grad_norm_warn=1e-3, verbose=False) as detector:
        _scaled_backward(model, optimizer, scaler, x, y)
        found = detector.check_grad_norms()
    scaler.unscale_(optimizer)
    norms = {f"fc{i}.{name}": float(lucid.linalg.vector_norm(p.grad))
             for i, layer in ((1, model.fc1), (2, model.fc2))
             for name, p in layer.named_parameters()}  # fmt: skip
    assert found and all(math.isclose(e.norm, norms[e.param_name], rel_tol=1e-3) for e in found)


# --------------------------------------------------------------------- headroom
class BigLeaf(nn.Module):
    def __init__(self, dtype) -> None:
        super().__init__()
        self.weight = nn.Parameter(lucid.ones(2, 2).to(dtype))
        self.dtype = dtype

    def forward(self, x):
        return F.linear(x, self.weight).to(self.dtype)  # a no-op where linear keeps the dtype


@pytest.mark.skipif(lucid.bfloat16.numpy_dtype is None, reason="bfloat16 needs ml_dtypes")
def test_bfloat16_activation_past_an_eighth_of_its_max_warns_with_op_line_and_module():
    model = nn.Sequential(BigLeaf(lucid.bfloat16))
    eighth = lucid.finfo(lucid.bfloat16).max / 8
    small = lucid.tensor([[1.0, 2.0]]).to(lucid.bfloat16)
    big = lucid.tensor([[0.6 * eighth, 0.6 * eighth]]).to(lucid.bfloat16)
    with NaNDetector(model, verbose=False), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model(small)
        assert not caught
        model(big)
        call_line = inspect.currentframe().f_lineno - 1
    messages = [str(w.message) for w in caught if issubclass(w.category, HeadroomWarning)]
    assert any("bfloat16 activation of '0'" in m and "(made by " in m for m in messages)
    assert "1/8 of bfloat16's largest value" in messages[0]
    lines = {w.lineno for w in caught if issubclass(w.category, HeadroomWarning)}
    assert lines == {call_line}  # the user's line that ran the model


def test_float16_headroom_names_the_op():
    model = nn.Sequential(BigLeaf(lucid.float16))
    big = lucid.tensor([[5000.0, 4000.0]], dtype=lucid.float16)
    with NaNDetector(model, verbose=False), pytest.warns(HeadroomWarning) as caught:
        model(big)
    assert "a float16 activation of '0' (made by mm) reached 9000" in str(caught[0].message)


def test_scaled_bfloat16_gradients_are_judged_unscaled_by_the_headroom():
    if lucid.bfloat16.numpy_dtype is None:
        pytest.skip("bfloat16 needs ml_dtypes")
    weight = nn.Parameter(lucid.ones(2).to(lucid.bfloat16))
    model = nn.Module()
    model.weight = weight
    optimizer = lucid.optim.SGD([weight], lr=0.0)
    scaler = GradScaler(init_scale=2.0**120)
    detector = NaNDetector(model, grad_norm_warn=None, verbose=False)
    scaler.scale((weight.float() * 1.0).sum()).backward()
    assert float(weight.grad.float().max()) == 2.0**120  # past bfloat16's max / 8 when scaled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        detector.check_grad_norms()
    scaler.step(optimizer)
    scaler.update()
    np.testing.assert_array_equal(weight.grad.float().numpy(), [1.0, 1.0])


@pytest.mark.skipif(
    not hasattr(lucid, "autocast") or lucid.bfloat16.numpy_dtype is None,
    reason="needs lucid.autocast and ml_dtypes' bfloat16",
)
def test_under_bfloat16_autocast_the_lower_precision_activations_are_watched():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    with lucid.no_grad():
        model[0].weight.fill_(2e37)  # 4 * 2e37 = 8e37, past 1/8 of bfloat16's max (4.2e37)
    with NaNDetector(model, verbose=False), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lucid.autocast("cpu", dtype=lucid.bfloat16):
            out = model(lucid.ones(3, 4))
        call_line = inspect.currentframe().f_lineno - 1
    assert out.dtype == lucid.bfloat16
    warned = [w for w in caught if issubclass(w.category, HeadroomWarning)]
    assert "a bfloat16 activation of '0' (made by addmm)" in str(warned[0].message)
    assert {w.lineno for w in warned} == {call_line}
