"""Weight averaging matches torch.optim.swa_utils: averaged weights, SWALR's lr sequence,
update_bn's statistics and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.optim import swa_utils
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch


def _models():
    """The same small BatchNorm network in torch and lucid (torch's init, copied over)."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(
        torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5), torch.nn.ReLU(), torch.nn.Linear(5, 2)
    )
    ours = lucid.nn.Sequential(
        lucid.nn.Linear(4, 5), lucid.nn.BatchNorm1d(5), lucid.nn.ReLU(), lucid.nn.Linear(5, 2)
    )
    _copy_into(ours, theirs)
    return ours, theirs


def _copy_into(ours, theirs):
    ours.load_state_dict(
        {key: lucid.tensor(value.numpy().copy()) for key, value in theirs.state_dict().items()}
    )


def _train_steps(ours, theirs, steps):
    """Move both models' weights by the same random amounts and run a training batch through
    both (so the BatchNorm statistics move too); yields after each step."""
    rng = np.random.default_rng(1)
    for _ in range(steps):
        for (_, p_ours), (_, p_theirs) in zip(
            ours.named_parameters(), theirs.named_parameters(), strict=True
        ):
            delta = rng.standard_normal(p_theirs.shape).astype(np.float32)
            with torch.no_grad():
                p_theirs.add_(torch.from_numpy(delta))
            with lucid.no_grad():
                p_ours.add_(lucid.tensor(delta))
        batch = rng.standard_normal((8, 4)).astype(np.float32)
        theirs(torch.from_numpy(batch))
        ours(lucid.tensor(batch))
        yield


def _assert_state_close(ours, theirs, tolerance=1e-6):
    theirs_state = theirs.state_dict()
    ours_state = ours.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key, value in theirs_state.items():
        np.testing.assert_allclose(
            ours_state[key].numpy(), value.numpy(), rtol=tolerance, atol=tolerance, err_msg=key
        )


@pytest.mark.parametrize(
    "averaging",
    ["swa", "swa_fn", "swa_multi_fn", "ema_fn", "ema_multi_fn", "swa_buffers", "ema_buffers"],
)
def test_averaged_model_matches_torch(averaging):
    def arguments(module):
        return {
            "swa": {},
            "swa_fn": {"avg_fn": module.get_swa_avg_fn()},
            "swa_multi_fn": {"multi_avg_fn": module.get_swa_multi_avg_fn()},
            "ema_fn": {"avg_fn": module.get_ema_avg_fn(0.8)},
            "ema_multi_fn": {"multi_avg_fn": module.get_ema_multi_avg_fn(0.8)},
            "swa_buffers": {"use_buffers": True},
            "ema_buffers": {"use_buffers": True, "avg_fn": module.get_ema_avg_fn(0.7)},
        }[averaging]

    ours, theirs = _models()
    ours_average = swa_utils.AveragedModel(ours, **arguments(swa_utils))
    theirs_average = torch.optim.swa_utils.AveragedModel(theirs, **arguments(torch.optim.swa_utils))
    for _ in _train_steps(ours, theirs, 4):
        ours_average.update_parameters(ours)
        theirs_average.update_parameters(theirs)
        _assert_state_close(ours_average, theirs_average)
    assert int(ours_average.n_averaged) == 4
    # The average is a copy: the trained model's weights are not it.
    assert not np.allclose(
        ours_average.module[0].weight.detach().numpy(), ours[0].weight.detach().numpy()
    )
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    ours_average.eval()
    theirs_average.eval()
    np.testing.assert_allclose(
        ours_average(lucid.tensor(x)).detach().numpy(),
        theirs_average(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_averaged_model_with_both_average_functions_raises():
    ours, _ = _models()
    with pytest.raises(AssertionError, match="^Only one of avg_fn and multi_avg_fn should be"):
        swa_utils.AveragedModel(
            ours, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn()
        )


@pytest.mark.parametrize("name", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_outside_zero_one_raises_as_torch(name, decay):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim.swa_utils, name)(decay)
    with pytest.raises(ValueError) as ours:
        getattr(swa_utils, name)(decay)
    assert str(ours.value) == str(theirs.value)


def _optimizers():
    groups = [[0.1, 0.02], [0.5, 0.3]]  # each group's (lr, a second value)
    ours = lucid.optim.SGD(
        [{"params": [lucid.zeros(2, requires_grad=True)], "lr": lr} for lr, _ in groups],
        lr=0.1,
    )
    theirs = torch.optim.SGD(
        [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr, _ in groups],
        lr=0.1,
    )
    return ours, theirs


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4, 10])
@pytest.mark.parametrize("swa_lr", [0.05, [0.05, 0.2]])
def test_swalr_lr_sequence_matches_torch(strategy, anneal_epochs, swa_lr):
    ours_optimizer, theirs_optimizer = _optimizers()
    ours = swa_utils.SWALR(ours_optimizer, swa_lr, anneal_epochs, strategy)
    theirs = torch.optim.swa_utils.SWALR(theirs_optimizer, swa_lr, anneal_epochs, strategy)
    sequence_ours, sequence_theirs = [], []
    for _ in range(15):
        sequence_ours.append(ours.get_last_lr())
        sequence_theirs.append(theirs.get_last_lr())
        ours_optimizer.step()
        theirs_optimizer.step()
        ours.step()
        theirs.step()
    np.testing.assert_allclose(sequence_ours, sequence_theirs, rtol=1e-15, atol=0)
    # The schedule moves from the start lr to swa_lr, which it then holds.
    swa_lrs = swa_lr if isinstance(swa_lr, list) else [swa_lr, swa_lr]
    np.testing.assert_allclose(sequence_ours[-1], swa_lrs, rtol=1e-12)
    # With no annealing epochs it starts there; otherwise it starts from the groups' lrs.
    if anneal_epochs == 0:
        np.testing.assert_allclose(sequence_ours[0], swa_lrs, rtol=1e-12)
    else:
        assert sequence_ours[0] != sequence_ours[-1]


