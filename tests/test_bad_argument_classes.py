"""Classes of bad argument (issue 28, section 1) against PyTorch: each call runs in lucid and in
torch and must raise the same exception type with the same message, "torch" read as "lucid"."""

from __future__ import annotations

import pytest

import lucid
import lucid.nn.functional as lucid_functional
from tests.torch_oracle import functional as torch_functional
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

# PyTorch's allocator prefixes its out-of-memory message with the C++ check that failed
_ALLOCATOR_PREFIX = "[enforce fail at alloc_cpu.cpp:127] err == 0. "


def _raised(call, library, functional) -> tuple[str, str]:
    try:
        call(library, functional)
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        message = str(error).replace("torch", "lucid").replace(_ALLOCATOR_PREFIX, "")
        return type(error).__name__, message
    pytest.fail(f"{library.__name__} answered")


def _assert_same_error(call) -> None:
    expected = _raised(call, torch, torch_functional)
    assert _raised(call, lucid, lucid_functional) == expected


def _cases(**calls):
    return pytest.mark.parametrize("call", list(calls.values()), ids=list(calls))


# ------------------------------------------------------------------ sizes and allocation
@_cases(
    tensor_negative=lambda L, F: L.Tensor(-1),
    tensor_negative_second=lambda L, F: L.Tensor(2, -1),
    tensor_past_int64=lambda L, F: L.Tensor(2**40, 2**40),
    expand_leading_minus_one=lambda L, F: L.ones(1).expand(-1, 3),
    expand_leading_negative=lambda L, F: L.ones(1, 2).expand(-2, 2),
    expand_singleton_negative=lambda L, F: L.ones(2, 1).expand(2, -2),
    broadcast_to_negative=lambda L, F: L.broadcast_to(L.ones(2), (-3, 2)),
    repeat_negative=lambda L, F: L.ones(2).repeat(-1, 2),
    repeat_past_memory=lambda L, F: L.ones(2).repeat(10**6, 10**6),
    repeat_past_int64=lambda L, F: L.ones(2).repeat(10**10, 10**10),
)
def test_negative_and_huge_sizes_raise_pytorch_errors(call):
    _assert_same_error(call)


# ------------------------------------------------------------- numbers given as non-numbers
_NON_NUMBERS = {"str": "a", "none": None, "list": [0.1], "tensor_of_one": [0.2]}


def _non_number(kind, library):
    value = _NON_NUMBERS[kind]
    return library.tensor(value) if kind == "tensor_of_one" else value


@pytest.mark.parametrize("kind", list(_NON_NUMBERS))
@_cases(
    leaky_relu=lambda L, F, v: F.leaky_relu(L.ones(2), v),
    leaky_relu_=lambda L, F, v: F.leaky_relu_(L.ones(2), v),
    elu=lambda L, F, v: F.elu(L.ones(2), v),
    celu=lambda L, F, v: F.celu(L.ones(2), v),
    softplus_beta=lambda L, F, v: F.softplus(L.ones(2), v),
    softplus_threshold=lambda L, F, v: F.softplus(L.ones(2), 1.0, v),
    hardshrink=lambda L, F, v: F.hardshrink(L.ones(2), v),
    softshrink=lambda L, F, v: F.softshrink(L.ones(2), v),
    add_alpha=lambda L, F, v: L.add(L.ones(2), L.ones(2), alpha=v),
    sub_alpha=lambda L, F, v: L.sub(L.ones(2), L.ones(2), alpha=v),
    add__alpha=lambda L, F, v: L.ones(2).add_(L.ones(2), alpha=v),
    layer_norm_eps=lambda L, F, v: F.layer_norm(L.ones(2, 3), (3,), eps=v),
    group_norm_eps=lambda L, F, v: F.group_norm(L.ones(2, 4), 2, eps=v),
    batch_norm_momentum=lambda L, F, v: F.batch_norm(
        L.ones(2, 3), L.zeros(3), L.ones(3), training=True, momentum=v
    ),
)
def test_a_number_argument_refuses_what_is_no_number(call, kind):
    _assert_same_error(lambda L, F: call(L, F, _non_number(kind, L)))


