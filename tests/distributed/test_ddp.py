"""DistributedDataParallel on 2 and 3 processes launched with mpiexec: the same parameters as
one process on the global batch, no_sync, unused parameters, and a NaN planted on rank 1
named by every rank (ddp_worker.py runs each scenario)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.distributed.launch import MPIEXEC, WORKERS, environment, launch, requires_mpi
from tests.markers import marked_line

pytestmark = requires_mpi

WORKER = WORKERS / "ddp_worker.py"
# A launch that does not end in this time has hung: the test fails instead of waiting.
TIMEOUT = 90


def run(scenario: str, world: int) -> list[dict]:
    """Every rank's result, in rank order."""
    completed = launch("ddp_worker.py", world, scenario, timeout=TIMEOUT)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    results = [
        json.loads(line[len("RESULT ") :])
        for line in completed.stdout.replace("RESULT ", "\nRESULT ").splitlines()
        if line.startswith("RESULT ")
    ]
    assert len(results) == world, completed.stdout + completed.stderr
    return sorted(results, key=lambda result: result["rank"])


@pytest.mark.parametrize("world", [2, 3])
def test_training_on_shards_equals_one_process_on_the_global_batch(world: int) -> None:
    for result in run("equal", world):
        assert result["mlp"] <= 1e-12
        assert result["cnn"] <= 1e-12


@pytest.mark.parametrize("world", [2, 3])
def test_no_sync_accumulation_equals_one_process(world: int) -> None:
    for result in run("no_sync", world):
        assert result["mlp"] <= 1e-12


def test_unused_parameters_keep_no_gradient_and_missing_ones_raise_next_forward() -> None:
    for rank, result in enumerate(run("unused", 3)):
        assert result["difference"] <= 1e-12
        assert result["unused_grad_is_none"]
        assert result["module_is_model"]
        assert result["keys"] == ["module.used.weight", "module.used.bias",
                                  "module.unused.weight", "module.unused.bias"]  # fmt: skip
        assert result["error"].startswith(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss."
        )
        assert (
            f"Parameter indices which did not receive grad for rank {rank}: 2 3"
            in (result["error"])
        )
        assert "unused.weight, unused.bias" in result["error"]


PLANTS = {
    # where: (op, phase, kind, mechanism, marked line)
    "forward": ("log", "forward", "nan", "invalid operation", "planted forward"),
    "backward": ("sqrt", "backward", "inf", "division by zero", "planted backward"),
    "data": ("input", "forward", "nan", None, "batch enters"),
}


def check_named_by_every_rank(results: list[dict], where: str, action: str) -> None:
    op, phase, kind, mechanism, marker = PLANTS[where]
    location = f"{WORKER}:{marked_line(WORKER, marker)}"
    for rank, result in enumerate(results):
        report = result["outcomes"][1]["report"]
        assert report["rank"] == rank
        assert report["birth_rank"] == 1
        assert report["received"] is (rank != 1)
        assert (report["op"], report["phase"], report["kind"]) == (op, phase, kind)
        assert report["mechanism"] == mechanism
        assert report["location"] == location
        assert report["step"] == 1 and report["batch_idx"] == 1
        assert report["sample_indices"] == [len(results) * 4 + 4 + index for index in range(4)]
        assert report["module_path"] == (None if where == "data" else "module")
        assert report["action"] == action
        # The steps before and after are clean on every rank: all ranks stayed in step.
        for outcome in (result["outcomes"][0], result["outcomes"][2]):
            assert "raised" not in outcome and outcome["grads_finite"]


@pytest.mark.parametrize("where", ["forward", "backward", "data"])
def test_a_nan_planted_on_rank_1_is_named_by_every_rank_which_all_raise(where: str) -> None:
    results = run(f"nan:{where}:raise:plain", 2)
    check_named_by_every_rank(results, where, "raise")
    for rank, result in enumerate(results):
        message = result["outcomes"][1]["message"]
        assert result["outcomes"][1]["raised"] == "DistributedNonFiniteError"
        assert "rank 1" in message.splitlines()[0]
        assert ("received through the gradient all-reduce" in message) is (rank != 1)


def test_three_ranks_name_rank_1_and_rank_2_reports_it_received() -> None:
    check_named_by_every_rank(run("nan:backward:raise:plain", 3), "backward", "raise")


@pytest.mark.parametrize("where", ["forward", "backward", "data"])
def test_under_detect_anomaly_every_rank_raises_with_the_birth_rank(where: str) -> None:
    results = run(f"nan:{where}:raise:anomaly", 2)
    check_named_by_every_rank(results, where, "raise")
    assert results[1]["outcomes"][1]["raised"] == "AnomalyError"
    assert results[0]["outcomes"][1]["raised"] == "DistributedNonFiniteError"


