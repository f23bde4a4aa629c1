"""MultiheadAttention and F.multi_head_attention_forward against torch over combined
configurations: an output projection of another width, kdim/vdim, bias_kv, zero attention,
batch_first, unbatched inputs, every mask kind, static keys and values, dropout, torch's
inference fast path, gradcheck, and torch's error messages for bad shapes."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import lucid
from tests.nn.parity import assert_close, compare_grads, copy_state
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

EMBED, HEADS, TARGET, SOURCE, BATCH, KDIM, VDIM = 8, 2, 3, 4, 2, 5, 6
RTOL, ATOL = 1e-10, 1e-12


def _leaf(lib, array, grad=True):
    if array is None:
        return None
    return lib.tensor(array, requires_grad=grad and array.dtype.kind == "f")


def _mask_warnings(records) -> list[str]:
    return [str(record.message) for record in records if "mask" in str(record.message)]


def _backward(output, weights, rng) -> None:
    """A random-weighted sum of both results, so every element's gradient is checked."""
    lib = torch if isinstance(output, torch.Tensor) else lucid
    total = (output * lib.tensor(rng.standard_normal(tuple(output.shape)))).sum()
    if weights is not None:
        total = total + (weights * lib.tensor(rng.standard_normal(tuple(weights.shape)))).sum()
    total.backward()


# --------------------------------------------------------------------------- module table


@dataclass(frozen=True)
class Case:
    """One MultiheadAttention configuration and the call made on it."""

    name: str
    options: dict = field(default_factory=dict)  # constructor keyword arguments
    sharing: str = "distinct"  # "self" (query is key is value), "key is value" or "distinct"
    batched: bool = True
    padding: str | None = None  # key_padding_mask: "bool" or "float"
    attn: str | None = None  # attn_mask: "bool", "float", "bool3d", "float3d" or "causal"
    average: bool = True


CASES = [
    Case("kdim_vdim_unbatched_bool_masks", {"kdim": KDIM, "vdim": VDIM}, batched=False,
         padding="bool", attn="bool"),
    Case("kdim_vdim_batch_first_float_masks_per_head", {"kdim": KDIM, "vdim": VDIM,
         "batch_first": True}, padding="float", attn="float3d", average=False),
    Case("kdim_equals_vdim_key_is_value_bool3d", {"kdim": KDIM, "vdim": KDIM},
         sharing="key is value", attn="bool3d"),
    Case("bias_kv_unbatched_float_padding_float3d", {"add_bias_kv": True}, batched=False,
         padding="float", attn="float3d"),
    Case("zero_attn_batch_first_self_causal_bool_padding", {"add_zero_attn": True,
         "batch_first": True}, sharing="self", padding="bool", attn="causal"),
    Case("bias_kv_zero_attn_kdim_vdim_no_bias_per_head", {"add_bias_kv": True,
         "add_zero_attn": True, "kdim": KDIM, "vdim": VDIM, "bias": False}, padding="bool",
         attn="bool", average=False),
    Case("no_bias_batch_first_key_is_value_float", {"bias": False, "batch_first": True},
         sharing="key is value", attn="float"),
    Case("unbatched_self_causal", {}, sharing="self", batched=False, attn="causal"),
    Case("unbatched_ignores_batch_first", {"batch_first": True}, sharing="key is value",
         batched=False, padding="bool", average=False),
    Case("causal_bias_kv_float_padding", {"add_bias_kv": True}, sharing="self",
         padding="float", attn="causal"),
    Case("zero_attn_unbatched_causal_per_head", {"add_zero_attn": True}, sharing="self",
         batched=False, attn="causal", average=False),
    Case("mixed_mask_kinds_warn", {"batch_first": True}, padding="bool", attn="float"),
    Case("bool3d_unbatched_kdim_vdim", {"kdim": KDIM, "vdim": VDIM}, batched=False,
         attn="bool3d"),
]  # fmt: skip


