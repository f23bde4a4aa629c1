"""Forward-mode automatic differentiation with dual tensors, as `torch.autograd.forward_ad`.

Example::

    import lucid.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = model(x)
        jvp = fwAD.unpack_dual(y).tangent  # J(primal) @ tangent

How tangents are computed. While a dual level is open, an observer sees every op (the same
instrumentation point as the profiler and the sentinel, so `Function.apply` pays nothing
outside a level). After an op whose inputs carry tangents, it computes the outputs' tangents
by the first of these rules that applies:

1. a custom `Function`'s own `jvp` (and `ctx.save_for_forward`), as PyTorch calls it;
2. an elementwise op: its Jacobian is diagonal, so J t equals J^T t, and the op's own
   backward, handed the tangent, computes it (exact for an input of the output's shape);
3. an op linear in its floating-point tensors (views, reductions, joins, padding, pooling by
   averaging): the op itself, applied to the tangents;
4. a product, linear in each factor (mul, the matmul family): the sum of the op with one
   factor replaced by its tangent;
5. an op with a rule of its own (div, addmm, convolution, softmax, log_softmax, and the
   nuclear norm, whose backward is not differentiable);
6. every other op: derived from its backward. The vjp g(u) = J^T u is linear in u, so J t is
   the vjp of g at cotangent t (the double-vjp trick, applied to the one op). It costs a
   second forward of the op and two backward passes through it, and is correct wherever the
   op's backward is itself differentiable (every op whose catalogue row has gradgradcheck).

Rules 2-5 are the fast path for the ops models are made of; rule 6 makes every other op
correct without a hand-written rule per op (a second copy of each derivative to keep in
step with the backward). A dual level belongs to the thread that opened it, as observers do.
"""

from __future__ import annotations

import threading
import weakref
from collections import namedtuple
from collections.abc import Iterator
from typing import Any

import numpy as np

from lucid._core import graph, observers
from lucid._core.dtypes import FLOAT_KINDS, from_numpy_dtype
from lucid._core.engine import grad as _autograd_grad
from lucid._core.function import Function, op_name
from lucid._core.grad_mode import _DecoratorContextManager, enable_grad, local_state
from lucid._core.random import default_generator
from lucid._core.tensor import TensorBase, _wrap

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "The primal and tangent of a dual tensor, as `unpack_dual` returns."

_thread = threading.local()


def _current_level() -> _DualLevel | None:
    return getattr(_thread, "level", None)


