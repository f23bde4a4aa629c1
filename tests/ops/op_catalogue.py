"""The op catalogue: one row per op; tests/ops/test_op_catalogue.py turns each row into checks.

Each row yields: forward vs NumPy, gradcheck and gradgradcheck in float64, parity with
PyTorch (values and gradients) in float32 and float64, and an extreme-value case (0, ±1e30,
±inf, nan, denormals) compared with PyTorch's result. A row may also list error inputs
(`ErrorInput`, as PyTorch's OpInfo `error_inputs`): invalid calls and the error PyTorch gives.

Rows are grouped by op family in the sibling `catalogue_*.py` modules and joined here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class ErrorInput:
    """An invalid call of a row's op: `op(*inputs, **kwargs)` raises `error_type` matching `match`.

    Each input is a shape (a float64 tensor of that shape, uniform in [-1, 1)), an array (a
    tensor of it), a list of those (a list of tensors) or any other value, passed as it is.
    The row's own `kwargs` are not used. `match` is a regex searched in the message, written
    with lucid's names: PyTorch's message is checked with "torch" read as "lucid". Where
    lucid's error is not yet PyTorch's, `known_gap` says how it differs, and lucid's side of
    the check is an expected failure (strict: it fails once lucid follows PyTorch).
    """

    inputs: Sequence[Any]
    error_type: type[Exception]
    match: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    known_gap: str = ""

    def __str__(self) -> str:
        return f"{self.error_type.__name__}: {self.match}"


@dataclass
class OpCase:
    """One op under test.

    `op(*tensors, **kwargs)` is lucid's call and `torch_op(*tensors, **kwargs)` PyTorch's
    (given torch tensors); `reference(*arrays, **kwargs)` is the NumPy reference of the
    forward (None when NumPy has no direct equivalent; torch parity still applies).
    Inputs are float arrays of `shapes`, uniform in [low, high), unless `make_inputs(rng,
    dtype)` builds them (for index tensors, masks, positive-definite matrices, ...).
    Only the inputs listed in `grad_inputs` (default: all float inputs) get gradients.
    """

    name: str
    op: Callable[..., Any]
    torch_op: Callable[..., Any] | None
    reference: Callable[..., Any] | None = None
    shapes: Sequence[tuple[int, ...]] = ((3, 4),)
    kwargs: dict[str, Any] = field(default_factory=dict)
    low: float = -2.0
    high: float = 2.0
    make_inputs: Callable[[np.random.Generator, np.dtype], list[np.ndarray]] | None = None
    grad_inputs: Sequence[int] | None = None
    differentiable: bool = True
    gradgrad: bool = True
    extremes: bool = True
    # Tolerances for float32 parity with PyTorch (float64 parity uses 1e-10 / 1e-8).
    rtol32: float = 1e-5
    atol32: float = 1e-6
    # Output index to compare when the op returns a tuple (values, indices) etc.
    output_index: int | None = None
    # The op sums products of its float inputs and float coefficients (reductions, averages,
    # contractions, convolutions): on extreme values its result depends on summation order,
    # which the extreme-value check then allows for (see test_extreme_values_match_torch).
    sums: bool = False
    # Invalid calls and the error PyTorch raises for each (ErrorInput).
    error_inputs: Sequence[ErrorInput] = ()
    # Why the row has no float16/bfloat16 parity columns, where its family has them; and why
    # it has them but not the float16 extreme-value one.
    low_precision_skip: str = ""
    float16_extremes_skip: str = ""
    # Why it has them but not the bfloat16 extreme-value one.
    bfloat16_extremes_skip: str = ""
    # Why the row has no float32 extreme-value column (one whose float32 column runs in
    # complex64, where PyTorch's vectorised kernels depend on the CPU at denormals).
    float32_extremes_skip: str = ""
    # Why its float16/bfloat16 columns run PyTorch with oneDNN off (empty: as PyTorch chooses).
    low_precision_without_onednn: str = ""

    def __str__(self) -> str:
        return self.name


# Error inputs many rows share.
BROADCAST_MISMATCH = ErrorInput(
    [(3, 4), (5,)],
    RuntimeError,
    r"The size of tensor a \(4\) must match the size of "
    r"tensor b \(5\) at non-singleton dimension 1",
)


def dim_out_of_range(shapes: Sequence[tuple[int, ...]] = ((3, 4),), **kwargs: Any) -> ErrorInput:
    """A dim of 2 (in `kwargs`) on a 2-D input."""
    return ErrorInput(
        list(shapes),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
        kwargs,
    )


def _family_rows() -> list[OpCase]:
    from tests.ops import (
        catalogue_arithmetic,
        catalogue_complex,
        catalogue_convolution,
        catalogue_functional,
        catalogue_indexing,
        catalogue_indices,
        catalogue_inplace,
        catalogue_linalg,
        catalogue_loss,
        catalogue_nn,
        catalogue_normalization,
        catalogue_pointwise,
        catalogue_reduction,
        catalogue_sampling,
        catalogue_selection,
        catalogue_shape,
        catalogue_special,
    )

    return [
        *catalogue_arithmetic.ROWS,
        *catalogue_pointwise.ROWS,
        *catalogue_reduction.ROWS,
        *catalogue_shape.ROWS,
        *catalogue_nn.ROWS,
        *catalogue_convolution.ROWS,
        *catalogue_normalization.ROWS,
        *catalogue_loss.ROWS,
        *catalogue_sampling.ROWS,
        *catalogue_linalg.ROWS,
        *catalogue_complex.ROWS,
        *catalogue_selection.ROWS,
        *catalogue_indexing.ROWS,
        *catalogue_inplace.ROWS,
        *catalogue_functional.ROWS,
        *catalogue_indices.ROWS,
        *catalogue_special.ROWS,
    ]


CATALOGUE: list[OpCase] = _family_rows()
