"""Tensor: the public tensor class; TensorBase's state plus methods that delegate to lucid.ops."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lucid import factories as _factories
from lucid import ops as _ops
from lucid._core import dtypes
from lucid._core import engine as _engine
from lucid._core.tensor import _TYPE_NAMES, Size, TensorBase, _varargs_shape, register_tensor_class
from lucid._tensor_str import _format_tensor


class Tensor(TensorBase):
    """A multi-dimensional array that records the operations applied to it for autograd."""

    __slots__ = ()

    # Defining __eq__ (elementwise, below) would otherwise make tensors unhashable.
    def __hash__(self) -> builtins.int:
        return id(self)

    # Methods that are their op's function itself (the same signature, `self` as `input`); a
    # method whose signature or body differs is written out below.
    # dtype casts
    contiguous = _ops.contiguous
    # arithmetic
    add = _ops.add
    add_ = _ops.add_
    sub = _ops.sub
    sub_ = _ops.sub_
    mul = _ops.mul
    mul_ = _ops.mul_
    div = _ops.div
    div_ = _ops.div_
    neg = _ops.neg
    neg_ = _ops.neg_
    pow = _ops.pow
    pow_ = _ops.pow_
    reciprocal = _ops.reciprocal
    matmul = _ops.matmul
    mm = _ops.mm
    bmm = _ops.bmm
    mv = _ops.mv
    outer = _ops.outer
    addmm = _ops.addmm
    maximum = _ops.maximum
    minimum = _ops.minimum
    fmod = _ops.fmod
    remainder = _ops.remainder
    # pointwise
    exp = _ops.exp
    exp_ = _ops.exp_
    sqrt_ = _ops.sqrt_
    abs_ = _ops.abs_
    expm1 = _ops.expm1
    log = _ops.log
    logit = _ops.logit
    logit_ = _ops.logit_
    log1p = _ops.log1p
    log2 = _ops.log2
    log10 = _ops.log10
    sqrt = _ops.sqrt
    rsqrt = _ops.rsqrt
    abs = _ops.abs
    sign = _ops.sign
    sin = _ops.sin
    cos = _ops.cos
    tan = _ops.tan
    tanh = _ops.tanh
    sinh = _ops.sinh
    cosh = _ops.cosh
    asin = _ops.asin
    acos = _ops.acos
    atan = _ops.atan
    atan2 = _ops.atan2
    sigmoid = _ops.sigmoid
    relu_ = _ops.relu_
    diagonal = _ops.diagonal
    diag = _ops.diag
    trace = _ops.trace
    inner = _ops.inner
    clamp = _ops.clamp
    clamp_ = _ops.clamp_
    floor = _ops.floor
    ceil = _ops.ceil
    round = _ops.round
    trunc = _ops.trunc
    erf = _ops.erf
    lerp = _ops.lerp
    nan_to_num = _ops.nan_to_num
    isnan = _ops.isnan
    isinf = _ops.isinf
    isfinite = _ops.isfinite
    eq = _ops.eq
    ne = _ops.ne
    lt = _ops.lt
    le = _ops.le
    gt = _ops.gt
    ge = _ops.ge
    equal = _ops.equal
    allclose = _ops.allclose
    logical_and = _ops.logical_and
    logical_or = _ops.logical_or
    logical_xor = _ops.logical_xor
    logical_not = _ops.logical_not
    fill_ = _ops.fill_
    zero_ = _ops.zero_
    masked_fill = _ops.masked_fill
    masked_fill_ = _ops.masked_fill_
    uniform_ = _ops.uniform_
    normal_ = _ops.normal_
    # reduction
    sum = _ops.sum
    mean = _ops.mean
    prod = _ops.prod
    var = _ops.var
    std = _ops.std
    max = _ops.max
    min = _ops.min
    amax = _ops.amax
    amin = _ops.amin
    argmax = _ops.argmax
    argmin = _ops.argmin
    logsumexp = _ops.logsumexp
    norm = _ops.norm
    count_nonzero = _ops.count_nonzero
    dist = _ops.dist
    cumsum = _ops.cumsum
    cumprod = _ops.cumprod
    all = _ops.all
    any = _ops.any
    # shape
    flatten = _ops.flatten
    unflatten = _ops.unflatten
    squeeze = _ops.squeeze
    unsqueeze = _ops.unsqueeze
    transpose = _ops.transpose
    t = _ops.t
    movedim = _ops.movedim
    broadcast_to = _ops.broadcast_to
    take = _ops.take
    split = _ops.split
    chunk = _ops.chunk
    unbind = _ops.unbind
    narrow = _ops.narrow
    roll = _ops.roll
    scatter_add = _ops.scatter_add
    index_select = _ops.index_select
    masked_select = _ops.masked_select
    tril = _ops.tril
    triu = _ops.triu

    @property
    def T(self) -> Tensor:
        return _ops.numpy_T(self)

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor."
            )
        return _ops.transpose(self, -2, -1)

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(_ops.unbind(self, 0))

    def __repr__(self) -> str:
        return _format_tensor(self)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | Tensor | None = None,
    ) -> None:
        _engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -------------------------------------------------------------- dtype casts
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return _ops.to(self, *args, **kwargs)

    def type(self, dtype: Any = None) -> Tensor | str:
        if dtype is None:
            return _TYPE_NAMES[self._data.dtype]
        return _ops.to(self, dtype)

    def float(self) -> Tensor:
        return _ops.to(self, dtypes.float32)

    def double(self) -> Tensor:
        return _ops.to(self, dtypes.float64)

    def half(self) -> Tensor:
        return _ops.to(self, dtypes.float16)

    def long(self) -> Tensor:
        return _ops.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return _ops.to(self, dtypes.int32)

    def short(self) -> Tensor:
        return _ops.to(self, dtypes.int16)

    def char(self) -> Tensor:
        return _ops.to(self, dtypes.int8)

    def byte(self) -> Tensor:
        return _ops.to(self, dtypes.uint8)

    def bool(self) -> Tensor:
        return _ops.to(self, dtypes.bool)

    def cpu(self) -> Tensor:
        return self

    def clone(self) -> Tensor:
        return _ops.clone(self)

    def type_as(self, other: Tensor) -> Tensor:
        return _ops.to(self, other.dtype)

    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(
        self, size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False
    ) -> Tensor:
        return _factories.full(
            size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad
        )

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
        return _factories.empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    # ---------------------------------------------------------------- operators
    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __iadd__(self, other: Any) -> Tensor:
        return _ops.add_(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.rsub(self, other)

    def __isub__(self, other: Any) -> Tensor:
        return _ops.sub_(self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __imul__(self, other: Any) -> Tensor:
        return _ops.mul_(self, other)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.rdiv(self, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _ops.div_(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.remainder(other, self)

    def __pow__(self, exponent: Any) -> Tensor:
        return _ops.pow(self, exponent)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __ipow__(self, exponent: Any) -> Tensor:
        return _ops.pow_(self, exponent)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __invert__(self) -> Tensor:
        if self._data.dtype.kind == "f":
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
            )
        return _ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __or__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:
            return False  # type: ignore[return-value]
        return _ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:
            return True  # type: ignore[return-value]
        return _ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _ops.setitem_(self, index, value)

    # ------------------------------------------------------------- arithmetic
    def true_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other, rounding_mode="floor")

    def dot(self, other: Tensor) -> Tensor:
        return _ops.dot(self, other)

    # --------------------------------------------------------------- pointwise
    def clip_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    def relu(self) -> Tensor:
        return _ops.relu(self)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def copy_(self, src: Tensor) -> Tensor:
        return _ops.copy_(self, src)

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.log_softmax(self, dim, dtype=dtype)

    # ------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> Tensor:
        return _ops.reshape(self, _varargs_shape(shape))

    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and not isinstance(shape[0], int | tuple | list | Size):
            return _ops.to(self, shape[0])
        return _ops.view(self, _varargs_shape(shape))

    def view_as(self, other: Tensor) -> Tensor:
        return _ops.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return _ops.reshape(self, other.shape)

    def sum_to_size(self, *size: Any) -> Tensor:
        return _ops.sum_to(self, _varargs_shape(size))

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _ops.transpose(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return _ops.transpose(self, dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return _ops.nonzero(self, as_tuple=as_tuple)

    def permute(self, *dims: Any) -> Tensor:
        return _ops.permute(self, _varargs_shape(dims))

    def expand(self, *sizes: Any) -> Tensor:
        return _ops.expand(self, _varargs_shape(sizes))

    def expand_as(self, other: Tensor) -> Tensor:
        return _ops.expand(self, other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        return _ops.repeat(self, _varargs_shape(sizes))

    def tile(self, *dims: Any) -> Tensor:
        return _ops.tile(self, _varargs_shape(dims))

    def flip(self, *dims: Any) -> Tensor:
        return _ops.flip(self, _varargs_shape(dims))

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return _ops.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any, *, reduce: str | None = None) -> Tensor:
        return _ops.scatter(self, dim, index, src, reduce=reduce)


register_tensor_class(Tensor)


def zero_grads(params: Iterable[Tensor], set_to_none: bool) -> None:
    """`zero_grad` of modules and optimizers: drop each `.grad`, or zero it in place detached."""
    for param in params:
        grad = param.grad
        if grad is None:
            continue
        if set_to_none:
            param.grad = None
        else:
            if grad.grad_fn is not None:
                grad.detach_()
            else:
                grad.requires_grad_(False)
            grad.zero_()
