"""SparseAdam on Embedding(sparse=True) follows PyTorch's sparse trajectory; untouched rows stay."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.optim as optim
from tests.torch_oracle import requires_torch, torch

NUM_EMBEDDINGS, DIM = 12, 4


def _embedding_pair(weight: np.ndarray, padding_idx: int | None):
    lucid_embedding = lucid.nn.Embedding(
        NUM_EMBEDDINGS, DIM, padding_idx=padding_idx, sparse=True, dtype=lucid.float64
    )
    torch_embedding = torch.nn.Embedding(
        NUM_EMBEDDINGS, DIM, padding_idx=padding_idx, sparse=True, dtype=torch.float64
    )
    with lucid.no_grad():
        lucid_embedding.weight.copy_(lucid.tensor(weight))
    with torch.no_grad():
        torch_embedding.weight.copy_(torch.tensor(weight))
    return lucid_embedding, torch_embedding


@requires_torch
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"lr": 0.1},
        {"lr": 0.05, "betas": (0.5, 0.8), "eps": 1e-3},
        {"lr": 0.1, "maximize": True},
    ],
    ids=str,
)
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_trajectory_matches_torch_sparse_gradients(kwargs, padding_idx, rng):
    weight = rng.standard_normal((NUM_EMBEDDINGS, DIM))
    lucid_embedding, torch_embedding = _embedding_pair(weight, padding_idx)
    lucid_optimizer = optim.SparseAdam(lucid_embedding.parameters(), **kwargs)
    torch_optimizer = torch.optim.SparseAdam(torch_embedding.parameters(), **kwargs)
    for _ in range(6):
        # Few lookups with repeats: most rows are untouched, some are hit twice in one step.
        indices = rng.integers(0, NUM_EMBEDDINGS, size=(2, 3))
        target = rng.standard_normal((2, 3, DIM))
        # relu leaves exact zeros inside touched rows, which PyTorch still updates.
        lucid_loss = lucid.relu(lucid_embedding(lucid.tensor(indices)) - lucid.tensor(target))
        torch_loss = torch.relu(torch_embedding(torch.tensor(indices)) - torch.tensor(target))
        lucid_optimizer.zero_grad()
        torch_optimizer.zero_grad()
        (lucid_loss**2).sum().backward()
        (torch_loss**2).sum().backward()
        lucid_optimizer.step()
        torch_optimizer.step()
        np.testing.assert_allclose(
            lucid_embedding.weight.detach().numpy(),
            torch_embedding.weight.detach().numpy(),
            rtol=1e-12,
            atol=1e-14,
        )
    lucid_state = lucid_optimizer.state[lucid_embedding.weight]
    torch_state = torch_optimizer.state[torch_embedding.weight]
    assert lucid_state["step"] == torch_state["step"] == 6
    for key in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(
            lucid_state[key].numpy(), torch_state[key].numpy(), rtol=1e-12, atol=1e-14
        )


def test_untouched_rows_and_their_moments_do_not_change():
    weight = lucid.arange(12.0).reshape(4, 3).requires_grad_()
    optimizer = optim.SparseAdam([weight], lr=0.1)
    weight.grad = lucid.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, -2.0], [0.0, 0.0, 0.0], [3.0, 3, 3]])
    optimizer.step()
    moved = (weight.detach() != lucid.arange(12.0).reshape(4, 3)).numpy()
    # A touched row moves in every element, its zero-gradient elements included (no momentum
    # yet, so those stay at zero update): rows 1 and 3 change, rows 0 and 2 are bit-identical.
    assert moved[[0, 2]].sum() == 0
    assert moved[1].tolist() == [True, False, True]
    assert moved[3].all()
    exp_avg = optimizer.state[weight]["exp_avg"].numpy()
    assert (exp_avg[[0, 2]] == 0).all()

    # Second step touches only row 0: row 1 keeps its weights and moments though its momentum
    # is nonzero (dense Adam would keep moving it).
    before = weight.detach().clone().numpy()
    moments_before = optimizer.state[weight]["exp_avg"].clone().numpy()
    weight.grad = lucid.tensor([[1.0, 0.0, 0.0], [0.0] * 3, [0.0] * 3, [0.0] * 3])
    optimizer.step()
    after = weight.detach().numpy()
    assert (after[1:] == before[1:]).all()
    assert (optimizer.state[weight]["exp_avg"].numpy()[1:] == moments_before[1:]).all()
    assert after[0, 0] != before[0, 0]
    assert optimizer.state[weight]["step"] == 2

    # Third step touches row 1 through its middle element only: its other elements carry
    # momentum from step one, and move with it as PyTorch moves a looked-up row.
    before = weight.detach().clone().numpy()
    weight.grad = lucid.tensor([[0.0] * 3, [0.0, 1.0, 0.0], [0.0] * 3, [0.0] * 3])
    optimizer.step()
    assert (weight.detach().numpy()[1] != before[1]).all()


def test_step_counts_a_gradient_that_touches_nothing():
    vector = lucid.ones(5, requires_grad=True)
    optimizer = optim.SparseAdam([vector])
    vector.grad = lucid.zeros(5)
    optimizer.step()
    assert optimizer.state[vector]["step"] == 1
    assert (vector.detach().numpy() == 1).all()


@requires_torch
def test_vector_parameter_updates_only_its_nonzero_elements_like_torch():
    values = np.array([0.5, -1.0, 2.0, 0.25, 3.0])
    grads = [np.array([0.0, 1.0, 0.0, -2.0, 0.0]), np.array([4.0, 0.0, 0.0, 1.0, 0.0])]
    lucid_param = lucid.tensor(values, requires_grad=True)
    torch_param = torch.tensor(values, requires_grad=True)
    lucid_optimizer = optim.SparseAdam([lucid_param], lr=0.2)
    torch_optimizer = torch.optim.SparseAdam([torch_param], lr=0.2)
    for grad in grads:
        lucid_param.grad = lucid.tensor(grad)
        torch_param.grad = torch.tensor(grad).to_sparse()
        lucid_optimizer.step()
        torch_optimizer.step()
        np.testing.assert_allclose(lucid_param.detach().numpy(), torch_param.detach().numpy())


def test_zero_dim_parameter_is_one_row():
    scalar = lucid.tensor(1.0, requires_grad=True)
    optimizer = optim.SparseAdam([scalar], lr=0.5)
    scalar.grad = lucid.tensor(0.0)
    optimizer.step()
    assert scalar.item() == 1.0
    scalar.grad = lucid.tensor(2.0)
    optimizer.step()
    # The skipped first call still counts as a step, so bias correction uses step 2.
    exp_avg, exp_avg_sq = 0.1 * 2.0, 0.001 * 2.0**2
    step_size = 0.5 * np.sqrt(1 - 0.999**2) / (1 - 0.9**2)
    expected = 1.0 - step_size * exp_avg / (np.sqrt(exp_avg_sq) + 1e-8)
    np.testing.assert_allclose(scalar.item(), expected, rtol=1e-6)


def test_state_dict_round_trip_continues_the_trajectory(rng):
    initial = rng.standard_normal((6, 2))
    grads = [rng.standard_normal((6, 2)) * (rng.random((6, 1)) < 0.5) for _ in range(4)]

    def run(split: bool) -> np.ndarray:
        param = lucid.tensor(initial, requires_grad=True)
        optimizer = optim.SparseAdam([param], lr=0.1)
        for index, grad in enumerate(grads):
            if split and index == 2:
                saved = optimizer.state_dict()
                optimizer = optim.SparseAdam([param], lr=0.1)
                optimizer.load_state_dict(saved)
            param.grad = lucid.tensor(grad)
            optimizer.step()
        return param.detach().numpy()

    np.testing.assert_array_equal(run(split=False), run(split=True))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lr": -1}, "Invalid learning rate: -1"),
        ({"lr": 0}, "Invalid learning rate: 0"),
        ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
        ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
        ({"betas": (0.9, -1)}, "Invalid beta parameter at index 1: -1"),
    ],
)
def test_errors_match_torch(kwargs, message):
    with pytest.raises(ValueError, match=message):
        optim.SparseAdam([lucid.zeros(2, requires_grad=True)], **kwargs)


@requires_torch
@pytest.mark.parametrize(
    "kwargs", [{"lr": -1}, {"lr": 0}, {"eps": 0.0}, {"betas": (1.0, 0.9)}, {"betas": (0.9, -1)}]
)
def test_error_messages_are_torchs(kwargs):
    with pytest.raises(ValueError) as torch_error:
        torch.optim.SparseAdam([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as lucid_error:
        optim.SparseAdam([lucid.zeros(2, requires_grad=True)], **kwargs)
    assert str(lucid_error.value) == str(torch_error.value)
