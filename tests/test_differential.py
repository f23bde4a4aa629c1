"""Differential test against PyTorch: random small expression graphs, values and gradients.

Hypothesis builds an expression tree of depth 1-6 over a fixed op list, each node knowing the
shape it must produce; the same tree is evaluated in lucid and in torch (float64, same inputs)
and the outputs and every leaf gradient must agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import lucid
from tests.torch_oracle import TORCH_MISSING

hypothesis = pytest.importorskip("hypothesis")
torch = pytest.importorskip("torch", reason=TORCH_MISSING)
st = hypothesis.strategies

# One leaf per shape an expression can produce.
SHAPES = [(2, 3), (3, 2), (3,), (2,), (), (6,), (2, 2)]


@dataclass(frozen=True)
class Expr:
    op: str
    args: tuple  # child expressions, or the leaf's shape for "leaf"
    params: tuple = ()


def _elementwise_ops() -> list[str]:
    ops = ["add", "sub", "mul", "div_one_plus_square", "tanh", "exp_clamped", "neg"]
    if hasattr(lucid, "sigmoid"):
        ops.append("sigmoid")
    return ops


def _broadcast_partners(shape: tuple) -> list[tuple]:
    """Shapes that broadcast against `shape` without changing it."""
    partners = [shape, ()]
    if len(shape) == 2:
        partners.append((shape[1],))
    return [p for p in partners if p in SHAPES]


def _producers(shape: tuple) -> list[tuple[str, tuple, tuple]]:
    """(op, child shapes, params) that yield `shape`."""
    producers = []
    for op in _elementwise_ops():
        if op in ("add", "sub", "mul", "div_one_plus_square"):
            for partner in _broadcast_partners(shape):
                producers.append((op, (shape, partner), ()))
        else:
            producers.append((op, (shape,), ()))
    if shape == ():
        for source in [(2, 3), (3,), (6,), (2, 2)]:
            producers.append(("sum_all", (source,), ()))
            producers.append(("mean_all", (source,), ()))
        producers.append(("matmul", ((3,), (3,)), ()))
    if shape == (3,):
        producers += [("sum_dim", ((2, 3),), (0,)), ("mean_dim", ((2, 3),), (0,))]
        producers += [("sum_dim", ((3, 2),), (1,)), ("matmul", ((3, 2), (2,)), ())]
    if shape == (2,):
        producers += [("sum_dim", ((2, 3),), (1,)), ("mean_dim", ((3, 2),), (0,))]
        producers += [("matmul", ((2, 3), (3,)), ()), ("matmul", ((3,), (3, 2)), ())]
    if shape == (2, 2):
        producers.append(("matmul", ((2, 3), (3, 2)), ()))
    if shape in ((2, 3), (3, 2), (6,)):
        for source in [(2, 3), (3, 2), (6,)]:
            if source != shape:
                producers.append(("reshape", (source,), (shape,)))
    if shape in ((2, 3), (3, 2)):
        producers.append(("transpose", ((shape[1], shape[0]),), ()))
    if shape == (2, 2):
        producers.append(("transpose", ((2, 2),), ()))
    return producers


@st.composite
def expressions(draw, shape: tuple, depth: int, is_root: bool = False) -> Expr:
    # Below the root a branch may stop early, so trees are not all of full depth.
    if depth == 0 or (not is_root and draw(st.sampled_from([False, False, False, True]))):
        return Expr("leaf", shape)
    op, child_shapes, params = draw(st.sampled_from(_producers(shape)))
    children = tuple(draw(expressions(child, depth - 1)) for child in child_shapes)
    return Expr(op, children, params)


@st.composite
def programs(draw):
    depth = draw(st.integers(1, 6))
    shape = draw(st.sampled_from(SHAPES))
    expr = draw(expressions(shape, depth, is_root=True))
    seed = draw(st.integers(0, 2**32 - 1))
    return expr, shape, seed


def _evaluate(expr: Expr, module, leaves: dict):
    if expr.op == "leaf":
        return leaves[expr.args]
    values = [_evaluate(child, module, leaves) for child in expr.args]
    op = expr.op
    if op == "add":
        return values[0] + values[1]
    if op == "sub":
        return values[0] - values[1]
    if op == "mul":
        return values[0] * values[1]
    if op == "div_one_plus_square":
        return values[0] / (1 + values[1] * values[1])
    if op == "tanh":
        return module.tanh(values[0])
    if op == "exp_clamped":
        return values[0].clamp(-3.0, 3.0).exp()
    if op == "neg":
        return -values[0]
    if op == "sigmoid":
        return module.sigmoid(values[0])
    if op == "sum_all":
        return values[0].sum()
    if op == "mean_all":
        return values[0].mean()
    if op == "sum_dim":
        return values[0].sum(expr.params[0])
    if op == "mean_dim":
        return values[0].mean(expr.params[0])
    if op == "matmul":
        return values[0] @ values[1]
    if op == "reshape":
        return values[0].reshape(expr.params[0])
    if op == "transpose":
        return values[0].transpose(0, 1)
    raise AssertionError(f"unknown op {op}")


def _assert_close(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-10 * scale, err_msg=what)


@hypothesis.settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
)
@hypothesis.given(programs())
def test_random_expression_graphs_match_torch(program):
    expr, shape, seed = program
    rng = np.random.default_rng(seed)
    arrays = {leaf_shape: rng.uniform(-2.0, 2.0, leaf_shape) for leaf_shape in SHAPES}
    weight = rng.uniform(-1.0, 1.0, shape)

    lucid_leaves = {
        key: lucid.tensor(value, dtype=lucid.float64, requires_grad=True)
        for key, value in arrays.items()
    }
    torch_leaves = {
        key: torch.tensor(value, dtype=torch.float64, requires_grad=True)
        for key, value in arrays.items()
    }
    lucid_out = _evaluate(expr, lucid, lucid_leaves)
    torch_out = _evaluate(expr, torch, torch_leaves)

    assert lucid_out.dtype == lucid.float64
    assert tuple(lucid_out.shape) == tuple(torch_out.shape) == shape
    _assert_close(lucid_out.detach().numpy(), torch_out.detach().numpy(), f"value of {expr}")

    (lucid_out * lucid.tensor(weight)).sum().backward()
    (torch_out * torch.tensor(weight)).sum().backward()
    for key in SHAPES:
        lucid_grad = lucid_leaves[key].grad
        torch_grad = torch_leaves[key].grad
        assert (lucid_grad is None) == (torch_grad is None), f"grad presence for {key}: {expr}"
        if torch_grad is not None:
            assert lucid_grad.dtype == lucid.float64
            _assert_close(lucid_grad.numpy(), torch_grad.numpy(), f"grad of {key}: {expr}")
