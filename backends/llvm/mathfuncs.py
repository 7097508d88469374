"""exp, tanh and erf for f32 from arithmetic alone, so they stay vectors.

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
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.dialects import llvmx
from tilecraft.backends.llvm.builder import FunctionBuilder, width_of
from xdsl.dialects import llvm
from xdsl.dialects.builtin import VectorType, i32
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


def exp_f32(m: FloatMath, x: SSAValue) -> SSAValue:
    xc = m.clamp(x, -104.0, 89.0)  # beyond these, e^x is 0 or inf in f32 anyway
    n = m.b.add(llvm.FFloorOp(m.add(m.mul(xc, m.c(1.4426950408889634)), m.c(0.5))))
    # r = x - n ln2, with ln2 split in two so the product is exact.
    r = m.sub(m.sub(xc, m.mul(n, m.c(0.693359375))), m.mul(n, m.c(-2.12194440e-4)))
    cephes = [5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
              1.3981999507e-3, 1.9875691500e-4]  # fmt: skip
    y = m.add(m.add(m.mul(m.horner(r, cephes), m.mul(r, r)), r), m.c(1.0))
    result = m.times_power_of_two(y, n)
    # NaN lanes took the poison of fptosi(NaN) above; give them their NaN back.
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
