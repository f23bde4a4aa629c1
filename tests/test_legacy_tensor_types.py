"""The legacy tensor types (lucid.FloatTensor, lucid.LongTensor, ...): every call form of the
legacy constructor, isinstance, Tensor.type and set_default_tensor_type, against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid import _legacy_types
from tests.torch_oracle import requires_torch, torch

NAMES = [
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
]  # fmt: skip
requires_bfloat16 = pytest.mark.skipif(
    lucid.bfloat16.numpy_dtype is None, reason="lucid.bfloat16 needs ml_dtypes"
)


class _Index:
    def __index__(self) -> int:
        return 2


def _outcome(call, framework):
    """What a call gives, in terms both frameworks can be compared in: a tensor's dtype, shape
    and (where it holds data, not uninitialised memory) values; else the error's type and
    PyTorch's message with "torch." read as "lucid."."""
    try:
        result, initialised = call(framework)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        message = str(error)
        if framework is torch:
            message = message.replace("torch.", "lucid.")
        return type(error).__name__, message
    values = result.tolist() if initialised else None
    return str(result.dtype).split(".")[-1], tuple(result.shape), values


# (call over module `m` -> (tensor, whether its values are initialised))
CONSTRUCTOR_CASES = {
    "sizes": lambda m: (m.FloatTensor(2, 3), False),
    "nothing": lambda m: (m.FloatTensor(), True),
    "list": lambda m: (m.FloatTensor([1, 2]), True),
    "nested_list": lambda m: (m.FloatTensor([[1, 2], [3, 4]]), True),
    "tuple_is_data": lambda m: (m.FloatTensor((1, 2)), True),
    "Size_is_sizes": lambda m: (m.FloatTensor(m.Size([2, 3])), False),
    "empty_Size": lambda m: (m.FloatTensor(m.Size([])), False),
    "numpy_float64": lambda m: (m.FloatTensor(np.ones(3)), True),
    "numpy_0d": lambda m: (m.FloatTensor(np.array(3.0)), True),
    "numpy_int8": lambda m: (m.FloatTensor(np.array([[1, 2]], dtype=np.int8)), True),
    "numpy_into_long": lambda m: (m.LongTensor(np.array([1.7, 2.2])), True),
    "numpy_int_is_a_size": lambda m: (m.FloatTensor(np.int64(3)), False),
    "numpy_0d_int_is_a_size": lambda m: (m.FloatTensor(np.array(3)), False),
    "index_object": lambda m: (m.FloatTensor(_Index(), 3), False),
    "numpy_int_sizes": lambda m: (m.FloatTensor(np.int32(2), np.int64(2)), False),
    "int_tensor_sizes": lambda m: (m.FloatTensor(2, m.tensor(3)), False),
    "int_tensor_first_of_sizes": lambda m: (m.FloatTensor(m.tensor(2), 3), False),
    "bool_after_a_size": lambda m: (m.FloatTensor(2, True), False),
    "range": lambda m: (m.FloatTensor(range(3)), True),
    "memoryview": lambda m: (m.FloatTensor(memoryview(b"ab")), True),
    "empty_list": lambda m: (m.FloatTensor([]), True),
    "empty_tuple": lambda m: (m.FloatTensor(()), True),
    "nested_empty": lambda m: (m.FloatTensor([[]]), True),
    "zero": lambda m: (m.FloatTensor(0), True),
    "long_truncates": lambda m: (m.LongTensor([1.5, 2.7]), True),
    "int_truncates": lambda m: (m.IntTensor([3.9, -3.9]), True),
    "bool": lambda m: (m.BoolTensor([0, 2]), True),
    "half": lambda m: (m.HalfTensor([1, 2]), True),
    "byte": lambda m: (m.ByteTensor([1, 255]), True),
    "short_and_char": lambda m: (m.ShortTensor([1, -2]) + m.CharTensor([3, 4]), True),
    "list_of_tuples": lambda m: (m.FloatTensor([(1, 2), (3, 4)]), True),
    "0d_tensors": lambda m: (m.FloatTensor([m.tensor(1.0), m.tensor(2.0)]), True),
    "device_cpu": lambda m: (m.FloatTensor(2, device="cpu"), False),
    "device_object": lambda m: (m.FloatTensor(2, device=m.device("cpu")), False),
    "device_cpu_0": lambda m: (m.FloatTensor([1, 2], device="cpu:0"), True),
    "device_none": lambda m: (m.FloatTensor(device=None), True),
    "size_keyword": lambda m: (m.FloatTensor(size=(2, 3), device="cpu"), False),
    "data_keyword": lambda m: (m.FloatTensor(data=[1, 2]), True),
    "other_keyword": lambda m: (m.FloatTensor(other=m.ones(2)), True),
    "tensor_same_dtype": lambda m: (m.FloatTensor(m.ones(2, 2).t()), True),
    "0d_tensor_same_dtype": lambda m: (m.LongTensor(m.tensor(3)), True),
    # errors
    "float_size": lambda m: (m.FloatTensor(2.5), True),
    "str": lambda m: (m.FloatTensor("a"), True),
    "bytes": lambda m: (m.FloatTensor(b"ab"), True),
    "none": lambda m: (m.FloatTensor(None), True),
    "bool_alone": lambda m: (m.FloatTensor(True), True),
    "numpy_bool": lambda m: (m.FloatTensor(np.bool_(True)), True),
    "numpy_float_scalar": lambda m: (m.FloatTensor(np.float32(2.0)), True),
    "dict": lambda m: (m.FloatTensor({1: 2}), True),
    "set": lambda m: (m.FloatTensor({1, 2}), True),
    "iterator": lambda m: (m.FloatTensor(iter([1, 2])), True),
    "ragged": lambda m: (m.FloatTensor([[1], [2, 3]]), True),
    "str_after_size": lambda m: (m.FloatTensor(2, "a"), True),
    "float_after_size": lambda m: (m.FloatTensor(2, 3.0), True),
    "none_after_size": lambda m: (m.FloatTensor(2, None), True),
    "list_after_size": lambda m: (m.FloatTensor(2, [3]), True),
    "tuple_after_size": lambda m: (m.FloatTensor(2, (3,)), True),
    "numpy_float_after_size": lambda m: (m.FloatTensor(2, np.float32(2.0)), True),
    "float_tensor_after_size": lambda m: (m.FloatTensor(2, m.tensor(3.0)), True),
    "negative": lambda m: (m.FloatTensor(-1), True),
    "negative_inside": lambda m: (m.FloatTensor(2, -1, 3), True),
    "negative_beside_zero": lambda m: (m.FloatTensor(0, -1), True),
    "overflow": lambda m: (m.FloatTensor(2**62, 2**62), True),
    "two_lists": lambda m: (m.FloatTensor([1, 2], [3]), True),
    "three_lists": lambda m: (m.FloatTensor([1], [2], [3]), True),
    "list_then_int": lambda m: (m.FloatTensor([1.0, 2.0], 3), True),
    "bool_then_int": lambda m: (m.FloatTensor(True, 2), True),
    "float_then_int": lambda m: (m.FloatTensor(2.0, 3), True),
    "none_then_int": lambda m: (m.FloatTensor(None, 3), True),
    "tensor_then_int": lambda m: (m.FloatTensor(m.ones(2), 3), True),
    "numpy_then_int": lambda m: (m.FloatTensor(np.ones(2), 3), True),
    "tuple_then_int": lambda m: (m.FloatTensor((2,), 3), True),
    "dtype_keyword": lambda m: (m.FloatTensor(2, dtype=m.float64), True),
    "dtype_keyword_alone": lambda m: (m.FloatTensor(dtype=m.float32), True),
    "dtype_keyword_with_data": lambda m: (m.FloatTensor([1, 2], dtype=m.float64), True),
    "requires_grad_keyword": lambda m: (m.FloatTensor(2, 3, requires_grad=True), True),
    "requires_grad_with_data": lambda m: (m.FloatTensor([1, 2], requires_grad=True), True),
    "requires_grad_with_tensor": lambda m: (m.FloatTensor(m.ones(2), requires_grad=True), True),
    "unknown_keyword": lambda m: (m.FloatTensor(x=3), True),
    "two_keywords": lambda m: (m.FloatTensor(device="cpu", dtype=m.float32), True),
    "unknown_with_device": lambda m: (m.FloatTensor(2, 3, device="cpu", foo=1), True),
    "storage_keyword": lambda m: (m.FloatTensor(storage=1), True),
    "size_keyword_beside_size": lambda m: (m.FloatTensor(2, size=3), True),
    "size_and_device_beside_size": lambda m: (m.FloatTensor(2, device="cpu", size=3), True),
    "data_keyword_beside_data": lambda m: (m.FloatTensor([1], data=[2]), True),
    "size_keyword_float": lambda m: (m.FloatTensor(size=2.5), True),
    "data_keyword_tensor": lambda m: (m.FloatTensor(data=m.ones(2)), True),
    "cuda": lambda m: (m.FloatTensor(2, device="cuda"), True),
    "cuda_with_data": lambda m: (m.FloatTensor([1, 2], device="cuda"), True),
    "meta": lambda m: (m.FloatTensor(device="meta"), True),
    "accelerator_index": lambda m: (m.FloatTensor(2, device=0), True),
    "unknown_device": lambda m: (m.FloatTensor(2, device="foo"), True),
    "tensor_with_device": lambda m: (m.FloatTensor(m.ones(2), device="cpu"), True),
    "tensor_with_device_none": lambda m: (m.FloatTensor(m.ones(2), device=None), True),
}
# The dtype of a tensor passed in must be the type's own (no cast).
CONSTRUCTOR_CASES.update(
    {
        f"tensor_into_{name}": (lambda m, name=name: (getattr(m, name)(m.ones(2)), True))
        for name in NAMES
        if name != "FloatTensor"
    }
)
CONSTRUCTOR_CASES["double_into_float"] = lambda m: (m.FloatTensor(m.ones(2, dtype=m.float64)), True)
CONSTRUCTOR_CASES["long_into_float"] = lambda m: (m.FloatTensor(m.ones(2, dtype=m.int64)), True)
CONSTRUCTOR_CASES["long_0d_into_float"] = lambda m: (m.FloatTensor(m.tensor(3)), True)


