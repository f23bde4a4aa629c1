"""The fast array backwards (docs/design.md) of the elementwise ops and addmm agree bit for
bit with their differentiable backward through ops, which create_graph=True takes; where an
operand broadcasts or promotes, the op path runs; a birth inside an array backward is named as
one inside the op path is."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid._core.sentinel import reset_sentinel
from lucid.autograd import NonFiniteWarning

_REAL_CASES = {
    "mul": lambda a, b: a * b,
    "mul by a Python float": lambda a, b: a * 1.37 + b,
    "mul by a Python int": lambda a, b: a * 3 + b,
    "tanh": lambda a, b: (a * b).tanh(),
    "mul broadcasting": lambda a, b: a * b[:1],
    "mul promoting": lambda a, b: a * b.double(),
    "relu": lambda a, b: (a * b).relu(),
    "exp": lambda a, b: (a * b).exp(),
    "sigmoid": lambda a, b: (a * b).sigmoid(),
    # a Linear layer (addmm of a transposed weight) and addmm of a contiguous one
    "linear": lambda a, b: lucid.nn.functional.linear(a, b.t() @ b, b[0]),
    "addmm": lambda a, b: lucid.addmm(b[1], a, b.t() @ b),
    "linear with a zero-stride gradient": (
        lambda a, b: lucid.nn.functional.linear(a, b.t() @ b, b[0]).sum(0) * b
    ),
}
_COMPLEX_CASES = ("mul", "tanh", "exp", "sigmoid")


def _gradients(function, dtype, create_graph):
    rng = np.random.default_rng(0)
    a, b, seed = (lucid.tensor(rng.standard_normal((3, 4)), dtype=dtype) for _ in range(3))
    a.requires_grad_()
    b.requires_grad_()
    output = function(a, b)
    grads = lucid.autograd.grad(output, (a, b), seed.to(output.dtype), create_graph=create_graph)
    return [grad.detach().numpy() for grad in grads]


def _assert_both_paths_agree(function, dtype):
    on_arrays = _gradients(function, dtype, create_graph=False)
    through_ops = _gradients(function, dtype, create_graph=True)
    for fast, slow in zip(on_arrays, through_ops):
        assert fast.dtype == slow.dtype
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.float16])
@pytest.mark.parametrize("name", sorted(_REAL_CASES))
def test_the_array_backward_equals_the_op_backward_bitwise(name, dtype):
    _assert_both_paths_agree(_REAL_CASES[name], dtype)


@pytest.mark.parametrize("name", _COMPLEX_CASES)
def test_the_array_backward_equals_the_op_backward_on_complex_values(name):
    _assert_both_paths_agree(_REAL_CASES[name], lucid.complex64)


def _backward_birth(loss_of, create_graph):
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    w = lucid.tensor([1e20, 1.0], requires_grad=True)
    reset_sentinel()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # a finite forward; the seed times 1e20 overflows float32 in the backward
        loss_of(x, w).backward(lucid.tensor(1e30), create_graph=create_graph)
    (event,) = [w.message.event for w in caught if isinstance(w.message, NonFiniteWarning)]
    return event


@pytest.mark.parametrize(
    "loss_of", [lambda x, w: (x * w).sum(), lambda x, w: (x * 1e20).sum() + w.sum()],
    ids=["mul", "mul by a Python float"],
)  # fmt: skip
def test_a_birth_in_an_array_backward_is_named_as_in_the_op_backward(loss_of):
    on_arrays = _backward_birth(loss_of, create_graph=False)
    through_ops = _backward_birth(loss_of, create_graph=True)
    assert on_arrays.phase == through_ops.phase == "backward"
    assert on_arrays.op == through_ops.op == "mul"
    assert (on_arrays.filename, on_arrays.lineno) == (through_ops.filename, through_ops.lineno)
    assert on_arrays.mechanism == through_ops.mechanism


def test_a_birth_in_addmms_array_backward_is_named_as_in_the_op_backward():
    def loss_of(x, w):
        return lucid.nn.functional.linear(x[None], w[None], w[:1]).sum()  # x @ w^T + w[0]

    on_arrays = _backward_birth(loss_of, create_graph=False)
    through_ops = _backward_birth(loss_of, create_graph=True)
    assert on_arrays.phase == through_ops.phase == "backward"
    assert on_arrays.op == through_ops.op
    assert (on_arrays.filename, on_arrays.lineno) == (through_ops.filename, through_ops.lineno)
    assert on_arrays.mechanism == through_ops.mechanism
