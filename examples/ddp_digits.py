"""The digits CNN of examples/demo.py trained data-parallel: a DistributedSampler gives every
process its share of each epoch, DistributedDataParallel averages the gradients, and the
result is the accuracy one process reaches with the whole global batch.

    mpiexec -n 2 python examples/ddp_digits.py            # or -n 1: the same accuracy
    python -m lucid.distributed.run --nproc-per-node 2 examples/ddp_digits.py
    mpiexec -n 2 python examples/ddp_digits.py --plant-nan 5

With `--plant-nan STEP`, rank 1 gets a blank image at that step; the model scales each image
by its maximum, so 0/0 makes a NaN there, and every rank stops together, naming rank 1, the
op, the line and the samples (as the sampler handed them out). Needs scikit-learn for the
data and the distributed extra.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import lucid
import lucid.distributed as dist
from lucid import nn
from lucid.nn.parallel import DistributedDataParallel
from lucid.nn.parallel.distributed import DistributedNonFiniteError
from lucid.optim import Adam
from lucid.optim.lr_scheduler import CosineAnnealingLR
from lucid.utils.data import DataLoader, DistributedSampler, random_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo import accuracy, build_model, load_digits_dataset  # noqa: E402


class DigitsNet(nn.Module):
    """The demo's CNN behind a per-image scaling to [0, 1] (no epsilon: a blank image is 0/0)."""

    def __init__(self) -> None:
        super().__init__()
        self.cnn = build_model()

    def forward(self, images: lucid.Tensor) -> lucid.Tensor:
        scaled = images / images.amax(dim=(1, 2, 3), keepdim=True)
        return self.cnn(scaled)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32, help="the global batch")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--plant-nan", type=int, default=None, metavar="STEP")
    options = parser.parse_args(argv)

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if options.batch_size % world:
        parser.error(f"--batch-size {options.batch_size} must divide among {world} processes")
    start = time.perf_counter()
    lucid.manual_seed(options.seed)
    dataset = load_digits_dataset()
    train_set, test_set = random_split(
        dataset, [0.8, 0.2], generator=lucid.Generator().manual_seed(options.seed)
    )
    # Rank r takes every world-th index of one shuffled order, so the shards of a step make up
    # the batch one process would take from the same order: the same steps, up to rounding.
    sampler = DistributedSampler(train_set, seed=options.seed, drop_last=True)
    shard = options.batch_size // world
    loader = DataLoader(train_set, batch_size=shard, sampler=sampler, drop_last=True)
    model = DigitsNet()
    ddp = DistributedDataParallel(model)
    optimizer = Adam(model.parameters(), lr=options.lr)
    scheduler = CosineAnnealingLR(optimizer, T_max=options.epochs * len(loader))
    loss_fn = nn.CrossEntropyLoss()
    step = 0
    for epoch in range(options.epochs):
        sampler.set_epoch(epoch)
        shares = list(sampler)  # this rank's indices, in the order the loader batches them
        for batch, (inputs, targets) in enumerate(loader):
            if options.plant_nan == step and rank == 1:
                inputs[0] = 0.0  # a blank image: its maximum is 0
            ddp.set_batch(step, shares[batch * shard : (batch + 1) * shard])
            optimizer.zero_grad()
            try:
                loss = loss_fn(ddp(inputs), targets)
                loss.backward()
            except DistributedNonFiniteError as error:
                print(f"[rank {rank}] stopped at step {step}: {error}", flush=True)
                # Every rank is here: leave together, since MPI's launcher ends the job as
                # soon as one process exits with a failure.
                dist.barrier()
                dist.destroy_process_group()
                return 1
            optimizer.step()
            scheduler.step()
            step += 1
            if options.max_steps is not None and step >= options.max_steps:
                break
        if options.max_steps is not None and step >= options.max_steps:
            break
    test_images, test_labels = dataset[lucid.tensor(np.asarray(test_set.indices))]
    if rank == 0:
        result = accuracy(model, test_images, test_labels)
        print(f"{world} process(es), {step} steps of global batch {options.batch_size}: "
              f"test accuracy {result:.4f} ({time.perf_counter() - start:.1f} s)")  # fmt: skip
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
