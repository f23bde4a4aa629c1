"""Combinatorics of 1-d tensors: cartesian_prod and combinations, as rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lucid._core.tensor import _wrap
from lucid.ops._common import check_tensors
from lucid.ops.indexing import index_select
from lucid.ops.joining import stack
from lucid.ops.shape import _tensor_list, flatten, meshgrid

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = [
    "cartesian_prod", "combinations",
]  # fmt: skip


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one entry from each 1-d tensor, as rows (itertools.product order)."""
    tensors = _tensor_list(tensors)
    for tensor in tensors:
        check_tensors(tensor)
        if tensor._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(tensor._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([flatten(grid) for grid in grids], dim=1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every length-r combination of the entries of a 1-d tensor (itertools.combinations, or
    combinations_with_replacement), as rows."""
    check_tensors(input)
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(np.zeros((0,), input._data.dtype))
    size = input._data.shape[0]
    # all r-tuples of positions, kept where they increase (or never decrease): lexicographic
    # order, as itertools gives
    positions = np.indices((size,) * r).reshape(r, -1)
    steps = np.diff(positions, axis=0)
    keep = np.all(steps >= 0 if with_replacement else steps > 0, axis=0)
    chosen = positions[:, keep]
    columns = [index_select(input, 0, _wrap(chosen[k].astype(np.int64))) for k in range(r)]
    return stack(columns, dim=1)
