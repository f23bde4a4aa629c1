"""lucid.distributed's collectives on 2 and 3 ranks, and what it does in a single process."""

from __future__ import annotations

import subprocess
import sys

import pytest

import lucid
import lucid.distributed as dist
from tests.distributed.launch import ROOT, assert_every_rank_passed, launch, requires_mpi


@requires_mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_every_collective_matches_numpy(ranks):
    assert_every_rank_passed(launch("collectives.py", ranks), ranks)


def test_import_lucid_never_imports_mpi4py():
    code = "import sys, lucid, lucid.distributed; print('mpi4py' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


def test_without_mpi4py_init_says_what_to_install():
    code = (
        "import sys; sys.modules['mpi4py'] = None\n"
        "import lucid.distributed as dist\n"
        "try:\n"
        "    dist.init_process_group('mpi')\n"
        "except RuntimeError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "pip install mpi4py mpich" in result.stdout, result.stderr
    assert 'pip install -e ".[distributed]"' in result.stdout, result.stderr


def test_is_available_and_not_initialized():
    assert dist.is_available() is True
    assert dist.is_initialized() is False
    assert lucid.distributed is dist


@pytest.mark.parametrize(
    "call",
    [
        lambda: dist.get_rank(),
        lambda: dist.get_world_size(),
        lambda: dist.barrier(),
        lambda: dist.all_reduce(lucid.ones(2)),
        lambda: dist.broadcast(lucid.ones(2), src=0),
        lambda: dist.all_gather([lucid.ones(2)], lucid.ones(2)),
        lambda: dist.all_gather_object([None], 1),
        lambda: dist.new_group([0]),
    ],
)
def test_a_collective_before_init_raises_torchs_error(call):
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        call()


def test_destroy_before_init_raises():
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        dist.destroy_process_group()


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="Invalid backend: 'ucc'"):
        dist.init_process_group("ucc")
    assert dist.Backend("MPI") == "mpi" and dist.Backend("Gloo") == dist.Backend.GLOO == "gloo"


@pytest.mark.parametrize("backend", ["nccl", "NCCL", dist.Backend.NCCL])
def test_nccl_raises_torchs_no_nccl_error_before_starting_mpi(backend):
    # torch's CPU build says "Distributed package doesn't have NCCL built in"
    with pytest.raises(RuntimeError, match="^Distributed package doesn't have NCCL built in: "):
        dist.init_process_group(backend)
    assert not dist.is_initialized()


@requires_mpi
def test_gloo_runs_on_mpi_with_one_note_per_process():
    assert_every_rank_passed(launch("gloo_backend.py", 2), 2)


def test_init_checks_its_arguments_before_starting_mpi():
    with pytest.raises(TypeError, match="to be of type datetime.timedelta, got 5"):
        dist.init_process_group(timeout=5)
    with pytest.raises(ValueError, match="init_method 'tcp://h:1' is not supported"):
        dist.init_process_group(init_method="tcp://h:1")
    assert not dist.is_initialized()


def test_reduce_op_members_are_torchs():
    assert [op.name for op in dist.ReduceOp.RedOpType][:5] == [
        "SUM",
        "AVG",
        "PRODUCT",
        "MIN",
        "MAX",
    ]
    assert repr(dist.ReduceOp.SUM) == "<RedOpType.SUM: 0>"
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)


@requires_mpi
def test_sync_batchnorm_equals_batchnorm_over_the_global_batch():
    # 3 ranks split the global batch of 7 unevenly (3, 2, 2)
    assert_every_rank_passed(launch("sync_batchnorm.py", 3), 3)
