"""Op catalogue rows: the selection family (order statistics, unique values, bins, running
extremes, NaN-aware and paired reductions)."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import ErrorInput, OpCase, dim_out_of_range
from tests.torch_oracle import torch

# Extreme-value inputs tile (0, -0.0, 1e30, -1e30, inf, -inf, nan, denormal, 1, -1.5): along
# dim 0 of a (2, 5) input no two entries of a slice are equal, so which of equal entries an
# order statistic picks (PyTorch leaves it unspecified) never decides the gradient's place.
NO_TIES = (2, 5)


def _lower_median(x: np.ndarray, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        flat = np.sort(x.reshape(-1))
        return flat[(flat.size - 1) // 2]
    ordered = np.sort(x, axis=dim)
    picked = np.take(ordered, [(x.shape[dim] - 1) // 2], axis=dim)
    return picked if keepdim else np.squeeze(picked, dim)


def _output(index: int, function: Any) -> Any:
    """A reference for a row with an `output_index`: its value at that place of a tuple."""

    def reference(*args: Any, **kwargs: Any) -> tuple:
        return (None,) * index + (function(*args, **kwargs),)

    return reference


def _kthvalue(x: np.ndarray, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    picked = np.take(np.sort(x, axis=dim), [k - 1], axis=dim)
    return picked if keepdim else np.squeeze(picked, dim)


def _quantile(x: np.ndarray, q: Any, dim: Any = None, keepdim: bool = False, *,
              interpolation: str = "linear") -> Any:  # fmt: skip
    return np.quantile(x, q, axis=dim, keepdims=keepdim, method=interpolation)


def _sorted_and_values(shape: tuple[int, ...], values_shape: tuple[int, ...]):
    """A sequence sorted along its last dim, and values to look up in it (some equal to it)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        sequence = np.sort(rng.integers(-4, 5, shape), axis=-1).astype(dtype)
        values = (rng.integers(-10, 11, values_shape) / 2.0).astype(dtype)
        return [sequence, values]

    return make


def _small_integers(shape: tuple[int, ...], high: int = 4):
    """Float inputs of a few integer values: many ties and runs."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.integers(0, high, shape).astype(dtype)]

    return make


def _counts(size: int, with_weights: bool):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = [rng.integers(0, 6, size)]
        if with_weights:
            arrays.append(rng.uniform(-1.0, 1.0, size).astype(dtype))
        return arrays

    return make


def _three(*shapes: tuple[int, ...]):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.uniform(-2.0, 2.0, shape).astype(dtype) for shape in shapes]

    return make


def _unique_reference(x: np.ndarray, **kwargs: Any) -> np.ndarray:
    return np.unique(x)


def _histc_reference(x: np.ndarray, bins: int, min: float, max: float) -> np.ndarray:
    return np.histogram(x, bins, (min, max))[0].astype(x.dtype)


def _q(*values: float):
    """A q tensor in each library, in the input's dtype (made inside the call)."""

    def lucid_call(x: Any, **kwargs: Any) -> Any:
        return lucid.quantile(x, lucid.tensor(values, dtype=x.dtype), **kwargs)

    def torch_call(x: Any, **kwargs: Any) -> Any:
        return torch.quantile(x, torch.tensor(values, dtype=x.dtype), **kwargs)

    return lucid_call, torch_call


_QUANTILE_Q = _q(0.0, 0.3, 0.5, 1.0)


def _quantile_rows() -> list[OpCase]:
    rows = []
    for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
        rows.append(
            OpCase(
                f"quantile_{interpolation}",
                lucid.quantile,
                torch.quantile,
                _quantile,
                shapes=[(3, 5)],
                kwargs={"q": 0.3, "dim": 1, "interpolation": interpolation},
            )
        )
    return rows


