"""lucid.debug.torch under DistributedDataParallel, 2 processes with the gloo backend on this
machine: every rank names the same birth, on the rank it was born, and none waits for another."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.torch_oracle import requires_torch

pytestmark = requires_torch

ROOT = Path(__file__).resolve().parents[3]

_RANK_SCRIPT = """\
import datetime, gc, json, os, sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
import lucid.debug.torch

rank = int(os.environ["RANK"])
dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=30))


class LogFeatures(torch.nn.Module):
    def forward(self, x):
        return torch.log(11.0 - x)  # <birth>


torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Sequential(LogFeatures(), torch.nn.Linear(4, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
exit_code = 0
try:
    with lucid.debug.torch.watch():
        for step in range(5):
            value = 100.0 if (step == 2 and rank == 1) else rank + 1.0
            optimizer.zero_grad()
            model(torch.full((2, 4), value)).pow(2).mean().backward()
            optimizer.step()
    print(json.dumps({"rank": rank, "clean": True}))
except lucid.debug.torch.NonFiniteError as error:
    event = error.nan_event
    print(json.dumps({"rank": rank, "op": event.op, "phase": event.phase, "step": event.step,
                      "location": event.location, "birth_rank": event.rank}))
    exit_code = 3
# The DDP model, then the process group, released before exit: a DDP model still alive at
# interpreter exit can abort the process there (SIGABRT, "terminate called without an active
# exception"), in plain torch 2.13 as well, about one run in ten on this machine.
del model, optimizer
gc.collect()
dist.destroy_process_group()
sys.exit(exit_code)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_every_rank_names_the_birth_on_the_rank_it_was_born(tmp_path):
    script = tmp_path / "ddp_train.py"
    script.write_text(_RANK_SCRIPT)
    port = str(_free_port())
    ranks = []
    for rank in range(2):
        environment = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE="2",
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=port,
            PYTHONPATH=str(ROOT),
        )
        ranks.append(
            subprocess.Popen(
                [sys.executable, str(script)],
                env=environment,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        outputs = [process.communicate(timeout=90) for process in ranks]
    finally:
        for process in ranks:
            process.kill()
    reports = []
    for process, (stdout, stderr) in zip(ranks, outputs):
        assert process.returncode == 3, stderr
        reports.append(json.loads(stdout.strip().splitlines()[-1]))
    line = next(
        number
        for number, text in enumerate(_RANK_SCRIPT.splitlines(), 1)
        if text.endswith("# <birth>")
    )
    for report in reports:
        assert (report["op"], report["phase"], report["step"]) == ("log", "forward", 2)
        assert (report["location"], report["birth_rank"]) == (f"{script}:{line}", 1)
