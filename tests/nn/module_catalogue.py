"""The module catalogue: one row per lucid.nn module (and variant), which
tests/nn/test_module_catalogue.py turns into checks, as PyTorch's ModuleInfo does.

Each row yields: construction against torch.nn's module of the same name (repr, parameter and
buffer names, shapes and dtypes), parity with it in float64 and float32 once its parameters and
buffers are copied over (outputs, input and parameter gradients, buffers after the forward), a
state_dict round trip through lucid.save and lucid.load into a module built from another seed,
PyTorch's error for a state dict missing a key, and each of the row's invalid calls
(`errors`) raising PyTorch's error type and message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import lucid

# An input: a shape (floats uniform in [-2, 2) of the column's dtype), an array (as it is, e.g.
# integer targets) or `make(rng)` giving an array (floats are cast to the column's dtype).
Input = tuple[int, ...] | np.ndarray | Callable[[np.random.Generator], np.ndarray]


@dataclass
class ModuleCase:
    """One module under test.

    `build(nn)` constructs it from a namespace (lucid.nn or torch.nn); by default
    `nn.<class_name>(*args, **kwargs)`, with the class named by the row's name up to `[`.
    Each of `errors` is `call(nn, library)` (library: lucid or torch), an invalid construction
    or call that must raise PyTorch's error. `known_gaps` maps a check ("construction",
    "parity", "parity[float32]", "round_trip", "missing_key", "errors") to how lucid differs
    from PyTorch there; that check is then a strict expected failure.
    """

    name: str
    args: Sequence[Any] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: Sequence[Input] = ((2, 3, 4),)
    build: Callable[[Any], Any] | None = None
    # Which inputs get gradients (default: every float input).
    grad_inputs: Sequence[int] | None = None
    # Compared in training mode (True) or after eval() (False): modules that draw random
    # numbers in training are compared in eval mode.
    train: bool = True
    # "float32_deep" for stacks whose float32 rounding exceeds one op's (tests/nn/parity.py).
    float32_tolerance: str = "float32"
    # The dtypes of the parity columns.
    dtypes: Sequence[str] = ("float64", "float32")
    # False for a base class that torch gives no forward: construction and state checks only.
    has_forward: bool = True
    errors: Sequence[Callable[[Any, Any], Any]] = ()
    known_gaps: dict[str, str] = field(default_factory=dict)

    @property
    def class_name(self) -> str:
        return self.name.split("[")[0]

    def make(self, nn: Any) -> Any:
        if self.build is not None:
            return self.build(nn)
        return getattr(nn, self.class_name)(*self.args, **self.kwargs)

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------------------------- inputs
def uniform(low: float, high: float, *shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(low, high, shape)


def classes(count: int, *shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Integer class indices in [0, count)."""
    return lambda rng: rng.integers(0, count, shape)


def signs(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """±1 targets, as the margin and embedding losses take them."""
    return lambda rng: rng.choice([-1.0, 1.0], shape)


def log_probabilities(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Rows of log-probabilities over the last dim."""

    def make(rng: np.random.Generator) -> np.ndarray:
        logits = rng.uniform(-2.0, 2.0, shape)
        return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))

    return make


def unpool_indices(pooled: tuple[int, ...], kernel: int) -> Callable[[np.random.Generator], Any]:
    """Flat indices of a max pooling with kernel = stride = `kernel`: one position inside each
    window of the unpooled plane, as MaxPool's return_indices gives them."""
    spatial = pooled[2:]

    def make(rng: np.random.Generator) -> np.ndarray:
        indices = np.zeros(pooled, dtype=np.int64)
        for position in np.ndindex(*pooled):
            window = position[2:]
            offset = rng.integers(0, kernel, len(spatial))
            flat = 0
            for axis, size in enumerate(spatial):
                flat = flat * size * kernel + window[axis] * kernel + offset[axis]
            indices[position] = flat
        return indices

    return make


# ---------------------------------------------------------------------------- error calls
def construct(class_name: str, *args: Any, **kwargs: Any) -> Callable[[Any, Any], Any]:
    """An invalid construction: `nn.<class_name>(*args, **kwargs)`."""
    return lambda nn, library: getattr(nn, class_name)(*args, **kwargs)


def call(module: Callable[[Any], Any], *shapes: tuple[int, ...]) -> Callable[[Any, Any], Any]:
    """An invalid call: `module(nn)` on float64 ones of `shapes`."""

    def invalid(nn: Any, library: Any) -> Any:
        inputs = [library.ones(*shape, dtype=library.float64) for shape in shapes]
        return module(nn).double()(*inputs)

    return invalid


def _activation(name: str, *args: Any, **kwargs: Any) -> ModuleCase:
    return ModuleCase(name, args, kwargs, inputs=[uniform(-3.0, 3.0, 2, 3, 4)])


def _loss(name: str, inputs: Sequence[Input], grad_inputs: Sequence[int] = (0,), **kwargs) -> Any:
    """A loss module in each reduction: `<name>` (mean), `<name>[sum]`, `<name>[none]`."""
    return [
        ModuleCase(
            name if reduction == "mean" else f"{name}[{reduction}]",
            kwargs={**kwargs, "reduction": reduction},
            inputs=inputs,
            grad_inputs=grad_inputs,
            # an unknown reduction fails at the call
            errors=[call(lambda nn: getattr(nn, name)(reduction="foo"), *inputs)]
            if reduction == "mean" and all(isinstance(spec, tuple) for spec in inputs)
            else (),
        )
        for reduction in ("mean", "sum", "none")
    ]


def library(nn: Any) -> Any:
    """lucid for lucid.nn, torch for torch.nn."""
    if nn is lucid.nn:
        return lucid
    import torch

    return torch


def _fractional(dims: int) -> Callable[[Any], Any]:
    """FractionalMaxPool<dims>d with fixed samples (float64, as its inputs must be), so that
    lucid and torch place the same windows."""
    samples = np.random.default_rng(3).uniform(size=(2, 3, dims))

    def build(nn: Any) -> Any:
        fixed = library(nn).from_numpy(samples.copy())
        pool = getattr(nn, f"FractionalMaxPool{dims}d")
        return pool(2, output_size=3, return_indices=dims == 3, _random_samples=fixed)

    return build


# ------------------------------------------------------------------------------------ rows
def _transformer_encoder(nn: Any) -> Any:
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def _transformer_decoder(nn: Any) -> Any:
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, norm_first=True)
    return nn.TransformerDecoder(layer, 2)


ROWS: list[ModuleCase] = [
    # --------------------------------------------------------------------- activations
    *[
        _activation(name)
        for name in (
            "CELU GELU Hardshrink Hardsigmoid Hardswish LogSigmoid Mish ReLU ReLU6 SELU SiLU "
            "Sigmoid Softsign Tanh Tanhshrink Identity"
        ).split()
    ],
    _activation("ELU", alpha=0.5),
    _activation("GELU[tanh]", approximate="tanh"),
    _activation("Hardtanh", -0.5, 2.0),
    _activation("LeakyReLU", 0.2),
    _activation("Softplus", beta=2.0, threshold=5.0),
    _activation("Softshrink", 0.3),
    _activation("Threshold", 0.1, 20.0),
    _activation("GLU", dim=-1),
    _activation("Softmax", dim=-1),
    _activation("Softmin", dim=1),
    _activation("LogSoftmax", dim=1),
    ModuleCase("Softmax2d", inputs=[(2, 3, 4, 5)]),
    ModuleCase("PReLU", kwargs={"num_parameters": 3, "init": 0.1}),
    ModuleCase("PReLU[shared]"),
    ModuleCase("RReLU", (0.1, 0.3), train=False),
    # ----------------------------------------------------------------- shape and layout
    ModuleCase("Flatten", inputs=[(2, 3, 4, 2)]),
    ModuleCase("Flatten[range]", kwargs={"start_dim": 0, "end_dim": 1}),
    ModuleCase("Unflatten", (2, (2, 2))),
    ModuleCase("ChannelShuffle", (2,), inputs=[(2, 4, 3, 3)]),
    ModuleCase("PixelShuffle", (2,), inputs=[(1, 8, 2, 3)]),
    ModuleCase("PixelUnshuffle", (2,), inputs=[(1, 2, 4, 6)]),
    ModuleCase("Fold", kwargs={"output_size": (4, 5), "kernel_size": 2}, inputs=[(2, 12, 12)]),
    ModuleCase("Unfold", kwargs={"kernel_size": 2, "stride": 2}, inputs=[(2, 3, 4, 6)]),
    ModuleCase("Upsample", kwargs={"scale_factor": 2}, inputs=[(1, 2, 3, 4)]),
    ModuleCase(
        "Upsample[bilinear]",
        kwargs={"size": (5, 7), "mode": "bilinear", "align_corners": False},
        inputs=[(1, 2, 3, 4)],
    ),
    ModuleCase("UpsamplingNearest2d", kwargs={"scale_factor": 2}, inputs=[(1, 2, 3, 4)]),
    ModuleCase("UpsamplingBilinear2d", kwargs={"size": (4, 6)}, inputs=[(1, 2, 3, 4)]),
    # ---------------------------------------------------------------------------- padding
    *[
        ModuleCase(f"{kind}Pad{dims}d", (pad,), inputs=[shape])
        for kind in ("Zero", "Reflection", "Replication", "Circular")
        for dims, pad, shape in [
            (1, (1, 2), (2, 3, 4)),
            (2, (1, 0, 2, 1), (1, 2, 3, 4)),
            (3, 1, (1, 2, 3, 3, 2)),
        ]
    ],
    *[
        ModuleCase(f"ConstantPad{dims}d", (pad, -0.5), inputs=[shape])
        for dims, pad, shape in [
            (1, 2, (2, 3, 4)),
            (2, (1, 0, 2, 1), (1, 2, 3, 4)),
            (3, (1, 0, 0, 1, 2, 0), (1, 2, 3, 3, 2)),
        ]
    ],
    # ----------------------------------------------------------------------- linear
    ModuleCase(
        "Linear",
        (4, 3),
        errors=[call(lambda nn: nn.Linear(5, 3), (2, 4))],
    ),
    ModuleCase("Linear[no bias]", (4, 3), {"bias": False}, inputs=[(4,)]),
    ModuleCase(
        "Bilinear",
        (4, 3, 2),
        inputs=[(5, 4), (5, 3)],
        errors=[construct("Bilinear", 0, 3, 5)],
    ),
    # ---------------------------------------------------------------- convolutions
    ModuleCase(
        "Conv1d",
        (3, 4, 3),
        {"padding": 1},
        inputs=[(2, 3, 6)],
        errors=[
            construct("Conv1d", 3, 4, 3, groups=2),
            construct("Conv1d", 3, 4, 3, padding="same", stride=2),
            construct("Conv1d", 3, 5, 3, groups=3),
            construct("Conv1d", 3, 4, 3, groups=0),
        ],
    ),
    ModuleCase(
        "Conv2d",
        (4, 6, 3),
        {"stride": 2, "padding": 1, "groups": 2, "padding_mode": "reflect"},
        inputs=[(2, 4, 5, 6)],
        errors=[call(lambda nn: nn.Conv2d(4, 6, 3), (2, 3, 5, 6))],
    ),
    ModuleCase(
        "Conv2d[same dilation]",
        (2, 3, 3),
        {"padding": "same", "dilation": 2},
        inputs=[(1, 2, 5, 6)],
    ),
    ModuleCase(
        "Conv3d",
        (2, 3, 2),
        {"bias": False, "padding_mode": "circular", "padding": 1},
        inputs=[(1, 2, 3, 4, 3)],
    ),
    ModuleCase(
        "ConvTranspose1d", (3, 2, 3), {"stride": 2, "output_padding": 1}, inputs=[(2, 3, 4)]
    ),
    ModuleCase(
        "ConvTranspose2d",
        (4, 2, 3),
        {"stride": 2, "padding": 1, "groups": 2},
        inputs=[(1, 4, 3, 3)],
        errors=[construct("ConvTranspose2d", 3, 4, 3, padding_mode="reflect")],
    ),
    ModuleCase("ConvTranspose3d", (2, 2, 2), {"dilation": 2}, inputs=[(1, 2, 2, 3, 2)]),
    # ----------------------------------------------------------------------- pooling
    ModuleCase("AvgPool1d", (3,), {"stride": 2, "padding": 1}, inputs=[(2, 3, 7)]),
    ModuleCase(
        "AvgPool2d", (2,), {"ceil_mode": True, "count_include_pad": False}, inputs=[(1, 2, 5, 5)]
    ),
    ModuleCase("AvgPool3d", (2,), {"divisor_override": 3}, inputs=[(1, 2, 4, 4, 2)]),
    ModuleCase(
        "MaxPool1d",
        (3,),
        {"stride": 2},
        inputs=[(2, 3, 7)],
        errors=[call(lambda nn: nn.MaxPool1d(3, padding=2), (2, 3, 7))],
    ),
    ModuleCase("MaxPool2d", (2,), {"dilation": 2, "padding": 1}, inputs=[(1, 2, 6, 5)]),
    ModuleCase("MaxPool2d[indices]", (2,), {"return_indices": True}, inputs=[(1, 2, 4, 4)]),
    ModuleCase("MaxPool3d", (2,), {"ceil_mode": True}, inputs=[(1, 2, 3, 4, 5)]),
    ModuleCase("AdaptiveAvgPool1d", (3,), inputs=[(2, 3, 7)]),
    ModuleCase("AdaptiveAvgPool2d", ((2, 3),), inputs=[(1, 2, 5, 7)]),
    ModuleCase("AdaptiveAvgPool3d", (2,), inputs=[(1, 2, 3, 5, 4)]),
    ModuleCase("AdaptiveMaxPool1d", (3,), inputs=[(2, 3, 7)]),
    ModuleCase("AdaptiveMaxPool2d", ((2, None),), inputs=[(1, 2, 5, 7)]),
    ModuleCase("AdaptiveMaxPool3d", (2,), {"return_indices": True}, inputs=[(1, 2, 3, 5, 4)]),
    ModuleCase("LPPool1d", (2, 3), inputs=[uniform(0.1, 2.0, 2, 3, 7)]),
    ModuleCase("LPPool2d", (3, 2), inputs=[uniform(0.1, 2.0, 1, 2, 4, 5)]),
    ModuleCase("LPPool3d", (1.5, 2), inputs=[uniform(0.1, 2.0, 1, 2, 4, 4, 3)]),
    ModuleCase(
        "FractionalMaxPool2d", build=_fractional(2), inputs=[(2, 3, 7, 6)], dtypes=("float64",)
    ),
    ModuleCase(
        "FractionalMaxPool3d", build=_fractional(3), inputs=[(2, 3, 5, 6, 7)], dtypes=("float64",)
    ),
    ModuleCase(
        "MaxUnpool1d",
        (2,),
        inputs=[(2, 3, 3), unpool_indices((2, 3, 3), 2)],
    ),
    ModuleCase("MaxUnpool2d", (2,), inputs=[(1, 2, 2, 3), unpool_indices((1, 2, 2, 3), 2)]),
    ModuleCase(
        "MaxUnpool3d",
        (2,),
        inputs=[(1, 1, 2, 2, 1), unpool_indices((1, 1, 2, 2, 1), 2)],
    ),
    # ----------------------------------------------------------------- normalization
    ModuleCase(
        "BatchNorm1d",
        (3,),
        inputs=[(4, 3, 2)],
        errors=[call(lambda nn: nn.BatchNorm1d(3), (1, 3))],
    ),
    ModuleCase("BatchNorm1d[eval]", (3,), {"momentum": None}, inputs=[(4, 3)], train=False),
    ModuleCase("BatchNorm2d", (3,), {"affine": False, "momentum": 0.3}, inputs=[(2, 3, 2, 3)]),
    ModuleCase("BatchNorm3d", (2,), {"track_running_stats": False}, inputs=[(2, 2, 2, 3, 2)]),
    ModuleCase(
        "GroupNorm",
        (2, 4),
        inputs=[(2, 4, 3)],
        errors=[construct("GroupNorm", 3, 4)],
    ),
    ModuleCase("LayerNorm", ((3, 4),), inputs=[(2, 3, 4)]),
    ModuleCase("LayerNorm[no bias]", (4,), {"bias": False, "eps": 1e-3}),
    ModuleCase("RMSNorm", (4,), {"eps": 1e-6}),
    ModuleCase("RMSNorm[no affine]", ((3, 4),), {"elementwise_affine": False}),
    ModuleCase("InstanceNorm1d", (3,), {"affine": True}, inputs=[(2, 3, 5)]),
    ModuleCase("InstanceNorm2d", (2,), {"track_running_stats": True}, inputs=[(2, 2, 3, 4)]),
    ModuleCase(
        "InstanceNorm3d",
        (2,),
        {"affine": True, "track_running_stats": True},
        inputs=[(1, 2, 2, 3, 2)],
    ),
    ModuleCase("LocalResponseNorm", (3,), {"alpha": 0.5}, inputs=[(2, 5, 4)]),
    # outputs only: PyTorch's hand-written backward of this legacy layer is not the derivative
    # of its forward (tests/nn/test_norm_extras.py gradchecks lucid's)
    ModuleCase("CrossMapLRN2d", (3,), {"alpha": 0.5}, inputs=[(2, 5, 3, 2)], grad_inputs=()),
    # ------------------------------------------- dropout: the identity outside training
    ModuleCase("Dropout", (0.3,), train=False, errors=[construct("Dropout", 1.5)]),
    ModuleCase("Dropout1d", train=False, inputs=[(2, 3, 4)], errors=[construct("Dropout1d", -0.1)]),
    ModuleCase("Dropout2d", train=False, inputs=[(2, 3, 4, 2)], errors=[construct("Dropout2d", 2)]),
    ModuleCase("Dropout3d", train=False, inputs=[(1, 2, 3, 2, 2)]),
    ModuleCase("AlphaDropout", (0.2,), train=False, errors=[construct("AlphaDropout", 1.5)]),
    ModuleCase("FeatureAlphaDropout", train=False, inputs=[(2, 3, 4, 2)]),
    # ---------------------------------------------------------------------- sparse
    ModuleCase(
        "Embedding",
        (10, 3),
        {"padding_idx": 2},
        inputs=[classes(10, 2, 5)],
        errors=[construct("Embedding", 10, 3, padding_idx=10)],
    ),
    ModuleCase(
        "EmbeddingBag",
        (10, 3),
        {"mode": "max"},
        inputs=[np.array([4, 1, 0, 3, 1, 2]), np.array([0, 2, 5])],
        errors=[lambda nn, lib: nn.EmbeddingBag(10, 3, mode="foo")(lib.tensor([[0, 1]]))],
    ),
    ModuleCase("EmbeddingBag[2d sum]", (10, 3), {"mode": "sum"}, inputs=[classes(10, 3, 4)]),
    # --------------------------------------------------------------- distances
    ModuleCase("CosineSimilarity", kwargs={"dim": 1}, inputs=[(4, 5), (4, 5)]),
    ModuleCase("PairwiseDistance", kwargs={"p": 1.0, "keepdim": True}, inputs=[(4, 5), (4, 5)]),
    # ------------------------------------------------------------------- recurrent
    ModuleCase(
        "RNN",
        (3, 4),
        {"num_layers": 2, "nonlinearity": "relu"},
        inputs=[(5, 2, 3)],
        errors=[
            construct("RNN", 3, 4, nonlinearity="foo"),
            construct("RNN", 3, 4, dropout=1.5),
        ],
    ),
    ModuleCase("RNN[batch_first h0]", (3, 4), {"batch_first": True}, inputs=[(2, 5, 3), (1, 2, 4)]),
    ModuleCase("LSTM", (3, 4), {"bidirectional": True}, inputs=[(5, 2, 3)]),
    ModuleCase(
        "LSTM[proj]",
        (3, 4),
        {"proj_size": 2, "num_layers": 2},
        inputs=[(4, 3)],
        errors=[construct("LSTM", 3, 4, proj_size=4)],
    ),
    ModuleCase("GRU", (3, 4), {"num_layers": 2, "bias": False}, inputs=[(5, 2, 3)]),
    ModuleCase("RNNCell", (3, 4), {"nonlinearity": "relu"}, inputs=[(2, 3), (2, 4)]),
    ModuleCase("LSTMCell", (3, 4), inputs=[(2, 3)]),
    ModuleCase("GRUCell", (3, 4), inputs=[(3,), (4,)]),
    ModuleCase("RNNBase", ("LSTM", 3, 4), {"num_layers": 2}, has_forward=False),
    ModuleCase("RNNCellBase", (3, 4), {"bias": True, "num_chunks": 3}, has_forward=False),
    # ------------------------------------------------------------ attention, transformer
    ModuleCase(
        "MultiheadAttention",
        (4, 2),
        inputs=[(3, 2, 4), (5, 2, 4), (5, 2, 4)],
        float32_tolerance="float32_deep",
        errors=[construct("MultiheadAttention", 5, 2)],
    ),
    ModuleCase(
        "MultiheadAttention[kdim batch_first bias_kv]",
        (4, 2),
        {"kdim": 3, "vdim": 5, "batch_first": True, "add_bias_kv": True, "add_zero_attn": True},
        inputs=[(2, 3, 4), (2, 5, 3), (2, 5, 5)],
        float32_tolerance="float32_deep",
    ),
    ModuleCase(
        "TransformerEncoderLayer",
        (8, 2),
        {"dim_feedforward": 16, "dropout": 0.0},
        inputs=[(3, 2, 8)],
        float32_tolerance="float32_deep",
    ),
    ModuleCase(
        "TransformerDecoderLayer",
        (8, 2),
        {"dim_feedforward": 16, "dropout": 0.0, "activation": "gelu", "batch_first": True},
        inputs=[(2, 3, 8), (2, 4, 8)],
        float32_tolerance="float32_deep",
    ),
    ModuleCase(
        "TransformerEncoder",
        build=_transformer_encoder,
        inputs=[(2, 3, 8)],
        float32_tolerance="float32_deep",
    ),
    ModuleCase(
        "TransformerDecoder",
        build=_transformer_decoder,
        inputs=[(3, 2, 8), (4, 2, 8)],
        float32_tolerance="float32_deep",
    ),
    ModuleCase(
        "Transformer",
        kwargs={
            "d_model": 8,
            "nhead": 2,
            "num_encoder_layers": 1,
            "num_decoder_layers": 1,
            "dim_feedforward": 16,
            "dropout": 0.0,
        },
        inputs=[(4, 2, 8), (3, 2, 8)],
        float32_tolerance="float32_deep",
        errors=[construct("Transformer", d_model=7, nhead=2)],
    ),
    # ------------------------------------------------------------------- containers
    ModuleCase(
        "Sequential",
        build=lambda nn: nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)),
    ),
    ModuleCase("DataParallel", build=lambda nn: nn.DataParallel(nn.Linear(4, 3))),
    ModuleCase(
        "AdaptiveLogSoftmaxWithLoss",
        (8, 10, [4, 8]),
        {"div_value": 2.0},
        inputs=[(5, 8), classes(10, 5)],
        errors=[construct("AdaptiveLogSoftmaxWithLoss", 8, 10, [4, 12])],
    ),
    # ------------------------------------------------------------------------ losses
    *_loss("L1Loss", [(3, 4), (3, 4)], (0, 1)),
    *_loss("MSELoss", [(3, 4), (3, 4)], (0, 1)),
    *_loss("SmoothL1Loss", [(3, 4), (3, 4)], (0, 1), beta=0.5),
    *_loss("HuberLoss", [(3, 4), (3, 4)], (0, 1), delta=0.7),
    *_loss("SoftMarginLoss", [(3, 4), signs(3, 4)]),
    *_loss("BCELoss", [uniform(0.05, 0.95, 3, 4), uniform(0.0, 1.0, 3, 4)]),
    *_loss("BCEWithLogitsLoss", [(3, 4), uniform(0.0, 1.0, 3, 4)], (0, 1)),
    *_loss("CrossEntropyLoss", [(4, 5), classes(5, 4)], label_smoothing=0.1),
    *_loss("NLLLoss", [log_probabilities(4, 5), classes(5, 4)]),
    *_loss("KLDivLoss", [log_probabilities(3, 4), uniform(0.05, 1.0, 3, 4)], (0, 1)),
    *_loss("PoissonNLLLoss", [(3, 4), uniform(0.0, 3.0, 3, 4)], (0, 1)),
    *_loss("GaussianNLLLoss", [(3, 4), (3, 4), uniform(0.1, 2.0, 3, 4)], (0, 1, 2)),
    *_loss("HingeEmbeddingLoss", [(3, 4), signs(3, 4)], margin=0.5),
    *_loss("MultiLabelSoftMarginLoss", [(3, 4), classes(2, 3, 4)]),
    *_loss("MultiMarginLoss", [(3, 4), classes(4, 3)], p=2, margin=0.7),
    *_loss("MarginRankingLoss", [(5,), (5,), signs(5)], (0, 1), margin=0.2),
    *_loss("CosineEmbeddingLoss", [(3, 4), (3, 4), signs(3)], (0, 1), margin=0.1),
    *_loss("TripletMarginLoss", [(3, 4), (3, 4), (3, 4)], (0, 1, 2), swap=True),
    *_loss("TripletMarginWithDistanceLoss", [(3, 4), (3, 4), (3, 4)], (0, 1, 2)),
    ModuleCase(
        "MultiLabelMarginLoss",
        inputs=[(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])],
    ),
    ModuleCase(
        "KLDivLoss[log_target]",
        kwargs={"reduction": "batchmean", "log_target": True},
        inputs=[log_probabilities(3, 4), log_probabilities(3, 4)],
        grad_inputs=(0, 1),
    ),
    ModuleCase(
        "CrossEntropyLoss[ignore_index 2d]",
        build=lambda nn: nn.CrossEntropyLoss(ignore_index=1),
        inputs=[(2, 4, 3), classes(4, 2, 3)],
        grad_inputs=(0,),
    ),
    ModuleCase(
        "CTCLoss",
        kwargs={"blank": 0, "zero_infinity": True},
        inputs=[
            log_probabilities(6, 2, 4),
            np.array([[1, 2, 2], [3, 1, 0]]),
            np.array([6, 5]),
            np.array([3, 2]),
        ],
        grad_inputs=(0,),
    ),
    ModuleCase(
        "LinearCrossEntropyLoss",
        (5, 4),
        {"bias": True},
        inputs=[(3, 5), classes(4, 3)],
        grad_inputs=(0,),
    ),
]

