"""Fused recurrent ops: one LSTM or GRU time step's gate math as a single op, and a whole
LSTM layer direction over a sequence as a single op.

The recurrent layers of lucid.nn run one hidden-projection GEMM per time step and then the
gate equations; composed from pointwise ops those are about a dozen graph nodes a step, whose
per-node cost dominates a small LSTM. Each op here computes its gates on arrays in one pass
and, by DESIGN's fast array backward, its backward on arrays when create_graph is False; with
create_graph the same backward is written in lucid ops (`_graph_backward` beside it), so that
double backward sees through it. The layer op's differentiable backward is the gradient of
the same layer composed from the fused cells. All follow PyTorch's gate order and equations.

These are internal ops of the layers (not exposed by `import lucid`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lucid._core.engine import grad as autograd_grad
from lucid._core.function import HOLOMORPHIC, Function
from lucid._core.grad_mode import enable_grad, is_grad_enabled
from lucid._core.tensor import _wrap
from lucid.ops._promote import round_to, widen
from lucid.ops.activations import _sigmoid_array, sigmoid
from lucid.ops.joining import cat, stack
from lucid.ops.pointwise import tanh
from lucid.ops.products import addmm, matmul

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["fused_lstm_cell", "fused_lstm_layer", "fused_gru_cell"]


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
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, gates, c_prev):
        # float16 and bfloat16 steps are computed in float32 (the activations backward keeps
        # too) and h and c rounded once
        x, c0 = widen(gates._data), widen(c_prev._data)
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
        dtype = c_prev._data.dtype
        return _wrap(round_to(h, dtype)), _wrap(round_to(c, dtype))

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        gates, c_prev, act, tanh_c = ctx.saved_tensors
        if is_grad_enabled():
            return FusedLSTMCell._graph_backward(ctx, grad_h, grad_c, gates, c_prev)
        a, tc, c0 = act._data, tanh_c._data, widen(c_prev._data)
        size = c0.shape[1]
        i, f, g, o = (a[:, k * size : (k + 1) * size] for k in range(4))
        grad_gates = np.empty_like(a)
        # dc: the incoming cell gradient plus the path through h = o * tanh(c)
        if grad_h is None:
            grad_gates[:, 3 * size :] = 0.0
            dc = widen(grad_c._data).copy()
        else:
            gh = widen(grad_h._data)
            do = gh * tc
            grad_gates[:, 3 * size :] = do * o * (1.0 - o)
            dc = gh * o * (1.0 - tc * tc)
            if grad_c is not None:
                dc += widen(grad_c._data)
        grad_gates[:, :size] = dc * g * i * (1.0 - i)
        grad_gates[:, size : 2 * size] = dc * c0 * f * (1.0 - f)
        grad_gates[:, 2 * size : 3 * size] = dc * i * (1.0 - g * g)
        grad_c_prev = (
            _wrap(round_to(dc * f, c_prev._data.dtype)) if ctx.needs_input_grad[1] else None
        )
        grad_x = _wrap(round_to(grad_gates, gates._data.dtype)) if ctx.needs_input_grad[0] else None
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


# ------------------------------------------------------------------ LSTM layer
def _lstm_activations(gates: np.ndarray, size: int) -> np.ndarray:
    """sigmoid over the i, f, o blocks and tanh over the g block of gate pre-activations."""
    act = _sigmoid_array(gates)
    np.tanh(gates[..., 2 * size : 3 * size], out=act[..., 2 * size : 3 * size])
    return act


def _lstm_layer_composed(x, h, c, weight_ih, weight_hh, bias_ih, bias_hh):
    """The layer in lucid ops, one fused cell a step; what double backward differentiates."""
    steps, batch, features = x.shape
    gates = matmul(x.reshape(steps * batch, features), weight_ih.t())
    if bias_ih is not None:
        gates = gates + (bias_ih + bias_hh)
    gates = gates.reshape(steps, batch, gates.shape[-1])
    weight_hh_t = weight_hh.t()
    outputs = []
    for t in range(steps):
        h, c = fused_lstm_cell(addmm(gates[t], h, weight_hh_t), c)
        outputs.append(h)
    return stack(outputs, 0), h, c


def _gate_order(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The layer's inner gate order o, i, f, g (PyTorch's rows are i, f, g, o) as row indices,
    and the scale of each inner pre-activation: 1/2 for the sigmoid gates, whose values then
    come from one tanh over all four blocks (sigmoid(z) = (tanh(z / 2) + 1) / 2)."""
    order = np.r_[3 * size : 4 * size, 0 : 3 * size]
    scale = np.r_[np.full(3 * size, 0.5), np.ones(size)]
    return order, scale


