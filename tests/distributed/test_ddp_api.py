"""DistributedDataParallel's face, checked in this process (no MPI job): PyTorch's signature
and its error when no process group was initialised."""

from __future__ import annotations

import inspect

import pytest

import lucid
from lucid.nn.parallel import DistributedDataParallel
from tests.torch_oracle import requires_torch, torch


@requires_torch
def test_signature_is_pytorchs_plus_the_keyword_on_nonfinite() -> None:
    ours = inspect.signature(DistributedDataParallel.__init__).parameters
    theirs = inspect.signature(torch.nn.parallel.DistributedDataParallel.__init__).parameters
    assert [name for name in ours if name != "on_nonfinite"] == list(theirs)
    for name, parameter in theirs.items():
        assert ours[name].default == parameter.default, name
    assert ours["on_nonfinite"].kind is inspect.Parameter.KEYWORD_ONLY


def test_without_a_process_group_it_raises_pytorchs_value_error() -> None:
    import lucid.distributed as dist

    if dist.is_initialized():
        pytest.skip("a process group is initialised in this process")
    with pytest.raises(ValueError) as error:
        DistributedDataParallel(lucid.nn.Linear(2, 2))
    assert str(error.value) == (
        "Default process group has not been initialized, please make sure to call "
        "init_process_group."
    )


def test_reachable_as_lucid_nn_parallel() -> None:
    assert lucid.nn.parallel.DistributedDataParallel is DistributedDataParallel
