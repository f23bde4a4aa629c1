"""Complex tensors: the dtypes, promotion, printing, the views of their parts, and the engine's
rules for complex gradients (PyTorch's convention: the conjugate Wirtinger derivative).

The op catalogue's complex columns check every op against torch (tests/ops/test_op_catalogue.py);
these tests name the rules underneath.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

C64, C128 = lucid.complex64, lucid.complex128
ALL_DTYPES = [
    lucid.bool, lucid.uint8, lucid.int8, lucid.int16, lucid.int32, lucid.int64, lucid.float16,
    lucid.bfloat16, lucid.float32, lucid.float64, C64, C128,
]  # fmt: skip


def _complex(values, dtype=C128, requires_grad=False) -> lucid.Tensor:
    return lucid.tensor(np.asarray(values, np.complex128), dtype=dtype, requires_grad=requires_grad)


def _random(shape, seed=0, dtype=C128, requires_grad=False) -> lucid.Tensor:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    return _complex(values, dtype, requires_grad)


# ------------------------------------------------------------------------ the dtypes
def test_complex_dtypes_have_pytorchs_attributes():
    assert lucid.cfloat is C64 and lucid.cdouble is C128
    for dtype, parts, size in ((C64, lucid.float32, 8), (C128, lucid.float64, 16)):
        assert dtype.is_complex and not dtype.is_floating_point and dtype.is_signed
        assert dtype.itemsize == size
        assert dtype.to_real() is parts and parts.to_complex() is dtype
        assert dtype.to_complex() is dtype
        assert lucid.finfo(dtype) == lucid.finfo(parts)
    assert not lucid.float32.is_complex


@requires_torch
@pytest.mark.parametrize("first", ALL_DTYPES, ids=str)
def test_promote_types_matches_torch_with_complex(first):
    for second in (C64, C128):
        expected = torch.promote_types(getattr(torch, first.name), getattr(torch, second.name))
        assert lucid.promote_types(first, second).name == str(expected).split(".")[1]
        assert lucid.promote_types(second, first).name == str(expected).split(".")[1]


@requires_torch
def test_result_type_of_complex_scalars_and_zero_dim_tensors_matches_torch():
    cases = [  # (dimensioned tensor, other operand), in dtype names
        ("float32", 1j),
        ("float64", 1j),
        ("int64", 2j),
        ("float32", ("complex128", ())),
        ("float64", ("complex64", ())),
        ("complex64", ("float64", ())),
        ("complex64", ("float64", (2,))),
        ("int32", ("complex128", ())),
    ]
    for first, other in cases:
        results = []
        for lib in (lucid, torch):
            operand = other
            if isinstance(other, tuple):
                operand = lib.ones(other[1], dtype=getattr(lib, other[0]))
            results.append(str((lib.ones(2, dtype=getattr(lib, first)) * operand).dtype))
        assert results[0].split(".")[1] == results[1].split(".")[1], results


def test_complex_python_data_infers_the_complex_dtype_of_the_default_float():
    assert lucid.tensor([1 + 2j, 3]).dtype is C64
    assert lucid.tensor(np.array([1j], np.complex128)).dtype is C128
    assert lucid.from_numpy(np.zeros(2, np.complex64)).dtype is C64
    previous = lucid.get_default_dtype()
    lucid.set_default_dtype(lucid.float64)
    try:
        assert lucid.tensor([1j]).dtype is C128
    finally:
        lucid.set_default_dtype(previous)
    with pytest.raises(TypeError, match="numpy.clongdouble. The only supported types are"):
        lucid.from_numpy(np.zeros(2, np.clongdouble))


@requires_torch
def test_complex_tensors_print_as_torch_prints_them():
    cases = [
        ([1 + 2j, -3.5 - 4j, 0.1j], None),
        ([1e10 + 2j, -3.5 - 4j], None),
        ([1 + 2j], "complex128"),
        (1 + 2j, None),
        ([complex(np.nan, 1), complex(np.inf, -1)], None),
        ([[1 + 1j, 2 - 2j], [3e-5 + 1j, -0.0 - 0.0j]], None),
        ([1e-5j, 1j], None),
        ([], "complex64"),
        ([[1j] * 20] * 3, None),
    ]
    for data, dtype in cases:
        ours = lucid.tensor(data, dtype=None if dtype is None else getattr(lucid, dtype))
        theirs = torch.tensor(data, dtype=None if dtype is None else getattr(torch, dtype))
        assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    ones = lucid.ones(2000).to(C64) * (1 + 1j)
    assert repr(ones) == repr(torch.ones(2000, dtype=torch.complex64) * (1 + 1j)).replace(
        "torch.", "lucid."
    )


def test_complex_leaves_can_require_grad():
    z = _complex([1j], requires_grad=True)
    assert z.requires_grad and z.is_leaf and z.is_complex()


# ---------------------------------------------------------------- parts and views
def test_real_and_imag_are_writable_views():
    z = _complex([1 + 2j, 3 - 4j])
    z.real.fill_(5.0)
    z.imag[1] = 7.0
    np.testing.assert_array_equal(z.numpy(), [5 + 2j, 5 + 7j])
    assert z.real.dtype is lucid.float64 and z.real.stride() == (2,)
    z.real = lucid.tensor([0.0, 1.0], dtype=lucid.float64)
    np.testing.assert_array_equal(z.numpy(), [2j, 1 + 7j])


def test_view_as_real_and_view_as_complex_share_storage():
    z = _complex([1 + 2j, 3 - 4j], dtype=C64)
    parts = lucid.view_as_real(z)
    assert parts.shape == (2, 2) and parts.dtype is lucid.float32
    parts[0, 1] = 9.0
    assert z[0].item() == 1 + 9j
    pairs = lucid.zeros(3, 2, dtype=lucid.float64)
    view = lucid.view_as_complex(pairs)
    assert view.dtype is C128 and view.shape == (3,)
    view.imag.fill_(2.0)
    np.testing.assert_array_equal(pairs[:, 1].numpy(), [2.0, 2.0, 2.0])
    # a strided view of pairs keeps its strides
    every_other = lucid.view_as_complex(lucid.zeros(4, 2)[::2])
    assert every_other.shape == (2,) and every_other.stride() == (2,)


@requires_torch
def test_views_of_parts_raise_torchs_errors():
    cases = [
        lambda lib: lib.view_as_complex(lib.zeros(3, 3)),
        lambda lib: lib.view_as_complex(lib.zeros(2, 3).t()),
        lambda lib: lib.view_as_complex(lib.zeros(3, 2, dtype=lib.int32)),
        lambda lib: lib.view_as_complex(lib.zeros(7)[1:5].view(2, 2)),
        lambda lib: lib.view_as_complex(lib.zeros(2, 3)[:, :2]),
        lambda lib: lib.view_as_real(lib.zeros(3)),
        lambda lib: lib.zeros(2).imag,
        lambda lib: lib.complex(lib.zeros(2), lib.zeros(2, dtype=lib.float64)),
        lambda lib: lib.complex(lib.zeros(2, dtype=lib.int32), lib.zeros(2, dtype=lib.int32)),
        lambda lib: lib.polar(lib.zeros(2), lib.zeros(2, dtype=lib.float64)),
    ]
    for case in cases:
        with pytest.raises(Exception) as expected:  # noqa: PT011  (compared below)
            case(torch)
        with pytest.raises(type(expected.value)) as raised:
            case(lucid)
        assert str(raised.value) == str(expected.value).replace("torch", "lucid")


def test_conj_is_computed_eagerly():
    z = _complex([1 + 2j])
    conjugate = z.conj()
    assert conjugate.item() == 1 - 2j
    assert not conjugate.is_conj() and conjugate.resolve_conj() is conjugate
    real = lucid.ones(2)
    assert real.conj() is real and real.resolve_conj() is real
    z.conj_physical_()
    assert z.item() == 1 - 2j


def test_conjugate_transposes_conjugate():
    m = _random((2, 3))
    np.testing.assert_array_equal(m.mH.numpy(), m.numpy().conj().swapaxes(-1, -2))
    np.testing.assert_array_equal(m.H.numpy(), m.numpy().conj().T)


# ------------------------------------------------------------------ engine rules
@requires_torch
def test_holomorphic_backward_is_the_real_formula_conjugated():
    z, w = _random((3,), 1, requires_grad=True), _random((3,), 2, requires_grad=True)
    seed = _random((3,), 3)
    (z * w / (z + 2)).exp().backward(seed)
    zt = torch.tensor(z.detach().numpy(), requires_grad=True)
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    (zt * wt / (zt + 2)).exp().backward(torch.tensor(seed.numpy()))
    np.testing.assert_allclose(z.grad.numpy(), zt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12)


def test_a_real_input_gets_the_real_part_of_a_complex_gradient():
    x = lucid.tensor([1.0, -2.0], dtype=lucid.float64, requires_grad=True)
    z = _complex([1 + 2j, 3 - 1j])
    (x * z).real.sum().backward()
    assert x.grad.dtype is lucid.float64
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 3.0])


def test_backward_of_a_complex_scalar_raises_torchs_error():
    z = _complex([1 + 1j], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"grad can be implicitly created only for real scalar outputs but got "
        r"lucid.complex128",
    ):
        z.sum().backward()


def test_a_builtin_op_without_complex_kernel_refuses_with_torchs_error():
    with pytest.raises(NotImplementedError, match="floor is not supported for complex inputs"):
        _complex([1.5j]).floor()


def test_a_users_function_is_trusted_with_complex_inputs():
    class Twice(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            return z * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    z = _complex([1j], requires_grad=True)
    Twice.apply(z).real.sum().backward()
    assert z.grad.item() == 2


def test_a_complex_tensor_made_from_real_ones_is_checked_by_the_next_op():
    # in a fresh interpreter, where no complex tensor existed before
    code = (
        "import lucid\n"
        "z = lucid.complex(lucid.ones(2), lucid.ones(2))\n"
        "try:\n"
        "    z.floor()\n"
        "except NotImplementedError as error:\n"
        "    print('refused:', error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.startswith("refused:")


# -------------------------------------------------------------------- gradcheck
def test_gradcheck_checks_complex_rules_in_both_modes():
    z, w = _random((3,), 4, requires_grad=True), _random((3,), 5, requires_grad=True)
    for fast_mode in (False, True):
        assert lucid.autograd.gradcheck(lambda a, b: a * b.conj(), (z, w), fast_mode=fast_mode)
        assert lucid.autograd.gradgradcheck(lambda a, b: a * b, (z, w), fast_mode=fast_mode)
        assert lucid.autograd.gradcheck(lambda a: lucid.view_as_real(a), (z,), fast_mode=fast_mode)


def test_gradcheck_rejects_a_rule_without_the_conjugate():
    class SquareWithoutConjugate(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad_output):
            (z,) = ctx.saved_tensors
            return grad_output * 2 * z  # PyTorch's convention needs conj(2 z)

    z = _random((2,), 6, requires_grad=True)
    for fast_mode in (False, True):
        with pytest.raises(
            lucid.autograd.GradcheckError,
            match="While considering the real part of complex outputs only, Jacobian mismatch",
        ):
            lucid.autograd.gradcheck(SquareWithoutConjugate.apply, (z,), fast_mode=fast_mode)


def test_python_numbers_from_complex_tensors_follow_torch():
    z = _complex(1 + 2j)
    assert complex(z) == 1 + 2j and z.item() == 1 + 2j
    assert float(_complex(1.5 + 0j)) == 1.5 and int(_complex(2.7 + 0j)) == 2
    with pytest.raises(RuntimeError, match="value cannot be converted to type double without"):
        float(z)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without"):
        int(z)
    assert z.is_signed() and z.type() == "lucid.ComplexDoubleTensor"


@requires_torch
def test_autocast_runs_the_ffts_and_eig_in_float32_as_torch():
    rng = np.random.default_rng(7)
    values = rng.normal(size=(8, 8)).astype(np.float32)
    cases = {
        "fft": lambda lib, x: lib.fft.fft(x),
        "irfft": lambda lib, x: lib.fft.irfft(x),
        "rfftn": lambda lib, x: lib.fft.rfftn(x),
        "fftshift": lambda lib, x: lib.fft.fftshift(x),
        "eigvals": lambda lib, x: lib.linalg.eigvals(x),
        "polar": lambda lib, x: lib.polar(x, x),
        "stft": lambda lib, x: lib.stft(
            x.reshape(-1), 16, window=lib.ones(16), return_complex=True
        ),
    }
    for name, case in cases.items():
        dtypes = []
        for lib in (lucid, torch):
            with lib.autocast("cpu"):
                dtypes.append(str(case(lib, lib.tensor(values).bfloat16()).dtype).split(".")[1])
        assert dtypes[0] == dtypes[1], (name, dtypes)


@requires_torch
def test_a_complex_number_beside_real_tensors_names_torchs_c_type():
    for name in ("int16", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"):
        messages = []
        for lib in (lucid, torch):
            ones = lib.ones(2, dtype=getattr(lib, name))
            with pytest.raises(RuntimeError) as raised:
                lib.addcmul(ones, ones, ones, value=1j)
            messages.append(str(raised.value))
        assert messages[0] == messages[1], (name, messages)
