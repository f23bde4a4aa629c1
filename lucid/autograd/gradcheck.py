"""gradcheck / gradgradcheck: compare analytical gradients with finite differences."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lucid._core.engine import grad
from lucid._core.function import Function
from lucid._core.tensor import Size, _wrap
from lucid._tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

# Fast mode's projection vectors and gradgradcheck's grad_outputs come from private generators
# with fixed seeds: a check is reproducible and leaves the user's random state alone.
_PROJECTION_SEED = 0
_GRAD_OUTPUTS_SEED = 0

_NONDETERMINISM_NOTE = (
    "\n\nNOTE: if the backward is nondeterministic by design, pass nondet_tol=<tol> to "
    "gradcheck or gradgradcheck to allow results of repeated runs to differ by that much."
)
_UNDEFINED_GRAD_NOTE = (
    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def gradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of `func` at `inputs` against central finite differences.

    Each input that requires grad is perturbed in place by ±`eps`, one element at a time,
    and the numerical Jacobian must match the one assembled row by row from backward:
    `|analytical - numerical| <= atol + rtol * |numerical|`. Use float64 inputs. With
    `fast_mode` both Jacobians are projected on random vectors (v^T J u) instead. Forward-mode
    and batched (vmap) checks do not exist in lucid; `masked` only matters for sparse inputs,
    which lucid does not have.

    Example::

        x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
        lucid.autograd.gradcheck(lambda t: (t * t).exp(), (x,))   # True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    _reject_unsupported(
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=check_batched_forward_grad,
    )
    try:
        _run_checks(
            func,
            inputs,
            eps,
            atol,
            rtol,
            nondet_tol,
            check_undefined_grad,
            check_grad_dtypes,
            fast_mode,
            check_forward_ad,
            check_backward_ad,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> gradients of `func`.

    Without `grad_outputs`, random ones in [-1, 1) are drawn from a fixed seed (made
    non-contiguous with `gen_non_contig_grad_outputs`); they are inputs of the checked
    function too, so the derivative with respect to them is checked as well.

    Example::

        x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
        lucid.autograd.gradgradcheck(lambda t: (t * t).exp(), (x,))   # True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    _reject_unsupported(check_batched_grad=check_batched_grad)
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        generator = np.random.default_rng(_GRAD_OUTPUTS_SEED)
        tupled_grad_outputs = tuple(
            _random_grad_output(output, generator, gen_non_contig_grad_outputs)
            for output in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    input_count = len(tupled_inputs)
    # Positions that require grad are remembered so the checked function can differentiate
    # with respect to exactly those, whatever the caller passed.
    diff_input_indices = [
        i for i, x in enumerate(tupled_inputs) if isinstance(x, Tensor) and x.requires_grad
    ]
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def first_derivative(*args: Any) -> tuple[Tensor, ...]:
        input_args = args[:input_count]
        grad_args = args[input_count:]
        for index in diff_input_indices:
            _ensure_requires_grad(input_args[index])
        for index in diff_grad_output_indices:
            _ensure_requires_grad(grad_args[index])
        outputs = _differentiable_outputs(func(*input_args))
        grads = grad(
            outputs,
            [input_args[index] for index in diff_input_indices],
            grad_args,
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )


# --------------------------------------------------------------------------- driver
def _reject_unsupported(**options: bool) -> None:
    for name, value in options.items():
        if value:
            raise NotImplementedError(
                f"{name}=True is not supported by lucid: its vmap runs a loop, with no batched "
                "gradients of its own to check"
            )


@dataclass
class _Check:
    """The call under test, its first outputs, and the tolerances it is held to."""

    func: Callable[..., Any]
    inputs: tuple
    func_out: tuple
    eps: float
    atol: float
    rtol: float
    nondet_tol: float
    check_grad_dtypes: bool
    # Where the outputs checked are parts of complex ones, the words that say which part.
    message_prefix: str = ""

    @property
    def diff_indices(self) -> list[int]:
        """Positions of the inputs that require grad; 'input i' in messages counts these."""
        return [i for i, x in enumerate(self.inputs) if isinstance(x, Tensor) and x.requires_grad]

    @property
    def diff_inputs(self) -> list[Tensor]:
        return [self.inputs[i] for i in self.diff_indices]

    @property
    def output_positions(self) -> list[int]:
        """Positions in func_out of the outputs that require grad; 'output j' counts these."""
        return [i for i, o in enumerate(self.func_out) if isinstance(o, Tensor) and o.requires_grad]


def _run_checks(
    func: Callable[..., Any],
    inputs: Any,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
    fast_mode: bool,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
) -> None:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = _as_tuple(func(*tupled_inputs))
    if check_backward_ad and any(_is_complex(output) for output in func_out):
        # As PyTorch: a complex output is checked as two real functions, its real part and its
        # imaginary part, each against the complex inputs' conjugate Wirtinger derivatives.
        for part, take in (("real", _real_part), ("imaginary", _imag_part)):
            part_func = _on_complex_outputs(func, take)
            part_out = _as_tuple(part_func(*tupled_inputs))
            check = _Check(
                part_func, tupled_inputs, part_out, eps, atol, rtol, nondet_tol,
                check_grad_dtypes, f"While considering the {part} part of complex outputs only, ",
            )  # fmt: skip
            _backward_checks(check, fast_mode, check_undefined_grad)
        check_backward_ad = False
    check = _Check(func, tupled_inputs, func_out, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    if check_backward_ad:
        _backward_checks(check, fast_mode, check_undefined_grad)
    if check_forward_ad:
        _forward_check(check, fast_mode)


def _is_complex(value: Any) -> bool:
    return isinstance(value, Tensor) and value._data.dtype.kind == "c"


def _real_part(output: Tensor) -> Tensor:
    return output.real


def _imag_part(output: Tensor) -> Tensor:
    return output.imag


def _on_complex_outputs(func: Callable[..., Any], take: Callable[[Tensor], Tensor]) -> Any:
    def part_of_outputs(*args: Any) -> tuple:
        return tuple(take(o) if _is_complex(o) else o for o in _as_tuple(func(*args)))

    return part_of_outputs


def _backward_checks(check: _Check, fast_mode: bool, check_undefined_grad: bool) -> None:
    if fast_mode:
        _fast_check(check)
    else:
        _slow_check(check)
    _check_backward_scales_with_grad_output(
        _differentiable_outputs(check.func_out), check.diff_inputs
    )
    if check_undefined_grad:
        _check_undefined_grad(check.func, check.inputs, check.diff_inputs)


def _as_tuple(value: Any) -> tuple:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _differentiable_outputs(outputs: Any) -> tuple[Tensor, ...]:
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad)


def _check_inputs(inputs: tuple) -> None:
    has_input_requiring_grad = False
    for index, input in enumerate(inputs):
        if not (isinstance(input, Tensor) and input.requires_grad):
            continue
        if input._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{index} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=4,
            )
        # Perturbing one element of a tensor whose elements share memory moves several at once
        # (NumPy may give empty arrays zero strides; they have nothing to overlap).
        strides = zip(input.stride(), input.shape)
        if input._data.size and any(stride == 0 and size > 1 for stride, size in strides):
            raise RuntimeError(
                f"The {index}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck."
            )
        has_input_requiring_grad = True
    if not has_input_requiring_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )


def _random_grad_output(
    output: Tensor, generator: np.random.Generator, noncontiguous: bool
) -> Tensor:
    dtype = output._data.dtype if output._data.dtype.kind in "fc" else np.dtype(np.float64)
    shape = output._data.shape

    def draw(shape: tuple[int, ...]) -> np.ndarray:
        values = generator.uniform(-1.0, 1.0, shape)
        if dtype.kind == "c":
            values = values + 1j * generator.uniform(-1.0, 1.0, shape)
        return values.astype(dtype)

    if noncontiguous and output._data.size > 1:
        # Every other element of a buffer twice as wide along the last dimension.
        array = draw(shape[:-1] + (2 * shape[-1],))[..., ::2]
    else:
        array = draw(shape)
    return _wrap(array).requires_grad_()


def _ensure_requires_grad(tensor: Tensor) -> None:
    if not tensor.requires_grad:
        tensor.requires_grad_()


# ------------------------------------------------------------------ finite differences
def _evaluate(func: Callable[..., Any], inputs: tuple) -> list[np.ndarray | None]:
    """Copies of `func`'s float outputs (None for others), safe from the next perturbation."""
    results: list[np.ndarray | None] = []
    for output in _as_tuple(func(*inputs)):
        if isinstance(output, Tensor) and output._data.dtype.kind == "f":
            results.append(np.array(output._data, copy=True))
        else:
            results.append(None)
    return results


