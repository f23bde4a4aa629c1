"""Fused recurrent cells: one LSTM or GRU time step's gate math as a single op.

The recurrent layers of lucid.nn run one hidden-projection GEMM per time step and then the
gate equations; composed from pointwise ops those are about a dozen graph nodes a step, whose
per-node cost dominates a small LSTM. Each op here computes its gates on arrays in one pass
and, by DESIGN's fast array backward, its backward on arrays when create_graph is False; with
create_graph the same backward is written in lucid ops (`_graph_backward` beside it), so that
double backward sees through it. Both follow PyTorch's gate order and equations.

These are internal ops of the layers (not exposed by `import lucid`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lucid._core.function import Function
from lucid._core.grad_mode import is_grad_enabled
from lucid._core.tensor import _wrap
from lucid.ops.nn_ops import _sigmoid_array, sigmoid
from lucid.ops.pointwise import tanh
from lucid.ops.shape import cat

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["fused_lstm_cell", "fused_gru_cell"]


# ------------------------------------------------------------------- LSTM cell
def _lstm_cell_composed(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """The LSTM step in lucid ops: gates (B, 4H) as i, f, g, o pre-activations, c (B, H)."""
    i, f, g, o = gates.chunk(4, 1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c), c


class FusedLSTMCell(Function):
    """(h, c) of one LSTM step from the gate pre-activations and the previous cell state.

    i, f, o = sigmoid, g = tanh of the four column blocks of `gates`;
    c = f * c_prev + i * g and h = o * tanh(c).
    """

    _backward_name = "FusedLSTMCellBackward0"

    @staticmethod
    def forward(ctx, gates, c_prev):
        x, c0 = gates._data, c_prev._data
        size = c0.shape[1]
        # one pass of sigmoid over all four blocks, then tanh over the cell candidate block
        act = _sigmoid_array(x)
        np.tanh(x[:, 2 * size : 3 * size], out=act[:, 2 * size : 3 * size])
        i, f, g, o = (act[:, k * size : (k + 1) * size] for k in range(4))
        c = f * c0
        c += i * g
        tanh_c = np.tanh(c)
        h = o * tanh_c
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(gates, c_prev, _wrap(act), _wrap(tanh_c))
        return _wrap(h), _wrap(c)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        gates, c_prev, act, tanh_c = ctx.saved_tensors
        if is_grad_enabled():
            return FusedLSTMCell._graph_backward(ctx, grad_h, grad_c, gates, c_prev)
        a, tc, c0 = act._data, tanh_c._data, c_prev._data
        size = c0.shape[1]
        i, f, g, o = (a[:, k * size : (k + 1) * size] for k in range(4))
        grad_gates = np.empty_like(a)
        # dc: the incoming cell gradient plus the path through h = o * tanh(c)
        if grad_h is None:
            grad_gates[:, 3 * size :] = 0.0
            dc = grad_c._data.copy()
        else:
            gh = grad_h._data
            do = gh * tc
            grad_gates[:, 3 * size :] = do * o * (1.0 - o)
            dc = gh * o * (1.0 - tc * tc)
            if grad_c is not None:
                dc += grad_c._data
        grad_gates[:, :size] = dc * g * i * (1.0 - i)
        grad_gates[:, size : 2 * size] = dc * c0 * f * (1.0 - f)
        grad_gates[:, 2 * size : 3 * size] = dc * i * (1.0 - g * g)
        grad_c_prev = _wrap(dc * f) if ctx.needs_input_grad[1] else None
        grad_x = _wrap(grad_gates) if ctx.needs_input_grad[0] else None
        return grad_x, grad_c_prev

    @staticmethod
    def _graph_backward(ctx, grad_h, grad_c, gates, c_prev):
        """The backward above in lucid ops, the activations rebuilt from the inputs."""
        i_pre, f_pre, g_pre, o_pre = gates.chunk(4, 1)
        i, f, g, o = sigmoid(i_pre), sigmoid(f_pre), tanh(g_pre), sigmoid(o_pre)
        tanh_c = tanh(f * c_prev + i * g)
        if grad_h is None:
            do = o * 0.0
            dc = grad_c
        else:
            do = grad_h * tanh_c * o * (1.0 - o)
            dc = grad_h * o * (1.0 - tanh_c * tanh_c)
            if grad_c is not None:
                dc = dc + grad_c
        di = dc * g * i * (1.0 - i)
        df = dc * c_prev * f * (1.0 - f)
        dg = dc * i * (1.0 - g * g)
        grad_x = cat([di, df, dg, do], 1) if ctx.needs_input_grad[0] else None
        grad_c_prev = dc * f if ctx.needs_input_grad[1] else None
        return grad_x, grad_c_prev


def fused_lstm_cell(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """(h, c') of one LSTM step; gates (B, 4H) are the i, f, g, o pre-activations, c is (B, H).

    Inputs of mixed dtypes take the composed form, which promotes as the pointwise ops do.
    """
    if gates.dtype != c.dtype or gates.ndim != 2 or c.ndim != 2:
        return _lstm_cell_composed(gates, c)
    return FusedLSTMCell.apply(gates, c)


# -------------------------------------------------------------------- GRU cell
def _gru_cell_composed(gates_x: Tensor, gates_h: Tensor, h: Tensor) -> Tensor:
    """The GRU step in lucid ops: gates_x and gates_h (B, 3H) as r, z, n blocks, h (B, H)."""
    size = h.shape[-1]
    x_rz, x_n = gates_x.split([2 * size, size], 1)
    h_rz, h_n = gates_h.split([2 * size, size], 1)
    r, z = sigmoid(x_rz + h_rz).chunk(2, 1)
    n = tanh(x_n + r * h_n)
    return n + z * (h - n)


class FusedGRUCell(Function):
    """h' of one GRU step from the input and hidden projections and the previous h.

    r, z = sigmoid of the sums of the first two blocks; n = tanh(x_n + r * h_n);
    h' = (1 - z) * n + z * h.
    """

    _backward_name = "FusedGRUCellBackward0"

    @staticmethod
    def forward(ctx, gates_x, gates_h, h):
        x, hg, h0 = gates_x._data, gates_h._data, h._data
        size = h0.shape[1]
        rz = _sigmoid_array(x[:, : 2 * size] + hg[:, : 2 * size])
        r, z = rz[:, :size], rz[:, size:]
        n = r * hg[:, 2 * size :]
        n += x[:, 2 * size :]
        np.tanh(n, out=n)
        out = h0 - n
        out *= z
        out += n
        ctx.save_for_backward(gates_x, gates_h, h, _wrap(rz), _wrap(n))
        return _wrap(out)

    @staticmethod
    def backward(ctx, grad_output):
        gates_x, gates_h, h, rz, n = ctx.saved_tensors
        if is_grad_enabled():
            return FusedGRUCell._graph_backward(ctx, grad_output, gates_x, gates_h, h)
        g, h0, a, n = grad_output._data, h._data, rz._data, n._data
        size = h0.shape[1]
        r, z = a[:, :size], a[:, size:]
        h_n = gates_h._data[:, 2 * size :]
        grad_n_pre = g * (1.0 - z) * (1.0 - n * n)
        grad_rz = np.empty_like(a)
        grad_rz[:, :size] = grad_n_pre * h_n * r * (1.0 - r)
        grad_rz[:, size:] = g * (h0 - n) * z * (1.0 - z)
        grad_x = grad_h = grad_prev = None
        if ctx.needs_input_grad[0]:
            grad_x = _wrap(np.concatenate([grad_rz, grad_n_pre], 1))
        if ctx.needs_input_grad[1]:
            grad_h = _wrap(np.concatenate([grad_rz, grad_n_pre * r], 1))
        if ctx.needs_input_grad[2]:
            grad_prev = _wrap(g * z)
        return grad_x, grad_h, grad_prev

    @staticmethod
    def _graph_backward(ctx, grad_output, gates_x, gates_h, h):
        """The backward above in lucid ops, the activations rebuilt from the inputs."""
        size = h.shape[-1]
        x_rz, x_n = gates_x.split([2 * size, size], 1)
        h_rz, h_n = gates_h.split([2 * size, size], 1)
        r, z = sigmoid(x_rz + h_rz).chunk(2, 1)
        n = tanh(x_n + r * h_n)
        grad_n_pre = grad_output * (1.0 - z) * (1.0 - n * n)
        grad_r = grad_n_pre * h_n * r * (1.0 - r)
        grad_z = grad_output * (h - n) * z * (1.0 - z)
        grad_x = grad_h = grad_prev = None
        if ctx.needs_input_grad[0]:
            grad_x = cat([grad_r, grad_z, grad_n_pre], 1)
        if ctx.needs_input_grad[1]:
            grad_h = cat([grad_r, grad_z, grad_n_pre * r], 1)
        if ctx.needs_input_grad[2]:
            grad_prev = grad_output * z
        return grad_x, grad_h, grad_prev


def fused_gru_cell(gates_x: Tensor, gates_h: Tensor, h: Tensor) -> Tensor:
    """h' of one GRU step; gates_x, gates_h (B, 3H) are the r, z, n projections, h is (B, H).

    Inputs of mixed dtypes take the composed form, which promotes as the pointwise ops do.
    """
    if not (gates_x.dtype == gates_h.dtype == h.dtype) or h.ndim != 2 or gates_x.ndim != 2:
        return _gru_cell_composed(gates_x, gates_h, h)
    return FusedGRUCell.apply(gates_x, gates_h, h)
