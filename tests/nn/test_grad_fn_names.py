"""grad_fn names of composed ops and layers equal PyTorch's (`out.grad_fn.name()`)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def _x(lib, *shape, dtype="float64"):
    array = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    return lib.tensor(array, requires_grad=True)


def _layer(name, **kwargs):
    """A float32 layer of `name` called on a (2, 5, 3) batch, its output or its hidden state.

    (float32, the default: PyTorch's CPU LSTM runs its float32 layers as one fused node.)
    """

    def call(lib, index=0, unbatched=False):
        lib.manual_seed(0)
        module = getattr(lib.nn, name)(3, 4, **kwargs)
        if name.endswith("Cell"):
            shape = (3,) if unbatched else (2, 3)
        else:
            shape = (5, 3) if unbatched else (2, 5, 3)
        result = module(_x(lib, *shape, dtype="float32"))
        result = result if isinstance(result, tuple) else (result,)
        flat = [part for item in result for part in (item if isinstance(item, tuple) else (item,))]
        return flat[index]

    return call


def _cases():
    cases = {
        "glu": lambda lib, F: F.glu(_x(lib, 2, 4)),
        "glu[dim 0]": lambda lib, F: F.glu(_x(lib, 4, 3), 0),
        "prelu[channels]": lambda lib, F: F.prelu(_x(lib, 2, 3, 4), _x(lib, 3)),
        "prelu[shared]": lambda lib, F: F.prelu(_x(lib, 2, 3), _x(lib, 1)),
        "pixel_shuffle": lambda lib, F: F.pixel_shuffle(_x(lib, 1, 8, 2, 3), 2),
        "pixel_unshuffle": lambda lib, F: F.pixel_unshuffle(_x(lib, 2, 1, 4, 6), 2),
    }
    for mode in ("sum", "mean", "max"):
        cases[f"embedding_bag[{mode}]"] = lambda lib, F, mode=mode: F.embedding_bag(
            lib.tensor([1, 2, 3, 1]), _x(lib, 5, 3), lib.tensor([0, 2]), mode=mode
        )
    for mode in ("constant", "reflect", "replicate", "circular"):
        for ndim in (3, 4, 5):
            cases[f"pad[{mode} {ndim}d]"] = lambda lib, F, mode=mode, ndim=ndim: F.pad(
                _x(lib, *([3] * ndim)), (1, 2) * (ndim - 2), mode=mode
            )
    ranks = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5),
             "linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,)}  # fmt: skip
    for mode, dims in ranks.items():
        for ndim in dims:
            cases[f"interpolate[{mode} {ndim}d]"] = lambda lib, F, mode=mode, ndim=ndim: (
                F.interpolate(_x(lib, *([4] * ndim)), size=(3,) * (ndim - 2), mode=mode)
            )
    for mode in ("bilinear", "bicubic", "lanczos"):
        cases[f"interpolate[{mode} antialias]"] = lambda lib, F, mode=mode: F.interpolate(
            _x(lib, 1, 1, 6, 6), size=(3, 4), mode=mode, antialias=True
        )
    for name in ("RNN", "LSTM", "GRU"):
        outputs = 3 if name == "LSTM" else 2
        for index in range(outputs):
            for options in ({}, {"bidirectional": True, "num_layers": 2}):
                label = f"{name}{options} output {index}"
                cases[label] = lambda lib, F, n=name, o=options, i=index: _layer(n, **o)(lib, i)
            cases[f"{name} unbatched {index}"] = lambda lib, F, n=name, i=index: _layer(n)(
                lib, i, unbatched=True
            )
        cell = f"{name}Cell"
        for index in range(2 if name == "LSTM" else 1):
            cases[f"{cell} {index}"] = lambda lib, F, c=cell, i=index: _layer(c)(lib, i)
            cases[f"{cell} unbatched {index}"] = lambda lib, F, c=cell, i=index: _layer(c)(
                lib, i, unbatched=True
            )
    cases["LSTM batch_first"] = lambda lib, F: _layer("LSTM", batch_first=True)(lib)
    return cases


_CASES = _cases()


@pytest.mark.parametrize("name", list(_CASES))
def test_grad_fn_name_is_pytorchs(name):
    expected = _CASES[name](torch, torch.nn.functional).grad_fn.name()
    got = _CASES[name](lucid, lucid.nn.functional).grad_fn.name()
    assert got == expected.replace("torch::", "lucid::")