# ------------------------------------------------------------------------------- levels
def enter_dual_level() -> int:
    """Open a dual level and return its number; PyTorch supports one level at a time."""
    if _current_level() is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _DualLevel()
    _thread.level = level
    observers.add_observer(level)
    graph.saved_output_unpacked = _pass_tangent
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made in it is dropped."""
    current = _current_level()
    if current is None or level not in (None, 0):
        raise RuntimeError("Dual level must be a positive number.")
    observers.remove_observer(current)
    current.tangents.clear()
    _thread.level = None
    graph.saved_output_unpacked = None


class dual_level(_DecoratorContextManager):  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) for a dual level: tangents live until it exits."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc_info: Any) -> None:
        exit_dual_level()


_NO_COMPLEX_TANGENTS = (
    "lucid.autograd.forward_ad carries tangents of real tensors only: forward-mode AD through "
    "complex values is not supported (reverse mode is)"
)


def make_dual(tensor: TensorBase, tangent: TensorBase, *, level: int | None = None) -> Any:
    """A view of `tensor` that carries `tangent` as its forward gradient."""
    current = _current_level()
    if current is None or level not in (None, 0):
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not isinstance(tangent, TensorBase):
        raise AttributeError(
            f"'{type(tangent).__name__}' object has no attribute 'is_floating_point'"
        )
    if not isinstance(tensor, TensorBase):
        raise AttributeError(
            f"'{type(tensor).__name__}' object has no attribute 'is_floating_point'"
        )
    if tangent._data.dtype.kind == "c" or tensor._data.dtype.kind == "c":
        raise NotImplementedError(_NO_COMPLEX_TANGENTS)
    if tangent._data.dtype.kind not in FLOAT_KINDS:
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {_dtype(tangent)}"
        )
    if tensor._data.dtype.kind not in FLOAT_KINDS:
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {_dtype(tensor)}"
        )
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}."
        )
    if current.tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            "same level 0 is not supported."
        )
    with current.paused():
        dual = tensor.view_as(tensor)
    current.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: TensorBase, *, level: int | None = None) -> UnpackedDualTensor:
    """`(primal, tangent)` of a dual tensor: a view without the tangent, and the tangent (None
    for a tensor that has none, or outside a level)."""
    if not isinstance(tensor, TensorBase):
        raise TypeError(
            "_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    current = _current_level()
    tangent = None if current is None else current.tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with current.paused():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def tangent_of(tensor: TensorBase) -> TensorBase | None:
    """The tangent `tensor` carries in the open dual level, if any (for printing)."""
    current = _current_level()
    return None if current is None else current.tangent_of(tensor)


def _pass_tangent(stored: TensorBase, alias: TensorBase) -> None:
    current = _current_level()
    tangent = None if current is None else current.tangent_of(stored)
    if tangent is not None:
        current.set_tangent(alias, tangent)


def tangent_level_is_open() -> bool:
    """Whether this thread has an open dual level (forward mode supports one at a time)."""
    return _current_level() is not None


def _dtype(tensor: TensorBase) -> str:
    return str(from_numpy_dtype(tensor._data.dtype))


# ---------------------------------------------------------------------- the observer
class _DualLevel:
    """The open level: the tangents it holds (by tensor identity, dropped with the tensor)
    and the observer that gives each op's outputs theirs."""

    def __init__(self) -> None:
        self.tangents: dict[int, tuple[weakref.ref, TensorBase]] = {}
        self.active = True
        # What the derived rule (6) needs of an op whose forward may write its inputs: their
        # values and the generator's state from before it ran.
        self.before: dict[int, tuple[list, Any]] = {}

    @staticmethod
    def _forget(tangents: dict, key: int) -> Any:
        def callback(reference: weakref.ref) -> None:
            entry = tangents.get(key)
            if entry is not None and entry[0] is reference:
                del tangents[key]

        return callback

    def set_tangent(self, tensor: TensorBase, tangent: TensorBase) -> None:
        key = id(tensor)
        self.tangents[key] = (weakref.ref(tensor, self._forget(self.tangents, key)), tangent)

    def tangent_of(self, tensor: Any) -> TensorBase | None:
        entry = self.tangents.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return None
        return entry[1]

    def paused(self) -> _Paused:
        return _Paused(self)

    # The observer protocol (lucid._core.observers).
    def before_forward(self, node: Any, inputs: tuple) -> None:
        if not self.active or not self.tangents:
            return
        cls = node.function
        kind = _rule_for(cls)[0]
        writes = _may_write(cls)
        if kind in _NO_PRIMALS_NEEDED or not (writes or kind == _DERIVED):
            return
        if any(self.tangent_of(a) is not None for a in _flat_tensors(inputs)):
            values = [a._data.copy() for a in _flat_tensors(inputs)] if writes else None
            self.before[id(node)] = (values, default_generator.get_state())

    def on_forward_error(self, node: Any, error: BaseException) -> None:
        self.before.pop(id(node), None)

    def after_forward(self, node: Any, inputs: tuple, outputs: tuple) -> None:
        if not self.active:
            return
        before = self.before.pop(id(node), None)
        if not self.tangents:
            return
        tangents = [self._tangent_or_tuple(arg) for arg in inputs]
        if all(t is None for t in tangents):
            return
        if any(isinstance(out, TensorBase) and out._data.dtype.kind == "c" for out in outputs):
            # a tangent would flow into complex values, which no rule here carries
            raise NotImplementedError(_NO_COMPLEX_TANGENTS)
        targets = [
            index
            for index, out in enumerate(outputs)
            if isinstance(out, TensorBase) and out._data.dtype.kind in FLOAT_KINDS
        ]
        if not targets:
            return
        self.active = False
        try:
            result = _output_tangents(node, inputs, outputs, tangents, before)
            for index in targets:
                output, tangent = outputs[index], result[index]
                if tangent is None:
                    tangent = _zeros_like(output)
                elif tangent._data.shape != output._data.shape:
                    # A rule's sum of broadcast terms (the bias of addmm alone).
                    tangent = tangent.expand(output._data.shape)
                self.set_tangent(output, tangent)
                self._follow_saved_output(node, index, tangent)
        finally:
            self.active = True

    def _follow_saved_output(self, node: Any, index: int, tangent: TensorBase) -> None:
        """A recorded node keeps a saved output as an alias of its own: the alias carries the
        output's tangent, so a backward run inside the level (forward over reverse) sees it."""
        for stored, output_nr in zip(node.saved or (), node.saved_output_nrs):
            if output_nr == index and stored is not None:
                self.set_tangent(stored, tangent)

    def _tangent_or_tuple(self, arg: Any) -> Any:
        if isinstance(arg, TensorBase):
            return self.tangent_of(arg)
        if isinstance(arg, (list, tuple)):
            found = [self.tangent_of(a) if isinstance(a, TensorBase) else None for a in arg]
            if any(t is not None for t in found):
                return found
        return None