@requires_torch
@pytest.mark.parametrize("case", sorted(CONSTRUCTOR_CASES))
def test_legacy_constructor_matches_torch(case):
    call = CONSTRUCTOR_CASES[case]
    if "BFloat16" in case and lucid.bfloat16.numpy_dtype is None:
        pytest.skip("lucid.bfloat16 needs ml_dtypes")
    assert _outcome(call, lucid) == _outcome(call, torch)


@requires_bfloat16
def test_bfloat16_tensor_makes_bfloat16():
    assert lucid.BFloat16Tensor(2).dtype is lucid.bfloat16
    assert lucid.BFloat16Tensor([1.1]).tolist() == [1.1015625]


@pytest.mark.parametrize("name", NAMES)
def test_each_type_makes_tensors_of_its_dtype(name):
    if name == "BFloat16Tensor" and lucid.bfloat16.numpy_dtype is None:
        pytest.skip("lucid.bfloat16 needs ml_dtypes")
    legacy = getattr(lucid, name)
    for made in (legacy(2, 3), legacy([1, 0]), legacy()):
        assert type(made) is lucid.Tensor
        assert made.dtype is legacy.dtype
        assert isinstance(made, legacy)
        assert made.type() == f"lucid.{name}"


def test_tensor_of_the_same_dtype_is_an_alias_sharing_storage_and_version():
    base = lucid.ones(3, requires_grad=True)
    alias = lucid.FloatTensor(base)
    assert alias is not base and alias._base is base
    assert alias.grad_fn.name() == "AliasBackward0"
    plain = lucid.zeros(3)
    shared = lucid.FloatTensor(plain)
    shared.add_(1)
    assert plain.tolist() == [1.0, 1.0, 1.0]
    assert plain._version == shared._version == 1


