"""lucid.autocast: the region's state, nesting, decorator, threads, the weight cast cache, the
switches and their errors and warnings as PyTorch's."""

from __future__ import annotations

import gc
import threading
import warnings

import numpy as np
import pytest

import lucid
from lucid.amp import autocast_mode
from tests.torch_oracle import requires_torch, torch


def _has_bfloat16_matmul() -> bool:
    low = lucid.ones(2, 2).to(lucid.bfloat16)
    return lucid.mm(low, low).dtype is lucid.bfloat16


# Backward through an autocast matmul needs the op's bfloat16 kernel (branch lowprec-core).
needs_bfloat16_matmul = pytest.mark.skipif(
    not _has_bfloat16_matmul(), reason="lucid's bfloat16 matmul returns float32 (lowprec-core)"
)


@pytest.fixture(autouse=True)
def _restore_autocast_state():
    """Tests that flip switches directly leave the thread as they found it."""
    yield
    state = lucid._core.grad_mode.local_state
    state.autocast = None
    state.autocast_devices = frozenset()
    state.autocast_dtypes = {}
    state.autocast_cache_enabled = True
    state.autocast_nesting = 0
    state.autocast_cache = None


def _mm_input_dtype() -> lucid.dtype:
    """The dtype an autocast-listed op (mm) is handed, seen through its recorded cast."""
    a = lucid.randn(2, 2, requires_grad=True)
    out = lucid.mm(a, a)
    edge = out.grad_fn.next_functions[0][0]
    return lucid.bfloat16 if edge.name() == "ToCopyBackward0" else lucid.float32


def test_autocast_is_the_same_object_in_lucid_and_lucid_amp():
    assert lucid.autocast is lucid.amp.autocast


def test_region_sets_and_restores_the_state():
    assert not lucid.is_autocast_enabled("cpu")
    with lucid.autocast("cpu"):
        assert lucid.is_autocast_enabled("cpu")
        assert lucid.get_autocast_dtype("cpu") is lucid.bfloat16
    assert not lucid.is_autocast_enabled("cpu")


def test_state_is_restored_after_an_exception():
    with pytest.raises(ValueError), lucid.autocast("cpu", dtype=lucid.float16):
        raise ValueError
    assert not lucid.is_autocast_enabled("cpu")
    assert lucid.get_autocast_dtype("cpu") is lucid.bfloat16


def test_nested_regions_restore_the_outer_dtype_and_enabled_false_turns_it_off():
    with lucid.autocast("cpu"):
        with lucid.autocast("cpu", dtype=lucid.float16):
            assert lucid.get_autocast_dtype("cpu") is lucid.float16
        assert lucid.get_autocast_dtype("cpu") is lucid.bfloat16
        with lucid.autocast("cpu", enabled=False):
            assert not lucid.is_autocast_enabled("cpu")
            assert lucid.mm(lucid.randn(2, 2), lucid.randn(2, 2)).dtype is lucid.float32
        assert lucid.is_autocast_enabled("cpu")


def test_decorator_enters_a_region_per_call_and_recursion_restores_each():
    depths = []

    @lucid.autocast("cpu")
    def recurse(depth):
        depths.append(lucid.is_autocast_enabled("cpu"))
        if depth:
            recurse(depth - 1)
        return lucid.is_autocast_enabled("cpu")

    assert recurse(2)
    assert depths == [True, True, True]
    assert not lucid.is_autocast_enabled("cpu")


def test_decorating_a_non_callable_raises_torchs_error():
    with pytest.raises(TypeError, match=r"autocast\(\)\(func\) requires a callable, but got int"):
        lucid.autocast("cpu")(3)


def test_state_is_thread_local():
    seen = {}

    def other_thread():
        seen["enabled"] = lucid.is_autocast_enabled("cpu")
        seen["mm"] = _mm_input_dtype()

    with lucid.autocast("cpu"):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert _mm_input_dtype() is lucid.bfloat16
    assert seen == {"enabled": False, "mm": lucid.float32}


