"""SyncBatchNorm on W ranks equals BatchNorm over the global batch: outputs, input gradients,
summed parameter gradients and running statistics; also the sampler's default replicas."""

import numpy as np

import lucid
import lucid.distributed as dist
from lucid import nn
from lucid.utils.data import DistributedSampler

dist.init_process_group("mpi")
rank = dist.get_rank()
world = dist.get_world_size()

# an uneven split of a global batch of 7: the statistics must weight ranks by their counts
sizes = [7 // world + (1 if r < 7 % world else 0) for r in range(world)]
start = sum(sizes[:rank])
mine = slice(start, start + sizes[rank])
generator = np.random.default_rng(0)
for shape, reference_layer in (((7, 3, 4), nn.BatchNorm1d), ((7, 2, 3, 3), nn.BatchNorm2d)):
    channels = shape[1]
    inputs = generator.normal(5.0, 2.0, shape)
    coefficients = generator.normal(size=shape)
    weight = generator.normal(size=channels)
    bias = generator.normal(size=channels)

    def build(layer, weight=weight, bias=bias):
        layer = layer.double()
        with lucid.no_grad():
            layer.weight.copy_(lucid.tensor(weight))
            layer.bias.copy_(lucid.tensor(bias))
        return layer

    reference = build(reference_layer(channels, momentum=0.3))
    full = lucid.tensor(inputs, requires_grad=True)
    expected = reference(full)
    (expected * lucid.tensor(coefficients)).sum().backward()

    synced = build(nn.SyncBatchNorm.convert_sync_batchnorm(reference_layer(channels, momentum=0.3)))
    assert isinstance(synced, nn.SyncBatchNorm)
    local = lucid.tensor(inputs[mine], requires_grad=True)
    output = synced(local)
    assert output.grad_fn.name() == "SyncBatchNormBackward"
    (output * lucid.tensor(coefficients[mine])).sum().backward()

    np.testing.assert_allclose(output.detach().numpy(), expected.detach().numpy()[mine], atol=1e-12)
    np.testing.assert_allclose(local.grad.numpy(), full.grad.numpy()[mine], atol=1e-12)
    for name in ("weight", "bias"):
        # each rank holds its share of the parameter gradient; their sum is the global one
        total = getattr(synced, name).grad.clone()
        dist.all_reduce(total)
        np.testing.assert_allclose(total.numpy(), getattr(reference, name).grad.numpy(), atol=1e-12)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            getattr(synced, name).numpy(), getattr(reference, name).numpy(), rtol=1e-13
        )
    assert synced.num_batches_tracked.item() == 1
    # evaluation uses the (shared) running statistics: no communication, the same as BatchNorm
    synced.eval()
    reference.eval()
    np.testing.assert_allclose(
        synced(local).detach().numpy(), reference(full).detach().numpy()[mine], atol=1e-12
    )

sampler = DistributedSampler(range(10), shuffle=False)
assert (sampler.num_replicas, sampler.rank) == (world, rank)
padded = 10 + (-10) % world
assert list(sampler) == [index % 10 for index in range(rank, padded, world)]
dist.destroy_process_group()
print(f"PASSED rank {rank}", flush=True)
