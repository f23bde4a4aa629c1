"""lucid.random: the seed and state functions are lucid's top-level ones, and fork_rng restores
the default generator's state, with torch's errors for devices lucid does not have."""

from __future__ import annotations

import pytest

import lucid
import lucid.random
from tests.torch_oracle import requires_torch, torch

SHARED = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]


@pytest.mark.parametrize("name", SHARED)
def test_functions_are_the_top_level_objects(name: str) -> None:
    # as torch's: torch.manual_seed is torch.random.manual_seed
    assert getattr(lucid.random, name) is getattr(lucid, name)


def test_manual_seed_returns_the_default_generator_and_repeats_draws() -> None:
    generator = lucid.random.manual_seed(123)
    assert generator is lucid.default_generator
    assert lucid.random.initial_seed() == 123
    first = lucid.rand(4)
    lucid.random.manual_seed(123)
    assert lucid.equal(lucid.rand(4), first)


def test_fork_rng_restores_the_state_on_exit() -> None:
    before = lucid.random.get_rng_state()
    with lucid.random.fork_rng():
        inside = lucid.rand(3)
    assert lucid.equal(lucid.random.get_rng_state(), before)
    # the draws after the block are those the block made, as if it never ran
    assert lucid.equal(lucid.rand(3), inside)


def test_fork_rng_restores_the_state_after_an_exception() -> None:
    before = lucid.random.get_rng_state()
    with pytest.raises(KeyError), lucid.random.fork_rng():
        lucid.rand(3)
        raise KeyError("inside")
    assert lucid.equal(lucid.random.get_rng_state(), before)


def test_fork_rng_restores_a_reseeded_generator() -> None:
    before = lucid.random.get_rng_state()
    with lucid.random.fork_rng(devices=[]):
        lucid.random.manual_seed(7)
    assert lucid.equal(lucid.random.get_rng_state(), before)


def test_fork_rng_disabled_leaves_the_draws_advanced() -> None:
    before = lucid.random.get_rng_state()
    with lucid.random.fork_rng(enabled=False):
        lucid.rand(3)
    assert not lucid.equal(lucid.random.get_rng_state(), before)


def test_fork_rng_on_meta_does_nothing() -> None:
    before = lucid.random.get_rng_state()
    with lucid.random.fork_rng(device_type="meta"):
        lucid.rand(3)
    assert not lucid.equal(lucid.random.get_rng_state(), before)


def test_fork_rng_works_as_a_decorator() -> None:
    @lucid.random.fork_rng()
    def draw() -> lucid.Tensor:
        return lucid.rand(2)

    drawn = draw()
    assert lucid.equal(lucid.rand(2), drawn)


def _outcome(module, **options) -> str:
    try:
        with module.random.fork_rng(**options):
            module.rand(1)
    except Exception as error:  # noqa: BLE001 - the outcome itself is what is compared
        text = f"{type(error).__name__}: {error}"
        return text.replace("Torch", "lucid").replace("torch", "lucid")
    return "ok"


FORK_OPTIONS = {
    "defaults": {},
    "no_devices": {"devices": []},
    "cuda_device": {"devices": [0]},
    "unknown_type": {"device_type": "foo"},
    "unknown_type_disabled": {"device_type": "foo", "enabled": False},
    "meta": {"device_type": "meta"},
    "cpu": {"device_type": "cpu"},
    "cpu_no_devices": {"device_type": "cpu", "devices": []},
    "no_module": {"device_type": "hip"},
    "no_module_disabled": {"device_type": "hip", "enabled": False},
    "mps": {"device_type": "mps"},
    "disabled_with_devices": {"devices": [0], "enabled": False},
}


@requires_torch
@pytest.mark.parametrize("option", FORK_OPTIONS)
def test_fork_rng_outcome_matches_torch(option: str) -> None:
    ours = _outcome(lucid, **FORK_OPTIONS[option])
    theirs = _outcome(torch, **FORK_OPTIONS[option])
    # lucid's CPU-build error adds why: "(lucid runs on the CPU)"
    assert ours.removesuffix(" (lucid runs on the CPU)") == theirs


def test_naming_an_accelerator_device_raises_the_cpu_build_error() -> None:
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        with lucid.random.fork_rng(devices=[0]):
            pass


def test_thread_safe_generator_is_none_outside_thread_workers() -> None:
    assert lucid.random.thread_safe_generator() is None
