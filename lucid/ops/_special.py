"""Vectorized erf and erfc for NumPy arrays (NumPy has neither), accurate to the last bit or two.

Float64 follows Sun's fdlibm s_erf.c design: rational approximations on |x| < 0.84375, < 1.25,
< 1/0.35 and beyond, the last two of the form exp(-x*x - 0.5625 + R/S) / x, which keeps erfc's
relative accuracy deep into its tail. The rational functions are evaluated in the order of the C
libraries that ship this design (glibc's, behind math.erf), so that their roundings are the same,
and results stay within 2 ulp of math.erf and math.erfc. erfc's tail goes further: its exponential
and quotient are carried to more than double precision and rounded once, where np.exp, a product
and a quotient would add up to 2.5 ulp.

Float32 and float16 use two shorter approximations, still in float64 arithmetic (see
_ERF_OVER_X), and round the result.

Each interval is evaluated only on the elements in it: the input is cut into blocks that stay in
cache, and each block split into its intervals with index arrays.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from lucid._core.dtypes import FLOAT_KINDS

__all__ = ["erf", "erfc"]

# Interval bounds on |x|. The 1/0.35 bound is that of the C code, which compares high words: erf
# and erfc differ there by one unit of the high word.
_SMALL = 0.84375
_MIDDLE = 1.25
_FAR_ERF = float.fromhex("0x1.6db6ep+1")
_FAR_ERFC = float.fromhex("0x1.6db6dp+1")
# Beyond these, erf rounds to +-1 and erfc to 0 (or 2): clamping there keeps exp in range.
_ERF_SATURATION = 6.0
_ERFC_SATURATION = 28.0

# erf(1) rounded to 24 bits, so that 1 - _ERX is exact.
_ERX = 8.45062911510467529297e-01
_ONE_MINUS_ERX = 1.0 - _ERX

# erf(x) = x + x * P(x^2) / Q(x^2) on |x| < 0.84375.
_PP = (
    1.28379167095512558561e-01,
    -3.25042107247001499370e-01,
    -2.84817495755985104766e-02,
    -5.77027029648944159157e-03,
    -2.37630166566501626084e-05,
)
_QQ = (
    1.0,
    3.97917223959155352819e-01,
    6.50222499887672944485e-02,
    5.08130628187576562776e-03,
    1.32494738004321644526e-04,
    -3.96022827877536812320e-06,
)
# erf(1 + s) = _ERX + P(s) / Q(s) on 0.84375 <= |x| < 1.25.
_PA = (
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
)
_QA = (
    1.0,
    1.06420880400844228286e-01,
    5.40397917702171048937e-01,
    7.18286544141962662868e-02,
    1.26171219808761642112e-01,
    1.36370839120290507362e-02,
    1.19844998467991074170e-02,
)
# erfc(x) = exp(-x*x - 0.5625 + R(1/x^2) / S(1/x^2)) / x on 1.25 <= |x| < 1/0.35 ...
_RA = (
    -9.86494403484714822705e-03,
    -6.93858572707181764372e-01,
    -1.05586262253232909814e01,
    -6.23753324503260060396e01,
    -1.62396669462573470355e02,
    -1.84605092906711035994e02,
    -8.12874355063065934246e01,
    -9.81432934416914548592e00,
)
_SA = (
    1.0,
    1.96512716674392571292e01,
    1.37657754143519042600e02,
    4.34565877475229228821e02,
    6.45387271733267880336e02,
    4.29008140027567833386e02,
    1.08635005541779435134e02,
    6.57024977031928170135e00,
    -6.04244152148580987438e-02,
)
# ... and with these coefficients on |x| >= 1/0.35.
_RB = (
    -9.86494292470009928597e-03,
    -7.99283237680523006574e-01,
    -1.77579549177547519889e01,
    -1.60636384855821916062e02,
    -6.37566443368389627722e02,
    -1.02509513161107724954e03,
    -4.83519191608651397019e02,
)
_SB = (
    1.0,
    3.03380607434824582924e01,
    3.25792512996573918826e02,
    1.53672958608443695994e03,
    3.19985821950859553908e03,
    2.55305040643316442583e03,
    4.74528541206955367215e02,
    -2.24409524465858183362e01,
)

# Clearing the low 32 bits of |x| leaves 21 significant bits, so that its square is exact.
_HIGH_WORD = np.uint64(0xFFFFFFFF00000000)
_SIGN_BIT = np.int64(-(2**63))
# Veltkamp's constant 2^27 + 1 splits a double into two halves whose products are exact.
_SPLITTER = 134217729.0
# Adding 1.5 * 2^52 rounds a double of magnitude below 2^51 to an integer, which the low bits of
# the sum then hold in two's complement.
_ROUNDER = 6755399441055744.0
_ROUNDER_BITS = np.int64(0x4338000000000000)
_EXPONENT_BIAS = np.int64(1023)

_EXP_TABLE_BITS = 7
_EXP_TABLE_SIZE = 1 << _EXP_TABLE_BITS


@functools.cache
def _exp_tables() -> tuple[float, float, np.ndarray, np.ndarray]:
    """ln(2)/128 as a high part short enough that its products with integers below 2^18 are
    exact, plus a low part; and 2^(j/128), j = 0..127, as high and low doubles. From 40-digit
    decimal arithmetic, built on erfc's first call so `import lucid` does not load decimal."""
    import decimal

    with decimal.localcontext() as context:
        context.prec = 40
        step = decimal.Decimal(2).ln() / _EXP_TABLE_SIZE
        step_high = math.floor(float(step) * 2.0**42) / 2.0**42
        step_low = float(step - decimal.Decimal(step_high))
        root = decimal.Decimal(2)
        for _ in range(_EXP_TABLE_BITS):
            root = root.sqrt()
        high = np.empty(_EXP_TABLE_SIZE)
        low = np.empty(_EXP_TABLE_SIZE)
        power = decimal.Decimal(1)
        for j in range(_EXP_TABLE_SIZE):
            high[j] = float(power)
            low[j] = float(power - decimal.Decimal(high[j]))
            power *= root
    return step_high, step_low, high, low


