"""Parity of lucid's recurrent layers and cells with torch.nn: names, init, outputs, grads."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from tests.nn.parity import DTYPES, check_forward_backward, check_repr_and_keys
from tests.torch_oracle import requires_torch, torch

LAYERS = {"RNN": (RNN, "RNN"), "LSTM": (LSTM, "LSTM"), "GRU": (GRU, "GRU")}
CELLS = {"RNNCell": RNNCell, "LSTMCell": LSTMCell, "GRUCell": GRUCell}


def _randn(dtype: str, *shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(DTYPES[dtype][2])


def _pair(name: str, dtype: str, *args, **kwargs):
    lucid_cls, torch_name = LAYERS.get(name) or (CELLS[name], name)
    lucid_dtype, torch_dtype, _ = DTYPES[dtype]
    torch_module = getattr(torch.nn, torch_name)(*args, dtype=torch_dtype, **kwargs)
    lucid_module = lucid_cls(*args, dtype=lucid_dtype, **kwargs)
    return torch_module, lucid_module


class _TorchFlat(torch.nn.Module):
    """Takes an LSTM's (h0, c0) as positional inputs and returns (output, h_n, c_n) flat."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, *state):
        output, (h_n, c_n) = self.inner(x, tuple(state) or None)
        return output, h_n, c_n


class _LucidFlat(lucid.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, *state):
        output, (h_n, c_n) = self.inner(x, tuple(state) or None)
        return output, h_n, c_n


CONFIGS = [
    {},
    {"num_layers": 2},
    {"bidirectional": True},
    {"num_layers": 2, "bidirectional": True, "batch_first": True},
    {"bias": False, "batch_first": True},
]


@requires_torch
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(c) or "default")
@pytest.mark.parametrize("with_state", [False, True])
def test_recurrent_layer_matches_torch(name, config, with_state):
    torch_module, lucid_module = _pair(name, "float64", 3, 5, **config)
    check_repr_and_keys(torch_module, lucid_module)
    shape = (2, 4, 3) if config.get("batch_first") else (4, 2, 3)
    inputs = [_randn("float64", *shape)]
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    if with_state:
        inputs.append(_randn("float64", layers, 2, 5, seed=1))
        if name == "LSTM":
            inputs.append(_randn("float64", layers, 2, 5, seed=2))
    if name == "LSTM":
        torch_module, lucid_module = _TorchFlat(torch_module), _LucidFlat(lucid_module)
    check_forward_backward(torch_module, lucid_module, inputs, "float64")


@requires_torch
@pytest.mark.parametrize("config", [{}, {"num_layers": 2, "bidirectional": True}])
def test_lstm_projection_matches_torch(config):
    torch_module, lucid_module = _pair("LSTM", "float64", 3, 6, proj_size=4, **config)
    check_repr_and_keys(torch_module, lucid_module)
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    inputs = [
        _randn("float64", 5, 2, 3),
        _randn("float64", layers, 2, 4, seed=1),
        _randn("float64", layers, 2, 6, seed=2),
    ]
    check_forward_backward(_TorchFlat(torch_module), _LucidFlat(lucid_module), inputs, "float64")


@requires_torch
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input_matches_torch(name, batch_first):
    torch_module, lucid_module = _pair(
        name, "float64", 3, 4, num_layers=2, bidirectional=True, batch_first=batch_first
    )
    inputs = [_randn("float64", 6, 3)]
    if name != "LSTM":
        inputs.append(_randn("float64", 4, 4, seed=1))
    else:
        torch_module, lucid_module = _TorchFlat(torch_module), _LucidFlat(lucid_module)
    check_forward_backward(torch_module, lucid_module, inputs, "float64")


@requires_torch
def test_rnn_relu_float32_matches_torch():
    torch_module, lucid_module = _pair("RNN", "float32", 3, 5, 2, "relu")
    check_repr_and_keys(torch_module, lucid_module)
    check_forward_backward(torch_module, lucid_module, [_randn("float32", 4, 2, 3)], "float32")


