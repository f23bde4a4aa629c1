"""Parity of the loss modules (margins, likelihoods, triplets, CTC, class weights) with torch.nn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid.nn.modules import loss as L
from tests.nn.parity import check_forward_backward, check_repr_and_keys
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

DTYPES = ["float64", "float32"]
_RNG = np.random.default_rng(17)
X, Y, Z = (_RNG.standard_normal((4, 5)) for _ in range(3))
SIGNS = np.sign(_RNG.uniform(-1, 1, (4, 5))).astype(np.int64)
CLASS_WEIGHT = np.array([0.5, 1.0, 2.0, 0.25, 1.5])
LABEL_LISTS = np.array([[3, 0, -1, 1, 2], [1, 4, -1, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 2, 0, 1]])
_LOGITS = _RNG.standard_normal((6, 2, 5))
LOG_PROBS = _LOGITS - np.log(np.exp(_LOGITS).sum(2, keepdims=True))

# (module, constructor kwargs, inputs): float inputs require grad, integer ones do not
MODULES = [
    ("MarginRankingLoss", {}, [X, Y, SIGNS]),
    ("MarginRankingLoss", {"margin": 0.5, "reduction": "none"}, [X, Y, SIGNS]),
    ("HingeEmbeddingLoss", {"margin": 0.5}, [np.abs(X), SIGNS]),
    ("HingeEmbeddingLoss", {"reduction": "sum"}, [np.abs(X), SIGNS]),
    ("SoftMarginLoss", {}, [X, SIGNS]),
    ("SoftMarginLoss", {"reduction": "none"}, [X, SIGNS]),
    ("MultiLabelSoftMarginLoss", {}, [X, (SIGNS > 0).astype(np.float64)]),
    ("MultiLabelSoftMarginLoss", {"weight": CLASS_WEIGHT, "reduction": "none"},
     [X, (SIGNS > 0).astype(np.float64)]),
    ("MultiMarginLoss", {}, [X, np.array([0, 4, 2, 1])]),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": CLASS_WEIGHT, "reduction": "sum"},
     [X, np.array([0, 4, 2, 1])]),
    ("MultiLabelMarginLoss", {}, [X, LABEL_LISTS]),
    ("MultiLabelMarginLoss", {"reduction": "none"}, [X, LABEL_LISTS]),
    ("PoissonNLLLoss", {}, [X, np.abs(Y) * 3]),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-6, "reduction": "sum"},
     [np.abs(X), np.abs(Y) * 3]),
    ("GaussianNLLLoss", {}, [X, Y, np.abs(Z)]),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-3, "reduction": "none"},
     [X, Y, np.abs(Z[:, 0])]),
    ("TripletMarginLoss", {}, [X, Y, Z]),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "eps": 1e-4, "swap": True,
                           "reduction": "none"}, [X, Y, Z]),
    ("TripletMarginWithDistanceLoss", {}, [X, Y, Z]),
    ("TripletMarginWithDistanceLoss", {"margin": 2.0, "swap": True, "reduction": "sum"},
     [X, Y, Z]),
    ("CTCLoss", {}, [LOG_PROBS, np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]),
                     np.array([3, 2])]),
    ("CTCLoss", {"blank": 4, "reduction": "none", "zero_infinity": True},
     [LOG_PROBS, np.array([[1, 2, 2], [3, 3, 3]]), np.array([6, 4]), np.array([3, 3])]),
    ("NLLLoss2d", {}, [np.log(np.full((2, 3, 2, 2), 1 / 3)), np.zeros((2, 2, 2), np.int64)]),
    ("LinearCrossEntropyLoss", {"in_features": 5, "num_classes": 3}, [X, np.array([0, 2, 1, 2])]),
    ("LinearCrossEntropyLoss", {"in_features": 5, "num_classes": 3, "out_features": (2,),
                                "bias": True, "weight": CLASS_WEIGHT[:3], "ignore_index": 1,
                                "label_smoothing": 0.1, "reduction": "sum"},
     [X, np.array([[0, 2], [1, 1], [2, 0], [0, 0]])]),
]  # fmt: skip


def _construct(library, name: str, kwargs: dict):
    """The module, past NLLLoss2d's deprecation warning."""
    kwargs = {
        key: library.tensor(value) if isinstance(value, np.ndarray) else value
        for key, value in kwargs.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return getattr(library.nn, name)(**kwargs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kwargs", "inputs"), MODULES, ids=lambda v: str(v)[:40])
def test_loss_module_parity(name: str, kwargs: dict, inputs: list, dtype: str) -> None:
    kwargs = {
        key: value.astype(dtype) if isinstance(value, np.ndarray) else value
        for key, value in kwargs.items()
    }
    inputs = [array.astype(dtype) if array.dtype.kind == "f" else array for array in inputs]
    torch_module, lucid_module = _construct(torch, name, kwargs), _construct(lucid, name, kwargs)
    if dtype == "float64":
        # LinearCrossEntropyLoss's linear map is a parameter, made in the default dtype
        torch_module, lucid_module = torch_module.double(), lucid_module.double()
    check_repr_and_keys(torch_module, lucid_module)
    for constant in getattr(torch_module, "__constants__", []):
        assert getattr(lucid_module, constant) == getattr(torch_module, constant), constant
    check_forward_backward(torch_module, lucid_module, inputs, dtype)


@pytest.mark.parametrize(
    ("name", "kwargs", "match"),
    [
        ("MultiMarginLoss", {"p": 3}, "^only p == 1 and p == 2 supported$"),
        ("MultiMarginLoss", {"weight": np.ones((5, 1))},
         "^MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead$"),
        ("TripletMarginLoss", {"margin": 0.0},
         "^TripletMarginLoss: expected margin to be greater than 0, got 0.0 instead$"),
        ("TripletMarginWithDistanceLoss", {"margin": -1.0},
         "^TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1.0 "
         "instead$"),
    ],
)  # fmt: skip
def test_loss_module_constructor_errors_are_torchs(name: str, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _construct(torch, name, kwargs)
    with pytest.raises(ValueError, match=match):
        _construct(lucid, name, kwargs)


def test_triplet_with_distance_uses_the_given_distance() -> None:
    def cosine_distance(a, b):
        return 1.0 - lucid.nn.functional.cosine_similarity(a, b)

    module = L.TripletMarginWithDistanceLoss(distance_function=cosine_distance, margin=0.5)
    anchor, positive, negative = (lucid.tensor(a) for a in (X, Y, Z))
    expected = cosine_distance(anchor, positive) - cosine_distance(anchor, negative) + 0.5
    expected = lucid.clamp(expected, min=0.0).mean()
    assert module(anchor, positive, negative).item() == pytest.approx(expected.item(), rel=1e-12)
    assert list(dict(module.named_children())) == []


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("MarginRankingLoss", ()), ("SoftMarginLoss", ()), ("MultiLabelMarginLoss", ()),
     ("HingeEmbeddingLoss", ()), ("TripletMarginLoss", ()), ("PoissonNLLLoss", ()),
     ("MultiMarginLoss", ()), ("MultiLabelSoftMarginLoss", (None,)), ("NLLLoss2d", (None,))],
)  # fmt: skip
def test_legacy_reduction_arguments_of_the_new_modules(name: str, arguments: tuple) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch_module = getattr(torch.nn, name)(*arguments, size_average=False)
    with pytest.warns(UserWarning) as record:
        lucid_module = getattr(lucid.nn, name)(*arguments, size_average=False)
    assert lucid_module.reduction == torch_module.reduction == "sum"
    legacy = [str(w.message) for w in record if w.category is UserWarning]
    assert legacy == [str(w.message) for w in caught if w.category is UserWarning]
    assert len(legacy) == 1


def test_nll_loss_2d_is_a_deprecated_nll_loss() -> None:
    with pytest.warns(
        FutureWarning, match="^`NLLLoss2d` has been deprecated. Please use `NLLLoss`"
    ):
        module = lucid.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(module, lucid.nn.NLLLoss) and module.ignore_index == 1


def test_linear_cross_entropy_bias_of_the_wrong_shape_raises_torchs_error() -> None:
    message = r"^expected linear_bias shape \(3, 2\), got \(3,\)$"
    for library in (torch, lucid):
        input, linear_weight = library.ones(4, 5), library.ones(3, 2, 5)
        target = library.zeros(4, 2, dtype=library.int64)
        with pytest.raises(RuntimeError, match=message):
            library.nn.functional.linear_cross_entropy(
                input, linear_weight, target, linear_bias=library.ones(3)
            )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"weight": np.ones(4)}, r"^expected weight shape to be \(3,\), got \(4,\)$"),
     ({"label_smoothing": 1.5}, r"^expected label_smoothing to be in range \[0, 1\], got 1.5$")],
)  # fmt: skip
def test_linear_cross_entropy_module_checks_its_options_as_torch(kwargs: dict, match: str) -> None:
    for library in (torch, lucid):
        with pytest.raises(RuntimeError, match=match):
            _construct(library, "LinearCrossEntropyLoss", {"in_features": 5, "num_classes": 3,
                                                           **kwargs})  # fmt: skip


