"""The shape and value checks PyTorch makes, with its exception and words, and valid edge inputs
(0-d, empty batches, zero-size layers, two Python numbers) answered as PyTorch answers them."""

from __future__ import annotations

import pytest

import lucid
from tests.torch_oracle import requires_torch


def _batch_norm_stats(m, mean_size, var_size, **kwargs):
    x = m.ones(4, 3)
    return m.nn.functional.batch_norm(x, m.zeros(mean_size), m.ones(var_size), **kwargs)


# (call on lucid or torch, exception type, message)
CHECKS = [
    (lambda m: m.nn.functional.binary_cross_entropy(m.full((3,), 0.5), m.tensor([0.0, 1.0, 2.0])),
     RuntimeError, "all elements of target should be between 0 and 1"),
    (lambda m: m.nn.functional.binary_cross_entropy(m.full((2,), 0.5), m.tensor([-1.0, 1.0])),
     RuntimeError, "all elements of target should be between 0 and 1"),
    (lambda m: m.nn.functional.embedding(m.tensor([0, 1]), m.ones(5)),
     RuntimeError, "'weight' must be 2-D"),
    (lambda m: m.nn.functional.embedding(m.tensor([0, 1]), m.ones(5, 2, 2)),
     RuntimeError, "'weight' must be 2-D"),
    (lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(1, 1, 4, 4), (2, -2)),
     RuntimeError, "adaptive_avg_pool2d: elements of output_size must be greater than or equal "
     "to 0 but received {2, -2}"),
    (lambda m: _batch_norm_stats(m, 2, 3),
     RuntimeError, "running_mean should contain 3 elements not 2"),
    (lambda m: _batch_norm_stats(m, 3, 2),
     RuntimeError, "running_var should contain 3 elements not 2"),
    (lambda m: _batch_norm_stats(m, 2, 3, training=True),
     RuntimeError, "running_mean should contain 3 elements not 2"),
    (lambda m: _batch_norm_stats(m, 3, 3, weight=m.ones(2)),
     RuntimeError, "weight should contain 3 elements not 2"),
    (lambda m: _batch_norm_stats(m, 3, 3, bias=m.ones(2)),
     RuntimeError, "bias should contain 3 elements not 2"),
    (lambda m: m.nn.BatchNorm2d(2)(m.ones(4, 3, 2, 2)),
     RuntimeError, "running_mean should contain 3 elements not 2"),
    (lambda m: m.nn.BatchNorm2d(2).eval()(m.ones(4, 3, 2, 2)),
     RuntimeError, "running_mean should contain 3 elements not 2"),
    (lambda m: m.nn.functional.group_norm(m.ones(2, 4, 3), 2, weight=m.ones(3)),
     RuntimeError, "Expected weight to be a vector of size equal to the number of channels in "
     "input, but got weight of shape [3] and input of shape [2, 4, 3]"),
    (lambda m: m.nn.functional.group_norm(m.ones(2, 4, 3), 2, m.ones(4), m.ones(3)),
     RuntimeError, "Expected bias to be a vector of size equal to the number of channels in "
     "input, but got bias of shape [4] and input of shape [2, 4, 3]"),
    (lambda m: m.nn.functional.layer_norm(m.ones(2, 3, dtype=m.int64), (3,)),
     NotImplementedError, "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    (lambda m: m.manual_seed(2**64), ValueError, "Overflow when unpacking long long"),
    (lambda m: m.manual_seed(-(2**63) - 1), ValueError, "Overflow when unpacking long long"),
    (lambda m: m.nn.Conv2d(2, 0, 3)(m.ones(1, 2, 5, 5)),
     RuntimeError, "Given groups=1, expected weight to be at least 1 at dimension 0, but got "
     "weight of size [0, 2, 3, 3] instead"),
]  # fmt: skip


@pytest.mark.parametrize("call, error, message", CHECKS)
def test_pytorch_check_raises_its_error(call, error, message):
    with pytest.raises(error) as caught:
        call(lucid)
    assert str(caught.value) == message


@requires_torch
@pytest.mark.parametrize("call, error, message", CHECKS)
def test_pytorch_check_is_torchs(call, error, message):
    import torch

    with pytest.raises(error) as caught:
        call(torch)
    assert str(caught.value) == message


def test_manual_seed_keeps_a_negative_seed_as_unsigned():
    assert lucid.manual_seed(-1).initial_seed() == 2**64 - 1
    assert lucid.manual_seed(2**64 - 1).initial_seed() == 2**64 - 1


