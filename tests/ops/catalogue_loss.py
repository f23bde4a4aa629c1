"""Op catalogue rows: the loss family."""

from __future__ import annotations

import numpy as np

from lucid.ops import loss
from tests.ops.op_catalogue import OpCase
from tests.torch_oracle import functional as torch_functional
from tests.torch_oracle import torch

REDUCTIONS = ("mean", "sum", "none")


def _pair(shape: tuple[int, ...]):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        return [rng.uniform(-2, 2, shape).astype(dtype), rng.uniform(-2, 2, shape).astype(dtype)]

    return make


def _logits_and_classes(shape: tuple[int, ...], ignore: bool = False):
    """Logits (N, C, ...) and int64 class targets (N, ...), the second one ignored if asked."""

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        target = rng.integers(0, shape[1], (shape[0], *shape[2:]))
        if ignore:
            target.reshape(-1)[1] = -100
        return [rng.uniform(-3, 3, shape).astype(dtype), target]

    return make


def _logits_and_probabilities(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(-3, 3, (4, 5)).astype(dtype), rng.dirichlet(np.ones(5), 4).astype(dtype)]


def _probabilities_pair(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(0.05, 0.95, (3, 4)).astype(dtype), rng.uniform(0, 1, (3, 4)).astype(dtype)]


def _logits_and_binary(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [rng.uniform(-4, 4, (3, 4)).astype(dtype), rng.uniform(0, 1, (3, 4)).astype(dtype)]


def _log_probabilities_pair(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    input = np.log(rng.dirichlet(np.ones(5), 3)).astype(dtype)
    return [input, rng.dirichlet(np.ones(5), 3).astype(dtype)]


def _embedding_pair(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
    return [
        rng.uniform(-2, 2, (4, 3)).astype(dtype),
        rng.uniform(-2, 2, (4, 3)).astype(dtype),
        np.array([1, -1, 1, -1], np.int64),
    ]


def _weight_tensors(weight: np.ndarray):
    """lucid and torch calls with a fixed per-class weight (cast to the input's dtype)."""
    import lucid

    def lucid_op(name: str, **kwargs):
        def call(input, target):
            w = lucid.from_numpy(weight.astype(input.detach().numpy().dtype))
            return getattr(loss, name)(input, target, weight=w, **kwargs)

        return call

    def torch_op(name: str, **kwargs):
        def call(input, target):
            w = torch.from_numpy(weight).to(input.dtype)
            return getattr(torch_functional, name)(input, target, weight=w, **kwargs)

        return call

    return lucid_op, torch_op


_CLASS_WEIGHT = np.array([0.5, 1.0, 2.0, 0.25, 1.5])
_lucid_weighted, _torch_weighted = _weight_tensors(_CLASS_WEIGHT)

ROWS: list[OpCase] = []
for reduction in REDUCTIONS:
    options = {"reduction": reduction}
    ROWS += [
        OpCase(f"mse_loss_{reduction}", loss.mse_loss, torch_functional.mse_loss,
               make_inputs=_pair((3, 4)), kwargs=options),
        OpCase(f"l1_loss_{reduction}", loss.l1_loss, torch_functional.l1_loss,
               make_inputs=_pair((3, 4)), kwargs=options),
        OpCase(f"smooth_l1_loss_{reduction}", loss.smooth_l1_loss,
               torch_functional.smooth_l1_loss, make_inputs=_pair((3, 4)),
               kwargs={**options, "beta": 0.7}),
        OpCase(f"huber_loss_{reduction}", loss.huber_loss, torch_functional.huber_loss,
               make_inputs=_pair((3, 4)), kwargs={**options, "delta": 1.3}),
        OpCase(f"cross_entropy_{reduction}", loss.cross_entropy, torch_functional.cross_entropy,
               make_inputs=_logits_and_classes((4, 5)), grad_inputs=[0], kwargs=options),
        OpCase(f"cross_entropy_nd_ignore_{reduction}", loss.cross_entropy,
               torch_functional.cross_entropy,
               make_inputs=_logits_and_classes((2, 5, 3), ignore=True), grad_inputs=[0],
               kwargs=options),
        OpCase(f"cross_entropy_smoothing_{reduction}", loss.cross_entropy,
               torch_functional.cross_entropy, make_inputs=_logits_and_classes((4, 5), True),
               grad_inputs=[0], kwargs={**options, "label_smoothing": 0.2}),
        OpCase(f"cross_entropy_weight_smoothing_{reduction}",
               _lucid_weighted("cross_entropy", label_smoothing=0.1, **options),
               _torch_weighted("cross_entropy", label_smoothing=0.1, **options),
               make_inputs=_logits_and_classes((4, 5), True), grad_inputs=[0]),
        OpCase(f"cross_entropy_probabilities_{reduction}", loss.cross_entropy,
               torch_functional.cross_entropy, make_inputs=_logits_and_probabilities,
               kwargs={**options, "label_smoothing": 0.1}),
        OpCase(f"nll_loss_{reduction}", loss.nll_loss, torch_functional.nll_loss,
               make_inputs=_logits_and_classes((2, 5, 3), ignore=True), grad_inputs=[0],
               kwargs=options),
        OpCase(f"nll_loss_weight_{reduction}", _lucid_weighted("nll_loss", **options),
               _torch_weighted("nll_loss", **options),
               make_inputs=_logits_and_classes((4, 5), True), grad_inputs=[0]),
        OpCase(f"binary_cross_entropy_{reduction}", loss.binary_cross_entropy,
               torch_functional.binary_cross_entropy, make_inputs=_probabilities_pair,
               kwargs=options),
        OpCase(f"binary_cross_entropy_with_logits_{reduction}",
               loss.binary_cross_entropy_with_logits,
               torch_functional.binary_cross_entropy_with_logits,
               make_inputs=_logits_and_binary, kwargs=options),
        OpCase(f"kl_div_{reduction}", loss.kl_div, torch_functional.kl_div,
               make_inputs=_log_probabilities_pair, grad_inputs=[0], kwargs=options),
        OpCase(f"kl_div_log_target_{reduction}", loss.kl_div, torch_functional.kl_div,
               make_inputs=_log_probabilities_pair, kwargs={**options, "log_target": True}),
        OpCase(f"cosine_embedding_loss_{reduction}", loss.cosine_embedding_loss,
               torch_functional.cosine_embedding_loss, make_inputs=_embedding_pair,
               grad_inputs=[0, 1], kwargs={**options, "margin": 0.2}),
    ]  # fmt: skip
ROWS.append(
    OpCase("kl_div_batchmean", loss.kl_div, torch_functional.kl_div,
           make_inputs=_log_probabilities_pair, grad_inputs=[0],
           kwargs={"reduction": "batchmean"})
)  # fmt: skip