# ------------------------------------------------------------- LinearCrossEntropyOptions
def test_linear_cross_entropy_options_have_torchs_fields_and_defaults() -> None:
    import dataclasses

    ours = [(f.name, f.default) for f in dataclasses.fields(lucid.nn.LinearCrossEntropyOptions)]
    theirs = [(f.name, f.default) for f in dataclasses.fields(torch.nn.LinearCrossEntropyOptions)]
    assert ours == theirs
    options = lucid.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
    assert repr(options) == repr(
        torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.acc_policy = "compact"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"acc_policy": "fast"}, r"^invalid acc_policy: 'fast'$"),
     ({"chunking_method": "aspect_ratio:0"}, r"^invalid chunking_method: 'aspect_ratio:0'$"),
     ({"chunking_method": "rows"}, r"^invalid chunking_method: 'rows'$"),
     ({"batch_chunk_size": 0}, r"^batch_chunk_size must be positive int or None, got 0$"),
     ({"batch_chunk_size": 2.0}, r"^batch_chunk_size must be positive int or None, got 2\.0$")],
)  # fmt: skip
def test_linear_cross_entropy_options_check_their_fields_as_torch(kwargs: dict, match: str) -> None:
    for library in (torch, lucid):
        with pytest.raises(ValueError, match=match):
            library.nn.LinearCrossEntropyOptions(**kwargs)