ROWS: list[OpCase] = [
    # -------------------------------------------------------------------------- kthvalue
    OpCase(
        "kthvalue",
        lucid.kthvalue,
        torch.kthvalue,
        _output(0, _kthvalue),
        shapes=[NO_TIES],
        kwargs={"k": 2, "dim": 0},
        output_index=0,
        error_inputs=[
            ErrorInput(
                [(3, 4), 5],
                RuntimeError,
                r"kthvalue\(\): selected number k out of range for dimension 1",
            ),
            ErrorInput(
                [np.zeros((3, 0)), 1],
                IndexError,
                r"kthvalue\(\): Expected reduction dim 1 to have non-zero size",
            ),
            ErrorInput(
                [np.array([True, False]), 1],
                NotImplementedError,
                "\"kthvalue_cpu\" not implemented for 'Bool'",
            ),
            dim_out_of_range(((3, 4), 1), dim=2),
        ],
    ),
    OpCase(
        "kthvalue_keepdim_indices",
        lucid.kthvalue,
        torch.kthvalue,
        shapes=[(3, 4)],
        kwargs={"k": 3, "dim": 1, "keepdim": True},
        output_index=1,
        differentiable=False,
        extremes=False,
    ),
    # ------------------------------------------------------------------ median / nanmedian
    OpCase(
        "median",
        lucid.median,
        torch.median,
        _lower_median,
        shapes=[(3, 4)],
        error_inputs=[
            ErrorInput(
                [np.array([True, False])],
                NotImplementedError,
                "\"median_cpu\" not implemented for 'Bool'",
            ),
        ],
    ),
    OpCase(
        "median_dim0",
        lucid.median,
        torch.median,
        _output(0, _lower_median),
        shapes=[NO_TIES],
        kwargs={"dim": 0},
        output_index=0,
        error_inputs=[
            ErrorInput(
                [np.zeros((3, 0)), 1],
                IndexError,
                r"median\(\): Expected reduction dim 1 to have non-zero size",
            ),
            dim_out_of_range(dim=2),
        ],
    ),
    OpCase(
        "median_dim1_keepdim",
        lucid.median,
        torch.median,
        _output(0, _lower_median),
        shapes=[(3, 4)],
        kwargs={"dim": 1, "keepdim": True},
        output_index=0,
        extremes=False,
    ),
    OpCase(
        "nanmedian",
        lucid.nanmedian,
        torch.nanmedian,
        _lower_median,
        shapes=[(3, 4)],
    ),
    OpCase(
        "nanmedian_dim0",
        lucid.nanmedian,
        torch.nanmedian,
        _output(0, _lower_median),
        shapes=[NO_TIES],
        kwargs={"dim": 0},
        output_index=0,
    ),
    # ------------------------------------------------------------------------------ mode
    # Distinct inputs: the mode of each slice is its smallest value, and a nudge (gradcheck)
    # keeps it so. Ties and runs are checked against PyTorch in test_selection.py; PyTorch's
    # mode places NaN wherever its comparison sort leaves them, so extremes are not compared.
    OpCase(
        "mode",
        lucid.mode,
        torch.mode,
        _output(0, lambda x, dim: np.min(x, axis=dim)),
        shapes=[(3, 4)],
        kwargs={"dim": 1},
        output_index=0,
        extremes=False,
        error_inputs=[
            ErrorInput(
                [np.zeros((3, 0)), 1],
                IndexError,
                r"mode\(\): Expected reduction dim 1 to have non-zero size",
            ),
        ],
    ),
    OpCase(
        "mode_ties",
        lucid.mode,
        torch.mode,
        kwargs={"dim": 1, "keepdim": True},
        make_inputs=_small_integers((3, 6)),
        output_index=1,
        differentiable=False,
        extremes=False,
    ),
    # ----------------------------------------------------------------------------- msort
    OpCase("msort", lucid.msort, torch.msort, lambda x: np.sort(x, axis=0), shapes=[(4, 3)]),
    # --------------------------------------------------------------------- cummax / cummin
    OpCase(
        "cummax",
        lucid.cummax,
        torch.cummax,
        _output(0, lambda x, dim: np.maximum.accumulate(x, axis=dim)),
        shapes=[(3, 4)],
        kwargs={"dim": 1},
        output_index=0,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "cummax_indices",
        lucid.cummax,
        torch.cummax,
        kwargs={"dim": 0},
        make_inputs=_small_integers((5, 3)),
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "cummin",
        lucid.cummin,
        torch.cummin,
        _output(0, lambda x, dim: np.minimum.accumulate(x, axis=dim)),
        shapes=[(3, 4)],
        kwargs={"dim": 0},
        output_index=0,
    ),
    OpCase(
        "cummin_ties",
        lucid.cummin,
        torch.cummin,
        kwargs={"dim": 1},
        make_inputs=_small_integers((3, 5)),
        output_index=1,
        # ties: a nudge moves the running minimum (test_selection.py checks the gradient there)
        differentiable=False,
    ),
    # ---------------------------------------------------------------------- logcumsumexp
    OpCase(
        "logcumsumexp",
        lucid.logcumsumexp,
        torch.logcumsumexp,
        lambda x, dim: np.logaddexp.accumulate(x, axis=dim),
        shapes=[(3, 4)],
        kwargs={"dim": 1},
        error_inputs=[
            ErrorInput(
                [np.array([1, 2]), 0],
                NotImplementedError,
                "\"logcumsumexp_out_cpu\" not implemented for 'Long'",
            ),
        ],
    ),
    OpCase(
        "logcumsumexp_large",
        lucid.logcumsumexp,
        torch.logcumsumexp,
        lambda x, dim: np.logaddexp.accumulate(x, axis=dim),
        shapes=[(5, 2)],
        kwargs={"dim": 0},
        low=300.0,
        high=800.0,
        extremes=False,
    ),
    # --------------------------------------------------------------------------- aminmax
    OpCase(
        "aminmax",
        lucid.aminmax,
        torch.aminmax,
        _output(0, lambda x: np.min(x)),
        shapes=[(3, 4)],
        output_index=0,
        error_inputs=[
            ErrorInput(
                [np.zeros(0)],
                RuntimeError,
                r"aminmax\(\): cannot compute aminmax over an empty dimension as the operation "
                "has no identity",
            ),
            ErrorInput(
                [np.zeros((3, 0))],
                IndexError,
                "aminmax: Expected reduction dim 1 to have non-zero size",
                {"dim": 1},
            ),
        ],
    ),
    OpCase(
        "aminmax_dim_max",
        lucid.aminmax,
        torch.aminmax,
        _output(1, lambda x, dim, keepdim: np.max(x, axis=dim, keepdims=keepdim)),
        shapes=[(3, 4)],
        kwargs={"dim": 1, "keepdim": True},
        output_index=1,
    ),
    # ------------------------------------------------------------------- nansum / nanmean
    OpCase("nansum", lucid.nansum, torch.nansum, np.nansum, shapes=[(3, 4)], sums=True),
    OpCase(
        "nansum_dim",
        lucid.nansum,
        torch.nansum,
        lambda x, dim, keepdim: np.nansum(x, axis=tuple(dim), keepdims=keepdim),
        shapes=[(2, 3, 4)],
        kwargs={"dim": [0, 2], "keepdim": True},
        sums=True,
    ),
    OpCase(
        "nanmean",
        lucid.nanmean,
        torch.nanmean,
        np.nanmean,
        shapes=[(3, 4)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [np.array([1, 2])],
                RuntimeError,
                r"nanmean\(\): expected input to have floating point or complex dtype but "
                "got Long",
            ),
        ],
    ),  # fmt: skip
    OpCase(
        "nanmean_dim",
        lucid.nanmean,
        torch.nanmean,
        lambda x, dim: np.nanmean(x, axis=dim),
        shapes=[(3, 4)],
        kwargs={"dim": 0},
        sums=True,
    ),
    # ----------------------------------------------------------------- var_mean / std_mean
    OpCase(
        "var_mean_var",
        lucid.var_mean,
        torch.var_mean,
        _output(0, lambda x, dim: np.var(x, axis=dim, ddof=1)),
        shapes=[(3, 4)],
        kwargs={"dim": 1},
        output_index=0,
        error_inputs=[
            ErrorInput(
                [np.array([1, 2])],
                RuntimeError,
                "var_mean only support floating point and complex dtypes",
            ),
        ],
    ),
    OpCase(
        "var_mean_mean",
        lucid.var_mean,
        torch.var_mean,
        _output(1, lambda x, **kwargs: np.mean(x, axis=(0, 1), keepdims=True)),
        shapes=[(3, 4)],
        kwargs={"dim": (0, 1), "keepdim": True, "correction": 0},
        output_index=1,
        sums=True,
    ),
    OpCase(
        "std_mean_std",
        lucid.std_mean,
        torch.std_mean,
        _output(0, lambda x: np.std(x, ddof=1)),
        shapes=[(3, 4)],
        output_index=0,
        sums=True,
    ),
    OpCase(
        "std_mean_mean",
        lucid.std_mean,
        torch.std_mean,
        _output(1, lambda x, unbiased: np.mean(x)),
        shapes=[(3, 4)],
        kwargs={"unbiased": False},
        output_index=1,
        sums=True,
    ),
    # ------------------------------------------------------------------------------ diff
    OpCase(
        "diff",
        lucid.diff,
        torch.diff,
        np.diff,
        shapes=[(3, 5)],
        error_inputs=[
            ErrorInput(
                [np.array(1.0)],
                RuntimeError,
                "diff expects input to be at least one-dimensional",
            ),
            ErrorInput([(3, 4)], RuntimeError, "order must be non-negative but got -1", {"n": -1}),
        ],
    ),
    OpCase(
        "diff_n2_dim0",
        lucid.diff,
        torch.diff,
        lambda x, n, dim: np.diff(x, n=n, axis=dim),
        shapes=[(4, 3)],
        kwargs={"n": 2, "dim": 0},
    ),
    OpCase(
        "diff_prepend_append",
        lambda x, before, after: lucid.diff(x, 1, 1, before, after),
        lambda x, before, after: torch.diff(x, 1, 1, before, after),
        lambda x, before, after: np.diff(x, 1, 1, prepend=before, append=after),
        make_inputs=_three((3, 4), (3, 2), (3, 1)),
        error_inputs=[
            ErrorInput(
                [(3, 4), (4,), (3, 1)],
                RuntimeError,
                "diff expects prepend or append to be the same dimension as input",
            ),
        ],
    ),
    # -------------------------------------------------------------------------- quantile
    OpCase(
        "quantile",
        lucid.quantile,
        torch.quantile,
        _quantile,
        shapes=[(3, 4)],
        kwargs={"q": 0.4},
        error_inputs=[
            ErrorInput(
                [np.array([1, 2]), 0.5],
                RuntimeError,
                r"quantile\(\) input tensor must be either float or double dtype",
            ),
            ErrorInput(
                [(3,), 1.5],
                RuntimeError,
                r"quantile\(\) q must be in the range \[0, 1\] but got 1.5",
            ),
            ErrorInput(
                [(3,), (1, 1)], RuntimeError, r"quantile\(\) q must be a scalar or 1D tensor"
            ),
            ErrorInput(
                [(3,), 0.5],
                RuntimeError,
                r"quantile\(\) interpolation must be one of linear, lower, higher, midpoint or "
                "nearest, but got cubic",
                {"interpolation": "cubic"},
            ),
            ErrorInput(
                [np.zeros((0, 3)), 0.5],
                RuntimeError,
                r"quantile\(\) input tensor must be non-empty",
                {"dim": 0},
            ),
        ],
    ),
    *_quantile_rows(),
    OpCase(
        "quantile_q_tensor_keepdim",
        _QUANTILE_Q[0],
        _QUANTILE_Q[1],
        lambda x, dim, keepdim: _quantile(x, [0.0, 0.3, 0.5, 1.0], dim, keepdim),
        shapes=[(3, 4)],
        kwargs={"dim": 0, "keepdim": True},
    ),
    OpCase(
        "quantile_all_keepdim",
        lucid.quantile,
        torch.quantile,
        _quantile,
        shapes=[(2, 3)],
        kwargs={"q": 0.75, "keepdim": True},
    ),
    OpCase(
        "nanquantile",
        lucid.nanquantile,
        torch.nanquantile,
        lambda x, q, dim: np.nanquantile(x, q, axis=dim),
        shapes=[(3, 4)],
        kwargs={"q": 0.6, "dim": 1},
        error_inputs=[
            ErrorInput(
                [(3,), -0.5],
                RuntimeError,
                r"quantile\(\) q must be in the range \[0, 1\] but got -0.5",
            ),
        ],
    ),
    OpCase(
        "nanquantile_midpoint",
        lucid.nanquantile,
        torch.nanquantile,
        lambda x, q, interpolation: np.nanquantile(x, q, method=interpolation),
        shapes=[(3, 4)],
        kwargs={"q": 0.5, "interpolation": "midpoint"},
    ),
    # ---------------------------------------------------- unique (recorded, not differentiable)
    OpCase(
        "unique",
        lucid.unique,
        torch.unique,
        _unique_reference,
        make_inputs=_small_integers((3, 5)),
        differentiable=False,
    ),
    OpCase(
        "unique_inverse",
        lucid.unique,
        torch.unique,
        _output(1, lambda x, **kwargs: np.unique(x, return_inverse=True)[1].reshape(x.shape)),
        make_inputs=_small_integers((3, 5)),
        kwargs={"return_inverse": True, "return_counts": True},
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "unique_counts",
        lucid.unique,
        torch.unique,
        _output(1, lambda x, **kwargs: np.unique(x, return_counts=True)[1]),
        make_inputs=_small_integers((3, 5)),
        kwargs={"return_counts": True},
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "unique_dim",
        lucid.unique,
        torch.unique,
        lambda x, dim: np.unique(x, axis=dim),
        make_inputs=_small_integers((6, 3), high=2),
        kwargs={"dim": 0},
        differentiable=False,
        # PyTorch orders slices holding NaN as its comparison sort happens to leave them
        # (NaN compares false both ways); test_selection.py compares slices with infinities.
        extremes=False,
        error_inputs=[
            ErrorInput(
                [np.zeros((0, 3))],
                RuntimeError,
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied",
                {"dim": 1},
            ),
            ErrorInput(
                [np.array(3.0)],
                IndexError,
                "Dimension specified as 0 but tensor has no dimensions",
                {"dim": 0},
            ),
        ],
    ),
    OpCase(
        "unique_dim_inverse",
        lucid.unique,
        torch.unique,
        make_inputs=_small_integers((3, 6), high=2),
        kwargs={"dim": 1, "return_inverse": True, "return_counts": True},
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "unique_consecutive",
        lucid.unique_consecutive,
        torch.unique_consecutive,
        make_inputs=_small_integers((3, 5), high=2),
        kwargs={"return_counts": True},
        output_index=0,
        differentiable=False,
    ),
    OpCase(
        "unique_consecutive_dim",
        lucid.unique_consecutive,
        torch.unique_consecutive,
        make_inputs=_small_integers((5, 2), high=2),
        kwargs={"dim": 0, "return_inverse": True},
        output_index=1,
        differentiable=False,
    ),
    # ------------------------------------------------------------- searchsorted / bucketize
    OpCase(
        "searchsorted",
        lucid.searchsorted,
        torch.searchsorted,
        lambda sequence, values: np.searchsorted(sequence, values),
        make_inputs=_sorted_and_values((6,), (3, 4)),
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(2, 3), (3, 4)],
                RuntimeError,
                r"boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                r"boundaries tensor and input value tensor must match, but we got boundaries "
                r"tensor \[2, 3\] and input value tensor \[3, 4\]",
            ),
            ErrorInput(
                [(3,), (2,)],
                RuntimeError,
                "side can only be 'left' or 'right' but got up",
                {"side": "up"},
            ),
            ErrorInput(
                [(3,), (2,)],
                RuntimeError,
                "side and right can't be set to opposites, got side of left while right was True",
                {"side": "left", "right": True},
            ),
            ErrorInput(
                [np.array(1.0), (2,)],
                RuntimeError,
                "boundaries tensor should have positive dimension, but got 0 dimension",
            ),
            ErrorInput(
                [(2, 3), 1.0],
                RuntimeError,
                r"input value can be a scalar only when boundaries tensor dimension is 1, but "
                r"we got boundaries tensor dim\(2\) and input value's dim\(0\) numel\(1\)",
            ),
        ],
    ),
    OpCase(
        "searchsorted_batched_right",
        lucid.searchsorted,
        torch.searchsorted,
        make_inputs=_sorted_and_values((3, 7), (3, 5)),
        kwargs={"right": True, "out_int32": True},
        differentiable=False,
    ),
    OpCase(
        "searchsorted_side_right",
        lucid.searchsorted,
        torch.searchsorted,
        lambda sequence, values, side: np.searchsorted(sequence, values, side),
        make_inputs=_sorted_and_values((9,), (4,)),
        kwargs={"side": "right"},
        differentiable=False,
    ),
    OpCase(
        "bucketize",
        lucid.bucketize,
        torch.bucketize,
        lambda values, boundaries: np.searchsorted(boundaries, values),
        make_inputs=lambda rng, dtype: _sorted_and_values((5,), (3, 4))(rng, dtype)[::-1],
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(1,), (2, 3)],
                RuntimeError,
                r"boundaries tensor must be 1 dimension, but got dim\(2\)",
            ),
        ],
    ),
    OpCase(
        "bucketize_right",
        lucid.bucketize,
        torch.bucketize,
        lambda values, boundaries, right: np.searchsorted(boundaries, values, "right"),
        make_inputs=lambda rng, dtype: _sorted_and_values((5,), (3, 4))(rng, dtype)[::-1],
        kwargs={"right": True},
        differentiable=False,
    ),
    # ----------------------------------------------------------- histc / histogram / bincount
    OpCase(
        "histc",
        lucid.histc,
        torch.histc,
        _histc_reference,
        shapes=[(4, 5)],
        kwargs={"bins": 7, "min": -1.5, "max": 1.0},
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [np.array([1, 2])],
                NotImplementedError,
                "\"histogram_cpu\" not implemented for 'Long'",
            ),
            ErrorInput(
                [(3,)],
                RuntimeError,
                "bins must be > 0, but got 0 for dimension 0",
                {"bins": 0},
            ),
            ErrorInput(
                [(3,)],
                RuntimeError,
                "lucid.histc: max must be larger than min",
                {"min": 2, "max": 1},
            ),
            ErrorInput(
                [np.array([1.0, np.inf])],
                RuntimeError,
                r"lucid.histc: range of \[1, inf\] is not finite",
            ),
        ],
    ),
    OpCase(
        "histc_data_range",
        lucid.histc,
        torch.histc,
        shapes=[(30,)],
        kwargs={"bins": 6},
        differentiable=False,
        extremes=False,
    ),
    OpCase(
        "histogram",
        lucid.histogram,
        torch.histogram,
        _output(0, lambda x, bins: np.histogram(x, bins)[0].astype(x.dtype)),
        shapes=[(30,)],
        kwargs={"bins": 5},
        output_index=0,
        differentiable=False,
        extremes=False,
    ),
    OpCase(
        "histogram_edges",
        lucid.histogram,
        torch.histogram,
        _output(1, lambda x, bins, range: np.histogram(x, bins, range)[1].astype(x.dtype)),
        shapes=[(30,)],
        kwargs={"bins": 4, "range": (-1.0, 1.5)},
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "histogram_weight_density",
        lambda x, w: lucid.histogram(x, 4, weight=w, density=True),
        lambda x, w: torch.histogram(x, 4, weight=w, density=True),
        _output(0, lambda x, w: np.histogram(x, 4, weights=w, density=True)[0].astype(x.dtype)),
        make_inputs=_three((20,), (20,)),
        output_index=0,
        differentiable=False,
        extremes=False,
    ),
    OpCase(
        "bincount",
        lucid.bincount,
        torch.bincount,
        np.bincount,
        make_inputs=_counts(12, False),
        kwargs={"minlength": 8},
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [np.array([1.0, 2.0])],
                NotImplementedError,
                "\"bincount_cpu\" not implemented for 'Double'",
            ),
            ErrorInput(
                [np.array([-1, 2])],
                RuntimeError,
                "bincount only supports 1-d non-negative integral inputs.",
            ),
            ErrorInput(
                [np.array([1, 2])], RuntimeError, "minlength should be >= 0", {"minlength": -1}
            ),
            ErrorInput(
                [np.array([1, 2]), np.array([1.0])],
                RuntimeError,
                "weights should be 1-d and have the same length as input",
            ),
        ],
    ),
    OpCase(
        "bincount_weights",
        lucid.bincount,
        torch.bincount,
        lambda x, w: np.bincount(x, w).astype(w.dtype),
        make_inputs=_counts(12, True),
        differentiable=False,
    ),
]