class _Paused:
    def __init__(self, level: _DualLevel) -> None:
        self.level = level

    def __enter__(self) -> None:
        self.previous = self.level.active
        self.level.active = False

    def __exit__(self, *exc_info: Any) -> None:
        self.level.active = self.previous


def _flat_tensors(inputs: tuple) -> Iterator[TensorBase]:
    for arg in inputs:
        if isinstance(arg, TensorBase):
            yield arg
        elif isinstance(arg, (list, tuple)):
            yield from (a for a in arg if isinstance(a, TensorBase))


def _zeros_like(tensor: TensorBase) -> TensorBase:
    return _wrap(np.zeros_like(tensor._data))


def _is_tensor(value: Any) -> bool:
    return isinstance(value, TensorBase)


def _is_float_tensor(value: Any) -> bool:
    return isinstance(value, TensorBase) and value._data.dtype.kind in FLOAT_KINDS


# ------------------------------------------------------------------------------- rules
def _output_tangents(node: Any, inputs: tuple, outputs: tuple, tangents: list, before: Any) -> list:
    """One tangent (or None for zero) per output of the op `node` recorded."""
    cls = node.function
    kind, base = _rule_for(cls)
    if node.dirty_tensors and kind not in _NO_PRIMALS_NEEDED:
        # The inputs were overwritten: the derived rule reruns the op on their old values.
        if before is None or before[0] is None:
            raise RuntimeError(
                f"forward-mode AD through the in-place op '{op_name(cls)}' is not supported; "
                "use its out-of-place form"
            )
        kind = _DERIVED
    if any(isinstance(t, list) for t in tangents) and kind not in (_LINEAR, _DERIVED):
        kind = _DERIVED
    if kind == _CUSTOM_JVP:
        return _custom_jvp(node, inputs, outputs, tangents)
    if kind == _ELEMENTWISE:
        result = _elementwise(node, inputs, outputs, tangents)
        if result is not None:
            return result
        kind = _DERIVED
    if kind == _LINEAR:
        operands = next((_SCALAR_OPERANDS[c] for c in base.__mro__ if c in _SCALAR_OPERANDS), ())
        args = _substitute_all(inputs, tangents, operands, base in _VALUE_TENSORS)
        return _as_list(base.apply(*args), len(outputs))
    if kind == _PRODUCT:
        return [_product(base, inputs, tangents)] + [None] * (len(outputs) - 1)
    if kind == _OWN:
        return _OWN_RULES[base](base, inputs, outputs, tangents)
    if kind == _UNSUPPORTED:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )
    return _derived(node, inputs, outputs, tangents, before)


def _no_rule(cls: type) -> NotImplementedError:
    return NotImplementedError(
        f"Trying to use forward AD with {op_name(cls)} that does not support it because it has "
        "not been implemented yet."
    )


def _as_list(result: Any, count: int) -> list:
    result = list(result) if isinstance(result, tuple) else [result]
    return result + [None] * (count - len(result))


