"""F.grid_sample, F.affine_grid and channel shuffling against torch: values, gradients of the
input and the grid, grad_fn names, and the align_corners warnings."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import assert_close, check_forward_backward, check_repr_and_keys
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

_GRID_CASES = [
    (ndim, mode, padding, corners)
    for ndim, mode, padding, corners in itertools.product(
        (4, 5), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
        (False, True),
    )
    if not (ndim == 5 and mode == "bicubic")
]  # fmt: skip


@pytest.mark.parametrize(("ndim", "mode", "padding", "corners"), _GRID_CASES, ids=str)
def test_grid_sample_matches_torch(ndim, mode, padding, corners):
    rng = np.random.default_rng(ndim)
    if ndim == 4:
        shape, grid_shape = (2, 3, 4, 5), (2, 6, 7, 2)
    else:
        shape, grid_shape = (2, 2, 3, 4, 5), (2, 3, 4, 2, 3)
    array = rng.standard_normal(shape)
    # points well outside [-1, 1] exercise the padding, reflections more than once included
    points = rng.uniform(-2.5, 2.5, grid_shape)
    results = []
    for lib in (torch, lucid):
        x = lib.tensor(array, requires_grad=True)
        grid = lib.tensor(points, requires_grad=True)
        output = lib.nn.functional.grid_sample(x, grid, mode, padding, corners)
        seed = np.linspace(-1.0, 1.0, output.numel()).reshape(tuple(output.shape))
        output.backward(lib.tensor(seed))
        results.append((output, x.grad, grid.grad, output.grad_fn.name()))
    expected, got = results
    for index, what in enumerate(("output", "input grad", "grid grad")):
        assert_close(got[index], expected[index], 1e-10, 1e-12, what)
    assert got[3] == expected[3]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_grid_sample_passes_gradcheck_and_gradgradcheck(mode):
    rng = np.random.default_rng(3)
    x = lucid.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    grid = lucid.tensor(rng.uniform(-1.2, 1.2, (1, 3, 2, 2)), requires_grad=True)

    def sample(a, b):
        return nn.functional.grid_sample(a, b, mode, "reflection", align_corners=False)

    assert lucid.autograd.gradcheck(sample, (x, grid))
    assert lucid.autograd.gradgradcheck(sample, (x, grid))


@pytest.mark.parametrize(("size", "corners"), [((2, 3, 4, 5), False), ((2, 1, 1, 3), True),
                                                ((2, 3, 2, 4, 3), True)], ids=str)  # fmt: skip
def test_affine_grid_then_grid_sample_matches_torch(size, corners):
    rng = np.random.default_rng(4)
    dims = len(size) - 2
    theta = rng.standard_normal((2, dims, dims + 1))
    image = rng.standard_normal(size)
    results = []
    for lib in (torch, lucid):
        t = lib.tensor(theta, requires_grad=True)
        x = lib.tensor(image, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid = lib.nn.functional.affine_grid(t, size, align_corners=corners)
        output = lib.nn.functional.grid_sample(x, grid, align_corners=corners)
        (output * output).sum().backward()
        results.append((grid, output, t.grad, x.grad, grid.grad_fn.name()))
    expected, got = results
    for index in range(4):
        assert_close(got[index], expected[index], 1e-10, 1e-12, str(index))
    assert got[4] == expected[4]


def test_align_corners_defaults_warn_as_torch():
    theta = np.eye(2, 3)[None]
    for call in (
        lambda lib: lib.nn.functional.affine_grid(lib.tensor(theta), (1, 1, 2, 2)),
        lambda lib: lib.nn.functional.affine_grid(lib.tensor(theta), (1, 1, 1, 2), True),
        lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2)),
    ):
        messages = []
        for lib in (torch, lucid):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call(lib)
            messages.append([(w.category, str(w.message)) for w in caught])
        assert messages[1] == messages[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("groups", "shape"), [(2, (2, 4, 3)), (3, (1, 6, 2, 2))], ids=str)
def test_channel_shuffle_layer_matches_torch(groups, shape, dtype):
    torch_layer, lucid_layer = torch.nn.ChannelShuffle(groups), nn.ChannelShuffle(groups)
    check_repr_and_keys(torch_layer, lucid_layer)
    x = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    check_forward_backward(torch_layer, lucid_layer, [x], dtype)
    functional = nn.functional.channel_shuffle(lucid.tensor(x, requires_grad=True), groups)
    expected = torch.nn.functional.channel_shuffle(torch.tensor(x, requires_grad=True), groups)
    assert functional.grad_fn.name() == expected.grad_fn.name()
