"""Higher-level autograd: jacobian, hessian, vjp, jvp, hvp, vhp.

Everything is built on reverse mode (`lucid.autograd.grad`): jvp and hvp use the double-vjp
trick, and Jacobians are assembled one row per output element with a Python loop, so
`vectorize=True` gives the same results without a speed-up. Forward-mode strategies raise
NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lucid._core.engine import grad
from lucid._core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from lucid._core.tensor import _wrap
from lucid._tensor import Tensor
from lucid.factories import zeros_like
from lucid.ops import movedim, stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

Inputs = Tensor | tuple[Tensor, ...]


def vjp(
    func: Callable[..., Inputs],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Inputs, Inputs]:
    """`(func(inputs), v^T J)`: the vector-Jacobian product at `inputs`.

    Example::

        out, vjp_x = vjp(lambda x: x.exp().sum(), x)   # vjp_x == x.exp()
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _unpack(outputs, is_outputs_tuple), _unpack(result, is_inputs_tuple)


def jvp(
    func: Callable[..., Inputs],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Inputs, Inputs]:
    """`(func(inputs), J v)`: the Jacobian-vector product at `inputs`.

    Computed with the double-vjp trick: g(u) = u^T J is linear in u, so the vjp of g with
    `v` is J v. The backward of every op on the path must therefore be differentiable.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element."
            )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict=strict)
        # The value of u does not matter (g is linear in it), only that it requires grad.
        dummy_grad_outputs = tuple(_zeros_like(out).requires_grad_() for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, dummy_grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        grads = _autograd_grad(grad_inputs, dummy_grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _unpack(outputs, is_outputs_tuple), _unpack(result, is_outputs_tuple)


def jacobian(
    func: Callable[..., Inputs],
    inputs: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of `func` at `inputs`; entry [i][j] has shape output_i.shape + input_j.shape.

    A single Tensor input or output drops the matching level of tuple nesting.

    Example::

        jacobian(lambda x: x * x, lucid.tensor([1.0, 2.0]))   # tensor([[2., 0.], [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        _check_forward_mode(create_graph, strict, vectorize)
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        is_outputs_tuple, result = _forward_mode_jacobian(func, inputs)
        return _unpack_nested(result, is_outputs_tuple, is_inputs_tuple)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "lucid.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or `vectorize=False`."
            )
        result = tuple(
            _jacobian_of_output(index, out, inputs, create_graph, strict)
            for index, out in enumerate(outputs)
        )
        result = _grad_postprocess(result, create_graph)
        return _unpack_nested(result, is_outputs_tuple, is_inputs_tuple)


def hessian(
    func: Callable[..., Tensor],
    inputs: Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar `func` at `inputs`: the Jacobian of its gradient.

    With tuple inputs, entry [i][j] has shape input_i.shape + input_j.shape.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*args: Tensor) -> Tensor:
        out = func(*args)
        is_out_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.reshape(())

    def gradient_func(*args: Tensor) -> tuple[Tensor, ...]:
        gradients = jacobian(scalar_func, args, create_graph=True)
        _check_requires_grad(gradients, "jacobian", strict=strict)
        return gradients

    result = jacobian(
        gradient_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpack_nested(result, is_inputs_tuple, is_inputs_tuple)


def vhp(
    func: Callable[..., Tensor],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Inputs]:
    """`(func(inputs), v^T H)` for a scalar `func`: the vjp of its gradient."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs = _prepare_hessian_product(
            func, inputs, v, create_graph, strict, "vhp"
        )
        gradients = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(gradients, "jacobian", strict=strict)
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        grads = _autograd_grad(gradients, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _unpack(outputs, False), _unpack(result, is_inputs_tuple)


def hvp(
    func: Callable[..., Tensor],
    inputs: Inputs,
    v: Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Inputs]:
    """`(func(inputs), H v)` for a scalar `func`, by the double-vjp trick on its gradient.

    H is symmetric for twice continuously differentiable functions, so this equals vhp;
    it costs one more backward pass.
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs = _prepare_hessian_product(
            func, inputs, v, create_graph, strict, "hvp"
        )
        gradients = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(gradients, "jacobian", strict=strict)
        dummy_grad_jacobian = tuple(_zeros_like(x).requires_grad_() for x in inputs)
        double_back = _autograd_grad(gradients, inputs, dummy_grad_jacobian, create_graph=True)
        _check_requires_grad(gradients, "hessian", strict=strict)
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        grads = _autograd_grad(double_back, dummy_grad_jacobian, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _unpack(outputs, False), _unpack(result, is_inputs_tuple)


# ------------------------------------------------------------------------- helpers
def _prepare_hessian_product(
    func: Callable[..., Tensor],
    inputs: Inputs,
    v: Inputs | None,
    create_graph: bool,
    strict: bool,
    name: str,
) -> tuple[bool, tuple[Tensor, ...], tuple[Tensor, ...] | None, tuple[Tensor, ...]]:
    """Shared argument handling of vhp and hvp: tuples, v's shape, a single-element output."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element."
        )
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {name} should contain a single element"
        )
    return is_inputs_tuple, inputs, v, outputs


