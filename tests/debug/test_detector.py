"""NaNDetector's rules: steps, naming, stop_on_first, inputs, skips, allow_nonfinite, logs,
gradients, float16 headroom, reproducer fields, lifecycle, threads and bounded memory."""

from __future__ import annotations

import json
import logging
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid._core import sentinel
from lucid.autograd import detect_anomaly
from lucid.autograd.anomaly_mode import AnomalyError, NonFiniteWarning
from lucid.debug import (
    GradEvent,
    HeadroomWarning,
    NaNDetector,
    NaNEvent,
    allow_nonfinite,
    train_with_nan_guard,
)


@pytest.fixture(autouse=True)
def _fresh_sentinel() -> Iterator[None]:
    was_enabled = sentinel.is_sentinel_enabled()
    sentinel.set_sentinel(True)
    sentinel.reset_sentinel()
    yield
    sentinel.set_sentinel(was_enabled)
    sentinel.reset_sentinel()


def _mlp() -> nn.Sequential:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def _poison(param: lucid.Tensor, value: float = float("nan")) -> None:
    with lucid.no_grad():
        param.view(-1)[0] = value


class _Chain(nn.Module):
    """Children in order: the first gets (x, extra), each later one the previous output."""

    def __init__(self, **children: nn.Module) -> None:
        super().__init__()
        for name, child in children.items():
            self.add_module(name, child)

    def forward(self, x: lucid.Tensor, extra: lucid.Tensor) -> lucid.Tensor:
        first, *rest = self.children()
        x = first(x, extra)
        for child in rest:
            x = child(x)
        return x


def _hook_count(model: nn.Module) -> int:
    return sum(
        len(module._forward_hooks) + len(module._forward_pre_hooks) for module in model.modules()
    )


class _Masker(nn.Module):
    """Writes `value` (-inf unless told) where the mask is set: no floating-point flag is
    raised."""

    def __init__(self, value: float = float("-inf")) -> None:
        super().__init__()
        self.value = value

    def forward(self, x: lucid.Tensor, mask: lucid.Tensor) -> lucid.Tensor:
        return x.masked_fill(mask, self.value)


class _Attention(nn.Module):
    """Masked softmax over the last dim, the mask applied by masked_fill (or by log)."""

    def __init__(self, use_log: bool = False, allow: bool = False) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.use_log = use_log
        self.allow = allow

    def forward(self, x: lucid.Tensor, keep: lucid.Tensor) -> lucid.Tensor:
        scores = self.proj(x)
        if self.allow:
            with allow_nonfinite():
                scores = self._mask(scores, keep)
        else:
            scores = self._mask(scores, keep)
        return scores.softmax(-1)

    def _mask(self, scores: lucid.Tensor, keep: lucid.Tensor) -> lucid.Tensor:
        if self.use_log:
            return scores + lucid.log(keep)  # log(0) = -inf: a division-by-zero flag
        return scores.masked_fill(keep == 0, float("-inf"))


