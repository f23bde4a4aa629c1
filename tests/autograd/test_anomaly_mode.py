"""Anomaly mode: PyTorch's detect_anomaly / set_detect_anomaly contract and lucid's checks."""

from __future__ import annotations

import dataclasses
import gc
import sys
import threading
import types
import weakref
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.autograd import (
    AnomalyError,
    AnomalyEvent,
    Function,
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    module_scope,
    set_detect_anomaly,
)
from tests.markers import marked_line
from tests.torch_oracle import requires_torch, torch

ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)

# Every detect_anomaly() warns on construction; the tests that check the warning record it.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled", "ignore:Error detected in"
)

_THIS_FILE = Path(__file__).resolve()


def _line(marker: str) -> int:
    return marked_line(__file__, marker)


def _assert_located(event: AnomalyEvent, marker: str) -> None:
    assert event.filename is not None and Path(event.filename).resolve() == _THIS_FILE
    assert event.lineno == _line(marker)
    assert event.location == f"{event.filename}:{event.lineno}"


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0]


@pytest.fixture(autouse=True)
def _anomaly_mode_off_around_each_test():
    assert not is_anomaly_enabled(), "anomaly mode leaked into this test"
    yield
    leaked = is_anomaly_enabled()
    set_detect_anomaly(False)
    assert not leaked, "a test leaked anomaly mode"


# ---------------------------------------------------------------- public names
def test_anomaly_names_are_exported_from_lucid_autograd():
    for name in (
        "detect_anomaly",
        "set_detect_anomaly",
        "is_anomaly_enabled",
        "is_anomaly_check_nan_enabled",
        "AnomalyError",
        "AnomalyEvent",
        "NonFiniteWarning",
        "set_sentinel",
        "is_sentinel_enabled",
        "module_scope",
    ):
        assert hasattr(lucid.autograd, name), name
        assert name in lucid.autograd.__all__, name


def test_anomaly_error_is_a_runtime_error():
    assert issubclass(AnomalyError, RuntimeError)


def test_anomaly_event_is_a_dataclass_with_the_documented_fields():
    assert dataclasses.is_dataclass(AnomalyEvent)
    names = {f.name for f in dataclasses.fields(AnomalyEvent)} | {
        name for name in dir(AnomalyEvent) if isinstance(getattr(AnomalyEvent, name), property)
    }
    expected = {
        "op", "node_name", "phase", "kind", "mechanism", "created", "filename", "lineno",
        "location", "module_path", "inputs", "output_index", "forward_traceback", "parents",
        "step",
    }  # fmt: skip
    assert expected <= names


# -------------------------------------------------------- state, as in PyTorch
@requires_torch
def test_state_outside_and_inside_matches_pytorch():
    def states(module):
        return module.is_anomaly_enabled(), module.is_anomaly_check_nan_enabled()

    expected = [states(torch)]
    actual = [states(lucid.autograd)]
    with torch.autograd.detect_anomaly():
        expected.append(states(torch))
    with detect_anomaly():
        actual.append(states(lucid.autograd))
    with torch.autograd.detect_anomaly(check_nan=False):
        expected.append(states(torch))
    with detect_anomaly(check_nan=False):
        actual.append(states(lucid.autograd))
    expected.append(states(torch))
    actual.append(states(lucid.autograd))
    assert actual == expected == [(False, True), (True, True), (True, False), (False, True)]


@requires_torch
def test_set_detect_anomaly_values_match_pytorch():
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    set_detect_anomaly(True, check_nan=False)
    try:
        assert is_anomaly_enabled() == torch.is_anomaly_enabled() is True
        assert is_anomaly_check_nan_enabled() == torch.is_anomaly_check_nan_enabled() is False
    finally:
        torch.autograd.set_detect_anomaly(False)
        set_detect_anomaly(False)
    assert is_anomaly_enabled() == torch.is_anomaly_enabled() is False
    assert is_anomaly_check_nan_enabled() == torch.is_anomaly_check_nan_enabled() is True