def _custom_jvp(node: Any, inputs: tuple, outputs: tuple, tangents: list) -> list:
    grad_inputs = [
        (t if t is not None else _zeros_like(a)) if isinstance(a, TensorBase) else None
        for a, t in zip(inputs, tangents)
    ]
    saved = getattr(node, "saved_for_forward", None)
    previous = (node.saved, node.to_save)
    if saved is not None:
        node.saved, node.to_save = None, saved
    try:
        result = node.function.jvp(node, *grad_inputs)
    finally:
        node.saved, node.to_save = previous
    return _as_list(result, len(outputs))


def _elementwise(node: Any, inputs: tuple, outputs: tuple, tangents: list) -> list | None:
    """Rule 2: the sum over tangent inputs of backward(ctx, t) at that input, or None when an
    input with a tangent is broadcast (its Jacobian is then not square)."""
    output = outputs[0]
    if len(outputs) != 1:
        return None
    for arg, tangent in zip(inputs, tangents):
        if tangent is not None and arg._data.shape != output._data.shape:
            return None
    needs = node.needs_input_grad
    total = None
    try:
        for position, tangent in enumerate(tangents):
            if tangent is None:
                continue
            node.needs_input_grad = tuple(i == position for i in range(len(inputs)))
            grads = node.function.backward(node, tangent)
            part = grads[position] if isinstance(grads, tuple) else grads
            if part is None:
                continue
            total = part if total is None else total + part
    finally:
        node.needs_input_grad = needs
    return [total]


def _substitute_all(
    inputs: tuple, tangents: list, operands: tuple = (), all_values: bool = False
) -> list:
    """The op's arguments with every floating-point tensor replaced by its tangent (zeros
    where it has none), for a linear op; a number at one of its `operands` positions (the
    2 of x + 2) is a constant, whose tangent is 0. Integer tensors are indices and stay,
    unless `all_values` (the blocks of block_diag), when they are zeros too."""
    is_value = _is_tensor if all_values else _is_float_tensor
    args = []
    for position, (arg, tangent) in enumerate(zip(inputs, tangents)):
        if position in operands and not isinstance(arg, TensorBase):
            args.append(0)
            continue
        if isinstance(tangent, list):
            args.append(
                type(arg)(
                    t if t is not None else (_zeros_like(a) if is_value(a) else a)
                    for a, t in zip(arg, tangent)
                )
            )
        elif tangent is not None:
            args.append(tangent)
        elif is_value(arg):
            args.append(_zeros_like(arg))
        else:
            args.append(arg)
    return args


def _product(base: type[Function], inputs: tuple, tangents: list) -> Any:
    """Rule 4: sum over factors of the op with that factor replaced by its tangent."""
    total = None
    for position, tangent in enumerate(tangents):
        if tangent is None:
            continue
        args = list(inputs)
        args[position] = tangent
        part = base.apply(*args)
        total = part if total is None else total + part
    return total


