"""functional_call and stack_module_state: running a module on tensors given from outside, and
the stacked state of several copies of a model (for vmap over ensembles), and batch norm
without running statistics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid._tensor import Tensor
from lucid.nn.modules.batchnorm import _BatchNorm
from lucid.nn.modules.module import Module
from lucid.ops import stack

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """`module(*args, **kwargs)` with the given tensors in place of the named parameters and
    buffers; the module's own are put back afterwards, also when the call raises.

    Example::

        params = {name: p.detach() for name, p in model.named_parameters()}
        lucid.func.functional_call(model, params, (x,))
    """
    tensors = _merge_dicts(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    if tie_weights:
        tensors = _tie(module, tensors)
    if strict:
        _check_strict(module, tensors)
    swapped = [_swap(module, name, value) for name, value in tensors.items()]
    try:
        return module(*args, **kwargs)
    finally:
        # In reverse, so a name swapped twice (tied names) ends on its original value.
        for restore in reversed(swapped):
            restore()


def _merge_dicts(parameter_and_buffer_dicts: Any) -> dict[str, Tensor]:
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if not isinstance(parameter_and_buffer_dicts, (list, tuple)):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    seen: dict[str, int] = {}
    for d in parameter_and_buffer_dicts:
        for key in d:
            seen[key] = seen.get(key, 0) + 1
    repeated = [key for key, count in seen.items() if count > 1]
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
            "ambiguous"
        )
    merged: dict[str, Tensor] = {}
    for d in parameter_and_buffer_dicts:
        merged.update(d)
    return merged


def _tie(module: Any, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
    """Names sharing one tensor in the module all take the value given for any of them."""
    groups: dict[int, list[str]] = {}
    state = list(module.named_parameters(remove_duplicate=False))
    state += list(module.named_buffers(remove_duplicate=False))
    for name, tensor in state:
        groups.setdefault(id(tensor), []).append(name)
    result = dict(tensors)
    for names in groups.values():
        if len(names) < 2:
            continue
        given = [name for name in names if name in tensors]
        if not given:
            continue
        values = [tensors[name] for name in given]
        if any(value is not values[0] for value in values[1:]):
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                "Consider using tie_weights=False"
            )
        for name in names:
            result[name] = values[0]
    return result


def _check_strict(module: Any, tensors: dict[str, Tensor]) -> None:
    expected = [name for name, _ in module.named_parameters(remove_duplicate=False)]
    expected += [name for name, _ in module.named_buffers(remove_duplicate=False)]
    unexpected = sorted(name for name in tensors if name not in expected)
    missing = sorted(name for name in expected if name not in tensors)
    messages = []
    if unexpected:
        messages.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
    if missing:
        messages.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
    if messages:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(messages)
        )


def _swap(module: Any, name: str, value: Any) -> Any:
    """Put `value` under the dotted `name`; returns the call that undoes it."""
    path, _, attribute = name.rpartition(".")
    owner = module.get_submodule(path) if path else module
    # Straight into the module's dicts: assigning a plain tensor where a Parameter is
    # registered would be refused by Module.__setattr__, and the slot must stay registered.
    for table in (owner._parameters, owner._buffers):
        if attribute in table:
            original = table[attribute]
            table[attribute] = value

            def restore(table: dict = table, original: Any = original) -> None:
                table[attribute] = original

            return restore
    missing = object()
    original = owner.__dict__.get(attribute, missing)
    object.__setattr__(owner, attribute, value)

    def restore_attribute() -> None:
        if original is missing:
            object.__delattr__(owner, attribute)
        else:
            object.__setattr__(owner, attribute, original)

    return restore_attribute


def stack_module_state(models: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(parameters, buffers) of same-class models, each name's tensors stacked along a new
    first dimension; stacked parameters are new leaves that require grad as the originals do.

    Example::

        params, buffers = lucid.func.stack_module_state(models)
        lucid.func.vmap(call_one, in_dims=(0, 0, None))(params, buffers, x)
    """
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {
        name: _stacked_leaf([dict(m.named_parameters())[name] for m in models], name)
        for name, _ in models[0].named_parameters()
    }
    buffers = {
        name: _stacked_leaf([dict(m.named_buffers())[name] for m in models], name)
        for name, _ in models[0].named_buffers()
    }
    return params, buffers


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    requires_grad = [tensor.requires_grad for tensor in tensors]
    if any(requires_grad) and not all(requires_grad):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([tensor.detach() for tensor in tensors])
    if all(requires_grad):
        result.requires_grad_()
    return result


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Turn off running statistics in every batch norm under `root`, in place, and return it.

    Each such module then normalizes with its batch's statistics in training and eval alike,
    and writes nothing to buffers during a vmapped call.
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
