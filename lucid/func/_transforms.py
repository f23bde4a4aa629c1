"""torch.func's autodiff transforms on lucid's reverse-mode engine: grad, vjp, jacrev and,
by the double-vjp trick, the forward-mode ones (jvp, jacfwd, linearize).

Each transform call is a level: it gives its inputs a fresh node (a view of an input that
already requires grad, a detached leaf otherwise), so gradients for this level never mix with
an outer one's, and it differentiates with `create_graph=True` whenever something outside can
still differentiate the result (an enclosing transform, or an input that requires grad), which
is what makes grad(grad(f)) work.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from lucid._core.engine import grad as autograd_grad
from lucid._core.grad_mode import enable_grad
from lucid._core.graph import leaves_reached
from lucid._tensor import Tensor
from lucid.factories import zeros_like
from lucid.func._pytree import TreeSpec, tree_flatten, tree_unflatten
from lucid.ops import movedim, stack

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "linearize",
]

_RANDOMNESS = ("error", "different", "same")


class _Levels(threading.local):
    depth = 0


_levels = _Levels()


class _Level:
    """One transform's differentiation scope: counts nesting so an inner level keeps graphs."""

    def __init__(self, flat_inputs: list[Any]) -> None:
        self.is_nested = _levels.depth > 0
        self.keeps_graph = self.is_nested or any(
            isinstance(leaf, Tensor) and leaf.requires_grad for leaf in flat_inputs
        )

    def note_outputs(self, outputs: list[Tensor], tracked: list[Tensor]) -> None:
        """Keep graphs also when `outputs` depend on a tensor that requires grad outside this
        level (a parameter the function closes over): the transform's result is then
        differentiable with respect to it, as torch.func's is."""
        if not self.keeps_graph and _reaches_outside(outputs, tracked):
            self.keeps_graph = True

    def __enter__(self) -> _Level:
        _levels.depth += 1
        self._grad_mode = enable_grad()
        self._grad_mode.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._grad_mode.__exit__(*exc_info)
        _levels.depth -= 1

    def release(self, value: Any) -> Any:
        """A result handed back to the caller: cut from this level's private leaves unless
        something outside can differentiate it."""
        if self.keeps_graph:
            return value
        return _tree_detach(value)


def _reaches_outside(outputs: list[Tensor], tracked: list[Tensor]) -> bool:
    """Whether the graph of `outputs` reaches a leaf that requires grad other than the
    level's own `tracked` inputs (or the leaves they view)."""
    own = {id(leaf) for leaf in tracked}
    own.update(id(leaf._base) for leaf in tracked if leaf._base is not None)
    if any(key not in own for key in leaves_reached(outputs)):
        return True
    # an output that is itself such a leaf, returned as it is
    return any(out.requires_grad and out.grad_fn is None and id(out) not in own for out in outputs)