class FusedLSTMLayer(Function):
    """One direction of one LSTM layer over a whole (T, B, I) sequence, as a single op.

    The input projection of every step is one GEMM; each step is then one GEMM and a few array
    passes, with the gates in the inner order o, i, f, g so that the three sigmoid gates are
    one block. Backward forms, once over the whole sequence, every factor of the gate
    gradients that does not depend on the incoming gradient, walks the steps in reverse for the
    gate gradients (a GEMM and five array passes a step), and then forms the weight, bias and
    input gradients with one GEMM each. A single node per layer, as PyTorch's CPU LSTM
    records, instead of four per step.
    """

    _backward_name = "MkldnnRnnLayerBackward0"
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh):
        steps, batch, features = x.shape
        size = h0.shape[1]
        # float16 and bfloat16 layers run in float32 (GEMMs and gates, and what backward
        # keeps) and round their outputs once
        out_dtype = x._data.dtype
        x_array, weight_ih_array, weight_hh_array = (
            widen(t._data) for t in (x, weight_ih, weight_hh)
        )
        dtype = np.result_type(x_array, weight_ih_array)
        order, scale = _gate_order(size)
        scale = scale.astype(dtype)
        # the weights go to GEMM as C-ordered (in, 4H) arrays, which OpenBLAS multiplies faster
        # than a transposed view
        input_weight = np.ascontiguousarray((weight_ih_array[order] * scale[:, None]).T)
        gates = x_array.reshape(steps * batch, features) @ input_weight
        if bias_ih is not None:
            gates += (widen(bias_ih._data) + widen(bias_hh._data))[order] * scale
        gates = gates.reshape(steps, batch, 4 * size)
        hidden_weight = np.ascontiguousarray((weight_hh_array[order] * scale[:, None]).T)
        acts = np.empty((steps, batch, 4 * size), dtype)
        cells = np.empty((steps + 1, batch, size), dtype)
        tanh_cells = np.empty((steps, batch, size), dtype)
        hidden = np.empty((steps + 1, batch, size), dtype)
        hidden[0], cells[0] = widen(h0._data), widen(c0._data)
        product = np.empty((batch, size), dtype)
        for t in range(steps):
            act = acts[t]
            np.matmul(hidden[t], hidden_weight, out=act)
            act += gates[t]
            np.tanh(act, out=act)
            sigmoids = act[:, : 3 * size]
            sigmoids *= 0.5
            sigmoids += 0.5
            o, i, f, g = (act[:, k * size : (k + 1) * size] for k in range(4))
            c = cells[t + 1]
            np.multiply(f, cells[t], out=c)
            c += np.multiply(i, g, out=product)
            np.tanh(c, out=tanh_cells[t])
            np.multiply(o, tanh_cells[t], out=hidden[t + 1])
        ctx.set_materialize_grads(False)
        # The outputs are copies, so that an in-place change of one cannot reach what backward
        # reads.
        saved = (_wrap(acts), _wrap(cells), _wrap(tanh_cells), _wrap(hidden))
        ctx.save_for_backward(x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh, *saved)
        return (
            _wrap(round_to(hidden[1:], out_dtype).copy()),
            _wrap(round_to(hidden[steps], out_dtype).copy()),
            _wrap(round_to(cells[steps], out_dtype).copy()),
        )

    @staticmethod
    def backward(ctx, grad_output, grad_h, grad_c):
        saved = ctx.saved_tensors
        x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh = inputs = saved[:7]
        if is_grad_enabled():
            return FusedLSTMLayer._graph_backward(ctx, (grad_output, grad_h, grad_c), inputs)
        acts, cells, tanh_cells, hidden = (tensor._data for tensor in saved[7:])
        steps, batch, features = x.shape
        size = h0.shape[1]
        dtype = acts.dtype
        order, _ = _gate_order(size)
        o, i, f, g = (acts[..., k * size : (k + 1) * size] for k in range(4))
        # d h / d o_pre and d h / d c (through tanh(c)), then d c / d (i, f, g)_pre
        out_factor = tanh_cells * o * (1.0 - o)
        cell_factor = o * (1.0 - tanh_cells * tanh_cells)
        gate_factors = np.empty((steps, batch, 3, size), dtype)
        np.multiply(g, i * (1.0 - i), out=gate_factors[:, :, 0])
        np.multiply(cells[:steps], f * (1.0 - f), out=gate_factors[:, :, 1])
        np.multiply(i, 1.0 - g * g, out=gate_factors[:, :, 2])
        grad_gates = np.empty((steps, batch, 4 * size), dtype)
        blocks = grad_gates.reshape(steps, batch, 4, size)
        dh = widen(grad_h._data).copy() if grad_h is not None else np.zeros((batch, size), dtype)
        dc = widen(grad_c._data).copy() if grad_c is not None else np.zeros((batch, size), dtype)
        outputs = widen(grad_output._data) if grad_output is not None else None
        hidden_weight = widen(weight_hh._data)[order]
        for t in range(steps - 1, -1, -1):
            if outputs is not None:
                dh += outputs[t]
            np.multiply(dh, out_factor[t], out=blocks[t, :, 0])
            dc += dh * cell_factor[t]
            np.multiply(dc[:, None, :], gate_factors[t], out=blocks[t, :, 1:])
            dc *= f[t]
            dh = grad_gates[t] @ hidden_weight
        flat = grad_gates.reshape(steps * batch, 4 * size)
        needs = ctx.needs_input_grad

        def in_torch_order(inner: np.ndarray) -> np.ndarray:
            rows = np.empty_like(inner)
            rows[order] = inner
            return rows

        def as_input(array: np.ndarray, tensor: Tensor) -> Tensor:
            return _wrap(round_to(array, tensor._data.dtype))

        grad_x = grad_w_ih = grad_w_hh = grad_b_ih = grad_b_hh = None
        if needs[0]:
            grad_x = as_input((flat @ widen(weight_ih._data)[order]).reshape(x.shape), x)
        grad_h0 = as_input(dh, h0) if needs[1] else None
        grad_c0 = as_input(dc, c0) if needs[2] else None
        if needs[3]:
            inner = flat.T @ widen(x._data).reshape(steps * batch, features)
            grad_w_ih = as_input(in_torch_order(inner), weight_ih)
        if needs[4]:
            inner = flat.T @ hidden[:steps].reshape(steps * batch, size)
            grad_w_hh = as_input(in_torch_order(inner), weight_hh)
        if bias_ih is not None and (needs[5] or needs[6]):
            grad_bias = in_torch_order(flat.sum(0))
            grad_b_ih = as_input(grad_bias, bias_ih) if needs[5] else None
            grad_b_hh = as_input(grad_bias.copy(), bias_hh) if needs[6] else None
        return grad_x, grad_h0, grad_c0, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh

    @staticmethod
    def _graph_backward(ctx, grads, inputs):
        """With create_graph: differentiate the same layer rebuilt from lucid ops on the saved
        inputs, so that the gradients carry a graph back to them."""
        # The engine hands this holomorphic op conj(grad) and conjugates what it returns,
        # while autograd.grad gives PyTorch's complex gradient itself: conjugate both ways.
        is_complex = any(tensor is not None and tensor.is_complex() for tensor in inputs)
        if is_complex:
            grads = tuple(None if g is None else g.conj() for g in grads)
        with enable_grad():
            outputs = _lstm_layer_composed(*inputs)
        pairs = [(out, g) for out, g in zip(outputs, grads, strict=True) if g is not None]
        wanted = [
            tensor
            for tensor, needed in zip(inputs, ctx.needs_input_grad, strict=True)
            if needed and tensor is not None
        ]
        results = autograd_grad(
            [out for out, _ in pairs],
            wanted,
            [g for _, g in pairs],
            create_graph=True,
            allow_unused=True,
        )
        if is_complex:
            results = [None if result is None else result.conj() for result in results]
        found = iter(results)
        return tuple(
            next(found) if needed and tensor is not None else None
            for tensor, needed in zip(inputs, ctx.needs_input_grad, strict=True)
        )