# --------------------------------------------------------------------- construction
def test_constructor_keeps_the_forward_hook_detectors_signature():
    model = _mlp()
    detector = NaNDetector(model, True, True, False, 100.0, (), 100, True)
    assert (detector.stop_on_first, detector.check_inputs, detector.check_backward) == (
        True, True, False)  # fmt: skip
    assert (detector.grad_norm_warn, detector.max_events, detector.verbose) == (100.0, 100, True)
    assert not detector.is_attached


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"max_events": 0}, ValueError), ({"grad_norm_warn": -1.0}, ValueError)],
)
def test_invalid_arguments_raise(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        NaNDetector(_mlp(), **kwargs)


def test_a_non_module_model_is_a_type_error():
    with pytest.raises(TypeError, match="nn.Module"):
        NaNDetector(lucid.zeros(3))


# --------------------------------------------------------------------- lifecycle
def test_with_returns_the_detector_and_removes_every_hook_on_exit():
    model = _mlp()
    with NaNDetector(model) as detector:
        assert isinstance(detector, NaNDetector) and detector.is_attached
        assert _hook_count(model) > 0
        assert detector._on_birth in sentinel._birth_listeners
    assert _hook_count(model) == 0
    assert detector._on_birth not in sentinel._birth_listeners


def test_hooks_are_removed_when_the_with_body_raises():
    model = _mlp()
    with pytest.raises(RuntimeError, match="boom"):
        with NaNDetector(model):
            model(lucid.randn(2, 4))
            raise RuntimeError("boom")
    assert _hook_count(model) == 0 and not sentinel._birth_listeners


def test_a_forward_that_raises_does_not_leave_the_step_open():
    model = _mlp()
    with NaNDetector(model, verbose=False) as detector:
        with pytest.raises(RuntimeError):
            model(lucid.randn(2, 5))  # wrong width
        assert detector._local.depth == 0
        _poison(model[2].weight)
        model(lucid.randn(2, 4))
    assert detector.event.op == "2.weight" and detector.event.batch_idx == 1


def test_attach_twice_is_harmless_and_detach_twice_too():
    model = _mlp()
    detector = NaNDetector(model, verbose=False)
    detector.attach()
    count = _hook_count(model)
    assert detector.attach() is detector
    assert _hook_count(model) == count
    _poison(model[0].bias)
    model(lucid.randn(2, 4))
    detector.detach()
    detector.detach()
    assert _hook_count(model) == 0
    assert len(detector.events) == 1


def test_concurrent_attach_registers_one_set_of_hooks():
    model = _mlp()
    detector = NaNDetector(model)
    single = NaNDetector(_mlp()).attach()
    expected = sum(len(m._forward_hooks) + len(m._forward_pre_hooks)
                   for m in single.model.modules())  # fmt: skip
    single.detach()
    barrier = threading.Barrier(8)

    def attach() -> None:
        barrier.wait()
        detector.attach()

    threads = [threading.Thread(target=attach) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _hook_count(model) == expected
    detector.detach()
    assert _hook_count(model) == 0


def test_the_detector_never_turns_on_anomaly_mode():
    model = _mlp()
    with NaNDetector(model, check_backward=True):
        assert not lucid.autograd.is_anomaly_enabled()
        model(lucid.randn(2, 4)).sum().backward()
    assert not lucid.autograd.is_anomaly_enabled()


# --------------------------------------------------------------------- steps
def test_each_outermost_model_call_is_one_step():
    model = _mlp()
    with NaNDetector(model, verbose=False) as detector:
        for _ in range(3):
            model(lucid.randn(2, 4))
        assert detector.batch_idx == 2
        _poison(model[2].weight)
        model(lucid.randn(2, 4))
    assert detector.event.batch_idx == 3


def test_set_batch_labels_every_later_call_until_the_next_set_batch():
    model = _mlp()
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        detector.set_batch(40)
        model(lucid.randn(2, 4))
        model(lucid.randn(2, 4))  # a second forward of the same batch
        assert detector.batch_idx == 40
        detector.set_batch(41)
        _poison(model[0].weight)
        model(lucid.randn(2, 4))
    assert [event.batch_idx for event in detector.events] == [41]


def test_calls_of_submodules_inside_the_model_are_not_extra_steps():
    model = nn.Sequential(OrderedDict(encoder=_mlp(), head=nn.Linear(2, 1)))
    with NaNDetector(model) as detector:
        model(lucid.randn(2, 4))
        model(lucid.randn(2, 4))
    assert detector.batch_idx == 1


# --------------------------------------------------------------------- naming
def test_a_nan_parameter_is_received_named_by_the_parameter_and_its_module():
    model = nn.Sequential(
        OrderedDict(encoder=nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8)),
                    head=nn.Linear(8, 2))
    )  # fmt: skip
    _poison(model.encoder[2].weight)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(3, 4))
    assert [event.op for event in detector.events] == ["encoder.2.weight"]
    event = detector.event
    assert (event.layer_name, event.module_type, event.kind, event.phase, event.received) == (
        "encoder.2", "Linear", "nan", "parameter", True)  # fmt: skip
    assert "the parameter encoder.2.weight already held nan" in event.mechanism
    assert not event.input_has_nan and event.output_has_nan
    assert event.output_shape == (8, 8)  # the parameter's