def _derived(node: Any, inputs: tuple, outputs: tuple, tangents: list, before: Any) -> list:
    """Rule 6: J t as the vjp of the op's vjp, on a rerun of the op from fresh leaves."""
    cls = node.function
    values, rng_state = before if before is not None else (None, None)
    copies = iter(values) if values is not None else None
    leaves: list[TensorBase] = []
    leaf_tangents: list[TensorBase] = []
    leaves_of_user: list[TensorBase] = []

    def substitute(arg: TensorBase, tangent: TensorBase | None) -> TensorBase:
        data = next(copies) if copies is not None else arg._data
        if tangent is None:
            return _wrap(data) if copies is not None else arg.detach()
        leaf_tangents.append(tangent)
        if arg.requires_grad and copies is None:
            # Differentiated from the input itself, the tangent stays differentiable with
            # respect to it (reverse over forward).
            leaves.append(arg)
            leaves_of_user.append(arg)
            return arg
        leaf = _wrap(data)
        leaf.requires_grad_(True)
        leaves.append(leaf)
        # An op that writes its input may not write a leaf that requires grad: a copy.
        return leaf.clone() if node.dirty_tensors else leaf

    after_state = None
    if rng_state is not None:
        # A random op redraws the numbers its first run drew; the stream then goes on from
        # where the first run left it.
        after_state = default_generator.get_state()
        default_generator.set_state(rng_state)
    try:
        with enable_grad():
            args = []
            for arg, tangent in zip(inputs, tangents):
                if isinstance(arg, TensorBase):
                    args.append(substitute(arg, tangent))
                elif isinstance(arg, (list, tuple)) and any(isinstance(a, TensorBase) for a in arg):
                    parts = tangent if isinstance(tangent, list) else [None] * len(arg)
                    args.append(
                        type(arg)(
                            substitute(a, t) if isinstance(a, TensorBase) else a
                            for a, t in zip(arg, parts)
                        )
                    )
                else:
                    args.append(arg)
            rerun = _as_list(cls.apply(*args), len(outputs))
            differentiable = [
                (index, out)
                for index, out in enumerate(rerun)
                if isinstance(out, TensorBase) and out.requires_grad
            ]
            if not differentiable or not leaves:
                return [None] * len(outputs)
            cotangents = []
            for _, out in differentiable:
                # g(u) = J^T u is linear in u, so any u serves; ones, not zeros, keep away
                # from backward formulas singular at a zero cotangent (log|u| in logcumsumexp).
                cotangent = _wrap(np.ones_like(out._data))
                cotangent.requires_grad_(True)
                cotangents.append(cotangent)
            vjps = _autograd_grad(
                [out for _, out in differentiable],
                leaves,
                cotangents,
                create_graph=True,
                allow_unused=True,
            )
            pairs = []
            for vjp, tangent in zip(vjps, leaf_tangents):
                if vjp is None:
                    continue
                if vjp.requires_grad:
                    pairs.append((vjp, tangent))
                elif np.any(vjp._data != 0):
                    # J^T u did not record its dependence on u (a backward on raw arrays):
                    # J t cannot be read from it.
                    raise _no_rule(cls)
            if not pairs:
                return [None] * len(outputs)
            try:
                jvps = _autograd_grad(
                    [vjp for vjp, _ in pairs],
                    cotangents,
                    [tangent.to(vjp.dtype) for vjp, tangent in pairs],
                    create_graph=local_state.enabled
                    and any(t.requires_grad for t in leaf_tangents + leaves_of_user),
                    allow_unused=True,
                )
            except RuntimeError as error:
                # A backward that is not itself differentiable: no rule can be derived.
                if str(error).startswith("derivative for"):
                    raise _no_rule(cls) from error
                raise
    finally:
        if after_state is not None:
            default_generator.set_state(after_state)
    result: list = [None] * len(outputs)
    for (index, _), jvp in zip(differentiable, jvps):
        result[index] = jvp
    return result


# Rule 5: ops with a rule of their own: (op class, inputs, outputs, tangents) -> output tangents.
def _div_rule(op: type, inputs: tuple, outputs: tuple, tangents: list) -> list:
    b = inputs[1]
    ta, tb = tangents[0], tangents[1]
    (out,) = outputs
    total = None if ta is None else ta / b
    if tb is not None:
        part = -(out * tb) / b
        total = part if total is None else total + part
    return [total]


def _addmm_rule(op: type, inputs: tuple, outputs: tuple, tangents: list) -> list:
    bias, mat1, mat2, beta, alpha = inputs
    tbias, t1, t2 = tangents[:3]
    total = None
    if t1 is not None:
        total = t1 @ mat2
    if t2 is not None:
        part = mat1 @ t2
        total = part if total is None else total + part
    if total is not None and alpha != 1:
        total = total * alpha
    if tbias is not None:
        part = tbias if beta == 1 else tbias * beta
        total = part if total is None else total + part
    return [total]


def _convolution_rule(op: type, inputs: tuple, outputs: tuple, tangents: list) -> list:
    x, weight, bias, *options = inputs
    tx, tweight, tbias = tangents[:3]
    total = None
    if tx is not None:
        total = op.apply(tx, weight, tbias, *options)
        tbias = None
    if tweight is not None:
        part = op.apply(x, tweight, tbias, *options)
        total = part if total is None else total + part
    elif tbias is not None:
        shape = (1, -1) + (1,) * (x.dim() - 2)
        part = tbias.reshape(shape).expand_as(outputs[0])
        total = part if total is None else total + part
    return [total]