@requires_torch
@pytest.mark.parametrize("name", ["RNNCell", "GRUCell", "LSTMCell"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_cell_matches_torch(name, bias, batched, with_state):
    torch_module, lucid_module = _pair(name, "float64", 3, 5, bias=bias)
    check_repr_and_keys(torch_module, lucid_module)
    batch = (2,) if batched else ()
    inputs = [_randn("float64", *batch, 3)]
    if with_state:
        inputs.append(_randn("float64", *batch, 5, seed=1))
        if name == "LSTMCell":
            inputs.append(_randn("float64", *batch, 5, seed=2))

            class TorchCell(torch.nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def forward(self, x, h, c):
                    return self.inner(x, (h, c))

            class LucidCell(lucid.nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def forward(self, x, h, c):
                    return self.inner(x, (h, c))

            torch_module, lucid_module = TorchCell(torch_module), LucidCell(lucid_module)
    check_forward_backward(torch_module, lucid_module, inputs, "float64")


@requires_torch
def test_rnn_cell_relu_repr_matches_torch():
    check_repr_and_keys(
        torch.nn.RNNCell(3, 4, nonlinearity="relu"), RNNCell(3, 4, nonlinearity="relu")
    )


@requires_torch
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_parameter_names_and_shapes_match_torch(name):
    kwargs = {"num_layers": 3, "bidirectional": True}
    if name == "LSTM":
        kwargs["proj_size"] = 2
    torch_module, lucid_module = _pair(name, "float32", 3, 5, **kwargs)
    expected = [(n, tuple(p.shape)) for n, p in torch_module.named_parameters()]
    assert [(n, tuple(p.shape)) for n, p in lucid_module.named_parameters()] == expected
    # a torch state dict loads as it is
    lucid_module.load_state_dict(
        {k: lucid.tensor(v.numpy()) for k, v in torch_module.state_dict().items()}
    )


@pytest.mark.parametrize("cls", [RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell])
def test_init_is_uniform_in_one_over_sqrt_hidden(cls):
    lucid.manual_seed(0)
    module = cls(20, 16) if cls in (RNNCell, LSTMCell, GRUCell) else cls(20, 16, 2)
    bound = 1 / math.sqrt(16)
    values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound


def test_dropout_between_layers_only_in_training():
    lucid.manual_seed(0)
    module = LSTM(3, 4, num_layers=2, dropout=0.5)
    x = lucid.randn(5, 2, 3)
    module.eval()
    first, _ = module(x)
    second, _ = module(x)
    assert np.array_equal(first.detach().numpy(), second.detach().numpy())
    module.train()
    trained, _ = module(x)
    assert not np.array_equal(first.detach().numpy(), trained.detach().numpy())


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last"):
        GRU(3, 4, dropout=0.2)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: LSTM(3, 4, dropout=1.5), ValueError, "dropout should be a number in range"),
        (lambda: LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller"),
        (lambda: GRU(3, 4, proj_size=2), ValueError, "only supported for LSTM"),
        (lambda: RNN(3, 4, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
        (lambda: RNN(3, 0), ValueError, "hidden_size must be greater than zero"),
        (lambda: RNN(3, 4, num_layers=0), ValueError, "num_layers must be greater than zero"),
    ],
)
def test_constructor_errors_match_torch(make, error, message):
    with pytest.raises(error, match=message):
        make()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: LSTM(3, 4)(lucid.randn(5, 2, 2)), RuntimeError,
         r"input.size\(-1\) must be equal to input_size. Expected 3, got 2"),
        (lambda: GRU(3, 4)(lucid.randn(5, 2, 3, 1)), ValueError,
         "GRU: Expected input to be 2D or 3D, got 4D instead"),
        (lambda: LSTM(3, 4)(lucid.randn(5, 2, 3), (lucid.zeros(1, 3, 4), lucid.zeros(1, 3, 4))),
         RuntimeError, r"Expected hidden\[0\] size \(1, 2, 4\), got \[1, 3, 4\]"),
        (lambda: RNN(3, 4)(lucid.randn(5, 2, 3), lucid.zeros(2, 4)), RuntimeError,
         "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
        (lambda: RNN(3, 4)(lucid.randn(5, 2, 3, dtype=lucid.float64)), ValueError,
         r"RNN input dtype \(lucid.float64\) does not match weight dtype"),
        (lambda: GRUCell(3, 4)(lucid.randn(1, 2, 3)), ValueError,
         "GRUCell: Expected input to be 1D or 2D, got 3D instead"),
    ],
)  # fmt: skip
def test_forward_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ------------------------------------------------------------------ packed sequences
def _packed_wrapper(base, utils, lengths, enforce_sorted):
    """A module that packs its padded input, runs the layer and pads the output again."""

    class Packed(base):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x, *state):
            packed = utils.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
            hx = state[0] if len(state) == 1 else (tuple(state) or None)
            output, hidden = self.inner(packed, hx)
            padded, _ = utils.pad_packed_sequence(output, total_length=x.shape[0])
            return (padded, *hidden) if isinstance(hidden, tuple) else (padded, hidden)

    return Packed


@requires_torch
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2, 5, 1, 4]])
@pytest.mark.parametrize("with_state", [False, True])
def test_packed_sequence_input_matches_torch(name, lengths, with_state):
    import torch.nn.utils.rnn as torch_rnn

    import lucid.nn.utils.rnn as lucid_rnn

    torch_module, lucid_module = _pair(name, "float64", 3, 4, num_layers=2, bidirectional=True)
    sorted_lengths = lengths == sorted(lengths, reverse=True)
    torch_cls = _packed_wrapper(torch.nn.Module, torch_rnn, lengths, sorted_lengths)
    lucid_cls = _packed_wrapper(lucid.nn.Module, lucid_rnn, lengths, sorted_lengths)
    inputs = [_randn("float64", 6, 4, 3)]
    if with_state:
        inputs.append(_randn("float64", 4, 4, 4, seed=1))
        if name == "LSTM":
            inputs.append(_randn("float64", 4, 4, 4, seed=2))
    check_forward_backward(torch_cls(torch_module), lucid_cls(lucid_module), inputs, "float64")