def test_a_nan_written_without_a_flag_is_caught_at_the_module_output():
    model = _Chain(mask=_Masker(float("nan")))
    mask = lucid.tensor([[True, False, False]])
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(1, 3), mask)
    event = detector.event
    assert (event.layer_name, event.kind, event.op) == ("mask", "nan", None)
    assert "no op raised a floating-point flag" in event.mechanism
    assert event.stats["nan_count"] == 1


def test_an_inf_written_as_a_value_is_intentional_and_not_reported():
    model = _Chain(mask=_Masker())
    mask = lucid.tensor([[True, False, False]])
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(1, 3), mask)
    assert not detector.triggered


def test_an_inf_in_a_parameter_is_still_reported_as_received():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 2)))
    _poison(model.fc.weight, float("inf"))
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.tensor([[1.0, 0.0]]))
    event = detector.event
    assert (event.layer_name, event.kind, event.op, event.received) == (
        "fc",
        "inf",
        "fc.weight",
        True,
    )
    assert "parameter fc.weight already held inf" in event.mechanism


def test_the_model_output_is_checked_last():
    class Root(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return self.fc(x).masked_fill(x > 100, float("nan"))

    model = Root()
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.tensor([[1.0, 200.0, 3.0]]))
    event = detector.event
    assert (event.layer_name, event.module_type, event.kind) == ("", "Root", "nan")


def test_paths_are_relative_to_the_detectors_model_when_it_is_called_from_a_bigger_one():
    inner = nn.Sequential(OrderedDict(fc=nn.Linear(4, 4), act=nn.ReLU()))

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Linear(4, 4)
            self.inner = inner

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return self.inner(self.stem(x))

    outer = Outer()

    class LogInside(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return lucid.log(x - 10.0)

    inner.add_module("tail", LogInside())
    with NaNDetector(inner, verbose=False) as detector:
        outer(lucid.randn(2, 4))
    # The birth happens in the model's child 'tail', known to the sentinel as 'inner.tail'.
    assert (detector.event.layer_name, detector.event.op) == ("tail", "log")


# --------------------------------------------------------------------- stop_on_first
def test_stop_on_first_records_nothing_after_the_first_event():
    model = _mlp()
    _poison(model[0].weight)
    with NaNDetector(model, verbose=False) as detector:
        for _ in range(5):
            model(lucid.randn(2, 4))
        assert detector.check_grad_norms() == []
    assert len(detector.events) == 1 and detector.event.batch_idx == 0
    assert detector.triggered


def test_without_stop_on_first_each_bad_step_gets_one_event():
    model = _mlp()
    _poison(model[0].weight)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        for _ in range(4):
            model(lucid.randn(2, 4))
    assert [(event.batch_idx, event.op) for event in detector.events] == [
        (0, "0.weight"), (1, "0.weight"), (2, "0.weight"), (3, "0.weight")]  # fmt: skip


def test_events_keep_the_newest_max_events_and_event_keeps_the_first():
    model = _mlp()
    _poison(model[0].weight)
    with NaNDetector(model, stop_on_first=False, max_events=3, verbose=False) as detector:
        for _ in range(10):
            model(lucid.randn(2, 4))
    assert [event.batch_idx for event in detector.events] == [7, 8, 9]
    assert detector.event.batch_idx == 0


def test_memory_stays_bounded_over_many_bad_steps():
    model = nn.Linear(2, 2)
    _poison(model.weight)
    x = lucid.randn(1, 2)
    with NaNDetector(model, stop_on_first=False, check_backward=True, max_events=5,
                     verbose=False) as detector:  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonFiniteWarning)
            for _ in range(300):
                model(x).sum().backward()
    assert len(detector.events) == 5 and len(detector.grad_events) == 0
    assert len(detector._node_paths) <= 8 and len(detector._excused_kinds) <= 2


# --------------------------------------------------------------------- inputs
def test_check_inputs_off_names_the_first_module_with_its_input_flags():
    model = _mlp()
    x = lucid.randn(2, 4)
    x[0, 0] = float("nan")
    with NaNDetector(model, check_inputs=False, verbose=False) as detector:
        model(x)
    event = detector.event
    assert (event.phase, event.layer_name, event.input_has_nan) == ("forward", "0", True)
    assert "input already held nan" in event.mechanism


