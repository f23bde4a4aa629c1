"""F.interpolate in every mode against torch over a grid of sizes, scales and corner modes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import assert_close
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

# mode -> the input ranks it takes
_MODES = {
    "nearest": (3, 4, 5),
    "nearest-exact": (3, 4, 5),
    "area": (3, 4, 5),
    "linear": (3,),
    "bilinear": (4,),
    "bicubic": (4,),
    "trilinear": (5,),
    "lanczos": (4,),
}


def _calls(mode: str, ndim: int):
    """Keyword sets for one mode and rank: sizes up and down, scales with and without
    recompute_scale_factor, align_corners, antialias."""
    spatial = ndim - 2
    if mode == "lanczos":
        # antialiased only, and never with align_corners
        for out in (1, 2, 5, 9):
            yield {"size": (out,) * spatial, "antialias": True}
        for scale, recompute in itertools.product((0.3, 0.5, 1.7), (None, True)):
            yield {"scale_factor": scale, "antialias": True, "recompute_scale_factor": recompute}
        return
    interpolating = mode not in ("nearest", "nearest-exact", "area")
    corners = (False, True) if interpolating else (None,)
    for out, corner in itertools.product((1, 2, 5, 9), corners):
        yield {"size": (out,) * spatial, "align_corners": corner}
    for scale, recompute, corner in itertools.product((0.4, 1.5, 2.0, 3.3), (None, True), corners):
        yield {"scale_factor": scale, "recompute_scale_factor": recompute, "align_corners": corner}
    if mode in ("bilinear", "bicubic"):
        for scale, corner in itertools.product((0.3, 0.5, 1.7), corners):
            yield {"scale_factor": scale, "antialias": True, "align_corners": corner}


_CASES = [(mode, ndim) for mode, ranks in _MODES.items() for ndim in ranks]


@pytest.mark.parametrize(("mode", "ndim"), _CASES, ids=lambda v: str(v))
def test_interpolate_matches_torch_forward_and_backward(mode, ndim):
    rng = np.random.default_rng(ndim)
    for size in (1, 4, 7):
        array = rng.standard_normal((2, 2) + (size,) * (ndim - 2))
        for kwargs in _calls(mode, ndim):
            if size * kwargs.get("scale_factor", 1) < 1:
                continue  # an empty output is an error (checked in the catalogue)
            what = f"{mode} {array.shape} {kwargs}"
            x_torch = torch.tensor(array, requires_grad=True)
            x_lucid = lucid.tensor(array, requires_grad=True)
            expected = torch.nn.functional.interpolate(x_torch, mode=mode, **kwargs)
            actual = nn.functional.interpolate(x_lucid, mode=mode, **kwargs)
            assert_close(actual, expected, 1e-10, 1e-12, what)
            assert actual.grad_fn.name() == expected.grad_fn.name(), what
            seed = rng.standard_normal(tuple(expected.shape))
            expected.backward(torch.tensor(seed))
            actual.backward(lucid.tensor(seed))
            assert_close(x_lucid.grad, x_torch.grad, 1e-10, 1e-12, what)


@pytest.mark.parametrize(
    ("mode", "kwargs"),
    [("nearest-exact", {}), ("area", {}), ("bicubic", {"align_corners": True}),
     ("bicubic", {"antialias": True}), ("bilinear", {"antialias": True}),
     ("lanczos", {"antialias": True})],
)  # fmt: skip
def test_interpolate_modes_pass_gradcheck_and_gradgradcheck(mode, kwargs):
    rng = np.random.default_rng(4)
    x = lucid.tensor(rng.standard_normal((1, 2, 5, 4)), requires_grad=True)

    def resized(t):
        return nn.functional.interpolate(t, size=(3, 6), mode=mode, **kwargs)

    assert lucid.autograd.gradcheck(resized, (x,))
    assert lucid.autograd.gradgradcheck(resized, (x,))


@pytest.mark.parametrize(
    "args",
    [(None, 2.0, "nearest-exact"), ((3, 5), None, "area"), (None, 1.5, "bicubic", True),
     (None, 0.5, "bilinear", False, True)],
    ids=str,
)  # fmt: skip
def test_upsample_layer_new_modes_match_torch(args):
    array = np.random.default_rng(5).standard_normal((2, 3, 6, 5))
    expected = torch.nn.Upsample(*args)(torch.tensor(array))
    actual = nn.Upsample(*args)(lucid.tensor(array))
    assert_close(actual, expected, 1e-10, 1e-12, str(args))