def _softmax_rule(op: type, inputs: tuple, outputs: tuple, tangents: list) -> list:
    (out,) = outputs
    t = tangents[0]
    dim = inputs[1]
    return [out * (t - (out * t).sum(dim, keepdim=True))]


def _log_softmax_rule(op: type, inputs: tuple, outputs: tuple, tangents: list) -> list:
    (out,) = outputs
    t = tangents[0]
    dim = inputs[1]
    return [t - (out.exp() * t).sum(dim, keepdim=True)]


def _nuclear_norm_rule(op: type, inputs: tuple, outputs: tuple, tangents: list) -> list:
    # d sum(svdvals(A)) = <U V^T, dA>, summed over the two matrix dims (A of full rank)
    x, dims, keepdim = inputs
    u, _, vh = np.linalg.svd(np.moveaxis(x._data, dims, (-2, -1)), full_matrices=False)
    direction = _wrap(np.moveaxis(u @ vh, (-2, -1), dims))
    return [(direction * tangents[0]).sum(tuple(dims), keepdim=keepdim)]


# ------------------------------------------------------------------------ rule table
_CUSTOM_JVP, _ELEMENTWISE, _LINEAR, _PRODUCT, _OWN, _DERIVED, _UNSUPPORTED = range(7)
# Rules that read no primal value, so an in-place op's overwritten inputs do not matter.
_NO_PRIMALS_NEEDED = (_LINEAR, _CUSTOM_JVP, _UNSUPPORTED)

_FAMILIES = {
    _ELEMENTWISE: {
        "pointwise": (
            "Exp Expm1 Log Logit Log1p Log2 Log10 Sqrt Rsqrt Abs Sign Sin Cos Tan Tanh "
            "TanhBackward Sinh Cosh Asin Acos Atan Atan2 Erf Erfc Floor Ceil Trunc Round "
            "RoundDecimals Lerp LerpTensor NanToNum Clamp ClampTensor Sgn Frac Sinc LogAddExp "
            "LogAddExp2 Hypot Copysign CopysignScalar Xlogy XlogyScalarSelf XlogyScalarOther "
            "Heaviside NextAfter ClampMin ClampMax ClampMinTensor ClampMaxTensor Lgamma "
            "Polygamma Digamma Mvlgamma Igamma Igammac Erfinv I0 I1 Asinh Acosh Atanh Exp2"
        ),
        "activations": (
            "Sigmoid SigmoidBackward LogSigmoid Relu LeakyRelu LeakyReluSavingResult Elu Celu "
            "EluSavingResult CeluSavingResult Gelu GeluBackward Silu Softplus Mish Hardtanh "
            "Hardsigmoid Hardswish RreluWithNoise RreluWithNoiseSavingResult PreluKernel"
        ),
        "arithmetic": (
            "PowTensor PowScalarBase Pow Reciprocal Maximum Minimum Fmod FmodTensor Remainder "
            "RemainderTensor RemainderScalarDividend Addcmul Addcdiv Ldexp Fmax Fmin "
            "DivRounding FloorDivide"
        ),
        "special_functions": "Entr LogNdtr Xlog1py Erfcx Ndtri I0e I1e Zeta",
    },
    _LINEAR: {
        "arithmetic": "Add Sub Rsub RsubScalar Neg MulScalar DivScalar",
        "pointwise": "_ScaleBy Deg2Rad Rad2Deg Where",
        "fills": "To Clone CloneChannelsLast",
        "shape": (
            "View UnsafeView Squeeze SqueezeDim SqueezeDims Unsqueeze Transpose T Permute "
            "Expand Repeat Flip Roll Rot90 Unfold"
        ),
        "reduction": "Sum SumDim Mean MeanDim",
        "cumulative": "Cumsum ReverseCumsum",
        "indexing": "Index Select Slice UnsqueezeIndex Alias Gather IndexSelect Take",
        "matrices": "Diagonal DiagonalCopy DiagEmbed Trace Tril Triu BlockDiag",
        "joining": "Cat Stack Split SplitWithSizes Unbind",
        "sampling": (
            "ReflectionPad1D ReflectionPad2D ReflectionPad3D ReplicationPad1D ReplicationPad2D "
            "ReplicationPad3D CircularPad UpsampleNearest1D UpsampleNearest2D UpsampleNearest3D "
            "UpsampleNearestExact1D UpsampleNearestExact2D UpsampleNearestExact3D "
            "UpsampleLinear1D UpsampleBilinear2D UpsampleTrilinear3D UpsampleBicubic2D "
            "PixelShuffle PixelUnshuffle ChannelShuffle"
        ),
        "pooling": "AvgPool2D AvgPool3D AdaptiveAvgPool2D AdaptiveAvgPool3D",
        "convolution": "Im2Col Col2Im Unfold Fold",
    },
    _PRODUCT: {
        "arithmetic": "Mul",
        "products": "MatMul Vdot",
    },
}
_OWN_RULES_BY_NAME = {
    ("arithmetic", "Div"): _div_rule,
    ("products", "Addmm"): _addmm_rule,
    ("convolution", "Convolution"): _convolution_rule,
    ("activations", "Softmax"): _softmax_rule,
    ("activations", "LogSoftmax"): _log_softmax_rule,
    ("reduction", "NuclearNorm"): _nuclear_norm_rule,
}
# Linear ops whose operands at these positions may be numbers (x + 2, where(c, x, 0.5)).
_SCALAR_OPERANDS_BY_NAME = {
    ("arithmetic", "Add"): (0, 1),
    ("arithmetic", "Sub"): (0, 1),
    ("pointwise", "Where"): (1, 2),
}
_SCALAR_OPERANDS: dict[type, tuple] = {}
# Linear ops whose every tensor is a value, integer ones too (no index among them).
_VALUE_TENSORS_BY_NAME = (("matrices", "BlockDiag"), ("joining", "Cat"), ("joining", "Stack"))
_VALUE_TENSORS: set[type] = set()
_OWN_RULES: dict[type, Any] = {}
_REGISTERED: dict[type, int] = {}
_rules: dict[type, tuple[int, type]] = {}


