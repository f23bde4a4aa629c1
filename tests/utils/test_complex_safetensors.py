"""Complex tensors in lucid checkpoints: complex64 as safetensors' "C64", byte for byte as the
safetensors package writes torch.complex64; complex128, which the format lacks, as float64
(real, imaginary) pairs that lucid reads back as complex128."""

from __future__ import annotations

import io
import json
import struct

import numpy as np
import pytest

import lucid
from lucid.utils.serialization import load, save
from tests.torch_oracle import requires_torch, torch

try:
    import safetensors.numpy as safetensors_numpy
except ImportError:
    safetensors_numpy = None
requires_safetensors = pytest.mark.skipif(
    safetensors_numpy is None, reason="the safetensors package is not installed (test extra)"
)

# awkward values: signed zeros, extremes, nan and inf in either part
VALUES = [1 + 2j, -0.0 - 3.5j, 1e30 + 1e-30j, complex(float("nan"), 1), complex(0, float("inf"))]


def _complex_tensor(dtype: lucid.dtype) -> lucid.Tensor:
    return lucid.tensor(VALUES, dtype=dtype).reshape(1, 5)


def _round_trip(obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    return load(io.BytesIO(buffer.getvalue())), buffer.getvalue()


def _header(content: bytes) -> dict:
    (length,) = struct.unpack("<Q", content[:8])
    return json.loads(content[8 : 8 + length])


def _assert_identical(loaded: lucid.Tensor, expected: lucid.Tensor) -> None:
    assert loaded.dtype == expected.dtype and loaded.shape == expected.shape
    # the same bits, so signed zeros and nan payload positions survive
    np.testing.assert_array_equal(
        lucid.view_as_real(loaded).numpy().view(np.uint8),
        lucid.view_as_real(expected.contiguous()).numpy().view(np.uint8),
    )


@pytest.mark.parametrize("dtype", [lucid.complex64, lucid.complex128])
def test_complex_tensors_round_trip_bit_for_bit(dtype):
    x = _complex_tensor(dtype)
    loaded, _ = _round_trip({"x": x, "t": x.t(), "scalar": x[0, 0], "empty": x[:, :0]})
    _assert_identical(loaded["x"], x)
    _assert_identical(loaded["t"], x.t())
    _assert_identical(loaded["scalar"], x[0, 0])
    _assert_identical(loaded["empty"], x[:, :0])
    assert loaded["x"].is_contiguous() and loaded["x"].grad_fn is None


def test_complex64_is_stored_as_c64_and_complex128_as_float64_pairs():
    _, content = _round_trip(
        {"a": _complex_tensor(lucid.complex64), "b": _complex_tensor(lucid.complex128)}
    )
    header = _header(content)
    assert header["a"]["dtype"] == "C64" and header["a"]["shape"] == [1, 5]
    assert header["b"]["dtype"] == "F64" and header["b"]["shape"] == [1, 5, 2]
    assert json.loads(header["__metadata__"]["lucid.complex128"]) == ["b"]


def test_complex_parameters_and_optimizer_state_round_trip():
    weight = lucid.nn.Parameter(lucid.tensor([[1 + 2j, 3 - 4j]], dtype=lucid.complex128))
    opt = lucid.optim.Adam([weight], lr=0.1)
    weight.grad = lucid.tensor([[0.5 - 1j, 2 + 0j]], dtype=lucid.complex128)
    opt.step()
    loaded, _ = _round_trip({"model": {"weight": weight}, "optim": opt.state_dict()})
    assert loaded["model"]["weight"].requires_grad
    _assert_identical(loaded["model"]["weight"].detach(), weight.detach())
    _assert_identical(loaded["optim"]["state"][0]["exp_avg_sq"], opt.state[weight]["exp_avg_sq"])
    restored = lucid.optim.Adam([loaded["model"]["weight"]], lr=0.1)
    restored.load_state_dict(loaded["optim"])
    assert restored.state[loaded["model"]["weight"]]["exp_avg"].dtype == lucid.complex128


def test_shared_complex128_tensor_stays_shared():
    x = _complex_tensor(lucid.complex128)
    loaded, _ = _round_trip([x, {"again": x}])
    assert loaded[0] is loaded[1]["again"] and loaded[0].dtype == lucid.complex128


@pytest.mark.parametrize(
    "listed", ['["missing"]', '"b"', "[1]", "not json", '["real"]'], ids=lambda text: text
)
def test_a_bad_complex128_list_is_refused_as_corrupt(listed):
    buffer = io.BytesIO()
    save({"b": _complex_tensor(lucid.complex128), "real": lucid.zeros(3)}, buffer)
    content = buffer.getvalue()
    header = _header(content)
    header["__metadata__"]["lucid.complex128"] = listed
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    (length,) = struct.unpack("<Q", content[:8])
    tampered = struct.pack("<Q", len(encoded)) + encoded + content[8 + length :]
    with pytest.raises(RuntimeError, match="^lucid.load: corrupted checkpoint"):
        load(io.BytesIO(tampered))


@requires_safetensors
def test_safetensors_package_reads_lucid_complex_tensors():
    _, content = _round_trip(
        {"a": _complex_tensor(lucid.complex64), "b": _complex_tensor(lucid.complex128)}
    )
    arrays = safetensors_numpy.load(content)
    assert arrays["a"].dtype == np.complex64
    np.testing.assert_array_equal(arrays["a"], np.array([VALUES], dtype=np.complex64))
    assert arrays["b"].dtype == np.float64 and arrays["b"].shape == (1, 5, 2)
    np.testing.assert_array_equal(arrays["b"].view(np.complex128)[..., 0], np.array([VALUES]))


@requires_safetensors
def test_complex64_files_from_the_safetensors_package_load():
    array = np.array([VALUES, VALUES[::-1]], dtype=np.complex64)
    loaded = load(io.BytesIO(safetensors_numpy.save({"z": array})))
    assert type(loaded) is dict and loaded["z"].dtype == lucid.complex64
    np.testing.assert_array_equal(loaded["z"].numpy(), array)


@requires_safetensors
@requires_torch
def test_complex64_bytes_match_what_safetensors_writes_for_torch(tmp_path):
    import safetensors.torch

    theirs = torch.tensor([VALUES], dtype=torch.complex64)
    path = tmp_path / "torch.safetensors"
    safetensors.torch.save_file({"z": theirs}, str(path))
    loaded = load(path)["z"]
    assert loaded.dtype == lucid.complex64
    np.testing.assert_array_equal(loaded.numpy(), theirs.numpy())
    # lucid's entry and data bytes are the package's (lucid adds only its __metadata__)
    torch_content = path.read_bytes()
    _, lucid_content = _round_trip({"z": loaded})
    torch_header, lucid_header = _header(torch_content), _header(lucid_content)
    assert lucid_header["z"] == torch_header["z"]
    data_bytes = 5 * 8  # five complex64 values
    assert lucid_content[-data_bytes:] == torch_content[-data_bytes:]
    save({"z": loaded}, path)
    read = safetensors.torch.load_file(str(path))["z"]
    assert read.dtype == torch.complex64
    assert torch.equal(torch.view_as_real(read).isnan(), torch.view_as_real(theirs).isnan())
    np.testing.assert_array_equal(read.numpy(), theirs.numpy())


@requires_torch
def test_torch_complex_state_dict_converts_and_checkpoints():
    state = {"w": torch.tensor([VALUES], dtype=torch.complex128)}
    converted = lucid.utils.from_torch_state_dict(state)
    loaded, _ = _round_trip(converted)
    assert loaded["w"].dtype == lucid.complex128
    np.testing.assert_array_equal(loaded["w"].numpy(), state["w"].numpy())
