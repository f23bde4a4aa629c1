"""The optimizer catalogue: one row per lucid.optim optimizer, which
tests/optim/test_optimizer_catalogue.py turns into checks, as PyTorch's OptimizerInfo does.

Each row yields, for each of its configurations: the trajectory of a small least-squares
problem step for step against torch.optim's optimizer of the same name (parameters and the
state dict after every step); a state_dict round trip into an optimizer built with other
hyperparameters, which must then continue the trajectory exactly; a step that skips a parameter
without a gradient, as torch's does. Each of its invalid constructions must raise PyTorch's
error type and message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class OptimizerCase:
    """One optimizer under test.

    `configs` are constructor keyword arguments, each a trajectory; `errors` are invalid ones.
    `known_gaps` maps a check ("trajectory", "round_trip", "skips", "errors") to how lucid
    differs from PyTorch there; that check is then a strict expected failure.
    """

    name: str
    configs: Sequence[dict[str, Any]]
    errors: Sequence[dict[str, Any]] = ()
    steps: int = 5
    # Arguments given to torch's optimizer only: foreach=False picks its single-tensor code
    # path, which lucid's follows; its state_dict then says foreach=False where lucid's has None.
    torch_only: dict[str, Any] = field(default_factory=lambda: {"foreach": False})
    # Steps take a closure that re-evaluates the loss (LBFGS).
    uses_closure: bool = False
    # Optimizes the weight matrix only (Muon takes 2-D parameters).
    matrix_only: bool = False
    # Tolerances of parameters and state against torch after every step.
    rtol: float = 1e-12
    atol: float = 1e-14
    known_gaps: dict[str, str] = field(default_factory=dict)


def problem(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(weight, bias, inputs, targets) of a small least-squares problem."""
    weight = rng.standard_normal((3, 4))
    bias = rng.standard_normal(3)
    inputs = rng.standard_normal((6, 4))
    targets = rng.standard_normal((6, 3))
    return weight, bias, inputs, targets


def loss(library: Any, params: Sequence[Any], inputs: np.ndarray, targets: np.ndarray) -> Any:
    """Mean squared error of the affine map, plus a quartic term so curvature varies."""
    weight, *rest = params
    out = library.tensor(inputs) @ weight.t()
    if rest:
        out = out + rest[0]
    return ((out - library.tensor(targets)) ** 2).mean() + (weight**4).sum() * 0.01


def _betas(index: int) -> tuple[float, float]:
    return (1.0, 0.9) if index == 0 else (0.9, 1.0)


_LR = {"lr": -1.0}
_EPS = {"eps": -1.0}
_WEIGHT_DECAY = {"weight_decay": -1.0}

