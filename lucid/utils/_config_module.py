"""Settings modules in the style of torch's `torch._dynamo.config` and `torch._inductor.config`:
a module whose attributes are a fixed table of options.

Reading or writing a name outside the table raises AttributeError, as torch's config modules
do. Values set are per thread (a context variable), as torch's user overrides are; `patch`
changes some for a `with` block or a decorated call. Environment variables are not read: every
option starts at the default the table gives it.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType, ModuleType
from typing import Any

# Defaults of these types are handed out as they are; others (lists, sets, dicts) are copied
# first, so changing a value in place changes the setting, never the table.
_IMMUTABLE = (int, float, bool, type(None), str, tuple)


class ConfigModule(ModuleType):
    """A config module: options as attributes, plus `patch`, `get_config_copy`, `load_config`.

    Only `install_config_module` makes one (it turns an imported module into one).
    """

    # The table: every option's default, in torch's order. Options of a sub-config
    # (`triton.cudagraphs`) are named with their dotted prefix.
    _defaults: dict[str, Any]
    _aliases: dict[str, str]  # an alias reads and writes the option it names
    _unlisted: frozenset[str]  # options get_config_copy leaves out (torch keeps them elsewhere)
    _deprecated: dict[str, str | None]  # option -> why, said once in a FutureWarning
    _deprecation_warned: set[str]
    _hidden: set[str]  # deleted options (unittest.mock.patch deletes, then sets again)
    _overrides: ContextVar[Mapping[str, Any]]  # copied on every write, never changed

    def __getattr__(self, name: str) -> Any:
        # Called only for names the module's own namespace lacks, that is for options.
        return self._value(self._option(name))

    def _value(self, option: str) -> Any:
        overrides = self._overrides.get()
        if option in overrides:
            return overrides[option]
        default = self._defaults[option]
        if isinstance(default, _IMMUTABLE):
            return default
        value = copy.deepcopy(default)
        self._overrides.set({**overrides, option: value})
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") and name.endswith("__"):  # module machinery (__doc__, ...)
            super().__setattr__(name, value)
            return
        self._hidden.discard(name)
        option = self._option(name)
        # Copy on write: another thread's (or context's) dict is never changed under it.
        self._overrides.set({**self._overrides.get(), option: value})

    def __delattr__(self, name: str) -> None:
        option = self._option(name)
        overrides = dict(self._overrides.get())
        overrides.pop(option, None)
        self._overrides.set(overrides)
        self._hidden.add(name)

    def _option(self, name: str) -> str:
        """The option `name` reads and writes (itself, or the one an alias names); raises
        AttributeError for a name outside the table."""
        if name in self._hidden or (name not in self._defaults and name not in self._aliases):
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        if name in self._deprecated and name not in self._deprecation_warned:
            self._deprecation_warned.add(name)
            reason = self._deprecated[name]
            message = f"{self.__name__}.{name} is deprecated" + (f" and {reason}" if reason else "")
            warnings.warn(
                f"{message}. It will be removed in a future version of PyTorch.",
                FutureWarning,
                stacklevel=3,
            )
        return self._aliases.get(name, name)

    def get_config_copy(self) -> dict[str, Any]:
        """Every option and its value in this thread (aliases left out), as a new dict."""
        # read directly, as torch does: listing the options is no use of a deprecated one
        return {
            name: copy.deepcopy(self._value(name))
            for name in self._defaults
            if name not in self._unlisted
        }

    def load_config(self, maybe_pickled_config: dict[str, Any]) -> None:
        """Set the options of a dict `get_config_copy` returned; a name outside the table warns.

        torch also accepts the pickled bytes of its `save_config`; lucid reads no pickle.
        """
        if not isinstance(maybe_pickled_config, dict):
            raise TypeError(
                "load_config expects the dict get_config_copy returns; lucid reads no pickled "
                f"config, got {type(maybe_pickled_config).__name__}"
            )
        for name, value in maybe_pickled_config.items():
            if name in self._defaults or name in self._aliases:
                setattr(self, name, value)
            else:
                warnings.warn(
                    f"key {name} with value {value} is not understood by this config",
                    UserWarning,
                    stacklevel=2,
                )

    def patch(
        self, arg1: str | dict[str, Any] | None = None, arg2: Any = None, **kwargs: Any
    ) -> _ConfigPatch:
        """Change options for a `with` block or a decorated call (in this thread), as torch's:
        `patch("name", value)`, `patch({"name": value})` or `patch(name=value)`."""
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError(
                        "first argument must be a string when passing 2 positional args to patch"
                    )
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError(
                        "first argument must be a dict when passing a single positional arg to "
                        "patch"
                    )
                changes = arg1
            if kwargs:
                raise AssertionError("cannot pass both positional and keyword arguments to patch")
        else:
            changes = kwargs
            if arg2 is not None:
                raise AssertionError(
                    "second positional argument is only valid when first argument is a key string"
                )
        return _ConfigPatch(self, changes)


class _ConfigPatch(contextlib.ContextDecorator):
    """What `patch` returns: a context manager and a decorator; it may be entered again while
    active (each exit restores what its own entry found)."""

    def __init__(self, config: ConfigModule, changes: dict[str, Any]) -> None:
        self.config = config
        self.changes = changes
        self._prior: ContextVar[tuple[dict[str, Any], ...]] = ContextVar(
            f"{config.__name__}.patch", default=()
        )

    def __enter__(self) -> None:
        # Read every prior value first: an unknown name raises before anything changes.
        prior = {name: getattr(self.config, name) for name in self.changes}
        stack = self._prior.get()
        self._prior.set((*stack, prior))
        try:
            for name, value in self.changes.items():
                setattr(self.config, name, value)
        except Exception:
            self._prior.set(stack)
            raise

    def __exit__(self, *exc_info: object) -> None:
        stack = self._prior.get()
        self._prior.set(stack[:-1])
        for name, value in stack[-1].items():
            setattr(self.config, name, value)


class SubConfigProxy:
    """A sub-config's attribute face: `config.triton.cudagraphs` is option
    `triton.cudagraphs` of `config`."""

    def __init__(self, config: ConfigModule, prefix: str) -> None:
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        return self._config.__getattr__(self._prefix + name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._config.__setattr__(self._prefix + name, value)

    def __delattr__(self, name: str) -> None:
        self._config.__delattr__(self._prefix + name)


def install_config_module(
    module: ModuleType,
    defaults: dict[str, Any],
    *,
    aliases: dict[str, str] | None = None,
    unlisted: dict[str, Any] | None = None,
    deprecated: dict[str, str | None] | None = None,
) -> None:
    """Turn `module` into a ConfigModule over `defaults` (and `unlisted`: options read and
    written like the others that `get_config_copy` leaves out)."""
    module._defaults = {**defaults, **(unlisted or {})}
    module._aliases = dict(aliases or {})
    module._unlisted = frozenset(unlisted or ())
    module._deprecated = dict(deprecated or {})
    module._deprecation_warned = set()
    module._hidden = set()
    module._overrides = ContextVar(f"{module.__name__}._overrides", default=MappingProxyType({}))
    for name in module._defaults:
        prefix, dot, _ = name.rpartition(".")
        if dot and prefix not in vars(module):
            setattr(module, prefix, SubConfigProxy(module, f"{prefix}."))  # type: ignore[arg-type]
    module.__class__ = ConfigModule
