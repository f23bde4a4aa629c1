"""Op catalogue rows: the convolution family (convolutions) and the pooling family."""

from __future__ import annotations

import numpy as np

import lucid
import lucid.nn.functional as LF
from tests.ops.op_catalogue import OpCase
from tests.torch_oracle import functional as F
from tests.torch_oracle import torch

# PyTorch convolves float16 and bfloat16 with oneDNN only on CPUs with the instructions oneDNN
# has kernels for in the dtype (AVX-512 FP16 for float16, AVX-512 for bfloat16, among others),
# and those kernels answer extreme values per CPU. Checked on a Sapphire Rapids (AVX-512 FP16,
# AMX): the input gradient through strided or dilated windows is NaN where no window reaches
# (exactly zero there) and where only finite terms meet, and the bfloat16 kernels read
# denormals as zero (-inf times the smallest denormal is NaN). PyTorch's own kernels, which
# the other CPUs take, accumulate in float32 and round once, as lucid does (their NaN and inf
# fall where its float64 kernels' rounded ones do); with oneDNN off, every machine runs them.
_ONEDNN_BY_CPU = "PyTorch's float16/bfloat16 oneDNN convolution depends on the CPU's instructions"


def _row(name: str, shapes, extremes: bool = True, sums: bool | None = None,
         **kwargs) -> OpCase:  # fmt: skip
    """`lucid.nn.functional.<op>` against `torch.nn.functional.<op>` on small shapes."""
    op = name.split("[")[0]
    maximum = "max_pool" in op
    return OpCase(
        name,
        getattr(LF, op),
        getattr(F, op),
        None,
        shapes=shapes,
        kwargs=kwargs,
        extremes=extremes,
        sums=not maximum if sums is None else sums,
        rtol32=1e-4,
        atol32=1e-5,
        # the argmax indices of the ops that return them are compared by the focused tests
        output_index=0 if kwargs.get("return_indices") else None,
        low_precision_without_onednn=_ONEDNN_BY_CPU if op.startswith("conv") else "",
    )


def _fractional(dims: int, shape: tuple[int, ...], **kwargs) -> OpCase:
    """fractional_max_pool with fixed samples, so that lucid and torch place the same windows."""
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = np.random.default_rng(3).uniform(size=(batch, shape[-dims - 1], dims))
    name = f"fractional_max_pool{dims}d"

    def lucid_op(x, **kw):
        fixed = lucid.tensor(samples, dtype=x.dtype)
        return getattr(LF, name)(x, _random_samples=fixed, **kw)

    def torch_op(x, **kw):
        fixed = torch.tensor(samples, dtype=x.dtype)
        return getattr(F, name)(x, _random_samples=fixed, **kw)

    return OpCase(
        f"{name}[{', '.join(kwargs)}]", lucid_op, torch_op, None, shapes=[shape], kwargs=kwargs
    )


def _unpool_inputs(dims: int, pooled: tuple[int, ...], size: tuple[int, ...]):
    """Values and distinct flat indices into each plane of `size`, as a max pooling gives."""
    planes = int(np.prod(pooled[:-dims]))
    count = int(np.prod(pooled[-dims:]))

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        values = rng.uniform(-2.0, 2.0, pooled).astype(dtype)
        picks = [rng.permutation(int(np.prod(size)))[:count] for _ in range(planes)]
        return [values, np.array(picks, dtype=np.int64).reshape(pooled)]

    return make


def _unpool(dims: int, pooled, size, **kwargs) -> OpCase:
    name = f"max_unpool{dims}d"
    return OpCase(
        name + ("[output_size]" if "output_size" in kwargs else ""),
        getattr(LF, name),
        getattr(F, name),
        None,
        kwargs={"kernel_size": 2, **kwargs},
        make_inputs=_unpool_inputs(dims, pooled, size),
        grad_inputs=[0],
    )


