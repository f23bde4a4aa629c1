"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode; thread-local and restored."""

from __future__ import annotations

import threading

import pytest

import lucid


def _leaf() -> lucid.Tensor:
    return lucid.tensor([1.0, 2.0], requires_grad=True)


def test_grad_is_enabled_by_default():
    assert lucid.is_grad_enabled() is True
    assert lucid.autograd.is_grad_enabled is lucid.is_grad_enabled


def test_no_grad_stops_recording():
    x = _leaf()
    with lucid.no_grad():
        assert not lucid.is_grad_enabled()
        y = x * 2
    assert lucid.is_grad_enabled()
    assert y.grad_fn is None
    assert not y.requires_grad
    assert y.is_leaf


def test_no_grad_keeps_leaf_requires_grad_flag():
    with lucid.no_grad():
        x = _leaf()
    assert x.requires_grad


def test_no_grad_context_returns_none():
    with lucid.no_grad() as value:
        assert value is None


def test_enable_grad_inside_no_grad_records():
    x = _leaf()
    with lucid.no_grad():
        with lucid.enable_grad():
            assert lucid.is_grad_enabled()
            y = x * 2
        assert not lucid.is_grad_enabled()
    assert y.grad_fn is not None
    assert y.grad_fn.name() == "MulBackward0"


def test_set_grad_enabled_as_function_takes_effect_immediately():
    lucid.set_grad_enabled(False)
    try:
        assert not lucid.is_grad_enabled()
        assert (_leaf() * 2).grad_fn is None
    finally:
        lucid.set_grad_enabled(True)
    assert lucid.is_grad_enabled()


def test_set_grad_enabled_as_context_manager_restores():
    with lucid.set_grad_enabled(False):
        assert not lucid.is_grad_enabled()
        with lucid.set_grad_enabled(True):
            assert lucid.is_grad_enabled()
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()


def test_set_grad_enabled_as_decorator_does_not_change_mode_at_definition():
    @lucid.set_grad_enabled(False)
    def probe():
        return lucid.is_grad_enabled()

    assert lucid.is_grad_enabled()
    assert probe() is False
    assert lucid.is_grad_enabled()


def test_no_grad_decorator_with_parentheses():
    @lucid.no_grad()
    def probe(a, b=1):
        return lucid.is_grad_enabled(), a + b

    assert probe(1, b=2) == (False, 3)
    assert lucid.is_grad_enabled()


def test_no_grad_decorator_without_parentheses():
    @lucid.no_grad
    def probe():
        return lucid.is_grad_enabled()

    assert probe() is False
    assert lucid.is_grad_enabled()


def test_decorator_keeps_function_name_and_doc():
    @lucid.no_grad()
    def documented():
        """Docstring."""

    assert documented.__name__ == "documented"
    assert documented.__doc__ == "Docstring."


def test_enable_grad_decorator_inside_no_grad():
    @lucid.enable_grad()
    def probe():
        return lucid.is_grad_enabled()

    with lucid.no_grad():
        assert probe() is True
        assert not lucid.is_grad_enabled()


def test_decorated_function_is_reentrant():
    @lucid.no_grad()
    def recurse(depth):
        if depth:
            return recurse(depth - 1)
        return lucid.is_grad_enabled()

    assert recurse(3) is False
    assert lucid.is_grad_enabled()


def test_no_grad_restores_after_exception():
    with pytest.raises(ValueError):
        with lucid.no_grad():
            raise ValueError("boom")
    assert lucid.is_grad_enabled()


def test_decorator_restores_after_exception():
    @lucid.no_grad()
    def fail():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        fail()
    assert lucid.is_grad_enabled()


def test_enable_grad_restores_after_exception():
    with lucid.no_grad():
        with pytest.raises(ValueError):
            with lucid.enable_grad():
                raise ValueError("boom")
        assert not lucid.is_grad_enabled()


def test_set_grad_enabled_restores_after_exception():
    with pytest.raises(ValueError):
        with lucid.set_grad_enabled(False):
            raise ValueError("boom")
    assert lucid.is_grad_enabled()


def test_nested_no_grad_restores_outer_state():
    with lucid.no_grad():
        with lucid.no_grad():
            pass
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()


def test_same_no_grad_object_can_be_reused():
    guard = lucid.no_grad()
    with guard:
        assert not lucid.is_grad_enabled()
    with guard:
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()


