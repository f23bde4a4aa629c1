"""dtypes: the dtype objects, the default dtype, and PyTorch's type promotion."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import lucid
from tests.torch_oracle import TORCH_MISSING

DTYPE_NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _make(module, name: str, zero_dim: bool):
    dtype = getattr(module, name)
    return module.ones((), dtype=dtype) if zero_dim else module.ones(2, dtype=dtype)


# -------------------------------------------------------------- dtype objects
@pytest.mark.parametrize(
    ("name", "numpy_dtype", "itemsize"),
    [
        ("float16", np.float16, 2),
        ("float32", np.float32, 4),
        ("float64", np.float64, 8),
        ("int8", np.int8, 1),
        ("int16", np.int16, 2),
        ("int32", np.int32, 4),
        ("int64", np.int64, 8),
        ("uint8", np.uint8, 1),
        ("bool", np.bool_, 1),
    ],
)
def test_dtype_objects_store_as_numpy_dtypes(name, numpy_dtype, itemsize):
    dtype = getattr(lucid, name)
    assert repr(dtype) == f"lucid.{name}" and str(dtype) == f"lucid.{name}"
    assert dtype.itemsize == itemsize
    x = lucid.zeros(2, dtype=dtype)
    assert x.dtype is dtype
    assert x.numpy().dtype == np.dtype(numpy_dtype)


def test_dtype_aliases():
    assert lucid.float is lucid.float32
    assert lucid.double is lucid.float64
    assert lucid.half is lucid.float16
    assert lucid.long is lucid.int64
    assert lucid.int is lucid.int32
    assert lucid.short is lucid.int16


def test_dtype_predicates_match_pytorch():
    assert lucid.float16.is_floating_point and lucid.float64.is_floating_point
    assert not lucid.int64.is_floating_point and not lucid.bool.is_floating_point
    assert lucid.float32.is_signed and lucid.int8.is_signed
    assert not lucid.uint8.is_signed and not lucid.bool.is_signed
    # lucid has no complex dtype yet
    assert not any(getattr(lucid, name).is_complex for name in ("float32", "int64", "bool"))


def test_float32_is_the_default_dtype():
    assert lucid.get_default_dtype() is lucid.float32
    assert lucid.tensor([1.5]).dtype is lucid.float32
    assert lucid.zeros(1).dtype is lucid.float32


def test_set_default_dtype_changes_float_factories_and_promotion():
    lucid.set_default_dtype(lucid.float64)
    assert lucid.get_default_dtype() is lucid.float64
    assert lucid.tensor([1.5]).dtype is lucid.float64
    assert lucid.arange(3.0).dtype is lucid.float64
    assert lucid.rand(1).dtype is lucid.float64
    assert (lucid.tensor([1, 2]) * 1.5).dtype is lucid.float64
    assert (lucid.tensor([1, 2]) / 2).dtype is lucid.float64
    assert lucid.tensor([1]).dtype is lucid.int64
    # a tensor of explicit dtype is not affected
    assert (lucid.tensor([1.0], dtype=lucid.float16) + 1.5).dtype is lucid.float16


def test_set_default_dtype_rejects_non_float_dtypes():
    with pytest.raises(
        TypeError, match="^only floating-point types are supported as the default type$"
    ):
        lucid.set_default_dtype(lucid.int32)
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        lucid.set_default_dtype(float)
    assert lucid.get_default_dtype() is lucid.float32


# ---------------------------------------------------------------- promotion
@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (lucid.float32, lucid.float64, lucid.float64),
        (lucid.int32, lucid.int64, lucid.int64),
        (lucid.bool, lucid.int8, lucid.int8),
        (lucid.uint8, lucid.int8, lucid.int16),
        (lucid.uint8, lucid.int64, lucid.int64),
        (lucid.int32, lucid.float16, lucid.float16),
        (lucid.int64, lucid.float32, lucid.float32),
        (lucid.bool, lucid.float16, lucid.float16),
        (lucid.float16, lucid.float32, lucid.float32),
        (lucid.bool, lucid.bool, lucid.bool),
    ],
)
def test_promote_types_table(left, right, expected):
    assert lucid.promote_types(left, right) is expected
    assert lucid.promote_types(right, left) is expected


def test_int_tensor_plus_python_float_is_default_float():
    assert (lucid.tensor([1, 2]) + 1.5).dtype is lucid.float32
    assert (lucid.tensor([1, 2], dtype=lucid.int8) * 0.5).dtype is lucid.float32


def test_int_tensor_plus_python_int_keeps_tensor_dtype():
    assert (lucid.tensor([1, 2], dtype=lucid.int8) + 1).dtype is lucid.int8
    assert (lucid.tensor([1, 2], dtype=lucid.uint8) * 3).dtype is lucid.uint8


def test_float32_plus_float64_is_float64():
    assert (lucid.ones(2) + lucid.ones(2, dtype=lucid.float64)).dtype is lucid.float64


def test_int32_plus_int64_is_int64():
    assert (
        lucid.ones(2, dtype=lucid.int32) + lucid.ones(2, dtype=lucid.int64)
    ).dtype is lucid.int64


def test_bool_plus_int_is_int():
    assert (lucid.tensor([True, False]) + lucid.tensor([1, 2])).dtype is lucid.int64
    assert (lucid.tensor([True]) + 1).dtype is lucid.int64
    assert (lucid.tensor([True]) + True).dtype is lucid.bool


def test_uint8_plus_int8_is_int16():
    result = lucid.tensor([200], dtype=lucid.uint8) + lucid.tensor([-1], dtype=lucid.int8)
    assert result.dtype is lucid.int16
    assert result.tolist() == [199]


def test_zero_dim_tensor_does_not_widen_a_dimensioned_tensor_of_same_category():
    assert (lucid.ones(2) + lucid.tensor(1.0, dtype=lucid.float64)).dtype is lucid.float32
    assert (lucid.ones(2, dtype=lucid.int8) + lucid.tensor(1)).dtype is lucid.int8


def test_zero_dim_tensor_of_higher_category_sets_the_dtype():
    assert (lucid.ones(2, dtype=lucid.int8) + lucid.tensor(1.5)).dtype is lucid.float32
    assert (
        lucid.ones(2, dtype=lucid.int8) + lucid.tensor(1.5, dtype=lucid.float64)
    ).dtype is lucid.float64


def test_two_zero_dim_tensors_promote_normally():
    assert (lucid.tensor(1.0) + lucid.tensor(1.0, dtype=lucid.float64)).dtype is lucid.float64


def test_float16_plus_python_float_stays_float16():
    result = lucid.tensor([1.0], dtype=lucid.float16) + 1.5
    assert result.dtype is lucid.float16
    assert result.tolist() == [2.5]


def test_int_division_gives_default_float():
    result = lucid.tensor([1, 2]) / lucid.tensor([2, 4])
    assert result.dtype is lucid.float32
    assert result.tolist() == [0.5, 0.5]


def test_result_type_of_tensors_and_scalars():
    assert lucid.result_type(lucid.tensor([1, 2]), 1.5) is lucid.float32
    assert lucid.result_type(lucid.tensor([1, 2]), 1) is lucid.int64
    assert lucid.result_type(lucid.tensor([True]), 1) is lucid.int64
    assert lucid.result_type(lucid.ones(2, dtype=lucid.float16), lucid.ones(2)) is lucid.float32


@pytest.mark.parametrize(("left", "right"), list(itertools.product(DTYPE_NAMES, repeat=2)))
def test_tensor_promotion_matches_pytorch(left, right):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    for left_zero_dim, right_zero_dim in itertools.product([False, True], repeat=2):
        expected = (_make(torch, left, left_zero_dim) + _make(torch, right, right_zero_dim)).dtype
        result = _make(lucid, left, left_zero_dim) + _make(lucid, right, right_zero_dim)
        assert str(result.dtype) == str(expected).replace("torch.", "lucid.")
    assert str(lucid.promote_types(getattr(lucid, left), getattr(lucid, right))) == str(
        torch.promote_types(getattr(torch, left), getattr(torch, right))
    ).replace("torch.", "lucid.")


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("scalar", [2, 1.5, True])
def test_scalar_promotion_matches_pytorch(name, scalar):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    for zero_dim in (False, True):
        for op in ("__add__", "__mul__", "__radd__"):
            expected = getattr(_make(torch, name, zero_dim), op)(scalar).dtype
            result = getattr(_make(lucid, name, zero_dim), op)(scalar).dtype
            assert str(result) == str(expected).replace("torch.", "lucid.")


def test_float64_stays_float64_through_ops_and_gradients():
    x = lucid.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lucid.float64, requires_grad=True)
    w = lucid.tensor([[1.0], [2.0]], dtype=lucid.float64, requires_grad=True)
    steps = [x * 2.5, x + 1, x - 3, x / 7, x**2, -x, x.exp(), x.tanh(), x @ w, x.t(), x.reshape(4)]
    steps += [x.sum(), x.mean(), x.sum(0), (x * x).sum(1, keepdim=True), x.abs(), 1.0 / (1 + x * x)]
    for step in steps:
        assert step.dtype is lucid.float64
    loss = sum(step.sum() for step in steps)
    assert loss.dtype is lucid.float64
    loss.backward()
    assert x.grad.dtype is lucid.float64 and w.grad.dtype is lucid.float64


def test_float64_does_not_lose_precision():
    x = lucid.tensor([1.0 + 1e-12], dtype=lucid.float64)
    assert (x - 1.0).item() == pytest.approx(1e-12, rel=1e-3)


# ----------------------------------------------------------------- bfloat16
def test_bfloat16_is_stored_as_ml_dtypes_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="the bfloat16 extra is not installed")
    x = lucid.tensor([1.0, 2.5], dtype=lucid.bfloat16)
    assert x.dtype is lucid.bfloat16 and x.element_size() == 2
    assert x.numpy().dtype == np.dtype(ml_dtypes.bfloat16)
    assert lucid.from_numpy(x.numpy()).dtype is lucid.bfloat16
    assert x.type() == "lucid.BFloat16Tensor"
    assert lucid.bfloat16.is_floating_point and lucid.bfloat16.is_signed


_FIRST_BFLOAT16_USE = """
import sys
import numpy as np
import lucid
assert "ml_dtypes" not in sys.modules, "import lucid loaded ml_dtypes"
{use}
assert "ml_dtypes" in sys.modules
"""

# Each first use of bfloat16, in a fresh process, gives the tables keyed by NumPy dtype their
# bfloat16 entry: sum accumulates in float32, type() names it, load reads it.
_FIRST_USES = {
    "factory": "x = lucid.ones(3, dtype=lucid.bfloat16)\n"
    "assert x.sum().dtype is lucid.bfloat16 and x.type() == 'lucid.BFloat16Tensor'",
    "an ml_dtypes array made first": "import ml_dtypes\n"
    "x = lucid.from_numpy(np.ones(3, dtype=ml_dtypes.bfloat16))\n"
    "assert x.dtype is lucid.bfloat16 and x.type() == 'lucid.BFloat16Tensor'",
    "a conversion": "x = lucid.ones(3).to(lucid.bfloat16)\nassert x.dtype is lucid.bfloat16",
    "a checkpoint loaded": "w = lucid.load(PATH)['w']\n"
    "assert w.dtype is lucid.bfloat16 and w.tolist() == [1.0, 1.0]",
}


@pytest.mark.parametrize("use", sorted(_FIRST_USES))
def test_ml_dtypes_loads_on_the_first_use_of_bfloat16(use, tmp_path):
    pytest.importorskip("ml_dtypes", reason="the bfloat16 extra is not installed")
    path = tmp_path / "bfloat16.safetensors"
    lucid.save({"w": lucid.ones(2, dtype=lucid.bfloat16)}, str(path))
    code = _FIRST_BFLOAT16_USE.format(use=_FIRST_USES[use].replace("PATH", repr(str(path))))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("other", DTYPE_NAMES)
def test_bfloat16_promote_types_matches_pytorch(other):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    for left, right in (("bfloat16", other), (other, "bfloat16")):
        result = lucid.promote_types(getattr(lucid, left), getattr(lucid, right))
        expected = torch.promote_types(getattr(torch, left), getattr(torch, right))
        assert str(result) == str(expected).replace("torch.", "lucid.")


def test_bfloat16_can_be_the_default_dtype():
    pytest.importorskip("ml_dtypes", reason="the bfloat16 extra is not installed")
    lucid.set_default_dtype(lucid.bfloat16)
    try:
        assert lucid.tensor([1.5]).dtype is lucid.bfloat16
    finally:
        lucid.set_default_dtype(lucid.float32)


# -------------------------------------------------------------- finfo, iinfo
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_finfo_matches_pytorch(name):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    ours, theirs = lucid.finfo(getattr(lucid, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


def test_finfo_defaults_to_the_default_dtype():
    assert lucid.finfo() == lucid.finfo(lucid.float32)
    lucid.set_default_dtype(lucid.float64)
    try:
        assert lucid.finfo().dtype == "float64"
    finally:
        lucid.set_default_dtype(lucid.float32)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_pytorch(name):
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    ours, theirs = lucid.iinfo(getattr(lucid, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(
    ("function", "argument", "message"),
    [
        (lucid.finfo, lucid.int32, "lucid.finfo() requires a floating point input type"),
        (lucid.finfo, lucid.bool, "lucid.finfo() requires a floating point input type"),
        (lucid.finfo, 3, "finfo(): argument 'type' (position 1) must be lucid.dtype, not int"),
        (lucid.iinfo, lucid.float32, "lucid.iinfo() requires an integer input type"),
        (lucid.iinfo, lucid.bool, "lucid.bool is not supported by lucid.iinfo"),
    ],
)
def test_finfo_and_iinfo_reject_the_other_kind_as_pytorch(function, argument, message):
    with pytest.raises(TypeError) as error:
        function(argument)
    assert str(error.value).startswith(message)


_WITHOUT_ML_DTYPES = """
import sys
from importlib.abc import MetaPathFinder

class RefuseMlDtypes(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ml_dtypes" or name.startswith("ml_dtypes."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, RefuseMlDtypes())
import lucid
assert repr(lucid.bfloat16) == "lucid.bfloat16" and lucid.bfloat16.itemsize == 2
assert lucid.ones(2).sum().item() == 2.0
try:
    lucid.zeros(2, dtype=lucid.bfloat16)
except RuntimeError as error:
    print(error)
"""


def test_without_ml_dtypes_lucid_imports_and_bfloat16_says_what_to_install():
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ML_DTYPES], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "pip install ml_dtypes" in result.stdout
    assert 'pip install -e ".[bfloat16]"' in result.stdout
