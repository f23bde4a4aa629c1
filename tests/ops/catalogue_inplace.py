"""Op catalogue rows: the in-place forms (`sin_`, `eq_`, `cumsum_`, `t_`, `bitwise_and_`, `&=`,
...) of ops whose out-of-place rows live in the other families.

Each row writes into a clone of its first input, so the leaf input stays untouched and the
gradient flows through the in-place op back to it. The same call runs on lucid and torch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import OpCase
from tests.torch_oracle import torch

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _method(name: str, reference: Any, *args: Any, **options: Any) -> OpCase:
    """`x.clone().<method>(*other_inputs, *args)` for a row `<method>[variant]`, against
    `reference(*arrays, *args)`."""
    method = name.split("[")[0]

    def call(x: Any, *others: Any) -> Any:
        return getattr(x.clone(), method)(*others, *args)

    def expected(x: np.ndarray, *others: np.ndarray) -> np.ndarray:
        return np.asarray(reference(x, *others, *args)).astype(x.dtype)

    return OpCase(name, call, call, expected, **options)


def _small_integers(*shapes: tuple[int, ...]) -> Any:
    """Float inputs drawn from {-2, ..., 2}, so comparisons and logical ops meet ties and 0."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.integers(-2, 3, shape).astype(dtype) for shape in shapes]

    return make


def _integers(dtype: str, shift: bool = False, arity: int = 2) -> Any:
    """Integer (or bool) inputs of shapes (3, 4) and (4,), the first `arity` of them; a shift
    count lies in [0, 6)."""

    def make(rng: np.random.Generator, float_dtype: np.dtype) -> list[np.ndarray]:
        if dtype == "bool":
            arrays = [rng.integers(0, 2, shape).astype(bool) for shape in ((3, 4), (4,))]
        else:
            other = rng.integers(0, 6, (4,)) if shift else rng.integers(-8, 9, (4,))
            arrays = [rng.integers(-64, 65, (3, 4)).astype(dtype), other.astype(dtype)]
        return arrays[:arity]

    return make