def test_an_inf_input_is_received_even_where_it_makes_nan_downstream():
    model = _mlp()
    x = lucid.randn(2, 4)
    x[1, 2] = float("inf")
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(x)
    event = detector.event
    assert (event.op, event.phase, event.kind, event.layer_name) == ("input", "input", "inf", "")
    assert event.received and event.module_type is None
    assert len(detector.events) == 1


def test_keyword_arguments_are_not_checked_as_inputs():
    model = nn.MultiheadAttention(4, 1, batch_first=True)
    x = lucid.randn(1, 3, 4)
    mask = lucid.tensor([[0.0, float("-inf"), 0.0]] * 3)
    with NaNDetector(model, verbose=False) as detector:
        model(x, x, x, attn_mask=mask)
    assert not detector.triggered


def test_a_bad_batch_reaching_no_watched_module_is_named_at_the_model():
    class Identity(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return x * 2.0

    with NaNDetector(Identity(), verbose=False) as detector:
        detector.model(lucid.tensor([1.0, float("nan")]))
    assert (detector.event.op, detector.event.layer_name) == ("input", "")


# --------------------------------------------------------------------- skips
def test_watched_are_parameter_owners_and_user_leaves_not_lucid_activations_or_containers():
    attention = nn.MultiheadAttention(4, 1)  # in_proj_weight of its own, out_proj a child
    model = nn.Sequential(
        OrderedDict(
            encoder=nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Dropout(0.1)),
            attn=attention,
            mask=_Masker(),
        )
    )
    with NaNDetector(model):
        assert len(model._forward_hooks) == len(model._forward_pre_hooks) == 1
        assert len(model.encoder._forward_hooks) == 0
        assert len(model.encoder[0]._forward_hooks) == 1
        # ReLU and Dropout make non-finite values only in ops whose flags the sentinel sees.
        assert len(model.encoder[1]._forward_hooks) == len(model.encoder[2]._forward_hooks) == 0
        assert len(attention._forward_hooks) == len(attention.out_proj._forward_hooks) == 1
        assert len(model.mask._forward_hooks) == 1  # user code may write an inf as a value


def test_with_the_sentinel_off_every_leaf_is_watched():
    sentinel.set_sentinel(False)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    with NaNDetector(model):
        assert len(model[1]._forward_hooks) == 1


def test_a_nan_born_in_an_unwatched_lucid_layer_is_named_by_the_sentinel():
    class Scores(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.softmax = nn.Softmax(-1)

        def forward(self, x: lucid.Tensor, *, mask: lucid.Tensor) -> lucid.Tensor:
            return self.softmax(self.fc(x) + mask)  # -inf + finite: no flag, no birth

    model = Scores()
    mask = lucid.zeros(2, 4)
    mask[1] = float("-inf")  # a fully masked row: softmax computes -inf - (-inf)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        assert len(model.softmax._forward_hooks) == 0
        model(lucid.randn(2, 4), mask=mask)
    assert [(e.layer_name, e.op, e.kind) for e in detector.events] == [
        ("softmax", "softmax", "nan")]  # fmt: skip


def test_skip_types_are_not_hooked_nor_anything_inside_them():
    model = nn.Sequential(
        OrderedDict(attn=nn.Sequential(OrderedDict(proj=nn.Linear(4, 4), act=nn.ReLU())))
    )
    with NaNDetector(model, skip_types=(nn.Sequential,)):
        # Only the model itself (pre and post hooks); the inner Sequential is skipped.
        assert _hook_count(model) == 2
    with NaNDetector(model, skip_types=nn.ReLU):
        assert len(model.attn.act._forward_hooks) == 0
        assert len(model.attn.proj._forward_hooks) == 1


def test_births_inside_a_skipped_module_are_not_reported():
    model = _Chain(attn=_Attention(use_log=True), head=nn.Linear(4, 2))
    keep = lucid.tensor([[1.0, 1.0, 0.0, 1.0]])
    with NaNDetector(model, skip_types=(_Attention,), verbose=False) as detector:
        model(lucid.randn(1, 4), keep)
    assert not detector.triggered
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.randn(1, 4), keep)
    assert (detector.event.layer_name, detector.event.op) == ("attn", "log")