def test_detect_anomaly_warns_when_constructed():
    with pytest.warns(UserWarning) as record:
        mode = detect_anomaly()
    assert [str(w.message) for w in record] == [ENABLED_WARNING]
    assert Path(record[0].filename).resolve() == _THIS_FILE
    assert not is_anomaly_enabled(), "constructing is not entering"
    del mode


def test_enter_returns_the_object_with_its_settings():
    mode = detect_anomaly()
    with mode as entered:
        assert entered is mode
    assert (mode.check_nan, mode.check_inf, mode.check_forward) == (True, True, True)
    custom = detect_anomaly(False, check_inf=False, check_forward=False)
    assert (custom.check_nan, custom.check_inf, custom.check_forward) == (False, False, False)


def test_lucid_keywords_are_keyword_only():
    with pytest.raises(TypeError):
        detect_anomaly(True, False)
    with pytest.raises(TypeError):
        set_detect_anomaly(True, True, False)
    assert not is_anomaly_enabled()


def test_exit_restores_previous_state_after_an_exception():
    with pytest.raises(KeyError):
        with detect_anomaly(check_nan=False):
            assert is_anomaly_enabled()
            raise KeyError("boom")
    assert not is_anomaly_enabled()
    assert is_anomaly_check_nan_enabled()


def test_nested_blocks_restore_each_level():
    with detect_anomaly():
        with detect_anomaly(check_nan=False):
            assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
            with set_detect_anomaly(False):
                assert not is_anomaly_enabled()
            assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        assert is_anomaly_enabled() and is_anomaly_check_nan_enabled()
    assert not is_anomaly_enabled() and is_anomaly_check_nan_enabled()


def test_nested_block_keeps_checking_after_inner_exit():
    x = lucid.tensor([-1.0], requires_grad=True)
    with detect_anomaly():
        with detect_anomaly(check_nan=False):
            lucid.log(x)
        with pytest.raises(AnomalyError):
            lucid.log(x)


def test_decorator_enables_the_mode_inside_the_call_only():
    @detect_anomaly()
    def training_step(value):
        """A step."""
        return is_anomaly_enabled(), is_anomaly_check_nan_enabled(), value

    assert training_step.__name__ == "training_step"
    assert training_step.__doc__ == "A step."
    assert not is_anomaly_enabled()
    assert training_step(3) == (True, True, 3)
    assert training_step(4) == (True, True, 4), "the decorated function can run twice"
    assert not is_anomaly_enabled()


def test_decorator_keeps_its_settings_and_restores_after_an_exception():
    @detect_anomaly(check_nan=False, check_inf=False)
    def failing_step():
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        failing_step()
    assert not is_anomaly_enabled()


def test_decorated_step_raises_anomaly_error():
    @detect_anomaly()
    def step(x):
        return lucid.log(x).sum()

    with pytest.raises(AnomalyError):
        step(lucid.tensor([-1.0], requires_grad=True))
    assert not is_anomaly_enabled()


def test_set_detect_anomaly_takes_effect_as_a_plain_call():
    set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled() and is_anomaly_check_nan_enabled()
        with pytest.raises(AnomalyError):
            lucid.log(lucid.tensor([-1.0], requires_grad=True))
    finally:
        set_detect_anomaly(False)
    assert not is_anomaly_enabled()
    lucid.log(lucid.tensor([-1.0], requires_grad=True))


def test_set_detect_anomaly_as_context_manager_restores_previous_state():
    with set_detect_anomaly(True, check_nan=False):
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
    assert not is_anomaly_enabled() and is_anomaly_check_nan_enabled()
    with detect_anomaly():
        with set_detect_anomaly(False):
            assert not is_anomaly_enabled()
            lucid.log(lucid.tensor([-1.0], requires_grad=True))
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled()


def test_set_detect_anomaly_restores_after_an_exception():
    with pytest.raises(KeyError):
        with set_detect_anomaly(True):
            raise KeyError("boom")
    assert not is_anomaly_enabled()


def test_set_detect_anomaly_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with set_detect_anomaly(True):
            pass


