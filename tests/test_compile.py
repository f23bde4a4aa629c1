"""lucid.compile: a call recorded once and replayed gives eager's results bitwise, breaks the
graph where a recording cannot hold the call, and keeps the NaN tiers' reports."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid._dynamo
import lucid.nn as nn
import lucid.nn.functional as F
from lucid._core.sentinel import reset_sentinel
from lucid._dynamo import recording as recording_module
from lucid._dynamo.exc import Unsupported
from lucid.autograd import NonFiniteWarning


def _arrays(values):
    return [None if v is None else np.array(v.detach().numpy(), copy=True) for v in values]


def _assert_bitwise(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            assert x.dtype == y.dtype and x.shape == y.shape
            assert np.array_equal(x, y, equal_nan=True), np.abs(x - y).max()


def _twin_models(build, seed=0):
    lucid.manual_seed(seed)
    first = build()
    second = build()
    second.load_state_dict(first.state_dict())
    return first, second


def _train_twins(build, make_batch, optimizer, steps=4, seed=0):
    """The same model trained eagerly and compiled: losses, parameters and gradients equal."""
    eager_model, compiled_model = _twin_models(build, seed)
    eager_opt = optimizer(eager_model.parameters())
    compiled_opt = optimizer(compiled_model.parameters())

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    compiled_step = lucid.compile(step)
    for index in range(steps):
        x, y = make_batch(index)
        lucid.manual_seed(100 + index)
        eager_loss = step(eager_model, eager_opt, x, y)
        lucid.manual_seed(100 + index)
        compiled_loss = compiled_step(compiled_model, compiled_opt, x, y)
        _assert_bitwise(_arrays([eager_loss]), _arrays([compiled_loss]))
        _assert_bitwise(
            _arrays([p for p in eager_model.parameters()]),
            _arrays([p for p in compiled_model.parameters()]),
        )
        _assert_bitwise(
            _arrays([p.grad for p in eager_model.parameters()]),
            _arrays([p.grad for p in compiled_model.parameters()]),
        )
    return compiled_step


def _batch(shape, classes):
    def make(index):
        rng = np.random.default_rng(index)
        x = lucid.tensor(rng.standard_normal(shape).astype(np.float32))
        y = lucid.tensor(rng.integers(0, classes, shape[0]))
        return x, y

    return make


def _replays(compiled_step):
    (recording,) = compiled_step._compiled_function.recordings.values()
    assert recording.broken is None
    return recording


def _replays_lean(compiled_step):
    return recording_module._LEAN_BACKWARD in {e[0] for e in _replays(compiled_step).entries}


def _grad_step(leaf, loss_of):
    """A step that backpropagates `loss_of(leaf)` and hands back its value and leaf's grad."""

    def step(leaf):
        loss = loss_of(leaf)
        loss.backward()
        grad = leaf.grad
        leaf.grad = None
        return loss.detach(), grad

    return step


def _check_replays_equal_eager(step, *args, calls=3):
    compiled = lucid.compile(step)
    expected = _arrays(step(*args))
    for _ in range(calls):
        _assert_bitwise(expected, _arrays(compiled(*args)))
    return compiled


def test_a_chain_replays_bitwise_and_lean():
    x = lucid.tensor(np.random.default_rng(0).standard_normal(16).astype(np.float32),
                     requires_grad=True)  # fmt: skip

    def chain(x):
        y = x
        for _ in range(10):
            y = (y * 1.01 + 0.1).tanh() * x
        return y.sum()

    compiled = _check_replays_equal_eager(_grad_step(x, chain), x)
    # its own backward consumed the graph: ops and backward replay without graph nodes
    assert _replays_lean(compiled)
    assert recording_module._LEAN_OP in {entry[0] for entry in _replays(compiled).entries}


def test_a_chain_whose_ops_all_have_array_kernels_replays_flat_and_bitwise():
    x = lucid.tensor(np.random.default_rng(0).standard_normal(16).astype(np.float32),
                     requires_grad=True)  # fmt: skip

    def step(x, bias):
        x.grad = None
        y = x
        for _ in range(10):
            y = (y * 1.01 + 0.1).tanh() * x + bias
            y = -(y.sigmoid() + y.relu() * 0.5).exp() + y
        y.sum().backward()
        return y

    bias = lucid.rand(16)
    expected = _arrays([step(x, bias), x.grad])
    compiled = lucid.compile(step)
    for _ in range(3):
        _assert_bitwise(expected, _arrays([compiled(x, bias), x.grad]))
    # the replay runs on arrays alone: no graph node, no tensor but what leaves the call
    assert _replays(compiled).flat is not None


