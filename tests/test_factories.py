"""Tensor factories and random generation: dtypes, memory sharing, keywords, seeding, errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import lucid


def _raises(error_type, message):
    return pytest.raises(error_type, match="^" + re.escape(message) + "$")


# --------------------------------------------------------------------- tensor
@pytest.mark.parametrize(
    ("data", "dtype"),
    [
        (1, lucid.int64),
        (1.0, lucid.float32),
        (True, lucid.bool),
        ([1, 2], lucid.int64),
        ([1, 2.5], lucid.float32),
        ([True, False], lucid.bool),
        ([[1], [2]], lucid.int64),
        ([], lucid.float32),
        (np.array([1, 2], dtype=np.int32), lucid.int32),
        (np.array([1.0, 2.0]), lucid.float64),
        (np.float64(1.0), lucid.float64),
    ],
)
def test_tensor_infers_dtype_like_pytorch(data, dtype):
    assert lucid.tensor(data).dtype == dtype


def test_tensor_uses_default_dtype_for_python_floats():
    lucid.set_default_dtype(lucid.float64)
    assert lucid.tensor([1.5]).dtype == lucid.float64
    assert lucid.tensor([1]).dtype == lucid.int64


def test_tensor_copies_its_data():
    array = np.array([1.0, 2.0])
    x = lucid.tensor(array)
    array[0] = 9.0
    assert x.tolist() == [1.0, 2.0]


def test_tensor_from_tensor_copies_and_warns():
    source = lucid.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        copy = lucid.tensor(source)
    copy.add_(1.0)
    assert source.tolist() == [1.0, 2.0]


def test_tensor_of_nested_tensors():
    x = lucid.tensor([lucid.tensor(1.0), lucid.tensor(2.0)])
    assert x.tolist() == [1.0, 2.0] and x.dtype == lucid.float32


def test_tensor_dtype_keyword_converts():
    x = lucid.tensor([1.7, -1.7], dtype=lucid.int32)
    assert x.dtype == lucid.int32 and x.tolist() == [1, -1]
    assert lucid.tensor([1, 2], dtype=lucid.float64).dtype == lucid.float64


_OUT_OF_RANGE = {
    "a Python float": lambda dtype: lucid.tensor(1e30, dtype=dtype),
    "a list": lambda dtype: lucid.tensor([1e30, -1e30], dtype=dtype),
    "an ndarray": lambda dtype: lucid.tensor(np.array([1e30, -1e30]), dtype=dtype),
    "as_tensor of an ndarray": lambda dtype: lucid.as_tensor(np.array([1e30, -1e30]), dtype=dtype),
}


@pytest.mark.parametrize("source", sorted(_OUT_OF_RANGE))
def test_tensor_of_a_value_past_the_dtypes_range_is_inf_without_a_numpy_warning(source):
    # torch.tensor(1e30, dtype=torch.float16) is inf, with no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _OUT_OF_RANGE[source](lucid.float16)
    assert result.dtype is lucid.float16
    assert np.isposinf(result.numpy().ravel()[0])
    if result.numel() == 2:
        assert np.isneginf(result.numpy()[1])


def test_tensor_requires_grad_keyword_makes_a_leaf():
    x = lucid.tensor([1.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None


def test_tensor_of_ragged_lists_raises_like_pytorch():
    with _raises(ValueError, "expected sequence of length 2 at dim 1 (got 1)"):
        lucid.tensor([[1, 2], [3]])
    with _raises(ValueError, "expected sequence of length 1 at dim 2 (got 2)"):
        lucid.tensor([[[1]], [[2, 3]]])
    with _raises(TypeError, "not a sequence"):
        lucid.tensor([[1, 2], 3])


def test_tensor_of_none_raises():
    with _raises(RuntimeError, "Could not infer dtype of NoneType"):
        lucid.tensor(None)


def test_tensor_of_string_raises():
    with _raises(TypeError, "new(): invalid data type 'str'"):
        lucid.tensor("a")


# ------------------------------------------------------ as_tensor / from_numpy
def test_as_tensor_shares_memory_with_ndarray_of_same_dtype():
    array = np.array([1.0, 2.0])
    x = lucid.as_tensor(array)
    array[0] = 5.0
    assert x.tolist() == [5.0, 2.0]
    assert x.dtype == lucid.float64


def test_as_tensor_copies_when_dtype_changes():
    array = np.array([1.0, 2.0])
    x = lucid.as_tensor(array, dtype=lucid.float32)
    array[0] = 5.0
    assert x.tolist() == [1.0, 2.0]


def test_as_tensor_of_tensor_returns_it():
    x = lucid.tensor([1.0, 2.0])
    assert lucid.as_tensor(x) is x
    assert lucid.as_tensor(x, dtype=lucid.float64).dtype == lucid.float64


def test_as_tensor_of_list():
    assert lucid.as_tensor([1, 2]).dtype == lucid.int64


def test_from_numpy_shares_memory_both_ways():
    array = np.array([1.0, 2.0])
    x = lucid.from_numpy(array)
    array[0] = 5.0
    x.add_(1.0)
    assert x.tolist() == [6.0, 3.0]
    assert array.tolist() == [6.0, 3.0]


def test_from_numpy_keeps_numpy_dtype():
    assert lucid.from_numpy(np.zeros(2, dtype=np.int16)).dtype == lucid.int16
    assert lucid.from_numpy(np.zeros(2, dtype=np.float16)).dtype == lucid.float16


def test_from_numpy_rejects_non_arrays():
    with _raises(TypeError, "expected np.ndarray (got list)"):
        lucid.from_numpy([1.0])
    with _raises(TypeError, "expected np.ndarray (got numpy.float64)"):
        lucid.from_numpy(np.float64(1.0))


# ------------------------------------------------------------ filled tensors
def test_zeros_ones_accept_varargs_and_tuples():
    assert lucid.zeros(2, 3).shape == (2, 3)
    assert lucid.zeros((2, 3)).shape == (2, 3)
    assert lucid.ones([4]).tolist() == [1.0, 1.0, 1.0, 1.0]
    assert lucid.zeros(()).shape == ()
    assert lucid.zeros(2).dtype == lucid.float32


def test_zeros_ones_dtype_and_requires_grad_keywords():
    x = lucid.ones(2, dtype=lucid.int32)
    assert x.dtype == lucid.int32 and x.tolist() == [1, 1]
    y = lucid.zeros(2, requires_grad=True)
    assert y.requires_grad and y.is_leaf
    assert lucid.zeros(2, dtype=lucid.bool).tolist() == [False, False]


def test_zeros_with_negative_size_raises():
    with _raises(RuntimeError, "zeros: Dimension size must be non-negative."):
        lucid.zeros(2, -1)


def test_ones_with_negative_size_raises():
    with _raises(RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]"):
        lucid.ones(2, -1)


def test_size_must_be_integers():
    with pytest.raises(TypeError):
        lucid.zeros(2, 3.0)


def test_full_infers_dtype_from_fill_value():
    assert lucid.full((2,), 3).dtype == lucid.int64
    assert lucid.full((2,), 3.0).dtype == lucid.float32
    assert lucid.full((2,), True).dtype == lucid.bool
    assert lucid.full((2,), np.float64(1.5)).dtype == lucid.float32
    assert lucid.full((2,), 3, dtype=lucid.float64).dtype == lucid.float64
    assert lucid.full((2, 2), 7.0).tolist() == [[7.0, 7.0], [7.0, 7.0]]


def test_full_requires_grad():
    assert lucid.full([2], 1.5, requires_grad=True).requires_grad


def test_empty_has_shape_and_dtype():
    x = lucid.empty(2, 3)
    assert x.shape == (2, 3) and x.dtype == lucid.float32
    assert lucid.empty(2, dtype=lucid.int64).dtype == lucid.int64


# ---------------------------------------------------------------- sequences
def test_arange_of_integers_is_int64():
    x = lucid.arange(5)
    assert x.dtype == lucid.int64 and x.tolist() == [0, 1, 2, 3, 4]
    assert lucid.arange(1, 4).tolist() == [1, 2, 3]
    assert lucid.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert lucid.arange(lucid.tensor(3)).tolist() == [0, 1, 2]


def test_arange_with_a_float_is_default_float():
    assert lucid.arange(5.0).dtype == lucid.float32
    assert lucid.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert lucid.arange(0, 1, 0.1).shape == (10,)
    assert lucid.arange(1.0, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert lucid.arange(5, dtype=lucid.float64).dtype == lucid.float64


def test_arange_errors():
    with _raises(RuntimeError, "step must be nonzero"):
        lucid.arange(0, 10, 0)
    with _raises(RuntimeError, "upper bound and lower bound inconsistent with step sign"):
        lucid.arange(10, 0, 1)


def test_linspace():
    assert lucid.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert lucid.linspace(0, 1, 5).dtype == lucid.float32
    assert lucid.linspace(0, 1, 1).tolist() == [0.0]
    assert lucid.linspace(0, 1, 0).shape == (0,)
    assert lucid.linspace(-1, 1, 4, dtype=lucid.float64).dtype == lucid.float64
    with _raises(RuntimeError, "number of steps must be non-negative"):
        lucid.linspace(0, 1, -1)


def test_eye():
    assert lucid.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert lucid.eye(2, 3).shape == (2, 3)
    assert lucid.eye(2, dtype=lucid.int64).dtype == lucid.int64
    with _raises(RuntimeError, "n must be greater or equal to 0, got -1"):
        lucid.eye(-1)
    with _raises(RuntimeError, "m must be greater or equal to 0, got -1"):
        lucid.eye(2, -1)


# ------------------------------------------------------------------- random
def test_rand_is_uniform_on_unit_interval():
    x = lucid.rand(1000)
    assert x.dtype == lucid.float32 and x.shape == (1000,)
    values = x.numpy()
    assert values.min() >= 0.0 and values.max() < 1.0
    assert 0.4 < values.mean() < 0.6


def test_randn_is_standard_normal():
    values = lucid.randn(4000, dtype=lucid.float64).numpy()
    assert abs(values.mean()) < 0.1 and 0.9 < values.std() < 1.1


def test_random_factories_accept_dtype_and_requires_grad():
    assert lucid.randn(3, dtype=lucid.float64).dtype == lucid.float64
    assert lucid.rand(2, 3).shape == (2, 3)
    assert lucid.rand(()).shape == ()
    x = lucid.randn(2, requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_rand_and_randn_of_integer_dtype_raise():
    with _raises(NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"):
        lucid.rand(2, dtype=lucid.int64)
    with _raises(NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Long'"):
        lucid.randn(2, dtype=lucid.int64)
    with _raises(NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"):
        lucid.rand_like(lucid.ones(2, dtype=lucid.int64))


def test_randint():
    x = lucid.randint(2, 5, (200,))
    assert x.dtype == lucid.int64
    assert x.min().item() >= 2 and x.max().item() <= 4
    assert set(x.tolist()) == {2, 3, 4}
    assert lucid.randint(5, (3,)).max().item() < 5
    assert lucid.randint(0, 3, (2, 2), dtype=lucid.int32).dtype == lucid.int32
    with _raises(
        RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"
    ):
        lucid.randint(5, 2, (3,))


def test_randperm():
    x = lucid.randperm(10)
    assert x.dtype == lucid.int64
    assert sorted(x.tolist()) == list(range(10))
    assert lucid.randperm(0).shape == (0,)
    assert lucid.randperm(3, dtype=lucid.float32).dtype == lucid.float32
    with _raises(RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"):
        lucid.randperm(-1)


def test_normal_forms():
    assert lucid.normal(0.0, 1.0, (2, 3)).shape == (2, 3)
    assert lucid.normal(lucid.zeros(3), 1.0).shape == (3,)
    assert lucid.normal(lucid.zeros(3), lucid.ones(3)).dtype == lucid.float32
    assert lucid.normal(2.0, lucid.ones(2, 2)).shape == (2, 2)
    assert lucid.normal(lucid.zeros(2, dtype=lucid.float64), 1.0).dtype == lucid.float64
    values = lucid.normal(5.0, 0.5, (4000,)).numpy()
    assert abs(values.mean() - 5.0) < 0.05 and abs(values.std() - 0.5) < 0.05


def test_normal_with_negative_std_raises():
    with _raises(RuntimeError, "normal expects std >= 0.0, but found std -1"):
        lucid.normal(0.0, -1.0, (3,))
    with _raises(RuntimeError, "normal expects std >= 0.0, but found std -0.5"):
        lucid.normal(lucid.zeros(2), -0.5)


# --------------------------------------------------------------------- *_like
def test_like_factories_keep_shape_and_dtype():
    source = lucid.ones(2, 3, dtype=lucid.int32)
    assert lucid.zeros_like(source).dtype == lucid.int32
    assert lucid.zeros_like(source).shape == (2, 3)
    assert lucid.ones_like(source).tolist() == [[1, 1, 1], [1, 1, 1]]
    assert lucid.empty_like(source).shape == (2, 3)
    assert lucid.full_like(lucid.ones(2, dtype=lucid.int64), 2.7).tolist() == [2, 2]
    assert lucid.full_like(lucid.ones(2), 7).tolist() == [7.0, 7.0]


def test_like_factories_accept_dtype_and_requires_grad():
    source = lucid.ones(2)
    assert lucid.zeros_like(source, dtype=lucid.float64).dtype == lucid.float64
    assert lucid.ones_like(source, requires_grad=True).requires_grad


def test_like_factories_of_non_leaf_give_plain_leaves():
    source = lucid.ones(2, requires_grad=True) * 2
    result = lucid.zeros_like(source)
    assert result.is_leaf and not result.requires_grad


def test_random_like_factories():
    assert lucid.rand_like(lucid.ones(2, dtype=lucid.float64)).dtype == lucid.float64
    assert lucid.randn_like(lucid.ones(2, 3)).shape == (2, 3)
    ints = lucid.randint_like(lucid.ones(50), 2, 5)
    assert ints.dtype == lucid.float32
    assert ints.min().item() >= 2 and ints.max().item() <= 4
    assert lucid.randint_like(lucid.ones(3), 5).max().item() < 5


# ---------------------------------------------------------------- seeding
def test_manual_seed_makes_random_factories_reproducible():
    draws = []
    for _ in range(2):
        lucid.manual_seed(3)
        draws.append(
            (
                lucid.rand(3).tolist(),
                lucid.randn(3).tolist(),
                lucid.randint(0, 100, (3,)).tolist(),
                lucid.randperm(5).tolist(),
                lucid.normal(0.0, 1.0, (2,)).tolist(),
            )
        )
    assert draws[0] == draws[1]


def test_different_seeds_give_different_draws():
    lucid.manual_seed(1)
    first = lucid.rand(5).tolist()
    lucid.manual_seed(2)
    assert lucid.rand(5).tolist() != first


def test_manual_seed_returns_the_default_generator():
    generator = lucid.manual_seed(7)
    assert isinstance(generator, lucid.Generator)
    assert generator is lucid.default_generator
    assert generator.initial_seed() == 7
    assert lucid.initial_seed() == 7


def test_generator_manual_seed_reproduces_its_stream():
    generator = lucid.Generator()
    assert generator.manual_seed(5) is generator
    first = lucid.randn(3, generator=generator).tolist()
    generator.manual_seed(5)
    assert lucid.randn(3, generator=generator).tolist() == first


def test_generator_is_independent_of_the_default_generator():
    generator = lucid.Generator().manual_seed(5)
    expected = lucid.rand(3, generator=generator).tolist()
    generator.manual_seed(5)
    lucid.manual_seed(0)
    lucid.rand(10)
    assert lucid.rand(3, generator=generator).tolist() == expected


def test_generator_get_state_and_set_state_replay_draws():
    generator = lucid.Generator().manual_seed(5)
    lucid.rand(2, generator=generator)
    state = generator.get_state()
    assert isinstance(state, lucid.Tensor) and state.dtype == lucid.uint8 and state.dim() == 1
    first = lucid.rand(4, generator=generator).tolist()
    assert generator.set_state(state) is generator
    assert lucid.rand(4, generator=generator).tolist() == first


def test_get_rng_state_and_set_rng_state_replay_default_draws():
    state = lucid.get_rng_state()
    first = lucid.randn(3).tolist()
    lucid.set_rng_state(state)
    assert lucid.randn(3).tolist() == first


def test_scalar_tensor():
    x = lucid.scalar_tensor(3)
    assert x.shape == () and x.dtype == lucid.float32 and x.item() == 3.0


# Bad arguments to factories, by class, each raised as torch raises it: the same exception type
# and message, "torch." read as "lucid." (torch's allocator prefixes its message with the C++
# line that failed, which lucid has no counterpart for).
_BAD_FACTORY_CALLS = {
    "float steps": lambda lib: lib.linspace(0, 1, 2.5),
    "float steps, logspace": lambda lib: lib.logspace(0, 1, 2.5),
    "float randint low": lambda lib: lib.randint(0.5, 3, (2,)),
    "float randint high": lambda lib: lib.randint(0, 3.5, (2,)),
    "a storage past int64": lambda lib: lib.randn(2**31, 2**31),
    "memory the machine lacks": lambda lib: lib.zeros(10**12),
    "memory the machine lacks, full": lambda lib: lib.full((10**12,), 1.0),
    "memory the machine lacks, rand": lambda lib: lib.rand(10**12),
    "size= beside sizes": lambda lib: lib.zeros((2,), size=(3,)),
    "int8 past its range": lambda lib: lib.tensor(300, dtype=lib.int8),
    "int8 past its range, nested": lambda lib: lib.tensor([[1], [-129]], dtype=lib.int8),
    "uint8 below -255": lambda lib: lib.tensor(-256, dtype=lib.uint8),
    "uint8 of a negative float": lambda lib: lib.tensor(-0.5, dtype=lib.uint8),
    "int32 of nan": lambda lib: lib.tensor(float("nan"), dtype=lib.int32),
    "int64 of inf": lambda lib: lib.tensor([float("inf")], dtype=lib.int64),
    "an int past int64": lambda lib: lib.tensor(2**70),
    "an int past int64, nested": lambda lib: lib.tensor([1, 2**64]),
    "a list where an int belongs": lambda lib: lib.tensor([1, [2, 3]]),
    "a list where a float belongs": lambda lib: lib.tensor([1.0, [2.0, 3.0]]),
    "an object": lambda lib: lib.tensor([object()]),
    "None among numbers": lambda lib: lib.tensor([1, None]),
    "tensors of several elements": lambda lib: lib.tensor([lib.ones(2), lib.ones(2)]),
    "a string dtype": lambda lib: lib.zeros(2, dtype="float32"),
    "a string dtype, tensor": lambda lib: lib.tensor([1.0], dtype="float32"),
    "a NumPy dtype": lambda lib: lib.ones(2, dtype=np.float32),
    "a string fill": lambda lib: lib.full_like(lib.ones(2), "a"),
    "a tensor fill": lambda lib: lib.full_like(lib.ones(2), lib.ones(2)),
    "a one-element tensor fill": lambda lib: lib.full_like(lib.ones(2), lib.ones(1)),
    "a string fill, full": lambda lib: lib.full((2,), "a"),
    "a string generator": lambda lib: lib.randn(3, generator="x"),
    "a string generator, rand": lambda lib: lib.rand(3, generator="x"),
    "a string generator, randperm": lambda lib: lib.randperm(3, generator="x"),
    "a string generator, randint": lambda lib: lib.randint(0, 3, (2,), generator="x"),
}


def _raised(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the exception itself is what is compared
        return type(error), str(error).replace("torch.", "lucid.")
    return None


@pytest.mark.parametrize("case", sorted(_BAD_FACTORY_CALLS))
def test_bad_factory_arguments_raise_as_torch_does(case):
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    expected = _raised(lambda: _BAD_FACTORY_CALLS[case](torch))
    got = _raised(lambda: _BAD_FACTORY_CALLS[case](lucid))
    assert expected is not None and got is not None, (expected, got)
    assert got[0] is expected[0], (got, expected)
    if "DefaultCPUAllocator" in expected[1]:
        assert expected[1].endswith(got[1]), (got[1], expected[1])
    else:
        assert got[1] == expected[1]


_GOOD_FACTORY_CALLS = {
    "size=": lambda lib: lib.ones(size=(2, 3)),
    "size=, randn shape": lambda lib: lib.randn(size=(2, 3)).shape,
    "uint8 wraps a negative int": lambda lib: lib.tensor([-1, -200, 255], dtype=lib.uint8),
    "a tensor of one element is a scalar": lambda lib: lib.tensor([lib.ones(1), lib.ones(1, 1)]),
    "a 0-d tensor fill": lambda lib: lib.full_like(lib.ones(2), lib.tensor(3.0)),
    "a bool fill": lambda lib: lib.full((2,), True),
    "Python's float as a dtype": lambda lib: lib.zeros(2, dtype=float),
    "Python's complex as a dtype": lambda lib: lib.full((2,), 1, dtype=complex),
    "an int past int64 as a float": lambda lib: lib.tensor(2**70, dtype=lib.float32),
}


@pytest.mark.parametrize("case", sorted(_GOOD_FACTORY_CALLS))
def test_factory_calls_torch_takes_give_torch_values(case):
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    expected = _GOOD_FACTORY_CALLS[case](torch)
    got = _GOOD_FACTORY_CALLS[case](lucid)
    if isinstance(expected, torch.Size):
        assert tuple(got) == tuple(expected)
        return
    assert str(got.dtype).replace("lucid.", "") == str(expected.dtype).replace("torch.", "")
    assert got.shape == tuple(expected.shape)
    if case != "size=":  # ones' values are ones; randn's are random
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


_BAD_CORE_CALLS = {
    "a Size of a float": lambda lib: lib.Size([2.5]),
    "a Size of a string": lambda lib: lib.Size([2, "a"]),
    "a Size of a float tensor": lambda lib: lib.Size([lib.tensor(2.0)]),
    "a Generator on no device": lambda lib: lib.Generator("foo"),
}


@pytest.mark.parametrize("case", sorted(_BAD_CORE_CALLS))
def test_bad_sizes_and_generators_raise_as_torch_does(case):
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    expected = _raised(lambda: _BAD_CORE_CALLS[case](torch))
    got = _raised(lambda: _BAD_CORE_CALLS[case](lucid))
    assert expected is not None and got == expected


def test_a_size_takes_what_converts_to_an_index_as_torch_does():
    torch = pytest.importorskip("torch", reason="torch is the oracle")
    values = [np.int64(2), True, 3]
    assert tuple(lucid.Size([*values, lucid.tensor(4)])) == tuple(
        torch.Size([*values, torch.tensor(4)])
    )
    assert type(lucid.broadcast_shapes((2, 1), (1, 3))) is lucid.Size