def _case_arrays(case: Case, rng: np.random.Generator) -> dict:
    """query/key/value arrays and masks for `case`, in the layout the module expects."""
    kdim, vdim = case.options.get("kdim", EMBED), case.options.get("vdim", EMBED)
    source = TARGET if case.sharing == "self" else SOURCE
    batch_first = case.options.get("batch_first", False)

    def shape(length: int, width: int) -> tuple:
        if not case.batched:
            return (length, width)
        return (BATCH, length, width) if batch_first else (length, BATCH, width)

    arrays = {
        "query": rng.standard_normal(shape(TARGET, EMBED)),
        "key": rng.standard_normal(shape(source, kdim)),
        "value": rng.standard_normal(shape(source, vdim)),
    }
    padding_shape = (BATCH, source) if case.batched else (source,)
    if case.padding is not None:
        masked = rng.random(padding_shape) < 0.3
        masked[..., 0] = False  # every query keeps a key, so no row of scores is all -inf
        if case.padding == "bool":
            arrays["key_padding_mask"] = masked
        else:
            arrays["key_padding_mask"] = np.where(
                masked, -np.inf, rng.standard_normal(masked.shape)
            )
    heads = BATCH * HEADS if case.batched else HEADS
    if case.attn == "causal":
        arrays["attn_mask"] = np.triu(np.ones((TARGET, TARGET), dtype=bool), 1)
    elif case.attn is not None:
        mask_shape = (heads, TARGET, source) if case.attn.endswith("3d") else (TARGET, source)
        masked = rng.random(mask_shape) < 0.3
        masked[..., 0] = False
        if case.attn.startswith("bool"):
            arrays["attn_mask"] = masked
        else:
            arrays["attn_mask"] = np.where(masked, -np.inf, rng.standard_normal(mask_shape))
    return arrays


def _module_pair(options: dict):
    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(EMBED, HEADS, dtype=torch.float64, **options)
    with torch.no_grad():  # nonzero biases, so their gradients and the extra key matter
        for name, parameter in reference.named_parameters():
            if "bias" in name:
                parameter.uniform_(-0.5, 0.5)
    module = lucid.nn.MultiheadAttention(EMBED, HEADS, dtype=lucid.float64, **options)
    copy_state(reference, module)
    return reference, module


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_module_configuration_matches_torch(case: Case, need_weights: bool) -> None:
    arrays = _case_arrays(case, np.random.default_rng(0))
    reference, module = _module_pair(case.options)
    results = {}
    for lib, layer in ((torch, reference), (lucid, module)):
        query = _leaf(lib, arrays["query"])
        key = query if case.sharing == "self" else _leaf(lib, arrays["key"])
        value = key if case.sharing != "distinct" else _leaf(lib, arrays["value"])
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            output, weights = layer(
                query,
                key,
                value,
                key_padding_mask=_leaf(lib, arrays.get("key_padding_mask"), grad=False),
                need_weights=need_weights,
                attn_mask=_leaf(lib, arrays.get("attn_mask"), grad=False),
                average_attn_weights=case.average,
                is_causal=case.attn == "causal",
            )
        _backward(output, weights, np.random.default_rng(1))
        leaves = list({id(t): t for t in (query, key, value)}.values())
        results[lib] = (output, weights, [t.grad for t in leaves], _mask_warnings(records))
    expected, got = results[torch], results[lucid]
    assert_close(got[0], expected[0], RTOL, ATOL, "output")
    if need_weights:
        assert_close(got[1], expected[1], RTOL, ATOL, "weights")
    else:
        assert got[1] is None
    for index, (actual, wanted) in enumerate(zip(got[2], expected[2], strict=True)):
        assert_close(actual, wanted, RTOL, ATOL, f"grad of input {index}")
    compare_grads(reference, module, RTOL, ATOL)
    padding, attn_mask = arrays.get("key_padding_mask"), arrays.get("attn_mask")
    mismatched = padding is not None and attn_mask is not None and padding.dtype != attn_mask.dtype
    assert len(expected[3]) == mismatched  # torch warns once, in the module
    assert got[3] == expected[3]


