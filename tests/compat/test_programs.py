"""§2 of issue 16: real PyTorch programs give the same losses, gradients and parameters in lucid."""

from __future__ import annotations

import numpy as np
import pytest

from tests.compat.harness import compare, load
from tests.torch_oracle import requires_torch

pytestmark = requires_torch


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mlp_classifier_with_sgd_momentum(rng, dtype):
    data = {"x": rng.standard_normal((64, 8)), "y": rng.integers(0, 4, 64)}
    losses = compare("mlp_classifier", data, steps=5, dtype=dtype)
    assert losses[-1] < losses[0]


def test_polynomial_fit_with_custom_autograd_function():
    # float64 only: c.grad is a sum of 2000 terms that nearly cancel, so in float32 it is
    # summation-order noise (torch and NumPy reduce in different orders).
    losses = compare("polynomial_autograd_function", {}, steps=5)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cnn_classifier_fed_by_a_dataloader(rng, dtype):
    data = {"images": rng.standard_normal((20, 1, 16, 16)), "labels": rng.integers(0, 3, 20)}
    losses = compare("cnn_dataloader", data, steps=6, dtype=dtype)
    assert np.isfinite(losses).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_char_lstm_language_model_with_adam(rng, dtype):
    data = {"text": rng.integers(0, 11, 200)}
    losses = compare("char_lstm", data, steps=5, dtype=dtype)
    assert losses[-1] < losses[0]


def test_gpt_character_model_with_adamw_groups_and_top_k(rng):
    # float64 only: AdamW's first step is lr * g / (|g| + eps), so for the few gradients near
    # eps a float32 rounding difference in g moves the parameter by up to lr.
    data = {"text": rng.integers(0, 13, 120)}
    losses = compare("gpt", data, steps=5)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_vae_with_reparameterisation_bce_and_kl(rng, dtype):
    steps = 5
    data = {"x": rng.uniform(size=(16, 20)), "noise": rng.standard_normal((steps, 16, 3))}
    losses = compare("vae", data, steps=steps, dtype=dtype)
    assert np.isfinite(losses).all()  # fresh noise each step, so the loss need not fall


def test_seq2seq_gru_with_teacher_forcing(rng):
    # float64 only, for the reason given at the GPT test (Adam's first step).
    data = {"source": rng.integers(1, 9, (4, 6)), "target": rng.integers(1, 7, (4, 5))}
    losses = compare("seq2seq_gru", data, steps=6)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("framework", ["torch", "lucid"])
@pytest.mark.parametrize("name", ["test_sanity_check", "test_more_ops"])
def test_micrograd_test_suite_checks_its_engine_against_the_framework(framework, name):
    getattr(load("micrograd", framework), name)()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_inplace_writes_through_views_of_activations(rng, dtype):
    data = {"x": rng.standard_normal((6, 8)), "y": rng.integers(0, 3, 6)}
    losses = compare("inplace_views", data, steps=5, dtype=dtype)
    assert losses[-1] < losses[0]