def test_an_op_without_array_kernels_keeps_the_lean_replay():
    x = lucid.rand(8, requires_grad=True)
    compiled = _check_replays_equal_eager(_grad_step(x, lambda x: (x * 2.0).sin().sum()), x)
    assert _replays_lean(compiled) and _replays(compiled).flat is None


def _reported_births(compiled, make_args):
    """The births three calls report, each with `make_args()` and a fresh sentinel: recorded
    (eager), replayed lean (the flat form is built), flat (asserted)."""
    events = []
    for call in range(3):
        if call == 2:
            assert _replays(compiled).flat is not None
        reset_sentinel()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled(*make_args())
        events += [w.message.event for w in caught if isinstance(w.message, NonFiniteWarning)]
    return events


def _births_recorded_and_replayed(step, *args, make_args=None):
    """The birth each of three calls reports (`make_args()`'s arguments, made anew per call,
    where the step changes its own): the same facts, the replayed one returned."""
    events = _reported_births(lucid.compile(step), make_args or (lambda: args))
    recorded, lean, replayed = events
    facts = [(e.op, e.phase, e.filename, e.lineno, e.step, e.mechanism) for e in events]
    assert facts[0] == facts[1] == facts[2] and recorded.filename == __file__
    return replayed


def test_a_forward_birth_in_a_flat_replay_names_the_recorded_op_and_line():
    def step(x):
        x.grad = None
        (x * 3e38 * 10.0).sum().backward()  # the product overflows

    assert _births_recorded_and_replayed(step, lucid.ones(4, requires_grad=True)).op == "mul"


def test_a_backward_birth_in_a_flat_replay_names_the_recorded_op_and_line():
    def step(x):
        x.grad = None
        (x * 1e30 * 1e30).sum().backward()  # finite forward; the gradient 1e60 overflows

    event = _births_recorded_and_replayed(step, lucid.full((4,), 1e-30, requires_grad=True))
    assert (event.op, event.phase) == ("mul", "backward")


def test_an_mlp_step_with_sgd_equals_eager_and_replays_flat():
    build = lambda: nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))  # noqa: E731
    compiled = _train_twins(build, _batch((8, 20), 5),
                            lambda p: lucid.optim.SGD(p, lr=0.1, momentum=0.9))  # fmt: skip
    # modules, cross-entropy, the optimizer's zero_grad and step, and the detached loss: the
    # replay runs on arrays
    assert _replays(compiled).flat is not None


def _hand_written_step(params, x, y, lr=0.1):
    """An MLP step with its SGD update written out: addmm, log_softmax, gather, mean, and
    in-place updates of the parameters from their gradients under no_grad."""
    w1, b1, w2, b2 = params
    h = lucid.addmm(b1, x, w1.t()).relu()
    logits = lucid.addmm(b2, h, w2.t())
    loss = -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with lucid.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)
    return loss.detach()


def _hand_written_params(seed):
    rng = np.random.default_rng(seed)
    shapes = [(16, 12), (16,), (5, 16), (5,)]
    return [lucid.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
            for s in shapes]  # fmt: skip


def test_a_hand_written_sgd_step_replays_flat_bitwise_and_bumps_versions():
    eager_params, compiled_params = _hand_written_params(0), _hand_written_params(0)
    compiled = lucid.compile(_hand_written_step)
    for index in range(4):
        x, y = _batch((6, 12), 5)(index)
        eager_loss = _hand_written_step(eager_params, x, y)
        compiled_loss = compiled(compiled_params, x, y)
        _assert_bitwise(_arrays([eager_loss]), _arrays([compiled_loss]))
        _assert_bitwise(_arrays(eager_params), _arrays(compiled_params))
        _assert_bitwise(_arrays([p.grad for p in eager_params]),
                        _arrays([p.grad for p in compiled_params]))  # fmt: skip
        # an in-place update counts as a write, as in eager (a saved tensor's check reads it)
        assert [p._version for p in eager_params] == [p._version for p in compiled_params]
    assert _replays(compiled).flat is not None


