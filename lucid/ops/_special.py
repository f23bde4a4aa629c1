"""Vectorized erf and erfc for NumPy arrays (NumPy has neither), accurate to the last bit or two.

The method is Sun's fdlibm s_erf.c design: piecewise rational approximations on |x| < 0.84375,
< 1.25, < 1/0.35 and beyond, the last two written as exp(-x*x - 0.5625 + R/S) / x so that erfc
keeps its relative accuracy deep into the tail. The rational functions are evaluated in the same
order as the C libraries that ship this design (glibc's, behind math.erf), so the results agree
with the standard library to the bit except where np.exp and the C exp round differently.

Each interval is evaluated only on the elements that fall in it: the input is split into blocks
that stay in cache, and each block into its intervals with index arrays.
"""

from __future__ import annotations

import decimal
import math

import numpy as np

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


def _exp_tables() -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """ln(2)/128 as a high part with 35 significant bits plus a low part, and 2^(j/128) for
    j = 0..127 as high and low doubles, from 40-digit decimal arithmetic."""
    with decimal.localcontext() as context:
        context.prec = 40
        step = decimal.Decimal(2).ln() / _EXP_TABLE_SIZE
        step_high = math.floor(float(step) * 2.0**42) / 2.0**42
        step_low = float(step - decimal.Decimal(step_high))
        root = decimal.Decimal(2)
        for _ in range(7):
            root = root.sqrt()
        high = np.empty(_EXP_TABLE_SIZE)
        low = np.empty(_EXP_TABLE_SIZE)
        power = decimal.Decimal(1)
        for j in range(_EXP_TABLE_SIZE):
            high[j] = float(power)
            low[j] = float(power - decimal.Decimal(high[j]))
            power *= root
    return _EXP_TABLE_SIZE / math.log(2.0), step_high, step_low, high, low


_EXP_TABLE_SIZE = 128
_EXP_SCALE, _LN2_STEP_HIGH, _LN2_STEP_LOW, _EXP2_HIGH, _EXP2_LOW = _exp_tables()

# Elements per block: the block and its temporaries stay in the L2 cache, and the Python overhead
# of each NumPy call is spread over enough elements.
_BLOCK = 65536
# Rows of the per-call scratch space: two for gathered inputs and outputs, the rest for kernels.
_ROWS = 20


def _polynomial(s: np.ndarray, coefficients: tuple, powers: dict, out: np.ndarray,
                scratch: np.ndarray) -> None:
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


def _even_powers(s: np.ndarray, highest: int, rows: np.ndarray) -> dict:
    """s^2, s^4, ... up to s^highest in rows, each computed as the C code does."""
    powers = {2: np.multiply(s, s, out=rows[0])}
    if highest >= 4:
        powers[4] = np.multiply(powers[2], powers[2], out=rows[1])
    if highest >= 6:
        powers[6] = np.multiply(powers[4], powers[2], out=rows[2])
    if highest >= 8:
        powers[8] = np.multiply(powers[4], powers[4], out=rows[3])
    return powers


def _rational(s: np.ndarray, numerator: tuple, denominator: tuple, out: np.ndarray,
              work: np.ndarray) -> None:
    """out = P(s) / Q(s)."""
    highest = (max(len(numerator), len(denominator)) - 1) // 2 * 2
    powers = _even_powers(s, highest, work)
    below, scratch = work[4], work[5]
    _polynomial(s, numerator, powers, out, scratch)
    _polynomial(s, denominator, powers, below, scratch)
    out /= below


def _select_negative(key: np.ndarray, negative: np.ndarray, otherwise: np.ndarray,
                     out: np.ndarray, mask: np.ndarray) -> None:
    """out = negative where key has its sign bit set, else otherwise; clobbers negative and mask.
    Bitwise, since np.where mispredicts a branch per element on mixed signs."""
    bits = mask.view(np.int64)
    np.right_shift(key.view(np.int64), 63, out=bits)
    chosen = negative.view(np.int64)
    np.bitwise_xor(chosen, otherwise.view(np.int64), out=chosen)
    chosen &= bits
    np.bitwise_xor(chosen, otherwise.view(np.int64), out=out.view(np.int64))


