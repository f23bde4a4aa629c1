"""Collectives and point-to-point messages on a process group, each an MPI non-blocking call
on the tensors' NumPy buffers, waited on under the group's timeout.

They write into their tensors in place and record nothing in the autograd graph (as torch's):
a tensor that requires grad is reduced, sent or overwritten like any other, its version is
unchanged and no gradient flows through the communication.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.distributed.process_group import (
    ProcessGroup,
    ReduceOp,
    Work,
    _check_usable,
    _group_rank,
    _resolve_group,
    _State,
)

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "gather",
    "irecv",
    "isend",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]

# NumPy dtypes MPI reduces as they are; others are reduced in a working copy (_reduction_dtype).
_MPI_REDUCIBLE = {np.dtype(name) for name in "float32 float64 int8 int16 int32 int64 uint8".split()}
_MPI_OPS = {
    ReduceOp.SUM: "SUM",
    ReduceOp.AVG: "SUM",
    ReduceOp.PRODUCT: "PROD",
    ReduceOp.MIN: "MIN",
    ReduceOp.MAX: "MAX",
    ReduceOp.BAND: "BAND",
    ReduceOp.BOR: "BOR",
    ReduceOp.BXOR: "BXOR",
}
_BITWISE = {ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR}


def _check_tensor(value: Any, parameter: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{parameter}` of type lucid.Tensor\n"
            f"             but got {type(value)} instead."
        )
    return value


def _check_tensor_list(value: Any, parameter: str) -> list[Tensor]:
    if not isinstance(value, list) or not all(isinstance(item, Tensor) for item in value):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{parameter}` of type "
            f"List[lucid.Tensor]\n             but got {type(value)} instead."
        )
    return value


def _check_same_dtype(tensors: list[Tensor]) -> None:
    first = tensors[0].dtype
    for tensor in tensors[1:]:
        if tensor.dtype != first:
            raise ValueError(
                f"Invalid usage of tensors with different dtypesFound {first} and  {tensor.dtype}"
            )


def _check_op(op: Any, collective: str, dtype: np.dtype) -> str:
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"{collective}(): op must be a lucid.distributed.ReduceOp, not {op!r}")
    if op is ReduceOp.AVG and dtype.kind != "f":
        raise RuntimeError(
            f"ProcessGroupMPI::{collective}: ReduceOp.AVG needs a floating-point tensor, got "
            f"{dtype}"
        )
    if op in _BITWISE and dtype.kind not in "biu":
        raise RuntimeError(
            f"ProcessGroupMPI::{collective}: {op} needs an integer or bool tensor, got {dtype}"
        )
    return _MPI_OPS[op]


def _reduction_dtype(dtype: np.dtype) -> np.dtype:
    if dtype in _MPI_REDUCIBLE:
        return dtype
    if dtype == np.bool_:
        # 0/1 bytes: SUM and MAX give or, PRODUCT and MIN give and
        return np.dtype(np.uint8)
    if dtype.kind == "f":
        return np.dtype(np.float32) if dtype.itemsize <= 4 else np.dtype(np.float64)
    return dtype


def _staging(array: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """`array` itself when MPI can use its memory, else a contiguous copy to copy back."""
    if (dtype is None or array.dtype == dtype) and array.flags.c_contiguous:
        if array.flags.writeable:
            return array
    return np.ascontiguousarray(array, dtype=dtype)


def _copy_back(target: np.ndarray, staged: np.ndarray) -> None:
    if staged is target:
        return
    if target.dtype == np.bool_:
        np.not_equal(staged, 0, out=target)
    else:
        np.copyto(target, staged.reshape(target.shape), casting="unsafe")


def _as_bytes(array: np.ndarray) -> list[Any]:
    """An MPI buffer of the array's raw bytes: moving data needs no MPI type for its dtype."""
    return [array.reshape(-1).view(np.uint8), _State.mpi.BYTE]


def _run(
    request: Any,
    group: ProcessGroup,
    collective: str,
    async_op: bool,
    finish: Callable[[], None] | None = None,
    result: list[Any] | None = None,
) -> Work | None:
    work = Work([request], group, collective, finish, result)
    if async_op:
        return work
    work.wait()
    return None


