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
_LANCZOS_PLAIN = ErrorInput(
    [(1, 2, 4, 4)],
    ValueError,
    "Lanczos mode requires antialias=True",
    {"size": 3, "mode": "lanczos"},
)
_LANCZOS_CORNERS = ErrorInput(
    [(1, 2, 4, 4)],
    ValueError,
    "Lanczos mode does not support align_corners=True",
    {"size": 3, "mode": "lanczos", "antialias": True, "align_corners": True},
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

# extremes=False on area of 3-d input: adaptive_avg_pool2d applies one averaging matrix per
# axis, so a non-finite pixel reaches every output of its row through a zero weight.
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
    _row("interpolate[linear]", [(2, 3, 5)], size=8, mode="linear",
         error_inputs=[_LINEAR_4D]),
    _row("interpolate[linear align]", [(2, 3, 5)], scale_factor=1.6, mode="linear",
         align_corners=True),
    _row("interpolate[bilinear scale]", [(1, 2, 4, 5)], scale_factor=(1.5, 0.7),
         mode="bilinear"),
    _row("interpolate[trilinear]", [(1, 2, 3, 4, 2)], size=(4, 3, 5), mode="trilinear"),
    _row("interpolate[trilinear recompute]", [(1, 2, 3, 4, 2)], scale_factor=1.7,
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
    _row("interpolate[lanczos]", [(1, 2, 9, 5)], scale_factor=(0.4, 1.5), mode="lanczos",
         antialias=True, error_inputs=[_LANCZOS_PLAIN, _LANCZOS_CORNERS]),
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

_GRID_BATCH = ErrorInput(
    [(2, 3, 4, 5), (3, 6, 7, 2)],
    RuntimeError,
    r"grid_sampler\(\): expected grid and input to have same batch size, but got input with "
    r"sizes \[2, 3, 4, 5\] and grid with sizes \[3, 6, 7, 2\]",
    {"align_corners": False},
)
_GRID_BICUBIC_3D = ErrorInput(
    [(1, 2, 3, 3, 3), (1, 2, 2, 2, 3)],
    RuntimeError,
    r"grid_sampler\(\): bicubic interpolation only supports 4D input",
    {"mode": "bicubic", "align_corners": False},
)
_GRID_LAST = ErrorInput(
    [(1, 2, 3, 3), (1, 2, 2, 3)],
    RuntimeError,
    r"grid_sampler\(\): expected grid to have size 2 in last dimension",
    {"align_corners": True},
)
_GRID_MODE = ErrorInput(
    [(1, 2, 3, 3), (1, 2, 2, 2)],
    ValueError,
    "expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'area'",
    {"mode": "area", "align_corners": True},
)
_GRID_PADDING = ErrorInput(
    [(1, 2, 3, 3), (1, 2, 2, 2)],
    ValueError,
    "expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'wrap'",
    {"padding_mode": "wrap", "align_corners": True},
)
_AFFINE_SHAPE = ErrorInput(
    [(2, 3, 4)],
    ValueError,
    r"Expected a batch of 2D affine matrices of shape Nx2x3 for size \(2, 3, 4, 5\)",
    {"size": (2, 3, 4, 5), "align_corners": False},
)
_AFFINE_SIZE = ErrorInput(
    [(2, 2, 3)],
    NotImplementedError,
    "affine_grid only supports 4D and 5D sizes",
    {"size": (2, 3, 4), "align_corners": False},
)
_AFFINE_EMPTY = ErrorInput(
    [(2, 2, 3)],
    ValueError,
    r"Expected non-zero, positive output size. Got \(2, 3, 0, 5\)",
    {"size": (2, 3, 0, 5), "align_corners": False},
)
_SHUFFLE_GROUPS = ErrorInput(
    [(2, 6, 3)],
    RuntimeError,
    "Number of channels must be divisible by groups. Got 6 channels and 4 groups.",
    {"groups": 4},
)
_SHUFFLE_RANK = ErrorInput(
    [(6,)],
    RuntimeError,
    r"channel_shuffle expects input with > 2 dims, but got input with sizes \[6\]",
    {"groups": 2},
)


def _grid(name: str, shapes, extremes: bool = True, error_inputs=(), low_precision_skip="",
          **kwargs) -> OpCase:  # fmt: skip
    """grid_sample rows: the grid (second input) spans a little beyond [-1, 1]."""
    row = _row(name, shapes, extremes, error_inputs, **kwargs)
    row.low, row.high = -1.3, 1.3
    row.low_precision_skip = low_precision_skip
    return row


# PyTorch's CPU grid sampler computes the source coordinates and tap weights of a float16 or
# bfloat16 grid in that dtype, one rounding per vectorised step. lucid rounds op by op in the
# same dtype and matches its bilinear and nearest sampling with zero or border padding, but
# the bicubic coefficients and the reflected coordinates take other steps there and differ by
# a few units; tests/nn/test_low_precision.py covers the modes that match.
_GRID_ROUNDING = "PyTorch's own rounding steps of low-precision grid coordinates (see above)"


# extremes=False on grid_sample: PyTorch's CPU kernel crashes the process on non-finite or huge
# grid points (border padding), so there is no reference to compare with
ROWS += [
    _grid("grid_sample", [(2, 3, 4, 5), (2, 3, 2, 2)], False, align_corners=False,
          error_inputs=[_GRID_BATCH, _GRID_LAST, _GRID_MODE, _GRID_PADDING]),
    _grid("grid_sample[border align]", [(1, 2, 4, 3), (1, 2, 3, 2)], False,
          padding_mode="border", align_corners=True),
    _grid("grid_sample[reflection]", [(1, 2, 4, 3), (1, 3, 2, 2)], False,
          padding_mode="reflection", align_corners=False,
          low_precision_skip=_GRID_ROUNDING),
    _grid("grid_sample[nearest]", [(1, 2, 4, 3), (1, 3, 2, 2)], False, mode="nearest",
          padding_mode="reflection", align_corners=True),
    _grid("grid_sample[bicubic]", [(1, 2, 4, 5), (1, 2, 3, 2)], False, mode="bicubic",
          align_corners=False, error_inputs=[_GRID_BICUBIC_3D],
          low_precision_skip=_GRID_ROUNDING),
    _grid("grid_sample[bicubic border]", [(1, 1, 3, 4), (1, 2, 2, 2)], False, mode="bicubic",
          padding_mode="border", align_corners=True,
          low_precision_skip=_GRID_ROUNDING),
    _grid("grid_sample[bicubic reflection]", [(1, 1, 3, 4), (1, 2, 2, 2)], False,
          mode="bicubic", padding_mode="reflection", align_corners=False,
          low_precision_skip=_GRID_ROUNDING),
    _grid("grid_sample[3d]", [(1, 2, 3, 4, 2), (1, 2, 2, 1, 3)], False, align_corners=True),
    _grid("grid_sample[3d reflection]", [(1, 2, 3, 2, 3), (1, 1, 2, 2, 3)], False,
          padding_mode="reflection", align_corners=False),
    _grid("grid_sample[3d nearest]", [(1, 2, 3, 2, 3), (1, 1, 2, 2, 3)], False,
          mode="nearest", padding_mode="border", align_corners=False),
    _row("affine_grid", [(2, 2, 3)], size=(2, 3, 4, 5), align_corners=False,
         error_inputs=[_AFFINE_SHAPE, _AFFINE_SIZE, _AFFINE_EMPTY]),
    _row("affine_grid[align]", [(2, 2, 3)], size=(2, 1, 3, 2), align_corners=True),
    _row("affine_grid[3d]", [(1, 3, 4)], size=(1, 2, 3, 2, 4), align_corners=False),
    _row("channel_shuffle", [(2, 6, 3)], groups=3,
         error_inputs=[_SHUFFLE_GROUPS, _SHUFFLE_RANK]),
    _row("channel_shuffle[4d]", [(2, 4, 2, 3)], groups=2),
]  # fmt: skip
