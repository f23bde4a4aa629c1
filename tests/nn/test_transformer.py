"""Parity of lucid's MultiheadAttention and Transformer encoder modules with torch.nn."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import lucid
from lucid.nn.modules.activation import MultiheadAttention
from lucid.nn.modules.normalization import LayerNorm
from lucid.nn.modules.transformer import TransformerEncoder, TransformerEncoderLayer
from tests.nn.parity import (
    TOLERANCES,
    assert_close,
    check_forward_backward,
    check_repr_and_keys,
    check_sgd_steps,
    compare_grads,
    copy_state,
)
from tests.torch_oracle import requires_torch, torch

DTYPES = ["float64", "float32"]
EMBED, HEADS, BATCH, TARGET, SOURCE = 8, 2, 3, 4, 5


def _deep(dtype: str) -> str:
    """The parity tolerance name for a multi-layer stack in `dtype`."""
    return "float32_deep" if dtype == "float32" else dtype


def _pair(dtype: str, **kwargs):
    torch.manual_seed(0)
    torch_module = torch.nn.MultiheadAttention(EMBED, HEADS, dtype=getattr(torch, dtype), **kwargs)
    lucid_module = MultiheadAttention(EMBED, HEADS, dtype=getattr(lucid, dtype), **kwargs)
    check_repr_and_keys(torch_module, lucid_module)
    return torch_module, lucid_module


def _qkv(dtype: str, batch_first: bool, kdim: int = EMBED, vdim: int = EMBED) -> list:
    rng = np.random.default_rng(0)

    def shape(length: int, dim: int) -> tuple:
        return (BATCH, length, dim) if batch_first else (length, BATCH, dim)

    return [
        rng.standard_normal(shape(TARGET, EMBED)).astype(dtype),
        rng.standard_normal(shape(SOURCE, kdim)).astype(dtype),
        rng.standard_normal(shape(SOURCE, vdim)).astype(dtype),
    ]


def _masks(dtype: str) -> dict[str, dict]:
    rng = np.random.default_rng(1)
    bool_attn = rng.random((TARGET, SOURCE)) < 0.3
    bool_attn[:, 0] = False  # every query keeps at least one key, so no row is all -inf
    padding = np.zeros((BATCH, SOURCE), dtype=bool)
    padding[0, -2:] = True
    padding[2, -1] = True
    float_attn = rng.standard_normal((TARGET, SOURCE)).astype(dtype)
    per_head = rng.standard_normal((BATCH * HEADS, TARGET, SOURCE)).astype(dtype)
    float_padding = np.where(padding, -1e4, 0.0).astype(dtype)
    return {
        "none": {},
        "bool_attn": {"attn_mask": bool_attn},
        "float_attn": {"attn_mask": float_attn},
        "per_head": {"attn_mask": per_head},
        "padding": {"key_padding_mask": padding},
        "both_bool": {"attn_mask": bool_attn, "key_padding_mask": padding},
        "both_float": {"attn_mask": float_attn, "key_padding_mask": float_padding},
    }


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(
    "mask", ["none", "bool_attn", "float_attn", "per_head", "padding", "both_bool", "both_float"]
)
@pytest.mark.parametrize(
    "weights",
    [
        {"need_weights": True},
        {"need_weights": True, "average_attn_weights": False},
        {"need_weights": False},
    ],
)
def test_mha_parity(dtype: str, batch_first: bool, mask: str, weights: dict) -> None:
    torch_module, lucid_module = _pair(dtype, batch_first=batch_first)
    kwargs = {**_masks(dtype)[mask], **weights}
    lucid_out, torch_out = check_forward_backward(
        torch_module, lucid_module, _qkv(dtype, batch_first), dtype, kwargs=kwargs
    )
    assert len(lucid_out) == (2 if weights["need_weights"] else 1)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "options",
    [
        {"kdim": 6, "vdim": 3},
        {"bias": False},
        {"add_zero_attn": True},
        {"kdim": 5, "bias": False, "batch_first": True},
        {"add_bias_kv": True},
        {"add_bias_kv": True, "add_zero_attn": True, "kdim": 6, "vdim": 3},
        {"add_bias_kv": True, "bias": False, "batch_first": True},
    ],
)
def test_mha_options(dtype: str, options: dict) -> None:
    torch_module, lucid_module = _pair(dtype, **options)
    kdim, vdim = options.get("kdim", EMBED), options.get("vdim", EMBED)
    inputs = _qkv(dtype, options.get("batch_first", False), kdim, vdim)
    for kwargs in ({}, {"need_weights": False, **_masks(dtype)["both_bool"]}):
        torch_module.zero_grad()
        lucid_module.zero_grad()
        check_forward_backward(torch_module, lucid_module, inputs, dtype, kwargs=kwargs)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask", ["none", "bool_attn", "per_head", "padding", "both_float"])
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_bias_kv_parity(dtype: str, mask: str, need_weights: bool) -> None:
    torch_module, lucid_module = _pair(dtype, add_bias_kv=True, add_zero_attn=mask == "padding")
    with torch.no_grad():  # nonzero projection biases, so the extra key's scores differ
        torch_module.in_proj_bias.uniform_(-0.5, 0.5)
    kwargs = {**_masks(dtype)[mask], "need_weights": need_weights}
    check_forward_backward(torch_module, lucid_module, _qkv(dtype, False), dtype, kwargs=kwargs)
    assert lucid_module.bias_k.grad is not None and lucid_module.bias_v.grad is not None


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_mha_bias_kv_causal_hint(dtype: str) -> None:
    torch_module, lucid_module = _pair(dtype, add_bias_kv=True, batch_first=True)
    x = np.random.default_rng(2).standard_normal((2, 5, EMBED)).astype(dtype)
    causal = np.triu(np.full((5, 5), -np.inf, dtype=dtype), 1)
    for need_weights in (False, True):
        kwargs = {"attn_mask": causal, "is_causal": True, "need_weights": need_weights}
        torch_module.zero_grad()
        lucid_module.zero_grad()
        check_forward_backward(torch_module, lucid_module, [x, x, x], dtype, kwargs=kwargs)


def test_mha_bias_kv_init_and_keys() -> None:
    lucid.manual_seed(0)
    module = MultiheadAttention(8, 2, add_bias_kv=True, kdim=3)
    assert list(module.state_dict()) == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "in_proj_bias",
        "bias_k",
        "bias_v",
        "out_proj.weight",
        "out_proj.bias",
    ]
    assert tuple(module.bias_k.shape) == (1, 1, 8) and tuple(module.bias_v.shape) == (1, 1, 8)
    # xavier_normal_ on (1, 1, 8): fan_in = fan_out = 8, so std = sqrt(2 / 16), never all zero
    assert module.bias_k.detach().numpy().any() and module.bias_v.detach().numpy().any()


@requires_torch
def test_mha_state_dict_keys() -> None:
    assert list(MultiheadAttention(8, 2).state_dict()) == [
        "in_proj_weight",
        "in_proj_bias",
        "out_proj.weight",
        "out_proj.bias",
    ]
    keys = list(MultiheadAttention(8, 2, kdim=4, vdim=3).state_dict())
    assert keys == list(torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=3).state_dict())
    assert keys[:3] == ["q_proj_weight", "k_proj_weight", "v_proj_weight"]
    module = MultiheadAttention(8, 2, kdim=4)
    assert module.in_proj_weight is None and module.bias_k is None and module.bias_v is None
    assert tuple(module.k_proj_weight.shape) == (8, 4)
    assert module.head_dim == 4 and module._qkv_same_embed_dim is False


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_self_attention_and_unbatched(dtype: str, batch_first: bool) -> None:
    # query is key is value takes the packed-projection branch; a 2-D query is unbatched
    rtol, atol = TOLERANCES[dtype]
    torch_module, lucid_module = _pair(dtype, batch_first=batch_first)
    copy_state(torch_module, lucid_module)
    x = _qkv(dtype, batch_first)[0]
    for array in (x, x[0]):
        tx, lx = torch.tensor(array, requires_grad=True), lucid.tensor(array, requires_grad=True)
        t_out, t_weights = torch_module(tx, tx, tx, average_attn_weights=False)
        l_out, l_weights = lucid_module(lx, lx, lx, average_attn_weights=False)
        assert_close(l_out, t_out, rtol, atol, "output")
        assert_close(l_weights, t_weights, rtol, atol, "weights")
        (t_out.sum() + (t_weights * t_weights).sum()).backward()
        (l_out.sum() + (l_weights * l_weights).sum()).backward()
        assert_close(lx.grad, tx.grad, rtol, atol, "input grad")
        compare_grads(torch_module, lucid_module, rtol, atol)
    padding = np.arange(x[0].shape[0]) >= x[0].shape[0] - 1
    t_out = torch_module(torch.tensor(x[0]), torch.tensor(x[0]), torch.tensor(x[0]),
                         key_padding_mask=torch.tensor(padding))[0]  # fmt: skip
    l_out = lucid_module(lucid.tensor(x[0]), lucid.tensor(x[0]), lucid.tensor(x[0]),
                         key_padding_mask=lucid.tensor(padding))[0]  # fmt: skip
    assert_close(l_out, t_out, rtol, atol, "unbatched with padding")


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_mha_is_causal_hint(dtype: str) -> None:
    rtol, atol = TOLERANCES[dtype]
    torch_module, lucid_module = _pair(dtype, batch_first=True)
    copy_state(torch_module, lucid_module)
    x = np.random.default_rng(2).standard_normal((2, 5, EMBED)).astype(dtype)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    for need_weights in (False, True):
        t = torch_module(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(causal),
                         need_weights=need_weights, is_causal=True)  # fmt: skip
        lx = lucid.tensor(x)
        lo = lucid_module(lx, lx, lx, attn_mask=lucid.tensor(causal),
                          need_weights=need_weights, is_causal=True)  # fmt: skip
        assert_close(lo[0], t[0], rtol, atol, "causal output")
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        lucid_module(lx, lx, lx, is_causal=True)


def test_mha_dropout_train_eval() -> None:
    lucid.manual_seed(0)
    module = MultiheadAttention(8, 2, dropout=0.5, dtype=lucid.float64)
    x = lucid.randn(4, 2, 8, dtype=lucid.float64)
    _, train_weights = module(x, x, x, average_attn_weights=False)
    row_sums = train_weights.detach().numpy().sum(-1)
    assert not np.allclose(row_sums, 1.0)  # dropped and rescaled probabilities
    module.eval()
    out1, eval_weights = module(x, x, x)
    out2, _ = module(x, x, x)
    np.testing.assert_allclose(eval_weights.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(out1.detach().numpy(), out2.detach().numpy())


def test_mha_init_and_errors() -> None:
    lucid.manual_seed(3)
    module = MultiheadAttention(12, 3, kdim=5)
    lucid.manual_seed(3)
    again = MultiheadAttention(12, 3, kdim=5)
    for name, param in module.named_parameters():
        np.testing.assert_array_equal(
            param.detach().numpy(), dict(again.named_parameters())[name].detach().numpy()
        )
    # xavier_uniform_ bound sqrt(6 / (fan_in + fan_out)); biases start at zero
    assert np.abs(module.k_proj_weight.detach().numpy()).max() <= np.sqrt(6 / (5 + 12))
    packed = MultiheadAttention(12, 3).in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (12 + 36))
    assert np.abs(packed).max() <= bound and np.abs(packed).max() > 0.8 * bound
    assert not MultiheadAttention(12, 3).in_proj_bias.detach().numpy().any()
    assert not MultiheadAttention(12, 3).out_proj.bias.detach().numpy().any()
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        MultiheadAttention(0, 2)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        MultiheadAttention(10, 3)
    x = lucid.randn(4, 2, 8)
    module = MultiheadAttention(8, 2)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\(4, 4\)"):
        module(x, x, x, attn_mask=lucid.zeros(3, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        module(x, x, x, attn_mask=lucid.zeros(4, 4, dtype=lucid.int64))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask"):
        module(x, x, x, attn_mask=lucid.zeros(4, 4), key_padding_mask=lucid.zeros(2, 4) > 0)


# --------------------------------------------------------------------------- encoder
def _layer_pair(dtype: str, **kwargs):
    torch.manual_seed(0)
    options = {"dim_feedforward": 16, "dropout": 0.0, **kwargs}
    torch_layer = torch.nn.TransformerEncoderLayer(
        EMBED, HEADS, dtype=getattr(torch, dtype), **options
    )
    lucid_layer = TransformerEncoderLayer(EMBED, HEADS, dtype=getattr(lucid, dtype), **options)
    check_repr_and_keys(torch_layer, lucid_layer)
    return torch_layer, lucid_layer


def _src(dtype: str, batch_first: bool, seed: int = 4) -> np.ndarray:
    shape = (BATCH, SOURCE, EMBED) if batch_first else (SOURCE, BATCH, EMBED)
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"activation": "gelu", "batch_first": True},
        {"activation": "callable", "bias": False},
    ],
)
def test_encoder_layer_parity(dtype: str, norm_first: bool, options: dict) -> None:
    torch_options, lucid_options = dict(options), dict(options)
    if options.get("activation") == "callable":
        torch_options["activation"] = torch.nn.functional.silu
        lucid_options["activation"] = lucid.nn.functional.silu
    torch.manual_seed(0)
    torch_layer = torch.nn.TransformerEncoderLayer(
        EMBED, HEADS, 16, 0.0, norm_first=norm_first, dtype=getattr(torch, dtype), **torch_options
    )
    lucid_layer = TransformerEncoderLayer(
        EMBED, HEADS, 16, 0.0, norm_first=norm_first, dtype=getattr(lucid, dtype), **lucid_options
    )
    assert list(lucid_layer.state_dict()) == list(torch_layer.state_dict())
    assert lucid_layer.activation_relu_or_gelu == torch_layer.activation_relu_or_gelu
    src = _src(dtype, options.get("batch_first", False))
    src_mask = np.random.default_rng(6).random((SOURCE, SOURCE)) < 0.3
    src_mask[:, 0] = False
    padding = _masks(dtype)["padding"]["key_padding_mask"]
    for kwargs in ({}, {"src_mask": src_mask}, {"src_key_padding_mask": padding}):
        torch_layer.zero_grad()
        lucid_layer.zero_grad()
        check_forward_backward(torch_layer, lucid_layer, [src], _deep(dtype), kwargs=kwargs)


@requires_torch
def test_encoder_layer_repr_and_errors() -> None:
    _layer_pair("float32")
    _layer_pair("float32", activation="gelu", norm_first=True, layer_norm_eps=1e-6)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        TransformerEncoderLayer(8, 2, activation="tanh")
    layer = TransformerEncoderLayer(8, 2)
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1
    assert layer.norm1.eps == 1e-5 and layer.self_attn.batch_first is False


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_parity_and_sgd(dtype: str, norm_first: bool, batch_first: bool) -> None:
    torch_layer, lucid_layer = _layer_pair(
        dtype, norm_first=norm_first, batch_first=batch_first, dropout=0.1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_encoder = torch.nn.TransformerEncoder(
            torch_layer, 2, norm=torch.nn.LayerNorm(EMBED, dtype=getattr(torch, dtype))
        )
        lucid_encoder = TransformerEncoder(
            lucid_layer, 2, norm=LayerNorm(EMBED, dtype=getattr(lucid, dtype))
        )
    check_repr_and_keys(torch_encoder, lucid_encoder)
    # the layers are independent copies: perturb torch's second layer so copying matters
    with torch.no_grad():
        torch_encoder.layers[1].linear1.weight.mul_(1.5)
        torch_encoder.layers[0].self_attn.in_proj_bias.uniform_(-0.2, 0.2)
    torch_encoder.eval()
    lucid_encoder.eval()
    src = _src(dtype, batch_first)
    causal = np.triu(np.full((SOURCE, SOURCE), -np.inf, dtype=dtype), 1)
    padding = _masks(dtype)["padding"]["key_padding_mask"]
    for kwargs in ({}, {"mask": causal}, {"src_key_padding_mask": padding}):
        torch_encoder.zero_grad()
        lucid_encoder.zero_grad()
        check_forward_backward(torch_encoder, lucid_encoder, [src], _deep(dtype), kwargs=kwargs)
    rng = np.random.default_rng(5)
    check_sgd_steps(
        torch_encoder,
        lucid_encoder,
        lambda: [rng.standard_normal(src.shape).astype(dtype)],
        _deep(dtype),
    )


def test_encoder_deep_copies_layers() -> None:
    layer = TransformerEncoderLayer(8, 2, 16, batch_first=True)
    encoder = TransformerEncoder(layer, 3)
    first, second = encoder.layers[0], encoder.layers[1]
    assert first is not layer and first is not second
    assert first.linear1.weight is not second.linear1.weight
    np.testing.assert_array_equal(
        first.linear1.weight.detach().numpy(), layer.linear1.weight.detach().numpy()
    )
    assert len(list(encoder.parameters())) == 3 * len(list(layer.parameters()))
    assert encoder.num_layers == 3 and encoder.norm is None
    assert copy.deepcopy(encoder).layers[2].self_attn.embed_dim == 8


@requires_torch
def test_encoder_nested_tensor_warning() -> None:
    layer = TransformerEncoderLayer(8, 2, 16, norm_first=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, norm_first=True), 2)
    with pytest.warns(UserWarning) as record:
        encoder = TransformerEncoder(layer, 2)
    assert str(record[0].message) == str(caught[0].message)
    assert encoder.use_nested_tensor is False and encoder.enable_nested_tensor is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = TransformerEncoder(layer, 2, enable_nested_tensor=False)
    assert quiet.use_nested_tensor is False
