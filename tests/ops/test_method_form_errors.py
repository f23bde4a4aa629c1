"""Argument errors in method form count positions from after `self`, as PyTorch's do:
`x.tril(1.5)` names 'diagonal' at position 1 where `lucid.tril(x, 1.5)` names it at 2; and an
argument of the wrong type (a str, a float for an int, an int for a bool, a list, None, one
positional too many) is refused rather than read or left to fail inside NumPy. Each call
below raises PyTorch's exception with PyTorch's message, "torch" read as "lucid"."""

from __future__ import annotations

import pytest

import lucid
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def _mask(lib):
    return lib.ones(3, 3, dtype=lib.bool)


def _matrix(lib):
    return lib.tensor([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]])


def _integers(lib):
    return lib.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])


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

# wrong types: a str, a float for an int, an int for a bool, a list, None, one too many
CALLS.update(
    {
        "x.reshape('a', 2)": lambda m: m.ones(2, 3).reshape("a", 2),
        "x.reshape(2, 'a')": lambda m: m.ones(2, 3).reshape(2, "a"),
        "x.reshape([2, 1.5])": lambda m: m.ones(2, 3).reshape([2, 1.5]),
        "x.reshape(None)": lambda m: m.ones(2, 3).reshape(None),
        "x.permute(0, 1.5)": lambda m: m.ones(2, 3).permute(0, 1.5),
        "x.expand(2, None)": lambda m: m.ones(2, 3).expand(2, None),
        "x.expand('a')": lambda m: m.ones(2, 3).expand("a"),
        "x.flip('a')": lambda m: m.ones(2, 3).flip("a"),
        "x.sum_to_size('a', 3)": lambda m: m.ones(2, 3).sum_to_size("a", 3),
        "x.broadcast_to((2, 'a'))": lambda m: m.ones(2, 3).broadcast_to((2, "a")),
        "broadcast_to(x, 1.5)": lambda m: m.broadcast_to(m.ones(2, 3), 1.5),
        "x.uniform_(generator=3)": lambda m: m.ones(3).uniform_(generator=3),
        "x.normal_(generator='a')": lambda m: m.ones(3).normal_(generator="a"),
        "x.index_select('a', 'a')": lambda m: m.ones(3).index_select("a", "a"),
        "x.index_select(0, 'a')": lambda m: m.ones(3).index_select(0, "a"),
        "index_select(x, 'a', i)": lambda m: m.index_select(m.ones(3), "a", m.tensor([0])),
        "x.softmax(0, 1.5)": lambda m: m.ones(3).softmax(0, 1.5),
        "softmax(x, 0, 1.5)": lambda m: m.softmax(m.ones(3), 0, 1.5),
        "x.log_softmax(0, 'a')": lambda m: m.ones(3).log_softmax(0, "a"),
        # an int, None or a str where a bool belongs is refused, not read as True or False
        "x.unique(3)": lambda m: _matrix(m).unique(3),
        "x.unique(sorted=3)": lambda m: _matrix(m).unique(sorted=3),
        "x.unique(return_counts=None)": lambda m: _matrix(m).unique(return_counts=None),
        "x.unique(sorted=3, dim=0)": lambda m: _matrix(m).unique(sorted=3, dim=0),
        "unique(x, True, 'a')": lambda m: m.unique(_matrix(m), True, "a"),
        "x.unique_consecutive(3)": lambda m: _matrix(m).unique_consecutive(3),
        "x.unique_consecutive(return_counts=1.5)": lambda m: _matrix(m).unique_consecutive(
            return_counts=1.5
        ),
        "x.svd(3)": lambda m: _matrix(m).svd(3),
        "x.svd(True, 3)": lambda m: _matrix(m).svd(True, 3),
        "svd(x, 3)": lambda m: m.svd(_matrix(m), 3),
        "x.qr(3)": lambda m: _matrix(m).qr(3),
        "x.qr(None)": lambda m: _matrix(m).qr(None),
        "int x.qr('a')": lambda m: _integers(m).qr("a"),
        "x.cholesky('a')": lambda m: _matrix(m).cholesky("a"),
        "x.cholesky_inverse(3)": lambda m: _matrix(m).cholesky_inverse(3),
        "cholesky_inverse(x, 3)": lambda m: m.cholesky_inverse(_matrix(m), 3),
        "x.multinomial(3, 3)": lambda m: m.ones(3).multinomial(3, 3),
        "x.multinomial('a')": lambda m: m.ones(3).multinomial("a"),
        "multinomial(x, 3, 3)": lambda m: m.multinomial(m.ones(3), 3, 3),
        "x.fill_diagonal_(3, 3)": lambda m: _matrix(m).fill_diagonal_(3, 3),
        "x.fill_diagonal_('a')": lambda m: _matrix(m).fill_diagonal_("a"),
        # a float, a str or None where an int belongs
        "x.pinverse(None)": lambda m: _matrix(m).pinverse(None),
        "x.pinverse('a')": lambda m: _matrix(m).pinverse("a"),
        "x.diag(1.5)": lambda m: _matrix(m).diag(1.5),
        "x.diag('a')": lambda m: _matrix(m).diag("a"),
        "x.diag(None)": lambda m: _matrix(m).diag(None),
        "x.diag_embed('a')": lambda m: _matrix(m).diag_embed("a"),
        "x.diag_embed(0, 1.5)": lambda m: _matrix(m).diag_embed(0, 1.5),
        "diag_embed(x, 1.5)": lambda m: m.diag_embed(_matrix(m), 1.5),
        "x.diagflat(1.5)": lambda m: _matrix(m).diagflat(1.5),
        "x.rot90(1.5)": lambda m: _matrix(m).rot90(1.5),
        "x.rot90('a')": lambda m: _matrix(m).rot90("a"),
        "x.rot90(1, 3)": lambda m: _matrix(m).rot90(1, 3),
        "x.rot90(1, 'a')": lambda m: _matrix(m).rot90(1, "a"),
        "x.rot90(1, (0.5, 1))": lambda m: _matrix(m).rot90(1, (0.5, 1)),
        "x.rot90(1, (0, 'a'))": lambda m: _matrix(m).rot90(1, (0, "a")),
        "x.unfold(0, 1.5, 3)": lambda m: _matrix(m).unfold(0, 1.5, 3),
        "x.unfold(3, 'a', 3)": lambda m: _matrix(m).unfold(3, "a", 3),
        "x.unfold(0, 2, None)": lambda m: _matrix(m).unfold(0, 2, None),
        "x.softmax(None)": lambda m: _matrix(m).softmax(None),
        "x.softmax('a')": lambda m: _matrix(m).softmax("a"),
        "x.log_softmax(None)": lambda m: _matrix(m).log_softmax(None),
        "int x.log_softmax(1.5)": lambda m: _integers(m).log_softmax(1.5),
        # sizes that are no tuple of ints
        "x.tile(True)": lambda m: _matrix(m).tile(True),
        "x.tile('a')": lambda m: _matrix(m).tile("a"),
        "x.tile(True, 2)": lambda m: _matrix(m).tile(True, 2),
        "x.repeat(None)": lambda m: _matrix(m).repeat(None),
        "x.repeat('a', 2)": lambda m: _matrix(m).repeat("a", 2),
        "x.repeat(2, 1.5)": lambda m: _matrix(m).repeat(2, 1.5),
        "x.repeat([1.5, 2])": lambda m: _matrix(m).repeat([1.5, 2]),
        "x.to_dense(1.5)": lambda m: _matrix(m).to_dense(1.5),
        "x.to_dense('a')": lambda m: _matrix(m).to_dense("a"),
        # one dim and one list of dims
        "x.movedim([1], 0)": lambda m: _matrix(m).movedim([1], 0),
        "x.movedim(0, (1,))": lambda m: _matrix(m).movedim(0, (1,)),
        "x.moveaxis([1, 0], 1)": lambda m: _matrix(m).moveaxis([1, 0], 1),
        "movedim(x, [1], 0)": lambda m: m.movedim(_matrix(m), [1], 0),
        # memory_format is keyword-only
        "x.contiguous(3)": lambda m: _matrix(m).contiguous(3),
        "x.contiguous(3, 4)": lambda m: _matrix(m).contiguous(3, 4),
    }
)


def _raised(call, library) -> tuple[type, str]:
    with pytest.raises(Exception) as caught:
        call(library)
    return type(caught.value), str(caught.value)


@pytest.mark.filterwarnings("ignore::UserWarning")
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


def test_good_arguments_still_answer():
    x = lucid.arange(9.0).reshape(3, 3)
    assert x.repeat(2, 1).shape == (6, 3) and x.tile((2,)).shape == (3, 6)
    assert x.rot90(1, [0, 1]).shape == (3, 3) and x.movedim((0, 1), (1, 0)).shape == (3, 3)
    assert x.to_dense(lucid.float64).dtype == lucid.float64
    assert x.contiguous(memory_format=lucid.contiguous_format) is x
