"""DistributedSampler: torch's shares and padding exactly without shuffling; with shuffling
(lucid's randperm draws other orders than torch's) the properties every rank relies on."""

from __future__ import annotations

import pytest

from lucid.utils.data import DataLoader, DistributedSampler
from tests.torch_oracle import data, requires_torch

CASES = [
    (length, replicas, drop_last)
    for length in (0, 1, 5, 7, 10, 13)
    for replicas in (1, 2, 3, 4)
    for drop_last in (False, True)
]


def _shares(length, replicas, **options):
    return [
        list(DistributedSampler(range(length), num_replicas=replicas, rank=rank, **options))
        for rank in range(replicas)
    ]


@requires_torch
@pytest.mark.parametrize("length, replicas, drop_last", CASES)
def test_unshuffled_shares_and_padding_equal_torchs(length, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(length), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = data.DistributedSampler(
            range(length), replicas, rank, shuffle=False, drop_last=drop_last
        )
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_cover_the_dataset_and_agree_across_ranks(drop_last):
    length, replicas = 13, 3
    shares = _shares(length, replicas, seed=7, drop_last=drop_last)
    assert {len(share) for share in shares} == {4 if drop_last else 5}
    every = [index for share in shares for index in share]
    if drop_last:
        # 12 distinct indices: one dropped, none repeated
        assert len(set(every)) == 12 and set(every) <= set(range(length))
    else:
        # every index, two of them twice as padding
        assert set(every) == set(range(length)) and len(every) == 15
    # every rank builds the same order from the seed: a second construction gives the same
    assert _shares(length, replicas, seed=7, drop_last=drop_last) == shares
    assert every != sorted(every)


def test_set_epoch_reshuffles_and_seed_matters():
    sampler = DistributedSampler(range(40), num_replicas=2, rank=0, seed=3)
    first = list(sampler)
    assert list(sampler) == first
    sampler.set_epoch(1)
    second = list(sampler)
    assert second != first and sampler.epoch == 1
    other_seed = DistributedSampler(range(40), num_replicas=2, rank=0, seed=4)
    assert list(other_seed) != first
    # ranks stay disjoint in every epoch
    partner = DistributedSampler(range(40), num_replicas=2, rank=1, seed=3)
    partner.set_epoch(1)
    assert sorted(second + list(partner)) == list(range(40))


@pytest.mark.parametrize("rank, replicas", [(2, 2), (-1, 2), (0, 0)])
def test_an_invalid_rank_raises_torchs_error(rank, replicas):
    message = rf"Invalid rank {rank}, rank should be in the interval \[0, {replicas - 1}\]"
    with pytest.raises(ValueError, match=message):
        DistributedSampler(range(4), num_replicas=replicas, rank=rank)


@pytest.mark.parametrize("given", [{}, {"num_replicas": 2}, {"rank": 0}])
def test_without_a_process_group_replicas_and_rank_must_be_given(given):
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4), **given)


def test_a_dataloader_visits_one_ranks_share():
    sampler = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)
    batches = [batch.tolist() for batch in DataLoader(range(10), batch_size=2, sampler=sampler)]
    assert batches == [[1, 4], [7, 0]]