def test_numpy_data_is_copied():
    array = np.zeros(2, dtype=np.float32)
    tensor = lucid.FloatTensor(array)
    tensor.fill_(1)
    assert array.tolist() == [0.0, 0.0]


@requires_torch
def test_isinstance_and_issubclass_as_torch():
    def checks(m):
        parameter = m.nn.Parameter(m.ones(2))
        return [
            isinstance(m.ones(2), m.FloatTensor),
            isinstance(m.ones(2).double(), m.FloatTensor),
            isinstance(m.ones(2), m.DoubleTensor),
            isinstance(m.ones(2, dtype=m.bool), m.BoolTensor),
            isinstance(m.ones(2, dtype=m.int64), m.LongTensor),
            isinstance(parameter, m.FloatTensor),
            isinstance(3, m.FloatTensor),
            isinstance(np.ones(2, dtype=np.float32), m.FloatTensor),
            isinstance(m.FloatTensor(2), m.Tensor),
            issubclass(m.FloatTensor, m.Tensor),
            issubclass(m.Tensor, m.FloatTensor),
            issubclass(m.FloatTensor, m.FloatTensor),
            issubclass(m.LongTensor, m.FloatTensor),
            type(m.FloatTensor(2)) is m.Tensor,
            m.FloatTensor.__mro__ == (m.FloatTensor, object),
        ]

    assert checks(lucid) == checks(torch)