def test_an_update_of_parameters_from_outside_the_call_replays_flat_and_bitwise():
    eager_params, compiled_params = _hand_written_params(2), _hand_written_params(2)

    def closing_over(params):
        def step(x, y):
            return _hand_written_step(params, x, y)

        return step

    eager, compiled = closing_over(eager_params), lucid.compile(closing_over(compiled_params))
    for index in range(4):
        x, y = _batch((6, 12), 5)(index)
        _assert_bitwise(_arrays([eager(x, y)]), _arrays([compiled(x, y)]))
        _assert_bitwise(_arrays(eager_params), _arrays(compiled_params))
        assert [p._version for p in eager_params] == [p._version for p in compiled_params]
    assert _replays(compiled).flat is not None


def test_a_returned_gradient_is_the_tensor_itself():
    x = lucid.rand(4, requires_grad=True)

    def step(x):
        x.grad = None
        (x * 2.0).sum().backward()
        return x.grad

    compiled = lucid.compile(step)
    for _ in range(3):
        returned = compiled(x)
        assert returned is x.grad
    np.testing.assert_array_equal(returned.numpy(), np.full(4, 2.0, np.float32))


def test_an_update_that_overflows_in_a_flat_replay_is_named_as_in_eager():
    x, y = _batch((6, 12), 5)(0)

    def make_args():
        params = _hand_written_params(1)
        with lucid.no_grad():
            params[3].fill_(3e38)  # the last bias: its update overflows to inf
        return params, x, y

    def two_steps(params, x, y):
        _hand_written_step(params, x, y, lr=-3e38)
        # the next backward meets the inf and names its birth
        return _hand_written_step(params, x, y, lr=-3e38)

    event = _births_recorded_and_replayed(two_steps, make_args=make_args)
    assert (event.op, event.phase, event.mechanism) == ("add_", "update", "overflow")


def test_a_backward_birth_in_a_flat_addmm_names_its_product_as_eager_does():
    def step(w, x, b):
        w.grad = None
        lucid.addmm(b, x, w).sum().backward()  # w's gradient x^T @ 1 overflows: 2 * 3e38

    x = lucid.full((2, 3), 3e38)
    w = lucid.full((3, 4), 1e-38, requires_grad=True)
    event = _births_recorded_and_replayed(step, w, x, lucid.zeros(4))
    assert event.phase == "backward"


def test_a_nan_in_the_batch_of_a_flat_replay_is_named_the_input():
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3))
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    x = lucid.ones(2, 4)
    x[0, 1] = float("nan")
    y = lucid.tensor([0, 2])
    events = _reported_births(lucid.compile(step), lambda: (x, y))
    # the line where the batch entered the model, as recorded; each call is a step
    facts = [(e.op, e.phase, e.filename, e.lineno, e.step) for e in events]
    line = step.__code__.co_firstlineno + 2
    assert facts == [("input", "input", __file__, line, n) for n in range(3)]


def test_a_cnn_step_with_adam_equals_eager():
    build = lambda: nn.Sequential(  # noqa: E731
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(4 * 4 * 4, 3),
    )  # fmt: skip
    compiled = _train_twins(build, _batch((4, 1, 8, 8), 3),
                            lambda p: lucid.optim.Adam(p, lr=1e-2))  # fmt: skip
    _replays(compiled)


def test_a_transformer_block_with_dropout_equals_eager():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True,
                                                    norm_first=True, activation="gelu")  # fmt: skip
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            return self.head(self.layer(x).mean(1))

    # dropout's masks are drawn by an op of their own, replayed in order
    compiled = _train_twins(Block, _batch((3, 5, 16), 4),
                            lambda p: lucid.optim.AdamW(p, lr=1e-3))  # fmt: skip
    assert _replays_lean(compiled)


