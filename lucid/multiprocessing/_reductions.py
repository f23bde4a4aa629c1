"""How multiprocessing's pickler sends a lucid tensor to another process: as its NumPy array,
by value. Plain pickle still refuses tensors, so no checkpoint is ever a pickle."""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

import lucid

_NON_LEAF_ERROR = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
    "not support crossing process boundaries.  If you just want to transfer the data, call "
    "detach() on the tensor before serializing (e.g., putting it on the queue)."
)


def _array_of(tensor: lucid.Tensor) -> np.ndarray:
    # autograd history cannot cross a process boundary; a leaf's flag can
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(_NON_LEAF_ERROR)
    return tensor.detach().numpy()


def _rebuild_tensor(array: np.ndarray, requires_grad: bool) -> lucid.Tensor:
    return lucid.from_numpy(array).requires_grad_(requires_grad)


def _rebuild_parameter(array: np.ndarray, requires_grad: bool) -> Any:
    return lucid.nn.Parameter(lucid.from_numpy(array), requires_grad=requires_grad)


def _reduce_tensor(tensor: lucid.Tensor) -> tuple:
    return _rebuild_tensor, (_array_of(tensor), tensor.requires_grad)


def _reduce_parameter(parameter: Any) -> tuple:
    return _rebuild_parameter, (_array_of(parameter), parameter.requires_grad)


def init_reductions() -> None:
    """Register the reducers with multiprocessing's pickler (its queues, pipes and the
    arguments of a spawned process), as torch registers its own at import."""
    # the pickler looks reducers up by exact type, so the subclass needs its own
    ForkingPickler.register(lucid.Tensor, _reduce_tensor)
    ForkingPickler.register(lucid.nn.Parameter, _reduce_parameter)
