"""Tensor: the public tensor class; TensorBase's state plus methods that delegate to lucid.ops."""

from __future__ import annotations

import builtins
import operator
import types
import warnings
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lucid import _legacy_types
from lucid import factories as _factories
from lucid._core import dtypes
from lucid._core import engine as _engine
from lucid._core import graph as _graph
from lucid._core import layouts as _layouts
from lucid._core.arguments import (
    METHOD_CODES,
    int_list_item_error,
    is_int,
    is_int_list_item,
    type_name,
)
from lucid._core.devices import check_device
from lucid._core.dtypes import FLOAT_KINDS
from lucid._core.grad_mode import local_state
from lucid._core.tensor import _TYPE_NAMES, Size, TensorBase, _varargs_shape, register_tensor_class
from lucid._tensor_str import _format_tensor
from lucid.ops import (
    activations,
    arithmetic,
    broadcast,
    complex_numbers,
    cumulative,
    distances,
    fills,
    indexing,
    joining,
    matrices,
    pointwise,
    products,
    reduction,
    sorting,
    statistics,
)
from lucid.ops import shape as shape_ops
from lucid.ops import storage as storage_ops
from lucid.ops._common import check_int, check_tensors  # `shape` names the shape methods' parameter


class Tensor(TensorBase):
    """A multi-dimensional array that records the operations applied to it for autograd."""

    __slots__ = ()

    # Defining __eq__ (elementwise, below) would otherwise make tensors unhashable.
    def __hash__(self) -> builtins.int:
        return id(self)

    # Methods that are their op's function itself (the same signature, `self` as `input`); a
    # method whose signature or body differs is written out below.
    # dtype casts
    contiguous = fills.contiguous
    # arithmetic
    add = arithmetic.add
    add_ = arithmetic.add_
    sub = arithmetic.sub
    sub_ = arithmetic.sub_
    mul = arithmetic.mul
    mul_ = arithmetic.mul_
    div = arithmetic.div
    div_ = arithmetic.div_
    neg = arithmetic.neg
    neg_ = arithmetic.neg_
    pow = arithmetic.pow
    pow_ = arithmetic.pow_
    reciprocal = arithmetic.reciprocal
    matmul = products.matmul
    mm = products.mm
    bmm = products.bmm
    mv = products.mv
    outer = products.outer
    addmm = products.addmm
    maximum = arithmetic.maximum
    minimum = arithmetic.minimum
    fmod = arithmetic.fmod
    remainder = arithmetic.remainder
    remainder_ = arithmetic.remainder_
    floor_divide_ = arithmetic.floor_divide_
    # pointwise
    exp = pointwise.exp
    exp_ = pointwise.exp_
    sqrt_ = pointwise.sqrt_
    abs_ = pointwise.abs_
    expm1 = pointwise.expm1
    log = pointwise.log
    logit = pointwise.logit
    logit_ = pointwise.logit_
    log1p = pointwise.log1p
    log2 = pointwise.log2
    log10 = pointwise.log10
    sqrt = pointwise.sqrt
    rsqrt = pointwise.rsqrt
    abs = pointwise.abs
    sign = pointwise.sign
    sin = pointwise.sin
    cos = pointwise.cos
    tan = pointwise.tan
    tanh = pointwise.tanh
    sinh = pointwise.sinh
    cosh = pointwise.cosh
    asin = pointwise.asin
    acos = pointwise.acos
    atan = pointwise.atan
    atan2 = pointwise.atan2
    sigmoid = activations.sigmoid
    relu_ = activations.relu_
    diagonal = matrices.diagonal
    diag = matrices.diag
    trace = matrices.trace
    inner = products.inner
    clamp = pointwise.clamp
    clamp_ = pointwise.clamp_
    floor = pointwise.floor
    ceil = pointwise.ceil
    round = pointwise.round
    trunc = pointwise.trunc
    erf = pointwise.erf
    lerp = pointwise.lerp
    nan_to_num = pointwise.nan_to_num
    isnan = pointwise.isnan
    isinf = pointwise.isinf
    isfinite = pointwise.isfinite
    eq = pointwise.eq
    ne = pointwise.ne
    lt = pointwise.lt
    le = pointwise.le
    gt = pointwise.gt
    ge = pointwise.ge
    equal = pointwise.equal
    allclose = pointwise.allclose
    logical_and = pointwise.logical_and
    logical_or = pointwise.logical_or
    logical_xor = pointwise.logical_xor
    logical_not = pointwise.logical_not
    bitwise_not = pointwise.bitwise_not
    bitwise_and = pointwise.bitwise_and
    bitwise_and_ = pointwise.bitwise_and_
    bitwise_or = pointwise.bitwise_or
    bitwise_or_ = pointwise.bitwise_or_
    bitwise_xor = pointwise.bitwise_xor
    bitwise_xor_ = pointwise.bitwise_xor_
    bitwise_left_shift = pointwise.bitwise_left_shift
    bitwise_left_shift_ = pointwise.bitwise_left_shift_
    bitwise_right_shift = pointwise.bitwise_right_shift
    bitwise_right_shift_ = pointwise.bitwise_right_shift_
    fill_ = fills.fill_
    zero_ = fills.zero_
    masked_fill = indexing.masked_fill
    masked_fill_ = indexing.masked_fill_
    uniform_ = fills.uniform_
    normal_ = fills.normal_
    # reduction
    sum = reduction.sum
    mean = reduction.mean
    prod = reduction.prod
    var = reduction.var
    std = reduction.std
    max = reduction.max
    min = reduction.min
    amax = reduction.amax
    amin = reduction.amin
    argmax = reduction.argmax
    argmin = reduction.argmin
    logsumexp = reduction.logsumexp
    norm = reduction.norm
    count_nonzero = reduction.count_nonzero
    dist = distances.dist
    cumsum = cumulative.cumsum
    cumprod = cumulative.cumprod
    all = reduction.all
    any = reduction.any
    # shape
    flatten = shape_ops.flatten
    unflatten = shape_ops.unflatten
    squeeze = shape_ops.squeeze
    unsqueeze = shape_ops.unsqueeze
    transpose = shape_ops.transpose
    t = shape_ops.t
    movedim = shape_ops.movedim
    broadcast_to = shape_ops.broadcast_to
    take = indexing.take
    sort = sorting.sort
    argsort = sorting.argsort
    topk = sorting.topk
    chunk = joining.chunk
    unbind = joining.unbind
    narrow = shape_ops.narrow
    roll = shape_ops.roll

    def stft(self, n_fft: builtins.int, hop_length: builtins.int | None = None,
             win_length: builtins.int | None = None, window: Tensor | None = None,
             center: builtins.bool = True, pad_mode: str = "reflect",
             normalized: builtins.bool = False, onesided: builtins.bool | None = None,
             return_complex: builtins.bool | None = None,
             align_to_window: builtins.bool | None = None) -> Tensor:  # fmt: skip
        return _spectral_functions().stft(
            self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
            onesided, return_complex, align_to_window,
        )  # fmt: skip

    def istft(self, n_fft: builtins.int, hop_length: builtins.int | None = None,
              win_length: builtins.int | None = None, window: Tensor | None = None,
              center: builtins.bool = True, normalized: builtins.bool = False,
              onesided: builtins.bool | None = None, length: builtins.int | None = None,
              return_complex: builtins.bool = False) -> Tensor:  # fmt: skip
        return _spectral_functions().istft(
            self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
            return_complex,
        )  # fmt: skip

    scatter_add = indexing.scatter_add
    index_select = indexing.index_select
    masked_select = indexing.masked_select
    tril = matrices.tril
    triu = matrices.triu
    # selection
    unique = sorting.unique
    unique_consecutive = sorting.unique_consecutive
    msort = sorting.msort
    kthvalue = sorting.kthvalue
    median = sorting.median
    nanmedian = sorting.nanmedian
    mode = sorting.mode
    quantile = sorting.quantile
    nanquantile = sorting.nanquantile
    histc = statistics.histc
    histogram = statistics.histogram
    bincount = statistics.bincount
    cummax = cumulative.cummax
    cummin = cumulative.cummin
    logcumsumexp = cumulative.logcumsumexp
    diff = cumulative.diff
    aminmax = reduction.aminmax
    nansum = reduction.nansum
    nanmean = reduction.nanmean

    def split(self, split_size: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        # Tensor.split names its first parameter split_size where torch.split has
        # split_size_or_sections
        return joining.split(self, split_size, dim)

    # Matrix functions: their op family loads on first use, with lucid.linalg, so that
    # `import lucid` does not pay for it; each method hands over to its function.
    def det(self) -> Tensor:
        return _matrix_functions().det(self)

    def logdet(self) -> Tensor:
        return _matrix_functions().logdet(self)

    def slogdet(self) -> Any:
        return _matrix_functions().slogdet(self)

    def inverse(self) -> Tensor:
        return _matrix_functions().inverse(self)

    def pinverse(self, rcond: builtins.float = 1e-15) -> Tensor:
        return _matrix_functions().pinverse(self, rcond)

    def cholesky(self, upper: builtins.bool = False) -> Tensor:
        return _matrix_functions().cholesky(self, upper)

    def cholesky_solve(self, input2: Tensor, upper: builtins.bool = False) -> Tensor:
        return _matrix_functions().cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: builtins.bool = False) -> Tensor:
        return _matrix_functions().cholesky_inverse(self, upper)

    def qr(self, some: builtins.bool = True) -> Any:
        return _matrix_functions().qr(self, some)

    def svd(self, some: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
        return _matrix_functions().svd(self, some, compute_uv)

    def matrix_exp(self) -> Tensor:
        return _matrix_functions().matrix_exp(self)

    def matrix_power(self, n: builtins.int) -> Tensor:
        return _matrix_functions().matrix_power(self, n)

    def cross(self, other: Tensor, dim: builtins.int | None = None) -> Tensor:
        return _matrix_functions().cross(self, other, dim)

    def geqrf(self) -> Any:
        return _matrix_functions().geqrf(self)

    def orgqr(self, input2: Tensor) -> Tensor:
        return _matrix_functions().orgqr(self, input2)

    def ormqr(self, input2: Tensor, input3: Tensor, left: builtins.bool = True,
              transpose: builtins.bool = False) -> Tensor:  # fmt: skip
        return _matrix_functions().ormqr(self, input2, input3, left, transpose)

    scatter_ = indexing.scatter_
    scatter_add_ = indexing.scatter_add_
    scatter_reduce = indexing.scatter_reduce
    scatter_reduce_ = indexing.scatter_reduce_
    index_add = indexing.index_add
    index_add_ = indexing.index_add_
    index_copy = indexing.index_copy
    index_copy_ = indexing.index_copy_
    index_fill = indexing.index_fill
    index_fill_ = indexing.index_fill_
    index_reduce = indexing.index_reduce
    index_reduce_ = indexing.index_reduce_
    index_put = indexing.index_put
    index_put_ = indexing.index_put_
    put = indexing.put
    put_ = indexing.put_
    masked_scatter = indexing.masked_scatter
    masked_scatter_ = indexing.masked_scatter_
    select_scatter = indexing.select_scatter
    slice_scatter = indexing.slice_scatter
    take_along_dim = indexing.take_along_dim
    diag_embed = matrices.diag_embed
    diagonal_scatter = matrices.diagonal_scatter
    # math, shape and random ops
    sgn = pointwise.sgn
    sgn_ = pointwise.sgn_
    frac = pointwise.frac
    frac_ = pointwise.frac_
    deg2rad = pointwise.deg2rad
    deg2rad_ = pointwise.deg2rad_
    rad2deg = pointwise.rad2deg
    rad2deg_ = pointwise.rad2deg_
    sinc = pointwise.sinc
    sinc_ = pointwise.sinc_
    logaddexp = pointwise.logaddexp
    logaddexp2 = pointwise.logaddexp2
    hypot = pointwise.hypot
    hypot_ = pointwise.hypot_
    copysign = pointwise.copysign
    copysign_ = pointwise.copysign_
    xlogy = pointwise.xlogy
    xlogy_ = pointwise.xlogy_
    heaviside = pointwise.heaviside
    heaviside_ = pointwise.heaviside_
    nextafter = pointwise.nextafter
    nextafter_ = pointwise.nextafter_
    clamp_min = pointwise.clamp_min
    clamp_min_ = pointwise.clamp_min_
    clamp_max = pointwise.clamp_max
    clamp_max_ = pointwise.clamp_max_
    signbit = pointwise.signbit
    lerp_ = pointwise.lerp_
    nan_to_num_ = pointwise.nan_to_num_
    addcmul = arithmetic.addcmul
    addcmul_ = arithmetic.addcmul_
    addcdiv = arithmetic.addcdiv
    addcdiv_ = arithmetic.addcdiv_
    gcd = arithmetic.gcd
    gcd_ = arithmetic.gcd_
    lcm = arithmetic.lcm
    lcm_ = arithmetic.lcm_
    ldexp = arithmetic.ldexp
    ldexp_ = arithmetic.ldexp_
    frexp = arithmetic.frexp
    float_power = pointwise.float_power
    float_power_ = pointwise.float_power_
    fmod_ = arithmetic.fmod_
    addmm_ = products.addmm_
    baddbmm = products.baddbmm
    baddbmm_ = products.baddbmm_
    addbmm = products.addbmm
    addbmm_ = products.addbmm_
    addmv = products.addmv
    addmv_ = products.addmv_
    addr = products.addr
    addr_ = products.addr_
    vdot = products.vdot
    ger = products.ger
    rot90 = shape_ops.rot90
    fliplr = shape_ops.fliplr
    flipud = shape_ops.flipud
    tril_ = matrices.tril_
    triu_ = matrices.triu_
    kron = products.kron
    exponential_ = fills.exponential_
    geometric_ = fills.geometric_
    log_normal_ = fills.log_normal_
    cauchy_ = fills.cauchy_
    random_ = fills.random_
    bernoulli_ = fills.bernoulli_
    bernoulli = _factories.bernoulli
    multinomial = _factories.multinomial
    lgamma = pointwise.lgamma
    lgamma_ = pointwise.lgamma_
    digamma = pointwise.digamma
    digamma_ = pointwise.digamma_
    polygamma_ = pointwise.polygamma_
    mvlgamma = pointwise.mvlgamma
    mvlgamma_ = pointwise.mvlgamma_
    erfinv = pointwise.erfinv
    erfinv_ = pointwise.erfinv_
    i0 = pointwise.i0
    i0_ = pointwise.i0_
    # in-place forms and torch's alternative names
    absolute = pointwise.absolute
    absolute_ = pointwise.abs_
    acos_ = pointwise.acos_
    asin_ = pointwise.asin_
    atan_ = pointwise.atan_
    acosh = pointwise.acosh
    asinh = pointwise.asinh
    atanh = pointwise.atanh
    acosh_ = pointwise.acosh_
    asinh_ = pointwise.asinh_
    atanh_ = pointwise.atanh_
    arccos = pointwise.arccos
    arcsin = pointwise.arcsin
    arctan = pointwise.arctan
    arctan2 = pointwise.arctan2
    arccosh = pointwise.arccosh
    arcsinh = pointwise.arcsinh
    arctanh = pointwise.arctanh
    arccos_ = pointwise.arccos_
    arcsin_ = pointwise.arcsin_
    arctan_ = pointwise.arctan_
    arccosh_ = pointwise.arccosh_
    arcsinh_ = pointwise.arcsinh_
    arctanh_ = pointwise.arctanh_
    atan2_ = pointwise.atan2_
    arctan2_ = pointwise.arctan2_
    ceil_ = pointwise.ceil_
    floor_ = pointwise.floor_
    round_ = pointwise.round_
    trunc_ = pointwise.trunc_
    fix = pointwise.fix
    fix_ = pointwise.fix_
    cos_ = pointwise.cos_
    cosh_ = pointwise.cosh_
    sin_ = pointwise.sin_
    sinh_ = pointwise.sinh_
    tan_ = pointwise.tan_
    tanh_ = pointwise.tanh_
    sigmoid_ = activations.sigmoid_
    log_ = pointwise.log_
    log10_ = pointwise.log10_
    log1p_ = pointwise.log1p_
    log2_ = pointwise.log2_
    expm1_ = pointwise.expm1_
    exp2 = pointwise.exp2
    exp2_ = pointwise.exp2_
    rsqrt_ = pointwise.rsqrt_
    reciprocal_ = arithmetic.reciprocal_
    erfc = pointwise.erfc
    erf_ = pointwise.erf_
    erfc_ = pointwise.erfc_
    square = pointwise.square
    square_ = pointwise.square_
    sign_ = pointwise.sign_
    negative = arithmetic.negative
    negative_ = arithmetic.negative_
    positive = arithmetic.positive
    bitwise_not_ = pointwise.bitwise_not_
    logical_not_ = pointwise.logical_not_
    logical_and_ = pointwise.logical_and_
    logical_or_ = pointwise.logical_or_
    logical_xor_ = pointwise.logical_xor_
    eq_ = pointwise.eq_
    ne_ = pointwise.ne_
    lt_ = pointwise.lt_
    le_ = pointwise.le_
    gt_ = pointwise.gt_
    ge_ = pointwise.ge_
    greater = pointwise.greater
    greater_equal = pointwise.greater_equal
    less = pointwise.less
    less_equal = pointwise.less_equal
    not_equal = pointwise.not_equal
    greater_ = pointwise.greater_
    greater_equal_ = pointwise.greater_equal_
    less_ = pointwise.less_
    less_equal_ = pointwise.less_equal_
    not_equal_ = pointwise.not_equal_
    isclose = pointwise.isclose
    isposinf = pointwise.isposinf
    isneginf = pointwise.isneginf
    divide = arithmetic.divide
    multiply = arithmetic.multiply
    subtract = arithmetic.subtract
    divide_ = arithmetic.div_
    true_divide_ = arithmetic.div_
    multiply_ = arithmetic.mul_
    subtract_ = arithmetic.sub_
    cumsum_ = cumulative.cumsum_
    cumprod_ = cumulative.cumprod_
    ravel = shape_ops.ravel
    squeeze_ = shape_ops.squeeze_
    unsqueeze_ = shape_ops.unsqueeze_
    t_ = shape_ops.t_
    transpose_ = shape_ops.transpose_
    swapaxes_ = shape_ops.swapaxes_
    swapdims_ = shape_ops.swapdims_
    tensor_split = joining.tensor_split
    hsplit = joining.hsplit
    vsplit = joining.vsplit
    dsplit = joining.dsplit
    argwhere = indexing.argwhere
    repeat_interleave = shape_ops.repeat_interleave
    select = indexing.select
    fill_diagonal_ = matrices.fill_diagonal_
    unfold = shape_ops.unfold
    fmax = arithmetic.fmax
    fmin = arithmetic.fmin
    renorm = reduction.renorm
    renorm_ = reduction.renorm_
    hardshrink = activations.hardshrink
    diagflat = matrices.diagflat
    cov = statistics.cov
    corrcoef = statistics.corrcoef
    conj = complex_numbers.conj
    conj_physical = complex_numbers.conj_physical
    conj_physical_ = complex_numbers.conj_physical_
    resolve_conj = complex_numbers.resolve_conj
    resolve_neg = complex_numbers.resolve_neg
    is_conj = complex_numbers.is_conj
    is_neg = complex_numbers.is_neg
    is_distributed = pointwise.is_distributed
    is_complex = complex_numbers.is_complex
    isreal = complex_numbers.isreal
    angle = pointwise.angle
    adjoint = shape_ops.adjoint
    igamma = pointwise.igamma
    igamma_ = pointwise.igamma_
    igammac = pointwise.igammac
    igammac_ = pointwise.igammac_
    hash_tensor = reduction.hash_tensor

    @property
    def T(self) -> Tensor:
        return shape_ops.numpy_T(self)

    @property
    def mT(self) -> Tensor:
        if self._data.ndim == 0:
            warnings.warn(
                "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
                "cases.",
                UserWarning,
                stacklevel=2,
            )
            return self[...]
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor."
            )
        return shape_ops.transpose(self, -2, -1)

    @property
    def mH(self) -> Tensor:
        """The conjugate transpose of the last two dims: mT, for a real tensor."""
        if self._data.ndim == 0:
            warnings.warn(
                "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
                UserWarning,
                stacklevel=2,
            )
            return complex_numbers.conj(self)
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mH is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor."
            )
        return complex_numbers.conj(shape_ops.transpose(self, -2, -1))

    @property
    def H(self) -> Tensor:
        """The conjugate transpose of a matrix: its transpose, for a real tensor."""
        if self._data.ndim == 0:
            warnings.warn(
                "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                UserWarning,
                stacklevel=2,
            )
            return complex_numbers.conj(self)
        if self._data.ndim != 2:
            message = "tensor.H is only supported on matrices (2-D tensors). Got "
            message += f"{self._data.ndim}-D tensor."
            if self._data.ndim > 2:
                message += " For batches of matrices, consider using tensor.mH"
            raise RuntimeError(message)
        return complex_numbers.conj(shape_ops.transpose(self, 0, 1))

    @property
    def real(self) -> Tensor:
        return complex_numbers.real(self)

    @real.setter
    def real(self, value: Any) -> None:
        complex_numbers.real(self).copy_(value)

    @property
    def imag(self) -> Tensor:
        return complex_numbers.imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        complex_numbers.imag(self).copy_(value)

    @property
    def is_cpu(self) -> builtins.bool:
        return True

    # lucid's tensors are dense, strided, unquantized and in CPU memory: each of these is False.
    @property
    def is_meta(self) -> builtins.bool:
        return False

    @property
    def is_mps(self) -> builtins.bool:
        return False

    @property
    def is_xpu(self) -> builtins.bool:
        return False

    @property
    def is_ipu(self) -> builtins.bool:
        return False

    @property
    def is_maia(self) -> builtins.bool:
        return False

    @property
    def is_mtia(self) -> builtins.bool:
        return False

    @property
    def is_xla(self) -> builtins.bool:
        return False

    @property
    def is_vulkan(self) -> builtins.bool:
        return False

    @property
    def is_mkldnn(self) -> builtins.bool:
        return False

    @property
    def is_sparse(self) -> builtins.bool:
        return False

    @property
    def is_sparse_csr(self) -> builtins.bool:
        return False

    @property
    def is_quantized(self) -> builtins.bool:
        return False

    @property
    def is_nested(self) -> builtins.bool:
        return False

    def is_shared(self) -> builtins.bool:
        """False: lucid has no shared-memory tensors (`share_memory_`)."""
        return False

    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
        """The tensor itself (it is dense already), or cast to `dtype`."""
        if dtype is None:
            return self
        _factories._check_dtype("to_dense", dtype, 1)
        return fills.to(self, dtype)

    @property
    def volatile(self) -> builtins.bool:
        """Removed from PyTorch long ago: warns, and is always False."""
        warnings.warn(
            "volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2
        )
        return False

    @volatile.setter
    def volatile(self, value: Any) -> None:
        warnings.warn(
            "volatile was removed and now has no effect. Use `with lucid.no_grad():` instead.",
            UserWarning,
            stacklevel=2,
        )

    @property
    def layout(self) -> Any:
        return _layouts.strided

    def apply_(self, callable: Any) -> Tensor:
        """Replace each element by callable(element), a Python call per element (as in
        PyTorch: for scripts, not for speed)."""
        return self._map_inplace("apply_", callable)

    def map_(self, tensor: Tensor, callable: Any) -> Tensor:
        """self[i] = callable(self[i], tensor[i]), tensor broadcast to self's shape."""
        return self._map_inplace("map_", callable, tensor)

    def map2_(self, x: Tensor, y: Tensor, callable: Any) -> Tensor:
        """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self's shape."""
        return self._map_inplace("map2_", callable, x, y)

    def _map_inplace(self, name: str, callable: Any, *others: Tensor) -> Tensor:
        if self._requires_grad:
            raise RuntimeError(
                f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                "instead."
            )
        check_tensors(*others)
        array = self._data
        columns = [shape_ops.expand(other, array.shape)._data.reshape(-1) for other in others]
        python_type = (
            builtins.bool
            if array.dtype == np.bool_
            else (builtins.float if array.dtype.kind in FLOAT_KINDS else builtins.int)
        )
        values = [
            python_type(callable(*items))
            for items in zip(array.reshape(-1).tolist(), *(c.tolist() for c in columns))
        ]
        array[...] = np.asarray(values, dtype=array.dtype).reshape(array.shape)
        self._version_counter[0] += 1
        return self

    def new(self, *args: Any) -> Tensor:
        """The legacy constructor: new sizes give an uninitialised tensor, data a tensor of it,
        in self's dtype."""
        if len(args) == 1 and isinstance(args[0], TensorBase):
            return args[0]
        if len(args) == 1 and isinstance(args[0], list | tuple) and not isinstance(args[0], Size):
            return _factories.tensor(args[0], dtype=self.dtype)
        return _factories.empty(*(args or (0,)), dtype=self.dtype)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """`hook(tensor)` runs after backward has accumulated this leaf's `.grad` (an
        optimizer step per parameter, for example); autograd.grad does not run it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        accumulator = _graph.accumulator_for(self)
        # The hook must outlive the graphs that use the leaf, so from now on the leaf holds its
        # sink strongly (a cycle through the sink's `variable`, which the collector frees).
        self._grad_accumulator = _HeldAccumulator(accumulator)
        variable = weakref.ref(self)

        def run(grad_inputs: tuple, grad_outputs: tuple) -> None:
            tensor = variable()
            if tensor is not None:
                hook(tensor)

        return accumulator.register_hook(run)

    def is_signed(self) -> builtins.bool:
        return self._data.dtype.kind in "ifVc"

    def is_nonzero(self) -> builtins.bool:
        size = self._data.size
        if size == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if size > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self._data.reshape(()) != 0)

    # ----------------------------------------------------------- storage and size
    # resize_ lays a new shape over the storage (lucid.ops.storage has PyTorch's rules and
    # where lucid must refuse); resize and resize_as are PyTorch's deprecated reshapes.
    resize_ = storage_ops.resize_
    resize = storage_ops.resize
    resize_as = storage_ops.resize_as
    storage_offset = storage_ops.storage_offset

    def resize_as_(self, tensor: Tensor, *, memory_format: Any = None) -> Tensor:
        """`self.resize_(tensor.size())`."""
        if not isinstance(tensor, TensorBase):
            raise TypeError(
                "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                f"{storage_ops.torch_type_name(tensor)}"
            )
        return storage_ops.resize_as_(self, tensor, memory_format=memory_format)

    def const_data_ptr(self) -> builtins.int:
        return self.data_ptr()

    def split_with_sizes(self, split_sizes: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        if not isinstance(split_sizes, tuple | list):
            raise TypeError(
                "split_with_sizes(): argument 'split_sizes' (position 1) must be tuple of ints, "
                f"not {storage_ops.torch_type_name(split_sizes)}"
            )
        for position, size in enumerate(split_sizes, 1):
            if not storage_ops.is_index(size):
                raise TypeError(
                    "split_with_sizes(): argument 'split_sizes' failed to unpack the object at "
                    f'pos {position} with error "type must be tuple of ints,but got '
                    f'{storage_ops.torch_type_name(size)}"'
                )
        return joining.split(self, [operator.index(size) for size in split_sizes], dim)

    def is_same_size(self, other: Tensor) -> builtins.bool:
        if not isinstance(other, TensorBase):
            raise TypeError(
                "is_same_size(): argument 'other' (position 1) must be Tensor, not "
                f"{type(other).__name__}"
            )
        return self._data.shape == other._data.shape

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(joining.unbind(self, 0))

    def __repr__(self) -> str:
        if local_state.recorder is not None:
            local_state.recorder.host_read(self, "printing")
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
        return fills.to(self, *args, **kwargs)

    def type(self, dtype: Any = None, non_blocking: builtins.bool = False, *,
             memory_format: Any = None) -> Tensor | str:  # fmt: skip
        """The legacy type's name ("lucid.FloatTensor"), or a cast to a dtype, a legacy type,
        lucid.Tensor (the default dtype) or a type's name (PyTorch's "torch.FloatTensor" too)."""
        if not isinstance(non_blocking, builtins.bool):
            raise TypeError(
                "type(): argument 'non_blocking' must be bool, not "
                f"{builtins.type(non_blocking).__name__}"
            )
        if dtype is None:
            return _TYPE_NAMES[self._data.dtype]
        if dtype is Tensor:
            target = dtypes.get_default_dtype()
        else:
            target = _legacy_types.type_dtype(dtype)
        return fills.to(self, target, memory_format=memory_format)

    def float(self) -> Tensor:
        return fills.to(self, dtypes.float32)

    def double(self) -> Tensor:
        return fills.to(self, dtypes.float64)

    def cfloat(self) -> Tensor:
        return fills.to(self, dtypes.complex64)

    def cdouble(self) -> Tensor:
        return fills.to(self, dtypes.complex128)

    def half(self) -> Tensor:
        return fills.to(self, dtypes.float16)

    def bfloat16(self) -> Tensor:
        return fills.to(self, dtypes.bfloat16)

    def long(self) -> Tensor:
        return fills.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return fills.to(self, dtypes.int32)

    def short(self) -> Tensor:
        return fills.to(self, dtypes.int16)

    def char(self) -> Tensor:
        return fills.to(self, dtypes.int8)

    def byte(self) -> Tensor:
        return fills.to(self, dtypes.uint8)

    def bool(self) -> Tensor:
        return fills.to(self, dtypes.bool)

    def cpu(self, memory_format: Any = None) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> Tensor:  # fmt: skip
        """Raises, as a PyTorch build without CUDA does: lucid runs on the CPU."""
        check_device("cuda")
        return self

    def pin_memory(self, device: Any = None) -> Tensor:
        """Raises, as PyTorch's CPU build does: pinned memory needs an accelerator."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def clone(self) -> Tensor:
        return fills.clone(self)

    def type_as(self, other: Tensor) -> Tensor:
        check_tensors(other)
        return fills.to(self, other.dtype)

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
    # Operators bound to their op's function: the same call, one Python frame fewer per op.
    __add__ = arithmetic.add
    __radd__ = arithmetic.add

    def __iadd__(self, other: Any) -> Tensor:
        return arithmetic.add_(self, other)

    __sub__ = arithmetic.sub
    __rsub__ = arithmetic.rsub

    def __isub__(self, other: Any) -> Tensor:
        return arithmetic.sub_(self, other)

    __mul__ = arithmetic.mul
    __rmul__ = arithmetic.mul

    def __imul__(self, other: Any) -> Tensor:
        return arithmetic.mul_(self, other)

    __truediv__ = arithmetic.div
    __rtruediv__ = arithmetic.rdiv

    def __itruediv__(self, other: Any) -> Tensor:
        return arithmetic.div_(self, other)

    __floordiv__ = arithmetic.floor_divide

    def __rfloordiv__(self, other: Any) -> Tensor:
        return arithmetic.floor_divide(other, self)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return arithmetic.floor_divide_(self, other)

    __mod__ = arithmetic.remainder

    def __rmod__(self, other: Any) -> Tensor:
        return arithmetic.remainder(other, self)

    def __imod__(self, other: Any) -> Tensor:
        return arithmetic.remainder_(self, other)

    __pow__ = arithmetic.pow

    def __rpow__(self, other: Any) -> Tensor:
        return arithmetic.pow(other, self)

    def __ipow__(self, exponent: Any) -> Tensor:
        return arithmetic.pow_(self, exponent)

    __matmul__ = products.matmul

    def __rmatmul__(self, other: Any) -> Tensor:
        return products.matmul(other, self)

    __neg__ = arithmetic.neg

    def __pos__(self) -> Tensor:
        return self

    __abs__ = pointwise.abs

    def __invert__(self) -> Tensor:
        if self._data.dtype.kind in FLOAT_KINDS:
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
            )
        return pointwise.bitwise_not(self)

    __and__ = pointwise.bitwise_and
    __rand__ = pointwise.bitwise_and
    __iand__ = pointwise.bitwise_and_
    __or__ = pointwise.bitwise_or
    __ror__ = pointwise.bitwise_or
    __ior__ = pointwise.bitwise_or_
    __xor__ = pointwise.bitwise_xor
    __rxor__ = pointwise.bitwise_xor
    __ixor__ = pointwise.bitwise_xor_
    __lshift__ = pointwise.bitwise_left_shift

    def __rlshift__(self, other: Any) -> Tensor:
        return pointwise.bitwise_left_shift(other, self)

    __ilshift__ = pointwise.bitwise_left_shift_
    __rshift__ = pointwise.bitwise_right_shift

    def __rrshift__(self, other: Any) -> Tensor:
        return pointwise.bitwise_right_shift(other, self)

    __irshift__ = pointwise.bitwise_right_shift_

    # Against None, a list or another non-number, == and != fall back to Python's identity
    # comparison, as PyTorch's do.
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None or isinstance(other, list | tuple | str | dict):
            return NotImplemented
        return pointwise.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None or isinstance(other, list | tuple | str | dict):
            return NotImplemented
        return pointwise.ne(self, other)

    __lt__ = pointwise.lt
    __le__ = pointwise.le
    __gt__ = pointwise.gt
    __ge__ = pointwise.ge
    __getitem__ = indexing.getitem

    def __setitem__(self, index: Any, value: Any) -> None:
        indexing.setitem_(self, index, value)

    # ------------------------------------------------------------- arithmetic
    def true_divide(self, other: Any) -> Tensor:
        return arithmetic.div(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return arithmetic.div(self, other, rounding_mode="floor")

    def dot(self, other: Tensor) -> Tensor:
        return products.dot(self, other)

    # --------------------------------------------------------------- pointwise
    def clip_(self, min: Any = None, max: Any = None) -> Tensor:
        return pointwise.clamp_(self, min, max)

    def relu(self) -> Tensor:
        return activations.relu(self)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return pointwise.clamp(self, min, max)

    def copy_(self, src: Tensor) -> Tensor:
        return fills.copy_(self, src)

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        # the method takes no dim=None, which F.softmax reads as an implicit dim
        check_int(dim, "softmax", "dim", 1)
        return activations.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        check_int(dim, "log_softmax", "dim", 1)
        return activations.log_softmax(self, dim, dtype=dtype)

    # ------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> Tensor:
        return shape_ops.reshape(self, _int_varargs("reshape", "shape", shape))

    def view(self, *shape: Any) -> Tensor:
        if not shape:
            raise TypeError(
                "view() received an invalid combination of arguments - got (), but expected "
                "one of:\n * (lucid.dtype dtype)\n * (tuple of ints size)\n"
            )
        if len(shape) == 1 and not isinstance(shape[0], int | tuple | list | Size):
            dtype = shape[0]
            if type(dtype) is not dtypes.dtype and dtype not in (builtins.float, builtins.int,
                                                                 builtins.bool):  # fmt: skip
                name = type(dtype).__name__
                mismatch = (
                    f"\n      didn't match because some of the arguments have invalid types: "
                    f"(!{name}!)"
                )
                raise TypeError(
                    f"view() received an invalid combination of arguments - got ({name}), but "
                    f"expected one of:\n * (lucid.dtype dtype){mismatch}\n * (tuple of ints "
                    f"size){mismatch}\n"
                )
            return storage_ops.view_dtype(self, dtype)
        return shape_ops.view(self, _varargs_shape(shape))

    def view_as(self, other: Tensor) -> Tensor:
        check_tensors(other)
        return shape_ops.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        check_tensors(other)
        return shape_ops.reshape(self, other.shape)

    def sum_to_size(self, *size: Any) -> Tensor:
        return broadcast.sum_to(self, _int_varargs("sum_to_size", "size", size))

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return shape_ops.transpose(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return shape_ops.transpose(self, dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return shape_ops.movedim(self, source, destination)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return indexing.nonzero(self, as_tuple=as_tuple)

    def permute(self, *dims: Any) -> Tensor:
        if not dims:
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        return shape_ops.permute(self, _int_varargs("permute", "dims", dims))

    def expand(self, *sizes: Any) -> Tensor:
        return shape_ops.expand(self, _int_varargs("expand", "size", sizes))

    def prelu(self, weight: Tensor) -> Tensor:
        # checked here, so the message counts `weight` as the method's first argument
        check_tensors(weight)
        return activations.prelu(self, weight)

    def expand_as(self, other: Tensor) -> Tensor:
        check_tensors(other)
        return shape_ops.expand(self, other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        return shape_ops.repeat(self, _int_varargs("repeat", "repeats", sizes))

    def tile(self, *dims: Any) -> Tensor:
        return shape_ops.tile(self, _int_varargs("tile", "dims", dims))

    def polygamma(self, n: builtins.int) -> Tensor:
        return pointwise.polygamma(n, self)

    def flip(self, *dims: Any) -> Tensor:
        return shape_ops.flip(self, _int_varargs("flip", "dims", dims))

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return indexing.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Tensor:  # fmt: skip
        return indexing.scatter(self, dim, index, src, value=value, reduce=reduce)

    def where(self, condition: Tensor, y: Any) -> Tensor:
        return pointwise.where(condition, self, y)


def _int_varargs(op: str, name: str, values: tuple) -> tuple:
    """Sizes given as f(2, 3) or f((2, 3)), with PyTorch's TypeError for one that is no int.
    PyTorch reads a first argument that is no int as the whole sequence, so a second one is
    then one too many: `repeat() takes 1 positional argument but 2 were given`."""
    if len(values) == 1 and isinstance(values[0], tuple | list | Size):
        values = tuple(values[0])
    elif values and values[0].__class__ is not builtins.int and not is_int(values[0]):
        if len(values) > 1:
            raise TypeError(f"{op}() takes 1 positional argument but {len(values)} were given")
        raise TypeError(
            f"{op}(): argument '{name}' (position 1) must be tuple of ints, not "
            f"{type_name(values[0])}"
        )
    for value in values:
        # the common case, cheap enough for reshape's hot path: Python ints only
        if value.__class__ is not builtins.int:
            break
    else:
        return values
    for index, value in enumerate(values):
        if not is_int_list_item(value, index):
            raise int_list_item_error(op, name, 1, index, value)
    return values


# id of each method copy -> the function it copies (the copy keeps it alive through the class)
_COPIED_FUNCTIONS: dict[int, Any] = {}


def function_of(method: Any) -> Any:
    """The function of lucid's that a Tensor method is a copy of (`Tensor.tril` -> `lucid.tril`),
    or `method` itself."""
    return _COPIED_FUNCTIONS.get(id(method), method)


def _bind_methods_in_method_form(cls: type) -> None:
    """Make each of lucid's functions bound as a method (`tril = matrices.tril`) a copy of its
    own, named `Tensor.<name>`: the same code, globals, defaults and attributes, so calls cost
    the same, but an argument error raised under it can tell the call was `x.tril(1.5)`, whose
    positions count from after `self` (arguments.call_position)."""
    for name, function in list(vars(cls).items()):
        if type(function) is not types.FunctionType or function.__module__ == __name__:
            continue
        if not function.__module__.startswith("lucid."):
            continue
        code = function.__code__.replace(co_qualname=f"Tensor.{name}")
        method = types.FunctionType(
            code, function.__globals__, function.__name__, function.__defaults__,
            function.__closure__,
        )  # fmt: skip
        method.__kwdefaults__ = function.__kwdefaults__
        method.__dict__.update(function.__dict__)
        method.__doc__ = function.__doc__
        method.__module__ = function.__module__
        method.__qualname__ = function.__qualname__
        method.__annotations__ = function.__annotations__
        METHOD_CODES[id(code)] = name
        _COPIED_FUNCTIONS[id(method)] = function
        setattr(cls, name, method)


def _count_positions_from_self(cls: type, names: Iterable[str]) -> None:
    """Mark methods written in this class that pass their arguments, in order, to the function
    of their own name (x.svd(3) is svd(x, 3)): an argument error that function raises names
    positions as the method call counts them, from after `self`."""
    for name in names:
        METHOD_CODES[id(vars(cls)[name].__code__)] = name


_bind_methods_in_method_form(Tensor)
_count_positions_from_self(
    Tensor,
    ("cholesky", "cholesky_inverse", "log_softmax", "moveaxis", "pinverse", "qr", "softmax", "svd"),
)
register_tensor_class(Tensor)


class _HeldAccumulator:
    """A strong stand-in for the weak reference a leaf keeps to its AccumulateGrad."""

    __slots__ = ("accumulator",)

    def __init__(self, accumulator: Any) -> None:
        self.accumulator = accumulator

    def __call__(self) -> Any:
        return self.accumulator


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


def _spectral_functions() -> Any:
    """The FFT family (stft, istft), imported on the first call of one of them."""
    from lucid.ops import spectral

    return spectral


def _matrix_functions() -> Any:
    """The family of the matrix functions, imported on the first call of one of them."""
    from lucid.ops import decompositions

    return decompositions