_EXP_SCALE = _EXP_TABLE_SIZE / math.log(2.0)

# Elements per block: a block's temporaries stay in the L2 cache, and the Python overhead of each
# NumPy call is spread over enough elements.
_BLOCK = 65536
# Rows of scratch space per element of a block, the most that the kernels use at once.
_ROWS = 20


def _rows(space: np.ndarray, count: int, length: int) -> np.ndarray:
    """count rows of the given length, one after the other at the start of the scratch space.
    Packing them (rather than one row per block-sized stride) measurably speeds up two-operand
    ops, whose operands would otherwise sit at equal offsets modulo the 4 KiB page."""
    return space[: count * length].reshape(count, length)


def _polynomial(
    s: np.ndarray, coefficients: tuple, powers: dict, out: np.ndarray, scratch: np.ndarray
) -> None:
    """out = sum c_i s^i, grouped as (c0 + s c1) + s^2 (c2 + s c3) + s^4 (c4 + s c5) + ... like
    the C code, so that the rounding errors are the same; powers maps 2, 4, ... to s^2, s^4, ..."""
    np.multiply(s, coefficients[1], out=out)
    out += coefficients[0]
    for i in range(2, len(coefficients), 2):
        if i + 1 < len(coefficients):
            np.multiply(s, coefficients[i + 1], out=scratch)
            scratch += coefficients[i]
            scratch *= powers[i]
        else:
            np.multiply(powers[i], coefficients[i], out=scratch)
        out += scratch


def _rational(
    s: np.ndarray, numerator: tuple, denominator: tuple, out: np.ndarray, space: np.ndarray
) -> None:
    """out = P(s) / Q(s); uses 6 rows of scratch."""
    square, fourth, sixth, eighth, below, scratch = _rows(space, 6, s.size)
    # the powers are formed as in the C code: s^6 = s^4 s^2 and s^8 = s^4 s^4
    np.multiply(s, s, out=square)
    np.multiply(square, square, out=fourth)
    powers = {2: square, 4: fourth}
    if max(len(numerator), len(denominator)) > 6:
        powers[6] = np.multiply(fourth, square, out=sixth)
    if max(len(numerator), len(denominator)) > 8:
        powers[8] = np.multiply(fourth, fourth, out=eighth)
    _polynomial(s, numerator, powers, out, scratch)
    _polynomial(s, denominator, powers, below, scratch)
    out /= below


