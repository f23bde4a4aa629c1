"""NaNDetector on real small models: where a NaN or Inf is born, the detector names that layer,
op, kind and step, and never a later layer (issue 5, section 4)."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.debug import NaNDetector, NaNEvent, train_with_nan_guard
from tests.markers import marked_line


@pytest.fixture(autouse=True)
def _quiet_sentinel() -> Iterator[None]:
    # These scenarios provoke non-finite values on purpose; the sentinel's own warnings about
    # them are tested in tests/autograd.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _only_event(detector: NaNDetector) -> NaNEvent:
    """The step's one event: with stop_on_first=False every later layer that carried the
    value on would have added its own event if it were blamed."""
    assert len(detector.events) == 1, [event.headline() for event in detector.events]
    return detector.events[0]


def _cnn() -> nn.Module:
    features = nn.Sequential(
        OrderedDict(
            conv1=nn.Conv2d(1, 4, 3, padding=1),
            relu1=nn.ReLU(),
            conv2=nn.Conv2d(4, 8, 3, padding=1),
            relu2=nn.ReLU(),
            pool=nn.MaxPool2d(2),
        )
    )
    classifier = nn.Sequential(OrderedDict(flatten=nn.Flatten(), fc=nn.Linear(8 * 4 * 4, 3)))
    return nn.Sequential(OrderedDict(features=features, classifier=classifier))


class _Block(nn.Module):
    """A pre-norm transformer block: attention over a key padding mask, then an MLP."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, 2, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 32), nn.ReLU(), nn.Linear(32, width))

    def forward(self, x: lucid.Tensor, padding: lucid.Tensor) -> lucid.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, key_padding_mask=padding)[0]
        return x + self.mlp(self.norm2(x))


class _Transformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(4, 16)
        self.block = _Block()
        self.head = nn.Linear(16, 2)

    def forward(self, x: lucid.Tensor, padding: lucid.Tensor) -> lucid.Tensor:
        return self.head(self.block(self.embed(x), padding))


def test_nan_born_in_a_conv_names_that_conv_not_the_layers_after_it():
    model = _cnn()
    x = lucid.randn(2, 1, 8, 8)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(x)
        model(x)
        with lucid.no_grad():
            # Finite inputs and weights whose products overflow in conv2's GEMM. (Its sums
            # stay +inf: a fused multiply-add never rounds a product to -inf, so finite
            # values make nan in a conv only through a later inf - inf.)
            model.features.conv1.bias.fill_(5.0)
            model.features.conv2.weight.fill_(3e38)
        model(x)
    event = _only_event(detector)
    assert (event.layer_name, event.module_type) == ("features.conv2", "Conv2d")
    assert (event.op, event.kind, event.batch_idx) == ("conv2d", "inf", 2)
    assert event.mechanism.startswith("overflow")
    assert not event.input_has_nan and not event.input_has_inf
    # classifier.fc turns the inf into nan (inf - inf): a later birth, not blamed.


def test_fully_masked_attention_row_names_the_softmax_in_the_attention_module():
    model = _Transformer()
    x = lucid.randn(2, 5, 4)
    padding = lucid.zeros(2, 5, dtype=lucid.bool)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(x, padding)
        padding[1] = True  # every key of the second sequence is padding
        model(x, padding)
    event = _only_event(detector)
    assert (event.layer_name, event.module_type) == ("block.attn", "MultiheadAttention")
    assert (event.op, event.kind, event.batch_idx) == ("softmax", "nan", 1)
    assert event.location.endswith(f"{__file__}:{_line_of('self.attn(h, h, h')}")


def _line_of(text: str) -> int:
    with open(__file__) as source:
        for number, line in enumerate(source, 1):
            if text in line and "_line_of" not in line:
                return number
    raise AssertionError(text)


class _LogBetween(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        h = self.act(self.fc1(x))
        h = lucid.log(h)  # relu's zeros make -inf here, between two modules
        return self.fc2(h)


def test_functional_op_between_modules_names_the_module_that_ran_it_not_the_consumer():
    model = _LogBetween()
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(6, 4))
    event = _only_event(detector)
    # fc2 turns the -inf into nan (inf - inf) and would be a forward hook's answer.
    assert (event.layer_name, event.module_type) == ("", "_LogBetween")
    assert (event.op, event.kind, event.batch_idx) == ("log", "inf", 0)
    assert event.mechanism.startswith("division by zero")
    assert event.location.endswith(f"{__file__}:{_line_of('h = lucid.log(h)')}")


def test_functional_op_inside_a_container_names_that_container():
    inner = _LogBetween()
    model = nn.Sequential(OrderedDict(stem=nn.Linear(4, 4), body=inner, head=nn.Linear(2, 1)))
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(6, 4))
    event = _only_event(detector)
    assert (event.layer_name, event.module_type, event.op) == ("body", "_LogBetween", "log")


