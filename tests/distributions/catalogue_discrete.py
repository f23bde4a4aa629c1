"""Catalogue rows of the discrete distributions added after the first set (see catalogue.py),
with the continuous ones that came with them (the Pareto family and its kin)."""

from __future__ import annotations

import numpy as np

from tests.distributions.catalogue import (
    POSITIVES,
    PROBS,
    QUANTILES,
    REALS,
    SCALES,
    SIMPLEX,
    DistCase,
    _array,
)

TEN_TRIALS = np.full(4, 10.0)
# one-hot counts: Multinomial's catalogue rows keep the default total_count of 1, since a
# catalogue parameter is a tensor and total_count must be an int
ONE_HOT_COUNTS = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])

CASES: list[DistCase] = [
    DistCase(
        "Binomial",
        {"total_count": TEN_TRIALS, "probs": PROBS},
        _array(0.0, 3.0, 5.0, 10.0),
        invalid_params={"total_count": TEN_TRIALS, "probs": PROBS + 0.5},
        invalid_value=_array(0.0, 3.0, 5.0, 11.0),
        differentiable=("probs",),
    ),
    DistCase(
        "Binomial",
        {"total_count": TEN_TRIALS, "logits": REALS},
        _array(1.0, 0.0, 7.0, 9.0),
        invalid_params={"total_count": _array(10.0, 2.5, 3.0, 4.0), "logits": REALS},
        invalid_value=_array(1.0, 0.5, 7.0, 9.0),
        differentiable=("logits",),
        label="Binomial-logits",
    ),
    DistCase(
        "Multinomial",
        {"probs": SIMPLEX},
        ONE_HOT_COUNTS,
        invalid_params={"probs": SIMPLEX - 0.25},
        invalid_value=np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]),
        differentiable=("probs",),
    ),
    DistCase(
        "Multinomial",
        {"logits": np.log(SIMPLEX) + 0.3},
        ONE_HOT_COUNTS,
        invalid_value=np.array([[0.0, -1.0, 1.0], [1.0, 0.0, 0.0]]),
        differentiable=("logits",),
        label="Multinomial-logits",
    ),
    DistCase(
        "NegativeBinomial",
        {"total_count": _array(2.0, 3.5, 5.0, 1.5), "probs": _array(0.1, 0.35, 0.5, 0.7)},
        _array(0.0, 1.0, 3.0, 7.0),
        # probs lies in [0, 1): 1 itself is invalid
        invalid_params={
            "total_count": _array(2.0, 3.5, 5.0, 1.5),
            "probs": _array(0.1, 1.0, 0.5, 0.7),
        },
        invalid_value=_array(0.0, 1.5, 3.0, 7.0),
        differentiable=("total_count", "probs"),
    ),
    DistCase(
        "NegativeBinomial",
        {"total_count": _array(2.0, 3.5, 5.0, 1.5), "logits": _array(-1.0, 0.1, 0.5, -0.3)},
        _array(0.0, 1.0, 3.0, 7.0),
        invalid_params={"total_count": _array(2.0, -3.5, 5.0, 1.5), "logits": REALS},
        differentiable=("total_count", "logits"),
        label="NegativeBinomial-logits",
    ),
    DistCase(
        "FisherSnedecor",
        # df1 = 2 has no mode (nan); df2 of 20 and above keep the sample variance's spread small
        {"df1": _array(2.0, 5.0, 10.0, 25.0), "df2": _array(40.0, 20.0, 30.0, 50.0)},
        _array(0.2, 1.0, 2.5, 4.0),
        invalid_params={"df1": -POSITIVES, "df2": _array(40.0, 20.0, 30.0, 50.0)},
        invalid_value=_array(0.2, -1.0, 2.5, 4.0),
        differentiable=("df1", "df2"),
    ),
    DistCase(
        "InverseGamma",
        # concentrations of 10 and above: lower ones have no variance or heavy tails for it
        {"concentration": _array(10.0, 12.0, 15.0, 20.0), "rate": SCALES * 10},
        _array(0.2, 1.0, 1.5, 1.2),
        invalid_params={"concentration": -POSITIVES, "rate": SCALES},
        invalid_value=_array(0.2, -1.0, 2.5, 4.0),
        differentiable=("concentration", "rate"),
    ),
    DistCase(
        "ContinuousBernoulli",
        # 0.4995 lies within lims (0.499, 0.501), where the Taylor expansions are used
        {"probs": _array(0.1, 0.35, 0.4995, 0.9)},
        _array(0.1, 0.4, 0.6, 0.95),
        invalid_params={"probs": PROBS + 0.5},
        invalid_value=_array(0.1, 1.4, 0.6, 0.95),
        differentiable=("probs",),
        quantiles=QUANTILES,
    ),
    DistCase(
        "ContinuousBernoulli",
        {"logits": REALS},
        _array(0.1, 0.4, 0.6, 0.95),
        differentiable=("logits",),
        quantiles=QUANTILES,
        label="ContinuousBernoulli-logits",
    ),
    DistCase(
        "VonMises",
        # concentrations on both sides of 3.75, where log I0 changes approximation
        {"loc": _array(-1.0, 0.0, 0.5, 2.0), "concentration": _array(0.5, 1.0, 4.0, 10.0)},
        REALS,
        invalid_params={"loc": REALS, "concentration": -POSITIVES},
        differentiable=("loc", "concentration"),
    ),
    DistCase(
        "Pareto",
        # alpha of 15 and above: the sample variance of a Pareto converges slowly
        {"scale": SCALES, "alpha": _array(15.0, 20.0, 25.0, 40.0)},
        _array(0.6, 1.2, 2.0, 3.5),
        invalid_params={"scale": SCALES, "alpha": -POSITIVES},
        invalid_value=_array(0.6, 0.9, 2.0, 3.5),
        differentiable=("scale", "alpha"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Weibull",
        {"scale": SCALES, "concentration": _array(1.0, 1.5, 2.0, 4.0)},
        POSITIVES,
        invalid_params={"scale": -SCALES, "concentration": POSITIVES},
        invalid_value=_array(0.3, -1.1, 2.0, 4.5),
        differentiable=("scale", "concentration"),
        quantiles=QUANTILES,
    ),
    DistCase(
        "Kumaraswamy",
        # each element has a < 1 or b < 1, where PyTorch's mode (nan) is right; see
        # test_distributions_more_discrete.py for the mode elsewhere
        {
            "concentration1": _array(0.5, 2.0, 0.8, 3.0),
            "concentration0": _array(2.0, 0.7, 0.9, 0.6),
        },
        _array(0.1, 0.4, 0.6, 0.95),
        invalid_params={"concentration1": POSITIVES, "concentration0": -SCALES},
        invalid_value=_array(0.1, 1.4, 0.6, 0.95),
        differentiable=("concentration1", "concentration0"),
        quantiles=QUANTILES,
    ),
]