def _central_difference(
    func: Callable[..., Any],
    inputs: tuple,
    array: np.ndarray,
    index: Any,
    delta: Any,
    eps: float,
    position: tuple[int, ...] | None,
) -> list[np.ndarray | None]:
    """(f(x + delta) - f(x - delta)) / (2 eps) per output, flattened.

    `x[index]` is perturbed in the input's own storage, outside autograd (no version bump),
    and restored bit for bit afterwards.
    """
    original = np.array(array[index], copy=True)
    try:
        array[index] = original - delta
        before = _evaluate(func, inputs)
        array[index] = original + delta
        after = _evaluate(func, inputs)
    finally:
        array[index] = original
    differences: list[np.ndarray | None] = []
    for a, b in zip(before, after):
        if a is None or b is None:
            differences.append(None)
            continue
        _check_same_shape_and_dtype(a, b, eps, position)
        differences.append(((b - a) / (2 * eps)).reshape(-1))
    return differences


def _check_same_shape_and_dtype(
    a: np.ndarray, b: np.ndarray, eps: float, position: tuple[int, ...] | None
) -> None:
    on_index = f"on index {position} " if position is not None else ""
    if a.shape != b.shape:
        raise AssertionError(
            "Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"{on_index}by {eps}, but got: shapes {Size(a.shape)} and {Size(b.shape)}."
        )
    if a.dtype != b.dtype:
        raise AssertionError(
            "Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"{on_index}by {eps}, but got: dtypes {_wrap(a).dtype} and {_wrap(b).dtype}."
        )