def test_a_weight_is_cast_once_per_region_and_the_cache_is_freed_on_exit():
    weight = lucid.randn(3, 3, requires_grad=True)
    x = lucid.randn(3, 3)
    with lucid.autocast("cpu"):
        first = lucid.mm(x, weight).grad_fn.next_functions[1][0]
        second = lucid.mm(x, weight).grad_fn.next_functions[1][0]
        assert first is second  # the same recorded cast
        assert lucid.amp.autocast_mode.local_state.autocast_cache
    assert autocast_mode.local_state.autocast_cache is None


def test_the_cache_is_kept_until_the_outermost_region_exits():
    weight = lucid.randn(3, 3, requires_grad=True)
    with lucid.autocast("cpu"):
        with lucid.autocast("cpu"):
            lucid.mm(lucid.randn(3, 3), weight)
        assert autocast_mode.local_state.autocast_cache
    assert autocast_mode.local_state.autocast_cache is None


def test_cache_disabled_casts_every_time():
    weight = lucid.randn(3, 3, requires_grad=True)
    x = lucid.randn(3, 3)
    with lucid.autocast("cpu", cache_enabled=False):
        assert not lucid.is_autocast_cache_enabled()
        first = lucid.mm(x, weight).grad_fn.next_functions[1][0]
        second = lucid.mm(x, weight).grad_fn.next_functions[1][0]
        assert first is not second
    assert lucid.is_autocast_cache_enabled()


def test_a_weight_changed_in_place_is_cast_again():
    weight = lucid.randn(3, 3, requires_grad=True)
    x = lucid.eye(3)
    with lucid.autocast("cpu"):
        before = lucid.mm(x, weight)
        with lucid.no_grad():
            weight.mul_(2.0)
        after = lucid.mm(x, weight)
    assert after.grad_fn.next_functions[1][0] is not before.grad_fn.next_functions[1][0]


@needs_bfloat16_matmul
def test_no_cast_made_under_no_grad_is_reused_with_grad():
    weight = lucid.randn(3, 3, requires_grad=True)
    x = lucid.randn(3, 3)
    with lucid.autocast("cpu"):
        with lucid.no_grad():
            lucid.mm(x, weight)
        out = lucid.mm(x, weight)
    out.float().sum().backward()
    assert weight.grad is not None


def test_a_freed_weight_never_hits_another_tensors_cache_entry():
    with lucid.autocast("cpu"):
        weight = lucid.randn(2, 2, requires_grad=True)
        lucid.mm(lucid.randn(2, 2), weight)
        del weight
        gc.collect()
        other = lucid.randn(2, 2, requires_grad=True)
        cast = lucid.mm(lucid.eye(2), other).grad_fn.next_functions[1][0]
        assert cast.next_functions[0][0].variable is other


def test_float64_inputs_are_never_autocast():
    a = lucid.randn(2, 2, dtype=lucid.float64)
    with lucid.autocast("cpu"):
        assert lucid.mm(a, a).dtype is lucid.float64


def test_an_unlisted_op_keeps_its_input_dtype():
    x = lucid.randn(2, 3)
    with lucid.autocast("cpu"):
        assert lucid.softmax(x, 1).dtype is lucid.float32
        assert x.exp().dtype is lucid.float32


def test_promote_casts_to_the_widest_input_dtype():
    low = lucid.randn(2, 2).to(lucid.bfloat16)
    with lucid.autocast("cpu"):
        assert lucid.cat([low, low]).dtype is lucid.bfloat16
        assert lucid.cat([low, lucid.randn(2, 2)]).dtype is lucid.float32
        assert lucid.stack([low, lucid.randn(2, 2).half()]).dtype is lucid.float32


def test_losses_run_in_float32_and_their_gradient_returns_in_the_input_dtype():
    logits = lucid.randn(4, 3).to(lucid.bfloat16).requires_grad_()
    target = lucid.tensor([0, 1, 2, 1])
    with lucid.autocast("cpu"):
        loss = lucid.nn.functional.cross_entropy(logits, target)
    assert loss.dtype is lucid.float32
    loss.backward()
    assert logits.grad.dtype is lucid.bfloat16


