"""Complex parameters against PyTorch: optimizers step each one through its real view (real and
imaginary parts as independent reals, with their own moments), gradient clipping measures |g|,
and the optimizers PyTorch refuses complex parameters to refuse them with its errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.optim as optim
from tests.optim.optimizer_catalogue import ROWS
from tests.torch_oracle import requires_torch, torch

pytestmark = requires_torch

STEPS = 5
# Optimizers with their own tests below: LBFGS needs a closure, Adafactor and Muon refuse.
_OWN_TESTS = ("LBFGS", "Adafactor", "Muon")
CONFIGS = [
    pytest.param(row.name, config, max(row.steps, STEPS), id=f"{row.name}-{index}")
    for row in ROWS
    if row.name not in _OWN_TESTS
    for index, config in enumerate(row.configs)
]
DTYPES = ["complex128", "complex64"]


def _tolerance(dtype: str) -> dict[str, float]:
    if dtype == "complex128":
        return {"rtol": 1e-12, "atol": 1e-12}
    return {"rtol": 1e-5, "atol": 1e-6}


def _complex(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _real_dtype(dtype: str) -> str:
    return "float64" if dtype == "complex128" else "float32"


def _assert_states_match(lucid_opt, torch_opt, lucid_params, torch_params, dtype):
    for ours, theirs in zip(lucid_params, torch_params, strict=True):
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), **_tolerance(dtype)
        )
        our_state, their_state = lucid_opt.state[ours], torch_opt.state[theirs]
        assert set(our_state) == set(their_state)
        for key, value in their_state.items():
            if isinstance(value, torch.Tensor):
                assert our_state[key].dtype.name == str(value.dtype).removeprefix("torch.")
                np.testing.assert_allclose(
                    our_state[key].numpy(), value.numpy(), **_tolerance(dtype), err_msg=key
                )
            else:
                assert our_state[key] == value, key


def _run_pair(name, config, steps, dtype, rng, *, foreach=False):
    """Step lucid's and torch's optimizer on the same complex weight and real bias with the
    same gradients, comparing parameters and state after every step."""
    weight = _complex(rng, (3, 4), dtype)
    bias = rng.standard_normal(3).astype(_real_dtype(dtype))
    lucid_params = [
        lucid.tensor(weight, requires_grad=True),
        lucid.tensor(bias, requires_grad=True),
    ]
    torch_params = [
        torch.tensor(weight, requires_grad=True),
        torch.tensor(bias, requires_grad=True),
    ]
    lucid_opt = getattr(optim, name)(lucid_params, **config, foreach=foreach)
    torch_opt = getattr(torch.optim, name)(torch_params, **config, foreach=foreach)
    for _ in range(steps):
        gradients = [_complex(rng, (3, 4), dtype), rng.standard_normal(3).astype(bias.dtype)]
        for ours, theirs, gradient in zip(lucid_params, torch_params, gradients, strict=True):
            ours.grad = lucid.tensor(gradient)
            theirs.grad = torch.tensor(gradient)
        lucid_opt.step()
        torch_opt.step()
        _assert_states_match(lucid_opt, torch_opt, lucid_params, torch_params, dtype)
    return lucid_opt, lucid_params


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "config", "steps"), CONFIGS)
def test_complex_parameter_steps_as_torch_with_state_per_part(name, config, steps, dtype, rng):
    _run_pair(name, config, steps, dtype, rng)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam"])
def test_complex_parameter_matches_torch_foreach_path(name, rng):
    # lucid has one implementation; torch's multi-tensor path views complex tensors as real too
    config = {"lr": 0.05, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.05}
    _run_pair(name, config, STEPS, "complex128", rng, foreach=True)


def test_complex_state_is_complex_and_shares_the_real_views_memory(rng):
    opt, (weight, _) = _run_pair("Adam", {"lr": 0.1, "amsgrad": True}, 2, "complex64", rng)
    state = opt.state[weight]
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        assert state[key].dtype == lucid.complex64
    # the second moment is per part: real and imaginary parts differ, both non-negative
    parts = lucid.view_as_real(state["exp_avg_sq"]).numpy()
    assert (parts >= 0).all() and not np.allclose(parts[..., 0], parts[..., 1])


def test_adagrad_and_rprop_start_both_parts_at_the_initial_value():
    weight = lucid.zeros(2, dtype=lucid.complex128, requires_grad=True)
    adagrad = optim.Adagrad([weight], initial_accumulator_value=0.5)
    assert adagrad.state[weight]["sum"].tolist() == [0.5 + 0.5j, 0.5 + 0.5j]
    rprop = optim.Rprop([weight], lr=0.2)
    weight.grad = lucid.tensor([1 + 1j, -1 - 1j], dtype=lucid.complex128)
    rprop.step()
    assert rprop.state[weight]["step_size"].tolist() == [0.2 + 0.2j, 0.2 + 0.2j]


def test_state_dict_round_trip_continues_the_complex_trajectory(rng):
    weight = _complex(rng, (3, 4), "complex128")
    gradients = [_complex(rng, (3, 4), "complex128") for _ in range(4)]
    uninterrupted = lucid.tensor(weight, requires_grad=True)
    reference = optim.Adam([uninterrupted], lr=0.1, amsgrad=True)
    resumed = lucid.tensor(weight, requires_grad=True)
    first = optim.Adam([resumed], lr=0.1, amsgrad=True)
    for index, gradient in enumerate(gradients):
        if index == 2:
            second = optim.Adam([resumed], lr=0.1, amsgrad=True)
            second.load_state_dict(first.state_dict())
            first = second
            assert first.state[resumed]["exp_avg"].dtype == lucid.complex128
        uninterrupted.grad = lucid.tensor(gradient)
        resumed.grad = lucid.tensor(gradient)
        reference.step()
        first.step()
    np.testing.assert_array_equal(resumed.detach().numpy(), uninterrupted.detach().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_flattens_complex_parameters_as_real_pairs(line_search_fn, dtype, rng):
    weight = _complex(rng, (4,), dtype)
    bias = rng.standard_normal(3).astype(_real_dtype(dtype))
    center = _complex(rng, (4,), dtype)
    results = []
    for library in (lucid, torch):
        params = [
            library.tensor(weight, requires_grad=True),
            library.tensor(bias, requires_grad=True),
        ]
        opt = library.optim.LBFGS(params, lr=0.5, max_iter=3, line_search_fn=line_search_fn)

        def closure(library=library, params=params, opt=opt):
            opt.zero_grad()
            parts = library.view_as_real(params[0] - library.tensor(center))
            value = (parts**2).sum() + (parts**4).sum() * 0.1 + (params[1] ** 4).sum()
            value.backward()
            return value

        for _ in range(2):
            opt.step(closure)
        results.append([param.detach().numpy() for param in params])
        assert opt._numel() == 11
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, **_tolerance(dtype))
    assert not np.allclose(results[0][0], center)  # still on its way, not at the optimum


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_adafactor_and_muon_refuse_complex_parameters_before_any_step(name):
    messages = []
    for library in (lucid, torch):
        real = library.ones(2, 2, requires_grad=True)
        complex_param = library.ones(2, 2, dtype=library.complex64, requires_grad=True)
        opt = getattr(library.optim, name)([real, complex_param])
        real.grad = library.ones(2, 2)
        complex_param.grad = library.ones(2, 2, dtype=library.complex64)
        with pytest.raises(RuntimeError) as error:
            opt.step()
        messages.append(str(error.value))
        assert real.detach().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert messages[0] == messages[1] == f"{name} does not support complex parameters"


def test_complex_parameter_without_grad_does_not_stop_adafactor():
    real = lucid.ones(2, 2, requires_grad=True)
    complex_param = lucid.ones(2, dtype=lucid.complex64, requires_grad=True)
    opt = optim.Adafactor([real, complex_param])
    real.grad = lucid.ones(2, 2)
    opt.step()
    assert real.detach().tolist() != [[1.0, 1.0], [1.0, 1.0]]


def test_sparse_adam_refuses_complex_parameters_with_their_indices():
    messages = []
    for library in (lucid, torch):
        groups = [
            {"params": [library.zeros(2, requires_grad=True)]},
            {"params": [library.zeros(2, requires_grad=True),
                        library.zeros(2, dtype=library.complex128, requires_grad=True)]},
        ]  # fmt: skip
        with pytest.raises(ValueError) as error:
            library.optim.SparseAdam(groups)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("Complex params at indices [[1, 1]]")


@pytest.mark.filterwarnings("ignore:Complex modules are a new feature")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("average", ["ema", "swa"])
def test_averaged_model_of_complex_parameters_matches_torch(average, dtype, rng):
    weight = _complex(rng, (3, 2), dtype)
    results = []
    for library in (lucid, torch):
        model = library.nn.Linear(2, 3, bias=False)
        model.weight = library.nn.Parameter(library.tensor(weight))
        swa_utils = library.optim.swa_utils
        if average == "ema":
            multi_avg_fn = swa_utils.get_ema_multi_avg_fn(0.7)
        else:
            multi_avg_fn = swa_utils.get_swa_multi_avg_fn()
        averaged = swa_utils.AveragedModel(model, multi_avg_fn=multi_avg_fn)
        for _ in range(4):
            with library.no_grad():
                model.weight.mul_(1.3).add_(0.1)
            averaged.update_parameters(model)
        results.append(averaged.module.weight.detach().numpy())
    assert results[0].dtype == results[1].dtype
    np.testing.assert_allclose(results[0], results[1], **_tolerance(dtype))


# ------------------------------------------------------------------------ gradient clipping
def _params_with_grads(library, gradients):
    params = []
    for gradient in gradients:
        param = library.zeros(gradient.shape, dtype=getattr(library, str(gradient.dtype)))
        param.requires_grad_(True)
        param.grad = library.tensor(gradient)
        params.append(param)
    return params


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), float("-inf"), 0.0])
def test_clip_grad_norm_measures_complex_gradients_by_their_magnitude(norm_type, dtype, rng):
    gradients = [_complex(rng, (5, 7), dtype), rng.standard_normal(4).astype(_real_dtype(dtype))]
    ours = _params_with_grads(lucid, gradients)
    theirs = _params_with_grads(torch, gradients)
    our_norm = lucid.nn.utils.clip_grad_norm_(ours, 0.5, norm_type=norm_type)
    their_norm = torch.nn.utils.clip_grad_norm_(theirs, 0.5, norm_type=norm_type)
    assert our_norm.dtype.name == str(their_norm.dtype).removeprefix("torch.")
    np.testing.assert_allclose(our_norm.numpy(), their_norm.numpy(), **_tolerance(dtype))
    for param, reference in zip(ours, theirs, strict=True):
        assert param.grad.dtype == param.dtype
        np.testing.assert_allclose(param.grad.numpy(), reference.grad.numpy(), **_tolerance(dtype))


def test_get_total_norm_of_a_complex_gradient_is_the_norm_of_its_magnitudes():
    gradient = lucid.tensor([3 + 4j, 0j, -6 - 8j], dtype=lucid.complex64)
    total = lucid.nn.utils.get_total_norm([gradient])
    assert total.dtype == lucid.float32 and total.item() == pytest.approx(125**0.5)
    assert lucid.nn.utils.get_total_norm([gradient], float("inf")).item() == 10.0


def test_clip_grad_value_refuses_complex_gradients_as_torch():
    for library in (lucid, torch):
        params = _params_with_grads(library, [np.array([1 + 1j], dtype=np.complex64)])
        with pytest.raises(NotImplementedError, match="^clamp is not supported for complex types$"):
            library.nn.utils.clip_grad_value_(params, 0.5)
