"""Op catalogue rows: lucid.special, torch.special's functions that lucid's other families do
not already have (those, `special.erf` and the like, are the same functions as `lucid.erf`
and covered by its rows).

References are SciPy's (a test-only dependency; without it the rows keep their torch parity).
PyTorch's float64 Bessel J and Y kernels lose digits away from the origin (near 1e-7 absolute
by |x| = 5, where lucid's agree with SciPy to 1e-11), so their rows draw inputs where torch is
accurate; tests/ops/test_special_functions.py compares them with SciPy over a wide range.
"""

from __future__ import annotations

import numpy as np

import lucid
import lucid.special
from tests.ops.op_catalogue import BROADCAST_MISMATCH, OpCase
from tests.torch_oracle import torch

try:
    import scipy.special as scipy_special
except ImportError:  # the rows keep their torch parity
    scipy_special = None


def _scipy(name: str, *, order: int | None = None):
    """SciPy's function `name` (with a leading integer `order` argument bound), or None."""
    if scipy_special is None:
        return None
    function = getattr(scipy_special, name)
    if order is None:
        return function
    return lambda x: function(order, x)


def _unary(name: str, reference, low: float = -2.0, high: float = 2.0, **options) -> OpCase:
    return OpCase(
        f"special.{name}",
        getattr(lucid.special, name),
        getattr(torch.special, name),
        reference,
        low=low,
        high=high,
        **options,
    )


def _airy_ai(x: np.ndarray) -> np.ndarray:
    return scipy_special.airy(x)[0]


def _degrees(low: float, high: float):
    """A float x in [low, high) and an integer degree n in 0..12 (past 8 PyTorch's Chebyshev
    kernels switch from the recurrence to trigonometric forms inside [-1, 1])."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        x = rng.uniform(low, high, (3, 4)).astype(dtype)
        n = rng.integers(0, 13, (3, 4))
        return [x, n]

    return make


def _polynomial(name: str, reference: str | None, low: float = -1.2, high: float = 1.2, **options):
    """A polynomial row: no derivative (as PyTorch), the degree an integer tensor. No
    extreme-value column: at a nan x PyTorch's polynomial kernels give nan, inf or
    uninitialised values, depending on the kernel and the degrees beside it."""
    scipy_reference = None
    if reference is not None and scipy_special is not None:
        function = getattr(scipy_special, reference)
        scipy_reference = lambda x, n: function(n, x)  # noqa: E731
    return OpCase(
        f"special.{name}",
        getattr(lucid.special, name),
        getattr(torch.special, name),
        scipy_reference,
        make_inputs=_degrees(low, high),
        differentiable=False,
        extremes=False,
        **options,
    )


def _zeta_inputs(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(1.5, 4.0, (3, 4)).astype(dtype), rng.uniform(0.5, 3.0, (4,)).astype(dtype)]


ROWS: list[OpCase] = [
    # ---------------------------------------------------------------- differentiable
    _unary("entr", _scipy("entr"), low=0.05, high=3.0),
    _unary("expit", _scipy("expit"), low=-5.0, high=5.0),
    _unary("erfcx", _scipy("erfcx"), low=-3.0, high=8.0),
    _unary("ndtr", _scipy("ndtr"), low=-6.0, high=6.0),
    # both sides of PyTorch's split at -1
    _unary("log_ndtr", _scipy("log_ndtr"), low=-12.0, high=4.0),
    _unary("ndtri", _scipy("ndtri"), low=0.001, high=0.999),
    _unary("i0e", _scipy("i0e"), low=-8.0, high=8.0),
    _unary("i1", _scipy("i1"), low=-8.0, high=8.0),
    _unary("i1e", _scipy("i1e"), low=-8.0, high=8.0),
    OpCase(
        "special.xlog1py",
        lucid.special.xlog1py,
        torch.special.xlog1py,
        _scipy("xlog1py"),
        shapes=[(3, 4), (4,)],
        low=-0.5,
        high=2.0,
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase(
        "special.zeta",
        lucid.special.zeta,
        torch.special.zeta,
        _scipy("zeta"),
        make_inputs=_zeta_inputs,
        # PyTorch defines no derivative in the exponent
        grad_inputs=[1],
    ),
    # ------------------------------------------------------- no derivative in PyTorch
    _unary("bessel_j0", _scipy("j0"), low=-2.0, high=2.0, differentiable=False),
    _unary("bessel_j1", _scipy("j1"), low=-2.0, high=2.0, differentiable=False),
    _unary("bessel_y0", _scipy("y0"), low=0.05, high=2.0, differentiable=False),
    _unary("bessel_y1", _scipy("y1"), low=0.05, high=2.0, differentiable=False),
    _unary("modified_bessel_i0", _scipy("i0"), low=-8.0, high=8.0, differentiable=False),
    _unary("modified_bessel_i1", _scipy("i1"), low=-8.0, high=8.0, differentiable=False),
    _unary("modified_bessel_k0", _scipy("k0"), low=0.05, high=8.0, differentiable=False),
    _unary("modified_bessel_k1", _scipy("k1"), low=0.05, high=8.0, differentiable=False),
    _unary("scaled_modified_bessel_k0", _scipy("k0e"), low=0.05, high=8.0, differentiable=False),
    _unary("scaled_modified_bessel_k1", _scipy("k1e"), low=0.05, high=8.0, differentiable=False),
    _unary(
        "spherical_bessel_j0",
        _scipy("spherical_jn", order=0),
        low=-6.0,
        high=6.0,
        differentiable=False,
    ),
    _unary(
        "airy_ai", _airy_ai if scipy_special else None, low=-2.0, high=4.0, differentiable=False
    ),
    _polynomial("chebyshev_polynomial_t", "eval_chebyt"),
    _polynomial("chebyshev_polynomial_u", "eval_chebyu"),
    _polynomial("chebyshev_polynomial_v", None),
    _polynomial("chebyshev_polynomial_w", None),
    _polynomial("shifted_chebyshev_polynomial_t", "eval_sh_chebyt", low=-0.1, high=1.1),
    _polynomial("shifted_chebyshev_polynomial_u", "eval_sh_chebyu", low=-0.1, high=1.1),
    _polynomial("shifted_chebyshev_polynomial_v", None, low=-0.1, high=1.1),
    _polynomial("shifted_chebyshev_polynomial_w", None, low=-0.1, high=1.1),
    _polynomial("hermite_polynomial_h", "eval_hermite", low=-3.0, high=3.0),
    _polynomial("hermite_polynomial_he", "eval_hermitenorm", low=-3.0, high=3.0),
    _polynomial("laguerre_polynomial_l", "eval_laguerre", low=-1.0, high=6.0),
    _polynomial("legendre_polynomial_p", "eval_legendre"),
]