def fused_lstm_layer(
    x: Tensor,
    h0: Tensor,
    c0: Tensor,
    weight_ih: Tensor,
    weight_hh: Tensor,
    bias_ih: Tensor | None,
    bias_hh: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """(output (T, B, H), h_T, c_T) of one LSTM layer direction over a (T, B, I) input."""
    return FusedLSTMLayer.apply(x, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh)


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
    _complex_rule = HOLOMORPHIC

    @staticmethod
    def forward(ctx, gates_x, gates_h, h):
        # float16 and bfloat16 steps in float32, h' rounded once
        x, hg, h0 = widen(gates_x._data), widen(gates_h._data), widen(h._data)
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
        return _wrap(round_to(out, h._data.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        gates_x, gates_h, h, rz, n = ctx.saved_tensors
        if is_grad_enabled():
            return FusedGRUCell._graph_backward(ctx, grad_output, gates_x, gates_h, h)
        g, h0, a, n = widen(grad_output._data), widen(h._data), rz._data, n._data
        size = h0.shape[1]
        r, z = a[:, :size], a[:, size:]
        h_n = widen(gates_h._data[:, 2 * size :])
        grad_n_pre = g * (1.0 - z) * (1.0 - n * n)
        grad_rz = np.empty_like(a)
        grad_rz[:, :size] = grad_n_pre * h_n * r * (1.0 - r)
        grad_rz[:, size:] = g * (h0 - n) * z * (1.0 - z)
        grad_x = grad_h = grad_prev = None
        if ctx.needs_input_grad[0]:
            grad_x = np.concatenate([grad_rz, grad_n_pre], 1)
            grad_x = _wrap(round_to(grad_x, gates_x._data.dtype))
        if ctx.needs_input_grad[1]:
            grad_h = np.concatenate([grad_rz, grad_n_pre * r], 1)
            grad_h = _wrap(round_to(grad_h, gates_h._data.dtype))
        if ctx.needs_input_grad[2]:
            grad_prev = _wrap(round_to(g * z, h._data.dtype))
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