def _numerical_jacobians(
    func: Callable[..., Any], inputs: tuple, input_index: int, func_out: tuple, eps: float
) -> list[np.ndarray | None]:
    """Per output of `func_out`: d output / d input as an (input numel, output numel) array."""
    array = inputs[input_index]._data
    is_complex = array.dtype.kind == "c"
    jacobians = [
        np.zeros((array.size, output._data.size), array.dtype if is_complex else output._data.dtype)
        if isinstance(output, Tensor) and output._data.dtype.kind == "f"
        else None
        for output in func_out
    ]
    for row, position in enumerate(np.ndindex(array.shape)):
        columns = _central_difference(func, inputs, array, position, eps, eps, position)
        if is_complex:
            # The conjugate Wirtinger derivative a real output's gradient is (PyTorch's
            # convention): d/dx + i d/dy, from a step along each part.
            imaginary = _central_difference(func, inputs, array, position, eps * 1j, eps, position)
            columns = [None if c is None else c + 1j * d for c, d in zip(columns, imaginary)]
        for jacobian, column in zip(jacobians, columns):
            if jacobian is not None and column is not None:
                jacobian[row] = column
    return jacobians


# ------------------------------------------------------------------------ backward
def _vjp(output: Tensor, diff_inputs: list[Tensor], grad_output: np.ndarray) -> tuple:
    return grad(output, diff_inputs, _wrap(grad_output), retain_graph=True, allow_unused=True)


