"""Helpers shared by the lucid.func tests: the same float64 arrays as lucid and torch tensors,
and a tree comparison of results."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from tests.torch_oracle import torch


def pair(*shapes: tuple[int, ...], seed: int = 0) -> tuple[list[Any], list[Any]]:
    """([lucid tensors], [torch tensors]) holding the same float64 values."""
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-1.0, 1.0, shape) for shape in shapes]
    return (
        [lucid.from_numpy(v.copy()) for v in values],
        [torch.from_numpy(v.copy()) for v in values],
    )


def assert_tree_close(actual: Any, expected: Any, path: str = "result") -> None:
    """Same nesting (tuples, lists, dicts), shapes and float64 values within 1e-12."""
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_tree_close(a, e, f"{path}[{index}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected a dict, got {type(actual)}"
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} != {list(expected)}"
        for key in expected:
            assert_tree_close(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, torch.Tensor):
        assert isinstance(actual, lucid.Tensor), f"{path}: expected a tensor, got {type(actual)}"
        assert tuple(actual.shape) == tuple(expected.shape), f"{path}: shape"
        assert actual.dtype == lucid.float64, f"{path}: dtype {actual.dtype}"
        np.testing.assert_allclose(
            actual.detach().numpy(),
            expected.detach().numpy(),
            rtol=1e-12,
            atol=1e-12,
            err_msg=path,
        )
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
