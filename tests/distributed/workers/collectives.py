"""Every collective against NumPy on W ranks; each rank prints PASSED when all its checks hold."""

from datetime import timedelta

import numpy as np

import lucid
import lucid.distributed as dist

dist.init_process_group("mpi", timeout=timedelta(seconds=30))
rank = dist.get_rank()
world = dist.get_world_size()


def data(r, shape=(2, 3), dtype=np.float64):
    """Rank r's input: distinct per rank and per element, known to every rank."""
    return (np.arange(np.prod(shape)).reshape(shape) + 1.5 * r + 1).astype(dtype)


def raises(kind, text, call):
    try:
        call()
    except kind as error:
        assert text in str(error), str(error)
        return
    raise AssertionError(f"expected {kind.__name__}: {text}")


everyone = np.stack([data(r) for r in range(world)])
reductions = {
    dist.ReduceOp.SUM: everyone.sum(0),
    dist.ReduceOp.AVG: everyone.sum(0) / world,
    dist.ReduceOp.PRODUCT: everyone.prod(0),
    dist.ReduceOp.MIN: everyone.min(0),
    dist.ReduceOp.MAX: everyone.max(0),
}
for op, expected in reductions.items():
    x = lucid.tensor(data(rank))
    assert dist.all_reduce(x, op=op) is None
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-15)

# integer, bool, half, a non-contiguous view and a 0-d tensor
x = lucid.tensor(data(rank, dtype=np.int64))
dist.all_reduce(x)
assert x.dtype == lucid.int64 and (x.numpy() == everyone.astype(np.int64).sum(0)).all()
flags = lucid.tensor(np.array([rank == 1, False, True]))
dist.all_reduce(flags)
assert flags.dtype == lucid.bool and flags.numpy().tolist() == [True, False, True]
flags = lucid.tensor(np.array([rank == 1, False, True]))
dist.all_reduce(flags, op=dist.ReduceOp.MIN)
assert flags.numpy().tolist() == [False, False, True]
half = lucid.tensor(data(rank, dtype=np.float16))
dist.all_reduce(half)
assert half.dtype == lucid.float16
np.testing.assert_allclose(half.numpy(), everyone.sum(0), rtol=1e-3)
base = lucid.tensor(data(rank, (3, 2)))
view = base.t()
dist.all_reduce(view)
np.testing.assert_allclose(base.numpy(), np.stack([data(r, (3, 2)) for r in range(world)]).sum(0))
empty = lucid.zeros(0, 3)
dist.all_reduce(empty)
assert empty.shape == (0, 3)
scalar = lucid.tensor(float(rank))
dist.all_reduce(scalar, op=dist.ReduceOp.MAX)
assert scalar.item() == world - 1

# no autograd through a collective: values change in place, nothing is recorded
leaf = lucid.tensor(data(rank), requires_grad=True)
dist.all_reduce(leaf)
assert leaf.requires_grad and leaf.grad_fn is None and leaf.is_leaf
np.testing.assert_allclose(leaf.detach().numpy(), everyone.sum(0))
hidden = leaf * 2
dist.all_reduce(hidden)
assert hidden.grad_fn.name() == "MulBackward0"
hidden.sum().backward()
assert (leaf.grad.numpy() == 2).all()

# async: a work handle that completes, with the result only after wait
x = lucid.tensor(data(rank))
work = dist.all_reduce(x, op=dist.ReduceOp.AVG, async_op=True)
assert isinstance(work, dist.Work)
assert work.wait() is True and work.is_completed() and work.is_success()
np.testing.assert_allclose(x.numpy(), reductions[dist.ReduceOp.AVG])
x = lucid.tensor(data(rank))
work = dist.all_reduce(x, async_op=True)
while not work.is_completed():
    pass
np.testing.assert_allclose(x.numpy(), everyone.sum(0))
assert work.result()[0] is x

for src in range(world):
    x = lucid.tensor(data(rank))
    dist.broadcast(x, src=src)
    np.testing.assert_array_equal(x.numpy(), data(src))
x = lucid.tensor(data(rank, dtype=np.int32))
dist.broadcast(x, src=world - 1, async_op=True).wait()
np.testing.assert_array_equal(x.numpy(), data(world - 1, dtype=np.int32))

# gathers and scatters
outputs = [lucid.zeros(2, 3, dtype=lucid.float64) for _ in range(world)]
dist.all_gather(outputs, lucid.tensor(data(rank)))
for r in range(world):
    np.testing.assert_array_equal(outputs[r].numpy(), data(r))
into = lucid.zeros(2 * world, 3, dtype=lucid.float64)
dist.all_gather_into_tensor(into, lucid.tensor(data(rank)))
np.testing.assert_array_equal(into.numpy(), np.concatenate([data(r) for r in range(world)]))
stacked = lucid.zeros(world, 2, 3, dtype=lucid.float64)
dist.all_gather_into_tensor(stacked, lucid.tensor(data(rank)), async_op=True).wait()
np.testing.assert_array_equal(stacked.numpy(), everyone)

big = np.stack([data(r, (world, 3)) for r in range(world)])
for op, combine in ((dist.ReduceOp.SUM, big.sum(0)), (dist.ReduceOp.AVG, big.sum(0) / world)):
    out = lucid.zeros(1, 3, dtype=lucid.float64)
    dist.reduce_scatter_tensor(out, lucid.tensor(data(rank, (world, 3))), op=op)
    np.testing.assert_allclose(out.numpy(), combine[rank : rank + 1], rtol=1e-15)

