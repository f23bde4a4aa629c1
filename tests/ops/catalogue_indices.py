"""Op catalogue rows: ops whose results are indices, masks or shapes computed from values or
sizes (broadcast_shapes, nonzero, argwhere, isin, isreal, tril_indices, triu_indices,
unravel_index). None has a gradient."""

from __future__ import annotations

import numpy as np

import lucid
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import torch


def _with_zeros(*shapes: tuple[int, ...]):
    """Float inputs drawn from {-2, ..., 2}: zeros to skip, and repeats for isin to find."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.integers(-2, 3, shape).astype(dtype) for shape in shapes]

    return make


def _flat_indices(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.integers(0, 24, (2, 5))]


# Rows without a float input have nothing to round to float16 or bfloat16.
_NO_FLOAT_INPUT = {
    "differentiable": False,
    "extremes": False,
    "low_precision_skip": "no float input",
}

ROWS: list[OpCase] = [
    OpCase(
        "broadcast_shapes",
        lambda: lucid.broadcast_shapes((3, 1), (4,), (2, 1, 1)),
        lambda: torch.broadcast_shapes((3, 1), (4,), (2, 1, 1)),
        lambda: np.broadcast_shapes((3, 1), (4,), (2, 1, 1)),
        shapes=[],
        **_NO_FLOAT_INPUT,
    ),
    OpCase(
        "broadcast_shapes[errors]",
        lucid.broadcast_shapes,
        torch.broadcast_shapes,
        np.broadcast_shapes,
        shapes=[],
        error_inputs=[
            ErrorInput(
                [[3], [4]],
                RuntimeError,
                r"Attempting to broadcast a dimension of length 4 at -1! Mismatching argument "
                r"at index 1 had \[4\]; but expected shape should be broadcastable to \[3\]",
            ),
            ErrorInput(
                [[-1], [2]],
                ValueError,
                r"Attempting to broadcast a dimension with negative length!",
            ),
        ],
        **_NO_FLOAT_INPUT,
    ),
    OpCase(
        "nonzero",
        lucid.nonzero,
        torch.nonzero,
        np.argwhere,
        make_inputs=_with_zeros((3, 4)),
        differentiable=False,
    ),
    OpCase(
        "nonzero[as_tuple]",
        lambda x: lucid.nonzero(x, as_tuple=True),
        lambda x: torch.nonzero(x, as_tuple=True),
        np.nonzero,
        make_inputs=_with_zeros((2, 3, 2)),
        differentiable=False,
    ),
    OpCase(
        "argwhere",
        lucid.argwhere,
        torch.argwhere,
        np.argwhere,
        make_inputs=_with_zeros((2, 5)),
        differentiable=False,
    ),
    OpCase(
        "isin",
        lucid.isin,
        torch.isin,
        np.isin,
        make_inputs=_with_zeros((3, 4), (3,)),
        differentiable=False,
    ),
    OpCase(
        "isin[invert scalar]",
        lambda x: lucid.isin(x, 1.0, invert=True),
        lambda x: torch.isin(x, 1.0, invert=True),
        lambda x: np.isin(x, 1.0, invert=True),
        make_inputs=_with_zeros((3, 4)),
        differentiable=False,
    ),
    OpCase("isreal", lucid.isreal, torch.isreal, np.isreal, differentiable=False),
    OpCase(
        "tril_indices",
        lucid.tril_indices,
        torch.tril_indices,
        lambda row, col, offset: np.stack(np.tril_indices(row, offset, col)),
        shapes=[],
        kwargs={"row": 4, "col": 3, "offset": -1},
        error_inputs=[ErrorInput([-1, 3], RuntimeError, "row must be non-negative, got-1")],
        **_NO_FLOAT_INPUT,
    ),
    OpCase(
        "triu_indices",
        lucid.triu_indices,
        torch.triu_indices,
        lambda row, col, offset: np.stack(np.triu_indices(row, offset, col)),
        shapes=[],
        kwargs={"row": 3, "col": 5, "offset": 1},
        error_inputs=[ErrorInput([3, -1], RuntimeError, "col must be non-negative, got-1")],
        **_NO_FLOAT_INPUT,
    ),
    OpCase(
        "unravel_index",
        lucid.unravel_index,
        torch.unravel_index,
        np.unravel_index,
        make_inputs=_flat_indices,
        kwargs={"shape": (2, 3, 4)},
        error_inputs=[
            ErrorInput(
                [(3,), (2, 3)],
                TypeError,
                "expected 'indices' to be integer dtype, but got lucid.float64",
            )
        ],
        **_NO_FLOAT_INPUT,
    ),
]
