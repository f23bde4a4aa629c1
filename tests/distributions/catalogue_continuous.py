"""Catalogue rows of the continuous distributions added after the first set (see catalogue.py)."""

from __future__ import annotations

import numpy as np

from tests.distributions.catalogue import DistCase, _array  # noqa: F401

CASES: list[DistCase] = []

# the relaxed (Concrete) distributions and the logistic normal: torch gives them no mean,
# variance, entropy or cdf, so their rows check log_prob, gradients, shapes and validation,
# and tests/distributions/test_relaxed.py checks their samples
_RELAXED_SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
_RELAXED_TEMPERATURES = _array(0.5, 1.0, 2.0, 0.3)
CASES += [
    DistCase(
        "RelaxedBernoulli",
        {"temperature": _RELAXED_TEMPERATURES, "probs": _array(0.1, 0.35, 0.5, 0.9)},
        _array(0.1, 0.4, 0.6, 0.95),
        invalid_params={"temperature": _RELAXED_TEMPERATURES, "probs": _array(0.6, 0.85, 1, 1.4)},
        invalid_value=_array(0.1, 1.4, 0.6, 0.95),
        differentiable=("temperature", "probs"),
    ),
    DistCase(
        "RelaxedBernoulli",
        {"temperature": _RELAXED_TEMPERATURES, "logits": _array(-0.7, 0.1, 1.3, 2.5)},
        _array(0.1, 0.4, 0.6, 0.95),
        differentiable=("temperature", "logits"),
        label="RelaxedBernoulli-logits",
    ),
    DistCase(
        "RelaxedOneHotCategorical",
        {"temperature": np.array(0.7), "probs": _RELAXED_SIMPLEX},
        np.array([[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]]),
        invalid_params={"temperature": np.array(0.7), "probs": _RELAXED_SIMPLEX - 0.25},
        invalid_value=np.array([[0.1, 0.7, 0.3], [0.25, 0.25, 0.5]]),
        differentiable=("temperature", "probs"),
    ),
    DistCase(
        "RelaxedOneHotCategorical",
        {"temperature": np.array(1.5), "logits": np.log(_RELAXED_SIMPLEX) + 0.3},
        np.array([[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]]),
        differentiable=("temperature", "logits"),
        label="RelaxedOneHotCategorical-logits",
    ),
    DistCase(
        "LogisticNormal",
        {
            "loc": np.array([[0.2, -0.5, 1.0], [0.0, 0.3, -1.2]]),
            "scale": np.array([[0.5, 1.0, 1.5], [2.0, 0.7, 1.1]]),
        },
        np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.15, 0.05]]),
        invalid_params={
            "loc": np.array([[0.2, -0.5, 1.0], [0.0, 0.3, -1.2]]),
            "scale": np.array([[0.5, -1.0, 1.5], [2.0, 0.7, 1.1]]),
        },
        invalid_value=np.array([[0.1, 0.2, 0.3, 0.5], [0.7, 0.1, 0.15, 0.05]]),
        differentiable=("loc", "scale"),
    ),
]
