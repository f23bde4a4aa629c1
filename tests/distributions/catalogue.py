"""The distributions under test: one row per distribution, with float64 parameters, values to
score, and invalid parameters whose validate_args error must match torch's."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class DistCase:
    name: str  # the class name, the same in lucid.distributions and torch.distributions
    params: dict[str, np.ndarray]
    values: np.ndarray  # in the support, broadcastable with batch_shape + event_shape
    invalid_params: dict[str, np.ndarray] = field(default_factory=dict)
    invalid_value: np.ndarray | None = None  # outside the support
    differentiable: tuple[str, ...] = ()  # parameters log_prob and rsample differentiate
    quantiles: np.ndarray | None = None  # icdf arguments
    label: str = ""

    @property
    def id(self) -> str:
        return self.label or self.name


def _array(*values) -> np.ndarray:
    return np.array(values, dtype=np.float64)


LOCS = _array(-1.0, 0.0, 0.5, 2.0)
SCALES = _array(0.5, 1.0, 1.5, 3.0)
REALS = _array(-0.7, 0.1, 1.3, 2.5)
POSITIVES = _array(0.3, 1.1, 2.0, 4.5)
PROBS = _array(0.1, 0.35, 0.5, 0.9)
QUANTILES = _array(0.05, 0.3, 0.6, 0.95)
SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])

CASES = [
    DistCase(
        "Normal",
        {"loc": LOCS, "scale": SCALES},
        REALS,
        invalid_params={"loc": LOCS, "scale": -SCALES},
        differentiable=("loc", "scale"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Uniform",
        {"low": LOCS - 1.0, "high": LOCS + 2.0},
        _array(-1.5, 0.0, 1.3, 3.5),
        invalid_params={"low": LOCS, "high": LOCS - 1.0},
        invalid_value=_array(-5.0, 0.0, 1.0, 2.0),
        differentiable=("low", "high"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Bernoulli",
        {"probs": PROBS},
        _array(0.0, 1.0, 1.0, 0.0),
        invalid_params={"probs": PROBS + 0.5},
        invalid_value=_array(0.0, 0.5, 1.0, 0.0),
        differentiable=("probs",),
    ),
    DistCase(
        "Bernoulli",
        {"logits": REALS},
        _array(0.0, 1.0, 1.0, 0.0),
        differentiable=("logits",),
        label="Bernoulli-logits",
    ),
    DistCase(
        "Categorical",
        {"probs": SIMPLEX},
        _array(0.0, 2.0),
        invalid_params={"probs": SIMPLEX - 0.25},
        invalid_value=_array(0.0, 3.0),
        differentiable=("probs",),
    ),
    DistCase(
        "Categorical",
        {"logits": np.log(SIMPLEX) + 0.3},
        _array(1.0, 2.0),
        differentiable=("logits",),
        label="Categorical-logits",
    ),
    DistCase(
        "OneHotCategorical",
        {"probs": SIMPLEX},
        np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
        invalid_value=np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]),
        differentiable=("probs",),
    ),
    DistCase(
        "Exponential",
        {"rate": POSITIVES},
        _array(0.0, 0.4, 1.7, 3.0),
        invalid_params={"rate": -POSITIVES},
        invalid_value=_array(0.1, -0.4, 1.7, 3.0),
        differentiable=("rate",),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Laplace",
        {"loc": LOCS, "scale": SCALES},
        REALS,
        invalid_params={"loc": LOCS, "scale": -SCALES},
        differentiable=("loc", "scale"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Cauchy",
        {"loc": LOCS, "scale": SCALES},
        REALS,
        invalid_params={"loc": LOCS, "scale": -SCALES},
        differentiable=("loc", "scale"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Poisson",
        {"rate": POSITIVES},
        _array(0.0, 1.0, 3.0, 7.0),
        invalid_params={"rate": -POSITIVES},
        invalid_value=_array(0.0, 1.5, 3.0, 7.0),
        differentiable=("rate",),
    ),
    DistCase(
        "Geometric",
        {"probs": PROBS},
        _array(0.0, 1.0, 3.0, 7.0),
        invalid_params={"probs": PROBS + 0.5},
        invalid_value=_array(0.0, -1.0, 3.0, 7.0),
        differentiable=("probs",),
    ),
    DistCase(
        "Geometric",
        {"logits": REALS},
        _array(0.0, 1.0, 3.0, 7.0),
        differentiable=("logits",),
        label="Geometric-logits",
    ),
    DistCase(
        "Gamma",
        {"concentration": POSITIVES, "rate": SCALES},
        _array(0.2, 1.0, 2.5, 4.0),
        invalid_params={"concentration": -POSITIVES, "rate": SCALES},
        invalid_value=_array(0.2, -1.0, 2.5, 4.0),
        differentiable=("concentration", "rate"),
    ),
    DistCase(
        "Beta",
        {"concentration1": POSITIVES, "concentration0": SCALES},
        _array(0.1, 0.4, 0.6, 0.95),
        invalid_params={"concentration1": POSITIVES, "concentration0": -SCALES},
        invalid_value=_array(0.1, 1.4, 0.6, 0.95),
        differentiable=("concentration1", "concentration0"),
    ),
    DistCase(
        "Dirichlet",
        {"concentration": np.array([[0.5, 1.0, 2.0], [3.0, 0.7, 1.2]])},
        SIMPLEX,
        invalid_params={"concentration": np.array([[0.5, -1.0, 2.0], [3.0, 0.7, 1.2]])},
        invalid_value=np.array([[0.2, 0.3, 0.6], [0.6, 0.1, 0.3]]),
        differentiable=("concentration",),
    ),
    DistCase(
        "Dirichlet",
        {"concentration": np.array([[0.5, 0.3, 0.9], [3.0, 0.7, 1.2]])},
        SIMPLEX,
        differentiable=("concentration",),
        label="Dirichlet-vertex-mode",
    ),
    DistCase(
        "LogNormal",
        {"loc": LOCS, "scale": SCALES / 4},  # heavier tails would make the sample variance wild
        POSITIVES,
        invalid_params={"loc": LOCS, "scale": -SCALES},
        invalid_value=_array(0.3, -1.1, 2.0, 4.5),
        differentiable=("loc", "scale"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "HalfNormal",
        {"scale": SCALES},
        _array(0.0, 0.4, 1.7, 3.0),
        invalid_params={"scale": -SCALES},
        invalid_value=_array(0.1, -0.4, 1.7, 3.0),
        differentiable=("scale",),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Gumbel",
        {"loc": LOCS, "scale": SCALES},
        REALS,
        invalid_params={"loc": LOCS, "scale": -SCALES},
        differentiable=("loc", "scale"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Chi2",
        {"df": 2 * POSITIVES},
        _array(0.2, 1.0, 2.5, 4.0),
        invalid_params={"df": -POSITIVES},
        invalid_value=_array(0.2, -1.0, 2.5, 4.0),
        differentiable=("df",),
    ),
    DistCase(
        "StudentT",
        {"df": _array(0.8, 1.5, 3.0, 6.0), "loc": LOCS, "scale": SCALES},
        REALS,
        invalid_params={"df": -POSITIVES, "loc": LOCS, "scale": SCALES},
        differentiable=("df", "loc", "scale"),
        label="StudentT-undefined-moments",
    ),
    DistCase(
        "StudentT",
        {"df": _array(9.0, 10.0, 12.0, 15.0), "loc": LOCS, "scale": SCALES},
        REALS,
        differentiable=("df", "loc", "scale"),
    ),
    DistCase(
        "HalfCauchy",
        {"scale": SCALES},
        _array(0.0, 0.4, 1.7, 3.0),
        invalid_params={"scale": -SCALES},
        invalid_value=_array(0.1, -0.4, 1.7, 3.0),
        differentiable=("scale",),
        quantiles=QUANTILES,
    ),
]


def _extend() -> None:
    # the later groups live in their own files; imported here so that CASES stays one list
    from tests.distributions import catalogue_continuous, catalogue_discrete

    CASES.extend(catalogue_continuous.CASES)
    CASES.extend(catalogue_discrete.CASES)


_extend()
