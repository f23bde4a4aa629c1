"""NaNDetector follows the sentinel's rule for what a birth is: infinities a user asks for
(attention masks) are not anomalies, an Inf that flows through is not a birth, and births in the
loss and in backward are named at their own step with op, forward line and module path."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator

import pytest

import lucid
import lucid.nn as nn
from lucid._core import sentinel
from lucid.debug import NaNDetector
from tests.markers import marked_line


@pytest.fixture(autouse=True)
def _quiet_sentinel() -> Iterator[None]:
    # The scenarios provoke non-finite values on purpose; the sentinel's own warnings about
    # them are tested in tests/autograd.
    was_enabled = sentinel.is_sentinel_enabled()
    sentinel.set_sentinel(True)
    sentinel.reset_sentinel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    sentinel.set_sentinel(was_enabled)
    sentinel.reset_sentinel()


# --------------------------------------------------------------------- intentional infinities
class _CausalAttention(nn.Module):
    """One head of causal self-attention; `masking` picks how the -inf mask is written."""

    def __init__(self, masking: str, width: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.masking = masking
        self.width = width

    def forward(self, x: lucid.Tensor, keep: lucid.Tensor | None = None) -> lucid.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / self.width**0.5
        length = x.shape[1]
        future = lucid.ones(length, length, dtype=lucid.bool).triu(1)
        if self.masking == "masked_fill":
            scores = scores.masked_fill(future, float("-inf"))
        elif self.masking == "full":
            scores = scores + lucid.full((length, length), float("-inf")).triu(1)
        elif self.masking == "where":
            scores = lucid.where(future, float("-inf"), scores)
        if keep is not None:
            scores = scores + lucid.log(keep)  # <log-of-keep>
        return self.out(scores.softmax(-1) @ v)


class _ScoreMask(nn.Module):
    """A user leaf that outputs masked scores: its output holds the -inf it was asked for."""

    def forward(self, scores: lucid.Tensor) -> lucid.Tensor:
        length = scores.shape[-1]
        future = lucid.ones(length, length, dtype=lucid.bool).triu(1)
        return scores.masked_fill(future, float("-inf"))


class _Chain(nn.Module):
    """Calls its one child with every argument: the child is not the model itself."""

    def __init__(self, child: nn.Module) -> None:
        super().__init__()
        self.add_module("0", child)

    def forward(self, *args: lucid.Tensor) -> lucid.Tensor:
        return getattr(self, "0")(*args)


class _Decoder(nn.Module):
    def __init__(self, masking: str) -> None:
        super().__init__()
        self.embed = nn.Linear(4, 8)
        self.attn = _CausalAttention(masking)
        self.mask = _ScoreMask()
        self.head = nn.Linear(8, 2)

    def forward(self, x: lucid.Tensor, keep: lucid.Tensor | None = None) -> lucid.Tensor:
        h = self.embed(x)
        h = h + self.attn(h, keep)
        # A second, functional attention whose masked scores pass through a watched leaf.
        weights = self.mask(h @ h.transpose(-2, -1)).softmax(-1)
        return self.head(weights @ h).mean(1)


def _train(model: nn.Module, steps: int = 3, **options) -> NaNDetector:
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.01)
    with NaNDetector(model, stop_on_first=False, verbose=False, **options) as detector:
        for _ in range(steps):
            optimizer.zero_grad()
            model(lucid.randn(2, 5, 4)).pow(2).mean().backward()
            optimizer.step()
    return detector


@pytest.mark.parametrize("masking", ["masked_fill", "full", "where"])
@pytest.mark.parametrize("check_backward", [False, True])
def test_a_causal_minus_inf_mask_trained_a_few_steps_reports_nothing(
    masking: str, check_backward: bool
) -> None:
    detector = _train(_Decoder(masking), check_backward=check_backward)
    assert not detector.events, [event.headline() for event in detector.events]


def test_a_genuine_birth_in_the_masked_model_is_still_reported():
    model = _Decoder("masked_fill")
    keep = lucid.ones(5, 5)
    keep[2, 0] = 0.0  # log(0): a division by zero the sentinel sees, not a value written
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(2, 5, 4))
        model(lucid.randn(2, 5, 4), keep)
    (event,) = detector.events
    assert (event.batch_idx, event.layer_name, event.kind) == (1, "attn", "inf")
    assert event.op.lower() == "log" and event.phase == "forward"
    assert event.location == f"{__file__}:{marked_line(__file__, 'log-of-keep')}"


def test_a_fully_masked_row_is_a_birth_in_softmax():
    class Masked(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x: lucid.Tensor, hidden: lucid.Tensor) -> lucid.Tensor:
            return self.proj(x).masked_fill(hidden, float("-inf")).softmax(-1)

    model = _Chain(Masked())
    hidden = lucid.zeros(3, 4, dtype=lucid.bool)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        hidden[1, 2] = True
        model(lucid.randn(3, 4), hidden)
        assert not detector.triggered
        hidden[1] = True  # row 1 sees no key: softmax computes -inf - (-inf)
        model(lucid.randn(3, 4), hidden)
    (event,) = detector.events
    assert (event.batch_idx, event.layer_name, event.kind) == (1, "0", "nan")
    assert event.op.lower() == "softmax"


@pytest.mark.parametrize("positional", [False, True])
def test_transformer_encoder_layer_with_a_causal_float_mask_reports_nothing(positional: bool):
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    causal = lucid.full((5, 5), float("-inf")).triu(1)
    optimizer = lucid.optim.SGD(layer.parameters(), lr=0.01)
    with NaNDetector(layer, verbose=False, check_backward=True) as detector:
        for _ in range(3):
            optimizer.zero_grad()
            x = lucid.randn(2, 5, 8)
            out = layer(x, causal) if positional else layer(x, src_mask=causal)
            out.pow(2).mean().backward()
            optimizer.step()
    assert not detector.triggered, detector.event


def test_multihead_attention_with_a_causal_float_mask_reports_nothing():
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    causal = lucid.full((5, 5), float("-inf")).triu(1)
    with NaNDetector(attention, verbose=False, check_backward=True) as detector:
        x = lucid.randn(2, 5, 8)
        out, _ = attention(x, x, x, attn_mask=causal)
        out.sum().backward()
    assert not detector.triggered, detector.event


def test_an_input_with_nan_or_plus_inf_is_still_an_input_event_but_a_minus_inf_mask_is_not():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(3, 3)))

    class WithMask(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x: lucid.Tensor, mask: lucid.Tensor) -> lucid.Tensor:
            return (self.fc(x) + mask).softmax(-1)

    masked = WithMask()
    mask = lucid.tensor([[0.0, float("-inf"), 0.0]])
    with NaNDetector(masked, verbose=False) as detector:
        masked(lucid.randn(1, 3), mask)
    assert not detector.triggered
    for value in (float("nan"), float("inf")):
        x = lucid.randn(2, 3)
        x[1, 0] = value
        with NaNDetector(model, verbose=False) as detector:
            model(x)
        assert (detector.event.op, detector.event.layer_name) == ("input", "")


# --------------------------------------------------------------------- loss and backward
class _RootNorm(nn.Module):
    """sqrt of the sum of squares: finite forward, infinite derivative at a zero row."""

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        return lucid.sqrt((x * x).sum(-1, keepdim=True))  # <root-norm>


def _norm_model() -> nn.Module:
    return nn.Sequential(OrderedDict(fc=nn.Linear(4, 4), norm=_RootNorm(), head=nn.Linear(1, 1)))


def test_a_loss_birth_is_reported_at_its_step_with_op_and_line():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)
    with NaNDetector(model, verbose=False) as detector:
        for step in range(4):
            optimizer.zero_grad()
            out = model(lucid.randn(3, 4))
            if step == 2:
                loss = lucid.log(out - out).mean()  # <loss-log>
            else:
                loss = out.pow(2).mean()
            loss.backward()
            optimizer.step()
    # The first event is at step 2, in the loss: not step 3's NaN weights in the layer.
    (event,) = detector.events
    assert (event.batch_idx, event.module_type, event.kind, event.phase) == (
        2, None, "inf", "loss")  # fmt: skip
    assert event.op.lower() == "log"
    assert event.location == f"{__file__}:{marked_line(__file__, 'loss-log')}"
    assert "outside the model" in event.mechanism


def test_a_backward_birth_is_reported_by_default_at_its_step_with_forward_line_and_module():
    model = _norm_model()
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(3, 4)).sum().backward()
        with lucid.no_grad():
            model.fc.weight.zero_()
            model.fc.bias.zero_()
        out = model(lucid.randn(3, 4))
        assert not detector.events  # the forwards stay finite
        out.sum().backward()
    (event,) = detector.events
    assert (event.batch_idx, event.layer_name, event.module_type) == (1, "norm", "_RootNorm")
    assert (event.kind, event.phase, event.is_backward) == ("inf", "backward", True)
    assert event.op.lower() == "sqrt"
    assert event.location == f"{__file__}:{marked_line(__file__, 'root-norm')}"


def test_a_backward_birth_in_the_loss_names_its_forward_line_not_the_backward_call():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))
    with NaNDetector(model, check_backward=True, verbose=False) as detector:
        out = model(lucid.randn(3, 4))
        loss = (out * 0.0).sqrt().sum()  # <loss-sqrt>
        assert not detector.events
        loss.backward()  # sqrt'(0) = inf
    (event,) = detector.events
    assert (event.batch_idx, event.module_type, event.phase) == (0, None, "backward")
    assert event.op.lower() == "sqrt"
    assert event.location == f"{__file__}:{marked_line(__file__, 'loss-sqrt')}"


def test_where_of_sqrt_of_a_negative_is_named_at_the_sqrt_in_the_loss():
    # sqrt of the negatives is computed and discarded by where: the NaN is born in that sqrt
    # (its backward only carries it on), so the sqrt's line and step are the report.
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))
    with NaNDetector(model, verbose=False) as detector:
        out = model(lucid.randn(3, 4))
        out = out - out.abs().max() - 1.0  # every value negative
        loss = lucid.where(out > 0, out.sqrt(), 0.0).sum()  # <where-sqrt>
        loss.backward()
    event = detector.event
    assert (event.batch_idx, event.module_type, event.kind) == (0, None, "nan")
    assert event.op.lower() == "sqrt"
    assert event.location == f"{__file__}:{marked_line(__file__, 'where-sqrt')}"


def test_a_birth_preparing_a_batch_is_an_event_of_the_step_that_batch_feeds():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))
    with NaNDetector(model, verbose=False) as detector:
        model(lucid.randn(3, 4))
        data = lucid.zeros(3, 4)
        batch = data / data.sum(dim=0)  # <prepare-batch>
        assert not detector.triggered
        model(batch)
    event = detector.event
    assert (event.batch_idx, event.module_type, event.kind, event.phase) == (
        1, None, "nan", "forward")  # fmt: skip
    assert event.op.lower() == "div"
    assert event.location == f"{__file__}:{marked_line(__file__, 'prepare-batch')}"


def test_check_backward_false_still_reports_forward_births_but_not_backward_ones():
    model = _norm_model()
    with lucid.no_grad():
        model.fc.weight.zero_()
        model.fc.bias.zero_()
    with NaNDetector(model, check_backward=False, verbose=False) as detector:
        model(lucid.randn(3, 4)).sum().backward()
    assert not detector.triggered
