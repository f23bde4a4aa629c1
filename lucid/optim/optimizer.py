"""Optimizer base: parameter groups with defaults, per-parameter state, state dicts, zero_grad."""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import lucid
from lucid import Tensor
from lucid._core.grad_mode import local_state
from lucid._core.sentinel import begin_optimizer_step, end_optimizer_step, register_optimizer
from lucid._tensor import zero_grads

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a hyperparameter that every parameter group must give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _type_name(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def _scalar_dtype() -> lucid.dtype:
    # The step counter is a 0-d tensor, float64 only when that is the default dtype (as PyTorch).
    return lucid.float64 if lucid.get_default_dtype() == lucid.float64 else lucid.float32


def _real_view(tensor: Tensor) -> Tensor:
    """A complex tensor as its real view (a last dimension of (real, imaginary) parts, sharing
    memory); a real tensor as it is. Optimizers step complex parameters through these views, so
    each part is an independent real number with its own moments, as PyTorch does."""
    return lucid.view_as_real(tensor) if tensor.is_complex() else tensor


def _refuse_complex_parameters(group: dict[str, Any], optimizer_name: str) -> None:
    """PyTorch's refusal, for a group about to be stepped, of complex parameters with gradients
    (raised before any parameter of the group moves)."""
    for param in group["params"]:
        if param.grad is not None and param.is_complex():
            raise RuntimeError(f"{optimizer_name} does not support complex parameters")


def _counted_step(step: Callable[..., Any]) -> Callable[..., Any]:
    """`step` as every optimizer runs it: the ops inside are the optimizer phase of lucid's
    reports, and each call is one training step (docs/numerics.md, "Decisions")."""

    @functools.wraps(step)
    def counted_step(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        if local_state.recorder is not None:  # lucid.compile runs it as it is on a replay
            return local_state.recorder.call(functools.partial(counted_step, self), *args,
                                             **kwargs)  # fmt: skip
        mark = begin_optimizer_step(self)
        try:
            return step(self, *args, **kwargs)
        finally:
            end_optimizer_step(self, mark)

    counted_step.counts_steps = True
    return counted_step


class Optimizer:
    """Base class of all optimizers: holds `param_groups` and per-parameter `state`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "counts_steps", False):
            cls.step = _counted_step(step)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_type_name(params)}"
            )
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        register_optimizer(self)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters, filling in the optimizer's defaults for missing options."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            param_group["params"] = list(params)

        # Named parameters, as from `module.named_parameters()`, keep their names in the group.
        names = [param[0] for param in param_group["params"] if isinstance(param, tuple)]
        param_group["params"] = [
            param[1] if isinstance(param, tuple) else param for param in param_group["params"]
        ]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _type_name(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        group_ids = [id(param) for param in param_group["params"]]
        if len(group_ids) != len(set(group_ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )

        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current} to the optimizer"
                )

        existing_ids = {id(param) for group in self.param_groups for param in group["params"]}
        if not existing_ids.isdisjoint(group_ids):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, else to zeros)."""
        if local_state.recorder is not None:
            local_state.recorder.call(self.zero_grad, set_to_none)
            return
        zero_grads((param for group in self.param_groups for param in group["params"]),
                    set_to_none)  # fmt: skip

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError

    def _run_closure(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        # The closure's forward and backward are the training pass, not the optimizer's ops.
        state = local_state
        running, state.optimizer = state.optimizer, None
        try:
            with lucid.enable_grad():
                return closure()
        finally:
            state.optimizer = running

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state and hyperparameters, with parameters replaced by their indices."""
        index_of: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {key: value for key, value in group.items() if key != "params"}
            for index, param in enumerate(group["params"], start_index):
                index_of.setdefault(id(param), index)
            packed["params"] = [index_of[id(param)] for param in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(group) for group in self.param_groups]
        packed_state = {
            (index_of[id(key)] if isinstance(key, Tensor) else key): value
            for key, value in self.state.items()
        }
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict produced by `state_dict()` of an optimizer over matching groups."""
        # a shallow copy, as PyTorch makes (a non-dict fails here, as there)
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(
            len(group["params"]) != len(saved["params"])
            for group, saved in zip(groups, saved_groups, strict=True)
        ):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size "
                "of optimizer's group"
            )

        param_of = dict(
            zip(
                chain.from_iterable(saved["params"] for saved in saved_groups),
                chain.from_iterable(group["params"] for group in groups),
                strict=True,
            )
        )

        def cast(param: Tensor, value: Any, key: str | None = None) -> Any:
            # Copies, so the loaded optimizer never shares state tensors with the dict's owner.
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point():
                    return value.detach().to(param.dtype).clone()
                return value.detach().clone()
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return type(value)(cast(param, v, key) for v in value)
            return value

        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = cast(param, value)
            else:
                state[key] = value

        new_groups = []
        for group, saved in zip(groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})


def check_adam_hyperparameters(lr: float, eps: float, betas: tuple[float, float],
                               weight_decay: float) -> None:  # fmt: skip
    """PyTorch's checks (and messages) for the Adam family's shared hyperparameters."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