def test_anomaly_mode_in_one_thread_changes_nothing_in_another():
    results: dict = {}
    entered, checked = threading.Event(), threading.Event()

    def other_thread():
        try:
            entered.wait(5)
            results["enabled"] = is_anomaly_enabled()
            # log of a negative must not raise here: anomaly mode belongs to the main thread
            results["value"] = lucid.log(lucid.tensor([-1.0], requires_grad=True)).item()
        except BaseException as error:  # noqa: BLE001 - reported to the main thread
            results["error"] = error
        finally:
            checked.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with detect_anomaly():
        entered.set()
        checked.wait(5)
    thread.join(5)
    assert "error" not in results, results.get("error")
    assert results["enabled"] is False
    assert np.isnan(results["value"])


def test_anomaly_mode_enabled_in_another_thread_leaves_this_one_alone():
    inside, release = threading.Event(), threading.Event()

    def other_thread():
        with detect_anomaly():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other_thread)
    thread.start()
    try:
        assert inside.wait(5)
        assert not is_anomaly_enabled()
        lucid.log(lucid.tensor([-1.0], requires_grad=True))
    finally:
        release.set()
        thread.join(5)


# ------------------------------------------------- PyTorch's documentation example
class MyFunc(Function):
    @staticmethod
    def forward(ctx, input):
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("Some error in backward")


def run_fn(a):
    out = MyFunc.apply(a)  # <doc-example-apply>
    return out.sum()


def test_pytorch_documentation_example_prints_forward_traceback():
    input = lucid.rand(10, 10, requires_grad=True)
    with pytest.warns(UserWarning) as record:
        with pytest.raises(RuntimeError) as error:
            with detect_anomaly():
                out = run_fn(input)
                out.backward()
    # The original exception propagates unchanged.
    assert type(error.value) is RuntimeError
    assert str(error.value) == "Some error in backward"
    messages = [str(w.message) for w in record if "Error detected in" in str(w.message)]
    assert len(messages) == 1
    message = messages[0]
    assert message.startswith(
        "Error detected in MyFuncBackward. Traceback of forward call that caused the error:"
    )
    assert f'File "{__file__}", line {_line("doc-example-apply")}, in run_fn' in message
    assert "out = MyFunc.apply(a)" in message
    assert not is_anomaly_enabled()


class _BackwardFailure(Exception):
    pass


class Fragile(Function):
    @staticmethod
    def forward(ctx, input):
        return input * 2.0

    @staticmethod
    def backward(ctx, grad_output):
        raise _BackwardFailure("custom failure")


def test_exception_raised_in_custom_backward_keeps_its_type():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = Fragile.apply(x)  # <fragile-apply>
        with pytest.warns(UserWarning, match="Error detected in FragileBackward") as record:
            with pytest.raises(_BackwardFailure, match="custom failure"):
                y.sum().backward()
    text = "\n".join(str(w.message) for w in record)
    assert f"line {_line('fragile-apply')}" in text


def test_exception_in_custom_backward_without_anomaly_mode_does_not_warn():
    import warnings

    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = Fragile.apply(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(_BackwardFailure):
            y.sum().backward()


# -------------------------------------------------------- first lines of errors
@requires_torch
def test_backward_nan_first_line_matches_pytorch():
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        y = lucid.where(x > 0, x.sqrt(), 0.0)
        with pytest.raises(AnomalyError) as error:
            y.sum().backward()
    t = torch.tensor([0.0, 4.0], requires_grad=True)
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError) as torch_error:
                torch.where(t > 0, t.sqrt(), 0.0).sum().backward()
    assert _first_line(error.value) == _first_line(torch_error.value)
    assert _first_line(error.value) == (
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    )


def test_backward_inf_first_line_uses_pytorch_wording():
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt()
        with pytest.raises(AnomalyError) as error:
            y.sum().backward()
    assert _first_line(error.value) == (
        "Function 'SqrtBackward0' returned inf values in its 0th output."
    )


def test_backward_error_names_the_gradient_index_like_pytorch():
    a = lucid.tensor([1.0])
    b = lucid.tensor([0.0], requires_grad=True)
    with detect_anomaly(check_forward=False):
        quotient = lucid.div(a, b)
        with pytest.raises(AnomalyError) as error:
            quotient.sum().backward()
    assert _first_line(error.value) == (
        "Function 'DivBackward0' returned inf values in its 1th output."
    )
    assert error.value.event.output_index == 1