def all_reduce(
    tensor: Tensor,
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce `tensor` across the group in place: every rank gets the result. AVG is a SUM
    divided by the group's size."""
    _check_tensor(tensor, "tensor")
    group = _resolve_group(group)
    data = tensor._data
    mpi_op = _check_op(op, "allreduce", data.dtype)
    _check_usable(group, "all_reduce")
    staged = _staging(data, _reduction_dtype(data.dtype))
    MPI = _State.mpi
    request = group._comm.Iallreduce(MPI.IN_PLACE, staged, op=getattr(MPI, mpi_op))

    def finish() -> None:
        if op is ReduceOp.AVG:
            np.true_divide(staged, group.size(), out=staged)
        _copy_back(data, staged)

    return _run(request, group, "all_reduce", async_op, finish, [tensor])


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Overwrite `tensor` on every rank with rank `src`'s."""
    # PyTorch looks the group up first: before init, that is the error
    group = _resolve_group(group)
    _check_tensor(tensor, "tensor")
    root = _group_rank(group, src, group_src, "src", "broadcast")
    _check_usable(group, "broadcast")
    data = tensor._data
    staged = _staging(data)
    request = group._comm.Ibcast(_as_bytes(staged), root=root)
    return _run(request, group, "broadcast", async_op, lambda: _copy_back(data, staged), [tensor])


def barrier(
    group: ProcessGroup | None = None,
    async_op: bool = False,
    device_ids: Any = None,
    timeout: timedelta | None = None,
) -> Work | None:
    """Wait until every rank of the group has reached this call."""
    group = _resolve_group(group)
    _check_usable(group, "barrier")
    work = Work([group._comm.Ibarrier()], group, "barrier")
    if async_op:
        return work
    work.wait(timeout)
    return None


def _check_list_length(tensors: list[Tensor], group: ProcessGroup, message: str) -> None:
    if len(tensors) != group.size():
        raise RuntimeError(message)


def _check_shapes(tensors: list[Tensor], shape: tuple[int, ...], collective: str) -> None:
    for index, tensor in enumerate(tensors):
        if tuple(tensor.shape) != shape:
            expected = ", ".join(map(str, shape))
            got = ", ".join(map(str, tensor.shape))
            raise RuntimeError(
                f"ProcessGroupMPI::{collective}: invalid tensor size at index {index} "
                f"(expected ({expected}), got ({got}))"
            )


def all_gather(
    tensor_list: list[Tensor],
    tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Fill `tensor_list[i]` on every rank with rank i's `tensor`."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    group = _resolve_group(group)
    _check_same_dtype([*tensor_list, tensor])
    _check_list_length(
        tensor_list,
        group,
        "ProcessGroupMPI::allgather: invalid output tensor list at index 0 (expected length "
        f"{group.size()}, got {len(tensor_list)})",
    )
    _check_shapes(tensor_list, tuple(tensor.shape), "allgather")
    _check_usable(group, "all_gather")
    send = _staging(tensor._data)
    gathered = np.empty((group.size(), *send.shape), send.dtype)
    request = group._comm.Iallgather(_as_bytes(send), _as_bytes(gathered))

    def finish() -> None:
        for output, part in zip(tensor_list, gathered):
            np.copyto(output._data, part)

    return _run(request, group, "all_gather", async_op, finish, tensor_list)


def all_gather_into_tensor(
    output_tensor: Tensor,
    input_tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's `input_tensor`, concatenated along dim 0 (or stacked, for an output of shape
    `(world_size, *input.shape)`) into `output_tensor`."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    group = _resolve_group(group)
    _check_same_dtype([output_tensor, input_tensor])
    size = group.size()
    shape = tuple(input_tensor.shape)
    stacked = (size, *shape)
    concatenated = (size * shape[0], *shape[1:]) if shape else stacked
    if tuple(output_tensor.shape) not in (stacked, concatenated):
        raise ValueError(
            "output tensor size must be equal to world_size times input tensor size: output "
            f"{tuple(output_tensor.shape)}, input {shape}, world_size {size}"
        )
    _check_usable(group, "all_gather_into_tensor")
    send = _staging(input_tensor._data)
    output = output_tensor._data
    staged = _staging(output)
    request = group._comm.Iallgather(_as_bytes(send), _as_bytes(staged))
    finish = lambda: _copy_back(output, staged)  # noqa: E731
    return _run(request, group, "all_gather_into_tensor", async_op, finish, [output_tensor])


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce `input` across ranks and give rank i the i-th of `world_size` equal chunks of the
    result (along dim 0, or of shape `(world_size, *output.shape)`)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    group = _resolve_group(group)
    _check_same_dtype([output, input])
    mpi_op = _check_op(op, "reduce_scatter_tensor", input._data.dtype)
    size = group.size()
    ranks_match = input.dim() in (output.dim(), output.dim() + 1)
    if input.numel() != size * output.numel() or not ranks_match:
        raise ValueError(
            "input tensor must be the same size as output size times world size: input "
            f"{tuple(input.shape)}, output {tuple(output.shape)}, world_size {size}"
        )
    _check_usable(group, "reduce_scatter_tensor")
    work_dtype = _reduction_dtype(input._data.dtype)
    send = _staging(input._data, work_dtype)
    target = output._data
    staged = _staging(target, work_dtype)
    MPI = _State.mpi
    request = group._comm.Ireduce_scatter_block(send, staged, op=getattr(MPI, mpi_op))

    def finish() -> None:
        if op is ReduceOp.AVG:
            np.true_divide(staged, size, out=staged)
        _copy_back(target, staged)

    return _run(request, group, "reduce_scatter_tensor", async_op, finish, [output])


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce `tensor` across ranks into rank `dst`'s `tensor`; the others' are unchanged."""
    # PyTorch looks the group up first: before init, that is the error
    group = _resolve_group(group)
    _check_tensor(tensor, "tensor")
    root = _group_rank(group, dst, group_dst, "dst", "reduce")
    data = tensor._data
    mpi_op = _check_op(op, "reduce", data.dtype)
    _check_usable(group, "reduce")
    MPI = _State.mpi
    is_root = group.rank() == root
    staged = _staging(data, _reduction_dtype(data.dtype))
    if is_root:
        request = group._comm.Ireduce(MPI.IN_PLACE, staged, op=getattr(MPI, mpi_op), root=root)
    else:
        request = group._comm.Ireduce(staged, None, op=getattr(MPI, mpi_op), root=root)

    def finish() -> None:
        if is_root:
            if op is ReduceOp.AVG:
                np.true_divide(staged, group.size(), out=staged)
            _copy_back(data, staged)

    return _run(request, group, "reduce", async_op, finish, [tensor])


def _check_root_list(
    collective: str,
    tensors: list[Tensor] | None,
    tensor: Tensor,
    group: ProcessGroup,
    is_root: bool,
) -> None:
    """gather's output list or scatter's input list: given on the root rank only, one tensor
    per rank, each of `tensor`'s dtype and shape."""
    parameter = f"{collective}_list"
    root, side = ("destination", "output") if collective == "gather" else ("source", "input")
    if not is_root:
        if tensors:
            raise ValueError(f"Argument ``{parameter}`` must NOT be specified on non-{root} ranks.")
        return
    if not tensors:
        raise ValueError(f"Argument ``{parameter}`` must be specified on {root} rank.")
    _check_tensor_list(tensors, parameter)
    _check_same_dtype([*tensors, tensor])
    _check_list_length(
        tensors,
        group,
        f"ProcessGroupMPI::{collective}: Incorrect {side} list size {len(tensors)}. "
        f"{side.capitalize()} list size should be {group.size()}, same as size of the process "
        "group.",
    )
    _check_shapes(tensors, tuple(tensor.shape), collective)


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Collect every rank's `tensor` into `gather_list` on rank `dst`."""
    _check_tensor(tensor, "tensor")
    group = _resolve_group(group)
    if dst is None and group_dst is None:
        dst = 0
    root = _group_rank(group, dst, group_dst, "dst", "gather")
    is_root = group.rank() == root
    _check_root_list("gather", gather_list, tensor, group, is_root)
    _check_usable(group, "gather")
    send = _staging(tensor._data)
    gathered = np.empty((group.size(), *send.shape), send.dtype) if is_root else None
    receive = _as_bytes(gathered) if is_root else None
    request = group._comm.Igather(_as_bytes(send), receive, root=root)

    def finish() -> None:
        if is_root:
            for output, part in zip(gather_list, gathered):
                np.copyto(output._data, part)

    return _run(request, group, "gather", async_op, finish, gather_list or [])


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Give rank i `scatter_list[i]` from rank `src`, written into its `tensor`."""
    _check_tensor(tensor, "tensor")
    group = _resolve_group(group)
    if src is None and group_src is None:
        src = 0
    root = _group_rank(group, src, group_src, "src", "scatter")
    is_root = group.rank() == root
    _check_root_list("scatter", scatter_list, tensor, group, is_root)
    _check_usable(group, "scatter")
    data = tensor._data
    staged = _staging(data)
    parts = np.stack([part._data for part in scatter_list]) if is_root else None
    request = group._comm.Iscatter(
        _as_bytes(parts) if is_root else None, _as_bytes(staged), root=root
    )
    return _run(request, group, "scatter", async_op, lambda: _copy_back(data, staged), [tensor])


def _peer(group: ProcessGroup, rank: int | None, group_rank: int | None, role: str) -> int:
    peer = _group_rank(group, rank, group_rank, role, "send" if role == "dst" else "recv")
    if peer == group.rank():
        which = "destination" if role == "dst" else "source"
        raise ValueError(
            f"Invalid {which} rank: {which} rank should not be the same as the rank of the "
            "current process."
        )
    return peer


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work:
    """Start sending `tensor` to rank `dst`; the returned Work's `wait()` finishes it."""
    # PyTorch looks the group up first: before init, that is the error
    group = _resolve_group(group)
    _check_tensor(tensor, "tensor")
    peer = _peer(group, dst, group_dst, "dst")
    _check_usable(group, "send")
    send = np.array(tensor._data, order="C")
    request = group._comm.Isend(_as_bytes(send), dest=peer, tag=tag)
    return Work([request], group, "send", result=[tensor])


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work:
    """Start receiving into `tensor` from rank `src` (from any rank when None)."""
    _check_tensor(tensor, "tensor")
    group = _resolve_group(group)
    MPI = _State.mpi
    peer = MPI.ANY_SOURCE if src is None and group_src is None else None
    if peer is None:
        peer = _peer(group, src, group_src, "src")
    _check_usable(group, "recv")
    data = tensor._data
    staged = _staging(data)
    request = group._comm.Irecv(_as_bytes(staged), source=peer, tag=tag)
    work = Work([request], group, "recv", lambda: _copy_back(data, staged), [tensor])
    work._status = MPI.Status()
    return work


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send `tensor` to rank `dst` and wait until the message has left."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    return work.source_rank()


def _encode(value: Any, collective: str, where: str) -> bytes:
    def refuse(item: Any) -> Any:
        raise TypeError(
            f"{collective}: {where} holds a {type(item).__module__}.{type(item).__qualname__}, "
            "which is not JSON-able; lucid.distributed sends objects as JSON (None, bool, int, "
            "float, str, list, tuple and dicts with str keys) and never pickles"
        )

    return json.dumps(value, default=refuse).encode()


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: ProcessGroup | None = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Replace `object_list`'s items on every rank with rank `src`'s (JSON-able objects only:
    tuples arrive as lists, dict keys as strings)."""
    group = _resolve_group(group)
    if src is None and group_src is None:
        src = 0
    root = _group_rank(group, src, group_src, "src", "broadcast")
    _check_usable(group, "broadcast_object_list")
    if group.rank() == root:
        payload = _encode(list(object_list), "broadcast_object_list", "object_list")
        length = np.array([len(payload)], np.int64)
    else:
        payload = b""
        length = np.zeros(1, np.int64)
    comm = group._comm
    Work([comm.Ibcast(length, root=root)], group, "broadcast_object_list").wait()
    buffer = np.frombuffer(payload, np.uint8).copy() if payload else np.empty(length[0], np.uint8)
    Work([comm.Ibcast(buffer, root=root)], group, "broadcast_object_list").wait()
    if group.rank() != root:
        received = json.loads(buffer.tobytes())
        if len(received) != len(object_list):
            raise RuntimeError(
                f"broadcast_object_list: rank {root} sent {len(received)} objects but this "
                f"rank's object_list has {len(object_list)}"
            )
        object_list[:] = received


def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """Set `object_list[i]` on every rank to rank i's `obj` (JSON-able objects only)."""
    group = _resolve_group(group)
    _check_usable(group, "all_gather_object")
    payload = np.frombuffer(_encode(obj, "all_gather_object", "obj"), np.uint8)
    comm = group._comm
    lengths = np.empty(group.size(), np.int64)
    own = np.array([payload.size], np.int64)
    Work([comm.Iallgather(own, lengths)], group, "all_gather_object").wait()
    gathered = np.empty(int(lengths.sum()), np.uint8)
    request = comm.Iallgatherv(payload, [gathered, lengths.tolist(), _State.mpi.BYTE])
    Work([request], group, "all_gather_object").wait()
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for index in range(group.size()):
        object_list[index] = json.loads(gathered[offsets[index] : offsets[index + 1]].tobytes())