@pytest.mark.parametrize("value", ["a", None, [1.0], 2.5], ids=["str", "none", "list", "float"])
@_cases(
    tril=lambda L, F, v: L.tril(L.ones(3, 3), v),
    triu=lambda L, F, v: L.triu(L.ones(3, 3), v),
    triu_method=lambda L, F, v: L.ones(3, 3).triu_(v),
    roll=lambda L, F, v: L.roll(L.ones(3), v),
    roll_item=lambda L, F, v: L.roll(L.ones(3), [v], [0]),
    glu_dim=lambda L, F, v: F.glu(L.ones(2), v),
    cosine_similarity_dim=lambda L, F, v: F.cosine_similarity(L.ones(2, 3), L.ones(2, 3), v),
    nll_loss_ignore_index=lambda L, F, v: F.nll_loss(
        L.ones(2, 3), L.zeros(2, dtype=L.int64), ignore_index=v
    ),
    cross_entropy_ignore_index=lambda L, F, v: F.cross_entropy(
        L.ones(2, 3), L.zeros(2, dtype=L.int64), ignore_index=v
    ),
)
def test_an_int_argument_refuses_what_is_no_int(call, value):
    _assert_same_error(lambda L, F: call(L, F, value))


@_cases(
    addmv_beta=lambda L, F: L.addmv(L.ones(2), L.ones(2, 2), L.ones(2), beta="a"),
    addr_alpha=lambda L, F: L.addr(L.ones(2, 2), L.ones(2), L.ones(2), alpha=None),
    pairwise_distance_p=lambda L, F: F.pairwise_distance(L.ones(2, 2), L.ones(2, 2), "a"),
    pairwise_distance_eps=lambda L, F: F.pairwise_distance(L.ones(2, 2), L.ones(2, 2), 2.0, None),
    cosine_similarity_eps=lambda L, F: F.cosine_similarity(L.ones(2, 2), L.ones(2, 2), 1, "a"),
    arange_end=lambda L, F: L.arange("a"),
    arange_end_list=lambda L, F: L.arange([1]),
    arange_end_of_two=lambda L, F: L.arange(0, "a"),
    arange_step=lambda L, F: L.arange(0, 5, "a"),
    linspace_end=lambda L, F: L.linspace(0, "a", 3),
    logspace_start=lambda L, F: L.logspace("a", 1, 3),
)
def test_scales_bounds_and_range_ends_refuse_what_is_no_number(call):
    _assert_same_error(call)


def _loss(L, name, *shapes, **keywords):
    functional = lucid_functional if L is lucid else torch_functional
    return getattr(functional, name)(*(L.ones(*shape) for shape in shapes), **keywords)


@_cases(
    smooth_l1_beta=lambda L, F: _loss(L, "smooth_l1_loss", (2,), (2,), beta="a"),
    huber_delta=lambda L, F: _loss(L, "huber_loss", (2,), (2,), delta=None),
    margin_ranking=lambda L, F: _loss(L, "margin_ranking_loss", (2,), (2,), (2,), margin="a"),
    hinge_embedding=lambda L, F: _loss(L, "hinge_embedding_loss", (2,), (2,), margin="a"),
    cosine_embedding=lambda L, F: _loss(
        L, "cosine_embedding_loss", (2, 2), (2, 2), (2,), margin="a"
    ),
    poisson_nll_eps=lambda L, F: _loss(L, "poisson_nll_loss", (2,), (2,), eps="a"),
    triplet_p=lambda L, F: _loss(L, "triplet_margin_loss", (2, 2), (2, 2), (2, 2), p="a"),
    triplet_eps=lambda L, F: _loss(L, "triplet_margin_loss", (2, 2), (2, 2), (2, 2), eps="a"),
    label_smoothing=lambda L, F: F.cross_entropy(
        L.ones(2, 3), L.zeros(2, dtype=L.int64), label_smoothing="a"
    ),
    multi_margin=lambda L, F: F.multi_margin_loss(
        L.ones(2, 3), L.zeros(2, dtype=L.int64), margin="a"
    ),
    dist_p=lambda L, F: L.dist(L.ones(2), L.ones(2), "a"),
    cdist_p=lambda L, F: L.cdist(L.ones(1, 2, 2), L.ones(1, 2, 2), "a"),
    pdist_p=lambda L, F: F.pdist(L.ones(3, 2), "a"),
    renorm_p=lambda L, F: L.renorm(L.ones(2, 2), "a", 0, 1.0),
    renorm_dim=lambda L, F: L.renorm(L.ones(2, 2), 2, 0.5, 1.0),
    renorm_maxnorm=lambda L, F: L.renorm(L.ones(2, 2), 2, 0, None),
    gelu_approximate=lambda L, F: F.gelu(L.ones(2), approximate=None),
)
def test_loss_and_distance_hyperparameters_refuse_what_is_no_number(call):
    _assert_same_error(call)