@pytest.mark.parametrize("name", ["log", "Log"])
def test_skip_ops_ignores_an_op_by_function_or_class_name(name: str):
    model = _Chain(attn=_Attention(use_log=True), head=nn.Linear(4, 2))
    keep = lucid.tensor([[1.0, 1.0, 0.0, 1.0]])
    with NaNDetector(model, skip_ops=[name], verbose=False) as detector:
        model(lucid.randn(1, 4), keep)
    assert not detector.triggered


def test_skip_ops_covers_a_module_output_the_skipped_op_wrote_directly():
    model = _Chain(mask=_Masker())
    mask = lucid.tensor([[True, False, False]])
    with NaNDetector(model, skip_ops=("masked_fill",), verbose=False) as detector:
        model(lucid.randn(1, 3, requires_grad=True), mask)
    assert not detector.triggered


def test_skip_ops_still_reports_a_real_nan_after_the_intended_inf():
    model = _Chain(attn=_Attention(use_log=True))
    with NaNDetector(model, skip_ops=["log"], verbose=False) as detector:
        model(lucid.randn(1, 4), lucid.zeros(1, 4))  # every key masked: softmax makes nan
    assert (detector.event.op, detector.event.kind) == ("softmax", "nan")


# --------------------------------------------------------------------- allow_nonfinite
def test_allow_nonfinite_around_masking_silences_the_detector():
    keep = lucid.tensor([[1.0, 1.0, 0.0, 1.0]])
    model = _Chain(attn=_Attention(use_log=True, allow=True))
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.randn(1, 4), keep)
    assert not detector.triggered


def test_allow_nonfinite_around_a_module_call_silences_its_output_check():
    model = _Chain(mask=_Masker(float("nan")))
    with NaNDetector(model, verbose=False) as detector:
        with allow_nonfinite():
            model(lucid.randn(1, 3), lucid.tensor([[True, False, False]]))
    assert not detector.triggered


