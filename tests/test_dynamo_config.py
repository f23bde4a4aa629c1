"""lucid._dynamo and lucid._inductor: torch's config modules as a table of options, the
torch._dynamo helpers training scripts call, and lucid.compile's reading of them.

The option tables (lucid/_dynamo/_config_defaults.py, lucid/_inductor/_config_defaults.py) are
data generated from the installed torch; `python -m tests.test_dynamo_config` writes them again,
and the parity tests here check them against torch.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading
import unittest.mock
import warnings
from pathlib import Path
from typing import Any

import pytest

import lucid
from tests.compat import harness
from tests.torch_oracle import requires_torch

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = [("torch._dynamo.config", "lucid._dynamo.config")]
CONFIGS += [("torch._inductor.config", "lucid._inductor.config")]


# ------------------------------------------------------------------- the tables, from torch
def _torch_table(module_name: str) -> dict[str, dict[str, Any]]:
    """torch's options of a config module: defaults (aliases left out), aliases within the
    module, options it keeps in another module (as aliases), and deprecation reasons."""
    config = importlib.import_module(module_name)
    table: dict[str, dict[str, Any]] = {
        "DEFAULTS": {},
        "ALIASES": {},
        "UNLISTED": {},
        "DEPRECATED": {},
    }
    for name, entry in config._config.items():
        if entry.deprecated:
            table["DEPRECATED"][name] = entry.deprecation_message
        if entry.alias is None:
            table["DEFAULTS"][name] = entry.default
            continue
        target_module, target = entry.alias.rsplit(".", 1)
        if target_module == module_name:
            table["ALIASES"][name] = target
        else:
            table["UNLISTED"][name] = getattr(importlib.import_module(target_module), target)
    return table


def _literal(value: Any) -> str:
    """Python source for a config value; sets sorted, so the file is the same on every run."""
    if isinstance(value, set):
        return "{" + ", ".join(sorted(_literal(v) for v in value)) + "}" if value else "set()"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    raise TypeError(f"not a config value: {value!r}")


# Defaults torch computes from the machine at import (its install path, the working directory,
# the CPU count): None in the tables; each lucid config module computes them the same way.
MACHINE_DEPENDENT = {
    "torch._dynamo.config": {"base_dir", "debug_dir_root"},
    "torch._inductor.config": {
        "compile_threads",
        "cutlass.cutlass_dir",
        "cuda.cutlass_dir",
        "xpu.cutlass_dir",
    },
}

_HEADER = '''"""The options of torch {version}'s `{torch_name}` and their defaults, as data.