def test_backward_of_a_builtin_op_inside_the_region_runs_in_the_forward_dtypes():
    x = lucid.randn(3, 3, requires_grad=True)
    with lucid.autocast("cpu"):
        y = lucid.nn.functional.cross_entropy(x, lucid.tensor([0, 1, 2]))
        (grad,) = lucid.autograd.grad(y, x, create_graph=True)
    assert grad.dtype is lucid.float32


def test_switches_set_the_state_directly():
    lucid.set_autocast_enabled("cpu", True)
    assert lucid.is_autocast_enabled("cpu")
    assert _mm_input_dtype() is lucid.bfloat16
    lucid.set_autocast_enabled("cpu", False)
    assert _mm_input_dtype() is lucid.float32
    lucid.set_autocast_dtype("cpu", lucid.float16)
    assert lucid.get_autocast_dtype("cpu") is lucid.float16
    lucid.set_autocast_cache_enabled(False)
    assert not lucid.is_autocast_cache_enabled()
    assert lucid.autocast_increment_nesting() == 1
    assert lucid.autocast_decrement_nesting() == 0


def test_without_a_device_type_the_query_and_switch_are_cudas():
    lucid.set_autocast_enabled(True)
    assert lucid.is_autocast_enabled()
    assert lucid.is_autocast_enabled("cuda")
    assert not lucid.is_autocast_enabled("cpu")


def test_deprecated_cpu_forms_warn_and_act_on_the_cpu():
    with pytest.warns(DeprecationWarning, match=r"lucid.set_autocast_cpu_enabled\(enabled\) is"):
        lucid.set_autocast_cpu_enabled(True)
    with pytest.warns(DeprecationWarning, match=r"Please use lucid.is_autocast_enabled\('cpu'\)"):
        assert lucid.is_autocast_cpu_enabled()
    with pytest.warns(DeprecationWarning):
        lucid.set_autocast_cpu_dtype(lucid.float16)
    with pytest.warns(DeprecationWarning):
        assert lucid.get_autocast_cpu_dtype() is lucid.float16
    with pytest.warns(DeprecationWarning):
        assert lucid.get_autocast_gpu_dtype() is lucid.float16
    with pytest.warns(DeprecationWarning):
        assert lucid.get_autocast_xla_dtype() is lucid.bfloat16


def test_custom_fwd_casts_inputs_and_custom_bwd_runs_in_the_forwards_state():
    seen = {}

    class Square(lucid.autograd.Function):
        @staticmethod
        @lucid.amp.custom_fwd(device_type="cpu", cast_inputs=lucid.float32)
        def forward(ctx, x):
            seen["forward"] = (x.dtype, lucid.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lucid.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad_output):
            seen["backward"] = lucid.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    x = lucid.randn(3).to(lucid.bfloat16).requires_grad_()
    with lucid.autocast("cpu"):
        y = Square.apply(x)
    y.sum().backward()
    assert seen == {"forward": (lucid.float32, False), "backward": False}
    assert x.grad.dtype is lucid.bfloat16


# --------------------------------------------------------------------- errors and warnings
@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        "autocast(1)",
        "autocast('foo')",
        "autocast('hip')",
        "autocast('cpu', enabled=1).__enter__()",
        "is_autocast_enabled(1)",
        "is_autocast_enabled('meta')",
        "is_autocast_enabled('foo')",
        "get_autocast_dtype(1)",
        "get_autocast_dtype('meta')",
        "set_autocast_enabled('cpu', 1)",
        "set_autocast_enabled('hip', True)",
        "set_autocast_dtype('cpu', 1)",
        "set_autocast_cache_enabled(1)",
        "set_autocast_cpu_enabled(1)",
        "set_autocast_cpu_dtype(1)",
        "amp.is_autocast_available(1)",
        "amp.custom_fwd(device_type=1)",
    ],
)
def test_bad_calls_raise_torchs_error(call):
    with pytest.raises(Exception) as expected, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eval("torch." + call, {"torch": torch})
    with pytest.raises(type(expected.value)) as actual, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eval("lucid." + call, {"lucid": lucid})
    assert str(actual.value) == str(expected.value).replace("torch", "lucid")