_NAN, _INF = float("nan"), float("inf")


@_cases(
    rrelu_lower_nan=lambda L, F: F.rrelu(L.ones(2), _NAN, 0.3, training=True),
    rrelu_upper_nan=lambda L, F: F.rrelu(L.ones(2), 0.1, _NAN, training=True),
    rrelu_upper_inf=lambda L, F: F.rrelu(L.ones(2), 0.1, _INF),
    rrelu_lower_minus_inf=lambda L, F: F.rrelu(L.ones(2), -_INF, 0.3),
    huber_delta_nan=lambda L, F: F.huber_loss(L.ones(2), L.ones(2), delta=_NAN),
    smooth_l1_beta_nan=lambda L, F: F.smooth_l1_loss(L.ones(2), L.ones(2), beta=_NAN),
    cosine_similarity_eps_negative=lambda L, F: F.cosine_similarity(
        L.ones(2, 3), L.ones(2, 3), 1, -1.0
    ),
    cosine_similarity_eps_nan=lambda L, F: F.cosine_similarity(L.ones(2, 3), L.ones(2, 3), 1, _NAN),
)
def test_non_finite_and_negative_hyperparameters_raise_pytorch_errors(call):
    _assert_same_error(call)


# ----------------------------------------------------------------- arguments of ops
@_cases(
    view_nan=lambda L, F: L.ones(2).view(float("nan")),
    view_float=lambda L, F: L.ones(2).view(2.5),
    view_none=lambda L, F: L.ones(2).view(None),
    view_str=lambda L, F: L.ones(2).view("a"),
    permute_no_dims=lambda L, F: L.ones(2, 3).permute(),
    permute_no_dims_zero_dim=lambda L, F: L.ones(()).permute(),
    layer_norm_int_shape=lambda L, F: F.layer_norm(L.ones(2, 3), 3),
    layer_norm_float_item=lambda L, F: F.layer_norm(L.ones(2, 3), (3.0,)),
    rms_norm_int_shape=lambda L, F: F.rms_norm(L.ones(2, 3), 3),
    set_grad_enabled_str=lambda L, F: L.set_grad_enabled("yes"),
    set_grad_enabled_none=lambda L, F: L.set_grad_enabled(None),
    set_grad_enabled_int=lambda L, F: L.set_grad_enabled(1),
)
def test_op_arguments_of_the_wrong_kind_raise_pytorch_errors(call):
    _assert_same_error(call)


def _logits(L, F, target=None, **keywords):
    target = L.ones(2, 3) if target is None else target
    return F.binary_cross_entropy_with_logits(L.ones(2, 3), target, **keywords)


@_cases(
    integer_target=lambda L, F: _logits(L, F, L.ones(2, 3, dtype=L.int64)),
    bool_target=lambda L, F: _logits(L, F, L.ones(2, 3, dtype=L.bool)),
    int32_target_double_input=lambda L, F: F.binary_cross_entropy_with_logits(
        L.ones(2, 3, dtype=L.float64), L.ones(2, 3, dtype=L.int32)
    ),
    pos_weight_mismatched=lambda L, F: _logits(L, F, pos_weight=L.ones(4)),
    pos_weight_growing=lambda L, F: _logits(L, F, pos_weight=L.ones(2, 1, 3)),
    weight_mismatched=lambda L, F: _logits(L, F, weight=L.ones(4)),
    weight_growing=lambda L, F: _logits(L, F, weight=L.ones(2, 1, 3)),
)
def test_binary_cross_entropy_with_logits_checks_target_and_weights(call):
    _assert_same_error(call)


def _attention(L, F, query, key, value, **keywords):
    return F.scaled_dot_product_attention(L.ones(*query), L.ones(*key), L.ones(*value), **keywords)


