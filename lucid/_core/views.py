"""Views under autograd, as PyTorch has them: an in-place write through a view rewrites the
history of the view's base, and a view whose base changed reads its value from the base anew.

A view (`tensor._base` is not None) shares its base's memory and version counter; `_base` is
the root, never another view. Two things keep gradients right when either is written in place:

- `rebase`: an in-place op on a view is recorded on the view as any op (its node N), then the
  base's grad_fn becomes a CopySlices node: the base's gradient goes on unchanged outside the
  view's elements, and to N inside them. The view's own grad_fn becomes AsStridedBackward0,
  reading it out of the base's new history.
- `refresh`: any in-place write bumps the shared version; a view used after its base (or
  another view of it) was written gets AsStridedBackward0 of the base's current history, the
  first time its grad_fn is needed (`Function.apply`, `grad_fn`, backward's roots and inputs).

Where a view sits in its base is kept as `positions`: for each element of the view, the
row-major index of the base element it aliases. Every backward here is made of the recorded
ops below, so double backward differentiates through them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.dtypes import INEXACT_KINDS
from lucid._core.function import HOLOMORPHIC, Function, op_name
from lucid._core.graph import Node, accumulator_for, next_sequence_nr
from lucid._core.tensor import _wrap

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["positions_in_base", "rebase", "refresh"]

_new_node = object.__new__
_as_strided = np.lib.stride_tricks.as_strided


def positions_in_base(view: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The row-major index in `base` of the element each element of `view` aliases."""
    itemsize = base.itemsize
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if base.flags.c_contiguous:
        # A row-major base: an element's index is its distance from the base's first one.
        positions = np.full(view.shape, offset // itemsize, dtype=np.intp)
        steps = [stride // itemsize for stride in view.strides]
        for axis, (size, step) in enumerate(zip(view.shape, steps)):
            if step and size > 1:
                shape = [1] * view.ndim
                shape[axis] = size
                positions += np.arange(0, size * step, step, dtype=np.intp).reshape(shape)
        return positions
    # Any other base (a transposed or strided array): number the base's elements in a table
    # laid out as its memory is, then read the view's elements out of that table.
    low = sum(min(0, (size - 1) * stride) for size, stride in zip(base.shape, base.strides))
    high = sum(max(0, (size - 1) * stride) for size, stride in zip(base.shape, base.strides))
    table = np.full((high - low) // itemsize + 1, -1, dtype=np.intp)

    def _over_table(start: int, shape: tuple, strides: tuple) -> np.ndarray:
        table_strides = tuple(stride // itemsize * table.itemsize for stride in strides)
        return _as_strided(table[start:], shape, table_strides)

    numbering = _over_table(-low // itemsize, base.shape, base.strides)
    numbering[...] = np.arange(base.size, dtype=np.intp).reshape(base.shape)
    return _over_table((offset - low) // itemsize, view.shape, view.strides).copy()


def _overlaps(view: np.ndarray) -> bool:
    """Whether two elements of the view alias one element (an expand, an unfold)."""
    return not view.flags.writeable


# ------------------------------------------------------------------ the recorded ops
class _GatherFromBase(Function):
    """The view's elements read out of a tensor of its base's shape (a copy)."""

    _backward_name = "AsStridedBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx: Any, source: Tensor, positions: np.ndarray, overlaps: bool) -> Tensor:
        ctx.base_shape = source._data.shape
        ctx.positions = positions
        ctx.overlaps = overlaps
        return _wrap(np.ascontiguousarray(source._data).reshape(-1)[positions])

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        grad = _ScatterToBase.apply(grad_output, ctx.positions, ctx.base_shape, ctx.overlaps)
        return grad, None, None


class _ScatterToBase(Function):
    """A tensor of the view's shape placed at the view's elements of zeros of the base's shape;
    elements a view holds twice sum."""

    _backward_name = "AsStridedScatterBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(
        ctx: Any, values: Tensor, positions: np.ndarray, base_shape: tuple, overlaps: bool
    ) -> Tensor:
        ctx.positions = positions
        ctx.overlaps = overlaps
        array = values._data
        result = np.zeros(int(np.prod(base_shape)), dtype=array.dtype)
        if overlaps:
            np.add.at(result, positions.reshape(-1), array.reshape(-1))
        else:
            result[positions] = array
        return _wrap(result.reshape(base_shape))

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        return _GatherFromBase.apply(grad_output, ctx.positions, ctx.overlaps), None, None, None


class _ZeroRegion(Function):
    """A copy of `source` with zeros at the view's elements."""

    _backward_name = "CopySlices"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx: Any, source: Tensor, positions: np.ndarray) -> Tensor:
        ctx.positions = positions
        result = source._data.copy()  # row-major, so reshape(-1) below is a view
        result.reshape(-1)[positions] = 0
        return _wrap(result)

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        return _ZeroRegion.apply(grad_output, ctx.positions), None


class _CopySlices(Function):
    """The base's grad_fn after an in-place op N wrote one of its views: the base's gradient
    goes on to the base's earlier history outside the view's elements, and to N inside them
    (N's gradient of the view's old value reaches that history through the view's old
    grad_fn, where the engine adds it to the first part)."""

    _backward_name = "CopySlices"
    _complex_rule = HOLOMORPHIC
    _keeps_values_for_backward = True  # a second backward through it raises, as in PyTorch

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        grad_base = None
        if ctx.needs_input_grad[0]:
            grad_base = _ZeroRegion.apply(grad_output, ctx.positions)
        return grad_base, _GatherFromBase.apply(grad_output, ctx.positions, False)


# ------------------------------------------------------------------ the rules
def _edge_of(tensor: Tensor) -> tuple:
    grad_fn = tensor._grad_fn
    if grad_fn is not None:
        return (grad_fn, tensor._output_nr)
    if tensor._requires_grad:
        return (accumulator_for(tensor), 0)
    return (None, 0)


def _read_from_base(view: Tensor, base: Tensor, positions: np.ndarray) -> None:
    """Give `view` (at `positions` in `base`) the grad_fn AsStridedBackward0 of its base's
    current history."""
    node = _new_node(Node)
    node.function = _GatherFromBase
    node.is_recording = True
    node.needs_input_grad = (True, False, False)
    node.input_edges = (_edge_of(base), None, None)
    node.sequence_nr = next_sequence_nr()
    node.output_meta = ((view._data.shape, view._data.dtype),)
    node.base_shape = base._data.shape
    node.positions = positions
    node.overlaps = _overlaps(view._data)
    view._grad_fn = node
    view._output_nr = 0
    view._requires_grad = True


def _is_differentiable(view: Tensor, base: Tensor) -> bool:
    # A view of another dtype (view(dtype)) carries no gradient of its base.
    return view._data.dtype == base._data.dtype and view._data.dtype.kind in INEXACT_KINDS


def refresh(view: Tensor) -> None:
    """Bring a view's history up to date after an in-place write to its base or to another of
    its views (the version they share moved on since the view's grad_fn was made)."""
    view._view_version = view._version_counter[0]
    creation = view._view_creation
    if creation is not None and creation[0] in ("no_grad", "inference"):
        return  # PyTorch tracks no history for these either
    base = view._base
    if base._requires_grad and _is_differentiable(view, base):
        _read_from_base(view, base, positions_in_base(view._data, base._data))


def rebase(view: Tensor, node: Node) -> None:
    """After the recorded in-place op `node` wrote `view`: the base's history goes through a
    CopySlices node, and the view reads itself out of it."""
    base = view._base
    if not _is_differentiable(view, base):
        raise RuntimeError(
            f"{op_name(node.function)}: an in-place operation that requires grad cannot write "
            f"a view of dtype {view.dtype} of a tensor of dtype {base.dtype}"
        )
    positions = positions_in_base(view._data, base._data)
    copy = _new_node(Node)
    copy.function = _CopySlices
    copy.is_recording = True
    copy.positions = positions
    copy.input_edges = (_edge_of(base), (node, 0))
    copy.needs_input_grad = (base._requires_grad, True)
    copy.output_meta = ((base._data.shape, base._data.dtype),)
    copy.sequence_nr = next_sequence_nr()
    base._grad_fn = copy
    base._output_nr = 0
    base._requires_grad = True
    _read_from_base(view, base, positions)
    view._view_version = view._version_counter[0]