@requires_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    import torch.nn.utils.rnn as torch_rnn

    import lucid.nn.utils.rnn as lucid_rnn

    arrays = [_randn("float64", n, 2, seed=n) for n in (2, 4, 1)]
    torch_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    lucid_in = [lucid.tensor(a, requires_grad=True) for a in arrays]
    expected = torch_rnn.pad_sequence(torch_in, batch_first, -1.0, padding_side)
    actual = lucid_rnn.pad_sequence(lucid_in, batch_first, -1.0, padding_side)
    np.testing.assert_array_equal(actual.detach().numpy(), expected.detach().numpy())
    weights = _randn("float64", *expected.shape, seed=9)
    (expected * torch.tensor(weights)).sum().backward()
    (actual * lucid.tensor(weights)).sum().backward()
    for lucid_tensor, torch_tensor in zip(lucid_in, torch_in, strict=True):
        np.testing.assert_array_equal(lucid_tensor.grad.numpy(), torch_tensor.grad.numpy())


@requires_torch
def test_pack_sequence_round_trip_matches_torch():
    import torch.nn.utils.rnn as torch_rnn

    import lucid.nn.utils.rnn as lucid_rnn

    arrays = [_randn("float64", n, 2, seed=n) for n in (2, 4, 1)]
    packed = lucid_rnn.pack_sequence([lucid.tensor(a) for a in arrays], enforce_sorted=False)
    expected = torch_rnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.numpy(), expected.data.numpy())
    assert packed.batch_sizes.tolist() == expected.batch_sizes.tolist()
    assert packed.sorted_indices.tolist() == expected.sorted_indices.tolist()
    assert packed.unsorted_indices.tolist() == expected.unsorted_indices.tolist()
    for lucid_sequence, array in zip(lucid_rnn.unpack_sequence(packed), arrays, strict=True):
        np.testing.assert_array_equal(lucid_sequence.numpy(), array)


def test_packing_errors_match_torch():
    from lucid.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

    x = lucid.randn(4, 2, 3)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(x, [2, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [3, 0])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        pad_packed_sequence(pack_padded_sequence(x, [3, 2]), total_length=2)
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        pad_sequence([])