`{lucid_name}` is built on these tables. Generated from the installed torch by
`python -m tests.test_dynamo_config` and checked against it by tests/test_dynamo_config.py:
regenerate rather than edit. The defaults are a Linux CPU build's, with no TORCH* environment
variables set; those torch computes from the machine (paths, the CPU count) are None here, and
`{lucid_name}` computes them.
"""

'''
_COMMENTS = {
    "DEFAULTS": (
        "# Every option and its default, in torch's order; a sub-config's options carry its\n"
        "# prefix (triton.cudagraphs)."
    ),
    "ALIASES": "# Old names that read and write the option they name.",
    "UNLISTED": (
        "# Options torch keeps in another module, reached here by an alias of the same name:\n"
        "# settable like the others, left out of get_config_copy()."
    ),
    "DEPRECATED": "# Options torch warns about (FutureWarning, once), with its reason.",
}


def _write_tables() -> None:
    import torch

    for torch_name, lucid_name in CONFIGS:
        table = _torch_table(torch_name)
        for name in MACHINE_DEPENDENT[torch_name]:
            table["DEFAULTS"][name] = None
        version = torch.__version__.split("+")[0]
        lines = [_HEADER.format(version=version, torch_name=torch_name, lucid_name=lucid_name)]
        for title, entries in table.items():
            lines.append(_COMMENTS[title])
            lines.append(f"{title} = {{")
            lines += [f"    {name!r}: {_literal(value)}," for name, value in entries.items()]
            lines.append("}\n")
        package = lucid_name.rpartition(".")[0].replace(".", "/")
        path = ROOT / package / "_config_defaults.py"
        path.write_text("\n".join(lines))
        subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(path)], check=True)
        # An option name too long for a line stays whole, as torch spells it.
        lines = path.read_text().splitlines()
        lines = [line if len(line) <= 100 else f"{line}  # noqa: E501" for line in lines]
        path.write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------ fixtures
def _config(path: str) -> Any:
    return importlib.import_module(path)


@pytest.fixture
def dynamo_config() -> Any:
    """lucid._dynamo.config, with every option put back after the test."""
    yield from _restored(["lucid._dynamo.config"])


@pytest.fixture
def inductor_config() -> Any:
    yield from _restored(["lucid._inductor.config"])


def _restored(paths: list[str]) -> Any:
    configs = [_config(path) for path in paths]
    saved = [config.get_config_copy() for config in configs]
    try:
        yield configs[0]
    finally:
        for config, values in zip(configs, saved):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # setting a deprecated option warns, as in torch
                config.load_config(values)


def _torch_names(value: str) -> str:
    return value.replace("lucid.", "torch.")


# ---------------------------------------------------------------- the tables are torch's
@requires_torch
@pytest.mark.parametrize(("torch_name", "lucid_name"), CONFIGS)
def test_the_option_tables_are_torchs_own(torch_name, lucid_name):
    expected = _torch_table(torch_name)
    for name in MACHINE_DEPENDENT[torch_name]:
        expected["DEFAULTS"][name] = None
    data = importlib.import_module(lucid_name.rpartition(".")[0] + "._config_defaults")
    for title, entries in expected.items():
        assert list(getattr(data, title).items()) == list(entries.items()), title


@requires_torch
@pytest.mark.parametrize(("torch_name", "lucid_name"), CONFIGS)
def test_every_option_reads_as_torchs_default(torch_name, lucid_name):
    ours, theirs = _config(lucid_name).get_config_copy(), _torch_table(torch_name)["DEFAULTS"]
    assert list(ours) == list(theirs)
    # torch's install path and lucid's differ; the working directory may have changed since
    # either module was imported
    paths = {"base_dir", "debug_dir_root", "cutlass.cutlass_dir", "cuda.cutlass_dir"}
    paths.add("xpu.cutlass_dir")
    differing = [name for name in ours if name not in paths and ours[name] != theirs[name]]
    assert differing == []


def test_machine_dependent_defaults_are_computed_as_torch_computes_them():
    dynamo, inductor = _config("lucid._dynamo.config"), _config("lucid._inductor.config")
    assert dynamo.base_dir == str(ROOT)  # the folder holding the package, as torch's is
    assert dynamo.debug_dir_root.endswith("torch_compile_debug")
    assert inductor.cutlass.cutlass_dir == str(ROOT / "third_party" / "cutlass")
    assert 1 <= inductor.compile_threads <= 32


@requires_torch
@pytest.mark.parametrize(("torch_name", "lucid_name"), CONFIGS)
def test_the_subconfigs_are_torchs(torch_name, lucid_name):
    from torch.utils._config_module import SubConfigProxy

    theirs = {name for name, value in vars(_config(torch_name)).items()
              if isinstance(value, SubConfigProxy)}  # fmt: skip
    ours = {name for name, value in vars(_config(lucid_name)).items()
            if type(value).__name__ == "SubConfigProxy"}  # fmt: skip
    assert ours == theirs


# ------------------------------------------------------------------- setting and reading
def test_setting_a_known_option_is_quiet_and_reads_back(dynamo_config, inductor_config):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dynamo_config.suppress_errors = True
        dynamo_config.optimize_ddp = False
        inductor_config.coordinate_descent_tuning = True
        inductor_config.fallback_random = True
        inductor_config.triton.cudagraphs = True
    assert dynamo_config.suppress_errors is True
    assert inductor_config.triton.cudagraphs is True
    assert inductor_config.get_config_copy()["triton.cudagraphs"] is True


UNKNOWN_OPTION_CASES = [(*names, action) for names in CONFIGS for action in ("set", "get")]
UNKNOWN_OPTION_CASES += [(*CONFIGS[1], "sub-config set")]


@requires_torch
@pytest.mark.parametrize(("torch_name", "lucid_name", "action"), UNKNOWN_OPTION_CASES)
def test_an_unknown_option_raises_what_torch_raises(torch_name, lucid_name, action):
    def attempt(config: Any) -> BaseException:
        with pytest.raises(Exception) as caught:
            if action == "set":
                config.no_such_option = 1
            elif action == "get":
                config.no_such_option
            else:
                config.trace.no_such_option = 1
        return caught.value

    expected, actual = attempt(_config(torch_name)), attempt(_config(lucid_name))
    assert type(actual) is type(expected) is AttributeError
    assert _torch_names(str(actual)) == str(expected)


def test_an_alias_reads_and_writes_the_option_it_names(dynamo_config):
    dynamo_config.cache_size_limit = 64
    assert dynamo_config.recompile_limit == 64
    dynamo_config.recompile_limit = 16
    assert dynamo_config.cache_size_limit == 16
    assert "cache_size_limit" not in dynamo_config.get_config_copy()


def test_a_deprecated_option_warns_once_with_torchs_words(dynamo_config):
    name = "inline_inbuilt_nn_modules"
    dynamo_config._deprecation_warned.discard(name)
    with pytest.warns(FutureWarning, match=f"{name} is deprecated and does not do anything"):
        assert dynamo_config.inline_inbuilt_nn_modules is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dynamo_config.inline_inbuilt_nn_modules = True


def test_a_list_or_set_default_changed_in_place_stays_changed_but_the_table_does_not(
    dynamo_config,
):
    dynamo_config.traceable_tensor_subclasses.add(int)
    assert dynamo_config.traceable_tensor_subclasses == {int}
    assert dynamo_config._defaults["traceable_tensor_subclasses"] == set()


def test_values_set_are_per_thread_as_torchs_are(dynamo_config):
    dynamo_config.suppress_errors = True
    seen = []

    def other_thread() -> None:
        seen.append(dynamo_config.suppress_errors)
        dynamo_config.verbose = True

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen == [False]
    assert dynamo_config.verbose is False


def test_patch_is_a_context_manager_and_a_decorator_that_restores(dynamo_config):
    with dynamo_config.patch(suppress_errors=True, cache_size_limit=4):
        assert dynamo_config.suppress_errors is True and dynamo_config.recompile_limit == 4
    assert dynamo_config.suppress_errors is False and dynamo_config.recompile_limit == 8

    @dynamo_config.patch("verbose", True)
    def read() -> bool:
        return dynamo_config.verbose

    assert read() is True and dynamo_config.verbose is False
    with dynamo_config.patch({"verbose": True}), pytest.raises(ZeroDivisionError):
        1 / 0
    assert dynamo_config.verbose is False


def test_patch_with_an_unknown_name_changes_nothing(dynamo_config):
    with pytest.raises(AttributeError, match="no_such_option does not exist"):
        with dynamo_config.patch(verbose=True, no_such_option=1):
            pass
    assert dynamo_config.verbose is False
    with pytest.raises(AssertionError, match="cannot pass both positional and keyword"):
        dynamo_config.patch({"verbose": True}, suppress_errors=True)


def test_mock_patch_object_works_on_an_option(dynamo_config):
    with unittest.mock.patch.object(dynamo_config, "verbose", True):
        assert dynamo_config.verbose is True
    assert dynamo_config.verbose is False


def test_load_config_restores_a_copy_and_warns_on_a_name_it_does_not_know(inductor_config):
    saved = inductor_config.get_config_copy()
    inductor_config.max_autotune = True
    inductor_config.load_config(saved)
    assert inductor_config.max_autotune is False
    with pytest.warns(UserWarning, match="key no_such_option with value 1 is not understood"):
        inductor_config.load_config({"no_such_option": 1})


def test_the_config_modules_are_modules_reached_as_torchs_are():
    code = (
        "import sys, time\n"
        "import lucid\n"
        "assert 'lucid._dynamo' not in sys.modules and 'lucid._inductor' not in sys.modules\n"
        "assert lucid._dynamo.config.recompile_limit == 8\n"
        "assert lucid._inductor.config.triton.cudagraphs is False\n"
        "import types; assert isinstance(lucid._dynamo.config, types.ModuleType)\n"
        "import lucid._inductor.config as config; assert config is lucid._inductor.config\n"
        "assert 'torch' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------- the torch._dynamo names
def test_reset_and_graph_break_do_nothing_and_is_compiling_is_false():
    assert lucid._dynamo.reset() is None
    assert lucid._dynamo.graph_break() is None
    assert lucid._dynamo.is_compiling() is False


def test_disable_returns_the_function_in_each_decorator_form():
    def step(x):
        return x + 1

    assert lucid._dynamo.disable(step) is step
    assert lucid._dynamo.disable(recursive=False)(step) is step
    assert lucid._dynamo.disable(reason="logging")(step) is step
    with pytest.raises(AssertionError, match="fn must be callable"):
        lucid._dynamo.disable(3)


def test_allow_in_graph_returns_what_it_is_given():
    assert lucid._dynamo.allow_in_graph(lucid.add) is lucid.add
    assert lucid._dynamo.allow_in_graph((lucid.add, lucid.mul)) == [lucid.add, lucid.mul]
    with pytest.raises(AssertionError, match="allow_in_graph expects a callable"):
        lucid._dynamo.allow_in_graph(3)


@requires_torch
def test_mark_helpers_check_their_arguments_as_torch_does():
    import torch
    import torch._dynamo

    for framework in (torch, lucid):
        x = framework.zeros(2, 3)
        framework._dynamo.mark_dynamic(x, 0, min=2, max=8)
        framework._dynamo.mark_dynamic(x, [0, 1])
        framework._dynamo.maybe_mark_dynamic(x, 1)
        framework._dynamo.mark_static(x)
        framework._dynamo.mark_static_address(x)
    for name in ("mark_dynamic", "maybe_mark_dynamic"):
        with pytest.raises(AssertionError) as expected:
            getattr(torch._dynamo, name)(torch.zeros(2), "0")
        with pytest.raises(AssertionError) as actual:
            getattr(lucid._dynamo, name)(lucid.zeros(2), "0")
        assert str(actual.value) == str(expected.value)
    with pytest.raises(TypeError, match="mark_static_address expects a tensor but received"):
        lucid._dynamo.mark_static_address([1.0])


# ---------------------------------------------------------------------------- lucid.compile
def test_compile_returns_the_model_itself_when_eager_is_what_was_asked_for(dynamo_config):
    model = lucid.nn.Linear(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lucid.compile(model, disable=True) is model
        dynamo_config.disable = True
        assert lucid.compile(model) is model
    dynamo_config.disable = False
    assert lucid.compile(model)._orig_mod is model


def test_compile_decorator_form_keeps_its_arguments():
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @lucid.compile(disable=True)
        def step(x):
            return x * 2

    assert step(lucid.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        lucid.compile(mode="fast")(step)


def _compile_error(framework: Any, **kwargs: Any) -> BaseException | None:
    model = framework.nn.Linear(2, 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            framework.compile(model, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return error
    return None


@requires_torch
@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "fast"},
        {"mode": "max-autotune", "options": {}},
        {"options": {"no_such_option": 1}},
        {"options": {"triton-cudagraphs": True}},
        {"options": {"max-autotune": True, "triton.cudagraphs": False}},
        {"options": {"guard_filter_fn": None}},
        {"mode": "reduce-overhead"},
        {"mode": "lite", "dynamic": True},
        {"backend": "eager", "options": {"no_such_option": 1}},
    ],
    ids=repr,
)
def test_compile_checks_mode_and_options_as_torch_does(kwargs):
    import torch

    expected = _compile_error(torch, **kwargs)
    actual = _compile_error(lucid, **kwargs)
    assert type(actual) is type(expected)
    assert str(actual) == str(expected)


@requires_torch
def test_list_mode_options_and_list_options_are_torchs():
    import torch._inductor

    assert lucid._inductor.list_mode_options() == torch._inductor.list_mode_options()
    assert lucid._inductor.list_options() == torch._inductor.list_options()
    lucid._inductor.cudagraph_mark_step_begin()


# ------------------------------------------------------------- a script with torch = lucid
@pytest.fixture
def both_configs_restored():
    """The script sets options in both frameworks; put every option back afterwards."""
    paths = ["torch._dynamo.config", "torch._inductor.config"]
    paths += ["lucid._dynamo.config", "lucid._inductor.config"]
    configs = [_config(path) for path in paths]
    saved = [config.get_config_copy() for config in configs]
    yield
    for config, values in zip(configs, saved):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # setting a deprecated option warns
            config.load_config(values)


@requires_torch
def test_a_script_that_sets_compile_options_trains_as_in_torch(rng, both_configs_restored):
    data = {"x": rng.standard_normal((16, 8)), "y": rng.integers(0, 4, 16)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lucid.compile's notice, torch's deprecation notices
        losses = harness.compare("compiled_mlp", data, steps=3)
    assert losses[-1] < losses[0]
    assert lucid._dynamo.config.suppress_errors is True
    assert lucid._inductor.config.coordinate_descent_tuning is True


if __name__ == "__main__":
    _write_tables()


@requires_torch
@pytest.mark.parametrize("exclude_tags", [("debug", "experimental"), ()])
def test_list_backends_names_torchs_backends(exclude_tags):
    import torch._dynamo

    assert lucid._dynamo.list_backends(exclude_tags) == torch._dynamo.list_backends(exclude_tags)


@requires_torch
def test_compile_refuses_an_unknown_backend_with_torchs_message():
    import torch

    with pytest.raises(RuntimeError) as expected:
        torch.compile(torch.nn.Linear(2, 2), backend="nonexistent")
    with pytest.raises(RuntimeError) as got:
        lucid.compile(lucid.nn.Linear(2, 2), backend="nonexistent")
    assert str(got.value) == str(expected.value).replace("torch.", "lucid.")
    for backend in ("eager", "aot_eager", "inductor"):
        model = lucid.nn.Linear(2, 2)
        assert lucid.compile(model, backend=backend)._orig_mod is model
    # a backend lucid has no counterpart of (torch's take an FX graph lucid does not make)
    for backend in ("cudagraphs", lambda gm, inputs: gm):
        with pytest.raises(RuntimeError, match="is not available in lucid"):
            lucid.compile(lucid.nn.Linear(2, 2), backend=backend)