ROWS: list[OptimizerCase] = [
    OptimizerCase(
        "SGD",
        [
            {"lr": 0.05},
            {"lr": 0.05, "momentum": 0.9},
            {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1},
            {"lr": 0.05, "momentum": 0.9, "nesterov": True},
            {"lr": 0.01, "maximize": True, "weight_decay": 0.1},
        ],
        errors=[
            _LR,
            {"momentum": -0.5},
            _WEIGHT_DECAY,
            {"nesterov": True},
            {"nesterov": True, "momentum": 0.9, "dampening": 0.1},
        ],
    ),
    OptimizerCase(
        "Adam",
        [
            {},
            {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1},
            {"lr": 0.1, "amsgrad": True},
            {"lr": 0.1, "maximize": True, "eps": 1e-3},
        ],
        errors=[_LR, _EPS, {"betas": _betas(0)}, {"betas": _betas(1)}, _WEIGHT_DECAY],
    ),
    OptimizerCase(
        "AdamW",
        [{"lr": 0.1}, {"lr": 0.1, "weight_decay": 0.3, "amsgrad": True}],
        errors=[_LR, _EPS, {"betas": _betas(1)}, _WEIGHT_DECAY],
    ),
    OptimizerCase(
        "RMSprop",
        [
            {},
            {"lr": 0.05, "alpha": 0.9, "weight_decay": 0.1},
            {"lr": 0.05, "momentum": 0.8},
            {"lr": 0.05, "centered": True, "momentum": 0.5, "maximize": True},
        ],
        errors=[_LR, _EPS, {"momentum": -1.0}, _WEIGHT_DECAY, {"alpha": -1.0}],
    ),
    OptimizerCase(
        "Adagrad",
        [
            {},
            {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1},
            {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-3},
        ],
        errors=[_LR, {"lr_decay": -1.0}, _WEIGHT_DECAY, {"initial_accumulator_value": -1.0}, _EPS],
    ),
    OptimizerCase(
        "Adamax",
        [
            {},
            {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1, "eps": 1e-3},
            {"lr": 0.05, "maximize": True},
        ],
        errors=[_LR, _EPS, {"betas": _betas(0)}, _WEIGHT_DECAY],
    ),
    OptimizerCase(
        "NAdam",
        [
            {},
            {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1, "momentum_decay": 0.01},
            {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True},
            {"lr": 0.05, "maximize": True, "eps": 1e-3},
        ],
        errors=[_LR, _EPS, {"betas": _betas(1)}, _WEIGHT_DECAY, {"momentum_decay": -1.0}],
    ),
    OptimizerCase(
        "RAdam",
        [
            {},
            {"lr": 0.1, "betas": (0.5, 0.9), "weight_decay": 0.1},
            {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True},
            {"lr": 0.05, "betas": (0.6, 0.9), "maximize": True},
        ],
        # RAdam rectifies its step only once the moving average is long enough (step 6 for
        # beta2=0.9)
        steps=12,
        errors=[_LR, _EPS, {"betas": _betas(0)}, {"betas": _betas(1)}, _WEIGHT_DECAY],
    ),
    OptimizerCase(
        "Adadelta",
        [
            {},
            {"lr": 0.5, "rho": 0.8, "eps": 1e-3, "weight_decay": 0.1},
            {"lr": 0.5, "maximize": True},
        ],
        errors=[_LR, {"rho": 1.5}, _EPS, _WEIGHT_DECAY],
    ),
    OptimizerCase(
        "Rprop",
        [
            {},
            {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)},
            {"lr": 0.05, "maximize": True},
        ],
        errors=[_LR, {"etas": (0.5, 0.9)}, {"etas": (1.5, 2.0)}],
    ),
    OptimizerCase(
        "ASGD",
        [
            {},
            {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 2, "weight_decay": 0.1},
            {"lr": 0.05, "t0": 0, "maximize": True},
        ],
        steps=8,
        errors=[_LR, _WEIGHT_DECAY],
    ),
    OptimizerCase(
        "Adafactor",
        [
            {},
            {"lr": 0.1, "beta2_decay": -0.5, "eps": (1e-5, 1e-2), "d": 2.0},
            {"lr": 0.05, "weight_decay": 0.1, "maximize": True},
        ],
        errors=[
            _LR,
            {"beta2_decay": 0.5},
            {"eps": (-1.0, 1e-3)},
            {"eps": (None, -1.0)},
            {"d": 0.5},
            _WEIGHT_DECAY,
        ],
    ),
    OptimizerCase(
        "LBFGS",
        [
            {},
            {"lr": 0.5, "max_iter": 7, "history_size": 3},
            {"line_search_fn": "strong_wolfe"},
            {"line_search_fn": "strong_wolfe", "max_iter": 6, "history_size": 2, "lr": 0.8},
            {"line_search_fn": "strong_wolfe", "max_iter": 30, "max_eval": 12},
            {"tolerance_grad": 1e-3, "tolerance_change": 1e-4, "max_iter": 50},
        ],
        errors=[_LR],
        steps=3,
        torch_only={},
        uses_closure=True,
        rtol=1e-8,
        atol=1e-12,
    ),
    OptimizerCase(
        "Muon",
        [
            {},
            {"lr": 0.05},
            {"lr": 0.05, "momentum": 0.8, "nesterov": False, "weight_decay": 0.0},
            {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3, "eps": 1e-3},
            {"lr": 0.02, "adjust_lr_fn": "original", "ns_coefficients": (2.0, -1.5, 0.5)},
        ],
        errors=[_LR, {"momentum": -1.0}, _WEIGHT_DECAY, {"adjust_lr_fn": "linear"}],
        torch_only={},
        matrix_only=True,
    ),
]

# lucid.optim optimizers without a row: why, and the test file that covers them.
UNCATALOGUED_OPTIMIZERS: dict[str, tuple[str, str]] = {
    "SparseAdam": (
        "takes sparse gradients only (an Embedding with sparse=True), not this problem's",
        "tests/optim/test_sparse_adam.py",
    ),
}