def test_swalr_state_dict_resumes_the_schedule():
    optimizer, _ = _optimizers()
    scheduler = swa_utils.SWALR(optimizer, 0.05, anneal_epochs=6, anneal_strategy="linear")
    for _ in range(3):
        scheduler.step()
    state = scheduler.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    resumed_optimizer, _ = _optimizers()
    resumed_optimizer.load_state_dict(optimizer.state_dict())
    resumed = swa_utils.SWALR(resumed_optimizer, 0.05, anneal_strategy="cos")
    resumed.load_state_dict(state)
    assert resumed.anneal_func is swa_utils.SWALR._linear_anneal
    for _ in range(4):
        scheduler.step()
        resumed.step()
        assert resumed.get_last_lr() == scheduler.get_last_lr()


@pytest.mark.parametrize(
    "arguments",
    [
        {"swa_lr": 0.05, "anneal_strategy": "exp"},
        {"swa_lr": 0.05, "anneal_epochs": -1},
        {"swa_lr": 0.05, "anneal_epochs": 2.0},
        {"swa_lr": [0.05, 0.1, 0.2]},
    ],
)
def test_swalr_errors_match_torch(arguments):
    ours_optimizer, theirs_optimizer = _optimizers()
    with pytest.raises(ValueError) as theirs:
        torch.optim.swa_utils.SWALR(theirs_optimizer, **arguments)
    with pytest.raises(ValueError) as ours:
        swa_utils.SWALR(ours_optimizer, **arguments)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("batches_as", ["tensors", "tuples"])
def test_update_bn_recomputes_the_statistics_as_torch(batches_as):
    ours, theirs = _models()
    for _ in _train_steps(ours, theirs, 2):
        pass
    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((6, 4)).astype(np.float32) * 3 + 1 for _ in range(4)]
    if batches_as == "tensors":
        ours_loader = [lucid.tensor(b) for b in batches]
        theirs_loader = [torch.from_numpy(b) for b in batches]
    else:
        ours_loader = [(lucid.tensor(b), 0) for b in batches]
        theirs_loader = [(torch.from_numpy(b), 0) for b in batches]
    ours.eval()
    theirs.eval()
    before = ours[1].running_mean.numpy().copy()
    swa_utils.update_bn(ours_loader, ours)
    torch.optim.swa_utils.update_bn(theirs_loader, theirs)
    _assert_state_close(ours, theirs)
    assert not np.allclose(ours[1].running_mean.numpy(), before)
    assert ours[1].momentum == theirs[1].momentum == 0.1
    assert not ours.training


def test_update_bn_on_an_averaged_model_matches_torch():
    ours, theirs = _models()
    ours_average = swa_utils.AveragedModel(ours)
    theirs_average = torch.optim.swa_utils.AveragedModel(theirs)
    for _ in _train_steps(ours, theirs, 3):
        ours_average.update_parameters(ours)
        theirs_average.update_parameters(theirs)
    batches = [np.random.default_rng(4).standard_normal((5, 4)).astype(np.float32)] * 2
    swa_utils.update_bn([lucid.tensor(b) for b in batches], ours_average)
    torch.optim.swa_utils.update_bn([torch.from_numpy(b) for b in batches], theirs_average)
    _assert_state_close(ours_average, theirs_average)


def test_update_bn_without_batch_norm_leaves_the_model_alone():
    model = lucid.nn.Linear(3, 2)
    model.eval()
    swa_utils.update_bn([lucid.ones(2, 3)], model)
    assert not model.training


def test_swa_utils_is_an_attribute_of_lucid_optim():
    assert lucid.optim.swa_utils is swa_utils
    assert set(swa_utils.__all__) == set(torch.optim.swa_utils.__all__)
