"""Op catalogue rows: the convolution family (convolutions and pooling)."""

from __future__ import annotations

import lucid.nn.functional as LF
from tests.ops.op_catalogue import OpCase
from tests.torch_oracle import functional as F


def _row(name: str, shapes, extremes: bool = True, **kwargs) -> OpCase:
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
        sums=not op.startswith("max_pool"),
        rtol32=1e-4,
        atol32=1e-5,
    )


# Convolutions and averages sum products (`sums`), so their extreme values are compared as
# sums whose value and NaN-vs-inf may depend on the order. extremes=False: lucid's gradient
# of the input is NaN where every term is finite and torch's is finite (conv1d[groups],
# conv2d, conv2d[dilation]); adaptive_avg_pool2d is NaN where its window holds no NaN or inf.
ROWS: list[OpCase] = [
    _row("conv1d", [(2, 3, 7), (4, 3, 3), (4,)], stride=2, padding=1, dilation=2),
    _row("conv1d[groups]", [(2, 4, 6), (4, 2, 2)], False, groups=2),
    _row("conv2d", [(2, 3, 5, 4), (4, 3, 3, 2), (4,)], False),
    _row("conv2d[no bias]", [(2, 3, 5, 4), (2, 3, 2, 2)], stride=(2, 1), padding=1),
    _row("conv2d[padding]", [(2, 3, 5, 4), (4, 3, 3, 3), (4,)], padding=1),
    _row("conv2d[same]", [(2, 2, 4, 5), (4, 1, 2, 3), (4,)], padding="same", groups=2),
    _row("conv2d[dilation]", [(1, 2, 6, 5), (3, 2, 2, 2)], False, dilation=(2, 1), padding=(1, 0)),
    _row("conv2d[groups]", [(2, 4, 4, 4), (6, 2, 2, 2), (6,)], groups=2, stride=2),
    _row("conv2d[unbatched]", [(2, 4, 4), (3, 2, 2, 2)]),
    _row("conv_transpose2d", [(2, 3, 3, 2), (3, 2, 2, 3), (2,)]),
    _row(
        "conv_transpose2d[stride groups]",
        [(1, 4, 3, 3), (4, 1, 3, 2), (2,)],
        stride=2,
        padding=1,
        output_padding=1,
        groups=2,
    ),
    # NaN/inf windows pick PyTorch's argmax (first max, last NaN), so extremes match
    _row("max_pool2d", [(2, 2, 5, 4)], kernel_size=2),
    _row("max_pool2d[tiles]", [(2, 2, 4, 6)], kernel_size=2),
    _row("max_pool2d[tiles 3x2]", [(1, 2, 6, 4)], kernel_size=(3, 2)),
    _row(
        "max_pool2d[pad ceil]", [(1, 2, 5, 6)], kernel_size=3, stride=2, padding=1, ceil_mode=True
    ),
    _row("max_pool2d[dilation]", [(1, 2, 6, 5)], kernel_size=2, dilation=2, stride=1),
    _row("max_pool1d", [(2, 3, 7)], kernel_size=3, stride=2, padding=1),
    _row("avg_pool2d", [(2, 2, 5, 4)], kernel_size=2),
    _row(
        "avg_pool2d[pad ceil]",
        [(1, 2, 5, 6)],
        kernel_size=3,
        stride=2,
        padding=1,
        ceil_mode=True,
        count_include_pad=False,
    ),
    _row("avg_pool2d[divisor]", [(2, 4, 4)], kernel_size=2, divisor_override=3),
    _row("avg_pool1d", [(2, 3, 7)], kernel_size=3, stride=2, padding=1),
    _row("adaptive_avg_pool2d", [(2, 2, 5, 7)], False, output_size=(3, 4)),
    _row("adaptive_avg_pool2d[global]", [(2, 2, 5, 7)], output_size=1),
]