# --------------------------------------------------------------------------- functional


def _functional_arrays(rng, *, separate: bool, out_features: int, out_bias: bool) -> dict:
    kdim, vdim = (KDIM, VDIM) if separate else (EMBED, EMBED)
    arrays = {
        "query": rng.standard_normal((TARGET, BATCH, EMBED)),
        "key": rng.standard_normal((SOURCE, BATCH, kdim)),
        "value": rng.standard_normal((SOURCE, BATCH, vdim)),
        "in_proj_bias": rng.standard_normal(3 * EMBED),
        "out_proj_weight": rng.standard_normal((out_features, EMBED)) * 0.3,
        "out_proj_bias": rng.standard_normal(out_features) if out_bias else None,
    }
    if separate:
        arrays["q_proj_weight"] = rng.standard_normal((EMBED, EMBED)) * 0.3
        arrays["k_proj_weight"] = rng.standard_normal((EMBED, kdim)) * 0.3
        arrays["v_proj_weight"] = rng.standard_normal((EMBED, vdim)) * 0.3
    else:
        arrays["in_proj_weight"] = rng.standard_normal((3 * EMBED, EMBED)) * 0.3
    return arrays


def _run_functional(lib, arrays: dict, sharing: str, batched: bool, **kwargs):
    """Call multi_head_attention_forward on leaves made from `arrays`; backward; return
    (output, weights, {name: grad})."""
    leaves = {name: _leaf(lib, array) for name, array in arrays.items() if array is not None}
    if not batched:
        inputs = {name: leaves[name][:, 0].detach() for name in ("query", "key", "value")}
        leaves.update({name: tensor.requires_grad_() for name, tensor in inputs.items()})
    query = leaves["query"]
    key = query if sharing == "self" else leaves["key"]
    value = key if sharing in ("self", "key is value") else leaves["value"]
    output, weights = lib.nn.functional.multi_head_attention_forward(
        query,
        key,
        value,
        EMBED,
        HEADS,
        leaves.get("in_proj_weight"),
        leaves.get("in_proj_bias"),
        leaves.get("bias_k"),
        leaves.get("bias_v"),
        kwargs.pop("add_zero_attn", False),
        kwargs.pop("dropout_p", 0.0),
        leaves["out_proj_weight"],
        leaves.get("out_proj_bias"),
        use_separate_proj_weight="q_proj_weight" in leaves,
        q_proj_weight=leaves.get("q_proj_weight"),
        k_proj_weight=leaves.get("k_proj_weight"),
        v_proj_weight=leaves.get("v_proj_weight"),
        static_k=leaves.get("static_k"),
        static_v=leaves.get("static_v"),
        **kwargs,
    )
    _backward(output, weights, np.random.default_rng(1))
    return output, weights, {name: tensor.grad for name, tensor in leaves.items()}


def _assert_same(got, expected) -> None:
    assert_close(got[0], expected[0], RTOL, ATOL, "output")
    if expected[1] is None:
        assert got[1] is None
    else:
        assert_close(got[1], expected[1], RTOL, ATOL, "weights")
    assert list(got[2]) == list(expected[2])
    for name, wanted in expected[2].items():
        if wanted is None:
            assert got[2][name] is None, name
        else:
            assert_close(got[2][name], wanted, RTOL, ATOL, f"grad of {name}")


@pytest.mark.parametrize("out_features", [5, 12])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("sharing", ["self", "key is value", "separate"])
def test_output_projection_may_change_the_width(sharing, need_weights, batched, out_features):
    # CLIP's attention pool projects embed_dim down to its output_dim
    arrays = _functional_arrays(
        np.random.default_rng(0),
        separate=sharing == "separate",
        out_features=out_features,
        out_bias=sharing != "key is value",
    )
    results = [
        _run_functional(lib, arrays, sharing, batched, need_weights=need_weights)
        for lib in (torch, lucid)
    ]
    expected_shape = (TARGET, BATCH, out_features) if batched else (TARGET, out_features)
    assert tuple(results[1][0].shape) == expected_shape
    _assert_same(results[1], results[0])


