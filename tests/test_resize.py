"""resize_, resize_as_ and the deprecated resize/resize_as: PyTorch's results, strides, versions
and errors; where lucid refuses to grow shared storage; and that no element it keeps changes.

Elements that growing adds are uninitialised in PyTorch (zeros in lucid): no test reads them.
"""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch


def _state(x, kept=None):
    """Shape, strides, the elements PyTorch defines (the first `kept` in storage order, or all),
    version and storage offset."""
    values = x.tolist() if kept is None else x.flatten()[:kept].tolist()
    return tuple(x.shape), tuple(x.stride()), values, x._version, x.storage_offset()


def _outcome(call, framework):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = call(framework)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            message = str(error)
            if framework is torch:
                message = message.replace("torch.", "lucid.")
            return type(error).__name__, message
    if isinstance(result, str):
        return result.replace("torch.", "lucid.")
    return result


def _after(tensor_of, then):
    """A call that makes a tensor with `tensor_of(m)` and returns `then(tensor, m)`."""
    return lambda m: then(tensor_of(m), m)


CASES = {
    "shrink": _after(lambda m: m.arange(6.0), lambda x, m: _state(x.resize_(2, 2))),
    "grow_keeps_the_prefix": _after(
        lambda m: m.arange(6.0), lambda x, m: _state(x.resize_(3, 3), 6)
    ),
    "one_tuple": _after(
        lambda m: m.arange(6.0).reshape(2, 3), lambda x, m: _state(x.resize_((4,)))
    ),
    "one_list": _after(lambda m: m.ones(2), lambda x, m: _state(x.resize_([1, 2]))),
    "a_Size": _after(lambda m: m.arange(6.0), lambda x, m: _state(x.resize_(m.Size([3, 2])))),
    "zero_dim": _after(lambda m: m.arange(6.0), lambda x, m: _state(x.resize_(()))),
    "empty_list": _after(lambda m: m.arange(6.0), lambda x, m: _state(x.resize_([]))),
    "to_nothing_and_back": _after(
        lambda m: m.arange(6.0), lambda x, m: (_state(x.resize_(0)), _state(x.resize_(3)))
    ),
    "shrink_then_regrow_reads_the_storage": _after(
        lambda m: m.arange(6.0), lambda x, m: (x.resize_(2), _state(x.resize_(6)))[1]
    ),
    "shrink_then_grow_past_it": _after(
        lambda m: m.arange(6.0), lambda x, m: (x.resize_(2), _state(x.resize_(8), 6))[1]
    ),
    "storage_order_not_strides": _after(
        lambda m: m.arange(6.0).reshape(2, 3).t(), lambda x, m: _state(x.resize_(6))
    ),
    "same_size_keeps_strides": _after(
        lambda m: m.arange(6.0).reshape(2, 3).t(), lambda x, m: _state(x.resize_(3, 2))
    ),
    "same_size_contiguous_format_restrides": _after(
        lambda m: m.arange(6.0).reshape(2, 3).t(),
        lambda x, m: _state(x.resize_(3, 2, memory_format=m.contiguous_format))[:3],
    ),
    "transposed_to_other_shape": _after(
        lambda m: m.arange(6.0).reshape(2, 3).t(), lambda x, m: _state(x.resize_(2, 3))
    ),
    "same_size_no_version": _after(lambda m: m.ones(2, 3), lambda x, m: _state(x.resize_(2, 3))),
    "channels_last": _after(
        lambda m: m.arange(16.0),
        lambda x, m: _state(x.resize_(2, 2, 2, 2, memory_format=m.channels_last)),
    ),
    "channels_last_3d": _after(
        lambda m: m.arange(32.0),
        lambda x, m: _state(x.resize_(2, 2, 2, 2, 2, memory_format=m.channels_last_3d)),
    ),
    "channels_last_same_size": _after(
        lambda m: m.arange(16.0).reshape(2, 2, 2, 2),
        lambda x, m: _state(x.resize_(2, 2, 2, 2, memory_format=m.channels_last))[:3],
    ),
    "int64_grows": _after(lambda m: m.arange(3), lambda x, m: _state(x.resize_(2, 3), 3)),
    "bool_grows": _after(lambda m: m.ones(2, dtype=m.bool), lambda x, m: _state(x.resize_(4), 2)),
    "float16_shrinks": _after(lambda m: m.arange(4.0).half(), lambda x, m: _state(x.resize_(1, 2))),
    "index_tensor_size": _after(lambda m: m.ones(3), lambda x, m: _state(x.resize_(m.tensor(2)))),
    "numpy_int_size": _after(lambda m: m.ones(3), lambda x, m: _state(x.resize_(np.int64(2)))),
    "expanded_shrinks": _after(lambda m: m.ones(1).expand(3), lambda x, m: _state(x.resize_(1))),
    "expanded_same_size": _after(lambda m: m.ones(1).expand(3), lambda x, m: _state(x.resize_(3))),
    "new_resize_as_zero": _after(
        lambda m: m.ones(2, 3),
        lambda p, m: (lambda x: (tuple(x.shape), str(x.dtype).split(".")[-1], x.tolist()))(
            p.new().resize_as_(p).zero_()
        ),
    ),
    "resize_as_": _after(lambda m: m.ones(2), lambda x, m: _state(x.resize_as_(m.ones(3, 3)), 2)),
    "resize_as_keeps_dtype": _after(
        lambda m: m.ones(2), lambda x, m: str(x.resize_as_(m.ones(3, dtype=m.int64)).dtype)
    ),
    "resize_as_channels_last": _after(
        lambda m: m.ones(2),
        lambda x, m: x.resize_as_(m.ones(2, 2, 2, 2), memory_format=m.channels_last).stride(),
    ),
    "function_resize_as_": lambda m: _state(m.resize_as_(m.arange(3.0), m.ones(2))),
    "function_resize_as_keywords": lambda m: _state(
        m.resize_as_(input=m.arange(3.0), the_template=m.ones(2))
    ),
    "views_share_a_version": _after(
        lambda m: m.arange(6.0), lambda b, m: (lambda v: (v.resize_(2), b._version)[1])(b[:3])
    ),
    # views: within their base's storage
    "view_shrinks": _after(
        lambda m: m.arange(6.0),
        lambda b, m: (lambda v: (_state(v.resize_(2)), b.tolist(), v._base is b))(b[:3]),
    ),
    "view_grows_within_its_base": _after(
        lambda m: m.arange(6.0), lambda b, m: (lambda v: (_state(v.resize_(5)), b.tolist()))(b[:3])
    ),
    "view_from_an_offset": _after(
        lambda m: m.arange(6.0),
        lambda b, m: (lambda v: (_state(v.resize_(2, 2)), b.tolist()))(b[2:4]),
    ),
    "view_writes_reach_the_base": _after(
        lambda m: m.arange(6.0),
        lambda b, m: (lambda v: (v.resize_(5).fill_(7), b.tolist())[1])(b[1:3]),
    ),
    "base_shrinks_under_its_view": _after(
        lambda m: m.arange(6.0),
        lambda b, m: (lambda v: (b.resize_(2), b.fill_(9), v.tolist())[2])(b.view(2, 3)),
    ),
    # errors
    "requires_grad": lambda m: m.ones(2, requires_grad=True).resize_(2),
    "requires_grad_non_leaf": lambda m: (m.ones(2, requires_grad=True) * 2).resize_(3),
    "resize_as_requires_grad": lambda m: m.ones(2, requires_grad=True).resize_as_(m.ones(3)),
    "no_size": lambda m: m.ones(2).resize_(),
    "negative": lambda m: m.ones(2).resize_(-1),
    "negative_second": lambda m: m.ones(2).resize_(3, -1),
    "overflow": lambda m: m.ones(3).resize_(2**62, 2**62),
    "float": lambda m: m.ones(2).resize_(2.0),
    "bool": lambda m: m.ones(3).resize_(True),
    "none": lambda m: m.ones(3).resize_(None),
    "str": lambda m: m.ones(3).resize_("a"),
    "float_tensor": lambda m: m.ones(3).resize_(m.tensor(2.0)),
    "numpy_array": lambda m: m.ones(3).resize_(np.array([2, 3])),
    "two_tuples": lambda m: m.ones(3).resize_((2,), (2,)),
    "none_second": lambda m: m.ones(3).resize_(2, None),
    "float_second": lambda m: m.ones(3).resize_(2, 2.0),
    "float_in_list": lambda m: m.ones(3).resize_([1, 2.0]),
    "tuple_second": lambda m: m.ones(3).resize_(2, (2,)),
    "float_tensor_second": lambda m: m.ones(3).resize_(2, m.tensor(2.0)),
    "channels_last_wrong_rank": lambda m: m.ones(4).resize_(2, 2, memory_format=m.channels_last),
    "preserve_format": lambda m: m.ones(4).resize_(2, 2, memory_format=m.preserve_format),
    "memory_format_not_one": lambda m: m.ones(3).resize_(3, memory_format=3),
    "resize_as_list": lambda m: m.ones(2).resize_as_([3]),
    "resize_as_none": lambda m: m.ones(3).resize_as_(None),
    "function_resize_as_int": lambda m: m.resize_as_(m.ones(3), 3),
    "function_resize_as_int_first": lambda m: m.resize_as_(3, m.ones(2)),
    # the deprecated out-of-place forms
    "resize": _after(
        lambda m: m.arange(6.0), lambda x, m: (lambda y: (y.tolist(), y._base is x))(x.resize(2, 3))
    ),
    "resize_other_numel": lambda m: m.ones(2).resize(3),
    "resize_one_tuple": lambda m: m.arange(6.0).resize((2, 3)),
    "resize_as": lambda m: tuple(m.arange(6.0).resize_as(m.ones(2, 3)).shape),
    "resize_as_other_numel": lambda m: m.ones(2).resize_as(m.ones(3)),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_resize_matches_torch(case):
    call = CASES[case]
    assert _outcome(call, lucid) == _outcome(call, torch)


@requires_torch
def test_inference_tensors_refuse_resize_outside_inference_mode():
    for framework in (torch, lucid):
        with framework.inference_mode():
            made = framework.ones(3)
        for size in (5, 3):
            with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
                made.resize_(size)
        with framework.inference_mode():
            assert made.resize_(5).shape == (5,)


def test_resize_bumps_the_version_a_saved_tensor_was_saved_at():
    a = lucid.ones(3, requires_grad=True)
    w = lucid.ones(3)
    z = (a * w).sum()
    w.resize_(1, 3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


@requires_torch
def test_deprecated_resize_warns_and_differentiates_as_torch():
    results = []
    for framework in (torch, lucid):
        x = framework.arange(6.0, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        (y * framework.arange(6.0).reshape(2, 3)).sum().backward()
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = x.resize_as(framework.ones(3, 2))
        name = y.grad_fn.name() if framework is lucid else type(y.grad_fn).__name__
        results.append((tuple(y.shape), tuple(z.shape), x.grad.tolist(), name))
    assert results[0] == results[1]


def test_growing_a_lone_buffer_again_and_again_keeps_its_elements():
    buffer = lucid.FloatTensor()
    kept = []
    for size in (3, 10, 2, 7, 20, 1, 4):
        buffer.resize_(size)
        assert buffer[: min(len(kept), size)].tolist() == kept[:size]
        kept = list(range(size))
        buffer.copy_(lucid.tensor(kept, dtype=lucid.float32))
    assert buffer.tolist() == [0.0, 1.0, 2.0, 3.0]


# ------------------------------------------------------- storage NumPy cannot grow
def _refuses_to_grow(tensor, size):
    before = tensor.tolist()
    with pytest.raises(RuntimeError, match="lucid cannot grow"):
        tensor.resize_(size)
    assert tensor.tolist() == before


def test_a_view_cannot_grow_past_its_base():
    base = lucid.arange(6.0)
    view = base[:3]
    _refuses_to_grow(view, 10)
    _refuses_to_grow(base.t().reshape(2, 3).t(), 7)
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_a_base_cannot_grow_while_its_view_lives_and_can_after():
    base = lucid.arange(6.0)
    view = base.view(2, 3)
    _refuses_to_grow(base, 10)
    assert view.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    del view
    gc.collect()
    assert base.resize_(10)[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_aliases_and_numpy_arrays_keep_the_storage_from_growing():
    tensor = lucid.arange(6.0)
    alias = tensor.detach()
    _refuses_to_grow(tensor, 10)
    _refuses_to_grow(alias, 10)
    del alias
    parameter = lucid.nn.Parameter(lucid.ones(3))
    _refuses_to_grow(parameter.data, 5)
    array = tensor.numpy()
    _refuses_to_grow(tensor, 10)
    del array
    assert tensor.resize_(10).shape == (10,)
    user_array = np.ones(3, dtype=np.float32)
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        lucid.from_numpy(user_array).resize_(5)  # as PyTorch refuses from_numpy's storage


def test_a_tensor_from_numpy_cannot_grow_even_when_nothing_else_holds_the_array():
    tensor = lucid.from_numpy(np.ones(3, dtype=np.float32))
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        tensor.resize_(5)
    assert tensor.resize_(2).shape == (2,)


def test_shrinking_shared_storage_keeps_sharing_it():
    array = np.ones(3, dtype=np.float32)
    tensor = lucid.from_numpy(array)
    tensor.resize_(2).fill_(3)
    assert array.tolist() == [3.0, 3.0, 1.0]
    parameter = lucid.nn.Parameter(lucid.ones(3))
    assert parameter.data.resize_(2).shape == (2,) and parameter.shape == (3,)


def test_memory_numpy_was_lent_is_not_resizable():
    tensor = lucid.from_numpy(np.frombuffer(bytearray(12), dtype=np.float32))
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        tensor.resize_(5)
    assert tensor.resize_(2).shape == (2,)


def test_a_growing_tensor_gets_memory_of_its_own():
    tensor = lucid.arange(4.0)
    old = tensor.numpy().copy()
    tensor.resize_(8)
    tensor.fill_(1)
    assert old.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tensor.is_contiguous() and tensor.storage_offset() == 0


def test_channels_last_storage_is_read_in_memory_order():
    tensor = lucid.arange(16.0).reshape(2, 2, 2, 2).contiguous(memory_format=lucid.channels_last)
    memory_order = tensor.permute(0, 2, 3, 1).flatten().tolist()
    assert tensor.resize_(16).tolist() == memory_order