def test_dropout_and_a_mean_over_a_dim_replay_flat_drawing_the_same_masks():
    def step(x):
        x.grad = None
        F.dropout(x * 2.0, 0.3, training=True).mean(1).sum().backward()

    x = lucid.rand(4, 6, requires_grad=True)
    twin = x.detach().clone().requires_grad_()
    compiled = lucid.compile(step)
    for seed in range(4):
        lucid.manual_seed(seed)
        step(x)
        lucid.manual_seed(seed)
        compiled(twin)
        _assert_bitwise(_arrays([x.grad]), _arrays([twin.grad]))
    assert _replays(compiled).flat is not None


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_a_transformer_block_replays_flat_and_bitwise(activation):
    def build():
        return nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True,
                                          norm_first=True, activation=activation)  # fmt: skip

    eager_layer, compiled_layer = _twin_models(build)
    mask = lucid.tensor(np.triu(np.full((5, 5), -np.inf, np.float32), 1))

    def step(layer, x):
        layer.zero_grad()
        x.grad = None
        layer(x, src_mask=mask, is_causal=True).sum().backward()

    compiled = lucid.compile(step)
    for index in range(4):
        data = np.random.default_rng(index).standard_normal((3, 5, 16)).astype(np.float32)
        x, twin = lucid.tensor(data, requires_grad=True), lucid.tensor(data, requires_grad=True)
        step(eager_layer, x)
        compiled(compiled_layer, twin)
        _assert_bitwise(_arrays([x.grad]), _arrays([twin.grad]))
        _assert_bitwise(_arrays([p.grad for p in eager_layer.parameters()]),
                        _arrays([p.grad for p in compiled_layer.parameters()]))  # fmt: skip
    # layer norm, attention (their forwards keep what their backwards read), unbind's several
    # outputs, the views and exact GELU: on arrays
    assert _replays(compiled).flat is not None


def test_a_forward_birth_in_a_flat_transformer_block_is_named_as_in_eager():
    lucid.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True,
                                       norm_first=True)  # fmt: skip
    with lucid.no_grad():
        layer.linear2.weight.fill_(1e38)  # finite, but its products' sums overflow
    data = np.random.default_rng(0).standard_normal((2, 3, 16)).astype(np.float32)

    def step(layer, x):
        layer.zero_grad()
        layer(x).sum().backward()

    events = _reported_births(lucid.compile(step), lambda: (layer, lucid.tensor(data)))
    facts = [(e.phase, e.mechanism, e.module_path, e.filename, e.lineno, e.step) for e in events]
    line = step.__code__.co_firstlineno + 2
    assert facts == [("forward", "overflow", "linear2", __file__, line, n) for n in range(3)]
    # the flat replay names the op as the lean one does
    assert events[2].op == events[1].op


def test_an_lstm_and_a_char_transformer_equal_eager():
    class CharModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(11, 8)
            self.lstm = nn.LSTM(8, 12, batch_first=True)
            self.head = nn.Linear(12, 11)

        def forward(self, tokens):
            output, _ = self.lstm(self.embed(tokens))
            return self.head(output[:, -1])

    def batch(index):
        rng = np.random.default_rng(index)
        return lucid.tensor(rng.integers(0, 11, (4, 6))), lucid.tensor(rng.integers(0, 11, 4))

    compiled = _train_twins(CharModel, batch, lambda p: lucid.optim.Adam(p, lr=1e-2))
    assert _replays_lean(compiled)


