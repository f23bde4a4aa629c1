"""Activation checkpointing gives the plain run's gradients, replays dropout's mask, and
matches torch.utils.checkpoint's gradients, warnings and errors."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import lucid
from lucid.utils.checkpoint import (
    CheckpointError,
    CheckpointFunction,
    check_backward_validity,
    checkpoint,
    checkpoint_sequential,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)
from tests.torch_oracle import requires_torch, torch


def _mlp(dropout: float = 0.0) -> lucid.nn.Sequential:
    layers = [lucid.nn.Linear(4, 6), lucid.nn.Tanh()]
    if dropout:
        layers.append(lucid.nn.Dropout(dropout))
    layers += [lucid.nn.Linear(6, 6), lucid.nn.Sigmoid(), lucid.nn.Linear(6, 3)]
    return lucid.nn.Sequential(*layers).double()


def _grads(model, x):
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    if x.requires_grad:
        grads.append(x.grad.numpy().copy())
    model.zero_grad(set_to_none=True)
    x.grad = None
    return grads


def _plain_and_checkpointed(model, x, run, seed=1):
    lucid.manual_seed(seed)
    model(x).square().sum().backward()
    plain = _grads(model, x)
    lucid.manual_seed(seed)
    run(model, x).square().sum().backward()
    return plain, _grads(model, x)


def _assert_close(actual, expected, tolerance=1e-12):
    assert len(actual) == len(expected)
    for a, b in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=tolerance)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpointed_gradients_equal_the_plain_ones(use_reentrant):
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    plain, ours = _plain_and_checkpointed(
        model, x, lambda m, v: checkpoint(m, v, use_reentrant=use_reentrant)
    )
    _assert_close(ours, plain)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_replays_the_forward_mask(use_reentrant):
    model = _mlp(dropout=0.5)
    x = lucid.randn(8, 4, dtype=lucid.float64, requires_grad=True)
    plain, ours = _plain_and_checkpointed(
        model, x, lambda m, v: checkpoint(m, v, use_reentrant=use_reentrant)
    )
    _assert_close(ours, plain)


def test_without_preserve_rng_state_dropout_draws_a_new_mask():
    # The counterpart of the test above: without the restored state the replay differs.
    model = _mlp(dropout=0.5)
    x = lucid.randn(8, 4, dtype=lucid.float64, requires_grad=True)
    plain, ours = _plain_and_checkpointed(
        model,
        x,
        lambda m, v: checkpoint(m, v, use_reentrant=False, preserve_rng_state=False),
    )
    assert not np.allclose(ours[0], plain[0])


def test_the_replay_leaves_the_generator_where_the_forward_left_it():
    model = _mlp(dropout=0.5)
    x = lucid.randn(8, 4, dtype=lucid.float64)
    lucid.manual_seed(3)
    model(x).sum().backward()
    plain_next = lucid.rand(4).numpy()
    lucid.manual_seed(3)
    checkpoint(model, x, use_reentrant=False).sum().backward()
    np.testing.assert_array_equal(lucid.rand(4).numpy(), plain_next)


def test_parameters_get_gradients_when_no_input_requires_grad():
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64)
    output = checkpoint(model, x, use_reentrant=False)
    assert output.requires_grad
    plain, ours = _plain_and_checkpointed(
        model, x, lambda m, v: checkpoint(m, v, use_reentrant=False)
    )
    assert len(ours) == len(list(model.parameters()))
    _assert_close(ours, plain)


def test_reentrant_with_no_input_requiring_grad_warns_as_torch():
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64)
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True"):
        checkpoint(model, x, use_reentrant=True)


def test_kwargs_and_non_tensor_args_and_outputs_pass_through():
    weight = lucid.randn(3, 3, dtype=lucid.float64, requires_grad=True)

    def region(x, power, *, scale, label):
        y = (x @ weight).tanh() ** power * scale
        return {"y": y, "label": label, "parts": (y.sum(), 7)}

    x = lucid.randn(2, 3, dtype=lucid.float64, requires_grad=True)
    plain = region(x, 2, scale=1.5, label="a")
    lucid.autograd.backward([plain["y"].sum(), plain["parts"][0] * 2])
    expected = [weight.grad.numpy().copy(), x.grad.numpy().copy()]
    weight.grad = x.grad = None

    ours = checkpoint(region, x, 2, use_reentrant=False, scale=1.5, label="a")
    assert ours["label"] == "a" and ours["parts"][1] == 7
    np.testing.assert_array_equal(ours["y"].detach().numpy(), plain["y"].detach().numpy())
    lucid.autograd.backward([ours["y"].sum(), ours["parts"][0] * 2])
    _assert_close([weight.grad.numpy(), x.grad.numpy()], expected)


def test_outputs_that_did_not_require_grad_still_do_not():
    def region(x):
        return x * 2, (x * 3).detach(), lucid.tensor([1, 2])

    x = lucid.randn(3, requires_grad=True)
    differentiable, detached, integers = checkpoint(region, x, use_reentrant=False)
    assert differentiable.requires_grad
    assert not detached.requires_grad and not integers.requires_grad


def test_a_captured_non_leaf_tensor_passes_its_gradient_on():
    w = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    scale = w.exp()
    (x * scale).sin().sum().backward()
    expected = [w.grad.numpy().copy(), x.grad.numpy().copy()]
    w.grad = x.grad = None
    scale = w.exp()
    checkpoint(lambda v: (v * scale).sin(), x, use_reentrant=False).sum().backward()
    _assert_close([w.grad.numpy(), x.grad.numpy()], expected)


def test_autograd_grad_with_inputs_works_without_reentrance():
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    weight = model[0].weight
    expected = lucid.autograd.grad(model(x).sum(), [weight, x])
    ours = lucid.autograd.grad(checkpoint(model, x, use_reentrant=False).sum(), [weight, x])
    _assert_close([g.numpy() for g in ours], [g.numpy() for g in expected])
    assert weight.grad is None


def test_under_no_grad_the_function_just_runs():
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    with lucid.no_grad():
        output = checkpoint(model, x, use_reentrant=False)
    assert not output.requires_grad and output.grad_fn is None


def test_context_fn_wraps_the_forward_and_the_replay():
    entered = []

    @contextlib.contextmanager
    def note(name):
        entered.append(name)
        yield

    x = lucid.randn(3, requires_grad=True)
    output = checkpoint(
        lambda v: v.sin(),
        x,
        use_reentrant=False,
        context_fn=lambda: (note("forward"), note("recompute")),
    )
    assert entered == ["forward"]
    output.sum().backward()
    assert entered == ["forward", "recompute"]


def test_a_replay_with_other_shapes_raises_checkpoint_error():
    calls = []

    def region(x):
        calls.append(None)
        return x[: len(calls)].exp()  # exp saves its output, whose shape then differs

    x = lucid.randn(4, requires_grad=True)
    output = checkpoint(region, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="have different metadata than during the forward"):
        output.sum().backward()


def test_a_region_that_saves_nothing_is_never_recomputed():
    # as in torch: x * 2 saves no tensor, so backward needs no recomputation to check
    calls = []

    def region(x):
        calls.append(None)
        return x[: len(calls)] * 2

    x = lucid.randn(4, requires_grad=True)
    checkpoint(region, x, use_reentrant=False).sum().backward()
    assert len(calls) == 1
    assert x.grad.tolist() == [2.0, 0.0, 0.0, 0.0]


def test_determinism_check_none_leaves_a_changed_replay_unchecked():
    calls = []

    def region(x):
        calls.append(None)
        return x[: 4 - len(calls)].exp()

    x = lucid.randn(4, requires_grad=True)
    output = checkpoint(region, x, use_reentrant=False, determinism_check="none")
    # As in torch, the mismatch then surfaces as a plain RuntimeError further on.
    with pytest.raises(RuntimeError) as caught:
        output.sum().backward()
    assert not isinstance(caught.value, CheckpointError)


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("functions", ["sequential", "list"])
def test_checkpoint_sequential_gradients_equal_the_plain_ones(use_reentrant, functions):
    model = _mlp(dropout=0.3)
    x = lucid.randn(6, 4, dtype=lucid.float64, requires_grad=True)
    layers = model if functions == "sequential" else list(model.children())
    plain, ours = _plain_and_checkpointed(
        model,
        x,
        lambda m, v: checkpoint_sequential(layers, 3, v, use_reentrant=use_reentrant),
    )
    _assert_close(ours, plain)


def test_reentrant_backward_is_named_as_torch_names_it():
    x = lucid.randn(3, requires_grad=True)
    output = checkpoint(lambda v: v * 2, x, use_reentrant=True)
    assert output.grad_fn.name() == "CheckpointFunctionBackward"


def test_checkpoint_function_takes_torchs_arguments():
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    plain, ours = _plain_and_checkpointed(
        model, x, lambda m, v: CheckpointFunction.apply(m, True, v)
    )
    _assert_close(ours, plain)


def test_check_backward_validity_warns_only_without_a_tensor_requiring_grad():
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True"):
        check_backward_validity((lucid.ones(2), 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_backward_validity((lucid.ones(2, requires_grad=True), 3))


def _null_contexts():
    return contextlib.nullcontext(), contextlib.nullcontext()


def test_global_debug_with_a_context_fn_raises():
    x = lucid.randn(3, requires_grad=True)
    with set_checkpoint_debug_enabled(True):
        with pytest.raises(ValueError, match="^debug=True is incompatible with non-default"):
            checkpoint(
                lambda v: v,
                x,
                use_reentrant=False,
                context_fn=_null_contexts,
            )
    # Outside the block each call's own debug counts again.
    checkpoint(lambda v: v, x, use_reentrant=False, context_fn=_null_contexts)


def test_early_stop_is_accepted_and_the_gradients_stay_exact():
    model = _mlp()
    x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
    with set_checkpoint_early_stop(False):
        plain, ours = _plain_and_checkpointed(
            model, x, lambda m, v: checkpoint(m, v, use_reentrant=False, early_stop=False)
        )
    _assert_close(ours, plain)


@requires_torch
def test_gradients_match_torch():
    torch_model = torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3)
    ).double()
    model = lucid.nn.Sequential(lucid.nn.Linear(4, 6), lucid.nn.Tanh(), lucid.nn.Linear(6, 3))
    model = model.double()
    model.load_state_dict(
        {key: lucid.tensor(value.numpy()) for key, value in torch_model.state_dict().items()}
    )
    data = np.random.default_rng(0).standard_normal((5, 4))
    torch_x = torch.tensor(data, requires_grad=True)
    x = lucid.tensor(data, requires_grad=True)
    torch.utils.checkpoint.checkpoint(torch_model, torch_x, use_reentrant=False).pow(
        2
    ).sum().backward()
    checkpoint(model, x, use_reentrant=False).square().sum().backward()
    theirs = [p.grad.numpy() for p in torch_model.parameters()] + [torch_x.grad.numpy()]
    _assert_close([p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()], theirs)


def _torch_message(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as error:  # noqa: BLE001 - the message is the subject
            return type(error), str(error)
    return UserWarning, str(caught[0].message)


def _torch_to_lucid(message):
    return message.replace("torch.utils.checkpoint", "lucid.utils.checkpoint")


@requires_torch
@pytest.mark.parametrize(
    "case",
    [
        "use_reentrant_missing",
        "sequential_use_reentrant_missing",
        "reentrant_kwargs",
        "reentrant_context_fn",
        "reentrant_debug",
        "bad_determinism_check",
        "sequential_kwargs",
    ],
)
def test_warnings_and_errors_match_torch(case):
    def calls(module, library):
        x = library.ones(2, requires_grad=True)
        layers = [module.nn.Identity(), module.nn.Identity()]
        sequential = library.utils.checkpoint.checkpoint_sequential
        single = library.utils.checkpoint.checkpoint
        return {
            "use_reentrant_missing": lambda: single(lambda v: v * 2, x),
            "sequential_use_reentrant_missing": lambda: sequential(layers, 2, x),
            "reentrant_kwargs": lambda: single(lambda v: v, x, use_reentrant=True, scale=2),
            "reentrant_context_fn": lambda: single(
                lambda v: v, x, use_reentrant=True, context_fn=lambda: None
            ),
            "reentrant_debug": lambda: single(lambda v: v, x, use_reentrant=True, debug=True),
            "bad_determinism_check": lambda: single(
                lambda v: v, x, use_reentrant=False, determinism_check="shapes"
            ),
            "sequential_kwargs": lambda: sequential(layers, 2, x, use_reentrant=False, debug=1),
        }[case]

    import torch.utils.checkpoint  # noqa: F401 - the attribute path below needs it loaded

    kind, message = _torch_message(calls(torch, torch))
    ours = _torch_message(calls(lucid, lucid))
    assert ours == (kind, _torch_to_lucid(message))


# ------------------------------------------------------------- the NaN tiers and recomputation
def _nonfinite_event(action):
    from lucid.autograd import NonFiniteWarning

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        action()
    found = [w.message.event for w in record if issubclass(w.category, NonFiniteWarning)]
    assert len(found) == 1, [str(event) for event in found]
    return found[0]


class _SqrtBlock(lucid.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = lucid.nn.Linear(3, 3)

    def forward(self, x):
        return (self.linear(x) * 0).sqrt()  # <checkpointed-sqrt>


def _marked_line(marker: str) -> int:
    from pathlib import Path

    from tests.markers import marked_line

    return marked_line(Path(__file__).resolve(), marker)


@pytest.mark.parametrize("use_reentrant", [False])
def test_a_backward_birth_in_a_recomputed_region_is_named_at_its_forward_site(use_reentrant):
    # sqrt's gradient at 0 is inf: born in backward, which runs on the recomputation's values,
    # and named at the line of the forward call, with the module that made it
    from lucid._core import sentinel

    sentinel.reset_sentinel()
    model = lucid.nn.Sequential(_SqrtBlock())
    x = lucid.randn(2, 3)
    try:
        output = checkpoint(model, x, use_reentrant=use_reentrant)
        event = _nonfinite_event(lambda: output.sum().backward())
    finally:
        sentinel.reset_sentinel()
    assert (event.op, event.phase, event.kind) == ("sqrt", "backward", "inf")
    assert event.lineno == _marked_line("checkpointed-sqrt")
    assert event.filename == __file__
    assert event.module_path == "0"


def _log_of_zero(weight):
    return (weight * 0).log()  # <checkpointed-log>


def test_a_forward_birth_is_reported_once_and_at_its_forward_site_despite_recomputation():
    # log(0) is born in the forward; the recomputation in backward makes it again, which is
    # not a second birth, and the report is the one a plain run gives
    from lucid._core import sentinel

    def run(wrap):
        sentinel.reset_sentinel()
        weight = lucid.ones(3, requires_grad=True)
        try:
            return _nonfinite_event(lambda: wrap(_log_of_zero, weight).sum().backward())
        finally:
            sentinel.reset_sentinel()

    plain = run(lambda function, weight: function(weight))
    ours = run(lambda function, weight: checkpoint(function, weight, use_reentrant=False))
    assert (ours.op, ours.phase, ours.kind) == ("log", "forward", "inf")
    assert ours.lineno == _marked_line("checkpointed-log")
    fields = ("op", "phase", "kind", "created", "filename", "lineno", "module_path", "step")
    assert [getattr(ours, f) for f in fields] == [getattr(plain, f) for f in fields]


def test_double_backward_through_a_checkpointed_region_is_exact():
    # create_graph: the recomputation then keeps its graph, from the region's own inputs
    model = _mlp()
    x = lucid.randn(2, 4, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradgradcheck(
        lambda value: checkpoint(model, value, use_reentrant=False).square().sum(), (x,)
    )


def test_recomputed_values_are_handed_out_once_and_recomputed_for_a_second_backward():
    calls = []

    def region(value):
        calls.append(None)
        return value.exp()

    x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    output = checkpoint(region, x, use_reentrant=False).sum()
    (first,) = lucid.autograd.grad(output, x, retain_graph=True)
    (second,) = lucid.autograd.grad(output, x)
    assert len(calls) == 3  # the forward, then one recomputation per backward
    np.testing.assert_array_equal(first.numpy(), second.numpy())


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop_ends_the_recomputation_at_the_last_saved_tensor(early_stop):
    trace = []

    def region(value):
        trace.append("start")
        result = value.exp()  # the region's one saved tensor
        trace.append("end")
        return result * 2

    x = lucid.randn(3, requires_grad=True)
    with set_checkpoint_early_stop(early_stop):
        output = checkpoint(region, x, use_reentrant=False)
        output.sum().backward()
    assert trace == ["start", "end", "start"] + ([] if early_stop else ["end"])
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()), rtol=1e-6)