def test_allow_nonfinite_stops_sentinel_births_and_warnings():
    x = lucid.zeros(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with allow_nonfinite():
            lucid.log(x).sum().backward()
    assert not sentinel._births.events
    assert not [w for w in caught if issubclass(w.category, NonFiniteWarning)]
    with pytest.warns(NonFiniteWarning):
        lucid.log(x).sum().backward()


def test_allow_nonfinite_skips_anomaly_modes_forward_checks():
    x = lucid.zeros(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with detect_anomaly():
            with allow_nonfinite():
                y = lucid.log(x)
            with pytest.raises(AnomalyError):
                lucid.log(x)
    assert np.isneginf(y.detach().numpy()).all()


def test_allow_nonfinite_nests_decorates_and_is_per_thread():
    @allow_nonfinite()
    def inside() -> bool:
        return sentinel.is_nonfinite_allowed()

    seen_in_thread = []
    with allow_nonfinite():
        with allow_nonfinite():
            assert sentinel.is_nonfinite_allowed()
        assert sentinel.is_nonfinite_allowed()
        worker = threading.Thread(
            target=lambda: seen_in_thread.append(sentinel.is_nonfinite_allowed())
        )
        worker.start()
        worker.join()
    assert not sentinel.is_nonfinite_allowed()
    assert inside() and not sentinel.is_nonfinite_allowed()
    assert seen_in_thread == [False]


def test_allow_nonfinite_restores_its_state_after_an_exception():
    with pytest.raises(ValueError):
        with allow_nonfinite():
            raise ValueError
    assert not sentinel.is_nonfinite_allowed()


# --------------------------------------------------------------------- logs
def test_log_path_appends_one_json_line_per_event_bounded_by_max_events(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"earlier": "run"}\n')
    model = _mlp()
    _poison(model[2].bias)
    with NaNDetector(model, stop_on_first=False, max_events=3, log_path=path,
                     verbose=False) as detector:  # fmt: skip
        for _ in range(5):
            model(lucid.randn(2, 4))
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"earlier": "run"}
    records = [json.loads(line) for line in lines[1:]]
    assert len(records) == 3
    assert records[0] == detector.event.to_dict()
    assert [record["batch_idx"] for record in records] == [0, 1, 2]
    assert records[0]["op"] == "2.bias" and records[0]["kind"] == "nan"


def test_events_go_to_the_lucid_debug_logger(caplog):
    model = _mlp()
    _poison(model[0].weight)
    with caplog.at_level(logging.DEBUG, logger="lucid.debug"):
        with NaNDetector(model, stop_on_first=False) as detector:
            model(lucid.randn(2, 4))
            model(lucid.randn(2, 4))
    records = [r for r in caplog.records if r.name == "lucid.debug"]
    assert [r.levelno for r in records] == [logging.WARNING, logging.WARNING]
    assert records[0].getMessage() == str(detector.events[0])  # the first in full
    assert records[1].getMessage() == detector.events[1].headline()
    assert records[1].lucid_event == detector.events[1].to_dict()


def test_verbose_false_logs_at_debug_only(caplog):
    model = _mlp()
    _poison(model[0].weight)
    with caplog.at_level(logging.DEBUG, logger="lucid.debug"):
        with NaNDetector(model, verbose=False):
            model(lucid.randn(2, 4))
    assert [r.levelno for r in caplog.records if r.name == "lucid.debug"] == [logging.DEBUG]


def test_event_str_and_summary_read_well():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))
    _poison(model.fc.weight)
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.randn(3, 4))
    text = str(detector.event)
    assert text.splitlines()[0].startswith(
        "NaNDetector: nan at step 0 received in the parameter 'fc.weight' of 'fc' (Linear), no "
        "op made it"
    )
    assert "how: the parameter fc.weight already held nan" in text
    assert "output: shape [2, 4], nan 1, inf 0" in text
    assert "inputs held: only finite values" in text
    summary = detector.summary()
    assert "1 model call(s), 1 event(s)" in summary and text.splitlines()[0] in summary
    assert "no NaN or Inf seen" in NaNDetector(_mlp()).summary()


def test_to_dict_is_json_safe_and_leaves_out_reproducer_fields():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 2)))
    _poison(model.fc.weight, float("inf"))
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.tensor([[1.0, 1.0]]))
    record = detector.event.to_dict()
    assert json.loads(json.dumps(record, allow_nan=False)) == record
    assert not {"op_function", "op_args", "batch", "rng_state", "model"} & set(record)
    assert record["output_shape"] == [2, 2] and record["received"] is True


# --------------------------------------------------------------------- reproducer fields
def test_a_birth_event_carries_the_op_its_copied_inputs_batch_rng_and_model():
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return lucid.log(self.fc(x) * 0.0)

    model = Net()
    x = lucid.randn(2, 3)
    lucid.manual_seed(7)
    state = lucid.get_rng_state().numpy().copy()
    with NaNDetector(model, verbose=False) as detector:
        model(x)
    event = detector.event
    assert event.op == "log" and event.op_function is lucid.ops.pointwise.Log
    (argument,) = event.op_args
    assert isinstance(argument, np.ndarray) and (argument == 0).all()
    assert isinstance(event.batch[0], np.ndarray) and event.batch[0] is not x.numpy()
    np.testing.assert_array_equal(event.batch[0], x.numpy())
    np.testing.assert_array_equal(event.rng_state, state)
    assert isinstance(event.model, weakref.ref) and event.model() is model
    # The sentinel's own record of the birth gets the same reproducer fields.
    birth = sentinel._births.events[-1][0]
    assert birth.op_function is event.op_function and birth.op_args is event.op_args


def test_nan_event_is_a_dataclass_with_the_contract_fields():
    names = [f.name for f in NaNEvent.__dataclass_fields__.values()]
    assert names[:15] == [
        "batch_idx", "layer_name", "module_type", "kind", "op", "location", "is_backward",
        "input_has_nan", "input_has_inf", "output_has_nan", "output_has_inf", "output_shape",
        "stats", "mechanism", "phase",
    ]  # fmt: skip
    hidden = {f.name for f in NaNEvent.__dataclass_fields__.values() if not f.repr}
    assert hidden == {"op_function", "op_args", "batch", "rng_state", "model"}


