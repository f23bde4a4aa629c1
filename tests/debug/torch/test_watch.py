"""lucid.debug.torch's contract beyond the births: watch() changes no result, holds no memory
from step to step, says what it does on a NaN, refuses bad arguments; @step replays the loss
code; detect_anomaly is torch's and more; the private torch APIs it needs still exist."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.markers import marked_line
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

_THIS_FILE = Path(__file__).resolve()
ROOT = _THIS_FILE.parents[3]


def _debug_torch():
    import lucid.debug.torch as debug_torch

    return debug_torch


def _model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(8, 1)
    )


def _train(model, steps, batches, watched, poison_at=None):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []

    def loop():
        for index in range(steps):
            x = batches[index % len(batches)]
            if index == poison_at:
                x = x.clone()
                x[0, 0] = float("nan")
            optimizer.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach().clone())

    torch.manual_seed(123)
    if watched is None:
        loop()
    else:
        with _debug_torch().watch(**watched):
            loop()
    return losses


def test_watch_never_changes_results_over_fifty_steps():
    batches = [torch.randn(4, 6, generator=torch.Generator().manual_seed(i)) for i in range(5)]
    plain_model, watched_model = _model(), _model()
    plain = _train(plain_model, 50, batches, None)
    watched = _train(watched_model, 50, batches, {})
    assert all(torch.equal(a, b) for a, b in zip(plain, watched))
    for a, b in zip(plain_model.parameters(), watched_model.parameters()):
        assert torch.equal(a, b)


def test_watch_holds_nothing_from_one_step_to_the_next():
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 6)
    with _debug_torch().watch() as watch:
        for _ in range(2000):
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
            # what the step kept is dropped at the step's end
            assert watch._calls == [] and watch._losses == [] and watch._buffers is None
    assert watch.step == 2000 and watch.events == []


def test_watch_replays_and_raises_with_the_birth():
    batches = [torch.randn(4, 6)]
    with pytest.raises(_debug_torch().NonFiniteError) as raised:
        _train(_model(), 5, batches, {}, poison_at=3)
    event = raised.value.nan_event
    assert (event.op, event.phase, event.step) == ("input", "input", 3)
    assert str(raised.value).startswith("The input batch holds nan values")


def test_watch_skip_step_leaves_the_parameters_and_goes_on():
    batches = [torch.randn(4, 6)]
    model = _model()
    with pytest.warns(
        RuntimeWarning,
        match="step 2 has non-finite gradients or loss; the optimizer step was skipped",
    ):
        losses = _train(model, 4, batches, {"on_nonfinite": "skip_step"}, poison_at=2)
    assert len(losses) == 4
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_watch_warn_and_raise_say_the_step():
    batches = [torch.randn(4, 6)]
    with pytest.warns(RuntimeWarning, match="step 1 has non-finite"):
        _train(_model(), 2, batches, {"on_nonfinite": "warn"}, poison_at=1)
    with pytest.raises(RuntimeError, match="step 1 has non-finite"):
        _train(_model(), 2, batches, {"on_nonfinite": "raise"}, poison_at=1)


def test_watch_refuses_what_is_no_module_or_optimizer():
    debug_torch = _debug_torch()
    with pytest.raises(TypeError, match="watch\\(\\): model must be a torch.nn.Module, not str"):
        debug_torch.watch("model")
    with pytest.raises(TypeError, match="optimizer must be a torch.optim.Optimizer, not list"):
        debug_torch.watch(optimizer=[[1]])
    with pytest.raises(ValueError, match="on_nonfinite must be one of"):
        debug_torch.watch(on_nonfinite="ignore")


def test_a_watch_inside_a_watch_is_the_outer_one():
    debug_torch = _debug_torch()
    with debug_torch.watch() as outer:
        with debug_torch.watch() as inner:
            assert inner is outer


def test_a_script_raising_its_own_error_keeps_it():
    with pytest.raises(KeyError, match="mine"):
        with _debug_torch().watch():
            raise KeyError("mine")


def test_an_eval_loop_has_each_model_output_checked():
    model = _model()
    model.eval()
    x = torch.randn(4, 6)
    with torch.no_grad(), pytest.raises(_debug_torch().NonFiniteError) as raised:
        with _debug_torch().watch():
            model(x)
            model[0].weight[0, 0] = float("inf")
            model(x)
    assert (raised.value.nan_event.op, raised.value.nan_event.phase) == ("0.weight", "parameter")


# ------------------------------------------------------------------ @step
def _log_of_negative(output):
    return torch.log(output - 1e6).mean()  # <step-loss>


def test_step_replays_the_loss_code_and_names_its_op():
    debug_torch = _debug_torch()
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    @debug_torch.step
    def train_step(x):
        optimizer.zero_grad()
        loss = _log_of_negative(model(x))
        loss.backward()
        optimizer.step()
        return loss

    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(debug_torch.NonFiniteError) as raised:
        train_step(torch.randn(4, 6))
    event = raised.value.nan_event
    assert (event.op, event.phase) == ("log", "loss")
    assert event.location == f"{_THIS_FILE}:{marked_line(_THIS_FILE, 'step-loss')}"
    # the failing step did not change the parameters, and the replay undid its own step
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def _exploding_sgd(model):
    # A learning rate that overflows the update: the parameters turn inf in optimizer.step().
    model[0].weight.register_hook(lambda grad: grad * 1e10)
    return torch.optim.SGD(model.parameters(), lr=1e38)


def test_step_replays_an_optimizer_birth_exactly():
    debug_torch = _debug_torch()
    model = _model()
    optimizer = _exploding_sgd(model)

    @debug_torch.step
    def train_step(x):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()

    with pytest.raises(debug_torch.NonFiniteError) as raised:
        with debug_torch.watch():
            for _ in range(3):
                train_step(torch.randn(4, 6))
    event = raised.value.nan_event
    assert (event.op, event.phase, event.optimizer, event.parameter) == (
        "add_",
        "optimizer",
        "SGD",
        "0.weight",
    )


def test_watch_names_the_optimizer_and_parameter_after_an_overflowing_step():
    debug_torch = _debug_torch()
    model = _model()
    optimizer = _exploding_sgd(model)
    with pytest.raises(debug_torch.NonFiniteError) as raised:
        with debug_torch.watch():
            for _ in range(3):
                optimizer.zero_grad()
                model(torch.randn(4, 6)).pow(2).mean().backward()
                optimizer.step()
    event = raised.value.nan_event
    assert (event.phase, event.optimizer, event.parameter, event.step) == (
        "optimizer",
        "SGD",
        "0.weight",
        0,
    )


# ------------------------------------------------------------------ anomaly mode
def _sqrt_at_zero_step():
    x = torch.ones(3, requires_grad=True)
    (x - x).sqrt().sum().backward()  # <anomaly-sqrt>


def test_detect_anomaly_raises_torchs_line_then_the_report():
    debug_torch = _debug_torch()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        context = debug_torch.detect_anomaly()
    with pytest.raises(RuntimeError) as raised:
        with context:
            _sqrt_at_zero_step()
    lines = str(raised.value).splitlines()
    assert lines[0] == "Function 'SqrtBackward0' returned inf values in its 0th output."
    assert f"  at: {_THIS_FILE}:{marked_line(_THIS_FILE, 'anomaly-sqrt')}" in lines
    assert not debug_torch.is_anomaly_enabled()


def test_detect_anomaly_is_a_decorator_and_checks_forward_values():
    debug_torch = _debug_torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @debug_torch.detect_anomaly()
        def forward_nan():
            return torch.log(torch.tensor([-1.0]))

    with pytest.raises(RuntimeError, match="Function 'log' returned nan values"):
        forward_nan()
    assert not debug_torch.is_anomaly_enabled()


def test_set_detect_anomaly_as_a_function_and_a_context_manager():
    debug_torch = _debug_torch()
    debug_torch.set_detect_anomaly(True)
    try:
        assert debug_torch.is_anomaly_enabled()
        with debug_torch.set_detect_anomaly(False):
            assert not debug_torch.is_anomaly_enabled()
            torch.log(torch.tensor([-1.0]))  # not checked
        assert debug_torch.is_anomaly_enabled()
    finally:
        debug_torch.set_detect_anomaly(False)
    assert not debug_torch.is_anomaly_enabled()


# ------------------------------------------------------------------ mixed precision
def test_a_birth_under_bfloat16_autocast_is_named():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    with torch.no_grad():
        model[0].weight.fill_(1.0)

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(torch.full((2, 4), 3e38))  # <autocast-linear>
        out.float().sum().backward()

    event = _debug_torch().find_birth(step)
    assert (event.op, event.phase, event.layer_name) == ("linear", "forward", "0")
    assert event.location.endswith(f":{marked_line(_THIS_FILE, 'autocast-linear')}")


def _scaled_steps(model, steps, batch, watch_options=None, loss_fn=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**40)
    skips = []
    with _debug_torch().watch(**(watch_options or {})) as watch:
        for _ in range(steps):
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                output = model(batch)
            loss = (loss_fn or (lambda out: out.float().sum()))(output)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            skips.append(watch.last_skip)
    return watch, scaler, skips


class _ToFloat(torch.nn.Module):
    def forward(self, x):
        return x.float()  # <to-float>


def test_grad_scaler_overflows_are_no_births_and_a_skipped_step_says_where():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1), _ToFloat())
    watch, scaler, skips = _scaled_steps(model, 3, torch.ones(2, 4))
    assert watch.events == []
    assert scaler.get_scale() < 2.0**40  # the scaler did skip overflowing steps
    skip = skips[0]
    # The scaled gradient overflows float16 where the float32 output is cast back.
    assert (skip.op, skip.phase, skip.kind, skip.mechanism) == (
        "float",
        "backward",
        "inf",
        "overflow",
    )
    assert (skip.layer_name, skip.location) == (
        "2",
        f"{_THIS_FILE}:{marked_line(_THIS_FILE, 'to-float')}",
    )
    assert watch.step == 3  # skipped steps count, as the scaler counts them


def _log_of_negative_loss(output):
    return torch.log(output.float() - 1e6).mean()  # <scaled-nan-loss>


def test_a_non_finite_loss_under_a_grad_scaler_is_a_birth():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    with pytest.raises(_debug_torch().NonFiniteError) as raised:
        _scaled_steps(model, 2, torch.ones(2, 4), loss_fn=_log_of_negative_loss)
    event = raised.value.nan_event
    assert (event.phase, event.kind) == ("loss", "nan")


# ------------------------------------------------------------------ installation
def test_without_torch_lucid_debug_torch_says_how_to_install_it():
    script = (
        "import sys\n"
        "from importlib.abc import MetaPathFinder\n"
        "class RefuseTorch(MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, RefuseTorch())\n"
        "import lucid.debug\n"
        "try:\n"
        "    lucid.debug.torch\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert 'pip install "lucid-numerics[torch]"' in result.stdout, result.stderr


def test_the_private_torch_apis_it_relies_on_still_exist():
    from lucid.debug.torch import _private

    x = torch.ones(2, requires_grad=True)
    y = x * 2.0
    assert _private.sequence_nr(y.grad_fn) < _private.next_sequence_nr()
    seen = []
    y.grad_fn.register_prehook(lambda grads: seen.append(_private.current_autograd_node()))
    y.sum().backward()
    assert seen == [y.grad_fn] and _private.current_autograd_node() is None
    norms = _private.foreach_norm([torch.ones(4), torch.tensor([3.0, 4.0])])
    assert [float(n) for n in norms] == [2.0, 5.0]
    assert isinstance(_private.custom_function_apply(), classmethod)
    for register in (
        _private.register_module_forward_pre_hook,
        _private.register_module_forward_hook,
        _private.register_optimizer_step_pre_hook,
        _private.register_optimizer_step_post_hook,
    ):
        register(lambda *args: None).remove()


# ------------------------------------------------------------------ intentional infinities
class _MaskedScores(torch.nn.Module):
    def forward(self, x):
        scores = x @ x.transpose(0, 1)
        padding = torch.tensor([[False, False], [True, True]])
        return torch.softmax(scores.masked_fill(padding, float("-inf")), -1) @ x


def _masked_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), _MaskedScores(), torch.nn.Linear(4, 1))


def _masked_step(model):
    model(torch.ones(2, 4)).sum().backward()


def test_allow_nonfinite_and_allow_silence_intentional_births():
    import lucid.debug

    debug_torch = _debug_torch()
    model = _masked_model()
    assert debug_torch.find_birth(_masked_step, model).op == "softmax"
    with lucid.debug.allow_nonfinite():
        assert debug_torch.find_birth(_masked_step, model) is None
    from lucid.debug.torch._instrument import Instrument

    for allow in (("1",), (_MaskedScores,)):
        instrument = Instrument(allow=allow)
        instrument.run(_masked_step, model)
        assert instrument.births == []
