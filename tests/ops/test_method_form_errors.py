"""Argument errors in method form count positions from after `self`, as PyTorch's do:
`x.tril(1.5)` names 'diagonal' at position 1 where `lucid.tril(x, 1.5)` names it at 2. Each
call below raises PyTorch's exception with PyTorch's message, "torch" read as "lucid"."""

from __future__ import annotations

import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def _mask(lib):
    return lib.ones(3, 3, dtype=lib.bool)


CALLS = {
    "x.tril(1.5)": lambda m: m.ones(3, 3).tril(1.5),
    "tril(x, 1.5)": lambda m: m.tril(m.ones(3, 3), 1.5),
    "x.triu('a')": lambda m: m.ones(3, 3).triu("a"),
    "x.select(0.5, 1)": lambda m: m.ones(3, 3).select(0.5, 1),
    "x.resize_as_(3)": lambda m: m.ones(3).resize_as_(3),
    "resize_as_(x, 3)": lambda m: m.resize_as_(m.ones(3), 3),
    "x.roll('a')": lambda m: m.ones(3, 3).roll("a"),
    "x.matmul('a')": lambda m: m.ones(3, 3).matmul("a"),
    "matmul(x, 'a')": lambda m: m.matmul(m.ones(3, 3), "a"),
    "x.atan2('a')": lambda m: m.ones(3, 3).atan2("a"),
    "x.unsqueeze(1.5)": lambda m: m.ones(3, 3).unsqueeze(1.5),
    "unsqueeze(x, 1.5)": lambda m: m.unsqueeze(m.ones(3, 3), 1.5),
    "x.transpose(0, 'a')": lambda m: m.ones(3, 3).transpose(0, "a"),
    "x.diagonal(1.5)": lambda m: m.ones(3, 3).diagonal(1.5),
    "diagonal(x, 1.5)": lambda m: m.diagonal(m.ones(3, 3), 1.5),
    "x.diagonal(0, 'a')": lambda m: m.ones(3, 3).diagonal(0, "a"),
    "x.chunk(1.5)": lambda m: m.ones(3).chunk(1.5),
    "chunk(x, 1.5)": lambda m: m.chunk(m.ones(3), 1.5),
    "x.chunk(2, 'a')": lambda m: m.ones(3).chunk(2, "a"),
    "x.masked_fill(3, 1.0)": lambda m: m.ones(3, 3).masked_fill(3, 1.0),
    "x.masked_fill_(3, 1.0)": lambda m: m.ones(3, 3).masked_fill_(3, 1.0),
    "masked_fill(x, 3, 1.0)": lambda m: m.masked_fill(m.ones(3, 3), 3, 1.0),
    "x.masked_fill(mask, 'a')": lambda m: m.ones(3, 3).masked_fill(_mask(m), "a"),
    "x.index_put((i,), 1.0)": lambda m: m.zeros(3).index_put((m.tensor([0]),), 1.0),
    "index_put(x, (i,), 1.0)": lambda m: m.index_put(m.zeros(3), (m.tensor([0]),), 1.0),
    "x.index_put(3, 1.0)": lambda m: m.zeros(3).index_put(3, 1.0),
    "index_put(x, 3, 1.0)": lambda m: m.index_put(m.zeros(3), 3, 1.0),
    # a keepdim that is no bool is refused, not read as True
    "x.sum(0, 3)": lambda m: m.ones(3, 3).sum(0, 3),
    "sum(x, 0, 3)": lambda m: m.sum(m.ones(3, 3), 0, 3),
    "x.sum(3, 3)": lambda m: m.ones(3, 3).sum(3, 3),
    "x.mean(0, 'a')": lambda m: m.ones(3, 3).mean(0, "a"),
    "x.amax(0, 1)": lambda m: m.ones(3, 3).amax(0, 1),
    "x.max(0, 2)": lambda m: m.ones(3, 3).max(0, 2),
    "x.argmax(0, 2)": lambda m: m.ones(3, 3).argmax(0, 2),
    "x.logsumexp(0, 3)": lambda m: m.ones(3, 3).logsumexp(0, 3),
    "x.median(0, 3)": lambda m: m.ones(3, 3).median(0, 3),
    "x.kthvalue(1, 0, 3)": lambda m: m.ones(3, 3).kthvalue(1, 0, 3),
    "x.norm(2, 0, 3)": lambda m: m.ones(3, 3).norm(2, 0, 3),
}


def _raised(call, library) -> tuple[type, str]:
    with pytest.raises(Exception) as caught:
        call(library)
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_the_error_is_pytorchs_with_its_position(call):
    ours_type, ours = _raised(call, lucid)
    theirs_type, theirs = _raised(call, torch)
    assert ours_type is theirs_type
    assert ours == theirs.replace("torch", "lucid")


def test_a_method_call_still_returns_what_the_function_returns():
    x = lucid.arange(9.0).reshape(3, 3)
    assert lucid.equal(x.tril(1), lucid.tril(x, 1))
    assert x.tril.__name__ == lucid.tril.__name__ and x.tril.__doc__ == lucid.tril.__doc__
