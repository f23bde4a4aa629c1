"""Op catalogue rows: the arithmetic family, plus the linear-algebra ops built on matmul."""

from __future__ import annotations

import math

import numpy as np

import lucid
from tests.ops.op_catalogue import BROADCAST_MISMATCH, ErrorInput, OpCase
from tests.torch_oracle import torch


def _away_from_zero(*shapes: tuple[int, ...], low: float = 0.5, high: float = 2.0):
    """Float inputs with |x| in [low, high) and random signs (divisors, reciprocals)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [
            (rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)
            for shape in shapes
        ]

    return make


def _dividend_and_divisor(dividend: tuple[int, ...], divisor: tuple[int, ...]):
    """A dividend in [-4, 4) and a divisor away from zero, so quotients straddle integers."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        (divisor_array,) = _away_from_zero(divisor)(rng, dtype)
        return [rng.uniform(-4.0, 4.0, dividend).astype(dtype), divisor_array]

    return make


def _with_ties(*shapes: tuple[int, ...]):
    """Floats from {-1, -0.5, 0, 0.5, 1}: maximum/minimum meet ties, which split the gradient."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [(rng.integers(-2, 3, shape) * 0.5).astype(dtype) for shape in shapes]

    return make


def _positive_and_any(base: tuple[int, ...], exponent: tuple[int, ...]):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [
            rng.uniform(0.5, 2.0, base).astype(dtype),
            rng.uniform(-2.0, 2.0, exponent).astype(dtype),
        ]

    return make


# Why rows skip the float16 extreme-value column: PyTorch rounds an intermediate to float16
# (overflowing past 65504) where lucid computes in float32 and rounds once.
_ALPHA_FLOAT16 = (
    "PyTorch's float16 kernel rounds alpha * other to float16 in its scalar loop (not its "
    "vector loop), so whether inf + alpha * 59552 is nan depends on the element's position"
)
_ADDR_FLOAT16 = (
    "PyTorch composes addr from an outer product rounded to float16, which overflows past "
    "65504 before beta * input is added"
)

_MAT_SHAPES = ErrorInput(
    [(3, 4), (5, 6)], RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x6\)"
)


def _matmul(name: str, *shapes: tuple[int, ...], **options) -> OpCase:
    return OpCase(name, lucid.matmul, torch.matmul, np.matmul, shapes=shapes, sums=True, **options)


def _addmm_reference(bias, mat1, mat2, beta=1, alpha=1):
    return beta * bias + alpha * (mat1 @ mat2)


def _inplace(method: str, *args, **kwargs):
    """An in-place method applied to a copy, so the leaf inputs stay untouched."""

    def call(x, *tensors):
        return getattr(x * 1.0, method)(*tensors, *args, **kwargs)

    return call


def _pdist_reference(a: np.ndarray, p: float) -> np.ndarray:
    rows, cols = np.triu_indices(a.shape[0], 1)
    diff = np.abs(a[rows] - a[cols])
    if p == 0:
        counts = (diff != 0).sum(-1).astype(a.dtype)
        return np.where(np.isnan(diff).any(-1), np.nan, counts)
    if math.isinf(p):
        return diff.max(-1)
    return (diff**p).sum(-1) ** (1 / p)


ROWS: list[OpCase] = [
    # ------------------------------------------------------------------ add / sub
    OpCase(
        "add",
        lucid.add,
        torch.add,
        np.add,
        shapes=[(3, 1), (1, 4)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase("add_same_shape", lucid.add, torch.add, np.add, shapes=[(3, 4), (3, 4)]),
    OpCase(
        "add_alpha",
        lambda a, b: lucid.add(a, b, alpha=2.5),
        lambda a, b: torch.add(a, b, alpha=2.5),
        lambda a, b: a + 2.5 * b,
        shapes=[(3, 4), (4,)],
        float16_extremes_skip=_ALPHA_FLOAT16,
    ),
    OpCase("add_scalar", lambda x: x + 2.5, lambda x: x + 2.5, lambda x: x + 2.5),
    OpCase("radd_scalar", lambda x: 3 + x, lambda x: 3 + x, lambda x: 3 + x),
    OpCase("add_0d", lucid.add, torch.add, np.add, shapes=[(3, 4), ()]),
    OpCase(
        "sub",
        lucid.sub,
        torch.sub,
        np.subtract,
        shapes=[(3, 1), (1, 4)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase(
        "sub_alpha",
        lambda a, b: lucid.sub(a, b, alpha=3),
        lambda a, b: torch.sub(a, b, alpha=3),
        lambda a, b: a - 3 * b,
        shapes=[(2, 3, 4), (3, 1)],
        float16_extremes_skip=_ALPHA_FLOAT16,
    ),
    OpCase("sub_scalar", lambda x: x - 1.5, lambda x: x - 1.5, lambda x: x - 1.5),
    OpCase("rsub_scalar", lambda x: 1.5 - x, lambda x: 1.5 - x, lambda x: 1.5 - x),
    OpCase(
        "rsub",
        lucid.rsub,
        torch.rsub,
        lambda a, b: b - a,
        shapes=[(3, 4), (4,)],
        error_inputs=[
            ErrorInput(
                [(3, 4), (5,)],
                RuntimeError,
                r"size of tensor a \(5\) must match the size of tensor b \(4\)",
            )
        ],
    ),
    # ------------------------------------------------------------------ mul / div
    OpCase(
        "mul",
        lucid.mul,
        torch.mul,
        np.multiply,
        shapes=[(3, 1), (1, 4)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase("mul_same_input", lambda x: x * x, lambda x: x * x, lambda x: x * x),
    OpCase("mul_scalar", lambda x: x * 2.5, lambda x: x * 2.5, lambda x: x * 2.5),
    OpCase("rmul_scalar", lambda x: -3 * x, lambda x: -3 * x, lambda x: -3 * x),
    OpCase("mul_0d", lucid.mul, torch.mul, np.multiply, shapes=[(), (2, 3)]),
    OpCase(
        "div",
        lucid.div,
        torch.div,
        np.divide,
        make_inputs=lambda rng, dtype: [
            rng.uniform(-2.0, 2.0, (3, 1)).astype(dtype),
            *_away_from_zero((1, 4))(rng, dtype),
        ],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase("div_scalar", lambda x: x / 4.0, lambda x: x / 4.0, lambda x: x / 4.0),
    OpCase(
        "rdiv_scalar",
        lambda x: 2.0 / x,
        lambda x: 2.0 / x,
        lambda x: 2.0 / x,
        make_inputs=_away_from_zero((3, 4)),
    ),
    OpCase(
        "true_divide",
        lucid.true_divide,
        torch.true_divide,
        np.true_divide,
        make_inputs=_away_from_zero((3, 4), (4,)),
    ),
    OpCase(
        "div_trunc",
        lambda a, b: lucid.div(a, b, rounding_mode="trunc"),
        lambda a, b: torch.div(a, b, rounding_mode="trunc"),
        lambda a, b: np.trunc(a / b),
        make_inputs=_dividend_and_divisor((3, 4), (4,)),
        differentiable=False,
    ),
    OpCase(
        "div_floor",
        lambda a, b: lucid.div(a, b, rounding_mode="floor"),
        lambda a, b: torch.div(a, b, rounding_mode="floor"),
        np.floor_divide,
        make_inputs=_dividend_and_divisor((3, 4), (4,)),
        differentiable=False,
    ),
    OpCase(
        "div_floor_scalar",
        lambda x: lucid.div(x, 0.7, rounding_mode="floor"),
        lambda x: torch.div(x, 0.7, rounding_mode="floor"),
        lambda x: np.floor_divide(x, 0.7),
        low=-4.0,
        high=4.0,
        differentiable=False,
    ),
    OpCase(
        "floor_divide",
        lucid.floor_divide,
        torch.floor_divide,
        np.floor_divide,
        make_inputs=_dividend_and_divisor((3, 4), (3, 1)),
        differentiable=False,
    ),
    # ---------------------------------------------------------- neg, reciprocal
    OpCase("neg", lucid.neg, torch.neg, np.negative),
    OpCase("neg_operator", lambda x: -x, lambda x: -x, np.negative),
    OpCase(
        "reciprocal",
        lucid.reciprocal,
        torch.reciprocal,
        np.reciprocal,
        make_inputs=_away_from_zero((3, 4)),
    ),
    # ------------------------------------------------------------------------ pow
    OpCase("pow_2", lambda x: x**2, lambda x: x**2, np.square),
    OpCase("pow_3", lambda x: lucid.pow(x, 3), lambda x: torch.pow(x, 3), lambda x: x**3),
    OpCase("pow_0", lambda x: x**0, lambda x: x**0, lambda x: x**0),
    OpCase("pow_1", lambda x: x**1.0, lambda x: x**1.0, lambda x: x),
    OpCase("pow_half", lambda x: x**0.5, lambda x: x**0.5, np.sqrt, low=0.2, high=3.0),
    OpCase(
        "pow_negative",
        lambda x: x**-1.5,
        lambda x: x**-1.5,
        lambda x: x**-1.5,
        low=0.5,
        high=3.0,
    ),
    OpCase(
        "pow_tensor",
        lucid.pow,
        torch.pow,
        np.power,
        make_inputs=_positive_and_any((3, 1), (1, 4)),
        error_inputs=[
            BROADCAST_MISMATCH,
            ErrorInput(
                [np.arange(1, 4), -1],
                RuntimeError,
                "Integers to negative integer powers are not allowed",
            ),
        ],
    ),
    OpCase(
        "pow_tensor_0d_exponent",
        lucid.pow,
        torch.pow,
        np.power,
        make_inputs=_positive_and_any((3, 4), ()),
    ),
    OpCase("rpow_scalar", lambda x: 2.0**x, lambda x: 2.0**x, lambda x: 2.0**x),
    OpCase(
        "rpow_fraction", lambda x: lucid.pow(0.5, x), lambda x: torch.pow(0.5, x), lambda x: 0.5**x
    ),
    # --------------------------------------------------------------------- matmul
    _matmul(
        "matmul",
        (3, 4),
        (4, 5),
        error_inputs=[
            _MAT_SHAPES,
            ErrorInput(
                [(), (3,)],
                RuntimeError,
                "both arguments to matmul need to be at least 1D, but they are 0D and 1D",
            ),
        ],
    ),
    _matmul("matmul_vector_vector", (4,), (4,)),
    _matmul("matmul_vector_matrix", (4,), (4, 5)),
    _matmul("matmul_matrix_vector", (3, 4), (4,)),
    _matmul("matmul_batched", (2, 3, 4), (2, 4, 5)),
    _matmul("matmul_batched_broadcast", (2, 1, 3, 4), (3, 4, 5)),
    _matmul("matmul_batched_matrix", (2, 3, 4), (4, 5)),
    _matmul("matmul_matrix_batched", (3, 4), (2, 4, 5)),
    _matmul("matmul_batched_vector", (2, 3, 4), (4,)),
    _matmul("matmul_vector_batched", (4,), (2, 4, 5)),
    OpCase(
        "matmul_operator",
        lambda a, b: a @ b,
        lambda a, b: a @ b,
        np.matmul,
        shapes=[(3, 4), (4, 2)],
    ),
    OpCase(
        "mm",
        lucid.mm,
        torch.mm,
        np.matmul,
        shapes=[(3, 4), (4, 5)],
        sums=True,
        error_inputs=[
            _MAT_SHAPES,
            ErrorInput([(2, 3, 4), (4, 5)], RuntimeError, "self must be a matrix"),
        ],
    ),
    OpCase(
        "bmm",
        lucid.bmm,
        torch.bmm,
        np.matmul,
        shapes=[(2, 3, 4), (2, 4, 5)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(2, 3, 4), (2, 5, 6)],
                RuntimeError,
                r"Expected size for first two dimensions of batch2 "
                r"tensor to be: \[2, 4\] but got: \[2, 5\]",
            ),
            ErrorInput([(3, 4), (4, 5)], RuntimeError, "batch1 must be a 3D tensor"),
        ],
    ),
    OpCase(
        "mv",
        lucid.mv,
        torch.mv,
        np.matmul,
        shapes=[(3, 4), (4,)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 4), (5,)],
                RuntimeError,
                r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)",
            )
        ],
    ),
    OpCase(
        "dot",
        lucid.dot,
        torch.dot,
        np.dot,
        shapes=[(5,), (5,)],
        sums=True,
        error_inputs=[
            ErrorInput([(3,), (4,)], RuntimeError, "inconsistent tensor size"),
            ErrorInput(
                [(3, 3), (3, 3)], RuntimeError, "1D tensors expected, but got 2D and 2D tensors"
            ),
        ],
    ),
    OpCase(
        "outer",
        lucid.outer,
        torch.outer,
        np.outer,
        shapes=[(3,), (4,)],
        error_inputs=[
            ErrorInput(
                [(3, 3), (3,)], RuntimeError, "outer: Expected 1-D argument self, but got 2-D"
            )
        ],
    ),
    OpCase(
        "addmm",
        lucid.addmm,
        torch.addmm,
        _addmm_reference,
        shapes=[(3, 5), (3, 4), (4, 5)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 5), (3, 4), (5, 5)],
                RuntimeError,
                r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x5\)",
            )
        ],
    ),
    OpCase(
        "addmm_bias_vector",
        lucid.addmm,
        torch.addmm,
        _addmm_reference,
        shapes=[(5,), (3, 4), (4, 5)],
        sums=True,
    ),
    OpCase(
        "addmm_beta_alpha",
        lucid.addmm,
        torch.addmm,
        _addmm_reference,
        shapes=[(3, 1), (3, 4), (4, 5)],
        kwargs={"beta": 0.5, "alpha": -2.0},
        sums=True,
    ),
    OpCase(
        "addmm_beta_zero",
        lucid.addmm,
        torch.addmm,
        lambda bias, mat1, mat2, beta, alpha: alpha * (mat1 @ mat2),
        shapes=[(3, 5), (3, 4), (4, 5)],
        kwargs={"beta": 0, "alpha": 1.5},
        sums=True,
    ),
    # ------------------------------------------------------------ maximum/minimum
    OpCase(
        "maximum",
        lucid.maximum,
        torch.maximum,
        np.maximum,
        shapes=[(3, 1), (1, 4)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase(
        "minimum",
        lucid.minimum,
        torch.minimum,
        np.minimum,
        shapes=[(3, 1), (1, 4)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    # Ties split the gradient evenly; finite differences do not see that, so no gradcheck.
    OpCase(
        "maximum_ties",
        lucid.maximum,
        torch.maximum,
        np.maximum,
        make_inputs=_with_ties((3, 4), (4,)),
        differentiable=False,
    ),
    OpCase(
        "minimum_ties",
        lucid.minimum,
        torch.minimum,
        np.minimum,
        make_inputs=_with_ties((3, 4), (3, 1)),
        differentiable=False,
    ),
    # ----------------------------------------------------------- fmod / remainder
    OpCase(
        "fmod",
        lucid.fmod,
        torch.fmod,
        np.fmod,
        make_inputs=_dividend_and_divisor((3, 4), (4,)),
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase(
        "fmod_scalar",
        lambda x: lucid.fmod(x, 1.5),
        lambda x: torch.fmod(x, 1.5),
        lambda x: np.fmod(x, 1.5),
        low=-4.0,
        high=4.0,
    ),
    OpCase(
        "remainder",
        lucid.remainder,
        torch.remainder,
        np.remainder,
        make_inputs=_dividend_and_divisor((3, 4), (3, 1)),
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase(
        "remainder_scalar",
        lambda x: x % -1.5,
        lambda x: x % -1.5,
        lambda x: np.remainder(x, -1.5),
        low=-4.0,
        high=4.0,
    ),
    # ----------------------------------------------------------------- in place
    OpCase(
        "add_",
        _inplace("add_"),
        _inplace("add_"),
        np.add,
        shapes=[(3, 4), (4,)],
        error_inputs=[
            ErrorInput(
                [(3,), (2, 3)],
                RuntimeError,
                r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]",
            )
        ],
    ),
    OpCase(
        "add_alpha_",
        _inplace("add_", alpha=-0.5),
        _inplace("add_", alpha=-0.5),
        lambda a, b: a - 0.5 * b,
        shapes=[(3, 4), (3, 1)],
    ),
    OpCase("sub_", _inplace("sub_"), _inplace("sub_"), np.subtract, shapes=[(3, 4), (4,)]),
    OpCase(
        "mul_",
        _inplace("mul_"),
        _inplace("mul_"),
        np.multiply,
        shapes=[(3, 4), (4,)],
        error_inputs=[
            ErrorInput(
                [(3,), (2, 3)],
                RuntimeError,
                r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]",
            )
        ],
    ),
    OpCase("mul_scalar_", _inplace("mul_", 3.0), _inplace("mul_", 3.0), lambda x: 3.0 * x),
    OpCase(
        "div_",
        _inplace("div_"),
        _inplace("div_"),
        np.divide,
        make_inputs=_dividend_and_divisor((3, 4), (4,)),
    ),
    OpCase(
        "div_floor_",
        _inplace("div_", rounding_mode="floor"),
        _inplace("div_", rounding_mode="floor"),
        np.floor_divide,
        make_inputs=_dividend_and_divisor((3, 4), (4,)),
        differentiable=False,
    ),
    OpCase("pow_", _inplace("pow_", 3), _inplace("pow_", 3), lambda x: x**3),
    OpCase(
        "pow_tensor_",
        _inplace("pow_"),
        _inplace("pow_"),
        np.power,
        make_inputs=_positive_and_any((3, 4), (4,)),
    ),
    OpCase("neg_", _inplace("neg_"), _inplace("neg_"), np.negative),
    # ------------------------------------------------------------ linear algebra
    OpCase(
        "diagonal",
        lucid.diagonal,
        torch.diagonal,
        np.diagonal,
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 4)],
                RuntimeError,
                "diagonal dimensions cannot be identical 0, 0",
                {"dim1": 0, "dim2": 0},
            )
        ],
    ),
    OpCase(
        "diagonal_offset_dims",
        lambda x: lucid.diagonal(x, offset=-1, dim1=2, dim2=0),
        lambda x: torch.diagonal(x, offset=-1, dim1=2, dim2=0),
        lambda x: np.diagonal(x, offset=-1, axis1=2, axis2=0),
        shapes=[(3, 2, 4)],
    ),
    OpCase(
        "diag_vector",
        lambda v: lucid.diag(v, 1),
        lambda v: torch.diag(v, 1),
        lambda v: np.diag(v, 1),
        shapes=[(4,)],
    ),
    OpCase(
        "diag_matrix",
        lambda m: lucid.diag(m, -1),
        lambda m: torch.diag(m, -1),
        lambda m: np.diag(m, -1),
        shapes=[(3, 4)],
    ),
    OpCase(
        "trace",
        lucid.trace,
        torch.trace,
        np.trace,
        shapes=[(3, 4)],
        sums=True,
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "trace: expected a matrix, but got tensor with dim 1")
        ],
    ),
    OpCase(
        "inner",
        lucid.inner,
        torch.inner,
        np.inner,
        shapes=[(3, 4), (2, 4)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 4), (5,)],
                RuntimeError,
                r"inner\(\) the last dimension must match on both input "
                r"tensors but got shapes \[3, 4\] and \[5\]",
            )
        ],
    ),
    OpCase(
        "tensordot",
        lucid.tensordot,
        torch.tensordot,
        np.tensordot,
        shapes=[(2, 3, 4), (3, 4, 5)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 4), (5, 6)],
                RuntimeError,
                "contracted dimensions need to match, but first has size 4 "
                "in dim -1 and second has size 5 in dim 0",
                {"dims": 1},
            )
        ],
    ),
    OpCase(
        "tensordot_dims",
        lambda a, b: lucid.tensordot(a, b, dims=([1, 0], [0, 2])),
        lambda a, b: torch.tensordot(a, b, dims=([1, 0], [0, 2])),
        lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 2])),
        shapes=[(2, 3, 4), (3, 5, 2)],
        sums=True,
    ),
]


def _einsum(equation: str, *shapes: tuple[int, ...], name: str | None = None) -> OpCase:
    inputs, arrow, output = equation.partition("->")
    letters = set(inputs) - set(",.")
    if not arrow:  # implicit output: the letters that appear once
        output = "".join(letter for letter in letters if inputs.count(letter) == 1)
    return OpCase(
        name or f"einsum[{equation}]",
        lambda *tensors: lucid.einsum(equation, *tensors),
        lambda *tensors: torch.einsum(equation, *tensors),
        lambda *arrays: np.einsum(equation, *arrays),
        shapes=shapes,
        sums=bool(letters - set(output)),  # a contraction: it sums over the dropped letters
    )


ROWS += [
    _einsum("ij,jk", (3, 4), (4, 5)),
    _einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    _einsum("i,i->", (5,), (5,)),
    _einsum("i,j->ij", (3,), (4,)),
    _einsum("ij->ji", (3, 4)),
    _einsum("ij->j", (3, 4)),
    _einsum("ii", (3, 3)),
    _einsum("ii->i", (3, 3)),
    _einsum("iji->j", (3, 2, 3)),
    _einsum("...ij,...jk->...ik", (2, 1, 3, 4), (3, 4, 5)),
    _einsum("i...j->j...i", (2, 3, 4)),
    _einsum("ij,jk,kl->il", (3, 4), (4, 5), (5, 2)),
    _einsum("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
    _einsum("abc,cd,a->bd", (2, 3, 4), (4, 5), (2,)),
    _einsum("ij,j->ij", (3, 4), (1,)),
    OpCase(
        "einsum_operand_list",
        lambda a, b: lucid.einsum("ij,kj", [a, b]),
        lambda a, b: torch.einsum("ij,kj", [a, b]),
        lambda a, b: np.einsum("ij,kj", a, b),
        shapes=[(3, 4), (2, 4)],
        sums=True,
    ),
    # ------------------------------------------------ addcmul, gcd, ldexp, ...
    OpCase(
        "addcmul",
        lambda x, a, b, value=0.5: lucid.addcmul(x, a, b, value=value),
        lambda x, a, b, value=0.5: torch.addcmul(x, a, b, value=value),
        lambda x, a, b, value=0.5: x + value * a * b,
        shapes=[(3, 4), (4,), (3, 1)],
        error_inputs=[
            ErrorInput(
                [(3, 4), (5,), (4,)],
                RuntimeError,
                r"The size of tensor a \(4\) must match the size of tensor b \(5\) at "
                r"non-singleton dimension 1",
            ),
            ErrorInput(
                [(3, 4), (4,), 2.0],
                TypeError,
                r"addcmul\(\): argument 'tensor2' \(position 3\) must be Tensor, not float",
            ),
            ErrorInput(
                [np.ones(3, bool)] * 3,
                NotImplementedError,
                "\"addcmul_cpu_out\" not implemented for 'Bool'",
            ),
        ],
    ),
    OpCase(
        "addcmul_",
        lambda x, a, b: x.clone().addcmul_(a, b, value=-2.0),
        lambda x, a, b: x.clone().addcmul_(a, b, value=-2.0),
        lambda x, a, b: x - 2.0 * a * b,
        shapes=[(3, 4), (3, 4), (4,)],
    ),
    OpCase(
        "addcdiv",
        lambda x, a, b, value=2.0: lucid.addcdiv(x, a, b, value=value),
        lambda x, a, b, value=2.0: torch.addcdiv(x, a, b, value=value),
        lambda x, a, b, value=2.0: x + value * a / b,
        make_inputs=lambda rng, dtype: [
            rng.uniform(-2.0, 2.0, (3, 4)).astype(dtype),
            rng.uniform(-2.0, 2.0, (4,)).astype(dtype),
            *_away_from_zero((3, 1))(rng, dtype),
        ],
        error_inputs=[
            ErrorInput(
                [np.arange(3), np.arange(3), np.arange(1, 4)],
                RuntimeError,
                "Integer division with addcdiv is no longer supported",
            ),
        ],
    ),
    OpCase(
        "addcdiv_",
        lambda x, a, b: x.clone().addcdiv_(a, b),
        lambda x, a, b: x.clone().addcdiv_(a, b),
        lambda x, a, b: x + a / b,
        make_inputs=lambda rng, dtype: [
            rng.uniform(-2.0, 2.0, (3, 4)).astype(dtype),
            *_away_from_zero((3, 4), (4,))(rng, dtype),
        ],
    ),
    *[
        OpCase(
            name,
            getattr(lucid, name),
            getattr(torch, name),
            reference,
            make_inputs=lambda rng, dtype: [
                rng.integers(-12, 13, (3, 4)),
                rng.integers(-12, 13, (4,)).astype(np.int32),
            ],
            differentiable=False,
            error_inputs=[
                ErrorInput(
                    [(3, 4), (3, 4)],
                    NotImplementedError,
                    f"\"{name}_cpu\" not implemented for 'Double'",
                ),
                ErrorInput(
                    [np.arange(3), 2],
                    TypeError,
                    rf"{name}\(\): argument 'other' \(position 2\) must be Tensor, not int",
                ),
                ErrorInput(
                    [np.arange(3), np.arange(4)],
                    RuntimeError,
                    r"The size of tensor a \(3\) must match the size of tensor b \(4\)",
                ),
            ],
        )
        for name, reference in [("gcd", np.gcd), ("lcm", np.lcm)]
    ],
    OpCase(
        "gcd_",
        lambda a, b: a.clone().gcd_(b),
        lambda a, b: a.clone().gcd_(b),
        np.gcd,
        make_inputs=lambda rng, dtype: [rng.integers(-12, 13, (3, 4)), rng.integers(-12, 13, (4,))],
        differentiable=False,
    ),
    OpCase(
        "ldexp",
        lucid.ldexp,
        torch.ldexp,
        lambda x, e: x * 2.0**e,
        shapes=[(3, 4), (4,)],
        low=-3.0,
        high=3.0,
        error_inputs=[
            BROADCAST_MISMATCH,
            ErrorInput(
                [(3, 4), 2],
                TypeError,
                r"ldexp\(\): argument 'other' \(position 2\) must be Tensor, not int",
            ),
        ],
    ),
    OpCase(
        "ldexp_integer_exponent",
        lucid.ldexp,
        torch.ldexp,
        lambda x, e: x * 2.0**e,
        make_inputs=lambda rng, dtype: [
            rng.uniform(-2.0, 2.0, (3, 4)).astype(dtype),
            # non-negative: PyTorch's gradient for a negative integer exponent is 0 (it takes
            # 2^-k in integers), lucid's is the true 2^-k
            rng.integers(0, 5, (4,)),
        ],
    ),
    OpCase(
        "ldexp_",
        lambda x, e: x.clone().ldexp_(e),
        lambda x, e: x.clone().ldexp_(e),
        lambda x, e: x * 2.0**e,
        shapes=[(3, 4), (4,)],
    ),
    OpCase(
        "frexp_mantissa",
        lucid.frexp,
        torch.frexp,
        np.frexp,
        output_index=0,
        error_inputs=[
            ErrorInput(
                [np.arange(3)], RuntimeError, r"lucid.frexp\(\) only supports floating-point dtypes"
            )
        ],
    ),
    OpCase(
        "frexp_exponent",
        lucid.frexp,
        torch.frexp,
        lambda x: (np.frexp(x)[0], np.frexp(x)[1].astype(np.int32)),
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "float_power_",
        lambda x, e: x.clone().double().float_power_(e),
        lambda x, e: x.clone().double().float_power_(e),
        lambda x, e: np.power(x.astype(np.float64), e),
        shapes=[(3, 4), (4,)],
        low=0.2,
        high=2.0,
    ),
    OpCase(
        "fmod_",
        lambda x, y: x.clone().fmod_(y),
        lambda x, y: x.clone().fmod_(y),
        np.fmod,
        make_inputs=_dividend_and_divisor((3, 4), (4,)),
    ),
    # ------------------------------------- add-and-multiply family, vdot, cross, cdist
    OpCase(
        "baddbmm",
        lambda x, a, b, beta=0.5, alpha=-2.0: lucid.baddbmm(x, a, b, beta=beta, alpha=alpha),
        lambda x, a, b, beta=0.5, alpha=-2.0: torch.baddbmm(x, a, b, beta=beta, alpha=alpha),
        lambda x, a, b, beta=0.5, alpha=-2.0: beta * x + alpha * np.matmul(a, b),
        shapes=[(3, 1), (2, 3, 4), (2, 4, 5)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(2, 3, 5), (2, 3, 4), (2, 3, 5)],
                RuntimeError,
                r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but "
                r"got: \[2, 3\]\.",
            ),
            ErrorInput(
                [(2, 3, 5), (3, 4), (4, 5)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
            ),
            ErrorInput(
                [(2, 3, 5), (2, 3, 4), np.ones((2, 4, 5), np.float32)],
                RuntimeError,
                "expected scalar type Double but found Float",
            ),
            ErrorInput(
                [(2, 3, 5), np.ones((2, 3, 4), np.float32), (2, 4, 5)],
                RuntimeError,
                "Input dtypes must be the same, got: input double, batch1: float, batch2: double",
            ),
            ErrorInput(
                [(4,), (2, 3, 4), (2, 4, 5)],
                RuntimeError,
                r"The expanded size of the tensor \(5\) must match the existing size \(4\) at "
                r"non-singleton dimension 2",
            ),
        ],
    ),
    OpCase(
        "baddbmm_",
        lambda x, a, b: x.clone().baddbmm_(a, b),
        lambda x, a, b: x.clone().baddbmm_(a, b),
        lambda x, a, b: x + np.matmul(a, b),
        shapes=[(2, 3, 5), (2, 3, 4), (2, 4, 5)],
        sums=True,
    ),
    OpCase(
        "addbmm",
        lambda x, a, b, beta=2.0, alpha=0.5: lucid.addbmm(x, a, b, beta=beta, alpha=alpha),
        lambda x, a, b, beta=2.0, alpha=0.5: torch.addbmm(x, a, b, beta=beta, alpha=alpha),
        lambda x, a, b, beta=2.0, alpha=0.5: beta * x + alpha * np.matmul(a, b).sum(0),
        shapes=[(5,), (2, 3, 4), (2, 4, 5)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3, 5), (2, 3, 4), (3, 4, 5)],
                RuntimeError,
                "batch1 and batch2 must have same number of batches, got 2 and 3",
            ),
            ErrorInput(
                [(3, 5), (2, 3, 4), (2, 3, 5)],
                RuntimeError,
                r"Incompatible matrix sizes for bmm \(3x4 and 3x5\)",
            ),
            ErrorInput(
                [(3, 5), np.ones((2, 3, 4), np.float32), (2, 4, 5)],
                RuntimeError,
                "mat1 and mat2 must have the same dtype, but got Float and Double",
            ),
        ],
    ),
    OpCase(
        "addbmm_",
        lambda x, a, b: x.clone().addbmm_(a, b, beta=0.0),
        lambda x, a, b: x.clone().addbmm_(a, b, beta=0.0),
        lambda x, a, b: np.matmul(a, b).sum(0),
        shapes=[(3, 5), (2, 3, 4), (2, 4, 5)],
        sums=True,
    ),
    OpCase(
        "addmv",
        lambda x, m, v, beta=-1.0, alpha=3.0: lucid.addmv(x, m, v, beta=beta, alpha=alpha),
        lambda x, m, v, beta=-1.0, alpha=3.0: torch.addmv(x, m, v, beta=beta, alpha=alpha),
        lambda x, m, v, beta=-1.0, alpha=3.0: beta * x + alpha * (m @ v),
        shapes=[(3,), (3, 4), (4,)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3,), (3, 4, 1), (4,)],
                RuntimeError,
                "vector \\+ matrix @ vector expected, got 1, 3, 1",
            ),
            ErrorInput(
                [(4,), (3, 4), (4,)],
                RuntimeError,
                r"size mismatch, got input \(4\), mat \(3x4\), vec \(4\)",
            ),
            ErrorInput(
                [(3,), np.ones((3, 4), np.float32), (4,)],
                RuntimeError,
                "addmv input tensors must have the same dtype, but got Double, Float, and Double",
            ),
        ],
    ),
    OpCase(
        "addmv_",
        lambda x, m, v: x.clone().addmv_(m, v),
        lambda x, m, v: x.clone().addmv_(m, v),
        lambda x, m, v: x + m @ v,
        shapes=[(3,), (3, 4), (4,)],
        sums=True,
    ),
    OpCase(
        "addr",
        lambda x, a, b, beta=0.5, alpha=2.0: lucid.addr(x, a, b, beta=beta, alpha=alpha),
        lambda x, a, b, beta=0.5, alpha=2.0: torch.addr(x, a, b, beta=beta, alpha=alpha),
        lambda x, a, b, beta=0.5, alpha=2.0: beta * x + alpha * np.outer(a, b),
        shapes=[(3, 4), (3,), (4,)],
        sums=True,
        float16_extremes_skip=_ADDR_FLOAT16,
        error_inputs=[
            ErrorInput(
                [(3, 4), (3, 1), (4,)],
                RuntimeError,
                "addr: Expected 1-D argument vec1, but got 2-D",
            ),
            ErrorInput(
                [(3, 5), (3,), (4,)],
                RuntimeError,
                r"The expanded size of the tensor \(4\) must match the existing size \(5\) at "
                r"non-singleton dimension 1",
            ),
        ],
    ),
    OpCase(
        "addr_mixed_dtypes",
        lucid.addr,
        torch.addr,
        lambda x, a, b: x + np.outer(a, b),
        make_inputs=lambda rng, dtype: [
            rng.uniform(-2.0, 2.0, (3, 4)).astype(dtype),
            rng.uniform(-2.0, 2.0, (3,)).astype(np.float64),
            rng.integers(-3, 4, (4,)),
        ],
        # PyTorch's own backward fails on mixed dtypes (its addmv refuses them)
        differentiable=False,
        sums=True,
    ),
    OpCase(
        "addr_",
        lambda x, a, b: x.clone().addr_(a, b),
        lambda x, a, b: x.clone().addr_(a, b),
        lambda x, a, b: x + np.outer(a, b),
        shapes=[(3, 4), (3,), (4,)],
        sums=True,
        float16_extremes_skip=_ADDR_FLOAT16,
    ),
    OpCase(
        "vdot",
        lucid.vdot,
        torch.vdot,
        np.vdot,
        shapes=[(5,), (5,)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(2, 2), (2, 2)], RuntimeError, "1D tensors expected, but got 2D and 2D tensors"
            ),
            ErrorInput(
                [(2,), np.ones(2, np.float32)],
                RuntimeError,
                "dot : expected both vectors to have same dtype, but found Double and Float",
            ),
            ErrorInput(
                [(2,), (3,)],
                RuntimeError,
                r"inconsistent tensor size, expected tensor \[2\] and src \[3\] to have the same "
                r"number of elements, but got 2 and 3 elements respectively",
            ),
        ],
    ),
    OpCase(
        "chain_matmul",
        lucid.chain_matmul,
        torch.chain_matmul,
        lambda a, b, c: a @ b @ c,
        shapes=[(3, 4), (4, 5), (5, 2)],
        sums=True,
        error_inputs=[
            ErrorInput([], RuntimeError, r"chain_matmul\(\): Expected one or more matrices"),
            ErrorInput(
                [(3, 4), (2, 4, 5)], RuntimeError, "Tensor dimension is 3, expected 2 instead."
            ),
            ErrorInput(
                [(3, 4), (5, 5)],
                RuntimeError,
                r"multi_dot\(\): tensors 0 and 1 with shapes \[3, 4\] and \[5, 5\] cannot be "
                r"multiplied",
            ),
        ],
    ),
    OpCase(
        "cross",
        lambda a, b, dim=1: lucid.cross(a, b, dim=dim),
        lambda a, b, dim=1: torch.cross(a, b, dim=dim),
        lambda a, b, dim=1: np.cross(a, b, axis=dim),
        shapes=[(4, 3), (1, 3)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(4, 3), (4, 3)],
                RuntimeError,
                "linalg.cross: inputs dimension 0 must have length 3. Got 4 and 4",
                {"dim": 0},
            ),
            ErrorInput(
                [(4, 3), (3,)],
                RuntimeError,
                "linalg.cross: inputs must have the same number of dimensions.",
            ),
            ErrorInput(
                [(4, 3), (5, 3)],
                RuntimeError,
                r"The size of tensor a \(4\) must match the size of tensor b \(5\) at "
                r"non-singleton dimension 0",
            ),
            ErrorInput(
                [(4, 3), np.ones((4, 3), np.float32)],
                RuntimeError,
                "expected scalar type Double but found Float",
            ),
            ErrorInput(
                [(4, 2), (4, 2)], RuntimeError, "no dimension of size 3 in input", {"dim": None}
            ),
        ],
    ),
    OpCase(
        "cross_default_dim",
        lambda a, b: lucid.cross(a, b),
        lambda a, b: torch.cross(a, b),
        lambda a, b: np.cross(a, b, axis=0),
        shapes=[(3, 3), (3, 3)],
        sums=True,
    ),
    *[
        OpCase(
            f"cdist_p{p}",
            lambda a, b, p=p: lucid.cdist(a, b, p=p),
            lambda a, b, p=p: torch.cdist(a, b, p=p),
            None,
            shapes=[(2, 3, 4), (5, 4)],
            # PyTorch's inf-norm takes the max with a comparison that drops nan or keeps it by
            # the order it meets it; lucid's max always propagates nan
            extremes=not math.isinf(p),
            error_inputs=[
                ErrorInput(
                    [(3,), (3,)],
                    RuntimeError,
                    "cdist only supports at least 2D tensors, X1 got: 1D",
                ),
                ErrorInput(
                    [(3, 4), (2, 5)],
                    RuntimeError,
                    "X1 and X2 must have the same number of columns. X1: 4 X2: 5",
                ),
                ErrorInput(
                    [(3, 4), (2, 4)],
                    RuntimeError,
                    "cdist only supports non-negative p values",
                    {"p": -1.0},
                ),
                ErrorInput(
                    [np.ones((3, 4), np.int64), np.ones((2, 4), np.int64)],
                    RuntimeError,
                    "cdist only supports floating-point dtypes, X1 got: Long",
                ),
                ErrorInput(
                    [(2, 3, 4), (3, 2, 4)],
                    RuntimeError,
                    r"The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                    r"non-singleton dimension 0",
                ),
            ]
            if p == 2.0
            else [],
        )
        for p in (0.0, 1.0, 2.0, 3.0, 0.5, float("inf"))
    ],
    *[
        OpCase(
            f"pdist_p{p}",
            lambda a, p=p: lucid.pdist(a, p=p),
            lambda a, p=p: torch.pdist(a, p=p),
            lambda a, p=p: _pdist_reference(a, p),
            shapes=[(5, 3)],
            # the inf-norm as cdist's rows; for p = 1 PyTorch's pdist kernel (unlike its abs
            # and vector_norm, whose gradients lucid's follows) takes sign(NaN) as NaN
            extremes=not math.isinf(p) and p != 1.0,
            error_inputs=[
                ErrorInput([(3,)], RuntimeError, "pdist only supports 2D tensors, got: 1D"),
                ErrorInput(
                    [(3, 4)], RuntimeError, "pdist only supports non-negative p values", {"p": -1.0}
                ),
                ErrorInput(
                    [np.ones((3, 4), np.int64)],
                    RuntimeError,
                    "pdist only supports floating-point dtypes",
                ),
            ]
            if p == 2.0
            else [],
        )
        for p in (0.0, 1.0, 1.5, 2.0, 3.0, float("inf"))
    ],
    OpCase(
        "cdist_mm",
        lambda a, b, compute_mode="use_mm_for_euclid_dist": lucid.cdist(
            a, b, compute_mode=compute_mode
        ),
        lambda a, b, compute_mode="use_mm_for_euclid_dist": torch.cdist(
            a, b, compute_mode=compute_mode
        ),
        None,
        shapes=[(30, 4), (5, 4)],
        rtol32=1e-4,
        float16_extremes_skip=(
            "PyTorch's float16 matrix-product path rounds the squared norms and the product to "
            "float16, where they overflow past 65504; lucid rounds the distances once"
        ),
        error_inputs=[
            ErrorInput(
                [(3, 4), (2, 4)],
                ValueError,
                "foo is not a valid value for compute_mode",
                {"compute_mode": "foo"},
            )
        ],
    ),
    OpCase(
        "kron",
        lucid.kron,
        torch.kron,
        np.kron,
        shapes=[(2, 3), (4, 1, 2)],
        sums=True,
    ),
    OpCase("kron_scalar", lucid.kron, torch.kron, np.kron, shapes=[(), (4,)], sums=True),
    OpCase(
        "vander",
        lambda x, N=None, increasing=False: lucid.vander(x, N, increasing),
        lambda x, N=None, increasing=False: torch.vander(x, N, increasing),
        lambda x, N=None, increasing=False: np.vander(x, N, increasing),
        shapes=[(4,)],
        # PyTorch's vander backward fails (its cumprod's input is modified in place); the
        # gradient is checked in test_math_ops.py
        differentiable=False,
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "N must be non-negative.", {"N": -1}),
            ErrorInput([(3, 2)], RuntimeError, "x must be a one-dimensional tensor."),
        ],
    ),
    OpCase(
        "vander_increasing",
        lambda x: lucid.vander(x, 5, increasing=True),
        lambda x: torch.vander(x, 5, increasing=True),
        lambda x: np.vander(x, 5, increasing=True),
        shapes=[(3,)],
        differentiable=False,
    ),
    OpCase(
        "linalg.vander",
        lambda x, N=4: lucid.linalg.vander(x, N=N),
        lambda x, N=4: torch.linalg.vander(x, N=N),
        lambda x: x[..., None] ** np.arange(4),
        shapes=[(2, 3)],
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "N must be greater than 1.", {"N": 1}),
            ErrorInput(
                [np.array([True, False])],
                RuntimeError,
                "linalg.vander supports floating point, complex, and integer tensors, but got Bool",
            ),
        ],
    ),
    OpCase(
        "diagflat",
        lambda x: lucid.diagflat(x, 1),
        lambda x: torch.diagflat(x, 1),
        lambda x: np.diagflat(x, 1),
        shapes=[(2, 3)],
    ),
    OpCase(
        "vander_integer",
        lucid.vander,
        torch.vander,
        np.vander,
        make_inputs=lambda rng, dtype: [rng.integers(-3, 4, (4,))],
        differentiable=False,
    ),
    OpCase(
        "positive",
        lucid.positive,
        torch.positive,
        np.positive,
        error_inputs=[
            ErrorInput(
                [np.array([True, False])],
                RuntimeError,
                "The `\\+` operator, on a bool tensor is not supported.",
            )
        ],
    ),
    OpCase(
        "fmax",
        lucid.fmax,
        torch.fmax,
        np.fmax,
        shapes=[(3, 4), (4,)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase("fmin", lucid.fmin, torch.fmin, np.fmin, shapes=[(3, 4), (4,)]),
]
