"""Devices and the process API, as PyTorch's CPU-only build answers (issue 16)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch


def test_device_parses_prints_and_compares_as_pytorch():
    cpu = lucid.device("cpu")
    assert (str(cpu), repr(cpu), cpu.type, cpu.index) == ("cpu", "device(type='cpu')", "cpu", None)
    indexed = lucid.device("cpu", 0)
    assert repr(indexed) == "device(type='cpu', index=0)" and str(indexed) == "cpu:0"
    assert indexed == lucid.device("cpu:0") and indexed != cpu
    assert lucid.device(cpu) == cpu and {cpu: 1}[lucid.device("cpu")] == 1
    assert str(lucid.device("cuda", 1)) == "cuda:1"
    assert pickle.loads(pickle.dumps(indexed)) == indexed


def test_device_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
        lucid.device("foo")
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        lucid.device("cpu", -1)
    with pytest.raises(RuntimeError, match="Invalid device string: 'cpu:x'"):
        lucid.device("cpu:x")
    with pytest.raises(TypeError, match="must be int, not str"):
        lucid.device("cpu", "a")
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        lucid.device(None)


def test_tensor_device_is_a_cpu_device_that_equals_the_string():
    x = lucid.zeros(2)
    assert isinstance(x.device, lucid.device) and str(x.device) == "cpu"
    assert x.device == "cpu" and x.device == lucid.device("cpu")
    assert not x.is_cuda and x.get_device() == -1 and not x.is_pinned()


FACTORIES = [
    lambda **k: lucid.tensor([1.0], **k),
    lambda **k: lucid.as_tensor([1.0], **k),
    lambda **k: lucid.scalar_tensor(1.0, **k),
    lambda **k: lucid.zeros(2, **k),
    lambda **k: lucid.ones(2, **k),
    lambda **k: lucid.empty(2, **k),
    lambda **k: lucid.full((2,), 1.0, **k),
    lambda **k: lucid.arange(3, **k),
    lambda **k: lucid.linspace(0, 1, 3, **k),
    lambda **k: lucid.logspace(0, 1, 3, **k),
    lambda **k: lucid.eye(2, **k),
    lambda **k: lucid.rand(2, **k),
    lambda **k: lucid.randn(2, **k),
    lambda **k: lucid.randint(3, (2,), **k),
    lambda **k: lucid.randperm(3, **k),
    lambda **k: lucid.normal(0.0, 1.0, (2,), **k),
    lambda **k: lucid.zeros_like(lucid.ones(2), **k),
    lambda **k: lucid.ones_like(lucid.ones(2), **k),
    lambda **k: lucid.empty_like(lucid.ones(2), **k),
    lambda **k: lucid.full_like(lucid.ones(2), 3.0, **k),
    lambda **k: lucid.rand_like(lucid.ones(2), **k),
    lambda **k: lucid.randn_like(lucid.ones(2), **k),
    lambda **k: lucid.randint_like(lucid.ones(2), 0, 3, **k),
]


@pytest.mark.parametrize("factory", FACTORIES)
def test_every_factory_accepts_the_cpu_and_refuses_cuda(factory):
    for device in ("cpu", "cpu:0", lucid.device("cpu"), None):
        assert factory(device=device).device == "cpu"
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        factory(device="cuda")
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        factory(device=0)


def test_pin_memory_is_accepted_false_and_refused_true_as_on_a_cpu_build():
    assert lucid.empty(2, pin_memory=False).shape == (2,)
    with pytest.raises(RuntimeError, match="pin_memory=True requires a CUDA"):
        lucid.zeros(2, pin_memory=True)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        lucid.zeros(2).pin_memory()


def test_tensor_to_device_forms():
    x = lucid.ones(2)
    assert x.to("cpu") is x and x.cpu() is x and x.to(lucid.device("cpu")) is x
    assert x.to("cpu", lucid.float64).dtype == lucid.float64
    assert x.to(lucid.zeros(1, dtype=lucid.int64)).dtype == lucid.int64
    assert x.to(device="cpu", dtype=lucid.float16).dtype == lucid.float16
    for move in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: x.to(device="cuda:0")):
        with pytest.raises(AssertionError, match="lucid not compiled with CUDA enabled"):
            move()
    with pytest.raises(NotImplementedError, match="'mps'"):
        x.to("mps")


def test_module_to_cpu_cuda_and_type():
    model = lucid.nn.Sequential(lucid.nn.Linear(2, 3), lucid.nn.BatchNorm1d(3))
    weight = model[0].weight
    assert model.to("cpu") is model and model.cpu() is model
    assert model.to(lucid.device("cpu"), lucid.float64) is model
    assert model[0].weight is weight and weight.dtype == lucid.float64
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        model.cuda()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        model.to("cuda")
    assert lucid.nn.ReLU().cuda() is not None  # nothing to move, as in PyTorch
    model.type(lucid.float32)
    assert weight.dtype == lucid.float32 and model[1].num_batches_tracked.dtype == lucid.float32
    with pytest.raises(RuntimeError, match="must be floating point"):
        lucid.nn.Linear(2, 2).type(lucid.int64)


def test_load_state_dict_accepts_numpy_arrays():
    model = lucid.nn.Linear(2, 2)
    weight = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    model.load_state_dict({"weight": weight, "bias": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(model.weight.detach().numpy(), weight)
    weight[0, 0] = 99.0  # the module holds a copy
    assert model.weight[0, 0].item() == 0.0


def test_cuda_backends_and_accelerator_answer_as_a_cpu_build():
    assert lucid.cuda.is_available() is False and lucid.cuda.device_count() == 0
    assert lucid.cuda.manual_seed_all(0) is None
    with pytest.raises(AssertionError, match="CUDA"):
        lucid.cuda.current_device()
    assert lucid.backends.mps.is_available() is False
    assert lucid.backends.cudnn.is_available() is False
    lucid.backends.cudnn.benchmark = True
    lucid.backends.cudnn.deterministic = True
    lucid.backends.cudnn.benchmark = lucid.backends.cudnn.deterministic = False
    assert lucid.accelerator.is_available() is False
    assert lucid.accelerator.current_accelerator() is None


@requires_torch
def test_process_answers_match_pytorchs():
    import torch

    assert lucid.cuda.is_available() == torch.cuda.is_available()
    assert lucid.cuda.device_count() == torch.cuda.device_count()
    assert lucid.backends.mps.is_available() == torch.backends.mps.is_available()
    assert lucid.accelerator.is_available() == torch.accelerator.is_available()
    assert lucid.accelerator.current_accelerator() == torch.accelerator.current_accelerator()
    for flag in ("benchmark", "deterministic", "enabled"):
        assert getattr(lucid.backends.cudnn, flag) == getattr(torch.backends.cudnn, flag)
    assert str(lucid.device("cpu", 0)) == str(torch.device("cpu", 0))
    assert repr(lucid.device("cuda:1")) == repr(torch.device("cuda:1"))


def test_set_num_threads_sets_blas_threads(monkeypatch):
    import threadpoolctl

    from lucid import _process

    monkeypatch.setattr(_process, "_settings", {"threads": None, "interop_threads": None})
    before = lucid.get_num_threads()
    try:
        lucid.set_num_threads(1)
        blas = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()
                if pool["user_api"] == "blas"]  # fmt: skip
        assert blas and set(blas) == {1}
    finally:
        lucid.set_num_threads(before)


def test_thread_counts(monkeypatch):
    from lucid import _process

    monkeypatch.setattr(_process, "_settings", {"threads": None, "interop_threads": None})
    assert lucid.get_num_threads() >= 1 and lucid.get_num_interop_threads() >= 1
    before = lucid.get_num_threads()
    lucid.set_num_threads(1)
    assert lucid.get_num_threads() == 1
    lucid.set_num_threads(before)
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
        lucid.set_num_threads(0)
    with pytest.raises(RuntimeError, match="expects an int, but got float"):
        lucid.set_num_threads(2.0)
    lucid.set_num_interop_threads(2)
    assert lucid.get_num_interop_threads() == 2
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        lucid.set_num_interop_threads(2)


def test_compile_wraps_a_module_and_decorates_a_function_without_warnings():
    model = lucid.nn.Linear(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = lucid.compile(model, mode="max-autotune")
        assert compiled._orig_mod is model

        @lucid.compile()
        def step(x):
            return x * 2

        assert step(lucid.ones(1)).item() == 2.0
    with pytest.raises(TypeError, match="A callable function is expected"):
        lucid.compile(3)


def test_jit_is_out_of_scope_with_a_clear_error():
    with pytest.raises(NotImplementedError, match="no TorchScript"):
        lucid.jit.script(lucid.nn.Linear(2, 2))


def test_import_lucid_loads_none_of_the_process_modules():
    import subprocess
    import sys

    code = (
        "import sys, lucid\n"
        "print([m for m in ('lucid.cuda', 'lucid.backends', 'lucid.accelerator', 'lucid.jit', "
        "'lucid._process', 'threadpoolctl') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr
