"""The Tensor queries programs make about where and how a tensor is stored (is_meta, is_sparse,
storage_offset, ...), to_dense, split_with_sizes and the removed `volatile`, against PyTorch."""

from __future__ import annotations

import warnings

import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

PREDICATES = """
    is_meta is_mps is_xpu is_ipu is_maia is_mtia is_xla is_vulkan is_mkldnn is_sparse
    is_sparse_csr is_quantized is_nested
""".split()


@pytest.mark.parametrize("name", PREDICATES)
def test_layout_and_device_predicates_are_torchs_for_a_cpu_tensor(name):
    for make in (
        lambda m: m.ones(2, 3),
        lambda m: m.nn.Parameter(m.ones(2)),
        lambda m: m.tensor(1),
    ):
        assert getattr(make(lucid), name) is getattr(make(torch), name)


def test_is_shared_and_const_data_ptr():
    for framework in (torch, lucid):
        x = framework.ones(3)
        assert x.is_shared() is False
        assert x.const_data_ptr() == x.data_ptr()
        assert x[1:].const_data_ptr() == x.data_ptr() + x.element_size()


OFFSET_CASES = {
    "own": lambda m: m.ones(3),
    "slice": lambda m: m.arange(6.0)[2:],
    "row": lambda m: m.arange(6.0).reshape(2, 3)[1],
    "column": lambda m: m.arange(6.0).reshape(2, 3)[:, 1],
    "transposed_row": lambda m: m.arange(12.0).reshape(3, 4).t()[2],
    "narrow": lambda m: m.arange(10.0).narrow(0, 4, 3),
    "diagonal": lambda m: m.arange(9.0).reshape(3, 3).diagonal(1),
    "unbind": lambda m: m.arange(6.0).reshape(3, 2).unbind(0)[2],
    "view_of_view": lambda m: m.arange(24.0).reshape(2, 3, 4)[1][2][1:],
    "expanded": lambda m: m.arange(3.0)[1:2].expand(4),
    "resized_view": lambda m: m.arange(6.0)[2:4].resize_(4),
    "resized_shrunk": lambda m: m.arange(6.0).resize_(2),
    "clone_of_view": lambda m: m.arange(6.0)[2:].clone(),
}


@pytest.mark.parametrize("case", sorted(OFFSET_CASES))
def test_storage_offset_matches_torch(case):
    make = OFFSET_CASES[case]
    assert make(lucid).storage_offset() == make(torch).storage_offset()


def test_to_dense_is_the_tensor_itself_or_a_cast():
    for framework in (torch, lucid):
        x = framework.ones(2, requires_grad=True)
        assert x.to_dense() is x
        assert x.to_dense(framework.float32) is x
        assert x.to_dense(masked_grad=False) is x
        cast = x.to_dense(framework.float64)
        assert str(cast.dtype).split(".")[-1] == "float64" and cast.requires_grad


def _outcome(call, framework):
    try:
        result = call(framework)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        message = str(error)
        return type(error).__name__, message.replace("torch.", "lucid.")
    return [(part.tolist(), part.grad_fn is not None) for part in result]


SPLIT_CASES = {
    "list": lambda m: m.arange(5.0).split_with_sizes([2, 3]),
    "tuple_and_dim": lambda m: m.arange(6.0).reshape(2, 3).split_with_sizes((1, 2), dim=1),
    "keywords": lambda m: m.arange(6.0).reshape(2, 3).split_with_sizes(split_sizes=[2], dim=0),
    "negative_dim": lambda m: m.arange(6.0).reshape(2, 3).split_with_sizes([3], -1),
    "empty_part": lambda m: m.arange(3.0).split_with_sizes([0, 3]),
    "tensor_sizes": lambda m: m.arange(3.0).split_with_sizes([m.tensor(1), m.tensor(2)]),
    "records_grad": lambda m: m.arange(4.0, requires_grad=True).split_with_sizes([1, 3]),
    "int": lambda m: m.ones(3).split_with_sizes(1),
    "wrong_sum": lambda m: m.ones(3).split_with_sizes([1, 1]),
    "float_size": lambda m: m.ones(3).split_with_sizes([1, 2.0]),
    "bad_dim": lambda m: m.ones(3).split_with_sizes([3], 1),
}


@pytest.mark.parametrize("case", sorted(SPLIT_CASES))
def test_split_with_sizes_matches_torch(case):
    call = SPLIT_CASES[case]
    assert _outcome(call, lucid) == _outcome(call, torch)


def test_split_with_sizes_grad_fn_and_gradient():
    names, grads = [], []
    for framework in (torch, lucid):
        x = framework.arange(5.0, requires_grad=True)
        first, second = x.split_with_sizes([2, 3])
        (first.sum() * 2 + second.sum()).backward()
        grad_fn = first.grad_fn
        names.append(grad_fn.name() if framework is lucid else type(grad_fn).__name__)
        grads.append(x.grad.tolist())
    assert names == ["SplitWithSizesBackward0"] * 2
    assert grads[0] == grads[1]


def test_volatile_warns_and_is_false_as_in_torch():
    for framework in (torch, lucid):
        x = framework.ones(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert x.volatile is False
            x.volatile = True
            assert x.volatile is False
        messages = [str(w.message).replace("torch.", "lucid.") for w in caught]
        assert messages == [
            "volatile was removed (Variable.volatile is always False)",
            "volatile was removed and now has no effect. Use `with lucid.no_grad():` instead.",
            "volatile was removed (Variable.volatile is always False)",
        ]
