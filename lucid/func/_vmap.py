"""vmap as a loop: the function runs once per index of the mapped dimension and the outputs
are stacked, which is correct for every op (and slow: one Python call per sample)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from lucid._core.random import get_rng_state, set_rng_state
from lucid._tensor import Tensor
from lucid.func._pytree import broadcast_prefix, tree_flatten, tree_unflatten
from lucid.func._transforms import _RANDOMNESS
from lucid.ops import stack

__all__ = ["vmap"]


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", repr(func))


def vmap(
    func: Callable[..., Any],
    in_dims: int | tuple = 0,
    out_dims: int | tuple = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`func` mapped over a dimension of its inputs, with the results stacked along `out_dims`.

    lucid has no batching rules: the wrapper calls `func` once per index of the mapped
    dimension (a Python loop) and stacks the outputs, so any op works, nested vmap and
    vmap(grad(f)) included, at the cost of one call per sample. `in_dims` is an int, or a tuple
    with one entry per positional argument, each an int, None (not mapped) or a nested
    tuple/list/dict matching that argument. `randomness="error"` raises when the default
    generator is drawn from; "same" replays its state for every sample; "different" lets it
    run on. `chunk_size` is checked and changes nothing (every sample is its own chunk).

    Example::

        lucid.func.vmap(lucid.dot)(a, b)   # row-wise dot products of (B, n) matrices
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        flat_args, batch_size, args_spec, flat_in_dims = _batched_inputs(func, in_dims, args)
        if batch_size == 0:
            return _empty_outputs(func, out_dims, flat_args, flat_in_dims, args_spec, kwargs)
        state = get_rng_state() if randomness in ("error", "same") else None
        results = []
        for index in range(batch_size):
            if randomness == "same":
                set_rng_state(state)
            sample = [
                arg if dim is None else arg.select(dim, index)
                for arg, dim in zip(flat_args, flat_in_dims)
            ]
            results.append(func(*tree_unflatten(sample, args_spec), **kwargs))
            if randomness == "error" and not np.array_equal(get_rng_state().numpy(), state.numpy()):
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
        return _stack_outputs(func, out_dims, results)

    return wrapped


def _empty_outputs(
    func: Callable[..., Any],
    out_dims: Any,
    flat_args: list,
    flat_in_dims: list,
    args_spec: Any,
    kwargs: dict,
) -> Any:
    """A mapped dimension of size 0: func runs once on a zero sample, for the outputs' structure
    and shapes, and each mapped output is empty along its out_dim (as torch's are)."""
    sample = [
        arg if dim is None else arg.new_zeros(arg.shape[:dim] + arg.shape[dim + 1 :])
        for arg, dim in zip(flat_args, flat_in_dims)
    ]
    result = func(*tree_unflatten(sample, args_spec), **kwargs)
    stacked = _stack_outputs(func, out_dims, [result])
    flat_stacked, spec = tree_flatten(stacked)
    flat_out_dims = broadcast_prefix(out_dims, result)
    emptied = [
        value if dim is None else value.narrow(dim, 0, 0)
        for value, dim in zip(flat_stacked, flat_out_dims)
    ]
    return tree_unflatten(emptied, spec)


def _batched_inputs(func: Callable[..., Any], in_dims: Any, args: tuple) -> tuple:
    """(flat args, batch size, args' spec, flat in_dims), with torch's checks."""
    prefix = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, int) and not isinstance(in_dims, tuple):
        raise ValueError(
            f"{prefix}: expected `in_dims` to be int or a (potentially nested) tuple matching "
            f"the structure of inputs, got: {type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, args)
    if flat_in_dims is None:
        raise ValueError(
            f"{prefix}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {tree_flatten(in_dims)[1]} but inputs has structure {args_spec}."
        )
    normalized = []
    sizes = []
    for arg, dim in zip(flat_args, flat_in_dims):
        if dim is not None and not (isinstance(dim, int) and not isinstance(dim, bool)):
            raise ValueError(
                f"{prefix}: Got in_dim={dim} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if dim is not None and not isinstance(arg, Tensor):
            raise ValueError(
                f"{prefix}: Got in_dim={dim} for an input but the input is of type "
                f"{type(arg)}. We cannot vmap over non-Tensor arguments, please use None as the "
                "respective in_dim"
            )
        if dim is not None and not -arg.dim() <= dim < arg.dim():
            raise ValueError(
                f"{prefix}: Got in_dim={dim} for some input, but that input is a Tensor of "
                f"dimensionality {arg.dim()} so expected in_dim to satisfy "
                f"-{arg.dim()} <= in_dim < {arg.dim()}."
            )
        if dim is not None:
            dim = dim % arg.dim()
            sizes.append(arg.shape[dim])
        normalized.append(dim)
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return flat_args, sizes[0], args_spec, normalized


def _stack_outputs(func: Callable[..., Any], out_dims: Any, results: list[Any]) -> Any:
    name = _name(func)
    if not _is_out_dims(out_dims):
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
            "python collection of ints representing where in the outputs the vmapped "
            "dimension should appear."
        )
    flat_first, output_spec = tree_flatten(results[0])
    flat_out_dims = broadcast_prefix(out_dims, results[0])
    if flat_out_dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {output_spec}."
        )
    flat_results = [tree_flatten(result)[0] for result in results]
    stacked = []
    for position, dim in enumerate(flat_out_dims):
        if dim is None:
            # Not mapped: torch rejects an output that depends on the mapped inputs. A loop
            # cannot see dependence, so samples that differ stand for it.
            first = flat_first[position]
            if isinstance(first, Tensor) and not _all_equal([f[position] for f in flat_results]):
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim "
                    "is None"
                )
            stacked.append(first)
            continue
        column = [flat[position] for flat in flat_results]
        for value in column:
            if not isinstance(value, Tensor):
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                    f"{type(value)}. Did you mean to set out_dims= to None for output?"
                )
        stacked.append(stack(column, dim=dim))
    return tree_unflatten(stacked, output_spec)


def _all_equal(values: list[Any]) -> bool:
    first = values[0].detach().numpy()
    return all(
        isinstance(value, Tensor) and np.array_equal(value.detach().numpy(), first)
        for value in values[1:]
    )


def _is_out_dims(out_dims: Any) -> bool:
    if out_dims is None or (isinstance(out_dims, int) and not isinstance(out_dims, bool)):
        return True
    if isinstance(out_dims, (tuple, list)):
        return all(_is_out_dims(dim) for dim in out_dims)
    return False