STATIC_CASES = {
    "both_bool_padding_zero_attn_no_weights": (
        {"static_k", "static_v"},
        {"add_zero_attn": True, "need_weights": False, "padding": "bool"},
    ),
    "key_only_float_mask": ({"static_k"}, {"attn": "float"}),
    "value_only_unbatched_per_head": ({"static_v"}, {"batched": False, "average": False}),
    "both_narrow_output_float_padding": (
        {"static_k", "static_v"},
        {"out_features": 3, "padding": "float", "need_weights": False},
    ),
}


@pytest.mark.parametrize("name", list(STATIC_CASES))
def test_static_keys_and_values_match_torch(name):
    statics, options = STATIC_CASES[name]
    rng = np.random.default_rng(0)
    batched = options.get("batched", True)
    arrays = _functional_arrays(
        rng, separate=False, out_features=options.get("out_features", EMBED), out_bias=True
    )
    heads = BATCH * HEADS if batched else HEADS
    for static in statics:
        arrays[static] = rng.standard_normal((heads, SOURCE, EMBED // HEADS))
    kwargs = {
        "need_weights": options.get("need_weights", True),
        "average_attn_weights": options.get("average", True),
        "add_zero_attn": options.get("add_zero_attn", False),
    }
    masked = rng.random((BATCH, SOURCE)) < 0.3
    masked[:, 0] = False
    padding = {"bool": masked, "float": np.where(masked, -1e4, 0.0)}.get(options.get("padding"))
    attn_mask = rng.standard_normal((TARGET, SOURCE)) if options.get("attn") == "float" else None
    results = []
    for lib in (torch, lucid):
        results.append(
            _run_functional(
                lib,
                arrays,
                "distinct",
                batched,
                key_padding_mask=_leaf(lib, padding, grad=False),
                attn_mask=_leaf(lib, attn_mask, grad=False),
                **kwargs,
            )
        )
    _assert_same(results[1], results[0])
    for static in statics:
        assert results[1][2][static] is not None


@pytest.mark.parametrize("need_weights", [True, False])
def test_dropout_is_off_outside_training(need_weights):
    arrays = _functional_arrays(
        np.random.default_rng(0), separate=False, out_features=EMBED, out_bias=True
    )
    results = [
        _run_functional(
            lib, arrays, "key is value", True, dropout_p=0.5, training=False,
            need_weights=need_weights,
        )
        for lib in (torch, lucid)
    ]  # fmt: skip
    _assert_same(results[1], results[0])


# --------------------------------------------------------------------------- dropout


def _identity_value_attention(lib, dropout_p: float, training: bool, seed: int):
    """Attention whose output is its (dropped) probabilities: values are one-hot per key and
    the value and output projections are identities, so output[l, n] is row l of P."""
    rng = np.random.default_rng(0)
    width = 16  # = the number of keys, one head
    query = lib.tensor(rng.standard_normal((width, 4, width)))
    key = lib.tensor(rng.standard_normal((width, 4, width)))
    value = lib.tensor(np.broadcast_to(np.eye(width)[:, None, :], (width, 4, width)).copy())
    in_proj = np.concatenate([rng.standard_normal((2 * width, width)) * 0.3, np.eye(width)])
    lib.manual_seed(seed)
    output, _ = lib.nn.functional.multi_head_attention_forward(
        query, key, value, width, 1, lib.tensor(in_proj), None, None, None, False, dropout_p,
        lib.tensor(np.eye(width)), None, training=training, need_weights=False,
    )  # fmt: skip
    return output.detach().numpy()


@pytest.mark.parametrize("lib_name", ["torch", "lucid"])
def test_dropout_without_weights_zeroes_or_rescales_each_probability(lib_name):
    lib = torch if lib_name == "torch" else lucid
    p = 0.5
    probabilities = _identity_value_attention(lib, p, training=False, seed=0)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-12)
    dropped = _identity_value_attention(lib, p, training=True, seed=0)
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], probabilities[kept] / (1 - p), rtol=1e-12)
    assert abs((~kept).mean() - p) < 0.06  # 1024 draws; 4 sigma is 0.0625
    again = _identity_value_attention(lib, p, training=True, seed=0)
    np.testing.assert_array_equal(again, dropped)
    assert not np.array_equal(_identity_value_attention(lib, p, training=True, seed=1), dropped)