# ----------------------------------------------------------------- valid inputs
def _grads(m, function, *shapes):
    inputs = [m.ones(shape, dtype=m.float64, requires_grad=True) for shape in shapes]
    output = function(m, *inputs)
    output.sum().backward()
    grads = [(tuple(t.grad.shape), t.grad.detach().reshape(-1).tolist()) for t in inputs]
    return _rounded((tuple(output.shape), output.detach().reshape(-1).tolist(), grads))


def _rounded(value):
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, list | tuple):
        return type(value)(_rounded(item) for item in value)
    return value


VALID = {
    "sigmoid_0d": (lambda m, x: m.sigmoid(x * 0.5), ()),
    "silu_0d": (lambda m, x: m.nn.functional.silu(x * 0.5), ()),
    "conv2d_empty_batch": (lambda m, x, w, b: m.nn.functional.conv2d(x, w, b),
                           (0, 2, 5, 5), (3, 2, 3, 3), (3,)),
    "conv1d_empty_batch": (lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, padding=1),
                           (0, 2, 5), (3, 2, 3), (3,)),
    "conv2d_empty_batch_groups": (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=2, stride=2),
                                  (0, 4, 5, 5), (4, 2, 3, 3)),
    "layer_norm_zero_features": (lambda m, x, w, b: m.nn.functional.layer_norm(x, (0,), w, b),
                                 (2, 0), (0,), (0,)),
    "group_norm_zero_channels": (lambda m, x: m.nn.functional.group_norm(x, 1), (2, 0, 3)),
}  # fmt: skip

# The values and gradients torch 2.13 gives (checked against torch below).
EXPECTED = {
    "sigmoid_0d": ((), [0.6224593312018546], [((), [0.11750185610079725])]),
    "silu_0d": ((), [0.31122966560092726], [((), [0.36998059404])]),
    "conv2d_empty_batch": ((0, 3, 3, 3), [], [((0, 2, 5, 5), []), ((3, 2, 3, 3), [0.0] * 54),
                                              ((3,), [0.0] * 3)]),
    "conv1d_empty_batch": ((0, 3, 5), [], [((0, 2, 5), []), ((3, 2, 3), [0.0] * 18),
                                           ((3,), [0.0] * 3)]),
    "conv2d_empty_batch_groups": ((0, 4, 2, 2), [], [((0, 4, 5, 5), []),
                                                     ((4, 2, 3, 3), [0.0] * 72)]),
    "layer_norm_zero_features": ((2, 0), [], [((2, 0), []), ((0,), []), ((0,), [])]),
    "group_norm_zero_channels": ((2, 0, 3), [], [((2, 0, 3), [])]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_edge_input_is_answered(name):
    function, *shapes = VALID[name]
    assert _grads(lucid, function, *shapes) == _rounded(EXPECTED[name])


@requires_torch
@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_edge_input_answer_is_torchs(name):
    import torch

    function, *shapes = VALID[name]
    assert _grads(torch, function, *shapes) == _rounded(EXPECTED[name])


def test_layer_norm_module_of_zero_features():
    output = lucid.nn.LayerNorm(0)(lucid.ones(2, 0))
    assert output.shape == (2, 0)


def test_conv2d_module_on_empty_batch():
    assert lucid.nn.Conv2d(2, 3, 3)(lucid.ones(0, 2, 5, 5)).shape == (0, 3, 3, 3)


@pytest.mark.parametrize(
    "input, other, expected, dtype",
    [(7, 2, 3, lucid.int64), (7.5, -2.0, -4.0, lucid.float32), (-7, 2.0, -4.0, lucid.float32)],
)
def test_floor_divide_of_two_python_numbers(input, other, expected, dtype):
    result = lucid.floor_divide(input, other)
    assert result.shape == () and result.dtype == dtype and result.item() == expected


def test_convolution_of_no_input_channels_has_no_output_channels():
    # PyTorch's answer: a (N, 0, Ho, Wo) output, whatever the weight's output channels.
    weight = lucid.ones(3, 0, 3, 3, requires_grad=True)
    bias = lucid.ones(3, requires_grad=True)
    output = lucid.nn.functional.conv2d(lucid.ones(2, 0, 5, 5), weight, bias)
    assert output.shape == (2, 0, 3, 3)
    output.sum().backward()
    assert weight.grad.shape == (3, 0, 3, 3) and bias.grad.tolist() == [0.0, 0.0, 0.0]


@requires_torch
def test_convolution_of_no_input_channels_is_torchs():
    import torch

    expected = torch.nn.functional.conv2d(torch.ones(2, 0, 5, 5), torch.ones(3, 0, 3, 3))
    actual = lucid.nn.functional.conv2d(lucid.ones(2, 0, 5, 5), lucid.ones(3, 0, 3, 3))
    assert tuple(actual.shape) == tuple(expected.shape)