def _away_from_zero(*shapes: tuple[int, ...]) -> Any:
    """Floats with |x| in [0.5, 2) and random signs (divisors, reciprocals)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [
            (rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)
            for shape in shapes
        ]

    return make


def _dividend_and_divisor(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    (divisor,) = _away_from_zero((3, 1))(rng, dtype)
    return [rng.uniform(-4.0, 4.0, (3, 4)).astype(dtype), divisor]


def _fill_diagonal(x: np.ndarray, value: float, wrap: bool = False) -> np.ndarray:
    result = x.copy()
    np.fill_diagonal(result, value, wrap=wrap)
    return result


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _renorm(x: np.ndarray, p: float, dim: int, maxnorm: float) -> np.ndarray:
    """Each slice along `dim` scaled down to norm `maxnorm` where its norm exceeds it."""
    axes = tuple(axis for axis in range(x.ndim) if axis != dim)
    norms = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


# The operator statements, written once for both libraries.
def _iand(a: Any, b: Any) -> Any:
    a = a.clone()
    a &= b
    return a


def _ior(a: Any, b: Any) -> Any:
    a = a.clone()
    a |= b
    return a


def _ixor(a: Any, b: Any) -> Any:
    a = a.clone()
    a ^= b
    return a


def _ilshift(a: Any, b: Any) -> Any:
    a = a.clone()
    a <<= b
    return a


def _irshift(a: Any, b: Any) -> Any:
    a = a.clone()
    a >>= b
    return a


def _lshift(a: Any, b: Any) -> Any:
    return a << b


def _rshift(a: Any, b: Any) -> Any:
    return a >> b


def _operator(name: str, call: Any, reference: Any, dtype: str, shift: bool = False) -> OpCase:
    return OpCase(
        name,
        call,
        call,
        reference,
        make_inputs=_integers(dtype, shift),
        differentiable=False,
    )


_COMPARISONS = {
    "eq_": np.equal,
    "ne_": np.not_equal,
    "not_equal_": np.not_equal,
    "lt_": np.less,
    "less_": np.less,
    "le_": np.less_equal,
    "less_equal_": np.less_equal,
    "gt_": np.greater,
    "greater_": np.greater,
    "ge_": np.greater_equal,
    "greater_equal_": np.greater_equal,
}
_LOGICAL = {
    "logical_and_": np.logical_and,
    "logical_or_": np.logical_or,
    "logical_xor_": np.logical_xor,
}

# PyTorch has no derivative for the in-place inverse hyperbolic functions, and lucid follows
# (tests/ops/test_inplace_forms.py checks the error): their rows check values only.
_NO_DERIVATIVE = {"differentiable": False}

ROWS: list[OpCase] = [
    # ------------------------------------------------------------ trigonometric
    *[
        _method(name, reference, low=-0.9, high=0.9)
        for name, reference in [
            ("acos_", np.arccos),
            ("arccos_", np.arccos),
            ("asin_", np.arcsin),
            ("arcsin_", np.arcsin),
        ]
    ],
    _method("atanh_", np.arctanh, low=-0.9, high=0.9, **_NO_DERIVATIVE),
    _method("arctanh_", np.arctanh, low=-0.9, high=0.9, **_NO_DERIVATIVE),
    _method("acosh_", np.arccosh, low=1.1, high=3.0, **_NO_DERIVATIVE),
    _method("arccosh_", np.arccosh, low=1.1, high=3.0, **_NO_DERIVATIVE),
    _method("asinh_", np.arcsinh, **_NO_DERIVATIVE),
    _method("arcsinh_", np.arcsinh, **_NO_DERIVATIVE),
    *[
        _method(name, reference)
        for name, reference in [
            ("atan_", np.arctan),
            ("arctan_", np.arctan),
            ("cos_", np.cos),
            ("cosh_", np.cosh),
            ("sin_", np.sin),
            ("sinh_", np.sinh),
            ("tanh_", np.tanh),
            ("sigmoid_", _sigmoid),
            ("expm1_", np.expm1),
            ("exp2_", np.exp2),
            ("erf_", _erf),
            ("erfc_", _erfc),
            ("square_", np.square),
            ("sign_", np.sign),
            ("conj_physical_", np.conj),
            ("nan_to_num_", np.nan_to_num),
        ]
    ],
    _method("tan_", np.tan, low=-1.2, high=1.2),
    _method("rad2deg_", np.rad2deg, low=-7.0, high=7.0),
    _method("atan2_", np.arctan2, shapes=[(3, 4), (4,)]),
    _method("arctan2_", np.arctan2, shapes=[(3, 4), (4,)]),
    # ------------------------------------------------------------ logs and roots
    *[
        _method(name, reference, low=0.1, high=3.0)
        for name, reference in [
            ("log_", np.log),
            ("log10_", np.log10),
            ("log2_", np.log2),
            ("rsqrt_", lambda x: 1.0 / np.sqrt(x)),
        ]
    ],
    _method("log1p_", np.log1p, low=-0.9, high=2.0),
    _method("reciprocal_", np.reciprocal, make_inputs=_away_from_zero((3, 4))),
    # ---------------------------------------------- rounding (zero gradient a.e.)
    *[
        _method(name, reference, low=-3.0, high=3.0)
        for name, reference in [
            ("ceil_", np.ceil),
            ("floor_", np.floor),
            ("round_", np.round),
            ("trunc_", np.trunc),
            ("fix_", np.trunc),
        ]
    ],
    # --------------------------------------------------------------- arithmetic
    _method("remainder_", np.remainder, make_inputs=_dividend_and_divisor),
    _method(
        "floor_divide_", np.floor_divide, make_inputs=_dividend_and_divisor, differentiable=False
    ),
    _method("lerp_", lambda a, b, weight: a + weight * (b - a), 0.3, shapes=[(3, 4), (4,)]),
    _method(
        "addmm_",
        lambda x, a, b: x + a @ b,
        shapes=[(3, 5), (3, 4), (4, 5)],
        sums=True,
    ),
    _method("renorm_", _renorm, 2, 0, 1.5, sums=True),
    _method(
        "heaviside_",
        np.heaviside,
        make_inputs=_small_integers((3, 4), (4,)),
        differentiable=False,
    ),
    _method("nextafter_", np.nextafter, shapes=[(3, 4), (4,)], differentiable=False),
    _method(
        "lcm_",
        np.lcm,
        make_inputs=lambda rng, dtype: [rng.integers(-12, 13, (3, 4)), rng.integers(-12, 13, (4,))],
        differentiable=False,
    ),
    # --------------------------------------------------------------- cumulative
    _method("cumsum_", lambda x, dim: np.cumsum(x, axis=dim), 1, sums=True),
    _method("cumprod_", lambda x, dim: np.cumprod(x, axis=dim), 0),
    # ------------------------------------------------------------------- shapes
    _method("squeeze_", np.squeeze, shapes=[(3, 1, 4, 1)]),
    _method("unsqueeze_", np.expand_dims, 1),
    _method("t_", np.transpose),
    _method("transpose_", np.swapaxes, 0, 2, shapes=[(2, 3, 4)]),
    _method("swapaxes_", np.swapaxes, -1, 0, shapes=[(2, 3, 4)]),
    _method("swapdims_", np.swapaxes, 1, 0, shapes=[(2, 3, 4)]),
    # ------------------------------------------------------------------- fills
    # fill is the out-of-place form of fill_ (its gradient is zero)
    OpCase(
        "fill",
        lambda x: lucid.fill(x, -0.5),
        lambda x: torch.fill(x, -0.5),
        lambda x: np.full_like(x, -0.5),
    ),
    _method("fill_diagonal_", _fill_diagonal, 2.0),
    _method("fill_diagonal_[tall wrap]", _fill_diagonal, -1.0, True, shapes=[(7, 3)]),
    # --------------------------------------------------- comparisons and logic
    *[
        _method(
            name,
            reference,
            make_inputs=_small_integers((3, 4), (4,)),
            differentiable=False,
        )
        for name, reference in (_COMPARISONS | _LOGICAL).items()
    ],
    _method(
        "logical_not_",
        np.logical_not,
        make_inputs=_small_integers((3, 4)),
        differentiable=False,
    ),
    # ------------------------------------------------- bitwise, on integers and bools
    *[
        OpCase(
            f"{name}_{dtype}",
            lambda a, b, name=name: getattr(a.clone(), name)(b),
            lambda a, b, name=name: getattr(a.clone(), name)(b),
            reference,
            make_inputs=_integers(dtype),
            differentiable=False,
        )
        for name, reference in [
            ("bitwise_and_", np.bitwise_and),
            ("bitwise_or_", np.bitwise_or),
            ("bitwise_xor_", np.bitwise_xor),
        ]
        for dtype in ("int64", "bool")
    ],
    *[
        OpCase(
            f"bitwise_not__{dtype}",
            lambda a: a.clone().bitwise_not_(),
            lambda a: a.clone().bitwise_not_(),
            np.invert,
            make_inputs=_integers(dtype, arity=1),
            differentiable=False,
        )
        for dtype in ("int64", "bool")
    ],
    _operator("__iand___int64", _iand, np.bitwise_and, "int64"),
    _operator("__iand___bool", _iand, np.bitwise_and, "bool"),
    _operator("__ior___int64", _ior, np.bitwise_or, "int64"),
    _operator("__ixor___bool", _ixor, np.bitwise_xor, "bool"),
    *[
        _operator(f"{name}_{dtype}", call, reference, dtype, shift=True)
        for name, call, reference in [
            ("__lshift__", _lshift, np.left_shift),
            ("__rshift__", _rshift, np.right_shift),
            ("__ilshift__", _ilshift, np.left_shift),
            ("__irshift__", _irshift, np.right_shift),
        ]
        for dtype in ("int64", "int32")
    ],
    *[
        OpCase(
            f"{name}_{dtype}",
            lambda a, b, name=name: getattr(a.clone(), name)(b),
            lambda a, b, name=name: getattr(a.clone(), name)(b),
            reference,
            make_inputs=_integers(dtype, shift=True),
            differentiable=False,
        )
        for name, reference in [
            ("bitwise_left_shift", np.left_shift),
            ("bitwise_left_shift_", np.left_shift),
            ("bitwise_right_shift", np.right_shift),
            ("bitwise_right_shift_", np.right_shift),
        ]
        for dtype in ("int64", "uint8")
    ],
]