def test_dropout_on_returned_weights_zeroes_or_rescales_each_probability():
    p = 0.25
    lucid.manual_seed(0)
    module = lucid.nn.MultiheadAttention(EMBED, HEADS, dropout=p, dtype=lucid.float64)
    x = lucid.tensor(np.random.default_rng(0).standard_normal((16, 4, EMBED)))
    reference = torch.nn.MultiheadAttention(EMBED, HEADS, dropout=p, dtype=torch.float64)
    torch_output, torch_weights = reference(*(torch.tensor(x.numpy()),) * 3,
                                            average_attn_weights=False)  # fmt: skip
    output, dropped = module(x, x, x, average_attn_weights=False)
    assert tuple(output.shape) == tuple(torch_output.shape)
    assert tuple(dropped.shape) == tuple(torch_weights.shape) == (4, HEADS, 16, 16)
    module.eval()
    probabilities = module(x, x, x, average_attn_weights=False)[1].detach().numpy()
    dropped = dropped.detach().numpy()
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], probabilities[kept] / (1 - p), rtol=1e-12)
    assert abs((~kept).mean() - p) < 0.04  # 2048 draws; 4 sigma is 0.038


def test_dropout_output_and_value_gradient_follow_the_returned_weights():
    # with need_weights the dropped probabilities are returned, so the output and the value
    # gradient can be rebuilt from them
    p, target, source = 0.5, 5, 6
    rng = np.random.default_rng(0)
    lucid.manual_seed(3)
    module = lucid.nn.MultiheadAttention(EMBED, HEADS, dropout=p, dtype=lucid.float64)
    with lucid.no_grad():
        module.in_proj_bias.uniform_(-0.5, 0.5)
        module.out_proj.bias.uniform_(-0.5, 0.5)
    x = lucid.tensor(rng.standard_normal((target, BATCH, EMBED)))
    key = lucid.tensor(rng.standard_normal((source, BATCH, EMBED)))
    value = lucid.tensor(rng.standard_normal((source, BATCH, EMBED)), requires_grad=True)
    output, dropped = module(x, key, value, average_attn_weights=False)
    grad_output = rng.standard_normal(tuple(output.shape))
    (output * lucid.tensor(grad_output)).sum().backward()

    dropped = dropped.detach().numpy()  # (batch, heads, target, source)
    assert (dropped == 0).any()
    value_weight = module.in_proj_weight.detach().numpy()[2 * EMBED :]
    value_bias = module.in_proj_bias.detach().numpy()[2 * EMBED :]
    out_weight = module.out_proj.weight.detach().numpy()
    out_bias = module.out_proj.bias.detach().numpy()

    def split_heads(array):  # (length, batch, embed) -> (batch, heads, length, head_dim)
        return array.reshape(array.shape[0], BATCH, HEADS, -1).transpose(1, 2, 0, 3)

    def merge_heads(array):  # (batch, heads, length, head_dim) -> (length, batch, embed)
        return array.transpose(2, 0, 1, 3).reshape(array.shape[2], BATCH, EMBED)

    v = split_heads(value.detach().numpy() @ value_weight.T + value_bias)
    expected = merge_heads(dropped @ v) @ out_weight.T + out_bias
    assert_close(output, expected, RTOL, ATOL, "output")
    grad_v = np.swapaxes(dropped, -1, -2) @ split_heads(grad_output @ out_weight)
    assert_close(value.grad, merge_heads(grad_v) @ value_weight, RTOL, ATOL, "value grad")


