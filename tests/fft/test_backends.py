"""The libraries under lucid.fft: scipy.fft where SciPy is installed, numpy.fft without it,
each giving torch's values and gradients; stft's one-op path without a gradient, bit for bit
the differentiable path; and births inside a transform named with either library."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import lucid
from lucid._core import sentinel
from lucid._core.sentinel import NonFiniteWarning
from lucid.autograd.anomaly_mode import AnomalyError
from lucid.ops import spectral
from tests.torch_oracle import requires_torch, torch

pytest.importorskip("scipy.fft")


@pytest.fixture(params=["scipy", "numpy"])
def library(request, monkeypatch):
    """Which pocketfft lucid loads: SciPy's, or NumPy's when scipy.fft cannot be imported."""
    monkeypatch.setattr(spectral, "_POCKETFFT", None)
    if request.param == "numpy":
        monkeypatch.setitem(sys.modules, "scipy.fft", None)  # import raises ImportError
    yield request.param
    expected = np.fft if request.param == "numpy" else sys.modules["scipy.fft"]
    assert spectral._POCKETFFT is expected


# (n_fft, hop_length, win_length, center, pad_mode, normalized)
FUSED_SETTINGS = [
    (8, None, None, True, "reflect", False),
    (8, 3, 5, True, "constant", True),
    (7, 2, None, True, "replicate", False),
    (9, 3, 6, True, "circular", True),
    (8, 4, 8, False, "reflect", False),
    (16, 5, 11, False, "reflect", False),
    (1, 1, None, True, "reflect", False),
]


def _stft(library_module, signal, window, settings):
    n_fft, hop, win, center, pad_mode, normalized = settings
    return library_module.stft(
        signal, n_fft, hop_length=hop, win_length=win, window=window, center=center,
        pad_mode=pad_mode, normalized=normalized, return_complex=True,
    )  # fmt: skip


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_window", [True, False])
@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("settings", FUSED_SETTINGS, ids=str)
def test_stft_without_a_gradient_is_one_op_with_the_bits_of_the_differentiable_path(
    rng, monkeypatch, library, settings, batch, with_window, dtype
):
    calls = []
    forward = spectral.StftWithoutGrad.forward
    monkeypatch.setattr(
        spectral.StftWithoutGrad, "forward",
        staticmethod(lambda *args: calls.append(1) or forward(*args)),
    )  # fmt: skip
    signal = rng.standard_normal(batch + (29,)).astype(dtype)
    n_fft, _, win, *_ = settings
    window = rng.standard_normal(win or n_fft).astype(dtype) if with_window else None

    def wrapped(library_module, **options):
        w = None if window is None else library_module.tensor(window)
        return _stft(library_module, library_module.tensor(signal, **options), w, settings)

    fused = wrapped(lucid)
    assert calls == [1]
    differentiable = wrapped(lucid, requires_grad=True)
    assert calls == [1] and differentiable.grad_fn is not None
    assert fused.dtype == differentiable.dtype and fused.shape == differentiable.shape
    np.testing.assert_array_equal(fused.numpy(), differentiable.detach().numpy())
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    expected = wrapped(torch).numpy()
    np.testing.assert_allclose(fused.numpy(), expected, rtol=tolerance, atol=tolerance)


@requires_torch
@pytest.mark.parametrize(
    ("name", "shape", "arguments"),
    [("fft", (5, 12), {}), ("ifft", (5, 12), {"norm": "ortho"}), ("rfft", (4, 10), {"n": 12}),
     ("irfft", (4, 7), {}), ("hfft", (3, 6), {}), ("fft2", (4, 6, 5), {"norm": "forward"}),
     ("rfftn", (3, 4, 6), {}), ("irfftn", (3, 4, 4), {"s": (4, 6)})],
)  # fmt: skip
def test_each_library_gives_torchs_values_and_gradients(rng, library, name, shape, arguments):
    complex_input = name in ("ifft", "irfft", "hfft", "irfftn")
    array = rng.standard_normal(shape)
    if complex_input:
        array = array + 1j * rng.standard_normal(shape)
    results = []
    for module in (lucid, torch):
        x = module.tensor(array, requires_grad=True)
        y = getattr(module.fft, name)(x, **arguments)
        (grad,) = module.autograd.grad(y.abs().sum(), [x])
        results.append((y.detach().resolve_conj().numpy(), grad.resolve_conj().numpy()))
    (y, grad), (expected, expected_grad) = results
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-10)


def test_an_fft_that_overflows_is_a_birth_in_that_fft(library):
    x = lucid.full((4, 64), 3e38, requires_grad=True)
    sentinel.reset_sentinel()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        lucid.fft.rfft(x).abs().sum().backward()
    (event,) = [w.message.event for w in record if issubclass(w.category, NonFiniteWarning)]
    assert (event.op, event.phase, event.created) == ("rfft", "forward", True)
    assert event.mechanism in ("overflow", "invalid operation")


def test_an_stft_that_overflows_without_a_gradient_is_named_by_anomaly_mode(library):
    signal = lucid.full((1000,), 3e38)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's note that it is on
        with lucid.autograd.detect_anomaly(), pytest.raises(AnomalyError) as raised:
            lucid.stft(signal, 64, window=lucid.hann_window(64), return_complex=True)
    assert str(raised.value).startswith("Function 'stft' returned")
    assert "during the forward pass" in str(raised.value).splitlines()[0]