def test_linear_cross_entropy_options_take_lucids_float_dtypes_only() -> None:
    for dtype in (lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64):
        assert lucid.nn.LinearCrossEntropyOptions(acc_dtype=dtype).acc_dtype is dtype
    with pytest.raises(
        ValueError, match=r"^acc_dtype must be one of \{None, lucid\.float16, lucid\.bfloat16, "
    ):
        lucid.nn.LinearCrossEntropyOptions(acc_dtype=lucid.int64)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "options", [{}, {"batch_chunk_size": 2, "chunking_method": None}, {"acc_policy": "accurate"}]
)
def test_linear_cross_entropy_with_options_is_torchs_chunked_loss(reduction, options) -> None:
    rng = np.random.default_rng(5)
    input, linear_weight = rng.standard_normal((6, 4)), rng.standard_normal((7, 4))
    target = rng.integers(0, 7, 6)
    results = {}
    for library in (torch, lucid):
        leaves = [library.tensor(input, requires_grad=True),
                  library.tensor(linear_weight, requires_grad=True)]  # fmt: skip
        loss = library.nn.functional.linear_cross_entropy(
            *leaves, library.tensor(target), reduction=reduction,
            options=library.nn.LinearCrossEntropyOptions(**options),
        )  # fmt: skip
        loss.sum().backward()
        results[library] = [loss.detach().numpy()] + [leaf.grad.numpy() for leaf in leaves]
    for ours, theirs in zip(results[lucid], results[torch], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_linear_cross_entropy_loss_keeps_and_prints_its_options() -> None:
    modules = [
        library.nn.LinearCrossEntropyLoss(
            5, 3, options=library.nn.LinearCrossEntropyOptions(allow_retain_graph=True)
        )
        for library in (torch, lucid)
    ]
    assert repr(modules[1]) == repr(modules[0])
    assert modules[1].options.allow_retain_graph is True


# ------------------------------------------------------ weights that take no gradient
def _weighted_losses(lib):
    functional = lib.nn.functional
    probabilities = lib.tensor(np.full((4, 3), 0.5), requires_grad=True)
    classes = lib.tensor([0, 1, 2, 0])
    ones = lib.ones(4, 3, dtype=lib.float64)
    image = lib.tensor(np.zeros((2, 3, 4, 4)), requires_grad=True)
    return {
        "nll_loss": lambda w: functional.nll_loss(probabilities, classes, weight=w),
        "nll_loss 4-d": lambda w: functional.nll_loss(
            image, lib.zeros(2, 4, 4, dtype=lib.int64), weight=w
        ),
        "cross_entropy": lambda w: functional.cross_entropy(probabilities, classes, weight=w),
        "cross_entropy smoothed": lambda w: functional.cross_entropy(
            probabilities, classes, weight=w, label_smoothing=0.1
        ),
        "cross_entropy probabilities": lambda w: functional.cross_entropy(
            probabilities, ones / 3, weight=w
        ),
        "binary_cross_entropy": lambda w: functional.binary_cross_entropy(
            probabilities, ones, weight=w
        ),
        "with_logits weight": lambda w: functional.binary_cross_entropy_with_logits(
            probabilities, ones, weight=w
        ),
        "with_logits pos_weight": lambda w: functional.binary_cross_entropy_with_logits(
            probabilities, ones, pos_weight=w
        ),
        "multi_margin_loss": lambda w: functional.multi_margin_loss(
            probabilities, classes, weight=w
        ),
        "multilabel_soft_margin_loss": lambda w: functional.multilabel_soft_margin_loss(
            probabilities, ones, weight=w
        ),
    }


@pytest.mark.parametrize("case", list(_weighted_losses(lucid)))
def test_a_weight_that_requires_grad_gets_torchs_not_differentiable_error(case):
    outcomes = []
    for lib in (torch, lucid):
        weight = lib.ones(3, dtype=lib.float64, requires_grad=True)
        try:
            _weighted_losses(lib)[case](weight)
            outcomes.append("ok")
        except RuntimeError as error:
            outcomes.append(str(error))
    assert outcomes[1] == outcomes[0]
    with lucid.no_grad():
        _weighted_losses(lucid)[case](lucid.ones(3, dtype=lucid.float64, requires_grad=True))
