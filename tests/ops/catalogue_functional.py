"""Op catalogue rows: the lucid.nn.functional ops composed of other ops (shrinkage and threshold
activations and their in-place forms, softmin, normalize, distances and similarity, pad,
fold/unfold, embedding_bag, instance and local response norm, upsample, channel dropout
outside training, multi-head attention), each against its NumPy reference."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as LF
from tests.ops.op_catalogue import ErrorInput, OpCase, dim_out_of_range
from tests.torch_oracle import functional as F
from tests.torch_oracle import torch

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ---------------------------------------------------------------------- NumPy references
def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = np.exp(x - x.max(axis=dim, keepdims=True))
    return shifted / shifted.sum(axis=dim, keepdims=True)


def _elu(x: np.ndarray, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0):
    return scale * np.where(x > 0, x, alpha * np.expm1(x * input_scale))


def _hardshrink(x: np.ndarray, lambd: float = 0.5) -> np.ndarray:
    return np.where(np.abs(x) > lambd, x, 0.0)


def _softshrink(x: np.ndarray, lambd: float = 0.5) -> np.ndarray:
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0.0))


def _threshold(x: np.ndarray, threshold: float, value: float) -> np.ndarray:
    return np.where(x > threshold, x, value)


def _p_norm(x: np.ndarray, p: float, axis: int, keepdims: bool = False) -> np.ndarray:
    return np.sum(np.abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _normalize(x: np.ndarray, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> np.ndarray:
    return x / np.maximum(_p_norm(x, p, dim, keepdims=True), eps)


def _pairwise_distance(a, b, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    # PyTorch adds eps to the difference, not to the norm
    return _p_norm(a - b + eps, p, -1, keepdims=keepdim)


def _cosine_similarity(a: np.ndarray, b: np.ndarray, dim: int = 1, eps: float = 1e-8):
    a_unit = a / np.maximum(_p_norm(a, 2.0, dim, keepdims=True), eps)
    b_unit = b / np.maximum(_p_norm(b, 2.0, dim, keepdims=True), eps)
    return np.sum(a_unit * b_unit, axis=dim)


_NUMPY_PAD_MODES = {
    "constant": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "wrap",
}


def _pad(x: np.ndarray, pad: tuple[int, ...], mode: str = "constant", value: float = 0.0):
    """`pad` lists (before, after) pairs from the last dim backwards, as F.pad reads it."""
    widths = [(0, 0)] * x.ndim
    for k in range(len(pad) // 2):
        widths[x.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    options = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, widths, _NUMPY_PAD_MODES[mode], **options)


def _blocks(size: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _unfold(
    x: np.ndarray, kernel_size: int, dilation: int = 1, padding: int = 0, stride: int = 1
) -> np.ndarray:
    """im2col: each (kernel_size x kernel_size) block of each channel as a column."""
    n, c, h, w = x.shape
    k, d, s = kernel_size, dilation, stride
    rows, cols = _blocks(h, k, d, padding, s), _blocks(w, k, d, padding, s)
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    offsets = [(i * d, j * d) for i in range(k) for j in range(k)]
    windows = [
        x[:, :, i : i + s * (rows - 1) + 1 : s, j : j + s * (cols - 1) + 1 : s] for i, j in offsets
    ]
    blocks = np.stack(windows, axis=2)
    return blocks.reshape(n, c * k * k, rows * cols)


def _fold(
    columns: np.ndarray,
    output_size: tuple[int, int],
    kernel_size: int,
    dilation: int = 1,
    padding: int = 0,
    stride: int = 1,
) -> np.ndarray:
    """col2im, the adjoint of `_unfold`: blocks summed back into place."""
    n = columns.shape[0]
    k, d, s = kernel_size, dilation, stride
    c = columns.shape[1] // (k * k)
    h, w = output_size
    rows, cols = _blocks(h, k, d, padding, s), _blocks(w, k, d, padding, s)
    blocks = columns.reshape(n, c, k, k, rows, cols)
    result = np.zeros((n, c, h + 2 * padding, w + 2 * padding), columns.dtype)
    for i in range(k):
        for j in range(k):
            window = (slice(None), slice(None))
            window += (slice(i * d, i * d + s * (rows - 1) + 1, s),)
            window += (slice(j * d, j * d + s * (cols - 1) + 1, s),)
            result[window] += blocks[:, :, i, j]
    return result[:, :, padding : padding + h, padding : padding + w]


def _windows(x: np.ndarray, dimension: int, size: int, step: int) -> np.ndarray:
    """Tensor.unfold: windows of `size` every `step` along `dimension`, as a new last dim."""
    dimension %= x.ndim
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dimension)
    every = [slice(None)] * windows.ndim
    every[dimension] = slice(None, None, step)
    return windows[tuple(every)]


def _embedding_bag(indices, weight, offsets, mode: str = "mean", per_sample_weights=None):
    bounds = [*offsets.tolist(), len(indices)]
    bags = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        rows = weight[indices[start:end]]
        if per_sample_weights is not None:
            rows = rows * per_sample_weights[start:end, None]
        bags.append({"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0))
    return np.stack(bags)


def _instance_norm(
    x,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats: bool = True,
    eps: float = 1e-5,
) -> np.ndarray:
    channels = (1, -1) + (1,) * (x.ndim - 2)
    if use_input_stats:
        axes = tuple(range(2, x.ndim))
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = running_mean.reshape(channels), running_var.reshape(channels)
    result = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        result = result * weight.reshape(channels) + bias.reshape(channels)
    return result


def _local_response_norm(x, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """x over (k + alpha * the mean of x^2 over `size` neighbouring channels) ** beta, the
    window zero-padded at the ends of the channel dim, as PyTorch averages it."""
    channels = x.shape[1]
    widths = [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 2)
    squares = np.pad(x**2, widths)
    window = sum(squares[:, i : i + channels] for i in range(size)) / size
    return x / (k + alpha * window) ** beta


def _align_corners_weights(size_in: int, size_out: int) -> np.ndarray:
    """(size_out, size_in) linear interpolation weights with the corner pixels aligned."""
    positions = np.linspace(0.0, size_in - 1, size_out)
    low = np.minimum(np.floor(positions).astype(int), size_in - 2)
    fraction = positions - low
    weights = np.zeros((size_out, size_in))
    weights[np.arange(size_out), low] += 1.0 - fraction
    weights[np.arange(size_out), low + 1] += fraction
    return weights


def _bilinear_align_corners(x: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    rows = _align_corners_weights(x.shape[2], size[0])
    cols = _align_corners_weights(x.shape[3], size[1])
    return np.einsum("oh,nchw,pw->ncop", rows, x, cols)


def _nearest_by_two(x: np.ndarray) -> np.ndarray:
    return x.repeat(2, axis=2).repeat(2, axis=3)


def _attention(query, key, value, in_weight, in_bias, out_weight, out_bias, heads: int):
    """(output, head-averaged weights) of multi-head attention on (length, batch, embed)."""
    length, batch, embed = query.shape
    head_dim = embed // heads
    weight_q, weight_k, weight_v = np.split(in_weight, 3)
    bias_q, bias_k, bias_v = np.split(in_bias, 3)

    def heads_first(x: np.ndarray) -> np.ndarray:
        return x.reshape(x.shape[0], batch * heads, head_dim).transpose(1, 0, 2)

    q = heads_first(query @ weight_q.T + bias_q) / math.sqrt(head_dim)
    k = heads_first(key @ weight_k.T + bias_k)
    v = heads_first(value @ weight_v.T + bias_v)
    weights = _softmax(q @ k.transpose(0, 2, 1), -1)
    merged = (weights @ v).transpose(1, 0, 2).reshape(length, batch, embed)
    averaged = weights.reshape(batch, heads, length, -1).mean(axis=1)
    return merged @ out_weight.T + out_bias, averaged


# ------------------------------------------------------------------------- row helpers
def _functional(name: str, reference: Any, **options: Any) -> OpCase:
    """`lucid.nn.functional.<op>` against `torch.nn.functional.<op>`, for a row `<op>[variant]`."""
    op = name.split("[")[0]
    return OpCase(name, getattr(LF, op), getattr(F, op), reference, low=-3.0, high=3.0, **options)


def _inplace(name: str, reference: Any, *args: Any, **options: Any) -> OpCase:
    """`F.<name>(x * 1.0, *args)`, the in-place form, on a copy so the leaf stays untouched."""
    return OpCase(
        name,
        lambda x: getattr(LF, name)(x * 1.0, *args),
        lambda x: getattr(F, name)(x * 1.0, *args),
        lambda x: reference(x, *args),
        low=-3.0,
        high=3.0,
        **options,
    )


def _quietly(call: Any) -> Any:
    """`call` without the deprecation warning of F.upsample*, which lucid and torch both give."""

    def without_warning(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", r"nn\.functional\.upsample", UserWarning)
            return call(*args, **kwargs)

    return without_warning


def _fractional_with_indices(dims: int, shape: tuple[int, ...], output_index: int) -> OpCase:
    """fractional_max_pool<dims>d_with_indices with fixed samples, so that lucid and torch place
    the same windows: its values (output 0) or its argmax indices (output 1)."""
    samples = np.random.default_rng(3).uniform(size=(shape[0], shape[1], dims))
    name = f"fractional_max_pool{dims}d_with_indices"
    output_size = (3,) * dims

    def lucid_op(x: Any) -> Any:
        fixed = lucid.tensor(samples, dtype=x.dtype)
        return getattr(LF, name)(x, 2, output_size, _random_samples=fixed)

    def torch_op(x: Any) -> Any:
        fixed = torch.tensor(samples, dtype=x.dtype)
        return getattr(F, name)(x, 2, output_size, _random_samples=fixed)

    return OpCase(
        f"{name}[{('values', 'indices')[output_index]}]",
        lucid_op,
        torch_op,
        None,
        shapes=[shape],
        output_index=output_index,
        differentiable=output_index == 0,
    )


def _bag_inputs(per_sample_weights: bool = False) -> Any:
    """Indices into a (5, 3) weight, in bags [0:2], [2:5], [5:6] with no index twice in a bag
    (a repeated row would tie in `max`)."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        indices = np.array([4, 1, 0, 3, 1, 2], dtype=np.int64)
        weight = rng.uniform(-2.0, 2.0, (5, 3)).astype(dtype)
        offsets = np.array([0, 2, 5], dtype=np.int64)
        arrays = [indices, weight, offsets]
        if per_sample_weights:
            arrays.append(rng.uniform(-2.0, 2.0, (6,)).astype(dtype))
        return arrays

    return make


