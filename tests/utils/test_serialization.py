"""lucid checkpoints (safetensors, no pickle, atomic writes) and DLPack / PyTorch interop."""

import collections
import io
import json
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

import lucid
from lucid.utils import serialization
from lucid.utils.serialization import from_dlpack, from_torch_state_dict, load, save
from tests.torch_oracle import requires_torch, torch


def _state_dict():
    return collections.OrderedDict(
        [("layer.weight", lucid.randn(3, 4)), ("layer.bias", lucid.zeros(3))]
    )


def _optimizer_state():
    return {
        "state": {
            0: {"step": lucid.tensor(3.0), "exp_avg": lucid.randn(2, 2)},
            1: {"step": lucid.tensor(3.0), "exp_avg": lucid.randn(2)},
        },
        "param_groups": [
            {
                "lr": 1e-3,
                "betas": (0.9, 0.999),
                "eps": float("inf"),
                "weight_decay": 0,
                "amsgrad": False,
                "maximize": None,
                "name": "decoder",
                "params": [0, 1],
            }
        ],
    }


def _assert_same(a, b):
    if isinstance(a, lucid.Tensor):
        assert isinstance(b, lucid.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        assert type(a) is type(b) and a == b


def test_state_dict_round_trip_keeps_order_and_values(tmp_path):
    state = _state_dict()
    save(state, tmp_path / "model.safetensors")
    loaded = load(tmp_path / "model.safetensors")
    assert isinstance(loaded, collections.OrderedDict)
    _assert_same(state, loaded)


def test_optimizer_state_round_trip(tmp_path):
    state = _optimizer_state()
    save(state, str(tmp_path / "optim.safetensors"))
    _assert_same(state, load(str(tmp_path / "optim.safetensors")))


def test_plain_tensor_and_file_objects_round_trip():
    buffer = io.BytesIO()
    x = lucid.arange(6).reshape(2, 3)
    save(x, buffer)
    buffer.seek(0)
    _assert_same(x, load(buffer))


@pytest.mark.parametrize(
    "dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
)
def test_every_dtype_round_trips(dtype):
    values = np.array([[0, 1, 5], [-3, 7, 1]]).astype(np.dtype(dtype))
    buffer = io.BytesIO()
    save({"x": lucid.from_numpy(values), "e": lucid.zeros(0, 2)}, buffer)
    loaded = load(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(loaded["x"].numpy(), values)
    assert loaded["x"].dtype == getattr(lucid, dtype) and loaded["e"].shape == (0, 2)


def test_non_contiguous_tensor_and_exact_floats_round_trip():
    x = lucid.randn(4, 5, dtype=lucid.float64).t()
    buffer = io.BytesIO()
    save([x, 0.1, float("nan"), -0.0, 2**70], buffer)
    loaded = load(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(loaded[0].numpy(), x.numpy())
    assert loaded[1] == 0.1 and np.isnan(loaded[2]) and str(loaded[3]) == "-0.0"
    assert loaded[4] == 2**70


def test_shared_tensor_is_stored_once_and_stays_shared():
    w = lucid.randn(3)
    buffer = io.BytesIO()
    save({"a": w, "b": w}, buffer)
    loaded = load(io.BytesIO(buffer.getvalue()))
    assert loaded["a"] is loaded["b"]


def test_file_is_standard_safetensors_with_readable_names(tmp_path):
    path = tmp_path / "m.safetensors"
    state = _state_dict()
    save(state, path)
    content = path.read_bytes()
    (length,) = struct.unpack("<Q", content[:8])
    assert (8 + length) % 8 == 0
    header = json.loads(content[8 : 8 + length])
    assert header["__metadata__"]["format"] == "lucid"
    assert all(isinstance(v, str) for v in header["__metadata__"].values())
    entry = header["layer.weight"]
    assert entry["dtype"] == "F32" and entry["shape"] == [3, 4]
    begin, end = entry["data_offsets"]
    raw = np.frombuffer(content[8 + length + begin : 8 + length + end], dtype="<f4")
    np.testing.assert_array_equal(raw.reshape(3, 4), state["layer.weight"].numpy())
    assert b"pickle" not in content and not content.startswith(b"PK")


def test_unsupported_object_raises_type_error():
    with pytest.raises(TypeError, match="cannot store an object of type"):
        save({"f": print}, io.BytesIO())


def test_crash_during_write_leaves_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    save({"x": lucid.ones(3)}, path)
    before = path.read_bytes()

    def crash(fd):
        raise OSError("disk full")

    monkeypatch.setattr(serialization.os, "fsync", crash)
    with pytest.raises(OSError, match="disk full"):
        save({"x": lucid.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.safetensors"]


def test_save_replaces_existing_file(tmp_path):
    path = tmp_path / "model.safetensors"
    save({"x": lucid.ones(3)}, path)
    save({"x": lucid.zeros(2)}, path)
    assert load(path)["x"].tolist() == [0.0, 0.0]
    assert os.listdir(tmp_path) == ["model.safetensors"]


def _checkpoint_bytes():
    buffer = io.BytesIO()
    save(_optimizer_state(), buffer)
    return buffer.getvalue()


def _with_header(header):
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "only 0 bytes"),
        (b"\x80\x02}q\x00.", "is a PyTorch pickle checkpoint .a pickle stream"),
        (b"PK\x03\x04" + b"\x00" * 60, "header length .* exceeds file size|implausibly large"),
        (struct.pack("<Q", 50) + b"{}", "header length 50 exceeds file size 10"),
        (struct.pack("<Q", 8) + b"not json", "header is not valid JSON"),
        (_with_header([1, 2]), "not a JSON object"),
        (
            _with_header({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}),
            "exceed the data section",
        ),
    ],
)
def test_foreign_or_corrupt_files_raise_clear_errors(content, message):
    with pytest.raises(RuntimeError, match=message):
        load(io.BytesIO(content))


_LAYOUTS = {
    "overlapping": ([("a", [0, 8]), ("b", [4, 12])], 12, "overlap another tensor's bytes"),
    "the same bytes twice": ([("a", [0, 8]), ("b", [0, 8])], 8, "overlap another tensor's bytes"),
    "a gap": ([("a", [0, 8]), ("b", [12, 20])], 20, r"bytes \[8, 12\] .* belong to no tensor"),
    "trailing bytes": ([("a", [0, 8])], 12, "4 bytes after the last tensor"),
}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_tensors_whose_bytes_do_not_tile_the_data_are_refused_as_safetensors_does(layout):
    entries, size, message = _LAYOUTS[layout]
    header = {key: {"dtype": "F32", "shape": [2], "data_offsets": o} for key, o in entries}
    content = _with_header(header) + bytes(size)
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    with pytest.raises(Exception, match="invalid offset|file not fully covered"):
        safetensors_numpy.load(content)
    with pytest.raises(RuntimeError, match=message):
        load(io.BytesIO(content))


class _NeverUnpickled:
    def __reduce__(self):
        # unpickling this would raise: loading must fail on the file type before that
        return (_fail_if_unpickled, ())


def _fail_if_unpickled():
    raise AssertionError("lucid.load unpickled a file")


def _torch_style_zip(pickled: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model/data.pkl", pickled)
        archive.writestr("model/byteorder", "little")
        archive.writestr("model/data/0", b"\x00" * 16)
    return buffer.getvalue()


_RECIPE = "    model.load_state_dict(lucid.utils.from_torch_state_dict(state_dict))"


@pytest.mark.parametrize("layout", ["zip", "legacy"])
def test_pytorch_pickle_checkpoint_is_named_and_never_unpickled(tmp_path, layout):
    pickled = pickle.dumps({"w": _NeverUnpickled()}, protocol=2)
    path = tmp_path / "model.pt"
    path.write_bytes(_torch_style_zip(pickled) if layout == "zip" else pickled)
    with pytest.raises(RuntimeError) as error:
        load(path)
    message = str(error.value)
    assert message.startswith(f"lucid.load: {str(path)!r} is a PyTorch pickle checkpoint (")
    assert "lucid never unpickles" in message
    assert (
        f"    state_dict = torch.load({str(path)!r}, map_location='cpu', weights_only=True)\n"
        in message
    )
    assert _RECIPE in message


def test_pickle_check_does_not_mistake_a_lucid_header_length_for_a_pickle():
    # a safetensors file opens with its header length: a low byte of 0x80 is not a pickle
    for padding in range(0, 512, 8):
        buffer = io.BytesIO()
        save({"x": lucid.ones(2), "note": "n" * padding}, buffer)
        if buffer.getvalue()[0] == 0x80:
            break
    else:
        pytest.fail("no header length with a low byte of 0x80 was produced")
    assert load(io.BytesIO(buffer.getvalue()))["note"] == "n" * padding


@requires_torch
@pytest.mark.parametrize("zip_format", [True, False])
def test_torch_save_files_get_the_conversion_recipe_and_the_recipe_works(tmp_path, zip_format):
    layer = torch.nn.Linear(3, 2)
    path = tmp_path / "layer.pth"
    torch.save(layer.state_dict(), path, _use_new_zipfile_serialization=zip_format)
    with pytest.raises(RuntimeError, match="is a PyTorch pickle checkpoint") as error:
        lucid.load(path)
    assert _RECIPE in str(error.value)
    stream = io.BytesIO()
    torch.save(layer.state_dict(), stream)
    stream.seek(0)
    with pytest.raises(RuntimeError, match="^lucid.load: the file is a PyTorch pickle checkpoint"):
        lucid.load(stream)
    # the recipe, as the message spells it
    state_dict = torch.load(path, map_location="cpu", weights_only=True)
    model = lucid.nn.Linear(3, 2)
    model.load_state_dict(lucid.utils.from_torch_state_dict(state_dict))
    x = np.ones((1, 3), np.float32)
    expected = layer(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(model(lucid.tensor(x)).detach().numpy(), expected, rtol=1e-6)


def test_truncated_checkpoint_raises():
    content = _checkpoint_bytes()
    with pytest.raises(RuntimeError, match="the file is truncated"):
        load(io.BytesIO(content[:-5]))
    with pytest.raises(RuntimeError, match="truncated"):
        load(io.BytesIO(content[:20]))


def test_tampered_structure_raises_and_runs_nothing():
    metadata = {
        "format": "lucid",
        "lucid.version": "1",
        "lucid.structure": json.dumps({"type": "__import__('os').system('false')"}),
    }
    with pytest.raises(RuntimeError, match="unknown structure type"):
        load(io.BytesIO(_with_header({"__metadata__": metadata})))
    metadata["lucid.structure"] = json.dumps({"type": "tensor", "key": "missing"})
    with pytest.raises(RuntimeError, match="corrupted checkpoint"):
        load(io.BytesIO(_with_header({"__metadata__": metadata})))
    bad = {
        "__metadata__": metadata,
        "missing": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]},
    }
    with pytest.raises(RuntimeError, match="need 8"):
        load(io.BytesIO(_with_header(bad)))
    bad["missing"]["dtype"] = ["F32"]
    with pytest.raises(RuntimeError, match="unknown dtype"):
        load(io.BytesIO(_with_header(bad)))


@requires_torch
def test_from_dlpack_shares_memory_with_numpy_and_torch():
    array = np.arange(4.0)
    x = from_dlpack(array)
    array[0] = 42.0
    assert x[0].item() == 42.0
    t = torch.arange(3, dtype=torch.float32)
    y = from_dlpack(t)
    t[1] = -7.0
    assert y.tolist() == [0.0, -7.0, 2.0] and y.dtype == lucid.float32
    z = from_dlpack(torch.utils.dlpack.to_dlpack(t))
    t[2] = 9.0
    assert z[2].item() == 9.0


@requires_torch
def test_torch_and_numpy_read_lucid_tensors_without_copy():
    x = lucid.zeros(3)
    t = torch.from_dlpack(x)
    a = np.from_dlpack(x)
    t[0] = 5.0
    assert x[0].item() == 5.0 and a[0] == 5.0
    assert x.__dlpack_device__() == (1, 0)


@requires_torch
def test_from_torch_state_dict_gives_same_outputs_as_torch():
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 3).double()
    state = from_torch_state_dict(layer.state_dict())
    assert list(state) == ["weight", "bias"] and state["weight"].dtype == lucid.float64
    x = np.random.default_rng(0).standard_normal((5, 4))
    expected = layer(torch.from_numpy(x)).detach().numpy()
    ours = lucid.from_numpy(x) @ state["weight"].t() + state["bias"]
    np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-12)
    with torch.no_grad():
        layer.weight.zero_()
    assert state["weight"].abs().sum().item() > 0