# --------------------------------------------------------------------------- fast path


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["none", "padding", "causal", "both"])
def test_inference_matches_torchs_native_fast_path(masks, need_weights):
    # eval + no_grad + batch_first self-attention sends torch to _native_multi_head_attention
    rng = np.random.default_rng(0)
    reference, module = _module_pair({"batch_first": True})
    reference.eval()
    module.eval()
    x = rng.standard_normal((BATCH, 5, EMBED))
    padding = rng.random((BATCH, 5)) < 0.4
    padding[:, 0] = False
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    kwargs = {
        "none": {},
        "padding": {"key_padding_mask": padding},
        "causal": {"attn_mask": causal},
        "both": {"attn_mask": causal, "key_padding_mask": padding},
    }[masks]
    with torch.no_grad():
        x_torch = torch.tensor(x)
        expected = reference(x_torch, x_torch, x_torch, need_weights=need_weights,
                             **{k: torch.tensor(v) for k, v in kwargs.items()})  # fmt: skip
    with lucid.no_grad():
        x_lucid = lucid.tensor(x)
        got = module(x_lucid, x_lucid, x_lucid, need_weights=need_weights,
                     **{k: lucid.tensor(v) for k, v in kwargs.items()})  # fmt: skip
    assert_close(got[0], expected[0], RTOL, ATOL, "output")
    if need_weights:
        assert_close(got[1], expected[1], RTOL, ATOL, "weights")
    else:
        assert got[1] is None and expected[1] is None


# --------------------------------------------------------------------------- gradcheck


def test_packed_attention_passes_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(0)
    embed, heads, out_features = 4, 2, 3

    def leaf(*shape):
        return lucid.tensor(rng.standard_normal(shape) * 0.5, requires_grad=True)

    query, key = leaf(2, 2, embed), leaf(2, 2, embed)
    params = (leaf(3 * embed, embed), leaf(3 * embed), leaf(1, 1, embed), leaf(1, 1, embed),
              leaf(out_features, embed), leaf(out_features))  # fmt: skip
    padding = lucid.tensor(rng.standard_normal((2, 2)))

    def attend(query, key, in_w, in_b, bias_k, bias_v, out_w, out_b):
        return lucid.nn.functional.multi_head_attention_forward(
            query, key, key, embed, heads, in_w, in_b, bias_k, bias_v, True, 0.0, out_w, out_b,
            key_padding_mask=padding, average_attn_weights=False,
        )  # fmt: skip

    assert lucid.autograd.gradcheck(attend, (query, key, *params))
    assert lucid.autograd.gradgradcheck(attend, (query, key, *params))


def test_separate_projection_attention_passes_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(1)
    embed, heads, kdim, vdim, out_features = 4, 2, 3, 2, 2

    def leaf(*shape):
        return lucid.tensor(rng.standard_normal(shape) * 0.5, requires_grad=True)

    inputs = (leaf(2, embed), leaf(3, kdim), leaf(3, vdim), leaf(embed, embed), leaf(embed, kdim),
              leaf(embed, vdim), leaf(3 * embed), leaf(out_features, embed))  # fmt: skip
    attn_mask = lucid.tensor(rng.standard_normal((heads, 2, 3)))

    def attend(query, key, value, q_w, k_w, v_w, in_b, out_w):
        output, _ = lucid.nn.functional.multi_head_attention_forward(
            query, key, value, embed, heads, None, in_b, None, None, False, 0.0, out_w, None,
            need_weights=False, attn_mask=attn_mask, use_separate_proj_weight=True,
            q_proj_weight=q_w, k_proj_weight=k_w, v_proj_weight=v_w,
        )  # fmt: skip
        return output

    assert lucid.autograd.gradcheck(attend, inputs)
    assert lucid.autograd.gradgradcheck(attend, inputs)


