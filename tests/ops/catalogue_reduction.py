"""Op catalogue rows: the reduction family."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from tests.ops.op_catalogue import BROADCAST_MISMATCH, ErrorInput, OpCase, dim_out_of_range
from tests.torch_oracle import torch


def _numpy(function: Callable[..., Any]) -> Callable[..., Any]:
    """A NumPy reduction called with PyTorch's argument names (dim, keepdim)."""

    def reference(x: np.ndarray, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        axis = tuple(dim) if isinstance(dim, list) else dim
        return function(x, axis=axis, keepdims=keepdim, **kwargs)

    return reference


def _distinct(*shapes: tuple[int, ...], scale: float = 0.25):
    """Inputs without ties (a shuffled, scaled range), so max/min have one winner per slice."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = []
        for shape in shapes:
            size = int(np.prod(shape))
            values = (rng.permutation(size) - size / 2) * scale
            arrays.append(values.reshape(shape).astype(dtype))
        return arrays

    return make


def _distinct_magnitudes(*shapes: tuple[int, ...]):
    """Inputs whose absolute values differ, so the inf-norms have one winner per slice."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        arrays = []
        for shape in shapes:
            size = int(np.prod(shape))
            magnitudes = (rng.permutation(size) + 1) * 0.25
            signs = rng.choice([-1.0, 1.0], size)
            arrays.append((magnitudes * signs).reshape(shape).astype(dtype))
        return arrays

    return make


def _with_zeros(shape: tuple[int, ...], zeros: list[tuple[int, ...]]):
    """Uniform inputs in [0.5, 1.5) with exact zeros at `zeros` (prod/cumprod special cases)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        array = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
        for index in zeros:
            array[index] = 0.0
        return [array.astype(dtype)]

    return make


def _sparse(shape: tuple[int, ...]):
    """Inputs with about half exact zeros, for all/any/count_nonzero."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        values = rng.uniform(-2.0, 2.0, shape) * rng.integers(0, 2, shape)
        return [values.astype(dtype)]

    return make


def _values_indices(function: Callable[..., Any], arg_function: Callable[..., Any]):
    def reference(x: np.ndarray, dim: int, keepdim: bool = False) -> tuple[np.ndarray, ...]:
        return (
            function(x, axis=dim, keepdims=keepdim),
            arg_function(x, axis=dim, keepdims=keepdim),
        )

    return reference


def _logsumexp(x: np.ndarray, dim: Any, keepdim: bool = False) -> np.ndarray:
    axis = tuple(dim) if isinstance(dim, list) else dim
    peak = np.max(x, axis=axis, keepdims=True)
    result = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return result if keepdim else np.squeeze(result, axis=axis)


def _vector_norm(ord: float, dim: Any = None, keepdim: bool = False):
    def reference(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        magnitude = np.abs(x)
        if ord == np.inf:
            return np.max(magnitude, axis=dim, keepdims=keepdim)
        if ord == -np.inf:
            return np.min(magnitude, axis=dim, keepdims=keepdim)
        return np.sum(magnitude**ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)

    return reference


def _nuclear_norm(x: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    return np.linalg.norm(x, "nuc")


def _variance(function: Callable[..., Any], ddof: int):
    def reference(x: np.ndarray, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        return function(x, axis=dim, ddof=ddof, keepdims=keepdim)

    return reference


# Why gradient rows skip the float16 extreme-value column.
_GRADIENT_FLOAT16 = (
    "PyTorch takes the differences of a float16 input in float16, where they overflow past "
    "65504, before scaling them; lucid scales and rounds once"
)

ROWS: list[OpCase] = [
    # ------------------------------------------------------------------------ sum
    OpCase(
        "sum",
        lucid.sum,
        torch.sum,
        np.sum,
        sums=True,
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput([(3, 4)], IndexError, r"but got -3\)", {"dim": -3}),
            ErrorInput(
                [(3, 4)],
                RuntimeError,
                "dim 0 appears multiple times in the list of dims",
                {"dim": (0, 0)},
            ),
        ],
    ),
    OpCase("sum_dim0", lucid.sum, torch.sum, _numpy(np.sum), kwargs={"dim": 0}, sums=True),
    OpCase(
        "sum_dim1_keepdim",
        lucid.sum,
        torch.sum,
        _numpy(np.sum),
        kwargs={"dim": 1, "keepdim": True},
        sums=True,
    ),
    OpCase(
        "sum_dims_tuple",
        lucid.sum,
        torch.sum,
        _numpy(np.sum),
        shapes=[(2, 3, 4)],
        kwargs={"dim": (0, 2)},
        sums=True,
    ),
    OpCase(
        "sum_negative_dim_keepdim",
        lucid.sum,
        torch.sum,
        _numpy(np.sum),
        shapes=[(2, 3, 4)],
        kwargs={"dim": -2, "keepdim": True},
        sums=True,
    ),
    # An empty dim list reduces every dim, as in PyTorch (NumPy's axis=() reduces none).
    OpCase(
        "sum_empty_dim_list",
        lucid.sum,
        torch.sum,
        lambda x, dim: np.sum(x),
        kwargs={"dim": []},
        sums=True,
    ),
    OpCase(
        "sum_dtype_float64",
        lambda x: lucid.sum(x, 1, dtype=lucid.float64),
        lambda x: torch.sum(x, 1, dtype=torch.float64),
        lambda x: np.sum(x, axis=1, dtype=np.float64),
        sums=True,
    ),
    OpCase("sum_scalar", lucid.sum, torch.sum, np.sum, shapes=[()], sums=True),
    # ----------------------------------------------------------------------- mean
    OpCase(
        "mean",
        lucid.mean,
        torch.mean,
        np.mean,
        sums=True,
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [np.arange(12).reshape(3, 4)],
                RuntimeError,
                r"mean\(\): could not infer output dtype. Input dtype must be "
                r"either a floating point or complex dtype. Got: Long",
            ),
        ],
    ),
    OpCase("mean_dim1", lucid.mean, torch.mean, _numpy(np.mean), kwargs={"dim": 1}, sums=True),
    OpCase(
        "mean_dim0_keepdim",
        lucid.mean,
        torch.mean,
        _numpy(np.mean),
        kwargs={"dim": 0, "keepdim": True},
        sums=True,
    ),
    OpCase(
        "mean_dims_tuple",
        lucid.mean,
        torch.mean,
        _numpy(np.mean),
        shapes=[(2, 3, 4)],
        kwargs={"dim": (-1, 0)},
        sums=True,
    ),
    OpCase(
        "mean_dtype_float64",
        lambda x: lucid.mean(x, dtype=lucid.float64),
        lambda x: torch.mean(x, dtype=torch.float64),
        lambda x: np.mean(x, dtype=np.float64),
        sums=True,
    ),
    # ----------------------------------------------------------------------- prod
    OpCase(
        "prod",
        lucid.prod,
        torch.prod,
        np.prod,
        low=0.5,
        high=1.5,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase("prod_dim1", lucid.prod, torch.prod, _numpy(np.prod), kwargs={"dim": 1}),
    OpCase(
        "prod_dim0_keepdim",
        lucid.prod,
        torch.prod,
        _numpy(np.prod),
        kwargs={"dim": 0, "keepdim": True},
    ),
    OpCase(
        "prod_one_zero",
        lucid.prod,
        torch.prod,
        np.prod,
        make_inputs=_with_zeros((3, 4), [(1, 2)]),
    ),
    OpCase(
        "prod_dim1_zeros",
        lucid.prod,
        torch.prod,
        _numpy(np.prod),
        kwargs={"dim": 1},
        make_inputs=_with_zeros((3, 4), [(0, 1), (1, 0), (1, 3), (2, 0), (2, 1), (2, 2)]),
    ),
    # ------------------------------------------------------------------ var / std
    OpCase(
        "var",
        lucid.var,
        torch.var,
        _variance(np.var, 1),
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [np.arange(12).reshape(3, 4)],
                RuntimeError,
                "std and var only support floating point and complex dtypes",
            ),
        ],
    ),
    OpCase("var_dim1", lucid.var, torch.var, _variance(np.var, 1), kwargs={"dim": 1}),
    OpCase(
        "var_dim0_keepdim_biased",
        lucid.var,
        torch.var,
        _variance(np.var, 0),
        kwargs={"dim": 0, "unbiased": False, "keepdim": True},
    ),
    OpCase(
        "var_dims_tuple_correction0",
        lucid.var,
        torch.var,
        _variance(np.var, 0),
        shapes=[(2, 3, 4)],
        kwargs={"dim": (0, 2), "correction": 0},
    ),
    OpCase(
        "var_correction2",
        lucid.var,
        torch.var,
        _variance(np.var, 2),
        kwargs={"dim": 1, "correction": 2},
    ),
    OpCase(
        "std",
        lucid.std,
        torch.std,
        _variance(np.std, 1),
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [np.arange(12).reshape(3, 4)],
                RuntimeError,
                "std and var only support floating point and complex dtypes",
            ),
        ],
    ),
    OpCase("std_dim1", lucid.std, torch.std, _variance(np.std, 1), kwargs={"dim": 1}),
    OpCase(
        "std_dim0_keepdim_biased",
        lucid.std,
        torch.std,
        _variance(np.std, 0),
        kwargs={"dim": 0, "unbiased": False, "keepdim": True},
    ),
    OpCase(
        "std_dims_tuple_correction0",
        lucid.std,
        torch.std,
        _variance(np.std, 0),
        shapes=[(2, 3, 4)],
        kwargs={"dim": (0, 2), "correction": 0},
    ),
    # ------------------------------------------------------------------ max / min
    OpCase(
        "max",
        lucid.max,
        torch.max,
        np.max,
        make_inputs=_distinct((3, 4)),
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [(0,)],
                RuntimeError,
                r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0",
            ),
        ],
    ),
    OpCase(
        "max_dim1",
        lucid.max,
        torch.max,
        _values_indices(np.max, np.argmax),
        kwargs={"dim": 1},
        make_inputs=_distinct((3, 4)),
        output_index=0,
    ),
    OpCase(
        "max_dim0_keepdim",
        lucid.max,
        torch.max,
        _values_indices(np.max, np.argmax),
        kwargs={"dim": 0, "keepdim": True},
        make_inputs=_distinct((3, 4)),
        output_index=0,
    ),
    OpCase(
        "max_dim1_indices",
        lucid.max,
        torch.max,
        _values_indices(np.max, np.argmax),
        kwargs={"dim": 1},
        make_inputs=_distinct((3, 4)),
        output_index=1,
        differentiable=False,
    ),
    OpCase(
        "min",
        lucid.min,
        torch.min,
        np.min,
        make_inputs=_distinct((3, 4)),
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "min_dim1",
        lucid.min,
        torch.min,
        _values_indices(np.min, np.argmin),
        kwargs={"dim": 1},
        make_inputs=_distinct((3, 4)),
        output_index=0,
    ),
    OpCase(
        "min_dim_negative_keepdim",
        lucid.min,
        torch.min,
        _values_indices(np.min, np.argmin),
        kwargs={"dim": -2, "keepdim": True},
        make_inputs=_distinct((2, 3, 4)),
        output_index=0,
    ),
    OpCase(
        "min_dim0_indices",
        lucid.min,
        torch.min,
        _values_indices(np.min, np.argmin),
        kwargs={"dim": 0},
        make_inputs=_distinct((3, 4)),
        output_index=1,
        differentiable=False,
    ),
    # ---------------------------------------------------------------- amax / amin
    OpCase(
        "amax",
        lucid.amax,
        torch.amax,
        np.max,
        make_inputs=_distinct((3, 4)),
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [(0,)],
                RuntimeError,
                r"amax\(\): Expected reduction dim to be specified for input.numel\(\) == 0",
            ),
        ],
    ),
    OpCase(
        "amax_dim1",
        lucid.amax,
        torch.amax,
        _numpy(np.max),
        kwargs={"dim": 1},
        make_inputs=_distinct((3, 4)),
    ),
    OpCase(
        "amax_dims_tuple_keepdim",
        lucid.amax,
        torch.amax,
        _numpy(np.max),
        kwargs={"dim": (0, 2), "keepdim": True},
        make_inputs=_distinct((2, 3, 4)),
    ),
    OpCase(
        "amin",
        lucid.amin,
        torch.amin,
        np.min,
        make_inputs=_distinct((3, 4)),
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "amin_dim0",
        lucid.amin,
        torch.amin,
        _numpy(np.min),
        kwargs={"dim": 0},
        make_inputs=_distinct((3, 4)),
    ),
    OpCase(
        "amin_dims_tuple",
        lucid.amin,
        torch.amin,
        _numpy(np.min),
        kwargs={"dim": (-1, 0)},
        make_inputs=_distinct((2, 3, 4)),
    ),
    # ------------------------------------------------------------ argmax / argmin
    OpCase(
        "argmax",
        lucid.argmax,
        torch.argmax,
        np.argmax,
        differentiable=False,
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [(0,)],
                IndexError,
                r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0",
            ),
        ],
    ),
    OpCase(
        "argmax_dim1_keepdim",
        lucid.argmax,
        torch.argmax,
        _numpy(np.argmax),
        kwargs={"dim": 1, "keepdim": True},
        differentiable=False,
    ),
    OpCase(
        "argmin",
        lucid.argmin,
        torch.argmin,
        np.argmin,
        differentiable=False,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "argmin_dim0",
        lucid.argmin,
        torch.argmin,
        _numpy(np.argmin),
        kwargs={"dim": 0},
        differentiable=False,
    ),
    # ------------------------------------------------------------------ logsumexp
    OpCase(
        "logsumexp_dim1",
        lucid.logsumexp,
        torch.logsumexp,
        _logsumexp,
        kwargs={"dim": 1},
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "logsumexp_dim0_keepdim",
        lucid.logsumexp,
        torch.logsumexp,
        _logsumexp,
        kwargs={"dim": 0, "keepdim": True},
    ),
    OpCase(
        "logsumexp_dims_tuple",
        lucid.logsumexp,
        torch.logsumexp,
        _logsumexp,
        shapes=[(2, 3, 4)],
        kwargs={"dim": (0, 2)},
    ),
    OpCase(
        "logsumexp_large",
        lucid.logsumexp,
        torch.logsumexp,
        _logsumexp,
        kwargs={"dim": 1},
        low=500.0,
        high=1000.0,
    ),
    # ----------------------------------------------------------------------- norm
    OpCase(
        "norm",
        lucid.norm,
        torch.norm,
        _vector_norm(2),
        error_inputs=[
            dim_out_of_range(dim=2),
            ErrorInput(
                [np.arange(12).reshape(3, 4)],
                RuntimeError,
                "linalg.vector_norm: Expected a floating point or "
                "complex tensor as input. Got Long",
            ),
        ],
    ),
    OpCase(
        "norm_dim1_keepdim",
        lucid.norm,
        torch.norm,
        _vector_norm(2, 1, True),
        kwargs={"dim": 1, "keepdim": True},
    ),
    OpCase(
        "norm_fro_dims",
        lucid.norm,
        torch.norm,
        _vector_norm(2, (0, 2)),
        shapes=[(2, 3, 4)],
        kwargs={"p": "fro", "dim": (0, 2)},
    ),
    OpCase("norm_p1_dim0", lucid.norm, torch.norm, _vector_norm(1, 0), kwargs={"p": 1, "dim": 0}),
    OpCase("norm_p3", lucid.norm, torch.norm, _vector_norm(3), kwargs={"p": 3}),
    OpCase(
        "norm_p1_5_dim1",
        lucid.norm,
        torch.norm,
        _vector_norm(1.5, 1),
        kwargs={"p": 1.5, "dim": 1},
    ),
    OpCase(
        "norm_p0_5",
        lucid.norm,
        torch.norm,
        _vector_norm(0.5),
        kwargs={"p": 0.5},
        make_inputs=_with_zeros((3, 4), []),
    ),
    OpCase(
        "norm_negative_p",
        lucid.norm,
        torch.norm,
        _vector_norm(-2, 1),
        kwargs={"p": -2, "dim": 1},
        make_inputs=_with_zeros((3, 4), []),
    ),
    OpCase(
        "norm_inf_dim1",
        lucid.norm,
        torch.norm,
        _vector_norm(np.inf, 1),
        kwargs={"p": float("inf"), "dim": 1},
        make_inputs=_distinct_magnitudes((3, 4)),
    ),
    OpCase(
        "norm_negative_inf",
        lucid.norm,
        torch.norm,
        _vector_norm(-np.inf),
        kwargs={"p": float("-inf")},
        make_inputs=_distinct_magnitudes((3, 4)),
    ),
    OpCase(
        "norm_p0",
        lucid.norm,
        torch.norm,
        lambda x, p, dim: np.count_nonzero(x, axis=dim).astype(x.dtype),
        kwargs={"p": 0, "dim": 1},
        make_inputs=_sparse((3, 4)),
    ),
    OpCase(
        "norm_nuc",
        lucid.norm,
        torch.norm,
        _nuclear_norm,
        kwargs={"p": "nuc"},
        gradgrad=False,
    ),
    # ----------------------------------------------------------------------- dist
    OpCase(
        "dist",
        lucid.dist,
        torch.dist,
        lambda x, y: np.sqrt(np.sum((x - y) ** 2)),
        shapes=[(3, 4), (3, 4)],
        error_inputs=[BROADCAST_MISMATCH],
    ),
    OpCase(
        "dist_p1_broadcast",
        lucid.dist,
        torch.dist,
        lambda x, y, p: np.sum(np.abs(x - y)),
        shapes=[(3, 4), (4,)],
        kwargs={"p": 1},
    ),
    OpCase(
        "dist_p3",
        lucid.dist,
        torch.dist,
        lambda x, y, p: np.sum(np.abs(x - y) ** 3) ** (1 / 3),
        shapes=[(3, 4), (3, 1)],
        kwargs={"p": 3},
    ),
    OpCase(
        "dist_inf",
        lucid.dist,
        torch.dist,
        lambda x, y, p: np.max(np.abs(x - y)),
        kwargs={"p": float("inf")},
        make_inputs=lambda rng, dtype: [
            *_distinct_magnitudes((3, 4))(rng, dtype),
            np.zeros(4, dtype),
        ],
    ),
    # ------------------------------------------------------------ cumsum / cumprod
    OpCase(
        "cumsum_dim0",
        lucid.cumsum,
        torch.cumsum,
        lambda x, dim: np.cumsum(x, axis=dim),
        kwargs={"dim": 0},
        sums=True,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "cumsum_dim_negative",
        lucid.cumsum,
        torch.cumsum,
        lambda x, dim: np.cumsum(x, axis=dim),
        shapes=[(2, 3, 4)],
        kwargs={"dim": -1},
        sums=True,
    ),
    OpCase(
        "cumprod_dim1",
        lucid.cumprod,
        torch.cumprod,
        lambda x, dim: np.cumprod(x, axis=dim),
        kwargs={"dim": 1},
    ),
    OpCase(
        "cumprod_dim0_zeros",
        lucid.cumprod,
        torch.cumprod,
        lambda x, dim: np.cumprod(x, axis=dim),
        kwargs={"dim": 0},
        make_inputs=_with_zeros((4, 3), [(1, 0), (0, 1), (2, 1), (3, 2)]),
    ),
    # ------------------------------------------------- all / any / count_nonzero
    OpCase(
        "all",
        lucid.all,
        torch.all,
        np.all,
        make_inputs=_sparse((3, 4)),
        differentiable=False,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "all_dim1_keepdim",
        lucid.all,
        torch.all,
        _numpy(np.all),
        kwargs={"dim": 1, "keepdim": True},
        make_inputs=_sparse((3, 4)),
        differentiable=False,
    ),
    OpCase(
        "any",
        lucid.any,
        torch.any,
        np.any,
        make_inputs=_sparse((3, 4)),
        differentiable=False,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "any_dims_tuple",
        lucid.any,
        torch.any,
        _numpy(np.any),
        kwargs={"dim": (0, 2)},
        make_inputs=_sparse((2, 3, 4)),
        differentiable=False,
    ),
    OpCase(
        "count_nonzero",
        lucid.count_nonzero,
        torch.count_nonzero,
        np.count_nonzero,
        make_inputs=_sparse((3, 4)),
        differentiable=False,
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    OpCase(
        "count_nonzero_dim0",
        lucid.count_nonzero,
        torch.count_nonzero,
        lambda x, dim: np.count_nonzero(x, axis=dim),
        kwargs={"dim": 0},
        make_inputs=_sparse((3, 4)),
        differentiable=False,
    ),
    # ------------------------------- integration, covariance, finite differences
    OpCase(
        "trapezoid",
        lucid.trapezoid,
        torch.trapezoid,
        lambda a: np.trapezoid(a, axis=-1),
        sums=True,
        error_inputs=[
            ErrorInput([(3, 4), 2.0], TypeError, r"trapezoid\(\) received an invalid combination"),
            ErrorInput(
                [(3, 4), (5,)],
                RuntimeError,
                "trapezoid: There must be one `x` value for each sample point",
            ),
        ],
    ),
    OpCase(
        "trapezoid_dx",
        lambda y: lucid.trapezoid(y, dx=0.5, dim=0),
        lambda y: torch.trapezoid(y, dx=0.5, dim=0),
        lambda a: np.trapezoid(a, dx=0.5, axis=0),
        sums=True,
    ),
    OpCase(
        "trapezoid_x",
        lucid.trapezoid,
        torch.trapezoid,
        lambda a, x: np.trapezoid(a, x, axis=-1),
        shapes=[(3, 4), (4,)],
        sums=True,
    ),
    OpCase(
        "trapezoid_x_same_shape",
        lambda y, x: lucid.trapezoid(y, x, dim=0),
        lambda y, x: torch.trapezoid(y, x, dim=0),
        lambda a, x: np.trapezoid(a, x, axis=0),
        shapes=[(3, 4), (3, 4)],
        sums=True,
    ),
    OpCase(
        "trapz",
        lucid.trapz,
        torch.trapz,
        lambda a, x: np.trapezoid(a, x, axis=-1),
        shapes=[(3, 4), (4,)],
        sums=True,
    ),
    OpCase(
        "cumulative_trapezoid",
        lambda y: lucid.cumulative_trapezoid(y, dx=2.0),
        lambda y: torch.cumulative_trapezoid(y, dx=2.0),
        lambda a: np.cumsum((a[:, 1:] + a[:, :-1]) * 1.0, axis=1),
        sums=True,
    ),
    OpCase(
        "cumulative_trapezoid_x",
        lambda y, x: lucid.cumulative_trapezoid(y, x, dim=0),
        lambda y, x: torch.cumulative_trapezoid(y, x, dim=0),
        lambda a, x: np.cumsum((a[1:] + a[:-1]) * np.diff(x)[:, None] / 2, axis=0),
        shapes=[(3, 4), (3,)],
        sums=True,
    ),
    OpCase("cov", lucid.cov, torch.cov, np.cov),
    OpCase("cov_vector", lucid.cov, torch.cov, np.cov, shapes=[(5,)], sums=True),
    OpCase(
        "cov_weights",
        lambda x, aweights: lucid.cov(
            x, correction=2, fweights=lucid.tensor([1, 2, 1, 3]), aweights=aweights
        ),
        lambda x, aweights: torch.cov(
            x, correction=2, fweights=torch.tensor([1, 2, 1, 3]), aweights=aweights
        ),
        lambda a, w: np.cov(a, ddof=2, fweights=[1, 2, 1, 3], aweights=w),
        shapes=[(3, 4), (4,)],
        low=0.5,
    ),
    OpCase(
        "corrcoef",
        lucid.corrcoef,
        torch.corrcoef,
        np.corrcoef,
        sums=True,
        float16_extremes_skip=(
            "the extreme-value check bounds its sums by torch's result on |inputs|, which "
            "overflows in float16 and, divided by the overflowed deviations, is NaN"
        ),
    ),
    *[
        OpCase(
            f"gradient_{label}",
            lambda x, o=options, p=part: lucid.gradient(x, **o)[p],
            lambda x, o=options, p=part: torch.gradient(x, **o)[p],
            reference,
            shapes=[(4, 5)],
            float16_extremes_skip=_GRADIENT_FLOAT16 if label == "spacing" else "",
        )
        for label, options, part, reference in (
            ("default", {}, 0, lambda a: np.gradient(a, axis=0)),
            ("spacing", {"spacing": 0.5}, 1, lambda a: np.gradient(a, 0.5, axis=1)),
            (
                "edge_order_2",
                {"dim": 1, "edge_order": 2},
                0,
                lambda a: np.gradient(a, axis=1, edge_order=2),
            ),
            (
                "spacings",
                {"spacing": [2.0, 0.5], "edge_order": 2},
                0,
                lambda a: np.gradient(a, 2.0, axis=0, edge_order=2),
            ),
        )
    ],
    OpCase(
        "gradient_coordinates",
        lambda x: lucid.gradient(
            x, spacing=(lucid.tensor([0.0, 1.0, 3.0, 3.5], dtype=lucid.float64),), dim=0
        )[0],
        lambda x: torch.gradient(
            x, spacing=(torch.tensor([0.0, 1.0, 3.0, 3.5], dtype=torch.float64),), dim=0
        )[0],
        lambda a: np.gradient(a, [0.0, 1.0, 3.0, 3.5], axis=0),
        shapes=[(4, 5)],
        float16_extremes_skip=_GRADIENT_FLOAT16,
    ),
    OpCase(
        "gradient_coordinates_edge_order_2",
        lambda x: lucid.gradient(
            x,
            spacing=(lucid.tensor([0.0, 1.0, 3.0, 3.5, 5.0], dtype=lucid.float64),),
            dim=1,
            edge_order=2,
        )[0],
        lambda x: torch.gradient(
            x,
            spacing=(torch.tensor([0.0, 1.0, 3.0, 3.5, 5.0], dtype=torch.float64),),
            dim=1,
            edge_order=2,
        )[0],
        lambda a: np.gradient(a, [0.0, 1.0, 3.0, 3.5, 5.0], axis=1, edge_order=2),
        shapes=[(4, 5)],
    ),
    OpCase(
        "renorm",
        lambda x: lucid.renorm(x, 2, 0, 1.5),
        lambda x: torch.renorm(x, 2, 0, 1.5),
        sums=True,
    ),
    OpCase(
        "renorm_p1",
        lambda x: x.renorm(1, 1, 2.0),
        lambda x: x.renorm(1, 1, 2.0),
        sums=True,
    ),
    OpCase(
        "cov_errors",
        lucid.cov,
        torch.cov,
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(2, 3, 4)],
                RuntimeError,
                "cov\\(\\): expected input to have two or fewer dimensions but got an input with 3 "
                "dimensions",
            ),
        ],
    ),
    OpCase(
        "gradient_errors",
        lucid.gradient,
        torch.gradient,
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(1,)],
                RuntimeError,
                "lucid.gradient expected each dimension size to be at least edge_order\\+1",
            ),
        ],
    ),
    OpCase(
        "renorm_errors",
        lucid.renorm,
        torch.renorm,
        differentiable=False,
        error_inputs=[
            ErrorInput(
                [(3, 4), -1, 0, 1.0], RuntimeError, "renorm: non-positive-norm not supported"
            ),
            ErrorInput(
                [(3,), 2, 0, 1.0],
                RuntimeError,
                "renorm: input needs at least 2 dimensions, got 1 dimensions",
            ),
        ],
    ),
]