def _stack_columns(
    columns_per_input: list[list[Tensor | None]], diff_inputs: list[Tensor], column_count: int
) -> tuple[list[np.ndarray], bool, bool]:
    """Assemble vjp results into (input numel, column_count) arrays; flag bad dtypes / sizes."""
    types_ok = sizes_ok = True
    jacobians = []
    for columns, input in zip(columns_per_input, diff_inputs):
        jacobian = np.zeros((input._data.size, column_count), input._data.dtype)
        for column, value in enumerate(columns):
            if value is None:
                continue
            if value._data.shape != input._data.shape:
                sizes_ok = False
                continue
            if value._data.dtype != input._data.dtype:
                types_ok = False
            jacobian[:, column] = value._data.reshape(-1)
        jacobians.append(jacobian)
    return jacobians, types_ok, sizes_ok


def _analytical_jacobians(
    check: _Check, output: Tensor, grad_outputs: list[np.ndarray]
) -> list[np.ndarray]:
    """One column per grad_output (a unit vector per element, or fast mode's single v).

    Backward runs twice with the same grad_outputs: results further apart than `nondet_tol`
    mean the backward is not reentrant.
    """
    diff_inputs = check.diff_inputs
    runs = []
    for _ in range(2):
        columns_per_input: list[list[Tensor | None]] = [[] for _ in diff_inputs]
        for grad_output in grad_outputs:
            for columns, value in zip(columns_per_input, _vjp(output, diff_inputs, grad_output)):
                columns.append(value)
        runs.append(_stack_columns(columns_per_input, diff_inputs, len(grad_outputs)))
    (jacobians, types_ok, sizes_ok), (repeated, _, _) = runs
    if not types_ok and check.check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for first, second in zip(jacobians, repeated):
        if first.size and np.max(np.abs(first - second)) > check.nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {check.nondet_tol}." + _NONDETERMINISM_NOTE
            )
    return jacobians


def _unit_grad_outputs(output: Tensor) -> list[np.ndarray]:
    units = []
    for flat_index in range(output._data.size):
        unit = np.zeros(output._data.shape, output._data.dtype)
        unit.reshape(-1)[flat_index] = 1
        units.append(unit)
    return units


def _mismatch_message(
    analytical: np.ndarray,
    numerical: np.ndarray,
    output_index: int,
    input_index: int,
    how: str = "",
) -> str:
    """PyTorch's message; `how` is " computed with forward mode" for the forward check."""
    return (
        f"Jacobian{how} mismatch for output {output_index:d} with respect to input "
        f"{input_index:d},\nnumerical:{_wrap(numerical)}\nanalytical:{_wrap(analytical)}\n"
    )


def _allclose(analytical: np.ndarray, numerical: np.ndarray, rtol: float, atol: float) -> bool:
    # |a - n| <= atol + rtol * |n|; NaN anywhere is a mismatch.
    return bool(np.allclose(analytical, numerical, rtol=rtol, atol=atol, equal_nan=False))