def _check_forward_mode(create_graph: bool, strict: bool, vectorize: bool) -> None:
    if not vectorize:
        # PyTorch's message, its missing space included
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    if create_graph:
        raise NotImplementedError(
            "lucid.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`create_graph=False` or `strategy="reverse-mode"`.'
        )
    if strict:
        raise RuntimeError(
            'lucid.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )


def _forward_mode_jacobian(func: Callable[..., Inputs], inputs: tuple) -> tuple[bool, tuple]:
    """(whether func returned a tuple, jacobian[i][j]) by forward mode: one pass per input
    element with a one-hot tangent, each giving that column of every output's Jacobian."""
    from lucid.autograd import forward_ad

    columns: list[list[list[Tensor]]] = []  # [input][output][element]
    outputs: tuple = ()
    is_outputs_tuple = False
    for position, primal in enumerate(inputs):
        per_output: list[list[Tensor]] = []
        for element in range(primal.numel()):
            one_hot = zeros_like(primal)
            one_hot.view(-1)[element] = 1.0
            with forward_ad.dual_level(), enable_grad():
                duals = list(inputs)
                # Requiring grad, the dual stays connected through a reverse-mode jacobian
                # inside func (hessian's forward over reverse), which views such inputs.
                duals[position] = forward_ad.make_dual(primal.detach().requires_grad_(), one_hot)
                result = func(*duals)
                is_outputs_tuple, outputs = _as_tuple(
                    result, "outputs of the user-provided function", "jacobian"
                )
                tangents = [forward_ad.unpack_dual(out).tangent for out in outputs]
            if not per_output:
                per_output = [[] for _ in outputs]
            for column, tangent, out in zip(per_output, tangents, outputs):
                column.append(zeros_like(out) if tangent is None else tangent.detach())
        columns.append(per_output)
    if not columns or not columns[0]:
        with enable_grad():
            is_outputs_tuple, outputs = _as_tuple(
                func(*inputs), "outputs of the user-provided function", "jacobian"
            )
    jacobian = []
    for index, out in enumerate(outputs):
        row = []
        for position, primal in enumerate(inputs):
            shape = tuple(out.shape) + tuple(primal.shape)
            parts = columns[position][index] if columns[position] else []
            if not parts:
                row.append(out.new_zeros(shape).detach())
                continue
            stacked = stack(parts)  # (input numel,) + output shape
            row.append(movedim(stacked, 0, -1).reshape(shape).detach())
        jacobian.append(tuple(row))
    return is_outputs_tuple, tuple(jacobian)


def _jacobian_of_output(
    output_index: int,
    out: Tensor,
    inputs: tuple[Tensor, ...],
    create_graph: bool,
    strict: bool,
) -> tuple[Tensor, ...]:
    """d out / d input for each input: one vjp with a unit grad_output per element of out."""
    rows: list[list[Tensor]] = [[] for _ in inputs]
    for flat_index in range(out.nelement()):
        unit = np.zeros(out._data.shape, out._data.dtype)
        unit.reshape(-1)[flat_index] = 1
        grads = _autograd_grad(
            (out,), inputs, (_wrap(unit),), retain_graph=True, create_graph=create_graph
        )
        for input_index, (row, value, input) in enumerate(zip(rows, grads, inputs)):
            if value is None:
                if strict:
                    raise RuntimeError(
                        f"Output {output_index} of the user-provided function is independent "
                        f"of input {input_index}. This is not allowed in strict mode."
                    )
                value = _zeros_like(input)
            elif strict and create_graph and not value.requires_grad:
                raise RuntimeError(
                    "The jacobian of the user-provided function is independent of input "
                    f"{input_index}. This is not allowed in strict mode when create_graph=True."
                )
            row.append(value)
    return tuple(
        _stack_rows(row, tuple(out.shape) + tuple(input.shape), input)
        for row, input in zip(rows, inputs)
    )


def _stack_rows(rows: list[Tensor], shape: tuple[int, ...], input: Tensor) -> Tensor:
    if not rows:
        return _wrap(np.zeros(shape, input._data.dtype))
    return stack(rows, 0).reshape(shape)


def _zeros_like(tensor: Tensor) -> Tensor:
    return _wrap(np.zeros(tensor._data.shape, tensor._data.dtype))


def _as_tuple(value: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for index, element in enumerate(values):
        if not isinstance(element, Tensor):
            where = f"value at index {index}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(element)}."
            )
    return is_tuple, values


def _unpack(values: tuple, is_tuple: bool) -> Any:
    return values if is_tuple else values[0]


def _unpack_nested(values: tuple, is_outer_tuple: bool, is_inner_tuple: bool) -> Any:
    if not is_inner_tuple:
        values = tuple(inner[0] for inner in values)
    return values if is_outer_tuple else values[0]


def _grad_preprocess(
    inputs: tuple[Tensor, ...], create_graph: bool, need_graph: bool
) -> tuple[Tensor, ...]:
    """Fresh tensors to differentiate against, so the caller's tensors are never the leaves.

    With `create_graph` an input that requires grad stays connected (a view of it), so the
    result can be differentiated back to the caller's tensors.
    """
    prepared = []
    for input in inputs:
        if create_graph and input.requires_grad:
            prepared.append(input.view_as(input))
        else:
            prepared.append(input.detach().requires_grad_(need_graph))
    return tuple(prepared)


def _grad_postprocess(values: tuple, create_graph: bool) -> tuple:
    if values and not isinstance(values[0], Tensor):
        return tuple(_grad_postprocess(inner, create_graph) for inner in values)
    if create_graph:
        return values
    return tuple(value.detach() for value in values)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (element_v, element_other) in enumerate(zip(v, other)):
        if element_v.shape != element_other.shape:
            prefix = f"Entry {index} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {element_other.size()} but got "
                f"{element_v.size()}."
            )


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    """In strict mode, every value must depend on the inputs (kind names what the values are)."""
    if not strict:
        return
    for index, value in enumerate(values):
        if value is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {index}. "
                "This is not allowed in strict mode."
            )
        if value.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {index} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {index} is independent of the input. This is "
                "not allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {index} is independent of the inputs of "
                "the user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {index} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode."
        )