# lucid.nn modules without a row: why, and the test file (from the repository root) that
# covers them, which must name them.
LAZY = (
    "a lazy module: its parameters take their shapes at the first call, which "
    "tests/nn/test_lazy.py checks against torch, before it becomes the module with a row"
)
UNCATALOGUED_MODULES: dict[str, tuple[str, str]] = {
    "Module": ("the base class every row builds on", "tests/nn/test_module.py"),
    "ModuleList": ("a container with no forward of its own", "tests/nn/test_containers.py"),
    "ModuleDict": ("a container with no forward of its own", "tests/nn/test_containers.py"),
    "ParameterList": ("a container with no forward of its own", "tests/nn/test_containers.py"),
    "ParameterDict": ("a container with no forward of its own", "tests/nn/test_containers.py"),
    "SyncBatchNorm": (
        "needs a process group: its test runs ranks against torch's",
        "tests/nn/test_sync_batchnorm.py",
    ),
    "NLLLoss2d": ("deprecated in torch: NLLLoss, which has rows", "tests/nn/test_loss_modules.py"),
    **{
        name: (LAZY, "tests/nn/test_lazy.py")
        for name in (
            "LazyLinear LazyConv1d LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d "
            "LazyConvTranspose3d LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d "
            "LazyInstanceNorm1d LazyInstanceNorm2d LazyInstanceNorm3d"
        ).split()
    },
}
