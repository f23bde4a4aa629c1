"""Op catalogue rows: the shape and indexing families."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import torch


def _floats(rng: np.random.Generator, dtype: np.dtype, *shape: int) -> np.ndarray:
    return rng.uniform(-2.0, 2.0, shape).astype(dtype)


def _with_index(shape: tuple[int, ...], index: list) -> Any:
    """make_inputs for one float input of `shape` and one fixed int64 index tensor."""

    def make_inputs(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [_floats(rng, dtype, *shape), np.array(index, dtype=np.int64)]

    return make_inputs


def _with_mask(shape: tuple[int, ...], mask_shape: tuple[int, ...]) -> Any:
    """make_inputs for one float input of `shape` and a random bool mask of `mask_shape`."""

    def make_inputs(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [_floats(rng, dtype, *shape), rng.random(mask_shape) < 0.5]

    return make_inputs


def _sorted_reference(dim: int = -1, descending: bool = False, tuple_result: bool = True) -> Any:
    """(values, indices) of a stable sort along `dim` (NaN the largest), as `sort` returns
    them; the indices alone when not `tuple_result` (argsort)."""

    def reference(a: np.ndarray, **kwargs: Any) -> Any:
        if descending:
            last = a.shape[dim] - 1
            indices = last - np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)
        else:
            indices = np.argsort(a, axis=dim, kind="stable")
        if not tuple_result:
            return indices
        return np.take_along_axis(a, indices, dim), indices

    return reference


def _topk_reference(k: int, dim: int = -1, largest: bool = True) -> Any:
    """The first k entries of the stable sort along `dim` (largest first when `largest`)."""
    sort_reference = _sorted_reference(dim, descending=largest)

    def reference(a: np.ndarray, *args: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        return tuple(np.take(part, np.arange(k), axis=dim) for part in sort_reference(a))

    return reference


def _distinct(*shapes: tuple[int, ...]) -> Any:
    """Inputs without ties (a shuffled, scaled range), so the selected indices are unique."""

    def make_inputs(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = []
        for shape in shapes:
            size = int(np.prod(shape))
            values = (rng.permutation(size) - size / 2) * 0.25
            arrays.append(values.reshape(shape).astype(dtype))
        return arrays

    return make_inputs


def _setitem(x: Any, index: Any, value: Any) -> Any:
    """`x[index] = value` on a copy, so the row is a function of its inputs (lucid or torch)."""
    result = x.clone()
    result[index] = value
    return result


def _np_setitem(a: np.ndarray, index: Any, value: Any) -> np.ndarray:
    result = a.copy()
    result[index] = value
    return result


def _masked_fill_inplace(x: Any, mask: Any, value: Any) -> Any:
    result = x.clone()
    result.masked_fill_(mask, value)
    return result


def _np_gather(a: np.ndarray, index: np.ndarray, dim: int) -> np.ndarray:
    return np.take_along_axis(a, index, dim)


def _np_scatter(a: np.ndarray, index: np.ndarray, src: Any, dim: int, add: bool) -> np.ndarray:
    result = a.copy()
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    if isinstance(src, np.ndarray):
        src = src[tuple(slice(0, size) for size in index.shape)]
    if add:
        np.add.at(result, tuple(grid), src)
    else:
        result[tuple(grid)] = src
    return result


def _np_repeat(a: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    return np.tile(a, repeats)


ROWS: list[OpCase] = [
    # ------------------------------------------------------------- reshaping
    OpCase(
        "reshape",
        lambda x: lucid.reshape(x, (4, 3)),
        lambda x: torch.reshape(x, (4, 3)),
        reference=lambda a: a.reshape(4, 3),
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput([(5,)], RuntimeError, r"shape '\[4, 3\]' is invalid for input of size 5")
        ],
    ),
    OpCase(
        "reshape_infer",
        lambda x: x.reshape(-1, 6),
        lambda x: x.reshape(-1, 6),
        reference=lambda a: a.reshape(-1, 6),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "reshape_non_contiguous",
        lambda x: x.t().reshape(12),
        lambda x: x.t().reshape(12),
        reference=lambda a: a.T.reshape(12),
        shapes=[(3, 4)],
    ),
    OpCase(
        "view",
        lambda x: x.view(2, 6),
        lambda x: x.view(2, 6),
        reference=lambda a: a.reshape(2, 6),
        shapes=[(3, 4)],
    ),
    OpCase(
        "view_infer",
        lambda x: x.view(-1),
        lambda x: x.view(-1),
        reference=lambda a: a.reshape(-1),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "flatten",
        lucid.flatten,
        torch.flatten,
        reference=lambda a: a.reshape(-1),
        shapes=[(2, 3, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 4)],
                RuntimeError,
                r"flatten\(\) has invalid args: start_dim cannot come after end_dim",
                {"start_dim": 1, "end_dim": 0},
            )
        ],
    ),
    OpCase(
        "flatten_range",
        lambda x: x.flatten(1, 2),
        lambda x: x.flatten(1, 2),
        reference=lambda a: a.reshape(2, 12, 5),
        shapes=[(2, 3, 4, 5)],
    ),
    OpCase(
        "unflatten",
        lambda x: x.unflatten(1, (2, -1)),
        lambda x: x.unflatten(1, (2, -1)),
        reference=lambda a: a.reshape(3, 2, 2),
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput(
                [(3,)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
            )
        ],
    ),
    OpCase(
        "squeeze",
        lucid.squeeze,
        torch.squeeze,
        reference=np.squeeze,
        shapes=[(3, 1, 4, 1)],
    ),
    OpCase(
        "squeeze_dim",
        lambda x: x.squeeze(1),
        lambda x: x.squeeze(1),
        reference=lambda a: np.squeeze(a, 1),
        shapes=[(3, 1, 4)],
        error_inputs=[
            ErrorInput(
                [(3,)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
            )
        ],
    ),
    OpCase(
        "squeeze_dims",
        lambda x: lucid.squeeze(x, (0, -1)),
        lambda x: torch.squeeze(x, (0, -1)),
        reference=lambda a: np.squeeze(a, (0, 3)),
        shapes=[(1, 3, 4, 1)],
    ),
    OpCase(
        "unsqueeze",
        lambda x: lucid.unsqueeze(x, 1),
        lambda x: torch.unsqueeze(x, 1),
        reference=lambda a: np.expand_dims(a, 1),
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput(
                [()],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
            )
        ],
    ),
    OpCase(
        "unsqueeze_negative",
        lambda x: x.unsqueeze(-1),
        lambda x: x.unsqueeze(-1),
        reference=lambda a: np.expand_dims(a, -1),
        shapes=[(3, 4)],
    ),
    # ------------------------------------------------------------- transposes
    OpCase(
        "transpose",
        lambda x: lucid.transpose(x, 0, 2),
        lambda x: torch.transpose(x, 0, 2),
        reference=lambda a: np.swapaxes(a, 0, 2),
        shapes=[(2, 3, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 4)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
            )
        ],
    ),
    OpCase(
        "swapaxes",
        lambda x: lucid.swapaxes(x, -1, 0),
        lambda x: torch.swapaxes(x, -1, 0),
        reference=lambda a: np.swapaxes(a, -1, 0),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "t",
        lucid.t,
        torch.t,
        reference=np.transpose,
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput(
                [(2, 2, 2)],
                RuntimeError,
                r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D",
            )
        ],
    ),
    OpCase("T", lambda x: x.T, lambda x: x.T, reference=lambda a: a.T, shapes=[(3, 4)]),
    OpCase(
        "mT",
        lambda x: x.mT,
        lambda x: x.mT,
        reference=lambda a: np.swapaxes(a, -1, -2),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "permute",
        lambda x: x.permute(2, 0, 1),
        lambda x: x.permute(2, 0, 1),
        reference=lambda a: np.transpose(a, (2, 0, 1)),
        shapes=[(2, 3, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 4)],
                RuntimeError,
                "number of dimensions in the tensor input does not match the "
                "length of the desired ordering of dimensions",
            )
        ],
    ),
    OpCase(
        "movedim",
        lambda x: lucid.movedim(x, 0, -1),
        lambda x: torch.movedim(x, 0, -1),
        reference=lambda a: np.moveaxis(a, 0, -1),
        shapes=[(2, 3, 4)],
    ),
    # ----------------------------------------------------------- broadcasting
    OpCase(
        "expand",
        lambda x: x.expand(2, 3, 4),
        lambda x: x.expand(2, 3, 4),
        reference=lambda a: np.broadcast_to(a, (2, 3, 4)),
        shapes=[(3, 1)],
    ),
    OpCase(
        "expand_keep",
        lambda x: x.expand(-1, 5, -1),
        lambda x: x.expand(-1, 5, -1),
        reference=lambda a: np.broadcast_to(a, (3, 5, 4)),
        shapes=[(3, 1, 4)],
    ),
    OpCase(
        "expand_as",
        lambda x, y: x.expand_as(y),
        lambda x, y: x.expand_as(y),
        reference=lambda a, b: np.broadcast_to(a, b.shape),
        shapes=[(1, 4), (3, 4)],
        grad_inputs=[0],
    ),
    OpCase(
        "broadcast_to",
        lambda x: lucid.broadcast_to(x, (2, 3, 4)),
        lambda x: torch.broadcast_to(x, (2, 3, 4)),
        reference=lambda a: np.broadcast_to(a, (2, 3, 4)),
        shapes=[(4,)],
        error_inputs=[
            ErrorInput(
                [(5,)],
                RuntimeError,
                r"The expanded size of the tensor \(4\) must match the "
                r"existing size \(5\) at non-singleton dimension 2",
            )
        ],
    ),
    OpCase(
        "repeat",
        lambda x: x.repeat(2, 1, 3),
        lambda x: x.repeat(2, 1, 3),
        reference=lambda a: _np_repeat(a, (2, 1, 3)),
        shapes=[(3, 4)],
    ),
    OpCase(
        "tile",
        lambda x: lucid.tile(x, (2,)),
        lambda x: torch.tile(x, (2,)),
        reference=lambda a: np.tile(a, 2),
        shapes=[(3, 4)],
    ),
    # ---------------------------------------------------------- joining
    OpCase(
        "cat",
        lambda a, b: lucid.cat([a, b, a]),
        lambda a, b: torch.cat([a, b, a]),
        reference=lambda a, b: np.concatenate([a, b, a]),
        shapes=[(3, 4), (2, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 4), (3, 5)],
                RuntimeError,
                "Sizes of tensors must match except in dimension 0. Expected size "
                "4 but got size 5 for tensor number 1 in the list",
            )
        ],
    ),
    OpCase(
        "cat_dim",
        lambda a, b: lucid.concat((a, b), dim=-1),
        lambda a, b: torch.concat((a, b), dim=-1),
        reference=lambda a, b: np.concatenate([a, b], -1),
        shapes=[(3, 4), (3, 2)],
    ),
    OpCase(
        "concatenate",
        lambda a, b: lucid.concatenate((a, b), 1),
        lambda a, b: torch.concatenate((a, b), 1),
        reference=lambda a, b: np.concatenate([a, b], 1),
        shapes=[(2, 1, 3), (2, 2, 3)],
    ),
    OpCase(
        "stack",
        lambda a, b: lucid.stack([a, b]),
        lambda a, b: torch.stack([a, b]),
        reference=lambda a, b: np.stack([a, b]),
        shapes=[(3, 4), (3, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 4), (3, 5)],
                RuntimeError,
                r"stack expects each tensor to be equal size, but got \[3, "
                r"4\] at entry 0 and \[3, 5\] at entry 1",
            )
        ],
    ),
    OpCase(
        "stack_last",
        lambda a, b: lucid.stack((a, b), -1),
        lambda a, b: torch.stack((a, b), -1),
        reference=lambda a, b: np.stack([a, b], -1),
        shapes=[(3, 4), (3, 4)],
    ),
    # ---------------------------------------------------------- splitting
    OpCase(
        "split",
        lambda x: x.split(2),
        lambda x: x.split(2),
        reference=lambda a: np.split(a, [2, 4]),
        shapes=[(5, 3)],
        output_index=1,
    ),
    OpCase(
        "split_sections",
        lambda x: lucid.split(x, [1, 3], 1),
        lambda x: torch.split(x, [1, 3], 1),
        reference=lambda a: np.split(a, [1], 1),
        shapes=[(3, 4)],
        output_index=1,
    ),
    OpCase(
        "chunk",
        lambda x: x.chunk(3, 1),
        lambda x: x.chunk(3, 1),
        reference=lambda a: np.split(a, [2, 4], 1),
        shapes=[(2, 5)],
        output_index=2,
        error_inputs=[
            ErrorInput(
                [(3,)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
            )
        ],
    ),
    OpCase(
        "unbind",
        lambda x: x.unbind(1),
        lambda x: x.unbind(1),
        reference=lambda a: [a[:, i] for i in range(a.shape[1])],
        shapes=[(3, 4)],
        output_index=1,
    ),
    OpCase(
        "narrow",
        lambda x: x.narrow(1, 1, 2),
        lambda x: x.narrow(1, 1, 2),
        reference=lambda a: a[:, 1:3],
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput(
                [(3, 2)], RuntimeError, r"start \(1\) \+ length \(2\) exceeds dimension size \(2\)"
            )
        ],
    ),
    OpCase(
        "narrow_negative_start",
        lambda x: lucid.narrow(x, 0, -2, 2),
        lambda x: torch.narrow(x, 0, -2, 2),
        reference=lambda a: a[-2:],
        shapes=[(3, 4)],
    ),
    # --------------------------------------------------- reordering entries
    OpCase(
        "flip",
        lambda x: x.flip(0, -1),
        lambda x: x.flip(0, -1),
        reference=lambda a: np.flip(a, (0, -1)),
        shapes=[(2, 3, 4)],
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "dim 0 appears multiple times in the list of dims")
        ],
    ),
    OpCase(
        "roll",
        lambda x: x.roll(3),
        lambda x: x.roll(3),
        reference=lambda a: np.roll(a, 3),
        shapes=[(3, 4)],
    ),
    OpCase(
        "roll_dims",
        lambda x: lucid.roll(x, (1, -2), (0, 1)),
        lambda x: torch.roll(x, (1, -2), (0, 1)),
        reference=lambda a: np.roll(a, (1, -2), (0, 1)),
        shapes=[(3, 4)],
    ),
    OpCase(
        "tril",
        lucid.tril,
        torch.tril,
        reference=np.tril,
        shapes=[(4, 5)],
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "tril: input tensor must have at least 2 dimensions")
        ],
    ),
    OpCase(
        "tril_diagonal",
        lambda x: x.tril(-1),
        lambda x: x.tril(-1),
        reference=lambda a: np.tril(a, -1),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "triu",
        lucid.triu,
        torch.triu,
        reference=np.triu,
        shapes=[(4, 5)],
        error_inputs=[
            ErrorInput([(3,)], RuntimeError, "triu: input tensor must have at least 2 dimensions")
        ],
    ),
    OpCase(
        "triu_diagonal",
        lambda x: x.triu(1),
        lambda x: x.triu(1),
        reference=lambda a: np.triu(a, 1),
        shapes=[(2, 4, 3)],
    ),
    # ------------------------------------------------------------- getitem
    OpCase(
        "getitem_int",
        lambda x: x[1],
        lambda x: x[1],
        reference=lambda a: a[1],
        shapes=[(3, 4)],
    ),
    OpCase(
        "getitem_ints",
        lambda x: x[1, -1],
        lambda x: x[1, -1],
        reference=lambda a: a[1, -1],
        shapes=[(3, 4)],
    ),
    OpCase(
        "getitem_slices",
        lambda x: x[1:, :3],
        lambda x: x[1:, :3],
        reference=lambda a: a[1:, :3],
        shapes=[(3, 4)],
    ),
    OpCase(
        "getitem_steps",
        lambda x: x[::2, 1::2],
        lambda x: x[::2, 1::2],
        reference=lambda a: a[::2, 1::2],
        shapes=[(5, 6)],
    ),
    OpCase(
        # PyTorch rejects negative slice steps; negative starts and stops count from the end.
        "getitem_negative",
        lambda x: x[-2:, -3:-1],
        lambda x: x[-2:, -3:-1],
        reference=lambda a: a[-2:, -3:-1],
        shapes=[(4, 5)],
    ),
    OpCase(
        "getitem_none_ellipsis",
        lambda x: x[None, ..., 1],
        lambda x: x[None, ..., 1],
        reference=lambda a: a[None, ..., 1],
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "getitem_ellipsis_slice",
        lambda x: x[..., 1:3, None],
        lambda x: x[..., 1:3, None],
        reference=lambda a: a[..., 1:3, None],
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "getitem_mask",
        lambda x, mask: x[mask],
        lambda x, mask: x[mask],
        reference=lambda a, mask: a[mask],
        make_inputs=_with_mask((3, 4), (3, 4)),
    ),
    OpCase(
        "getitem_mask_rows",
        lambda x, mask: x[:, mask],
        lambda x, mask: x[:, mask],
        reference=lambda a, mask: a[:, mask],
        make_inputs=_with_mask((2, 5, 3), (5,)),
    ),
    OpCase(
        # Repeated indices must add up their gradients.
        "getitem_index_repeated",
        lambda x, index: x[index],
        lambda x, index: x[index],
        reference=lambda a, index: a[index],
        make_inputs=_with_index((4, 3), [2, 0, 2, 2]),
    ),
    OpCase(
        "getitem_index_2d",
        lambda x, index: x[:, index],
        lambda x, index: x[:, index],
        reference=lambda a, index: a[:, index],
        make_inputs=_with_index((3, 4), [[1, 1], [3, 0]]),
    ),
    OpCase(
        "getitem_index_pairs",
        lambda x, index: x[index, index.flip(0)],
        lambda x, index: x[index, index.flip(0)],
        reference=lambda a, index: a[index, index[::-1]],
        make_inputs=_with_index((3, 3), [0, 2, 2, 1]),
    ),
    OpCase(
        "getitem_list_mixed",
        lambda x: x[[0, 0, 1], 1:, [2, 2, 0]],
        lambda x: x[[0, 0, 1], 1:, [2, 2, 0]],
        reference=lambda a: a[[0, 0, 1], 1:, [2, 2, 0]],
        shapes=[(2, 3, 4)],
    ),
    # ------------------------------------------------------------- setitem
    OpCase(
        "setitem_slice",
        lambda x, v: _setitem(x, (slice(None), slice(1, 3)), v),
        lambda x, v: _setitem(x, (slice(None), slice(1, 3)), v),
        reference=lambda a, v: _np_setitem(a, (slice(None), slice(1, 3)), v),
        shapes=[(3, 4), (3, 1)],
    ),
    OpCase(
        "setitem_int",
        lambda x, v: _setitem(x, 1, v),
        lambda x, v: _setitem(x, 1, v),
        reference=lambda a, v: _np_setitem(a, 1, v),
        shapes=[(3, 4), (4,)],
    ),
    OpCase(
        "setitem_scalar",
        lambda x: _setitem(x, (0, slice(None, None, 2)), 0.5),
        lambda x: _setitem(x, (0, slice(None, None, 2)), 0.5),
        reference=lambda a: _np_setitem(a, (0, slice(None, None, 2)), 0.5),
        shapes=[(3, 4)],
    ),
    OpCase(
        "setitem_mask",
        lambda x, mask: _setitem(x, mask, 0.0),
        lambda x, mask: _setitem(x, mask, 0.0),
        reference=lambda a, mask: _np_setitem(a, mask, 0.0),
        make_inputs=_with_mask((3, 4), (3, 4)),
    ),
    OpCase(
        "setitem_index",
        lambda x, index, v: _setitem(x, index, v),
        lambda x, index, v: _setitem(x, index, v),
        reference=lambda a, index, v: _np_setitem(a, index, v),
        make_inputs=lambda rng, dtype: [
            _floats(rng, dtype, 4, 3),
            np.array([3, 0], dtype=np.int64),
            _floats(rng, dtype, 3),
        ],
    ),
    # -------------------------------------------------------- sort/argsort/topk
    OpCase(
        "sort",
        lucid.sort,
        torch.sort,
        _sorted_reference(),
        kwargs={"stable": True},
        output_index=0,
        error_inputs=[
            ErrorInput(
                [(3, 4)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
                {"dim": 2},
            ),
        ],
    ),
    OpCase(
        "sort_dim0_descending",
        lucid.sort,
        torch.sort,
        _sorted_reference(0, descending=True),
        kwargs={"dim": 0, "descending": True, "stable": True},
        shapes=[(4, 3, 2)],
        output_index=0,
    ),
    OpCase(
        "sort_indices",
        lucid.sort,
        torch.sort,
        _sorted_reference(1, descending=True),
        kwargs={"dim": 1, "descending": True, "stable": True},
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "argsort",
        lucid.argsort,
        torch.argsort,
        _sorted_reference(tuple_result=False),
        kwargs={"stable": True},
        differentiable=False,
    ),
    OpCase(
        "argsort_dim0_descending",
        lucid.argsort,
        torch.argsort,
        _sorted_reference(0, descending=True, tuple_result=False),
        kwargs={"dim": 0, "descending": True, "stable": True},
        differentiable=False,
    ),
    OpCase(
        "topk",
        lucid.topk,
        torch.topk,
        _topk_reference(2),
        kwargs={"k": 2},
        make_inputs=_distinct((3, 5)),
        output_index=0,
        # The extreme-value pattern repeats values, and which of equal values PyTorch's topk
        # picks first is unspecified (its gradient lands there): tests/ops/test_sorting.py
        # checks topk's values on extremes instead.
        extremes=False,
        error_inputs=[
            ErrorInput([(3, 4)], RuntimeError, "selected index k out of range", {"k": 5}),
            ErrorInput([(3, 4)], RuntimeError, "selected index k out of range", {"k": -1}),
            ErrorInput(
                [(3, 4)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
                {"k": 1, "dim": 2},
            ),
        ],
    ),
    OpCase(
        "topk_smallest_dim0",
        lambda x: lucid.topk(x, 3, dim=0, largest=False),
        lambda x: torch.topk(x, 3, dim=0, largest=False),
        _topk_reference(3, 0, largest=False),
        make_inputs=_distinct((4, 3)),
        output_index=0,
        extremes=False,
    ),
    OpCase(
        "topk_long_slice",
        lambda x: x.topk(3),
        lambda x: x.topk(3),
        _topk_reference(3),
        make_inputs=_distinct((2, 40)),
        output_index=0,
        extremes=False,
    ),
    OpCase(
        "topk_indices",
        lambda x: lucid.topk(x, 3, largest=False),
        lambda x: torch.topk(x, 3, largest=False),
        _topk_reference(3, largest=False),
        make_inputs=_distinct((2, 40)),
        output_index=1,
        differentiable=False,
        extremes=False,
    ),
    # ------------------------------------------------------ gather/scatter
    OpCase(
        "gather",
        lambda x, index: x.gather(1, index),
        lambda x, index: x.gather(1, index),
        reference=lambda a, index: _np_gather(a, index, 1),
        make_inputs=_with_index((3, 4), [[0, 1], [3, 3], [2, 0]]),
    ),
    OpCase(
        "gather_dim0",
        lambda x, index: lucid.gather(x, 0, index),
        lambda x, index: torch.gather(x, 0, index),
        reference=lambda a, index: _np_gather(a, index, 0),
        make_inputs=_with_index((3, 4), [[2, 2, 0, 1]]),
    ),
    OpCase(
        "scatter",
        lambda x, index, src: x.scatter(1, index, src),
        lambda x, index, src: x.scatter(1, index, src),
        reference=lambda a, index, src: _np_scatter(a, index, src, 1, add=False),
        make_inputs=lambda rng, dtype: [
            _floats(rng, dtype, 3, 4),
            np.array([[0, 1], [3, 2], [2, 0]], dtype=np.int64),
            _floats(rng, dtype, 3, 2),
        ],
    ),
    OpCase(
        "scatter_value",
        lambda x, index: lucid.scatter(x, 0, index, value=1.5),
        lambda x, index: torch.scatter(x, 0, index, value=1.5),
        reference=lambda a, index: _np_scatter(a, index, 1.5, 0, add=False),
        make_inputs=_with_index((3, 4), [[2, 0, 1, 2]]),
    ),
    OpCase(
        "scatter_add",
        lambda x, index, src: x.scatter_add(0, index, src),
        lambda x, index, src: x.scatter_add(0, index, src),
        reference=lambda a, index, src: _np_scatter(a, index, src, 0, add=True),
        make_inputs=lambda rng, dtype: [
            _floats(rng, dtype, 3, 4),
            np.array([[2, 2, 0, 2], [2, 1, 0, 0]], dtype=np.int64),
            _floats(rng, dtype, 2, 4),
        ],
        sums=True,
    ),
    OpCase(
        "index_select",
        lambda x, index: x.index_select(1, index),
        lambda x, index: x.index_select(1, index),
        reference=lambda a, index: np.take(a, index, 1),
        make_inputs=_with_index((3, 4), [3, 0, 3]),
    ),
    OpCase(
        "take",
        lambda x, index: lucid.take(x, index),
        lambda x, index: torch.take(x, index),
        reference=lambda a, index: np.take(a, index),
        make_inputs=_with_index((3, 4), [[0, 11, -1], [5, 5, 0]]),
    ),
    # --------------------------------------------------------------- masks
    OpCase(
        "masked_fill",
        lambda x, mask: x.masked_fill(mask, -1.0),
        lambda x, mask: x.masked_fill(mask, -1.0),
        reference=lambda a, mask: np.where(mask, -1.0, a).astype(a.dtype),
        make_inputs=_with_mask((3, 4), (3, 4)),
        error_inputs=[
            ErrorInput(
                [(3, 4), (3, 4)],
                RuntimeError,
                "masked_fill_ only supports boolean masks, but got mask with dtype double",
            )
        ],
    ),
    OpCase(
        "masked_fill_broadcast",
        lambda x, mask: lucid.masked_fill(x, mask, 2.0),
        lambda x, mask: torch.masked_fill(x, mask, 2.0),
        reference=lambda a, mask: np.where(mask, 2.0, a).astype(a.dtype),
        make_inputs=_with_mask((3, 4), (4,)),
    ),
    OpCase(
        "masked_fill_tensor_value",
        lambda x, mask, value: x.masked_fill(mask, value),
        lambda x, mask, value: x.masked_fill(mask, value),
        reference=lambda a, mask, value: np.where(mask, value, a),
        make_inputs=lambda rng, dtype: [
            _floats(rng, dtype, 3, 4),
            rng.random((3, 4)) < 0.5,
            _floats(rng, dtype),
        ],
    ),
    OpCase(
        "masked_fill_inplace",
        lambda x, mask: _masked_fill_inplace(x, mask, 0.5),
        lambda x, mask: _masked_fill_inplace(x, mask, 0.5),
        reference=lambda a, mask: np.where(mask, 0.5, a).astype(a.dtype),
        make_inputs=_with_mask((3, 4), (3, 1)),
    ),
    OpCase(
        "masked_select",
        lambda x, mask: x.masked_select(mask),
        lambda x, mask: x.masked_select(mask),
        reference=lambda a, mask: a[mask],
        make_inputs=_with_mask((3, 4), (3, 4)),
    ),
    OpCase(
        "masked_select_broadcast",
        lambda x, mask: lucid.masked_select(x, mask),
        lambda x, mask: torch.masked_select(x, mask),
        reference=lambda a, mask: np.broadcast_to(a, (2, 3, 4))[mask],
        make_inputs=_with_mask((3, 4), (2, 3, 4)),
    ),
    # ------------- rot90, fliplr/flipud, block_diag, meshgrid, combinations, ...
    OpCase(
        "rot90",
        lambda x, k=3, dims=(1, 2): lucid.rot90(x, k, dims),
        lambda x, k=3, dims=(1, 2): torch.rot90(x, k, dims),
        lambda x, k=3, dims=(1, 2): np.rot90(x, k, dims),
        shapes=[(2, 3, 4)],
        error_inputs=[
            ErrorInput(
                [(2, 3)],
                RuntimeError,
                "expected total rotation dims == 2, but got dims = 1",
                {"dims": [0]},
            ),
            ErrorInput(
                [(2, 3)],
                RuntimeError,
                "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
                {"dims": [0, 0]},
            ),
            ErrorInput(
                [(3,)],
                RuntimeError,
                "expected total dims >= 2, but got total dims = 1",
                {"dims": [0, 1]},
            ),
            ErrorInput(
                [(2, 3)],
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
                {"dims": [0, 2]},
            ),
        ],
    ),
    OpCase(
        "rot90_negative_k",
        lambda x: lucid.rot90(x, -1),
        lambda x: torch.rot90(x, -1),
        lambda x: np.rot90(x, -1),
    ),
    OpCase(
        "fliplr",
        lucid.fliplr,
        torch.fliplr,
        np.fliplr,
        error_inputs=[ErrorInput([(3,)], RuntimeError, "Input must be >= 2-d.")],
    ),
    OpCase(
        "flipud",
        lucid.flipud,
        torch.flipud,
        np.flipud,
        error_inputs=[ErrorInput([np.array(1.0)], RuntimeError, "Input must be >= 1-d.")],
    ),
    OpCase(
        "block_diag",
        lucid.block_diag,
        torch.block_diag,
        None,
        shapes=[(2, 3), (3,), (), (1, 2)],
        error_inputs=[
            ErrorInput(
                [(2, 3, 4)],
                RuntimeError,
                "lucid.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 "
                "dimensions",
            )
        ],
    ),
    OpCase(
        "block_diag_mixed_dtypes",
        lucid.block_diag,
        torch.block_diag,
        None,
        make_inputs=lambda rng, dtype: [rng.integers(-3, 4, (2, 2)), _floats(rng, dtype, 3)],
    ),
    *[
        OpCase(
            f"meshgrid_{indexing}_{output}",
            lambda a, b, c, indexing=indexing: lucid.meshgrid(a, b, c, indexing=indexing),
            lambda a, b, c, indexing=indexing: torch.meshgrid(a, b, c, indexing=indexing),
            lambda a, b, c, indexing=indexing: np.meshgrid(a, b, c, indexing=indexing),
            shapes=[(3,), (4,), ()],
            output_index=output,
            error_inputs=[
                ErrorInput(
                    [(3,), (4,), (2,)],
                    RuntimeError,
                    'lucid.meshgrid: indexing must be one of "xy" or "ij", but received: foo',
                    {"indexing": "foo"},
                ),
                ErrorInput(
                    [(3,), (4,), np.ones(2, np.float32)],
                    RuntimeError,
                    "meshgrid expects all tensors to have the same dtype",
                ),
                ErrorInput(
                    [(3, 2), (4,), (2,)],
                    RuntimeError,
                    "lucid.meshgrid: Expected 0D or 1D tensor in the tensor list but got:",
                ),
            ]
            if output == 0
            else [],
        )
        for indexing in ("ij", "xy")
        for output in (0, 1)
    ],
    OpCase(
        "cartesian_prod",
        lucid.cartesian_prod,
        torch.cartesian_prod,
        lambda a, b: np.stack([g.ravel() for g in np.meshgrid(a, b, indexing="ij")], 1),
        shapes=[(3,), (4,)],
        error_inputs=[
            ErrorInput([(3, 2), (4,)], RuntimeError, r"Expect a 1D vector, but got shape \[3, 2\]")
        ],
    ),
    OpCase(
        "combinations",
        lambda x, r=2, with_replacement=False: lucid.combinations(x, r, with_replacement),
        lambda x, r=2, with_replacement=False: torch.combinations(x, r, with_replacement),
        None,
        shapes=[(5,)],
        error_inputs=[
            ErrorInput([(4,)], RuntimeError, "Expect a non-negative number, but got -1", {"r": -1}),
            ErrorInput([(4, 2)], RuntimeError, r"Expect a 1D vector, but got shape \[4, 2\]"),
        ],
    ),
    OpCase(
        "combinations_with_replacement",
        lambda x: lucid.combinations(x, 3, with_replacement=True),
        lambda x: torch.combinations(x, 3, with_replacement=True),
        None,
        shapes=[(4,)],
    ),
    OpCase(
        "combinations_longer_than_input",
        lambda x: lucid.combinations(x, 5),
        lambda x: torch.combinations(x, 5),
        None,
        shapes=[(4,)],
    ),
    OpCase(
        "tril_",
        lambda x, diagonal=1: x.clone().tril_(diagonal),
        lambda x, diagonal=1: x.clone().tril_(diagonal),
        lambda x, diagonal=1: np.tril(x, diagonal),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "triu_",
        lambda x: x.clone().triu_(-1),
        lambda x: x.clone().triu_(-1),
        lambda x: np.triu(x, -1),
        shapes=[(3, 4)],
    ),
    OpCase(
        "ravel",
        lucid.ravel,
        torch.ravel,
        reference=lambda a: a.reshape(-1),
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "ravel_transposed",
        lambda x: lucid.ravel(x.transpose(0, 2)),
        lambda x: torch.ravel(x.transpose(0, 2)),
        reference=lambda a: a.transpose(2, 1, 0).reshape(-1),
        shapes=[(2, 3, 4)],
    ),
    # ----------------------------------------------------- stacking and splitting
    OpCase("atleast_1d_scalar", lucid.atleast_1d, torch.atleast_1d, np.atleast_1d, shapes=[()]),
    OpCase("atleast_2d_vector", lucid.atleast_2d, torch.atleast_2d, np.atleast_2d, shapes=[(4,)]),
    OpCase("atleast_3d_vector", lucid.atleast_3d, torch.atleast_3d, np.atleast_3d, shapes=[(4,)]),
    OpCase("atleast_3d_matrix", lucid.atleast_3d, torch.atleast_3d, np.atleast_3d),
    OpCase(
        "atleast_2d_several",
        lambda a, b: lucid.atleast_2d(a, b),
        lambda a, b: torch.atleast_2d(a, b),
        lambda a, b: (np.atleast_2d(a), np.atleast_2d(b)),
        shapes=[(), (4,)],
        output_index=1,
    ),
    OpCase(
        "hstack",
        lambda a, b: lucid.hstack([a, b]),
        lambda a, b: torch.hstack([a, b]),
        lambda a, b: np.hstack([a, b]),
        shapes=[(3, 4), (3, 2)],
    ),
    OpCase(
        "hstack_vectors",
        lambda a, b: lucid.hstack((a, b)),
        lambda a, b: torch.hstack((a, b)),
        lambda a, b: np.hstack([a, b]),
        shapes=[(4,), (2,)],
    ),
    OpCase(
        "vstack",
        lambda a, b: lucid.vstack([a, b]),
        lambda a, b: torch.vstack([a, b]),
        lambda a, b: np.vstack([a, b]),
        shapes=[(4,), (2, 4)],
    ),
    OpCase(
        "row_stack",
        lambda a, b: lucid.row_stack([a, b]),
        lambda a, b: torch.row_stack([a, b]),
        lambda a, b: np.vstack([a, b]),
        shapes=[(4,), (4,)],
    ),
    OpCase(
        "dstack",
        lambda a, b: lucid.dstack([a, b]),
        lambda a, b: torch.dstack([a, b]),
        lambda a, b: np.dstack([a, b]),
        shapes=[(3, 4), (3, 4, 2)],
    ),
    OpCase(
        "column_stack",
        lambda a, b, c: lucid.column_stack([a, b, c]),
        lambda a, b, c: torch.column_stack([a, b, c]),
        lambda a, b, c: np.column_stack([a, b, c]),
        shapes=[(3,), (3, 2), ()],
        make_inputs=lambda rng, dtype: [
            rng.uniform(-2, 2, (3,)).astype(dtype),
            rng.uniform(-2, 2, (3, 2)).astype(dtype),
            rng.uniform(-2, 2, (3,)).astype(dtype),
        ],
    ),
    *[
        OpCase(
            f"tensor_split_{label}_{part}",
            lambda x, s=sections, p=part: lucid.tensor_split(x, s, dim=1)[p],
            lambda x, s=sections, p=part: torch.tensor_split(x, s, dim=1)[p],
            lambda a, s=sections, p=part: np.array_split(a, s, axis=1)[p],
            shapes=[(3, 7)],
        )
        for label, sections in (("sections", 3), ("indices", [2, 5]), ("unordered", [5, 2, 9]))
        for part in (0, 1, 2)
    ],
    OpCase(
        "tensor_split_errors",
        lucid.tensor_split,
        torch.tensor_split,
        error_inputs=[
            ErrorInput(
                [(), 2],
                RuntimeError,
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 "
                "dims",
            ),
            ErrorInput(
                [(3, 4), 0], RuntimeError, "number of sections must be larger than 0, got 0"
            ),
            ErrorInput(
                [(3, 4), np.array([1.0])],
                RuntimeError,
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                "Double",
            ),
        ],
        differentiable=False,
    ),
    OpCase(
        "hsplit",
        lambda x: lucid.hsplit(x, 2)[1],
        lambda x: torch.hsplit(x, 2)[1],
        lambda a: np.hsplit(a, 2)[1],
    ),
    OpCase(
        "vsplit",
        lambda x: lucid.vsplit(x, [1])[1],
        lambda x: torch.vsplit(x, [1])[1],
        lambda a: np.vsplit(a, [1])[1],
    ),
    OpCase(
        "dsplit",
        lambda x: lucid.dsplit(x, 2)[0],
        lambda x: torch.dsplit(x, 2)[0],
        lambda a: np.dsplit(a, 2)[0],
        shapes=[(2, 3, 4)],
    ),
    OpCase(
        "broadcast_tensors",
        lambda a, b: lucid.broadcast_tensors(a, b)[1],
        lambda a, b: torch.broadcast_tensors(a, b)[1],
        lambda a, b: np.broadcast_arrays(a, b)[1],
        shapes=[(3, 4), (4,)],
        error_inputs=[
            ErrorInput(
                [(3, 4), (3,)],
                RuntimeError,
                r"The size of tensor a \(4\) must match the size of tensor b \(3\) at "
                "non-singleton dimension 1",
            )
        ],
    ),
    OpCase(
        "select",
        lambda x: lucid.select(x, 1, -2),
        lambda x: torch.select(x, 1, -2),
        lambda a: a[:, -2],
    ),
    OpCase(
        "unfold",
        lambda x: x.unfold(1, 3, 2),
        lambda x: x.unfold(1, 3, 2),
        lambda a: np.stack([a[:, 0:3], a[:, 2:5]], axis=1),
        shapes=[(3, 6)],
    ),
    OpCase(
        "unfold_overlapping_dim0",
        lambda x: x.unfold(0, 2, 1),
        lambda x: x.unfold(0, 2, 1),
        lambda a: np.stack([a[0:2], a[1:3]], axis=0).transpose(0, 2, 1),
        shapes=[(3, 4)],
    ),
    OpCase(
        "unfold_errors",
        lambda x, *args: x.unfold(*args),
        lambda x, *args: x.unfold(*args),
        error_inputs=[
            ErrorInput(
                [(3, 4), 1, 5, 1],
                RuntimeError,
                "maximum size for tensor at dimension 1 is 4 but size is 5",
            ),
            ErrorInput([(3, 4), 1, 2, 0], RuntimeError, "step is 0 but must be > 0"),
        ],
        differentiable=False,
    ),
    OpCase(
        "repeat_interleave",
        lambda x: lucid.repeat_interleave(x, 2, dim=1),
        lambda x: torch.repeat_interleave(x, 2, dim=1),
        lambda a: np.repeat(a, 2, axis=1),
    ),
    OpCase(
        "repeat_interleave_flat",
        lambda x: x.repeat_interleave(3),
        lambda x: x.repeat_interleave(3),
        lambda a: np.repeat(a, 3),
    ),
    OpCase(
        "repeat_interleave_counts",
        lambda x: lucid.repeat_interleave(x, lucid.tensor([1, 0, 2]), dim=0),
        lambda x: torch.repeat_interleave(x, torch.tensor([1, 0, 2]), dim=0),
        lambda a: np.repeat(a, [1, 0, 2], axis=0),
    ),
    OpCase(
        "hstack_errors",
        lucid.hstack,
        torch.hstack,
        differentiable=False,
        error_inputs=[
            ErrorInput([[]], RuntimeError, "hstack expects a non-empty TensorList"),
        ],
    ),
    OpCase(
        "hsplit_errors",
        lucid.hsplit,
        torch.hsplit,
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(3, 4), 3],
                RuntimeError,
                "lucid.hsplit attempted to split along dimension 1, but the size of the "
                "dimension 4 is not divisible by the split_size 3!",
            ),
        ],
    ),
    OpCase(
        "vsplit_errors",
        lucid.vsplit,
        torch.vsplit,
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(4,), 2],
                RuntimeError,
                "lucid.vsplit requires a tensor with at least 2 dimension, but got a tensor "
                "with 1 dimensions!",
            ),
        ],
    ),
    OpCase(
        "select_errors",
        lucid.select,
        torch.select,
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(3, 4), 0, 5],
                IndexError,
                r"select\(\): index 5 out of range for tensor of size \[3, 4\] at dimension 0",
            )
        ],
    ),
    OpCase(
        "repeat_interleave_errors",
        lucid.repeat_interleave,
        torch.repeat_interleave,
        differentiable=False,
        error_inputs=[
            ErrorInput([(3, 4), -1], RuntimeError, "Repeats must be non-negative"),
        ],
    ),
    OpCase(
        "adjoint",
        lucid.adjoint,
        torch.adjoint,
        lambda a: np.swapaxes(a, -1, -2),
        shapes=[(2, 3, 4)],
        error_inputs=[
            ErrorInput(
                [(3,)],
                RuntimeError,
                r"tensor.adjoint\(\) is only supported on matrices or batches of matrices. Got "
                "1-D tensor.",
            )
        ],
    ),
    OpCase(
        "mH", lambda x: x.mH, lambda x: x.mH, lambda a: np.swapaxes(a, -1, -2), shapes=[(2, 3, 4)]
    ),
    OpCase("H", lambda x: x.H, lambda x: x.H, lambda a: a.T),
]