def test_backward_error_also_emits_pytorch_warning():
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt()  # <warned-sqrt>
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0") as record:
            with pytest.raises(AnomalyError):
                y.sum().backward()
    text = "\n".join(str(w.message) for w in record)
    assert "Traceback of forward call that caused the error:" in text
    assert f"line {_line('warned-sqrt')}" in text


def test_forward_nan_first_line_names_the_op():
    x = lucid.tensor([-1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            lucid.log(x)
    assert _first_line(error.value) == (
        "Function 'log' returned nan values in its 0th output during the forward pass."
    )


def test_forward_inf_first_line_names_the_op():
    x = lucid.tensor([1.0, 100.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            x.exp()
    assert _first_line(error.value) == (
        "Function 'exp' returned inf values in its 0th output during the forward pass."
    )


# ------------------------------------------------------------- what is checked
def test_check_nan_false_records_tracebacks_but_checks_no_nan():
    x = lucid.tensor([-1.0], requires_grad=True)
    with detect_anomaly(check_nan=False):
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        y = x.sqrt()  # NaN in forward and in backward: neither raises
        assert y.grad_fn.anomaly_info is not None
        y.sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_check_inf_false_ignores_inf():
    x = lucid.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly(check_inf=False):
        big = (x * 100.0).exp()
        assert np.isinf(big.detach().numpy()).any()
        x.sqrt().sum().backward()
    assert np.isinf(x.grad.numpy()[0])


def test_check_inf_false_still_checks_nan():
    x = lucid.tensor([-1.0], requires_grad=True)
    with detect_anomaly(check_inf=False):
        with pytest.raises(AnomalyError):
            lucid.log(x)


def test_check_forward_false_lets_forward_nan_through_but_backward_check_fires():
    x = lucid.tensor([-1.0, 4.0], requires_grad=True)
    with detect_anomaly(check_forward=False):
        y = x.sqrt()  # <unchecked-forward>
        assert np.isnan(y.detach().numpy()[0])
        with pytest.raises(AnomalyError) as error:
            y.sum().backward()
    assert _first_line(error.value) == (
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    )
    event = error.value.event
    assert event.phase == "backward"
    assert event.node_name == "SqrtBackward0"
    # The NaN came in with the saved forward output: propagated, not created by this node.
    assert event.created is False
    assert "propagated" in str(error.value)
    _assert_located(event, "unchecked-forward")


def test_explicit_infinities_are_not_anomalies():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    mask = lucid.tensor([True, False])
    with detect_anomaly():
        filled = x.masked_fill(mask, float("-inf"))
        full = lucid.full((2,), float("inf"))
        literal = lucid.tensor([1.0, float("inf")])
        flowing = filled * 2.0 + literal
        shifted = x + float("inf")
    assert np.isinf(filled.detach().numpy()[0]) and np.isinf(full.numpy()).all()
    assert np.isinf(flowing.detach().numpy()).all() and np.isinf(shifted.detach().numpy()).all()


def test_gradients_from_two_branches_are_checked_when_summed():
    x = lucid.tensor([1.0], requires_grad=True)
    with detect_anomaly():
        shared = x * 1.0  # <summed-input>
        first, second = shared * 1.0, shared * 1.0
        # Each branch's gradient is finite (3e38); their float32 sum overflows.
        with pytest.raises(AnomalyError) as error:
            lucid.autograd.backward([first, second], [lucid.tensor([3e38]), lucid.tensor([3e38])])
    event = error.value.event
    assert event.phase == "accumulation"
    assert event.kind == "inf"
    assert event.mechanism == "overflow"
    assert event.created is True
    assert event.node_name == "MulBackward0"
    _assert_located(event, "summed-input")


def test_write_into_leaf_grad_is_checked():
    x = lucid.tensor([1.0], requires_grad=True)
    x.grad = lucid.tensor([3e38])
    with detect_anomaly():
        y = x * 1.0
        # Both the old .grad and the new gradient are finite; their sum is not.
        with pytest.raises(AnomalyError) as error:
            y.backward(lucid.tensor([3e38]))
    event = error.value.event
    assert event.phase == "accumulation"
    assert event.kind == "inf"
    assert event.mechanism == "overflow"
    assert event.created is True


def test_nothing_is_checked_after_the_mode_exits():
    with detect_anomaly():
        pass
    x = lucid.tensor([-1.0, 0.0], requires_grad=True)
    y = lucid.log(x) + x.sqrt()
    assert x.sqrt().grad_fn.anomaly_info is None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.sum().backward()


# ------------------------------------------------------------------- the event
def test_forward_event_fields():
    x = lucid.tensor([-1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            lucid.log(x)  # <event-log>
    event = error.value.event
    assert isinstance(event, AnomalyEvent)
    assert event.op == "log"
    assert event.node_name == "LogBackward0"
    assert event.phase == "forward"
    assert event.kind == "nan"
    assert event.mechanism == "invalid operation"
    assert event.created is True
    _assert_located(event, "event-log")
    assert event.module_path is None
    assert event.output_index == 0
    assert event.parents == []
    assert event.step is None or isinstance(event.step, int)
    assert isinstance(event.forward_traceback, list)
    assert all(isinstance(line, str) for line in event.forward_traceback)
    assert len(event.inputs) == 1
    stats = event.inputs[0]
    assert set(stats) >= {"shape", "dtype", "min", "max", "nan_count", "inf_count"}
    assert tuple(stats["shape"]) == (2,)
    assert "float32" in str(stats["dtype"])
    assert (stats["min"], stats["max"]) == (-1.0, 2.0)
    assert (stats["nan_count"], stats["inf_count"]) == (0, 0)


def test_input_min_max_cover_finite_values_only():
    x = lucid.tensor([float("inf"), float("-inf")], requires_grad=True)
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            x - x  # inf - inf: a NaN created from inputs that held none
    event = error.value.event
    assert event.op == "sub" and event.kind == "nan" and event.created is True
    assert event.mechanism == "invalid operation"
    tensors = [stats for stats in event.inputs if tuple(stats.get("shape", ())) == (2,)]
    assert len(tensors) == 2
    for stats in tensors:
        assert stats["min"] is None and stats["max"] is None
        assert (stats["nan_count"], stats["inf_count"]) == (0, 2)


def test_backward_event_fields():
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt()  # <event-sqrt>
        with pytest.raises(AnomalyError) as error:
            y.sum().backward()
    event = error.value.event
    assert event.op == "sqrt"
    assert event.node_name == "SqrtBackward0"
    assert event.phase == "backward"
    assert event.kind == "inf"
    assert event.mechanism == "division by zero"
    assert event.created is True
    assert event.output_index == 0
    _assert_located(event, "event-sqrt")
    assert event.parents == []
    assert event.inputs, "the backward's inputs are described"
    for stats in event.inputs:
        assert set(stats) >= {"shape", "dtype", "min", "max", "nan_count", "inf_count"}
    traceback_text = "\n".join(event.forward_traceback)
    assert f'File "{__file__}", line {_line("event-sqrt")}' in traceback_text
    assert "y = x.sqrt()" in traceback_text


def test_error_message_carries_every_fact():
    x = lucid.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        with module_scope("encoder"):
            with module_scope("encoder.1"):
                y = x.sqrt()  # <message-sqrt>
        with pytest.raises(AnomalyError) as error:
            y.sum().backward()
    message = str(error.value)
    event = error.value.event
    assert "backward" in message
    assert "division by zero" in message
    assert "created" in message
    assert f"{event.filename}:{_line('message-sqrt')}" in message
    assert "encoder.1" in message
    assert "Traceback of forward call that caused the error:" in message
    assert "float32" in message
    assert event.module_path == "encoder.1"


def test_module_path_is_the_innermost_scope():
    x = lucid.tensor([-1.0], requires_grad=True)
    with detect_anomaly():
        with module_scope("encoder"):
            with module_scope("encoder.1"):
                with pytest.raises(AnomalyError) as inner:
                    lucid.log(x)
            with pytest.raises(AnomalyError) as outer:
                lucid.log(x)
        with pytest.raises(AnomalyError) as outside:
            lucid.log(x)
    assert inner.value.event.module_path == "encoder.1"
    assert outer.value.event.module_path == "encoder"
    assert outside.value.event.module_path is None


def test_module_scope_pops_after_an_exception():
    x = lucid.tensor([-1.0], requires_grad=True)
    with pytest.raises(KeyError):
        with module_scope("decoder"):
            raise KeyError("boom")
    with detect_anomaly():
        with pytest.raises(AnomalyError) as error:
            lucid.log(x)
    assert error.value.event.module_path is None


def test_anomaly_error_propagates_and_restores_state():
    with pytest.raises(AnomalyError):
        with detect_anomaly():
            lucid.log(lucid.tensor([-1.0], requires_grad=True))
    assert not is_anomaly_enabled()


# ---------------------------------------------------------------------- memory
_MEASURED_TYPES = (tuple, list, dict, str, bytes, int, float)


def _retained_bytes(value, seen: set) -> int:
    """Bytes a node's anomaly record owns: containers and scalars; code objects and other
    shared objects (code, nodes, modules) are not counted."""
    if id(value) in seen or value is None or not isinstance(value, _MEASURED_TYPES):
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, tuple | list):
        size += sum(_retained_bytes(item, seen) for item in value)
    elif isinstance(value, dict):
        size += sum(_retained_bytes(k, seen) + _retained_bytes(v, seen) for k, v in value.items())
    return size


def _contains_frames(value, depth: int = 0) -> bool:
    if isinstance(value, types.FrameType | types.TracebackType):
        return True
    if depth < 6 and isinstance(value, tuple | list):
        return any(_contains_frames(item, depth + 1) for item in value)
    return False


def _deep_call(depth: int, x: lucid.Tensor) -> lucid.Tensor:
    if depth == 0:
        return x.exp()
    return _deep_call(depth - 1, x)


def test_forward_traceback_costs_at_most_1_kb_per_node():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        shallow = x.exp()
        deep = _deep_call(40, x)  # far deeper than any reasonable cap
    for node in (shallow.grad_fn, deep.grad_fn):
        info = node.anomaly_info
        assert info is not None
        assert not _contains_frames(info), "frames would keep every local alive"
        assert _retained_bytes(info, set()) <= 1024


class _Witness:
    pass


def _op_next_to_a_local(x: lucid.Tensor):
    witness = _Witness()
    return x.exp(), weakref.ref(witness)


def test_anomaly_info_keeps_no_local_alive():
    x = lucid.tensor([1.0], requires_grad=True)
    with detect_anomaly():
        y, witness = _op_next_to_a_local(x)
    gc.collect()
    assert y.grad_fn.anomaly_info is not None
    assert witness() is None


def test_no_traceback_is_recorded_outside_anomaly_mode():
    x = lucid.tensor([1.0], requires_grad=True)
    assert x.exp().grad_fn.anomaly_info is None


def test_forward_traceback_ends_at_the_user_frame():
    x = lucid.tensor([0.0], requires_grad=True)
    with detect_anomaly():
        y = x.sqrt()  # <traceback-sqrt>
        with pytest.raises(AnomalyError) as error:
            y.backward(lucid.tensor([1.0]))
    frames = [line for line in error.value.event.forward_traceback if "File" in line]
    assert frames, "the forward traceback is in the event"
    # Innermost last, as in a Python traceback: this test's line, never a frame inside lucid.
    assert f"line {_line('traceback-sqrt')}, in test_forward_traceback_ends_at" in frames[-1]
    lucid_directory = str(Path(lucid.__file__).parent)
    assert all(lucid_directory not in line for line in frames)


def test_an_inplace_op_is_judged_against_its_input_before_the_write():
    t = lucid.full((2,), 1e30)
    with detect_anomaly(), pytest.raises(AnomalyError) as error:
        t.mul_(lucid.full((2,), 1e30))
    assert (error.value.event.op, error.value.event.mechanism) == ("mul_", "overflow")
    assert error.value.event.created


def test_an_inplace_op_on_a_value_that_already_held_inf_creates_nothing():
    t = lucid.tensor([float("inf"), 1.0])
    with detect_anomaly():
        t.mul_(lucid.full((2,), 2.0))
    assert np.isinf(t.numpy()[0])
