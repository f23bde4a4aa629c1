"""nn.Module and nn.Parameter: registration, naming, state dicts, repr, hooks and module paths."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn.modules import module as module_module
from tests.torch_oracle import requires_torch, torch

pytestmark = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled",
    "ignore:Error detected in",
    "ignore:Full backward hook is firing",
)


class Affine(nn.Module):
    """A Linear-like layer written from lucid ops, to test Module without nn layers."""

    def __init__(self, in_features: int, out_features: int, dtype=lucid.float32) -> None:
        super().__init__()
        self.weight = nn.Parameter(lucid.randn(out_features, in_features, dtype=dtype))
        self.bias = nn.Parameter(lucid.zeros(out_features, dtype=dtype))
        self.register_buffer("running", lucid.zeros(out_features, dtype=dtype))
        self.register_buffer("scratch", lucid.zeros(1, dtype=dtype), persistent=False)

    def forward(self, x):
        return x @ self.weight.t() + self.bias

    def extra_repr(self) -> str:
        return f"in_features={self.weight.shape[1]}, out_features={self.weight.shape[0]}"


class TorchAffine(torch.nn.Module):
    def __init__(self, in_features: int, out_features: int, dtype=torch.float32) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(out_features, in_features, dtype=dtype))
        self.bias = torch.nn.Parameter(torch.zeros(out_features, dtype=dtype))
        self.register_buffer("running", torch.zeros(out_features, dtype=dtype))
        self.register_buffer("scratch", torch.zeros(1, dtype=dtype), persistent=False)

    def forward(self, x):
        return x @ self.weight.t() + self.bias

    def extra_repr(self) -> str:
        return f"in_features={self.weight.shape[1]}, out_features={self.weight.shape[0]}"


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Affine(4, 4)
        self.act = nn.Sequential()

    def forward(self, x):
        return self.act(self.attn(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(Affine(3, 4), Block())
        self.head = Affine(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


class TorchBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = TorchAffine(4, 4)
        self.act = torch.nn.Sequential()


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.nn.Sequential(TorchAffine(3, 4), TorchBlock())
        self.head = TorchAffine(4, 2)


# ---------------------------------------------------------------- Parameter
def test_parameter_is_a_leaf_tensor_sharing_storage():
    data = lucid.ones(2, 3)
    param = nn.Parameter(data)
    assert isinstance(param, lucid.Tensor) and isinstance(param, nn.Parameter)
    assert param.is_leaf and param.requires_grad
    data.add_(1.0)
    assert np.array_equal(param.detach().numpy(), np.full((2, 3), 2.0, dtype=np.float32))
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    assert type(param * 2) is lucid.Tensor


@requires_torch
def test_parameter_repr_matches_torch():
    lucid_repr = repr(nn.Parameter(lucid.tensor([1.0, 2.0])))
    torch_repr = repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert lucid_repr == torch_repr


def test_parameter_deepcopy_keeps_type():
    param = nn.Parameter(lucid.ones(2))
    clone = copy.deepcopy(param)
    assert type(clone) is nn.Parameter and clone.requires_grad
    assert not np.shares_memory(clone.detach().numpy(), param.detach().numpy())


# ---------------------------------------------------------------- registration
@requires_torch
def test_registration_and_naming_match_torch():
    model, reference = Net(), TorchNet()
    for method in ("named_parameters", "named_buffers", "named_children", "named_modules"):
        names = [name for name, _ in getattr(model, method)()]
        assert names == [name for name, _ in getattr(reference, method)()], method
    assert len(list(model.parameters())) == len(list(reference.parameters()))
    assert len(list(model.parameters(recurse=False))) == 0
    assert [n for n, _ in model.head.named_parameters(prefix="h")] == ["h.weight", "h.bias"]
    assert list(model.state_dict()) == list(reference.state_dict())


def test_shared_parameters_are_deduplicated():
    model = nn.Sequential(Affine(2, 2))
    model.add_module("again", model[0])
    assert len(list(model.parameters())) == 2
    named = [n for n, _ in model.named_parameters(remove_duplicate=False)]
    assert named == ["0.weight", "0.bias", "again.weight", "again.bias"]
    assert [n for n, _ in model.named_modules()] == ["", "0"]


def test_attribute_assignment_and_deletion():
    model = Affine(2, 3)
    assert model.weight is model._parameters["weight"]
    model.weight = nn.Parameter(lucid.ones(3, 2))
    assert list(model._parameters) == ["weight", "bias"]
    model.bias = None
    assert model.bias is None and [n for n, _ in model.named_parameters()] == ["weight"]
    with pytest.raises(TypeError, match=r"cannot assign 'lucid.FloatTensor' as parameter 'weight'"):
        model.weight = lucid.ones(3, 2)
    del model.weight
    assert "weight" not in model._parameters
    with pytest.raises(AttributeError, match="'Affine' object has no attribute 'weight'"):
        model.weight
    model.running = lucid.ones(3)
    assert model._buffers["running"].sum().item() == 3
    model.child = Affine(1, 1)
    assert "child" in model._modules and "child" in dir(model)
    model.child = None
    assert model._modules["child"] is None
    assert [n for n, _ in model.named_children()] == []
    assert "running" in dir(model) and "bias" in dir(model)


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, t: m.register_parameter("a.b", None),
        lambda m, t: m.register_parameter("", None),
        lambda m, t: m.register_buffer("a.b", None),
        lambda m, t: m.add_module("a.b", None),
        lambda m, t: m.add_module("", None),
        lambda m, t: m.register_parameter("train", None),
        lambda m, t: m.register_buffer("b", 3),
        lambda m, t: m.add_module(3, None),
        lambda m, t: m.register_buffer(3, None),
        lambda m, t: m.add_module("x", 3),
        lambda m, t: m.get_submodule("x"),
        lambda m, t: m.get_parameter("x"),
        lambda m, t: m.get_buffer("x"),
    ],
)
def test_registration_errors_match_torch(call):
    with pytest.raises(Exception) as expected:
        call(torch.nn.Module(), torch)
    with pytest.raises(type(expected.value)) as got:
        call(nn.Module(), lucid)
    assert str(got.value).replace("lucid", "torch") == str(expected.value)


def test_register_non_parameter_tensor_raises():
    with pytest.raises(TypeError, match=r"cannot assign 'lucid.FloatTensor' object to parameter"):
        nn.Module().register_parameter("w", lucid.ones(1))


def test_get_submodule_parameter_buffer():
    model = Net()
    assert model.get_submodule("encoder.1.attn") is model.encoder[1].attn
    assert model.get_submodule("") is model
    assert model.get_parameter("encoder.1.attn.weight") is model.encoder[1].attn.weight
    assert model.get_buffer("head.running") is model.head.running
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        model.get_submodule("head.weight.x")
    with pytest.raises(AttributeError, match="`running` is not an nn.Parameter"):
        model.get_parameter("head.running")


@requires_torch
@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((), {"a": 1})])
def test_module_init_rejects_arguments_like_torch(args, kwargs):
    with pytest.raises(TypeError) as expected:
        torch.nn.Module(*args, **kwargs)
    with pytest.raises(
        TypeError, match=str(expected.value).replace("(", r"\(").replace(")", r"\)")
    ):
        nn.Module(*args, **kwargs)


def test_module_without_forward_raises():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


# ---------------------------------------------------------------- state
def test_train_eval_propagate():
    model = Net()
    assert model.training and model.encoder[1].attn.training
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train(1)


@requires_torch
def test_apply_visits_children_first():
    order = []
    Net().apply(lambda m: order.append(type(m).__name__))
    expected = []
    TorchNet().apply(lambda m: expected.append(type(m).__name__.removeprefix("Torch")))
    assert order == expected


def test_zero_grad_and_requires_grad_():
    model = Affine(2, 2)
    model(lucid.ones(1, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert model.weight.grad is not None and model.weight.grad.sum().item() == 0
    model.zero_grad()
    assert model.weight.grad is None
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())


def test_to_dtype_keeps_parameter_identity():
    model = Affine(2, 3)
    weight = model.weight
    model(lucid.ones(1, 2)).sum().backward()
    assert model.double() is model
    assert model.weight is weight and type(model.weight) is nn.Parameter
    assert model.weight.dtype == lucid.float64 and model.weight.grad.dtype == lucid.float64
    assert model.running.dtype == lucid.float64 and model.weight.requires_grad
    model.to(lucid.float32)
    assert model.weight.dtype == lucid.float32 and model.scratch.dtype == lucid.float32
    model.half()
    assert model.bias.dtype == lucid.float16
    model.float()
    assert model.bias.dtype == lucid.float32
    out = model(lucid.ones(1, 2))
    assert out.dtype == lucid.float32


def test_to_reads_python_floats_and_bools_as_dtypes():
    # as PyTorch's argument parser does: a float (value or type) is float64, a bool a dtype that
    # a module refuses
    assert Affine(2, 3).to(1.5).weight.dtype == lucid.float64
    assert Affine(2, 3).to(float).weight.dtype == lucid.float64
    for value in (True, bool, lucid.int64):
        with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
            Affine(2, 3).to(value)


def test_requires_grad_takes_only_a_bool():
    with pytest.raises(TypeError, match=r"argument 'requires_grad' \(position 1\) must be bool"):
        Affine(2, 3).requires_grad_(None)


def test_state_dict_round_trip():
    source, target = Net(), Net()
    state = source.state_dict()
    assert isinstance(state, OrderedDict)
    assert not any(value.requires_grad for value in state.values())
    assert all(type(v) is nn.Parameter for k, v in source.state_dict(keep_vars=True).items()
               if not k.endswith("running"))  # fmt: skip
    result = target.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, a), (_, b) in zip(source.state_dict().items(), target.state_dict().items()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy()), name
    weight = target.head.weight
    assert weight is target.head.weight and not np.shares_memory(
        weight.detach().numpy(), state["head.weight"].detach().numpy()
    )


def test_load_state_dict_assign():
    model = Affine(2, 2)
    new_weight = lucid.ones(2, 2)
    model.load_state_dict({**model.state_dict(), "weight": new_weight}, assign=True)
    assert type(model.weight) is nn.Parameter and model.weight.requires_grad
    assert np.shares_memory(model.weight.detach().numpy(), new_weight.detach().numpy())


def _load_errors(lucid_model, torch_model, edit, strict=True):
    lucid_state = lucid_model.state_dict()
    torch_state = torch_model.state_dict()
    edit(lucid_state, lucid)
    edit(torch_state, torch)
    with pytest.raises(RuntimeError) as expected:
        torch_model.load_state_dict(torch_state, strict=strict)
    with pytest.raises(RuntimeError) as got:
        lucid_model.load_state_dict(lucid_state, strict=strict)
    expected_message = str(expected.value).replace("TorchNet", "Net")
    assert str(got.value).replace("lucid", "torch") == expected_message


@requires_torch
def test_load_state_dict_errors_match_torch():
    def missing_and_unexpected(state, lib):
        del state["encoder.0.bias"]
        del state["head.running"]
        state["head.extra"] = lib.ones(1)
        state["nothing"] = lib.ones(1)

    def wrong_shape(state, lib):
        state["head.weight"] = lib.ones(5, 5)
        del state["head.bias"]

    _load_errors(Net(), TorchNet(), missing_and_unexpected)
    _load_errors(Net(), TorchNet(), wrong_shape)
    _load_errors(Net(), TorchNet(), wrong_shape, strict=False)


@requires_torch
def test_load_state_dict_non_strict_returns_keys():
    model, reference = Net(), TorchNet()
    lucid_state, torch_state = model.state_dict(), reference.state_dict()
    for state, lib in ((lucid_state, lucid), (torch_state, torch)):
        del state["encoder.1.attn.weight"]
        state["head.extra"] = lib.ones(1)
    got = model.load_state_dict(lucid_state, strict=False)
    expected = reference.load_state_dict(torch_state, strict=False)
    assert got == tuple(expected) and repr(got) == repr(expected)


# ---------------------------------------------------------------- repr
@requires_torch
def test_nested_repr_matches_torch():
    assert repr(Net()) == repr(TorchNet()).replace("Torch", "")
    assert repr(nn.Module()) == repr(torch.nn.Module())
    layers = nn.ModuleList([Affine(2, 2), Affine(2, 2), Affine(2, 3), nn.Sequential()])
    torch_layers = torch.nn.ModuleList(
        [TorchAffine(2, 2), TorchAffine(2, 2), TorchAffine(2, 3), torch.nn.Sequential()]
    )
    assert repr(layers) == repr(torch_layers).replace("Torch", "")

    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    class TorchMulti(torch.nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    outer, torch_outer = Multi(), TorchMulti()
    outer.inner, torch_outer.inner = Multi(), TorchMulti()
    assert repr(outer) == repr(torch_outer).replace("Torch", "")


# ---------------------------------------------------------------- forward hooks
def test_forward_hooks_order_prepend_kwargs_and_removal():
    calls = []

    class Echo(nn.Module):
        def forward(self, x, scale=1):
            calls.append(("forward", x, scale))
            return x * scale

    model = Echo()
    handles = [
        model.register_forward_pre_hook(lambda m, args: calls.append("pre1")),
        model.register_forward_pre_hook(lambda m, args: calls.append("pre0"), prepend=True),
        model.register_forward_pre_hook(
            lambda m, args, kwargs: ((args[0] + 1,), {"scale": 10}), with_kwargs=True
        ),
        model.register_forward_hook(lambda m, args, out: calls.append(("post", args, out))),
        model.register_forward_hook(
            lambda m, args, kwargs, out: out + kwargs["scale"], with_kwargs=True
        ),
    ]
    assert model(1) == 30
    assert calls == ["pre0", "pre1", ("forward", 2, 10), ("post", (2,), 20)]
    for handle in handles:
        handle.remove()
    calls.clear()
    assert model(1) == 1 and calls == [("forward", 1, 1)]
    assert not model._forward_hooks and not model._forward_pre_hooks


def test_forward_pre_hook_may_return_a_single_value():
    model = nn.Sequential()
    model.register_forward_pre_hook(lambda m, args: 5)
    model.register_forward_hook(lambda m, args, out: out * 2)
    assert model(1) == 10


def test_forward_hook_always_call_runs_on_error():
    class Fails(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    model = Fails()
    model.register_forward_hook(lambda m, a, o: seen.append("always"), always_call=True)
    model.register_forward_hook(lambda m, a, o: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        model(1)
    assert seen == ["always"]


def test_global_forward_hooks_run_first_and_are_removable():
    seen = []
    model = nn.Sequential(Affine(2, 2))
    model.register_forward_pre_hook(lambda m, args: seen.append(("local pre", type(m).__name__)))
    pre = module_module.register_module_forward_pre_hook(
        lambda m, args: seen.append(("global pre", type(m).__name__))
    )
    post = module_module.register_module_forward_hook(
        lambda m, args, out: seen.append(("global post", type(m).__name__))
    )
    try:
        model(lucid.ones(1, 2))
    finally:
        pre.remove()
        post.remove()
    assert seen == [
        ("global pre", "Sequential"),
        ("local pre", "Sequential"),
        ("global pre", "Affine"),
        ("global post", "Affine"),
        ("global post", "Sequential"),
    ]
    seen.clear()
    model(lucid.ones(1, 2))
    assert seen == [("local pre", "Sequential")]


def test_handles_work_as_context_managers():
    model = nn.Sequential()
    with model.register_forward_hook(lambda m, a, o: o + 1):
        assert model(1) == 2
    assert model(1) == 1


# ---------------------------------------------------------------- backward hooks
def _paired_affines():
    model = Affine(3, 2, dtype=lucid.float64)
    reference = TorchAffine(3, 2, dtype=torch.float64)
    with torch.no_grad():
        reference.weight.copy_(torch.from_numpy(model.weight.detach().numpy().copy()))
        reference.bias.copy_(torch.tensor([0.5, -0.25], dtype=torch.float64))
    model.bias.data = lucid.tensor([0.5, -0.25], dtype=lucid.float64)
    return model, reference


def _as_numpy(grads):
    return [None if g is None else np.asarray(g.detach().numpy()) for g in grads]


@requires_torch
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_full_backward_hooks_match_torch(input_requires_grad):
    model, reference = _paired_affines()
    records = {"lucid": [], "torch": []}
    for key, module in (("lucid", model), ("torch", reference)):
        module.register_full_backward_pre_hook(
            lambda m, grad_output, key=key: records[key].append(("pre", _as_numpy(grad_output)))
        )
        module.register_full_backward_hook(
            lambda m, grad_input, grad_output, key=key: records[key].append(
                ("full", _as_numpy(grad_input), _as_numpy(grad_output))
            )
        )
    data = np.random.default_rng(0).standard_normal((4, 3))
    x = lucid.tensor(data, requires_grad=input_requires_grad)
    x_ref = torch.tensor(data, requires_grad=input_requires_grad)
    (model(x) ** 2).sum().backward()
    (reference(x_ref) ** 2).sum().backward()
    assert len(records["lucid"]) == len(records["torch"]) == 2
    for got, expected in zip(records["lucid"], records["torch"]):
        assert got[0] == expected[0]
        for got_grads, expected_grads in zip(got[1:], expected[1:]):
            assert len(got_grads) == len(expected_grads)
            for a, b in zip(got_grads, expected_grads):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(
        model.weight.grad.detach().numpy(), reference.weight.grad.detach().numpy()
    )


@requires_torch
def test_backward_hooks_replace_gradients_like_torch():
    model, reference = _paired_affines()
    for module in (model, reference):
        module.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 2,))
        module.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0] * 3,))
    data = np.random.default_rng(1).standard_normal((2, 3))
    x = lucid.tensor(data, requires_grad=True)
    x_ref = torch.tensor(data, requires_grad=True)
    model(x).sum().backward()
    reference(x_ref).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), x_ref.grad.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        model.weight.grad.detach().numpy(), reference.weight.grad.detach().numpy()
    )
    np.testing.assert_allclose(
        model.bias.grad.detach().numpy(), reference.bias.grad.detach().numpy()
    )


@requires_torch
def test_backward_hook_grad_input_has_none_for_non_tensor_args():
    class Scale(nn.Module):
        def forward(self, x, factor):
            return x * factor

    class TorchScale(torch.nn.Module):
        def forward(self, x, factor):
            return x * factor

    seen = {}
    for key, module, lib in (("lucid", Scale(), lucid), ("torch", TorchScale(), torch)):
        module.register_full_backward_hook(
            lambda m, gi, go, key=key: seen.__setitem__(key, _as_numpy(gi))
        )
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        module(x, 3.0).sum().backward()
    assert seen["lucid"][1] is None and seen["torch"][1] is None
    np.testing.assert_allclose(seen["lucid"][0], seen["torch"][0])


def test_removed_backward_hook_does_not_run():
    model = Affine(2, 2)
    seen = []
    handle = model.register_full_backward_hook(lambda m, gi, go: seen.append(1))
    handle.remove()
    model(lucid.ones(1, 2, requires_grad=True)).sum().backward()
    assert seen == []


# ---------------------------------------------------------------- module path
def test_module_path_is_pushed_for_children():
    paths = []

    class Probe(nn.Module):
        def forward(self, x):
            paths.append(lucid._core.grad_mode.local_state.module_path)
            return x

    model = nn.Sequential(OrderedDict(encoder=nn.Sequential(nn.Sequential(), Probe())))
    model.add_module("probe", Probe())
    model(1)
    assert paths == [("encoder", "encoder.1"), ("probe",)]
    assert lucid._core.grad_mode.local_state.module_path == ()
    paths.clear()
    model.encoder(1)
    assert paths == [("1",)]


def test_anomaly_event_names_the_module():
    class Log(nn.Module):
        def forward(self, x):
            return lucid.log(x)

    model = nn.Sequential(
        OrderedDict(encoder=nn.Sequential(Affine(2, 2), Log()), head=Affine(2, 1))
    )
    with model.encoder[0].register_forward_hook(lambda m, a, out: out * 0 - 1):
        with pytest.raises(lucid.autograd.AnomalyError) as error:
            with lucid.autograd.detect_anomaly():
                model(lucid.ones(1, 2))
    assert error.value.event.module_path == "encoder.1"
    assert lucid._core.grad_mode.local_state.module_path == ()


def test_module_called_inside_forward_of_grandparent_gets_full_path():
    paths = []

    class Probe(nn.Module):
        def forward(self, x):
            paths.append(lucid._core.grad_mode.local_state.module_path[-1])
            return x

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Probe(), Probe()])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    Outer()(1)
    assert paths == ["layers.0", "layers.1"]