@_cases(
    value_length=lambda L, F: _attention(L, F, (2, 4, 8), (2, 5, 8), (2, 6, 8)),
    key_features=lambda L, F: _attention(L, F, (2, 4, 8), (2, 5, 7), (2, 5, 8)),
    key_features_2d=lambda L, F: _attention(L, F, (4, 8), (5, 7), (5, 8)),
    value_length_2d=lambda L, F: _attention(L, F, (4, 8), (5, 8), (6, 8)),
    key_features_4d=lambda L, F: _attention(L, F, (2, 3, 4, 8), (2, 3, 5, 7), (2, 3, 5, 8)),
    key_batch=lambda L, F: _attention(L, F, (2, 4, 8), (3, 5, 8), (3, 5, 8)),
    value_batch=lambda L, F: _attention(L, F, (2, 4, 8), (2, 5, 8), (3, 5, 8)),
    int64_mask=lambda L, F: _attention(
        L, F, (2, 4, 8), (2, 5, 8), (2, 5, 8), attn_mask=L.ones(4, 5, dtype=L.int64)
    ),
    int32_mask=lambda L, F: _attention(
        L, F, (2, 4, 8), (2, 5, 8), (2, 5, 8), attn_mask=L.ones(4, 5, dtype=L.int32)
    ),
)
def test_scaled_dot_product_attention_checks_shapes_and_mask_dtype(call):
    _assert_same_error(call)


# ------------------------------------------------------- non-tensors where tensors belong
@pytest.mark.parametrize("value", [None, 1.5, [1.0, 2.0]], ids=["none", "scalar", "list"])
@_cases(
    cosine_similarity=lambda L, F, v: F.cosine_similarity(v, L.ones(2, 3)),
    cosine_similarity_x2=lambda L, F, v: L.cosine_similarity(L.ones(2, 3), v),
    pairwise_distance=lambda L, F, v: F.pairwise_distance(v, L.ones(2, 3)),
    pairwise_distance_x2=lambda L, F, v: L.pairwise_distance(L.ones(2, 3), v),
    softshrink=lambda L, F, v: F.softshrink(v),
    prelu_method=lambda L, F, v: L.ones(2, 3).prelu(v),
    prelu_weight=lambda L, F, v: F.prelu(L.ones(2, 3), v),
    prelu_input=lambda L, F, v: F.prelu(v, L.ones(1)),
)
def test_a_tensor_argument_names_itself_when_given_no_tensor(call, value):
    _assert_same_error(lambda L, F: call(L, F, value))


# --------------------------------------------------- already matched: kept from regressing
@_cases(
    uint8_negative=lambda L, F: L.tensor(-300, dtype=L.uint8),
    int8_overflow=lambda L, F: L.tensor(300, dtype=L.int8),
    past_int64=lambda L, F: L.tensor(2**70),
    ragged=lambda L, F: L.tensor([1, [2, 3]]),
    object_item=lambda L, F: L.tensor([object()]),
    tensors_of_several=lambda L, F: L.tensor([L.ones(2), L.ones(2)]),
    string_dtype=lambda L, F: L.tensor([1.0], dtype="float32"),
    full_like_string=lambda L, F: L.full_like(L.ones(2), "a"),
    randn_string_generator=lambda L, F: L.randn(3, generator="x"),
    generator_unknown_device=lambda L, F: L.Generator("foo"),
    batch_norm_one_value_per_channel=lambda L, F: L.nn.BatchNorm1d(3)(L.ones(1, 3)),
)
def test_values_dtypes_and_generators_raise_pytorch_errors(call):
    _assert_same_error(call)


# ------------------------------------------------- int lists: the parser's two passes
@_cases(
    zeros_float=lambda L, F: L.zeros(2.5),
    zeros_none=lambda L, F: L.zeros(None),
    zeros_first_item=lambda L, F: L.zeros((2.5, 3)),
    zeros_later_item=lambda L, F: L.zeros((3, 2.5)),
    zeros_later_vararg=lambda L, F: L.zeros(3, None),
    zeros_first_vararg=lambda L, F: L.zeros(2.5, 3) if L is lucid else L.zeros(2.5, 3),
    zeros_no_size=lambda L, F: L.zeros(),
    empty_float_tensor=lambda L, F: L.empty(3, L.tensor(2.0)),
    ones_nested=lambda L, F: L.ones((2, [3])),
    rand_string=lambda L, F: L.rand("a"),
    full_int_size=lambda L, F: L.full(3, 1.0),
    full_later_item=lambda L, F: L.full((3, 2.5), 1.0),
    layer_from_float=lambda L, F: L.nn.Linear(3, 2.5),
    batch_norm_from_none=lambda L, F: L.nn.BatchNorm1d(None),
    roll_later_item=lambda L, F: L.roll(L.ones(2, 2), (1, 2.5), (0, 1)),
    split_later_item=lambda L, F: L.split(L.ones(4), [2, 2.5]),
    layer_norm_later_item=lambda L, F: F.layer_norm(L.ones(2, 4, 3), (4, 2.5)),
    unfold_later_item=lambda L, F: F.unfold(L.ones(1, 1, 4, 4), (2, 2.5)),
    pad_later_item=lambda L, F: F.pad(L.ones(1, 1, 4, 4), (1, 1, 2.5, 1)),
    interpolate_float_sizes=lambda L, F: F.interpolate(L.ones(1, 1, 4, 4), size=(2.5, 2.5)),
)
def test_an_int_list_names_its_bad_item_as_pytorchs_parser_does(call):
    _assert_same_error(call)