def _register() -> None:
    import importlib

    for kind, families in _FAMILIES.items():
        for module_name, names in families.items():
            module = importlib.import_module(f"lucid.ops.{module_name}")
            for name in names.split():
                _REGISTERED[getattr(module, name)] = kind
    for (module_name, name), positions in _SCALAR_OPERANDS_BY_NAME.items():
        _SCALAR_OPERANDS[getattr(importlib.import_module(f"lucid.ops.{module_name}"), name)] = (
            positions
        )
    for module_name, name in _VALUE_TENSORS_BY_NAME:
        _VALUE_TENSORS.add(getattr(importlib.import_module(f"lucid.ops.{module_name}"), name))
    for (module_name, name), rule in _OWN_RULES_BY_NAME.items():
        cls = getattr(importlib.import_module(f"lucid.ops.{module_name}"), name)
        _REGISTERED[cls] = _OWN
        _OWN_RULES[cls] = rule


def _rule_for(cls: type) -> tuple[int, type]:
    """(rule kind, the registered class it comes from) for an op's Function class."""
    rule = _rules.get(cls)
    if rule is not None:
        return rule
    if not _REGISTERED:
        _register()
    if cls.jvp is not Function.jvp:
        rule = (_CUSTOM_JVP, cls)
    else:
        # An in-place form (exp_) or a subclass (Mm of MatMul) takes its base's rule.
        registered = next((base for base in cls.__mro__ if base in _REGISTERED), None)
        if registered is not None:
            rule = (_REGISTERED[registered], registered)
        elif cls.__module__.startswith("lucid."):
            rule = (_DERIVED, cls)
        else:
            rule = (_UNSUPPORTED, cls)
    _rules[cls] = rule
    return rule


_may_write_cache: dict[type, bool] = {}


def _may_write(cls: type) -> bool:
    """Whether an op may write one of its inputs (an in-place op), judged by its name."""
    writes = _may_write_cache.get(cls)
    if writes is None:
        name = cls.__name__
        writes = _may_write_cache[cls] = (
            "Inplace" in name
            or op_name(cls).endswith("_")
            or name in ("CopySlices", "IndexPut", "IndexPutValues", "Put", "MaskedScatter")
        )
    return writes
