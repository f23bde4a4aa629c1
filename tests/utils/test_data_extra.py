"""ChainDataset, StackDataset, WeightedRandomSampler and get_worker_info, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.utils.data as data
from lucid.utils.data.worker import WorkerInfo
from tests.torch_oracle import data as torch_data
from tests.torch_oracle import requires_torch


class _Range(data.IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error itself is under test
        return type(error), str(error)
    return None


# -------------------------------------------------------------- ChainDataset
def test_chain_dataset_streams_one_after_another():
    chain = data.ChainDataset([_Range(0, 3), _Range(10, 12)])
    assert list(chain) == [0, 1, 2, 10, 11] and len(chain) == 5
    assert list(_Range(0, 2) + _Range(5, 6)) == [0, 1, 5]
    assert isinstance(_Range(0, 2) + _Range(5, 6), data.ChainDataset)
    batches = list(data.DataLoader(chain, batch_size=2))
    assert [batch.tolist() for batch in batches] == [[0, 1], [2, 10], [11]]


def test_chain_dataset_rejects_map_style_datasets():
    chain = data.ChainDataset([_Range(0, 2), data.TensorDataset(lucid.zeros(2))])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(chain)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(chain)


# -------------------------------------------------------------- StackDataset
def test_stack_dataset_tuples_and_dicts():
    x, y = lucid.arange(4), lucid.arange(4) * 10
    stacked = data.StackDataset(data.TensorDataset(x), y)
    assert len(stacked) == 4
    first = stacked[1]
    assert isinstance(first, tuple) and int(first[0][0]) == 1 and int(first[1]) == 10
    named = data.StackDataset(x=x, y=y)
    assert {key: int(value) for key, value in named[2].items()} == {"x": 2, "y": 20}
    batch = named.__getitems__([0, 3])
    assert [{key: int(value) for key, value in row.items()} for row in batch] == [
        {"x": 0, "y": 0}, {"x": 3, "y": 30},
    ]  # fmt: skip
    rows = data.StackDataset(x, y).__getitems__([1, 2])
    assert [tuple(int(v) for v in row) for row in rows] == [(1, 10), (2, 20)]


class _Batched(data.Dataset):
    def __init__(self, size):
        self.size = size

    def __len__(self):
        return 3

    def __getitems__(self, indices):
        return ["batched"] * self.size


def test_stack_dataset_uses_nested_getitems_and_checks_its_size():
    assert data.StackDataset(_Batched(2)).__getitems__([0, 1]) == [("batched",), ("batched",)]
    mismatch = "Nested dataset's output size mismatch. Expected 2, got 1"
    with pytest.raises(ValueError, match=mismatch):
        data.StackDataset(a=_Batched(1)).__getitems__([0, 1])


@requires_torch
@pytest.mark.parametrize(
    "args, kwargs",
    [((), {}), ((3,), {"a": 3}), ((3, 4), {}), ((), {"a": 3, "b": 4})],
)
def test_stack_dataset_errors_match_torch(args, kwargs):
    def build(module, args=args, kwargs=kwargs):
        return module.StackDataset(
            *[list(range(n)) for n in args], **{k: list(range(n)) for k, n in kwargs.items()}
        )

    expected = _error(lambda: build(torch_data))
    assert expected is not None
    assert _error(lambda: build(data)) == expected


# ----------------------------------------------------- WeightedRandomSampler
def test_weighted_sampler_follows_the_weights():
    generator = lucid.Generator().manual_seed(0)
    sampler = data.WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=generator)
    drawn = np.array(list(sampler))
    assert len(sampler) == 4000 and drawn.shape == (4000,)
    assert not np.any(drawn == 0)
    assert abs((drawn == 2).mean() - 0.75) < 0.03


def test_weighted_sampler_without_replacement_is_a_permutation():
    sampler = data.WeightedRandomSampler([1, 2, 3, 4], 4, replacement=False)
    assert sorted(sampler) == [0, 1, 2, 3]


def test_weighted_sampler_is_reproducible_with_a_generator():
    def draw():
        generator = lucid.Generator().manual_seed(3)
        return list(data.WeightedRandomSampler([1.0, 2.0, 3.0], 20, generator=generator))

    assert draw() == draw()


@requires_torch
@pytest.mark.parametrize(
    "args, kwargs",
    [
        (([0.1, 0.2], 0), {}),
        (([0.1, 0.2], True), {}),
        (([0.1, 0.2], 2.0), {}),
        (([[0.1, 0.2]], 2), {}),
        (([1.0], 2), {"replacement": 1}),
    ],
)
def test_weighted_sampler_errors_match_torch(args, kwargs):
    expected = _error(lambda: torch_data.WeightedRandomSampler(*args, **kwargs))
    assert expected is not None
    assert _error(lambda: data.WeightedRandomSampler(*args, **kwargs)) == expected


@requires_torch
def test_weighted_sampler_sampling_errors_match_torch():
    for weights, count, replacement in [([1.0, 0.0], 3, False)]:
        expected = _error(
            lambda w=weights, c=count, r=replacement: list(
                torch_data.WeightedRandomSampler(w, c, r)
            )
        )
        actual = _error(
            lambda w=weights, c=count, r=replacement: list(data.WeightedRandomSampler(w, c, r))
        )
        assert actual == expected


# ------------------------------------------------------------ get_worker_info
def test_worker_info_is_none_in_the_loading_process():
    seen = []

    class Probe(data.IterableDataset):
        def __iter__(self):
            seen.append(data.get_worker_info())
            return iter(range(3))

    assert data.get_worker_info() is None
    list(data.DataLoader(Probe(), batch_size=2, num_workers=0))
    assert seen == [None]


def test_worker_info_is_read_only():
    info = WorkerInfo(id=1, num_workers=4, seed=7, dataset=None)
    assert repr(info) == "WorkerInfo(id=1, num_workers=4, seed=7, dataset=None)"
    assert (info.id, info.num_workers, info.seed, info.dataset) == (1, 4, 7, None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 2
