"""Float32 working precision for the 2-byte floats (float16, bfloat16).

NumPy has no BLAS and no vectorised kernels for these types (ml_dtypes' bfloat16 ufuncs run
an element at a time), and PyTorch's CPU kernels compute them in float32 and round the result
once. Ops that accumulate (norms, softmax, losses, contractions) or chain several ufuncs
widen their inputs with `working` and narrow their result with `rounded`.
"""

from __future__ import annotations

import numpy as np

from lucid._core.dtypes import FLOAT_KINDS

_FLOAT32 = np.dtype(np.float32)


def is_low_precision(dtype: np.dtype) -> bool:
    """Whether `dtype` is float16 or bfloat16."""
    return dtype.itemsize == 2 and dtype.kind in FLOAT_KINDS


def working(array: np.ndarray) -> np.ndarray:
    """`array` as float32 when it is float16 or bfloat16; any other array unchanged."""
    dtype = array.dtype
    if dtype.itemsize == 2 and dtype.kind in FLOAT_KINDS:
        return array.astype(_FLOAT32)
    return array


def working_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype an op computes in for inputs of `dtype`."""
    if dtype.itemsize == 2 and dtype.kind in FLOAT_KINDS:
        return _FLOAT32
    return dtype


def rounded(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`result` in `dtype`: one rounding from the working precision (no copy when equal)."""
    if result.dtype == dtype:
        return result
    return np.asarray(result).astype(dtype)
