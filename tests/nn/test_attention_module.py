"""lucid.nn.attention: SDPBackend has torch's members and values, and sdpa_kernel checks its
argument as torch does and leaves attention's result unchanged."""

from __future__ import annotations

import pytest

import lucid
import lucid.nn.functional as F
from lucid.nn.attention import WARN_FOR_UNFUSED_KERNELS, SDPBackend, sdpa_kernel
from tests.torch_oracle import requires_torch, torch

MEMBERS = {
    "ERROR": -1,
    "MATH": 0,
    "FLASH_ATTENTION": 1,
    "EFFICIENT_ATTENTION": 2,
    "CUDNN_ATTENTION": 3,
    "OVERRIDEABLE": 4,
}


def test_backend_members_and_values() -> None:
    assert {member.name: int(member) for member in SDPBackend} == MEMBERS
    assert SDPBackend.MATH.value == 0
    assert repr(SDPBackend.MATH) == "<SDPBackend.MATH: 0>"
    assert str(SDPBackend.FLASH_ATTENTION) == "SDPBackend.FLASH_ATTENTION"


@requires_torch
def test_backend_matches_torch() -> None:
    theirs = torch.nn.attention.SDPBackend
    assert list(SDPBackend.__members__) == list(theirs.__members__)
    for name in MEMBERS:
        ours, torch_member = getattr(SDPBackend, name), getattr(theirs, name)
        assert int(ours) == int(torch_member)
        assert repr(ours) == repr(torch_member)
        # neither equals its integer
        assert (ours == int(ours)) == (torch_member == int(torch_member))


def test_warn_for_unfused_kernels_is_off() -> None:
    assert WARN_FOR_UNFUSED_KERNELS is False


@pytest.mark.parametrize(
    "backends",
    [SDPBackend.MATH, [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], [], [SDPBackend.ERROR]],
)
@pytest.mark.parametrize("set_priority", [False, True])
def test_sdpa_kernel_leaves_attention_unchanged(backends, set_priority: bool) -> None:
    q, k, v = (lucid.randn(2, 3, 4, 8) for _ in range(3))
    expected = F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel(backends, set_priority=set_priority) as value:
        assert value == {}
        result = F.scaled_dot_product_attention(q, k, v)
    assert lucid.equal(result, expected)


@pytest.mark.parametrize("backends", [(SDPBackend.MATH,), "math", 0, None])
def test_sdpa_kernel_rejects_what_is_neither_a_backend_nor_a_list(backends) -> None:
    message = (
        "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
        f"{type(backends).__name__}"
    )
    with pytest.raises(AssertionError) as caught:
        with sdpa_kernel(backends):
            pass
    assert str(caught.value) == message


@requires_torch
@pytest.mark.parametrize("backends", [(0,), "math", 0, [0], ["flash"]])
def test_sdpa_kernel_accepts_and_rejects_as_torch(backends) -> None:
    def outcome(attention) -> str:
        try:
            with attention.sdpa_kernel(backends):
                pass
        except Exception as error:  # noqa: BLE001 - the outcome itself is what is compared
            return f"{type(error).__name__}: {error}"
        return "ok"

    assert outcome(lucid.nn.attention) == outcome(torch.nn.attention)


def test_sdpa_kernel_works_as_a_decorator() -> None:
    @sdpa_kernel(SDPBackend.MATH)
    def attend(q: lucid.Tensor) -> lucid.Tensor:
        return F.scaled_dot_product_attention(q, q, q)

    q = lucid.randn(1, 2, 3)
    assert lucid.equal(attend(q), F.scaled_dot_product_attention(q, q, q))


def test_attention_is_an_attribute_of_nn() -> None:
    assert lucid.nn.attention.SDPBackend is SDPBackend
