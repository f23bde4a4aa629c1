"""lucid.utils.data against torch.utils.data: batching, collation, sampling and errors."""

import collections
import multiprocessing

import numpy as np
import pytest

import lucid
from lucid.utils.data.dataloader import DataLoader, default_collate
from lucid.utils.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from lucid.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler
from tests.torch_oracle import data as torch_data
from tests.torch_oracle import requires_torch, torch


def _dataset(n=10):
    return TensorDataset(lucid.arange(n, dtype=lucid.float32), lucid.arange(n))


def test_tensor_dataset_rows_and_length():
    ds = _dataset()
    x, y = ds[3]
    assert len(ds) == 10 and x.item() == 3.0 and y.item() == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(lucid.zeros(3), lucid.zeros(4))


def test_base_dataset_getitem_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        Dataset()[0]


@requires_torch
def test_sequential_batches_and_lengths_match_torch():
    for batch_size, drop_last in [(3, False), (3, True), (5, False), (1, False)]:
        loader = DataLoader(_dataset(), batch_size=batch_size, drop_last=drop_last)
        reference = torch_data.DataLoader(
            torch_data.TensorDataset(torch.arange(10.0), torch.arange(10)),
            batch_size=batch_size,
            drop_last=drop_last,
        )
        assert len(loader) == len(reference)
        batches = list(loader)
        assert len(batches) == len(reference)
        for (x, y), (tx, ty) in zip(batches, reference):
            np.testing.assert_array_equal(x.numpy(), tx.numpy())
            np.testing.assert_array_equal(y.numpy(), ty.numpy())
            assert x.dtype == lucid.float32 and y.dtype == lucid.int64


def test_batch_size_none_yields_unbatched_samples():
    samples = list(DataLoader(_dataset(3), batch_size=None))
    assert len(samples) == 3 and samples[1][0].shape == ()


def test_shuffle_with_seeded_generator_is_reproducible_and_a_permutation():
    def order(seed):
        generator = lucid.Generator().manual_seed(seed)
        loader = DataLoader(_dataset(), batch_size=4, shuffle=True, generator=generator)
        return [int(v) for _, y in loader for v in y.tolist()]

    assert order(0) == order(0)
    assert order(0) != order(1)
    assert sorted(order(0)) == list(range(10))


def test_unseeded_shuffle_follows_manual_seed():
    def order():
        lucid.manual_seed(5)
        return [y.tolist() for _, y in DataLoader(_dataset(), batch_size=5, shuffle=True)]

    assert order() == order()


def test_random_sampler_replacement_and_num_samples():
    generator = lucid.Generator().manual_seed(0)
    drawn = list(RandomSampler(range(5), num_samples=12, generator=generator))
    assert len(drawn) == 12 and sorted(drawn[:10]) == sorted(list(range(5)) * 2)
    with_replacement = list(RandomSampler(range(5), replacement=True, num_samples=50))
    assert len(with_replacement) == 50 and set(with_replacement) <= set(range(5))
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(5), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(5), replacement=1)


@requires_torch
def test_batch_sampler_matches_torch_and_validates():
    ours = list(BatchSampler(SequentialSampler(range(7)), 3, False))
    theirs = list(torch_data.BatchSampler(torch_data.SequentialSampler(range(7)), 3, False))
    assert ours == theirs
    assert len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(7), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(7), 2, 1)


def test_custom_batch_sampler_and_sampler():
    batches = [[0, 9], [5]]
    loader = DataLoader(_dataset(), batch_sampler=batches)
    assert [y.tolist() for _, y in loader] == [[0, 9], [5]]
    loader = DataLoader(_dataset(), batch_size=2, sampler=[9, 8, 7])
    assert [y.tolist() for _, y in loader] == [[9, 8], [7]]


@requires_torch
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"shuffle": True, "sampler": [0, 1]}, "sampler option is mutually exclusive with shuffle"),
        ({"batch_size": 2, "batch_sampler": [[0]]}, "batch_sampler option is mutually exclusive"),
        ({"shuffle": True, "batch_sampler": [[0]]}, "batch_sampler option is mutually exclusive"),
        ({"drop_last": True, "batch_sampler": [[0]]}, "batch_sampler option is mutually exclusive"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
        ({"num_workers": -1}, "num_workers option should be non-negative"),
    ],
)
def test_conflicting_options_raise_torch_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(_dataset(), **kwargs)
    with pytest.raises(ValueError, match=message):
        torch_data.DataLoader(list(range(10)), **kwargs)