x = lucid.tensor(data(rank))
dist.reduce(x, dst=1, op=dist.ReduceOp.MAX)
np.testing.assert_array_equal(x.numpy(), everyone.max(0) if rank == 1 else data(rank))

gathered = [lucid.zeros(2, 3, dtype=lucid.float64) for _ in range(world)] if rank == 0 else None
dist.gather(lucid.tensor(data(rank)), gathered, dst=0)
if rank == 0:
    np.testing.assert_array_equal(np.stack([g.numpy() for g in gathered]), everyone)
pieces = [lucid.tensor(data(10 + r)) for r in range(world)] if rank == 1 else None
x = lucid.zeros(2, 3, dtype=lucid.float64)
dist.scatter(x, pieces, src=1)
np.testing.assert_array_equal(x.numpy(), data(10 + rank))

# point to point: a ring, blocking and non-blocking, and a receive from any rank
right, left = (rank + 1) % world, (rank - 1) % world
incoming = lucid.zeros(2, 3, dtype=lucid.float64)
sending = dist.isend(lucid.tensor(data(rank)), dst=right)
receiving = dist.irecv(incoming, src=left)
sending.wait()
receiving.wait()
np.testing.assert_array_equal(incoming.numpy(), data(left))
if rank == 0:
    senders = set()
    for _ in range(world - 1):
        message = lucid.zeros(1, dtype=lucid.int64)
        sender = dist.recv(message)
        assert message.item() == 100 + sender
        senders.add(sender)
    assert senders == set(range(1, world))
else:
    dist.send(lucid.tensor([100 + rank]), dst=0, tag=0)

# objects travel as JSON
objects = [{"step": 3, "lr": 0.5}, [1, "two"], None] if rank == 0 else [None, None, None]
dist.broadcast_object_list(objects, src=0)
assert objects == [{"step": 3, "lr": 0.5}, [1, "two"], None]
gathered_objects = [None] * world
dist.all_gather_object(gathered_objects, {"rank": rank, "name": "r" * rank})
assert gathered_objects == [{"rank": r, "name": "r" * r} for r in range(world)]
raises(TypeError, "numpy.ndarray", lambda: dist.all_gather_object([None] * world, np.ones(2)))
raises(TypeError, "never pickles", lambda: dist.broadcast_object_list([object()], src=rank))

# a group of ranks 0 and 1
pair = dist.new_group([0, 1])
if rank < 2:
    x = lucid.tensor(data(rank))
    dist.all_reduce(x, group=pair)
    np.testing.assert_allclose(x.numpy(), data(0) + data(1))
    assert dist.get_world_size(pair) == 2 and dist.get_rank(pair) == rank
    y = lucid.tensor(data(rank))
    dist.broadcast(y, src=1, group=pair)
    np.testing.assert_array_equal(y.numpy(), data(1))
    if world == 3:
        outsider = lambda: dist.broadcast(y, src=2, group=pair)  # noqa: E731
        raises(ValueError, "Global rank 2 is not part of group", outsider)
else:
    assert pair is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(pair) == -1

# errors
raises(
    RuntimeError,
    f"invalid output tensor list at index 0 (expected length {world}, got {world + 1})",
    lambda: dist.all_gather([lucid.zeros(3)] * (world + 1), lucid.zeros(3)),
)
raises(
    ValueError,
    "Invalid usage of tensors with different dtypesFound lucid.int64 and  lucid.float32",
    lambda: dist.all_gather([lucid.zeros(3, dtype=lucid.int64)] * world, lucid.zeros(3)),
)
raises(
    RuntimeError,
    "invalid tensor size at index 0 (expected (3), got (4))",
    lambda: dist.all_gather([lucid.zeros(4)] * world, lucid.zeros(3)),
)
raises(TypeError, "Expected parameter `tensor` of type lucid.Tensor", lambda: dist.all_reduce([1]))
raises(TypeError, "op must be", lambda: dist.all_reduce(lucid.zeros(2), op="sum"))
raises(RuntimeError, "invalid root rank: 7", lambda: dist.broadcast(lucid.zeros(2), group_src=7))
raises(RuntimeError, "invalid root rank: 7", lambda: dist.broadcast(lucid.zeros(2), 7))
raises(ValueError, "Must specify global_rank or group_rank", lambda: dist.broadcast(lucid.ones(1)))
raises(ValueError, "Can't specify both", lambda: dist.broadcast(lucid.ones(1), 0, group_src=0))
if rank == 0:
    raises(ValueError, "must be specified on destination", lambda: dist.gather(lucid.zeros(1)))
else:
    raises(
        ValueError,
        "must NOT be specified on non-destination ranks",
        lambda: dist.gather(lucid.zeros(1), [lucid.zeros(1)] * world, dst=0),
    )
raises(
    ValueError,
    "destination rank should not be the same as the rank of the current process",
    lambda: dist.send(lucid.zeros(1), dst=rank),
)
raises(ValueError, "trying to initialize the default process group twice!", dist.init_process_group)

dist.barrier()
assert dist.get_backend() == "mpi" and dist.is_initialized()
dist.destroy_process_group()
assert not dist.is_initialized()
raises(ValueError, "Default process group has not been initialized", dist.get_rank)
dist.init_process_group()
x = lucid.tensor(data(rank))
dist.all_reduce(x)
np.testing.assert_allclose(x.numpy(), everyone.sum(0))
dist.destroy_process_group()
print(f"PASSED rank {rank}", flush=True)
