"""stft and istft against PyTorch: values, dtypes and gradients (input and window) across
centring, pad modes, window lengths, hops, normalization and sidedness; istft(stft(x)) == x;
the errors and warnings; the Tensor methods."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch


def _array(rng, shape, dtype):
    array = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        array = array + 1j * rng.standard_normal(shape)
    return array.astype(dtype)


def _numpy(tensor):
    if hasattr(tensor, "resolve_conj"):
        tensor = tensor.detach().resolve_conj()
    return tensor.detach().numpy()


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[1]


# (n_fft, hop_length, win_length, center, pad_mode, normalized, onesided)
SETTINGS = [
    (8, None, None, True, "reflect", False, None),
    (8, 3, 5, True, "constant", True, None),
    (7, 2, None, True, "replicate", False, False),
    (8, 4, 8, False, "reflect", False, True),
    (9, 3, 6, True, "circular", True, False),
    (16, 5, 11, False, "reflect", False, None),
]


def _stft_case(library, signal, window, settings, return_complex=True, **extra):
    n_fft, hop, win, center, pad_mode, normalized, onesided = settings
    return library.stft(
        signal, n_fft, hop_length=hop, win_length=win, window=window, center=center,
        pad_mode=pad_mode, normalized=normalized, onesided=onesided,
        return_complex=return_complex, **extra,
    )  # fmt: skip


def _window(rng, settings, dtype):
    n_fft, _, win, *_ = settings
    return _array(rng, (win or n_fft,), dtype) if dtype is not None else None


@requires_torch
@pytest.mark.parametrize("return_complex", [True, False])
@pytest.mark.parametrize(
    ("signal_dtype", "window_dtype"),
    [(np.float64, np.float64), (np.float32, None), (np.complex128, np.float64),
     (np.float64, np.complex128), (np.float32, np.float64)],
)  # fmt: skip
@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_stft_values_dtypes_and_gradients_match_torch(rng, settings, batch, signal_dtype,
                                                     window_dtype, return_complex):  # fmt: skip
    if settings[6] is True and (
        np.dtype(signal_dtype).kind == "c" or window_dtype is np.complex128
    ):
        pytest.skip("a complex stft has no one-sided form")
    signal = _array(rng, batch + (29,), signal_dtype)
    window = _window(rng, settings, window_dtype)
    results = []
    for library in (lucid, torch):
        x = library.tensor(signal, requires_grad=True)
        w = None if window is None else library.tensor(window, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = _stft_case(library, x, w, settings, return_complex)
        cotangent = library.tensor(
            _array(np.random.default_rng(1), tuple(y.shape), _numpy(y).dtype)
        )
        grads = library.autograd.grad(y, [x] if w is None else [x, w], cotangent)
        results.append((y, grads))
    (y, grads), (expected, expected_grads) = results
    tolerance = 1e-4 if np.float32 in (signal_dtype, window_dtype) else 1e-10
    assert _dtype_name(y.dtype) == _dtype_name(expected.dtype)
    np.testing.assert_allclose(_numpy(y), _numpy(expected), rtol=tolerance, atol=tolerance)
    for grad, expected_grad in zip(grads, expected_grads):
        assert _dtype_name(grad.dtype) == _dtype_name(expected_grad.dtype)
        np.testing.assert_allclose(
            _numpy(grad), _numpy(expected_grad), rtol=tolerance, atol=tolerance
        )


@requires_torch
@pytest.mark.parametrize("align_to_window", [None, False, True])
@pytest.mark.parametrize(("n_fft", "hop", "win"), [(8, 3, 4), (8, 2, 8), (9, 4, 6)])
def test_stft_align_to_window_matches_torch(rng, n_fft, hop, win, align_to_window):
    signal = _array(rng, (2, 23), np.float64)
    window = _array(rng, (win,), np.float64)
    results = []
    for library in (lucid, torch):
        x = library.tensor(signal, requires_grad=True)
        y = library.stft(x, n_fft, hop, win, library.tensor(window), center=False,
                         return_complex=True, align_to_window=align_to_window)  # fmt: skip
        (grad,) = library.autograd.grad(library.real(y * y.conj()).sum(), x)
        results.append((y, grad))
    (y, grad), (expected, expected_grad) = results
    np.testing.assert_allclose(_numpy(y), _numpy(expected), atol=1e-10)
    np.testing.assert_allclose(_numpy(grad), _numpy(expected_grad), atol=1e-10)


@requires_torch
@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_stft_second_derivatives_match_torch(rng, settings):
    signal = _array(rng, (25,), np.float64)
    window = _window(rng, settings, np.float64)
    direction = _array(rng, (25,), np.float64)
    results = []
    for library in (lucid, torch):
        x = library.tensor(signal, requires_grad=True)
        y = _stft_case(library, x, library.tensor(window), settings)
        energy = library.real(y * y.conj()).sum()
        (grad,) = library.autograd.grad(energy, x, create_graph=True)
        (second,) = library.autograd.grad((grad * library.tensor(direction)).sum(), x)
        results.append(second)
    np.testing.assert_allclose(_numpy(results[0]), _numpy(results[1]), atol=1e-9)


# --------------------------------------------------------------------------- istft
ISTFT_SETTINGS = [
    # (n_fft, hop, win, center, normalized, onesided, length, return_complex)
    (8, None, None, True, False, None, None, False),
    (8, 2, 6, True, True, True, 16, False),
    (7, 2, None, True, False, False, None, False),
    (8, 3, 8, True, False, False, 40, True),
    (9, 3, 7, True, True, None, 20, False),
    (16, 4, 12, True, False, None, None, False),
]


def _istft_case(library, spectrum, window, settings):
    n_fft, hop, win, center, normalized, onesided, length, return_complex = settings
    return library.istft(
        spectrum, n_fft, hop_length=hop, win_length=win, window=window, center=center,
        normalized=normalized, onesided=onesided, length=length, return_complex=return_complex,
    )  # fmt: skip


@requires_torch
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("settings", ISTFT_SETTINGS, ids=str)
def test_istft_values_dtypes_and_gradients_match_torch(rng, settings, batch, dtype):
    n_fft, hop, win, *_ = settings
    hop = hop or n_fft // 4
    window = 0.5 + rng.random(win or n_fft)  # no zeros: every sample is covered
    frequencies = n_fft if settings[5] is False or settings[7] else n_fft // 2 + 1
    spectrum = _array(rng, batch + (frequencies, 9), dtype)
    results = []
    for library in (lucid, torch):
        z = library.tensor(spectrum, requires_grad=True)
        w = library.tensor(window.astype(np.float32 if dtype == np.complex64 else np.float64),
                           requires_grad=True)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = _istft_case(library, z, w, settings)
        cotangent = library.tensor(
            _array(np.random.default_rng(1), tuple(y.shape), _numpy(y).dtype)
        )
        results.append((y, library.autograd.grad(y, [z, w], cotangent)))
    (y, grads), (expected, expected_grads) = results
    tolerance = 1e-4 if dtype == np.complex64 else 1e-10
    assert _dtype_name(y.dtype) == _dtype_name(expected.dtype)
    np.testing.assert_allclose(_numpy(y), _numpy(expected), rtol=tolerance, atol=tolerance)
    for grad, expected_grad in zip(grads, expected_grads):
        assert _dtype_name(grad.dtype) == _dtype_name(expected_grad.dtype)
        np.testing.assert_allclose(
            _numpy(grad), _numpy(expected_grad), rtol=tolerance, atol=tolerance
        )


@pytest.mark.parametrize(
    ("n_fft", "hop", "window"),
    [(16, 4, "hann"), (15, 5, "hamming"), (8, 2, "ones"), (32, 8, "blackman")],
)
@pytest.mark.parametrize("normalized", [False, True])
def test_istft_inverts_stft(rng, n_fft, hop, window, normalized):
    signal = lucid.tensor(_array(rng, (2, 101), np.float64))
    if window == "ones":
        window_tensor = lucid.ones(n_fft, dtype=lucid.float64)
    else:
        window_tensor = getattr(lucid, f"{window}_window")(n_fft, dtype=lucid.float64)
    spectrum = lucid.stft(signal, n_fft, hop, window=window_tensor, normalized=normalized,
                          return_complex=True)  # fmt: skip
    restored = lucid.istft(spectrum, n_fft, hop, window=window_tensor, normalized=normalized,
                           length=101)  # fmt: skip
    np.testing.assert_allclose(restored.numpy(), signal.numpy(), atol=1e-10)


def test_istft_inverts_a_complex_stft(rng):
    signal = lucid.tensor(_array(rng, (64,), np.complex128))
    window = lucid.hann_window(16, dtype=lucid.float64)
    spectrum = lucid.stft(signal, 16, 4, window=window)
    assert spectrum.shape == (16, 17)
    restored = lucid.istft(spectrum, 16, 4, window=window, length=64, return_complex=True)
    np.testing.assert_allclose(restored.numpy(), signal.numpy(), atol=1e-10)


def test_tensor_methods_are_the_functions(rng):
    signal = lucid.tensor(_array(rng, (40,), np.float64))
    window = lucid.hann_window(8, dtype=lucid.float64)
    spectrum = signal.stft(8, window=window, return_complex=True)
    np.testing.assert_array_equal(
        spectrum.numpy(), lucid.stft(signal, 8, window=window, return_complex=True).numpy()
    )
    np.testing.assert_allclose(spectrum.istft(8, window=window, length=40).numpy(),
                               signal.numpy(), atol=1e-12)  # fmt: skip


def test_stft_without_return_complex_asks_for_it_and_false_is_deprecated():
    signal = lucid.randn(20)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        signal.stft(8, window=lucid.ones(8))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        parts = signal.stft(8, window=lucid.ones(8), return_complex=False)
    assert parts.shape == (5, 11, 2) and parts.dtype is lucid.float32


def test_a_missing_window_is_warned_about_as_in_torch():
    signal = lucid.randn(20)
    with pytest.warns(UserWarning, match="A window was not provided"):
        spectrum = lucid.stft(signal, 8, return_complex=True)
    with pytest.warns(UserWarning, match="A window was not provided"):
        lucid.istft(spectrum, 8)


# --------------------------------------------------------------------------- errors
def _error_cases(lib, x):
    window = lib.hann_window(8)

    def spectrum(**options):
        return lib.stft(x, 8, window=window, return_complex=True, **options)

    return {
        "stft integer signal": lambda: lib.stft(lib.arange(20), 8, return_complex=True),
        "stft of a list": lambda: lib.stft([1.0] * 20, 8, return_complex=True),
        "stft of None": lambda: lib.stft(None, 8, return_complex=True),
        "stft 3-d signal": lambda: lib.stft(lib.ones(2, 2, 20), 8, return_complex=True),
        "stft 0-d signal": lambda: lib.stft(lib.tensor(1.0), 8, return_complex=True),
        "stft n_fft too big": lambda: lib.stft(x, 64, return_complex=True, center=False),
        "stft n_fft too big, short window": lambda: lib.stft(
            x, 64, win_length=4, return_complex=True, center=False
        ),
        "stft reflect pad too big": lambda: lib.stft(x, 64, return_complex=True),
        "stft n_fft zero": lambda: lib.stft(x, 0, return_complex=True, center=False),
        "stft complex n_fft zero": lambda: lib.stft(x.to(lib.complex64), 0, center=False),
        "stft hop zero": lambda: lib.stft(x, 8, hop_length=0, return_complex=True),
        "stft hop negative": lambda: lib.stft(
            x, 8, return_complex=True, normalized=True, center=False, hop_length=-1
        ),
        "stft win too long": lambda: lib.stft(x, 8, win_length=9, return_complex=True),
        "stft win zero": lambda: lib.stft(x, 8, win_length=0, return_complex=True),
        "stft window size": lambda: lib.stft(x, 8, window=lib.ones(7), return_complex=True),
        "stft window 2-d": lambda: lib.stft(x, 8, window=lib.ones(8, 1), return_complex=True),
        "stft complex window size": lambda: lib.stft(
            x, 8, window=lib.ones(3, dtype=lib.complex128), return_complex=True
        ),
        "stft described in full": lambda: lib.stft(
            x.double(),
            8,
            hop_length=0,
            window=lib.ones(8, dtype=lib.float64),
            return_complex=True,
            onesided=True,
            align_to_window=False,
            center=False,
        ),
        "stft complex one-sided": lambda: lib.stft(x.to(lib.complex64), 8, onesided=True),
        "stft align when centred": lambda: lib.stft(
            x, 8, return_complex=True, align_to_window=True
        ),
        "stft pad mode": lambda: lib.stft(x, 8, return_complex=True, pad_mode="bad"),
        "stft no return_complex": lambda: lib.stft(x, 8),
        "stft half": lambda: lib.stft(x.half(), 8, window=window.half(), return_complex=True),
        "stft bfloat16": lambda: lib.stft(x.bfloat16(), 8, return_complex=True),
        "stft n_fft float": lambda: lib.stft(x, 8.0, return_complex=True),
        "stft window list": lambda: lib.stft(x, 8, window=[1.0] * 8, return_complex=True),
        "istft real input": lambda: lib.istft(lib.view_as_real(spectrum()), 8, window=window),
        "istft one-sided complex output": lambda: lib.istft(
            spectrum(), 8, window=window, return_complex=True
        ),
        "istft empty": lambda: lib.istft(lib.zeros(5, 0, dtype=lib.complex64), 8, window=window),
        "istft empty described in full": lambda: lib.istft(
            lib.zeros(5, 0, dtype=lib.complex128),
            8,
            window=lib.ones(8, dtype=lib.complex64),
            onesided=False,
            length=3,
            return_complex=True,
        ),
        "istft 1-d": lambda: lib.istft(lib.zeros(5, dtype=lib.complex64), 8, window=window),
        "istft 0-d": lambda: lib.istft(lib.zeros((), dtype=lib.complex64), 8, window=window),
        "istft 4-d": lambda: lib.istft(
            lib.zeros(2, 2, 5, 3, dtype=lib.complex64), 8, window=window
        ),
        "istft frequencies, one-sided": lambda: lib.istft(
            lib.zeros(6, 3, dtype=lib.complex64), 8, window=window, onesided=True
        ),
        "istft frequencies, two-sided": lambda: lib.istft(
            lib.zeros(6, 3, dtype=lib.complex64), 8, window=window, onesided=False
        ),
        "istft hop longer than window": lambda: lib.istft(
            spectrum(), 8, hop_length=9, window=window
        ),
        "istft win too long": lambda: lib.istft(spectrum(), 8, win_length=9),
        "istft window shape": lambda: lib.istft(spectrum(), 8, window=lib.ones(7)),
        "istft zero window": lambda: lib.istft(spectrum(), 8, window=lib.zeros(8)),
        "istft uncentred hann": lambda: lib.istft(
            spectrum(center=False), 8, window=window, center=False
        ),
        "istft complex window, real output": lambda: lib.istft(
            spectrum(), 8, window=window.to(lib.complex64)
        ),
    }


ERROR_CASES = list(_error_cases(lucid, lucid.ones(20)))


@requires_torch
@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    array = np.random.default_rng(0).standard_normal(20).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            _error_cases(torch, torch.tensor(array))[case]()
        with pytest.raises(Exception) as raised:
            _error_cases(lucid, lucid.tensor(array))[case]()
    assert type(raised.value).__name__ == type(expected.value).__name__
    assert str(raised.value).replace("lucid", "torch") == str(expected.value)


@requires_torch
def test_istft_pads_a_longer_length_with_zeros_and_torchs_warning(rng):
    signal = _array(rng, (20,), np.float32)
    results = []
    for library in (lucid, torch):
        window = library.hann_window(8)
        spectrum = library.stft(library.tensor(signal), 8, window=window, return_complex=True)
        if library is lucid:  # torch warns once a process
            with pytest.warns(UserWarning, match="The length of signal is shorter"):
                results.append(library.istft(spectrum, 8, window=window, length=30))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(library.istft(spectrum, 8, window=window, length=30))
    np.testing.assert_allclose(_numpy(results[0]), _numpy(results[1]), atol=1e-5)