def _select_negative(
    key: np.ndarray, negative: np.ndarray, otherwise: np.ndarray, out: np.ndarray, mask: np.ndarray
) -> None:
    """out = negative where key has its sign bit set, else otherwise; clobbers negative and mask.
    Bitwise, since np.where mispredicts a branch per element when the signs are mixed."""
    bits = mask.view(np.int64)
    np.right_shift(key.view(np.int64), 63, out=bits)
    chosen = negative.view(np.int64)
    np.bitwise_xor(chosen, otherwise.view(np.int64), out=chosen)
    chosen &= bits
    np.bitwise_xor(chosen, otherwise.view(np.int64), out=out.view(np.int64))


def _with_sign_of(
    magnitude: np.ndarray, x: np.ndarray, out: np.ndarray, scratch: np.ndarray
) -> None:
    """out = magnitude (non-negative) with the sign of x, faster than np.copysign."""
    sign = scratch.view(np.int64)
    np.bitwise_and(x.view(np.int64), _SIGN_BIT, out=sign)
    np.bitwise_or(magnitude.view(np.int64), sign, out=out.view(np.int64))


def _small(x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray) -> None:
    """|x| < 0.84375, and NaN: erf(x) = x + x P(x^2) / Q(x^2). 8 rows of scratch."""
    z, y = _rows(space, 2, x.size)
    np.multiply(x, x, out=z)
    _rational(z, _PP, _QQ, y, space[2 * x.size :])
    y *= x
    if not complement:
        np.add(x, y, out=out)
        return
    near, far = _rows(space[2 * x.size :], 2, x.size)
    np.add(x, y, out=near)
    np.subtract(1.0, near, out=near)
    # 1 - erf(x) cancels for x >= 1/4: subtract 1/2 first to keep the low bits
    np.subtract(x, 0.5, out=far)
    far += y
    np.subtract(0.5, far, out=far)
    np.subtract(x, 0.25, out=z)
    _select_negative(z, near, far, out, y)


def _middle(x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray) -> None:
    """0.84375 <= |x| < 1.25: erf(x) = sign(x) (c + P(s) / Q(s)), s = |x| - 1, c = _ERX.
    8 rows of scratch."""
    s, ratio = _rows(space, 2, x.size)
    np.abs(x, out=s)
    s -= 1.0
    _rational(s, _PA, _QA, ratio, space[2 * x.size :])
    if not complement:
        ratio += _ERX
        _with_sign_of(ratio, x, out, s)
        return
    positive = _rows(space[2 * x.size :], 1, x.size)[0]
    np.subtract(_ONE_MINUS_ERX, ratio, out=positive)
    ratio += _ERX
    ratio += 1.0
    _select_negative(x, ratio, positive, out, s)


def _tail_ratio(
    a: np.ndarray, s: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray
) -> None:
    """out = R(s) / S(s) for the tail, with the coefficients for |x| below or above 1/0.35.
    Applies the coefficients of most elements to all of them, then redoes the others: cheaper
    than splitting both ways, as one side is usually small. 6 rows of scratch."""
    n = a.size
    near = a < (_FAR_ERFC if complement else _FAR_ERF)
    count = np.count_nonzero(near)
    mostly_near = 2 * count >= n
    _rational(s, *((_RA, _SA) if mostly_near else (_RB, _SB)), out, space)
    if count == 0 or count == n:
        return
    if mostly_near:
        np.logical_not(near, out=near)
    indices = np.flatnonzero(near)
    part_s, part_out = _rows(space, 2, indices.size)
    np.take(s, indices, out=part_s, mode="wrap")
    numerator, denominator = (_RB, _SB) if mostly_near else (_RA, _SA)
    _rational(part_s, numerator, denominator, part_out, space[2 * indices.size :])
    out[indices] = part_out