@requires_torch
def test_from_torch_state_dict_keeps_bfloat16():
    weights = torch.tensor([1.0, -2.5, 3.0e38, 1.0e-40]).to(torch.bfloat16)
    state = from_torch_state_dict({"w": weights, "n": 3})
    assert state["w"].dtype == lucid.bfloat16 and state["n"] == 3
    np.testing.assert_array_equal(state["w"].float().numpy(), weights.float().numpy())


def test_bfloat16_round_trips_as_bf16(tmp_path):
    values = lucid.tensor([1.0, -2.5, 3.0e38, float("inf"), 1.0e-40]).bfloat16()
    path = tmp_path / "bf16.safetensors"
    save({"w": values}, path)
    header_length = struct.unpack("<Q", path.read_bytes()[:8])[0]
    header = json.loads(path.read_bytes()[8 : 8 + header_length])
    assert header["w"]["dtype"] == "BF16" and header["w"]["data_offsets"] == [0, 10]
    loaded = load(path)["w"]
    assert loaded.dtype == lucid.bfloat16
    np.testing.assert_array_equal(loaded.float().numpy(), values.float().numpy())


def test_requires_grad_flag_round_trips():
    buffer = io.BytesIO()
    save([lucid.ones(2, requires_grad=True), lucid.ones(2)], buffer)
    first, second = load(io.BytesIO(buffer.getvalue()))
    assert first.requires_grad and first.is_leaf and not second.requires_grad