@requires_torch
@pytest.mark.parametrize(
    "arguments",
    [("cuda",), ("cpu", "float32"), ("cpu", "float64"), ("cpu", "float16"), ("xpu",)],
)
def test_unsupported_regions_warn_and_disable_as_torchs(arguments):
    def run(library):
        device, *dtype = arguments
        dtype = getattr(library, dtype[0]) if dtype else None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with library.autocast(device, dtype=dtype):
                state = (
                    library.is_autocast_enabled(device),
                    str(library.get_autocast_dtype(device)),
                )
        return [str(w.message) for w in caught], state

    expected_warnings, expected_state = run(torch)
    actual_warnings, actual_state = run(lucid)
    assert actual_warnings == [m.replace("torch.", "lucid.") for m in expected_warnings]
    assert actual_state == (expected_state[0], expected_state[1].replace("torch", "lucid"))


@requires_torch
def test_defaults_per_device_type_are_torchs():
    for device in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia"):
        expected = str(torch.get_autocast_dtype(device)).replace("torch", "lucid")
        assert str(lucid.get_autocast_dtype(device)) == expected
        assert lucid.amp.is_autocast_available(device) == torch.amp.is_autocast_available(device)


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        "cpu.amp.autocast()",
        "cpu.amp.autocast(dtype=LIB.float16)",
        "cuda.amp.autocast()",
        "cuda.amp.custom_fwd(lambda ctx: None)",
        "cuda.amp.custom_bwd(lambda ctx: None)",
    ],
)
def test_deprecated_device_modules_warn_as_torchs(call):
    def run(library, name):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = eval(f"{name}.{call.replace('LIB', name)}", {name: library})
            if isinstance(made, library.amp.autocast):
                with made:
                    state = library.is_autocast_enabled("cpu"), library.is_autocast_enabled("cuda")
            else:
                state = None
        return [(w.category, str(w.message)) for w in caught], state

    expected_warnings, expected_state = run(torch, "torch")
    actual_warnings, actual_state = run(lucid, "lucid")
    assert actual_state == expected_state
    assert actual_warnings == [
        (category, message.replace("torch.", "lucid.")) for category, message in expected_warnings
    ]


@needs_bfloat16_matmul
def test_custom_fwd_without_cast_inputs_runs_forward_and_backward_under_the_region():
    seen = {}

    class Product(lucid.autograd.Function):
        @staticmethod
        @lucid.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            out = lucid.mm(a, b)
            seen["forward"] = out.dtype
            return out

        @staticmethod
        @lucid.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_a = lucid.mm(grad_output, b.t())
            seen["backward"] = (lucid.is_autocast_enabled("cpu"), grad_a.dtype)
            return grad_a.float(), None

    a = lucid.randn(2, 3, requires_grad=True)
    with lucid.autocast("cpu"):
        out = Product.apply(a, lucid.randn(3, 2))
    out.float().sum().backward()
    assert seen == {"forward": lucid.bfloat16, "backward": (True, lucid.bfloat16)}
    assert a.grad.dtype is lucid.float32


@requires_torch
def test_pinv_computes_in_float32_and_returns_the_lower_precision_as_torchs():
    array = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = torch.linalg.pinv(torch.from_numpy(array))
    source = lucid.from_numpy(array).requires_grad_()
    with lucid.autocast("cpu"):
        actual = lucid.linalg.pinv(source)
    assert actual.dtype is lucid.bfloat16 and expected.dtype is torch.bfloat16
    np.testing.assert_allclose(
        actual.float().detach().numpy(), expected.float().numpy(), rtol=2e-2, atol=2e-2
    )
    actual.float().sum().backward()
    assert source.grad.dtype is lucid.float32
