"""Module: the base class of every layer; registers parameters, buffers, children and hooks."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid._core.grad_mode import local_state
from lucid._core.hooks import RemovableHandle
from lucid._core.sentinel import enter_model, leave_model
from lucid._tensor import zero_grads
from lucid.autograd import Function
from lucid.nn.parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook"]

_global_forward_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_forward_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = {}


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register `hook(module, args)` to run before the forward of every module."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook: Callable, *, always_call: bool = False) -> RemovableHandle:
    """Register `hook(module, args, output)` to run after the forward of every module."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """The result of `load_state_dict`: which keys were missing and which were unexpected."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _find_path(parent: Module, module: Module) -> str | None:
    """The dotted name of `module` under `parent`, cached on `parent` and re-validated."""
    cached = parent._child_paths.get(id(module))
    if cached is not None:
        found: Module | None = parent
        for part in cached[1]:
            found = found._modules.get(part)
            if found is None:
                break
        if found is module:
            return cached[0]
    for name, child in parent._modules.items():
        if child is module:
            parent._child_paths[id(module)] = (name, (name,))
            return name
    # A deeper descendant called directly from `parent`'s forward (rare): search the tree.
    for name, child in parent.named_modules(remove_duplicate=False):
        if child is module and name:
            parent._child_paths[id(module)] = (name, tuple(name.split(".")))
            return name
    return None


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class _BackwardHookFunction(Function):
    """Identity on tensors whose backward hands their gradients to a module's backward hooks."""

    @staticmethod
    def forward(ctx: Any, on_gradients: Callable, *tensors: Tensor) -> Any:
        ctx.on_gradients = on_gradients
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Tensor) -> Any:
        return (None, *ctx.on_gradients(grad_outputs))


class _BackwardHook:
    """Collects grad_output and grad_input of one module call and runs its backward hooks."""

    def __init__(self, module: Module, hooks: list[Callable], pre_hooks: list[Callable]) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = 0
        self.input_positions: list[int] | None = None
        self.input_requires_grad: list[bool] = []
        self.n_outputs = 0
        self.output_positions: list[int] = []

    def _wrap(self, values: tuple, on_gradients: Callable) -> tuple[tuple, list[int] | None]:
        positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        tensors = [values[i] for i in positions]
        if not lucid.is_grad_enabled() or not any(t.requires_grad for t in tensors):
            return values, None
        wrapped = _BackwardHookFunction.apply(on_gradients, *tensors)
        result = list(values)
        for position, tensor in zip(positions, wrapped):
            result[position] = tensor
        return tuple(result), positions

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        self.input_requires_grad = [isinstance(a, Tensor) and a.requires_grad for a in args]
        args, self.input_positions = self._wrap(args, self._on_input_gradients)
        return args

    def setup_output_hook(self, output: Any) -> Any:
        is_tuple = isinstance(output, tuple)
        values = output if is_tuple else (output,)
        self.n_outputs = len(values)
        values, positions = self._wrap(values, self._on_output_gradients)
        if positions is None:
            return output
        self.output_positions = positions
        return values if is_tuple else values[0]

    def _on_output_gradients(self, grads: tuple) -> tuple:
        full: list[Tensor | None] = [None] * self.n_outputs
        for position, grad in zip(self.output_positions, grads):
            full[position] = grad
        grad_outputs = tuple(full)
        for hook in self.pre_hooks:
            result = hook(self.module, grad_outputs)
            if result is not None:
                if not isinstance(result, tuple):
                    result = (result,)
                if len(result) != len(grad_outputs):
                    raise RuntimeError(
                        f"Backward pre hook returned an invalid number of grad_output, got "
                        f"{len(result)}, but expected {len(grad_outputs)}"
                    )
                grad_outputs = result
        self.grad_outputs = grad_outputs
        if self.input_positions is None:
            # No input requires grad: the hooks run now, with None for every grad_input.
            if self.hooks:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients.",
                    UserWarning,
                    stacklevel=2,
                )
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                result = hook(self.module, grad_inputs, grad_outputs)
                if result is not None and not all(g is None for g in result):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(grad_outputs[position] for position in self.output_positions)

    def _on_input_gradients(self, grads: tuple) -> tuple:
        full: list[Tensor | None] = [None] * self.n_inputs
        for position, grad in zip(self.input_positions, grads):
            if self.input_requires_grad[position]:
                full[position] = grad
        grad_inputs = tuple(full)
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None:
                if not isinstance(result, tuple):
                    result = (result,)
                if len(result) != len(grad_inputs):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got "
                        f"{len(result)}, but expected {len(grad_inputs)}"
                    )
                grad_inputs = result
        self.grad_outputs = None
        return tuple(grad_inputs[position] for position in self.input_positions)