def _tree_detach(tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten(
        [leaf.detach() if isinstance(leaf, Tensor) else leaf for leaf in leaves], spec
    )


def _track(leaf: Any) -> Tensor:
    if not isinstance(leaf, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    if leaf.requires_grad:
        # A new node over the input: this level differentiates for it alone.
        return leaf.view_as(leaf)
    return leaf.detach().requires_grad_()


def _check_argnums(argnums: Any, num_args: int) -> tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        indices: tuple = (argnums,)
    elif isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        indices = argnums
        for index in indices:
            if not isinstance(index, int) or isinstance(index, bool):
                raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for index in indices:
        if not -num_args <= index < num_args:
            raise RuntimeError(f"Got argnum={index}, but only {num_args} positional inputs")
    normalized = tuple(index % num_args for index in indices)
    if len(set(normalized)) != len(normalized):
        raise RuntimeError(f"argnums elements must be unique, got {normalized}")
    return normalized


def _select_args(args: tuple, argnums: Any) -> tuple[Any, tuple[int, ...]]:
    """(the differentiated part of args as a tree, their positions)."""
    indices = _check_argnums(argnums, len(args))
    if isinstance(argnums, int):
        return args[indices[0]], indices
    return tuple(args[index] for index in indices), indices


def _replace_args(args: tuple, indices: tuple[int, ...], argnums: Any, tracked: Any) -> tuple:
    new_args = list(args)
    if isinstance(argnums, int):
        new_args[indices[0]] = tracked
    else:
        for index, value in zip(indices, tracked):
            new_args[index] = value
    return tuple(new_args)


def _gradients(
    outputs: list[Tensor],
    inputs: list[Tensor],
    grad_outputs: list[Tensor] | None,
    create_graph: bool,
) -> list[Tensor]:
    """d(outputs)/d(inputs) against grad_outputs, zeros where an input is unused (as
    torch.func gives) and for outputs with no graph at all."""
    pairs = [(index, output) for index, output in enumerate(outputs) if output.requires_grad]
    if not pairs:
        return [zeros_like(leaf) for leaf in inputs]
    used_outputs = [output for _, output in pairs]
    used_grads = None if grad_outputs is None else [grad_outputs[index] for index, _ in pairs]
    grads = autograd_grad(
        used_outputs,
        inputs,
        used_grads,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    return [zeros_like(leaf) if g is None else g for g, leaf in zip(grads, inputs)]


def _tensor_outputs(output: Any, api: str) -> tuple[list[Tensor], TreeSpec]:
    leaves, spec = tree_flatten(output)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(leaf)}"
            )
    return leaves, spec


def _split_aux(output: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return output


# ------------------------------------------------------------------------------------- grad


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning (gradient of `func` w.r.t. the `argnums` inputs, `func`'s value).

    Example::

        g, value = lucid.func.grad_and_value(lambda x: (x ** 2).sum())(x)   # g == 2 * x
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        selected, indices = _select_args(args, argnums)
        flat_selected, spec = tree_flatten(selected)
        with _Level(flat_selected) as level:
            flat_tracked = [_track(leaf) for leaf in flat_selected]
            tracked = tree_unflatten(flat_tracked, spec)
            output = func(*_replace_args(args, indices, argnums, tracked), **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?"
                )
            level.note_outputs([output], flat_tracked)
            grads = _gradients([output], flat_tracked, None, level.keeps_graph)
        gradient = level.release(tree_unflatten(grads, spec))
        value = level.release(output)
        if has_aux:
            return gradient, (value, level.release(aux))
        return gradient, value

    return wrapper


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """A function returning the gradient of scalar-valued `func` w.r.t. the `argnums` inputs.

    Nests: `grad(grad(f))` is the second derivative. Example::

        lucid.func.grad(lambda x: x.sin().sum())(x)   # x.cos()
    """
    value_and_grad = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = value_and_grad(*args, **kwargs)
        if has_aux:
            return gradient, value[1]
        return gradient

    return wrapper


# -------------------------------------------------------------------------------------- vjp


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)`` and, with has_aux, the aux output; ``vjp_fn(cotangents)``
    returns the tuple of vector-Jacobian products, one per primal, and may be called
    repeatedly."""
    flat_primals, primals_spec = tree_flatten(primals)
    with _Level(flat_primals) as level:
        flat_tracked = [_track(leaf) for leaf in flat_primals]
        output = func(*tree_unflatten(flat_tracked, primals_spec))
        output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
        flat_outputs, output_spec = _tensor_outputs(output, "vjp(f, *primals)")
        level.note_outputs(flat_outputs, flat_tracked)

    def vjp_fn(cotangents: Any) -> tuple:
        flat_cotangents, cotangent_spec = tree_flatten(cotangents)
        if cotangent_spec != output_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {_pretty(cotangent_spec)}, primal "
                f"output: {_pretty(output_spec)}"
            )
        with _Level(flat_cotangents) as inner:
            keeps_graph = level.keeps_graph or inner.keeps_graph
            grads = _gradients(flat_outputs, flat_tracked, flat_cotangents, keeps_graph)
        result = tree_unflatten(grads, primals_spec)
        return result if keeps_graph else _tree_detach(result)

    if has_aux:
        return level.release(output), vjp_fn, level.release(aux)
    return level.release(output), vjp_fn


def _pretty(spec: TreeSpec) -> str:
    """A structure with `*` for each leaf, as Python would print it: `(*, *)`, `{'a': *}`."""
    if spec.is_leaf:
        return "*"
    children = [_pretty(child) for child in spec.children]
    if spec.type is dict:
        return (
            "{" + ", ".join(f"{key!r}: {child}" for key, child in zip(spec.context, children)) + "}"
        )
    if spec.type is list:
        return "[" + ", ".join(children) + "]"
    if len(children) == 1:
        return f"({children[0]},)"
    return "(" + ", ".join(children) + ")"


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """A function returning the Jacobian of `func` w.r.t. the `argnums` inputs, by reverse mode.

    Entry shapes are output.shape + input.shape. Rows are computed one output element at a
    time (a Python loop; `chunk_size` only changes how torch batches them).
    """
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        selected, indices = _select_args(args, argnums)
        flat_selected, spec = tree_flatten(selected)
        with _Level(flat_selected) as level:
            flat_tracked = [_track(leaf) for leaf in flat_selected]
            tracked = tree_unflatten(flat_tracked, spec)
            output = func(*_replace_args(args, indices, argnums, tracked), **kwargs)
            output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
            flat_outputs, output_spec = _tensor_outputs(output, "vjp(f, *primals)")
            level.note_outputs(flat_outputs, flat_tracked)
            jacobians = [
                _jacobian_rows(out, flat_tracked, level.keeps_graph) for out in flat_outputs
            ]
        per_output = [tree_unflatten(row, spec) for row in jacobians]
        result = level.release(tree_unflatten(per_output, output_spec))
        if has_aux:
            return result, level.release(aux)
        return result

    return wrapper


def _jacobian_rows(output: Tensor, inputs: list[Tensor], create_graph: bool) -> list[Tensor]:
    """d output / d input for each input, shaped output.shape + input.shape."""
    if output.numel() == 0:
        return [output.new_zeros(tuple(output.shape) + tuple(leaf.shape)) for leaf in inputs]
    flat_output = output.reshape(-1)
    rows: list[list[Tensor]] = [[] for _ in inputs]
    for index in range(flat_output.numel()):
        one_hot = zeros_like(flat_output)
        one_hot[index] = 1.0
        grads = _gradients([flat_output], inputs, [one_hot], create_graph)
        for column, g in zip(rows, grads):
            column.append(g)
    return [
        stack(column).reshape(tuple(output.shape) + tuple(leaf.shape))
        for column, leaf in zip(rows, inputs)
    ]


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """A function returning the Hessian of scalar `func` w.r.t. the `argnums` inputs.

    torch composes jacfwd over jacrev; lucid composes jacrev twice (the same values), since
    its forward mode is itself reverse mode twice over.
    """
    return jacrev(jacrev(func, argnums), argnums)


# ----------------------------------------------------------------------------- forward mode
# lucid has no forward-mode AD: J v comes from the double-vjp trick. u -> J^T u is linear in
# u, so the vjp of that map with cotangent v is (J^T)^T v = J v. Every op's backward on the
# path must therefore be differentiable, which lucid's backwards are (they use lucid ops).


def _check_tangents(primals: Any, tangents: Any) -> tuple[list, list, TreeSpec]:
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            "structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {primals_spec} and tangents with structure "
            f"{tangents_spec}"
        )
    for primal, tangent in zip(flat_primals, flat_tangents):
        for kind, value in (("primals", primal), ("tangents", tangent)):
            if not isinstance(value, Tensor):
                raise RuntimeError(
                    f"jvp(f, primals, tangents): Expected {kind} to only contain Tensors, got "
                    f"{type(value)}"
                )
        if primal.shape != tangent.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(primal.shape)} while the given forward gradient is of size "
                f"{list(tangent.shape)}."
            )
    return flat_primals, flat_tangents, primals_spec


class _Linearization:
    """func's outputs at the primals and the graph of u -> J^T u, from which each tangent's
    J v is one more backward pass."""

    def __init__(self, func: Callable[..., Any], primals: tuple, has_aux: bool, api: str):
        self.flat_primals, self.primals_spec = tree_flatten(primals)
        self.level = _Level(self.flat_primals)
        with self.level:
            tracked = [_track(leaf) for leaf in self.flat_primals]
            output = func(*tree_unflatten(tracked, self.primals_spec))
            output, self.aux = _split_aux(output, has_aux, api)
            self.flat_outputs, self.output_spec = _tensor_outputs(output, api)
            self.level.note_outputs(self.flat_outputs, tracked)
            self.output = output
            # The value of u does not matter (J^T u is linear in it), only that it has a node.
            self.dummies = [zeros_like(out).requires_grad_() for out in self.flat_outputs]
            self.grads = _gradients(self.flat_outputs, tracked, self.dummies, create_graph=True)

    def jvp(self, flat_tangents: list[Tensor]) -> list[Tensor]:
        with _Level(flat_tangents) as inner:
            keeps_graph = self.level.keeps_graph or inner.keeps_graph
            pairs = [(g, v) for g, v in zip(self.grads, flat_tangents) if g.requires_grad]
            if not pairs:
                return [zeros_like(out) for out in self.flat_outputs]
            results = _gradients(
                [g for g, _ in pairs], self.dummies, [v for _, v in pairs], keeps_graph
            )
        if keeps_graph:
            return results
        return [result.detach() for result in results]


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """``(func(*primals), J tangents)`` and, with has_aux, the aux output.

    J v comes from forward mode (lucid.autograd.forward_ad: one forward pass carrying the
    tangents). Inside an open dual level (a jvp of a jvp), where forward mode has no second
    level, it is the vjp of the vjp instead (the double-vjp trick: two backward passes).
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_primals, flat_tangents, primals_spec = _check_tangents(primals, tangents)
    from lucid.autograd import forward_ad

    if not forward_ad.tangent_level_is_open() and all(
        primal.is_floating_point() for primal in flat_primals
    ):
        return _forward_mode_jvp(func, flat_primals, flat_tangents, primals_spec, has_aux, api)
    linearization = _Linearization(func, primals, has_aux, api)
    flat_jvp = linearization.jvp(flat_tangents)
    output = linearization.level.release(linearization.output)
    result = tree_unflatten(flat_jvp, linearization.output_spec)
    if has_aux:
        return output, result, linearization.level.release(linearization.aux)
    return output, result


def _forward_mode_jvp(
    func: Callable[..., Any],
    flat_primals: list[Tensor],
    flat_tangents: list[Tensor],
    primals_spec: TreeSpec,
    has_aux: bool,
    api: str,
) -> tuple:
    from lucid.autograd import forward_ad

    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        output = func(*tree_unflatten(duals, primals_spec))
        output, aux = _split_aux(output, has_aux, api)
        flat_outputs, output_spec = _tensor_outputs(output, api)
        unpacked = [forward_ad.unpack_dual(out) for out in flat_outputs]
    primals_out = tree_unflatten([u.primal for u in unpacked], output_spec)
    tangents_out = tree_unflatten(
        [
            zeros_like(out) if u.tangent is None else u.tangent
            for u, out in zip(unpacked, flat_outputs)
        ],
        output_spec,
    )
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is J tangents at the primals.

    By the double-vjp trick (lucid has no forward mode): the first backward is recorded once,
    and each jvp_fn call runs one more backward through it.
    """
    linearization = _Linearization(func, primals, False, "linearize(f, *primals)")

    def jvp_fn(*tangents: Any) -> Any:
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != linearization.primals_spec:
            raise RuntimeError(
                f"Expected the tangents {tangents_spec} to have the same argspec as the "
                f"primals {linearization.primals_spec}"
            )
        for index, (primal, tangent) in enumerate(zip(linearization.flat_primals, flat_tangents)):
            if not isinstance(tangent, Tensor) or tangent.shape != primal.shape:
                shape = tangent.shape if isinstance(tangent, Tensor) else type(tangent)
                raise RuntimeError(
                    f"tangent:{index} with shape {shape} in flattened pytree doesn't match the "
                    f"shape {primal.shape} of the corresponding primal."
                )
        flat_jvp = linearization.jvp(flat_tangents)
        return tree_unflatten(flat_jvp, linearization.output_spec)

    return linearization.level.release(linearization.output), jvp_fn


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """A function returning the Jacobian of `func` w.r.t. the `argnums` inputs, column by column.

    Each column is a jvp with a one-hot tangent through one linearization (the double-vjp
    trick: the first backward recorded once, one more backward per column), so jacrev is the
    cheaper of the two here; both give the same values.
    `randomness` is checked as torch checks it; the columns share one evaluation of `func`.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        selected, indices = _select_args(args, argnums)
        flat_selected, spec = tree_flatten(selected)

        def partial(*inputs: Any) -> Any:
            restored = tree_unflatten(list(inputs), spec)
            return func(*_replace_args(args, indices, argnums, restored), **kwargs)

        linearization = _Linearization(
            partial, tuple(flat_selected), has_aux, "jvp(f, primals, tangents)"
        )
        columns: list[list[Tensor]] = []
        for position, leaf in enumerate(flat_selected):
            per_output: list[list[Tensor]] = [[] for _ in linearization.flat_outputs]
            flat_leaf = leaf.reshape(-1)
            for index in range(flat_leaf.numel()):
                tangents = [zeros_like(other) for other in flat_selected]
                one_hot = zeros_like(flat_leaf)
                one_hot[index] = 1.0
                tangents[position] = one_hot.reshape(leaf.shape)
                for column, value in zip(per_output, linearization.jvp(tangents)):
                    column.append(value)
            columns.append(
                [
                    _assemble_columns(column, out, leaf)
                    for column, out in zip(per_output, linearization.flat_outputs)
                ]
            )
        # columns[input][output] -> result[output][input]
        per_output_trees = [
            tree_unflatten([columns[i][o] for i in range(len(flat_selected))], spec)
            for o in range(len(linearization.flat_outputs))
        ]
        result = tree_unflatten(per_output_trees, linearization.output_spec)
        if has_aux:
            return result, linearization.level.release(linearization.aux)
        return result

    return wrapper


def _assemble_columns(column: list[Tensor], output: Tensor, input: Tensor) -> Tensor:
    shape = tuple(output.shape) + tuple(input.shape)
    if not column:
        return output.new_zeros(shape)
    # stacked is (input.numel(),) + output.shape; the input's index goes last.
    return movedim(stack(column), 0, -1).reshape(shape)
