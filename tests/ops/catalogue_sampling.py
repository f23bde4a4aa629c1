"""Op catalogue rows: the sampling family (interpolate, pad, pixel shuffle, grid sampling)."""

from __future__ import annotations

import lucid.nn.functional as LF
from tests.ops.op_catalogue import ErrorInput, OpCase
from tests.torch_oracle import functional as F


def _row(name: str, shapes, extremes: bool = True, error_inputs=(), **kwargs) -> OpCase:
    """`lucid.nn.functional.<op>` against `torch.nn.functional.<op>` on small shapes."""
    op = name.split("[")[0]
    return OpCase(
        name,
        getattr(LF, op),
        getattr(F, op),
        None,
        shapes=shapes,
        kwargs=kwargs,
        extremes=extremes,
        sums=True,
        rtol32=1e-4,
        atol32=1e-5,
        error_inputs=error_inputs,
    )


_NO_SIZE = ErrorInput([(1, 2, 4, 4)], ValueError, "either size or scale_factor should be defined")
_ALIGN_NEAREST = ErrorInput(
    [(1, 2, 4, 4)],
    ValueError,
    "align_corners option can only be set with the interpolating modes",
    {"size": 3, "mode": "nearest-exact", "align_corners": True},
)
_RECOMPUTE_SIZE = ErrorInput(
    [(1, 2, 4, 4)],
    ValueError,
    "recompute_scale_factor is not meaningful with an explicit size.",
    {"size": 3, "mode": "bicubic", "recompute_scale_factor": True},
)
_BICUBIC_3D = ErrorInput(
    [(1, 2, 4)],
    NotImplementedError,
    r"Only 3D, 4D and 5D input Tensors supported \(got 3D\) .* \(got bicubic\)",
    {"size": 3, "mode": "bicubic"},
)
_ANTIALIAS_NEAREST = ErrorInput(
    [(1, 2, 4, 4)],
    ValueError,
    "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes",
    {"size": 3, "mode": "nearest", "antialias": True},
)
_LINEAR_4D = ErrorInput(
    [(1, 2, 4, 4)],
    NotImplementedError,
    "Got 4D input, but linear mode needs 3D input",
    {"size": 3, "mode": "linear"},
)
_EMPTY_OUTPUT = ErrorInput(
    [(1, 2, 3, 4, 4)],
    RuntimeError,
    r"Input and output sizes should be greater than 0, but got input \(D: 3, H: 4, W: 4\) "
    r"output \(D: 0, H: 1, W: 1\)",
    {"scale_factor": 0.3, "mode": "nearest-exact"},
)
_AREA_NEGATIVE = ErrorInput(
    [(1, 2, 4, 4)],
    RuntimeError,
    "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0",
    {"size": -2, "mode": "area"},
)

# extremes=False: linear, bilinear and trilinear apply one weight matrix per axis, so a
# non-finite pixel reaches every output of its row through a zero weight (0 * inf = nan)
# where PyTorch reads only the two neighbours; area on 3-d input likewise.
ROWS: list[OpCase] = [
    _row("interpolate[nearest-exact 3d]", [(2, 3, 5)], size=7, mode="nearest-exact"),
    _row("interpolate[nearest-exact 4d]", [(2, 2, 5, 4)], scale_factor=(0.6, 1.7),
         mode="nearest-exact", error_inputs=[_NO_SIZE, _ALIGN_NEAREST, _EMPTY_OUTPUT]),
    _row("interpolate[nearest-exact 5d]", [(1, 2, 3, 4, 2)], size=(2, 5, 3),
         mode="nearest-exact"),
    _row("interpolate[area 3d]", [(2, 3, 7)], False, size=3, mode="area"),
    _row("interpolate[area 4d]", [(2, 2, 5, 6)], scale_factor=0.5, mode="area",
         error_inputs=[_AREA_NEGATIVE]),
    _row("interpolate[area 5d]", [(1, 2, 5, 4, 3)], size=(2, 3, 2), mode="area"),
    _row("interpolate[linear]", [(2, 3, 5)], False, size=8, mode="linear",
         error_inputs=[_LINEAR_4D]),
    _row("interpolate[linear align]", [(2, 3, 5)], False, scale_factor=1.6, mode="linear",
         align_corners=True),
    _row("interpolate[bilinear scale]", [(1, 2, 4, 5)], False, scale_factor=(1.5, 0.7),
         mode="bilinear"),
    _row("interpolate[trilinear]", [(1, 2, 3, 4, 2)], False, size=(4, 3, 5), mode="trilinear"),
    _row("interpolate[trilinear recompute]", [(1, 2, 3, 4, 2)], False, scale_factor=1.7,
         mode="trilinear", recompute_scale_factor=True),
    _row("interpolate[bicubic]", [(2, 2, 4, 5)], size=(7, 3), mode="bicubic",
         error_inputs=[_RECOMPUTE_SIZE, _BICUBIC_3D]),
    _row("interpolate[bicubic align]", [(1, 2, 4, 5)], size=(6, 8), mode="bicubic",
         align_corners=True),
    _row("interpolate[bicubic scale]", [(1, 2, 4, 5)], scale_factor=1.5, mode="bicubic"),
    _row("interpolate[bilinear antialias]", [(1, 2, 8, 7)], size=(3, 5),
         mode="bilinear", antialias=True, error_inputs=[_ANTIALIAS_NEAREST]),
    _row("interpolate[bicubic antialias]", [(1, 2, 9, 6)], scale_factor=(0.4, 1.5),
         mode="bicubic", antialias=True, align_corners=True),
]  # fmt: skip

ROWS += [
    _row("pixel_shuffle", [(2, 8, 3, 2)], upscale_factor=2),
    _row("pixel_shuffle[batch dims]", [(2, 1, 9, 2, 2)], upscale_factor=3),
    _row("pixel_unshuffle", [(2, 2, 4, 6)], downscale_factor=2),
    # glu and prelu (nn_ops) are single ops like pixel_shuffle, tested here with them
    _row("glu", [(3, 4)]),
    _row("glu[dim]", [(4, 3, 2)], dim=0),
    _row("prelu", [(2, 3, 4), (3,)]),
    _row("prelu[shared]", [(2, 3), (1,)]),
]
