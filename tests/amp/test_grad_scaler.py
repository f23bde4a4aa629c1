"""GradScaler against torch.amp.GradScaler("cpu"): the same scale trajectory and skipped steps
on a float16 run with planted overflows, the unscale-clip-step recipe, the per-optimizer state
machine and its errors, scale() of nested outputs, update(new_scale), state dicts and the
disabled pass-through."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import lucid
from lucid.amp import GradScaler
from tests.torch_oracle import requires_torch, torch

RNG = np.random.default_rng(7)
W1 = (RNG.standard_normal((16, 8)) * 0.3).astype(np.float32)
W2 = (RNG.standard_normal((4, 16)) * 0.3).astype(np.float32)
X = RNG.standard_normal((32, 8)).astype(np.float32)
Y = RNG.standard_normal((32, 4)).astype(np.float32)


def _scaler(lib, **kwargs):
    if lib is torch:
        return torch.amp.GradScaler("cpu", **kwargs)
    return GradScaler(**kwargs)


def _half_model(lib):
    """float32 weights, float16 compute: the way a scaler is meant to be used."""
    w1 = lib.tensor(W1.copy(), requires_grad=True)
    w2 = lib.tensor(W2.copy(), requires_grad=True)

    def loss_of(boost):
        h = lib.nn.functional.linear(lib.tensor(X).half(), w1.half()).relu()
        out = lib.nn.functional.linear(h, w2.half()) * boost
        return ((out.float() - lib.tensor(Y)) ** 2).mean()

    return [w1, w2], loss_of


def _run(lib, steps, planted, clip=None, **scaler_kwargs):
    """Train `steps` steps; at the steps in `planted` the float16 output is boosted so that the
    scaled gradients overflow. Returns per step (scale, growth tracker, skipped, weights)."""
    params, loss_of = _half_model(lib)
    optimizer = lib.optim.SGD(params, lr=0.05, momentum=0.9)
    scaler = _scaler(lib, **scaler_kwargs)
    trajectory = []
    for step in range(steps):
        optimizer.zero_grad()
        before = params[0].detach().clone()
        scaler.scale(loss_of(3e3 if step in planted else 1.0)).backward()
        if clip is not None:
            scaler.unscale_(optimizer)
            lib.nn.utils.clip_grad_norm_(params, clip)
        scaler.step(optimizer)
        scaler.update()
        skipped = bool((params[0].detach() == before).all())
        weights = np.concatenate([p.detach().numpy().ravel() for p in params])
        trajectory.append((scaler.get_scale(), scaler._get_growth_tracker(), skipped, weights))
    return trajectory


@requires_torch
@pytest.mark.parametrize("clip", [None, 0.5])
def test_same_scale_trajectory_and_skipped_steps_as_torch(clip):
    # Overflows at 2 and at 7, 8 in a row; growth every 3 clean steps in between.
    kwargs = {"init_scale": 2.0**12, "growth_interval": 3}
    ours = _run(lucid, 14, {2, 7, 8}, clip, **kwargs)
    theirs = _run(torch, 14, {2, 7, 8}, clip, **kwargs)
    assert [row[:3] for row in ours] == [row[:3] for row in theirs]
    assert [row[2] for row in ours].count(True) == 3
    assert len({row[0] for row in ours}) > 2  # the scale both backed off and grew
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine[3], reference[3], rtol=1e-4, atol=1e-5)


@requires_torch
def test_scale_grows_past_growth_interval_and_stops_below_float32_overflow():
    kwargs = {"init_scale": 2.0**125, "growth_factor": 4.0, "growth_interval": 2}
    ours = _run(lucid, 7, set(), **kwargs)
    theirs = _run(torch, 7, set(), **kwargs)
    assert [row[:3] for row in ours] == [row[:3] for row in theirs]


@requires_torch
def test_factors_that_are_no_powers_of_two_round_the_scale_as_torch():
    kwargs = {"init_scale": 1000.3, "growth_factor": 1.7, "backoff_factor": 0.31,
              "growth_interval": 2}  # fmt: skip
    ours = _run(lucid, 9, {1, 4}, **kwargs)
    theirs = _run(torch, 9, {1, 4}, **kwargs)
    assert [row[:3] for row in ours] == [row[:3] for row in theirs]


# --------------------------------------------------------------------- errors and state
def _step_setup(lib):
    params, loss_of = _half_model(lib)
    optimizer = lib.optim.SGD(params, lr=0.1)
    return params, loss_of, optimizer


def _error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the type and text are what is compared
        return type(error).__name__, str(error)
    return None


def _sequence_error(lib, sequence):
    params, loss_of, optimizer = _step_setup(lib)
    scaler = _scaler(lib)
    actions = {
        "scale": lambda: scaler.scale(loss_of(1.0)).backward(),
        "unscale": lambda: scaler.unscale_(optimizer),
        "step": lambda: scaler.step(optimizer),
        "update": lambda: scaler.update(),
        "closure": lambda: scaler.step(optimizer, closure=lambda: None),
        "zero": lambda: optimizer.zero_grad(),
    }
    for name in sequence[:-1]:
        actions[name]()
    return _error_of(actions[sequence[-1]])


SEQUENCES = [
    ["scale", "unscale", "unscale"],
    ["scale", "step", "unscale"],
    ["scale", "step", "step"],
    ["unscale"],
    ["step"],
    ["update"],
    ["scale", "update"],
    ["scale", "zero", "step"],
    ["scale", "closure"],
    ["scale", "unscale", "step", "update", "scale", "unscale", "step", "update"],
]


@requires_torch
@pytest.mark.parametrize("sequence", SEQUENCES, ids="-".join)
def test_state_machine_errors_match_torch(sequence):
    ours = _sequence_error(lucid, sequence)
    theirs = _sequence_error(torch, sequence)
    assert ours == theirs
    if sequence[-1] != "update" or len(sequence) < 3:
        assert ours is not None


@requires_torch
def test_float16_gradients_are_refused_as_torch():
    for lib in (lucid, torch):
        weight = lib.ones(3, dtype=lib.float16, requires_grad=True)
        optimizer = lib.optim.SGD([weight], lr=0.1)
        scaler = _scaler(lib)
        scaler.scale((weight.float() * 2).sum()).backward()
        with pytest.raises(ValueError, match="^Attempting to unscale FP16 gradients.$"):
            scaler.step(optimizer)


@requires_torch
@pytest.mark.parametrize(("growth", "backoff"), [(1.0, 0.5), (2.0, 1.0)])
def test_bad_factors_raise_as_torch(growth, backoff):
    kwargs = {"growth_factor": growth, "backoff_factor": backoff}
    assert _error_of(lambda: GradScaler(**kwargs)) == _error_of(
        lambda: torch.amp.GradScaler("cpu", **kwargs)
    )


@requires_torch
def test_scale_keeps_nested_lists_and_tuples_and_rejects_other_values():
    values = [np.float32(1.5), np.ones((2,), np.float32), np.float32(-3.0)]
    for lib in (lucid, torch):
        a, b, c = (lib.tensor(v) for v in values)
        scaled = _scaler(lib, init_scale=4.0).scale([a, (b, [c])])
        assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
        assert isinstance(scaled[1][1], list)
        assert float(scaled[0]) == 6.0 and float(scaled[1][1][0]) == -12.0
        assert list(scaled[1][0].numpy()) == [4.0, 4.0]
        assert scaled[0].dtype == lib.float32
    ours = _error_of(lambda: GradScaler().scale([lucid.ones(1), 3]))
    assert ours == ("ValueError", "outputs must be a Tensor or an iterable of Tensors")
    generator = GradScaler(init_scale=2.0).scale(iter([lucid.ones(1)]))
    assert float(next(iter(generator))[0]) == 2.0


@requires_torch
def test_scale_keeps_the_output_dtype_as_torch():
    for lib in (lucid, torch):
        half = lib.ones(3, dtype=lib.float16)
        assert _scaler(lib).scale(half).dtype == lib.float16
        assert _scaler(lib).scale(half.sum()).dtype == lib.float32  # 0-dim promotes


@requires_torch
def test_update_with_new_scale_as_torch():
    for lib in (lucid, torch):
        _, loss_of, optimizer = _step_setup(lib)
        scaler = _scaler(lib)
        scaler.scale(loss_of(1.0)).backward()
        scaler.step(optimizer)
        scaler.update(3.3)
        assert scaler.get_scale() == float(np.float32(3.3))
        scaler.update(lib.tensor(8.0))
        assert scaler.get_scale() == 8.0
        bad = lib.tensor([1.0, 2.0])
        with pytest.raises(AssertionError, match="new_scale should be a float or a 1-element"):
            scaler.update(bad)
        with pytest.raises(AssertionError, match="new_scale should be a float or a 1-element"):
            scaler.update(lib.tensor(2.0, requires_grad=True))


@requires_torch
def test_update_with_a_one_element_vector_fails_as_torch():
    errors = []
    for lib in (lucid, torch):
        _, loss_of, optimizer = _step_setup(lib)
        scaler = _scaler(lib)
        scaler.scale(loss_of(1.0)).backward()
        scaler.step(optimizer)
        errors.append(_error_of(lambda scaler=scaler, lib=lib: scaler.update(lib.tensor([8.0]))))
    assert errors[0] == errors[1] and errors[0][0] == "RuntimeError"


@requires_torch
def test_state_dict_and_load_state_dict_match_torch():
    states = []
    for lib in (lucid, torch):
        params, loss_of, optimizer = _step_setup(lib)
        scaler = _scaler(lib, init_scale=512.0, growth_interval=5)
        assert scaler.state_dict()["scale"] == 512.0  # before the first scale()
        for boost in (1.0, 3e3, 1.0):
            optimizer.zero_grad()
            scaler.scale(loss_of(boost)).backward()
            scaler.step(optimizer)
            scaler.update()
        states.append(scaler.state_dict())
        fresh = _scaler(lib)
        fresh.load_state_dict(scaler.state_dict())
        assert fresh.state_dict() == scaler.state_dict()
        assert fresh.get_scale() == scaler.get_scale()
        copied = pickle.loads(pickle.dumps(scaler))
        assert copied.state_dict() == scaler.state_dict()
    assert states[0] == states[1]
    assert states[0]["_growth_tracker"] == 1 and states[0]["scale"] == 256.0
    empty = _error_of(lambda: GradScaler().load_state_dict({}))
    assert empty == _error_of(lambda: torch.amp.GradScaler("cpu").load_state_dict({}))


@requires_torch
def test_pickling_mid_iteration_is_refused_as_torch():
    errors = []
    for lib in (lucid, torch):
        _, loss_of, optimizer = _step_setup(lib)
        scaler = _scaler(lib)
        scaler.scale(loss_of(1.0)).backward()
        scaler.unscale_(optimizer)
        errors.append(_error_of(lambda scaler=scaler: pickle.dumps(scaler)))
    assert errors[0] == errors[1] and errors[0][0] == "AssertionError"


def test_getters_and_setters():
    scaler = GradScaler(init_scale=8.0, growth_factor=3.0, backoff_factor=0.25,
                        growth_interval=7)  # fmt: skip
    assert scaler.is_enabled() and scaler.get_scale() == 8.0
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor()) == (3.0, 0.25)
    assert scaler.get_growth_interval() == 7
    scaler.set_growth_factor(5.0)
    scaler.set_backoff_factor(0.1)
    scaler.set_growth_interval(11)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor()) == (5.0, 0.1)
    assert scaler.get_growth_interval() == 11


def test_disabled_scaler_passes_everything_through():
    params, loss_of, optimizer = _step_setup(lucid)
    scaler = GradScaler(enabled=False)
    loss = loss_of(1.0)
    assert scaler.scale(loss) is loss
    loss.backward()
    expected = params[0].detach() - 0.1 * params[0].grad
    scaler.unscale_(optimizer)
    assert scaler.step(optimizer) is None
    scaler.update()
    np.testing.assert_allclose(params[0].detach().numpy(), expected.numpy(), rtol=1e-6)
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    assert not scaler.is_enabled() and scaler.last_skip is None
    scaler.load_state_dict({})  # a no-op, as in PyTorch


@requires_torch
def test_cuda_device_disables_the_scaler_with_a_warning_as_torch():
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
        scaler = GradScaler("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = torch.amp.GradScaler("cuda")
    assert scaler.is_enabled() == reference.is_enabled() is False


@requires_torch
def test_step_returns_what_the_optimizer_step_returns_and_passes_arguments():
    received = []

    class Recording(lucid.optim.SGD):
        def step(self, closure=None, *, note=None):
            received.append(note)
            return "stepped"

    params, loss_of, _ = _step_setup(lucid)
    optimizer = Recording(params, lr=0.1)
    scaler = GradScaler()
    scaler.scale(loss_of(1.0)).backward()
    assert scaler.step(optimizer, note="hi") == "stepped"
    assert received == ["hi"]
    scaler.update()
    optimizer.zero_grad()
    scaler.scale(loss_of(3e3)).backward()
    assert scaler.step(optimizer, note="skipped") is None
    assert received == ["hi"]


def test_optimizer_that_handles_scaling_gets_grad_scale_and_found_inf():
    seen = {}

    class Fused(lucid.optim.SGD):
        _step_supports_amp_scaling = True

        def step(self, closure=None):
            seen["grad_scale"] = float(self.grad_scale)
            seen["found_inf"] = float(self.found_inf)
            seen["grad"] = float(self.param_groups[0]["params"][0].grad.abs().max())

    params, loss_of, _ = _step_setup(lucid)
    optimizer = Fused(params, lr=0.1)
    scaler = GradScaler(init_scale=1024.0)
    scaler.scale(loss_of(1.0)).backward()
    grad = float(params[0].grad.abs().max())
    scaler.step(optimizer)
    assert seen["grad_scale"] == 1024.0 and seen["found_inf"] == 0.0
    assert seen["grad"] == grad  # left scaled: the optimizer unscales
    assert not hasattr(optimizer, "grad_scale") and not hasattr(optimizer, "found_inf")
    scaler.update()
    assert scaler.get_scale() == 1024.0


@requires_torch
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_deprecated_aliases_warn_as_torch(device):
    import importlib

    ours = importlib.import_module(f"lucid.{device}.amp").GradScaler
    theirs = importlib.import_module(f"torch.{device}.amp").GradScaler
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = ours(init_scale=8.0)
    with warnings.catch_warnings(record=True) as reference:
        warnings.simplefilter("always")
        expected = theirs(init_scale=8.0)
    assert [w.category for w in caught] == [w.category for w in reference]
    assert str(caught[0].message) == str(reference[0].message).replace("torch", "lucid")
    assert caught[0].filename == __file__
    assert isinstance(scaler, GradScaler) and scaler.is_enabled() == expected.is_enabled()
    assert scaler.get_scale() == expected.get_scale()
    assert getattr(lucid, device).amp.GradScaler is ours


def test_top_level_grad_scaler_is_lucid_amp_grad_scaler():
    assert lucid.GradScaler is GradScaler


def _autocast_run(lib):
    """An MLP under float16 autocast with overflows planted at steps 4 and 9."""
    rng = np.random.default_rng(0)
    w1 = lib.tensor((rng.standard_normal((64, 32)) * 0.2).astype(np.float32), requires_grad=True)
    w2 = lib.tensor((rng.standard_normal((10, 64)) * 0.2).astype(np.float32), requires_grad=True)
    x = lib.tensor(rng.standard_normal((128, 32)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 128))
    optimizer = lib.optim.SGD([w1, w2], lr=0.1)
    scaler = _scaler(lib, growth_interval=3)
    scales = []
    for step in range(12):
        optimizer.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            h = lib.nn.functional.linear(x, w1).relu()
            logits = lib.nn.functional.linear(h, w2) * (30.0 if step in (4, 9) else 1.0)
            loss = lib.nn.functional.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, np.concatenate([w1.detach().numpy().ravel(), w2.detach().numpy().ravel()])


@requires_torch
@pytest.mark.skipif(not hasattr(lucid, "autocast"), reason="needs lucid.autocast")
def test_same_trajectory_as_torch_under_float16_autocast():
    ours, weights = _autocast_run(lucid)
    theirs, reference = _autocast_run(torch)
    assert ours == theirs and ours.count(2.0**16) < len(ours)
    np.testing.assert_allclose(weights, reference, rtol=1e-2, atol=1e-3)
