"""The transforms beyond exp, affine and abs, the constraints they map onto, and the biject_to
and transform_to registries, against torch.distributions: values at 1e-12 in float64,
gradcheck and gradgradcheck, shapes, metadata, equality, caching and errors word for word."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.distributions as D
from lucid.autograd import gradcheck, gradgradcheck
from lucid.distributions import constraint_registry, constraints
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

RTOL = 1e-12
ATOL = 1e-14


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


@dataclass
class TransformCase:
    name: str
    build: Callable[[Any], Any]  # the module (lucid or torch) to a transform
    x: np.ndarray  # in the domain
    has_log_abs_det_jacobian: bool = True


def _normal_cdf(module):
    dist = module.distributions
    return dist.CumulativeDistributionTransform(
        dist.Normal(module.tensor([0.5, -1.0, 0.0, 2.0]), module.tensor([1.0, 2.0, 0.5, 3.0]))
    )


def _cat_batch_dim(module):
    # dim 0 is a batch dim: the parts' log-dets join along it
    dist = module.distributions
    return dist.CatTransform(
        [dist.IndependentTransform(dist.ExpTransform(), 1), dist.SigmoidTransform()],
        dim=0,
        lengths=[2, 1],
    )


def _cat_event_dim(module):
    # dim -1 is inside the event: each part's log-det is summed over it, and the parts add
    dist = module.distributions
    return dist.CatTransform(
        [dist.IndependentTransform(dist.ExpTransform(), 1), dist.SigmoidTransform()],
        dim=-1,
        lengths=[2, 2],
    )


MATRICES = _rng().normal(size=(2, 3, 3))

CASES = [
    TransformCase("sigmoid", lambda m: m.distributions.SigmoidTransform(), np.linspace(-6, 6, 7)),
    TransformCase(
        "softplus",
        lambda m: m.distributions.SoftplusTransform(),
        np.array([-8.0, -1.5, 0.0, 0.3, 4.0, 25.0]),  # 25 takes softplus' linear branch
    ),
    TransformCase("tanh", lambda m: m.distributions.TanhTransform(), np.linspace(-3, 3, 7)),
    TransformCase(
        "softmax",
        lambda m: m.distributions.SoftmaxTransform(),
        _rng().normal(size=(2, 4)),
        has_log_abs_det_jacobian=False,
    ),
    TransformCase(
        "stick-breaking",
        lambda m: m.distributions.StickBreakingTransform(),
        _rng().normal(size=(2, 3)),
    ),
    TransformCase(
        "lower-cholesky",
        lambda m: m.distributions.LowerCholeskyTransform(),
        MATRICES,
        has_log_abs_det_jacobian=False,
    ),
    TransformCase(
        "positive-definite",
        lambda m: m.distributions.PositiveDefiniteTransform(),
        MATRICES,
        has_log_abs_det_jacobian=False,
    ),
    TransformCase(
        "corr-cholesky",
        lambda m: m.distributions.CorrCholeskyTransform(),
        _rng().normal(size=(2, 6)),
    ),
    TransformCase("cdf", _normal_cdf, np.array([-0.3, 1.2, 0.1, 4.0])),
    TransformCase(
        "independent",
        lambda m: m.distributions.IndependentTransform(m.distributions.SigmoidTransform(), 1),
        _rng().normal(size=(2, 3)),
    ),
    TransformCase(
        "reshape",
        lambda m: m.distributions.ReshapeTransform((2, 3), (6,)),
        _rng().normal(size=(4, 2, 3)),
    ),
    TransformCase("cat-batch-dim", _cat_batch_dim, _rng().normal(size=(3, 4))),
    TransformCase("cat-event-dim", _cat_event_dim, _rng().normal(size=(3, 4))),
    TransformCase(
        "stack",
        lambda m: m.distributions.StackTransform(
            [
                m.distributions.ExpTransform(),
                m.distributions.SigmoidTransform(),
                m.distributions.TanhTransform(),
            ],
            dim=1,
        ),
        _rng().normal(size=(4, 3)),
    ),
    TransformCase(
        "inverse-stick-breaking",
        lambda m: m.distributions.StickBreakingTransform().inv,
        np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.15, 0.05]]),
    ),
]
CASE_IDS = [case.name for case in CASES]


def _assert_close(ours, theirs) -> None:
    expected = theirs.detach().numpy()
    actual = ours.detach().numpy()
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def _outcome(function):
    """The value of function(), or the type and message of what it raised."""
    try:
        return "value", function()
    except (NotImplementedError, ValueError, AssertionError) as error:
        return type(error), str(error).replace("torch.", "lucid.")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_forward_inverse_and_log_det_match_torch(case: TransformCase) -> None:
    ours, theirs = case.build(lucid), case.build(torch)
    x_ours, x_theirs = lucid.tensor(case.x), torch.tensor(case.x)
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    _assert_close(y_ours, y_theirs)
    # the inverse of torch's own y, so a forward difference does not hide in it
    _assert_close(ours.inv(lucid.tensor(y_theirs.numpy())), theirs.inv(y_theirs))
    if case.has_log_abs_det_jacobian:
        _assert_close(
            ours.log_abs_det_jacobian(x_ours, y_ours),
            theirs.log_abs_det_jacobian(x_theirs, y_theirs),
        )
    else:
        with pytest.raises(NotImplementedError):
            theirs.log_abs_det_jacobian(x_theirs, y_theirs)
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(x_ours, y_ours)
    _assert_same_check(ours.domain, theirs.domain, x_ours, x_theirs)
    _assert_same_check(ours.codomain, theirs.codomain, y_ours, y_theirs)


def _assert_same_check(ours, theirs, value_ours, value_theirs) -> None:
    """Both constraints hold at the value, or both fail to check it in the same way (torch's
    cat constraint cannot join parts of different event dims)."""
    try:
        expected = theirs.check(value_theirs)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as ours_error:
            ours.check(value_ours)
        assert str(ours_error.value) == str(error)
        return
    actual = ours.check(value_ours)
    assert tuple(actual.shape) == tuple(expected.shape)
    assert bool(actual.all()) and bool(expected.all())


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_forward_and_log_det_pass_gradcheck_and_gradgradcheck(case: TransformCase) -> None:
    transform = case.build(lucid)
    x = lucid.tensor(case.x, requires_grad=True)

    def forward(x):
        return transform(x)

    assert gradcheck(forward, [x])
    assert gradgradcheck(forward, [x])
    if not case.has_log_abs_det_jacobian:
        return

    def log_det(x):
        return transform.log_abs_det_jacobian(x, transform(x))

    assert gradcheck(log_det, [x])
    assert gradgradcheck(log_det, [x])


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_shapes_match_torch(case: TransformCase) -> None:
    ours, theirs = case.build(lucid), case.build(torch)
    y = theirs(torch.tensor(case.x))
    forward_shape = ours.forward_shape(lucid.Size(case.x.shape))
    assert tuple(forward_shape) == tuple(theirs.forward_shape(torch.Size(case.x.shape)))
    assert tuple(forward_shape) == tuple(y.shape)
    inverse_shape = ours.inverse_shape(lucid.Size(y.shape))
    assert tuple(inverse_shape) == tuple(theirs.inverse_shape(y.shape)) == case.x.shape


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_metadata_matches_torch(case: TransformCase) -> None:
    ours, theirs = case.build(lucid), case.build(torch)
    assert ours.bijective == theirs.bijective
    assert repr(ours.domain) == repr(theirs.domain)
    assert repr(ours.codomain) == repr(theirs.codomain)
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert ours.inv.domain.event_dim == theirs.inv.domain.event_dim
    for read in (lambda t: t.event_dim, lambda t: int(t.sign)):
        assert _outcome(lambda: read(ours)) == _outcome(lambda: read(theirs))  # noqa: B023
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    assert repr(ours.inv) == repr(theirs.inv).replace("torch.", "lucid.")
    assert ours.inv.inv is ours


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_equality_matches_torch(case: TransformCase) -> None:
    ours, theirs = case.build(lucid), case.build(torch)
    assert ours == ours and not (ours != ours)
    assert (ours == case.build(lucid)) == (theirs == case.build(torch))
    assert (ours.inv == case.build(lucid).inv) == (theirs.inv == case.build(torch).inv)
    assert (ours == D.ExpTransform()) == (theirs == torch.distributions.ExpTransform())
    assert (ours != D.ExpTransform()) == (theirs != torch.distributions.ExpTransform())


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_with_cache_returns_the_cached_pair(case: TransformCase) -> None:
    transform = case.build(lucid)
    assert transform.with_cache(0) is transform
    cached = transform.with_cache(1)
    assert type(cached) is type(transform)
    assert cached.with_cache(1) is cached
    x = lucid.tensor(case.x)
    y = cached(x)
    assert cached(x) is y
    assert cached.inv(y) is x
    _assert_close(y, torch.tensor(transform(x).numpy()))
    # without a cache the inverse is computed afresh
    assert transform.inv(transform(x)) is not x


def test_cat_and_stack_cache_through_their_parts() -> None:
    exp = D.ExpTransform()
    cat = D.CatTransform([exp, D.SigmoidTransform()], dim=0, lengths=[2, 3], cache_size=1)
    stack = D.StackTransform([exp, D.TanhTransform()], dim=0, cache_size=1)
    for transform in (cat, stack):
        assert all(part._cache_size == 1 for part in transform.transforms)
    assert exp._cache_size == 0


def test_transforms_reject_a_cache_size_other_than_0_or_1() -> None:
    for name in ("SigmoidTransform", "TanhTransform", "StickBreakingTransform"):
        with pytest.raises(ValueError) as theirs:
            getattr(torch.distributions, name)(cache_size=2)
        with pytest.raises(ValueError) as ours:
            getattr(D, name)(cache_size=2)
        assert str(ours.value) == str(theirs.value)


def test_sigmoid_stays_inside_the_unit_interval_at_extreme_inputs() -> None:
    # a sigmoid rounding to 0 or 1 would give an infinite inverse and log-det downstream
    x = np.array([-800.0, -40.0, 40.0, 800.0])
    ours = D.SigmoidTransform()(lucid.tensor(x))
    _assert_close(ours, torch.distributions.SigmoidTransform()(torch.tensor(x)))
    assert bool((ours > 0).all()) and bool((ours < 1).all())
    inverse = D.SigmoidTransform().inv(ours)
    assert bool(lucid.isfinite(inverse).all())


def test_stick_breaking_inverse_of_a_vertex_is_finite_where_torch_is() -> None:
    y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    ours = D.StickBreakingTransform().inv(lucid.tensor(y)).numpy()
    theirs = torch.distributions.StickBreakingTransform().inv(torch.tensor(y)).numpy()
    np.testing.assert_array_equal(np.isfinite(ours), np.isfinite(theirs))
    np.testing.assert_allclose(ours[np.isfinite(ours)], theirs[np.isfinite(theirs)], rtol=RTOL)


def test_tanh_log_det_is_finite_where_tanh_rounds_to_one() -> None:
    x = np.array([-40.0, 25.0, 40.0])
    ours = D.TanhTransform().log_abs_det_jacobian(lucid.tensor(x), lucid.tensor(np.tanh(x)))
    theirs = torch.distributions.TanhTransform().log_abs_det_jacobian(
        torch.tensor(x), torch.tensor(np.tanh(x))
    )
    _assert_close(ours, theirs)
    assert bool(lucid.isfinite(ours).all())


def test_corr_cholesky_gives_unit_rows_and_its_log_det_is_the_jacobians() -> None:
    # the log-det against the determinant of the Jacobian of x -> strict lower triangle of y,
    # computed by autograd: a check that does not lean on torch's formula
    transform = D.CorrCholeskyTransform()
    x = lucid.tensor(_rng().normal(size=(6,)), requires_grad=True)
    y = transform(x)
    np.testing.assert_allclose(lucid.linalg.norm(y, dim=-1).detach().numpy(), 1.0, rtol=1e-14)
    rows, cols = np.tril_indices(4, -1)
    jacobian = np.stack(
        [
            lucid.autograd.grad(y[row, col], x, retain_graph=True)[0].numpy()
            for row, col in zip(rows, cols)
        ]
    )
    expected = np.log(abs(np.linalg.det(jacobian)))
    np.testing.assert_allclose(
        transform.log_abs_det_jacobian(x, y).detach().numpy(), expected, rtol=1e-12
    )


def test_stick_breaking_log_det_is_the_jacobians() -> None:
    # x -> the first K - 1 entries of y is square; its determinant is what the log-det gives
    transform = D.StickBreakingTransform()
    x = lucid.tensor(_rng().normal(size=(4,)), requires_grad=True)
    y = transform(x)
    jacobian = np.stack(
        [lucid.autograd.grad(y[i], x, retain_graph=True)[0].numpy() for i in range(4)]
    )
    np.testing.assert_allclose(
        transform.log_abs_det_jacobian(x, y).detach().numpy(),
        np.log(abs(np.linalg.det(jacobian))),
        rtol=1e-12,
    )


def _error(function):
    with pytest.raises(Exception) as info:
        function()
    return info.type, str(info.value).replace("torch.", "lucid.")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.distributions.ReshapeTransform((2, 3), (5,)),
        lambda m: m.distributions.ReshapeTransform((2, 3), (6,)).forward_shape(m.Size([3, 2])),
        lambda m: m.distributions.ReshapeTransform((2, 3), (6,)).forward_shape(m.Size([3])),
        lambda m: m.distributions.ReshapeTransform((2, 3), (6,)).inverse_shape(m.Size([4, 5])),
        lambda m: m.distributions.ReshapeTransform((2, 3), (6,)).inverse_shape(m.Size([])),
        lambda m: m.distributions.CorrCholeskyTransform().forward_shape(m.Size([4])),
        lambda m: m.distributions.CorrCholeskyTransform().forward_shape(m.Size([])),
        lambda m: m.distributions.CorrCholeskyTransform().inverse_shape(m.Size([3, 4])),
        lambda m: m.distributions.CorrCholeskyTransform().inverse_shape(m.Size([3])),
        lambda m: m.distributions.StickBreakingTransform().forward_shape(m.Size([])),
        lambda m: m.distributions.StickBreakingTransform().inverse_shape(m.Size([])),
        lambda m: m.distributions.SoftmaxTransform().forward_shape(m.Size([])),
        lambda m: m.distributions.SoftmaxTransform().inverse_shape(m.Size([])),
        lambda m: m.distributions.IndependentTransform(m.distributions.ExpTransform(), 2)(
            m.zeros(3)
        ),
        lambda m: m.distributions.IndependentTransform(m.distributions.ExpTransform(), 2).inv(
            m.ones(3)
        ),
        lambda m: m.distributions.CatTransform([m.distributions.ExpTransform()], lengths=[1, 2]),
        lambda m: m.distributions.CatTransform([m.distributions.ExpTransform(), 1.0]),
        lambda m: m.distributions.CatTransform([m.distributions.ExpTransform()], dim=2)(m.zeros(3)),
        lambda m: m.distributions.CatTransform([m.distributions.ExpTransform()], lengths=[2])(
            m.zeros(3)
        ),
        lambda m: m.distributions.CatTransform([m.distributions.ExpTransform()], lengths=[2]).inv(
            m.ones(3)
        ),
        lambda m: m.distributions.CatTransform(
            [m.distributions.ExpTransform()], dim=1
        ).log_abs_det_jacobian(m.zeros(3), m.ones(3, 1)),
        lambda m: m.distributions.CatTransform(
            [m.distributions.ExpTransform()]
        ).log_abs_det_jacobian(m.zeros(1), m.ones(3)),
        lambda m: m.distributions.StackTransform([m.distributions.ExpTransform(), "exp"]),
        lambda m: m.distributions.StackTransform([m.distributions.ExpTransform()], dim=3)(
            m.zeros(2)
        ),
        lambda m: m.distributions.StackTransform([m.distributions.ExpTransform()])(m.zeros(2)),
        lambda m: m.distributions.StackTransform([m.distributions.ExpTransform()]).inv(m.ones(2)),
        lambda m: m.distributions.StackTransform(
            [m.distributions.ExpTransform()]
        ).log_abs_det_jacobian(m.zeros(1), m.ones(2)),
        lambda m: m.distributions.StackTransform(
            [m.distributions.ExpTransform()], dim=-2
        ).log_abs_det_jacobian(m.zeros(1, 1), m.ones(1)),
        lambda m: m.distributions.CorrCholeskyTransform()(m.zeros(5)),
        lambda m: m.distributions.CorrCholeskyTransform()(m.zeros(4)),
        lambda m: m.distributions.CorrCholeskyTransform()(m.zeros(3, 2, 7)),
    ],
)
def test_bad_arguments_raise_torchs_error(call) -> None:
    assert _error(lambda: call(lucid)) == _error(lambda: call(torch))


def test_cumulative_distribution_transform_pushes_a_normal_to_the_uniform() -> None:
    # the copula construction: a normal through its own cdf has density 1 on (0, 1)
    def build(module):
        dist = module.distributions
        normal = dist.Normal(module.tensor([0.5, -1.0]), module.tensor([1.0, 2.0]))
        return dist.TransformedDistribution(normal, [dist.CumulativeDistributionTransform(normal)])

    ours, theirs = build(lucid), build(torch)
    value = np.array([0.2, 0.7])
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))
    np.testing.assert_allclose(ours.log_prob(lucid.tensor(value)).numpy(), 0.0, atol=1e-15)
    assert repr(ours.support) == repr(theirs.support)


def test_transformed_distribution_through_a_reshape_matches_torch() -> None:
    def build(module):
        dist = module.distributions
        normal = dist.Normal(module.zeros(4, 6, dtype=module.float64), 2.0)
        return dist.TransformedDistribution(
            normal, [dist.ReshapeTransform((6,), (2, 3)), dist.ExpTransform()]
        )

    ours, theirs = build(lucid), build(torch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    value = np.exp(_rng().normal(size=(4, 2, 3)))
    _assert_close(ours.log_prob(lucid.tensor(value)), theirs.log_prob(torch.tensor(value)))
    assert ours.sample((5,)).shape == lucid.Size([5, 4, 2, 3])


# ---- constraints -------------------------------------------------------------------------


def _constraint_cases(module):
    c = module.distributions.constraints
    return {
        "corr_cholesky": c.corr_cholesky,
        "multinomial": c.multinomial(4),
        "cat": c.cat([c.positive, c.real, c.unit_interval], dim=0, lengths=[2, 1, 2]),
        "cat-event": c.cat([c.simplex, c.real_vector], dim=-1, lengths=[3, 2]),
        "stack": c.stack([c.positive, c.interval(-1.0, 1.0), c.real], dim=-1),
        "stack-batch": c.stack([c.positive, c.unit_interval], dim=0),
        "mixture": c.MixtureSameFamilyConstraint(c.simplex),
    }


CONSTRAINT_VALUES = {
    "corr_cholesky": [
        np.eye(3),
        np.array([[1.0, 0.0], [0.6, 0.8]]),
        np.array([[1.0, 0.0], [0.6, 0.7]]),  # a row of norm < 1
        np.array([[1.0, 0.1], [0.6, 0.8]]),  # not lower triangular
        np.array([[1.0, 0.0], [0.6, -0.8]]),  # a negative diagonal
    ],
    "multinomial": [np.array([[1.0, 2.0, 1.0], [0.0, 5.0, 0.0], [-1.0, 2.0, 1.0]])],
    "cat": [np.array([0.5, 1.0, -3.0, 0.2, 1.5]), np.array([[-1.0], [2.0], [0.0], [1.0], [0.5]])],
    "cat-event": [np.array([[0.2, 0.3, 0.5, -4.0, 9.0], [0.2, 0.3, 0.6, 1.0, 1.0]])],
    "stack": [np.array([[1.0, 0.5, -9.0], [-1.0, 2.0, 0.0]])],
    "stack-batch": [np.array([[0.2, 0.3, -0.5], [0.2, 1.3, 0.6]])],
    "mixture": [np.array([[0.2, 0.8], [0.5, 0.4]])],
}


@pytest.mark.parametrize("name", list(CONSTRAINT_VALUES))
def test_new_constraints_match_torch(name: str) -> None:
    ours, theirs = _constraint_cases(lucid)[name], _constraint_cases(torch)[name]
    assert repr(ours) == repr(theirs).replace("torch.", "lucid.")
    assert ours.event_dim == theirs.event_dim
    assert ours.is_discrete == theirs.is_discrete
    for value in CONSTRAINT_VALUES[name]:
        expected = theirs.check(torch.tensor(value))
        actual = ours.check(lucid.tensor(value))
        assert tuple(actual.shape) == tuple(expected.shape)
        np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_constraints_export_torchs_names() -> None:
    assert sorted(constraints.__all__) == sorted(torch.distributions.constraints.__all__)
    for name in constraints.__all__:
        assert hasattr(constraints, name)


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.cat([c.real, 1.0]),
        lambda c: c.cat([c.real, c.positive], lengths=[1]),
        lambda c: c.cat([c.real], dim=1).check(_zeros(c, 2)),
        lambda c: c.stack([c.real, "real"]),
        lambda c: c.stack([c.real], dim=2).check(_zeros(c, 2)),
        lambda c: c.MixtureSameFamilyConstraint("real"),
    ],
)
def test_bad_constraint_arguments_raise_torchs_error(call) -> None:
    ours = _error(lambda: call(constraints))
    assert ours == _error(lambda: call(torch.distributions.constraints))
    assert ours[0] is AssertionError


def _zeros(module_constraints, *shape):
    if module_constraints is constraints:
        return lucid.zeros(*shape)
    return torch.zeros(*shape)


# ---- biject_to and transform_to -----------------------------------------------------------


def _registry_constraints(module):
    c = module.distributions.constraints
    return {
        "real": (c.real, (3,)),
        "real_vector": (c.real_vector, (2, 3)),
        "independent": (c.independent(c.positive, 2), (2, 3)),
        "positive": (c.positive, (3,)),
        "nonnegative": (c.nonnegative, (3,)),
        "greater_than": (c.greater_than(1.5), (3,)),
        "greater_than_eq": (c.greater_than_eq(-2.0), (3,)),
        "greater_than-tensor": (c.greater_than(module.tensor([0.0, 1.0, -2.0])), (3,)),
        "less_than": (c.less_than(3.0), (3,)),
        "unit_interval": (c.unit_interval, (3,)),
        "interval": (c.interval(-1.0, 2.0), (3,)),
        "interval-unit-as-tensors": (c.interval(module.tensor(0.0), module.tensor(1.0)), (3,)),
        "half_open_interval": (c.half_open_interval(0.0, 1.0), (3,)),
        "half_open_interval-shifted": (c.half_open_interval(2, 5), (3,)),
        "simplex": (c.simplex, (2, 3)),
        "lower_cholesky": (c.lower_cholesky, (2, 3, 3)),
        "positive_definite": (c.positive_definite, (2, 3, 3)),
        "positive_semidefinite": (c.positive_semidefinite, (3, 3)),
        "corr_cholesky": (c.corr_cholesky, (2, 6)),
        "cat": (c.cat([c.positive, c.real, c.unit_interval], dim=0, lengths=[2, 1, 2]), (5, 2)),
        "cat-event": (
            c.cat([c.independent(c.positive, 1), c.real_vector], dim=-1, lengths=[2, 3]),
            (2, 5),
        ),
        "stack": (c.stack([c.positive, c.interval(-1.0, 1.0)], dim=-1), (4, 2)),
        "boolean": (c.boolean, (3,)),
        "one_hot": (c.one_hot, (3,)),
        "nonnegative_integer": (c.nonnegative_integer, (3,)),
        "positive_integer": (c.positive_integer, (3,)),
        "integer_interval": (c.integer_interval(0, 3), (3,)),
        "multinomial": (c.multinomial(3), (3,)),
        "lower_triangular": (c.lower_triangular, (3, 3)),
        "square": (c.square, (3, 3)),
        "symmetric": (c.symmetric, (3, 3)),
        "mixture": (c.MixtureSameFamilyConstraint(c.real), (3,)),
        "dependent": (c.dependent, (3,)),
    }


def _describe(transform) -> tuple:
    """The structure of a transform: its class and, recursively, what it is built from."""
    name = type(transform).__name__
    if name == "ComposeTransform":
        return (name, tuple(_describe(part) for part in transform.parts))
    if name == "IndependentTransform":
        return (name, _describe(transform.base_transform), transform.reinterpreted_batch_ndims)
    if name == "AffineTransform":
        return (name, _number(transform.loc), _number(transform.scale), transform.event_dim)
    if name in ("CatTransform", "StackTransform"):
        parts = tuple(_describe(part) for part in transform.transforms)
        return (name, parts, transform.dim, tuple(getattr(transform, "lengths", ())))
    return (name,)


def _number(value):
    if isinstance(value, (int, float)):
        return ("number", value)
    return ("tensor", tuple(value.detach().numpy().ravel().tolist()))


REGISTRY_NAMES = list(_registry_constraints(lucid))


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", REGISTRY_NAMES)
def test_registry_matches_torch(registry: str, name: str) -> None:
    ours_constraint, shape = _registry_constraints(lucid)[name]
    theirs_constraint, _ = _registry_constraints(torch)[name]
    ours_registry = getattr(constraint_registry, registry)
    theirs_registry = getattr(torch.distributions.constraint_registry, registry)
    try:
        theirs = theirs_registry(theirs_constraint)
    except NotImplementedError as error:
        with pytest.raises(NotImplementedError) as ours_error:
            ours_registry(ours_constraint)
        assert str(ours_error.value) == str(error)
        return
    ours = ours_registry(ours_constraint)
    assert _describe(ours) == _describe(theirs)
    assert ours.bijective == theirs.bijective
    if registry == "biject_to":
        assert ours.bijective

    x = _rng().normal(size=shape)
    y_ours, y_theirs = ours(lucid.tensor(x)), theirs(torch.tensor(x))
    _assert_close(y_ours, y_theirs)
    assert bool(ours_constraint.check(y_ours).all())
    if ours.bijective:
        _assert_close(
            ours.log_abs_det_jacobian(lucid.tensor(x), y_ours),
            theirs.log_abs_det_jacobian(torch.tensor(x), y_theirs),
        )
        np.testing.assert_allclose(ours.inv(y_ours).numpy(), x, rtol=1e-9, atol=1e-12)


def _registry_outcome(registry, constraint):
    try:
        return _describe(registry(constraint))
    except NotImplementedError as error:
        return str(error)


def test_every_distributions_constraints_map_as_torchs() -> None:
    # the use the registries are for: optimizing any parameter, sampling any support in
    # unconstrained space; each lucid distribution's constraints are looked up as torch's
    compared = 0
    for name in D.__all__:
        ours = getattr(D, name)
        if not isinstance(ours, type) or not issubclass(ours, D.Distribution):
            continue
        theirs = getattr(torch.distributions, name)
        pairs = [(ours.arg_constraints, theirs.arg_constraints)]
        if isinstance(ours.arg_constraints, dict):
            pairs = [
                (ours.arg_constraints[key], theirs.arg_constraints[key])
                for key in theirs.arg_constraints
            ]
        else:  # a property, as for TransformedDistribution's subclasses without parameters
            pairs = []
        pairs.append((ours.support, theirs.support))
        for ours_constraint, theirs_constraint in pairs:
            if constraints.is_dependent(theirs_constraint):
                assert constraints.is_dependent(ours_constraint)
                continue
            for registry in ("biject_to", "transform_to"):
                expected = _registry_outcome(
                    getattr(torch.distributions, registry), theirs_constraint
                )
                assert _registry_outcome(getattr(D, registry), ours_constraint) == expected
                compared += 1
    assert compared > 50


def test_register_a_new_constraint() -> None:
    class _Unit(constraints.Constraint):
        pass

    registry = constraint_registry.ConstraintRegistry()

    def _sigmoid(constraint):
        return D.SigmoidTransform()

    assert registry.register(_Unit, _sigmoid) is _sigmoid
    assert isinstance(registry(_Unit()), D.SigmoidTransform)

    @registry.register(constraints.positive)
    def _softplus(constraint):
        return D.SoftplusTransform()

    assert isinstance(registry(constraints.greater_than(3.0)), D.SoftplusTransform)
    # the global registry is untouched (where positive, a _GreaterThan, maps as greater_than
    # does, since registering greater_than after it took over its class, as in torch)
    assert _describe(D.transform_to(constraints.positive)) == _describe(
        torch.distributions.transform_to(torch.distributions.constraints.positive)
    )
    assert isinstance(D.transform_to(constraints.positive), D.ComposeTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _Simplex constraints"):
        registry(constraints.simplex)


@pytest.mark.parametrize("constraint", [1.0, "positive", int])
def test_registering_what_is_not_a_constraint_raises_torchs_error(constraint) -> None:
    with pytest.raises(TypeError) as theirs:
        torch.distributions.constraint_registry.ConstraintRegistry().register(
            constraint, lambda c: None
        )
    with pytest.raises(TypeError) as ours:
        constraint_registry.ConstraintRegistry().register(constraint, lambda c: None)
    assert str(ours.value) == str(theirs.value)


def test_public_names_match_torch() -> None:
    assert constraint_registry.__all__ == torch.distributions.constraint_registry.__all__
    assert D.biject_to is constraint_registry.biject_to
    assert D.transform_to is constraint_registry.transform_to
    transform_names = set(torch.distributions.transforms.__all__) - {"PowerTransform"}
    assert transform_names <= set(D.transforms.__all__)
    for name in transform_names:
        assert getattr(D, name) is getattr(D.transforms, name)
