"""Tensor: the public tensor class; TensorBase's state plus methods that delegate to lucid.ops."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

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

    def contiguous(self) -> Tensor:
        return _ops.contiguous(self)

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
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.add(self, other, alpha=alpha)

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.add_(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub_(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def mul_(self, other: Any) -> Tensor:
        return _ops.mul_(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div_(self, other, rounding_mode=rounding_mode)

    def true_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other, rounding_mode="floor")

    def neg(self) -> Tensor:
        return _ops.neg(self)

    def neg_(self) -> Tensor:
        return _ops.neg_(self)

    def pow(self, exponent: Any) -> Tensor:
        return _ops.pow(self, exponent)

    def pow_(self, exponent: Any) -> Tensor:
        return _ops.pow_(self, exponent)

    def reciprocal(self) -> Tensor:
        return _ops.reciprocal(self)

    def matmul(self, other: Tensor) -> Tensor:
        return _ops.matmul(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        return _ops.mm(self, mat2)

    def bmm(self, mat2: Tensor) -> Tensor:
        return _ops.bmm(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        return _ops.mv(self, vec)

    def dot(self, other: Tensor) -> Tensor:
        return _ops.dot(self, other)

    def outer(self, vec2: Tensor) -> Tensor:
        return _ops.outer(self, vec2)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def maximum(self, other: Tensor) -> Tensor:
        return _ops.maximum(self, other)

    def minimum(self, other: Tensor) -> Tensor:
        return _ops.minimum(self, other)

    def fmod(self, other: Any) -> Tensor:
        return _ops.fmod(self, other)

    def remainder(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    # --------------------------------------------------------------- pointwise
    def exp(self) -> Tensor:
        return _ops.exp(self)

    def exp_(self) -> Tensor:
        return _ops.exp_(self)

    def sqrt_(self) -> Tensor:
        return _ops.sqrt_(self)

    def abs_(self) -> Tensor:
        return _ops.abs_(self)

    def clip_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    def expm1(self) -> Tensor:
        return _ops.expm1(self)

    def log(self) -> Tensor:
        return _ops.log(self)

    def log1p(self) -> Tensor:
        return _ops.log1p(self)

    def log2(self) -> Tensor:
        return _ops.log2(self)

    def log10(self) -> Tensor:
        return _ops.log10(self)

    def sqrt(self) -> Tensor:
        return _ops.sqrt(self)

    def rsqrt(self) -> Tensor:
        return _ops.rsqrt(self)

    def abs(self) -> Tensor:
        return _ops.abs(self)

    def sign(self) -> Tensor:
        return _ops.sign(self)

    def sin(self) -> Tensor:
        return _ops.sin(self)

    def cos(self) -> Tensor:
        return _ops.cos(self)

    def tan(self) -> Tensor:
        return _ops.tan(self)

    def tanh(self) -> Tensor:
        return _ops.tanh(self)

    def sinh(self) -> Tensor:
        return _ops.sinh(self)

    def cosh(self) -> Tensor:
        return _ops.cosh(self)

    def asin(self) -> Tensor:
        return _ops.asin(self)

    def acos(self) -> Tensor:
        return _ops.acos(self)

    def atan(self) -> Tensor:
        return _ops.atan(self)

    def atan2(self, other: Tensor) -> Tensor:
        return _ops.atan2(self, other)

    def sigmoid(self) -> Tensor:
        return _ops.sigmoid(self)

    def relu(self) -> Tensor:
        return _ops.relu(self)

    def relu_(self) -> Tensor:
        return _ops.relu_(self)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _ops.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0) -> Tensor:
        return _ops.diag(self, diagonal)

    def trace(self) -> Tensor:
        return _ops.trace(self)

    def inner(self, other: Tensor) -> Tensor:
        return _ops.inner(self, other)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    def floor(self) -> Tensor:
        return _ops.floor(self)

    def ceil(self) -> Tensor:
        return _ops.ceil(self)

    def round(self, *, decimals: int = 0) -> Tensor:
        return _ops.round(self, decimals=decimals)

    def trunc(self) -> Tensor:
        return _ops.trunc(self)

    def erf(self) -> Tensor:
        return _ops.erf(self)

    def lerp(self, end: Tensor, weight: Any) -> Tensor:
        return _ops.lerp(self, end, weight)

    def nan_to_num(self, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
        return _ops.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)

    def isnan(self) -> Tensor:
        return _ops.isnan(self)

    def isinf(self) -> Tensor:
        return _ops.isinf(self)

    def isfinite(self) -> Tensor:
        return _ops.isfinite(self)

    def eq(self, other: Any) -> Tensor:
        return _ops.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return _ops.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def le(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def gt(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def equal(self, other: Tensor) -> builtins.bool:
        return _ops.equal(self, other)

    def allclose(
        self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> builtins.bool:
        return _ops.allclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)

    def logical_and(self, other: Tensor) -> Tensor:
        return _ops.logical_and(self, other)

    def logical_or(self, other: Tensor) -> Tensor:
        return _ops.logical_or(self, other)

    def logical_xor(self, other: Tensor) -> Tensor:
        return _ops.logical_xor(self, other)

    def logical_not(self) -> Tensor:
        return _ops.logical_not(self)

    def fill_(self, value: Any) -> Tensor:
        return _ops.fill_(self, value)

    def zero_(self) -> Tensor:
        return _ops.zero_(self)

    def copy_(self, src: Tensor) -> Tensor:
        return _ops.copy_(self, src)

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return _ops.masked_fill(self, mask, value)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return _ops.masked_fill_(self, mask, value)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
        return _ops.uniform_(self, a, b, generator=generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        return _ops.normal_(self, mean, std, generator=generator)

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.log_softmax(self, dim, dtype=dtype)

    # --------------------------------------------------------------- reduction
    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.prod(self, dim, keepdim, dtype=dtype)

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:  # fmt: skip
        return _ops.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:  # fmt: skip
        return _ops.std(self, dim, unbiased, keepdim, correction=correction)

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _ops.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _ops.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        return _ops.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        return _ops.amin(self, dim, keepdim)

    def argmax(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.argmin(self, dim, keepdim)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Tensor:
        return _ops.logsumexp(self, dim, keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Tensor:  # fmt: skip
        return _ops.norm(self, p, dim, keepdim, dtype=dtype)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        return _ops.count_nonzero(self, dim)

    def dist(self, other: Tensor, p: Any = 2) -> Tensor:
        return _ops.dist(self, other, p)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _ops.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _ops.cumprod(self, dim, dtype=dtype)

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.any(self, dim, keepdim)

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

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _ops.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        return _ops.unflatten(self, dim, sizes)

    def squeeze(self, dim: Any = None) -> Tensor:
        return _ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return _ops.unsqueeze(self, dim)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _ops.transpose(self, dim0, dim1)

    def t(self) -> Tensor:
        return _ops.t(self)

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _ops.transpose(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return _ops.transpose(self, dim0, dim1)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def broadcast_to(self, size: Any) -> Tensor:
        return _ops.broadcast_to(self, size)

    def take(self, index: Tensor) -> Tensor:
        return _ops.take(self, index)

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

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.unbind(self, dim)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return _ops.narrow(self, dim, start, length)

    def flip(self, *dims: Any) -> Tensor:
        return _ops.flip(self, _varargs_shape(dims))

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return _ops.roll(self, shifts, dims)

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return _ops.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any, *, reduce: str | None = None) -> Tensor:
        return _ops.scatter(self, dim, index, src, reduce=reduce)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _ops.scatter_add(self, dim, index, src)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return _ops.index_select(self, dim, index)

    def masked_select(self, mask: Tensor) -> Tensor:
        return _ops.masked_select(self, mask)

    def tril(self, diagonal: int = 0) -> Tensor:
        return _ops.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return _ops.triu(self, diagonal)


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


# Tensor methods delegate to lucid.ops, which itself builds on Tensor: the one sanctioned cycle.
from lucid import factories as _factories  # noqa: E402
from lucid import ops as _ops  # noqa: E402