@requires_torch
def test_type_objects_print_and_describe_themselves_as_torch():
    for name in NAMES:
        ours, theirs = getattr(lucid, name), getattr(torch, name)
        assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
        assert (ours.__name__, ours.__qualname__) == (theirs.__name__, theirs.__qualname__)
        assert ours.__module__ == "lucid"
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "lucid.")
        assert (ours.is_cuda, ours.is_sparse, ours.is_sparse_csr, ours.is_xpu) == (
            theirs.is_cuda,
            theirs.is_sparse,
            theirs.is_sparse_csr,
            theirs.is_xpu,
        )
        assert ours.layout is lucid.strided


class _Foo:
    pass


TYPE_CASES = {
    "name": lambda m: m.ones(2).type(),
    "name_long": lambda m: m.ones(2, dtype=m.int64).type(),
    "name_bool": lambda m: m.ones(2, dtype=m.bool).type(),
    "name_half": lambda m: m.ones(2, dtype=m.float16).type(),
    "name_none_keyword": lambda m: m.ones(2).type(dtype=None),
    "to_type": lambda m: m.ones(2).type(m.DoubleTensor),
    "to_type_name": lambda m: m.ones(2).type("torch.DoubleTensor"),
    "to_type_name_int": lambda m: m.ones(2, dtype=m.float16).type("torch.IntTensor"),
    "to_dtype": lambda m: m.ones(2).type(m.float64),
    "to_Tensor_is_default_dtype": lambda m: m.ones(2, dtype=m.float64).type(m.Tensor),
    "to_Tensor_name": lambda m: m.ones(2, dtype=m.int64).type("torch.Tensor"),
    "non_blocking": lambda m: m.ones(2).type(m.float64, non_blocking=True),
    "non_blocking_positional": lambda m: m.ones(2).type(m.LongTensor, True),
    "memory_format": lambda m: m.ones(2).type(m.float64, memory_format=m.contiguous_format),
    "non_blocking_not_bool": lambda m: m.ones(2).type(dtype=m.float64, non_blocking=1),
    "python_float": lambda m: m.ones(2).type(float),
    "python_int": lambda m: m.ones(2).type(int),
    "other_class": lambda m: m.ones(2).type(_Foo),
    "numpy_class": lambda m: m.ones(2).type(np.float32),
    "Size_class": lambda m: m.ones(2).type(m.Size),
    "number": lambda m: m.ones(2).type(3),
    "short_name": lambda m: m.ones(2).type("float"),
    "empty_name": lambda m: m.ones(2).type(""),
    "dtype_name": lambda m: m.ones(2).type("torch.float64"),
    "storage_name": lambda m: m.ones(2).type("torch.FloatStorage"),
    "prefix_only": lambda m: m.ones(2).type("torch."),
}


def _type_outcome(call, framework):
    try:
        result = call(framework)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        message = str(error)
        return type(error).__name__, message.replace("torch.", "lucid.")
    if isinstance(result, str):
        return result.replace("torch.", "lucid.")
    return str(result.dtype).split(".")[-1], result.tolist()


@requires_torch
@pytest.mark.parametrize("case", sorted(TYPE_CASES))
def test_tensor_type_matches_torch(case):
    call = TYPE_CASES[case]
    assert _type_outcome(call, lucid) == _type_outcome(call, torch)


def test_type_of_the_same_type_returns_the_tensor_itself():
    x = lucid.ones(2)
    assert x.type(lucid.FloatTensor) is x
    assert x.type("lucid.FloatTensor") is x
    assert x.type("torch.FloatTensor") is x
    assert x.type(lucid.float32) is x