# ----------------------------------------------------------------------- slow mode
def _slow_check(check: _Check) -> None:
    numerical = [
        _numerical_jacobians(check.func, check.inputs, i, check.func_out, check.eps)
        for i in check.diff_indices
    ]
    if not check.output_positions:
        # Nothing is differentiable, so the function must not depend on its inputs.
        for per_output in numerical:
            for jacobian in per_output:
                if jacobian is not None and np.any(jacobian != 0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    for output_index, position in enumerate(check.output_positions):
        output = check.func_out[position]
        analytical = _analytical_jacobians(check, output, _unit_grad_outputs(output))
        for input_index, a in enumerate(analytical):
            n = numerical[input_index][position]
            if (a.size or n.size) and not _allclose(a, n, check.rtol, check.atol):
                raise GradcheckError(
                    check.message_prefix + _mismatch_message(a, n, output_index, input_index)
                )


# ----------------------------------------------------------------------- fast mode
def _projection_vector(tensor: Tensor, generator: np.random.Generator) -> np.ndarray:
    """A random unit vector with one entry per element of `tensor`, in its dtype (a complex
    one for a complex tensor: a direction in both parts)."""
    vector = generator.random(tensor._data.size)
    if tensor._data.dtype.kind == "c":
        vector = vector + 1j * generator.random(tensor._data.size)
    vector = vector.astype(tensor._data.dtype)
    norm = np.linalg.norm(vector)
    if norm > 0:
        vector /= norm
    return vector


def _fast_check(check: _Check) -> None:
    """Compare v^T J u, numerically (a directional difference along u) and from backward."""
    diff_inputs = check.diff_inputs
    outputs = [check.func_out[position] for position in check.output_positions]
    generator = np.random.default_rng(_PROJECTION_SEED)
    all_u = [_projection_vector(input, generator) for input in diff_inputs]
    all_v = [_projection_vector(output, generator) for output in outputs]

    directional = []
    for input, u in zip(diff_inputs, all_u):
        array = input._data
        delta = (u * check.eps).reshape(array.shape)
        directional.append(
            _central_difference(check.func, check.inputs, array, ..., delta, check.eps, None)
        )

    if not outputs:
        for per_output in directional:
            for jvp in per_output:
                if jvp is not None and jvp.size and np.max(np.abs(jvp)) > check.nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return

    analytical = []
    for output, v in zip(outputs, all_v):
        vector_jacobians = _analytical_jacobians(check, output, [v.reshape(output._data.shape)])
        # v^T J u for a complex input's direction u = a + ib is v^T (J_x a + J_y b), which the
        # gradient g = v^T (J_x + i J_y) gives as Re(conj(g) . u) (g . u for real inputs).
        analytical.append([np.vdot(vj[:, 0], u).real for vj, u in zip(vector_jacobians, all_u)])

    for input_index, u in enumerate(all_u):
        for output_index, (position, v) in enumerate(zip(check.output_positions, all_v)):
            a = np.asarray(analytical[output_index][input_index])
            n = np.asarray(v @ directional[input_index][position])
            # An elementwise atol on J grows to atol * sum(u) * sum(v) on v^T J u.
            projected_atol = check.atol * float(np.abs(u).sum()) * float(np.abs(v).sum())
            if not _allclose(a, n, check.rtol, projected_atol):
                raise GradcheckError(
                    check.message_prefix
                    + _mismatch_message(a, n, output_index, input_index)
                    + _slow_mode_report(check, input_index, position)
                )


# ---------------------------------------------------------------------- forward mode
def _jvps(check: _Check, input_index: int, tangents: list[np.ndarray]) -> list[list]:
    """Per tangent of input `input_index`: the flattened output tangents (None for outputs
    that are not floating point), from forward-mode AD."""
    from lucid.autograd import forward_ad

    position = check.diff_indices[input_index]
    primal = check.inputs[position]
    columns = []
    for tangent in tangents:
        with forward_ad.dual_level():
            inputs = list(check.inputs)
            inputs[position] = forward_ad.make_dual(
                primal.detach(), _wrap(tangent.reshape(primal._data.shape))
            )
            outputs = _as_tuple(check.func(*inputs))
            column = []
            for output in outputs:
                if not (isinstance(output, Tensor) and output._data.dtype.kind == "f"):
                    column.append(None)
                    continue
                jvp = forward_ad.unpack_dual(output).tangent
                values = np.zeros(output._data.size) if jvp is None else jvp._data
                column.append(np.array(values, copy=True).reshape(-1))
        columns.append(column)
    return columns


def _forward_check(check: _Check, fast_mode: bool) -> None:
    """Compare the Jacobian forward mode gives (one jvp per input element, or J u in fast
    mode) with central differences."""
    generator = np.random.default_rng(_PROJECTION_SEED)
    for input_index, position in enumerate(check.diff_indices):
        primal = check.inputs[position]
        array = primal._data
        if fast_mode:
            u = _projection_vector(primal, generator)
            numerical = _central_difference(
                check.func,
                check.inputs,
                array,
                ...,
                (u * check.eps).reshape(array.shape),
                check.eps,
                None,
            )
            (analytical,) = _jvps(check, input_index, [u])
        else:
            numerical_jacobians = _numerical_jacobians(
                check.func, check.inputs, position, check.func_out, check.eps
            )
            units = [np.eye(1, array.size, k, dtype=array.dtype)[0] for k in range(array.size)]
            columns = _jvps(check, input_index, units)
        for output_index, out_position in enumerate(check.output_positions):
            if fast_mode:
                a, n = analytical[out_position], numerical[out_position]
                atol = check.atol * float(u.sum())
            else:
                n = numerical_jacobians[out_position]
                a = np.stack([column[out_position] for column in columns]) if columns else n
                atol = check.atol
            if a is None or n is None or not (a.size or n.size):
                continue
            if not _allclose(a, n, check.rtol, atol):
                raise GradcheckError(
                    _mismatch_message(
                        a, n, output_index, input_index, " computed with forward mode"
                    )
                )


def _slow_mode_report(check: _Check, input_index: int, position: int) -> str:
    """The full Jacobians of the failing pair, so a fast-mode failure can be read."""
    input_position = check.diff_indices[input_index]
    numerical = _numerical_jacobians(
        check.func, check.inputs, input_position, check.func_out, check.eps
    )[position]
    output = check.func_out[position]
    diff_inputs = check.diff_inputs
    columns: list[list[Tensor | None]] = [[] for _ in diff_inputs]
    for unit in _unit_grad_outputs(output):
        for column, value in zip(columns, _vjp(output, diff_inputs, unit)):
            column.append(value)
    analytical = _stack_columns(columns, diff_inputs, output._data.size)[0][input_index]
    max_difference = np.max(np.abs(numerical - analytical)) if numerical.size else 0.0
    report = (
        "\nThe quantities above are v^T J u for random unit vectors u and v (fast mode). "
        "The full Jacobians, recomputed in slow mode:\n\n"
        f"Numerical:\n {_wrap(numerical)}\nAnalytical:\n{_wrap(analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {max_difference}.\n"
    )
    if _allclose(analytical, numerical, check.rtol, check.atol):
        report += (
            "\nSlow mode would pass: every element is within tolerance, but the errors add up "
            "in the projection. Loosen atol/rtol for fast mode or run with fast_mode=False.\n"
        )
    return report


# ------------------------------------------------------------- backward contracts
def _check_backward_scales_with_grad_output(
    outputs: tuple[Tensor, ...], diff_inputs: list[Tensor]
) -> None:
    """A zero grad_output must give zero gradients of the right dtype and size."""
    if not outputs:
        return
    zeros = [_wrap(np.zeros(o._data.shape, o._data.dtype)) for o in outputs]
    grads = grad(outputs, diff_inputs, zeros, allow_unused=True)
    for value, input in zip(grads, diff_inputs):
        if value is None:
            continue
        if not np.all(value._data == 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if value._data.dtype != input._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if value._data.shape != input._data.shape:
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function):
    """Identity whose backward hands on no gradient at all (None), like an unused output."""

    _backward_name = "UndefinedGradBackward"

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return None


def _warn_undefined_grad_check() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled "
        "by default, but it may break existing callers of this function. If this is true for "
        'you, you can call this function with "check_undefined_grad=False" to disable the '
        "feature",
        stacklevel=5,
    )


def _check_undefined_grad(func: Callable[..., Any], inputs: tuple, diff_inputs: list) -> None:
    """Backward must cope with undefined (None) grads: all at once, and one output at a time."""
    outputs = _differentiable_outputs(func(*inputs))
    cases = [[_UndefinedGrad.apply(o) for o in outputs]]
    if len(outputs) > 1:
        for undefined_index in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            cases.append(
                [
                    _UndefinedGrad.apply(o) if i == undefined_index else o
                    for i, o in enumerate(fresh)
                ]
            )
    for case in cases:
        if not case:
            continue
        zeros = [_wrap(np.zeros(o._data.shape, o._data.dtype)) for o in case]
        try:
            grads = grad(case, diff_inputs, zeros, allow_unused=True)
        except RuntimeError as error:
            _warn_undefined_grad_check()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. "
                + _UNDEFINED_GRAD_NOTE
            ) from error
        for value in grads:
            if value is not None and not np.all(value._data == 0):
                _warn_undefined_grad_check()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    "undefined or zero. " + _UNDEFINED_GRAD_NOTE
                )
