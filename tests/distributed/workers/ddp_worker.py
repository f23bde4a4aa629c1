"""Run under mpiexec by test_ddp.py: one scenario per launch, one `RESULT {json}` line per rank.

Every rank also computes the single-process reference on the global batch itself, so that
the comparison needs no file exchange.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings

import numpy as np

import lucid
import lucid.distributed as dist
from lucid import nn
from lucid.autograd import AnomalyError
from lucid.nn.parallel import DistributedDataParallel
from lucid.nn.parallel.distributed import DistributedNonFiniteError

GLOBAL_BATCH = 12
STEPS = 3


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(6 * 2 * 2, 3),
    )


def make(kind: str, seed: int) -> nn.Module:
    lucid.manual_seed(seed)
    return (mlp() if kind == "mlp" else cnn()).double()


def batches(kind: str, steps: int) -> list[tuple[lucid.Tensor, lucid.Tensor]]:
    generator = np.random.default_rng(7)
    shape = (GLOBAL_BATCH, 6) if kind == "mlp" else (GLOBAL_BATCH, 1, 8, 8)
    return [
        (lucid.tensor(generator.standard_normal(shape)),
         lucid.tensor(generator.integers(0, 3, GLOBAL_BATCH)))
        for _ in range(steps)
    ]  # fmt: skip


def shard(tensor: lucid.Tensor, rank: int, world: int) -> lucid.Tensor:
    size = tensor.shape[0] // world
    return tensor[rank * size : (rank + 1) * size]


def train(
    model: nn.Module,
    data: list,
    rank: int,
    world: int,
    ddp: bool,
    micro: int = 1,
    bucket_cap_mb: float | None = None,
) -> None:
    """SGD with momentum; with `micro` > 1 each step accumulates that many micro-batches (the
    first ones under no_sync when `ddp`)."""
    wrapped = DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb) if ddp else model
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for start in range(0, len(data), micro):
        optimizer.zero_grad()
        group = data[start : start + micro]
        for position, (x, y) in enumerate(group):
            if ddp:
                x, y = shard(x, rank, world), shard(y, rank, world)
            last = position == len(group) - 1
            if ddp and not last:
                with wrapped.no_sync():
                    loss_fn(wrapped(x), y).backward()
            else:
                loss_fn(wrapped(x), y).backward()
        optimizer.step()


def max_difference(a: nn.Module, b: nn.Module) -> float:
    return max(
        float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
        for p, q in zip(a.parameters(), b.parameters())
    )


def scenario_equal(rank: int, world: int) -> dict:
    result = {}
    for kind in ("mlp", "cnn"):
        data = batches(kind, STEPS)
        reference = make(kind, 0)
        train(reference, data, rank, world, ddp=False)
        # Each rank starts from its own weights: the construction broadcast must fix that.
        model = make(kind, rank)
        # The CNN in buckets of about 1 KB: several all-reduces in flight during backward.
        train(model, data, rank, world, ddp=True, bucket_cap_mb=0.001 if kind == "cnn" else None)
        result[kind] = max_difference(model, reference)
    return result


def scenario_no_sync(rank: int, world: int) -> dict:
    data = batches("mlp", 4)
    reference = make("mlp", 0)
    train(reference, data, rank, world, ddp=False, micro=2)
    model = make("mlp", rank)
    train(model, data, rank, world, ddp=True, micro=2)
    return {"mlp": max_difference(model, reference)}


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 2)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        return self.used(x)


def scenario_unused(rank: int, world: int) -> dict:
    lucid.manual_seed(0)
    model = Branchy().double()
    ddp = DistributedDataParallel(model, find_unused_parameters=True)
    x = lucid.tensor(np.arange(12 * 4, dtype=np.float64).reshape(12, 4) / 10)
    ddp(shard(x, rank, world)).pow(2).mean().backward()
    lucid.manual_seed(0)
    reference = Branchy().double()
    reference(x).pow(2).mean().backward()
    result = {
        "difference": float(np.abs(model.used.weight.grad.numpy()
                                   - reference.used.weight.grad.numpy()).max()),
        "unused_grad_is_none": model.unused.weight.grad is None,
        "keys": list(ddp.state_dict()),
        "module_is_model": ddp.module is model,
    }  # fmt: skip
    strict = DistributedDataParallel(Branchy().double())
    strict(shard(x, rank, world)).sum().backward()
    try:
        strict(shard(x, rank, world))
    except RuntimeError as error:
        result["error"] = str(error)
    return result


class Planted(nn.Module):
    """A small MLP with a NaN planted on one rank at one step: in forward (log of a negative),
    in backward (sqrt at an exact zero: its derivative divides by zero)."""

    def __init__(self, plant: str | None) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8, bias=False)
        self.fc2 = nn.Linear(8, 1)
        self.plant = plant

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        h = self.fc1(x)
        if self.plant == "forward":
            h = (h - 1e3).log()  # <planted forward>
        elif self.plant == "masked":
            # born and masked out: it reaches neither the loss nor the gradients
            h = lucid.where(h > 1e9, (h - 1e3).log(), h)
        elif self.plant == "backward":
            h = (h * h).sqrt()  # <planted backward>
        return self.fc2(h.tanh())


def scenario_nan(rank: int, world: int, where: str, policy: str, anomaly: bool) -> dict:
    lucid.manual_seed(0)
    model = Planted(None).double()
    ddp = DistributedDataParallel(model, on_nonfinite=policy)
    generator = np.random.default_rng(3)
    outcomes = []
    for step in range(3):
        x = generator.standard_normal((world * 4, 4))
        samples = list(range(rank * 4 + step * world * 4, (rank + 1) * 4 + step * world * 4))
        x = x[rank * 4 : (rank + 1) * 4]
        planted = rank == 1 and step == 1
        model.plant = where if planted and where != "data" else None
        if where == "two" and step == 1:
            # rank 1 in backward, rank 2 in forward: rank 2's birth comes first in the step
            planted = rank in (1, 2)
            model.plant = {1: "backward", 2: "forward"}.get(rank)
        if planted and where == "data":
            x[2, 1] = np.nan
        if planted and model.plant == "backward":
            x[0] = 0.0  # fc1 has no bias: a zero row of h, where sqrt's derivative is 1/0
        ddp.set_batch(step, samples)
        ddp.zero_grad()
        outcome = {"step": step}
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with lucid.autograd.detect_anomaly() if anomaly else contextlib.nullcontext():
                    loss = ddp(lucid.tensor(x)).pow(2).mean()  # <batch enters>
                    loss.backward()
            outcome["warnings"] = [
                str(w.message).splitlines()[0] for w in caught
                if "all-reduce" in str(w.message) or "rank" in str(w.message)
            ]  # fmt: skip
        except DistributedNonFiniteError as error:
            outcome["raised"] = "DistributedNonFiniteError"
            outcome["message"] = str(error)
        except AnomalyError as error:
            outcome["raised"] = "AnomalyError"
            outcome["message"] = str(error).splitlines()[0]
        report = ddp.nonfinite_report
        if report is not None and step == 1:
            outcome["report"] = {
                name: getattr(report, name)
                for name in ("rank", "birth_rank", "received", "ranks", "kind", "op", "phase",
                             "mechanism", "location", "module_path", "step", "batch_idx",
                             "sample_indices", "action")
            }  # fmt: skip
        outcome["grads_none"] = all(p.grad is None for p in model.parameters())
        outcome["grads_finite"] = all(
            p.grad is not None and bool(np.isfinite(p.grad.numpy()).all())
            for p in model.parameters()
        )
        outcomes.append(outcome)
    return {"outcomes": outcomes}


def scenario_guards(rank: int, world: int) -> dict:
    """GradNormGuard and NaNDetector on every rank of a DDP model (on_nonfinite="warn", so the
    non-finite gradients reach the guard): the guard sees the global norm, the same on every
    rank, and fires on every rank at the step of the NaN planted on rank 1 (data)."""
    lucid.manual_seed(0)
    model = Planted(None).double()
    ddp = DistributedDataParallel(model, on_nonfinite="warn")
    guard = lucid.debug.GradNormGuard(model)
    generator = np.random.default_rng(5)
    norms, reasons = [], []
    with lucid.debug.NaNDetector(ddp, verbose=False) as detector, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in range(3):
            x = generator.standard_normal((world * 4, 4))[rank * 4 : (rank + 1) * 4]
            if rank == 1 and step == 1:
                x[0, 0] = np.inf
            ddp.zero_grad()
            ddp(lucid.tensor(x)).pow(2).mean().backward()
            event = guard.check()
            norms.append(guard.total_norm() if step != 1 else None)
            reasons.append(None if event is None else event.reason)
    return {
        "norms": norms,
        "reasons": reasons,
        "detector_triggered": detector.triggered,
        "detector_kind": None if detector.event is None else detector.event.kind,
        "birth_rank": ddp.nonfinite_report.birth_rank,
    }


def scenario_buffers(rank: int, world: int) -> dict:
    """Buffers come from rank 0 at construction and again before every forward."""
    lucid.manual_seed(rank)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).double()
    model[1].running_mean.fill_(float(rank + 1))
    ddp = DistributedDataParallel(model)
    after_construction = model[1].running_mean.tolist()
    seen = []
    model[1].register_forward_pre_hook(
        lambda module, args: seen.append(module.running_mean.tolist())
    )
    x = lucid.tensor(np.random.default_rng(rank).standard_normal((6, 4)))
    for _ in range(2):
        ddp(x).sum().backward()
    return {"after_construction": after_construction, "seen": seen,
            "local": model[1].running_mean.tolist()}  # fmt: skip


def scenario_buckets(rank: int, world: int) -> dict:
    """Bucket assignment: reverse parameter order, a first bucket of 1 MiB, then 25 MB."""
    model = nn.Sequential(*(nn.Linear(256, 256) for _ in range(4))).double()
    default = DistributedDataParallel(model)
    capped = DistributedDataParallel(model, bucket_cap_mb=0.4)
    return {"default": [bucket.indices for bucket in default._buckets],
            "capped": [bucket.indices for bucket in capped._buckets]}  # fmt: skip


def main() -> None:
    name = sys.argv[1]
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if name == "equal":
        result = scenario_equal(rank, world)
    elif name == "no_sync":
        result = scenario_no_sync(rank, world)
    elif name == "unused":
        result = scenario_unused(rank, world)
    elif name == "buckets":
        result = scenario_buckets(rank, world)
    elif name == "buffers":
        result = scenario_buffers(rank, world)
    elif name == "guards":
        result = scenario_guards(rank, world)
    else:
        _, where, policy, anomaly = name.split(":")
        result = scenario_nan(rank, world, where, policy, anomaly == "anomaly")
    result["rank"] = rank
    print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
