"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, as in torch.nn.

The layers are composed from lucid ops. Each layer and direction projects its whole input
sequence with one GEMM for all gates (both biases folded in where the gate equations allow),
then runs per time step one GEMM for the hidden projection and one fused op for the gate math
(lucid.ops.recurrent, which has its own backward); the gate equations are PyTorch's, gates in
PyTorch's order (LSTM: i, f, g, o; GRU: r, z, n). An LSTM direction over same-length
sequences without a projection is instead one op for the whole sequence (`fused_lstm_layer`),
one graph node per layer as in PyTorch's CPU LSTM.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.modules.module import Module
from lucid.nn.parameter import Parameter
from lucid.nn.utils.rnn import PackedSequence
from lucid.ops.recurrent import fused_gru_cell, fused_lstm_cell, fused_lstm_layer

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATE_COUNTS = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_AUTOCAST_ELIGIBLE = (lucid.float32, lucid.float16, lucid.bfloat16)


# ------------------------------------------------------------------ one time step
# Each step takes the input projection of this step (`gates_x`, biases included except GRU's
# hidden bias, which sits inside the reset gate's product) and the transposed hidden weight.


def _rnn_step(gates_x: Tensor, h: Tensor, weight_hh_t: Tensor, relu: bool) -> Tensor:
    pre = lucid.addmm(gates_x, h, weight_hh_t)
    return lucid.relu(pre) if relu else lucid.tanh(pre)


def _lstm_step(
    gates_x: Tensor, h: Tensor, c: Tensor, weight_hh_t: Tensor, weight_hr_t: Tensor | None
) -> tuple[Tensor, Tensor]:
    h, c = fused_lstm_cell(lucid.addmm(gates_x, h, weight_hh_t), c)
    if weight_hr_t is not None:
        h = lucid.matmul(h, weight_hr_t)
    return h, c


def _gru_step(gates_x: Tensor, h: Tensor, weight_hh_t: Tensor, bias_hh: Tensor | None) -> Tensor:
    if bias_hh is None:
        gates_h = lucid.matmul(h, weight_hh_t)
    else:
        gates_h = lucid.addmm(bias_hh, h, weight_hh_t)
    return fused_gru_cell(gates_x, gates_h, h)


