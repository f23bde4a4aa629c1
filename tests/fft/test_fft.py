"""lucid.fft against PyTorch: values, dtypes and gradients of every transform for each norm,
odd and even sizes, cropping and padding, several dims; second derivatives; finite differences
on real and imaginary parts (no torch needed); errors, out= and the frequency helpers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

ONE_DIMENSIONAL = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_DIMENSIONAL = [
    "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
]  # fmt: skip
REAL_INPUT_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]
# sizes: the default, cropping, padding, an odd signal size along another dim
ONE_DIMENSIONAL_SIZES = [{}, {"n": 3}, {"n": 8}, {"n": 5, "dim": 0}]
N_DIMENSIONAL_SIZES = [{}, {"s": (3, 7)}, {"s": (5, 4), "dim": (0, 2)}, {"dim": (2, 0)}]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _array(rng, shape, dtype):
    array = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        array = array + 1j * rng.standard_normal(shape)
    return array.astype(dtype)


def _cases(dtypes):
    for name in ONE_DIMENSIONAL + N_DIMENSIONAL:
        sizes = ONE_DIMENSIONAL_SIZES if name in ONE_DIMENSIONAL else N_DIMENSIONAL_SIZES
        for dtype in dtypes:
            if name in REAL_INPUT_ONLY and np.dtype(dtype).kind == "c":
                continue
            for kwargs in sizes:
                yield pytest.param(
                    name, dtype, kwargs, id=f"{name}-{np.dtype(dtype).name}-{kwargs}"
                )


def _shape(name):
    return (5, 6, 4) if name in N_DIMENSIONAL else (5, 6)


def _numpy(tensor):
    if hasattr(tensor, "resolve_conj"):
        tensor = tensor.detach().resolve_conj()
    return tensor.detach().numpy()


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[1]


def _tolerance(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


# ------------------------------------------------------------------------ torch parity
@requires_torch
@pytest.mark.parametrize(("name", "dtype", "kwargs"), _cases(DTYPES))
def test_values_and_dtypes_match_torch(rng, name, dtype, kwargs):
    array = _array(rng, _shape(name), dtype)
    tolerance = _tolerance(dtype)
    for norm in NORMS:
        result = getattr(lucid.fft, name)(lucid.tensor(array), norm=norm, **kwargs)
        expected = getattr(torch.fft, name)(torch.tensor(array), norm=norm, **kwargs)
        assert _dtype_name(result.dtype) == _dtype_name(expected.dtype)
        np.testing.assert_allclose(_numpy(result), _numpy(expected), rtol=tolerance, atol=tolerance)


def _gradients(library, name, array, cotangent, norm, kwargs):
    x = library.tensor(array, requires_grad=True)
    y = getattr(library.fft, name)(x, norm=norm, **kwargs)
    (grad,) = library.autograd.grad(y, x, library.tensor(cotangent))
    return grad


@requires_torch
@pytest.mark.parametrize(("name", "dtype", "kwargs"), _cases([np.float64, np.complex128]))
def test_gradients_match_torch(rng, name, dtype, kwargs):
    array = _array(rng, _shape(name), dtype)
    for norm in NORMS:
        output = getattr(torch.fft, name)(torch.tensor(array), norm=norm, **kwargs)
        cotangent = _array(
            rng, tuple(output.shape), np.complex128 if output.is_complex() else np.float64
        )
        result = _gradients(lucid, name, array, cotangent, norm, kwargs)
        expected = _gradients(torch, name, array, cotangent, norm, kwargs)
        assert _dtype_name(result.dtype) == _dtype_name(expected.dtype)
        np.testing.assert_allclose(_numpy(result), _numpy(expected), rtol=1e-9, atol=1e-9)


def _names_and_dtypes(dtypes):
    return [
        (name, dtype)
        for name in ONE_DIMENSIONAL + N_DIMENSIONAL
        for dtype in dtypes
        if name not in REAL_INPUT_ONLY or np.dtype(dtype).kind != "c"
    ]


@requires_torch
@pytest.mark.parametrize(("name", "dtype"), _names_and_dtypes([np.complex64, np.float32]))
def test_single_precision_gradients_keep_their_dtype(rng, name, dtype):
    array = _array(rng, _shape(name), dtype)
    output = getattr(torch.fft, name)(torch.tensor(array))
    cotangent = _array(
        rng, tuple(output.shape), np.complex64 if output.is_complex() else np.float32
    )
    result = _gradients(lucid, name, array, cotangent, None, {})
    expected = _gradients(torch, name, array, cotangent, None, {})
    assert _dtype_name(result.dtype) == _dtype_name(expected.dtype)
    np.testing.assert_allclose(_numpy(result), _numpy(expected), rtol=1e-3, atol=1e-3)


def _second_derivative(library, name, array, direction, kwargs):
    """d/dx of <grad_x |f(x)|^2, direction>: a second derivative through the transform's
    backward and the backward of that backward."""
    x = library.tensor(array, requires_grad=True)
    y = getattr(library.fft, name)(x, norm="ortho", **kwargs)
    energy = library.real(y * y.conj()).sum() if y.is_complex() else (y * y).sum()
    (grad,) = library.autograd.grad(energy, x, create_graph=True)
    inner = library.real(grad * library.tensor(direction).conj()).sum()
    (second,) = library.autograd.grad(inner, x)
    return second


@requires_torch
@pytest.mark.parametrize(("name", "dtype"), _names_and_dtypes([np.float64, np.complex128]))
def test_second_derivatives_match_torch(rng, name, dtype):
    kwargs = {"n": 7} if name in ONE_DIMENSIONAL else {"s": (4, 5)}
    array = _array(rng, _shape(name), dtype)
    direction = _array(rng, _shape(name), dtype)
    result = _second_derivative(lucid, name, array, direction, kwargs)
    expected = _second_derivative(torch, name, array, direction, kwargs)
    np.testing.assert_allclose(_numpy(result), _numpy(expected), rtol=1e-9, atol=1e-9)


@requires_torch
def test_backward_of_the_backward_is_the_transform_again(rng):
    """The gradient is linear in the incoming gradient: its own gradient is the transform."""
    array = _array(rng, (6,), np.complex128)
    for library in (lucid, torch):
        x = library.tensor(array, requires_grad=True)
        y = library.fft.fft(x)
        cotangent = library.tensor(_array(np.random.default_rng(1), (6,), np.complex128))
        cotangent.requires_grad_(True)
        (grad,) = library.autograd.grad(y, x, cotangent, create_graph=True)
        (second,) = library.autograd.grad(
            grad, cotangent, library.ones(6, dtype=library.complex128)
        )
        if library is lucid:
            result = _numpy(second)
        else:
            np.testing.assert_allclose(result, _numpy(second), rtol=1e-12, atol=1e-12)


@requires_torch
@pytest.mark.parametrize(
    ("name", "input_dtype", "expected"),
    [("fft", np.float32, "FftR2CBackward0"), ("fft", np.complex64, "FftC2CBackward0"),
     ("irfft", np.complex64, "FftC2RBackward0"), ("rfft", np.float64, "FftR2CBackward0"),
     ("fftn", np.complex128, "FftC2CBackward0")],
)  # fmt: skip
def test_grad_fn_names_match_torch(name, input_dtype, expected):
    x = lucid.tensor(np.ones(4, input_dtype), requires_grad=True)
    assert getattr(lucid.fft, name)(x).grad_fn.name() == expected
    x = torch.tensor(np.ones(4, input_dtype), requires_grad=True)
    assert getattr(torch.fft, name)(x).grad_fn.name() == expected


# --------------------------------------------------------------- finite differences
def _finite_difference_gradient(function, array, cotangent, step=1e-6):
    """dL/dRe(x) + i dL/dIm(x) of L(x) = Re <f(x), cotangent>, by central differences."""

    def loss(values):
        output = function(lucid.tensor(values)).numpy()
        return float(np.real(np.sum(output * np.conj(cotangent))))

    gradient = np.zeros(array.shape, np.complex128 if array.dtype.kind == "c" else np.float64)
    parts = (1, 1j) if array.dtype.kind == "c" else (1,)
    for index in np.ndindex(array.shape):
        for part in parts:
            plus, minus = array.copy(), array.copy()
            plus[index] += step * part
            minus[index] -= step * part
            gradient[index] += part * (loss(plus) - loss(minus)) / (2 * step)
    return gradient


FINITE_DIFFERENCE_CASES = [
    ("fft", {}), ("ifft", {"n": 5}), ("rfft", {"n": 4}), ("irfft", {}), ("irfft", {"n": 5}),
    ("hfft", {"n": 7}), ("ihfft", {}), ("fft2", {"s": (2, 5)}), ("rfftn", {}),
    ("irfft2", {"s": (3, 5)}), ("hfftn", {"norm": "ortho"}), ("ihfft2", {"norm": "forward"}),
    ("fftn", {"dim": (1, 0), "norm": "forward"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "kwargs", "dtype"),
    [
        (name, kwargs, dtype)
        for name, kwargs in FINITE_DIFFERENCE_CASES
        for dtype in (np.float64, np.complex128)
        if name not in REAL_INPUT_ONLY or dtype is np.float64
    ],
)
def test_gradients_match_finite_differences_on_real_and_imaginary_parts(rng, name, kwargs, dtype):
    array = _array(rng, (3, 4), dtype)

    def function(x):
        return getattr(lucid.fft, name)(x, **kwargs)

    output = function(lucid.tensor(array))
    cotangent = _array(rng, tuple(output.shape), output.numpy().dtype)
    x = lucid.tensor(array, requires_grad=True)
    (grad,) = lucid.autograd.grad(function(x), x, lucid.tensor(cotangent))
    expected = _finite_difference_gradient(function, array, cotangent)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ identities
@pytest.mark.parametrize("n", [6, 7])
def test_inverse_transforms_undo_forward_ones(rng, n):
    x = lucid.tensor(_array(rng, (3, n), np.float64))
    for norm in NORMS:
        np.testing.assert_allclose(
            lucid.fft.irfft(lucid.fft.rfft(x, norm=norm), n=n, norm=norm).numpy(),
            x.numpy(),
            atol=1e-12,
        )
        np.testing.assert_allclose(
            lucid.fft.hfft(lucid.fft.ihfft(x, norm=norm), n=n, norm=norm).numpy(),
            x.numpy(),
            atol=1e-12,
        )
        np.testing.assert_allclose(
            lucid.fft.ifftn(lucid.fft.fftn(x, norm=norm), norm=norm).numpy(), x.numpy(), atol=1e-12
        )


def test_integer_input_promotes_to_the_default_float_dtype():
    assert lucid.fft.fft(lucid.arange(4)).dtype is lucid.complex64
    assert lucid.fft.irfft(lucid.arange(4)).dtype is lucid.float32
    lucid.set_default_dtype(lucid.float64)
    assert lucid.fft.fft(lucid.arange(4)).dtype is lucid.complex128
    assert lucid.fft.rfftfreq(4).dtype is lucid.float64


def test_half_precision_is_refused_as_by_torch_on_the_cpu():
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        lucid.fft.fft(lucid.ones(4, dtype=lucid.float16))


def test_fft_is_reachable_as_an_attribute_of_lucid():
    import lucid.fft as module

    assert lucid.fft is module
    assert lucid.fft.Tensor is lucid.Tensor
    assert set(module.__all__) >= {"fft", "hfftn", "ihfftn", "fftshift", "rfftfreq"}


# ------------------------------------------------------------------------ errors
def _error_cases(lib, x):
    fft = lib.fft
    return {
        "half": lambda: fft.fft(x.half()),
        "bfloat16": lambda: fft.rfft(x.bfloat16()),
        "rfft of complex": lambda: fft.rfft(x.to(lib.complex64)),
        "ihfft of complex": lambda: fft.ihfft(x.to(lib.complex64)),
        "rfftn of complex": lambda: fft.rfftn(x.to(lib.complex64)),
        "ihfft2 of complex": lambda: fft.ihfft2(x.to(lib.complex64)),
        "n zero": lambda: fft.fft(x, n=0),
        "n negative": lambda: fft.fft(x, n=-1),
        "irfft of one entry": lambda: fft.irfft(lib.ones(1, dtype=lib.complex64)),
        "hfft n zero": lambda: fft.hfft(x, n=0),
        "dim out of range": lambda: fft.fft(x, dim=2),
        "dim below range": lambda: fft.fft(x, dim=-3),
        "dim of a 0-d tensor": lambda: fft.fft(lib.tensor(1.0)),
        "bad norm": lambda: fft.fft(x, norm="bad"),
        "norm not str": lambda: fft.fft(x, norm=1),
        "n float": lambda: fft.fft(x, n=2.0),
        "n bool": lambda: fft.fft(x, n=True),
        "dim tuple in fft": lambda: fft.fft(x, dim=(0, 1)),
        "dim None in fft": lambda: fft.fft(x, dim=None),
        "input list": lambda: fft.fft([1.0, 2.0]),
        "input None in fft2": lambda: fft.fft2(None),
        "s shorter than dim": lambda: fft.fft2(x, s=(3,)),
        "dim shorter than s": lambda: fft.fft2(x, s=(3, 3), dim=(0,)),
        "repeated dims": lambda: fft.fftn(x, dim=(0, 0)),
        "s zero": lambda: fft.fftn(x, s=(0, 3)),
        "s -2": lambda: fft.fftn(x, s=(-2, 3)),
        "s too long": lambda: fft.fftn(x, s=(3, 3, 3)),
        "s float": lambda: fft.fft2(x, s=3.0),
        "s item float": lambda: fft.fft2(x, s=(3, 2.0)),
        "s first item float": lambda: fft.fftn(x, s=[3.0]),
        "dim float": lambda: fft.fftn(x, dim=1.0),
        "dim item float": lambda: fft.fftn(x, dim=(1, 2.0)),
        "rfftn of no dims": lambda: fft.rfftn(x, dim=()),
        "irfftn of no dims": lambda: fft.irfftn(x, dim=()),
        "hfftn of a 0-d tensor": lambda: fft.hfftn(lib.tensor(2.0)),
        "ihfftn of no dims": lambda: fft.ihfftn(x, dim=()),
        "fft2 of a vector": lambda: fft.fft2(lib.ones(5)),
        "irfft2 of one column": lambda: fft.irfft2(lib.ones(3, 1, dtype=lib.complex64)),
        "empty signal": lambda: fft.fft(lib.ones(0)),
        "fftshift dim out of range": lambda: fft.fftshift(x, dim=5),
        "fftshift of a 0-d tensor": lambda: fft.fftshift(lib.tensor(1.0)),
        "fftshift dim of a 0-d tensor": lambda: fft.fftshift(lib.tensor(1.0), dim=0),
        "fftshift dim float": lambda: fft.fftshift(x, dim=1.0),
        "fftshift dim item float": lambda: fft.fftshift(x, dim=(0, 1.0)),
        "fftshift of a list": lambda: fft.fftshift([1]),
        "fftshift of no dims": lambda: fft.fftshift(x, dim=()),
        "fftfreq negative": lambda: fft.fftfreq(-1),
        "fftfreq integer dtype": lambda: fft.fftfreq(5, dtype=lib.int64),
        "fftfreq complex dtype": lambda: fft.fftfreq(5, dtype=lib.complex64),
        "fftfreq n float": lambda: fft.fftfreq(5.0),
        "fftfreq d str": lambda: fft.fftfreq(4, d="a"),
        "fftfreq d None": lambda: fft.fftfreq(4, d=None),
        "fftfreq dtype and out differ": lambda: fft.fftfreq(4, dtype=lib.float64, out=lib.empty(4)),
        "fftfreq out integer": lambda: fft.fftfreq(4, out=lib.empty(4, dtype=lib.int64)),
        "rfftfreq integer dtype": lambda: fft.rfftfreq(4, dtype=lib.int32),
        "out real for fft": lambda: fft.fft(x, out=lib.empty(3)),
        "out complex for irfft": lambda: fft.irfft(x, out=lib.empty(3, dtype=lib.complex64)),
        "out real for ifft2": lambda: fft.ifft2(x, out=lib.empty(3)),
        "out real for rfftn": lambda: fft.rfftn(x, out=lib.empty(3)),
        "out complex for hfftn": lambda: fft.hfftn(x, out=lib.empty(3, dtype=lib.complex64)),
        "out with grad, r2c": lambda: fft.fft(
            x.requires_grad_(), out=lib.empty(0, dtype=lib.complex64)
        ),
        "out with grad, c2c": lambda: fft.fft(
            x.to(lib.complex64).requires_grad_(), out=lib.empty(0, dtype=lib.complex64)
        ),
        "out with grad, c2r": lambda: fft.irfft(x.requires_grad_(), out=lib.empty(0)),
        "out with grad, ihfft2": lambda: fft.ihfft2(
            x.requires_grad_(), out=lib.empty(0, dtype=lib.complex64)
        ),
        "out with grad, hfftn": lambda: fft.hfftn(x.requires_grad_(), out=lib.empty(0)),
        "out requiring grad": lambda: fft.fft(
            x, out=lib.empty(4, 5, dtype=lib.complex64, requires_grad=True)
        ),
    }


ERROR_CASES = list(_error_cases(lucid, lucid.ones(4, 5)))


@requires_torch
@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    array = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    with pytest.raises(Exception) as expected:
        _error_cases(torch, torch.tensor(array))[case]()
    with pytest.raises(Exception) as raised:
        _error_cases(lucid, lucid.tensor(array))[case]()
    assert type(raised.value).__name__ == type(expected.value).__name__
    assert str(raised.value).replace("lucid", "torch") == str(expected.value)


# ------------------------------------------------------------------------- out=
@requires_torch
@pytest.mark.parametrize(
    ("name", "out_dtype"),
    [("fft", "complex128"), ("ifft", "complex64"), ("irfft", "float64"), ("rfft2", "complex64"),
     ("hfftn", "float32"), ("ihfftn", "complex128"), ("ihfft", "complex64")],
)  # fmt: skip
def test_out_receives_the_result_in_its_dtype_as_in_torch(rng, name, out_dtype):
    array = _array(rng, (4, 6), np.float32)
    out = lucid.empty(0, dtype=getattr(lucid, out_dtype))
    result = getattr(lucid.fft, name)(lucid.tensor(array), out=out)
    expected = getattr(torch.fft, name)(
        torch.tensor(array), out=torch.empty(0, dtype=getattr(torch, out_dtype))
    )
    assert result is out
    assert out.dtype is getattr(lucid, out_dtype) and tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(_numpy(out), _numpy(expected), rtol=1e-4, atol=1e-4)


def test_out_of_another_shape_is_resized_with_torchs_warning():
    out = lucid.empty(3, dtype=lucid.complex64)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        lucid.fft.fft(lucid.ones(4, 5), out=out)
    assert tuple(out.shape) == (4, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.fft.fft(lucid.ones(4, 5), out=lucid.empty(0, dtype=lucid.complex64))


def test_out_under_no_grad_takes_an_input_requiring_grad():
    x = lucid.ones(4, requires_grad=True)
    with lucid.no_grad():
        out = lucid.fft.fft(x, out=lucid.empty(0, dtype=lucid.complex64))
    np.testing.assert_allclose(out.numpy(), [4, 0, 0, 0])


# ------------------------------------------------------------- shifts and frequencies
@requires_torch
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), [-1], (1, 1)])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_match_torch_with_gradients(rng, name, dim):
    array = _array(rng, (5, 4), np.complex128)
    cotangent = _array(rng, (5, 4), np.complex128)
    x = lucid.tensor(array, requires_grad=True)
    y = getattr(lucid.fft, name)(x, dim=dim)
    x_torch = torch.tensor(array, requires_grad=True)
    y_torch = getattr(torch.fft, name)(x_torch, dim=dim)
    np.testing.assert_array_equal(y.detach().numpy(), _numpy(y_torch))
    (grad,) = lucid.autograd.grad(y, x, lucid.tensor(cotangent))
    (expected,) = torch.autograd.grad(y_torch, x_torch, torch.tensor(cotangent))
    np.testing.assert_array_equal(grad.numpy(), _numpy(expected))


@requires_torch
@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.3, 2, 0])
def test_frequencies_match_torch(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        options = {} if dtype is None else {"dtype": getattr(lucid, dtype)}
        with np.errstate(all="ignore"):
            result = getattr(lucid.fft, name)(n, d, **options)
        options = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        expected = getattr(torch.fft, name)(n, d, **options)
        assert _dtype_name(result.dtype) == _dtype_name(expected.dtype)
        np.testing.assert_array_equal(
            result.to(lucid.float64).numpy(), expected.to(torch.float64).numpy()
        )


def test_frequencies_take_requires_grad_and_a_tensor_spacing():
    result = lucid.fft.fftfreq(4, d=lucid.tensor(0.5), requires_grad=True)
    assert result.requires_grad and result.is_leaf
    np.testing.assert_allclose(result.detach().numpy(), [0.0, 0.5, -1.0, -0.5])


@requires_torch
@pytest.mark.parametrize("name", [n for n in lucid.fft.__all__ if n != "Tensor"])
def test_an_unknown_keyword_names_the_function_as_torch(name):
    messages = []
    for library in (lucid, torch):
        argument = 4 if name.endswith("freq") else library.ones(4)
        with pytest.raises(TypeError) as raised:
            getattr(library.fft, name)(argument, bogus=1)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
