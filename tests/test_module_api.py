"""Module-level names PyTorch scripts use: constants, window functions, print options, the
process settings (determinism, matmul precision, default device), layouts and memory formats,
and the small tensor utilities (apply_, map_, new, asarray, frombuffer), against torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid


def _torch():
    return pytest.importorskip("torch")


def test_constants_are_torchs():
    torch = _torch()
    for name in ("pi", "e", "inf"):
        assert getattr(lucid, name) == getattr(torch, name)
    assert math.isnan(lucid.nan)
    assert lucid.newaxis is None and torch.newaxis is None
    for name in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
        assert isinstance(getattr(lucid, name), bool)


WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_window_matches_torch(name, length, periodic):
    torch = _torch()
    result = getattr(lucid, name)(length, periodic, dtype=lucid.float64)
    expected = getattr(torch, name)(length, periodic, dtype=torch.float64)
    np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-12, atol=1e-15)
    default = getattr(lucid, name)(length, requires_grad=True)
    assert default.dtype == lucid.float32 and default.requires_grad and default.is_leaf


def test_window_options_match_torch():
    torch = _torch()
    np.testing.assert_allclose(
        lucid.hamming_window(6, False, 0.5, 0.5).numpy(),
        torch.hamming_window(6, False, 0.5, 0.5).numpy(),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        lucid.kaiser_window(7, True, 3.0).numpy(),
        torch.kaiser_window(7, True, 3.0).numpy(),
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.hann_window(5, dtype=lib.int64),
        lambda lib: lib.blackman_window(-1),
        lambda lib: lib.set_deterministic_debug_mode("x"),
        lambda lib: lib.ones(2, 3).contiguous(memory_format=lib.channels_last),
        lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v),
        lambda lib: lib.ones(2, requires_grad=True).map_(lib.ones(2), lambda a, b: a),
        lambda lib: lib.frombuffer(b"", dtype=lib.uint8),
    ],
)
def test_errors_match_torch(call):
    torch = _torch()
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type) as error:
        call(lucid)
    assert str(error.value) == str(expected.value).replace("torch", "lucid")


@pytest.fixture
def restore_print_options():
    yield
    lucid.set_printoptions(profile="default")
    torch = pytest.importorskip("torch")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize(
    "options",
    [
        {"precision": 2},
        {"threshold": 5, "edgeitems": 2},
        {"linewidth": 40},
        {"sci_mode": True},
        {"sci_mode": False},
        {"profile": "short"},
        {"profile": "full"},
    ],
)
def test_set_printoptions_prints_as_torch(options, restore_print_options):
    torch = _torch()
    rng = np.random.default_rng(0)
    lucid.set_printoptions(**options)
    torch.set_printoptions(**options)
    for array in (rng.uniform(-3, 3, (40, 50)), rng.uniform(-3, 3, (3, 4)), np.array([1e-6, 1e5])):
        assert repr(lucid.tensor(array)) == repr(torch.tensor(array)).replace("torch", "lucid")


def test_deterministic_settings_round_trip_as_in_torch():
    torch = _torch()
    try:
        for mode in ("warn", "error", 0, 1, 2, "default"):
            lucid.set_deterministic_debug_mode(mode)
            torch.set_deterministic_debug_mode(mode)
            assert lucid.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert (
                lucid.are_deterministic_algorithms_enabled()
                == torch.are_deterministic_algorithms_enabled()
            )
            assert (
                lucid.is_deterministic_algorithms_warn_only_enabled()
                == torch.is_deterministic_algorithms_warn_only_enabled()
            )
        lucid.use_deterministic_algorithms(True, warn_only=True)
        assert lucid.get_deterministic_debug_mode() == 1
    finally:
        lucid.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


def test_matmul_precision_and_warn_always_round_trip():
    assert lucid.get_float32_matmul_precision() == "highest"
    try:
        lucid.set_float32_matmul_precision("medium")
        assert lucid.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            lucid.set_float32_matmul_precision("fast")
        assert lucid.get_float32_matmul_precision() == "medium"
    finally:
        lucid.set_float32_matmul_precision("highest")
    try:
        lucid.set_warn_always(True)
        assert lucid.is_warn_always_enabled()
    finally:
        lucid.set_warn_always(False)
    assert not lucid.is_warn_always_enabled()


def test_flush_denormal_is_reported_unsupported():
    assert lucid.set_flush_denormal(True) is False
    assert lucid.set_flush_denormal(False) is False


def test_default_device_is_the_cpu_only():
    assert lucid.get_default_device() == lucid.device("cpu")
    lucid.set_default_device("cpu")
    lucid.set_default_device(None)
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        lucid.set_default_device("cuda")


def test_typename_matches_torch():
    torch = _torch()
    for dtype in ("float32", "float64", "int64", "bool", "uint8"):
        name = lucid.typename(lucid.ones(1, dtype=getattr(lucid, dtype)))
        assert name == torch.typename(torch.ones(1, dtype=getattr(torch, dtype))).replace(
            "torch", "lucid"
        )
    assert lucid.typename(3) == torch.typename(3)
    assert lucid.typename(lucid.nn.Linear(1, 1)) == "lucid.nn.modules.linear.Linear"


def test_layouts_and_memory_formats():
    torch = _torch()
    x = lucid.rand(2, 3, 4, 5)
    assert x.layout is lucid.strided and repr(lucid.strided) == "lucid.strided"
    assert x.is_cpu
    channels_last = x.contiguous(memory_format=lucid.channels_last)
    expected = torch.rand(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    assert channels_last.stride() == expected.stride()
    np.testing.assert_array_equal(channels_last.numpy(), x.numpy())
    assert x.contiguous(memory_format=lucid.contiguous_format) is x
    assert lucid.empty_like(x, memory_format=lucid.preserve_format).shape == x.shape
    volume = lucid.rand(1, 2, 3, 4, 5).contiguous(memory_format=lucid.channels_last_3d)
    assert volume.stride() == (120, 1, 40, 10, 2)


def test_channels_last_copy_passes_the_gradient():
    x = lucid.rand(1, 2, 2, 3, dtype=lucid.float64, requires_grad=True)
    y = x.contiguous(memory_format=lucid.channels_last)
    assert y.grad_fn.name() == "CloneBackward0"
    assert lucid.autograd.gradcheck(lambda t: t.contiguous(memory_format=lucid.channels_last), (x,))


def test_apply_map_map2_match_torch():
    torch = _torch()
    for library in (lucid, torch):
        x = library.tensor([1.0, 2.0, 3.0])
        assert x.apply_(lambda v: v * v) is x
        x.map_(library.tensor([1.0]), lambda a, b: a + b)
        x.map2_(library.tensor([2.0, 2.0, 2.0]), library.tensor(0.5), lambda a, b, c: a * b + c)
        integers = library.tensor([1, 2]).apply_(lambda v: v * 3)
        if library is lucid:
            result, result_integers = x.numpy(), integers.numpy()
        else:
            np.testing.assert_array_equal(result, x.numpy())
            np.testing.assert_array_equal(result_integers, integers.numpy())


def test_apply_bumps_the_version_so_saved_values_stay_checked():
    # PyTorch leaves the version alone here; lucid counts the write like any other.
    x = lucid.tensor([1.0, 2.0])
    x.apply_(lambda v: v + 1.0)
    assert x._version == 1


def test_new_matches_torch():
    torch = _torch()
    for args in ((2, 3), ([1, 2],), ()):
        result = lucid.ones(2, dtype=lucid.int32).new(*args)
        expected = torch.ones(2, dtype=torch.int32).new(*args)
        assert result.shape == expected.shape and result.dtype == lucid.int32
    np.testing.assert_array_equal(lucid.rand(2).new([1, 2]).numpy(), [1.0, 2.0])


def test_asarray_shares_memory_as_torch():
    torch = _torch()
    array = np.arange(3.0)
    shared = lucid.asarray(array)
    array[0] = 9.0
    assert shared.numpy()[0] == 9.0
    x = lucid.rand(3, requires_grad=True)
    assert lucid.asarray(x) is x
    assert lucid.asarray(x, dtype=lucid.float64).grad_fn.name() == "ToCopyBackward0"
    assert lucid.asarray([1, 2]).dtype == lucid.int64 == lucid.int64
    assert str(lucid.asarray([1.5]).dtype) == str(torch.asarray([1.5]).dtype).replace(
        "torch", "lucid"
    )


def test_frombuffer_shares_the_buffer():
    buffer = bytearray(b"\x01\x02\x03\x04")
    view = lucid.frombuffer(buffer, dtype=lucid.uint8, count=2, offset=1)
    np.testing.assert_array_equal(view.numpy(), [2, 3])
    buffer[1] = 7
    assert view.numpy()[0] == 7


def test_fill_get_device_detach_functions_match_torch():
    torch = _torch()
    x = lucid.rand(3, requires_grad=True)
    filled = lucid.fill(x, 2.0)
    assert (
        filled.grad_fn.name() == torch.fill(torch.rand(3, requires_grad=True), 2.0).grad_fn.name()
    )
    np.testing.assert_array_equal(filled.detach().numpy(), [2.0, 2.0, 2.0])
    (grad,) = lucid.autograd.grad(filled.sum(), (x,))
    assert not grad.numpy().any()
    assert lucid.get_device(x) == torch.get_device(torch.rand(3)) == -1
    assert not lucid.detach(x).requires_grad
    y = x * 1.0
    assert lucid.detach_(y) is y and y.grad_fn is None


def test_post_accumulate_grad_hook_runs_after_each_accumulation_as_in_torch():
    torch = _torch()
    seen = {}
    for library in (lucid, torch):
        weight = library.ones(2, requires_grad=True)
        grads = seen[library.__name__] = []
        handle = weight.register_post_accumulate_grad_hook(
            lambda tensor, grads=grads: grads.append(tensor.grad.clone().tolist())
        )
        (weight * 3.0).sum().backward()
        (weight * 3.0).sum().backward()
        library.autograd.grad((weight * 3.0).sum(), weight)
        handle.remove()
        (weight * 3.0).sum().backward()
    assert seen["lucid"] == seen["torch"] == [[3.0, 3.0], [6.0, 6.0]]


def test_post_accumulate_grad_hook_survives_between_graphs_and_frees_its_leaf():
    import gc
    import weakref

    calls = []
    weight = lucid.ones(2, requires_grad=True)
    weight.register_post_accumulate_grad_hook(lambda tensor: calls.append(tensor))
    gc.collect()
    (weight * 2.0).sum().backward()
    assert calls == [weight]
    reference = weakref.ref(weight)
    calls.clear()
    del weight
    gc.collect()
    assert reference() is None


@pytest.mark.parametrize(
    "make",
    [lambda lib: lib.ones(2), lambda lib: lib.ones(2, requires_grad=True) * 2.0],
)
def test_post_accumulate_grad_hook_errors_match_torch(make):
    torch = _torch()
    with pytest.raises(RuntimeError) as expected:
        make(torch).register_post_accumulate_grad_hook(lambda tensor: None)
    with pytest.raises(RuntimeError) as error:
        make(lucid).register_post_accumulate_grad_hook(lambda tensor: None)
    assert str(error.value) == str(expected.value)