class RNNBase(Module):
    """Base class of RNN, LSTM and GRU: PyTorch's parameters, checks and layer loop."""

    __constants__ = [
        "mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
        "bidirectional", "proj_size",
    ]  # fmt: skip

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATE_COUNTS:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATE_COUNTS[mode] * hidden_size

        def empty(*shape: int) -> Parameter:
            return Parameter(lucid.empty(shape, device=device, dtype=dtype))

        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = f"l{layer}" + ("_reverse" if direction == 1 else "")
                names = [f"weight_ih_{suffix}", f"weight_hh_{suffix}"]
                setattr(self, names[0], empty(gate_size, layer_input_size))
                setattr(self, names[1], empty(gate_size, real_hidden_size))
                if bias:
                    names += [f"bias_ih_{suffix}", f"bias_hh_{suffix}"]
                    setattr(self, names[2], empty(gate_size))
                    setattr(self, names[3], empty(gate_size))
                if proj_size > 0:
                    names.append(f"weight_hr_{suffix}")
                    setattr(self, names[-1], empty(proj_size, hidden_size))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self) -> list[Parameter | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Does nothing: lucid keeps no fused weight buffer (PyTorch's is for cuDNN)."""

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---------------------------------------------------------------- checks
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                f"Convert input: input.to({weight_dtype}), or convert model: "
                f"model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected_hidden_size: tuple[int, int, int],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    # ---------------------------------------------------------------- the layer loop
    def _zero_hidden(self, batch: int, dtype: Any) -> Any:
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        h_zeros = lucid.zeros((self.num_layers * num_directions, batch, size), dtype=dtype)
        if self.mode != "LSTM":
            return h_zeros
        shape = (self.num_layers * num_directions, batch, self.hidden_size)
        return h_zeros, lucid.zeros(shape, dtype=dtype)

    def _permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        if self.mode == "LSTM":
            return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)
        return hx.index_select(1, permutation)

    def _check_batched_hidden(self, hx: Any, is_batched: bool) -> Any:
        """PyTorch's checks of hx against a batched or unbatched input; batches hx."""
        if self.mode == "LSTM":
            dims = (hx[0].dim(), hx[1].dim())
            expected = 3 if is_batched else 2
            if dims != (expected, expected):
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {expected}-D but got "
                    f"({dims[0]}-D, {dims[1]}-D) tensors"
                )
            return hx if is_batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        if is_batched and hx.dim() != 3:
            raise RuntimeError(
                f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
            )
        if not is_batched and hx.dim() != 2:
            raise RuntimeError(
                f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor"
            )
        return hx if is_batched else hx.unsqueeze(1)

    def _forward(self, input: Any, hx: Any) -> tuple[Any, Any]:
        """The forward of RNN, LSTM and GRU, on a padded batch or a PackedSequence."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(size) for size in batch_sizes.tolist()]
            if hx is None:
                hx = self._zero_hidden(sizes[0], data.dtype)
            else:
                hx = self._permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            output, hidden = self._run(data, sizes, hx)
            hidden = self._permute_hidden(hidden, unsorted_indices)
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, hidden
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            hx = self._zero_hidden(input.size(batch_dim), input.dtype)
        else:
            hx = self._check_batched_hidden(hx, is_batched)
        self.check_forward_args(input, hx, None)
        if input.size(1 - batch_dim) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if self.batch_first:
            input = input.transpose(0, 1)
        steps, batch, _ = input.shape
        output, hidden = self._run(input, [batch] * steps, hx)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            if self.mode == "LSTM":
                hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
            else:
                hidden = hidden.squeeze(1)
        return output, hidden

    def _run(self, data: Tensor, batch_sizes: list[int], hx: Any) -> tuple[Tensor, Any]:
        """All layers over time-major rows `data` (step t holds batch_sizes[t] rows), or over
        a (T, B, features) batch of same-length sequences; the output has the input's layout."""
        num_directions = 2 if self.bidirectional else 1
        components = hx if self.mode == "LSTM" else (hx,)
        starts = list(zip(*(component.unbind(0) for component in components), strict=True))
        layer_input = data
        final_states = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                index = layer * num_directions + direction
                rows, state = self._run_direction(
                    layer_input, batch_sizes, starts[index], index, reverse=direction == 1
                )
                outputs.append(rows)
                final_states.append(state)
            layer_input = outputs[0] if num_directions == 1 else lucid.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        hidden = [lucid.stack(list(parts), 0) for parts in zip(*final_states, strict=True)]
        return layer_input, (tuple(hidden) if self.mode == "LSTM" else hidden[0])

    def _step(self, gates_x: Tensor, state: tuple[Tensor, ...], weights: tuple) -> tuple:
        weight_hh_t, bias_hh, weight_hr_t = weights
        if self.mode == "LSTM":
            return _lstm_step(gates_x, state[0], state[1], weight_hh_t, weight_hr_t)
        if self.mode == "GRU":
            return (_gru_step(gates_x, state[0], weight_hh_t, bias_hh),)
        return (_rnn_step(gates_x, state[0], weight_hh_t, self.mode == "RNN_RELU"),)

    def _takes_fused_layer(self, data, batch_sizes, start, weight_ih, weight_hh, bias_ih) -> bool:
        """Whether a direction runs as one fused LSTM layer op: same-length sequences, no
        projection, and one dtype throughout (otherwise the per-step path promotes)."""
        if self.mode != "LSTM" or self.proj_size > 0 or batch_sizes[-1] != batch_sizes[0]:
            return False
        dtype = data.dtype
        tensors = (*start, weight_ih, weight_hh) + ((bias_ih,) if bias_ih is not None else ())
        if lucid.is_autocast_enabled("cpu"):
            # autocast casts every float32, float16 and bfloat16 input of the fused layer to
            # its dtype (PyTorch runs each layer of a CPU LSTM as one autocast op)
            return all(tensor.dtype in _AUTOCAST_ELIGIBLE for tensor in (data, *tensors))
        return all(tensor.dtype == dtype for tensor in tensors)

    def _run_fused_lstm(self, data, batch_sizes, start, reverse, weights) -> tuple:
        flat = data.dim() == 2
        x = data.reshape(len(batch_sizes), batch_sizes[0], data.shape[-1]) if flat else data
        if reverse:
            x = x.flip(0)
        output, h, c = fused_lstm_layer(x, start[0], start[1], *weights)
        if reverse:
            output = output.flip(0)
        return (output.reshape(-1, output.shape[-1]) if flat else output), (h, c)

    def _run_direction(
        self,
        data: Tensor,
        batch_sizes: list[int],
        start: tuple[Tensor, ...],
        index: int,
        reverse: bool,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        names = self._all_weights[index]
        weight_ih = getattr(self, names[0])
        bias_ih = bias_hh = weight_hr_t = None
        if self.bias:
            bias_ih, bias_hh = getattr(self, names[2]), getattr(self, names[3])
        if self.proj_size > 0:
            weight_hr_t = getattr(self, names[-1]).t()
        weight_hh = getattr(self, names[1])
        if self._takes_fused_layer(data, batch_sizes, start, weight_ih, weight_hh, bias_ih):
            return self._run_fused_lstm(data, batch_sizes, start, reverse,
                                        (weight_ih, weight_hh, bias_ih, bias_hh))  # fmt: skip
        weights = (weight_hh.t(), bias_hh, weight_hr_t)
        # GRU's hidden bias sits inside the reset gate's product; the others add both biases
        if self.mode == "GRU" or bias_ih is None:
            bias = bias_ih
        else:
            bias = bias_ih + bias_hh
        if data.dim() == 3:
            steps, batch, features = data.shape
            outputs, state = self._run_steps(
                data.reshape(steps * batch, features), batch_sizes, start, reverse,
                weight_ih, bias, weights,
            )  # fmt: skip
            # stacked over steps, as PyTorch's per-step layers are (StackBackward0)
            return lucid.stack(outputs, 0), state
        outputs, state = self._run_steps(
            data, batch_sizes, start, reverse, weight_ih, bias, weights
        )
        return lucid.cat(outputs, 0), state

    def _run_steps(
        self,
        data: Tensor,
        batch_sizes: list[int],
        start: tuple[Tensor, ...],
        reverse: bool,
        weight_ih: Tensor,
        bias: Tensor | None,
        weights: tuple,
    ) -> tuple[list[Tensor], tuple[Tensor, ...]]:
        """One layer and direction, step by step over time-major rows: each step's output
        rows, and the final state."""
        if bias is None:
            gates = lucid.matmul(data, weight_ih.t())
        else:
            gates = lucid.addmm(bias, data, weight_ih.t())
        gates_x = gates.split(batch_sizes, 0)
        steps = len(batch_sizes)
        outputs: list[Tensor] = [None] * steps  # type: ignore[list-item]
        if reverse:
            # the batch grows as shorter sequences join; each row starts from its own h0
            state = start
            if batch_sizes[-1] < start[0].shape[0]:
                state = tuple(part.narrow(0, 0, batch_sizes[-1]) for part in start)
            for t in range(steps - 1, -1, -1):
                current = state[0].shape[0]
                if batch_sizes[t] > current:
                    extra = batch_sizes[t] - current
                    state = tuple(
                        lucid.cat([part, first.narrow(0, current, extra)], 0)
                        for part, first in zip(state, start, strict=True)
                    )
                state = self._step(gates_x[t], state, weights)
                outputs[t] = state[0]
            return outputs, state
        # the batch shrinks as sequences end; an ended row's state is its final state
        state = start
        finished = []
        for t in range(steps):
            current = state[0].shape[0]
            if batch_sizes[t] < current:
                pieces = [
                    part.split([batch_sizes[t], current - batch_sizes[t]], 0) for part in state
                ]
                finished.append(tuple(piece[1] for piece in pieces))
                state = tuple(piece[0] for piece in pieces)
            state = self._step(gates_x[t], state, weights)
            outputs[t] = state[0]
        if finished:
            state = tuple(
                lucid.cat([part, *(ended[i] for ended in reversed(finished))], 0)
                for i, part in enumerate(state)
            )
        return outputs, state


class RNN(RNNBase):
    """Elman RNN, h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit; gates r, z, n in PyTorch's order and equations."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; gates i, f, g, o in PyTorch's order, optional projection."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def forward(
        self, input: Any, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Any, tuple[Tensor, Tensor]]:
        return self._forward(input, hx)


# ---------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """Base class of the cells: weight_ih, weight_hh, bias_ih, bias_hh with PyTorch's init."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate_size = num_chunks * hidden_size
        self.weight_ih = Parameter(lucid.empty((gate_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(
            lucid.empty((gate_size, hidden_size), device=device, dtype=dtype)
        )
        if bias:
            self.bias_ih = Parameter(lucid.empty(gate_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(lucid.empty(gate_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name: str, input: Tensor, hx: Any) -> bool:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        return input.dim() == 2

    def _check_step(self, input: Tensor, hidden_states: tuple[Tensor, ...]) -> None:
        """The checks of PyTorch's cell kernels (rnn_tanh_cell, lstm_cell, gru_cell), which
        read the sizes from the weights."""
        input_size = self.weight_ih.size(1)
        if input.size(1) != input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {input_size}"
            )
        hidden_size = self.weight_hh.size(1)
        for label, hx in enumerate(hidden_states):
            if input.size(0) != hx.size(0):
                raise RuntimeError(
                    f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
                    f"{hx.size(0)}"
                )
            if hx.size(1) != hidden_size:
                raise RuntimeError(
                    f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected "
                    f"{hidden_size}"
                )

    def _input_gates(self, input: Tensor, fold_hidden_bias: bool) -> Tensor:
        bias = self.bias_ih
        if bias is not None and fold_hidden_bias:
            bias = bias + self.bias_hh
        return F.linear(input, self.weight_ih, bias)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched = self._batched("RNNCell", input, hx)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = lucid.zeros((input.size(0), self.hidden_size), dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check_step(input, (hx,))
        gates_x = self._input_gates(input, True)
        h = _rnn_step(gates_x, hx, self.weight_hh.t(), self.nonlinearity == "relu")
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        is_batched = self._batched("LSTMCell", input, hx)
        if hx is not None:
            for index, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{index}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = lucid.zeros((input.size(0), self.hidden_size), dtype=input.dtype)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        if len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        self._check_step(input, hx)
        # written out rather than fused, so that h' and c' carry PyTorch's grad_fn names
        gates = lucid.addmm(self._input_gates(input, True), hx[0], self.weight_hh.t())
        in_gate, forget_gate, cell_gate, out_gate = gates.chunk(4, 1)
        c = lucid.sigmoid(forget_gate) * hx[1] + lucid.sigmoid(in_gate) * lucid.tanh(cell_gate)
        h = lucid.sigmoid(out_gate) * lucid.tanh(c)
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step: h' = (1 - z) * n + z * h."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched = self._batched("GRUCell", input, hx)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = lucid.zeros((input.size(0), self.hidden_size), dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        self._check_step(input, (hx,))
        # written out rather than fused, so that h' carries PyTorch's grad_fn name
        input_reset, input_update, input_new = self._input_gates(input, False).chunk(3, 1)
        gates_h = F.linear(hx, self.weight_hh, self.bias_hh)
        hidden_reset, hidden_update, hidden_new = gates_h.chunk(3, 1)
        reset = lucid.sigmoid(input_reset + hidden_reset)
        update = lucid.sigmoid(input_update + hidden_update)
        new = lucid.tanh(input_new + reset * hidden_new)
        h = new + update * (hx - new)
        return h if is_batched else h.squeeze(0)