# --------------------------------------------------------------------------- errors


def _error_call(lib, **changes):
    """A valid encoder-decoder call of multi_head_attention_forward with `changes` applied."""
    rng = np.random.default_rng(0)
    separate = changes.pop("separate", False)
    arrays = _functional_arrays(rng, separate=separate, out_features=EMBED, out_bias=True)
    arguments = {name: lib.tensor(array) for name, array in arrays.items() if array is not None}
    arguments.update(
        embed_dim_to_check=EMBED, num_heads=HEADS, bias_k=None, bias_v=None,
        add_zero_attn=False, dropout_p=0.0, use_separate_proj_weight=separate,
    )  # fmt: skip
    arguments.setdefault("in_proj_weight", None)
    for name, change in changes.items():
        arguments[name] = change(lib, arguments) if callable(change) else change
    return lib.nn.functional.multi_head_attention_forward(**arguments)


def _zeros(*shape, dtype="float64"):
    return lambda lib, arguments: lib.zeros(shape, dtype=getattr(lib, dtype))


def _same(name):
    return lambda lib, arguments: arguments[name]


ERRORS = {
    "query_weights_shape": {"separate": True, "q_proj_weight": _zeros(EMBED, EMBED + 1)},
    "key_weights_shape": {"separate": True, "k_proj_weight": _zeros(EMBED, KDIM + 1)},
    "value_weights_shape": {"separate": True, "v_proj_weight": _zeros(EMBED - 1, VDIM)},
    "separate_bias_shape": {"separate": True, "in_proj_bias": _zeros(3 * EMBED + 3)},
    "separate_key_weight_missing": {"separate": True, "k_proj_weight": None},
    "separate_value_weight_missing": {"separate": True, "v_proj_weight": None},
    "separate_lengths_differ": {"separate": True, "value": _zeros(SOURCE + 1, BATCH, VDIM)},
    "key_value_shapes_differ": {"value": _zeros(SOURCE + 1, BATCH, EMBED)},
    "bias_k_without_bias_v": {"bias_k": _zeros(1, 1, EMBED)},
    "bias_v_without_bias_k": {"bias_v": _zeros(1, 1, EMBED)},
    "bias_k_with_static_k": {"bias_k": _zeros(1, 1, EMBED), "bias_v": _zeros(1, 1, EMBED),
                             "static_k": _zeros(BATCH * HEADS, SOURCE, EMBED // HEADS)},
    "bias_v_with_static_v": {"bias_k": _zeros(1, 1, EMBED), "bias_v": _zeros(1, 1, EMBED),
                             "static_v": _zeros(BATCH * HEADS, SOURCE, EMBED // HEADS)},
    "static_k_batch_heads": {"static_k": _zeros(BATCH * HEADS + 1, SOURCE, EMBED // HEADS)},
    "static_v_head_dim": {"static_v": _zeros(BATCH * HEADS, SOURCE, EMBED // HEADS + 1)},
    "static_k_two_dims": {"static_k": _zeros(BATCH * HEADS, SOURCE)},
    "attn_mask_3d_shape": {"attn_mask": _zeros(BATCH * HEADS, TARGET, SOURCE + 1)},
    "attn_mask_4d": {"attn_mask": _zeros(1, BATCH * HEADS, TARGET, SOURCE)},
    "attn_mask_1d": {"attn_mask": _zeros(SOURCE)},
    "attn_mask_integer": {"attn_mask": _zeros(TARGET, SOURCE, dtype="int64")},
    "query_four_dims": {"query": _zeros(1, TARGET, BATCH, EMBED)},
    "query_one_dim": {"query": _zeros(EMBED)},
    "key_two_dims_for_batched_query": {"key": _zeros(SOURCE, EMBED)},
    "padding_one_dim_for_batched_query": {"key_padding_mask": _zeros(SOURCE, dtype="bool")},
    "padding_batch_size": {"key_padding_mask": _zeros(BATCH + 1, SOURCE, dtype="bool")},
    "padding_integer": {"key_padding_mask": _zeros(BATCH, SOURCE, dtype="int64")},
    "unbatched_key_three_dims": {"query": _zeros(TARGET, EMBED)},
    "unbatched_padding_two_dims": {
        "query": _zeros(TARGET, EMBED), "key": _zeros(SOURCE, EMBED),
        "value": _zeros(SOURCE, EMBED), "key_padding_mask": _zeros(1, SOURCE, dtype="bool")},
    "unbatched_attn_mask_3d_shape": {
        "query": _zeros(TARGET, EMBED), "key": _zeros(SOURCE, EMBED),
        "value": _zeros(SOURCE, EMBED), "attn_mask": _zeros(BATCH * HEADS, TARGET, SOURCE)},
    "unbatched_attn_mask_4d": {
        "query": _zeros(TARGET, EMBED), "key": _zeros(SOURCE, EMBED),
        "value": _zeros(SOURCE, EMBED), "attn_mask": _zeros(1, HEADS, TARGET, SOURCE)},
    "packed_weight_rows_self_attention": {
        "key": _same("query"), "value": _same("query"), "in_proj_weight": _zeros(2 * EMBED, EMBED),
        "in_proj_bias": None},
    "packed_weight_rows_key_is_value": {
        "value": _same("key"), "in_proj_weight": _zeros(2 * EMBED, EMBED), "in_proj_bias": None},
    "packed_weight_rows_distinct": {
        "in_proj_weight": _zeros(3 * EMBED + 3, EMBED), "in_proj_bias": None},
    "packed_bias_length": {"in_proj_bias": _zeros(3 * EMBED + 3)},
    "packed_key_width": {"key": _zeros(SOURCE, BATCH, KDIM), "value": _zeros(SOURCE, BATCH, KDIM)},
    "out_proj_columns": {"out_proj_weight": _zeros(EMBED, EMBED - 1)},
    "out_proj_bias_length": {"out_proj_bias": _zeros(EMBED + 1)},
}  # fmt: skip


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_shapes_raise_torchs_error_word_for_word(name):
    outcomes = []
    for lib in (torch, lucid):
        with pytest.raises(Exception) as error:  # noqa: PT011 - the type is compared below
            _error_call(lib, **ERRORS[name])
        outcomes.append((type(error.value), str(error.value).replace("torch", "lucid")))
    assert outcomes[1] == outcomes[0]


WIDTH_ERRORS = {
    "key_width": ({"kdim": KDIM}, (TARGET, BATCH, EMBED), (SOURCE, BATCH, KDIM + 1), None),
    "value_width": ({"vdim": VDIM}, (TARGET, BATCH, EMBED), None, (SOURCE, BATCH, VDIM - 1)),
    "query_width": ({}, (TARGET, BATCH, EMBED + 2), None, None),
    "batch_first_batch": ({"batch_first": True}, (BATCH, TARGET, EMBED), (BATCH, SOURCE, EMBED),
                          (BATCH + 1, SOURCE, EMBED)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(WIDTH_ERRORS))
def test_module_rejects_bad_widths_like_torch(name):
    options, query, key, value = WIDTH_ERRORS[name]
    key = key or (SOURCE, BATCH, options.get("kdim", EMBED))
    value = value or (SOURCE, BATCH, options.get("vdim", EMBED))
    outcomes = []
    for lib in (torch, lucid):
        module = lib.nn.MultiheadAttention(EMBED, HEADS, **options)
        with pytest.raises(Exception) as error:  # noqa: PT011 - the type is compared below
            module(lib.zeros(query), lib.zeros(key), lib.zeros(value))
        outcomes.append((type(error.value), str(error.value).replace("torch", "lucid")))
    assert outcomes[1] == outcomes[0]