def test_inference_mode_disables_grad_and_reports_itself():
    x = _leaf()
    assert not lucid.is_inference_mode_enabled()
    with lucid.inference_mode():
        assert lucid.is_inference_mode_enabled()
        assert not lucid.is_grad_enabled()
        y = x * 2
    assert not lucid.is_inference_mode_enabled()
    assert lucid.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad


def test_inference_mode_false_at_top_level_changes_nothing():
    with lucid.inference_mode(False):
        assert not lucid.is_inference_mode_enabled()
        assert lucid.is_grad_enabled()


def test_inference_mode_as_decorator():
    @lucid.inference_mode()
    def probe():
        return lucid.is_inference_mode_enabled(), lucid.is_grad_enabled()

    assert probe() == (True, False)
    assert not lucid.is_inference_mode_enabled()


def test_inference_mode_decorator_without_parentheses():
    @lucid.inference_mode
    def probe():
        return lucid.is_inference_mode_enabled()

    assert probe() is True
    assert not lucid.is_inference_mode_enabled()


def test_inference_mode_restores_after_exception():
    with pytest.raises(ValueError):
        with lucid.inference_mode():
            raise ValueError("boom")
    assert not lucid.is_inference_mode_enabled()
    assert lucid.is_grad_enabled()


def _in_thread(target) -> list:
    results: list = []
    errors: list = []

    def run():
        try:
            results.append(target())
        except BaseException as error:  # surfaced to the test thread below
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results


def test_no_grad_in_main_thread_does_not_affect_another_thread():
    with lucid.no_grad():
        (seen,) = _in_thread(lambda: (lucid.is_grad_enabled(), (_leaf() * 2).grad_fn is not None))
    assert seen == (True, True)


def test_no_grad_in_another_thread_does_not_affect_main_thread():
    entered = threading.Event()
    release = threading.Event()
    seen = []

    def worker():
        with lucid.no_grad():
            seen.append(lucid.is_grad_enabled())
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    try:
        assert lucid.is_grad_enabled()
        assert (_leaf() * 2).grad_fn is not None
    finally:
        release.set()
        thread.join()
    assert seen == [False]


def test_set_grad_enabled_false_in_thread_does_not_leak():
    def worker():
        lucid.set_grad_enabled(False)
        return lucid.is_grad_enabled()

    assert _in_thread(worker) == [False]
    assert lucid.is_grad_enabled()


def test_new_thread_starts_with_grad_enabled_even_under_main_no_grad():
    with lucid.inference_mode():
        (seen,) = _in_thread(lambda: (lucid.is_grad_enabled(), lucid.is_inference_mode_enabled()))
    assert seen == (True, False)


def test_backward_in_a_thread_under_main_no_grad():
    x = _leaf()
    y = (x * x).sum()

    def worker():
        y.backward()
        return x.grad.tolist()

    with lucid.no_grad():
        assert _in_thread(worker) == [[2.0, 4.0]]


# ------------------------------------------------ local_state: one object, one section per concern
def test_each_section_of_local_state_is_per_thread():
    from lucid._core.grad_mode import local_state

    local_state.module_path = ("main",)
    try:
        (seen,) = _in_thread(lambda: (local_state.module_path, local_state.calling_module))
    finally:
        local_state.module_path = ()
    assert seen == ((), None)


def test_set_thread_default_reaches_every_thread_that_kept_the_default():
    from lucid._core.grad_mode import local_state, set_thread_default

    was = local_state.records_forward_sites
    set_thread_default("records_forward_sites", not was)
    try:
        assert _in_thread(lambda: local_state.records_forward_sites) == [not was]
        assert local_state.records_forward_sites is (not was)
    finally:
        set_thread_default("records_forward_sites", was)


def test_set_thread_default_refuses_a_field_no_section_declares():
    from lucid._core.grad_mode import set_thread_default

    with pytest.raises(AttributeError, match="no field 'no_such_field'"):
        set_thread_default("no_such_field", 1)


def test_local_state_reads_walk_no_section_before_threading_local():
    # threading.local's attribute lookup searches the class's bases up to its own type on
    # every read, so the sections come after it and the hot path's reads stay one step.
    from lucid._core.grad_mode import _LocalState

    assert _LocalState.__mro__[1] is threading.local