def _with_sign_of(magnitude: np.ndarray, x: np.ndarray, out: np.ndarray,
                  scratch: np.ndarray) -> None:
    """out = magnitude (non-negative) with the sign of x; cheaper than np.copysign."""
    sign = scratch.view(np.int64)
    np.bitwise_and(x.view(np.int64), _SIGN_BIT, out=sign)
    np.bitwise_or(magnitude.view(np.int64), sign, out=out.view(np.int64))


def _small(x: np.ndarray, out: np.ndarray, complement: bool, work: np.ndarray) -> None:
    """|x| < 0.84375, and NaN: erf(x) = x + x P(x^2) / Q(x^2)."""
    z, y = work[0], work[1]
    np.multiply(x, x, out=z)
    _rational(z, _PP, _QQ, y, work[2:])
    y *= x
    if not complement:
        np.add(x, y, out=out)
        return
    near, far = work[2], work[3]
    np.add(x, y, out=near)
    np.subtract(1.0, near, out=near)
    # 1 - erf(x) cancels for x >= 1/4: subtract 1/2 first to keep the low bits
    np.subtract(x, 0.5, out=far)
    far += y
    np.subtract(0.5, far, out=far)
    np.subtract(x, 0.25, out=z)
    _select_negative(z, near, far, out, y)


def _middle(x: np.ndarray, out: np.ndarray, complement: bool, work: np.ndarray) -> None:
    """0.84375 <= |x| < 1.25: erf(x) = sign(x) (c + P(s) / Q(s)), s = |x| - 1, c = _ERX."""
    s, ratio = work[0], work[1]
    np.abs(x, out=s)
    s -= 1.0
    _rational(s, _PA, _QA, ratio, work[2:])
    if not complement:
        ratio += _ERX
        _with_sign_of(ratio, x, out, s)
        return
    positive = work[2]
    np.subtract(_ONE_MINUS_ERX, ratio, out=positive)
    ratio += _ERX
    ratio += 1.0
    _select_negative(x, ratio, positive, out, s)


def _tail_ratio(a: np.ndarray, s: np.ndarray, out: np.ndarray, complement: bool,
                work: np.ndarray) -> None:
    """out = R(s) / S(s) for the tail, with the coefficients of |x| below or above 1/0.35."""
    near = a < (_FAR_ERFC if complement else _FAR_ERF)
    count = np.count_nonzero(near)
    if count == a.size:
        _rational(s, _RA, _SA, out, work)
        return
    if count == 0:
        _rational(s, _RB, _SB, out, work)
        return
    for indices, numerator, denominator in (
        (np.flatnonzero(near), _RA, _SA),
        (np.flatnonzero(~near), _RB, _SB),
    ):
        part_s, part_out = work[:2, : indices.size]
        np.take(s, indices, out=part_s, mode="wrap")
        _rational(part_s, numerator, denominator, part_out, work[2:, : indices.size])
        out[indices] = part_out


def _exp_quotient(total: np.ndarray, error: np.ndarray, a: np.ndarray, out: np.ndarray,
                  work: np.ndarray) -> None:
    """out = exp(total + error) / a rounded once, total <= -2 and |error| tiny; clobbers error.

    np.exp rounds to within 0.65 ulp, and two more roundings would follow: this keeps erfc's
    tail within half an ulp (plus the approximation's own error) instead of two. exp(t) =
    2^m 2^(j/128) e^r with t = (128 m + j) ln(2)/128 + r and |r| <= ln(2)/256, the powers of two
    kept as two doubles; the quotient is made exact with Dekker's product.
    """
    k, r, table, table_low, product, product_error, a_high, a_low, q_high, q_low = work[:10]
    exponent = work[10].view(np.int64)
    np.multiply(total, _EXP_SCALE, out=k)
    np.rint(k, out=k)
    # k ln(2)/128 is exact with 35 bits of the constant, and so is its difference with total
    np.multiply(k, _LN2_STEP_HIGH, out=r)
    np.subtract(total, r, out=r)
    np.multiply(k, _LN2_STEP_LOW, out=product)
    np.subtract(error, product, out=error)
    r += error
    # e^r - 1 to about 2^-62 relative to e^r
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
    np.copyto(exponent, k, casting="unsafe")
    index = work[11].view(np.int64)
    np.bitwise_and(exponent, _EXP_TABLE_SIZE - 1, out=index)
    np.right_shift(exponent, 7, out=exponent)
    np.take(_EXP2_HIGH, index, out=table, mode="wrap")
    np.take(_EXP2_LOW, index, out=table_low, mode="wrap")
    # 2^(j/128) e^r = table + correction, the correction small enough that its rounding is not felt
    correction = expm1
    correction *= table
    correction += table_low
    # table / a = q + remainder / a exactly, the remainder from Dekker's exact product q * a
    q = r
    np.divide(table, a, out=q)
    for value, high, low in ((a, a_high, a_low), (q, q_high, q_low)):
        np.multiply(value, _SPLITTER, out=high)
        np.subtract(high, value, out=low)
        np.subtract(high, low, out=high)
        np.subtract(value, high, out=low)
    rounded = k
    np.multiply(q, a, out=rounded)
    residual, scratch = product_error, table_low
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
    np.ldexp(remainder, exponent, out=out)