def _autograd_grad(
    outputs: tuple,
    inputs: tuple[Tensor, ...],
    grad_outputs: tuple | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor | None, ...]:
    """grad() over the outputs that require grad; all None when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept_outputs = []
    kept_grad_outputs = []
    for out, grad_output in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            kept_outputs.append(out)
            kept_grad_outputs.append(grad_output)
    if not kept_outputs:
        return (None,) * len(inputs)
    return grad(
        kept_outputs,
        inputs,
        kept_grad_outputs,
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


_STRICT_MISSING_MESSAGES = {
    "back": (
        "The output of the user-provided function is independent of input {index}. This is "
        "not allowed in strict mode."
    ),
    "back_trick": (
        "The gradient with respect to the input is independent of entry {index} in the "
        "grad_outputs when using the double backward trick to compute forward mode gradients. "
        "This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {index}. This is "
        "not allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {index} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
        "double backward trick to replace forward mode AD."
    ),
}


def _fill_in_zeros(
    grads: tuple, refs: tuple[Tensor, ...], strict: bool, create_graph: bool, stage: str
) -> tuple[Tensor, ...]:
    """Zeros for the inputs a gradient never reached (an error instead in strict mode)."""
    filled = []
    for index, value in enumerate(grads):
        if value is None:
            if strict:
                raise RuntimeError(_STRICT_MISSING_MESSAGES[stage].format(index=index))
            value = _zeros_like(refs[index])
        elif strict and create_graph and not value.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {index}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        filled.append(value)
    return tuple(filled)