def _exp_quotient(
    total: np.ndarray, error: np.ndarray, a: np.ndarray, out: np.ndarray, space: np.ndarray
) -> None:
    """out = exp(total + error) / a rounded once, for total <= -2 and |error| tiny. 11 rows.

    np.exp is off by up to 0.65 ulp, and a product and a quotient would round twice more: this
    keeps erfc's tail within about half an ulp of the approximation instead of two and more.
    exp(t) = 2^m 2^(j/128) e^r, t = (128 m + j) ln(2)/128 + r and |r| <= ln(2)/256, with
    2^(j/128) as two doubles; the quotient is made exact with Dekker's product.
    """
    k, r, table, table_low, product, residual, a_high, a_low, q_high, q_low, shift = _rows(
        space, 11, a.size
    )
    ln2_step_high, ln2_step_low, exp2_high, exp2_low = _exp_tables()
    exponent = shift.view(np.int64)
    np.multiply(total, _EXP_SCALE, out=k)
    k += _ROUNDER
    np.subtract(k.view(np.int64), _ROUNDER_BITS, out=exponent)
    k -= _ROUNDER
    # k ln(2)/128 is exact with the short high part, and so is its difference with total
    np.multiply(k, ln2_step_high, out=r)
    np.subtract(total, r, out=r)
    np.multiply(k, ln2_step_low, out=product)
    np.subtract(error, product, out=error)
    r += error
    # e^r - 1, to about 2^-62 relative to e^r
    expm1 = product
    np.multiply(r, 1.0 / 120.0, out=expm1)
    expm1 += 1.0 / 24.0
    expm1 *= r
    expm1 += 1.0 / 6.0
    expm1 *= r
    expm1 += 0.5
    expm1 *= r
    expm1 *= r
    expm1 += r
    index = k.view(np.int64)
    np.bitwise_and(exponent, _EXP_TABLE_SIZE - 1, out=index)
    exponent >>= _EXP_TABLE_BITS
    np.take(exp2_high, index, out=table, mode="wrap")
    np.take(exp2_low, index, out=table_low, mode="wrap")
    # 2^(j/128) e^r = table + correction, the correction small enough that its rounding is lost
    correction = expm1
    correction *= table
    correction += table_low
    # table / a = q + remainder / a exactly, the remainder from Dekker's exact product q a
    q = r
    np.divide(table, a, out=q)
    for value, high, low in ((a, a_high, a_low), (q, q_high, q_low)):
        np.multiply(value, _SPLITTER, out=high)
        np.subtract(high, value, out=low)
        np.subtract(high, low, out=high)
        np.subtract(value, high, out=low)
    rounded, scratch = k, table_low
    np.multiply(q, a, out=rounded)
    np.multiply(q_high, a_high, out=residual)
    residual -= rounded
    for left, right in ((q_high, a_low), (q_low, a_high), (q_low, a_low)):
        np.multiply(left, right, out=scratch)
        residual += scratch
    remainder = table
    remainder -= rounded
    remainder -= residual
    remainder += correction
    remainder /= a
    remainder += q
    # times 2^m in two exact steps (m >= -1140, and each half-power is a normal double), so
    # that a subnormal result is rounded once, by the second
    half = residual.view(np.int64)
    np.right_shift(exponent, 1, out=half)
    exponent -= half
    for power in (half, exponent):
        power += _EXPONENT_BIAS
        power <<= 52
        remainder *= power.view(np.float64)
    np.copyto(out, remainder)