def test_an_int_list_takes_what_pytorchs_parser_takes():
    """Past the first item PyTorch's parser reads a bool and a one-element integer tensor."""
    for library in (torch, lucid):
        assert tuple(library.zeros(2, True).shape) == (2, 1)
        assert tuple(library.zeros((2, library.tensor([3]))).shape) == (2, 3)
        assert tuple(library.zeros(library.tensor(3)).shape) == (3,)


# ------------------------------------------------------ losses, norms and their kernels
def _ctc(L, F, lengths=(5, 5), **keywords):
    log_probs = L.full((5, 2, 4), -1.3862943611198906)
    targets = L.tensor([[1, 2, 3], [1, 1, 2]])
    return F.ctc_loss(log_probs, targets, list(lengths), [3, 3], **keywords)


@_cases(
    bce_target_dtype=lambda L, F: F.binary_cross_entropy(
        L.full((3,), 0.5, dtype=L.float64), L.full((3,), 0.5)
    ),
    bce_half_input=lambda L, F: F.binary_cross_entropy(
        L.full((3,), 0.5, dtype=L.float16), L.full((3,), 0.5)
    ),
    cross_entropy_1d_target=lambda L, F: F.cross_entropy(L.ones(5), L.tensor([1, 2, 3, 0])),
    nll_1d_target=lambda L, F: F.nll_loss(L.ones(5), L.tensor([1, 2, 3, 0])),
    nll_integer_input=lambda L, F: F.nll_loss(L.ones(4, 5, dtype=L.int64), L.tensor([1, 2, 3, 0])),
    nll_2d_integer_input=lambda L, F: F.nll_loss(
        L.ones(4, 5, 2, dtype=L.int64), L.zeros(4, 2, dtype=L.int64)
    ),
    cross_entropy_integer_input=lambda L, F: F.cross_entropy(
        L.ones(4, 5, dtype=L.int64), L.tensor([1, 2, 3, 0])
    ),
    cross_entropy_3d_integer_input=lambda L, F: F.cross_entropy(
        L.ones(4, 5, 2, dtype=L.int64), L.zeros(4, 2, dtype=L.int64)
    ),
    ctc_float_blank=lambda L, F: _ctc(L, F, blank=2.5),
    ctc_string_zero_infinity=lambda L, F: _ctc(L, F, zero_infinity="a"),
    ctc_float_lengths=lambda L, F: _ctc(L, F, lengths=(5.0, 5)),
    linear_cross_entropy_options=lambda L, F: F.linear_cross_entropy(
        L.ones(2, 3), L.ones(4, 3), L.tensor([0, 1]), options=-100
    ),
    batch_norm_training_eps=lambda L, F: F.batch_norm(
        L.ones(4, 3), None, None, training=True, eps=0.0
    ),  # fmt: skip
    batch_norm_eval_eps=lambda L, F: F.batch_norm(L.ones(4, 3), L.zeros(3), L.ones(3), eps=-1.0),
    instance_norm_empty_batch_affine=lambda L, F: L.nn.InstanceNorm1d(3, affine=True)(
        L.ones(0, 3, 5)
    ),
    norm_except_dim_range=lambda L, F: L.nn.utils.weight_norm(L.nn.Linear(3, 2), dim=5),
    norm_except_dim_float=lambda L, F: L.nn.utils.weight_norm(L.nn.Linear(3, 2), dim=2.5),
    flatten_zero_d=lambda L, F: L.nn.Flatten()(L.tensor(1.0)),
    threshold_bool=lambda L, F: F.threshold(L.ones(3, dtype=L.bool), 0, 1),
    threshold_int_overflow=lambda L, F: F.threshold(L.ones(3, dtype=L.int8), 1000, 1),
    threshold_half_value_overflow=lambda L, F: F.threshold(L.ones(3).half(), 0, 1e10),
    narrow_float_start=lambda L, F: L.narrow(L.ones(2, 3), 0, 1.5, 1),
    narrow_float_length=lambda L, F: L.narrow(L.ones(2, 3), 0, 1, 1.5),
    narrow_float_dim=lambda L, F: L.narrow(L.ones(2, 3), 0.5, 1, 1),
    select_tensor_index=lambda L, F: L.select(L.ones(2, 3), 5, L.ones(2)),
    select_float_dim=lambda L, F: L.select(L.ones(2, 3), 1.5, 1),
    channel_shuffle_tensor_groups=lambda L, F: L.channel_shuffle(L.ones(2, 4, 3), L.ones(2)),
    arange_explicit_none=lambda L, F: L.arange(None, 5),
    arange_none_end=lambda L, F: L.arange(0, None),
)
def test_loss_norm_and_shape_arguments_raise_pytorch_errors(call):
    _assert_same_error(call)


