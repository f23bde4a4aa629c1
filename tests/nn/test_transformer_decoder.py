"""Parity of lucid's TransformerDecoderLayer, TransformerDecoder and Transformer with torch.nn."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.nn.modules.normalization import LayerNorm
from lucid.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
)
from tests.nn.parity import check_forward_backward, check_repr_and_keys, check_sgd_steps
from tests.torch_oracle import requires_torch, torch

# both libraries warn that a post-LN or sequence-first encoder cannot use nested tensors
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

DTYPES = ["float64", "float32"]
EMBED, HEADS, BATCH, TARGET, SOURCE = 8, 2, 3, 4, 5


def _deep(dtype: str) -> str:
    """The parity tolerance name for a multi-layer stack in `dtype`."""
    return "float32_deep" if dtype == "float32" else dtype


def _sequences(dtype: str, batch_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """(tgt, memory) of lengths TARGET and SOURCE."""
    rng = np.random.default_rng(3)

    def shape(length: int) -> tuple:
        return (BATCH, length, EMBED) if batch_first else (length, BATCH, EMBED)

    return (
        rng.standard_normal(shape(TARGET)).astype(dtype),
        rng.standard_normal(shape(SOURCE)).astype(dtype),
    )


def _padding(length: int) -> np.ndarray:
    padding = np.zeros((BATCH, length), dtype=bool)
    padding[0, -2:] = True
    padding[2, -1] = True
    return padding


def _decoder_masks(dtype: str) -> list[dict]:
    """Mask arguments for a decoder forward: causal tgt mask, paddings, a memory mask."""
    causal = np.triu(np.full((TARGET, TARGET), -np.inf, dtype=dtype), 1)
    memory_mask = np.random.default_rng(7).random((TARGET, SOURCE)) < 0.3
    memory_mask[:, 0] = False  # every query keeps at least one key, so no row is all -inf
    return [
        {},
        {"tgt_mask": causal},
        {"tgt_mask": causal, "tgt_is_causal": True},
        {"tgt_mask": causal, "tgt_key_padding_mask": _padding(TARGET)},
        {"memory_key_padding_mask": _padding(SOURCE), "memory_mask": memory_mask},
    ]


def _activation_pair(activation: str) -> tuple:
    if activation == "callable":
        return torch.nn.functional.silu, lucid.nn.functional.silu
    if activation == "module":
        return torch.nn.GELU(), lucid.nn.GELU()
    return activation, activation


def _decoder_layer_pair(dtype: str, activation: str = "relu", **kwargs) -> tuple:
    torch_activation, lucid_activation = _activation_pair(activation)
    options = {"dim_feedforward": 16, "dropout": 0.0, **kwargs}
    torch.manual_seed(0)
    torch_layer = torch.nn.TransformerDecoderLayer(
        EMBED, HEADS, activation=torch_activation, dtype=getattr(torch, dtype), **options
    )
    lucid_layer = TransformerDecoderLayer(
        EMBED, HEADS, activation=lucid_activation, dtype=getattr(lucid, dtype), **options
    )
    check_repr_and_keys(torch_layer, lucid_layer)
    return torch_layer, lucid_layer


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(
    "options",
    [
        {"activation": "relu"},
        {"activation": "gelu"},
        {"activation": "callable", "bias": False},
        {"activation": "module", "layer_norm_eps": 1e-6},
    ],
)
def test_decoder_layer_parity(dtype: str, norm_first: bool, batch_first: bool, options: dict):
    torch_layer, lucid_layer = _decoder_layer_pair(
        dtype, norm_first=norm_first, batch_first=batch_first, **options
    )
    tgt, memory = _sequences(dtype, batch_first)
    for kwargs in _decoder_masks(dtype):
        torch_layer.zero_grad()
        lucid_layer.zero_grad()
        check_forward_backward(torch_layer, lucid_layer, [tgt, memory], dtype, kwargs=kwargs)


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_decoder_layer_unbatched(dtype: str) -> None:
    torch_layer, lucid_layer = _decoder_layer_pair(dtype, activation="gelu")
    tgt, memory = _sequences(dtype, False)
    causal = np.triu(np.full((TARGET, TARGET), -np.inf, dtype=dtype), 1)
    kwargs = {"tgt_mask": causal, "memory_key_padding_mask": _padding(SOURCE)[0]}
    check_forward_backward(
        torch_layer, lucid_layer, [tgt[:, 0], memory[:, 0]], dtype, kwargs=kwargs
    )


@requires_torch
def test_decoder_layer_defaults_and_errors() -> None:
    layer = TransformerDecoderLayer(8, 2)
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1
    assert layer.norm3.eps == 1e-5 and layer.multihead_attn.batch_first is False
    assert layer.activation is lucid.nn.functional.relu and layer.norm_first is False
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        TransformerDecoderLayer(8, 2, activation="tanh")
    x = lucid.randn(3, 1, 8)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(x, x, tgt_is_causal=True)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(x, x, memory_is_causal=True)


def _decoder_pair(dtype: str, norm_first: bool, batch_first: bool, norm: bool = True) -> tuple:
    torch_layer, lucid_layer = _decoder_layer_pair(
        dtype, norm_first=norm_first, batch_first=batch_first, dropout=0.1
    )
    torch_norm = torch.nn.LayerNorm(EMBED, dtype=getattr(torch, dtype)) if norm else None
    lucid_norm = LayerNorm(EMBED, dtype=getattr(lucid, dtype)) if norm else None
    torch_decoder = torch.nn.TransformerDecoder(torch_layer, 2, norm=torch_norm)
    lucid_decoder = TransformerDecoder(lucid_layer, 2, norm=lucid_norm)
    check_repr_and_keys(torch_decoder, lucid_decoder)
    # the layers are independent copies: perturb torch's layers so copying matters
    with torch.no_grad():
        torch_decoder.layers[1].linear1.weight.mul_(1.5)
        torch_decoder.layers[0].multihead_attn.in_proj_bias.uniform_(-0.2, 0.2)
        torch_decoder.layers[1].self_attn.out_proj.bias.uniform_(-0.2, 0.2)
    # dropout is 0.1: eval mode must switch it off in both
    torch_decoder.eval()
    lucid_decoder.eval()
    return torch_decoder, lucid_decoder


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_parity_and_sgd(dtype: str, norm_first: bool, batch_first: bool) -> None:
    torch_decoder, lucid_decoder = _decoder_pair(dtype, norm_first, batch_first)
    tgt, memory = _sequences(dtype, batch_first)
    for kwargs in _decoder_masks(dtype):
        torch_decoder.zero_grad()
        lucid_decoder.zero_grad()
        check_forward_backward(
            torch_decoder, lucid_decoder, [tgt, memory], _deep(dtype), kwargs=kwargs
        )
    rng = np.random.default_rng(5)
    check_sgd_steps(
        torch_decoder,
        lucid_decoder,
        lambda: [rng.standard_normal(a.shape).astype(dtype) for a in (tgt, memory)],
        _deep(dtype),
    )


@requires_torch
def test_decoder_without_norm_and_deep_copies() -> None:
    torch_decoder, lucid_decoder = _decoder_pair("float64", False, True, norm=False)
    assert lucid_decoder.norm is None and lucid_decoder.num_layers == 2
    first, second = lucid_decoder.layers
    assert first.linear1.weight is not second.linear1.weight
    tgt, memory = _sequences("float64", True)
    check_forward_backward(torch_decoder, lucid_decoder, [tgt, memory], "float64")


def _transformer_pair(dtype: str, **kwargs) -> tuple:
    options = {
        "d_model": EMBED,
        "nhead": HEADS,
        "num_encoder_layers": 2,
        "num_decoder_layers": 2,
        "dim_feedforward": 16,
        **kwargs,
    }
    torch_model = torch.nn.Transformer(dtype=getattr(torch, dtype), **options)
    lucid_model = Transformer(dtype=getattr(lucid, dtype), **options)
    check_repr_and_keys(torch_model, lucid_model)
    torch_model.eval()
    lucid_model.eval()
    return torch_model, lucid_model


@requires_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_parity(dtype: str, norm_first: bool, batch_first: bool, activation: str):
    torch_model, lucid_model = _transformer_pair(
        dtype, norm_first=norm_first, batch_first=batch_first, activation=activation
    )
    tgt, src = _sequences(dtype, batch_first)
    causal = Transformer.generate_square_subsequent_mask(TARGET, dtype=getattr(lucid, dtype))
    masks = [
        {},
        {
            "tgt_mask": causal.numpy(),
            "src_key_padding_mask": _padding(SOURCE),
            "memory_key_padding_mask": _padding(SOURCE),
            "tgt_key_padding_mask": _padding(TARGET),
        },
        {"tgt_mask": causal.numpy(), "tgt_is_causal": True, "src_mask": _padding(SOURCE)[:1]},
    ]
    masks[2]["src_mask"] = np.broadcast_to(masks[2]["src_mask"], (SOURCE, SOURCE)).copy()
    for kwargs in masks:
        torch_model.zero_grad()
        lucid_model.zero_grad()
        check_forward_backward(torch_model, lucid_model, [src, tgt], _deep(dtype), kwargs=kwargs)


@requires_torch
def test_transformer_sgd_steps() -> None:
    torch_model, lucid_model = _transformer_pair("float64", batch_first=True)
    tgt, src = _sequences("float64", True)
    rng = np.random.default_rng(9)
    check_sgd_steps(
        torch_model,
        lucid_model,
        lambda: [rng.standard_normal(a.shape) for a in (src, tgt)],
        "float64",
    )


@requires_torch
def test_transformer_defaults_init_and_errors() -> None:
    model = Transformer()
    assert model.d_model == 512 and model.nhead == 8 and model.batch_first is False
    assert len(model.encoder.layers) == 6 and len(model.decoder.layers) == 6
    assert model.encoder.layers[0].linear1.out_features == 2048
    assert model.decoder.layers[0].dropout.p == 0.1
    torch.manual_seed(0)
    reference = torch.nn.Transformer(16, 2, 1, 1, 32)
    small = Transformer(16, 2, 1, 1, 32)
    check_repr_and_keys(reference, small)
    # xavier_uniform_ on every matrix: in_proj (48x16) bound is sqrt(6/64), linear1 sqrt(6/48)
    in_proj = small.decoder.layers[0].self_attn.in_proj_weight.detach().numpy()
    assert np.abs(in_proj).max() <= np.sqrt(6 / 64) and np.abs(in_proj).max() > 0.25
    linear1 = small.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(linear1).max() <= np.sqrt(6 / 48)
    assert np.all(small.encoder.layers[0].linear1.bias.detach().numpy() != 0)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        small(lucid.randn(5, 2, 16), lucid.randn(4, 3, 16))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        small(lucid.randn(5, 2, 16), lucid.randn(4, 2, 8))
    batch_first = Transformer(16, 2, 1, 1, 32, batch_first=True)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        batch_first(lucid.randn(2, 5, 16), lucid.randn(3, 4, 16))
    assert tuple(small(lucid.randn(5, 16), lucid.randn(4, 16)).shape) == (4, 16)


def test_transformer_custom_encoder_and_decoder() -> None:
    encoder = lucid.nn.Identity()
    decoder = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), 1)
    model = Transformer(8, 2, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder
    assert list(model.state_dict()) == ["decoder." + k for k in decoder.state_dict()]
    with pytest.raises(TypeError):
        model(lucid.randn(5, 1, 8), lucid.randn(4, 1, 8))  # Identity takes no mask keywords


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generate_square_subsequent_mask(dtype: str) -> None:
    mask = Transformer.generate_square_subsequent_mask(4, dtype=getattr(lucid, dtype))
    expected = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=getattr(torch, dtype))
    np.testing.assert_array_equal(mask.numpy(), expected.numpy())
    assert str(mask.dtype) == f"lucid.{dtype}"
    assert str(Transformer.generate_square_subsequent_mask(3).dtype) == "lucid.float32"


def test_decoder_detects_causal_mask() -> None:
    layer = TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    decoder = TransformerDecoder(layer, 1)
    seen = []
    original = decoder.layers[0].forward

    def spy(*args, **kwargs):
        seen.append(kwargs["tgt_is_causal"])
        return original(*args, **kwargs)

    decoder.layers[0].forward = spy
    tgt, memory = lucid.randn(4, 2, 8), lucid.randn(5, 2, 8)
    decoder(tgt, memory, tgt_mask=Transformer.generate_square_subsequent_mask(4))
    decoder(tgt, memory, tgt_mask=lucid.zeros(4, 4))
    decoder(tgt, memory)
    assert seen == [True, False, False]


def test_public_exports() -> None:
    assert lucid.nn.Transformer is Transformer
    assert lucid.nn.TransformerDecoder is TransformerDecoder
    assert lucid.nn.TransformerDecoderLayer is TransformerDecoderLayer
    assert isinstance(Transformer(8, 2, 1, 1, 16).encoder.layers[0], TransformerEncoderLayer)