def test_layer_norm_of_a_constant_row_with_zero_eps_names_the_norm():
    model = nn.Sequential(
        OrderedDict(fc=nn.Linear(4, 4), norm=nn.LayerNorm(4, eps=0.0), head=nn.Linear(4, 2))
    )
    with lucid.no_grad():
        model.fc.weight.zero_()  # every row of fc's output is its bias: constant
        model.fc.bias.fill_(0.5)
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        model(lucid.randn(3, 4))
    event = _only_event(detector)
    assert (event.layer_name, event.module_type) == ("norm", "LayerNorm")
    assert (event.op, event.kind, event.batch_idx) == ("layer_norm", "nan", 0)
    assert event.stats["nan_count"] == 12


class _RootNorm(nn.Module):
    """sqrt of the sum of squares: finite forward, infinite derivative at a zero row."""

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        return lucid.sqrt((x * x).sum(-1, keepdim=True))  # <root-norm-sqrt>


def test_nan_born_only_in_backward_names_the_module_whose_forward_recorded_the_op():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 4), norm=_RootNorm(), head=nn.Linear(1, 1)))
    x = lucid.randn(3, 4)
    with NaNDetector(model, check_backward=True, stop_on_first=False, verbose=False) as detector:
        model(x).sum().backward()
        with lucid.no_grad():
            model.fc.weight.zero_()
            model.fc.bias.zero_()
        out = model(x)
        assert not detector.events  # the forward stays finite
        out.sum().backward()
    event = _only_event(detector)
    assert (event.layer_name, event.module_type) == ("norm", "_RootNorm")
    assert (event.op, event.kind, event.batch_idx) == ("sqrt", "inf", 1)
    assert event.is_backward and event.phase == "backward"
    assert event.mechanism.startswith("division by zero")
    # the forward line of the op whose backward made the value, not the backward() call
    assert event.location == f"{__file__}:{marked_line(__file__, 'root-norm-sqrt')}"


def test_backward_births_are_not_events_without_check_backward():
    model = nn.Sequential(OrderedDict(fc=nn.Linear(4, 4), norm=_RootNorm()))
    with lucid.no_grad():
        model.fc.weight.zero_()
        model.fc.bias.zero_()
    with NaNDetector(model, check_backward=False, verbose=False) as detector:
        model(lucid.randn(3, 4)).sum().backward()
    assert not detector.triggered


def test_bad_input_batch_is_reported_as_received_with_no_module_blamed():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    batches = [lucid.randn(5, 4) for _ in range(4)]
    batches[2][3, 1] = float("nan")
    with NaNDetector(model, stop_on_first=False, verbose=False) as detector:
        for batch in batches:
            model(batch)
    event = _only_event(detector)
    assert (event.phase, event.layer_name, event.module_type) == ("input", "", None)
    assert (event.op, event.kind, event.batch_idx, event.received) == ("input", "nan", 2, True)
    assert event.input_has_nan and event.stats["nan_count"] == 1
    assert event.output_shape == (5, 4)


def test_exploding_learning_rate_names_the_layer_whose_matmul_overflows_first():
    rng = np.random.default_rng(0)
    batches = [
        (lucid.tensor(rng.standard_normal((16, 8)).astype(np.float32)),
         lucid.tensor(rng.standard_normal((16, 1)).astype(np.float32)))
        for _ in range(10)
    ]  # fmt: skip
    model = nn.Sequential(
        OrderedDict(fc1=nn.Linear(8, 32), act1=nn.ReLU(), fc2=nn.Linear(32, 32), act2=nn.ReLU(),
                    out=nn.Linear(32, 1))
    )  # fmt: skip
    optimizer = lucid.optim.SGD(model.parameters(), lr=1e4)
    weights_after_last_step = {}
    original_step = optimizer.step

    def step() -> None:
        original_step()
        weights_after_last_step.update(
            {name: param.detach().numpy().copy() for name, param in model.named_parameters()}
        )

    optimizer.step = step
    losses, event = train_with_nan_guard(
        model, batches, nn.MSELoss(), optimizer, stop_on_first=False, verbose=False
    )
    # Two updates grow the weights past 1e21; the third forward overflows in fc2's matmul.
    assert len(losses) == 3 and np.isinf(losses[-1])
    assert (event.layer_name, event.module_type) == ("fc2", "Linear")
    assert (event.op, event.kind, event.batch_idx) == ("linear", "inf", 2)
    assert event.mechanism.startswith("overflow")
    # The guard stopped before the update of the bad batch: the weights are those of batch 1.
    for name, param in model.named_parameters():
        np.testing.assert_array_equal(param.detach().numpy(), weights_after_last_step[name])