# --------------------------------------------------------------------- gradients
def test_check_grad_norms_flags_large_and_nonfinite_gradients():
    model = nn.Sequential(OrderedDict(fc1=nn.Linear(3, 3), fc2=nn.Linear(3, 1)))
    model(lucid.randn(4, 3)).sum().backward()
    with NaNDetector(model, grad_norm_warn=1e3, verbose=False) as detector:
        assert detector.check_grad_norms() == []
        model.fc1.weight.grad = model.fc1.weight.grad * 1e6
        _poison(model.fc2.bias.grad, float("inf"))
        found = detector.check_grad_norms()
    assert [(e.param_name, e.layer_name, e.reason) for e in found] == [
        ("fc1.weight", "fc1", "large"), ("fc2.bias", "fc2", "inf")]  # fmt: skip
    assert isinstance(found[0], GradEvent) and found[0].norm > 1e3
    assert list(detector.grad_events) == found and not detector.triggered


def test_grad_events_are_bounded():
    model = nn.Linear(2, 2)
    model.weight.grad = lucid.full((2, 2), 1e9)
    detector = NaNDetector(model, max_events=4, verbose=False)
    for _ in range(10):
        detector.check_grad_norms()
    assert len(detector.grad_events) == 4


# --------------------------------------------------------------------- float16 headroom
def test_float16_activation_past_an_eighth_of_max_warns_once_per_module():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 2, dtype=lucid.float16)))
    with lucid.no_grad():
        model.fc.weight.fill_(1.0)
        model.fc.bias.zero_()
    big = lucid.tensor([[5000.0, 4000.0]], dtype=lucid.float16)  # sums to 9000 > 65504 / 8
    small = lucid.tensor([[1.0, 2.0]], dtype=lucid.float16)
    with NaNDetector(model, verbose=False) as detector:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model(small)
            model(big)
            model(big)
    headroom = [w for w in caught if issubclass(w.category, HeadroomWarning)]
    assert len(headroom) == 2  # 'fc' and the model's own output, once each
    assert "'fc'" in str(headroom[0].message) and headroom[0].filename == __file__
    assert not detector.triggered


def test_float16_gradient_past_an_eighth_of_max_warns_in_check_grad_norms():
    model = nn.Linear(2, 2, dtype=lucid.float16)
    model.weight.grad = lucid.full((2, 2), 9000.0, dtype=lucid.float16)
    detector = NaNDetector(model, grad_norm_warn=None, verbose=False)
    with pytest.warns(HeadroomWarning, match="gradient of 'weight'"):
        detector.check_grad_norms()


def test_headroom_warning_is_a_runtime_warning():
    assert issubclass(HeadroomWarning, RuntimeWarning)


# --------------------------------------------------------------------- backward and loss
def test_backward_birth_in_the_loss_is_named_outside_the_model():
    model = _mlp()
    with NaNDetector(model, check_backward=True, verbose=False) as detector:
        out = model(lucid.randn(2, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonFiniteWarning)
            (out * 0.0).sqrt().sum().backward()  # sqrt'(0) = inf, in the loss
    event = detector.event
    assert (event.op, event.kind, event.module_type, event.phase) == (
        "sqrt", "inf", None, "backward")  # fmt: skip


def test_the_sentinel_still_names_backward_births_after_its_ring_is_full():
    for _ in range(40):  # more births than the ring keeps
        lucid.log(lucid.zeros(1))
    x = lucid.zeros(2, requires_grad=True)
    with pytest.warns(NonFiniteWarning, match="backward produced inf gradients"):
        x.sqrt().sum().backward()


def test_train_with_nan_guard_returns_losses_and_skips_the_bad_update():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 1)))
    batches = [(lucid.randn(4, 2), lucid.randn(4, 1)) for _ in range(5)]
    batches[3][0][0, 0] = float("nan")
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)
    steps = []
    original = optimizer.step
    optimizer.step = lambda: steps.append(original())
    losses, event = train_with_nan_guard(model, batches, nn.MSELoss(), optimizer, verbose=False)
    assert len(losses) == 4 and np.isnan(losses[-1]) and all(np.isfinite(losses[:3]))
    assert (event.op, event.batch_idx, event.layer_name) == ("input", 3, "")
    assert len(steps) == 3
    assert not model.fc._forward_hooks