def _tail(x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray) -> None:
    """|x| >= 1.25, infinities included: erfc(|x|) = exp(-x^2 - 0.5625 + R(s) / S(s)) / |x|,
    s = 1/x^2. 17 rows of scratch."""
    a, s, ratio, z, small, t = _rows(space, 6, x.size)
    rest = space[6 * x.size :]
    np.abs(x, out=a)
    # beyond the cap erf is +-1 and erfc 0 or 2 to the last bit; the cap keeps exp in range
    np.minimum(a, _ERFC_SATURATION if complement else _ERF_SATURATION, out=a)
    np.multiply(a, a, out=s)
    np.divide(1.0, s, out=s)
    _tail_ratio(a, s, ratio, complement, rest)
    # exp(-x^2) = exp(-z^2) exp((z - x)(z + x)) with z^2 exact: the rounding error of x^2 (up
    # to 784) would otherwise cost erfc about ten bits of relative accuracy
    np.bitwise_and(a.view(np.uint64), _HIGH_WORD, out=z.view(np.uint64))
    np.subtract(z, a, out=small)
    np.add(z, a, out=t)
    small *= t
    small += ratio
    large = t
    np.multiply(z, z, out=large)
    np.negative(large, out=large)
    large -= 0.5625
    if not complement:
        # 1 - erfc(|x|) >= 0.92 hides the roundings of the plain product and quotient
        np.exp(large, out=large)
        np.exp(small, out=small)
        large *= small
        large /= a
        np.subtract(1.0, large, out=large)
        _with_sign_of(large, x, out, z)
        return
    # the exponent as total + error exactly (Fast2Sum: |large| >= 2 > |small|)
    total, error = s, small
    np.add(large, small, out=total)
    np.subtract(total, large, out=large)
    np.subtract(small, large, out=error)
    _exp_quotient(total, error, a, ratio, rest)
    np.subtract(2.0, ratio, out=t)
    _select_negative(x, t, ratio, out, z)


def _evaluate_block(
    x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray, flags: np.ndarray
) -> None:
    """Writes erf(x) or erfc(x) into out, each interval evaluated on its own elements only."""
    n = x.size
    below_small, beyond_small, beyond_middle = flags[:, :n]
    magnitude = np.abs(x, out=space[:n])
    # NaN fails both comparisons and lands in the first interval, which propagates it
    np.greater_equal(magnitude, _SMALL, out=beyond_small)
    np.greater_equal(magnitude, _MIDDLE, out=beyond_middle)
    above_small = np.count_nonzero(beyond_small)
    above_middle = np.count_nonzero(beyond_middle)
    if above_small == 0:
        _small(x, out, complement, space)
        return
    if above_middle == n:
        _tail(x, out, complement, space)
        return
    np.logical_not(beyond_small, out=below_small)
    np.logical_xor(beyond_small, beyond_middle, out=beyond_small)
    for kernel, count, members in (
        (_small, n - above_small, below_small),
        (_middle, above_small - above_middle, beyond_small),
        (_tail, above_middle, beyond_middle),
    ):
        if count == 0:
            continue
        indices = np.flatnonzero(members)
        part_x, part_out = _rows(space, 2, count)
        np.take(x, indices, out=part_x, mode="wrap")
        kernel(part_x, part_out, complement, space[2 * count :])
        out[indices] = part_out


# Float32 and float16 inputs need 24 bits, not 53: two shorter approximations, still evaluated in
# float64, do. On |x| < 1.25, erf(x) = x P(x^2); beyond, erfc(x) = t exp(-x^2 + Q(t)) with
# t = 1/(1 + x/2), the form of the erfc of Numerical Recipes (Press et al., section 6.2). P and Q
# are minimax polynomials of degrees 9 and 11, fitted by the Remez exchange in 40-digit arithmetic:
# their errors, 2^-39 relative and 2^-38 in the exponent, leave the float32 result equal to the
# float64 one rounded, bar the rare argument whose value lies within 2^-38 of a rounding boundary
# (then one unit apart). Every float32 argument was checked this way against the float64 path.
_SINGLE_SMALL = 1.25
# erfc(10.1) is below half the smallest float32 subnormal: beyond it the results are 0, 1 and 2.
_SINGLE_SATURATION = 10.1
_ERF_OVER_X = (
    1.128379167094,
    -0.37612638884423105,
    0.11283791283329005,
    -0.026866139334832905,
    0.005223848246860897,
    -0.0008545231833479638,
    0.000120097938866735,
    -1.4504527922255264e-05,
    1.4041311201156802e-06,
    -8.140511119792624e-08,
)
_LOG_SCALED_ERFC = (
    -1.2655103466809148,
    0.999933041134167,
    0.37612998416857135,
    0.0720586055586833,
    -0.012036300194616599,
    -0.4776149712309215,
    0.9664217047518278,
    -2.308581967715582,
    3.6044284610900585,
    -3.02655397736069,
    1.2929525914251438,
    -0.2213786247540351,
)


