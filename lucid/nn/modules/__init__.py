"""lucid.nn.modules: Module, its containers, and the layers built on them."""

from lucid.nn.modules.activation import (  # noqa: I001
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    MultiheadAttention,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)  # fmt: skip
from lucid.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from lucid.nn.modules.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from lucid.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from lucid.nn.modules.distance import CosineSimilarity, PairwiseDistance
from lucid.nn.modules.dropout import Dropout, Dropout2d
from lucid.nn.modules.flatten import Flatten, Unflatten
from lucid.nn.modules.linear import Bilinear, Identity, Linear
from lucid.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from lucid.nn.modules.module import Module
from lucid.nn.modules.normalization import GroupNorm, LayerNorm, RMSNorm
from lucid.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)  # fmt: skip
from lucid.nn.modules.pixelshuffle import (
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)  # fmt: skip
from lucid.nn.modules.pooling import (
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from lucid.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from lucid.nn.modules.sparse import Embedding
from lucid.nn.modules.sparse import EmbeddingBag
from lucid.nn.modules.fold import Fold, Unfold
from lucid.nn.modules.transformer import TransformerEncoder, TransformerEncoderLayer
from lucid.nn.modules.transformer import Transformer, TransformerDecoder, TransformerDecoderLayer
from lucid.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from lucid.nn.modules.normalization import LocalResponseNorm
from lucid.nn.modules.loss import GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss
from lucid.nn.modules.loss import MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss
from lucid.nn.modules.loss import NLLLoss2d, PoissonNLLLoss, SoftMarginLoss
from lucid.nn.modules.loss import CTCLoss, TripletMarginLoss, TripletMarginWithDistanceLoss
from lucid.nn.modules.loss import LinearCrossEntropyLoss
from lucid.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
from lucid.nn.modules.pixelshuffle import ChannelShuffle
from lucid.nn.modules.conv import Conv3d, ConvTranspose1d, ConvTranspose3d
from lucid.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from lucid.nn.modules.dropout import AlphaDropout, Dropout1d, Dropout3d, FeatureAlphaDropout
from lucid.nn.modules.activation import RReLU
from lucid.nn.modules.batchnorm import BatchNorm3d
from lucid.nn.modules.normalization import CrossMapLRN2d
from lucid.nn.modules.lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyLinear
from lucid.nn.modules.lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from lucid.nn.modules.lazy import LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d
from lucid.nn.modules.lazy import LazyConvTranspose2d, LazyConvTranspose3d
from lucid.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions
from lucid.nn.modules.batchnorm import SyncBatchNorm

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
    "BatchNorm2d", "Bilinear", "Conv1d", "Conv2d", "ConvTranspose2d", "CosineEmbeddingLoss",
    "CrossEntropyLoss", "Dropout", "Dropout2d", "ELU", "Embedding", "Flatten", "GELU",
    "GroupNorm", "Hardtanh", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LayerNorm",
    "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MaxPool1d", "MaxPool2d", "Mish", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "ParameterDict",
    "ParameterList", "RMSNorm", "ReLU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss",
    "Softmax", "Softplus", "Tanh", "TransformerEncoder", "TransformerEncoderLayer", "Unflatten",
    "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "PReLU",
    "ReLU6", "Softmax2d", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold",
    "CosineSimilarity", "PairwiseDistance", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d",
    "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle", "Upsample",
    "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
    "EmbeddingBag", "Fold", "Unfold",
    "CTCLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss2d",
    "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
    "LinearCrossEntropyLoss", "AdaptiveLogSoftmaxWithLoss",
    "ChannelShuffle",
    "Conv3d", "ConvTranspose1d", "ConvTranspose3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "AlphaDropout", "Dropout1d", "Dropout3d", "FeatureAlphaDropout", "RReLU", "BatchNorm3d",
    "CrossMapLRN2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyLinear",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LinearCrossEntropyOptions",
    "SyncBatchNorm",
]  # fmt: skip
