"""Variable-length batches for the recurrent layers: padding and PackedSequence, as in torch.

Each function gathers its result with one index_select over the sequences' rows (plus a row
of padding), so autograd flows back to the inputs without a backward of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

import lucid
from lucid import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The time-major rows of a batch of sequences sorted by length, with each step's batch size.

    Made by `pack_padded_sequence` or `pack_sequence`, not by hand; RNN, LSTM and GRU accept it.
    """

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, list | tuple) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of `permutation` (None stays None)."""
    if permutation is None:
        return None
    order = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return lucid.tensor(inverse)


def _lengths_array(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * with batch_first) of the given lengths."""
    lengths_array = _lengths_array(lengths)
    sorted_indices = None
    if enforce_sorted:
        if np.any(lengths_array[1:] > lengths_array[:-1]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
    else:
        order = np.argsort(-lengths_array, kind="stable")
        lengths_array = lengths_array[order]
        sorted_indices = lucid.tensor(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lengths_array.size and lengths_array.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    batch_sizes = (lengths_array[None, :] > np.arange(lengths_array[0])[:, None]).sum(1)
    # rows in time-major order: step t holds the first batch_sizes[t] sequences
    valid = np.arange(batch)[None, :] < batch_sizes[:, None]
    rows = np.flatnonzero(valid)
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = flat.index_select(0, lucid.tensor(rows))
    return PackedSequence(data, lucid.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo pack_padded_sequence: (padded batch, lengths), in the original batch order."""
    data, batch_sizes, sorted_indices, unsorted_indices = sequence
    sizes = np.asarray(batch_sizes.tolist(), dtype=np.int64)
    steps, batch = sizes.size, int(sizes[0])
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps_out = total_length
    else:
        steps_out = steps
    valid = np.zeros((steps_out, batch), dtype=bool)
    valid[:steps] = np.arange(batch)[None, :] < sizes[:, None]
    # every padded position reads the extra padding row appended after the data
    rows = np.full((steps_out, batch), data.shape[0], dtype=np.int64)
    rows[valid] = np.arange(data.shape[0])
    padding = lucid.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    gathered = lucid.cat([data, padding], 0).index_select(0, lucid.tensor(rows.reshape(-1)))
    output = gathered.reshape(steps_out, batch, *data.shape[1:])
    lengths = valid.sum(0)
    if unsorted_indices is not None:
        output = output.index_select(1, unsorted_indices)
        lengths = lengths[np.asarray(unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        output = output.transpose(0, 1)
    return output, lucid.tensor(lengths.astype(np.int64))


def pad_sequence(
    sequences: Tensor | Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of shape (L_i, *) into (T, B, *) (B, T, * with batch_first), padded."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    lengths = np.array([sequence.shape[0] for sequence in sequences], dtype=np.int64)
    steps = int(lengths.max())
    first = sequences[0]
    padding = lucid.full((1, *first.shape[1:]), padding_value, dtype=first.dtype)
    flat = lucid.cat([*sequences, padding], 0)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    position = np.arange(steps)[None, :]
    if padding_side == "left":
        position = position - (steps - lengths)[:, None]
    valid = (position >= 0) & (position < lengths[:, None])
    rows = np.where(valid, offsets[:, None] + position, flat.shape[0] - 1)
    if not batch_first:
        rows = rows.T
    output = flat.index_select(0, lucid.tensor(rows.reshape(-1)))
    return output.reshape(*rows.shape, *first.shape[1:])


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The list of unpadded sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[index, :length] for index, length in enumerate(lengths.tolist())]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shape (L_i, *)."""
    lengths = lucid.tensor([sequence.shape[0] for sequence in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences of a PackedSequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