def test_type_records_the_cast_for_autograd():
    x = lucid.ones(2, requires_grad=True)
    y = x.type(lucid.DoubleTensor)
    assert y.grad_fn.name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.dtype is lucid.float32 and x.grad.tolist() == [1.0, 1.0]


def test_type_round_trips_the_name_it_gives():
    x = lucid.ones(2, dtype=lucid.int16)
    assert lucid.ones(2).type(x.type()).dtype is lucid.int16


def test_type_to_a_cuda_type_raises_the_cpu_build_error():
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        lucid.ones(2).type("torch.cuda.FloatTensor")


@pytest.fixture
def _unwarned(monkeypatch):
    """set_default_tensor_type as in a fresh process, which has not warned yet."""
    monkeypatch.setattr(_legacy_types, "_warned", [False])


def _call_recording(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            function()
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            message = str(error).replace("torch.", "lucid.").replace("'torch'", "'lucid'")
            outcome = (type(error).__name__, message)
        else:
            outcome = "OK"
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return outcome, [message.replace("torch.", "lucid.") for message in messages]


DEFAULT_TYPE_CASES = {
    "double": lambda m: m.set_default_tensor_type(m.DoubleTensor),
    "double_by_name": lambda m: m.set_default_tensor_type("torch.DoubleTensor"),
    "half": lambda m: m.set_default_tensor_type(m.HalfTensor),
    "float": lambda m: m.set_default_tensor_type(m.FloatTensor),
    "long": lambda m: m.set_default_tensor_type(m.LongTensor),
    "bool": lambda m: m.set_default_tensor_type(m.BoolTensor),
    "long_by_name": lambda m: m.set_default_tensor_type("torch.LongTensor"),
    "dtype": lambda m: m.set_default_tensor_type(m.float64),
    "Tensor": lambda m: m.set_default_tensor_type(m.Tensor),
    "Tensor_by_name": lambda m: m.set_default_tensor_type("torch.Tensor"),
    "number": lambda m: m.set_default_tensor_type(3),
    "unknown_name": lambda m: m.set_default_tensor_type("torch.Foo"),
    "unknown_module": lambda m: m.set_default_tensor_type("foo_no_such_module"),
    "keyword": lambda m: m.set_default_tensor_type(t=m.DoubleTensor),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(DEFAULT_TYPE_CASES))
def test_set_default_tensor_type_matches_torch(case, _unwarned):
    call = DEFAULT_TYPE_CASES[case]
    results = []
    for framework in (torch, lucid):
        default = framework.get_default_dtype()
        try:
            outcome, messages = _call_recording(lambda framework=framework: call(framework))
            made = (
                framework.get_default_dtype(),
                framework.tensor([1.5]).dtype,
                framework.Tensor(2).dtype,
                framework.empty(1).dtype,
            )
            results.append((outcome, [str(d).split(".")[-1] for d in made], bool(messages)))
        finally:
            framework.set_default_dtype(default)
    # PyTorch warns once per process, which an earlier call may have used: the warning's text
    # has its own test.
    (torch_outcome, torch_made, _), (lucid_outcome, lucid_made, _) = results
    assert (lucid_outcome, lucid_made) == (torch_outcome, torch_made)


@requires_torch
def test_set_default_tensor_type_warns_once_with_torchs_text(_unwarned):
    expected = (
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives."
    )
    _, first = _call_recording(lambda: lucid.set_default_tensor_type(lucid.DoubleTensor))
    _, second = _call_recording(lambda: lucid.set_default_tensor_type(lucid.FloatTensor))
    assert first == [expected.replace("torch.", "lucid.")]
    assert second == []


@requires_bfloat16
def test_set_default_tensor_type_bfloat16():
    lucid.set_default_tensor_type(lucid.BFloat16Tensor)
    assert lucid.get_default_dtype() is lucid.bfloat16
    assert lucid.tensor([1.5]).dtype is lucid.bfloat16


def test_set_default_tensor_type_by_lucid_name():
    lucid.set_default_tensor_type("lucid.DoubleTensor")
    assert lucid.get_default_dtype() is lucid.float64
    assert lucid.FloatTensor([1.5]).dtype is lucid.float32  # a legacy type keeps its dtype


def test_typename_names_the_legacy_type():
    assert lucid.typename(lucid.ones(2, dtype=lucid.uint8)) == "lucid.ByteTensor"