def test_a_graph_break_runs_eagerly_with_one_warning():
    x = lucid.ones(3, requires_grad=True)

    def reads(x):
        y = (x * 2).sum()
        if y.item() > 0:  # a host read
            return y * 3
        return y

    compiled = lucid.compile(reads)
    with pytest.warns(UserWarning, match=r"graph break.*item\(\)"):
        first = compiled(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = compiled(x)
    assert first.item() == second.item() == 18.0
    assert second.grad_fn is not None  # an eager run builds the graph


def test_fullgraph_raises_at_a_graph_break():
    compiled = lucid.compile(lambda x: lucid.tensor(x.tolist()), fullgraph=True)
    with pytest.raises(Unsupported, match=r"tolist\(\)"):
        compiled(lucid.ones(2))


def test_a_factory_inside_the_call_breaks_the_graph():
    def noisy(x):
        return x + lucid.randn(x.shape)

    compiled = lucid.compile(noisy)
    x = lucid.zeros(4)
    with pytest.warns(UserWarning, match="factory"):
        first = compiled(x)
    second = compiled(x)
    assert not np.array_equal(first.numpy(), second.numpy())  # fresh noise each call


def test_a_new_shape_records_anew():
    compiled = lucid.compile(lambda x: (x * 2).exp())
    for n in (2, 3, 2):
        x = lucid.arange(n, dtype=lucid.float32)
        _assert_bitwise(_arrays([(x * 2).exp()]), _arrays([compiled(x)]))
    assert len(compiled._compiled_function.recordings) == 2


def test_the_training_flag_is_a_guard():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    compiled = lucid.compile(model)
    x = lucid.ones(2, 4)
    model.eval()
    _assert_bitwise(_arrays([model(x)]), _arrays([compiled(x)]))
    model.train()
    lucid.manual_seed(3)
    expected = model(x)
    lucid.manual_seed(3)
    _assert_bitwise(_arrays([expected]), _arrays([compiled(x)]))


def test_a_compiled_module_is_an_optimized_module_with_a_working_backward():
    model = nn.Linear(3, 2)
    compiled = lucid.compile(model)
    assert isinstance(compiled, nn.Module) and compiled._orig_mod is model
    assert compiled.weight is model.weight
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = lucid.ones(4, 3)
    for _ in range(3):
        model.zero_grad()
        compiled(x).sum().backward()  # the graph outlives the call: it is built
        np.testing.assert_array_equal(model.bias.grad.numpy(), [4.0, 4.0])


def test_a_replaced_parameter_records_anew():
    model = nn.Linear(2, 1)
    compiled = lucid.compile(model)
    x = lucid.ones(1, 2)
    compiled(x)
    model.weight = nn.Parameter(lucid.full((1, 2), 5.0))
    assert compiled(x).item() == pytest.approx(10.0 + model.bias.item())


def test_a_birth_in_a_replay_names_the_recorded_op_line_and_module():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(x).log()  # negative outputs: a NaN is born here

    model = Model()
    with lucid.no_grad():
        model.fc.weight.fill_(-1.0)
        model.fc.bias.fill_(0.0)
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        return loss.detach()

    compiled = lucid.compile(step)
    x = lucid.ones(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reset_sentinel()
        compiled(x)  # recorded (eager)
        reset_sentinel()
        compiled(x)  # replayed
    events = [w.message.event for w in caught if isinstance(w.message, NonFiniteWarning)]
    assert len(events) == 2
    recorded, replayed = events
    assert replayed.op == recorded.op == "log"
    assert (replayed.filename, replayed.lineno) == (recorded.filename, recorded.lineno)
    assert replayed.lineno is not None and replayed.filename == __file__
    assert replayed.module_path == recorded.module_path


def test_an_unavailable_backend_says_so():
    with pytest.raises(RuntimeError, match="backend 'cudagraphs' is not available"):
        lucid.compile(lambda x: x, backend="cudagraphs")
    assert lucid.compile(lambda x: x * 2, backend="eager")(lucid.ones(1)).item() == 2.0


def test_disable_returns_the_function_and_reset_forgets_recordings():
    function = lambda x: x + 1  # noqa: E731
    assert lucid.compile(function, disable=True) is function
    compiled = lucid.compile(function)
    compiled(lucid.ones(1))
    assert compiled._compiled_function.recordings
    lucid._dynamo.reset()
    assert not compiled._compiled_function.recordings


def test_is_compiling_while_recording():
    seen = []
    compiled = lucid.compile(lambda x: seen.append(lucid._dynamo.is_compiling()) or x * 1)
    compiled(lucid.ones(1))
    assert seen == [True] and not lucid._dynamo.is_compiling()


def test_a_complex_step_replays_lean_with_complex_gradients():
    z = lucid.tensor([1.0 + 2.0j, -0.5 + 0.25j], requires_grad=True)

    step = _grad_step(z, lambda z: (z.exp() * z.conj()).abs().sum())
    assert _replays_lean(_check_replays_equal_eager(step, z))


def test_a_backward_birth_in_a_lean_replay_names_the_recorded_forward_line():
    weight = lucid.zeros(3, requires_grad=True)

    def step(x):
        loss = (weight * x).sqrt().sum()  # sqrt at 0: its backward divides by zero
        loss.backward()
        grad = weight.grad
        weight.grad = None
        return grad

    compiled = lucid.compile(step)
    x = lucid.ones(3)
    events = []
    for _ in range(2):
        reset_sentinel()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled(x)
        events += [w.message.event for w in caught if isinstance(w.message, NonFiniteWarning)]
    assert _replays_lean(compiled)
    recorded, replayed = events
    assert replayed.phase == recorded.phase == "backward"
    assert replayed.op == recorded.op == "sqrt"
    assert (replayed.filename, replayed.lineno) == (recorded.filename, recorded.lineno)
    assert replayed.filename == __file__


def test_a_module_hook_breaks_the_graph_and_runs_on_every_call():
    model = nn.Linear(2, 2)
    calls = []
    handle = lucid.nn.modules.module.register_module_forward_hook(
        lambda module, args, output: calls.append(1)
    )
    try:
        compiled = lucid.compile(model)
        with pytest.warns(UserWarning, match="has hooks"):
            compiled(lucid.ones(1, 2))
        compiled(lucid.ones(1, 2))
    finally:
        handle.remove()
    assert len(calls) == 2


def test_a_call_that_raised_is_recorded_anew_and_fullgraph_keeps_raising():
    state = {"fail": True}

    def flaky(x):
        if state["fail"]:
            raise ValueError("transient")
        return x * 2

    compiled = lucid.compile(flaky)
    with pytest.raises(ValueError):
        compiled(lucid.ones(2))
    state["fail"] = False
    assert compiled(lucid.ones(2)).tolist() == [2.0, 2.0]
    assert _replays(compiled).entries
    strict = lucid.compile(lambda x: lucid.tensor(x.tolist()), fullgraph=True)
    for _ in range(2):
        with pytest.raises(Unsupported):
            strict(lucid.ones(2))


def test_a_replayed_backward_adopts_first_gradients_as_eager_does():
    x = lucid.randn(4, 5)
    layer = nn.Linear(5, 3)

    @lucid.compile
    def step(inputs):
        layer.weight.grad = layer.bias.grad = None
        layer(inputs).sum().backward()

    for _ in range(3):  # the first call records, the others replay
        step(x)
    # kept as the backward made it (a view of its product), not copied into memory of its own
    assert layer.weight.grad.numpy().base is not None
    np.testing.assert_allclose(
        layer.weight.grad.numpy(), np.tile(x.sum(0).numpy(), (3, 1)), rtol=1e-6
    )


def test_a_replay_writes_the_gradient_of_the_leaf_this_call_passed():
    def step(x):
        (x * 2.0).tanh().sum().backward()

    compiled = lucid.compile(step)
    leaves = [lucid.randn(4, requires_grad=True) for _ in range(3)]
    for leaf in leaves:  # one guard set: the first call records, the others replay
        compiled(leaf)
    for leaf in leaves:
        twin = leaf.detach().clone().requires_grad_()
        step(twin)
        _assert_bitwise(_arrays([leaf.grad]), _arrays([twin.grad]))


def test_a_replay_runs_a_leaf_hook_registered_after_the_recording():
    weight = lucid.randn(4, requires_grad=True)

    @lucid.compile
    def step():
        weight.grad = None
        (weight * 3.0).sum().backward()

    step()
    step()
    weight.register_hook(lambda grad: grad * 2)
    step()
    assert weight.grad.tolist() == [6.0] * 4


def test_a_module_hook_registered_after_the_recording_runs_eagerly():
    layer = nn.Linear(3, 2)
    compiled = lucid.compile(layer)
    x = lucid.randn(2, 3)
    compiled(x)
    compiled(x)
    seen = []
    layer.register_forward_hook(lambda module, inputs, output: seen.append(output.shape))
    with pytest.warns(UserWarning, match="graph break"):
        compiled(x)
    assert seen == [(2, 2)]


def test_a_replay_leaves_a_thread_that_kept_the_sentinels_default_on_the_default():
    from lucid._core.grad_mode import local_state

    x = lucid.randn(4, requires_grad=True)
    compiled = lucid.compile(_grad_step(x, lambda x: (x * 2.0).exp().sum()))
    kept = "records_forward_sites" not in local_state.__dict__
    for _ in range(3):
        compiled(x)
    assert ("records_forward_sites" not in local_state.__dict__) is kept


def test_an_in_place_op_keeps_the_lean_replay_and_writes_its_input():
    def step(x):
        x.grad = None
        y = x * 2.0
        y.mul_(3.0)
        y.sum().backward()
        return y

    x = lucid.rand(5, requires_grad=True)
    expected = _arrays([step(x), x.grad])
    compiled = lucid.compile(step)
    for _ in range(3):
        _assert_bitwise(expected, _arrays([compiled(x), x.grad]))
    assert _replays(compiled).flat is None


def test_a_flat_replay_returns_its_argument_itself_and_one_tensor_per_value():
    def step(x):
        x.grad = None
        y = (x * 2.0).tanh()
        y.sum().backward()
        return x, y, y

    x = lucid.rand(4, requires_grad=True)
    compiled = lucid.compile(step)
    for _ in range(3):
        returned, y, again = compiled(x)
    assert _replays(compiled).flat is not None
    assert returned is x and y is again
    np.testing.assert_array_equal(y.numpy(), np.tanh(x.detach().numpy() * np.float32(2.0)))