# Convolutions and averages sum products (`sums`), so their extreme values are compared as
# sums whose value and NaN-vs-inf may depend on the order.
ROWS: list[OpCase] = [
    _row("conv1d", [(2, 3, 7), (4, 3, 3), (4,)], stride=2, padding=1, dilation=2),
    _row("conv1d[groups]", [(2, 4, 6), (4, 2, 2)], groups=2),
    _row("conv2d", [(2, 3, 5, 4), (4, 3, 3, 2), (4,)]),
    _row("conv2d[no bias]", [(2, 3, 5, 4), (2, 3, 2, 2)], stride=(2, 1), padding=1),
    _row("conv2d[padding]", [(2, 3, 5, 4), (4, 3, 3, 3), (4,)], padding=1),
    _row("conv2d[same]", [(2, 2, 4, 5), (4, 1, 2, 3), (4,)], padding="same", groups=2),
    _row("conv2d[dilation]", [(1, 2, 6, 5), (3, 2, 2, 2)], dilation=(2, 1), padding=(1, 0)),
    _row("conv2d[groups]", [(2, 4, 4, 4), (6, 2, 2, 2), (6,)], groups=2, stride=2),
    _row("conv2d[unbatched]", [(2, 4, 4), (3, 2, 2, 2)]),
    # extremes=False: torch's float32 conv3d (not its float64 one) drops some NaN weight terms
    # at padded positions and answers finite where every order is NaN; lucid is NaN there as
    # torch's float64 is (test_convolution.py checks both against it)
    _row("conv3d", [(2, 3, 4, 3, 4), (4, 3, 2, 2, 3), (4,)], False, padding=1),
    _row("conv3d[stride dilation]", [(1, 2, 5, 4, 5), (3, 2, 2, 2, 2)], stride=(2, 1, 2),
         dilation=(1, 2, 1)),
    _row("conv3d[groups same]", [(2, 4, 3, 4, 3), (4, 2, 3, 2, 3), (4,)], padding="same",
         groups=2),
    _row("conv3d[unbatched]", [(2, 3, 4, 3), (3, 2, 2, 2, 2)]),
    _row("conv_transpose1d", [(2, 3, 5), (3, 2, 3), (2,)]),
    _row("conv_transpose1d[stride groups]", [(1, 4, 4), (4, 1, 3), (2,)], stride=2, padding=1,
         output_padding=1, groups=2, dilation=1),
    _row("conv_transpose1d[unbatched]", [(3, 5), (3, 2, 2)], dilation=2),
    _row("conv_transpose2d", [(2, 3, 3, 2), (3, 2, 2, 3), (2,)]),
    _row("conv_transpose2d[stride groups]", [(1, 4, 3, 3), (4, 1, 3, 2), (2,)], stride=2,
         padding=1, output_padding=1, groups=2),
    _row("conv_transpose3d", [(2, 3, 2, 3, 2), (3, 2, 2, 2, 3), (2,)]),
    _row("conv_transpose3d[stride groups]", [(1, 4, 2, 3, 2), (4, 1, 3, 2, 2), (2,)], stride=2,
         padding=1, output_padding=(1, 0, 1), groups=2),
    _row("conv_transpose3d[unbatched dilation]", [(3, 2, 2, 3), (3, 2, 2, 2, 2)], dilation=2),
    # NaN/inf windows pick PyTorch's argmax (first max, last NaN), so extremes match
    _row("max_pool2d", [(2, 2, 5, 4)], kernel_size=2),
    _row("max_pool2d[tiles]", [(2, 2, 4, 6)], kernel_size=2),
    _row("max_pool2d[tiles 3x2]", [(1, 2, 6, 4)], kernel_size=(3, 2)),
    _row(
        "max_pool2d[pad ceil]", [(1, 2, 5, 6)], kernel_size=3, stride=2, padding=1, ceil_mode=True
    ),
    _row("max_pool2d[dilation]", [(1, 2, 6, 5)], kernel_size=2, dilation=2, stride=1),
    _row("max_pool1d", [(2, 3, 7)], kernel_size=3, stride=2, padding=1),
    _row("max_pool3d", [(2, 2, 4, 4, 5)], kernel_size=2),
    _row("max_pool3d[pad ceil]", [(1, 2, 5, 4, 5)], kernel_size=3, stride=2, padding=1,
         ceil_mode=True),
    _row("max_pool3d[dilation unbatched]", [(2, 5, 4, 5)], kernel_size=(2, 2, 3), dilation=2,
         stride=1),
    _row("max_pool1d_with_indices", [(2, 3, 7)], kernel_size=3, stride=2, return_indices=True),
    _row("max_pool2d_with_indices", [(2, 2, 5, 4)], kernel_size=2, return_indices=True),
    _row("max_pool3d_with_indices", [(1, 2, 4, 5, 4)], kernel_size=2, padding=1,
         return_indices=True),
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
    _row("avg_pool3d", [(2, 2, 4, 4, 5)], kernel_size=2),
    _row("avg_pool3d[pad ceil]", [(1, 2, 5, 4, 5)], kernel_size=3, stride=2, padding=1,
         ceil_mode=True, count_include_pad=False),
    _row("avg_pool3d[divisor unbatched]", [(2, 4, 4, 5)], kernel_size=2, divisor_override=3),
    _row("adaptive_avg_pool1d", [(2, 3, 7)], output_size=3),
    _row("adaptive_avg_pool2d", [(2, 2, 5, 7)], output_size=(3, 4)),
    _row("adaptive_avg_pool2d[global]", [(2, 2, 5, 7)], output_size=1),
    _row("adaptive_avg_pool2d[upsample]", [(2, 3, 4)], output_size=(5, None)),
    _row("adaptive_avg_pool3d", [(2, 2, 5, 4, 7)], output_size=(3, 2, 4)),
    _row("adaptive_avg_pool3d[global]", [(2, 3, 4, 5)], output_size=1),
    _row("adaptive_max_pool1d", [(2, 3, 7)], output_size=3, return_indices=True),
    _row("adaptive_max_pool2d", [(2, 2, 5, 7)], output_size=(3, 4)),
    _row("adaptive_max_pool2d[upsample]", [(2, 3, 4)], output_size=(5, None)),
    _row("adaptive_max_pool3d", [(2, 2, 5, 4, 7)], output_size=(3, 2, 4), return_indices=True),
    _row("adaptive_max_pool1d_with_indices", [(2, 3, 7)], output_size=3, return_indices=True),
    _row("adaptive_max_pool2d_with_indices", [(2, 5, 7)], output_size=2, return_indices=True),
    _row("adaptive_max_pool3d_with_indices", [(2, 5, 4, 7)], output_size=2, return_indices=True),
    _row("lp_pool1d", [(2, 3, 7)], norm_type=2, kernel_size=3, stride=2),
    _row("lp_pool2d", [(2, 2, 5, 4)], norm_type=2.0, kernel_size=2, ceil_mode=True),
    _row("lp_pool3d", [(2, 2, 4, 4, 5)], norm_type=2, kernel_size=(2, 1, 2), stride=1),
    _fractional(2, (2, 3, 7, 8), kernel_size=2, output_size=(4, 3)),
    _fractional(2, (3, 9, 8), kernel_size=(3, 2), output_ratio=(0.5, 0.5)),
    _fractional(3, (2, 2, 6, 5, 7), kernel_size=2, output_size=(3, 2, 4)),
    _fractional(3, (2, 6, 5, 7), kernel_size=(2, 3, 2), output_ratio=0.5),
    _unpool(1, (2, 3, 4), (8,)),
    _unpool(2, (2, 3, 2, 3), (4, 6)),
    _unpool(2, (3, 2, 3), (5, 7), output_size=(5, 7)),
    _unpool(3, (2, 2, 2, 2, 3), (4, 4, 6)),
]  # fmt: skip