def test_train_with_nan_guard_max_batches_and_a_clean_run():
    model = _mlp()
    batches = [(lucid.randn(4, 4), lucid.randint(0, 2, (4,))) for _ in range(6)]
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
    losses, event = train_with_nan_guard(
        model, batches, nn.CrossEntropyLoss(), optimizer, max_batches=4
    )
    assert len(losses) == 4 and event is None


def test_train_with_nan_guard_names_a_loss_made_non_finite_outside_the_model():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 1)))

    def criterion(output: lucid.Tensor, target: lucid.Tensor) -> lucid.Tensor:
        return lucid.log(output - output).mean()  # log(0) in the loss, not the model

    batches = [(lucid.randn(4, 2), lucid.randn(4, 1))]
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)
    losses, event = train_with_nan_guard(model, batches, criterion, optimizer, verbose=False)
    assert np.isneginf(losses[0])
    assert (event.op, event.kind, event.module_type, event.batch_idx) == ("log", "inf", None, 0)
    assert "outside the model" in event.mechanism


def test_with_the_sentinel_off_events_still_name_module_and_step():
    sentinel.set_sentinel(False)
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 2), act=nn.ReLU()))

    class LogAfter(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return lucid.log(x * 0.0)

    model.add_module("log", LogAfter())
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.randn(2, 2))
    event = detector.event
    assert (event.layer_name, event.op, event.kind) == ("log", None, "inf")
    assert "sentinel is off" in event.mechanism


def test_the_sentinel_keeps_the_flags_of_an_op_whose_forward_calls_another_op():
    # Addmm expands the bias with a lucid op after its matmul overflowed.
    weight = lucid.full((4, 4), 1e30, requires_grad=True)
    nn.functional.linear(lucid.full((2, 4), 1e30), weight, lucid.zeros(4))
    (birth, _, _, _) = sentinel._births.events[-1]
    assert (birth.op, birth.kind, birth.mechanism) == ("linear", "inf", "overflow")


# ------------------------------------------------------------------------ the step
def test_the_step_is_the_iteration_when_the_model_is_called_twice_per_step():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 1)))
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.0)
    batches = [lucid.ones(1, 2)] * 5 + [lucid.zeros(1, 2)]
    with NaNDetector(model, verbose=False) as detector:
        for step in range(3):
            optimizer.zero_grad()
            first, second = batches[2 * step], batches[2 * step + 1]
            (model(first.log()) - model(second.log())).sum().backward()
            optimizer.step()
    event = detector.event
    assert (event.step, event.batch_idx, event.model_call) == (2, 2, 5)
    assert "step 2 (model call 5)" in event.headline()


def test_set_step_names_the_step_every_tier_reports():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(2, 1)))
    lucid.debug.set_step(41)
    try:
        with NaNDetector(model, verbose=False) as detector:
            model(lucid.zeros(1, 2).log())
        assert detector.event.step == 41
        with detect_anomaly(), pytest.raises(AnomalyError) as error:
            model(lucid.zeros(1, 2)).log().sum()
        assert error.value.event.step == 41
    finally:
        lucid.debug.set_step(None)
    with pytest.raises(TypeError, match="step must be an int or None"):
        lucid.debug.set_step(1.5)


def test_a_skipped_grad_scaler_step_still_counts_as_a_step():
    from lucid._core.sentinel import step_of

    model = nn.Linear(2, 1)
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)
    scaler = lucid.amp.GradScaler("cpu")
    for value in (1.0, float("inf")):
        optimizer.zero_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler.scale(model(lucid.full((1, 2), value)).sum()).backward()
            scaler.step(optimizer)
        scaler.update()
    assert step_of(model) == 2