@requires_torch
def test_torch_weights_load_into_a_lucid_module_and_survive_a_checkpoint(tmp_path):
    nn = pytest.importorskip("lucid.nn")

    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lucid.zeros(3, 4))
            self.bias = nn.Parameter(lucid.zeros(3))

        def forward(self, x):
            return x @ self.weight.t() + self.bias

    torch.manual_seed(0)
    reference = torch.nn.Linear(4, 3)
    model = Affine()
    model.load_state_dict(from_torch_state_dict(reference.state_dict()))
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    expected = reference(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(model(lucid.from_numpy(x)).detach().numpy(), expected, atol=1e-6)
    save(model.state_dict(), tmp_path / "affine.safetensors")
    restored = Affine()
    restored.load_state_dict(load(tmp_path / "affine.safetensors"))
    np.testing.assert_allclose(restored(lucid.from_numpy(x)).detach().numpy(), expected, atol=1e-6)


def test_dtypes_and_awkward_keys_round_trip():
    state = {"__metadata__": lucid.ones(1), "dtype": lucid.float16, 3: None}
    buffer = io.BytesIO()
    save(state, buffer)
    _assert_same(state, load(io.BytesIO(buffer.getvalue())))


def test_overflowing_shape_is_rejected():
    metadata = {"format": "lucid", "lucid.version": "1", "lucid.structure": "{}"}
    entry = {"dtype": "F64", "shape": [2**62, 4], "data_offsets": [0, 0]}
    with pytest.raises(RuntimeError, match="bytes of data but its shape"):
        load(io.BytesIO(_with_header({"__metadata__": metadata, "x": entry})))


# ---------------------------------------------- any safetensors file (issue 16)
try:
    import safetensors.numpy as safetensors_numpy
except ImportError:
    safetensors_numpy = None
requires_safetensors = pytest.mark.skipif(
    safetensors_numpy is None, reason="the safetensors package is not installed (test extra)"
)

SAFETENSORS_DTYPES = [
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_,
]  # fmt: skip


@requires_safetensors
@pytest.mark.parametrize("dtype", SAFETENSORS_DTYPES)
def test_any_safetensors_file_loads_as_a_dict_of_tensors(tmp_path, dtype):
    arrays = {
        "encoder.weight": (np.arange(12) % 3).astype(dtype).reshape(3, 4),
        "scalar": np.array(1, dtype=dtype),
        "empty": np.zeros((0, 2), dtype=dtype),
    }
    path = tmp_path / "foreign.safetensors"
    safetensors_numpy.save_file(arrays, str(path), metadata={"format": "np"})
    loaded = load(path)
    assert type(loaded) is dict and set(loaded) == set(arrays)
    for key, array in arrays.items():
        assert loaded[key].dtype == lucid.dtypes.from_numpy_dtype(np.dtype(dtype))
        np.testing.assert_array_equal(loaded[key].numpy(), array)
    model = lucid.nn.Linear(4, 3, bias=False)
    if np.dtype(dtype).kind == "f":
        model.load_state_dict({"weight": loaded["encoder.weight"]})


@requires_safetensors
@requires_torch
def test_safetensors_files_written_from_torch_load_with_bfloat16(tmp_path):
    import safetensors.torch

    layer = torch.nn.Linear(3, 2)
    path = tmp_path / "torch.safetensors"
    safetensors.torch.save_file(layer.state_dict(), str(path))
    model = lucid.nn.Linear(3, 2)
    model.load_state_dict(load(path))
    np.testing.assert_array_equal(model.weight.detach().numpy(), layer.weight.detach().numpy())
    weights = torch.tensor([0.1, -7.0, 1.0e30]).to(torch.bfloat16)
    safetensors.torch.save_file({"w": weights}, str(path))
    loaded = load(path)["w"]
    assert loaded.dtype == lucid.bfloat16
    np.testing.assert_array_equal(loaded.float().numpy(), weights.float().numpy())
    # and lucid's bfloat16 file is read back by safetensors as torch's bfloat16
    save({"w": loaded}, path)
    read = safetensors.torch.load_file(str(path))["w"]
    assert read.dtype == torch.bfloat16 and torch.equal(read, weights)


@requires_safetensors
def test_a_saved_state_dict_is_read_by_the_safetensors_package(tmp_path):
    model = lucid.nn.Sequential(lucid.nn.Linear(2, 3), lucid.nn.BatchNorm1d(3))
    path = tmp_path / "model.safetensors"
    save(model.state_dict(), path)
    arrays = safetensors_numpy.load_file(str(path))
    state = model.state_dict()
    assert set(arrays) == set(state)
    for key, value in state.items():
        np.testing.assert_array_equal(arrays[key], value.numpy())