@requires_torch
def test_default_collate_dtypes_match_torch():
    cases = [[1.0, 2.0], [1, 2], [True, False], [np.float32(1), np.float32(2)]]
    for batch in cases:
        ours, theirs = default_collate(batch), torch_data.default_collate(batch)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    arrays = [np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)]
    assert default_collate(arrays).shape == (2, 2, 3)


@requires_torch
def test_default_collate_nested_structures_match_torch():
    batch = [{"x": (1, "a"), "y": [1.5, 2]}, {"x": (2, "b"), "y": [2.5, 3]}]
    ours, theirs = default_collate(batch), torch_data.default_collate(batch)
    assert ours["x"][1] == theirs["x"][1] == ("a", "b")
    assert ours["x"][0].tolist() == theirs["x"][0].tolist()
    assert isinstance(ours["y"], list) and ours["y"][0].dtype == lucid.float64
    point = collections.namedtuple("point", "a b")
    collated = default_collate([point(1, 2.0), point(3, 4.0)])
    assert isinstance(collated, point) and collated.a.tolist() == [1, 3]


def test_default_collate_errors_match_torch():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object(), object()])


def test_default_collate_stacks_lucid_tensors_with_grad():
    a = lucid.ones(2, requires_grad=True)
    stacked = default_collate([a, a * 2])
    stacked.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])


def test_subset_concat_and_random_split():
    ds = _dataset()
    subset = Subset(ds, [4, 2])
    assert len(subset) == 2 and subset[1][1].item() == 2
    assert len(ConcatDataset([ds, ds])) == 20 and (ds + ds)[15][1].item() == 5
    generator = lucid.Generator().manual_seed(0)
    parts = random_split(ds, [0.33, 0.33, 0.34], generator=generator)
    assert [len(p) for p in parts] == [4, 3, 3]
    indices = sorted(i for part in parts for i in part.indices)
    assert indices == list(range(10))
    again = random_split(ds, [4, 3, 3], generator=lucid.Generator().manual_seed(0))
    assert [p.indices for p in again] == [p.indices for p in parts]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(ds, [-0.5, 1.5])


def test_iterable_dataset_batches():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    batches = list(DataLoader(Stream(), batch_size=3))
    assert [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


# ------------------------------------------------- worker options (issue 16)
WORKER_OPTION_ERRORS = [
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified"),
    (dict(num_workers=2, prefetch_factor=-1), ValueError, "prefetch_factor option should be"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers"),
    (dict(multiprocessing_context="spawn"), ValueError, "can only be used with multi-process"),
    (dict(num_workers=1, multiprocessing_context="foo"), ValueError, "valid start method"),
    (dict(num_workers=1, multiprocessing_context=3), TypeError, "valid context object"),
]


@pytest.mark.parametrize(("options", "error", "message"), WORKER_OPTION_ERRORS)
def test_dataloader_worker_options_are_checked_as_pytorch_checks_them(options, error, message):
    with pytest.raises(error, match=message):
        DataLoader(list(range(4)), **options)


@requires_torch
@pytest.mark.parametrize(("options", "error", "message"), WORKER_OPTION_ERRORS)
def test_dataloader_worker_option_errors_are_pytorchs(options, error, message):
    with pytest.raises(error) as expected:
        torch_data.DataLoader(list(range(4)), **options)
    with pytest.raises(error) as actual:
        DataLoader(list(range(4)), **options)
    assert str(actual.value) == str(expected.value)


def test_dataloader_accepts_the_worker_options_training_scripts_pass():
    # fork where there is fork; spawn, an interpreter start a worker, has a test of its own
    context = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    loader = DataLoader(
        list(range(10)), batch_size=4, num_workers=2, persistent_workers=True,
        prefetch_factor=4, multiprocessing_context=context, in_order=False,
    )  # fmt: skip
    assert loader.prefetch_factor == 4 and loader.persistent_workers and not loader.in_order
    assert loader.multiprocessing_context.get_start_method() == context
    # in_order=False: batches as the workers finish them
    assert sorted(batch.tolist() for batch in loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert DataLoader([1], num_workers=1).prefetch_factor == 2
    assert DataLoader([1]).prefetch_factor is None


def test_dataloader_pin_memory_warns_and_batches_as_without_it():
    loader = DataLoader(list(range(4)), batch_size=2, pin_memory=True, pin_memory_device="cuda")
    with pytest.warns(UserWarning) as record:
        batches = [batch.tolist() for batch in loader]
    assert batches == [[0, 1], [2, 3]]
    messages = [str(warning.message) for warning in record]
    assert any("no accelerator is found" in message for message in messages)
    assert any("pin_memory_device is deprecated" in message for message in messages)
