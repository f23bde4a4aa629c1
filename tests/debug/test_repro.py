"""Reproducer bundles: one safetensors file, no pickle, written atomically; load_repro re-runs
the culprit op and re-raises; broken bundles give clear errors."""

from __future__ import annotations

import json
import os
import pickle
import struct
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import AnomalyError, Function, NonFiniteWarning
from lucid.debug import (
    NaNDetector,
    ReproBundle,
    load_repro,
    read_repro,
    replay_step,
    save_repro,
)
from lucid.debug.repro import _decode
from lucid.ops.arithmetic import Div


def _forward_error() -> AnomalyError:
    x = lucid.tensor([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with lucid.autograd.detect_anomaly():
                (x / x).sum()
        except AnomalyError as error:
            return error
    raise AssertionError("no anomaly")


def _reraised(path) -> AnomalyError:
    with pytest.raises(AnomalyError) as caught:
        load_repro(path)
    return caught.value


def test_forward_bundle_reraises_the_same_op_and_kind(tmp_path) -> None:
    event = _forward_error().event
    path = save_repro(event, tmp_path / "div.safetensors")
    assert path == str(tmp_path / "div.safetensors")
    error = _reraised(path)
    assert (error.event.op, error.event.kind, error.event.phase) == ("div", "nan", "forward")
    assert error.event.mechanism == "invalid operation"
    assert any(path in note for note in error.__notes__)


def test_backward_bundle_from_a_replay_reraises_the_backward_error(tmp_path) -> None:
    weight = lucid.zeros(3, requires_grad=True)

    def step(x):
        loss = (weight * x).sqrt().sum()
        loss.backward()
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonFiniteWarning)
        result = replay_step(step, lucid.ones(3), step=4)
    path = result.save_repro(tmp_path / "sqrt.safetensors")
    bundle = read_repro(path)
    assert bundle.metadata["op_call"] == "backward" and bundle.metadata["step"] == 4
    error = _reraised(path)
    assert (error.event.op, error.event.kind, error.event.phase) == ("sqrt", "inf", "backward")


def test_bundle_metadata_records_op_class_location_source_and_versions(tmp_path) -> None:
    event = _forward_error().event
    event.step = 12
    meta = read_repro(save_repro(event, tmp_path / "b.safetensors")).metadata
    assert meta["op"] == "div" and meta["op_class"] == "lucid.ops.arithmetic.Div"
    assert (meta["kind"], meta["phase"], meta["step"]) == ("nan", "forward", 12)
    assert meta["location"].startswith(__file__ + ":")
    assert meta["source_line"] == "(x / x).sum()"
    assert meta["lucid_version"] == lucid.__version__
    assert meta["inputs"][0]["shape"] == [2] and meta["inputs"][0]["min"] == 0.0


def test_bundle_holds_batch_rng_model_and_optimizer_state(tmp_path) -> None:
    model = nn.Linear(3, 2)
    optimizer = lucid.optim.Adam(model.parameters(), lr=0.1)
    model(lucid.rand(4, 3)).sum().backward()
    optimizer.step()
    rng_state = lucid.get_rng_state()
    expected_draw = lucid.rand(5).numpy()
    batch = (lucid.rand(4, 3), lucid.tensor([0, 1, 1, 0]))
    path = save_repro(_forward_error().event, tmp_path / "state.safetensors", model=model,
                      optimizer=optimizer, batch=batch, rng_state=rng_state)  # fmt: skip
    bundle = read_repro(path)
    assert isinstance(bundle, ReproBundle)
    for stored, original in zip(bundle.batch, batch):
        np.testing.assert_array_equal(stored.numpy(), original.numpy())
        assert stored.dtype == original.dtype
    fresh = nn.Linear(3, 2)
    fresh_optimizer = lucid.optim.Adam(fresh.parameters(), lr=0.1)
    bundle.restore(fresh, fresh_optimizer)
    np.testing.assert_array_equal(lucid.rand(5).numpy(), expected_draw)
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(fresh.state_dict()[name].numpy(), value.numpy())
    for saved, restored in zip(optimizer.state.values(), fresh_optimizer.state.values()):
        np.testing.assert_array_equal(saved["exp_avg"].numpy(), restored["exp_avg"].numpy())


def test_restore_without_saved_model_state_is_an_error(tmp_path) -> None:
    bundle = read_repro(save_repro(_forward_error().event, tmp_path / "b.safetensors"))
    with pytest.raises(ValueError, match="holds no model state"):
        bundle.restore(nn.Linear(2, 2))


def test_nan_detector_event_round_trips_with_its_batch_and_model(tmp_path) -> None:
    class Halve(nn.Module):
        def forward(self, x):
            return x / x.sum(dim=1, keepdim=True)

    model = nn.Sequential(nn.Linear(2, 2), Halve())
    with lucid.no_grad():
        model[0].weight.zero_()
        model[0].bias.zero_()
    batch = lucid.ones(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NaNDetector(model, verbose=False) as detector:
            model(batch)
    event = detector.event
    assert event is not None and event.op == "div"
    path = save_repro(event, tmp_path / "detector.safetensors")
    bundle = read_repro(path)
    assert bundle.metadata["module"] == "1" and bundle.metadata["module_type"] == "Halve"
    np.testing.assert_array_equal(bundle.batch[0].numpy(), batch.numpy())
    assert set(bundle.model_state) == set(model.state_dict())
    error = _reraised(path)
    assert (error.event.op, error.event.kind) == ("div", "nan")


def test_truncated_bundle_raises_a_clear_error(tmp_path) -> None:
    path = save_repro(_forward_error().event, tmp_path / "b.safetensors")
    content = open(path, "rb").read()
    for size in (4, len(content) // 2, len(content) - 1):
        with open(path, "wb") as stream:
            stream.write(content[:size])
        with pytest.raises(RuntimeError, match="is not a usable reproducer bundle"):
            load_repro(path)


def test_corrupted_bundle_raises_a_clear_error(tmp_path) -> None:
    path = save_repro(_forward_error().event, tmp_path / "b.safetensors")
    content = bytearray(open(path, "rb").read())
    content[12:20] = b"\xff" * 8  # inside the JSON header
    open(path, "wb").write(bytes(content))
    with pytest.raises(RuntimeError, match="is not a usable reproducer bundle.*not valid JSON"):
        read_repro(path)


def test_a_checkpoint_that_is_not_a_bundle_is_rejected(tmp_path) -> None:
    path = tmp_path / "weights.safetensors"
    lucid.save({"weight": lucid.ones(2)}, path)
    with pytest.raises(RuntimeError, match="not a reproducer bundle"):
        read_repro(path)


def test_bundle_is_plain_safetensors_and_loads_without_pickle(tmp_path, monkeypatch) -> None:
    path = save_repro(_forward_error().event, tmp_path / "b.safetensors")
    content = open(path, "rb").read()
    (length,) = struct.unpack("<Q", content[:8])
    header = json.loads(content[8 : 8 + length])
    tensors = {key: entry for key, entry in header.items() if key != "__metadata__"}
    assert tensors and all(entry["dtype"] in {"F32", "U8", "I64"} for entry in tensors.values())

    def refuse(*args, **kwargs):
        raise AssertionError("pickle was used")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    monkeypatch.setattr(np, "load", refuse)
    assert _reraised(path).event.op == "div"


def test_saving_replaces_a_bundle_atomically_and_leaves_no_temporary_file(tmp_path) -> None:
    target = tmp_path / "b.safetensors"
    save_repro(_forward_error().event, target)
    event = _forward_error().event
    event.step = 99
    save_repro(event, target)
    assert read_repro(target).metadata["step"] == 99
    assert os.listdir(tmp_path) == ["b.safetensors"]


def test_index_like_arguments_round_trip(tmp_path) -> None:
    index = (slice(1, None, 2), Ellipsis, None, np.array([0, 2]))
    op_args = (np.ones((3, 4), np.float32), index, 2.5, np.dtype("f4"))
    event = SimpleNamespace(op="index", kind="nan", phase="forward", op_function=Div,
                            op_args=op_args)  # fmt: skip
    bundle = read_repro(save_repro(event, tmp_path / "b.safetensors"))
    tensor, stored_index, number, dtype = (_decode(arg, True) for arg in bundle.op_call["args"])
    assert isinstance(tensor, lucid.Tensor) and tensor.shape == (3, 4)
    assert stored_index[:3] == (slice(1, None, 2), Ellipsis, None)
    assert isinstance(stored_index[3], np.ndarray) and stored_index[3].tolist() == [0, 2]
    assert number == 2.5 and dtype == np.dtype("f4")


def test_a_bundle_that_runs_clean_says_it_does_not_reproduce(tmp_path) -> None:
    event = SimpleNamespace(op="div", kind="nan", phase="forward", op_function=Div,
                            op_args=(np.ones(2, np.float32), np.ones(2, np.float32)))  # fmt: skip
    path = save_repro(event, tmp_path / "b.safetensors")
    with pytest.raises(RuntimeError, match="does not reproduce the recorded nan"):
        load_repro(path)


def test_a_bundle_without_op_arguments_says_what_it_still_holds(tmp_path) -> None:
    event = SimpleNamespace(op="div", kind="nan", phase="accumulation", op_function=Div,
                            op_args=None)  # fmt: skip
    path = save_repro(event, tmp_path / "b.safetensors", batch=lucid.ones(2))
    with pytest.raises(RuntimeError, match=r"holds no arguments .*restore\(model, optimizer\)"):
        load_repro(path)
    assert read_repro(path).batch[0].shape == (2,)


class _UserLog(Function):
    @staticmethod
    def forward(ctx, x):
        with np.errstate(all="ignore"):
            return lucid.from_numpy(np.log(x.numpy()))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def test_ops_outside_lucid_are_never_imported_from_a_bundle(tmp_path) -> None:
    x = lucid.tensor([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AnomalyError) as caught, lucid.autograd.detect_anomaly():
            _UserLog.apply(x)
    path = save_repro(caught.value.event, tmp_path / "user.safetensors")
    assert read_repro(path).metadata["op_class"] == f"{__name__}._UserLog"
    with pytest.raises(RuntimeError, match="not one of lucid's ops"):
        load_repro(path)
    with pytest.raises(AnomalyError, match="_UserLog"):
        load_repro(path, function=_UserLog)


@pytest.mark.parametrize(
    "op_class", ["os.system", "lucid.debug.__main__.main", "lucid.ops.arithmetic.np"]
)
def test_forged_op_classes_are_refused(tmp_path, op_class: str) -> None:
    path = save_repro(_forward_error().event, tmp_path / "b.safetensors")
    bundle = read_repro(path)
    bundle.metadata["op_class"] = op_class
    with pytest.raises(RuntimeError, match="not one of lucid's ops|not an autograd Function"):
        bundle.reexecute()


def test_save_repro_of_a_clean_replay_is_an_error(tmp_path) -> None:
    result = replay_step(lambda: lucid.ones(1).sum())
    with pytest.raises(ValueError, match="nothing to reproduce"):
        save_repro(result, tmp_path / "b.safetensors")