def _horner(s: np.ndarray, coefficients: tuple, out: np.ndarray) -> None:
    """out = sum c_i s^i."""
    np.multiply(s, coefficients[-1], out=out)
    out += coefficients[-2]
    for coefficient in coefficients[-3::-1]:
        out *= s
        out += coefficient


def _single_small(x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray) -> None:
    """|x| < 1.25, and NaN, to float32 accuracy. 1 row of scratch."""
    z = _rows(space, 1, x.size)[0]
    np.multiply(x, x, out=z)
    _horner(z, _ERF_OVER_X, out)
    out *= x
    if complement:
        np.subtract(1.0, out, out=out)


def _single_tail(x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray) -> None:
    """|x| >= 1.25, to float32 accuracy. 3 rows of scratch."""
    a, t, tail = _rows(space, 3, x.size)
    np.abs(x, out=a)
    np.minimum(a, _SINGLE_SATURATION, out=a)
    np.multiply(a, 0.5, out=t)
    t += 1.0
    np.divide(1.0, t, out=t)
    _horner(t, _LOG_SCALED_ERFC, tail)
    # x^2 of a float32 x is exact in float64, and the sum's rounding is far below float32's
    a *= a
    tail -= a
    np.exp(tail, out=tail)
    tail *= t
    if complement:
        np.subtract(2.0, tail, out=t)
        _select_negative(x, t, tail, out, a)
        return
    np.subtract(1.0, tail, out=tail)
    _with_sign_of(tail, x, out, a)


def _evaluate_single_block(
    x: np.ndarray, out: np.ndarray, complement: bool, space: np.ndarray, flags: np.ndarray
) -> None:
    """erf(x) or erfc(x) into out to float32 accuracy: the interval of most elements is applied
    to all of them, then the other elements are redone (one split instead of two)."""
    n = x.size
    beyond = flags[0, :n]
    np.greater_equal(np.abs(x, out=space[:n]), _SINGLE_SMALL, out=beyond)
    count = np.count_nonzero(beyond)
    mostly_small = 2 * count <= n
    first, second = (_single_small, _single_tail) if mostly_small else (_single_tail, _single_small)
    first(x, out, complement, space)
    if count == (0 if mostly_small else n):
        return
    if not mostly_small:
        np.logical_not(beyond, out=beyond)
    indices = np.flatnonzero(beyond)
    part_x, part_out = _rows(space, 2, indices.size)
    np.take(x, indices, out=part_x, mode="wrap")
    second(part_x, part_out, complement, space[2 * indices.size :])
    out[indices] = part_out


def _evaluate(x: np.ndarray, complement: bool) -> np.ndarray:
    array = np.asarray(x)
    if array.dtype.kind not in FLOAT_KINDS:
        raise TypeError(f"erf and erfc take a floating-point array, not {array.dtype}")
    evaluate_block = _evaluate_single_block if array.dtype.itemsize <= 4 else _evaluate_block
    # overflow to inf and underflow to 0 inside the kernels are intended, and so is the invalid
    # operation that converting a signaling NaN raises
    with np.errstate(all="ignore"):
        flat = np.ravel(array).astype(np.float64, copy=False)
        result = np.empty(flat.shape, dtype=np.float64)
        width = min(flat.size, _BLOCK)
        space = np.empty(_ROWS * width)
        flags = np.empty((3, width), dtype=np.bool_)
        for start in range(0, flat.size, _BLOCK):
            block = slice(start, start + _BLOCK)
            evaluate_block(flat[block], result[block], complement, space, flags)
        return result.reshape(array.shape).astype(array.dtype, copy=False)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in the dtype of x (computed in float64)."""
    return _evaluate(x, False)


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x), elementwise, with its relative accuracy kept where it is tiny."""
    return _evaluate(x, True)