def _running_stats(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [
        rng.uniform(-2.0, 2.0, (2, 3, 5)).astype(dtype),
        rng.uniform(-1.0, 1.0, (3,)).astype(dtype),
        rng.uniform(0.5, 2.0, (3,)).astype(dtype),
    ]


def _attention_call(library_functional: Any, need_weights: bool = False) -> Any:
    def call(query, key, value, in_weight, in_bias, out_weight, out_bias):
        return library_functional.multi_head_attention_forward(
            query,
            key,
            value,
            4,
            2,
            in_weight,
            in_bias,
            None,
            None,
            False,
            0.0,
            out_weight,
            out_bias,
            training=False,
            need_weights=need_weights,
        )

    return call


# PyTorch's gradient at a nan input of these activations depends on where the element sits:
# its vectorized loop body gives 0 (hardshrink, softshrink, hardtanh) or nan (elu, celu,
# selu_), the loop's tail passes the gradient through, and a (3, 4) input has elements in
# both (how many, the CPU's vector width decides). lucid gives one
# answer everywhere, so these rows leave out the extreme values (as tests/ops/catalogue_nn.py's
# activations do).
_NAN_GRADIENT_BY_POSITION = {"extremes": False}
_ATTENTION_SHAPES = [(3, 2, 4), (5, 2, 4), (5, 2, 4), (12, 4), (12,), (4, 4), (4,)]
_DROPOUT_P = ErrorInput(
    [(2, 3, 4)],
    ValueError,
    "dropout probability has to be between 0 and 1, but got 1.5",
    {"p": 1.5, "training": False},
)
# two inputs whose features differ in number
_FEATURE_MISMATCH = ErrorInput(
    [(3, 4), (3, 5)],
    RuntimeError,
    r"The size of tensor a \(4\) must match the size of tensor b \(5\) at non-singleton "
    r"dimension 1",
)


ROWS: list[OpCase] = [
    # --------------------------------------------------- shrinkage and thresholds
    _functional("hardshrink", _hardshrink, **_NAN_GRADIENT_BY_POSITION),
    _functional(
        "hardshrink[lambd]", _hardshrink, kwargs={"lambd": 1.2}, **_NAN_GRADIENT_BY_POSITION
    ),
    _functional(
        "softshrink",
        _softshrink,
        **_NAN_GRADIENT_BY_POSITION,
        error_inputs=[
            ErrorInput(
                [(3,)],
                RuntimeError,
                r"lambda must be in range \[0, 1\.79769e\+308\] for input dtype Double, "
                r"but found -0\.5",
                {"lambd": -0.5},
            )
        ],
    ),
    _functional(
        "softshrink[lambd]", _softshrink, kwargs={"lambd": 1.2}, **_NAN_GRADIENT_BY_POSITION
    ),
    _functional("softsign", lambda x: x / (1.0 + np.abs(x))),
    _functional("tanhshrink", lambda x: x - np.tanh(x)),
    _functional("threshold", _threshold, kwargs={"threshold": 0.5, "value": -1.0}),
    _inplace("threshold_", _threshold, 0.5, -1.0),
    # ------------------------------------------ in-place forms of the activations
    _inplace(
        "hardtanh_",
        lambda x, low, high: np.clip(x, low, high),
        -0.5,
        2.0,
        **_NAN_GRADIENT_BY_POSITION,
    ),
    _inplace("elu_", _elu, 1.5, **_NAN_GRADIENT_BY_POSITION),
    # an alpha whose reciprocal float32 holds exactly: PyTorch's celu_ backward rounds 1 / alpha
    # to float32 (a relative error of 1.7e-8 in float64 at alpha = 0.7), lucid does not
    _inplace(
        "celu_",
        lambda x, alpha: _elu(x, alpha, 1.0, 1.0 / alpha),
        0.5,
        **_NAN_GRADIENT_BY_POSITION,
    ),
    _inplace("selu_", lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE), **_NAN_GRADIENT_BY_POSITION),
    _inplace("leaky_relu_", lambda x, slope: np.where(x > 0, x, slope * x), 0.2),
    # ------------------------------------------------------------------- softmax
    _functional(
        "softmin",
        lambda x, dim: _softmax(-x, dim),
        kwargs={"dim": 1},
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    _functional(
        "softmin[dim0 3d]", lambda x, dim: _softmax(-x, dim), shapes=[(3, 2, 4)], kwargs={"dim": 0}
    ),
    # lucid.nn.functional's softmax and log_softmax are not lucid.softmax and lucid.log_softmax
    OpCase("F.softmax", LF.softmax, F.softmax, _softmax, kwargs={"dim": -1}),
    OpCase(
        "F.softmax[dtype]",
        lambda x: LF.softmax(x, 0, dtype=lucid.float64),
        lambda x: F.softmax(x, 0, dtype=torch.float64),
        lambda x: _softmax(x, 0),
    ),
    OpCase(
        "F.log_softmax",
        LF.log_softmax,
        F.log_softmax,
        lambda x, dim: np.log(_softmax(x, dim)),
        shapes=[(3, 2, 4)],
        kwargs={"dim": 1},
        error_inputs=[dim_out_of_range(dim=2)],
    ),
    # ------------------------------------------------ normalize, distances, similarity
    _functional(
        "normalize",
        _normalize,
        float16_extremes_skip="the float16 norm of the finite row rounds one unit off "
        "PyTorch's, whose summation order differs, and the gradient carries it",
        error_inputs=[
            ErrorInput(
                [np.arange(3)],
                RuntimeError,
                "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                "Got Long",
                {"dim": 0},
            )
        ],
    ),
    _functional("normalize[p1 dim0]", _normalize, kwargs={"p": 1.0, "dim": 0}),
    # a norm below eps: the division is by eps
    _functional("normalize[eps]", _normalize, shapes=[(2, 3)], kwargs={"eps": 5.0}),
    _functional(
        "pairwise_distance",
        _pairwise_distance,
        shapes=[(4, 5), (4, 5)],
        sums=True,
        error_inputs=[_FEATURE_MISMATCH],
    ),
    _functional(
        "pairwise_distance[p1 keepdim]",
        _pairwise_distance,
        shapes=[(4, 5), (5,)],
        kwargs={"p": 1.0, "keepdim": True},
        sums=True,
    ),
    _functional(
        "pairwise_distance[p3]",
        _pairwise_distance,
        shapes=[(2, 3, 4), (3, 4)],
        kwargs={"p": 3.0},
        sums=True,
    ),
    _functional(
        "cosine_similarity",
        _cosine_similarity,
        shapes=[(4, 5), (4, 5)],
        sums=True,
        error_inputs=[_FEATURE_MISMATCH],
    ),
    _functional(
        "cosine_similarity[broadcast]",
        _cosine_similarity,
        shapes=[(3, 1, 5), (4, 5)],
        kwargs={"dim": -1},
        sums=True,
    ),
    # ----------------------------------------------------------------------- pad
    _functional(
        "pad",
        _pad,
        shapes=[(2, 3, 4)],
        kwargs={"pad": (1, 2), "mode": "constant", "value": 0.5},
        error_inputs=[
            ErrorInput(
                [(1, 2, 4)],
                RuntimeError,
                "Padding length must be divisible by 2",
                {"pad": (1, 2, 3)},
            ),
            ErrorInput(
                [(1, 2, 4)],
                NotImplementedError,
                "Unrecognised padding mode foo",
                {"pad": (1, 1), "mode": "foo"},
            ),
            ErrorInput(
                [(1, 2, 4)],
                RuntimeError,
                r"Argument #4: Padding size should be less than the corresponding input "
                r"dimension, but got: padding \(5, 5\) at dimension 2 of input \[1, 2, 4\]",
                {"pad": (5, 5), "mode": "reflect"},
            ),
        ],
    ),
    _functional(
        "pad[2d constant]",
        _pad,
        shapes=[(1, 2, 3, 4)],
        kwargs={"pad": (1, 1, 2, 0), "mode": "constant", "value": -1.0},
    ),
    *[
        _functional(
            f"pad[{variant}]", _pad, shapes=[shape], kwargs={"pad": pad, "mode": mode}, sums=True
        )
        for variant, shape, pad, mode in [
            ("reflect", (2, 3, 4), (2, 3), "reflect"),
            ("2d replicate", (1, 2, 3, 4), (2, 1, 1, 3), "replicate"),
            ("2d circular", (1, 2, 3, 4), (1, 2, 2, 1), "circular"),
            ("3d reflect", (1, 1, 3, 3, 4), (1, 1, 2, 0, 1, 2), "reflect"),
        ]
    ],
    # ---------------------------------------------------------------- fold/unfold
    OpCase(
        "F.unfold",
        LF.unfold,
        F.unfold,
        _unfold,
        shapes=[(2, 3, 4, 5)],
        kwargs={"kernel_size": 2},
    ),
    OpCase(
        "F.unfold[dilation padding stride]",
        LF.unfold,
        F.unfold,
        _unfold,
        shapes=[(1, 2, 5, 6)],
        kwargs={"kernel_size": 2, "dilation": 2, "padding": 1, "stride": 2},
    ),
    OpCase(
        "fold",
        LF.fold,
        F.fold,
        _fold,
        shapes=[(2, 12, 12)],
        kwargs={"output_size": (4, 5), "kernel_size": 2},
        sums=True,
        error_inputs=[
            ErrorInput(
                [(1, 5, 9)],
                RuntimeError,
                r"Expected size of input's dimension 1 to be divisible by the product of "
                r"kernel_size, but got input.size\(1\)=5 and kernel_size=\(2, 2\).",
                {"output_size": (4, 4), "kernel_size": 2},
            )
        ],
    ),
    OpCase(
        "fold[dilation padding stride]",
        LF.fold,
        F.fold,
        _fold,
        shapes=[(1, 8, 9)],
        kwargs={"output_size": (5, 6), "kernel_size": 2, "dilation": 2, "padding": 1, "stride": 2},
        sums=True,
    ),
    # Tensor.unfold (windows along one dim) shares F.unfold's name
    OpCase(
        "Tensor.unfold",
        lambda x: x.unfold(1, 2, 1),
        lambda x: x.unfold(1, 2, 1),
        lambda x: _windows(x, 1, 2, 1),
    ),
    OpCase(
        "Tensor.unfold[step]",
        lambda x, dimension, size, step: x.unfold(dimension, size, step),
        lambda x, dimension, size, step: x.unfold(dimension, size, step),
        _windows,
        shapes=[(2, 7, 3)],
        kwargs={"dimension": -2, "size": 3, "step": 2},
        error_inputs=[
            ErrorInput(
                [(3, 4)],
                RuntimeError,
                "maximum size for tensor at dimension 1 is 4 but size is 5",
                {"dimension": 1, "size": 5, "step": 1},
            ),
            ErrorInput(
                [(3, 4)],
                RuntimeError,
                "step is 0 but must be > 0",
                {"dimension": 1, "size": 2, "step": 0},
            ),
        ],
    ),
    # --------------------------------------------------------------- embedding_bag
    OpCase(
        "embedding_bag",
        LF.embedding_bag,
        F.embedding_bag,
        _embedding_bag,
        make_inputs=_bag_inputs(),
        sums=True,
        error_inputs=[
            ErrorInput(
                [np.array([0, 1, 2]), (5, 3), np.array([0, 2])],
                ValueError,
                "mode has to be one of sum, mean or max",
                {"mode": "foo"},
            ),
            ErrorInput(
                [np.array([0, 1, 2]), (5, 3), np.array([1, 2])],
                RuntimeError,
                r"offsets\[0\] has to be 0, i.e., the first sequence in the mini-batch has to "
                r"start from position 0. However, got 1",
            ),
        ],
    ),
    OpCase(
        "embedding_bag[sum]",
        LF.embedding_bag,
        F.embedding_bag,
        _embedding_bag,
        make_inputs=_bag_inputs(),
        kwargs={"mode": "sum"},
        sums=True,
    ),
    OpCase(
        "embedding_bag[max]",
        LF.embedding_bag,
        F.embedding_bag,
        _embedding_bag,
        make_inputs=_bag_inputs(),
        kwargs={"mode": "max"},
        # lucid's max propagates a NaN of a bag, PyTorch's skips it unless it comes first
        # (tests/ops/test_catalogue_gaps.py)
        extremes=False,
    ),
    OpCase(
        "embedding_bag[per_sample_weights]",
        lambda i, w, o, s: LF.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
        lambda i, w, o, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
        lambda i, w, o, s: _embedding_bag(i, w, o, "sum", s),
        make_inputs=_bag_inputs(per_sample_weights=True),
        sums=True,
    ),
    # ------------------------------------------------ instance and local response norm
    OpCase(
        "instance_norm",
        lambda x, w, b: LF.instance_norm(x, weight=w, bias=b),
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        lambda x, w, b: _instance_norm(x, weight=w, bias=b),
        shapes=[(2, 3, 5), (3,), (3,)],
        sums=True,
    ),
    OpCase(
        "instance_norm[4d]",
        LF.instance_norm,
        F.instance_norm,
        _instance_norm,
        shapes=[(2, 2, 3, 4)],
        sums=True,
        error_inputs=[
            ErrorInput(
                [(1, 3, 1)],
                ValueError,
                r"Expected more than 1 spatial element when training, got input size "
                r"lucid.Size\(\[1, 3, 1\]\)",
            )
        ],
    ),
    OpCase(
        "instance_norm[running stats]",
        lambda x, mean, var: LF.instance_norm(x, mean, var, use_input_stats=False),
        lambda x, mean, var: F.instance_norm(x, mean, var, use_input_stats=False),
        lambda x, mean, var: _instance_norm(x, mean, var, use_input_stats=False),
        make_inputs=_running_stats,
        grad_inputs=[0],
    ),
    OpCase(
        "local_response_norm",
        LF.local_response_norm,
        F.local_response_norm,
        _local_response_norm,
        shapes=[(2, 5, 4)],
        kwargs={"size": 3, "alpha": 0.5, "beta": 0.75, "k": 1.0},
        sums=True,
        error_inputs=[
            ErrorInput(
                [(3,)],
                ValueError,
                # PyTorch's message has a run of spaces from its source's line break
                r"Expected 3D or higher dimensionality\s+input \(got 1 dimensions\)",
                {"size": 2},
            )
        ],
    ),
    OpCase(
        "local_response_norm[4d even size]",
        LF.local_response_norm,
        F.local_response_norm,
        _local_response_norm,
        shapes=[(1, 6, 2, 3)],
        kwargs={"size": 4, "alpha": 0.3, "beta": 0.5, "k": 2.0},
        sums=True,
    ),
    # --------------------------------------------------------------------- upsample
    OpCase(
        "upsample",
        _quietly(LF.upsample),
        _quietly(F.upsample),
        lambda x, scale_factor: _nearest_by_two(x),
        shapes=[(1, 2, 3, 4)],
        kwargs={"scale_factor": 2},
        error_inputs=[
            ErrorInput([(1, 2, 3, 4)], ValueError, "either size or scale_factor should be defined")
        ],
    ),
    OpCase(
        "upsample[bilinear align]",
        _quietly(lambda x: LF.upsample(x, size=(5, 7), mode="bilinear", align_corners=True)),
        _quietly(lambda x: F.upsample(x, size=(5, 7), mode="bilinear", align_corners=True)),
        lambda x: _bilinear_align_corners(x, (5, 7)),
        shapes=[(1, 2, 3, 4)],
        sums=True,
    ),
    OpCase(
        "upsample_nearest",
        _quietly(LF.upsample_nearest),
        _quietly(F.upsample_nearest),
        lambda x, size: _nearest_by_two(x),
        shapes=[(2, 1, 3, 2)],
        kwargs={"size": (6, 4)},
    ),
    OpCase(
        "upsample_bilinear",
        _quietly(LF.upsample_bilinear),
        _quietly(F.upsample_bilinear),
        lambda x, scale_factor: _bilinear_align_corners(x, (6, 8)),
        shapes=[(1, 2, 3, 4)],
        kwargs={"scale_factor": 2},
        sums=True,
    ),
    # ------------------------------------------- fractional max pooling with indices
    *[
        _fractional_with_indices(dims, shape, output_index)
        for dims, shape in [(2, (2, 3, 7, 8)), (3, (1, 2, 5, 6, 7))]
        for output_index in (0, 1)
    ],
    # --------------------------------- channel dropout outside training: the identity
    OpCase(
        "dropout1d_eval",
        lambda x, p=0.5, training=False: LF.dropout1d(x * 1.0, p, training),
        lambda x, p=0.5, training=False: F.dropout1d(x * 1.0, p, training),
        lambda x: x,
        shapes=[(2, 3, 4)],
        error_inputs=[
            _DROPOUT_P,
            ErrorInput(
                [(1, 2, 3, 4)],
                RuntimeError,
                r"dropout1d: Expected 2D or 3D input, but received a 4D input. Note that "
                r"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                r"dimension, a channel dimension, and an optional batch dimension \(i.e. 2D or "
                r"3D inputs\).",
            ),
        ],
    ),
    OpCase(
        "dropout3d_eval",
        lambda x, p=0.5, training=False: LF.dropout3d(x * 1.0, p, training),
        lambda x, p=0.5, training=False: F.dropout3d(x * 1.0, p, training),
        lambda x: x,
        shapes=[(2, 3, 2, 2, 2)],
        error_inputs=[_DROPOUT_P],
    ),
    # ------------------------------------------------------------ multi-head attention
    OpCase(
        "multi_head_attention_forward",
        _attention_call(LF),
        _attention_call(F),
        lambda *arrays: _attention(*arrays, heads=2),
        shapes=_ATTENTION_SHAPES,
        low=-1.0,
        high=1.0,
        output_index=0,
        sums=True,
        rtol32=1e-4,
        atol32=1e-5,
    ),
    OpCase(
        "multi_head_attention_forward[weights]",
        _attention_call(LF, need_weights=True),
        _attention_call(F, need_weights=True),
        lambda *arrays: _attention(*arrays, heads=2),
        shapes=_ATTENTION_SHAPES,
        low=-1.0,
        high=1.0,
        output_index=1,
        sums=True,
        rtol32=1e-4,
        atol32=1e-5,
    ),
]
