"""Intra-op parallelism: large ops split across threads give the serial result, bit for bit."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import _parallel
from lucid.autograd import NonFiniteWarning, anomaly_mode, is_sentinel_enabled, set_sentinel

# Large enough that every parallel path splits (GRAIN elements and more).
BATCH = 40


@pytest.fixture
def threads():
    """Run with two threads, and restore the previous count afterwards."""
    previous = lucid.get_num_threads()
    lucid.set_num_threads(2)
    yield
    lucid.set_num_threads(previous)


def _serial(fn):
    """fn() with one thread: the reference the parallel result must equal exactly."""
    previous = lucid.get_num_threads()
    lucid.set_num_threads(1)
    try:
        return fn()
    finally:
        lucid.set_num_threads(previous)


def _special_values(shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::997] = np.nan
    flat[1::1009] = np.inf
    flat[2::1013] = -np.inf
    flat[3::1019] = -0.0
    flat[4::1021] = 1e-40  # denormal
    return x


def _assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert np.array_equal(actual.view(np.uint8), np.ascontiguousarray(expected).view(np.uint8))


def test_set_num_threads_rejects_non_positive_counts():
    with pytest.raises(RuntimeError, match="Number of threads must be positive"):
        lucid.set_num_threads(0)


def test_set_num_threads_rejects_non_integers():
    with pytest.raises(TypeError, match="must be int, not float"):
        lucid.set_num_threads(2.0)


def test_set_num_threads_changes_get_num_threads():
    previous = lucid.get_num_threads()
    try:
        lucid.set_num_threads(3)
        assert lucid.get_num_threads() == 3
    finally:
        lucid.set_num_threads(previous)


def test_parallel_for_covers_every_index_once(threads):
    hits = np.zeros(100_000, dtype=np.int64)

    def work(start, stop):
        hits[start:stop] += 1

    _parallel.parallel_for(work, hits.size, hits.size)
    assert (hits == 1).all()


def test_parallel_for_runs_in_two_threads_when_large(threads):
    seen = set()

    def work(start, stop):
        seen.add(threading.get_ident())

    _parallel.parallel_for(work, 1000, 10 * _parallel.GRAIN)
    assert len(seen) == 2


def test_small_work_stays_in_the_calling_thread(threads):
    seen = set()
    _parallel.parallel_for(lambda a, b: seen.add(threading.get_ident()), 1000, 100)
    assert seen == {threading.get_ident()}


def test_an_error_in_a_worker_reaches_the_caller(threads):
    def work(start, stop):
        if start > 0:
            raise ValueError("worker failed")

    with pytest.raises(ValueError, match="worker failed"):
        _parallel.parallel_for(work, 1000, 10 * _parallel.GRAIN)
    # the pool is usable afterwards
    hits = np.zeros(1000)
    _parallel.parallel_for(lambda a, b: hits.__setitem__(slice(a, b), 1), 1000, 10**6)
    assert hits.all()


def test_nested_parallel_for_runs_serially_inside(threads):
    inner_ranges = []

    def inner(start, stop):
        inner_ranges.append((start, stop))

    def outer(start, stop):
        _parallel.parallel_for(inner, 10, 10**6)

    _parallel.parallel_for(outer, 1000, 10**6)
    # each outer range ran the inner loop whole: the pool was busy
    assert sorted(inner_ranges) == [(0, 10), (0, 10)]


def test_ops_from_several_user_threads_stay_correct(threads):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((300, 400)).astype(np.float32) for _ in range(4)]
    results = [None] * 4

    def run(index):
        x = lucid.tensor(arrays[index])
        results[index] = (x + x * 2.0).relu().numpy()

    workers = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for array, result in zip(arrays, results):
        np.testing.assert_array_equal(result, np.maximum(array + array * 2.0, 0))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "broadcast row", "scalar"])
def test_large_binary_op_equals_numpy(threads, layout):
    rng = np.random.default_rng(1)
    x = _special_values((300, 500), rng)
    if layout == "contiguous":
        y = rng.standard_normal((300, 500)).astype(np.float32)
    elif layout == "transposed":
        y = rng.standard_normal((500, 300)).astype(np.float32).T
    elif layout == "broadcast row":
        y = rng.standard_normal(500).astype(np.float32)
    else:
        y = 3.5
    other = y if layout == "scalar" else lucid.tensor(y)
    for op, reference in ((lucid.add, np.add), (lucid.mul, np.multiply), (lucid.div, np.divide)):
        _assert_bits_equal(op(lucid.tensor(x), other).numpy(), reference(x, y))


@pytest.mark.filterwarnings("ignore::lucid.autograd.NonFiniteWarning")
def test_large_relu_forward_and_backward_match_where(threads):
    rng = np.random.default_rng(2)
    x = lucid.tensor(_special_values((BATCH, 16, 28, 28), rng), requires_grad=True)
    grad = _special_values((BATCH, 16, 28, 28), np.random.default_rng(3))
    out = x.relu()
    out.backward(lucid.tensor(grad))
    _assert_bits_equal(out.detach().numpy(), np.maximum(x.detach().numpy(), 0))
    expected = np.where(out.detach().numpy() <= 0, np.float32(0), grad)
    _assert_bits_equal(x.grad.numpy(), expected)


def _conv_pool_step(x_array):
    lucid.manual_seed(0)
    conv = lucid.nn.Conv2d(4, 8, 3, padding=1)
    x = lucid.tensor(x_array, requires_grad=True)
    out = F.max_pool2d(conv(x).relu(), 2)
    out.backward(lucid.ones_like(out))
    return out.detach().numpy(), x.grad.numpy(), conv.weight.grad.numpy(), conv.bias.grad.numpy()


def test_large_conv_and_pool_equal_their_serial_results(threads):
    x = _special_values((BATCH, 4, 28, 28), np.random.default_rng(4))
    x[x != x] = 0.0  # keep the values finite: GEMM sums would spread nan everywhere
    x[np.isinf(x)] = 1.0
    parallel = _conv_pool_step(x)
    serial = _serial(lambda: _conv_pool_step(x))
    for actual, expected in zip(parallel, serial):
        _assert_bits_equal(actual, expected)


def test_worker_floating_point_flags_reach_the_sentinel(threads):
    was_enabled = is_sentinel_enabled()
    set_sentinel(True)
    anomaly_mode.reset_sentinel()
    try:
        numerator = lucid.ones(400, 400, requires_grad=True)
        denominator = np.ones((400, 400), dtype=np.float32)
        denominator[-1, -1] = 0.0  # in the last rows: the worker's range
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            (numerator / lucid.tensor(denominator)).sum().backward()
        events = [w.message.event for w in record if issubclass(w.category, NonFiniteWarning)]
        assert len(events) == 1
        assert events[0].op == "Div" and events[0].kind == "inf"
        assert events[0].mechanism == "division by zero"
    finally:
        set_sentinel(was_enabled)
        anomaly_mode.reset_sentinel()


def _block_step(x_array):
    lucid.manual_seed(0)
    layer = lucid.nn.TransformerEncoderLayer(
        32, 4, dim_feedforward=64, dropout=0.0, batch_first=True, norm_first=True
    )
    x = lucid.tensor(x_array, requires_grad=True)
    mask = lucid.tensor(np.triu(np.full((64, 64), -np.inf, dtype=np.float32), 1))
    out = layer(x, src_mask=mask, is_causal=True)
    out.backward(lucid.tensor(np.cos(np.arange(out.numel(), dtype=np.float32)).reshape(out.shape)))
    grads = [p.grad.numpy() for p in layer.parameters()]
    return [out.detach().numpy(), x.grad.numpy(), *grads]


def test_large_attention_and_layer_norm_equal_their_serial_results(threads):
    x = np.random.default_rng(5).standard_normal((BATCH, 64, 32)).astype(np.float32)
    parallel = _block_step(x)
    serial = _serial(lambda: _block_step(x))
    for actual, expected in zip(parallel, serial):
        _assert_bits_equal(actual, expected)


def test_large_copies_equal_numpy(threads):
    array = np.random.default_rng(6).standard_normal((64, 48, 40)).astype(np.float32)
    x = lucid.tensor(array)
    _assert_bits_equal(x.transpose(0, 2).contiguous().numpy(), array.transpose(2, 1, 0).copy())
    _assert_bits_equal(
        x.transpose(1, 2).reshape(64, -1).numpy(), array.transpose(0, 2, 1).reshape(64, -1)
    )
    _assert_bits_equal(x.clone().numpy(), array)