class Module:
    """Base class for all neural network modules, as `torch.nn.Module`.

    Example::

        class Net(lucid.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lucid.nn.Parameter(lucid.randn(3, 2))

            def forward(self, x):
                return x @ self.weight
    """

    training: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setter = object.__setattr__
        setter(self, "training", True)
        setter(self, "_parameters", {})
        setter(self, "_buffers", {})
        setter(self, "_non_persistent_buffers_set", set())
        setter(self, "_modules", {})
        setter(self, "_forward_pre_hooks", OrderedDict())
        setter(self, "_forward_pre_hooks_with_kwargs", {})
        setter(self, "_forward_hooks", OrderedDict())
        setter(self, "_forward_hooks_with_kwargs", {})
        setter(self, "_forward_hooks_always_called", {})
        setter(self, "_backward_hooks", OrderedDict())
        setter(self, "_backward_pre_hooks", OrderedDict())
        setter(self, "_child_paths", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---------------------------------------------------------------- calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The calling module and its path are per thread, beside the module path they extend.
        state = local_state
        parent = state.calling_module
        if state.recorder is not None:
            state.recorder.module_called(self, parent is None, args, kwargs)
        if parent is None:
            # The outermost module pushes no name: paths are relative to it. Its call is a
            # step, and where the batch enters the model.
            enter_model(self, args, kwargs)
            state.calling_module = self
            state.calling_path = ""
            state.in_model = True
            try:
                output = self._call_impl(args, kwargs)
            finally:
                state.calling_module = None
                state.in_model = False
            if state.recorder is not None:
                state.recorder.module_returned(output)
            leave_model(output)
            return output
        parent_path = state.calling_path
        name = _find_path(parent, self)
        if name is None:
            path = parent_path
        else:
            path = f"{parent_path}.{name}" if parent_path else name
        previous = state.module_path
        state.module_path = previous + (path,)
        state.calling_module = self
        state.calling_path = path
        try:
            return self._call_impl(args, kwargs)
        finally:
            state.module_path = previous
            state.calling_module = parent
            state.calling_path = parent_path

    def _call_impl(self, args: tuple, kwargs: dict) -> Any:
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hook_id, hook in itertools.chain(
            _global_forward_pre_hooks.items(), self._forward_pre_hooks.items()
        ):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {result}."
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)

        backward_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward_hook = _BackwardHook(
                self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values())
            )
            args = backward_hook.setup_input_hook(args)

        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in itertools.chain(
                _global_forward_hooks.items(), self._forward_hooks.items()
            ):
                if (
                    hook_id in _global_forward_hooks_always_called
                    or hook_id in self._forward_hooks_always_called
                ):
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise

        for hook_id, hook in itertools.chain(
            _global_forward_hooks.items(), self._forward_hooks.items()
        ):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result

        if backward_hook is not None:
            output = backward_hook.setup_output_hook(output)
        return output

    # ---------------------------------------------------------------- hooks
    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Run `hook(module, args)` (or `hook(module, args, kwargs)`) before each forward."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Run `hook(module, args, output)` (or with kwargs before output) after each forward."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Run `hook(module, grad_input, grad_output)` once the inputs' gradients are known.

        It may return a tuple that replaces grad_input.
        """
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Run `hook(module, grad_output)` once the outputs' gradients are known.

        It may return a tuple that replaces grad_output.
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    # ---------------------------------------------------------------- registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a declared but absent one) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter name", allow_existing=name in self._parameters)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                "(lucid.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (e.g. running statistics)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_type_name(name)}")
        self._check_name(name, "buffer name", allow_existing=name in self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                "(lucid Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_type_name(name)}")
        self._check_name(name, "module name", allow_existing=name in self._modules)
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name: Any, kind: str, allow_existing: bool) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} should be a string. Got {_type_name(name)}")
        if "." in name:
            # Only module names echo the offending name, as in PyTorch.
            got = f", got: {name}" if kind == "module name" else ""
            raise KeyError(f'{kind} can\'t contain "."{got}')
        if name == "":
            raise KeyError(f'{kind} can\'t be empty string ""')
        if not allow_existing and hasattr(self, name):
            raise KeyError(f"attribute '{name}' already exists")

    def _all_names(self) -> set[str]:
        return set(self._parameters) | set(self._buffers) | set(self._modules)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: parameters, buffers and children live in dicts.
        state = self.__dict__
        if "_parameters" in state:
            if name in state["_parameters"]:
                return state["_parameters"][name]
            if name in state["_buffers"]:
                return state["_buffers"][name]
            if name in state["_modules"]:
                return state["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if local_state.recorder is not None and isinstance(value, Tensor):
            local_state.recorder.tensor_attribute_set(self, name)
        state = self.__dict__
        params = state.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, state, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                    "(lucid.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = state.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, state, keep="_modules")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as child module '{name}' "
                    "(lucid.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = state.get("_buffers")
        if isinstance(value, Buffer):
            self.register_buffer(name, value, persistent=value.persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                    "(lucid.Tensor or None expected)"
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _remove_from(self, name: str, state: dict, keep: str) -> None:
        # The dict being assigned into keeps the name, so re-assignment keeps its position.
        state.pop(name, None)
        for key in ("_parameters", "_buffers", "_modules"):
            if key != keep:
                state[key].pop(name, None)
        state["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        state = self.__dict__
        if name in state.get("_parameters", ()):
            del state["_parameters"][name]
        elif name in state.get("_buffers", ()):
            del state["_buffers"][name]
            state["_non_persistent_buffers_set"].discard(name)
        elif name in state.get("_modules", ()):
            del state["_modules"][name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attributes = set(dir(type(self))) | set(self.__dict__) | self._all_names()
        # Names of removed (None) parameters still show, as in PyTorch; digit keys do not.
        return sorted(key for key in attributes if not key[0].isdigit())

    # ---------------------------------------------------------------- lookup
    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` ("" is this module)."""
        if target == "":
            return self
        module = self
        for part in target.split("."):
            if not hasattr(module, part):
                raise AttributeError(module._get_name() + " has no attribute `" + part + "`")
            module = getattr(module, part)
            if not isinstance(module, Module):
                raise AttributeError("`" + part + "` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(module, name)

    # ---------------------------------------------------------------- iteration
    def _named_members(
        self, get_members: Callable, prefix: str = "", recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:  # fmt: skip
        seen = set()
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(
            lambda module: module._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(
            lambda module: module._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    # ---------------------------------------------------------------- state
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        if not isinstance(requires_grad, bool):
            raise TypeError(
                "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                f"{type(requires_grad).__name__}"
            )
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        if local_state.recorder is not None:  # lucid.compile runs it as it is on a replay
            local_state.recorder.call(self.zero_grad, set_to_none)
            return
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply_to_tensors(self, convert: Callable[[Tensor], Tensor]) -> Module:
        # Parameters keep their identity (optimisers hold them): only their storage changes.
        for module in self.modules():
            for param in module._parameters.values():
                if param is None:
                    continue
                with lucid.no_grad():
                    param.data = convert(param.data)
                    if param._grad is not None:
                        param._grad.data = convert(param._grad.data)
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    module._buffers[name] = convert(buffer)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating-point parameters and buffers to a dtype, or check a device:
        `to(dtype)`, `to("cpu")`, `to(device, dtype)`, `to(tensor)`."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for arg in args:
            if isinstance(arg, lucid.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, bool | float) or arg in (bool, float):
                # PyTorch's argument parser reads a Python bool or float, value or type, as a dtype
                dtype = lucid.bool if isinstance(arg, bool) or arg is bool else lucid.float64
            elif isinstance(arg, str | lucid.device):
                device = lucid.device(arg)  # an unknown device type raises here, as in PyTorch
            elif isinstance(arg, int) and not isinstance(arg, bool):
                device = arg
        if device is not None:
            # Only the CPU holds tensors: tensor.to raises for another device, as PyTorch's
            # CPU build does (a module without tensors has nothing to move).
            self._apply_to_tensors(lambda t: t.to(device))
        if dtype is None:
            return self
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
        return self._apply_to_tensors(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def type(self, dst_type: Any) -> Module:
        """Cast every parameter and buffer, integer ones included, to `dst_type`."""
        probe = lucid.zeros(0).type(dst_type)
        if not probe.is_floating_point() and any(p.requires_grad for p in self.parameters()):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or "
                "complex dtype"
            )
        return self._apply_to_tensors(lambda t: t.type(dst_type))

    def cuda(self, device: Any = None) -> Module:
        """Raises for a module with tensors, as a PyTorch build without CUDA does."""
        return self._apply_to_tensors(lambda t: t.cuda(device))

    def float(self) -> Module:
        return self._apply_to_tensors(lambda t: t.to(lucid.float32) if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply_to_tensors(lambda t: t.to(lucid.float64) if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply_to_tensors(lambda t: t.to(lucid.float16) if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply_to_tensors(
            lambda t: t.to(lucid.bfloat16) if t.is_floating_point() else t
        )

    def cpu(self) -> Module:
        return self

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """An OrderedDict of parameters and persistent buffers under dotted names."""
        if args:
            # Positional (destination, prefix, keep_vars), deprecated in PyTorch but accepted.
            names = ("destination", "prefix", "keep_vars")
            values = dict(zip(names, args))
            destination = values.get("destination", destination)
            prefix = values.get("prefix", prefix)
            keep_vars = values.get("keep_vars", keep_vars)
        if destination is None:
            destination = OrderedDict()
        # a lazy module's placeholders are saved as they are, to be loaded into another one
        for name, param in self._parameters.items():
            if param is not None:
                keep = keep_vars or is_lazy(param)
                destination[prefix + name] = param if keep else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                keep = keep_vars or is_lazy(buffer)
                destination[prefix + name] = buffer if keep else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy parameters and buffers from `state_dict`; report missing and unexpected keys."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        errors: list[str] = []
        missing: list[str] = []
        unexpected: list[str] = []
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            prefix = module_prefix + "." if module_prefix else ""
            module._load_own_state(state_dict, prefix, assign, errors, missing, unexpected)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{key}"' for key in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{key}"' for key in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    def _load_own_state(
        self, state_dict: Mapping[str, Any], prefix: str, assign: bool, errors: list[str],
        missing: list[str], unexpected: list[str],
    ) -> None:  # fmt: skip
        own = {
            name: value
            for name, value in itertools.chain(self._parameters.items(), self._buffers.items())
            if value is not None and name not in self._non_persistent_buffers_set
        }
        # A key is unexpected at the module whose prefix it carries and that has no child
        # to hand it down to, so keys are reported module by module, as PyTorch does.
        for key in state_dict:
            if key.startswith(prefix):
                first = key[len(prefix) :].split(".", 1)[0]
                if first not in self._modules and key[len(prefix) :] not in own:
                    unexpected.append(key)
        for name, current in own.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if isinstance(value, np.ndarray):
                # lucid is built on NumPy: an array is a tensor's data (PyTorch refuses it).
                value = lucid.tensor(value)
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected lucid.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if is_lazy(current):
                continue  # both placeholders: nothing to copy until a forward gives a shape
            if value.shape != current.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {current.shape}."
                )
                continue
            if assign:
                if isinstance(current, Parameter):
                    if not isinstance(value, Parameter):
                        value = Parameter(value, requires_grad=current.requires_grad)
                    else:
                        value.requires_grad_(current.requires_grad)
                    self._parameters[name] = value
                else:
                    self._buffers[name] = value
            else:
                with lucid.no_grad():
                    current.copy_(value)

    # ---------------------------------------------------------------- repr
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text shown inside this module's repr; override in layers."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): {_addindent(repr(module), 2)}" for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if len(extra_lines) == 1 and not child_lines:
            text += extra_lines[0]
        elif lines:
            text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def _type_name(value: Any) -> str:
    return value.type() if isinstance(value, Tensor) else type(value).__name__