def _tail(x: np.ndarray, out: np.ndarray, complement: bool, work: np.ndarray) -> None:
    """|x| >= 1.25, infinities included: erfc(|x|) = exp(-x^2 - 0.5625 + R(s) / S(s)) / |x|."""
    a, s, ratio, z, small, t = work[:6]
    np.abs(x, out=a)
    # beyond the cap erf is +-1 and erfc 0 or 2 to the last bit; the cap keeps exp in range
    np.minimum(a, _ERFC_SATURATION if complement else _ERF_SATURATION, out=a)
    np.multiply(a, a, out=s)
    np.divide(1.0, s, out=s)
    _tail_ratio(a, s, ratio, complement, work[6:])
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
    # the exponent as total + error, exactly (Fast2Sum: |large| >= 2 > |small|)
    total, error = s, small
    np.add(large, small, out=total)
    np.subtract(total, large, out=large)
    np.subtract(small, large, out=error)
    if complement:
        _exp_quotient(total, error, a, ratio, work[6:])
        np.subtract(2.0, ratio, out=t)
        _select_negative(x, t, ratio, out, z)
        return
    # 1 - erfc(|x|) >= 0.92 does not need the careful quotient
    np.exp(total, out=total)
    total /= a
    np.multiply(total, error, out=t)
    total += t
    np.subtract(1.0, total, out=total)
    _with_sign_of(total, x, out, t)


def _evaluate_block(x: np.ndarray, out: np.ndarray, complement: bool, work: np.ndarray,
                    flags: np.ndarray) -> None:
    """Writes erf(x) or erfc(x) into out, each interval evaluated on its own elements only."""
    n = x.size
    magnitude = np.abs(x, out=work[0, :n])
    # NaN fails both comparisons and lands in the first interval, which propagates it
    below_small, beyond_small, beyond_middle = flags[:, :n]
    np.greater_equal(magnitude, _SMALL, out=beyond_small)
    np.greater_equal(magnitude, _MIDDLE, out=beyond_middle)
    above_small = np.count_nonzero(beyond_small)
    above_middle = np.count_nonzero(beyond_middle)
    if above_small == 0:
        _small(x, out, complement, work[:, :n])
        return
    if above_middle == n:
        _tail(x, out, complement, work[:, :n])
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
        part_x, part_out = work[:2, :count]
        np.take(x, indices, out=part_x, mode="wrap")
        kernel(part_x, part_out, complement, work[2:, :count])
        out[indices] = part_out


def _evaluate(x: np.ndarray, complement: bool) -> np.ndarray:
    array = np.asarray(x)
    if array.dtype.kind != "f":
        raise TypeError(f"erf and erfc take a floating-point array, not {array.dtype}")
    flat = np.ravel(array).astype(np.float64, copy=False)
    result = np.empty(flat.shape, dtype=np.float64)
    width = min(flat.size, _BLOCK)
    work = np.empty((_ROWS, width))
    flags = np.empty((3, width), dtype=np.bool_)
    with np.errstate(all="ignore"):
        for start in range(0, flat.size, _BLOCK):
            block = slice(start, start + _BLOCK)
            _evaluate_block(flat[block], result[block], complement, work, flags)
    return result.reshape(array.shape).astype(array.dtype, copy=False)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in the dtype of x (computed in float64)."""
    return _evaluate(x, False)


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x), elementwise, with its relative accuracy kept where it is tiny."""
    return _evaluate(x, True)
