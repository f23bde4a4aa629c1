"""F.multi_head_attention_forward against torch's, with the same weights: outputs, attention
weights and gradients of every input, over its options and masks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from tests.nn.parity import assert_close
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

EMBED, HEADS, TARGET, SOURCE, BATCH = 8, 2, 3, 4, 2


def _arrays(rng, *, separate, bias, bias_kv, static, kdim=5, vdim=6):
    arrays = {"out_proj_weight": rng.standard_normal((EMBED, EMBED)) * 0.3}
    arrays["out_proj_bias"] = rng.standard_normal(EMBED) if bias else None
    arrays["in_proj_bias"] = rng.standard_normal(3 * EMBED) if bias else None
    if separate:
        arrays["q_proj_weight"] = rng.standard_normal((EMBED, EMBED)) * 0.3
        arrays["k_proj_weight"] = rng.standard_normal((EMBED, kdim)) * 0.3
        arrays["v_proj_weight"] = rng.standard_normal((EMBED, vdim)) * 0.3
        arrays["in_proj_weight"] = None
    else:
        arrays["in_proj_weight"] = rng.standard_normal((3 * EMBED, EMBED)) * 0.3
    arrays["bias_k"] = rng.standard_normal((1, 1, EMBED)) if bias_kv else None
    arrays["bias_v"] = rng.standard_normal((1, 1, EMBED)) if bias_kv else None
    if static:
        shape = (BATCH * HEADS, SOURCE, EMBED // HEADS)
        arrays["static_k"] = rng.standard_normal(shape)
        arrays["static_v"] = rng.standard_normal(shape)
    return arrays


def _masks(rng, kind, source):
    """(attn_mask, key_padding_mask) arrays of `kind` over `source` keys."""
    if kind == "none":
        return None, None
    attn = rng.standard_normal((TARGET, source))
    padding = rng.standard_normal((BATCH, source))
    if kind == "bool":
        attn, padding = attn > 0.8, padding > 0.8
        attn[:, 0] = padding[:, 0] = False  # every query keeps one key
    if kind == "3d":
        attn = rng.standard_normal((BATCH * HEADS, TARGET, source))
        return attn, None
    return attn, padding


def _configs():
    # (query/key/value sharing, projections, bias, bias_kv, add_zero_attn, static, masks)
    for sharing, masks, need in itertools.product(
        ("self", "key is value", "distinct"), ("none", "bool", "float", "3d"), (True, False)
    ):
        yield {"sharing": sharing, "masks": masks, "need_weights": need}
    yield {"sharing": "distinct", "separate": True, "masks": "bool", "need_weights": True}
    yield {"sharing": "distinct", "separate": True, "masks": "float", "need_weights": False}
    yield {"sharing": "self", "bias_kv": True, "masks": "bool", "need_weights": True}
    yield {"sharing": "self", "bias_kv": True, "zero": True, "masks": "float",
           "need_weights": False}  # fmt: skip
    yield {"sharing": "distinct", "zero": True, "masks": "bool", "need_weights": True,
           "average": False}  # fmt: skip
    yield {"sharing": "distinct", "bias": False, "masks": "none", "need_weights": True}
    yield {"sharing": "distinct", "static": True, "masks": "float", "need_weights": True}
    yield {"sharing": "self", "causal": True, "masks": "causal", "need_weights": False}
    yield {"sharing": "self", "causal": True, "masks": "causal", "need_weights": True}
    yield {"sharing": "distinct", "unbatched": True, "masks": "bool", "need_weights": True}
    yield {"sharing": "self", "unbatched": True, "masks": "none", "need_weights": False}


@pytest.mark.parametrize("config", list(_configs()), ids=str)
def test_multi_head_attention_forward_matches_torch(config):
    rng = np.random.default_rng(0)
    separate = config.get("separate", False)
    arrays = _arrays(
        rng,
        separate=separate,
        bias=config.get("bias", True),
        bias_kv=config.get("bias_kv", False),
        static=config.get("static", False),
    )
    unbatched = config.get("unbatched", False)
    lead = (TARGET,) if unbatched else (TARGET, BATCH)
    source_lead = (SOURCE,) if unbatched else (SOURCE, BATCH)
    query = rng.standard_normal((*lead, EMBED))
    key = rng.standard_normal((*source_lead, 5 if separate else EMBED))
    value = rng.standard_normal((*source_lead, 6 if separate else EMBED))
    if config["masks"] == "causal":
        attn = np.triu(np.full((TARGET, TARGET), -np.inf), 1)
        masks = (attn, None)
        key = value = None
    else:
        source = TARGET if config["sharing"] == "self" else SOURCE
        masks = _masks(rng, config["masks"], source)
        if unbatched and masks[1] is not None:
            masks = (masks[0], masks[1][0])

    def run(lib):
        def tensor(array, grad=True):
            if array is None:
                return None
            return lib.tensor(array, requires_grad=grad and array.dtype.kind == "f")

        inputs = {name: tensor(array) for name, array in arrays.items()}
        q = tensor(query)
        if config["sharing"] == "self" or key is None:
            k = v = q
        elif config["sharing"] == "key is value":
            k = v = tensor(key)
        else:
            k, v = tensor(key), tensor(value)
        output, weights = lib.nn.functional.multi_head_attention_forward(
            q, k, v, EMBED, HEADS, inputs.pop("in_proj_weight"), inputs.pop("in_proj_bias"),
            inputs.pop("bias_k"), inputs.pop("bias_v"), config.get("zero", False), 0.0,
            inputs.pop("out_proj_weight"), inputs.pop("out_proj_bias"), training=True,
            key_padding_mask=tensor(masks[1], False), need_weights=config["need_weights"],
            attn_mask=tensor(masks[0], False), use_separate_proj_weight=separate,
            average_attn_weights=config.get("average", True),
            is_causal=config.get("causal", False), **inputs,
        )  # fmt: skip
        total = output.sum() if weights is None else output.sum() + (weights * weights).sum()
        total.backward()
        leaves = [q, k, v, *(t for t in inputs.values())]
        return output, weights, [t.grad for t in leaves if t is not None and t.requires_grad]

    expected, got = run(torch), run(lucid)
    assert_close(got[0], expected[0], 1e-10, 1e-12, "output")
    if expected[1] is None:
        assert got[1] is None
    else:
        assert_close(got[1], expected[1], 1e-10, 1e-12, "weights")
    for index, (a, b) in enumerate(zip(got[2], expected[2], strict=True)):
        if b is None:
            assert a is None
        else:
            assert_close(a, b, 1e-10, 1e-12, f"grad {index}")


@pytest.mark.parametrize(
    ("kwargs", "batch_first", "masks"),
    [({"kdim": 5, "vdim": 6}, True, "bool"), ({"add_bias_kv": True, "add_zero_attn": True},
     False, "float"), ({}, True, "float"), ({"bias": False}, False, "bool")],
    ids=str,
)  # fmt: skip
def test_module_calls_the_functional_form_like_torch(kwargs, batch_first, masks):
    rng = np.random.default_rng(1)
    reference = torch.nn.MultiheadAttention(EMBED, HEADS, batch_first=batch_first,
                                            dtype=torch.float64, **kwargs)  # fmt: skip
    module = nn.MultiheadAttention(EMBED, HEADS, batch_first=batch_first, dtype=lucid.float64,
                                   **kwargs)  # fmt: skip
    module.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in reference.state_dict().items()})
    shape = (BATCH, TARGET, EMBED) if batch_first else (TARGET, BATCH, EMBED)
    source = (BATCH, SOURCE) if batch_first else (SOURCE, BATCH)
    query = rng.standard_normal(shape)
    key = rng.standard_normal((*source, kwargs.get("kdim", EMBED)))
    value = rng.standard_normal((*source, kwargs.get("vdim", EMBED)))
    attn, padding = _masks(rng, masks, SOURCE)
    for need, average in ((True, True), (True, False), (False, True)):
        results = []
        for lib, layer in ((torch, reference), (lucid, module)):
            output, weights = layer(
                lib.tensor(query), lib.tensor(key), lib.tensor(value),
                key_padding_mask=lib.tensor(padding), need_weights=need,
                attn_mask=lib.tensor(attn), average_attn_weights=average,
            )  # fmt: skip
            results.append((output, weights))
        assert_close(results[1][0], results[0][0], 1e-10, 1e-12, "output")
        if need:
            assert_close(results[1][1], results[0][1], 1e-10, 1e-12, "weights")
        else:
            assert results[1][1] is None


def test_multi_head_attention_forward_errors_match_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((TARGET, BATCH, EMBED))
    weight = rng.standard_normal((3 * EMBED, EMBED))
    out = rng.standard_normal((EMBED, EMBED))
    calls = [
        lambda lib: ((lib.tensor(x),) * 3 + (EMBED + 1, HEADS, lib.tensor(weight)), {}),
        lambda lib: ((lib.tensor(x),) * 3 + (EMBED, 3, lib.tensor(weight)), {}),
        lambda lib: ((lib.tensor(x),) * 3 + (EMBED, HEADS, lib.tensor(weight)),
                     {"key_padding_mask": lib.zeros(BATCH, SOURCE + 1, dtype=lib.bool)}),
        lambda lib: ((lib.tensor(x),) * 3 + (EMBED, HEADS, lib.tensor(weight)),
                     {"attn_mask": lib.zeros(TARGET + 1, TARGET)}),
        lambda lib: ((lib.tensor(x),) * 3 + (EMBED, HEADS, None),
                     {"use_separate_proj_weight": True}),
        lambda lib: ((lib.tensor(x),) * 3 + (EMBED, HEADS, lib.tensor(weight)),
                     {"is_causal": True}),
    ]  # fmt: skip
    for call in calls:
        messages = []
        for lib in (torch, lucid):
            args, kwargs = call(lib)
            tail = (None, None, None, False, 0.0, lib.tensor(out), None)
            with pytest.raises((AssertionError, RuntimeError)) as error:
                lib.nn.functional.multi_head_attention_forward(*args, *tail, **kwargs)
            messages.append((type(error.value), str(error.value).replace("torch", "lucid")))
        assert messages[1] == messages[0]