def test_skip_sets_gradients_to_none_and_warns_on_every_rank() -> None:
    results = run("nan:forward:skip:plain", 2)
    check_named_by_every_rank(results, "forward", "skip")
    for result in results:
        outcome = result["outcomes"][1]
        assert "raised" not in outcome and outcome["grads_none"]
        assert outcome["warnings"] == [outcome["warnings"][0]]
        assert "born on rank 1 in log (forward)" in outcome["warnings"][0]


def test_warn_keeps_the_gradients_and_warns_on_every_rank() -> None:
    results = run("nan:data:warn:plain", 2)
    check_named_by_every_rank(results, "data", "warn")
    for result in results:
        outcome = result["outcomes"][1]
        assert not outcome["grads_none"] and not outcome["grads_finite"]
        assert "arrived in the input batch of rank 1" in outcome["warnings"][0]


def test_grad_norm_guard_sees_the_global_norm_and_fires_on_every_rank() -> None:
    results = run("guards", 2)
    assert results[0]["norms"] == results[1]["norms"]
    for result in results:
        assert result["reasons"] == [None, "nonfinite", None]
        assert result["birth_rank"] == 1
    # The detector reports what its own rank saw: the value arrived in rank 1's batch only.
    assert [result["detector_triggered"] for result in results] == [False, True]
    assert results[1]["detector_kind"] == "inf"


def test_debug_run_under_mpiexec_saves_one_reproducer_on_the_birth_rank(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np\n"
        "import lucid\n"
        "import lucid.distributed as dist\n"
        "from lucid import nn\n"
        "dist.init_process_group('mpi')\n"
        "rank = dist.get_rank()\n"
        "lucid.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()\n"
        "ddp = nn.parallel.DistributedDataParallel(model)\n"
        "for step in range(3):\n"
        "    x = np.random.default_rng(step).standard_normal((4, 4))\n"
        "    h = lucid.tensor(x) * (1e308 if rank == 1 and step == 1 else 1.0)\n"
        "    ddp(h * 10).sum().backward()\n"
    )
    completed = subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, "-m", "lucid.debug", "run", str(script)],
        capture_output=True, text=True, timeout=TIMEOUT, env=environment(), cwd=tmp_path,
    )  # fmt: skip
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert [path.name for path in tmp_path.glob("*.safetensors")] == ["lucid_repro.safetensors"]
    assert "rank 0 stopped with every rank at the first non-finite value" in completed.stderr
    assert "an inf was born on rank 1 in mul (forward)" in completed.stderr
    assert "reproducer: saved by rank 1" in completed.stderr
    assert "Function 'mul' returned inf values" in completed.stderr


def test_a_value_born_and_masked_out_on_rank_1_stops_no_rank() -> None:
    for result in run("nan:masked:raise:plain", 2):
        for outcome in result["outcomes"]:
            assert "raised" not in outcome and "report" not in outcome
            assert outcome["grads_finite"]


def test_buffers_come_from_rank_0_at_construction_and_before_each_forward() -> None:
    results = run("buffers", 2)
    assert results[0]["after_construction"] == results[1]["after_construction"] == [1.0] * 3
    # Each forward starts from rank 0's buffers; each rank then updates them with its batch.
    assert results[0]["seen"] == results[1]["seen"]
    assert results[0]["local"] != results[1]["local"]


def test_with_the_sentinel_off_non_finite_gradients_still_stop_every_rank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LUCID_SENTINEL", "0")
    for rank, result in enumerate(run("nan:data:raise:plain", 2)):
        outcome = result["outcomes"][1]
        assert outcome["raised"] == "DistributedNonFiniteError"
        report = outcome["report"]
        assert (report["birth_rank"], report["received"]) == (1, rank != 1)
        assert (report["op"], report["phase"], report["kind"]) == (
            "no recorded birth",
            "gradient",
            "nan",
        )
        assert "raised" not in result["outcomes"][2]


def test_births_on_two_ranks_name_the_earlier_phase_and_each_rank_says_what_it_saw() -> None:
    results = run("nan:two:raise:plain", 3)
    for rank, result in enumerate(results):
        report = result["outcomes"][1]["report"]
        assert (report["birth_rank"], report["op"], report["phase"]) == (2, "log", "forward")
        assert report["ranks"] == [1, 2]
        assert report["received"] is (rank == 0)
    assert "rank 1 saw a non-finite value of its own" in results[1]["outcomes"][1]["message"]


def test_buckets_follow_reverse_parameter_order_with_a_small_first_bucket() -> None:
    # Each weight is 512 KiB in float64, each bias 2 KiB.
    result = run("buckets", 2)[0]
    assert result["default"] == [[7, 6, 5, 4], [3, 2, 1, 0]]
    # An explicit cap applies to the first bucket too.
    assert result["capped"] == [[7, 6], [5, 4], [3, 2], [1, 0]]