def test_an_unknown_compile_backend_is_invalid_backend():
    with pytest.raises(lucid._dynamo.exc.InvalidBackend) as raised:
        lucid.compile(lambda x: x, backend="nonexistent")
    assert isinstance(raised.value, RuntimeError)
    with pytest.raises(torch._dynamo.exc.InvalidBackend) as expected:
        torch.compile(lambda x: x, backend="nonexistent")
    assert str(raised.value) == str(expected.value).replace("torch", "lucid")


@pytest.mark.parametrize(
    ("input_dtype", "target_dtype"),
    [("float64", "float32"), ("float32", "float64"), ("float32", "float16")],
)
def test_binary_cross_entropy_with_logits_answers_in_the_targets_dtype(input_dtype, target_dtype):
    results = []
    for library in (torch, lucid):
        logits = library.linspace(-3, 3, 12, dtype=getattr(library, input_dtype))
        logits.requires_grad_(True)
        target = library.linspace(0, 1, 12, dtype=getattr(library, target_dtype))
        loss = library.nn.functional.binary_cross_entropy_with_logits(logits, target)
        loss.backward()
        results.append((str(loss.dtype), str(logits.grad.dtype), loss.item()))
    (torch_loss_dtype, torch_grad_dtype, torch_value), (loss_dtype, grad_dtype, value) = results
    assert (loss_dtype, grad_dtype) == (
        torch_loss_dtype.replace("torch", "lucid"),
        torch_grad_dtype.replace("torch", "lucid"),
    )
    # both round the same loss to the target's dtype: float16's half an ulp apart at most
    assert value == pytest.approx(torch_value, rel=2e-3 if target_dtype == "float16" else 1e-6)


def _outcome(call, *args):
    try:
        result = call(*args)
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return type(error).__name__, str(error)
    return str(result.dtype).replace("torch", "lucid"), result.tolist()


@pytest.mark.parametrize("dtype", ["int64", "uint8", "float32"])
@pytest.mark.parametrize(
    ("bound", "value"), [(-0.5, 9), (0.5, -2.7), (1.5, 2.7), (0, 1e10), (300, 1)]
)
def test_threshold_keeps_the_dtype_and_converts_scalars_as_pytorch(dtype, bound, value):
    outcomes = []
    for library in (torch, lucid):
        x = library.arange(-3, 3).to(getattr(library, dtype))
        outcomes.append(_outcome(library.nn.functional.threshold, x, bound, value))
    assert outcomes[0] == outcomes[1]


def test_pixel_unshuffle_returns_an_empty_input_in_its_shape_as_pytorch():
    for library in (torch, lucid):
        x = library.zeros(0, 2, 4, 6, requires_grad=True)
        assert tuple(library.nn.functional.pixel_unshuffle(x, 2).shape) == (0, 2, 4, 6)
    # torch's backward of this forward refuses its own output's shape; lucid's passes through
    x = lucid.zeros(0, 2, 4, 6, requires_grad=True)
    lucid.nn.functional.pixel_unshuffle(x, 2).sum().backward()
    assert x.grad.shape == x.shape
