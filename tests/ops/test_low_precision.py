"""float16 and bfloat16 as PyTorch's CPU build computes them: each op in float32, rounded once.

The op catalogue checks every row of the covered families against torch in both dtypes
(tests/ops/test_op_catalogue.py, LOW_PRECISION_FAMILIES); these tests name the rules.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

pytestmark = pytest.mark.skipif(
    lucid.bfloat16.numpy_dtype is None, reason="bfloat16 needs the ml_dtypes package"
)
LOW = [lucid.float16, lucid.bfloat16]
low_dtypes = pytest.mark.parametrize("dtype", LOW, ids=["float16", "bfloat16"])


def _rounded(values: np.ndarray, dtype: lucid.dtype) -> np.ndarray:
    """float32 values rounded to `dtype`, as float32 (which holds every such value)."""
    return np.asarray(values, np.float32).astype(dtype.numpy_dtype).astype(np.float32)


def _values(tensor: lucid.Tensor) -> np.ndarray:
    return tensor.float().numpy()


def _torch_dtype(dtype: lucid.dtype):
    return getattr(torch, dtype.name)


@low_dtypes
def test_python_scalar_keeps_the_dtype_and_enters_at_float32(dtype):
    x = lucid.tensor([3.0, 100.0]).to(dtype)
    for result, expected in (
        (x * 1.004, _values(x) * np.float32(1.004)),
        (x + 0.3, _values(x) + np.float32(0.3)),
        (x / 1.004, _values(x) / np.float32(1.004)),
        (1.5 - x, np.float32(1.5) - _values(x)),
    ):
        assert result.dtype == dtype
        np.testing.assert_array_equal(_values(result), _rounded(expected, dtype))
    # bfloat16(3.0) * 1.004 is 3.012 rounded (3.0156), not 3.0 * bfloat16(1.004) = 3.0
    assert (lucid.tensor([3.0], dtype=lucid.bfloat16) * 1.004).item() == 3.015625


@low_dtypes
def test_zero_dim_float64_operand_enters_at_float32(dtype):
    x = lucid.tensor([3.0, 100.0]).to(dtype)
    result = x * lucid.tensor(1.004, dtype=lucid.float64)
    assert result.dtype == dtype
    np.testing.assert_array_equal(_values(result), _rounded(_values(x) * np.float32(1.004), dtype))


@low_dtypes
def test_pointwise_ops_keep_the_dtype(dtype):
    x = lucid.tensor([0.25, 1.5, -2.0]).to(dtype)
    for result in (x.exp(), x.abs(), lucid.where(x > 0, x, 1.004), x.clamp(-1.0, 1.0), -x):
        assert result.dtype == dtype
    assert (x > 0.2).dtype == lucid.bool


@low_dtypes
def test_factories_make_leaves_that_require_grad(dtype):
    for leaf in (
        lucid.ones(2, dtype=dtype, requires_grad=True),
        lucid.zeros(2, 3, dtype=dtype, requires_grad=True),
        lucid.randn(4, dtype=dtype, requires_grad=True),
        lucid.tensor([1.0, 2.0], dtype=dtype, requires_grad=True),
    ):
        assert leaf.dtype == dtype and leaf.requires_grad and leaf.is_leaf
    x = lucid.ones(3, dtype=dtype, requires_grad=True)
    (x * 2.0).sum().backward()
    assert x.grad.dtype == dtype
    np.testing.assert_array_equal(_values(x.grad), [2.0, 2.0, 2.0])


@low_dtypes
def test_random_fills_sample_in_float32_and_round(dtype):
    lucid.manual_seed(7)
    uniform = lucid.rand(10_000, dtype=dtype)
    lucid.manual_seed(7)
    normal = lucid.randn(10_000, dtype=dtype)
    assert uniform.dtype == normal.dtype == dtype
    values = _values(uniform)
    # [0, 1) after rounding: a float32 sample that rounds up to 1 wraps to 0, as PyTorch's
    assert values.min() >= 0.0 and values.max() < 1.0
    assert abs(values.mean() - 0.5) < 0.02 and abs(_values(normal).std() - 1.0) < 0.05
    for fill in (lucid.empty(100, dtype=dtype).uniform_(), lucid.empty(100, dtype=dtype).normal_()):
        assert fill.dtype == dtype


@low_dtypes
def test_casts_round_to_nearest(dtype):
    source = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    x = lucid.from_numpy(source)
    for cast in (x.to(dtype), x.type(dtype), x.half() if dtype is lucid.float16 else x.bfloat16()):
        assert cast.dtype == dtype
        np.testing.assert_array_equal(_values(cast), _rounded(source, dtype))
    assert lucid.ones(2).bfloat16().type() == "lucid.BFloat16Tensor"


@low_dtypes
def test_reductions_accumulate_in_float32_and_round_once(dtype):
    # 4096 ones: a running sum in bfloat16 would stop at 256, in float16 at 2048
    ones = lucid.ones(4096, dtype=dtype)
    assert ones.sum().dtype == dtype and ones.sum().item() == 4096.0
    assert ones.mean().item() == 1.0
    assert ones.cumsum(0)[-1].item() == 4096.0
    x = lucid.from_numpy(np.random.default_rng(1).uniform(0.5, 1.5, (64, 128)).astype(np.float32))
    low = x.to(dtype)
    wide = _values(low).astype(np.float64)
    for result, expected in (
        (low.sum(1), wide.sum(1)),
        (low.mean(0), wide.mean(0)),
        (low.var(1), wide.var(1, ddof=1)),
        (low.norm(dim=1), np.sqrt((wide * wide).sum(1))),
    ):
        assert result.dtype == dtype
        # one rounding of an (almost) exact result: within half a unit of the dtype
        eps = lucid.finfo(dtype).eps
        np.testing.assert_allclose(_values(result), expected, rtol=eps, atol=0)


@low_dtypes
def test_contractions_compute_in_float32_and_round_once(dtype):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 8)).astype(np.float32)
    x, y = lucid.from_numpy(a).to(dtype), lucid.from_numpy(b).to(dtype)
    wide_x, wide_y = _values(x), _values(y)
    expected = _rounded(wide_x @ wide_y, dtype)
    for result in (
        x @ y,
        lucid.mm(x, y),
        lucid.matmul(x, y),
        lucid.einsum("ij,jk->ik", x, y),
        lucid.tensordot(x, y, 1),
        lucid.bmm(x.unsqueeze(0), y.unsqueeze(0))[0],
    ):
        assert result.dtype == dtype
        np.testing.assert_allclose(_values(result), expected, rtol=lucid.finfo(dtype).eps)
    bias = lucid.ones(8, dtype=dtype)
    np.testing.assert_allclose(
        _values(lucid.addmm(bias, x, y)),
        _rounded(wide_x @ wide_y + 1.0, dtype),
        rtol=lucid.finfo(dtype).eps,
    )
    assert lucid.dot(x[0], y[:, 0]).dtype == dtype


@low_dtypes
def test_selection_and_shape_ops_keep_the_dtype(dtype):
    x = lucid.tensor([[3.0, -1.0, 2.5], [0.5, 7.0, -4.0]]).to(dtype)
    values, indices = x.sort(1)
    assert values.dtype == dtype and indices.dtype == lucid.int64
    np.testing.assert_array_equal(_values(values), np.sort(_values(x), 1))
    assert x.topk(2).values.dtype == dtype
    assert x[:, 1].dtype == x[x > 0].dtype == dtype
    assert lucid.cat([x, x]).dtype == lucid.stack([x, x]).dtype == dtype
    assert x.t().reshape(-1).dtype == dtype
    scattered = lucid.zeros(2, 3, dtype=dtype).scatter(1, lucid.tensor([[0], [2]]), x[:, :1])
    assert scattered.dtype == dtype
    np.testing.assert_array_equal(_values(scattered), [[3.0, 0.0, 0.0], [0.0, 0.0, 0.5]])


@low_dtypes
def test_tolist_and_item_give_python_floats(dtype):
    x = lucid.tensor([1.5, -2.25]).to(dtype)
    assert x.tolist() == [1.5, -2.25] and all(type(v) is float for v in x.tolist())
    assert type(x[0].item()) is float and x[0].item() == 1.5
    assert float(x[1]) == -2.25


@low_dtypes
def test_linear_algebra_refuses_them_with_pytorchs_messages(dtype):
    name = "Half" if dtype is lucid.float16 else "BFloat16"
    x = lucid.eye(3, dtype=dtype)
    with pytest.raises(
        RuntimeError, match=f"linalg.inv: Low precision dtypes not supported. Got {name}"
    ):
        lucid.linalg.inv(x)
    with pytest.raises(NotImplementedError, match=f"\"cholesky_cpu\" not implemented for '{name}'"):
        lucid.linalg.cholesky(x)
    with pytest.raises(NotImplementedError, match=f"\"cdist\" not implemented for '{name}'"):
        lucid.cdist(x, x)


# ------------------------------------------------------------------------------ torch parity
@requires_torch
@low_dtypes
def test_printing_matches_torch(dtype):
    rng = np.random.default_rng(3)
    cases = [[1.0, 2.5], [1.0, 2.0], [0.1, 1e-3], [1e5, 1.0], [np.inf, -np.inf, np.nan, 1.5]]
    cases += [list(rng.standard_normal(6) * 10.0 ** rng.integers(-6, 6)) for _ in range(20)]
    for values in cases:
        expected = repr(torch.tensor(values, dtype=_torch_dtype(dtype))).replace("torch", "lucid")
        assert repr(lucid.tensor(values, dtype=dtype)) == expected
    matrix = (rng.standard_normal((20, 30)) * 100).astype(np.float32)
    expected = repr(torch.from_numpy(matrix).to(_torch_dtype(dtype)).requires_grad_())
    assert repr(lucid.from_numpy(matrix).to(dtype).requires_grad_()) == expected.replace(
        "torch", "lucid"
    )


@requires_torch
@pytest.mark.parametrize(
    "name, options",
    [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}), ("AdamW", {"lr": 0.01}),
     ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1}), ("NAdam", {}), ("RAdam", {}),
     ("Adamax", {}), ("Adadelta", {}), ("Rprop", {}), ("Adafactor", {})],
)  # fmt: skip
@low_dtypes
def test_optimizers_step_low_precision_parameters_as_torch(name, options, dtype):
    rng = np.random.default_rng(4)
    start = rng.standard_normal((4, 5)).astype(np.float32)
    torch_param = torch.nn.Parameter(torch.from_numpy(start).to(_torch_dtype(dtype)))
    lucid_param = lucid.nn.Parameter(lucid.from_numpy(start).to(dtype))
    torch_optimizer = getattr(torch.optim, name)([torch_param], **options)
    lucid_optimizer = getattr(lucid.optim, name)([lucid_param], **options)
    for _ in range(3):
        grad = rng.standard_normal((4, 5)).astype(np.float32)
        torch_param.grad = torch.from_numpy(grad).to(_torch_dtype(dtype))
        lucid_param.grad = lucid.from_numpy(grad).to(dtype)
        torch_optimizer.step()
        lucid_optimizer.step()
    assert lucid_param.dtype == dtype
    for state in lucid_optimizer.state[lucid_param].values():
        if isinstance(state, lucid.Tensor) and state.dim():
            assert state.dtype == dtype
    # PyTorch's own kernels round a few products differently (its scalar and vector loops
    # differ), so a unit of the dtype at the parameters' scale is allowed
    expected = torch_param.detach().float().numpy()
    actual = _values(lucid_param.detach())
    # float16's eps of 1e-8 underflows, so Adam's first steps can divide by zero: the same
    # elements must be non-finite, with the same values, and the rest within a unit
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[~finite], expected[~finite])
    if finite.any():
        tolerance = lucid.finfo(dtype).eps * np.abs(expected[finite]).max()
        np.testing.assert_allclose(actual[finite], expected[finite], rtol=0, atol=tolerance)


@requires_torch
def test_muon_runs_its_iteration_in_bfloat16_as_torch():
    rng = np.random.default_rng(5)
    start = rng.standard_normal((6, 4)).astype(np.float32)
    torch_param = torch.nn.Parameter(torch.from_numpy(start.copy()))
    lucid_param = lucid.nn.Parameter(lucid.from_numpy(start.copy()))
    torch_optimizer = torch.optim.Muon([torch_param], lr=0.02)
    lucid_optimizer = lucid.optim.Muon([lucid_param], lr=0.02)
    for _ in range(3):
        grad = rng.standard_normal((6, 4)).astype(np.float32)
        torch_param.grad = torch.from_numpy(grad.copy())
        lucid_param.grad = lucid.from_numpy(grad.copy())
        torch_optimizer.step()
        lucid_optimizer.step()
    # the same bfloat16 roundings: equal to float32's last bits (a float32 iteration is ~1e-3 off)
    np.testing.assert_allclose(
        lucid_param.detach().numpy(), torch_param.detach().numpy(), rtol=1e-6, atol=1e-6
    )


@low_dtypes
def test_matrix_exp_is_computed_wide_and_rounded_once(dtype):
    # (PyTorch's CPU kernel returns inf/nan for these dtypes, so the check is against float64)
    a = np.random.default_rng(6).uniform(-1.0, 1.0, (2, 3, 3)).astype(np.float32)
    low = lucid.from_numpy(a).to(dtype)
    result = lucid.linalg.matrix_exp(low)
    expected = lucid.linalg.matrix_exp(low.double()).numpy()
    assert result.dtype == dtype
    np.testing.assert_array_equal(_values(result), _rounded(expected, dtype))


def test_a_scalar_beyond_float16s_range_compares_as_inf_without_a_numpy_warning():
    import warnings

    x = lucid.tensor([1.0, -1.0, 70000.0]).half()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "overflow encountered in cast" would raise
        assert (x < 1e6).tolist() == [True, True, False]  # 70000 is inf in float16 too
        assert (x > -1e6).tolist() == [True, True, True]
        assert (x == 1e6).tolist() == [False, False, True]
