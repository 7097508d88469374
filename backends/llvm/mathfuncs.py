"""exp, tanh, erf (and log, sin, cos, pow) for f32 from arithmetic alone.

LLVM's x86 backend has no vector `exp`/`tanh`: an `llvm.exp.v16f32` becomes 16
calls of libm's `expf`, and there is no `erf` intrinsic at all. Softmax, GELU and
tanh activations are common enough in the kernels we compile that f32 gets
polynomial versions written with plain vector instructions (f64 keeps libm):

- exp: x = n ln2 + r with |r| <= ln2/2, a degree-7 polynomial for e^r (the
  classic Cephes coefficients), and 2^n built in the exponent bits, in two
  halves so that results that overflow or underflow (subnormals) come out
  right; NaN passes through. About 1 ulp.
- tanh: an odd Taylor polynomial for |x| < 0.3, where 1 - 2/(e^2x + 1) would
  cancel, and that formula with the exp above elsewhere.
- erf: the Taylor series for |x| < 0.5 and the Chebyshev fit of erfc,
  t exp(-x^2 + P(t)) with t = 1/(1 + |x|/2), elsewhere; |error| < 2e-7.

The CPU path uses those three. The GPU path (`backends/nvptx/mathlib.py`), which
has no libm to call, uses them and these as well:

- log: x = m 2^e with m in [sqrt(1/2), sqrt(2)) from the exponent bits
  (subnormals scaled up first), Cephes' degree-9 polynomial for log(m), and
  e ln2 added in two parts; 0 gives -inf, negatives NaN, inf inf. About 1 ulp.
- sin, cos: Cephes' reduction by multiples of pi/4 (pi/4 in three parts) and
  degree-7/8 polynomials on [-pi/4, pi/4]; absolute error about 1e-7 for
  |x| <= 8192, growing beyond (the reduction keeps too few bits of pi), and
  NaN for |x| >= 2^24.
- pow: exp(y log|x|), with C's special cases (x^0 = 1, 1^y = 1, a negative x
  with an integral y gives the sign of the parity, with another y NaN); the
  relative error grows with |y log x| (about 5e-6 where the result nears
  f32's largest value).
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.dialects import llvmx
from tilecraft.backends.llvm.builder import FunctionBuilder, width_of
from xdsl.dialects import llvm
from xdsl.dialects.builtin import VectorType, i1, i32
from xdsl.ir import Attribute, SSAValue


class FloatMath:
    """Shorthands for writing float formulas of one (scalar or vector) type.

    Only `contract` is allowed: reassociation could undo the exact split of
    x - n ln2 into two steps.
    """

    def __init__(self, b: FunctionBuilder, t: Attribute):
        self.b = b
        self.fastmath = llvm.FastMathAttr([llvm.FastMathFlag.ALLOW_CONTRACT])
        self.t = t

    def c(self, value: float) -> SSAValue:
        return self.b.const(value, self.t)

    def mul(self, p: SSAValue, q: SSAValue) -> SSAValue:
        return self.b.add(llvm.FMulOp(p, q, self.fastmath))

    def add(self, p: SSAValue, q: SSAValue) -> SSAValue:
        return self.b.add(llvm.FAddOp(p, q, self.fastmath))

    def sub(self, p: SSAValue, q: SSAValue) -> SSAValue:
        return self.b.add(llvm.FSubOp(p, q, self.fastmath))

    def div(self, p: SSAValue, q: SSAValue) -> SSAValue:
        return self.b.add(llvm.FDivOp(p, q, self.fastmath))

    def abs(self, x: SSAValue) -> SSAValue:
        return self.b.add(llvm.FAbsOp(x, self.t))

    def horner(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """coefficients[0] + coefficients[1] x + ... (lowest degree first)."""
        acc = self.c(coefficients[-1])
        for coefficient in reversed(coefficients[:-1]):
            acc = self.add(self.mul(acc, x), self.c(coefficient))
        return acc

    def cmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        if isinstance(self.t, VectorType):
            return self.b.add(llvmx.FCmpOp(predicate, lhs, rhs))
        return self.b.add(llvm.FCmpOp(lhs, rhs, predicate))

    def clamp(self, x: SSAValue, low: float, high: float) -> SSAValue:
        """x limited to [low, high] by selects, which let NaN through (maxnum would not)."""
        x = self.b.select(self.cmp("ogt", x, self.c(high)), self.c(high), x)
        return self.b.select(self.cmp("olt", x, self.c(low)), self.c(low), x)

    def times_power_of_two(self, y: SSAValue, n: SSAValue) -> SSAValue:
        """y * 2^n for an integral float n in [-150, 128]: 2^n is built in the
        exponent bits in two halves, each in range, applied one after the other
        (2^128 alone would already overflow)."""
        width = width_of(self.t)
        int_type = i32 if width is None else VectorType(i32, [width])
        b = self.b
        whole = b.add(llvmx.FPToSIOp(n, int_type))
        half = b.add(llvm.AShrOp(whole, b.const(1, int_type)))
        rest = b.isub(whole, half)

        def scale(k: SSAValue) -> SSAValue:
            biased = b.iadd(k, b.const(127, int_type))
            bits = b.add(llvm.ShlOp(biased, b.const(23, int_type)))
            return b.add(llvm.BitcastOp(bits, self.t))

        return self.mul(self.mul(y, scale(half)), scale(rest))


def _exp_reduced(m: FloatMath, r: SSAValue) -> SSAValue:
    """e^r for |r| <= ln2/2."""
    cephes = [5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
              1.3981999507e-3, 1.9875691500e-4]  # fmt: skip
    return m.add(m.add(m.mul(m.horner(r, cephes), m.mul(r, r)), r), m.c(1.0))


def exp_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    xc = m.clamp(x, -104.0, 89.0)  # beyond these, e^x is 0 or inf in f32 anyway
    n = m.b.add(llvm.FFloorOp(m.add(m.mul(xc, m.c(1.4426950408889634)), m.c(0.5))))
    # r = x - n ln2, with ln2 split in two so the product is exact.
    r = m.sub(m.sub(xc, m.mul(n, m.c(0.693359375))), m.mul(n, m.c(-2.12194440e-4)))
    result = m.times_power_of_two(_exp_reduced(m, r), n)
    # NaN lanes took the poison of fptosi(NaN) above; give them their NaN back.
    return m.b.select(m.cmp("uno", x, x), x, result)


def exp2_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    """2^x = 2^n e^(f ln2) with n the nearest integer, f = x - n exact."""
    xc = m.clamp(x, -150.0, 128.0)
    n = m.b.add(llvm.FFloorOp(m.add(xc, m.c(0.5))))
    result = m.times_power_of_two(_exp_reduced(m, m.mul(m.sub(xc, n), m.c(0.6931471805599453))), n)
    return m.b.select(m.cmp("uno", x, x), x, result)


def tanh_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    z = m.abs(x)
    x2 = m.mul(x, x)
    taylor = [1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835]
    small = m.mul(x, m.horner(x2, taylor))
    e = exp_f32(m, m.mul(m.clamp(z, 0.0, 10.0), m.c(2.0)))
    large = m.sub(m.c(1.0), m.div(m.c(2.0), m.add(e, m.c(1.0))))
    large = m.b.add(llvm.FCopySignOp(large, x))
    return m.b.select(m.cmp("olt", z, m.c(0.3)), small, large)


def erf_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    x2 = m.mul(x, x)
    # 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
    series = [1.0, -1 / 3, 1 / 10, -1 / 42, 1 / 216, -1 / 1320]
    small = m.mul(m.mul(x, m.horner(x2, series)), m.c(1.1283791670955126))
    z = m.abs(x)
    t = m.div(m.c(1.0), m.add(m.c(1.0), m.mul(m.c(0.5), z)))
    chebyshev = [
        -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
        0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
    ]  # fmt: skip
    erfc = m.mul(t, exp_f32(m, m.sub(m.horner(t, chebyshev), x2)))
    large = m.b.add(llvm.FCopySignOp(m.sub(m.c(1.0), erfc), x))
    return m.b.select(m.cmp("olt", z, m.c(0.5)), small, large)


def _int_type(m: FloatMath) -> Attribute:
    width = width_of(m.t)
    return i32 if width is None else VectorType(i32, [width])


def _bits_to_float(m: FloatMath, bits: int) -> SSAValue:
    """The float whose bits are `bits` (NaN and infinities as constants)."""
    return m.b.add(llvm.BitcastOp(m.b.const(bits, _int_type(m)), m.t))


def log_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    b, it = m.b, _int_type(m)
    # Subnormals: scale by 2^25 first, so the exponent bits hold the whole exponent.
    tiny = m.cmp("olt", x, m.c(1.1754943508222875e-38))
    scaled = b.select(tiny, m.mul(x, m.c(33554432.0)), x)
    bits = b.add(llvm.BitcastOp(scaled, it))
    exponent = b.isub(b.add(llvm.LShrOp(bits, b.const(23, it))), b.const(126, it))
    exponent = b.select(tiny, b.isub(exponent, b.const(25, it)), exponent)
    mantissa_bits = b.add(llvm.OrOp(b.add(llvm.AndOp(bits, b.const(0x007FFFFF, it))), b.const(0x3F000000, it)))
    mantissa = b.add(llvm.BitcastOp(mantissa_bits, m.t))  # in [0.5, 1)
    e = b.add(llvm.SIToFPOp(exponent, m.t))
    low = m.cmp("olt", mantissa, m.c(0.707106781186547524))
    e = b.select(low, m.sub(e, m.c(1.0)), e)
    f = m.sub(b.select(low, m.add(mantissa, mantissa), mantissa), m.c(1.0))  # in [sqrt(1/2) - 1, sqrt(2) - 1)
    z = m.mul(f, f)
    cephes = [3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1,
              -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2]  # fmt: skip
    y = m.mul(m.mul(f, z), m.horner(f, cephes))
    y = m.add(y, m.mul(e, m.c(-2.12194440e-4)))
    y = m.sub(y, m.mul(z, m.c(0.5)))
    result = m.add(m.add(f, y), m.mul(e, m.c(0.693359375)))
    result = b.select(m.cmp("oeq", x, m.c(0.0)), _bits_to_float(m, 0xFF800000), result)  # -inf
    result = b.select(m.cmp("oeq", x, _bits_to_float(m, 0x7F800000)), x, result)  # inf
    # Negatives and NaN: NaN.
    return b.select(m.cmp("ult", x, m.c(0.0)), _bits_to_float(m, 0x7FC00000), result)


def _sin_cos_f32(m: FloatMath, x: SSAValue, cosine: bool) -> SSAValue:
    b, it = m.b, _int_type(m)
    z = m.abs(x)
    j = b.add(llvmx.FPToSIOp(m.mul(m.clamp(z, 0.0, 16777216.0), m.c(1.2732395447351628)), it))  # |x| / (pi/4)
    j = b.iadd(j, b.add(llvm.AndOp(j, b.const(1, it))))  # to the even octant above
    y = b.add(llvm.SIToFPOp(j, m.t))
    octant = b.add(llvm.AndOp(j, b.const(7, it)))
    r = m.sub(m.sub(m.sub(z, m.mul(y, m.c(0.78515625))), m.mul(y, m.c(2.4187564849853515625e-4))),
              m.mul(y, m.c(3.77489497744594108e-8)))  # fmt: skip
    r2 = m.mul(r, r)
    sin_r = m.add(m.mul(m.mul(m.horner(r2, [-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4]), r2), r), r)
    cos_poly = m.horner(r2, [4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5])
    cos_r = m.add(m.sub(m.mul(m.mul(cos_poly, r2), r2), m.mul(r2, m.c(0.5))), m.c(1.0))
    if cosine:  # cos(z) over octants 0, 2, 4, 6: cos r, -sin r, -cos r, sin r
        use_sin = b.icmp("ne", b.add(llvm.AndOp(octant, b.const(2, it))), b.const(0, it))
        negative = b.icmp("ne", b.add(llvm.AndOp(b.iadd(octant, b.const(2, it)), b.const(4, it))), b.const(0, it))
    else:  # sin(z) over octants 0, 2, 4, 6: sin r, cos r, -sin r, -cos r; sin(-x) = -sin x
        use_sin = b.icmp("eq", b.add(llvm.AndOp(octant, b.const(2, it))), b.const(0, it))
        negative = b.icmp("ne", b.add(llvm.AndOp(octant, b.const(4, it))), b.const(0, it))
        negative = b.add(llvm.XOrOp(negative, m.cmp("olt", x, m.c(0.0))))
    value = b.select(use_sin, sin_r, cos_r)
    value = b.select(negative, b.add(llvm.FNegOp(value, m.fastmath)), value)
    # NaN, inf, and magnitudes beyond 2^24, where the reduction keeps no bit of
    # the result (fptosi above gave poison for NaN and inf): NaN.
    return b.select(m.cmp("ult", z, m.c(16777216.0)), value, _bits_to_float(m, 0x7FC00000))


def sin_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    return _sin_cos_f32(m, x, cosine=False)


def cos_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    return _sin_cos_f32(m, x, cosine=True)


def _is_integral(m: FloatMath, y: SSAValue) -> SSAValue:
    return m.cmp("oeq", m.b.add(llvm.FFloorOp(y)), y)


def pow_f32(m: FloatMath, x: SSAValue, y: SSAValue) -> SSAValue:
    b = m.b
    magnitude = exp_f32(m, m.mul(y, log_f32(m, m.abs(x))))
    half = m.mul(y, m.c(0.5))
    odd = b.add(llvm.AndOp(_is_integral(m, y), b.add(llvm.XOrOp(_is_integral(m, half), _true(m)))))
    signed = b.select(odd, b.add(llvm.FCopySignOp(magnitude, x)), magnitude)
    negative_base = m.cmp("olt", x, m.c(0.0))
    nan = _bits_to_float(m, 0x7FC00000)
    result = b.select(b.add(llvm.AndOp(negative_base, b.add(llvm.XOrOp(_is_integral(m, y), _true(m))))), nan, signed)
    # x^0 = 1 and 1^y = 1, NaN or not (C's pow, numpy's).
    one = b.add(llvm.OrOp(m.cmp("oeq", y, m.c(0.0)), m.cmp("oeq", x, m.c(1.0))))
    return b.select(one, m.c(1.0), result)


def _true(m: FloatMath) -> SSAValue:
    width = width_of(m.t)
    return m.b.const(1, i1 if width is None else VectorType(i1, [width]))
