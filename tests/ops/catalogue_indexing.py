"""Op catalogue rows: the index and scatter ops (index_add/copy/fill/reduce, index_put, put,
scatter_reduce, masked_scatter, select/slice/diagonal_scatter, diag_embed, take_along_dim)."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import ErrorInput, OpCase, dim_out_of_range
from tests.torch_oracle import torch

_INDEX = np.array([0, 2, 2, 3, 0], dtype=np.int64)  # repeats on purpose
_SCATTER_INDEX = np.array([[1, 0, 3], [1, 1, 0], [3, 0, 3]], dtype=np.int64)
_MASK = np.array(
    [[True, False, True], [False, False, True], [True, True, False], [False, True, True]]
)


def _floats(rng: np.random.Generator, dtype: np.dtype, *shape: int) -> np.ndarray:
    return rng.uniform(-2.0, 2.0, shape).astype(dtype)


def _inputs(*parts: Any) -> Any:
    """make_inputs for float arrays (given by shape tuples) and fixed arrays, in order."""

    def make_inputs(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [
            part.copy() if isinstance(part, np.ndarray) else _floats(rng, dtype, *part)
            for part in parts
        ]

    return make_inputs


def _long(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64)


# ------------------------------------------------------------ NumPy references, loop by loop
def _slot(dim: int, position: int) -> tuple:
    return (slice(None),) * dim + (position,)


def _np_index_add(a: np.ndarray, index: np.ndarray, source: np.ndarray, dim: int,
                  alpha: float = 1.0) -> np.ndarray:  # fmt: skip
    result = a.copy()
    for k, position in enumerate(index):
        result[_slot(dim, position)] += alpha * source[_slot(dim, k)]
    return result


def _np_index_copy(a: np.ndarray, index: np.ndarray, source: np.ndarray, dim: int) -> np.ndarray:
    result = a.copy()
    for k, position in enumerate(index):
        result[_slot(dim, position)] = source[_slot(dim, k)]
    return result


def _np_index_fill(a: np.ndarray, index: np.ndarray, value: Any, dim: int) -> np.ndarray:
    result = a.copy()
    for position in index.reshape(-1):
        result[_slot(dim, position)] = value
    return result


_NP_REDUCE = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min,
}  # fmt: skip


def _np_scatter_reduce(a: np.ndarray, index: np.ndarray, src: np.ndarray, dim: int, reduce: str,
                       include_self: bool = True) -> np.ndarray:  # fmt: skip
    """Each target entry reduced over its own value (when included) and every src value sent
    to it, one entry at a time."""
    received: dict[tuple, list] = {}
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[dim] = index[position]
        received.setdefault(tuple(target), []).append(src[position])
    result = a.copy()
    for target, values in received.items():
        if include_self:
            values = [a[target], *values]
        result[target] = _NP_REDUCE[reduce](np.array(values))
    return result


def _np_index_reduce(a: np.ndarray, index: np.ndarray, source: np.ndarray, dim: int,
                     reduce: str, include_self: bool = True) -> np.ndarray:  # fmt: skip
    shape = [1] * source.ndim
    shape[dim] = -1
    spread = np.broadcast_to(index.reshape(shape), source.shape)
    return _np_scatter_reduce(a, spread, source, dim, reduce, include_self)


def _np_put(a: np.ndarray, index: np.ndarray, source: np.ndarray,
            accumulate: bool = False) -> np.ndarray:  # fmt: skip
    result = a.copy()
    flat = result.reshape(-1)
    for position, value in zip(index.reshape(-1), source.reshape(-1)):
        if accumulate:
            flat[position] += value
        else:
            flat[position] = value
    return result


def _np_masked_scatter(a: np.ndarray, mask: np.ndarray, source: np.ndarray) -> np.ndarray:
    shape = np.broadcast_shapes(a.shape, mask.shape)
    result = np.broadcast_to(a, shape).copy()
    values = iter(source.reshape(-1))
    for position in np.ndindex(*shape):
        if np.broadcast_to(mask, shape)[position]:
            result[position] = next(values)
    return result


def _np_index_put(a: np.ndarray, index: tuple, values: np.ndarray,
                  accumulate: bool = False) -> np.ndarray:  # fmt: skip
    result = a.copy()
    if accumulate:
        np.add.at(result, index, np.broadcast_to(values, result[index].shape))
    else:
        result[index] = values
    return result


def _np_diag_embed(a: np.ndarray, offset: int = 0) -> np.ndarray:
    """The last dim of `a` on diagonal `offset` of two new trailing dims."""
    size = a.shape[-1] + abs(offset)
    result = np.zeros(a.shape[:-1] + (size, size), a.dtype)
    for k in range(a.shape[-1]):
        row, col = (k, k + offset) if offset >= 0 else (k - offset, k)
        result[..., row, col] = a[..., k]
    return result


def _np_diagonal_scatter(a: np.ndarray, src: np.ndarray, offset: int = 0) -> np.ndarray:
    result = a.copy()
    for k in range(src.shape[-1]):
        row, col = (k, k + offset) if offset >= 0 else (k - offset, k)
        result[row, col] = src[k]
    return result


# ---------------------------------------------------------------------------- error inputs
_FLOAT_SOURCE_INT_SELF = np.zeros((4, 3), dtype=np.int64)


def _index_add_errors(name: str) -> list[ErrorInput]:
    return [
        ErrorInput(
            [(4, 3), _long([0, 1]), (3, 3)],
            RuntimeError,
            rf"{name}\(\): Number of indices \(2\) should be equal to source.size\(dim\): "
            r"\(3\), for dim: 0",
        ),
        ErrorInput([(4, 3), _long([0, 4]), (2, 3)], IndexError, r"^index out of range in self$"),
        ErrorInput(
            [(4, 3), np.array([0.0, 1.0]), (2, 3)],
            RuntimeError,
            rf"{name}\(\): Expected dtype int32/int64 for index but got: Double",
        ),
        ErrorInput(
            [(4, 3), _long([[0, 1]]), (2, 3)],
            IndexError,
            rf"{name}\(\): Index is supposed to be a vector, but got dim: 2 with type: Long and "
            r"size: \[1, 2\]",
        ),
        ErrorInput(
            [(4, 3), _long([0, 1]), (2, 2)],
            RuntimeError,
            r"source tensor shape must match self tensor shape, excluding the specified "
            r"dimension. Got self.shape = \[4, 3\] source.shape = \[2, 2\]",
        ),
        ErrorInput(
            [_FLOAT_SOURCE_INT_SELF, _long([0, 1]), (2, 3)],
            RuntimeError,
            rf"{name}\(\): self \(Long\) and source \(Double\) must have the same scalar type",
        ),
    ]


_SCATTER_REDUCE_ERRORS = [
    ErrorInput(
        [(4, 3), _SCATTER_INDEX, (3, 3)],
        RuntimeError,
        "reduce argument must be either sum, prod, mean, amax or amin, got add",
        {"reduce": "add"},
    ),
    ErrorInput(
        [(4, 3), _long([[0, 4]]), (1, 2)],
        RuntimeError,
        "index 4 is out of bounds for dimension 0 with size 4",
        {"reduce": "sum"},
    ),
    ErrorInput(
        [(4, 3), _long([0, 1]), (2,)],
        RuntimeError,
        "Index tensor must have the same number of dimensions as self tensor",
        {"reduce": "sum"},
    ),
    ErrorInput(
        [(4, 3), _long([[0, 1]]), (1, 1)],
        RuntimeError,
        r"Expected index \[1, 2\] to be no larger than self \[4, 3\] apart from dimension 0 "
        r"and to be no larger size than src \[1, 1\]",
        {"reduce": "sum"},
    ),
    ErrorInput(
        [_FLOAT_SOURCE_INT_SELF, _long([[0, 1]]), (1, 2)],
        RuntimeError,
        r"scatter\(\): Expected self.dtype to be equal to src.dtype",
        {"reduce": "sum"},
    ),
]


def _index_reduce_call(x: Any, index: Any, source: Any, reduce: str = "prod") -> Any:
    return x.index_reduce(0, index, source, reduce)


def _scatter_reduce_rows() -> list[OpCase]:
    rows = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            suffix = "" if include_self else "_exclude_self"
            rows.append(
                OpCase(
                    f"scatter_reduce_{reduce}{suffix}",
                    lambda x, i, s, reduce=reduce, inc=include_self: lucid.scatter_reduce(
                        x, 0, i, s, reduce, include_self=inc
                    ),
                    lambda x, i, s, reduce=reduce, inc=include_self: torch.scatter_reduce(
                        x, 0, i, s, reduce, include_self=inc
                    ),
                    reference=lambda a, i, s, r=reduce, inc=include_self: _np_scatter_reduce(
                        a, i, s, 0, r, inc
                    ),
                    make_inputs=_inputs((4, 3), _SCATTER_INDEX, (3, 3)),
                    sums=reduce in ("sum", "mean"),
                    error_inputs=_SCATTER_REDUCE_ERRORS if reduce == "sum" and include_self else (),
                )
            )
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            suffix = "" if include_self else "_exclude_self"
            rows.append(
                OpCase(
                    f"index_reduce_{reduce}{suffix}",
                    lambda x, i, s, r=reduce, inc=include_self: x.index_reduce(
                        1, i, s, r, include_self=inc
                    ),
                    lambda x, i, s, r=reduce, inc=include_self: x.index_reduce(
                        1, i, s, r, include_self=inc
                    ),
                    reference=lambda a, i, s, r=reduce, inc=include_self: _np_index_reduce(
                        a, i, s, 1, r, inc
                    ),
                    make_inputs=_inputs((3, 4), _INDEX, (3, 5)),
                    sums=reduce == "mean",
                )
            )
    return rows


ROWS: list[OpCase] = [
    # ------------------------------------------------------------------ index_add
    OpCase(
        "index_add",
        lambda x, i, s: lucid.index_add(x, 0, i, s, alpha=2.0),
        lambda x, i, s: torch.index_add(x, 0, i, s, alpha=2.0),
        reference=lambda a, i, s: _np_index_add(a, i, s, 0, 2.0),
        make_inputs=_inputs((4, 3), _INDEX, (5, 3)),
        sums=True,
        error_inputs=_index_add_errors("index_add_"),
    ),
    OpCase(
        "index_add_dim1",
        lambda x, i, s, dim=1: x.index_add(dim, i, s),
        lambda x, i, s, dim=1: x.index_add(dim, i, s),
        reference=lambda a, i, s: _np_index_add(a, i, s, 1),
        make_inputs=_inputs((2, 4, 3), _INDEX, (2, 5, 3)),
        sums=True,
        error_inputs=[dim_out_of_range([(4, 3), _long([0]), (1, 3)], dim=2)],
    ),
    OpCase(
        "index_add_inplace",
        lambda x, i, s: x.clone().index_add_(0, i, s, alpha=-0.5),
        lambda x, i, s: x.clone().index_add_(0, i, s, alpha=-0.5),
        reference=lambda a, i, s: _np_index_add(a, i, s, 0, -0.5),
        make_inputs=_inputs((4,), _INDEX, (5,)),
        sums=True,
    ),
    # ----------------------------------------------------------------- index_copy
    OpCase(
        "index_copy",
        lambda x, i, s: lucid.index_copy(x, 0, i, s),
        lambda x, i, s: torch.index_copy(x, 0, i, s),
        reference=lambda a, i, s: _np_index_copy(a, i, s, 0),
        make_inputs=_inputs((4, 3), _long([3, 0]), (2, 3)),
        error_inputs=[
            ErrorInput(
                [(4, 3), _long([0, 4]), (2, 3)],
                IndexError,
                r"index_copy_\(\): index 4 is out of bounds for dimension 0 with size 4",
            ),
            ErrorInput(
                [(4, 3), _long([0, 1]), (3, 3)],
                IndexError,
                r"index_copy_\(\): Number of indices \(2\) should be equal to "
                r"source.size\(dim\) \(3\)",
            ),
            ErrorInput(
                [(4, 3), np.array([0, 1], dtype=np.int32), (2, 3)],
                RuntimeError,
                r"index_copy_\(\): Expected a long tensor for index, but got Int",
            ),
            ErrorInput(
                [(4, 3), _long(2), (3,)],
                IndexError,
                r"index_copy_\(\): When source and destination are not scalars, their "
                r"dimensionality must match. Source dimensionality \(1\), destination "
                r"dimensionality \(2\)",
            ),
            ErrorInput(
                [(4, 3), _long([0, 1]), (2, 2)],
                RuntimeError,
                r"index_copy_\(\): Source/destination tensor must have same slice shapes. "
                r"Destination slice shape: 3 at dimension 0 and source slice shape: 2 at "
                r"dimension 0.",
            ),
            ErrorInput(
                [_FLOAT_SOURCE_INT_SELF, _long([0, 1]), (2, 3)],
                RuntimeError,
                r"index_copy_\(\): self and source expected to have the same dtype, but got "
                r"\(self\) Long and \(source\) Double",
            ),
        ],
    ),
    OpCase(
        "index_copy_inplace",
        lambda x, i, s: x.clone().index_copy_(1, i, s),
        lambda x, i, s: x.clone().index_copy_(1, i, s),
        reference=lambda a, i, s: _np_index_copy(a, i, s, 1),
        make_inputs=_inputs((3, 4), _long([2, 1, 0]), (3, 3)),
    ),
    # ----------------------------------------------------------------- index_fill
    OpCase(
        "index_fill",
        lambda x, i: lucid.index_fill(x, 1, i, -1.5),
        lambda x, i: torch.index_fill(x, 1, i, -1.5),
        reference=lambda a, i: _np_index_fill(a, i, -1.5, 1),
        make_inputs=_inputs((3, 4), _long([0, -1, 0])),
        error_inputs=[
            ErrorInput(
                [(3, 4), np.array([0, 1], dtype=np.int32)],
                IndexError,
                r"index_fill_\(\): Expected dtype int64 for index.",
            ),
            ErrorInput(
                [(3, 4), _long([0, 4])],
                IndexError,
                "index 4 is out of bounds for dimension 1 with size 4",
            ),
            ErrorInput([(3, 4), _long([[0, 1]])], RuntimeError, "Index has to be a vector/scalar"),
        ],
    ),
    OpCase(
        "index_fill_tensor_value",
        lambda x, i, v: x.index_fill(0, i, v),
        lambda x, i, v: x.index_fill(0, i, v),
        reference=lambda a, i, v: _np_index_fill(a, i, v, 0),
        make_inputs=_inputs((4, 3), _long([2, 0, 2]), ()),
    ),
    OpCase(
        "index_fill_inplace",
        lambda x, i: x.clone().index_fill_(0, i, 2.0),
        lambda x, i: x.clone().index_fill_(0, i, 2.0),
        reference=lambda a, i: _np_index_fill(a, i, 2.0, 0),
        make_inputs=_inputs((4, 3), _long(1)),
    ),
    # -------------------------------------------------------- index_reduce / scatter_reduce
    *_scatter_reduce_rows(),
    OpCase(
        "index_reduce_errors",
        _index_reduce_call,
        _index_reduce_call,
        reference=lambda a, i, s: _np_index_reduce(a, i, s, 0, "prod"),
        make_inputs=_inputs((4, 3), _INDEX, (5, 3)),
        error_inputs=[
            ErrorInput(
                [(4, 3), _INDEX, (5, 3)],
                RuntimeError,
                r"index_reduce\(\): Expected reduce to be one of prod, mean, amax or amin but "
                r"got sum.",
                {"reduce": "sum"},
            ),
            *_index_add_errors("index_reduce_"),
        ],
    ),
    OpCase(
        "index_reduce_inplace",
        lambda x, i, s: x.clone().index_reduce_(0, i, s, "amax", include_self=False),
        lambda x, i, s: x.clone().index_reduce_(0, i, s, "amax", include_self=False),
        reference=lambda a, i, s: _np_index_reduce(a, i, s, 0, "amax", False),
        make_inputs=_inputs((4, 3), _INDEX, (5, 3)),
    ),
    OpCase(
        "scatter_reduce_inplace",
        lambda x, i, s: x.clone().scatter_reduce_(1, i, s, "prod"),
        lambda x, i, s: x.clone().scatter_reduce_(1, i, s, "prod"),
        reference=lambda a, i, s: _np_scatter_reduce(a, i, s, 1, "prod"),
        make_inputs=_inputs((3, 4), _SCATTER_INDEX, (3, 3)),
    ),
    OpCase(
        "scatter_reduce_wider_src",
        lambda x, i, s: x.scatter_reduce(0, i, s, "amax"),
        # PyTorch's backward fails on a src larger than the index (its gradients get the
        # index's shape), so this row checks against NumPy and gradcheck only.
        None,
        reference=lambda a, i, s: _np_scatter_reduce(a, i, s[:3, :3], 0, "amax"),
        make_inputs=_inputs((4, 3), _SCATTER_INDEX, (4, 3)),
    ),
    # --------------------------------------------------------- scatter's other forms
    OpCase(
        "scatter_inplace",
        lambda x, i, s: x.clone().scatter_(0, i, s),
        lambda x, i, s: x.clone().scatter_(0, i, s),
        make_inputs=_inputs((4, 3), _long([[1, 0, 3], [2, 3, 0]]), (2, 3)),
    ),
    OpCase(
        "scatter_inplace_value",
        lambda x, i: x.clone().scatter_(1, i, value=-2.0),
        lambda x, i: x.clone().scatter_(1, i, value=-2.0),
        make_inputs=_inputs((4, 3), _long([[1], [0], [2], [2]])),
    ),
    OpCase(
        "scatter_method_value",
        lambda x, i: x.scatter(0, i, value=0.25),
        lambda x, i: x.scatter(0, i, value=0.25),
        make_inputs=_inputs((4, 3), _long([[1, 0, 3]])),
    ),
    OpCase(
        "scatter_add_inplace",
        lambda x, i, s: x.clone().scatter_add_(0, i, s),
        lambda x, i, s: x.clone().scatter_add_(0, i, s),
        make_inputs=_inputs((4, 3), _SCATTER_INDEX, (3, 3)),
        sums=True,
    ),
    OpCase(
        "scatter_reduce_argument_add",
        lambda x, i, s: x.scatter(0, i, s, reduce="add"),
        lambda x, i, s: x.scatter(0, i, s, reduce="add"),
        reference=lambda a, i, s: _np_scatter_reduce(a, i, s, 0, "sum"),
        make_inputs=_inputs((4, 3), _SCATTER_INDEX, (3, 3)),
        differentiable=False,
        sums=True,
    ),
    OpCase(
        "scatter_reduce_argument_multiply",
        lambda x, i, s, reduce="multiply": x.clone().scatter_(0, i, s, reduce=reduce),
        lambda x, i, s, reduce="multiply": x.clone().scatter_(0, i, s, reduce=reduce),
        reference=lambda a, i, s: _np_scatter_reduce(a, i, s, 0, "prod"),
        make_inputs=_inputs((4, 3), _SCATTER_INDEX, (3, 3)),
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(4, 3), _SCATTER_INDEX, (3, 3)],
                RuntimeError,
                "reduce argument must be either add or multiply.",
                {"reduce": "mean"},
            ),
        ],
    ),
    # ------------------------------------------------------------------ index_put
    OpCase(
        "index_put",
        lambda x, i, v: lucid.index_put(x, (i,), v),
        lambda x, i, v: torch.index_put(x, (i,), v),
        reference=lambda a, i, v: _np_index_put(a, (i,), v),
        make_inputs=_inputs((4, 3), _long([3, 0]), (3,)),
        error_inputs=[
            ErrorInput(
                [(4, 3), _long([4]), (3,)],
                IndexError,
                "index 4 is out of bounds for dimension 0 with size 4",
            ),
            ErrorInput(
                [(4, 3), np.array([0.0]), (3,)],
                IndexError,
                "tensors used as indices must be long, int, byte or bool tensors",
            ),
            ErrorInput(
                [(4, 3), np.array([1, 0, 1, 0], dtype=np.uint8), ()],
                RuntimeError,
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char",
            ),
            ErrorInput(
                [(4, 3), _long([0, 1]), (2,)],
                RuntimeError,
                r"shape mismatch: value tensor of shape \[2\] cannot be broadcast to indexing "
                r"result of shape \[2, 3\]",
            ),
            ErrorInput(
                [(4, 3), _long([0, 1]), np.array([1, 2, 3])],
                RuntimeError,
                "Index put requires the source and destination dtypes match, got Double for "
                "the destination and Long for the source.",
            ),
        ],
    ),
    OpCase(
        "index_put_accumulate",
        lambda x, i, j, v: x.index_put((i, j), v, accumulate=True),
        lambda x, i, j, v: x.index_put((i, j), v, accumulate=True),
        reference=lambda a, i, j, v: _np_index_put(a, (i, j), v, True),
        make_inputs=_inputs((4, 3), _long([[0], [3], [0]]), _long([1, 1, 2, 1]), (1, 4)),
        sums=True,
    ),
    OpCase(
        "index_put_mask",
        lambda x, m, v: x.index_put((m,), v),
        lambda x, m, v: x.index_put((m,), v),
        reference=lambda a, m, v: _np_index_put(a, (m,), v),
        make_inputs=_inputs((4, 3), _MASK, ()),
    ),
    OpCase(
        "index_put_inplace",
        lambda x, i, v: x.clone().index_put_((i,), v, True),
        lambda x, i, v: x.clone().index_put_((i,), v, True),
        reference=lambda a, i, v: _np_index_put(a, (i,), v, True),
        make_inputs=_inputs((4, 3), _INDEX, (5, 3)),
        sums=True,
    ),
    # ------------------------------------------------------------------------ put
    OpCase(
        "put",
        lambda x, i, s: lucid.put(x, i, s),
        lambda x, i, s: torch.put(x, i, s),
        reference=lambda a, i, s: _np_put(a, i, s),
        make_inputs=_inputs((4, 3), _long([[0, -1], [5, 7]]), (2, 2)),
        error_inputs=[
            ErrorInput(
                [(4, 3), _long([0, 12]), (2,)],
                IndexError,
                r"out of range: tried to access index 12 on a tensor of 12 elements.",
            ),
            ErrorInput(
                [(4, 3), _long([0, 1]), (3,)],
                IndexError,
                r"put_\(\): Expected source and index to have the same number of elements, but "
                r"got source.numel\(\) = 3, index.numel\(\) = 2",
            ),
            ErrorInput(
                [(4, 3), np.array([0, 1], dtype=np.int32), (2,)],
                RuntimeError,
                r"put_\(\): Expected a long tensor for index, but got Int",
            ),
            ErrorInput(
                [(4, 3), _long([0, 1]), np.array([1, 2])],
                RuntimeError,
                r"put_\(\): self and source expected to have the same dtype, but got "
                r"self.dtype = Double and source.dtype = Long",
            ),
        ],
    ),
    OpCase(
        "put_accumulate",
        lambda x, i, s: x.put(i, s, accumulate=True),
        lambda x, i, s: x.put(i, s, accumulate=True),
        reference=lambda a, i, s: _np_put(a, i, s, True),
        make_inputs=_inputs((4, 3), _long([0, 11, 0, 4]), (4,)),
        sums=True,
    ),
    OpCase(
        "put_inplace",
        lambda x, i, s: x.clone().put_(i, s),
        lambda x, i, s: x.clone().put_(i, s),
        reference=lambda a, i, s: _np_put(a, i, s),
        make_inputs=_inputs((2, 3), _long([4, 1, 2]), (3,)),
    ),
    # -------------------------------------------------------------- masked_scatter
    OpCase(
        "masked_scatter",
        lambda x, m, s: lucid.masked_scatter(x, m, s),
        lambda x, m, s: torch.masked_scatter(x, m, s),
        reference=_np_masked_scatter,
        make_inputs=_inputs((4, 3), _MASK, (3, 4)),
        error_inputs=[
            ErrorInput(
                [(4, 3), _MASK, (5,)],
                RuntimeError,
                "Number of elements of source < number of ones in mask",
            ),
            ErrorInput(
                [(4, 3), _MASK.astype(np.int64), (12,)],
                RuntimeError,
                "masked_scatter_ only supports boolean masks, but got mask with dtype Long",
            ),
            ErrorInput(
                [(4, 3), _MASK, np.arange(12)],
                RuntimeError,
                "masked_scatter: expected self and source to have same dtypes but gotDouble and "
                "Long",
            ),
            ErrorInput(
                [(4, 3), _MASK[:, :2], (12,)],
                RuntimeError,
                r"The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                r"non-singleton dimension 1",
            ),
        ],
    ),
    OpCase(
        "masked_scatter_broadcast",
        lambda x, m, s: x.masked_scatter(m, s),
        lambda x, m, s: x.masked_scatter(m, s),
        reference=_np_masked_scatter,
        make_inputs=_inputs((4, 3), _MASK[None, :1].repeat(2, 0), (4, 4)),
    ),
    OpCase(
        "masked_scatter_inplace",
        lambda x, m, s: x.clone().masked_scatter_(m, s),
        lambda x, m, s: x.clone().masked_scatter_(m, s),
        reference=_np_masked_scatter,
        make_inputs=_inputs((4, 3), _MASK[1], (2, 5)),
        error_inputs=[
            ErrorInput(
                [(3,), np.ones((2, 3), dtype=bool), (6,)],
                RuntimeError,
                r"expand\(CPUBoolType\{\[2, 3\]\}, size=\[3\]\): the number of sizes provided "
                r"\(1\) must be greater or equal to the number of dimensions in the tensor \(2\)",
            ),
        ],
    ),
    # ------------------------------------------------------- select / slice / diagonal
    OpCase(
        "select_scatter",
        lambda x, s, dim=1, index=-1: lucid.select_scatter(x, s, dim, index),
        lambda x, s, dim=1, index=-1: torch.select_scatter(x, s, dim, index),
        reference=lambda a, s: np.concatenate([a[:, :-1], s[:, None]], 1),
        shapes=[(4, 3), (4,)],
        error_inputs=[
            ErrorInput(
                [(4, 3), (3,)],
                RuntimeError,
                r"expected src to have a size equal to the slice of self. src size = \[3\], "
                r"slice size = \[4\]",
                {"dim": 1, "index": 0},
            ),
            ErrorInput(
                [(4, 3), (3,)],
                IndexError,
                r"select\(\): index 4 out of range for tensor of size \[4, 3\] at dimension 0",
                {"dim": 0, "index": 4},
            ),
        ],
    ),
    OpCase(
        "slice_scatter",
        lambda x, s, start=0, step=2: lucid.slice_scatter(x, s, 1, start, None, step),
        lambda x, s, start=0, step=2: torch.slice_scatter(x, s, 1, start, None, step),
        shapes=[(4, 5), (4, 3)],
        error_inputs=[
            ErrorInput(
                [(4, 5), (4, 2)],
                RuntimeError,
                r"expected src to have a size equal to the slice of self. src size = \[4, 2\], "
                r"slice size = \[4, 3\]",
            ),
            ErrorInput([(4, 5), (4, 3)], RuntimeError, "slice step must be positive", {"step": 0}),
        ],
    ),
    OpCase(
        "slice_scatter_end",
        lambda x, s: x.slice_scatter(s, start=-3, end=-1),
        lambda x, s: x.slice_scatter(s, start=-3, end=-1),
        reference=lambda a, s: np.concatenate([a[:1], s, a[3:]]),
        shapes=[(4, 3), (2, 3)],
    ),
    OpCase(
        "diagonal_scatter",
        lambda x, s, dim1=0, dim2=1: lucid.diagonal_scatter(x, s, -1, dim1, dim2),
        lambda x, s, dim1=0, dim2=1: torch.diagonal_scatter(x, s, -1, dim1, dim2),
        reference=lambda a, s: _np_diagonal_scatter(a, s, -1),
        shapes=[(4, 3), (3,)],
        error_inputs=[
            ErrorInput(
                [(4, 3), (4,)],
                RuntimeError,
                r"expected src to have a size equal to the slice of self. src size = \[4\], "
                r"slice size = \[3\]",
            ),
            ErrorInput(
                [(4, 3), (3,)],
                RuntimeError,
                "diagonal dimensions cannot be identical 1, 1",
                {"dim1": 1, "dim2": 1},
            ),
        ],
    ),
    OpCase(
        "diagonal_scatter_dims",
        lambda x, s: x.diagonal_scatter(s, 1, 2, 0),
        lambda x, s: x.diagonal_scatter(s, 1, 2, 0),
        shapes=[(3, 2, 4), (2, 2)],
    ),
    OpCase(
        "diag_embed",
        lambda x, dim1=-2, dim2=-1: lucid.diag_embed(x, 1, dim1, dim2),
        lambda x, dim1=-2, dim2=-1: torch.diag_embed(x, 1, dim1, dim2),
        reference=lambda a: _np_diag_embed(a, 1),
        shapes=[(2, 3)],
        error_inputs=[
            ErrorInput(
                [(2, 3)],
                RuntimeError,
                "diagonal dimensions cannot be identical 1, 1",
                {"dim1": 1, "dim2": 1},
            ),  # fmt: skip
            ErrorInput(
                [(2, 3)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)",
                {"dim1": 3},
            ),
        ],
    ),
    OpCase(
        "diag_embed_dims",
        lambda x: x.diag_embed(-2, 0, 2),
        lambda x: x.diag_embed(-2, 0, 2),
        shapes=[(3, 2)],
    ),
    # -------------------------------------------------------------- take_along_dim
    OpCase(
        "take_along_dim",
        lambda x, i, dim=1: lucid.take_along_dim(x, i, dim),
        lambda x, i, dim=1: torch.take_along_dim(x, i, dim),
        reference=lambda a, i: np.take_along_axis(a, i, 1),
        make_inputs=_inputs((4, 3), _long([[0, 2, -1, 0]])),
        error_inputs=[
            ErrorInput(
                [(4, 3), _long([0, 1])],
                RuntimeError,
                r"lucid.take_along_dim\(\): input and indices should have the same number of "
                r"dimensions, but got 2 dimensions for input, and 1 dimensions for indices",
                {"dim": 1},
            ),
            ErrorInput(
                [(4, 3), np.zeros((1, 1), dtype=np.int32)],
                RuntimeError,
                r"lucid.take_along_dim\(\): dtype of indices should be Long but got Int",
                {"dim": 1},
            ),
            ErrorInput(
                [(4, 3), np.zeros((2, 1), dtype=np.int64)],
                RuntimeError,
                r"The size of tensor a \(4\) must match the size of tensor b \(2\) at "
                r"non-singleton dimension 0",
                {"dim": 1},
            ),
        ],
    ),
    OpCase(
        "take_along_dim_broadcast",
        lambda x, i: x.take_along_dim(i, 1),
        lambda x, i: x.take_along_dim(i, 1),
        reference=lambda a, i: np.take_along_axis(
            np.broadcast_to(a, (2, 4, 3)), np.broadcast_to(i, (2, 2, 3)), 1
        ),
        make_inputs=_inputs((1, 4, 3), _long([[[3], [1]], [[0], [0]]])),
    ),
    OpCase(
        "take_along_dim_flat",
        lambda x, i: lucid.take_along_dim(x, i),
        lambda x, i: torch.take_along_dim(x, i),
        reference=lambda a, i: a.reshape(-1)[i.reshape(-1)],
        make_inputs=_inputs((4, 3), _long([[11, 0], [4, 4]])),
    ),
]
